"""Optimal-control problems: phases, objectives, constraints, links, periodicity, symmetry.

A problem is described once and handed to :func:`ahbm.optimize.solve` with a
transcription (direct collocation, multiple shooting, B-splines); all of them
read the same :class:`Phase` methods:

``ode(x, u, p)``
    State derivative ``ẋ = f(x, u, p)``, ``x = [q; q̇]``.
``running_cost(x, u, p, t)``
    Sum of the weighted Lagrange integrands.
``terminal_cost(x0, xf, T, p)``
    Sum of the Mayer terms.
``path_constraints(x, u, p, t)``
    ``(g, lb, ub, names)`` imposed at every node.
``boundary_constraints(x0, xf, T, p, *, u0=None, uf=None)``
    ``(g, lb, ub, names)`` on the phase's first and last states (and, for
    ``"qdd"`` values, the accelerations of the first and last controls).
``node_terms(t, X, U, p)``
    Costs and constraints that need the whole grid (jerk, waypoints at
    arbitrary times); ``X`` is ``(nx, n)``, ``t`` the ``n`` node times.

States are ``x = [q; q̇]`` (``nx = nq + nv``; phases need ``nq == nv``, i.e.
no quaternion joints: use ``free_euler``/``euler``). Controls of a
torque-driven phase are ``u = [τ; F_contacts; (q̈)]``: the joint torques
(``nv``; unactuated coordinates are bounded to zero), the ground forces of
its :class:`ContactPoint` s (one per contact axis) and, with
``dynamics="implicit"``, the accelerations, for which the inverse dynamics
``τ = M q̈ + h − Σ Jᵀ F`` becomes a path constraint (the implicit form of
Falisse et al. 2019). Parameters ``p`` are the contact anchors (where each
contact point stands on the ground) and auxiliary variables of some
objectives (:class:`PeakTorque`).

References
----------
H.-J. Chung, *Optimization-based dynamic prediction of 3D human running*,
PhD thesis, University of Iowa, 2009 (ch. 6–7; contact eqs 7.20–7.30, ZMP
eq 7.32, symmetry eqs 7.33–7.35).
M. L. Felis, *Modeling emotional aspects in human locomotion*, PhD thesis,
Heidelberg, 2015 (ch. 5: multi-phase problems, impacts).
A. Falisse et al., "Algorithmic differentiation improves the computational
efficiency of OpenSim-based trajectory optimization of human movement",
*PLoS ONE* 14 (2019) e0217730.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, as_positive_float, check_callable
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.ik import joint_bounds
from ahbm.kinematics.tree import Model
from ahbm.optimize.symbolic import require_casadi, symbolic_dynamics

__all__ = [
    "Phase",
    "OptimalControlProblem",
    "ContactPoint",
    "NonPenetration",
    "ZMPInSupport",
    "PathConstraint",
    "BoundaryConstraint",
    "Waypoint",
    "Effort",
    "Jerk",
    "ControlRate",
    "TrackCoordinates",
    "TrackMarkers",
    "TrackGRF",
    "FinalTime",
    "PeakTorque",
    "CustomCost",
    "Continuity",
    "Impact",
    "Periodic",
    "Symmetry",
    "AverageSpeed",
]

_AXES = {"x": 0, "y": 1, "z": 2}


# --------------------------------------------------------------------------- helpers


def _names_to_index(model: Model, names, what: str) -> list[int]:
    """Velocity indices of coordinate names (or all when None)."""
    all_names = model.velocity_names if model.nq != model.nv else model.coordinate_names
    if names is None:
        return list(range(model.nv))
    if isinstance(names, str):
        names = [names]
    out = []
    for n in names:
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if not 0 <= int(n) < model.nv:
                raise DataError(f"{what}: coordinate index {n} out of range [0, {model.nv})")
            out.append(int(n))
        elif n in all_names:
            out.append(all_names.index(n))
        else:
            raise DataError(f"{what}: unknown coordinate {n!r}; the model has {all_names}")
    return out


def _bounds_pair(value, n: int, what: str, names, default):
    """(lo, hi) arrays of size n from None, a (lo, hi) pair of scalars/arrays or a dict."""
    lo, hi = (np.array(d, dtype=float) for d in default)
    if value is None:
        return lo, hi
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in names:
                raise DataError(f"`{what}`: unknown coordinate {k!r}; use one of {list(names)}")
            pair = as_float_array(v, f"{what}[{k!r}]", allow_nan=False)
            if pair.shape != (2,):
                raise DataError(f"`{what}[{k!r}]` must be a (lower, upper) pair, got {v!r}")
            i = list(names).index(k)
            lo[i], hi[i] = pair
    else:
        try:
            a, b = value
        except (TypeError, ValueError) as err:
            raise DataError(
                f"`{what}` must be a (lower, upper) pair or a dict, got {value!r}"
            ) from err
        lo = np.broadcast_to(np.asarray(a, dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(b, dtype=float), (n,)).copy()
    if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
        raise DataError(f"`{what}`: lower bounds must not exceed the upper ones (got {lo}, {hi})")
    return lo, hi


def _g(items):
    """Join a list of (expr, lb, ub, names) into one (g, lb, ub, names)."""
    ca = require_casadi()
    if not items:
        return ca.SX(0, 1), np.zeros(0), np.zeros(0), []
    g = ca.vertcat(*[e for e, *_ in items])
    lb = np.concatenate(
        [np.broadcast_to(np.asarray(b, float), (e.shape[0],)) for e, b, _, _ in items]
    )
    ub = np.concatenate(
        [np.broadcast_to(np.asarray(b, float), (e.shape[0],)) for e, _, b, _ in items]
    )
    names = [n for *_, ns in items for n in ns]
    return g, lb, ub, names


def _series(t, values, what):
    t = as_float_array(t, f"{what} time")
    v = as_float_array(values, what)
    if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
        raise DataError(f"`{what}` times must be strictly increasing, at least 2 samples")
    if v.shape[0] != t.size:
        raise DataError(f"`{what}` must have {t.size} rows (one per time), got {v.shape}")
    return t, v


def _interp(t, values, tau):
    """CasADi linear interpolation of tabulated columns at the (symbolic) time tau."""
    ca = require_casadi()
    v = values.reshape(values.shape[0], -1)
    cols = []
    for j in range(v.shape[1]):
        f = ca.interpolant(f"ref{j}", "linear", [t], v[:, j])
        cols.append(f(tau))
    return ca.vertcat(*cols)


# --------------------------------------------------------------------------- contact & constraints


@dataclass(frozen=True)
class ContactPoint:
    """A body point standing on the ground during a phase, with a ground force on it.

    The phase gets one force control per contact axis (world frame, N) and a
    parameter per horizontal axis, the anchor where the point stands; the
    path constraints hold the point at ``(anchor, height)`` (no slip and no
    penetration, Chung eqs 7.20–7.28), the normal force is non-negative and,
    with `friction`, inside the friction cone ``|F_t| ≤ μ F_n``.

    Only the first contact point of a body in a phase is anchored
    horizontally; the body's further points are held on the ground (their
    horizontal no-slip follows from the body's rigidity, and repeating it
    would make the constraints linearly dependent). In 3-D this leaves a flat
    body free to turn about the vertical through its first point: add a
    :class:`PathConstraint` on its yaw where that matters.

    Parameters
    ----------
    body : str or int
    point : array_like, shape (3,)
        In the body frame, m.
    name : str, optional
        Used in constraint names and results (default ``"<body>_contact"``).
    axes : {"xyz", "xz", "yz", "z"}, optional
        World axes of the force (and of the position constraint); the last
        one is the ground normal. ``"xz"`` for sagittal models in the x–z plane.
    friction : float, optional
        Friction coefficient μ (None: no cone).
    height : float, optional
        Ground height, m.
    anchor : sequence of float or None, optional
        Fixed horizontal position of the point (one per tangential axis);
        None makes it a free parameter.

    Examples
    --------
    >>> ContactPoint("foot_r", (0.15, 0.0, -0.08), name="toe_r", axes="xz", friction=0.8).label
    'toe_r'
    """

    body: object
    point: tuple = (0.0, 0.0, 0.0)
    name: str | None = None
    axes: str = "xyz"
    friction: float | None = None
    height: float = 0.0
    anchor: tuple | None = None

    def __post_init__(self):
        if self.axes not in ("xyz", "xz", "yz", "z"):
            raise DataError(
                f"ContactPoint `axes` must be 'xyz', 'xz', 'yz' or 'z', got {self.axes!r}"
            )
        if self.friction is not None and not self.friction >= 0:
            raise DataError(f"ContactPoint `friction` must be >= 0, got {self.friction!r}")
        if self.anchor is not None and len(self.anchor) != len(self.axes) - 1:
            raise DataError(
                f"ContactPoint `anchor` needs {len(self.axes) - 1} values (the axes "
                f"{self.axes[:-1]!r}), got {self.anchor!r}"
            )

    @property
    def label(self) -> str:
        return self.name or f"{self.body}_contact"


@dataclass(frozen=True)
class NonPenetration:
    """A body point stays at least `height` above the ground (Chung eqs 7.24–7.28).

    Parameters
    ----------
    body, point : as in :class:`ContactPoint`
    height : float
        Minimum height, m (Chung uses 1e-3 for points not in contact).
    axis : {"x", "y", "z"}
        The vertical axis.

    Examples
    --------
    >>> NonPenetration("foot_l", (0.15, 0.0, -0.08), height=1e-3).height
    0.001
    """

    body: object
    point: tuple = (0.0, 0.0, 0.0)
    height: float = 0.0
    axis: str = "z"
    name: str | None = None


@dataclass(frozen=True)
class ZMPInSupport:
    """The zero-moment point stays inside the support polygon of some body points (eq 7.32).

    The ZMP comes from the whole-body dynamics (Chung eqs 4.8–4.10, the
    ground reaction the motion needs); the polygon's vertices are body points,
    given in counter-clockwise order seen from above (two points: a segment,
    e.g. heel–toe of a sagittal foot). Each edge ``a → b`` gives
    ``((b − a) × (r_D − a)) · n ≥ 0`` (for a segment: ``r_D`` between the ends).

    Parameters
    ----------
    points : sequence of (body, point)
    margin : float
        Distance kept from the edges, m.

    Examples
    --------
    >>> heel, toe = ("foot_r", (-0.05, 0, -0.08)), ("foot_r", (0.15, 0, -0.08))
    >>> len(ZMPInSupport([heel, toe]).points)  # a sagittal foot: a segment
    2
    """

    points: tuple
    margin: float = 0.0
    name: str = "zmp"


@dataclass(frozen=True)
class PathConstraint:
    """A user constraint ``lb ≤ fun(x, u, p, t) ≤ ub`` at every node (CasADi expressions)."""

    fun: object
    lb: object = 0.0
    ub: object = 0.0
    name: str = "path"

    def __post_init__(self):
        check_callable(self.fun, "PathConstraint fun")


@dataclass(frozen=True)
class BoundaryConstraint:
    """A user constraint ``lb ≤ fun(x0, xf, T, p) ≤ ub`` on the phase's ends."""

    fun: object
    lb: object = 0.0
    ub: object = 0.0
    name: str = "boundary"

    def __post_init__(self):
        check_callable(self.fun, "BoundaryConstraint fun")


