"""The ``ahbm gait`` command."""

import pytest
from sample_data import SHARED

from ahbm.cli import main

DATA = SHARED
GAIT_RAW = DATA / "c3d" / "gait-raw.c3d"


@pytest.mark.skipif(not GAIT_RAW.is_file(), reason="shared data folder not available")
def test_gait_command_writes_results_and_report(tmp_path, capsys):
    out, report = tmp_path / "r.h5", tmp_path / "report.pdf"
    code = main(
        [
            "gait",
            str(GAIT_RAW),
            "--mass",
            "65",
            "--output",
            str(out),
            "--report",
            str(report),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "peak knee flexion" in text and "cadence" in text
    assert out.stat().st_size > 10_000 and report.read_bytes()[:4] == b"%PDF"


@pytest.mark.skipif(not GAIT_RAW.is_file(), reason="shared data folder not available")
def test_gait_command_errors(tmp_path, capsys):
    assert main(["gait", str(GAIT_RAW), "--map", "LASI"]) == 1
    assert "NAME=LABEL" in capsys.readouterr().err
    assert main(["gait", str(GAIT_RAW), "--map", "RKNE=NOPE", "--mass", "65"]) == 1
    err = capsys.readouterr().err
    assert "RKNE" in err and "--map" in err
    assert main(["gait", str(tmp_path / "missing.c3d")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["gait", str(GAIT_RAW), "--report", str(tmp_path / "r.txt"), "--mass", "65"]) == 1
    assert ".png" in capsys.readouterr().err
    assert main(["gait", str(GAIT_RAW), "--output", str(tmp_path / "no" / "r.h5")]) == 1
    assert "folder does not exist" in capsys.readouterr().err


def test_gait_command_is_registered():
    with pytest.raises(SystemExit) as exc:
        main(["gait", "--help"])
    assert exc.value.code == 0


@pytest.mark.skipif(not GAIT_RAW.is_file(), reason="shared data folder not available")
def test_gait_command_moment_frame(tmp_path):
    """--moment-frame distal reaches the settings and changes the frontal hip moments."""
    import numpy as np

    from ahbm.io import load_trial

    out = {}
    for frame in ("jcs", "distal"):
        path = tmp_path / f"{frame}.h5"
        args = ["gait", str(GAIT_RAW), "--mass", "65", "--output", str(path), "--quiet"]
        assert main(args + ["--moment-frame", frame]) == 0
        res = load_trial(path).results
        text = res["gait_settings"]["moment_convention"]
        assert ("distal segment axes" in text) == (frame == "distal")
        out[frame] = np.asarray(res["LHipMoment"])
    a, b = out["jcs"], out["distal"]
    ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    assert ok.sum() > 20
    # the sagittal components agree closely, the projections are not the same
    assert np.corrcoef(a[ok, 0], b[ok, 0])[0, 1] > 0.99
    assert np.abs(a[ok] - b[ok]).max() > 1e-3
    with pytest.raises(SystemExit) as err:  # argparse: not one of the choices
        main(["gait", str(GAIT_RAW), "--moment-frame", "lab"])
    assert err.value.code == 2
