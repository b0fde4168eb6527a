"""Temporary files of the atomic writers: owner in the name, cleaned on errors, SIGTERM, restarts.

The kill tests run a writer in a child process that rewrites one store over
and over, and kill it (SIGKILL or SIGTERM) at random moments while it writes:
the store must always be one of the two complete versions, SIGTERM must leave
no temporary file, and the next write after a SIGKILL must remove the
temporaries the killed writer left.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ahbm._internal.files import TEMP_MARKER, _host_tag, atomic_path
from ahbm.errors import DataError
from ahbm.io import Trial, cleanup_temporaries, load_trial, save_trial

NAME = re.compile(r"^\.store\." + TEMP_MARKER + r"-[0-9a-f]{8}-(?P<pid>\d+)-[a-z0-9_]+\.tmp\.h5$")


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _fake_temporary(folder: Path, pid: int, *, stem="store", suffix=".h5", host=None) -> Path:
    path = folder / f".{stem}.{TEMP_MARKER}-{host or _host_tag()}-{pid}-abc123_x.tmp{suffix}"
    path.write_bytes(b"left behind by a killed writer")
    return path


def test_temporary_names_identify_the_owner(tmp_path):
    with atomic_path(tmp_path / "store.h5") as tmp:
        match = NAME.match(tmp.name)
        assert match and int(match["pid"]) == os.getpid(), tmp.name
        assert tmp.parent == tmp_path
        tmp.write_bytes(b"x")
    assert os.listdir(tmp_path) == ["store.h5"]


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(3)])
def test_any_exception_removes_the_temporary(tmp_path, exc):
    (tmp_path / "store.h5").write_bytes(b"old")
    with pytest.raises(type(exc)):
        with atomic_path(tmp_path / "store.h5") as tmp:
            tmp.write_bytes(b"half")
            raise exc
    assert os.listdir(tmp_path) == ["store.h5"]
    assert (tmp_path / "store.h5").read_bytes() == b"old"


def test_stale_temporaries_of_the_target_are_removed_at_the_next_write(tmp_path):
    dead = _dead_pid()
    stale = _fake_temporary(tmp_path, dead)
    live_child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        keep = [
            _fake_temporary(tmp_path, os.getpid()),  # this process (another thread may write)
            _fake_temporary(tmp_path, live_child.pid),  # a writer that still runs
            _fake_temporary(tmp_path, dead, host="0123abcd"),  # another machine: unknown
            _fake_temporary(tmp_path, dead, stem="other"),  # another target
            _fake_temporary(tmp_path, dead, suffix=".c3d"),  # another target
        ]
        save_trial(Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=1.0),
                   tmp_path / "store.h5")  # fmt: skip
        assert not stale.exists()
        assert all(p.exists() for p in keep)
        # the other target's stale temporaries go with a folder clean-up
        removed = cleanup_temporaries(tmp_path)
        assert sorted(p.name for p in removed) == sorted(p.name for p in keep[3:])
    finally:
        live_child.kill()
        live_child.wait()
    assert cleanup_temporaries(tmp_path) == [keep[1]]  # its writer is gone now
    assert sorted(os.listdir(tmp_path)) == sorted([keep[0].name, keep[2].name, "store.h5"])


def test_a_reused_process_id_does_not_protect_a_stale_temporary(tmp_path):
    # the writer died long ago and its id now belongs to a process started since
    live_child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stale = _fake_temporary(tmp_path, live_child.pid)
        old = time.time() - 3600
        os.utime(stale, (old, old))
        if not Path(f"/proc/{live_child.pid}/stat").exists():
            pytest.skip("process start times need /proc")
        assert cleanup_temporaries(tmp_path, dry_run=True) == [stale]
        assert stale.exists()
        assert cleanup_temporaries(tmp_path) == [stale]
        assert not stale.exists()
    finally:
        live_child.kill()
        live_child.wait()


def test_cleanup_rejects_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataError, match="folder"):
        cleanup_temporaries(tmp_path / "f")


def test_sigterm_handler_only_while_writing_in_the_main_thread(tmp_path):
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with atomic_path(tmp_path / "a.txt") as tmp:
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        tmp.write_text("a")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

    seen = []

    def write_in_thread():
        with atomic_path(tmp_path / "b.txt") as tmp:
            seen.append(signal.getsignal(signal.SIGTERM))
            tmp.write_text("b")

    t = threading.Thread(target=write_in_thread)
    t.start()
    t.join()
    assert seen == [signal.SIG_DFL]  # no handler from another thread

    def mine(signum, frame):
        raise SystemExit(143)

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with pytest.raises(SystemExit):
            with atomic_path(tmp_path / "c.txt") as tmp:
                assert signal.getsignal(signal.SIGTERM) is mine  # the program's own is kept
                tmp.write_text("c")
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
        assert not (tmp_path / "c.txt").exists()
        assert _temporaries(tmp_path) == []
    finally:
        signal.signal(signal.SIGTERM, previous)


# ----------------------------------------------------------------------------- kill tests

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import ahbm.io.hdf5 as store
    from writer_data import trial

    real = store._write_trial_group

    def announce(parent, name, t):
        sys.stdout.write("W\\n")
        sys.stdout.flush()
        real(parent, name, t)

    store._write_trial_group = announce
    k = 1
    while True:
        store.save_trial(trial(k), sys.argv[1], name="t", overwrite=True)
        k = 3 - k
    """
)

