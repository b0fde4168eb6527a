"""Joints and bodies of a :class:`~ahbm.kinematics.tree.Model`: joint types,
:class:`Joint`, :class:`Body` and the validation of their fields.

Both classes are read-only; a model makes them in
:meth:`~ahbm.kinematics.tree.Model.add_body` and replaces them in
:meth:`~ahbm.kinematics.tree.Model.update_body`. Frames are described in
:mod:`ahbm.kinematics.tree`. The validation of the fields (the dicts of a
model file and the arguments of ``add_body``) is in
:mod:`ahbm.kinematics.joint_fields`.

Joint types (``nq``/``nv``)
---------------------------
``fixed`` (0/0), ``revolute`` (1/1, unit ``axis``), ``prismatic`` (1/1, unit
``axis``), ``universal`` (2/2, ``sequence`` of two axis letters, intrinsic
``R_J = R1(q0) R2(q1)``), ``euler`` (3/3, ``sequence`` of three letters,
intrinsic ``R_J = R1(q0) R2(q1) R3(q2)``; velocities are the angle rates),
``spherical`` (4/3: unit quaternion ``(x, y, z, w)``; velocity = angular
velocity of the body relative to the joint frame, in the body frame),
``free`` (7/6: translation in the joint frame then quaternion; velocity =
time derivative of the translation, in the joint frame, then the angular
velocity in the body frame), ``free_euler`` (6/6: translation then Euler
angles, velocities are their time derivatives), ``planar`` (3/3: x and y
translation in the joint frame then rotation about z; velocities are the
time derivatives), ``custom`` (n/n: OpenSim's ``CustomJoint``, below).

Custom joints (OpenSim's ``SpatialTransform``)
----------------------------------------------
``Joint("custom", coordinates=[names], transform=[6 items])``: three rotation
axes then three translation axes, each ``{"axis": [x, y, z], "coordinate":
name or None, "function": f}`` with ``f`` a function of
:mod:`ahbm.kinematics.functions` (or its dict). The value ``θ_k = f_k(q_j)`` of
axis ``k`` is an angle (rad) for the rotation axes and a displacement (m) for
the translation axes; an axis without a coordinate has the constant value
``f_k(0)``. ``nq == nv == len(coordinates)``; velocities are the coordinate
rates. Axes are normalized (a zero axis is an error). The moving frame ``M``
relative to the joint frame ``F`` is, as in OpenSim (Simbody's
``MobilizedBody::FunctionBased``; checked against OpenSim 4.6 body poses,
mass matrices and inverse dynamics in ``tests/peers/test_opensim_joints.py``):

* rotation ``F_R_M = R(a_1, θ_1) R(a_2, θ_2) R(a_3, θ_3)``: a body-fixed
  (intrinsic) sequence about the three rotation axes, each given in ``F``
  (``R(a, θ)``: right-handed rotation by ``θ`` about the unit axis ``a``);
* translation of ``M``'s origin ``r = θ_4 a_4 + θ_5 a_5 + θ_6 a_6``, in ``F``
  (not rotated).

So ``M`` = translate, then rotate: the transform axes are not a sequence of
primitive joints in file order. The velocity of coordinate ``j`` moves each
axis ``k`` it drives at the rate ``f_k'(q_j) q̇_j``; the velocity-product
(bias) terms use ``f_k''`` exactly. (Simbody's ``FunctionBased`` mobilizer,
behind OpenSim's CustomJoint, computes them inexactly when one coordinate
drives a later rotation axis together with an earlier one, e.g. a knee whose
flexion drives all three rotation axes: OpenSim's inverse dynamics then differ
from ahbm's, and from the derivative of OpenSim's own velocities, by
velocity-product terms; see ``tests/peers/test_opensim_joints.py``.) OpenSim
also refuses collinear rotation or translation axes; ahbm accepts them.

Child offset frames
-------------------
Every body may give the pose of the joint's moving frame in its own frame
(OpenSim's child offset frame): ``child_position`` (m) and ``child_rotation``
(``body_R_moving``). The body pose is then ``parent ∘ joint frame ∘ J(q) ∘
inverse(child pose)``; COM, inertia and markers stay in the body frame.
Default: identity (the body frame is the moving frame).

Joint sequences are intrinsic and written in uppercase (``"ZXY"``), as in
scipy and :mod:`ahbm.kinematics.rotations`, where lowercase means extrinsic;
a lowercase joint sequence is a :class:`~ahbm.errors.ModelError`.
"""

