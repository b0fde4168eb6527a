"""Cubic smoothing spline with GCV (Reinsch algorithm, banded matrices) (internal).

Minimizes ``sum_i (y_i - g(t_i))^2 + lam * integral g''(t)^2 dt``. With the
Reinsch (1967) matrices ``Q`` (n x n-2, tridiagonal columns of divided
differences) and ``R`` (n-2 x n-2, tridiagonal), the fitted values are
``g = y - lam Q gamma`` with ``(R + lam Q^T Q) gamma = Q^T y`` and ``gamma``
the second derivatives of the natural cubic spline at the interior knots.
The influence matrix is ``A = I - lam Q B^-1 Q^T`` (``B = R + lam Q^T Q``),
so ``tr A = n - lam tr(B^-1 Q^T Q)``; only the five central bands of
``B^-1`` are needed and they follow from the LDL^T factors by the
Hutchinson & de Hoog (1985) recursion. The recursion runs once per call,
vectorized over all trial values of ``lam``; ``tr A`` does not depend on the
data, so all channels sharing the sample times share it.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg


def _bands(t):
    h = np.diff(t)
    m = t.size - 2
    # Q columns j = 0..m-1: rows j, j+1, j+2 hold a_j, b_j, c_j
    a = 1.0 / h[:-1]
    c = 1.0 / h[1:]
    b = -(a + c)
    r0 = (h[:-1] + h[1:]) / 3.0
    r1 = h[1:-1] / 6.0
    p0 = a**2 + b**2 + c**2
    p1 = b[:-1] * a[1:] + c[:-1] * b[1:]
    p2 = c[:-2] * a[2:]
    return m, (a, b, c), (r0, r1), (p0, p1, p2)


def _qt(y, a, b, c):
    """Q^T y for y of shape (n, k)."""
    return a[:, None] * y[:-2] + b[:, None] * y[1:-1] + c[:, None] * y[2:]


def _q(g, a, b, c, n):
    """Q gamma for gamma of shape (n-2, k)."""
    out = np.zeros((n,) + g.shape[1:])
    out[:-2] += a[:, None] * g
    out[1:-1] += b[:, None] * g
    out[2:] += c[:, None] * g
    return out


def _banded_upper(lam, r, p, m):
    """Upper banded storage (3, m) of B = R + lam Q^T Q for solveh_banded."""
    ab = np.zeros((3, m))
    ab[2] = r[0] + lam * p[0]
    ab[1, 1:] = r[1] + lam * p[1]
    ab[0, 2:] = lam * p[2]
    return ab


def fit(t, y, lam):
    """Fitted values g (n, k) and interior second derivatives (n-2, k) for one lam."""
    n = t.size
    m, (a, b, c), r, p = _bands(t)
    ab = _banded_upper(lam, r, p, m)
    gamma = linalg.solveh_banded(ab, _qt(y, a, b, c), lower=False, check_finite=False)
    return y - lam * _q(gamma, a, b, c, n), gamma


def trace(t, lams):
    """tr A(lam) for an array of lam values (exact, O(n) per lam)."""
    lams = np.atleast_1d(np.asarray(lams, float))
    n = t.size
    m, _, (r0, r1), (p0, p1, p2) = _bands(t)
    k = lams.size
    # bands of B for every lam: (m, k)
    b0 = r0[:, None] + lams[None] * p0[:, None]
    b1 = np.zeros((m, k))
    b1[:-1] = r1[:, None] + lams[None] * p1[:, None]
    b2 = np.zeros((m, k))
    b2[:-2] = lams[None] * p2[:, None]
    # LDL^T: L[i+1,i] = l1[i], L[i+2,i] = l2[i]
    d = np.zeros((m, k))
    l1 = np.zeros((m, k))
    l2 = np.zeros((m, k))
    for i in range(m):
        di = b0[i].copy()
        if i >= 1:
            di -= l1[i - 1] ** 2 * d[i - 1]
        if i >= 2:
            di -= l2[i - 2] ** 2 * d[i - 2]
        d[i] = di
        off = b1[i].copy()
        if i >= 1:
            off -= l2[i - 1] * l1[i - 1] * d[i - 1]
        l1[i] = off / di
        l2[i] = b2[i] / di
    # selected inverse: z0[i] = Z[i,i], z1[i] = Z[i,i+1], z2[i] = Z[i,i+2]
    z0 = np.zeros((m + 2, k))
    z1 = np.zeros((m + 2, k))
    z2 = np.zeros((m + 2, k))
    for i in range(m - 1, -1, -1):
        # Z[i+1,i+2] = z1[i+1], Z[i+2,i+2] = z0[i+2], Z[i+1,i+1] = z0[i+1]
        z1[i] = -l1[i] * z0[i + 1] - l2[i] * z1[i + 1]
        z2[i] = -l1[i] * z1[i + 1] - l2[i] * z0[i + 2]
        z0[i] = 1.0 / d[i] - l1[i] * z1[i] - l2[i] * z2[i]
    tr_bp = (z0[:m] * p0[:, None]).sum(0)
    tr_bp += 2 * (z1[: m - 1] * p1[:, None]).sum(0)
    tr_bp += 2 * (z2[: m - 2] * p2[:, None]).sum(0)
    return n - lams * tr_bp


def gcv_lambda(t, y, n_grid: int = 48):
    """Per-channel GCV-optimal lam for y (n, k) sampled at t; returns (lam (k,), tr A (k,))."""
    n = t.size
    h = np.median(np.diff(t))
    lo = np.log10(h**3) - 3.0
    hi = np.log10(h**3) + 4.0 * np.log10(n) + 1.0
    grid = np.logspace(lo, hi, n_grid)
    tr = trace(t, grid)
    rss = np.empty((n_grid, y.shape[1]))
    for i, lam in enumerate(grid):
        g, _ = fit(t, y, lam)
        rss[i] = ((y - g) ** 2).sum(axis=0)
    score = n * rss / np.maximum(n - tr, 1e-12)[:, None] ** 2
    best = np.argmin(score, axis=0)
    # parabolic refinement in log10(lam) around the best grid point
    j = np.clip(best, 1, n_grid - 2)
    x = np.log10(grid)
    s0 = np.take_along_axis(score, (j - 1)[None], 0)[0]
    s1 = np.take_along_axis(score, j[None], 0)[0]
    s2 = np.take_along_axis(score, (j + 1)[None], 0)[0]
    den = s0 - 2 * s1 + s2
    dx = x[1] - x[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        shift = np.where(den > 0, 0.5 * (s0 - s2) / den, 0.0)
    lam = 10 ** (x[j] + np.clip(shift, -1, 1) * dx)
    edge = (best == 0) | (best == n_grid - 1)
    lam = np.where(edge, grid[best], lam)
    tr_ref = trace(t, lam)
    for ch in range(y.shape[1]):  # keep the refinement only where it lowers the score
        g, _ = fit(t, y[:, ch : ch + 1], lam[ch])
        s_ref = n * ((y[:, ch] - g[:, 0]) ** 2).sum() / max(n - tr_ref[ch], 1e-12) ** 2
        if not s_ref <= score[best[ch], ch]:
            lam[ch], tr_ref[ch] = grid[best[ch]], tr[best[ch]]
    return lam, tr_ref
