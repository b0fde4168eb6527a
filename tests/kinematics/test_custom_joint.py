"""Custom joints and child offset frames: equivalences, finite differences, identities."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm import dynamics
from ahbm.dynamics import reference
from ahbm.errors import ModelError
from ahbm.kinematics import (
    Model,
    center_of_mass,
    difference_q,
    forward_kinematics,
    integrate_q,
    kinetic_energy,
    load_model,
    momentum,
    neutral_q,
    point_acceleration,
    point_jacobian,
    point_position,
    potential_energy,
    random_q,
    save_model,
)
from ahbm.kinematics import functions as fn
from ahbm.kinematics.configuration import random_model
from ahbm.kinematics.joints import JOINT_TYPES
from ahbm.kinematics.rotations import euler_to_matrix

LIN = fn.LinearFunction(1.0, 0.0)
ZERO = fn.Constant(0.0)


def _axes(rot, trans):
    """6 transform items: rot/trans = list of (axis, coordinate or None, function)."""
    return [{"axis": a, "coordinate": c, "function": f} for a, c, f in [*rot, *trans]]


def _inertia(rng):
    d = rng.uniform(0.05, 0.3, 3)
    Q = euler_to_matrix(rng.normal(size=3), "XYZ")
    return Q @ np.diag([d[0] + d[1], d[1] + d[2], d[0] + d[2]]) @ Q.T


def _pair(kind):
    """The same motion as a custom joint and as an ordinary ahbm joint."""
    ex, ey, ez = [1, 0, 0], [0, 1, 0], [0, 0, 1]
    if kind == "free_euler":
        ordinary = {"type": "free_euler", "sequence": "ZXY"}
        coords = ["tx", "ty", "tz", "rz", "rx", "ry"]
        custom = _axes([(ez, "rz", LIN), (ex, "rx", LIN), (ey, "ry", LIN)],
                       [(ex, "tx", LIN), (ey, "ty", LIN), (ez, "tz", LIN)])  # fmt: skip
    elif kind == "revolute":
        a = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
        ordinary = {"type": "revolute", "axis": a}
        coords = ["r"]
        custom = _axes([(a, "r", LIN), (ex, None, ZERO), (ey, None, ZERO)],
                       [(ex, None, ZERO), (ey, None, ZERO), (ez, None, ZERO)])  # fmt: skip
    else:  # planar: x, y translation then rotation about z
        ordinary = {"type": "planar"}
        coords = ["x", "y", "rz"]
        custom = _axes([(ez, "rz", LIN), (ex, None, ZERO), (ey, None, ZERO)],
                       [(ex, "x", LIN), (ey, "y", LIN), (ez, None, ZERO)])  # fmt: skip
    models = []
    for joint in ({"type": "custom", "coordinates": coords, "transform": custom},
                  dict(ordinary, coordinates=coords)):  # fmt: skip
        r = np.random.default_rng(2)
        m = Model(gravity=[0.5, -1.0, -9.81])
        m.add_body("base", "ground", {"type": "revolute", "axis": [0, 1, 0]}, mass=2.0,
                   com=[0.1, 0.0, -0.2], inertia=_inertia(r))  # fmt: skip
        m.add_body("link", "base", joint, position=[0.1, -0.2, -0.5],
                   rotation=euler_to_matrix([0.2, 0.3, -0.1], "XYZ"), mass=1.5,
                   com=[0.05, 0.1, -0.15], inertia=_inertia(r),
                   markers={"m": [0.02, 0.3, -0.1]})  # fmt: skip
        m.add_body("tip", "link", {"type": "revolute", "axis": [1, 0, 0]},
                   position=[0.0, 0.0, -0.4], mass=0.7, com=[0, 0, -0.1],
                   inertia=_inertia(r))  # fmt: skip
        models.append(m)
    return models


@pytest.mark.parametrize("kind", ["free_euler", "revolute", "planar"])
def test_custom_joint_with_linear_functions_equals_the_ordinary_joint(kind):
    mc, mo = _pair(kind)
    assert mc.nq == mo.nq
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.normal(size=(7, mc.nv)) for _ in range(3))
    kc, ko = forward_kinematics(mc, q, qd, qdd), forward_kinematics(mo, q, qd, qdd)
    for name in ("rotations", "positions", "velocities", "bias_accelerations", "accelerations"):
        np.testing.assert_allclose(getattr(kc, name), getattr(ko, name), atol=1e-12)
    np.testing.assert_allclose(kc.world_columns, ko.world_columns, atol=1e-12)
    np.testing.assert_allclose(dynamics.rnea(mc, q, qd, qdd), dynamics.rnea(mo, q, qd, qdd),
                               atol=1e-10)  # fmt: skip
    np.testing.assert_allclose(dynamics.crba(mc, q), dynamics.crba(mo, q), atol=1e-12)
    tau = rng.normal(size=q.shape)
    np.testing.assert_allclose(dynamics.aba(mc, q, qd, tau), dynamics.aba(mo, q, qd, tau),
                               atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(momentum(mc, q, qd), momentum(mo, q, qd), atol=1e-12)


def test_child_offset_equals_the_body_data_moved_into_the_moving_frame():
    """A child offset is a change of body frame: the same motion with COM, inertia and
    markers expressed in the joint's moving frame and no offset."""
    rng = np.random.default_rng(4)
    C = euler_to_matrix([0.4, -0.3, 0.2], "XYZ")  # body_R_moving
    c = np.array([0.1, -0.3, 0.05])  # moving origin in the body frame
    com, mk = np.array([0.02, -0.1, 0.03]), np.array([0.1, 0.2, -0.05])
    inertia = _inertia(rng)
    joint = {"type": "custom", "transform": _axes(
        [([0, 0, 1], "k", LIN), ([1, 0, 0], "k", fn.SimmSpline([-2, 0, 1, 2], [0, 0.1, -0.1, 0])),
         ([0, 1, 0], None, fn.Constant(0.2))],
        [([1, 0, 0], "k", fn.PolynomialFunction([0.01, 0.02, 0.0])), ([0, 1, 0], None, ZERO),
         ([0, 0, 1], "k", fn.PiecewiseLinearFunction([-1, 0, 1], [0.0, 0.05, 0.02]))])}  # fmt: skip
    a = Model()
    a.add_body("root", "ground", {"type": "euler", "sequence": "ZYX"}, mass=1.0,
               inertia=np.eye(3) * 0.1)  # fmt: skip
    b = a.copy()
    a.add_body("seg", "root", joint, position=[0.1, 0.2, -0.3], mass=3.0, com=com,
               inertia=inertia, markers={"m": mk}, child_position=c, child_rotation=C)  # fmt: skip
    # the same body described in the moving frame: x_M = Cᵀ (x_B − c)
    b.add_body("seg", "root", joint, position=[0.1, 0.2, -0.3], mass=3.0,
               com=C.T @ (com - c), inertia=C.T @ inertia @ C,
               markers={"m": C.T @ (mk - c)})  # fmt: skip
    q = rng.normal(size=(5, a.nq))
    qd, qdd = rng.normal(size=q.shape), rng.normal(size=q.shape)
    pa, pb_ = point_position(a, q, "seg", mk), point_position(b, q, "seg", C.T @ (mk - c))
    np.testing.assert_allclose(pa, pb_, atol=1e-12)
    ka, kb = forward_kinematics(a, q), forward_kinematics(b, q)
    # body pose = moving pose ∘ inverse(child pose)
    Rb, pb = kb.rotations[:, 1], kb.positions[:, 1]
    np.testing.assert_allclose(ka.rotations[:, 1], Rb @ C.T, atol=1e-12)
    np.testing.assert_allclose(ka.positions[:, 1], pb - np.einsum("nij,j->ni", Rb @ C.T, c),
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(center_of_mass(a, q), center_of_mass(b, q), atol=1e-12)
    np.testing.assert_allclose(dynamics.rnea(a, q, qd, qdd), dynamics.rnea(b, q, qd, qdd),
                               atol=1e-10)  # fmt: skip
    np.testing.assert_allclose(dynamics.crba(a, q), dynamics.crba(b, q), atol=1e-12)
    np.testing.assert_allclose(kinetic_energy(a, q, qd), kinetic_energy(b, q, qd), atol=1e-12)


def _random(seed, child_offsets=True):
    rng = np.random.default_rng(seed)
    types = ("custom",) * 8 + tuple(JOINT_TYPES)
    m = random_model(7, rng=rng, joint_types=types, child_offsets=child_offsets)
    return m, rng


@pytest.mark.parametrize("seed", range(4))
def test_motion_subspace_bias_and_jacobians_match_finite_differences(seed):
    m, rng = _random(seed)
    assert "custom" in [b.joint.type for b in m.bodies]
    q = random_q(m, rng=rng)
    qd = rng.normal(size=m.nv)
    h = 1e-6
    p = np.array([0.1, -0.2, 0.05])
    for b in range(m.n_bodies):
        J = point_jacobian(m, q, b, p)
        Jfd = np.empty_like(J)
        for k in range(m.nv):
            e = np.zeros(m.nv)
            e[k] = h
            Jfd[:, k] = (point_position(m, integrate_q(m, q, e), b, p)
                         - point_position(m, integrate_q(m, q, -e), b, p)) / (2 * h)  # fmt: skip
        np.testing.assert_allclose(J, Jfd, atol=2e-7)
    # bias accelerations: time derivative of the world velocities along q̇ (q̈ = 0)

    def world(qq):
        k = forward_kinematics(m, qq, qd)
        w = np.einsum("bij,bj->bi", k.rotations, k.velocities[:, :3])
        v = np.einsum("bij,bj->bi", k.rotations, k.velocities[:, 3:])
        return w, v

    wp, vp = world(integrate_q(m, q, qd * h))
    wm, vm = world(integrate_q(m, q, -qd * h))
    k = forward_kinematics(m, q, qd)
    a, v = k.bias_accelerations, k.velocities
    alpha = np.einsum("bij,bj->bi", k.rotations, a[:, :3])
    acc = np.einsum("bij,bj->bi", k.rotations, a[:, 3:] + np.cross(v[:, :3], v[:, 3:]))
    np.testing.assert_allclose(alpha, (wp - wm) / (2 * h), atol=2e-6)
    np.testing.assert_allclose(acc, (vp - vm) / (2 * h), atol=2e-6)


@pytest.mark.parametrize("seed", range(4))
def test_inverse_of_forward_dynamics_and_reference(seed):
    m, rng = _random(seed)
    q = random_q(m, rng=rng, size=5)
    qd = rng.normal(size=(5, m.nv))
    tau = rng.normal(size=(5, m.nv))
    f_ext = rng.normal(size=(5, m.n_bodies, 6))
    qdd = dynamics.aba(m, q, qd, tau, f_ext=f_ext)
    np.testing.assert_allclose(dynamics.rnea(m, q, qd, qdd, f_ext=f_ext), tau, atol=1e-8)
    H = dynamics.crba(m, q)
    np.testing.assert_allclose(H, np.swapaxes(H, 1, 2), atol=1e-12)
    for n in range(2):
        np.testing.assert_allclose(qdd[n], reference.aba(m, q[n], qd[n], tau[n], f_ext=f_ext[n]),
                                   atol=1e-8)  # fmt: skip
        np.testing.assert_allclose(H[n], reference.crba(m, q[n]), atol=1e-10)
        # single states (the lean path) agree with the batch
        np.testing.assert_allclose(dynamics.aba(m, q[n], qd[n], tau[n], f_ext=f_ext[n]), qdd[n],
                                   atol=1e-10)  # fmt: skip
    # the mass matrix is the Hessian of the kinetic energy
    T = kinetic_energy(m, q[0], qd[0])
    np.testing.assert_allclose(T, 0.5 * qd[0] @ H[0] @ qd[0], rtol=1e-12)


def test_configuration_functions_and_model_file_round_trip(tmp_path):
    m, rng = _random(5)
    q = random_q(m, rng=rng)
    v = rng.normal(size=m.nv)
    np.testing.assert_allclose(difference_q(m, q, integrate_q(m, q, v, 0.1)), 0.1 * v, atol=1e-12)
    assert neutral_q(m).shape == (m.nq,)
    path = tmp_path / "custom.json"
    save_model(m, path)
    back = load_model(path)
    assert back.to_dict() == m.to_dict()
    for b0, b1 in zip(m.bodies, back.bodies):
        assert b0.joint.transform == b1.joint.transform
        np.testing.assert_array_equal(b0.child_rotation, b1.child_rotation)
    np.testing.assert_array_equal(dynamics.rnea(back, q, v, v), dynamics.rnea(m, q, v, v))
    # identity child frames are not written
    plain = Model()
    plain.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]})
    assert "child_origin" not in plain.to_dict()["bodies"][0]


