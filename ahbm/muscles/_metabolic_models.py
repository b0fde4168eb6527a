"""The formulas of the muscle energy models, on any array namespace (numpy or casadi).

Private to :mod:`ahbm.muscles.metabolics`, which checks the inputs and documents the
models. Each branch of OpenSim's probes goes through :func:`_switch`: sharp (``np.where``
or ``casadi.if_else``) when its steepness is ``None``, a ``tanh`` blend otherwise (the
blend of OpenSim's ``Bhargava2004SmoothedMuscleMetabolics``). Quantities are
``(..., n)``; parameters ``(n,)`` numbers; rates in W (per muscle).
"""

from __future__ import annotations

import math

import numpy as np

_HALF_PI = 0.5 * math.pi


def _switch(cond, left, right, steepness, xp):
    """``left`` where ``cond <= 0``, ``right`` where ``cond > 0``; or their tanh blend.

    With a steepness ``k`` the switch is ``left + (right - left) (1 + tanh(k cond)) / 2``,
    which tends to the sharp switch as ``k`` grows (except at ``cond = 0`` exactly, where
    it gives the mean).
    """
    if steepness is None:
        if xp is np:
            return np.where(cond > 0, right, left)
        return xp.if_else(cond > 0, right, left)
    step = 0.5 + 0.5 * xp.tanh(steepness * cond)
    return left + (right - left) * step


def _ramp(x, steepness, xp):
    """``max(x, 0)``; with a steepness, ``x (1 + tanh(k x)) / 2`` (smooth)."""
    if steepness is None:
        return xp.fmax(x, 0.0)
    return x * (0.5 + 0.5 * xp.tanh(steepness * x))


def _piecewise_linear(x, knots, values, steepness, xp):
    """OpenSim's PiecewiseLinearFunction (end slopes extrapolated) as a sum of ramps."""
    xk = np.asarray(knots, dtype=float)
    yk = np.asarray(values, dtype=float)
    if xk.size == 1:
        return 0.0 * x + yk[0]
    slopes = np.diff(yk) / np.diff(xk)
    out = yk[0] + slopes[0] * (x - xk[0])
    for k in range(1, xk.size - 1):
        change = slopes[k] - slopes[k - 1]
        if change != 0.0:
            out = out + change * _ramp(x - xk[k], steepness, xp)
    return out


def _scaled_inputs(opts, excitation, activation, active_fiber_force):
    s = opts.muscle_effort_scaling_factor
    return s * excitation, s * activation, s * active_fiber_force


def _umberger(p, mass, u, a, ln, v, fa, fl, opts, sm, xp):
    """Umberger (2010) as OpenSim's Umberger2010MuscleMetabolicsProbe; W/kg inside.

    Returns the activation-maintenance, shortening (after the non-negative-power
    adjustment) and work rates and the per-muscle total, all in W.
    """
    u, a, fa = _scaled_inputs(opts, u, a, fa)
    k_v, k_p, k_h, k_e, k_l = sm
    A = _switch(u - a, 0.5 * (u + a), u, k_e, xp)
    r = p.ratio_slow_twitch_fibers
    if opts.use_Bhargava_recruitment_model:
        # uS / (uS + uF) with uS = r sin(x), uF = (1 - r)(1 - cos x), x = pi u / 2, written
        # with half angles so that it is defined (and 1) at u = 0 as OpenSim sets it.
        c, s = xp.cos(0.5 * _HALF_PI * u), xp.sin(0.5 * _HALF_PI * u)
        if xp is np:
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = np.where(u == 0, 1.0, r * c / (r * c + (1 - r) * s))
        else:
            ratio = r * c / (r * c + (1 - r) * s)
    else:
        ratio = r
    aerobic = opts.aerobic_factor
    long = ln - 1.0

    am0 = 128.0 * (1.0 - ratio) + 25.0
    am = aerobic * A**0.6 * am0 * _switch(long, 1.0, 0.4 + 0.6 * fl, k_l, xp)

    vmax = p.max_contraction_velocity
    alpha_fast = 153.0 / vmax
    alpha_slow = 100.0 / (vmax / 2.5)
    vn = v / p.optimal_fiber_length
    slow = -alpha_slow * vn
    slow = _switch(slow - 100.0, slow, 100.0, k_h, xp)  # at most 100 W/kg
    shortening = aerobic * A**2 * (slow * ratio - alpha_fast * vn * (1.0 - ratio))
    eccentric = 4.0 if opts.include_negative_mechanical_work else 0.3
    lengthening = aerobic * A * (eccentric * alpha_slow * vn)
    sdot = _switch(v, shortening, lengthening, k_v, xp)
    sdot = sdot * _switch(long, 1.0, fl, k_l, xp)

    fa = xp.fmax(fa, 0.0)
    work = -fa * v
    if not opts.include_negative_mechanical_work:
        work = _switch(v, work, 0.0 * work, k_v, xp)
    wdot = work / mass

    if opts.forbid_negative_total_power:
        before = am + sdot + wdot
        sdot = sdot - _switch(-before, 0.0 * before, before, k_p, xp)

    if opts.activation_maintenance_rate_on and opts.shortening_rate_on:
        edot = am + sdot
        if opts.enforce_minimum_heat_rate_per_muscle:
            edot = _switch(1.0 - edot, edot, 1.0 + 0.0 * edot, k_h, xp)
    else:
        edot = 0.0 * am
        if opts.activation_maintenance_rate_on:
            edot = edot + am
        if opts.shortening_rate_on:
            edot = edot + sdot
    if opts.mechanical_work_rate_on:
        edot = edot + wdot
    return am * mass, sdot * mass, wdot * mass, edot * mass


