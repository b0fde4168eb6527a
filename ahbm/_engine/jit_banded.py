"""Compiled solver of symmetric positive-definite tridiagonal systems (internal).

:func:`ptsv` is LAPACK's ``dptsv`` (the reference ``dpttrf`` factorization
``A = L D Lᵀ`` and the ``dptts2`` substitutions) with the same operations in
the same order for every right-hand side, so its solution is bitwise that of
the reference LAPACK compiled without fused multiply-adds (as in scipy's
x86-64 wheels; other builds differ in the last bits). It runs the
right-hand sides side by side, row after row, where ``dptts2`` finishes one
column before the next: each column's recurrence has the latency of a
multiply and a subtract per row, which the other columns now fill.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import _CACHE


@njit(cache=_CACHE, nogil=True)
def ptsv(d, e, b):  # pragma: no cover - compiled
    """Solve ``A x = b`` for the SPD tridiagonal ``A`` (diagonal `d` (n,), off-diagonal `e` (n-1,)).

    `b` is (n, nrhs), C-ordered. The inputs are left unchanged. Returns
    ``(info, x)``: ``info`` 0 on success (also for n = 0), -1 for shapes that do
    not fit, else ``dpttrf``'s ``info`` (the first 1-based row whose pivot is
    not positive; ``x`` is then meaningless).
    """
    n = d.shape[0]
    nrhs = b.shape[1]
    d = d.copy()
    e = e.copy()
    x = b.copy()
    if n == 0:  # (no index below may run: numba does not check bounds)
        return 0, x
    if e.shape[0] != n - 1 or x.shape[0] != n:
        return -1, x
    # dpttrf
    for i in range(n - 1):
        if d[i] <= 0.0:
            return i + 1, x
        ei = e[i]
        e[i] = ei / d[i]
        d[i + 1] = d[i + 1] - e[i] * ei
    if d[n - 1] <= 0.0:
        return n, x
    # dptts2
    if n == 1:  # dscal by 1 / d
        s = 1.0 / d[0]
        for j in range(nrhs):
            x[0, j] = s * x[0, j]
        return 0, x
    for i in range(1, n):  # L x = b
        ei = e[i - 1]
        for j in range(nrhs):
            x[i, j] = x[i, j] - x[i - 1, j] * ei
    dn = d[n - 1]
    for j in range(nrhs):  # D Lᵀ x = b
        x[n - 1, j] = x[n - 1, j] / dn
    for i in range(n - 2, -1, -1):
        di = d[i]
        ei = e[i]
        for j in range(nrhs):
            x[i, j] = x[i, j] / di - x[i + 1, j] * ei
    return 0, x


@njit(cache=_CACHE, nogil=True)
def natural_cubic_system(h, y):  # pragma: no cover - compiled
    """The tridiagonal system of a natural cubic spline's interior second derivatives.

    `h` (n-1,) the knot steps, `y` (n, m) the values (C-ordered). Returns
    ``(d, e, rhs)``: diagonal ``2 (h_i + h_i+1)``, off-diagonal ``h_i+1`` and
    ``6 (s_i+1 − s_i)`` with the slopes ``s_i = (y_i+1 − y_i) / h_i``, each
    computed as numpy's ``2.0 * (h[:-1] + h[1:])``, ``h[1:-1]`` and
    ``6.0 * np.diff(np.diff(y, axis=0) / h[:, None], axis=0)`` compute them.
    """
    n, m = y.shape
    k = max(n - 2, 0)
    if h.shape[0] != n - 1:
        k = 0  # (shapes that do not fit: an empty system, nothing read out of bounds)
    d = np.empty(k)
    e = np.empty(max(k - 1, 0))
    rhs = np.empty((k, m))
    for i in range(k):
        d[i] = 2.0 * (h[i] + h[i + 1])
    for i in range(k - 1):
        e[i] = h[i + 1]
    for i in range(k):
        h0 = h[i]
        h1 = h[i + 1]
        for j in range(m):
            s0 = (y[i + 1, j] - y[i, j]) / h0
            s1 = (y[i + 2, j] - y[i + 1, j]) / h1
            rhs[i, j] = 6.0 * (s1 - s0)
    return d, e, rhs


@njit(cache=_CACHE, nogil=True)
def natural_cubic_values(M, y, h, k, a, b, a3, b3):  # pragma: no cover - compiled
    """The natural cubic spline at points in the intervals `k` (p,), numpy's way.

    `M` (n, m) the second derivatives, `y` (n, m) the values, `h` (n-1,) the
    knot steps; per point ``a = x[k+1] − t``, ``b = t − x[k]`` and their cubes
    `a3`, `b3` (numpy's ``a**3``, given: its power is numpy's). Each entry is
    ``(M_k a³ + M_k+1 b³) / (6 h_k) + (y_k / h_k − M_k h_k / 6) a
    + (y_k+1 / h_k − M_k+1 h_k / 6) b`` with numpy's operations in numpy's
    order (bitwise the array expression).
    """
    p = k.shape[0]
    m = y.shape[1]
    out = np.empty((p, m))
    for i in range(p):
        j0 = k[i]
        hk = h[j0]
        ai, bi, a3i, b3i = a[i], b[i], a3[i], b3[i]
        six_h = 6.0 * hk
        for j in range(m):
            m0 = M[j0, j]
            m1 = M[j0 + 1, j]
            first = (m0 * a3i + m1 * b3i) / six_h
            second = (y[j0, j] / hk - m0 * hk / 6.0) * ai
            third = (y[j0 + 1, j] / hk - m1 * hk / 6.0) * bi
            out[i, j] = first + second + third
    return out
