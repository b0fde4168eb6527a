"""One muscle path: its node sequence per frame, length, wraps and gradient (internal).

The geometry behind :mod:`ahbm.muscles.paths`: the straight segments between
the active points, OpenSim's repeated wrapping passes, and the derivatives of
the length with respect to the nodes.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
from ahbm.muscles._path_plan import _WrapPlan
from ahbm.muscles.path_elements import (
    WrapObject,
)

__all__: list[str] = []

#: OpenSim's convergence test of the repeated wrapping passes (m) and their number
_WRAP_TOLERANCE = 0.0005
_WRAP_PASSES = 8


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
        # per wrap, the nodes whose positions its current tangent points were computed from
        self.ends = np.full((n_wraps, 2, N), -1, dtype=np.int64)
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
    if obj.kind == "torus":  # OpenSim's torus never reports a point inside
        return np.zeros(y.shape[:-1], dtype=bool)
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
        ends = np.stack([[c[1] for c in cand], [c[2] for c in cand]], axis=1)  # (J, 2, N)
        path.ends[w] = np.where(hit, ends[best, :, cols].T, path.ends[w])
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
