"""Tests of ahbm.dynamics.constrained: the three solvers, RNEA identity, redundancy,
impulses, projection, Baumgarte stabilization and errors."""

import warnings

import numpy as np
import pytest

from ahbm.dynamics import (
    CoordinateCoupling,
    PlaneConstraint,
    PointConstraint,
    PrescribedCoordinate,
    rnea,
)
from ahbm.dynamics.constrained import (
    compute_impulse,
    constrained_forward_dynamics,
    project_positions,
    project_velocities,
)
from ahbm.dynamics.constraints import ConstraintSet
from ahbm.errors import AhbmWarning, DataError, SimulationError
from ahbm.kinematics.configuration import random_model, random_q
from ahbm.kinematics.forward import (
    forward_kinematics,
    kinetic_energy,
    point_acceleration,
    point_position,
)
from ahbm.models import triple_pendulum_euler

METHODS = ["direct", "range_space", "null_space"]


def _contact(model, q):
    """Felis Algorithm 5: contact at (0, 0, -1) on body 3, fixed where it currently is."""
    return ConstraintSet(
        [PointConstraint("link3", [0, 0, -1], other_point=point_position(model, q, 2, [0, 0, -1]))]
    )


def _random_case(seed):
    rng = np.random.default_rng(seed)
    model = random_model(6, rng=rng, joint_types=("revolute", "spherical", "universal", "free"))
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    T = forward_kinematics(model, q).transforms
    p5 = point_position(model, q, 5, [0.1, 0, 0.2])
    r2 = T[2, :3, :3].T @ (p5 - T[2, :3, 3])
    n = np.array([0.1, 0.3, 1.0]) / np.linalg.norm([0.1, 0.3, 1.0])
    h = n @ point_position(model, q, 4, [0.2, 0.1, 0.0])
    cs = ConstraintSet(
        [
            PointConstraint(5, [0.1, 0, 0.2], other=2, other_point=r2, axes="xy"),
            PlaneConstraint(4, [0.2, 0.1, 0.0], normal=n, height=h),
        ]
    )
    return model, q, qd, tau, cs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_solvers_agree_and_satisfy_rnea_identity(seed):
    if seed == 0:
        model = triple_pendulum_euler()
        rng = np.random.default_rng(10)
        q, qd, tau = (rng.uniform(-0.8, 0.8, 9) for _ in range(3))
        cs = _contact(model, q)
    else:
        model, q, qd, tau, cs = _random_case(seed)
    res = {k: constrained_forward_dynamics(model, q, qd, tau, cs, method=k) for k in METHODS}
    qdd, lam = res["direct"]
    for k in METHODS[1:]:
        np.testing.assert_allclose(res[k][0], qdd, atol=1e-10, rtol=1e-10)
        np.testing.assert_allclose(res[k][1], lam, atol=1e-10, rtol=1e-10)
    terms = cs.assemble(model, q, qd)
    # Gᵀλ = H q̈ + C − τ (RNEA residual) and G q̈ = γ
    np.testing.assert_allclose(terms.G.T @ lam, rnea(model, q, qd, qdd) - tau, atol=1e-9)
    np.testing.assert_allclose(terms.G @ qdd, terms.gamma, atol=1e-9)


def test_contact_point_does_not_accelerate():
    model = triple_pendulum_euler()
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-0.5, 0.5, 9), rng.normal(size=9)
    qdd, _ = constrained_forward_dynamics(model, q, qd, np.zeros(9), _contact(model, q))
    np.testing.assert_allclose(point_acceleration(model, q, qd, qdd, 2, [0, 0, -1]), 0, atol=1e-10)


def test_batched_matches_single():
    model = triple_pendulum_euler()
    rng = np.random.default_rng(4)
    q = rng.uniform(-0.5, 0.5, (3, 9))
    qd = rng.normal(size=(3, 9))
    cs = ConstraintSet([PlaneConstraint("link3", [0, 0, -1], height=-2.5)])
    for method in METHODS:
        qdd, lam = constrained_forward_dynamics(model, q, qd, np.zeros(9), cs, method=method)
        for k in range(3):
            a, b = constrained_forward_dynamics(model, q[k], qd[k], np.zeros(9), cs, method=method)
            np.testing.assert_allclose(qdd[k], a, atol=1e-12)
            np.testing.assert_allclose(lam[k], b, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_redundant_constraints_warn_and_give_min_norm_forces(method):
    model = triple_pendulum_euler()
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-0.5, 0.5, 9), rng.normal(size=9)
    single = _contact(model, q)
    double = ConstraintSet(list(single) + list(single))
    ref_qdd, ref_lam = constrained_forward_dynamics(model, q, qd, np.zeros(9), single)
    with pytest.warns(AhbmWarning, match="redundant"):
        qdd, lam = constrained_forward_dynamics(model, q, qd, np.zeros(9), double, method=method)
    np.testing.assert_allclose(qdd, ref_qdd, atol=1e-9)
    # the same total force, shared equally (minimum norm)
    np.testing.assert_allclose(lam[:3], ref_lam / 2, atol=1e-8)
    np.testing.assert_allclose(lam[3:], ref_lam / 2, atol=1e-8)