@dataclass(frozen=True)
class Waypoint:
    """Coordinates prescribed at an interior time (Chung's pendulum case 4).

    The state at time `time` (from the phase start) is the cubic Hermite
    interpolant of the node positions and velocities that bracket it.

    Parameters
    ----------
    time : float
        s, within a fixed-duration phase.
    values : dict
        Coordinate name -> value (rad or m).

    Examples
    --------
    >>> Waypoint(0.76, {"pin": -2.44}).values
    {'pin': -2.44}
    """

    time: float
    values: dict
    name: str = "waypoint"


# --------------------------------------------------------------------------- objectives


@dataclass(frozen=True)
class Effort:
    """``w ∫ Σ (τ_i / s_i)^n dt`` over the actuated (or given) coordinates.

    Parameters
    ----------
    weight : float
    coordinates : sequence of str, optional
    scale : float or array_like, optional
        Torque scale ``s_i`` (N m).
    exponent : int
        ``n`` (2 for the sum of squared torques of Chung eq 6.4 / 7.17).

    Examples
    --------
    >>> Effort(weight=1.0, scale=100.0).exponent  # sum of (tau/100 N m)^2
    2
    """

    weight: float = 1.0
    coordinates: tuple | None = None
    scale: object = 1.0
    exponent: int = 2
    name: str = "effort"


@dataclass(frozen=True)
class Jerk:
    """``w ∫ Σ q⃛_i² dt`` by finite differences of the node accelerations."""

    weight: float = 1.0
    coordinates: tuple | None = None
    name: str = "jerk"


@dataclass(frozen=True)
class ControlRate:
    """``w ∫ Σ (u̇_i / s)² dt`` by finite differences of the node controls (a smoothness term).

    Parameters
    ----------
    weight : float
    controls : sequence of str, optional
        Prefixes of :attr:`Phase.control_names` (e.g. ``["F:", "tau:"]``);
        default all controls.
    scale : float
        Control scale ``s``.
    """

    weight: float = 1.0
    controls: tuple | None = None
    scale: float = 1.0
    name: str = "control_rate"


