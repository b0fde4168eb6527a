"""The stepping loop of :func:`~ahbm.dynamics.simulation.simulate` (internal).

:class:`_Run` holds the state of one ``simulate()`` call: it steps the scipy
solver one accepted step at a time, projects onto the constraint manifolds,
locates events on the dense output, applies their actions and impacts, and
assembles the :class:`~ahbm.dynamics.simulation_result.SimulationResult`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.dynamics.constrained import _LeanConstrained
from ahbm.dynamics.coordinate_rates import _normalize_quats, _quat_slices
from ahbm.dynamics.simulation_events import _KEEP
from ahbm.dynamics.simulation_result import SimulationResult
from ahbm.dynamics.simulation_system import (
    _Abort,
    _patchable,
    _set_state,
    _sim_error,
    _state_slices,
    _System,
)
from ahbm.errors import AhbmWarning, DataError, SimulationError

__all__: list[str] = []


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
