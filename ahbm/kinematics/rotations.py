"""Rotations: matrices, Euler/Cardan angles, Euler parameters, angular velocity.

Conventions (see DESIGN.md):

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
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._validation import as_float_array, check_trailing_shape
from ahbm.errors import AhbmWarning, DataError

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

_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}
_EYE = np.eye(3)

#: Tolerance on ``max |R^T R - I|`` accepted for a rotation matrix given by a user.
ORTHONORMAL_TOL = 1e-6

#: A frame is flagged as gimbal lock when the cosine (Cardan) or sine (proper
#: Euler) of the middle angle is below this value (about 1e-7 rad from the
#: singular configuration).
GIMBAL_TOL = 1e-7

# Below this the first angle is set to zero: the split between first and third
# angle is then numerically meaningless (the report's choice, AHBM eq. 2.7).
_GIMBAL_ZERO = 1e-14


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _parse_seq(seq) -> tuple[tuple[int, int, int], bool]:
    """Return ((i, j, k), intrinsic) for a sequence string, or raise DataError."""
    if not isinstance(seq, str) or len(seq) != 3:
        raise DataError(
            f"Expected `seq` to be a 3-letter axis sequence such as 'ZXZ' or 'xyz', got {seq!r}"
        )
    if seq.isupper():
        intrinsic = True
    elif seq.islower():
        intrinsic = False
    else:
        raise DataError(
            f"`seq` {seq!r} mixes upper and lower case: use uppercase for intrinsic "
            "(moving axes) or lowercase for extrinsic (fixed axes)"
        )
    try:
        axes = tuple(_AXIS_INDEX[ch] for ch in seq.lower())
    except KeyError:
        raise DataError(f"`seq` {seq!r} may only contain the letters x, y, z") from None
    if axes[0] == axes[1] or axes[1] == axes[2]:
        raise DataError(
            f"`seq` {seq!r} repeats an axis in consecutive positions; valid sequences are "
            "the 6 Cardan (e.g. 'XYZ') and 6 proper Euler (e.g. 'ZXZ') sequences"
        )
    return axes, intrinsic  # type: ignore[return-value]


def _intrinsic_form(seq: str) -> tuple[tuple[int, int, int], bool]:
    """Axes of the equivalent intrinsic sequence and whether angles are reversed.

    The extrinsic sequence 'xyz' with angles (a, b, c) is the intrinsic
    sequence 'ZYX' with angles (c, b, a).
    """
    axes, intrinsic = _parse_seq(seq)
    if intrinsic:
        return axes, False
    return (axes[2], axes[1], axes[0]), True


def _parity(i: int, j: int) -> tuple[int, float]:
    """Third axis l and the parity e = +1 if (i, j, l) is cyclic else -1."""
    l = 3 - i - j
    e = 1.0 if (j - i) % 3 == 1 else -1.0
    return l, e


def _angles(angles, name: str, degrees: bool) -> np.ndarray:
    a = as_float_array(angles, name)
    check_trailing_shape(a, (3,), name)
    return np.deg2rad(a) if degrees else a


def _matrix(R, name: str = "R", *, check: bool = True) -> np.ndarray:
    R = as_float_array(R, name)
    check_trailing_shape(R, (3, 3), name)
    if check:
        check_rotation_matrix(R, name=name)
    return R


def _quat(q, name: str = "q", *, scalar_first: bool = False) -> np.ndarray:
    q = as_float_array(q, name)
    check_trailing_shape(q, (4,), name)
    if scalar_first:
        q = np.roll(q, -1, axis=-1)
    return q


def _out_quat(q: np.ndarray, scalar_first: bool) -> np.ndarray:
    return np.roll(q, 1, axis=-1) if scalar_first else q


def _first_bad(mask: np.ndarray, limit: int = 5) -> str:
    idx = np.argwhere(mask)[:limit]
    txt = ", ".join(
        str(tuple(int(v) for v in row)) if len(row) != 1 else str(int(row[0])) for row in idx
    )
    more = " ..." if mask.sum() > limit else ""
    return txt + more


_CHUNK = 4096  # batch elements per chunk: temporaries stay in the CPU cache


def _chunked(kernel, x: np.ndarray, n_trailing: int, out_trailing: tuple[tuple[int, ...], ...]):
    """Apply `kernel` to the flattened batch of `x` in cache-sized chunks.

    Elementwise numpy chains over millions of rotations are limited by memory
    traffic; running them on chunks of a few thousand keeps the temporaries in
    cache (a loop over chunks, not over frames). Returns a tuple of outputs of
    shapes ``batch + out_trailing[k]``.
    """
    batch = x.shape[: x.ndim - n_trailing]
    flat = x.reshape((-1,) + x.shape[x.ndim - n_trailing :])
    n = flat.shape[0]
    if n <= _CHUNK:
        res = kernel(flat)
        res = res if isinstance(res, tuple) else (res,)
    else:
        res = tuple(np.empty((n,) + t) for t in out_trailing)
        for start in range(0, n, _CHUNK):
            part = kernel(flat[start : start + _CHUNK])
            part = part if isinstance(part, tuple) else (part,)
            for o, p in zip(res, part, strict=True):
                o[start : start + _CHUNK] = p
    return tuple(r.reshape(batch + t) for r, t in zip(res, out_trailing, strict=True))


def _orthonormality_error(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c0, c1, c2 = R[..., :, 0], R[..., :, 1], R[..., :, 2]

    def dot(a, b):
        return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]

    err = np.maximum.reduce(
        [
            np.abs(dot(c0, c0) - 1.0),
            np.abs(dot(c1, c1) - 1.0),
            np.abs(dot(c2, c2) - 1.0),
            np.abs(dot(c0, c1)),
            np.abs(dot(c0, c2)),
            np.abs(dot(c1, c2)),
        ]
    )
    det = dot(np.cross(c0, c1), c2)
    return err, det


def check_rotation_matrix(R, *, name: str = "R", tol: float = ORTHONORMAL_TOL) -> None:
    """Raise DataError unless every matrix in `R` is a proper rotation.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Candidate rotation matrices.
    name : str, optional
        Argument name used in the error message.
    tol : float, optional
        Largest accepted ``|R^T R - I|`` entry (default 1e-6). Larger errors
        (noisy matrices from measurements) should be cleaned with
        :func:`orthonormalize` first.

    Raises
    ------
    DataError
        If a matrix is not orthonormal within `tol` or has determinant -1
        (a reflection). The message gives the first offending batch indices.

    Examples
    --------
    >>> check_rotation_matrix(rot_z(0.3))
    """
    R = np.asarray(R, dtype=np.float64)
    err, det = _chunked(_orthonormality_error, R, 2, ((), ()))
    bad = err > tol
    if np.any(bad):
        where = _first_bad(np.atleast_1d(bad))
        raise DataError(
            f"`{name}` is not orthonormal (max |R^T R - I| = {float(err.max()):.3g} > {tol:g}) "
            f"at batch index {where}; use orthonormalize() to project noisy matrices "
            "onto the nearest rotation"
        )
    if np.any(det < 0):
        where = _first_bad(np.atleast_1d(det < 0))
        raise DataError(
            f"`{name}` has determinant -1 (a reflection, not a rotation) at batch index {where}"
        )


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
        [S[..., 2, 1] - S[..., 1, 2], S[..., 0, 2] - S[..., 2, 0], S[..., 1, 0] - S[..., 0, 1]],
        axis=-1,
    )


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
    >>> np.round(matrix_to_quat(rot_x(np.pi)), 12)
    array([1., 0., 0., 0.])
    """
    R = _matrix(R)
    return _out_quat(_matrix_to_quat(R), scalar_first)