def _bhargava(p, mass, u, a, ln, v, fa, ftotal, fl, opts, sm, xp):
    """Bhargava et al. (2004) as OpenSim's Bhargava2004MuscleMetabolicsProbe; W.

    Returns the activation, maintenance, shortening (after the non-negative-power
    adjustment) and work rates and the per-muscle total.
    """
    passive = ftotal - fa
    u, a, fa = _scaled_inputs(opts, u, a, fa)
    ftotal = fa + passive
    k_v, k_p, k_h, _, k_l = sm
    r = p.ratio_slow_twitch_fibers
    u_slow = r * xp.sin(_HALF_PI * u)
    u_fast = (1.0 - r) * (1.0 - xp.cos(_HALF_PI * u))
    f_iso = a * fl * p.max_isometric_force

    adot = mass * (
        p.activation_constant_slow_twitch * u_slow + p.activation_constant_fast_twitch * u_fast
    )
    knots, values = opts.normalized_fiber_length_dependence_on_maintenance_rate
    length_dependence = _piecewise_linear(ln, knots, values, k_l, xp)
    mdot = (
        mass
        * length_dependence
        * (
            p.maintenance_constant_slow_twitch * u_slow
            + p.maintenance_constant_fast_twitch * u_fast
        )
    )
    if opts.use_force_dependent_shortening_prop_constant:
        alpha = _switch(v, 0.16 * f_iso + 0.18 * ftotal, 0.157 * ftotal, k_v, xp)
    else:
        alpha = _switch(v, 0.25 * ftotal, 0.0 * ftotal, k_v, xp)
    sdot = -alpha * v

    work = -fa * v
    if not opts.include_negative_mechanical_work:
        work = _switch(v, work, 0.0 * work, k_v, xp)

    if opts.forbid_negative_total_power:
        before = adot + mdot + sdot + work
        sdot = sdot - _switch(-before, 0.0 * before, before, k_p, xp)

    if opts.activation_rate_on and opts.maintenance_rate_on and opts.shortening_rate_on:
        edot = adot + mdot + sdot
        if opts.enforce_minimum_heat_rate_per_muscle:
            edot = _switch(mass - edot, edot, mass + 0.0 * edot, k_h, xp)
    else:
        edot = 0.0 * adot
        if opts.activation_rate_on:
            edot = edot + adot
        if opts.maintenance_rate_on:
            edot = edot + mdot
        if opts.shortening_rate_on:
            edot = edot + sdot
    if opts.mechanical_work_rate_on:
        edot = edot + work
    return adot, mdot, sdot, work, edot
