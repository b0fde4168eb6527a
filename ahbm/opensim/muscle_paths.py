"""OpenSim muscles and wrap objects, as :func:`ahbm.opensim.read_osim` keeps them, to path data.

:func:`ahbm.opensim.read_osim` keeps every element of an OpenSim ForceSet and every
wrap object of the bodies' WrapObjectSets as JSON-able dicts (the
``"opensim"`` section, ``OsimItem`` kinds ``"force"`` and ``"wrap_object"``),
with path points already moved to the body they are fixed to. This module
turns them into :class:`~ahbm.muscles.Muscle` and
:class:`~ahbm.muscles.WrapObject` objects; ``read_osim`` calls
:func:`muscles_from_osim` to fill ``model.muscles`` and ``model.wrap_objects``.

What is read
------------
- Every force with a geometric path: OpenSim 4 and 3 ``GeometryPath``
  (Thelen2003Muscle, Millard2012EquilibriumMuscle, DeGrooteFregly2016Muscle,
  RigidTendonMuscle, Schutte1993Muscle..., PathActuator, PathSpring, ...) and
  the ``MusclePointSet`` / ``MuscleWrapSet`` of older files. Its class name is
  ``Muscle.model``; the standard parameters fill the Muscle's fields (with
  OpenSim's defaults of that class where a file leaves them out), every
  other property goes, as JSON, to ``Muscle.parameters`` (PathActuator:
  ``max_isometric_force`` is its ``optimal_force``).
- Points: ``PathPoint``, ``ConditionalPathPoint``, ``MovingPathPoint`` (and the
  older ``MusclePoint``, ``MuscleViaPoint``, ``MovingMusclePoint``). A moving
  point's coordinate is clamped to the coordinate's range, as OpenSim does.
  A point that follows a coordinate the model does not have as a free
  coordinate (locked, or coupled to a locked one) is evaluated at the
  coordinate's fixed value: an always-active conditional point becomes a
  fixed point, an inactive one is left out; a moving point becomes fixed.
  A moving point on an offset frame that only translates is moved to its
  body (its functions shifted).
- Wrap objects: ``WrapCylinder``, ``WrapSphere``, ``WrapEllipsoid``, ``WrapTorus``
  (``xyz_body_rotation`` → ``rotation``, body-fixed X-Y-Z).

What cannot be represented (an obstacle wrap, a function-based path,
a moving point on a rotated offset frame, a point on an unknown frame, a
function type ahbm does not know) is returned in a list of notes, and the
muscle (or wrap object) is left out: ``read_osim`` names them in its warning.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm.errors import ModelError
from ahbm.kinematics.functions import (
    Constant,
    Function,
    LinearFunction,
    MultiplierFunction,
    PiecewiseLinearFunction,
    PolynomialFunction,
    SimmSpline,
    function_from_dict,
)
from ahbm.kinematics.rotations import euler_to_matrix
from ahbm.muscles.path_elements import (
    CONDITIONAL_TOLERANCE,
    ConditionalPathPoint,
    MovingPathPoint,
    Muscle,
    PathPoint,
    PathWrap,
    WrapObject,
)

__all__ = ["muscles_from_osim", "wrap_objects_from_osim"]

_WRAP_TYPES = {"WrapCylinder": "cylinder", "WrapSphere": "sphere", "WrapEllipsoid": "ellipsoid",
               "WrapTorus": "torus"}  # fmt: skip

#: OpenSim's defaults of the standard muscle properties (Muscle.cpp), and the
#: activation time constants of the classes that set their own
_MUSCLE_DEFAULTS = {
    "max_isometric_force": 1000.0,
    "optimal_fiber_length": 0.1,
    "tendon_slack_length": 0.2,
    "pennation_angle": 0.0,
    "max_contraction_velocity": 10.0,
}
_TIME_CONSTANTS = {
    "Thelen2003Muscle": (0.015, 0.05),
    "Millard2012EquilibriumMuscle": (0.01, 0.04),
    "Millard2012AccelerationMuscle": (0.01, 0.04),
    "DeGrooteFregly2016Muscle": (0.015, 0.06),
}
#: property names of the standard fields (OpenSim 4, then older spellings)
_FIELD_KEYS = {
    "max_isometric_force": ("max_isometric_force",),
    "optimal_fiber_length": ("optimal_fiber_length",),
    "tendon_slack_length": ("tendon_slack_length",),
    "pennation_angle": ("pennation_angle_at_optimal", "pennation_angle"),
    "max_contraction_velocity": ("max_contraction_velocity",),
    "activation_time_constant": ("activation_time_constant", "activation1"),
    "deactivation_time_constant": ("deactivation_time_constant",),
}
_STRUCTURE = ("type", "name", "GeometryPath", "MusclePointSet", "MuscleWrapSet",
              "VisibleObject", "Appearance", "body", "kind")  # fmt: skip
_POINT_TYPES = {
    "PathPoint": "fixed", "MusclePoint": "fixed",
    "ConditionalPathPoint": "conditional", "MuscleViaPoint": "conditional",
    "MovingPathPoint": "moving", "MovingMusclePoint": "moving",
}  # fmt: skip


class _Skip(Exception):
    """This element cannot be represented (the message says why)."""


def _number(value):
    """`value` as a finite float, or None (text, bool, non-finite, too large)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def _last_name(path) -> str | None:
    """The component name at the end of a socket path (``/jointset/knee/knee_angle``)."""
    if not isinstance(path, str) or not path.strip():
        return None
    return path.strip().rstrip("/").split("/")[-1]


