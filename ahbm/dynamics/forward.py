"""Forward dynamics of multibody trees: CRBA (mass matrix) and ABA.

All functions take ``(model, q, qd, tau)`` in Pinocchio's argument order and
are vectorized over leading batch axes. External forces follow the
convention of :mod:`ahbm.dynamics.inverse` (``f_ext`` of shape
``(..., n_bodies, 6)``, world frame about the world origin by default).
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import kernels as _kernels
from ahbm.dynamics.inverse import (
    _FIXED,
    _GENERIC,
    _REV,
    _RK,
    _check_f_ext,
    _node_forces,
    _rnea_plan,
    _rot_T,
)
from ahbm.errors import DataError, SimulationError
from ahbm.kinematics.forward import (
    apply_S,
    apply_ST,
    force_cross,
    force_to_parent,
    motion_cross,
    motion_to_child,
    prepare,
)
from ahbm.kinematics.tree import Model, _skew, joint_kinematics, t_cross, t_mm, t_mtv, t_mv

__all__ = ["crba", "aba", "forward_dynamics"]


def _plucker(R, p, N):
    """Motion transforms child_X_parent (6, 6, N) from parent_R_child and origin p."""
    R = np.broadcast_to(R[:, :, None], (3, 3, N)) if R.ndim == 2 else R
    RT = R.transpose(1, 0, 2)
    P = np.zeros((3, 3, N))
    pb = np.broadcast_to(p, (3, N))
    P[0, 1], P[0, 2], P[1, 2] = -pb[2], pb[1], -pb[0]
    P[1, 0], P[2, 0], P[2, 1] = pb[2], -pb[1], pb[0]
    X = np.zeros((6, 6, N))
    X[:3, :3] = RT
    X[3:, 3:] = RT
    X[3:, :3] = -t_mm(RT, P)
    return X


def _S_full(S, N):
    return np.broadcast_to(S[:, :, None], S.shape + (N,)) if S.ndim == 2 else S


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
    Featherstone (2008) Table 6.2; Felis (2015) §3.4. Composite inertias
    ``I^c_λ += λX*_i I^c_i i_X_λ``; ``H_ii = S_iᵀ I^c_i S_i``, off-diagonal
    blocks by propagating ``F = I^c_i S_i`` towards the root.

    Implementation: a compiled kernel (:mod:`ahbm._engine.kernels`) over the
    model's node plan, looping over the frames of the batch.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> H = crba(m, np.zeros(m.nq))
    >>> bool(np.allclose(H, H.T))
    True
    """
    batch, qf, _ = prepare(model, q, transpose=False)
    H = _kernels.crba(model, qf)
    return H.reshape(batch + (model.nv, model.nv))


def _crba_flat(model, N, joints):
    """CRBA in batch-last layout; returns H (nv, nv, N).

    Composite inertias are kept as rigid-body inertias about the body origin:
    mass m, first moment h = m c (3, N) and rotational inertia J (3, 3, N).
    """
    n = model.n_bodies
    msub = model.masses.copy()
    h = [None] * n
    J = [None] * n
    for i in range(n):
        m, c = model.masses[i], model.coms[i]
        h[i] = np.broadcast_to((m * c)[:, None], (3, N)).copy()
        J0 = model.inertias[i] + m * (c @ c * np.eye(3) - np.outer(c, c))
        J[i] = np.broadcast_to(J0[:, :, None], (3, 3, N)).copy()
    for i in range(n - 1, -1, -1):
        lam = model.parent[i]
        if lam < 0:
            continue
        R, p = joints[i][0], joints[i][1]
        m = msub[i]
        Rh = t_mv(R, h[i])
        hp = Rh + m * p
        Jp = t_mm(t_mm(R, J[i]), R.T if R.ndim == 2 else R.transpose(1, 0, 2))
        pp = np.sum(p * p, axis=0)
        pRh = np.sum(p * Rh, axis=0)
        diag = m * pp + 2.0 * pRh
        for r in range(3):
            Jp[r, r] += diag
            for c in range(3):
                Jp[r, c] -= m * p[r] * p[c] + p[r] * Rh[c] + Rh[r] * p[c]
        msub[lam] += m
        h[lam] += hp
        J[lam] += Jp
    H = np.zeros((model.nv, model.nv, N))
    for i in range(n):
        nv = model.joint_nv[i]
        if nv == 0:
            continue
        ki = model.v_index[i]
        Si = _S_full(joints[i][2], N)
        hb = h[i][:, None, :]
        F = np.empty((6, nv, N))
        F[:3] = np.einsum("abn,bkn->akn", J[i], Si[:3]) + t_cross(hb, Si[3:])
        F[3:] = msub[i] * Si[3:] + t_cross(Si[:3], hb)
        j = i
        while True:
            nj = model.joint_nv[j]
            if nj:
                kj = model.v_index[j]
                blk = np.einsum("akn,abn->kbn", _S_full(joints[j][2], N), F)
                if j == i:  # exact symmetry of the diagonal block
                    blk = 0.5 * (blk + blk.transpose(1, 0, 2))
                H[kj : kj + nj, ki : ki + nv] = blk
                H[ki : ki + nv, kj : kj + nj] = blk.transpose(1, 0, 2)
            lam = model.parent[j]
            if lam < 0:
                break
            F = _force_cols_to_parent(joints[j][0], joints[j][1], F)
            j = lam
    return H


