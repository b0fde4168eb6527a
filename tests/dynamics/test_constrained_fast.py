"""Tests of the lean single-state constrained right-hand side of simulate.

The lean path (ahbm.dynamics.constrained._LeanConstrained with the kernels
of ahbm._engine.jit_constrained) is compared with the general path
(_constrained_fd: Kinematics state, ConstraintSet assembly, KKT solve), with
the equations of motion it solves (crba, nonlinear_effects, the public
constraint Jacobian and point accelerations), and in whole simulations.
"""

import warnings

import numpy as np
import pytest

from ahbm._engine import jit_constrained as jc
from ahbm.dynamics import (
    CoordinateCoupling,
    OrientationConstraint,
    PlaneConstraint,
    PointConstraint,
    PrescribedCoordinate,
    UserConstraint,
    crba,
    nonlinear_effects,
    q_rate,
    simulate,
)
from ahbm.dynamics.constrained import (
    _constrained_fd,
    _LeanConstrained,
    constrained_forward_dynamics,
    project_positions,
    project_velocities,
)
from ahbm.dynamics.constraints import ConstraintSet
from ahbm.dynamics.simulation_system import _System
from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics.configuration import neutral_q, random_model, random_q
from ahbm.kinematics.forward import forward_kinematics, point_acceleration, point_position
from ahbm.models import double_pendulum_3d, human15, triple_pendulum_euler


def _close(a, b, tol=1e-12):
    """Equal to ~1e-12 relative to the size of the reference."""
    scale = 1.0 + np.abs(b).max(initial=0.0)
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


def _general(model, q, qd, tau, cs, t=0.0, method="direct"):
    x, lam = _constrained_fd(model, q, qd, tau, cs, t, method, None)
    return x[0], lam[0]


def _welded_human():
    model = human15()
    q = neutral_q(model)
    T = forward_kinematics(model, q).transforms
    cons = []
    for side in ("r", "l"):
        b = model.body_index(f"foot_{side}")
        heel = model.bodies[b].markers["heel"]
        cons.append(PointConstraint(b, heel, other_point=point_position(model, q, b, heel)))
        cons.append(OrientationConstraint(b, rotation=T[b, :3, :3]))
    cs = ConstraintSet(cons)
    return model, project_positions(model, q, cs), cs


def _random_case(seed):
    """A random tree with point (body-body, ground), orientation, coupling, prescribed rows."""
    rng = np.random.default_rng(seed)
    model = random_model(9, rng=rng, joint_types=("revolute", "euler", "spherical", "free"))
    names = [c for c in model.coordinate_names if not c.endswith(("_qx", "_qy", "_qz", "_qw"))]
    cs = ConstraintSet(
        [
            PointConstraint(
                8, rng.normal(size=3) * 0.2, other=5, other_point=[0.1, 0, 0], axes="xz"
            ),
            PlaneConstraint(7, [0, 0.1, 0], normal=rng.normal(size=3), height=0.3),
            OrientationConstraint(6, other=3, rotation=np.eye(3), axes="y"),
            CoordinateCoupling(names[-1], names[-2], ratio=0.7, offset=0.1),
            CoordinateCoupling(names[-3], names[-4], relation=[[-4, 1], [0, 0.5], [1, 2], [4, 0]]),
            PrescribedCoordinate(names[-5], lambda t: 0.3 * np.sin(2 * t)),
            PrescribedCoordinate(names[-6], [[0, 0], [1, 0.4], [2, 0.1], [5, 1]]),
        ]
    )
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    return model, q, qd, tau, cs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("t", [0.0, 0.7])
def test_random_trees_match_general_path(seed, t):
    model, q, qd, tau, cs = _random_case(seed)
    lean = _LeanConstrained.build(model, cs, "direct", None)
    out = lean(t, q, qd, tau)
    assert out is not None  # the lean path answered (full-rank constraints)
    x_ref, lam_ref = _general(model, q, qd, tau, cs, t)
    _close(out[0], x_ref)
    _close(out[1], lam_ref)
    x_rs, lam_rs = _general(model, q, qd, tau, cs, t, "range_space")
    _close(out[0], x_rs, 1e-11)
    _close(out[1], lam_rs, 1e-11)


@pytest.mark.parametrize("seed", range(3))
def test_equations_of_motion_hold(seed):
    """H q̈ + C − τ = Gᵀλ and G q̈ = γ, with the public functions as reference."""
    model, q, qd, tau, cs = _random_case(seed)
    x, lam = _LeanConstrained.build(model, cs, "range_space", None)(0.4, q, qd, tau)
    H = crba(model, q)
    C = nonlinear_effects(model, q, qd)
    terms = cs.assemble(model, q, qd, t=0.4)
    _close(H @ x + C - tau, terms.G.T @ lam, 1e-11)
    _close(terms.G @ x, terms.gamma, 1e-11)


