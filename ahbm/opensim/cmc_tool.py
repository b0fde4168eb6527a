"""OpenSim's Computed Muscle Control on ahbm (``ahbm cmc SETUP.xml``).

:func:`run_cmc_setup` reads an OpenSim ``<CMCTool>`` setup
(:func:`~ahbm.opensim.cmc_setup.read_cmc_setup`), its model with its Millard
muscles, actuator files, tracking tasks, desired kinematics, controls
constraints and external loads, and writes OpenSim's files into
``<results_directory>``, named ``<tool>_...`` as OpenSim names them:
``_controls.sto`` and ``_controls.xml`` (muscle excitations as steps, the other
controls piecewise linear), ``_states.sto`` (coordinates, speeds, activations,
fiber lengths), ``_Actuation_force/speed/power.sto``,
``_Kinematics_q/u/dudt.sto`` (degrees for rotations) and ``_pErr.sto``.

What is computed, as OpenSim 4.6's CMCTool does
-----------------------------------------------
- Actuators: the model's Millard2012EquilibriumMuscles (controls bounded to
  ``[0.02, 1]`` at least, as OpenSim resets them) and CoordinateActuators, and
  the actuators of ``<force_set_files>``; the bounds of a constraints file
  replace an actuator's own.
- Desired kinematics as in RRA (:func:`~ahbm.opensim.cmc_tracking.desired_kinematics`).
- Every window ``[t, t + T]`` (``T = cmc_time_window``), from the state at ``t``:
  desired accelerations ``a* = ka a_d(t + T) + kv (u_d(t) − u) + kp (q_d(t) − q)``
  of the tasks; the muscles' activation and fiber length integrated over the
  window with the coordinates on the desired trajectory shifted by the present
  errors and constant excitations, giving each muscle's force range at ``t + T``
  (excitation at its lower and upper bound); the quadratic program of OpenSim's
  fast target: least ``Σ (F_m / F̂_m)² + Σ (f_a / F_a)²`` (``F̂`` a muscle's active
  force at full activation at ``t + T`` with an inextensible tendon, OpenSim's
  ``calcInextensibleTendonActiveFiberForce``, ``F_a`` an
  actuator's optimal force) with the task accelerations equal to ``a*`` at
  ``t + T`` and every force within its range, solved exactly (Newton on the dual,
  exact line search); the
  excitations that give those forces at ``t + T`` (each muscle's force is
  monotone in its constant excitation: bracketed on the force range's grid of
  excitations, then Illinois iterations until the force is within 1e-3 N of its
  target; OpenSim's root solver stops at 0.004 in excitation); then the
  model moves over the window under those excitations (held) and the other
  controls (ramped from the previous node).
- Initial states as OpenSim's ``CMC::computeInitialStates``: muscles in
  equilibrium at the default activation, twice 0.2 s with the coordinates held
  and excitations 0.01, controls over a first window of 0.03 s, 0.2 s more at
  those excitations, the controls again, and the muscles integrated over that
  window: the run starts at ``initial_time + 0.03`` s.

Differences from OpenSim, said rather than hidden: ahbm integrates each
muscle's activation and fiber length with error control (Bogacki-Shampine 3(2),
local error 1e-7; OpenSim integrates the whole system with its Runge-Kutta-Merson
integrator at ``integrator_error_tolerance``), and the multibody system in Heun
steps of :data:`MODEL_STEP` (0.5 ms), the muscles integrated along each (the
paths at a step's end from those at its predictor, 1e-5 rad away: lengths to
first order with the moment arms, which are kept); OpenSim's integrator also
writes rows at its inner steps (ahbm writes the window times, where the files
agree). The excitations meet the target forces to 1e-3 N (OpenSim's root solver
stops within 0.004 in excitation). External loads must be expressed in
ground. The settings of OpenSim's integrator and optimizer are not used
(:data:`~ahbm.opensim.cmc_setup.NOT_USED`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ahbm.errors import FileFormatError, ModelError, SimulationError
from ahbm.opensim.cmc_setup import CMCSetup, read_cmc_setup
from ahbm.opensim.cmc_tracking import JointTask, _window_starts, desired_kinematics
from ahbm.types import ResultRepr

__all__ = ["CMCResult", "run_cmc_setup"]

#: OpenSim's limits of a muscle's control in CMC (MIN_CMC_CONTROL_VALUE, MAX_...)
MUSCLE_CONTROL_RANGE = (0.02, 1.0)
_BIG = 10000.0  # OpenSim's bound for an infinite control bound
_TINY = float(np.finfo(float).eps) ** 1.25  # SimTK::TinyReal
_GRID = 9  # excitations per muscle in each pass of the bracketing
_FORCE_TOL = 1e-3  # N: a muscle's force at a window's end from its target force
_REFINE_ITERATIONS = 12
#: Longest Heun step of the model in a window, s (the muscles within it: error-controlled)
MODEL_STEP = 0.0005


@dataclass(frozen=True, repr=False)
class CMCResult(ResultRepr):
    """Result of :func:`run_cmc_setup`.

    Attributes
    ----------
    time : ndarray, shape (n,)
        The window times (``initial_time + 0.03``, then every ``cmc_time_window``), s.
    coordinate_names : list of str
    q, u, udot : ndarray, shape (n, nv)
        Simulated coordinates (rad, m), speeds and accelerations.
    actuator_names : list of str
        Muscles first, then the other actuators.
    forces, controls : ndarray, shape (n, n_act)
        Actuator forces (N, N m) and controls at the window times.
    muscle_names : list of str
    activations, fiber_lengths : ndarray, shape (n, n_muscles)
    error_time : ndarray, shape (n,)
        ``initial_time`` and the window times but the last.
    position_errors : ndarray, shape (n, n_tasks)
        ``q_d − q`` of each task.
    node_time : ndarray, shape (n,)
        ``initial_time + 0.03`` and the ends of the windows but the last (which
        OpenSim does not solve either).
    node_controls : ndarray, shape (n, n_act)
        The controls as computed (a muscle's excitation holds over the window
        that ends at its node).
    outputs : list of pathlib.Path
    """

    time: np.ndarray
    coordinate_names: list
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    actuator_names: list
    forces: np.ndarray
    controls: np.ndarray
    muscle_names: list
    activations: np.ndarray
    fiber_lengths: np.ndarray
    error_time: np.ndarray
    position_errors: np.ndarray
    node_time: np.ndarray
    node_controls: np.ndarray
    outputs: list = field(default_factory=list)


def least_effort_forces(B, c, scale, lo, hi, lam=None, *, when=""):
    """``min Σ (f/scale)²`` subject to ``B f = c`` and ``lo <= f <= hi`` (OpenSim's fast target).

    Solved through its dual: ``f = scale · clip(Gᵀλ, lo/scale, hi/scale)`` with
    ``G = B diag(scale)`` and ``λ`` the root of ``G clip(Gᵀλ) = c``, found by Newton's
    method on the concave dual function with a backtracking line search
    (finitely many active sets: exact at convergence).

    Returns
    -------
    f : ndarray (n,)
    lam : ndarray (m,)
        The multipliers (a warm start for the next window).

    Raises
    ------
    SimulationError
        No forces within the bounds give the accelerations (OpenSim's optimizer
        fails there too).
    """
    scale = np.asarray(scale, dtype=float)
    c0 = c
    f = np.clip(0.0, lo, hi)  # where the weight is immense: the bound nearest to 0
    live = scale > 1e-6 * float(np.max(scale))
    c = c - B[:, ~live] @ f[~live]
    G = B[:, live] * scale[live]
    lo_s, hi_s = lo[live] / scale[live], hi[live] / scale[live]
    m = G.shape[0]
    tol = 1e-10 * max(1.0, float(np.max(np.abs(c), initial=0.0)))
    warm = lam is not None and lam.shape == (m,) and bool(np.all(np.isfinite(lam)))
    if not warm:
        lam = np.linalg.lstsq(G @ G.T, c, rcond=None)[0]

    z = G.T @ lam
    y = np.clip(z, lo_s, hi_s)
    feasible = True
    for _ in range(100):
        r = c - G @ y
        if np.max(np.abs(r)) <= tol:
            break
        free = (z > lo_s) & (z < hi_s)
        Gf = G[:, free]
        H = Gf @ Gf.T
        H = H + np.eye(m) * (1e-13 * max(1.0, float(np.trace(H))))
        try:
            d = np.linalg.solve(H, r)
        except np.linalg.LinAlgError:
            d = np.linalg.lstsq(H, r, rcond=None)[0]
        w = G.T @ d
        step = _exact_step(z, w, y, lo_s, hi_s, float(r @ d))
        if not np.isfinite(step):
            feasible = False  # the dual grows without bound along d: no feasible forces
            break
        if step <= 0.0:
            break
        lam = lam + step * d
        z = G.T @ lam
        y = np.clip(z, lo_s, hi_s)
    if feasible and np.max(np.abs(c - G @ y)) <= 1e3 * tol:
        f[live] = y * scale[live]
        return f, lam
    if warm:  # a warm start can stall on a bad active set: start again from scratch
        return least_effort_forces(B, c0, scale, lo, hi, None, when=when)
    raise SimulationError(
        f"CMC found no actuator forces within their ranges that give the desired "
        f"accelerations{when}; the model cannot follow the kinematics there (every tracked "
        "coordinate needs an actuator; check the reserves and the control bounds)"
    )


def _exact_step(z, w, y, lo, hi, g0):
    """The step t > 0 that maximizes the dual along a direction: the root of its slope
    ``g(t) = g0 − Σ w_i (clip(z_i + t w_i) − y_i)``, piecewise linear and non-increasing
    (inf where it stays positive: the dual is unbounded, the primal infeasible)."""
    if g0 <= 0.0:
        return 0.0
    moving = w != 0.0
    wm, zm, ym = w[moving], z[moving], y[moving]
    with np.errstate(divide="ignore", invalid="ignore"):
        tb = np.concatenate([(lo[moving] - zm) / wm, (hi[moving] - zm) / wm])
    tb = np.unique(tb[tb > 0.0])
    if tb.size == 0:
        return math.inf
    g = g0 - (np.clip(zm + tb[:, None] * wm, lo[moving], hi[moving]) - ym) @ wm
    k = int(np.argmax(g <= 0.0)) if bool(np.any(g <= 0.0)) else -1
    if k < 0:
        return math.inf
    t0, ga = (0.0, g0) if k == 0 else (float(tb[k - 1]), float(g[k - 1]))
    t1, gb = float(tb[k]), float(g[k])
    return t0 + (t1 - t0) * ga / (ga - gb) if ga > gb else t1


class _Paths:
    """Musculotendon lengths, lengthening speeds and moment arms of the muscles."""

    def __init__(self, model, names):
        self.model, self.names = model, names

    def lengths(self, Q):
        from ahbm.kinematics.forward import forward_kinematics
        from ahbm.muscles.paths import muscle_lengths

        kin = forward_kinematics(self.model, Q)
        return muscle_lengths(self.model, Q, muscles=self.names, kin=kin)

    def at(self, q, u):
        """(lengths (m,), lengthening speeds (m,), moment arms (m, nv), kinematics) at one
        state."""
        from ahbm.kinematics.forward import forward_kinematics
        from ahbm.muscles.paths import moment_arms

        q1 = q[None]
        kin = forward_kinematics(self.model, q1)
        R, L = moment_arms(self.model, q1, muscles=self.names, kin=kin, return_lengths=True)
        # the lengthening speed is (∂l/∂q) u = −r u; the poses serve the dynamics too
        return L[0], -R[0] @ u, R[0], kin


class _Controller:
    """The CMC loop: states, window solves and the simulation between them."""

    def __init__(self, model, muscles, tables, ideal, dyn, desired, tasks, bounds_fn):
        self.model, self.tables, self.dyn, self.desired = model, tables, dyn, desired
        self.nm = len(muscles)
        self.paths = _Paths(model, [m.name for m in muscles]) if self.nm else None
        self.opt = np.array([a.optimal_force for a in ideal])
        self.ni = self.opt.size
        weights = np.array([t.weight for t in tasks])
        keep = weights > 0  # a zero weight leaves its constraint 0 = 0
        self.rows = np.array([t.coordinate for t in tasks], dtype=int)[keep]
        self.all_rows = np.array([t.coordinate for t in tasks], dtype=int)
        self.kp = np.array([t.kp for t in tasks])[keep]
        self.kv = np.array([t.kv for t in tasks])[keep]
        self.ka = np.array([t.ka for t in tasks])[keep]
        self.bounds_fn = bounds_fn
        self.lam = None
        self.nsub = 1
        self._window_key, self._window_L = None, None
        #: paths at a Heun step's end from those at its predictor (first-order Taylor in
        #: q; the moment arms kept): q̇ = u needed
        self.taylor = model.nq == model.nv

    # --- one window of the controller -------------------------------------------------
    def _muscle_window(self, t0, t1, err_q, a, lm, X):
        """Muscle states at t1 for excitations X (K, nm), coordinates on the shifted path."""
        steps = max(1, math.ceil((t1 - t0) / 0.001 - 1e-9))
        key = (t0, t1, err_q.tobytes())
        if self._window_key != key:  # the passes of one window share the path
            ts = t0 + (t1 - t0) * np.arange(2 * steps + 1) / (2 * steps)
            self._window_L = self.paths.lengths(self.desired.at(ts)[0] - err_q)
            self._window_key = key
        return self.tables.integrate(X, a, lm, self._window_L, (t1 - t0) / steps)

    def solve_window(self, t0, t1, i1, q, u, a, lm):
        """Controls (n_act,) whose node is at t1 (prepared time i1) and the position errors."""
        dq0, du0, _ = self.desired.at([t0])
        dq1, du1, da1 = self.desired.at([t1])
        err_q, err_u = dq0[0] - q, du0[0] - u
        rows = self.rows
        a_des = self.ka * da1[0][rows] + self.kv * err_u[rows] + self.kp * err_q[rows]
        xlo, xhi = self.bounds_fn(t0)
        nm, ni = self.nm, self.ni
        qs, us = dq1[0] - err_q, du1[0] - err_u
        lo = np.empty(ni + nm)
        hi = np.empty(ni + nm)
        scale = np.empty(ni + nm)
        f_ideal_lo, f_ideal_hi = xlo[nm:] * self.opt, xhi[nm:] * self.opt
        lo[:ni], hi[:ni] = np.minimum(f_ideal_lo, f_ideal_hi), np.maximum(f_ideal_lo, f_ideal_hi)
        scale[:ni] = self.opt
        extra = None
        if nm:
            mlo, mhi = xlo[:nm], xhi[:nm]
            grid = np.linspace(0.0, 1.0, _GRID)[:, None]
            XA = mlo + grid * (mhi - mlo)
            A_, LM_, FA, _, FM = self._muscle_window(t0, t1, err_q, a, lm, XA)
            fmin, fmax = FA[0], FA[-1]
            small = fmax - fmin < 1.0
            lo[ni:], hi[ni:] = np.minimum(fmin, fmax), np.maximum(fmin, fmax)
            Ls, Vs, Rs, _ = self.paths.at(qs, us)
            fopt = self.tables.rigid_tendon_active(Ls, Vs)
            scale[ni:] = np.where(np.abs(fopt) < _TINY, _TINY, np.abs(fopt))
            extra = Rs.T
        A, b0 = self.dyn.linear(i1 - 1, qs, us, extra=extra)
        B, c = A[rows], a_des - b0[rows]
        f, self.lam = least_effort_forces(B, c, scale, lo, hi, self.lam,
                                          when=f" at t = {t0:.6g} s")  # fmt: skip
        x = np.empty(nm + ni)
        x[nm:] = np.clip(f[:ni] / self.opt, xlo[nm:], xhi[nm:])
        if nm:
            x[:nm] = self._excitations(t0, t1, err_q, a, lm, XA, FA, f[ni:], small)
        return x, err_q[self.all_rows]

    def _excitations(self, t0, t1, err_q, a, lm, XA, FA, target, small):
        """Per muscle, the constant excitation whose force at t1 is `target`: the grid
        interval of the force range's excitations that brackets it, then
        :meth:`_refine`."""
        cols = np.arange(self.nm)
        # the first grid interval whose upper force reaches the target
        Fm = np.maximum.accumulate(FA, axis=0)
        k = np.clip(np.sum(Fm < target, axis=0) - 1, 0, _GRID - 2)
        x0, x1, f0, f1 = XA[k, cols], XA[k + 1, cols], FA[k, cols], FA[k + 1, cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.clip((target - f0) / (f1 - f0), 0.0, 1.0)
        x = np.where(np.isfinite(s), x0 + s * (x1 - x0), x0)
        inside = ~small & (f0 < target) & (target < f1)
        if np.any(inside):
            x = self._refine(t0, t1, err_q, a, lm, x, x0, x1, f0 - target, f1 - target,
                             target, inside)  # fmt: skip
        return np.where(small, XA[0], x)

    def _refine(self, t0, t1, err_q, a, lm, x, x0, x1, g0, g1, target, active):
        """Illinois iterations on the brackets [x0, x1] (force errors g0 < 0 < g1) of the
        `active` muscles, from the interpolated x, until the force at t1 is within
        :data:`_FORCE_TOL` newtons of `target` (or the bracket within 1e-10)."""
        side = np.zeros(x.shape, dtype=int)
        for _ in range(_REFINE_ITERATIONS):
            g = self._muscle_window(t0, t1, err_q, a, lm, x[None])[2][0] - target
            active = active & (np.abs(g) > _FORCE_TOL) & (x1 - x0 > 1e-10)
            if not np.any(active):
                break
            up = active & (g > 0.0)
            down = active & (g <= 0.0)
            # Illinois: the end kept twice in a row has its error halved
            g0 = np.where(up & (side == 1), 0.5 * g0, g0)
            g1 = np.where(down & (side == -1), 0.5 * g1, g1)
            x1, g1 = np.where(up, x, x1), np.where(up, g, g1)
            x0, g0 = np.where(down, x, x0), np.where(down, g, g0)
            side = np.where(up, 1, np.where(down, -1, side))
            with np.errstate(divide="ignore", invalid="ignore"):
                xn = x0 - g0 * (x1 - x0) / (g1 - g0)
            ok = np.isfinite(xn) & (xn > x0) & (xn < x1)
            x = np.where(active, np.where(ok, xn, 0.5 * (x0 + x1)), x)
        return x

    # --- the model over one window -----------------------------------------------------
    def forces(self, q, u, a, lm, x_ideal, i, paths=None):
        """(q̈, muscle forces, paths (L, V, R, kin) at q) at prepared time i; `paths`: those
        already computed at (q, u)."""
        if self.nm:
            L, V, R, kin = self.paths.at(q, u) if paths is None else paths
            F = self.tables.state(a[None], L[None], lm[None])[0][0]
            tau = R.T @ F
        else:
            L = V = R = F = tau = kin = None
        acc = self.dyn.accelerations(i, q, u, x_ideal * self.opt, tau, kin=kin)
        return acc, F, (L, V, R, kin)

    def step(self, t0, t1, i0, q, u, a, lm, acc0, paths0, x_musc, c0, c1):
        """The model from t0 to t1 in :attr:`nsub` Heun steps (prepared times i0 + s), the
        muscles integrated along each; controls ramp from c0 to c1 (held for muscles).

        Returns q, u, a, lm and the paths (L, V, R) at the end."""
        from ahbm.opensim._cmc_muscles import hermite_lengths

        n = self.nsub
        h = (t1 - t0) / n
        paths1 = None
        for s in range(n):
            ca, cb = c0 + s / n * (c1 - c0), c0 + (s + 1) / n * (c1 - c0)
            if s:
                acc0, _, paths0 = self.forces(q, u, a, lm, ca, i0 + s, paths1)
            qp, up = q + h * u, u + h * acc0
            if not self.nm:
                acc1 = self.forces(qp, up, a, lm, cb, i0 + s + 1)[0]
                q, u = q + 0.5 * h * (u + up), u + 0.5 * h * (acc0 + acc1)
                paths1 = None
                continue
            L0, V0, _, _ = paths0
            L1, V1, R1, kin1 = self.paths.at(qp, up)
            _, _, Fp, _, _ = self.tables.integrate(
                x_musc[None], a[None], lm[None], hermite_lengths(L0, V0, L1, V1, h, 1), h
            )
            acc1 = self.dyn.accelerations(i0 + s + 1, qp, up, cb * self.opt, R1.T @ Fp[0],
                                          kin=kin1)  # fmt: skip
            q_end = q + 0.5 * h * (u + up)
            q, u = q_end, u + 0.5 * h * (acc0 + acc1)
            if self.taylor:  # the end is O(h²) from the predictor: l(q) ≈ l(qp) − r (q − qp)
                L1 = L1 - R1 @ (q_end - qp)
                paths1 = (L1, -R1 @ u, R1, None)
            else:
                paths1 = self.paths.at(q, u)
            L1, V1, _, _ = paths1
            a1, lm1, _, _, _ = self.tables.integrate(
                x_musc[None], a[None], lm[None], hermite_lengths(L0, V0, L1, V1, h, 1), h
            )
            a, lm = a1[0], lm1[0]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(lm))):
            raise SimulationError(
                f"the CMC simulation diverged at t = {t1:.4f} s; check the actuators (every "
                "tracked coordinate needs one) and the task weights"
            )
        return q, u, a, lm, paths1

    def hold(self, q, x, a, lm, duration=0.2):
        """OpenSim's obtainActuatorEquilibrium: muscles integrated with the coordinates held."""
        L = self.paths.lengths(q[None])[0]
        steps = int(round(duration / 0.001))
        Ls = np.broadcast_to(L, (2 * steps + 1, self.nm))
        out = self.tables.integrate(x[None], a[None], lm[None], Ls, 0.001)
        return out[0][0], out[1][0]


def _muscles_of(model, setup):
    """The model's muscles CMC controls (Millard2012EquilibriumMuscle only)."""
    out, other = [], []
    for m in model.muscles:
        if str(m.parameters.get("appliesForce", True)).lower() in ("false", "0"):
            continue
        if m.model == "Millard2012EquilibriumMuscle":
            out.append(m)
        else:
            other.append(f"{m.name} ({m.model})")
    if other:
        raise ModelError(
            f"CMCTool setup '{setup.path}': the muscles {other} of model '{setup.model_file}' are "
            "not Millard2012EquilibriumMuscles, the muscle class ahbm cmc simulates; convert "
            "them or set <replace_force_set> to true"
        )
    return out


def _actuators(setup: CMCSetup, model):
    """(muscles, the other actuators) of the run."""
    from ahbm.opensim.id_tool import active_model_forces
    from ahbm.opensim.setup_files import _listed
    from ahbm.opensim.so_setup import read_actuators
    from ahbm.opensim.so_tool import _model_actuators

    muscles, acts = [], []
    if not setup.replace_force_set:
        muscles = _muscles_of(model, setup)
        other = [f for f in active_model_forces(model, ["Muscles"])
                 if "CoordinateActuator" not in f]  # fmt: skip
        if other:
            raise ModelError(
                f"CMCTool setup '{setup.path}': the model's forces {_listed(other)} would act, "
                "which ahbm cmc does not model; remove them or set <replace_force_set> to true"
            )
        acts.extend(_model_actuators(model))
    for f in setup.force_set_files:
        acts.extend(read_actuators(f))
    names = [m.name for m in muscles] + [a.name for a in acts]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ModelError(f"CMCTool setup '{setup.path}': actuators named twice: {dup}")
    if not names:
        raise FileFormatError(
            f"CMCTool setup '{setup.path}': no muscles and no actuators to control"
        )
    for a in acts:
        if not a.optimal_force > 0:
            raise ModelError(
                f"actuator '{a.name}': optimal_force must be > 0, got {a.optimal_force}"
            )
    return muscles, acts


def _bounds(setup, muscles, acts):
    """``bounds(t) -> (xmin, xmax)`` of every control, OpenSim's CMC rules applied."""
    lo0, hi0 = [], []
    for m in muscles:
        lo = float(m.parameters.get("min_control", 0.0))
        hi = float(m.parameters.get("max_control", 1.0))
        lo0.append(max(lo, MUSCLE_CONTROL_RANGE[0]))
        hi0.append(max(hi, MUSCLE_CONTROL_RANGE[1]))
    for a in acts:
        lo0.append(-_BIG if a.min_control == -math.inf else a.min_control)
        hi0.append(_BIG if a.max_control == math.inf else a.max_control)
    lo0, hi0 = np.array(lo0), np.array(hi0)
    names = [m.name for m in muscles] + [a.name for a in acts]
    cons = setup.constraints
    if cons is not None:
        unknown = sorted(set(cons.defaults) - set(names))
        if unknown:
            raise ModelError(
                f"constraints file '{cons.path}' bounds controls of no actuator of the run: "
                f"{unknown}; the actuators are {names}"
            )

    def bounds(t):
        if cons is None:
            return lo0, hi0
        pairs = [cons.bounds(n, t, lo0[j], hi0[j]) for j, n in enumerate(names)]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

    bad = [n for n, lo, hi in zip(names, lo0, hi0, strict=True) if not lo <= hi]
    if bad:
        raise ModelError(f"the controls of {bad} have min_control above max_control")
    return bounds


def run_cmc_setup(path, *, output_dir=None, write: bool = True) -> CMCResult:
    """Run an OpenSim CMC setup with ahbm (``ahbm cmc SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        A CMCTool setup (:func:`~ahbm.opensim.cmc_setup.read_cmc_setup`).
    output_dir : str or path-like, optional
        Where to write the result files (default the setup's ``<results_directory>``).
    write : bool
        Write OpenSim's files (default True).

    Returns
    -------
    CMCResult

    Raises
    ------
    FileFormatError
        A bad setup, task, actuator, constraints, loads or data file; an element
        ahbm does not implement, named with its line.
    ModelError, DataError
        Muscles of another class than Millard2012EquilibriumMuscle, undamped
        muscles, model forces that would act, data that do not fit the model
        (a tracked coordinate without column), outputs that are inputs.
    SimulationError
        A window whose accelerations no forces within the bounds can give.

    Examples
    --------
    >>> res = run_cmc_setup("subject01_Setup_CMC.xml")  # doctest: +SKIP
    >>> res.actuator_names[0], res.time[0]  # doctest: +SKIP
    ('hamstrings_r', 0.63)
    """
    from ahbm.muscles.millard import millard_equilibrium
    from ahbm.muscles.millard_curves import MillardParameters
    from ahbm.opensim._cmc_muscles import MillardTables
    from ahbm.opensim._cmc_outputs import output_paths, write_outputs
    from ahbm.opensim._tracking_dynamics import IdealActuatorDynamics
    from ahbm.opensim.coordinates import _read_osim
    from ahbm.opensim.rra_tool import _desired_q, _external_loads, _osim_orders

    setup = read_cmc_setup(path)
    paths = output_paths(setup, output_dir) if write else None  # refused before computing
    model = _read_osim(setup.model_file, markers=False)
    muscles, acts = _actuators(setup, model)
    coord_names = list(model.coordinate_names)
    tasks = []
    for t in setup.tasks:
        if t.coordinate not in coord_names:
            raise ModelError(
                f"task '{t.name}' of '{setup.task_set_file}' tracks coordinate "
                f"'{t.coordinate}', which model '{setup.model_file}' does not have"
            )
        tasks.append(JointTask(t.name, coord_names.index(t.coordinate), t.weight, t.kp, t.kv, t.ka))
    if not tasks:
        raise FileFormatError(f"'{setup.task_set_file}': no CMC_Joint task is on and active")
    time, Q = _desired_q(setup, model)
    # OpenSim's integrator writes its last row twice (RRA's kinematics): keep the first
    keep = np.concatenate([[True], np.diff(time) > 0])
    time, Q = time[keep], Q[keep]
    ti = max(setup.initial_time, float(time[0]))
    tf = min(setup.final_time, float(time[-1]))
    dt = setup.cmc_time_window
    start = ti + 0.03 if muscles else ti
    if not tf - dt - start >= dt - 1e-12:
        raise FileFormatError(
            f"CMCTool setup '{setup.path}': the time range [{ti}, {tf}] s within the desired "
            f"kinematics leaves less than two windows of {dt} s after the muscles' first "
            "0.03 s; widen the time range"
        )
    desired = desired_kinematics(time, Q, cutoff=setup.lowpass_cutoff_frequency)
    starts = _window_starts(start, tf, dt)
    K = starts.size
    f_ext = _external_loads(setup, model)
    dyn = IdealActuatorDynamics(model, acts, f_ext)
    nsub = max(1, math.ceil(dt / MODEL_STEP - 1e-9))  # Heun steps of the model per window
    sub = starts[:, None] + dt * np.arange(nsub)[None] / nsub
    dyn.prepare(np.concatenate([[ti], sub.ravel(), [starts[-1] + dt]]))
    params = MillardParameters.from_muscles(muscles) if muscles else None
    tables = MillardTables(params) if muscles else None
    ctl = _Controller(model, muscles, tables, acts, dyn, desired, tasks,
                      _bounds(setup, muscles, acts))  # fmt: skip
    ctl.nsub = nsub
    nm, ni = len(muscles), len(acts)
    dq, du, _ = desired.at([ti])
    q, u = dq[0].copy(), du[0].copy()
    errors = [np.zeros(len(tasks))]
    if nm:
        a = np.array([float(m.parameters.get("default_activation", 0.05)) for m in muscles])
        L = ctl.paths.lengths(q[None])
        if setup.solve_for_equilibrium:
            lm = millard_equilibrium(params, a[None], L).fiber_length[0]
        else:
            lm = np.array([float(m.parameters.get("default_fiber_length", 0.1))
                           for m in muscles])  # fmt: skip
        x_eq = np.full(nm, 0.01)
        for _ in range(2):
            a, lm = ctl.hold(q, x_eq, a, lm)
        for i in range(2):
            x, _ = ctl.solve_window(ti, start, 1, q, u, a, lm)
            if i == 0:
                a, lm = ctl.hold(q, x[:nm], a, lm)
        err_q = np.zeros_like(q)
        a, lm = (v[0] for v in ctl._muscle_window(ti, start, err_q, a, lm, x[None, :nm])[:2])
        dq, du, _ = desired.at([start])
        q, u = dq[0].copy(), du[0].copy()
        node0 = x
    else:
        a = lm = np.zeros(0)
        node0 = ctl.solve_window(start, start + 1e-8, 1, q, u, a, lm)[0]
    n_act = nm + ni
    nodes = np.empty((K + 1, n_act))
    nodes[0] = node0
    node_t = np.concatenate([[start], starts + dt])
    nv = model.nv
    Qo, Uo, UDo = np.empty((K, model.nq)), np.empty((K, nv)), np.empty((K, nv))
    Fo, Co = np.empty((K, n_act)), np.empty((K, n_act))
    Ao, LMo = np.empty((K, nm)), np.empty((K, nm))
    paths_k = None
    for k in range(K):
        c0 = nodes[k]
        acc0, Fm, paths0 = ctl.forces(q, u, a, lm, c0[nm:], k * nsub, paths_k)
        Qo[k], Uo[k], UDo[k], Co[k], Ao[k], LMo[k] = q, u, acc0, c0, a, lm
        Fo[k, nm:] = c0[nm:] * ctl.opt
        if nm:
            Fo[k, :nm] = Fm
        if k == K - 1:  # OpenSim solves no window beyond the last row it writes
            break
        nodes[k + 1], e = ctl.solve_window(starts[k], starts[k] + dt, 1 + (k + 1) * nsub, q, u,
                                           a, lm)  # fmt: skip
        errors.append(e)
        q, u, a, lm, paths_k = ctl.step(starts[k], starts[k + 1], k * nsub, q, u, a, lm, acc0,
                                        paths0, nodes[k + 1][:nm], c0[nm:],
                                        nodes[k + 1][nm:])  # fmt: skip
    out = CMCResult(
        time=starts,
        coordinate_names=coord_names,
        q=Qo,
        u=Uo,
        udot=UDo,
        actuator_names=[m.name for m in muscles] + [x.name for x in acts],
        forces=Fo,
        controls=Co,
        muscle_names=[m.name for m in muscles],
        activations=Ao,
        fiber_lengths=LMo,
        error_time=np.concatenate([[ti], starts[:-1]]),
        position_errors=np.array(errors),
        node_time=node_t[:K],
        node_controls=nodes[:K],
    )
    if paths is None:
        return out
    _, osim_coords = _osim_orders(setup.model_file)
    lo, hi = ctl.bounds_fn(start)
    written = write_outputs(setup, paths, model, out, acts, tasks, osim_coords, (lo, hi), nm)
    return replace(out, outputs=written)
