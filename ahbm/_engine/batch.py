"""Batch primitives of the engine: layouts, cross products, batch validation (internal).

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

import math

import numpy as np

from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import FREE, SPHERICAL, Model, check_q, check_v

__all__ = ["cross", "mv_bl", "mtv_bl", "prepare", "check_quaternions"]


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


def check_quaternions(model: Model, q: np.ndarray, name: str = "q") -> None:
    """Raise DataError if a quaternion block of ``q`` (..., nq) has (near) zero norm."""
    cache = model.cache
    if "quaternion_blocks" not in cache:
        blocks = []
        for i, code in enumerate(model.joint_codes):
            if code in (SPHERICAL, FREE):
                blocks.append((i, int(model.q_index[i]) + (3 if code == FREE else 0)))
        cols = np.array([k + c for _, k in blocks for c in range(4)], dtype=np.intp)
        cache["quaternion_blocks"] = (blocks, cols)
    blocks, cols = cache["quaternion_blocks"]
    if not blocks:
        return
    qq = q[..., cols].reshape(q.shape[:-1] + (len(blocks), 4))
    small = np.einsum("...i,...i->...", qq, qq) < 1e-18
    if small.any():
        j = int(np.flatnonzero(small.reshape(-1, len(blocks)).any(axis=0))[0])
        i, k = blocks[j]
        raise DataError(
            f"`{name}`: quaternion of joint '{model.bodies[i].joint.name}' "
            f"(coordinates {k}..{k + 3}) has zero norm; use a unit quaternion (x, y, z, w)"
        )


def prepare(model: Model, q, *vels, names=("qd", "qdd"), transpose=True):
    """Validate q (..., nq) and velocity-like arrays (..., nv); flatten the batch axes.

    Returns ``(batch_shape, q, [arrays or None, ...])``: batch last, q (nq, N)
    and arrays (nv, N); with ``transpose=False`` batch first, q (N, nq) and
    arrays (N, nv).
    """
    if not isinstance(model, Model):
        raise ModelError(
            f"expected a Model as `model` (the first argument), got {type(model).__name__}"
        )
    q = check_q(model, q)
    arrs = [
        None if v is None else check_v(model, v, n)
        for v, n in zip(vels, names[: len(vels)], strict=True)
    ]
    shapes = [q.shape[:-1]] + [a.shape[:-1] for a in arrs if a is not None]
    try:
        # equal shapes (the usual case) need no broadcasting rules
        batch = (
            shapes[0] if shapes.count(shapes[0]) == len(shapes) else np.broadcast_shapes(*shapes)
        )
    except ValueError as err:
        raise DataError(
            f"batch shapes of {('q',) + tuple(names[: len(vels)])} do not broadcast: {shapes}"
        ) from err
    N = math.prod(batch)

    def flat(x, size):
        if x.shape[:-1] != batch:
            x = np.broadcast_to(x, batch + (size,))
        x = x.reshape(N, size)
        if not transpose:
            return x
        out = np.empty((size, N))
        out[...] = x.T
        return out

    qf = flat(q, model.nq)
    check_quaternions(model, qf.T if transpose else qf)
    out = [None if a is None else flat(a, model.nv) for a in arrs]
    return batch, qf, out
