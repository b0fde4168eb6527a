"""Compiled (numba) composite-rigid-body (CRBA) and kinematics kernels (internal)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import (
    _CACHE,
    PRI,
    SPH,
    _inputs_ok,
    _joint_velocity,
    _motion_to_child,
    _S_col,
    _transforms,
    _unpack,
    _world_poses,
)


@njit(cache=_CACHE, nogil=True)
def crba_kernel(ints, E, tax, I6, q, H):
    """H (N, nv, nv) <- joint-space inertia matrix for q (N, nq).

    Featherstone (2008) Table 6.2 with the composite inertias and the motion
    subspaces expressed in the world frame (about the world origin), as
    Pinocchio does: a composite inertia is then a plain sum over the
    subtree, and ``H_ij = S_iᵀ I^c_j S_j`` for every ancestor i of j needs
    no transform along the path. The plan comes packed as for
    :func:`~ahbm._engine.jit_rnea.rnea_frame_kernel`. Returns 0, or 1 when q is not finite or
    holds a zero quaternion (see :func:`~ahbm._engine.jit_common._inputs_ok`).
    """
    parent, kind, principal, qi, vi, nvj, plain, _massive, t, axis = _unpack(ints, tax)
    if not _inputs_ok(kind, qi, q, q, q):
        return 1
    n = parent.shape[0]
    N = q.shape[0]
    nv = H.shape[1]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    Rw = np.empty((n, 3, 3))
    pw = np.empty((n, 3))
    Sw = np.empty((nv, 6))  # world motion vector [ω; v_O] of each unit q̇
    # composite inertia of each node about the world origin: mass, first moment, rotational
    cm = np.empty(n)
    ch = np.empty((n, 3))
    cJ = np.empty((n, 3, 3))
    T = np.empty((3, 3))
    F = np.empty((3, 6))
    for fr in range(N):
        qf = q[fr]
        Hf = H[fr]
        _transforms(0, n, kind, E, t, plain, axis, principal, qf, qi, R, p)
        _world_poses(parent, R, p, Rw, pw)
        for k in range(n):
            px, py, pz = pw[k, 0], pw[k, 1], pw[k, 2]
            kd = kind[k]
            for c in range(nvj[k]):
                # the motion subspace S (node coordinates) is [axis; 0] (REV),
                # [0; axis] (PRI) or [e_c; 0] (SPH)
                col = vi[k] + c
                for r in range(3):
                    if kd == SPH:
                        x = Rw[k, r, c]
                    else:
                        x = Rw[k, r, 0] * axis[k, 0] + Rw[k, r, 1] * axis[k, 1]
                        x += Rw[k, r, 2] * axis[k, 2]
                    if kd == PRI:
                        Sw[col, r] = 0.0
                        Sw[col, 3 + r] = x
                    else:
                        Sw[col, r] = x
                        Sw[col, 3 + r] = 0.0
                w0, w1, w2 = Sw[col, 0], Sw[col, 1], Sw[col, 2]
                Sw[col, 3] += py * w2 - pz * w1
                Sw[col, 4] += pz * w0 - px * w2
                Sw[col, 5] += px * w1 - py * w0
            # the node's own inertia about the world origin: rotate by Rw, move by pw:
            # h' = Rw h + m pw, J' = Rw J Rwᵀ + 2 (h_R·pw) 1 − pw h_Rᵀ − h_R pwᵀ
            #                                 + m (|pw|² 1 − pw pwᵀ)
            mk = I6[k, 3, 3]
            h0, h1, h2 = I6[k, 2, 4], I6[k, 0, 5], I6[k, 1, 3]
            for r in range(3):
                ch[k, r] = Rw[k, r, 0] * h0 + Rw[k, r, 1] * h1 + Rw[k, r, 2] * h2
                for c in range(3):
                    T[r, c] = (
                        I6[k, r, 0] * Rw[k, c, 0]
                        + I6[k, r, 1] * Rw[k, c, 1]
                        + I6[k, r, 2] * Rw[k, c, 2]
                    )
            diag = 2.0 * (ch[k, 0] * px + ch[k, 1] * py + ch[k, 2] * pz)
            diag += mk * (px * px + py * py + pz * pz)
            for r in range(3):
                pr = pw[k, r]
                for c in range(3):
                    pc = pw[k, c]
                    val = Rw[k, r, 0] * T[0, c] + Rw[k, r, 1] * T[1, c] + Rw[k, r, 2] * T[2, c]
                    val -= pr * ch[k, c] + ch[k, r] * pc + mk * pr * pc
                    cJ[k, r, c] = val + diag if r == c else val
            for r in range(3):
                ch[k, r] += mk * pw[k, r]
            cm[k] = mk
        for r in range(nv):
            for c in range(nv):
                Hf[r, c] = 0.0
        for k in range(n - 1, -1, -1):
            # F = Ic S (6 x nvj), world frame: Ic [w; u] = [J w + h × u; m u − h × w]
            m = nvj[k]
            j0 = vi[k]
            mk = cm[k]
            h0, h1, h2 = ch[k, 0], ch[k, 1], ch[k, 2]
            for c in range(m):
                w0, w1, w2 = Sw[j0 + c, 0], Sw[j0 + c, 1], Sw[j0 + c, 2]
                u0, u1, u2 = Sw[j0 + c, 3], Sw[j0 + c, 4], Sw[j0 + c, 5]
                for r in range(3):
                    F[c, r] = cJ[k, r, 0] * w0 + cJ[k, r, 1] * w1 + cJ[k, r, 2] * w2
                F[c, 0] += h1 * u2 - h2 * u1
                F[c, 1] += h2 * u0 - h0 * u2
                F[c, 2] += h0 * u1 - h1 * u0
                F[c, 3] = mk * u0 - (h1 * w2 - h2 * w1)
                F[c, 4] = mk * u1 - (h2 * w0 - h0 * w2)
                F[c, 5] = mk * u2 - (h0 * w1 - h1 * w0)
            # H entries of node k with itself and its ancestors (mirrored: H exactly symmetric)
            jj = k
            while jj >= 0:
                j1 = vi[jj]
                for c2 in range(nvj[jj]):
                    for c in range(m):
                        acc = 0.0
                        for r in range(6):
                            acc += Sw[j1 + c2, r] * F[c, r]
                        Hf[j1 + c2, j0 + c] = acc
                        Hf[j0 + c, j1 + c2] = acc
                jj = parent[jj]
            lam = parent[k]
            if lam >= 0:
                cm[lam] += mk
                for r in range(3):
                    ch[lam, r] += ch[k, r]
                    for c in range(3):
                        cJ[lam, r, c] += cJ[k, r, c]
    return 0


@njit(cache=_CACHE, nogil=True)
def kinematics_kernel(
    ints, E, tax, body_node, body_E, body_t,
    q, qd, use_qd, use_cols, Rw_out, pw_out, v_out, a_out, Sw_out,
):  # fmt: skip
    """World poses of the bodies, their velocities and bias accelerations, DOF columns.

    The plan comes packed as for :func:`~ahbm._engine.jit_rnea.rnea_frame_kernel`.

    Rw_out (N, nb, 3, 3), pw_out (N, nb, 3): world pose of each body frame.
    v_out, a_out (N, nb, 6): body spatial velocity and acceleration at q̈ = 0
    (no gravity), body coordinates (only if use_qd). Sw_out (N, 6, nv): world
    motion vector ``[ω; v_O]`` (about the world origin) of each unit q̇_k
    (only if use_cols).
    """
    parent, kind, principal, qi, vi, nvj, plain, _massive, t, axis = _unpack(ints, tax)
    n = parent.shape[0]
    nb = body_node.shape[0]
    N = q.shape[0]
    R = np.zeros((n, 3, 3))
    p = np.zeros((n, 3))
    Rw = np.zeros((n, 3, 3))
    pw = np.zeros((n, 3))
    v = np.zeros((n, 6))
    a = np.zeros((n, 6))
    zero = np.zeros((1, 6))
    s = np.zeros(6)
    for fr in range(N):
        qf = q[fr]
        _transforms(0, n, kind, E, t, plain, axis, principal, qf, qi, R, p)
        _world_poses(parent, R, p, Rw, pw)
        for k in range(n):
            lam = parent[k]
            for c in range(nvj[k] if use_cols else 0):
                _S_col(kind, axis, k, c, s)
                col = vi[k] + c
                for r in range(3):
                    w_ = Rw[k, r, 0] * s[0] + Rw[k, r, 1] * s[1] + Rw[k, r, 2] * s[2]
                    Sw_out[fr, r, col] = w_
                    Sw_out[fr, 3 + r, col] = (
                        Rw[k, r, 0] * s[3] + Rw[k, r, 1] * s[4] + Rw[k, r, 2] * s[5]
                    )
                w0, w1, w2 = Sw_out[fr, 0, col], Sw_out[fr, 1, col], Sw_out[fr, 2, col]
                Sw_out[fr, 3, col] += pw[k, 1] * w2 - pw[k, 2] * w1
                Sw_out[fr, 4, col] += pw[k, 2] * w0 - pw[k, 0] * w2
                Sw_out[fr, 5, col] += pw[k, 0] * w1 - pw[k, 1] * w0
            if use_qd:
                if lam < 0:
                    _motion_to_child(R, p, k, zero, 0, v, k)
                    _motion_to_child(R, p, k, zero, 0, a, k)
                else:
                    _motion_to_child(R, p, k, v, lam, v, k)
                    _motion_to_child(R, p, k, a, lam, a, k)
                _joint_velocity(kind, axis, k, qd, fr, vi[k], v, a, True)
        for b in range(nb):
            nd = body_node[b]
            if nd < 0:
                for r in range(3):
                    pw_out[fr, b, r] = body_t[b, r]
                    for c in range(3):
                        Rw_out[fr, b, r, c] = body_E[b, r, c]
                continue
            for r in range(3):
                acc = pw[nd, r]
                for l in range(3):
                    acc += Rw[nd, r, l] * body_t[b, l]
                pw_out[fr, b, r] = acc
                for c in range(3):
                    acc = 0.0
                    for l in range(3):
                        acc += Rw[nd, r, l] * body_E[b, l, c]
                    Rw_out[fr, b, r, c] = acc
            if use_qd:
                _motion_to_child(body_E, body_t, b, v, nd, v_out[fr], b)
                _motion_to_child(body_E, body_t, b, a, nd, a_out[fr], b)
