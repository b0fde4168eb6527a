"""Muscle path plans and their points in the world frame (internal).

What :mod:`ahbm.muscles.paths` needs of a model's muscles, built once per
model version (body indices, coordinate indices, wrap frames), and the world
locations of the path points per frame.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.muscles.path_elements import (
    CONDITIONAL_TOLERANCE,
    ConditionalPathPoint,
    MovingPathPoint,
    Muscle,
    WrapObject,
    coordinate_indices,
)

__all__: list[str] = []


# ----------------------------------------------------------------------------
# plans: what the computation needs of the muscles, built once per model version
# ----------------------------------------------------------------------------


class _PointPlan:
    __slots__ = ("body", "location", "condition", "axes")

    def __init__(self, body, location, condition, axes):
        self.body = body  # body index, -1 for the ground
        self.location = location  # (3,) array
        self.condition = condition  # None or (q index, lower, upper)
        self.axes = axes  # () or tuple of (axis, q index, v index, function, range or None)


class _WrapPlan:
    __slots__ = ("body", "R", "t", "obj", "first", "last", "method", "active")

    def __init__(self, body, obj: WrapObject, first, last, method):
        self.body = body
        self.R = np.array(obj.rotation)
        self.t = np.array(obj.translation)
        self.obj = obj
        self.first, self.last = first, last
        self.method = method
        # an inactive object still counts for OpenSim's number of passes and single_wrap
        self.active = obj.active


class _MusclePlan:
    __slots__ = ("name", "points", "wraps")

    def __init__(self, name, points, wraps):
        self.name = name
        self.points = points
        self.wraps = wraps


def _body_index(model: Model, body: str) -> int:
    return -1 if body == "ground" else model.body_index(body)


def _plan(model: Model, names: tuple) -> list:
    key = ("muscle_path_plan", names)
    cache = model.cache
    if key in cache:
        return cache[key]
    by_name = {m.name: m for m in model.muscles}
    coords = coordinate_indices(model)
    wraps = {w.name: w for w in model.wrap_objects}
    plans = []
    for name in names:
        m: Muscle = by_name[name]
        points = []
        for p in m.points:
            condition, axes = None, ()
            if isinstance(p, ConditionalPathPoint):
                condition = (coords[p.coordinate][0], *p.range)
            elif isinstance(p, MovingPathPoint):
                axes = tuple(
                    (k, *coords[spec[0]], spec[1], spec[2] if len(spec) == 3 else None)
                    for k, spec in enumerate(p.axes)
                    if spec is not None
                )
            points.append(_PointPlan(_body_index(model, p.body), np.array(p.location), condition,
                                     axes))  # fmt: skip
        wplans = []
        for pw in m.wraps:
            obj = wraps[pw.wrap_object]
            first, last = pw.point_range(len(m.points))
            wplans.append(_WrapPlan(_body_index(model, obj.body), obj, first, last, pw.method))
        plans.append(_MusclePlan(name, points, wplans))
    cache[key] = plans
    return plans


def _model_muscles(model: Model) -> tuple:
    if not isinstance(model, Model):
        raise ModelError(f"expected a Model as `model`, got {type(model).__name__}")
    return model.muscles


def _names(model: Model, muscles) -> tuple:
    known = [m.name for m in _model_muscles(model)]
    if muscles is None:
        return tuple(known)
    if isinstance(muscles, str):
        muscles = [muscles]
    if isinstance(muscles, (bytes, dict)) or not hasattr(muscles, "__iter__"):
        raise DataError(f"Expected `muscles` to be None or a list of muscle names, got {muscles!r}")
    names = tuple(muscles)
    for n in names:
        if not isinstance(n, str) or n not in known:
            raise DataError(
                f"`muscles`: {n!r:.60} is not a muscle of model '{model.name}' "
                f"(muscles: {known[:20]}{' ...' if len(known) > 20 else ''})"
            )
    return names


# ----------------------------------------------------------------------------
# points in the world frame
# ----------------------------------------------------------------------------


def _moving_location(kin, pt: _PointPlan, qb: np.ndarray, with_derivative: bool):
    """Body-frame location (3, N) of a moving point and, per axis, (axis, v index, d/dq (N,))."""
    N = kin.n_frames
    r = np.repeat(pt.location[:, None], N, axis=1)
    derivs = []
    for axis, qi, vi, fn, rng in pt.axes:
        x = qb[qi]
        inside = None
        if rng is not None:
            inside = (x >= rng[0]) & (x <= rng[1])
            x = np.clip(x, rng[0], rng[1])
        if with_derivative:
            val, der = fn.value_and_derivatives(x, 1)
            if inside is not None:
                der = np.where(inside, der, 0.0)
            derivs.append((axis, vi, der))
        else:
            val = fn.value(x)
        r[axis] = val
    return r, derivs


def _world_points(kin, plans: list, with_derivative: bool):
    """World points (n_p, 3, N), activity (n_p, N) and moving-point derivatives, per muscle."""
    N = kin.n_frames
    qb = _st.q_bl(kin)
    # fixed points, grouped by body: one compiled pass per body
    groups: dict[int, list] = {}
    for mi, mp in enumerate(plans):
        for k, pt in enumerate(mp.points):
            if not pt.axes:
                groups.setdefault(pt.body, []).append((mi, k))
    pts = [np.empty((len(mp.points), 3, N)) for mp in plans]
    for b, members in groups.items():
        locs = np.array([plans[mi].points[k].location for mi, k in members])[:, :, None]
        world = _st.point_bl(kin, b, locs)
        for (mi, k), w in zip(members, world, strict=True):
            pts[mi][k] = w
    out = []
    for mi, mp in enumerate(plans):
        active = None
        moving = []
        for k, pt in enumerate(mp.points):
            if pt.axes:
                r, derivs = _moving_location(kin, pt, qb, with_derivative)
                pts[mi][k] = _st.point_bl(kin, pt.body, r)
                if derivs:
                    moving.append((k, derivs))
            if pt.condition is not None:
                qi, lo, hi = pt.condition
                x = qb[qi]
                if active is None:
                    active = np.ones((len(mp.points), N), dtype=bool)
                active[k] = (x >= lo - CONDITIONAL_TOLERANCE) & (x <= hi + CONDITIONAL_TOLERANCE)
        out.append((pts[mi], active, moving))
    return out
