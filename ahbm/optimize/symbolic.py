"""Symbolic dynamics of a :class:`~ahbm.kinematics.tree.Model` on CasADi.

The reference recursions of :mod:`ahbm.dynamics.reference` (forward
kinematics, RNEA, CRBA, ABA) are written against an ``ops`` object (an array
namespace). :class:`CasadiOps` is that namespace for CasADi ``SX``/``MX``
symbols, so the *same* code that the numeric kernels are tested against
builds the symbolic expressions: there is no second, hand-written symbolic
copy of the dynamics. :func:`symbolic_dynamics` compiles them into CasADi
``Function`` objects (forward and inverse dynamics, mass matrix, bias forces,
point positions and velocities, centre of mass, the ground reaction the
motion needs and its zero-moment point), which the transcriptions of
:mod:`ahbm.optimize` call at every node.

CasADi is the ``optimize`` extra (``pip install "ahbm[optimize]"``);
:func:`require_casadi` returns the module or raises
:class:`~ahbm.errors.MissingDependencyError` naming the extra.

References
----------
J. A. E. Andersson, J. Gillis, G. Horn, J. B. Rawlings, M. Diehl, "CasADi: a
software framework for nonlinear optimization and optimal control",
*Mathematical Programming Computation* 11 (2019) 1–36.
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer, 2008.
"""

from __future__ import annotations

import functools

import numpy as np

from ahbm.dynamics import reference
from ahbm.errors import DataError, MissingDependencyError, ModelError
from ahbm.kinematics import functions as fn
from ahbm.kinematics.tree import Model

__all__ = ["require_casadi", "CasadiOps", "SymbolicDynamics", "symbolic_dynamics"]

_INSTALL = 'pip install "ahbm[optimize]"'


def require_casadi():
    """Return the ``casadi`` module, or raise an error naming the extra that installs it.

    Returns
    -------
    module
        The ``casadi`` module (with IPOPT bundled in its wheel).

    Raises
    ------
    MissingDependencyError
        CasADi is not installed; the message gives the install command
        ``pip install "ahbm[optimize]"``.

    Examples
    --------
    >>> ca = require_casadi()
    >>> ca.SX.sym("x").shape
    (1, 1)
    """
    try:
        import casadi
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(
            "ahbm.optimize needs CasADi (optimal control with IPOPT), which is not installed; "
            f"install the optimize extra: {_INSTALL}"
        ) from err
    return casadi


