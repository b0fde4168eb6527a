"""Tests of ahbm.dynamics.forces: values, virtual work, potentials, errors."""

import numpy as np
import pytest

from ahbm.dynamics import (
    BodyForce,
    BodyTorque,
    Bushing,
    GravityOverride,
    JointStop,
    PenaltyGroundContact,
    PointSpringDamper,
    RotationalSpringDamper,
    gravity_torques,
)
from ahbm.dynamics.forces import total_power
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.forward import body_jacobian, point_position, point_velocity
from ahbm.models import double_pendulum_3d, triple_pendulum_euler


@pytest.fixture
def model():
    return double_pendulum_3d()


def _fd_gradient(fun, q, h=1e-6):
    g = np.zeros(q.size)
    for k in range(q.size):
        e = np.zeros(q.size)
        e[k] = h
        g[k] = (fun(q + e) - fun(q - e)) / (2 * h)
    return g


@pytest.mark.parametrize(
    "stiffness, expected",
    [(4.0, -2.0), ([[-1.0, 2.0], [0.0, 0.0], [1.0, -2.0]], 1.0), (lambda x: x**3, -0.125)],
)
def test_rotational_spring_characteristics(model, stiffness, expected):
    s = RotationalSpringDamper("pin", stiffness=stiffness, rest=0.1)
    tau = s.generalized_force(model, [0.6, 0, 0, 0], np.zeros(4))
    assert tau[0] == pytest.approx(expected)
    assert np.all(tau[1:] == 0)


def test_table_extrapolates_with_end_slope(model):
    s = RotationalSpringDamper("pin", stiffness=[[0.0, 0.0], [1.0, 2.0]])
    assert s.generalized_force(model, [3.0, 0, 0, 0], np.zeros(4))[0] == pytest.approx(-6.0)


def test_damper_power_is_negative(model):
    rng = np.random.default_rng(0)
    d = RotationalSpringDamper("euler_rx", damping=2.5)
    qd = rng.normal(size=(5, 4))
    p = d.power(model, rng.normal(size=(5, 4)), qd)
    np.testing.assert_allclose(p, -2.5 * qd[:, 2] ** 2)


def test_joint_stop_is_zero_inside_and_continuous(model):
    stop = JointStop("pin", -0.5, 0.5, stiffness=1e3, damping=10.0)
    q = np.zeros((4, 4))
    q[:, 0] = [0.0, 0.5, 0.5 + 1e-9, 0.6]
    qd = np.zeros(4)
    qd[0] = 1.0
    tau = stop.generalized_force(model, q, qd)[:, 0]
    assert tau[0] == 0 and tau[1] == 0
    assert abs(tau[2]) < 1e-5
    assert tau[3] == pytest.approx(-(1e3 * 0.1**2 + 10.0 * 0.1 * 1.0))
    q[:, 0] = -q[:, 0]
    assert stop.generalized_force(model, q, -qd)[3, 0] == pytest.approx(-tau[3])


def test_point_spring_is_gradient_of_potential(model):
    rng = np.random.default_rng(1)
    k, l0 = 7.0, 0.4
    s = PointSpringDamper("pendulum1", [0.1, 0.2, -0.3], "pendulum2", [0, 0.1, -0.8],
                          stiffness=k, rest_length=l0)  # fmt: skip

    def V(q):
        d = point_position(model, q, 1, [0, 0.1, -0.8]) - point_position(
            model, q, 0, [0.1, 0.2, -0.3]
        )
        return 0.5 * k * (np.linalg.norm(d) - l0) ** 2

    for _ in range(3):
        q = rng.normal(size=4)
        tau = s.generalized_force(model, q, np.zeros(4))
        np.testing.assert_allclose(tau, -_fd_gradient(V, q), atol=1e-6)


def test_point_damper_power(model):
    rng = np.random.default_rng(2)
    c = 3.0
    s = PointSpringDamper("ground", [0.3, 0, 0.5], "pendulum2", [0, 0, -1], stiffness=0.0,
                          damping=c)  # fmt: skip
    q, qd = rng.normal(size=4), rng.normal(size=4)
    d = point_position(model, q, 1, [0, 0, -1]) - np.array([0.3, 0, 0.5])
    u = d / np.linalg.norm(d)
    ldot = u @ point_velocity(model, q, qd, 1, [0, 0, -1])
    assert s.power(model, q, qd) == pytest.approx(-c * ldot**2)


