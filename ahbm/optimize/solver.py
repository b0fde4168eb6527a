"""Solving optimal-control problems: IPOPT through CasADi, scipy for small problems.

:func:`solve` transcribes a problem (:mod:`ahbm.optimize.collocation`, or
any registered transcription), solves the nonlinear program and returns an
:class:`~ahbm.optimize.result.OptimalControlResult` with the solver's
status, the cost terms, and the constraints left violated, by name.
"""

from __future__ import annotations

import re
import time

import numpy as np

from ahbm._internal.validation import as_choice, as_int, as_positive_float
from ahbm.errors import DataError
from ahbm.optimize import collocation  # noqa: F401  (registers the collocation methods)
from ahbm.optimize.problem import check_problem
from ahbm.optimize.problem_helpers import _AXES
from ahbm.optimize.result import OptimalControlResult, PhaseResult
from ahbm.optimize.symbolic import require_casadi
from ahbm.optimize.transcription import NLP, get_transcription

__all__ = ["solve", "constraint_violations"]

_SOLVERS = ("ipopt", "slsqp", "trust-constr")


def constraint_violations(nlp: NLP, w, *, tol: float = 1e-6) -> tuple[float, list]:
    """Largest violation and the violated constraints and bounds of an NLP point, by name.

    Parameters
    ----------
    nlp : NLP
    w : array_like, shape (n,)
        A point (e.g. the solver's answer).
    tol : float
        Violations up to `tol` are not listed.

    Returns
    -------
    max_violation : float
    violated : list of (str, float)
        ``(name, amount)``, largest first.
    """
    ca = require_casadi()
    w = np.asarray(w, float)
    g = np.asarray(ca.Function("g", [nlp.x], [nlp.g])(w), float).ravel()
    vg = np.maximum(np.maximum(nlp.lbg - g, g - nlp.ubg), 0.0)
    vx = np.maximum(np.maximum(nlp.lbx - w, w - nlp.ubx), 0.0)
    names = list(nlp.g_names) + [f"bound {n}" for n in nlp.x_names]
    v = np.concatenate([vg, vx])
    order = np.argsort(-v)
    violated = [(names[i], float(v[i])) for i in order if v[i] > tol]
    return (float(v.max()) if v.size else 0.0), violated


#: CasADi's own nlpsol options (not IPOPT's): passed through unprefixed
_NLPSOL_OPTIONS = ("print_time", "expand", "jit", "compiler", "jit_options", "jit_cleanup",
                   "jit_temp_suffix", "jit_name")  # fmt: skip


def _ipopt(nlp: NLP, *, hessian, options, verbose, max_iter, tol, warm=None):
    ca = require_casadi()
    opts = {
        "ipopt.print_level": 5 if verbose else 0,
        "print_time": False,
        "ipopt.sb": "yes",
        "ipopt.max_iter": max_iter,
        "ipopt.tol": tol,
        "ipopt.linear_solver": "mumps",
    }
    if hessian == "limited-memory":
        opts["ipopt.hessian_approximation"] = "limited-memory"
    multipliers = {}
    if warm is not None:  # the previous primal-dual point: IPOPT's warm start
        opts.update({"ipopt.warm_start_init_point": "yes", "ipopt.mu_init": 1e-7,
                     "ipopt.warm_start_bound_push": 1e-9, "ipopt.warm_start_mult_bound_push": 1e-9,
                     "ipopt.warm_start_slack_bound_push": 1e-9})  # fmt: skip
        multipliers = {"lam_x0": warm[0], "lam_g0": warm[1]}
    for k, v in (options or {}).items():
        opts[k if "." in k or k in _NLPSOL_OPTIONS else f"ipopt.{k}"] = v
    try:
        S = ca.nlpsol("solver", "ipopt", {"x": nlp.x, "f": nlp.f, "g": nlp.g}, opts)
    except RuntimeError as err:
        bad = re.search(r"(No such IPOPT option|Unknown option): ([\w.]+)", str(err))
        if bad is None:
            raise
        raise DataError(
            f"`options`: {bad.group(2)!r} is not an IPOPT or CasADi nlpsol option; see IPOPT's "
            "option list (e.g. 'mu_strategy') or CasADi's nlpsol options (e.g. 'expand')"
        ) from None
    t0 = time.perf_counter()
    sol = S(x0=nlp.x0, lbx=nlp.lbx, ubx=nlp.ubx, lbg=nlp.lbg, ubg=nlp.ubg, **multipliers)
    wall = time.perf_counter() - t0
    st = S.stats()
    w = np.asarray(sol["x"], float).ravel()
    lam = (np.asarray(sol["lam_x"], float).ravel(), np.asarray(sol["lam_g"], float).ravel())
    status = st.get("return_status", "unknown")
    return w, float(sol["f"]), status, bool(st.get("success")), int(st.get("iter_count", -1)), \
        wall, lam  # fmt: skip