def _force_cols_to_parent(R, p, F):
    """force_to_parent for a stack of force columns F (6, k, N)."""
    if R.ndim == 2:
        Fl = np.tensordot(R, F[3:], axes=(1, 0))
        Na = np.tensordot(R, F[:3], axes=(1, 0))
    else:
        Rb = R[:, :, None, :]
        Fl = Rb[:, 0] * F[3] + Rb[:, 1] * F[4] + Rb[:, 2] * F[5]
        Na = Rb[:, 0] * F[0] + Rb[:, 1] * F[1] + Rb[:, 2] * F[2]
    out = np.empty((6,) + np.broadcast_shapes(Fl.shape[1:], (1,) + p.shape[1:]))
    out[:3] = Na + t_cross(p[:, None, :], Fl)
    out[3:] = Fl
    return out


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
    Featherstone (2008) Table 7.1; Felis (2015) §3.4.3. O(n) in the number
    of bodies; ``rnea(q, q̇, aba(q, q̇, τ)) = τ``.

    Implementation: compiled kernels (:mod:`ahbm._engine.kernels`); from 8
    frames on, blocks of 64 frames with the frame loop innermost.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> aba(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)).round(12)
    array([0., 0., 0., 0., 0., 0., 0., 0., 0.])
    """
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"), transpose=False)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    fx = _node_forces(model, qf, f, f_ext_frame)
    qdd, bad = _kernels.aba(model, qf, qdf, tauf, fx)
    if bad >= 0:
        raise _singular(model, _kernels.failing_body(_kernels.plan(model), bad))
    if not np.all(np.isfinite(qdd)):
        raise SimulationError(
            "forward dynamics produced non-finite accelerations; check for massless "
            "bodies at the ends of chains or inconsistent inertias"
        )
    return qdd.reshape(batch + (model.nv,))


def _aba_flat(model, joints, qd, tau, fext_local):
    """ABA in batch-last layout; qd, tau (nv, N); returns qdd (nv, N)."""
    n = model.n_bodies
    N = qd.shape[1]
    v = [None] * n
    c = [None] * n
    IA = [None] * n
    pA = [None] * n
    for i in range(n):
        R, p, S, vJ, cJ = joints[i]
        lam = model.parent[i]
        if lam < 0:
            v[i] = vJ
            ci = np.zeros((6, N))
        else:
            v[i] = motion_to_child(R, p, v[lam]) + vJ
            ci = motion_cross(v[i], vJ)
        if cJ is not None:
            ci += cJ
        c[i] = ci
        I6 = model.spatial_inertias[i]
        IA[i] = np.broadcast_to(I6[:, :, None], (6, 6, N)).copy()
        pA[i] = force_cross(v[i], I6 @ v[i])
        if fext_local is not None:
            pA[i] -= fext_local[i]
    U = [None] * n
    Dinv = [None] * n
    u = [None] * n
    for i in range(n - 1, -1, -1):
        R, p, S = joints[i][:3]
        Sf = _S_full(S, N)
        nv = model.joint_nv[i]
        k = model.v_index[i]
        lam = model.parent[i]
        if nv:
            Ui = np.einsum("ijn,jkn->ikn", IA[i], Sf)
            D = np.einsum("jin,jkn->ikn", Sf, Ui)
            if nv == 1:
                if np.any(D[0, 0] == 0):
                    raise _singular(model, i)
                Di = 1.0 / D
            else:
                try:
                    Di = np.linalg.inv(D.transpose(2, 0, 1)).transpose(1, 2, 0)
                except np.linalg.LinAlgError as err:
                    raise _singular(model, i) from err
            ui = tau[k : k + nv] - apply_ST(S, pA[i])
            U[i], Dinv[i], u[i] = Ui, Di, ui
        if lam >= 0:
            if nv:
                UD = np.einsum("ikn,kjn->ijn", Ui, Di)
                Ia = IA[i] - np.einsum("ikn,jkn->ijn", UD, Ui)
                pa = pA[i] + np.einsum("ijn,jn->in", Ia, c[i]) + np.einsum("ikn,kn->in", UD, ui)
            else:
                Ia = IA[i]
                pa = pA[i] + np.einsum("ijn,jn->in", Ia, c[i])
            X = _plucker(R, p, N)
            IA[lam] += np.einsum("kin,kjn->ijn", X, np.einsum("kln,ljn->kjn", Ia, X))
            pA[lam] += force_to_parent(R, p, pa)
    qdd = np.zeros((model.nv, N))
    a = [None] * n
    g = model.gravity[:, None]
    for i in range(n):
        R, p, S = joints[i][:3]
        lam = model.parent[i]
        if lam < 0:
            ai = np.zeros((6, N))
            ai[3:] = -t_mtv(R, g)
        else:
            ai = motion_to_child(R, p, a[lam])
        ai += c[i]
        nv = model.joint_nv[i]
        if nv:
            k = model.v_index[i]
            rhs = u[i] - np.einsum("jkn,jn->kn", U[i], ai)
            qi = np.einsum("ijn,jn->in", Dinv[i], rhs)
            qdd[k : k + nv] = qi
            ai += apply_S(S, qi)
        a[i] = ai
    if not np.all(np.isfinite(qdd)):
        raise SimulationError(
            "forward dynamics produced non-finite accelerations; check for massless "
            "bodies at the ends of chains or inconsistent inertias"
        )
    return qdd


def _rot_T_mat(M, k, c, s):
    """Rows of (6, m, N) stacks rotated by R_k(θ)ᵀ on both halves."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = np.empty(M.shape)
    M6 = M.reshape((2, 3) + M.shape[1:])
    o6 = out.reshape((2, 3) + M.shape[1:])
    Mi, Mj = M6[:, i], M6[:, j]
    o6[:, i] = c * Mi + s * Mj
    o6[:, j] = c * Mj - s * Mi
    o6[:, k] = M6[:, k]
    return out


