"""The optimal-control example scripts run (quick mode), save figures and hit their targets."""

import importlib.util
from pathlib import Path

import pytest
from sample_data import SHARED

pytest.importorskip("casadi")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = SHARED / "opensim"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"ahbm_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pendulum_predictive(tmp_path):
    numbers = _load("pendulum_predictive").run(tmp_path, quick=True)
    for (case, method), v in numbers["effort"].items():
        assert v["success"], (case, method)
        assert v["cost"] <= v["cost_applied"] + 1e-9  # the applied torque is feasible
        if case == 1:
            assert v["rms_vs_applied"] < 1e-3, method
    effort_gap = numbers["effort"][(2, "Hermite-Simpson")]["rms_vs_applied"]
    for name, v in numbers["objectives"].items():
        assert v["rms_vs_applied"] > 5 * effort_gap, name
    assert (tmp_path / "pendulum_predictive.png").stat().st_size > 1000


@pytest.mark.skipif(not DATA.exists(), reason="the shared walking trial is absent")
def test_tracking_walk_reproduces_inverse_dynamics(tmp_path):
    numbers = _load("tracking_walk").run(tmp_path, quick=True)
    assert numbers["success"], numbers["status"]
    for name, v in numbers["moments"].items():
        assert v["rms_of_range"] < 0.10, name
    assert (tmp_path / "tracking_walk.png").stat().st_size > 1000


def test_minimum_jerk_reach_is_flash_hogan(tmp_path):
    n = _load("minimum_jerk_reach").run(tmp_path, quick=True)
    assert n["status"] == "Solve_Succeeded"
    # the B-spline optimum is the closed-form quintic (Flash & Hogan 1985)
    assert n["max_error_q"] < 1e-6
    assert n["max_error_qd"] < 1e-6
    assert n["max_error_qdd"] < 1e-5
    assert n["max_error_qddd"] < 1e-4
    # the minimum-torque optimum is cheaper in torque than the (feasible) minimum-jerk motion
    assert n["torque_success"]
    assert n["torque_cost"] < n["maj_torque_cost"]
    assert (tmp_path / "minimum_jerk_reach.png").stat().st_size > 1000
