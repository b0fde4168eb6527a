"""Sphere-aware penalty ground contact and the contact elements of collision shapes."""

import numpy as np
import pytest

from ahbm.dynamics import PenaltyGroundContact, shape_ground_contacts, simulate
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.contact import foot_contact_shapes
from ahbm.kinematics.forward import (
    body_jacobian,
    point_jacobian,
    point_position,
    point_velocity,
)
from ahbm.kinematics.geometry import CollisionShape
from ahbm.kinematics.rotations import rotvec_to_matrix
from ahbm.kinematics.tree import Model
from ahbm.models import double_pendulum_3d

G = 9.81


def _ball(mass=2.0, radius=0.1):
    m = Model("ball", gravity=(0, 0, -G))
    I = 0.4 * mass * radius**2  # solid sphere
    m.add_body("ball", "ground", "free", mass=mass, inertia=np.eye(3) * I)
    return m


def _free_q(position, rotvec):
    """q of a free body: position and the quaternion (x, y, z, w) of a rotation vector."""
    rv = np.asarray(rotvec, float)
    a = np.linalg.norm(rv)
    axis = rv / a if a > 0 else np.zeros(3)
    return np.concatenate([position, np.sin(a / 2) * axis, [np.cos(a / 2)]])


def _qd_for(model, q, body, omega, v_point, point):
    """qd giving the body the world angular velocity `omega` and `point` the velocity `v_point`."""
    A = np.vstack([body_jacobian(model, q, body, frame="world")[:3],
                   point_jacobian(model, q, body, point)])  # fmt: skip
    return np.linalg.solve(A, np.concatenate([omega, v_point]))


def test_ball_dropped_comes_to_rest_at_closed_form_penetration():
    mass, rho, k, e = 2.0, 0.1, 1e5, 1.5
    m = _ball(mass, rho)
    contact = PenaltyGroundContact("ball", [[0, 0, 0]], radii=[rho], stiffness=k, damping=5.0,
                                   exponent=e, friction=0.5)  # fmt: skip
    q0 = _free_q([0, 0, rho + 0.01], [0.3, -0.2, 0.1])
    r = simulate(m, (0, 1.5), q0, np.zeros(6), forces=[contact], rtol=1e-8, atol=1e-10)
    delta = (mass * G / k) ** (1 / e)
    z = point_position(m, r.q[-1], "ball")[2]
    np.testing.assert_allclose(rho - z, delta, rtol=1e-5)
    Fn = contact.normal_forces(m, r.q[-1], r.qd[-1])
    np.testing.assert_allclose(Fn, [mass * G], rtol=1e-5)
    # the same point contact (no radius) sinks to the centre instead
    point = PenaltyGroundContact("ball", [[0, 0, 0]], stiffness=k, exponent=e)
    assert point.normal_forces(m, r.q[-1], r.qd[-1])[0] == 0.0


def test_rolling_sphere_contact_point_has_no_slip_velocity():
    rho, mu, k = 0.1, 0.8, 1e5
    m = _ball(radius=rho)
    kw = dict(radii=[rho], stiffness=k, exponent=1.5)
    rough = PenaltyGroundContact("ball", [[0, 0, 0]], friction=mu, **kw)
    smooth = PenaltyGroundContact("ball", [[0, 0, 0]], **kw)
    q = _free_q([0.2, 0.1, rho - 1e-3], [0.7, -0.4, 1.1])  # tilted: the lowest point moves
    w = np.array([3.0, -5.0, 2.0])
    n = np.array([0, 0, 1.0])
    roll = _qd_for(m, q, "ball", w, -np.cross(w, -rho * n), [0, 0, 0])
    np.testing.assert_allclose(rough.generalized_force(m, q, roll),
                               smooth.generalized_force(m, q, roll), atol=1e-9)  # fmt: skip
    # sliding without turning: full friction −μ F_n v / sqrt(v² + v_s²) at the lowest point
    v = np.array([0.5, -0.2, 0.0])
    slide = _qd_for(m, q, "ball", np.zeros(3), v, [0, 0, 0])
    Fn = rough.normal_forces(m, q, slide)[0]
    np.testing.assert_allclose(Fn, k * 1e-3**1.5, rtol=1e-12)
    Ft = -mu * Fn * v / np.sqrt(v @ v + rough.vs**2)
    R = rotvec_to_matrix([0.7, -0.4, 1.1])
    p_body = R.T @ (-rho * n)
    J = point_jacobian(m, q, "ball", p_body)
    friction = rough.generalized_force(m, q, slide) - smooth.generalized_force(m, q, slide)
    np.testing.assert_allclose(friction, J.T @ Ft, atol=1e-12)