def test_welded_feet_do_not_accelerate():
    """human15 with both feet welded: heel acceleration zero (public point_acceleration)."""
    model, q, cs = _welded_human()
    system = _System(model, np.zeros(model.nv), (), cs, "direct", None)
    qd = np.random.default_rng(4).normal(size=model.nv)
    G = cs.jacobian(model, q)
    qd = qd - np.linalg.pinv(G) @ (G @ qd)  # admissible velocities
    x, lam = system.accelerations(0.0, q, qd)
    for side in ("r", "l"):
        b = model.body_index(f"foot_{side}")
        heel = model.bodies[b].markers["heel"]
        np.testing.assert_allclose(point_acceleration(model, q, qd, x, b, heel), 0, atol=1e-10)
    x_ref, lam_ref = _general(model, q, qd, np.zeros(model.nv), cs)
    _close(x, x_ref)
    _close(lam, lam_ref)


def test_right_hand_side_matches_general_path():
    """The whole RHS y -> ẏ (coordinate rates too) of a quaternion model."""
    model, q, cs = _welded_human()
    qd = np.random.default_rng(5).normal(size=model.nv) * 0.2
    system = _System(model, np.zeros(model.nv), (), cs, "direct", None)
    assert system.lean is not None
    ydot = system(0.0, np.concatenate([q, qd]))
    x_ref, _ = _general(model, q, qd, np.zeros(model.nv), cs)
    _close(ydot[: model.nq], q_rate(model, q, qd), 1e-15)
    _close(ydot[model.nq :], x_ref)


@pytest.mark.parametrize("seed", range(4))
def test_q_rate_kernel_matches_q_rate(seed):
    rng = np.random.default_rng(seed)
    model = random_model(12, rng=rng)  # every joint type
    q = random_q(model, rng=rng)
    v = rng.normal(size=model.nv)
    out = np.empty(model.nq)
    jc.q_rate_kernel(*jc.rate_plan(model), q, v, out)
    np.testing.assert_array_equal(out, q_rate(model, q, v))


def test_general_path_cases():
    """The lean evaluator is not built where the general path is needed."""
    model = triple_pendulum_euler()
    point = PointConstraint("link3", [0, 0, -1], other_point=[0, 0, -3])
    cs = ConstraintSet([point])
    assert _LeanConstrained.build(model, cs, "direct", None) is not None
    assert _LeanConstrained.build(model, cs, "range_space", None) is not None
    assert _LeanConstrained.build(model, cs, "null_space", None) is None
    assert _LeanConstrained.build(model, None, "direct", None) is None
    user = UserConstraint(lambda t, q: q[:1] - 0.1, 1)
    assert _LeanConstrained.build(model, ConstraintSet([point, user]), "direct", None) is None

    class Sub(PointConstraint):
        pass

    sub = ConstraintSet([Sub("link3", [0, 0, -1], other_point=[0, 0, -3])])
    assert _LeanConstrained.build(model, sub, "direct", None) is None


