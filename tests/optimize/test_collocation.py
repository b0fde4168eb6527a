"""Direct collocation (trapezoidal, Hermite-Simpson): consistency, convergence, solver options.

Chung's pendulum suite against the exact optimum and the closed forms for every transcription
are in test_pendulum_suite.py and test_closed_forms.py.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("casadi")

from scipy.integrate import solve_ivp  # noqa: E402
from scipy.linalg import expm, solve_continuous_are  # noqa: E402

from ahbm.dynamics import simulate  # noqa: E402
from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.models import single_pendulum  # noqa: E402
from ahbm.optimize import (  # noqa: E402
    CustomCost,
    Effort,
    Phase,
    TrackCoordinates,
    Waypoint,
    solve,
)

METHODS = ["trapezoidal", "hermite-simpson"]
# Chung (2009) §6.3, eq 6.8 and table 6.2: applied torque amplitude, time, mid-point time
CASES = {1: (0.0, 0.406, None), 2: (0.1, 0.43, None), 3: (0.1, 1.79, None), 4: (0.1, 1.79, 0.76)}


def _pendulum():
    return single_pendulum(mass=0.5, length=0.4, inertia_o=0.0267)


def _applied(amp):
    return lambda t: amp * np.sin(5.0 * t)


def _case(case):
    """Final conditions (and the mid-point value) by forward simulation from rest."""
    amp, T, t_mid = CASES[case]
    m = _pendulum()
    t_eval = [T] if t_mid is None else [t_mid, T]
    sim = simulate(m, (0.0, T), [0.0], [0.0], tau=lambda t, q, qd: [_applied(amp)(t)],
                   method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t_eval)  # fmt: skip
    return m, amp, T, t_mid, sim


def _phase(case, objectives, *, nodes=61, duration=None):
    m, amp, T, t_mid, sim = _case(case)
    cons = [] if t_mid is None else [Waypoint(t_mid, {"pin": float(sim.q[0, 0])})]
    return Phase(m, nodes=nodes, duration=T if duration is None else duration,
                 objectives=objectives, q_bounds=(-np.pi, np.pi), tau_bounds=(-10.0, 10.0),
                 initial={"q": [0.0], "qd": [0.0]}, final={"q": sim.q[-1], "qd": sim.qd[-1]},
                 constraints=cons)  # fmt: skip


def _rms(r, amp):
    return float(np.sqrt(np.mean((r.tau[:, 0] - _applied(amp)(r.t)) ** 2)))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", [3, 4])
def test_predicted_torque_drives_the_pendulum_to_the_final_state(method, case):
    """Simulating the predicted torque reaches the prescribed state (dynamic consistency).

    tests/optimize/test_pendulum_suite.py checks the prediction of every transcription against
    the exact optimum (Pontryagin); this checks the collocated motion against an integrator.
    """
    amp, T, _ = CASES[case]
    nodes = 61 if method == "hermite-simpson" else 121
    r = solve(_phase(case, [Effort()], nodes=nodes), method=method, verbose=False)
    assert r.success, r.summary()
    # the applied torque is feasible; the optimum costs no more (to the quadrature error)
    applied_cost = amp**2 * (T / 2 - np.sin(10 * T) / 20)
    assert r.cost <= applied_cost * (1 + 1e-3)
    # the predicted torque drives the pendulum to the same final state (dynamic consistency)
    tau = lambda t, x: [np.interp(t, r.t, r.tau[:, 0])]  # noqa: E731
    m = _pendulum()
    sd = lambda t, x: [x[1], (tau(t, x)[0] - 0.5 * 9.81 * 0.2 * np.cos(x[0])) / 0.0267]  # noqa: E731
    end = solve_ivp(sd, (0, T), [0.0, 0.0], rtol=1e-10, atol=1e-10).y[:, -1]
    assert m.nq == 1
    np.testing.assert_allclose(
        end, [r.q[-1, 0], r.qd[-1, 0]], atol=5e-2 if method[0] == "t" else 2e-3
    )
    # the torque is the applied one to within 1-20 % of its amplitude (Chung's "correct" prediction)
    assert _rms(r, amp) < 0.25 * amp


@pytest.mark.parametrize("method", METHODS)
def test_collocation_order_on_the_double_integrator(method):
    """x'' = u from rest at 0 to rest at 1 in T: u = 6/T^2 - 12 t/T^3, cost 12/T^3."""
    m = Model(gravity=(0.0, 0.0, 0.0))
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    T = 2.0
    cost_errors = []
    for n in (11, 21):
        ph = Phase(m, nodes=n, duration=T, objectives=[Effort()],
                   initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})  # fmt: skip
        r = solve(ph, method=method, verbose=False)
        exact = 12 / T**3
        cost_errors.append(abs(r.cost - exact))
        if method == "hermite-simpson":  # cubic q: exact on any grid
            np.testing.assert_allclose(r.tau[:, 0], 6 / T**2 - 12 * r.t / T**3, atol=1e-9)
            assert cost_errors[-1] < 1e-9
        else:
            assert cost_errors[-1] < 0.1 * exact
    if method == "trapezoidal":  # second order: halving h divides the error by about 4
        assert 3.0 < cost_errors[0] / cost_errors[1] < 5.0


def test_lqr_against_the_riccati_solution():
    """ẋ = Ax + Bu, ∫ xᵀQx + uᵀRu with the terminal cost x(T)ᵀ P x(T): u = −R⁻¹BᵀP x for all t."""
    m = Model(gravity=(0.0, 0.0, 0.0))
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    B = np.array([[0.0], [1.0]])
    Q, R = np.diag([4.0, 1.0]), np.array([[0.5]])
    P = solve_continuous_are(A, B, Q, R)
    K = np.linalg.solve(R, B.T @ P)
    x0, T = np.array([1.0, -0.5]), 3.0

    def lagrange(x, u, p, t):
        return x[0] * x[0] * Q[0, 0] + x[1] * x[1] * Q[1, 1] + R[0, 0] * u[0] * u[0]

    def mayer(x0_, xf, T_, p):
        return P[0, 0] * xf[0] ** 2 + 2 * P[0, 1] * xf[0] * xf[1] + P[1, 1] * xf[1] ** 2

    ph = Phase(m, nodes=61, duration=T, objectives=[CustomCost(lagrange), CustomCost(mayer,
               kind="mayer", name="terminal")], initial={"q": [x0[0]], "qd": [x0[1]]})  # fmt: skip
    r = solve(ph, method="hermite-simpson", verbose=False)
    assert r.success, r.summary()
    x = np.stack([expm((A - B @ K) * t) @ x0 for t in r.t])
    np.testing.assert_allclose(np.c_[r.q, r.qd], x, atol=1e-5)
    np.testing.assert_allclose(r.tau[:, 0], -(x @ K.T)[:, 0], atol=3e-3)  # O(h^2) controls
    assert abs(r.cost - x0 @ P @ x0) < 1e-5 * (x0 @ P @ x0)  # the value function


@pytest.mark.parametrize("solver", ["slsqp", "trust-constr"])
def test_scipy_fallback_matches_ipopt(solver):
    ph = _phase(2, [Effort()], nodes=11)  # SLSQP is dense: a small problem
    a = solve(ph, method="hermite-simpson", verbose=False)
    b = solve(ph, method="hermite-simpson", solver=solver, verbose=False, tol=1e-10)
    assert b.success, b.summary()
    assert b.solver == solver and b.iterations > 0
    np.testing.assert_allclose(b.cost, a.cost, rtol=1e-5)
    np.testing.assert_allclose(b.tau, a.tau, atol=1e-3)  # 1 % of the torque amplitude


def test_limited_memory_hessian_and_warm_start(capfd):
    ph = _phase(3, [Effort()])
    exact = solve(ph, verbose=False)
    lbfgs = solve(ph, hessian="limited-memory", verbose=True)
    out = capfd.readouterr().out
    assert "iter" in out and "objective" in out  # IPOPT's per-iteration log
    assert "success" in out  # summary line
    assert lbfgs.success and abs(lbfgs.cost - exact.cost) < 1e-6 * max(1.0, exact.cost) + 1e-8
    warm = solve(ph, guess=exact, verbose=False)
    assert warm.success and warm.iterations <= 3 < exact.iterations


def test_infeasible_problem_reports_the_violated_constraints_by_name():
    m = _pendulum()
    # a torque limit far below gravity's: the rod cannot be held up at the end
    ph = Phase(m, nodes=21, duration=0.5, objectives=[Effort()], tau_bounds=(-0.01, 0.01),
               initial={"q": [0.0], "qd": [0.0]}, final={"q": [0.5], "qd": [0.0]})  # fmt: skip
    r = solve(ph, verbose=False, max_iter=200)
    assert not r.success
    assert r.violated and r.constraint_violation > 1e-3
    names = " ".join(n for n, _ in r.violated)
    assert "defect" in names or "final" in names
    assert "FAILED" in r.summary()


def test_tracking_recovers_a_reference_motion():
    m = _pendulum()
    t = np.linspace(0.0, 0.5, 26)
    qref = 0.3 * np.sin(4 * t)
    ph = Phase(m, nodes=26, duration=0.5,
               objectives=[TrackCoordinates(t, qref, weight=1e4), Effort(weight=1e-6)])  # fmt: skip
    r = solve(ph, method="hermite-simpson", verbose=False)
    assert r.success
    np.testing.assert_allclose(r.q[:, 0], qref, atol=2e-3)
    assert set(r.cost_terms) == {"track_coordinates", "effort"}
