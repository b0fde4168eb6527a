"""Muscle-driven optimal control: muscle paths and forces on CasADi symbols, muscle phases.

:func:`symbolic_muscles` compiles CasADi ``Function`` objects of a model's
muscles from the *same* pieces the numeric code uses:

- **paths**: the path elements of ``model.muscles`` (:class:`~ahbm.muscles.PathPoint`,
  :class:`~ahbm.muscles.ConditionalPathPoint`, :class:`~ahbm.muscles.MovingPathPoint`)
  placed in the world by the forward kinematics of :mod:`ahbm.dynamics.reference`
  run on CasADi symbols (:func:`ahbm.optimize.symbolic_dynamics`), the functions
  of moving points by :meth:`CasadiOps.function`; the length is the sum of the
  straight segments between consecutive *active* points, as
  :func:`ahbm.muscles.muscle_lengths` computes it. A conditional point is active
  while its coordinate is within its range (± ``CONDITIONAL_TOLERANCE``) by an
  ``if_else``: the length is continuous only where the point lies on the line of
  its neighbours (OpenSim's modelling rule), and its derivative jumps at the range
  ends. Wrapping surfaces are not available on symbols: a muscle with wraps raises
  :class:`~ahbm.errors.ModelError` naming it.
- **moment arms** by CasADi's algorithmic differentiation, ``r = −∂l/∂q`` (m/rad or
  m/m; ``nq == nv`` models), and lengthening speeds ``l̇ = −r q̇``;
- **forces**, chosen by each muscle's class (``Muscle.model``) as ``ahbm so`` does:
  ``Millard2012EquilibriumMuscle``: OpenSim's Millard model
  (:mod:`ahbm.muscles.millard_symbolic`; elastic tendons in its equilibrium
  formulation); any other class De Groote et al.'s (2016):
  :func:`ahbm.muscles.hill.degroote_rigid_tendon_force` (``xp=casadi``), elastic tendons
  by :func:`ahbm.muscles.hill.degroote_tendon_residual`, activation dynamics by
  :func:`ahbm.muscles.hill.degroote_activation_rate`.

:class:`MuscleDrivenPhase` is a :class:`~ahbm.optimize.Phase` whose states are
``x = [q; q̇; a]`` (activations) and controls ``u = [τ_reserve; F_contact; e]``
(excitations), with ``M q̈ + h = Σ rᵢ Fᵢ(a, l, l̇) + τ_reserve`` (elastic tendons add
the tendon forces as states and their rates as controls); the objective
:class:`MuscleEffort` is ``w ∫ Σ aⁿ dt`` (or of the excitations), and
:class:`~ahbm.optimize.MetabolicCost` the metabolic energy of the muscles.

References
----------
F. De Groote, A. L. Kinney, A. V. Rao, B. J. Fregly, "Evaluation of direct collocation
optimal control problem formulations for solving the muscle redundancy problem",
*Annals of Biomedical Engineering* 44 (2016) 2922–2936.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.muscles.hill import (
    degroote_activation_rate,
    degroote_rigid_tendon_force,
    degroote_tendon_residual,
)
from ahbm.muscles.hill_curves import MuscleParameters
from ahbm.muscles.millard import millard_equilibrium, millard_minimum_fiber_length
from ahbm.muscles.millard_curves import MillardParameters
from ahbm.muscles.millard_symbolic import (
    millard_activation_rate_expression,
    millard_elastic_expressions,
    millard_rigid_tendon_force_expression,
)
from ahbm.muscles.path_elements import (
    CONDITIONAL_TOLERANCE,
    ConditionalPathPoint,
    MovingPathPoint,
)
from ahbm.optimize.metabolic_objective import (
    MetabolicCost,
    _check_metabolic_cost,
    _metabolic_cost_integrand,
)
from ahbm.optimize.phase import Phase
from ahbm.optimize.problem_helpers import _names_to_index
from ahbm.optimize.symbolic import require_casadi, symbolic_dynamics

__all__ = ["MuscleEffort", "SymbolicMuscles", "symbolic_muscles", "MuscleDrivenPhase"]

_PARAMETER_FIELDS = (
    "max_isometric_force",
    "optimal_fiber_length",
    "tendon_slack_length",
    "pennation_angle",
    "max_contraction_velocity",
    "active_force_width_scale",
    "passive_strain",
    "fiber_damping",
    "activation_time_constant",
    "deactivation_time_constant",
    "activation_smoothing",
    "tendon_strain",
)


@dataclass(frozen=True)
class MuscleEffort:
    """``w ∫ Σ_i x_i^n dt`` over the muscles' activations (or excitations).

    Parameters
    ----------
    weight : float
    exponent : float
        ``n`` (2: the sum of squared activations; 3 as in Ackermann & van den
        Bogert 2010 for gait).
    muscles : sequence of str, optional
        Default all muscles of the phase.
    of : {"activations", "excitations"}
    name : str

    Examples
    --------
    >>> MuscleEffort(exponent=3).of
    'activations'
    """

    weight: float = 1.0
    exponent: float = 2
    muscles: tuple | None = None
    of: str = "activations"
    name: str = "muscle_effort"

    def __post_init__(self):
        if self.of not in ("activations", "excitations"):
            raise DataError(f"MuscleEffort `of` must be 'activations' or 'excitations', "
                            f"got {self.of!r}")  # fmt: skip
        if not np.isfinite(float(self.exponent)) or float(self.exponent) <= 0:
            raise DataError(f"MuscleEffort `exponent` must be > 0, got {self.exponent!r}")


_MUSCLE_OBJECTIVES = (MuscleEffort, MetabolicCost)
MILLARD = "Millard2012EquilibriumMuscle"
#: bounds of a Millard muscle's normalized fiber length above its minimum (elastic tendon)
MILLARD_MAX_FIBER_LENGTH = 2.0


def _coordinate_q_index(model: Model) -> dict:
    """Coordinate name -> q index (scalar coordinates)."""
    out = {}
    for j, body in enumerate(model.bodies):
        joint = body.joint
        if joint.nq == joint.nv:
            for k, c in enumerate(joint.coordinates):
                out[c] = int(model.q_index[j]) + k
    return out


class SymbolicMuscles:
    """CasADi functions of a model's muscles (see :func:`symbolic_muscles`).

    Attributes
    ----------
    names : list of str
    params : MuscleParameters
        With De Groote's defaults filled (all muscles: their standard fields).
    millard : MillardParameters or None
        The Millard2012EquilibriumMuscle muscles (``is_millard``), in phase order.
    is_millard : list of bool
    lengths : casadi.Function
        ``q -> l`` (n_muscles,), musculotendon lengths (m).
    moment_arms : casadi.Function
        ``q -> R`` (n_muscles, nv), ``R = −∂l/∂q`` (m/rad, m/m).
    speeds : casadi.Function
        ``(q, qd) -> l̇`` (n_muscles,), lengthening speeds (m/s).
    forces : casadi.Function
        ``(a, q, qd) -> F`` (n_muscles,), rigid-tendon tendon forces (N).
    generalized_forces : casadi.Function
        ``(a, q, qd) -> Rᵀ F`` (nv,), N m or N.
    activation_rate : casadi.Function
        ``(e, a) -> ȧ`` (n_muscles,), 1/s.
    tendon_residual : casadi.Function
        ``(a, ft, dft, q, qd) -> r`` (n_muscles,): the elastic-tendon equations. De
        Groote muscles: the implicit equation
        (:func:`ahbm.muscles.hill.degroote_tendon_residual`) of normalized tendon forces
        ``ft`` and their rates ``dft`` (1/s); Millard muscles: the equilibrium residual
        of normalized fiber lengths ``ft`` and velocities ``dft`` (same slots).
    elastic_forces : casadi.Function
        ``(ft, q) -> F`` (n_muscles,): tendon forces (N) of those elastic-tendon states.
    elastic_rate_scale : ndarray
        ``d(state)/dt = scale × control``: 1 (De Groote), ``max_contraction_velocity``
        (Millard, ``dl̃M/dt = vmax ṽM``).
    """

    def __init__(self, model: Model, muscles=None, *, symbol: str = "SX",
                 activation_smoothing=10.0, force_smoothing=None):  # fmt: skip
        if not isinstance(model, Model):
            raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
        if model.nq != model.nv:
            raise ModelError(
                f"model '{model.name}' has quaternion joints (nq={model.nq}, nv={model.nv}); "
                "symbolic muscles need nq == nv (use 'free_euler'/'euler' joints)"
            )
        known = {m.name: m for m in model.muscles}
        if not known:
            raise ModelError(f"model '{model.name}' has no muscles (model.muscles is empty)")
        if muscles is None:
            chosen = list(model.muscles)
        else:
            if isinstance(muscles, str):
                muscles = [muscles]
            chosen = []
            for n in muscles:
                if n not in known:
                    raise DataError(f"`muscles`: {n!r} is not a muscle of model '{model.name}' "
                                    f"(muscles: {list(known)[:20]})")  # fmt: skip
                chosen.append(known[n])
        for m in chosen:
            if m.wraps:
                raise ModelError(
                    f"muscle {m.name!r} wraps over {[w.wrap_object for w in m.wraps]}: wrapping "
                    "surfaces are not available on CasADi symbols; remove its wraps (or replace "
                    "them by via points) for optimal control"
                )
        self.model = model
        self.activation_smoothing, self.force_smoothing = activation_smoothing, force_smoothing
        self.names = [m.name for m in chosen]
        self.sd = symbolic_dynamics(model, symbol=symbol)
        self.ca = self.sd.ca
        self.params = MuscleParameters.from_muscles(chosen).resolved("degroote2016")
        self._muscles = chosen
        self.is_millard = [str(m.model) == MILLARD for m in chosen]
        mill = [m for m, k in zip(chosen, self.is_millard, strict=True) if k]
        self.millard = MillardParameters.from_muscles(mill) if mill else None
        self._millard_index = {m.name: j for j, m in enumerate(mill)}
        self.elastic_rate_scale = self._per_muscle(
            [] if self.millard is None else self.millard.max_contraction_velocity, 1.0)  # fmt: skip
        sym = self.sd.ops.sym
        self._a = sym.sym("a", len(chosen))
        self._e = sym.sym("e", len(chosen))
        self._ft = sym.sym("ft", len(chosen))
        self._dft = sym.sym("dft", len(chosen))

    def __repr__(self) -> str:
        return f"SymbolicMuscles(model={self.model.name!r}, muscles={self.names})"

    @property
    def n(self) -> int:
        return len(self.names)

    def _world_point(self, point, coords):
        ca, kin, q = self.ca, self.sd._kin, self.sd._q
        if isinstance(point, MovingPathPoint):
            comps = [float(v) for v in point.location]
            for k, spec in enumerate(point.axes):
                if spec is None:
                    continue
                x = q[coords[spec[0]]]
                if len(spec) == 3 and spec[2] is not None:
                    x = ca.fmin(ca.fmax(x, float(spec[2][0])), float(spec[2][1]))
                comps[k] = self.sd.ops.function(spec[1], x, 0)
            r = ca.vertcat(*comps)
        else:
            r = ca.DM(np.asarray(point.location, float))
        if point.body == "ground":
            return r
        b = self.model.body_index(point.body)
        return kin.positions[b] + ca.mtimes(kin.rotations[b], r)

    def _active(self, point, coords):
        if not isinstance(point, ConditionalPathPoint):
            return 1.0
        ca = self.ca
        x = self.sd._q[coords[point.coordinate]]
        lo, hi = point.range
        inside = ca.logic_and(x >= lo - CONDITIONAL_TOLERANCE, x <= hi + CONDITIONAL_TOLERANCE)
        return ca.if_else(inside, 1.0, 0.0)

    @functools.cached_property
    def _length_expr(self):
        ca = self.ca
        coords = _coordinate_q_index(self.model)
        out = []
        for m in self._muscles:
            P = [self._world_point(p, coords) for p in m.points]
            act = [self._active(p, coords) for p in m.points]
            total = 0.0
            for j in range(1, len(P)):
                skipped = 1.0  # product of (1 - active) of the points between i and j
                for i in range(j - 1, -1, -1):
                    w = act[i] * act[j] * skipped
                    if not (isinstance(w, float) and w == 0.0):
                        total = total + w * ca.norm_2(P[j] - P[i])
                    if isinstance(act[i], float):
                        break  # an always active point: no segment reaches past it
                    skipped = skipped * (1.0 - act[i])
            out.append(total)
        return ca.vertcat(*out)

    @functools.cached_property
    def lengths(self):
        return self.ca.Function("muscle_lengths", [self.sd._q], [self._length_expr],
                                ["q"], ["l"])  # fmt: skip

    @functools.cached_property
    def _moment_arm_expr(self):
        return -self.ca.jacobian(self._length_expr, self.sd._q)

    @functools.cached_property
    def moment_arms(self):
        return self.ca.Function("moment_arms", [self.sd._q], [self._moment_arm_expr],
                                ["q"], ["R"])  # fmt: skip

    @functools.cached_property
    def _speed_expr(self):
        return -self.ca.mtimes(self._moment_arm_expr, self.sd._qd)

    @functools.cached_property
    def speeds(self):
        sd = self.sd
        return self.ca.Function("lengthening_speeds", [sd._q, sd._qd], [self._speed_expr],
                                ["q", "qd"], ["ldot"])  # fmt: skip

    def _muscle_params(self, i):
        return SimpleNamespace(**{f: float(getattr(self.params, f)[i]) for f in _PARAMETER_FIELDS})

    def _millard(self, i):
        """Index of muscle i in `millard`, or None (a De Groote muscle)."""
        return self._millard_index[self.names[i]] if self.is_millard[i] else None

    @functools.cached_property
    def _force_expr(self):
        ca = self.ca
        lmt, vmt, a = self._length_expr, self._speed_expr, self._a
        F = []
        for i in range(self.n):
            j = self._millard(i)
            if j is None:
                F.append(degroote_rigid_tendon_force(self._muscle_params(i), a[i], lmt[i],
                                                     vmt[i], xp=ca))  # fmt: skip
            else:
                F.append(millard_rigid_tendon_force_expression(self.millard, a[i], lmt[i], vmt[i],
                         muscle=j, smoothing=self.force_smoothing))  # fmt: skip
        return ca.vertcat(*F)

    @functools.cached_property
    def forces(self):
        sd = self.sd
        return self.ca.Function("muscle_forces", [self._a, sd._q, sd._qd], [self._force_expr],
                                ["a", "q", "qd"], ["F"])  # fmt: skip

    @functools.cached_property
    def generalized_forces(self):
        sd, ca = self.sd, self.ca
        tau = ca.mtimes(self._moment_arm_expr.T, self._force_expr)
        return ca.Function("muscle_generalized_forces", [self._a, sd._q, sd._qd], [tau],
                           ["a", "q", "qd"], ["tau"])  # fmt: skip

    @functools.cached_property
    def activation_rate(self):
        ca = self.ca
        rates = [degroote_activation_rate(self._muscle_params(i), self._e[i], self._a[i], xp=ca)
                 if self._millard(i) is None else millard_activation_rate_expression(
                     self.millard, self._e[i], self._a[i], muscle=self._millard(i),
                     smoothing=self.activation_smoothing)
                 for i in range(self.n)]  # fmt: skip
        return ca.Function("activation_rate", [self._e, self._a], [ca.vertcat(*rates)],
                           ["e", "a"], ["adot"])  # fmt: skip

    @functools.cached_property
    def tendon_residual(self):
        ca, sd = self.ca, self.sd
        lmt, vmt = self._length_expr, self._speed_expr
        r = [
            degroote_tendon_residual(
                self._muscle_params(i), self._a[i], lmt[i], vmt[i], self._ft[i], self._dft[i], xp=ca
            ) if self._millard(i) is None else self._millard_elastic(i).residual
            for i in range(self.n)
        ]  # fmt: skip
        return ca.Function("tendon_residual", [self._a, self._ft, self._dft, sd._q, sd._qd],
                           [ca.vertcat(*r)], ["a", "ft", "dft", "q", "qd"], ["r"])  # fmt: skip

    def _millard_elastic(self, i):
        lmt, j = self._length_expr[i], self._millard(i)
        return millard_elastic_expressions(self.millard, self._a[i], lmt, self._ft[i],
                                           self._dft[i], muscle=j)  # fmt: skip

    @functools.cached_property
    def elastic_forces(self):
        ca, sd = self.ca, self.sd
        F = [float(self.params.max_isometric_force[i]) * self._ft[i] if self._millard(i) is None
             else self._millard_elastic(i).tendon_force for i in range(self.n)]  # fmt: skip
        return ca.Function("elastic_tendon_forces", [self._ft, sd._q], [ca.vertcat(*F)],
                           ["ft", "q"], ["F"])  # fmt: skip

    def _per_muscle(self, millard_values, other) -> np.ndarray:
        """(n,): ``millard_values[j]`` for the Millard muscles, `other` for the others."""
        return np.array([float(millard_values[self._millard(i)]) if self.is_millard[i]
                         else float(other) for i in range(self.n)])  # fmt: skip

    def elastic_bounds(self, rate_bounds, velocity_bounds):
        """Bounds of the elastic-tendon states and controls: ``(xlo, xhi, ulo, uhi)``."""
        m, mill = self.millard, np.asarray(self.is_millard, bool)
        lmin = [] if m is None else millard_minimum_fiber_length(m) / m.optimal_fiber_length
        # De Groote: OpenSim's bracket of the normalized tendon force, and its rate
        return (self._per_muscle(lmin, 0.0), np.where(mill, MILLARD_MAX_FIBER_LENGTH, 5.0),
                np.where(mill, velocity_bounds[0], rate_bounds[0]),
                np.where(mill, velocity_bounds[1], rate_bounds[1]))  # fmt: skip

    def minimum_activations(self) -> np.ndarray:
        """Lower activation of each muscle: Millard's ``minimum_activation``, else 0."""
        m = self.millard
        return self._per_muscle([] if m is None else m.minimum_activation, 0.0)


