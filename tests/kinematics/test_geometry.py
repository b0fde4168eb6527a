"""Swept-sphere distances, body-attached collision shapes, self-collision, foot contact.

References used here (the peer comparison with coal is in
tests/peers/test_coal_distances.py):

* the optimality (KKT) conditions of the convex problem
  ``min ‖Σ w1_i P1_i − Σ w2_j P2_j‖`` over the two simplices: the closest
  points ``c1, c2`` are optimal iff ``n·P1_i ≥ n·c1`` for every vertex of
  core 1 and ``n·P2_j ≤ n·c2`` for every vertex of core 2 (``n = c1 − c2``),
  an exact certificate for every pair type (Schwienbacher 2013, §6.8 proposes
  KKT checks of the closed forms);
* brute force: dense sampling of the cores (the closed form is never above
  the sampled minimum and within the sampling resolution of it);
* closed-form cases (parallel overlapping segments, crossings, degenerate
  cores);
* central finite differences for the gradients and for ∂d/∂q.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ahbm.errors import DataError, ModelError
from ahbm.kinematics import (
    CollisionShape,
    collision_shapes,
    distances,
    foot_contact_shapes,
    ground_contact,
    integrate_q,
    load_model,
    neutral_q,
    point_position,
    random_model,
    random_q,
    save_model,
    self_collision,
    ssv_distance,
)
from ahbm.models import heiman_model, human15

KINDS = (1, 2, 3)


def random_cores(rng, batch, k1, k2, *, spread=1.0):
    P1 = rng.normal(size=batch + (k1, 3))
    P2 = rng.normal(size=batch + (k2, 3)) + spread * rng.normal(size=batch + (1, 3))
    return P1, P2


def assert_kkt(P1, P2, res, tol=1e-10):
    """Weights are convex, points are the combinations, and the KKT conditions hold."""
    w1, w2 = res.weights1, res.weights2
    assert np.all(w1 >= -1e-12) and np.all(w2 >= -1e-12)
    np.testing.assert_allclose(w1.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w2.sum(-1), 1.0, atol=1e-12)
    c1 = np.einsum("...k,...ki->...i", w1, P1)
    c2 = np.einsum("...k,...ki->...i", w2, P2)
    np.testing.assert_allclose(res.core_point1, c1, atol=1e-12)
    np.testing.assert_allclose(res.core_point2, c2, atol=1e-12)
    n = c1 - c2
    np.testing.assert_allclose(res.core_distance, np.linalg.norm(n, axis=-1), atol=1e-12)
    scale = 1.0 + np.abs(P1).max() + np.abs(P2).max()
    g1 = np.einsum("...i,...ki->...k", n, P1) - np.einsum("...i,...i->...", n, c1)[..., None]
    g2 = np.einsum("...i,...ki->...k", n, P2) - np.einsum("...i,...i->...", n, c2)[..., None]
    assert g1.min() >= -tol * scale**2, g1.min()
    assert g2.max() <= tol * scale**2, g2.max()


def sample_core(P, m):
    """Dense samples (..., n, 3) of a core with m steps per edge."""
    k = P.shape[-2]
    if k == 1:
        return P
    s = np.linspace(0.0, 1.0, m + 1)
    if k == 2:
        return P[..., :1, :] + s[:, None] * (P[..., 1:2, :] - P[..., :1, :])
    u, v = np.meshgrid(s, s, indexing="ij")
    keep = u + v <= 1.0 + 1e-15
    u, v = u[keep], v[keep]
    w = np.stack([1.0 - u - v, u, v], axis=-1)
    return np.einsum("nk,...ki->...ni", w, P)


# ----------------------------------------------------------------------------
# closed-form core distances
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(("k1", "k2"), list(itertools.product(KINDS, KINDS)))
def test_every_pair_satisfies_kkt(k1, k2):
    rng = np.random.default_rng(10 * k1 + k2)
    for spread in (0.0, 1.0, 4.0):  # crossing, close and far cores
        P1, P2 = random_cores(rng, (400,), k1, k2, spread=spread)
        res = ssv_distance(P1, 0.0, P2, 0.0)
        assert_kkt(P1, P2, res)


@pytest.mark.parametrize(("k1", "k2"), [(1, 3), (2, 2), (2, 3), (3, 3), (2, 1), (3, 2)])
def test_brute_force_sampling(k1, k2):
    rng = np.random.default_rng(7 + k1 * k2)
    P1, P2 = random_cores(rng, (40,), k1, k2, spread=1.5)
    r1, r2 = rng.uniform(0, 0.2, 40), rng.uniform(0, 0.2, 40)
    res = ssv_distance(P1, r1, P2, r2)
    m = 24 if k1 == k2 == 3 else 60
    S1, S2 = sample_core(P1, m), sample_core(P2, m)
    d = np.array([np.linalg.norm(a[:, None] - b[None], axis=-1).min() for a, b in zip(S1, S2)])
    d -= r1 + r2
    # never above the sampled minimum, and within the sampling resolution of it
    assert np.all(res.distance <= d + 1e-12)
    edge = max(np.linalg.norm(np.diff(P1, axis=1), axis=-1).max(initial=0),
               np.linalg.norm(np.diff(P2, axis=1), axis=-1).max(initial=0))  # fmt: skip
    assert np.all(d - res.distance <= 2 * edge / m)


def test_two_capsules_closed_form():
    res = ssv_distance([[0, 0, 0], [1, 0, 0]], 0.1, [[0.3, -1, 2], [0.3, 1, 2]], 0.4)
    assert float(res.distance) == pytest.approx(1.5, abs=1e-15)
    np.testing.assert_allclose(res.core_point1, [0.3, 0, 0], atol=1e-15)
    np.testing.assert_allclose(res.point1, [0.3, 0, 0.1], atol=1e-15)
    np.testing.assert_allclose(res.point2, [0.3, 0, 1.6], atol=1e-15)
    np.testing.assert_allclose(res.normal, [0, 0, -1], atol=1e-15)


def test_penetration_is_negative():
    res = ssv_distance([[0, 0, 0]], 0.5, [[0.6, 0, 0]], 0.3)
    assert float(res.distance) == pytest.approx(-0.2)
    # the witness points lie on the surfaces, overlapping by the depth
    np.testing.assert_allclose(res.point1, [0.5, 0, 0])
    np.testing.assert_allclose(res.point2, [0.3, 0, 0])


@pytest.mark.parametrize(
    ("b0", "b1", "s_mid"),
    [
        ([0.2, 1, 0], [0.6, 1, 0], 0.4),  # inside: midpoint of b
        ([-1, 1, 0], [0.5, 1, 0], 0.25),  # overlapping the start
        ([0.8, 1, 0], [3.0, 1, 0], 0.9),  # overlapping the end
        ([0.5, 1, 0], [-2, 1, 0], 0.25),  # reversed direction
    ],
)
def test_parallel_overlapping_segments_give_midpoint_of_overlap(b0, b1, s_mid):
    # Schwienbacher Table 6.5: overlapping parallel segments -> midpoint of the overlap
    res = ssv_distance([[0, 0, 0], [1, 0, 0]], 0.0, [b0, b1], 0.0)
    assert float(res.core_distance) == pytest.approx(1.0, abs=1e-15)
    assert res.weights1[1] == pytest.approx(s_mid, abs=1e-15)
    np.testing.assert_allclose(res.core_point2, [s_mid, 1, 0], atol=1e-15)


def test_parallel_disjoint_and_cm_scale_segments():
    res = ssv_distance([[0, 0, 0], [1, 0, 0]], 0.0, [[2, 1, 0], [3, 1, 0]], 0.0)
    assert float(res.core_distance) == pytest.approx(np.sqrt(2), abs=1e-15)
    np.testing.assert_allclose(res.core_point1, [1, 0, 0])
    np.testing.assert_allclose(res.core_point2, [2, 1, 0])
    # cm-scale, nearly but not exactly parallel (Schwienbacher's example of
    # why the parallel test must be normalized, eq. 6.34)
    u = np.array([[0.0, 0.0, 0.0], [0.03, 0.0, 0.0]])
    v = np.array([[0.0, 0.01, 0.0], [0.03, 0.01, 0.01]])
    res = ssv_distance(u, 0.0, v, 0.0)
    assert float(res.core_distance) == pytest.approx(0.01, abs=1e-15)
    np.testing.assert_allclose(res.core_point1, [0, 0, 0], atol=1e-15)


def test_degenerate_cores():
    # a zero-length segment is a point; a collinear triangle is a segment
    seg0 = [[1.0, 2.0, 0.0], [1.0, 2.0, 0.0]]
    res = ssv_distance(seg0, 0.0, [[0, 0, 0], [2, 0, 0]], 0.0)
    assert float(res.core_distance) == pytest.approx(2.0)
    res = ssv_distance(seg0, 0.0, seg0, 0.0)
    assert float(res.core_distance) == 0.0
    np.testing.assert_array_equal(res.gradient1, 0.0)
    flat = [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    res = ssv_distance([[1.5, 1, 0]], 0.0, flat, 0.0)
    assert float(res.core_distance) == pytest.approx(1.0)
    np.testing.assert_allclose(res.core_point2, [1.5, 0, 0])
    res = ssv_distance([[0.5, 1, 1], [0.5, 1, -1]], 0.0, flat, 0.0)
    assert float(res.core_distance) == pytest.approx(1.0)
    point_tri = [[1, 1, 1], [1, 1, 1], [1, 1, 1]]
    res = ssv_distance(point_tri, 0.0, [[1, 1, 3]], 0.0)
    assert float(res.core_distance) == pytest.approx(2.0)


def test_segment_crossing_triangle_and_intersecting_triangles():
    tri = np.array([[0, 0, 0], [2, 0, 0], [0, 2, 0]], float)
    res = ssv_distance([[0.5, 0.5, -1], [0.5, 0.5, 3]], 0.0, tri, 0.0)
    assert float(res.core_distance) == 0.0
    np.testing.assert_allclose(res.core_point1, [0.5, 0.5, 0], atol=1e-15)
    np.testing.assert_allclose(res.weights1, [0.75, 0.25], atol=1e-15)
    # a segment that passes beside the triangle
    res = ssv_distance([[1.5, 1.5, -1], [1.5, 1.5, 1]], 0.0, tri, 0.0)
    assert float(res.core_distance) == pytest.approx(np.sqrt(2) / 2)
    # two triangles crossing each other (no vertex inside the other)
    tri2 = np.array([[0.5, -1, -1], [0.5, 3, -1], [0.5, 0.2, 2]])
    res = ssv_distance(tri, 0.0, tri2, 0.0)
    assert float(res.core_distance) == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(res.core_point1, res.core_point2, atol=1e-15)
    # coplanar, overlapping triangles
    res = ssv_distance(tri, 0.0, tri + [0.5, 0.5, 0.0], 0.0)
    assert float(res.core_distance) == pytest.approx(0.0, abs=1e-15)


def test_point_in_face_region_of_lozenge():
    tri = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    res = ssv_distance([[0.5, 0.25, 1.0]], 0.1, tri, 0.2)
    assert float(res.distance) == pytest.approx(0.7)
    np.testing.assert_allclose(res.weights2, [0.625, 0.25, 0.125])
    np.testing.assert_allclose(res.point2, [0.5, 0.25, 0.2])


def test_batch_broadcasting_matches_single_calls():
    rng = np.random.default_rng(3)
    P1 = rng.normal(size=(4, 5, 2, 3))
    P2 = rng.normal(size=(5, 3, 3))
    r1 = rng.uniform(0, 0.1, (4, 1))
    res = ssv_distance(P1, r1, P2, 0.05)
    assert res.distance.shape == (4, 5)
    assert res.point1.shape == (4, 5, 3)
    assert res.gradient1.shape == (4, 5, 2, 3) and res.gradient2.shape == (4, 5, 3, 3)
    for i, j in [(0, 0), (3, 4), (2, 1)]:
        one = ssv_distance(P1[i, j], r1[i, 0], P2[j], 0.05)
        assert float(one.distance) == res.distance[i, j]
        np.testing.assert_array_equal(one.point1, res.point1[i, j])
    # reversing a pair swaps the points and the gradients (Table 6.1)
    rev = ssv_distance(P2, 0.05, P1, r1)
    np.testing.assert_allclose(rev.distance, res.distance, atol=1e-15)
    np.testing.assert_allclose(rev.point1, res.point2, atol=1e-15)
    np.testing.assert_allclose(rev.gradient2, res.gradient1, atol=1e-15)


@pytest.mark.parametrize(("k1", "k2"), list(itertools.product(KINDS, KINDS)))
def test_gradients_by_finite_differences(k1, k2):
    rng = np.random.default_rng(100 + 10 * k1 + k2)
    P1, P2 = random_cores(rng, (30,), k1, k2, spread=4.0)
    res = ssv_distance(P1, 0.1, P2, 0.2)
    keep = res.core_distance > 0.3  # separated cores: differentiable
    h = 1e-6
    num1 = np.zeros_like(P1)
    num2 = np.zeros_like(P2)
    for P, num in ((P1, num1), (P2, num2)):
        for i in range(P.shape[1]):
            for c in range(3):
                P[:, i, c] += h
                up = ssv_distance(P1, 0.1, P2, 0.2).distance
                P[:, i, c] -= 2 * h
                down = ssv_distance(P1, 0.1, P2, 0.2).distance
                P[:, i, c] += h
                num[:, i, c] = (up - down) / (2 * h)
    np.testing.assert_allclose(res.gradient1[keep], num1[keep], atol=1e-7)
    np.testing.assert_allclose(res.gradient2[keep], num2[keep], atol=1e-7)
    assert keep.sum() > 20


def test_ssv_distance_bad_input():
    with pytest.raises(DataError, match="points1"):
        ssv_distance([[0, 0, 0]] * 4, 0.1, [[0, 0, 0]], 0.1)
    with pytest.raises(DataError, match="points2"):
        ssv_distance([[0, 0, 0]], 0.1, [0, 0, 0], 0.1)
    with pytest.raises(DataError, match="radius2"):
        ssv_distance([[0, 0, 0]], 0.1, [[0, 0, 0]], -0.1)
    with pytest.raises(DataError, match="points1"):
        ssv_distance([[0, np.nan, 0]], 0.1, [[0, 0, 0]], 0.1)
    with pytest.raises(DataError, match="broadcast"):
        ssv_distance(np.zeros((3, 1, 3)), 0.1, np.zeros((4, 1, 3)), 0.1)
    with pytest.raises(DataError, match="radius1"):
        ssv_distance([[0, 0, 0]], "0.1", [[0, 0, 0]], 0.1)


# ----------------------------------------------------------------------------
# body-attached shapes and the model file
# ----------------------------------------------------------------------------


def arm_model():
    """human15 with capsules on the trunk, arms and legs."""
    m = human15(height=1.8, mass=75.0)
    shapes = [
        CollisionShape.capsule("trunk", "thorax", [0, 0, -0.1], [0, 0, 0.1], 0.13),
        CollisionShape.sphere("head", "head", [0, 0, 0.1], 0.1),
        CollisionShape.capsule("upper_arm_r", "upper_arm_r", [0, 0, -0.03], [0, 0, -0.27], 0.045),
        CollisionShape.capsule("forearm_r", "forearm_r", [0, 0, -0.02], [0, 0, -0.25], 0.035),
        CollisionShape.capsule("upper_arm_l", "upper_arm_l", [0, 0, -0.03], [0, 0, -0.27], 0.045),
        CollisionShape.lozenge(
            "pelvis", "pelvis", [0, -0.06, -0.02], [0, 0.06, -0.02], [0, 0, 0.06], 0.07
        ),
        CollisionShape.capsule("thigh_r", "thigh_r", [0, 0, -0.05], [0, 0, -0.4], 0.055),
        CollisionShape.capsule("thigh_l", "thigh_l", [0, 0, -0.05], [0, 0, -0.4], 0.055),
    ]
    m.collision = shapes
    return m


def test_shape_model_file_round_trip(tmp_path):
    m = arm_model()
    path = save_model(m, tmp_path / "m.json")
    back = load_model(path)
    assert back.collision == m.collision
    assert [s.kind for s in back.collision][:3] == ["capsule", "sphere", "capsule"]
    assert collision_shapes(back)[5].kind == "lozenge"
    # the section in the file is what to_dict writes
    import json

    data = json.loads(path.read_text())
    assert data["collision"][1] == {
        "name": "head", "body": "head", "type": "sphere", "points": [[0.0, 0.0, 0.1]],
        "radius": 0.1,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"name": "a", "body": "nope", "type": "sphere", "points": [[0, 0, 0]], "radius": 1},
         "unknown body 'nope'"),
        ({"name": "a", "body": "head", "type": "cube", "points": [[0, 0, 0]], "radius": 1},
         "unknown shape type"),
        ({"name": "a", "body": "head", "type": "capsule", "points": [[0, 0, 0]], "radius": 1},
         "'capsule' has 2 defining points"),
        ({"name": "a", "body": "head", "type": "sphere", "points": [[0, 0, 0]], "radius": -1},
         "radius"),
        ({"name": "a", "body": "head", "type": "sphere", "points": [[0, 0, 0]]}, "radius"),
        ({"name": "a", "body": "head", "type": "sphere", "points": [[0, 0]], "radius": 1},
         "points"),
        ({"name": "a", "body": "head", "type": "sphere", "points": [[0, 0, 0]], "radius": 1,
          "colour": "red"}, "unknown fields"),
    ],
)  # fmt: skip
def test_bad_collision_section_in_file(tmp_path, entry, match):
    import json

    m = human15(height=1.8, mass=75.0)
    path = save_model(m, tmp_path / "m.json")
    data = json.loads(path.read_text())
    data["collision"] = [entry]
    path.write_text(json.dumps(data))
    with pytest.raises(ModelError, match=match):
        load_model(path)


def test_shape_checks_in_code():
    m = human15(height=1.8, mass=75.0)
    s = CollisionShape.sphere("a", "head", [0, 0, 0], 0.1)
    with pytest.raises(ModelError, match="used twice"):
        m.collision = [s, s]
    with pytest.raises(ModelError, match="expected a CollisionShape"):
        m.collision = ["a"]
    with pytest.raises(ModelError, match="radius"):
        CollisionShape.sphere("a", "head", [0, 0, 0], float("nan"))
    with pytest.raises(ModelError, match="name"):
        CollisionShape.sphere("", "head", [0, 0, 0], 0.1)
    m.collision = [s.to_dict()]  # dictionaries are accepted
    assert m.collision == (s,)
    import copy

    dup = copy.deepcopy(m)  # copies keep the shapes, read-only
    assert dup.collision == (s,) and not dup.collision[0].points.flags.writeable
    with pytest.raises(ValueError):
        s.points[0, 0] = 1.0
    m.collision = None
    assert m.collision == ()


# ----------------------------------------------------------------------------
# distances of body-attached shapes, dd/dq
# ----------------------------------------------------------------------------


def trial_q(model, rng, n):
    return random_q(model, rng=rng, size=(n,))


def test_distances_equal_world_ssv_distances():
    m = arm_model()
    rng = np.random.default_rng(5)
    q = trial_q(m, rng, 6).reshape(2, 3, m.nq)
    pairs = [("forearm_r", "trunk"), ("head", "upper_arm_l"), ("pelvis", "forearm_r"),
             ("trunk", "pelvis"), ("thigh_r", "thigh_l")]  # fmt: skip
    res = distances(m, q, pairs)
    assert res.distance.shape == (2, 3, 5) and res.jacobian.shape == (2, 3, 5, m.nv)
    shapes = {s.name: s for s in m.collision}
    for k, (a, b) in enumerate(pairs):
        sa, sb = shapes[a], shapes[b]
        Pa = np.stack([point_position(m, q, sa.body, p) for p in sa.points], axis=-2)
        Pb = np.stack([point_position(m, q, sb.body, p) for p in sb.points], axis=-2)
        ref = ssv_distance(Pa, sa.radius, Pb, sb.radius)
        np.testing.assert_allclose(res.distance[..., k], ref.distance, atol=1e-12)
        np.testing.assert_allclose(res.point1[..., k, :], ref.point1, atol=1e-12)
        np.testing.assert_allclose(res.point2[..., k, :], ref.point2, atol=1e-12)
    assert res.pairs == tuple(pairs)


@pytest.mark.parametrize("which", ["human15", "random"])
def test_distance_jacobian_by_finite_differences(which):
    rng = np.random.default_rng(11)
    if which == "human15":
        m = arm_model()
        pairs = [("forearm_r", "trunk"), ("pelvis", "forearm_r"), ("head", "upper_arm_r"),
                 ("thigh_r", "thigh_l")]  # fmt: skip
    else:
        m = random_model(6, rng=rng)
        names = m.body_names
        m.collision = [
            CollisionShape.sphere("s", names[0], [0.1, 0, 0], 0.05),
            CollisionShape.capsule("c", names[2], [0, 0, 0], [0.3, 0.1, 0], 0.05),
            CollisionShape.lozenge("t", names[4], [0, 0, 0], [0.3, 0, 0], [0, 0.3, 0.1], 0.02),
            CollisionShape.capsule("d", names[5], [0, 0.1, 0], [0.2, 0, 0.3], 0.03),
        ]
        pairs = [("s", "c"), ("c", "t"), ("t", "d"), ("s", "t"), ("d", "s")]
    q = trial_q(m, rng, 5)
    res = distances(m, q, pairs)
    h = 1e-6
    num = np.zeros_like(res.jacobian)
    for i in range(m.nv):
        v = np.zeros((5, m.nv))
        v[:, i] = h
        up = distances(m, integrate_q(m, q, v), pairs).distance
        down = distances(m, integrate_q(m, q, -v), pairs).distance
        num[..., i] = (up - down) / (2 * h)
    assert np.all(np.linalg.norm(res.normal, axis=-1) > 0.5)  # no touching cores here
    np.testing.assert_allclose(res.jacobian, num, atol=1e-6)


def test_distances_with_kin_and_bad_pairs():
    from ahbm.kinematics import forward_kinematics

    m = arm_model()
    q = neutral_q(m)
    kin = forward_kinematics(m, q)
    a = distances(m, q, [("trunk", "head")])
    b = distances(m, None, [("trunk", "head")], kin=kin)
    np.testing.assert_array_equal(a.distance, b.distance)
    assert a.distance.shape == (1,)
    assert distances(m, q, []).distance.shape == (0,)
    with pytest.raises(DataError, match="not a collision shape"):
        distances(m, q, [("trunk", "tail")])
    with pytest.raises(DataError, match=r"pairs\[0\]"):
        distances(m, q, [("trunk",)])
    with pytest.raises(DataError, match="pairs"):
        distances(m, q, "trunk")
    with pytest.raises(DataError, match="q"):
        distances(m, np.zeros(3), [("trunk", "head")])


# ----------------------------------------------------------------------------
# self-collision
# ----------------------------------------------------------------------------


def arm_through_trunk(model, n=21):
    """The right arm swung about the forward (x) axis towards the left, across the trunk."""
    q = np.tile(neutral_q(model), (n, 1))
    i = model.coordinate_names.index("shoulder_r_qx")
    angle = np.linspace(0.0, 1.2, n)
    q[:, i : i + 4] = np.stack(
        [np.sin(angle / 2), np.zeros(n), np.zeros(n), np.cos(angle / 2)], axis=-1
    )
    return q, angle


def test_self_collision_scan_finds_the_arm_in_the_trunk():
    m = arm_model()
    q, angle = arm_through_trunk(m)
    rep = self_collision(m, q)
    assert rep.distance.shape == (len(q), len(rep.pairs))
    # adjacent bodies (thorax-upper arm, upper arm-forearm, pelvis-thighs) are excluded
    assert ("trunk", "upper_arm_r") not in rep.pairs
    assert ("upper_arm_r", "forearm_r") not in rep.pairs
    assert ("pelvis", "thigh_r") not in rep.pairs
    assert ("trunk", "forearm_r") in rep.pairs
    # brute-force reference: the same distances from ssv_distance in world coordinates
    shapes = {s.name: s for s in m.collision}
    for k, (a, b) in enumerate(rep.pairs):
        sa, sb = shapes[a], shapes[b]
        Pa = np.stack([point_position(m, q, sa.body, p) for p in sa.points], axis=-2)
        Pb = np.stack([point_position(m, q, sb.body, p) for p in sb.points], axis=-2)
        ref = ssv_distance(Pa, sa.radius, Pb, sb.radius).distance
        np.testing.assert_allclose(rep.distance[:, k], ref, atol=1e-12)
        np.testing.assert_array_equal(rep.colliding[:, k], ref < 0)
    # neutral pose is free; the forearm enters the trunk as the arm swings in
    assert not rep.colliding[0].any()
    hits = {c.pair: c for c in rep.collisions}
    assert ("trunk", "forearm_r") in hits
    c = hits[("trunk", "forearm_r")]
    k = rep.pairs.index(c.pair)
    assert c.depth == pytest.approx(-rep.distance[:, k].min())
    assert c.worst_frame == int(np.argmin(rep.distance[:, k]))
    np.testing.assert_array_equal(c.frames, np.flatnonzero(rep.distance[:, k] < 0))
    assert [x.depth for x in rep.collisions] == sorted((x.depth for x in rep.collisions),
                                                        reverse=True)  # fmt: skip
    # with a margin more pairs and frames count; without exclusion, the neighbours too
    wide = self_collision(m, q, margin=0.05)
    assert wide.colliding.sum() >= rep.colliding.sum()
    allp = self_collision(m, q[0], exclude_adjacent=False)
    assert ("trunk", "upper_arm_r") in allp.pairs and allp.distance.ndim == 1


def test_self_collision_bad_input():
    m = human15(height=1.8, mass=75.0)
    with pytest.raises(ModelError, match="no collision shapes"):
        self_collision(m, neutral_q(m))
    m = arm_model()
    with pytest.raises(DataError, match="margin"):
        self_collision(m, neutral_q(m), margin=-1)
    with pytest.raises(DataError, match="exclude_adjacent"):
        self_collision(m, neutral_q(m), exclude_adjacent="yes")


# ----------------------------------------------------------------------------
# foot contact sets and the ground
# ----------------------------------------------------------------------------


def test_foot_contact_shapes_touch_the_sole():
    H = 1.8
    m = heiman_model(height=H, mass=75.0)
    length, height, posterior = 0.1462 * H, 0.0468 * H, 0.0400 * H
    shapes = []
    for side in "rl":
        shapes += foot_contact_shapes(
            f"foot_{side}", length=length, height=height, posterior=posterior
        )
    m.collision = shapes
    q = neutral_q(m)
    gc = ground_contact(m, q)
    # the model stands with its soles at the heel/toe markers' height
    sole = point_position(m, q, "foot_r", m.bodies[m.body_index("foot_r")].markers["heel_r"])[2]
    np.testing.assert_allclose(gc.height, sole, atol=1e-12)
    heel, fore = shapes[:2]
    assert heel.kind == "sphere" and fore.kind == "capsule"
    # the heel's back is at the heel point, the capsule spans the forefoot width
    assert heel.points[0, 0] - heel.radius == pytest.approx(-posterior)
    assert np.ptp(fore.points[:, 1]) == pytest.approx(0.38 * length)
    assert gc.penetration.shape == (4,)


def test_ground_contact_brute_force_and_jacobian():
    rng = np.random.default_rng(2)
    m = heiman_model(height=1.8, mass=75.0)
    shapes = foot_contact_shapes("foot_r", length=0.26, height=0.084, posterior=0.072)
    shapes.append(
        CollisionShape.lozenge("hand", "hand_r", [0, 0, 0], [0.05, 0, -0.1], [-0.05, 0, -0.1], 0.02)
    )
    m.collision = shapes
    q = random_q(m, rng=rng, size=(4,))
    normal = np.array([0.1, -0.2, 1.0])
    g = np.array([0.0, 0.0, -0.3])
    gc = ground_contact(m, q, ground_normal=normal, ground_point=g)
    n = normal / np.linalg.norm(normal)
    for k, s in enumerate(shapes):
        P = np.stack([point_position(m, q, s.body, p) for p in s.points], axis=-2)
        samples = sample_core(P, 50)
        # the lowest point of the swept sphere: lowest core sample moved by r
        h = ((samples - g) @ n).min(axis=-1) - s.radius
        np.testing.assert_allclose(gc.height[:, k], h, atol=1e-12)
        np.testing.assert_allclose((gc.point[:, k] - g) @ n, h, atol=1e-12)
    eps = 1e-6
    num = np.zeros_like(gc.jacobian)
    for i in range(m.nv):
        v = np.zeros((4, m.nv))
        v[:, i] = eps
        up = ground_contact(m, integrate_q(m, q, v), ground_normal=normal, ground_point=g)
        down = ground_contact(m, integrate_q(m, q, -v), ground_normal=normal, ground_point=g)
        num[..., i] = (up.height - down.height) / (2 * eps)
    np.testing.assert_allclose(gc.jacobian, num, atol=1e-6)
    sub = ground_contact(m, q, ["hand"], ground_normal=normal, ground_point=g)
    np.testing.assert_array_equal(sub.height[:, 0], gc.height[:, 2])


def test_foot_and_ground_bad_input():
    with pytest.raises(DataError, match="posterior"):
        foot_contact_shapes("foot_r", length=0.26, height=0.08, posterior=0.3)
    with pytest.raises(DataError, match="height"):
        foot_contact_shapes("foot_r", length=0.26, height=-0.08, posterior=0.07)
    with pytest.raises(DataError, match="length"):
        foot_contact_shapes("foot_r", length="long", height=0.08, posterior=0.07)
    m = heiman_model(height=1.8, mass=75.0)
    m.collision = foot_contact_shapes("foot_r", length=0.26, height=0.084, posterior=0.072)
    with pytest.raises(DataError, match="ground_normal"):
        ground_contact(m, neutral_q(m), ground_normal=(0, 0, 0))
    with pytest.raises(DataError, match="not a collision shape"):
        ground_contact(m, neutral_q(m), ["foot_l_heel"])


# ----------------------------------------------------------------------------
# the example
# ----------------------------------------------------------------------------


def test_self_collision_scan_example(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "self_collision_scan.py"
    spec = importlib.util.spec_from_file_location("ahbm_example_self_collision_scan", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    numbers = module.run(tmp_path, quick=True)
    assert (tmp_path / "self_collision_scan.png").stat().st_size > 1000
    assert numbers["free_at_start"]  # the standing posture is free of collisions
    # the swung arm goes through the trunk
    assert ("thorax", "forearm_r") in numbers["colliding_pairs"]
    assert ("abdomen", "upper_arm_r") in numbers["colliding_pairs"]
    assert 0.05 < numbers["max_depth"] < 0.3
    # the legs never touch each other, nor the left arm the trunk
    assert not any("upper_arm_l" in p and "thorax" in p for p in numbers["colliding_pairs"])
    assert ("thigh_r", "thigh_l") not in numbers["colliding_pairs"]


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_grazing_and_near_parallel_cases_at_any_scale(scale):
    rng = np.random.default_rng(int(scale * 1000) % 97)
    tri = scale * np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    for angle in np.logspace(-12, -1, 12):
        # a segment crossing the triangle at a grazing angle: distance 0
        seg = scale * np.array([[-1.0, 0.5, -np.tan(angle)], [1.0, 0.5, np.tan(angle)]])
        res = ssv_distance(seg, 0.0, tri, 0.0)
        assert float(res.core_distance) <= 1e-12 * scale
        # two nearly parallel segments, 1 apart: KKT holds and the distance is 1
        u = scale * np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
        v = scale * np.array([[0.3, 1.0, 0.0], [1.3, 1.0 + np.sin(angle), 0.0]])
        res = ssv_distance(u, 0.0, v, 0.0)
        assert_kkt(u, v, res)
        assert float(res.core_distance) == pytest.approx(scale, rel=1e-9)
    P1, P2 = random_cores(rng, (200,), 3, 3, spread=1.0)
    assert_kkt(scale * P1, scale * P2, ssv_distance(scale * P1, 0.0, scale * P2, 0.0))
