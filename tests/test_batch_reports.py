"""`convert` from a plain script, warnings collected per file, the failure table and
the exit status of `ahbm convert`."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from ahbm.cli import main
from ahbm.errors import DataError
from ahbm.io import Trial, load_trial, write_c3d, write_trc
from ahbm.io.batch import ConversionReport, convert, process_pool

ROOT = Path(__file__).resolve().parents[1]


def _trc(path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    write_trc(Trial(points=rng.normal(size=(12, 2, 3)), point_labels=["A", "B"],
                    point_rate=100.0), path, units="m")  # fmt: skip


def _c3d_with_a_disagreement(path: Path, seed: int) -> None:
    """A C3D whose header claims 5 more frames than POINT:FRAMES and the data hold."""
    rng = np.random.default_rng(seed)
    t = Trial(points=rng.normal(size=(300, 2, 3)), point_labels=["A", "B"], point_rate=100.0)
    write_c3d(t, path)
    raw = bytearray(path.read_bytes())
    struct.pack_into("<H", raw, 8, 305)  # header word 5: last frame
    path.write_bytes(bytes(raw))


@pytest.fixture()
def mixed(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    _trc(src / "a.trc", 0)
    (src / "b.trc").write_text("PathFileType\t4\nnot a TRC file\n")
    _c3d_with_a_disagreement(src / "c.c3d", 1)
    _c3d_with_a_disagreement(src / "d.c3d", 2)
    return src


def _check(report: ConversionReport, src: Path, out: Path) -> None:
    assert [p.name for p, _ in report.converted] == ["a.trc", "c.c3d", "d.c3d"]
    assert [p.name for p, _ in report.failed] == ["b.trc"]
    assert sorted(p.name for p in report.warnings) == ["c.c3d", "d.c3d"]
    for messages in report.warnings.values():
        assert len(messages) == 1
        assert messages[0].startswith("AhbmWarning: header words 4 and 5 give frames 1-305")
    assert load_trial(out / "c.h5").n_frames == 300
    text = str(report)
    assert text.splitlines()[0] == ("converted 3, skipped 0, failed 1; 2 warnings from 2 files")
    # one table of failures, at the end
    tail = text.splitlines()[-2:]
    assert tail[0] == "failed:" and "b.trc" in tail[1] and "FileFormatError" in tail[1]
    assert "1 warning: 1 x AhbmWarning: header words 4 and 5" in text


def test_threads_collect_warnings_per_file_and_print_none(mixed, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = convert(mixed, tmp_path / "out", progress=False, jobs=2)
    assert not caught  # nothing reached the caller's warnings
    _check(report, mixed, tmp_path / "out")
    # the caller's warning settings are back after the batch
    with pytest.warns(UserWarning, match="still shown"):
        warnings.warn("still shown", UserWarning, stacklevel=1)


def test_a_process_pool_collects_warnings_too(mixed, tmp_path):
    with process_pool(2) as pool:
        report = convert(mixed, tmp_path / "out", executor=pool, progress=False)
    _check(report, mixed, tmp_path / "out")


def test_isolated_children_collect_warnings(mixed, tmp_path):
    report = convert(mixed, tmp_path / "out", progress=False, isolate=True, jobs=2)
    _check(report, mixed, tmp_path / "out")


def test_plain_script_without_main_guard(mixed, tmp_path):
    # top-level code, no `if __name__ == "__main__":` (it failed every file with
    # BrokenProcessPool and interleaved tracebacks when the default was a process pool)
    script = tmp_path / "batch_script.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from ahbm.io.batch import convert
            report = convert({str(mixed)!r}, {str(tmp_path / "out")!r}, progress=False)
            print(report)
            print("RUNS", 1)
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("RUNS 1") == 1  # the script ran once
    assert "converted 3, skipped 0, failed 1; 2 warnings from 2 files" in proc.stdout
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr


def test_cli_exit_status(mixed, tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["convert", str(tmp_path / "nothere" / "*.c3d"), "-o", out]) == 2
    err = capsys.readouterr().err
    assert "no C3D or TRC file found in" in err and "nothere" in err
    assert main(["convert", str(tmp_path / "missing.c3d"), "-o", out, "--no-progress"]) == 2
    (tmp_path / "empty").mkdir()  # a folder without C3D/TRC files
    assert main(["convert", str(tmp_path / "empty"), "-o", out, "--no-progress"]) == 2
    capsys.readouterr()
    # a failing file: 1, with the table at the end of the output
    code = main(["convert", str(mixed), "-o", out, "--jobs", "1", "--no-progress"])
    text = capsys.readouterr().out
    assert code == 1 and text.rstrip().splitlines()[-2] == "failed:"
    # everything converts (or is already there): 0; one input naming nothing: 1
    good = [str(mixed / "a.trc"), str(mixed / "c.c3d")]
    assert main(["convert", *good, "-o", str(tmp_path / "o2"), "--no-progress"]) == 0
    assert main(["convert", *good, str(mixed / "zz*.trc"), "-o", str(tmp_path / "o3"),
                 "--no-progress", "--jobs", "1"]) == 1  # fmt: skip


def test_jobs_argument(tmp_path):
    with pytest.raises(DataError, match="`jobs` must be a whole number"):
        convert([], tmp_path, jobs=0)
    with pytest.raises(DataError, match="`jobs` must be a whole number"):
        convert([], tmp_path, jobs=1.5)
    with pytest.raises(DataError, match="not both"):
        convert([], tmp_path, jobs=2, executor=object())
    assert repr(convert([], tmp_path, progress=False)) == (
        "ConversionReport(converted=0, skipped=0, failed=0, warnings=0)"
    )