class CasadiOps:
    """The array namespace (``ops``) of :mod:`ahbm.dynamics.reference` on CasADi symbols.

    Vectors are CasADi column matrices; model constants become ``DM``. Any
    symbol type works (``SX`` by default, ``MX`` for large models); the
    functions of a ``custom`` joint (:mod:`ahbm.kinematics.functions`) are
    written as CasADi expressions that equal their numeric values and first
    and second derivatives (piecewise polynomials with ``if_else`` over the
    knots, linear extrapolation outside as in OpenSim).

    Parameters
    ----------
    symbol : {"SX", "MX"}, optional
        CasADi symbol class of the zeros and identities the recursions make.

    Examples
    --------
    >>> from ahbm.dynamics import reference
    >>> from ahbm.kinematics.tree import Model
    >>> ca = require_casadi()
    >>> m = Model()
    >>> _ = m.add_body("rod", "ground", {"type": "revolute", "axis": [0, 1, 0]},
    ...                mass=1.0, com=[0.5, 0, 0])
    >>> q, z = ca.SX.sym("q"), ca.SX.zeros(1)
    >>> tau = reference.rnea(m, q, z, z, ops=CasadiOps())
    >>> float(ca.Function("g", [q], [tau])(0.0))  # m g l/2 about +y
    -4.905
    """

    def __init__(self, symbol: str = "SX"):
        self.ca = require_casadi()
        if symbol not in ("SX", "MX"):
            raise DataError(f"`symbol` must be 'SX' or 'MX', got {symbol!r}")
        self.sym = getattr(self.ca, symbol)

    def _m(self, x):
        ca = self.ca
        return x if isinstance(x, (ca.SX, ca.MX, ca.DM)) else ca.DM(float(x))

    def input(self, x, shape, name):
        ca = self.ca
        if isinstance(x, (ca.SX, ca.MX, ca.DM)):
            want = (shape[0], 1) if len(shape) == 1 else tuple(shape)
            if x.shape != want and not (len(shape) == 1 and x.shape == (1, shape[0])):
                raise DataError(f"Expected `{name}` to have shape {tuple(shape)}, got {x.shape}")
            return x if x.shape == want else x.T
        arr = np.asarray(x, dtype=float)
        if arr.shape != tuple(shape):
            raise DataError(f"Expected `{name}` to have shape {tuple(shape)}, got {arr.shape}")
        return ca.DM(arr)

    def const(self, x):
        return self.ca.DM(np.asarray(x, dtype=float))

    def sin(self, x):
        return self.ca.sin(x)

    def cos(self, x):
        return self.ca.cos(x)

    def sqrt(self, x):
        return self.ca.sqrt(x)

    def zeros(self, rows, cols=None):
        return self.sym.zeros(rows, 1 if cols is None else cols)

    def eye(self, n):
        return self.sym.eye(n)

    def vector(self, items):
        return self.ca.vertcat(*[self._m(v) for v in items])

    def concat(self, vectors):
        return self.ca.vertcat(*vectors)

    def columns(self, vectors):
        return self.ca.horzcat(*vectors)

    def block(self, rows):
        ca = self.ca
        return ca.vertcat(*[ca.horzcat(*[self._m(v) for v in row]) for row in rows])

    def matmul(self, a, b):
        return self.ca.mtimes(a, b)

    def transpose(self, a):
        return a.T

    def solve(self, a, b):
        return self.ca.solve(a, b)

    def function(self, f, x, derivative):
        """Value or derivative of a :mod:`ahbm.kinematics.functions` function at the symbol `x`.

        Polynomials are exact; the splines are rebuilt piece by piece from
        their values and derivatives at the knots (a cubic is fixed by
        ``y, y', y''`` at its left knot and ``y''`` at its right one), which
        reproduces OpenSim's coefficients to round-off.
        """
        ca = self.ca
        if isinstance(f, fn.MultiplierFunction):
            return f.scale * self.function(f.function, x, derivative)
        if isinstance(f, (fn.Constant, fn.LinearFunction, fn.PolynomialFunction)):
            if isinstance(f, fn.Constant):
                c = [f.constant]
            elif isinstance(f, fn.LinearFunction):
                c = [f.slope, f.intercept]
            else:
                c = list(f.coefficients)
            c = np.atleast_1d(np.polyder(c, derivative) if derivative else np.asarray(c, float))
            out = 0.0
            for ci in c:  # Horner
                out = out * x + float(ci)
            return out
        if isinstance(f, fn.PiecewiseLinearFunction):
            xs, ys = f.x, f.y
            b = np.diff(ys) / np.maximum(np.diff(xs), 1e-300)
            b = np.append(b, b[-1])
            out = [ys[-1] + b[-1] * (x - xs[-1]), b[-1], 0.0][derivative]
            for k in range(len(xs) - 2, -1, -1):
                piece = [ys[k] + b[k] * (x - xs[k]), b[k], 0.0][derivative]
                out = ca.if_else(x < xs[k + 1], piece, out)
            lo = [ys[0] + b[0] * (x - xs[0]), b[0], 0.0][derivative]
            return ca.if_else(x < xs[0], lo, out)
        if isinstance(f, fn.SimmSpline):  # NaturalCubicSpline too
            xs = f.x
            y, b, dd = f.value_and_derivatives(xs, 2)
            lo = [y[0] + b[0] * (x - xs[0]), b[0], 0.0][derivative]
            out = [y[-1] + b[-1] * (x - xs[-1]), b[-1], 0.0][derivative]
            for k in range(len(xs) - 2, -1, -1):
                h = xs[k + 1] - xs[k]
                ck, dk = dd[k] / 2.0, (dd[k + 1] - dd[k]) / (6.0 * h)
                dx = x - xs[k]
                piece = [
                    y[k] + dx * (b[k] + dx * (ck + dx * dk)),
                    b[k] + dx * (2.0 * ck + 3.0 * dx * dk),
                    2.0 * ck + 6.0 * dx * dk,
                ][derivative]
                out = ca.if_else(x < xs[k + 1], piece, out)
            return ca.if_else(x < xs[0], lo, out)
        raise ModelError(
            f"a custom joint uses a {type(f).__name__}, which has no CasADi form; use one of "
            "Constant, LinearFunction, PolynomialFunction, PiecewiseLinearFunction, SimmSpline, "
            "NaturalCubicSpline, MultiplierFunction"
        )


