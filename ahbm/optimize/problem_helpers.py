"""Helpers of the optimal-control problem description (internal).

Coordinate names to indices, bounds given as pairs or dicts, stacking of
``(g, lb, ub, names)`` constraint items, and tabulated time series on CasADi
symbols; shared by :mod:`ahbm.optimize.phase`, :mod:`ahbm.optimize.links`,
:mod:`ahbm.optimize.problem` and the transcriptions.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model
from ahbm.optimize.symbolic import require_casadi

__all__: list[str] = []

_AXES = {"x": 0, "y": 1, "z": 2}


def _names_to_index(model: Model, names, what: str) -> list[int]:
    """Velocity indices of coordinate names (or all when None)."""
    all_names = model.velocity_names if model.nq != model.nv else model.coordinate_names
    if names is None:
        return list(range(model.nv))
    if isinstance(names, str):
        names = [names]
    out = []
    for n in names:
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if not 0 <= int(n) < model.nv:
                raise DataError(f"{what}: coordinate index {n} out of range [0, {model.nv})")
            out.append(int(n))
        elif n in all_names:
            out.append(all_names.index(n))
        else:
            raise DataError(f"{what}: unknown coordinate {n!r}; the model has {all_names}")
    return out


def _bounds_pair(value, n: int, what: str, names, default):
    """(lo, hi) arrays of size n from None, a (lo, hi) pair of scalars/arrays or a dict."""
    lo, hi = (np.array(d, dtype=float) for d in default)
    if value is None:
        return lo, hi
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in names:
                raise DataError(f"`{what}`: unknown coordinate {k!r}; use one of {list(names)}")
            pair = as_float_array(v, f"{what}[{k!r}]", allow_nan=False)
            if pair.shape != (2,):
                raise DataError(f"`{what}[{k!r}]` must be a (lower, upper) pair, got {v!r}")
            i = list(names).index(k)
            lo[i], hi[i] = pair
    else:
        try:
            a, b = value
        except (TypeError, ValueError) as err:
            raise DataError(
                f"`{what}` must be a (lower, upper) pair or a dict, got {value!r}"
            ) from err
        lo = np.broadcast_to(np.asarray(a, dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(b, dtype=float), (n,)).copy()
    if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
        raise DataError(f"`{what}`: lower bounds must not exceed the upper ones (got {lo}, {hi})")
    return lo, hi


def _g(items):
    """Join a list of (expr, lb, ub, names) into one (g, lb, ub, names)."""
    ca = require_casadi()
    if not items:
        return ca.SX(0, 1), np.zeros(0), np.zeros(0), []
    g = ca.vertcat(*[e for e, *_ in items])
    lb = np.concatenate(
        [np.broadcast_to(np.asarray(b, float), (e.shape[0],)) for e, b, _, _ in items]
    )
    ub = np.concatenate(
        [np.broadcast_to(np.asarray(b, float), (e.shape[0],)) for e, _, b, _ in items]
    )
    names = [n for *_, ns in items for n in ns]
    return g, lb, ub, names


def _series(t, values, what):
    t = as_float_array(t, f"{what} time")
    v = as_float_array(values, what)
    if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
        raise DataError(f"`{what}` times must be strictly increasing, at least 2 samples")
    if v.shape[0] != t.size:
        raise DataError(f"`{what}` must have {t.size} rows (one per time), got {v.shape}")
    return t, v


def _interp(t, values, tau):
    """CasADi linear interpolation of tabulated columns at the (symbolic) time tau."""
    ca = require_casadi()
    v = values.reshape(values.shape[0], -1)
    cols = []
    for j in range(v.shape[1]):
        f = ca.interpolant(f"ref{j}", "linear", [t], v[:, j])
        cols.append(f(tau))
    return ca.vertcat(*cols)
