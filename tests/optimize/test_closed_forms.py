"""Optimal-control closed forms solved by every transcription.

* the double integrator's minimum-energy transfer: ``τ = 6 − 12 t``, cost 12;
* linear-quadratic regulation of a mass: the finite-horizon optimum from the
  Riccati differential equation (integrated backwards with ``solve_ivp``) and,
  away from the horizon, the stationary LQR gain of scipy's
  ``solve_continuous_are``;
* Flash & Hogan's (1985) minimum-jerk reach, the quintic
  ``x = x₀ + (x_f − x₀)(10 s³ − 15 s⁴ + 6 s⁵)``.
"""

import numpy as np
import pytest

pytest.importorskip("casadi")

from scipy.integrate import solve_ivp  # noqa: E402
from scipy.linalg import solve_continuous_are  # noqa: E402

from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.optimize import (  # noqa: E402
    BSplineTranscription,
    Effort,
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