@dataclass(frozen=True)
class TrackCoordinates:
    """``w ∫ Σ (q_i(t) − q_ref,i(t))² dt`` with the reference linearly interpolated.

    Parameters
    ----------
    time : array_like, shape (n,)
    values : array_like, shape (n, k)
        Reference of the `coordinates` (all when None), rad or m.
    """

    time: object
    values: object
    weight: float = 1.0
    coordinates: tuple | None = None
    name: str = "track_coordinates"


@dataclass(frozen=True)
class TrackMarkers:
    """``w ∫ Σ |p_m(q) − p_ref,m(t)|² dt`` for model markers.

    Parameters
    ----------
    time : array_like, shape (n,)
    values : dict
        Marker name -> (n, 3) world positions, m.
    """

    time: object
    values: dict
    weight: float = 1.0
    name: str = "track_markers"


@dataclass(frozen=True)
class TrackGRF:
    """``w ∫ |Σ F_contacts − F_ref(t)|² dt``: tracking of the total ground force (N)."""

    time: object
    values: object
    weight: float = 1.0
    name: str = "track_grf"


@dataclass(frozen=True)
class FinalTime:
    """``w T``: minimum time (a Mayer term; the phase needs a free duration)."""

    weight: float = 1.0
    name: str = "final_time"


@dataclass(frozen=True)
class PeakTorque:
    """``w s`` with ``−s ≤ τ_i ≤ s`` at every node: the minimax torque (Chung ch. 6)."""

    weight: float = 1.0
    name: str = "peak_torque"


@dataclass(frozen=True)
class CustomCost:
    """A user cost: ``w ∫ fun(x, u, p, t) dt`` (``kind="lagrange"``) or ``w fun(x0, xf, T, p)``."""

    fun: object
    kind: str = "lagrange"
    weight: float = 1.0
    name: str = "custom"

    def __post_init__(self):
        check_callable(self.fun, "CustomCost fun")


_OBJECTIVES = (Effort, Jerk, ControlRate, TrackCoordinates, TrackMarkers, TrackGRF, FinalTime,
               PeakTorque, CustomCost)  # fmt: skip
_CONSTRAINTS = (NonPenetration, ZMPInSupport, PathConstraint, BoundaryConstraint, Waypoint)

# --------------------------------------------------------------------------- phase


