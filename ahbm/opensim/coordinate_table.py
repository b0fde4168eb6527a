"""The coordinate table of a model read from OpenSim, and OpenSim's generalized speeds.

:func:`osim_coordinates` is the coordinate table (ranges, defaults, flags) of
a model; :func:`osim_motion_types` the motion type of each coordinate;
:func:`osim_speed_matrix` maps ahbm's generalized velocities to OpenSim's
generalized speeds (they differ only for ball and free joints).
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.opensim._osim_frames import _custom_motion
from ahbm.opensim._osim_values import _DEFAULT_RANGE
from ahbm.opensim.osim_section import OSIM_SECTION

__all__ = ["osim_motion_types", "osim_coordinates", "osim_speed_matrix"]


# ----------------------------------------------------------------------------
# Coordinate table and OpenSim's generalized speeds
# ----------------------------------------------------------------------------

_TABLE_COLUMNS = (
    "joint", "motion_type", "range_min", "range_max", "default_value", "default_speed_value",
    "clamped", "locked", "prescribed",
)  # fmt: skip


def _joint_motions(joint) -> list:
    """Motion type of each coordinate of an ahbm joint, as OpenSim would call it."""
    t = joint.type
    n = len(joint.coordinates)
    if t in ("revolute", "universal", "euler"):
        return ["rotational"] * n
    if t == "prismatic":
        return ["translational"]
    if t == "free_euler":
        return ["translational"] * 3 + ["rotational"] * 3
    if t == "planar":
        return ["translational", "translational", "rotational"]
    if t == "spherical":
        return ["quaternion"] * 4
    if t == "free":
        return ["translational"] * 3 + ["quaternion"] * 4
    if t == "custom":
        axes = [_transform_item(a) for a in joint.transform]
        return [_custom_motion(axes, c) for c in joint.coordinates]
    return []


def _transform_item(a) -> dict:
    """A custom-joint transform entry as a plain dict (function as its dict)."""
    if not isinstance(a, dict):
        a = {"axis": a.axis, "coordinate": a.coordinate, "function": a.function}
    f = a["function"]
    return {
        "axis": np.asarray(a["axis"], dtype=float).tolist(),
        "coordinate": a.get("coordinate"),
        "function": f if isinstance(f, dict) else f.to_dict(),
    }


def _coordinate_rows(model: Model) -> list[dict]:
    from ahbm.kinematics.marker_model import joint_bounds

    kept = {}
    for it in model.section(OSIM_SECTION):
        if it.kind == "coordinate":
            data = it.data  # (a copy each time it is read: once)
            kept[data["name"]] = data
    lower, upper = joint_bounds(model)
    rows = []
    for i, body in enumerate(model.bodies):
        j = body.joint
        k0 = model.q_index[i]
        for k, (c, mt) in enumerate(zip(j.coordinates, _joint_motions(j), strict=False)):
            info = kept.get(c)
            lo, hi = float(lower[k0 + k]), float(upper[k0 + k])
            if info is not None and info.get("joint") == j.name:
                row = dict(info)
                row["clamped"] = bool(np.isfinite(lo) or np.isfinite(hi))
                if row["clamped"]:
                    row["range"] = [lo, hi]
                row["motion_type"] = info.get("motion_type", mt)
            else:
                clamped = bool(np.isfinite(lo) or np.isfinite(hi))
                rng = [lo, hi] if clamped else list(_DEFAULT_RANGE)
                row = {"name": c, "joint": j.name, "motion_type": mt, "range": rng,
                       "default_value": 0.0, "default_speed_value": 0.0, "clamped": clamped,
                       "locked": False, "prescribed": False}  # fmt: skip
            rows.append(row)
    in_model = set(model.coordinate_names)
    for name, info in kept.items():
        if name not in in_model:  # locked, or coupled to a locked coordinate
            rows.append(dict(info))
    return rows


def osim_motion_types(model: Model) -> dict:
    """``{coordinate name: motion type}`` of :func:`osim_coordinates`, without the table.

    The same values as the table's ``motion_type`` column (for the
    coordinates of the model and those :func:`~ahbm.opensim.osim.read_osim` removed), read
    straight from the ``"opensim"`` section and the joints: no ranges or
    defaults are collected, which the ID and IK tools do not need.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("a", "ground", {"type": "prismatic", "axis": [1, 0, 0]})
    >>> osim_motion_types(m)
    {'a': 'translational'}
    """
    if not isinstance(model, Model):
        raise ModelError(f"osim_motion_types expects a Model, got {type(model).__name__}")
    kept = {}
    for it in model.section(OSIM_SECTION):
        if it.kind == "coordinate":
            kept[it.get("name")] = it
    out = {}
    for body in model.bodies:
        j = body.joint
        motions = None
        for k, c in enumerate(j.coordinates):
            it = kept.get(c)
            mt = None
            if it is not None and it.get("joint") == j.name:
                mt = it.get("motion_type")
            if mt is None:
                if motions is None:
                    motions = _joint_motions(j)
                mt = motions[k] if k < len(motions) else None
            out[c] = mt
    for name, it in kept.items():
        if name not in out:  # locked, or coupled to a locked coordinate
            out[name] = it.get("motion_type")
    return out


def osim_coordinates(model: Model, *, records: bool = False):
    """The coordinate table of a model, as OpenSim describes coordinates.

    Parameters
    ----------
    model : Model
        A model from :func:`~ahbm.opensim.osim.read_osim` (its ``"opensim"`` section holds the
        table) or any ahbm model (the table is derived from its joints).
    records : bool
        Return the rows as a list of dicts ``{"name": ..., column: value}``
        (plain Python values, the same as the DataFrame's) instead of a
        DataFrame (default False): no pandas object is built.

    Returns
    -------
    pandas.DataFrame or list of dict
        One row per coordinate, indexed by name, in ``q`` order, then the
        coordinates that :func:`~ahbm.opensim.osim.read_osim` removed (locked ones, and those a
        coupler ties to a locked one). Columns:
        ``joint``; ``motion_type`` (``"rotational"``, ``"translational"``,
        ``"coupled"``, or ``"quaternion"`` for ahbm's quaternion
        components); ``range_min``, ``range_max`` (rad or m);
        ``default_value``; ``default_speed_value``; ``clamped`` (the range
        bounds the coordinate: the joint's ``limits``); ``locked``;
        ``prescribed``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                             "limits": [-1.0, 2.0]}, mass=1.0)
    >>> t = osim_coordinates(m)
    >>> row = t.loc["a"]
    >>> row.motion_type, float(row.range_min), float(row.range_max), bool(row.clamped)
    ('rotational', -1.0, 2.0, True)
    >>> osim_coordinates(m, records=True)[0]["motion_type"]
    'rotational'
    """
    if not isinstance(model, Model):
        raise ModelError(f"osim_coordinates expects a Model, got {type(model).__name__}")
    rows = _coordinate_rows(model)
    data = {
        "joint": [r["joint"] for r in rows],
        "motion_type": [r["motion_type"] for r in rows],
        "range_min": [float(r["range"][0]) for r in rows],
        "range_max": [float(r["range"][1]) for r in rows],
        "default_value": [float(r["default_value"]) for r in rows],
        "default_speed_value": [float(r.get("default_speed_value", 0.0)) for r in rows],
        "clamped": [bool(r["clamped"]) for r in rows],
        "locked": [bool(r["locked"]) for r in rows],
        "prescribed": [bool(r.get("prescribed", False)) for r in rows],
    }
    if records:
        return [
            {"name": r["name"], **{c: v[k] for c, v in data.items()}} for k, r in enumerate(rows)
        ]
    import pandas as pd

    return pd.DataFrame(data, index=pd.Index([r["name"] for r in rows], name="name"))


def _angular_speed_joints(model: Model) -> list[tuple[int, int]]:
    """(v index, body) of the rotations whose OpenSim speed is the angular velocity."""
    types = {
        it.data["name"]: it.data["type"] for it in model.section(OSIM_SECTION) if it.kind == "joint"
    }
    rotations: dict[str, list] = {}
    for it in model.section(OSIM_SECTION):
        if it.kind == "coordinate":
            rotations.setdefault(it.data["joint"], []).append(it.data["name"])
    out = []
    for i, body in enumerate(model.bodies):
        t = types.get(body.joint.name)
        # the three rotations of the ball or free joint, none of them locked
        if t not in ("BallJoint", "FreeJoint") or len(body.joint.coordinates) < 3:
            continue
        if list(body.joint.coordinates[:3]) != rotations.get(body.joint.name, [])[:3]:
            continue
        out.append((int(model.v_index[i]), int(model.q_index[i])))
    return out


def osim_speed_matrix(model: Model, q):
    """Matrix ``T(q)`` with OpenSim's generalized speeds ``u = T(q) @ qd``.

    OpenSim's speeds are the time derivatives of its coordinates for every
    joint except ``BallJoint`` and ``FreeJoint``, whose three rotational
    speeds are the angular velocity of the child in the parent offset frame
    (Simbody's ball and free mobilizers with Euler angles); ahbm's ``euler``
    and ``custom`` joints that :func:`~ahbm.opensim.osim.read_osim` makes for them use the angle
    rates. ``T`` is the identity elsewhere.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    ndarray, shape (..., nv, nv)

    Notes
    -----
    For body-fixed X-Y-Z angles ``(a, b, c)``:
    ``ω_F = [[1, 0, sin b], [0, cos a, −sin a cos b], [0, sin a, cos a cos b]] (ȧ, ḃ, ċ)``.
    Other quantities follow from the power ``τᵀ qd = τ_osimᵀ u``:
    ``M = Tᵀ M_osim T``, ``τ = Tᵀ τ_osim``, ``u̇ = T q̈ + Ṫ qd``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("a", "ground", "fixed")
    >>> osim_speed_matrix(m, []).shape
    (0, 0)
    """
    from ahbm._internal.validation import as_float_array, check_model

    check_model(model)
    q = as_float_array(q, "q")
    if q.shape[-1:] != (model.nq,):
        raise DataError(f"Expected `q` to have shape (..., {model.nq}), got {q.shape}")
    return _speed_matrix(model, q)


def _speed_matrix(model: Model, q: np.ndarray) -> np.ndarray:
    """:func:`osim_speed_matrix` without checks (works on complex `q` for complex steps)."""
    batch = q.shape[:-1]
    T = np.zeros((*batch, model.nv, model.nv), dtype=q.dtype)
    T[..., np.arange(model.nv), np.arange(model.nv)] = 1.0
    for v0, q0 in _angular_speed_joints(model):
        a, b = q[..., q0], q[..., q0 + 1]
        blk = T[..., v0 : v0 + 3, v0 : v0 + 3]
        blk[..., 0, 2] = np.sin(b)
        blk[..., 1, 1] = np.cos(a)
        blk[..., 1, 2] = -np.sin(a) * np.cos(b)
        blk[..., 2, 1] = np.sin(a)
        blk[..., 2, 2] = np.cos(a) * np.cos(b)
    return T
