"""ahbm gait on many trials through a Dask cluster's executor, and the console command's exit
status when nothing matches."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ahbm.errors import AhbmWarning
from ahbm.gait import analyze_gait
from ahbm.gait.batch import analyze_gait_files
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.io import list_trials, load_trial, write_c3d

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    root = tmp_path_factory.mktemp("gait_dask")
    for k, dur in enumerate((2.6, 3.0)):
        trial, _ = synthetic_walking_trial(duration=dur, noise=0.0, gap=None)
        write_c3d(trial, root / f"walk{k + 1}.c3d", units="m")
    broken, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    broken.point_labels[broken.point_labels.index("LANK")] = "XANK"
    write_c3d(broken, root / "walk3_badlabels.c3d", units="m")
    return root


def test_many_trials_on_a_dask_local_cluster(trials, tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (test extra)")
    out = tmp_path / "results.h5"
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        res = analyze_gait_files(
            [str(trials / "*.c3d")], out, executor=client.get_executor(), mass=75.0
        )
    assert [Path(r["trial"]).name for r in res.rows] == [
        "walk1.c3d", "walk2.c3d", "walk3_badlabels.c3d",
    ]  # fmt: skip
    assert [r["ok"] for r in res.rows] == [True, True, False]
    assert "LANK" in res.rows[2]["error"] and res.n_failed == 1
    table = res.table()
    assert "2 of 3 trial(s) analysed, 1 failed" in table and "FAILED" in table
    # the workers' results are those of the same analysis in this process, stored in one file
    assert sorted(list_trials(out)) == ["walk1", "walk2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        single = analyze_gait(trials / "walk2.c3d", mass=75.0)
    stored = load_trial(out, "walk2").results
    np.testing.assert_allclose(stored["LKneeAngles"], single.angles["LKneeAngles"], rtol=1e-12)
    np.testing.assert_allclose(stored["RHipMoment"], single.moments["RHipMoment"], rtol=1e-12)
    assert res.rows[1]["cadence"] == pytest.approx(single.spatiotemporal["cadence"])
    # each file's warnings were collected on the worker, not printed
    assert all(isinstance(w, str) for r in res.rows for w in r["warnings"])


def test_console_command_exits_nonzero_when_no_trial_matches(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "ahbm", "gait", "nonexist/*.c3d"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode != 0
    assert "no file matches 'nonexist/*.c3d'" in proc.stderr
    assert proc.stdout == ""
