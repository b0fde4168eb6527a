"""``ahbm cmc``: OpenSim's CMC setups, the window solves, bad setups and the file layout.

ahbm alone (no OpenSim): the tabulated Millard muscles against
:func:`ahbm.muscles.millard.millard_state` and their window integration
against scipy's adaptive integrator on the exact curves, the fast target's
quadratic program against its closed form and against SLSQP, bad setups (each
names its element and line, and the command exits with 1), and the files of a
short run on the shared subject01 setup.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from ahbm.cli import main
from ahbm.errors import AhbmError, FileFormatError
from ahbm.muscles.millard import millard_activation_rate, millard_equilibrium, millard_state
from ahbm.muscles.millard_curves import MillardParameters
from ahbm.opensim._cmc_muscles import MillardTables
from ahbm.opensim.cmc_setup import read_cmc_setup, read_control_constraints
from ahbm.opensim.cmc_tool import least_effort_forces

SETUP = "subject01_Setup_CMC.xml"


@pytest.fixture(scope="module")
def muscles():
    p = MillardParameters(
        max_isometric_force=[1000.0, 3000.0],
        optimal_fiber_length=[0.1, 0.05],
        tendon_slack_length=[0.2, 0.25],
        pennation_angle=[0.0, 0.3],
        names=("a", "b"),
    )
    return p, MillardTables(p)


def test_tables_match_the_exact_curves(muscles):
    p, tab = muscles
    rng = np.random.default_rng(1)
    act = rng.uniform(0.01, 1.0, (40, 2))
    lmt = rng.uniform(0.29, 0.31, (40, 1)) * [1.0, 1.0] + [0.0, 0.0]
    eq = millard_equilibrium(p, act, lmt)
    lm = eq.fiber_length * rng.uniform(0.97, 1.03, (40, 2))
    ref = millard_state(p, act, lmt, lm)
    F, vn, active = tab.state(act, lmt, lm)
    np.testing.assert_allclose(F, ref.tendon_force, rtol=0, atol=1e-4)
    np.testing.assert_allclose(vn * tab.vmax, ref.fiber_velocity, rtol=0, atol=1e-6)
    np.testing.assert_allclose(active, ref.active_fiber_force, rtol=0, atol=1e-4)


def test_fiber_velocity_solve_from_far_starts(muscles):
    """The damped equilibrium's velocity solve converges from any start (Newton kept in a
    bracket of half-width |r| / (β cos α)), to the same root as from 0 and as
    :func:`millard_state` on the exact curves, also where the root lies beyond the
    force-velocity curve's sampled range (|ṽ| > 1, fast stretch or shortening)."""
    p, tab = muscles
    rng = np.random.default_rng(7)
    act = rng.uniform(0.01, 1.0, (60, 2))
    lmt = np.full((60, 2), 0.30)
    eq = millard_equilibrium(p, act, lmt)
    lm = eq.fiber_length * rng.uniform(0.9, 1.1, (60, 2))  # tendon far from equilibrium
    ref = millard_state(p, act, lmt, lm)
    F0, v0, _ = tab.state(act, lmt, lm)
    assert np.abs(v0).max() > 1.0  # some roots on the curve's linear extensions
    np.testing.assert_allclose(v0 * tab.vmax, ref.fiber_velocity, rtol=0, atol=1e-6)
    for start in (-1e3, -40.0, -3.0, 0.99, 3.0, 40.0, 1e3):
        F, v, _ = tab.state(act, lmt, lm, v0=start)
        np.testing.assert_allclose(v, v0, rtol=0, atol=1e-10, err_msg=f"start {start}")
        np.testing.assert_allclose(F, F0, rtol=0, atol=1e-9)


