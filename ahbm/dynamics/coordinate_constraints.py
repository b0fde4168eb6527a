"""Constraints on coordinates: couplings, prescribed motion and user functions.

:class:`CoordinateCoupling` (``"coupling"``), :class:`PrescribedCoordinate`
(``"prescribed"``) and :class:`UserConstraint` (not storable in model files).
All are importable from :mod:`ahbm.dynamics.constraints`, which describes the
equations and stacks constraints into a
:class:`~ahbm.dynamics.constraints.ConstraintSet`.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import as_finite_float, as_float_array, as_int
from ahbm.dynamics.coordinate_rates import q_rate
from ahbm.dynamics.force_element import _coordinate
from ahbm.dynamics.geometric_constraints import Constraint
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.configuration import integrate_q
from ahbm.kinematics.functions import Constant, Function, LinearFunction, as_function

__all__ = ["CoordinateCoupling", "PrescribedCoordinate", "UserConstraint"]


def _times(t, kin):
    t = np.asarray(t, dtype=float)
    return np.broadcast_to(t, kin.batch_shape).reshape(kin.n_frames)


class _Derivative:
    """``x -> f^(k)(x)`` for k = 1, 2: exact for a :mod:`ahbm.kinematics.functions` function,
    central differences (step 1e-4) for a callable. A class rather than a closure, so that
    constraints (and the models holding them) can be pickled, e.g. for process pools."""

    def __init__(self, f, order: int):
        self.f, self.order = f, order

    def __call__(self, x):
        f, h = self.f, 1e-4
        if isinstance(f, Function):
            return f.value(x, self.order)
        if self.order == 1:
            return (f(x + h) - f(x - h)) / (2 * h)
        return (f(x + h) - 2 * f(x) + f(x - h)) / (h * h)


def _function_of(spec, what):
    """(f, f', f'') vectorized: exact for a function of :mod:`ahbm.kinematics.functions` (or
    its dict), a cubic spline through a table, finite differences for a callable."""
    if isinstance(spec, (Function, dict)):
        try:
            fn = as_function(spec, what)
        except ModelError as err:
            raise DataError(f"`{what}`: {err}") from err
        return fn, _Derivative(fn, 1), _Derivative(fn, 2)
    if callable(spec):
        return spec, _Derivative(spec, 1), _Derivative(spec, 2)
    arr = as_float_array(spec, what)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 2:
        raise DataError(f"`{what}` must be a table of shape (n, 2) (n >= 2) or a callable")
    if np.any(np.diff(arr[:, 0]) <= 0):
        raise DataError(f"`{what}`: the first column must increase strictly")
    from scipy.interpolate import CubicSpline  # imported when a table is used

    spline = CubicSpline(arr[:, 0], arr[:, 1])
    return spline, spline.derivative(1), spline.derivative(2)


class CoordinateCoupling(Constraint):
    """A coordinate is a function of another: ``q_c = f(q_d)``.

    Parameters
    ----------
    coordinate : str or int
        Dependent coordinate (name or index in ``q``; not a quaternion component).
    driver : str or int
        Independent coordinate.
    ratio, offset : float, optional
        Linear relation ``f(x) = ratio x + offset`` (used when ``relation`` is None).
    relation : Function, dict, table (n, 2) or callable, optional
        Nonlinear relation: a function of :mod:`ahbm.kinematics.functions`
        or its dict (exact derivatives; OpenSim's
        ``CoordinateCouplerConstraint``), a table ``[[x, f(x)], ...]``
        (natural cubic spline) or a vectorized callable (derivatives by
        finite differences).
    name : str, optional

    Notes
    -----
    ``g = q_c − f(q_d)``, ``G = e_c − f'(q_d) e_d``, ``γ = f''(q_d) q̇_d²``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = CoordinateCoupling("euler_rx", "pin", ratio=2.0)
    >>> from ahbm.dynamics import ConstraintSet
    >>> ConstraintSet([c]).position(m, [0.1, 0, 0.2, 0])
    array([0.])
    """

    type = "coupling"

    def __init__(self, coordinate, driver, *, ratio=1.0, offset=0.0, relation=None, name=None):
        self.coordinate, self.driver = coordinate, driver
        self.ratio = as_finite_float(ratio, "ratio")
        self.offset = as_finite_float(offset, "offset")
        if isinstance(relation, dict):
            relation = _function_of(relation, "relation")[0]
        self.relation = relation
        if relation is None:
            self._f = _function_of(LinearFunction(self.ratio, self.offset), "ratio")
        else:
            self._f = _function_of(relation, "relation")
        self.name = name or f"coupling_{coordinate}"

    def size(self, model):
        return 1

    def _idx(self, model):
        c = _coordinate(model, self.coordinate, f"constraint '{self.name}' coordinate")
        d = _coordinate(model, self.driver, f"constraint '{self.name}' driver")
        if c == d:
            raise ModelError(f"constraint '{self.name}': coordinate and driver are the same")
        return c, d

    def validate(self, model):
        self._idx(model)

    def _g(self, kin, t):
        (qc, _), (qd_, _) = self._idx(kin.model)
        return (_st.q_bl(kin)[qc] - self._f[0](_st.q_bl(kin)[qd_]))[None]

    def _G(self, kin, t):
        (_, vc), (qd_, vd) = self._idx(kin.model)
        G = np.zeros((1, kin.model.nv, kin.n_frames))
        G[0, vc] = 1.0
        G[0, vd] = -self._f[1](_st.q_bl(kin)[qd_])
        return G

    def _gamma(self, kin, t):
        _, (qd_, vd) = self._idx(kin.model)
        return (self._f[2](_st.q_bl(kin)[qd_]) * _st.qd_bl(kin)[vd] ** 2)[None]

    def to_dict(self):
        d = {"type": self.type, "name": self.name, "coordinate": self.coordinate,
             "driver": self.driver}  # fmt: skip
        if self.relation is None:
            d.update(ratio=self.ratio, offset=self.offset)
        elif isinstance(self.relation, Function):
            d["relation"] = self.relation.to_dict()
        elif callable(self.relation):
            raise ModelError(
                f"constraint '{self.name}': a callable relation cannot be stored; give a table"
            )
        else:
            d["relation"] = np.asarray(self.relation, dtype=float).tolist()
        return d


class PrescribedCoordinate(Constraint):
    """A coordinate follows a prescribed time function (rheonomic constraint).

    Parameters
    ----------
    coordinate : str or int
    trajectory : float, table (n, 2), callable, or (callable, callable, callable)
        A constant value (locks the coordinate); a table ``[[t, value], ...]``
        interpolated by a natural cubic spline; a vectorized callable ``s(t)``
        (derivatives by finite differences); or ``(s, ṡ, s̈)``.
    name : str, optional

    Notes
    -----
    ``g = q_c − s(t)``, ``G = e_c``, ``ν = ṡ(t)``, ``γ = s̈(t)``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = PrescribedCoordinate("pin", lambda t: 0.5 * t**2)
    >>> from ahbm.dynamics import ConstraintSet
    >>> ConstraintSet([c]).gamma(m, np.zeros(4), np.zeros(4), t=1.0).round(6)
    array([1.])
    """

    type = "prescribed"

    def __init__(self, coordinate, trajectory, *, name=None):
        self.coordinate = coordinate
        self.trajectory = trajectory
        if (
            isinstance(trajectory, tuple)
            and len(trajectory) == 3
            and all(map(callable, trajectory))
        ):
            self._s = trajectory
        elif callable(trajectory):
            self._s = _function_of(trajectory, "trajectory")
        else:
            arr = as_float_array(trajectory, "trajectory")
            if arr.ndim == 0:
                self._s = _function_of(Constant(float(arr)), "trajectory")
            else:
                self._s = _function_of(arr, "trajectory")
        self.name = name or f"prescribed_{coordinate}"

    def size(self, model):
        return 1

    def validate(self, model):
        _coordinate(model, self.coordinate, f"constraint '{self.name}'")

    def _ev(self, k, t):
        return np.asarray(self._s[k](t), dtype=float) * np.ones_like(t)

    def _g(self, kin, t):
        qi, _ = _coordinate(kin.model, self.coordinate, f"constraint '{self.name}'")
        return (_st.q_bl(kin)[qi] - self._ev(0, _times(t, kin)))[None]

    def _G(self, kin, t):
        _, vi = _coordinate(kin.model, self.coordinate, f"constraint '{self.name}'")
        G = np.zeros((1, kin.model.nv, kin.n_frames))
        G[0, vi] = 1.0
        return G

    def _nu(self, kin, t):
        return self._ev(1, _times(t, kin))[None]

    def _gamma(self, kin, t):
        return self._ev(2, _times(t, kin))[None]

    def to_dict(self):
        traj = self.trajectory
        if callable(traj) or isinstance(traj, tuple):
            raise ModelError(
                f"constraint '{self.name}': a callable trajectory cannot be stored; give a "
                "table [[t, value], ...] or a constant"
            )
        return {"type": self.type, "name": self.name, "coordinate": self.coordinate,
                "trajectory": np.asarray(traj, dtype=float).tolist()}  # fmt: skip


class UserConstraint(Constraint):
    """A constraint given by a Python function ``g(t, q)``.

    Parameters
    ----------
    function : callable
        ``function(t, q) -> (m,)`` for one state ``q`` of shape (nq,).
    size : int
        Number of equations ``m``.
    jacobian : callable, optional
        ``jacobian(t, q) -> (m, nq)``, ``∂g/∂q``; central finite differences
        otherwise.
    gamma : callable, optional
        ``gamma(t, q, qd) -> (m,)``, the acceleration right-hand side; by
        default a second central difference of ``g`` along the motion
        ``(t + ε, q ⊕ ε q̇)``.
    time_derivative : callable, optional
        ``∂g/∂t (t, q) -> (m,)``; finite differences if the constraint is
        rheonomic (``rheonomic=True``), zero otherwise.
    rheonomic : bool, optional
        Whether ``g`` depends explicitly on time.
    name : str, optional

    Notes
    -----
    ``G = ∂g/∂q T(q)``; ``ν = −∂g/∂t``; ``γ = −d²/dε² g(t + ε, q ⊕ ε q̇)``
    at ``ε = 0`` (the curve ``q ⊕ ε q̇`` has zero generalized acceleration).
    Batched evaluations loop over the states.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = UserConstraint(lambda t, q: np.array([q[0] - q[2]]), 1)
    >>> from ahbm.dynamics import ConstraintSet
    >>> ConstraintSet([c]).jacobian(m, np.zeros(4)).round(8)
    array([[ 1.,  0., -1.,  0.]])
    """

    type = "user"

    def __init__(self, function, size, *, jacobian=None, gamma=None, time_derivative=None,
                 rheonomic=False, name=None):  # fmt: skip
        if not callable(function):
            raise DataError("`function` must be callable g(t, q) -> (m,)")
        self.function, self.m = function, as_int(size, "size", minimum=0)
        self.jac, self.gam, self.gt = jacobian, gamma, time_derivative
        self.rheonomic = bool(rheonomic or time_derivative is not None)
        self.name = name or "user"

    def size(self, model):
        return self.m

    def _call(self, t, q):
        val = np.asarray(self.function(float(t), q), dtype=float).reshape(-1)
        if val.shape != (self.m,):
            raise DataError(
                f"constraint '{self.name}': function returned shape {val.shape}, "
                f"expected ({self.m},)"
            )
        return val

    def _each(self, kin, t, fn):
        tt = _times(t, kin)
        return np.stack([fn(tt[n], _st.q_bl(kin)[:, n], n) for n in range(kin.n_frames)], axis=-1)

    def _g(self, kin, t):
        return self._each(kin, t, lambda tn, q, n: self._call(tn, q))

    def _Gq(self, t, q, model):
        if self.jac is not None:
            Jq = np.asarray(self.jac(float(t), q), dtype=float)
            if Jq.shape != (self.m, model.nq):
                raise DataError(
                    f"constraint '{self.name}': jacobian returned shape {Jq.shape}, "
                    f"expected ({self.m}, {model.nq})"
                )
            return Jq
        Jq = np.empty((self.m, model.nq))
        for k in range(model.nq):
            h = 1e-6 * max(1.0, abs(q[k]))
            qp, qm = q.copy(), q.copy()
            qp[k] += h
            qm[k] -= h
            Jq[:, k] = (self._call(t, qp) - self._call(t, qm)) / (2 * h)
        return Jq

    def _G(self, kin, t):
        model = kin.model
        T = q_rate(model, _st.q_bl(kin).T[:, None, :], np.eye(model.nv)[None])  # (N, nv, nq)

        def one(tn, q, n):
            return self._Gq(tn, q, model) @ T[n].T

        return self._each(kin, t, one)

    def _nu(self, kin, t):
        if not self.rheonomic:
            return np.zeros((self.m, kin.n_frames))
        if self.gt is not None:
            return -self._each(kin, t, lambda tn, q, n: np.asarray(self.gt(tn, q), dtype=float))
        h = 1e-6

        def one(tn, q, n):
            return -(self._call(tn + h, q) - self._call(tn - h, q)) / (2 * h)

        return self._each(kin, t, one)

    def _gamma(self, kin, t):
        model = kin.model

        def one(tn, q, n):
            v = _st.qd_bl(kin)[:, n]
            if self.gam is not None:
                return np.asarray(self.gam(tn, q, v), dtype=float).reshape(self.m)
            eps = 1e-4 / max(1.0, float(np.abs(v).max()))
            qp = integrate_q(model, q, v, eps)
            qm = integrate_q(model, q, v, -eps)
            dt = eps if self.rheonomic else 0.0
            g0 = self._call(tn, q)
            return -(self._call(tn + dt, qp) - 2 * g0 + self._call(tn - dt, qm)) / eps**2

        return self._each(kin, t, one)
