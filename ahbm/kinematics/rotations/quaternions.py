"""Euler parameters (unit quaternions, scalar-last), rotation vectors, axis-angle, slerp."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics.rotations._base import (
    _EYE,
    _chunked,
    _first_bad,
    _matrix,
    _out_quat,
    _quat,
)
from ahbm.kinematics.rotations.matrices import _skew

__all__ = [
    "quat_to_matrix",
    "matrix_to_quat",
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
]


# --------------------------------------------------------------------------
# quaternions
# --------------------------------------------------------------------------
def _qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    px, py, pz, pw = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    qx, qy, qz, qw = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack(
        [
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
            pw * qw - px * qx - py * qy - pz * qz,
        ],
        axis=-1,
    )


def _normalize_quat(q: np.ndarray, name: str) -> np.ndarray:
    n = np.sqrt(np.einsum("...i,...i->...", q, q))
    if np.any(n < 1e-12):
        where = _first_bad(np.atleast_1d(n < 1e-12))
        raise DataError(
            f"`{name}` has (near) zero norm at batch index {where}; a quaternion must be "
            "non-zero to represent a rotation"
        )
    return q / n[..., None]


def quat_normalize(q, *, scalar_first: bool = False) -> np.ndarray:
    """Scale quaternions to unit norm.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Quaternions, scalar-last unless ``scalar_first=True``.

    Returns
    -------
    ndarray, shape (..., 4)
        Unit quaternions in the same component order.

    Raises
    ------
    DataError
        If a quaternion has zero norm.

    Examples
    --------
    >>> quat_normalize([0.0, 0.0, 0.0, 2.0])
    array([0., 0., 0., 1.])
    """
    q = _quat(q, scalar_first=scalar_first)
    return _out_quat(_normalize_quat(q, "q"), scalar_first)


def quat_conjugate(q, *, scalar_first: bool = False) -> np.ndarray:
    """Conjugate ``(-x, -y, -z, w)``; the inverse rotation for unit quaternions.

    Parameters
    ----------
    q : array_like, shape (..., 4)

    Returns
    -------
    ndarray, shape (..., 4)

    Examples
    --------
    >>> quat_conjugate([0.1, 0.2, 0.3, 0.9])
    array([-0.1, -0.2, -0.3,  0.9])
    """
    q = _quat(q, scalar_first=scalar_first)
    out = q.copy()
    out[..., :3] *= -1.0
    return _out_quat(out, scalar_first)


def quat_multiply(p, q, *, scalar_first: bool = False) -> np.ndarray:
    """Hamilton product ``p ⊗ q``.

    With ``R(p)`` the matrix of `p`, ``R(p ⊗ q) = R(p) @ R(q)``: the product
    composes rotations the same way matrices do.

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Quaternions (broadcast against each other).

    Returns
    -------
    ndarray, shape (..., 4)

    Examples
    --------
    >>> from ahbm.kinematics.rotations import euler_to_quat, rot_z
    >>> qz = euler_to_quat([0.0, 0.0, np.pi / 2], "XYZ")
    >>> np.allclose(quat_to_matrix(quat_multiply(qz, qz)), rot_z(np.pi))
    True
    """
    p = _quat(p, "p", scalar_first=scalar_first)
    q = _quat(q, "q", scalar_first=scalar_first)
    return _out_quat(_qmul(p, q), scalar_first)


def quat_rotate(q, v, *, scalar_first: bool = False) -> np.ndarray:
    """Rotate vectors by quaternions: ``R(q) @ v``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
    v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3)

    Examples
    --------
    >>> from ahbm.kinematics.rotations import euler_to_quat
    >>> np.round(quat_rotate(euler_to_quat([0, 0, 90], "XYZ", degrees=True), [1.0, 0, 0]), 12)
    array([0., 1., 0.])
    """
    q = _normalize_quat(_quat(q, scalar_first=scalar_first), "q")
    v = as_float_array(v, "v")
    check_trailing_shape(v, (3,), "v")
    u, w = q[..., :3], q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _quat_to_matrix_kernel(q: np.ndarray, normalize: bool) -> np.ndarray:
    x, y, z, w = np.moveaxis(q, -1, 0)
    if normalize:
        sc = 2.0 / (x * x + y * y + z * z + w * w)
    else:
        sc = 2.0
    xs, ys, zs = x * sc, y * sc, z * sc
    xx, yy, zz = x * xs, y * ys, z * zs
    xy, xz, yz = x * ys, x * zs, y * zs
    wx, wy, wz = w * xs, w * ys, w * zs
    R = np.empty(q.shape[:-1] + (9,))
    R[..., 0] = 1.0 - (yy + zz)
    R[..., 1] = xy - wz
    R[..., 2] = xz + wy
    R[..., 3] = xy + wz
    R[..., 4] = 1.0 - (xx + zz)
    R[..., 5] = yz - wx
    R[..., 6] = xz - wy
    R[..., 7] = yz + wx
    R[..., 8] = 1.0 - (xx + yy)
    return R.reshape(q.shape[:-1] + (3, 3))


def _quat_to_matrix_raw(q: np.ndarray, normalize: bool = False) -> np.ndarray:
    """AHBM eq. 2.9; as written if not `normalize`, else for q / |q|."""
    return _chunked(lambda c: _quat_to_matrix_kernel(c, normalize), q, 1, ((3, 3),))[0]


def quat_to_matrix(q, *, scalar_first: bool = False, normalize: bool = True) -> np.ndarray:
    """Rotation matrix of quaternions (Euler parameters), AHBM eq. 2.9.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Quaternions ``(x, y, z, w)`` (or ``(w, x, y, z)`` with
        ``scalar_first=True``).
    normalize : bool, optional
        Normalize first (default). With False, eq. 2.9 is evaluated as
        written, which is what :func:`dmatrix_dquat` differentiates; the
        result is a rotation only for unit quaternions.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)

    Raises
    ------
    DataError
        Wrong shape, non-finite values, or zero norm.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> np.allclose(quat_to_matrix([0, 0, np.sin(0.2), np.cos(0.2)]), rot_z(0.4))
    True
    """
    q = _quat(q, scalar_first=scalar_first)
    if normalize:
        n2 = np.einsum("...i,...i->...", q, q)
        if np.any(n2 < 1e-24):
            _normalize_quat(q, "q")  # raises with the index of the zero quaternion
    return _quat_to_matrix_raw(q, normalize)


def _matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Shepperd's method, vectorized: pick the largest of 4w², 4x², 4y², 4z²."""
    return _chunked(_matrix_to_quat_kernel, R, 2, ((4,),))[0]


