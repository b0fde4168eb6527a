"""Collision avoidance in optimal control: swept-sphere distances as path constraints.

:class:`NoCollision` keeps pairs of a model's swept-sphere volumes
(:class:`~ahbm.kinematics.geometry.CollisionShape`, ``model.collision``) at
least a margin apart at every node of a phase::

    d_k(q) = ‖c1(q) − c2(q)‖ − r1 − r2 ≥ margin,

the constraint of Felis (2015, §4.6, eq 4.23) on HeiMan's capsules, for all
shape kinds (sphere, capsule, lozenge) of :mod:`ahbm.kinematics.ssv`.

Exact value and derivatives as CasADi expressions
-------------------------------------------------
The distance of two cores is the minimum of a fixed list of smooth
candidates, each an exact closed form on its region, and the value is their
``fmin`` (selected branches ``if_else``):

* point–segment: ``‖p − a − s e‖²`` with ``s = clamp(wᵀe / eᵀe)``
  (Schwienbacher eq 6.17);
* segment–segment: the interior stationary point (valid where it lies in
  [0, 1]² and the segments are not parallel, ``N/(u²v²) > 10⁻¹⁰``,
  Schwienbacher eq 6.34) and the four endpoint–segment distances (the
  minimum of a convex quadratic over the unit square lies inside or on an
  edge);
* point–triangle: the projection onto the plane where it falls inside the
  triangle (eq 6.21), and the three edges;
* segment–triangle: the crossing of the plane inside the triangle, the three
  edge–segment and two endpoint–triangle distances (Table 6.7);
* triangle–triangle: the six edge–triangle distances.

The closest-point parameters are stationary where they are interior and
constant where they are clamped, so algorithmic differentiation of these
expressions gives the envelope-theorem gradient ``∂d/∂P1_i = w1_i n`` of
:func:`~ahbm.kinematics.ssv.ssv_distance` (Schwienbacher eqs 5.6–5.8), and
the exact Hessian of the active piece. The world core points come from the
symbolic forward kinematics of :func:`~ahbm.optimize.symbolic.symbolic_dynamics`,
so the whole constraint is one ``SX`` graph that IPOPT differentiates
exactly. (A ``casadi.Callback`` around the numeric distances of
:mod:`ahbm.kinematics.geometry` cannot be called on the ``SX`` symbols the
transcriptions build their path functions from, and gives no Hessian; see
docs/optimize.md for the measurements.)

Pairs and the broad phase
-------------------------
:func:`collision_pairs` lists the candidate pairs: shapes on different
bodies, not parent and child (their shapes meet at the joint), whose
distance can change (some coordinate moves one body and not the other); given
sample configurations (a guess, the bounds' corners) it keeps the pairs whose
bounding spheres come within a distance in some sample, the broad phase of
Schwienbacher (§6.4.7 uses enlarged bounding boxes; spheres bound a
swept-sphere volume as tightly for the slender shapes of a human model).

References
----------
Felis, M. (2015). *Modeling Emotional Aspects in Human Locomotion*. Heidelberg
University, §4.6 (segment distances as optimal-control constraints).
Schwienbacher, M. (2013). *Efficient Algorithms for Biped Robots*. TU München,
ch. 5 (self-collision avoidance) and ch. 6 (SSV distances).
"""

from __future__ import annotations

import time

import numpy as np

from ahbm._internal.validation import as_float_array, as_nonnegative_float
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.geometry import collision_shapes
from ahbm.kinematics.tree import Model
from ahbm.optimize.constraints import PathConstraint
from ahbm.optimize.symbolic import require_casadi, symbolic_dynamics

__all__ = [
    "NoCollision",
    "collision_pairs",
    "core_distance_squared",
    "distance_function",
]

#: Value standing for "no candidate here" in the minimum (m², larger than any distance²).
_BIG = 1e20
#: Parallel test of two segments, ``N/(u² v²) = sin²θ`` (Schwienbacher eq 6.34), as in ssv.py.
_PARALLEL = 1e-10
#: Degenerate triangle test ``|e0 × e1|² / (|e0|² |e1|²)``, as in ssv.py.
_FLAT = 1e-14


# ----------------------------------------------------------------------------
# symbolic closed forms (squared core distances)
# ----------------------------------------------------------------------------


def _dot(ca, a, b):
    return ca.dot(a, b)


def _clamp(ca, x):
    return ca.fmin(ca.fmax(x, 0.0), 1.0)


