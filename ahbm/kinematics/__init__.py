"""Kinematics: rotations (matrices, Euler/Cardan angles, quaternions, angular-velocity maps),
homogeneous transforms, segment pose from markers, the multibody tree `Model`,
forward kinematics, joint coordinate systems and inverse kinematics.
"""

from ahbm.kinematics import rotations
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
from ahbm.kinematics.rotations import *  # noqa: F403  (explicit __all__ in rotations)
from ahbm.kinematics.rotations import __all__ as _rotations_all
from ahbm.kinematics.tree import (
    Joint,
    Model,
    difference_q,
    integrate_q,
    load_model,
    neutral_q,
    random_model,
    random_q,
    save_model,
)

__all__: list[str] = [
    "rotations",
    *_rotations_all,
    # multibody trees (tree.py, forward.py)
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
]
