"""Swept-sphere volumes and the closed-form distances between them.

The body-attached shapes of a model and their distances over whole trials are
in :mod:`ahbm.kinematics.geometry`; foot contact sets and the ground in
:mod:`ahbm.kinematics.contact`.

A *swept-sphere volume* (SSV; Schwienbacher 2013, ch. 6) is the set of points
within a radius ``r`` of a *core*: a point (a sphere, "point swept sphere"), a
segment (a capsule, "line swept sphere") or a triangle (a lozenge, "triangle
swept sphere"). A core is given by its 1, 2 or 3 defining points, an array of
shape ``(..., k, 3)`` with ``k`` = 1, 2 or 3. The distance between two SSVs is
the distance between their cores minus both radii (Schwienbacher eq. 6.11;
Felis 2015 eqs 4.22–4.23)::

    d = ‖c1 − c2‖ − r1 − r2,     c1, c2 the closest points of the cores,

negative when the volumes overlap (then ``−d`` is the penetration depth along
the line of the core points). The surface witness points are
``s1 = c1 − r1 n`` and ``s2 = c2 + r2 n`` with ``n = (c1 − c2)/‖c1 − c2‖``.

Closed forms
------------
Every pair of cores has a closed-form solution (Schwienbacher Table 6.1: six
functions suffice, a reversed pair swaps the points): point–point;
point–segment ``s* = clamp(wᵀe / eᵀe)`` (6.17); segment–segment with the
two-step clamping of Alg. B.3, the parallel test ``N/(u²v²) < ε`` (6.34) and
the midpoint of the overlap for overlapping parallel segments (Table 6.5);
point–triangle by the projection onto the plane (6.21) and, outside the
triangle, the nearest edge; segment–triangle as the crossing of the
triangle's plane inside the triangle or else the minimum over the three
edge–segment and two endpoint–triangle distances (Table 6.7);
triangle–triangle as the minimum over the six edge–triangle distances
(equivalent to the 9 edge–edge and 6 vertex–triangle tests of §6.7, plus the
crossing test). All of them are numpy expressions with masks for the
Voronoi-region cases, vectorized over the leading batch axes (frames, pairs).

Gradients
---------
The closest core points are convex combinations ``c1 = Σ w1_i P1_i``,
``c2 = Σ w2_j P2_j`` of the defining points (the *weights* of the result).
By the envelope theorem the gradient of the distance with respect to the
defining points is ``∂d/∂P1_i = w1_i n`` and ``∂d/∂P2_j = −w2_j n``
(Schwienbacher eqs 5.6–5.8), valid wherever the closest points are unique
and the cores do not touch. Where the cores touch or cross (``‖c1 − c2‖ = 0``,
penetration deeper than the smaller radius), ``n`` and the gradients are
zero: the distance is not differentiable there (Felis 2015 §4.6, with the
erratum of sources/notes: differentiable while the penetration is *less*
than the smallest radius).

References
----------
Schwienbacher, M. (2013). *Efficient Algorithms for Biped Robots*. TU München,
ch. 5 (self-collision avoidance) and ch. 6 (SSV distances).
Felis, M. (2015). *Modeling Emotional Aspects in Human Locomotion*. Heidelberg
University, §4.6 (self-collision) and §4.7 (foot contact).
Ericson, C. (2005). *Real-Time Collision Detection*. Morgan Kaufmann, §5.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_float_array,
)
from ahbm.errors import DataError
from ahbm.types import ResultRepr

__all__ = [
    "SSVDistance",
    "ssv_distance",
]


#: Squared length below which a segment (or an edge) counts as a point, m².
_DEGENERATE = 1e-24
#: Parallel test of two segments: ``N / (u² v²) = sin²θ`` below this (Schwienbacher 6.34).
_PARALLEL = 1e-10
#: Number of pairs evaluated at once: the closed forms run as whole-array
#: operations over blocks of this many pairs, whose temporaries stay in the cache
#: (about 3x faster than one pass over a whole trial's arrays).
_BLOCK = 8192
#: Nearly parallel segments (``sin²θ`` below this): the unconstrained solution
#: competes with the endpoint–segment closest points.
_NEAR_PARALLEL = 1e-6
#: Degenerate triangle: ``|e0 × e1|² / (|e0|² |e1|²)`` below this.
_FLAT = 1e-14

_KINDS = {"sphere": 1, "capsule": 2, "lozenge": 3}
_KIND_OF = {1: "sphere", 2: "capsule", 3: "lozenge"}


# ----------------------------------------------------------------------------
# closed-form core distances (weights of the closest points)
# ----------------------------------------------------------------------------


# The closed forms work on coordinate-first arrays: a vector is an array of
# shape (3, ...) (its rows x, y, z contiguous), a scalar an array (...). Dot
# and cross products are then a few whole-array operations (faster than
# reductions over a trailing axis of length 3).


def _dot(a, b):
    """Dot product of coordinate-first vectors (3, ...) -> (...)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return np.stack(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


def _clip01(x):
    return np.minimum(np.maximum(x, 0.0), 1.0)


def _div(num, den, ok):
    """``num / den`` where `ok`, 0 elsewhere (no warnings)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(ok, out, 0.0)


def _point_segment(p, a, b):
    """Parameter ``s`` in [0, 1] of the point of segment ``ab`` nearest to ``p`` (6.17)."""
    e = b - a
    ee = _dot(e, e)
    return _clip01(_div(_dot(p - a, e), ee, ee > _DEGENERATE))


def _segment_segment(a0, a1, b0, b1):
    """Parameters ``(s, t)`` of the closest points ``a0 + s u`` and ``b0 + t v``.

    Ericson (2005) §5.1.9 / Schwienbacher Alg. B.3: unconstrained solution
    ``s = (B F − C E)/N`` clamped to [0, 1], ``t`` from ``s`` and, if ``t``
    leaves [0, 1], clamped with ``s`` recomputed. Parallel segments
    (``N/(AE) < ε``, eq. 6.34) start from the midpoint of the overlap of
    their projections (Table 6.5); a degenerate segment is a point. For
    nearly parallel segments (``N/(AE) < 10⁻⁶``, where the unconstrained
    solution is ill-conditioned and the midpoint only approximate) the four
    endpoint–segment closest points compete, and the best is kept.
    """
    u = a1 - a0
    v = b1 - b0
    w = a0 - b0
    A = _dot(u, u)
    E = _dot(v, v)
    B = _dot(u, v)
    C = _dot(u, w)
    F = _dot(v, w)
    N = A * E - B * B
    ok_a = A > _DEGENERATE
    ok_b = E > _DEGENERATE
    general = N > _PARALLEL * A * E
    s_gen = _div(B * F - C * E, N, general)
    # parallel: midpoint of the overlap of b's projection [sb0, sb1] onto a with [0, 1]
    sb0 = _div(-C, A, ok_a)
    sb1 = _div(B - C, A, ok_a)
    s_par = 0.5 * (np.maximum(0.0, np.minimum(sb0, sb1)) + np.minimum(1.0, np.maximum(sb0, sb1)))
    s = _clip01(np.where(general, s_gen, s_par))
    t_raw = _div(B * s + F, E, ok_b)
    s_lo = _clip01(sb0)
    s_hi = _clip01(sb1)
    t = _clip01(t_raw)
    s = np.where(t_raw < 0.0, s_lo, np.where(t_raw > 1.0, s_hi, s))
    # degenerate segments are points
    if not (ok_a.all() and ok_b.all()):
        s = np.where(ok_a, np.where(ok_b, s, s_lo), 0.0)
        t = np.where(ok_b, np.where(ok_a, t, _clip01(_div(F, E, ok_b))), 0.0)
    near = ok_a & ok_b & (N <= _NEAR_PARALLEL * A * E)
    if near.any():
        s, t = _nearly_parallel(a0, a1, b0, b1, s, t, near)
    return s, t


def _nearly_parallel(a0, a1, b0, b1, s, t, mask):
    """Where `mask`, replace ``(s, t)`` by the best of them and the endpoint–segment
    closest points (computed on the masked pairs only)."""
    s, t = np.array(s, dtype=float), np.array(t, dtype=float)  # writable copies
    a0, a1, b0, b1 = (x[:, mask] for x in (a0, a1, b0, b1))
    sm, tm = s[mask], t[mask]
    ones, zeros = np.ones(sm.shape), np.zeros(sm.shape)
    cands = [(sm, tm)]
    for p, tp in ((b0, zeros), (b1, ones)):
        cands.append((_point_segment(p, a0, a1), tp))
    for p, sp in ((a0, zeros), (a1, ones)):
        cands.append((sp, _point_segment(p, b0, b1)))
    d2 = []
    for cs, ct in cands:
        d = a0 + cs * (a1 - a0) - b0 - ct * (b1 - b0)
        d2.append(_dot(d, d))
    # the first candidate (the midpoint of the overlap for parallel segments,
    # Table 6.5) unless another is closer by more than rounding
    d2 = np.stack(d2)
    tol = 1e-14 * (_dot(a1 - a0, a1 - a0) + _dot(b1 - b0, b1 - b0))
    k = np.argmax(d2 <= d2.min(axis=0) + tol, axis=0)
    s[mask] = np.choose(k, [c[0] for c in cands])
    t[mask] = np.choose(k, [c[1] for c in cands])
    return s, t


def _triangle_plane(a, b, c, p):
    """Barycentric weights ``(wa, wb, wc)`` of the projection of ``p`` on the plane of
    ``abc`` and a mask: the projection falls inside a non-degenerate triangle (6.21)."""
    e0 = b - a
    e1 = c - a
    r = p - a
    d00 = _dot(e0, e0)
    d01 = _dot(e0, e1)
    d11 = _dot(e1, e1)
    d20 = _dot(r, e0)
    d21 = _dot(r, e1)
    den = d00 * d11 - d01 * d01
    ok = den > _FLAT * d00 * d11
    u = _div(d11 * d20 - d01 * d21, den, ok)
    v = _div(d00 * d21 - d01 * d20, den, ok)
    inside = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0)
    return (1.0 - u - v, u, v), inside


def _edge_weights(i, j, s, zeros):
    """Barycentric weights of the point ``(1 − s) V_i + s V_j`` of a triangle's edge."""
    w = [zeros, zeros, zeros]
    w[i] = 1.0 - s
    w[j] = s
    return tuple(w)


def _point_triangle(p, a, b, c):
    """Barycentric weights ``(wa, wb, wc)`` of the point of triangle ``abc`` nearest to ``p``.

    Inside the triangle's prism the projection onto the plane (6.21); else the
    nearest point of the three edges (the edge regions of Table 6.2 call PL;
    the vertex regions are the edges' ends).
    """
    w_face, inside = _triangle_plane(a, b, c, p)
    verts = (a, b, c)
    zeros = np.zeros(p.shape[1:])
    cands = []
    for i in range(3):  # three edges, each vectorized over the batch
        j = (i + 1) % 3
        s = _point_segment(p, verts[i], verts[j])
        d = p - verts[i] - s * (verts[j] - verts[i])
        cands.append((_dot(d, d), _edge_weights(i, j, s, zeros)))
    d2 = np.stack([c[0] for c in cands])
    k = np.argmin(d2, axis=0)
    w_edge = [np.choose(k, [c[1][m] for c in cands]) for m in range(3)]
    return tuple(np.where(inside, wf, we) for wf, we in zip(w_face, w_edge, strict=True))


def _best(candidates):
    """Per batch element, the weights ``(w1, w2)`` of the candidate of least squared
    distance; a candidate is ``(d², w1 tuple, w2 tuple)``."""
    d2 = np.stack([c[0] for c in candidates])
    k = np.argmin(d2, axis=0)
    n1, n2 = len(candidates[0][1]), len(candidates[0][2])
    w1 = tuple(np.choose(k, [c[1][m] for c in candidates]) for m in range(n1))
    w2 = tuple(np.choose(k, [c[2][m] for c in candidates]) for m in range(n2))
    return w1, w2


def _comb(V, w):
    """Point ``Σ w_i V_i`` of coordinate-first vertices."""
    out = w[0] * V[0]
    for Vi, wi in zip(V[1:], w[1:], strict=True):
        out = out + wi * Vi
    return out


def _segment_triangle(S, T):
    """Weights ``((w0, w1), (wa, wb, wc))`` of the closest points of a segment ``S``
    (two (3, ...) vertices) and a triangle ``T`` (three) (Schwienbacher §6.4.5, Table 6.7):
    the crossing of the plane inside the triangle, else the best of the three
    edge–segment and two endpoint–triangle closest points."""
    p0, p1 = S
    a, b, c = T
    e = p1 - p0
    n = _cross(b - a, c - a)
    den = _dot(n, e)
    t0 = _clip01(_div(_dot(n, a - p0), den, den != 0.0))
    x = p0 + t0 * e
    w_x, inside = _triangle_plane(a, b, c, x)
    # the crossing point (distance 0 up to rounding; at a grazing angle the
    # computed point may lie off the plane, so it competes by its true distance)
    gap = x - _comb(T, w_x)
    zeros = np.zeros(den.shape)
    ones = zeros + 1.0
    cands = [(np.where(inside, _dot(gap, gap), np.inf), (1.0 - t0, t0), w_x)]
    for i in range(3):
        j = (i + 1) % 3
        s, t = _segment_segment(p0, p1, T[i], T[j])
        d = p0 + s * e - T[i] - t * (T[j] - T[i])
        cands.append((_dot(d, d), (1.0 - s, s), _edge_weights(i, j, t, zeros)))
    for end, ws in ((p0, (ones, zeros)), (p1, (zeros, ones))):
        wt = _point_triangle(end, a, b, c)
        d = end - _comb(T, wt)
        cands.append((_dot(d, d), ws, wt))
    return _best(cands)


def _triangle_triangle(T1, T2):
    """Weights of the closest points of two triangles (§6.7): the best of the edges of
    each triangle against the other triangle (this includes the 9 edge–edge and the 6
    vertex–triangle tests, and the crossing of an edge through the other triangle)."""
    zeros = np.zeros(T1[0].shape[1:])
    cands = []
    for first, other, swap in ((T1, T2, False), (T2, T1, True)):
        for i in range(3):
            j = (i + 1) % 3
            S = (first[i], first[j])
            ws, wt = _segment_triangle(S, other)
            we = [zeros, zeros, zeros]
            we[i], we[j] = ws
            d = _comb(S, ws) - _comb(other, wt)
            cands.append((_dot(d, d), wt, tuple(we)) if swap else (_dot(d, d), tuple(we), wt))
    return _best(cands)


def _vertices(P):
    """Coordinate-first vertices: (..., k, 3) -> tuple of k arrays (3, ...)."""
    V = np.ascontiguousarray(np.moveaxis(P, (-2, -1), (0, 1)))
    return tuple(V)


def _core_weights(P1, P2):
    """Weights (..., k1), (..., k2) of the closest points of cores P1 (..., k1, 3) and
    P2 (..., k2, 3) of the same batch shape, computed in blocks of `_BLOCK` pairs."""
    batch, k1, k2 = P1.shape[:-2], P1.shape[-2], P2.shape[-2]
    m = math.prod(batch)
    A = P1.reshape(m, k1, 3)
    B = P2.reshape(m, k2, 3)
    w1 = np.empty((m, k1))
    w2 = np.empty((m, k2))
    for start in range(0, m, _BLOCK):
        sl = slice(start, start + _BLOCK)
        w1[sl], w2[sl] = _core_weights_block(A[sl], B[sl])
    return w1.reshape(batch + (k1,)), w2.reshape(batch + (k2,))


def _core_weights_block(P1, P2):
    """Weights (..., k1), (..., k2) of the closest points of cores P1 (..., k1, 3), P2."""
    w1, w2 = _core_weights_soa(_vertices(P1), _vertices(P2))
    return np.stack(w1, axis=-1), np.stack(w2, axis=-1)


def _core_weights_soa(V1, V2):
    """Weights (tuples of arrays (...)) of the closest points of coordinate-first cores."""
    k1, k2 = len(V1), len(V2)
    if k1 > k2:
        w2, w1 = _core_weights_soa(V2, V1)  # Table 6.1: a reversed pair swaps the points
        return w1, w2
    one = np.ones(V1[0].shape[1:])
    if k1 == 1 and k2 == 1:
        return (one,), (one,)
    if k1 == 1 and k2 == 2:
        s = _point_segment(V1[0], V2[0], V2[1])
        return (one,), (1.0 - s, s)
    if k1 == 2 and k2 == 2:
        s, t = _segment_segment(V1[0], V1[1], V2[0], V2[1])
        return (1.0 - s, s), (1.0 - t, t)
    if k1 == 1 and k2 == 3:
        return (one,), _point_triangle(V1[0], *V2)
    if k1 == 2 and k2 == 3:
        return _segment_triangle(V1, V2)
    return _triangle_triangle(V1, V2)


def _combine(P, w):
    """``Σ w_i P_i`` for P (..., k, 3) and w (..., k)."""
    out = w[..., 0, None] * P[..., 0, :]
    for i in range(1, P.shape[-2]):
        out += w[..., i, None] * P[..., i, :]
    return out


def _norm_rows(x):
    """Euclidean norm over the last axis of length 3."""
    return np.sqrt(x[..., 0] ** 2 + x[..., 1] ** 2 + x[..., 2] ** 2)


def _unit(diff, length):
    """``diff / length`` where length > 0, zero elsewhere."""
    return _div(diff, length[..., None], (length > 0)[..., None])


# ----------------------------------------------------------------------------
# public primitive distance
# ----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class SSVDistance(ResultRepr):
    """Distance of two swept-sphere volumes (result of :func:`ssv_distance`).

    Attributes
    ----------
    distance : ndarray, shape (...)
        Signed distance ``‖c1 − c2‖ − r1 − r2``, m (negative: penetration depth).
    core_distance : ndarray, shape (...)
        Distance of the cores ``‖c1 − c2‖``, m.
    point1, point2 : ndarray, shape (..., 3)
        Witness points on the surfaces: ``c1 − r1 n`` and ``c2 + r2 n``.
    core_point1, core_point2 : ndarray, shape (..., 3)
        Closest points of the cores ``c1``, ``c2``.
    normal : ndarray, shape (..., 3)
        Unit vector ``n = (c1 − c2)/‖c1 − c2‖`` from volume 2 to volume 1;
        zero where the cores touch.
    weights1, weights2 : ndarray, shape (..., k1), (..., k2)
        Convex weights of the closest core points: ``c1 = Σ w1_i P1_i``.
    gradient1, gradient2 : ndarray, shape (..., k1, 3), (..., k2, 3)
        Properties: ``∂d/∂P1_i = w1_i n`` and ``∂d/∂P2_j = −w2_j n``
        (and ``∂d/∂r = −1``).
    """

    distance: np.ndarray
    core_distance: np.ndarray
    point1: np.ndarray
    point2: np.ndarray
    core_point1: np.ndarray
    core_point2: np.ndarray
    normal: np.ndarray
    weights1: np.ndarray
    weights2: np.ndarray

    @property
    def gradient1(self) -> np.ndarray:
        """``∂d/∂P1`` (..., k1, 3): ``w1_i n``."""
        return self.weights1[..., None] * self.normal[..., None, :]

    @property
    def gradient2(self) -> np.ndarray:
        """``∂d/∂P2`` (..., k2, 3): ``−w2_j n``."""
        return -self.weights2[..., None] * self.normal[..., None, :]


def _as_core(points, name):
    P = as_float_array(points, name)
    if P.ndim < 2 or P.shape[-1] != 3 or P.shape[-2] not in (1, 2, 3):
        raise DataError(
            f"Expected `{name}` to have shape (..., k, 3) with k = 1 (sphere), 2 (capsule) or "
            f"3 (lozenge) defining points, got {P.shape}"
        )
    return P


def _as_radius(radius, name):
    r = as_float_array(radius, name)
    if np.any(r < 0):
        raise DataError(f"Expected `{name}` to be non-negative (a radius in m), got {r.min()}")
    return r


def _ssv_block(P1, r1, P2, r2, out, sl):
    """Write the fields of :func:`ssv_distance` for the flat pairs `sl` into `out`
    (distance, core distance, point1, point2, core points, normal, weights)."""
    V1, V2 = _vertices(P1[sl]), _vertices(P2[sl])
    w1, w2 = _core_weights_soa(V1, V2)
    c1 = _comb(V1, w1)
    c2 = _comb(V2, w2)
    diff = c1 - c2
    dc = np.sqrt(_dot(diff, diff))
    n = _div(diff, dc, dc > 0)
    ra, rb = r1[sl], r2[sl]
    d, dcore, p1, p2, cp1, cp2, normal, W1, W2 = out
    d[sl] = dc - ra - rb
    dcore[sl] = dc
    p1[sl] = (c1 - ra * n).T
    p2[sl] = (c2 + rb * n).T
    cp1[sl] = c1.T
    cp2[sl] = c2.T
    normal[sl] = n.T
    for i, w in enumerate(w1):
        W1[sl, i] = w
    for i, w in enumerate(w2):
        W2[sl, i] = w


def ssv_distance(points1, radius1, points2, radius2) -> SSVDistance:
    """Signed distance, witness points and gradients of two swept-sphere volumes.

    Parameters
    ----------
    points1, points2 : array_like, shape (..., k, 3)
        Defining points of the cores, m: ``k = 1`` a sphere's centre, ``k = 2``
        a capsule's segment ends, ``k = 3`` a lozenge's triangle. The batch
        axes of the two broadcast against each other (frames, pairs, ...).
    radius1, radius2 : float or array_like, shape (...)
        Radii of the swept spheres, m (0 for the bare core).

    Returns
    -------
    SSVDistance
        Signed distance, surface and core witness points, normal, weights
        and gradients with respect to the defining points.

    Raises
    ------
    DataError
        Points not of shape (..., k, 3) with k in 1..3, NaN/inf, negative radii,
        batch shapes that do not broadcast.

    Notes
    -----
    ``d = ‖c1 − c2‖ − r1 − r2`` (Schwienbacher 2013, eq. 6.11; Felis 2015,
    eqs 4.22–4.23), the core closest points from the closed forms of
    Schwienbacher ch. 6 (see the module notes), vectorized with numpy masks.
    The gradients ``∂d/∂P1_i = w1_i n`` follow from the envelope theorem;
    they are zero where the cores touch (``n`` undefined).

    Examples
    --------
    >>> cap1 = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    >>> cap2 = [[0.5, -1.0, 1.0], [0.5, 1.0, 1.0]]
    >>> res = ssv_distance(cap1, 0.1, cap2, 0.2)
    >>> round(float(res.distance), 12), res.point1.round(3).tolist()
    (0.7, [0.5, 0.0, 0.1])
    >>> float(ssv_distance([[0, 0, 0]], 1.0, [[3, 0, 0]], 0.5).distance)
    1.5
    """
    P1 = _as_core(points1, "points1")
    P2 = _as_core(points2, "points2")
    r1 = _as_radius(radius1, "radius1")
    r2 = _as_radius(radius2, "radius2")
    try:
        batch = np.broadcast_shapes(P1.shape[:-2], P2.shape[:-2], r1.shape, r2.shape)
    except ValueError as err:
        raise DataError(
            f"batch shapes of `points1` {P1.shape[:-2]}, `points2` {P2.shape[:-2]}, `radius1` "
            f"{r1.shape} and `radius2` {r2.shape} do not broadcast"
        ) from err
    k1, k2 = P1.shape[-2], P2.shape[-2]
    m = math.prod(batch)
    P1 = np.broadcast_to(P1, batch + (k1, 3)).reshape(m, k1, 3)
    P2 = np.broadcast_to(P2, batch + (k2, 3)).reshape(m, k2, 3)
    r1 = np.broadcast_to(r1, batch).reshape(m)
    r2 = np.broadcast_to(r2, batch).reshape(m)
    tails = [(), (), (3,), (3,), (3,), (3,), (3,), (k1,), (k2,)]
    out = [np.empty((m,) + tail) for tail in tails]
    for start in range(0, m, _BLOCK):  # blocks of pairs (cache-sized), each vectorized
        _ssv_block(P1, r1, P2, r2, out, slice(start, start + _BLOCK))
    fields = [o.reshape(batch + tail) for o, tail in zip(out, tails, strict=True)]
    return SSVDistance(*fields)
