"""Inverse dynamics of multibody trees: the recursive Newton-Euler algorithm.

All functions take ``(model, q, qd, qdd)`` in Pinocchio's argument order and
are vectorized over leading batch axes (one call for a whole trial).

External forces
---------------
``f_ext`` has shape ``(..., n_bodies, 6)``: one spatial force ``[n; f]``
(moment first, N m; then force, N) applied to each body. With
``f_ext_frame="world"`` (default) both parts are in world coordinates and the
moment is taken about the world origin: a force ``F`` acting at the world
point ``r`` is ``[r × F; F]``. With ``f_ext_frame="local"`` they are in body
coordinates and the moment is about the body-frame origin (Pinocchio's
``fext`` convention).
"""

from __future__ import annotations

import numpy as np

from ahbm._validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics.forward import (
    apply_S,
    apply_ST,
    force_to_child,
    force_to_parent,
    joint_pass,
    motion_cross,
    motion_to_child,
    prepare,
    world_poses,
)
from ahbm.kinematics.tree import Model, _cross

__all__ = ["rnea", "nonlinear_effects", "gravity_torques", "inverse_dynamics_residual"]

_EXT_FRAMES = ("world", "local")


def external_forces_local(model: Model, f_ext, batch, joints, frame):
    """Validate f_ext (..., n_bodies, 6) and return a list of (N, 6) body-frame forces."""
    if frame not in _EXT_FRAMES:
        raise DataError(f"`f_ext_frame` must be one of {_EXT_FRAMES}, got {frame!r}")
    f = as_float_array(f_ext, "f_ext")
    check_trailing_shape(f, (model.n_bodies, 6), "f_ext")
    try:
        f = np.broadcast_to(f, batch + (model.n_bodies, 6))
    except ValueError as err:
        raise DataError(
            f"batch shape of `f_ext` {f.shape[:-2]} does not broadcast to that of q {batch}"
        ) from err
    f = f.reshape(-1, model.n_bodies, 6)
    if frame == "local":
        return [f[:, i, :] for i in range(model.n_bodies)]
    Rw, pw = world_poses(model, joints)
    return [force_to_child(Rw[i], pw[i], f[:, i, :]) for i in range(model.n_bodies)]


def _inertia_times(model: Model, i, v):
    """Spatial inertia of body i times motion vectors v (N, 6) -> (N, 6)."""
    m = model.masses[i]
    c = model.coms[i]
    w = v[:, :3]
    lin = m * (v[:, 3:] + _cross(w, c))
    out = np.empty_like(v)
    out[:, 3:] = lin
    out[:, :3] = w @ model.inertias[i].T + _cross(np.broadcast_to(c, lin.shape), lin)
    return out


def _rnea_flat(model: Model, joints, qd, qdd, fext_local, gravity=True):
    """RNEA on flattened (N, ...) arrays; qd/qdd may be None (zero)."""
    n = model.n_bodies
    N = joints[0][0].shape[0] if n else 0
    a0 = np.zeros(6)
    if gravity:
        a0[3:] = -model.gravity
    v = [None] * n
    f = [None] * n
    a = [None] * n
    for i in range(n):
        R, p, S, vJ, cJ = joints[i]
        lam = model.parent[i]
        k = model.v_index[i]
        nv = model.joint_nv[i]
        if lam < 0:
            ai = motion_to_child(R, p, np.broadcast_to(a0, (N, 6)))
            vi = vJ
        else:
            ai = motion_to_child(R, p, a[lam])
            vi = None if v[lam] is None else motion_to_child(R, p, v[lam])
            if vJ is not None:
                vi = vJ if vi is None else vi + vJ
        if vi is not None and vJ is not None and lam >= 0:
            ai = ai + motion_cross(vi, vJ)
        if cJ is not None:
            ai = ai + cJ
        if qdd is not None and nv:
            ai = ai + apply_S(S, qdd[:, k : k + nv])
        v[i] = vi
        a[i] = ai
        fi = _inertia_times(model, i, ai)
        if vi is not None:
            h = _inertia_times(model, i, vi)
            fi[:, :3] += _cross(vi[:, :3], h[:, :3]) + _cross(vi[:, 3:], h[:, 3:])
            fi[:, 3:] += _cross(vi[:, :3], h[:, 3:])
        if fext_local is not None:
            fi -= fext_local[i]
        f[i] = fi
    tau = np.zeros((N, model.nv))
    for i in range(n - 1, -1, -1):
        R, p, S, *_ = joints[i]
        k = model.v_index[i]
        nv = model.joint_nv[i]
        if nv:
            tau[:, k : k + nv] = apply_ST(S, f[i])
        lam = model.parent[i]
        if lam >= 0:
            f[lam] = f[lam] + force_to_parent(R, p, f[i])
    return tau


