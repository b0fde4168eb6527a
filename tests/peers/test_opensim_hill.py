"""Hill-type muscles against OpenSim's Thelen2003Muscle and DeGrooteFregly2016Muscle.

OpenSim runs in a child process (:mod:`opensim_oracle`): a one-muscle model (a body on a
slider joint, the path from the ground origin to the body origin, so the path length is
the coordinate and the lengthening speed its speed), activation set in the state,
``equilibrateMuscles``, then the muscle's tendon force, fiber length, active and passive
fiber forces, fiber velocity and pennation angle.
"""

from __future__ import annotations

import numpy as np
import pytest
from opensim_oracle import opensim_run

from ahbm.errors import AhbmWarning
from ahbm.muscles import MuscleParameters, force_coefficients, muscle_equilibrium

_BUILD = """
def one_muscle_model(case, *, mass=1.0, gravity=0.0, origin=0.0):
    # a body on a slider along x; the path from (origin, 0, 0) in the ground to the body
    m = osim.Model()
    m.setGravity(osim.Vec3(gravity, 0, 0))
    body = osim.Body("b", mass, osim.Vec3(0), osim.Inertia(0.1))
    m.addBody(body)
    m.addJoint(osim.SliderJoint("s", m.getGround(), osim.Vec3(0), osim.Vec3(0),
                                body, osim.Vec3(0), osim.Vec3(0)))
    F0, lopt, lts, pen, vmax = case["params"]
    if case["kind"] == "thelen2003":
        mus = osim.Thelen2003Muscle("m", F0, lopt, lts, pen)
    else:
        mus = osim.DeGrooteFregly2016Muscle()
        mus.setName("m")
        mus.setMaxIsometricForce(F0)
        mus.setOptimalFiberLength(lopt)
        mus.setTendonSlackLength(lts)
        mus.setPennationAngleAtOptimalFiberLength(pen)
        mus.set_ignore_tendon_compliance(case["rigid"])
    mus.setMaxContractionVelocity(vmax)
    for k, v in case.get("extra", {}).items():
        getattr(mus, "set_" + k)(v)
    mus.addNewPathPoint("o", m.getGround(), osim.Vec3(origin, 0, 0))
    mus.addNewPathPoint("i", body, osim.Vec3(0, 0, 0))
    m.addForce(mus)
    return m, mus
"""

_SCRIPT = (
    _BUILD
    + """
rows = []
for case in INPUTS["cases"]:
    m, mus = one_muscle_model(case)
    s = m.initSystem()
    c = m.getCoordinateSet().get(0)
    c.setValue(s, case["lmt"])
    c.setSpeedValue(s, case["vmt"])
    mus.setActivation(s, case["a"])
    m.equilibrateMuscles(s)
    m.realizeDynamics(s)
    rows.append([mus.getLength(s), mus.getLengtheningSpeed(s), mus.getTendonForce(s),
                 mus.getFiberLength(s), mus.getActiveFiberForce(s),
                 mus.getPassiveFiberForce(s), mus.getFiberVelocity(s),
                 mus.getPennationAngle(s),
                 mus.calcInextensibleTendonActiveFiberForce(s, case["a"]),
                 mus.calcInextensibleTendonActiveFiberForce(s, 1.0)])
OUT["rows"] = rows
"""
)

_COLUMNS = (
    "mt_length",
    "mt_speed",
    "tendon_force",
    "fiber_length",
    "active_fiber_force",
    "passive_fiber_force",
    "fiber_velocity",
    "pennation_angle",
    "inextensible_active",
    "inextensible_active_1",
)

