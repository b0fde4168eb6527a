"""Velocity-level (nonholonomic) constraints ``A(t, q) q̇ = b(t, q)``.

A :class:`VelocityConstraint` restricts the generalized velocities without a
position-level equation behind it: a wheel or a disk rolling without slip, a
knife edge or a skate that cannot slide sideways. It joins a
:class:`~ahbm.dynamics.constraints.ConstraintSet` beside the position-level
(holonomic) constraints, and the constrained dynamics treat its rows exactly
as theirs:

* :func:`~ahbm.dynamics.constrained.constrained_forward_dynamics` stacks
  ``A`` under the holonomic Jacobian ``G`` and ``γ = ḃ − Ȧ q̇`` under the
  holonomic ``γ`` and solves one system for ``q̈`` and the multipliers ``λ``
  (``Aᵀλ`` is the generalized constraint force, e.g. the friction force that
  keeps a wheel from slipping);
* :func:`~ahbm.dynamics.constrained.project_velocities` (and so
  :func:`~ahbm.dynamics.simulation.simulate` after each accepted step)
  projects ``q̇`` onto ``G q̇ = ν`` and ``A q̇ = b`` together, in the
  mass-matrix metric; :func:`~ahbm.dynamics.constrained.project_positions`
  leaves the velocity rows out (they have no position-level equation);
* Baumgarte stabilization damps the velocity residual ``A q̇ − b`` (its
  ``β`` term acts on the holonomic rows only);
* :class:`ahbm.optimize.Phase` imposes ``A q̇ = b`` as a path constraint,
  with the multipliers as controls (:mod:`ahbm.optimize.velocity_constraints`).

In the set the velocity rows report a zero position residual ``g``; their
velocity residual ``A q̇ − b`` is what ``SimulationResult.velocity_residual``
reports with those of the holonomic rows.
"""

from __future__ import annotations

import inspect

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import as_float_array, as_int
from ahbm.dynamics.coordinate_constraints import _times
from ahbm.dynamics.geometric_constraints import Constraint
from ahbm.errors import DataError
from ahbm.kinematics.configuration import integrate_q, neutral_q
from ahbm.kinematics.tree import Model

__all__ = ["VelocityConstraint"]

# steps of the finite-difference γ: ε |q̇|∞ = 2e-3 (4-point central stencil)
_FD_STEP = 2e-3
_FD_NODES = (2.0, 1.0, -1.0, -2.0)
_FD_WEIGHTS = (-1.0, 8.0, -8.0, 1.0)  # h'(0) ≈ Σ w h(c ε) / (12 ε)


