"""Collision avoidance in optimal control: symbolic swept-sphere distances and NoCollision."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import DataError, ModelError
from ahbm.kinematics import CollisionShape, distances, ssv_distance
from ahbm.kinematics.configuration import random_model, random_q
from ahbm.kinematics.tree import Model

ca = pytest.importorskip("casadi")

from ahbm.optimize import (  # noqa: E402
    Effort,
    NoCollision,
    Phase,
    collision_pairs,
    core_distance_squared,
    distance_function,
    solve,
)


def _core_function(k1, k2):
    """CasADi function (P1 flat, P2 flat) -> (d_core, ∂d/∂P1, ∂d/∂P2)."""
    a, b = ca.SX.sym("a", 3 * k1), ca.SX.sym("b", 3 * k2)
    P1 = [a[3 * i : 3 * i + 3] for i in range(k1)]
    P2 = [b[3 * i : 3 * i + 3] for i in range(k2)]
    d = ca.sqrt(core_distance_squared(P1, P2))
    return ca.Function("d", [a, b], [d, ca.gradient(d, a), ca.gradient(d, b)])


def _random_core(rng, k, n):
    centre = rng.normal(size=(n, 1, 3)) * 0.3
    return centre + rng.normal(size=(n, k, 3)) * 0.2


@pytest.mark.parametrize("k1", [1, 2, 3])
@pytest.mark.parametrize("k2", [1, 2, 3])
def test_core_distances_and_gradients_equal_ssv_distance(k1, k2):
    rng = np.random.default_rng(10 * k1 + k2)
    n = 60
    P1, P2 = _random_core(rng, k1, n), _random_core(rng, k2, n)
    ref = ssv_distance(P1, 0.0, P2, 0.0)
    f = _core_function(k1, k2).map(n)
    d, g1, g2 = (np.asarray(v, dtype=float) for v in f(P1.reshape(n, -1).T, P2.reshape(n, -1).T))
    np.testing.assert_allclose(d.ravel(), ref.core_distance, rtol=0, atol=1e-12)
    touching = ref.core_distance < 1e-9  # crossing cores: the distance has no gradient
    assert touching.sum() < n // 4
    np.testing.assert_allclose(g1.T.reshape(n, k1, 3)[~touching], ref.gradient1[~touching],
                               rtol=0, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(g2.T.reshape(n, k2, 3)[~touching], ref.gradient2[~touching],
                               rtol=0, atol=1e-9)  # fmt: skip


def test_core_distance_special_cases():
    f = _core_function(2, 2)
    # parallel overlapping segments: the distance of the lines
    d = f([0, 0, 0, 1, 0, 0], [0.3, 0.2, 0, 1.5, 0.2, 0])[0]
    assert float(d) == pytest.approx(0.2, abs=1e-14)
    # nearly parallel, non-overlapping: endpoint to endpoint
    d = f([0, 0, 0, 1, 0, 0], [1.5, 0.1, 0, 2.5, 0.1 + 1e-7, 0])[0]
    ref = ssv_distance([[0, 0, 0], [1, 0, 0]], 0.0, [[1.5, 0.1, 0], [2.5, 0.1 + 1e-7, 0]], 0.0)
    assert float(d) == pytest.approx(float(ref.distance), abs=1e-14)
    # a segment through a triangle: zero
    g = _core_function(2, 3)
    d = g([0.2, 0.2, -1, 0.2, 0.2, 1], [0, 0, 0, 1, 0, 0, 0, 1, 0])[0]
    assert abs(float(d)) < 1e-14
    # numbers work too (no symbols)
    assert float(ca.DM(core_distance_squared([[0, 0, 0]], [[3, 4, 0]]))) == pytest.approx(25.0)
    with pytest.raises(DataError, match="cores need"):
        core_distance_squared([], [[0, 0, 0]])


def _shaped_model(seed):
    """A random 6-body tree (Euler and revolute joints) with spheres, capsules and lozenges."""
    rng = np.random.default_rng(seed)
    m = random_model(6, rng=rng, joint_types=("revolute", "euler", "free_euler"))
    shapes = []
    for k, b in enumerate(m.body_names):
        kind = k % 3 + 1
        P = rng.normal(size=(kind, 3)) * 0.15
        shapes.append(CollisionShape(f"s{k}", b, P, 0.02 + 0.03 * rng.random()))
    m.collision = shapes
    return m, rng


@pytest.mark.parametrize("seed", [0, 1])
def test_distance_function_equals_numeric_distances_and_differences(seed):
    m, rng = _shaped_model(seed)
    assert m.nq == m.nv
    pairs = collision_pairs(m, exclude_adjacent=False)
    assert len(pairs) >= 10
    f = distance_function(m, pairs)
    x = ca.SX.sym("q", m.nq)
    J = ca.Function("J", [x], [ca.jacobian(f(x), x)])
    for _ in range(4):
        q = random_q(m, rng=rng)
        ref = distances(m, q, pairs)
        d = np.asarray(f(q), float).ravel()
        np.testing.assert_allclose(d, ref.distance, rtol=0, atol=1e-12)
        ok = ref.distance + [s1r + s2r for s1r, s2r in _radii(m, pairs)] > 1e-9
        Jq = np.asarray(J(q), float)
        np.testing.assert_allclose(Jq[ok], ref.jacobian[ok], rtol=0, atol=1e-9)
        # central differences of the numeric distances
        h = 1e-6
        fd = np.stack(
            [(distances(m, q + h * e, pairs).distance - distances(m, q - h * e, pairs).distance)
             / (2 * h) for e in np.eye(m.nq)], axis=-1)  # fmt: skip
        np.testing.assert_allclose(Jq[ok], fd[ok], rtol=0, atol=2e-6)


def _radii(m, pairs):
    r = {s.name: s.radius for s in m.collision}
    return [(r[a], r[b]) for a, b in pairs]


def test_collision_pairs_structure_and_broad_phase():
    m = Model("two", (0, 0, -9.81))
    m.add_body("post", "ground", {"type": "fixed"})
    m.add_body("base", "ground", {"type": "fixed"}, position=[0, 0, -1])
    m.add_body("arm", "post", {"type": "revolute", "axis": [0, 1, 0]}, mass=1.0)
    m.add_body("hand", "arm", {"type": "revolute", "axis": [0, 1, 0]}, position=[1, 0, 0],
               mass=1.0)  # fmt: skip
    m.collision = [
        CollisionShape.capsule("post", "post", [0, 0, 0], [0, 0, 0.5], 0.05),
        CollisionShape.sphere("base", "base", [0, 0, 0], 0.1),
        CollisionShape.capsule("arm", "arm", [0.1, 0, 0], [0.9, 0, 0], 0.05),
        CollisionShape.sphere("hand", "hand", [0.5, 0, 0], 0.05),
    ]
    # post-base never move relative to each other; post-arm and arm-hand are adjacent
    assert collision_pairs(m) == [("post", "hand"), ("base", "arm"), ("base", "hand")]
    assert ("post", "arm") in collision_pairs(m, exclude_adjacent=False)
    # broad phase: at q = 0 the base (1 m below) is far from the arm and the hand
    near = collision_pairs(m, np.zeros((1, 2)), within=0.1)
    assert near == []
    # hanging down, the arm comes to the base
    assert ("base", "arm") in collision_pairs(m, [[np.pi / 2, 0.0]], within=0.1)
    with pytest.raises(DataError, match="within"):
        collision_pairs(m, within=-1)
    with pytest.raises(DataError, match="shape"):
        distance_function(m, [("post", "nope")])
    with pytest.raises(DataError, match="same body"):
        distance_function(m, [("arm", "arm")])
    with pytest.raises(ModelError, match="no collision shapes"):
        NoCollision(Model(), "all")
    with pytest.raises(DataError, match="'all'"):
        NoCollision(m, "everything")


def _slider():
    """A ball moving in the x-y plane (two slides) past a fixed post."""
    m = Model("slider", (0.0, 0.0, 0.0))
    m.add_body("post", "ground", {"type": "fixed"})
    m.add_body("sx", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    m.add_body("ball", "sx", {"type": "prismatic", "axis": [0, 1, 0]}, mass=1.0)
    m.collision = [
        CollisionShape.capsule("post", "post", [0, 0.02, -0.5], [0, 0.02, 0.5], 0.2),
        CollisionShape.sphere("ball", "ball", [0, 0, 0], 0.1),
    ]
    return m


@pytest.mark.parametrize("method", ["trapezoidal", "hermite-simpson"])
def test_no_collision_keeps_a_ball_off_a_post(method):
    m = _slider()
    margin = 0.01
    ends = {"initial": {"q": [-1.0, 0.0], "qd": [0, 0]}, "final": {"q": [1.0, 0.0], "qd": [0, 0]}}
    con = NoCollision(m, "all", margin=margin)
    assert con.pairs == (("post", "ball"),)
    ph = Phase(m, nodes=21, duration=2.0, objectives=[Effort()], constraints=[con], **ends)
    res = solve(ph, method=method, verbose=False)
    assert res.success
    q = res.phase_solutions[0].X[:2].T
    d = con.distances(q)
    assert d.min() >= margin - 1e-6
    assert d.min() <= margin + 1e-4  # the constraint is active: the ball grazes the post
    assert q[:, 1].min() < -0.25  # it went round the side away from the post's offset
    free = solve(Phase(m, nodes=21, duration=2.0, objectives=[Effort()], **ends), verbose=False)
    assert con.distances(free.phase_solutions[0].X[:2].T).min() < -0.2  # straight through
