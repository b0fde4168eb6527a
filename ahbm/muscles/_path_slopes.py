"""Exact path-length slopes where the tangent points of chained wraps move (internal).

A path whose wraps chain (a wrap's end point is another wrap's tangent point),
or whose repeated wrapping passes left a tangent point at a position other
than the one its straight segments read (OpenSim's cached ground locations,
see :class:`ahbm.muscles._path_geometry._Path`), has a length that is not
stationary in its tangent points: the fixed-tangent-point gradient is not
``∂l/∂q`` there. For those frames the length's slopes are taken by
differences of the whole path length (OpenSim's wrapping passes and all)
under virtual rigid motions of each body the path touches (three rotations
about a point of the body, three translations) and under translations of each
moving point. Each body's slopes form a world wrench ``[∂l/∂ω; ∂l/∂v]`` (moment
about the world origin), which the caller maps to the generalized velocities
through the bodies' motion columns exactly as the analytic loads are mapped.

The differences use steps h of 1 µm (rotations: 1 µm at the body's farthest
path element) at -2h, -h, +h, +2h: the fourth-order central difference where
the length is smooth over the stencil (the four one-step slopes on a
parabola). OpenSim's iterations (cylinder tangent sliding, ellipsoid
tangent points and polylines) leave jumps of ~1e-8 m in the length about
every micrometre of motion and noise of ~1e-12 m; where the 1 µm stencil
meets a jump, the same stencil at 0.1 µm is used: its fourth-order
difference where smooth, else the second-order central one (a jump beyond
±h) or the second-order one-sided one on the other side (a jump within
±h), as :func:`ahbm.muscles.wrap_length_gradient` does for single wraps.
Where jumps lie within both (two jumps straddling the state), the stencil
at 0.01 µm is used when it is smooth (to the lengths' round-off) and the
0.1 µm estimate is off it by more than 1e-4 (Rajagopal's gaslat_r at one
state of 100 was 1.5e-2 m off the length's slope before). All the
perturbed paths of all the frames go through one batched wrapping call.

OpenSim's ``computeMomentArm`` convention (for comparison with OpenSim) is
:func:`_opensim_wrenches`: a unit tension along each straight segment between
points on different bodies, directions from the read (cached) positions,
tangent points loaded on their wrap objects' bodies.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine.arrays import cross
from ahbm.muscles._path_geometry import (
    _apply_wraps,
    _exact_wrap_gradient,
    _Path,
    _unit,
    _wrap_frame,
)

__all__: list[str] = []

#: difference step (m) of the translations, and of the farthest point's motion in rotations
_STEP = 1e-6
#: frames per batched call (bounds the memory of the perturbed paths)
_CHUNK = 256
#: the stencil's steps, at _STEP, _STEP / 10 and _STEP / 100 (each used where the
#: coarser ones are not smooth: a kink or jump of the length near the state)
_K = np.array([-2.0, -1.0, 1.0, 2.0, -0.2, -0.1, 0.1, 0.2, -0.02, -0.01, 0.01, 0.02])


def _chained_frames(path: _Path, n_wraps: int) -> np.ndarray:
    """Frames (N,) where a wrap in the path is not between two path points (or its
    tangent points were computed from other end points: a wrap of a later pass moved
    away), or a tangent point in the path is read at a position other than its current
    one."""
    n_p, order = path.n_p, path.order
    L = order.shape[0]
    bad = np.zeros(path.N, dtype=bool)
    for w in range(n_wraps):
        k = n_p + 2 * w
        present = order == k
        inserted = present.any(axis=0)
        if not inserted.any():
            continue
        at = np.argmax(present, axis=0)
        prev = np.take_along_axis(order, np.clip(at - 1, 0, L - 1)[None], axis=0)[0]
        nxt = np.take_along_axis(order, np.clip(at + 2, 0, L - 1)[None], axis=0)[0]
        between = (at >= 1) & (prev >= 0) & (prev < n_p) & (nxt >= 0) & (nxt < n_p)
        # ... and its tangent points were computed from those two points
        between &= (path.ends[w, 0] == prev) & (path.ends[w, 1] == nxt)
        stale = np.any(path.X[k : k + 2] != path.F[k : k + 2], axis=(0, 1))
        bad |= inserted & (~between | stale)
    return bad


def _rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    """Rotations (3, 3, M) about a coordinate axis by the angles (M,)."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R = np.zeros((3, 3, angle.size))
    R[axis, axis] = 1.0
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def _slopes(samples: np.ndarray, h):
    """d/ds at 0 from lengths at s = -2h, -h, 0, +h, +2h (5, ...), stepping around jumps,
    and whether the length was smooth over the stencil."""
    m2, m1, l0, p1, p2 = samples
    fwd1, fwd2 = (p1 - l0) / h, (p2 - p1) / h
    bwd1, bwd2 = (l0 - m1) / h, (m1 - m2) / h
    c2 = (p1 - m1) / (2 * h)
    c4 = (8.0 * (p1 - m1) - (p2 - m2)) / (12 * h)
    forward = (-3 * l0 + 4 * p1 - p2) / (2 * h)
    backward = (3 * l0 - 4 * m1 + m2) / (2 * h)
    e_c, e_f, e_b = np.abs(fwd1 - bwd1), np.abs(fwd1 - fwd2), np.abs(bwd1 - bwd2)
    use_c = e_c <= 1.5 * np.minimum(e_f, e_b) + 1e-9
    # smooth over the whole stencil: the four slopes lie on a parabola (third difference
    # of the slopes small against their spread; a jump or a kink makes it a third of it)
    s1, s2, s3, s4 = bwd2, bwd1, fwd1, fwd2
    third = np.abs(s1 - 3.0 * s2 + 3.0 * s3 - s4)
    # round-off of the lengths bounds how well the slopes can agree at small steps
    noise = 1e-8 + 64.0 * np.finfo(float).eps * np.abs(l0) / h
    smooth = third <= 0.05 * (np.abs(s4 - s1) + np.abs(s3 - s2)) + noise
    one_sided = np.where(e_f < e_b, forward, backward)
    return np.where(smooth, c4, np.where(use_c, c2, one_sided)), smooth


