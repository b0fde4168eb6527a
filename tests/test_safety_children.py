"""Every Python child ahbm starts is isolated from the current folder (docs/security.md)."""

import subprocess
import sys
import textwrap

import pytest

from ahbm._internal.isolation import python_child


def _plant(folder):
    """A folder whose `numpy.py` and `ahbm.py` would record that they ran."""
    for name in ("numpy", "ahbm", "json"):
        (folder / f"{name}.py").write_text(
            f"open({str(folder / 'RAN')!r}, 'a').write('{name}\\n')\nraise SystemExit(3)\n"
        )


def test_background_compile_helper_ignores_files_of_the_current_folder(tmp_path):
    # the parent runs from the planted folder as a console script does (-P: its
    # own path is not the folder); the child must not import the planted numpy.py
    _plant(tmp_path)
    code = textwrap.dedent(
        """
        from ahbm._engine.compilation import compile_in_background
        raise SystemExit(compile_in_background(["rnea"]).wait())
        """
    )
    parent = [sys.executable, "-P", "-c", code] if sys.version_info >= (3, 11) else None
    if parent is None:
        pytest.skip("needs -P (Python 3.11+) to start the parent outside the folder")
    proc = subprocess.run(parent, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert not (tmp_path / "RAN").exists(), (tmp_path / "RAN").read_text()
    assert proc.returncode == 0, proc.stderr


def test_python_child_drops_relative_pythonpath_and_startup(tmp_path, monkeypatch):
    _plant(tmp_path)
    monkeypatch.setenv("PYTHONPATH", f".{':'}{tmp_path}{':'}")
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "numpy.py"))
    cmd, env = python_child("import sys; print(sys.path)")
    assert "PYTHONSTARTUP" not in env
    entries = env["PYTHONPATH"].split(":")
    assert "." not in entries and "" not in entries
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    import ast

    path = ast.literal_eval(proc.stdout)
    assert "" not in path and "." not in path and str(tmp_path) in path  # the absolute entry


def test_run_isolated_child_ignores_files_of_the_current_folder(tmp_path, monkeypatch):
    from ahbm._internal.isolation import run_isolated

    _plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run_isolated("os.path:basename", {"p": "x/y"}, file="f", timeout=60) == "y"
    assert not (tmp_path / "RAN").exists()
