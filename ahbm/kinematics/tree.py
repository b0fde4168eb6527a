"""Multibody tree models: bodies, joints, inertial parameters and model files.

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

Model file (JSON, version 1)
----------------------------
``{"format": "ahbm-model", "version": 1, "name": ..., "gravity": [0, 0, -9.81],
"bodies": [{"name", "parent" ("ground" for a root), "joint": {"type", "axis" |
"sequence", "limits"?, "name"?, "coordinates"?}, "origin": {"position",
"rotation"}, "mass", "com", "inertia", "markers"?, "geometry"?}, ...]}``.
Bodies appear parents first; their order defines the order of coordinates.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ahbm._validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError, FileFormatError, ModelError
from ahbm.kinematics.rotations import (
    quat_multiply,
    quat_normalize,
    quat_to_matrix,
    quat_to_rotvec,
    rotvec_to_quat,
)

__all__ = [
    "Joint",
    "Body",
    "Model",
    "JOINT_TYPES",
    "load_model",
    "save_model",
    "integrate_q",
    "difference_q",
    "neutral_q",
    "random_model",
    "random_q",
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
# Small batched 3-D helpers (internal; shared with forward kinematics and the
# dynamics algorithms). All accept leading batch axes.
# ----------------------------------------------------------------------------


def _cross(a, b):
    """Batched cross product of (..., 3) arrays (faster than np.cross)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def _skew(v):
    """Skew-symmetric matrix [v]x of (..., 3) vectors."""
    v = np.asarray(v, dtype=float)
    S = np.zeros(v.shape + (3,))
    S[..., 0, 1] = -v[..., 2]
    S[..., 0, 2] = v[..., 1]
    S[..., 1, 0] = v[..., 2]
    S[..., 1, 2] = -v[..., 0]
    S[..., 2, 0] = -v[..., 1]
    S[..., 2, 1] = v[..., 0]
    return S


# ----------------------------------------------------------------------------
# Joint and Body descriptions
# ----------------------------------------------------------------------------


@dataclass
class Joint:
    """A joint connecting a body to its parent.

    Parameters
    ----------
    type : str
        One of ``JOINT_TYPES``.
    axis : array_like, shape (3,), optional
        Unit axis for ``revolute`` and ``prismatic`` joints (joint frame).
    sequence : str, optional
        Axis letters for ``universal`` (2), ``euler`` and ``free_euler`` (3),
        e.g. ``"ZYX"`` (intrinsic, ``R = R1(q0) R2(q1) R3(q2)``; lowercase
        letters are accepted and mean the same intrinsic sequence).
    name : str, optional
        Joint name; defaults to the body name.
    coordinates : list of str, optional
        Names of the ``nq`` coordinates; defaults are derived from the joint name.
    limits : object, optional
        Joint limits, stored and written back unchanged (JSON-serializable).
    """

    type: str
    axis: np.ndarray | None = None
    sequence: str | None = None
    name: str | None = None
    coordinates: list | None = None
    limits: object = None

    @property
    def code(self) -> int:
        return JOINT_TYPES[self.type]

    @property
    def nq(self) -> int:
        return _NQ[self.code]

    @property
    def nv(self) -> int:
        return _NV[self.code]


@dataclass
class Body:
    """A rigid body of a :class:`Model` (see the module docstring for frames)."""

    name: str
    parent: int
    joint: Joint
    position: np.ndarray
    rotation: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    markers: dict = field(default_factory=dict)
    geometry: object = None


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


