"""Data of the 3-D browser viewer: frames, body poses and body shapes (internal).

Everything here takes a model and arrays and returns arrays and JSON-able
descriptions; the page itself is written by :mod:`ahbm.graphics.view3d`.
Markers, forces, muscles and plots are in :mod:`ahbm.graphics._scene3d_items`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError

_PRIMITIVE_TYPES = ("box", "sphere", "ellipsoid", "cylinder", "capsule")
#: densities (kg/m^3) of the ellipsoid of inertia taken as a body's shape; outside, the
#: inertia is a placeholder (human tissue is about 1000-1100, a trunk with arms about 300)
_DENSITY_RANGE = (150.0, 3000.0)


def is_table(obj) -> bool:
    """An OpenSimTable-like object: columns, values and time (graphics never import ahbm.io)."""
    return all(hasattr(obj, a) for a in ("columns", "values", "time", "in_degrees"))


def is_result(obj) -> bool:
    """A simulation result: times ``t`` and coordinates ``q``."""
    return hasattr(obj, "t") and hasattr(obj, "q") and not isinstance(obj, np.ndarray)


def default_q(model) -> np.ndarray:
    """OpenSim's default coordinate values when the model has them, else the neutral pose."""
    from ahbm.kinematics.configuration import neutral_q

    q = np.array(neutral_q(model), dtype=float)
    section = model.section("opensim") if _has_section(model, "opensim") else ()
    index = {n: i for i, n in enumerate(model.coordinate_names)}
    for item in section:
        if getattr(item, "kind", None) != "coordinate":
            continue
        name, value = item.get("name"), item.get("default_value")
        if name in index and isinstance(value, (int, float)) and np.isfinite(value):
            q[index[name]] = float(value)
    return q


def _has_section(model, key: str) -> bool:
    try:
        return bool(model.section(key))
    except (KeyError, ModelError, AttributeError):
        return False


def _column_key(column: str) -> str:
    """The coordinate named by a column (``knee`` or ``/jointset/knee_r/knee/value``)."""
    if "/" in column:
        parts = [p for p in column.split("/") if p]
        if len(parts) >= 2 and parts[-1] == "value":
            return parts[-2]
        return ""
    return column


def table_coordinates(model, table) -> np.ndarray:
    """Coordinates (n, nq) of a motion table, in radians; missing coordinates get defaults."""
    from ahbm.opensim.coordinates import coordinates_to_radians

    if table.in_degrees and not table.angle_columns:
        table = coordinates_to_radians(model, table)
    columns = [_column_key(c) for c in table.columns]
    lookup = {}
    for i, c in enumerate(columns):
        lookup.setdefault(c, i)
    names = list(model.coordinate_names)
    found = [n for n in names if n in lookup]
    if not found:
        raise DataError(
            f"the motion '{table.source or table.name or '(table)'}' has none of the "
            f"coordinates of model '{model.name}' ({', '.join(names[:8])}...); its columns "
            f"are {list(table.columns)[:8]}: give the model's coordinates file"
        )
    values = np.asarray(table.values, dtype=float)
    Q = np.tile(default_q(model), (values.shape[0], 1))
    for k, n in enumerate(names):
        if n in lookup:
            Q[:, k] = values[:, lookup[n]]
    return Q