# --------------------------------------------------------------------------
# Euler / Cardan angles
# --------------------------------------------------------------------------
def _elem_quat(axis: int, angle: np.ndarray) -> np.ndarray:
    q = np.zeros(np.shape(angle) + (4,))
    q[..., axis] = np.sin(0.5 * angle)
    q[..., 3] = np.cos(0.5 * angle)
    return q


def _euler_to_quat(a: np.ndarray, seq: str) -> np.ndarray:
    axes, rev = _intrinsic_form(seq)
    if rev:
        a = a[..., ::-1]
    q = _qmul(_elem_quat(axes[0], a[..., 0]), _elem_quat(axes[1], a[..., 1]))
    return _qmul(q, _elem_quat(axes[2], a[..., 2]))


def euler_to_matrix(angles, seq: str, *, degrees: bool = False) -> np.ndarray:
    """Rotation matrix of Euler/Cardan angles for any of the 24 conventions.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        The three angles in the order of `seq`, rad (deg if ``degrees=True``).
    seq : str
        Axis sequence, e.g. ``"ZXZ"`` or ``"XYZ"`` (intrinsic, uppercase:
        ``R = R1(a) R2(b) R3(c)``) or ``"zxz"``, ``"xyz"`` (extrinsic,
        lowercase: ``R = R3(c) R2(b) R1(a)``). The same convention as
        ``scipy.spatial.transform.Rotation.from_euler``.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)

    Raises
    ------
    DataError
        Unknown `seq`, wrong shape or non-finite angles.

    Notes
    -----
    AHBM eqs. 2.4-2.5 (ZXZ and ZYX). Computed through the product of the
    three elementary quaternions, which is cheaper than three matrix
    products.

    Examples
    --------
    >>> np.allclose(euler_to_matrix([0.1, 0.2, 0.3], "ZXZ"),
    ...             rot_z(0.1) @ rot_x(0.2) @ rot_z(0.3))
    True
    >>> np.allclose(euler_to_matrix([0.1, 0.2, 0.3], "xyz"),
    ...             rot_z(0.3) @ rot_y(0.2) @ rot_x(0.1))
    True
    """
    _parse_seq(seq)
    a = _angles(angles, "angles", degrees)
    return _chunked(
        lambda c: _quat_to_matrix_kernel(_euler_to_quat(c, seq), False), a, 1, ((3, 3),)
    )[0]


def euler_to_quat(
    angles, seq: str, *, degrees: bool = False, scalar_first: bool = False
) -> np.ndarray:
    """Unit quaternion of Euler/Cardan angles (see :func:`euler_to_matrix`).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str

    Returns
    -------
    q : ndarray, shape (..., 4)
        Not sign-canonicalized: the product of the three elementary
        quaternions, continuous in the angles.

    Examples
    --------
    >>> np.round(euler_to_quat([np.pi, 0, 0], "XYZ"), 12)
    array([1., 0., 0., 0.])
    """
    _parse_seq(seq)
    a = _angles(angles, "angles", degrees)
    return _out_quat(_euler_to_quat(a, seq), scalar_first)


def _matrix_to_euler_intrinsic(R: np.ndarray, axes) -> tuple[np.ndarray, np.ndarray]:
    """Angles (a, b, c) of intrinsic sequence `axes` and the |singular measure|."""
    return _chunked(lambda c: _matrix_to_euler_kernel(c, axes), R, 2, ((3,), ()))


