"""Stage 5 of the gait pipeline: ground reactions on the feet and joint kinetics.

Force plates are assigned to the foot over each plate's centre of pressure;
segment-by-segment Newton-Euler from the feet up (AHBM §4.4) gives the joint
loads, reported as clinical moments on the JCS axes, powers and forces in the
distal segment frame, all divided by body mass.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.analysis.filters import butter_filtfilt
from ahbm.analysis.segments import segment_motion
from ahbm.bsp.tables import segment_parameters
from ahbm.dynamics.plate_assignment import (
    assign_force_plates,
    feet_on_plate,
    first_foot_takes_shared_plates,
)
from ahbm.dynamics.segmental import clinical_moments, loads_in_frame, newton_euler
from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.events import FOOT_INDEX
from ahbm.gait.frames import SEGMENTS, SegmentFrames
from ahbm.gait.markers import GaitMarkers
from ahbm.gait.markersets import SIDES, G
from ahbm.gait.settings import GaitSettings
from ahbm.gait.subject import SubjectParameters, _median_dist, check_subject_mass
from ahbm.kinematics.jcs import jcs_axes
from ahbm.types import ResultRepr

__all__ = [
    "GaitKinetics",
    "MOMENT_FRAMES",
    "PIG_MOMENT_SIGNS",
    "assign_plates",
    "contact_ends",
    "joint_kinetics",
    "pig_moments",
    "untorsioned_tibia",
    "JOINTS",
]

#: Joints of each leg, proximal first.
JOINTS = ("Hip", "Knee", "Ankle")
#: Parent segment index of each of :data:`SEGMENTS`.
PARENT = (-1, 0, 1, 2, 0, 4, 5)
# ahbm.bsp axes (x anterior, y left, z up) -> ISB segment axes (x anterior, y up, z right)
_BSP_TO_ISB = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])
_SIDE_KEY = {"Right": "_r", "Left": "_l"}
#: Factors from the clinical components of :func:`ahbm.dynamics.segmental.clinical_moments`
#: (internal rotator positive) to Plug-in Gait's (external rotator positive).
PIG_MOMENT_SIGNS = np.array([1.0, 1.0, -1.0])


#: Projections of the joint moments (``GaitSettings.moment_frame``).
MOMENT_FRAMES = ("jcs", "distal", "proximal")
_FRAME_TEXT = {
    "jcs": "JCS projection (e1 proximal z, e2 floating, e3 distal y)",
    "distal": "distal segment axes (Plug-in Gait's projection)",
    "proximal": "proximal segment axes",
}
# sign of the sagittal clinical moment on the distal z axis (extensor / plantarflexor positive)
_SAGITTAL_SIGN = {"Hip": -1.0, "Knee": 1.0, "Ankle": -1.0}
# ISB segment axes (x anterior, y proximal, z right) in the order (sagittal, frontal,
# transverse): the JCS axes e1, e2, e3 of two aligned segments
_PLANE_AXES = (2, 0, 1)


def pig_moments(
    moment, r_proximal, r_distal, *, joint: str, side: str, frame: str = "jcs"
) -> np.ndarray:
    """Internal joint moments as Plug-in Gait reports their components.

    Parameters
    ----------
    moment : array_like, shape (..., 3)
        Internal moment of the proximal on the distal segment, lab frame
        (N·m or N·m/kg).
    r_proximal, r_distal : array_like, shape (..., 3, 3)
        ``lab_R_segment`` of the two segments (ISB axes, both sides).
    joint : {"hip", "knee", "ankle"}
    side : {"Left", "Right"}
    frame : {"jcs", "distal", "proximal"}
        Axes the moment is projected on: ``"jcs"`` (default) the joint
        coordinate system ``e1, e2, e3`` (non-orthogonal; dual to the joint
        angles), ``"distal"`` the distal segment's axes ``(z, x, y)`` as
        Plug-in Gait reports its kinetics, ``"proximal"`` the proximal
        segment's ``(z, x, y)``. The three coincide when the segments are
        aligned.

    Returns
    -------
    ndarray, shape (..., 3)
        (sagittal, frontal, transverse) on the axes of `frame`:
        extensor (hip, knee) / plantarflexor (ankle) positive; abductor (hip),
        valgus (knee), evertor (ankle) positive; **external rotator positive**
        (Plug-in Gait's sign of the transverse moment at hip, knee and ankle,
        opposite to the internal rotation angle).

    Notes
    -----
    With ``frame="jcs"``: :func:`ahbm.dynamics.segmental.clinical_moments`
    times :data:`PIG_MOMENT_SIGNS`. Plug-in Gait's transverse component is the
    moment about the distal segment's long axis with the lateral rotation of
    its anterior face positive on both sides (pyCGM2's Vicon-compatible
    clinical descriptors: left ``+M·z``, right ``−M·z`` with z proximal).
    With ``frame="distal"`` the components are ``(s₁ M·z_d, −k M·x_d,
    −k M·y_d)`` (``k = +1`` right, ``−1`` left; ``s₁`` as in
    :func:`~ahbm.dynamics.segmental.clinical_moments`) with the distal
    segment's ISB axes, the signs that the JCS components have for aligned
    segments; ``"proximal"`` the same with the proximal axes.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.eye(3)  # segments aligned: x anterior, y up, z right
    >>> # a pure internal-rotation moment on the right thigh (about +y, toes turned medially)
    >>> (pig_moments([0.0, 10.0, 0.0], R, R, joint="hip", side="Right") + 0.0).tolist()
    [0.0, 0.0, -10.0]
    """
    if frame not in MOMENT_FRAMES:
        raise DataError(
            f"`frame` must be one of {', '.join(map(repr, MOMENT_FRAMES))}, got {frame!r}"
        )
    if frame == "jcs":
        clin = clinical_moments(moment, r_proximal, r_distal, joint=joint, side=side)
    else:
        R = as_float_array(
            r_distal if frame == "distal" else r_proximal, f"r_{frame}", allow_nan=True
        )
        M = as_float_array(moment, "moment", allow_nan=True)
        local = loads_in_frame(M, R)[..., list(_PLANE_AXES)]
        # the signs the JCS components have for aligned segments (identity rotations)
        eye = np.eye(3)
        unit = clinical_moments(eye[list(_PLANE_AXES)], eye, eye, joint=joint, side=side)
        clin = local * np.diagonal(unit)
    return clin * PIG_MOMENT_SIGNS


def untorsioned_tibia(subject: SubjectParameters, side: str) -> np.ndarray:
    """Rotation from the shank frame (ankle axis) to the knee's tibia frame.

    The shank's z axis is the ankle's flexion axis (AJC to the lateral
    malleolus); the tibia seen by the knee has its flexion axis turned back
    by the tibial torsion ``τ`` (external positive) about the long axis:
    ``R_tibia = R_shank @ Ry(s·τ)``, ``s = +1`` right, ``-1`` left. The knee
    angles use the same tibia (:func:`~ahbm.gait.joint_angles`), and so do
    the knee moments projected on the distal axes (Plug-in Gait's
    untorsioned tibia). The knee's JCS moments do not depend on it.

    Parameters
    ----------
    subject : SubjectParameters
        Its ``tibial_torsion`` (rad; 0 when unknown).
    side : {"Left", "Right"}

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.gait import SubjectParameters
    >>> subj = SubjectParameters(70.0, 1.75, {}, {}, {}, 0.25,
    ...                          tibial_torsion={"Left": 0.0, "Right": np.radians(20)})
    >>> R = untorsioned_tibia(subj, "Right")  # the ankle axis (z) turned 20 deg toward x
    >>> round(float(np.degrees(np.arctan2(R[0, 2], R[2, 2]))), 6)
    20.0
    """
    s = 1.0 if side == "Right" else -1.0
    a = s * float(subject.tibial_torsion.get(side, 0.0))
    c, sn = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, sn], [0.0, 1.0, 0.0], [-sn, 0.0, c]])


@dataclass(frozen=True, repr=False)
class GaitKinetics(ResultRepr):
    """Output of :func:`joint_kinetics` (all divided by body mass).

    Attributes
    ----------
    moments : dict
        ``"LHipMoment"`` ... -> (n_frames, 3), N·m/kg, internal moments with
        Plug-in Gait's signs (:func:`pig_moments`): extensor / plantarflexor,
        abductor / valgus / evertor, external rotator positive.
    powers : dict
        ``"LHipPower"`` ... -> (n_frames, 3), W/kg, the joint power split on
        the JCS axes (their sum is the total power).
    total_powers : dict
        ``"LHipPower"`` ... -> (n_frames,), W/kg, the total joint power
        ``M·(ω_distal − ω_proximal)`` (Plug-in Gait stores it as the Z
        component of ``LHipPower``).
    forces : dict
        ``"LHipForce"`` ... -> (n_frames, 3), N/kg, force of the proximal on the
        distal segment in the distal segment frame; ``"LGroundReactionForce"``,
        ``"RGroundReactionForce"``: the plates' load assigned to each foot
        (ground on foot), lab frame, zero off the plates, NaN where the
        foot's load is unknown.
    notes : dict
        What was done (BSP table, GRF cutoff, threshold, moment convention).
    lab_moments : dict
        ``"LHipMoment"`` ... -> (n_frames, 3), N·m/kg: the internal moment on
        the distal segment in the lab frame (NaN where unknown).
    sagittal_axes : dict
        ``"LHipMoment"`` ... -> (n_frames, 3): the distal segment's flexion
        axis, signed so that ``lab_moments · axis`` is the sagittal moment on
        the distal axes (extensor / plantarflexor positive).
    """

    moments: dict
    powers: dict
    forces: dict
    notes: dict
    total_powers: dict = field(default_factory=dict)
    lab_moments: dict = field(default_factory=dict)
    sagittal_axes: dict = field(default_factory=dict)


def assign_plates(markers: GaitMarkers, frames: SegmentFrames, *, settings=None):
    """The force plates' loads assigned to the feet, frame by frame.

    Parameters
    ----------
    markers : GaitMarkers
        Its force plates (Z-up) and filtered toe and heel markers.
    frames : SegmentFrames
        Its ankle centres.
    settings : GaitSettings, optional
        ``threshold`` (contact, N) and ``kinetics`` (whether a failure is an
        error).

    Returns
    -------
    PlateAssignment or None
        :class:`ahbm.dynamics.plate_assignment.PlateAssignment` over the segments
        :data:`~ahbm.gait.frames.SEGMENTS`; None when the trial has no
        plates, or no contact can be attributed and ``settings.kinetics`` is
        not True.

    Raises
    ------
    DataError
        No force plates (or no attributable contact) with ``kinetics=True``.
    """
    settings = GaitSettings() if settings is None else settings
    mk = markers.as_dict()
    jc = frames.joint_centres
    if not markers.plates:
        if settings.kinetics is True or settings.kinetics is np.True_:
            raise DataError(
                f"{markers.source}: the trial has no force plates, so joint moments cannot be "
                "computed; pass kinetics=False (CLI: --no-kinetics) for kinematics only"
            )
        return None
    feet = {}
    for side, p in SIDES:
        pts_f = [jc[p + "AJC"], mk[p + "TOE"]]
        if p + "HEE" in mk:
            pts_f.insert(0, mk[p + "HEE"])
        feet[FOOT_INDEX[side]] = np.stack(pts_f, axis=1)
    plates = drop_loads_under_no_foot(
        markers.plates, list(feet.values()), markers.time, threshold=settings.threshold
    )
    try:
        return assign_force_plates(
            plates,
            feet,
            time=markers.time,
            n_segments=len(SEGMENTS),
            threshold=settings.threshold,
        )
    except DataError:
        if settings.kinetics is True or settings.kinetics is np.True_:
            raise
        return None


def drop_loads_under_no_foot(
    plates, feet, time, *, threshold: float = 20.0, max_distance: float = 0.12, warn=True
):
    """Plates without the loads that lie under no foot (with a warning naming plate and frames).

    Parameters
    ----------
    plates : sequence of ForcePlate
        Z-up lab frame, sample 0 at ``time[0]``.
    feet : sequence of ndarray, shape (n_frames, n_points, 3)
        Points spanning each foot (heel or ankle centre, then toe), m.
    time : ndarray, shape (n_frames,)
        Frame times, s.
    threshold : float
        N: samples with ``|Fz|`` above it are loads.
    max_distance : float
        m: a load whose centre of pressure is farther than this (horizontally)
        from every foot's heel-toe line, while every foot is visible and no
        foot stands on the plate (:func:`ahbm.dynamics.feet_on_plate`: a
        grounded marker inside its outline), is under no foot.

    Returns
    -------
    list of ForcePlate
        Copies with those samples set to zero force (COP NaN); plates without
        such samples are returned unchanged.

    Notes
    -----
    A plate with a zero offset, a spike or a load from something else (a
    walking aid, the other subject) would otherwise make its frames
    ambiguous and blank the kinetics of both legs.

    Examples
    --------
    >>> from ahbm.io.trial import ForcePlate
    >>> n = 5; F = np.tile([0.0, 0, 300], (n, 1)); cop = np.tile([2.0, 2.0, 0], (n, 1))
    >>> fp = ForcePlate(F, np.zeros((n, 3)), cop, np.zeros((n, 3)), np.zeros((4, 3)),
    ...                 np.zeros(3), rate=100.0)
    >>> foot = np.tile([[0.0, 0, 0], [0.2, 0, 0]], (n, 1, 1))
    >>> out = drop_loads_under_no_foot([fp], [foot], np.arange(n) / 100.0, warn=False)
    >>> float(out[0].force[:, 2].max())
    0.0
    """
    from dataclasses import replace

    time = np.asarray(time, dtype=float)
    out = []
    for k, plate in enumerate(plates):
        F = np.asarray(plate.force, dtype=float)
        cop = np.asarray(plate.cop, dtype=float)
        ts = time[0] + np.arange(F.shape[0]) / float(plate.rate)
        idx = np.clip(np.searchsorted(time, ts + 1e-9, side="right") - 1, 0, time.size - 1)
        loaded = np.abs(F[:, 2]) > threshold
        loaded &= np.isfinite(cop[:, :2]).all(axis=1)
        if not loaded.any():
            out.append(plate)
            continue
        dist = np.full((F.shape[0], len(feet)), np.nan)
        for j, pts in enumerate(feet):
            dist[:, j] = _horizontal_distance(cop, pts[idx])
        seen = np.isfinite(dist).all(axis=1)
        none = loaded & seen
        none[seen] &= dist[seen].min(axis=1) > max_distance
        if none.any():  # a foot standing on the plate: the load is (partly) that foot's,
            # e.g. two feet on the plate with the centre of pressure between them
            corners = getattr(plate, "corners", None)
            if corners is not None:
                on = feet_on_plate(list(feet), corners, time=time).any(axis=1)
                none &= ~on[idx]
        if not none.any():
            out.append(plate)
            continue
        frames = np.unique(idx[none])
        if warn:
            warnings.warn(
                f"force plate {k}: a load of up to {np.nanmax(np.abs(F[none, 2])):.0f} N lies "
                f"under no foot (more than {max_distance} m from both feet) in {frames.size} "
                f"frame(s) {_ranges(frames)} (t = {time[frames[0]]:.3f}-"
                f"{time[frames[-1]]:.3f} s); ignored (a plate offset, a spike or another "
                "load), the feet's kinetics are kept",
                AhbmWarning,
                stacklevel=3,
            )
        keep = ~none[:, None]
        out.append(
            replace(
                plate,
                force=np.where(keep, F, 0.0),
                moment=np.where(keep, plate.moment, 0.0),
                cop=np.where(keep, cop, np.nan),
                free_moment=np.where(keep, plate.free_moment, 0.0),
            )
        )
    return out


def _horizontal_distance(p, pts):
    """Horizontal distance (n,) from points `p` (n, 3) to the polyline `pts` (n, k, 3)."""
    best = np.full(p.shape[0], np.inf)
    for a, b in zip(np.moveaxis(pts[:, :-1], 1, 0), np.moveaxis(pts[:, 1:], 1, 0), strict=True):
        a2, b2, p2 = a[:, :2], b[:, :2], p[:, :2]
        ab = b2 - a2
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.clip(np.sum((p2 - a2) * ab, 1) / np.sum(ab * ab, 1), 0.0, 1.0)
        d = np.linalg.norm(p2 - (a2 + u[:, None] * ab), axis=1)
        best = np.fmin(best, d)
    best[~np.isfinite(pts).all(axis=(1, 2))] = np.nan
    return best


def _runs(frames) -> list:
    """[(first, last), ...] of the runs of consecutive indices in sorted `frames`."""
    runs, start = [], frames[0]
    for a, b in zip(frames[:-1], frames[1:], strict=True):
        if b != a + 1:
            runs.append((start, a))
            start = b
    runs.append((start, frames[-1]))
    return runs


def _ranges(frames) -> str:
    """'3-7, 12' for frame indices [3, 4, 5, 6, 7, 12] (at most 4 ranges shown)."""
    runs = _runs(frames)
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:4])
    return text + (f" and {len(runs) - 4} more" if len(runs) > 4 else "")


def joint_kinetics(
    markers: GaitMarkers,
    frames: SegmentFrames,
    subject: SubjectParameters,
    events,
    assignment,
    *,
    settings=None,
) -> GaitKinetics:
    """Joint moments, powers and forces of both legs by Newton-Euler from the feet up.

    Parameters
    ----------
    markers : GaitMarkers
        Time, rate and the toe markers (foot COM and length).
    frames : SegmentFrames
        Segment rotations and joint centres.
    subject : SubjectParameters
        Body mass and stature (segment parameters, normalization).
    events : list of Event
        Gait events: a leg's loads are NaN where its foot is on the ground but
        on no plate.
    assignment : PlateAssignment
        Output of :func:`assign_plates`.
    settings : GaitSettings, optional
        ``sex`` (de Leva column), ``grf_cutoff``, ``threshold``.

    Returns
    -------
    GaitKinetics

    Notes
    -----
    Segment parameters by de Leva (1996) with the measured HJC-KJC, KJC-AJC
    and AJC-TOE lengths; foot COM at mid AJC-TOE. Loads are NaN within 0.03 s
    of a frame where a plate cannot be attributed to one foot or the foot is
    on the ground off the plates (:func:`unknown_load_frames`). Next to a
    contact the plate's load below the threshold is the foot's
    (:func:`contact_ends`), so the stance moments run through toe-off into
    the swing-leg dynamics (no ground reaction) without a gap.
    """
    settings = GaitSettings() if settings is None else settings
    if assignment is None:
        raise DataError("`assignment` is None: no force plate load is assigned to the feet")
    if settings.plug_in_gait:  # a plate both feet touch goes whole to the first foot on it
        assignment = first_foot_takes_shared_plates(
            assignment, markers.plates, markers.time, threshold=settings.threshold
        )
    _, _, motion, f_ext, loads = segment_loads(markers, frames, subject, assignment, settings)
    # Plug-in Gait applies the load of a foot partly off the plates as measured
    unknown = unknown_load_frames(
        events, assignment, markers.time, markers.rate,
        weight=None if settings.plug_in_gait else subject.mass * G,
    )  # fmt: skip
    moments, powers, forces, totals, lab, axes = {}, {}, {}, {}, {}, {}
    frame = settings.effective_moment_frame
    for side, p in SIDES:
        ids = [SEGMENTS.index(f"{s}_{side}") for s in ("thigh", "shank", "foot")]
        bad = unknown[side]
        grf = f_ext[:, ids[2], 3:] / subject.mass  # the plates' load on the foot, lab frame
        grf[bad] = np.nan
        forces[f"{p}GroundReactionForce"] = grf
        for joint, i in zip(JOINTS, ids, strict=True):
            prox = PARENT[i]
            Rprox, Rdist = motion.rotation[:, prox], motion.rotation[:, i]
            if joint == "Knee":  # the knee's tibia: the shank untwisted to the knee's axis
                Rdist = Rdist @ untorsioned_tibia(subject, side)
            M = loads.moment[:, i] / subject.mass
            clin = pig_moments(M, Rprox, Rdist, joint=joint.lower(), side=side, frame=frame)
            w_rel = motion.omega[:, i] - motion.omega[:, prox]
            pw = _power_components(M, w_rel, Rprox, Rdist)
            total = np.sum(M * w_rel, axis=-1)
            fr = loads_in_frame(loads.force[:, i] / subject.mass, Rdist)
            M = M.copy()
            for arr in (clin, pw, fr, total, M):
                arr[bad] = np.nan
            lab[f"{p}{joint}Moment"] = M
            axes[f"{p}{joint}Moment"] = _SAGITTAL_SIGN[joint] * Rdist[..., :, 2]
            moments[f"{p}{joint}Moment"] = clin
            powers[f"{p}{joint}Power"] = pw
            totals[f"{p}{joint}Power"] = total
            forces[f"{p}{joint}Force"] = fr
    stance = _stance_masks(events, markers.time)
    off = {}
    for side, _ in SIDES:
        fz = f_ext[:, SEGMENTS.index(f"foot_{side}"), 5]
        part = partly_off_plates(stance[side], stance[_OTHER[side]], fz, subject.mass * G)
        if part.any():
            t, runs = markers.time, _runs(np.flatnonzero(part))
            off[side] = ", ".join(f"{t[a]:.2f}-{t[b]:.2f} s" for a, b in runs)
    notes = {
        "stances_partly_off_plates": "; ".join(f"{k}: {v}" for k, v in off.items()) or "none",
        "bsp_table": f"de_leva ({settings.sex}); foot COM at mid AJC-TOE",
        "grf_cutoff_hz": "none" if settings.grf_cutoff is None else float(settings.grf_cutoff),
        "force_threshold_n": float(settings.threshold),
        "moment_convention": "internal; Plug-in Gait signs: extensor/plantarflexor, "
        "abductor/valgus/evertor, external rotator positive; "
        + _FRAME_TEXT[frame]
        + ("" if frame == "jcs" else "; the knee's on the shank turned by the tibial torsion"),
        "compat": settings.compat,
        "power_convention": "total M.(w_distal - w_proximal) (Plug-in Gait's Z) and its "
        "split on the JCS axes",
    }
    return GaitKinetics(moments, powers, forces, notes, totals, lab, axes)


def segment_loads(markers, frames, subject, assignment, settings):
    """Segment model, motion, ground loads and Newton-Euler joint loads of :data:`SEGMENTS`.

    Returns ``(masses, inertia, motion, f_ext, loads)``: masses (kg) and
    inertias (ISB segment axes) by de Leva, the :class:`SegmentMotion`, the
    (filtered) plate loads on the feet and the :class:`JointLoads`, lab frame;
    ``f_ext`` and ``loads`` are None when `assignment` is None.
    """
    check_subject_mass(subject, "the segment model (joint kinetics, segment energies)")
    mk, time, rate = markers.as_dict(), markers.time, markers.rate
    masses, inertia, R, com, joint_pts = _segment_model(mk, frames, subject, settings.sex)
    motion = segment_motion(R, com, time=time)
    if assignment is None:
        return masses, inertia, motion, None, None
    # with the loads below the threshold next to each contact: stance runs into swing
    f_ext = assignment.f_ext + contact_ends(assignment, markers.plates, time, rate)
    if settings.grf_cutoff is not None:
        f_ext = butter_filtfilt(f_ext, rate=rate, cutoff=settings.grf_cutoff)
    loads = newton_euler(
        list(PARENT), masses, inertia, motion, joint_pts, gravity=(0.0, 0.0, -G), f_ext=f_ext
    )
    return masses, inertia, motion, f_ext, loads


def contact_ends(assignment, plates, time, rate) -> np.ndarray:
    """The plates' loads below the contact threshold next to each contact, on its foot.

    Parameters
    ----------
    assignment : PlateAssignment
        Its ``plate_of`` (the segment each plate is given to, frame by frame).
    plates : sequence of ForcePlate
        The plates of the assignment (Z-up lab frame, sample 0 at ``time[0]``).
    time : ndarray, shape (n_frames,)
    rate : float
        Frame rate, Hz.

    Returns
    -------
    ndarray, shape like ``assignment.f_ext``
        ``[moment about the lab origin; force]`` of each plate (from its force
        and its moment about its origin: no centre of pressure, which is
        unreliable at low loads) in the frames within 0.03 s of a contact of
        that plate with one foot where the plate is given to no segment: the
        load rising from zero to the threshold at a foot strike, or falling
        from it at a toe-off, is that foot's. Frames near contacts of two
        segments with the same plate get nothing.

    Examples
    --------
    >>> from ahbm.dynamics import PlateAssignment
    >>> from ahbm.io.trial import ForcePlate
    >>> n = 12; F = np.zeros((n, 3)); F[3:8, 2] = [5.0, 300, 600, 300, 12]
    >>> fp = ForcePlate(F, np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)),
    ...                 np.zeros((4, 3)), np.zeros(3), rate=100.0)
    >>> own = np.where(F[:, 2:] > 20.0, 0, -1)
    >>> a = PlateAssignment(np.zeros((n, 1, 6)), own >= 0, np.zeros((n, 1), bool), own)
    >>> contact_ends(a, [fp], np.arange(n) / 100.0, 100.0)[:, 0, 5].tolist()
    [0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 12.0, 0.0, 0.0, 0.0, 0.0]
    """
    time = np.asarray(time, dtype=float)
    margin = int(np.ceil(0.03 * rate))
    extra = np.zeros(np.shape(assignment.f_ext))
    for k, plate in enumerate(plates):
        own = assignment.plate_of[:, k]
        segs = np.unique(own[own >= 0])
        if not segs.size:
            continue
        F = np.nan_to_num(np.asarray(plate.force, dtype=float))
        n0 = np.cross(np.asarray(plate.origin, dtype=float), F) + np.nan_to_num(
            np.asarray(plate.moment, dtype=float)
        )
        ts = time[0] + np.arange(F.shape[0]) / float(plate.rate)
        w = np.stack([np.interp(time, ts, c, left=0.0, right=0.0) for c in (*n0.T, *F.T)], axis=-1)
        near = np.stack([_dilate(own == i, margin) & (own < 0) for i in segs])
        alone = near.sum(axis=0) == 1
        for i, nr in zip(segs, near, strict=True):
            sel = nr & alone
            extra[sel, i] += w[sel]
    return extra


def unknown_load_frames(events, assignment, time, rate, *, weight=None) -> dict:
    """Per side: True in the frames where the leg's joint loads are unknown.

    The foot is on the ground (by the events) but on no plate, or its plate
    cannot be attributed to it (with 0.03 s around those frames). With the
    body `weight` (N), a whole stance (foot strike to foot off) is unknown
    when the plates carry less than :data:`MIN_SINGLE_SUPPORT_LOAD` of it
    under the foot (median vertical load) while the other foot is in swing:
    the foot stands partly off the plates (a heel on a plate's edge, a
    forefoot beyond it), and the load measured in its other frames is not
    the foot's whole load either.

    The ends of a plate contact are known: within 0.03 s of a contact the
    plate's load below the threshold is the foot's (:func:`contact_ends`),
    and frames that the events count as stance while the plate is no longer
    (or not yet) loaded above the threshold are the events' timing against
    the plate's (a fraction of a frame at a threshold crossing), not a foot
    on the floor: stance moments run through toe-off without a gap.
    """
    stance = _stance_masks(events, time)
    margin = int(np.ceil(0.03 * rate))
    out = {}
    for side, _ in SIDES:
        foot = SEGMENTS.index(f"foot_{side}")
        contact = assignment.contact[:, foot]
        # on the ground by the events, beyond the contact's sub-threshold ends
        bad = assignment.ambiguous[:, foot] | (stance[side] & ~_dilate(contact, margin))
        if weight is not None and np.isfinite(weight) and weight > 0:
            bad |= partly_off_plates(
                stance[side], stance[_OTHER[side]], assignment.f_ext[:, foot, 5], weight
            )
        out[side] = _dilate(bad, margin)
    return out


#: Fraction of body weight a foot's plates must carry, as a median over the foot's
#: single support, for that stance's plate loads to be taken as the foot's whole load.
MIN_SINGLE_SUPPORT_LOAD = 0.5
_OTHER = {"Left": "Right", "Right": "Left"}


def partly_off_plates(stance, other_stance, fz, weight, *, min_frames: int = 3):
    """Frames of the stances in which the foot stands partly off the force plates.

    Parameters
    ----------
    stance, other_stance : ndarray of bool, shape (n_frames,)
        The foot's and the other foot's ground contact (from the events).
    fz : ndarray, shape (n_frames,)
        Vertical plate load assigned to the foot, N (0 off the plates).
    weight : float
        Body weight, N.
    min_frames : int
        Single-support frames a stance needs for the check.

    Returns
    -------
    ndarray of bool, shape (n_frames,)
        True over every stance (a run of `stance`) that touches a plate but
        whose median vertical load over its single-support frames (the other
        foot off the ground) is below ``MIN_SINGLE_SUPPORT_LOAD * weight``
        (a stance on no plate at all is left False).

    Notes
    -----
    In single support the foot carries the body's weight (0.7-1.3 times it
    in walking); a plate that reads much less holds only part of the foot.

    Examples
    --------
    >>> st = np.array([0, 1, 1, 1, 1, 1, 0], bool); other = np.array([1, 1, 0, 0, 0, 1, 1], bool)
    >>> partly_off_plates(st, other, np.array([0, 30, 10, 5, 8, 20, 0.0]), 700.0).astype(int)
    array([0, 1, 1, 1, 1, 1, 0])
    """
    stance = np.asarray(stance, bool)
    single = stance & ~np.asarray(other_stance, bool)
    fz = np.nan_to_num(np.asarray(fz, dtype=float))
    out = np.zeros(stance.shape, bool)
    idx = np.flatnonzero(stance)
    if idx.size == 0:
        return out
    for a, b in _runs(idx):
        ss = single[a : b + 1]
        low = np.median(fz[a : b + 1][ss]) < MIN_SINGLE_SUPPORT_LOAD * weight if ss.any() else False
        touched = np.any(fz[a : b + 1] > 0.0)  # no plate at all: already unknown, no news
        if ss.sum() >= min_frames and low and touched:
            out[a : b + 1] = True
    return out


def _segment_model(mk, frames: SegmentFrames, subj: SubjectParameters, sex: str):
    """Masses, inertias (ISB axes), rotations, COMs and proximal joint points of SEGMENTS."""
    jc = frames.joint_centres
    lengths = {}
    for side, p in SIDES:
        k = _SIDE_KEY[side]
        lengths["thigh" + k] = _median_dist(jc[p + "HJC"], jc[p + "KJC"])
        lengths["shank" + k] = _median_dist(jc[p + "KJC"], jc[p + "AJC"])
        lengths["foot" + k] = _median_dist(jc[p + "AJC"], mk[p + "TOE"])
    par = segment_parameters(
        "de_leva", mass=subj.mass, height=subj.height, segment_lengths=lengths, sex=sex
    )
    n_seg, n = len(SEGMENTS), frames.rotation["pelvis"].shape[0]
    masses = np.zeros(n_seg)
    inertia = np.zeros((n_seg, 3, 3))
    R = np.empty((n, n_seg, 3, 3))
    com = np.empty((n, n_seg, 3))
    joint_pts = np.empty((n, n_seg, 3))
    R[:, 0] = frames.rotation["pelvis"]
    com[:, 0] = joint_pts[:, 0] = frames.origin["pelvis"]
    for i, name in enumerate(SEGMENTS[1:], start=1):
        seg, side = name.split("_")
        p = side[0]
        bp = par[f"{seg}{_SIDE_KEY[side]}"]
        masses[i] = bp.mass
        inertia[i] = _BSP_TO_ISB @ bp.inertia @ _BSP_TO_ISB.T
        R[:, i] = frames.rotation[name]
        if seg == "foot":
            com[:, i] = 0.5 * (jc[p + "AJC"] + mk[p + "TOE"])
            joint_pts[:, i] = jc[p + "AJC"]
        else:
            prox = jc[p + ("HJC" if seg == "thigh" else "KJC")]
            dist = jc[p + ("KJC" if seg == "thigh" else "AJC")]
            com[:, i] = prox + abs(bp.com[2]) / bp.length * (dist - prox)
            joint_pts[:, i] = prox
    return masses, inertia, R, com, joint_pts


def _stance_masks(events, time):
    """Per side: True where the foot is on the ground according to the events."""
    out = {}
    for side, _ in SIDES:
        ev = sorted((e.time, e.label) for e in events if e.context == side)
        mask = np.zeros(time.size, bool)
        if ev:
            state = ev[0][1] == "Foot Off"  # a trial starting in stance sees an off first
            t_prev = time[0] - 1.0
            for t_ev, label in ev + [(time[-1] + 1.0, "")]:
                mask[(time >= t_prev) & (time < t_ev)] = state
                state = label == "Foot Strike"
                t_prev = t_ev
        out[side] = mask
    return out


def _dilate(mask, k: int):
    """Extend True runs of a boolean frame mask by `k` frames on both sides."""
    if k <= 0 or not mask.any():
        return mask.copy()
    c = np.convolve(mask.astype(float), np.ones(2 * k + 1), mode="same")
    return c > 0.5


def _power_components(M, w_rel, Rp, Rd):
    """Joint power split on the JCS axes: ω_rel = Σ a_k e_k, P_k = a_k (M·e_k)."""
    e1, e2, e3 = jcs_axes(Rp, Rd)
    E = np.stack([e1, e2, e3], axis=-1)
    ok = np.isfinite(E).all(axis=(-2, -1)) & np.isfinite(w_rel).all(-1)
    a = np.full(w_rel.shape, np.nan)
    if ok.any():
        a[ok] = np.linalg.solve(E[ok], w_rel[ok][..., None])[..., 0]
    return a * np.stack([np.sum(M * e1, -1), np.sum(M * e2, -1), np.sum(M * e3, -1)], -1)