_EXTRAS = {
    "thelen2003": [
        {},
        {"FmaxTendonStrain": 0.033, "KshapeActive": 0.5, "Af": 0.3, "Flen": 1.8},
        {"FmaxMuscleStrain": 0.5, "KshapePassive": 4.0, "activation_time_constant": 0.01},
    ],
    "degroote2016": [
        {},
        {"tendon_strain_at_one_norm_force": 0.04, "passive_fiber_strain_at_one_norm_force": 0.7},
        {"active_force_width_scale": 1.5},
    ],
}
_NAMES = {  # OpenSim property -> MuscleParameters field
    "FmaxTendonStrain": "tendon_strain",
    "FmaxMuscleStrain": "passive_strain",
    "KshapeActive": "kshape_active",
    "KshapePassive": "kshape_passive",
    "Af": "af",
    "Flen": "flen",
    "activation_time_constant": "activation_time_constant",
    "tendon_strain_at_one_norm_force": "tendon_strain",
    "passive_fiber_strain_at_one_norm_force": "passive_strain",
    "active_force_width_scale": "active_force_width_scale",
}


def _cases(kind, rigid, n, seed, *, zero_speed=False):
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        f0 = rng.uniform(200.0, 3000.0)
        lopt = rng.uniform(0.05, 0.2)
        lts = rng.uniform(0.05, 0.4)
        pen = rng.choice([0.0, rng.uniform(0.05, 0.45)])
        vmax = rng.uniform(6.0, 12.0)
        ln = rng.uniform(0.6, 1.45)
        strain = rng.uniform(0.0, 0.03)
        h = lopt * np.sin(pen)
        lmt = lts * (1 + strain) + np.sqrt(max((lopt * ln) ** 2 - h**2, 1e-6))
        vmt = 0.0 if zero_speed else rng.uniform(-0.4, 0.4) * vmax * lopt
        cases.append(
            dict(
                kind=kind,
                rigid=rigid,
                params=[f0, lopt, lts, pen, vmax],
                extra=_EXTRAS[kind][i % len(_EXTRAS[kind])],
                a=float(rng.uniform(0.02, 1.0)),
                lmt=float(lmt),
                vmt=float(vmt),
            )
        )
    return cases


def _ours(case, *, rigid):
    f0, lopt, lts, pen, vmax = case["params"]
    kw = {_NAMES[k]: v for k, v in case["extra"].items()}
    p = MuscleParameters(
        max_isometric_force=f0,
        optimal_fiber_length=lopt,
        tendon_slack_length=lts,
        pennation_angle=pen,
        max_contraction_velocity=vmax,
        **kw,
    )
    s = muscle_equilibrium(
        p, [case["a"]], [case["lmt"]], [case["vmt"]], curves=case["kind"], rigid_tendon=rigid
    )
    return p, s


def _relerr(ours, theirs, scale):
    return abs(ours - theirs) / scale


def _run(cases):
    out = opensim_run(_SCRIPT, cases=cases)
    return [dict(zip(_COLUMNS, row)) for row in out["rows"]]


@pytest.mark.parametrize("kind", ["thelen2003", "degroote2016"])
def test_elastic_tendon_equilibrium_matches_opensim(kind):
    cases = _cases(kind, False, 18, seed=11) + _cases(kind, False, 6, seed=12, zero_speed=True)
    worst = {}
    for case, ref in zip(cases, _run(cases)):
        assert ref["mt_length"] == pytest.approx(case["lmt"], abs=1e-12)
        assert ref["mt_speed"] == pytest.approx(case["vmt"], abs=1e-12)
        p, s = _ours(case, rigid=False)
        f0 = case["params"][0]
        # relative to the force itself, floored at 1 % of F0 (tiny forces near slack)
        scale = max(abs(ref["tendon_force"]), 0.01 * f0)
        errs = {
            "tendon_force": _relerr(s.tendon_force[0], ref["tendon_force"], scale),
            "active_fiber_force": _relerr(
                s.active_fiber_force[0], ref["active_fiber_force"], scale
            ),
            "passive_fiber_force": _relerr(
                s.passive_fiber_force[0], ref["passive_fiber_force"], scale
            ),
            "fiber_length": _relerr(s.fiber_length[0], ref["fiber_length"], ref["fiber_length"]),
            "pennation_angle": abs(s.pennation_angle[0] - ref["pennation_angle"]),
            "fiber_velocity": _relerr(
                s.fiber_velocity[0], ref["fiber_velocity"], case["params"][1] * case["params"][4]
            ),
        }
        for k, v in errs.items():
            worst[k] = max(worst.get(k, 0.0), v)
    print(kind, {k: f"{v:.1e}" for k, v in worst.items()})
    assert max(worst.values()) < 1e-6, worst


