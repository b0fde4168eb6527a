"""Tests of ahbm.dynamics.simulate: projection, energy, stiff solvers, events, failures."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ahbm.dynamics import (
    BodyForce,
    PlaneConstraint,
    PointConstraint,
    RotationalSpringDamper,
    SimulationEvent,
    coordinate_event,
    point_height_event,
    q_rate,
    simulate,
)
from ahbm.dynamics.constraints import ConstraintSet
from ahbm.errors import DataError, ModelError, SimulationError
from ahbm.kinematics.configuration import integrate_q
from ahbm.kinematics.forward import (
    kinetic_energy,
    momentum,
    point_position,
    potential_energy,
)
from ahbm.kinematics.tree import Model
from ahbm.models import double_pendulum_3d, triple_pendulum_euler

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name):
    spec = importlib.util.spec_from_file_location(f"ahbm_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def four_bar():
    fb = _example("four_bar")
    model = fb.build_model()
    cs = fb.loop_constraint()
    q0, qd0 = fb.initial_state(model, cs)
    return model, cs, q0, qd0


def _energy(model, r):
    return kinetic_energy(model, r.q, r.qd) + potential_energy(model, r.q)


def test_four_bar_projection_keeps_residuals_below_1e10(four_bar):
    model, cs, q0, qd0 = four_bar
    r = simulate(model, (0, 10), q0, qd0, constraints=cs, rtol=1e-6, atol=1e-6)
    assert r.status == 0 and r.t[-1] == pytest.approx(10.0)
    assert r.position_residual.max() < 1e-10
    assert r.velocity_residual.max() < 1e-10
    # the linkage really moves
    assert np.ptp(r.q[:, 0]) > 0.5


def test_four_bar_energy_conserved(four_bar):
    model, cs, q0, qd0 = four_bar
    r = simulate(model, (0, 2), q0, qd0, constraints=cs, rtol=1e-10, atol=1e-10, method="DOP853")
    E = _energy(model, r)
    assert np.abs(E - E[0]).max() / np.abs(E[0]) < 1e-6


def test_double_pendulum_energy_conserved():
    m = double_pendulum_3d()
    r = simulate(m, (0, 2), [0.5, 0.3, -0.2, 0.4], [0.0, 1.0, 0.5, 0.0], rtol=1e-10, atol=1e-10,
                 method="DOP853")  # fmt: skip
    E = _energy(m, r)
    assert np.abs(E - E[0]).max() / np.abs(E).max() < 1e-6
    # q̈ in the result satisfies the equations of motion
    from ahbm.dynamics import aba

    np.testing.assert_allclose(r.qdd, aba(m, r.q, r.qd, np.zeros(4)), atol=1e-12)


def test_free_body_with_quaternion_conserves_energy_and_momentum():
    m = Model("free", gravity=(0, 0, 0))
    m.add_body("box", "ground", "free", mass=2.0, inertia=np.diag([0.1, 0.2, 0.25]))
    q0 = np.array([0, 0, 0, 0, 0, 0, 1.0])
    qd0 = np.array([0.1, -0.2, 0.3, 1.0, 3.0, 0.2])
    r = simulate(m, (0, 3), q0, qd0, rtol=1e-10, atol=1e-12, method="DOP853")
    np.testing.assert_allclose(np.linalg.norm(r.q[:, 3:], axis=1), 1.0, atol=1e-14)
    T = kinetic_energy(m, r.q, r.qd)
    assert np.ptp(T) / T[0] < 1e-8
    h = momentum(m, r.q, r.qd)
    assert np.abs(h - h[0]).max() < 1e-7
    np.testing.assert_allclose(r.q[-1, :3], 3 * qd0[:3], atol=1e-9)


def test_spherical_pendulum_with_plane_constraint_and_quaternions():
    m = Model("sph")
    m.add_body("rod", "ground", "spherical", mass=1.0, com=[0, 0, -0.5],
               inertia=np.diag([0.1, 0.1, 0.01]))  # fmt: skip
    # tip confined to the plane y = 0.3 * x (a tilted vertical plane)
    n = np.array([-0.3, 1.0, 0.0])
    cs = ConstraintSet([PlaneConstraint("rod", [0, 0, -1], normal=n, height=0.0)])
    q0 = np.array([0.0, 0.3, 0.0, 1.0]) / np.linalg.norm([0.0, 0.3, 0.0, 1.0])
    r = simulate(m, (0, 2), q0, np.array([0.0, 0.5, 0.2]), constraints=cs, rtol=1e-8,
                 atol=1e-8)  # fmt: skip
    assert r.position_residual.max() < 1e-10
    assert r.velocity_residual.max() < 1e-10
    np.testing.assert_allclose(np.linalg.norm(r.q, axis=1), 1.0, atol=1e-14)


def test_q_rate_matches_integrate_q():
    m = Model()
    m.add_body("a", "ground", "free", mass=1.0, inertia=np.eye(3))
    m.add_body("b", "a", "spherical", mass=1.0, inertia=np.eye(3))
    m.add_body("c", "b", {"type": "revolute", "axis": [0, 1, 0]}, mass=1.0, inertia=np.eye(3))
    rng = np.random.default_rng(0)
    q = integrate_q(m, np.r_[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0.3], rng.normal(size=m.nv))
    v = rng.normal(size=m.nv)
    h = 1e-6
    fd = (integrate_q(m, q, v, h) - integrate_q(m, q, v, -h)) / (2 * h)
    np.testing.assert_allclose(q_rate(m, q, v), fd, atol=1e-8)


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_stiff_spring_with_implicit_solvers(method):
    """1 kg on a 1e6 N/m spring with heavy damping under a slow load: closed form."""
    m = Model("stiff", gravity=(0, 0, 0))
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0], "name": "x"},
               mass=1.0, inertia=np.eye(3) * 1e-3)  # fmt: skip
    k, c = 1e6, 1e4
    spring = RotationalSpringDamper("x", stiffness=k, damping=c)
    load = BodyForce("mass", lambda t: np.array([np.sin(t), 0.0, 0.0]))
    r = simulate(m, (0, 2), [0.0], [0.0], forces=[spring, load], method=method, rtol=1e-8,
                 atol=1e-12)  # fmt: skip
    # x'' + c x' + k x = sin t, x(0) = x'(0) = 0
    a, b = k - 1.0, c
    A, B = a / (a**2 + b**2), -b / (a**2 + b**2)  # x_p = A sin t + B cos t
    r1, r2 = np.roots([1.0, c, k])
    C1, C2 = np.linalg.solve([[1, 1], [r1, r2]], [-B, -A])
    t = r.t
    exact = A * np.sin(t) + B * np.cos(t) + C1 * np.exp(r1 * t) + C2 * np.exp(r2 * t)
    assert np.abs(r.q[:, 0] - exact).max() < 1e-4 * abs(A)
    assert r.njev >= 1 and r.nlu >= 1 and r.nfev > 0
    assert r.n_steps < 2000  # an explicit method would need ~1e4 steps here
    print(f"{method}: steps={r.n_steps} nfev={r.nfev} njev={r.njev} nlu={r.nlu}")


def test_same_result_with_all_constrained_solvers(four_bar):
    model, cs, q0, qd0 = four_bar
    out = [
        simulate(
            model,
            (0, 0.3),
            q0,
            qd0,
            constraints=cs,
            constraint_method=s,
            t_eval=[0.1, 0.2, 0.3],
            rtol=1e-10,
            atol=1e-10,
        )  # fmt: skip
        for s in ("direct", "range_space", "null_space")
    ]
    for r in out[1:]:
        np.testing.assert_allclose(r.q, out[0].q, atol=1e-9)
        np.testing.assert_allclose(r.lam, out[0].lam, atol=1e-7)


def test_baumgarte_without_projection_limits_drift(four_bar):
    model, cs, q0, qd0 = four_bar
    r = simulate(model, (0, 2), q0, qd0, constraints=cs, project=False, baumgarte=(10, 10),
                 rtol=1e-6, atol=1e-6)  # fmt: skip
    assert r.position_residual.max() < 1e-5


def test_impact_event_switches_constraints():
    model = triple_pendulum_euler()
    tip = [0, 0, -1]
    floor = ConstraintSet([PlaneConstraint("link3", tip, height=-2.6)])
    ev = point_height_event(model, "link3", tip, height=-2.6, constraints=floor, restitution=0.0)
    q0 = np.zeros(9)
    q0[1] = 1.0
    r = simulate(model, (0, 1.2), q0, np.zeros(9), events=[ev], rtol=1e-9, atol=1e-9)
    assert len(r.events) == 1
    e = r.events[0]
    z = point_position(model, e["q"], "link3", tip)[2]
    assert z == pytest.approx(-2.6, abs=1e-9)
    G = floor.jacobian(model, e["q"], t=e["t"])
    assert (G @ e["qd_minus"])[0] < -0.1  # falling before the impact
    np.testing.assert_allclose(G @ e["qd_plus"], 0, atol=1e-12)
    assert kinetic_energy(model, e["q"], e["qd_plus"]) < kinetic_energy(
        model, e["q"], e["qd_minus"]
    )
    after = r.phase == 1
    assert after.sum() > 3 and r.t[-1] == pytest.approx(1.2)
    assert r.position_residual[after].max() < 1e-10
    assert r.lam.shape[1] == 1 and np.all(np.isnan(r.lam[~after, 0]))
    assert len(r.constraint_sets) == 2


def test_terminal_event_and_max_count():
    m = double_pendulum_3d()
    ev = coordinate_event(m, "pin", -0.2, direction=-1, terminal=True)
    r = simulate(m, (0, 5), [0.4, 0, 0, 0], np.zeros(4), events=[ev], rtol=1e-10, atol=1e-10)
    assert r.status == 1 and r.t[-1] < 5
    assert r.q[-1, 0] == pytest.approx(-0.2, abs=1e-9)
    calls = []
    counter = SimulationEvent(lambda t, q, qd: q[0],
                              action=lambda t, q, qd: (calls.append(t), (q, qd))[1],
                              max_count=2, name="zero")  # fmt: skip
    r2 = simulate(m, (0, 4), [0.4, 0, 0, 0], np.zeros(4), events=[counter])
    assert len(calls) == 2 and [e["name"] for e in r2.events] == ["zero", "zero"]


def test_t_eval_and_dataframe(four_bar):
    model, cs, q0, qd0 = four_bar
    t = np.linspace(0, 0.5, 6)
    r = simulate(model, (0, 0.5), q0, qd0, constraints=cs, t_eval=t)
    np.testing.assert_allclose(r.t, t)
    assert r.position_residual.max() < 1e-10
    df = r.to_dataframe()
    assert len(df) == 6
    for col in ["t", "q_crank", "q_crank_d", "q_crank_dd", "lambda_0", "lambda_1", "phase"]:
        assert col in df.columns


def test_failure_carries_partial_result():
    m = double_pendulum_3d()

    def tau(t, q, qd):
        return np.full(4, np.nan) if t > 0.3 else np.zeros(4)

    with pytest.raises(SimulationError, match="non-finite") as info:
        simulate(m, (0, 1), [0.3, 0, 0, 0], np.zeros(4), tau=tau)
    err = info.value
    assert err.result is not None and err.result.status == -1
    assert 0 < err.t <= 0.3 + 1e-12
    assert err.result.t[-1] == pytest.approx(err.t)
    assert np.all(np.isfinite(err.result.q))


def test_inconsistent_initial_state_raises():
    model = triple_pendulum_euler()
    cs = ConstraintSet([PointConstraint("link3", [0, 0, -1], other_point=[0, 0, -4])])
    with pytest.raises(SimulationError, match="initial state cannot be projected"):
        simulate(model, (0, 1), np.zeros(9), np.zeros(9), constraints=cs)


def test_bad_input():
    m = double_pendulum_3d()
    z = np.zeros(4)
    with pytest.raises(ModelError, match="unknown body 'foot'"):
        simulate(m, (0, 1), z, z, constraints=[PlaneConstraint("foot")])
    with pytest.raises(ModelError, match="unknown coordinate"):
        simulate(m, (0, 1), z, z, forces=[RotationalSpringDamper("knee", 1.0)])
    with pytest.raises(DataError, match="t_span"):
        simulate(m, (1, 0), z, z)
    with pytest.raises(DataError, match=r"`q0` to have shape \(4,\)"):
        simulate(m, (0, 1), np.zeros(3), z)
    with pytest.raises(DataError, match="method"):
        simulate(m, (0, 1), z, z, method="Euler")
    with pytest.raises(DataError, match="t_eval"):
        simulate(m, (0, 1), z, z, t_eval=[0.5, 0.2])
    with pytest.raises(DataError, match="restitution"):
        SimulationEvent(lambda t, q, qd: 0.0, restitution=1.5)


def test_lift_off_event_when_contact_force_vanishes():
    from ahbm.dynamics import contact_release_event
    from ahbm.dynamics.constrained import constrained_forward_dynamics

    model = triple_pendulum_euler()
    tip = [0, 0, -1]
    floor = ConstraintSet([PlaneConstraint("link3", tip, height=-2.6)])
    impact = point_height_event(model, "link3", tip, height=-2.6, constraints=floor,
                                restitution=0.0, name="impact")  # fmt: skip
    release = contact_release_event(0, constraints=None, name="lift-off")
    q0 = np.zeros(9)
    q0[1] = 1.0
    r = simulate(model, (0, 1.5), q0, np.zeros(9), events=[impact, release], rtol=1e-9,
                 atol=1e-9)  # fmt: skip
    names = [e["name"] for e in r.events]
    assert names[:2] == ["impact", "lift-off"]
    e = r.events[1]
    assert e["t"] >= r.events[0]["t"]
    # released where the floor would have to pull (λ <= 0)
    _, lam = constrained_forward_dynamics(model, e["q"], e["qd_minus"], np.zeros(9), floor)
    assert lam[0] <= 1e-6
    # afterwards the tip moves freely above the floor
    free = r.phase == 2
    assert r.constraint_sets[2] is None and free.sum() > 3
    z = point_position(model, r.q[free], "link3", tip)[:, 2]
    assert z.min() > -2.6 - 1e-9


def test_human15_standing_with_welded_feet():
    """Free-floating pelvis (quaternion), both feet welded to the ground, passive joints."""
    from ahbm.dynamics import OrientationConstraint
    from ahbm.dynamics.constrained import project_positions
    from ahbm.kinematics.configuration import neutral_q
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.models import human15

    model = human15()
    q = neutral_q(model)
    names = model.coordinate_names
    for side in ("r", "l"):  # bent knees: away from the straight-leg singularity
        q[names.index(f"hip_{side}_ry")] = -0.3
        q[names.index(f"knee_{side}")] = 0.6
        q[names.index(f"ankle_{side}_ry")] = -0.3
    T = forward_kinematics(model, q).transforms
    cons = []
    for side in ("r", "l"):
        b = model.body_index(f"foot_{side}")
        heel = model.bodies[b].markers["heel"]
        cons.append(PointConstraint(b, heel, other_point=point_position(model, q, b, heel)))
        cons.append(OrientationConstraint(b, rotation=T[b, :3, :3]))
    cs = ConstraintSet(cons)
    rng = np.random.default_rng(0)
    q0 = project_positions(model, integrate_q(model, q, rng.normal(size=model.nv) * 0.02), cs)
    scalar = [n for n in names if n[-3:] not in ("_qx", "_qy", "_qz", "_qw")]
    springs = [
        RotationalSpringDamper(n, stiffness=300.0, damping=10.0, rest=q[names.index(n)])
        for n in scalar
        if not n.startswith("pelvis")
    ]
    r = simulate(model, (0, 0.05), q0, np.zeros(model.nv), constraints=cs, forces=springs[:6],
                 rtol=1e-5, atol=1e-5)  # fmt: skip
    assert r.status == 0
    assert r.position_residual.max() < 1e-10 and r.velocity_residual.max() < 1e-10
    for k, n in enumerate(names):
        if n.endswith("_qx"):
            np.testing.assert_allclose(np.linalg.norm(r.q[:, k : k + 4], axis=1), 1.0, atol=1e-12)
    assert r.lam.shape[1] == 12
    # Newton's law for the whole body: Σ external forces = m a_COM (feet forces + gravity)
    from ahbm.kinematics.forward import com_jacobian

    Jc = com_jacobian(model, r.q[0])

    a_com = Jc @ r.qdd[0]
    feet = r.lam[0, [0, 1, 2]] + r.lam[0, [6, 7, 8]]
    np.testing.assert_allclose(feet + model.total_mass * model.gravity,
                               model.total_mass * a_com, atol=1e-6)  # fmt: skip


def test_constraint_method_keyword_and_result_object():
    from ahbm.dynamics import SimulationResult

    m = double_pendulum_3d()
    new = simulate(m, (0, 0.2), [0.4, 0, 0, 0], np.zeros(4), constraint_method="null_space")
    with pytest.raises(TypeError, match="unexpected keyword argument 'solver'"):
        simulate(m, (0, 0.2), [0.4, 0, 0, 0], np.zeros(4), solver="direct")
    with pytest.raises(TypeError, match="unexpected keyword argument 'sovler'"):
        simulate(m, (0, 0.2), [0.4, 0, 0, 0], np.zeros(4), sovler="direct")
    with pytest.raises(DataError, match="constraint_method"):
        simulate(m, (0, 0.2), [0.4, 0, 0, 0], np.zeros(4), constraint_method="lu")
    # the result is a frozen result object with a shapes-only repr
    assert isinstance(new, SimulationResult)
    with pytest.raises(AttributeError):
        new.status = 1
    assert "q=array(" in repr(new) and "0.4" not in repr(new)