from __future__ import annotations

import copy
import types

import numpy as np

from ahbm.errors import ModelError

__all__ = [
    "Joint",
    "Body",
    "TransformAxis",
    "JOINT_TYPES",
]


#: Joint type names and their integer codes (``Model.joint_codes``).
JOINT_TYPES = {
    "fixed": 0,
    "revolute": 1,
    "prismatic": 2,
    "universal": 3,
    "euler": 4,
    "spherical": 5,
    "free": 6,
    "free_euler": 7,
    "planar": 8,
    "custom": 9,
}
FIXED, REVOLUTE, PRISMATIC, UNIVERSAL, EULER, SPHERICAL, FREE, FREE_EULER, PLANAR, CUSTOM = range(
    10
)

_NQ = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4, 6: 7, 7: 6, 8: 3}  # custom: len(coordinates)
_NV = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 3, 6: 6, 7: 6, 8: 3}
_AXIS_INDEX = {"X": 0, "Y": 1, "Z": 2}
_GROUND = "ground"
_EYE3 = np.eye(3)
_EYE3.setflags(write=False)


# ----------------------------------------------------------------------------
# Joint and Body descriptions (immutable)
# ----------------------------------------------------------------------------


def _read_only(value, what: str = "value") -> np.ndarray:
    """A float64 copy of `value` that cannot be written in place (ModelError naming `what`)."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ModelError(f"`{what}` must be numeric, got {value!r:.80}") from err
    arr.setflags(write=False)
    return arr


def _frozen(arr: np.ndarray) -> np.ndarray:
    """`arr` made read-only in place: for float64 arrays made here that nothing else holds
    (what :func:`_read_only` returns, without its copy)."""
    arr.setflags(write=False)
    return arr


def _as_tuple(value, what: str) -> tuple:
    """A tuple of the items of a list/tuple `value` (ModelError naming `what` otherwise)."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ModelError(f"`{what}` must be a list, got {value!r:.80}")
    return tuple(value)


class _Frozen:
    """Base of Joint and Body: attributes are set once, in ``__init__``."""

    __slots__ = ()

    def __setattr__(self, key, value):
        raise ModelError(
            f"{type(self).__name__} objects are read-only (cannot set {key!r}); change a "
            "body or its joint with model.update_body(name, ...)"
        )

    def __delattr__(self, key):
        self.__setattr__(key, None)

    def _init(self, **values):
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @classmethod
    def _made(cls, **values):
        """An instance holding `values` as they are (no copy, no conversion): for values
        that the checks of this module made (fresh read-only float64 arrays, tuples, copies),
        the same attributes that ``__init__`` would give."""
        self = object.__new__(cls)
        setattr_ = object.__setattr__
        for key, value in values.items():
            setattr_(self, key, value)
        return self


