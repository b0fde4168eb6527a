"""Muscle-driven forward simulation (ahbm.muscles.simulate): energy conservation with
passive muscles, a held posture, path speed identity, excitation forms, bad input;
MuscleActuators in ahbm.dynamics.simulate against a direct integration, with a
constraint and with joint-limit events.

The comparison with OpenSim's forward simulation is in tests/peers/test_opensim_hill.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from ahbm.dynamics import (
    PrescribedCoordinate,
    SimulationEvent,
    aba,
    coordinate_event,
    crba,
    nonlinear_effects,
    rnea,
    simulate,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import kinetic_energy, potential_energy
from ahbm.kinematics.tree import Model
from ahbm.muscles import (
    Muscle,
    MuscleActuators,
    MuscleParameters,
    PathPoint,
    activation_rate,
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


# --- muscles as a stateful force element of ahbm.dynamics.simulate -----------------------


def _u(t):
    """Excitations of the three arm muscles: a rise, a fall and a step."""
    return np.array([0.2 + 2.0 * t, 0.6 - 1.5 * t, 0.1 if t < 0.1 else 0.5])


def _direct(m, curves, rigid, q0, t_eval, u=_u):
    """Reference: the muscle-driven arm integrated by solve_ivp from the public pieces
    (muscle_lengths, lengthening_speeds, moment_arms, muscle_tendon_forces,
    activation_rate, aba)."""
    from scipy.integrate import solve_ivp

    p = MuscleParameters.from_muscles(m.muscles)
    floor = 0.01 if curves == "thelen2003" else 0.0
    n = 3

    def exc(t):
        return np.maximum(np.clip(u(t), 0.0, 1.0), floor)

    a0 = exc(0.0)
    lmt0 = muscle_lengths(m, q0)
    if rigid:
        z0 = np.zeros(0)
    else:
        s0 = muscle_equilibrium(p, a0, lmt0, np.zeros(n), curves=curves)
        z0 = s0.fiber_length if curves == "thelen2003" else s0.tendon_force / p.max_isometric_force

    def rhs(t, y):
        q, qd, a, z = y[:2], y[2:4], y[4:7], y[7:]
        lmt, vmt, r = muscle_lengths(m, q), lengthening_speeds(m, q, qd), moment_arms(m, q)
        f, _, zdot = muscle_tendon_forces(
            p, a, lmt, vmt, None if rigid else z, curves=curves, rigid_tendon=rigid
        )
        qdd = aba(m, q, qd, r.T @ f)
        zdot = zdot[:0] if rigid else zdot  # rigid tendons: no fiber state
        return np.concatenate([qd, qdd, activation_rate(exc(t), a, p, curves=curves), zdot])

    y0 = np.concatenate([q0, np.zeros(2), a0, z0])
    sol = solve_ivp(rhs, (0.0, t_eval[-1]), y0, method="LSODA", rtol=1e-9, atol=1e-11,
                    t_eval=t_eval)  # fmt: skip
    return sol.y.T


@pytest.mark.parametrize(
    "curves, rigid", [("thelen2003", False), ("degroote2016", False), ("degroote2016", True)]
)
def test_muscle_actuators_in_simulate_follow_the_direct_integration(curves, rigid):
    m = _arm("Thelen2003Muscle" if curves == "thelen2003" else "DeGrooteFregly2016Muscle")
    q0, te = np.array([0.3, 0.8]), np.linspace(0.0, 0.15, 6)
    act = MuscleActuators(m, _u, curves=curves, rigid_tendon=rigid)
    tol = dict(rtol=1e-9, atol=1e-11)
    r = simulate(m, (0.0, 0.15), q0, None, forces=[act], method="LSODA", t_eval=te, **tol)
    ref = _direct(m, curves, rigid, q0, te)
    s = r.force_states["muscles"]
    assert s.shape == (6, 3 if rigid else 6)
    assert np.ptp(r.q, axis=0).min() > 0.01  # both joints move
    np.testing.assert_allclose(r.q, ref[:, :2], atol=1e-7)
    np.testing.assert_allclose(r.qd, ref[:, 2:4], atol=1e-6)
    np.testing.assert_allclose(s[:, :3], ref[:, 4:7], atol=1e-8)
    if not rigid:
        scale = 1.0 if curves == "degroote2016" else 0.1  # normalized force or fiber length (m)
        np.testing.assert_allclose(s[:, 3:], ref[:, 7:], atol=1e-7 * scale)
    kind = "fiber_length" if curves == "thelen2003" else "normalized_tendon_force"
    names = ("shoulder", "elbow", "biarticular")
    expect = tuple(f"{k}.activation" for k in names)
    expect += () if rigid else tuple(f"{k}.{kind}" for k in names)
    assert r.force_state_names["muscles"] == expect
    assert "elbow.activation" in r.to_dataframe().columns
    # simulate_muscles is this simulation with the muscle outputs
    w = simulate_muscles(m, (0.0, 0.15), q0, excitations=_u, curves=curves,
                         rigid_tendon=rigid, t_eval=te, **tol)  # fmt: skip
    out = act.muscle_result(r)
    for field in ("q", "qd", "activation", "tendon_force", "fiber_length", "muscle_tau"):
        np.testing.assert_array_equal(getattr(w, field), getattr(out, field))
    assert w.simulation.force_states["muscles"].shape == s.shape
    # the element's own methods agree with its rates and with muscle_tendon_forces
    tau = act.generalized_force(m, r.q, r.qd, s=s)
    np.testing.assert_allclose(tau, out.muscle_tau, rtol=1e-12, atol=1e-12)
    tau1, sdot1 = act.rates(m, r.q[3], r.qd[3], s[3], t=te[3])
    np.testing.assert_allclose(tau1, tau[3], rtol=1e-12, atol=1e-12)
    sdot = act.state_derivative(m, r.q, r.qd, s, t=te)
    np.testing.assert_allclose(sdot[3], sdot1, rtol=1e-9, atol=1e-12)


def test_muscles_with_a_locked_elbow():
    """A PrescribedCoordinate holds the elbow: the shoulder follows the reduced 1-DOF
    dynamics H₀₀ q̈₀ = τ₀ - C₀ (integrated here from crba and nonlinear_effects), and the
    constraint force is the elbow's row of the equations of motion."""
    from scipy.integrate import solve_ivp

    m = _arm()
    act = MuscleActuators(m, [0.6, 0.3, 0.2], curves="degroote2016", rigid_tendon=True)
    te = np.linspace(0.0, 0.3, 7)
    r = simulate(m, (0.0, 0.3), [0.3, 0.8], None, forces=[act],
                 constraints=[PrescribedCoordinate(m.coordinate_names[1], 0.8)],
                 rtol=1e-10, atol=1e-12, t_eval=te)  # fmt: skip
    p = MuscleParameters.from_muscles(m.muscles)
    u = np.array([0.6, 0.3, 0.2])

    def rhs(t, y):
        q = np.array([y[0], 0.8])
        qd = np.array([y[1], 0.0])
        a = y[2:]
        lmt, vmt, ma = muscle_lengths(m, q), lengthening_speeds(m, q, qd), moment_arms(m, q)
        f, _, _ = muscle_tendon_forces(p, a, lmt, vmt, curves="degroote2016", rigid_tendon=True)
        tau = ma.T @ f
        qdd0 = (tau[0] - nonlinear_effects(m, q, qd)[0]) / crba(m, q)[0, 0]
        return np.concatenate([[y[1], qdd0], activation_rate(u, a, p, curves="degroote2016")])

    ref = solve_ivp(rhs, (0, 0.3), np.concatenate([[0.3, 0.0], u]), method="LSODA",
                    rtol=1e-10, atol=1e-12, t_eval=te).y.T  # fmt: skip
    assert np.ptp(ref[:, 0]) > 0.05
    np.testing.assert_allclose(r.q[:, 0], ref[:, 0], atol=1e-8)
    np.testing.assert_allclose(r.q[:, 1], 0.8, atol=1e-10)
    np.testing.assert_allclose(r.force_states["muscles"], ref[:, 2:], atol=1e-9)
    muscle_tau = act.generalized_force(m, r.q, r.qd, s=r.force_states["muscles"])
    residual = rnea(m, r.q, r.qd, r.qdd) - muscle_tau  # = Gᵀλ, G = e_elbow
    np.testing.assert_allclose(residual[:, 0], 0.0, atol=1e-7)
    np.testing.assert_allclose(np.abs(residual[:, 1]), np.abs(r.lam[:, 0]), rtol=1e-7)


