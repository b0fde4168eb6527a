"""Data analysis: filters, numerical derivatives, gap filling, gait events,
cycles and time normalization, statistics.

Every signal function takes its time axis as ``f(x, *, rate=None,
time=None)`` with exactly one of `rate` (Hz) and `time` (s) given (see
docs/api-rules.md); gait events are :class:`ahbm.types.Event` objects.

Labelled recordings: the filters (:func:`butter_filtfilt`,
:func:`critically_damped_filtfilt`, :func:`moving_average`), gap filling
(:func:`fill_gaps`, :func:`fill_gaps_rigid`), the derivatives
(:func:`central_difference`, :func:`spline_derivative`,
:func:`savgol_derivative`, :func:`marker_derivatives`) and
:func:`time_normalize` also take a
:class:`ahbm.io.Trial` and return a Trial (``time_normalize``: one per cycle):
its points (markers and model outputs) are processed on ``trial.time``, which
includes the first-frame offset that its events carry, and the labels, rates,
first frame, events, units (``m/s`` for a derivative), model-output kinds,
analogs, force plates and subject come along. Give neither `rate` nor `time`
with a Trial. Analog channels, at their own rate, are not processed: pass
``trial.analogs`` with ``rate=trial.analog_rate``.

- Filters (:mod:`ahbm.analysis.filters`): :func:`butter_filtfilt` (zero-lag
  Butterworth with Winter's cutoff correction), :func:`critically_damped_filtfilt`,
  :func:`moving_average`, :func:`residual_analysis`, :func:`gcv_spline`.
- Derivatives (:mod:`ahbm.analysis.derivatives`): :func:`central_difference`
  (non-uniform time), :func:`spline_derivative`, :func:`savgol_derivative`,
  :func:`marker_derivatives`.
- Gaps (:mod:`ahbm.analysis.gaps`): :func:`find_gaps`, :func:`fill_gaps`,
  :func:`fill_gaps_rigid`.
- Events (:mod:`ahbm.analysis.events`): :func:`force_plate_events`,
  :func:`zeni_events`, :func:`detect_gait_events`.
- Cycles (:mod:`ahbm.analysis.cycles`): :func:`time_normalize`,
  :func:`ensemble_stats`, :func:`spatiotemporal_parameters`.
- Segments (:mod:`ahbm.analysis.segments`): :func:`segment_motion` (angular
  velocity and acceleration, COM acceleration from segment poses).
- Energetics (:mod:`ahbm.analysis.energetics`): :func:`segment_energies`,
  :func:`model_segment_energies`, :func:`winter_work`, :func:`internal_work`,
  :func:`external_work`, :func:`work_of_power`, :func:`segment_power_flow`,
  :func:`model_power_flow`.
"""

from ahbm.analysis.cycles import (
    EnsembleStats,
    ensemble_stats,
    spatiotemporal_parameters,
    time_normalize,
)
from ahbm.analysis.derivatives import (
    central_difference,
    marker_derivatives,
    savgol_derivative,
    spline_derivative,
)
from ahbm.analysis.energetics import (
    ExternalWork,
    PowerFlow,
    SegmentEnergies,
    WorkMeasures,
    external_work,
    internal_work,
    model_power_flow,
    model_segment_energies,
    model_segment_kinematics,
    segment_energies,
    segment_power_flow,
    winter_work,
    work_of_power,
)
from ahbm.analysis.events import (
    detect_gait_events,
    force_plate_events,
    zeni_events,
)
from ahbm.analysis.filters import (
    ResidualAnalysis,
    SplineSmoothing,
    butter_filtfilt,
    critically_damped_filtfilt,
    gcv_spline,
    moving_average,
    residual_analysis,
    winter_correction,
)
from ahbm.analysis.gaps import Gap, GapFill, fill_gaps, fill_gaps_rigid, find_gaps
from ahbm.analysis.segments import segment_motion

__all__ = [
    "EnsembleStats",
    "detect_gait_events",
    "ensemble_stats",
    "force_plate_events",
    "spatiotemporal_parameters",
    "time_normalize",
    "zeni_events",
    "Gap",
    "GapFill",
    "ResidualAnalysis",
    "SplineSmoothing",
    "butter_filtfilt",
    "central_difference",
    "critically_damped_filtfilt",
    "fill_gaps",
    "fill_gaps_rigid",
    "find_gaps",
    "gcv_spline",
    "marker_derivatives",
    "moving_average",
    "residual_analysis",
    "savgol_derivative",
    "segment_motion",
    "spline_derivative",
    "winter_correction",
    "ExternalWork",
    "PowerFlow",
    "SegmentEnergies",
    "WorkMeasures",
    "external_work",
    "internal_work",
    "model_power_flow",
    "model_segment_energies",
    "model_segment_kinematics",
    "segment_energies",
    "segment_power_flow",
    "winter_work",
    "work_of_power",
]


def __getattr__(name: str):
    if name == "GaitEvent":  # deprecated alias of ahbm.types.Event (warns once)
        from ahbm.analysis import events

        return events.GaitEvent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