def _matrix_to_euler_kernel(R: np.ndarray, axes) -> tuple[np.ndarray, np.ndarray]:
    i, j, k = axes
    l, e = _parity(i, j)
    if k == i:  # proper Euler: R = Ri(a) Rj(b) Ri(c)
        sb = np.hypot(R[..., i, j], R[..., i, l])
        b = np.arctan2(sb, R[..., i, i])
        a = np.arctan2(R[..., j, i], -e * R[..., l, i])
        measure = sb
    else:  # Cardan: R = Ri(a) Rj(b) Rl(c)
        cb = np.hypot(R[..., i, i], R[..., i, j])
        b = np.arctan2(e * R[..., i, l], cb)
        a = np.arctan2(-e * R[..., j, l], R[..., l, l])
        measure = cb
    a = np.where(measure < _GIMBAL_ZERO, 0.0, a)
    # third angle from M = Ri(a)^T R = Rj(b) R3(c); row j of M is row j of R3(c).
    ca, sa = np.cos(a), np.sin(a)
    mj = ca[..., None] * R[..., j, :] + (e * sa)[..., None] * R[..., l, :]
    if k == i:
        c = np.arctan2(-e * mj[..., l], mj[..., j])
    else:
        c = np.arctan2(e * mj[..., i], mj[..., j])
    return np.stack([a, b, c], axis=-1), measure


def gimbal_lock_mask(R, seq: str, *, tol: float = GIMBAL_TOL) -> np.ndarray:
    """Frames where `seq` is at (or within `tol` of) gimbal lock.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices.
    seq : str
        Axis sequence (see :func:`euler_to_matrix`).
    tol : float, optional
        Threshold on ``|cos b|`` (Cardan) or ``|sin b|`` (proper Euler) of the
        middle angle, default 1e-7.

    Returns
    -------
    mask : ndarray of bool, shape (...)
        True where the first and third rotation axes (nearly) coincide, so
        the first and third angles are not separately defined.

    Examples
    --------
    >>> gimbal_lock_mask(euler_to_matrix([[0.1, np.pi / 2, 0.2], [0.1, 0.2, 0.3]], "XYZ"), "XYZ")
    array([ True, False])
    """
    axes, _ = _intrinsic_form(seq)
    R = _matrix(R)
    _, measure = _matrix_to_euler_intrinsic(R, axes)
    return measure < tol


def matrix_to_euler(R, seq: str, *, degrees: bool = False, warn: bool = True) -> np.ndarray:
    """Euler/Cardan angles of rotation matrices for any of the 24 conventions.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices (orthonormal within 1e-6).
    seq : str
        Axis sequence (see :func:`euler_to_matrix`).
    degrees : bool, optional
        Return degrees instead of radians.
    warn : bool, optional
        Emit one :class:`~ahbm.errors.AhbmWarning` per call (never one per
        frame) if any frame is at gimbal lock. Default True.

    Returns
    -------
    angles : ndarray, shape (..., 3)
        In the order of `seq`. Ranges: first and third angle in [-π, π];
        middle angle in [-π/2, π/2] for Cardan sequences and [0, π] for proper
        Euler sequences (AHBM eqs. 2.6-2.7).

    Notes
    -----
    At gimbal lock only the sum (or difference) of the first and third
    angles is defined. The choice is deterministic: the first angle of the
    equivalent intrinsic sequence is set to 0, as in AHBM eq. 2.7 (for an
    extrinsic sequence that is the *last* angle as written, since
    ``"xyz"`` with (a, b, c) equals ``"ZYX"`` with (c, b, a)). scipy sets the
    third angle to zero instead, so angles differ there while the matrices
    agree. Use :func:`gimbal_lock_mask` to find the singular frames.

    The third angle is computed from ``Ri(a)^T R`` after the first two, so
    ``euler_to_matrix(matrix_to_euler(R))`` reproduces `R` to rounding error
    everywhere, near and at gimbal lock included.

    Examples
    --------
    >>> R = euler_to_matrix([0.3, -0.2, 0.1], "ZYX")
    >>> np.round(matrix_to_euler(R, "ZYX"), 12)
    array([ 0.3, -0.2,  0.1])
    """
    axes, rev = _intrinsic_form(seq)
    R = _matrix(R)
    ang, measure = _matrix_to_euler_intrinsic(R, axes)
    if warn:
        n_bad = int(np.count_nonzero(measure < GIMBAL_TOL))
        if n_bad:
            warnings.warn(
                f"{n_bad} of {measure.size} rotation(s) at gimbal lock for sequence "
                f"{seq!r}: the first angle of the intrinsic form was set to 0; "
                "use gimbal_lock_mask() to locate them",
                AhbmWarning,
                stacklevel=2,
            )
    if rev:
        ang = ang[..., ::-1]
    return np.rad2deg(ang) if degrees else ang


def quat_to_euler(
    q, seq: str, *, degrees: bool = False, scalar_first: bool = False, warn: bool = True
) -> np.ndarray:
    """Euler/Cardan angles of quaternions (see :func:`matrix_to_euler`).

    Parameters
    ----------
    q : array_like, shape (..., 4)
    seq : str

    Returns
    -------
    angles : ndarray, shape (..., 3)

    Examples
    --------
    >>> q = euler_to_quat([0.1, 0.2, 0.3], "ZXY")
    >>> np.round(quat_to_euler(q, "ZXY"), 12)
    array([0.1, 0.2, 0.3])
    """
    R = quat_to_matrix(q, scalar_first=scalar_first)
    axes, rev = _intrinsic_form(seq)
    ang, measure = _matrix_to_euler_intrinsic(R, axes)
    if warn and np.any(measure < GIMBAL_TOL):
        warnings.warn(
            f"{int(np.count_nonzero(measure < GIMBAL_TOL))} rotation(s) at gimbal lock for "
            f"sequence {seq!r}; the first angle of the intrinsic form was set to 0",
            AhbmWarning,
            stacklevel=2,
        )
    if rev:
        ang = ang[..., ::-1]
    return np.rad2deg(ang) if degrees else ang


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
        small, 0.5 - t2 / 48.0 + t2**2 / 3840.0, np.sin(0.5 * t) / np.where(small, 1.0, t)
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
        small[..., None], np.array([1.0, 0.0, 0.0]), q[..., :3] / np.where(small, 1.0, s)[..., None]
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


