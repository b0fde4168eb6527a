"""Metabolic cost of muscle work: Umberger (2010) and Bhargava et al. (2004).

The muscle energy models of OpenSim's ``Umberger2010MuscleMetabolicsProbe`` and
``Bhargava2004MuscleMetabolicsProbe`` (OpenSim 4.6), as functions of the muscle state
along frames, with the probes' property names and defaults:

- :func:`umberger2010_metabolics`: activation-maintenance heat, shortening/lengthening
  heat and mechanical work (Umberger et al. 2003; Umberger 2010), with the options of
  Uchida et al. (2016) that OpenSim added to the probe (effort scaling, Bhargava's
  recruitment model, negative work, non-negative total power).
- :func:`bhargava2004_metabolics`: activation, maintenance (with its fiber-length
  dependence curve), shortening heat (optionally force-dependent) and mechanical work.
- :mod:`ahbm.muscles.metabolics_smooth`: the same formulas with every ``if`` replaced
  by a ``tanh`` blend of documented steepness, on numpy arrays or CasADi symbols, for
  optimal control.
- :func:`basal_metabolic_rate`: the whole-body basal term of both probes.

Inputs are quantities of the muscle model (``(..., n_muscles)``, SI units): excitation,
activation, normalized fiber length, fiber velocity (lengthening positive), active and
total fiber force and the active force-length multiplier. Per-muscle parameters are a
:class:`MetabolicParameters`; the muscle mass is OpenSim's
``F0 / specific_tension * density * lM0`` unless provided.

References
----------
Umberger BR, Gerritsen KGM, Martin PE (2003) A model of human muscle energy expenditure.
Comput Methods Biomech Biomed Engin 6:99-111.

Umberger BR (2010) Stance and swing phase costs in human walking. J R Soc Interface
7:1329-1340.

Bhargava LJ, Pandy MG, Anderson FC (2004) A phenomenological model for estimating
metabolic energy consumption in muscle contraction. J Biomech 37:81-88.

Uchida TK, Hicks JL, Dembia CL, Delp SL (2016) Stretching your energetic budget: how
tendon compliance affects the metabolic cost of running. PLoS One 11:e0150378.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.muscles._arrays import _per_muscle_arrays
from ahbm.muscles._metabolic_models import _bhargava, _umberger
from ahbm.types import ResultRepr

__all__ = [
    "Bhargava2004Options",
    "Bhargava2004Rates",
    "MetabolicParameters",
    "Umberger2010Options",
    "Umberger2010Rates",
    "basal_metabolic_rate",
    "bhargava2004_metabolics",
    "umberger2010_metabolics",
]

# ---------------------------------------------------------------------------------------
# Parameters, options, results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class MetabolicParameters(ResultRepr):
    """Per-muscle parameters of the energy models, one array of shape ``(n,)`` each.

    Scalars are broadcast to all muscles; the defaults are OpenSim's
    (``*_MetabolicMuscleParameter`` of both probes).

    Parameters
    ----------
    max_isometric_force : array_like, (n,)
        ``F0``, N (> 0).
    optimal_fiber_length : array_like, (n,)
        ``lM0``, m (> 0).
    max_contraction_velocity : array_like, (n,), optional
        ``vmax`` in optimal fiber lengths per second (Umberger's model). Default 10.
    ratio_slow_twitch_fibers : array_like, (n,), optional
        In [0, 1]. Default 0.5.
    specific_tension : array_like, (n,), optional
        Pa. Default 0.25e6.
    density : array_like, (n,), optional
        kg/m³. Default 1059.7.
    provided_muscle_mass : array_like, (n,), optional
        kg; NaN (the default) computes the mass from the other parameters, a number uses
        it (OpenSim's ``use_provided_muscle_mass``).
    activation_constant_slow_twitch, activation_constant_fast_twitch : array_like, optional
        Bhargava's activation heat constants, W/kg. Defaults 40 and 133.
    maintenance_constant_slow_twitch, maintenance_constant_fast_twitch : array_like, optional
        Bhargava's maintenance heat constants, W/kg. Defaults 74 and 111.

    Raises
    ------
    DataError
        A parameter that is not a finite number (the provided mass may be NaN), has the
        wrong count or is out of range; the message names the parameter and the muscle.

    Examples
    --------
    >>> p = MetabolicParameters(max_isometric_force=[1000.0, 500.0],
    ...                         optimal_fiber_length=0.1)
    >>> p.muscle_mass  # F0 / 0.25 MPa * 1059.7 kg/m³ * lM0
    array([0.42388, 0.21194])
    """

    max_isometric_force: np.ndarray
    optimal_fiber_length: np.ndarray
    max_contraction_velocity: np.ndarray = 10.0
    ratio_slow_twitch_fibers: np.ndarray = 0.5
    specific_tension: np.ndarray = 0.25e6
    density: np.ndarray = 1059.7
    provided_muscle_mass: np.ndarray = math.nan
    activation_constant_slow_twitch: np.ndarray = 40.0
    activation_constant_fast_twitch: np.ndarray = 133.0
    maintenance_constant_slow_twitch: np.ndarray = 74.0
    maintenance_constant_fast_twitch: np.ndarray = 111.0

    def __post_init__(self):
        _per_muscle_arrays(self, "metabolic parameters")
        self._check()

    def _check(self):
        def bad(name, mask, what):
            if np.any(mask):
                i = int(np.flatnonzero(mask)[0])
                raise DataError(
                    f"`{name}` of muscle {i} must be {what}; got {getattr(self, name)[i]!r}"
                )

        for f in dataclasses.fields(self):
            a = getattr(self, f.name)
            if f.name == "provided_muscle_mass":
                bad(f.name, ~np.isnan(a) & ~(a > 0) | np.isinf(a), "> 0 kg (or NaN)")
            else:
                bad(f.name, ~np.isfinite(a), "a finite number")
        for name in ("max_isometric_force", "optimal_fiber_length", "max_contraction_velocity",
                     "specific_tension", "density"):  # fmt: skip
            bad(name, ~(getattr(self, name) > 0), "> 0")
        r = self.ratio_slow_twitch_fibers
        bad("ratio_slow_twitch_fibers", ~((r >= 0) & (r <= 1)), "in [0, 1]")

    @property
    def n(self) -> int:
        """Number of muscles."""
        return self.max_isometric_force.size

    @property
    def muscle_mass(self) -> np.ndarray:
        """Muscle mass (n,), kg: the provided one, else ``F0 / specific_tension * density
        * lM0`` (OpenSim's ``setMuscleMass``)."""
        computed = (
            self.max_isometric_force / self.specific_tension * self.density
        ) * self.optimal_fiber_length
        m = self.provided_muscle_mass
        return np.where(np.isnan(m), computed, m)


@dataclass(frozen=True)
class Umberger2010Options:
    """Options of the Umberger (2010) model: OpenSim's probe properties and defaults.

    The basal rate (``basal_rate_on``, ``basal_coefficient``, ``basal_exponent``) is a
    whole-body term: see :func:`basal_metabolic_rate`.

    Attributes
    ----------
    activation_maintenance_rate_on, shortening_rate_on, mechanical_work_rate_on : bool
        Which terms enter the per-muscle total (all True).
    enforce_minimum_heat_rate_per_muscle : bool
        The heat rate (activation-maintenance + shortening) of a muscle is at least
        1 W/kg (Umberger et al. 2003, p. 104) when both heat terms are on (True).
    aerobic_factor : float
        ``S``, 1.5 for aerobic activities (1.0 for anaerobic).
    muscle_effort_scaling_factor : float
        Multiplies the excitation, activation and active fiber force (1.0).
    use_Bhargava_recruitment_model : bool
        Replace the slow-twitch ratio by Bhargava's excitation-dependent recruitment
        ``uS / (uS + uF)`` (True, Uchida et al. 2016).
    include_negative_mechanical_work : bool
        Count the negative work of lengthening fibers, with Umberger's (2010)
        lengthening heat coefficient 4.0 instead of 0.3 (True).
    forbid_negative_total_power : bool
        Raise the shortening heat so that a muscle's total rate is not negative (True).
    """

    activation_maintenance_rate_on: bool = True
    shortening_rate_on: bool = True
    mechanical_work_rate_on: bool = True
    enforce_minimum_heat_rate_per_muscle: bool = True
    aerobic_factor: float = 1.5
    muscle_effort_scaling_factor: float = 1.0
    use_Bhargava_recruitment_model: bool = True
    include_negative_mechanical_work: bool = True
    forbid_negative_total_power: bool = True

    def __post_init__(self):
        _check_options(self, ("aerobic_factor", "muscle_effort_scaling_factor"))


#: OpenSim's default ``normalized_fiber_length_dependence_on_maintenance_rate`` knots.
_DEFAULT_LENGTH_DEPENDENCE = ((0.0, 0.5, 1.0, 1.5, 2.0), (0.5, 0.5, 1.0, 0.0, 0.0))


@dataclass(frozen=True)
class Bhargava2004Options:
    """Options of the Bhargava et al. (2004) model: OpenSim's probe properties and defaults.

    The basal rate is a whole-body term: see :func:`basal_metabolic_rate`.

    Attributes
    ----------
    activation_rate_on, maintenance_rate_on, shortening_rate_on, mechanical_work_rate_on : bool
        Which terms enter the per-muscle total (all True).
    enforce_minimum_heat_rate_per_muscle : bool
        The heat rate (activation + maintenance + shortening) of a muscle is at least
        1 W/kg when the three heat terms are on (True).
    normalized_fiber_length_dependence_on_maintenance_rate : (knots, values)
        The piecewise-linear curve of the maintenance heat against the normalized fiber
        length (extrapolated with its end slopes, as OpenSim's PiecewiseLinearFunction);
        default ``((0, 0.5, 1, 1.5, 2), (0.5, 0.5, 1, 0, 0))``.
    use_force_dependent_shortening_prop_constant : bool
        Shortening heat coefficient ``0.16 a fL F0 + 0.18 F`` (shortening) and ``0.157 F``
        (lengthening) instead of ``0.25 F`` and 0 (False).
    muscle_effort_scaling_factor : float
        Multiplies the excitation, activation and active fiber force (1.0).
    include_negative_mechanical_work : bool
        Count the negative work of lengthening fibers (True).
    forbid_negative_total_power : bool
        Raise the shortening heat so that a muscle's total rate is not negative (True).
    """

    activation_rate_on: bool = True
    maintenance_rate_on: bool = True
    shortening_rate_on: bool = True
    mechanical_work_rate_on: bool = True
    enforce_minimum_heat_rate_per_muscle: bool = True
    normalized_fiber_length_dependence_on_maintenance_rate: tuple = _DEFAULT_LENGTH_DEPENDENCE
    use_force_dependent_shortening_prop_constant: bool = False
    muscle_effort_scaling_factor: float = 1.0
    include_negative_mechanical_work: bool = True
    forbid_negative_total_power: bool = True

    def __post_init__(self):
        _check_options(self, ("muscle_effort_scaling_factor",))
        curve = self.normalized_fiber_length_dependence_on_maintenance_rate
        name = "normalized_fiber_length_dependence_on_maintenance_rate"
        try:
            knots, values = curve
        except (TypeError, ValueError) as err:
            raise DataError(f"Expected `{name}` to be a pair (knots, values)") from err
        xk, yk = as_float_array(knots, name), as_float_array(values, name)
        if xk.ndim != 1 or xk.shape != yk.shape or xk.size < 1:
            raise DataError(
                f"Expected `{name}` to be two 1-D sequences of the same length, got shapes "
                f"{xk.shape} and {yk.shape}"
            )
        if np.any(np.diff(xk) <= 0):
            raise DataError(f"Expected the knots of `{name}` to increase strictly")
        object.__setattr__(self, name, (tuple(xk.tolist()), tuple(yk.tolist())))


def _check_options(opts, numbers):
    for f in dataclasses.fields(opts):
        v = getattr(opts, f.name)
        if f.name in numbers:
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise DataError(f"Expected `{f.name}` to be a number, got {type(v).__name__}")
            if not (math.isfinite(v) and v > 0):
                raise DataError(f"Expected `{f.name}` > 0, got {v!r}")
        elif f.type in ("bool", bool) and not isinstance(v, (bool, np.bool_)):
            raise DataError(f"Expected `{f.name}` to be True or False, got {v!r}")


_SHARP = (None, None, None, None, None)


@dataclass(frozen=True, repr=False)
class Umberger2010Rates(ResultRepr):
    """Metabolic rates of Umberger's model, W, each ``(..., n)``.

    Attributes
    ----------
    activation_maintenance : ndarray
        Activation and maintenance heat rate.
    shortening : ndarray
        Shortening (negative velocity) or lengthening heat rate, including the increase
        that keeps the total non-negative (``forbid_negative_total_power``).
    mechanical_work : ndarray
        Rate of work of the contractile element, ``-F_active vM`` (positive when
        shortening).
    total : ndarray
        The muscle's metabolic rate: the terms that are on, with the heat rate at least
        1 W/kg when ``enforce_minimum_heat_rate_per_muscle`` (so it may exceed their
        sum). The probe's ``TOTAL`` output is the sum over muscles plus the basal rate.
    """

    activation_maintenance: np.ndarray
    shortening: np.ndarray
    mechanical_work: np.ndarray
    total: np.ndarray


@dataclass(frozen=True, repr=False)
class Bhargava2004Rates(ResultRepr):
    """Metabolic rates of Bhargava's model, W, each ``(..., n)``.

    Attributes
    ----------
    activation, maintenance : ndarray
        Activation and maintenance heat rates.
    shortening : ndarray
        Shortening heat rate, including the increase that keeps the total non-negative
        (``forbid_negative_total_power``).
    mechanical_work : ndarray
        Rate of work of the contractile element, ``-F_active vM``.
    total : ndarray
        The muscle's metabolic rate (terms that are on, heat rate at least 1 W/kg when
        ``enforce_minimum_heat_rate_per_muscle``).
    """

    activation: np.ndarray
    maintenance: np.ndarray
    shortening: np.ndarray
    mechanical_work: np.ndarray
    total: np.ndarray


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def _check_params(params) -> MetabolicParameters:
    if not isinstance(params, MetabolicParameters):
        raise DataError(
            "Expected `params` to be a MetabolicParameters (e.g. MetabolicParameters("
            f"max_isometric_force=..., optimal_fiber_length=...)), got {type(params).__name__}"
        )
    return params


def _check_type(value, cls, name):
    if value is None:
        return cls()
    if not isinstance(value, cls):
        raise DataError(
            f"Expected `{name}` to be a {cls.__name__} or None, got {type(value).__name__}"
        )
    return value


def _state(params, named):
    """Cast, check and broadcast the state arrays to a common ``(..., n)`` shape."""
    n = params.n
    arrays = {}
    for name, x in named.items():
        a = as_float_array(x, name)
        if a.ndim > 0 and a.shape[-1] not in (1, n):
            raise DataError(
                f"Expected `{name}` to have a last axis of {n} (one value per muscle), got "
                f"shape {a.shape}"
            )
        arrays[name] = a
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()), (n,))
    except ValueError as err:
        listed = ", ".join(f"`{k}` {a.shape}" for k, a in arrays.items())
        raise DataError(
            f"the batch axes of {listed} do not broadcast; give the same frames to each"
        ) from err
    for name in ("excitation", "activation"):
        if np.any(arrays[name] < 0):
            raise DataError(f"Expected `{name}` >= 0 (the models raise it to fractional powers)")
    return [np.broadcast_to(a, shape) for a in arrays.values()]


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------


def umberger2010_metabolics(params, excitation, activation, normalized_fiber_length,
                            fiber_velocity, active_fiber_force, active_force_length, *,
                            options=None) -> Umberger2010Rates:  # fmt: skip
    """Metabolic rates of Umberger's model, as OpenSim's Umberger2010MuscleMetabolicsProbe.

    Parameters
    ----------
    params : MetabolicParameters
        ``n`` muscles.
    excitation, activation : array_like, (..., n)
        Neural excitation ``u`` (the muscle's control) and activation ``a``, >= 0.
    normalized_fiber_length : array_like, (..., n)
        ``l̃M = lM / lM0``.
    fiber_velocity : array_like, (..., n)
        ``vM``, m/s, lengthening positive.
    active_fiber_force : array_like, (..., n)
        ``a F0 fL fV`` along the fiber, N.
    active_force_length : array_like, (..., n)
        The active force-length multiplier ``fL(l̃M)``, dimensionless.
    options : Umberger2010Options, optional
        OpenSim's probe properties (its defaults when None).

    Returns
    -------
    Umberger2010Rates
        Activation-maintenance, shortening and work rates and each muscle's total, W.

    Raises
    ------
    DataError
        Bad parameters or options, non-finite inputs, inputs whose shapes do not end in
        ``n`` or do not broadcast, negative excitation or activation.

    Notes
    -----
    Per kilogram of muscle (``S`` the aerobic factor, ``r`` the slow-twitch ratio,
    ``A = u`` if ``u > a`` else ``(u + a)/2``, ``ṽ = vM / lM0``, ``vmax`` in lM0/s)::

        ḣAM = S A^0.6 (128 (1 − r) + 25)            (× (0.4 + 0.6 fL) when l̃M > 1)
        ḣSL = S A² (min(250 ṽ⁻/vmax, 100) r + 153 ṽ⁻/vmax (1 − r))   shortening, ṽ⁻ = −ṽ
        ḣSL = S A (4.0 or 0.3) 250 ṽ / vmax                           lengthening
                                                     (× fL when l̃M > 1)
        ẇ   = −F_active vM / m

    With ``use_Bhargava_recruitment_model`` ``r`` becomes ``uS / (uS + uF)`` (1 at
    ``u = 0``), ``uS = r sin(πu/2)``, ``uF = (1 − r)(1 − cos(πu/2))``. The rates in W
    are these times the muscle mass ``m`` (Umberger et al. 2003, eqs. 3-12; Umberger
    2010; OpenSim 4.6's probe, whose branches and clamps are reproduced).

    Examples
    --------
    >>> p = MetabolicParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1)
    >>> r = umberger2010_metabolics(p, 1.0, 1.0, 1.0, 0.0, 1000.0, 1.0)
    >>> round(float(r.activation_maintenance[0]), 6)  # 1.5 * 89 W/kg * 0.42388 kg
    56.58798
    """
    params = _check_params(params)
    options = _check_type(options, Umberger2010Options, "options")
    named = dict(
        excitation=excitation,
        activation=activation,
        normalized_fiber_length=normalized_fiber_length,
        fiber_velocity=fiber_velocity,
        active_fiber_force=active_fiber_force,
        active_force_length=active_force_length,
    )
    u, a, ln, v, fa, fl = _state(params, named)
    terms = _umberger(params, params.muscle_mass, u, a, ln, v, fa, fl, options, _SHARP, np)
    return Umberger2010Rates(*terms)


def bhargava2004_metabolics(params, excitation, activation, normalized_fiber_length,
                            fiber_velocity, active_fiber_force, fiber_force,
                            active_force_length, *, options=None) -> Bhargava2004Rates:  # fmt: skip
    """Metabolic rates of Bhargava's model, as OpenSim's Bhargava2004MuscleMetabolicsProbe.

    Parameters
    ----------
    params : MetabolicParameters
        ``n`` muscles.
    excitation, activation : array_like, (..., n)
        Neural excitation ``u`` and activation ``a``, >= 0.
    normalized_fiber_length : array_like, (..., n)
        ``l̃M = lM / lM0``.
    fiber_velocity : array_like, (..., n)
        ``vM``, m/s, lengthening positive.
    active_fiber_force : array_like, (..., n)
        ``a F0 fL fV`` along the fiber, N.
    fiber_force : array_like, (..., n)
        Total fiber force ``F`` (active + passive), N.
    active_force_length : array_like, (..., n)
        The active force-length multiplier ``fL(l̃M)``.
    options : Bhargava2004Options, optional
        OpenSim's probe properties (its defaults when None).

    Returns
    -------
    Bhargava2004Rates
        Activation, maintenance, shortening and work rates and each muscle's total, W.

    Raises
    ------
    DataError
        As :func:`umberger2010_metabolics`.

    Notes
    -----
    With ``uS = r sin(πu/2)``, ``uF = (1 − r)(1 − cos(πu/2))`` and ``m`` the muscle
    mass (Bhargava et al. 2004, eqs. 2-8, with the decay function 1 as OpenSim)::

        Ȧ = m (A_S uS + A_F uF)
        Ṁ = m g(l̃M) (M_S uS + M_F uF)
        Ṡ = −α vM,   α = 0.25 F (shortening), 0 (lengthening); or, force-dependent,
                     α = 0.16 a fL F0 + 0.18 F (shortening), 0.157 F (lengthening)
        Ẇ = −F_active vM

    Examples
    --------
    >>> p = MetabolicParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1)
    >>> r = bhargava2004_metabolics(p, 1.0, 1.0, 1.0, 0.0, 1000.0, 1000.0, 1.0)
    >>> round(float(r.activation[0]), 6), round(float(r.maintenance[0]), 6)
    (36.66562, 39.2089)
    """
    params = _check_params(params)
    options = _check_type(options, Bhargava2004Options, "options")
    u, a, ln, v, fa, ft, fl = _state(params, dict(
        excitation=excitation, activation=activation,
        normalized_fiber_length=normalized_fiber_length, fiber_velocity=fiber_velocity,
        active_fiber_force=active_fiber_force, fiber_force=fiber_force,
        active_force_length=active_force_length))  # fmt: skip
    terms = _bhargava(params, params.muscle_mass, u, a, ln, v, fa, ft, fl, options, _SHARP, np)
    return Bhargava2004Rates(*terms)


def basal_metabolic_rate(body_mass, *, basal_coefficient=1.2, basal_exponent=1.0) -> np.ndarray:
    """Whole-body basal metabolic rate of both probes, ``c · M^e`` (W).

    Parameters
    ----------
    body_mass : array_like, (...)
        Whole-body mass ``M``, kg (> 0).
    basal_coefficient : float, optional
        ``c``, W/kg^e; 1.2 for standing (Umberger et al. 2003, p. 105), OpenSim's default.
    basal_exponent : float, optional
        ``e`` (1.0).

    Returns
    -------
    ndarray, (...)
        W. A probe's ``TOTAL`` output is this plus the sum of the muscles' totals.

    Examples
    --------
    >>> basal_metabolic_rate(75.0)
    array(90.)
    """
    m = as_float_array(body_mass, "body_mass")
    if np.any(m <= 0):
        raise DataError("Expected `body_mass` > 0 kg")
    c = as_float_array(basal_coefficient, "basal_coefficient")
    e = as_float_array(basal_exponent, "basal_exponent")
    if c.ndim or e.ndim:
        raise DataError("Expected `basal_coefficient` and `basal_exponent` to be numbers")
    return np.asarray(c * m**e)
