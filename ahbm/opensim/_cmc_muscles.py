"""Millard muscle states integrated over CMC's windows, many candidates at once (internal).

CMC integrates the muscles' activation and fiber length thousands of times
(for each window: the force range at the lowest and highest excitations, the
excitations that give the chosen forces, the simulation itself). The exact
Bézier curves of :mod:`ahbm.muscles.millard_curves` cost a Newton solve per
evaluation, so :class:`MillardTables` samples each muscle's four curves once
per run (values and slopes from the public curve functions) and evaluates them
by cubic Hermite interpolation on that grid (errors below 1e-8 of the curves'
scale on 1201 points; linear beyond the grid, where the curves are lines).
The state equations are those of OpenSim's ``Millard2012EquilibriumMuscle``
with its damped elastic tendon, as :func:`ahbm.muscles.millard.millard_state`
computes them; ``tests/opensim/test_cmc.py`` compares the two.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ahbm.errors import ModelError
from ahbm.muscles.millard_curves import (
    MillardParameters,
    millard_active_force_length,
    millard_force_velocity,
    millard_passive_force_length,
    millard_tendon_force_length,
)

_EPS = np.finfo(float).eps
_SIGNIFICANT = _EPS ** (7.0 / 8.0)


class _Curve:
    """Cubic Hermite tables (G, n) of one curve of n muscles on a uniform grid."""

    def __init__(self, fn, params, lo, hi, n_grid):
        self.x0, self.h = float(lo), (float(hi) - float(lo)) / (n_grid - 1)
        self.x1 = float(hi)
        x = np.linspace(lo, hi, n_grid)[:, None]
        grid = np.broadcast_to(x, (n_grid, params.n))
        self.y = np.ascontiguousarray(fn(grid, params))
        self.d = np.ascontiguousarray(fn(grid, params, derivative=1)) * self.h


class MillardTables:
    """Millard muscles (damped elastic tendon) on sampled curves, for CMC's integrations.

    Parameters
    ----------
    params : MillardParameters
        The muscles (OpenSim's changes, :meth:`MillardParameters.as_used`, applied here).
    n_grid : int
        Samples per curve.

    Raises
    ------
    ModelError
        Muscles without fiber damping (OpenSim's undamped model, ``fiber_damping``
        below 0.001), which ahbm cmc does not implement, named.
    """

    def __init__(self, params: MillardParameters, n_grid: int = 1201):
        p = params.as_used(rigid_tendon=False)
        undamped = [nm for nm, b in zip(p.names, p.fiber_damping, strict=True) if b < 0.001]
        if undamped:
            raise ModelError(
                f"muscles {undamped} have fiber_damping below 0.001 (OpenSim's undamped "
                "Millard model), which ahbm cmc does not implement; give them a fiber damping "
                "(OpenSim's default 0.1)"
            )
        self.names = list(p.names)
        self.n = p.n
        self.tol = 1e-7
        self.f0 = p.max_isometric_force
        self.lopt = p.optimal_fiber_length
        self.lts = p.tendon_slack_length
        self.vmax = p.max_contraction_velocity * self.lopt
        self.beta = p.fiber_damping
        self.amin = p.minimum_activation
        self.tau_a, self.tau_d = p.activation_time_constant, p.deactivation_time_constant
        pen0, maxpen = p.pennation_angle, p.maximum_pennation_angle
        self.pennate = pen0 > _EPS
        self.height = self.lopt * np.sin(pen0)
        self.maxpen, self.sin_max = maxpen, np.sin(maxpen)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.pen_min = np.where(maxpen > _SIGNIFICANT, self.height / self.sin_max,
                                    0.01 * self.lopt)  # fmt: skip
        active_min = p.min_norm_active_fiber_length * self.lopt
        self.lmin = np.maximum(_SIGNIFICANT, np.maximum(active_min, self.pen_min))
        lo_a = min(float(np.min(p.min_norm_active_fiber_length)), 0.3) - 0.05
        hi_a = float(np.max(p.max_norm_active_fiber_length)) + 0.05
        self.fl = _Curve(millard_active_force_length, p, lo_a, hi_a, n_grid)
        self.fpe = _Curve(millard_passive_force_length, p,
                          1.0 + float(np.min(p.fiber_strain_at_zero_force)) - 0.05,
                          1.0 + float(np.max(p.fiber_strain_at_one_norm_force)) + 0.05,
                          n_grid)  # fmt: skip
        self.fv = _Curve(millard_force_velocity, p, -1.05, 1.05, n_grid)
        self.ft = _Curve(millard_tendon_force_length, p, 0.995,
                         1.0 + float(np.max(p.tendon_strain_at_one_norm_force)) + 0.05,
                         n_grid)  # fmt: skip

        curves = (self.fl, self.fpe, self.fv, self.ft)
        self._Y = np.ascontiguousarray(np.stack([c.y for c in curves]))
        self._D = np.ascontiguousarray(np.stack([c.d for c in curves]))
        self._X0 = np.array([c.x0 for c in curves])
        self._HG = np.array([c.h for c in curves])
        self._P = np.ascontiguousarray(np.stack([
            self.f0, self.lopt, self.lts, self.vmax, self.beta, self.amin, self.tau_a,
            self.tau_d, self.height, self.maxpen, self.sin_max, self.pen_min, self.lmin,
            self.pennate.astype(float)], axis=1))  # fmt: skip

    def integrate(self, u, a, lce, lmt_stages, h, tol=None):
        """Muscle states after ``len(lmt_stages) // 2`` intervals of `h` seconds with constant
        excitations, integrated with error control (local error below `tol` in activation
        and in fiber length over optimal fiber length; default :attr:`tol`).

        Parameters
        ----------
        u : (K, n) excitations; a, lce : (K, n) initial activation and fiber length.
        lmt_stages : (2 S + 1, n) musculotendon lengths at ``t0 + j h / 2`` (interpolated
        between the samples by cubic Hermite).

        Returns
        -------
        a, lce, force, vn, fmax : (K, n) at the end: tendon force, normalized fiber
        velocity and OpenSim's ``calcInextensibleTendonActiveFiberForce`` at activation 1
        (``F0 fL(lM) fV(vM) cos α`` from the state's fiber length and velocity).
        """
        u, a, lce = (np.ascontiguousarray(np.broadcast_to(x, np.shape(u)), dtype=float)
                     for x in (u, a, lce))  # fmt: skip
        L = np.ascontiguousarray(lmt_stages, dtype=float)
        T = float(h) * ((L.shape[0] - 1) // 2)
        return _integrate(self._Y, self._D, self._X0, self._HG, self._P, u, a, lce, L, T,
                          float(self.tol if tol is None else tol))  # fmt: skip

    def rigid_tendon_active(self, lmt, vmt):
        """OpenSim's ``calcInextensibleTendonActiveFiberForce`` at activation 1, (n,).

        The fiber length and velocity of an inextensible tendon at musculotendon
        length `lmt` (n,) and lengthening speed `vmt` (n,): ``lM = sqrt(h² + (lMT −
        lTs)²)``, ``vM = vMT cos α``; then ``F0 fL(lM) fV(vM) cos α``, 0 where the
        fiber is clamped at its minimum length. CMC's fast target weighs each
        muscle's force by this (OpenSim's ``ActuatorForceTargetFast``).
        """
        return _rigid_active(self._Y, self._D, self._X0, self._HG, self._P,
                             np.ascontiguousarray(lmt, dtype=float),
                             np.ascontiguousarray(vmt, dtype=float))  # fmt: skip

    def state(self, a, lmt, lce, v0=0.0):
        """Tendon force, normalized fiber velocity, active fiber force (K, n) at states (K, n);
        `v0` (broadcast to (K, n)): the normalized velocities the solve starts from."""
        a, lmt, lce, v0 = (np.ascontiguousarray(np.broadcast_to(x, np.shape(lce)), dtype=float)
                           for x in (a, lmt, lce, v0))  # fmt: skip
        return _states(self._Y, self._D, self._X0, self._HG, self._P, a, lmt, lce, v0)


@njit(cache=True)
def _curve(Y, D, X0, HG, c, j, x):
    """Value and slope of curve c of muscle j at x (cubic Hermite; the end lines beyond)."""
    G = Y.shape[1]
    hg = HG[c]
    s = (x - X0[c]) / hg
    if s <= 0.0:
        k = D[c, 0, j] / hg
        return Y[c, 0, j] + k * (x - X0[c]), k
    if s >= G - 1:
        k = D[c, G - 1, j] / hg
        return Y[c, G - 1, j] + k * (x - X0[c] - (G - 1) * hg), k
    i = int(s)
    if i > G - 2:
        i = G - 2
    t = s - i
    y0, y1, d0, d1 = Y[c, i, j], Y[c, i + 1, j], D[c, i, j], D[c, i + 1, j]
    t2 = t * t
    t3 = t2 * t
    val = (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * d0 + (3 * t2 - 2 * t3) * y1 + (
        t3 - t2) * d1  # fmt: skip
    der = (6 * t2 - 6 * t) * (y0 - y1) + (3 * t2 - 4 * t + 1) * d0 + (3 * t2 - 2 * t) * d1
    return val, der / hg


@njit(cache=True)
def _state(Y, D, X0, HG, P, j, a, lmt, lce, v):
    """(tendon force, ṽ, active force, F0 fL fV cos α, clamped) of muscle j; v: Newton start."""
    f0, lopt, lts, beta, amin = P[j, 0], P[j, 1], P[j, 2], P[j, 4], P[j, 5]
    height, maxpen, sin_max, pen_min, lmin = P[j, 8], P[j, 9], P[j, 10], P[j, 11], P[j, 12]
    a = min(max(a, amin), 1.0)
    lce = max(lce, lmin)
    phi = 0.0
    if P[j, 13] > 0.0:
        phi = maxpen
        if lce > pen_min:
            sn = height / lce
            if sn < sin_max:
                phi = math.asin(min(sn, 1.0))
    cos = math.cos(phi)
    ln = lce / lopt
    fal = _curve(Y, D, X0, HG, 0, j, ln)[0]
    fpe = _curve(Y, D, X0, HG, 1, j, ln)[0]
    fse = _curve(Y, D, X0, HG, 3, j, (lmt - lce * cos) / lts)[0]
    afl = a * fal
    v = _fiber_velocity(Y, D, X0, HG, j, afl, fpe, beta, cos, fse, v)
    clamped = (lce <= lmin and v <= 0.0) or lce < lmin
    if clamped:
        return fse * f0, 0.0, 0.0, 0.0
    fv = _curve(Y, D, X0, HG, 2, j, v)[0]
    return fse * f0, v, f0 * afl * fv, f0 * fal * fv * cos


@njit(cache=True)
def _fv_residual(Y, D, X0, HG, j, afl, fpe, beta, cos, fse, v):
    fv, dfv = _curve(Y, D, X0, HG, 2, j, v)
    return (afl * fv + fpe + beta * v) * cos - fse, (afl * dfv + beta) * cos


@njit(cache=True)
def _fiber_velocity(Y, D, X0, HG, j, afl, fpe, beta, cos, fse, v):
    """The normalized fiber velocity of the damped equilibrium
    ``(a fL fV(v) + fPE + β v) cos α = fSE``, Newton's method from `v` kept inside a
    bracket: the residual's slope is at least ``β cos α`` (fV never falls; the sampled
    curve is linear beyond its ends), so the root lies within ``|r(v)| / (β cos α)`` of
    any v. A Newton step that leaves the bracket (or is not finite) is replaced by
    bisection; every evaluated residual's sign shrinks the bracket."""
    r, dr = _fv_residual(Y, D, X0, HG, j, afl, fpe, beta, cos, fse, v)
    if r == 0.0:
        return v
    width = abs(r) / (beta * cos)
    lo, hi = (v - width, v) if r > 0.0 else (v, v + width)
    for _ in range(200):
        step = r / dr if dr > 0.0 else 0.0
        vn = v - step
        if not (lo < vn < hi) or not math.isfinite(vn):
            vn = 0.5 * (lo + hi)
        r, dr = _fv_residual(Y, D, X0, HG, j, afl, fpe, beta, cos, fse, vn)
        if abs(vn - v) <= 1e-13 * max(1.0, abs(vn)) or r == 0.0:
            return vn
        v = vn
        if r > 0.0:
            hi = v
        else:
            lo = v
        if hi - lo <= 1e-13 * max(1.0, abs(v)):
            return v
    return v


