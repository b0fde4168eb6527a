"""Safety of batch conversion, file-pattern expansion and concurrent HDF5 store writers.

Each test reproduces a problem users met with ``ahbm convert`` / ``ahbm gait``:
lost trials when two processes write one store, ``**`` exploding on links to
``.``, raw PermissionError texts, special files (FIFOs, devices, broken
links) silently ignored or reported as missing, and two inputs mapping to
one output with exit status 0.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import ahbm._internal.files as files
import ahbm._internal.patterns as patterns
import ahbm.io._h5safe as h5safe
from ahbm._internal.patterns import expand_paths
from ahbm.cli import main
from ahbm.errors import DataError
from ahbm.gait.batch import expand_trial_paths
from ahbm.io import Trial, list_trials, load_trial, save_trial, write_c3d, write_trc
from ahbm.io.batch import convert
from ahbm.io.readers import read_trial

POSIX = os.name == "posix"


def _trial(seed: int = 0, n_frames: int = 8) -> Trial:
    rng = np.random.default_rng(seed)
    return Trial(
        points=rng.normal(size=(n_frames, 2, 3)), point_labels=["HEEL", "TOE"], point_rate=50.0
    )


def _trc(path: Path, seed: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_trc(_trial(seed), path, units="m")
    return path


def _run_child(code: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter; a hang fails the test instead of blocking it."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {timeout} s (hang or explosion)")


# ----------------------------------------------------------------------------- 5: store lock

_WRITER = """
import os, sys, time
import numpy as np
import ahbm.io._h5safe as h5safe
from ahbm.io import Trial, save_trial

worker, modes, rounds, per_round = sys.argv[1], sys.argv[2:], 2, 2
while not os.path.exists("go"):
    time.sleep(0.005)
for mode in modes:
    h5safe._USE_FLOCK = mode == "flock"  # else the portable O_CREAT|O_EXCL lock file
    for r in range(rounds):
        for j in range(per_round):
            pts = np.full((6, 1, 3), float(worker))
            trial = Trial(points=pts, point_labels=["A"], point_rate=100.0)
            save_trial(trial, f"{mode}{r}.h5", name=f"w{worker}_{j}")
