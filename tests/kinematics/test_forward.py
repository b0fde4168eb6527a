"""Tests of ahbm.kinematics.forward against finite differences, closed forms
and identities (the Pinocchio cross-checks are in tests/peers)."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import DataError, ModelError
from ahbm.kinematics import (
    Model,
    body_jacobian,
    center_of_mass,
    com_jacobian,
    com_velocity,
    forward_kinematics,
    integrate_q,
    jacobian_dot_times_qd,
    kinetic_energy,
    momentum,
    point_acceleration,
    point_jacobian,
    point_position,
    point_velocity,
    potential_energy,
    random_model,
    random_q,
)
from ahbm.kinematics.tree import JOINT_TYPES

ALL = tuple(JOINT_TYPES)
H = 1e-6


@pytest.fixture(params=[0, 1, 2], ids=lambda s: f"seed{s}")
def tree(request):
    rng = np.random.default_rng(100 + request.param)
    model = random_model(7, rng=rng, joint_types=ALL)
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    qdd = rng.normal(size=model.nv)
    return model, q, qd, qdd, rng


def test_single_pendulum_closed_form():
    m = Model(gravity=[0, 0, -9.81])
    m.add_body("rod", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=2.0,
               com=[0, 0, -0.5], inertia=np.diag([0.1, 0.1, 0.01]))  # fmt: skip
    th, thd, thdd = 0.4, 1.3, -0.7
    p = point_position(m, [th], "rod", [0, 0, -1])
    np.testing.assert_allclose(p, [0, np.sin(th), -np.cos(th)], atol=1e-15)
    v = point_velocity(m, [th], [thd], "rod", [0, 0, -1])
    np.testing.assert_allclose(v, thd * np.array([0, np.cos(th), np.sin(th)]), atol=1e-15)
    a = point_acceleration(m, [th], [thd], [thdd], "rod", [0, 0, -1])
    ref = thdd * np.array([0, np.cos(th), np.sin(th)]) + thd**2 * np.array(
        [0, -np.sin(th), np.cos(th)]
    )
    np.testing.assert_allclose(a, ref, atol=1e-14)
    # energies: T = ½ (I_xx + m l²) θ̇², V = −m g·c
    T = kinetic_energy(m, [th], [thd])
    assert T == pytest.approx(0.5 * (0.1 + 2.0 * 0.25) * thd**2, rel=1e-14)
    V = potential_energy(m, [th])
    assert V == pytest.approx(-2.0 * 9.81 * 0.5 * np.cos(th), rel=1e-14)


def test_batch_equals_per_frame(tree):
    model, q, qd, qdd, rng = tree
    qs = random_q(model, rng=rng, size=(2, 3))
    qds = rng.normal(size=(2, 3, model.nv))
    qdds = rng.normal(size=(2, 3, model.nv))
    kin = forward_kinematics(model, qs, qds, qdds)
    assert kin.transforms.shape == (2, 3, model.n_bodies, 4, 4)
    J = point_jacobian(model, qs, model.n_bodies - 1, [0.1, 0.2, 0.3])
    h = momentum(model, qs, qds)
    for idx in np.ndindex(2, 3):
        k1 = forward_kinematics(model, qs[idx], qds[idx], qdds[idx])
        np.testing.assert_allclose(kin.transforms[idx], k1.transforms, atol=1e-13)
        np.testing.assert_allclose(kin.velocities[idx], k1.velocities, atol=1e-13)
        np.testing.assert_allclose(kin.accelerations[idx], k1.accelerations, atol=1e-13)
        np.testing.assert_allclose(
            J[idx], point_jacobian(model, qs[idx], model.n_bodies - 1, [0.1, 0.2, 0.3]),
            atol=1e-13,
        )  # fmt: skip
        np.testing.assert_allclose(h[idx], momentum(model, qs[idx], qds[idx]), atol=1e-12)


def test_broadcast_q_with_batch_qd(tree):
    model, q, qd, qdd, rng = tree
    qds = rng.normal(size=(4, model.nv))
    kin = forward_kinematics(model, q, qds)
    assert kin.velocities.shape == (4, model.n_bodies, 6)


def test_transforms_are_rigid(tree):
    model, q, *_ = tree
    T = forward_kinematics(model, q).transforms
    R = T[..., :3, :3]
    np.testing.assert_allclose(R @ np.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)
    np.testing.assert_array_equal(T[..., 3, :], np.broadcast_to([0, 0, 0, 1], T[..., 3, :].shape))


def test_point_velocity_and_acceleration_by_finite_differences(tree):
    model, q, qd, qdd, rng = tree
    b = model.n_bodies - 1
    r = np.array([0.2, -0.1, 0.3])
    # q(t) with q̇(t) = qd + t qdd: exact to O(h²)
    qp = integrate_q(model, q, qd * H + 0.5 * qdd * H**2)
    qm = integrate_q(model, q, -qd * H + 0.5 * qdd * H**2)
    v_fd = (point_position(model, qp, b, r) - point_position(model, qm, b, r)) / (2 * H)
    np.testing.assert_allclose(point_velocity(model, q, qd, b, r), v_fd, atol=1e-7)
    a_fd = (
        point_velocity(model, qp, qd + H * qdd, b, r)
        - point_velocity(model, qm, qd - H * qdd, b, r)
    ) / (2 * H)
    np.testing.assert_allclose(point_acceleration(model, q, qd, qdd, b, r), a_fd, atol=1e-6)


def test_jacobians_by_finite_differences(tree):
    model, q, qd, qdd, rng = tree
    r = np.array([0.3, 0.1, -0.2])
    for b in range(model.n_bodies):
        J = point_jacobian(model, q, b, r)
        J_fd = np.empty_like(J)
        for k in range(model.nv):
            e = np.zeros(model.nv)
            e[k] = H
            J_fd[:, k] = (
                point_position(model, integrate_q(model, q, e), b, r)
                - point_position(model, integrate_q(model, q, -e), b, r)
            ) / (2 * H)
        np.testing.assert_allclose(J, J_fd, atol=1e-7)
        np.testing.assert_allclose(J @ qd, point_velocity(model, q, qd, b, r), atol=1e-12)
        # p̈ = J q̈ + J̇ q̇
        np.testing.assert_allclose(
            J @ qdd + jacobian_dot_times_qd(model, q, qd, b, r),
            point_acceleration(model, q, qd, qdd, b, r),
            atol=1e-11,
        )


@pytest.mark.parametrize("frame", ["local", "world", "local_world_aligned"])
def test_body_jacobian_gives_body_velocity(tree, frame):
    model, q, qd, qdd, rng = tree
    kin = forward_kinematics(model, q, qd)
    for b in range(model.n_bodies):
        v = body_jacobian(model, q, b, frame=frame) @ qd
        vl = kin.velocities[b]
        R, p = kin.transforms[b, :3, :3], kin.transforms[b, :3, 3]
        w = R @ vl[:3]
        vo = R @ vl[3:]
        ref = {"local": vl, "local_world_aligned": np.r_[w, vo],
               "world": np.r_[w, vo + np.cross(p, w)]}[frame]  # fmt: skip
        np.testing.assert_allclose(v, ref, atol=1e-12)


def test_com_functions(tree):
    model, q, qd, qdd, rng = tree
    Jc = com_jacobian(model, q)
    J_fd = np.empty_like(Jc)
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = H
        J_fd[:, k] = (
            center_of_mass(model, integrate_q(model, q, e))
            - center_of_mass(model, integrate_q(model, q, -e))
        ) / (2 * H)
    np.testing.assert_allclose(Jc, J_fd, atol=1e-7)
    np.testing.assert_allclose(com_velocity(model, q, qd), Jc @ qd, atol=1e-12)
    # COM = mass-weighted mean of body COMs
    c = (
        sum(
            model.masses[i] * point_position(model, q, i, model.coms[i])
            for i in range(model.n_bodies)
        )
        / model.total_mass
    )
    np.testing.assert_allclose(center_of_mass(model, q), c, atol=1e-13)


def test_momentum_identities(tree):
    model, q, qd, qdd, rng = tree
    h = momentum(model, q, qd)
    np.testing.assert_allclose(h[3:], model.total_mass * com_velocity(model, q, qd), atol=1e-12)
    # angular momentum about the COM is invariant to a uniform translation velocity:
    # compare with the sum of m (c_i − c) × ċ_i + R I Rᵀ ω computed from point velocities
    c = center_of_mass(model, q)
    kin = forward_kinematics(model, q, qd)
    k = np.zeros(3)
    for i in range(model.n_bodies):
        ci = point_position(model, q, i, model.coms[i])
        vi = point_velocity(model, q, qd, i, model.coms[i])
        R = kin.transforms[i, :3, :3]
        w = R @ kin.velocities[i, :3]
        k += model.masses[i] * np.cross(ci - c, vi) + R @ model.inertias[i] @ R.T @ w
    np.testing.assert_allclose(h[:3], k, atol=1e-12)


def test_kinetic_energy_from_point_masses(tree):
    model, q, qd, qdd, rng = tree
    kin = forward_kinematics(model, q, qd)
    T = 0.0
    for i in range(model.n_bodies):
        vc = point_velocity(model, q, qd, i, model.coms[i])
        w = kin.velocities[i, :3]
        T += 0.5 * model.masses[i] * vc @ vc + 0.5 * w @ model.inertias[i] @ w
    assert kinetic_energy(model, q, qd) == pytest.approx(T, rel=1e-12)


def test_errors():
    rng = np.random.default_rng(0)
    model = random_model(3, rng=rng)
    q = random_q(model, rng=rng)
    with pytest.raises(DataError, match="Expected `qd` to have shape"):
        forward_kinematics(model, q, np.zeros(model.nv + 1))
    with pytest.raises(DataError, match="`qdd` given without `qd`"):
        forward_kinematics(model, q, None, np.zeros(model.nv))
    with pytest.raises(ModelError, match="unknown body 'foot'"):
        point_position(model, q, "foot")
    with pytest.raises(ModelError, match="body index 9 out of range"):
        point_position(model, q, 9)
    with pytest.raises(DataError, match="`frame` must be one of"):
        body_jacobian(model, q, 0, frame="global")
    with pytest.raises(DataError, match="Expected `point`"):
        point_position(model, q, 0, [1, 2])
    with pytest.raises(DataError, match="do not broadcast"):
        forward_kinematics(model, random_q(model, rng=rng, size=3), np.zeros((2, model.nv)))
    with pytest.raises(ModelError, match="expected a Model"):
        forward_kinematics("model", q)
    empty = Model()
    empty.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]})
    with pytest.raises(ModelError, match="zero total mass"):
        center_of_mass(empty, [0.0])