# --------------------------------------------------------------------------
# angular velocity maps
# --------------------------------------------------------------------------
_BASIS = np.eye(3)


def _check_frame(frame) -> str:
    if frame not in ("body", "space"):
        raise DataError(f"Expected `frame` to be 'body' or 'space', got {frame!r}")
    return frame


def _rate_matrix_intrinsic(a: np.ndarray, axes, frame: str, deriv: bool):
    """S (..., 3, 3) for the intrinsic sequence, and dS (..., 3, 3, 3) if deriv."""
    i, j, k = axes
    u1, u2, u3 = _BASIS[i], _BASIS[j], _BASIS[k]
    A = _axis_rot(i, a[..., 0])
    B = _axis_rot(j, a[..., 1])
    C = _axis_rot(k, a[..., 2])
    shape = a.shape[:-1]
    S = np.empty(shape + (3, 3))
    dS = np.zeros(shape + (3, 3, 3)) if deriv else None
    if frame == "body":
        Ct = np.swapaxes(C, -1, -2)
        btu1 = B[..., i, :]  # B^T u1
        col0 = np.einsum("...ij,...j->...i", Ct, btu1)
        col1 = Ct[..., :, j]
        S[..., :, 0] = col0
        S[..., :, 1] = col1
        S[..., :, 2] = u3
        if deriv:
            # d/db col0 = C^T (-u2 x (B^T u1)); d/dc colX = -u3 x colX
            dS[..., 1, :, 0] = np.einsum(
                "...ij,...j->...i", Ct, -np.cross(np.broadcast_to(u2, btu1.shape), btu1)
            )
            dS[..., 2, :, 0] = -np.cross(np.broadcast_to(u3, col0.shape), col0)
            dS[..., 2, :, 1] = -np.cross(np.broadcast_to(u3, col1.shape), col1)
    else:
        col1 = A[..., :, j]
        AB = A @ B
        col2 = AB[..., :, k]
        S[..., :, 0] = u1
        S[..., :, 1] = col1
        S[..., :, 2] = col2
        if deriv:
            dS[..., 0, :, 1] = np.cross(np.broadcast_to(u1, col1.shape), col1)
            dS[..., 0, :, 2] = np.cross(np.broadcast_to(u1, col2.shape), col2)
            Bu3 = B[..., :, k]
            dS[..., 1, :, 2] = np.einsum(
                "...ij,...j->...i", A, np.cross(np.broadcast_to(u2, Bu3.shape), Bu3)
            )
    return S, dS


def _rate_matrix(angles, seq, frame, degrees, deriv):
    axes, rev = _intrinsic_form(seq)
    _check_frame(frame)
    a = _angles(angles, "angles", degrees)
    if rev:
        a = a[..., ::-1]
    S, dS = _rate_matrix_intrinsic(a, axes, frame, deriv)
    if rev:
        S = S[..., ::-1]
        if deriv:
            dS = dS[..., ::-1, :, ::-1]
    return S, dS


def euler_rate_matrix(angles, seq: str, *, frame: str = "body", degrees: bool = False):
    """Matrix S mapping Euler angle rates to angular velocity, ``ω = S θ̇``.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        Euler/Cardan angles, rad (deg if ``degrees=True``; the rates are
        always per second in the same angle unit as ω, rad/s).
    seq : str
        Axis sequence (see :func:`euler_to_matrix`).
    frame : {"body", "space"}
        Express ω in the rotating (body, B) frame or in the fixed (space, A)
        frame. ``ω_space = R @ ω_body``.

    Returns
    -------
    S : ndarray, shape (..., 3, 3)

    Notes
    -----
    AHBM eqs. 2.13-2.14 give S for ZXZ and ZYX in the body frame. For an
    intrinsic sequence ``R = R1(a) R2(b) R3(c)`` with axes u1, u2, u3:
    ``S_space = [u1, R1 u2, R1 R2 u3]`` and ``S_body = R^T S_space =
    [R3^T R2^T u1, R3^T u2, u3]``. Extrinsic sequences are mapped to the
    intrinsic reversed sequence.

    Examples
    --------
    >>> th = np.array([0.1, 0.2, 0.3])  # AHBM eq. 2.13 (ZXZ, body frame)
    >>> s2, c2, s3, c3 = np.sin(0.2), np.cos(0.2), np.sin(0.3), np.cos(0.3)
    >>> np.allclose(euler_rate_matrix(th, "ZXZ"),
    ...             [[s2 * s3, c3, 0], [s2 * c3, -s3, 0], [c2, 0, 1]])
    True
    """
    return _rate_matrix(angles, seq, frame, degrees, False)[0]


def deuler_rate_matrix_deuler(angles, seq: str, *, frame: str = "body", degrees: bool = False):
    """Partial derivatives of S (:func:`euler_rate_matrix`) w.r.t. the angles.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    frame : {"body", "space"}

    Returns
    -------
    dS : ndarray, shape (..., 3, 3, 3)
        ``dS[..., k, :, :] = ∂S/∂θk`` (per radian, also if ``degrees=True``).

    Examples
    --------
    >>> deuler_rate_matrix_deuler([0.1, 0.2, 0.3], "XYZ").shape
    (3, 3, 3)
    """
    return _rate_matrix(angles, seq, frame, degrees, True)[1]