@pytest.mark.parametrize("kind", ["thelen2003", "degroote2016"])
def test_rigid_tendon_matches_opensim(kind):
    """De Groote: ignore_tendon_compliance; Thelen (no rigid option in OpenSim): the
    inextensible-tendon active force OpenSim's static optimization uses."""
    cases = _cases(kind, kind == "degroote2016", 16, seed=21)
    worst = 0.0
    for case, ref in zip(cases, _run(cases)):
        p, s = _ours(case, rigid=True)
        f0 = case["params"][0]
        cos = np.cos(s.pennation_angle[0])
        act, _ = force_coefficients(
            p, [case["lmt"]], [case["vmt"]], curves=kind, force_length_velocity=True
        )
        act_os, pas_os = force_coefficients(
            p, [case["lmt"]], [case["vmt"]], curves=kind, convention="opensim"
        )
        assert pas_os[0] == 0.0
        worst = max(
            worst, abs(act_os[0] - ref["inextensible_active_1"]) / (0.01 * f0 + abs(act_os[0]))
        )
        if kind == "degroote2016":
            pairs = [
                (s.tendon_force[0], ref["tendon_force"]),
                (s.active_fiber_force[0], ref["active_fiber_force"]),
                (s.passive_fiber_force[0], ref["passive_fiber_force"]),
                (s.fiber_length[0] * f0, ref["fiber_length"] * f0),
                # OpenSim's De Groote returns the inextensible active force along the fiber
                (act[0] / cos, ref["inextensible_active_1"]),
                (s.active_fiber_force[0], ref["inextensible_active"]),
            ]
        else:
            pairs = [
                (s.active_fiber_force[0] * cos, ref["inextensible_active"]),
                (act[0], ref["inextensible_active_1"]),
            ]
        for ours, theirs in pairs:
            worst = max(worst, abs(ours - theirs) / max(abs(theirs), 0.01 * f0))
    print(kind, f"rigid worst relative error {worst:.1e}")
    assert worst < 1e-6


@pytest.mark.parametrize("kind", ["thelen2003", "degroote2016"])
def test_optimal_length_identity_in_opensim_and_ahbm(kind):
    """Rigid tendon, optimal fiber length, zero speed: active force along the tendon is
    a·F0·cos(α0), in OpenSim and in ahbm (Thelen's passive force is 0 there too)."""
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(5):
        f0, lopt, lts = rng.uniform(300, 2000), rng.uniform(0.05, 0.2), rng.uniform(0.1, 0.4)
        pen = rng.uniform(0.0, 0.4)
        cases.append(
            dict(
                kind=kind,
                rigid=kind == "degroote2016",
                params=[f0, lopt, lts, pen, 10.0],
                extra={},
                a=float(rng.uniform(0.05, 1.0)),
                lmt=float(lts + lopt * np.cos(pen)),
                vmt=0.0,
            )
        )
    for case, ref in zip(cases, _run(cases)):
        f0, lopt, lts, pen, _ = case["params"]
        expected = case["a"] * f0 * np.cos(pen)
        _, s = _ours(case, rigid=True)
        along = s.active_fiber_force[0] * np.cos(s.pennation_angle[0])
        assert along == pytest.approx(expected, rel=1e-12)
        assert s.pennation_angle[0] == pytest.approx(pen, abs=1e-12)
        if kind == "thelen2003":
            assert s.tendon_force[0] == pytest.approx(expected, rel=1e-12)
            assert ref["inextensible_active"] == pytest.approx(expected, rel=1e-9)
        else:
            passive_along = ref["passive_fiber_force"] * np.cos(ref["pennation_angle"])
            assert ref["tendon_force"] - passive_along == pytest.approx(expected, rel=1e-9)