def _node_X(model, nd, q, N, R_gen):
    """Full (6, 6, N) motion transform parent node -> node for non-principal nodes."""
    if nd.kind == _GENERIC:
        R, p = R_gen
        X = _plucker(R, p, N)
        if nd.gen_X is not None:
            X = np.einsum("ikn,kj->ijn", X, nd.gen_X)
        return X
    ang = q[nd.qi]
    if nd.kind == _REV:
        K = _skew(nd.axis)
        R = (
            np.eye(3)[:, :, None]
            + K[:, :, None] * np.sin(ang)
            + (K @ K)[:, :, None] * (1.0 - np.cos(ang))
        )
        p = np.zeros((3, 1))
    else:  # prismatic
        R = np.eye(3)
        p = nd.axis[:, None] * ang
    X = _plucker(R, p, N)
    if nd.XT is not None:
        X = np.einsum("ikn,kj->ijn", X, nd.XT)
    return X


def _aba_fast(model, q, qd, tau, fext_local, *, n_frames):
    """ABA on the elementary-node chain of the fast RNEA (batch last); qdd (nv, N)."""
    nodes, last, up = _rnea_plan(model)
    N = n_frames
    m = len(nodes)
    fx = [None] * m
    if fext_local is not None:
        for b in range(model.n_bodies):
            if last[b] < 0:
                continue
            fb = fext_local[b] if up[b] is None else up[b].T @ fext_local[b]
            fx[last[b]] = fb if fx[last[b]] is None else fx[last[b]] + fb
    a0 = np.zeros((6, 1))
    a0[3:, 0] = -model.gravity
    v = [None] * m
    c = [None] * m
    IA = [None] * m
    pA = [None] * m
    X = [None] * m  # full transforms for non-principal nodes
    cs = [None] * m
    gen = [None] * m
    for n_, nd in enumerate(nodes):
        lam = nd.parent
        vpar = np.zeros((6, 1)) if lam < 0 else v[lam]
        if nd.kind == _RK:
            ang = q[nd.qi] if nd.sign > 0 else -q[nd.qi]
            cs[n_] = (np.cos(ang), np.sin(ang))
            y = vpar if nd.XT is None else nd.XT @ vpar
            vi = _rot_T(np.broadcast_to(y, (6, N)), nd.k, *cs[n_])
            qs = qd[nd.vi] * nd.sign
            i_, j_ = (nd.k + 1) % 3, (nd.k + 2) % 3
            ci = np.zeros((6, N))
            v6 = vi.reshape(2, 3, N)
            c6 = ci.reshape(2, 3, N)
            c6[:, i_] = v6[:, j_] * qs
            c6[:, j_] = -v6[:, i_] * qs
            vi[nd.k] += qs
        elif nd.kind == _FIXED:  # only possible for plain offsets (no motion)
            Xn = np.broadcast_to(np.eye(6)[:, :, None] if nd.XT is None else nd.XT[:, :, None],
                                 (6, 6, N))  # fmt: skip
            X[n_] = Xn
            vi = np.einsum("ijn,jn->in", Xn, np.broadcast_to(vpar, (6, N)))
            ci = np.zeros((6, N))
        else:
            if nd.kind == _GENERIC:
                R, p, S, vJ, cJ = joint_kinematics(model, nd.body, q, qd)
                gen[n_] = (S, vJ)
                Xn = _node_X(model, nd, q, N, (R, p))
            else:
                Xn = _node_X(model, nd, q, N, None)
                vJ = nd.S * qd[nd.vi]
                cJ = None
            X[n_] = Xn
            vi = np.einsum("ijn,jn->in", Xn, np.broadcast_to(vpar, (6, N))) + vJ
            ci = motion_cross(vi, vJ)
            if cJ is not None:
                ci += cJ
        v[n_] = vi
        c[n_] = ci
        if nd.I6 is not None:
            IA[n_] = np.broadcast_to(nd.I6[:, :, None], (6, 6, N)).copy()
            pA[n_] = force_cross(vi, nd.I6 @ vi)
            if fx[n_] is not None:
                pA[n_] -= fx[n_]
        else:
            IA[n_] = np.zeros((6, 6, N))
            pA[n_] = np.zeros((6, N))
    U = [None] * m
    Dinv = [None] * m
    u = [None] * m
    for n_ in range(m - 1, -1, -1):
        nd = nodes[n_]
        lam = nd.parent
        IAi, pAi = IA[n_], pA[n_]
        if nd.kind == _GENERIC:
            S = gen[n_][0]
            k0, nv = model.v_index[nd.body], model.joint_nv[nd.body]
            Sf = _S_full(S, N)
            Ui = np.einsum("ijn,jkn->ikn", IAi, Sf)
            D = np.einsum("jin,jkn->ikn", Sf, Ui)
            try:
                Di = np.linalg.inv(D.transpose(2, 0, 1)).transpose(1, 2, 0)
            except np.linalg.LinAlgError as err:
                raise _singular(model, nd.body) from err
            ui = tau[k0 : k0 + nv] - apply_ST(S, pAi)
            UD = np.einsum("ikn,kjn->ijn", Ui, Di)
            Ia = IAi - np.einsum("ikn,jkn->ijn", UD, Ui)
            pa = pAi + np.einsum("ijn,jn->in", Ia, c[n_]) + np.einsum("ikn,kn->in", UD, ui)
            U[n_], Dinv[n_], u[n_] = Ui, Di, ui
        elif nd.kind == _FIXED:
            Ia = IAi
            pa = pAi + np.einsum("ijn,jn->in", Ia, c[n_])
        else:
            if nd.kind == _RK:
                Ui = IAi[:, nd.k] * nd.sign
                D = Ui[nd.k] * nd.sign
                ui = tau[nd.vi] - pAi[nd.k] * nd.sign
            else:
                Ui = np.einsum("ijn,j->in", IAi, nd.S[:, 0])
                D = nd.S[:, 0] @ Ui
                ui = tau[nd.vi] - nd.S[:, 0] @ pAi
            if np.any(D == 0):
                raise _singular(model, _body_of(nodes, n_))
            Di = 1.0 / D
            UD = Ui * Di
            Ia = IAi - UD[:, None, :] * Ui[None, :, :]
            pa = pAi + np.einsum("ijn,jn->in", Ia, c[n_]) + UD * ui
            U[n_], Dinv[n_], u[n_] = Ui, Di, ui
        if lam < 0:
            continue
        if nd.kind == _RK:
            cc, ss = cs[n_]
            # Xᵀ Ia X with X = blockdiag(R_kᵀ, R_kᵀ) XT: rotate rows and columns back
            M = _rot_T_mat(Ia, nd.k, cc, -ss)
            M = _rot_T_mat(M.transpose(1, 0, 2), nd.k, cc, -ss).transpose(1, 0, 2)
            pp = _rot_T(pa, nd.k, cc, -ss)
            if nd.XT is not None:
                M = np.einsum("iln,lj->ijn", np.tensordot(nd.XT, M, axes=(0, 0)), nd.XT)
                pp = nd.XTt @ pp
        else:
            Xn = X[n_]
            M = np.einsum("kin,kjn->ijn", Xn, np.einsum("kln,ljn->kjn", Ia, Xn))
            pp = np.einsum("kin,kn->in", Xn, pa)
        IA[lam] += M
        pA[lam] += pp
    qdd = np.zeros((model.nv, N))
    a = [None] * m
    for n_, nd in enumerate(nodes):
        lam = nd.parent
        apar = a0 if lam < 0 else a[lam]
        if nd.kind == _RK:
            y = apar if nd.XT is None else nd.XT @ apar
            ai = _rot_T(np.broadcast_to(y, (6, N)), nd.k, *cs[n_])
        else:
            ai = np.einsum("ijn,jn->in", X[n_], np.broadcast_to(apar, (6, N)))
        ai += c[n_]
        if nd.kind == _GENERIC:
            S = gen[n_][0]
            k0, nv = model.v_index[nd.body], model.joint_nv[nd.body]
            rhs = u[n_] - np.einsum("jkn,jn->kn", U[n_], ai)
            qi = np.einsum("ijn,jn->in", Dinv[n_], rhs)
            qdd[k0 : k0 + nv] = qi
            ai += apply_S(S, qi)
        elif nd.kind != _FIXED:
            qi = (u[n_] - np.sum(U[n_] * ai, axis=0)) * Dinv[n_]
            qdd[nd.vi] = qi
            if nd.kind == _RK:
                ai[nd.k] += qi * nd.sign
            else:
                ai += nd.S * qi
        a[n_] = ai
    if not np.all(np.isfinite(qdd)):
        raise SimulationError(
            "forward dynamics produced non-finite accelerations; check for massless "
            "bodies at the ends of chains or inconsistent inertias"
        )
    return qdd


def _body_of(nodes, n_):
    """Body index of the node (or of the first massive node below it)."""
    for nd in nodes[n_:]:
        if nd.body >= 0:
            return nd.body
    return 0


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
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"), transpose=False)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    bias = _kernels.rnea(model, qf, qdf, None, _node_forces(model, qf, f, f_ext_frame))
    H = _kernels.crba(model, qf)
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


def __getattr__(name):
    # Constrained dynamics lives in ahbm.dynamics.constrained (which imports this
    # module); it is reachable here too, loaded on first use to avoid the cycle.
    if name in ("constrained_forward_dynamics", "compute_impulse"):
        from ahbm.dynamics import constrained

        return getattr(constrained, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