def _point3(point, name="point"):
    p = np.asarray(point, dtype=float)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise DataError(f"Expected `{name}` to be 3 finite numbers (m, body frame), got {point!r}")
    return p


class SymbolicDynamics:
    """Compiled CasADi functions of one model (built on first use, then cached).

    Use :func:`symbolic_dynamics` to make one. Every attribute is a
    ``casadi.Function`` that accepts numbers (returns ``DM``) or symbols
    (returns expressions, for building optimal-control problems).

    Attributes
    ----------
    model : Model
    forward_dynamics : casadi.Function
        ``(q, qd, tau) -> qdd`` by the articulated-body algorithm (Featherstone
        Table 7.1).
    forward_dynamics_ext : casadi.Function
        ``(q, qd, tau, f_ext) -> qdd`` with external spatial forces
        ``f_ext`` (n_bodies, 6), world frame, moments about the world origin.
    inverse_dynamics : casadi.Function
        ``(q, qd, qdd) -> tau`` by the RNEA (Table 5.1).
    inverse_dynamics_ext : casadi.Function
        ``(q, qd, qdd, f_ext) -> tau``, ``τ = M q̈ + h − Σ Jᵢᵀ fᵢ``.
    mass_matrix : casadi.Function
        ``q -> M`` (nv, nv) by the CRBA (Table 6.2).
    bias : casadi.Function
        ``(q, qd) -> h = C q̇ + g``, the RNEA at ``q̈ = 0``.
    com : casadi.Function
        ``q -> c`` (3,), whole-body centre of mass (m).
    ground_reaction : casadi.Function
        ``(q, qd, qdd) -> [n_O; f]`` (6,), the external wrench (about the world
        origin) the motion needs: ``Σ (I_i a_i + v_i ×* I_i v_i) − W_gravity``.
    """

    def __init__(self, model: Model, *, symbol: str = "SX"):
        if not isinstance(model, Model):
            raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
        self.model = model
        self.ops = CasadiOps(symbol)
        self.ca = self.ops.ca
        sym = self.ops.sym
        self._q = sym.sym("q", model.nq)
        self._qd = sym.sym("qd", model.nv)
        self._qdd = sym.sym("qdd", model.nv)
        self._tau = sym.sym("tau", model.nv)
        self._f = sym.sym("f_ext", model.n_bodies, 6)
        self._points = {}

    def __repr__(self) -> str:
        m = self.model
        return f"SymbolicDynamics(model={m.name!r}, nq={m.nq}, nv={m.nv})"

    def _fn(self, name, inputs, outputs, in_names, out_names):
        return self.ca.Function(name, inputs, outputs, in_names, out_names)

    @functools.cached_property
    def forward_dynamics(self):
        qdd = reference.aba(self.model, self._q, self._qd, self._tau, ops=self.ops)
        return self._fn("forward_dynamics", [self._q, self._qd, self._tau], [qdd],
                        ["q", "qd", "tau"], ["qdd"])  # fmt: skip

    @functools.cached_property
    def forward_dynamics_ext(self):
        m, o = self.model, self.ops
        qdd = reference.aba(m, self._q, self._qd, self._tau, f_ext=self._f, ops=o)
        return self._fn("forward_dynamics_ext", [self._q, self._qd, self._tau, self._f], [qdd],
                        ["q", "qd", "tau", "f_ext"], ["qdd"])  # fmt: skip

    @functools.cached_property
    def inverse_dynamics(self):
        tau = reference.rnea(self.model, self._q, self._qd, self._qdd, ops=self.ops)
        return self._fn("inverse_dynamics", [self._q, self._qd, self._qdd], [tau],
                        ["q", "qd", "qdd"], ["tau"])  # fmt: skip

    @functools.cached_property
    def inverse_dynamics_ext(self):
        m, o = self.model, self.ops
        tau = reference.rnea(m, self._q, self._qd, self._qdd, f_ext=self._f, ops=o)
        return self._fn("inverse_dynamics_ext", [self._q, self._qd, self._qdd, self._f], [tau],
                        ["q", "qd", "qdd", "f_ext"], ["tau"])  # fmt: skip

    @functools.cached_property
    def mass_matrix(self):
        M = reference.crba(self.model, self._q, ops=self.ops)
        return self._fn("mass_matrix", [self._q], [M], ["q"], ["M"])

    @functools.cached_property
    def bias(self):
        h = reference.rnea(self.model, self._q, self._qd, self.ops.zeros(self.model.nv),
                           ops=self.ops)  # fmt: skip
        return self._fn("bias", [self._q, self._qd], [h], ["q", "qd"], ["h"])

    @functools.cached_property
    def _kin(self):
        return reference.forward_kinematics(self.model, self._q, self._qd, self._qdd, ops=self.ops)

    @functools.cached_property
    def com(self):
        m, kin, ca = self.model, self._kin, self.ca
        c = 0.0
        for i in range(m.n_bodies):
            c = c + float(m.masses[i]) * (kin.positions[i] + ca.mtimes(kin.rotations[i],
                                                                        m.coms[i]))  # fmt: skip
        c = c / max(m.total_mass, 1e-300)
        return self._fn("com", [self._q], [c], ["q"], ["com"])

    @functools.cached_property
    def ground_reaction(self):
        m, kin, ca = self.model, self._kin, self.ca
        n_o, f_o = 0.0, 0.0
        g = np.asarray(m.gravity, dtype=float)
        for i in range(m.n_bodies):
            R, p = kin.rotations[i], kin.positions[i]
            v, a = kin.velocities[i], kin.accelerations[i]
            I6 = m.spatial_inertias[i]
            h = ca.mtimes(I6, v)
            fb = ca.mtimes(I6, a) + ca.vertcat(
                ca.cross(v[0:3], h[0:3]) + ca.cross(v[3:6], h[3:6]), ca.cross(v[0:3], h[3:6])
            )  # I a + v ×* I v, body frame, about the body origin
            f_w = ca.mtimes(R, fb[3:6])
            n_o = n_o + ca.mtimes(R, fb[0:3]) + ca.cross(p, f_w)
            f_o = f_o + f_w
            c = p + ca.mtimes(R, m.coms[i])
            w = float(m.masses[i]) * g
            n_o = n_o - ca.cross(c, ca.DM(w))
            f_o = f_o - w
        out = ca.vertcat(n_o, f_o)
        return self._fn("ground_reaction", [self._q, self._qd, self._qdd], [out],
                        ["q", "qd", "qdd"], ["wrench"])  # fmt: skip

    def zmp(self, *, ground_normal=(0.0, 0.0, 1.0), ground_point=(0.0, 0.0, 0.0)):
        """Function ``(q, qd, qdd) -> r_D`` (3,): the zero-moment point on a ground plane.

        Parameters
        ----------
        ground_normal, ground_point : array_like, shape (3,)
            The plane (normal towards the body, normalized here; a point of it).

        Returns
        -------
        casadi.Function

        Notes
        -----
        Chung (2009) eqs 4.8–4.10: with the wrench ``[M_O; F]`` of
        :attr:`ground_reaction`, ``r_D = p_0 + n × (M_O − p_0 × F) / (n · F)``;
        the same point as :func:`ahbm.dynamics.zmp`.
        """
        ca = self.ca
        n = _point3(ground_normal, "ground_normal")
        if np.linalg.norm(n) == 0:
            raise DataError("`ground_normal` must not be zero")
        n = n / np.linalg.norm(n)
        p0 = _point3(ground_point, "ground_point")
        w = self.ground_reaction(self._q, self._qd, self._qdd)
        F = w[3:6]
        M0 = w[0:3] - ca.cross(ca.DM(p0), F)
        r = p0 + ca.cross(ca.DM(n), M0) / ca.dot(ca.DM(n), F)
        return self._fn("zmp", [self._q, self._qd, self._qdd], [r], ["q", "qd", "qdd"], ["zmp"])

    def _point(self, body, point):
        b = self.model.body_index(body)
        r = _point3(point)
        key = (b, tuple(r))
        if key not in self._points:
            kin, ca = self._kin, self.ca
            R, p, v = kin.rotations[b], kin.positions[b], kin.velocities[b]
            pos = p + ca.mtimes(R, r)
            vel = ca.mtimes(R, v[3:6] + ca.cross(v[0:3], ca.DM(r)))
            self._points[key] = (pos, vel)
        return b, r, self._points[key]

    def point_position(self, body, point=(0.0, 0.0, 0.0)):
        """Function ``q -> p`` (3,): world position of a point fixed in a body (m).

        Parameters
        ----------
        body : str or int
            Body name or index.
        point : array_like, shape (3,)
            The point in the body frame, m.
        """
        b, r, (pos, _) = self._point(body, point)
        return self._fn("point_position", [self._q], [pos], ["q"], ["p"])

    def point_velocity(self, body, point=(0.0, 0.0, 0.0)):
        """Function ``(q, qd) -> ṗ`` (3,): world velocity of a point fixed in a body (m/s).

        Notes
        -----
        ``ṗ = 0_R_i (v_O + ω × r)`` with the body spatial velocity ``[ω; v_O]``.
        """
        b, r, (_, vel) = self._point(body, point)
        return self._fn("point_velocity", [self._q, self._qd], [vel], ["q", "qd"], ["v"])


