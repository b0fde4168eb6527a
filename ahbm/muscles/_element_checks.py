"""Value checks of the muscle path elements, raising ModelError that names the element (internal).

Used by :mod:`ahbm.muscles.path_elements` to check the fields of path points,
wrap objects, path wraps and muscles, in code and in model files.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.errors import ModelError

__all__: list[str] = []


def _name(value, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ModelError(f"{what} must be a non-empty string, got {value!r:.60}")
    return value


def _float(value, what: str, *, positive=False, nonnegative=False, nan_ok=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(f"{what} must be a number, got {value!r:.60}")
    v = float(value)
    if math.isnan(v) and nan_ok:
        return v
    if not math.isfinite(v) or abs(v) > 1e12:
        raise ModelError(f"{what} must be a finite number, got {value!r:.60}")
    if positive and not v > 0:
        raise ModelError(f"{what} must be positive, got {v!r}")
    if nonnegative and not v >= 0:
        raise ModelError(f"{what} must be >= 0, got {v!r}")
    return v


def _vector(value, n: int, what: str) -> tuple:
    if isinstance(value, (str, bytes, dict)) or value is None or np.ndim(value) != 1:
        raise ModelError(f"{what} must be {n} numbers, got {value!r:.80}")
    items = list(value)
    if len(items) != n:
        raise ModelError(f"{what} must be {n} numbers, got {len(items)}: {value!r:.80}")
    return tuple(_float(v, what) for v in items)


def _range(value, what: str) -> tuple:
    lo, hi = _vector(value, 2, what)
    if lo > hi:
        raise ModelError(f"{what} must be (lower, upper) with lower <= upper, got {(lo, hi)}")
    return (lo, hi)


def _rotation(value, what: str) -> tuple:
    try:
        R = np.array(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ModelError(f"{what} must be a 3x3 rotation matrix, got {value!r:.80}") from err
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ModelError(f"{what} must be a finite 3x3 rotation matrix, got shape {R.shape}")
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ModelError(f"{what} must be a proper orthonormal 3x3 matrix (R R^T = I, det +1)")
    return tuple(tuple(float(x) for x in row) for row in R)


def _fields(d, known: tuple, required: tuple, what: str) -> dict:
    if not isinstance(d, dict):
        raise ModelError(f"{what} must be an object (dict), got {type(d).__name__}")
    unknown = sorted(str(k) for k in set(d) - set(known))
    if unknown:
        raise ModelError(f"{what} has unknown fields {unknown}; known fields: {list(known)}")
    missing = [k for k in required if k not in d]
    if missing:
        raise ModelError(f"{what} needs the fields {missing}")
    return d
