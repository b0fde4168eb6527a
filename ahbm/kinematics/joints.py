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
time derivatives).

Joint sequences are intrinsic and written in uppercase (``"ZXY"``), as in
scipy and :mod:`ahbm.kinematics.rotations`, where lowercase means extrinsic;
a lowercase joint sequence is a :class:`~ahbm.errors.ModelError`.
"""

from __future__ import annotations

import copy
import json
import types

import numpy as np

from ahbm.errors import ModelError

__all__ = ["Joint", "Body", "JOINT_TYPES"]

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
}
FIXED, REVOLUTE, PRISMATIC, UNIVERSAL, EULER, SPHERICAL, FREE, FREE_EULER, PLANAR = range(9)

_NQ = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4, 6: 7, 7: 6, 8: 3}
_NV = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 3, 6: 6, 7: 6, 8: 3}
_AXIS_INDEX = {"X": 0, "Y": 1, "Z": 2}
_GROUND = "ground"


# ----------------------------------------------------------------------------
# Joint and Body descriptions (immutable)
# ----------------------------------------------------------------------------


def _read_only(value) -> np.ndarray:
    """A float64 copy of `value` that cannot be written in place."""
    arr = np.array(value, dtype=float)
    arr.setflags(write=False)
    return arr


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
        Names of the ``nq`` coordinates; defaults are derived from the joint name.
    limits : object, optional
        Joint limits, stored and written back unchanged (JSON-serializable);
        reading ``limits`` returns a copy.

    Notes
    -----
    A Joint is checked when it is given to
    :meth:`~ahbm.kinematics.tree.Model.add_body` or
    :meth:`~ahbm.kinematics.tree.Model.update_body`; its attributes cannot be assigned and its
    ``axis`` array cannot be written in place.
    """

    __slots__ = ("type", "axis", "sequence", "name", "coordinates", "_limits")

    def __init__(self, type, axis=None, sequence=None, name=None, coordinates=None, limits=None):
        self._init(
            type=type,
            axis=None if axis is None else _read_only(axis),
            sequence=sequence,
            name=name,
            coordinates=None if coordinates is None else tuple(coordinates),
            _limits=copy.deepcopy(limits),
        )

    @property
    def limits(self):
        """Joint limits as given (a copy; JSON-serializable) or None."""
        return copy.deepcopy(self._limits)

    def __reduce__(self):
        fields = (self.type, self.axis, self.sequence, self.name, self.coordinates, self._limits)
        return (type(self), fields)

    @property
    def code(self) -> int:
        return JOINT_TYPES[self.type]

    @property
    def nq(self) -> int:
        return _NQ[self.code]

    @property
    def nv(self) -> int:
        return _NV[self.code]

    def __repr__(self) -> str:
        extra = ""
        if self.axis is not None:
            extra = f", axis={self.axis.tolist()}"
        if self.sequence is not None:
            extra = f", sequence={self.sequence!r}"
        return f"Joint({self.type!r}{extra}, name={self.name!r})"


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
        "_geometry",
    )  # fmt: skip

    def __init__(
        self, name, parent, joint, position, rotation, mass, com, inertia, markers=None,
        geometry=None,
    ):  # fmt: skip
        self._init(
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
        return (type(self), fields)

    def __repr__(self) -> str:
        return (
            f"Body({self.name!r}, parent={self.parent}, joint={self.joint!r}, "
            f"mass={self.mass:g}, markers={list(self.markers)})"
        )


def _check_vec3(value, what):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ModelError(f"{what} must be 3 numbers, got {value!r}") from err
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise ModelError(f"{what} must be 3 finite numbers, got {value!r}")
    return arr


def _check_mat3(value, what):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ModelError(f"{what} must be a 3x3 matrix, got {value!r}") from err
    if arr.shape != (3, 3) or not np.isfinite(arr).all():
        raise ModelError(f"{what} must be a finite 3x3 matrix, got shape {arr.shape}")
    return arr


_JOINT_FIELDS = ("type", "axis", "sequence", "name", "coordinates", "limits")


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
    unknown = sorted(str(k) for k in set(joint) - set(_JOINT_FIELDS))
    if unknown:
        raise ModelError(
            f"body '{body_name}': joint has unknown fields {unknown}; a joint has the fields "
            f"{list(_JOINT_FIELDS)}"
        )
    jtype = joint.get("type")
    if jtype not in JOINT_TYPES:
        raise ModelError(
            f"body '{body_name}': unknown joint type {jtype!r}; use one of {sorted(JOINT_TYPES)}"
        )
    axis = None
    sequence = None
    if jtype in ("revolute", "prismatic"):
        if joint.get("axis") is None:
            raise ModelError(f"body '{body_name}': {jtype} joint needs an 'axis' (3 numbers)")
        axis = _check_vec3(joint["axis"], f"body '{body_name}': joint axis")
        norm = np.linalg.norm(axis)
        if abs(norm - 1.0) > 1e-6:
            raise ModelError(
                f"body '{body_name}': joint axis {axis.tolist()} must have unit length "
                f"(norm is {norm:.6g}); normalize it"
            )
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
    if coords is None:
        coords = _default_coordinate_names(name, code, sequence)
    else:
        if not isinstance(coords, (list, tuple)) or len(coords) != _NQ[code]:
            raise ModelError(
                f"body '{body_name}': joint 'coordinates' must list {_NQ[code]} names for a "
                f"{jtype} joint, got {coords!r}"
            )
        coords = [str(c) for c in coords]
    limits = joint.get("limits")
    if limits is not None:
        try:
            json.dumps(limits)
        except (TypeError, ValueError) as err:
            raise ModelError(
                f"body '{body_name}': joint 'limits' must be JSON-serializable"
            ) from err
    return Joint(jtype, axis, sequence, name, coords, limits)


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
    scale = max(1.0, float(np.abs(I).max()))
    if not np.allclose(I, I.T, atol=1e-9 * scale, rtol=0):
        raise ModelError(
            f"body '{body_name}': inertia must be symmetric (kg m^2 about the COM), "
            f"got {I.tolist()}"
        )
    I = 0.5 * (I + I.T)
    eig = np.linalg.eigvalsh(I)
    tol = 1e-10 * scale
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


def _check_rotation(rotation, body_name):
    R = _check_mat3(rotation, f"body '{body_name}': origin rotation")
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise ModelError(
            f"body '{body_name}': origin rotation is not a proper orthonormal matrix "
            f"(R.T @ R = I, det R = +1); got {R.tolist()}"
        )
    return R


def _make_body(name, pidx, joint, position, rotation, mass, com, inertia, markers, geometry):
    """Validate the fields of one body (its name and parent are already checked)."""
    jnt = _make_joint(joint, name)
    pos = _check_vec3(position, f"body '{name}': origin position")
    rot = np.eye(3) if rotation is None else _check_rotation(rotation, name)
    try:
        m = float(mass)
    except (TypeError, ValueError) as err:
        raise ModelError(f"body '{name}': mass must be a number, got {mass!r}") from err
    if not np.isfinite(m) or m < 0:
        raise ModelError(f"body '{name}': mass must be finite and >= 0 kg, got {mass!r}")
    c = _check_vec3(com, f"body '{name}': com")
    I = np.zeros((3, 3)) if inertia is None else _check_inertia(inertia, name)
    if markers is not None and not hasattr(markers, "items"):
        raise ModelError(
            f"body '{name}': markers must be a mapping of name -> [x, y, z], got "
            f"{type(markers).__name__}"
        )
    mk = {}
    for mname, mpos in (markers or {}).items():
        mk[str(mname)] = _check_vec3(mpos, f"body '{name}': marker '{mname}'")
    if geometry is not None:
        try:
            json.dumps(geometry)
        except (TypeError, ValueError) as err:
            raise ModelError(f"body '{name}': geometry must be JSON-serializable") from err
    return Body(name, pidx, jnt, pos, rot, m, c, I, mk, geometry)
