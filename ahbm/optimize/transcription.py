"""The transcription base class: from an optimal-control problem to a nonlinear program.

A transcription turns the continuous phases of an
:class:`~ahbm.optimize.problem.OptimalControlProblem` into a finite
nonlinear program (NLP) ``min f(w)  s.t.  lbg ≤ g(w) ≤ ubg, lbx ≤ w ≤ ubx``.
:class:`Transcription` does everything that does not depend on the
discretization — durations and parameters as variables, initial guesses,
path constraints at the grid points, boundary conditions, Mayer terms,
grid-wide terms (jerk, waypoints), phase links, periodicity, symmetry,
whole-problem constraints, constraint names, decoding — and asks a subclass
only for :meth:`Transcription.discretize`: the variables of one phase, its
dynamics defects and the quadrature of its running cost. Subclasses are
registered by name with :func:`register_transcription` and chosen by
``solve(problem, method=name)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ahbm.errors import DataError
from ahbm.optimize.phase import Phase
from ahbm.optimize.problem import OptimalControlProblem, check_problem
from ahbm.optimize.symbolic import require_casadi

__all__ = [
    "NLP",
    "PhaseGrid",
    "PhaseSolution",
    "Variables",
    "Transcription",
    "register_transcription",
    "transcriptions",
    "get_transcription",
]

_REGISTRY: dict = {}


@dataclass
class PhaseSolution:
    """One phase of a decoded NLP point: node times, states, controls, duration, parameters.

    Attributes
    ----------
    t : ndarray, shape (n,)
        Node times from the start of the problem, s.
    X : ndarray, shape (nx, n)
    U : ndarray, shape (nu, n)
    T : float
        Duration, s.
    p : ndarray, shape (np,)
    """

    t: np.ndarray
    X: np.ndarray
    U: np.ndarray
    T: float
    p: np.ndarray


@dataclass
class NLP:
    """A transcribed problem for CasADi's ``nlpsol`` (or scipy).

    Attributes
    ----------
    x : casadi.SX, (n, 1)
        Decision variables.
    lbx, ubx, x0 : ndarray, shape (n,)
        Bounds and initial guess.
    f : casadi.SX
        Objective (the sum of ``cost_terms``).
    g : casadi.SX, (m, 1)
        Constraints with bounds ``lbg``, ``ubg`` (ndarray, (m,)) and one name
        per row in ``g_names``.
    x_names : list of str
        Name of each variable.
    cost_terms : dict
        Objective terms (name -> scalar expression).
    decode : callable
        ``decode(w) -> list of PhaseSolution``.
    """

    x: object
    lbx: np.ndarray
    ubx: np.ndarray
    x0: np.ndarray
    f: object
    g: object
    lbg: np.ndarray
    ubg: np.ndarray
    g_names: list
    x_names: list
    cost_terms: dict
    decode: object = None
    info: dict = field(default_factory=dict)


class Variables:
    """Collects decision variables with names, bounds and guesses (a helper for subclasses)."""

    def __init__(self):
        self.ca = require_casadi()
        self.blocks, self.lb, self.ub, self.guess, self.names = [], [], [], [], []

    def add(self, name, shape, lb=-np.inf, ub=np.inf, guess=0.0, row_names=None):
        """A new variable block (``shape`` (rows, cols)); bounds and guess broadcast to it.

        Per-row bounds (rows,) hold for every column. Returns the SX matrix.
        """
        rows, cols = (shape, 1) if np.ndim(shape) == 0 else shape
        v = self.ca.SX.sym(name, rows, cols)
        full = (rows, cols)

        def _b(b):
            b = np.asarray(b, float)
            if b.ndim == 1 and b.size == rows:
                b = b[:, None]
            return np.broadcast_to(b, full)

        # column-major, as casadi vec()
        self.blocks.append(self.ca.vec(v))
        self.lb.append(_b(lb).ravel(order="F"))
        self.ub.append(_b(ub).ravel(order="F"))
        self.guess.append(_b(guess).ravel(order="F"))
        rn = row_names or [str(i) for i in range(rows)]
        self.names += [f"{name}[{c}] {rn[r]}" for c in range(cols) for r in range(rows)]
        return v

    def vector(self):
        ca = self.ca
        x = ca.vertcat(*self.blocks) if self.blocks else ca.SX(0, 1)
        cat = lambda a: np.concatenate(a) if a else np.zeros(0)  # noqa: E731
        return x, cat(self.lb), cat(self.ub), cat(self.guess)


@dataclass
class PhaseGrid:
    """What :meth:`Transcription.discretize` returns for one phase.

    Attributes
    ----------
    t : list
        Times of the grid points (expressions when the duration is free).
    X, U : casadi.SX, (nx, n), (nu, n)
        States and controls at the grid points (path constraints are imposed
        at every column; results are reported there).
    costs : dict
        Quadrature of each running-cost term.
    constraints : list of (g, lb, ub, names)
        The dynamics defects (and any transcription-specific constraints).
    qdd : casadi.SX, (nv, n), optional
        Accelerations at the grid points when the transcription has them
        directly (B-splines); default None: :meth:`Phase.accelerations` of
        ``X``, ``U``.

    Notes
    -----
    A term of ``costs`` replaces the grid-wide term of the same name from
    :meth:`Phase.node_terms` (e.g. an exact :class:`~ahbm.optimize.objectives.Jerk`
    integral instead of finite differences).
    """

    t: list
    X: object
    U: object
    costs: dict
    constraints: list
    qdd: object = None


class Guess:
    """Initial guess of one phase: ``guess(t_local) -> (X, U)``; ``duration`` its length (s)."""

    def __init__(self, fun, duration: float, source_duration: float | None = None):
        self.fun = fun
        self.duration = float(duration)
        self.scale = 1.0 if not source_duration else float(source_duration) / self.duration

    def __call__(self, t_local):
        return self.fun(np.asarray(t_local, float) * self.scale)


def _interp_cols(t_from, V, t_to):
    V = np.atleast_2d(np.asarray(V, float))
    return np.stack([np.interp(t_to, t_from, row) for row in V]) if V.size else V


class Transcription:
    """Base class of the transcriptions (subclass it and implement :meth:`discretize`).

    Parameters
    ----------
    **options
        Transcription options (stored in ``self.options``).
    """

    name = "base"

    def __init__(self, **options):
        self.options = options

    def discretize(self, phase: Phase, index: int, var: Variables, T, p, t0, guess) -> PhaseGrid:
        """Variables, dynamics defects and cost quadrature of one phase.

        Parameters
        ----------
        phase : Phase
        index : int
            Phase number (for variable names).
        var : Variables
            Add the phase's variables here.
        T, p, t0 : expressions
            Duration, parameters and start time of the phase.
        guess : Guess
            ``guess(t_local) -> (X (nx, n), U (nu, n))`` at local times (s);
            ``guess.duration`` is the guessed duration (s).
        """
        raise NotImplementedError

    # ---- shared machinery
    @staticmethod
    def phase_functions(phase: Phase):
        """CasADi Functions of one phase, built once: ``ode``, ``cost``, ``path``.

        ``ode(x, u, p) -> ẋ``; ``cost(x, u, p, t) -> terms`` (one output per
        running-cost term, names in ``cost.name_out()``); ``path(x, u, p, t) ->
        g`` with bounds and names in the returned dict.
        """
        ca = require_casadi()
        x, u = ca.SX.sym("x", phase.nx), ca.SX.sym("u", phase.nu)
        p, t = ca.SX.sym("p", phase.np), ca.SX.sym("t")
        ode = ca.Function("ode", [x, u, p], [phase.ode(x, u, p)], ["x", "u", "p"], ["xdot"])
        terms = phase.running_cost_terms(x, u, p, t)
        names = list(terms)
        cost = ca.Function("cost", [x, u, p, t], [ca.SX(terms[k]) for k in names] or [ca.SX(0)],
                           ["x", "u", "p", "t"], names or ["zero"])  # fmt: skip
        g, lb, ub, gn = phase.path_constraints(x, u, p, t)
        path = ca.Function("path", [x, u, p, t], [g], ["x", "u", "p", "t"], ["g"])
        return {"ode": ode, "cost": cost, "cost_names": names, "path": path,
                "path_bounds": (lb, ub), "path_names": gn}  # fmt: skip

    def _guess_function(self, phase: Phase, spec, t_offset):
        """``guess(t_local) -> (X, U)`` and the parameter guess from a guess spec."""
        if spec is None:
            spec = phase.guess
        if spec is None:

            def g(tl):
                X, U, _ = phase.initial_guess(tl)
                return X, U

            tl = np.linspace(0.0, float(np.mean(phase.duration_bounds)), 5)
            return g, phase.initial_guess(tl)[2], None
        if isinstance(spec, PhaseSolution):
            ts = spec.t - spec.t[0]
            return (lambda tl: (_interp_cols(ts, spec.X, tl), _interp_cols(ts, spec.U, tl)),
                    np.asarray(spec.p, float), float(spec.T))  # fmt: skip
        t = getattr(spec, "t", None) if not isinstance(spec, dict) else spec.get("t")
        get = spec.get if isinstance(spec, dict) else (lambda k: getattr(spec, k, None))
        q, qd, tau = get("q"), get("qd"), get("tau")
        if t is None or q is None:
            raise DataError(
                "a guess must be a previous result, a PhaseSolution, or a dict / object with "
                f"'t' and 'q' (and optionally 'qd', 'tau'); got {type(spec).__name__}"
            )
        t = np.asarray(t, float)
        t = t - t[0]
        q = np.asarray(q, float).reshape(t.size, -1)
        if q.shape[1] != phase.nq:
            raise DataError(f"guess `q` must have {phase.nq} columns, got {q.shape[1]}")
        qd = np.gradient(q, t, axis=0) if qd is None else np.asarray(qd, float).reshape(t.size, -1)
        X = np.concatenate([q, qd], axis=1).T
        if X.shape[0] < phase.nx:  # further states (muscle activations): the phase's default
            X = np.concatenate([X, phase.initial_guess(t)[0][X.shape[0] :]])
        U0 = phase.initial_guess(t)[1]
        if tau is not None:
            U0[: phase.nv] = np.asarray(tau, float).reshape(t.size, -1).T
        if phase.dynamics == "implicit":
            U0[phase.nv + phase.nf :] = np.gradient(qd, t, axis=0).T
        p0 = phase.parameter_guess(q[0])  # contact anchors where the guess puts the points
        return (lambda tl: (_interp_cols(t, X, tl), _interp_cols(t, U0, tl))), p0, float(t[-1])

    def build(self, problem: OptimalControlProblem, guess=None) -> NLP:
        """Transcribe `problem` into an :class:`NLP`.

        Parameters
        ----------
        problem : OptimalControlProblem or Phase
        guess : None, OptimalControlResult, list or dict, optional
            Initial guess: None (each phase's ``guess`` or
            :meth:`Phase.initial_guess`), a previous result (its phases, by
            position), a list with one entry per phase, or one dict/object
            with ``t``, ``q`` (and ``qd``, ``tau``) for a single phase.
        """
        ca = require_casadi()
        problem = check_problem(problem)
        phases = problem.phases
        specs = self._split_guess(guess, len(phases))
        var = Variables()
        g_items, costs = [], {}
        x0s, xfs, Ts, ps, grids, t0 = [], [], [], [], [], 0.0
        for k, ph in enumerate(phases):
            gfun, pguess, Tguess = self._guess_function(ph, specs[k], t0)
            lo, hi = ph.duration_bounds
            if ph.free_duration:
                Tg = float(np.clip(Tguess if Tguess else 0.5 * (lo + hi), lo, hi))
                T = var.add(f"{ph.name}.T", 1, lo, hi, Tg, ["T"])
            else:
                T = ca.SX(lo)
            Tg = lo
            plo, phi = ph.parameter_bounds()
            p = (var.add(f"{ph.name}.p", ph.np, plo, phi, np.clip(pguess, plo, phi),
                         ph.parameter_names) if ph.np else ca.SX(0, 1))  # fmt: skip
            grid = self.discretize(ph, k, var, T, p, t0, Guess(gfun, Tg, Tguess))
            fns = self.phase_functions(ph)
            n = grid.X.shape[1]
            lb, ub = fns["path_bounds"]
            if len(fns["path_names"]):
                skip = _continued_contact_rows(problem, k, fns["path_names"])
                for j in range(n):
                    gj = fns["path"](grid.X[:, j], grid.U[:, j], p, grid.t[j])
                    names = [f"{ph.name}[{j}] {s}" for s in fns["path_names"]]
                    if j == 0 and skip:
                        keep = [i for i in range(len(names)) if i not in skip]
                        gj, names = gj[keep], [names[i] for i in keep]
                        g_items.append((gj, np.asarray(lb)[keep], np.asarray(ub)[keep], names))
                    else:
                        g_items.append((gj, lb, ub, names))
            X0, Xf = grid.X[:, 0], grid.X[:, n - 1]
            A = grid.qdd
            g_items.append(ph.boundary_constraints(
                X0, Xf, T, p, u0=grid.U[:, 0], uf=grid.U[:, n - 1],
                qdd0=None if A is None else A[:, 0], qddf=None if A is None else A[:, n - 1],
            ))  # fmt: skip
            nc, ng = ph.node_terms(grid.t, grid.X, grid.U, p)
            g_items.append(ng)
            nc = {k: v for k, v in nc.items() if k not in grid.costs}  # exact terms win
            for name, c in {**grid.costs, **ph.terminal_cost_terms(X0, Xf, T, p), **nc}.items():
                key = name if len(phases) == 1 else f"{ph.name}.{name}"
                costs[key] = costs.get(key, 0.0) + c
            g_items += grid.constraints
            x0s.append(X0)
            xfs.append(Xf)
            Ts.append(T)
            ps.append(p)
            grids.append(grid)
            t0 = t0 + T
        extra, glob = problem.global_constraints(x0s, xfs, Ts, ps)
        costs.update(extra)
        if problem.per_duration:
            total = sum(Ts[1:], Ts[0])
            costs = {k: c / total for k, c in costs.items()}
        g_items.append(glob)
        w, lbx, ubx, w0 = var.vector()
        g_items = [it for it in g_items if it[0].shape[0]]
        g = ca.vertcat(*[it[0] for it in g_items]) if g_items else ca.SX(0, 1)

        def _bnd(i):
            return (np.concatenate([np.broadcast_to(np.asarray(it[i], float), (it[0].shape[0],))
                                    for it in g_items]) if g_items else np.zeros(0))  # fmt: skip

        lbg, ubg = _bnd(1), _bnd(2)
        names = [s for it in g_items for s in it[3]]
        f = sum((ca.SX(c) for c in costs.values()), ca.SX(0))
        outs = []
        for k, grid in enumerate(grids):
            outs += [ca.vertcat(*[ca.SX(tj) for tj in grid.t]), grid.X, grid.U, ca.SX(Ts[k]), ps[k]]
        dec = ca.Function("decode", [w], outs)

        def decode(wv):
            vals = [np.asarray(v, float) for v in dec(np.asarray(wv, float))]
            out = []
            for k in range(len(grids)):
                t, X, U, T, p = vals[5 * k : 5 * k + 5]
                out.append(PhaseSolution(t.ravel(), X, U, float(T.ravel()[0]), p.ravel()))
            return out

        w0 = np.clip(w0, lbx, ubx)
        return NLP(w, lbx, ubx, w0, f, g, lbg, ubg, names, var.names, costs, decode,
                   {"method": self.name})  # fmt: skip

    @staticmethod
    def _split_guess(guess, n):
        if guess is None:
            return [None] * n
        phases = getattr(guess, "phase_solutions", None)
        if phases is not None:
            if len(phases) != n:
                raise DataError(f"the guess result has {len(phases)} phases, the problem {n}")
            return list(phases)
        if isinstance(guess, (list, tuple)):
            if len(guess) != n:
                raise DataError(f"`guess` needs one entry per phase ({n}), got {len(guess)}")
            return list(guess)
        if n != 1:
            raise DataError(f"`guess` for a {n}-phase problem must be a list or a previous result")
        return [guess]


def _continued_contact_rows(problem: OptimalControlProblem, k: int, names) -> set:
    """Rows of phase k's first-node path constraints that hold already at the junction.

    A contact point that stays on the ground across a junction (the same
    body point in contact at the end of the phase before; for the first
    phase of a periodic problem, at the end of the last phase; of a symmetric
    one, its mirror image there) is not held on the ground again at the
    shared state: the repeated height rows would be linearly dependent (LICQ
    fails and the interior-point steps break down). Its horizontal no-slip
    rows stay: they define the phase's own anchor.
    """
    phases = problem.phases
    ph = phases[k]
    if not ph.contacts:
        return set()
    prev, mirror = None, None
    if k > 0:
        prev = phases[k - 1]
    elif problem.periodic is not None:
        prev = phases[-1]
    elif problem.symmetric is not None:
        prev = phases[-1]
        mirror = _mirror_bodies(problem, ph)
    if prev is None:
        return set()
    before = {(prev.model.body_index(c.body), tuple(np.asarray(c.point, float)))
              for c in prev.contacts}  # fmt: skip
    skip = set()
    for c in ph.contacts:
        b = ph.model.body_index(c.body)
        b = mirror.get(b, b) if mirror is not None else b
        if (b, tuple(np.asarray(c.point, float))) in before:
            skip |= {i for i, n in enumerate(names) if n == f"{c.label} on ground"}
    return skip


def _mirror_bodies(problem: OptimalControlProblem, ph: Phase) -> dict:
    """Body -> its mirror body from the Symmetry's coordinate pairs (same joint coordinates)."""
    perm, _, _, _ = problem.symmetry_map(ph)
    m = ph.model
    out = {}
    for i in range(m.n_bodies):
        k, nv = int(m.v_index[i]), int(m.joint_nv[i])
        if nv == 0:
            continue
        image = {int(perm[j]) for j in range(k, k + nv)}
        for b in range(m.n_bodies):
            kb, nb = int(m.v_index[b]), int(m.joint_nv[b])
            if nb == nv and set(range(kb, kb + nb)) == image:
                out[i] = b
    return out


