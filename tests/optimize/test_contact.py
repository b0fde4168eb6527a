"""Compliant contact spheres in ahbm.optimize: the CasADi law against the numpy elements.

- The CasADi function (:func:`ahbm.optimize.symbolic_smooth_contacts`) equals the force
  elements' numbers (generalized forces, forces, points, normal forces, depths) to 1e-12
  at random states of a free foot with three spheres on a tilted ground and a fourth
  against a half-space on a moving plate.
- Its derivatives (CasADi's algorithmic differentiation) equal central finite
  differences of the numpy elements (a separate code path) to 1e-6 relative.
- A ball resting on its sphere (explicit and implicit dynamics) comes to the static
  equilibrium: the normal force equals its weight, at the penetration where the law
  (solved by brentq on the numpy law) gives that force.
- A foot on four spheres at rest: the vertical forces sum to its weight, the moments
  about its centre of mass to zero.
- A ball that lifts itself off the ground with a bounded force: simulating the
  optimal force with ``ahbm.dynamics.simulate`` and the same contact element reaches
  the collocated final state (dynamic consistency through the contact).
"""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from scipy.optimize import brentq  # noqa: E402

from ahbm.dynamics import (  # noqa: E402
    HuntCrossleySphereContact,
    SmoothContactParameters,
    SmoothSphereContact,
    simulate,
    smooth_contact_law,
    total_generalized_force,
)
from ahbm.errors import DataError  # noqa: E402
from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.optimize import (  # noqa: E402
    CustomCost,
    Effort,
    SmoothContactPhase,
    solve,
    symbolic_smooth_contacts,
)

G = 9.81


def _foot_model():
    m = Model("foot")
    m.add_body("foot", "ground", {"type": "free_euler", "sequence": "XYZ"}, mass=1.2,
               com=[0.05, 0.0, -0.03], inertia=np.diag([0.002, 0.008, 0.009]))  # fmt: skip
    axis = np.array([0.2, 1.0, 0.1]) / np.sqrt(1.05)
    m.add_body("plate", "ground", {"type": "prismatic", "axis": axis.tolist()}, mass=2.0,
               inertia=np.eye(3) * 0.01)  # fmt: skip
    return m


def _foot_contacts(normal=(0.1, -0.05, 1.0)):
    p = SmoothContactParameters(stiffness=2e6, dissipation=1.5, static_friction=0.9,
                                dynamic_friction=0.7, viscous_friction=0.3)  # fmt: skip
    spheres = [("heel", [-0.02, 0.0, -0.05], 0.035), ("met1", [0.15, 0.03, -0.06], 0.02),
               ("met5", [0.14, -0.035, -0.06], 0.02)]  # fmt: skip
    out = [SmoothSphereContact("foot", c, r, parameters=p, plane_normal=normal,
                               plane_point=[0, 0, 0.01], name=n)
           for n, c, r in spheres]  # fmt: skip
    out.append(SmoothSphereContact("foot", [0.05, 0.0, 0.0], 0.03, plane_body="plate",
                                   plane_point=[0.0, 0.1, 0.0], plane_normal=[0.1, -1.0, 0.2],
                                   name="side", stiffness=5e5))  # fmt: skip
    return out


def _states(m, rng, n, contacts):
    """Random states with the deepest ground sphere and the side sphere -5..15 mm deep."""
    q = np.zeros((n, m.nq))
    q[:, 0:2] = rng.uniform(-0.05, 0.05, (n, 2))  # translations
    q[:, 3:6] = rng.uniform(-0.15, 0.15, (n, 3))  # small tilts (XYZ angles)
    qd = rng.normal(0.0, 0.4, (n, m.nv))
    # the depths are affine in the height (foot_tz) and in the plate's slide
    for i, group in ((2, contacts[:3]), (6, contacts[3:])):

        def deepest(qi, group=group, i=i):
            x = q.copy()
            x[:, i] = qi
            return np.max([c.evaluate(m, x, qd).depth for c in group], axis=0)

        # the deepest sphere is the same one at both heights (a pure translation)
        d0, d1 = deepest(0.0), deepest(1.0)
        q[:, i] = (rng.uniform(-0.005, 0.015, n) - d0) / (d1 - d0)
    return q, qd


