"""Forward simulation of multibody models with constraints, force elements and events.

:func:`simulate` integrates the equations of motion

``q̇ = T(q) v``,  ``H(q) v̇ + C(q, v) = τ + Σ τ_elements + Gᵀλ``,  ``G v̇ = γ``

(AHBM eqs 4.5–4.6) with the solver classes behind
:func:`scipy.integrate.solve_ivp` (``RK45``, ``RK23``, ``DOP853``, ``Radau``,
``BDF``, ``LSODA``). The solver is stepped one accepted step at a time so
that, after every step, the state is projected onto the position and velocity
constraint manifolds (AHBM eqs 4.7–4.8, after Lubich's MEXX) and quaternions
are renormalized. Events (contact made or broken, joint limits, user
functions) are located on the solver's dense output; an event can switch
the active constraint set and apply an impact (Felis eq 3.12), after which
the integration continues (multi-phase simulation).
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._engine import jit_constrained as _jc
from ahbm._internal.deprecation import renamed_kwargs, warn_deprecated
from ahbm._internal.validation import (
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    callback_result,
    check_model,
)
from ahbm.dynamics.constrained import _constrained_fd, _LeanConstrained
from ahbm.dynamics.forces import ForceElement, StatefulForceElement, total_generalized_force
from ahbm.dynamics.forward import aba
from ahbm.dynamics.simulation_events import (
    _KEEP,
    SimulationEvent,
    contact_release_event,
    coordinate_event,
    point_height_event,
)
from ahbm.dynamics.simulation_result import SimulationResult
from ahbm.errors import AhbmWarning, DataError, SimulationError
from ahbm.kinematics.tree import FREE, SPHERICAL, Model

__all__ = [
    "SimulationEvent",
    "SimulationResult",
    "simulate",
    "q_rate",
    "point_height_event",
    "coordinate_event",
    "contact_release_event",
]

# scipy.integrate classes by name; scipy.integrate (about 0.3 s) is imported on the
# first simulation, not with ahbm
_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def __getattr__(name: str):
    if name == "Event":  # the 0.1 name of SimulationEvent
        warn_deprecated(
            "ahbm.dynamics.Event",
            "`ahbm.dynamics.Event` is deprecated and will be removed in ahbm 0.3; use "
            "`ahbm.dynamics.SimulationEvent` (`ahbm.types.Event` is the event of a recording)",
        )
        return SimulationEvent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


def _quat_slices(model: Model):
    out = []
    for i, code in enumerate(model.joint_codes):
        if code in (SPHERICAL, FREE):
            qk = model.q_index[i] + (3 if code == FREE else 0)
            vk = model.v_index[i] + (3 if code == FREE else 0)
            out.append((qk, vk))
    return out


def q_rate(model: Model, q, qd) -> np.ndarray:
    """Time derivative of the coordinates, ``q̇ = T(q) v``, shape (..., nq).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
        Generalized velocities.

    Notes
    -----
    For quaternion joints ``Q̇ = ½ Q ⊗ (ω, 0)`` with the body-frame angular
    velocity (AHBM eq 2.16); all other coordinates have ``q̇ = v``.

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> q_rate(m, [0, 0, 0, 1.0], [0, 0, 2.0]) + 0.0
    array([0., 0., 1., 0.])
    """
    check_model(model)
    q = as_float_array(q, "q")
    v = as_float_array(qd, "qd")
    if q.shape[-1:] != (model.nq,) or v.shape[-1:] != (model.nv,):
        raise DataError(
            f"Expected `q` (..., {model.nq}) and `qd` (..., {model.nv}), got {q.shape} and "
            f"{v.shape}"
        )
    try:
        batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    except ValueError as err:
        raise DataError(f"batch shapes of `q` {q.shape} and `qd` {v.shape} differ") from err
    out = np.empty(batch + (model.nq,))
    qs = _quat_slices(model)
    if not qs:
        out[...] = v
        return out
    for i in range(model.n_bodies):
        qi, vi, n = model.q_index[i], model.v_index[i], model.joint_nv[i]
        if model.joint_codes[i] == SPHERICAL:
            continue
        n = 3 if model.joint_codes[i] == FREE else n
        out[..., qi : qi + n] = v[..., vi : vi + n]
    for qk, vk in qs:
        x, y, z, w = (q[..., qk + j] for j in range(4))
        wx, wy, wz = (v[..., vk + j] for j in range(3))
        out[..., qk] = 0.5 * (w * wx + y * wz - z * wy)
        out[..., qk + 1] = 0.5 * (w * wy + z * wx - x * wz)
        out[..., qk + 2] = 0.5 * (w * wz + x * wy - y * wx)
        out[..., qk + 3] = -0.5 * (x * wx + y * wy + z * wz)
    return out


def _normalize_quats(model, q, qs):
    if not qs:
        return q
    q = q.copy()
    for qk, _ in qs:
        q[..., qk : qk + 4] /= np.linalg.norm(q[..., qk : qk + 4], axis=-1, keepdims=True)
    return q


def _as_cset(constraints, model):
    if constraints is None or isinstance(constraints, str) and constraints == _KEEP:
        return constraints
    from ahbm.dynamics.constraints import ConstraintSet

    cset = constraints if isinstance(constraints, ConstraintSet) else ConstraintSet(constraints)
    cset.validate(model)
    return cset if len(cset) else None


def _sim_error(message, t, result):
    """SimulationError carrying the time reached and the partial result."""
    err = SimulationError(message)
    err.t = t
    err.result = result
    return err


class _Abort(Exception):
    """Internal: stop stepping with an error message."""


class _System:
    """Right-hand side of one phase: y = [q, v, s] -> [q̇, v̇, ṡ] (s: force-element states)."""

    def __init__(self, model, tau, forces, cset, solver, baumgarte, stateful=()):
        self.model, self.tau, self.forces = model, tau, forces
        self.stateful = stateful
        self.slices = _state_slices(stateful)
        self.ns = sum(f.n_states for f in stateful)
        self.cset, self.solver, self.baumgarte = cset, solver, baumgarte
        self.bg = None if baumgarte is None else tuple(float(x) for x in baumgarte)
        self.nq, self.nv = model.nq, model.nv
        self.nfev = 0
        # single-state fast path of the constrained dynamics, planned once per phase
        self.lean = _LeanConstrained.build(model, cset, solver, self.bg)
        self.rate_plan = _jc.rate_plan(model)

    def tau_total(self, t, q, qd):
        tau = self.tau
        if callable(tau):
            val = callback_result(tau(t, q, qd), "tau")
            if val.shape != (self.nv,):
                raise DataError(f"`tau` function must return shape ({self.nv},), got {val.shape}")
            tau = val
        if self.forces:
            tau = tau + total_generalized_force(self.model, self.forces, q, qd, t=t)
        return tau

    def state_forces(self, t, q, qd, s):
        """Generalized force and state derivatives of the stateful elements."""
        tau = np.zeros(self.nv)
        sdot = np.empty(self.ns)
        for f, sl in zip(self.stateful, self.slices, strict=True):
            tau_f, sdot_f = f.rates(self.model, q, qd, s[sl], t=t)
            tau_f = np.asarray(tau_f, dtype=float)
            sdot_f = np.asarray(sdot_f, dtype=float)
            if tau_f.shape != (self.nv,) or sdot_f.shape != (sl.stop - sl.start,):
                raise DataError(
                    f"force element {f.name!r}: rates() must return shapes ({self.nv},) and "
                    f"({sl.stop - sl.start},), got {tau_f.shape} and {sdot_f.shape}"
                )
            tau = tau + tau_f
            sdot[sl] = sdot_f
        return tau, sdot

    def accelerations(self, t, q, qd, s=None):
        return self.evaluate(t, q, qd, s)[:2]

    def evaluate(self, t, q, qd, s=None):
        """(q̈, λ, ṡ) at one state."""
        tau = self.tau_total(t, q, qd)
        if self.stateful:
            tau_s, sdot = self.state_forces(t, q, qd, s)
            tau = tau + tau_s
        else:
            sdot = np.zeros(0)
        if not np.all(np.isfinite(tau)):
            raise SimulationError(
                f"non-finite generalized forces (tau or force elements) at t = {t:.9g} s"
            )
        if self.cset is None:
            return aba(self.model, q, qd, tau), np.zeros(0), sdot
        out = None if self.lean is None else self.lean(t, q, qd, tau)
        if out is not None:
            return out[0], out[1], sdot
        qdd, lam = _constrained_fd(self.model, q, qd, tau, self.cset, t, self.solver, self.bg)
        return qdd[0], lam[0], sdot

    def __call__(self, t, y):
        self.nfev += 1
        nq, nv = self.nq, self.nv
        q, v, s = y[:nq], y[nq : nq + nv], y[nq + nv :]
        if not np.all(np.isfinite(y)):
            raise SimulationError(f"the state became non-finite at t = {t:.6g} s")
        qdd, _, sdot = self.evaluate(t, q, v, s)
        if not np.all(np.isfinite(qdd)):
            raise SimulationError(f"non-finite accelerations at t = {t:.6g} s")
        if not np.all(np.isfinite(sdot)):
            raise SimulationError(f"non-finite force-element state derivatives at t = {t:.6g} s")
        out = np.empty(nq + nv + self.ns)
        _jc.q_rate_kernel(*self.rate_plan, q, v, out)
        out[nq : nq + nv] = qdd
        out[nq + nv :] = sdot
        return out


def _state_slices(stateful):
    """Slices of each stateful element's block in the force-state vector."""
    out, k = [], 0
    for f in stateful:
        out.append(slice(k, k + f.n_states))
        k += f.n_states
    return out


