"""Compiled (numba) articulated-body (ABA) kernels (internal)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import (
    _CACHE,
    _block_base,
    _block_body_force,
    _block_gather,
    _block_joint_velocity,
    _block_motion,
    _block_transforms,
    _finite,
    _force_to_parent_add,
    _inputs_ok,
    _joint_velocity,
    _motion_to_child,
    _plucker,
    _S_col,
    _transforms,
    _unpack,
    sincos,
)


@njit(cache=_CACHE, nogil=True)
def aba_kernel(ints, E, tax, I6, q, qd, tau, fx, use_fx, g, qdd):
    """qdd (N, nv) <- ABA frame by frame (few frames, e.g. one state).

    The plan comes packed as for :func:`~ahbm._engine.jit_rnea.rnea_frame_kernel`.

    Returns -1; or the index of a node whose ``D = Sᵀ I^A S`` is singular;
    -2 when an input is not finite or a quaternion is zero (see
    :func:`~ahbm._engine.jit_common._inputs_ok`); -3 when an acceleration
    is not finite.
    """
    parent, kind, principal, qi, vi, nvj, plain, _massive, t, axis = _unpack(ints, tax)
    if not _inputs_ok(kind, qi, q, qd, tau):
        return -2
    n = parent.shape[0]
    N = q.shape[0]
    R = np.zeros((n, 3, 3))
    p = np.zeros((n, 3))
    v = np.zeros((n, 6))
    c = np.zeros((n, 6))
    a = np.zeros((n, 6))
    IA = np.zeros((n, 6, 6))
    pA = np.zeros((n, 6))
    U = np.zeros((n, 6, 3))
    Dinv = np.zeros((n, 3, 3))
    u = np.zeros((n, 3))
    X = np.zeros((6, 6))
    T = np.zeros((6, 6))
    Ia = np.zeros((6, 6))
    pa2 = np.zeros((1, 6))
    h = np.zeros(6)
    s = np.zeros(6)
    D = np.zeros((3, 3))
    base = np.zeros((2, 6))  # row 0: zero velocity, row 1: -gravity
    base[1, 3] = -g[0]
    base[1, 4] = -g[1]
    base[1, 5] = -g[2]
    for fr in range(N):
        qf = q[fr]
        # pass 1: velocities, bias accelerations, rigid inertias and bias forces
        _transforms(0, n, kind, E, t, plain, axis, principal, qf, qi, R, p)
        for k in range(n):
            lam = parent[k]
            if lam < 0:
                _motion_to_child(R, p, k, base, 0, v, k)
            else:
                _motion_to_child(R, p, k, v, lam, v, k)
            j = vi[k]
            # v += vJ = S q̇; c = v × vJ
            _joint_velocity(kind, axis, k, qd, fr, j, v, c, False)
            x0, x1, x2, x3, x4, x5 = v[k, 0], v[k, 1], v[k, 2], v[k, 3], v[k, 4], v[k, 5]
            for r in range(6):
                sv = 0.0
                for cc in range(6):
                    sv += I6[k, r, cc] * v[k, cc]
                    IA[k, r, cc] = I6[k, r, cc]
                h[r] = sv
            pA[k, 0] = x1 * h[2] - x2 * h[1] + x4 * h[5] - x5 * h[4]
            pA[k, 1] = x2 * h[0] - x0 * h[2] + x5 * h[3] - x3 * h[5]
            pA[k, 2] = x0 * h[1] - x1 * h[0] + x3 * h[4] - x4 * h[3]
            pA[k, 3] = x1 * h[5] - x2 * h[4]
            pA[k, 4] = x2 * h[3] - x0 * h[5]
            pA[k, 5] = x0 * h[4] - x1 * h[3]
            if use_fx:
                for r in range(6):
                    pA[k, r] -= fx[fr, k, r]
        # pass 2: articulated inertias, leaves to root
        for k in range(n - 1, -1, -1):
            m = nvj[k]
            j = vi[k]
            for cc in range(m):
                _S_col(kind, axis, k, cc, s)
                for r in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += IA[k, r, l] * s[l]
                    U[k, r, cc] = acc
                acc = 0.0
                for r in range(6):
                    acc += s[r] * pA[k, r]
                u[k, cc] = tau[fr, j + cc] - acc
            for c1 in range(m):
                _S_col(kind, axis, k, c1, s)
                for c2 in range(m):
                    acc = 0.0
                    for r in range(6):
                        acc += s[r] * U[k, r, c2]
                    D[c1, c2] = acc
            if m == 1:
                if D[0, 0] == 0.0:
                    return k
                Dinv[k, 0, 0] = 1.0 / D[0, 0]
            else:
                det = (
                    D[0, 0] * (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1])
                    - D[0, 1] * (D[1, 0] * D[2, 2] - D[1, 2] * D[2, 0])
                    + D[0, 2] * (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0])
                )
                if det == 0.0:
                    return k
                Dinv[k, 0, 0] = (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1]) / det
                Dinv[k, 0, 1] = (D[0, 2] * D[2, 1] - D[0, 1] * D[2, 2]) / det
                Dinv[k, 0, 2] = (D[0, 1] * D[1, 2] - D[0, 2] * D[1, 1]) / det
                Dinv[k, 1, 0] = (D[1, 2] * D[2, 0] - D[1, 0] * D[2, 2]) / det
                Dinv[k, 1, 1] = (D[0, 0] * D[2, 2] - D[0, 2] * D[2, 0]) / det
                Dinv[k, 1, 2] = (D[0, 2] * D[1, 0] - D[0, 0] * D[1, 2]) / det
                Dinv[k, 2, 0] = (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0]) / det
                Dinv[k, 2, 1] = (D[0, 1] * D[2, 0] - D[0, 0] * D[2, 1]) / det
                Dinv[k, 2, 2] = (D[0, 0] * D[1, 1] - D[0, 1] * D[1, 0]) / det
            lam = parent[k]
            if lam < 0:
                continue
            # Ia = IA - U D⁻¹ Uᵀ ; pa = pA + Ia c + U D⁻¹ u
            for r in range(6):
                for cc in range(6):
                    acc = IA[k, r, cc]
                    for c1 in range(m):
                        for c2 in range(m):
                            acc -= U[k, r, c1] * Dinv[k, c1, c2] * U[k, cc, c2]
                    Ia[r, cc] = acc
            for r in range(6):
                acc = pA[k, r]
                for cc in range(6):
                    acc += Ia[r, cc] * c[k, cc]
                for c1 in range(m):
                    for c2 in range(m):
                        acc += U[k, r, c1] * Dinv[k, c1, c2] * u[k, c2]
                pa2[0, r] = acc
            _plucker(R, p, k, X)
            for r in range(6):
                for cc in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += Ia[r, l] * X[l, cc]
                    T[r, cc] = acc
            for r in range(6):
                for cc in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += X[l, r] * T[l, cc]
                    IA[lam, r, cc] += acc
            _force_to_parent_add(R, p, k, pa2, 0, pA, lam)
        # pass 3: accelerations, root to leaves
        for k in range(n):
            lam = parent[k]
            if lam < 0:
                _motion_to_child(R, p, k, base, 1, a, k)
            else:
                _motion_to_child(R, p, k, a, lam, a, k)
            for r in range(6):
                a[k, r] += c[k, r]
            m = nvj[k]
            j = vi[k]
            for c1 in range(m):
                acc = u[k, c1]
                for r in range(6):
                    acc -= U[k, r, c1] * a[k, r]
                h[c1] = acc
            for c1 in range(m):
                acc = 0.0
                for c2 in range(m):
                    acc += Dinv[k, c1, c2] * h[c2]
                qdd[fr, j + c1] = acc
            for c1 in range(m):
                _S_col(kind, axis, k, c1, s)
                for r in range(6):
                    a[k, r] += s[r] * qdd[fr, j + c1]
    return -1 if _finite(qdd) else -3


@njit(cache=_CACHE, nogil=True)
def aba_block_kernel(
    parent, kind, E, t, plain, axis, principal, qi, vi, nvj, I6, fast,
    q, qd, tau, fx, use_fx, g, qdd,
):  # fmt: skip
    """qdd (N, nv) <- ABA, frames in blocks of _ABA_B (innermost loops over frames).

    Returns -1, or the index of a node whose ``D = Sᵀ I^A S`` is singular.
    Same algorithm as :func:`aba_kernel` (Featherstone 2008, Table 7.1);
    the per-frame quantities are laid out (..., frame) so that the loops
    over the frames of a block have no branches and vectorize.
    """
    n = parent.shape[0]
    N = q.shape[0]
    nq = q.shape[1]
    nv = qd.shape[1]
    B = min(_ABA_B, max(N, 1))
    R = np.zeros((n, 3, 3, B))
    p = np.zeros((n, 3, B))
    v = np.zeros((n, 6, B))
    c = np.zeros((n, 6, B))
    a = np.zeros((n, 6, B))
    IA = np.zeros((n, 6, 6, B))
    pA = np.zeros((n, 6, B))
    U = np.zeros((n, 6, 3, B))
    Dinv = np.zeros((n, 3, 3, B))
    u = np.zeros((n, 3, B))
    X = np.zeros((6, 6, B))
    T = np.zeros((6, 6, B))
    Ia = np.zeros((6, 6, B))
    pa = np.zeros((1, 6, B))
    D = np.zeros((3, 3, B))
    h = np.zeros((6, B))
    qb = np.zeros((nq, B))
    qdb = np.zeros((nv, B))
    taub = np.zeros((nv, B))
    base = _block_base(g, B)
    ang = np.zeros(B)
    sb = np.zeros(B)
    cb = np.zeros(B)
    s = np.zeros(6)
    for f0 in range(0, N, B):
        m = min(B, N - f0)
        _block_gather(q, qd, tau, f0, m, qb, qdb, taub)
        # pass 1: transforms, velocities, bias accelerations and forces
        for k in range(n):
            Rk = R[k]
            pk = p[k]
            if fast[k]:
                ax = principal[k]
                i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
                j_ = 3 - ax - i_
                for i in range(m):
                    ang[i] = qb[qi[k], i]
                sincos(ang, m, sb, cb)
                for r in range(3):
                    for cc in range(3):
                        for i in range(m):
                            Rk[r, cc, i] = 0.0
                    for i in range(m):
                        pk[r, i] = t[k, r]
                for i in range(m):
                    Rk[ax, ax, i] = 1.0
                    Rk[i_, i_, i] = cb[i]
                    Rk[j_, j_, i] = cb[i]
                    Rk[i_, j_, i] = -sb[i]
                    Rk[j_, i_, i] = sb[i]
            else:
                _block_transforms(k, kind, E, t, plain, axis, qi, qb, m, R, p)
            lam = parent[k]
            dv = v[k]
            _block_motion(Rk, pk, base[0] if lam < 0 else v[lam], dv, m)
            _block_joint_velocity(kind[k], axis[k], vi[k], qdb, m, dv, c[k], False)
            IAk = IA[k]
            for r in range(6):
                for cc in range(6):
                    val = I6[k, r, cc]
                    for i in range(m):
                        IAk[r, cc, i] = val
            _block_body_force(I6, k, dv, dv, False, fx, use_fx, f0, pA[k], m)
        # pass 2: articulated inertias, leaves to root
        for k in range(n - 1, -1, -1):
            mk = nvj[k]
            j = vi[k]
            IAk = IA[k]
            Uk = U[k]
            for cc in range(mk):
                _S_col(kind, axis, k, cc, s)
                for r in range(6):
                    for i in range(m):
                        Uk[r, cc, i] = 0.0
                    for l in range(6):
                        if s[l] != 0.0:
                            sl = s[l]
                            for i in range(m):
                                Uk[r, cc, i] += IAk[r, l, i] * sl
                for i in range(m):
                    u[k, cc, i] = taub[j + cc, i]
                for l in range(6):
                    if s[l] != 0.0:
                        sl = s[l]
                        for i in range(m):
                            u[k, cc, i] -= sl * pA[k, l, i]
            for c1 in range(mk):
                _S_col(kind, axis, k, c1, s)
                for c2 in range(mk):
                    for i in range(m):
                        D[c1, c2, i] = 0.0
                    for l in range(6):
                        if s[l] != 0.0:
                            sl = s[l]
                            for i in range(m):
                                D[c1, c2, i] += sl * Uk[l, c2, i]
            Dk = Dinv[k]
            if mk == 1:
                for i in range(m):
                    if D[0, 0, i] == 0.0:
                        return k
                for i in range(m):
                    Dk[0, 0, i] = 1.0 / D[0, 0, i]
            else:
                for i in range(m):
                    det = (
                        D[0, 0, i] * (D[1, 1, i] * D[2, 2, i] - D[1, 2, i] * D[2, 1, i])
                        - D[0, 1, i] * (D[1, 0, i] * D[2, 2, i] - D[1, 2, i] * D[2, 0, i])
                        + D[0, 2, i] * (D[1, 0, i] * D[2, 1, i] - D[1, 1, i] * D[2, 0, i])
                    )
                    if det == 0.0:
                        return k
                    Dk[0, 0, i] = (D[1, 1, i] * D[2, 2, i] - D[1, 2, i] * D[2, 1, i]) / det
                    Dk[0, 1, i] = (D[0, 2, i] * D[2, 1, i] - D[0, 1, i] * D[2, 2, i]) / det
                    Dk[0, 2, i] = (D[0, 1, i] * D[1, 2, i] - D[0, 2, i] * D[1, 1, i]) / det
                    Dk[1, 0, i] = (D[1, 2, i] * D[2, 0, i] - D[1, 0, i] * D[2, 2, i]) / det
                    Dk[1, 1, i] = (D[0, 0, i] * D[2, 2, i] - D[0, 2, i] * D[2, 0, i]) / det
                    Dk[1, 2, i] = (D[0, 2, i] * D[1, 0, i] - D[0, 0, i] * D[1, 2, i]) / det
                    Dk[2, 0, i] = (D[1, 0, i] * D[2, 1, i] - D[1, 1, i] * D[2, 0, i]) / det
                    Dk[2, 1, i] = (D[0, 1, i] * D[2, 0, i] - D[0, 0, i] * D[2, 1, i]) / det
                    Dk[2, 2, i] = (D[0, 0, i] * D[1, 1, i] - D[0, 1, i] * D[1, 0, i]) / det
            lam = parent[k]
            if lam < 0:
                continue
            # Ia = IA - U D⁻¹ Uᵀ ; pa = pA + Ia c + U D⁻¹ u  (UD = U D⁻¹ kept in T[:, :3])
            for r in range(6):
                for c1 in range(mk):
                    for i in range(m):
                        T[r, c1, i] = 0.0
                    for c2 in range(mk):
                        for i in range(m):
                            T[r, c1, i] += Uk[r, c2, i] * Dk[c2, c1, i]
            for r in range(6):
                for cc in range(6):
                    for i in range(m):
                        Ia[r, cc, i] = IAk[r, cc, i]
                    for c1 in range(mk):
                        for i in range(m):
                            Ia[r, cc, i] -= T[r, c1, i] * Uk[cc, c1, i]
            for r in range(6):
                for i in range(m):
                    pa[0, r, i] = pA[k, r, i]
                for cc in range(6):
                    for i in range(m):
                        pa[0, r, i] += Ia[r, cc, i] * c[k, cc, i]
                for c1 in range(mk):
                    for i in range(m):
                        pa[0, r, i] += T[r, c1, i] * u[k, c1, i]
            # X = node_X_parent: [[Rᵀ, 0], [-Rᵀ [p]x, Rᵀ]]
            Rk = R[k]
            pk = p[k]
            for r in range(3):
                for cc in range(3):
                    for i in range(m):
                        X[r, cc, i] = Rk[cc, r, i]
                        X[r + 3, cc + 3, i] = Rk[cc, r, i]
                        X[r, cc + 3, i] = 0.0
                for i in range(m):
                    a0_, a1_, a2_ = Rk[0, r, i], Rk[1, r, i], Rk[2, r, i]
                    px, py, pz = pk[0, i], pk[1, i], pk[2, i]
                    X[r + 3, 0, i] = -(a1_ * pz - a2_ * py)
                    X[r + 3, 1, i] = -(a2_ * px - a0_ * pz)
                    X[r + 3, 2, i] = -(a0_ * py - a1_ * px)
            # IA[lam] += Xᵀ Ia X
            for r in range(6):
                for cc in range(6):
                    for i in range(m):
                        T[r, cc, i] = 0.0
                    for l in range(6):
                        for i in range(m):
                            T[r, cc, i] += Ia[r, l, i] * X[l, cc, i]
            IAp = IA[lam]
            for r in range(6):
                for cc in range(6):
                    for l in range(6):
                        for i in range(m):
                            IAp[r, cc, i] += X[l, r, i] * T[l, cc, i]
            # pA[lam] += Xᵀ pa
            for r in range(6):
                for l in range(6):
                    for i in range(m):
                        pA[lam, r, i] += X[l, r, i] * pa[0, l, i]
        # pass 3: accelerations, root to leaves
        for k in range(n):
            lam = parent[k]
            ak = a[k]
            _block_motion(R[k], p[k], base[1] if lam < 0 else a[lam], ak, m)
            for r in range(6):
                for i in range(m):
                    ak[r, i] += c[k, r, i]
            mk = nvj[k]
            j = vi[k]
            for c1 in range(mk):
                for i in range(m):
                    h[c1, i] = u[k, c1, i]
                for r in range(6):
                    for i in range(m):
                        h[c1, i] -= U[k, r, c1, i] * ak[r, i]
            for c1 in range(mk):
                for i in range(m):
                    acc = 0.0
                    for c2 in range(mk):
                        acc += Dinv[k, c1, c2, i] * h[c2, i]
                    qdd[f0 + i, j + c1] = acc
            for c1 in range(mk):
                _S_col(kind, axis, k, c1, s)
                for r in range(6):
                    if s[r] != 0.0:
                        sr = s[r]
                        for i in range(m):
                            ak[r, i] += sr * qdd[f0 + i, j + c1]
    return -1


_ABA_B = 64  # frames per block of aba_block_kernel
