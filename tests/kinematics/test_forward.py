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
from ahbm.kinematics.joints import JOINT_TYPES

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


# ----------------------------------------------------------------------------
# the kinematic state (kin=)
# ----------------------------------------------------------------------------

BATCHES = [(), (5,), (2, 3)]


def _state(seed, batch):
    rng = np.random.default_rng(300 + seed)
    model = random_model(9, rng=rng, joint_types=ALL)
    q = random_q(model, rng=rng, size=batch)
    qd = rng.normal(size=batch + (model.nv,))
    qdd = rng.normal(size=batch + (model.nv,))
    return model, q, qd, qdd


R3 = np.array([0.1, -0.2, 0.3])
# each case: (function of (model, q, qd, qdd, b, kin) with kin=None recomputing)
KIN_CASES = {
    "point_position": lambda m, q, qd, qdd, b, kin: point_position(m, q, b, R3, kin=kin),
    "point_velocity": lambda m, q, qd, qdd, b, kin: point_velocity(m, q, qd, b, R3, kin=kin),
    "point_acceleration": lambda m, q, qd, qdd, b, kin: point_acceleration(
        m, q, qd, qdd, b, R3, kin=kin
    ),
    "jacobian_dot_times_qd": lambda m, q, qd, qdd, b, kin: jacobian_dot_times_qd(
        m, q, qd, b, R3, kin=kin
    ),
    "body_jacobian_local": lambda m, q, qd, qdd, b, kin: body_jacobian(m, q, b, kin=kin),
    "body_jacobian_world": lambda m, q, qd, qdd, b, kin: body_jacobian(
        m, q, b, frame="world", kin=kin
    ),
    "body_jacobian_aligned": lambda m, q, qd, qdd, b, kin: body_jacobian(
        m, q, b, frame="local_world_aligned", kin=kin
    ),
    "point_jacobian": lambda m, q, qd, qdd, b, kin: point_jacobian(m, q, b, R3, kin=kin),
    "center_of_mass": lambda m, q, qd, qdd, b, kin: center_of_mass(m, q, kin=kin),
    "com_velocity": lambda m, q, qd, qdd, b, kin: com_velocity(m, q, qd, kin=kin),
    "com_jacobian": lambda m, q, qd, qdd, b, kin: com_jacobian(m, q, kin=kin),
    "momentum": lambda m, q, qd, qdd, b, kin: momentum(m, q, qd, kin=kin),
    "kinetic_energy": lambda m, q, qd, qdd, b, kin: kinetic_energy(m, q, qd, kin=kin),
    "potential_energy": lambda m, q, qd, qdd, b, kin: potential_energy(m, q, kin=kin),
}


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("name", list(KIN_CASES))
def test_kin_gives_the_results_of_recomputation(name, batch):
    fn = KIN_CASES[name]
    for seed in range(2):
        model, q, qd, qdd = _state(seed, batch)
        kin = forward_kinematics(model, q, qd, qdd)
        for b in (0, model.n_bodies - 1):
            ref = fn(model, q, qd, qdd, b, None)
            # with q (and qd, qdd) None, and with the same arrays given again
            np.testing.assert_array_equal(fn(model, None, None, None, b, kin), ref)
            np.testing.assert_array_equal(fn(model, q, qd, qdd, b, kin), ref)
            assert ref.shape[: len(batch)] == batch


def test_point_acceleration_takes_qdd_when_the_state_has_none():
    model, q, qd, qdd = _state(0, (4,))
    kin = forward_kinematics(model, q, qd)
    b = model.n_bodies - 1
    np.testing.assert_allclose(
        point_acceleration(model, None, None, qdd, b, R3, kin=kin),
        point_acceleration(model, q, qd, qdd, b, R3),
        rtol=1e-13,
        atol=1e-13,
    )