def _matrix_to_quat_kernel(R: np.ndarray) -> np.ndarray:
    r00, r11, r22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    tr = r00 + r11 + r22
    d21 = R[..., 2, 1] - R[..., 1, 2]
    d02 = R[..., 0, 2] - R[..., 2, 0]
    d10 = R[..., 1, 0] - R[..., 0, 1]
    s21 = R[..., 2, 1] + R[..., 1, 2]
    s02 = R[..., 0, 2] + R[..., 2, 0]
    s10 = R[..., 1, 0] + R[..., 0, 1]
    choice = np.argmax(np.stack([r00, r11, r22, tr], axis=-1), axis=-1)
    q = np.empty(R.shape[:-2] + (4,))
    # case w largest
    m = choice == 3
    q[m] = np.stack([d21[m], d02[m], d10[m], 1.0 + tr[m]], axis=-1)
    m = choice == 0
    q[m] = np.stack([1.0 + 2.0 * r00[m] - tr[m], s10[m], s02[m], d21[m]], axis=-1)
    m = choice == 1
    q[m] = np.stack([s10[m], 1.0 + 2.0 * r11[m] - tr[m], s21[m], d02[m]], axis=-1)
    m = choice == 2
    q[m] = np.stack([s02[m], s21[m], 1.0 + 2.0 * r22[m] - tr[m], d10[m]], axis=-1)
    q /= np.sqrt(np.einsum("...i,...i->...", q, q))[..., None]
    # canonical sign: w >= 0 (and for w == 0, first non-zero component > 0)
    flip = q[..., 3] < 0
    q[flip] *= -1.0
    return q


def matrix_to_quat(R, *, scalar_first: bool = False) -> np.ndarray:
    """Unit quaternion of rotation matrices (Shepperd's method, AHBM eq. 2.10).

    Robust for every rotation, 180° rotations included: the component of
    largest magnitude is computed from the diagonal and the others from
    off-diagonal sums/differences, so no division by a small number occurs.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices (orthonormal within 1e-6).

    Returns
    -------
    q : ndarray, shape (..., 4)
        Unit quaternions with ``w >= 0`` (``q`` and ``-q`` are the same
        rotation; this picks one).

    Raises
    ------
    DataError
        Wrong shape, non-finite values, not a rotation matrix.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_x
    >>> np.round(matrix_to_quat(rot_x(np.pi)), 12)
    array([1., 0., 0., 0.])
    """
    R = _matrix(R)
    return _out_quat(_matrix_to_quat(R), scalar_first)


