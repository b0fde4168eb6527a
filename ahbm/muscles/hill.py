"""Hill-type muscle models: equilibrium, activation dynamics, static-optimization coefficients.

The curves and :class:`~ahbm.muscles.hill_curves.MuscleParameters` are in
:mod:`ahbm.muscles.hill_curves`. Two curve sets, each as OpenSim implements it (the
sources are the reference for every constant and branch; the code here is written from
the equations):

``"thelen2003"``
    Thelen (2003) as in OpenSim's ``Thelen2003Muscle``: Gaussian active force-length,
    exponential passive force-length, exponential-then-linear tendon, the
    activation-dependent force-velocity relation of Thelen's eq. 6 (with OpenSim's linear
    extrapolation beyond ``fv_linear_extrap_threshold``), a fixed-width (constant-volume)
    pennation model with a maximum pennation angle, and first-order activation dynamics
    with an activation-dependent time constant and a minimum activation.
``"degroote2016"``
    De Groote et al. (2016) as in OpenSim's ``DeGrooteFregly2016Muscle``: the smooth
    curves made for optimal control (sum of three Gaussian-like active force-length terms,
    exponential passive and tendon curves, the ``asinh`` force-velocity curve) with the
    constants OpenSim uses (``b11`` adjusted so that ``f(1) = 1``, ``c2 = 1``,
    ``c3 = 0.2``, ``d1``/``d4`` solved so that the force-velocity curve passes through
    (-1, 0) and (0, 1)), and the smooth ``tanh`` activation dynamics.

Each curve set works with an elastic tendon (``rigid_tendon=False``) or a rigid tendon
(``rigid_tendon=True``, fiber length from the geometry; OpenSim's
``ignore_tendon_compliance``). Every function is vectorized: quantities have the shape
``(..., n_muscles)`` with any leading batch axes (frames), parameters the shape
``(n_muscles,)``.

References
----------
Thelen DG (2003) Adjustment of muscle mechanics model parameters to simulate dynamic
contractions in older adults. J Biomech Eng 125:70-77.

De Groote F, Kinney AL, Rao AV, Fregly BJ (2016) Evaluation of direct collocation optimal
control problem formulations for solving the muscle redundancy problem. Ann Biomed Eng
44:2922-2936.

Millard M, Uchida T, Seth A, Delp SL (2013) Flexing computational muscle: modeling and
simulation of musculotendon dynamics. J Biomech Eng 135:021005.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ahbm._internal.validation import as_choice, as_int, as_positive_float
from ahbm.errors import AhbmWarning
from ahbm.muscles._arrays import _muscle_array, _state_arrays
from ahbm.muscles._thelen_equilibrium import (
    _state_fields,
    _thelen_elastic,
    _thelen_rigid,
)
from ahbm.muscles.hill_curves import (
    _DG_C3,
    _DG_MAX_NORM_TENDON_FORCE,
    MuscleParameters,
    _check_curves,
    _check_params,
    _dg_fal,
    _dg_fpe,
    _dg_ft_inverse,
    _dg_fv,
    _dg_kt,
    _param,
)
from ahbm.types import ResultRepr

__all__ = [
    "MuscleState",
    "activation_rate",
    "activation_to_excitation",
    "degroote_activation_rate",
    "degroote_rigid_tendon_force",
    "degroote_tendon_residual",
    "force_coefficients",
    "muscle_equilibrium",
]

_EPS = np.finfo(float).eps
_SIGNIFICANT = _EPS ** (7.0 / 8.0)  # SimTK::SignificantReal
_SQRT_EPS = math.sqrt(_EPS)

# ---------------------------------------------------------------------------------------
# Activation dynamics
# ---------------------------------------------------------------------------------------


def activation_rate(excitation, activation, params, *, curves="thelen2003") -> np.ndarray:
    """Time derivative of the activation, ``da/dt`` (1/s), for a given excitation.

    Parameters
    ----------
    excitation : array_like, (..., n)
        Neural excitation ``u`` in [0, 1].
    activation : array_like, (..., n)
        Activation ``a``.
    params : MuscleParameters
        Time constants (and Thelen's ``minimum_activation``, De Groote's
        ``activation_smoothing``).
    curves : {"thelen2003", "degroote2016"}

    Returns
    -------
    ndarray, (..., n)

    Raises
    ------
    DataError
        Bad `curves`, `params`, or excitations/activations that are not finite or whose last
        axis is not one per muscle.

    Notes
    -----
    Both are first order with the time constant of Winters (1995):
    ``τ = τ_act (0.5 + 1.5 a)`` when activating, ``τ = τ_deact / (0.5 + 1.5 a)`` when
    deactivating, ``da/dt = (u - a)/τ``.

    * ``"thelen2003"`` (OpenSim's ``MuscleFirstOrderActivationDynamicModel``): ``a`` is
      first clamped to ``[minimum_activation, 1]`` and the branch is chosen by
      ``u > a``.
    * ``"degroote2016"``: the branch is blended smoothly,
      ``f = ½ tanh(b (u - a))``,
      ``da/dt = [(f + ½)/(τ_act (0.5 + 1.5a)) + (½ - f)(0.5 + 1.5a)/τ_deact] (u - a)``
      with ``b = activation_smoothing`` (De Groote et al. 2016, eq. S1 with OpenSim's
      default ``b = 0.1``).

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> activation_rate([1.0], [0.5], p).round(6)
    array([26.666667])
    """
    curves = _check_curves(curves)
    params = _check_params(params)
    u = _muscle_array(excitation, "excitation", params.n)
    a = _muscle_array(activation, "activation", params.n)
    t_act = params.activation_time_constant
    t_deact = _param(params, "deactivation_time_constant", curves)
    if curves == "thelen2003":
        a = np.clip(a, params.minimum_activation, 1.0)
        factor = 0.5 + 1.5 * a
        tau = np.where(u > a, t_act * factor, t_deact / factor)
        return (u - a) / tau
    return _dg_activation_rate(u, a, t_act, t_deact, params.activation_smoothing, np)


def _dg_activation_rate(u, a, t_act, t_deact, b, xp):
    factor = 0.5 + 1.5 * a
    f = 0.5 * xp.tanh(b * (u - a))
    rate = (f + 0.5) / (t_act * factor) + (0.5 - f) * factor / t_deact
    return rate * (u - a)


def activation_to_excitation(activation, rate, params, *, curves="thelen2003") -> np.ndarray:
    """Excitation that makes the activation change at a given rate (inverse dynamics).

    Parameters
    ----------
    activation : array_like, (..., n)
        Activation ``a``.
    rate : array_like, (..., n)
        Wanted ``da/dt``, 1/s (e.g. the time derivative of static-optimization
        activations).
    params : MuscleParameters
    curves : {"thelen2003", "degroote2016"}

    Returns
    -------
    ndarray, (..., n)
        The excitation ``u`` in [0, 1] with ``activation_rate(u, a) = rate``; where no
        excitation in [0, 1] reaches the rate, the nearest bound (0 or 1).

    Raises
    ------
    DataError
        Bad `curves`, `params`, or arrays that are not finite or whose last axis is not one
        per muscle.

    Notes
    -----
    ``activation_rate`` increases monotonically with ``u`` for both curve sets; ``u`` is
    found by bisection on [0, 1] to machine precision, on whole arrays.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> u = activation_to_excitation([0.5], [10.0], p)
    >>> activation_rate(u, [0.5], p).round(9)
    array([10.])
    """
    curves = _check_curves(curves)
    params = _check_params(params)
    a = _muscle_array(activation, "activation", params.n)
    r = _muscle_array(rate, "rate", params.n)
    shape = np.broadcast_shapes(a.shape, r.shape, (params.n,))
    a, r = np.broadcast_to(a, shape), np.broadcast_to(r, shape)
    lo, hi = np.zeros(shape), np.ones(shape)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = activation_rate(mid, a, params, curves=curves) < r
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    u = 0.5 * (lo + hi)
    u = np.where(activation_rate(np.ones(shape), a, params, curves=curves) <= r, 1.0, u)
    return np.where(activation_rate(np.zeros(shape), a, params, curves=curves) >= r, 0.0, u)


# ---------------------------------------------------------------------------------------
# Equilibrium
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class MuscleState(ResultRepr):
    """State of muscles at equilibrium (every field ``(..., n)``, SI units).

    Attributes
    ----------
    tendon_force : ndarray
        Force along the tendon, N (the force the muscle applies to its path).
    fiber_force, active_fiber_force, passive_fiber_force : ndarray
        Force along the fiber, N: total, active (``a F0 fL fV``) and passive
        (``F0 fPE``, plus De Groote's fiber damping).
    fiber_length, tendon_length : ndarray
        m.
    fiber_velocity : ndarray
        m/s, lengthening positive.
    normalized_fiber_length, normalized_fiber_velocity : ndarray
        ``lM / lM0`` and ``vM / (vmax lM0)``.
    pennation_angle : ndarray
        rad.
    activation : ndarray
        The activation used (Thelen's is clamped to ``[minimum_activation, 1]``).
    converged : ndarray of bool
        False where no equilibrium was found (the other fields are NaN there).
    """

    tendon_force: np.ndarray
    fiber_force: np.ndarray
    active_fiber_force: np.ndarray
    passive_fiber_force: np.ndarray
    fiber_length: np.ndarray
    fiber_velocity: np.ndarray
    normalized_fiber_length: np.ndarray
    normalized_fiber_velocity: np.ndarray
    pennation_angle: np.ndarray
    tendon_length: np.ndarray
    activation: np.ndarray
    converged: np.ndarray


def _state_inputs(params, activation, mt_length, mt_speed, curves):
    curves = _check_curves(curves)
    params = _check_params(params)
    a, lmt, vmt, shape = _state_arrays(params.n, activation, mt_length, mt_speed)
    b = [np.broadcast_to(x, shape) for x in (a, lmt, vmt)]
    return curves, params.resolved(curves), shape, b


def muscle_equilibrium(
    params,
    activation,
    mt_length,
    mt_speed=0.0,
    *,
    curves="thelen2003",
    rigid_tendon=False,
    tol=1e-8,
    max_iterations=20,
) -> MuscleState:
    """Fiber length and forces of muscles in equilibrium with their tendons.

    Parameters
    ----------
    params : MuscleParameters
        ``n`` muscles.
    activation : array_like, (..., n)
        Activation in [0, 1].
    mt_length : array_like, (..., n)
        Musculotendon (path) length, m.
    mt_speed : array_like, (..., n), optional
        Musculotendon lengthening speed, m/s (default 0).
    curves : {"thelen2003", "degroote2016"}
    rigid_tendon : bool, optional
        Inextensible tendon of length ``lTs``: the fiber length follows from the
        geometry and no equilibrium is solved.
    tol : float, optional
        ``"thelen2003"``: force tolerance of the Newton iteration relative to ``F0``
        (OpenSim: ``1e-8 F0``).
    max_iterations : int, optional
        ``"thelen2003"``: Newton iterations (OpenSim: 20).

    Returns
    -------
    MuscleState
        Fields of shape ``(..., n)`` (broadcast of the inputs).

    Raises
    ------
    DataError
        Bad `curves` or `params`; activations outside [0, 1]; non-positive or non-finite
        lengths; batch axes that do not broadcast; bad `tol` or `max_iterations`.

    Warns
    -----
    AhbmWarning
        Where no equilibrium exists or the iteration fails (those entries are NaN and
        ``converged`` is False), naming the muscles.

    Notes
    -----
    Fixed-width pennation: ``lM sin α = lM0 sin α0``, ``lT = lMT - lM cos α``.
    Equilibrium: ``F0 fT(lT/lTs) = (a fL fV + fPE) F0 cos α``.

    * ``"thelen2003"`` follows OpenSim's ``Thelen2003Muscle::initMuscleState``: a
      Newton iteration on the fiber length from ``lT = 1.01 lTs`` with step halving;
      the lengthening speed is shared between fiber and tendon in proportion to their
      compliances (``vT = K_M/(K_M + K_T) vMT``, ``K_M = ∂F_M^AT/∂lM · cos α`` as
      OpenSim computes it) to evaluate ``fV``; the fiber length is bounded below by
      OpenSim's minimum fiber length (maximum pennation angle). The reported forces and
      fiber velocity are computed from the fiber length as OpenSim computes them from
      its state (``fV`` from the force balance, ``vM`` from Thelen's eq. 6).
    * ``"degroote2016"`` follows ``DeGrooteFregly2016Muscle::computeInitialFiberEquilibrium``:
      the normalized tendon force in [0, 5] solving
      ``fT - (a fL fV + fPE + β ṽ) cos α = 0`` with the whole lengthening speed in the
      fiber (tendon force rate zero), by false position (Illinois) inside that bracket to
      a residual of 1e-14 (OpenSim bisects to a width of 1e-10).
    * Rigid tendon: ``lM cos α = lMT - lTs``, ``vM = vMT cos α``; tendon force =
      fiber force ``· cos α``. OpenSim's Thelen muscle (which does not offer a rigid
      tendon) computes the same in ``calcInextensibleTendonActiveFiberForce``; its
      active force is zero at the minimum fiber length.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> s = muscle_equilibrium(p, [1.0], [0.3], rigid_tendon=True)
    >>> float(s.tendon_force[0])
    1000.0
    """
    curves, params, shape, (a, lmt, vmt) = _state_inputs(
        params, activation, mt_length, mt_speed, curves
    )
    rigid_tendon = as_choice(rigid_tendon, "rigid_tendon", (True, False))
    tol = as_positive_float(tol, "tol")
    max_iterations = as_int(max_iterations, "max_iterations", minimum=1)
    if curves == "thelen2003":
        a = np.clip(a, params.minimum_activation, 1.0)
        if rigid_tendon:
            out = _thelen_rigid(params, a, lmt, vmt)
        else:
            out = _thelen_elastic(params, a, lmt, vmt, tol, max_iterations)
    else:
        out = (
            _degroote_rigid(params, a, lmt, vmt)
            if rigid_tendon
            else _degroote_elastic(params, a, lmt, vmt)
        )
    bad = ~out["converged"]
    if np.any(bad):
        names = sorted({params.names[i] for i in np.nonzero(bad)[-1]})
        warnings.warn(
            f"muscle_equilibrium: no equilibrium found for {int(bad.sum())} entries "
            f"(muscles {names}); they are NaN (check mt_length against the optimal fiber "
            "and tendon slack lengths)",
            AhbmWarning,
            stacklevel=2,
        )
        for k, v in out.items():
            if k != "converged":
                out[k] = np.where(bad, np.nan, v)
    return MuscleState(**out, activation=a + 0.0)


# De Groote -----------------------------------------------------------------------------


def _dg_geometry(params, lmt, lt, xp=np):
    lopt = params.optimal_fiber_length
    w = lopt * np.sin(params.pennation_angle)
    at = lmt - lt
    lm = xp.sqrt(at**2 + w**2)
    cos = at / lm
    return lm, cos, xp.arcsin(w / lm)


def _dg_forces(params, a, lm, cos, vmt_fiber, xp=np):
    """Fiber forces of De Groote's model for a fiber velocity vmt_fiber (m/s)."""
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    ln = lm / lopt
    vn = vmt_fiber / (params.max_contraction_velocity * lopt)
    fal = _dg_fal(ln, params.active_force_width_scale, xp)
    fpe = _dg_fpe(ln, params.passive_strain, xp)
    fv = _dg_fv(vn, xp)
    active = f0 * a * fal * fv
    passive = f0 * (fpe + params.fiber_damping * vn)
    return ln, vn, active, passive


def degroote_rigid_tendon_force(params, activation, mt_length, mt_speed, *, xp=np):
    """Tendon force of De Groote's muscle with a rigid tendon, on any array namespace.

    The same expressions as ``muscle_equilibrium(..., curves="degroote2016",
    rigid_tendon=True).tendon_force``, without input checks, so that they can run on
    symbols: with ``xp=casadi`` and CasADi expressions for the inputs they build the
    force of optimal-control problems (:class:`ahbm.optimize.MuscleDrivenPhase`).

    Parameters
    ----------
    params : MuscleParameters or object
        A :class:`MuscleParameters` (its NaN entries take De Groote's defaults), or any
        object with the attributes ``max_isometric_force``, ``optimal_fiber_length``,
        ``tendon_slack_length``, ``pennation_angle``, ``max_contraction_velocity``,
        ``active_force_width_scale``, ``passive_strain``, ``fiber_damping`` as numbers.
    activation, mt_length, mt_speed : array_like or symbols, (..., n)
        Activation, musculotendon length (m) and lengthening speed (m/s).
    xp : module, optional
        Array namespace with ``exp``, ``log``, ``sqrt``, ``arcsin`` (numpy, casadi).

    Returns
    -------
    array or expression, (..., n)
        ``F0 (a fL(l̃M) fV(ṽM) + fPE(l̃M) + β ṽM) cos α`` (N), with
        ``lM = sqrt((l − lTs)² + (lM0 sin α0)²)`` and ``vM = v cos α``.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> round(float(degroote_rigid_tendon_force(p, 1.0, 0.3, 0.0)[0]), 6)  # F0 + passive
    1018.228824
    """
    if isinstance(params, MuscleParameters):
        params = params.resolved("degroote2016")
    lm, cos, _ = _dg_geometry(params, mt_length, params.tendon_slack_length, xp)
    _, _, active, passive = _dg_forces(params, activation, lm, cos, mt_speed * cos, xp)
    return (active + passive) * cos


def degroote_tendon_residual(params, activation, mt_length, mt_speed, tendon_force,
                             tendon_force_rate, *, xp=np):  # fmt: skip
    """De Groote's implicit elastic-tendon equation: the force-balance residual.

    With the normalized tendon force ``F̃T`` as a state and its rate as a control (De
    Groote et al. 2016, the implicit formulation), the muscle is in equilibrium when the
    residual is zero; optimal-control problems impose it as a path constraint. No input
    checks, any array namespace (``xp=casadi`` for symbols).

    Parameters
    ----------
    params : MuscleParameters or object
        As :func:`degroote_rigid_tendon_force`, plus ``tendon_strain``.
    activation, mt_length, mt_speed : array_like or symbols, (..., n)
        Activation, musculotendon length (m), lengthening speed (m/s).
    tendon_force, tendon_force_rate : array_like or symbols, (..., n)
        ``F̃T = FT / F0`` and ``dF̃T/dt`` (1/s).

    Returns
    -------
    array or expression, (..., n)
        ``F̃T − (a fL(l̃M) fV(ṽM) + fPE(l̃M) + β ṽM) cos α`` with ``l̃T = fT⁻¹(F̃T)``,
        ``lM = sqrt((l − lTs l̃T)² + (lM0 sin α0)²)``, the tendon speed
        ``vT = lTs (dF̃T/dt) / fT'(l̃T)`` and ``vM = (v − vT) cos α``.

    Notes
    -----
    At ``dF̃T/dt = 0`` its root is the elastic equilibrium of
    ``muscle_equilibrium(..., curves="degroote2016")``; at the rate of
    :func:`ahbm.muscles.muscle_tendon_forces` it is zero for any tendon force.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> s = muscle_equilibrium(p, [0.5], [0.31], [0.0], curves="degroote2016")
    >>> abs(float(degroote_tendon_residual(p, 0.5, 0.31, 0.0, s.tendon_force / 1000.0,
    ...                                    0.0)[0])) < 1e-12
    True
    """
    if isinstance(params, MuscleParameters):
        params = params.resolved("degroote2016")
    lts, e0 = params.tendon_slack_length, params.tendon_strain
    ltn = _dg_ft_inverse(tendon_force, e0, xp)
    lm, cos, _ = _dg_geometry(params, mt_length, lts * ltn, xp)
    slope = _dg_kt(e0) * (tendon_force + _DG_C3)  # dfT/dl̃T = kT c1 exp(kT (l̃T - c2))
    vm = (mt_speed - lts * tendon_force_rate / slope) * cos
    _, _, active, passive = _dg_forces(params, activation, lm, cos, vm, xp)
    return tendon_force - (active + passive) / params.max_isometric_force * cos


def degroote_activation_rate(params, excitation, activation, *, xp=np):
    """De Groote's smooth activation dynamics ``da/dt`` (1/s), on any array namespace.

    The expression of ``activation_rate(..., curves="degroote2016")`` without input
    checks (see there), so that it can run on CasADi symbols (``xp=casadi``).

    Parameters
    ----------
    params : MuscleParameters or object
        ``activation_time_constant``, ``deactivation_time_constant`` and
        ``activation_smoothing`` as numbers or (n,) arrays.
    excitation, activation : array_like or symbols, (..., n)
    xp : module, optional
        Array namespace with ``tanh``.

    Returns
    -------
    array or expression, (..., n)

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> degroote_activation_rate(p, 0.5, 0.5)
    array([0.])
    """
    if isinstance(params, MuscleParameters):
        params = params.resolved("degroote2016")
    return _dg_activation_rate(excitation, activation, params.activation_time_constant,
                               params.deactivation_time_constant, params.activation_smoothing,
                               xp)  # fmt: skip


def _degroote_rigid(params, a, lmt, vmt):
    lts = params.tendon_slack_length
    lm, cos, phi = _dg_geometry(params, lmt, lts)
    vm = vmt * cos
    ln, vn, active, passive = _dg_forces(params, a, lm, cos, vm)
    fiber = active + passive
    return _state_fields(
        fiber * cos, fiber, active, passive, lm, lts, vm, ln, vn, phi, np.isfinite(fiber)
    )


def _degroote_elastic(params, a, lmt, vmt):
    """OpenSim's De Groote equilibrium: the root in [0, 5] of the normalized tendon force.

    False position with the Illinois modification (superlinear), always inside the
    bracket, on the entries not converged yet (index compaction).
    """
    shape = lmt.shape
    names = (
        "max_isometric_force",
        "optimal_fiber_length",
        "tendon_slack_length",
        "tendon_strain",
        "pennation_angle",
        "max_contraction_velocity",
        "active_force_width_scale",
        "passive_strain",
        "fiber_damping",
    )
    flat = {k: np.broadcast_to(getattr(params, k), shape).ravel() for k in names}
    flat.update(a=a.ravel(), lmt=lmt.ravel(), vmt=vmt.ravel())

    def subset(idx):
        return SimpleNamespace(**{k: v[idx] for k, v in flat.items()})

    def evaluate(S, ft):
        lt = S.tendon_slack_length * _dg_ft_inverse(ft, S.tendon_strain)
        lm, cos, phi = _dg_geometry(S, S.lmt, lt)
        vm = S.vmt * cos  # tendon force rate zero: the whole speed is in the fiber
        ln, vn, active, passive = _dg_forces(S, S.a, lm, cos, vm)
        residual = ft - (active + passive) / S.max_isometric_force * cos
        return residual, (lt, lm, cos, phi, vm, ln, vn, active, passive)

    every = SimpleNamespace(**flat)
    size = lmt.size
    lo, hi = np.zeros(size), np.full(size, _DG_MAX_NORM_TENDON_FORCE)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r_lo, _ = evaluate(every, lo)
        r_hi, _ = evaluate(every, hi)
        ok = np.isfinite(r_lo) & np.isfinite(r_hi) & (r_lo * r_hi < 0)
        ft = np.full(size, np.nan)
        last = np.zeros(size, dtype=np.int8)
        act = np.flatnonzero(ok)
        for _ in range(200):
            if not act.size:
                break
            l0, h0, rl, rh = lo[act], hi[act], r_lo[act], r_hi[act]
            x = h0 - rh * (h0 - l0) / (rh - rl)
            x = np.where(np.isfinite(x) & (x > l0) & (x < h0), x, 0.5 * (l0 + h0))
            r, _ = evaluate(subset(act), x)
            left = np.sign(r) == np.sign(rl)  # the root is in [x, hi]
            lo[act], hi[act] = np.where(left, x, l0), np.where(left, h0, x)
            r_lo[act] = np.where(left, r, np.where(last[act] == -1, 0.5 * rl, rl))
            r_hi[act] = np.where(left, np.where(last[act] == 1, 0.5 * rh, rh), r)
            last[act] = np.where(left, 1, -1)
            ft[act] = x
            done = (np.abs(r) <= 1e-14) | (hi[act] - lo[act] <= 4 * _EPS * np.maximum(hi[act], 1))
            act = act[~done]
        _, (lt, lm, cos, phi, vm, ln, vn, active, passive) = evaluate(every, ft)
    f0 = flat["max_isometric_force"]
    out = (ft * f0, active + passive, active, passive, lm, lt, vm, ln, vn, phi, ok)
    return _state_fields(*(x.reshape(shape) for x in out))


# ---------------------------------------------------------------------------------------
# Static optimization coefficients
# ---------------------------------------------------------------------------------------


def force_coefficients(
    params,
    mt_length,
    mt_speed=0.0,
    *,
    curves="thelen2003",
    force_length_velocity=True,
    convention="tendon",
) -> tuple[np.ndarray, np.ndarray]:
    """Rigid-tendon tendon force as ``activation * active + passive`` (static optimization).

    Parameters
    ----------
    params : MuscleParameters
    mt_length : array_like, (..., n)
        Musculotendon lengths, m.
    mt_speed : array_like, (..., n), optional
        Lengthening speeds, m/s.
    curves : {"thelen2003", "degroote2016"}
    force_length_velocity : bool, optional
        True: the muscles' force-length-velocity properties (OpenSim's
        ``use_model_force_length_velocity``); False: ideal force generators,
        ``active = F0`` and ``passive = 0``.
    convention : {"tendon", "opensim"}, optional
        ``"tendon"`` (default): forces along the tendon, as below. ``"opensim"``:
        exactly what OpenSim's StaticOptimization multiplies the activations by,
        ``calcInextensibleTendonActiveFiberForce(s, 1.0)``: the active force along the
        tendon for Thelen's muscle but along the fiber (without ``cos α``) for De
        Groote's; ``passive`` is then 0 (OpenSim applies no passive force there).

    Returns
    -------
    active : ndarray, (..., n)
        N per unit activation: ``F0 fL(l̃M) fV(ṽM) cos α``, with the rigid-tendon fiber
        length and velocity (``lM cos α = lMT - lTs``, ``vM = vMT cos α``). Thelen's
        ``fV`` depends on activation: it is evaluated at ``a = 1``, as OpenSim's
        static optimization does (``calcInextensibleTendonActiveFiberForce(s, 1.0)``),
        so the force is linear in activation only at zero speed.
    passive : ndarray, (..., n)
        N: ``F0 fPE cos α`` (plus De Groote's damping ``F0 β ṽM cos α``).

    Raises
    ------
    DataError
        Bad `curves`, `params`, `convention` or `force_length_velocity`; non-positive or
        non-finite lengths; batch axes that do not broadcast.

    Notes
    -----
    OpenSim's StaticOptimization multiplies each activation by the active force at
    ``a = 1`` (``calcInextensibleTendonActiveFiberForce``) and applies no passive fiber
    force; OpenSim's De Groote muscle returns that force along the fiber, without
    ``cos α`` (``convention="opensim"`` reproduces both).

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> act, pas = force_coefficients(p, [0.3])
    >>> float(act[0]), float(pas[0])
    (1000.0, 0.0)
    """
    curves, params, shape, (_, lmt, vmt) = _state_inputs(
        params, np.ones(()), mt_length, mt_speed, curves
    )
    force_length_velocity = as_choice(force_length_velocity, "force_length_velocity", (True, False))
    convention = as_choice(convention, "convention", ("tendon", "opensim"))
    if not force_length_velocity:
        return np.broadcast_to(params.max_isometric_force, shape) + 0.0, np.zeros(shape)
    ones = np.ones(shape)
    if curves == "thelen2003":
        out = _thelen_rigid(params, ones, lmt, vmt)
    else:
        out = _degroote_rigid(params, ones, lmt, vmt)
    cos = np.cos(out["pennation_angle"])
    if convention == "opensim":
        active = out["active_fiber_force"] * (cos if curves == "thelen2003" else 1.0)
        return active, np.zeros(shape)
    return out["active_fiber_force"] * cos, out["passive_fiber_force"] * cos