def _chain_slopes(mp, pts, active, frames_R, cols: np.ndarray, moving_points):
    """Slopes of the path length of `mp` at the frames `cols`.

    Returns ``{body: wrench (6, M)}`` (world, moment about the origin; bodies >= 0
    only) and ``{point k: ∂l/∂x_k (3, M)}`` for the moving points `moving_points`.
    """
    wraps = mp.wraps
    n_p = len(mp.points)
    touched = sorted({pt.body for pt in mp.points} | {wp.body for wp in wraps})
    # The length does not change when every body moves together, so the wrenches sum to
    # zero: the ground takes the rest where the path touches it; otherwise the first body
    # (nearest the root) does, and is not perturbed.
    bodies = [b for b in touched if b >= 0]
    reference = None if touched[0] < 0 or len(bodies) < 2 else bodies.pop(0)
    wrenches = {b: np.zeros((6, cols.size)) for b in bodies}
    point_grads = {k: np.zeros((3, cols.size)) for k in moving_points}
    for lo in range(0, cols.size, _CHUNK):
        sel = cols[lo : lo + _CHUNK]
        out = slice(lo, lo + sel.size)
        W, g = _chunk_slopes(mp, pts[:, :, sel], None if active is None else active[:, sel],
                             [(R[:, :, sel], o[:, sel]) for R, o in frames_R], bodies,
                             moving_points, n_p)  # fmt: skip
        for b in bodies:
            wrenches[b][:, out] = W[b]
        for k in moving_points:
            point_grads[k][:, out] = g[k]
    if reference is not None:
        wrenches[reference] = -sum(wrenches.values())
    return wrenches, point_grads


