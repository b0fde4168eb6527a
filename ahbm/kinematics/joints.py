"""Joints and bodies of a :class:`~ahbm.kinematics.tree.Model`: joint types,
:class:`Joint`, :class:`Body` and the validation of their fields.

Both classes are read-only; a model makes them in
:meth:`~ahbm.kinematics.tree.Model.add_body` and replaces them in
:meth:`~ahbm.kinematics.tree.Model.update_body`. Frames are described in
:mod:`ahbm.kinematics.tree`; everything here is importable from there too.

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
import json
import math
import types

import numpy as np

from ahbm.errors import ModelError

__all__ = ["Joint", "Body", "TransformAxis", "JOINT_TYPES"]

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
_MAX_MAGNITUDE = 1e12


def _brief(value) -> str:
    """`value` for a message, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_range(arr, what):
    if arr.size and np.abs(arr).max() > _MAX_MAGNITUDE:
        raise ModelError(
            f"{what} has a value of magnitude {np.abs(arr).max():.3g}, beyond the "
            f"{_MAX_MAGNITUDE:g} that a model accepts (SI units: m, kg, kg m^2)"
        )
    return arr


def _in_range(arr) -> bool:
    """True if every value is finite with magnitude <= _MAX_MAGNITUDE (a few values: in
    Python, ~4x faster than numpy's reductions; NaN fails the comparison)."""
    for v in arr.ravel().tolist():
        if not -_MAX_MAGNITUDE <= v <= _MAX_MAGNITUDE:
            return False
    return True


def _check_vec3(value, what):
    """`value` as a new float64 array of 3 finite numbers within the model range."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"{what} must be 3 numbers, got {_brief(value)}") from err
    if arr.shape != (3,):
        raise ModelError(f"{what} must be 3 finite numbers, got {_brief(value)}")
    if _in_range(arr):
        return arr
    if not np.isfinite(arr).all():
        raise ModelError(f"{what} must be 3 finite numbers, got {_brief(value)}")
    return _check_range(arr, what)


def _check_mat3(value, what):
    """`value` as a new float64 3x3 array of finite numbers within the model range."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"{what} must be a 3x3 matrix, got {_brief(value)}") from err
    if arr.shape != (3, 3):
        raise ModelError(f"{what} must be a finite 3x3 matrix, got shape {arr.shape}")
    if _in_range(arr):
        return arr
    if not np.isfinite(arr).all():
        raise ModelError(f"{what} must be a finite 3x3 matrix, got shape {arr.shape}")
    return _check_range(arr, what)


def _norm3(arr) -> float:
    """``np.linalg.norm`` of a 3-vector; 1.0 without numpy's call for a coordinate axis
    (one entry +-1, the others +-0: the norm is exactly 1 in any order of summation)."""
    a, b, c = sorted(map(abs, arr.tolist()))
    if a == 0.0 and b == 0.0 and c == 1.0:
        return 1.0
    return float(np.linalg.norm(arr))


_JOINT_FIELDS = ("type", "axis", "sequence", "name", "coordinates", "limits", "transform")
_JOINT_FIELD_SET = frozenset(_JOINT_FIELDS)


