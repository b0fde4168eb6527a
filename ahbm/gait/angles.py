"""Stage 3 of the gait pipeline: clinical joint angles from the segment frames."""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._internal.validation import as_float_array, check_trailing_shape
from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.frames import SegmentFrames
from ahbm.gait.markersets import SIDES
from ahbm.gait.subject import SubjectParameters
from ahbm.kinematics.jcs import foot_progression_angles, grood_suntay_angles, pelvis_angles
from ahbm.kinematics.rotations import matrix_to_euler, rot_x, rot_y, rot_z

__all__ = [
    "ANGLE_NAMES",
    "joint_angles",
    "pig_foot_progression_angles",
    "vicon_ankle_angles",
    "vicon_foot_progress_angles",
]

#: Angle variables per side (Plug-in Gait names, without the side prefix).
ANGLE_NAMES = ("HipAngles", "KneeAngles", "AnkleAngles", "PelvisAngles", "FootProgressAngles")


def pig_foot_progression_angles(R_foot, *, side: str, forward=(1.0, 0.0, 0.0)) -> np.ndarray:
    """Foot progression angles with Plug-in Gait's signs, rad.

    Parameters
    ----------
    R_foot : array_like, shape (..., 3, 3)
        ``lab_R_foot`` (ISB axes: x heel -> toe, y up, z right), Z-up lab.
    side : {"Left", "Right"}
    forward : array_like, shape (3,)
        Horizontal direction of progression.

    Returns
    -------
    ndarray, shape (..., 3)
        (foot tilt, **toes down** positive; foot roll, inversion positive;
        foot progression angle, internal = toe-in positive): the sagittal
        component of :func:`ahbm.kinematics.jcs.foot_progression_angles`
        (toes up positive) with Plug-in Gait's sign, the other two as there.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.jcs import lab_reference_frame
    >>> from ahbm.kinematics.rotations import rot_z
    >>> # right foot pitched 0.2 rad toes down (about its own z, pointing right)
    >>> R = lab_reference_frame() @ rot_z(-0.2)
    >>> (np.round(pig_foot_progression_angles(R, side="Right"), 12) + 0.0).tolist()
    [0.2, 0.0, 0.0]
    """
    return foot_progression_angles(R_foot, side=side, forward=forward) * np.array([-1.0, 1, 1])


#: Plug-in Gait's foot axes (x up, y left, z heel <- toe) in ahbm's foot axes (x heel -> toe,
#: y up, z right), as columns; and its progression frame (forward, left, up) in ahbm's lab
#: reference frame (forward, up, right), which is also its tibia's axes (x forward, y left,
#: z up) in ahbm's shank axes.
_VICON_FOOT = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
_VICON_LAB = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
#: signs of (tilt, rotation about the foot's long axis, obliquity) per side
_VICON_SIGNS = {"Left": np.array([1.0, 1.0, -1.0]), "Right": np.array([1.0, -1.0, 1.0])}


def vicon_foot_progress_angles(angles, *, side: str) -> np.ndarray:
    """ahbm's foot progression angles as Vicon's Plug-in Gait decomposes them, rad.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        ``LFootProgressAngles``/``RFootProgressAngles`` of ahbm
        (:func:`pig_foot_progression_angles`: tilt toes down, inversion,
        progression toe-in positive; heading about the vertical first).
    side : {"Left", "Right"}

    Returns
    -------
    ndarray, shape (..., 3)
        The same foot orientation as Plug-in Gait reports it: its foot axes
        (x up, y left, z from the toe back along the foot) relative to the
        progression frame (forward, left, up) by the Y-X-Z sequence, giving
        (tilt about the lateral axis, the rotation about the foot's long axis
        and the obliquity with its signs per side). The tilt is about -pi/2
        for a flat foot (the first angle measures the foot's long axis from
        the vertical, toes down positive); the third is the foot progression
        angle measured after the tilt, equal to ahbm's while the foot is flat
        and different when it is pitched (swing).

    Notes
    -----
    ahbm keeps its own decomposition in :class:`GaitResult.angles
    <ahbm.gait.GaitResult>` (the heading first, so the progression
    angle is exactly the angle of the foot's horizontal projection);
    :meth:`GaitResult.as_plug_in_gait` and the comparison with a file's
    outputs use this one. The conversion is exact: the three angles fix the
    rotation, which is decomposed again.

    Examples
    --------
    >>> import numpy as np
    >>> flat_toe_out = np.array([0.0, 0.0, -0.2])  # 0.2 rad toe-out, foot flat
    >>> np.round(vicon_foot_progress_angles(flat_toe_out, side="Right"), 6).tolist()
    [-1.570796, 0.0, -0.2]
    """
    # ahbm: ref_R_foot = Ry(heading) Rz(pitch, toes up) Rx(roll), see foot_progression_angles
    return _as_vicon(
        angles,
        side,
        _VICON_SIGNS,
        lambda v, s: (
            _VICON_LAB.T @ rot_y(s * v[:, 2]) @ rot_z(-v[:, 0]) @ rot_x(s * v[:, 1]) @ _VICON_FOOT
        ),
        lambda ay, ax, az: (ay, az, ax),  # tilt, rotation about the long axis, obliquity
    )


def _as_vicon(angles, side, signs, rotation, order) -> np.ndarray:
    """ahbm's angles -> rotation (`rotation(v, s)`) -> Vicon's Y-X-Z angles in its order."""
    key = side.capitalize() if isinstance(side, str) else None
    if key not in signs:
        raise DataError(f"Expected `side` to be 'Left' or 'Right', got {side!r:.40}")
    a = check_trailing_shape(as_float_array(angles, "angles", allow_nan=True), (3,), "angles")
    out = np.full(a.shape, np.nan)
    ok = np.isfinite(a).all(axis=-1)
    if not ok.any():
        return out
    R = rotation(a[ok], 1.0 if key == "Right" else -1.0)
    ay, ax, az = np.moveaxis(matrix_to_euler(R, "YXZ"), -1, 0)
    out[ok] = np.stack(order(ay, ax, az), axis=-1) * signs[key]
    return out