def _chunk_slopes(mp, pts, active, frames_R, bodies, moving_points, n_p):
    M = pts.shape[2]
    pt_body = np.array([pt.body for pt in mp.points])
    w_body = np.array([wp.body for wp in mp.wraps])
    # a centre per body and frame (mean of its path elements) and the rotation step
    centres, h_rot = {}, {}
    for b in bodies:
        members = [pts[k] for k in np.flatnonzero(pt_body == b)]
        members += [frames_R[w][1] for w in np.flatnonzero(w_body == b)]
        c = np.mean(members, axis=0)  # (3, M)
        reach = np.max([np.linalg.norm(x - c, axis=0) for x in members], axis=0)  # (M,)
        reach += max((max(mp.wraps[w].obj.dimensions) for w in np.flatnonzero(w_body == b)),
                     default=0.0)  # fmt: skip
        centres[b], h_rot[b] = c, _STEP / np.maximum(reach, 1e-3)
    # the perturbations: (kind, body or point, axis); each at the 4 steps of _K
    dirs = [("rot", b, i) for b in bodies for i in range(3)]
    dirs += [("tr", b, i) for b in bodies for i in range(3)]
    dirs += [("pt", k, i) for k in moving_points for i in range(3)]
    E = 1 + _K.size * len(dirs)
    P = np.repeat(pts[:, :, None, :], E, axis=2)  # (n_p, 3, E, M)
    Rs = [np.repeat(R[:, :, None, :], E, axis=2) for R, _ in frames_R]
    Os = [np.repeat(o[:, None, :], E, axis=1) for _, o in frames_R]
    e = 1
    for kind, who, i in dirs:
        for s in _K:
            if kind == "pt":
                P[who, i, e] += s * _STEP
            elif kind == "tr":
                P[pt_body == who, i, e] += s * _STEP
                for w in np.flatnonzero(w_body == who):
                    Os[w][i, e] += s * _STEP
            else:
                Q = _rotation(i, s * h_rot[who])
                c = centres[who]
                on = pt_body == who
                P[on, :, e] = c + np.einsum("ijM,kjM->kiM", Q, P[on, :, e] - c)
                for w in np.flatnonzero(w_body == who):
                    Rs[w][:, :, e] = np.einsum("ijM,jkM->ikM", Q, Rs[w][:, :, e])
                    Os[w][:, e] = c + np.einsum("ijM,jM->iM", Q, Os[w][:, e] - c)
            e += 1
    n_w = len(mp.wraps)
    A = None if active is None else np.repeat(active[:, None, :], E, axis=1).reshape(n_p, E * M)
    path = _Path(P.reshape(n_p, 3, E * M), A, n_w)
    frames = [(R.reshape(3, 3, E * M), o.reshape(3, E * M)) for R, o in zip(Rs, Os, strict=True)]
    L = _apply_wraps(None, path, mp.wraps, frames).reshape(E, M)
    l0 = L[0]
    rows = L[1:].reshape(len(dirs), _K.size, M)
    d = {}
    for n, (kind, who, i) in enumerate(dirs):
        h = h_rot[who] if kind == "rot" else _STEP
        coarse, smooth = _slopes(np.stack([rows[n, 0], rows[n, 1], l0, rows[n, 2], rows[n, 3]]), h)
        fine, smooth_fine = _slopes(
            np.stack([rows[n, 4], rows[n, 5], l0, rows[n, 6], rows[n, 7]]), h / 10
        )
        finest, smooth_finest = _slopes(
            np.stack([rows[n, 8], rows[n, 9], l0, rows[n, 10], rows[n, 11]]), h / 100
        )
        # the finest stencil where neither coarser one is smooth, it is, and the fine
        # stencil's stepped-around slope is off it by more than a jump's share
        use_finest = ~smooth & ~smooth_fine & smooth_finest
        use_finest &= np.abs(finest - fine) > 1e-4 * (1.0 + np.abs(finest))
        d[kind, who, i] = np.where(smooth, coarse, np.where(use_finest, finest, fine))
    W = {}
    for b in bodies:
        rot = np.stack([d["rot", b, i] for i in range(3)])
        tr = np.stack([d["tr", b, i] for i in range(3)])
        W[b] = np.concatenate([rot + cross(centres[b], tr, axis=0), tr])
    g = {k: np.stack([d["pt", k, i] for i in range(3)]) for k in moving_points}
    return W, g


