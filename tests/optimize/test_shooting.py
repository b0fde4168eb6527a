"""Multiple shooting and the B-spline transcription: integrator, options, phases, contacts."""

import numpy as np
import pytest

pytest.importorskip("casadi")

import casadi as ca  # noqa: E402
from scipy.linalg import expm  # noqa: E402

from ahbm.dynamics import ReplayController, simulate  # noqa: E402
from ahbm.errors import DataError  # noqa: E402
from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.models.pendulums import single_pendulum  # noqa: E402
from ahbm.optimize import (  # noqa: E402
    BSplineTranscription,
    ContactPoint,
    Effort,
    FinalTime,
    MultipleShooting,
    OptimalControlProblem,
    Phase,
    solve,
)
from ahbm.optimize.shooting import rk4_interval  # noqa: E402
from ahbm.optimize.transcription import get_transcription  # noqa: E402


def point_mass(mass=1.0):
    m = Model("mass", (0.0, 0.0, 0.0))
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0], "name": "x"}, mass=mass)
    return m


def transfer(nodes=11, duration=1.0, **kw):
    ends = {"initial": {"q": [0.0], "qd": [0.0]}, "final": {"q": [1.0], "qd": [0.0]}}
    return Phase(point_mass(), nodes=nodes, duration=duration, objectives=[Effort()], **ends, **kw)


def test_rk4_interval_fourth_order_and_cost_quadrature():
    # ẋ = A x + B u, u linear in time; exact solution from the augmented matrix exponential
    A = np.array([[0.0, 1.0], [-4.0, -0.4]])
    B = np.array([0.0, 1.0])
    x, u, p = ca.SX.sym("x", 2), ca.SX.sym("u"), ca.SX.sym("p", 0)
    t = ca.SX.sym("t")
    ode = ca.Function("ode", [x, u, p], [ca.mtimes(ca.DM(A), x) + ca.DM(B) * u])
    cost = ca.Function("cost", [x, u, p, t], [u**2 + t**3])
    x0, u0, u1, h = np.array([1.0, -0.5]), 0.3, -0.7, 0.8
    # [x; u; u̇] with u̇ constant
    M = np.zeros((4, 4))
    M[:2, :2], M[:2, 2], M[2, 3] = A, B, 1.0
    exact = (expm(M * h) @ np.r_[x0, u0, (u1 - u0) / h])[:2]
    errs = []
    for steps in (4, 8):
        phi = rk4_interval(ode, cost, 2, 1, 0, 1, steps)
        xf, c = phi(x0, u0, u1, [], 0.5, h)
        errs.append(np.abs(np.asarray(xf).ravel() - exact).max())
        # ∫ (u² + t³) dt over [0.5, 1.3]: a polynomial of degree 3, integrated exactly by RK4
        exact_c = (h / 3) * (u0**2 + u0 * u1 + u1**2) + (1.3**4 - 0.5**4) / 4
        assert float(c) == pytest.approx(exact_c, rel=1e-12)
    assert 12 < errs[0] / errs[1] < 20  # fourth order: error / 16 when the step halves
    assert errs[1] < 3e-5


@pytest.mark.parametrize("method", [MultipleShooting(), BSplineTranscription(degree=3)])
def test_two_phases_equal_one(method):
    one = solve(transfer(nodes=21), method=method, verbose=False)
    a = Phase(point_mass(), name="a", nodes=11, duration=0.5, objectives=[Effort()],
              initial={"q": [0.0], "qd": [0.0]})  # fmt: skip
    b = Phase(point_mass(), name="b", nodes=11, duration=0.5, objectives=[Effort()],
              final={"q": [1.0], "qd": [0.0]})  # fmt: skip
    two = solve(OptimalControlProblem([a, b]), method=method, verbose=False)
    assert one.success and two.success
    assert two.cost == pytest.approx(one.cost, rel=1e-7) and one.cost == pytest.approx(12.0)
    for res in (one, two):
        np.testing.assert_allclose(res.tau[:, 0], 6 - 12 * res.t, atol=1e-6)


def test_constant_controls_are_consistent_with_simulation():
    # piecewise-constant torques replayed open loop reach the target as the transcription says
    res = solve(transfer(nodes=11), method=MultipleShooting(control="constant"), verbose=False)
    assert res.success
    ctl = ReplayController(res, interpolation="previous")
    sim = simulate(point_mass(), (0.0, 1.0), [0.0], [0.0], tau=ctl, rtol=1e-11, atol=1e-12,
                   max_step=0.01, constraints=[])  # fmt: skip
    assert sim.q[-1, 0] == pytest.approx(1.0, abs=1e-5)
    assert sim.qd[-1, 0] == pytest.approx(0.0, abs=1e-4)
    # the optimal zero-order hold of τ = 6 − 12t is the interval average (a staircase)
    tau = res.tau[:-1, 0]
    assert np.all(np.diff(tau) < 0) and tau[0] == pytest.approx(-tau[-1], rel=1e-8)


