"""The example-model scripts run in quick mode, save small figures and sane numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import make_gallery  # noqa: E402

sys.path.pop(0)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("gallery")
    return out, make_gallery.main(out, quick=True, names=make_gallery.EXAMPLES)


@pytest.mark.parametrize("name", make_gallery.EXAMPLES)
def test_figure_written(results, name):
    out, res = results
    fig = res[name]["figure"]
    assert fig.parent == out and fig.suffix == ".png"
    assert 5_000 < fig.stat().st_size < 150_000
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_key_numbers(results):
    _, res = results
    assert res["pendulum_ID"]["id_max_error"] < 1e-12
    assert res["pendulum_ID"]["fd_max_error"] < 1e-6
    assert round(res["pendulum_ID"]["J_O"], 4) == 0.0267
    assert res["airbag_inverse"]["relative_error"] < 0.05
    assert 40 < res["head_neck"]["peak_head_rotation_deg"] < 150
    assert res["whole_body"]["peak_force_kN"] == pytest.approx(4.0)
    assert res["whole_body"]["peak_chest_g"] > res["whole_body"]["peak_head_g"] > 0
    assert res["heiman"]["nv"] == 34 and res["heiman"]["json"].exists()


def test_command_line_help():
    for name in ("make_gallery", "head_neck"):
        done = subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"), "--help"],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0 and "--quick" in done.stdout
