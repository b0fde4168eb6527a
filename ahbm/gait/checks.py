"""Plausibility checks of a walking trial's events and cycles, and treadmill walking.

:func:`check_cycles` flags event sets that cannot be normal walking (left and
right strides of very different length in time, an implausible cadence or
stance fraction, a stride that is not the sum of its two steps);
:func:`detect_treadmill` tells treadmill walking from overground walking by
the pelvis's travel, and :func:`belt_speed_from_feet` estimates the belt speed
from the feet in stance, so that :func:`treadmill_heels` can express the heels
in the belt's frame for the stride and step lengths.

:func:`check_plausibility` flags joint-angle curves outside the range of
walking that point to a missing or wrong calibration (the foot's static
offsets, a misplaced thigh wand) and says what would fix it;
:func:`undefined_components` names the curve components that the model fixes
by construction (not data, not plotted).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm.analysis.cycles import spatiotemporal_parameters
from ahbm.errors import DataError
from ahbm.gait.markersets import SIDES

__all__ = [
    "CHECK_LIMITS",
    "PLAUSIBLE_LIMITS",
    "CurveFlag",
    "check_plausibility",
    "undefined_components",
    "foot_keeps_up_axis",
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


#: Limits of :func:`check_plausibility`, deg, on the mean cycle of a side. Set well
#: outside the published normal curves of walking, so that they flag calibration errors
#: (which shift a whole curve) and not the spread of normal gait. Sources, as checked
#: (figures read from the source named; none from memory):
#:
#: - ``ankle_peak_dorsiflexion`` (0 deg: the ankle never reaches neutral): the mean
#:   curve of typically developing children at free speed peaks at 11.8 deg, SD 4.9,
#:   at 46 % of the cycle (Schwartz, Rozumalski & Trost 2008, J Biomech 41:1639,
#:   appendix, speed class "Free", as stored in :mod:`ahbm.gait.normative`), so 0 deg
#:   is 2.4 SD below it; the mean curve of 98 adults spans 0.67 to 14.52 deg
#:   (Klaewkasikum et al. 2022, Front Surg 9:915090, abstract; modified Helen Hayes
#:   markers). Below: a plantarflexion offset (or an equinus gait, which the flag's
#:   text allows for). No adult between-subject SD was verified.
#: - ``ankle_mean_dorsiflexion`` (25 deg): the children's mean curve averages 0.7 deg
#:   over the cycle (Schwartz et al. 2008, as above); 25 deg is twice the adults' mean
#:   peak (14.5 deg): only a dorsiflexion offset or a severe crouch gait reaches it.
#: - ``knee_rotation_mean`` (30 deg): the one normative knee rotation curve verified,
#:   of the same 98 adults, shows external rotation throughout the cycle with a peak
#:   of 30-31 deg in mid-swing (Patathong et al. 2023, BMC Musculoskelet Disord,
#:   doi 10.1186/s12891-023-07081-7, abstract), so a mean beyond 30 deg lies beyond
#:   that mean curve everywhere. The transverse knee angle is the least reliable
#:   angle of marker-based gait analysis (McGinley et al. 2009, Gait Posture 29:360,
#:   abstract: lowest reliability and highest error in the hip and knee transverse
#:   plane); its between-subject SD was not verified, and single normal subjects of
#:   such a lab can exceed the limit: the flag asks to check the thigh wand, with
#:   the crosstalk below as supporting evidence.
#: - ``ankle_rotation_mean`` (30 deg): the adults' mean ankle rotation curve spans
#:   5.22 to 9.74 deg, the motion-analysis software's own normal values -12.10 and
#:   -10.74 deg at mid- and terminal stance (Klaewkasikum et al. 2022, abstract):
#:   normal means lie within about +-15 deg. Beyond 30 deg the foot's rotation
#:   offset (StaticRotOff) is missing or the toe marker is off the foot's long axis.
#: - ``knee_crosstalk_r``, ``knee_crosstalk_slope``: supporting evidence of a turned
#:   knee axis (geometry, not literature): the knee's varus/valgus follows its flexion
#:   (correlation over the cycle at least 0.9, slope at least 0.15 deg/deg, i.e. an
#:   axis turned by about 9 deg or more: a flexion axis turned by t about the thigh
#:   reads a flexion a as a cos(t) and a varus/valgus a sin(t), a slope of tan(t)).
#:
#: Not verified, so not cited: figures of Kadaba, Ramakrishnan & Wootten (1990, J
#: Orthop Res 8:383; only its abstract was found: 40 adults, no values) and of Perry
#: & Burnfield (2010).
PLAUSIBLE_LIMITS = {
    "ankle_peak_dorsiflexion": 0.0,
    "ankle_mean_dorsiflexion": 25.0,
    "knee_rotation_mean": 30.0,
    "ankle_rotation_mean": 30.0,
    "knee_crosstalk_r": 0.9,
    "knee_crosstalk_slope": 0.15,
}


@dataclass(frozen=True)
class CurveFlag:
    """A remark on one component of one gait curve of one side.

    Attributes
    ----------
    side : {"Left", "Right"}
    variable : str
        Cycle variable without the side prefix (``"AnkleAngles"``).
    component : int
        0 sagittal, 1 frontal, 2 transverse.
    text : str
        What is off and what would fix it (an implausible curve), or why the
        component is not defined by the model.
    """

    side: str
    variable: str
    component: int
    text: str

    def __str__(self) -> str:
        return self.text


_CALIBRATION = ("static", "file", "none")


def check_plausibility(cycles: dict, *, calibration: str = "none") -> list:
    """Joint-angle curves outside the range of walking that point to a calibration error.

    Parameters
    ----------
    cycles : dict
        ``{"Left": {"AnkleAngles": (n_cycles, 101, 3), "KneeAngles": ...}, ...}``,
        rad (:attr:`GaitResult.cycles <ahbm.gait.GaitResult>`).
    calibration : {"static", "file", "none"}
        Where the foot's static offsets came from: a static trial, the
        file's stored ``StaticPlantFlex``/``StaticRotOff``, or nowhere; it
        chooses the advice.

    Returns
    -------
    list of CurveFlag
        One per side and curve outside :data:`PLAUSIBLE_LIMITS` (on the mean
        over the side's cycles): the ankle never dorsiflexing (a
        plantarflexion offset), a cycle-mean dorsiflexion beyond 25 deg, a
        knee rotation averaging beyond 30 deg (a misplaced thigh wand; with
        the varus/valgus-flexion crosstalk when present), an ankle rotation
        averaging beyond 30 deg. Each names the curve, the side, the value
        and the fix.

    Examples
    --------
    >>> pct = np.linspace(0.0, 1.0, 101)
    >>> ankle = np.zeros((1, 101, 3))
    >>> ankle[0, :, 0] = np.radians(-11 - 9 * np.cos(2 * np.pi * pct))
    >>> flags = check_plausibility({"Left": {"AnkleAngles": ankle}})
    >>> flags[0].variable, flags[0].text[:54]
    ('AnkleAngles', 'left ankle dorsiflexion never reaches neutral: peak -2')
    """
    if calibration not in _CALIBRATION:
        raise DataError(f"`calibration` must be one of {_CALIBRATION}, got {calibration!r}")
    lim = PLAUSIBLE_LIMITS
    out = []
    for side in ("Left", "Right"):
        cyc = cycles.get(side) or {}
        mean = {}
        for var in ("AnkleAngles", "KneeAngles"):
            a = np.asarray(cyc.get(var, np.empty((0, 0, 3))), dtype=float)
            if a.ndim == 3 and a.shape[0] and np.isfinite(a).any():
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mean[var] = np.degrees(np.nanmean(a, axis=0))
        low = side.lower()
        if "AnkleAngles" in mean:
            dorsi = mean["AnkleAngles"][:, 0]
            peak, avg = float(np.nanmax(dorsi)), float(np.nanmean(dorsi))
            if peak < lim["ankle_peak_dorsiflexion"]:
                out.append(CurveFlag(side, "AnkleAngles", 0, (
                    f"{low} ankle dorsiflexion never reaches neutral: peak {peak:.0f} deg, mean "
                    f"{avg:.0f} deg over the cycle (walking: a mean peak of about 12-15 deg in "
                    f"terminal stance): a plantarflexion offset; {_foot_advice(calibration)}"
                )))  # fmt: skip
            elif avg > lim["ankle_mean_dorsiflexion"]:
                out.append(CurveFlag(side, "AnkleAngles", 0, (
                    f"{low} ankle dorsiflexion mean {avg:.0f} deg over the cycle (walking: "
                    f"about 0 deg): a dorsiflexion offset; {_foot_advice(calibration)}"
                )))  # fmt: skip
            rot = float(np.nanmean(mean["AnkleAngles"][:, 2]))
            if abs(rot) > lim["ankle_rotation_mean"]:
                out.append(CurveFlag(side, "AnkleAngles", 2, (
                    f"{low} ankle rotation mean {rot:.0f} deg over the cycle (walking: within "
                    "about +-15 deg): the foot's rotation offset is missing or the toe marker "
                    f"is off the foot's long axis; {_foot_advice(calibration, 'StaticRotOff')}"
                )))  # fmt: skip
        if "KneeAngles" in mean:
            knee = mean["KneeAngles"]
            rot = float(np.nanmean(knee[:, 2]))
            if abs(rot) > lim["knee_rotation_mean"]:
                text = (
                    f"{low} knee rotation mean {rot:.0f} deg over the cycle (the mean curve "
                    "of healthy adults stays within about 30 deg): the knee's flexion axis "
                    "is turned about the thigh, a misplaced thigh wand (THI)"
                )
                ok = np.isfinite(knee[:, :2]).all(axis=1)
                if ok.sum() > 10 and np.ptp(knee[ok, 0]) > 0 and np.ptp(knee[ok, 1]) > 0:
                    r = float(np.corrcoef(knee[ok, 0], knee[ok, 1])[0, 1])
                    slope = float(np.polyfit(knee[ok, 0], knee[ok, 1], 1)[0])
                    if (
                        abs(r) >= lim["knee_crosstalk_r"]
                        and abs(slope) >= lim["knee_crosstalk_slope"]
                    ):
                        text += (
                            f", as the varus/valgus that follows the flexion shows (slope "
                            f"{slope:.2f} deg/deg, r = {r:.2f}: an axis turned by about "
                            f"{np.degrees(np.arctan(abs(slope))):.0f} deg)"
                        )
                text += (
                    ": place the thigh wand in the plane of the hip centre, knee marker and "
                    "knee axis, or run with a static trial with a knee alignment device or "
                    "medial knee markers (KNM), or give the wand's turn "
                    "(GaitSettings(thigh_rotation=...), CLI --thigh-rotation)"
                )
                out.append(CurveFlag(side, "KneeAngles", 2, text))
    return out


def _foot_advice(calibration: str, offset: str = "StaticPlantFlex") -> str:
    if calibration == "static":
        return (
            "the static trial's foot offsets were applied: check its heel and toe markers "
            "(or the subject walks so)"
        )
    if calibration == "file":
        return f"the file's stored {offset} was applied: check it (or the subject walks so)"
    return (
        f"no static trial was given and the file stores no {offset}: run with the static "
        "trial (static=, CLI --static), or on a file that stores the offsets of Plug-in "
        "Gait's static processing"
    )


def undefined_components(ankle_frontal_fixed: dict) -> list:
    """Curve components that the model fixes by construction (not data).

    Parameters
    ----------
    ankle_frontal_fixed : dict
        ``{side: bool}``: True where the foot frame is built with its up axis
        perpendicular to the shank's flexion axis (the foot's long axis and
        the shank's flexion axis span its sagittal plane: the heel-toe or
        ankle-toe foot of :func:`~ahbm.gait.segment_frames`, unturned or
        turned by an offset that keeps its up axis, i.e. a rotation about it
        alone, :func:`~ahbm.gait.foot_offset_from_angles` with no
        plantarflexion).

    Returns
    -------
    list of CurveFlag
        For such a side: the ankle's frontal angle (Grood-Suntay's
        ab/adduction is the angle between the shank's flexion axis and the
        foot's up axis, 90 deg by construction: zero) and the ankle's frontal
        power (the rate of that angle times the moment: zero; what a
        numerical derivative leaves is round-off and filter error).

    Examples
    --------
    >>> [(f.side, f.variable, f.component) for f in undefined_components({"Left": True})]
    [('Left', 'AnkleAngles', 1), ('Left', 'AnklePower', 1)]
    """
    out = []
    for side in ("Left", "Right"):
        if ankle_frontal_fixed.get(side):
            why = (
                "not defined by this model: the foot frame is built on the shank's flexion "
                "axis, so the ankle has no ab/adduction"
            )
            out.append(CurveFlag(side, "AnkleAngles", 1, why))
            out.append(CurveFlag(side, "AnklePower", 1, why))
    return out


def foot_keeps_up_axis(offset) -> bool:
    """Whether a constant foot offset rotation keeps the foot's up axis (y) exactly.

    The structural test of :func:`undefined_components`: ``offset @ e_y ==
    e_y`` exactly (a rotation about y alone, or none). A plantarflexion
    offset tilts the up axis toward the long axis and gives the ankle a
    frontal angle.

    Examples
    --------
    >>> foot_keeps_up_axis(None), foot_keeps_up_axis(np.eye(3))
    (True, True)
    """
    if offset is None:
        return True
    col = np.asarray(offset, dtype=float)[:, 1]
    return bool(col[1] == 1.0 and col[0] == 0.0 and col[2] == 0.0)
