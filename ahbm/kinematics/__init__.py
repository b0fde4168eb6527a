"""Kinematics: rotations (matrices, Euler/Cardan angles, quaternions, angular-velocity maps),
homogeneous transforms, segment pose from markers, the multibody tree `Model`,
forward kinematics, joint coordinate systems and inverse kinematics.
"""

from ahbm.kinematics import rotations
from ahbm.kinematics.configuration import (
    difference_q,
    integrate_q,
    neutral_q,
    random_model,
    random_q,
)
from ahbm.kinematics.forward import (
    Kinematics,
    body_jacobian,
    center_of_mass,
    com_jacobian,
    com_velocity,
    forward_kinematics,
    jacobian_dot_times_qd,
    kinetic_energy,
    momentum,
    point_acceleration,
    point_jacobian,
    point_position,
    point_velocity,
    potential_energy,
)
from ahbm.kinematics.ik import (
    IKResult,
    ModelMarkers,
    fit_markers,
    joint_bounds,
    marker_jacobians,
    model_markers,
)
from ahbm.kinematics.jcs import (
    ScoreResult,
    SphereFit,
    cardan_angles,
    chord_joint_centre,
    foot_progression_angles,
    grood_suntay_angles,
    hip_joint_centre_davis,
    hip_joint_centre_harrington,
    jcs_axes,
    lab_reference_frame,
    pelvis_angles,
    score_centre,
    sphere_fit_centre,
)
from ahbm.kinematics.joints import Body, Joint
from ahbm.kinematics.markers import (
    SegmentPose,
    apply_transform,
    fit_segment_pose,
    frame_from_landmarks,
    invert_transform,
    local_coordinates,
    make_transform,
    static_local_markers,
    transform_to_pose,
)
from ahbm.kinematics.model_file import load_model, register_model_section, save_model
from ahbm.kinematics.rotations import *  # noqa: F403  (explicit __all__ in rotations)
from ahbm.kinematics.rotations import __all__ as _rotations_all
from ahbm.kinematics.tree import Model

__all__: list[str] = [
    "rotations",
    *_rotations_all,
    # multibody trees (tree.py, joints.py, model_file.py, configuration.py, forward.py)
    "Body",
    "Joint",
    "Kinematics",
    "Model",
    "body_jacobian",
    "center_of_mass",
    "com_jacobian",
    "com_velocity",
    "difference_q",
    "forward_kinematics",
    "integrate_q",
    "jacobian_dot_times_qd",
    "kinetic_energy",
    "load_model",
    "momentum",
    "neutral_q",
    "point_acceleration",
    "point_jacobian",
    "point_position",
    "point_velocity",
    "potential_energy",
    "random_model",
    "random_q",
    "register_model_section",
    "save_model",
    # segment pose from markers, anatomical frames, transforms (markers.py)
    "SegmentPose",
    "apply_transform",
    "fit_segment_pose",
    "frame_from_landmarks",
    "invert_transform",
    "local_coordinates",
    "make_transform",
    "static_local_markers",
    "transform_to_pose",
    # joint angles and joint centres (jcs.py)
    "ScoreResult",
    "SphereFit",
    "cardan_angles",
    "chord_joint_centre",
    "foot_progression_angles",
    "grood_suntay_angles",
    "hip_joint_centre_davis",
    "hip_joint_centre_harrington",
    "jcs_axes",
    "lab_reference_frame",
    "pelvis_angles",
    "score_centre",
    "sphere_fit_centre",
    # inverse kinematics (ik.py)
    "IKResult",
    "ModelMarkers",
    "fit_markers",
    "joint_bounds",
    "marker_jacobians",
    "model_markers",
]
