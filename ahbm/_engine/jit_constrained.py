"""Compiled (numba) pieces of the single-state constrained right-hand side (internal).

Used by the lean path of :mod:`ahbm.dynamics.constrained` (the right-hand side
of ``simulate``): from one pass of the kinematics kernel (world poses ``Rw``
``(nb, 3, 3)``, ``pw`` ``(nb, 3)``, body velocities ``v`` and bias
accelerations ``a`` ``(nb, 6)`` in body coordinates, world DOF columns ``Sw``
``(6, nv)`` about the world origin), :func:`constraint_rows_kernel` writes the
rows of ``G`` and ``γ`` of point and orientation constraints (the formulas of
:mod:`ahbm.dynamics.constraints`; the point formulas are those of
:mod:`ahbm._engine.jit_points`, shared with the batch functions);
:func:`range_space_kernel` solves ``H q̈ = f + Gᵀλ``, ``G q̈ = γ`` by two
Cholesky factorizations (Felis 2015 eqs 3.68–3.69) and reports a mass
matrix that is not positive definite or a constraint Jacobian that is (near)
rank deficient, so that the caller can fall back to the general solver;
:func:`q_rate_kernel` gives ``q̇ = T(q) v``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ahbm._engine.jit_common import _CACHE
from ahbm._engine.jit_points import body_point_acceleration, point_column, rotate, world_point
from ahbm.kinematics.joints import FREE, SPHERICAL
from ahbm.kinematics.tree import Model

POINT, ORIENTATION = 0, 1

__all__ = [
    "POINT", "ORIENTATION", "constraint_rows_kernel", "range_space_kernel", "q_rate_kernel",
    "rate_plan",
]  # fmt: skip


@njit(cache=_CACHE, nogil=True)
def constraint_rows_kernel(blk, rr, D, support, Rw, pw, v, a, Sw, G, gamma):
    """Rows of ``G`` (m, nv) and ``γ`` (m,) of point and orientation constraints.

    ``blk`` (n_blocks, 5) int64: kind (``POINT``/``ORIENTATION``), body, other
    body (-1: ground), first row, number of rows; ``rr`` (n_blocks, 2, 3): the
    point on the body and on the other body (body frames; world for the
    ground); ``D`` (m, 3): world direction of each row; ``support`` (nb, nv):
    1 where a DOF moves the body. The rows of the blocks are overwritten;
    other rows are left alone.

    Point: ``G = D (J_p − J_o)``, ``γ = −D (J̇_p q̇ − J̇_o q̇)`` with the world
    point acceleration at ``q̈ = 0``, ``R (a_O + α × r + ω × (v_O + ω × r))``.
    Orientation: ``G = D (J_ω,b − J_ω,o)``, ``γ = −D (α_b − α_o − ω_b × ω_o)``
    (world vectors).
    """
    nv = G.shape[1]
    acc = np.zeros((2, 3))
    wsum = np.zeros((2, 3))
    p = np.zeros(3)
    for k in range(blk.shape[0]):
        kind, r0, nr = blk[k, 0], blk[k, 3], blk[k, 4]
        for i in range(r0, r0 + nr):
            gamma[i] = 0.0
            for c in range(nv):
                G[i, c] = 0.0
        for side in range(2):
            b = blk[k, 1 + side]
            for j in range(3):
                acc[side, j] = 0.0
                wsum[side, j] = 0.0
            if b < 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            R, vb = Rw[b], v[b]
            if kind == POINT:
                x0, x1, x2 = rr[k, side, 0], rr[k, side, 1], rr[k, side, 2]
                p[0], p[1], p[2] = world_point(R, pw[b], x0, x1, x2)
                l0, l1, l2 = body_point_acceleration(vb, a[b], x0, x1, x2)
            else:
                l0, l1, l2 = a[b, 0], a[b, 1], a[b, 2]
            acc[side, 0], acc[side, 1], acc[side, 2] = rotate(R, l0, l1, l2)
            wsum[side, 0], wsum[side, 1], wsum[side, 2] = rotate(R, vb[0], vb[1], vb[2])
            for c in range(nv):
                if support[b, c] == 0:
                    continue
                if kind == POINT:  # v_c + ω_c × p
                    jl0, jl1, jl2 = point_column(Sw, c, p[0], p[1], p[2])
                else:
                    jl0, jl1, jl2 = Sw[0, c], Sw[1, c], Sw[2, c]
                for i in range(r0, r0 + nr):
                    G[i, c] += sign * (D[i, 0] * jl0 + D[i, 1] * jl1 + D[i, 2] * jl2)
        e0 = acc[0, 0] - acc[1, 0]
        e1 = acc[0, 1] - acc[1, 1]
        e2 = acc[0, 2] - acc[1, 2]
        if kind == ORIENTATION:  # − ω_b × ω_o
            e0 -= wsum[0, 1] * wsum[1, 2] - wsum[0, 2] * wsum[1, 1]
            e1 -= wsum[0, 2] * wsum[1, 0] - wsum[0, 0] * wsum[1, 2]
            e2 -= wsum[0, 0] * wsum[1, 1] - wsum[0, 1] * wsum[1, 0]
        for i in range(r0, r0 + nr):
            gamma[i] = -(D[i, 0] * e0 + D[i, 1] * e1 + D[i, 2] * e2)


@njit(cache=_CACHE)
def _cholesky(A, L, rel_tol):
    """Lower Cholesky factor of A into L; False if a pivot is <= rel_tol * A_jj (or not > 0)."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > rel_tol * A[j, j] or not s > 0.0:
            return False
        d = math.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / d
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=_CACHE)
def _forward(L, B):
    """B <- L⁻¹ B in place for lower-triangular L (n, n) and B (n, k)."""
    n, k = B.shape
    for i in range(n):
        d = L[i, i]
        for c in range(k):
            s = B[i, c]
            for j in range(i):
                s -= L[i, j] * B[j, c]
            B[i, c] = s / d