def test_muscles_with_joint_limit_events():
    """Terminal: the flexing elbow stops at its limit with the muscle states of that time.
    Non-terminal: at the limit the elbow's velocity is reversed and the simulation goes on;
    the activations (independent of the motion) keep following activation_rate."""
    from scipy.integrate import solve_ivp

    m = _arm()
    elbow = m.coordinate_names[1]
    kw = dict(curves="degroote2016", rigid_tendon=True)
    u = np.array([0.3, 0.9, 0.2])
    free = simulate(m, (0.0, 0.3), [0.3, 0.8], None, forces=[MuscleActuators(m, u, **kw)],
                    method="LSODA", rtol=1e-10, atol=1e-12)  # fmt: skip
    limit = 0.8 + 0.5 * (free.q[:, 1].max() - 0.8)
    assert free.q[-1, 1] > limit  # the elbow flexes past the limit without the event
    stop = coordinate_event(m, elbow, limit, direction=1, terminal=True)
    r = simulate(m, (0.0, 0.3), [0.3, 0.8], None, forces=[MuscleActuators(m, u, **kw)],
                 events=[stop], method="LSODA", rtol=1e-10, atol=1e-12)  # fmt: skip
    assert r.status == 1
    (log,) = r.events
    assert abs(r.q[-1, 1] - limit) < 1e-9 and r.t[-1] == log["t"] < 0.3
    np.testing.assert_array_equal(log["force_states"], r.force_states["muscles"][-1])
    # up to the event the trajectory is that without the event (interpolated there)
    i = np.searchsorted(free.t, log["t"])
    before = free.force_states["muscles"][: i - 1]
    np.testing.assert_allclose(r.force_states["muscles"][: i - 1], before, atol=1e-12)

    def bounce(t, q, qd):
        return q, np.array([qd[0], -0.5 * qd[1]])

    wall = SimulationEvent(stop.function, direction=1, action=bounce, name="elbow limit")
    te = np.linspace(0.0, 0.3, 31)
    b = simulate(m, (0.0, 0.3), [0.3, 0.8], None, forces=[MuscleActuators(m, u, **kw)],
                 events=[wall], method="LSODA", rtol=1e-10, atol=1e-12, t_eval=te)  # fmt: skip
    assert b.status == 0 and len(b.events) >= 1
    assert b.q[:, 1].max() < limit + 1e-9  # the elbow never passes its limit
    p = MuscleParameters.from_muscles(m.muscles)
    a_ref = solve_ivp(lambda t, a: activation_rate(u, a, p, curves="degroote2016"), (0, 0.3), u,
                      rtol=1e-11, atol=1e-13, t_eval=te).y.T  # fmt: skip
    np.testing.assert_allclose(b.force_states["muscles"][:, :3], a_ref, atol=1e-8)


