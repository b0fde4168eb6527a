"""The right-hand side of one simulation phase and the solver helpers of :func:`simulate`.

Internal to :mod:`ahbm.dynamics.simulation`: :class:`_System` evaluates
``y = [q, v, s] -> [q̇, v̇, ṡ]`` (constrained or not, with force elements and
their states); the helpers replace the state of a scipy ``OdeSolver`` after a
projection.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import jit_constrained as _jc
from ahbm._internal.validation import callback_result
from ahbm.dynamics.constrained import _constrained_fd, _LeanConstrained
from ahbm.dynamics.forces import total_generalized_force
from ahbm.dynamics.forward import aba
from ahbm.errors import DataError, SimulationError

__all__: list[str] = []


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