def _safe(ca, den, ok):
    """`den` where `ok`, 1 elsewhere (no division by zero in unselected branches)."""
    return ca.if_else(ok, den, 1.0)


def _min(ca, items):
    out = items[0]
    for x in items[1:]:
        out = ca.fmin(out, x)
    return out


def _point_segment(ca, p, a, b):
    e = b - a
    ee = _dot(ca, e, e)
    s = _clamp(ca, _dot(ca, p - a, e) / _safe(ca, ee, ee > 0))
    d = p - a - s * e
    return _dot(ca, d, d)


def _segment_segment(ca, a0, a1, b0, b1):
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    A, B, E = _dot(ca, u, u), _dot(ca, u, v), _dot(ca, v, v)
    C, F = _dot(ca, u, w), _dot(ca, v, w)
    N = A * E - B * B
    general = N > _PARALLEL * A * E
    Ns = _safe(ca, N, general)
    s = (B * F - C * E) / Ns
    t = (A * F - B * C) / Ns
    inside = general * (s >= 0) * (s <= 1) * (t >= 0) * (t <= 1)
    d = w + s * u - t * v
    interior = ca.if_else(inside, _dot(ca, d, d), _BIG)
    return _min(ca, [interior, _point_segment(ca, a0, b0, b1), _point_segment(ca, a1, b0, b1),
                     _point_segment(ca, b0, a0, a1), _point_segment(ca, b1, a0, a1)])  # fmt: skip


def _plane(ca, a, b, c, p):
    """Squared distance of `p` to its projection on the plane of abc, and 'inside' flag."""
    e0, e1, r = b - a, c - a, p - a
    d00, d01, d11 = _dot(ca, e0, e0), _dot(ca, e0, e1), _dot(ca, e1, e1)
    d20, d21 = _dot(ca, r, e0), _dot(ca, r, e1)
    den = d00 * d11 - d01 * d01
    ok = den > _FLAT * d00 * d11
    dens = _safe(ca, den, ok)
    u = (d11 * d20 - d01 * d21) / dens
    v = (d00 * d21 - d01 * d20) / dens
    inside = ok * (u >= 0) * (v >= 0) * (u + v <= 1)
    g = r - u * e0 - v * e1
    return _dot(ca, g, g), inside


def _point_triangle(ca, p, a, b, c):
    d2, inside = _plane(ca, a, b, c, p)
    return _min(ca, [ca.if_else(inside, d2, _BIG), _point_segment(ca, p, a, b),
                     _point_segment(ca, p, b, c), _point_segment(ca, p, c, a)])  # fmt: skip


def _segment_triangle(ca, p0, p1, a, b, c):
    e = p1 - p0
    n = ca.cross(b - a, c - a)
    den = _dot(ca, n, e)
    ok = den != 0
    t0 = _dot(ca, n, a - p0) / _safe(ca, den, ok)
    x = p0 + t0 * e
    d2x, inside = _plane(ca, a, b, c, x)
    crossing = ca.if_else(ok * (t0 >= 0) * (t0 <= 1) * inside, d2x, _BIG)
    cands = [crossing]
    T = (a, b, c)
    for i in range(3):
        cands.append(_segment_segment(ca, p0, p1, T[i], T[(i + 1) % 3]))
    cands += [_point_triangle(ca, p0, a, b, c), _point_triangle(ca, p1, a, b, c)]
    return _min(ca, cands)


def _triangle_triangle(ca, T1, T2):
    cands = []
    for first, other in ((T1, T2), (T2, T1)):
        for i in range(3):
            cands.append(_segment_triangle(ca, first[i], first[(i + 1) % 3], *other))
    return _min(ca, cands)


