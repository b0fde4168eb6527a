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


@pytest.mark.skipif(not GAIT_RAW.is_file(), reason="shared data folder not available")
def test_gait_command_compat_and_subject_angles(tmp_path, capsys):
    """--compat and the Plug-in Gait subject angles (deg on the command line) reach the run."""
    import numpy as np

    from ahbm.io import load_trial

    path = tmp_path / "pig.h5"
    args = ["gait", str(GAIT_RAW), "--mass", "65", "--output", str(path), "--compat",
            "plug-in-gait", "--thigh-rotation", "10,-5", "--tibial-torsion", "3"]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    res = load_trial(path).results
    assert res["gait_settings"]["compat"] == "plug-in-gait"
    assert "distal segment axes" in res["gait_settings"]["moment_convention"]
    subject = res["gait_subject"]
    assert subject["Left_thigh_rotation"] == pytest.approx(np.radians(10.0), abs=1e-12)
    assert subject["Right_thigh_rotation"] == pytest.approx(np.radians(-5.0), abs=1e-12)
    assert subject["Left_tibial_torsion"] == pytest.approx(np.radians(3.0), abs=1e-12)
    assert subject["Right_tibial_torsion"] == pytest.approx(np.radians(3.0), abs=1e-12)
    # the failed checks: one line each with its fix, not repeated in one long warning
    flags = list(res["gait_flags"])
    checks = [line for line in text.splitlines() if line.startswith("CHECK FAILED: ")]
    assert flags != ["none"] and [c[len("CHECK FAILED: ") :] for c in checks] == flags
    assert all(": " in c[14:] and ("run with" in c or "place" in c) for c in checks)
    warning = [line for line in text.splitlines() if "gait check(s) failed" in line]
    assert warning == [f"warning: {GAIT_RAW}: {len(flags)} gait check(s) failed, each listed "
                       "below as CHECK FAILED"]  # fmt: skip


def test_gait_command_subject_angle_values(monkeypatch, capsys):
    """Degrees per side or for both sides; a bad value names the option and the form."""
    import math

    import ahbm.gait
    from ahbm.cli.gait import _per_side_degrees

    assert _per_side_degrees(None, "--x") is None
    assert _per_side_degrees("-12.5", "--x") == pytest.approx(math.radians(-12.5))
    both = _per_side_degrees(" 4, -8 ", "--x")
    assert both == pytest.approx({"Left": math.radians(4), "Right": math.radians(-8)})

    def fake_load(path, what):  # stop before reading a file: the settings are what we test
        raise SystemError("stop")

    monkeypatch.setattr(ahbm.gait, "load_gait_trial", fake_load)
    for bad in ("abc", "1,2,3", "nan", "5,"):
        assert main(["gait", "t.c3d", "--shank-rotation=" + bad]) == 1
        err = capsys.readouterr().err
        assert "--shank-rotation" in err and "LEFT,RIGHT" in err and repr(bad) in err
    with pytest.raises(SystemExit) as exc:  # argparse: not one of the choices
        main(["gait", "t.c3d", "--compat", "vicon"])
    assert exc.value.code == 2
    capsys.readouterr()
    from ahbm.gait.settings import GaitSettings

    made = []
    real = GaitSettings.__post_init__

    def record(self):
        real(self)
        made.append(self)

    monkeypatch.setattr(GaitSettings, "__post_init__", record)
    with pytest.raises(SystemError):
        main(["gait", "t.c3d", "--shank-rotation=-7,2", "--compat", "plug-in-gait"])
    seen = made[-1]
    assert seen.compat == "plug-in-gait" and seen.thigh_rotation is None
    assert seen.shank_rotation == pytest.approx(
        {"Left": math.radians(-7), "Right": math.radians(2)}
    )
