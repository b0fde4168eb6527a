"""Compiled (numba) recursive Newton-Euler kernels (internal)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import (
    _CACHE,
    REV,
    SPH,
    _block_base,
    _block_body_force,
    _block_gather,
    _block_joint_velocity,
    _block_motion,
    _block_transforms,
    _body_force,
    _force_to_parent_add,
    _inputs_ok,
    _joint_velocity,
    _motion_to_child,
    _transforms,
    _unpack,
    sincos,
)


@njit(cache=_CACHE, nogil=True)
def rnea_block_kernel(
    parent, kind, E, t, plain, axis, principal, qi, vi, I6, fast, massive,
    q, qd, qdd, fx, use_fx, g, tau, check,
):  # fmt: skip
    """tau (N, nv) <- RNEA, frames in blocks of _B (innermost loops run over frames).

    Layout inside a block: spatial vectors (node, component, frame). All
    branches (joint type, axis) are taken once per node and block; the
    loops over the frames of a block have none, so the compiler vectorizes
    them. Returns 0; with ``check``, 1 (and nothing computed) when an input
    is not finite or a quaternion is zero (see
    :func:`~ahbm._engine.jit_common._inputs_ok`).
    """
    if check and not _inputs_ok(kind, qi, q, qd, qdd):
        return 1
    n = parent.shape[0]
    N = q.shape[0]
    nq = q.shape[1]
    nv = qd.shape[1]
    B = min(_B, max(N, 1))
    v = np.zeros((n, 6, B))
    a = np.zeros((n, 6, B))
    f = np.zeros((n, 6, B))
    R = np.zeros((n, 3, 3, B))
    p = np.zeros((n, 3, B))
    C = np.zeros((n, B))
    S = np.zeros((n, B))
    qb = np.zeros((nq, B))
    qdb = np.zeros((nv, B))
    qddb = np.zeros((nv, B))
    taub = np.zeros((nv, B))
    base = _block_base(g, B)
    tN = np.zeros((3, B))
    tF = np.zeros((3, B))
    ang = np.zeros(B)
    for f0 in range(0, N, B):
        m = min(B, N - f0)
        _block_gather(q, qd, qdd, f0, m, qb, qdb, qddb)
        # ---- forward pass
        for k in range(n):
            lam = parent[k]
            sv = base[0] if lam < 0 else v[lam]
            sa = base[1] if lam < 0 else a[lam]
            dv = v[k]
            da = a[k]
            j = vi[k]
            if fast[k]:
                ax = principal[k]
                i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
                j_ = 3 - ax - i_
                tx, ty, tz = t[k, 0], t[k, 1], t[k, 2]
                for i in range(m):
                    ang[i] = qb[qi[k], i]
                sincos(ang, m, S[k], C[k])
                cb = C[k]
                sb = S[k]
                for src, dst in ((sv, dv), (sa, da)):
                    for i in range(m):
                        w0, w1, w2 = src[0, i], src[1, i], src[2, i]
                        dst[3, i] = src[3, i] + w1 * tz - w2 * ty
                        dst[4, i] = src[4, i] + w2 * tx - w0 * tz
                        dst[5, i] = src[5, i] + w0 * ty - w1 * tx
                    for i in range(m):
                        c_ = cb[i]
                        s_ = sb[i]
                        wi = src[i_, i]
                        wj = src[j_, i]
                        dst[ax, i] = src[ax, i]
                        dst[i_, i] = c_ * wi + s_ * wj
                        dst[j_, i] = c_ * wj - s_ * wi
                        li = dst[3 + i_, i]
                        lj = dst[3 + j_, i]
                        dst[3 + i_, i] = c_ * li + s_ * lj
                        dst[3 + j_, i] = c_ * lj - s_ * li
                # v += e_ax q̇; a += e_ax q̈ + v × e_ax q̇
                for i in range(m):
                    w = qdb[j, i]
                    dv[ax, i] += w
                    da[ax, i] += qddb[j, i]
                    da[i_, i] += dv[j_, i] * w
                    da[j_, i] -= dv[i_, i] * w
                    da[3 + i_, i] += dv[3 + j_, i] * w
                    da[3 + j_, i] -= dv[3 + i_, i] * w
            else:
                _block_transforms(k, kind, E, t, plain, axis, qi, qb, m, R, p)
                _block_motion(R[k], p[k], sv, dv, m)
                _block_motion(R[k], p[k], sa, da, m)
                # a += S q̈; v += vJ = S q̇; a += v × vJ
                kd = kind[k]
                for i in range(m):
                    if kd == SPH:
                        for r in range(3):
                            da[r, i] += qddb[j + r, i]
                    elif kd == REV:
                        for r in range(3):
                            da[r, i] += axis[k, r] * qddb[j, i]
                    else:
                        for r in range(3):
                            da[3 + r, i] += axis[k, r] * qddb[j, i]
                _block_joint_velocity(kd, axis[k], j, qdb, m, dv, da, True)
            # f = I a + v ×* (I v) - f_ext
            if massive[k] or use_fx:
                _block_body_force(I6, k, dv, da, True, fx, use_fx, f0, f[k], m)
            else:
                for r in range(6):
                    for i in range(m):
                        f[k, r, i] = 0.0
        # ---- backward pass
        for k in range(n - 1, -1, -1):
            j = vi[k]
            lam = parent[k]
            df = f[k]
            kd = kind[k]
            if kd == SPH:
                for r in range(3):
                    for i in range(m):
                        taub[j + r, i] = df[r, i]
            elif kd == REV:
                x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
                for i in range(m):
                    taub[j, i] = x * df[0, i] + y * df[1, i] + z * df[2, i]
            else:
                x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
                for i in range(m):
                    taub[j, i] = x * df[3, i] + y * df[4, i] + z * df[5, i]
            if lam < 0:
                continue
            if fast[k]:
                ax = principal[k]
                i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
                j_ = 3 - ax - i_
                cb = C[k]
                sb = S[k]
                for i in range(m):
                    c_ = cb[i]
                    s_ = sb[i]
                    tN[ax, i] = df[ax, i]
                    tN[i_, i] = c_ * df[i_, i] - s_ * df[j_, i]
                    tN[j_, i] = s_ * df[i_, i] + c_ * df[j_, i]
                    tF[ax, i] = df[3 + ax, i]
                    tF[i_, i] = c_ * df[3 + i_, i] - s_ * df[3 + j_, i]
                    tF[j_, i] = s_ * df[3 + i_, i] + c_ * df[3 + j_, i]
            else:
                Rk = R[k]
                for i in range(m):
                    for r in range(3):
                        tN[r, i] = (
                            Rk[r, 0, i] * df[0, i] + Rk[r, 1, i] * df[1, i] + Rk[r, 2, i] * df[2, i]
                        )
                        tF[r, i] = (
                            Rk[r, 0, i] * df[3, i] + Rk[r, 1, i] * df[4, i] + Rk[r, 2, i] * df[5, i]
                        )
            pf = f[lam]
            if fast[k]:
                tx, ty, tz = t[k, 0], t[k, 1], t[k, 2]
                for i in range(m):
                    F0, F1, F2 = tF[0, i], tF[1, i], tF[2, i]
                    pf[0, i] += tN[0, i] + ty * F2 - tz * F1
                    pf[1, i] += tN[1, i] + tz * F0 - tx * F2
                    pf[2, i] += tN[2, i] + tx * F1 - ty * F0
                    pf[3, i] += F0
                    pf[4, i] += F1
                    pf[5, i] += F2
            else:
                pk = p[k]
                for i in range(m):
                    F0, F1, F2 = tF[0, i], tF[1, i], tF[2, i]
                    px, py, pz = pk[0, i], pk[1, i], pk[2, i]
                    pf[0, i] += tN[0, i] + py * F2 - pz * F1
                    pf[1, i] += tN[1, i] + pz * F0 - px * F2
                    pf[2, i] += tN[2, i] + px * F1 - py * F0
                    pf[3, i] += F0
                    pf[4, i] += F1
                    pf[5, i] += F2
        for i in range(m):
            for c in range(nv):
                tau[f0 + i, c] = taub[c, i]
    return 0


_B = 64  # frames per block of rnea_block_kernel (measured best of 8-256)


@njit(cache=_CACHE, nogil=True)
def rnea_frame_kernel(ints, E, tax, I6, q, qd, qdd, fx, use_fx, g, tau):
    """tau (N, nv) <- RNEA frame by frame (few frames, e.g. one state).

    The same recursion as :func:`rnea_block_kernel` with scalar per-node
    quantities (no block set-up). The plan comes packed (fewer arguments, a
    cheaper call): ``ints`` (8, n) holds parent, kind, principal, qi, vi,
    nvj, plain, massive; ``tax`` (2, n, 3) holds t and axis. Returns 0, or 1 when an input is not
    finite or a quaternion is zero: the caller then validates the input in
    full and names the argument.
    """
    parent, kind, principal, qi, vi, _nvj, plain, massive, t, axis = _unpack(ints, tax)
    if not _inputs_ok(kind, qi, q, qd, qdd):
        return 1
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    v = np.empty((n, 6))
    a = np.empty((n, 6))
    f = np.empty((n, 6))
    base = np.zeros((2, 6))  # row 0: zero velocity, row 1: -gravity
    for r in range(3):
        base[1, 3 + r] = -g[r]
    for fr in range(q.shape[0]):
        qf = q[fr]
        qddf = qdd[fr]
        _transforms(0, n, kind, E, t, plain, axis, principal, qf, qi, R, p)
        for k in range(n):
            kd = kind[k]
            lam = parent[k]
            if lam < 0:
                _motion_to_child(R, p, k, base, 0, v, k)
                _motion_to_child(R, p, k, base, 1, a, k)
            else:
                _motion_to_child(R, p, k, v, lam, v, k)
                _motion_to_child(R, p, k, a, lam, a, k)
            # a += S q̈; v += vJ = S q̇; a += v × vJ
            j = vi[k]
            if kd == SPH:
                for r in range(3):
                    a[k, r] += qddf[j + r]
            elif kd == REV:
                for r in range(3):
                    a[k, r] += axis[k, r] * qddf[j]
            else:
                for r in range(3):
                    a[k, 3 + r] += axis[k, r] * qddf[j]
            _joint_velocity(kind, axis, k, qd, fr, j, v, a, True)
            # f = I a + v ×* (I v) - f_ext
            if massive[k]:
                _body_force(I6, k, v, a, f)
            else:
                for r in range(6):
                    f[k, r] = 0.0
            if use_fx:
                for r in range(6):
                    f[k, r] -= fx[fr, k, r]
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
            lam = parent[k]
            if lam >= 0:
                _force_to_parent_add(R, p, k, f, k, f, lam)
    return 0