def _scipy(nlp: NLP, *, method, options, verbose, max_iter, tol):
    from scipy import optimize as so

    ca = require_casadi()
    x, g = nlp.x, nlp.g
    F = ca.Function("f", [x], [nlp.f, ca.gradient(nlp.f, x)])
    G = ca.Function("g", [x], [g, ca.jacobian(g, x)])

    def fun(w):
        f, df = F(w)
        return float(f), np.asarray(df, float).ravel()

    last = {}

    def _g(w):  # one evaluation per point for the value and the (dense) Jacobian
        key = np.asarray(w, float).tobytes()
        if last.get("key") != key:
            gv, J = G(w)
            last.update(
                key=key, g=np.asarray(gv, float).ravel(), J=np.asarray(ca.densify(J), float)
            )
        return last

    def gval(w):
        return _g(w)["g"]

    def gjac(w):
        return _g(w)["J"]

    it = [0]

    def callback(w, *args):
        it[0] += 1
        if verbose:
            gv = gval(w)
            viol = np.max(np.maximum(np.maximum(nlp.lbg - gv, gv - nlp.ubg), 0.0), initial=0.0)
            print(f"iter {it[0]:4d}  cost {fun(w)[0]: .8e}  max violation {viol:.2e}")

    bounds = so.Bounds(nlp.lbx, nlp.ubx)
    t0 = time.perf_counter()
    if method == "slsqp":
        eq = nlp.lbg == nlp.ubg
        lo = ~eq & np.isfinite(nlp.lbg)
        hi = ~eq & np.isfinite(nlp.ubg)
        cons = []
        if eq.any():
            cons.append({"type": "eq", "fun": lambda w: gval(w)[eq] - nlp.lbg[eq],
                         "jac": lambda w: gjac(w)[eq]})  # fmt: skip
        if lo.any():
            cons.append({"type": "ineq", "fun": lambda w: gval(w)[lo] - nlp.lbg[lo],
                         "jac": lambda w: gjac(w)[lo]})  # fmt: skip
        if hi.any():
            cons.append({"type": "ineq", "fun": lambda w: nlp.ubg[hi] - gval(w)[hi],
                         "jac": lambda w: -gjac(w)[hi]})  # fmt: skip
        opts = {"maxiter": max_iter, "ftol": tol, **(options or {})}
        res = so.minimize(fun, nlp.x0, jac=True, bounds=bounds, constraints=cons,
                          method="SLSQP", options=opts, callback=callback)  # fmt: skip
    else:
        lam = ca.SX.sym("lam", g.shape[0])
        H = ca.Function("H", [x, lam], [ca.hessian(nlp.f, x)[0], ca.hessian(ca.dot(lam, g), x)[0]])
        cons = []
        if g.shape[0]:  # sparse Jacobian and Hessians: trust-constr then projects sparsely
            cons.append(so.NonlinearConstraint(
                gval, nlp.lbg, nlp.ubg, jac=lambda w: G(w)[1].sparse(),
                hess=lambda w, v: H(w, v)[1].sparse()))  # fmt: skip
        opts = {"maxiter": max_iter, "gtol": tol, "xtol": tol * 1e-2, **(options or {})}
        res = so.minimize(fun, nlp.x0, jac=True, hess=lambda w: H(w, np.zeros(g.shape[0]))[0]
            .sparse(), bounds=bounds,
            constraints=cons, method="trust-constr", options=opts, callback=callback)  # fmt: skip
    wall = time.perf_counter() - t0
    iters = int(getattr(res, "nit", it[0]) or it[0])
    return (
        np.asarray(res.x, float),
        float(res.fun),
        str(res.message),
        bool(res.success),
        iters,
        wall,
        None,
    )


