"""Muscles on CasADi symbols and muscle-driven optimal control (ahbm.optimize.muscle_driven).

References: the numeric muscle functions (ahbm.muscles: paths, Hill curves, activation
dynamics) at random states, the numeric dynamics (ahbm.dynamics.aba / rnea), and the
optimality of the solutions (tracking, bounds, dynamic consistency).
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import aba, rnea
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.functions import LinearFunction, SimmSpline
from ahbm.kinematics.tree import Model
from ahbm.models.arm import arm_model
from ahbm.muscles import (
    ConditionalPathPoint,
    MovingPathPoint,
    Muscle,
    MuscleParameters,
    PathPoint,
    PathWrap,
    WrapObject,
    activation_rate,
    active_force_length,
    degroote_activation_rate,
    degroote_rigid_tendon_force,
    degroote_tendon_residual,
    force_velocity,
    lengthening_speeds,
    moment_arms,
    muscle_equilibrium,
    muscle_lengths,
    muscle_tendon_forces,
    passive_force_length,
    tendon_force_length,
)

ca = pytest.importorskip("casadi")

from ahbm.optimize import (  # noqa: E402
    Effort,
    MuscleDrivenPhase,
    MuscleEffort,
    TrackCoordinates,
    solve,
    symbolic_muscles,
)


def _path_model():
    """Three coordinates; muscles with fixed, conditional and moving points (no wraps)."""
    m = Model("paths")
    m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1], "name": "j1"}, mass=1.0,
               inertia=np.eye(3) * 0.01)  # fmt: skip
    m.add_body("b", "a", {"type": "universal", "sequence": "XY", "name": "j2"},
               position=(0, -0.3, 0), mass=1.0, inertia=np.eye(3) * 0.01)  # fmt: skip
    spline = SimmSpline([-1.5, -0.5, 0.0, 0.7, 1.5], [0.01, 0.02, 0.0, -0.015, 0.01])
    m.muscles = [
        Muscle("m_moving", (
            PathPoint("o", "ground", (0.02, 0.1, 0.01)),
            ConditionalPathPoint("via", "a", (0.03, -0.1, 0.0), "j1", (-0.4, 0.6)),
            MovingPathPoint("mov", "a", (0.01, -0.25, 0.02), x=("j2_rx", spline),
                            z=("j1", LinearFunction(0.02, 0.01), (-0.5, 0.8))),
            PathPoint("i", "b", (0.0, -0.05, 0.03)),
        ), max_isometric_force=800.0, optimal_fiber_length=0.12, tendon_slack_length=0.2,
            pennation_angle=0.1),  # fmt: skip
        Muscle("m_two_conditional", (
            PathPoint("o", "a", (-0.02, -0.05, 0.0)),
            ConditionalPathPoint("c1", "a", (-0.04, -0.2, 0.01), "j2_rx", (-0.3, 1.0)),
            ConditionalPathPoint("c2", "b", (-0.03, 0.05, 0.0), "j2_ry", (-1.0, 0.2)),
            PathPoint("i", "b", (-0.01, -0.1, -0.02)),
        ), max_isometric_force=500.0, optimal_fiber_length=0.1, tendon_slack_length=0.15),
        Muscle("m_conditional_ends", (
            ConditionalPathPoint("c0", "ground", (0.05, 0.05, 0.0), "j1", (-1.0, 0.3)),
            PathPoint("o", "ground", (0.0, 0.08, 0.0)),
            PathPoint("m", "a", (0.03, -0.15, -0.02)),
            ConditionalPathPoint("c3", "b", (0.02, -0.2, 0.01), "j2_ry", (0.0, 1.2)),
        ), max_isometric_force=300.0, optimal_fiber_length=0.08, tendon_slack_length=0.2),
    ]  # fmt: skip
    return m


def test_paths_on_symbols_equal_the_numeric_paths():
    m = _path_model()
    sm = symbolic_muscles(m)
    rng = np.random.default_rng(3)
    q = rng.uniform(-1.5, 1.5, (40, 3))
    qd = rng.normal(size=(40, 3))
    L = np.array([np.asarray(sm.lengths(x), float).ravel() for x in q])
    R = np.array([np.asarray(sm.moment_arms(x), float) for x in q])
    V = np.array([np.asarray(sm.speeds(x, v), float).ravel() for x, v in zip(q, qd, strict=True)])
    np.testing.assert_allclose(L, muscle_lengths(m, q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(R, moment_arms(m, q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(V, lengthening_speeds(m, q, qd), rtol=0, atol=1e-12)
    # the states cover active and inactive conditional points, clamped moving points
    assert 0 < np.sum((q[:, 0] > -0.4) & (q[:, 0] < 0.6)) < len(q)
    assert 0 < np.sum(q[:, 2] > 0.2) < len(q)
    assert np.abs(R[:, 0, 1]).max() > 1e-3  # the spline point moves with j2_rx


def test_moment_arms_are_minus_the_length_gradient():
    m = _path_model()
    sm = symbolic_muscles(m)
    q = np.array([0.1, 0.4, -0.2])
    h = 1e-6
    fd = np.array([(np.asarray(sm.lengths(q + h * e)) - np.asarray(sm.lengths(q - h * e)))
                   .ravel() / (2 * h) for e in np.eye(3)]).T  # fmt: skip
    np.testing.assert_allclose(np.asarray(sm.moment_arms(q)), -fd, atol=1e-8)


def test_wrapping_muscles_and_bad_selections_raise():
    m = _path_model()
    m.wrap_objects = [WrapObject("cyl", "a", "cylinder", (0, -0.1, 0), np.eye(3), (0.02, 0.1))]
    m.muscles = [
        *m.muscles[:2],
        Muscle(
            "wrapped",
            m.muscles[2].points,
            wraps=(PathWrap("cyl"),),
            max_isometric_force=1.0,
            optimal_fiber_length=0.1,
            tendon_slack_length=0.1,
        ),
    ]
    with pytest.raises(ModelError, match="'wrapped'.*wrapping surfaces"):
        symbolic_muscles(m)
    sm = symbolic_muscles(m, ["m_two_conditional"])
    assert sm.names == ["m_two_conditional"]
    with pytest.raises(DataError, match="'nope' is not a muscle"):
        symbolic_muscles(m, ["nope"])
    with pytest.raises(ModelError, match="no muscles"):
        symbolic_muscles(Model("empty"))


def test_de_groote_curves_on_casadi_equal_the_numeric_curves():
    rng = np.random.default_rng(1)
    p = MuscleParameters(max_isometric_force=rng.uniform(200, 1000, 4),
                         optimal_fiber_length=rng.uniform(0.05, 0.15, 4),
                         tendon_slack_length=rng.uniform(0.05, 0.3, 4),
                         pennation_angle=rng.uniform(0, 0.3, 4),
                         fiber_damping=[0.0, 0.01, 0.0, 0.05])  # fmt: skip
    a = rng.uniform(0, 1, (30, 4))
    e = rng.uniform(0, 1, (30, 4))
    lmt = p.tendon_slack_length + p.optimal_fiber_length * rng.uniform(0.5, 1.6, (30, 4))
    vmt = rng.normal(0, 0.3, (30, 4))
    ref = muscle_equilibrium(p, a, lmt, vmt, curves="degroote2016", rigid_tendon=True)
    # numpy namespace: the same numbers as the validated function
    np.testing.assert_allclose(degroote_rigid_tendon_force(p, a, lmt, vmt), ref.tendon_force,
                               rtol=1e-14, atol=0)  # fmt: skip
    # casadi symbols, one muscle at a time with its parameters as numbers
    A, L, V, E = (ca.SX.sym(n) for n in "alve")
    pr = p.resolved("degroote2016")
    for i in range(4):
        pi = pr.select([i])
        one = type("P", (), {f: float(getattr(pi, f)[0]) for f in (
            "max_isometric_force", "optimal_fiber_length", "tendon_slack_length",
            "pennation_angle", "max_contraction_velocity", "active_force_width_scale",
            "passive_strain", "fiber_damping", "activation_time_constant",
            "deactivation_time_constant", "activation_smoothing")})  # fmt: skip
        F = ca.Function("F", [A, L, V], [degroote_rigid_tendon_force(one, A, L, V, xp=ca)])
        got = np.asarray(F.map(30)(a[:, i], lmt[:, i], vmt[:, i]), float).ravel()
        np.testing.assert_allclose(got, ref.tendon_force[:, i], rtol=1e-12, atol=0)
        ad = ca.Function("ad", [E, A], [degroote_activation_rate(one, E, A, xp=ca)])
        got = np.asarray(ad.map(30)(e[:, i], a[:, i]), float).ravel()
        want = activation_rate(e, a, p, curves="degroote2016")[:, i]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # the single curves (as the public functions evaluate them) on symbols
    from ahbm.muscles import hill_curves as hc

    x = rng.uniform(0.3, 1.7, 50)
    X = ca.SX.sym("x")
    for expr, want in (
        (hc._dg_fal(X, 1.0, ca), active_force_length(x, curves="degroote2016")),
        (hc._dg_fpe(X, 0.6, ca), passive_force_length(x, curves="degroote2016")),
        (hc._dg_ft(X, 0.049, ca), tendon_force_length(x, curves="degroote2016")),
        (hc._dg_fv(X - 1.0, ca), force_velocity(x - 1.0, curves="degroote2016")),
    ):
        got = np.asarray(ca.Function("f", [X], [expr]).map(50)(x), float).ravel()
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_muscle_phase_dynamics_equal_the_numeric_model():
    m = arm_model()
    ph = MuscleDrivenPhase(m, nodes=5, duration=0.5, reserves=["elbow"])
    assert ph.nx == 10 and ph.nu == 8
    assert ph.state_names[4:6] == ["a:TRIlong", "a:TRIlat"]
    assert ph.control_names[2] == "e:TRIlong"
    lo, hi = ph.control_bounds()
    assert lo[0] == hi[0] == 0.0 and np.isinf(hi[1])  # shoulder: no reserve; elbow: free
    rng = np.random.default_rng(7)
    x, u = ca.SX.sym("x", ph.nx), ca.SX.sym("u", ph.nu)
    f = ca.Function("f", [x, u], [ph.ode(x, u)])
    p = MuscleParameters.from_muscles(m.muscles)
    for _ in range(5):
        q, qd = rng.uniform(0.2, 1.4, 2), rng.normal(size=2)
        a, e = rng.uniform(0, 1, 6), rng.uniform(0, 1, 6)
        tau_res = np.array([0.0, rng.normal()])
        xdot = np.asarray(f(np.r_[q, qd, a], np.r_[tau_res, e]), float).ravel()
        F = muscle_equilibrium(
            p,
            a,
            muscle_lengths(m, q),
            lengthening_speeds(m, q, qd),
            curves="degroote2016",
            rigid_tendon=True,
        ).tendon_force
        tau = moment_arms(m, q).T @ F + tau_res
        np.testing.assert_allclose(xdot[:2], qd, rtol=0, atol=0)
        np.testing.assert_allclose(xdot[2:4], aba(m, q, qd, tau), rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(xdot[4:], activation_rate(e, a, p, curves="degroote2016"),
                                   rtol=1e-12, atol=1e-12)  # fmt: skip
    # the effort terms
    xv, uv = np.r_[0.5, 0.8, 0, 0, np.full(6, 0.2)], np.r_[0.0, 0.0, np.full(6, 0.3)]
    ph2 = MuscleDrivenPhase(
        m,
        nodes=5,
        duration=0.5,
        objectives=[
            MuscleEffort(exponent=3),
            MuscleEffort(of="excitations", muscles=["BRA"], name="e"),
        ],
    )
    terms = ph2.running_cost_terms(ca.DM(xv), ca.DM(uv), ca.DM.zeros(0), 0.0)
    assert float(terms["muscle_effort"]) == pytest.approx(6 * 0.2**3, rel=1e-14)
    assert float(terms["e"]) == pytest.approx(0.3**2, rel=1e-14)


def test_bad_muscle_phase_options_raise():
    m = arm_model()
    with pytest.raises(DataError, match="explicit"):
        MuscleDrivenPhase(m, dynamics="implicit")
    with pytest.raises(DataError, match="reserves"):
        MuscleDrivenPhase(m, actuated=["elbow"])
    with pytest.raises(DataError, match="activation_bounds"):
        MuscleDrivenPhase(m, activation_bounds=(0.5, 0.2))
    with pytest.raises(DataError, match="not a muscle of the phase"):
        MuscleDrivenPhase(m, objectives=[MuscleEffort(muscles=["deltoid"])])
    with pytest.raises(DataError, match="exponent"):
        MuscleEffort(exponent=0)
    with pytest.raises(DataError, match="unique"):
        MuscleDrivenPhase(m, objectives=[MuscleEffort(), MuscleEffort()])


def _reach_phase(**kwargs):
    """A 0.5 s minimum-jerk reach of the arm tracked by its muscles (11 nodes)."""
    m = arm_model()
    T = 0.5
    t = np.linspace(0, T, 51)
    s = t / T
    q0, q1 = np.array([0.3, 0.5]), np.array([0.6, 1.2])
    q_ref = q0 + (q1 - q0) * (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None]
    ph = MuscleDrivenPhase(m, nodes=11, duration=T, reserves=["shoulder", "elbow"],
                           tau_bounds=(-10.0, 10.0),
                           objectives=[TrackCoordinates(t, q_ref, weight=1e3),
                                       MuscleEffort(), Effort(weight=1.0, name="reserves")],
                           initial={"q": q0, "qd": [0.0, 0.0]}, **kwargs)  # fmt: skip
    return m, t, q_ref, ph


# multiple shooting solves it too (exact Hessian), but its RK4 expressions take ~25 s to set up
@pytest.mark.parametrize("method", ["trapezoidal", "hermite-simpson"])
def test_muscle_driven_tracking_solves_from_the_default_guess(method):
    m, t, q_ref, ph = _reach_phase()
    r = solve(ph, method=method, verbose=False)
    assert r.success, r.status
    P = r.phases[0]
    mus = P.muscles
    err = P.q - np.array([np.interp(P.t, t, q_ref[:, j]) for j in range(2)]).T
    assert np.abs(err).max() < np.radians(1.0)
    a = mus["activations"]
    assert a.min() >= -1e-8 and a.max() <= 1 + 1e-8 and a.max() > 0.1
    assert np.abs(mus["reserves"]).max() < 0.5  # the muscles do the work
    # the result's torques: R^T F + reserves, and the inverse dynamics of its motion
    np.testing.assert_allclose(P.tau, mus["muscle_torques"] + mus["reserves"], atol=1e-12)
    np.testing.assert_allclose(P.tau, rnea(m, P.q, P.qd, P.qdd), atol=1e-9)
    p = MuscleParameters.from_muscles(m.muscles)
    F = muscle_equilibrium(
        p,
        a,
        muscle_lengths(m, P.q),
        lengthening_speeds(m, P.q, P.qd),
        curves="degroote2016",
        rigid_tendon=True,
    ).tendon_force
    np.testing.assert_allclose(mus["forces"], F, rtol=1e-12, atol=1e-9)
    d = r.to_dict()["muscles"]
    np.testing.assert_array_equal(d["phase.activations"], a)
    assert d["phase.names"] == ph.muscle_names
    # a dict guess (t, q) gets the phase's default activations appended
    r2 = solve(ph, method=method, verbose=False, guess={"t": P.t, "q": P.q})
    assert r2.success and r2.cost == pytest.approx(r.cost, rel=1e-5)


def test_bspline_transcription_refuses_muscle_states():
    ph = MuscleDrivenPhase(arm_model(), nodes=6, duration=0.5, objectives=[MuscleEffort()])
    with pytest.raises(DataError, match="B-spline transcription parameterizes the coordinates"):
        solve(ph, method="bspline", verbose=False)


def test_elastic_tendon_residual_vanishes_on_the_numeric_tendon_dynamics():
    rng = np.random.default_rng(5)
    p = MuscleParameters(max_isometric_force=rng.uniform(200, 900, 4),
                         optimal_fiber_length=rng.uniform(0.05, 0.15, 4),
                         tendon_slack_length=rng.uniform(0.05, 0.3, 4),
                         pennation_angle=rng.uniform(0, 0.3, 4))  # fmt: skip
    a = rng.uniform(0.1, 1, (20, 4))
    lmt = p.tendon_slack_length * 1.02 + p.optimal_fiber_length * rng.uniform(0.6, 1.3, (20, 4))
    v = rng.normal(0, 0.2, (20, 4))
    eq = muscle_equilibrium(p, a, lmt, v, curves="degroote2016")  # elastic equilibrium
    ft_eq = eq.tendon_force / p.max_isometric_force
    assert np.abs(degroote_tendon_residual(p, a, lmt, v, ft_eq, 0.0)).max() < 1e-12
    # off equilibrium: the rate of the explicit tendon dynamics of ahbm.muscles
    ft = ft_eq * rng.uniform(0.9, 1.1, (20, 4))
    _, _, rate = muscle_tendon_forces(p, a, lmt, v, ft, curves="degroote2016")
    assert np.abs(rate).max() > 1.0
    assert np.abs(degroote_tendon_residual(p, a, lmt, v, ft, rate)).max() < 1e-12
    # on CasADi symbols, one muscle at a time
    sym = [ca.SX.sym(n) for n in ("a", "l", "v", "f", "r")]
    pr = p.resolved("degroote2016")
    for i in range(4):
        one = type("P", (), {f: float(getattr(pr, f)[i]) for f in (
            "max_isometric_force", "optimal_fiber_length", "tendon_slack_length",
            "pennation_angle", "max_contraction_velocity", "active_force_width_scale",
            "passive_strain", "fiber_damping", "tendon_strain")})  # fmt: skip
        f = ca.Function("r", sym, [degroote_tendon_residual(one, *sym, xp=ca)])
        got = np.asarray(f.map(20)(a[:, i], lmt[:, i], v[:, i], ft[:, i], rate[:, i]), float)
        assert np.abs(got).max() < 1e-12


def test_elastic_tendon_phase_solves_and_follows_the_tendon_dynamics():
    m, t, q_ref, ph = _reach_phase(tendon="elastic")
    assert ph.nx == 16 and ph.nu == 14
    assert ph.state_names[10] == "ft:TRIlong" and ph.control_names[-1] == "dft:BRA"
    r = solve(ph, method="trapezoidal", verbose=False)
    assert r.success, r.status
    P = r.phases[0]
    mus = P.muscles
    err = P.q - np.array([np.interp(P.t, t, q_ref[:, j]) for j in range(2)]).T
    assert np.abs(err).max() < np.radians(1.0)
    assert np.abs(mus["reserves"]).max() < 0.5
    np.testing.assert_allclose(P.tau, rnea(m, P.q, P.qd, P.qdd), atol=1e-9)
    # the tendon force rates are those of ahbm.muscles' elastic tendon dynamics
    p = MuscleParameters.from_muscles(m.muscles)
    ft = mus["forces"] / p.max_isometric_force
    F, _, rate = muscle_tendon_forces(p, mus["activations"], muscle_lengths(m, P.q),
                                      lengthening_speeds(m, P.q, P.qd), ft,
                                      curves="degroote2016")  # fmt: skip
    np.testing.assert_allclose(F, mus["forces"], rtol=1e-12)
    live = mus["activations"] > 0.02  # (the explicit form needs a fL > 0)
    assert live.sum() > 20
    np.testing.assert_allclose(mus["tendon_force_rates"][live], rate[live], atol=1e-5)
    with pytest.raises(DataError, match="tendon"):
        MuscleDrivenPhase(m, tendon="springy")
