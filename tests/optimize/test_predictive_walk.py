"""The predictive 2-D walk (examples/predictive_walking_2d.py) at a small size, and its pieces."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")

from ahbm import kinematics  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "predictive_walking_2d.py"


@pytest.fixture(scope="module")
def walk():
    spec = importlib.util.spec_from_file_location("ahbm_example_predictive_walking_2d", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def quick(walk, tmp_path_factory):
    out = tmp_path_factory.mktemp("walk")
    return walk.run(out, quick=True), out


def test_walker_model_geometry(walk):
    m = walk.walker_model()
    assert m.nq == 9 and abs(m.total_mass - 70.0) < 1e-9
    q = np.zeros(9)
    q[0], q[1] = 0.3, walk.LEG
    # standing: heels and toes on the ground below the hip
    for side in ("r", "l"):
        np.testing.assert_allclose(kinematics.point_position(m, q, f"foot_{side}", walk.HEEL),
                                   [0.25, 0.0, 0.0], atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(kinematics.point_position(m, q, f"foot_{side}", walk.TOE),
                                   [0.45, 0.0, 0.0], atol=1e-12)  # fmt: skip
    q[3] = 0.5  # hip flexion swings the right foot forward
    assert kinematics.point_position(m, q, "foot_r")[0] > 0.3 + 0.3


def test_quick_walk_meets_its_targets(quick):
    n, out = quick
    r = n["result"]
    assert n["success"], r.summary()
    assert n["violation"] < 1e-6
    assert abs(n["speed"] - n["target_speed"]) < 1e-6 and n["speed"] > 0
    assert 0.5 < n["stance_fraction"] < 0.75  # human walking: about 0.6
    assert n["double_humped"]
    assert 0.8 < n["grf_peak_1"] < 2.0 and 0.8 < n["grf_peak_2"] < 2.0
    assert (out / "predictive_walk.png").stat().st_size > 5000


def test_quick_walk_physics(walk, quick):
    """Contacts hold, the feet stay above the ground, symmetry and speed hold, momentum balances."""
    n, _ = quick
    r = n["result"]
    m = r.model
    ss, ds = r.phases
    heel = kinematics.point_position(m, ss.q, "foot_r", walk.HEEL)
    toe = kinematics.point_position(m, ss.q, "foot_r", walk.TOE)
    np.testing.assert_allclose(heel[:, 2], 0.0, atol=1e-7)
    np.testing.assert_allclose(toe[:, 2], 0.0, atol=1e-7)
    np.testing.assert_allclose(heel[:, 0], heel[0, 0], atol=1e-7)  # no slip
    swing = kinematics.point_position(m, ss.q, "foot_l", walk.TOE)
    assert swing[:, 2].min() > -1e-7
    # friction cone
    for p in (ss, ds):
        for F in p.forces.values():
            assert np.all(F[:, 2] >= -1e-7) and np.all(np.abs(F[:, 0]) <= 0.8 * F[:, 2] + 1e-6)
    # mirrored ends: hips swapped, trunk equal
    q0, qf = ss.q[0], ds.q[-1]
    np.testing.assert_allclose(q0[[3, 4, 5]], qf[[6, 7, 8]], atol=1e-7)
    np.testing.assert_allclose(q0[[1, 2]], qf[[1, 2]], atol=1e-7)
    # the centre of pressure of the contact forces is the ZMP of the whole-body dynamics
    # (Chung eqs 4.8-4.10, ahbm.dynamics.zmp), node by node
    from ahbm import dynamics

    for p in (ss, ds):
        x = np.zeros(p.t.size)
        for label, F in p.forces.items():
            body, point = ("foot_" + label[-1], walk.HEEL if "heel" in label else walk.TOE)
            x += kinematics.point_position(m, p.q, body, point)[:, 0] * F[:, 2]
        cop = x / p.grf[:, 2]
        d = dynamics.zmp(m, p.q, p.qd, p.qdd, threshold=-np.inf)
        np.testing.assert_allclose(d[:, 0], cop, atol=1e-6)
    # the whole cycle: the mirrored second half starts where the first ends (no jump)
    t, qc = walk.full_cycle(r, n["problem"], rate=200.0)
    assert np.all(np.diff(t) > 0) and abs(t[-1] - 2 * r.duration) < 0.01
    assert np.abs(np.diff(qc[:, 3:], axis=0)).max() < 0.1  # 5 ms steps: smooth joint angles
    # the unactuated trunk: its generalized forces are zero (torques only at the joints)
    np.testing.assert_allclose(r.tau[:, :3], 0.0, atol=1e-9)
    # whole-body momentum: the ground forces equal m (a_com - g) at the nodes (Newton)
    com_acc = np.gradient(np.gradient(kinematics.center_of_mass(m, ss.q)[:, 2], ss.t), ss.t)
    fz = ss.grf[:, 2]
    inner = slice(2, -2)
    np.testing.assert_allclose(fz[inner], m.total_mass * (com_acc[inner] + 9.81),
                               rtol=0.15, atol=0.05 * 70 * 9.81)  # fmt: skip


def test_walk_saves_to_hdf5_and_draws_in_the_stick_viewer(quick, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import stick_view
    from ahbm.io import load_trial, save_trial, trial_from_solution

    r = quick[0]["result"]
    trial = trial_from_solution(r, rate=100.0)
    assert trial.point_labels[:1] == ["head"] and trial.points.shape[1:] == (11, 3)
    save_trial(trial, tmp_path / "walk.h5")
    back = load_trial(tmp_path / "walk.h5")
    np.testing.assert_allclose(back.results["q"], trial.results["q"])
    np.testing.assert_allclose(back.results["grf"][:, 2].max(), r.grf[:, 2].max(), rtol=0.05)
    assert back.parameters["OPTIMAL_CONTROL"]["COORDINATES"] == r.coordinate_names
    assert set(back.results["cost_terms"]) == set(r.cost_terms)
    viewer = stick_view(model=r.model, q=trial.results["q"], rate=100.0)
    assert viewer.points.shape[0] == trial.points.shape[0]
    plt.close(viewer.fig)
