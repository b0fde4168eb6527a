"""Vector helpers shared by the wrapping algorithms (internal).

Batched (..., 3) vector operations with OpenSim's (SimTK's) rounding, used by
:mod:`ahbm.muscles.wrapping` and :mod:`ahbm.muscles.wrap_ellipsoid`.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

_EPS = np.finfo(float).eps  # SimTK::Eps, below which a vector normalizes to zero


def _dot(a, b):
    """Dot products of (..., 3) vectors summed left to right, as SimTK's Vec3 does."""
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("_dot takes 3-vectors")  # internal guard
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def _norm(a):
    return np.sqrt(_dot(a, a))


def _unit(a):
    """``a / |a|``, or zero where ``|a| < eps``: OpenSim's NormalizeOrZero, which
    multiplies by the reciprocal of the norm (same rounding)."""
    n = _norm(a)
    ok = n >= _EPS
    inv = 1.0 / np.where(ok, n, 1.0)
    return np.where(ok[..., None], a * inv[..., None], 0.0), n


def _sign(x):
    """OpenSim's DSIGN: +1 for x >= 0, -1 otherwise (and for NaN)."""
    return np.where(x >= 0.0, 1, -1)


def _sel(mask, a, b):
    """``a`` where ``mask`` (batch shape) else ``b``, for (..., 3) vectors."""
    return np.where(mask[..., None], a, b)


def _acos(x):
    return np.arccos(np.clip(x, -1.0, 1.0))


def _pick_closest_pair(c1a, c1b, c2a, c2b, r1a, r1b, r2a, r2b):
    """Tangent points of the pair of candidates with the largest cosine.

    ``c..`` are the candidates' unit radial directions; ties resolve as in
    OpenSim (a strict comparison chain: (a, a), (a, b), (b, a), else (b, b)).
    """
    j1, j2, j3, j4 = _dot(c1a, c2a), _dot(c1a, c2b), _dot(c1b, c2a), _dot(c1b, c2b)
    k1 = (j1 > j2) & (j1 > j3) & (j1 > j4)
    k2 = ~k1 & (j2 > j3) & (j2 > j4)
    k3 = ~k1 & ~k2 & (j3 > j4)
    first_a = k1 | k2
    second_a = k1 | k3
    return _sel(first_a, r1a, r1b), _sel(second_a, r2a, r2b)