def register_transcription(name: str, cls) -> None:
    """Make a :class:`Transcription` subclass available as ``solve(..., method=name)``.

    Parameters
    ----------
    name : str
    cls : type
        A subclass of :class:`Transcription`.

    Examples
    --------
    >>> class Mine(Transcription):
    ...     name = "mine"
    >>> register_transcription("mine", Mine)
    >>> "mine" in transcriptions()
    True
    >>> _ = _REGISTRY.pop("mine")
    """
    if not isinstance(name, str) or not name:
        raise DataError(f"a transcription name must be a non-empty string, got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Transcription)):
        raise DataError(f"`cls` must be a Transcription subclass, got {cls!r}")
    _REGISTRY[name] = cls


#: modules whose import registers ahbm's own transcriptions (loaded on first lookup,
#: as ``ahbm.optimize`` loads its modules lazily)
_BUILTIN = ("ahbm.optimize.collocation", "ahbm.optimize.shooting", "ahbm.optimize.bspline")


def _load_builtin() -> None:
    import importlib

    for module in _BUILTIN:
        importlib.import_module(module)


def transcriptions() -> list[str]:
    """Names of the registered transcriptions."""
    _load_builtin()
    return sorted(_REGISTRY)


def get_transcription(method, **options) -> Transcription:
    """A transcription instance by name (or the instance itself)."""
    if isinstance(method, Transcription):
        return method
    if method not in _REGISTRY:
        _load_builtin()
    if method not in _REGISTRY:
        raise DataError(f"unknown `method` {method!r}; use one of {transcriptions()}")
    return _REGISTRY[method](**options)