def test_inconsistent_singular_constraints_raise():
    model = triple_pendulum_euler()
    cs = ConstraintSet(
        [
            PrescribedCoordinate("joint1_rz", lambda t: t**2),
            PrescribedCoordinate("joint1_rz", lambda t: -(t**2)),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        with pytest.raises(SimulationError, match="inconsistent"):
            constrained_forward_dynamics(model, np.zeros(9), np.zeros(9), np.zeros(9), cs)


def test_baumgarte_right_hand_side():
    model = triple_pendulum_euler()
    rng = np.random.default_rng(6)
    q, qd = rng.uniform(-0.5, 0.5, 9), rng.normal(size=9)
    cs = ConstraintSet([PlaneConstraint("link3", [0, 0, -1], height=-2.0)])
    alpha, beta = 5.0, 7.0
    qdd, _ = constrained_forward_dynamics(model, q, qd, np.zeros(9), cs, baumgarte=(alpha, beta))
    t = cs.assemble(model, q, qd)
    expected = t.gamma - 2 * alpha * (t.G @ qd - t.nu) - beta**2 * t.g
    np.testing.assert_allclose(t.G @ qdd, expected, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_inelastic_impulse(seed):
    model = triple_pendulum_euler()
    rng = np.random.default_rng(seed)
    q, qdm = rng.uniform(-0.6, 0.6, 9), rng.normal(size=9)
    cs = _contact(model, q)
    qdp = compute_impulse(model, q, qdm, cs, restitution=0.0)
    G = cs.jacobian(model, q)
    np.testing.assert_allclose(G @ qdp, 0, atol=1e-12)
    assert kinetic_energy(model, q, qdp) <= kinetic_energy(model, q, qdm) + 1e-12
    # the impulse acts only through the constraint directions: H Δq̇ ∈ range(Gᵀ)
    from ahbm.dynamics import crba

    dp = crba(model, q) @ (qdp - qdm)
    Lam = np.linalg.lstsq(G.T, dp, rcond=None)[0]
    np.testing.assert_allclose(G.T @ Lam, dp, atol=1e-10)


def test_elastic_impulse_conserves_energy_and_reverses_velocity():
    model = triple_pendulum_euler()
    rng = np.random.default_rng(8)
    q, qdm = rng.uniform(-0.6, 0.6, 9), rng.normal(size=9)
    cs = ConstraintSet([PlaneConstraint("link3", [0, 0, -1], height=-2.0)])
    qdp = compute_impulse(model, q, qdm, cs, restitution=1.0)
    G = cs.jacobian(model, q)
    np.testing.assert_allclose(G @ qdp, -(G @ qdm), atol=1e-12)
    assert kinetic_energy(model, q, qdp) == pytest.approx(kinetic_energy(model, q, qdm), rel=1e-10)


def test_projection():
    model, q, qd, _, cs = _random_case(1)
    rng = np.random.default_rng(9)
    from ahbm.kinematics.configuration import integrate_q

    q_off = integrate_q(model, q, rng.normal(size=model.nv) * 1e-3)
    np.testing.assert_allclose(cs.position(model, q), 0, atol=1e-12)
    assert np.abs(cs.position(model, q_off)).max() > 1e-5
    qp = project_positions(model, q_off, cs)
    np.testing.assert_allclose(cs.position(model, qp), 0, atol=1e-12)
    vp = project_velocities(model, qp, qd, cs)
    np.testing.assert_allclose(cs.jacobian(model, qp) @ vp, 0, atol=1e-12)


def test_projection_failure_and_bad_input():
    model = triple_pendulum_euler()
    unreachable = ConstraintSet([PointConstraint("link3", [0, 0, -1], other_point=[0, 0, -5])])
    with pytest.raises(SimulationError, match="did not converge"):
        project_positions(model, np.full(9, 0.1), unreachable)
    with pytest.raises(DataError, match="method"):
        constrained_forward_dynamics(model, np.zeros(9), np.zeros(9), np.zeros(9), [],
                                     method="qr")  # fmt: skip
    with pytest.raises(DataError, match="restitution"):
        compute_impulse(model, np.zeros(9), np.zeros(9), unreachable, restitution=2.0)
    with pytest.raises(DataError, match=r"\(\.\.\., 9\)"):
        constrained_forward_dynamics(model, np.zeros(8), np.zeros(9), np.zeros(9), unreachable)


def test_coupling_reduces_to_single_dof():
    """A coupled pair behaves like one coordinate: compare with a hand-built 1-DOF equation."""
    model = triple_pendulum_euler()
    cs = ConstraintSet([CoordinateCoupling("joint2_ry", "joint1_ry", ratio=-1.0)])
    rng = np.random.default_rng(12)
    q, qd = np.zeros(9), np.zeros(9)
    q[1], q[4] = 0.3, -0.3
    qd[1], qd[4] = 0.5, -0.5
    qdd, lam = constrained_forward_dynamics(model, q, qd, rng.normal(size=9) * 0, cs)
    assert qdd[4] == pytest.approx(-qdd[1])
    # the reduced equation: eᵀ (H q̈ + C) = 0 along e = d q / d s
    from ahbm.dynamics import crba, nonlinear_effects

    e = np.zeros(9)
    e[1], e[4] = 1.0, -1.0
    assert e @ (crba(model, q) @ qdd + nonlinear_effects(model, q, qd)) == pytest.approx(
        0, abs=1e-10
    )


def test_matches_pinocchio_kkt_solution():
    """Peer check: pin.aba + pin.computeMinverse + frame Jacobian/acceleration + KKT in numpy."""
    pin = pytest.importorskip("pinocchio")
    from ahbm.models import double_pendulum_3d

    model = double_pendulum_3d()
    pm = pin.Model()
    pm.gravity.linear = model.gravity
    j1 = pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "pin")
    pm.appendBodyToJoint(j1, pin.Inertia(1.0, np.array([0, 0, -0.5]), np.eye(3)),
                         pin.SE3.Identity())  # fmt: skip
    parent, placement = j1, pin.SE3(np.eye(3), np.array([0, 0, -1.0]))
    for k, axis in enumerate("ZXY"):
        parent = pm.addJoint(parent, getattr(pin, f"JointModelR{axis}")(),
                             placement if k == 0 else pin.SE3.Identity(), f"e{k}")  # fmt: skip
    pm.appendBodyToJoint(parent, pin.Inertia(1.0, np.array([0, 0, -0.5]), np.eye(3)),
                         pin.SE3.Identity())  # fmt: skip
    fid = pm.addFrame(
        pin.Frame("tip", parent, 0, pin.SE3(np.eye(3), np.array([0, 0, -1.0])), pin.OP_FRAME)
    )
    data = pm.createData()
    rng = np.random.default_rng(21)
    LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    for _ in range(3):
        q, qd, tau = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
        cs = ConstraintSet([PointConstraint("pendulum2", [0, 0, -1], axes="xz",
                            other_point=point_position(model, q, 1, [0, 0, -1]))])  # fmt: skip
        a0 = pin.aba(pm, data, q, qd, tau)
        Minv = pin.computeMinverse(pm, data, q)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        pin.computeJointJacobians(pm, data, q)
        pin.forwardKinematics(pm, data, q, qd, np.zeros(4))
        pin.updateFramePlacements(pm, data)
        G = pin.getFrameJacobian(pm, data, fid, LWA)[[0, 2]]
        gamma = -pin.getFrameClassicalAcceleration(pm, data, fid, LWA).linear[[0, 2]]
        lam_ref = np.linalg.solve(G @ Minv @ G.T, gamma - G @ a0)
        qdd_ref = a0 + Minv @ G.T @ lam_ref
        for method in METHODS:
            qdd, lam = constrained_forward_dynamics(model, q, qd, tau, cs, method=method)
            np.testing.assert_allclose(qdd, qdd_ref, atol=1e-10)
            np.testing.assert_allclose(lam, lam_ref, atol=1e-10)


@pytest.mark.parametrize("batch", [(), (4,), (2, 3)], ids=str)
def test_constrained_dynamics_with_kin_equal_recomputation(batch):
    model, q0, qd0, tau0, cs = _random_case(1)
    rng = np.random.default_rng(5)
    q = np.broadcast_to(q0, batch + q0.shape).copy()
    qd = qd0 + 0.1 * rng.normal(size=batch + qd0.shape)
    tau = tau0 + rng.normal(size=batch + tau0.shape)
    kin = forward_kinematics(model, q, qd)
    for method in METHODS:
        ref = constrained_forward_dynamics(model, q, qd, tau, cs, method=method, t=0.3)
        for qq, vv in ((None, None), (q, qd)):
            got = constrained_forward_dynamics(
                model, qq, vv, tau, cs, method=method, t=0.3, kin=kin
            )
            np.testing.assert_array_equal(got[0], ref[0])
            np.testing.assert_array_equal(got[1], ref[1])
    with pytest.raises(DataError, match="without velocities"):
        constrained_forward_dynamics(model, None, None, tau, cs, kin=forward_kinematics(model, q))
    if batch:
        with pytest.raises(DataError, match="batch shape"):
            constrained_forward_dynamics(model, None, None, tau[..., None, :], cs, kin=kin)


def test_projections_and_impulse_with_kin():
    model, q, qd, tau, cs = _random_case(2)
    kin = forward_kinematics(model, q)
    np.testing.assert_array_equal(
        project_velocities(model, None, qd, cs, kin=kin), project_velocities(model, q, qd, cs)
    )
    np.testing.assert_array_equal(
        compute_impulse(model, None, qd, cs, restitution=0.5, kin=kin),
        compute_impulse(model, q, qd, cs, restitution=0.5),
    )
    with pytest.raises(TypeError):
        project_velocities(model, 0.0, q, qd, cs)  # t is keyword-only since 0.2
