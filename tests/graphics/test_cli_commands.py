"""The `ahbm view` / `ahbm plot` commands (ahbm.cli), with the graphics test fixtures."""

import argparse

import numpy as np
import pytest
from PIL import Image

from ahbm.cli.view import (
    add_plot_arguments,
    add_view_arguments,
    run_plot,
    run_view,
)
from ahbm.errors import DataError
from ahbm.graphics import gait_cycles_from_results
from ahbm.io import write_trc
from ahbm.io.hdf5 import save_trial


def _parse(add, argv):
    parser = argparse.ArgumentParser()
    add(parser)
    return parser.parse_args(argv)


def test_view_writes_gif_png_and_html(tmp_path, trial_factory):
    trial = trial_factory(n_frames=4)
    src = tmp_path / "walk.trc"
    write_trc(trial, src)
    gif, png, html = tmp_path / "w.gif", tmp_path / "w.png", tmp_path / "w.html"
    args = _parse(
        add_view_arguments,
        [str(src), "--gif", str(gif), "--png", str(png), "--html", str(html), "--dpi", "30"],
    )
    assert run_view(args) == 0
    with Image.open(gif) as im:
        assert im.n_frames == 4
    with Image.open(png) as im:
        assert im.format == "PNG"
    assert html.read_text(encoding="utf-8").count("data:image/png;base64") == 4


def test_view_without_output_on_a_headless_machine(tmp_path):
    args = _parse(add_view_arguments, [str(tmp_path / "missing.c3d")])
    with pytest.raises(DataError, match="--gif, --html"):
        run_view(args)


def _gait_store(tmp_path, key="gait_cycles"):
    rng = np.random.default_rng(0)
    from ahbm.io.trial import Trial

    cycles = {
        "Left": {"KneeAngles": rng.normal(size=(3, 101, 3))},
        "Right": {"KneeAngles": rng.normal(size=(2, 101, 3))},
    }
    trial = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    trial.results = {key: cycles} if key else dict(cycles)
    path = tmp_path / "result.h5"
    save_trial(trial, path, name="walk")
    return path, cycles


@pytest.mark.parametrize("key", ["gait_cycles", None])
def test_plot_draws_the_stored_cycles(tmp_path, key):
    path, cycles = _gait_store(tmp_path, key)
    out = tmp_path / "fig.png"
    assert run_plot(_parse(add_plot_arguments, [str(path), "-o", str(out), "--dpi", "40"])) == 0
    with Image.open(out) as im:
        assert im.format == "PNG" and im.size[0] > 100


def test_plot_leaves_out_the_stored_undefined_components(tmp_path, monkeypatch):
    """`ahbm plot` reads the model's list (gait_not_defined) and does not plot them."""
    import ahbm.cli.view as view
    from ahbm.io.trial import Trial

    cyc = np.random.default_rng(2).normal(size=(2, 101, 3))
    trial = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    trial.results = {
        "gait_cycles": {"Left": {"AnkleAngles": cyc}},
        "gait_not_defined": ["LAnkleAngles[1]: not defined by this model: ..."],
    }
    path = tmp_path / "result.h5"
    save_trial(trial, path, name="walk")
    seen = {}

    def keep(fig, out, **kwargs):
        seen["frontal"] = [t.get_text() for t in fig.axes[1].texts]
        seen["lines"] = [len([x for x in ax.lines if len(x.get_ydata()) > 2]) for ax in fig.axes]

    monkeypatch.setattr("ahbm.graphics.save_figure", keep)
    args = _parse(add_plot_arguments, [str(path), "-o", str(tmp_path / "f.png")])
    assert view.run_plot(args) == 0
    assert seen == {"frontal": ["not defined by this model"], "lines": [1, 0, 1]}


def test_gait_cycles_lookup_and_errors(tmp_path):
    res = {"gait_cycles": {"Left": {}}}
    assert gait_cycles_from_results(res) is res["gait_cycles"]
    with pytest.raises(DataError, match="No gait cycles.*KneeMoments"):
        gait_cycles_from_results({"KneeMoments": np.zeros(3)})
    path, _ = _gait_store(tmp_path)
    with pytest.raises(DataError, match="extensions"):
        run_plot(_parse(add_plot_arguments, [str(path), "-o", str(tmp_path / "fig.xyz")]))
    with pytest.raises(DataError, match="not an ahbm HDF5"):
        run_plot(_parse(add_plot_arguments, [str(tmp_path / "x.c3d"), "-o", "f.png"]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.h5"]
