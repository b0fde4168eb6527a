"""Metabolic cost of muscle-driven motion: an objective, and the rates of a solution.

:class:`MetabolicCost` is the Lagrange term ``w ∫ Σ_i Ė_i dt`` of a
:class:`~ahbm.optimize.MuscleDrivenPhase`: the whole-body metabolic rate of its muscles
(Umberger 2010 or Bhargava et al. 2004, as OpenSim's probes, with the options of Uchida
et al. 2016) in the smooth forms of :mod:`ahbm.muscles.metabolics_smooth`, evaluated on
the CasADi symbols of the phase: excitations (controls), activations (states), and the
fiber length, velocity and forces of De Groote's muscles
(:func:`ahbm.muscles.degroote_fiber_state`; rigid or elastic tendons) at the
musculotendon lengths and speeds of the symbolic paths. Optionally divided by the body
mass and a distance (cost of transport, J/(kg m)) and with the basal rate.

:func:`metabolic_rates` gives the rates of a solution at its grid points with the sharp
models of :mod:`ahbm.muscles.metabolics` (checked against OpenSim 4.6's probes): every
term per muscle, the whole-body rate and the energy.

References
----------
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

from ahbm.errors import DataError
from ahbm.muscles.fiber_state import degroote_fiber_state
from ahbm.muscles.metabolics import (
    Bhargava2004Options,
    MetabolicParameters,
    Umberger2010Options,
    basal_metabolic_rate,
    bhargava2004_metabolics,
    umberger2010_metabolics,
)
from ahbm.muscles.metabolics_smooth import (
    MetabolicSmoothing,
    bhargava2004_smooth_metabolics,
    umberger2010_smooth_metabolics,
)
from ahbm.optimize.symbolic import require_casadi
from ahbm.types import ResultRepr

__all__ = ["MetabolicCost", "MuscleMetabolics", "metabolic_rates"]

ENERGY_MODELS = ("umberger2010", "bhargava2004")
_OPTIONS = {"umberger2010": Umberger2010Options, "bhargava2004": Bhargava2004Options}


def _optional_positive(value, name):
    if value is None:
        return None
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and value > 0):
        raise DataError(f"MetabolicCost `{name}` must be a number > 0 or None, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class MetabolicCost:
    """``w ∫ (Σ_i Ė_i + Ė_basal) dt / (m d)``: the metabolic energy of a muscle-driven phase.

    Parameters
    ----------
    weight : float
        ``w`` (per J, or per J/kg, J/(kg m) when normalized).
    energy_model : {"umberger2010", "bhargava2004"}
        Umberger (2010) or Bhargava et al. (2004), in the smooth forms of
        :func:`~ahbm.muscles.metabolics_smooth.umberger2010_smooth_metabolics` and
        :func:`~ahbm.muscles.metabolics_smooth.bhargava2004_smooth_metabolics`.
    options : Umberger2010Options or Bhargava2004Options, optional
        The model's options (OpenSim's probe defaults when None).
    smoothing : MetabolicSmoothing, optional
        Steepness of the blends (its defaults when None).
    parameters : MetabolicParameters, optional
        One entry per muscle of the phase, in its order. Default: the phase's ``F0``,
        ``lM0`` and ``vmax``, the other parameters OpenSim's defaults (slow-twitch
        ratio 0.5, specific tension 0.25 MPa, density 1059.7 kg/m³).
    muscles : sequence of str, optional
        Muscles whose rates count (default all muscles of the phase).
    body_mass : float, optional
        Divide by this mass (kg), and the basal rate's mass.
    distance : float, optional
        Divide by this distance (m): with `body_mass`, the cost of transport. A fixed
        number: constrain the distance travelled to it.
    include_basal : bool
        Add the basal rate ``1.2 M`` (W, :func:`ahbm.muscles.basal_metabolic_rate`;
        needs `body_mass`). Constant: it matters with a free duration.
    name : str

    Raises
    ------
    DataError
        An unknown `energy_model`, options of the other model, a bad smoothing, weight,
        mass or distance; `include_basal` without `body_mass`.

    Notes
    -----
    Umberger's activation-maintenance heat grows as ``A^0.6`` (infinite slope at 0):
    a phase with this objective needs a lower activation bound > 0
    (``MuscleDrivenPhase(..., activation_bounds=(0.01, 1))``).

    Examples
    --------
    >>> MetabolicCost(energy_model="bhargava2004", weight=0.1).name
    'metabolic_cost'
    """

    weight: float = 1.0
    energy_model: str = "umberger2010"
    options: object = None
    smoothing: MetabolicSmoothing | None = None
    parameters: MetabolicParameters | None = None
    muscles: tuple | None = None
    body_mass: float | None = None
    distance: float | None = None
    include_basal: bool = False
    name: str = "metabolic_cost"

    def __post_init__(self):
        if self.energy_model not in ENERGY_MODELS:
            raise DataError(f"MetabolicCost `energy_model` must be one of {ENERGY_MODELS}, "
                            f"got {self.energy_model!r}")  # fmt: skip
        cls = _OPTIONS[self.energy_model]
        if self.options is not None and not isinstance(self.options, cls):
            raise DataError(f"MetabolicCost `options` of {self.energy_model!r} must be a "
                            f"{cls.__name__}, got {type(self.options).__name__}")  # fmt: skip
        if self.smoothing is not None and not isinstance(self.smoothing, MetabolicSmoothing):
            raise DataError(f"MetabolicCost `smoothing` must be a MetabolicSmoothing or None, "
                            f"got {type(self.smoothing).__name__}")  # fmt: skip
        if self.parameters is not None and not isinstance(self.parameters, MetabolicParameters):
            raise DataError(f"MetabolicCost `parameters` must be a MetabolicParameters or None, "
                            f"got {type(self.parameters).__name__}")  # fmt: skip
        w = self.weight
        if isinstance(w, bool) or not isinstance(w, (int, float, np.floating, np.integer)) \
                or not math.isfinite(w):  # fmt: skip
            raise DataError(f"MetabolicCost `weight` must be a finite number, got {w!r}")
        _optional_positive(self.body_mass, "body_mass")
        _optional_positive(self.distance, "distance")
        if self.include_basal not in (True, False):
            raise DataError(f"MetabolicCost `include_basal` must be True or False, "
                            f"got {self.include_basal!r}")  # fmt: skip
        if self.include_basal and self.body_mass is None:
            raise DataError("MetabolicCost `include_basal=True` needs `body_mass` (kg)")
        if isinstance(self.muscles, str):
            object.__setattr__(self, "muscles", (self.muscles,))

    @property
    def scale(self) -> float:
        """``1 / (m d)`` (1 when neither is given)."""
        return 1.0 / ((self.body_mass or 1.0) * (self.distance or 1.0))

    def basal_rate(self) -> float:
        """The basal rate (W) this objective adds: ``1.2 M`` or 0."""
        if not self.include_basal:
            return 0.0
        return float(basal_metabolic_rate(self.body_mass))


# ---------------------------------------------------------------------------------------
# On the phase (symbols)
# ---------------------------------------------------------------------------------------


def _phase_muscles(phase, what):
    mm = getattr(phase, "muscle_model", None)
    if mm is None:
        raise DataError(f"{what} needs a MuscleDrivenPhase, got {type(phase).__name__}")
    return mm


def _default_parameters(phase) -> MetabolicParameters:
    p = phase.muscle_model.params
    return MetabolicParameters(max_isometric_force=p.max_isometric_force,
                               optimal_fiber_length=p.optimal_fiber_length,
                               max_contraction_velocity=p.max_contraction_velocity)  # fmt: skip


def _phase_parameters(phase, parameters, what) -> MetabolicParameters:
    if parameters is None:
        return _default_parameters(phase)
    if not isinstance(parameters, MetabolicParameters):
        raise DataError(f"{what}: `parameters` must be a MetabolicParameters, "
                        f"got {type(parameters).__name__}")  # fmt: skip
    if parameters.n != phase.nm:
        raise DataError(
            f"{what}: `parameters` has {parameters.n} muscles, the phase {phase.nm} "
            f"({phase.muscle_names}); give one entry per muscle"
        )
    return parameters


def _one(params: MetabolicParameters, i: int) -> MetabolicParameters:
    return MetabolicParameters(
        **{f.name: getattr(params, f.name)[i : i + 1] for f in dataclasses.fields(params)}
    )


def _check_metabolic_cost(phase, objective: MetabolicCost) -> None:
    """Raise :class:`DataError` if `objective` cannot be evaluated on `phase`.

    Parameters
    ----------
    phase : MuscleDrivenPhase
    objective : MetabolicCost
    """
    _phase_muscles(phase, objective.name)
    _phase_parameters(phase, objective.parameters, objective.name)
    if objective.energy_model == "umberger2010" and phase.activation_bounds[0] <= 0.0:
        raise DataError(
            f"{objective.name}: Umberger's heat rate grows as A^0.6, whose slope is infinite "
            f"at 0; give the phase a lower activation bound > 0 (activation_bounds="
            f"(0.01, {phase.activation_bounds[1]:g}))"
        )


def _metabolic_cost_integrand(phase, objective: MetabolicCost, x, u, muscles):
    """The weighted integrand of `objective` on the phase's state and control symbols.

    Parameters
    ----------
    phase : MuscleDrivenPhase
    objective : MetabolicCost
    x, u : casadi.SX
        State and control of the phase.
    muscles : list of int
        Indices of the muscles that count.

    Returns
    -------
    casadi.SX
        ``w (Σ_i Ė_i + Ė_basal) / (m d)``.
    """
    ca = require_casadi()
    mm = phase.muscle_model
    params = _phase_parameters(phase, objective.parameters, objective.name)
    q, qd = phase.split_state(x)
    lmt, vmt = mm.lengths(q), mm.speeds(q, qd)
    a, e = phase.activations(x), phase.excitations(u)
    total = 0.0
    for i in muscles:
        tendon = {}
        if phase.elastic:
            tendon = dict(tendon_force=phase.tendon_forces(x)[i],
                          tendon_force_rate=phase.tendon_rates(u)[i])  # fmt: skip
        s = degroote_fiber_state(mm._muscle_params(i), a[i], lmt[i], vmt[i], xp=ca, **tendon)
        total = total + _model_rates(objective.energy_model, _one(params, i), e[i], a[i], s,
                                     objective.options, objective.smoothing, ca).total  # fmt: skip
    return objective.weight * objective.scale * (total + objective.basal_rate())


def _model_rates(energy_model, params, e, a, s, options, smoothing, xp):
    """Rates of one energy model from a fiber state: smooth (``smoothing`` given or xp not
    numpy) or sharp (``smoothing`` False)."""
    ln, v, fa, fl = (s.normalized_fiber_length, s.fiber_velocity, s.active_fiber_force,
                     s.active_force_length)  # fmt: skip
    if smoothing is False:
        if energy_model == "umberger2010":
            return umberger2010_metabolics(params, e, a, ln, v, fa, fl, options=options)
        return bhargava2004_metabolics(params, e, a, ln, v, fa, s.fiber_force, fl,
                                       options=options)  # fmt: skip
    if energy_model == "umberger2010":
        return umberger2010_smooth_metabolics(params, e, a, ln, v, fa, fl, options=options,
                                              smoothing=smoothing, xp=xp)  # fmt: skip
    return bhargava2004_smooth_metabolics(params, e, a, ln, v, fa, s.fiber_force, fl,
                                          options=options, smoothing=smoothing, xp=xp)  # fmt: skip


# ---------------------------------------------------------------------------------------
# Of a solution (numbers)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class MuscleMetabolics(ResultRepr):
    """Metabolic rates of a muscle-driven solution at its grid points.

    Attributes
    ----------
    t : ndarray, (n,)
        s.
    muscle_names : list of str
    rates : Umberger2010Rates or Bhargava2004Rates
        Every term per muscle, W, ``(n, n_muscles)``.
    muscles_total : ndarray, (n,)
        ``Σ_i Ė_i``, W.
    basal : float
        Basal rate, W (0 without a body mass).
    total : ndarray, (n,)
        Whole-body rate ``Σ_i Ė_i + basal`` (the probes' ``TOTAL``), W.
    energy : float
        ``∫ total dt`` by the trapezoidal rule on the grid, J.
    energy_per_muscle : ndarray, (n_muscles,)
        ``∫ Ė_i dt``, J.
    fiber : FiberState
        The fiber quantities used, ``(n, n_muscles)``.
    """

    t: np.ndarray
    muscle_names: list
    rates: object
    muscles_total: np.ndarray
    basal: float
    total: np.ndarray
    energy: float
    energy_per_muscle: np.ndarray
    fiber: object


def _trapezoid(y, t):
    """``∫ y dt`` along the first axis of ``y`` (n, k) by the trapezoidal rule."""
    return 0.5 * ((y[1:] + y[:-1]) * np.diff(t)[:, None]).sum(axis=0)


def metabolic_rates(phase, solution, *, energy_model="umberger2010", options=None,
                    parameters=None, body_mass=None,
                    smoothing=None) -> MuscleMetabolics:  # fmt: skip
    """Metabolic rates of a muscle-driven solution, by the sharp (OpenSim) models.

    Parameters
    ----------
    phase : MuscleDrivenPhase
        The phase that was solved.
    solution : PhaseResult or OptimalControlResult
        ``result.phases[k]`` of that phase (a one-phase result is accepted).
    energy_model : {"umberger2010", "bhargava2004"}
    options : Umberger2010Options or Bhargava2004Options, optional
    parameters : MetabolicParameters, optional
        As :class:`MetabolicCost` (default from the phase's muscles).
    body_mass : float, optional
        kg: adds the basal rate ``1.2 M``.
    smoothing : MetabolicSmoothing, optional
        Evaluate the smooth model with these steepnesses instead (the integrand of a
        :class:`MetabolicCost`); default the sharp model of
        :func:`ahbm.muscles.umberger2010_metabolics` /
        :func:`~ahbm.muscles.bhargava2004_metabolics`.

    Returns
    -------
    MuscleMetabolics

    Raises
    ------
    DataError
        Not a muscle-driven phase or solution, an unknown model, options or parameters
        that do not fit.

    Notes
    -----
    The fiber state comes from the solution's activations, musculotendon lengths and
    speeds (and, elastic tendons, tendon forces and rates) through
    :func:`ahbm.muscles.degroote_fiber_state`, vectorized along the grid.

    Examples
    --------
    >>> r = solve(phase, verbose=False)  # doctest: +SKIP
    >>> m = metabolic_rates(phase, r.phases[0], energy_model="bhargava2004")  # doctest: +SKIP
    >>> m.energy, m.rates.mechanical_work.shape  # doctest: +SKIP
    (4.1, (51, 6))
    """
    mm = _phase_muscles(phase, "metabolic_rates")
    if energy_model not in ENERGY_MODELS:
        raise DataError(f"`energy_model` must be one of {ENERGY_MODELS}, got {energy_model!r}")
    cost = MetabolicCost(energy_model=energy_model, options=options, smoothing=smoothing,
                         parameters=parameters, body_mass=body_mass,
                         include_basal=body_mass is not None)  # fmt: skip
    params = _phase_parameters(phase, parameters, "metabolic_rates")
    phases = getattr(solution, "phases", None)
    if phases is not None:
        if len(phases) != 1:
            raise DataError("metabolic_rates: give one phase of the result (result.phases[k])")
        solution = phases[0]
    mus = getattr(solution, "muscles", None)
    if not mus or list(mus.get("names", [])) != list(mm.names):
        raise DataError("metabolic_rates: `solution` is not a solution of this muscle-driven "
                        f"phase (its muscles are {mm.names})")  # fmt: skip
    tendon = {}
    if phase.elastic:
        tendon = dict(tendon_force=mus["forces"] / mm.params.max_isometric_force,
                      tendon_force_rate=mus["tendon_force_rates"])  # fmt: skip
    a, e = mus["activations"], mus["excitations"]
    s = degroote_fiber_state(mm.params, a, mus["lengths"], mus["speeds"], **tendon)
    if smoothing is None:  # the sharp models refuse the -1e-8 of IPOPT's relaxed bounds
        e, a = np.clip(e, 0.0, None), np.clip(a, 0.0, None)
    r = _model_rates(energy_model, params, e, a, s, cost.options,
                     False if smoothing is None else smoothing, np)  # fmt: skip
    t = np.asarray(solution.t, float)
    muscles_total = r.total.sum(axis=1)
    basal = cost.basal_rate()
    total = muscles_total + basal
    return MuscleMetabolics(
        t=t,
        muscle_names=list(mm.names),
        rates=r,
        muscles_total=muscles_total,
        basal=basal,
        total=total,
        energy=float(_trapezoid(total[:, None], t)[0]),
        energy_per_muscle=_trapezoid(r.total, t),
        fiber=s,
    )
