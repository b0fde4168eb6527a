"""Compiled (numba) kernels of the analytic RNEA derivatives (internal).

Two codings (the derivations and the flop count are in
:mod:`ahbm.dynamics.derivatives`): world-frame composite quantities
(Carpentier & Mansard 2018) and ``rnea_derivatives_kernel``, forward-mode
tangent propagation through the node-frame recursive Newton-Euler
algorithm, written by hand, which the tests compare with. The first comes
twice: ``rnea_derivatives_block_kernel`` (used from 16 frames on) runs the
operations of ``rnea_derivatives_world_kernel`` (frame by frame; used below
16 frames) in the same order on blocks of ``_DERIV_B`` frames, every
per-frame quantity laid out ``(..., frame)`` so that the loops over the
frames of a block compile to SIMD instructions; the two give bitwise the
same results. The block kernel and the Cholesky inverse of a batch of
matrices (``spd_inverse_kernel``) are in :mod:`ahbm._engine.jit_derivatives_block`.

The tangent kernel: Per frame: one RNEA pass that keeps the
transforms ``X_k``, ``X_k v_λ``, ``X_k a_λ``, the joint velocities ``S_k q̇_k``
and the accumulated forces; then, for every node coordinate ``θ_j`` (tangent
coordinates: a quaternion node has three), one tangent of ``∂/∂θ_j`` and one
of ``∂/∂θ̇_j``, propagated forward over the subtree of node ``j`` only and back
over that subtree and the ancestors of ``j`` only (every other node's
quantities do not depend on ``θ_j``).

Identities used (node coordinates; ``s`` the motion-subspace column of the
coordinate, constant in the node frame; ``×`` = crm, ``×*`` = crf):

* ``∂(X_j y)/∂θ_j = −s × (X_j y)`` for a motion vector ``y`` of the parent
  (revolute, prismatic, and a quaternion moved by ``Q ⊗ exp(s δ/2)``),
* ``∂(X_jᵀ f)/∂θ_j = X_jᵀ (s ×* f)`` for a force ``f`` of node ``j``,
* a force fixed in the world (``fx_world``) seen in node ``k`` below ``j``:
  ``∂f_k/∂θ_j = −s_k ×* f_k`` with ``s_k = ^kX_j s``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import (
    _CACHE,
    PRI,
    REV,
    SPH,
    _body_force,
    _force_to_parent_add,
    _inputs_ok,
    _joint_velocity,
    _motion_to_child,
    _S_col,
    _transforms,
    _unpack,
)


@njit(cache=_CACHE)
def _crm_add(x, y, out, k):
    """out[k] += x × y (motion cross product; x, y 6-vectors)."""
    w0, w1, w2, u0, u1, u2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[k, 0] += w1 * y[2] - w2 * y[1]
    out[k, 1] += w2 * y[0] - w0 * y[2]
    out[k, 2] += w0 * y[1] - w1 * y[0]
    out[k, 3] += w1 * y[5] - w2 * y[4] + u1 * y[2] - u2 * y[1]
    out[k, 4] += w2 * y[3] - w0 * y[5] + u2 * y[0] - u0 * y[2]
    out[k, 5] += w0 * y[4] - w1 * y[3] + u0 * y[1] - u1 * y[0]


@njit(cache=_CACHE)
def _crf_add(x, y, out):
    """out += x ×* y (force cross product; x motion, y force)."""
    w0, w1, w2, u0, u1, u2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] += w1 * y[2] - w2 * y[1] + u1 * y[5] - u2 * y[4]
    out[1] += w2 * y[0] - w0 * y[2] + u2 * y[3] - u0 * y[5]
    out[2] += w0 * y[1] - w1 * y[0] + u0 * y[4] - u1 * y[3]
    out[3] += w1 * y[5] - w2 * y[4]
    out[4] += w2 * y[3] - w0 * y[5]
    out[5] += w0 * y[4] - w1 * y[3]


@njit(cache=_CACHE)
def _inertia(I6, k, x, out):
    """out = I_k x (6 × 6 spatial inertia of node k)."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += I6[k, r, c] * x[c]
        out[r] = s


