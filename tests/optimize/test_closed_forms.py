"""Optimal-control closed forms solved by every transcription.

* the double integrator's minimum-energy transfer: ``τ = 6 − 12 t``, cost 12;
* linear-quadratic regulation of a mass: the finite-horizon optimum from the
  Riccati differential equation (integrated backwards with ``solve_ivp``) and,
  away from the horizon, the stationary LQR gain of scipy's
  ``solve_continuous_are``;
* Flash & Hogan's (1985) minimum-jerk reach, the quintic
  ``x = x₀ + (x_f − x₀)(10 s³ − 15 s⁴ + 6 s⁵)``, ``∫ x⃛² dt = 720 (x_f − x₀)²/T⁵``,
  through the Phase API (``Jerk`` with ``q``, ``q̇``, ``q̈`` at both ends): exact
  with quintic B-splines, converging with the collocation grids.
"""

import numpy as np
import pytest

pytest.importorskip("casadi")

from scipy.integrate import solve_ivp  # noqa: E402
from scipy.linalg import solve_continuous_are  # noqa: E402

from ahbm.dynamics import rnea  # noqa: E402
from ahbm.errors import DataError  # noqa: E402
from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.optimize import (  # noqa: E402
    BSplineTranscription,
    Effort,
    Jerk,
    MultipleShooting,
    Phase,
    TrackCoordinates,
    solve,
)

METHODS = {
    "trapezoidal": "trapezoidal",
    "hermite-simpson": "hermite-simpson",
    "multiple-shooting": MultipleShooting(steps=4),
    "bspline": BSplineTranscription(degree=5),
}


def point_mass(mass=1.0):
    m = Model("mass", (0.0, 0.0, 0.0))
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0], "name": "x"}, mass=mass)
    return m


@pytest.mark.parametrize("method", list(METHODS))
def test_double_integrator_minimum_energy(method):
    ph = Phase(point_mass(), nodes=21, duration=1.0, objectives=[Effort()],
               initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})  # fmt: skip
    res = solve(ph, method=METHODS[method], verbose=False)
    assert res.success
    t = res.t
    tol = 2e-3 if method == "trapezoidal" else 1e-7  # trapezoidal: O(h²) in the positions
    # (trapezoidal collocation leaves the torques at the two end nodes poorly determined)
    inner = slice(1, -1) if method == "trapezoidal" else slice(None)
    np.testing.assert_allclose(res.tau[inner, 0], (6 - 12 * t)[inner], atol=tol * 30)
    np.testing.assert_allclose(res.q[:, 0], 3 * t**2 - 2 * t**3, atol=tol)
    assert res.cost == pytest.approx(12.0, rel=tol * 5)


def _riccati(T, Q, R):
    """Finite-horizon LQR of the double integrator with free end: P(t), P(T) = 0."""
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    B = np.array([[0.0], [1.0]])

    def rhs(t, p):
        P = p.reshape(2, 2)
        return -(A.T @ P + P @ A - P @ B @ B.T @ P / R + Q).ravel()

    sol = solve_ivp(rhs, (T, 0.0), np.zeros(4), rtol=1e-11, atol=1e-12, dense_output=True)
    return lambda t: sol.sol(t).T.reshape(-1, 2, 2)


@pytest.mark.parametrize("method", list(METHODS))
def test_linear_quadratic_regulator(method):
    T, r, x0 = 8.0, 0.5, np.array([1.0, 0.0])
    Q = np.diag([1.0, 0.0])
    ph = Phase(
        point_mass(), nodes=161 if method == "trapezoidal" else 81, duration=T,
        objectives=[TrackCoordinates([0.0, T], [[0.0], [0.0]]), Effort(weight=r)],
        initial={"q": [x0[0]], "qd": [x0[1]]},
    )  # fmt: skip
    res = solve(ph, method=METHODS[method], verbose=False)
    assert res.success
    t, x = res.t, np.stack([res.q[:, 0], res.qd[:, 0]], axis=1)
    # finite horizon: u = -B'P(t)x / r from the Riccati differential equation
    P = _riccati(T, Q, r)(t)
    u_ref = -np.einsum("nj,nj->n", P[:, 1, :], x) / r
    # piecewise-linear controls (collocation, shooting) approximate the smooth optimum to
    # O(h²); the quintic B-spline to O(h⁴)
    tol = 1e-5 if method == "bspline" else 2e-3
    inner = slice(1, -1) if method == "trapezoidal" else slice(None)
    np.testing.assert_allclose(res.tau[inner, 0], u_ref[inner], atol=tol)
    assert res.cost == pytest.approx(x0 @ P[0] @ x0, rel=tol)
    # far from the horizon: the stationary LQR gain of the algebraic Riccati equation
    Pinf = solve_continuous_are(np.array([[0, 1], [0, 0.0]]), np.array([[0], [1.0]]), Q, [[r]])
    K = Pinf[1] / r
    early = (t < 3.0) & (t > 0.0 if method == "trapezoidal" else True)
    np.testing.assert_allclose(res.tau[early, 0], -(x[early] @ K), atol=max(tol, 5e-4))