def _make_joint(joint, body_name) -> Joint:
    """Validate a joint given as Joint, dict or type string."""
    if isinstance(joint, str):
        joint = {"type": joint}
    elif isinstance(joint, Joint):
        joint = {key: getattr(joint, key) for key in _JOINT_FIELDS}
    if not isinstance(joint, dict):
        raise ModelError(
            f"body '{body_name}': joint must be a dict like {{'type': 'revolute', "
            f"'axis': [0, 0, 1]}}, got {type(joint).__name__}"
        )
    unknown = (
        []
        if joint.keys() <= _JOINT_FIELD_SET
        else sorted(str(k) for k in set(joint) - _JOINT_FIELD_SET)
    )
    if unknown:
        raise ModelError(
            f"body '{body_name}': joint has unknown fields {unknown}; a joint has the fields "
            f"{list(_JOINT_FIELDS)}"
        )
    jtype = joint.get("type")
    if not isinstance(jtype, str) or jtype not in JOINT_TYPES:
        raise ModelError(
            f"body '{body_name}': unknown joint type {_brief(jtype)}; use one of "
            f"{sorted(JOINT_TYPES)}"
        )
    axis = None
    sequence = None
    if jtype in ("revolute", "prismatic"):
        if joint.get("axis") is None:
            raise ModelError(f"body '{body_name}': {jtype} joint needs an 'axis' (3 numbers)")
        axis = _check_vec3(joint["axis"], f"body '{body_name}': joint axis")
        norm = _norm3(axis)
        if abs(norm - 1.0) > 1e-6:
            raise ModelError(
                f"body '{body_name}': joint axis {axis.tolist()} must have unit length "
                f"(norm is {norm:.6g}); normalize it"
            )
        if norm != 1.0:  # (x / 1.0 is x)
            axis = axis / norm
    if jtype in ("universal", "euler", "free_euler"):
        n = 2 if jtype == "universal" else 3
        seq = joint.get("sequence")
        if (
            not isinstance(seq, str)
            or len(seq) != n
            or any(ch not in "XYZ" for ch in seq.upper())
            or any(seq.upper()[k] == seq.upper()[k + 1] for k in range(n - 1))
        ):
            raise ModelError(
                f"body '{body_name}': {jtype} joint needs a 'sequence' of {n} axis letters "
                f"from XYZ with no two consecutive equal (e.g. {'ZX' if n == 2 else 'ZXY'}), "
                f"got {seq!r}"
            )
        if seq != seq.upper():
            raise ModelError(
                f"body '{body_name}': {jtype} joint sequence {seq!r} is not uppercase; joint "
                f"sequences are intrinsic and written in uppercase ({seq.upper()!r}), while "
                "lowercase means extrinsic (scipy, ahbm.kinematics.rotations)"
            )
        sequence = seq
    name = joint.get("name") or body_name
    if not isinstance(name, str):
        raise ModelError(f"body '{body_name}': joint name must be a string, got {name!r}")
    code = JOINT_TYPES[jtype]
    coords = joint.get("coordinates")
    transform = None
    if jtype == "custom":
        transform, coords = _check_transform(joint.get("transform"), coords, body_name)
    elif joint.get("transform") is not None:
        raise ModelError(
            f"body '{body_name}': only a 'custom' joint has a 'transform'; this joint is "
            f"{jtype!r} (use type 'custom' or remove the transform)"
        )
    if code != CUSTOM and coords is None:
        coords = _default_coordinate_names(name, code, sequence)
    elif code != CUSTOM:
        if not isinstance(coords, (list, tuple)) or len(coords) != _NQ[code]:
            raise ModelError(
                f"body '{body_name}': joint 'coordinates' must list {_NQ[code]} names for a "
                f"{jtype} joint, got {coords!r}"
            )
        bad = [c for c in coords if not isinstance(c, str) or not c]
        if bad:
            raise ModelError(
                f"body '{body_name}': joint 'coordinates' must be non-empty strings, got "
                f"{_brief(bad[0])}"
            )
        coords = list(coords)
    limits = joint.get("limits")
    if limits is not None:
        try:
            json.dumps(limits)
        except (TypeError, ValueError, RecursionError) as err:
            raise ModelError(
                f"body '{body_name}': joint 'limits' must be JSON-serializable"
            ) from err
    # what Joint.__init__ makes of these, without its copies of the arrays made above
    return Joint._made(
        type=jtype,
        axis=None if axis is None else _frozen(axis),
        sequence=sequence,
        name=name,
        coordinates=None if coords is None else tuple(coords),
        _limits=None if limits is None else copy.deepcopy(limits),
        transform=transform,
    )


_AXIS_NAMES = (
    "rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3",
)  # fmt: skip
_AXIS_FIELDS = frozenset({"axis", "coordinate", "function"})


