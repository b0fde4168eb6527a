"""Array primitives of the engine: layouts and cross products (internal; numpy only).

Layouts
-------
ahbm's public functions are *batch-first*: a vector is ``(..., 3)``, a
rotation ``(..., 3, 3)``, a spatial vector ``(..., 6)``. Inside the engine,
per-body work is often clearer and faster *batch-last*: all frames of one
body in one array, vectors ``(3, N)``, rotations ``(3, 3, N)``, spatial
vectors ``(6, N)``; constants keep their small shapes (``(3, 3)``,
``(3, 1)``) and broadcast. Functions that only work batch-last carry the
suffix ``_bl``; :func:`cross` works in either layout (``axis``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["cross", "mv_bl", "mtv_bl", "REV", "PRI", "SPH"]

#: Kinds of the nodes of the node plan (:mod:`ahbm._engine.node_plan`): rotation
#: about an axis, translation along an axis, quaternion rotation.
REV, PRI, SPH = 1, 2, 3


def _at(k, axis):
    """Index tuple selecting component ``k`` along the (negative) ``axis``."""
    return (Ellipsis, k) + (slice(None),) * (-axis - 1)


def cross(a, b, axis: int = -1) -> np.ndarray:
    """Cross product of broadcastable float arrays along ``axis`` (faster than ``np.cross``).

    ``axis`` is counted from the end (``-1``: batch-first ``(..., 3)``;
    ``-2``: batch-last ``(3, N)``; ...) so that arrays of different ndim
    broadcast as numpy aligns them; a non-negative ``axis`` requires equal ndim.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if axis >= 0:
        if a.ndim != b.ndim:
            raise ValueError("cross: a non-negative axis needs operands of equal ndim")
        axis -= a.ndim
    a0, a1, a2 = (a[_at(k, axis)] for k in range(3))
    b0, b1, b2 = (b[_at(k, axis)] for k in range(3))
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    o0, o1, o2 = (out[_at(k, axis)] for k in range(3))
    np.multiply(a1, b2, out=o0)
    o0 -= a2 * b1
    np.multiply(a2, b0, out=o1)
    o1 -= a0 * b2
    np.multiply(a0, b1, out=o2)
    o2 -= a1 * b0
    return out


def mv_bl(R, x):
    """``R @ x`` for R (3, 3[, N]) and x (3, N) or (3, 1), batch last."""
    if R.ndim == 2:
        return R @ x
    out = R[:, 0] * x[0]
    out += R[:, 1] * x[1]
    out += R[:, 2] * x[2]
    return out


def mtv_bl(R, x):
    """``R.T @ x`` for R (3, 3[, N]) and x (3, N) or (3, 1), batch last."""
    if R.ndim == 2:
        return R.T @ x
    out = R[0] * x[0]
    out += R[1] * x[1]
    out += R[2] * x[2]
    return out
