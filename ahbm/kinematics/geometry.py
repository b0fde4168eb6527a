"""Collision geometry: swept-sphere volumes, their distances, body-attached shapes.

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

Body-attached shapes
--------------------
:class:`CollisionShape` fixes a swept-sphere volume in a body frame; the
shapes of a model are kept in its model file under the top-level section
``"collision"`` (``model.collision``; see
:func:`~ahbm.kinematics.model_file.register_model_section`). For a whole
trial, :func:`distances` returns the distances of named shape pairs, their
world witness points and the Jacobians ``∂d/∂q = nᵀ (J1 − J2)`` from the point
Jacobians of the core witness points, and :func:`self_collision` lists the
pairs that collide, in which frames and how deep. :func:`foot_contact_shapes`
builds the HeiMan foot contact set (heel sphere and forefoot capsule, Felis
2015 §4.7), and :func:`ground_contact` gives the lowest points of shapes and
their penetration of the ground plane.

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

from ahbm._engine import state as _st
from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_nonnegative_float,
    check_model,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.forward import point_jacobian
from ahbm.kinematics.model_file import register_model_section
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "SSVDistance",
    "ssv_distance",
    "CollisionShape",
    "ShapeDistances",
    "SelfCollision",
    "Collision",
    "GroundContact",
    "collision_shapes",
    "distances",
    "self_collision",
    "foot_contact_shapes",
    "ground_contact",
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
    (two (3, ...) vertices) and a triangle ``T`` (three) (Schwienbacher §6.6, Table 6.7):
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


# ----------------------------------------------------------------------------
# body-attached shapes and the model-file section
# ----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class CollisionShape:
    """A swept-sphere volume fixed in a body frame.

    Parameters
    ----------
    name : str
        Unique name of the shape in its model.
    body : str
        Name of the body the shape is attached to.
    points : array_like, shape (k, 3)
        Defining points of the core in the body frame, m: 1 (sphere),
        2 (capsule) or 3 (lozenge).
    radius : float
        Radius of the swept sphere, m (>= 0).

    Examples
    --------
    >>> s = CollisionShape.capsule("thigh_r", "thigh_r", [0, 0, -0.05], [0, 0, -0.4], 0.07)
    >>> s.kind, s.points.shape
    ('capsule', (2, 3))
    >>> CollisionShape.from_dict(s.to_dict()) == s
    True
    """

    name: str
    body: str
    points: np.ndarray
    radius: float

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(
                f"collision shape: `name` must be a non-empty string, got {self.name!r}"
            )
        if not isinstance(self.body, str) or not self.body:
            raise ModelError(
                f"collision shape {self.name!r}: `body` must be a body name, got {self.body!r}"
            )
        where = f"collision shape {self.name!r}"
        try:
            P = as_float_array(self.points, f"{where}: points")
            r = as_nonnegative_float(self.radius, f"{where}: radius", unit="m")
        except DataError as err:
            raise ModelError(str(err)) from err
        if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] not in (1, 2, 3):
            raise ModelError(
                f"{where}: `points` must have shape (k, 3) with k = 1 (sphere), 2 (capsule) or "
                f"3 (lozenge), got {P.shape}"
            )
        P = P.copy()
        P.flags.writeable = False
        object.__setattr__(self, "points", P)
        object.__setattr__(self, "radius", r)

    @property
    def kind(self) -> str:
        """``"sphere"``, ``"capsule"`` or ``"lozenge"``."""
        return _KIND_OF[self.points.shape[0]]

    @classmethod
    def sphere(cls, name, body, center, radius) -> CollisionShape:
        """Sphere of `radius` (m) about `center` (3,) in the body frame."""
        return cls(name, body, [center], radius)

    @classmethod
    def capsule(cls, name, body, start, end, radius) -> CollisionShape:
        """Capsule (line swept sphere) about the segment `start`–`end` in the body frame."""
        return cls(name, body, [start, end], radius)

    @classmethod
    def lozenge(cls, name, body, a, b, c, radius) -> CollisionShape:
        """Lozenge (triangle swept sphere) about the triangle `a`, `b`, `c` in the body frame."""
        return cls(name, body, [a, b, c], radius)

    def __eq__(self, other):
        if not isinstance(other, CollisionShape):
            return NotImplemented
        return (
            self.name == other.name
            and self.body == other.body
            and self.radius == other.radius
            and np.array_equal(self.points, other.points)
        )

    def __hash__(self):
        return hash((self.name, self.body, self.radius, self.points.tobytes()))

    def __reduce__(self):  # copies are built (and checked) like the original
        return (type(self), (self.name, self.body, self.points, self.radius))

    def __repr__(self):
        return (
            f"CollisionShape({self.name!r}, body={self.body!r}, kind={self.kind!r}, "
            f"radius={self.radius:g})"
        )

    def to_dict(self) -> dict:
        """Model-file representation: ``{"name", "body", "type", "points", "radius"}``."""
        return {
            "name": self.name,
            "body": self.body,
            "type": self.kind,
            "points": self.points.tolist(),
            "radius": self.radius,
        }

    @classmethod
    def from_dict(cls, data, *, source: str = "collision shape") -> CollisionShape:
        """Build a shape from its model-file dictionary (ModelError naming `source`)."""
        if not isinstance(data, dict):
            raise ModelError(f"{source}: each collision shape must be an object")
        fields = ("name", "body", "type", "points", "radius")
        unknown = sorted(str(k) for k in set(data) - set(fields))
        if unknown:
            raise ModelError(f"{source} has unknown fields {unknown}; known fields: {list(fields)}")
        missing = [k for k in fields if k not in data]
        if missing:
            raise ModelError(f"{source}: a collision shape needs the fields {missing}")
        kind = data["type"]
        if kind not in _KINDS:
            raise ModelError(f"{source}: unknown shape type {kind!r}; use one of {list(_KINDS)}")
        try:
            shape = cls(data["name"], data["body"], data["points"], data["radius"])
        except ModelError as err:
            raise ModelError(f"{source}: {err}") from err
        if shape.kind != kind:
            raise ModelError(
                f"{source}: a {kind!r} has {_KINDS[kind]} defining points, got "
                f"{shape.points.shape[0]}"
            )
        return shape


def _check_shapes(shapes, model: Model) -> list[CollisionShape]:
    """Checker of ``model.collision = [...]``: shapes on bodies of `model`, unique names."""
    out = []
    seen = set()
    for k, s in enumerate(shapes):
        if isinstance(s, dict):
            s = CollisionShape.from_dict(s, source=f"collision[{k}]")
        if not isinstance(s, CollisionShape):
            raise ModelError(
                f"collision[{k}]: expected a CollisionShape (or its dictionary), got "
                f"{type(s).__name__}"
            )
        if s.body not in model.body_names:
            raise ModelError(
                f"collision shape {s.name!r}: unknown body {s.body!r}; the model's bodies are "
                f"{list(model.body_names)}"
            )
        if s.name in seen:
            raise ModelError(f"collision shape name {s.name!r} is used twice; names must be unique")
        seen.add(s.name)
        out.append(s)
    return out


def _read_shapes(items, model: Model, source: str) -> list[CollisionShape]:
    shapes = [CollisionShape.from_dict(d, source=f"{source}[{k}]") for k, d in enumerate(items)]
    return _check_shapes(shapes, model)


def _write_shapes(shapes) -> list[dict]:
    return [s.to_dict() for s in shapes]


register_model_section(
    "collision",
    read=_read_shapes,
    write=_write_shapes,
    check=_check_shapes,
    owner="ahbm.kinematics.geometry",
)


def collision_shapes(model: Model) -> tuple[CollisionShape, ...]:
    """The collision shapes of `model` (its ``"collision"`` section; () if none).

    Assign ``model.collision = [shape, ...]`` to change them; they are saved
    and loaded with the model file.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> m.collision = [CollisionShape.sphere("tip", m.body_names[1], [0, 0, -1], 0.1)]
    >>> [s.name for s in collision_shapes(m)]
    ['tip']
    """
    check_model(model)
    return tuple(model.section("collision"))


# ----------------------------------------------------------------------------
# distances of body-attached shapes over whole trials
# ----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class ShapeDistances(ResultRepr):
    """Distances of pairs of body-attached shapes (result of :func:`distances`).

    Attributes
    ----------
    pairs : tuple of (str, str)
        The shape pairs, in the order of the last axis of the arrays.
    distance : ndarray, shape (..., n_pairs)
        Signed distance, m (negative: penetration depth).
    point1, point2 : ndarray, shape (..., n_pairs, 3)
        World witness points on the surfaces of the first and second shapes.
    normal : ndarray, shape (..., n_pairs, 3)
        World unit vector from shape 2 to shape 1 (zero where the cores touch).
    jacobian : ndarray, shape (..., n_pairs, nv)
        ``∂d/∂q`` (per generalized velocity: ``ḋ = J q̇``; equal to the
        derivative with respect to ``q`` when ``nq == nv``).
    """

    pairs: tuple
    distance: np.ndarray
    point1: np.ndarray
    point2: np.ndarray
    normal: np.ndarray
    jacobian: np.ndarray


def _resolve_pairs(model: Model, pairs) -> tuple[list[CollisionShape], list[tuple[int, int]]]:
    shapes = collision_shapes(model)
    index = {s.name: k for k, s in enumerate(shapes)}
    if isinstance(pairs, (str, bytes, dict)) or not hasattr(pairs, "__iter__"):
        raise DataError(
            f"Expected `pairs` to be a list of (shape, shape) name pairs, got {pairs!r:.60}"
        )
    out = []
    for k, p in enumerate(pairs):
        if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != 2:
            raise DataError(f"Expected `pairs[{k}]` to be a pair of shape names, got {p!r:.60}")
        ids = []
        for name in p:
            if isinstance(name, str) and name in index:
                ids.append(index[name])
            else:
                raise DataError(
                    f"`pairs[{k}]` names {name!r}, which is not a collision shape of the model; "
                    f"its shapes are {list(index)} (assign model.collision = [...])"
                )
        out.append(tuple(ids))
    return list(shapes), out


def _world_cores(model, shapes, kin):
    """World core points of each shape: list of arrays (N, k, 3)."""
    R = kin.rotations.reshape((-1,) + kin.rotations.shape[-3:])
    p = kin.positions.reshape((-1,) + kin.positions.shape[-2:])
    out = []
    for s in shapes:
        b = model.body_index(s.body)
        out.append(np.einsum("nij,kj->nki", R[:, b], s.points) + p[:, b, None, :])
    return out


def _pair_geometry(model, shapes, pairs, kin):
    """Weights and world core points of every pair, grouped by kind (vectorized per group)."""
    cores = _world_cores(model, shapes, kin)
    N = cores[0].shape[0] if cores else 1
    n_pairs = len(pairs)
    c1 = np.zeros((N, n_pairs, 3))
    c2 = np.zeros((N, n_pairs, 3))
    w1s: list = [None] * n_pairs
    w2s: list = [None] * n_pairs
    groups: dict = {}
    for k, (i, j) in enumerate(pairs):
        groups.setdefault((shapes[i].points.shape[0], shapes[j].points.shape[0]), []).append(k)
    for members in groups.values():
        P1 = np.stack([cores[pairs[k][0]] for k in members], axis=1)  # (N, g, k1, 3)
        P2 = np.stack([cores[pairs[k][1]] for k in members], axis=1)
        w1, w2 = _core_weights(P1, P2)
        c1[:, members] = _combine(P1, w1)
        c2[:, members] = _combine(P2, w2)
        for g, k in enumerate(members):
            w1s[k] = w1[:, g]
            w2s[k] = w2[:, g]
    return c1, c2, w1s, w2s


def _as_state(model, q, kin):
    """The kinematic state (with the DOF columns) of `q` or the checked `kin`."""
    return _st.resolve(model, kin, q, columns=True)


def distances(model: Model, q, pairs, *, kin=None) -> ShapeDistances:
    """Signed distances of pairs of body-attached shapes over a whole trial, with ``∂d/∂q``.

    Parameters
    ----------
    model : Model
        With collision shapes (``model.collision``).
    q : array_like, shape (..., nq), or None with ``kin``
        Generalized coordinates (one posture or a whole trial).
    pairs : sequence of (str, str)
        Names of the shapes whose distances are wanted.
    kin : Kinematics, optional
        ``forward_kinematics(model, q)`` computed already.

    Returns
    -------
    ShapeDistances
        ``distance`` (..., n_pairs), world witness points, normals and the
        Jacobians (..., n_pairs, nv).

    Raises
    ------
    DataError
        Unknown shape names, malformed pairs, bad ``q``.

    Notes
    -----
    The core witness points are body-fixed points ``c1 = Σ w1_i P1_i`` of the
    first body and ``c2`` of the second. Since ``d = ‖c1 − c2‖ − r1 − r2`` and
    the weights are stationary (envelope theorem),
    ``∂d/∂q = nᵀ (J1(c1) − J2(c2))`` with the point Jacobians of
    :func:`~ahbm.kinematics.forward.point_jacobian` (Schwienbacher 2013,
    eqs 5.6–5.8). Where the cores touch, ``n`` and the row are zero.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> b0, b1 = m.body_names
    >>> m.collision = [CollisionShape.sphere("ball", b1, [0, 0, -1], 0.1),
    ...                CollisionShape.capsule("pole", b0, [0, 0, 0], [0, 0, -1], 0.05)]
    >>> res = distances(m, np.zeros((4, m.nq)), [("ball", "pole")])
    >>> res.distance.shape, res.jacobian.shape
    ((4, 1), (4, 1, 4))
    """
    kin = _as_state(model, q, kin)
    shapes, ids = _resolve_pairs(model, pairs)
    batch = kin.batch_shape
    n_pairs = len(ids)
    nv = model.nv
    if n_pairs == 0:
        points = np.zeros(batch + (0, 3))
        return ShapeDistances(
            (), np.zeros(batch + (0,)), points, points.copy(), points.copy(),
            np.zeros(batch + (0, nv)),
        )  # fmt: skip
    c1, c2, w1s, w2s = _pair_geometry(model, shapes, ids, kin)
    diff = c1 - c2
    dc = _norm_rows(diff)
    n = _unit(diff, dc)
    r1 = np.array([shapes[i].radius for i, _ in ids])
    r2 = np.array([shapes[j].radius for _, j in ids])
    d = dc - r1 - r2
    N = c1.shape[0]
    jac = np.zeros((N, n_pairs, nv))
    for k, (i, j) in enumerate(ids):
        s1, s2 = shapes[i], shapes[j]
        l1 = w1s[k] @ s1.points  # core witness points in the body frames, (N, 3)
        l2 = w2s[k] @ s2.points
        J1 = point_jacobian(model, None, s1.body, l1.reshape(batch + (3,)), kin=kin)
        J2 = point_jacobian(model, None, s2.body, l2.reshape(batch + (3,)), kin=kin)
        J = (J1 - J2).reshape(N, 3, nv)
        nk = n[:, k]
        jac[:, k] = nk[:, :1] * J[:, 0] + nk[:, 1:2] * J[:, 1] + nk[:, 2:] * J[:, 2]
    p1 = c1 - r1[:, None] * n
    p2 = c2 + r2[:, None] * n
    names = tuple((shapes[i].name, shapes[j].name) for i, j in ids)

    def shaped(x, tail):
        return x.reshape(batch + tail)

    return ShapeDistances(
        pairs=names,
        distance=shaped(d, (n_pairs,)),
        point1=shaped(p1, (n_pairs, 3)),
        point2=shaped(p2, (n_pairs, 3)),
        normal=shaped(n, (n_pairs, 3)),
        jacobian=shaped(jac, (n_pairs, nv)),
    )


# ----------------------------------------------------------------------------
# self-collision check
# ----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Collision(ResultRepr):
    """One colliding pair of a :class:`SelfCollision` report.

    Attributes
    ----------
    pair : (str, str)
        Shape names.
    frames : ndarray of int, shape (n,)
        Flat frame indices (row-major over the batch axes) where the pair collides.
    depth : float
        Largest penetration ``margin − d`` over those frames, m (> 0).
    worst_frame : int
        Flat frame index of the largest penetration.
    """

    pair: tuple
    frames: np.ndarray
    depth: float
    worst_frame: int


@dataclass(frozen=True, repr=False)
class SelfCollision(ResultRepr):
    """Result of :func:`self_collision`.

    Attributes
    ----------
    pairs : tuple of (str, str)
        Every pair checked (shapes on different, non-excluded bodies).
    distance : ndarray, shape (..., n_pairs)
        Signed distances, m.
    colliding : ndarray of bool, shape (..., n_pairs)
        ``distance < margin``.
    collisions : tuple of Collision
        One record per pair that collides in at least one frame, deepest first.
    margin : float
        The safety margin used, m.
    """

    pairs: tuple
    distance: np.ndarray
    colliding: np.ndarray
    collisions: tuple
    margin: float

    @property
    def any(self) -> bool:
        """True if some pair collides in some frame."""
        return bool(self.collisions)


def _candidate_pairs(model, shapes, exclude_adjacent):
    parent = model.parent
    body = [model.body_index(s.body) for s in shapes]
    out = []
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            bi, bj = body[i], body[j]
            if bi == bj:
                continue
            if exclude_adjacent and (parent[bi] == bj or parent[bj] == bi):
                continue
            out.append((i, j))
    return out


def self_collision(model: Model, q, *, margin=0.0, exclude_adjacent=True, kin=None):
    """Which shape pairs of a posture or a whole trial collide, when, and how deep.

    Parameters
    ----------
    model : Model
        With collision shapes (``model.collision``).
    q : array_like, shape (..., nq), or None with ``kin``
        One posture or a whole trial.
    margin : float, optional
        Safety distance, m (>= 0): a pair collides where ``d < margin``.
    exclude_adjacent : bool, optional
        Skip pairs on a parent and its child body (whose shapes usually
        overlap at the joint). Shapes on the same body are never checked.
    kin : Kinematics, optional
        ``forward_kinematics(model, q)`` computed already.

    Returns
    -------
    SelfCollision
        Distances and the ``colliding`` mask for every checked pair, and one
        :class:`Collision` record per colliding pair (frames, depth
        ``margin − min d``, worst frame).

    Notes
    -----
    All pairs of shapes on different bodies are checked (Schwienbacher 2013
    lists collision pairs by hand, §5.2; here ``exclude_adjacent`` removes the
    joint neighbours), with the closed-form SSV distances of
    :func:`ssv_distance` vectorized over frames and pairs.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> b0, b1 = m.body_names
    >>> m.collision = [CollisionShape.sphere("a", b0, [0, 0, 0], 0.1),
    ...                CollisionShape.sphere("b", b1, [0, 0, -1], 0.1)]
    >>> rep = self_collision(m, np.zeros(m.nq), exclude_adjacent=False)
    >>> rep.pairs, rep.any
    ((('a', 'b'),), False)
    """
    margin = as_nonnegative_float(margin, "margin", unit="m")
    if not isinstance(exclude_adjacent, (bool, np.bool_)):
        raise DataError(
            f"Expected `exclude_adjacent` to be True or False, got {exclude_adjacent!r}"
        )
    kin = _as_state(model, q, kin)
    shapes = list(collision_shapes(model))
    if not shapes:
        raise ModelError(
            f"model {model.name!r} has no collision shapes; assign model.collision = "
            "[CollisionShape.capsule(...), ...] first"
        )
    ids = _candidate_pairs(model, shapes, bool(exclude_adjacent))
    batch = kin.batch_shape
    names = tuple((shapes[i].name, shapes[j].name) for i, j in ids)
    if not ids:
        d = np.zeros(batch + (0,))
        return SelfCollision(names, d, d < 0, (), margin)
    c1, c2, _, _ = _pair_geometry(model, shapes, ids, kin)
    diff = c1 - c2
    r = np.array([shapes[i].radius + shapes[j].radius for i, j in ids])
    d = _norm_rows(diff) - r  # (N, n_pairs)
    hit = d < margin
    records = []
    for k in np.flatnonzero(hit.any(axis=0)):
        frames = np.flatnonzero(hit[:, k])
        worst = int(frames[np.argmin(d[frames, k])])
        records.append(Collision(names[k], frames, float(margin - d[worst, k]), worst))
    records.sort(key=lambda c: -c.depth)
    return SelfCollision(
        names, d.reshape(batch + (len(ids),)), hit.reshape(batch + (len(ids),)),
        tuple(records), margin,
    )  # fmt: skip


# ----------------------------------------------------------------------------
# foot contact sets and the ground
# ----------------------------------------------------------------------------


def foot_contact_shapes(
    body: str,
    *,
    length,
    height,
    posterior,
    width=None,
    prefix: str | None = None,
) -> list[CollisionShape]:
    """HeiMan-style foot contact set: a heel sphere and a forefoot capsule.

    The foot frame has its origin at the ankle, x forward along the foot,
    y to the left, z up (the frames of :func:`ahbm.models.heiman_model` and
    :func:`ahbm.models.human15`); the sole is at ``z = −height``.

    Parameters
    ----------
    body : str
        Name of the foot body.
    length : float
        Foot length from the heel to the toe tip, m.
    height : float
        Height of the ankle above the sole, m.
    posterior : float
        Distance of the heel behind the ankle, m.
    width : float, optional
        Width of the forefoot (hallux to fifth metatarsal head), m; default
        ``0.38 length`` (an adult's ball width over foot length).
    prefix : str, optional
        Prefix of the shape names (default `body`): ``<prefix>_heel`` and
        ``<prefix>_forefoot``.

    Returns
    -------
    list of CollisionShape
        ``[heel sphere, forefoot capsule]``.

    Notes
    -----
    Felis (2015, §4.7) models the heel as a sphere rolling on the ground with
    its centre at the posterior point and the forefoot as the line from the
    hallux to the fifth metatarsal head. Here the heel sphere has the radius
    ``height / 2`` and touches the sole plane under the heel
    (centre ``(−posterior + height/2, 0, −height/2)``, so that its back lies on
    the heel); the forefoot capsule has a radius ``height / 4``, lies on the
    sole plane at ``0.75 length`` from the heel (the metatarsal heads), and
    spans ``width`` across the foot. The exact 3-D placement of Felis' Fig. 4.9
    is not given in the text; these proportions are this toolbox's choice.

    Examples
    --------
    >>> heel, fore = foot_contact_shapes("foot_r", length=0.26, height=0.084, posterior=0.072)
    >>> heel.kind, fore.kind, round(heel.radius, 3)
    ('sphere', 'capsule', 0.042)
    """
    if not isinstance(body, str) or not body:
        raise DataError(f"Expected `body` to be a body name, got {body!r}")
    length = as_finite_float(length, "length", unit="m")
    height = as_finite_float(height, "height", unit="m")
    posterior = as_finite_float(posterior, "posterior", unit="m")
    for name, value in (("length", length), ("height", height)):
        if value <= 0:
            raise DataError(f"Expected `{name}` to be > 0 m, got {value}")
    if posterior < 0 or posterior >= length:
        raise DataError(
            f"Expected `posterior` (heel behind the ankle) in [0, length={length}) m, "
            f"got {posterior}"
        )
    width = 0.38 * length if width is None else as_finite_float(width, "width", unit="m")
    if width < 0:
        raise DataError(f"Expected `width` to be >= 0 m, got {width}")
    prefix = body if prefix is None else str(prefix)
    r_heel = 0.5 * height
    r_fore = 0.25 * height
    heel = CollisionShape.sphere(
        f"{prefix}_heel", body, [-posterior + r_heel, 0.0, -height + r_heel], r_heel
    )
    x = -posterior + 0.75 * length
    z = -height + r_fore
    fore = CollisionShape.capsule(
        f"{prefix}_forefoot", body, [x, 0.5 * width, z], [x, -0.5 * width, z], r_fore
    )
    return [heel, fore]


@dataclass(frozen=True, repr=False)
class GroundContact(ResultRepr):
    """Lowest points of shapes relative to the ground (result of :func:`ground_contact`).

    Attributes
    ----------
    shapes : tuple of str
        Shape names, in the order of the arrays' shape axis.
    height : ndarray, shape (..., n_shapes)
        Signed height of the lowest surface point above the ground plane, m
        (negative: penetration depth).
    point : ndarray, shape (..., n_shapes, 3)
        World position of the lowest surface point.
    jacobian : ndarray, shape (..., n_shapes, nv)
        ``∂height/∂q`` = ``nᵀ J(c)``, ``c`` the lowest core point.
    """

    shapes: tuple
    height: np.ndarray
    point: np.ndarray
    jacobian: np.ndarray

    @property
    def penetration(self) -> np.ndarray:
        """Depth below the ground, ``max(0, −height)``, m."""
        return np.maximum(0.0, -self.height)


def ground_contact(
    model: Model, q, shapes=None, *, ground_normal=(0.0, 0.0, 1.0), ground_point=(0.0, 0.0, 0.0),
    kin=None,
) -> GroundContact:  # fmt: skip
    """Lowest points of body-attached shapes and their height above the ground plane.

    Parameters
    ----------
    model : Model
        With collision shapes.
    q : array_like, shape (..., nq), or None with ``kin``
    shapes : sequence of str, optional
        Shape names (default: every shape of the model).
    ground_normal : array_like, shape (3,)
        Normal of the ground plane pointing up, out of the ground (normalized here).
    ground_point : array_like, shape (3,)
        A point of the ground plane, m.
    kin : Kinematics, optional

    Returns
    -------
    GroundContact
        Heights (..., n_shapes), lowest surface points and ``∂height/∂q``.

    Notes
    -----
    The lowest point of a swept-sphere volume along ``−n`` is the lowest
    vertex ``c`` of its core (a linear function is smallest at a vertex of
    the segment or triangle; vertices at the same height share the weight)
    moved by ``r`` along ``−n``: height ``= nᵀ(c − g) − r`` (the contact
    point of Felis 2015 §4.7's heel sphere is its bottom point).

    Examples
    --------
    >>> from ahbm.kinematics import neutral_q
    >>> from ahbm.models import heiman_model
    >>> m = heiman_model(height=1.8, mass=75)
    >>> m.collision = foot_contact_shapes("foot_r", length=0.26, height=0.084, posterior=0.072)
    >>> gc = ground_contact(m, neutral_q(m))
    >>> gc.shapes, gc.height.shape
    (('foot_r_heel', 'foot_r_forefoot'), (2,))
    """
    kin = _as_state(model, q, kin)
    all_shapes = collision_shapes(model)
    index = {s.name: s for s in all_shapes}
    if shapes is None:
        chosen = list(all_shapes)
    else:
        if isinstance(shapes, str) or not hasattr(shapes, "__iter__"):
            raise DataError(f"Expected `shapes` to be a list of shape names, got {shapes!r:.60}")
        chosen = []
        for name in shapes:
            if not isinstance(name, str) or name not in index:
                raise DataError(
                    f"`shapes` names {name!r}, which is not a collision shape of the model; its "
                    f"shapes are {list(index)}"
                )
            chosen.append(index[name])
    n = as_float_array(ground_normal, "ground_normal")
    g = as_float_array(ground_point, "ground_point")
    if n.shape != (3,) or not np.linalg.norm(n) > 0:
        raise DataError(f"Expected `ground_normal` to be a non-zero vector of shape (3,), got {n}")
    if g.shape != (3,):
        raise DataError(f"Expected `ground_point` to have shape (3,), got {g.shape}")
    n = n / np.linalg.norm(n)
    batch = kin.batch_shape
    cores = _world_cores(model, chosen, kin)
    N = int(np.prod(batch, dtype=int))
    m = len(chosen)
    height = np.zeros((N, m))
    point = np.zeros((N, m, 3))
    jac = np.zeros((N, m, model.nv))
    for k, (s, P) in enumerate(zip(chosen, cores, strict=True)):
        h = (P - g) @ n  # (N, kk)
        hmin = h.min(axis=-1, keepdims=True)
        tol = 1e-12 * (1.0 + np.abs(hmin))
        w = (h <= hmin + tol).astype(float)
        w /= w.sum(axis=-1, keepdims=True)
        c = _combine(P, w)
        height[:, k] = hmin[:, 0] - s.radius
        point[:, k] = c - s.radius * n
        local = w @ s.points
        J = point_jacobian(model, None, s.body, local.reshape(batch + (3,)), kin=kin)
        jac[:, k] = n @ J.reshape(N, 3, model.nv)
    return GroundContact(
        shapes=tuple(s.name for s in chosen),
        height=height.reshape(batch + (m,)),
        point=point.reshape(batch + (m, 3)),
        jacobian=jac.reshape(batch + (m, model.nv)),
    )