@njit(cache=_CACHE)
def _solve_factored(L, Y, Lk, f, gamma, x, lam):
    """x, λ of ``H x = f + Gᵀλ``, ``G x = γ``.

    From the factors ``H = LLᵀ``, ``Y = L⁻¹Gᵀ`` and ``YᵀY = L_K L_Kᵀ``.
    """
    n, m = Y.shape
    z = f.copy()
    for i in range(n):  # z = L⁻¹ f
        s = z[i]
        for j in range(i):
            s -= L[i, j] * z[j]
        z[i] = s / L[i, i]
    for r in range(m):  # γ − Yᵀ z, then L_K⁻¹
        s = gamma[r]
        for i in range(n):
            s -= Y[i, r] * z[i]
        for j in range(r):
            s -= Lk[r, j] * lam[j]
        lam[r] = s / Lk[r, r]
    for i in range(m - 1, -1, -1):  # L_Kᵀ λ = L_K⁻¹ (γ − Yᵀ z)
        s = lam[i]
        for j in range(i + 1, m):
            s -= Lk[j, i] * lam[j]
        lam[i] = s / Lk[i, i]
    for i in range(n):  # w = z + Y λ
        s = z[i]
        for c in range(m):
            s += Y[i, c] * lam[c]
        z[i] = s
    for i in range(n - 1, -1, -1):  # Lᵀ x = w
        s = z[i]
        for j in range(i + 1, n):
            s -= L[j, i] * x[j]
        x[i] = s / L[i, i]