_FORWARD_SCRIPT = (
    _BUILD
    + """
m, mus = one_muscle_model(INPUTS, mass=INPUTS["mass"], gravity=-9.81, origin=INPUTS["origin"])
brain = osim.PrescribedController()
brain.addActuator(mus)
f = osim.PiecewiseLinearFunction()
for t, u in zip(INPUTS["time"], INPUTS["u"]):
    f.addPoint(t, u)
brain.prescribeControlForActuator("m", f)
m.addController(brain)
s = m.initSystem()
c = m.getCoordinateSet().get(0)
c.setValue(s, INPUTS["q0"])
c.setSpeedValue(s, 0.0)
mus.setActivation(s, INPUTS["u"][0])
m.equilibrateMuscles(s)
manager = osim.Manager(m)
manager.setIntegratorAccuracy(1e-10)
s.setTime(0.0)
manager.initialize(s)
rows = []
for t in INPUTS["t_eval"]:
    if t > 0:
        s = manager.integrate(t)
    m.realizeDynamics(s)
    rows.append([s.getTime(), c.getValue(s), c.getSpeedValue(s), mus.getActivation(s),
                 mus.getTendonForce(s), mus.getFiberLength(s)])
OUT["rows"] = rows
"""
)


@pytest.mark.parametrize(
    "kind, rigid", [("thelen2003", False), ("degroote2016", False), ("degroote2016", True)]
)
def test_forward_simulation_matches_opensim(kind, rigid):
    """A 20 kg mass hanging on one muscle along a slider, excitation 0.2 -> 0.8 -> 0.1:
    OpenSim's Manager (accuracy 1e-10) against simulate_muscles (rtol 1e-10)."""
    from ahbm.kinematics.tree import Model
    from ahbm.muscles import Muscle, PathPoint, simulate_muscles

    params = [1000.0, 0.1, 0.2, 0.2, 10.0]
    origin = 0.2 + 0.1 * np.cos(0.2)  # the fiber starts at optimal length
    tt, uu = [0.0, 0.1, 0.15, 0.25, 0.3, 1.0], [0.2, 0.2, 0.8, 0.8, 0.1, 0.1]
    t_eval = np.linspace(0.0, 0.4, 9)
    ref = np.array(
        opensim_run(
            _FORWARD_SCRIPT,
            kind=kind,
            rigid=rigid,
            mass=20.0,
            params=params,
            origin=origin,
            time=tt,
            u=uu,
            q0=0.0,
            t_eval=t_eval,
        )["rows"]
    )
    m = Model("hanging mass", gravity=(-9.81, 0.0, 0.0))
    m.add_body("b", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=20.0)
    m.muscles = [
        Muscle(
            "m",
            (PathPoint("o", "ground", (origin, 0, 0)), PathPoint("i", "b", (0, 0, 0))),
            model="Thelen2003Muscle" if kind == "thelen2003" else "DeGrooteFregly2016Muscle",
            max_isometric_force=params[0],
            optimal_fiber_length=params[1],
            tendon_slack_length=params[2],
            pennation_angle=params[3],
            max_contraction_velocity=params[4],
            deactivation_time_constant=0.05 if kind == "thelen2003" else 0.06,
        )
    ]
    r = simulate_muscles(
        m,
        (0.0, 0.4),
        [0.0],
        excitations=np.array(uu)[:, None],
        excitation_time=tt,
        curves=kind,
        rigid_tendon=rigid,
        rtol=1e-10,
        atol=1e-12,
        t_eval=t_eval,
    )
    np.testing.assert_allclose(ref[:, 0], r.t, atol=1e-12)
    q_err = np.max(np.abs(r.q[:, 0] - ref[:, 1]))
    qd_err = np.max(np.abs(r.qd[:, 0] - ref[:, 2]))
    a_err = np.max(np.abs(r.activation[:, 0] - ref[:, 3]))
    f_err = np.max(np.abs(r.tendon_force[:, 0] - ref[:, 4])) / params[0]
    lm_err = np.max(np.abs(r.fiber_length[:, 0] - ref[:, 5]))
    print(
        kind,
        rigid,
        f"q {q_err:.1e} m, qd {qd_err:.1e} m/s, a {a_err:.1e}, "
        f"F/F0 {f_err:.1e}, lM {lm_err:.1e} m; q range {np.ptp(ref[:, 1]):.3f} m",
    )
    assert np.ptp(ref[:, 1]) > 0.005  # the mass moves
    assert q_err < 1e-8 and qd_err < 1e-7 and a_err < 1e-8 and f_err < 1e-7 and lm_err < 1e-8


