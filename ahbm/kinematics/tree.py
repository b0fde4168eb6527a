"""Multibody tree models: joints, bodies and the :class:`Model`.

A :class:`Model` is a tree of rigid bodies. Each body is attached to its
parent (or to the ground) by one joint. Bodies are numbered parents first,
so ``model.parent[i] < i``; the joint of body ``i`` has the index ``i`` (AHBM
§2.1). The generalized coordinates ``q`` concatenate the joints' coordinates
in body order; ``nq`` may differ from ``nv`` for quaternion joints.

Frames
------
For body ``i`` with parent ``p``:

* the *joint frame* is fixed in the parent body; its pose in the parent body
  frame is ``origin`` (``position`` and ``rotation`` = ``p_R_joint``);
* the *body frame* is the joint frame after the joint motion: for
  coordinates ``q_i`` the joint gives a rotation ``R_J(q_i)`` and a
  translation ``r_J(q_i)`` (expressed in the joint frame), so the body frame
  has the pose ``p_R_i = rotation @ R_J`` and ``p_r_i = position + rotation @ r_J``;
* the centre of mass ``com`` and the inertia about it are in the body frame.

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

Model file (JSON, version 1)
----------------------------
``{"format": "ahbm-model", "version": 1, "name": ..., "gravity": [0, 0, -9.81],
"bodies": [{"name", "parent" ("ground" for a root), "joint": {"type", "axis" |
"sequence", "limits"?, "name"?, "coordinates"?}, "origin": {"position",
"rotation"}, "mass", "com"?, "inertia"?, "markers"? ({name: [x, y, z]}),
"geometry"?}, ...], "constraints"?: [{"type", ...}, ...]}``.
Bodies appear parents first; their order defines the order of coordinates.
Top-level sections other than the bodies (``"constraints"``, read into
``model.constraints``; later ``"muscles"`` and ``"contacts"``) are read and
written by the readers registered with
:func:`~ahbm.kinematics.model_file.register_model_section` (importing
``ahbm`` registers ``"constraints"``). Any other top-level entry, body field,
origin field or joint field is a ModelError that names it and the file:
nothing in a model file is dropped silently. Reading and writing live in
:mod:`ahbm.kinematics.model_file`; the configuration-space functions
(``neutral_q``, ``integrate_q``, ...) in :mod:`ahbm.kinematics.configuration`.
Both are re-exported here.
"""

from __future__ import annotations

import copy
import importlib
import json
import types

import numpy as np

from ahbm.errors import ModelError

