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
- Curve statistics (:mod:`ahbm.analysis.spm`, the ``stats`` extra): SPM
  t tests (:func:`spm_ttest`, :func:`spm_ttest_paired`, :func:`spm_ttest2`),
  :func:`spm_anova1`, :func:`spm_regress`, Hotelling's T²
  (:func:`spm_hotellings2`, :func:`spm_hotellings_paired`), with random field
  theory or permutation inference; :func:`ahbm.graphics.plot_spm` draws them.
- Curve reduction (:mod:`ahbm.analysis.pca`): :func:`curve_pca` (principal
  components of curves, scores and reconstruction); classifiers on the scores
  (:mod:`ahbm.analysis.classify`, the ``learn`` extra):
  :func:`fit_curve_classifier`, :func:`cross_validate_curve_classifier`.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "filters",
        "derivatives",
        "gaps",
        "events",
        "cycles",
        "segments",
        "energetics",
        "spm",
        "pca",
        "classify",
    ],
)
