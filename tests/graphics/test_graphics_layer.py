"""The graphics take data: no module of ahbm.graphics reads files through ahbm.io
(the file-reading glue of `ahbm view` and `ahbm plot` lives in ahbm.cli)."""

import ast
from pathlib import Path

import ahbm.graphics

GRAPHICS = Path(ahbm.graphics.__file__).parent


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_graphics_never_imports_io_models_or_cli():
    bad = [
        f"{path.name}: {mod}"
        for path in sorted(GRAPHICS.glob("*.py"))
        for mod in _imports(path)
        if mod.startswith(("ahbm.io", "ahbm.models", "ahbm.cli", "ahbm.io.batch"))
    ]
    assert not bad, bad


def test_stick_view_takes_any_trial_like_object():
    import numpy as np

    from ahbm.graphics import stick_view

    class Recording:  # not an ahbm.io.trial.Trial: only the fields the viewer reads
        points = np.zeros((3, 2, 3))
        point_labels = ["A", "B"]
        point_rate = 100.0
        point_units = "mm"
        time = np.arange(3) / 100.0
        force_plates = []

    viewer = stick_view(Recording())
    assert viewer.points.shape == (3, 2, 3)
    import matplotlib.pyplot as plt

    plt.close(viewer.fig)