@njit(cache=_CACHE)
def _d_force(I6, k, v, dv, da, Iv, Idv, df):
    """df[k] = I da + dv ×* (I v) + v ×* (I dv) (tangent of f = I a + v ×* I v)."""
    _inertia(I6, k, da[k], df[k])
    _inertia(I6, k, dv[k], Idv)
    _crf_add(dv[k], Iv[k], df[k])
    _crf_add(v[k], Idv, df[k])


@njit(cache=_CACHE)
def _project(kind, axis, k, j, f, out, fr, col):
    """out[fr, j.., col] = S_kᵀ f (the generalized force of node k for the force f)."""
    kd = kind[k]
    if kd == SPH:
        for r in range(3):
            out[fr, j + r, col] = f[r]
    elif kd == REV:
        out[fr, j, col] = axis[k, 0] * f[0] + axis[k, 1] * f[1] + axis[k, 2] * f[2]
    else:
        out[fr, j, col] = axis[k, 0] * f[3] + axis[k, 1] * f[4] + axis[k, 2] * f[5]


@njit(cache=_CACHE, nogil=True)
def rnea_derivatives_kernel(
    ints, E, tax, I6, sub_ptr, sub_idx, q, qd, qdd, fx, use_fx, fx_world, g, tau, dq, dqd
):  # fmt: skip
    """tau (N, nv), dq = ∂τ/∂θ and dqd = ∂τ/∂θ̇ (N, nv, nv) in the node coordinates.

    ``sub_idx[sub_ptr[j]:sub_ptr[j + 1]]`` lists the nodes of the subtree of
    node ``j`` (``j`` first, increasing). ``fx`` (N, n, 6) are the external
    forces in node coordinates at q; ``fx_world`` says they are fixed in the
    world (their node coordinates then change with θ). Returns 0, or 1 when
    an input is not finite or a quaternion is zero.
    """
    parent, kind, principal, qi, vi, nvj, plain, massive, t, axis = _unpack(ints, tax)
    if not _inputs_ok(kind, qi, q, qd, qdd):
        return 1
    n = parent.shape[0]
    nv = qd.shape[1]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    v = np.empty((n, 6))
    a = np.empty((n, 6))
    Xv = np.empty((n, 6))  # X_k v_λ
    Xa = np.empty((n, 6))  # X_k a_λ
    vJ = np.zeros((n, 6))  # S_k q̇_k
    f = np.empty((n, 6))  # accumulated force of the subtree (after the backward pass)
    Iv = np.empty((n, 6))
    fl = np.empty((n, 6))  # external force of each node (node coordinates)
    dv = np.zeros((n, 6))
    da = np.zeros((n, 6))
    df = np.zeros((n, 6))
    ev = np.zeros((n, 6))  # tangents of the velocity direction
    ea = np.zeros((n, 6))
    ef = np.zeros((n, 6))
    sk = np.zeros((n, 6))  # the direction s seen in node k (world-fixed forces)
    s = np.zeros(6)
    W = np.zeros((4, 6))  # tangent forces: (θ, θ̇) × (node k, its parent)
    Idv = np.zeros(6)
    scratch = np.zeros((n, 6))
    base = np.zeros((2, 6))
    for r in range(3):
        base[1, 3 + r] = -g[r]
    for fr in range(q.shape[0]):
        _transforms(0, n, kind, E, t, plain, axis, principal, q[fr], qi, R, p)
        qddf = qdd[fr]
        # ---- RNEA, keeping what the tangents need
        for k in range(n):
            lam = parent[k]
            if lam < 0:
                _motion_to_child(R, p, k, base, 0, Xv, k)
                _motion_to_child(R, p, k, base, 1, Xa, k)
            else:
                _motion_to_child(R, p, k, v, lam, Xv, k)
                _motion_to_child(R, p, k, a, lam, Xa, k)
            for r in range(6):
                v[k, r] = Xv[k, r]
                a[k, r] = Xa[k, r]
                vJ[k, r] = 0.0
            # a += S q̈ and (below) tau = Sᵀ f written out as in jit_rnea: as helper
            # functions they cost RNEA ≈ 2 µs per 34-DOF state (5.0 → 6.9 µs)
            j = vi[k]
            kd = kind[k]
            if kd == SPH:
                for r in range(3):
                    a[k, r] += qddf[j + r]
            elif kd == REV:
                for r in range(3):
                    a[k, r] += axis[k, r] * qddf[j]
            else:
                for r in range(3):
                    a[k, 3 + r] += axis[k, r] * qddf[j]
            _joint_velocity(kind, axis, k, qd, fr, j, vJ, scratch, False)  # vJ = S q̇
            _joint_velocity(kind, axis, k, qd, fr, j, v, a, True)
            if massive[k]:
                _body_force(I6, k, v, a, f)
                _inertia(I6, k, v[k], Iv[k])
            else:
                for r in range(6):
                    f[k, r] = 0.0
                    Iv[k, r] = 0.0
            for r in range(6):
                fl[k, r] = fx[fr, k, r] if use_fx else 0.0
                f[k, r] -= fl[k, r]
        for k in range(n - 1, -1, -1):
            j = vi[k]
            kd = kind[k]
            if kd == SPH:
                for r in range(3):
                    tau[fr, j + r] = f[k, r]
            elif kd == REV:
                tau[fr, j] = axis[k, 0] * f[k, 0] + axis[k, 1] * f[k, 1] + axis[k, 2] * f[k, 2]
            else:
                tau[fr, j] = axis[k, 0] * f[k, 3] + axis[k, 1] * f[k, 4] + axis[k, 2] * f[k, 5]
            if parent[k] >= 0:
                _force_to_parent_add(R, p, k, f, k, f, parent[k])
        for r in range(nv):
            for c in range(nv):
                dq[fr, r, c] = 0.0
                dqd[fr, r, c] = 0.0
        # ---- one tangent pair (θ_j, θ̇_j) per node coordinate
        for jn in range(n):
            for cc in range(nvj[jn]):
                col = vi[jn] + cc
                _S_col(kind, axis, jn, cc, s)
                # forward over the subtree of jn
                for ii in range(sub_ptr[jn], sub_ptr[jn + 1]):
                    k = sub_idx[ii]
                    for r in range(6):
                        dv[k, r] = 0.0
                        da[k, r] = 0.0
                        ea[k, r] = 0.0
                    if k == jn:
                        # ∂/∂θ: −s × (X v_λ), −s × (X a_λ) + dv × vJ
                        _crm_add(Xv[k], s, dv, k)
                        _crm_add(Xa[k], s, da, k)
                        # ∂/∂θ̇: s, s × vJ + v × s
                        for r in range(6):
                            ev[k, r] = s[r]
                        _crm_add(v[k], s, ea, k)  # (+ s × vJ below)
                        if fx_world:
                            for r in range(6):
                                sk[k, r] = s[r]
                    else:
                        lam = parent[k]
                        _motion_to_child(R, p, k, dv, lam, dv, k)
                        _motion_to_child(R, p, k, da, lam, da, k)
                        _motion_to_child(R, p, k, ev, lam, ev, k)
                        _motion_to_child(R, p, k, ea, lam, ea, k)
                        if fx_world:
                            _motion_to_child(R, p, k, sk, lam, sk, k)
                    _crm_add(dv[k], vJ[k], da, k)
                    _crm_add(ev[k], vJ[k], ea, k)
                    if massive[k]:
                        _d_force(I6, k, v, dv, da, Iv, Idv, df)
                        _d_force(I6, k, v, ev, ea, Iv, Idv, ef)
                    else:
                        for r in range(6):
                            df[k, r] = 0.0
                            ef[k, r] = 0.0
                    if use_fx and fx_world:
                        _crf_add(sk[k], fl[k], df[k])  # ∂(−f_ext) = s_k ×* f_ext
                # backward over the subtree (children before parents)
                for ii in range(sub_ptr[jn + 1] - 1, sub_ptr[jn] - 1, -1):
                    k = sub_idx[ii]
                    _project(kind, axis, k, vi[k], df[k], dq, fr, col)
                    _project(kind, axis, k, vi[k], ef[k], dqd, fr, col)
                    if k != jn:
                        _force_to_parent_add(R, p, k, df, k, df, parent[k])
                        _force_to_parent_add(R, p, k, ef, k, ef, parent[k])
                # up the ancestors: y = X_jᵀ (df_j + s ×* f_j), z = X_jᵀ ef_j
                k = jn
                for r in range(6):
                    W[0, r] = df[k, r]
                    W[2, r] = ef[k, r]
                _crf_add(s, f[k], W[0])
                while parent[k] >= 0:
                    lam = parent[k]
                    for r in range(6):
                        W[1, r] = 0.0
                        W[3, r] = 0.0
                    _force_to_parent_add(R, p, k, W, 0, W, 1)
                    _force_to_parent_add(R, p, k, W, 2, W, 3)
                    _project(kind, axis, lam, vi[lam], W[1], dq, fr, col)
                    _project(kind, axis, lam, vi[lam], W[3], dqd, fr, col)
                    for r in range(6):
                        W[0, r] = W[1, r]
                        W[2, r] = W[3, r]
                    k = lam
    return 0