class Phase:
    """One phase of an optimal-control problem of a torque-driven model.

    Parameters
    ----------
    model : Model
        The multibody model (``nq == nv``).
    nodes : int, optional
        Number of time nodes (the transcriptions' grid), >= 2.
    duration : float or (float, float), optional
        Fixed duration (s) or bounds of a free one.
    name : str, optional
    dynamics : {"explicit", "implicit"}, optional
        ``"explicit"``: ``q̈ = ABA(q, q̇, τ, F)``; ``"implicit"``: ``q̈`` are
        controls and ``RNEA(q, q̇, q̈, F) = τ`` is a path constraint (sparser,
        faster for larger models).
    actuated : sequence of str, optional
        Coordinates with a torque (default all); the others get ``τ = 0``.
    q_bounds, qd_bounds, tau_bounds : (lower, upper) or dict, optional
        Bounds of coordinates (default: the joint limits,
        :func:`ahbm.kinematics.ik.joint_bounds`), velocities and torques
        (default unbounded); a dict maps coordinate names to pairs.
    qdd_bounds : (lower, upper), optional
        Bounds of the accelerations (implicit dynamics only).
    contacts : sequence of ContactPoint, optional
    objectives : sequence, optional
        :class:`Effort`, :class:`Jerk`, :class:`ControlRate`, :class:`TrackCoordinates`,
        :class:`TrackMarkers`, :class:`TrackGRF`, :class:`FinalTime`,
        :class:`PeakTorque`, :class:`CustomCost`. None is the zero objective
        (a feasibility problem).
    constraints : sequence, optional
        :class:`NonPenetration`, :class:`ZMPInSupport`,
        :class:`PathConstraint`, :class:`BoundaryConstraint`, :class:`Waypoint`.
    initial, final : dict, optional
        Boundary conditions: ``{"q": array or {name: value}, "qd": ..., "qdd": ...}``
        (``"qdd"``: the accelerations :meth:`accelerations` at the first/last
        grid point, rad/s² or m/s²).
    guess : dict or object, optional
        Initial guess of this phase (see :meth:`initial_guess`).

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("rod", "ground", {"type": "revolute", "axis": [0, -1, 0]},
    ...                mass=0.5, com=[0.2, 0, 0], inertia=np.diag([0, 0.0067, 0.0067]))
    >>> ph = Phase(m, nodes=21, duration=0.5, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> ph.nx, ph.nu, ph.np
    (2, 1, 0)
    """

    def __init__(
        self,
        model: Model,
        *,
        nodes: int = 21,
        duration=1.0,
        name: str | None = None,
        dynamics: str = "explicit",
        actuated=None,
        q_bounds=None,
        qd_bounds=None,
        tau_bounds=None,
        qdd_bounds=None,
        contacts=(),
        objectives=None,
        constraints=(),
        initial=None,
        final=None,
        guess=None,
    ):
        if not isinstance(model, Model):
            raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
        if model.nq != model.nv:
            raise ModelError(
                f"model '{model.name}' has quaternion joints (nq={model.nq}, nv={model.nv}); the "
                "optimal-control phases need nq == nv: use 'free_euler'/'euler' joints instead"
            )
        self.model = model
        self.name = name or "phase"
        self.nodes = as_int(nodes, "nodes", minimum=2)
        if dynamics not in ("explicit", "implicit"):
            raise DataError(f"`dynamics` must be 'explicit' or 'implicit', got {dynamics!r}")
        self.dynamics = dynamics
        if np.ndim(duration) == 0:
            T = as_positive_float(duration, "duration", unit="s")
            self.duration_bounds = (T, T)
        else:
            lo, hi = (as_positive_float(v, "duration bound", unit="s") for v in duration)
            if lo > hi:
                raise DataError(f"`duration` bounds ({lo}, {hi}) are reversed")
            self.duration_bounds = (lo, hi)
        self.free_duration = self.duration_bounds[0] != self.duration_bounds[1]
        nv = model.nv
        self.coordinate_names = list(model.coordinate_names)
        self.actuated = _names_to_index(model, actuated, "`actuated`")
        self.contacts = tuple(contacts)
        for c in self.contacts:
            if not isinstance(c, ContactPoint):
                raise DataError(f"`contacts` must hold ContactPoint objects, got {c!r}")
            model.body_index(c.body)
        labels = [c.label for c in self.contacts]
        if len(set(labels)) != len(labels):
            raise DataError(f"contact names must be unique, got {labels}")
        self.objectives = tuple(objectives or ())
        self.constraints = tuple(constraints)
        for o in self.objectives:
            if not isinstance(o, _OBJECTIVES):
                raise DataError(
                    f"phase '{self.name}': {o!r} is not an objective; use one of "
                    f"{[c.__name__ for c in _OBJECTIVES]}"
                )
        for k in self.constraints:
            if not isinstance(k, _CONSTRAINTS):
                raise DataError(
                    f"phase '{self.name}': {k!r} is not a constraint; use one of "
                    f"{[c.__name__ for c in _CONSTRAINTS]} (contact points go in `contacts`)"
                )
        names = [o.name for o in self.objectives]
        if len(set(names)) != len(names):
            raise DataError(f"phase '{self.name}': objective names must be unique, got {names}")
        self.initial = self._boundary_values(initial, "initial")
        self.final = self._boundary_values(final, "final")
        self.guess = guess
        # bounds
        q_default = joint_bounds(model)
        self.q_bounds = _bounds_pair(q_bounds, nv, "q_bounds", self.coordinate_names, q_default)
        inf = (np.full(nv, -np.inf), np.full(nv, np.inf))
        self.qd_bounds = _bounds_pair(qd_bounds, nv, "qd_bounds", self.coordinate_names, inf)
        lo, hi = _bounds_pair(tau_bounds, nv, "tau_bounds", self.coordinate_names, inf)
        mask = np.zeros(nv, bool)
        mask[self.actuated] = True
        self.tau_bounds = (np.where(mask, lo, 0.0), np.where(mask, hi, 0.0))
        self.qdd_bounds = _bounds_pair(qdd_bounds, nv, "qdd_bounds", self.coordinate_names, inf)
        for o in self.objectives:
            if isinstance(o, FinalTime) and not self.free_duration:
                raise DataError(f"phase '{self.name}': FinalTime needs a free duration (lo, hi)")
        self.sd = symbolic_dynamics(model)

    # ---- sizes and names
    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def nx(self) -> int:
        return self.model.nq + self.model.nv

    @property
    def nf(self) -> int:
        """Number of contact-force controls."""
        return sum(len(c.axes) for c in self.contacts)

    @property
    def nu(self) -> int:
        return self.nv + self.nf + (self.nv if self.dynamics == "implicit" else 0)

    @property
    def state_names(self) -> list[str]:
        return [f"q:{n}" for n in self.coordinate_names] + [
            f"qd:{n}" for n in self.coordinate_names
        ]

    @property
    def control_names(self) -> list[str]:
        out = [f"tau:{n}" for n in self.coordinate_names]
        out += [f"F:{c.label}:{a}" for c in self.contacts for a in c.axes]
        if self.dynamics == "implicit":
            out += [f"qdd:{n}" for n in self.coordinate_names]
        return out

    @functools.cached_property
    def parameter_names(self) -> list[str]:
        out = []
        for c in self.anchored_contacts:
            if c.anchor is None:
                out += [f"anchor:{c.label}:{a}" for a in c.axes[:-1]]
        out += [f"peak:{o.name}" for o in self.objectives if isinstance(o, PeakTorque)]
        return out

    @functools.cached_property
    def anchored_contacts(self) -> list:
        """The first contact point of each body (held horizontally; the others only vertically)."""
        seen, out = set(), []
        for c in self.contacts:
            b = self.model.body_index(c.body)
            if b not in seen:
                seen.add(b)
                out.append(c)
        return out

    @property
    def np(self) -> int:
        return len(self.parameter_names)

    def __repr__(self) -> str:
        T = self.duration_bounds
        d = T[0] if not self.free_duration else T
        return (
            f"Phase(name={self.name!r}, nodes={self.nodes}, duration={d}, nx={self.nx}, "
            f"nu={self.nu}, np={self.np}, contacts={[c.label for c in self.contacts]})"
        )

    def _boundary_values(self, spec, what):
        if spec is None:
            return {}
        if not isinstance(spec, dict) or not set(spec) <= {"q", "qd", "qdd"}:
            raise DataError(
                f"`{what}` must be a dict with keys 'q', 'qd' and/or 'qdd', got {spec!r}"
            )
        out = {}
        for key, val in spec.items():
            if isinstance(val, dict):
                idx = _names_to_index(self.model, list(val), f"`{what}[{key!r}]`")
                out[key] = (idx, np.array([float(v) for v in val.values()]))
            else:
                arr = as_float_array(val, f"{what}[{key!r}]")
                if arr.shape != (self.model.nv,):
                    raise DataError(
                        f"Expected `{what}[{key!r}]` to have shape ({self.model.nv},), "
                        f"got {arr.shape}"
                    )
                out[key] = (list(range(self.model.nv)), arr)
        return out

    # ---- splitting
    def split_state(self, x):
        """``(q, qd)`` of a state vector or matrix (rows)."""
        return x[: self.nq], x[self.nq : self.nx]

    def split_control(self, u):
        """``(tau, forces, qdd)`` of a control vector (``qdd`` None for explicit dynamics)."""
        nv, nf = self.nv, self.nf
        return u[:nv], u[nv : nv + nf], (u[nv + nf :] if self.dynamics == "implicit" else None)

    def _param(self, p, name):
        return p[self.parameter_names.index(name)]

    # ---- bounds
    def state_bounds(self):
        """``(lower, upper)`` of the state, shape (nx,) each."""
        return (np.concatenate([self.q_bounds[0], self.qd_bounds[0]]),
                np.concatenate([self.q_bounds[1], self.qd_bounds[1]]))  # fmt: skip

    def control_bounds(self):
        """``(lower, upper)`` of the controls, shape (nu,): normal forces are non-negative."""
        lo, hi = [self.tau_bounds[0]], [self.tau_bounds[1]]
        for c in self.contacts:
            lo.append(np.r_[np.full(len(c.axes) - 1, -np.inf), 0.0])
            hi.append(np.full(len(c.axes), np.inf))
        if self.dynamics == "implicit":
            lo.append(self.qdd_bounds[0])
            hi.append(self.qdd_bounds[1])
        return np.concatenate(lo), np.concatenate(hi)

    def parameter_bounds(self):
        """``(lower, upper)`` of the parameters (anchors free; peak torque ≥ 0)."""
        lo = np.array([0.0 if n.startswith("peak:") else -np.inf for n in self.parameter_names])
        return lo, np.full(self.np, np.inf)

    # ---- dynamics
    def point_position(self, q, body, point):
        return self.sd.point_position(body, point)(q)

    def contact_forces(self, u) -> dict:
        """``{label: (3,) world force}`` of the contacts from a control vector."""
        ca = require_casadi()
        _, F, _ = self.split_control(u)
        out, k = {}, 0
        for c in self.contacts:
            comps = [0.0, 0.0, 0.0]
            for a in c.axes:
                comps[_AXES[a]] = F[k]
                k += 1
            out[c.label] = ca.vertcat(*comps)
        return out

    def f_ext(self, q, u):
        """External spatial forces (n_bodies, 6) of the contact forces (world, about the origin)."""
        ca = require_casadi()
        kind = ca.MX if isinstance(q, ca.MX) else ca.SX if isinstance(q, ca.SX) else ca.DM
        rows = [kind.zeros(1, 6) for _ in range(self.model.n_bodies)]
        forces = self.contact_forces(u)
        for c in self.contacts:
            b = self.model.body_index(c.body)
            p = self.point_position(q, c.body, c.point)
            F = forces[c.label]
            rows[b] = rows[b] + ca.vertcat(ca.cross(p, F), F).T
        return ca.vertcat(*rows)

    @functools.cached_property
    def _contact_jacobian(self):
        ca = require_casadi()
        q = ca.SX.sym("q", self.nq)
        rows = []
        for c in self.contacts:
            J = ca.jacobian(self.point_position(q, c.body, c.point), q)
            anchored = any(c is a for a in self.anchored_contacts)
            rows += [J[_AXES[a], :] for a in (c.axes if anchored else c.axes[-1])]
        return ca.Function("contact_jacobian", [q], [ca.vertcat(*rows)])

    def contact_jacobian(self, q):
        """Jacobian of the held contact directions (numbers or symbols), shape (rows, nv).

        The rows of the path constraints: every axis of a body's first contact
        point, the normal axis of its further points (so that the rows of a
        rigid body are independent).
        """
        return self._contact_jacobian(q)

    def generalized_forces(self, x, u):
        """Joint torques acting on the skeleton: the torque controls (muscle phases add Rᵀ F)."""
        return self.split_control(u)[0]

    def accelerations(self, x, u):
        """``q̈`` of a state and control (ABA for explicit dynamics, the controls otherwise)."""
        q, qd = self.split_state(x)
        _, _, qdd = self.split_control(u)
        if qdd is not None:
            return qdd
        tau = self.generalized_forces(x, u)
        if self.contacts:
            return self.sd.forward_dynamics_ext(q, qd, tau, self.f_ext(q, u))
        return self.sd.forward_dynamics(q, qd, tau)

    def ode(self, x, u, p=None):
        """``ẋ = [q̇; q̈]`` (explicit in the controls for both dynamics forms)."""
        ca = require_casadi()
        _, qd = self.split_state(x)
        return ca.vertcat(qd, self.accelerations(x, u))

    def inverse_dynamics(self, q, qd, qdd, u=None):
        """Joint torques ``τ = M q̈ + h − Σ Jᵀ F`` (contact forces from `u` when given)."""
        if self.contacts and u is not None:
            return self.sd.inverse_dynamics_ext(q, qd, qdd, self.f_ext(q, u))
        return self.sd.inverse_dynamics(q, qd, qdd)

    # ---- costs
    def running_cost_terms(self, x, u, p, t) -> dict:
        """Weighted Lagrange integrands by objective name."""
        ca = require_casadi()
        q, _ = self.split_state(x)
        tau, _, _ = self.split_control(u)
        out = {}
        for o in self.objectives:
            if isinstance(o, Effort):
                idx = _names_to_index(self.model, o.coordinates, "Effort coordinates")
                idx = [i for i in idx if i in self.actuated] if o.coordinates is None else idx
                s = np.broadcast_to(np.asarray(o.scale, float), (self.nv,))
                e = sum((tau[i] / s[i]) ** o.exponent for i in idx) if idx else 0.0
                out[o.name] = o.weight * e
            elif isinstance(o, TrackCoordinates):
                idx = _names_to_index(self.model, o.coordinates, "TrackCoordinates coordinates")
                tr, v = _series(o.time, o.values, "TrackCoordinates values")
                v = v.reshape(v.shape[0], -1)
                if v.shape[1] != len(idx):
                    raise DataError(
                        f"TrackCoordinates values need {len(idx)} columns, got {v.shape[1]}"
                    )
                ref = _interp(tr, v, t)
                out[o.name] = o.weight * ca.sumsqr(ca.vertcat(*[q[i] for i in idx]) - ref)
            elif isinstance(o, TrackMarkers):
                total = 0.0
                for label, vals in o.values.items():
                    body, r = self._marker(label)
                    tr, v = _series(o.time, vals, f"TrackMarkers values[{label!r}]")
                    ref = _interp(tr, v.reshape(-1, 3), t)
                    total = total + ca.sumsqr(self.point_position(q, body, r) - ref)
                out[o.name] = o.weight * total
            elif isinstance(o, TrackGRF):
                tr, v = _series(o.time, o.values, "TrackGRF values")
                F = sum(self.contact_forces(u).values()) if self.contacts else ca.DM.zeros(3)
                out[o.name] = o.weight * ca.sumsqr(F - _interp(tr, v.reshape(-1, 3), t))
            elif isinstance(o, CustomCost) and o.kind == "lagrange":
                out[o.name] = o.weight * o.fun(x, u, p, t)
        return out

    def _marker(self, label):
        for b in self.model.bodies:
            if label in b.markers:
                return b.name, np.asarray(b.markers[label], float)
        raise DataError(f"TrackMarkers: the model has no marker {label!r}")

    def running_cost(self, x, u, p, t=0.0):
        """Sum of the weighted Lagrange integrands (scalar expression)."""
        return sum(self.running_cost_terms(x, u, p, t).values(), 0.0)

    def terminal_cost_terms(self, x0, xf, T, p) -> dict:
        out = {}
        for o in self.objectives:
            if isinstance(o, FinalTime):
                out[o.name] = o.weight * T
            elif isinstance(o, PeakTorque):
                out[o.name] = o.weight * self._param(p, f"peak:{o.name}")
            elif isinstance(o, CustomCost) and o.kind == "mayer":
                out[o.name] = o.weight * o.fun(x0, xf, T, p)
        return out

    def terminal_cost(self, x0, xf, T, p):
        """Sum of the weighted Mayer terms (scalar expression)."""
        return sum(self.terminal_cost_terms(x0, xf, T, p).values(), 0.0)

    # ---- constraints
    def path_constraints(self, x, u, p, t=0.0):
        """``(g, lb, ub, names)`` at one node: contacts, friction, clearance, ZMP, dynamics."""
        ca = require_casadi()
        q, qd = self.split_state(x)
        items = []
        forces = self.contact_forces(u)
        for c in self.contacts:
            pos = self.point_position(q, c.body, c.point)
            anchored = any(c is a for a in self.anchored_contacts)
            for j, a in enumerate(c.axes[:-1] if anchored else ()):
                target = (c.anchor[j] if c.anchor is not None
                          else self._param(p, f"anchor:{c.label}:{a}"))  # fmt: skip
                items.append((pos[_AXES[a]] - target, 0.0, 0.0, [f"{c.label} no slip {a}"]))
            n = _AXES[c.axes[-1]]
            items.append((pos[n], c.height, c.height, [f"{c.label} on ground"]))
            if c.friction is not None:
                F = forces[c.label]
                Fn = F[n]
                tang = [F[_AXES[a]] for a in c.axes[:-1]]
                if len(tang) == 1:
                    items.append(
                        (c.friction * Fn - tang[0], 0.0, np.inf, [f"{c.label} friction +"])
                    )
                    items.append(
                        (c.friction * Fn + tang[0], 0.0, np.inf, [f"{c.label} friction -"])
                    )
                elif len(tang) == 2:
                    g = c.friction**2 * Fn**2 - tang[0] ** 2 - tang[1] ** 2
                    items.append((g, 0.0, np.inf, [f"{c.label} friction cone"]))
        for k in self.constraints:
            if isinstance(k, NonPenetration):
                pos = self.point_position(q, k.body, k.point)
                nm = k.name or f"{k.body} above ground"
                items.append((pos[_AXES[k.axis]], k.height, np.inf, [nm]))
            elif isinstance(k, ZMPInSupport):
                items += self._zmp_items(x, u, k)
            elif isinstance(k, PathConstraint):
                g = ca.vertcat(k.fun(x, u, p, t))
                items.append((g, k.lb, k.ub, [f"{k.name}[{i}]" for i in range(g.shape[0])]))
        for o in self.objectives:
            if isinstance(o, PeakTorque):
                s = self._param(p, f"peak:{o.name}")
                tau, _, _ = self.split_control(u)
                for i in self.actuated:
                    nm = self.coordinate_names[i]
                    items.append((s - tau[i], 0.0, np.inf, [f"peak torque {nm} +"]))
                    items.append((s + tau[i], 0.0, np.inf, [f"peak torque {nm} -"]))
        if self.dynamics == "implicit":
            tau, _, qdd = self.split_control(u)
            res = self.inverse_dynamics(q, qd, qdd, u) - tau
            items.append((res, 0.0, 0.0, [f"dynamics {n}" for n in self.coordinate_names]))
        return _g(items)

    def _zmp_items(self, x, u, k):
        ca = require_casadi()
        q, qd = self.split_state(x)
        qdd = self.accelerations(x, u)
        r = self.sd.zmp()(q, qd, qdd)
        pts = [self.point_position(q, b, pt) for b, pt in k.points]
        items = []
        if len(pts) == 2:
            a, b = pts
            d = b - a
            L = ca.sqrt(ca.dot(d, d))
            items.append((ca.dot(r - a, d) / L, k.margin, np.inf, [f"{k.name} after first point"]))
            items.append((ca.dot(b - r, d) / L, k.margin, np.inf, [f"{k.name} before last point"]))
        else:
            for i in range(len(pts)):
                a, b = pts[i], pts[(i + 1) % len(pts)]
                d = b - a
                cz = d[0] * (r[1] - a[1]) - d[1] * (r[0] - a[0])
                L = ca.sqrt(d[0] ** 2 + d[1] ** 2)
                items.append((cz / L, k.margin, np.inf, [f"{k.name} inside edge {i}"]))
        return items

    def boundary_constraints(self, x0, xf, T, p, *, u0=None, uf=None, qdd0=None, qddf=None):
        """``(g, lb, ub, names)``: the ``initial``/``final`` values and user constraints.

        Parameters
        ----------
        x0, xf : first and last states (nx,)
        T, p : duration and parameters
        u0, uf : first and last controls (nu,), optional
            Needed by ``"qdd"`` boundary values: the accelerations are
            :meth:`accelerations` ``(x0, u0)`` and ``(xf, uf)``.
        qdd0, qddf : first and last accelerations (nv,), optional
            Used instead of ``accelerations(x, u)`` when a transcription knows
            them directly (the second derivative of the B-spline coordinates).
        """
        ca = require_casadi()
        items = []
        ends = (("initial", self.initial, x0, u0, qdd0), ("final", self.final, xf, uf, qddf))
        for which, spec, x, u, a in ends:
            for key, (idx, val) in spec.items():
                if key == "qdd":
                    if a is None:
                        if u is None:
                            raise DataError(
                                f"phase '{self.name}': `{which}['qdd']` needs the {which} "
                                "controls: pass u0=/uf= (or qdd0=/qddf=) to boundary_constraints"
                            )
                        a = self.accelerations(x, u)
                    v_all, off = a, 0
                else:
                    v_all, off = x, (0 if key == "q" else self.nq)
                for i, v in zip(idx, val, strict=True):
                    nm = f"{self.name} {which} {key}:{self.coordinate_names[i]}"
                    items.append((v_all[off + i], v, v, [nm]))
        for k in self.constraints:
            if isinstance(k, BoundaryConstraint):
                g = ca.vertcat(k.fun(x0, xf, T, p))
                items.append((g, k.lb, k.ub, [f"{k.name}[{i}]" for i in range(g.shape[0])]))
        return _g(items)

    def node_terms(self, t, X, U, p):
        """Grid-wide terms ``(costs, (g, lb, ub, names))``: :class:`Jerk`, :class:`Waypoint`.

        Parameters
        ----------
        t : sequence of node times (numbers or expressions), length n
        X, U : casadi matrices (nx, n), (nu, n)
        p : parameters
        """
        ca = require_casadi()
        costs, items = {}, []
        n = X.shape[1]
        for o in self.objectives:
            if isinstance(o, Jerk):
                idx = _names_to_index(self.model, o.coordinates, "Jerk coordinates")
                acc = [self.accelerations(X[:, k], U[:, k]) for k in range(n)]
                total = 0.0
                for k in range(n - 1):
                    h = t[k + 1] - t[k]
                    d = ca.vertcat(*[(acc[k + 1][i] - acc[k][i]) for i in idx]) / h
                    total = total + ca.sumsqr(d) * h
                costs[o.name] = o.weight * total
            elif isinstance(o, ControlRate):
                names = self.control_names
                pre = tuple(o.controls) if o.controls is not None else ("",)
                idx = [i for i, nm in enumerate(names) if nm.startswith(pre)]
                if not idx:
                    raise DataError(f"ControlRate: no control starts with {list(pre)}; "
                                    f"the phase's controls are {names}")  # fmt: skip
                total = 0.0
                for k in range(n - 1):
                    h = t[k + 1] - t[k]
                    d = ca.vertcat(*[U[i, k + 1] - U[i, k] for i in idx]) / o.scale
                    total = total + ca.sumsqr(d) / h
                costs[o.name] = o.weight * total
        for k in self.constraints:
            if isinstance(k, Waypoint):
                if self.free_duration:
                    raise DataError(f"phase '{self.name}': a Waypoint needs a fixed duration")
                tn = np.array([float(ti) for ti in t])
                j = int(np.clip(np.searchsorted(tn, k.time) - 1, 0, n - 2))
                h = tn[j + 1] - tn[j]
                s = (k.time - tn[j]) / h
                h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
                h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
                idx = _names_to_index(self.model, list(k.values), "Waypoint values")
                for i, v in zip(idx, k.values.values(), strict=True):
                    qi = (h00 * X[i, j] + h10 * h * X[self.nq + i, j] + h01 * X[i, j + 1]
                          + h11 * h * X[self.nq + i, j + 1])  # fmt: skip
                    nm = f"{k.name} {self.coordinate_names[i]} at {k.time:g} s"
                    items.append((qi, float(v), float(v), [nm]))
        return costs, _g(items)

    # ---- guess
    def initial_guess(self, t):
        """Default guess at node times `t` (n,): ``(X (nx, n), U (nu, n), p (np,))``.

        States interpolate linearly from the ``initial`` to the ``final``
        values (the middle of finite bounds, else 0, where not given);
        torques are zero, normal contact forces share the body weight.
        """
        t = np.asarray(t, float)
        s = (t - t[0]) / max(t[-1] - t[0], 1e-300)
        lo, hi = self.state_bounds()
        both = np.isfinite(lo) & np.isfinite(hi)
        mid = np.where(both, 0.5 * (np.where(both, lo, 0.0) + np.where(both, hi, 0.0)), 0.0)
        mid = np.where(np.isfinite(lo) & ~np.isfinite(hi), lo, mid)
        mid = np.where(~np.isfinite(lo) & np.isfinite(hi), hi, mid)
        x0, xf = mid.copy(), mid.copy()
        for spec, x in ((self.initial, x0), (self.final, xf)):
            for key, (idx, val) in spec.items():
                if key == "qdd":
                    continue
                off = 0 if key == "q" else self.nq
                x[[off + i for i in idx]] = val
        for key in ("q", "qd"):  # a value given at one end only holds at both
            off = 0 if key == "q" else self.nq
            if key in self.initial and key not in self.final:
                idx, val = self.initial[key]
                xf[[off + i for i in idx]] = val
            if key in self.final and key not in self.initial:
                idx, val = self.final[key]
                x0[[off + i for i in idx]] = val
        X = x0[:, None] + (xf - x0)[:, None] * s[None, :]
        U = np.zeros((self.nu, t.size))
        if self.contacts:
            w = self.model.total_mass * np.linalg.norm(self.model.gravity) / len(self.contacts)
            k = self.nv
            for c in self.contacts:
                U[k + len(c.axes) - 1] = w
                k += len(c.axes)
        lo, hi = self.control_bounds()
        U = np.clip(U, lo[:, None], hi[:, None])
        X = np.clip(X, *(b[:, None] for b in self.state_bounds()))
        return X, U, self.parameter_guess(X[: self.nq, 0])

    def parameter_guess(self, q0, p=None):
        """Parameter guess: contact anchors where the points are at ``q0``; `p` (or 0) elsewhere."""
        p = np.zeros(self.np) if p is None else np.array(p, float)
        for c in self.anchored_contacts:
            if c.anchor is None:
                pos = np.asarray(self.point_position(np.asarray(q0, float), c.body, c.point))
                pos = pos.astype(float).ravel()
                for a in c.axes[:-1]:
                    p[self.parameter_names.index(f"anchor:{c.label}:{a}")] = pos[_AXES[a]]
        return p