def two_link_arm():
    m = Model("arm", (0.0, 0.0, -9.81))
    z = {"type": "revolute", "axis": [0.0, 0.0, 1.0]}
    m.add_body("upper", "ground", dict(z, name="shoulder"), mass=1.9, com=[0.15, 0, 0],
               inertia=np.diag([0.001, 0.0143, 0.0143]))  # fmt: skip
    m.add_body("fore", "upper", dict(z, name="elbow"), position=[0.30, 0, 0], mass=1.4,
               com=[0.18, 0, 0], inertia=np.diag([0.001, 0.0186, 0.0186]))  # fmt: skip
    return m


def quintic(t, q0, qf, T):
    """Flash & Hogan's minimum-jerk motion: q, q̇, q̈ (n, d)."""
    s = np.asarray(t, float)[:, None] / T
    d = (np.asarray(qf, float) - np.asarray(q0, float))[None, :]
    return (q0 + d * (10 * s**3 - 15 * s**4 + 6 * s**5),
            d * (30 * s**2 - 60 * s**3 + 30 * s**4) / T,
            d * (60 * s - 180 * s**2 + 120 * s**3) / T**2)  # fmt: skip


def minimum_jerk_phase(model, q0, qf, T, nodes):
    zero = np.zeros(len(q0))
    return Phase(model, nodes=nodes, duration=T, objectives=[Jerk()],
                 initial={"q": q0, "qd": zero, "qdd": zero},
                 final={"q": qf, "qd": zero, "qdd": zero})  # fmt: skip


def test_minimum_jerk_phase_bspline_is_flash_hogan():
    q0, qf, T = np.radians([20.0, 100.0]), np.radians([75.0, 45.0]), 0.8
    ph = minimum_jerk_phase(two_link_arm(), q0, qf, T, nodes=21)
    res = solve(ph, method=BSplineTranscription(degree=5), verbose=False)
    assert res.success
    q, qd, qdd = quintic(res.t, q0, qf, T)
    np.testing.assert_allclose(res.q, q, atol=1e-6)
    np.testing.assert_allclose(res.qd, qd, atol=1e-6)
    np.testing.assert_allclose(res.qdd, qdd, atol=1e-6)
    # the exact jerk integral (Gauss–Legendre on the spline's third derivative)
    assert res.cost_terms["jerk"] == pytest.approx(720 * np.sum((qf - q0) ** 2) / T**5, rel=1e-9)
    # the torques are the inverse dynamics of the quintic (they are not optimized)
    np.testing.assert_allclose(res.tau, rnea(two_link_arm(), q, qd, qdd), atol=1e-6)


@pytest.mark.parametrize("method", ["trapezoidal", "hermite-simpson"])
def test_minimum_jerk_phase_collocation_converges(method):
    """Finite differences of the node accelerations: the error shrinks about 4x per halving."""
    T, d = 1.0, 0.3
    errors, costs = [], []
    for nodes in (11, 21, 41):
        res = solve(minimum_jerk_phase(point_mass(), [0.0], [d], T, nodes), method=method,
                    verbose=False)  # fmt: skip
        assert res.success
        np.testing.assert_allclose(res.qdd[[0, -1], 0], 0.0, atol=1e-9)  # "qdd" boundaries
        errors.append(np.abs(res.q - quintic(res.t, [0.0], [d], T)[0]).max())
        costs.append(abs(res.cost - 720 * d**2 / T**5))
    assert errors[0] > 2.5 * errors[1] > 6 * errors[2]
    assert costs[0] > costs[1] > costs[2]


def test_acceleration_boundary_values_need_the_controls():
    import casadi as ca

    ph = minimum_jerk_phase(point_mass(mass=2.0), [0.0], [1.0], 1.0, 11)
    x0, xf, p = ca.SX.sym("x0", 2), ca.SX.sym("xf", 2), ca.SX(0, 1)
    with pytest.raises(DataError, match="u0=/uf="):
        ph.boundary_constraints(x0, xf, 1.0, p)
    u0, uf = ca.SX.sym("u0", 1), ca.SX.sym("uf", 1)
    g, lb, ub, names = ph.boundary_constraints(x0, xf, 1.0, p, u0=u0, uf=uf)
    assert names == ["phase initial q:x", "phase initial qd:x", "phase initial qdd:x",
                     "phase final q:x", "phase final qd:x", "phase final qdd:x"]  # fmt: skip
    # q̈ = τ / m of the end controls (forward dynamics), or the given accelerations
    val = ca.Function("g", [x0, xf, u0, uf], [g])([0.1, 0.2], [0.9, 0.3], 3.0, -5.0)
    np.testing.assert_allclose(np.ravel(val), [0.1, 0.2, 1.5, 0.9, 0.3, -2.5], atol=1e-14)
    g, *_ = ph.boundary_constraints(x0, xf, 1.0, p, qdd0=ca.DM([4.0]), qddf=ca.DM([7.0]))
    assert float(ca.Function("g", [x0, xf], [g])([0, 0], [0, 0])[2]) == 4.0
    with pytest.raises(DataError, match="'qdd'"):
        Phase(point_mass(), initial={"qddd": [0.0]})