def frames_of_motion(model, motion, time, rate):
    """(q (n, nq) or None, time (n,) or None, result or None) of the `motion` argument."""
    result = None
    t = None
    if motion is None:
        Q = None if model is None else default_q(model)[None]
    elif is_table(motion):
        if model is None:
            raise DataError("`motion` is a coordinates table: give the `model` it moves")
        Q = table_coordinates(model, motion)
        t = np.asarray(motion.time, dtype=float)
    elif is_result(motion):
        if model is None:
            raise DataError("`motion` is a simulation result: give the `model` it moves")
        result = motion
        Q = as_float_array(motion.q, "motion.q")
        t = as_float_array(motion.t, "motion.t")
    else:
        if model is None:
            raise DataError("`motion` holds coordinates: give the `model` they move")
        Q = as_float_array(motion, "motion")
    if Q is not None:
        if Q.ndim == 1:
            Q = Q[None]
        if Q.ndim != 2 or Q.shape[1] != model.nq:
            raise DataError(
                f"Expected `motion` to have shape (n_frames, {model.nq}) (the coordinates of "
                f"model '{model.name}'), got {Q.shape}"
            )
    if time is not None:
        t = as_float_array(time, "time").ravel()
        if Q is not None and t.shape[0] != Q.shape[0]:
            raise DataError(f"`time` has {t.shape[0]} entries, the motion {Q.shape[0]} frames")
    elif t is None and Q is not None and rate is not None:
        t = np.arange(Q.shape[0]) / float(rate)
    if t is not None and t.shape[0] > 1 and not np.all(np.diff(t) > 0):
        raise DataError("the frame times are not increasing: give `time` in seconds, sorted")
    return Q, t, result


