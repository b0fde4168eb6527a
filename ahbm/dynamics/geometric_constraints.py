"""The :class:`Constraint` base class and constraints on body points and orientations.

:class:`PointConstraint` (``"point"``), :class:`PlaneConstraint` (``"plane"``)
and :class:`OrientationConstraint` (``"orientation"``); the model-file ``type``
names are in brackets. All are importable from :mod:`ahbm.dynamics.constraints`,
which describes the equations and stacks constraints into a
:class:`~ahbm.dynamics.constraints.ConstraintSet`.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
from ahbm._internal.validation import as_finite_float, as_float_array
from ahbm.dynamics.force_element import GROUND, _body, _vec3
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.rotations import matrix_to_rotvec
from ahbm.kinematics.tree import Model

__all__ = ["Constraint", "PointConstraint", "PlaneConstraint", "OrientationConstraint"]

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


class Constraint:
    """Base class of all constraints.

    Subclasses implement ``size``, ``_g``, ``_G``, ``_gamma`` (and ``_nu``
    for rheonomic constraints) on a batch-last kinematic context.
    ``holonomic`` is False for velocity-level constraints
    (:class:`~ahbm.dynamics.velocity_constraints.VelocityConstraint`), which
    have no position-level equation (their ``_g`` is zero and position
    projection leaves them out).
    """

    type: str = ""
    name: str = "constraint"
    holonomic: bool = True

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
    with the point Jacobians (Felis 2015 §3.1.2 and §3.4.4, contact and loop constraints).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> c = PointConstraint("pendulum2", [0, 0, -1], axes="yz")
    >>> from ahbm.dynamics import ConstraintSet
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
    >>> from ahbm.dynamics import ConstraintSet
    >>> ConstraintSet([c]).position(m, np.zeros(4))
    array([0.])
    """

    type = "plane"

    def __init__(self, body, point=(0.0, 0.0, 0.0), *, normal=(0.0, 0.0, 1.0), height=0.0,
                 name=None):  # fmt: skip
        n = _vec3(normal, "normal")
        height = as_finite_float(height, "height", unit="m")
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
    >>> from ahbm.dynamics import ConstraintSet
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
