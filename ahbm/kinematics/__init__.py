"""Kinematics: homogeneous transforms, segment pose from markers, the multibody
tree `Model`, forward kinematics, joint coordinate systems and inverse kinematics.

The rotations (matrices, Euler/Cardan angles, quaternions, angular-velocity
maps) are the package :mod:`ahbm.kinematics.rotations`; they are not
re-exported here.

Every public name is loaded on first use from the module that defines it
(:mod:`ahbm._internal.lazy`): importing this package imports none of them.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "functions",
        "joints",
        "tree",
        "model_dict",
        "model_file",
        "configuration",
        "forward",
        "markers",
        "jcs",
        "joint_centres",
        "ssv",
        "geometry",
        "contact",
        "dh",
        "marker_model",
        "ik",
    ],
)