@njit(cache=_CACHE, nogil=True)
def range_space_kernel(H, G, f, gamma, rank_tol, x, lam):
    """Solve ``H x = f + Gᵀλ``, ``G x = γ`` (H (n, n) SPD, G (m, n)) into x (n,), λ (m,).

    ``H = LLᵀ``, ``Y = L⁻¹Gᵀ``, ``K = YᵀY = G H⁻¹ Gᵀ = L_K L_Kᵀ``,
    ``K λ = γ − Yᵀ L⁻¹ f``, ``x = L⁻ᵀ (L⁻¹ f + Y λ)`` (Felis 2015 eqs
    3.68–3.69), then one step of iterative refinement on the residuals of
    both equations (brings the error to that of an LU solve of the whole
    KKT system). Returns 0 on success, 1 if H is not positive definite, 2 if
    a pivot of K is below ``rank_tol`` times its diagonal entry (redundant or
    nearly redundant constraints), 3 on a non-finite result: the caller then
    solves the system with the general method.
    """
    n = H.shape[0]
    m = G.shape[0]
    L = np.empty((n, n))
    if not _cholesky(H, L, 0.0):
        return 1
    Y = np.empty((n, m))
    for i in range(n):
        for c in range(m):
            Y[i, c] = G[c, i]
    _forward(L, Y)
    K = np.empty((m, m))
    for r in range(m):
        for c in range(r + 1):
            s = 0.0
            for i in range(n):
                s += Y[i, r] * Y[i, c]
            K[r, c] = s
            K[c, r] = s
    Lk = np.empty((m, m))
    if not _cholesky(K, Lk, rank_tol):
        return 2
    _solve_factored(L, Y, Lk, f, gamma, x, lam)
    rf = np.empty(n)  # residuals f − (H x − Gᵀλ), γ − G x
    for i in range(n):
        s = f[i]
        for j in range(n):
            s -= H[i, j] * x[j]
        for c in range(m):
            s += G[c, i] * lam[c]
        rf[i] = s
    rg = np.empty(m)
    for c in range(m):
        s = gamma[c]
        for j in range(n):
            s -= G[c, j] * x[j]
        rg[c] = s
    dx = np.empty(n)
    dlam = np.empty(m)
    _solve_factored(L, Y, Lk, rf, rg, dx, dlam)
    for i in range(n):
        x[i] += dx[i]
        if not math.isfinite(x[i]):
            return 3
    for i in range(m):
        lam[i] += dlam[i]
        if not math.isfinite(lam[i]):
            return 3
    return 0


@njit(cache=_CACHE, nogil=True)
def q_rate_kernel(copy_q, copy_v, quat_q, quat_v, q, v, out):
    """``q̇ = T(q) v`` of one state: ``out[copy_q] = v[copy_v]``, quaternion rates.

    For each quaternion ``(x, y, z, w)`` at ``q[quat_q[k]:+4]`` with the body
    angular velocity at ``v[quat_v[k]:+3]``: ``Q̇ = ½ Q ⊗ (ω, 0)``.
    """
    for k in range(copy_q.shape[0]):
        out[copy_q[k]] = v[copy_v[k]]
    for k in range(quat_q.shape[0]):
        i, j = quat_q[k], quat_v[k]
        x, y, z, w = q[i], q[i + 1], q[i + 2], q[i + 3]
        wx, wy, wz = v[j], v[j + 1], v[j + 2]
        out[i] = 0.5 * (w * wx + y * wz - z * wy)
        out[i + 1] = 0.5 * (w * wy + z * wx - x * wz)
        out[i + 2] = 0.5 * (w * wz + x * wy - y * wx)
        out[i + 3] = -0.5 * (x * wx + y * wy + z * wz)


def rate_plan(model: Model):
    """Index arrays ``(copy_q, copy_v, quat_q, quat_v)`` of :func:`q_rate_kernel` for `model`."""
    copy_q, copy_v, quat_q, quat_v = [], [], [], []
    for i, code in enumerate(model.joint_codes):
        qi, vi = int(model.q_index[i]), int(model.v_index[i])
        n_lin = 3 if code == FREE else (0 if code == SPHERICAL else int(model.joint_nv[i]))
        copy_q += range(qi, qi + n_lin)
        copy_v += range(vi, vi + n_lin)
        if code in (FREE, SPHERICAL):
            quat_q.append(qi + n_lin)
            quat_v.append(vi + n_lin)
    return tuple(np.array(x, dtype=np.int64) for x in (copy_q, copy_v, quat_q, quat_v))
