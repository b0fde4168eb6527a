"""Tests of the teaching pendulum: RNEA against the closed form, ID(FD) = identity."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import crba, gravity_torques, rnea, simulate
from ahbm.errors import ModelError
from ahbm.kinematics import point_position
from ahbm.models.pendulums import pendulum_torque, single_pendulum


def test_report_parameters():
    m = single_pendulum()
    assert m.total_mass == 0.5
    # J_O = m l^2 / 3 = 0.0267 kg m^2 as printed in the report (rounded)
    assert crba(m, [0.7])[0, 0] == pytest.approx(0.5 * 0.4**2 / 3, rel=1e-12)
    assert round(crba(m, [0.0])[0, 0], 4) == 0.0267
    np.testing.assert_allclose(point_position(m, [np.pi / 2], "rod", [0.4, 0, 0]), [0, 0, 0.4],
                               atol=1e-15)  # fmt: skip


@pytest.mark.parametrize("shape", [(), (7,), (3, 4)])
def test_rnea_matches_closed_form(shape):
    rng = np.random.default_rng(1)
    m = single_pendulum()
    q = rng.uniform(-3, 3, shape + (1,))
    qd = rng.normal(size=shape + (1,))
    qdd = rng.normal(size=shape + (1,))
    tau = rnea(m, q, qd, qdd)[..., 0]
    np.testing.assert_allclose(tau, pendulum_torque(q[..., 0], qdd[..., 0]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("mass", "length", "j_o"), [(1.0, 1.0, None), (2.0, 0.5, 0.4)])
def test_other_parameters(mass, length, j_o):
    m = single_pendulum(mass=mass, length=length, inertia_o=j_o)
    q = np.linspace(-1, 1, 5)[:, None]
    qdd = np.linspace(2, -2, 5)[:, None]
    kw = {"mass": mass, "length": length, "inertia_o": j_o}
    np.testing.assert_allclose(
        rnea(m, q, 0 * q, qdd)[:, 0], pendulum_torque(q[:, 0], qdd[:, 0], **kw)
    )
    np.testing.assert_allclose(
        gravity_torques(m, q)[:, 0], mass * 9.81 * length / 2 * np.cos(q[:, 0])
    )


@pytest.mark.parametrize("gravity", [(0.0, 0.0, -1.62), (3.0, -2.0, -9.0)])
def test_any_gravity_vector(gravity):
    m = single_pendulum(gravity=gravity)
    q = np.linspace(-3, 3, 7)[:, None]
    qdd = np.linspace(2, -2, 7)[:, None]
    np.testing.assert_allclose(
        rnea(m, q, 0 * q, qdd)[:, 0],
        pendulum_torque(q[:, 0], qdd[:, 0], gravity=gravity),
        rtol=1e-12,
        atol=1e-14,
    )


def test_forward_simulation_reproduces_inverse_dynamics():
    m = single_pendulum()
    w = 2 * np.pi

    def motion(t):
        return -0.5 + 0.8 * np.sin(w * t), 0.8 * w * np.cos(w * t), -0.8 * w**2 * np.sin(w * t)

    def tau(t, q, qd):
        a, b, c = motion(t)
        return rnea(m, [a], [b], [c])

    t = np.linspace(0, 0.5, 51)
    r = simulate(m, (0, 0.5), [motion(0.0)[0]], [motion(0.0)[1]], tau=tau, method="DOP853",
                 rtol=1e-10, atol=1e-12, t_eval=t)  # fmt: skip
    np.testing.assert_allclose(r.q[:, 0], motion(t)[0], atol=1e-7)
    # and the inverse dynamics of the simulated motion gives back the torque
    np.testing.assert_allclose(rnea(m, r.q, r.qd, r.qdd)[:, 0],
                               np.array([tau(x, None, None)[0] for x in t]), atol=1e-8)  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"mass": -1.0}, "mass"), ({"length": "a"}, "length"), ({"inertia_o": 0.001}, "inertia_o")],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ModelError, match=match):
        single_pendulum(**kwargs)
