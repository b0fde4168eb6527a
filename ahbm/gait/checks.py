"""Plausibility checks of a walking trial's events and cycles, and treadmill walking.

:func:`check_cycles` flags event sets that cannot be normal walking (left and
right strides of very different length in time, an implausible cadence or
stance fraction, a stride that is not the sum of its two steps);
:func:`detect_treadmill` tells treadmill walking from overground walking by
the pelvis's travel, and :func:`belt_speed_from_feet` estimates the belt speed
from the feet in stance, so that :func:`treadmill_heels` can express the heels
in the belt's frame for the stride and step lengths.
"""

from __future__ import annotations

import numpy as np

from ahbm.analysis.cycles import spatiotemporal_parameters
from ahbm.gait.markersets import SIDES

__all__ = [
    "CHECK_LIMITS",
    "gait_spatiotemporal",
    "belt_speed_from_feet",
    "check_cycles",
    "check_kinetics",
    "detect_treadmill",
    "treadmill_heels",
]

#: Limits of :func:`check_cycles`.
CHECK_LIMITS = {
    "stride_time_asymmetry": 0.15,  # |T_left - T_right| / mean
    "cadence": (40.0, 150.0),  # steps/min
    "stance_pct": (50.0, 75.0),  # % of the stride
    "stride_vs_steps": 0.20,  # |stride - (step_L + step_R)| / stride
    "ankle_moment_peak": (0.4, 3.0),  # N·m/kg, peak plantarflexor moment in stance
}


def check_cycles(spatiotemporal: dict) -> list:
    """Plausibility flags of a walking trial's spatiotemporal parameters (empty when fine).

    Parameters
    ----------
    spatiotemporal : dict
        Output of :func:`ahbm.analysis.spatiotemporal_parameters`.

    Returns
    -------
    list of str
        One sentence per failed check (:data:`CHECK_LIMITS`): stride time
        asymmetry beyond 10 %, cadence outside 40-150 steps/min, stance
        outside 50-75 % of the stride, a stride length that differs from the
        sum of the two step lengths by more than 20 %. NaN values are not
        flagged (not measured).

    Examples
    --------
    >>> sp = {"Left": {"stride_time": 0.71}, "Right": {"stride_time": 1.04}, "cadence": 136.0}
    >>> check_cycles(sp)[0][:58]
    'stride times differ between the sides: left 0.710 s, right'
    """
    flags = []
    L, R = spatiotemporal.get("Left", {}), spatiotemporal.get("Right", {})
    tl, tr = L.get("stride_time", np.nan), R.get("stride_time", np.nan)
    if np.isfinite(tl) and np.isfinite(tr):
        asym = abs(tl - tr) / (0.5 * (tl + tr))
        if asym > CHECK_LIMITS["stride_time_asymmetry"]:
            flags.append(
                f"stride times differ between the sides: left {tl:.3f} s, right {tr:.3f} s "
                f"({100 * asym:.0f} % asymmetry): check the events"
            )
    cad = spatiotemporal.get("cadence", np.nan)
    lo, hi = CHECK_LIMITS["cadence"]
    if np.isfinite(cad) and not lo <= cad <= hi:
        flags.append(f"cadence {cad:.0f} steps/min is outside {lo:.0f}-{hi:.0f} for walking")
    lo, hi = CHECK_LIMITS["stance_pct"]
    for side, d in (("left", L), ("right", R)):
        st = d.get("stance_pct", np.nan)
        if np.isfinite(st) and not lo <= st <= hi:
            flags.append(f"{side} stance {st:.0f} % of the stride is outside {lo:.0f}-{hi:.0f} %")
    steps = L.get("step_length", np.nan) + R.get("step_length", np.nan)
    for side, d in (("left", L), ("right", R)):
        stride = d.get("stride_length", np.nan)
        if np.isfinite(stride) and np.isfinite(steps) and stride > 0:
            if abs(stride - steps) > CHECK_LIMITS["stride_vs_steps"] * stride:
                flags.append(
                    f"{side} stride length {stride:.3f} m is not the sum of the step lengths "
                    f"({steps:.3f} m)"
                )
    return flags