def _takes_xp(fn) -> bool:
    """Whether the callable `fn` accepts an ``xp`` keyword (the array namespace)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get("xp")
    return p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)


class VelocityConstraint(Constraint):
    """A velocity-level (nonholonomic) constraint ``A(t, q) q̇ = b(t, q)``.

    Parameters
    ----------
    A : callable or array_like, shape (m, nv)
        ``A(t, q) -> (m, nv)`` for one state ``q`` of shape (nq,) (see
        `vectorized`), or a constant matrix. ``A`` multiplies the generalized
        velocities ``q̇`` (``nv`` columns: the angular velocity of a
        quaternion joint, not the quaternion rates). It may return a nested
        list of rows.
    b : callable or array_like, shape (m,), optional
        ``b(t, q) -> (m,)``, or a constant; zero by default.
    gamma : callable, optional
        ``gamma(t, q, qd) -> (m,)``: the acceleration right-hand side
        ``γ = ḃ − Ȧ q̇`` (``ḃ`` and ``Ȧ`` total time derivatives along the
        motion). By default a fourth-order central difference along
        ``(t + ε, q ⊕ ε q̇)`` (see Notes).
    size : int, optional
        Number of equations ``m``; by default the rows of ``A`` at the
        model's neutral configuration and ``t = 0``.
    rheonomic : bool, optional
        Whether ``A`` or ``b`` depend explicitly on time (then the
        finite-difference ``γ`` steps the time too).
    vectorized : bool, optional
        The callables take a batch: ``q`` of shape (N, nq), ``qd`` (N, nv)
        and ``t`` of shape (N,), and return (N, m, nv), (N, m) and (N, m).
        By default they are called once per state.
    name : str, optional

    Notes
    -----
    The rows join those of the holonomic constraints
    (:mod:`ahbm.dynamics.constraints`): ``G = A``, ``ν = b``, ``γ = ḃ − Ȧ q̇``
    (from ``d/dt (A q̇ − b) = A q̈ + Ȧ q̇ − ḃ = 0``), and ``g = 0`` (no
    position-level equation). Without `gamma`, with ``h(ε) = A(t + ε δ,
    q ⊕ ε q̇) q̇ − b(t + ε δ, q ⊕ ε q̇)`` (``δ = 1`` if rheonomic, else 0; the
    curve ``q ⊕ ε q̇`` has zero generalized acceleration, so ``h'(0) = Ȧ q̇ −
    ḃ``)::

        γ = −h'(0) ≈ −[h(−2ε) − 8 h(−ε) + 8 h(ε) − h(2ε)] / (12 ε),
        ε = 2·10⁻³ / max(1, |q̇|∞)

    (truncation error O(ε⁴), about 1e-11 relative for functions varying on
    the scale of a radian or a metre). Callables may accept an ``xp``
    keyword: numeric evaluations pass ``xp=numpy``; :mod:`ahbm.optimize`
    passes ``xp=casadi`` and CasADi symbols for ``t`` and ``q``, so that one
    function serves both (``xp.sin``, ``xp.cos``, ... exist in both).

    Examples
    --------
    A body on a planar joint that cannot slide sideways (a knife edge,
    ``−sin θ ẋ + cos θ ẏ = 0``):

    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.dynamics import ConstraintSet
    >>> m = Model(gravity=(0, 0, 0))
    >>> _ = m.add_body("skate", "ground", "planar", mass=1.0, inertia=np.eye(3) * 0.1)
    >>> c = VelocityConstraint(lambda t, q, xp=np: [[-xp.sin(q[2]), xp.cos(q[2]), 0.0]])
    >>> ConstraintSet([c]).jacobian(m, [0.0, 0.0, np.pi / 2]).round(12)
    array([[-1.,  0.,  0.]])
    """

    type = "velocity"
    holonomic = False

    def __init__(self, A, b=None, *, gamma=None, size=None, rheonomic=False, vectorized=False,
                 name=None):  # fmt: skip
        self.name = name or "velocity"
        self.A = self._function_or_constant(A, "A", 2)
        self.b = None if b is None else self._function_or_constant(b, "b", 1)
        if gamma is not None and not callable(gamma):
            raise DataError(
                f"velocity constraint '{self.name}': `gamma` must be callable "
                f"gamma(t, q, qd) -> (m,), got {type(gamma).__name__}"
            )
        self.gamma_function = gamma
        self.rheonomic = bool(rheonomic)
        self.vectorized = bool(vectorized)
        self.m = None if size is None else as_int(size, "size", minimum=1)
        rows = [np.shape(x)[0] for x in (self.A, self.b) if isinstance(x, np.ndarray)]
        for r in rows:
            if self.m is None:
                self.m = r
            elif r != self.m:
                raise DataError(
                    f"velocity constraint '{self.name}': `A` and `b` have different numbers of "
                    f"rows ({rows}) or disagree with `size` ({size}); give m rows in each"
                )
        self._xp = {k: callable(f) and _takes_xp(f) for k, f in (("A", self.A), ("b", self.b),
                                                                  ("gamma", gamma))}  # fmt: skip

    def _function_or_constant(self, value, what, ndim):
        if callable(value):
            return value
        arr = as_float_array(value, what)
        if arr.ndim != ndim or arr.size == 0:
            shape = "(m, nv)" if ndim == 2 else "(m,)"
            raise DataError(
                f"velocity constraint '{self.name}': `{what}` must be a callable or a constant "
                f"array of shape {shape}, got shape {arr.shape}"
            )
        return arr

    # -- sizes and checks -----------------------------------------------------
    def size(self, model: Model) -> int:
        if self.m is None:  # rows of A at the neutral configuration
            q0 = neutral_q(model)
            val = self._evaluate("A", self.A, np.zeros(1), q0[None], None, None)
            self.m = val.shape[1]
        return self.m

    def validate(self, model: Model) -> None:
        """Check the rows (and a constant ``A``'s columns) against `model` (DataError).

        The functions' shapes and values are checked where they are
        evaluated (the error names the function and the time).
        """
        m = self.size(model)
        if isinstance(self.A, np.ndarray) and self.A.shape != (m, model.nv):
            raise DataError(
                f"velocity constraint '{self.name}': `A` has shape {self.A.shape}, expected "
                f"({m}, {model.nv}) (one column per generalized velocity of model "
                f"'{model.name}')"
            )

    def _call(self, what, fn, t, q, qd):
        """The user's function `what` at one state or a batch (vectorized)."""
        kw = {"xp": np} if self._xp[what] else {}
        args = (t, q) if qd is None else (t, q, qd)
        return fn(*args, **kw)

    def _evaluate(self, what, fn, t, q, qd, shape):
        """`fn` ((N,) times, (N, nq) states, (N, nv) or None) -> (N, *shape), checked.

        `shape` None: the rows are inferred (``A`` only, for :meth:`size`).
        """
        N = q.shape[0]
        if isinstance(fn, np.ndarray):
            out = np.broadcast_to(fn, (N,) + fn.shape)
        elif self.vectorized:
            out = self._checked(what, self._call(what, fn, t, q, qd), shape, batch=N, t=t)
        else:
            out = np.stack([
                self._checked(what, self._call(what, fn, float(t[n]), q[n],
                                               None if qd is None else qd[n]), shape, t=t[n:n + 1])
                for n in range(N)
            ])  # fmt: skip
        if shape is not None and out.shape[1:] != shape:
            raise DataError(
                f"velocity constraint '{self.name}': `{what}` has shape {out.shape[1:]}, "
                f"expected {shape}"
            )
        return out

    def _checked(self, what, value, shape, *, batch=None, t=None):
        """The value of the user's `what` as float64, with its shape and finiteness checked."""
        label = f"velocity constraint '{self.name}': `{what}`"
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as err:
            raise DataError(f"{label} must return numbers, got {type(value).__name__}") from err
        infer = shape is None  # the rows of A at the neutral configuration (values unchecked)
        if infer:
            if arr.ndim != 2 + (batch is not None):
                raise DataError(
                    f"{label} must return a matrix of shape (m, nv), got shape {arr.shape}"
                )
            shape = arr.shape[-2:]
        expected = shape if batch is None else (batch,) + tuple(shape)
        if arr.shape != tuple(expected):
            raise DataError(
                f"{label} returned shape {arr.shape}, expected {tuple(expected)} "
                "(A: m rows and one column per generalized velocity nv; b and gamma: m values)"
            )
        if not infer and not np.all(np.isfinite(arr)):
            when = "" if t is None else f" at t = {float(np.ravel(t)[0]):.6g} s"
            raise DataError(
                f"{label} returned non-finite values{when}; the constraint must be defined at "
                "every state the simulation reaches"
            )
        return arr

    # -- the rows of the constraint set ----------------------------------------
    def _frames(self, kin, t):
        return _times(t, kin), _st.q_bl(kin).T

    def matrices(self, model: Model, q, *, t=0.0):
        """``A`` and ``b`` at a batch of states (checked arrays).

        Parameters
        ----------
        model : Model
        q : array_like, shape (N, nq)
        t : float or array_like, shape (N,), optional

        Returns
        -------
        A : ndarray, shape (N, m, nv)
        b : ndarray, shape (N, m)
        """
        q = np.atleast_2d(as_float_array(q, "q"))
        tt = np.broadcast_to(np.asarray(t, dtype=float), q.shape[:1]).copy()
        m, nv = self.size(model), model.nv
        A = self._evaluate("A", self.A, tt, q, None, (m, nv))
        if self.b is None:
            return A, np.zeros((q.shape[0], m))
        return A, self._evaluate("b", self.b, tt, q, None, (m,))

    def call(self, t, q, *, xp=np):
        """``(A, b)`` as the functions return them for one state, in any array namespace.

        The raw values, unchecked (``b`` None when it is zero): with
        ``xp=casadi`` and CasADi symbols ``t`` and ``q`` (the functions get
        ``xp`` if they accept it), expressions for :mod:`ahbm.optimize`.
        Constants come back as numpy arrays.
        """
        out = []
        for what, fn in (("A", self.A), ("b", self.b)):
            if fn is None or isinstance(fn, np.ndarray):
                out.append(fn)
            else:
                out.append(fn(t, q, xp=xp) if self._xp[what] else fn(t, q))
        return tuple(out)

    def _g(self, kin, t):
        return np.zeros((self.size(kin.model), kin.n_frames))

    def _G(self, kin, t):
        tt, q = self._frames(kin, t)
        A = self._evaluate("A", self.A, tt, q, None, (self.size(kin.model), kin.model.nv))
        return np.moveaxis(A, 0, -1)

    def _nu(self, kin, t):
        m = self.size(kin.model)
        if self.b is None:
            return np.zeros((m, kin.n_frames))
        tt, q = self._frames(kin, t)
        return self._evaluate("b", self.b, tt, q, None, (m,)).T

    def _gamma(self, kin, t):
        tt, q = self._frames(kin, t)
        v = _st.qd_bl(kin).T
        m = self.size(kin.model)
        if self.gamma_function is not None:
            return self._evaluate("gamma", self.gamma_function, tt, q, v, (m,)).T
        return self._gamma_fd(kin.model, tt, q, v).T

    def _gamma_fd(self, model, t, q, v):
        """``γ = −h'(0)`` by the 4-point central difference (class Notes); (N, m)."""
        m, nv = self.size(model), model.nv
        eps = _FD_STEP / np.maximum(1.0, np.abs(v).max(axis=-1))  # (N,)
        acc = np.zeros((q.shape[0], m))
        for c, w in zip(_FD_NODES, _FD_WEIGHTS, strict=True):
            qc = integrate_q(model, q, v, c * eps)
            tc = t + c * eps if self.rheonomic else t
            A = self._evaluate("A", self.A, tc, qc, None, (m, nv))
            h = np.einsum("nij,nj->ni", A, v)
            if self.b is not None:
                h = h - self._evaluate("b", self.b, tc, qc, None, (m,))
            acc += w * h
        return -acc / (12.0 * eps[:, None])

    def _rows_one(self, model, t, q, qd=None):
        """``A`` (m, nv) and ``γ`` (m,) (None without `qd`) of one state (nq,), (nv,)."""
        m, nv = self.size(model), model.nv
        tt, qb = np.array([float(t)]), q[None]
        A = self._evaluate("A", self.A, tt, qb, None, (m, nv))[0]
        if qd is None:
            return A, None
        if self.gamma_function is not None:
            return A, self._evaluate("gamma", self.gamma_function, tt, qb, qd[None], (m,))[0]
        return A, self._gamma_fd(model, tt, qb, qd[None])[0]

    def _b_one(self, model, t, q):
        """``b`` (m,) of one state."""
        if self.b is None:
            return np.zeros(self.size(model))
        return self._evaluate("b", self.b, np.array([float(t)]), q[None], None,
                              (self.size(model),))[0]  # fmt: skip

    def residual(self, model: Model, q, qd, *, t=0.0) -> np.ndarray:
        """``A q̇ − b`` at a batch of states, shape (N, m).

        Examples
        --------
        >>> from ahbm.kinematics.tree import Model
        >>> m = Model(gravity=(0, 0, 0))
        >>> _ = m.add_body("skate", "ground", "planar", mass=1.0, inertia=np.eye(3) * 0.1)
        >>> c = VelocityConstraint(lambda t, q: [[-np.sin(q[2]), np.cos(q[2]), 0.0]])
        >>> c.residual(m, [[0.0, 0.0, 0.0]], [[1.0, 0.5, 0.0]])
        array([[0.5]])
        """
        A, b = self.matrices(model, q, t=t)
        qd = np.atleast_2d(as_float_array(qd, "qd"))
        if qd.shape[-1] != model.nv:
            raise DataError(f"Expected `qd` to have shape (N, {model.nv}), got {qd.shape}")
        return np.einsum("nij,nj->ni", A, qd) - b

    def __repr__(self) -> str:
        return f"VelocityConstraint(name={self.name!r})"
