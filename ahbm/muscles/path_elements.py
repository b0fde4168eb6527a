"""Musculotendon paths as data: path points, wrap objects, path wraps and muscles.

The classes here describe a muscle (or any path actuator) of a
:class:`~ahbm.kinematics.tree.Model`: an ordered list of points fixed in
bodies, conditional via points, moving points, and the wrap objects the path
wraps over. They are frozen dataclasses (immutable, picklable, hashable) with
``to_dict()`` / ``from_dict(d)`` JSON forms, and they belong to the model:

- ``model.muscles``: the model-file section ``"muscles"`` (:class:`Muscle` items);
- ``model.wrap_objects``: the section ``"wrap_objects"`` (:class:`WrapObject` items).

Both sections are registered by this module, which ``import ahbm`` imports, so
:func:`ahbm.load_model` and :func:`ahbm.save_model` read and write them. The
section checker verifies that every body, coordinate and wrap object a muscle
names exists in the model (assign ``model.wrap_objects`` before the muscles
that use them).

Conventions (OpenSim's): locations in the body's own frame (m); bodies by
name (``"ground"`` allowed); a wrap object's ``rotation`` is ``body_R_wrap``,
the wrap frame's axes in the body frame (OpenSim's ``xyz_body_rotation``,
body-fixed X-Y-Z angles). The path geometry (lengths, moment arms) is
computed by :mod:`ahbm.muscles.paths`.

Examples
--------
>>> from ahbm.muscles import Muscle, PathPoint
>>> m = Muscle("biceps", (PathPoint("origin", "humerus", (0.0, 0.0, 0.0)),
...                       PathPoint("insertion", "radius", (0.0, -0.02, 0.01))),
...            max_isometric_force=600.0, optimal_fiber_length=0.12,
...            tendon_slack_length=0.2)
>>> Muscle.from_dict(m.to_dict()) == m
True
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from ahbm.errors import ModelError
from ahbm.kinematics.functions import as_function
from ahbm.kinematics.model_file import register_model_section
from ahbm.muscles._element_checks import _fields, _float, _name, _range, _rotation, _vector

__all__ = [
    "PathPoint",
    "ConditionalPathPoint",
    "MovingPathPoint",
    "WrapObject",
    "PathWrap",
    "Muscle",
    "path_point_from_dict",
    "MUSCLES_SECTION",
    "WRAP_OBJECTS_SECTION",
]

#: Model-file section of the muscles (``model.muscles``).
MUSCLES_SECTION = "muscles"
#: Model-file section of the wrap objects (``model.wrap_objects``).
WRAP_OBJECTS_SECTION = "wrap_objects"

#: OpenSim's tolerance of a ConditionalPathPoint's range test (ConditionalPathPoint.cpp)
CONDITIONAL_TOLERANCE = 1e-5

_WRAP_KINDS = {"cylinder": 2, "sphere": 1, "ellipsoid": 3, "torus": 2}
_WRAP_DIMENSIONS = {
    "cylinder": "(radius, length)",
    "sphere": "(radius,)",
    "ellipsoid": "(rx, ry, rz)",
    "torus": "(inner_radius, outer_radius)",
}
_QUADRANTS = ("all", "+x", "-x", "+y", "-y", "+z", "-z")
_WRAP_METHODS = ("hybrid", "midpoint", "axial")


# ----------------------------------------------------------------------------
# path points
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PathPoint:
    """A path point fixed in a body (OpenSim's ``PathPoint``).

    Parameters
    ----------
    name : str
    body : str
        Body name, or ``"ground"``.
    location : array_like, shape (3,)
        In the body frame, m (stored as a tuple of floats).

    Examples
    --------
    >>> PathPoint("origin", "femur_r", [0.0, -0.1, 0.02]).location
    (0.0, -0.1, 0.02)
    """

    name: str
    body: str
    location: tuple

    type_name = "PathPoint"

    def __post_init__(self):
        _name(self.name, "path point name")
        _name(self.body, f"path point {self.name!r}: body")
        object.__setattr__(
            self, "location", _vector(self.location, 3, f"path point {self.name!r}: location")
        )

    def coordinates(self) -> tuple:
        """Names of the coordinates the point depends on (besides its body's motion)."""
        return ()

    def to_dict(self) -> dict:
        """JSON-able form ``{"type": "PathPoint", "name", "body", "location"}``."""
        return {
            "type": self.type_name,
            "name": self.name,
            "body": self.body,
            "location": list(self.location),
        }

    @classmethod
    def from_dict(cls, d: dict) -> PathPoint:
        """The point of a dict from :meth:`to_dict` (any path-point type)."""
        return path_point_from_dict(d)


@dataclass(frozen=True)
class ConditionalPathPoint(PathPoint):
    """A via point active over a range of one coordinate (OpenSim's ``ConditionalPathPoint``).

    Parameters
    ----------
    name, body, location
        As :class:`PathPoint`.
    coordinate : str
        The coordinate (a name of ``model.coordinate_names``).
    range : array_like, shape (2,)
        ``(lower, upper)`` in the coordinate's unit (rad or m). The point is
        active when ``lower - 1e-5 <= q <= upper + 1e-5`` (OpenSim's test,
        tolerance included); inactive points are left out of the path.

    Examples
    --------
    >>> p = ConditionalPathPoint("via", "femur_r", (0.03, -0.4, 0.0), "knee_angle_r",
    ...                          (-2.6, -1.46))
    >>> p.range
    (-2.6, -1.46)
    """

    coordinate: str
    range: tuple

    type_name = "ConditionalPathPoint"

    def __post_init__(self):
        super().__post_init__()
        _name(self.coordinate, f"conditional path point {self.name!r}: coordinate")
        object.__setattr__(
            self, "range", _range(self.range, f"conditional path point {self.name!r}: range")
        )

    def coordinates(self) -> tuple:
        return (self.coordinate,)

    def to_dict(self) -> dict:
        return super().to_dict() | {"coordinate": self.coordinate, "range": list(self.range)}


def _axis_spec(value, axis: str, name: str):
    """Normalize one axis of a MovingPathPoint: None or (coordinate, Function[, range])."""
    if value is None:
        return None
    what = f"moving path point {name!r}: {axis}"
    if isinstance(value, dict):
        _fields(value, ("coordinate", "function", "range"), ("coordinate", "function"), what)
        value = (value["coordinate"], value["function"]) + (
            (value["range"],) if value.get("range") is not None else ()
        )
    if not isinstance(value, (tuple, list)) or len(value) not in (2, 3):
        raise ModelError(
            f"{what} must be None or (coordinate name, function) or (coordinate name, "
            f"function, (lower, upper)), got {value!r:.80}"
        )
    coordinate = _name(value[0], f"{what}: coordinate")
    function = as_function(value[1], f"{what}: function")
    if len(value) == 2 or value[2] is None:
        return (coordinate, function)
    return (coordinate, function, _range(value[2], f"{what}: range"))


@dataclass(frozen=True)
class MovingPathPoint(PathPoint):
    """A path point whose location in its body is a function of coordinates.

    OpenSim's ``MovingPathPoint``: each component ``k`` of the location is
    ``f_k(q_c)`` for a function ``f_k`` of one coordinate ``c``.

    Parameters
    ----------
    name, body
        As :class:`PathPoint`.
    location : array_like, shape (3,)
        The components used where an axis is None (m).
    x, y, z : tuple or None
        None (use ``location[k]``), ``(coordinate, function)`` or
        ``(coordinate, function, (lower, upper))``: ``function`` a
        :class:`ahbm.kinematics.functions.Function` (or its dict) giving the
        component in m; with the range, the coordinate value is clamped to
        it before the function is evaluated (OpenSim clamps to the
        coordinate's range; the derivative is 0 outside it).

    Examples
    --------
    >>> from ahbm.kinematics.functions import LinearFunction
    >>> p = MovingPathPoint("patella", "tibia_r", (0.0, 0.0, 0.0014),
    ...                     x=("knee_angle_r", LinearFunction(0.01, 0.06)))
    >>> p.coordinates()
    ('knee_angle_r',)
    """

    x: tuple | None = None
    y: tuple | None = None
    z: tuple | None = None

    type_name = "MovingPathPoint"

    def __post_init__(self):
        super().__post_init__()
        for axis in "xyz":
            object.__setattr__(self, axis, _axis_spec(getattr(self, axis), axis, self.name))

    @property
    def axes(self) -> tuple:
        """``(x, y, z)`` specifications."""
        return (self.x, self.y, self.z)

    def coordinates(self) -> tuple:
        return tuple(dict.fromkeys(a[0] for a in self.axes if a is not None))

    def to_dict(self) -> dict:
        d = super().to_dict()
        for axis, spec in zip("xyz", self.axes, strict=True):
            if spec is None:
                d[axis] = None
                continue
            entry = {"coordinate": spec[0], "function": spec[1].to_dict()}
            if len(spec) == 3:
                entry["range"] = list(spec[2])
            d[axis] = entry
        return d


_POINT_TYPES = {c.type_name: c for c in (PathPoint, ConditionalPathPoint, MovingPathPoint)}
_POINT_FIELDS = {
    "PathPoint": (("type", "name", "body", "location"), ("name", "body", "location")),
    "ConditionalPathPoint": (
        ("type", "name", "body", "location", "coordinate", "range"),
        ("name", "body", "location", "coordinate", "range"),
    ),
    "MovingPathPoint": (
        ("type", "name", "body", "location", "x", "y", "z"),
        ("name", "body"),
    ),
}


def path_point_from_dict(d: dict, *, what: str = "path point") -> PathPoint:
    """The path point of a dict from ``to_dict()`` (``"type"`` selects the class).

    Examples
    --------
    >>> path_point_from_dict({"type": "PathPoint", "name": "a", "body": "ground",
    ...                       "location": [0, 0, 1]})
    PathPoint(name='a', body='ground', location=(0.0, 0.0, 1.0))
    """
    if not isinstance(d, dict):
        raise ModelError(f"{what} must be an object (dict), got {type(d).__name__}")
    kind = d.get("type", "PathPoint")
    if kind not in _POINT_TYPES:
        raise ModelError(f"{what}: unknown type {kind!r:.60}; use one of {list(_POINT_TYPES)}")
    known, required = _POINT_FIELDS[kind]
    _fields(d, known, required, f"{what} ({kind})")
    kwargs = {k: v for k, v in d.items() if k != "type"}
    if kind == "MovingPathPoint":
        kwargs.setdefault("location", (0.0, 0.0, 0.0))
    return _POINT_TYPES[kind](**kwargs)


# ----------------------------------------------------------------------------
# wrap objects and path wraps
# ----------------------------------------------------------------------------


def _quadrant(value, what: str) -> str:
    if not isinstance(value, str):
        raise ModelError(f"{what} must be a string such as 'all', '+x' or '-y', got {value!r:.40}")
    q = value.strip().lower()
    if q in ("x", "y", "z"):
        q = "+" + q
    if q not in _QUADRANTS:
        raise ModelError(f"{what} must be one of {list(_QUADRANTS)}, got {value!r:.40}")
    return q


@dataclass(frozen=True)
class WrapObject:
    """A surface that muscle paths wrap over (OpenSim's WrapCylinder, WrapSphere, WrapEllipsoid).

    Parameters
    ----------
    name : str
    body : str
        Body it is fixed in (or ``"ground"``).
    kind : {"cylinder", "sphere", "ellipsoid", "torus"}
    translation : array_like, shape (3,)
        Origin of the wrap frame in the body frame, m.
    rotation : array_like, shape (3, 3)
        ``body_R_wrap`` (stored as a tuple of rows).
    dimensions : array_like
        Cylinder ``(radius, length)``, sphere ``(radius,)``, ellipsoid
        ``(rx, ry, rz)``, torus ``(inner_radius, outer_radius)`` (OpenSim's
        names: the tube's radius and its centre circle's), m, all positive.
        The cylinder's axis is the wrap frame's z axis; the torus's centre
        circle lies in the wrap frame's xy plane.
    quadrant : str, optional
        ``"all"`` or the side of the wrap frame the path must pass on,
        ``"+x"``, ``"-x"``, ``"+y"``, ``"-y"``, ``"+z"``, ``"-z"`` (OpenSim's
        spellings such as ``"x"`` or ``"-Y"`` are normalized).
    active : bool, optional
        An inactive wrap object is ignored by the paths.

    Examples
    --------
    >>> w = WrapObject("knee", "femur_r", "cylinder", (0, -0.4, 0), ((1, 0, 0), (0, 1, 0),
    ...                (0, 0, 1)), (0.03, 0.1), quadrant="-x")
    >>> w.dimensions, w.quadrant
    ((0.03, 0.1), '-x')
    """

    name: str
    body: str
    kind: str
    translation: tuple
    rotation: tuple
    dimensions: tuple
    quadrant: str = "all"
    active: bool = True

    def __post_init__(self):
        what = f"wrap object {self.name!r}"
        _name(self.name, "wrap object name")
        _name(self.body, f"{what}: body")
        if self.kind not in _WRAP_KINDS:
            raise ModelError(
                f"{what}: kind must be one of {list(_WRAP_KINDS)}, got {self.kind!r:.40}"
            )
        set_ = object.__setattr__
        set_(self, "translation", _vector(self.translation, 3, f"{what}: translation"))
        set_(self, "rotation", _rotation(self.rotation, f"{what}: rotation"))
        n = _WRAP_KINDS[self.kind]
        dims = _vector(
            self.dimensions,
            n,
            f"{what}: dimensions of a {self.kind} {_WRAP_DIMENSIONS[self.kind]}",
        )
        for v in dims:
            if not v > 0:
                raise ModelError(f"{what}: dimensions must be positive, got {dims}")
        if self.kind == "torus" and not dims[1] > dims[0]:
            raise ModelError(
                f"{what}: a torus's outer radius (of its centre circle) must exceed its inner "
                f"radius (of its tube), got {dims}"
            )
        set_(self, "dimensions", dims)
        set_(self, "quadrant", _quadrant(self.quadrant, f"{what}: quadrant"))
        if not isinstance(self.active, (bool, np.bool_)):
            raise ModelError(f"{what}: active must be True or False, got {self.active!r:.40}")
        set_(self, "active", bool(self.active))

    @property
    def transform(self) -> np.ndarray:
        """``body_T_wrap``, shape (4, 4)."""
        T = np.eye(4)
        T[:3, :3] = self.rotation
        T[:3, 3] = self.translation
        return T

    def to_dict(self) -> dict:
        """JSON-able form (the constructor's keyword arguments)."""
        return {
            "name": self.name,
            "body": self.body,
            "kind": self.kind,
            "translation": list(self.translation),
            "rotation": [list(r) for r in self.rotation],
            "dimensions": list(self.dimensions),
            "quadrant": self.quadrant,
            "active": self.active,
        }

    @classmethod
    def from_dict(cls, d: dict) -> WrapObject:
        """The wrap object of a dict from :meth:`to_dict`."""
        names = ("name", "body", "kind", "translation", "rotation", "dimensions")
        _fields(d, names + ("quadrant", "active"), names, "wrap object")
        return cls(**d)


@dataclass(frozen=True)
class PathWrap:
    """The use of a wrap object by one path (OpenSim's ``PathWrap``).

    Parameters
    ----------
    wrap_object : str
        Name of a :class:`WrapObject` of the model.
    method : {"hybrid", "midpoint", "axial"}, optional
        OpenSim's ellipsoid wrapping method (ignored by the other kinds).
    range : (int, int), optional
        1-based indices of the first and last path points the wrap may
        apply between; an index below 1 means the first (last) point, so
        ``(-1, -1)`` is the whole path.

    Examples
    --------
    >>> PathWrap("knee_cyl", range=(2, 3)).range
    (2, 3)
    """

    wrap_object: str
    method: str = "hybrid"
    range: tuple = (-1, -1)

    def __post_init__(self):
        _name(self.wrap_object, "path wrap: wrap_object")
        what = f"path wrap over {self.wrap_object!r}"
        if self.method not in _WRAP_METHODS:
            raise ModelError(
                f"{what}: method must be one of {list(_WRAP_METHODS)}, got {self.method!r:.40}"
            )
        r = self.range
        if (
            not isinstance(r, (tuple, list))
            or len(r) != 2
            or not all(
                isinstance(i, (int, np.integer))
                and not isinstance(i, bool)
                or (isinstance(i, float) and i.is_integer())
                for i in r
            )
        ):
            raise ModelError(f"{what}: range must be two integers (1-based), got {r!r:.60}")
        object.__setattr__(self, "range", (int(r[0]), int(r[1])))

    def point_range(self, n_points: int) -> tuple:
        """0-based indices ``(first, last)`` of the path points the wrap applies between."""
        first = 0 if self.range[0] < 1 else self.range[0] - 1
        last = n_points - 1 if self.range[1] < 1 else self.range[1] - 1
        return first, last

    def to_dict(self) -> dict:
        """JSON-able form."""
        return {"wrap_object": self.wrap_object, "method": self.method, "range": list(self.range)}

    @classmethod
    def from_dict(cls, d: dict) -> PathWrap:
        """The path wrap of a dict from :meth:`to_dict`."""
        _fields(d, ("wrap_object", "method", "range"), ("wrap_object",), "path wrap")
        return cls(**d)


# ----------------------------------------------------------------------------
# muscles
# ----------------------------------------------------------------------------

_NAN_OK = ("optimal_fiber_length", "tendon_slack_length")  # elements that are not muscles
_MUSCLE_NUMBERS = (
    "max_isometric_force",
    "optimal_fiber_length",
    "tendon_slack_length",
    "pennation_angle",
    "max_contraction_velocity",
    "activation_time_constant",
    "deactivation_time_constant",
)


def _json_value(value, what: str, depth: int = 0):
    """A copy of `value` made of JSON types (finite floats), else ModelError."""
    if depth > 16:
        raise ModelError(f"{what} is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise ModelError(f"{what} must hold finite numbers, got {v}")
        return v
    if isinstance(value, (list, tuple)):
        return [_json_value(v, what, depth + 1) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ModelError(f"{what} must have string keys, got {k!r:.40}")
            out[k] = _json_value(v, f"{what}[{k!r}]", depth + 1)
        return out
    raise ModelError(
        f"{what} must hold JSON values (numbers, text, lists, dicts), got {value!r:.60}"
    )


def _is_muscle_model(model: str) -> bool:
    return model.endswith("Muscle")


@dataclass(frozen=True, eq=False)
class Muscle:
    """A musculotendon actuator: its path and its Hill-model parameters.

    Parameters
    ----------
    name : str
    points : sequence of PathPoint
        The path, origin first (:class:`PathPoint`,
        :class:`ConditionalPathPoint`, :class:`MovingPathPoint`); at least 2.
    wraps : sequence of PathWrap, optional
        Wrap objects the path may wrap over, applied in this order (as
        OpenSim's ``PathWrapSet``).
    model : str, keyword-only
        OpenSim's class name: ``"Thelen2003Muscle"`` (default),
        ``"DeGrooteFregly2016Muscle"``, ``"Millard2012EquilibriumMuscle"``,
        ``"RigidTendonMuscle"``, ... or a non-muscle path element such as
        ``"PathActuator"`` / ``"PathSpring"``.
    max_isometric_force : float, keyword-only
        N (``PathActuator``: its ``optimal_force``).
    optimal_fiber_length, tendon_slack_length : float, keyword-only
        m; positive for muscle models, NaN allowed for elements that have
        none (PathActuator, PathSpring).
    pennation_angle : float, optional
        Pennation at optimal fiber length, rad, in [0, pi/2).
    max_contraction_velocity : float, optional
        Optimal fiber lengths per second (default 10); NaN: undefined (path
        use only; the muscle models refuse it).
    activation_time_constant, deactivation_time_constant : float, optional
        s (defaults 0.015 and 0.05).
    parameters : dict, optional
        Model-specific extras as JSON values (e.g. Thelen's ``FmaxTendonStrain``,
        ``KshapeActive``); kept and written back, not interpreted here.

    Examples
    --------
    >>> m = Muscle("vasti", (PathPoint("o", "femur", (0, -0.2, 0.03)),
    ...                      PathPoint("i", "tibia", (0.04, -0.05, 0))),
    ...            max_isometric_force=5000.0, optimal_fiber_length=0.09,
    ...            tendon_slack_length=0.22, pennation_angle=0.05)
    >>> m.model, [p.name for p in m.points]
    ('Thelen2003Muscle', ['o', 'i'])
    """

    name: str
    points: tuple
    wraps: tuple = ()
    _: KW_ONLY
    model: str = "Thelen2003Muscle"
    max_isometric_force: float
    optimal_fiber_length: float
    tendon_slack_length: float
    pennation_angle: float = 0.0
    max_contraction_velocity: float = 10.0
    activation_time_constant: float = 0.015
    deactivation_time_constant: float = 0.05
    parameters: dict = field(default_factory=dict)

    def __post_init__(self):
        set_ = object.__setattr__
        _name(self.name, "muscle name")
        what = f"muscle {self.name!r}"
        _name(self.model, f"{what}: model")
        if isinstance(self.points, (str, bytes, dict)) or not hasattr(self.points, "__iter__"):
            raise ModelError(f"{what}: points must be a sequence of path points")
        points = tuple(self.points)
        for k, p in enumerate(points):
            if not isinstance(p, PathPoint):
                raise ModelError(
                    f"{what}: points[{k}] must be a PathPoint, ConditionalPathPoint or "
                    f"MovingPathPoint, got {type(p).__name__}"
                )
        if len(points) < 2:
            raise ModelError(f"{what}: a path needs at least 2 points, got {len(points)}")
        set_(self, "points", points)
        if isinstance(self.wraps, (str, bytes, dict)) or not hasattr(self.wraps, "__iter__"):
            raise ModelError(f"{what}: wraps must be a sequence of PathWrap")
        wraps = tuple(self.wraps)
        for k, w in enumerate(wraps):
            if not isinstance(w, PathWrap):
                raise ModelError(f"{what}: wraps[{k}] must be a PathWrap, got {type(w).__name__}")
            lo, hi = w.range
            if lo > len(points) or hi > len(points) or (lo >= 1 and hi >= 1 and lo > hi):
                raise ModelError(
                    f"{what}: the range {w.range} of its wrap over {w.wrap_object!r} must be "
                    f"1-based point indices (first <= last <= {len(points)}), or -1"
                )
        set_(self, "wraps", wraps)
        muscle = _is_muscle_model(self.model)
        for key in _MUSCLE_NUMBERS:
            value = getattr(self, key)
            nan_ok = key == "max_contraction_velocity" or (not muscle and key in _NAN_OK)
            v = _float(
                value,
                f"{what}: {key}",
                positive=key not in ("pennation_angle",),
                nonnegative=key == "pennation_angle",
                nan_ok=nan_ok,
            )
            set_(self, key, v)
        if not self.pennation_angle < math.pi / 2:
            raise ModelError(f"{what}: pennation_angle must be below pi/2 rad")
        if not isinstance(self.parameters, dict):
            raise ModelError(f"{what}: parameters must be a dict of JSON values")
        set_(self, "parameters", _json_value(self.parameters, f"{what}: parameters"))

    def coordinates(self) -> tuple:
        """Names of the coordinates that conditional and moving points depend on."""
        return tuple(dict.fromkeys(c for p in self.points for c in p.coordinates()))

    def bodies(self) -> tuple:
        """Names of the bodies of its points, in path order, without repeats."""
        return tuple(dict.fromkeys(p.body for p in self.points))

    def to_dict(self) -> dict:
        """JSON-able form (NaN parameters are written as null)."""
        d = {
            "name": self.name,
            "model": self.model,
            "points": [p.to_dict() for p in self.points],
            "wraps": [w.to_dict() for w in self.wraps],
        }
        for key in _MUSCLE_NUMBERS:
            v = getattr(self, key)
            d[key] = None if math.isnan(v) else v
        d["parameters"] = _json_value(self.parameters, "parameters")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Muscle:
        """The muscle of a dict from :meth:`to_dict`."""
        required = ("name", "points", "max_isometric_force", "optimal_fiber_length",
                    "tendon_slack_length")  # fmt: skip
        known = ("name", "model", "points", "wraps", "parameters") + _MUSCLE_NUMBERS
        _fields(d, known, required, "muscle")
        what = f"muscle {d.get('name')!r}"
        if not isinstance(d["points"], list):
            raise ModelError(f"{what}: 'points' must be a list of path-point objects")
        wraps = d.get("wraps") or []
        if not isinstance(wraps, list):
            raise ModelError(f"{what}: 'wraps' must be a list of path-wrap objects")
        kwargs = {k: v for k, v in d.items() if k not in ("name", "points", "wraps")}
        for key in ("optimal_fiber_length", "tendon_slack_length"):
            if kwargs.get(key, 0.0) is None:
                kwargs[key] = math.nan
        points = tuple(
            path_point_from_dict(p, what=f"{what}: points[{k}]") for k, p in enumerate(d["points"])
        )
        return cls(d["name"], points, tuple(PathWrap.from_dict(w) for w in wraps), **kwargs)

    def _key(self) -> tuple:
        numbers = tuple(
            None if math.isnan(v) else v for v in map(self.__getattribute__, _MUSCLE_NUMBERS)
        )
        return (self.name, self.points, self.wraps, self.model, numbers)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key() and self.parameters == other.parameters

    def __hash__(self):
        return hash(self._key())


# ----------------------------------------------------------------------------
# model-file sections
# ----------------------------------------------------------------------------


def coordinate_indices(model) -> dict:
    """Scalar coordinates of `model`: name -> (q index, v index)."""
    out = {}
    for j, body in enumerate(model.bodies):
        joint = body.joint
        if joint.nq != joint.nv:
            continue  # quaternion joints: no scalar coordinate a point can follow
        q0, v0 = int(model.q_index[j]), int(model.v_index[j])
        for k, c in enumerate(joint.coordinates):
            out[c] = (q0 + k, v0 + k)
    return out


def _check_wrap_objects(items, model) -> list:
    out, seen = [], set()
    bodies = set(model.body_names) | {"ground"}
    for k, w in enumerate(items):
        if not isinstance(w, WrapObject):
            raise ModelError(f"wrap_objects[{k}] must be a WrapObject, got {type(w).__name__}")
        if w.body not in bodies:
            raise ModelError(
                f"wrap object {w.name!r} is fixed in body {w.body!r}, which model "
                f"'{model.name}' does not have (bodies: {model.body_names} and 'ground')"
            )
        if w.name in seen:
            raise ModelError(f"two wrap objects are named {w.name!r}; names must be unique")
        seen.add(w.name)
        out.append(w)
    used = {pw.wrap_object: m.name for m in model.section(MUSCLES_SECTION) for pw in m.wraps}
    missing = sorted(set(used) - seen)
    if missing:
        raise ModelError(
            f"muscle {used[missing[0]]!r} wraps over {missing[0]!r}, which would no longer be a "
            "wrap object of the model; change the muscles first"
        )
    return out


def _check_muscles(items, model) -> list:
    out, seen = [], set()
    bodies = set(model.body_names) | {"ground"}
    coords = coordinate_indices(model)
    wraps = {w.name for w in model.section(WRAP_OBJECTS_SECTION)}
    for k, m in enumerate(items):
        if not isinstance(m, Muscle):
            raise ModelError(f"muscles[{k}] must be a Muscle, got {type(m).__name__}")
        if m.name in seen:
            raise ModelError(f"two muscles are named {m.name!r}; names must be unique")
        seen.add(m.name)
        for p in m.points:
            if p.body not in bodies:
                raise ModelError(
                    f"muscle {m.name!r}: path point {p.name!r} is on body {p.body!r}, which "
                    f"model '{model.name}' does not have (bodies: {model.body_names} and "
                    "'ground')"
                )
            for c in p.coordinates():
                if c not in coords:
                    raise ModelError(
                        f"muscle {m.name!r}: path point {p.name!r} follows coordinate {c!r}, "
                        f"which is not a scalar coordinate of model '{model.name}' "
                        f"(coordinates: {model.coordinate_names})"
                    )
        for w in m.wraps:
            if w.wrap_object not in wraps:
                raise ModelError(
                    f"muscle {m.name!r} wraps over {w.wrap_object!r}, which is not a wrap object "
                    f"of model '{model.name}' (wrap objects: {sorted(wraps)}); set "
                    "model.wrap_objects first"
                )
        out.append(m)
    return out


def _read_items(cls, check):
    def read(items, model, source):
        objs = []
        for k, d in enumerate(items):
            try:
                objs.append(cls.from_dict(d))
            except ModelError as err:
                raise ModelError(f"{source}[{k}]: {err}") from err
        return check(objs, model)

    return read


def _write_items(items) -> list:
    return [x.to_dict() for x in items]


register_model_section(
    WRAP_OBJECTS_SECTION,
    read=_read_items(WrapObject, _check_wrap_objects),
    write=_write_items,
    check=_check_wrap_objects,
    owner="ahbm.muscles.path_elements",
)
register_model_section(
    MUSCLES_SECTION,
    read=_read_items(Muscle, _check_muscles),
    write=_write_items,
    check=_check_muscles,
    owner="ahbm.muscles.path_elements",
)