# --------------------------------------------------------------------------
# axis-angle and rotation vectors
# --------------------------------------------------------------------------
def _rotvec_to_matrix(v: np.ndarray) -> np.ndarray:
    theta2 = np.einsum("...i,...i->...", v, v)
    theta = np.sqrt(theta2)
    small = theta < 1e-4
    th = np.where(small, 1.0, theta)
    # A = sin(t)/t, B = (1 - cos(t))/t^2, with Taylor series for small t
    A = np.where(small, 1.0 - theta2 / 6.0 + theta2**2 / 120.0, np.sin(th) / th)
    B = np.where(small, 0.5 - theta2 / 24.0 + theta2**2 / 720.0, (1.0 - np.cos(th)) / th**2)
    K = _skew(v)
    R = np.broadcast_to(_EYE, K.shape) + A[..., None, None] * K + B[..., None, None] * (K @ K)
    return R


def rotvec_to_matrix(rotvec) -> np.ndarray:
    """Rotation matrix of rotation vectors (Rodrigues' formula).

    Parameters
    ----------
    rotvec : array_like, shape (..., 3)
        Axis times angle, rad.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)

    Notes
    -----
    ``R = I + sin(t)/t K + (1 - cos t)/t^2 K^2`` with ``K = skew(rotvec)``,
    ``t = |rotvec|``; series expansions are used for ``t < 1e-4``.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> np.allclose(rotvec_to_matrix([0, 0, 0.5]), rot_z(0.5))
    True
    """
    v = as_float_array(rotvec, "rotvec")
    check_trailing_shape(v, (3,), "rotvec")
    return _rotvec_to_matrix(v)


def _quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    q = np.where(q[..., 3:4] < 0, -q, q)  # angle in [0, pi]
    s = np.sqrt(np.einsum("...i,...i->...", q[..., :3], q[..., :3]))
    angle = 2.0 * np.arctan2(s, q[..., 3])
    small = s < 1e-8
    scale = np.where(small, 2.0 / np.where(small, q[..., 3], 1.0), angle / np.where(small, 1, s))
    return q[..., :3] * scale[..., None]


def quat_to_rotvec(q, *, scalar_first: bool = False) -> np.ndarray:
    """Rotation vector (axis times angle in [0, π]) of quaternions.

    Parameters
    ----------
    q : array_like, shape (..., 4)

    Returns
    -------
    rotvec : ndarray, shape (..., 3)

    Examples
    --------
    >>> np.round(quat_to_rotvec([0, 0, np.sin(0.25), np.cos(0.25)]), 12)
    array([0. , 0. , 0.5])
    """
    q = _normalize_quat(_quat(q, scalar_first=scalar_first), "q")
    return _quat_to_rotvec(q)


def rotvec_to_quat(rotvec, *, scalar_first: bool = False) -> np.ndarray:
    """Unit quaternion of rotation vectors.

    Parameters
    ----------
    rotvec : array_like, shape (..., 3)

    Returns
    -------
    q : ndarray, shape (..., 4)

    Examples
    --------
    >>> np.round(rotvec_to_quat([np.pi, 0, 0]), 12)
    array([1., 0., 0., 0.])
    """
    v = as_float_array(rotvec, "rotvec")
    check_trailing_shape(v, (3,), "rotvec")
    t2 = np.einsum("...i,...i->...", v, v)
    t = np.sqrt(t2)
    small = t < 1e-4
    half_sinc = np.where(
        small,
        0.5 - t2 / 48.0 + t2**2 / 3840.0,
        np.sin(0.5 * t) / np.where(small, 1.0, t),
    )
    q = np.concatenate([v * half_sinc[..., None], np.cos(0.5 * t)[..., None]], axis=-1)
    return _out_quat(q, scalar_first)


def matrix_to_rotvec(R) -> np.ndarray:
    """Rotation vector (axis times angle in [0, π]) of rotation matrices.

    Robust at 0 and at 180°: computed through :func:`matrix_to_quat`.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    rotvec : ndarray, shape (..., 3)

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_y
    >>> np.round(matrix_to_rotvec(rot_y(-0.7)), 12)
    array([ 0. , -0.7,  0. ])
    """
    R = _matrix(R)
    return _quat_to_rotvec(_matrix_to_quat(R))


