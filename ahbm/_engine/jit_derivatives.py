"""Compiled (numba) kernel of the analytic RNEA derivatives (internal).

Forward-mode tangent propagation through the recursive Newton-Euler
algorithm, written by hand (the derivation and the flop count are in
:mod:`ahbm.dynamics.derivatives`). Per frame: one RNEA pass that keeps the
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