def test_minimum_time_bang_bang():
    # |τ| ≤ 1 on a unit mass over 1 m from rest to rest: T* = 2 s, τ = +1 then −1
    def ph(nodes):
        return Phase(point_mass(), nodes=nodes, duration=(0.5, 5.0), objectives=[FinalTime()],
                     tau_bounds=(-1.0, 1.0), initial={"q": [0.0], "qd": [0.0]},
                     final={"q": [1.0], "qd": [0.0]})  # fmt: skip

    res = solve(ph(21), method=MultipleShooting(control="constant"), verbose=False)
    assert res.success and res.duration == pytest.approx(2.0, abs=1e-6)
    np.testing.assert_allclose(res.tau[:10, 0], 1.0, atol=1e-6)
    np.testing.assert_allclose(res.tau[10:20, 0], -1.0, atol=1e-6)
    for method in (MultipleShooting(), BSplineTranscription(degree=3)):
        res = solve(ph(41), method=method, verbose=False)
        assert res.success and res.duration == pytest.approx(2.0, rel=0.03)


@pytest.mark.parametrize("method", [MultipleShooting(), BSplineTranscription()])
def test_implicit_dynamics_and_warm_start(method):
    def ph(dynamics):
        return Phase(single_pendulum(), nodes=31, duration=1.0, dynamics=dynamics,
                     objectives=[Effort()], q_bounds=(-10, 10),
                     initial={"q": [-np.pi / 2], "qd": [0.0]},
                     final={"q": [np.pi / 2], "qd": [0.0]})  # fmt: skip

    explicit = solve(ph("explicit"), method=method, verbose=False)
    implicit = solve(ph("implicit"), method=method, verbose=False)
    assert explicit.success and implicit.success
    # the two forms discretize differently (piecewise-linear q̈ or τ): equal to O(h²)
    assert implicit.cost == pytest.approx(explicit.cost, rel=3e-3)
    np.testing.assert_allclose(implicit.tau, explicit.tau, atol=0.03 * np.abs(explicit.tau).max())
    warm = solve(ph("explicit"), method=method, guess=explicit, verbose=False)
    assert warm.success and warm.iterations <= 3
    assert warm.cost == pytest.approx(explicit.cost, rel=1e-9)


def test_bspline_bounds_hold_at_the_collocation_points():
    ph = Phase(single_pendulum(), nodes=41, duration=1.0, objectives=[Effort()],
               q_bounds=(-10, 10), qd_bounds=(-4.0, 4.0), tau_bounds=(-1.2, 1.2),
               initial={"q": [-np.pi / 2], "qd": [0.0]},
               final={"q": [np.pi / 2], "qd": [0.0]})  # fmt: skip
    res = solve(ph, method=BSplineTranscription(), verbose=False)
    assert res.success
    assert np.abs(res.qd).max() <= 4.0 + 1e-7 and np.abs(res.qd).max() > 3.99  # active
    assert np.abs(res.tau).max() <= 1.2 + 1e-7