def test_symbolic_equals_numeric():
    m, contacts = _foot_model(), _foot_contacts()
    hc = HuntCrossleySphereContact("foot", [0.1, 0.0, -0.055], 0.025, name="hc",
                                   dissipation=1.0, static_friction=0.6)  # fmt: skip
    contacts = contacts + [hc]  # the non-smooth law too (its casadi form)
    f = symbolic_smooth_contacts(m, contacts)
    q, qd = _states(m, np.random.default_rng(1), 60, contacts[:4])
    tau = total_generalized_force(m, contacts, q, qd)
    evs = [c.evaluate(m, q, qd) for c in contacts]
    depth_seen = []
    scale = np.abs(tau).max()  # (far from contact the forces are round-off of tanh's tail)
    for k in range(len(q)):
        t, F, P, Fn, d = (np.asarray(v) for v in f(q[k], qd[k]))
        assert np.abs(t.ravel() - tau[k]).max() <= 1e-12 * scale
        for j, ev in enumerate(evs):
            assert np.allclose(F[:, j], ev.force[k], rtol=1e-12, atol=1e-12 * scale)
            assert np.allclose(P[:, j], ev.point[k], rtol=0, atol=1e-15)
            assert Fn[j, 0] == pytest.approx(ev.normal_force[k], rel=1e-12, abs=1e-12 * scale)
            assert d[j, 0] == pytest.approx(ev.depth[k], abs=1e-15)
        depth_seen.append(d.ravel())
    depth_seen = np.array(depth_seen)
    assert (depth_seen > 0.002).any() and (depth_seen < 0).any()  # in and out of contact


def test_derivatives_equal_finite_differences():
    m, contacts = _foot_model(), _foot_contacts()
    f = symbolic_smooth_contacts(m, contacts)
    q_s, qd_s = ca.SX.sym("q", m.nq), ca.SX.sym("qd", m.nv)
    tau = f(q_s, qd_s)[0]
    jac = ca.Function("J", [q_s, qd_s], [ca.jacobian(tau, ca.vertcat(q_s, qd_s))])
    rng = np.random.default_rng(2)
    q, qd = _states(m, rng, 12, contacts)
    h = 1e-6
    worst = 0.0
    for k in range(len(q)):
        x = np.r_[q[k], qd[k]]
        J = np.asarray(jac(q[k], qd[k]))
        fd = np.empty_like(J)
        for i in range(x.size):
            e = np.zeros(x.size)
            e[i] = h
            xp, xm = x + e, x - e
            tp = total_generalized_force(m, contacts, xp[: m.nq], xp[m.nq :])
            tm = total_generalized_force(m, contacts, xm[: m.nq], xm[m.nq :])
            fd[:, i] = (tp - tm) / (2 * h)
        worst = max(worst, np.abs(J - fd).max() / np.abs(J).max())
    assert worst < 1e-6


def _ball(mass=2.0):
    m = Model("ball")
    m.add_body("ball", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=mass,
               inertia=np.eye(3) * 0.001)  # fmt: skip
    m.gravity = [0.0, 0.0, -G]
    return m


BALL = SmoothSphereContact("ball", [0, 0, 0], 0.05, name="ball")


def _equilibrium_depth(weight, contact):
    z = np.zeros((3, 1))

    def excess(d):
        return float(smooth_contact_law(np.array([d]), np.array([0.0]), z, contact.radius,
                                        contact.parameters)[0][0]) - weight  # fmt: skip

    return brentq(excess, -0.01, 0.05, xtol=1e-15, rtol=1e-15)


