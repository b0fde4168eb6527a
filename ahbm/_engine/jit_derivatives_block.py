"""Compiled (numba) RNEA derivatives on blocks of frames, and batch SPD inverses (internal).

``rnea_derivatives_block_kernel`` (used from 16 frames on) runs the
operations of ``rnea_derivatives_world_kernel``
(:mod:`ahbm._engine.jit_derivatives`, frame by frame) in the same order on
blocks of ``_DERIV_B`` frames, every per-frame quantity laid out
``(..., frame)`` so that the loops over the frames of a block compile to SIMD
instructions; the two give bitwise the same results (Carpentier & Mansard
2018; the derivations are in :mod:`ahbm.dynamics.derivatives`).
``spd_inverse_kernel`` inverts a batch of symmetric positive-definite
matrices by Cholesky.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import (
    _CACHE,
    PRI,
    REV,
    SPH,
    _block_gather,
    _block_transforms,
    _inputs_ok,
    _unpack,
    sincos,
)
from ahbm._engine.jit_constrained import _cholesky

#: Frames per block of ``rnea_derivatives_block_kernel`` (a compile-time constant: the
#: compiler then knows the strides of the block arrays; 16 measured best of 8, 16, 32, 64).
_DERIV_B = 16


# ----------------------------------------------------------------------------
# World-frame kernel, frames in blocks (innermost loops over the frames)
# ----------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
def rnea_derivatives_block_kernel(
    ints, E, tax, I6, sub_ptr, sub_idx, q, qd, qdd, fx, use_fx, fx_world, g, tau, dq, dqd, M
):  # fmt: skip
    """``rnea_derivatives_world_kernel`` for blocks of ``B`` frames at once.

    The same formulas, statement by statement, with every per-frame quantity
    laid out ``(..., frame)``: each statement is a loop over the frames of
    the block with no branch inside (the branches on the tree structure and
    the joint kinds are taken once per node and block), which the compiler
    turns into SIMD instructions. Per block, the entries of ``∂τ/∂θ``,
    ``∂τ/∂θ̇`` and ``M`` are written into (nv, nv, B) buffers (zero off the
    paths, written once), then copied into the outputs frame by frame.
    Returns 0, or 1 on a non-finite input or a zero quaternion.
    """
    parent, kind, principal, qi, vi, nvj, plain, massive, t, axis = _unpack(ints, tax)
    if not _inputs_ok(kind, qi, q, qd, qdd):
        return 1
    n = parent.shape[0]
    N = q.shape[0]
    nq = q.shape[1]
    nv = qd.shape[1]
    B = _DERIV_B
    ang = np.empty((3, B))  # angles, their sines and cosines
    R = np.zeros((n, 3, 3, B))
    p = np.zeros((n, 3, B))
    Rw = np.empty((n, 3, 3, B))
    pw = np.empty((n, 3, B))
    S = np.zeros((n, 3, 6, B))
    v = np.zeros((n + 1, 6, B))  # row n: the ground (zero velocity, acceleration −g)
    a = np.zeros((n + 1, 6, B))
    for r in range(3):
        for i in range(B):
            a[n, 3 + r, i] = -g[r]
    Ic = np.empty((n, 6, 6, B))
    Nc = np.empty((n, 6, 6, B))
    F = np.empty((n, 6, B))
    Fx = np.zeros((n, 6, B))
    rr = np.zeros((n, 3, 2, 6, B))  # N^cᵀ S, I^c S
    r3 = np.zeros((n, 3, 6, B))  # −S ×* F^x
    o1 = np.zeros((nv, nv, B))  # ∂τ/∂θ, ∂τ/∂θ̇, M of the block (zero off the paths)
    o2 = np.zeros((nv, nv, B))
    o3 = np.zeros((nv, nv, B))
    qb = np.zeros((nq, B))
    qdb = np.zeros((nv, B))
    qddb = np.zeros((nv, B))
    taub = np.zeros((nv, B))
    Iv = np.empty((6, B))
    tmp = np.empty((6, B))
    col = np.empty((6, B))
    W = np.empty((4, 6, B))  # u, γ, e, ξ of one column
    y = np.empty((6, B))
    yd = np.empty((6, B))
    Jo = np.empty((3, 3, B))
    # prismatic nodes on a prismatic chain from the ground: their column ξ, the
    # velocities and accelerations above them are translations, so u, γ and e are 0
    shift = np.zeros(n, dtype=np.bool_)
    for k in range(n):
        shift[k] = kind[k] == PRI and (parent[k] < 0 or shift[parent[k]])
    wfx = fx_world and use_fx
    for f0 in range(0, N, B):
        m = min(B, N - f0)
        _block_gather(q, qd, qdd, f0, m, qb, qdb, qddb)
        for k in range(n):
            _block_node_transform(
                k, kind, E, t, plain, axis, principal, qi, q, qb, f0, m, ang, R, p
            )
        for k in range(n):
            lam = parent[k]
            # ---- world pose
            if lam < 0:
                for r in range(3):
                    for i in range(m):
                        pw[k, r, i] = p[k, r, i]
                    for c in range(3):
                        for i in range(m):
                            Rw[k, r, c, i] = R[k, r, c, i]
                lv = n
            else:
                for r in range(3):
                    for i in range(m):
                        pw[k, r, i] = (
                            pw[lam, r, i]
                            + Rw[lam, r, 0, i] * p[k, 0, i]
                            + Rw[lam, r, 1, i] * p[k, 1, i]
                            + Rw[lam, r, 2, i] * p[k, 2, i]
                        )
                    for c in range(3):
                        for i in range(m):
                            Rw[k, r, c, i] = (
                                Rw[lam, r, 0, i] * R[k, 0, c, i]
                                + Rw[lam, r, 1, i] * R[k, 1, c, i]
                                + Rw[lam, r, 2, i] * R[k, 2, c, i]
                            )
                lv = lam
            # ---- world DOF columns
            kd = kind[k]
            m_ = nvj[k]
            x0, x1, x2 = axis[k, 0], axis[k, 1], axis[k, 2]
            for cc in range(m_):
                if kd == SPH:
                    for r in range(3):
                        for i in range(m):
                            col[r, i] = Rw[k, r, cc, i]
                else:
                    for r in range(3):
                        for i in range(m):
                            col[r, i] = (
                                Rw[k, r, 0, i] * x0 + Rw[k, r, 1, i] * x1 + Rw[k, r, 2, i] * x2
                            )
                if kd == PRI:
                    for r in range(3):
                        for i in range(m):
                            S[k, cc, 3 + r, i] = col[r, i]
                else:
                    for i in range(m):
                        d0, d1, d2 = col[0, i], col[1, i], col[2, i]
                        px, py, pz = pw[k, 0, i], pw[k, 1, i], pw[k, 2, i]
                        S[k, cc, 0, i] = d0
                        S[k, cc, 1, i] = d1
                        S[k, cc, 2, i] = d2
                        S[k, cc, 3, i] = py * d2 - pz * d1
                        S[k, cc, 4, i] = pz * d0 - px * d2
                        S[k, cc, 5, i] = px * d1 - py * d0
            # ---- v, a (world): v = v_λ + S q̇, a = a_λ + S q̈ + v_λ × S q̇
            j = vi[k]
            for r in range(6):
                for i in range(m):
                    tmp[r, i] = 0.0
                    col[r, i] = 0.0
                for cc in range(m_):
                    for i in range(m):
                        tmp[r, i] += S[k, cc, r, i] * qdb[j + cc, i]
                        col[r, i] += S[k, cc, r, i] * qddb[j + cc, i]
                for i in range(m):
                    v[k, r, i] = v[lv, r, i] + tmp[r, i]
                    a[k, r, i] = a[lv, r, i] + col[r, i]
            for i in range(m):
                w0, w1, w2 = v[lv, 0, i], v[lv, 1, i], v[lv, 2, i]
                u0, u1, u2 = v[lv, 3, i], v[lv, 4, i], v[lv, 5, i]
                y0, y1, y2 = tmp[0, i], tmp[1, i], tmp[2, i]
                y3, y4, y5 = tmp[3, i], tmp[4, i], tmp[5, i]
                a[k, 0, i] += w1 * y2 - w2 * y1
                a[k, 1, i] += w2 * y0 - w0 * y2
                a[k, 2, i] += w0 * y1 - w1 * y0
                a[k, 3, i] += w1 * y5 - w2 * y4 + u1 * y2 - u2 * y1
                a[k, 4, i] += w2 * y3 - w0 * y5 + u2 * y0 - u0 * y2
                a[k, 5, i] += w0 * y4 - w1 * y3 + u0 * y1 - u1 * y0
            # ---- world inertia about the world origin
            if massive[k]:
                _block_world_inertia(I6, k, Rw, pw, v, a, Ic, Nc, F, Iv, Jo, m)
            else:
                for r in range(6):
                    for i in range(m):
                        F[k, r, i] = 0.0
                    for c in range(6):
                        for i in range(m):
                            Ic[k, r, c, i] = 0.0
                            Nc[k, r, c, i] = 0.0
            if use_fx:
                # node force (node coordinates) -> world: n_w = R n + p × f_w, f_w = R f
                for i in range(m):
                    fr = f0 + i
                    n0, n1, n2 = fx[fr, k, 0], fx[fr, k, 1], fx[fr, k, 2]
                    fl0, fl1, fl2 = fx[fr, k, 3], fx[fr, k, 4], fx[fr, k, 5]
                    for r in range(3):
                        col[3 + r, i] = (
                            Rw[k, r, 0, i] * fl0 + Rw[k, r, 1, i] * fl1 + Rw[k, r, 2, i] * fl2
                        )
                        col[r, i] = Rw[k, r, 0, i] * n0 + Rw[k, r, 1, i] * n1 + Rw[k, r, 2, i] * n2
                    px, py, pz = pw[k, 0, i], pw[k, 1, i], pw[k, 2, i]
                    col[0, i] += py * col[5, i] - pz * col[4, i]
                    col[1, i] += pz * col[3, i] - px * col[5, i]
                    col[2, i] += px * col[4, i] - py * col[3, i]
                for r in range(6):
                    for i in range(m):
                        F[k, r, i] -= col[r, i]
                        Fx[k, r, i] = col[r, i] if fx_world else 0.0
        # ---- composites (children before parents)
        for k in range(n - 1, -1, -1):
            lam = parent[k]
            if lam >= 0:
                for r in range(6):
                    for i in range(m):
                        F[lam, r, i] += F[k, r, i]
                        Fx[lam, r, i] += Fx[k, r, i]
                    for c in range(6):
                        for i in range(m):
                            Ic[lam, r, c, i] += Ic[k, r, c, i]
                            Nc[lam, r, c, i] += Nc[k, r, c, i]
        for k in range(n):
            j = vi[k]
            for cc in range(nvj[k]):
                for i in range(m):
                    taub[j + cc, i] = (
                        S[k, cc, 0, i] * F[k, 0, i]
                        + S[k, cc, 1, i] * F[k, 1, i]
                        + S[k, cc, 2, i] * F[k, 2, i]
                        + S[k, cc, 3, i] * F[k, 3, i]
                        + S[k, cc, 4, i] * F[k, 4, i]
                        + S[k, cc, 5, i] * F[k, 5, i]
                    )
                for r in range(6):
                    for i in range(m):
                        s1 = 0.0
                        s2 = 0.0
                        for c in range(6):
                            s1 += Nc[k, c, r, i] * S[k, cc, c, i]
                            s2 += Ic[k, r, c, i] * S[k, cc, c, i]
                        rr[k, cc, 0, r, i] = s1
                        rr[k, cc, 1, r, i] = s2
                if wfx:  # −S ×* F^x
                    for i in range(m):
                        w0, w1, w2 = S[k, cc, 0, i], S[k, cc, 1, i], S[k, cc, 2, i]
                        u0, u1, u2 = S[k, cc, 3, i], S[k, cc, 4, i], S[k, cc, 5, i]
                        h0, h1, h2 = Fx[k, 0, i], Fx[k, 1, i], Fx[k, 2, i]
                        h3, h4, h5 = Fx[k, 3, i], Fx[k, 4, i], Fx[k, 5, i]
                        r3[k, cc, 0, i] = -(w1 * h2 - w2 * h1 + u1 * h5 - u2 * h4)
                        r3[k, cc, 1, i] = -(w2 * h0 - w0 * h2 + u2 * h3 - u0 * h5)
                        r3[k, cc, 2, i] = -(w0 * h1 - w1 * h0 + u0 * h4 - u1 * h3)
                        r3[k, cc, 3, i] = -(w1 * h5 - w2 * h4)
                        r3[k, cc, 4, i] = -(w2 * h3 - w0 * h5)
                        r3[k, cc, 5, i] = -(w0 * h4 - w1 * h3)
        # ---- one column per node coordinate (entries off the paths stay zero)
        for jn in range(n):
            lam = parent[jn]
            lv = n if lam < 0 else lam
            for cj in range(nvj[jn]):
                cl = vi[jn] + cj
                # u = ξ × v_λ, γ = ξ × a_λ − u × v_λ, e = (v_J + v_λ) × ξ
                for i in range(m):
                    w0, w1, w2 = S[jn, cj, 0, i], S[jn, cj, 1, i], S[jn, cj, 2, i]
                    z0, z1, z2 = S[jn, cj, 3, i], S[jn, cj, 4, i], S[jn, cj, 5, i]
                    b0, b1, b2 = v[lv, 0, i], v[lv, 1, i], v[lv, 2, i]
                    b3, b4, b5 = v[lv, 3, i], v[lv, 4, i], v[lv, 5, i]
                    c0, c1, c2 = a[lv, 0, i], a[lv, 1, i], a[lv, 2, i]
                    c3, c4, c5 = a[lv, 3, i], a[lv, 4, i], a[lv, 5, i]
                    U0 = w1 * b2 - w2 * b1
                    U1 = w2 * b0 - w0 * b2
                    U2 = w0 * b1 - w1 * b0
                    U3 = w1 * b5 - w2 * b4 + z1 * b2 - z2 * b1
                    U4 = w2 * b3 - w0 * b5 + z2 * b0 - z0 * b2
                    U5 = w0 * b4 - w1 * b3 + z0 * b1 - z1 * b0
                    W[0, 0, i], W[0, 1, i], W[0, 2, i] = U0, U1, U2
                    W[0, 3, i], W[0, 4, i], W[0, 5, i] = U3, U4, U5
                    W[1, 0, i] = (w1 * c2 - w2 * c1) - (U1 * b2 - U2 * b1)
                    W[1, 1, i] = (w2 * c0 - w0 * c2) - (U2 * b0 - U0 * b2)
                    W[1, 2, i] = (w0 * c1 - w1 * c0) - (U0 * b1 - U1 * b0)
                    W[1, 3, i] = (w1 * c5 - w2 * c4 + z1 * c2 - z2 * c1) - (
                        U1 * b5 - U2 * b4 + U4 * b2 - U5 * b1
                    )
                    W[1, 4, i] = (w2 * c3 - w0 * c5 + z2 * c0 - z0 * c2) - (
                        U2 * b3 - U0 * b5 + U5 * b0 - U3 * b2
                    )
                    W[1, 5, i] = (w0 * c4 - w1 * c3 + z0 * c1 - z1 * c0) - (
                        U0 * b4 - U1 * b3 + U3 * b1 - U4 * b0
                    )
                    h0, h1, h2 = v[jn, 0, i] + b0, v[jn, 1, i] + b1, v[jn, 2, i] + b2
                    h3, h4, h5 = v[jn, 3, i] + b3, v[jn, 4, i] + b4, v[jn, 5, i] + b5
                    W[2, 0, i] = h1 * w2 - h2 * w1
                    W[2, 1, i] = h2 * w0 - h0 * w2
                    W[2, 2, i] = h0 * w1 - h1 * w0
                    W[2, 3, i] = h1 * z2 - h2 * z1 + h4 * w2 - h5 * w1
                    W[2, 4, i] = h2 * z0 - h0 * z2 + h5 * w0 - h3 * w2
                    W[2, 5, i] = h0 * z1 - h1 * z0 + h3 * w1 - h4 * w0
                    W[3, 0, i], W[3, 1, i], W[3, 2, i] = w0, w1, w2
                    W[3, 3, i], W[3, 4, i], W[3, 5, i] = z0, z1, z2
                # rows in the subtree of J; M is symmetric: M_ij and M_ji at once
                for ii in range(sub_ptr[jn], sub_ptr[jn + 1]):
                    k = sub_idx[ii]
                    ji = vi[k]
                    for cc in range(nvj[k]):
                        row = ji + cc
                        if shift[jn]:  # u = γ = e = 0 (exactly, also in the frame kernel)
                            for i in range(m):
                                s2 = 0.0
                                s3 = 0.0
                                for r in range(6):
                                    xr = W[3, r, i]
                                    s2 -= rr[k, cc, 0, r, i] * xr
                                    s3 += rr[k, cc, 1, r, i] * xr
                                o1[row, cl, i] = 0.0
                                o2[row, cl, i] = s2
                                o3[row, cl, i] = s3
                                o3[cl, row, i] = s3
                        else:
                            for i in range(m):
                                s1 = 0.0
                                s2 = 0.0
                                s3 = 0.0
                                for r in range(6):
                                    a1 = rr[k, cc, 0, r, i]
                                    a2 = rr[k, cc, 1, r, i]
                                    xr = W[3, r, i]
                                    s1 += a1 * W[0, r, i] - a2 * W[1, r, i]
                                    s2 += a2 * W[2, r, i] - a1 * xr
                                    s3 += a2 * xr
                                o1[row, cl, i] = s1
                                o2[row, cl, i] = s2
                                o3[row, cl, i] = s3
                                o3[cl, row, i] = s3
                        if wfx:
                            for i in range(m):
                                s1 = o1[row, cl, i]
                                for r in range(6):
                                    s1 += r3[k, cc, r, i] * S[jn, cj, r, i]
                                o1[row, cl, i] = s1
                if lam < 0:
                    continue
                # rows above J: y = N^c u − I^c γ + ξ ×* F, yd = I^c e − N^c ξ
                for r in range(6):
                    for i in range(m):
                        s1 = 0.0
                        s2 = 0.0
                        for c in range(6):
                            nrc = Nc[jn, r, c, i]
                            irc = Ic[jn, r, c, i]
                            s1 += nrc * W[0, c, i] - irc * W[1, c, i]
                            s2 += irc * W[2, c, i] - nrc * S[jn, cj, c, i]
                        y[r, i] = s1
                        yd[r, i] = s2
                _block_crf_add(S[jn, cj], F[jn], y, m)  # + ξ ×* F
                if wfx:
                    _block_crf_add(S[jn, cj], Fx[jn], y, m)
                k = lam
                while k >= 0:
                    ji = vi[k]
                    for cc in range(nvj[k]):
                        row = ji + cc
                        for i in range(m):
                            s1 = 0.0
                            s2 = 0.0
                            for r in range(6):
                                sr = S[k, cc, r, i]
                                s1 += sr * y[r, i]
                                s2 += sr * yd[r, i]
                            o1[row, cl, i] = s1
                            o2[row, cl, i] = s2
                    k = parent[k]
        # ---- out: row r of the block's frames (an L1-sized tile of o), one matrix at a time
        for i in range(m):
            for r in range(nv):
                tau[f0 + i, r] = taub[r, i]
        for x, o in ((dq, o1), (dqd, o2), (M, o3)):
            for r in range(nv):
                for i in range(m):
                    for c in range(nv):
                        x[f0 + i, r, c] = o[r, c, i]
    return 0


@njit(cache=_CACHE)
def _block_node_transform(k, kind, E, t, plain, axis, principal, qi, q, qb, f0, m, ang, R, p):
    """R[k][..., i], p[k][:, i] of node k for the frames f0 + i (i < m), as ``_transforms``.

    ``qb`` (nq, B) holds the same frames of q, gathered.

    The same operations as :func:`~ahbm._engine.jit_common._transforms` (the
    results are bitwise those of the frame-by-frame kernel); a revolute node
    about a principal axis takes its sines and cosines from the vectorized
    :func:`~ahbm._engine.jit_common.sincos`.
    """
    kd = kind[k]
    ax = principal[k]
    if kd == REV and ax >= 0:
        i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
        j_ = 3 - ax - i_
        for i in range(m):
            ang[0, i] = q[f0 + i, qi[k]]
        sincos(ang[0], m, ang[1], ang[2])
        if plain[k]:
            for i in range(m):
                s_ = ang[1, i]
                c_ = ang[2, i]
                R[k, ax, ax, i] = 1.0
                R[k, ax, i_, i] = 0.0
                R[k, ax, j_, i] = 0.0
                R[k, i_, ax, i] = 0.0
                R[k, j_, ax, i] = 0.0
                R[k, i_, i_, i] = c_
                R[k, j_, j_, i] = c_
                R[k, i_, j_, i] = -s_
                R[k, j_, i_, i] = s_
                p[k, 0, i] = 0.0
                p[k, 1, i] = 0.0
                p[k, 2, i] = 0.0
        else:
            for r in range(3):
                ei = E[k, r, i_]
                ej = E[k, r, j_]
                ea = E[k, r, ax]
                tr = t[k, r]
                for i in range(m):
                    s_ = ang[1, i]
                    c_ = ang[2, i]
                    R[k, r, ax, i] = ea
                    R[k, r, i_, i] = c_ * ei + s_ * ej
                    R[k, r, j_, i] = c_ * ej - s_ * ei
                    p[k, r, i] = tr
        return
    _block_transforms(k, kind, E, t, plain, axis, qi, qb, m, R, p)  # the operations of _transforms


@njit(cache=_CACHE)
def _block_crf_add(x, y, out, m):
    """out += x ×* y (x motion, y force; (6, B) blocks, frames i < m)."""
    for i in range(m):
        w0, w1, w2, u0, u1, u2 = x[0, i], x[1, i], x[2, i], x[3, i], x[4, i], x[5, i]
        y0, y1, y2, y3, y4, y5 = y[0, i], y[1, i], y[2, i], y[3, i], y[4, i], y[5, i]
        out[0, i] += w1 * y2 - w2 * y1 + u1 * y5 - u2 * y4
        out[1, i] += w2 * y0 - w0 * y2 + u2 * y3 - u0 * y5
        out[2, i] += w0 * y1 - w1 * y0 + u0 * y4 - u1 * y3
        out[3, i] += w1 * y5 - w2 * y4
        out[4, i] += w2 * y3 - w0 * y5
        out[5, i] += w0 * y4 - w1 * y3


@njit(cache=_CACHE)
def _block_world_inertia(I6, k, Rw, pw, v, a, Ic, Nc, F, Iv, Jo, m):
    """Ic[k] = I_k (world, about the origin), F[k] = I a + v ×* I v, Nc[k] = N_k (frames i < m).

    The operations of ``rnea_derivatives_world_kernel`` in the same order
    (the results are bitwise those of that kernel); layout (..., frame).
    """
    mass = I6[k, 3, 3]
    hl0, hl1, hl2 = I6[k, 2, 4], I6[k, 0, 5], I6[k, 1, 3]  # first moment (node)
    Ik = Ic[k]
    Nk = Nc[k]
    Rk = Rw[k]
    for r in range(3):
        for c in range(3):
            e0, e1, e2 = I6[k, 0, c], I6[k, 1, c], I6[k, 2, c]
            for i in range(m):
                Jo[r, c, i] = Rk[r, 0, i] * e0 + Rk[r, 1, i] * e1 + Rk[r, 2, i] * e2
    for i in range(m):
        h0 = Rk[0, 0, i] * hl0 + Rk[0, 1, i] * hl1 + Rk[0, 2, i] * hl2
        h1 = Rk[1, 0, i] * hl0 + Rk[1, 1, i] * hl1 + Rk[1, 2, i] * hl2
        h2 = Rk[2, 0, i] * hl0 + Rk[2, 1, i] * hl1 + Rk[2, 2, i] * hl2
        px, py, pz = pw[k, 0, i], pw[k, 1, i], pw[k, 2, i]
        pp = px * px + py * py + pz * pz
        ph = px * h0 + py * h1 + pz * h2
        P = (px, py, pz)
        Hh = (h0, h1, h2)
        for r in range(3):
            for c in range(3):
                s = Jo[r, 0, i] * Rk[c, 0, i] + Jo[r, 1, i] * Rk[c, 1, i]
                s += Jo[r, 2, i] * Rk[c, 2, i]
                s += -mass * P[r] * P[c] - P[r] * Hh[c] - Hh[r] * P[c]
                if r == c:
                    s += mass * pp + 2.0 * ph
                Ik[r, c, i] = s
        c0, c1, c2 = mass * px + h0, mass * py + h1, mass * pz + h2
        for r in range(3):
            for c in range(3):
                Ik[3 + r, 3 + c, i] = mass if r == c else 0.0
        Ik[0, 3, i], Ik[0, 4, i], Ik[0, 5, i] = 0.0, -c2, c1
        Ik[1, 3, i], Ik[1, 4, i], Ik[1, 5, i] = c2, 0.0, -c0
        Ik[2, 3, i], Ik[2, 4, i], Ik[2, 5, i] = -c1, c0, 0.0
        Ik[3, 0, i], Ik[3, 1, i], Ik[3, 2, i] = 0.0, c2, -c1
        Ik[4, 0, i], Ik[4, 1, i], Ik[4, 2, i] = -c2, 0.0, c0
        Ik[5, 0, i], Ik[5, 1, i], Ik[5, 2, i] = c1, -c0, 0.0
    # f = I a + v ×* I v (Iv = I v and I a summed over all six columns, as _matvec6)
    for r in range(6):
        for i in range(m):
            s1 = 0.0
            s2 = 0.0
            for c in range(6):
                s1 += Ik[r, c, i] * v[k, c, i]
                s2 += Ik[r, c, i] * a[k, c, i]
            Iv[r, i] = s1
            F[k, r, i] = s2
    _block_crf_add(v[k], Iv, F[k], m)
    # N = A + Aᵀ − (Iv)⊼ with A = I (v×); row r of A: [I_r,ω × w + I_r,u × u_v, I_r,u × w]
    for r in range(6):
        for i in range(m):
            w0, w1, w2 = v[k, 0, i], v[k, 1, i], v[k, 2, i]
            u0, u1, u2 = v[k, 3, i], v[k, 4, i], v[k, 5, i]
            x0, x1, x2 = Ik[r, 0, i], Ik[r, 1, i], Ik[r, 2, i]
            z0, z1, z2 = Ik[r, 3, i], Ik[r, 4, i], Ik[r, 5, i]
            Nk[r, 0, i] = x1 * w2 - x2 * w1 + z1 * u2 - z2 * u1
            Nk[r, 1, i] = x2 * w0 - x0 * w2 + z2 * u0 - z0 * u2
            Nk[r, 2, i] = x0 * w1 - x1 * w0 + z0 * u1 - z1 * u0
            Nk[r, 3, i] = z1 * w2 - z2 * w1
            Nk[r, 4, i] = z2 * w0 - z0 * w2
            Nk[r, 5, i] = z0 * w1 - z1 * w0
    for r in range(6):
        for c in range(r + 1):
            for i in range(m):
                sym = Nk[r, c, i] + Nk[c, r, i]
                Nk[r, c, i] = sym
                Nk[c, r, i] = sym
    # − (Iv)⊼ : x ↦ x ×* Iv = [−ñ ω − f̃ u; −f̃ ω] with Iv = [n; f]
    for i in range(m):
        n0, n1, n2 = Iv[0, i], Iv[1, i], Iv[2, i]
        f0, f1, f2 = Iv[3, i], Iv[4, i], Iv[5, i]
        Nk[0, 1, i] -= n2
        Nk[0, 2, i] += n1
        Nk[1, 0, i] += n2
        Nk[1, 2, i] -= n0
        Nk[2, 0, i] -= n1
        Nk[2, 1, i] += n0
        for rr in range(2):
            r0 = 0 if rr == 0 else 3
            c0 = 3 if rr == 0 else 0
            Nk[r0 + 0, c0 + 1, i] -= f2
            Nk[r0 + 0, c0 + 2, i] += f1
            Nk[r0 + 1, c0 + 0, i] += f2
            Nk[r0 + 1, c0 + 2, i] -= f0
            Nk[r0 + 2, c0 + 0, i] -= f1
            Nk[r0 + 2, c0 + 1, i] += f0


@njit(cache=_CACHE, nogil=True)
def spd_inverse_kernel(M, out, L, W):
    """out[f] = M[f]⁻¹ for symmetric positive-definite M (N, n, n), by Cholesky.

    ``M = L Lᵀ``, ``W = L⁻¹`` (forward substitution), ``M⁻¹ = Wᵀ W`` (lower
    triangle computed, mirrored: the result is exactly symmetric). ``L``, ``W``
    (n, n) are work buffers. About n³ flops per frame (LU-based inversion:
    2n³). Returns the first frame whose matrix is not positive definite
    (a pivot ≤ 0 or NaN), or -1.
    """
    n = M.shape[1]
    for fr in range(M.shape[0]):
        if not _cholesky(M[fr], L, 0.0):
            return fr
        for j in range(n):
            W[j, j] = 1.0 / L[j, j]
            for i in range(j + 1, n):
                s = 0.0
                for k in range(j, i):
                    s += L[i, k] * W[k, j]
                W[i, j] = -s / L[i, i]
        o = out[fr]
        for r in range(n):
            for c in range(r + 1):
                s = 0.0
                for k in range(r, n):  # W lower triangular: W[k, r], W[k, c] nonzero for k >= r
                    s += W[k, r] * W[k, c]
                o[r, c] = s
                o[c, r] = s
    return -1
