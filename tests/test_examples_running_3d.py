"""The 3-D run's set-up (examples/predictive_running_3d.py): its guess and its held coordinates.

The 3-D solve itself takes minutes (docs/optimize.md, "In 3-D: a partial
attempt") and is not run here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")

from ahbm import kinematics  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "predictive_running_3d.py"


@pytest.fixture(scope="module")
def run_mod():
    spec = importlib.util.spec_from_file_location("ahbm_example_predictive_running_3d", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def guess(run_mod):
    from ahbm.models import heiman_model

    model = heiman_model(root="free_euler")
    phases, planar = run_mod.sagittal_guess(model, 3.0)
    return model, phases, planar


def test_sagittal_guess_puts_heimans_feet_where_the_planar_runner_has_them(run_mod, guess):
    model, phases, planar = guess
    assert planar["success"] and planar["flight_fraction"] > 0.15
    pm = planar["result"].model
    for ph3, ph2 in zip(phases, planar["result"].phases, strict=True):
        np.testing.assert_array_equal(ph3["t"], ph2.t)
        for side in ("r", "l"):
            for p3, p2 in ((run_mod.HEEL, run_mod._running_2d().HEEL),
                           (run_mod.TOE, run_mod._running_2d().TOE)):  # fmt: skip
                a = kinematics.point_position(model, ph3["q"], f"foot_{side}", p3)
                b = kinematics.point_position(pm, ph2.q, f"foot_{side}", p2)
                # the same sagittal posture: forward and vertical positions agree to the
                # models' segment differences (a sign error would move a foot by decimetres)
                assert np.abs(a[:, [0, 2]] - b[:, [0, 2]]).max() < 0.05
                assert np.abs(a[:, 1]).max() < 0.12  # HeiMan's feet beside the midline
    # the velocities are those of the mapped coordinates (finite differences of q)
    q, qd, t = phases[1]["q"], phases[1]["qd"], phases[1]["t"]
    mid = (q[2:] - q[:-2]) / (t[2:] - t[:-2])[:, None]
    assert np.abs(mid - qd[1:-1]).max() < 0.25 * np.abs(qd).max()
    # the planar torques on HeiMan's joints, the root unactuated
    np.testing.assert_array_equal(phases[1]["tau"][:, :6][:, [1, 4, 5]], 0.0)


def test_held_coordinates_are_bounded_and_cost(run_mod, guess):
    model = guess[0]
    bounds = run_mod.coordinate_bounds(model)
    for n in run_mod.LOCKED:
        assert bounds[n] == (-run_mod.LOCK_RANGE, run_mod.LOCK_RANGE)
    assert bounds["knee_r"] == (0.0, 2.2) and bounds["hip_r_rz"] == (-0.8, 0.8)
    problem = run_mod.running_problem(model, nodes=(3, 3))
    for ph in problem.phases:
        assert "neutral_pose" in [o.name for o in ph.objectives]
        i = list(model.coordinate_names).index("head_rx")
        assert ph.q_bounds[0][i] == -run_mod.LOCK_RANGE and ph.q_bounds[1][i] == run_mod.LOCK_RANGE
