"""The `ahbm convert` and `ahbm info` subcommands."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sample_data import SHARED

from ahbm.cli import COMMANDS, main
from ahbm.io import read_trc, write_trc
from ahbm.io.hdf5 import list_trials, load_trial, save_trial
from ahbm.io.trial import Event, Trial
from ahbm.opensim.storage import write_mot

DATA = SHARED


def _trial(seed=0, n_frames=12):
    rng = np.random.default_rng(seed)
    return Trial(
        points=rng.normal(size=(n_frames, 2, 3)),
        point_labels=["HEEL", "TOE"],
        point_rate=50.0,
        events=[Event("Foot Strike", 0.1, "Left")],
    )


def test_commands_registered():
    assert {"convert", "info"} <= set(COMMANDS)


def test_convert_folder_with_a_bad_file(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    write_trc(_trial(1), src / "one.trc")
    write_trc(_trial(2), src / "two.trc")
    (src / "bad.trc").write_text("garbage")
    status = main(
        ["convert", str(src), "-o", str(tmp_path / "out"), "--jobs", "1", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert status == 1  # one file failed
    assert "converted 2, skipped 0, failed 1" in out and "bad.trc" in out
    assert list_trials(tmp_path / "out" / "one.h5") == ["one"]
    np.testing.assert_allclose(
        load_trial(tmp_path / "out" / "two.h5").points, read_trc(src / "two.trc").points
    )
    # a second run skips what exists and succeeds
    status = main(["convert", str(src / "one.trc"), "-o", str(tmp_path / "out"), "--no-progress"])
    assert status == 0
    assert "skipped 1" in capsys.readouterr().out


def test_convert_rejects_bad_jobs(tmp_path, capsys):
    status = main(["convert", str(tmp_path), "-o", str(tmp_path / "o"), "--jobs", "0"])
    assert status == 1
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_info_trc_hdf5_and_mot(tmp_path, capsys):
    write_trc(_trial(3), tmp_path / "w.trc")
    assert main(["info", str(tmp_path / "w.trc")]) == 0
    out = capsys.readouterr().out
    assert "2 markers, 12 frames @ 50 Hz" in out and "HEEL, TOE" in out

    save_trial(_trial(4), tmp_path / "s.h5", name="first")
    save_trial(_trial(5, n_frames=7), tmp_path / "s.h5", name="second")
    assert main(["info", str(tmp_path / "s.h5")]) == 0
    out = capsys.readouterr().out
    assert "2 trial(s)" in out and "[first]" in out and "[second]" in out
    assert "7 frames" in out and "Left Foot Strike at 0.1000 s" in out
    assert main(["info", str(tmp_path / "s.h5"), "--name", "second"]) == 0
    assert "[first]" not in capsys.readouterr().out

    df = pd.DataFrame({"knee_angle_r": [0.1, 0.2]}, index=pd.Index([0.0, 0.01], name="time"))
    write_mot(df, tmp_path / "k.mot", in_degrees=True)
    assert main(["info", str(tmp_path / "k.mot")]) == 0
    out = capsys.readouterr().out
    assert "rows: 2" in out and "knee_angle_r" in out and "in degrees: yes" in out


def test_info_errors(tmp_path, capsys):
    (tmp_path / "x.xyz").write_text("?")
    assert main(["info", str(tmp_path / "x.xyz")]) == 1
    assert "unknown file type" in capsys.readouterr().err
    (tmp_path / "x.h5").write_text("not hdf5")
    assert main(["info", str(tmp_path / "x.h5")]) == 1
    assert "not an HDF5 file" in capsys.readouterr().err


@pytest.mark.skipif(not (DATA / "c3d").is_dir(), reason="shared C3D data folder is absent")
def test_info_c3d(capsys):
    pytest.importorskip("ahbm.io.c3d")
    assert main(["info", str(DATA / "c3d" / "gait-raw.c3d")]) == 0
    out = capsys.readouterr().out
    assert "27 markers, 142 frames @ 50 Hz" in out
    assert "force plates: 2" in out


def test_console_entry_point_with_process_pool(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(2):
        write_trc(_trial(10 + i), src / f"t{i}.trc")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ahbm",
            "convert",
            str(src / "*.trc"),
            "-o",
            str(tmp_path / "o"),
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "converted 2" in proc.stdout
    assert "ahbm convert" in proc.stderr  # the tqdm progress bar
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["t0.h5", "t1.h5"]
