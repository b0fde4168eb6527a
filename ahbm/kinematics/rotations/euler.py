"""Euler/Cardan angles: conversions, gimbal lock, unwrapping."""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._internal.validation import as_nonnegative_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics.rotations._base import (
    _GIMBAL_ZERO,
    GIMBAL_TOL,
    _angles,
    _chunked,
    _intrinsic_form,
    _matrix,
    _out_quat,
    _parity,
    _parse_seq,
)
from ahbm.kinematics.rotations.quaternions import (
    _qmul,
    _quat_to_matrix_kernel,
    quat_to_matrix,
)

__all__ = [
    "euler_to_matrix",
    "matrix_to_euler",
    "gimbal_lock_mask",
    "euler_to_quat",
    "quat_to_euler",
    "unwrap_euler",
]


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
    AHBM eqs. 2.3 and 2.5 (ZXZ and ZYX; the factors printed in eqs 2.2 and
    2.4 are mislabelled, the products are right: docs/sources.md). Computed
    through the product of the three elementary quaternions, which is cheaper
    than three matrix products.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_x, rot_y, rot_z
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
    tol = as_nonnegative_float(tol, "tol")
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
    >>> from ahbm.kinematics.rotations import rot_z
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