WRITER_DATA = textwrap.dedent(
    """
    import numpy as np
    from ahbm.io import Trial

    def trial(k):
        pts = np.random.default_rng(k).normal(size=(20000, 8, 3))
        return Trial(points=pts, point_labels=[f"P{i}" for i in range(8)], point_rate=100.0)
    """
)


@pytest.fixture
def writer(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "writer.py").write_text(WRITER)
    (code / "writer_data.py").write_text(WRITER_DATA)
    sys.path.insert(0, str(code))
    try:
        import writer_data

        yield code, writer_data
    finally:
        sys.path.remove(str(code))
        sys.modules.pop("writer_data", None)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_writer_killed_at_random_moments(tmp_path, writer, sig):
    code, data = writer
    folder = tmp_path / "data"
    folder.mkdir()
    target = folder / "store.h5"
    save_trial(data.trial(1), target, name="t")
    versions = {k: data.trial(k).points for k in (1, 2)}
    rng = np.random.default_rng(int(sig))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(code), *sys.path]))
    left = 0
    for run in range(3):
        proc = subprocess.Popen(
            [sys.executable, str(code / "writer.py"), str(target)],
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            for _ in range(int(rng.integers(1, 4))):  # let it start 1-3 writes
                assert proc.stdout.readline() == b"W\n", "the writer did not start"
            time.sleep(float(rng.uniform(0.0, 0.05)))  # and kill it inside the write
            proc.send_signal(sig)
            assert proc.wait(timeout=60) == -sig
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # the target is one complete version, never a mix or a truncated file
        points = load_trial(target, "t").points
        assert any(np.array_equal(points, v) for v in versions.values()), f"run {run}"
        temporaries = _temporaries(folder)
        if sig == signal.SIGTERM:
            assert temporaries == [], f"SIGTERM left {temporaries}"
        left += len(temporaries)
    if sig == signal.SIGKILL:
        assert left > 0  # the kills did land inside writes and left their temporaries
    save_trial(data.trial(2), target, name="t", overwrite=True)  # the next write cleans up
    assert _temporaries(folder) == []
    assert np.array_equal(load_trial(target, "t").points, versions[2])


def test_ahbm_info_reports_and_cleans_stale_temporaries(tmp_path, capsys):
    from ahbm.cli import main

    target = tmp_path / "store.h5"
    save_trial(Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=1.0), target)
    stale = _fake_temporary(tmp_path, _dead_pid(), stem="other")
    assert main(["info", str(target)]) == 0
    out = capsys.readouterr().out
    assert "found 1 stale temporary file(s)" in out and stale.name in out
    assert stale.exists()
    assert main(["info", str(tmp_path), "--clean"]) == 0
    assert "removed 1 stale temporary file(s)" in capsys.readouterr().out
    assert not stale.exists()
    assert main(["info", str(tmp_path)]) == 0
    assert "stale" not in capsys.readouterr().out