def test_window_integration_matches_an_adaptive_integrator(muscles):
    from scipy.integrate import solve_ivp

    p, tab = muscles
    u, a0, T = np.array([0.8, 0.1]), np.array([0.2, 0.5]), 0.005

    def lmt(t):
        return np.array([0.30 + 0.2 * t, 0.285 - 0.3 * t])

    lm0 = millard_equilibrium(p, a0[None], lmt(0.0)[None]).fiber_length[0]

    def rhs(t, y):
        a, lm = y[:2], y[2:]
        st = millard_state(p, np.clip(a, 0, 1)[None], lmt(t)[None], lm[None])
        return np.concatenate([millard_activation_rate(u, a, p), st.fiber_velocity[0]])

    ref = solve_ivp(rhs, (0, T), np.concatenate([a0, lm0]), rtol=1e-10, atol=1e-12).y[:, -1]
    stages = np.array([lmt(t) for t in np.linspace(0, T, 11)])
    a, lm, F, _, _ = tab.integrate(u[None], a0[None], lm0[None], stages, T / 5)
    np.testing.assert_allclose(a[0], ref[:2], atol=2e-6)
    np.testing.assert_allclose(lm[0], ref[2:], atol=1e-8)
    want = millard_state(p, a, lmt(T)[None], lm).tendon_force
    np.testing.assert_allclose(F, want, atol=1e-3)


def test_rigid_tendon_active_force_is_opensims_weight(muscles):
    """F̂ = F0 fL(lM) fV(vM) cos α of an inextensible tendon (OpenSim's
    calcInextensibleTendonActiveFiberForce), from the exact curves."""
    from ahbm.muscles.millard_curves import millard_active_force_length, millard_force_velocity

    p, tab = muscles
    u = p.as_used(rigid_tendon=False)
    lmt = np.array([0.30, 0.29])
    vmt = np.array([-0.2, 0.15])
    h = u.optimal_fiber_length * np.sin(u.pennation_angle)
    lm = np.sqrt(h**2 + (lmt - u.tendon_slack_length) ** 2)
    cos = (lmt - u.tendon_slack_length) / lm
    vm = vmt * cos
    fl = millard_active_force_length((lm / u.optimal_fiber_length)[None], u)[0]
    fv = millard_force_velocity(
        (vm / (u.max_contraction_velocity * u.optimal_fiber_length))[None], u
    )[0]
    want = u.max_isometric_force * fl * fv * cos
    np.testing.assert_allclose(tab.rigid_tendon_active(lmt, vmt), want, rtol=1e-7)
    # a fiber shorter than its minimum and shortening: clamped, no active force
    assert tab.rigid_tendon_active(np.array([0.2, 0.25]), np.array([-0.1, -0.1]))[0] == 0.0


def test_window_integration_at_full_excitation_from_rest():
    """subject01's vasti_l near a state of the walk where a fixed 1 ms Runge-Kutta step
    on the tabled curves lost the force at full excitation (133 N where about 1450 N is
    right): the error-controlled integration matches scipy's DOP853 (tolerance 1e-10)."""
    from scipy.integrate import solve_ivp

    p = MillardParameters(
        max_isometric_force=[5000.0], optimal_fiber_length=[0.1247],
        tendon_slack_length=[0.1352], pennation_angle=[0.0524], names=("vasti",),
    )  # fmt: skip
    tab = MillardTables(p)
    u, a0, T = np.array([1.0]), np.array([0.036]), 0.005

    def lmt(t):
        return np.array([0.2336 + 0.3 * t])

    lm0 = np.array([0.09853])

    def rhs(t, y):
        a, lm = y[:1], y[1:]
        st = millard_state(p, np.clip(a, 0, 1)[None], lmt(t)[None], lm[None])
        return np.concatenate([millard_activation_rate(u, a, p), st.fiber_velocity[0]])

    ref = solve_ivp(rhs, (0, T), np.concatenate([a0, lm0]), method="DOP853", rtol=1e-10,
                    atol=1e-12).y[:, -1]  # fmt: skip
    stages = np.array([lmt(t) for t in np.linspace(0, T, 11)])
    a, lm, F, _, _ = tab.integrate(u[None], a0[None], lm0[None], stages, T / 5)
    np.testing.assert_allclose(a[0], ref[:1], atol=1e-6)
    np.testing.assert_allclose(lm[0], ref[1:], atol=1e-7)
    want = millard_state(p, a, lmt(T)[None], lm).tendon_force
    np.testing.assert_allclose(F, want, rtol=1e-5)
    exact = millard_state(p, ref[None, :1], lmt(T)[None], ref[None, 1:]).tendon_force
    np.testing.assert_allclose(F, exact, atol=0.5)  # 1243 N