def _patchable(solver) -> bool:
    """Whether the solver's state can be replaced in place after a projection."""
    from scipy import integrate

    return isinstance(
        solver,
        (integrate.RK23, integrate.RK45, integrate.DOP853, integrate.Radau, integrate.BDF),
    )


def _set_state(solver, y, fun):
    """Replace the state of a scipy OdeSolver after projection; False if impossible."""
    from scipy import integrate

    if isinstance(solver, (integrate.RK23, integrate.RK45, integrate.DOP853, integrate.Radau)):
        solver.y = y
        solver.f = fun(solver.t, y)
        return True
    if isinstance(solver, integrate.BDF):
        solver.y = y
        solver.D[0] = y
        return True
    return False


# ----------------------------------------------------------------------------
# simulate
# ----------------------------------------------------------------------------


def simulate(
    model: Model,
    t_span,
    q0,
    qd0,
    *,
    tau=None,
    forces=(),
    constraints=None,
    events=(),
    method="RK45",
    rtol: float = 1e-6,
    atol: float = 1e-8,
    max_step: float = np.inf,
    first_step: float | None = None,
    t_eval=None,
    project: bool = True,
    constraint_method: str | None = None,
    baumgarte=None,
    projection_tol: float = 1e-12,
    max_events: int = 1000,
    **deprecated,
) -> SimulationResult:
    """Simulate a multibody model forward in time.

        Parameters
        ----------
        model : Model
        t_span : (float, float)
            Start and end time, s (end > start).
        q0 : array_like, shape (nq,)
            Initial coordinates.
        qd0 : array_like, shape (nv,), or None
            Initial generalized velocities; None means zeros (at rest).
        tau : None, array_like (nv,) or callable, optional
            Applied generalized forces: zero, constant, or ``tau(t, q, qd) -> (nv,)``.
        forces : sequence of ForceElement, optional
            Force elements (:mod:`ahbm.dynamics.forces`). Elements with internal
            states (:class:`~ahbm.dynamics.StatefulForceElement`, e.g. the
            muscles of :class:`ahbm.muscles.MuscleActuators`) have their states
            integrated with ``q`` and ``q̇``; they need distinct names.
        constraints : ConstraintSet or list of constraints, optional
            Initially active constraints (:mod:`ahbm.dynamics.constraints`).
            None (the default): the model's own ``model.constraints`` (read from
            its model file); ``[]``: no constraints.
        events : sequence of SimulationEvent, optional
            Events located during the integration (:class:`SimulationEvent`).
        method : str or scipy OdeSolver class
            ``"RK45"``, ``"RK23"``, ``"DOP853"`` (non-stiff), ``"Radau"``,
            ``"BDF"`` (stiff), ``"LSODA"``.
        rtol, atol : float
            Integrator tolerances; `atol` may also give one value per state
            (``nq + nv`` and then the force-element states).
        max_step : float, optional
            Largest step, s.
        first_step : float, optional
            Initial step, s (chosen by the solver by default).
        t_eval : array_like, optional
            Output times (within ``t_span``, increasing); default: every accepted step.
        project : bool, optional
            Project onto the constraint manifolds after every accepted step (AHBM
            eqs 4.7–4.8); quaternions are renormalized. The initial state is always
            projected when constraints are given.
        constraint_method : {"direct", "range_space", "null_space"}, optional
            How the constrained forward dynamics is solved, the ``method`` of
            :func:`~ahbm.dynamics.constrained.constrained_forward_dynamics`
            (default ``"direct"``). ``solver=`` is its deprecated 0.1 name.
        baumgarte : (float, float), optional
            Baumgarte stabilization parameters ``(α, β)`` (1/s); off by default.
        projection_tol : float, optional
            Tolerance of the position projection (max-norm of ``g``).
        max_events : int, optional
            Stop with an error after this many events (guards against chattering).

        Returns
        -------
        SimulationResult

        Raises
        ------
        DataError
            Bad shapes, times or options.
        ModelError
            A force element or constraint does not fit the model.
        SimulationError
            Step-size underflow, a singular or inconsistent constraint system,
            non-finite states, or an initial state that cannot be projected onto
            the constraints. The exception has the attributes ``t`` (time reached)
            and ``result`` (the partial :class:`SimulationResult`, or None).

        Notes
        -----
        The state ``y = [q, v]`` obeys ``q̇ = T(q) v`` and the constrained
        dynamics ``H v̇ = τ − C + Gᵀλ``, ``G v̇ = γ`` (AHBM eqs 4.5–4.6). With
        stateful force elements the state is ``y = [q, v, s]``: each element's
        ``rates`` gives its generalized force and ``ṡ``; ``s`` is started from the
        elements' ``initial_state`` (after the initial projection), passes
        projections and event actions unchanged, is part of the event-location
        dense output and of the integrator's error control, and is returned in
        ``SimulationResult.force_states`` (event functions and actions see them with
    ``uses_states=True``). After
        each accepted step the positions are projected by the Newton iteration of
        AHBM eq 4.7 in the mass-matrix metric and the velocities by eq 4.8; the
        integrator continues from the projected state (its stored derivative is
        re-evaluated; for BDF the newest history entry is replaced; LSODA, whose
        state cannot be replaced, outputs projected states and is restarted from
        one when its own residuals exceed 1e-6). Events are located by root
        finding on the dense output of the step, as in :func:`scipy.integrate.solve_ivp`.

        Examples
        --------
        >>> from ahbm.models import double_pendulum_3d
        >>> m = double_pendulum_3d()
        >>> r = simulate(m, (0.0, 1.0), [0.3, 0, 0, 0], np.zeros(4), rtol=1e-8, atol=1e-10)
        >>> r.q.shape[1], r.status
        (4, 0)
    """
    if deprecated:
        if constraint_method is not None:
            deprecated["constraint_method"] = constraint_method
        deprecated = renamed_kwargs("simulate", deprecated, {"solver": "constraint_method"})
        constraint_method = deprecated.pop("constraint_method", None)
        if deprecated:
            raise TypeError(
                f"simulate() got an unexpected keyword argument {next(iter(deprecated))!r}"
            )
    if constraint_method is None:
        constraint_method = "direct"
    check_model(model)
    span = as_float_array(t_span, "t_span")
    if span.shape != (2,) or not span[1] > span[0]:
        raise DataError(f"`t_span` must be (t0, t_end) with t_end > t0, got {t_span!r}")
    t0, tf = float(span[0]), float(span[1])
    q0 = as_float_array(q0, "q0")
    qd0 = np.zeros(model.nv) if qd0 is None else as_float_array(qd0, "qd0")  # None: at rest
    if q0.shape != (model.nq,):
        raise DataError(f"Expected `q0` to have shape ({model.nq},), got {q0.shape}")
    if qd0.shape != (model.nv,):
        raise DataError(f"Expected `qd0` to have shape ({model.nv},), got {qd0.shape}")
    if tau is None:
        tau = np.zeros(model.nv)
    elif not callable(tau):
        tau = as_float_array(tau, "tau")
        if tau.shape != (model.nv,):
            raise DataError(f"Expected `tau` to have shape ({model.nv},), got {tau.shape}")
    if isinstance(forces, (str, bytes, dict)) or not hasattr(forces, "__iter__"):
        raise DataError(f"Expected `forces` to be a list of force elements, got {forces!r}")
    forces = tuple(forces)
    for f in forces:
        if not isinstance(f, ForceElement) and not hasattr(f, "generalized_force"):
            raise DataError(f"`forces` must contain force elements, got {type(f).__name__}")
        if hasattr(f, "validate"):
            f.validate(model)
    stateful = _check_stateful(forces)
    forces = tuple(f for f in forces if not isinstance(f, StatefulForceElement))
    ns = sum(f.n_states for f in stateful)
    if isinstance(events, (str, bytes, dict)) or not hasattr(events, "__iter__"):
        raise DataError(f"Expected `events` to be a list of SimulationEvent, got {events!r}")
    events = tuple(events)
    for ev in events:
        if not isinstance(ev, SimulationEvent):
            raise DataError(
                f"`events` must contain SimulationEvent objects, got {type(ev).__name__}"
            )
    from scipy import integrate

    if isinstance(method, str):
        if method not in _METHODS:
            raise DataError(f"`method` must be one of {sorted(_METHODS)}, got {method!r}")
        solver_cls = getattr(integrate, method)
    elif isinstance(method, type) and issubclass(method, integrate.OdeSolver):
        solver_cls = method
    else:
        raise DataError(f"`method` must be a name or an OdeSolver class, got {method!r}")
    if constraint_method not in ("direct", "range_space", "null_space"):
        raise DataError(
            "`constraint_method` must be 'direct', 'range_space' or 'null_space', got "
            f"{constraint_method!r}"
        )
    if t_eval is not None:
        t_eval = as_float_array(t_eval, "t_eval")
        if t_eval.ndim != 1 or np.any(np.diff(t_eval) <= 0):
            raise DataError("`t_eval` must be a 1-D array of strictly increasing times")
        if t_eval.size and (t_eval[0] < t0 - 1e-12 or t_eval[-1] > tf + 1e-12):
            raise DataError(f"`t_eval` must lie within t_span [{t0}, {tf}]")
    rtol = as_positive_float(rtol, "rtol")
    if np.ndim(atol) == 0:
        atol = as_positive_float(atol, "atol")
    else:
        atol = as_float_array(atol, "atol")
        if atol.shape != (model.nq + model.nv + ns,) or np.any(atol <= 0):
            raise DataError(
                f"Expected `atol` to be a positive number or {model.nq + model.nv + ns} positive "
                f"numbers (one per state: q, qd, then the {ns} force-element states), got "
                f"{atol!r}"
            )
    if not (isinstance(max_step, float) and max_step == np.inf):
        max_step = as_positive_float(max_step, "max_step", unit="s")
    if first_step is not None:
        first_step = as_positive_float(first_step, "first_step", unit="s")
    projection_tol = as_nonnegative_float(projection_tol, "projection_tol")
    max_events = as_int(max_events, "max_events", minimum=0)
    if baumgarte is not None:
        bg = as_float_array(baumgarte, "baumgarte")
        if bg.shape != (2,) or np.any(bg < 0):
            raise DataError(
                f"Expected `baumgarte` to be (alpha, beta) >= 0 (1/s, 1/s²), got {baumgarte!r}"
            )
    if constraints is None and model.constraints:
        constraints = model.constraints  # the model's own (constraints=[]: none)
    cset = _as_cset(constraints, model)
    event_sets = [_as_cset(ev.constraints, model) for ev in events]

    run = _Run(model, tau, forces, events, event_sets, solver_cls, rtol, atol, max_step, first_step,
               t_eval, project, constraint_method, baumgarte, projection_tol,
               max_events, stateful)  # fmt: skip
    return run.execute(t0, tf, q0, qd0, cset)


