"""Many trials through the gait pipeline: ahbm gait trials/*.c3d --static --output --jobs, one
combined HDF5 file and a summary table with the failures."""

import concurrent.futures as cf
import warnings

import numpy as np
import pytest

from ahbm.cli import main
from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import analyze_gait
from ahbm.gait.batch import analyze_gait_files
from ahbm.gait.demo import synthetic_static_trial, synthetic_walking_trial
from ahbm.io import list_trials, load_trial, write_c3d

ANATOMY = {"tibial_torsion": 0.2, "thigh_wand_rotation": 0.1}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("gait_batch")
    (root / "trials").mkdir()
    for k, dur in enumerate((2.6, 3.0)):
        trial, _ = synthetic_walking_trial(duration=dur, noise=0.0, gap=None, anatomy=ANATOMY)
        write_c3d(trial, root / "trials" / f"walk{k + 1}.c3d", units="m")
    broken, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    broken.point_labels[broken.point_labels.index("RKNE")] = "XKNE"
    write_c3d(broken, root / "trials" / "walk3_badlabels.c3d", units="m")
    write_c3d(synthetic_static_trial(anatomy=ANATOMY), root / "static.c3d", units="m")
    return root


def test_batch_cli_one_hdf5_and_a_table_with_the_failure(folder, capsys):
    out = folder / "results.h5"
    code = main(["gait", str(folder / "trials" / "*.c3d"), "--static", str(folder / "static.c3d"),
                 "--output", str(out), "--jobs", "2", "--quiet"])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 1  # one trial failed
    assert "walk1.c3d" in text and "walk2.c3d" in text
    assert "walk3_badlabels.c3d" in text and "FAILED" in text and "RKNE" in text
    assert "2 of 3 trial(s) analysed, 1 failed" in text
    assert sorted(list_trials(out)) == ["walk1", "walk2"]
    t = load_trial(out, "walk2")
    # the static calibration reached the stored subject
    assert t.results["gait_subject"]["Left_tibial_torsion"] == pytest.approx(0.2, abs=1e-6)
    assert t.results["LKneeAngles"].shape == (t.n_frames, 3)


def test_batch_api_matches_single_analyses(folder):
    files = sorted((folder / "trials").glob("walk[12].c3d"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        res = analyze_gait_files(
            files, static=folder / "static.c3d", executor=cf.ThreadPoolExecutor(2)
        )
        single = analyze_gait(files[0], static=folder / "static.c3d")
    assert res.n_failed == 0 and [r["ok"] for r in res.rows] == [True, True]
    assert res.rows[0]["walking_speed"] == pytest.approx(single.spatiotemporal["walking_speed"])
    assert "2 of 2 trial(s) analysed" in res.table()
    assert np.isfinite(res.rows[1]["cadence"])


def test_nothing_matched_is_an_error(tmp_path, capsys):
    assert main(["gait", str(tmp_path / "nonexist" / "*.c3d")]) == 1
    assert "no file matches" in capsys.readouterr().err
    with pytest.raises(DataError, match="`jobs` must be"):
        analyze_gait_files([str(tmp_path / "*.c3d")], jobs=0)


def test_single_trial_cli_with_static_events_and_belt_speed(folder, capsys):
    trial = folder / "trials" / "walk1.c3d"
    code = main(["gait", str(trial), "--static", str(folder / "static.c3d"), "--events",
                 "kinematic", "--belt-speed", "1.1", "--quiet"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "peak knee flexion" in out and "cadence" in out
    assert main(["gait", str(trial), "--events", "file"]) == 1
    assert "events='file'" in capsys.readouterr().err