def check_kinetics(moments: dict, *, forces=None) -> list:
    """Plausibility flags of the joint moments (empty when fine).

    Parameters
    ----------
    moments : dict
        ``"LAnkleMoment"`` ... -> (n_frames, 3), N·m/kg (Plug-in Gait signs).
    forces : dict, optional
        ``"LGroundReactionForce"`` ... -> (n_frames, 3): a side whose foot
        never carries a known plate load (no stance kinetics, e.g. a foot
        partly off the plates) is not checked.

    Returns
    -------
    list of str
        A side whose peak plantarflexor moment (where known) is below 0.4 or
        above 3.0 N·m/kg: walking needs about 1-2 N·m/kg, so the mass (its
        units), the plate assignment or the events are wrong.

    Examples
    --------
    >>> check_kinetics({"LAnkleMoment": np.array([[12.0, 0, 0]])})[0][:49]
    'left peak ankle plantarflexor moment 12.00 N·m/kg'
    """
    flags = []
    lo, hi = CHECK_LIMITS["ankle_moment_peak"]
    for side, p in (("left", "L"), ("right", "R")):
        m = moments.get(p + "AnkleMoment")
        if m is None or not np.isfinite(m[:, 0]).any():
            continue
        grf = None if forces is None else forces.get(p + "GroundReactionForce")
        if grf is not None and not (np.nan_to_num(np.abs(grf)).sum(axis=1) > 0).any():
            continue
        peak = float(np.nanmax(m[:, 0]))
        if not lo <= peak <= hi:
            flags.append(
                f"{side} peak ankle plantarflexor moment {peak:.2f} N·m/kg is outside "
                f"{lo:g}-{hi:g} for walking: check the mass, the plates and the events"
            )
    return flags


def detect_treadmill(pelvis_origin, time, toes) -> tuple:
    """Whether the subject walks on a treadmill: the feet step but the pelvis stays.

    Parameters
    ----------
    pelvis_origin : ndarray, shape (n_frames, 3)
        Mid-ASIS, m, Z up.
    time : ndarray, shape (n_frames,)
    toes : sequence of ndarray, shape (n_frames, 3)
        The toe markers.

    Returns
    -------
    treadmill : bool
        True when the pelvis travels less than 0.5 m horizontally (and less
        than 0.2 m/s on average) while the toes move back and forth by more
        than 0.3 m.
    travel : float
        Horizontal pelvis travel over the trial, m.

    Examples
    --------
    >>> t = np.linspace(0, 4, 401); still = np.zeros((401, 3))
    >>> toe = np.stack([0.4 * np.sin(2 * np.pi * t), 0 * t, 0 * t], 1)
    >>> detect_treadmill(still, t, [toe])
    (True, 0.0)
    """
    p = np.asarray(pelvis_origin, dtype=float)
    ok = np.flatnonzero(np.isfinite(p).all(axis=1))
    if ok.size < 2:
        return False, float("nan")
    d = p[ok[-1], :2] - p[ok[0], :2]
    travel = float(np.hypot(*d))
    duration = float(time[ok[-1]] - time[ok[0]])
    swing = 0.0
    for toe in toes:
        xy = np.asarray(toe, dtype=float)[:, :2]
        xy = xy[np.isfinite(xy).all(axis=1)]
        if xy.shape[0]:
            swing = max(swing, float(np.max(xy.max(axis=0) - xy.min(axis=0))))
    slow = duration > 0 and travel / duration < 0.2
    return bool(travel < 0.5 and slow and swing > 0.3), travel


def belt_speed_from_feet(heels: dict, events, time, forward) -> float | None:
    """Treadmill belt speed from the feet in stance (they move back with the belt).

    Parameters
    ----------
    heels : dict
        ``{"Left": (n_frames, 3), "Right": ...}`` heel (or ankle) trajectories, m.
    events : list of Event
    time : ndarray, shape (n_frames,)
    forward : ndarray, shape (3,)
        Walking direction.

    Returns
    -------
    float or None
        m/s: minus the median velocity along `forward` over the middle half
        of every stance (strike to the next foot off of that side); None when
        fewer than 10 such samples exist or the speed is below 0.1 m/s.

    Examples
    --------
    >>> from ahbm.types import Event
    >>> t = np.linspace(0, 2, 201); heel = np.stack([-1.1 * t, 0 * t, 0 * t], 1)
    >>> ev = [Event("Foot Strike", 0.2, "Left"), Event("Foot Off", 0.9, "Left")]
    >>> round(belt_speed_from_feet({"Left": heel, "Right": heel}, ev, t, [1.0, 0, 0]), 6)
    1.1
    """
    v_all = []
    fwd = np.asarray(forward, dtype=float)
    for side, _ in SIDES:
        x = np.asarray(heels[side], dtype=float) @ fwd
        v = np.gradient(x, time)
        strikes = sorted(e.time for e in events if e.context == side and e.label == "Foot Strike")
        offs = np.array(
            sorted(e.time for e in events if e.context == side and e.label == "Foot Off")
        )
        for s in strikes:
            later = offs[offs > s]
            if not later.size:
                continue
            a, b = s + 0.25 * (later[0] - s), s + 0.75 * (later[0] - s)
            sel = (time >= a) & (time <= b) & np.isfinite(v)
            v_all.extend(v[sel])
    if len(v_all) < 10:
        return None
    speed = -float(np.median(v_all))
    return speed if speed > 0.1 else None


