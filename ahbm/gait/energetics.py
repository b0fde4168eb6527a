"""Stage 7 of the gait pipeline: segment energies, power flow among segments and work per cycle.

The energies and the power balance of each segment of the seven-segment
model (Winter 2009, ch. 6; :mod:`ahbm.analysis.energetics`), in J and W (not
divided by body mass, so Winter's work values compare directly). The pelvis
carries no mass in this model (the trunk is not modelled): its energies are
zero and its proximal power is that of the residual load of the trunk on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm.analysis.derivatives import central_difference
from ahbm.analysis.energetics import (
    PowerFlow,
    SegmentEnergies,
    segment_energies,
    segment_power_flow,
    winter_work,
    work_of_power,
)
from ahbm.gait.cycles import foot_strikes
from ahbm.gait.frames import SEGMENTS
from ahbm.gait.kinetics import PARENT, segment_loads, unknown_load_frames
from ahbm.gait.markersets import SIDES, G
from ahbm.gait.settings import GaitSettings
from ahbm.types import ResultRepr

__all__ = ["GaitEnergetics", "gait_energetics"]

_FLOWS = ("proximal_force", "proximal_moment", "distal_force", "distal_moment", "external")


@dataclass(frozen=True, repr=False)
class GaitEnergetics(ResultRepr):
    """Output of :func:`gait_energetics` (J and W, lab frame, Z up).

    Attributes
    ----------
    segments : tuple of str
        :data:`~ahbm.gait.frames.SEGMENTS` (the last axis of the arrays).
    energies : SegmentEnergies
        Translational, rotational and potential energy, (n_frames, 7), J;
        potential energy zero at the lab floor (z = 0).
    power_flow : PowerFlow or None
        Joint force and moment powers at the proximal and distal joints and the
        ground-reaction power of each segment, (n_frames, 7), W; NaN where a
        leg's joint loads are unknown; None without kinetics.
    cycles : dict
        ``{"Left": {"work_no_transfer": (n_cycles,), "work_within": ...,
        "work_within_between": ..., "ground_work_positive": ...,
        "ground_work_negative": ...}, "Right": {...}}``, J, from foot strike to
        foot strike of that side (ground work only with kinetics).
    """

    segments: tuple
    energies: SegmentEnergies
    power_flow: PowerFlow | None
    cycles: dict

    def to_results(self) -> dict:
        """The ``results["energetics"]`` layout of :meth:`GaitResult.to_results`.

        ``{"segments": {name: {"translational_energy", "rotational_energy",
        "potential_energy", "energy", "proximal_force_power",
        "proximal_moment_power", "distal_force_power", "distal_moment_power",
        "external_power", "net_power"}}, "total_energy", "cycles"}``: energies
        in J, powers in W, per frame; work per cycle in J.
        """
        e = self.energies
        seg = {}
        for k, name in enumerate(self.segments):
            d = {
                "translational_energy": e.translational[:, k],
                "rotational_energy": e.rotational[:, k],
                "potential_energy": e.potential[:, k],
                "energy": e.segment_total[:, k],
            }
            if self.power_flow is not None:
                for f in _FLOWS:
                    d[f + "_power"] = getattr(self.power_flow, f)[:, k]
                d["net_power"] = self.power_flow.total[:, k]
            seg[name] = {key: np.asarray(v, dtype=float) for key, v in d.items()}
        return {
            "segments": seg,
            "total_energy": np.asarray(e.total, dtype=float),
            "cycles": {
                side: {k: np.asarray(v, dtype=float) for k, v in c.items()}
                for side, c in self.cycles.items()
            },
        }


def gait_energetics(
    markers, frames, subject, events, assignment=None, *, settings=None
) -> GaitEnergetics:
    """Segment energies, joint power flow and Winter's work per gait cycle.

    Parameters
    ----------
    markers : GaitMarkers
        Time, rate and the toe markers (foot COM).
    frames : SegmentFrames
        Segment rotations and joint centres.
    subject : SubjectParameters
        Body mass and stature (de Leva segment parameters).
    events : list of Event
        Gait events: cycles from foot strike to foot strike; a leg's power flow
        is NaN where its joint loads are unknown (as its joint kinetics).
    assignment : PlateAssignment, optional
        Output of :func:`~ahbm.gait.assign_plates`; without it only the
        energies and the work measures are computed.
    settings : GaitSettings, optional
        ``sex`` (de Leva column), ``grf_cutoff``.

    Returns
    -------
    GaitEnergetics

    Notes
    -----
    COM velocities by central differences of the COM positions, angular
    velocities from the segment rotations (:func:`ahbm.analysis.segment_motion`);
    ``E_i = ½ m |v|² + ½ ωᵀ I ω + m G z``; power flow by
    :func:`ahbm.analysis.segment_power_flow` with the Newton-Euler joint loads
    of :func:`~ahbm.gait.joint_kinetics`, so that ``dE_i/dt`` equals
    the segment's net power. Work per cycle: :func:`ahbm.analysis.winter_work`
    (``W_n``, ``W_w``, ``W_wb`` over the modelled segments) and the positive
    and negative work of the ground reactions on the feet.

    Examples
    --------
    >>> from ahbm.gait import synthetic_walking_trial
    >>> from ahbm.gait import analyze_gait
    >>> trial, _ = synthetic_walking_trial()
    >>> r = analyze_gait(trial)
    >>> sorted(r.energetics["cycles"]["Left"])[:2]
    ['ground_work_negative', 'ground_work_positive']
    """
    settings = GaitSettings() if settings is None else settings
    time = markers.time
    masses, inertia, motion, f_ext, loads = segment_loads(
        markers, frames, subject, assignment, settings
    )
    v = central_difference(motion.com, time=time)
    energies = segment_energies(
        masses, inertia, motion.rotation, motion.com, v, motion.omega, gravity=(0.0, 0.0, -G)
    )
    flow = None
    if loads is not None:
        flow = segment_power_flow(PARENT, loads, motion.com, v, motion.omega, f_ext=f_ext)
        unknown = unknown_load_frames(
            events, assignment, time, markers.rate, weight=subject.mass * G
        )
        bad_any = np.zeros(time.size, bool)
        for side, _ in SIDES:
            ids = [SEGMENTS.index(f"{s}_{side}") for s in ("thigh", "shank", "foot")]
            bad_any |= unknown[side]
            for f in _FLOWS:
                getattr(flow, f)[np.ix_(unknown[side], ids)] = np.nan
        for f in _FLOWS:  # the pelvis's distal powers come from both legs
            getattr(flow, f)[bad_any, 0] = np.nan
    cycles = {}
    for side, _ in SIDES:
        fs = foot_strikes(events, side)
        fs = fs[(fs >= time[0]) & (fs <= time[-1])]
        idx = np.searchsorted(time, fs)
        out = {k: [] for k in ("work_no_transfer", "work_within", "work_within_between")}
        if flow is not None:
            out.update(ground_work_positive=[], ground_work_negative=[])
        for a, b in zip(idx[:-1], idx[1:], strict=True):
            w = winter_work(energies, start=a, stop=b + 1)
            out["work_no_transfer"].append(w.no_transfer)
            out["work_within"].append(w.within)
            out["work_within_between"].append(w.within_between)
            if flow is not None:
                pos, neg = work_of_power(flow.external.sum(-1), time=time, start=a, stop=b + 1)
                out["ground_work_positive"].append(pos)
                out["ground_work_negative"].append(neg)
        cycles[side] = (
            {k: np.array(v_, dtype=float) for k, v_ in out.items()} if idx.size > 1 else {}
        )
    return GaitEnergetics(SEGMENTS, energies, flow, cycles)
