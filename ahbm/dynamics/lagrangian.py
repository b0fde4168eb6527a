"""Recursive Lagrangian inverse dynamics with analytic gradients (Hollerbach 1980; Chung 2009).

A second, independent formulation of inverse dynamics for trees of revolute
joints (DH chains included): 4 × 4 homogeneous matrices instead of spatial
vectors, and the gradients ``∂τ/∂q``, ``∂τ/∂q̇``, ``∂τ/∂q̈`` by differentiating
the recursions themselves (Chung 2009, ch. 3, eq. 3.24). The tests check it
against the RNEA (:func:`ahbm.dynamics.rnea`) and its analytic derivatives
(:func:`ahbm.dynamics.rnea_derivatives`).

Equations (Chung 2009, eqs 2.6, 3.19–3.23, 3.25–3.26)
-----------------------------------------------------
``T_i(q_i)`` is the pose of body ``i`` in its parent body ``λ`` (for ahbm's
revolute joint ``T_i = P_i Rot(a_i, q_i) C_i``: the joint's parent offset,
the rotation about the joint axis, the inverse child offset; for a DH row,
eq. 2.5), ``T'_i = P_i Rot Q_i C_i``, ``T''_i = P_i Rot Q_i² C_i`` with
``Q_i = [[â_i, 0], [0, 0]]``. Forward (eq. 2.6):

    A_i = A_λ T_i,   B_i = Ȧ_i = B_λ T_i + A_λ T'_i q̇_i,
    C_i = Ä_i = C_λ T_i + 2 B_λ T'_i q̇_i + A_λ T''_i q̇_i² + A_λ T'_i q̈_i.

Backward (eqs 3.19–3.20; in a tree the ``i+1`` terms are summed over the
children ``c`` of ``i``, which the thesis does not write out):

    D_i = J_i C_iᵀ + Σ_c T_c D_c,   E_i = m_i r̄_i + Σ_c T_c E_c,

    τ_i = tr(A_λ T'_i D_i) − gᵀ A_λ T'_i E_i                      (3.23)

with the pseudo-inertia about the body origin (3.25–3.26) ``J_i = [[Σ_i,
m c_i], [m c_iᵀ, m]]``, ``Σ_i = ∫ r rᵀ dm = ½ tr(I_o) 𝟙 − I_o`` (``I_o`` the
inertia about the body origin), homogeneous ``r̄ = [c; 1]`` and ``g =
[g; 0]``. The external-load terms ``F_i``, ``G_i`` (eqs 3.21–3.22) are not
implemented: gravity is the only load.

The gradients are forward-mode derivatives of these recursions (Chung's
eq. 3.24a–k, which enumerates the cases ``k < i``, ``k = i``, ``k > i`` of the
same chain rule); direction ``q_k``:

    δA_i = δA_λ T_i + [i = k] A_λ T'_i,
    δB_i = δB_λ T_i + δA_λ T'_i q̇_i + [i = k] (B_λ T'_i + A_λ T''_i q̇_i),
    δC_i = δC_λ T_i + 2 δB_λ T'_i q̇_i + δA_λ (T''_i q̇_i² + T'_i q̈_i)
           + [i = k] (C_λ T'_i + 2 B_λ T''_i q̇_i + A_λ (T'''_i q̇_i² + T''_i q̈_i)),
    δD_i = J_i δC_iᵀ + Σ_c (T_c δD_c + [c = k] T'_c D_c),   δE_i likewise,
    δτ_i = tr(δ(A_λ T'_i) D_i + A_λ T'_i δD_i) − gᵀ (δ(A_λ T'_i) E_i + A_λ T'_i δE_i),

with ``δ(A_λ T'_i) = δA_λ T'_i + [i = k] A_λ T''_i``; directions ``q̇_k`` and
``q̈_k`` seed only ``B`` and ``C`` (``∂τ/∂q̈ = M``). ``Σ_c`` and the
``[i = k]`` seeds are what Chung's "k = i + 1" cases hold.

Cost: the thesis's operation counts (Tables 3.1–3.2, n transformation
matrices) are Uicker O(n⁴), Waters ``106½n² + 620½n − 512`` multiplications
and Hollerbach ``830n − 592`` multiplications, ``675n − 464`` additions
(81,719 operations for n = 55); ahbm's spatial-vector RNEA takes ≈ 380n
(:mod:`ahbm.dynamics.derivatives`). This coding favours clarity and
vectorization over frames (numpy, batch axes first), not operation count;
the gradients cost O(n · nv) 4 × 4 products per frame.

References
----------
Chung H.-J. (2009) Optimization-based dynamic prediction of 3D human
running, PhD thesis, University of Iowa, ch. 2–3.
Hollerbach J.M. (1980) A recursive Lagrangian formulation of manipulator
dynamics. IEEE Trans. Syst. Man Cybern. 10(11), 730–736.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine.checks import prepare
from ahbm.dynamics.derivatives import RNEADerivatives
from ahbm.errors import ModelError
from ahbm.kinematics.tree import Model

__all__ = ["lagrangian_dynamics", "generalized_momentum_rate"]


def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _hom(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def _pseudo_inertia(m, c, Ic):
    """J = ∫ r̄ r̄ᵀ dm about the body origin (Chung eq. 3.25), r̄ = [r; 1]."""
    Io = Ic + m * (c @ c * np.eye(3) - np.outer(c, c))
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(Io) * np.eye(3) - Io
    J[:3, 3] = J[3, :3] = m * c
    J[3, 3] = m
    return J


def _joint_matrices(model: Model, i: int, q):
    """T, T', T'', T''' (N, 4, 4) of body i at the angles q (N,) (or T only, fixed)."""
    b = model.bodies[i]
    P = _hom(b.rotation, b.position)
    Cr = b.child_rotation
    C = _hom(Cr.T, -Cr.T @ b.child_position)
    if model.bodies[i].joint.type == "fixed":
        return (np.broadcast_to(P @ C, (q.shape[0], 4, 4)),)
    a = np.asarray(b.joint.axis, float)
    K = np.zeros((4, 4))
    K[:3, :3] = _skew(a)
    s, c = np.sin(q)[:, None, None], np.cos(q)[:, None, None]
    K2 = K @ K
    Rot = np.eye(4) + s * K + (1.0 - c) * K2  # Rodrigues, (N, 4, 4)
    PR = P @ Rot
    return PR @ C, PR @ K @ C, PR @ K2 @ C, PR @ (K2 @ K) @ C


def _tr(X, Y):
    """tr(X Y) over the last two axes."""
    return np.einsum("...ij,...ji->...", X, Y)


def lagrangian_dynamics(model: Model, q, qd, qdd, *, gradients: bool = True) -> RNEADerivatives:
    """Inverse dynamics and its gradients by the recursive Lagrangian formulation.

    Parameters
    ----------
    model : Model
        A tree of ``revolute`` and ``fixed`` joints (e.g. a DH model).
    q : array_like, shape (..., nq)
        Joint angles, rad.
    qd, qdd : array_like, shape (..., nv), or None
        Joint rates (rad/s) and accelerations (rad/s²); None means zeros.
    gradients : bool, optional
        Compute ``∂τ/∂q``, ``∂τ/∂q̇`` and ``M = ∂τ/∂q̈`` (default); with False
        they are None.

    Returns
    -------
    RNEADerivatives
        ``tau`` (..., nv) and ``dtau_dq``, ``dtau_dqd``, ``mass_matrix``
        (..., nv, nv), as :func:`ahbm.dynamics.rnea_derivatives`.

    Raises
    ------
    ModelError
        A joint other than revolute or fixed (naming the body).
    DataError
        Arrays of the wrong shape or non-finite values.

    Notes
    -----
    Chung (2009) eqs 2.6, 3.19–3.26 and the gradients of eq. 3.24 (module
    docstring); gravity is the only load.

    Examples
    --------
    >>> from ahbm.kinematics import Model
    >>> m = Model(gravity=[0, 0, -9.81])
    >>> _ = m.add_body("a", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=1.0,
    ...                com=[0, 0.5, 0])
    >>> r = lagrangian_dynamics(m, [0.0], [0.0], [0.0])
    >>> round(float(r.tau[0]), 6)  # m g l
    4.905
    """
    st = _forward(model, q, qd, qdd)
    batch, N, nv, nb, g4, I4, k_of, parent, mats, A, B, C, qdf, qddf = st

    def par(X, i, default):
        return default if parent[i] < 0 else X[parent[i]]

    # ---- backward recursion (eqs 3.19-3.20), children summed
    J = [_pseudo_inertia(model.masses[i], model.coms[i], model.inertias[i]) for i in range(nb)]
    D = [J[i] @ np.swapaxes(C[i], 1, 2) for i in range(nb)]
    E = [np.broadcast_to(J[i][:, 3], (N, 4)).copy() for i in range(nb)]
    for i in range(nb - 1, -1, -1):
        if parent[i] >= 0:
            T = mats[i][0]
            D[parent[i]] = D[parent[i]] + T @ D[i]
            E[parent[i]] = E[parent[i]] + np.einsum("nij,nj->ni", T, E[i])
    tau = np.zeros((N, nv))
    for i in range(nb):
        if k_of[i] >= 0:
            AT1 = par(A, i, I4) @ mats[i][1]
            tau[:, k_of[i]] = _tr(AT1, D[i]) - np.einsum("i,nij,nj->n", g4, AT1, E[i])
    if not gradients:
        return RNEADerivatives(None, None, None, tau.reshape(batch + (nv,)))
    dq = _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qdf, qddf, g4, "q")
    dqd = _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qdf, qddf, g4, "qd")
    M = _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qdf, qddf, g4, "qdd")
    mat = batch + (nv, nv)
    return RNEADerivatives(
        dq.reshape(mat), dqd.reshape(mat), M.reshape(mat), tau.reshape(batch + (nv,))
    )


def _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qd, qdd, g4, wrt):
    """∂τ/∂(wrt) (N, nv, nv) by forward-mode derivatives of the recursions (eq. 3.24).

    Direction axis 1 holds the coordinate k; seeds ``[i = k]`` go to column k.
    """
    N, nv = qd.shape
    nb = model.n_bodies
    dA, dB, dC = [None] * nb, [None] * nb, [None] * nb
    Zd = np.zeros((N, nv, 4, 4))
    I4 = np.broadcast_to(np.eye(4), (N, 4, 4))
    Z4 = np.zeros((N, 4, 4))
    for i in range(nb):
        T = mats[i][0][:, None]
        dAl = Zd if parent[i] < 0 else dA[parent[i]]
        dBl = Zd if parent[i] < 0 else dB[parent[i]]
        dCl = Zd if parent[i] < 0 else dC[parent[i]]
        dA[i], dB[i], dC[i] = dAl @ T, dBl @ T, dCl @ T
        k = k_of[i]
        if k < 0:
            continue
        Al = I4 if parent[i] < 0 else A[parent[i]]
        Bl = Z4 if parent[i] < 0 else B[parent[i]]
        Cl = Z4 if parent[i] < 0 else C[parent[i]]
        _, T1, T2, T3 = mats[i]
        w, al = qd[:, k, None, None], qdd[:, k, None, None]
        w4 = w[:, None]
        if wrt == "q":
            dB[i] = dB[i] + (dAl @ T1[:, None]) * w4
            dC[i] = dC[i] + 2.0 * (dBl @ T1[:, None]) * w4 + dAl @ (T2 * w**2 + T1 * al)[:, None]
            dA[i][:, k] += Al @ T1
            dB[i][:, k] += Bl @ T1 + (Al @ T2) * w
            dC[i][:, k] += Cl @ T1 + 2.0 * (Bl @ T2) * w + Al @ (T3 * w**2 + T2 * al)
        elif wrt == "qd":
            dC[i] = dC[i] + 2.0 * (dBl @ T1[:, None]) * w4
            dB[i][:, k] += Al @ T1
            dC[i][:, k] += 2.0 * (Bl @ T1) + 2.0 * (Al @ T2) * w
        else:
            dC[i][:, k] += Al @ T1
    dD = [J[i] @ np.swapaxes(dC[i], 2, 3) for i in range(nb)]
    dE = [np.zeros((N, nv, 4)) for _ in range(nb)]
    for i in range(nb - 1, -1, -1):
        lam = parent[i]
        if lam < 0:
            continue
        T = mats[i][0][:, None]
        dD[lam] = dD[lam] + T @ dD[i]
        dE[lam] = dE[lam] + np.einsum("nkij,nkj->nki", np.broadcast_to(T, dD[i].shape), dE[i])
        k = k_of[i]
        if wrt == "q" and k >= 0:
            dD[lam][:, k] += mats[i][1] @ D[i]
            dE[lam][:, k] += np.einsum("nij,nj->ni", mats[i][1], E[i])
    out = np.zeros((N, nv, nv))
    for i in range(nb):
        k = k_of[i]
        if k < 0:
            continue
        Al = I4 if parent[i] < 0 else A[parent[i]]
        AT1 = (Al @ mats[i][1])[:, None]
        row = _tr(AT1, dD[i]) - np.einsum(
            "i,nkij,nkj->nk", g4, np.broadcast_to(AT1, dD[i].shape), dE[i]
        )
        if wrt == "q":
            dAl = np.zeros((N, nv, 4, 4)) if parent[i] < 0 else dA[parent[i]]
            dAT1 = dAl @ mats[i][1][:, None]
            dAT1[:, k] += Al @ mats[i][2]
            row = row + _tr(dAT1, D[i][:, None]) - np.einsum("i,nkij,nj->nk", g4, dAT1, E[i])
        out[:, k] = row
    return out


def _forward(model, q, qd, qdd):
    """Validation and the forward recursion (eq. 2.6): A, B, C of every body."""
    for b in model.bodies if isinstance(model, Model) else ():
        if b.joint.type not in ("revolute", "fixed"):
            raise ModelError(
                f"the recursive Lagrangian takes revolute and fixed joints only; body "
                f"'{b.name}' has a {b.joint.type!r} joint (use ahbm.dynamics.rnea_derivatives)"
            )
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd, transpose=False)
    N, nv = qf.shape[0], model.nv
    qdf = np.zeros((N, nv)) if qdf is None else qdf
    qddf = np.zeros((N, nv)) if qddf is None else qddf
    nb = model.n_bodies
    g4 = np.r_[np.asarray(model.gravity, float), 0.0]
    I4 = np.broadcast_to(np.eye(4), (N, 4, 4))
    Z4 = np.zeros((N, 4, 4))
    k_of = [int(model.v_index[i]) if b.joint.type == "revolute" else -1
            for i, b in enumerate(model.bodies)]  # fmt: skip
    mats, A, B, C = [], [None] * nb, [None] * nb, [None] * nb
    for i in range(nb):
        k = k_of[i]
        mats.append(_joint_matrices(model, i, qf[:, k] if k >= 0 else np.zeros(N)))
    parent = [b.parent for b in model.bodies]
    for i in range(nb):
        T = mats[i][0]
        lam = parent[i]
        Al, Bl, Cl = (I4, Z4, Z4) if lam < 0 else (A[lam], B[lam], C[lam])
        A[i], B[i], C[i] = Al @ T, Bl @ T, Cl @ T
        if k_of[i] >= 0:
            k = k_of[i]
            T1, T2 = mats[i][1], mats[i][2]
            w, al = qdf[:, k, None, None], qddf[:, k, None, None]
            B[i] = B[i] + (Al @ T1) * w
            C[i] = C[i] + 2.0 * (Bl @ T1) * w + Al @ (T2 * w**2 + T1 * al)
    return batch, N, nv, nb, g4, I4, k_of, parent, mats, A, B, C, qdf, qddf


def generalized_momentum_rate(model: Model, q, qd, qdd):
    """Generalized momenta ``p = ∂K/∂q̇`` and their rates ``ṗ`` (Chung 2009, §4.2).

    Parameters
    ----------
    model : Model
        A tree of ``revolute`` and ``fixed`` joints.
    q : array_like, shape (..., nq)
    qd, qdd : array_like, shape (..., nv), or None

    Returns
    -------
    p, pdot : ndarray, shape (..., nv)
        ``p = M q̇`` (kg m²/s) and ``ṗ = M q̈ + Ṁ q̇`` (N m).

    Notes
    -----
    Eqs 4.16–4.24: ``p_i = tr(A_λ T'_i D'_i)``, ``ṗ_i = tr(A_λ T'_i (D_i + D''_i)
    + (B_λ T'_i + A_λ T''_i q̇_i) D'_i)`` with ``D'_i = J_i B_iᵀ + Σ_c T_c D'_c``
    and the corrected eq. 4.23, ``D''_i = Σ_c (Ṫ_c D'_c + T_c D''_c)``, ``Ṫ_c =
    T'_c q̇_c`` (as printed, ``D''_i = Ṫ D''_{i+1}`` starts from zero and stays
    zero; see ``sources/notes``).

    Examples
    --------
    >>> from ahbm.kinematics import Model
    >>> m = Model()
    >>> _ = m.add_body("a", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=2.0,
    ...                com=[0, 1.0, 0])
    >>> p, pdot = generalized_momentum_rate(m, [0.0], [3.0], [0.0])
    >>> float(p[0]), float(pdot[0])  # m l² q̇, 0
    (6.0, 0.0)
    """
    batch, N, nv, nb, g4, I4, k_of, parent, mats, A, B, C, qdf, qddf = _forward(model, q, qd, qdd)
    Z4 = np.zeros((N, 4, 4))
    J = [_pseudo_inertia(model.masses[i], model.coms[i], model.inertias[i]) for i in range(nb)]
    D = [J[i] @ np.swapaxes(C[i], 1, 2) for i in range(nb)]
    D1 = [J[i] @ np.swapaxes(B[i], 1, 2) for i in range(nb)]
    D2 = [Z4.copy() for _ in range(nb)]
    for i in range(nb - 1, -1, -1):
        lam = parent[i]
        if lam < 0:
            continue
        T = mats[i][0]
        D[lam] = D[lam] + T @ D[i]
        D2[lam] = D2[lam] + T @ D2[i]
        if k_of[i] >= 0:  # Ṫ_i D'_i (the term that the printed eq. 4.23 drops)
            D2[lam] = D2[lam] + (mats[i][1] * qdf[:, k_of[i], None, None]) @ D1[i]
        D1[lam] = D1[lam] + T @ D1[i]
    p = np.zeros((N, nv))
    pdot = np.zeros((N, nv))
    for i in range(nb):
        k = k_of[i]
        if k < 0:
            continue
        lam = parent[i]
        Al, Bl = (I4, Z4) if lam < 0 else (A[lam], B[lam])
        AT1 = Al @ mats[i][1]
        dAT1 = Bl @ mats[i][1] + (Al @ mats[i][2]) * qdf[:, k, None, None]
        p[:, k] = _tr(AT1, D1[i])
        pdot[:, k] = _tr(AT1, D[i] + D2[i]) + _tr(dAT1, D1[i])
    return p.reshape(batch + (nv,)), pdot.reshape(batch + (nv,))
