"""Recursive Lagrangian inverse dynamics with analytic gradients (Hollerbach 1980; Chung 2009).

A second, independent formulation of inverse dynamics for trees of revolute,
prismatic and fixed joints (DH chains included, e.g. the 55-DOF
:func:`ahbm.models.santos_model`) with external loads: 4 × 4 homogeneous
matrices instead of spatial vectors, and the gradients ``∂τ/∂q``, ``∂τ/∂q̇``,
``∂τ/∂q̈`` by differentiating the recursions themselves (Chung 2009, ch. 3,
eq. 3.24). The tests check it against the RNEA (:func:`ahbm.dynamics.rnea`),
its analytic derivatives (:func:`ahbm.dynamics.rnea_derivatives`) and finite
differences.

Equations (Chung 2009, eqs 2.6, 3.19–3.23, 3.25–3.26)
-----------------------------------------------------
``T_i(q_i)`` is the pose of body ``i`` in its parent body ``λ`` (for ahbm's
revolute joint ``T_i = P_i Rot(a_i, q_i) C_i``: the joint's parent offset,
the rotation about the joint axis, the inverse child offset; for a DH row,
eq. 2.5), ``T'_i = P_i Rot Q_i C_i``, ``T''_i = P_i Rot Q_i² C_i`` with
``Q_i = [[â_i, 0], [0, 0]]``. A prismatic joint has ``T_i = P_i (1 + q_i Q_i)
C_i`` with ``Q_i = [[0, a_i], [0, 0]]``: ``Q_i² = 0``, so ``T'_i = P_i Q_i C_i``
and ``T''_i`` and ``T'''_i`` vanish. Forward (eq. 2.6):

    A_i = A_λ T_i,   B_i = Ȧ_i = B_λ T_i + A_λ T'_i q̇_i,
    C_i = Ä_i = C_λ T_i + 2 B_λ T'_i q̇_i + A_λ T''_i q̇_i² + A_λ T'_i q̈_i.

Backward (eqs 3.19–3.20; in a tree the ``i+1`` terms are summed over the
children ``c`` of ``i``, which the thesis does not write out):

    D_i = J_i C_iᵀ + Σ_c T_c D_c,   E_i = m_i r̄_i + Σ_c T_c E_c,

    τ_i = tr(A_λ T'_i D_i) − gᵀ A_λ T'_i E_i                      (3.23)

with the pseudo-inertia about the body origin (3.25–3.26) ``J_i = [[Σ_i,
m c_i], [m c_iᵀ, m]]``, ``Σ_i = ∫ r rᵀ dm = ½ tr(I_o) 𝟙 − I_o`` (``I_o`` the
inertia about the body origin), homogeneous ``r̄ = [c; 1]`` and ``g =
[g; 0]``.

External loads (eqs 3.21–3.23) are generalized forces ``Q_i = Σ_j tr(∂A_j/∂q_i
X_j)`` over the bodies ``j`` of the subtree of ``i``, with ``∂A_j/∂q_i = A_λ
T'_i ⁱT_j``; so a body's load term ``X_j`` enters the backward recursion
beside ``J_j C_jᵀ``: ``D_j = J_j C_jᵀ − X_j + Σ_c T_c D_c``, and eq. 3.23
then gives ``τ = M q̈ + h − Q`` (the sign of :func:`ahbm.dynamics.rnea`).
Since ``∂A_j/∂q_i = ξ̂_i A_j`` with the joint's world twist ``ξ̂_i = [[S(ω),
v], [0, 0]]``, a wrench ``[n; f]`` pairs with it through ``W = [[−½ S(n),
0], [fᵀ, 0]]`` (``tr(ξ̂ W) = ω·n + v·f``):

- a force ``f`` fixed in the world applied at a point ``r`` fixed on the body
  (Chung's ``F``, eq 3.21): ``X = r̄ f̄ᵀ``, ``f̄ = [f; 0]``, constant;
- a wrench fixed in the world, moment about the world origin (a pure moment
  is Chung's ``G``, eq 3.22): ``X = A_j⁻¹ W``;
- a wrench fixed on the body (body axes, moment about the body origin):
  ``X = W_b A_j⁻¹``.

The gradients are forward-mode derivatives of these recursions (Chung's
eq. 3.24a–k, which enumerates the cases ``k < i``, ``k = i``, ``k > i`` of the
same chain rule); direction ``q_k``:

    δA_i = δA_λ T_i + [i = k] A_λ T'_i,
    δB_i = δB_λ T_i + δA_λ T'_i q̇_i + [i = k] (B_λ T'_i + A_λ T''_i q̇_i),
    δC_i = δC_λ T_i + 2 δB_λ T'_i q̇_i + δA_λ (T''_i q̇_i² + T'_i q̈_i)
           + [i = k] (C_λ T'_i + 2 B_λ T''_i q̇_i + A_λ (T'''_i q̇_i² + T''_i q̈_i)),
    δD_i = J_i δC_iᵀ + Σ_c (T_c δD_c + [c = k] T'_c D_c),   δE_i likewise,
    δτ_i = tr(δ(A_λ T'_i) D_i + A_λ T'_i δD_i) − gᵀ (δ(A_λ T'_i) E_i + A_λ T'_i δE_i),

with ``δ(A_λ T'_i) = δA_λ T'_i + [i = k] A_λ T''_i`` and, for the loads that
move with q, ``δX = −A⁻¹ δA X`` (world wrench) or ``−X δA A⁻¹`` (body
wrench) in the seed of ``δD``; directions ``q̇_k`` and
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
from ahbm._internal.validation import as_float_array
from ahbm.dynamics.derivatives import RNEADerivatives
from ahbm.dynamics.inverse import _check_f_ext
from ahbm.errors import AhbmError, DataError, ModelError
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
    """T, T', T'', T''' (N, 4, 4) of body i at the coordinates q (N,) (or T only, fixed)."""
    b = model.bodies[i]
    P = _hom(b.rotation, b.position)
    Cr = b.child_rotation
    C = _hom(Cr.T, -Cr.T @ b.child_position)
    if model.bodies[i].joint.type == "fixed":
        return (np.broadcast_to(P @ C, (q.shape[0], 4, 4)),)
    a = np.asarray(b.joint.axis, float)
    K = np.zeros((4, 4))
    if b.joint.type == "prismatic":  # Tr(a q) = 1 + q K with K² = 0: T'' = T''' = 0
        K[:3, 3] = a
        PKC = P @ K @ C
        T = P @ C + q[:, None, None] * PKC
        zero = np.zeros_like(T)
        return T, np.broadcast_to(PKC, T.shape), zero, zero
    K[:3, :3] = _skew(a)
    s, c = np.sin(q)[:, None, None], np.cos(q)[:, None, None]
    K2 = K @ K
    Rot = np.eye(4) + s * K + (1.0 - c) * K2  # Rodrigues, (N, 4, 4)
    PR = P @ Rot
    return PR @ C, PR @ K @ C, PR @ K2 @ C, PR @ (K2 @ K) @ C


def _tr(X, Y):
    """tr(X Y) over the last two axes."""
    return np.einsum("...ij,...ji->...", X, Y)


def lagrangian_dynamics(
    model: Model,
    q,
    qd,
    qdd,
    *,
    f_ext=None,
    f_ext_frame: str = "world",
    point_forces=None,
    gradients: bool = True,
) -> RNEADerivatives:
    """Inverse dynamics and its gradients by the recursive Lagrangian formulation.

    Parameters
    ----------
    model : Model
        A tree of ``revolute``, ``prismatic`` and ``fixed`` joints (e.g. a DH
        model such as :func:`ahbm.models.santos_model`).
    q : array_like, shape (..., nq)
        Joint coordinates, rad (revolute) or m (prismatic).
    qd, qdd : array_like, shape (..., nv), or None
        Their rates and accelerations; None means zeros.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces ``[n; f]`` on the bodies, as
        :func:`ahbm.dynamics.rnea`: with ``f_ext_frame="world"`` in world
        axes with the moment about the world origin, fixed in the world when
        q moves; with ``"local"`` in the body axes with the moment about the
        body origin, moving with the body.
    f_ext_frame : {"world", "local"}
    point_forces : sequence of (body, point, force), optional
        Forces fixed in direction in the world, applied at points fixed on
        bodies (Chung's external forces, eq 3.21): ``body`` a name or
        index, ``point`` (3,) in the body frame (m), ``force`` (..., 3) in
        world axes (N). A pure moment fixed in the world (Chung's eq 3.22)
        is an ``f_ext`` of world frame with zero force.
    gradients : bool, optional
        Compute ``∂τ/∂q``, ``∂τ/∂q̇`` and ``M = ∂τ/∂q̈`` (default); with False
        they are None.

    Returns
    -------
    RNEADerivatives
        ``tau`` (..., nv) and ``dtau_dq``, ``dtau_dqd``, ``mass_matrix``
        (..., nv, nv), as :func:`ahbm.dynamics.rnea_derivatives` (``τ =
        M q̈ + h − Qₑₓₜ``: the loads enter as generalized forces, their
        dependence on q included in ``dtau_dq``).

    Raises
    ------
    ModelError
        A joint other than revolute, prismatic or fixed (naming the body).
    DataError
        Arrays of the wrong shape or non-finite values; a bad
        ``point_forces`` entry (naming it).

    Notes
    -----
    Chung (2009) eqs 2.6, 3.19–3.26 and the gradients of eq. 3.24; the
    external loads of eqs 3.21–3.22 enter the backward recursion as a
    per-body term ``X`` subtracted from ``J C_iᵀ`` (module docstring).

    Examples
    --------
    >>> from ahbm.kinematics import Model
    >>> m = Model(gravity=[0, 0, -9.81])
    >>> _ = m.add_body("a", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=1.0,
    ...                com=[0, 0.5, 0])
    >>> r = lagrangian_dynamics(m, [0.0], [0.0], [0.0])
    >>> round(float(r.tau[0]), 6)  # m g l
    4.905
    >>> up = [("a", [0.0, 0.5, 0.0], [0.0, 0.0, 9.81])]  # a hand holding it up at its COM
    >>> round(float(lagrangian_dynamics(m, [0.0], None, None, point_forces=up).tau[0]), 12)
    0.0
    """
    st = _forward(model, q, qd, qdd)
    batch, N, nv, nb, g4, I4, k_of, parent, mats, A, B, C, qdf, qddf = st

    def par(X, i, default):
        return default if parent[i] < 0 else X[parent[i]]

    # ---- backward recursion (eqs 3.19-3.20), children summed
    J = [_pseudo_inertia(model.masses[i], model.coms[i], model.inertias[i]) for i in range(nb)]
    D = [J[i] @ np.swapaxes(C[i], 1, 2) for i in range(nb)]
    loads = _loads(model, f_ext, f_ext_frame, point_forces, batch, A)
    for i, X in enumerate(loads[0]):
        if X is not None:
            D[i] = D[i] - X
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
    dq = _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qdf, qddf, g4, "q", loads)
    dqd = _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qdf, qddf, g4, "qd")
    M = _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qdf, qddf, g4, "qdd")
    mat = batch + (nv, nv)
    return RNEADerivatives(
        dq.reshape(mat), dqd.reshape(mat), M.reshape(mat), tau.reshape(batch + (nv,))
    )


def _wrench_matrix(w):
    """W (N, 4, 4) with tr(ξ̂ W) = ω·n + v·f for a twist ξ̂ = [[S(ω), v], [0, 0]], w = [n; f]."""
    n, f = w[:, :3], w[:, 3:]
    W = np.zeros((w.shape[0], 4, 4))
    W[:, 0, 1], W[:, 0, 2], W[:, 1, 2] = 0.5 * n[:, 2], -0.5 * n[:, 1], 0.5 * n[:, 0]
    W[:, 1, 0], W[:, 2, 0], W[:, 2, 1] = -W[:, 0, 1], -W[:, 0, 2], -W[:, 1, 2]
    W[:, 3, :3] = f
    return W


def _rigid_inverse(A):
    R, p = A[:, :3, :3], A[:, :3, 3]
    out = np.zeros_like(A)
    out[:, :3, :3] = np.swapaxes(R, 1, 2)
    out[:, :3, 3] = -np.einsum("nji,nj->ni", R, p)
    out[:, 3, 3] = 1.0
    return out


def _loads(model, f_ext, frame, point_forces, batch, A):
    """Per-body load terms X (N, 4, 4) of the backward recursion, and their q-dependent parts.

    The generalized force of the loads on body j is ``tr(∂A_j/∂q_i X_j)``:
    a world wrench ``W`` (moment about the origin) gives ``X = A_j⁻¹ W``, a
    local one ``X = W_b A_j⁻¹`` (both depend on q), a world force ``f`` at a
    body point ``r`` gives ``X = r̄ f̄ᵀ`` (constant). Returns ``(X, A⁻¹, X_world,
    X_local)``, lists by body with None where there is nothing.
    """
    nb, N = model.n_bodies, A[0].shape[0] if A else 0
    X, Ainv, Xw, Xl = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    f = _check_f_ext(model, f_ext, batch, frame)
    if f is not None:
        for i in range(nb):
            if not f[:, i].any():
                continue
            Ainv[i] = _rigid_inverse(A[i])
            W = _wrench_matrix(f[:, i])
            if frame == "world":
                Xw[i] = Ainv[i] @ W
            else:
                Xl[i] = W @ Ainv[i]
            X[i] = Xw[i] if Xl[i] is None else Xl[i]
    if point_forces is not None:
        if isinstance(point_forces, (str, bytes, dict)) or not hasattr(point_forces, "__iter__"):
            raise DataError(
                f"`point_forces` must be a sequence of (body, point, force), got "
                f"{point_forces!r:.80}"
            )
        for k, entry in enumerate(point_forces):
            where = f"point_forces[{k}]"
            try:
                body, point, force = entry
            except (TypeError, ValueError) as err:
                raise DataError(f"{where} must be (body, point, force), got {entry!r:.80}") from err
            try:
                i = model.body_index(body)
            except (AhbmError, KeyError, IndexError, TypeError) as err:
                raise DataError(f"{where}: unknown body {body!r} of model '{model.name}'") from err
            r = as_float_array(point, f"{where} point")
            fw = as_float_array(force, f"{where} force")
            if r.shape != (3,) or fw.shape[-1:] != (3,):
                raise DataError(
                    f"{where}: point must have shape (3,) and force (..., 3); got "
                    f"{r.shape} and {fw.shape}"
                )
            try:
                fw = np.broadcast_to(fw, batch + (3,)).reshape(N, 3)
            except ValueError as err:
                raise DataError(
                    f"{where}: batch shape of the force {fw.shape[:-1]} does not broadcast to "
                    f"that of q {batch}"
                ) from err
            Xc = np.zeros((N, 4, 4))
            Xc[:, :3, :3] = r[:, None] * fw[:, None, :]
            Xc[:, 3, :3] = fw
            X[i] = Xc if X[i] is None else X[i] + Xc
    return X, Ainv, Xw, Xl


def _gradient(model, mats, k_of, parent, A, B, C, D, E, J, qd, qdd, g4, wrt, loads=None):
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
    if loads is not None:  # -δX of the loads that move with q (world and local wrenches)
        _, Ainv, Xw, Xl = loads
        for i in range(nb):
            if Xw[i] is not None:
                dD[i] = dD[i] + Ainv[i][:, None] @ dA[i] @ Xw[i][:, None]
            if Xl[i] is not None:
                dD[i] = dD[i] + Xl[i][:, None] @ dA[i] @ Ainv[i][:, None]
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
        if b.joint.type not in ("revolute", "prismatic", "fixed"):
            raise ModelError(
                f"the recursive Lagrangian takes revolute, prismatic and fixed joints only; "
                f"body '{b.name}' has a {b.joint.type!r} joint (use "
                "ahbm.dynamics.rnea_derivatives)"
            )
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd, transpose=False)
    N, nv = qf.shape[0], model.nv
    qdf = np.zeros((N, nv)) if qdf is None else qdf
    qddf = np.zeros((N, nv)) if qddf is None else qddf
    nb = model.n_bodies
    g4 = np.r_[np.asarray(model.gravity, float), 0.0]
    I4 = np.broadcast_to(np.eye(4), (N, 4, 4))
    Z4 = np.zeros((N, 4, 4))
    k_of = [int(model.v_index[i]) if b.joint.type != "fixed" else -1
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
        A tree of ``revolute``, ``prismatic`` and ``fixed`` joints.
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