def _check_transform(items, coords, body_name):
    """Validate a custom joint's 6 transform axes; return (axes, coordinate names)."""
    from ahbm.kinematics.functions import Constant, Function, LinearFunction, as_function

    where = f"body '{body_name}': custom joint"
    if not isinstance(items, (list, tuple)) or len(items) != 6:
        raise ModelError(
            f"{where} needs a 'transform' of 6 items (rotation1-3, translation1-3), each "
            f"{{'axis': [x, y, z], 'coordinate': name or None, 'function': {{...}}}}; got "
            f"{items!r}"
        )
    axes = []
    for k, item in enumerate(items):
        what = f"{where} transform[{k}] ({_AXIS_NAMES[k]})"
        if isinstance(item, TransformAxis):
            item = {"axis": item.axis, "coordinate": item.coordinate, "function": item.function}
        if not isinstance(item, dict):
            raise ModelError(f"{what} must be a dict with 'axis', 'coordinate', 'function'")
        unknown = [] if item.keys() <= _AXIS_FIELDS else sorted(set(item) - _AXIS_FIELDS)
        if unknown:
            raise ModelError(
                f"{what} has unknown fields {unknown}; an axis has 'axis', 'coordinate', 'function'"
            )
        if item.get("axis") is None:
            raise ModelError(f"{what} needs an 'axis' (3 numbers)")
        axis = _check_vec3(item["axis"], f"{what} axis")
        norm = _norm3(axis)
        if norm < 1e-12:
            raise ModelError(f"{what} axis is zero; give a direction")
        coord = item.get("coordinate")
        if coord is not None and not isinstance(coord, str):
            raise ModelError(f"{what} coordinate must be a name or None, got {coord!r}")
        fn = item.get("function")
        if fn is None:
            fn = LinearFunction(1.0, 0.0) if coord is not None else Constant(0.0)
        elif not isinstance(fn, Function):
            fn = as_function(fn, f"{what} function")
        # TransformAxis(axis / norm, coord, fn) without its copy of the new array (x / 1.0 is x)
        unit = axis if norm == 1.0 else axis / norm
        axes.append(TransformAxis._made(axis=_frozen(unit), coordinate=coord, function=fn))
    used = []
    for ax in axes:
        if ax.coordinate is not None and ax.coordinate not in used:
            used.append(ax.coordinate)
    if coords is None:
        coords = used
    if not isinstance(coords, (list, tuple)) or not all(isinstance(c, str) for c in coords):
        raise ModelError(f"{where} 'coordinates' must be a list of names, got {coords!r}")
    coords = list(coords)
    if len(set(coords)) != len(coords):
        raise ModelError(f"{where} lists a coordinate twice in 'coordinates': {coords}")
    unknown = [c for c in used if c not in coords]
    if unknown:
        raise ModelError(
            f"{where}: the transform uses the coordinates {unknown}, which are not in the "
            f"joint's 'coordinates' {coords}; add them"
        )
    idle = [c for c in coords if c not in used]
    if idle:
        raise ModelError(
            f"{where}: the coordinates {idle} drive no transform axis; remove them or give "
            "an axis that uses them"
        )
    return tuple(axes), coords


def _default_coordinate_names(name, code, sequence):
    if code == FIXED:
        return []
    if code in (REVOLUTE, PRISMATIC):
        return [name]
    if code in (UNIVERSAL, EULER, FREE_EULER):
        letters = sequence.lower()
        if len(set(letters)) == len(letters):
            rot = [f"{name}_r{ch}" for ch in letters]
        else:
            rot = [f"{name}_r{k}{ch}" for k, ch in enumerate(letters)]
        if code == FREE_EULER:
            return [f"{name}_tx", f"{name}_ty", f"{name}_tz"] + rot
        return rot
    if code == SPHERICAL:
        return [f"{name}_qx", f"{name}_qy", f"{name}_qz", f"{name}_qw"]
    if code == FREE:
        return [f"{name}_{s}" for s in ("tx", "ty", "tz", "qx", "qy", "qz", "qw")]
    if code == PLANAR:
        return [f"{name}_tx", f"{name}_ty", f"{name}_rz"]
    raise AssertionError(code)  # pragma: no cover


def _velocity_names(joint: Joint):
    if joint.code == SPHERICAL:
        return [f"{joint.name}_wx", f"{joint.name}_wy", f"{joint.name}_wz"]
    if joint.code == FREE:
        return [*joint.coordinates[:3]] + [f"{joint.name}_{s}" for s in ("wx", "wy", "wz")]
    return list(joint.coordinates)


def _check_inertia(inertia, body_name):
    I = _check_mat3(inertia, f"body '{body_name}': inertia")
    (a, b, c), (d, e, f), (g, h, i) = I.tolist()  # 3x3 in Python: numpy's calls cost more
    scale = max(1.0, abs(a), abs(b), abs(c), abs(d), abs(e), abs(f), abs(g), abs(h), abs(i))
    # np.allclose(I, I.T, atol, rtol=0)
    if max(abs(b - d), abs(c - g), abs(f - h)) > 1e-9 * scale:
        raise ModelError(
            f"body '{body_name}': inertia must be symmetric (kg m^2 about the COM), "
            f"got {I.tolist()}"
        )
    # I = 0.5 * (I + I.T) on Python floats: numpy's IEEE operations element by element
    # (x + y is y + x exactly), without its calls
    xx, yy, zz = 0.5 * (a + a), 0.5 * (e + e), 0.5 * (i + i)
    xy, xz, yz = 0.5 * (b + d), 0.5 * (c + g), 0.5 * (f + h)
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    tol = 1e-10 * scale
    # Gershgorin discs: every eigenvalue is >= min_i (I_ii - r_i) and <= max_i (I_ii + r_i)
    # (r_i the off-diagonal row sums); when these bounds already pass both checks, the
    # eigenvalues would too (the common case; no decomposition needed)
    ab, ac, bc = abs(xy), abs(xz), abs(yz)
    low = min(xx - ab - ac, yy - ab - bc, zz - ac - bc)
    high = max(xx + ab + ac, yy + ab + bc, zz + ac + bc)
    if low >= -tol and xx + yy + zz - 2.0 * high >= -tol:
        return I
    eig = np.linalg.eigvalsh(I)
    if eig[0] < -tol:
        raise ModelError(
            f"body '{body_name}': inertia is not positive definite (principal moments "
            f"{eig.tolist()}); check signs of the products of inertia"
        )
    if eig[0] + eig[1] < eig[2] - tol:
        raise ModelError(
            f"body '{body_name}': inertia violates the triangle inequality "
            f"(principal moments {eig.tolist()}: I1 + I2 must be >= I3)"
        )
    return I