def poses(model, Q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Body positions (n, nb, 3), quaternions (n, nb, 4) xyzw and transforms (n, nb, 4, 4)."""
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.kinematics.rotations import matrix_to_quat

    T = np.asarray(forward_kinematics(model, Q).transforms, dtype=float)
    if not np.isfinite(T).all():
        bad = int(np.argwhere(~np.isfinite(T))[0][0])
        raise DataError(f"the motion gives non-finite body poses at frame {bad}")
    quat = matrix_to_quat(T[..., :3, :3])
    return T[..., :3, 3], quat, T


def whole_body_com(model, Q) -> np.ndarray | None:
    """Centre of mass (n, 3) of the model, or None if it has no mass."""
    if float(model.total_mass) <= 0:
        return None
    from ahbm.kinematics.forward import center_of_mass

    return np.asarray(center_of_mass(model, Q), dtype=float).reshape(-1, 3)


# ----------------------------------------------------------------------------
# Shapes of the bodies (in the body frames)
# ----------------------------------------------------------------------------


def _pose_of(entry: Mapping) -> tuple[list, list]:
    """(position, quaternion xyzw) of a primitive entry in its body frame."""
    from ahbm.kinematics.rotations import matrix_to_quat

    pos = entry.get("position", (0.0, 0.0, 0.0))
    rot = entry.get("rotation")
    origin = entry.get("origin")
    if isinstance(origin, Mapping):
        pos, rot = origin.get("position", pos), origin.get("rotation", rot)
    R = np.eye(3) if rot is None else np.asarray(rot, dtype=float)
    return np.asarray(pos, dtype=float).tolist(), matrix_to_quat(R).tolist()


def _color(value, default) -> list:
    if value is None:
        return list(default)
    if isinstance(value, str):
        from matplotlib.colors import to_rgb

        try:
            return list(to_rgb(value))
        except ValueError:
            return list(default)
    c = np.asarray(value, dtype=float).ravel()
    return c[:3].tolist() if c.size >= 3 and np.isfinite(c[:3]).all() else list(default)


def _axis_quat(axis) -> list:
    """Quaternion turning the local y axis (three.js cylinders) onto `axis`."""
    if isinstance(axis, str):
        axis = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}[axis.lower()]
    a = np.asarray(axis, dtype=float)
    return _quat_between(np.array([0.0, 1.0, 0.0]), a / np.linalg.norm(a))


def _quat_between(u: np.ndarray, v: np.ndarray) -> list:
    """Quaternion (xyzw) of the shortest rotation from unit u to unit v."""
    c = float(np.dot(u, v))
    if c < -1 + 1e-12:
        perp = np.cross(u, [1.0, 0.0, 0.0])
        if np.linalg.norm(perp) < 1e-6:
            perp = np.cross(u, [0.0, 0.0, 1.0])
        perp /= np.linalg.norm(perp)
        return [*perp.tolist(), 0.0]
    w = np.cross(u, v)
    q = np.array([*w, 1.0 + c])
    return (q / np.linalg.norm(q)).tolist()


def primitive_shape(entry: Mapping, where: str) -> dict | None:
    """A viewer shape of an ahbm geometry entry (box, sphere, ellipsoid, cylinder)."""
    kind = str(entry.get("type", "")).lower()
    if kind not in _PRIMITIVE_TYPES:
        warnings.warn(
            f"{where}: geometry type {entry.get('type')!r} cannot be drawn; skipped",
            AhbmWarning,
            stacklevel=4,
        )
        return None
    pos, quat = _pose_of(entry)
    shape = {
        "kind": kind,
        "position": pos,
        "quaternion": quat,
        "color": _color(entry.get("color"), (0.85, 0.62, 0.35)),
    }
    try:
        if kind == "box":
            shape["size"] = np.asarray(entry["size"], dtype=float).tolist()
        elif kind == "sphere":
            shape["kind"], shape["radii"] = "ellipsoid", [float(entry["radius"])] * 3
        elif kind == "ellipsoid":
            shape["radii"] = np.asarray(entry["radii"], dtype=float).tolist()
        else:  # cylinder, capsule along their axis
            shape["radius"] = float(entry["radius"])
            shape["length"] = float(entry["length"])
            R = np.asarray(shape["quaternion"])
            from ahbm.kinematics.rotations import quat_to_matrix

            axis = quat_to_matrix(R) @ np.asarray(_axis_vector(entry.get("axis", "z")))
            shape["quaternion"] = _axis_quat(axis)
    except (KeyError, TypeError, ValueError) as err:
        raise ModelError(f"{where}: malformed {kind} entry ({err})") from None
    return shape


def _axis_vector(axis):
    if isinstance(axis, str):
        return {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}[axis.lower()]
    return axis


def _geometry_entries(body) -> list:
    geom = getattr(body, "geometry", None)
    if geom is None:
        return []
    if isinstance(geom, Mapping):
        return list(geom["shapes"]) if "shapes" in geom else [geom]
    return list(geom) if isinstance(geom, (list, tuple)) else [geom]


def _osim_geometry(model) -> dict[str, list]:
    """Body name -> OpenSim attached geometry entries (``read_osim`` keeps them)."""
    out: dict[str, list] = {}
    if not _has_section(model, "opensim"):
        return out
    for item in model.section("opensim"):
        if getattr(item, "kind", None) != "geometry":
            continue
        data = item.data
        geoms = data.get("attached_geometry") or []
        if isinstance(geoms, Mapping):
            geoms = [geoms]
        out.setdefault(str(data.get("body")), []).extend(g for g in geoms if isinstance(g, Mapping))
    return out


class MeshStore:
    """Meshes read for a scene, each file once: vertex and index arrays to pack."""

    def __init__(self, folders):
        self.folders = [f for f in folders if f is not None]
        self.arrays: dict[str, np.ndarray] = {}
        self.index: dict[tuple, int] = {}
        self.missing: list[str] = []
        self.found: list[str] = []

    def get(self, name: str) -> int | None:
        from ahbm.opensim.meshes import find_mesh, read_mesh

        key = (name,)
        if key in self.index:
            return self.index[key]
        path = find_mesh(name, self.folders)
        if path is None:
            self.missing.append(name)
            self.index[key] = None
            return None
        try:
            v, t = read_mesh(path)
        except FileFormatError as err:
            warnings.warn(f"{err}; the body is drawn without it", AhbmWarning, stacklevel=4)
            self.index[key] = None
            return None
        k = len(self.found)
        self.found.append(str(path))
        self.arrays[f"mesh{k}_v"] = v.astype(np.float32)
        self.arrays[f"mesh{k}_i"] = t.astype(np.uint32)
        self.index[key] = k
        return k


def _osim_shape(g: Mapping, meshes: MeshStore, use_meshes: bool) -> dict | None:
    """A viewer shape of one OpenSim attached geometry entry."""
    kind = str(g.get("type", ""))
    app = g.get("Appearance") if isinstance(g.get("Appearance"), Mapping) else {}
    color = _color(app.get("color"), (0.9, 0.88, 0.8))
    if color == [1.0, 1.0, 1.0]:
        color = [0.9, 0.88, 0.8]  # OpenSim's white bones: shaded ivory
    opacity = app.get("opacity", 1.0)
    if app.get("visible") is False or (isinstance(opacity, (int, float)) and opacity <= 0):
        return None
    scale = g.get("scale_factors", [1.0, 1.0, 1.0])
    scale = np.broadcast_to(np.asarray(scale, dtype=float).ravel(), (3,)).tolist()
    base = {
        "position": [0.0, 0.0, 0.0],
        "quaternion": [0.0, 0.0, 0.0, 1.0],
        "color": color,
        "opacity": float(opacity) if isinstance(opacity, (int, float)) else 1.0,
    }
    if kind == "Mesh":
        if not use_meshes or not g.get("mesh_file"):
            return None
        k = meshes.get(str(g["mesh_file"]))
        return None if k is None else {**base, "kind": "mesh", "mesh": k, "scale": scale}
    if kind == "Sphere" and "radius" in g:
        return {**base, "kind": "ellipsoid", "radii": [float(g["radius"]) * s for s in scale]}
    if kind == "Ellipsoid" and "radii" in g:
        r = np.asarray(g["radii"], dtype=float) * scale
        return {**base, "kind": "ellipsoid", "radii": r.tolist()}
    if kind == "Brick" and "half_lengths" in g:
        return {**base, "kind": "box", "size": (2 * np.asarray(g["half_lengths"]) * scale).tolist()}
    if kind == "Cylinder" and "radius" in g:  # along y, as three.js cylinders
        return {
            **base,
            "kind": "cylinder",
            "radius": float(g["radius"]) * scale[0],
            "length": 2 * float(g.get("half_height", 0.5)) * scale[1],
        }
    return None


def _inertia_ellipsoid(body) -> dict | None:
    """The solid ellipsoid with the body's mass and central inertia (None if degenerate).

    A homogeneous ellipsoid of mass m and semi-axes a, b, c has principal
    moments m (b² + c²) / 5, ...; so a² = 5 (I₂ + I₃ − I₁) / (2 m), ...
    """
    m = float(body.mass)
    inertia = getattr(body, "inertia", None)
    if m <= 0 or inertia is None:
        return None
    eig, vec = np.linalg.eigh(np.asarray(inertia, dtype=float))
    s = eig.sum()
    sq = 5.0 * (s - 2.0 * eig) / (2.0 * m)
    if not np.all(np.isfinite(sq)) or np.any(sq <= 0):
        return None
    density = m / (4.0 / 3.0 * np.pi * float(np.prod(np.sqrt(sq))))
    if not _DENSITY_RANGE[0] <= density <= _DENSITY_RANGE[1]:
        return None  # a placeholder inertia (e.g. 0.001 kg m^2 on a 0.1 kg talus): no body shape
    if np.linalg.det(vec) < 0:
        vec[:, 2] *= -1
    from ahbm.kinematics.rotations import matrix_to_quat

    return {
        "kind": "ellipsoid",
        "radii": np.sqrt(sq).tolist(),
        "position": np.asarray(body.com, dtype=float).tolist(),
        "quaternion": matrix_to_quat(vec).tolist(),
        "color": [0.86, 0.66, 0.5],
        "opacity": 0.55,
        "role": "segment",
    }


def _bone(start, end, radius) -> dict | None:
    a, b = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    d = b - a
    L = float(np.linalg.norm(d))
    if L < 1e-4:
        return None
    return {
        "kind": "capsule",
        "radius": float(radius),
        "length": L,
        "position": ((a + b) / 2).tolist(),
        "quaternion": _quat_between(np.array([0.0, 1.0, 0.0]), d / L),
        "color": [0.93, 0.91, 0.84],
        "role": "bone",
    }


def _collision_shapes(model) -> dict[str, list]:
    """Body name -> swept-sphere shapes (spheres, capsules, lozenges) of the model."""
    from ahbm.kinematics.geometry import collision_shapes

    out: dict[str, list] = {}
    for s in collision_shapes(model):
        P = np.asarray(s.points, dtype=float)
        r = float(s.radius)
        color = [0.2, 0.6, 0.95]
        shapes = [
            {
                "kind": "ellipsoid",
                "radii": [r] * 3,
                "position": p.tolist(),
                "quaternion": [0.0, 0.0, 0.0, 1.0],
                "color": color,
                "opacity": 0.45,
            }
            for p in P
        ]
        for i in range(len(P)):
            for j in range(i + 1, len(P)):
                c = _bone(P[i], P[j], r)
                if c is not None:
                    c.update(color=color, opacity=0.45, role="collision")
                    shapes.append(c)
        if len(P) == 3:  # the triangle's slab between the edge capsules
            shapes.append(
                {
                    "kind": "triangle",
                    "points": P.tolist(),
                    "thickness": 2 * r,
                    "position": [0.0, 0.0, 0.0],
                    "quaternion": [0.0, 0.0, 0.0, 1.0],
                    "color": color,
                    "opacity": 0.45,
                }
            )
        for sh in shapes:
            sh.setdefault("role", "collision")
            sh["name"] = s.name
        out.setdefault(s.body, []).extend(shapes)
    return out


def body_shapes(
    model, T0: np.ndarray, *, geometry: str, meshes: MeshStore, collision: bool, scale: float
) -> list[list[dict]]:
    """Shapes of each body in its frame: meshes, primitives, or bones and inertia ellipsoids.

    `T0` (nb, 4, 4) is the pose at the default coordinates (for the bones from a
    body's origin to its children's); `scale` a length typical of the model.
    """
    osim = _osim_geometry(model) if geometry != "skeleton" else {}
    parents = np.asarray(model.parent, dtype=int)
    coll = _collision_shapes(model) if collision else {}
    out = []
    for i, body in enumerate(model.bodies):
        shapes: list[dict] = []
        if geometry != "skeleton":
            for k, entry in enumerate(_geometry_entries(body)):
                if isinstance(entry, Mapping):
                    s = primitive_shape(entry, f"body '{body.name}': geometry[{k}]")
                    if s is not None:
                        shapes.append(s)
            for g in osim.get(body.name, []):
                s = _osim_shape(g, meshes, geometry in ("auto", "meshes"))
                if s is not None:
                    shapes.append(s)
        if not any(s["kind"] == "mesh" for s in shapes):
            shapes.extend(_skeleton_shapes(model, i, body, T0, parents, scale))
        shapes.extend(coll.get(body.name, []))
        out.append(shapes)
    return out


def _skeleton_shapes(model, i, body, T0, parents, scale) -> list[dict]:
    """Bones from the body's origin to its children's origins, and its inertia ellipsoid."""
    shapes = []
    kids = np.flatnonzero(parents == i)
    inv = np.linalg.inv(T0[i])
    for k in kids:
        end = (inv @ T0[k][:, 3])[:3]
        L = float(np.linalg.norm(end))
        r = np.clip(0.06 * L, 0.004 * scale, 0.012 * scale)
        b = _bone(np.zeros(3), end, r)
        if b is not None:
            shapes.append(b)
    e = _inertia_ellipsoid(body)
    if e is not None:
        shapes.append(e)
    elif not kids.size and np.any(body.com):
        b = _bone(np.zeros(3), np.asarray(body.com, dtype=float) * 2, 0.01 * scale)
        if b is not None:
            shapes.append(b)
    shapes.append(
        {
            "kind": "ellipsoid",
            "radii": [0.012 * scale] * 3,
            "position": [0, 0, 0],
            "quaternion": [0, 0, 0, 1],
            "color": [0.35, 0.35, 0.4],
            "role": "joint",
        }
    )
    return shapes
