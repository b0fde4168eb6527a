"""Start-up: what the commands import, and the line they print before compiling kernels.

The times themselves are measured by benchmarks/bench_startup.py (tests never
assert on wall time).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from ahbm.cli import _compiling


def _run(code: str, **env) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env={**os.environ, **env},
    )
    return out.stdout.strip()


def test_the_kernels_named_for_each_command_exist():
    import importlib

    for command, kernels in _compiling.KERNELS.items():
        for module, name in kernels:
            assert hasattr(importlib.import_module(module), name), (command, module, name)


def test_an_empty_cache_lacks_every_kernel_of_a_command(tmp_path):
    """With NUMBA_CACHE_DIR a new empty folder, every kernel of `ahbm id` would compile."""
    code = "from ahbm.cli._compiling import uncached; print(','.join(uncached('id')))"
    got = _run(code, NUMBA_CACHE_DIR=str(tmp_path)).split(",")
    assert got == [name for _, name in _compiling.KERNELS["id"]]


def test_the_announcement_is_one_line_on_stderr_with_an_estimate(monkeypatch, capsys):
    monkeypatch.setattr(_compiling, "uncached", lambda command: ["ptsv", "rnea_block_kernel"])
    assert _compiling.announce("id") == ["ptsv", "rnea_block_kernel"]
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("ahbm id: compiling 2 numba kernel(s)") and " s on a quiet" in err


def test_a_warm_cache_or_quiet_prints_nothing(monkeypatch):
    buffer = io.StringIO()
    monkeypatch.setattr(_compiling, "uncached", lambda command: [])
    assert _compiling.announce("id", file=buffer) == []
    monkeypatch.setattr(_compiling, "uncached", lambda command: ["ptsv"])
    assert _compiling.announce("id", quiet=True, file=buffer) == ["ptsv"]
    assert buffer.getvalue() == ""


def test_an_unreadable_cache_counts_as_cached():
    class Broken:
        overloads = {}
        _cache = None  # no _cache_file: the private API is not there

    assert _compiling._cached(Broken())


@pytest.mark.parametrize(
    "module, absent",
    [
        ("ahbm.cli", ("numpy", "numba", "scipy", "pandas")),
        ("ahbm.opensim.processing", ("scipy.signal", "scipy.interpolate", "scipy.stats")),
        ("ahbm.opensim.id_tool", ("numba", "scipy", "pandas")),
        ("ahbm.dynamics.inverse", ("numba", "scipy", "pandas")),
        ("ahbm.kinematics.forward", ("numba", "scipy", "pandas")),
    ],
)
def test_modules_do_not_import_what_their_start_does_not_need(module, absent):
    code = f"import sys, {module}\nprint([m for m in {absent!r} if m in sys.modules])"
    assert _run(code) == "[]"


def test_run_as_the_program_the_command_freezes_what_is_left_for_a_quick_exit():
    """``main()`` (argv None) ends with gc.freeze(); ``main([...])`` (a library call) does not."""
    code = (
        "import gc, sys\n"
        "from ahbm.cli import main\n"
        "sys.argv = ['ahbm', 'nonsense-command']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.get_freeze_count() > 0)"
    )
    assert _run(code) == "True"
    code = (
        "import gc\n"
        "from ahbm.cli import main\n"
        "try:\n"
        "    main(['nonsense-command'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.get_freeze_count())"
    )
    assert _run(code) == "0"