"""


def test_concurrent_writers_of_one_store_lose_no_trial(tmp_path):
    """4 processes, each 2 trials into each of 2 stores per lock kind, started at once."""
    modes = ["flock", "excl"] if POSIX else ["excl"]
    workers = 4
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(w), *modes],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    time.sleep(0.5)
    (tmp_path / "go").touch()  # the writers start together (most after their imports)
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    want = sorted(f"w{w}_{j}" for w in range(workers) for j in range(2))
    for mode in modes:
        for r in range(2):
            store = tmp_path / f"{mode}{r}.h5"
            assert sorted(list_trials(store)) == want, f"{store.name}: trials lost"
            assert load_trial(store, "w3_1").points[0, 0, 0] == 3.0
    leftovers = [p.name for p in tmp_path.iterdir() if "ahbm" in p.name]
    assert leftovers == []  # no lock file, no temporary left behind


@pytest.mark.parametrize("mode", ["flock", "excl"])
def test_lock_timeout_names_the_store_and_the_lock_file(tmp_path, monkeypatch, mode):
    if mode == "excl":
        monkeypatch.setattr(h5safe, "_USE_FLOCK", False)
    elif not POSIX:
        pytest.skip("fcntl.flock is POSIX only")
    store = tmp_path / "s.h5"
    save_trial(_trial(1), store, name="a")
    with h5safe.store_lock(store) as lock:  # another writer holds it
        assert lock == tmp_path / "s.h5.ahbm-lock" and lock.exists()
        with pytest.raises(DataError) as info:
            save_trial(_trial(2), store, name="b", lock_timeout=0.3)
    text = str(info.value)
    assert str(store) in text and str(lock) in text and "0.3 s" in text
    assert f"process {os.getpid()}" in text
    if mode == "excl":
        assert "remove the lock file" in text
    assert list_trials(store) == ["a"] and not lock.exists()
    save_trial(_trial(2), store, name="b")  # released: the next writer goes on
    assert list_trials(store) == ["a", "b"]


def test_stale_fallback_lock_of_a_dead_writer_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(h5safe, "_USE_FLOCK", False)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store = tmp_path / "s.h5"
    lock = h5safe.lock_path(store)
    lock.write_text(f"ahbm store lock: host {files._host_tag()} pid {dead.pid}\n")
    save_trial(_trial(1), store, name="a", lock_timeout=5)
    assert list_trials(store) == ["a"] and not lock.exists()


def test_threads_writing_one_store_lose_no_trial(tmp_path):
    store = tmp_path / "s.h5"
    with ThreadPoolExecutor(4) as ex:
        list(ex.map(lambda i: save_trial(_trial(i), store, name=f"t{i}"), range(8)))
    assert sorted(list_trials(store)) == [f"t{i}" for i in range(8)]


# ----------------------------------------------------------------------------- 6: ** and links


@pytest.mark.skipif(not POSIX, reason="symbolic links to folders")
def test_recursive_pattern_does_not_follow_links_to_the_folder(tmp_path):
    d = tmp_path / "d"
    _trc(d / "x.trc", 1)
    _trc(d / "sub" / "y.trc", 2)
    (d / "loop1").symlink_to(".")
    (d / "loop2").symlink_to(".")
    proc = _run_child(
        """
        from ahbm.io.batch import convert
        from ahbm.gait.batch import expand_trial_paths
        report = convert("d/**/*.trc", "out", jobs=1, progress=False)
        print("CONVERTED", sorted(str(src) for src, _ in report.converted))
        print("GAIT", expand_trial_paths(["d/**/*.trc"]))
        """,
        tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "CONVERTED ['d/sub/y.trc', 'd/x.trc']" in proc.stdout
    assert "GAIT ['d/sub/y.trc', 'd/x.trc']" in proc.stdout


def test_pattern_expansion_has_a_bound(tmp_path, monkeypatch, capsys):
    d = tmp_path / "d"
    for i in range(30):
        _trc(d / f"t{i:02d}.trc", i)
    monkeypatch.setattr(patterns, "MAX_PATTERN_ENTRIES", 10)
    pattern = str(d / "**" / "*.trc")
    with pytest.raises(DataError, match=r"more than 10 folder entries"):
        convert(pattern, tmp_path / "out", jobs=1, progress=False)
    with pytest.raises(DataError, match=r"more than 10 folder entries"):
        expand_trial_paths([pattern])
    assert main(["convert", pattern, "-o", str(tmp_path / "out"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "ahbm convert: error:" in err and repr(pattern) in err and "narrow the pattern" in err
    assert not (tmp_path / "out").exists()  # refused before anything was written
    found = expand_paths(pattern, suffixes=(".trc",), max_entries=100)
    assert [f.path.name for f in found] == [f"t{i:02d}.trc" for i in range(30)]


# ----------------------------------------------------------------------------- 8: permissions


def test_output_folder_that_cannot_be_created_is_an_ahbm_error(tmp_path, capsys):
    src = _trc(tmp_path / "in" / "a.trc")
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file, not a folder")
    out = blocker / "out"
    assert main(["convert", str(src), "-o", str(out), "--no-progress", "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert "Cannot create the folder `output_dir`" in err and str(out) in err
    with pytest.raises(DataError, match="output_dir"):
        convert(src, out, jobs=1, progress=False)


def test_unwritable_output_folder_is_refused_before_converting(tmp_path, monkeypatch, capsys):
    src = tmp_path / "in"
    _trc(src / "a.trc", 1)
    _trc(src / "b.trc", 2)
    out = tmp_path / "out"
    out.mkdir()
    real = files.tempfile.mkstemp

    def denied(*args, dir=None, **kwargs):  # noqa: A002 - mkstemp's own keyword
        if dir is not None and Path(dir) == out:
            raise PermissionError(13, "Permission denied", str(out))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    with pytest.raises(DataError) as info:
        convert(src, out, jobs=1, progress=False)
    text = str(info.value)
    assert "`output_dir`" in text and str(out) in text and "permission denied" in text
    assert "choose a folder you can write to" in text and "Errno" not in text
    assert main(["convert", str(src), "-o", str(out), "--no-progress", "-j", "1"]) == 1
    assert "Cannot write to the folder `output_dir`" in capsys.readouterr().err
    assert list(out.iterdir()) == []  # nothing converted


def test_os_error_while_converting_is_an_ahbm_error_in_the_failure_list(
    tmp_path, monkeypatch, capsys
):
    import ahbm.io.hdf5 as hdf5

    src = _trc(tmp_path / "in" / "a.trc")
    out = tmp_path / "out"

    def no_permission(trial, path, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(hdf5, "save_trial", no_permission)
    report = convert(src, out, jobs=1, progress=False)
    [(failed, reason)] = report.failed
    assert failed == src
    assert reason.startswith("DataError: Cannot write `output_dir` ")
    assert str(out / "a.h5") in reason and "permission denied" in reason
    assert "PermissionError" not in reason and "Errno" not in reason
    assert main(["convert", str(src), "-o", str(out), "--no-progress", "-j", "1"]) == 1
    assert "DataError: Cannot write `output_dir`" in capsys.readouterr().out


def test_read_only_output_folder(tmp_path):
    """A folder the system refuses to write: a read-only mode, or /sys for root (which
    ignores modes but cannot create files in sysfs)."""
    src = _trc(tmp_path / "in" / "a.trc")
    if os.geteuid() == 0:
        out = Path("/sys/kernel")
        if not out.is_dir():
            pytest.skip("no /sys on this system and root ignores folder modes")
    else:
        out = tmp_path / "out"
        out.mkdir(mode=0o555)
    try:
        with pytest.raises(DataError, match="permission denied"):
            convert(src, out, jobs=1, progress=False)
        assert main(["convert", str(src), "-o", str(out), "--no-progress", "-j", "1"]) != 0
    finally:
        if out.parent == tmp_path:
            out.chmod(0o755)


# ----------------------------------------------------------------------------- 13: special files


def _special_folder(folder: Path) -> dict[str, str]:
    """A folder of *.c3d entries that are no regular files; name -> expected reason."""
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "fifo.c3d")
    (folder / "zero.c3d").symlink_to("/dev/zero")
    (folder / "urandom.c3d").symlink_to("/dev/urandom")
    (folder / "dangling.c3d").symlink_to(folder / "absent.c3d")
    (folder / "loop.c3d").symlink_to("loop.c3d")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.c3d"))
    sock.close()
    return {
        "fifo.c3d": "FIFO",
        "zero.c3d": "character device (through the symbolic link to '/dev/zero')",
        "urandom.c3d": "character device (through the symbolic link to '/dev/urandom')",
        "dangling.c3d": "dangling symbolic link",
        "loop.c3d": "symbolic link loop",
        "sock.c3d": "socket",
    }


def _unblock_fifo_later(fifo: Path) -> None:
    """Should a regression open the FIFO, give it an end of file instead of a hang."""

    def unblock():
        time.sleep(20)
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    threading.Thread(target=unblock, daemon=True).start()


@pytest.mark.skipif(not POSIX, reason="FIFOs, devices and UNIX sockets")
def test_special_files_in_a_folder_are_listed_not_opened(tmp_path, capsys):
    folder = tmp_path / "in"
    expected = _special_folder(folder)
    _unblock_fifo_later(folder / "fifo.c3d")
    write_c3d(_trial(3), folder / "good.c3d")
    report = convert(folder, tmp_path / "out", jobs=1, progress=False)
    assert [src.name for src, _ in report.converted] == ["good.c3d"]
    reasons = {p.name: why for p, why in report.skipped}
    assert set(reasons) == set(expected)
    for name, part in expected.items():
        assert part in reasons[name] and "not" in reasons[name], (name, reasons[name])
    assert report.refused == [] and report.ok  # found in a folder, not named
    assert main(["convert", str(folder), "-o", str(tmp_path / "out2"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    for name in expected:
        assert f"skipped {folder / name}:" in out


@pytest.mark.skipif(not POSIX, reason="FIFOs, devices and UNIX sockets")
def test_special_files_named_explicitly_make_a_nonzero_exit(tmp_path, capsys):
    folder = tmp_path / "in"
    expected = _special_folder(folder)
    _trc(folder / "good.trc")
    _unblock_fifo_later(folder / "fifo.c3d")
    named = [str(folder / name) for name in expected]
    out = tmp_path / "out"
    assert main(["convert", *named, str(folder / "good.trc"), "-o", str(out), "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "converted 1, skipped 6, failed 0" in captured.out
    for name, part in expected.items():
        line = next(ln for ln in captured.out.splitlines() if f"skipped {folder / name}:" in ln)
        assert part in line and "no such file" not in line
    assert "not regular files (never opened)" in captured.err
    report = convert(named, tmp_path / "out2", jobs=1, progress=False)
    assert report.refused == [Path(p) for p in named] and not report.converted
    # the gait command's expander refuses them too, naming the entry and the reason
    with pytest.raises(DataError, match=r"fifo\.c3d.*FIFO"):
        expand_trial_paths([folder / "fifo.c3d"])
    with pytest.raises(DataError, match=r"loop\.c3d.*symbolic link loop"):
        expand_trial_paths([str(folder / "loop.c3d")])


# ----------------------------------------------------------------------------- 14: collisions


def test_two_inputs_with_one_output_name_make_a_nonzero_exit(tmp_path, capsys):
    folder = tmp_path / "in"
    write_c3d(_trial(1), _trc(folder / "walk.trc", 2).with_suffix(".c3d"))
    c3d, trc = folder / "walk.c3d", folder / "walk.trc"
    out = tmp_path / "out"
    assert main(["convert", str(folder), "-o", str(out), "--no-progress", "-j", "1"]) == 1
    captured = capsys.readouterr()
    assert str(c3d) in captured.out and str(trc) in captured.out and "already used" in captured.out
    assert str(c3d) in captured.err and str(trc) in captured.err and "--overwrite" in captured.err
    assert list_trials(out / "walk.h5") == ["walk"]
    np.testing.assert_array_equal(load_trial(out / "walk.h5").points, read_trial(c3d).points)

    report = convert(folder, tmp_path / "out2", jobs=1, progress=False)
    assert report.collisions == [(trc, c3d, tmp_path / "out2" / "walk.h5")]
    assert [src for src, _ in report.converted] == [c3d]

    # --overwrite accepts the collision (the first input is converted, the other listed)
    args = ["convert", str(folder), "-o", str(tmp_path / "out3"), "--no-progress", "-j", "1"]
    assert main([*args, "--overwrite"]) == 0
    assert "already used" in capsys.readouterr().out