def _make_joint(joint, body_name) -> Joint:
    """Validate a joint given as Joint, dict or type string."""
    if isinstance(joint, str):
        joint = {"type": joint}
    elif isinstance(joint, Joint):
        joint = {
            "type": joint.type,
            "axis": joint.axis,
            "sequence": joint.sequence,
            "name": joint.name,
            "coordinates": joint.coordinates,
            "limits": joint.limits,
        }
    if not isinstance(joint, dict):
        raise ModelError(
            f"body '{body_name}': joint must be a dict like {{'type': 'revolute', "
            f"'axis': [0, 0, 1]}}, got {type(joint).__name__}"
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
        sequence = seq.upper()
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
    limits = copy.deepcopy(joint.get("limits"))
    if limits is not None:
        try:
            json.dumps(limits)
        except (TypeError, ValueError) as err:
            raise ModelError(
                f"body '{body_name}': joint 'limits' must be JSON-serializable"
            ) from err
    return Joint(jtype, axis, sequence, name, list(coords), limits)


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
        return joint.coordinates[:3] + [f"{joint.name}_{s}" for s in ("wx", "wy", "wz")]
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


# ----------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------


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
    bodies : list of Body
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
    children, supports : list of list of int
        Children of each body; bodies on the path from the root to each body.

    Notes
    -----
    Bodies must be added parents first; derived arrays are rebuilt after each
    ``add_body`` so that algorithms never re-process the model.

    Examples
    --------
    >>> model = Model("pendulum")
    >>> model.add_body("link", "ground", {"type": "revolute", "axis": [1, 0, 0]},
    ...                mass=1.0, com=[0, 0, -0.5], inertia=np.eye(3) * 0.1)
    0
    >>> model.nq, model.nv, model.coordinate_names
    (1, 1, ['link'])
    """

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81)):
        self.name = str(name)
        self.gravity = _check_vec3(gravity, f"model '{name}': gravity")
        self.bodies: list[Body] = []
        self._index: dict[str, int] = {}
        self._refresh()

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
            Duplicate name, unknown parent, negative mass, bad inertia, rotation or joint.
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"body name must be a non-empty string, got {name!r}")
        if name == _GROUND:
            raise ModelError(f"'{_GROUND}' is reserved for the inertial frame; rename the body")
        if name in self._index:
            raise ModelError(f"duplicate body name '{name}'; body names must be unique")
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
            if not -1 <= pidx < len(self.bodies):
                raise ModelError(
                    f"body '{name}': parent index {pidx} out of range [-1, {len(self.bodies)})"
                )
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
        mk = {}
        for mname, mpos in (markers or {}).items():
            mk[str(mname)] = _check_vec3(mpos, f"body '{name}': marker '{mname}'")
        if geometry is not None:
            try:
                json.dumps(geometry)
            except (TypeError, ValueError) as err:
                raise ModelError(f"body '{name}': geometry must be JSON-serializable") from err
        body = Body(name, pidx, jnt, pos, rot, m, c, I, mk, copy.deepcopy(geometry))
        self.bodies.append(body)
        self._index[name] = len(self.bodies) - 1
        self._refresh()
        return len(self.bodies) - 1

    def _refresh(self):
        """Normalize derived arrays (called after every structural change)."""
        self.__dict__.pop("_joint_cache", None)
        b = self.bodies
        n = len(b)
        self.parent = np.array([x.parent for x in b], dtype=int)
        self.joint_codes = np.array([x.joint.code for x in b], dtype=int)
        nqs = np.array([x.joint.nq for x in b], dtype=int)
        nvs = np.array([x.joint.nv for x in b], dtype=int)
        self.q_index = np.concatenate([[0], np.cumsum(nqs)[:-1]]).astype(int) if n else nqs
        self.v_index = np.concatenate([[0], np.cumsum(nvs)[:-1]]).astype(int) if n else nvs
        self.joint_nq = nqs
        self.joint_nv = nvs
        self.nq = int(nqs.sum())
        self.nv = int(nvs.sum())
        self.masses = np.array([x.mass for x in b], dtype=float)
        self.coms = np.array([x.com for x in b], dtype=float).reshape(n, 3)
        self.inertias = np.array([x.inertia for x in b], dtype=float).reshape(n, 3, 3)
        self.positions = np.array([x.position for x in b], dtype=float).reshape(n, 3)
        self.rotations = np.array([x.rotation for x in b], dtype=float).reshape(n, 3, 3)
        self.children = [[j for j in range(n) if b[j].parent == i] for i in range(n)]
        # spatial inertia about the body origin, body axes, angular-first (6, 6)
        I6 = np.zeros((n, 6, 6))
        for i, x in enumerate(b):
            C = _skew(x.com)
            I6[i, :3, :3] = x.inertia + x.mass * C @ C.T
            I6[i, :3, 3:] = x.mass * C
            I6[i, 3:, :3] = x.mass * C.T
            I6[i, 3:, 3:] = x.mass * np.eye(3)
        self.spatial_inertias = I6
        # support[i] = indices of the bodies on the path root..i (inclusive)
        sup = []
        for i in range(n):
            path = [i]
            while b[path[-1]].parent >= 0:
                path.append(b[path[-1]].parent)
            sup.append(path[::-1])
        self.supports = sup
        # velocity indices influencing body i
        self.support_dofs = [
            np.concatenate(
                [np.arange(self.v_index[j], self.v_index[j] + nvs[j], dtype=int) for j in s]
            ).astype(int)
            if s
            else np.zeros(0, dtype=int)
            for s in sup
        ]

    # -- queries --------------------------------------------------------------

    @property
    def n_bodies(self) -> int:
        """Number of bodies (= number of joints)."""
        return len(self.bodies)

    @property
    def body_names(self) -> list[str]:
        """Body names in index order."""
        return [x.name for x in self.bodies]

    @property
    def joint_names(self) -> list[str]:
        """Joint names in index order (joint i moves body i)."""
        return [x.joint.name for x in self.bodies]

    @property
    def coordinate_names(self) -> list[str]:
        """Names of the ``nq`` position coordinates."""
        return [c for x in self.bodies for c in x.joint.coordinates]

    @property
    def velocity_names(self) -> list[str]:
        """Names of the ``nv`` velocity coordinates."""
        return [c for x in self.bodies for c in _velocity_names(x.joint)]

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
        bodies = []
        for x in self.bodies:
            j = {"type": x.joint.type}
            if x.joint.axis is not None:
                j["axis"] = x.joint.axis.tolist()
            if x.joint.sequence is not None:
                j["sequence"] = x.joint.sequence
            j["name"] = x.joint.name
            j["coordinates"] = list(x.joint.coordinates)
            if x.joint.limits is not None:
                j["limits"] = copy.deepcopy(x.joint.limits)
            d = {
                "name": x.name,
                "parent": _GROUND if x.parent < 0 else self.bodies[x.parent].name,
                "joint": j,
                "origin": {"position": x.position.tolist(), "rotation": x.rotation.tolist()},
                "mass": x.mass,
                "com": x.com.tolist(),
                "inertia": x.inertia.tolist(),
            }
            if x.markers:
                d["markers"] = {k: v.tolist() for k, v in x.markers.items()}
            if x.geometry is not None:
                d["geometry"] = copy.deepcopy(x.geometry)
            bodies.append(d)
        return {
            "format": "ahbm-model",
            "version": 1,
            "name": self.name,
            "gravity": self.gravity.tolist(),
            "bodies": bodies,
        }

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "model dict") -> Model:
        """Build a model from a model-file dictionary (see :func:`load_model`)."""
        if not isinstance(data, dict):
            raise FileFormatError(f"{source}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != "ahbm-model":
            raise FileFormatError(
                f"{source}: 'format' must be \"ahbm-model\", got {data.get('format')!r}"
            )
        if data.get("version") != 1:
            raise FileFormatError(
                f"{source}: unsupported model-file version {data.get('version')!r} "
                "(this ahbm reads version 1)"
            )
        bodies = data.get("bodies")
        if not isinstance(bodies, list):
            raise ModelError(f"{source}: 'bodies' must be a list of body objects")
        model = cls(data.get("name", "model"), data.get("gravity", (0.0, 0.0, -9.81)))
        names = [b.get("name") if isinstance(b, dict) else None for b in bodies]
        parents = {b.get("name"): b.get("parent") for b in bodies if isinstance(b, dict)}
        for k, b in enumerate(bodies):
            if not isinstance(b, dict):
                raise ModelError(f"{source}: body #{k} must be an object")
            bname = b.get("name")
            parent = b.get("parent")
            if parent is None:
                raise ModelError(
                    f"{source}: body '{bname}' has no 'parent' (use \"ground\" for a root)"
                )
            if parent != _GROUND and parent not in model._index and parent != bname:
                if parent in names:
                    # listed later: cycle or wrong order
                    seen, cur = {bname}, parent
                    while cur in parents and cur != _GROUND:
                        if cur in seen:
                            raise ModelError(
                                f"{source}: body '{bname}' is part of a cycle of parents "
                                f"through '{cur}'; a model must be a tree"
                            )
                        seen.add(cur)
                        cur = parents[cur]
                    raise ModelError(
                        f"{source}: body '{bname}' is listed before its parent '{parent}'; "
                        "list parents first"
                    )
            for key in ("joint", "mass"):
                if key not in b:
                    raise ModelError(f"{source}: body '{bname}' has no '{key}' field")
            origin = b.get("origin", {}) or {}
            if not isinstance(origin, dict):
                raise ModelError(f"{source}: body '{bname}': 'origin' must be an object")
            unknown = set(b) - {
                "name", "parent", "joint", "origin", "mass", "com", "inertia",
                "markers", "geometry",
            }  # fmt: skip
            if unknown:
                raise ModelError(f"{source}: body '{bname}' has unknown fields {sorted(unknown)}")
            model.add_body(
                bname,
                parent,
                b["joint"],
                position=origin.get("position", (0.0, 0.0, 0.0)),
                rotation=origin.get("rotation"),
                mass=b["mass"],
                com=b.get("com", (0.0, 0.0, 0.0)),
                inertia=b.get("inertia"),
                markers=b.get("markers"),
                geometry=b.get("geometry"),
            )
        return model

    def copy(self) -> Model:
        """Deep copy of the model."""
        return Model.from_dict(self.to_dict())


def load_model(path_or_dict) -> Model:
    """Load a model from a JSON model file (or its already-parsed dictionary).

    Parameters
    ----------
    path_or_dict : str, os.PathLike or dict
        Path to an ``ahbm-model`` JSON file (version 1), or the dictionary.

    Returns
    -------
    Model

    Raises
    ------
    FileFormatError
        The file is missing, not JSON, or not an ahbm model file.
    ModelError
        The content is inconsistent (the message names the body and field).

    Examples
    --------
    >>> m = load_model({"format": "ahbm-model", "version": 1, "name": "p",
    ...     "bodies": [{"name": "a", "parent": "ground", "mass": 1.0,
    ...                 "joint": {"type": "revolute", "axis": [0, 1, 0]}}]})
    >>> m.nq
    1
    """
    if isinstance(path_or_dict, dict):
        return Model.from_dict(path_or_dict)
    if not isinstance(path_or_dict, (str, os.PathLike)):
        raise FileFormatError(
            f"load_model expects a path or a dict, got {type(path_or_dict).__name__}"
        )
    path = Path(path_or_dict)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise FileFormatError(f"cannot read model file '{path}': {err}") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise FileFormatError(f"model file '{path}' is not valid JSON: {err}") from err
    return Model.from_dict(data, source=f"model file '{path}'")


def save_model(model: Model, path) -> Path:
    """Write a model to a JSON model file (atomically: temp file then rename).

    Parameters
    ----------
    model : Model
    path : str or os.PathLike
        Destination file.

    Returns
    -------
    Path
        The written path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> m = Model("p"); _ = m.add_body("a", "ground", "fixed", mass=1.0)
    >>> p = save_model(m, pathlib.Path(tempfile.mkdtemp()) / "p.json")
    >>> load_model(p).body_names
    ['a']
    """
    if not isinstance(model, Model):
        raise ModelError(f"save_model expects a Model, got {type(model).__name__}")
    path = Path(path)
    text = json.dumps(model.to_dict(), indent=2)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileFormatError(f"cannot write model file '{path}': folder does not exist")
    from ahbm._files import atomic_path

    with atomic_path(path, argname="path") as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------
# Configuration-space helpers
# ----------------------------------------------------------------------------


def check_q(model: Model, q, name: str = "q") -> np.ndarray:
    """Validate generalized coordinates (..., nq) (internal helper)."""
    arr = as_float_array(q, name)
    return check_trailing_shape(arr, (model.nq,), name)


def check_v(model: Model, v, name: str) -> np.ndarray:
    """Validate velocity-like arrays (..., nv) (internal helper)."""
    arr = as_float_array(v, name)
    return check_trailing_shape(arr, (model.nv,), name)


def neutral_q(model: Model) -> np.ndarray:
    """Neutral configuration: zeros, identity quaternions.

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> neutral_q(m)
    array([0., 0., 0., 1.])
    """
    q = np.zeros(model.nq)
    for i, code in enumerate(model.joint_codes):
        k = model.q_index[i]
        if code == SPHERICAL:
            q[k + 3] = 1.0
        elif code == FREE:
            q[k + 6] = 1.0
    return q


def random_model(
    n_bodies: int,
    *,
    rng,
    joint_types=("revolute", "prismatic", "universal", "euler", "spherical", "free"),
    name: str = "random",
) -> Model:
    """A random tree for tests and benchmarks (bodies numbered depth-first).

    Parameters
    ----------
    n_bodies : int
        Number of bodies (>= 1).
    rng : numpy.random.Generator
        Source of randomness.
    joint_types : sequence of str, optional
        Joint types to draw from (any of ``JOINT_TYPES``; ``fixed`` is never
        used for a body attached to the ground).
    name : str, optional

    Returns
    -------
    Model
        Random parents (about one body in ten is a root), joint axes and
        sequences, origins within 0.5 m, masses in [0.5, 5] kg, COMs within
        0.3 m and random inertias that satisfy the triangle inequality.

    Examples
    --------
    >>> m = random_model(5, rng=np.random.default_rng(0))
    >>> m.n_bodies, bool(np.all(m.parent < np.arange(5)))
    (5, True)
    """
    n = int(n_bodies)
    if n < 1:
        raise ModelError(f"`n_bodies` must be >= 1, got {n_bodies!r}")
    for jt in joint_types:
        if jt not in JOINT_TYPES:
            raise ModelError(f"unknown joint type {jt!r} in `joint_types`")
    parents = [-1] + [int(rng.integers(0, i)) if rng.random() < 0.9 else -1 for i in range(1, n)]
    children = [[c for c in range(n) if parents[c] == k] for k in range(n)]
    order = []
    stack = [r for r in range(n) if parents[r] < 0][::-1]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(children[k][::-1])
    new_index = {old: new for new, old in enumerate(order)}

    def rotation():
        quat = rng.normal(size=4)
        return quat_to_matrix(quat)

    def sequence(k):
        seq = ["XYZ"[rng.integers(3)]]
        while len(seq) < k:
            ch = "XYZ"[rng.integers(3)]
            if ch != seq[-1]:
                seq.append(ch)
        return "".join(seq)

    model = Model(name, gravity=rng.normal(size=3) * 5.0)
    for i, old in enumerate(order):
        parent = -1 if parents[old] < 0 else new_index[parents[old]]
        jtype = joint_types[int(rng.integers(len(joint_types)))]
        if parent < 0 and jtype == "fixed":
            jtype = "revolute"
        joint = {"type": jtype}
        if jtype in ("revolute", "prismatic"):
            a = rng.normal(size=3)
            joint["axis"] = a / np.linalg.norm(a)
        elif jtype == "universal":
            joint["sequence"] = sequence(2)
        elif jtype in ("euler", "free_euler"):
            joint["sequence"] = sequence(3)
        d = rng.uniform(0.05, 1.0, size=3)
        lo, hi = abs(d[0] - d[1]), d[0] + d[1]
        d[2] = lo + (hi - lo) * rng.uniform(0.05, 0.95)
        Rot = rotation()
        model.add_body(
            f"b{i}",
            parent,
            joint,
            position=rng.normal(size=3) * 0.5,
            rotation=rotation(),
            mass=rng.uniform(0.5, 5.0),
            com=rng.normal(size=3) * 0.3,
            inertia=Rot @ np.diag(d) @ Rot.T,
        )
    return model


def random_q(model: Model, *, rng, size=(), scale: float = 1.0) -> np.ndarray:
    """Random coordinates (..., nq): normal angles/translations, uniform unit quaternions.

    Examples
    --------
    >>> m = random_model(3, rng=np.random.default_rng(1))
    >>> random_q(m, rng=np.random.default_rng(2), size=(4,)).shape[0]
    4
    """
    size = (size,) if np.isscalar(size) else tuple(size)
    q = rng.normal(size=size + (model.nq,)) * scale
    for i, code in enumerate(model.joint_codes):
        if code in (SPHERICAL, FREE):
            k = model.q_index[i] + (3 if code == FREE else 0)
            quat = rng.normal(size=size + (4,))
            q[..., k : k + 4] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    return q


def integrate_q(model: Model, q, v, dt=1.0) -> np.ndarray:
    """Integrate coordinates with a constant velocity: q ⊕ v dt.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    v : array_like, shape (..., nv)
        Generalized velocity (see the joint types for its meaning).
    dt : float or array_like, shape (...)
        Time step, s.

    Returns
    -------
    ndarray, shape (..., nq)

    Notes
    -----
    Quaternion joints use the exponential map in the body frame,
    ``Q_new = Q ⊗ exp(ω dt / 2)`` (angular velocity ``ω`` in the body frame);
    the translation of a ``free`` joint moves by ``ṙ dt``. All other
    coordinates are added: ``q + v dt``.

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> integrate_q(m, [0, 0, 0, 1], [0, 0, np.pi], 1.0).round(12)
    array([0., 0., 1., 0.])
    """
    q = check_q(model, q)
    v = check_v(model, v, "v")
    dt = as_float_array(dt, "dt")
    shape = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], dt.shape)
    q = np.broadcast_to(q, shape + (model.nq,))
    v = np.broadcast_to(v, shape + (model.nv,))
    dt = np.broadcast_to(dt, shape)[..., None]
    out = np.empty(shape + (model.nq,))
    for i, code in enumerate(model.joint_codes):
        qi, vi = model.q_index[i], model.v_index[i]
        nq, nv = model.joint_nq[i], model.joint_nv[i]
        if code in (SPHERICAL, FREE):
            t = 3 if code == FREE else 0
            if t:
                out[..., qi : qi + 3] = q[..., qi : qi + 3] + v[..., vi : vi + 3] * dt
            quat = q[..., qi + t : qi + t + 4]
            dq = rotvec_to_quat(v[..., vi + t : vi + t + 3] * dt)
            new = quat_multiply(quat_normalize(quat), dq)
            out[..., qi + t : qi + t + 4] = new / np.linalg.norm(new, axis=-1, keepdims=True)
        else:
            out[..., qi : qi + nq] = q[..., qi : qi + nq] + v[..., vi : vi + nv] * dt
    return out


def difference_q(model: Model, q0, q1) -> np.ndarray:
    """Velocity that moves ``q0`` to ``q1`` in unit time: ``integrate_q(q0, v, 1) == q1``.

    Parameters
    ----------
    model : Model
    q0, q1 : array_like, shape (..., nq)

    Returns
    -------
    ndarray, shape (..., nv)

    Notes
    -----
    Quaternion joints use the logarithm of the relative rotation,
    ``ω = log(Q0* ⊗ Q1)`` (shortest arc, body frame).

    Examples
    --------
    >>> m = Model(); _ = m.add_body("b", "ground", "spherical", mass=1.0)
    >>> difference_q(m, [0, 0, 0, 1], [0, 0, 1, 0]).round(12)
    array([0.        , 0.        , 3.14159265])
    """
    q0 = check_q(model, q0, "q0")
    q1 = check_q(model, q1, "q1")
    shape = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    q0 = np.broadcast_to(q0, shape + (model.nq,))
    q1 = np.broadcast_to(q1, shape + (model.nq,))
    out = np.empty(shape + (model.nv,))
    for i, code in enumerate(model.joint_codes):
        qi, vi = model.q_index[i], model.v_index[i]
        nq = model.joint_nq[i]
        if code in (SPHERICAL, FREE):
            t = 3 if code == FREE else 0
            if t:
                out[..., vi : vi + 3] = q1[..., qi : qi + 3] - q0[..., qi : qi + 3]
            a = q0[..., qi + t : qi + t + 4]
            b = q1[..., qi + t : qi + t + 4]
            conj = a * np.array([-1.0, -1.0, -1.0, 1.0])
            rel = quat_multiply(quat_normalize(conj), quat_normalize(b))
            out[..., vi + t : vi + t + 3] = quat_to_rotvec(rel)
        else:
            out[..., vi : vi + nq] = q1[..., qi : qi + nq] - q0[..., qi : qi + nq]
    return out


def _check_quaternions(model: Model, q: np.ndarray, name: str = "q") -> None:
    """Raise DataError if a quaternion block has (near) zero norm."""
    cache = model.__dict__.setdefault("_joint_cache", {})
    if "quaternion_blocks" not in cache:
        blocks = []
        for i, code in enumerate(model.joint_codes):
            if code in (SPHERICAL, FREE):
                blocks.append((i, int(model.q_index[i]) + (3 if code == FREE else 0)))
        cols = np.array([k + c for _, k in blocks for c in range(4)], dtype=np.intp)
        cache["quaternion_blocks"] = (blocks, cols)
    blocks, cols = cache["quaternion_blocks"]
    if not blocks:
        return
    qq = q[..., cols].reshape(q.shape[:-1] + (len(blocks), 4))
    small = np.einsum("...i,...i->...", qq, qq) < 1e-18
    if small.any():
        j = int(np.flatnonzero(small.reshape(-1, len(blocks)).any(axis=0))[0])
        i, k = blocks[j]
        raise DataError(
            f"`{name}`: quaternion of joint '{model.bodies[i].joint.name}' "
            f"(coordinates {k}..{k + 3}) has zero norm; use a unit quaternion (x, y, z, w)"
        )


# ----------------------------------------------------------------------------
# Joint kinematics (internal). "Batch-last" layout for speed: vectors (3, N),
# rotations (3, 3, N), spatial vectors (6, N); constants keep their small
# shapes ((3, 3), (3, 1), (6, k)) and broadcast.
# ----------------------------------------------------------------------------


def t_cross(a, b):
    """Cross product of (3, ...) arrays (batch last)."""
    a0, a1, a2 = a[0], a[1], a[2]
    b0, b1, b2 = b[0], b[1], b[2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    np.multiply(a1, b2, out=out[0])
    out[0] -= a2 * b1
    np.multiply(a2, b0, out=out[1])
    out[1] -= a0 * b2
    np.multiply(a0, b1, out=out[2])
    out[2] -= a1 * b0
    return out


def t_mv(R, x):
    """R @ x for R (3, 3[, N]) and x (3, N) or (3, 1)."""
    if R.ndim == 2:
        return R @ x
    out = R[:, 0] * x[0]
    out += R[:, 1] * x[1]
    out += R[:, 2] * x[2]
    return out


def t_mtv(R, x):
    """R.T @ x for R (3, 3[, N]) and x (3, N) or (3, 1)."""
    if R.ndim == 2:
        return R.T @ x
    out = R[0] * x[0]
    out += R[1] * x[1]
    out += R[2] * x[2]
    return out


def t_mm(A, B):
    """A @ B for (3, 3) or (3, 3, N) operands (batch last)."""
    if A.ndim == 2 and B.ndim == 2:
        return A @ B
    if A.ndim == 2:
        N = B.shape[-1]
        return (A @ B.reshape(3, 3 * N)).reshape(3, 3, N)
    if B.ndim == 2:
        out = A[:, 0:1, :] * B[0][None, :, None]
        out += A[:, 1:2, :] * B[1][None, :, None]
        out += A[:, 2:3, :] * B[2][None, :, None]
        return out
    out = A[:, 0:1, :] * B[0][None]
    out += A[:, 1:2, :] * B[1][None]
    out += A[:, 2:3, :] * B[2][None]
    return out


def _rmul_axis(M, k, c, s):
    """In place M <- M @ R_k(angle) for M (3, 3, N), with c, s = cos, sin (N,)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    Mi = M[:, i].copy()
    Mj = M[:, j]
    M[:, i] = Mi * c + Mj * s
    M[:, j] = Mj * c - Mi * s


def _rot_axis_T(k, c, s, v):
    """R_k(angle).T @ v for v (3, N)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = np.empty_like(v)
    out[i] = c * v[i] + s * v[j]
    out[j] = c * v[j] - s * v[i]
    out[k] = v[k]
    return out


def _quat_to_matrix_t(qv):
    """Rotation matrices (3, 3, N) from quaternions (4, N) (x, y, z, w), normalizing."""
    x, y, z, w = qv / np.sqrt(np.sum(qv * qv, axis=0))
    R = np.empty((3, 3) + x.shape)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    R[0, 0] = 1 - 2 * (yy + zz)
    R[0, 1] = 2 * (xy - wz)
    R[0, 2] = 2 * (xz + wy)
    R[1, 0] = 2 * (xy + wz)
    R[1, 1] = 1 - 2 * (xx + zz)
    R[1, 2] = 2 * (yz - wx)
    R[2, 0] = 2 * (xz - wy)
    R[2, 1] = 2 * (yz + wx)
    R[2, 2] = 1 - 2 * (xx + yy)
    return R


def _joint_constants(model: Model, i: int) -> dict:
    """Per-joint constants, computed once per model (cached on the model)."""
    cache = model.__dict__.setdefault("_joint_cache", {})
    if i in cache:
        return cache[i]
    body = model.bodies[i]
    E = body.rotation
    c = {
        "E": E,
        "E_is_identity": bool(np.array_equal(E, np.eye(3))),
        "t": body.position[:, None].copy(),
    }
    code = model.joint_codes[i]
    if code in (REVOLUTE, PRISMATIC):
        a = body.joint.axis
        K = _skew(a)
        c["EK"] = (E @ K)[:, :, None]
        c["EK2"] = (E @ K @ K)[:, :, None]
        c["Ea"] = (E @ a)[:, None]
        S = np.zeros((6, 1))
        if code == REVOLUTE:
            S[:3, 0] = a
        else:
            S[3:, 0] = a
        c["S"] = S
    if body.joint.sequence is not None:
        c["axes"] = [_AXIS_INDEX[ch] for ch in body.joint.sequence]
    cache[i] = c
    return c


def joint_kinematics(model: Model, i: int, q: np.ndarray, qd: np.ndarray | None):
    """Kinematics of joint i for q (nq, N) and qd (nv, N) (internal, batch last).

    Returns
    -------
    R : (3, 3) or (3, 3, N)  parent_R_body
    p : (3, 1) or (3, N)     body origin in the parent frame
    S : (6, k) or (6, k, N)  motion subspace in body coordinates
    vJ : (6, N) or None      joint velocity S qd (body coordinates)
    cJ : (6, N) or None      apparent derivative (dS/dt) qd in body coordinates; None if zero
    """
    k0 = _joint_constants(model, i)
    code = model.joint_codes[i]
    E, t = k0["E"], k0["t"]
    N = q.shape[1]
    qi, vi = model.q_index[i], model.v_index[i]
    nq, nv = model.joint_nq[i], model.joint_nv[i]
    qj = q[qi : qi + nq]
    qdj = None if qd is None else qd[vi : vi + nv]
    vJ = cJ = None
    if code == FIXED:
        if qd is not None:
            vJ = np.zeros((6, N))
        return E, t, np.zeros((6, 0)), vJ, None
    if code == REVOLUTE:
        ang = qj[0]
        s = np.sin(ang)
        c1 = 1.0 - np.cos(ang)
        R = k0["EK"] * s
        R += k0["EK2"] * c1
        R += E[:, :, None]
        S = k0["S"]
        if qd is not None:
            vJ = S * qdj
        return R, t, S, vJ, None
    if code == PRISMATIC:
        p = t + k0["Ea"] * qj[0]
        S = k0["S"]
        if qd is not None:
            vJ = S * qdj
        return E, p, S, vJ, None
    if code == SPHERICAL:
        RJ = _quat_to_matrix_t(qj)
        R = RJ if k0["E_is_identity"] else t_mm(E, RJ)
        S = np.zeros((6, 3))
        S[:3] = np.eye(3)
        if qd is not None:
            vJ = np.zeros((6, N))
            vJ[:3] = qdj
        return R, t, S, vJ, None

    # joints with a rotation sequence and/or a translation in the joint frame
    if code in (UNIVERSAL, EULER):
        trans, angles, adot, nt = None, qj, qdj, 0
    elif code == FREE_EULER:
        trans, angles, nt = qj[:3], qj[3:], 3
        adot = None if qd is None else qdj[3:]
    elif code == PLANAR:
        trans = np.concatenate([qj[:2], np.zeros((1, N))], axis=0)
        angles, adot, nt = qj[2:], None if qd is None else qdj[2:], 2
    elif code == FREE:
        trans, angles, adot, nt = qj[:3], None, None, 3
    else:  # pragma: no cover
        raise AssertionError(code)

    if angles is None:  # free: quaternion, angular columns = identity
        RJ = _quat_to_matrix_t(qj[3:7])
        k_ang = 3
        S = np.zeros((6, nt + 3, N))
        for m in range(3):
            S[m, nt + m] = 1.0
    else:
        axes = [2] if code == PLANAR else k0["axes"]
        k_ang = len(axes)
        cs = [(np.cos(angles[j]), np.sin(angles[j])) for j in range(k_ang)]
        RJ = np.zeros((3, 3, N))
        RJ[0, 0] = RJ[1, 1] = RJ[2, 2] = 1.0
        for j, ax in enumerate(axes):
            _rmul_axis(RJ, ax, *cs[j])
        # s_j = (R_{j+1} ... R_n)^T e_j
        S = np.zeros((6, nt + k_ang, N))
        for j in range(k_ang):
            col = np.zeros((3, N))
            col[axes[j]] = 1.0
            for m in range(j + 1, k_ang):
                col = _rot_axis_T(axes[m], *cs[m], col)
            S[:3, nt + j] = col
    R = RJ if k0["E_is_identity"] else t_mm(E, RJ)
    if trans is None:
        p = t
    else:
        p = t + (trans if k0["E_is_identity"] else E @ trans)
        for m in range(nt):
            S[3:, m] = RJ[m]  # columns of RJ.T are the rows of RJ
    if qd is not None:
        vJ = S[:, 0] * qdj[0]
        for m in range(1, nv):
            vJ += S[:, m] * qdj[m]
        cJ = np.zeros((6, N))
        if adot is not None and k_ang > 1:
            for j in range(k_ang):
                for m in range(j + 1, k_ang):
                    cJ[:3] += (adot[j] * adot[m]) * t_cross(S[:3, nt + j], S[:3, nt + m])
        if trans is not None:
            cJ[3:] = -t_cross(vJ[:3], vJ[3:])
    return R, p, S, vJ, cJ
