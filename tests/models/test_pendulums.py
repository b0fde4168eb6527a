"""Tests of the pendulum example models (closed forms and conservation laws)."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import aba, crba, gravity_torques, rnea
from ahbm.kinematics import (
    center_of_mass,
    kinetic_energy,
    load_model,
    point_position,
    potential_energy,
    save_model,
)
from ahbm.models import double_pendulum_3d, triple_pendulum_euler


def rk4(model, q, qd, dt, steps, tau=None):
    tau = np.zeros(model.nv) if tau is None else tau

    def f(x):
        return np.r_[x[model.nq :], aba(model, x[: model.nq], x[model.nq :], tau)]

    x = np.r_[q, qd]
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + 0.5 * dt * k1)
        k3 = f(x + 0.5 * dt * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x[: model.nq], x[model.nq :]


def test_double_pendulum_structure():
    m = double_pendulum_3d()
    assert (m.n_bodies, m.nq, m.nv) == (2, 4, 4)
    assert m.bodies[0].joint.type == "revolute" and m.bodies[1].joint.type == "euler"
    np.testing.assert_allclose(point_position(m, np.zeros(4), "pendulum2", [0, 0, -1]), [0, 0, -2])
    np.testing.assert_allclose(center_of_mass(m, np.zeros(4)), [0, 0, -1.0])


@pytest.mark.parametrize("theta", [-1.0, 0.3, 2.0])
def test_double_pendulum_static_pin_torque(theta):
    """Rigid 2 m pendulum about x: holding torque (m1 0.5 + m2 1.5) g sin θ."""
    m = double_pendulum_3d()
    q = np.array([theta, 0, 0, 0])
    tau = gravity_torques(m, q)
    assert tau[0] == pytest.approx(2.0 * 9.81 * np.sin(theta), rel=1e-12)
    # closed-form mass matrix entry for the pin: I1 + m1 0.5² + (I2 + m2 1.5²)
    assert crba(m, q)[0, 0] == pytest.approx(1 + 0.25 + 1 + 2.25, rel=1e-12)


def test_double_pendulum_energy_conserved():
    m = double_pendulum_3d()
    q0 = np.array([0.8, 0.3, -0.5, 0.4])
    qd0 = np.array([0.5, -1.0, 0.7, 0.2])
    e0 = kinetic_energy(m, q0, qd0) + potential_energy(m, q0)
    q1, qd1 = rk4(m, q0, qd0, 2e-3, 250)
    e1 = kinetic_energy(m, q1, qd1) + potential_energy(m, q1)
    assert e1 == pytest.approx(e0, abs=1e-7)


def test_triple_pendulum():
    m = triple_pendulum_euler()
    assert (m.n_bodies, m.nq, m.nv) == (3, 9, 9)
    np.testing.assert_allclose(center_of_mass(m, np.zeros(9)), [0, 0, -2])
    rng = np.random.default_rng(2)
    q = rng.normal(size=9)
    qd = rng.normal(size=9)
    qdd = rng.normal(size=9)
    np.testing.assert_allclose(aba(m, q, qd, rnea(m, q, qd, qdd)), qdd, atol=1e-9)
    assert np.linalg.eigvalsh(crba(m, q)).min() > 0


@pytest.mark.parametrize("build", [double_pendulum_3d, triple_pendulum_euler])
def test_models_round_trip(build, tmp_path):
    m = build()
    assert load_model(save_model(m, tmp_path / "m.json")).to_dict() == m.to_dict()