def symbolic_muscles(model: Model, muscles=None, *, symbol: str = "SX", activation_smoothing=10.0,
                     force_smoothing=None) -> SymbolicMuscles:  # fmt: skip
    """CasADi functions of a model's muscle paths, moment arms, forces and activations.

    Parameters
    ----------
    model : Model
        With ``model.muscles`` (no wrapping surfaces), ``nq == nv``.
    muscles : sequence of str, optional
        Muscles to use, in this order (default all, in model order).
    symbol : {"SX", "MX"}, optional
    activation_smoothing : float or None, optional
        Millard muscles: the ``smoothing`` of
        :func:`ahbm.muscles.millard_symbolic.millard_activation_rate_expression`
        (default 10, as De Groote's; None: OpenSim's exact switch, whose kink at
        ``e = a`` makes IPOPT cycle on muscle-driven problems).
    force_smoothing : float or None, optional
        Millard muscles, rigid tendons: the ``smoothing`` of the no-pushing clamp of
        :func:`ahbm.muscles.millard_symbolic.millard_rigid_tendon_force_expression`
        (default None, exact; 1e-3 if IPOPT cycles where fibers shorten at low
        activation, see ``docs/optimize.md``).

    Returns
    -------
    SymbolicMuscles
        ``lengths(q)``, ``moment_arms(q)``, ``speeds(q, qd)``, ``forces(a, q, qd)``,
        ``generalized_forces(a, q, qd)``, ``activation_rate(e, a)``; cached per
        model version and muscle selection.

    Raises
    ------
    ModelError
        No muscles, quaternion joints, or a muscle with wrapping surfaces (named).
    DataError
        An unknown muscle name.

    Notes
    -----
    The tests compare them with :func:`ahbm.muscles.muscle_lengths`,
    :func:`~ahbm.muscles.moment_arms`, :func:`~ahbm.muscles.lengthening_speeds`,
    ``muscle_equilibrium(..., curves="degroote2016", rigid_tendon=True)`` and
    :func:`~ahbm.muscles.activation_rate` at random states (1e-12 relative); the
    Millard muscles with ``millard_equilibrium`` (rigid tendons) and ``millard_state``
    (elastic) to 1e-10 (``tests/optimize/test_millard_muscle_driven.py``).

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("elbow")
    >>> _ = m.add_body("forearm", "ground", {"type": "revolute", "axis": [0, 0, 1]},
    ...                mass=1.0, inertia=np.eye(3) * 0.01)
    >>> m.muscles = [Muscle("flexor", (PathPoint("o", "ground", (0.0, 0.3, 0.0)),
    ...                                PathPoint("i", "forearm", (0.05, 0.0, 0.0))),
    ...                     max_isometric_force=500.0, optimal_fiber_length=0.1,
    ...                     tendon_slack_length=0.15)]
    >>> sm = symbolic_muscles(m)
    >>> round(float(sm.lengths(0.5)), 4), round(float(sm.moment_arms(0.0)), 4)
    (0.2795, 0.0493)
    """
    if not isinstance(model, Model):
        raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
    key = (
        "ahbm.optimize.symbolic_muscles",
        symbol,
        None if muscles is None else tuple([muscles] if isinstance(muscles, str) else muscles),
        activation_smoothing,
        force_smoothing,
    )
    cached = model.cache.get(key)
    if cached is None:
        opts = dict(activation_smoothing=activation_smoothing, force_smoothing=force_smoothing)
        cached = model.cache[key] = SymbolicMuscles(model, muscles, symbol=symbol, **opts)
    return cached