def test_rolling_ball_keeps_its_speed():
    """Rolling without slip costs no friction work (a centre-point contact would brake it)."""
    rho, k = 0.1, 1e5
    m = _ball(radius=rho)
    contact = PenaltyGroundContact("ball", [[0, 0, 0]], radii=[rho], stiffness=k, damping=5.0,
                                   friction=0.8, exponent=1.5)  # fmt: skip
    delta = (2.0 * G / k) ** (1 / 1.5)
    q0 = _free_q([0, 0, rho - delta], [0, 0, 0])
    speed = 1.0
    qd0 = _qd_for(m, q0, "ball", [0, speed / rho, 0], [speed, 0, 0], [0, 0, 0])
    r = simulate(m, (0, 0.5), q0, qd0, forces=[contact], rtol=1e-8, atol=1e-10)
    v_end = point_velocity(m, r.q[-1], r.qd[-1], "ball")
    np.testing.assert_allclose(v_end, [speed, 0, 0], atol=2e-3)
    np.testing.assert_allclose(point_position(m, r.q[-1], "ball")[0], 0.5 * speed, rtol=2e-3)


def _contact_reference(model, q, qd, body, centre, rho, n, h, k, c, e, mu, vs):
    """Generalized force by virtual work: F · ∂p/∂q of the body point at the lowest point."""
    o = point_position(model, q, body)
    R = np.column_stack([point_position(model, q, body, ax) - o for ax in np.eye(3)])
    cw = point_position(model, q, body, centre)
    delta = h + rho - n @ cw
    r_p = R.T @ (cw - rho * n - o)
    v = point_velocity(model, q, qd, body, r_p)
    rate = -n @ v
    Fn = max(k * max(delta, 0.0) ** e * (1 + c * rate), 0.0)
    vt = v + rate * n
    F = Fn * n - mu * Fn * vt / np.sqrt(vt @ vt + vs**2)
    eps = 1e-6
    tau = np.empty(len(q))
    for i in range(len(q)):
        dq = np.zeros(len(q))
        dq[i] = eps
        dp = point_position(model, q + dq, body, r_p) - point_position(model, q - dq, body, r_p)
        tau[i] = F @ dp / (2 * eps)
    return tau, delta


def test_generalized_force_matches_virtual_work_and_potential():
    m = double_pendulum_3d()
    n = np.array([0.2, -0.1, 1.0])
    n /= np.linalg.norm(n)
    centre, rho, k, e = np.array([0.05, 0.02, -1.0]), 0.15, 2e4, 1.5
    q = np.array([0.3, -0.2, 0.4, 0.25])
    qd = np.array([0.5, -1.0, 0.7, 2.0])
    h = n @ point_position(m, q, "pendulum2", centre) - rho + 0.01  # 1 cm deep
    opts = dict(radii=[rho], stiffness=k, exponent=e, normal=n, height=h)
    full = PenaltyGroundContact("pendulum2", [centre], damping=0.8, friction=0.6,
                                slip_velocity=0.05, **opts)  # fmt: skip
    ref, delta = _contact_reference(m, q, qd, "pendulum2", centre, rho, n, h, k, 0.8, e, 0.6, 0.05)
    assert delta == pytest.approx(0.01)
    np.testing.assert_allclose(full.generalized_force(m, q, qd), ref, rtol=1e-7, atol=1e-9)

    # elastic part: τ = −∂V/∂q with V = k δ^(e+1) / (e+1)
    elastic = PenaltyGroundContact("pendulum2", [centre], **opts)

    def V(qq):
        d = h + rho - n @ point_position(m, qq, "pendulum2", centre)
        return k * max(d, 0.0) ** (e + 1) / (e + 1)

    eps = 1e-6
    grad = np.array([(V(q + eps * ei) - V(q - eps * ei)) / (2 * eps) for ei in np.eye(4)])
    np.testing.assert_allclose(elastic.generalized_force(m, q, qd), -grad, rtol=1e-7)
    # batched frames give the per-frame values
    Q = np.stack([q, q + 0.01, q - 0.02])
    QD = np.stack([qd, qd, -qd])
    tau = full.generalized_force(m, Q, QD)
    for j in range(3):
        np.testing.assert_allclose(tau[j], full.generalized_force(m, Q[j], QD[j]), atol=1e-12)