def test_redundant_constraints_fall_back_and_warn():
    """A redundant set: the lean path declines, the general path warns as before."""
    model = triple_pendulum_euler()
    q = np.full(9, 0.2)
    p = point_position(model, q, 2, [0, 0, -1])
    cs = ConstraintSet(
        [
            PointConstraint("link3", [0, 0, -1], other_point=p),
            PlaneConstraint("link3", [0, 0, -1], normal=[0, 0, 1], height=p[2]),
        ]
    )
    qd = np.random.default_rng(0).normal(size=9) * 0.1
    G = cs.jacobian(model, q)
    qd = qd - np.linalg.pinv(G) @ (G @ qd)
    tau = np.zeros(9)
    system = _System(model, tau, (), cs, "direct", None)
    assert system.lean is not None and system.lean(0.0, q, qd, tau) is None
    with pytest.warns(AhbmWarning, match="redundant"):
        x, lam = system.accelerations(0.0, q, qd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        x_ref, lam_ref = _general(model, q, qd, tau, cs)
    np.testing.assert_array_equal(x, x_ref)
    np.testing.assert_array_equal(lam, lam_ref)


def test_bad_state_goes_to_the_general_path():
    """A zero quaternion: the lean path declines and the general path names `q`."""
    model, q, cs = _welded_human()
    q = q.copy()
    q[3:7] = 0.0
    system = _System(model, np.zeros(model.nv), (), cs, "direct", None)
    assert system.lean(0.0, q, np.zeros(model.nv), np.zeros(model.nv)) is None
    with pytest.raises(DataError, match="q"):
        system.accelerations(0.0, q, np.zeros(model.nv))


def test_range_space_kernel_reports_failures():
    H = np.diag([1.0, 2.0, 3.0])
    G = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])  # rank 1
    x, lam = np.empty(3), np.empty(2)
    assert jc.range_space_kernel(H, G, np.ones(3), np.zeros(2), 1e-8, x, lam) == 2
    assert jc.range_space_kernel(-H, G[:1], np.ones(3), np.zeros(1), 1e-8, x, lam[:1]) == 1
    f = np.array([1.0, 2.0, 3.0])
    assert jc.range_space_kernel(H, G[:1], f, np.array([0.5]), 1e-8, x, lam[:1]) == 0
    # closed form: x0 = 0.5 (constraint), x1 = 1, x2 = 1; λ = H00 x0 − f0 = −0.5
    np.testing.assert_allclose(x, [0.5, 1.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(lam[0], -0.5, atol=1e-15)


def _simulate_both(monkeypatch, model, q0, qd0, cs):
    """The same simulation with the lean path and without it (outputs on one time grid)."""
    kw = dict(constraints=cs, rtol=1e-10, atol=1e-11, t_eval=np.linspace(0, 0.3, 7))
    fast = simulate(model, (0, 0.3), q0, qd0, **kw)
    monkeypatch.setattr(_LeanConstrained, "build", classmethod(lambda cls, *a: None))
    slow = simulate(model, (0, 0.3), q0, qd0, **kw)
    return fast, slow


def test_simulation_matches_general_path(monkeypatch):
    model, q, cs = _welded_human()
    fast, slow = _simulate_both(monkeypatch, model, q, np.zeros(model.nv), cs)
    # both within the integration tolerance of the same solution (the step sizes may differ)
    np.testing.assert_allclose(fast.q, slow.q, atol=1e-8)
    np.testing.assert_allclose(fast.lam, slow.lam, rtol=1e-7, atol=1e-6)


def test_simulation_with_coordinate_constraints_matches(monkeypatch):
    model = double_pendulum_3d()
    q0 = np.array([0.3, 0.2, -0.1, 0.4])
    tip = point_position(model, q0, "pendulum2", [0, 0, -1])
    cs = ConstraintSet(
        [
            PlaneConstraint("pendulum2", [0, 0, -1], height=tip[2]),
            PrescribedCoordinate(
                "pin", (lambda t: 0.3 + 0.2 * t**2, lambda t: 0.4 * t, lambda t: 0.4 + 0 * t)
            ),
            CoordinateCoupling("euler_rx", "euler_ry", ratio=-0.2, offset=-0.02),
        ]
    )
    fast, slow = _simulate_both(monkeypatch, model, q0, np.zeros(4), cs)
    np.testing.assert_allclose(fast.q, slow.q, atol=1e-8)
    np.testing.assert_allclose(fast.qdd, slow.qdd, atol=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_position_jacobian_and_nu_match_constraint_set(seed):
    model, q, qd, _, cs = _random_case(seed)
    lean = _LeanConstrained.build(model, cs, "direct", None)
    for t in (0.0, 1.3):
        _close(lean.position(t, q), cs.position(model, q, t=t), 1e-14)
        _close(lean.nu(t), cs.velocity_rhs(model, q, t=t), 1e-14)
        G, gamma = lean.terms(t, q, qd)
        _close(G, cs.jacobian(model, q, t=t), 1e-14)
        _close(gamma, cs.gamma(model, q, qd, t=t), 1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_projection_matches_public_functions(seed):
    """Positions and velocities projected as project_positions/project_velocities do."""
    model, q, cs = _welded_human()
    rng = np.random.default_rng(seed)
    q = q + rng.normal(size=model.nq) * 1e-3  # off the manifold (quaternion not unit)
    qd = rng.normal(size=model.nv)
    lean = _LeanConstrained.build(model, cs, "direct", None)
    qp, qdp = lean.project(0.0, q, qd, 1e-12)
    q_ref = project_positions(model, q, cs, tol=1e-12)
    _close(qp, q_ref)
    _close(qdp, project_velocities(model, q_ref, qd, cs))
    assert np.abs(cs.position(model, qp)).max() <= 1e-12
    np.testing.assert_allclose(cs.jacobian(model, qp) @ qdp, 0, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_baumgarte_matches_general_path(seed):
    """Off the manifold, Baumgarte's γ − 2α (G q̇ − ν) − β² g as in the general path."""
    model, q, qd, tau, cs = _random_case(seed)
    lean = _LeanConstrained.build(model, cs, "direct", (3.0, 5.0))
    x, lam = lean(0.6, q, qd, tau)
    x_ref, lam_ref = _constrained_fd(model, q, qd, tau, cs, 0.6, "direct", (3.0, 5.0))
    _close(x, x_ref[0])
    _close(lam, lam_ref[0])
    assert np.abs(cs.position(model, q, t=0.6)).max() > 1e-3  # the g term mattered


@pytest.mark.parametrize("method", ["direct", "range_space", "null_space"])
def test_public_single_state_matches_batch_of_one(method):
    """constrained_forward_dynamics on one state (lean path) vs a batch of one (general path)."""
    model, q, qd, tau, cs = _random_case(2)
    x, lam = constrained_forward_dynamics(model, q, qd, tau, cs, method=method, t=0.2)
    xb, lamb = constrained_forward_dynamics(
        model, q[None], qd[None], tau[None], cs, method=method, t=0.2
    )
    assert x.shape == (model.nv,) and lam.shape == (cs.size(model),)
    _close(x, xb[0], 1e-11)
    _close(lam, lamb[0], 1e-11)
    kin = forward_kinematics(model, q, qd)
    xk, lamk = constrained_forward_dynamics(model, None, None, tau, cs, method=method, t=0.2,
                                            kin=kin)  # fmt: skip
    np.testing.assert_array_equal(xk, x)
    np.testing.assert_array_equal(lamk, lam)
