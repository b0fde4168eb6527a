"""Batch conversion of C3D/TRC files to HDF5 trial stores."""

from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import DataError, FileFormatError
from ahbm.io import read_trc, write_trc
from ahbm.io.batch import ConversionReport, convert
from ahbm.io.hdf5 import list_trials, load_trial
from ahbm.io.readers import read_trial
from ahbm.io.trial import Trial

DATA = SHARED

sys.path.insert(0, str(Path(__file__).resolve().parent / "io"))
from io_helpers import assert_trials_equal  # noqa: E402


def _write_trcs(folder: Path, names, seed=0):
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        pts = rng.normal(size=(15 + i, 3, 3))
        pts[2, 1] = np.nan
        trial = Trial(points=pts, point_labels=["A", "B", "C"], point_rate=100.0)
        write_trc(trial, folder / name, units="m")


def _corrupt(path: Path):
    path.write_text("PathFileType\t4\nthis is not\na TRC file\n")


@pytest.fixture()
def batch_inputs(tmp_path):
    src = tmp_path / "in"
    _write_trcs(src, ["a.trc", "c.trc", "d.trc"])
    _corrupt(src / "b.trc")  # sorted order: a, b (bad), c, d
    (src / "notes.txt").write_text("ignored in folder mode")
    return src


def test_failing_file_in_the_middle_does_not_stop_the_batch(batch_inputs, tmp_path):
    out = tmp_path / "out"
    with ThreadPoolExecutor(2) as ex:
        report = convert(batch_inputs, out, executor=ex, progress=False)
    assert isinstance(report, ConversionReport)
    assert [p.name for p, _ in report.converted] == ["a.trc", "c.trc", "d.trc"]
    assert [p.name for p, _ in report.failed] == ["b.trc"]
    assert "FileFormatError" in report.failed[0][1] and "b.trc" in report.failed[0][1]
    assert not report.ok
    assert sorted(os.listdir(out)) == ["a.h5", "c.h5", "d.h5"]  # no partial/temp files
    for name in ("a", "c", "d"):
        assert list_trials(out / f"{name}.h5") == [name]
        assert_trials_equal(read_trc(batch_inputs / f"{name}.trc"), load_trial(out / f"{name}.h5"))
    assert "failed 1" in str(report)


def test_on_error_raise(batch_inputs, tmp_path):
    with ThreadPoolExecutor(1) as ex, pytest.raises(FileFormatError, match="b.trc"):
        convert(batch_inputs, tmp_path / "out", executor=ex, on_error="raise", progress=False)


def test_skips_existing_unsupported_missing_and_duplicate(batch_inputs, tmp_path):
    out = tmp_path / "out"
    other = tmp_path / "other"
    _write_trcs(other, ["a.trc"], seed=5)
    with ThreadPoolExecutor(2) as ex:
        convert([batch_inputs / "a.trc"], out, executor=ex, progress=False)
        report = convert(
            [
                batch_inputs / "a.trc",
                batch_inputs / "notes.txt",
                tmp_path / "absent.trc",
                str(batch_inputs / "[cd].trc"),
                other / "a.trc",
            ],
            out,
            executor=ex,
            progress=False,
        )
    reasons = {(p.parent.name, p.name): why for p, why in report.skipped}
    assert len(reasons) == 4
    assert "exists" in reasons[("in", "a.trc")]
    assert "unsupported" in reasons[("in", "notes.txt")]
    assert "no such file" in reasons[(tmp_path.name, "absent.trc")]
    assert "already used" in reasons[("other", "a.trc")]
    assert [p.name for p, _ in report.converted] == ["c.trc", "d.trc"]
    assert report.ok

    with ThreadPoolExecutor(1) as ex:  # overwrite replaces the trial in place
        again = convert([other / "a.trc"], out, executor=ex, progress=False, overwrite=True)
    assert len(again.converted) == 1
    np.testing.assert_array_equal(load_trial(out / "a.h5").points, read_trc(other / "a.trc").points)


def test_unwritable_output_is_reported(batch_inputs, tmp_path):
    out = tmp_path / "out"
    (out / "a.h5").mkdir(parents=True)  # a folder where the output file should go
    with ThreadPoolExecutor(1) as ex:
        report = convert([batch_inputs / "a.trc"], out, executor=ex, progress=False, overwrite=True)
    assert [p.name for p, _ in report.failed] == ["a.trc"]


def test_default_process_pool(tmp_path):
    src = tmp_path / "in"
    _write_trcs(src, ["x.trc", "y.trc"])
    _corrupt(src / "z.trc")
    report = convert(str(src / "*.trc"), tmp_path / "out", progress=True)
    assert [p.name for p, _ in report.converted] == ["x.trc", "y.trc"]
    assert [p.name for p, _ in report.failed] == ["z.trc"]


@pytest.mark.skipif(not (DATA / "c3d").is_dir(), reason="shared C3D data folder is absent")
@pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")  # the sample's odd parameter
def test_c3d_and_trc_mixed(tmp_path):
    pytest.importorskip("ahbm.io.c3d")
    src = tmp_path / "in"
    _write_trcs(src, ["walk.trc"])
    shutil.copy(DATA / "c3d" / "TYPE-2.C3D", src / "TYPE-2.C3D")
    broken = src / "broken.c3d"
    broken.write_bytes((DATA / "c3d" / "TYPE-2.C3D").read_bytes()[:700])  # truncated
    with ThreadPoolExecutor(2) as ex:
        report = convert(src, tmp_path / "out", executor=ex, progress=False)
    assert sorted(p.name for p, _ in report.converted) == ["TYPE-2.C3D", "walk.trc"]
    assert [p.name for p, _ in report.failed] == ["broken.c3d"]
    back = load_trial(tmp_path / "out" / "TYPE-2.h5")
    assert_trials_equal(read_trial(src / "TYPE-2.C3D"), back)


def test_dask_distributed_executor(batch_inputs, tmp_path):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        report = convert(
            batch_inputs, tmp_path / "out", executor=client.get_executor(), progress=False
        )
    assert [p.name for p, _ in report.converted] == ["a.trc", "c.trc", "d.trc"]
    assert [p.name for p, _ in report.failed] == ["b.trc"]


def test_bad_arguments(tmp_path):
    with pytest.raises(DataError, match="on_error"):
        convert([], tmp_path, on_error="ignore")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="not a folder"):
        convert([], tmp_path / "file")
    with pytest.raises(DataError, match="unsupported file type"):
        read_trial(tmp_path / "file")
