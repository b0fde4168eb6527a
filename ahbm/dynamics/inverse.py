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

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import node_plan as _node_plan
from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
from ahbm._engine.checks import prepare
from ahbm._internal.validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model

__all__ = ["rnea", "nonlinear_effects", "gravity_torques", "inverse_dynamics_residual"]

_EXT_FRAMES = ("world", "local")


def external_forces_local(model: Model, f_ext, batch, frame, q=None, *, kin=None):
    """Validate f_ext (..., n_bodies, 6); return a list of (6, N) body-frame forces.

    World forces ``[n; f]`` (moment about the world origin) become body forces
    ``[R^T (n − p × f); R^T f]`` with the body poses of `kin` (or of q (N, nq)).
    """
    f = _check_f_ext(model, f_ext, batch, frame)
    if frame == "world":
        if kin is None:
            kin = _st.compute(model, q)
        N, nb = f.shape[0], model.n_bodies
        Rw = kin.rotations.reshape(N, nb, 3, 3)
        pw = kin.positions.reshape(N, nb, 3)
        F = f[..., 3:]
        f = np.concatenate(
            [
                np.einsum("nbji,nbj->nbi", Rw, f[..., :3] - cross(pw, F)),
                np.einsum("nbji,nbj->nbi", Rw, F),
            ],
            axis=-1,
        )
    return [np.ascontiguousarray(f[:, i, :].T) for i in range(model.n_bodies)]


def _node_forces(model: Model, qf, f, frame):
    """External forces (N, n_bodies, 6) or None -> kernel node forces (N, n_nodes, 6) or None."""
    if f is None:
        return None
    N = qf.shape[0]
    fl = external_forces_local(model, f, (N,), frame, qf)
    return _node_plan.node_forces(_node_plan.plan(model), fl, N)


def _rnea_batches(model: Model, q, qd, qdd, f_ext, f_ext_frame, *, gravity=True):
    """RNEA of all frames through the compiled kernel (batch first).

    q (N, nq), qd/qdd (N, nv) or None, f_ext (N, n_bodies, 6) or None.
    Returns tau (N, nv).
    """
    fx = _node_forces(model, q, f_ext, f_ext_frame)
    return _dispatch.rnea(model, q, qd, qdd, fx, gravity=gravity)


def _check_f_ext(model, f_ext, batch, frame):
    """Validate `f_ext_frame` and f_ext (..., n_bodies, 6) -> (N, n_bodies, 6) or None."""
    if frame not in _EXT_FRAMES:
        raise DataError(f"`f_ext_frame` must be one of {_EXT_FRAMES}, got {frame!r}")
    if f_ext is None:
        return None
    f = as_float_array(f_ext, "f_ext")
    check_trailing_shape(f, (model.n_bodies, 6), "f_ext")
    try:
        f = np.broadcast_to(f, batch + (model.n_bodies, 6))
    except ValueError as err:
        raise DataError(
            f"batch shape of `f_ext` {f.shape[:-2]} does not broadcast to that of q {batch}"
        ) from err
    return f.reshape(-1, model.n_bodies, 6)


def rnea(model: Model, q, qd, qdd, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Joint forces from motion: the recursive Newton-Euler algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Generalized coordinates.
    qd : array_like, shape (..., nv), or None
        Generalized velocities; None means zeros (docs/api-rules.md §4).
    qdd : array_like, shape (..., nv), or None
        Generalized accelerations; None means zeros.
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
    Featherstone (2008) Table 5.1; Felis (2015) §3.4.1. Forward pass:
    ``v_i = X v_λ + S q̇``, ``a_i = X a_λ + S q̈ + c_J + v_i × S q̇`` with
    ``a_0 = −g``; ``f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i``. Backward pass:
    ``τ_i = S_iᵀ f_i``, ``f_λ += Xᵀ f_i``. The generalized force of a joint is
    the load that the parent body exerts on the child through the joint.

    Implementation: each multi-axis joint is expanded (once per model) into
    elementary one-axis (or quaternion) joints with massless intermediate
    frames, bodies on fixed joints are merged into their parents (as
    Pinocchio does), and a compiled kernel (numba, :mod:`ahbm._engine.dispatch`)
    runs the recursion for every frame of the trial in one call (from 2,048
    frames in ``NUMBA_NUM_THREADS`` threads, with results identical to one
    thread). A float64, C-contiguous state ``(nq,)`` or batch ``(N, nq)``
    without ``f_ext`` skips the Python validation: the kernels check the
    values themselves, and the full validation (with its error messages)
    runs when one is bad.

    Raises
    ------
    DataError
        Arrays of the wrong shape, non-finite values, zero quaternions.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> q = np.zeros((100, m.nq)); q[:, 1] = np.linspace(0, 1, 100)
    >>> rnea(m, q, np.zeros_like(q), np.zeros_like(q)).shape
    (100, 9)
    """
    if f_ext is None and f_ext_frame in _EXT_FRAMES:
        # lean path: a float64 state or batch, checked inside the kernels
        tau = _dispatch.rnea_single(model, q, qd, qdd)
        if tau is not None:
            return tau
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd, transpose=False)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    tau = _rnea_batches(model, qf, qdf, qddf, f, f_ext_frame)
    return tau.reshape(batch + (model.nv,))


def nonlinear_effects(model: Model, q, qd, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Coriolis, centrifugal and gravity forces ``C(q, q̇) q̇ + g(q)``, shape (..., nv).

    Equal to ``rnea(model, q, qd, 0)``; with ``f_ext`` the external forces are
    subtracted as in :func:`rnea`. ``qd=None`` means zeros (the result is then
    :func:`gravity_torques`).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> nonlinear_effects(m, np.zeros(m.nq), np.zeros(m.nv)).shape
    (4,)
    """
    if f_ext is None and f_ext_frame in _EXT_FRAMES:
        tau = _dispatch.rnea_single(model, q, qd, None)
        if tau is not None:
            return tau
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",), transpose=False)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    tau = _rnea_batches(model, qf, qdf, None, f, f_ext_frame)
    return tau.reshape(batch + (model.nv,))


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
    tau = _dispatch.rnea_single(model, q, None, None)
    if tau is not None:
        return tau
    batch, qf, _ = prepare(model, q, transpose=False)
    tau = _rnea_batches(model, qf, None, None, None, "world")
    return tau.reshape(batch + (model.nv,))


def inverse_dynamics_residual(
    model: Model, q, qd, qdd, tau, *, f_ext=None, f_ext_frame: str = "world"
) -> np.ndarray:
    """Residual generalized forces ``rnea(q, q̇, q̈, f_ext) − τ``, shape (..., nv).

    For a floating-base model the residual of the free joint is the
    "residual force and moment" of gait analysis (zero for consistent data).
    ``qd``, ``qdd`` and ``tau`` may be None, meaning zeros.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> z = np.zeros(m.nv)
    >>> inverse_dynamics_residual(m, np.zeros(m.nq), z, z, z).shape
    (4,)
    """
    t = rnea(model, q, qd, qdd, f_ext=f_ext, f_ext_frame=f_ext_frame)
    if tau is None:  # None means zeros, as for qd and qdd
        return t
    tau = check_trailing_shape(as_float_array(tau, "tau"), (model.nv,), "tau")
    try:
        return t - tau
    except ValueError as err:
        raise DataError(
            f"batch shape of `tau` {tau.shape[:-1]} does not broadcast with that of `q` "
            f"{t.shape[:-1]}"
        ) from err
