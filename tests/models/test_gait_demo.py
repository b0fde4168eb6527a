"""The gait demo: runs from nothing, writes its files, recovers the known truth."""

import numpy as np

from ahbm.gait.demo import run_gait_demo, synthetic_walking_trial
from ahbm.io import list_trials, load_trial, read_c3d


def test_gait_demo_runs_and_writes_its_outputs(tmp_path, capsys):
    assert run_gait_demo(tmp_path / "demo", quiet=True) == 0
    out = capsys.readouterr().out
    assert "gait demo passed" in out and str(tmp_path / "demo") in out
    folder = tmp_path / "demo"
    for name in ("synthetic_walk.c3d", "gait_results.h5", "gait_report.png"):
        assert (folder / name).stat().st_size > 1000
    trial = load_trial(folder / "gait_results.h5", list_trials(folder / "gait_results.h5")[0])
    assert trial.results["LKneeAngles"].shape == (trial.n_frames, 3)
    assert trial.results["gait_subject"]["mass"] == 70.0


def test_synthetic_plates_survive_the_c3d_round_trip(tmp_path):
    from ahbm.io import write_c3d

    trial, truth = synthetic_walking_trial(duration=2.6)
    write_c3d(trial, tmp_path / "s.c3d", units="m")
    back = read_c3d(tmp_path / "s.c3d")
    assert len(back.force_plates) == len(trial.force_plates) == 2
    for a, b in zip(trial.force_plates, back.force_plates, strict=True):
        np.testing.assert_allclose(b.force, a.force, atol=1e-3)
        np.testing.assert_allclose(b.cop, a.cop, atol=1e-6, equal_nan=True)
    # plate COPs lie under the feet that load them: right plate first
    on = np.isfinite(back.force_plates[0].cop[:, 0])
    assert (
        np.nanmean(back.force_plates[0].cop[on, 1])
        < 0
        < np.nanmean(back.force_plates[1].cop[np.isfinite(back.force_plates[1].cop[:, 0]), 1])
    )
    # the ground force carries the whole 70 kg on average over the loaded frames
    assert truth.params.mass == 70.0