_FAILURE_SCRIPT = (
    _BUILD
    + """
OUT["ok"] = []
for case in INPUTS["cases"]:
    m, mus = one_muscle_model(case)
    s = m.initSystem()
    c = m.getCoordinateSet().get(0)
    c.setValue(s, case["lmt"])
    c.setSpeedValue(s, case["vmt"])
    mus.setActivation(s, case["a"])
    try:
        m.equilibrateMuscles(s)
        OUT["ok"].append(True)
    except Exception:
        OUT["ok"].append(False)
"""
)


def test_thelen_equilibrium_fails_where_opensim_fails():
    """Fast shortening with a compliant tendon: OpenSim's iteration gives up on some
    states (equilibrateMuscles throws); ahbm, running the same iteration, reports those
    as not converged (NaN, warning) and converges on the others."""
    rng = np.random.default_rng(0)
    n, frames = 18, 600
    p = MuscleParameters(
        max_isometric_force=rng.uniform(300, 3000, n),
        optimal_fiber_length=rng.uniform(0.05, 0.2, n),
        tendon_slack_length=rng.uniform(0.05, 0.4, n),
        pennation_angle=rng.uniform(0, 0.4, n),
    )
    h = p.optimal_fiber_length * np.sin(p.pennation_angle)
    ln = rng.uniform(0.6, 1.4, (frames, n))
    lmt = p.tendon_slack_length * (1 + rng.uniform(0, 0.03, (frames, n))) + np.sqrt(
        (p.optimal_fiber_length * ln) ** 2 - h**2
    )
    vmt = rng.uniform(-0.3, 0.3, (frames, n))
    a = rng.uniform(0.02, 1, (frames, n))
    with pytest.warns(AhbmWarning, match="no equilibrium"):
        s = muscle_equilibrium(p, a, lmt, vmt)
    bad = np.argwhere(~s.converged)[:6]
    good = np.argwhere(s.converged)[::997][:6]
    assert len(bad) >= 3
    cases = [
        dict(
            kind="thelen2003",
            rigid=False,
            params=[p.max_isometric_force[j], p.optimal_fiber_length[j],
                    p.tendon_slack_length[j], p.pennation_angle[j], 10.0],
            a=float(a[i, j]),
            lmt=float(lmt[i, j]),
            vmt=float(vmt[i, j]),
        )
        for i, j in np.concatenate([bad, good])
    ]  # fmt: skip
    ok = opensim_run(_FAILURE_SCRIPT, cases=cases)["ok"]
    assert ok == [False] * len(bad) + [True] * len(good)


