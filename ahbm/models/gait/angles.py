"""Stage 3 of the gait pipeline: clinical joint angles from the segment frames."""

from __future__ import annotations

import warnings

import numpy as np

from ahbm.errors import AhbmWarning
from ahbm.kinematics.jcs import foot_progression_angles, grood_suntay_angles, pelvis_angles
from ahbm.kinematics.rotations import rot_y
from ahbm.models.gait.frames import SegmentFrames
from ahbm.models.gait.markersets import SIDES
from ahbm.models.gait.subject import SubjectParameters

__all__ = ["ANGLE_NAMES", "joint_angles", "pig_foot_progression_angles"]

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


def joint_angles(frames: SegmentFrames, subject: SubjectParameters) -> dict:
    """Grood-Suntay joint angles, pelvis and foot progression angles, rad, clinical signs.

    Parameters
    ----------
    frames : SegmentFrames
        Output of :func:`~ahbm.models.gait.segment_frames`.
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
    >>> from ahbm.models.gait import SegmentFrames, SubjectParameters
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