class Joint(_Frozen):
    """A joint connecting a body to its parent (read-only).

    Parameters
    ----------
    type : str
        One of ``JOINT_TYPES``.
    axis : array_like, shape (3,), optional
        Unit axis for ``revolute`` and ``prismatic`` joints (joint frame).
    sequence : str, optional
        Uppercase axis letters for ``universal`` (2), ``euler`` and
        ``free_euler`` (3), e.g. ``"ZYX"`` (intrinsic,
        ``R = R1(q0) R2(q1) R3(q2)``). Lowercase (extrinsic in scipy and
        :mod:`ahbm.kinematics.rotations`) is rejected by
        :meth:`~ahbm.kinematics.tree.Model.add_body`.
    name : str, optional
        Joint name; defaults to the body name.
    coordinates : sequence of str, optional
        Names of the ``nq`` coordinates; defaults are derived from the joint name
        (for a ``custom`` joint: the coordinates of its transform, in order).
    limits : object, optional
        Joint limits, stored and written back unchanged (JSON-serializable);
        reading ``limits`` returns a copy.
    transform : sequence of 6 TransformAxis or dict, optional
        The ``custom`` joint's rotation and translation axes (module docstring).

    Notes
    -----
    A Joint is checked when it is given to
    :meth:`~ahbm.kinematics.tree.Model.add_body` or
    :meth:`~ahbm.kinematics.tree.Model.update_body`; its attributes cannot be assigned and its
    ``axis`` array cannot be written in place.
    """

    __slots__ = ("type", "axis", "sequence", "name", "coordinates", "_limits", "transform")

    def __init__(
        self, type, axis=None, sequence=None, name=None, coordinates=None, limits=None,
        transform=None,
    ):  # fmt: skip
        self._init(
            type=type,
            axis=None if axis is None else _read_only(axis, "axis"),
            sequence=sequence,
            name=name,
            coordinates=None if coordinates is None else _as_tuple(coordinates, "coordinates"),
            _limits=copy.deepcopy(limits),
            transform=None if transform is None else _as_tuple(transform, "transform"),
        )

    @property
    def limits(self):
        """Joint limits as given (a copy; JSON-serializable) or None."""
        return copy.deepcopy(self._limits)

    def __reduce__(self):
        fields = (self.type, self.axis, self.sequence, self.name, self.coordinates, self._limits)
        return (type(self), fields + (self.transform,))

    @property
    def code(self) -> int:
        return JOINT_TYPES[self.type]

    @property
    def nq(self) -> int:
        if self.type == "custom":
            return len(self.coordinates or ())
        return _NQ[self.code]

    @property
    def nv(self) -> int:
        if self.type == "custom":
            return len(self.coordinates or ())
        return _NV[self.code]

    def __repr__(self) -> str:
        extra = ""
        if self.axis is not None:
            extra = f", axis={self.axis.tolist()}"
        if self.sequence is not None:
            extra = f", sequence={self.sequence!r}"
        if self.transform is not None:
            extra = f", coordinates={list(self.coordinates)!r}"
        return f"Joint({self.type!r}{extra}, name={self.name!r})"


class TransformAxis(_Frozen):
    """One axis of a ``custom`` joint's transform (read-only; OpenSim's ``TransformAxis``).

    Attributes
    ----------
    axis : ndarray, shape (3,)
        Unit axis in the joint frame.
    coordinate : str or None
        The joint coordinate that drives the axis (None: a constant value).
    function : ahbm.kinematics.functions.Function
        Value of the axis (rad or m) as a function of the coordinate.

    Examples
    --------
    >>> from ahbm.kinematics.joints import TransformAxis
    >>> from ahbm.kinematics.functions import LinearFunction
    >>> TransformAxis([0, 0, 1], "knee", LinearFunction(1.0, 0.0)).to_dict()["coordinate"]
    'knee'
    """

    __slots__ = ("axis", "coordinate", "function")

    def __init__(self, axis, coordinate, function):
        self._init(axis=_read_only(axis), coordinate=coordinate, function=function)

    def value(self, q_coordinate, derivative: int = 0):
        """The axis value (or a derivative) for the coordinate's value (any shape)."""
        x = 0.0 if self.coordinate is None else q_coordinate
        return self.function.value(x, derivative)

    def to_dict(self) -> dict:
        """``{"axis": [...], "coordinate": name or None, "function": {...}}``."""
        return {
            "axis": self.axis.tolist(),
            "coordinate": self.coordinate,
            "function": self.function.to_dict(),
        }

    def __eq__(self, other):
        if not isinstance(other, TransformAxis):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def __reduce__(self):
        return (type(self), (self.axis, self.coordinate, self.function))

    def __repr__(self) -> str:
        return f"TransformAxis({self.axis.tolist()}, {self.coordinate!r}, {self.function!r})"


