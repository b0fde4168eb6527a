"""Shared helpers of the rotation modules: sequence parsing, input checks, chunking (internal)."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, as_nonnegative_float, check_trailing_shape
from ahbm.errors import DataError

__all__ = [
    "check_rotation_matrix",
    "ORTHONORMAL_TOL",
    "GIMBAL_TOL",
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
    >>> from ahbm.kinematics.rotations import rot_z
    >>> check_rotation_matrix(rot_z(0.3))
    """
    R = check_trailing_shape(as_float_array(R, name, allow_nan=True), (3, 3), name)
    tol = as_nonnegative_float(tol, "tol")
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
