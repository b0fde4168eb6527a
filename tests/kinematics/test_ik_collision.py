"""fit_markers(collision=...): markers that pull an arm through the trunk are fitted outside it."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import DataError, ModelError
from ahbm.kinematics import CollisionShape, distances, fit_markers, point_position
from ahbm.kinematics.tree import Model

MARGIN = 0.01


def _arm_model():
    """A fixed trunk (capsule), a clavicle and a right arm on an Euler shoulder with an elbow."""
    m = Model("trunk_arm", (0.0, 0.0, -9.81))
    m.add_body("trunk", "ground", {"type": "fixed"})
    m.add_body("clavicle", "trunk", {"type": "fixed"}, position=[0, -0.1, 0.3], mass=0.2)
    euler = {"type": "euler", "sequence": "YXZ", "name": "shoulder"}
    m.add_body("upper_arm", "clavicle", euler, position=[0, -0.1, 0], mass=2.0,
               markers={"shoulder": [0, 0, -0.02], "arm": [0.03, 0, -0.15]})  # fmt: skip
    m.add_body("forearm", "upper_arm", {"type": "revolute", "axis": [0, -1, 0], "name": "elbow"},
               position=[0, 0, -0.3], mass=1.2,
               markers={"elbow": [0, -0.03, 0], "wrist": [0, 0, -0.27],
                        "forearm": [0.03, 0, -0.14]})  # fmt: skip
    m.collision = [
        CollisionShape.capsule("trunk", "trunk", [0, 0, -0.2], [0, 0, 0.25], 0.13),
        CollisionShape.capsule("upper_arm", "upper_arm", [0, 0, -0.06], [0, 0, -0.28], 0.04),
        CollisionShape.capsule("forearm", "forearm", [0, 0, -0.02], [0, 0, -0.26], 0.035),
    ]
    return m


def _markers_through_the_trunk(m, n=9):
    """Adduct the arm (about the forward axis) from 20° out to 55° in: through the trunk."""
    q = np.zeros((n, m.nq))
    names = m.coordinate_names
    q[:, names.index("shoulder_rx")] = np.linspace(-0.35, 0.95, n)  # + adducts the right arm
    q[:, names.index("shoulder_ry")] = 0.4
    q[:, names.index("elbow")] = 0.6
    mk = {}
    for body in m.bodies:
        for name, local in body.markers.items():
            mk[name] = point_position(m, q, body.name, local)
    return q, mk


def test_collision_keeps_the_arm_outside_the_trunk():
    m = _arm_model()
    q_true, mk = _markers_through_the_trunk(m)
    pairs = [("trunk", "upper_arm"), ("trunk", "forearm")]
    truth = distances(m, q_true, pairs).distance
    assert truth.min() < -0.1  # the marker motion passes through the trunk

    free = fit_markers(m, mk)
    d_free = distances(m, free.q, pairs).distance
    assert d_free.min() < -0.1  # without the option the shapes interpenetrate
    np.testing.assert_allclose(free.rms, 0.0, atol=1e-7)

    # pressed on the trunk, the arm slides along a flat valley of the marker cost:
    # a few frames need a few hundred iterations
    res = fit_markers(m, mk, collision="all", collision_margin=MARGIN, max_iter=500)
    assert res.converged.all()
    d = distances(m, res.q, pairs).distance
    assert d.min() >= MARGIN - 1e-6
    blocked = (truth < MARGIN).any(axis=1)
    assert blocked.sum() >= 3
    # where the markers leave the arm clear of the trunk, the fit is the free fit
    np.testing.assert_allclose(res.rms[~blocked], 0.0, atol=1e-6)
    # where they do not, the arm rests on the margin
    assert np.all(d[blocked].min(axis=1) <= MARGIN + 1e-6)
    assert np.all(res.rms[blocked] > 1e-3)

    # the same with the pairs named and the frames in blocks (vectorized along frames)
    res_b = fit_markers(m, mk, collision=pairs, collision_margin=MARGIN, block_size=5,
                        max_iter=500)  # fmt: skip
    d_b = distances(m, res_b.q, pairs).distance
    assert d_b.min() >= MARGIN - 1e-6


def test_collision_weight_trades_markers_against_penetration():
    m = _arm_model()
    _, mk = _markers_through_the_trunk(m, n=7)
    pairs = [("trunk", "upper_arm"), ("trunk", "forearm")]
    soft = fit_markers(m, mk, collision=pairs, collision_weight=10.0, max_iter=500)
    hard = fit_markers(m, mk, collision=pairs, max_iter=500, warn=False)
    d_soft = distances(m, soft.q, pairs).distance.min()
    d_hard = distances(m, hard.q, pairs).distance.min()
    assert d_soft < d_hard - 1e-3
    assert d_hard >= -1e-6


def test_collision_with_holonomic_constraints_together():
    m = _arm_model()
    _, mk = _markers_through_the_trunk(m, n=9)
    i = m.coordinate_names.index("shoulder_rz")

    def no_rotation(kin):  # g = q_rz: the arm's axial rotation held at 0
        Q = kin.q.reshape(-1, m.nq)
        G = np.zeros((Q.shape[0], 1, m.nv))
        G[:, 0, i] = 1.0
        return Q[:, i : i + 1], G

    res = fit_markers(m, mk, collision="all", collision_margin=MARGIN, constraints=no_rotation,
                      max_iter=500)  # fmt: skip
    assert np.abs(res.q[:, i]).max() < 1e-6
    d = distances(m, res.q, [("trunk", "upper_arm"), ("trunk", "forearm")]).distance
    assert d.min() >= MARGIN - 1e-6


def test_collision_bad_arguments():
    m = _arm_model()
    _, mk = _markers_through_the_trunk(m, n=2)
    with pytest.raises(DataError, match="not a collision shape"):
        fit_markers(m, mk, collision=[("trunk", "leg")])
    with pytest.raises(DataError, match="collision_margin"):
        fit_markers(m, mk, collision="all", collision_margin=-0.1)
    with pytest.raises(DataError, match="collision_weight"):
        fit_markers(m, mk, collision="all", collision_weight=0.0)
    with pytest.raises(DataError, match="`collision` must be"):
        fit_markers(m, mk, collision="some")
    bare = _arm_model()
    bare.collision = []
    with pytest.raises(ModelError, match="collision shapes"):
        fit_markers(bare, mk, collision="all")


def test_collision_moves_coordinates_without_markers():
    """A shape on a body without markers (an Euler joint the markers do not see) is pushed
    off the arm by the penalty alone; the damped step stays regular."""
    m = _arm_model()
    m.add_body("ball", "trunk", {"type": "euler", "sequence": "XYZ", "name": "ball"},
               position=[0.0, -0.2, 0.3], mass=0.5)  # fmt: skip
    m.collision = [*m.collision, CollisionShape.sphere("ball", "ball", [0, 0, -0.2], 0.05)]
    _, mk = _markers_through_the_trunk(m, n=3)
    pairs = [("ball", "upper_arm"), ("ball", "forearm"), ("trunk", "upper_arm")]
    q0 = np.zeros(m.nq)
    assert distances(m, q0, pairs).distance.min() < -0.05  # the ball sits in the arm
    res = fit_markers(m, mk, q0=q0, collision=pairs, collision_margin=MARGIN, max_iter=500,
                      warn=False)  # fmt: skip
    d = distances(m, res.q, pairs).distance
    assert d.min() >= MARGIN - 1e-6
    assert np.isfinite(res.q).all()
