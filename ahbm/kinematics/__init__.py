"""Kinematics: rotations (matrices, Euler/Cardan angles, quaternions, angular-velocity maps),
homogeneous transforms, segment pose from markers, the multibody tree `Model`,
forward kinematics, joint coordinate systems and inverse kinematics.
"""

from ahbm.kinematics import rotations
from ahbm.kinematics.rotations import *  # noqa: F403  (explicit __all__ in rotations)
from ahbm.kinematics.rotations import __all__ as _rotations_all

__all__: list[str] = ["rotations", *_rotations_all]