def _singular_det(S: np.ndarray, name: str, seq: str) -> np.ndarray:
    det = np.linalg.det(S)
    bad = np.abs(det) < GIMBAL_TOL
    if np.any(bad):
        raise DataError(
            f"Euler rate matrix for sequence {seq!r} is singular (gimbal lock) at batch index "
            f"{_first_bad(np.atleast_1d(bad))}: angular velocity cannot be mapped to `{name}` "
            "rates there; use quaternions or another sequence for these frames"
        )
    return det


def euler_rate_matrix_inv(angles, seq: str, *, frame: str = "body", degrees: bool = False):
    """Matrix T = S⁻¹ mapping angular velocity to Euler angle rates (AHBM eq. 2.15).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    frame : {"body", "space"}
        Frame in which ω is expressed.

    Returns
    -------
    T : ndarray, shape (..., 3, 3)
        ``θ̇ = T ω``.

    Raises
    ------
    DataError
        At gimbal lock (``|det S| < 1e-7``), naming the batch indices; T is
        never returned with inf or huge entries silently.

    Examples
    --------
    >>> S = euler_rate_matrix([0.1, 0.2, 0.3], "ZYX")
    >>> np.allclose(euler_rate_matrix_inv([0.1, 0.2, 0.3], "ZYX") @ S, np.eye(3))
    True
    """
    S = euler_rate_matrix(angles, seq, frame=frame, degrees=degrees)
    _singular_det(S, "Euler angle", seq)
    return np.linalg.inv(S)


def deuler_rate_matrix_inv_deuler(angles, seq: str, *, frame: str = "body", degrees: bool = False):
    """Partial derivatives of T = S⁻¹ w.r.t. the angles (AHBM tables 2-5, 2-6).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    frame : {"body", "space"}

    Returns
    -------
    dT : ndarray, shape (..., 3, 3, 3)
        ``dT[..., k, :, :] = ∂T/∂θk = -T (∂S/∂θk) T``.

    Raises
    ------
    DataError
        At gimbal lock.

    Notes
    -----
    Derived from ``T S = I`` for every sequence rather than transcribed from
    the report's tables (which contain typos).

    Examples
    --------
    >>> deuler_rate_matrix_inv_deuler([0.1, 0.2, 0.3], "ZXZ").shape
    (3, 3, 3)
    """
    S, dS = _rate_matrix(angles, seq, frame, degrees, True)
    _singular_det(S, "Euler angle", seq)
    T = np.linalg.inv(S)
    return -np.einsum("...ij,...kjl,...lm->...kim", T, dS, T)


def euler_rates_to_omega(
    angles, rates, seq: str, *, frame: str = "body", degrees: bool = False
) -> np.ndarray:
    """Angular velocity from Euler angles and their rates, ``ω = S(θ) θ̇``.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        Angles, rad (deg if ``degrees=True``).
    rates : array_like, shape (..., 3)
        Angle rates, rad/s (deg/s if ``degrees=True``).
    seq : str
    frame : {"body", "space"}

    Returns
    -------
    omega : ndarray, shape (..., 3)
        Angular velocity, rad/s, in the requested frame.

    Examples
    --------
    >>> euler_rates_to_omega([0, 0, 0], [0, 0, 1.0], "XYZ")
    array([0., 0., 1.])
    """
    S = euler_rate_matrix(angles, seq, frame=frame, degrees=degrees)
    r = as_float_array(rates, "rates")
    check_trailing_shape(r, (3,), "rates")
    if degrees:
        r = np.deg2rad(r)
    return np.einsum("...ij,...j->...i", S, r)


def omega_to_euler_rates(
    angles, omega, seq: str, *, frame: str = "body", degrees: bool = False
) -> np.ndarray:
    """Euler angle rates from angular velocity, ``θ̇ = T(θ) ω`` (AHBM eq. 2.15).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    omega : array_like, shape (..., 3)
        Angular velocity, rad/s, in `frame`.
    seq : str
    frame : {"body", "space"}

    Returns
    -------
    rates : ndarray, shape (..., 3)
        rad/s (deg/s if ``degrees=True``).

    Raises
    ------
    DataError
        At gimbal lock.

    Examples
    --------
    >>> w = euler_rates_to_omega([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], "ZXZ")
    >>> np.round(omega_to_euler_rates([0.1, 0.2, 0.3], w, "ZXZ"), 12)
    array([1., 2., 3.])
    """
    T = euler_rate_matrix_inv(angles, seq, frame=frame, degrees=degrees)
    w = as_float_array(omega, "omega")
    check_trailing_shape(w, (3,), "omega")
    r = np.einsum("...ij,...j->...i", T, w)
    return np.rad2deg(r) if degrees else r


def _quat_rate_matrix(q: np.ndarray, frame: str) -> np.ndarray:
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    G = np.empty(q.shape[:-1] + (4, 3))
    if frame == "body":  # q̇ = 1/2 q ⊗ (ω, 0)
        rows = [[w, -z, y], [z, w, -x], [-y, x, w], [-x, -y, -z]]
    else:  # q̇ = 1/2 (ω, 0) ⊗ q
        rows = [[w, z, -y], [-z, w, x], [y, -x, w], [-x, -y, -z]]
    for r in range(4):
        for c in range(3):
            G[..., r, c] = 0.5 * rows[r][c] + 0.0  # no negative zeros
    return G


def quat_rate_matrix(q, *, frame: str = "body", scalar_first: bool = False) -> np.ndarray:
    """Matrix mapping angular velocity to quaternion rates, ``q̇ = T(q) ω`` (AHBM eq. 2.16).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Unit quaternions (not normalized here: T is linear in q, as in the
        report).
    frame : {"body", "space"}
        Frame of ω. Body: ``q̇ = ½ q ⊗ (ω, 0)`` (eq. 2.16); space:
        ``q̇ = ½ (ω, 0) ⊗ q``.

    Returns
    -------
    T : ndarray, shape (..., 4, 3)
        Rows in the component order of `q`. For unit q, ``ω = 4 T^T q̇``
        (``T^T T = I/4``), see :func:`quat_rates_to_omega`.

    Examples
    --------
    >>> quat_rate_matrix([0, 0, 0, 1.0])
    array([[0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5],
           [0. , 0. , 0. ]])
    """
    _check_frame(frame)
    q = _quat(q, scalar_first=scalar_first)
    G = _quat_rate_matrix(q, frame)
    return np.roll(G, 1, axis=-2) if scalar_first else G


