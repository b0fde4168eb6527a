"""The README's Python examples run as written (on the shared sample trial)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def python_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks()) >= 3


@pytest.mark.skipif(not (DATA / "c3d").is_dir(), reason="shared sample data not available")
def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gait-raw.c3d").write_bytes((DATA / "c3d" / "gait-raw.c3d").read_bytes())
    for f in (DATA / "opensim").iterdir():  # the OpenSim walking trial of the OpenSim block
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    namespace: dict = {}
    for i, block in enumerate(python_blocks()):
        try:
            exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)
        except Exception as err:  # pragma: no cover - the message is the point
            pytest.fail(f"README python block {i + 1} failed: {type(err).__name__}: {err}")
    assert (tmp_path / "walk.h5").exists()
    assert (tmp_path / "Results" / "subject01_walk_ID.sto").exists()
