"""The nonholonomic example scripts (rolling disk, knife edge) run in quick mode and hit their
closed forms."""

import importlib.util
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"ahbm_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rolling_disk_example(tmp_path):
    numbers = _load("rolling_disk").run(tmp_path, quick=True)
    assert numbers["steady_max_closed_form_error"] < 1e-8
    assert numbers["steady_max_velocity_residual"] < 1e-10
    assert numbers["steady_energy_drift"] < 1e-8
    assert numbers["wobble_max_velocity_residual"] < 1e-10
    assert numbers["wobble_energy_drift"] < 1e-8
    assert numbers["wobble_lean_range"] > 0.1
    for name in ("rolling_disk_paths.png", "rolling_disk_residuals.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_knife_edge_example_from_the_command_line(tmp_path):
    out = tmp_path / "figures"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "knife_edge.py"), str(out), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    numbers = dict(line.split(": ") for line in proc.stdout.splitlines())
    for key in ("circle_max_closed_form_error", "sleigh_max_speed_error",
                "incline_max_closed_form_error", "max_energy_drift"):  # fmt: skip
        assert float(numbers[key]) < 1e-8, key
    assert float(numbers["circle_lateral_force_error"]) < 1e-8
    assert float(numbers["max_velocity_residual"]) < 1e-10
    assert (out / "knife_edge.png").stat().st_size > 1000