def test_custom_joint_without_coordinates_is_a_fixed_pose_and_simulates():
    m = Model()
    m.add_body("a", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=1.0,
               com=[0, 0, -0.3], inertia=np.eye(3) * 0.01)  # fmt: skip
    m.add_body("b", "a", {"type": "custom", "transform": _axes(
        [([0, 0, 1], None, fn.Constant(0.3)), ([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO)],
        [([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO), ([0, 0, 1], None, fn.Constant(-0.6))])},
        mass=0.5, com=[0.1, 0, 0], inertia=np.eye(3) * 0.01)  # fmt: skip
    assert m.nq == 1
    q = np.array([0.4])
    pose = forward_kinematics(m, q)
    Ra = pose.rotations[0]
    np.testing.assert_allclose(pose.rotations[1], Ra @ euler_to_matrix([0, 0, 0.3], "XYZ"),
                               atol=1e-14)  # fmt: skip
    np.testing.assert_allclose(pose.positions[1], Ra @ [0, 0, -0.6], atol=1e-14)
    res = dynamics.simulate(m, (0.0, 0.5), q, np.zeros(1), rtol=1e-9, atol=1e-11)
    E = kinetic_energy(m, res.q, res.qd) + potential_energy(m, res.q)
    assert np.ptp(E) < 1e-6


def test_simulation_of_a_spline_knee_conserves_energy():
    m, _ = _random(6, child_offsets=True)
    rng = np.random.default_rng(0)
    q0 = random_q(m, rng=rng, scale=0.3)
    res = dynamics.simulate(m, (0.0, 0.2), q0, np.zeros(m.nv), rtol=1e-10, atol=1e-12)
    E = kinetic_energy(m, res.q, res.qd) + potential_energy(m, res.q)
    assert np.ptp(E) < 1e-5 * max(1.0, np.abs(E).max())


@pytest.mark.parametrize(
    ("joint", "match"),
    [
        ({"type": "custom", "transform": [{"axis": [0, 0, 1]}] * 5}, "6 items"),
        (
            {
                "type": "custom",
                "coordinates": ["a"],
                "transform": _axes(
                    [([0, 0, 1], "b", LIN), ([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO)],
                    [([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO), ([0, 0, 1], None, ZERO)],
                ),
            },
            "not in the joint's 'coordinates'",
        ),
        (
            {
                "type": "custom",
                "coordinates": ["a", "b"],
                "transform": _axes(
                    [([0, 0, 1], "a", LIN), ([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO)],
                    [([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO), ([0, 0, 1], None, ZERO)],
                ),
            },
            "drive no transform axis",
        ),
        (
            {
                "type": "custom",
                "transform": _axes(
                    [([0, 0, 0], "a", LIN), ([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO)],
                    [([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO), ([0, 0, 1], None, ZERO)],
                ),
            },
            "axis is zero",
        ),
        (
            {
                "type": "custom",
                "transform": _axes(
                    [
                        ([0, 0, 1], "a", {"type": "Sine"}),
                        ([1, 0, 0], None, ZERO),
                        ([0, 1, 0], None, ZERO),
                    ],
                    [([1, 0, 0], None, ZERO), ([0, 1, 0], None, ZERO), ([0, 0, 1], None, ZERO)],
                ),
            },
            "unknown type 'Sine'",
        ),
        ({"type": "revolute", "axis": [0, 0, 1], "transform": []}, "only a 'custom' joint"),
    ],
)
def test_bad_custom_joints_raise_model_error(joint, match):
    with pytest.raises(ModelError, match=match):
        Model().add_body("a", "ground", joint)


def test_bad_child_frame_raises_model_error():
    with pytest.raises(ModelError, match="child_rotation"):
        Model().add_body("a", "ground", "spherical", child_rotation=np.ones((3, 3)))
    with pytest.raises(ModelError, match="child_position"):
        Model().add_body("a", "ground", "spherical", child_position=[0, 1])


@pytest.mark.parametrize("batch", [False, True])
def test_constrained_dynamics_of_custom_joints_keep_the_constraint(batch):
    """A point of the last body held on the ground: its acceleration is zero."""
    m, rng = _random(7)
    b = m.n_bodies - 1
    p = np.array([0.05, -0.1, 0.2])
    q = random_q(m, rng=rng, size=(3,) if batch else ())
    qd = rng.normal(size=q.shape[:-1] + (m.nv,))
    tau = rng.normal(size=qd.shape)
    con = [dynamics.PointConstraint(b, p)]  # the point's acceleration is held at zero
    qdd, _ = dynamics.constrained_forward_dynamics(m, q, qd, tau, con)
    np.testing.assert_allclose(point_acceleration(m, q, qd, qdd, b, p), 0.0, atol=1e-8)
    free = dynamics.aba(m, q, qd, tau)
    assert np.abs(point_acceleration(m, q, qd, free, b, p)).max() > 1e-3  # not trivially zero


def test_reference_recursions_run_on_casadi_with_custom_joints():
    ca = pytest.importorskip("casadi")
    from ahbm.optimize.symbolic import CasadiOps

    m, rng = _random(8)
    kinds = {ax.function.type_name for b in m.bodies for ax in (b.joint.transform or ())}
    assert {"NaturalCubicSpline", "PiecewiseLinearFunction", "MultiplierFunction"} <= kinds
    ops = CasadiOps()
    q = ca.SX.sym("q", m.nq)
    qd, qdd = ca.SX.sym("qd", m.nv), ca.SX.sym("qdd", m.nv)
    tau = ca.Function("tau", [q, qd, qdd], [reference.rnea(m, q, qd, qdd, ops=ops)])
    H = ca.Function("H", [q], [reference.crba(m, q, ops=ops)])
    for _ in range(3):
        x = random_q(m, rng=rng, scale=0.7)
        v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
        np.testing.assert_allclose(np.asarray(tau(x, v, a)).ravel(), reference.rnea(m, x, v, a),
                                   rtol=1e-9, atol=1e-9)  # fmt: skip
        np.testing.assert_allclose(np.asarray(H(x)), reference.crba(m, x), rtol=1e-9, atol=1e-9)