def dquat_rate_matrix_dquat(frame: str = "body", *, scalar_first: bool = False) -> np.ndarray:
    """Derivatives of T(q) of :func:`quat_rate_matrix` w.r.t. q (AHBM table 2-9).

    T is linear in q, so the derivatives are constant.

    Parameters
    ----------
    frame : {"body", "space"}

    Returns
    -------
    dT : ndarray, shape (4, 4, 3)
        ``dT[k] = ∂T/∂q_k``.

    Examples
    --------
    >>> dquat_rate_matrix_dquat()[3]  # d/dw: I/2 on the vector rows
    array([[0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5],
           [0. , 0. , 0. ]])
    """
    _check_frame(frame)
    dT = np.stack([_quat_rate_matrix(e, frame) for e in np.eye(4)])
    if scalar_first:
        dT = np.roll(np.roll(dT, 1, axis=0), 1, axis=1)
    return dT


def quat_rates_to_omega(q, qdot, *, frame: str = "body", scalar_first: bool = False):
    """Angular velocity from a unit quaternion and its time derivative.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Unit quaternions.
    qdot : array_like, shape (..., 4)
        Their time derivatives, 1/s.
    frame : {"body", "space"}

    Returns
    -------
    omega : ndarray, shape (..., 3)
        rad/s. Body: ``(ω, 0) = 2 q* ⊗ q̇``; space: ``(ω, 0) = 2 q̇ ⊗ q*``.

    Examples
    --------
    >>> quat_rates_to_omega([0, 0, 0, 1.0], [0, 0, 0.5, 0])
    array([0., 0., 1.])
    """
    _check_frame(frame)
    q = _quat(q, scalar_first=scalar_first)
    qd = _quat(qdot, "qdot", scalar_first=scalar_first)
    qc = q * np.array([-1.0, -1.0, -1.0, 1.0])
    prod = _qmul(qc, qd) if frame == "body" else _qmul(qd, qc)
    return 2.0 * prod[..., :3]


def omega_to_quat_rates(q, omega, *, frame: str = "body", scalar_first: bool = False):
    """Quaternion time derivative from angular velocity, ``q̇ = T(q) ω`` (AHBM eq. 2.16).

    Parameters
    ----------
    q : array_like, shape (..., 4)
    omega : array_like, shape (..., 3)
        rad/s, in `frame`.

    Returns
    -------
    qdot : ndarray, shape (..., 4)

    Examples
    --------
    >>> omega_to_quat_rates([0, 0, 0, 1.0], [0, 0, 1.0])
    array([0. , 0. , 0.5, 0. ])
    """
    G = quat_rate_matrix(q, frame=frame, scalar_first=scalar_first)
    w = as_float_array(omega, "omega")
    check_trailing_shape(w, (3,), "omega")
    return np.einsum("...ij,...j->...i", G, w)


# --------------------------------------------------------------------------
# derivatives of R
# --------------------------------------------------------------------------
def _euler_factors(angles, seq, degrees):
    axes, rev = _intrinsic_form(seq)
    a = _angles(angles, "angles", degrees)
    if rev:
        a = a[..., ::-1]
    Ms = [_axis_rot(axes[n], a[..., n]) for n in range(3)]
    Ks = [_skew(_BASIS[axes[n]]) for n in range(3)]
    return Ms, Ks, rev


def dmatrix_deuler(angles, seq: str, *, degrees: bool = False) -> np.ndarray:
    """First partial derivatives of R(θ) w.r.t. the Euler angles (AHBM tables 2-1, 2-3).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
        Any of the 24 sequences.

    Returns
    -------
    dR : ndarray, shape (..., 3, 3, 3)
        ``dR[..., k, :, :] = ∂R/∂θk`` (per radian).

    Notes
    -----
    With ``R = R1 R2 R3`` and ``dRn/dθn = Kn Rn`` (``Kn = skew(un)``):
    ``∂R/∂θ1 = K1 R1 R2 R3``, ``∂R/∂θ2 = R1 K2 R2 R3``,
    ``∂R/∂θ3 = R1 R2 K3 R3``. Derived for every sequence, not transcribed.

    Examples
    --------
    >>> dR = dmatrix_deuler([0.1, 0.2, 0.3], "ZXZ")
    >>> h = 1e-6
    >>> fd = (euler_to_matrix([0.1 + h, 0.2, 0.3], "ZXZ")
    ...       - euler_to_matrix([0.1 - h, 0.2, 0.3], "ZXZ")) / (2 * h)
    >>> np.allclose(dR[0], fd, atol=1e-8)
    True
    """
    (A, B, C), (K1, K2, K3), rev = _euler_factors(angles, seq, degrees)
    BC = B @ C
    AB = A @ B
    d = np.stack([K1 @ A @ BC, A @ (K2 @ BC), AB @ (K3 @ C)], axis=-3)
    return d[..., ::-1, :, :] if rev else d