@pytest.mark.parametrize(
    "method", [MultipleShooting(steps=1), BSplineTranscription(control_points=21)]
)
def test_contact_forces_balance_the_body(method):
    # a rod standing on its end (contact point at the origin, no slip), free to translate in
    # x and z (unactuated) and turned by a torque about y: the contact force equals
    # m (r̈_com − g) and the torque equals that of the same rod on a pin at its end
    rod = Model("rod", (0.0, 0.0, -9.81))
    rod.add_body("px", "ground", {"type": "prismatic", "axis": [1, 0, 0], "name": "x"})
    rod.add_body("pz", "px", {"type": "prismatic", "axis": [0, 0, 1], "name": "z"})
    rod.add_body("rod", "pz", {"type": "revolute", "axis": [0, -1, 0], "name": "pin"}, mass=0.5,
                 com=[0.2, 0, 0], inertia=np.diag([0.0, 0.0067, 0.0067]))  # fmt: skip
    common = dict(nodes=21, duration=0.8, objectives=[Effort()], q_bounds=(-10, 10))
    standing = Phase(
        rod, actuated=["pin"], contacts=[ContactPoint("rod", (0, 0, 0), axes="xz", anchor=(0.0,))],
        initial={"q": [0, 0, 0.2], "qd": [0, 0, 0]}, final={"q": [0, 0, 1.2], "qd": [0, 0, 0]},
        **common,
    )  # fmt: skip
    pinned = Phase(single_pendulum(inertia_o=0.0267), initial={"q": [0.2], "qd": [0.0]},
                   final={"q": [1.2], "qd": [0.0]}, **common)  # fmt: skip
    a = solve(standing, method=method, verbose=False)
    b = solve(pinned, method=method, verbose=False)
    assert a.success and b.success
    np.testing.assert_allclose(a.tau[:, :2], 0.0, atol=1e-7)  # unactuated
    np.testing.assert_allclose(a.q[:, :2], 0.0, atol=1e-7)  # no slip, on the ground
    # Newton's law at the nodes, with the solution's own accelerations
    q, qd, qdd = a.q[:, 2], a.qd[:, 2], a.qdd[:, 2]
    acc_x = a.qdd[:, 0] + 0.2 * (-np.sin(q) * qdd - np.cos(q) * qd**2)
    acc_z = a.qdd[:, 1] + 0.2 * (np.cos(q) * qdd - np.sin(q) * qd**2)
    F = a.phases[0].forces["rod_contact"]
    np.testing.assert_allclose(F[:, 0], 0.5 * acc_x, atol=1e-6)
    np.testing.assert_allclose(F[:, 2], 0.5 * (acc_z + 9.81), atol=1e-6)
    # the same optimal torque as on a pin (contacts hold at the nodes only, so multiple
    # shooting lets the point move between them: equal to O(h²) there)
    tol = 1e-4 if isinstance(method, BSplineTranscription) else 0.03
    np.testing.assert_allclose(a.tau[:, 2], b.tau[:, 0], atol=tol * np.abs(b.tau).max())
    assert a.cost == pytest.approx(b.cost, rel=tol)


def test_names_and_bad_options():
    nlp = get_transcription("multiple-shooting").build(transfer(nodes=4))
    assert "phase shooting 2 qd:x" in nlp.g_names
    nlp = get_transcription("bspline").build(transfer(nodes=6, tau_bounds=(-5, 5)))
    assert "phase[3] bound tau:x" in nlp.g_names
    with pytest.raises(DataError, match="steps"):
        MultipleShooting(steps=0)
    with pytest.raises(DataError, match="control"):
        MultipleShooting(control="cubic")
    with pytest.raises(DataError, match="degree"):
        BSplineTranscription(degree=1)
    with pytest.raises(DataError, match="control_points"):
        BSplineTranscription(degree=3, control_points=3)


def test_predictive_walk_by_multiple_shooting():
    # the same multi-phase problem object (contacts, impact, symmetry, free durations,
    # implicit dynamics) as the collocation example, transcribed by multiple shooting
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "predictive_walking_2d.py"
    spec = importlib.util.spec_from_file_location("ahbm_example_walk_shooting", path)
    walk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walk)
    n = walk.run(None, quick=True, method=MultipleShooting())
    assert n["success"], n["status"]
    assert n["speed"] == pytest.approx(1.2, rel=1e-6)
    assert 0.5 < n["stance_fraction"] < 0.7
    assert n["violation"] < 1e-6


def test_replaying_a_swing_up_with_feedback():
    # the optimal swing-up ends at the unstable upright position: replayed open loop (torques
    # interpolated linearly between the nodes) the motion drifts from the plan, with feedback
    # it reaches the upright position
    ph = Phase(single_pendulum(), nodes=41, duration=1.0, objectives=[Effort()],
               q_bounds=(-10, 10), initial={"q": [-np.pi / 2], "qd": [0.0]},
               final={"q": [np.pi / 2], "qd": [0.0]})  # fmt: skip
    res = solve(ph, method=BSplineTranscription(), verbose=False)
    assert res.success
    errors = {}
    for name, gains in (("open", {}), ("feedback", {"kp": 5.0, "kv": 0.5})):
        ctl = ReplayController(res, **gains)
        sim = simulate(single_pendulum(), (0.0, 1.0), [-np.pi / 2], [0.0], tau=ctl,
                       rtol=1e-10, atol=1e-12, max_step=0.005, constraints=[])  # fmt: skip
        errors[name] = abs(sim.q[-1, 0] - np.pi / 2)
        mid = np.searchsorted(sim.t, 0.5)
        assert abs(sim.q[mid, 0] - ctl.desired(sim.t[mid])[0][0]) < 1e-2  # follows the plan
    # open loop: 5e-2 rad off at the end; with feedback: 5e-5
    assert errors["feedback"] < 1e-3 < 1e-2 < errors["open"]
