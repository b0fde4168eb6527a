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
* the joint's *moving frame* is the joint frame after the joint motion: for
  coordinates ``q_i`` the joint gives a rotation ``R_J(q_i)`` and a
  translation ``r_J(q_i)`` (expressed in the joint frame), so the moving frame
  has the pose ``p_R_m = rotation @ R_J`` and ``p_r_m = position + rotation @ r_J``;
* the *body frame* is the moving frame unless the body gives a child offset
  (OpenSim's child offset frame): ``child_position`` and ``child_rotation``
  are the moving frame's origin and axes in the body frame, so
  ``p_R_i = p_R_m @ child_rotation.T`` and
  ``p_r_i = p_r_m - p_R_i @ child_position``;
* the centre of mass ``com``, the inertia about it and the markers are in the
  body frame.

The joint types, :class:`Joint` and :class:`Body` and the validation of
their fields are in :mod:`ahbm.kinematics.joints`.

Model file (JSON, version 1)
----------------------------
``{"format": "ahbm-model", "version": 1, "name": ..., "gravity": [0, 0, -9.81],
"bodies": [{"name", "parent" ("ground" for a root), "joint": {"type", "axis" |
"sequence" | "transform", "limits"?, "name"?, "coordinates"?}, "origin":
{"position", "rotation"}, "child_origin"? ({"position", "rotation"}, omitted
when identity), "mass", "com"?, "inertia"?, "markers"? ({name: [x, y, z]}),
"geometry"?}, ...], "constraints"?: [{"type", ...}, ...]}``. A custom joint's
``"transform"`` lists 6 axes ``{"axis", "coordinate", "function"}`` (see
:mod:`ahbm.kinematics.joints`).
Bodies appear parents first; their order defines the order of coordinates.
Top-level sections other than the bodies (``"constraints"``, read into
``model.constraints``; later ``"muscles"`` and ``"contacts"``) are read and
written by the readers registered with
:func:`~ahbm.kinematics.model_file.register_model_section` (importing
``ahbm`` registers ``"constraints"``). Any other top-level entry, body field,
origin field or joint field is a ModelError that names it and the file:
nothing in a model file is dropped silently. Reading and writing files live
in :mod:`ahbm.kinematics.model_file`, the model-file dictionary and the
registry of sections in :mod:`ahbm.kinematics.model_dict`; the
configuration-space functions (``neutral_q``, ``integrate_q``, ...) in
:mod:`ahbm.kinematics.configuration`.
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import ModelError
from ahbm.kinematics.joint_fields import _check_vec3, _make_body, _velocity_names
from ahbm.kinematics.joints import _GROUND, _read_only
from ahbm.kinematics.model_dict import _build_model, _registered, model_to_dict, section_spec

__all__ = ["Model", "ModelCache"]

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
        if key in _registered():
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
        if key in _registered():
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
        section_spec(key)
        return self._sections.get(key, ())

    def set_section(self, key: str, items) -> None:
        """Replace the items of the registered model-file section `key`.

        The section's checker validates them against this model (e.g. a
        constraint naming an unknown body is a ModelError); ``[]`` or None
        removes them.
        """
        spec = section_spec(key)
        if items is not None and (
            isinstance(items, (str, bytes, dict)) or not hasattr(items, "__iter__")
        ):
            raise ModelError(f"section {key!r} must be a list of items, got {items!r:.80}")
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
        child_position=None,
        child_rotation=None,
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
        child_position : array_like, shape (3,), optional
            Origin of the joint's moving frame in the body frame, m (OpenSim's
            child offset frame); zeros by default.
        child_rotation : array_like, shape (3, 3), optional
            Axes of the joint's moving frame in the body frame
            (``body_R_moving``); identity by default.

        Raises
        ------
        ModelError
            Duplicate name, unknown parent, negative mass, bad inertia, rotation
            or joint (a lowercase joint sequence among them).

        Examples
        --------
        >>> m = Model()
        >>> m.add_body("thigh", "ground", {"type": "custom", "transform": [
        ...     {"axis": [0, 0, 1], "coordinate": "hip", "function": {
        ...         "type": "LinearFunction", "slope": 1.0, "intercept": 0.0}},
        ...     {"axis": [1, 0, 0], "coordinate": None},
        ...     {"axis": [0, 1, 0], "coordinate": None},
        ...     {"axis": [1, 0, 0], "coordinate": None},
        ...     {"axis": [0, 1, 0], "coordinate": "hip", "function": {
        ...         "type": "SimmSpline", "x": [0, 1, 2], "y": [0, 0.01, 0.0]}},
        ...     {"axis": [0, 0, 1], "coordinate": None}]},
        ...     child_position=[0, 0.4, 0], mass=8.0)
        0
        >>> m.coordinate_names, m.nv
        (['hip'], 1)
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
            if isinstance(parent, bool) or not isinstance(parent, (int, np.integer)):
                raise ModelError(
                    f"body '{name}': parent must be a body name, \"{_GROUND}\" or an index, got "
                    f"{type(parent).__name__}"
                )
            pidx = int(parent)
            if not -1 <= pidx < n:
                raise ModelError(f"body '{name}': parent index {pidx} out of range [-1, {n})")
        body = _make_body(
            name, pidx, joint, position, rotation, mass, com, inertia, markers, geometry,
            child_position, child_rotation,
        )  # fmt: skip
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
        child_position=_KEEP,
        child_rotation=_KEEP,
    ) -> int:
        """Replace some fields of a body (validated as in :meth:`add_body`).

        Parameters
        ----------
        body : str or int
            Body name or index.
        joint, position, rotation, mass, com, inertia, markers, geometry : optional
        child_position, child_rotation : optional
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
            "child_position": child_position, "child_rotation": child_rotation,
        }  # fmt: skip
        current = {
            "joint": old.joint, "position": old.position, "rotation": old.rotation,
            "mass": old.mass, "com": old.com, "inertia": old.inertia,
            "markers": old.markers, "geometry": old._geometry,
            "child_position": old.child_position, "child_rotation": old.child_rotation,
        }  # fmt: skip
        values = {k: current[k] if v is _KEEP else v for k, v in given.items()}
        new = _make_body(old.name, old.parent, **values)
        self._bodies[i] = new
        self._changed()
        try:
            for key, items in list(self._sections.items()):
                self._sections[key] = tuple(section_spec(key).check(list(items), self))
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
        names = self.body_names
        shown = names[:12]
        more = f", ... (+{len(names) - 12} more)" if len(names) > 12 else ""
        bodies = ", ".join(n if len(n) <= 30 else n[:27] + "..." for n in shown)
        return (
            f"Model(name={self.name!r}, n_bodies={self.n_bodies}, nq={self.nq}, nv={self.nv}, "
            f"bodies=[{bodies}{more}])"
        )

    # -- dict / JSON ----------------------------------------------------------

    def to_dict(self) -> dict:
        """Return the JSON model-file dictionary (version 1) of this model."""
        return model_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "model dict") -> Model:
        """Build a model from a model-file dictionary (see :func:`load_model`)."""
        return _build_model(data, source=source, cls=cls)

    def copy(self) -> Model:
        """Independent copy of the model (bodies are read-only, so they are shared)."""
        new = type(self)(self._name, self._gravity)
        new._bodies.extend(self._bodies)
        new._index.update(self._index)
        new._sections.update(self._sections)
        new._changed()
        return new
