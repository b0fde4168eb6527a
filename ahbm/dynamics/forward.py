"""Forward dynamics of multibody trees: CRBA (mass matrix) and ABA.

All functions take ``(model, q, qd, tau)`` in Pinocchio's argument order and
are vectorized over leading batch axes. External forces follow the
convention of :mod:`ahbm.dynamics.inverse` (``f_ext`` of shape
``(..., n_bodies, 6)``, world frame about the world origin by default).
"""

from __future__ import annotations

import numpy as np

from ahbm.dynamics.inverse import _rnea_flat, external_forces_local
from ahbm.errors import DataError, SimulationError
from ahbm.kinematics.forward import (
    apply_S,
    force_cross,
    joint_pass,
    motion_cross,
    motion_to_child,
    prepare,
)
from ahbm.kinematics.tree import Model, _skew

__all__ = ["crba", "aba", "forward_dynamics"]


def _plucker(R, p):
    """Motion transforms child_X_parent (N, 6, 6) from parent_R_child and origin p."""
    N = R.shape[0]
    RT = np.swapaxes(R, -1, -2)
    X = np.zeros((N, 6, 6))
    X[:, :3, :3] = RT
    X[:, 3:, 3:] = RT
    X[:, 3:, :3] = -RT @ _skew(p)
    return X


def _S_full(S, N):
    return np.broadcast_to(S, (N,) + S.shape[-2:])


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
    Featherstone (2008) Table 6.2; Felis (2017) §3.4. Composite inertias
    ``I^c_λ += λX*_i I^c_i i_X_λ``; ``H_ii = S_iᵀ I^c_i S_i``, off-diagonal
    blocks by propagating ``F = I^c_i S_i`` towards the root.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> H = crba(m, np.zeros(m.nq))
    >>> bool(np.allclose(H, H.T))
    True
    """
    batch, qf, _ = prepare(model, q)
    joints = joint_pass(model, qf)
    H = _crba_flat(model, qf.shape[0], joints)
    return H.reshape(batch + (model.nv, model.nv))


def _crba_flat(model, N, joints):
    n = model.n_bodies
    X = [_plucker(np.broadcast_to(j[0], (N, 3, 3)), np.broadcast_to(j[1], (N, 3))) for j in joints]
    Ic = [np.broadcast_to(model.spatial_inertias[i], (N, 6, 6)).copy() for i in range(n)]
    for i in range(n - 1, -1, -1):
        lam = model.parent[i]
        if lam >= 0:
            Ic[lam] += np.swapaxes(X[i], -1, -2) @ Ic[i] @ X[i]
    H = np.zeros((N, model.nv, model.nv))
    for i in range(n):
        nv = model.joint_nv[i]
        if nv == 0:
            continue
        ki = model.v_index[i]
        Si = _S_full(joints[i][2], N)
        F = Ic[i] @ Si
        H[:, ki : ki + nv, ki : ki + nv] = np.swapaxes(Si, -1, -2) @ F
        j = i
        while model.parent[j] >= 0:
            F = np.swapaxes(X[j], -1, -2) @ F
            j = model.parent[j]
            nj = model.joint_nv[j]
            if nj == 0:
                continue
            kj = model.v_index[j]
            blk = np.swapaxes(_S_full(joints[j][2], N), -1, -2) @ F
            H[:, kj : kj + nj, ki : ki + nv] = blk
            H[:, ki : ki + nv, kj : kj + nj] = np.swapaxes(blk, -1, -2)
    return 0.5 * (H + np.swapaxes(H, -1, -2))  # exact symmetry of the diagonal blocks


def aba(model: Model, q, qd, tau, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Generalized accelerations by the articulated-body algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    tau : array_like, shape (..., nv)
        Generalized forces.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces (see :mod:`ahbm.dynamics.inverse`).
    f_ext_frame : {"world", "local"}

    Returns
    -------
    qdd : ndarray, shape (..., nv)

    Raises
    ------
    SimulationError
        An articulated inertia ``D_i = S_iᵀ I^A_i S_i`` is singular (e.g. a
        massless body at the end of a chain).

    Notes
    -----
    Featherstone (2008) Table 7.1; Felis (2017) §3.4.3. O(n) in the number
    of bodies; ``rnea(q, q̇, aba(q, q̇, τ)) = τ``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> aba(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)).round(12)
    array([0., 0., 0., 0., 0., 0., 0., 0., 0.])
    """
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"))
    joints = joint_pass(model, qf, qdf)
    fl = None
    if f_ext is not None:
        fl = external_forces_local(model, f_ext, batch, joints, f_ext_frame)
    qdd = _aba_flat(model, joints, qdf, tauf, fl)
    return qdd.reshape(batch + (model.nv,))


