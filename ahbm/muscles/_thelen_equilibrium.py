"""Thelen (2003) muscle equilibrium with OpenSim's fixed-width pennation (internal).

The solvers behind :func:`ahbm.muscles.muscle_equilibrium` for the
``"thelen2003"`` curves (rigid and elastic tendon), and the pennation geometry
of OpenSim's ``MuscleFixedWidthPennationModel``.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.muscles.hill_curves import (
    _th_dfal,
    _th_dfpe,
    _th_dfse,
    _th_dlce_norm,
    _th_fal,
    _th_fpe,
    _th_fse,
    _th_fv,
)

__all__: list[str] = []

_EPS = np.finfo(float).eps
_SIGNIFICANT = _EPS ** (7.0 / 8.0)  # SimTK::SignificantReal
_SQRT_EPS = math.sqrt(_EPS)


# Pennation geometry (OpenSim's MuscleFixedWidthPennationModel) -------------------------


class _Pennation:
    def __init__(self, params):
        self.lopt = params.optimal_fiber_length
        self.alpha0 = params.pennation_angle
        self.h = self.lopt * np.sin(self.alpha0)
        self.alpha_max = params.maximum_pennation_angle
        self.sin_max = np.sin(self.alpha_max)
        with np.errstate(divide="ignore"):
            self.lmin = np.where(
                self.alpha_max > _SIGNIFICANT, self.h / self.sin_max, 0.01 * self.lopt
            )
        self.lmin_at = self.lmin * np.cos(self.alpha_max)

    def angle(self, lm):
        with np.errstate(divide="ignore", invalid="ignore"):
            s = self.h / lm
            phi = np.where((lm > self.lmin) & (s < self.sin_max), np.arcsin(s), self.alpha_max)
        return np.where(self.alpha0 > _EPS, phi, 0.0)

    def fiber_length(self, lmt, lt):
        at = lmt - lt
        return np.where(at >= self.lmin_at, np.sqrt(self.h**2 + at**2), self.lmin)


# Thelen ---------------------------------------------------------------------------------


def _thelen_fv_args(params):
    return params.af, params.flen, params.fv_extrapolation_threshold


def _state_fields(tendon_force, fiber_force, active, passive, lm, lt, vm, ln, vn, phi, ok):
    """The fields of a MuscleState (all but the activation) as a dict."""
    return dict(
        tendon_force=tendon_force,
        fiber_force=fiber_force,
        active_fiber_force=active,
        passive_fiber_force=passive,
        fiber_length=lm,
        fiber_velocity=vm,
        normalized_fiber_length=ln,
        normalized_fiber_velocity=vn,
        pennation_angle=phi,
        tendon_length=np.broadcast_to(lt, np.shape(lm)) + 0.0,
        converged=ok,
    )


def _thelen_rigid(params, a, lmt, vmt):
    pen = _Pennation(params)
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    lm = pen.fiber_length(lmt, params.tendon_slack_length)
    phi = pen.angle(lm)
    cos = np.cos(phi)
    vm = vmt * cos
    vn = vm / (lopt * params.max_contraction_velocity)
    ln = lm / lopt
    fal = _th_fal(ln, params.kshape_active)
    fpe = _th_fpe(ln, params.passive_strain, params.kshape_passive)
    fv = _th_fv(vn, a, *_thelen_fv_args(params))
    active = np.where(lm > pen.lmin, f0 * a * fal * fv, 0.0)
    passive = f0 * fpe
    fiber = active + passive
    lts = params.tendon_slack_length
    return _state_fields(
        fiber * cos, fiber, active, passive, lm, lts, vm, ln, vn, phi, np.isfinite(fiber)
    )


def _thelen_elastic(params, a, lmt, vmt, tol, max_iterations):
    """OpenSim's Thelen2003Muscle::initMuscleState on whole arrays.

    Every entry follows OpenSim's iteration exactly; each pass works on the entries that
    have not converged yet (index compaction), so a few slow entries cost little.
    """
    shape = lmt.shape
    pen = _Pennation(params)

    def flat(x):
        return np.array(np.broadcast_to(x, shape), dtype=float).ravel()

    P = {
        "f0": params.max_isometric_force,
        "lopt": params.optimal_fiber_length,
        "lts": params.tendon_slack_length,
        "vmax": params.max_contraction_velocity,
        "e0t": params.tendon_strain,
        "e0m": params.passive_strain,
        "kact": params.kshape_active,
        "kpe": params.kshape_passive,
        "af": params.af,
        "flen": params.flen,
        "thr": params.fv_extrapolation_threshold,
        "h": pen.h,
        "lmin": pen.lmin,
        "lmin_at": pen.lmin_at,
        "alpha0": pen.alpha0,
        "alpha_max": pen.alpha_max,
        "sin_max": pen.sin_max,
        "a": a,
        "lmt": lmt,
        "vmt": vmt,
    }
    P = {k: flat(v) for k, v in P.items()}
    tol_f = np.maximum(tol * P["f0"], _SIGNIFICANT * 10.0)

    def angle(S, lm):
        with np.errstate(divide="ignore", invalid="ignore"):
            sn = S["h"] / lm
            phi = np.where((lm > S["lmin"]) & (sn < S["sin_max"]), np.arcsin(sn), S["alpha_max"])
        return np.where(S["alpha0"] > _EPS, phi, 0.0)

    def position(S, lm):
        phi = angle(S, lm)
        cos = np.cos(phi)
        lt = S["lmt"] - lm * cos
        ltn, ln = lt / S["lts"], lm / S["lopt"]
        mult = _th_fse(ltn, S["e0t"]), _th_fal(ln, S["kact"]), _th_fpe(ln, S["e0m"], S["kpe"])
        return (phi, cos, lt, ltn, ln) + mult

    def error(S, fse, fal, fpe, fv, cos):
        fm = (S["a"] * fal * fv + fpe) * S["f0"]
        return fm, fm * cos - fse * S["f0"]

    def partials(S, lm, pos, fv, fm):
        phi, cos, lt, ltn, ln = pos[:5]
        f0, lts, h = S["f0"], S["lts"], S["h"]
        d_fm = (S["a"] * fv * _th_dfal(ln, S["kact"]) + _th_dfpe(ln, S["e0m"], S["kpe"])) * (
            f0 / S["lopt"]
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            dcos = h**2 / (lm**3 * np.sqrt(1.0 - h**2 / lm**2))
            d_fmat = d_fm * cos + fm * dcos
            dphi = -h / (lm * lm * np.sqrt(1.0 - (h / lm) ** 2))
        dlt_dlm = -np.cos(phi) + lm * np.sin(phi) * dphi
        dfse = _th_dfse(ltn, S["e0t"])
        return d_fmat, d_fmat * cos, dfse * f0 / lts, dfse * dlt_dlm * f0 / lts

    def velocity(S, pos, d_fmat_at, d_ft_dlt):
        cos, lt = pos[1], pos[2]
        vmt, den = S["vmt"], d_fmat_at + d_ft_dlt
        split = (np.abs(den) > _SIGNIFICANT) & (lt > S["lts"])
        with np.errstate(divide="ignore", invalid="ignore"):
            vt = np.where(split, d_fmat_at / den * vmt, vmt)
        vn = (vmt - vt) * cos / (S["vmax"] * S["lopt"])
        return _th_fv(vn, S["a"], S["af"], S["flen"], S["thr"])

    with np.errstate(divide="ignore", invalid="ignore"):
        # initial guess: tendon at 1.01 slack length
        at0 = P["lmt"] - 1.01 * P["lts"]
        lm = np.where(at0 >= P["lmin_at"], np.sqrt(P["h"] ** 2 + at0**2), P["lmin"])
        pos = position(P, lm)
        fv = np.ones_like(lm)
        d = partials(P, lm, pos, fv, np.zeros_like(lm))
        fv = velocity(P, pos, d[1], d[2])
        fm, ferr = error(P, *pos[5:], fv, pos[1])
        d_fmat, _, _, d_ft_dlm = partials(P, lm, pos, fv, fm)
        ferr_prev, lm_prev = ferr.copy(), lm.copy()
        iters = 0
        while iters < max_iterations:
            idx = np.flatnonzero(np.abs(ferr) > tol_f)
            if not idx.size:
                break
            S = {k: v[idx] for k, v in P.items()}
            dferr = d_fmat[idx] - d_ft_dlm[idx]
            lm0, e0 = lm_prev[idx], ferr_prev[idx]
            lm_i, fm_i, ferr_i, fv_i = lm[idx], fm[idx], ferr[idx], fv[idx]
            step = np.ones(idx.size)
            inner = np.arange(idx.size)
            while inner.size:
                Si = {k: v[inner] for k, v in S.items()}
                delta = -step[inner] * e0[inner] / dferr[inner]
                big = np.abs(delta) > _SIGNIFICANT
                cand = np.where(big, lm0[inner] + delta, lm0[inner] - np.sign(delta) * _SQRT_EPS)
                step[inner] = np.where(big, step[inner], 0.0)
                cand = np.maximum(cand, Si["lmin"])
                pos_i = position(Si, cand)
                fm_n, ferr_n = error(Si, *pos_i[5:], fv_i[inner], pos_i[1])
                lm_i[inner], fm_i[inner], ferr_i[inner] = cand, fm_n, ferr_n
                done = step[inner] <= _SQRT_EPS
                step[inner] = np.where(done, step[inner], 0.5 * step[inner])
                inner = inner[~done & (np.abs(ferr_n) >= np.abs(e0[inner]))]
            pos_s = position(S, lm_i)
            d_s = partials(S, lm_i, pos_s, fv_i, fm_i)
            lm[idx], fm[idx], ferr[idx] = lm_i, fm_i, ferr_i
            lm_prev[idx], ferr_prev[idx] = lm_i, ferr_i
            d_fmat[idx], d_ft_dlm[idx] = d_s[0], d_s[3]
            fv[idx] = velocity(S, pos_s, d_s[1], d_s[2])
            iters += 1
    converged = np.abs(ferr) < tol_f
    at_min = ~converged & (lm <= P["lmin"])
    lm = np.where(at_min, P["lmin"], lm).reshape(shape)
    ok = (converged | at_min).reshape(shape)
    return _thelen_from_fiber_length(params, pen, a, lmt, vmt, lm, ok)


def _thelen_from_fiber_length(params, pen, a, lmt, vmt, lm, ok):
    """Forces and velocities as OpenSim's Thelen2003Muscle computes them from its state."""
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    lts = params.tendon_slack_length
    lm = np.maximum(lm, pen.lmin)
    phi = pen.angle(lm)
    cos = np.cos(phi)
    lt = lmt - lm * cos
    ln = lm / lopt
    fse = _th_fse(lt / lts, params.tendon_strain)
    fal = _th_fal(ln, params.kshape_active)
    fpe = _th_fpe(ln, params.passive_strain, params.kshape_passive)
    with np.errstate(divide="ignore", invalid="ignore"):
        afalfv = fse / cos - fpe
        fv = afalfv / (a * fal)
    vn = _th_dlce_norm(a, fv, *_thelen_fv_args(params))
    clamped = (lm <= pen.lmin) & (vn <= 0)
    vn = np.where(clamped, 0.0, vn)
    active = np.where(clamped, 0.0, afalfv * f0)
    passive = fpe * f0
    fiber = np.where(clamped, 0.0, active + passive)
    vm = vn * params.max_contraction_velocity * lopt
    return _state_fields(
        fse * f0, fiber, active, passive, lm, lt, vm, ln, vn, phi, ok & np.isfinite(fse)
    )