def test_least_effort_forces_with_scales_far_apart():
    """Scales from 1 to 6e3 (reserves of 1 N m beside muscles), bounds binding: the
    exact line search reaches SLSQP's optimum where backtracking Newton cycled."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(11)
    for _ in range(5):
        B = rng.normal(size=(6, 20)) * np.r_[np.full(14, 0.05), np.full(6, 1.0)]
        s = np.r_[rng.uniform(500.0, 6000.0, 14), np.full(6, 1.0)]
        lo = np.r_[rng.uniform(0.0, 300.0, 14), np.full(6, -1e4)]
        hi = lo + np.r_[rng.uniform(20.0, 400.0, 14), np.full(6, 2e4)]
        c = B @ (lo + rng.uniform(0.0, 1.0, 20) * (hi - lo))
        f, lam = least_effort_forces(B, c, s, lo, hi)
        ref = minimize(
            lambda x: np.sum((x / s) ** 2), np.clip(f, lo, hi), jac=lambda x: 2 * x / s**2,
            bounds=list(zip(lo, hi, strict=True)), method="SLSQP",
            constraints=[{"type": "eq", "fun": lambda x: B @ x - c, "jac": lambda x: B}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )  # fmt: skip
        np.testing.assert_allclose(B @ f, c, atol=1e-6 * np.abs(c).max())
        assert np.all(f >= lo - 1e-9) and np.all(f <= hi + 1e-9)
        assert np.sum((f / s) ** 2) <= np.sum((ref.x / s) ** 2) * (1 + 1e-9)
        # warm-started from the multipliers of a nearby problem: the same optimum
        f2, _ = least_effort_forces(B, c * 1.001, s, lo, hi, lam)
        f3, _ = least_effort_forces(B, c * 1.001, s, lo, hi)
        np.testing.assert_allclose(f2, f3, atol=1e-6 * np.abs(f3).max())


def test_least_effort_forces_closed_form_and_bounds():
    from scipy.optimize import minimize

    rng = np.random.default_rng(4)
    B = rng.normal(size=(3, 8))
    c = rng.normal(size=3)
    s = rng.uniform(0.5, 3.0, 8)
    # no active bound: f = S² Bᵀ (B S² Bᵀ)⁻¹ c
    want = s**2 * (B.T @ np.linalg.solve((B * s**2) @ B.T, c))
    f, _ = least_effort_forces(B, c, s, np.full(8, -1e6), np.full(8, 1e6))
    np.testing.assert_allclose(f, want, atol=1e-10)
    # bounds that bind: against SLSQP
    lo, hi = np.full(8, -0.2), np.full(8, 0.25)
    c = B @ rng.uniform(-0.2, 0.25, 8)  # feasible by construction
    f, _ = least_effort_forces(B, c, s, lo, hi)
    ref = minimize(
        lambda x: np.sum((x / s) ** 2),
        np.zeros(8),
        jac=lambda x: 2 * x / s**2,
        bounds=list(zip(lo, hi, strict=True)),
        constraints=[{"type": "eq", "fun": lambda x: B @ x - c, "jac": lambda x: B}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert ref.success
    assert np.any(np.isclose(f, lo) | np.isclose(f, hi))
    np.testing.assert_allclose(f, ref.x, atol=1e-6)
    with pytest.raises(AhbmError, match="no actuator forces"):
        least_effort_forces(B, c * 100, s, lo, hi)


def test_constraints_file(tmp_path):
    path = tmp_path / "cons.xml"
    path.write_text(
        '<OpenSimDocument><ControlSet name="c"><objects>'
        '<ControlLinear name="soleus_r.excitation"><default_min>0.05</default_min>'
        "<default_max>1</default_max><max_nodes><ControlLinearNode><t>0</t><value>0.5</value>"
        "</ControlLinearNode><ControlLinearNode><t>1</t><value>0.7</value></ControlLinearNode>"
        "</max_nodes></ControlLinear></objects></ControlSet></OpenSimDocument>"
    )
    c = read_control_constraints(path)
    assert c.bounds("soleus_r", 0.5, 0.02, 1.0) == pytest.approx((0.05, 0.6))
    assert c.bounds("FX", 0.5, -1.0, 1.0) == (-1.0, 1.0)
    path.write_text(
        '<OpenSimDocument><ControlSet name="c"><objects><ControlConstant name="x.excitation"/>'
        "</objects></ControlSet></OpenSimDocument>"
    )
    with pytest.raises(FileFormatError, match=r"line 1.*ControlConstant"):
        read_control_constraints(path)


# --- setups -----------------------------------------------------------------------------


@pytest.fixture()
def folder(shared_data, tmp_path):
    src = shared_data / "opensim"
    for p in src.iterdir():
        if p.is_file():
            shutil.copy(p, tmp_path / p.name)
            (tmp_path / p.name).chmod(0o644)
    return tmp_path


def _edit(folder: Path, old: str, new: str) -> Path:
    setup = folder / SETUP
    text = setup.read_text()
    assert old in text
    setup.write_text(text.replace(old, new))
    return setup


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("<desired_points_file />", "<desired_points_file>p.sto</desired_points_file>",
         r"line \d+, element <desired_points_file>"),
        ("<use_fast_optimization_target>true", "<use_fast_optimization_target>false",
         r"line \d+, element <use_fast.*false"),
        ("<cmc_time_window>0.005", "<cmc_time_window>0", r"line \d+, element <cmc_time_window>"),
        ("<output_precision>", "<no_such_thing/><output_precision>",
         r"line \d+, element <no_such_thing>"),
        ("<rra_controls_file />", "<rra_controls_file>c.xml</rra_controls_file>",
         r"line \d+, element <rra_controls_file>"),
        ("<objects>\n\t\t\t</objects>", "<objects><Kinematics name='k'/></objects>",
         r"line \d+, element <Kinematics>: Kinematics 'k'"),
    ],
)  # fmt: skip
def test_bad_setups_name_the_element_and_line(folder, old, new, match, capsys):
    setup = _edit(folder, old, new)
    with pytest.raises(FileFormatError, match=match):
        read_cmc_setup(setup)
    assert main(["cmc", str(setup)]) == 1
    assert "line" in capsys.readouterr().err


def test_setup_is_read(folder):
    s = read_cmc_setup(folder / SETUP)
    assert s.name == "walk_subject" and s.cmc_time_window == 0.005
    assert [t.coordinate for t in s.tasks][:2] == ["pelvis_tx", "pelvis_ty"]
    assert s.constraints is None and s.results_directory == folder / "CMC_Results"


def test_short_run_writes_opensims_files(folder):
    """A 0.06 s run (tracking the IK file, filtered at 6 Hz): files, columns, rows."""
    from ahbm.opensim import read_mot

    setup = _edit(folder, "RRA_Results/subject_adjusted_Kinematics_q.sto", "subject01_walk_IK.mot")
    text = setup.read_text().replace("<final_time>1.9", "<final_time>0.67")
    setup.write_text(text.replace("<lowpass_cutoff_frequency>-1", "<lowpass_cutoff_frequency>6"))
    assert main(["cmc", str(setup), "-q"]) == 0
    out = folder / "CMC_Results"
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        f"walk_subject_{k}"
        for k in ("Actuation_force.sto", "Actuation_speed.sto", "Actuation_power.sto",
                  "Kinematics_q.sto", "Kinematics_u.sto", "Kinematics_dudt.sto", "controls.sto",
                  "controls.xml", "states.sto", "pErr.sto")
    )  # fmt: skip
    force = read_mot(out / "walk_subject_Actuation_force.sto", angle_columns=[])
    assert force.columns[:2] == ["hamstrings_r", "bifemsh_r"] and force.columns[18] == "FX"
    np.testing.assert_allclose(force.time, 0.63 + 0.005 * np.arange(8), atol=1e-12)
    states = read_mot(out / "walk_subject_states.sto", angle_columns=[])
    assert states.columns[0] == "/jointset/ground_pelvis/pelvis_tilt/value"
    # Actuation as OpenSim reports it: a muscle's speed is its path's lengthening speed
    # at the states, and its power -force x speed (the sign was once reversed)
    from ahbm.muscles.paths import lengthening_speeds
    from ahbm.opensim.coordinates import _read_osim

    model = _read_osim(folder / "subject01.osim")
    cols = {c: k for k, c in enumerate(states.columns)}
    q = np.empty((len(states.time), model.nq))
    qd = np.empty_like(q)
    for i, b in enumerate(model.bodies):
        for c in b.joint.coordinates:
            k = list(model.coordinate_names).index(c)
            q[:, k] = states.values[:, cols[f"/jointset/{b.joint.name}/{c}/value"]]
            qd[:, k] = states.values[:, cols[f"/jointset/{b.joint.name}/{c}/speed"]]
    speed = read_mot(out / "walk_subject_Actuation_speed.sto", angle_columns=[])
    power = read_mot(out / "walk_subject_Actuation_power.sto", angle_columns=[])
    v = lengthening_speeds(model, q, qd, muscles=force.columns[:18])
    np.testing.assert_allclose(speed.values[:, :18], v, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(power.values[:, :18], -force.values[:, :18] * v, rtol=1e-6,
                               atol=1e-5)  # fmt: skip
    assert states.columns[-1] == "/forceset/tib_ant_l/fiber_length"
    controls = read_mot(out / "walk_subject_controls.sto", angle_columns=[])
    muscles = np.asarray(controls.values)[:, :18]
    assert np.all((muscles >= 0.02 - 1e-12) & (muscles <= 1 + 1e-12))
    perr = read_mot(out / "walk_subject_pErr.sto", angle_columns=[])
    assert perr.time[0] == 0.6 and perr.time[1] == pytest.approx(0.63)
    assert np.abs(np.asarray(perr.values)).max() < np.radians(1.0)
    xml = (out / "walk_subject_controls.xml").read_text()
    assert xml.count("<use_steps>true</use_steps>") == 18


def test_excitations_give_the_target_forces(folder, monkeypatch):
    """Each muscle's excitation makes its force at the window's end the fast target's force
    (within 0.01 N where the target lies inside the force range); linear interpolation
    on a bracketing grid missed by up to 9 N on the walk."""
    import ahbm.opensim.cmc_tool as ct

    setup = _edit(folder, "RRA_Results/subject_adjusted_Kinematics_q.sto", "subject01_walk_IK.mot")
    text = setup.read_text().replace("<final_time>1.9", "<final_time>0.65")
    setup.write_text(text.replace("<lowpass_cutoff_frequency>-1", "<lowpass_cutoff_frequency>6"))
    seen = []
    solve = ct._Controller._excitations

    def excitations(self, t0, t1, err_q, a, lm, XA, FA, target, small):
        x = solve(self, t0, t1, err_q, a, lm, XA, FA, target, small)
        force = self._muscle_window(t0, t1, err_q, a, lm, x[None])[2][0]
        lo, hi = np.minimum(FA[0], FA[-1]), np.maximum(FA[0], FA[-1])
        inside = (target > lo + 1e-6) & (target < hi - 1e-6)
        seen.append(np.abs(force - target)[inside])
        return x

    monkeypatch.setattr(ct._Controller, "_excitations", excitations)
    ct.run_cmc_setup(setup, write=False)
    err = np.concatenate(seen)
    assert len(seen) >= 5 and err.size > 20
    assert err.max() < 0.01, err.max()
