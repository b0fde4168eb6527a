"""The whole gait pipeline: :func:`analyze_gait` composes the stages."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from ahbm._internal.validation import as_positive_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.angles import joint_angles
from ahbm.gait.calibration import static_calibration
from ahbm.gait.checks import (
    check_cycles,
    check_kinetics,
    check_plausibility,
    foot_keeps_up_axis,
    gait_spatiotemporal,
    undefined_components,
)
from ahbm.gait.cycles import gait_cycles
from ahbm.gait.energetics import gait_energetics
from ahbm.gait.events import EVENT_SOURCES, select_gait_events
from ahbm.gait.file_outputs import compare_with_file_outputs
from ahbm.gait.frames import foot_offset_from_angles, segment_frames
from ahbm.gait.kinetics import assign_plates, joint_kinetics
from ahbm.gait.markers import gait_markers, load_gait_trial, static_markers
from ahbm.gait.result import GaitResult
from ahbm.gait.settings import GaitSettings
from ahbm.gait.subject import NoBodyMassError, subject_parameters

__all__ = ["analyze_gait"]


def analyze_gait(
    trial_or_path,
    *,
    mass=None,
    height=None,
    static=None,
    grf=None,
    events: str = "auto",
    belt_speed=None,
    settings: GaitSettings | None = None,
) -> GaitResult:
    """Joint angles, moments, powers, forces, events and cycles of a walking trial.

    Parameters
    ----------
    trial_or_path : Trial or path
        The walking trial (C3D or TRC file, or a Trial with markers in m and,
        for kinetics, force plates in the lab frame).
    mass : float, optional
        Body mass, kg (default: the file's Bodymass, else estimated from the
        force plates with a warning).
    height : float, optional
        Stature, m (default: the file's, else estimated from the leg length).
    static : Trial or path, optional
        Static standing trial: subject estimates, heel-toe foot offset and
        calibrated landmarks for marker sets with clusters.
    grf : path or OpenSimTable, optional
        Ground reaction forces from an OpenSim ``.mot``/``.sto`` file (columns
        ``*force_v*``, ``*force_p*``, ``*torque_*`` in the trial's lab frame),
        used as force plates (each force one plate, resampled onto the trial's
        time axis) in place of the trial's own plates.
    events : {"auto", "file", "force_plates", "kinematic"}
        Source of the foot strikes and foot offs: ``"file"`` the trial's own
        events (e.g. the C3D's EVENT group; an error when it has none or they
        do not alternate), ``"force_plates"`` kinematic events (Zeni)
        replaced by the plate contacts attributed to one foot,
        ``"kinematic"`` Zeni only, ``"auto"`` (default) the file's events
        when they pass the checks, else the plates', else kinematic. What was
        used is in ``result.settings["events"]``.
    belt_speed : float, optional
        Treadmill belt speed, m/s. A treadmill trial (the pelvis travels less
        than 0.5 m while the feet step) has its stride and step lengths
        computed in the belt's frame with this speed, else with the speed
        estimated from the feet in stance, else omitted (NaN, flagged).
    settings : GaitSettings, optional
        Processing settings (marker set, filter cutoffs, gap limit, BSP table,
        contact threshold, kinetics on/off, vertical axis, subject
        measurements); default ``GaitSettings()``.

    Returns
    -------
    GaitResult
        Angles in rad, moments in N·m/kg, powers in W/kg, forces in N/kg.

    Raises
    ------
    DataError
        Missing markers (listed, with the mapping option), a marker gap longer
        than ``settings.max_gap``, no force plate contact with kinetics on, no
        mass (kinetics only), a mass or measurement outside its plausible
        range, ``events="file"`` without usable file events.

    Warns
    -----
    AhbmWarning
        Estimated subject parameters; a mass 10 % away from the plates'
        weight; a plate zero offset beyond 10 N; a load under no foot; failed
        plausibility checks of the events and cycles
        (:func:`~ahbm.gait.checks.check_cycles`, stride time asymmetry,
        cadence, stance fraction, stride vs step lengths) or a treadmill
        trial without belt speed -- those also go to ``result.flags``.

    Notes
    -----
    The stages, each callable alone: :func:`gait_markers` (gap filling,
    low-pass filter, Z-up lab frame) -> :func:`subject_parameters` ->
    :func:`segment_frames` (joint centres, segment frames) ->
    :func:`joint_angles` (Grood-Suntay) -> :func:`assign_plates` (the foot
    over each plate's centre of pressure) -> :func:`gait_events` (Zeni,
    refined by the plates) -> :func:`joint_kinetics` (Newton-Euler from the
    feet up, AHBM §4.4) -> :func:`gait_cycles`, :func:`gait_energetics`
    (segment energies, power flow, Winter's work per cycle) and
    :func:`ahbm.analysis.spatiotemporal_parameters`. A leg's kinetics are NaN
    where its foot is on the ground (by the gait events) but on no plate, or
    where a plate cannot be attributed to one foot.

    Examples
    --------
    >>> from ahbm.gait import synthetic_walking_trial
    >>> trial, _ = synthetic_walking_trial()
    >>> r = analyze_gait(trial, settings=GaitSettings(kinetics=False))  # doctest: +ELLIPSIS
    >>> r.angles["LKneeAngles"].shape, r.moments
    ((360, 3), {})
    """
    if belt_speed is not None:
        belt_speed = as_positive_float(belt_speed, "belt_speed", unit="m/s")
    if events not in EVENT_SOURCES:
        raise DataError(
            f"`events` must be one of {', '.join(map(repr, EVENT_SOURCES))}, got {events!r}"
        )
    if settings is not None and not isinstance(settings, GaitSettings):
        raise DataError(f"`settings` must be a GaitSettings, got {type(settings).__name__}")
    settings = GaitSettings() if settings is None else settings
    tr = load_gait_trial(trial_or_path, "trial_or_path")
    st = load_gait_trial(static, "static") if static is not None else None
    markers = gait_markers(tr, settings=settings, static=st, grf=grf)
    auto = isinstance(settings.kinetics, str)  # "auto": kinetics when the plates allow it
    if auto and not markers.plates:
        warnings.warn(
            f"{markers.source}: the trial has no force plates; kinematics only "
            "(kinetics='auto'; pass a GRF table with grf=, or kinetics=False to say so)",
            AhbmWarning,
            stacklevel=2,
        )
        settings = settings.replace(kinetics=False)
    subject_args = dict(
        mass=mass,
        height=height,
        leg_length=settings.leg_length,
        knee_width=settings.knee_width,
        ankle_width=settings.ankle_width,
        tibial_torsion=settings.tibial_torsion,
        thigh_rotation=settings.thigh_rotation,
        shank_rotation=settings.shank_rotation,
        marker_radius=settings.marker_radius,
        marker_set=settings.marker_set,
        marker_map=settings.marker_map,
        plates=markers.plates,
    )
    try:
        subject = subject_parameters(tr, st, need_mass=bool(settings.kinetics), **subject_args)
    except NoBodyMassError as err:
        if not auto:
            raise
        warnings.warn(
            f"{err}; kinematics only (kinetics='auto'; kinetics=True makes this an error)",
            AhbmWarning,
            stacklevel=2,
        )
        settings = settings.replace(kinetics=False)
        subject = subject_parameters(tr, st, need_mass=False, **subject_args)
    offsets = None
    calibration = None
    if st is not None:
        keep = tuple(
            k for k in ("tibial_torsion", "thigh_rotation", "shank_rotation")
            if getattr(settings, k) is not None
        )  # fmt: skip
        calibration = static_calibration(
            static_markers(st, settings, markers.up), subject, keep=keep
        )
        subject, offsets = calibration.subject, calibration.foot_offset
    # Plug-in Gait's dynamic foot never uses the heel marker
    use_heel = not settings.plug_in_gait
    if st is None and subject.foot_offsets_from == "file":
        # Plug-in Gait's stored static offsets: its dynamic foot (ankle-toe line
        # turned by them, the heel marker unused)
        offsets = {
            side: foot_offset_from_angles(
                subject.static_plantarflexion[side], subject.static_rotation[side], side
            )
            for side in ("Left", "Right")
        }
        use_heel = False
    frames = segment_frames(markers.as_dict(), subject, foot_offset=offsets, use_heel=use_heel)
    not_defined = undefined_components(_ankle_frontal_fixed(markers.as_dict(), offsets, use_heel))
    angles = joint_angles(frames, subject)
    assignment = assign_plates(markers, frames, settings=settings)
    if auto and settings.kinetics:
        if assignment is None:
            warnings.warn(
                f"{markers.source}: no force plate contact can be attributed to a foot; "
                "kinematics only (kinetics='auto'; kinetics=True makes this an error)",
                AhbmWarning,
                stacklevel=2,
            )
        settings = settings.replace(kinetics=assignment is not None)
    events, events_used = select_gait_events(
        events, markers, frames, trial_events=tr.events, assignment=assignment,
        threshold=settings.threshold,
    )  # fmt: skip
    kinetics = None
    if settings.kinetics:
        kinetics = joint_kinetics(markers, frames, subject, events, assignment, settings=settings)
    cycled = dict(angles)
    if kinetics is not None:
        cycled.update(kinetics.moments)
        cycled.update(kinetics.powers)
    cycles = gait_cycles(events, cycled, time=markers.time)
    energetics = None
    if np.isfinite(subject.mass):  # segment energies need the mass (kinematics only: none)
        energetics = gait_energetics(
            markers, frames, subject, events, assignment if kinetics is not None else None,
            settings=settings,
        )  # fmt: skip
    names = list(markers.names)

    def heel(p):
        if p + "HEE" in names:
            return markers.filled[:, names.index(p + "HEE")]
        return frames.joint_centres[p + "AJC"]

    spt, lengths, flags = gait_spatiotemporal(
        events, {"Left": heel("L"), "Right": heel("R")}, markers.time, frames.forward,
        pelvis=frames.origin["pelvis"],
        toes=[markers.filled[:, names.index(p + "TOE")] for p in ("L", "R")],
        belt_speed=belt_speed,
    )  # fmt: skip
    flags += check_cycles(spt)
    calibrated = "static" if st is not None else (
        "file" if subject.foot_offsets_from == "file" else "none"
    )  # fmt: skip
    curve_flags = check_plausibility(cycles, calibration=calibrated)
    flags += [f.text for f in curve_flags]
    flags += [f"subject: {text}" for text in getattr(subject, "implausible", ())]
    if kinetics is not None:
        flags += check_kinetics(kinetics.moments, forces=kinetics.forces)
        off = kinetics.notes.get("stances_partly_off_plates", "none")
        if off != "none":
            flags.append(
                f"a foot partly off the force plates in its stance ({off}): the plates carry "
                "less than half the body weight in single support; its kinetics are unknown there"
            )
    Q = markers.rotation
    result = GaitResult(
        time=markers.time,
        angles=angles,
        moments={} if kinetics is None else kinetics.moments,
        powers={} if kinetics is None else kinetics.powers,
        forces={} if kinetics is None else kinetics.forces,
        events=events,
        cycles=cycles,
        spatiotemporal=spt,
        settings={
            **_record(
                settings,
                markers,
                {} if kinetics is None else kinetics.notes,
                calibration,
                subject,
            ),  # fmt: skip
            "events": events_used,
            "spatiotemporal_lengths": lengths,
            "not_defined_by_model": [
                f"{f.side[0]}{f.variable}[{f.component}]" for f in not_defined
            ] or ["none"],
        },
        subject=subject,
        joint_centres={k: v @ Q for k, v in frames.joint_centres.items()},
        source=str(tr.source or ""),
        energetics={} if energetics is None else energetics.to_results(),
        total_powers={} if kinetics is None else kinetics.total_powers,
        flags=tuple(flags),
        curve_flags=tuple(curve_flags),
        not_defined=tuple(not_defined),
    )
    lab = None
    if kinetics is not None:  # in the trial's frame, as the file's virtual points
        lab = {k: (m @ Q, kinetics.sagittal_axes[k] @ Q) for k, m in kinetics.lab_moments.items()}
    checks, disagree = compare_with_file_outputs(result, tr, lab_moments=lab)
    if checks:
        if st is None and all(
            getattr(settings, k) is None
            for k in ("tibial_torsion", "thigh_rotation", "shank_rotation")
        ):
            disagree = _sign_hints(disagree, checks, markers, subject, offsets, use_heel, tr)
        flags += disagree
        result = replace(result, flags=tuple(flags), file_outputs=checks)
    if flags:
        warnings.warn(
            f"{markers.source}: the gait checks failed ({events_used} events): "
            + "; ".join(flags)
            + ". The result is marked (GaitResult.flags)",
            AhbmWarning,
            stacklevel=2,
        )
    return result


def _ankle_frontal_fixed(mk: dict, offsets, use_heel: bool) -> dict:
    """Per side: whether the foot frame that :func:`segment_frames` builds fixes the
    ankle's frontal angle (its up axis perpendicular to the shank's flexion axis).

    The heel-toe foot (heel markers present in over 90 % of the frames, as
    segment_frames decides) and the ankle-toe foot are built on the shank's
    flexion axis; an offset turning the ankle-toe foot keeps that only when
    it keeps the foot's up axis (:func:`~ahbm.gait.checks.foot_keeps_up_axis`).
    """
    out = {}
    for side, p in (("Left", "L"), ("Right", "R")):
        heel = mk.get(p + "HEE") if use_heel else None
        if heel is not None and np.isfinite(heel).all(axis=1).mean() > 0.9:
            out[side] = True
        else:
            out[side] = foot_keeps_up_axis(None if offsets is None else offsets.get(side))
    return out


#: The subject's angles read from a file whose sign a lab's software may state otherwise.
_FILE_ANGLES = (
    ("thigh_rotation", "ThighRotation"),
    ("tibial_torsion", "TibialTorsion"),
    ("shank_rotation", "ShankRotation"),
)


def _sign_hints(flags, checks, markers, subject, offsets, use_heel, trial) -> list:
    """Flags of displaced joint centres, with the reading of the file's angles that fixes them.

    For a knee or ankle centre far from the file's own (``LFEO``, ``LTIO``
    ...), the centres are rebuilt with each of the side's nonzero
    ThighRotation (knee and ankle), TibialTorsion and ShankRotation (ankle)
    taken as read, with the opposite sign, or left out; the reading that
    brings the centre closest, when within the tolerance, is named in the
    flag (a diagnosis: the result itself keeps the values as read).
    """
    from itertools import product

    from ahbm.gait.file_outputs import MAX_CENTRE_DISTANCE, centre_distance

    out = []
    mk = markers.as_dict()
    Q = markers.rotation
    words = {-1.0: "with the opposite sign", 0.0: "left out"}
    for flag in flags:
        name = flag.split(":", 1)[0]
        c = checks.get(name, {})
        if name[1:] not in ("KJC", "AJC") or "median_distance" not in c:
            out.append(flag)
            continue
        side = "Left" if name[0] == "L" else "Right"
        file_label = name[0] + {"KJC": "FEO", "AJC": "TIO"}[name[1:]]
        keys = [(k, label) for k, label in _FILE_ANGLES if getattr(subject, k).get(side, 0.0)]
        if name[1:] == "KJC":
            keys = [kl for kl in keys if kl[0] == "thigh_rotation"]
        best = None
        # fewest changes first; a later reading must be better by 0.1 mm (only the
        # total turn of the wand matters, so several readings can fit alike)
        readings = sorted(product((1.0, -1.0, 0.0), repeat=len(keys)),
                          key=lambda cs: sum(cf != 1.0 for cf in cs))  # fmt: skip
        for coefs in readings[1:]:
            changes = {
                k: {**getattr(subject, k), side: cf * getattr(subject, k)[side]}
                for (k, _), cf in zip(keys, coefs, strict=True)
            }
            fr = segment_frames(mk, subject.replace(**changes), foot_offset=offsets,
                                use_heel=use_heel)  # fmt: skip
            d, n = centre_distance(trial, markers.time, fr.joint_centres[name] @ Q, file_label)
            if n and (best is None or d < best[0] - 1e-4):
                text = " and ".join(
                    f"{side[0]}{label} {words[cf]}"
                    for (_, label), cf in zip(keys, coefs, strict=True)
                    if cf != 1.0
                )
                best = (d, text)
        if best is not None and best[0] < MAX_CENTRE_DISTANCE:
            flag += (
                f" (with the file's {best[1]} it would be {1000 * best[0]:.1f} mm: the file may "
                "follow another convention for them)"
            )
        out.append(flag)
    return out


def _record(
    settings: GaitSettings, markers, kinetics_notes: dict, calibration=None, subject=None
) -> dict:
    """What was done, for reproducibility (stored with the results)."""
    ms = settings.marker_set
    static = (
        "none: no static trial and no stored StaticPlantFlex/StaticRotOff; the foot from "
        + ("the ankle-toe line unturned (Plug-in Gait's)" if settings.plug_in_gait
           else "the heel-toe line when the trial has heel markers, else the ankle-toe line")
    )  # fmt: skip
    if calibration is not None:
        static = "; ".join(
            f"{side}: knee from {src['knee']}, ankle from {src['ankle']}"
            for side, src in calibration.sources.items()
        )
    elif subject is not None and subject.foot_offsets_from == "file":
        static = (
            "from the file: Plug-in Gait's StaticPlantFlex/StaticRotOff on the ankle-toe foot "
            "(heel marker unused)"
        )
    plate_offsets = [
        f"plate {k}: Fz {o['force'][2]:.1f} N, Fx {o['force'][0]:.1f} N, Fy {o['force'][1]:.1f} N "
        f"removed ({o['samples']} unloaded samples)"
        if o["samples"]
        else f"plate {k}: none measured (no unloaded stretch)"
        for k, o in enumerate(markers.plate_offsets)
    ]
    return {
        "plate_offsets_n": plate_offsets or ["no plates"],
        "static_calibration": static,
        "marker_cutoff_hz": float(settings.cutoff),
        "filter": "zero-lag Butterworth, 2 passes of order 2, Winter-corrected cutoff",
        "max_gap_frames": int(settings.max_gap),
        "gap_fill": "cubic spline (interior gaps); edges not extrapolated",
        "gaps_filled": [f"{g.label} {g.start}-{g.stop}" for g in markers.gaps if g.filled],
        "gaps_left": [f"{g.label} {g.start}-{g.stop}" for g in markers.gaps if not g.filled],
        "hip_joint_centre": "Davis et al. (1991), Plug-in Gait form",
        "knee_ankle_centres": "chord function (knee and ankle widths)",
        "angles": "Grood-Suntay JCS (ISB axes), clinical signs",
        "marker_set": ms if isinstance(ms, str) else "custom",
        "marker_map": {
            k: (v if isinstance(v, str) else "+".join(v)) for k, v in markers.mapping.items()
        },
        "vertical_axis": [float(x) for x in markers.up],
        "kinetics": bool(settings.kinetics),
        **kinetics_notes,
    }
