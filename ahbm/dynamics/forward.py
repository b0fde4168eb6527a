"""Forward dynamics of multibody trees: CRBA (mass matrix) and ABA.

All functions take ``(model, q, qd, tau)`` in Pinocchio's argument order and
are vectorized over leading batch axes. External forces follow the
convention of :mod:`ahbm.dynamics.inverse` (``f_ext`` of shape
``(..., n_bodies, 6)``, world frame about the world origin by default).
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import node_plan as _node_plan
from ahbm._engine.checks import prepare
from ahbm.dynamics.inverse import _check_f_ext, _node_forces
from ahbm.errors import DataError, SimulationError
from ahbm.kinematics.tree import Model

__all__ = ["crba", "aba", "forward_dynamics"]


def crba(model: Model, q) -> np.ndarray:
    """Joint-space inertia (mass) matrix by the composite-rigid-body algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    H : ndarray, shape (..., nv, nv)
        Symmetric positive (semi-)definite mass matrix: ``τ = H q̈ + C q̇ + g``.

    Notes
    -----
    Featherstone (2008) Table 6.2; Felis (2015) §3.4.2. Composite inertias
    ``I^c_λ += λX*_i I^c_i i_X_λ``; ``H_ii = S_iᵀ I^c_i S_i``, off-diagonal
    blocks by propagating ``F = I^c_i S_i`` towards the root.

    Implementation: a compiled kernel (:mod:`ahbm._engine.dispatch`) over the
    model's node plan, looping over the frames of the batch.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> H = crba(m, np.zeros(m.nq))
    >>> bool(np.allclose(H, H.T))
    True
    """
    H = _dispatch.crba_single(model, q)  # lean path: one float64 state
    if H is not None:
        return H
    batch, qf, _ = prepare(model, q, transpose=False)
    H = _dispatch.crba(model, qf)
    return H.reshape(batch + (model.nv, model.nv))


def aba(model: Model, q, qd, tau, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Generalized accelerations by the articulated-body algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv), or None
        Generalized velocities; None means zeros (docs/api-rules.md §4).
    tau : array_like, shape (..., nv), or None
        Generalized forces; None means zeros.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces (see :mod:`ahbm.dynamics.inverse`).
    f_ext_frame : {"world", "local"}

    Returns
    -------
    qdd : ndarray, shape (..., nv)

    Raises
    ------
    DataError
        Arrays of the wrong shape or type, non-finite or complex values.
    SimulationError
        An articulated inertia ``D_i = S_iᵀ I^A_i S_i`` is singular (e.g. a
        massless body at the end of a chain).

    Notes
    -----
    Featherstone (2008) Table 7.1; Felis (2015) §3.4.3. O(n) in the number
    of bodies; ``rnea(q, q̇, aba(q, q̇, τ)) = τ``.

    Implementation: compiled kernels (:mod:`ahbm._engine.dispatch`); from 8
    frames on, blocks of 64 frames with the frame loop innermost.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> aba(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)).round(12)
    array([0., 0., 0., 0., 0., 0., 0., 0., 0.])
    """
    if f_ext is None and (f_ext_frame == "world" or f_ext_frame == "local"):
        # lean path: one float64 state, checked inside the kernel
        qdd = _dispatch.aba_single(model, q, qd, tau)
        if qdd is not None:
            return qdd
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"), transpose=False)
    qdf, tauf = _zeros_for_none(qf, model.nv, qdf, tauf)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    fx = _node_forces(model, qf, f, f_ext_frame)
    qdd, bad = _dispatch.aba(model, qf, qdf, tauf, fx)
    if bad >= 0:
        raise _singular(model, _dispatch.failing_body(_node_plan.plan(model), bad))
    if not np.all(np.isfinite(qdd)):
        raise SimulationError(
            "forward dynamics produced non-finite accelerations; check for massless "
            "bodies at the ends of chains or inconsistent inertias"
        )
    return qdd.reshape(batch + (model.nv,))


def _zeros_for_none(qf, nv, *arrays):
    """The (N, nv) arrays, zeros where None (None means zeros for qd, qdd and tau)."""
    return [np.zeros((qf.shape[0], nv)) if a is None else a for a in arrays]


def _singular(model, i):
    return SimulationError(
        f"articulated inertia of joint '{model.bodies[i].joint.name}' is singular; "
        "give the body (or its subtree) mass and inertia about the joint axes"
    )


def forward_dynamics(
    model: Model,
    q,
    qd,
    tau,
    *,
    method: str = "aba",
    f_ext=None,
    f_ext_frame: str = "world",
) -> np.ndarray:
    """Generalized accelerations from generalized forces.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv), or None
        None means zeros (docs/api-rules.md §4).
    tau : array_like, shape (..., nv), or None
        None means zeros.
    method : {"aba", "crba"}
        ``"aba"``: articulated-body algorithm, O(n); ``"crba"``: solve
        ``H q̈ = τ − C q̇ − g`` with the CRBA mass matrix (Cholesky), O(n^3).
    f_ext : array_like, shape (..., n_bodies, 6), optional
    f_ext_frame : {"world", "local"}

    Returns
    -------
    qdd : ndarray, shape (..., nv)

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> q, z = np.zeros(m.nq), np.zeros(m.nv)
    >>> bool(np.allclose(forward_dynamics(m, q, z, z), forward_dynamics(m, q, z, z,
    ...                                                                  method="crba")))
    True
    """
    if isinstance(method, str) and method == "aba":
        return aba(model, q, qd, tau, f_ext=f_ext, f_ext_frame=f_ext_frame)
    if method != "crba":
        raise DataError(f"`method` must be 'aba' or 'crba', got {method!r}")
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"), transpose=False)
    (tauf,) = _zeros_for_none(qf, model.nv, tauf)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    bias = _dispatch.rnea(model, qf, qdf, None, _node_forces(model, qf, f, f_ext_frame))
    H = _dispatch.crba(model, qf)
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError as err:
        raise SimulationError(
            "mass matrix is not positive definite; check for massless bodies at the ends of chains"
        ) from err
    rhs = (tauf - bias)[:, :, None]
    y = np.linalg.solve(L, rhs)
    qdd = np.linalg.solve(np.swapaxes(L, -1, -2), y)[:, :, 0]
    return qdd.reshape(batch + (model.nv,))