def symbolic_dynamics(model: Model, *, symbol: str = "SX") -> SymbolicDynamics:
    """Compiled CasADi functions of a model, from the reference recursions.

    Parameters
    ----------
    model : Model
        Any model of :mod:`ahbm.kinematics.tree` (all joint types, custom
        joints with the functions of :mod:`ahbm.kinematics.functions`).
    symbol : {"SX", "MX"}, optional
        CasADi symbol class (``SX``: scalar expression graphs, fastest for
        the models of human movement; ``MX`` for very large ones).

    Returns
    -------
    SymbolicDynamics
        ``forward_dynamics``, ``inverse_dynamics`` (and ``*_ext`` with
        external forces), ``mass_matrix``, ``bias``, ``com``,
        ``ground_reaction``, ``zmp()``, ``point_position(body, point)``,
        ``point_velocity(body, point)``; each built on first use. One object
        per model version, kept in ``model.cache`` (changing the model makes
        a new one).

    Raises
    ------
    MissingDependencyError
        CasADi is not installed (``pip install "ahbm[optimize]"``).
    ModelError
        `model` is not a Model.

    Notes
    -----
    The expressions are those of :mod:`ahbm.dynamics.reference` run on
    :class:`CasadiOps`; the tests compare them with the compiled numeric
    kernels (:func:`ahbm.dynamics.rnea`, :func:`~ahbm.dynamics.aba`,
    :func:`~ahbm.dynamics.crba`, :func:`ahbm.kinematics.point_position`, ...)
    at random states to 1e-12.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("rod", "ground", {"type": "revolute", "axis": [0, 1, 0]},
    ...                mass=1.0, com=[0.5, 0, 0], inertia=np.eye(3) * 0.01)
    >>> sd = symbolic_dynamics(m)
    >>> float(sd.inverse_dynamics(0.0, 0.0, 0.0))  # m g l/2 about +y
    -4.905
    >>> abs(float(sd.forward_dynamics(0.0, 0.0, -4.905))) < 1e-12
    True
    """
    if not isinstance(model, Model):
        raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
    key = ("ahbm.optimize.symbolic_dynamics", symbol)
    cached = model.cache.get(key)  # the model's per-version cache: a change drops it
    if cached is None:
        cached = model.cache[key] = SymbolicDynamics(model, symbol=symbol)
    return cached