class Body(_Frozen):
    """A rigid body of a :class:`~ahbm.kinematics.tree.Model` (read-only).

    Its frames are described in :mod:`ahbm.kinematics.tree`.

    Attributes
    ----------
    name : str
    parent : int
        Index of the parent body, -1 for the ground.
    joint : Joint
    position : ndarray, shape (3,)
        Joint-frame origin in the parent body frame, m.
    rotation : ndarray, shape (3, 3)
        Joint-frame axes in the parent body frame (``parent_R_joint``).
    child_position : ndarray, shape (3,)
        Origin of the joint's moving frame in the body frame, m (OpenSim's
        child offset frame; zeros by default).
    child_rotation : ndarray, shape (3, 3)
        Axes of the joint's moving frame in the body frame (``body_R_moving``;
        identity by default).
    mass : float
        kg.
    com : ndarray, shape (3,)
        Centre of mass in the body frame, m.
    inertia : ndarray, shape (3, 3)
        Inertia about the COM in body axes, kg m^2.
    markers : mapping of str to ndarray, shape (3,)
        Marker positions in the body frame, m (a read-only mapping).
    geometry : object
        JSON-serializable drawing information (reading it returns a copy).

    Notes
    -----
    Bodies are made by :meth:`~ahbm.kinematics.tree.Model.add_body` and replaced by
    :meth:`~ahbm.kinematics.tree.Model.update_body`; their attributes and arrays cannot be changed
    in place.
    """

    __slots__ = (
        "name", "parent", "joint", "position", "rotation", "mass", "com", "inertia", "markers",
        "_geometry", "child_position", "child_rotation",
    )  # fmt: skip

    def __init__(
        self, name, parent, joint, position, rotation, mass, com, inertia, markers=None,
        geometry=None, child_position=None, child_rotation=None,
    ):  # fmt: skip
        self._init(
            child_position=_read_only(np.zeros(3) if child_position is None else child_position),
            child_rotation=_read_only(np.eye(3) if child_rotation is None else child_rotation),
            name=name,
            parent=int(parent),
            joint=joint,
            position=_read_only(position),
            rotation=_read_only(rotation),
            mass=float(mass),
            com=_read_only(com),
            inertia=_read_only(inertia),
            markers=types.MappingProxyType(
                {str(k): _read_only(v) for k, v in (markers or {}).items()}
            ),
            _geometry=copy.deepcopy(geometry),
        )

    @property
    def geometry(self):
        """Drawing information as given (a copy) or None."""
        return copy.deepcopy(self._geometry)

    def __reduce__(self):
        fields = (self.name, self.parent, self.joint, self.position, self.rotation, self.mass)
        fields += (self.com, self.inertia, dict(self.markers), self._geometry)
        fields += (self.child_position, self.child_rotation)
        return (type(self), fields)

    @property
    def has_child_offset(self) -> bool:
        """True when the body frame differs from the joint's moving frame."""
        return bool(np.any(self.child_position)) or not np.array_equal(
            self.child_rotation, np.eye(3)
        )

    def __repr__(self) -> str:
        return (
            f"Body({self.name!r}, parent={self.parent}, joint={self.joint!r}, "
            f"mass={self.mass:g}, markers={list(self.markers)})"
        )


#: Largest magnitude of a length (m), mass (kg) or inertia (kg m^2) in a model: beyond it
#: the spatial algebra loses every digit that matters (and overflows near 1e154).
