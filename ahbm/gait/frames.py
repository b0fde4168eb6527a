"""Stage 2 of the gait pipeline: segment frames and joint centres from the markers.

Segment frames have ISB axes on both sides (x anterior, y up/proximal, z
right); see :mod:`ahbm.gait` for their definitions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_choice, as_finite_float
from ahbm.gait.markersets import SIDES
from ahbm.gait.subject import SubjectParameters
from ahbm.kinematics.joint_centres import chord_joint_centre, hip_joint_centre_davis
from ahbm.kinematics.markers import frame_from_landmarks
from ahbm.kinematics.rotations import orthonormalize
from ahbm.types import ResultRepr

__all__ = [
    "SegmentFrames",
    "segment_frames",
    "foot_offsets",
    "foot_offset_from_angles",
    "progression_direction",
    "signed_angle_about",
    "turn_about_line",
    "knee_offset_angle",
    "ankle_offset_angle",
]

#: Segment names in the order of the kinetic chain (pelvis, right leg, left leg).
SEGMENTS = ("pelvis",) + tuple(
    f"{s}_{side}" for side, _ in SIDES[::-1] for s in ("thigh", "shank", "foot")
)


@dataclass(frozen=True, repr=False)
class SegmentFrames(ResultRepr):
    """Output of :func:`segment_frames` (Z-up lab frame, SI).

    Attributes
    ----------
    rotation : dict
        Segment name (``"pelvis"``, ``"thigh_Left"`` ... ``"foot_Right"``) ->
        ``lab_R_segment`` (n_frames, 3, 3), NaN where markers are missing.
    origin : dict
        Segment name -> origin (n_frames, 3), m: mid-ASIS for the pelvis, the
        knee centre for a thigh, the ankle centre for a shank or foot.
    joint_centres : dict
        ``"LHJC"``, ``"LKJC"``, ``"LAJC"``, ``"RHJC"`` ... -> (n_frames, 3), m.
    forward : ndarray, shape (3,)
        Horizontal unit vector of the direction of progression.
    """

    rotation: dict
    origin: dict
    joint_centres: dict
    forward: np.ndarray


def segment_frames(
    markers: dict, subject: SubjectParameters, *, foot_offset=None, use_heel: bool = True
):
    """Segment frames, joint centres and the direction of progression from markers.

    Parameters
    ----------
    markers : dict
        Canonical (Plug-in Gait) markers ``{name: (n_frames, 3)}``, m, in a
        Z-up lab frame (e.g. :meth:`GaitMarkers.as_dict`); ``LASI``, ``RASI``,
        ``SACR``, ``?THI``, ``?KNE``, ``?TIB``, ``?ANK``, ``?TOE`` are needed,
        ``?HEE``, ``?KNM``, ``?ANM`` are used when present.
    subject : SubjectParameters
        Leg lengths, knee and ankle widths, inter-ASIS distance, marker radius.
    foot_offset : dict, optional
        ``{side: (3, 3)}`` from :func:`foot_offsets` (static trial) or
        :func:`foot_offset_from_angles` (a file's static offsets): applied to
        the ankle-toe foot frame of a side without heel markers (of every
        side when `use_heel` is False).
    use_heel : bool
        Build the foot's long axis from the heel marker when the trial has
        one (default). False: always the ankle-toe line turned by
        `foot_offset`, as Plug-in Gait's dynamic model does.

    Returns
    -------
    SegmentFrames

    Notes
    -----
    Hip centres by Davis et al. (1991) in the pelvis frame (with the
    subject's ASIS-trochanter distance when known); knee and ankle centres by
    the chord function, or mid-epicondyle / mid-malleolus when the medial
    markers are present. The chord constructions take the wands out of the
    plane by an offset angle (:func:`~ahbm.kinematics.joint_centres.chord_joint_centre`),
    as Plug-in Gait's chord does: ``-s·thigh_rotation`` at the knee and
    ``s·(tibial_torsion - shank_rotation)`` at the ankle (``s = +1`` right,
    ``-1`` left; :func:`knee_offset_angle`, :func:`ankle_offset_angle`); the
    shank frame's z axis (the ankle axis) then runs from the AJC to ANK.

    Examples
    --------
    >>> from ahbm.gait import synthetic_walking_trial
    >>> from ahbm.gait import gait_markers
    >>> trial, truth = synthetic_walking_trial(duration=1.0)
    >>> fr = segment_frames(gait_markers(trial).as_dict(), truth.params)
    >>> fr.rotation["thigh_Left"].shape, fr.forward.round(1)
    ((100, 3, 3), array([1., 0., 0.]))
    """
    frames, jc = _frames(markers, subject, foot_offset, use_heel=use_heel)
    return SegmentFrames(
        rotation={k: v[0] for k, v in frames.items()},
        origin={k: v[1] for k, v in frames.items()},
        joint_centres=jc,
        forward=progression_direction(frames["pelvis"][1], frames["pelvis"][0]),
    )


def knee_offset_angle(subject: SubjectParameters, side: str) -> float:
    """The chord's offset angle of the thigh wand: ``-s·thigh_rotation`` (rad).

    ``s = +1`` right, ``-1`` left; see
    :func:`ahbm.kinematics.joint_centres.chord_joint_centre`.
    """
    s = 1.0 if side == "Right" else -1.0
    return -s * float(subject.thigh_rotation.get(side, 0.0))


def ankle_offset_angle(subject: SubjectParameters, side: str) -> float:
    """The chord's offset angle of the shank wand: ``s·(tibial_torsion - shank_rotation)``.

    The wand's own rotation enters as the thigh's does at the knee
    (``-s·shank_rotation``, checked on a Vicon file: ankle centres within
    0.3 mm); the tibial torsion turns the wand from the knee's plane into the
    ankle's (``+s·tibial_torsion``, as the wand was turned by it before
    0.2's chord with an offset angle).
    """
    s = 1.0 if side == "Right" else -1.0
    return s * float(subject.tibial_torsion.get(side, 0.0) - subject.shank_rotation.get(side, 0.0))


def progression_direction(pelvis_origin, pelvis_rotation):
    """Horizontal unit vector of walking: the pelvis displacement, else its anterior axis.

    Parameters
    ----------
    pelvis_origin : array_like, shape (n_frames, 3)
    pelvis_rotation : array_like, shape (n_frames, 3, 3)

    Returns
    -------
    ndarray, shape (3,)
        Used when the pelvis moves less than 0.2 m (treadmill, standing).
    """
    mid = np.asarray(pelvis_origin, dtype=float)
    ok = np.flatnonzero(np.isfinite(mid).all(axis=1))
    fwd = mid[ok[-1]] - mid[ok[0]] if ok.size else np.zeros(3)
    fwd[2] = 0.0
    if np.linalg.norm(fwd) < 0.2:  # treadmill or standing: the pelvis's anterior axis
        fwd = np.nanmean(np.asarray(pelvis_rotation)[:, :, 0], axis=0)
        fwd[2] = 0.0
    return fwd / np.linalg.norm(fwd)


def _unit(v):
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _frame(origin, primary, plane, axes, *, plane_is_axis=False):
    """Rotation from landmarks (NaN frames allowed)."""
    T = frame_from_landmarks(origin, primary, plane, axes=axes, plane_is_axis=plane_is_axis)
    return T[..., :3, :3]


def _frames(mk, subj: SubjectParameters, foot_offset=None, *, use_heel=True):
    """Segment rotations and joint centres from (filtered) canonical markers."""
    mid = 0.5 * (mk["LASI"] + mk["RASI"])
    Rp = _frame(mid, mk["RASI"], 2 * mid - mk["SACR"], "zx")
    out = {"pelvis": (Rp, mid)}
    jc = {}
    for side, p in SIDES:
        s = 1.0 if side == "Right" else -1.0
        h_local = hip_joint_centre_davis(
            leg_length=subj.leg_length[side],
            inter_asis_distance=subj.inter_asis_distance,
            side=side.lower(),
            marker_radius=subj.marker_radius,
            asis_trochanter_distance=subj.asis_trochanter_distance.get(side),
        )
        hjc = np.einsum("nij,j->ni", Rp, h_local) + mid
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if p + "KNM" in mk:  # medial epicondyle available: mid-epicondyle centre
                kjc = 0.5 * (mk[p + "KNE"] + mk[p + "KNM"])
            else:  # Plug-in Gait's chord, the thigh wand out of the plane by its rotation
                kjc = chord_joint_centre(
                    hjc,
                    mk[p + "KNE"],
                    mk[p + "THI"],
                    subj.knee_width[side],
                    marker_radius=subj.marker_radius,
                    offset_angle=knee_offset_angle(subj, side),
                )
            if p + "ANM" in mk:  # medial malleolus available: mid-malleolar centre
                ajc = 0.5 * (mk[p + "ANK"] + mk[p + "ANM"])
            else:  # the shank wand out of the ankle's plane by the torsion and its rotation
                ajc = chord_joint_centre(
                    kjc,
                    mk[p + "ANK"],
                    mk[p + "TIB"],
                    subj.ankle_width[side],
                    marker_radius=subj.marker_radius,
                    offset_angle=ankle_offset_angle(subj, side),
                )
        Rt = _frame(kjc, hjc, kjc + s * (mk[p + "KNE"] - kjc), "yz")
        Rs = _frame(ajc, kjc, ajc + s * (mk[p + "ANK"] - ajc), "yz")
        heel = mk.get(p + "HEE") if use_heel else None
        if heel is not None and np.isfinite(heel).all(axis=1).mean() > 0.9:
            Rf = _frame(ajc, ajc + (mk[p + "TOE"] - heel), Rs[..., :, 2], "xz", plane_is_axis=True)
        else:
            Rf = _frame(ajc, mk[p + "TOE"], Rs[..., :, 2], "xz", plane_is_axis=True)
            if foot_offset is not None and side in foot_offset:
                Rf = Rf @ foot_offset[side]
        out[f"thigh_{side}"] = (Rt, kjc)
        out[f"shank_{side}"] = (Rs, ajc)
        out[f"foot_{side}"] = (Rf, ajc)
        jc[p + "HJC"], jc[p + "KJC"], jc[p + "AJC"] = hjc, kjc, ajc
    return out, jc


def foot_offset_from_angles(plantarflexion: float, rotation: float, side: str) -> np.ndarray:
    """The foot offset rotation of a side from its static plantarflexion and rotation offsets.

    The inverse of the two angles :func:`~ahbm.gait.static_calibration`
    reports (``static_plantarflexion``, ``static_rotation``): the heel-toe
    foot frame is the ankle-toe frame times the returned matrix.

    Parameters
    ----------
    plantarflexion : float
        rad; the ankle-toe line toes down of the heel-toe line positive
        (Plug-in Gait's ``StaticPlantFlex``, same sign).
    rotation : float
        rad; the ankle-toe line turned medially (toe-in) of the heel-toe
        line positive (minus Plug-in Gait's ``StaticRotOff``, see
        docs/conventions.md §8).
    side : {"Left", "Right"}

    Returns
    -------
    ndarray, shape (3, 3)
        ``Rz(plantarflexion) @ Ry(-s·rotation)`` in the foot frame (x toward
        the toe, y up, z right; ``s = +1`` right, ``-1`` left).

    Examples
    --------
    >>> import numpy as np
    >>> F = foot_offset_from_angles(0.2, 0.0, "Right")
    >>> round(float(np.arctan2(F[1, 0], F[0, 0])), 6)  # the heel-toe x axis, toe up
    0.2
    """
    side = as_choice(side, "side", ("Left", "Right"))
    plantarflexion = as_finite_float(plantarflexion, "plantarflexion", unit="rad")
    rotation = as_finite_float(rotation, "rotation", unit="rad")
    s = 1.0 if side == "Right" else -1.0
    c, sn = np.cos(plantarflexion), np.sin(plantarflexion)
    Rz = np.array([[c, -sn, 0.0], [sn, c, 0.0], [0.0, 0.0, 1.0]])
    b = -s * rotation
    cb, sb = np.cos(b), np.sin(b)
    Ry = np.array([[cb, 0.0, sb], [0.0, 1.0, 0.0], [-sb, 0.0, cb]])
    return Rz @ Ry


def turn_about_line(point, a, b, angle):
    """`point` rotated by `angle` (rad, right-handed) about the line from `a` to `b`.

    Parameters
    ----------
    point, a, b : array_like, shape (n, 3)
        m; NaN frames give NaN.
    angle : float or array_like, shape (n,)

    Returns
    -------
    ndarray, shape (n, 3)

    Examples
    --------
    >>> import numpy as np
    >>> z = np.zeros((1, 3))
    >>> turn_about_line([[1.0, 0, 0]], z, [[0, 0, 1.0]], np.pi / 2).round(12).tolist()
    [[0.0, 1.0, 0.0]]
    """
    point = np.asarray(point, dtype=float)
    if np.all(np.asarray(angle) == 0):
        return point
    a = np.asarray(a, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = _unit(np.asarray(b, dtype=float) - a)
    v = point - a
    c, sn = np.cos(angle), np.sin(angle)
    c = np.asarray(c)[..., None] if np.ndim(c) else c
    sn = np.asarray(sn)[..., None] if np.ndim(sn) else sn
    along = np.sum(u * v, axis=-1, keepdims=True) * u
    return a + along + c * (v - along) + sn * np.cross(u, v)


def signed_angle_about(u, v, axis):
    """Angle (rad) from `u` to `v` about `axis`, both projected on the plane normal to it.

    Parameters
    ----------
    u, v, axis : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (...)
        In (-pi, pi], right-handed about `axis`.

    Examples
    --------
    >>> round(float(signed_angle_about([1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0])), 6)
    1.570796
    """
    n = _unit(np.asarray(axis, dtype=float))
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    up = u - np.sum(u * n, -1, keepdims=True) * n
    vp = v - np.sum(v * n, -1, keepdims=True) * n
    return np.arctan2(np.sum(np.cross(up, vp) * n, -1), np.sum(up * vp, -1))


def foot_offsets(static_mk, subj: SubjectParameters) -> dict:
    """Constant rotation from the ankle-toe foot frame to the heel-toe one (static trial).

    Parameters
    ----------
    static_mk : dict
        Canonical markers of a static trial ``{name: (n_frames, 3)}``, Z up.
    subj : SubjectParameters

    Returns
    -------
    dict
        ``{"Left": (3, 3), "Right": (3, 3)}`` for the sides with a heel marker.
    """
    offsets = {}
    fr, _ = _frames({k: v for k, v in static_mk.items() if not k.endswith("HEE")}, subj)
    full, _ = _frames(static_mk, subj)
    for side, p in SIDES:
        if p + "HEE" not in static_mk:
            continue
        Ra = fr[f"foot_{side}"][0]
        Rh = full[f"foot_{side}"][0]
        rel = np.swapaxes(Ra, -1, -2) @ Rh
        ok = np.isfinite(rel).all(axis=(1, 2))
        if ok.any():
            offsets[side] = orthonormalize(rel[ok].mean(axis=0))
    return offsets
