"""Kinematic constraints and constraint sets.

A constraint is a vector equation ``g(t, q) = 0``. Its *velocity-space*
Jacobian ``G = ∂g/∂q · T(q)`` (``T`` maps generalized velocities to
coordinate rates, which matters for quaternion joints) gives the velocity
constraint ``G q̇ = ν`` (``ν = −∂g/∂t``) and the acceleration constraint
``G q̈ = γ`` with ``γ = −(Ġ q̇ + g_tt + 2 ġ_t)`` (AHBM eqs 4.3–4.5, whose
right-hand side ``−(g^t + g^a + g^b)`` is ``γ``; Felis 2017 §3.1.2).

Constraint types (their ``type`` names in model files in brackets)
-------------------------------------------------------------------
:class:`PointConstraint` (``"point"``)
    A body point coincides with a point of another body or of the ground
    along any subset of the world x, y, z axes (loop closures, pinned feet).
:class:`PlaneConstraint` (``"plane"``)
    A body point stays on a ground plane (contact with a normal).
:class:`OrientationConstraint` (``"orientation"``)
    The orientation of a body relative to another body or the ground is locked.
:class:`CoordinateCoupling` (``"coupling"``)
    A coordinate follows a function of another one (linear, or a cubic
    spline through a table).
:class:`PrescribedCoordinate` (``"prescribed"``)
    A coordinate follows a time function ``s(t)`` (rheonomic constraint).
:class:`UserConstraint`
    ``g(t, q)`` given as a Python function, with its Jacobian or finite
    differences (not storable in model files).

A :class:`ConstraintSet` stacks constraints and assembles ``g``, ``G``,
``ν`` and ``γ`` with one forward-kinematics pass. All evaluations accept
leading batch axes on ``q`` (``t`` scalar or broadcastable).

Model files
-----------
Constraints are stored in the JSON model file under ``"constraints"``: a list
of objects with ``"type"`` and the keyword arguments of the Python classes,
e.g. ``{"type": "point", "name": "loop", "body": "crank", "point": [1, 0, 0],
"other": "rocker", "other_point": [0, 0, 0], "axes": "xy"}``. This module
registers that section (:func:`~ahbm.kinematics.model_file.register_model_section`),
so :func:`ahbm.load_model` reads it into ``model.constraints`` and
:func:`ahbm.save_model` writes it back; ``simulate`` and the constrained
functions use ``model.constraints`` when given ``constraints=None``.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from ahbm._deprecation import warn_deprecated
from ahbm._engine import state as _st
from ahbm._engine.batch import cross
from ahbm._validation import as_float_array
from ahbm.dynamics.forces import GROUND, _body, _coordinate, _vec3
from ahbm.errors import DataError, FileFormatError, ModelError
from ahbm.kinematics.model_file import register_model_section, save_model
from ahbm.kinematics.rotations import matrix_to_rotvec
from ahbm.kinematics.tree import Model, integrate_q, load_model

__all__ = [
    "Constraint",
    "PointConstraint",
    "PlaneConstraint",
    "OrientationConstraint",
    "CoordinateCoupling",
    "PrescribedCoordinate",
    "UserConstraint",
    "ConstraintSet",
    "ConstraintTerms",
    "constraint_from_dict",
    "load_model_with_constraints",
    "save_model_with_constraints",
]

_AXES = {"x": 0, "y": 1, "z": 2}


def _axes_matrix(axes, what):
    """Rows (k, 3) of world directions from 'xyz'-letters or an array of directions."""
    if isinstance(axes, str):
        letters = axes.lower()
        if not letters or any(c not in _AXES for c in letters) or len(set(letters)) != len(letters):
            raise DataError(
                f"`{what}` must be distinct letters from 'xyz' (e.g. 'xz'), got {axes!r}"
            )
        return np.eye(3)[[_AXES[c] for c in letters]], letters
    D = as_float_array(axes, what)
    if D.ndim == 1:
        D = D[None]
    if D.ndim != 2 or D.shape[1] != 3 or D.shape[0] == 0:
        raise DataError(f"`{what}` must be axis letters or directions of shape (k, 3)")
    nrm = np.linalg.norm(D, axis=1)
    if np.any(nrm < 1e-12):
        raise DataError(f"`{what}`: directions must be non-zero")
    D = np.where(np.abs(nrm - 1.0)[:, None] > 1e-12, D / nrm[:, None], D)  # stable round trip
    return D, D.tolist()


def _times(t, kin):
    t = np.asarray(t, dtype=float)
    return np.broadcast_to(t, kin.batch_shape).reshape(kin.n_frames)


class ConstraintTerms(NamedTuple):
    """Assembled constraint terms (see :meth:`ConstraintSet.assemble`).

    Attributes
    ----------
    g : ndarray, shape (..., m)
        Position residual ``g(t, q)``.
    G : ndarray, shape (..., m, nv)
        Velocity-space Jacobian.
    nu : ndarray, shape (..., m)
        Velocity right-hand side: ``G q̇ = ν``.
    gamma : ndarray, shape (..., m) or None
        Acceleration right-hand side: ``G q̈ = γ`` (None without ``qd``).
    """

    g: np.ndarray
    G: np.ndarray
    nu: np.ndarray
    gamma: np.ndarray | None


class Constraint:
    """Base class of all constraints.

    Subclasses implement ``size``, ``_g``, ``_G``, ``_gamma`` (and ``_nu``
    for rheonomic constraints) on a batch-last kinematic context.
    """

    type: str = ""
    name: str = "constraint"

    def size(self, model: Model) -> int:
        """Number of scalar equations."""
        raise NotImplementedError

    def validate(self, model: Model) -> None:
        """Raise ModelError if the constraint names unknown bodies or coordinates."""

    def row_names(self, model: Model) -> list[str]:
        """One name per scalar equation."""
        return [f"{self.name}[{k}]" for k in range(self.size(model))]

    def _nu(self, kin, t):
        return np.zeros((self.size(kin.model), kin.n_frames))

    def to_dict(self) -> dict:
        """Model-file dictionary (``{"type": ..., ...}``)."""
        raise ModelError(f"constraint '{self.name}' ({type(self).__name__}) cannot be stored")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class PointConstraint(Constraint):
    """A body point coincides with another body's point (or a ground point).

    Parameters
    ----------
    body : str or int
        Constrained body.
    point : array_like, shape (3,)
        Point in the body frame, m.
    other : str or int, optional
        Second body, ``"ground"`` by default.
    other_point : array_like, shape (3,), optional
        Point in the frame of ``other`` (world for the ground), m.
    axes : str or array_like, optional
        World axes along which the points coincide: letters from ``"xyz"``
        (default all three) or directions of shape (k, 3).
    name : str, optional

    Notes
    -----
    ``g = D (p − p_o)``, ``G = D (J_p − J_o)``, ``γ = −D (J̇_p q̇ − J̇_o q̇)``
    with the point Jacobians (Felis 2017 §3.1.2, contact and loop constraints).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = PointConstraint("pendulum2", [0, 0, -1], axes="yz")
    >>> ConstraintSet([c]).position(m, np.zeros(4))
    array([ 0., -2.])
    """

    type = "point"

    def __init__(
        self, body, point=(0.0, 0.0, 0.0), *, other=GROUND, other_point=(0.0, 0.0, 0.0),
        axes="xyz", name=None,
    ):  # fmt: skip
        self.body, self.other = body, other
        self.point = _vec3(point, "point")
        self.other_point = _vec3(other_point, "other_point")
        self.D, self._axes_json = _axes_matrix(axes, "axes")
        self.name = name or f"point_{body}"

    def size(self, model):
        return self.D.shape[0]

    def validate(self, model):
        _body(model, self.body, f"constraint '{self.name}' body")
        _body(model, self.other, f"constraint '{self.name}' other")
        if _body(model, self.body, "") == _body(model, self.other, ""):
            raise ModelError(f"constraint '{self.name}': `body` and `other` are the same body")

    def _idx(self, model):
        return (
            _body(model, self.body, f"constraint '{self.name}' body"),
            _body(model, self.other, f"constraint '{self.name}' other"),
        )

    def _g(self, kin, t):
        b, o = self._idx(kin.model)
        point = _st.point_bl
        d = point(kin, b, self.point[:, None]) - point(kin, o, self.other_point[:, None])
        return self.D @ d

    def _G(self, kin, t):
        b, o = self._idx(kin.model)
        J = _st.point_jacobian_bl(kin, b, self.point[:, None])
        J -= _st.point_jacobian_bl(kin, o, self.other_point[:, None])
        return np.einsum("ki,inN->knN", self.D, J)

    def _gamma(self, kin, t):
        b, o = self._idx(kin.model)
        acc0 = _st.point_bias_acceleration_bl
        a = acc0(kin, b, self.point[:, None]) - acc0(kin, o, self.other_point[:, None])
        return -(self.D @ a)

    def to_dict(self):
        return {
            "type": self.type,
            "name": self.name,
            "body": self.body,
            "point": self.point.tolist(),
            "other": self.other,
            "other_point": self.other_point.tolist(),
            "axes": self._axes_json,
        }


class PlaneConstraint(PointConstraint):
    """A body point stays on a ground plane ``n · p = height``.

    Parameters
    ----------
    body : str or int
    point : array_like, shape (3,)
        Point in the body frame, m.
    normal : array_like, shape (3,), optional
        Plane normal in the world frame (normalized), default ``(0, 0, 1)``.
    height : float, optional
        Plane offset along the normal, m.
    name : str, optional

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = PlaneConstraint("pendulum2", [0, 0, -1], height=-2.0)
    >>> ConstraintSet([c]).position(m, np.zeros(4))
    array([0.])
    """

    type = "plane"

    def __init__(self, body, point=(0.0, 0.0, 0.0), *, normal=(0.0, 0.0, 1.0), height=0.0,
                 name=None):  # fmt: skip
        n = _vec3(normal, "normal")
        if np.linalg.norm(n) < 1e-12:
            raise DataError("`normal` must be non-zero")
        if abs(np.linalg.norm(n) - 1.0) > 1e-12:
            n = n / np.linalg.norm(n)
        super().__init__(body, point, other=GROUND, other_point=n * float(height), axes=n[None],
                         name=name or f"plane_{body}")  # fmt: skip
        self.normal, self.height = n, float(height)

    def to_dict(self):
        return {
            "type": self.type,
            "name": self.name,
            "body": self.body,
            "point": self.point.tolist(),
            "normal": self.normal.tolist(),
            "height": self.height,
        }


class OrientationConstraint(Constraint):
    """Lock the orientation of a body relative to another body or the ground.

    Parameters
    ----------
    body : str or int
    other : str or int, optional
        Reference body, ``"ground"`` by default.
    rotation : array_like, shape (3, 3), optional
        Required relative orientation ``other_R_body`` (identity by default).
    axes : str, optional
        World axes about which the rotation is locked (default ``"xyz"``).
    name : str, optional

    Notes
    -----
    ``g = D log(R_b R₀ᵀ R_oᵀ)^∨`` (rotation vector of the orientation error,
    world frame), ``G = D (J_ω,b − J_ω,o)``,
    ``γ = −D ((J̇_ω,b − J̇_ω,o) q̇ − ω_b × ω_o)``. ``G`` and ``γ`` are the exact
    first and second derivatives of ``g`` at ``g = 0`` (on the manifold).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = OrientationConstraint("pendulum1")
    >>> ConstraintSet([c]).position(m, [0.1, 0, 0, 0]).round(12)
    array([0.1, 0. , 0. ])
    """

    type = "orientation"

    def __init__(self, body, *, other=GROUND, rotation=None, axes="xyz", name=None):
        self.body, self.other = body, other
        R0 = np.eye(3) if rotation is None else as_float_array(rotation, "rotation")
        if R0.shape != (3, 3) or not np.allclose(R0.T @ R0, np.eye(3), atol=1e-8):
            raise DataError("`rotation` must be a 3x3 rotation matrix (other_R_body)")
        self.rotation = R0
        if not isinstance(axes, str):
            raise DataError("`axes` of an orientation constraint must be letters from 'xyz'")
        self.D, self._axes_json = _axes_matrix(axes, "axes")
        self.name = name or f"orientation_{body}"

    size = PointConstraint.size
    validate = PointConstraint.validate
    _idx = PointConstraint._idx

    def _g(self, kin, t):
        b, o = self._idx(kin.model)
        Rb, Ro = _st.rotation_bl(kin, b), _st.rotation_bl(kin, o)
        target = np.einsum("ijN,jk->ikN", Ro, self.rotation)
        err = np.einsum("ijN,kjN->Nik", Rb, target)
        return self.D @ matrix_to_rotvec(err).T

    def _G(self, kin, t):
        b, o = self._idx(kin.model)
        J = _st.angular_jacobian_bl(kin, b) - _st.angular_jacobian_bl(kin, o)
        return np.einsum("ki,inN->knN", self.D, J)

    def _gamma(self, kin, t):
        b, o = self._idx(kin.model)
        wb, wo = _st.angular_velocity_bl(kin, b), _st.angular_velocity_bl(kin, o)
        acc0 = _st.angular_bias_acceleration_bl
        rel = acc0(kin, b) - acc0(kin, o) - cross(wb, wo, axis=-2)
        return -(self.D @ rel)

    def to_dict(self):
        return {
            "type": self.type,
            "name": self.name,
            "body": self.body,
            "other": self.other,
            "rotation": self.rotation.tolist(),
            "axes": self._axes_json,
        }


def _function_of(spec, what):
    """(f, f', f'') vectorized from a table (cubic spline) or a callable (finite differences)."""
    if callable(spec):
        h = 1e-4

        def d1(x):
            return (spec(x + h) - spec(x - h)) / (2 * h)

        def d2(x):
            return (spec(x + h) - 2 * spec(x) + spec(x - h)) / (h * h)

        return spec, d1, d2
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
    relation : table (n, 2) or callable, optional
        Nonlinear relation: a table ``[[x, f(x)], ...]`` (natural cubic
        spline) or a vectorized callable (derivatives by finite differences).
    name : str, optional

    Notes
    -----
    ``g = q_c − f(q_d)``, ``G = e_c − f'(q_d) e_d``, ``γ = f''(q_d) q̇_d²``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = CoordinateCoupling("euler_rx", "pin", ratio=2.0)
    >>> ConstraintSet([c]).position(m, [0.1, 0, 0.2, 0])
    array([0.])
    """

    type = "coupling"

    def __init__(self, coordinate, driver, *, ratio=1.0, offset=0.0, relation=None, name=None):
        self.coordinate, self.driver = coordinate, driver
        self.ratio, self.offset = float(ratio), float(offset)
        self.relation = relation
        if relation is None:
            r, o = self.ratio, self.offset
            self._f = (lambda x: r * x + o, lambda x: np.full_like(x, r), np.zeros_like)
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
                v = float(arr)
                self._s = (lambda t: np.full_like(t, v), np.zeros_like, np.zeros_like)
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
    >>> ConstraintSet([c]).jacobian(m, np.zeros(4)).round(8)
    array([[ 1.,  0., -1.,  0.]])
    """

    type = "user"

    def __init__(self, function, size, *, jacobian=None, gamma=None, time_derivative=None,
                 rheonomic=False, name=None):  # fmt: skip
        if not callable(function):
            raise DataError("`function` must be callable g(t, q) -> (m,)")
        self.function, self.m = function, int(size)
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
        from ahbm.dynamics.simulate import q_rate

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


# ----------------------------------------------------------------------------
# constraint set
# ----------------------------------------------------------------------------


class ConstraintSet:
    """An ordered set of constraints, assembled into one system.

    Parameters
    ----------
    constraints : iterable of Constraint, optional
    name : str, optional

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> cs = ConstraintSet([PointConstraint("link3", [0, 0, -1], other_point=[0, 0, -3])])
    >>> terms = cs.assemble(m, np.zeros(m.nq), np.zeros(m.nv))
    >>> terms.G.shape, float(np.abs(terms.g).max())
    ((3, 9), 0.0)
    """

    def __init__(self, constraints=(), *, name="constraints"):
        self.constraints = []
        self.name = name
        for c in constraints:
            self.add(c)

    def add(self, constraint: Constraint) -> ConstraintSet:
        """Append a constraint (returns the set)."""
        if not isinstance(constraint, Constraint):
            raise DataError(
                f"constraint set '{self.name}': expected a Constraint, got "
                f"{type(constraint).__name__}"
            )
        self.constraints.append(constraint)
        return self

    def __len__(self) -> int:
        return len(self.constraints)

    def __iter__(self):
        return iter(self.constraints)

    def __repr__(self) -> str:
        return f"ConstraintSet({[c.name for c in self.constraints]!r})"

    def size(self, model: Model) -> int:
        """Total number of scalar equations ``m``."""
        return sum(c.size(model) for c in self.constraints)

    def validate(self, model: Model) -> None:
        """Check every constraint against `model` (ModelError naming the constraint)."""
        for c in self.constraints:
            c.validate(model)

    def row_names(self, model: Model) -> list[str]:
        """Names of the ``m`` equations (``name[k]``)."""
        return [n for c in self.constraints for n in c.row_names(model)]

    # -- evaluation -----------------------------------------------------------
    def _stack(self, kin, parts, shape_tail):
        if not parts:
            return _st.out(kin, np.zeros(shape_tail + (kin.n_frames,)))
        return _st.out(kin, np.concatenate(parts, axis=0))

    def position(self, model: Model, q, *, t=0.0, kin=None) -> np.ndarray:
        """Position residuals ``g(t, q)``, shape (..., m).

        ``kin``: a state from :func:`~ahbm.kinematics.forward.forward_kinematics`
        to reuse (``q`` may then be None); the same in every method below.
        """
        kin = _st.resolve(model, kin, q)
        return self._stack(kin, [c._g(kin, t) for c in self.constraints], (0,))

    def jacobian(self, model: Model, q, *, t=0.0, kin=None) -> np.ndarray:
        """Velocity-space Jacobian ``G``, shape (..., m, nv)."""
        kin = _st.resolve(model, kin, q, columns=True)
        return self._stack(kin, [c._G(kin, t) for c in self.constraints], (0, model.nv))

    def velocity_rhs(self, model: Model, q, *, t=0.0, kin=None) -> np.ndarray:
        """``ν`` of the velocity constraint ``G q̇ = ν``, shape (..., m)."""
        kin = _st.resolve(model, kin, q)
        return self._stack(kin, [c._nu(kin, t) for c in self.constraints], (0,))

    def gamma(self, model: Model, q, qd, *, t=0.0, kin=None) -> np.ndarray:
        """``γ`` of the acceleration constraint ``G q̈ = γ``, shape (..., m)."""
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        return self._stack(kin, [c._gamma(kin, t) for c in self.constraints], (0,))

    def assemble(
        self, model: Model, q, qd=None, *, t=0.0, position=True, kin=None
    ) -> ConstraintTerms:
        """All terms with one kinematics pass.

        Parameters
        ----------
        model : Model
        q : array_like, shape (..., nq), or None with ``kin``
        qd : array_like, shape (..., nv), optional
            Needed for ``gamma`` (taken from ``kin`` when it has velocities).
        t : float or array_like, optional
            Time, s.
        position : bool, optional
            Evaluate ``g`` too (skip it when only velocity terms are needed).
        kin : Kinematics, optional
            State from :func:`~ahbm.kinematics.forward.forward_kinematics`.

        Returns
        -------
        ConstraintTerms
        """
        return self._assemble(_st.resolve(model, kin, q, qd, columns=True), t, position)

    def _assemble(self, kin, t, position=True) -> ConstraintTerms:
        """assemble() on a prepared kinematic context (internal)."""
        model, qd = kin.model, kin.qd
        cs = self.constraints
        m, nv = self.size(model), model.nv
        g = self._stack(kin, [c._g(kin, t) for c in cs], (0,)) if position else None
        G = self._stack(kin, [c._G(kin, t) for c in cs], (0, nv))
        nu = self._stack(kin, [c._nu(kin, t) for c in cs], (0,))
        gam = None
        if qd is not None:
            gam = self._stack(kin, [c._gamma(kin, t) for c in cs], (0,))
        if g is None:
            g = np.zeros(kin.batch_shape + (m,))
        return ConstraintTerms(g, G, nu, gam)

    # -- model files ----------------------------------------------------------
    def to_list(self) -> list[dict]:
        """Model-file representation (list of dictionaries)."""
        return [c.to_dict() for c in self.constraints]

    @classmethod
    def from_list(cls, items, *, model: Model | None = None, source="constraints"):
        """Build a set from model-file dictionaries (validated against `model` if given)."""
        if not isinstance(items, list):
            raise FileFormatError(f"{source}: 'constraints' must be a list of objects")
        cs = cls(constraint_from_dict(d, source=f"{source}[{k}]") for k, d in enumerate(items))
        if model is not None:
            cs.validate(model)
        return cs


_TYPES = {
    "point": PointConstraint,
    "plane": PlaneConstraint,
    "orientation": OrientationConstraint,
    "coupling": CoordinateCoupling,
    "prescribed": PrescribedCoordinate,
}


def constraint_from_dict(data: dict, *, source: str = "constraint") -> Constraint:
    """Build a constraint from its model-file dictionary.

    Examples
    --------
    >>> c = constraint_from_dict({"type": "plane", "body": "foot", "point": [0, 0, 0]})
    >>> type(c).__name__
    'PlaneConstraint'
    """
    if not isinstance(data, dict):
        raise FileFormatError(f"{source}: each constraint must be an object")
    kind = data.get("type")
    if kind not in _TYPES:
        raise ModelError(f"{source}: unknown constraint type {kind!r}; use one of {sorted(_TYPES)}")
    kwargs = {k: v for k, v in data.items() if k != "type"}
    try:
        if kind in ("coupling", "prescribed"):
            pos = [kwargs.pop("coordinate")]
            if kind == "coupling":
                pos.append(kwargs.pop("driver"))
            else:
                pos.append(kwargs.pop("trajectory"))
        else:
            pos = [kwargs.pop("body")]
        return _TYPES[kind](*pos, **kwargs)
    except KeyError as err:
        raise ModelError(f"{source}: constraint of type {kind!r} needs the field {err}") from err
    except TypeError as err:
        raise ModelError(f"{source}: bad fields for a {kind!r} constraint: {err}") from err


def _read_constraints(items, model: Model, source: str) -> list[Constraint]:
    """Model-file section reader: ``"constraints"`` list -> constraints checked on `model`."""
    return ConstraintSet.from_list(items, model=model, source=source).constraints


def _write_constraints(constraints) -> list[dict]:
    """Model-file section writer (ModelError for a constraint that cannot be stored)."""
    return [c.to_dict() for c in constraints]


def _check_constraints(constraints, model: Model) -> list[Constraint]:
    """Checker of ``model.constraints = [...]``: Constraint objects valid on `model`."""
    cs = ConstraintSet(constraints)
    cs.validate(model)
    return cs.constraints


register_model_section(
    "constraints",
    read=_read_constraints,
    write=_write_constraints,
    check=_check_constraints,
    owner="ahbm.dynamics.constraints",
)


def load_model_with_constraints(path_or_dict) -> tuple[Model, ConstraintSet]:
    """Load a model file and its constraints (deprecated: use :func:`ahbm.load_model`).

    :func:`ahbm.load_model` reads the ``"constraints"`` entry into
    ``model.constraints``; this alias returns them again as a ConstraintSet.
    It warns once and will be removed in ahbm 0.3.

    Returns
    -------
    model : Model
    constraints : ConstraintSet
        ``ConstraintSet(model.constraints)``; empty if the file has none.
    """
    warn_deprecated(
        "ahbm.dynamics.load_model_with_constraints",
        "`load_model_with_constraints` is deprecated and will be removed in ahbm 0.3; use "
        "`ahbm.load_model(path)`, which reads the constraints into `model.constraints`",
    )
    model = load_model(path_or_dict)
    return model, ConstraintSet(model.constraints)


def save_model_with_constraints(model: Model, constraints, path) -> Path:
    """Write a model file with the given constraints (deprecated: use :func:`ahbm.save_model`).

    Equivalent to setting ``model.constraints = constraints`` on a copy of
    the model and calling :func:`ahbm.save_model`, which writes
    ``model.constraints``. It warns once and will be removed in ahbm 0.3.
    """
    warn_deprecated(
        "ahbm.dynamics.save_model_with_constraints",
        "`save_model_with_constraints` is deprecated and will be removed in ahbm 0.3; set "
        "`model.constraints = constraints` and use `ahbm.save_model(model, path)`",
    )
    if not isinstance(model, Model):
        raise ModelError(f"expected a Model, got {type(model).__name__}")
    copy = model.copy()
    copy.constraints = constraints
    return save_model(copy, path)
