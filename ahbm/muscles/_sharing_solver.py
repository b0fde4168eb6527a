"""The dual Newton solver of :func:`ahbm.muscles.force_sharing.load_sharing` (internal).

Minimizes ``Σ |x_i|^p`` subject to ``A x = b`` and ``lb <= x <= ub`` for a
batch of frames: the primal is a closed function of the multipliers ``λ``
(``x = clip(sign(s)|s|^(1/(p-1)), lb, ub)``, ``s = Aᵀλ / p``), and Newton's
method with a line search solves the dual for ``λ``; the notes of
:func:`~ahbm.muscles.force_sharing.load_sharing` give the derivation.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

#: Frames between the cold-started frames of a batch (the others start from a neighbour).
_WARM_STRIDE = 8


def _primal(s, lb, ub, p):
    """x(s) = clip(sign(s)|s|^(1/(p-1)), lb, ub) and D = dx/ds (0 at the bounds)."""
    if p == 2.0:
        x = np.clip(s, lb, ub)
        d = ((s > lb) & (s < ub)).astype(float)
        return x, d
    e = 1.0 / (p - 1.0)
    a = np.abs(s)
    y = np.sign(s) * a**e
    x = np.clip(y, lb, ub)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = e * a ** (e - 1.0)
    d = np.clip(np.nan_to_num(d, nan=1e10, posinf=1e10), 1e-10, 1e10)
    d = np.where((y > lb) & (y < ub), d, 0.0)
    return x, d


def _primal_of(lam, A, lb, ub, p):
    """x(λ) and D at s = Aᵀλ."""
    return _primal(np.einsum("nkj,nk->nj", A, lam), lb, ub, p)


def _line_search(A, b, lb, ub, p, lam, step, max_evaluations=60):
    """Exact line search: the maximizer t > 0 of the concave g(λ + tΔ), per frame.

    ``g'(t) = Δᵀb − wᵀ x(s + t w)`` with ``w = AᵀΔ`` decreases with t (piecewise
    linear for p = 2); its root is bracketed by doubling from t = 1 and found by
    the Illinois variant of regula falsi (exact on a linear piece, superlinear
    otherwise), all frames in one vectorized pass, each evaluation O(n).
    Returns (t, unbounded): ``unbounded`` where g still rises at t = 2^30.
    """
    s = np.einsum("nkj,nk->nj", A, lam)
    w = np.einsum("nkj,nk->nj", A, step)
    db = np.einsum("nk,nk->n", step, b)

    def slope(t):
        return db - np.einsum("nj,nj->n", w, _primal(s + t[:, None] * w, lb, ub, p)[0])

    n = lam.shape[0]
    lo, hi = np.zeros(n), np.ones(n)
    f_lo, f_hi = slope(lo), slope(hi)
    for _ in range(30):  # bracket the root: g'(lo) > 0 >= g'(hi)
        up = f_hi > 0
        if not up.any():
            break
        lo, f_lo = np.where(up, hi, lo), np.where(up, f_hi, f_lo)
        hi = np.where(up, 2.0 * hi, hi)
        f_hi = np.where(up, slope(hi), f_hi)
    unbounded = f_hi > 0
    tol = 1e-13 * np.maximum(np.abs(f_lo), np.abs(f_hi))
    t = np.where(f_hi == 0, hi, lo)
    done = unbounded | (f_hi == 0) | (f_lo <= 0)
    side = np.zeros(n, dtype=int)
    for _ in range(max_evaluations):
        if done.all():
            break
        denom = f_lo - f_hi
        trial = np.where(denom > 0, lo + f_lo * (hi - lo) / np.where(denom > 0, denom, 1.0), lo)
        trial = np.clip(trial, lo, hi)
        f = slope(trial)
        live = ~done
        t = np.where(live, trial, t)
        done = done | (np.abs(f) <= tol) | (hi - lo <= 1e-15 * hi)
        up = live & (f > 0)
        down = live & ~(f > 0)
        # Illinois: the end kept twice in a row has its value halved
        f_hi = np.where(up & (side == 1), 0.5 * f_hi, f_hi)
        f_lo = np.where(down & (side == -1), 0.5 * f_lo, f_lo)
        lo, f_lo = np.where(up, trial, lo), np.where(up, f, f_lo)
        hi, f_hi = np.where(down, trial, hi), np.where(down, f, f_hi)
        side = np.where(up, 1, np.where(down, -1, side))
    return t, unbounded


def _newton(A, b, lb, ub, p, lam, tol, max_iterations):
    """Semismooth Newton on the dual of all frames at once.

    A (N, m, n), b (N, m), lb/ub (N, n), lam (N, m) initial multipliers,
    tol (N,). Returns (lam, x (N, n), iterations (N,)).
    """
    N, m, _ = A.shape
    its = np.zeros(N, dtype=int)
    x, d = _primal_of(lam, A, lb, ub, p)
    alive = np.ones(N, dtype=bool)
    eye = np.eye(m)
    for _ in range(max_iterations):
        act = np.flatnonzero(alive)
        ra = b[act] - np.einsum("nkj,nj->nk", A[act], x[act])
        stop = np.max(np.abs(ra), axis=-1) <= tol[act]
        alive[act[stop]] = False
        act, ra = act[~stop], ra[~stop]
        if act.size == 0:
            break
        its[act] += 1
        Aa, lba, uba = A[act], lb[act], ub[act]
        H = np.einsum("nkj,nj,nlj->nkl", Aa, d[act], Aa)
        diag = np.einsum("nkk->nk", H)
        scale = np.maximum(diag.mean(axis=-1), 1e-300)
        # a tiny ridge, and a unit one on a coordinate that nothing free actuates
        H += ((1e-11 * scale)[:, None] + (diag <= 0) * scale[:, None])[..., None] * eye
        step = np.linalg.solve(H, ra[..., None])[..., 0]
        with np.errstate(over="ignore", invalid="ignore"):
            t, unbounded = _line_search(Aa, b[act], lba, uba, p, lam[act], step)
            new = lam[act] + t[:, None] * step
            xn, dn = _primal_of(new, Aa, lba, uba, p)
        ok = np.isfinite(xn).all(axis=-1) & np.isfinite(new).all(axis=-1)
        # an infeasible frame: the dual grows without bound; stop it at its last finite point
        alive[act[unbounded | ~ok]] = False
        keep = act[ok]
        lam[keep], x[keep], d[keep] = new[ok], xn[ok], dn[ok]
    return lam, x, its


def _minimum_norm_multipliers(A, b):
    """λ of the minimum-norm solution of A x = b (the p = 2 problem without bounds)."""
    m = A.shape[1]
    H = np.einsum("nkj,nlj->nkl", A, A)
    scale = np.maximum(np.einsum("nkk->n", H) / m, 1e-300)
    H += (1e-11 * scale)[:, None, None] * np.eye(m)
    H += ((np.einsum("nkk->nk", H) <= 0) * scale[:, None])[..., None] * np.eye(m)
    return np.linalg.solve(H, b[..., None])[..., 0]


def _solve(A, b, lb, ub, p, tol, max_iterations, warm_start):
    """All frames: (x (N, n), iterations (N,))."""
    N = A.shape[0]
    lam = _minimum_norm_multipliers(A, b)
    x = np.empty((N, A.shape[2]))
    its = np.zeros(N, dtype=int)
    first = np.arange(0, N, _WARM_STRIDE)
    if warm_start and N > 2 * _WARM_STRIDE:
        if first[-1] != N - 1:
            first = np.append(first, N - 1)
        keep = np.ones(N, dtype=bool)
        keep[first] = False
        rest = np.flatnonzero(keep)  # (np.setdiff1d would import numpy.ma: 8 ms)
        groups = (first, rest)
    else:
        groups = (np.arange(N),)
    for k, idx in enumerate(groups):
        if k == 1:  # warm start: the multipliers interpolated between the solved frames
            for j in range(lam.shape[1]):
                lam[idx, j] = np.interp(idx, first, lam[first, j])
        lam_k, x_k, its_k = _newton(
            A[idx], b[idx], lb[idx], ub[idx], p, lam[idx].copy(), tol[idx], max_iterations
        )
        lam[idx], x[idx], its[idx] = lam_k, x_k, its_k
    return x, its