def test_isotropic_bushing_is_conservative(model):
    rng = np.random.default_rng(3)
    kr, kt = 5.0, 40.0
    fa = {"position": [0.1, 0.0, -0.2], "rotation": np.eye(3)}
    fb = {"position": [0.0, 0.05, 0.3], "rotation": np.eye(3)}
    bu = Bushing("pendulum1", "pendulum2", frame_a=fa, frame_b=fb,
                 stiffness=[kr, kr, kr, kt, kt, kt])  # fmt: skip

    def V(q):
        x, _ = bu.deflection(model, q, np.zeros(4))
        return 0.5 * kr * x[:3] @ x[:3] + 0.5 * kt * x[3:] @ x[3:]

    for _ in range(3):
        q = rng.normal(size=4) * 0.5
        tau = bu.generalized_force(model, q, np.zeros(4))
        np.testing.assert_allclose(tau, -_fd_gradient(V, q), atol=1e-5)


def test_bushing_damping_dissipates(model):
    rng = np.random.default_rng(4)
    bu = Bushing("ground", "pendulum2", stiffness=np.zeros(6), damping=np.full(6, 2.0))
    q, qd = rng.normal(size=(10, 4)), rng.normal(size=(10, 4))
    assert np.all(bu.power(model, q, qd) <= 1e-12)


@pytest.mark.parametrize("frame", ["world", "local"])
def test_body_force_virtual_work(model, frame):
    rng = np.random.default_rng(5)
    F = np.array([0.3, -1.0, 2.0])
    f = BodyForce("pendulum2", F, point=[0.1, 0, -1], frame=frame)
    q, qd = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    v = point_velocity(model, q, qd, 1, [0.1, 0, -1])
    R = np.stack([np.eye(3)] * 6)
    if frame == "local":
        from ahbm.kinematics.forward import forward_kinematics

        R = forward_kinematics(model, q).transforms[:, 1, :3, :3]
    Fw = np.einsum("nij,j->ni", R, F)
    np.testing.assert_allclose(f.power(model, q, qd), np.sum(Fw * v, axis=1), atol=1e-12)


def test_body_force_function_of_time(model):
    f = BodyForce("pendulum1", lambda t: np.array([0.0, t, 0.0]), point=[0, 0, -1])
    tau = f.generalized_force(model, np.zeros((2, 4)), np.zeros((2, 4)), t=np.array([0.0, 2.0]))
    assert tau[0, 0] == 0 and tau[1, 0] == pytest.approx(2.0)


def test_body_torque_virtual_work(model):
    rng = np.random.default_rng(6)
    M = np.array([1.0, 0.5, -0.2])
    tq = BodyTorque("pendulum2", M)
    q, qd = rng.normal(size=4), rng.normal(size=4)
    w = body_jacobian(model, q, 1, frame="world")[:3] @ qd
    assert tq.power(model, q, qd) == pytest.approx(M @ w)


def test_penalty_contact_normal_and_friction():
    m = triple_pendulum_euler()
    c = PenaltyGroundContact("link3", [[0, 0, -1]], stiffness=1e4, damping=0.5, exponent=1.5,
                             friction=0.8, slip_velocity=1e-3, height=-2.99)  # fmt: skip
    q = np.zeros(9)
    qd = np.zeros(9)
    qd[1] = 0.2  # tip moves along x (tangential)
    Fn = c.normal_forces(m, q, qd)
    assert Fn[0] == pytest.approx(1e4 * 0.01**1.5)
    # friction opposes the slip: power of the contact force is negative
    assert c.power(m, q, qd) < 0
    # no force above the ground
    c2 = PenaltyGroundContact("link3", [[0, 0, -1]], stiffness=1e4, height=-3.5)
    assert np.all(c2.generalized_force(m, q, qd) == 0)


def test_gravity_override(model):
    q = np.array([0.2, -0.3, 0.4, 0.1])
    off = GravityOverride([0, 0, 0]).generalized_force(model, q, np.zeros(4))
    np.testing.assert_allclose(off, gravity_torques(model, q), atol=1e-12)
    double = GravityOverride(2 * model.gravity).generalized_force(model, q, np.zeros(4))
    np.testing.assert_allclose(double, -gravity_torques(model, q), atol=1e-12)