def axis_angle_to_matrix(axis, angle, *, degrees: bool = False) -> np.ndarray:
    """Rotation matrix of a rotation by `angle` about `axis`.

    Parameters
    ----------
    axis : array_like, shape (..., 3)
        Rotation axes (normalized here; must be non-zero).
    angle : array_like, shape (...)
        Angles, rad (deg if ``degrees=True``); broadcast against `axis`.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> np.allclose(axis_angle_to_matrix([0, 0, 2.0], 0.3), rot_z(0.3))
    True
    """
    ax = as_float_array(axis, "axis")
    check_trailing_shape(ax, (3,), "axis")
    n = np.linalg.norm(ax, axis=-1)
    if np.any(n < 1e-12):
        raise DataError(
            f"`axis` has zero length at batch index {_first_bad(np.atleast_1d(n < 1e-12))}; "
            "give a non-zero rotation axis"
        )
    ang = as_float_array(angle, "angle")
    if degrees:
        ang = np.deg2rad(ang)
    try:
        v = ax / n[..., None] * ang[..., None]
    except ValueError as err:
        raise DataError(
            f"`axis` shape {ax.shape} and `angle` shape {ang.shape} do not broadcast: {err}"
        ) from err
    return _rotvec_to_matrix(v)


def matrix_to_axis_angle(R, *, degrees: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Unit axis and angle in [0, π] of rotation matrices.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    axis : ndarray, shape (..., 3)
        Unit rotation axis; ``(1, 0, 0)`` for the identity, where any axis
        is valid.
    angle : ndarray, shape (...)
        Rotation angle in [0, π], rad (deg if ``degrees=True``).

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> axis, angle = matrix_to_axis_angle(rot_z(-0.4))
    >>> np.round(axis, 12), np.round(angle, 12)
    (array([ 0.,  0., -1.]), np.float64(0.4))
    """
    R = _matrix(R)
    q = _matrix_to_quat(R)  # w >= 0
    s = np.linalg.norm(q[..., :3], axis=-1)
    angle = 2.0 * np.arctan2(s, q[..., 3])
    small = s < 1e-15
    axis = np.where(
        small[..., None],
        np.array([1.0, 0.0, 0.0]),
        q[..., :3] / np.where(small, 1.0, s)[..., None],
    )
    return axis, (np.rad2deg(angle) if degrees else angle)


# --------------------------------------------------------------------------
# interpolation and projection
# --------------------------------------------------------------------------
def slerp(q0, q1, t, *, scalar_first: bool = False) -> np.ndarray:
    """Spherical linear interpolation between unit quaternions (shortest arc).

    Parameters
    ----------
    q0, q1 : array_like, shape (..., 4)
        Start and end orientations (normalized here).
    t : array_like, shape (...)
        Interpolation parameter; 0 gives `q0`, 1 gives `q1` (or ``-q1``,
        the same rotation). Broadcast against the batch shape of `q0`, `q1`.

    Returns
    -------
    q : ndarray, shape (..., 4)
        Unit quaternions; the rotation angle grows linearly in `t`.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import euler_to_quat
    >>> q1 = euler_to_quat([0, 0, 1.0], "XYZ")
    >>> np.allclose(slerp([0, 0, 0, 1.0], q1, 0.5), euler_to_quat([0, 0, 0.5], "XYZ"))
    True
    """
    p = _normalize_quat(_quat(q0, "q0", scalar_first=scalar_first), "q0")
    q = _normalize_quat(_quat(q1, "q1", scalar_first=scalar_first), "q1")
    t = as_float_array(t, "t")[..., None]
    d = np.einsum("...i,...i->...", p, q)[..., None]
    q = np.where(d < 0, -q, q)
    d = np.abs(d)
    omega = np.arccos(np.clip(d, -1.0, 1.0))
    so = np.sin(omega)
    near = so < 1e-9
    so_safe = np.where(near, 1.0, so)
    w0 = np.where(near, 1.0 - t, np.sin((1.0 - t) * omega) / so_safe)
    w1 = np.where(near, t, np.sin(t * omega) / so_safe)
    out = w0 * p + w1 * q
    out = out / np.linalg.norm(out, axis=-1, keepdims=True)
    return _out_quat(out, scalar_first)
