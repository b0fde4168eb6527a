"""Muscle-driven forward simulation (ahbm.muscles.simulate): energy conservation with
passive muscles, a held posture, path speed identity, excitation forms, bad input.

The comparison with OpenSim's forward simulation is in tests/peers/test_opensim_hill.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from ahbm.errors import DataError
from ahbm.kinematics import kinetic_energy, potential_energy
from ahbm.kinematics.tree import Model
from ahbm.muscles import (
    Muscle,
    MuscleParameters,
    PathPoint,
    lengthening_speeds,
    moment_arms,
    muscle_equilibrium,
    muscle_lengths,
    muscle_tendon_forces,
    passive_force_length,
    simulate_muscles,
)


def _arm(model="DeGrooteFregly2016Muscle"):
    """Planar two-link arm (revolute z joints), gravity -y, three straight-line muscles:
    a shoulder flexor, an elbow flexor and a two-joint muscle."""
    m = Model("two-link arm", gravity=(0.0, -9.81, 0.0))
    inertia = np.diag([0.01, 0.01, 0.02])
    m.add_body(
        "upper",
        "ground",
        {"type": "revolute", "axis": [0, 0, 1]},
        mass=2.0,
        com=(0.15, 0, 0),
        inertia=inertia,
    )
    m.add_body(
        "fore",
        "upper",
        {"type": "revolute", "axis": [0, 0, 1]},
        position=(0.3, 0, 0),
        mass=1.5,
        com=(0.12, 0, 0),
        inertia=inertia,
    )
    kw = dict(model=model, pennation_angle=0.1)
    m.muscles = [
        Muscle(
            "shoulder",
            (PathPoint("o", "ground", (0.0, 0.06, 0)), PathPoint("i", "upper", (0.12, 0.01, 0))),
            max_isometric_force=800.0,
            optimal_fiber_length=0.08,
            tendon_slack_length=0.06,
            **kw,
        ),
        Muscle(
            "elbow",
            (PathPoint("o", "upper", (0.15, 0.02, 0)), PathPoint("i", "fore", (0.04, 0.01, 0))),
            max_isometric_force=600.0,
            optimal_fiber_length=0.1,
            tendon_slack_length=0.08,
            **kw,
        ),
        Muscle(
            "biarticular",
            (PathPoint("o", "ground", (0.02, -0.03, 0)), PathPoint("i", "fore", (0.05, -0.012, 0))),
            max_isometric_force=500.0,
            optimal_fiber_length=0.16,
            tendon_slack_length=0.2,
            **kw,
        ),
    ]
    return m


def test_passive_muscles_conserve_energy():
    """De Groote, rigid tendons, zero activation, no damping: the passive fiber forces are
    conservative; kinetic + gravitational + passive elastic energy stays constant."""
    m = _arm()
    p = MuscleParameters.from_muscles(m.muscles)
    q0 = np.array([-0.6, 1.9])  # stretches the shoulder and elbow muscles into passive range
    r = simulate_muscles(
        m,
        (0.0, 0.6),
        q0,
        excitations=np.zeros(3),
        activation0=np.zeros(3),
        curves="degroote2016",
        rigid_tendon=True,
        method="DOP853",
        rtol=1e-11,
        atol=1e-12,
    )
    assert np.all(r.activation == 0.0)
    ln = r.fiber_length / p.optimal_fiber_length
    assert np.any(passive_force_length(ln, curves="degroote2016", params=p) > 0.05)

    def elastic(ln_t, j):  # F0 lM0 ∫ fPE(x) dx from x = 0.5 (rigid tendon: dW = F_M dl_M)
        one = p.select([j])
        f = lambda x: passive_force_length([x], curves="degroote2016", params=one)[0]  # noqa: E731
        return p.max_isometric_force[j] * p.optimal_fiber_length[j] * quad(f, 0.5, ln_t)[0]

    idx = np.linspace(0, len(r.t) - 1, 12).astype(int)
    energy = [
        kinetic_energy(m, r.q[i], r.qd[i])
        + potential_energy(m, r.q[i])
        + sum(elastic(ln[i, j], j) for j in range(3))
        for i in idx
    ]
    swing = np.ptp(kinetic_energy(m, r.q, r.qd))
    assert swing > 0.5  # the arm really moves
    assert np.ptp(energy) < 1e-6 * swing


@pytest.mark.parametrize(
    "curves, rigid", [("thelen2003", True), ("thelen2003", False), ("degroote2016", False)]
)
def test_activations_that_balance_gravity_hold_the_posture(curves, rigid):
    m = _arm("Thelen2003Muscle" if curves == "thelen2003" else "DeGrooteFregly2016Muscle")
    p = MuscleParameters.from_muscles(m.muscles).select(["shoulder", "elbow"])
    q = np.array([0.3, 0.8])
    r = moment_arms(m, q, muscles=["shoulder", "elbow"])  # (2, 2), lower triangular
    assert r[1, 0] == 0.0
    gravity = -np.array(  # generalized force the muscles must supply: G(q)
        [
            np.gradient([potential_energy(m, q + d) for d in e], 1e-6)[1]
            for e in (
                np.array([[-1e-6, 0], [0, 0], [1e-6, 0]]),
                np.array([[0, -1e-6], [0, 0], [0, 1e-6]]),
            )
        ]
    )
    force = np.linalg.solve(r.T, -gravity)
    lmt = muscle_lengths(m, q, muscles=["shoulder", "elbow"])
    # the activations giving those forces at rest
    a = np.empty(2)
    for j in range(2):
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            s = muscle_equilibrium(p, [mid, mid], lmt, curves=curves, rigid_tendon=rigid)
            lo, hi = (mid, hi) if s.tendon_force[j] < force[j] else (lo, mid)
        a[j] = 0.5 * (lo + hi)
    assert np.all((a > 0.02) & (a < 0.98))
    res = simulate_muscles(
        m,
        (0.0, 0.4),
        q,
        muscles=["shoulder", "elbow"],
        excitations=a,
        activation0=a,
        curves=curves,
        rigid_tendon=rigid,
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_allclose(res.q, np.broadcast_to(q, res.q.shape), atol=1e-7)
    np.testing.assert_allclose(res.tendon_force[-1], force, rtol=1e-6)
    np.testing.assert_allclose(res.muscle_tau, np.broadcast_to(-gravity, res.q.shape), atol=1e-5)


def test_path_speed_and_generalized_forces_are_consistent():
    m = _arm()
    rng = np.random.default_rng(1)
    q, qd = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    r = moment_arms(m, q)
    np.testing.assert_allclose(
        -np.einsum("fmv,fv->fm", r, qd), lengthening_speeds(m, q, qd), atol=1e-12
    )
    res = simulate_muscles(
        m,
        (0.0, 0.05),
        q[0],
        qd[0],
        excitations=[0.3, 0.5, 0.7],
        rigid_tendon=True,
        t_eval=[0.0, 0.02, 0.05],
    )
    lmt = muscle_lengths(m, res.q)
    np.testing.assert_allclose(res.mt_length, lmt, rtol=1e-14)
    np.testing.assert_allclose(res.mt_speed, lengthening_speeds(m, res.q, res.qd), atol=1e-12)
    np.testing.assert_allclose(res.activation[0], [0.3, 0.5, 0.7])  # a0 = u(t0)
    first = muscle_equilibrium(
        MuscleParameters.from_muscles(m.muscles),
        res.activation[0],
        lmt[0],
        res.mt_speed[0],
        rigid_tendon=True,
    )
    np.testing.assert_allclose(res.tendon_force[0], first.tendon_force, rtol=1e-13)
    np.testing.assert_allclose(
        res.muscle_tau, np.einsum("fmv,fm->fv", moment_arms(m, res.q), res.tendon_force), rtol=1e-12
    )


def test_excitation_forms_agree():
    m = _arm()
    tt = np.array([0.0, 0.05, 0.1])
    table = np.array([[0.1, 0.2, 0.3], [0.9, 0.5, 0.1], [0.4, 0.4, 0.4]])

    def u(t):
        return np.array([np.interp(t, tt, table[:, j]) for j in range(3)])

    kw = dict(t_eval=[0.0, 0.05, 0.1], rtol=1e-9, atol=1e-11, curves="degroote2016")
    a = simulate_muscles(m, (0.0, 0.1), [0.2, 0.5], excitations=table, excitation_time=tt, **kw)
    b = simulate_muscles(m, (0.0, 0.1), [0.2, 0.5], excitations=u, **kw)
    c = simulate_muscles(m, (0.0, 0.1), [0.2, 0.5], controller=lambda t, q, qd, act: u(t), **kw)
    np.testing.assert_allclose(a.q, b.q, atol=1e-8)
    np.testing.assert_allclose(a.q, c.q, atol=1e-8)
    np.testing.assert_allclose(a.excitation, table, atol=1e-12)
    # activation follows excitation upward (faster) and downward
    assert a.activation[1, 0] > a.activation[0, 0] and a.activation[1, 2] < a.activation[0, 2]


def test_bad_input():
    m = _arm()
    with pytest.raises(DataError, match="exactly one"):
        simulate_muscles(m, (0, 0.1), [0, 0])
    with pytest.raises(DataError, match="excitation_time"):
        simulate_muscles(m, (0, 0.1), [0, 0], excitations=np.zeros((4, 3)))
    with pytest.raises(DataError, match="shape"):
        simulate_muscles(m, (0, 0.1), [0, 0], excitations=np.zeros(2))
    with pytest.raises(DataError, match="unknown muscles"):
        simulate_muscles(m, (0, 0.1), [0, 0], excitations=[0.1], muscles=["nope"])
    with pytest.raises(DataError, match="q0"):
        simulate_muscles(m, (0, 0.1), [0, 0, 0], excitations=np.zeros(3))
    with pytest.raises(DataError, match="controller"):
        simulate_muscles(m, (0, 0.1), [0, 0], controller=lambda t, q, qd, a: "x")
    with pytest.raises(DataError, match="t_eval"):
        simulate_muscles(m, (0, 0.1), [0, 0], excitations=np.zeros(3), t_eval=[0.0, 0.5])
    with pytest.raises(DataError, match="muscle names"):
        simulate_muscles(m, (0, 0.1), [0, 0], excitations=[0.1], muscles=[1])
    p = MuscleParameters.from_muscles(m.muscles)
    with pytest.raises(DataError, match="fiber_state"):
        muscle_tendon_forces(p, [0.5] * 3, [0.3] * 3, [0.0] * 3, [0.1, 0.1])
    with pytest.raises(DataError, match="fiber_state"):
        muscle_tendon_forces(p, [0.5] * 3, [0.3] * 3, [0.0] * 3)
    bare = Model("bare")
    bare.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0)
    with pytest.raises(DataError, match="no muscles"):
        simulate_muscles(bare, (0, 0.1), [0.0], excitations=[0.1])


@pytest.mark.parametrize("curves", ["thelen2003", "degroote2016"])
def test_fiber_state_rate_vanishes_at_equilibrium(curves):
    """At the equilibrium of muscle_equilibrium the fiber state does not move (at rest for
    Thelen; De Groote's equilibrium keeps the tendon force constant at any speed)."""
    m = _arm()
    p = MuscleParameters.from_muscles(m.muscles).resolved(curves)
    rng = np.random.default_rng(3)
    lmt = muscle_lengths(m, rng.uniform(0.0, 1.0, (4, 2)))
    a = rng.uniform(0.1, 0.9, (4, 3))
    vmt = np.zeros((4, 3)) if curves == "thelen2003" else rng.uniform(-0.2, 0.2, (4, 3))
    s = muscle_equilibrium(p, a, lmt, vmt, curves=curves)
    z = s.fiber_length if curves == "thelen2003" else s.tendon_force / p.max_isometric_force
    f, lm, rate = muscle_tendon_forces(p, a, lmt, vmt, z, curves=curves)
    np.testing.assert_allclose(f, s.tendon_force, rtol=1e-12)
    np.testing.assert_allclose(lm, s.fiber_length, rtol=1e-12)
    scale = p.optimal_fiber_length * p.max_contraction_velocity if curves == "thelen2003" else 1
    assert np.all(np.abs(rate) < 1e-6 * scale)


def test_thelen_excitation_floor_is_the_minimum_activation():
    m = _arm("Thelen2003Muscle")
    r = simulate_muscles(m, (0.0, 0.3), [0.3, 0.8], excitations=np.zeros(3),
                         activation0=[0.5, 0.3, 0.2], rigid_tendon=True)  # fmt: skip
    np.testing.assert_array_equal(r.excitation, 0.01)
    assert np.all(r.activation > 0.01 - 1e-9)
    assert np.all(r.activation[-1] < 0.02)  # deactivated (tau_deact 0.05 s)
