"""The predictive 2-D run (examples/predictive_running_2d.py) on its quick grid."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")

from ahbm import kinematics  # noqa: E402
from ahbm.errors import DataError  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "predictive_running_2d.py"


@pytest.fixture(scope="module")
def run_mod():
    spec = importlib.util.spec_from_file_location("ahbm_example_predictive_running_2d", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def quick(run_mod, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return run_mod.run(out, quick=True), out


def test_quick_run_converges_at_the_prescribed_speed(quick):
    n, out = quick
    r = n["result"]
    assert n["success"], r.summary()
    assert n["violation"] < 1e-6  # dynamics, contacts, links hold at the solution
    assert abs(n["speed"] - n["target_speed"]) < 1e-6 and n["speed"] == pytest.approx(3.0)
    assert n["step_length"] == pytest.approx(3.0 * n["half_cycle"], abs=1e-6)
    assert (out / "predictive_run.png").stat().st_size > 5000


def test_quick_run_has_a_flight_phase_and_a_single_loaded_stance(run_mod, quick):
    n, _ = quick
    r = n["result"]
    m = r.model
    fl, st = r.phases
    assert n["flight_time"] > 0.05 and 0.1 < n["flight_fraction"] < 0.8
    # both feet above the ground in the flight (strictly inside it)
    for side in ("r", "l"):
        for pt in (run_mod.HEEL, run_mod.TOE):
            z = kinematics.point_position(m, fl.q, f"foot_{side}", pt)[:, 2]
            assert z.min() > -1e-7 and z[1:-1].min() > 1e-3
    # ground forces only in the stance, none in the flight
    assert fl.forces == {} and np.all(fl.grf == 0.0)
    F = st.forces["forefoot_r"]
    assert np.all(F[:, 2] >= -1e-7) and np.all(np.abs(F[:, 0]) <= 0.8 * F[:, 2] + 1e-6)
    # the foot lands and lifts off unloaded (the "F" boundary values) and is loaded between
    np.testing.assert_allclose(F[[0, -1]], 0.0, atol=1e-6)
    bw = m.total_mass * 9.81
    assert 1.5 < n["grf_peak"] < 4.5 and F[1:-1, 2].min() > 0.05 * bw
    # the stance foot stands still on the ground; the left foot stays above it
    toe = kinematics.point_position(m, st.q, "foot_r", run_mod.TOE)
    np.testing.assert_allclose(toe[:, 2], 0.0, atol=1e-7)
    np.testing.assert_allclose(toe[:, 0], toe[0, 0], atol=1e-7)
    # touchdown: the rigid impact leaves the landing forefoot at rest
    v = kinematics.point_velocity(m, st.q[0], st.qd[0], "foot_r", run_mod.TOE)
    np.testing.assert_allclose(v[[0, 2]], 0.0, atol=1e-6)
    # the vertical impulse over the half cycle carries the weight (periodic vertical momentum)
    assert n["impulse_vertical"] == pytest.approx(bw * n["half_cycle"], rel=0.05)


def test_quick_run_is_a_mirrored_half_cycle(quick):
    n, _ = quick
    r = n["result"]
    fl, st = r.phases
    q0, qf, v0, vf = fl.q[0], st.q[-1], fl.qd[0], st.qd[-1]
    # legs swapped (hip, knee, ankle of the right leg <-> the left), trunk equal but for x
    np.testing.assert_allclose(q0[3:6], qf[6:9], atol=1e-7)
    np.testing.assert_allclose(q0[6:9], qf[3:6], atol=1e-7)
    np.testing.assert_allclose(q0[1:3], qf[1:3], atol=1e-7)
    np.testing.assert_allclose(v0[3:6], vf[6:9], atol=1e-6)
    np.testing.assert_allclose(v0[1:3], vf[1:3], atol=1e-6)  # pelvis_tx is excluded
    # the unactuated trunk gets no torque
    np.testing.assert_allclose(r.tau[:, :3], 0.0, atol=1e-9)


def test_forward_simulation_follows_the_optimal_run(run_mod, quick):
    """simulate() driven by the optimal torques: the whole flight, and the start of the stance."""
    n, _ = quick
    r = n["result"]
    m = r.model
    t, q_sim, q_opt = run_mod.replay(r, m, 0)
    err = np.abs(q_sim - q_opt)
    # over the whole flight (6 nodes on the quick grid): the trunk to 1 mm / 0.002 rad, the
    # joints to 0.25 rad (the light feet turn fastest between the coarse nodes: ankles)
    assert err[:, :2].max() < 1e-3 and err[:, 2].max() < 2e-3 and err[:, 3:].max() < 0.25
    # in the flight the centre of mass is ballistic, a parabola under g, in both
    for q in (q_sim, q_opt):
        c = kinematics.center_of_mass(m, q)
        for k in (0, 2):
            coef = np.polyfit(t - t[0], c[:, k], 2)
            assert coef[0] == pytest.approx(-9.81 / 2 if k == 2 else 0.0, abs=0.1)
    # the first 30 % of the stance with the forefoot pinned to the ground: within 0.05 rad
    t, q_sim, q_opt = run_mod.replay(r, m, 1, fraction=0.3)
    assert t.size >= 3 and np.abs(q_sim - q_opt).max() < 0.05


def test_boundary_forces_are_checked(run_mod):
    m = run_mod.runner_model()
    from ahbm.optimize import ContactPoint, Phase

    c = ContactPoint("foot_r", run_mod.TOE, name="toe", axes="xz")
    with pytest.raises(DataError, match="toe:z"):
        Phase(m, contacts=[c], initial={"F": {"toe:y": 0.0}})
    with pytest.raises(DataError, match="'F'"):
        Phase(m, contacts=[c], final={"F": 0.0})
    # force values are no states: the default guess leaves the velocities alone
    ph = Phase(m, contacts=[c], initial={"F": {"toe:x": 5.0, "toe:z": 7.0}})
    X, U, _ = ph.initial_guess(np.linspace(0.0, 1.0, 3))
    np.testing.assert_allclose(X[m.nq : m.nq + 2], 0.0)
