"""Kinematic constraints and constraint sets.

A constraint is a vector equation ``g(t, q) = 0``. Its *velocity-space*
Jacobian ``G = ∂g/∂q · T(q)`` (``T`` maps generalized velocities to
coordinate rates, which matters for quaternion joints) gives the velocity
constraint ``G q̇ = ν`` (``ν = −∂g/∂t``) and the acceleration constraint
``G q̈ = γ`` with ``γ = −(Ġ q̇ + g_tt + 2 ġ_t)`` (AHBM §3.1 eqs 4.3–4.5, whose
right-hand side ``−(g^t + g^a + g^b)`` is ``γ``; Felis 2015 §3.1.2, eqs
3.6b–3.7). The report's ``G`` is ``∂g/∂p``, so its ``G T`` is this ``G``.

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
:class:`~ahbm.dynamics.velocity_constraints.VelocityConstraint`
    A velocity-level (nonholonomic) constraint ``A(t, q) q̇ = b(t, q)``
    (rolling without slip, knife edges): its rows join ``G``, ``ν`` and
    ``γ = ḃ − Ȧ q̇``, with ``g = 0`` (not storable in model files).

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

from dataclasses import dataclass

import numpy as np

from ahbm._engine import state as _st
from ahbm.dynamics.coordinate_constraints import (
    CoordinateCoupling,
    PrescribedCoordinate,
)
from ahbm.dynamics.geometric_constraints import (
    Constraint,
    OrientationConstraint,
    PlaneConstraint,
    PointConstraint,
)
from ahbm.errors import DataError, FileFormatError, ModelError
from ahbm.kinematics.model_file import register_model_section
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "ConstraintSet",
    "ConstraintTerms",
    "constraint_from_dict",
]


@dataclass(frozen=True, repr=False)
class ConstraintTerms(ResultRepr):
    """Assembled constraint terms (see :meth:`ConstraintSet.assemble`).

    A frozen result object (see :mod:`ahbm.types`).

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
        if isinstance(constraints, (Constraint, str, bytes, dict)) or not hasattr(
            constraints, "__iter__"
        ):
            raise DataError(
                f"Expected `constraints` to be a list of Constraint objects (or a "
                f"ConstraintSet), got {type(constraints).__name__}"
            )
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

    def holonomic_part(self) -> ConstraintSet:
        """The set of the position-level constraints (itself if all are).

        Velocity-level constraints (``holonomic`` False) have no equation
        ``g(t, q) = 0``: position projection uses this set.
        """
        if all(c.holonomic for c in self.constraints):
            return self
        return ConstraintSet([c for c in self.constraints if c.holonomic], name=self.name)

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
