"""The muscle-driven tracking example (examples/muscle_tracking_arm.py), at its quick size."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("casadi")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load():
    spec = importlib.util.spec_from_file_location(
        "ahbm_example_muscle_tracking_arm", EXAMPLES / "muscle_tracking_arm.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("method", ["hermite-simpson", "trapezoidal"])
def test_muscle_tracking_arm_follows_the_reach(tmp_path, method):
    out = tmp_path if method == "hermite-simpson" else None
    n = _load().run(out, quick=True, method=method)
    assert n["success"], n["status"]
    assert n["max_tracking_error_deg"] < 0.5  # of a 63 deg elbow excursion
    lo, hi = n["activation_range"]
    assert lo >= -1e-8 and hi <= 1 + 1e-8
    assert 0.2 < hi < 0.6  # the biceps carry the forearm
    assert n["max_reserve_Nm"] < 0.2 < n["max_muscle_torque_Nm"]
    # joint torques = R^T F + reserves = inverse dynamics of the motion (numeric muscles)
    assert n["torque_vs_inverse_dynamics_Nm"] < 1e-9
    assert n["torque_vs_numeric_muscles_Nm"] < 1e-9
    # static optimization of the same motion shares the load alike
    assert n["so_failed_frames"] == 0
    assert n["activation_rms_difference_vs_so"] < 0.01
    assert n["activation_max_difference_vs_so"] < 0.03
    for name, peak in n["peak_activation_so"].items():
        assert n["peak_activation"][name] == pytest.approx(peak, abs=0.02), name
    if out is not None:
        assert (tmp_path / "muscle_tracking_arm.png").stat().st_size > 5000