def test_total_power_sums(model):
    rng = np.random.default_rng(7)
    els = [RotationalSpringDamper("pin", 1.0, 0.5), BodyTorque("pendulum1", [1.0, 0, 0])]
    q, qd = rng.normal(size=4), rng.normal(size=4)
    assert total_power(model, els, q, qd) == pytest.approx(sum(e.power(model, q, qd) for e in els))


def test_bad_input(model):
    with pytest.raises(ModelError, match="unknown coordinate 'knee'"):
        RotationalSpringDamper("knee", 1.0).validate(model)
    with pytest.raises(ModelError, match="unknown body 'foot'"):
        PointSpringDamper("foot", [0, 0, 0], "ground", [0, 0, 0], 1.0).validate(model)
    with pytest.raises(DataError, match="table of shape"):
        RotationalSpringDamper("pin", stiffness=[[1, 2, 3]])
    with pytest.raises(DataError, match="increase strictly"):
        RotationalSpringDamper("pin", stiffness=[[1, 2], [0, 3]])
    with pytest.raises(DataError, match="lower"):
        JointStop("pin", 1.0, -1.0, stiffness=1.0)
    with pytest.raises(DataError, match=r"shape \(6,\) or \(6, 6\)"):
        Bushing("ground", "pendulum1", stiffness=[1, 2, 3])
    with pytest.raises(ModelError, match="ground"):
        BodyForce("ground", [0, 0, 1]).validate(model)
    m = __import__("ahbm.kinematics.tree", fromlist=["Model"]).Model()
    m.add_body("b", "ground", "spherical", mass=1.0, inertia=np.eye(3))
    with pytest.raises(ModelError, match="quaternion component"):
        RotationalSpringDamper("b_qx", 1.0).validate(m)


def test_total_force_shares_kinematics_and_accepts_custom_elements(model):
    from ahbm.dynamics import ForceElement
    from ahbm.dynamics.forces import total_generalized_force

    class Constant(ForceElement):
        def generalized_force(self, model, q, qd, *, t=0.0, kin=None):
            return np.broadcast_to(np.arange(model.nv, dtype=float), np.shape(q)[:-1] + (4,))

    rng = np.random.default_rng(9)
    els = [
        PointSpringDamper("ground", [0, 0, 0], "pendulum2", [0, 0, -1], 3.0, 0.5),
        Bushing("pendulum1", "pendulum2", stiffness=np.arange(1.0, 7.0), damping=np.ones(6)),
        BodyForce("pendulum2", [1.0, 2.0, 0.0], frame="local"),
        BodyTorque("pendulum1", lambda t: np.array([t, 0.0, 1.0])),
        PenaltyGroundContact("pendulum2", [[0, 0, -1]], stiffness=1e3, height=-1.5),
        GravityOverride([0, 0, -1.0]),
        RotationalSpringDamper("pin", 2.0, 0.1),
        Constant(),
    ]
    q, qd = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    total = total_generalized_force(model, els, q, qd, t=0.5)
    expected = sum(e.generalized_force(model, q, qd, t=0.5) for e in els)
    np.testing.assert_allclose(total, expected, atol=1e-12)


# ----------------------------------------------------------------------------
# a shared kinematic state (kin=)
# ----------------------------------------------------------------------------


