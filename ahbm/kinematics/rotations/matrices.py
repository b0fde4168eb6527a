"""Rotation matrices: elementary rotations, skew/vee, orthonormal projection."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, check_trailing_shape

__all__ = [
    "rot_x",
    "rot_y",
    "rot_z",
    "skew",
    "vee",
    "orthonormalize",
]


# --------------------------------------------------------------------------
# elementary rotations, skew
# --------------------------------------------------------------------------
def _axis_rot(axis: int, angle: np.ndarray) -> np.ndarray:
    """Elementary rotation matrices about coordinate axis `axis` (no checks)."""
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros(np.shape(angle) + (3, 3))
    j, k = (axis + 1) % 3, (axis + 2) % 3
    R[..., axis, axis] = 1.0
    R[..., j, j] = c
    R[..., k, k] = c
    R[..., j, k] = -s
    R[..., k, j] = s
    return R


def _elementary(axis: int, angle, degrees: bool, name: str) -> np.ndarray:
    a = as_float_array(angle, name)
    if degrees:
        a = np.deg2rad(a)
    return _axis_rot(axis, a)


def rot_x(angle, *, degrees: bool = False) -> np.ndarray:
    """Rotation matrix about the x axis.

    Parameters
    ----------
    angle : array_like, shape (...)
        Rotation angle, rad (deg if ``degrees=True``).

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
        ``[[1, 0, 0], [0, c, -s], [0, s, c]]``.

    Examples
    --------
    >>> rot_x(np.pi / 2) @ [0.0, 1.0, 0.0]  # y axis turns into z
    array([0.000000e+00, 6.123234e-17, 1.000000e+00])
    """
    return _elementary(0, angle, degrees, "angle")


def rot_y(angle, *, degrees: bool = False) -> np.ndarray:
    """Rotation matrix about the y axis, ``[[c, 0, s], [0, 1, 0], [-s, 0, c]]``.

    Parameters
    ----------
    angle : array_like, shape (...)
        Rotation angle, rad (deg if ``degrees=True``).

    Returns
    -------
    R : ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> np.round(rot_y(90, degrees=True) @ [0.0, 0.0, 1.0], 12)  # z turns into x
    array([1., 0., 0.])
    """
    return _elementary(1, angle, degrees, "angle")


def rot_z(angle, *, degrees: bool = False) -> np.ndarray:
    """Rotation matrix about the z axis, ``[[c, -s, 0], [s, c, 0], [0, 0, 1]]``.

    Parameters
    ----------
    angle : array_like, shape (...)
        Rotation angle, rad (deg if ``degrees=True``).

    Returns
    -------
    R : ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> rot_z([0.0, np.pi]).shape
    (2, 3, 3)
    """
    return _elementary(2, angle, degrees, "angle")


def skew(v) -> np.ndarray:
    """Skew-symmetric cross-product matrix: ``skew(a) @ b == cross(a, b)``.

    Parameters
    ----------
    v : array_like, shape (..., 3)

    Returns
    -------
    S : ndarray, shape (..., 3, 3)
        ``[[0, -z, y], [z, 0, -x], [-y, x, 0]]``.

    Examples
    --------
    >>> skew([1.0, 2.0, 3.0]) @ [0.0, 0.0, 1.0]
    array([ 2., -1.,  0.])
    """
    v = as_float_array(v, "v")
    check_trailing_shape(v, (3,), "v")
    return _skew(v)


def _skew(v: np.ndarray) -> np.ndarray:
    S = np.zeros(v.shape[:-1] + (3, 3))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    S[..., 0, 1] = -z
    S[..., 0, 2] = y
    S[..., 1, 0] = z
    S[..., 1, 2] = -x
    S[..., 2, 0] = -y
    S[..., 2, 1] = x
    return S


def vee(S) -> np.ndarray:
    """Vector of a skew-symmetric matrix (inverse of :func:`skew`).

    The skew-symmetric part ``(S - S^T) / 2`` is used, so a slightly
    non-skew input (e.g. a finite-difference estimate) gives the vector of
    its nearest skew-symmetric matrix.

    Parameters
    ----------
    S : array_like, shape (..., 3, 3)

    Returns
    -------
    v : ndarray, shape (..., 3)

    Examples
    --------
    >>> vee(skew([1.0, 2.0, 3.0]))
    array([1., 2., 3.])
    """
    S = as_float_array(S, "S")
    check_trailing_shape(S, (3, 3), "S")
    return _vee(S)


def _vee(S: np.ndarray) -> np.ndarray:
    return 0.5 * np.stack(
        [
            S[..., 2, 1] - S[..., 1, 2],
            S[..., 0, 2] - S[..., 2, 0],
            S[..., 1, 0] - S[..., 0, 1],
        ],
        axis=-1,
    )


def orthonormalize(R) -> np.ndarray:
    """Nearest rotation matrix (Frobenius norm) to each of `R`, via the SVD.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Approximate rotation matrices, e.g. from noisy measurements.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``U diag(1, 1, det(U V^T)) V^T`` where ``R = U S V^T``: always a proper
        rotation (determinant +1), even if `R` is closer to a reflection.

    Notes
    -----
    The orthogonal Procrustes solution (Söderkvist & Wedin 1993).

    Examples
    --------
    >>> from ahbm.kinematics.rotations import check_rotation_matrix
    >>> Rn = rot_z(0.3) + 1e-3
    >>> check_rotation_matrix(orthonormalize(Rn), tol=1e-12)
    """
    R = as_float_array(R, "R")
    check_trailing_shape(R, (3, 3), "R")
    U, _, Vt = np.linalg.svd(R)
    d = np.sign(np.linalg.det(U @ Vt))
    d = np.where(d == 0, 1.0, d)
    U = U.copy()
    U[..., :, 2] *= d[..., None]
    return U @ Vt