@pytest.mark.parametrize("batch", BATCHES, ids=str)
def test_state_arrays_by_finite_differences(batch):
    """Poses, velocities, accelerations and DOF columns of the state agree with derivatives."""
    model, q, qd, qdd = _state(2, batch)
    kin = forward_kinematics(model, q, qd, qdd)
    nb = model.n_bodies
    assert kin.batch_shape == batch and kin.model is model
    assert kin.rotations.shape == batch + (nb, 3, 3)
    np.testing.assert_array_equal(kin.transforms[..., :3, :3], kin.rotations)
    np.testing.assert_array_equal(kin.transforms[..., :3, 3], kin.positions)
    # q(t) = q ⊕ (t qd + t²/2 qdd): velocities and accelerations from central differences
    qp = integrate_q(model, q, qd * H + 0.5 * qdd * H**2)
    qm = integrate_q(model, q, -qd * H + 0.5 * qdd * H**2)
    kp = forward_kinematics(model, qp, qd + H * qdd)
    km = forward_kinematics(model, qm, qd - H * qdd)
    Rt = np.swapaxes(kin.rotations, -1, -2)
    dR = (kp.rotations - km.rotations) / (2 * H)
    W = Rt @ dR  # [ω]× in body coordinates
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    vo = np.einsum("...ij,...j->...i", Rt, (kp.positions - km.positions) / (2 * H))
    np.testing.assert_allclose(kin.velocities, np.concatenate([w, vo], axis=-1), atol=1e-7)
    np.testing.assert_allclose(
        kin.accelerations, (kp.velocities - km.velocities) / (2 * H), atol=1e-6
    )
    # bias accelerations: the accelerations at q̈ = 0
    np.testing.assert_allclose(
        kin.bias_accelerations,
        forward_kinematics(model, q, qd, np.zeros_like(qdd)).accelerations,
        atol=1e-12,
    )
    # world columns: the world velocity (linear part at the world origin) per unit q̇
    Sw = kin.world_columns
    assert Sw.shape == batch + (6, model.nv)
    for i in range(nb):
        R, p = kin.rotations[..., i, :, :], kin.positions[..., i, :]
        wi = np.einsum("...ij,...j->...i", R, kin.velocities[..., i, :3])
        vi = np.einsum("...ij,...j->...i", R, kin.velocities[..., i, 3:]) + np.cross(p, wi)
        Jw = body_jacobian(model, q, i, frame="world")
        np.testing.assert_allclose(np.concatenate([wi, vi], axis=-1),
                                   np.einsum("...ij,...j->...i", Jw, qd), atol=1e-12)  # fmt: skip
        dofs = model.support_dofs[i]
        np.testing.assert_allclose(Jw[..., dofs], Sw[..., dofs], atol=1e-15)


def test_state_is_frozen_and_short_to_print():
    model, q, qd, qdd = _state(0, (100,))
    kin = forward_kinematics(model, q, qd)
    with pytest.raises(AttributeError):
        kin.q = q
    with pytest.raises(ValueError):
        kin.positions[0, 0, 0] = 1.0
    text = repr(kin)
    assert "positions=array(100, 9, 3)" in text and len(text) < 400
    assert kin.accelerations is None
    q2 = q.copy()
    kin2 = forward_kinematics(model, q2)
    q2[:] = 0.0  # the state keeps its own copy
    np.testing.assert_array_equal(kin2.q, q)


def test_wrong_state_raises_with_what_to_pass():
    model, q, qd, qdd = _state(0, (5,))
    other, *_ = _state(1, (5,))
    kin = forward_kinematics(model, q, qd)
    with pytest.raises(DataError, match="computed for model .* pass kin=forward_kinematics"):
        point_position(other, None, 0, kin=kin)
    with pytest.raises(DataError, match="without velocities.*forward_kinematics\\(model, q, qd\\)"):
        point_velocity(model, None, None, 0, kin=forward_kinematics(model, q))
    with pytest.raises(DataError, match="without velocities"):
        momentum(model, None, None, kin=forward_kinematics(model, q))
    with pytest.raises(DataError, match="batch shape \\(3,\\).*batch shape \\(5,\\)"):
        point_position(model, q[:3], 0, kin=kin)
    with pytest.raises(DataError, match="`q` differs"):
        center_of_mass(model, q + 0.1, kin=kin)
    with pytest.raises(DataError, match="`qd` differs"):
        kinetic_energy(model, None, qd + 1.0, kin=kin)
    with pytest.raises(DataError, match="must be a Kinematics"):
        point_position(model, None, 0, kin=(q, qd))
    with pytest.raises(DataError, match="without accelerations"):
        point_acceleration(model, None, None, None, 0, kin=kin)
    with pytest.raises(DataError, match="`q` is None"):
        point_position(model, None, 0)


def test_state_of_an_edited_model_is_refused():
    model, q, qd, qdd = _state(0, (2,))
    kin = forward_kinematics(model, q, qd)
    point_position(model, None, 0, kin=kin)
    model.gravity = [0.0, -9.81, 0.0]  # any change makes a new model version
    with pytest.raises(DataError, match="has changed since `kin` was computed"):
        point_position(model, None, 0, kin=kin)
    np.testing.assert_array_equal(
        point_position(model, None, 0, kin=forward_kinematics(model, q)),
        point_position(model, q, 0),
    )