#: tolerances of R.T @ R = I: np.allclose's atol 1e-6, and rtol 1e-5 on the diagonal
_ORTHO_DIAG, _ORTHO_OFF = 1e-6 + 1e-5, 1e-6


def _check_rotation(rotation, body_name, what="origin rotation"):
    R = _check_mat3(rotation, f"body '{body_name}': {what}")
    # np.allclose(R.T @ R, I, atol=1e-6) (rtol 1e-5 on the diagonal) and det R >= 0, written
    # out for 3x3 (numpy's calls cost ~10 us per body)
    (a, b, c), (d, e, f), (g, h, i) = R.tolist()
    diag_tol, off_tol = _ORTHO_DIAG, _ORTHO_OFF
    if (
        abs(a * a + d * d + g * g - 1.0) > diag_tol
        or abs(b * b + e * e + h * h - 1.0) > diag_tol
        or abs(c * c + f * f + i * i - 1.0) > diag_tol
        or abs(a * b + d * e + g * h) > off_tol
        or abs(a * c + d * f + g * i) > off_tol
        or abs(b * c + e * f + h * i) > off_tol
        or a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0
    ):
        raise ModelError(
            f"body '{body_name}': {what} is not a proper orthonormal matrix "
            f"(R.T @ R = I, det R = +1); got {R.tolist()}"
        )
    return R


def _make_body(
    name, pidx, joint, position, rotation, mass, com, inertia, markers, geometry,
    child_position=None, child_rotation=None,
):  # fmt: skip
    """Validate the fields of one body (its name and parent are already checked)."""
    jnt = _make_joint(joint, name)
    cpos = (
        np.zeros(3)
        if child_position is None
        else _check_vec3(child_position, f"body '{name}': child_position")
    )
    crot = (
        _EYE3.copy()
        if child_rotation is None
        else _check_rotation(child_rotation, name, "child_rotation")
    )
    pos = _check_vec3(position, f"body '{name}': origin position")
    rot = _EYE3.copy() if rotation is None else _check_rotation(rotation, name)
    if isinstance(mass, (str, bytes, bool)):
        raise ModelError(f"body '{name}': mass must be a number (kg), got {_brief(mass)}")
    try:
        m = float(mass)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"body '{name}': mass must be a number, got {_brief(mass)}") from err
    if not math.isfinite(m) or m < 0 or m > _MAX_MAGNITUDE:
        raise ModelError(
            f"body '{name}': mass must be finite, >= 0 and <= {_MAX_MAGNITUDE:g} kg, got "
            f"{_brief(mass)}"
        )
    c = _check_vec3(com, f"body '{name}': com")
    I = np.zeros((3, 3)) if inertia is None else _check_inertia(inertia, name)
    if markers is not None and not hasattr(markers, "items"):
        raise ModelError(
            f"body '{name}': markers must be a mapping of name -> [x, y, z], got "
            f"{type(markers).__name__}"
        )
    mk = {}
    for mname, mpos in (markers or {}).items():
        if not isinstance(mname, str) or not mname:
            raise ModelError(
                f"body '{name}': marker names must be non-empty strings, got {_brief(mname)}"
            )
        mk[mname] = _check_vec3(mpos, f"body '{name}': marker '{mname}'")
    if geometry is not None:
        try:
            json.dumps(geometry)
        except (TypeError, ValueError, RecursionError) as err:
            raise ModelError(f"body '{name}': geometry must be JSON-serializable") from err
    # Body(name, pidx, jnt, pos, rot, m, c, I, mk, geometry, cpos, crot) without its copies:
    # every array here is a new float64 array made by the checks above
    return Body._made(
        child_position=_frozen(cpos),
        child_rotation=_frozen(crot),
        name=name,
        parent=int(pidx),
        joint=jnt,
        position=_frozen(pos),
        rotation=_frozen(rot),
        mass=m,
        com=_frozen(c),
        inertia=_frozen(I),
        markers=types.MappingProxyType({str(k): _frozen(v) for k, v in mk.items()}),
        _geometry=None if geometry is None else copy.deepcopy(geometry),
    )