def _check_stateful(forces):
    """The stateful elements of `forces`, checked (n_states, state names, unique names)."""
    out = tuple(f for f in forces if isinstance(f, StatefulForceElement))
    seen = set()
    for f in out:
        name = f.name
        if not isinstance(name, str) or name in seen:
            raise DataError(
                f"stateful force elements need distinct names (str); {name!r} is used twice: "
                "give each element its own `name`"
            )
        seen.add(name)
        names = f.state_names
        if isinstance(names, str) or not all(isinstance(x, str) for x in names):
            raise DataError(
                f"force element {name!r}: `state_names` must be a tuple of str, got {names!r}"
            )
        n = f.n_states
        if not isinstance(n, (int, np.integer)) or n < 0 or n != len(names):
            raise DataError(
                f"force element {name!r}: n_states ({n!r}) must equal the number of "
                f"state_names ({len(names)})"
            )
    return out


class _Run:
    """State of one simulate() call (internal)."""

    def __init__(self, model, tau, forces, events, event_sets, solver_cls, rtol, atol, max_step,
                 first_step, t_eval, project, solver, baumgarte, tol, max_events,
                 stateful=()):  # fmt: skip
        self.model = model
        self.stateful = stateful
        self.ns = sum(f.n_states for f in stateful)
        self.tau, self.forces, self.events = tau, forces, events
        self.event_sets = event_sets
        self.solver_cls = solver_cls
        self.opts = {"rtol": rtol, "atol": atol, "max_step": max_step}
        self.first_step = first_step
        self.t_eval = t_eval
        self.project, self.solver, self.baumgarte = project, solver, baumgarte
        self.tol, self.max_events = tol, max_events
        self.restart_tol = 1e-6
        self.qs = _quat_slices(model)
        self.nq, self.nv = model.nq, model.nv
        # output rows
        self.rows_t, self.rows_q, self.rows_qd, self.rows_phase = [], [], [], []
        self.rows_s = []
        self.sets = []
        self.event_log = []
        self.counts = [0] * len(events)
        self.armed = [True] * len(events)
        self.nfev = self.njev = self.nlu = self.n_steps = 0
        self.eval_index = 0

    # -- state handling ------------------------------------------------------
    def _project(self, t, q, qd, cset, *, initial=False):
        if cset is None:
            return _normalize_quats(self.model, q, self.qs), qd
        from ahbm.dynamics.constrained import project_positions, project_velocities

        if getattr(self, "_lean_set", None) is not cset:  # one plan per constraint set
            self._lean = _LeanConstrained.build(self.model, cset, "direct", None)
            self._lean_set = cset
        out = None if self._lean is None else self._lean.project(t, q, qd, self.tol)
        if out is not None:
            return out
        q = project_positions(self.model, q, cset, t=t, tol=self.tol)
        qd = project_velocities(self.model, q, qd, cset, t=t)
        return q, qd

    def _drift(self, t, q, qd, cset):
        """Max-norm of the constraint residuals (and of quaternion norm errors)."""
        worst = 0.0
        for qk, _ in self.qs:
            worst = max(worst, abs(float(np.linalg.norm(q[qk : qk + 4])) - 1.0))
        if cset is not None:
            terms = cset.assemble(self.model, q, None, t=t)
            vel = terms.G @ qd - terms.nu
            if terms.g.size:
                worst = max(worst, float(np.abs(terms.g).max()), float(np.abs(vel).max()))
        return worst

    def _record(self, t, q, qd, s):
        self.rows_t.append(t)
        self.rows_q.append(q.copy())
        self.rows_qd.append(qd.copy())
        self.rows_s.append(s.copy())
        self.rows_phase.append(len(self.sets) - 1)

    def _initial_states(self, t, q, qd):
        """The stateful elements' initial states, concatenated (ns,)."""
        parts = []
        for f in self.stateful:
            s = as_float_array(
                f.initial_state(self.model, q, qd, t=t),
                f"initial_state of force element {f.name!r}",
                allow_nan=True,
            )
            if s.shape != (f.n_states,):
                raise DataError(
                    f"force element {f.name!r}: initial_state must have shape "
                    f"({f.n_states},), got {s.shape}"
                )
            if not np.all(np.isfinite(s)):
                raise SimulationError(
                    f"force element {f.name!r}: non-finite initial states at t = {t:.6g} s"
                )
            parts.append(s)
        return np.concatenate(parts) if parts else np.zeros(0)

    def _split(self, y):
        nq, nv = self.nq, self.nv
        return y[:nq], y[nq : nq + nv], y[nq + nv :]

    def _system(self, cset):
        return _System(self.model, self.tau, self.forces, cset, self.solver, self.baumgarte,
                       self.stateful)  # fmt: skip

    def _new_solver(self, system, t, y, tf, h):
        opts = dict(self.opts)
        if h is not None and h > 0 and tf - t > 0:
            opts["first_step"] = min(h, tf - t)
        return self.solver_cls(system, t, y, tf, **opts)

    # -- main loop -----------------------------------------------------------
    def execute(self, t0, tf, q0, qd0, cset):
        self.sets.append(cset)
        try:
            q, qd = self._project(t0, q0, qd0, cset, initial=True)
        except SimulationError as err:
            raise _sim_error(
                f"the initial state cannot be projected onto the constraints: {err}. "
                "Give q0 and qd0 that (nearly) satisfy them",
                t0,
                None,
            ) from err
        t = t0
        try:
            s = self._initial_states(t, q, qd)
        except SimulationError as err:
            raise _sim_error(str(err), t0, None) from err
        status, message = 0, "reached the end of t_span"
        if self.t_eval is None:
            self._record(t, q, qd, s)
        else:
            self._emit_eval(t, None, t, q, qd, s, cset)
        h = self.first_step
        try:
            while t < tf:
                system = self._system(cset)
                stop, t, q, qd, s, cset, h = self._phase(system, t, tf, q, qd, s, cset, h)
                if stop:
                    status, message = 1, "stopped by a terminal event"
                    break
        except (SimulationError, _Abort, np.linalg.LinAlgError) as err:
            result = self._result(-1, str(err))
            t_reached = float(self.rows_t[-1]) if self.rows_t else t
            raise _sim_error(
                f"simulation failed after t = {t_reached:.9g} s: {err}", t_reached, result
            ) from err
        return self._result(status, message)

    def _phase(self, system, t, tf, q, qd, s, cset, h):
        """Integrate until tf or an event; returns (stop, t, q, qd, s, cset, h)."""
        y = np.concatenate([q, qd, s])
        try:
            solver = self._new_solver(system, t, y, tf, h)
        except SimulationError:
            raise
        self.system = system
        g_old = self._event_values(t, q, qd, s, None)
        # force-based conditions (e.g. a contact that pulls) hold at once: fire them now
        for k, ev in enumerate(self.events):
            if not ev.uses_lambda or not self.armed[k]:
                continue
            if ev.max_count is not None and self.counts[k] >= ev.max_count:
                continue
            if (ev.direction < 0 and g_old[k] < 0) or (ev.direction > 0 and g_old[k] > 0):
                return self._fire(k, t, q, qd, s, cset, h)
        while solver.status == "running":
            t_old = solver.t
            msg = solver.step()
            if solver.status == "failed":
                self._count(solver, system)
                raise _Abort(msg or "integrator failed")
            self.n_steps += 1
            t_new = solver.t
            sol = solver.dense_output()
            y_new = solver.y.copy()
            q_new, qd_new, s_new = self._split(y_new)
            if self.project or cset is None:
                drift = 0.0 if _patchable(solver) else self._drift(t_new, q_new, qd_new, cset)
                q_new, qd_new = self._project(t_new, q_new, qd_new, cset)
                y_p = np.concatenate([q_new, qd_new, s_new])
                if _patchable(solver):
                    if not np.array_equal(y_p, y_new):
                        _set_state(solver, y_p, system)
                elif drift > self.restart_tol and solver.status == "running":
                    # LSODA: the output is projected at every step; the solver itself is
                    # restarted from the projected state only when its drift exceeds
                    # restart_tol, so that it keeps its order and step size meanwhile
                    self._count(solver, system)
                    solver = self._new_solver(system, t_new, y_p, tf, solver.step_size)
            if not np.all(np.isfinite(y_new)) or not np.all(np.isfinite(qd_new)):
                raise _Abort("the state became non-finite")
            # events
            self.armed_before = list(self.armed)
            g_new = self._event_values(t_new, q_new, qd_new, s_new, g_old)
            hit = self._first_event(sol, t_old, t_new, g_old, g_new)
            if hit is not None:
                k, t_ev = hit
                self._count(solver, system)
                q_ev, qd_ev, s_ev = self._split(sol(t_ev))
                q_ev, qd_ev = self._project(t_ev, q_ev, qd_ev, cset)
                self._emit_eval(t_old, sol, t_ev, q_ev, qd_ev, s_ev, cset, inclusive=True)
                if self.t_eval is None:
                    self._record(t_ev, q_ev, qd_ev, s_ev)
                return self._fire(k, t_ev, q_ev, qd_ev, s_ev, cset, solver.step_size)
            self._emit_eval(t_old, sol, t_new, q_new, qd_new, s_new, cset, inclusive=True)
            if self.t_eval is None:
                self._record(t_new, q_new, qd_new, s_new)
            g_old = g_new
        self._count(solver, system)
        return False, solver.t, q_new, qd_new, s_new, cset, None

    def _count(self, solver, system):
        self.nfev += system.nfev
        system.nfev = 0
        self.njev += getattr(solver, "njev", 0)
        self.nlu += getattr(solver, "nlu", 0)

    def _emit_eval(self, t_old, sol, t_new, q_new, qd_new, s_new, cset, inclusive=True):
        """Append the t_eval rows in (t_old, t_new] from the dense output."""
        te = self.t_eval
        if te is None:
            return
        while self.eval_index < te.size and te[self.eval_index] <= t_new + 1e-14 * max(
            1.0, abs(t_new)
        ):
            tk = te[self.eval_index]
            if sol is None or abs(tk - t_new) <= 1e-14 * max(1.0, abs(t_new)):
                qk, qdk, sk = q_new, qd_new, s_new
            else:
                qk, qdk, sk = self._split(sol(tk))
                if self.project or cset is None:
                    qk, qdk = self._project(tk, qk, qdk, cset)
            self._record(tk, qk, qdk, sk)
            self.eval_index += 1

    def _states(self, s) -> dict:
        """The force-element states as ``{element name: copy of its block}``."""
        slices = _state_slices(self.stateful)
        return {f.name: s[sl].copy() for f, sl in zip(self.stateful, slices, strict=True)}

    def _set_states(self, ev, s, states):
        """`s` with the blocks an event action returned in `states` (DataError if malformed)."""
        if not isinstance(states, dict):
            raise DataError(
                f"event '{ev.name}': an action with uses_states=True must return (q, qd, states) "
                f"with states a dict of element name -> states, got {type(states).__name__}"
            )
        blocks = dict(
            zip([f.name for f in self.stateful], _state_slices(self.stateful), strict=True)
        )
        s = s.copy()
        for name, value in states.items():
            if name not in blocks:
                raise DataError(
                    f"event '{ev.name}': the action returned states of {name!r}, which is not a "
                    f"stateful force element of this simulation ({sorted(blocks)})"
                )
            sl = blocks[name]
            v = as_float_array(value, f"event '{ev.name}' states[{name!r}]").reshape(-1)
            if v.size != sl.stop - sl.start or not np.all(np.isfinite(v)):
                raise DataError(
                    f"event '{ev.name}': states[{name!r}] must be {sl.stop - sl.start} finite "
                    f"numbers, got {np.asarray(value)!r:.80}"
                )
            s[sl] = v
        return s

    def _call_event(self, ev, t, q, qd, s):
        args = [t, q, qd]
        if ev.uses_lambda:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AhbmWarning)
                _, lam = self.system.accelerations(t, q, qd, s)
            args.append(lam)
        if ev.uses_states:
            args.append(self._states(s))
        return float(ev.function(*args))

    def _event_values(self, t, q, qd, s, g_old):
        g = np.array([self._call_event(ev, t, q, qd, s) for ev in self.events])
        for k, ev in enumerate(self.events):
            if not self.armed[k] and abs(g[k]) > ev.rearm_tolerance:
                self.armed[k] = True
        return g

    def _first_event(self, sol, t_old, t_new, g_old, g_new):
        from scipy import optimize

        best = None
        for k, ev in enumerate(self.events):
            if ev.max_count is not None and self.counts[k] >= ev.max_count:
                continue
            if not self.armed[k] or not self.armed_before[k]:
                continue
            a, b = g_old[k], g_new[k]
            up = a < 0 <= b
            down = a > 0 >= b
            if not ((ev.direction >= 0 and up) or (ev.direction <= 0 and down)):
                continue

            def fk(tt, ev=ev):
                return self._call_event(ev, tt, *self._split(sol(tt)))

            fa, fb = fk(t_old), fk(t_new)
            if fa * fb > 0:  # projection moved the crossing: take the step end
                t_root = t_new
            elif fb == 0:
                t_root = t_new
            else:
                t_root = optimize.brentq(fk, t_old, t_new, xtol=4 * np.finfo(float).eps * t_new
                                         + 1e-14)  # fmt: skip
                # take the side where the crossing has happened
                if fk(t_root) * fa > 0:
                    t_root = min(t_new, t_root + 1e-13 * max(1.0, abs(t_root)))
            if best is None or t_root < best[1]:
                best = (k, t_root)
        return best

    def _fire(self, k, t, q, qd, s, cset, h):
        ev = self.events[k]
        self.counts[k] += 1
        self.armed[k] = False
        if sum(self.counts) > self.max_events:
            raise _Abort(
                f"more than max_events={self.max_events} events; the events may chatter "
                "(add hysteresis or increase max_events)"
            )
        qd_minus = qd.copy()
        if ev.action is not None:
            if ev.uses_states:
                out = ev.action(t, q.copy(), qd.copy(), self._states(s))
                if not isinstance(out, tuple) or len(out) != 3:
                    raise DataError(
                        f"event '{ev.name}': an action with uses_states=True must return "
                        "(q, qd, states)"
                    )
                q, qd, states = out
                s = self._set_states(ev, s, states)
            else:
                q, qd = ev.action(t, q.copy(), qd.copy())
            q = as_float_array(q, "event action q")
            qd = as_float_array(qd, "event action qd")
        new_set = cset
        target = self.event_sets[k]
        if not (isinstance(target, str) and target == _KEEP):
            new_set = target
        if ev.restitution is not None and new_set is not None:
            from ahbm.dynamics.constrained import compute_impulse

            qd = compute_impulse(self.model, q, qd, new_set, restitution=ev.restitution, t=t)
        if new_set is not cset:
            self.sets.append(new_set)
        q, qd = self._project(t, q, qd, new_set)
        entry = {"name": ev.name, "t": t, "q": q.copy(), "qd_minus": qd_minus, "qd_plus": qd.copy()}
        if self.stateful:
            entry["force_states"] = s.copy()
        self.event_log.append(entry)
        if self.t_eval is None:
            self._record(t, q, qd, s)
        return ev.terminal, t, q, qd, s, new_set, h

    # -- output --------------------------------------------------------------
    def _result(self, status, message):
        model = self.model
        n = len(self.rows_t)
        t = np.array(self.rows_t, dtype=float)
        q = np.array(self.rows_q).reshape(n, self.nq)
        qd = np.array(self.rows_qd).reshape(n, self.nv)
        s = np.array(self.rows_s).reshape(n, self.ns)
        phase = np.array(self.rows_phase, dtype=int)
        m = max([0] + [cs.size(model) for cs in self.sets if cs is not None])
        qdd = np.full((n, self.nv), np.nan)
        lam = np.full((n, m), np.nan)
        pres = np.zeros(n)
        vres = np.zeros(n)
        for p, cs in enumerate(self.sets):
            idx = np.flatnonzero(phase == p)
            if idx.size == 0:
                continue
            system = self._system(cs)
            for i in idx:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", AhbmWarning)
                        a, lm = system.accelerations(t[i], q[i], qd[i], s[i])
                except (SimulationError, np.linalg.LinAlgError):
                    continue
                qdd[i] = a
                lam[i, : lm.size] = lm
            if cs is not None:
                g = cs.position(model, q[idx], t=t[idx])
                G = cs.jacobian(model, q[idx], t=t[idx])
                nu = cs.velocity_rhs(model, q[idx], t=t[idx])
                pres[idx] = np.abs(g).max(axis=-1) if g.shape[-1] else 0.0
                vr = np.einsum("nij,nj->ni", G, qd[idx]) - nu
                vres[idx] = np.abs(vr).max(axis=-1) if vr.shape[-1] else 0.0
        force_states, state_names = {}, {}
        for f, sl in zip(self.stateful, _state_slices(self.stateful), strict=True):
            force_states[f.name] = s[:, sl]
            state_names[f.name] = tuple(f.state_names)
        return SimulationResult(
            model, t, q, qd, qdd, lam, phase, pres, vres, self.nfev, self.njev, self.nlu,
            self.n_steps, self.event_log, list(self.sets), status, message, force_states,
            state_names,
        )  # fmt: skip