def _opensim_wrenches(mp, path: _Path, frame_bodies):
    """OpenSim's GeometryPath::addInEquivalentForces for a unit tension, as ∂l/∂x.

    Returns the node gradient G (n_nodes, 3, N) to load at the nodes' current
    positions (``path.F``): per straight segment between nodes on different bodies,
    ``-u`` at its start and ``+u`` at its end, ``u`` the unit vector between the
    positions the path reads (``path.X``). Segments within one body are skipped.
    """
    n_p, cols = path.n_p, path.cols
    node_body = np.array([pt.body for pt in mp.points] + [b for b in frame_bodies for _ in (0, 1)])
    G = np.zeros_like(path.X)
    for _, a, b, valid, arc in path.segments():
        use = valid & ~arc & (node_body[np.maximum(a, 0)] != node_body[np.maximum(b, 0)])
        if not use.any():
            continue
        u, _ = _unit(path.node(b) - path.node(a))
        u = np.where(use, u, 0.0)
        G[np.maximum(b, 0), :, cols] += u.T
        G[np.maximum(a, 0), :, cols] -= u.T
    del n_p
    return G


def _wrapped_path(kin, mp, pts, active, moving, need_grad: bool, convention: str = "exact"):
    """Length (N,) of a path with wraps and, if asked, the gradients with respect to its
    path points (n_p, 3, N) for the body loads and for the moving points' coordinate terms,
    and the extra wrenches [(body, (6, N))] of its wrap objects' bodies (and, for chained
    frames, of every body the path touches)."""
    path = _Path(pts, active, len(mp.wraps))
    frames_R = [_wrap_frame(kin, wp) for wp in mp.wraps]
    length = _apply_wraps(kin, path, mp.wraps, frames_R)
    if not need_grad:
        return length, None, None, None
    n_p = len(mp.points)
    extra = []
    if convention == "opensim":
        G = _opensim_wrenches(mp, path, [wp.body for wp in mp.wraps])
        for w, wp in enumerate(mp.wraps):
            for node in (n_p + 2 * w, n_p + 2 * w + 1):
                x = np.nan_to_num(path.F[node])
                extra.append((wp.body, np.concatenate([cross(x, G[node], axis=-2), G[node]])))
        return length, G[:n_p], G[:n_p], extra
    G = path.node_gradient()
    _exact_wrap_gradient(kin, path, mp.wraps, frames_R, G, extra)
    for w, wp in enumerate(mp.wraps):  # tangent points move with their wrap objects
        for node in (n_p + 2 * w, n_p + 2 * w + 1):
            x = np.nan_to_num(path.X[node])
            extra.append((wp.body, np.concatenate([cross(x, G[node], axis=-2), G[node]])))
    G = G[:n_p]
    chained = _chained_frames(path, len(mp.wraps))
    if not chained.any():
        return length, G, G, extra
    cols = np.flatnonzero(chained)
    G = np.where(chained, 0.0, G)
    extra = [(b, np.where(chained, 0.0, w)) for b, w in extra]
    moving_points = [k for k, _ in moving]
    W, g = _chain_slopes(mp, pts, active, frames_R, cols, moving_points)
    for b, Wb in W.items():
        full = np.zeros((6, path.N))
        full[:, cols] = Wb
        extra.append((b, full))
    Gmov = G.copy()
    for k, gk in g.items():
        Gmov[k][:, cols] = gk
    return length, G, Gmov, extra