def treadmill_heels(heels: dict, time, forward, belt_speed: float) -> dict:
    """Heel trajectories in the belt's frame: ``heel + belt_speed * (t - t0) * forward``.

    Examples
    --------
    >>> h = treadmill_heels({"Left": np.zeros((3, 3))}, np.array([0.0, 0.5, 1.0]), [1.0, 0, 0], 1.2)
    >>> h["Left"][:, 0].tolist()
    [0.0, 0.6, 1.2]
    """
    fwd = np.asarray(forward, dtype=float)
    shift = float(belt_speed) * (np.asarray(time) - time[0])[:, None] * fwd
    return {side: np.asarray(h, dtype=float) + shift for side, h in heels.items()}


def gait_spatiotemporal(events, heels: dict, time, forward, *, pelvis, toes, belt_speed=None):
    """Spatiotemporal parameters of a walk, overground or on a treadmill.

    Parameters
    ----------
    events : list of Event
    heels : dict
        ``{"Left": (n_frames, 3), "Right": ...}`` heel (or ankle centre)
        trajectories, m, Z up.
    time : ndarray, shape (n_frames,)
    forward : ndarray, shape (3,)
        Walking direction.
    pelvis : ndarray, shape (n_frames, 3)
        Mid-ASIS, for :func:`detect_treadmill`.
    toes : sequence of ndarray, shape (n_frames, 3)
    belt_speed : float, optional
        m/s; default: estimated from the feet in stance on a treadmill.

    Returns
    -------
    spatiotemporal : dict
        :func:`ahbm.analysis.spatiotemporal_parameters` of the heels (in the
        belt's frame on a treadmill; lengths and speed NaN when no belt speed
        is known).
    lengths : str
        How the lengths were measured.
    flags : list of str
        The treadmill without belt speed, when it happens.

    Examples
    --------
    >>> from ahbm.types import Event
    >>> t = np.linspace(0, 3, 301); z = np.zeros((301, 3))
    >>> ev = [Event("Foot Strike", x, "Left") for x in (0.5, 1.6)]
    >>> sp, how, flags = gait_spatiotemporal(ev, {"Left": z, "Right": z}, t, [1.0, 0, 0],
    ...                                      pelvis=z, toes=[z])
    >>> sp["Left"]["stride_time"], how, flags
    (1.1, 'heel positions at the events, lab frame', [])
    """
    flags = []
    treadmill, travel = detect_treadmill(pelvis, time, toes)
    lengths = "heel positions at the events, lab frame"
    if treadmill:
        speed, how = belt_speed, "given"
        if speed is None:
            speed = belt_speed_from_feet(heels, events, time, forward)
            how = "estimated from the feet in stance"
        if speed is not None:
            heels = treadmill_heels(heels, time, forward, speed)
            lengths = f"treadmill: heels in the belt's frame, belt speed {speed:.3f} m/s ({how})"
        else:
            lengths = "treadmill: no belt speed (not given, none measurable from the feet)"
            flags.append(
                f"treadmill walking (the pelvis travels {travel:.2f} m): stride and step "
                "lengths and walking speed are omitted (NaN): pass belt_speed= (CLI "
                "--belt-speed) or events with stance phases to estimate it"
            )
    spt = spatiotemporal_parameters(
        events, heel_left=heels["Left"], heel_right=heels["Right"], time=time, direction=forward
    )
    if flags:
        for d in (spt.get("Left", {}), spt.get("Right", {}), spt):
            for key in ("stride_length", "step_length", "walking_speed"):
                if key in d:
                    d[key] = float("nan")
    return spt, lengths, flags
