"""Tests of ahbm.dynamics.forward (CRBA, ABA) by identities."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import aba, crba, forward_dynamics, nonlinear_effects, rnea
from ahbm.errors import DataError, SimulationError
from ahbm.kinematics import (
    Model,
    integrate_q,
    kinetic_energy,
    potential_energy,
    random_model,
    random_q,
)
from ahbm.kinematics.joints import JOINT_TYPES

ALL = tuple(JOINT_TYPES)


@pytest.fixture(params=[(0, 1), (1, 3), (2, 8), (3, 15)], ids=lambda p: f"seed{p[0]}-n{p[1]}")
def tree(request):
    seed, n = request.param
    rng = np.random.default_rng(300 + seed)
    model = random_model(n, rng=rng, joint_types=ALL)
    return model, rng


def test_aba_inverts_rnea(tree):
    model, rng = tree
    q = random_q(model, rng=rng, size=4)
    qd = rng.normal(size=(4, model.nv))
    qdd = rng.normal(size=(4, model.nv))
    f = rng.normal(size=(4, model.n_bodies, 6))
    tau = rnea(model, q, qd, qdd, f_ext=f)
    np.testing.assert_allclose(aba(model, q, qd, tau, f_ext=f), qdd, atol=1e-9)
    np.testing.assert_allclose(
        forward_dynamics(model, q, qd, tau, method="crba", f_ext=f), qdd, atol=1e-9
    )
    np.testing.assert_allclose(forward_dynamics(model, q, qd, tau, f_ext=f), qdd, atol=1e-9)


def test_crba_columns_and_definiteness(tree):
    model, rng = tree
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    H = crba(model, q)
    bias = nonlinear_effects(model, q, qd)
    cols = rnea(model, q, np.broadcast_to(qd, (model.nv, model.nv)), np.eye(model.nv)) - bias
    np.testing.assert_allclose(H, cols.T, atol=1e-10)
    np.testing.assert_array_equal(H, H.T)
    assert np.linalg.eigvalsh(H).min() > 0
    # kinetic energy ½ q̇ᵀ H q̇
    assert kinetic_energy(model, q, qd) == pytest.approx(0.5 * qd @ H @ qd, rel=1e-12)


def test_power_balance(tree):
    """dE/dt = q̇ᵀ τ along a free trajectory driven by τ (E = T + V)."""
    model, rng = tree
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    qdd = aba(model, q, qd, tau)
    h = 1e-5
    qp = integrate_q(model, q, qd * h + 0.5 * qdd * h**2)
    qm = integrate_q(model, q, -qd * h + 0.5 * qdd * h**2)

    def energy(qq, vv):
        return kinetic_energy(model, qq, vv) + potential_energy(model, qq)

    dE = (energy(qp, qd + h * qdd) - energy(qm, qd - h * qdd)) / (2 * h)
    assert dE == pytest.approx(qd @ tau, abs=1e-5 * (1 + abs(qd @ tau)))


def test_batch_equals_per_frame(tree):
    model, rng = tree
    q = random_q(model, rng=rng, size=(3, 2))
    qd = rng.normal(size=(3, 2, model.nv))
    tau = rng.normal(size=(3, 2, model.nv))
    qdd = aba(model, q, qd, tau)
    H = crba(model, q)
    for idx in np.ndindex(3, 2):
        np.testing.assert_allclose(qdd[idx], aba(model, q[idx], qd[idx], tau[idx]), atol=1e-12)
        np.testing.assert_allclose(H[idx], crba(model, q[idx]), atol=1e-12)


def test_free_body_closed_form():
    """A free rigid body: linear acceleration F/m + g, Euler's equations for the rotation."""
    rng = np.random.default_rng(4)
    m = Model(gravity=[0, 0, -9.81])
    inertia = np.diag([0.2, 0.3, 0.4])
    m.add_body("box", "ground", "free", mass=3.0, inertia=inertia)
    q = random_q(m, rng=rng)
    qd = rng.normal(size=6)
    tau = rng.normal(size=6)
    qdd = aba(m, q, qd, tau)
    np.testing.assert_allclose(qdd[:3], tau[:3] / 3.0 + m.gravity, atol=1e-12)
    w = qd[3:]
    np.testing.assert_allclose(
        qdd[3:], np.linalg.solve(inertia, tau[3:] - np.cross(w, inertia @ w)), atol=1e-12
    )


def test_errors():
    rng = np.random.default_rng(1)
    model = random_model(3, rng=rng)
    q = random_q(model, rng=rng)
    z = np.zeros(model.nv)
    with pytest.raises(DataError, match="`method` must be 'aba' or 'crba'"):
        forward_dynamics(model, q, z, z, method="lu")
    with pytest.raises(DataError, match="Expected `tau` to have shape"):
        aba(model, q, z, z[:-1])
    massless = Model()
    massless.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=0.0)
    with pytest.raises(SimulationError, match="singular"):
        aba(massless, [0.0], [0.0], [1.0])
    with pytest.raises(SimulationError, match="not positive definite"):
        forward_dynamics(massless, [0.0], [0.0], [1.0], method="crba")


@pytest.mark.parametrize("seed", range(3))
def test_aba_equals_reference(seed):
    """The compiled ABA equals the reference ABA (Featherstone Table 7.1), with f_ext."""
    from ahbm.dynamics import reference

    rng = np.random.default_rng(500 + seed)
    model = random_model(10, rng=rng, joint_types=ALL)
    q = random_q(model, rng=rng, size=6)
    qd = rng.normal(size=(6, model.nv))
    tau = rng.normal(size=(6, model.nv))
    f = rng.normal(size=(6, model.n_bodies, 6))
    for ff in (None, f):
        ref = [
            reference.aba(model, q[k], qd[k], tau[k], f_ext=None if ff is None else ff[k])
            for k in range(6)
        ]
        np.testing.assert_allclose(aba(model, q, qd, tau, f_ext=ff), ref, atol=1e-9)
        crb = forward_dynamics(model, q, qd, tau, f_ext=ff, method="crba")
        np.testing.assert_allclose(crb, ref, atol=1e-9)


def test_aba_batch_equals_frames():
    """One call over many frames equals frame-by-frame calls (kernel chunking)."""
    rng = np.random.default_rng(6)
    model = random_model(5, rng=rng, joint_types=ALL)
    n = 150
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    tau = rng.normal(size=(n, model.nv))
    whole = aba(model, q, qd, tau)
    frames = np.array([aba(model, q[k], qd[k], tau[k]) for k in range(n)])
    np.testing.assert_allclose(whole, frames, atol=1e-12)