@pytest.mark.parametrize("dynamics", ["explicit", "implicit"])
def test_ball_rests_on_its_weight(dynamics):
    m = _ball()
    still = CustomCost(lambda x, u, p, t: x[1] ** 2, name="still")
    ph = SmoothContactPhase(m, smooth_contacts=[BALL], nodes=11, duration=0.2, actuated=[],
                            dynamics=dynamics, objectives=[still], q_bounds=([-0.2], [0.2]),
                            initial={"qd": [0.0]}, final={"qd": [0.0]})  # fmt: skip
    r = solve(ph, verbose=False, tol=1e-12)
    assert r.success, r.status
    out = ph.contact_outputs(np.vstack([r.q.T, r.qd.T]))
    weight = 2.0 * G
    assert np.allclose(out["Fn"][:, 0], weight, rtol=1e-6)
    d = _equilibrium_depth(weight, BALL)
    assert np.allclose(out["depth"][:, 0], d, atol=1e-8)
    assert np.allclose(r.q[:, 0], 0.05 - d, atol=1e-8)


def test_foot_stands_on_four_spheres():
    m = Model("foot")
    m.add_body("foot", "ground", {"type": "free_euler", "sequence": "XYZ"}, mass=1.2,
               com=[0.05, 0.0, -0.03], inertia=np.diag([0.002, 0.008, 0.009]))  # fmt: skip
    spheres = [[-0.02, 0.03, -0.05], [-0.02, -0.03, -0.05], [0.15, 0.04, -0.06],
               [0.14, -0.04, -0.06]]  # fmt: skip
    contacts = [SmoothSphereContact("foot", c, 0.03, name=f"s{i}") for i, c in enumerate(spheres)]
    still = CustomCost(lambda x, u, p, t: ca.sumsqr(x[6:12]), name="still")
    ph = SmoothContactPhase(m, smooth_contacts=contacts, nodes=6, duration=0.1, actuated=[],
                            objectives=[still], initial={"qd": np.zeros(6)},
                            final={"qd": np.zeros(6)},
                            q_bounds=([-0.1, -0.1, 0.0] + [-0.5] * 3, [0.1, 0.1, 0.2] + [0.5] * 3),
                            guess={"t": [0, 0.1], "q": [[0, 0, 0.08, 0, 0, 0]] * 2})  # fmt: skip
    r = solve(ph, verbose=False, tol=1e-12)
    assert r.success, r.status
    X = np.vstack([r.q.T, r.qd.T])
    out = ph.contact_outputs(X)
    Fz = out["F"][:, :, 2].sum(axis=1)
    assert np.allclose(Fz, 1.2 * G, rtol=1e-6)
    assert np.all(out["Fn"] > 1.0)  # all four spheres carry load
    R = _rotation_xyz(r.q[-1, 3:6])
    com = r.q[-1, :3] + R @ np.array([0.05, 0.0, -0.03])
    M = np.cross(out["P"][-1] - com, out["F"][-1]).sum(axis=0)
    assert np.abs(M).max() < 1e-6 * 1.2 * G * 0.1


def _rotation_xyz(a):
    ca_, sa = np.cos(a), np.sin(a)
    Rx = np.array([[1, 0, 0], [0, ca_[0], -sa[0]], [0, sa[0], ca_[0]]])
    Ry = np.array([[ca_[1], 0, sa[1]], [0, 1, 0], [-sa[1], 0, ca_[1]]])
    Rz = np.array([[ca_[2], -sa[2], 0], [sa[2], ca_[2], 0], [0, 0, 1]])
    return Rx @ Ry @ Rz


def _lift_off(method, nodes):
    m = _ball()
    z0 = 0.05 - _equilibrium_depth(2.0 * G, BALL)
    ph = SmoothContactPhase(m, smooth_contacts=[BALL], nodes=nodes, duration=0.5,
                            objectives=[Effort(scale=10.0)], tau_bounds=([-60.0], [60.0]),
                            initial={"q": [z0], "qd": [0.0]},
                            final={"q": [z0 + 0.04], "qd": [0.0]})  # fmt: skip
    r = solve(ph, method=method, verbose=False, tol=1e-10)
    assert r.success, (method, r.status)
    return m, z0, ph, r