def d2matrix_deuler(angles, seq: str, *, degrees: bool = False) -> np.ndarray:
    """Second partial derivatives of R(θ) w.r.t. the Euler angles (AHBM tables 2-2, 2-4).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str

    Returns
    -------
    d2R : ndarray, shape (..., 3, 3, 3, 3)
        ``d2R[..., k, l, :, :] = ∂²R/∂θk∂θl`` (symmetric in k, l).

    Examples
    --------
    >>> d2 = d2matrix_deuler([0.1, 0.2, 0.3], "XYZ")
    >>> np.allclose(d2[..., 0, 1, :, :], d2[..., 1, 0, :, :])
    True
    """
    (A, B, C), (K1, K2, K3), rev = _euler_factors(angles, seq, degrees)
    # factors with derivatives applied: F[n][m] = Rn with m derivatives
    F = [[A, K1 @ A, K1 @ K1 @ A], [B, K2 @ B, K2 @ K2 @ B], [C, K3 @ C, K3 @ K3 @ C]]
    shape = A.shape[:-2] + (3, 3, 3, 3)
    out = np.empty(shape)
    for k in range(3):
        for l in range(3):
            order = [0, 0, 0]
            order[k] += 1
            order[l] += 1
            out[..., k, l, :, :] = F[0][order[0]] @ F[1][order[1]] @ F[2][order[2]]
    return out[..., ::-1, ::-1, :, :] if rev else out


def dmatrix_dquat(q, *, scalar_first: bool = False) -> np.ndarray:
    """First partial derivatives of R(e) (AHBM eq. 2.9) w.r.t. the Euler parameters (table 2-7).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Euler parameters ``(e1, e2, e3, e4)`` (scalar-last).

    Returns
    -------
    dR : ndarray, shape (..., 4, 3, 3)
        ``dR[..., k, :, :] = ∂R/∂e_k`` of eq. 2.9 as written (see
        ``quat_to_matrix(q, normalize=False)``); the components follow the
        order of `q` (scalar first if ``scalar_first=True``).

    Examples
    --------
    >>> dmatrix_dquat([0, 0, 0, 1.0])[0]  # ∂R/∂e1 at the identity
    array([[ 0.,  0.,  0.],
           [ 0.,  0., -2.],
           [ 0.,  2.,  0.]])
    """
    q = _quat(q, scalar_first=scalar_first)
    x, y, z, w = (q[..., n] for n in range(4))
    zero = np.zeros_like(x)
    # each entry: rows of d/dx, d/dy, d/dz, d/dw in row-major 3x3 order
    dx = [zero, 2 * y, 2 * z, 2 * y, -4 * x, -2 * w, 2 * z, 2 * w, -4 * x]
    dy = [-4 * y, 2 * x, 2 * w, 2 * x, zero, 2 * z, -2 * w, 2 * z, -4 * y]
    dz = [-4 * z, -2 * w, 2 * x, 2 * w, -4 * z, 2 * y, 2 * x, 2 * y, zero]
    dw = [zero, -2 * z, 2 * y, 2 * z, zero, -2 * x, -2 * y, 2 * x, zero]
    d = np.stack([np.stack(m, axis=-1).reshape(x.shape + (3, 3)) for m in (dx, dy, dz, dw)], -3)
    d += 0.0  # no negative zeros
    return np.roll(d, 1, axis=-3) if scalar_first else d


def d2matrix_dquat(*, scalar_first: bool = False) -> np.ndarray:
    """Second partial derivatives of R(e) (eq. 2.9) w.r.t. the Euler parameters (table 2-8).

    Eq. 2.9 is quadratic in e, so they are constant.

    Returns
    -------
    d2R : ndarray, shape (4, 4, 3, 3)
        ``d2R[k, l] = ∂²R/∂e_k∂e_l``.

    Examples
    --------
    >>> d2matrix_dquat()[0, 0]  # ∂²R/∂e1²
    array([[ 0.,  0.,  0.],
           [ 0., -4.,  0.],
           [ 0.,  0., -4.]])
    """
    # dmatrix_dquat is linear in q: its derivative w.r.t. q_l is dmatrix_dquat(e_l)
    d2 = np.stack([dmatrix_dquat(e) for e in np.eye(4)], axis=1)  # [k, l]
    if scalar_first:
        d2 = np.roll(np.roll(d2, 1, axis=0), 1, axis=1)
    return d2


# --------------------------------------------------------------------------
# time series
# --------------------------------------------------------------------------
def _time_axis(t, n: int, name: str = "t") -> np.ndarray:
    t = as_float_array(t, name)
    if t.ndim != 1 or t.shape[0] != n:
        raise DataError(f"Expected `{name}` to have shape ({n},), got {t.shape}")
    if n < 3:
        raise DataError(f"At least 3 samples are needed to differentiate, got {n}")
    dt = np.diff(t)
    if np.any(dt <= 0):
        raise DataError(
            f"`{name}` must be strictly increasing; first non-increasing step at index "
            f"{int(np.argmax(dt <= 0))}"
        )
    return t