class MuscleDrivenPhase(Phase):
    """A phase driven by Hill-type muscles (Millard 2012, De Groote 2016) and reserves.

    States ``x = [q; q̇; a]`` (activations ``a:<muscle>``), controls
    ``u = [τ; F; e]``: reserve torques ``tau:<coordinate>`` (zero-bounded unless in
    `reserves`), contact forces, excitations ``e:<muscle>``. Dynamics (explicit)::

        q̈ = ABA(q, q̇, Rᵀ F(a, l(q), l̇(q, q̇)) + τ_reserve),   ȧ = ȧ_DeGroote(e, a)

    With ``tendon="elastic"`` (De Groote's implicit formulation) the normalized tendon
    forces ``ft:<muscle>`` are states too (bounds 0–5), their rates ``dft:<muscle>``
    controls, ``F = F0 F̃T``, and the path constraint ``"<muscle> tendon equilibrium"``
    holds :func:`ahbm.muscles.hill.degroote_tendon_residual` at zero.

    Muscles of class ``Millard2012EquilibriumMuscle`` are OpenSim's Millard model (see
    :func:`symbolic_muscles`): their activations and excitations are bounded below by
    their ``minimum_activation``; with elastic tendons their states are the normalized
    fiber lengths ``lm:<muscle>`` (from the minimum fiber length to
    ``MILLARD_MAX_FIBER_LENGTH``), their controls the normalized fiber velocities
    ``vm:<muscle>`` (``fiber_velocity_bounds``), ``F = F0 fT(l̃T)`` and the path
    constraint ``"<muscle> tendon equilibrium"`` holds the equilibrium residual at zero.

    Parameters
    ----------
    model : Model
        With ``model.muscles`` (no wrapping surfaces), ``nq == nv``.
    muscles : sequence of str, optional
        Muscles driving the phase (default all).
    reserves : sequence of str, optional
        Coordinates with a reserve torque (bounded by ``tau_bounds``); default none.
    activation_bounds : (float, float), optional
        Bounds of activations and excitations (default ``(0, 1)``).
    activation_guess : float, optional
        Activation and excitation of the default initial guess (0.1).
    tendon : {"rigid", "elastic"}, optional
    tendon_rate_bounds : (float, float), optional
        Bounds of ``dF̃T/dt`` (1/s), elastic De Groote tendons (default ±50).
    fiber_velocity_bounds : (float, float), optional
        Bounds of Millard's normalized fiber velocity, elastic tendons (default ±1).
    activation_smoothing, force_smoothing : float or None, optional
        Millard muscles' activation dynamics and rigid-tendon force clamp (see
        :func:`symbolic_muscles`).
    **kwargs
        Those of :class:`~ahbm.optimize.Phase` (``nodes``, ``duration``, ``objectives``
        incl. :class:`MuscleEffort` and :class:`~ahbm.optimize.MetabolicCost`,
        ``q_bounds``, ``tau_bounds``, ``initial``, ``final``, ...); ``dynamics`` must be
        "explicit" and ``actuated`` is set by `reserves`.

    Examples
    --------
    >>> from ahbm.optimize import TrackCoordinates
    >>> from ahbm.models.arm import arm_model  # doctest: +SKIP
    >>> ph = MuscleDrivenPhase(arm_model(), nodes=11, duration=0.5,  # doctest: +SKIP
    ...                        objectives=[MuscleEffort(), TrackCoordinates(t, q)])
    >>> ph.nx, ph.nu  # doctest: +SKIP
    (10, 8)
    """

    def __init__(self, model: Model, *, muscles=None, reserves=None,
                 activation_bounds=(0.0, 1.0), activation_guess=0.1, tendon="rigid",
                 tendon_rate_bounds=(-50.0, 50.0), fiber_velocity_bounds=(-1.0, 1.0),
                 activation_smoothing=10.0, force_smoothing=None, **kwargs):  # fmt: skip
        if tendon not in ("rigid", "elastic"):
            raise DataError(f"`tendon` must be 'rigid' or 'elastic', got {tendon!r}")
        self.elastic = tendon == "elastic"
        r0, r1 = (float(v) for v in tendon_rate_bounds)
        if not r0 < r1:
            raise DataError(f"`tendon_rate_bounds` must be (lower, upper), got "
                            f"{tendon_rate_bounds!r}")  # fmt: skip
        self.tendon_rate_bounds = (r0, r1)
        v0, v1 = (float(v) for v in fiber_velocity_bounds)
        if not v0 < v1:
            raise DataError(f"`fiber_velocity_bounds` must be (lower, upper), got "
                            f"{fiber_velocity_bounds!r}")  # fmt: skip
        self.fiber_velocity_bounds = (v0, v1)
        if kwargs.get("dynamics", "explicit") != "explicit":
            raise DataError("MuscleDrivenPhase supports dynamics='explicit' only")
        if "actuated" in kwargs:
            raise DataError("MuscleDrivenPhase: give the reserve coordinates as `reserves`, "
                            "not `actuated`")  # fmt: skip
        objectives = tuple(kwargs.pop("objectives", None) or ())
        muscle_terms = tuple(o for o in objectives if isinstance(o, _MUSCLE_OBJECTIVES))
        others = [o for o in objectives if not isinstance(o, _MUSCLE_OBJECTIVES)]
        self.muscle_model = symbolic_muscles(model, muscles, force_smoothing=force_smoothing,
                                             activation_smoothing=activation_smoothing)  # fmt: skip
        reserve_idx = [] if reserves is None else _names_to_index(model, reserves, "`reserves`")
        super().__init__(model, actuated=reserve_idx, objectives=others, **kwargs)
        self.objectives = objectives
        names = [o.name for o in objectives]
        if len(set(names)) != len(names):
            raise DataError(f"phase '{self.name}': objective names must be unique, got {names}")
        lo, hi = (float(v) for v in activation_bounds)
        if not 0.0 <= lo < hi <= 1.0:
            raise DataError(f"`activation_bounds` must satisfy 0 <= lower < upper <= 1, "
                            f"got {activation_bounds!r}")  # fmt: skip
        self.activation_bounds = (lo, hi)
        self.activation_guess = float(np.clip(activation_guess, lo, hi))
        self.muscle_names = list(self.muscle_model.names)
        for o in muscle_terms:
            self._muscle_index(o)
            if isinstance(o, MetabolicCost):
                mill = [self.muscle_names[i] for i in self._muscle_index(o)
                        if self.muscle_model.is_millard[i]]  # fmt: skip
                if mill:
                    raise DataError(f"{o.name}: the metabolic models use De Groote's fiber "
                                    f"states; {mill} are Millard2012EquilibriumMuscle")  # fmt: skip
                _check_metabolic_cost(self, o)

    def _muscle_index(self, o):
        if o.muscles is None:
            return list(range(self.nm))
        out = []
        for n in o.muscles:
            if n not in self.muscle_names:
                raise DataError(f"{o.name}: {n!r} is not a muscle of the phase "
                                f"({self.muscle_names})")  # fmt: skip
            out.append(self.muscle_names.index(n))
        return out

    # ---- sizes and names
    @property
    def nm(self) -> int:
        """Number of muscles."""
        return len(self.muscle_model.names)

    @property
    def nx(self) -> int:
        return self.nq + self.nv + self.nm * (2 if self.elastic else 1)

    @property
    def nu(self) -> int:
        return self.nv + self.nf + self.nm * (2 if self.elastic else 1)

    def _elastic_names(self, dg, mill):
        mm = self.muscle_model
        pairs = zip(mm.names, mm.is_millard, strict=True) if self.elastic else ()
        return [f"{mill if k else dg}:{n}" for n, k in pairs]

    @property
    def state_names(self) -> list[str]:
        names = self.muscle_model.names
        return super().state_names + [f"a:{n}" for n in names] + self._elastic_names("ft", "lm")

    @property
    def control_names(self) -> list[str]:
        names = self.muscle_model.names
        return super().control_names + [f"e:{n}" for n in names] + self._elastic_names("dft", "vm")

    def split_state(self, x):
        """``(q, qd)`` of a state vector or matrix (rows); see :meth:`activations`."""
        return x[: self.nq], x[self.nq : self.nq + self.nv]

    def split_control(self, u):
        """``(tau_reserve, forces, None)``; see :meth:`excitations`."""
        nv, nf = self.nv, self.nf
        return u[:nv], u[nv : nv + nf], None

    def activations(self, x):
        k = self.nq + self.nv
        return x[k : k + self.nm]

    def excitations(self, u):
        k = self.nv + self.nf
        return u[k : k + self.nm]

    def tendon_forces(self, x):
        """Elastic-tendon states: normalized tendon forces ``F̃T`` (Millard: ``l̃M``)."""
        k = self.nq + self.nv + self.nm
        return x[k : k + self.nm]

    def tendon_rates(self, u):
        """Elastic-tendon controls: ``dF̃T/dt`` (1/s; Millard: ``ṽM``)."""
        k = self.nv + self.nf + self.nm
        return u[k : k + self.nm]

    # ---- bounds
    def _activation_limits(self):
        a0, a1 = self.activation_bounds
        a0 = np.maximum(a0, self.muscle_model.minimum_activations())
        return a0, np.full(self.nm, a1)

    def _bounds(self, lo, hi, part):
        a0, a1 = self._activation_limits()
        lo, hi = np.r_[lo, a0], np.r_[hi, a1]
        if self.elastic:
            b = self.muscle_model.elastic_bounds(self.tendon_rate_bounds,
                                                 self.fiber_velocity_bounds)  # fmt: skip
            lo, hi = np.r_[lo, b[part]], np.r_[hi, b[part + 1]]
        return lo, hi

    def state_bounds(self):
        return self._bounds(*super().state_bounds(), 0)

    def control_bounds(self):
        return self._bounds(*super().control_bounds(), 2)

    # ---- dynamics
    def generalized_forces(self, x, u):
        """``Rᵀ F + τ_reserve`` (nv,): the joint torques acting on the skeleton."""
        q, qd = self.split_state(x)
        tau, _, _ = self.split_control(u)
        mm = self.muscle_model
        if self.elastic:
            ca = require_casadi()
            F = mm.elastic_forces(self.tendon_forces(x), q)
            return ca.mtimes(mm.moment_arms(q).T, F) + tau
        return mm.generalized_forces(self.activations(x), q, qd) + tau

    def ode(self, x, u, p=None):
        """``ẋ = [q̇; q̈; ȧ (; dF̃T/dt)]`` (``q̈`` by :meth:`Phase.accelerations`)."""
        ca = require_casadi()
        adot = self.muscle_model.activation_rate(self.excitations(u), self.activations(x))
        out = ca.vertcat(super().ode(x, u, p), adot)
        if not self.elastic:
            return out
        return ca.vertcat(out, ca.DM(self.muscle_model.elastic_rate_scale) * self.tendon_rates(u))

    def path_constraints(self, x, u, p, t=0.0):
        """Those of :class:`Phase` and, elastic tendons, the tendon equilibria."""
        g, lb, ub, names = super().path_constraints(x, u, p, t)
        if not self.elastic:
            return g, lb, ub, names
        ca = require_casadi()
        q, qd = self.split_state(x)
        r = self.muscle_model.tendon_residual(self.activations(x), self.tendon_forces(x),
                                              self.tendon_rates(u), q, qd)  # fmt: skip
        z = np.zeros(self.nm)
        return (ca.vertcat(g, r), np.r_[lb, z], np.r_[ub, z],
                names + [f"{n} tendon equilibrium" for n in self.muscle_names])  # fmt: skip

    # ---- costs
    def running_cost_terms(self, x, u, p, t) -> dict:
        out = super().running_cost_terms(x, u, p, t)
        for o in self.objectives:
            if isinstance(o, MuscleEffort):
                v = self.activations(x) if o.of == "activations" else self.excitations(u)
                out[o.name] = o.weight * sum(v[i] ** o.exponent for i in self._muscle_index(o))
            elif isinstance(o, MetabolicCost):
                out[o.name] = _metabolic_cost_integrand(self, o, x, u, self._muscle_index(o))
        return {o.name: out[o.name] for o in self.objectives if o.name in out}

    # ---- guess and outputs
    def initial_guess(self, t):
        """As :meth:`Phase.initial_guess`, activations and excitations at ``activation_guess``."""
        X, U, p = super().initial_guess(t)
        k, j = self.nq + self.nv, self.nv + self.nf
        a0, a1 = self._activation_limits()
        X[k : k + self.nm] = np.clip(self.activation_guess, a0, a1)[:, None]
        U[j : j + self.nm] = np.clip(self.activation_guess, a0, a1)[:, None]
        if self.elastic:  # tendon forces of rigid tendons at the guess
            mm, n = self.muscle_model, X.shape[1]
            F = np.asarray(mm.forces.map(n)(X[k : k + self.nm], X[: self.nq],
                                            X[self.nq : k]), float)  # fmt: skip
            X[k + self.nm :] = np.clip(F / mm.params.max_isometric_force[:, None], 0.0, 5.0)
            U[j + self.nm :] = 0.0
            mill = np.flatnonzero(mm.is_millard)
            if mill.size:  # Millard: fibers in static equilibrium at the guess
                lmt = np.asarray(mm.lengths.map(n)(X[: self.nq]), float)[mill].T
                s = millard_equilibrium(mm.millard, X[k + mill].T, lmt)
                lo, hi, _, _ = mm.elastic_bounds(self.tendon_rate_bounds,
                                                 self.fiber_velocity_bounds)  # fmt: skip
                ln = np.nan_to_num(s.normalized_fiber_length.T, nan=1.0)
                X[k + self.nm + mill] = np.clip(ln, lo[mill, None], hi[mill, None])
        return X, U, p

    def muscle_outputs(self, X, U) -> dict:
        """Muscle quantities of a solution at its grid points (numbers).

        Parameters
        ----------
        X, U : array_like, (nx, n), (nu, n)

        Returns
        -------
        dict
            ``names``, ``activations``, ``excitations`` (n, n_muscles), ``lengths`` (m),
            ``speeds`` (m/s), ``forces`` (N), ``moment_arms`` (n, n_muscles, nv),
            ``muscle_torques`` (n, nv) ``Rᵀ F``, ``reserves`` (n, nv), ``tau`` (n, nv)
            their sum; elastic tendons: ``tendon_force_rates`` and (Millard muscles,
            NaN for others) ``normalized_fiber_lengths``, ``normalized_fiber_velocities``.
        """
        X, U = np.asarray(X, float), np.asarray(U, float)
        n = X.shape[1]
        q, qd = X[: self.nq], X[self.nq : self.nq + self.nv]
        a, e = self.activations(X), self.excitations(U)
        mm = self.muscle_model

        def cols(f, *args):
            return np.asarray(f.map(n)(*args), float)

        R = np.stack([np.asarray(mm.moment_arms(q[:, k]), float) for k in range(n)])
        if self.elastic:
            F = cols(mm.elastic_forces, self.tendon_forces(X), q).T
        else:
            F = cols(mm.forces, a, q, qd).T
        tau_m = np.einsum("nmv,nm->nv", R, F)
        res = U[: self.nv].T
        out = {
            "names": list(mm.names),
            "activations": a.T.copy(),
            "excitations": e.T.copy(),
            "lengths": cols(mm.lengths, q).T,
            "speeds": cols(mm.speeds, q, qd).T,
            "forces": F,
            "moment_arms": R,
            "muscle_torques": tau_m,
            "reserves": res.copy(),
            "tau": tau_m + res,
        }
        if self.elastic:
            mill = np.asarray(mm.is_millard)
            rates, w = self.tendon_rates(U).T.copy(), self.tendon_forces(X).T.copy()
            out["tendon_force_rates"] = np.where(mill, np.nan, rates)
            if mill.any():
                out["normalized_fiber_lengths"] = np.where(mill, w, np.nan)
                out["normalized_fiber_velocities"] = np.where(mill, rates, np.nan)
        return out
