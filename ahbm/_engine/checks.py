"""Batch validation of the engine: coordinates and velocities checked and laid out (internal).

:func:`prepare` checks ``q`` and velocity arrays against a model and returns
them batch-last (see :mod:`ahbm._engine.arrays` for the layouts).
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.errors import DataError, ModelError
from ahbm.kinematics.configuration import check_q, check_v
from ahbm.kinematics.joints import FREE, SPHERICAL
from ahbm.kinematics.tree import Model

__all__ = ["prepare", "check_quaternions"]


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