@njit(cache=True)
def _adot(P, j, u, a):
    ac = min(max(a, P[j, 5]), 1.0)
    f = 0.5 + 1.5 * ac
    if u > ac:
        return (u - ac) / (P[j, 6] * f)
    return (u - ac) / (P[j, 7] / f)


@njit(cache=True)
def _lmt_at(L, j, hs, tau):
    """Musculotendon length of muscle j at time tau from uniform samples (spacing hs):
    cubic Hermite with central-difference slopes (one-sided at the ends)."""
    N = L.shape[0] - 1
    if N == 0:
        return L[0, j]
    s = tau / hs
    if s <= 0.0:
        return L[0, j]
    if s >= N:
        return L[N, j]
    i = int(s)
    if i > N - 1:
        i = N - 1
    t = s - i
    y0, y1 = L[i, j], L[i + 1, j]
    m0 = (L[i + 1, j] - L[i - 1, j]) * 0.5 if i > 0 else y1 - y0
    m1 = (L[i + 2, j] - L[i, j]) * 0.5 if i + 1 < N else y1 - y0
    t2 = t * t
    t3 = t2 * t
    return ((2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * m0 + (3 * t2 - 2 * t3) * y1
            + (t3 - t2) * m1)  # fmt: skip


@njit(cache=True)
def _integrate(Y, D, X0, HG, P, u, a, lce, L, T, tol):
    """Activation and fiber length of every (candidate, muscle) over [0, T] with constant
    excitations: Bogacki-Shampine 3(2) with error control (the fiber-tendon mode of a
    slack or weakly active muscle decays within a fraction of a millisecond, where a
    fixed step of 1 ms is unstable)."""
    K, n = u.shape
    N = L.shape[0] - 1
    hs = T / max(N, 1)
    A, LM = a.copy(), lce.copy()
    F, V, FM = np.empty((K, n)), np.empty((K, n)), np.empty((K, n))
    for k in range(K):
        for j in range(n):
            vm, lopt = P[j, 3], P[j, 1]
            x, l, v = A[k, j], LM[k, j], 0.0
            uu = u[k, j]
            tau, h = 0.0, min(T, 5e-4)
            v = _state(Y, D, X0, HG, P, j, x, _lmt_at(L, j, hs, 0.0), l, v)[1]
            k1a, k1l = _adot(P, j, uu, x), v * vm
            while tau < T * (1.0 - 1e-12):
                h = min(h, T - tau)
                v2 = _state(
                    Y,
                    D,
                    X0,
                    HG,
                    P,
                    j,
                    x + 0.5 * h * k1a,
                    _lmt_at(L, j, hs, tau + 0.5 * h),
                    l + 0.5 * h * k1l,
                    v,
                )[1]
                k2a, k2l = _adot(P, j, uu, x + 0.5 * h * k1a), v2 * vm
                x3, l3 = x + 0.75 * h * k2a, l + 0.75 * h * k2l
                v3 = _state(Y, D, X0, HG, P, j, x3, _lmt_at(L, j, hs, tau + 0.75 * h), l3, v2)[1]
                k3a, k3l = _adot(P, j, uu, x3), v3 * vm
                xn = x + h * (2.0 / 9.0 * k1a + 1.0 / 3.0 * k2a + 4.0 / 9.0 * k3a)
                ln = l + h * (2.0 / 9.0 * k1l + 1.0 / 3.0 * k2l + 4.0 / 9.0 * k3l)
                v4 = _state(Y, D, X0, HG, P, j, xn, _lmt_at(L, j, hs, tau + h), ln, v3)[1]
                k4a, k4l = _adot(P, j, uu, xn), v4 * vm
                ea = h * (-5.0 / 72.0 * k1a + 1.0 / 12.0 * k2a + 1.0 / 9.0 * k3a - 0.125 * k4a)
                el = h * (-5.0 / 72.0 * k1l + 1.0 / 12.0 * k2l + 1.0 / 9.0 * k3l - 0.125 * k4l)
                err = max(abs(ea), abs(el) / lopt) / tol
                if err <= 1.0 or h <= 1e-8:
                    tau += h
                    x, l, v = xn, ln, v4
                    k1a, k1l = k4a, k4l
                fac = 0.9 * (1.0 / max(err, 1e-10)) ** (1.0 / 3.0)
                h = h * min(4.0, max(0.2, fac))
            f, v, _, fm = _state(Y, D, X0, HG, P, j, x, L[N, j], l, v)
            A[k, j], LM[k, j], F[k, j], V[k, j], FM[k, j] = x, l, f, v, fm
    return A, LM, F, V, FM


@njit(cache=True)
def _rigid_active(Y, D, X0, HG, P, lmt, vmt):
    n = lmt.shape[0]
    out = np.zeros(n)
    for j in range(n):
        f0, lopt, lts, vm = P[j, 0], P[j, 1], P[j, 2], P[j, 3]
        height, maxpen, sin_max, pen_min, lmin = P[j, 8], P[j, 9], P[j, 10], P[j, 11], P[j, 12]
        along = lmt[j] - lts
        lce = math.sqrt(height * height + along * along)
        phi = 0.0
        if P[j, 13] > 0.0:
            phi = maxpen
            if lce > pen_min:
                sn = height / lce
                if sn < sin_max:
                    phi = math.asin(min(sn, 1.0))
        cos = math.cos(phi)
        vce = vmt[j] * cos
        if (lce <= lmin and vce <= 0.0) or lce < lmin:
            continue
        fal = _curve(Y, D, X0, HG, 0, j, lce / lopt)[0]
        fv = _curve(Y, D, X0, HG, 2, j, vce / vm)[0]
        out[j] = f0 * fal * fv * cos
    return out


@njit(cache=True)
def _states(Y, D, X0, HG, P, a, lmt, lce, v0):
    K, n = a.shape
    F, V, ACT = np.empty((K, n)), np.empty((K, n)), np.empty((K, n))
    for k in range(K):
        for j in range(n):
            f, v, act, _ = _state(Y, D, X0, HG, P, j, a[k, j], lmt[k, j], lce[k, j], v0[k, j])
            F[k, j], V[k, j], ACT[k, j] = f, v, act
    return F, V, ACT


def hermite_lengths(L0, V0, L1, V1, h, n_steps):
    """Lengths at ``t0 + j h / (2 n_steps)``, ``j = 0 .. 2 n_steps``, by cubic Hermite in time.

    ``L0, L1`` (n,) lengths and ``V0, V1`` (n,) their rates at the window's ends.
    """
    s = np.linspace(0.0, 1.0, 2 * n_steps + 1)[:, None]
    s2, s3 = s * s, s * s * s
    return ((2 * s3 - 3 * s2 + 1) * L0 + (s3 - 2 * s2 + s) * h * V0 + (3 * s2 - 2 * s3) * L1
            + (s3 - s2) * h * V1)  # fmt: skip


__all__: list[str] = []
