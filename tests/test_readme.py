"""The README's Python example and the tour's examples run as written.

The README example reads ``../shared/data/c3d/gait-raw.c3d`` relative to the
current folder when it exists and otherwise writes a synthetic walking trial
to a temporary C3D file: both ways are run here, each in a scratch copy of
the repository's neighbourhood. The tour (docs/tour.md) runs on the shared
walking files copied into a temporary folder.
"""

import re

import pytest
from sample_data import ROOT, SHARED, needs_shared


def python_blocks(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _run(blocks, where):
    namespace: dict = {}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{where} python block {i + 1}", "exec"), namespace)
        except Exception as err:  # pragma: no cover - the message is the point
            pytest.fail(f"{where} python block {i + 1} failed: {type(err).__name__}: {err}")
    return namespace


def test_readme_has_one_short_example():
    blocks = python_blocks("README.md")
    assert len(blocks) == 1
    assert len(blocks[0].strip().splitlines()) <= 25
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 150


@pytest.mark.parametrize(
    "data",
    [pytest.param("shared", marks=needs_shared), "synthetic"],
)
def test_readme_example_runs(data, tmp_path, monkeypatch, capsys):
    import matplotlib  # here, not at collection

    matplotlib.use("Agg")
    repo = tmp_path / "repo"  # the example looks for ../shared/data from here
    repo.mkdir()
    if data == "shared":
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(SHARED, target_is_directory=True)
    monkeypatch.chdir(repo)
    _run(python_blocks("README.md"), "README.md")
    assert (repo / "moments.png").stat().st_size > 10_000
    assert "left cycles, peak sagittal knee moment" in capsys.readouterr().out


@needs_shared
def test_tour_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gait-raw.c3d").write_bytes((SHARED / "c3d" / "gait-raw.c3d").read_bytes())
    for f in (SHARED / "opensim").iterdir():  # the OpenSim walking trial of the tour
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    _run(python_blocks("docs/tour.md"), "docs/tour.md")
    assert (tmp_path / "walk.h5").exists()
    assert (tmp_path / "Results" / "subject01_walk_ID.sto").exists()