def angular_velocity(R, t, *, frame: str = "space") -> np.ndarray:
    """Angular velocity of a rotation-matrix time series by finite differences.

    Parameters
    ----------
    R : array_like, shape (n_frames, ..., 3, 3)
        Rotation matrices; time along axis 0.
    t : array_like, shape (n_frames,)
        Sample times, s (strictly increasing; need not be uniform).
    frame : {"space", "body"}
        ``skew(ω_space) = Ṙ R^T``; ``skew(ω_body) = R^T Ṙ`` (AHBM eq. 2.11).

    Returns
    -------
    omega : ndarray, shape (n_frames, ..., 3)
        rad/s. Second-order finite differences (non-uniform spacing allowed)
        of the relative rotation vectors between neighbouring frames, so a
        rotation at constant angular velocity gives the exact ω at every
        frame, ends included.

    Examples
    --------
    >>> t = np.linspace(0, 1, 101)
    >>> w = angular_velocity(rot_z(2.0 * t), t)
    >>> np.allclose(w, [0, 0, 2.0])
    True
    """
    _check_frame(frame)
    R = _matrix(R)
    if R.ndim < 3:
        raise DataError(f"Expected `R` to have shape (n_frames, ..., 3, 3), got {R.shape}")
    t = _time_axis(t, R.shape[0])

    def log_step(Ra, Rb):  # rotation vector of the step from Ra to Rb
        Rat = np.swapaxes(Ra, -1, -2)
        M = Rb @ Rat if frame == "space" else Rat @ Rb
        return _quat_to_rotvec(_matrix_to_quat(M))

    bshape = (-1,) + (1,) * (R.ndim - 3)
    h = np.diff(t)
    w = np.empty(R.shape[:-1])
    # interior: second-order non-uniform central difference of the relative
    # rotation vectors phi+ = log(R[i+1] R[i]^T), phi- = log(R[i-1] R[i]^T)
    hp, hm = h[1:].reshape(bshape + (1,)), h[:-1].reshape(bshape + (1,))
    phi_p = log_step(R[1:-1], R[2:])
    phi_m = log_step(R[1:-1], R[:-2])
    w[1:-1] = (hm**2 * phi_p - hp**2 * phi_m) / (hp * hm * (hp + hm))
    # ends: second-order one-sided differences
    for i0, i1, i2, sgn in ((0, 1, 2, 1.0), (-1, -2, -3, -1.0)):
        h1 = abs(t[i1] - t[i0])
        h2 = abs(t[i2] - t[i1])
        f1 = log_step(R[i0], R[i1])
        f2 = log_step(R[i0], R[i2])
        w[i0] = sgn * ((h1 + h2) / (h1 * h2) * f1 - h1 / (h2 * (h1 + h2)) * f2)
    return w


def angular_acceleration(R, t, *, frame: str = "space") -> np.ndarray:
    """Angular acceleration of a rotation-matrix time series by finite differences.

    Parameters
    ----------
    R : array_like, shape (n_frames, ..., 3, 3)
    t : array_like, shape (n_frames,)
    frame : {"space", "body"}
        Frame of the result. ``α_space = dω_space/dt`` and
        ``α_body = dω_body/dt = R^T α_space``.

    Returns
    -------
    alpha : ndarray, shape (n_frames, ..., 3)
        rad/s².

    Examples
    --------
    >>> t = np.linspace(0, 1, 201)
    >>> a = angular_acceleration(rot_x(t**2), t)
    >>> np.allclose(a, [2.0, 0, 0])
    True
    """
    w = angular_velocity(R, t, frame=frame)
    t = np.asarray(t, dtype=float)
    return np.gradient(w, t, axis=0, edge_order=2)


def _wrap(x: np.ndarray) -> np.ndarray:
    return (x + np.pi) % (2.0 * np.pi) - np.pi


def unwrap_euler(angles, seq: str, *, degrees: bool = False) -> np.ndarray:
    """Make an Euler angle time series continuous through tumbling motion (AHBM §2.4).

    Every orientation has two Euler-angle solutions (plus multiples of 2π):
    ``(a, b, c)`` and ``(a + π, π - b, c + π)`` for Cardan sequences,
    ``(a + π, -b, c + π)`` for proper Euler sequences. Angles from
    :func:`matrix_to_euler` stay on one branch, so the middle angle bounces
    at its range limits and the others jump by π. This function picks, frame
    by frame, the branch closest to the previous frame and removes 2π jumps,
    so the angles are continuous through any number of full turns while
    ``euler_to_matrix`` of the result equals that of the input.

    Parameters
    ----------
    angles : array_like, shape (n_frames, ..., 3)
        Angles in the order of `seq`, time along axis 0, rad (deg if
        ``degrees=True``).
    seq : str
        Axis sequence the angles belong to.

    Returns
    -------
    ndarray, shape (n_frames, ..., 3)
        Continuous angles describing the same rotations; the first frame is
        kept as given.

    Notes
    -----
    Vectorized: the branch switch between consecutive frames is decided by
    comparing the wrapped distances of the two candidates; the branch of each
    frame is the cumulative parity of the switches, then ``np.unwrap``
    removes 2π jumps. The sampling must be fine enough that each angle
    changes by less than π/2 per frame. At exact gimbal lock the split
    between first and third angle is arbitrary; a jump there is carried
    through (the rotation is still reproduced).

    Examples
    --------
    >>> t = np.linspace(0, 4 * np.pi, 200)
    >>> raw = matrix_to_euler(rot_z(t), "XYZ")
    >>> np.allclose(unwrap_euler(raw, "XYZ")[:, 2], t)
    True
    """
    axes, _ = _parse_seq(seq)
    a = _angles(angles, "angles", degrees)
    if a.ndim < 2:
        raise DataError(f"Expected `angles` to have shape (n_frames, ..., 3), got {a.shape}")
    proper = axes[0] == axes[2]
    flip_add = np.array([np.pi, np.pi, np.pi])
    flip_sign = np.array([1.0, -1.0, 1.0])
    if proper:
        flip_add = np.array([np.pi, 0.0, np.pi])

    def flipped(x):
        return flip_sign * x + flip_add

    if a.shape[0] > 1:
        prev, nxt = a[:-1], a[1:]
        d_same = np.abs(_wrap(nxt - prev)).sum(axis=-1)
        d_flip = np.abs(_wrap(flipped(nxt) - prev)).sum(axis=-1)
        toggle = d_flip < d_same
        state = np.concatenate(
            [
                np.zeros((1,) + toggle.shape[1:], dtype=bool),
                np.logical_xor.accumulate(toggle, axis=0),
            ],
            axis=0,
        )
        a = np.where(state[..., None], flipped(a), a)
        a = np.unwrap(a, axis=0)
    return np.rad2deg(a) if degrees else a