#: signs of (flexion + pi/2, rotation about the foot's long axis, rotation about its up axis)
_VICON_ANKLE_SIGNS = {"Left": np.array([-1.0, -1.0, -1.0]), "Right": np.array([-1.0, 1.0, 1.0])}


def vicon_ankle_angles(angles, *, side: str) -> np.ndarray:
    """ahbm's ankle angles as Vicon's Plug-in Gait decomposes them, rad.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        ``LAnkleAngles``/``RAnkleAngles`` of ahbm (Grood-Suntay JCS,
        :func:`ahbm.kinematics.jcs.grood_suntay_angles`: dorsiflexion,
        inversion, internal rotation positive).
    side : {"Left", "Right"}

    Returns
    -------
    ndarray, shape (..., 3)
        The same shank-to-foot rotation as Plug-in Gait reports it: the
        Y-X-Z angles of its foot axes (x up, y left, z from the toe back)
        in its tibia axes (x forward, y left, z up), flexion shifted by
        pi/2, with its signs per side. Dorsiflexion and rotation agree with
        ahbm's to second order; the second angle is about the foot's long
        axis and has the **opposite sign** of ahbm's inversion (an inverted
        foot gives a negative value).

    Notes
    -----
    The conversion is exact (the three angles fix the rotation, which is
    decomposed again). :meth:`GaitResult.as_plug_in_gait
    <ahbm.gait.GaitResult.as_plug_in_gait>` and the comparison with a
    file's outputs use it; on a Vicon Nexus file with stored static foot
    offsets it reproduces Vicon's ankle curves to 0.04-0.15 deg RMS.

    Examples
    --------
    >>> import numpy as np
    >>> inverted = np.array([0.0, 0.1, 0.0])  # 0.1 rad inversion, nothing else
    >>> (np.round(vicon_ankle_angles(inverted, side="Right"), 6) + 0.0).tolist()
    [0.0, -0.1, 0.0]
    """
    # Grood-Suntay = Cardan ZXY of shank^T foot (ISB axes), with the clinical signs; then
    # Plug-in Gait's tibia and foot axes
    return _as_vicon(
        angles,
        side,
        _VICON_ANKLE_SIGNS,
        lambda v, s: (
            _VICON_LAB.T @ rot_z(v[:, 0]) @ rot_x(s * v[:, 1]) @ rot_y(s * v[:, 2]) @ _VICON_FOOT
        ),
        lambda ay, ax, az: (ay + np.pi / 2, az, ax),
    )


def joint_angles(frames: SegmentFrames, subject: SubjectParameters) -> dict:
    """Grood-Suntay joint angles, pelvis and foot progression angles, rad, clinical signs.

    Parameters
    ----------
    frames : SegmentFrames
        Output of :func:`~ahbm.gait.segment_frames`.
    subject : SubjectParameters
        Its ``tibial_torsion`` rotates the shank frame used for the knee.

    Returns
    -------
    dict
        ``"LHipAngles"`` ... ``"RFootProgressAngles"`` -> (n_frames, 3), rad:
        (sagittal, frontal, transverse) components with Plug-in Gait's
        clinical signs (flexion, adduction, internal rotation positive; ankle
        dorsiflexion positive; foot progression: toes down, inversion,
        toe-in positive, :func:`pig_foot_progression_angles`). NaN where a
        frame is missing.

    Notes
    -----
    Hip: pelvis -> thigh, knee: thigh -> shank (rotated by the tibial
    torsion), ankle: shank -> foot, in the joint coordinate system of Grood
    & Suntay (1983) (:func:`ahbm.kinematics.jcs.grood_suntay_angles`); pelvis
    and foot progression angles relative to the direction of progression.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.gait import SegmentFrames, SubjectParameters
    >>> R = np.broadcast_to(np.eye(3), (4, 3, 3))
    >>> names = ["pelvis"] + [f"{s}_{side}" for side in ("Left", "Right")
    ...                       for s in ("thigh", "shank", "foot")]
    >>> fr = SegmentFrames({n: R for n in names}, {}, {}, np.array([1.0, 0, 0]))
    >>> subj = SubjectParameters(70.0, 1.75, {}, {}, {}, 0.25)
    >>> a = joint_angles(fr, subj)
    >>> a["LKneeAngles"].shape, float(abs(a["LKneeAngles"]).max())
    ((4, 3), 0.0)
    """
    rot = frames.rotation
    Rp = rot["pelvis"]
    angles = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        for side, p in SIDES:
            Rt, Rs, Rf = (rot[f"{s}_{side}"] for s in ("thigh", "shank", "foot"))
            tors = subject.tibial_torsion.get(side, 0.0) * (1.0 if side == "Right" else -1.0)
            Rk = Rs @ rot_y(tors)
            angles[p + "HipAngles"] = grood_suntay_angles(Rp, Rt, side=side, joint="hip")
            angles[p + "KneeAngles"] = grood_suntay_angles(Rt, Rk, side=side, joint="knee")
            angles[p + "AnkleAngles"] = grood_suntay_angles(Rs, Rf, side=side, joint="ankle")
            angles[p + "PelvisAngles"] = pelvis_angles(Rp, side=side, forward=frames.forward)
            angles[p + "FootProgressAngles"] = pig_foot_progression_angles(
                Rf, side=side, forward=frames.forward
            )
    return {k: np.asarray(v, dtype=float) for k, v in angles.items()}
