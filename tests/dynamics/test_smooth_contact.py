"""Smooth sphere–plane contact (ahbm.dynamics.smooth_contact) against closed forms and physics.

OpenSim's SmoothSphereHalfSpaceForce is the peer in
tests/peers/test_opensim_smooth_contact.py and the CasADi form is checked in
tests/optimize/test_contact.py; here:

- the law reduces to Hertz's sphere-on-plane force and Hunt and Crossley's
  dissipation when the smoothing is switched off, never pulls, and its friction is
  continuous at the transition velocity, where it reaches the static coefficient;
- a batch of states gives the values of the states one by one;
- a ball dropped on the ground comes to rest on its weight;
- a ball thrown sliding decelerates at ``μ g`` and ends rolling at ``v0 / (1 + I/(m r_e²))``
  (5/7 of its speed for a rigid solid sphere; ``r_e`` the lever of the contact force);
- HeiMan standing on its six foot spheres: the contact impulse equals the change of
  the whole body's linear momentum plus the weight's impulse (Newton for the system).
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import (
    SmoothContactParameters,
    SmoothSphereContact,
    hunt_crossley_law,
    simulate,
    smooth_contact_law,
    smooth_shape_contacts,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import com_velocity
from ahbm.kinematics.contact import foot_contact_shapes
from ahbm.kinematics.tree import Model

G = 9.81
Z3 = np.zeros((3, 1))


def _law(depth, rate=0.0, slip=Z3, radius=0.05, **kw):
    p = SmoothContactParameters(**kw)
    fn, ft = smooth_contact_law(np.array([depth]), np.array([rate]), slip, radius, p)
    return float(fn[0]), ft[:, 0]


def test_law_is_hertz_and_hunt_crossley_without_smoothing():
    E, r, c = 2e6, 0.04, 1.5
    sharp = dict(stiffness=E, dissipation=c, constant_contact_force=1e-300,
                 hertz_smoothing=1e6, hunt_crossley_smoothing=1e6, radius=r)  # fmt: skip
    E_star = E / 2**1.5  # k = E^(2/3)/2, E* = k^(3/2): equal materials
    for d in (0.001, 0.01, 0.02):
        hertz = 4.0 / 3.0 * E_star * np.sqrt(r) * d**1.5
        assert _law(d, **sharp)[0] == pytest.approx(hertz, rel=1e-12)
        for rate in (-0.3, 0.2, 1.0):
            assert _law(d, rate, **sharp)[0] == pytest.approx(hertz * (1 + 1.5 * c * rate),
                                                              rel=1e-12)  # fmt: skip
        assert _law(d, -2.0 / (3.0 * c) - 0.01, **sharp)[0] == 0.0  # never pulls
    assert _law(-0.001, **sharp)[0] == 0.0  # apart
    # OpenSim's HuntCrossleyForce law is that sharp limit (friction included)
    p = SmoothContactParameters(
        **{k: v for k, v in sharp.items() if k != "radius"},
        static_friction=0.9,
        dynamic_friction=0.6,
        viscous_friction=0.2,
    )
    d = np.array([0.004, 0.01, 0.02, -0.002])
    rate = np.array([0.2, -0.1, -0.5, 0.3])
    slip = np.array([[0.3, 0.01, 0.0, 0.2], [-0.1, 0.02, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]])
    fn_s, ft_s = smooth_contact_law(d, rate, slip, r, p)
    fn_h, ft_h = hunt_crossley_law(d, rate, slip, r, p)
    assert np.allclose(fn_h, fn_s, rtol=1e-12, atol=0) and fn_h[-1] == 0.0
    assert np.allclose(ft_h, ft_s, rtol=1e-9, atol=0)


def test_friction_reaches_static_coefficient_at_the_transition_velocity():
    kw = dict(static_friction=0.9, dynamic_friction=0.6, viscous_friction=0.0,
              transition_velocity=0.2, constant_contact_force=1e-14)  # fmt: skip
    fn, _ = _law(0.01, **kw)
    ratios = []
    for v in (0.2 - 1e-9, 0.2, 0.2 + 1e-9, 2.0, 0.01):
        slip = np.array([[v * 0.6], [-v * 0.8], [0.0]])
        _, ft = _law(0.01, slip=slip, **kw)
        assert np.allclose(np.cross(ft, slip[:, 0]), 0.0, atol=1e-12)  # along the slip
        assert ft @ slip[:, 0] < 0  # against it
        ratios.append(np.linalg.norm(ft) / fn)
    assert ratios[1] == pytest.approx(0.9, rel=1e-12)  # mu_s at v = v_tr, continuous
    assert ratios[0] == pytest.approx(0.9, rel=1e-7) and ratios[2] == pytest.approx(0.9, rel=1e-7)
    nu = 10.0  # fast: mu_d + 2 (mu_s - mu_d) / (1 + nu^2)
    assert ratios[3] == pytest.approx(0.6 + 0.6 / (1 + nu**2), rel=1e-12)
    nu = 0.05  # slow: proportional to the slip
    assert ratios[4] == pytest.approx(nu * (0.6 + 0.6 / (1 + nu**2)), rel=1e-9)


def _ball(mass=2.0, radius=0.05, **params):
    m = Model("ball", gravity=(0.0, 0.0, -G))
    m.add_body("ball", "ground", {"type": "free_euler", "sequence": "XYZ"}, mass=mass,
               inertia=np.eye(3) * 0.4 * mass * radius**2)  # fmt: skip
    return m, SmoothSphereContact("ball", [0, 0, 0], radius, **params)


def test_batch_equals_frame_by_frame():
    m, c = _ball()
    rng = np.random.default_rng(0)
    q = rng.uniform(-0.2, 0.2, (7, 6))
    q[:, 2] = rng.uniform(0.03, 0.06, 7)
    qd = rng.normal(size=(7, 6))
    batch = c.evaluate(m, q, qd)
    tau = c.generalized_force(m, q, qd)
    for k in range(7):
        one = c.evaluate(m, q[k], qd[k])
        assert np.array_equal(one.force, batch.force[k])
        assert np.array_equal(c.generalized_force(m, q[k], qd[k]), tau[k])
    assert tau.reshape(7, 6).shape == (7, 6)
    assert c.evaluate(m, q.reshape(7, 1, 6), qd.reshape(7, 1, 6)).force.shape == (7, 1, 3)


def _rest_height(m, c):
    """Height at which the ball's normal force equals its weight (bisection on the law)."""
    from scipy.optimize import brentq

    W = m.total_mass * G

    def f(z):
        return float(c.evaluate(m, [0, 0, z, 0, 0, 0], np.zeros(6)).normal_force) - W

    return brentq(f, c.radius - 0.03, c.radius, xtol=1e-15)