_ARM_SCRIPT = """
m = osim.Model()
m.setGravity(osim.Vec3(*INPUTS["gravity"]))
bodies = {"ground": m.getGround()}
for b in INPUTS["bodies"]:
    I = np.diag(b["inertia"])
    body = osim.Body(b["name"], b["mass"], osim.Vec3(*b["com"]), osim.Inertia(*I))
    m.addBody(body)
    bodies[b["name"]] = body
    m.addJoint(osim.PinJoint(b["joint"], bodies[b["parent"]], osim.Vec3(*b["position"]),
                             osim.Vec3(0), body, osim.Vec3(0), osim.Vec3(0)))
brain = osim.PrescribedController()
for mu in INPUTS["muscles"]:
    if INPUTS["kind"] == "thelen2003":
        mus = osim.Thelen2003Muscle(mu["name"], mu["F0"], mu["lopt"], mu["lts"], mu["pen"])
        mus.set_deactivation_time_constant(0.05)
    else:
        mus = osim.DeGrooteFregly2016Muscle()
        mus.setName(mu["name"])
        mus.setMaxIsometricForce(mu["F0"])
        mus.setOptimalFiberLength(mu["lopt"])
        mus.setTendonSlackLength(mu["lts"])
        mus.setPennationAngleAtOptimalFiberLength(mu["pen"])
        mus.set_ignore_tendon_compliance(INPUTS["rigid"])
        mus.set_deactivation_time_constant(0.06)
    mus.set_activation_time_constant(0.015)
    for k, (body, loc) in enumerate(mu["points"]):
        mus.addNewPathPoint(f"{mu['name']}-P{k + 1}", bodies[body], osim.Vec3(*loc))
    m.addForce(mus)
    brain.addActuator(mus)
    brain.prescribeControlForActuator(mu["name"], osim.Constant(mu["u"]))
m.addController(brain)
s = m.initSystem()
cs = m.getCoordinateSet()
for i, q in enumerate(INPUTS["q0"]):
    cs.get(i).setValue(s, q)
for mu in INPUTS["muscles"]:
    m.getMuscles().get(mu["name"]).setActivation(s, mu["a0"])
m.equilibrateMuscles(s)
manager = osim.Manager(m)
manager.setIntegratorAccuracy(1e-10)
s.setTime(0.0)
manager.initialize(s)
rows = []
for t in INPUTS["t_eval"]:
    if t > 0:
        s = manager.integrate(t)
    m.realizeDynamics(s)
    rows.append([cs.get(i).getValue(s) for i in range(cs.getSize())]
                + [m.getMuscles().get(i).getTendonForce(s)
                   for i in range(m.getMuscles().getSize())])
OUT["rows"] = rows
"""


@pytest.mark.parametrize(
    "kind, rigid", [("degroote2016", True), ("degroote2016", False), ("thelen2003", False)]
)
def test_arm_forward_simulation_matches_opensim(kind, rigid):
    """The two-joint arm (ahbm.models.arm_model, six De Groote or Thelen muscles) rebuilt in OpenSim
    from the same numbers, constant excitations, 0.3 s from rest: joint angles and
    tendon forces along the way. Checks the moment arms as generalized forces, the
    multibody dynamics and the muscle states together."""
    from ahbm.models import arm_model
    from ahbm.muscles import simulate_muscles

    model = arm_model(
        muscle_model="Thelen2003Muscle" if kind == "thelen2003" else "DeGrooteFregly2016Muscle"
    )
    d = model.to_dict()
    u = [0.05, 0.3, 0.2, 0.4, 0.25, 0.1]
    q0, t_eval = [0.3, 0.9], np.linspace(0.0, 0.3, 7)
    inputs = dict(
        gravity=list(model.gravity),
        kind=kind,
        rigid=rigid,
        q0=q0,
        t_eval=t_eval,
        bodies=[
            dict(name=b["name"], parent=b["parent"], joint=b["joint"]["name"],
                 position=b["origin"]["position"], mass=b["mass"], com=b["com"],
                 inertia=np.asarray(b["inertia"]))
            for b in d["bodies"]
        ],
        muscles=[
            dict(name=mu.name, F0=mu.max_isometric_force, lopt=mu.optimal_fiber_length,
                 lts=mu.tendon_slack_length, pen=mu.pennation_angle, u=u[i], a0=u[i],
                 points=[(p.body, list(p.location)) for p in mu.points])
            for i, mu in enumerate(model.muscles)
        ],
    )  # fmt: skip
    ref = np.array(opensim_run(_ARM_SCRIPT, **inputs)["rows"])
    r = simulate_muscles(model, (0.0, 0.3), q0, excitations=u, curves=kind,
                         rigid_tendon=rigid, rtol=1e-10, atol=1e-12, t_eval=t_eval)  # fmt: skip
    q_err = np.abs(r.q - ref[:, :2]).max()
    f0 = np.array([mu.max_isometric_force for mu in model.muscles])
    f_err = (np.abs(r.tendon_force - ref[:, 2:]) / f0).max()
    print(f"arm {kind} rigid={rigid}: q {q_err:.1e} rad, F/F0 {f_err:.1e}; "
          f"motion {np.ptp(ref[:, :2], axis=0)} rad")  # fmt: skip
    assert np.ptp(ref[:, :2], axis=0).min() > 0.02  # both joints move
    assert q_err < 1e-8 and f_err < 1e-7
