"""The problem API: sizes, bounds, contact and impact terms, symmetry, ZMP, multi-phase problems."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from ahbm import dynamics, kinematics  # noqa: E402
from ahbm.dynamics.geometric_constraints import PointConstraint  # noqa: E402
from ahbm.errors import DataError, ModelError  # noqa: E402
from ahbm.kinematics.configuration import random_model, random_q  # noqa: E402
from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.models import single_pendulum  # noqa: E402
from ahbm.optimize import (  # noqa: E402
    BoundaryConstraint,
    ContactPoint,
    ControlRate,
    Effort,
    FinalTime,
    Impact,
    Jerk,
    NonPenetration,
    OptimalControlProblem,
    PathConstraint,
    Phase,
    Symmetry,
    TrackGRF,
    TrackMarkers,
    Transcription,
    Waypoint,
    ZMPInSupport,
    register_transcription,
    solve,
    transcriptions,
)


def _slider(gravity=(0.0, 0.0, 0.0)):
    m = Model(gravity=gravity)
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0], "limits": [-2, 2]},
               mass=1.0)  # fmt: skip
    return m


def _floating(seed=0):
    rng = np.random.default_rng(seed)
    m = random_model(4, rng=rng, joint_types=("revolute", "euler"))
    f = Model("floating")
    for i, b in enumerate(m.bodies):
        parent = "ground" if i == 0 else m.body_names[max(int(m.parent[i]), 0)]
        joint = {"type": "free_euler", "sequence": "ZYX"} if i == 0 else b.joint
        f.add_body(b.name, parent, joint, position=b.position, mass=b.mass, com=b.com,
                   inertia=b.inertia)  # fmt: skip
    return f, rng


def test_sizes_names_and_bounds_from_the_model():
    m = _slider()
    ph = Phase(m, nodes=5, duration=(0.5, 2.0), objectives=[FinalTime()])
    assert (ph.nx, ph.nu, ph.np, ph.free_duration) == (2, 1, 0, True)
    assert ph.state_names == ["q:mass", "qd:mass"] and ph.control_names == ["tau:mass"]
    lo, hi = ph.state_bounds()
    np.testing.assert_array_equal(lo, [-2, -np.inf])  # the joint limits
    np.testing.assert_array_equal(hi, [2, np.inf])
    c = ContactPoint("mass", [0.1, 0, 0], name="p", axes="xz", friction=0.5)
    ph = Phase(m, nodes=5, contacts=[c], dynamics="implicit")
    assert ph.nu == 1 + 2 + 1 and ph.parameter_names == ["anchor:p:x"]
    assert ph.control_names == ["tau:mass", "F:p:x", "F:p:z", "qdd:mass"]
    lo, hi = ph.control_bounds()
    assert lo[2] == 0.0 and np.isinf(lo[1])  # the normal force pushes only


def test_bad_input_is_rejected_with_named_arguments():
    m = _slider()
    with pytest.raises(ModelError, match="quaternion"):
        Phase(random_model(2, rng=np.random.default_rng(0), joint_types=("spherical",)))
    with pytest.raises(DataError, match="duration"):
        Phase(m, duration=-1.0)
    with pytest.raises(DataError, match="FinalTime"):
        Phase(m, duration=1.0, objectives=[FinalTime()])
    with pytest.raises(DataError, match="unknown coordinate 'knee'"):
        Phase(m, actuated=["knee"])
    with pytest.raises(DataError, match="q_bounds"):
        Phase(m, q_bounds={"mass": (1.0, 0.0)})
    with pytest.raises(DataError, match="initial"):
        Phase(m, initial={"x": [0.0]})
    with pytest.raises(DataError, match="not an objective"):
        Phase(m, objectives=["effort"])
    with pytest.raises(DataError, match="not a constraint"):
        Phase(m, constraints=[ContactPoint("mass")])
    with pytest.raises(DataError, match="unique"):
        Phase(m, objectives=[Effort(), Effort()])
    with pytest.raises(DataError, match="axes"):
        ContactPoint("mass", axes="xy")
    with pytest.raises(DataError, match="links"):
        OptimalControlProblem([Phase(m), Phase(m)], links=[])
    with pytest.raises(DataError, match="unknown `method`"):
        solve(Phase(m), method="nope", verbose=False)
    with pytest.raises(DataError, match="Transcription subclass"):
        register_transcription("x", object)
    with pytest.raises(DataError, match="callable"):
        from ahbm.optimize import PathConstraint

        PathConstraint(3.0)


def test_contact_forces_enter_the_dynamics_as_point_forces():
    """Phase.inverse_dynamics with contact forces = RNEA − J_pᵀ F (point Jacobian, numeric)."""
    m, rng = _floating(1)
    pts = [(1, np.array([0.1, -0.05, 0.2])), (3, np.array([0.0, 0.1, -0.1]))]
    cs = [ContactPoint(m.body_names[b], tuple(r), name=f"c{i}") for i, (b, r) in enumerate(pts)]
    ph = Phase(m, contacts=cs)
    q = random_q(m, rng=rng)
    qd, qdd = rng.normal(size=(2, m.nv))
    F = rng.normal(size=(2, 3)) * 50
    u = np.r_[np.zeros(m.nv), F.ravel()]
    got = np.asarray(ph.inverse_dynamics(q, qd, qdd, u), float).ravel()
    want = dynamics.rnea(m, q, qd, qdd)
    for (b, r), f in zip(pts, F, strict=True):
        want = want - kinematics.point_jacobian(m, q, b, r).T @ f
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)
    # explicit dynamics: ABA with the same forces gives back qdd
    tau = got
    x = np.r_[q, qd]
    u = np.r_[tau, F.ravel()]
    np.testing.assert_allclose(np.asarray(ph.accelerations(x, u), float).ravel(), qdd, atol=1e-8)


def test_impact_matches_compute_impulse():
    m, rng = _floating(2)
    cs = [ContactPoint(m.body_names[2], (0.1, 0.0, -0.2), name="a"),
          ContactPoint(m.body_names[3], (0.0, 0.1, 0.0), name="b", axes="xz")]  # fmt: skip
    ph = Phase(m, contacts=cs)
    q = random_q(m, rng=rng)
    qd = rng.normal(size=m.nv)
    got, lam = Impact().post_velocity(ph, ca.DM(q), ca.DM(qd))
    pc = [PointConstraint(m.body_names[2], [0.1, 0.0, -0.2],
                          other_point=kinematics.point_position(m, q, 2, [0.1, 0, -0.2])),
          PointConstraint(m.body_names[3], [0.0, 0.1, 0.0], axes="xz",
                          other_point=kinematics.point_position(m, q, 3, [0, 0.1, 0]))]  # fmt: skip
    want = dynamics.compute_impulse(m, q, qd, pc)
    np.testing.assert_allclose(np.asarray(got, float).ravel(), want, rtol=1e-9, atol=1e-9)
    v = kinematics.point_velocity(m, q, want, 2, [0.1, 0, -0.2])
    np.testing.assert_allclose(v, 0.0, atol=1e-9)


def test_impact_of_a_flat_body_with_two_contact_points():
    """Heel and toe of one rigid planar body land together: independent rows, all at rest."""
    m = Model(gravity=(0, 0, -9.81))
    R = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
    m.add_body("block", "ground", {"type": "planar"}, rotation=R, child_rotation=R, mass=2.0,
               com=[0.05, 0, 0.1], inertia=np.eye(3) * 0.01)  # fmt: skip
    cs = [ContactPoint("block", (-0.1, 0, 0), name="heel", axes="xz"),
          ContactPoint("block", (0.2, 0, 0), name="toe", axes="xz")]  # fmt: skip
    ph = Phase(m, contacts=cs)
    q, qd = np.zeros(3), np.array([0.3, -1.0, 0.5])
    got, lam = Impact().post_velocity(ph, ca.DM(q), ca.DM(qd))
    got = np.asarray(got, float).ravel()
    assert np.asarray(lam).size == 3  # heel x, z and toe z
    pc = [PointConstraint("block", [-0.1, 0, 0], axes="xz", other_point=[-0.1, 0, 0]),
          PointConstraint("block", [0.2, 0, 0], axes="z", other_point=[0.2, 0, 0])]  # fmt: skip
    np.testing.assert_allclose(got, dynamics.compute_impulse(m, q, qd, pc), atol=1e-12)
    np.testing.assert_allclose(got, 0.0, atol=1e-12)  # a planar body on two points cannot move


def test_zmp_constraint_rows_against_the_numeric_zmp():
    m, rng = _floating(3)
    feet = [(m.body_names[1], (0.0, 0.0, 0.0)), (m.body_names[2], (0.0, 0.0, 0.0)),
            (m.body_names[3], (0.0, 0.0, 0.0))]  # fmt: skip
    ph = Phase(m, constraints=[ZMPInSupport(feet)], dynamics="implicit")
    q = random_q(m, rng=rng)
    qd, qdd = rng.normal(size=(2, m.nv))
    x, u = np.r_[q, qd], np.r_[np.zeros(m.nv), qdd]
    g, lb, ub, names = ph.path_constraints(ca.DM(x), ca.DM(u), ca.DM.zeros(0), 0.0)
    g = np.asarray(g, float).ravel()
    r = dynamics.zmp(m, q, qd, qdd, threshold=-np.inf)
    P = [kinematics.point_position(m, q, b, p) for b, p in feet]
    for i in range(3):
        a, b = P[i], P[(i + 1) % 3]
        d = b - a
        want = (d[0] * (r[1] - a[1]) - d[1] * (r[0] - a[0])) / np.hypot(d[0], d[1])
        assert names[i] == f"zmp inside edge {i}"
        np.testing.assert_allclose(g[i], want, rtol=1e-9, atol=1e-9)
    assert names[3:] == [f"dynamics {n}" for n in m.coordinate_names]


def test_symmetry_rows_vanish_for_mirrored_states():
    m = Model(gravity=(0, 0, 0))
    m.add_body("a", "ground", {"type": "prismatic", "axis": [1, 0, 0], "name": "tx"}, mass=1.0)
    m.add_body("l", "a", {"type": "revolute", "axis": [0, 1, 0], "name": "hip_l"}, mass=1.0)
    m.add_body("r", "a", {"type": "revolute", "axis": [0, 1, 0], "name": "hip_r"}, mass=1.0)
    ph = Phase(m)
    prob = OptimalControlProblem(ph, symmetric=Symmetry(pairs=[("hip_l", "hip_r")],
                                                        exclude=["tx"]))  # fmt: skip
    xf = np.array([3.0, 0.2, -0.4, 1.0, 0.5, -0.7])
    x0 = np.array([0.0, -0.4, 0.2, 1.0, -0.7, 0.5])  # swapped hips; tx free; its rate kept
    _, (g, lb, ub, names) = prob.global_constraints([ca.DM(x0)], [ca.DM(xf)], [1.0], [ca.DM()])
    np.testing.assert_allclose(np.asarray(g, float).ravel(), 0.0)
    assert "symmetry q:hip_l" in names and not any("q:tx" in n for n in names)


def test_minimum_time_two_phases_bang_bang():
    """|u| ≤ 1 from rest at 0 to rest at 1: T = 2 s, switching at 1 s (two free phases)."""
    m = _slider()
    kw = dict(nodes=15, duration=(0.2, 3.0), tau_bounds=(-1.0, 1.0), objectives=[FinalTime()])
    a = Phase(m, name="accelerate", initial={"q": [0.0], "qd": [0.0]}, **kw)
    b = Phase(m, name="brake", final={"q": [1.0], "qd": [0.0]}, **kw)
    r = solve(OptimalControlProblem([a, b]), method="hermite-simpson", verbose=False)
    assert r.success, r.summary()
    np.testing.assert_allclose([p.duration for p in r.phases], [1.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(r.phases[0].tau, 1.0, atol=1e-4)
    np.testing.assert_allclose(r.phases[1].tau, -1.0, atol=1e-4)
    assert set(r.cost_terms) == {"accelerate.final_time", "brake.final_time"}


def test_waypoint_hermite_interpolation_is_exact_for_cubics():
    m = _slider()
    T = 1.0
    # min energy through q(0.3) = 0.5 from rest to rest at 0: HS gives the exact cubic pieces
    ph = Phase(m, nodes=11, duration=T, objectives=[Effort()], constraints=[
        Waypoint(0.3, {"mass": 0.5})], initial={"q": [0.0], "qd": [0.0]},
        final={"q": [0.0], "qd": [0.0]})  # fmt: skip
    r = solve(ph, method="hermite-simpson", verbose=False)
    assert r.success
    # cubic Hermite between the nodes at 0.3 (a node): the value itself
    k = int(np.argmin(abs(r.t - 0.3)))
    np.testing.assert_allclose(r.q[k, 0], 0.5, atol=1e-9)


def test_standing_block_on_two_contacts_carries_its_weight():
    """A planar block standing on two points: no torques, forces = weight, no slip."""
    m = Model(gravity=(0, 0, -9.81))
    R = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
    m.add_body("block", "ground", {"type": "planar"}, rotation=R, child_rotation=R, mass=2.0,
               com=[0.05, 0, 0.1], inertia=np.eye(3) * 0.01)  # fmt: skip
    cs = [ContactPoint("block", (-0.1, 0, 0), name="heel", axes="xz", friction=0.5, anchor=(-0.1,)),
          ContactPoint("block", (0.2, 0, 0), name="toe", axes="xz", friction=0.5)]  # fmt: skip
    ph = Phase(m, nodes=6, duration=0.3, contacts=cs, actuated=[], dynamics="implicit",
               objectives=[ControlRate(controls=["F:"], scale=100.0)],
               initial={"qd": [0.0, 0.0, 0.0]})  # fmt: skip
    r = solve(ph, verbose=False)
    assert r.success, r.summary()
    F = r.phases[0].forces
    np.testing.assert_allclose(r.grf[:, 2], 2.0 * 9.81, rtol=1e-8)
    # moments about the COM: heel carries (0.2-0.05)/0.3 of the weight
    np.testing.assert_allclose(F["heel"][:, 2], 2 * 9.81 * 0.15 / 0.3, rtol=1e-6)
    np.testing.assert_allclose(r.q, 0.0, atol=1e-9)
    assert r.phases[0].parameters == {}  # a fixed anchor; the toe is not anchored again


def test_non_penetration_and_periodic_pendulum():
    m = single_pendulum()
    ph = Phase(m, nodes=21, duration=1.0, objectives=[Effort()],
               constraints=[NonPenetration("rod", (0.4, 0, 0), height=-0.3, name="tip above")],
               initial={"q": [-0.5]})  # fmt: skip
    r = solve(OptimalControlProblem(ph, periodic=True), verbose=False)
    assert r.success, r.summary()
    np.testing.assert_allclose(r.q[0], r.q[-1], atol=1e-9)
    np.testing.assert_allclose(r.qd[0], r.qd[-1], atol=1e-9)
    tip = kinematics.point_position(m, r.q, "rod", [0.4, 0, 0])[:, 2]
    assert tip.min() >= -0.3 - 1e-8


def test_registered_transcriptions_include_collocation():
    assert {"trapezoidal", "hermite-simpson"} <= set(transcriptions())

    class Nothing(Transcription):
        name = "nothing"

    with pytest.raises(NotImplementedError):
        Nothing().discretize(None, 0, None, 1.0, None, 0.0, None)


def test_marker_grf_and_jerk_objectives():
    m = single_pendulum()
    m.update_body("rod", markers={"tip": [0.4, 0.0, 0.0]})
    t = np.linspace(0.0, 0.4, 21)
    q = 0.2 * np.sin(5 * t)
    tip = kinematics.point_position(m, q[:, None], "rod", [0.4, 0, 0])
    ph = Phase(m, nodes=21, duration=0.4, objectives=[TrackMarkers(t, {"tip": tip}, weight=1e4),
                                                      Effort(weight=1e-8)])  # fmt: skip
    r = solve(ph, method="hermite-simpson", verbose=False)
    assert r.success
    np.testing.assert_allclose(r.q[:, 0], q, atol=2e-3)
    # jerk: the minimum-jerk rest-to-rest motion of a free mass is the quintic (Flash & Hogan)
    s = _slider()
    ph = Phase(s, nodes=41, duration=1.0, objectives=[Jerk()], initial={"q": [0.0], "qd": [0.0]},
               final={"qd": [0.0]}, dynamics="implicit",
               constraints=[BoundaryConstraint(lambda x0, xf, T, p: xf[0] - x0[0], 1.0, 1.0,
                                               name="distance")])  # fmt: skip
    r = solve(ph, method="trapezoidal", verbose=False)
    assert r.success
    # closed form: min ∫ q⃛² with q, q̇ fixed at both ends and q̈ free is the quintic with the
    # natural conditions q⃛(0) = q⃛(1) = 0 (the Euler-Lagrange equation is q⁽⁶⁾ = 0)
    rows = [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 0, 6, 0, 0],
            [1, 1, 1, 1, 1, 1], [0, 1, 2, 3, 4, 5], [0, 0, 0, 6, 24, 60]]  # fmt: skip
    c = np.linalg.solve(np.array(rows, float), [0, 0, 0, 1, 0, 0])
    q5 = np.polyval(c[::-1], r.t)
    np.testing.assert_allclose(r.q[:, 0], q5, atol=2e-3)  # finite-difference jerk: O(h)
    assert abs(r.q[-1, 0] - 1.0) < 1e-9  # the user boundary constraint


def test_grf_tracking_and_user_constraints():
    m = Model(gravity=(0, 0, -9.81))
    m.add_body("m", "ground", {"type": "prismatic", "axis": [0, 0, 1], "name": "z"}, mass=2.0)
    c = ContactPoint("m", (0, 0, 0), name="foot", axes="z", height=0.0)
    t = np.array([0.0, 0.5])
    ph = Phase(m, nodes=6, duration=0.5, contacts=[c], actuated=[], dynamics="implicit",
               initial={"qd": [0.0]},
               objectives=[TrackGRF(t, [[0, 0, 10.0], [0, 0, 10.0]])],
               constraints=[PathConstraint(lambda x, u, p, tt: u[1], -1e3, 1e3,
                                           name="force")])  # fmt: skip
    r = solve(ph, verbose=False)
    assert r.success, r.summary()
    # the term is the trapezoidal integral of the squared difference at the nodes
    fz = r.grf[:, 2]
    want = np.sum(np.diff(r.t) * 0.5 * ((fz[:-1] - 10) ** 2 + (fz[1:] - 10) ** 2))
    np.testing.assert_allclose(r.cost_terms["track_grf"], want, rtol=1e-8)
    # the ground carries the weight on average whatever the reference asks (19.62 N, not 10 N)
    np.testing.assert_allclose(np.trapezoid(fz, r.t) / 0.5, 2 * 9.81, rtol=1e-6)
    assert np.abs(r.q).max() < 1e-9


def test_explicit_and_implicit_dynamics_agree():
    m = single_pendulum()
    kw = dict(nodes=31, duration=0.5, objectives=[Effort()], initial={"q": [0.0], "qd": [0.0]},
              final={"q": [-1.0], "qd": [0.0]})  # fmt: skip
    a = solve(Phase(m, dynamics="explicit", **kw), method="hermite-simpson", verbose=False)
    b = solve(Phase(m, dynamics="implicit", **kw), method="hermite-simpson", verbose=False)
    assert a.success and b.success
    np.testing.assert_allclose(b.tau, a.tau, atol=2e-3 * np.abs(a.tau).max())
    np.testing.assert_allclose(b.qdd, a.qdd, atol=2e-2 * np.abs(a.qdd).max())


def test_guess_from_a_simulation_result():
    m = single_pendulum()
    sim = dynamics.simulate(m, (0.0, 0.3), [0.0], [0.0], t_eval=np.linspace(0, 0.3, 16))
    ph = Phase(m, nodes=16, duration=0.3, objectives=[Effort()], initial={"q": [0.0], "qd": [0.0]},
               final={"q": sim.q[-1], "qd": sim.qd[-1]})  # fmt: skip
    r = solve(ph, guess=sim, method="hermite-simpson", verbose=False)
    assert r.success and r.iterations <= 10
    np.testing.assert_allclose(r.tau, 0.0, atol=1e-4)  # the free fall needs no torque
    with pytest.raises(DataError, match="guess"):
        solve(ph, guess=3.0, verbose=False)


@pytest.mark.parametrize("mu", [0.6, 0.3])
def test_friction_cone_in_3d_holds_or_is_reported(mu):
    """A 1 kg mass pushed sideways by 3 N + 4 N stands still: friction 5 N ≤ μ 9.81 N or not."""
    m = Model(gravity=(0, 0, -9.81))
    for i, (ax, name) in enumerate((([1, 0, 0], "x"), ([0, 1, 0], "y"), ([0, 0, 1], "z"))):
        parent = "ground" if i == 0 else f"b{'xyz'[i - 1]}"
        joint = {"type": "prismatic", "axis": ax, "name": name}
        m.add_body(f"b{name}", parent, joint, mass=1.0 if i == 2 else 0.0)
    c = ContactPoint("bz", name="foot", axes="xyz", friction=mu, anchor=(0.0, 0.0))
    ph = Phase(
        m,
        nodes=5,
        duration=0.2,
        contacts=[c],
        dynamics="implicit",
        tau_bounds={"x": (3.0, 3.0), "y": (4.0, 4.0), "z": (0.0, 0.0)},
        initial={"qd": [0.0, 0.0, 0.0]},
        objectives=[ControlRate(controls=["F:"])],
    )  # the forces' free mode: constant
    r = solve(ph, verbose=False, max_iter=100)
    if mu == 0.6:
        assert r.success, r.summary()
        F = r.phases[0].forces["foot"]
        np.testing.assert_allclose(F, np.tile([-3.0, -4.0, 9.81], (5, 1)), atol=1e-6)
    else:
        # too little friction: the mass would slide; IPOPT's least-infeasible point gives up
        # the cone or the no-slip rows (or the dynamics), and says which by name
        assert not r.success and r.status == "Infeasible_Problem_Detected"
        names = [n for n, _ in r.violated]
        assert any(("friction cone" in n or "no slip" in n) for n in names), names


def test_casadi_nlpsol_options_pass_through_unprefixed():
    """CasADi's own nlpsol options (print_time, expand, jit, ...) are not IPOPT's: they
    reach nlpsol as they are, IPOPT's options get their prefix."""
    from ahbm.optimize import Effort, Phase, solve

    ph = Phase(single_pendulum(), nodes=5, duration=0.3, objectives=[Effort()],
               initial={"q": [0.0], "qd": [0.0]}, final={"q": [0.2]})  # fmt: skip
    r = solve(ph, verbose=False, options={"print_time": False, "jit": False,
                                          "mu_strategy": "adaptive"})  # fmt: skip
    assert r.success
    with pytest.raises(DataError, match="`options`: .no_such_option. is not an IPOPT"):
        solve(ph, verbose=False, options={"no_such_option": 1})
