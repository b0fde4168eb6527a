"""Checks of a gait result against the Plug-in Gait outputs stored in the same file.

Vicon writes its model's outputs into the C3D it processed: joint angles,
moments and powers (``LKneeAngles``, ``LHipMoment``, ``LAnklePower``, ...,
read by :func:`ahbm.io.read_c3d` into SI units with ``trial.point_kinds``)
and the joint centres as virtual points (``LFEP``/``LFEO``/``LTIO``: hip,
knee and ankle centres). When a trial carries them, :func:`analyze_gait
<ahbm.gait.analyze_gait>` compares its own result with them curve by
curve and flags what disagrees: a lab sees at once whether ahbm and the
vendor's model agree on this file, instead of finding out later.
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.result import GaitResult
from ahbm.io.trial import Trial

__all__ = ["compare_with_file_outputs", "centre_distance", "FILE_JOINT_CENTRES"]

#: Plug-in Gait's virtual points of the joint centres -> ahbm's joint-centre names.
FILE_JOINT_CENTRES = {
    "LFEP": "LHJC", "RFEP": "RHJC", "LFEO": "LKJC", "RFEO": "RKJC",
    "LTIO": "LAJC", "RTIO": "RAJC",
}  # fmt: skip
#: Sagittal correlation below which an angle or moment curve is flagged.
MIN_SAGITTAL_R = 0.9
#: Transverse-moment correlation below which the sign is reported as opposite.
OPPOSITE_SIGN_R = -0.3
#: Median joint-centre distance (m) beyond which a centre is flagged.
MAX_CENTRE_DISTANCE = 0.01
_MIN_FRAMES = 20
#: N/kg (about 10 % of body weight): a foot's ground reaction that differs from the
#: file's by more than this in magnitude is another load, not a rounding.
LOAD_TOLERANCE = 1.0
#: Fraction of a foot's loaded frames whose load may differ before it is flagged.
_MAX_LOAD_DIFFERING = 0.05
#: N·m/kg: a moment component whose compared curves (both, low-passed) span less than
#: this has no shape to correlate (a swing-only ankle moment): r is NaN, ``"flat"`` set.
FLAT_MOMENT = 0.05
#: Plug-in Gait's bone (virtual points ``?O``, ``?L``: origin, lateral axis) of the
#: distal segment of each joint.
DISTAL_BONE = {"Hip": "FE", "Knee": "TI", "Ankle": "FO"}


def _bare(label: str) -> str:
    """``"Name:LKneeAngles"`` -> ``"LKneeAngles"``."""
    return str(label).strip().rsplit(":", 1)[-1]


def _r(a, b, floor: float = 0.0):
    """Pearson r; NaN for a flat curve (no shape to compare: a value near 0 throughout,
    or both spanning less than `floor`)."""
    if a.size >= _MIN_FRAMES and max(np.ptp(a), np.ptp(b)) < floor:
        return float("nan")
    flat = 1e-9 + 1e-6 * max(np.abs(a).max(), np.abs(b).max())
    if a.size < _MIN_FRAMES or np.ptp(a) < flat or np.ptp(b) < flat:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _compare_loads(mine, theirs):
    """Compare ahbm's ground reaction on one foot with the file's (Plug-in Gait's).

    Magnitudes are compared (the file's axes may not be the lab's). Vicon
    writes this output normalised by body mass whatever ``FORCE_UNITS`` says,
    so the file's scale is taken from the frames where both carry a clear load
    (the median ratio of magnitudes: 1 for N/kg, the body mass for N).

    Returns ``(check, differs)``: ``check`` is ``{"r": (3,), "rms": (3,),
    "frames": n, "frames_loaded": n, "frames_differing": n, "scale": s}``
    (None when too few frames carry a load in both) and ``differs`` the
    frames where the magnitudes differ by more than :data:`LOAD_TOLERANCE`.
    """
    ok = np.isfinite(mine).all(axis=1) & np.isfinite(theirs).all(axis=1)
    a = np.linalg.norm(np.where(ok[:, None], mine, 0.0), axis=1)
    b = np.linalg.norm(np.where(ok[:, None], theirs, 0.0), axis=1)
    both = ok & (a > 3.0 * LOAD_TOLERANCE) & (b > 0.0)
    if both.sum() < _MIN_FRAMES:
        return None, None
    scale = float(np.median(b[both] / a[both]))
    if not (np.isfinite(scale) and scale > 0.0):
        return None, None
    differs = ok & (np.abs(a - b / scale) > LOAD_TOLERANCE)
    loaded = ok & ((a > LOAD_TOLERANCE) | (b / scale > LOAD_TOLERANCE))
    r = np.full(3, np.nan)
    rms = np.full(3, np.nan)
    for c in range(3):
        r[c] = _r(mine[ok, c], theirs[ok, c] / scale)
        rms[c] = float(np.sqrt(np.mean((mine[ok, c] - theirs[ok, c] / scale) ** 2)))
    check = {
        "r": r,
        "rms": rms,
        "frames": int(ok.sum()),
        "frames_loaded": int(loaded.sum()),
        "frames_differing": int(differs.sum()),
        "scale": scale,
    }
    return check, differs


def _moment_diagnosis(check, name, result, mine, theirs, ok, lab, file_point, rate, cutoff):
    """Fill a moment check's diagnosis; return the text a flag adds to its message.

    ``r_loaded``/``r_unloaded``: the sagittal r over the compared frames where
    ahbm's foot of that side carries a plate load, and over the others (NaN
    when too few). ``r_file_axes``/``axis_angle_deg``: ahbm's lab-frame moment
    projected on the file's distal segment axes (``lab = (moment, axis)``).
    """
    grf = result.forces.get(f"{name[:1]}GroundReactionForce")
    loaded = np.zeros(ok.shape, bool)
    if grf is not None and np.shape(grf) == (ok.size, 3):
        loaded = np.nan_to_num(np.linalg.norm(grf, axis=1)) > 0.0
    for key, part in (("r_loaded", ok & loaded), ("r_unloaded", ok & ~loaded)):
        check[key] = _r(mine[part], theirs[part], FLAT_MOMENT) if part.any() else float("nan")
    parts = []
    rl, ru = check["r_loaded"], check["r_unloaded"]
    if np.isfinite(rl) and np.isfinite(ru):
        parts.append(f"r = {rl:.2f} with the foot loaded, {ru:.2f} without")
    joint = next((j for j in DISTAL_BONE if name[1:].startswith(j)), None)
    if lab is not None and joint is not None:
        origin = file_point(f"{name[:1]}{DISTAL_BONE[joint]}O")
        lateral = file_point(f"{name[:1]}{DISTAL_BONE[joint]}L")
        if origin is not None and lateral is not None:
            moment, axis = (np.asarray(a, dtype=float) for a in lab)
            a = lateral - origin
            with np.errstate(invalid="ignore", divide="ignore"):
                a /= np.linalg.norm(a, axis=1, keepdims=True)
            a[~np.any(origin != 0.0, axis=1)] = np.nan  # Vicon's zeros: no bone
            cos = np.sum(a * axis, axis=1)
            a *= np.sign(np.nanmedian(cos)) if np.isfinite(cos).any() else np.nan
            proj = np.sum(moment * a, axis=1)[:, None]
            sm = _smoothed(proj, ok, rate, cutoff)[:, 0]
            use = ok & np.isfinite(sm)
            if use.sum() >= _MIN_FRAMES:
                check["r_file_axes"] = _r(sm[use], theirs[use], FLAT_MOMENT)
                check["axis_angle_deg"] = float(
                    np.degrees(np.nanmedian(np.arccos(np.clip(np.abs(cos[use]), 0.0, 1.0))))
                )
                parts.append(
                    f"on the file's own {DISTAL_BONE[joint]} axes ({check['axis_angle_deg']:.0f}"
                    f" deg from ahbm's flexion axis) r = {check['r_file_axes']:.2f}"
                )
                if check["r_file_axes"] >= MIN_SAGITTAL_R and check["axis_angle_deg"] > 5.0:
                    parts.append(
                        "the segment is turned differently about its long axis (the static "
                        "calibration: ThighRotation, ShankRotation, TibialTorsion or the foot "
                        "offsets Vicon used are not in the file or differ; a lab that knows "
                        "them gives them as GaitSettings(thigh_rotation=..., shank_rotation=..., "
                        "tibial_torsion=...))"
                    )
    return "; " + "; ".join(parts) if parts else ""


def _smoothed(curve, ok, rate: float, cutoff):
    """A curve low-passed like ahbm's markers (`cutoff` Hz; None: unchanged).

    Only the frames in `ok` are filtered, each run of them on its own (a run
    too short for the filter becomes NaN); the rest is NaN.
    """
    try:
        fc = float(cutoff)
    except (TypeError, ValueError):
        return curve
    if not (np.isfinite(fc) and 0.0 < fc < rate / 2.0):
        return curve
    from ahbm.analysis.filters import butter_filtfilt

    x = np.where(ok[:, None], curve, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)  # the counts of short runs
        return butter_filtfilt(x, rate=rate, cutoff=fc, nan_policy="segments")


def _time_ranges(time, mask) -> str:
    """'1.20-1.35, 2.90 s' for the times where `mask` is True (at most 4 runs shown)."""
    from ahbm.gait.kinetics import _runs

    runs = _runs(np.flatnonzero(mask))
    text = ", ".join(
        f"{time[a]:.2f}" if a == b else f"{time[a]:.2f}-{time[b]:.2f}" for a, b in runs[:4]
    )
    return text + (f" and {len(runs) - 4} more" if len(runs) > 4 else "") + " s"


def _check_trial(trial) -> None:
    """The trial must be a Trial read in SI units (points in m, model outputs in SI)."""
    if not isinstance(trial, Trial):
        raise DataError(f"`trial` must be a Trial (ahbm.io.read_c3d), got {type(trial).__name__}")
    if str(trial.point_units).lower() != "m":
        raise DataError(
            f"`trial` holds points in {trial.point_units!r}; the comparison needs the file "
            "read in SI units (ahbm.io.read_c3d(path) without units=None), or its joint "
            "centres and outputs would be compared in another unit"
        )


def centre_distance(trial, time, centre, label: str) -> tuple[float, int]:
    """Median distance (m) of a joint centre from a point of the trial, and the frames used.

    Parameters
    ----------
    trial : Trial
    time : array_like, shape (n_frames,)
        Times of `centre`'s frames, s (matched to the trial's by its rate).
    centre : array_like, shape (n_frames, 3)
        m, in the trial's lab frame.
    label : str
        The trial's point (a subject prefix ``Name:`` is ignored); frames
        where it is missing or exactly (0, 0, 0) are left out.

    Returns
    -------
    (float, int)
        NaN and 0 when the trial has no such point or no common frame.
    """
    _check_trial(trial)
    labels = [_bare(lab) for lab in trial.point_labels]
    if label not in labels:
        return float("nan"), 0
    t_file = np.asarray(trial.time, dtype=float)
    t = np.asarray(time, dtype=float)
    if t_file.size == 0 or t.size == 0:
        return float("nan"), 0
    idx = np.rint((t - t_file[0]) * float(trial.point_rate)).astype(int)
    inside = (idx >= 0) & (idx < t_file.size)
    theirs = np.full((t.size, 3), np.nan)
    theirs[inside] = np.asarray(trial.points, dtype=float)[idx[inside], labels.index(label)]
    d = np.linalg.norm(np.asarray(centre, dtype=float) - theirs, axis=1)
    d = d[np.isfinite(d) & np.any(theirs != 0.0, axis=1)]
    return (float(np.median(d)), int(d.size)) if d.size else (float("nan"), 0)


def compare_with_file_outputs(result: GaitResult, trial, *, lab_moments=None) -> tuple[dict, list]:
    """Compare a gait result with the Plug-in Gait outputs stored in its trial.

    Parameters
    ----------
    result : GaitResult
        The result of :func:`~ahbm.gait.analyze_gait` on `trial`.
    trial : Trial
        The trial as read (:func:`ahbm.io.read_c3d`), with its model outputs
        (``trial.point_kinds``) and virtual points in SI units.
    lab_moments : dict, optional
        ``{"LKneeMoment": (moment, axis)}``: ahbm's internal joint moment
        (N·m/kg, (n_frames, 3)) and its distal segment's signed flexion axis
        (:attr:`GaitKinetics.sagittal_axes <ahbm.gait.GaitKinetics>`), both
        in the trial's lab frame. With them, a moment whose file carries its
        distal bone (``LTIO``/``LTIL`` ...) is also projected on the file's
        own segment axes (``"r_file_axes"``, ``"axis_angle_deg"``).

    Returns
    -------
    checks : dict
        ``{name: {"r": (3,), "rms": (3,), "rms_smoothed": (3,), "frames": n,
        "r_unfiltered": (3,)}}``
        for every angle, moment and power present in both (Pearson
        correlation and RMS difference per component over the frames where
        both are finite and the file's value is not exactly zero; powers
        compare the total, the file's Z component); moments and powers of a
        foot whose ground reaction the file carries also give
        ``"frames_other_load"``; moments give the sagittal r over the frames
        where ahbm's foot carries a plate load and over the others
        (``"r_loaded"``, ``"r_unloaded"``), ``"flat"`` (components whose
        curves span less than :data:`FLAT_MOMENT`, r NaN), and with
        `lab_moments` ``"r_file_axes"`` and ``"axis_angle_deg"``.
        ``{"LGroundReactionForce": {"r", "rms",
        "frames", "frames_loaded", "frames_differing", "scale"}}`` for the
        feet's ground reactions, and ``{"LAJC": {"median_distance": m,
        "frames": n}, ...}`` for the joint centres the file carries (``LFEP``,
        ``LFEO``, ``LTIO`` ...). Empty when the file has no such outputs.
    flags : list of str
        Disagreements: a sagittal angle or moment curve with r below 0.9, a
        transverse moment with r below -0.3 (opposite sign), a joint centre
        more than 10 mm (median) from the file's, a foot whose ground reaction
        differs from the file's in more than 5 % of its loaded frames.

    Notes
    -----
    **Diagnosis.** A sagittal moment that differs only where the foot is
    loaded points at the load or the geometry (plate assignment, centre of
    pressure, joint centres, segment axes); one that differs only in swing at
    the segment parameters and the filtering. ``r_file_axes`` projects ahbm's
    own moment on the file's distal segment axes: when it agrees where
    ``r`` does not, the two models' segments are turned differently about
    their long axes (the static calibration: ThighRotation, ShankRotation,
    TibialTorsion, foot offsets), and the flag says so.

    The file's moments are those of Plug-in Gait's own projection (the
    distal segment's axes); ahbm's default projection is the joint
    coordinate system's (``GaitSettings.moment_frame``), which gives the same
    sagittal and transverse curves up to the joint's rotation. Frames are
    matched by time (the trial's first frame included).

    **Loads.** When the file carries Plug-in Gait's ``LGroundReactionForce``
    and ``RGroundReactionForce`` (the plate loads Vicon applied to each foot,
    normalised by body mass), their magnitudes are compared with ahbm's
    frame by frame (the file's scale, N/kg or N, is found from the frames
    where both carry a load). Frames where they differ by more than
    :data:`LOAD_TOLERANCE` (1 N/kg) are left out of that foot's moment and
    power comparison: there the two computed different problems (typically
    a plate that both feet touched, which Vicon gives whole to the foot that
    stepped on it first, or a foot across two treadmill belts), and the
    moments say nothing about the model.

    **Noise.** Vicon's curves are often computed from unfiltered markers, with
    frame-to-frame noise that ahbm's filtered curves do not have. ``r`` is
    therefore taken after low-passing both curves with ahbm's marker filter
    (``result.settings["marker_cutoff_hz"]``, each run of compared frames
    on its own); ``r_unfiltered`` is the correlation of the curves as they
    are; ``rms`` compares them as they are and ``rms_smoothed`` after the
    same low-pass (the model's difference without Vicon's frame-to-frame
    noise).

    Examples
    --------
    >>> checks, flags = compare_with_file_outputs(result, trial)  # doctest: +SKIP
    >>> checks["LKneeMoment"]["r"]  # doctest: +SKIP
    array([0.98, 0.91, 0.87])
    """
    if not isinstance(result, GaitResult):
        raise DataError(
            f"`result` must be the GaitResult of analyze_gait, got {type(result).__name__}"
        )
    _check_trial(trial)
    kinds = trial.point_kinds if isinstance(getattr(trial, "point_kinds", None), dict) else {}
    labels = [str(lab) for lab in trial.point_labels]
    column = {}
    for i, lab in enumerate(labels):
        column.setdefault(_bare(lab), i)
    pts = np.asarray(trial.points, dtype=float)
    t_file = np.asarray(trial.time, dtype=float)
    t_res = np.asarray(result.time, dtype=float)
    checks: dict = {}
    flags: list = []
    if t_file.size == 0 or t_res.size == 0:
        return checks, flags
    rate = float(trial.point_rate)
    idx = np.rint((t_res - t_file[0]) * rate).astype(int)
    inside = (idx >= 0) & (idx < t_file.size)
    if not inside.any():
        return checks, flags
    ours = result.as_plug_in_gait()
    cutoff = result.settings.get("marker_cutoff_hz") if isinstance(result.settings, dict) else None
    output_kind = {_bare(lab): kind[0] for lab, kind in kinds.items() if isinstance(kind, tuple)}

    def file_curve(name, shape):
        theirs = np.full(shape, np.nan)
        theirs[inside] = pts[idx[inside], column[name]]
        return theirs

    other_load = {}  # side letter -> frames where the file's foot load is not ahbm's
    for p in ("L", "R"):
        name = f"{p}GroundReactionForce"
        if name not in ours or name not in column or output_kind.get(name) != "force":
            continue
        check, differs = _compare_loads(ours[name], file_curve(name, ours[name].shape))
        if check is None:
            continue
        checks[name] = check
        other_load[p] = differs
        if check["frames_differing"] > _MAX_LOAD_DIFFERING * max(check["frames_loaded"], 1):
            side = "left" if p == "L" else "right"
            flags.append(
                f"{name}: the file's Plug-in Gait applied another ground reaction to the {side} "
                f"foot than ahbm in {check['frames_differing']} of {check['frames_loaded']} "
                f"loaded frames (t = {_time_ranges(t_res, differs)}): a plate that both feet "
                "touched, a foot across two plates, or another plate assignment; the "
                f"{side} moments and powers are compared without those frames"
            )
    for name, mine in ours.items():
        kind = output_kind.get(name)
        if kind not in ("angle", "moment", "power") or name not in column:
            continue
        theirs = file_curve(name, mine.shape)
        ok = np.isfinite(mine).all(axis=1) & np.isfinite(theirs).all(axis=1)
        excluded = 0
        if kind != "angle":  # Vicon writes zeros where it computed no kinetics
            ok &= np.any(theirs != 0.0, axis=1)
            differs = other_load.get(name[:1])
            if differs is not None:  # another load on the foot: not the same problem
                excluded = int((ok & differs).sum())
                ok &= ~differs
        raw, mine_raw = theirs, mine
        theirs = _smoothed(theirs, ok, rate, cutoff)
        mine = _smoothed(mine, ok, rate, cutoff)
        ok &= np.isfinite(theirs).all(axis=1) & np.isfinite(mine).all(axis=1)
        n = int(ok.sum())
        if n < _MIN_FRAMES:
            continue
        comps = (2,) if kind == "power" else (0, 1, 2)
        floor = FLAT_MOMENT if kind == "moment" else 0.0
        r = np.full(3, np.nan)
        r_raw = np.full(3, np.nan)
        rms = np.full(3, np.nan)
        rms_smoothed = np.full(3, np.nan)
        for c in comps:
            r[c] = _r(mine[ok, c], theirs[ok, c], floor)
            r_raw[c] = _r(mine_raw[ok, c], raw[ok, c], floor)
            rms[c] = float(np.sqrt(np.mean((mine_raw[ok, c] - raw[ok, c]) ** 2)))
            rms_smoothed[c] = float(np.sqrt(np.mean((mine[ok, c] - theirs[ok, c]) ** 2)))
        checks[name] = {
            "r": r, "rms": rms, "rms_smoothed": rms_smoothed, "frames": n, "r_unfiltered": r_raw,
        }  # fmt: skip
        if kind != "angle" and name[:1] in other_load:
            checks[name]["frames_other_load"] = excluded
        why = ""
        if kind == "moment":
            checks[name]["flat"] = np.array(
                [c in comps and max(np.ptp(mine[ok, c]), np.ptp(theirs[ok, c])) < floor
                 for c in range(3)]
            )  # fmt: skip
            why = _moment_diagnosis(
                checks[name], name, result, mine[:, 0], theirs[:, 0], ok,
                None if lab_moments is None else lab_moments.get(name),
                lambda lab: file_curve(lab, (t_res.size, 3)) if lab in column else None,
                rate, cutoff,
            )  # fmt: skip
        if kind in ("angle", "moment") and np.isfinite(r[0]) and r[0] < MIN_SAGITTAL_R:
            flags.append(
                f"{name}: the sagittal curve differs from the file's own Plug-in Gait output "
                f"(r = {r[0]:.2f} over {n} frames){why}"
            )
        if kind == "moment" and np.isfinite(r[2]) and r[2] < OPPOSITE_SIGN_R:
            flags.append(
                f"{name}: the transverse moment has the opposite sign of the file's Plug-in "
                f"Gait output (r = {r[2]:.2f})"
            )
    for file_name, ours_name in FILE_JOINT_CENTRES.items():
        mine = result.joint_centres.get(ours_name)
        if mine is None or output_kind.get(file_name):
            continue
        med, n = centre_distance(trial, result.time, mine, file_name)
        if n < _MIN_FRAMES:
            continue
        checks[ours_name] = {"median_distance": med, "frames": n}
        if med > MAX_CENTRE_DISTANCE:
            flags.append(
                f"{ours_name}: {1000 * med:.0f} mm (median) from the file's Plug-in Gait "
                f"centre {file_name}; the subject parameters or their conventions may differ "
                "from those Vicon used"
            )
    return checks, flags
