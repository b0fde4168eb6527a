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

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, as_positive_float
from ahbm.dynamics.velocity_constraints import VelocityConstraint
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.marker_model import joint_bounds
from ahbm.kinematics.tree import Model
from ahbm.optimize.constraints import (
    _CONSTRAINTS,
    BoundaryConstraint,
    ContactPoint,
    NonPenetration,
    PathConstraint,
    Waypoint,
    ZMPInSupport,
)
from ahbm.optimize.objectives import (
    _OBJECTIVES,
    ControlRate,
    CustomCost,
    Effort,
    FinalTime,
    Jerk,
    PeakTorque,
    TrackCoordinates,
    TrackGRF,
    TrackMarkers,
)
from ahbm.optimize.problem_helpers import _AXES, _bounds_pair, _g, _interp, _names_to_index, _series
from ahbm.optimize.symbolic import require_casadi, symbolic_dynamics
from ahbm.optimize.velocity_constraints import (
    _check,
    _constraint_force,
    _multiplier_names,
    _residual_items,
    _warn_unregularized,
)

__all__ = ["Phase"]


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
        :func:`ahbm.kinematics.marker_model.joint_bounds`), velocities and torques
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
        :class:`PathConstraint`, :class:`BoundaryConstraint`, :class:`Waypoint`,
        and velocity-level constraints
        :class:`~ahbm.dynamics.velocity_constraints.VelocityConstraint`
        (their multipliers become controls,
        :mod:`ahbm.optimize.velocity_constraints`).
    initial, final : dict, optional
        Boundary conditions: ``{"q": array or {name: value}, "qd": ..., "qdd": ...,
        "F": {"<contact>:<axis>": value}}`` (``"qdd"``: the accelerations
        :meth:`accelerations` at the first/last grid point, rad/s² or m/s²;
        ``"F"``: contact forces of the first/last controls, N, e.g. a foot
        that lands and lifts off unloaded: ``{"F": {"toe_r:z": 0.0}}``).
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
            if not isinstance(k, (*_CONSTRAINTS, VelocityConstraint)):
                raise DataError(
                    f"phase '{self.name}': {k!r} is not a constraint; use one of "
                    f"{[c.__name__ for c in (*_CONSTRAINTS, VelocityConstraint)]} (contact "
                    "points go in `contacts`)"
                )
        self.velocity_constraints = _check(self.constraints, model, self.name)
        names = [o.name for o in self.objectives]
        if len(set(names)) != len(names):
            raise DataError(f"phase '{self.name}': objective names must be unique, got {names}")
        _warn_unregularized(self)
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
        """Number of force controls: contact forces, then velocity-constraint multipliers."""
        return sum(len(c.axes) for c in self.contacts) + sum(
            m for _, m in self.velocity_constraints
        )

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
        out += _multiplier_names(self.velocity_constraints)
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
        if not isinstance(spec, dict) or not set(spec) <= {"q", "qd", "qdd", "F"}:
            raise DataError(
                f"`{what}` must be a dict with keys 'q', 'qd', 'qdd' and/or 'F', got {spec!r}"
            )
        out = {}
        for key, val in spec.items():
            if key == "F":
                names = [f"{c.label}:{a}" for c in self.contacts for a in c.axes]
                ok = isinstance(val, dict)
                bad = [k for k in val if k not in names] if ok else [val]
                if bad:
                    raise DataError(
                        f"`{what}['F']` must map contact forces '<contact>:<axis>' of this "
                        f"phase ({names}) to values; unknown: {bad}"
                    )
                out[key] = ([names.index(k) for k in val],
                            np.array([float(v) for v in val.values()]))  # fmt: skip
            elif isinstance(val, dict):
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
        n_lam = len(_multiplier_names(self.velocity_constraints))
        lo.append(np.full(n_lam, -np.inf))
        hi.append(np.full(n_lam, np.inf))
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
        if self.velocity_constraints:  # + Aᵀλ
            tau = tau + _constraint_force(self, q, u)
        if self.contacts:
            return self.sd.forward_dynamics_ext(q, qd, tau, self.f_ext(q, u))
        return self.sd.forward_dynamics(q, qd, tau)

    def ode(self, x, u, p=None):
        """``ẋ = [q̇; q̈]`` (explicit in the controls for both dynamics forms)."""
        ca = require_casadi()
        _, qd = self.split_state(x)
        return ca.vertcat(qd, self.accelerations(x, u))

    def inverse_dynamics(self, q, qd, qdd, u=None):
        """Joint torques ``τ = M q̈ + h − Σ Jᵀ F − Aᵀλ`` (forces and λ from `u` when given)."""
        if self.contacts and u is not None:
            tau = self.sd.inverse_dynamics_ext(q, qd, qdd, self.f_ext(q, u))
        else:
            tau = self.sd.inverse_dynamics(q, qd, qdd)
        if self.velocity_constraints and u is not None:
            tau = tau - _constraint_force(self, q, u)
        return tau

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
        items += _residual_items(self, q, qd, t)  # velocity constraints: A q̇ − b = 0
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
                elif key == "F":
                    if u is None:
                        raise DataError(
                            f"phase '{self.name}': `{which}['F']` needs the {which} controls: "
                            "pass u0=/uf= to boundary_constraints"
                        )
                    _, forces, _ = self.split_control(u)
                    labels = [f"{c.label}:{a}" for c in self.contacts for a in c.axes]
                    for i, v in zip(idx, val, strict=True):
                        items.append((forces[i], v, v, [f"{self.name} {which} F:{labels[i]}"]))
                    continue
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
                if key in ("qdd", "F"):
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