__all__ = [
    "Joint",
    "Body",
    "Model",
    "ModelCache",
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
        :mod:`ahbm.kinematics.rotations`) is rejected by :meth:`Model.add_body`.
    name : str, optional
        Joint name; defaults to the body name.
    coordinates : sequence of str, optional
        Names of the ``nq`` coordinates; defaults are derived from the joint name.
    limits : object, optional
        Joint limits, stored and written back unchanged (JSON-serializable);
        reading ``limits`` returns a copy.

    Notes
    -----
    A Joint is checked when it is given to :meth:`Model.add_body` or
    :meth:`Model.update_body`; its attributes cannot be assigned and its
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
    """A rigid body of a :class:`Model` (read-only; see the module docstring for frames).

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
    Bodies are made by :meth:`Model.add_body` and replaced by
    :meth:`Model.update_body`; their attributes and arrays cannot be changed
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


# ----------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------


class ModelCache(dict):
    """The per-version plan cache of a :class:`Model` (a dict with a ``version``).

    Algorithms keep what they build from a model (the kernels' node plan,
    index arrays) in ``model.cache``. Every change of the model replaces the
    cache by an empty one with the new ``version``, so nothing built from an
    older version of the model can be found again.
    """

    __slots__ = ("version",)

    def __init__(self, version: int):
        super().__init__()
        self.version = version


#: Model attributes computed from the bodies (built lazily after each change).
_DERIVED = frozenset(
    {
        "parent", "joint_codes", "q_index", "v_index", "joint_nq", "joint_nv", "nq", "nv",
        "masses", "coms", "inertias", "positions", "rotations", "spatial_inertias",
        "children", "supports", "support_dofs",
    }
)  # fmt: skip
_INERTIAL = frozenset({"masses", "coms", "inertias", "positions", "rotations", "spatial_inertias"})
_KEEP = object()


class Model:
    """A tree of rigid bodies connected by joints.

    Parameters
    ----------
    name : str, optional
        Model name.
    gravity : array_like, shape (3,), optional
        Gravitational acceleration in the world frame, m/s^2. Default (0, 0, -9.81).

    Attributes
    ----------
    bodies : tuple of Body
        Bodies in order (parents first).
    parent : ndarray of int, shape (n_bodies,)
        Parent index of each body, -1 for the ground; ``parent[i] < i``.
    joint_codes : ndarray of int, shape (n_bodies,)
        Joint type codes (see ``JOINT_TYPES``).
    q_index, v_index : ndarray of int, shape (n_bodies,)
        Offsets of each joint's coordinates in ``q`` and ``qd``.
    nq, nv : int
        Numbers of position coordinates and of velocity coordinates.
    joint_nq, joint_nv : ndarray of int, shape (n_bodies,)
        Coordinates and velocities of each joint.
    masses, coms, inertias : ndarray, shapes (n_bodies,), (n_bodies, 3), (n_bodies, 3, 3)
        Inertial parameters (kg; m in the body frame; kg m^2 about the COM).
    positions, rotations : ndarray, shapes (n_bodies, 3), (n_bodies, 3, 3)
        Joint-frame origins and axes in the parent body frames.
    spatial_inertias : ndarray, shape (n_bodies, 6, 6)
        Spatial inertia of each body about its frame origin, angular first.
    children, supports : tuple of tuple of int
        Children of each body; bodies on the path from the root to each body.
    support_dofs : tuple of ndarray of int
        Velocity indices that move each body.
    gravity : ndarray, shape (3,)
        m/s^2; assign a new vector to change it.
    constraints : tuple of Constraint
        Kinematic constraints that belong to the model (loop closures, ...),
        loaded from and saved to the model file's ``"constraints"``;
        ``ahbm.dynamics.simulate`` and the constrained functions use them when
        given ``constraints=None``. Assign a list to change them.
    version : int
        Incremented by every change of the model.
    cache : ModelCache
        Plans that algorithms built from this version of the model.

    Notes
    -----
    **A model cannot go stale.** Bodies and joints are read-only, and every
    array of the model is read-only (``writeable=False``), so an in-place edit
    such as ``model.masses[2] = 5.0`` raises ``ValueError`` and
    ``model.bodies[2].mass = 5.0`` raises ModelError. A model changes only
    through :meth:`add_body`, :meth:`update_body` and the ``name``,
    ``gravity`` and ``constraints`` setters (any other attribute assignment
    is a ModelError that says which of these to use). Each change
    increments :attr:`version`, replaces :attr:`cache` (where algorithms keep
    their plans) by an empty one, and drops the derived arrays, which are
    rebuilt on first use; so no algorithm can use arrays or a plan built for
    an older version, and building a model body by body costs time linear in
    its size.

    Examples
    --------
    >>> model = Model("pendulum")
    >>> model.add_body("link", "ground", {"type": "revolute", "axis": [1, 0, 0]},
    ...                mass=1.0, com=[0, 0, -0.5], inertia=np.eye(3) * 0.1)
    0
    >>> model.nq, model.nv, model.coordinate_names
    (1, 1, ['link'])
    >>> _ = model.update_body("link", mass=2.0)
    >>> float(model.masses[0]), model.version
    (2.0, 2)
    """

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81)):
        d = self.__dict__
        d["_bodies"] = []
        d["_index"] = {}
        d["_sections"] = {}
        d["_version"] = 0
        d["_cache"] = ModelCache(0)
        d["_name"] = str(name)
        d["_gravity"] = _read_only(_check_vec3(gravity, f"model '{name}': gravity"))

    def __getstate__(self):
        # pickling and deepcopy keep the bodies and sections, not the plans
        d = self.__dict__
        keys = ("_bodies", "_index", "_sections", "_version", "_name", "_gravity")
        return {k: d[k] for k in keys}

    def __setstate__(self, state):
        self.__dict__.update(state, _cache=ModelCache(state["_version"]))
        for key in ("_bodies", "_index", "_sections"):  # never shared with the original
            self.__dict__[key] = type(state[key])(state[key])

    # -- attributes -----------------------------------------------------------

    def __setattr__(self, key, value):
        prop = getattr(type(self), key, None)
        if isinstance(prop, property) and prop.fset is not None:
            prop.fset(self, value)
            return
        if key in _sections():
            self.set_section(key, value)
            return
        if key in _INERTIAL or key == "bodies":
            how = "model.update_body(name, mass=..., com=..., inertia=..., position=..., ...)"
        elif key in _DERIVED:
            how = "model.add_body(...) or model.update_body(name, joint=...)"
        else:
            how = (
                "model.add_body, model.update_body, or assign model.name, model.gravity or "
                "model.constraints; algorithms keep their plans in model.cache"
            )
        raise ModelError(f"cannot set Model attribute {key!r}: a model changes only through {how}")

    def __delattr__(self, key):
        raise ModelError(f"cannot delete Model attribute {key!r}")

    def __getattr__(self, key):
        # called only for attributes not in the instance dict: the derived
        # arrays after a change (rebuilt here) and the registered file sections
        d = self.__dict__
        if "_bodies" not in d or key.startswith("__"):
            raise AttributeError(key)
        if key == "bodies":
            d["bodies"] = tuple(d["_bodies"])
            return d["bodies"]
        if key in _DERIVED:
            self._build()
            return d[key]
        if key in _sections():
            return d["_sections"].get(key, ())
        raise AttributeError(f"'Model' object has no attribute {key!r}")

    @property
    def name(self) -> str:
        """Model name."""
        return self._name

    @name.setter
    def name(self, value) -> None:
        self.__dict__["_name"] = str(value)
        self._changed()

    @property
    def gravity(self) -> np.ndarray:
        """Gravitational acceleration in the world frame, m/s^2 (read-only array)."""
        return self._gravity

    @gravity.setter
    def gravity(self, value) -> None:
        self.__dict__["_gravity"] = _read_only(_check_vec3(value, f"model '{self._name}': gravity"))
        self._changed()

    @property
    def constraints(self) -> tuple:
        """Constraints of the model (see the class docstring); assign a list to change them."""
        return self._sections.get("constraints", ())

    @constraints.setter
    def constraints(self, value) -> None:
        self.set_section("constraints", value)

    @property
    def version(self) -> int:
        """Number of changes made to the model since it was created."""
        return self._version

    @property
    def cache(self) -> ModelCache:
        """Plans built from the current version of the model (see :class:`ModelCache`)."""
        return self._cache

    def section(self, key: str) -> tuple:
        """Items of the model-file section `key` (e.g. ``"constraints"``); () if none."""
        _section_spec(key)
        return self._sections.get(key, ())

    def set_section(self, key: str, items) -> None:
        """Replace the items of the registered model-file section `key`.

        The section's checker validates them against this model (e.g. a
        constraint naming an unknown body is a ModelError); ``[]`` or None
        removes them.
        """
        spec = _section_spec(key)
        value = () if items is None else tuple(spec.check(list(items), self))
        if value:
            self._sections[key] = value
        else:
            self._sections.pop(key, None)
        self._changed()

    def _changed(self) -> None:
        """Record a change: drop the derived arrays, bump the version, new cache."""
        d = self.__dict__
        for key in _DERIVED:
            d.pop(key, None)
        d.pop("bodies", None)
        d["_version"] += 1
        d["_cache"] = ModelCache(d["_version"])

    # -- building -------------------------------------------------------------

    def add_body(
        self,
        name: str,
        parent,
        joint,
        *,
        position=(0.0, 0.0, 0.0),
        rotation=None,
        mass: float = 0.0,
        com=(0.0, 0.0, 0.0),
        inertia=None,
        markers: dict | None = None,
        geometry=None,
    ) -> int:
        """Append a body and its joint; return the new body's index.

        Parameters
        ----------
        name : str
            Unique body name (not ``"ground"``).
        parent : str or int
            Parent body name or index; ``"ground"`` or -1 for a root.
        joint : dict, Joint or str
            Joint description, e.g. ``{"type": "euler", "sequence": "ZXY"}``.
        position : array_like, shape (3,)
            Joint-frame origin in the parent body frame, m.
        rotation : array_like, shape (3, 3), optional
            Joint-frame axes in the parent body frame (``parent_R_joint``).
        mass : float
            Body mass, kg (>= 0).
        com : array_like, shape (3,)
            Centre of mass in the body frame, m.
        inertia : array_like, shape (3, 3), optional
            Inertia tensor about the COM in body axes, kg m^2 (zeros by default).
        markers : dict, optional
            Marker name -> position (3,) in the body frame, m.
        geometry : object, optional
            JSON-serializable drawing information, kept unchanged.

        Raises
        ------
        ModelError
            Duplicate name, unknown parent, negative mass, bad inertia, rotation
            or joint (a lowercase joint sequence among them).
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"body name must be a non-empty string, got {name!r}")
        if name == _GROUND:
            raise ModelError(f"'{_GROUND}' is reserved for the inertial frame; rename the body")
        if name in self._index:
            raise ModelError(f"duplicate body name '{name}'; body names must be unique")
        n = len(self._bodies)
        if isinstance(parent, str):
            if parent == _GROUND:
                pidx = -1
            elif parent == name:
                raise ModelError(f"body '{name}' names itself as parent (a cycle)")
            elif parent not in self._index:
                raise ModelError(
                    f"body '{name}': unknown parent '{parent}'; add the parent body first "
                    f"(known: {[_GROUND] + list(self._index)})"
                )
            else:
                pidx = self._index[parent]
        else:
            try:
                pidx = int(parent)
            except (TypeError, ValueError) as err:
                raise ModelError(f"body '{name}': parent must be a name or an index") from err
            if not -1 <= pidx < n:
                raise ModelError(f"body '{name}': parent index {pidx} out of range [-1, {n})")
        body = _make_body(
            name, pidx, joint, position, rotation, mass, com, inertia, markers, geometry
        )
        self._bodies.append(body)
        self._index[name] = n
        self._changed()
        return n

    def update_body(
        self,
        body,
        *,
        joint=_KEEP,
        position=_KEEP,
        rotation=_KEEP,
        mass=_KEEP,
        com=_KEEP,
        inertia=_KEEP,
        markers=_KEEP,
        geometry=_KEEP,
    ) -> int:
        """Replace some fields of a body (validated as in :meth:`add_body`).

        Parameters
        ----------
        body : str or int
            Body name or index.
        joint, position, rotation, mass, com, inertia, markers, geometry : optional
            New values (as in :meth:`add_body`); fields not given are kept.
            ``markers`` replaces all the body's markers: to add one, pass
            ``{**model.bodies[i].markers, "new": [x, y, z]}``. A new joint may
            change ``nq`` and ``nv``.

        Returns
        -------
        int
            The body's index.

        Raises
        ------
        ModelError
            A bad value, or a change that makes an item of a model-file section
            invalid (e.g. a constraint naming a coordinate that no longer
            exists); the model is then left unchanged.

        Examples
        --------
        >>> m = Model(); _ = m.add_body("a", "ground", "spherical", mass=1.0)
        >>> m.update_body("a", joint={"type": "revolute", "axis": [0, 0, 1]}, mass=2.0)
        0
        >>> m.nq, float(m.total_mass)
        (1, 2.0)
        """
        i = self.body_index(body)
        old = self._bodies[i]
        given = {
            "joint": joint, "position": position, "rotation": rotation, "mass": mass,
            "com": com, "inertia": inertia, "markers": markers, "geometry": geometry,
        }  # fmt: skip
        current = {
            "joint": old.joint, "position": old.position, "rotation": old.rotation,
            "mass": old.mass, "com": old.com, "inertia": old.inertia,
            "markers": old.markers, "geometry": old._geometry,
        }  # fmt: skip
        values = {k: current[k] if v is _KEEP else v for k, v in given.items()}
        new = _make_body(old.name, old.parent, **values)
        self._bodies[i] = new
        self._changed()
        try:
            for key, items in list(self._sections.items()):
                self._sections[key] = tuple(_section_spec(key).check(list(items), self))
        except Exception:
            self._bodies[i] = old
            self._changed()
            raise
        return i

    def _build(self) -> None:
        """Build the derived arrays (after a change, on first use); all read-only."""
        b = self._bodies
        n = len(b)
        parent = np.array([x.parent for x in b], dtype=int)
        nqs = np.array([x.joint.nq for x in b], dtype=int)
        nvs = np.array([x.joint.nv for x in b], dtype=int)
        q_index = np.concatenate([[0], np.cumsum(nqs)[:-1]]).astype(int) if n else nqs.copy()
        v_index = np.concatenate([[0], np.cumsum(nvs)[:-1]]).astype(int) if n else nvs.copy()
        masses = np.array([x.mass for x in b], dtype=float)
        coms = np.array([x.com for x in b], dtype=float).reshape(n, 3)
        inertias = np.array([x.inertia for x in b], dtype=float).reshape(n, 3, 3)
        # spatial inertia about the body origin, body axes, angular-first (6, 6)
        C = np.zeros((n, 3, 3))
        C[:, 0, 1], C[:, 0, 2], C[:, 1, 2] = -coms[:, 2], coms[:, 1], -coms[:, 0]
        C = C - np.swapaxes(C, 1, 2)
        mC = masses[:, None, None] * C
        I6 = np.zeros((n, 6, 6))
        I6[:, :3, :3] = inertias - mC @ C
        I6[:, :3, 3:] = mC
        I6[:, 3:, :3] = np.swapaxes(mC, 1, 2)
        I6[:, 3:, 3:] = masses[:, None, None] * np.eye(3)
        children = [[] for _ in range(n)]
        supports = []
        for i, x in enumerate(b):
            if x.parent >= 0:
                children[x.parent].append(i)
            supports.append((*supports[x.parent], i) if x.parent >= 0 else (i,))
        dofs = [np.arange(v_index[j], v_index[j] + nvs[j], dtype=int) for j in range(n)]
        support_dofs = tuple(np.concatenate([dofs[j] for j in s]) for s in supports)
        for a in support_dofs:
            a.setflags(write=False)
        arrays = {
            "parent": parent,
            "joint_codes": np.array([x.joint.code for x in b], dtype=int),
            "q_index": q_index,
            "v_index": v_index,
            "joint_nq": nqs,
            "joint_nv": nvs,
            "masses": masses,
            "coms": coms,
            "inertias": inertias,
            "positions": np.array([x.position for x in b], dtype=float).reshape(n, 3),
            "rotations": np.array([x.rotation for x in b], dtype=float).reshape(n, 3, 3),
            "spatial_inertias": I6,
        }
        for arr in arrays.values():
            arr.setflags(write=False)
        self.__dict__.update(
            arrays,
            nq=int(nqs.sum()),
            nv=int(nvs.sum()),
            children=tuple(tuple(c) for c in children),
            supports=tuple(supports),
            support_dofs=support_dofs,
        )

    # -- queries --------------------------------------------------------------

    @property
    def n_bodies(self) -> int:
        """Number of bodies (= number of joints)."""
        return len(self._bodies)

    @property
    def body_names(self) -> list[str]:
        """Body names in index order."""
        return [x.name for x in self._bodies]

    @property
    def joint_names(self) -> list[str]:
        """Joint names in index order (joint i moves body i)."""
        return [x.joint.name for x in self._bodies]

    @property
    def coordinate_names(self) -> list[str]:
        """Names of the ``nq`` position coordinates."""
        return [c for x in self._bodies for c in x.joint.coordinates]

    @property
    def velocity_names(self) -> list[str]:
        """Names of the ``nv`` velocity coordinates."""
        return [c for x in self._bodies for c in _velocity_names(x.joint)]

    @property
    def total_mass(self) -> float:
        """Sum of the body masses, kg."""
        return float(self.masses.sum())

    def body_index(self, body) -> int:
        """Index of a body given by name or index; raises ModelError if unknown."""
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            if not 0 <= int(body) < self.n_bodies:
                raise ModelError(
                    f"body index {body} out of range for model '{self.name}' "
                    f"with {self.n_bodies} bodies"
                )
            return int(body)
        if isinstance(body, str) and body in self._index:
            return self._index[body]
        raise ModelError(
            f"unknown body {body!r} in model '{self.name}'; known bodies: {self.body_names}"
        )

    def __repr__(self) -> str:
        return f"Model(name={self.name!r}, n_bodies={self.n_bodies}, nq={self.nq}, nv={self.nv})"

    # -- dict / JSON ----------------------------------------------------------

    def to_dict(self) -> dict:
        """Return the JSON model-file dictionary (version 1) of this model."""
        from ahbm.kinematics.model_file import model_to_dict

        return model_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "model dict") -> Model:
        """Build a model from a model-file dictionary (see :func:`load_model`)."""
        from ahbm.kinematics.model_file import model_from_dict

        return model_from_dict(data, source=source, cls=cls)

    def copy(self) -> Model:
        """Independent copy of the model (bodies are read-only, so they are shared)."""
        new = type(self)(self._name, self._gravity)
        new._bodies.extend(self._bodies)
        new._index.update(self._index)
        new._sections.update(self._sections)
        new._changed()
        return new


def _sections():
    from ahbm.kinematics import model_file

    return model_file._SECTIONS


def _section_spec(key):
    from ahbm.kinematics import model_file

    return model_file.section_spec(key)


# The model-file and configuration-space functions live in their own modules,
# which import this one; they stay importable from here, where they used to be.
_MOVED = {
    "load_model": "model_file",
    "save_model": "model_file",
    "register_model_section": "model_file",
    "neutral_q": "configuration",
    "random_model": "configuration",
    "random_q": "configuration",
    "integrate_q": "configuration",
    "difference_q": "configuration",
    "check_q": "configuration",
    "check_v": "configuration",
}


def __getattr__(name):
    if name in _MOVED:
        module = importlib.import_module(f"ahbm.kinematics.{_MOVED[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
