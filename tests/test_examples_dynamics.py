"""The dynamics example scripts run (quick mode), save their figures and hit their targets."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"ahbm_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_spring_mass_matches_closed_form(tmp_path):
    numbers = _load("spring_mass").run(tmp_path, quick=True)
    assert numbers["max_error_x1"] < 1e-6
    assert numbers["max_error_x2"] < 1e-6
    assert (tmp_path / "spring_mass.png").stat().st_size > 1000


def test_double_pendulum_energy_balance(tmp_path):
    numbers = _load("double_pendulum_3d").run(tmp_path, quick=True)
    # change of mechanical energy = work of the follower force (trapezoidal quadrature)
    assert numbers["energy_balance_error"] < 1e-4
    assert (tmp_path / "double_pendulum_3d.png").stat().st_size > 1000


def test_four_bar_residuals(tmp_path):
    numbers = _load("four_bar").run(tmp_path, quick=True)
    assert numbers["max_position_residual_projected"] < 1e-10
    assert numbers["max_velocity_residual_projected"] < 1e-10
    assert numbers["relative_energy_error_projected"] < 1e-6
    for name in ("four_bar_residuals.png", "four_bar_angles.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_triple_pendulum_contact_solvers_agree(tmp_path):
    numbers = _load("triple_pendulum_contact").run(tmp_path, quick=True)
    assert numbers["solver_max_difference_qdd"] < 1e-10
    assert numbers["solver_max_difference_lambda"] < 1e-10
    assert 0 < numbers["impact_time"] < 1.5
    assert numbers["max_floor_residual_in_contact"] < 1e-10
    assert numbers["events"].startswith("impact@") and "lift-off@" in numbers["events"]
    assert (tmp_path / "triple_pendulum_contact.png").stat().st_size > 1000


@pytest.mark.parametrize("name", ["spring_mass"])
def test_script_runs_from_the_command_line(tmp_path, name):
    out = tmp_path / "figures"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), str(out), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "max_error_x1" in proc.stdout
    assert any(out.glob("*.png"))
