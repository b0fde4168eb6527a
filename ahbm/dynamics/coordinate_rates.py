"""Coordinate rates of a multibody tree: ``q̇ = T(q) v``.

:func:`q_rate` maps generalized velocities to coordinate rates (quaternion
joints have four coordinates and three velocities); the constraints and
:func:`~ahbm.dynamics.simulation.simulate` both use it, so it sits below them.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, check_model
from ahbm.errors import DataError
from ahbm.kinematics.joints import FREE, SPHERICAL
from ahbm.kinematics.tree import Model

__all__ = ["q_rate"]


def _quat_slices(model: Model):
    out = []
    for i, code in enumerate(model.joint_codes):
        if code in (SPHERICAL, FREE):
            qk = model.q_index[i] + (3 if code == FREE else 0)
            vk = model.v_index[i] + (3 if code == FREE else 0)
            out.append((qk, vk))
    return out


def q_rate(model: Model, q, qd) -> np.ndarray:
    """Time derivative of the coordinates, ``q̇ = T(q) v``, shape (..., nq).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
        Generalized velocities.

    Notes
    -----
    For quaternion joints ``Q̇ = ½ Q ⊗ (ω, 0)`` with the body-frame angular
    velocity (AHBM eq 2.16); all other coordinates have ``q̇ = v``.

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> q_rate(m, [0, 0, 0, 1.0], [0, 0, 2.0]) + 0.0
    array([0., 0., 1., 0.])
    """
    check_model(model)
    q = as_float_array(q, "q")
    v = as_float_array(qd, "qd")
    if q.shape[-1:] != (model.nq,) or v.shape[-1:] != (model.nv,):
        raise DataError(
            f"Expected `q` (..., {model.nq}) and `qd` (..., {model.nv}), got {q.shape} and "
            f"{v.shape}"
        )
    try:
        batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    except ValueError as err:
        raise DataError(f"batch shapes of `q` {q.shape} and `qd` {v.shape} differ") from err
    out = np.empty(batch + (model.nq,))
    qs = _quat_slices(model)
    if not qs:
        out[...] = v
        return out
    for i in range(model.n_bodies):
        qi, vi, n = model.q_index[i], model.v_index[i], model.joint_nv[i]
        if model.joint_codes[i] == SPHERICAL:
            continue
        n = 3 if model.joint_codes[i] == FREE else n
        out[..., qi : qi + n] = v[..., vi : vi + n]
    for qk, vk in qs:
        x, y, z, w = (q[..., qk + j] for j in range(4))
        wx, wy, wz = (v[..., vk + j] for j in range(3))
        out[..., qk] = 0.5 * (w * wx + y * wz - z * wy)
        out[..., qk + 1] = 0.5 * (w * wy + z * wx - x * wz)
        out[..., qk + 2] = 0.5 * (w * wz + x * wy - y * wx)
        out[..., qk + 3] = -0.5 * (x * wx + y * wy + z * wz)
    return out


def _normalize_quats(model, q, qs):
    if not qs:
        return q
    q = q.copy()
    for qk, _ in qs:
        q[..., qk : qk + 4] /= np.linalg.norm(q[..., qk : qk + 4], axis=-1, keepdims=True)
    return q