def core_distance_squared(points1, points2):
    """Squared distance of two swept-sphere cores as a CasADi expression.

    Parameters
    ----------
    points1, points2 : sequence of CasADi 3-vectors (or array_like (k, 3))
        Defining points of the cores: 1 (point), 2 (segment) or 3 (triangle).

    Returns
    -------
    casadi.SX or casadi.MX
        ``‖c1 − c2‖²`` of the closest core points: the exact value, and
        algorithmic derivatives equal to the envelope-theorem gradients of
        :func:`ahbm.kinematics.ssv.ssv_distance` (module notes).

    Raises
    ------
    DataError
        A core with no points or more than three.

    Examples
    --------
    >>> ca = require_casadi()
    >>> d2 = core_distance_squared([[0, 0, 0], [1, 0, 0]], [[0.5, -1, 1], [0.5, 1, 1]])
    >>> float(ca.DM(d2))
    1.0
    """
    ca = require_casadi()
    P1 = [_vec(ca, p) for p in points1]
    P2 = [_vec(ca, p) for p in points2]
    k1, k2 = len(P1), len(P2)
    if k1 not in (1, 2, 3) or k2 not in (1, 2, 3):
        raise DataError(f"cores need 1, 2 or 3 points, got {k1} and {k2}")
    if k1 > k2:
        P1, P2, k1, k2 = P2, P1, k2, k1  # the distance is symmetric (Table 6.1)
    if k1 == 1 and k2 == 1:
        d = P1[0] - P2[0]
        return _dot(ca, d, d)
    if k1 == 1 and k2 == 2:
        return _point_segment(ca, P1[0], *P2)
    if k1 == 2 and k2 == 2:
        return _segment_segment(ca, *P1, *P2)
    if k1 == 1:
        return _point_triangle(ca, P1[0], *P2)
    if k1 == 2:
        return _segment_triangle(ca, *P1, *P2)
    return _triangle_triangle(ca, P1, P2)


def _vec(ca, p):
    if isinstance(p, (ca.SX, ca.MX, ca.DM)):
        return p if p.shape == (3, 1) else ca.reshape(p, 3, 1)
    a = np.asarray(p, dtype=float)
    if a.shape != (3,):
        raise DataError(f"Expected a core point of 3 coordinates, got shape {a.shape}")
    return ca.DM(a)


# ----------------------------------------------------------------------------
# pairs of a model and the distance function q -> d
# ----------------------------------------------------------------------------


def _effective_points(shape):
    """Defining points with degenerate cores reduced (a zero-length capsule is a sphere)."""
    P = np.asarray(shape.points, dtype=float)
    if P.shape[0] == 2 and np.sum((P[1] - P[0]) ** 2) <= 1e-24:
        return P[:1]
    if P.shape[0] == 3:
        e0, e1 = P[1] - P[0], P[2] - P[0]
        if np.sum(np.cross(e0, e1) ** 2) <= _FLAT * np.sum(e0**2) * np.sum(e1**2):
            raise ModelError(
                f"collision shape {shape.name!r} is a lozenge with a degenerate (flat) triangle; "
                "make it a capsule"
            )
    return P


def _shape_index(model):
    shapes = collision_shapes(model)
    if not shapes:
        raise ModelError(
            f"model {model.name!r} has no collision shapes; assign model.collision = "
            "[CollisionShape.capsule(...), ...] first"
        )
    return shapes, {s.name: k for k, s in enumerate(shapes)}


def _check_pairs(model, pairs):
    shapes, index = _shape_index(model)
    if isinstance(pairs, (str, bytes, dict)) or not hasattr(pairs, "__iter__"):
        raise DataError(f"Expected `pairs` to be a list of (shape, shape) names, got {pairs!r:.60}")
    out = []
    for k, p in enumerate(pairs):
        if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != 2:
            raise DataError(f"Expected `pairs[{k}]` to be a pair of shape names, got {p!r:.60}")
        for name in p:
            if not (isinstance(name, str) and name in index):
                raise DataError(
                    f"`pairs[{k}]` names {name!r}, which is not a collision shape of model "
                    f"{model.name!r}; its shapes are {list(index)}"
                )
        if shapes[index[p[0]]].body == shapes[index[p[1]]].body:
            raise DataError(f"`pairs[{k}]` {tuple(p)}: both shapes are on the same body")
        out.append((str(p[0]), str(p[1])))
    return out


