"""OpenSim's Millard2012EquilibriumMuscle: equilibrium, activation dynamics, SO coefficients.

The curves and :class:`~ahbm.muscles.millard_curves.MillardParameters` are in
:mod:`ahbm.muscles.millard_curves`. The model (Millard et al. 2013) as OpenSim 4.6's
``Millard2012EquilibriumMuscle`` computes it: fixed-width pennation with a maximum
pennation angle, a minimum fiber length (the larger of the active curve's minimum and the
pennation limit), an elastic tendon in equilibrium with the fiber (damped model with
``fiber_damping >= 0.001``, the default 0.1, or the classic undamped Hill model) or a
rigid tendon, and first-order activation dynamics. Quantities have the shape
``(..., n_muscles)`` with any leading batch axes (frames).

References
----------
Millard M, Uchida T, Seth A, Delp SL (2013) Flexing computational muscle: modeling and
simulation of musculotendon dynamics. J Biomech Eng 135:021005.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ahbm._internal.validation import as_choice, as_int, as_positive_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.muscles._arrays import _muscle_array, _state_arrays
from ahbm.muscles.hill import MuscleState
from ahbm.muscles.millard_curves import MillardParameters

__all__ = [
    "millard_activation_rate",
    "millard_equilibrium",
    "millard_force_coefficients",
    "millard_minimum_fiber_length",
    "millard_state",
]

_EPS = np.finfo(float).eps
_SIGNIFICANT = _EPS ** (7.0 / 8.0)  # SimTK::SignificantReal
_SQRT_EPS = math.sqrt(_EPS)


def _check(params) -> MillardParameters:
    if not isinstance(params, MillardParameters):
        raise DataError(
            "Expected `params` to be a MillardParameters (e.g. "
            f"MillardParameters.from_muscles(model.muscles)), got {type(params).__name__}"
        )
    return params


def millard_activation_rate(excitation, activation, params) -> np.ndarray:
    """Time derivative of the activation ``da/dt`` (1/s) of Millard muscles.

    Parameters
    ----------
    excitation, activation : array_like, (..., n)
    params : MillardParameters

    Returns
    -------
    ndarray, (..., n)

    Raises
    ------
    DataError
        Bad `params`, non-finite inputs or a last axis that is not one per muscle.

    Notes
    -----
    OpenSim's ``MuscleFirstOrderActivationDynamicModel``: ``a`` clamped to
    ``[minimum_activation, 1]``, ``τ = τ_act (0.5 + 1.5 a)`` if ``u > a`` else
    ``τ_deact / (0.5 + 1.5 a)``, ``da/dt = (u - a)/τ`` (Winters 1995).

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> millard_activation_rate([1.0], [0.5], p).round(6)
    array([40.])
    """
    params = _check(params)
    u = _muscle_array(excitation, "excitation", params.n)
    a = np.clip(_muscle_array(activation, "activation", params.n), params.minimum_activation, 1)
    factor = 0.5 + 1.5 * a
    tau = np.where(u > a, params.activation_time_constant * factor,
                   params.deactivation_time_constant / factor)  # fmt: skip
    return (u - a) / tau


# ---------------------------------------------------------------------------------------
# Geometry (MuscleFixedWidthPennationModel) and curves on flat arrays
# ---------------------------------------------------------------------------------------


class _Muscles:
    """Per-entry constants of flat (N,) entries and the curves at their muscle index."""

    def __init__(self, p: MillardParameters, m: np.ndarray):
        self.p, self.m = p, m
        self.f0 = p.max_isometric_force[m]
        self.lopt = p.optimal_fiber_length[m]
        self.lts = p.tendon_slack_length[m]
        self.vmax = p.max_contraction_velocity[m] * self.lopt
        self.beta = p.fiber_damping[m]
        self.pen0 = p.pennation_angle[m]
        self.height = self.lopt * np.sin(self.pen0)
        maxpen = p.maximum_pennation_angle[m]
        self.maxpen, self.sin_max = maxpen, np.sin(maxpen)
        with np.errstate(divide="ignore", invalid="ignore"):
            pen_min = np.where(maxpen > _SIGNIFICANT, self.height / self.sin_max, 0.01 * self.lopt)
        self.pen_min = pen_min
        self.pen_min_along = pen_min * np.cos(maxpen)
        active_min = p.min_norm_active_fiber_length[m] * self.lopt
        self.lmin = np.maximum(_SIGNIFICANT, np.maximum(active_min, pen_min))

    def sub(self, idx) -> _Muscles:
        out = object.__new__(_Muscles)
        for k, v in vars(self).items():
            setattr(out, k, v[idx] if isinstance(v, np.ndarray) else v)
        return out

    def curve(self, name, x, order=0):
        """Curve `name` of each entry's muscle at x (N,)."""
        return getattr(self.p, name).evaluate_flat(x, self.m, order)

    def pennation(self, lce):
        """Pennation angle (rad) at fiber length lce (m)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            s = self.height / lce
            phi = np.where(s < self.sin_max, np.arcsin(np.minimum(s, 1.0)), self.maxpen)
        phi = np.where(lce > self.pen_min, phi, self.maxpen)
        return np.where(self.pen0 > _EPS, phi, 0.0)

    def fiber_length(self, lmt, lt):
        """calcFiberLength: fiber length for a musculotendon and tendon length."""
        along = lmt - lt
        return np.where(along >= self.pen_min_along, np.sqrt(self.height**2 + along**2),
                        self.pen_min)  # fmt: skip

    def dphi_dlce(self, lce):
        with np.errstate(divide="ignore", invalid="ignore"):
            t2 = 1.0 / lce**2
            return -self.height * t2 / np.sqrt(1.0 - self.height**2 * t2)


def millard_minimum_fiber_length(params) -> np.ndarray:
    """Minimum fiber length (m) of each Millard muscle, where OpenSim clamps the fiber.

    The larger of the active curve's minimum ``min_norm_active_fiber_length lM0`` and the
    length at the maximum pennation angle ``lM0 sin α0 / sin α_max``.

    Parameters
    ----------
    params : MillardParameters

    Returns
    -------
    ndarray, (n,)

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> millard_minimum_fiber_length(p).round(6)
    array([0.04441])
    """
    params = _check(params)
    return _Muscles(params.as_used(), np.arange(params.n)).lmin.copy()


# ---------------------------------------------------------------------------------------
# Equilibrium
# ---------------------------------------------------------------------------------------


def millard_equilibrium(params, activation, mt_length, mt_speed=0.0, *, rigid_tendon=False,
                        velocity_sharing=False, tol=1e-8,
                        max_iterations=200) -> MuscleState:  # fmt: skip
    """Fiber length and forces of Millard muscles in equilibrium with their tendons.

    Parameters
    ----------
    params : MillardParameters
        ``n`` muscles (their curves as given; the changes OpenSim's muscle makes to them,
        :meth:`MillardParameters.as_used`, are applied here).
    activation : array_like, (..., n)
        Activation in [0, 1] (clamped to ``[minimum_activation, 1]`` as OpenSim does).
    mt_length : array_like, (..., n)
        Musculotendon (path) length, m.
    mt_speed : array_like, (..., n), optional
        Lengthening speed, m/s (default 0). With a rigid tendon it sets the fiber
        velocity; with an elastic tendon it is used only with ``velocity_sharing=True``.
    rigid_tendon : bool, optional
        OpenSim's ``ignore_tendon_compliance``: the fiber length follows from the path.
    velocity_sharing : bool, optional
        False (default): the static solve that OpenSim 4.6 performs whatever the speed
        (its ``computeFiberEquilibrium`` passes ``solveForVelocity`` where
        ``estimateMuscleFiberState`` expects ``staticSolution``, so the speed is never
        used). True: the velocity-sharing solve that code was written for, the speed
        shared between fiber and tendon by their stiffnesses (no OpenSim reference).
    tol : float, optional
        Force tolerance relative to ``F0`` (OpenSim: ``1e-8 F0``).
    max_iterations : int, optional
        Newton iterations (OpenSim: 200).

    Returns
    -------
    MuscleState
        Fields ``(..., n)``. As OpenSim reports them from its state: the forces and fiber
        velocity follow from the fiber length and activation (damped model: the fiber
        velocity that balances fiber and tendon forces; undamped: the inverse
        force-velocity curve); ``passive_fiber_force`` includes the damping force. A
        fiber at its minimum length and shortening is clamped (velocity 0, fiber forces
        0). ``converged`` is False where OpenSim fails (those entries are NaN).

    Raises
    ------
    DataError
        Bad `params`, activations outside [0, 1], non-positive lengths, batch axes that
        do not broadcast, bad `tol` or `max_iterations`.

    Warns
    -----
    AhbmWarning
        Where no equilibrium is found (NaN entries), naming the muscles.

    Notes
    -----
    Elastic tendon, as ``Millard2012EquilibriumMuscle::estimateMuscleFiberState``:
    Newton on the fiber length ``lM`` of ``F0 (a fL fV + fPE + β ṽ) cos α − F0 fT = 0``
    from ``lT = 1.01 lTs`` with step halving, ``lM`` bounded below by the minimum fiber
    length; ``fV`` from the velocity shared in proportion to the fiber and tendon
    stiffnesses (``vT = K_M/(K_M + K_T) vMT``). Rigid tendon:
    ``lM = sqrt((lMT − lTs)² + (lM0 sin α0)²)``, ``vM = vMT cos α``; the fiber force is
    not allowed to push (damping saturated).

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> s = millard_equilibrium(p, [1.0], [0.3], rigid_tendon=True)
    >>> round(float(s.tendon_force[0]), 9)
    1000.0
    """
    params = _check(params)
    n = params.n
    a, lmt, vmt, shape = _state_arrays(n, activation, mt_length, mt_speed)
    rigid_tendon = as_choice(rigid_tendon, "rigid_tendon", (True, False))
    velocity_sharing = as_choice(velocity_sharing, "velocity_sharing", (True, False))
    tol = as_positive_float(tol, "tol")
    max_iterations = as_int(max_iterations, "max_iterations", minimum=1)
    used = params.as_used(rigid_tendon=rigid_tendon)
    m = np.broadcast_to(np.arange(n), shape).ravel()
    mus = _Muscles(used, m)
    flat = [np.broadcast_to(x, shape).ravel() for x in (a, lmt, vmt)]
    a, lmt, vmt = flat
    a = np.clip(a, used.minimum_activation[m], 1.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if rigid_tendon:
            out = _rigid(mus, a, lmt, vmt)
        else:
            lce, ok = _solve_length(mus, a, lmt, vmt * velocity_sharing, tol, max_iterations)
            out = _elastic_state(mus, a, lmt, lce, ok)
    bad = ~out["converged"]
    if np.any(bad):
        names = sorted({params.names[i] for i in m[bad]})
        warnings.warn(
            f"millard_equilibrium: no equilibrium found for {int(bad.sum())} entries "
            f"(muscles {names}); they are NaN",
            AhbmWarning,
            stacklevel=2,
        )
        for k, v in out.items():
            if k != "converged":
                out[k] = np.where(bad, np.nan, v)
    out = {k: v.reshape(shape) for k, v in out.items()}
    return MuscleState(**out, activation=a.reshape(shape))


def millard_state(params, activation, mt_length, fiber_length) -> MuscleState:
    """Forces and fiber velocity of Millard muscles at a given fiber length (elastic tendon).

    What OpenSim reports from a state whose fiber length is set rather than solved
    (e.g. ``solve_for_equilibrium_for_auxiliary_states`` false: each muscle's
    ``default_fiber_length``): the tendon force from the tendon length
    ``lMT − lM cos α``, and the fiber velocity that balances fiber and tendon forces
    (damped model) or the inverse force-velocity curve (undamped), as in
    :func:`millard_equilibrium`'s report. Away from equilibrium that velocity can be
    large (metres per second): it is the velocity the muscle's dynamics give there.

    Parameters
    ----------
    params : MillardParameters
        ``n`` muscles.
    activation : array_like, (..., n)
        Activation in [0, 1] (clamped to ``[minimum_activation, 1]``).
    mt_length : array_like, (..., n)
        Musculotendon (path) length, m.
    fiber_length : array_like, (..., n)
        Fiber length, m (raised to the minimum fiber length, as OpenSim does).

    Returns
    -------
    MuscleState
        Fields ``(..., n)``; ``converged`` is False where the fiber velocity is not
        finite.

    Raises
    ------
    DataError
        Bad `params`, activations outside [0, 1], non-positive lengths, batch axes
        that do not broadcast.

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> eq = millard_equilibrium(p, [0.5], [0.31])
    >>> s = millard_state(p, [0.5], [0.31], eq.fiber_length)
    >>> bool(abs(s.tendon_force[0] - eq.tendon_force[0]) < 1e-9)
    True
    """
    params = _check(params)
    n = params.n
    a, lmt, _, shape = _state_arrays(n, activation, mt_length, 0.0)
    lce = _muscle_array(fiber_length, "fiber_length", n)
    try:
        shape = np.broadcast_shapes(shape, lce.shape)
    except ValueError as err:
        raise DataError(
            f"the batch axes of `fiber_length` {lce.shape} and of the lengths {shape} do not "
            "broadcast; give the same frames to each"
        ) from err
    if np.any(lce <= 0):
        raise DataError("Expected `fiber_length` > 0 m")
    used = params.as_used(rigid_tendon=False)
    m = np.broadcast_to(np.arange(n), shape).ravel()
    mus = _Muscles(used, m)
    a, lmt, lce = (np.broadcast_to(x, shape).ravel() for x in (a, lmt, lce))
    a = np.clip(a, used.minimum_activation[m], 1.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = _elastic_state(mus, a, lmt, lce, np.ones(lce.size, bool))
    out = {k: v.reshape(shape) for k, v in out.items()}
    return MuscleState(**out, activation=a.reshape(shape))


def _fields(mus, tendon, fiber, active, passive, lce, lt, v, phi, ok):
    return {
        "tendon_force": tendon, "fiber_force": fiber, "active_fiber_force": active,
        "passive_fiber_force": passive, "fiber_length": lce, "fiber_velocity": v,
        "normalized_fiber_length": lce / mus.lopt, "normalized_fiber_velocity": v / mus.vmax,
        "pennation_angle": phi, "tendon_length": lt, "converged": ok,
    }  # fmt: skip


def _rigid(mus, a, lmt, vmt):
    lce = np.maximum(mus.fiber_length(lmt, mus.lts), mus.lmin)
    phi = mus.pennation(lce)
    cos = np.cos(phi)
    lt = lmt - lce * cos
    v = np.where(lt < mus.lts - _SIGNIFICANT, 0.0, vmt * cos)
    clamped = ((lce <= mus.lmin) & (v <= 0)) | (lce < mus.lmin)
    v = np.where(clamped, 0.0, v)
    ln, vn = lce / mus.lopt, v / mus.vmax
    fv = np.where(v == 0.0, 1.0, mus.curve("_velocity_curve", vn))
    active = mus.f0 * a * mus.curve("_active_curve", ln) * fv
    elastic = mus.f0 * mus.curve("_passive_curve", ln)
    damping = mus.f0 * mus.beta * vn
    fiber = active + elastic + damping
    neg = fiber < 0
    damping = np.where(neg, -active - elastic, damping)
    fiber = np.where(neg, 0.0, fiber)
    zero = np.where(clamped, 0.0, 1.0)
    fiber, active, passive = fiber * zero, active * zero, (elastic + damping) * zero
    return _fields(mus, fiber * cos, fiber, active, passive, lce, lt, v, phi,
                   np.isfinite(fiber))  # fmt: skip


def _solve_length(mus, a, lmt, vmt, tol, max_iterations):
    """OpenSim's estimateMuscleFiberState, vectorized over entries (N,)."""
    static = np.abs(vmt) < _SIGNIFICANT
    tol = np.maximum(tol * mus.f0, _SIGNIFICANT * 10)
    st = {"lce": np.maximum(mus.fiber_length(lmt, 1.01 * mus.lts), mus.lmin)}
    st["fv"], st["vn"] = np.ones(lmt.size), np.zeros(lmt.size)

    # the per-entry evaluations, on the subset `k` (indices into the flat arrays)
    def update(k, need_partials, need_velocity):
        mk = mus.sub(k)
        lce = st["lce"][k]
        phi = mk.pennation(lce)
        cos, sin = np.cos(phi), np.sin(phi)
        tln = (lmt[k] - lce * cos) / mk.lts
        ln = lce / mk.lopt
        fal = mk.curve("_active_curve", ln)
        fpe = mk.curve("_passive_curve", ln)
        fse = mk.curve("_tendon_curve", tln)
        fm = mk.f0 * (a[k] * fal * st["fv"][k] + fpe + mk.beta * st["vn"][k])
        st["ferr"][k] = fm * cos - fse * mk.f0
        st["fse"][k] = fse
        if need_partials:
            dfm = mk.f0 * (a[k] * mk.curve("_active_curve", ln, 1) * st["fv"][k]
                           + mk.curve("_passive_curve", ln, 1)) / mk.lopt  # fmt: skip
            dphi = np.where(mk.height > 0, mk.dphi_dlce(lce), 0.0)
            dfmat = dfm * cos - fm * sin * dphi
            dfmat_at = dfmat / (cos - lce * sin * dphi)
            dft_dtl = mk.curve("_tendon_curve", tln, 1) * mk.f0 / mk.lts
            st["dferr"][k] = dfmat - dft_dtl * (-cos + lce * sin * dphi)
            if need_velocity:
                dyn = k[~static[k]]
                j = ~static[k]
                den = dfmat_at + dft_dtl
                share = (np.abs(den) > _SIGNIFICANT) & (tln > 1.0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    vt = np.where(share, dfmat_at / den * vmt[k], vmt[k])
                vn = (vmt[k] - vt) * cos / mk.vmax
                st["vn"][dyn] = vn[j]
                st["fv"][dyn] = mk.sub(j).curve("_velocity_curve", vn[j])

    size = lmt.size
    st.update(ferr=np.zeros(size), fse=np.zeros(size), dferr=np.zeros(size))
    allk = np.arange(size)
    st["fv"][:] = 1.0
    update(allk, True, True)
    update(allk, True, False)
    ferr_prev, lce_prev = st["ferr"].copy(), st["lce"].copy()
    act = allk[np.abs(st["ferr"]) > tol]
    for _ in range(max_iterations):
        if not act.size:
            break
        dferr = st["dferr"][act]
        h = np.ones(act.size)
        need = np.ones(act.size, bool)
        while need.any():
            k, hk = act[need], h[need]
            delta = -hk * ferr_prev[k] / dferr[need]
            big = np.abs(delta) > _SIGNIFICANT
            lce = np.where(big, lce_prev[k] + delta, lce_prev[k] - np.sign(delta) * _SQRT_EPS)
            hk = np.where(big, hk, 0.0)
            st["lce"][k] = np.maximum(lce, mus.lmin[k])
            update(k, False, False)
            stop = hk <= _SQRT_EPS
            h[need] = np.where(stop, hk, 0.5 * hk)
            keep = ~stop & (np.abs(st["ferr"][k]) >= np.abs(ferr_prev[k]))
            need[np.flatnonzero(need)] = keep
        ferr_prev[act], lce_prev[act] = st["ferr"][act], st["lce"][act]
        update(act, True, True)
        act = act[np.abs(st["ferr"][act]) > tol[act]]
    lce = st["lce"]
    converged = np.abs(st["ferr"]) < tol
    at_min = lce <= mus.lmin
    clamped = converged & (((lce <= mus.lmin) & (st["vn"] <= 0)) | (lce < mus.lmin))
    lce = np.where(clamped | (~converged & at_min), mus.lmin, lce)
    ok = converged | at_min
    return np.where(ok, lce, np.nan), ok


def _elastic_state(mus, a, lmt, lce, ok):
    """What OpenSim reports from the fiber-length state (calcFiberVelocityInfo etc.)."""
    lce = np.where(ok, np.maximum(lce, mus.lmin), mus.lmin)
    phi = mus.pennation(lce)
    cos = np.cos(phi)
    lt = lmt - lce * cos
    ln = lce / mus.lopt
    fal = mus.curve("_active_curve", ln)
    fpe = mus.curve("_passive_curve", ln)
    fse = mus.curve("_tendon_curve", lt / mus.lts)
    damped = mus.beta > 0
    vn = np.full(lce.shape, np.nan)
    # undamped: fV from the force balance, then the inverse force-velocity curve
    fv_needed = (fse / cos - fpe) / (a * fal)
    und = ~damped
    if und.any():
        vn[und] = mus.sub(und).curve("_velocity_inverse_curve", fv_needed[und])
    if damped.any():
        vn[damped] = _damped_velocity(mus.sub(damped), a[damped], fal[damped], fpe[damped],
                                      fse[damped], cos[damped])  # fmt: skip
    v = vn * mus.vmax
    clamped = ((lce <= mus.lmin) & (v <= 0)) | (lce < mus.lmin)
    vn = np.where(clamped, 0.0, vn)
    fv = np.where(clamped, 1.0, mus.curve("_velocity_curve", vn))
    active = mus.f0 * a * fal * fv
    passive = mus.f0 * (fpe + mus.beta * vn)
    zero = np.where(clamped, 0.0, 1.0)
    active, passive = active * zero, passive * zero
    ok = ok & np.isfinite(vn)
    return _fields(mus, fse * mus.f0, active + passive, active, passive, lce, lt,
                   vn * mus.vmax, phi, ok)  # fmt: skip


def _damped_velocity(mus, a, fal, fpe, fse, cos):
    """ṽ with F0 (a fL fV(ṽ) + fPE + β ṽ) cos α = F0 fT: safeguarded Newton (monotone)."""

    def g(v):
        return (a * fal * mus.curve("_velocity_curve", v) + fpe + mus.beta * v) * cos - fse

    # g increases with slope >= β cos α: a bracket from the damping term alone
    span = (np.abs(fse) / cos + a * fal * 2.0 + np.abs(fpe) + 1.0) / mus.beta + 2.0
    lo, hi = -span, span
    v = np.zeros(a.shape)
    active = np.ones(a.shape, bool)  # an entry that has converged is left as it is
    for _ in range(200):
        r = g(v)
        solved = np.abs(r) <= 1e-15 * np.maximum(1.0, np.abs(fse))
        lo = np.where(active & (r < 0), v, lo)
        hi = np.where(active & (r >= 0), v, hi)
        d = (a * fal * mus.curve("_velocity_curve", v, 1) + mus.beta) * cos
        step = v - r / d
        inside = np.isfinite(step) & (step > lo) & (step < hi)
        new = np.where(inside, step, 0.5 * (lo + hi))
        width = 4 * _EPS * np.maximum(1.0, np.abs(v))
        done = solved | (hi - lo <= width) | (inside & (np.abs(new - v) <= width))
        v = np.where(active & ~solved, new, v)
        active &= ~done
        if not active.any():
            break
    return v


# ---------------------------------------------------------------------------------------
# Static optimization
# ---------------------------------------------------------------------------------------


def millard_force_coefficients(params, mt_length, mt_speed=0.0, *, convention="tendon"):
    """Rigid-tendon force of Millard muscles as ``activation * active + passive`` (N).

    Parameters
    ----------
    params : MillardParameters
    mt_length : array_like, (..., n)
        Musculotendon lengths, m.
    mt_speed : array_like, (..., n), optional
        Lengthening speeds, m/s.
    convention : {"tendon", "opensim"}, optional
        ``"tendon"``: ``active = F0 fL fV cos α`` and ``passive = F0 (fPE + β ṽ) cos α``
        with the rigid-tendon fiber length and velocity (``lM cos α = lMT − lTs``,
        ``vM = vMT cos α``), zero active force at the minimum fiber length. ``"opensim"``:
        exactly what OpenSim's StaticOptimization multiplies activations by,
        ``calcInextensibleTendonActiveFiberForce(s, 1)`` (whose pennation angle OpenSim
        evaluates at the *normalized* fiber length), and ``passive = 0``.

    Returns
    -------
    active, passive : ndarray, (..., n)

    Raises
    ------
    DataError
        Bad `params` or `convention`; non-positive or non-finite lengths.

    Notes
    -----
    The curves are those of the muscle with an elastic tendon
    (:meth:`MillardParameters.as_used`), as OpenSim builds them for a model such as
    gait10dof18musc. This is the function a static-optimization tool calls for Millard
    muscles.

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> act, pas = millard_force_coefficients(p, [0.3])
    >>> round(float(act[0]), 9), float(pas[0])
    (1000.0, 0.0)
    """
    params = _check(params)
    convention = as_choice(convention, "convention", ("tendon", "opensim"))
    _, lmt, vmt, shape = _state_arrays(params.n, 1.0, mt_length, mt_speed)
    used = params.as_used(rigid_tendon=False)
    m = np.broadcast_to(np.arange(params.n), shape).ravel()
    mus = _Muscles(used, m)
    lmt, vmt = (np.broadcast_to(x, shape).ravel() for x in (lmt, vmt))
    lce = mus.fiber_length(lmt, mus.lts)
    ln = lce / mus.lopt
    with np.errstate(invalid="ignore", divide="ignore"):
        if convention == "opensim":
            cos = np.cos(mus.pennation(lce))
            vn = vmt * cos / mus.vmax
            cos_force = np.cos(mus.pennation(ln))  # OpenSim passes lceN here
            active = mus.f0 * mus.curve("_active_curve", ln) * mus.curve("_velocity_curve", vn)
            active = np.where(lce <= mus.lmin, 0.0, active * cos_force)
            passive = np.zeros(active.shape)
        else:
            lce = np.maximum(lce, mus.lmin)
            cos = np.cos(mus.pennation(lce))
            ln = lce / mus.lopt
            vn = vmt * cos / mus.vmax
            active = mus.f0 * mus.curve("_active_curve", ln) * mus.curve("_velocity_curve", vn)
            active = np.where(lce <= mus.lmin, 0.0, active * cos)
            passive = mus.f0 * (mus.curve("_passive_curve", ln) + mus.beta * vn) * cos
    return active.reshape(shape), passive.reshape(shape)