def test_muscle_actuators_bad_input():
    m = _arm()
    with pytest.raises(DataError, match="exactly one"):
        MuscleActuators(m)
    with pytest.raises(DataError, match="unknown muscles"):
        MuscleActuators(m, [0.1], muscles=["nope"])
    with pytest.raises(DataError, match="once"):
        MuscleActuators(m, [0.1, 0.1], muscles=["elbow", "elbow"])
    with pytest.raises(DataError, match="name"):
        MuscleActuators(m, [0.1] * 3, name="")
    with pytest.raises(DataError, match="activation0"):
        MuscleActuators(m, [0.1] * 3, activation0=[2.0, 0, 0])
    with pytest.raises(DataError, match="rigid_tendon"):
        MuscleActuators(m, [0.1] * 3, rigid_tendon="yes")
    a = MuscleActuators(m, [0.1] * 3)
    with pytest.raises(DataError, match="distinct names"):
        simulate(m, (0, 0.1), [0.3, 0.8], None, forces=[a, MuscleActuators(m, [0.2] * 3)])
    with pytest.raises(DataError, match="has internal states"):
        a.generalized_force(m, [0.3, 0.8], [0.0, 0.0])
    with pytest.raises(DataError, match=r"\(\.\.\., 6\)"):
        a.generalized_force(m, [0.3, 0.8], [0.0, 0.0], s=np.zeros(3))
    plain = simulate(m, (0, 0.01), [0.3, 0.8], None)
    with pytest.raises(DataError, match="states of"):
        a.muscle_result(plain)
    other = Model("other")
    other.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0)
    other.add_body("c", "b", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0)
    with pytest.raises(ModelError, match="no muscles"):
        simulate(other, (0, 0.1), [0.3, 0.8], None, forces=[a])
    bad = MuscleActuators(m, controller=lambda t, q, qd, act: np.ones(2))
    with pytest.raises(DataError, match="controller"):
        simulate(m, (0, 0.1), [0.3, 0.8], None, forces=[bad])


def test_an_event_on_a_muscle_activation_is_located_on_its_trajectory():
    """`uses_states=True`: the event where the first muscle's activation reaches 0.9
    is where the activation of the same simulation without the event crosses 0.9."""
    from ahbm.models import arm_model

    m = arm_model()
    n = len(m.muscles)
    act = MuscleActuators(
        m, lambda t: np.full(n, 0.02 + 0.98 * min(max((t - 0.02) / 0.02, 0.0), 1.0))
    )
    q0, qd0 = np.full(m.nq, 0.3), np.zeros(m.nv)
    opts = {"forces": [act], "rtol": 1e-9, "atol": 1e-10}
    free = simulate(m, (0.0, 0.15), q0, qd0, t_eval=np.linspace(0.0, 0.15, 3001), **opts)
    a = free.force_states["muscles"][:, 0]
    ev = SimulationEvent(lambda t, q, qd, states: states["muscles"][0] - 0.9,
                         direction=1, terminal=True, uses_states=True)  # fmt: skip
    r = simulate(m, (0.0, 0.15), q0, qd0, events=[ev], **opts)
    assert r.t[-1] == pytest.approx(np.interp(0.9, a, free.t), abs=1e-6)
    assert r.force_states["muscles"][-1, 0] == pytest.approx(0.9, abs=1e-9)