def collision_pairs(model: Model, q=None, *, within=0.1, exclude_adjacent=True) -> list:
    """Candidate shape pairs for collision avoidance, with a bounding-sphere broad phase.

    Parameters
    ----------
    model : Model
        With collision shapes (``model.collision``).
    q : array_like, shape (..., nq), optional
        Sample configurations the motion is expected to pass near (an initial
        guess, the corners of the bounds); without it every pair that passes
        the structural tests is returned.
    within : float, optional
        Keep a pair when the distance of its shapes' bounding spheres is
        below this in some sample, m (>= 0; it bounds the distance from
        below, so a pair that is dropped is at least this far apart in every
        sample).
    exclude_adjacent : bool, optional
        Drop pairs on a parent and its child body.

    Returns
    -------
    list of (str, str)
        Shape-name pairs on different bodies whose distance can change (a
        coordinate moves one body and not the other), in the order of
        ``model.collision``.

    Examples
    --------
    >>> from ahbm.kinematics.geometry import CollisionShape
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> b0, b1 = m.body_names
    >>> m.collision = [CollisionShape.sphere("a", b0, [0, 0, 0], 0.1),
    ...                CollisionShape.sphere("b", b1, [0, 0, -1], 0.1)]
    >>> collision_pairs(m, exclude_adjacent=False)
    [('a', 'b')]
    """
    shapes, _ = _shape_index(model)
    within = as_nonnegative_float(within, "within", unit="m")
    if not isinstance(exclude_adjacent, (bool, np.bool_)):
        raise DataError(
            f"Expected `exclude_adjacent` to be True or False, got {exclude_adjacent!r}"
        )
    parent = model.parent
    body = [model.body_index(s.body) for s in shapes]
    support = [set(np.atleast_1d(model.support_dofs[b]).tolist()) for b in body]
    ids = []
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            bi, bj = body[i], body[j]
            if bi == bj or support[i] == support[j]:
                continue  # same body, or no coordinate moves one body relative to the other
            if exclude_adjacent and (parent[bi] == bj or parent[bj] == bi):
                continue
            ids.append((i, j))
    if q is not None and ids:
        Q = as_float_array(q, "q")
        if Q.shape[-1] != model.nq:
            raise DataError(f"Expected `q` to have shape (..., {model.nq}), got {Q.shape}")
        kin = forward_kinematics(model, Q.reshape(-1, model.nq))
        centre, rad = [], []
        for s in shapes:
            P = np.asarray(s.points, float)
            c = P.mean(axis=0)
            centre.append(c)
            rad.append(np.sqrt(((P - c) ** 2).sum(axis=1)).max() + s.radius)
        keep = []
        for i, j in ids:
            ci = np.einsum("nab,b->na", kin.rotations[:, body[i]], centre[i])
            cj = np.einsum("nab,b->na", kin.rotations[:, body[j]], centre[j])
            gap = np.linalg.norm(ci + kin.positions[:, body[i]] - cj - kin.positions[:, body[j]],
                                 axis=-1) - rad[i] - rad[j]  # fmt: skip
            if gap.min() < within:
                keep.append((i, j))
        ids = keep
    return [(shapes[i].name, shapes[j].name) for i, j in ids]


def distance_function(model: Model, pairs, *, symbol: str = "SX"):
    """CasADi function ``q -> d`` of the signed distances of shape pairs.

    Parameters
    ----------
    model : Model
        With collision shapes (``model.collision``).
    pairs : sequence of (str, str)
        Shape names.
    symbol : {"SX", "MX"}, optional
        Symbol class of the forward kinematics.

    Returns
    -------
    casadi.Function
        ``q (nq,) -> d (n_pairs,)``, m: ``‖c1 − c2‖ − r1 − r2`` with the
        closed forms of :func:`core_distance_squared` on the world core
        points. Equal to :func:`ahbm.kinematics.distances` to round-off; its
        CasADi Jacobian equals their ``jacobian`` (for ``nq == nv`` models).
        Where the cores touch (``‖c1 − c2‖ < 10⁻¹² m``) the value is
        ``−r1 − r2`` (to 10⁻¹² m) and the derivative zero: the distance has no
        gradient there (Felis 2015, §4.6).

    Examples
    --------
    >>> from ahbm.kinematics.geometry import CollisionShape
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> b0, b1 = m.body_names
    >>> m.collision = [CollisionShape.sphere("ball", b1, [0, 0, -1], 0.1),
    ...                CollisionShape.capsule("pole", b0, [0, 0, 0], [0, 0, -1], 0.05)]
    >>> f = distance_function(m, [("ball", "pole")])
    >>> round(float(f(np.zeros(m.nq))), 12)  # the ball 1 m below the pole's end
    0.85
    """
    ca = require_casadi()
    pairs = _check_pairs(model, pairs)
    key = ("ahbm.optimize.collision.distance_function", symbol, tuple(pairs))
    hit = model.cache.get(key)
    if hit is not None:
        return hit
    shapes, index = _shape_index(model)
    sd = symbolic_dynamics(model, symbol=symbol)
    kin = sd._kin
    world = {}

    def cores(name):
        if name not in world:
            s = shapes[index[name]]
            b = model.body_index(s.body)
            R, p = kin.rotations[b], kin.positions[b]
            world[name] = [p + ca.mtimes(R, ca.DM(P)) for P in _effective_points(s)]
        return world[name]

    out = []
    for a, b in pairs:
        d2 = core_distance_squared(cores(a), cores(b))
        r = shapes[index[a]].radius + shapes[index[b]].radius
        out.append(ca.sqrt(ca.fmax(d2, 1e-24)) - r)
    d = ca.vertcat(*out) if out else sd._q[:0]
    if hasattr(ca, "cse") and symbol == "SX":  # shared subexpressions once (about -35 %)
        d = ca.cse(d)
    fun = ca.Function("collision_distances", [sd._q], [d], ["q"], ["d"])
    model.cache[key] = fun
    return fun