def _phase_result(phase, sol) -> PhaseResult:
    ca = require_casadi()
    x, u = ca.SX.sym("x", phase.nx), ca.SX.sym("u", phase.nu)
    acc = ca.Function("acc", [x, u], [phase.accelerations(x, u)])
    n = sol.X.shape[1]
    qdd = np.asarray(acc.map(n)(sol.X, sol.U), float).T if n else np.zeros((0, phase.nv))
    forces, k = {}, phase.nv
    for c in phase.contacts:
        F = np.zeros((n, 3))
        for a in c.axes:
            F[:, _AXES[a]] = sol.U[k]
            k += 1
        forces[c.label] = F
    params = dict(zip(phase.parameter_names, map(float, sol.p), strict=True))
    # muscle-driven phases: joint torques are R^T F + reserves; muscle outputs kept
    muscles = phase.muscle_outputs(sol.X, sol.U) if hasattr(phase, "muscle_outputs") else {}
    return PhaseResult(
        name=phase.name,
        t=sol.t,
        q=sol.X[: phase.nq].T.copy(),
        qd=sol.X[phase.nq : phase.nq + phase.nv].T.copy(),
        qdd=qdd,
        tau=muscles["tau"] if muscles else sol.U[: phase.nv].T.copy(),
        forces=forces,
        duration=float(sol.T),
        parameters=params,
        muscles=muscles,
    )