def _function(value, what: str) -> Function:
    """A Function from a kept OpenSim function element (dict, or a list holding one)."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        raise _Skip(f"{what} is not a function element")
    d = {k: v for k, v in value.items() if k != "name"}
    if d.get("type") == "MultiplierFunction":
        inner = d.get("function")
        return MultiplierFunction(_function(inner, what), _number(d.get("scale", 1.0)) or 1.0)
    for key in ("x", "y", "coefficients"):
        if key in d and not isinstance(d[key], list):
            d[key] = [d[key]]
    try:
        return function_from_dict(d, what=what)
    except ModelError as err:
        raise _Skip(f"{what}: {err}") from None


def _shifted(f: Function, c: float) -> Function:
    """A function with values ``f(x) + c``."""
    if c == 0.0:
        return f
    if isinstance(f, Constant):
        return Constant(float(f(0.0)) + c)
    if isinstance(f, LinearFunction):
        d = f.to_dict()
        return LinearFunction(d["slope"], d["intercept"] + c)
    if isinstance(f, PolynomialFunction):
        coefficients = list(f.to_dict()["coefficients"])
        coefficients[-1] += c
        return PolynomialFunction(coefficients)
    if isinstance(f, (SimmSpline, PiecewiseLinearFunction)):
        # interpolation is linear in the y values and reproduces constants
        d = f.to_dict()
        return type(f)(d["x"], [y + c for y in d["y"]])
    if isinstance(f, MultiplierFunction):
        d = f.to_dict()
        scale = d.get("scale", 1.0)
        if scale == 0.0:
            return Constant(c)
        return MultiplierFunction(_shifted(function_from_dict(d["function"]), c / scale), scale)
    raise _Skip(f"a {type(f).__name__} cannot be moved to the body frame")


def _objects(value) -> list:
    """The objects of a kept set element (``{"objects": [...]}``) or list."""
    if isinstance(value, dict):
        value = value.get("objects")
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def wrap_objects_from_osim(items) -> tuple[list, list]:
    """:class:`WrapObject` objects from kept OpenSim wrap-object dicts.

    Parameters
    ----------
    items : iterable of dict
        ``{"type": "WrapCylinder", "name", "body", "translation",
        "xyz_body_rotation", "quadrant", "active", "radius", "length", ...}``
        as :func:`ahbm.opensim.read_osim` keeps them (``OsimItem.data``).

    Returns
    -------
    wrap_objects : list of WrapObject
    notes : list of str
        The wrap objects that cannot be represented, and why.

    Examples
    --------
    >>> w, notes = wrap_objects_from_osim([{"type": "WrapSphere", "name": "s",
    ...     "body": "femur", "translation": [0, -0.4, 0], "radius": 0.03}])
    >>> w[0].kind, w[0].dimensions, notes
    ('sphere', (0.03,), [])
    """
    out, notes = [], []
    for d in items:
        kind = _WRAP_TYPES.get(d.get("type"))
        name = d.get("name")
        if kind is None:
            notes.append(f"wrap object {d.get('type')} {name!r} (ahbm wraps over cylinders, "
                         "spheres, ellipsoids and tori)")  # fmt: skip
            continue
        try:
            if kind == "cylinder":
                dims = (d.get("radius", 1.0), d.get("length", 1.0))
            elif kind == "sphere":
                dims = (d.get("radius", 0.05),)
            elif kind == "torus":  # OpenSim 4's defaults
                dims = (d.get("inner_radius", 0.01), d.get("outer_radius", 0.05))
            else:
                dims = d.get("dimensions", (0.05, 0.05, 0.05))
            angles = d.get("xyz_body_rotation", (0.0, 0.0, 0.0))
            R = euler_to_matrix(np.asarray(angles, dtype=float), "XYZ")
            quadrant = d.get("quadrant", "all")
            if not isinstance(quadrant, str) or quadrant.lower() == "unassigned":
                quadrant = "all"
            out.append(
                WrapObject(
                    name, d.get("body"), kind, d.get("translation", (0.0, 0.0, 0.0)), R, dims,
                    quadrant, bool(d.get("active", True)),
                )
            )  # fmt: skip
        except (ModelError, ValueError, TypeError) as err:
            notes.append(f"wrap object {d.get('type')} {name!r} ({err})")
    return out, notes


class _Context:
    """What the conversion of points needs to know of the model."""

    def __init__(self, model, frame_of, fixed_values, ranges):
        from ahbm.muscles.path_elements import coordinate_indices

        self.free = set(coordinate_indices(model))
        self.bodies = set(model.body_names) | {"ground"}
        self.frame_of = frame_of
        self.fixed = dict(fixed_values or {})
        self.ranges = dict(ranges or {})

    def coordinate(self, name, what):
        if name is None:
            return None
        if name in self.free or name in self.fixed:
            return name
        raise _Skip(f"{what} follows the coordinate {name!r}, which the model does not have")


def _point(d: dict, ctx: _Context, muscle: str):
    """A path point from a kept point dict (None: a point that is never active)."""
    kind = _POINT_TYPES.get(d.get("type"))
    name = d.get("name") or d.get("type")
    what = f"path point {name!r}"
    if kind is None:
        raise _Skip(f"{what} of type {d.get('type')}")
    body = d.get("body")
    offset = None
    if not isinstance(body, str) or body not in ctx.bodies:
        frame = d.get("socket_parent_frame")
        got = ctx.frame_of(frame) if (ctx.frame_of and isinstance(frame, str)) else None
        if got is None or got[0] not in ctx.bodies:
            raise _Skip(
                f"{what} is on the frame {frame or body!r}, which is not a body of the model"
            )
        body, R, p = got
        if not np.allclose(R, np.eye(3), atol=1e-12):
            raise _Skip(f"{what} moves on a rotated offset frame {frame!r}")
        offset = np.asarray(p, dtype=float)
    if kind == "moving":
        return _moving_point(d, ctx, name, body, offset, what)
    location = d.get("location", (0.0, 0.0, 0.0))
    if kind == "fixed":
        return PathPoint(name, body, location)
    coord = ctx.coordinate(
        _last_name(d.get("socket_coordinate")) or _last_name(d.get("coordinate")), what
    )
    if coord is None:
        raise _Skip(f"{what} has no coordinate")
    rng = d.get("range")
    if not isinstance(rng, list) or len(rng) != 2:
        raise _Skip(f"{what} has no range of two numbers")
    if coord in ctx.free:
        return ConditionalPathPoint(name, body, location, coord, rng)
    x = ctx.fixed[coord]
    if rng[0] - CONDITIONAL_TOLERANCE <= x <= rng[1] + CONDITIONAL_TOLERANCE:
        return PathPoint(name, body, location)
    return None


def _moving_point(d, ctx, name, body, offset, what):
    location = [0.0, 0.0, 0.0]
    axes = [None, None, None]
    for k, axis in enumerate("xyz"):
        fn_value = d.get(f"{axis}_location")
        if fn_value is None:  # older spellings
            fn_value = d.get(f"{axis.upper()}Attachment", d.get(f"{axis.upper()}_attachment"))
        f = Constant(0.0) if fn_value is None else _function(fn_value, f"{what} {axis}_location")
        if offset is not None:
            f = _shifted(f, float(offset[k]))
        coord = _last_name(d.get(f"socket_{axis}_coordinate")) or _last_name(
            d.get(f"{axis}_coordinate")
        )
        coord = ctx.coordinate(coord, what)
        if coord is None:
            location[k] = float(f(0.0))
            continue
        rng = ctx.ranges.get(coord)
        if coord in ctx.free and not f.is_constant:
            axes[k] = (coord, f) if rng is None else (coord, f, tuple(rng))
            continue
        x = ctx.fixed.get(coord, 0.0)
        if rng is not None:
            x = min(max(x, rng[0]), rng[1])
        location[k] = float(f(x))
    if all(a is None for a in axes):
        return PathPoint(name, body, location)
    return MovingPathPoint(name, body, location, *axes)


def _parameters(d: dict, used: set) -> dict:
    out = {}
    for key, value in d.items():
        if key in _STRUCTURE or key in used:
            continue
        out[key] = value
    return out


def muscles_from_osim(model, forces, wrap_objects=(), *, frame_of=None, fixed_values=None,
                      ranges=None, remarks=None) -> tuple[list, list, list]:  # fmt: skip
    """Muscles (and their wrap objects) from the forces that ``read_osim`` keeps.

    Parameters
    ----------
    model : Model
        The model the forces belong to (bodies and coordinates).
    forces : iterable of dict
        Kept ForceSet elements (``OsimItem.data`` of kind ``"force"``); those
        without a path (e.g. CoordinateActuator) are ignored.
    wrap_objects : iterable of dict, optional
        Kept wrap objects (kind ``"wrap_object"``).
    frame_of : callable, optional
        ``frame_of(socket path) -> (body, R, p)`` or None: resolves the
        offset frame of a moving point (read_osim passes its resolver).
    fixed_values : dict, optional
        ``{coordinate: value}`` for coordinates that are not free in the
        model (locked or coupled to a locked coordinate).
    ranges : dict, optional
        ``{coordinate: (lower, upper)}``: the coordinates' ranges (moving
        points clamp their coordinate to them).
    remarks : list, optional
        Receives remarks on what was read but changed (a muscle's
        ``max_contraction_velocity`` of 0, read as NaN: undefined).

    Returns
    -------
    wrap_objects : list of WrapObject
    muscles : list of Muscle
    notes : list of str
        What is not represented, and why (for read_osim's warning).

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("arm", "ground", {"type": "revolute", "axis": [0, 0, 1]},
    ...                             mass=1.0)
    >>> force = {"type": "PathActuator", "name": "act", "optimal_force": 50.0,
    ...          "GeometryPath": {"PathPointSet": {"objects": [
    ...              {"type": "PathPoint", "name": "o", "body": "ground", "location": [0, 1, 0]},
    ...              {"type": "PathPoint", "name": "i", "body": "arm", "location": [0.1, 0, 0]}]}}}
    >>> _, muscles, notes = muscles_from_osim(m, [force])
    >>> muscles[0].model, muscles[0].max_isometric_force, notes
    ('PathActuator', 50.0, [])
    """
    wraps, notes = wrap_objects_from_osim(wrap_objects)
    wrap_names = {w.name for w in wraps}
    no_vmax = []
    ctx = _Context(model, frame_of, fixed_values, ranges)
    muscles = []
    for d in forces:
        if not isinstance(d, dict):
            continue
        path = d.get("GeometryPath")
        if isinstance(path, list) and len(path) == 1:
            path = path[0]
        if isinstance(path, dict):
            point_set, wrap_set = path.get("PathPointSet"), path.get("PathWrapSet")
        elif "MusclePointSet" in d:
            point_set, wrap_set = d.get("MusclePointSet"), d.get("MuscleWrapSet")
        else:
            if any(k in d for k in ("FunctionBasedPath", "path")):
                notes.append(f"{d.get('type')} {d.get('name')!r} (a path that is not a "
                             "GeometryPath)")  # fmt: skip
            continue
        name = d.get("name")
        label = f"{d.get('type')} {name!r}"
        try:
            points = [_point(p, ctx, name) for p in _objects(point_set)]
            points = tuple(p for p in points if p is not None)
            if len(points) < 2:
                raise _Skip("fewer than 2 path points are always active")
            pws = []
            for w in _objects(wrap_set):
                obj = w.get("wrap_object")
                if obj not in wrap_names:
                    raise _Skip(f"it wraps over {obj!r}, which is not a wrap object ahbm has")
                method = str(w.get("method", "hybrid")).lower()
                rng = w.get("range", [-1, -1])
                pws.append(PathWrap(obj, method, tuple(int(v) for v in rng)))
            muscles.append(_muscle(d, name, points, tuple(pws)))
            if math.isnan(muscles[-1].max_contraction_velocity):
                no_vmax.append(name)
        except _Skip as err:
            notes.append(f"{label} ({err})")
        except (ModelError, TypeError, ValueError) as err:
            notes.append(f"{label} ({err})")
    if no_vmax and remarks is not None:
        shown = ", ".join(no_vmax[:6]) + (
            f" and {len(no_vmax) - 6} more" if len(no_vmax) > 6 else ""
        )
        remarks.append(
            f"max_contraction_velocity 0 (undefined; for path-only use) read as NaN for "
            f"{len(no_vmax)} muscle(s): {shown}; their paths, lengths and moment arms work, "
            "muscle dynamics refuse them until a positive value is set"
        )
    return wraps, muscles, notes


def _muscle(d: dict, name, points, wraps) -> Muscle:
    model = str(d.get("type"))
    used = set()
    values = {}
    for field_name, keys in _FIELD_KEYS.items():
        for key in keys:
            if key not in d:
                continue
            v = _number(d[key])
            if v is None:
                raise _Skip(f"its {key} {d[key]!r:.40} is not a finite number")
            values[field_name] = v
            used.add(key)
            break
    if values.get("max_contraction_velocity") == 0.0:
        values["max_contraction_velocity"] = math.nan  # undefined: path-only use
    is_muscle = model.endswith("Muscle")
    if is_muscle:
        for key, default in _MUSCLE_DEFAULTS.items():
            values.setdefault(key, default)
        act, deact = _TIME_CONSTANTS.get(model, (0.015, 0.05))
        values.setdefault("activation_time_constant", act)
        values.setdefault("deactivation_time_constant", deact)
    else:
        force = _number(d.get("optimal_force"))
        values.setdefault("max_isometric_force", 1.0 if force is None else force)
        used.add("optimal_force")
        values.setdefault("optimal_fiber_length", math.nan)
        values.setdefault("tendon_slack_length", math.nan)
        values.setdefault("max_isometric_force", 1.0)
        if values["max_isometric_force"] <= 0:
            values["max_isometric_force"] = 1.0
    return Muscle(name, points, wraps, model=model, parameters=_parameters(d, used), **values)
