"""Image regression of three figures, so that layout breaks are caught.

The reference PNGs live in tests/graphics/baseline/. After an intended change
of the figures, regenerate them with::

    AHBM_REGENERATE_BASELINES=1 python -m pytest tests/graphics/test_images.py

and look at the new images before committing them.
"""

import os
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.testing.compare import compare_images

from ahbm.graphics import draw_model, plot_gait_cycles, xy_view
from ahbm.kinematics import Model

BASELINE = Path(__file__).resolve().parent / "baseline"
REGENERATE = os.environ.get("AHBM_REGENERATE_BASELINES") == "1"
TOLERANCE = 8.0  # RMS of the 0-255 pixel difference; a moved or missing panel is far above
STYLE = {"font.family": "DejaVu Sans", "font.size": 8.0, "figure.dpi": 100.0}


def _gait_figure():
    pct = np.linspace(0.0, 1.0, 101)
    sag = np.radians(60.0) * np.sin(np.pi * pct) ** 2
    front = np.radians(5.0) * np.sin(2 * np.pi * pct)
    trans = np.radians(8.0) * np.cos(2 * np.pi * pct)
    mean = np.stack([sag, front, trans], -1)
    spread = np.linspace(-1.0, 1.0, 4)[:, None, None] * np.radians([4.0, 2.0, 3.0])
    result = {
        "Left": {"HipAngles": 0.6 * mean + spread, "KneeAngles": mean + spread, "toe_off": 61.0},
        "Right": {"HipAngles": 0.6 * mean - 0.5 * spread, "KneeAngles": 1.1 * mean - spread},
    }
    normative = {
        "KneeAngles": {"mean": np.degrees(mean), "sd": np.full((101, 3), 5.0)},
    }
    return plot_gait_cycles(result, normative=normative, toe_off={"Left": 61.0, "Right": 59.0})


def _xy_figure():
    t = np.linspace(0.0, 2.0, 201)
    data = {
        "knee angle": np.degrees(np.sin(2 * np.pi * t)),
        "force": np.c_[20 * np.sin(4 * t), 10 * np.cos(4 * t), 700 * np.sin(np.pi * t) ** 2],
    }
    events = [
        (0.4, "Foot Strike", "Left"),
        (1.0, "Foot Off", "Left"),
        (1.4, "Foot Strike", "Right"),
    ]
    viewer = xy_view(data, time=t, events=events, cursor=True, title="signals")
    viewer.set_time(0.8)
    return viewer.fig


def _model_figure():
    m = Model("arm")
    box = {"type": "box", "size": [0.08, 0.08, 0.3], "position": [0.0, 0.0, -0.15]}
    m.add_body("upper", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=2.0,
               com=[0, 0, -0.15], geometry=box)  # fmt: skip
    m.add_body("fore", "upper", {"type": "euler", "sequence": "XYZ"}, position=[0, 0, -0.3],
               mass=1.5, com=[0, 0, -0.13],
               geometry={"type": "cylinder", "radius": 0.03, "length": 0.26,
                         "position": [0, 0, -0.13]})  # fmt: skip
    ax = draw_model(m, [0.5, 0.8, 0.2, 0.1], triad_length=0.08)
    ax.view_init(elev=20.0, azim=-50.0)
    return ax.figure


@pytest.mark.parametrize(
    ("name", "build"),
    [("gait_cycles", _gait_figure), ("xy_view", _xy_figure), ("model", _model_figure)],
)
def test_figure_matches_baseline(name, build, tmp_path):
    with matplotlib.rc_context(STYLE):
        fig = build()
        actual = tmp_path / f"{name}.png"
        fig.savefig(actual, dpi=60)
    expected = BASELINE / f"{name}.png"
    if REGENERATE:
        expected.write_bytes(actual.read_bytes())
    assert expected.is_file(), f"missing baseline {expected}; see this module's docstring"
    diff = compare_images(str(expected), str(actual), tol=TOLERANCE)
    assert diff is None, diff
