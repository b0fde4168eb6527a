"""Musculotendon path kinematics: lengths, lengthening speeds, moment arms, world points.

The paths are the :class:`~ahbm.muscles.Muscle` objects of a model
(``model.muscles``): ordered points fixed in bodies
(:class:`~ahbm.muscles.PathPoint`), via points active over a coordinate range
(:class:`~ahbm.muscles.ConditionalPathPoint`), points whose location is a
function of a coordinate (:class:`~ahbm.muscles.MovingPathPoint`), and wraps
over cylinders, spheres and ellipsoids (:class:`~ahbm.muscles.PathWrap` over
the model's :class:`~ahbm.muscles.WrapObject` items). Every function takes a
whole trial at once: batch axes of ``q`` first, one pass of the compiled
forward kinematics (``kin=`` may pass it in), loops over muscles and points,
never over frames.

Definitions
-----------
- **Length** (m): OpenSim's ``GeometryPath`` length. The active points, in
  order, then each path wrap in the order of ``Muscle.wraps`` (OpenSim's
  ``PathWrapSet``) inserts its two tangent points into the segment it wraps
  (within its ``range``; the first segment that cuts the object, else the
  wrapped segment whose length grows least); the length is the sum of the
  straight segments plus the surface lengths between tangent points. With
  two or more wraps the wraps are applied again, up to 8 passes, until the
  length changes by less than 0.5 mm, and when in the first pass the first
  wrap missed and the second had a path point inside its object, the two
  are swapped for the later passes (as OpenSim does). OpenSim caches a
  point's ground location when a state first reads it: a tangent point keeps,
  in the straight segments and the length changes, the position of the pass
  that first inserted it, while the later passes' wraps start from its
  updated location and add their arcs; ahbm does the same.
- **Moment arm** (m per unit of generalized velocity: m/rad or m/m):
  ``r = -∂l/∂q`` per generalized velocity ``qd`` (shape ``(..., n_muscles,
  nv)``), so that a muscle tension ``F`` exerts the generalized forces
  ``tau = r F``. This is the definition consistent with generalized forces;
  OpenSim's ``computeMomentArm`` departs from it on wrapping paths (by up to
  1.7 cm on Rajagopal's model, 8.7 mm on arm26), so ahbm matches OpenSim's
  path *lengths* and its moment arms are checked against finite differences
  of those lengths.
- **Lengthening speed** (m/s): ``dl/dt = (∂l/∂q) qd = -r qd``.

Derivatives are analytic: each straight segment pulls its end points along
its unit vector, whose generalized force follows from the body motion
columns of the forward kinematics (``S^T [p × g; g]`` per body); a moving
point adds its function's derivative along its coordinate. A wrapped
segment between two path points uses the derivative of the wrapped length
with respect to its end points (:func:`ahbm.muscles.wrap_length_gradient`)
and, because that length depends only on the end points seen from the wrap
object, the opposite load on the wrap object's body. Where a wrap's end
point is a tangent point of another wrap, the tangent points are taken as
fixed on their objects (exact for shortest paths, such as sphere arcs).

Examples
--------
>>> import numpy as np
>>> from ahbm.kinematics.tree import Model
>>> from ahbm.muscles import Muscle, PathPoint, muscle_lengths, moment_arms
>>> m = Model("elbow")
>>> _ = m.add_body("forearm", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0,
...                inertia=np.eye(3) * 0.01)
>>> m.muscles = [Muscle("flexor", (PathPoint("o", "ground", (0.0, 0.3, 0.0)),
...                                PathPoint("i", "forearm", (0.05, 0.0, 0.0))),
...                      max_isometric_force=500.0, optimal_fiber_length=0.1,
...                      tendon_slack_length=0.15)]
>>> q = np.array([[0.0], [0.5]])
>>> muscle_lengths(m, q).round(4)
array([[0.3041],
       [0.2795]])
>>> moment_arms(m, q).shape
(2, 1, 1)
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
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

__all__ = ["muscle_lengths", "lengthening_speeds", "moment_arms", "path_loads", "path_points"]

#: OpenSim's convergence test of the repeated wrapping passes (m) and their number
_WRAP_TOLERANCE = 0.0005
_WRAP_PASSES = 8


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


# ----------------------------------------------------------------------------
# one path: its node sequence per frame, length and gradient with respect to the nodes
# ----------------------------------------------------------------------------


def _unit(d):
    """Unit vectors and norms of d (3, ...) along axis 0 (zero where the norm is 0)."""
    n = np.sqrt(np.einsum("i...,i...->...", d, d))
    return d / np.where(n > 0, n, 1.0), n


def _compact(keep: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Per frame (column), the entries of `order` where `keep`, moved to the top; -1 below."""
    idx = np.argsort(~keep, axis=0, kind="stable")
    out = np.take_along_axis(order, idx, axis=0)
    out[np.take_along_axis(~keep, idx, axis=0)] = -1
    return out