# ----------------------------------------------------------------------------
# the path constraint
# ----------------------------------------------------------------------------


class _DistanceAtNode:
    """``fun(x, u, p, t) -> d(q)`` of a :class:`NoCollision` (q the first nq states)."""

    def __init__(self, fun, nq):
        self.fun = fun
        self.nq = nq

    def __call__(self, x, u=None, p=None, t=None):
        return self.fun(x[: self.nq])


class NoCollision(PathConstraint):
    """Swept-sphere volumes kept apart: ``d_k(q) ≥ margin`` for shape pairs at every node.

    A :class:`~ahbm.optimize.constraints.PathConstraint` (put it in a
    phase's ``constraints``) whose rows are the signed distances of the pairs
    (row ``i`` is ``pairs[i]``), as exact CasADi expressions
    (:func:`distance_function`; Felis 2015, eq 4.23).

    Parameters
    ----------
    model : Model
        The phase's model, with collision shapes (``model.collision``).
    pairs : sequence of (str, str) or "all", optional
        Shape pairs; ``"all"`` takes :func:`collision_pairs` (non-adjacent
        bodies that move relative to each other, with its broad phase when
        `q` is given).
    margin : float, optional
        Least distance kept between the surfaces, m (>= 0).
    q : array_like, shape (..., nq), optional
        Sample configurations for the broad phase of ``pairs="all"``.
    within : float, optional
        Broad-phase distance of :func:`collision_pairs`, m.
    name : str, optional
        Prefix of the constraint rows' names.

    Attributes
    ----------
    pairs : tuple of (str, str)
    margin : float
    build_time : float
        Seconds spent building the distance expressions.

    Examples
    --------
    >>> from ahbm.kinematics.geometry import CollisionShape
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> b0, b1 = m.body_names
    >>> m.collision = [CollisionShape.sphere("ball", b1, [0, 0, -1], 0.1),
    ...                CollisionShape.capsule("pole", b0, [0, 0, 0], [0, 0, -1], 0.05)]
    >>> c = NoCollision(m, [("ball", "pole")], margin=0.01)
    >>> c.pairs, c.lb
    ((('ball', 'pole'),), 0.01)
    """

    def __init__(self, model: Model, pairs="all", *, margin=0.0, q=None, within=0.1,
                 name: str = "no collision"):  # fmt: skip
        if not isinstance(model, Model):
            raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
        margin = as_nonnegative_float(margin, "margin", unit="m")
        if isinstance(pairs, str):
            if pairs != "all":
                raise DataError(
                    f"`pairs` must be a list of shape-name pairs or 'all', got {pairs!r}"
                )
            pairs = collision_pairs(model, q, within=within)
        pairs = _check_pairs(model, pairs)
        if not pairs:
            raise DataError(
                f"NoCollision: no shape pairs to keep apart on model {model.name!r} (the broad "
                "phase dropped them all, or the model's shapes never move relative to each other)"
            )
        t0 = time.perf_counter()
        fun = distance_function(model, pairs)
        build = time.perf_counter() - t0
        super().__init__(_DistanceAtNode(fun, model.nq), margin, np.inf, name)
        object.__setattr__(self, "pairs", tuple(pairs))
        object.__setattr__(self, "margin", margin)
        object.__setattr__(self, "model_name", model.name)
        object.__setattr__(self, "build_time", build)

    def __repr__(self) -> str:
        return (
            f"NoCollision(model={self.model_name!r}, pairs={len(self.pairs)}, "
            f"margin={self.margin:g})"
        )

    def distances(self, q) -> np.ndarray:
        """Signed distances (..., n_pairs) of the pairs at configurations `q` (..., nq), m."""
        Q = as_float_array(q, "q")
        fun = self.fun.fun
        flat = Q.reshape(-1, Q.shape[-1])
        if flat.shape[1] != self.fun.nq:
            raise DataError(f"Expected `q` to have shape (..., {self.fun.nq}), got {Q.shape}")
        out = np.asarray(fun.map(flat.shape[0])(flat.T), dtype=float).T
        return out.reshape(Q.shape[:-1] + (len(self.pairs),))