# --------------------------------------------------------------------------- links & problem


@dataclass(frozen=True)
class Continuity:
    """Phase link: the next phase starts where the previous one ends (``x⁺ = x⁻``)."""

    def constraints(self, a: Phase, b: Phase, xf, x0, name):
        return _g([(x0 - xf, 0.0, 0.0, [f"{name} continuity {s}" for s in b.state_names])])


@dataclass(frozen=True)
class Impact:
    """Phase link with a rigid impact of the next phase's contact points (Felis 2015, §5).

    ``q⁺ = q⁻``; ``M (q̇⁺ − q̇⁻) = Jᵀ Λ`` and ``J q̇⁺ = 0`` with ``J`` the
    Jacobian of the next phase's contact points along their axes, so
    ``q̇⁺ = q̇⁻ − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁻¹ J q̇⁻``. `weight` adds ``w ΛᵀΛ`` to
    the cost (Chung's impulse term, eq 7.17).

    Examples
    --------
    >>> Impact(weight=1e-3).weight  # w ΛᵀΛ added to the cost
    0.001
    """

    weight: float = 0.0

    def post_velocity(self, b: Phase, q, qd):
        """``(q̇⁺, Λ)`` after the impact of phase `b`'s contact points at ``(q, q̇⁻)``."""
        ca = require_casadi()
        if not b.contacts:
            raise DataError(f"an Impact into phase '{b.name}' needs contacts in that phase")
        J = b.contact_jacobian(q)
        M = b.sd.mass_matrix(q)
        MiJt = ca.solve(M, J.T)
        lam = -ca.solve(ca.mtimes(J, MiJt), ca.mtimes(J, qd))
        return qd + ca.mtimes(MiJt, lam), lam

    def constraints(self, a: Phase, b: Phase, xf, x0, name):
        qf, qdf = a.split_state(xf)
        q0, qd0 = b.split_state(x0)
        qd_plus, _ = self.post_velocity(b, qf, qdf)
        ns = b.state_names
        return _g(
            [
                (q0 - qf, 0.0, 0.0, [f"{name} impact {s}" for s in ns[: b.nq]]),
                (qd0 - qd_plus, 0.0, 0.0, [f"{name} impact {s}" for s in ns[b.nq :]]),
            ]
        )

    def cost(self, a: Phase, b: Phase, xf):
        ca = require_casadi()
        if not self.weight:
            return 0.0
        q, qd = a.split_state(xf)
        _, lam = self.post_velocity(b, q, qd)
        return self.weight * ca.sumsqr(lam)