@pytest.mark.parametrize("method", ["hermite-simpson", "multiple-shooting"])
def test_lift_off_is_dynamically_consistent(method):
    m, z0, ph, r = _lift_off(method, 81 if method == "hermite-simpson" else 41)
    out = ph.contact_outputs(np.vstack([r.q.T, r.qd.T]))
    assert out["Fn"][0, 0] == pytest.approx(2.0 * G, rel=1e-6)  # starts on its weight
    assert out["Fn"][-1, 0] < 1e-3  # ends off the ground
    t_u, u = r.t, r.tau[:, 0]
    sim = simulate(m, (0.0, 0.5), [z0], [0.0], tau=lambda t, q, qd: [np.interp(t, t_u, u)],
                   forces=[BALL], rtol=1e-7, atol=1e-9)  # fmt: skip
    assert sim.q[-1, 0] == pytest.approx(r.q[-1, 0], abs=1e-5)  # measured 1e-6, 1e-7
    assert sim.qd[-1, 0] == pytest.approx(r.qd[-1, 0], abs=1e-4)  # measured 8e-6, 1e-6


def test_transcriptions_agree_on_the_lift_off():
    """Collocation, multiple shooting and B-splines (inverse dynamics minus τ_c) agree."""
    costs = {
        meth: _lift_off(meth, 41)[3].cost
        for meth in ("trapezoidal", "hermite-simpson", "multiple-shooting", "bspline")
    }
    ref = costs["hermite-simpson"]
    # measured: multiple shooting 2e-4, B-splines 1.3e-3, trapezoidal 1.2e-2 (its quadrature)
    for meth, c in costs.items():
        assert c == pytest.approx(ref, rel=0.02 if meth == "trapezoidal" else 0.003), costs


def test_bad_contacts_raise():
    m = _ball()
    with pytest.raises(DataError, match="SmoothSphereContact"):
        SmoothContactPhase(m, smooth_contacts=["ball"], nodes=5, duration=0.1)
    with pytest.raises(DataError, match="at least one"):
        symbolic_smooth_contacts(m, [])
    with pytest.raises(DataError, match="unknown contact parameter"):
        SmoothSphereContact("ball", [0, 0, 0], 0.05, stifness=1e6)


def test_muscle_driven_phase_adds_the_contact_forces():
    """ẋ of the muscle phase with a sphere = ẋ without it + M⁻¹ τ_c (numpy elements)."""
    from ahbm.dynamics import crba
    from ahbm.models.arm import arm_model
    from ahbm.optimize import MuscleDrivenPhase, MuscleDrivenSmoothContactPhase

    m = arm_model()
    hand = SmoothSphereContact("forearm", [0.3, 0.0, 0.0], 0.04, plane_point=[0.0, -0.35, 0.0],
                               plane_normal=[0.0, 1.0, 0.0], name="hand")  # fmt: skip
    kw = dict(nodes=5, duration=0.2)
    with_contact = MuscleDrivenSmoothContactPhase(m, smooth_contacts=[hand], **kw)
    plain = MuscleDrivenPhase(m, **kw)
    assert with_contact.nx == plain.nx and with_contact.nu == plain.nu
    rng = np.random.default_rng(4)
    loaded = 0
    for _ in range(5):
        q = rng.uniform(-0.3, 0.3, 2) + np.array([-1.2, 0.4])
        qd = rng.normal(0.0, 1.0, 2)
        x = np.r_[q, qd, rng.uniform(0.05, 0.5, plain.nm)]
        u = np.r_[np.zeros(plain.nv + plain.nf), rng.uniform(0.0, 1.0, plain.nm)]
        tau_c = hand.generalized_force(m, q, qd)
        loaded += np.abs(tau_c).max() > 1.0
        diff = np.asarray(with_contact.ode(x, u) - plain.ode(x, u)).ravel()
        expect = np.r_[0.0, 0.0, np.linalg.solve(crba(m, q), tau_c), np.zeros(plain.nm)]
        assert np.allclose(diff, expect, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(expect).max()))
    assert loaded >= 2  # the hand presses on the table in some of the states
    F = np.asarray(with_contact.ground_reaction(x)).ravel()
    assert np.allclose(F, hand.evaluate(m, q, qd).force, rtol=1e-12)