class _Path:
    """The node sequence of one muscle path for every frame (wrap machinery).

    Nodes: the path points 0..n_p-1, then for wrap w its tangent points
    ``n_p + 2w`` and ``n_p + 2w + 1``. ``order`` (L, N) lists the node ids of
    each frame's path, -1 after its end; ``arc`` (n_w, N) the surface lengths.

    Node positions come twice, as in OpenSim: ``F`` (n_nodes, 3, N) the
    current tangent points (what the wraps of the next steps start from, OpenSim's
    PathWrapPoint location) and ``X`` the world positions as the path reads them
    (lengths, length changes, drawing). OpenSim caches a point's ground location the
    first time it is read in a state, so a tangent point keeps the position of the
    pass that first inserted it (``seen``) in every distance, while the wraps of the
    later passes use its updated location.
    """

    def __init__(self, pts, active, n_wraps):
        n_p, _, N = pts.shape
        self.n_p = n_p
        self.N = N
        self.X = np.concatenate([pts, np.full((2 * n_wraps, 3, N), np.nan)])
        self.F = self.X.copy()
        self.seen = np.zeros((n_p + 2 * n_wraps, N), dtype=bool)
        self.arc = np.zeros((n_wraps, N))
        L = n_p + 2 * n_wraps
        order = np.full((L, N), -1, dtype=np.int64)
        if active is None:
            order[:n_p] = np.arange(n_p)[:, None]
        else:
            order[:n_p] = _compact(active, np.broadcast_to(np.arange(n_p)[:, None], (n_p, N)))
        self.order = order
        self.cols = np.arange(N)

    def count(self) -> np.ndarray:
        return (self.order >= 0).sum(axis=0)

    def remove_wrap(self, w: int, frames: np.ndarray) -> None:
        t1 = self.n_p + 2 * w
        hit = ((self.order == t1) | (self.order == t1 + 1)) & frames[None, :]
        if hit.any():
            self.order = _compact((self.order >= 0) & ~hit, self.order)

    def insert_wrap(self, w: int, at: np.ndarray, frames: np.ndarray) -> None:
        """Insert t1, t2 of wrap w at positions at, at+1 (per frame) where `frames`."""
        t1 = self.n_p + 2 * w
        L = self.order.shape[0]
        j = np.arange(L)[:, None]
        src = np.where(j < at, j, j - 2)
        new = np.take_along_axis(self.order, np.clip(src, 0, L - 1), axis=0)
        new = np.where(j == at, t1, np.where(j == at + 1, t1 + 1, new))
        self.order = np.where(frames[None, :], new, self.order)

    def segments(self):
        """Per position j: node ids a, b (N,), whether a→b is a segment, whether it is an arc."""
        o = self.order
        for j in range(o.shape[0] - 1):
            a, b = o[j], o[j + 1]
            valid = (a >= 0) & (b >= 0)
            arc = valid & (a >= self.n_p) & (b == a + 1) & ((a - self.n_p) % 2 == 0)
            yield j, a, b, valid, arc

    def node(self, ids: np.ndarray, *, fresh: bool = False) -> np.ndarray:
        """World positions (3, N) of node ids (N,) (ids < 0 give node 0): as the path
        reads them, or with `fresh` the current tangent points."""
        return (self.F if fresh else self.X)[np.maximum(ids, 0), :, self.cols].T

    def set_tangent_points(self, k: int, t1: np.ndarray, t2: np.ndarray, frames) -> None:
        """New tangent points (3, N) of nodes k, k+1 where `frames`; the read positions
        change only for nodes not read yet in this state."""
        for node, x in ((k, t1), (k + 1, t2)):
            self.F[node] = np.where(frames, x, self.F[node])
            self.X[node] = np.where(frames & ~self.seen[node], x, self.X[node])

    def mark_read(self) -> None:
        """The nodes in the path now have their ground locations cached (OpenSim reads
        every point of the path when it sums the length after a pass)."""
        o = self.order
        present = np.zeros_like(self.seen)
        cols = np.broadcast_to(self.cols, o.shape)
        present[np.maximum(o, 0)[o >= 0], cols[o >= 0]] = True
        self.seen |= present

    def length(self) -> np.ndarray:
        total = np.zeros(self.N)
        for _, a, b, valid, arc in self.segments():
            if not valid.any():
                continue
            d = self.node(b) - self.node(a)
            straight = np.sqrt(np.einsum("ij,ij->j", d, d))
            if arc.any():
                w = np.clip((a - self.n_p) // 2, 0, len(self.arc) - 1)
                straight = np.where(arc, self.arc[w, self.cols], straight)
            total += np.where(valid, straight, 0.0)
        return total

    def node_gradient(self) -> np.ndarray:
        """∂l/∂x (n_nodes, 3, N) with the arcs' lengths held fixed."""
        G = np.zeros_like(self.X)
        for _, a, b, valid, arc in self.segments():
            straight = valid & ~arc
            if not straight.any():
                continue
            u, _ = _unit(self.node(b) - self.node(a))
            u = np.where(straight, u, 0.0)
            G[np.maximum(b, 0), :, self.cols] += u.T
            G[np.maximum(a, 0), :, self.cols] -= u.T
        return G


def _wrap_frame(kin, wp: _WrapPlan):
    """World rotation (3, 3, N) and origin (3, N) of a wrap object's frame."""
    R_b = _st.rotation_bl(kin, wp.body)
    R = np.einsum("ijN,jk->ikN", R_b, wp.R)
    o = _st.point_bl(kin, wp.body, wp.t[:, None])
    return R, o


def _to_wrap(R, o, x):
    """World points x (..., 3, N) -> wrap frame, (..., N, 3)."""
    return np.moveaxis(np.einsum("jiN,...jN->...iN", R, x - o), -2, -1)


def _from_wrap(R, o, y):
    """Wrap-frame points y (N, 3) -> world (3, N)."""
    return np.einsum("ijN,Nj->iN", R, y) + o


#: OpenSim's WrapObject::WrapAction codes
_NO_WRAP, _INSIDE, _WRAPPED, _MANDATORY = 0, 1, 2, 3


def _inside(obj: WrapObject, y: np.ndarray) -> np.ndarray:
    """OpenSim's "insideRadius" test of wrap-frame points y (..., 3)."""
    if obj.kind == "cylinder":
        return y[..., 0] ** 2 + y[..., 1] ** 2 < obj.dimensions[0] ** 2
    if obj.kind == "sphere":
        return np.sqrt(np.einsum("...i,...i->...", y, y)) < obj.dimensions[0]
    return np.einsum("...i->...", (y / np.array(obj.dimensions)) ** 2) - 1.0 < -0.0001


def _wrap_step(path: _Path, w: int, wp: _WrapPlan, frame_R, todo, stopped, single: bool):
    """One path wrap applied to the frames `todo` (OpenSim's loop body); returns its
    WrapAction code per frame (the last segment tried, or the mandatory one)."""
    from ahbm.muscles.wrapping import wrap_path_segment

    code = np.zeros(path.N, dtype=np.int64)
    path.remove_wrap(w, todo)
    if not wp.active:
        return code
    n_p = path.n_p
    order = path.order
    is_real = (order >= 0) & (order < n_p)
    # first and last active path points of the wrap's range, and their positions
    in_range = is_real & (order >= wp.first) & (order <= wp.last)
    none = ~in_range.any(axis=0)
    stopped |= none & todo  # OpenSim returns from applyWrapObjects here
    todo = todo & ~none
    if not todo.any():
        return code
    L = order.shape[0]
    start = np.argmax(in_range, axis=0)
    end = L - 1 - np.argmax(in_range[::-1], axis=0)
    R, o = frame_R
    cand = []
    for j, a, b, valid, arc in path.segments():
        ok = valid & ~arc & (j >= start) & (j < end) & todo
        if ok.any():
            cand.append((j, a, b, ok))
    if not cand:
        return code
    A = np.stack([path.node(a, fresh=True) for _, a, _, _ in cand])  # (J, 3, N)
    B = np.stack([path.node(b, fresh=True) for _, _, b, _ in cand])
    ok = np.stack([c[3] for c in cand])  # (J, N)
    obj = wp.obj
    Aw, Bw = _to_wrap(R, o, A), _to_wrap(R, o, B)
    res = wrap_path_segment(
        obj.kind, obj.dimensions, obj.quadrant, Aw, Bw, method=wp.method, single_wrap=single
    )
    mandatory = res.mandatory & ok
    wrapped = res.active & ok
    inside = (_inside(obj, Aw) | _inside(obj, Bw)) & ok
    # the code of the last segment tried (OpenSim stops at the first mandatory one)
    codes = np.where(wrapped, np.where(mandatory, _MANDATORY, _WRAPPED),
                     np.where(inside, _INSIDE, _NO_WRAP))  # fmt: skip
    last_tried = ok.shape[0] - 1 - np.argmax(ok[::-1], axis=0)
    code = np.where(todo, codes[last_tried, path.cols], code)
    code = np.where(mandatory.any(axis=0), _MANDATORY, code)
    straight = np.sqrt(np.einsum("jiN,jiN->jN", B - A, B - A))
    change = res.length - straight
    # OpenSim's length change measures from the end points' cached ground locations
    Ag = np.stack([path.node(a) for _, a, _, _ in cand])
    Bg = np.stack([path.node(b) for _, _, b, _ in cand])
    stale = wrapped & (np.any(Ag != A, axis=1) | np.any(Bg != B, axis=1))
    if stale.any():
        t1w = np.einsum("ijN,JNj->JiN", R, res.t1) + o
        t2w = np.einsum("ijN,JNj->JiN", R, res.t2) + o
        norm = np.linalg.norm
        moved = (norm(Ag - t1w, axis=1) + res.arc_length + norm(t2w - Bg, axis=1)
                 - norm(Bg - Ag, axis=1))  # fmt: skip
        change = np.where(stale, moved, change)
    change = np.where(wrapped, change, np.inf)
    best = np.where(mandatory.any(axis=0), np.argmax(mandatory, axis=0),
                    np.argmin(change, axis=0))  # fmt: skip
    hit = (mandatory.any(axis=0) | wrapped.any(axis=0)) & todo
    if hit.any():
        cols = path.cols
        pos = np.array([c[0] for c in cand])[best] + 1
        k = n_p + 2 * w
        t1 = _from_wrap(R, o, res.t1[best, cols])
        path.set_tangent_points(k, t1, _from_wrap(R, o, res.t2[best, cols]), hit)
        path.arc[w] = np.where(hit, res.arc_length[best, cols], path.arc[w])
        path.insert_wrap(w, pos, hit)
    return code


def _apply_wraps(kin, path: _Path, wraps: list, frames_R):
    """OpenSim's GeometryPath::applyWrapObjects for every frame; returns the path length.

    The path wraps are applied in order (up to 8 passes when there are two or more, until
    the length changes by less than 0.5 mm); after the first pass, frames where the first
    wrap missed (noWrap) and the second had a path point inside its object swap the two
    for the later passes, as OpenSim does. Tangent points keep, in the length, the
    position of the pass that first inserted them (OpenSim's cached ground locations;
    see :class:`_Path`).
    """
    N = path.N
    n_w = len(wraps)
    passes = 1 if n_w < 2 else _WRAP_PASSES
    single = n_w == 1
    live = np.ones(N, dtype=bool)  # frames still iterating
    stopped = np.zeros(N, dtype=bool)  # frames where OpenSim returns early (no active point)
    last = np.full(N, np.inf)
    length = None
    order = np.repeat(np.arange(n_w)[:, None], N, axis=1)  # wrap applied at each position
    for kk in range(passes):
        result = np.zeros((n_w, N), dtype=np.int64)
        for i in range(n_w):
            for w in np.unique(order[i]):
                todo = live & ~stopped & (order[i] == w)
                if todo.any():
                    code = _wrap_step(path, w, wraps[w], frames_R[w], todo, stopped, single)
                    result[i] = np.where(todo, code, result[i])
        path.mark_read()
        new = path.length()
        length = new if length is None else np.where(live, new, length)
        live &= ~(np.abs(new - last) < _WRAP_TOLERANCE)
        last = new
        if not live.any():
            break
        if kk == 0 and n_w > 1:
            swap = live & ~stopped & (result[0] == _NO_WRAP) & (result[1] == _INSIDE)
            if swap.any():
                order[0, swap], order[1, swap] = 1, 0
                path.remove_wrap(0, swap)
    return length if length is not None else path.length()


def _exact_wrap_gradient(kin, path: _Path, wraps: list, frames_R, G, extra):
    """Replace the fixed-tangent-point gradient of each wrap between two path points by the
    derivative of the wrapped length (wrap_length_gradient); loads on the wrap bodies go to
    `extra` as (body, wrench (6, N))."""
    from ahbm.muscles.wrapping import wrap_length_gradient

    n_p, cols = path.n_p, path.cols
    order = path.order
    L = order.shape[0]
    for w, wp in enumerate(wraps):
        k = n_p + 2 * w
        present = order == k
        if not present.any():
            continue
        at = np.argmax(present, axis=0)
        inserted = present.any(axis=0)
        prev = np.take_along_axis(order, np.clip(at - 1, 0, L - 1)[None], axis=0)[0]
        nxt = np.take_along_axis(order, np.clip(at + 2, 0, L - 1)[None], axis=0)[0]
        exact = inserted & (at >= 1) & (prev >= 0) & (prev < n_p) & (nxt >= 0) & (nxt < n_p)
        if not exact.any():
            continue
        R, o = frames_R[w]
        a, b = path.node(prev), path.node(nxt)
        t1, t2 = path.X[k], path.X[k + 1]
        obj = wp.obj
        gp, gs = wrap_length_gradient(
            obj.kind, obj.dimensions, obj.quadrant, _to_wrap(R, o, a), _to_wrap(R, o, b),
            method=wp.method, single_wrap=len(wraps) == 1,
        )  # fmt: skip
        ga = np.einsum("ijN,Nj->iN", R, gp)
        gb = np.einsum("ijN,Nj->iN", R, gs)
        u1, _ = _unit(t1 - a)
        u2, _ = _unit(b - t2)
        m = exact
        # remove the straight pieces a→t1, t2→b, add the wrapped segment's derivative
        G[np.maximum(prev, 0), :, cols] += np.where(m, ga + u1, 0.0).T
        G[np.maximum(nxt, 0), :, cols] += np.where(m, gb - u2, 0.0).T
        G[k] = np.where(m, 0.0, G[k])
        G[k + 1] = np.where(m, 0.0, G[k + 1])
        ga, gb = np.where(m, ga, 0.0), np.where(m, gb, 0.0)
        wrench = -np.concatenate([cross(a, ga, axis=-2) + cross(b, gb, axis=-2), ga + gb])
        extra.append((wp.body, wrench))


def _muscle_path(kin, mp: _MusclePlan, pts, active, need_grad: bool):
    """Length (N,) of a path with wraps and, if asked, its node gradient and the extra
    wrap-body wrenches (paths without wraps: :func:`_straight_paths`, all at once)."""
    path = _Path(pts, active, len(mp.wraps))
    frames_R = [_wrap_frame(kin, wp) for wp in mp.wraps]
    length = _apply_wraps(kin, path, mp.wraps, frames_R)
    if not need_grad:
        return length, path, None
    G = path.node_gradient()
    extra = []
    if mp.wraps:
        _exact_wrap_gradient(kin, path, mp.wraps, frames_R, G, extra)
        # tangent points move with their wrap objects
        for w, wp in enumerate(mp.wraps):
            k = path.n_p + 2 * w
            for node in (k, k + 1):
                g = G[node]
                x = np.nan_to_num(path.X[node])
                extra.append((wp.body, np.concatenate([cross(x, g, axis=-2), g])))
    return length, (path, G), extra


def _straight_paths(kin, plans, geo, need_grad: bool):
    """Lengths and node gradients of paths without wraps, all muscles at once.

    Points of all the paths are stacked (k, 3, N); per frame, the segment ending at
    an active point starts at the last active point before it in the same path.
    Returns the lengths (n_m, N) and, if asked, the gradients with respect to each
    path's points (list of (n_p, 3, N)).
    """
    N = kin.n_frames
    sizes = [len(mp.points) for mp in plans]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    P = np.concatenate([g[0] for g in geo])  # (k, 3, N)
    n_k = P.shape[0]
    first = np.repeat(starts, sizes)  # first point of each point's path
    if all(g[1] is None for g in geo):
        prev = np.broadcast_to((np.arange(n_k) - 1)[:, None], (n_k, N))
        valid = np.broadcast_to((np.arange(n_k) > first)[:, None], (n_k, N))
    else:
        active = np.concatenate(
            [np.ones((n, N), dtype=bool) if g[1] is None else g[1] for n, g in zip(sizes, geo,
                                                                                    strict=True)]
        )  # fmt: skip
        # running maximum of the active indices, floored at the point before the path
        mark = np.where(active, np.arange(n_k)[:, None], (first - 1)[:, None])
        run = np.maximum.accumulate(mark, axis=0)
        prev = np.empty_like(run)
        prev[0] = -1
        prev[1:] = run[:-1]
        valid = active & (prev >= first[:, None])
    # the segment ending at point k starts at k - 1 unless points in between are inactive
    Pprev = np.empty_like(P)
    Pprev[1:] = P[:-1]
    Pprev[0] = P[0]
    odd_k, odd_n = np.nonzero(valid & (prev != np.arange(n_k)[:, None] - 1))
    if odd_k.size:
        Pprev[odd_k, :, odd_n] = P[prev[odd_k, odd_n], :, odd_n]
    d = P - Pprev
    n = np.sqrt(np.einsum("kiN,kiN->kN", d, d))
    seg = np.where(valid, n, 0.0)
    lengths = np.add.reduceat(seg, starts, axis=0) if n_k else np.zeros((len(plans), N))
    if not need_grad:
        return lengths, None
    u = d / np.where(valid & (n > 0), n, np.inf)[:, None, :]  # 0 where not a segment
    G = u.copy()
    regular = valid[1:] & (prev[1:] == np.arange(n_k - 1)[:, None])
    G[:-1] -= np.where(regular[:, None, :], u[1:], 0.0)
    if odd_k.size:
        G[prev[odd_k, odd_n], :, odd_n] -= u[odd_k, :, odd_n]
    return lengths, G


# ----------------------------------------------------------------------------
# driver
# ----------------------------------------------------------------------------


def _compute(model, q, muscles, kin, *, need_grad: bool, qd=None, needs_qd=False, loads=None):
    """Lengths (n_m, N) and ∂l/∂q (n_m, nv, N); with `loads` (a dict) also the body wrenches
    ``loads["body"]`` (n_m, n_bodies, 6, N) and the moving-point terms ``loads["coordinate"]``
    (n_m, nv, N) of ∂l/∂q."""
    names = _names(model, muscles)
    kin = _st.resolve(model, kin, q, qd, needs_qd=needs_qd, columns=need_grad)
    plans = _plan(model, names)
    N, nv = kin.n_frames, model.nv
    lengths = np.empty((len(plans), N))
    grad = np.zeros((len(plans), nv, N)) if need_grad else None
    if loads is not None:
        loads["body"] = np.zeros((len(plans), model.n_bodies, 6, N))
        loads["coordinate"] = np.zeros((len(plans), nv, N))
    if not plans:
        return kin, lengths, grad
    geo = _world_points(kin, plans, need_grad)
    wrenches: dict[int, dict] = {}  # body -> {muscle index: wrench (6, N)}

    def add(b, mi, wrench):
        if b >= 0:
            per = wrenches.setdefault(b, {})
            per[mi] = per[mi] + wrench if mi in per else wrench

    straight = [mi for mi, mp in enumerate(plans) if not mp.wraps]
    node_grads, point_wrenches = {}, {}
    if straight:
        sub = [geo[i] for i in straight]
        ls, G_all = _straight_paths(kin, [plans[i] for i in straight], sub, need_grad)
        lengths[straight] = ls
        if need_grad:  # [p × g; g] of every point of these paths at once
            P_all = np.concatenate([g[0] for g in sub])
            W_all = np.concatenate([cross(P_all, G_all, axis=-2), G_all], axis=1)
            cuts = np.cumsum([len(plans[i].points) for i in straight])[:-1]
            for mi, G, W in zip(straight, np.split(G_all, cuts), np.split(W_all, cuts),
                                strict=True):  # fmt: skip
                node_grads[mi], point_wrenches[mi] = G, W
    for mi, (mp, (pts, active, moving)) in enumerate(zip(plans, geo, strict=True)):
        if mp.wraps:
            length, state, extra = _muscle_path(kin, mp, pts, active, need_grad)
            lengths[mi] = length
            if not need_grad:
                continue
            G = state[1][: len(mp.points)]  # the path points (then the tangent points)
            W = np.concatenate([cross(pts, G, axis=-2), G], axis=1)
        elif need_grad:
            G, W, extra = node_grads[mi], point_wrenches[mi], ()
        else:
            continue
        for k, pt in enumerate(mp.points):
            if pt.body >= 0:
                add(pt.body, mi, W[k])
        for b, wrench in extra:
            add(b, mi, wrench)
        for k, derivs in moving:
            R = _st.rotation_bl(kin, mp.points[k].body)
            for axis, vi, der in derivs:
                grad[mi, vi] += np.einsum("iN,iN->N", G[k], R[:, axis]) * der
    if loads is not None:
        loads["coordinate"] += grad
    if need_grad:
        Sw = kin._Sw_flat  # (N, 6, nv)
        for b, items in wrenches.items():
            idx = np.fromiter(items, dtype=np.int64, count=len(items))
            W = np.stack(list(items.values()))  # (k, 6, N)
            if loads is not None:
                loads["body"][idx, b] = W
            dofs = model.support_dofs[b]
            if not dofs.size:
                continue
            grad[idx[:, None], dofs[None, :]] += np.einsum("nid,kin->kdn", Sw[:, :, dofs], W)
    return kin, lengths, grad


def _out(kin, x: np.ndarray) -> np.ndarray:
    """(k..., N) -> (batch..., k...)."""
    return np.moveaxis(x, -1, 0).reshape(kin.batch_shape + x.shape[:-1])


# ----------------------------------------------------------------------------
# public functions
# ----------------------------------------------------------------------------


def muscle_lengths(model: Model, q, *, muscles=None, kin=None) -> np.ndarray:
    """Musculotendon path lengths of the model's muscles.

    Parameters
    ----------
    model : Model
        With ``model.muscles`` (and ``model.wrap_objects`` they wrap over).
    q : array_like, shape (..., nq), or None with ``kin``
        Generalized coordinates; leading axes are frames.
    muscles : sequence of str, optional
        Names of the muscles, in the order wanted; None (default): all of
        ``model.muscles``, in model order.
    kin : Kinematics, optional
        A state from :func:`ahbm.kinematics.forward_kinematics` to reuse.

    Returns
    -------
    ndarray, shape (..., n_muscles)
        Path lengths, m (OpenSim's GeometryPath length; see the module notes).

    Raises
    ------
    DataError
        ``q`` of the wrong shape or not finite, or an unknown muscle name.
    ModelError
        ``model`` is not a Model.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      model="PathActuator", max_isometric_force=1.0,
    ...                      optimal_fiber_length=float("nan"),
    ...                      tendon_slack_length=float("nan"))]
    >>> muscle_lengths(m, [[0.0], [0.2]]).tolist()
    [[0.1], [0.30000000000000004]]
    """
    kin, lengths, _ = _compute(model, q, muscles, kin, need_grad=False)
    return _out(kin, lengths)


def moment_arms(model: Model, q, *, muscles=None, kin=None) -> np.ndarray:
    """Moment arms ``r = -∂l/∂q`` of the muscles about every generalized velocity.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    muscles : sequence of str, optional
        As :func:`muscle_lengths`.
    kin : Kinematics, optional
        A state from :func:`ahbm.kinematics.forward_kinematics` (made with any
        arguments; the motion columns are computed if it lacks them).

    Returns
    -------
    ndarray, shape (..., n_muscles, nv)
        m per unit of generalized velocity (m/rad for rotations,
        dimensionless for translations). A muscle tension ``F`` (N) exerts
        the generalized forces ``r[..., i, :] * F``.

    Notes
    -----
    Analytic (see the module notes): ``∂l/∂q = Σ_b S_b^T [p × g; g]`` over
    the path points and wrap objects with ``g`` the derivative of the length
    with respect to each point (sum of the unit vectors of its segments),
    ``S_b`` the world motion columns of the body's supporting joints, plus
    ``g · R_b f'(q_c)`` for the moving points. This is the definition
    consistent with generalized forces, not OpenSim's ``computeMomentArm``
    (which differs on wrapping paths); it is tested against finite
    differences of the lengths.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("elbow")
    >>> _ = m.add_body("forearm", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0,
    ...                inertia=np.eye(3) * 0.01)
    >>> m.muscles = [Muscle("flexor", (PathPoint("o", "ground", (0.0, 0.3, 0.0)),
    ...                                PathPoint("i", "forearm", (0.05, 0.0, 0.0))),
    ...                      max_isometric_force=500.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.15)]
    >>> float(moment_arms(m, [0.0])[0, 0].round(4))  # 0.05 * 0.3 / |(0.05, -0.3)|
    0.0493
    """
    kin, _, grad = _compute(model, q, muscles, kin, need_grad=True)
    return _out(kin, -grad)


def lengthening_speeds(model: Model, q, qd, *, muscles=None, kin=None) -> np.ndarray:
    """Lengthening speeds ``dl/dt = (∂l/∂q) qd`` of the muscle paths.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
        Generalized velocities (None without ``kin``: zeros).
    muscles : sequence of str, optional
        As :func:`muscle_lengths`.
    kin : Kinematics, optional
        A state with velocities from :func:`ahbm.kinematics.forward_kinematics`.

    Returns
    -------
    ndarray, shape (..., n_muscles)
        m/s, positive when the path lengthens (``= -r qd`` with the moment
        arms of :func:`moment_arms`).

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      max_isometric_force=1.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.1)]
    >>> lengthening_speeds(m, [0.0], [2.0]).tolist()
    [2.0]
    """
    kin, _, grad = _compute(model, q, muscles, kin, need_grad=True, qd=qd, needs_qd=True)
    qdb = _st.qd_bl(kin)  # (nv, N)
    return _out(kin, np.einsum("mvN,vN->mN", grad, qdb))


def path_loads(model: Model, q, *, muscles=None, kin=None) -> tuple[np.ndarray, np.ndarray]:
    """Loads that a unit tension in each muscle path applies to the bodies (and coordinates).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    muscles : sequence of str, optional
        As :func:`muscle_lengths`.
    kin : Kinematics, optional

    Returns
    -------
    body_loads : ndarray, shape (..., n_muscles, n_bodies, 6)
        World spatial force ``[moment about the world origin; force]`` (N·m, N per
        newton of tension) on each body: the tension pulls each path point along its
        segments, and a wrap object's body takes the load of the path pressing on it
        (the ``f_ext`` convention of :func:`ahbm.dynamics.rnea`,
        ``f_ext_frame="world"``).
    coordinate_forces : ndarray, shape (..., n_muscles, nv)
        Generalized forces per newton of tension that are not body loads: a moving
        path point's location depends on a coordinate, and the tension does work
        along it (OpenSim applies it as a mobility force). Zero without moving points.

    Notes
    -----
    ``Σ_b J_bᵀ body_loads[b] + coordinate_forces = r`` (the moment arms of
    :func:`moment_arms`), with ``J_b`` the world spatial Jacobian of body ``b``.
    The loads are ``-[p × g; g]`` summed over each body's path points and wrap
    tangent points (``g = ∂l/∂p``); a wrap between two path points loads its
    object with ``[p × g_p + s × g_s; g_p + g_s]`` (the wrapped length depends
    only on the end points seen from the object).

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      max_isometric_force=1.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.1)]
    >>> body, coord = path_loads(m, [0.0])
    >>> body[0, 0].tolist()  # pulls the block toward the origin
    [0.0, 0.0, 0.0, -1.0, 0.0, 0.0]
    """
    loads: dict = {}
    kin, _, _ = _compute(model, q, muscles, kin, need_grad=True, loads=loads)
    return _out(kin, 0.0 - loads["body"]), _out(kin, 0.0 - loads["coordinate"])


def path_points(model: Model, q, muscle: str, *, wrap_points=False, kin=None) -> np.ndarray:
    """World positions of one muscle's path points (for drawing).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    muscle : str
        Muscle name.
    wrap_points : bool, optional
        False (default): the muscle's points, in the order of
        ``Muscle.points``. True: the path as it is drawn, frame by frame: the
        active points with the wrap tangent points inserted where the path
        wraps, in path order, NaN rows after the end.
    kin : Kinematics, optional

    Returns
    -------
    ndarray, shape (..., n_points, 3) or (..., n_points + 2 n_wraps, 3)
        World positions, m. Without ``wrap_points``: NaN where a conditional
        point is inactive. With it: consecutive rows are the straight segments
        of the path, except from a wrap's first tangent point to its second,
        which the path joins over the wrap surface.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      max_isometric_force=1.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.1)]
    >>> path_points(m, [0.5], "spring").tolist()
    [[0.0, 0.0, 0.0], [0.6, 0.0, 0.0]]
    """
    if not isinstance(muscle, str):
        raise DataError(f"Expected `muscle` to be a muscle name (str), got {muscle!r:.60}")
    known = [m.name for m in _model_muscles(model)]
    if muscle not in known:
        raise DataError(
            f"`muscle`: {muscle!r:.60} is not a muscle of model '{model.name}' "
            f"(muscles: {known[:20]}{' ...' if len(known) > 20 else ''})"
        )
    if not isinstance(wrap_points, (bool, np.bool_)):
        raise DataError(f"Expected `wrap_points` to be True or False, got {wrap_points!r:.40}")
    names = (muscle,)
    kin = _st.resolve(model, kin, q)
    (mp,) = _plan(model, names)
    ((pts, active, _),) = _world_points(kin, [mp], False)
    if not wrap_points:
        if active is not None:
            pts = np.where(active[:, None, :], pts, np.nan)
        return _out(kin, pts)
    path = _Path(pts, active, len(mp.wraps))
    if mp.wraps:
        _apply_wraps(kin, path, mp.wraps, [_wrap_frame(kin, wp) for wp in mp.wraps])
    order = path.order  # (L, N) node ids in path order, -1 after the end
    X = path.X[np.maximum(order, 0), :, path.cols].transpose(0, 2, 1)  # (L, 3, N)
    X = np.where((order >= 0)[:, None, :], X, np.nan)
    return _out(kin, X)
