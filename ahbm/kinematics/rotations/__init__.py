"""Rotations: matrices, Euler/Cardan angles, Euler parameters, angular velocity.

Conventions (see docs/design.md):

- ``R = A_R_B`` holds the axes of frame B expressed in frame A, so
  ``v_A = R @ v_B``.
- Euler/Cardan sequences are three-letter strings as in scipy: uppercase
  (``"ZXZ"``) is intrinsic, ``R = R1(a) @ R2(b) @ R3(c)`` (rotations about the
  moving axes); lowercase (``"zxz"``) is extrinsic, ``R = R3(c) @ R2(b) @ R1(a)``
  (rotations about the fixed axes, applied in the order written). All 12
  sequences in both forms are supported.
- Quaternions (Euler parameters, AHBM eq. 2.8) are scalar-last
  ``(x, y, z, w) = (e1, e2, e3, e4)``; ``scalar_first=True`` where accepted
  switches to ``(w, x, y, z)``.
- Angles in radians; ``degrees=True`` (keyword-only) where angles are accepted.
- Every function accepts leading batch axes: output shape = batch shape +
  representation shape.

References
----------
Stuhmiller & Shen (2000), *Articulated Human Biomechanical Modeling Toolbox*,
chapter 2 (the AHBM report). Shepperd (1978), "Quaternion from rotation matrix",
J. Guidance and Control 1(3). Shoemake (1985), "Animating rotation with
quaternion curves", SIGGRAPH.

The package is split by topic: :mod:`~ahbm.kinematics.rotations.matrices`
(elementary rotations, skew, orthonormalization),
:mod:`~ahbm.kinematics.rotations.quaternions` (Euler parameters, rotation
vectors, axis-angle, slerp), :mod:`~ahbm.kinematics.rotations.euler`
(Euler/Cardan angles) and :mod:`~ahbm.kinematics.rotations.rates` (angular-
velocity maps, their derivatives, derivatives of R, angular velocity and
acceleration of time series). Every public name is exported here.
"""

from ahbm.kinematics.rotations._base import (
    GIMBAL_TOL,  # noqa: F401  (module constants, not in __all__)
    ORTHONORMAL_TOL,  # noqa: F401
    check_rotation_matrix,
)
from ahbm.kinematics.rotations.euler import (
    euler_to_matrix,
    euler_to_quat,
    gimbal_lock_mask,
    matrix_to_euler,
    quat_to_euler,
    unwrap_euler,
)
from ahbm.kinematics.rotations.matrices import (
    orthonormalize,
    rot_x,
    rot_y,
    rot_z,
    skew,
    vee,
)
from ahbm.kinematics.rotations.quaternions import (
    axis_angle_to_matrix,
    matrix_to_axis_angle,
    matrix_to_quat,
    matrix_to_rotvec,
    quat_conjugate,
    quat_multiply,
    quat_normalize,
    quat_rotate,
    quat_to_matrix,
    quat_to_rotvec,
    rotvec_to_matrix,
    rotvec_to_quat,
    slerp,
)
from ahbm.kinematics.rotations.rates import (
    angular_acceleration,
    angular_velocity,
    d2matrix_deuler,
    d2matrix_dquat,
    deuler_rate_matrix_deuler,
    deuler_rate_matrix_inv_deuler,
    dmatrix_deuler,
    dmatrix_dquat,
    dquat_rate_matrix_dquat,
    euler_rate_matrix,
    euler_rate_matrix_inv,
    euler_rates_to_omega,
    omega_to_euler_rates,
    omega_to_quat_rates,
    quat_rate_matrix,
    quat_rates_to_omega,
)

__all__ = [
    "rot_x",
    "rot_y",
    "rot_z",
    "skew",
    "vee",
    "euler_to_matrix",
    "matrix_to_euler",
    "gimbal_lock_mask",
    "quat_to_matrix",
    "matrix_to_quat",
    "euler_to_quat",
    "quat_to_euler",
    "axis_angle_to_matrix",
    "matrix_to_axis_angle",
    "rotvec_to_matrix",
    "matrix_to_rotvec",
    "quat_to_rotvec",
    "rotvec_to_quat",
    "quat_multiply",
    "quat_conjugate",
    "quat_normalize",
    "quat_rotate",
    "slerp",
    "orthonormalize",
    "check_rotation_matrix",
    "euler_rate_matrix",
    "euler_rate_matrix_inv",
    "euler_rates_to_omega",
    "omega_to_euler_rates",
    "deuler_rate_matrix_deuler",
    "deuler_rate_matrix_inv_deuler",
    "quat_rate_matrix",
    "dquat_rate_matrix_dquat",
    "quat_rates_to_omega",
    "omega_to_quat_rates",
    "dmatrix_deuler",
    "d2matrix_deuler",
    "dmatrix_dquat",
    "d2matrix_dquat",
    "angular_velocity",
    "angular_acceleration",
    "unwrap_euler",
]