def test_dropped_ball_comes_to_rest_on_its_weight():
    m, c = _ball()
    r = simulate(m, (0.0, 1.0), [0.0, 0.0, 0.08, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
                 forces=[c], method="LSODA", rtol=1e-8, atol=1e-10)  # fmt: skip
    end = c.evaluate(m, r.q[-1], r.qd[-1])
    assert end.normal_force == pytest.approx(2.0 * G, rel=1e-4)
    assert np.abs(r.qd[-1, 2]) < 1e-4
    assert r.q[-1, 2] == pytest.approx(_rest_height(m, c), abs=1e-6)
    assert np.max(r.q[:, 2]) <= 0.08 + 1e-12  # dissipative: never higher than dropped


def test_sliding_ball_decelerates_at_mu_g_and_ends_rolling_at_five_sevenths():
    mu, v0, r = 0.5, 2.0, 0.05
    m, c = _ball(radius=r, static_friction=mu, dynamic_friction=mu, viscous_friction=0.0,
                 transition_velocity=0.01)  # fmt: skip
    z = _rest_height(m, c)
    t_roll = 2 * v0 / (7 * mu * G)
    t_eval = [0.5 * t_roll, 3 * t_roll]
    res = simulate(m, (0.0, 3 * t_roll), [0, 0, z, 0, 0, 0], [v0, 0, 0, 0, 0, 0], forces=[c],
                   method="LSODA", rtol=1e-9, atol=1e-11, t_eval=t_eval)  # fmt: skip
    # sliding: the friction is mu m g (the contact point slips far above the transition)
    assert res.qd[0, 0] == pytest.approx(v0 - mu * G * 0.5 * t_roll, rel=1e-4)
    # rolling: the angular momentum about the contact line is kept, m v0 r_e = (m r_e² + I) ω
    # with the lever r_e = r - δ/2 (the force acts midway through the penetration), so
    # v = v0 / (1 + I / (m r_e²)): 5/7 v0 for a rigid solid sphere (r_e = r)
    r_e = r - 0.5 * (r - z)
    assert res.qd[-1, 0] == pytest.approx(v0 / (1.0 + 0.4 * (r / r_e) ** 2), rel=1e-4)
    assert res.qd[-1, 0] == pytest.approx(5.0 / 7.0 * v0, rel=0.02)
    slip = res.qd[-1, 0] - res.qd[-1, 4] * r_e  # rotation about y only: ω = d(ry)/dt
    assert abs(slip) < 1e-3


def test_heiman_standing_momentum_balance():
    from scipy.optimize import brentq

    from ahbm.dynamics import RotationalSpringDamper
    from ahbm.models import heiman_contact_spheres, heiman_model

    m = heiman_model(root="free_euler")
    spheres = heiman_contact_spheres(m)
    assert len(spheres) == 6
    q, qd = np.zeros(m.nq), np.zeros(m.nv)
    depths = np.array([float(s.evaluate(m, q, qd).depth) for s in spheres])
    assert np.allclose(depths, depths[0], atol=1e-12)  # flat feet: every sphere on the sole
    W = m.total_mass * G
    iz = m.coordinate_names.index("pelvis_tz")

    def lift(z):
        x = q.copy()
        x[iz] = z
        return sum(float(s.evaluate(m, x, qd).force[2]) for s in spheres) - W

    q[iz] = brentq(lift, depths[0] - 0.03, depths[0], xtol=1e-14)
    holds = [RotationalSpringDamper(n, stiffness=3000.0, damping=30.0)
             for n in m.coordinate_names[6:]]  # fmt: skip
    q0 = q.copy()
    q0[iz] += 0.002  # dropped from 2 mm above its equilibrium height
    T = 0.06
    t = np.linspace(0.0, T, 601)
    r = simulate(m, (0.0, T), q0, qd, forces=spheres + holds, method="LSODA", rtol=1e-9,
                 atol=1e-11, t_eval=t)  # fmt: skip
    F = sum(s.evaluate(m, r.q, r.qd).force for s in spheres)  # (n, 3)
    impulse = np.trapezoid(F, t, axis=0) + np.array([0.0, 0.0, -W * T])
    dp = m.total_mass * (com_velocity(m, r.q[-1], r.qd[-1]) - com_velocity(m, q0, qd))
    assert np.max(np.abs(F[:, 2])) > 0.5 * W  # the feet carry the body
    assert np.allclose(impulse, dp, atol=2e-4 * W * T)
    assert abs(dp[2]) > 0.05 * W * T  # the landing changed the momentum


def test_shape_spheres_and_bad_input():
    m, _ = _ball()
    m.collision = foot_contact_shapes("ball", length=0.26, height=0.08, posterior=0.06)
    cs = smooth_shape_contacts(m, stiffness=2e6)
    assert [c.radius for c in cs] == [0.04, 0.02, 0.02]
    assert all(c.parameters.stiffness == 2e6 for c in cs)
    with pytest.raises(DataError, match="radius"):
        SmoothSphereContact("ball", [0, 0, 0], -0.01)
    with pytest.raises(DataError, match="plane_normal"):
        SmoothSphereContact("ball", [0, 0, 0], 0.01, plane_normal=[0, 0, 0])
    with pytest.raises(DataError, match="dissipation"):
        SmoothSphereContact("ball", [0, 0, 0], 0.01, dissipation=-1.0)
    with pytest.raises(ModelError, match="same body"):
        SmoothSphereContact("ball", [0, 0, 0], 0.01, plane_body="ball").validate(m)
    with pytest.raises(ModelError, match="unknown body|no body"):
        SmoothSphereContact("leg", [0, 0, 0], 0.01).validate(m)