@dataclass(frozen=True)
class Periodic:
    """The last phase ends in the first phase's initial state (except `exclude` coordinates)."""

    exclude: tuple = ()


@dataclass(frozen=True)
class Symmetry:
    """Half-cycle symmetry: the initial state is the mirror of the final one (Chung 7.33–7.34).

    ``x_i(0) = s_i x_{π(i)}(T)`` where `pairs` swap left/right coordinates
    (``π``) and `negate` flips signs (``s_i = −1``, e.g. a lateral lean);
    `exclude` coordinates are free (e.g. the forward position) and `shift`
    adds an offset: ``{name: value}``. Applied to ``q`` and ``q̇``.

    Examples
    --------
    >>> s = Symmetry(pairs=[("hip_r", "hip_l"), ("knee_r", "knee_l")], exclude=["pelvis_tx"])
    >>> s.pairs[0]
    ('hip_r', 'hip_l')
    """

    pairs: tuple = ()
    negate: tuple = ()
    exclude: tuple = ()
    shift: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AverageSpeed:
    """``(q_c(end) − q_c(start)) / Σ T = speed`` for a translation coordinate (m/s).

    Examples
    --------
    >>> AverageSpeed("pelvis_tx", 1.2).speed
    1.2
    """

    coordinate: str
    speed: float


