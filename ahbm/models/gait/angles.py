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

__all__ = ["ANGLE_NAMES", "joint_angles"]

#: Angle variables per side (Plug-in Gait names, without the side prefix).
ANGLE_NAMES = ("HipAngles", "KneeAngles", "AnkleAngles", "PelvisAngles", "FootProgressAngles")


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
        dorsiflexion positive). NaN where a frame is missing.

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
            angles[p + "FootProgressAngles"] = foot_progression_angles(
                Rf, side=side, forward=frames.forward
            )
    return {k: np.asarray(v, dtype=float) for k, v in angles.items()}