def rnea(model: Model, q, qd, qdd, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Joint forces from motion: the recursive Newton-Euler algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Generalized coordinates.
    qd : array_like, shape (..., nv)
        Generalized velocities.
    qdd : array_like, shape (..., nv)
        Generalized accelerations.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces on the bodies (see the module docstring).
    f_ext_frame : {"world", "local"}
        Frame of ``f_ext``.

    Returns
    -------
    tau : ndarray, shape (..., nv)
        Generalized forces (N m for rotational, N for translational
        coordinates) that produce ``qdd``: ``τ = H(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ fᵢ``.

    Notes
    -----
    Featherstone (2008) Table 5.1; Felis (2017) §3.3. Forward pass:
    ``v_i = X v_λ + S q̇``, ``a_i = X a_λ + S q̈ + c_J + v_i × S q̇`` with
    ``a_0 = −g``; ``f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i``. Backward pass:
    ``τ_i = S_iᵀ f_i``, ``f_λ += Xᵀ f_i``. The generalized force of a joint is
    the load that the parent body exerts on the child through the joint.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> q = np.zeros((100, m.nq)); q[:, 1] = np.linspace(0, 1, 100)
    >>> rnea(m, q, np.zeros_like(q), np.zeros_like(q)).shape
    (100, 9)
    """
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd)
    joints = joint_pass(model, qf, qdf)
    fl = None
    if f_ext is not None:
        fl = external_forces_local(model, f_ext, batch, joints, f_ext_frame)
    tau = _rnea_flat(model, joints, qdf, qddf, fl)
    return tau.reshape(batch + (model.nv,))


def nonlinear_effects(model: Model, q, qd, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Coriolis, centrifugal and gravity forces ``C(q, q̇) q̇ + g(q)``, shape (..., nv).

    Equal to ``rnea(model, q, qd, 0)``; with ``f_ext`` the external forces are
    subtracted as in :func:`rnea`.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> nonlinear_effects(m, np.zeros(m.nq), np.zeros(m.nv)).shape
    (4,)
    """
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",))
    joints = joint_pass(model, qf, qdf)
    fl = None
    if f_ext is not None:
        fl = external_forces_local(model, f_ext, batch, joints, f_ext_frame)
    return _rnea_flat(model, joints, qdf, None, fl).reshape(batch + (model.nv,))


def gravity_torques(model: Model, q) -> np.ndarray:
    """Generalized gravity forces ``g(q)`` (static joint loads), shape (..., nv).

    Notes
    -----
    ``g(q) = −Σ J_c,iᵀ m_i g``, computed as ``rnea(q, 0, 0)``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> gravity_torques(m, np.zeros(m.nq))
    array([0., 0., 0., 0., 0., 0., 0., 0., 0.])
    """
    batch, qf, _ = prepare(model, q)
    joints = joint_pass(model, qf, None)
    return _rnea_flat(model, joints, None, None, None).reshape(batch + (model.nv,))


def inverse_dynamics_residual(
    model: Model, q, qd, qdd, tau, *, f_ext=None, f_ext_frame: str = "world"
) -> np.ndarray:
    """Residual generalized forces ``rnea(q, q̇, q̈, f_ext) − τ``, shape (..., nv).

    For a floating-base model the residual of the free joint is the
    "residual force and moment" of gait analysis (zero for consistent data).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> z = np.zeros(m.nv)
    >>> inverse_dynamics_residual(m, np.zeros(m.nq), z, z, z).shape
    (4,)
    """
    t = rnea(model, q, qd, qdd, f_ext=f_ext, f_ext_frame=f_ext_frame)
    tau = check_trailing_shape(as_float_array(tau, "tau"), (model.nv,), "tau")
    return t - tau