def _tree_and_elements(batch):
    from ahbm.kinematics.configuration import random_model, random_q
    from ahbm.kinematics.joints import JOINT_TYPES

    rng = np.random.default_rng(77)
    m = random_model(9, rng=rng, joint_types=tuple(JOINT_TYPES))
    q = random_q(m, rng=rng, size=batch)
    qd = rng.normal(size=batch + (m.nv,))
    names = m.coordinate_names
    scalar = next(n for n in names if not n.endswith(("_qx", "_qy", "_qz", "_qw")))
    last = m.n_bodies - 1
    els = {
        "spring": RotationalSpringDamper(scalar, stiffness=3.0, damping=0.4, rest=0.1),
        "stop": JointStop(scalar, -0.1, 0.1, stiffness=50.0, damping=1.0),
        "point": PointSpringDamper("ground", [0, 0, 0.5], last, [0.1, 0, 0], 20.0, 2.0),
        "bushing": Bushing(0, last, stiffness=np.arange(1.0, 7.0), damping=np.ones(6)),
        "force": BodyForce(last, lambda t: [np.sin(t), 1.0, 0.0], point=[0, 0.1, 0], frame="local"),
        "torque": BodyTorque(last, [0.3, -0.2, 1.0]),
        "contact": PenaltyGroundContact(
            last, [[0, 0, 0], [0.1, 0, 0]], stiffness=1e4, damping=0.5, friction=0.6, height=0.2
        ),
        "gravity": GravityOverride([0.0, 0.0, -1.62]),
    }
    return m, q, qd, els


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
@pytest.mark.parametrize(
    "element", ["spring", "stop", "point", "bushing", "force", "torque", "contact", "gravity"]
)
def test_force_elements_with_kin_equal_recomputation(element, batch):
    from ahbm.kinematics.forward import forward_kinematics

    m, q, qd, els = _tree_and_elements(batch)
    el = els[element]
    kin = forward_kinematics(m, q, qd)
    t = 0.7
    for qq, vv in ((None, None), (q, qd)):
        np.testing.assert_array_equal(
            el.generalized_force(m, qq, vv, t=t, kin=kin), el.generalized_force(m, q, qd, t=t)
        )
        np.testing.assert_array_equal(el.power(m, qq, vv, t=t, kin=kin), el.power(m, q, qd, t=t))
    helpers = {
        "point": [("tension", (q, qd)), ("length", (q,))],
        "bushing": [("deflection", (q, qd))],
        "force": [("world_force", (q,))],
        "contact": [("normal_forces", (q, qd))],
    }.get(element, [])
    for name, args in helpers:
        fn = getattr(el, name)
        ref = fn(m, *args)
        got = fn(m, *[None] * len(args), kin=kin)
        if name == "deflection":  # a pair of arrays
            np.testing.assert_array_equal(got[0], ref[0])
            np.testing.assert_array_equal(got[1], ref[1])
        else:
            np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
def test_total_force_and_power_with_kin(batch):
    from ahbm.dynamics.forces import total_generalized_force
    from ahbm.kinematics.forward import forward_kinematics

    m, q, qd, els = _tree_and_elements(batch)
    els = list(els.values())
    kin = forward_kinematics(m, q, qd)
    tau = total_generalized_force(m, els, q, qd, t=0.2)
    np.testing.assert_array_equal(total_generalized_force(m, els, None, None, t=0.2, kin=kin), tau)
    np.testing.assert_allclose(
        tau, sum(e.generalized_force(m, q, qd, t=0.2) for e in els), rtol=1e-12, atol=1e-12
    )
    P = total_power(m, els, q, qd, t=0.2)
    np.testing.assert_array_equal(total_power(m, els, None, None, t=0.2, kin=kin), P)
    assert P.shape == batch
    # a state without velocities is refused with the call to make
    with pytest.raises(DataError, match=r"forward_kinematics\(model, q, qd\)"):
        total_generalized_force(m, els, None, None, kin=forward_kinematics(m, q))
    with pytest.raises(DataError, match="computed for model"):
        els[2].generalized_force(double_pendulum_3d(), None, None, kin=kin)


def test_follower_frame_is_local():
    m = double_pendulum_3d()
    local = BodyForce("pendulum2", [1.0, 2.0, 0.0], frame="local")
    world = BodyForce("pendulum2", [1.0, 2.0, 0.0], frame="world")
    assert (
        local.frame == "local"
        and BodyTorque("pendulum2", [0, 1.0, 0], frame="local").frame == "local"
    )
    z = np.zeros(4)  # body axes = world axes: the follower force is the world force
    np.testing.assert_allclose(local.generalized_force(m, z, z), world.generalized_force(m, z, z))
    with pytest.raises(DataError, match="'world' or 'local'"):
        BodyTorque("pendulum2", [0.0, 1.0, 0.0], frame="space")
    with pytest.raises(DataError, match="'world' or 'local'"):
        BodyForce("pendulum2", [1.0, 2.0, 0.0], frame="body")