def solve(
    problem,
    *,
    method="trapezoidal",
    solver: str = "ipopt",
    guess=None,
    hessian: str = "exact",
    options: dict | None = None,
    verbose: bool = True,
    max_iter: int = 1000,
    tol: float = 1e-8,
    report_tol: float = 1e-6,
) -> OptimalControlResult:
    """Transcribe and solve an optimal-control problem.

    Parameters
    ----------
    problem : OptimalControlProblem or Phase
    method : str or Transcription, optional
        ``"trapezoidal"`` (default), ``"hermite-simpson"``, or any name given
        to :func:`~ahbm.optimize.register_transcription` (multiple shooting,
        B-splines), or a Transcription instance (with its options).
    solver : {"ipopt", "slsqp", "trust-constr"}, optional
        IPOPT through CasADi (sparse, exact derivatives, the MUMPS linear
        solver bundled with CasADi), or scipy's SLSQP / trust-constr (dense;
        for small problems).
    guess : optional
        Initial guess: a previous :class:`OptimalControlResult` (interpolated
        onto the new grid; with the same transcription and grid, IPOPT is
        warm-started from its primal and dual solution),
        a list with one entry per phase, or a dict / object with ``t``, ``q``
        (and ``qd``, ``tau``) arrays (e.g. a motion or a simulation result);
        default the linear interpolation of each phase's boundary values.
    hessian : {"exact", "limited-memory"}, optional
        IPOPT's Hessian of the Lagrangian: exact (CasADi's algorithmic
        differentiation) or L-BFGS.
    options : dict, optional
        Extra solver options (IPOPT option names, e.g. ``{"mu_strategy":
        "adaptive"}``, and CasADi's own ``nlpsol`` options ``print_time``,
        ``expand``, ``jit``, ``compiler``, ``jit_options``; scipy ``minimize``
        options).
    verbose : bool, optional
        Print one line per iteration (IPOPT's log or a line per scipy
        iteration) and a summary.
    max_iter : int, optional
    tol : float, optional
        Convergence tolerance of the solver.
    report_tol : float, optional
        Constraints violated by more are listed in ``result.violated``.

    Returns
    -------
    OptimalControlResult

    Raises
    ------
    DataError
        Unknown method or solver, or a bad problem or guess.

    Notes
    -----
    IPOPT (Wächter & Biegler 2006) is a primal-dual interior-point method;
    CasADi supplies the sparse Jacobian and Hessian by algorithmic
    differentiation of the transcribed expressions.

    Examples
    --------
    >>> from ahbm.optimize import Phase, Effort, solve
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(gravity=(0, 0, 0))
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> r = solve(ph, method="hermite-simpson", solver="slsqp", verbose=False)
    >>> r.success, round(r.cost, 6)  # minimum energy: 12 m^2/T^3 (exact for cubic q)
    (True, 12.0)
    """
    problem = check_problem(problem)
    solver = as_choice(solver, "solver", _SOLVERS)
    hessian = as_choice(hessian, "hessian", ("exact", "limited-memory"))
    max_iter = as_int(max_iter, "max_iter", minimum=0)
    tol = as_positive_float(tol, "tol")
    if options is not None and not isinstance(options, dict):
        raise DataError(f"`options` must be a dict of solver options, got {options!r}")
    ca = require_casadi()
    tr = get_transcription(method)
    if getattr(tr, "name", None) == "bspline":  # splines of q only: no further states
        for ph in problem.phases:
            if ph.nx != ph.nq + ph.nv:
                raise DataError(
                    f"phase '{ph.name}' has states besides q and qd ({ph.state_names[-1]!r}, "
                    "...); the B-spline transcription parameterizes the coordinates only: use "
                    "method='trapezoidal', 'hermite-simpson' or 'multiple-shooting'"
                )
    t0 = time.perf_counter()
    nlp = tr.build(problem, guess)
    warm = None
    prev = getattr(guess, "multipliers", None)
    same = (
        isinstance(guess, OptimalControlResult)
        and prev is not None
        and guess.x.size == nlp.x0.size
        and prev[1].size == nlp.lbg.size
        and guess.method == getattr(tr, "name", None)
    )
    if same:
        nlp.x0 = np.clip(guess.x, nlp.lbx, nlp.ubx)  # same transcription: the exact point
        warm = prev
    if solver == "ipopt":
        w, f, status, success, iters, wall, lam = _ipopt(
            nlp,
            hessian=hessian,
            options=options,
            verbose=verbose,
            max_iter=max_iter,
            tol=tol,
            warm=warm,
        )
    else:
        w, f, status, success, iters, wall, lam = _scipy(
            nlp, method=solver, options=options, verbose=verbose, max_iter=max_iter, tol=tol
        )
    build = time.perf_counter() - t0 - wall
    viol, violated = constraint_violations(nlp, w, tol=report_tol)
    success = bool(success and viol <= max(report_tol, 10 * tol))
    terms = {}
    if nlp.cost_terms:
        names = list(nlp.cost_terms)
        vals = ca.Function("terms", [nlp.x], [ca.SX(nlp.cost_terms[k]) for k in names])(w)
        vals = [vals] if len(names) == 1 else vals
        terms = {k: float(v) for k, v in zip(names, vals, strict=True)}
    sols = nlp.decode(w)
    phases = [_phase_result(ph, s) for ph, s in zip(problem.phases, sols, strict=True)]
    res = OptimalControlResult(
        status=status, success=success, cost=f, cost_terms=terms, iterations=iters,
        wall_time=wall, constraint_violation=viol, violated=violated, phases=phases,
        method=getattr(tr, "name", str(method)), solver=solver, model=problem.phases[0].model,
        coordinate_names=list(problem.phases[0].coordinate_names), build_time=build,
        phase_solutions=sols, x=w, multipliers=lam,
    )  # fmt: skip
    if verbose:
        print(res.summary())
    return res
