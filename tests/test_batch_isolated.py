"""Batch conversion of untrusted archives: ``convert(..., isolate=True)``.

Each file is converted in a child process of its own, so a file whose damage
crashes or hangs the reading process fails alone and the batch goes on. The
crash and the hang are produced by a ``sitecustomize`` module on the children's
``PYTHONPATH`` that makes reading one particular file abort the process (as a
segfault in native code would) or sleep.
"""

from __future__ import annotations

import os
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.io import Trial, load_trial, write_trc
from ahbm.io.batch import convert


@pytest.fixture
def archive(tmp_path, monkeypatch):
    src = tmp_path / "in"
    src.mkdir()
    rng = np.random.default_rng(3)
    for name in ("a", "crash", "hang", "z"):
        trial = Trial(points=rng.normal(size=(12, 2, 3)), point_labels=["A", "B"], point_rate=50.0)
        write_trc(trial, src / f"{name}.trc", units="m")
    (src / "bad.trc").write_text("PathFileType\t4\nnot a TRC file\n")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import os, time
            import ahbm.io.readers as readers
            _read = readers.read_trial
            def read_trial(path):
                name = os.path.basename(str(path))
                if name == "crash.trc":
                    os.abort()
                if name == "hang.trc":
                    time.sleep(120)
                return _read(path)
            readers.read_trial = read_trial
            import ahbm.io.batch
            ahbm.io.batch.read_trial = read_trial
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(site) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return src


def test_isolated_conversion_survives_a_crash_and_a_hang(archive, tmp_path):
    out = tmp_path / "out"
    with ThreadPoolExecutor(2) as ex:
        report = convert(archive, out, executor=ex, progress=False, isolate=True, timeout=8)
    converted = sorted(p.name for p, _ in report.converted)
    failed = {p.name: why for p, why in report.failed}
    assert converted == ["a.trc", "z.trc"]
    assert set(failed) == {"bad.trc", "crash.trc", "hang.trc"}
    assert "killed by SIGABRT" in failed["crash.trc"] and "crash.trc" in failed["crash.trc"]
    assert "did not finish within 8 s" in failed["hang.trc"]
    assert failed["bad.trc"].startswith("FileFormatError")  # the reader's own error, as usual
    assert load_trial(out / "a.h5").points.shape == (12, 2, 3)
    assert sorted(p.name for p in out.iterdir()) == ["a.h5", "z.h5"]  # nothing half-written


def test_timeout_needs_isolate(tmp_path):
    with pytest.raises(DataError, match="isolate=True"):
        convert([], tmp_path, progress=False, timeout=5)
    with pytest.raises(DataError, match="timeout"):
        convert([], tmp_path, progress=False, isolate=True, timeout=-1)


def test_ahbm_convert_isolate_option(tmp_path):
    from ahbm.cli import main

    src = tmp_path / "in"
    src.mkdir()
    trial = Trial(points=np.ones((5, 1, 3)), point_labels=["A"], point_rate=50.0)
    write_trc(trial, src / "one.trc", units="m")
    (src / "bad.trc").write_text("not a TRC file\n")
    code = main(["convert", str(src), "-o", str(tmp_path / "out"), "--isolate", "--no-progress"])
    assert code == 1  # bad.trc failed, one.trc converted
    assert load_trial(tmp_path / "out" / "one.h5").points.shape == (5, 1, 3)