class OptimalControlProblem:
    """Phases joined by links, with periodicity, symmetry and whole-problem constraints.

    Parameters
    ----------
    phases : Phase or sequence of Phase
    links : sequence of Continuity or Impact, optional
        One per junction (default: continuity everywhere).
    periodic : bool or Periodic, optional
        The last state equals the first (True: all states).
    symmetric : Symmetry, optional
        The first state is the mirror of the last (half cycle of a gait).
    constraints : sequence of AverageSpeed, optional
    per_duration : bool, optional
        Divide the objective by the total duration ``Σ T`` (the mean rate of
        effort; with a prescribed :class:`AverageSpeed` the effort per
        distance travelled, as in Falisse et al. 2019), so that free
        durations are not shrunk only to shorten the integrals.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> OptimalControlProblem(ph).n_phases
    1
    """

    def __init__(
        self, phases, *, links=None, periodic=False, symmetric=None, constraints=(),
        per_duration=False,
    ):  # fmt: skip
        phases = [phases] if isinstance(phases, Phase) else list(phases)
        if not phases or not all(isinstance(p, Phase) for p in phases):
            raise DataError("`phases` must be a Phase or a non-empty list of Phase objects")
        names = [p.name for p in phases]
        if len(set(names)) != len(names):
            for i, p in enumerate(phases):
                p.name = f"{p.name}{i}" if names.count(p.name) > 1 else p.name
        self.phases = phases
        n_links = len(phases) - 1
        links = [Continuity()] * n_links if links is None else list(links)
        if len(links) != n_links:
            raise DataError(
                f"`links` needs {n_links} entries (one per phase junction), got {len(links)}"
            )
        for k in links:
            if not isinstance(k, (Continuity, Impact)):
                raise DataError(f"`links` must hold Continuity or Impact objects, got {k!r}")
        self.links = links
        self.periodic = Periodic() if periodic is True else (periodic or None)
        if self.periodic is not None and not isinstance(self.periodic, Periodic):
            raise DataError(f"`periodic` must be a bool or a Periodic, got {periodic!r}")
        if symmetric is not None and not isinstance(symmetric, Symmetry):
            raise DataError(f"`symmetric` must be a Symmetry, got {symmetric!r}")
        self.symmetric = symmetric
        self.per_duration = bool(per_duration)
        self.constraints = tuple(constraints)
        for c in self.constraints:
            if not isinstance(c, AverageSpeed):
                raise DataError(f"problem `constraints` must hold AverageSpeed objects, got {c!r}")

    @property
    def n_phases(self) -> int:
        return len(self.phases)

    def __repr__(self) -> str:
        return f"OptimalControlProblem(phases={[p.name for p in self.phases]})"

    def global_constraints(self, x0s, xfs, Ts, ps):
        """``(g, lb, ub, names)`` joining the phases: links, periodicity, symmetry, speed."""
        items = []
        costs = {}
        for i, link in enumerate(self.links):
            a, b = self.phases[i], self.phases[i + 1]
            items.append(link.constraints(a, b, xfs[i], x0s[i + 1], f"{a.name}->{b.name}"))
            if isinstance(link, Impact) and link.weight:
                costs[f"impact {a.name}->{b.name}"] = link.cost(a, b, xfs[i])
        first = self.phases[0]
        x0, xf = x0s[0], xfs[-1]
        if self.periodic is not None:
            skip = set(
                _names_to_index(first.model, list(self.periodic.exclude), "Periodic exclude")
            )
            rows = [i for i in range(first.nx) if i % first.nq not in skip or first.nq == 0]
            items.append(_g([(x0[i] - xf[i], 0.0, 0.0, [f"periodic {first.state_names[i]}"])
                             for i in rows]))  # fmt: skip
        if self.symmetric is not None:
            items.append(self._symmetry(first, x0, xf))
        for c in self.constraints:
            i = _names_to_index(first.model, [c.coordinate], "AverageSpeed coordinate")[0]
            total = sum(Ts)
            g = xf[i] - x0[i] - c.speed * total
            items.append(_g([(g, 0.0, 0.0, [f"average speed {c.coordinate}"])]))
        ca = require_casadi()
        if not items:
            return costs, (ca.SX(0, 1), np.zeros(0), np.zeros(0), [])
        g = ca.vertcat(*[x[0] for x in items])
        lb = np.concatenate([x[1] for x in items])
        ub = np.concatenate([x[2] for x in items])
        return costs, (g, lb, ub, [n for x in items for n in x[3]])

    def symmetry_map(self, phase: Phase):
        """``(perm, sign, free)`` of the coordinates for :class:`Symmetry`."""
        s = self.symmetric
        m = phase.model
        n = m.nv
        perm, sign = np.arange(n), np.ones(n)
        for a, b in s.pairs:
            ia, ib = _names_to_index(m, [a, b], "Symmetry pairs")
            perm[ia], perm[ib] = ib, ia
        for nm in s.negate:
            sign[_names_to_index(m, [nm], "Symmetry negate")[0]] = -1.0
        free = set(_names_to_index(m, list(s.exclude), "Symmetry exclude"))
        shift = np.zeros(n)
        for nm, v in s.shift.items():
            shift[_names_to_index(m, [nm], "Symmetry shift")[0]] = float(v)
        return perm, sign, free, shift

    def _symmetry(self, phase, x0, xf):
        perm, sign, free, shift = self.symmetry_map(phase)
        items = []
        nq = phase.nq
        for i in range(phase.nv):
            if i in free:
                continue
            nm = phase.coordinate_names[i]
            items.append((x0[i] - sign[i] * xf[perm[i]] - shift[i], 0.0, 0.0, [f"symmetry q:{nm}"]))
            items.append((x0[nq + i] - sign[i] * xf[nq + perm[i]], 0.0, 0.0, [f"symmetry qd:{nm}"]))
        return _g(items)


def check_problem(problem) -> OptimalControlProblem:
    """``problem`` as an OptimalControlProblem (a single Phase is wrapped)."""
    if isinstance(problem, Phase):
        return OptimalControlProblem(problem)
    if not isinstance(problem, OptimalControlProblem):
        raise DataError(
            f"Expected an OptimalControlProblem or a Phase, got {type(problem).__name__}"
        )
    return problem