def _two_feet():
    """A free pelvis with two feet welded under it, HeiMan foot contact sets on both feet."""
    m = Model("two_feet", gravity=(0, 0, -G))
    m.add_body("pelvis", "ground", "free", mass=20.0, inertia=np.diag([0.2, 0.15, 0.2]))
    # the centre of mass above the mean of each foot's three contact spheres (x = 0.25/3)
    for side, y in (("r", -0.1), ("l", 0.1)):
        m.add_body(f"foot_{side}", "pelvis", "fixed", position=[-0.25 / 3, y, -0.3], mass=1.0,
                   com=[0.25 / 3, 0, -0.04], inertia=np.eye(3) * 0.004)  # fmt: skip
    shapes = []
    for side in "rl":
        shapes += foot_contact_shapes(f"foot_{side}", length=0.26, height=0.08, posterior=0.06)
    m.collision = shapes
    return m


def test_foot_contact_sets_carry_body_weight_when_standing():
    m = _two_feet()
    contacts = shape_ground_contacts(m, stiffness=1e6, damping=5.0, friction=0.8)
    assert [c.name for c in contacts] == ["contact_foot_r", "contact_foot_l"]
    # heel sphere, then the two end spheres of the forefoot capsule
    np.testing.assert_allclose(contacts[0].radii, [0.04, 0.02, 0.02])
    heel, fore = foot_contact_shapes("foot_r", length=0.26, height=0.08, posterior=0.06)
    np.testing.assert_allclose(contacts[0].points, np.vstack([heel.points, fore.points]))
    # dropped from 5 mm with a sideways tilt; it lands on one foot first
    q0 = _free_q([0, 0, 0.38 + 0.005], [0.03, 0, 0])
    contacts = shape_ground_contacts(m, stiffness=3e5, damping=40.0, friction=0.8)
    r = simulate(m, (0, 0.6), q0, np.zeros(m.nv), forces=contacts, rtol=1e-6, atol=1e-8)
    weight = 22.0 * G
    F = [c.normal_forces(m, r.q, r.qd) for c in contacts]  # (frames, 3) per foot
    assert F[0][len(r.t) // 4].sum() != pytest.approx(F[1][len(r.t) // 4].sum(), rel=0.1)
    np.testing.assert_allclose(F[0][-1].sum() + F[1][-1].sum(), weight, rtol=1e-4)
    assert np.abs(r.qd[-1]).max() < 1e-3
    # at rest each foot carries half of the weight (symmetric stance); all spheres touch
    for f in F:
        assert f[-1].sum() == pytest.approx(weight / 2, rel=2e-3)
        assert np.all(f[-1] > 0)


def test_shape_selection_and_bad_input():
    m = _two_feet()
    only = shape_ground_contacts(m, ["foot_l_heel"], stiffness=1e5)
    assert len(only) == 1 and only[0].body == "foot_l" and only[0].points.shape == (1, 3)
    loz = CollisionShape.lozenge("plate", "pelvis", [0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], 0.01)
    (c,) = shape_ground_contacts(m, [loz], stiffness=1e5)
    assert c.points.shape == (3, 3) and np.all(c.radii == 0.01)
    with pytest.raises(ModelError, match="no collision shape 'toe'"):
        shape_ground_contacts(m, ["toe"], stiffness=1e5)
    with pytest.raises(ModelError, match="no collision shapes"):
        shape_ground_contacts(double_pendulum_3d(), stiffness=1e5)
    with pytest.raises(DataError, match="radii"):
        PenaltyGroundContact("ball", [[0, 0, 0], [1, 0, 0]], radii=[0.1], stiffness=1.0)
    with pytest.raises(DataError, match="radii"):
        PenaltyGroundContact("ball", [[0, 0, 0]], radii=[-0.1], stiffness=1.0)