def _aba_flat(model, joints, qd, tau, fext_local):
    n = model.n_bodies
    N = qd.shape[0]
    X = [None] * n
    v = [None] * n
    c = [None] * n
    IA = [None] * n
    pA = [None] * n
    for i in range(n):
        R, p, S, vJ, cJ = joints[i]
        R = np.broadcast_to(R, (N, 3, 3))
        p = np.broadcast_to(p, (N, 3))
        X[i] = _plucker(R, p)
        lam = model.parent[i]
        if lam < 0:
            v[i] = vJ
            ci = np.zeros((N, 6))
        else:
            v[i] = motion_to_child(R, p, v[lam]) + vJ
            ci = motion_cross(v[i], vJ)
        if cJ is not None:
            ci = ci + cJ
        c[i] = ci
        I6 = model.spatial_inertias[i]
        IA[i] = np.broadcast_to(I6, (N, 6, 6)).copy()
        pA[i] = force_cross(v[i], v[i] @ I6.T)
        if fext_local is not None:
            pA[i] = pA[i] - fext_local[i]
    U = [None] * n
    Dinv = [None] * n
    u = [None] * n
    for i in range(n - 1, -1, -1):
        S = _S_full(joints[i][2], N)
        nv = model.joint_nv[i]
        k = model.v_index[i]
        lam = model.parent[i]
        if nv:
            Ui = IA[i] @ S  # (N, 6, nv)
            D = np.swapaxes(S, -1, -2) @ Ui
            try:
                Di = np.linalg.inv(D)
            except np.linalg.LinAlgError as err:
                raise SimulationError(
                    f"articulated inertia of joint '{model.bodies[i].joint.name}' is singular; "
                    "give the body (or its subtree) mass and inertia about the joint axes"
                ) from err
            ui = tau[:, k : k + nv] - (pA[i][:, None, :] @ S)[:, 0, :]
            U[i], Dinv[i], u[i] = Ui, Di, ui
        if lam >= 0:
            if nv:
                UD = Ui @ Di
                Ia = IA[i] - UD @ np.swapaxes(Ui, -1, -2)
                pa = pA[i] + (Ia @ c[i][:, :, None])[:, :, 0] + (UD @ ui[:, :, None])[:, :, 0]
            else:
                Ia = IA[i]
                pa = pA[i] + (Ia @ c[i][:, :, None])[:, :, 0]
            XT = np.swapaxes(X[i], -1, -2)
            IA[lam] += XT @ Ia @ X[i]
            pA[lam] = pA[lam] + (XT @ pa[:, :, None])[:, :, 0]
    qdd = np.zeros((N, model.nv))
    a = [None] * n
    a0 = np.zeros(6)
    a0[3:] = -model.gravity
    for i in range(n):
        lam = model.parent[i]
        aparent = np.broadcast_to(a0, (N, 6)) if lam < 0 else a[lam]
        ai = (X[i] @ aparent[:, :, None])[:, :, 0] + c[i]
        nv = model.joint_nv[i]
        if nv:
            k = model.v_index[i]
            rhs = u[i] - (ai[:, None, :] @ U[i])[:, 0, :]
            qi = (Dinv[i] @ rhs[:, :, None])[:, :, 0]
            qdd[:, k : k + nv] = qi
            ai = ai + apply_S(joints[i][2], qi)
        a[i] = ai
    if not np.all(np.isfinite(qdd)):
        raise SimulationError(
            "forward dynamics produced non-finite accelerations; check for massless "
            "bodies at the ends of chains or inconsistent inertias"
        )
    return qdd


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
    qd : array_like, shape (..., nv)
    tau : array_like, shape (..., nv)
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
    if method == "aba":
        return aba(model, q, qd, tau, f_ext=f_ext, f_ext_frame=f_ext_frame)
    if method != "crba":
        raise DataError(f"`method` must be 'aba' or 'crba', got {method!r}")
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"))
    joints = joint_pass(model, qf, qdf)
    fl = None
    if f_ext is not None:
        fl = external_forces_local(model, f_ext, batch, joints, f_ext_frame)
    bias = _rnea_flat(model, joints, qdf, None, fl)
    H = _crba_flat(model, qf.shape[0], joints)
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
