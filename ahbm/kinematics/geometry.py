"""Collision geometry: body-attached swept-sphere volumes, their distances and collisions.

The swept-sphere volumes (SSV) themselves, the closed forms of their distances
and their gradients are in :mod:`ahbm.kinematics.ssv`; foot contact sets and
the ground in :mod:`ahbm.kinematics.contact`.

Body-attached shapes
--------------------
:class:`CollisionShape` fixes a swept-sphere volume in a body frame; the
shapes of a model are kept in its model file under the top-level section
``"collision"`` (``model.collision``; see
:func:`~ahbm.kinematics.model_file.register_model_section`). For a whole
trial, :func:`distances` returns the distances of named shape pairs, their
world witness points and the Jacobians ``∂d/∂q = nᵀ (J1 − J2)`` from the point
Jacobians of the core witness points, and :func:`self_collision` lists the
pairs that collide, in which frames and how deep.

References
----------
Schwienbacher, M. (2013). *Efficient Algorithms for Biped Robots*. TU München,
ch. 5 (self-collision avoidance) and ch. 6 (SSV distances).
Felis, M. (2015). *Modeling Emotional Aspects in Human Locomotion*. Heidelberg
University, §4.6 (self-collision).
Ericson, C. (2005). *Real-Time Collision Detection*. Morgan Kaufmann, §5.1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import (
    as_float_array,
    as_nonnegative_float,
    check_model,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.forward import point_jacobian
from ahbm.kinematics.model_file import register_model_section
from ahbm.kinematics.ssv import _KIND_OF, _KINDS, _combine, _core_weights, _norm_rows, _unit
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "CollisionShape",
    "ShapeDistances",
    "SelfCollision",
    "Collision",
    "collision_shapes",
    "distances",
    "self_collision",
]


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
