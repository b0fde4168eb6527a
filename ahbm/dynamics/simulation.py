"""Forward simulation of multibody models with constraints, force elements and events.

:func:`simulate` integrates the equations of motion

``q̇ = T(q) v``,  ``H(q) v̇ + C(q, v) = τ + Σ τ_elements + Gᵀλ``,  ``G v̇ = γ``

(AHBM §3.1–3.2 eqs 4.5–4.6, whose multiplier has the opposite sign:
``M v̇ = f − TᵀGᵀλ``; see :mod:`ahbm.dynamics.constrained`) with the solver classes behind
:func:`scipy.integrate.solve_ivp` (``RK45``, ``RK23``, ``DOP853``, ``Radau``,
``BDF``, ``LSODA``). The solver is stepped one accepted step at a time so
that, after every step, the state is projected onto the position and velocity
constraint manifolds (AHBM eqs 4.7–4.8, after Lubich's MEXX) and quaternions
are renormalized. Events (contact made or broken, joint limits, user
functions) are located on the solver's dense output; an event can switch
the active constraint set and apply an impact (Felis 2015 eqs 3.10–3.12), after which
the integration continues (multi-phase simulation).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import (
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    check_model,
)
from ahbm.dynamics.force_element import ForceElement, StatefulForceElement
from ahbm.dynamics.simulation_events import _KEEP, SimulationEvent
from ahbm.dynamics.simulation_result import SimulationResult
from ahbm.dynamics.simulation_run import _Run
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model

__all__ = ["simulate"]

# scipy.integrate classes by name; scipy.integrate (about 0.3 s) is imported on the
# first simulation, not with ahbm
_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def _as_cset(constraints, model):
    if constraints is None or isinstance(constraints, str) and constraints == _KEEP:
        return constraints
    from ahbm.dynamics.constraints import ConstraintSet

    cset = constraints if isinstance(constraints, ConstraintSet) else ConstraintSet(constraints)
    cset.validate(model)
    return cset if len(cset) else None


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
            (default ``"direct"``).
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
        dynamics ``H v̇ = τ − C + Gᵀλ``, ``G v̇ = γ`` (AHBM eqs 4.5–4.6 with the
        opposite sign of λ). With
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