# ----------------------------------------------------------------------------
# World-frame kernel (composite form): O(n) per frame + a few dot products per
# (coordinate, affected coordinate) pair
# ----------------------------------------------------------------------------


@njit(cache=_CACHE)
def _cross_m(x, y, out):
    """out = x × y (motion cross product of 6-vectors)."""
    w0, w1, w2, u0, u1, u2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] = w1 * y[2] - w2 * y[1]
    out[1] = w2 * y[0] - w0 * y[2]
    out[2] = w0 * y[1] - w1 * y[0]
    out[3] = w1 * y[5] - w2 * y[4] + u1 * y[2] - u2 * y[1]
    out[4] = w2 * y[3] - w0 * y[5] + u2 * y[0] - u0 * y[2]
    out[5] = w0 * y[4] - w1 * y[3] + u0 * y[1] - u1 * y[0]


@njit(cache=_CACHE)
def _dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(cache=_CACHE)
def _matvec6(M, x, out, sign, add):
    """out (+)= sign · M x (6 × 6)."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += M[r, c] * x[c]
        out[r] = (out[r] if add else 0.0) + sign * s


@njit(cache=_CACHE, nogil=True)
def rnea_derivatives_world_kernel(
    ints, E, tax, I6, sub_ptr, sub_idx, q, qd, qdd, fx, use_fx, fx_world, g, tau, dq, dqd, M
):  # fmt: skip
    """tau, ∂τ/∂θ, ∂τ/∂θ̇ and M (node coordinates) from world-frame composite quantities.

    Per node (world coordinates, about the world origin): the DOF columns
    ``S``, ``v``, ``a`` (``a_base = −g``), the spatial inertia ``I`` and
    ``N = I (v×) − (Iv)⊼ − (v×*) I`` (``(h⊼) x = x ×* h``), summed over the
    subtrees into ``I^c``, ``N^c`` and the forces ``F``. With ``ξ`` the column
    of coordinate ``j`` (node ``J``, parent velocity ``v_λ``, acceleration
    ``a_λ``), ``u = ξ × v_λ``, ``γ = ξ × a_λ − u × v_λ``, ``e = (v_J + v_λ) × ξ``:

    * rows ``i`` in the subtree of ``J``: ``∂τ_i/∂θ_j = S_iᵀ (N^c_i u − I^c_i γ)``,
      ``∂τ_i/∂θ̇_j = S_iᵀ (−N^c_i ξ + I^c_i e)``, ``M_ij = S_iᵀ I^c_i ξ``;
    * rows ``i`` above ``J``: the same with ``N^c_J``, ``I^c_J`` and, for ``∂θ``,
      ``+ ξ ×* F_J``;
    * world-fixed external forces add ``S_iᵀ (ξ ×* F^x_i)`` (``F^x`` the subtree's
      external force) to the rows in the subtree and ``ξ ×* F^x_J`` above.

    ``fx`` (N, n, 6) are node forces in node coordinates (see
    ``rnea_derivatives_kernel``). Per frame, the entries of coordinates on
    one path of the tree (an ancestor and a descendant, or one node) are
    written into (nv, nv) buffers that stay in cache (zero elsewhere), then
    copied contiguously into ``dq``, ``dqd`` and ``M`` (column-wise scattered
    writes into the large outputs cost a quarter of the time). Returns 0, or 1 on a
    non-finite input or a zero quaternion.
    """
    parent, kind, principal, qi, vi, nvj, plain, massive, t, axis = _unpack(ints, tax)
    if not _inputs_ok(kind, qi, q, qd, qdd):
        return 1
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    Rw = np.empty((n, 3, 3))
    pw = np.empty((n, 3))
    S = np.zeros((n, 3, 6))  # world DOF columns (up to 3)
    v = np.empty((n, 6))
    a = np.empty((n, 6))
    Ic = np.empty((n, 6, 6))
    Nc = np.empty((n, 6, 6))
    F = np.empty((n, 6))
    Fx = np.zeros((n, 6))
    r1 = np.empty((n, 3, 6))  # N^cᵀ S
    r2 = np.empty((n, 3, 6))  # I^c S
    r3 = np.zeros((n, 3, 6))  # −S ×* F^x
    nv = qd.shape[1]
    o1 = np.zeros((nv, nv))  # ∂τ/∂θ, ∂τ/∂θ̇, M of one frame (written in cache, then copied)
    o2 = np.zeros((nv, nv))
    o3 = np.zeros((nv, nv))
    abase = np.zeros(6)
    for r in range(3):
        abase[3 + r] = -g[r]
    zero6 = np.zeros(6)
    Iv = np.empty(6)
    tmp = np.empty(6)
    col = np.empty(6)
    u = np.empty(6)
    gam = np.empty(6)
    e = np.empty(6)
    y = np.empty(6)
    yd = np.empty(6)
    xi_ = np.empty(6)
    Jo = np.empty((3, 3))
    for fr in range(q.shape[0]):
        _transforms(0, n, kind, E, t, plain, axis, principal, q[fr], qi, R, p)
        qdf = qd[fr]
        qddf = qdd[fr]
        for k in range(n):
            lam = parent[k]
            # ---- world pose
            if lam < 0:
                for r in range(3):
                    pw[k, r] = p[k, r]
                    for c in range(3):
                        Rw[k, r, c] = R[k, r, c]
                vl = zero6
                al = abase
            else:
                for r in range(3):
                    s = pw[lam, r]
                    for c in range(3):
                        s += Rw[lam, r, c] * p[k, c]
                    pw[k, r] = s
                    for c in range(3):
                        Rw[k, r, c] = (
                            Rw[lam, r, 0] * R[k, 0, c]
                            + Rw[lam, r, 1] * R[k, 1, c]
                            + Rw[lam, r, 2] * R[k, 2, c]
                        )
                vl = v[lam]
                al = a[lam]
            # ---- world DOF columns
            kd = kind[k]
            m_ = nvj[k]
            for cc in range(m_):
                for r in range(3):
                    if kd == SPH:
                        dr = Rw[k, r, cc]
                    else:
                        dr = (
                            Rw[k, r, 0] * axis[k, 0]
                            + Rw[k, r, 1] * axis[k, 1]
                            + Rw[k, r, 2] * axis[k, 2]
                        )
                    col[r] = dr
                if kd == PRI:
                    for r in range(3):
                        S[k, cc, r] = 0.0
                        S[k, cc, 3 + r] = col[r]
                else:
                    px, py, pz = pw[k, 0], pw[k, 1], pw[k, 2]
                    S[k, cc, 0], S[k, cc, 1], S[k, cc, 2] = col[0], col[1], col[2]
                    S[k, cc, 3] = py * col[2] - pz * col[1]
                    S[k, cc, 4] = pz * col[0] - px * col[2]
                    S[k, cc, 5] = px * col[1] - py * col[0]
            # ---- v, a (world): v = v_λ + S q̇, a = a_λ + S q̈ + v_λ × S q̇
            j = vi[k]
            for r in range(6):
                s1 = 0.0
                s2 = 0.0
                for cc in range(m_):
                    s1 += S[k, cc, r] * qdf[j + cc]
                    s2 += S[k, cc, r] * qddf[j + cc]
                tmp[r] = s1
                v[k, r] = vl[r] + s1
                a[k, r] = al[r] + s2
            _cross_m(vl, tmp, col)
            for r in range(6):
                a[k, r] += col[r]
            # ---- world inertia about the world origin
            Ik = Ic[k]
            if massive[k]:
                mass = I6[k, 3, 3]
                hl0, hl1, hl2 = I6[k, 2, 4], I6[k, 0, 5], I6[k, 1, 3]  # first moment (node)
                Rk = Rw[k]
                h0 = Rk[0, 0] * hl0 + Rk[0, 1] * hl1 + Rk[0, 2] * hl2
                h1 = Rk[1, 0] * hl0 + Rk[1, 1] * hl1 + Rk[1, 2] * hl2
                h2 = Rk[2, 0] * hl0 + Rk[2, 1] * hl1 + Rk[2, 2] * hl2
                px, py, pz = pw[k, 0], pw[k, 1], pw[k, 2]
                for r in range(3):
                    for c in range(3):
                        Jo[r, c] = (
                            Rk[r, 0] * I6[k, 0, c] + Rk[r, 1] * I6[k, 1, c] + Rk[r, 2] * I6[k, 2, c]
                        )
                pp = px * px + py * py + pz * pz
                ph = px * h0 + py * h1 + pz * h2
                P = (px, py, pz)
                Hh = (h0, h1, h2)
                for r in range(3):
                    for c in range(3):
                        s = Jo[r, 0] * Rk[c, 0] + Jo[r, 1] * Rk[c, 1] + Jo[r, 2] * Rk[c, 2]
                        s += -mass * P[r] * P[c] - P[r] * Hh[c] - Hh[r] * P[c]
                        if r == c:
                            s += mass * pp + 2.0 * ph
                        Ik[r, c] = s
                c0, c1, c2 = mass * px + h0, mass * py + h1, mass * pz + h2
                for r in range(3):
                    for c in range(3):
                        Ik[3 + r, 3 + c] = mass if r == c else 0.0
                Ik[0, 3], Ik[0, 4], Ik[0, 5] = 0.0, -c2, c1
                Ik[1, 3], Ik[1, 4], Ik[1, 5] = c2, 0.0, -c0
                Ik[2, 3], Ik[2, 4], Ik[2, 5] = -c1, c0, 0.0
                for r in range(3):
                    for c in range(3):
                        Ik[3 + r, c] = Ik[c, 3 + r]
                # f = I a + v ×* I v ; N = I (v×) − (Iv)⊼ − (v×*) I
                _matvec6(Ik, v[k], Iv, 1.0, False)
                _matvec6(Ik, a[k], F[k], 1.0, False)
                _crf_add(v[k], Iv, F[k])
                # N = A + Aᵀ − (Iv)⊼ with A = I (v×) (−(v×*) I = (v×)ᵀ I = Aᵀ, I symmetric);
                # row r of A: [I_r,ω × w + I_r,u × u_v, I_r,u × w] (v = [w; u_v])
                Nk = Nc[k]
                w0, w1, w2 = v[k, 0], v[k, 1], v[k, 2]
                u0, u1, u2 = v[k, 3], v[k, 4], v[k, 5]
                for r in range(6):
                    x0, x1, x2 = Ik[r, 0], Ik[r, 1], Ik[r, 2]
                    z0, z1, z2 = Ik[r, 3], Ik[r, 4], Ik[r, 5]
                    Nk[r, 0] = x1 * w2 - x2 * w1 + z1 * u2 - z2 * u1
                    Nk[r, 1] = x2 * w0 - x0 * w2 + z2 * u0 - z0 * u2
                    Nk[r, 2] = x0 * w1 - x1 * w0 + z0 * u1 - z1 * u0
                    Nk[r, 3] = z1 * w2 - z2 * w1
                    Nk[r, 4] = z2 * w0 - z0 * w2
                    Nk[r, 5] = z0 * w1 - z1 * w0
                for r in range(6):
                    for c in range(r + 1):
                        sym = Nk[r, c] + Nk[c, r]
                        Nk[r, c] = sym
                        Nk[c, r] = sym
                # − (Iv)⊼ : x ↦ x ×* Iv = [−ñ ω − f̃ u; −f̃ ω] with Iv = [n; f]
                n0, n1, n2, f0, f1, f2 = Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5]
                Nk[0, 1] -= n2
                Nk[0, 2] += n1
                Nk[1, 0] += n2
                Nk[1, 2] -= n0
                Nk[2, 0] -= n1
                Nk[2, 1] += n0
                for rr in range(2):
                    r0 = 0 if rr == 0 else 3
                    c0_ = 3 if rr == 0 else 0
                    Nk[r0 + 0, c0_ + 1] -= f2
                    Nk[r0 + 0, c0_ + 2] += f1
                    Nk[r0 + 1, c0_ + 0] += f2
                    Nk[r0 + 1, c0_ + 2] -= f0
                    Nk[r0 + 2, c0_ + 0] -= f1
                    Nk[r0 + 2, c0_ + 1] += f0
            else:
                for r in range(6):
                    F[k, r] = 0.0
                    for c in range(6):
                        Ik[r, c] = 0.0
                        Nc[k, r, c] = 0.0
            if use_fx:
                # node force (node coordinates) -> world: n_w = R n + p × f_w, f_w = R f
                Rk = Rw[k]
                for r in range(3):
                    col[3 + r] = (
                        Rk[r, 0] * fx[fr, k, 3] + Rk[r, 1] * fx[fr, k, 4] + Rk[r, 2] * fx[fr, k, 5]
                    )
                    col[r] = (
                        Rk[r, 0] * fx[fr, k, 0] + Rk[r, 1] * fx[fr, k, 1] + Rk[r, 2] * fx[fr, k, 2]
                    )
                px, py, pz = pw[k, 0], pw[k, 1], pw[k, 2]
                col[0] += py * col[5] - pz * col[4]
                col[1] += pz * col[3] - px * col[5]
                col[2] += px * col[4] - py * col[3]
                for r in range(6):
                    F[k, r] -= col[r]
                    Fx[k, r] = col[r] if fx_world else 0.0
        # ---- composites (children before parents)
        for k in range(n - 1, -1, -1):
            lam = parent[k]
            if lam >= 0:
                for r in range(6):
                    F[lam, r] += F[k, r]
                    Fx[lam, r] += Fx[k, r]
                    for c in range(6):
                        Ic[lam, r, c] += Ic[k, r, c]
                        Nc[lam, r, c] += Nc[k, r, c]
        for k in range(n):
            j = vi[k]
            for cc in range(nvj[k]):
                Sk = S[k, cc]
                tau[fr, j + cc] = _dot6(Sk, F[k])
                for r in range(6):
                    s1 = 0.0
                    s2 = 0.0
                    for c in range(6):
                        s1 += Nc[k, c, r] * Sk[c]
                        s2 += Ic[k, r, c] * Sk[c]
                    r1[k, cc, r] = s1
                    r2[k, cc, r] = s2
                if fx_world and use_fx:
                    for r in range(6):
                        tmp[r] = 0.0
                    _crf_add(Sk, Fx[k], tmp)
                    for r in range(6):
                        r3[k, cc, r] = -tmp[r]
        # ---- one column per node coordinate (entries off the paths stay zero)
        wfx = fx_world and use_fx
        for jn in range(n):
            lam = parent[jn]
            vl = zero6 if lam < 0 else v[lam]
            al = abase if lam < 0 else a[lam]
            for cj in range(nvj[jn]):
                cl = vi[jn] + cj
                xi = S[jn, cj]
                for r in range(6):
                    xi_[r] = xi[r]
                _cross_m(xi, vl, u)
                _cross_m(xi, al, gam)
                _cross_m(u, vl, tmp)
                for r in range(6):
                    gam[r] -= tmp[r]
                    col[r] = v[jn, r] + vl[r]
                _cross_m(col, xi, e)
                # rows in the subtree of J; M is symmetric: M_ij and M_ji at once
                for ii in range(sub_ptr[jn], sub_ptr[jn + 1]):
                    i = sub_idx[ii]
                    ji = vi[i]
                    for cc in range(nvj[i]):
                        s1 = 0.0
                        s2 = 0.0
                        s3 = 0.0
                        for r in range(6):  # (indexing, not views: no reference counting)
                            a1 = r1[i, cc, r]
                            a2 = r2[i, cc, r]
                            s1 += a1 * u[r] - a2 * gam[r]
                            s2 += a2 * e[r] - a1 * xi_[r]
                            s3 += a2 * xi_[r]
                        if wfx:
                            for r in range(6):
                                s1 += r3[i, cc, r] * xi_[r]
                        o1[ji + cc, cl] = s1
                        o2[ji + cc, cl] = s2
                        o3[ji + cc, cl] = s3
                        o3[cl, ji + cc] = s3
                if lam < 0:
                    continue
                # rows above J (their M entries are those of the subtree loops above)
                # y = N^c u − I^c γ + ξ ×* F, yd = I^c e − N^c ξ (one pass over N^c, I^c)
                for r in range(6):
                    s1 = 0.0
                    s2 = 0.0
                    for c in range(6):
                        nrc = Nc[jn, r, c]
                        irc = Ic[jn, r, c]
                        s1 += nrc * u[c] - irc * gam[c]
                        s2 += irc * e[c] - nrc * xi[c]
                    y[r] = s1
                    yd[r] = s2
                _crf_add(xi, F[jn], y)
                if wfx:
                    _crf_add(xi, Fx[jn], y)
                i = lam
                while i >= 0:
                    ji = vi[i]
                    for cc in range(nvj[i]):
                        s1 = 0.0
                        s2 = 0.0
                        for r in range(6):
                            sr = S[i, cc, r]
                            s1 += sr * y[r]
                            s2 += sr * yd[r]
                        o1[ji + cc, cl] = s1
                        o2[ji + cc, cl] = s2
                    i = parent[i]
        # ---- out: one contiguous copy per frame (o1..o3 stay zero off the paths)
        for r in range(nv):
            for c in range(nv):
                dq[fr, r, c] = o1[r, c]
                dqd[fr, r, c] = o2[r, c]
                M[fr, r, c] = o3[r, c]
    return 0
