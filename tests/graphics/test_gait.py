"""Tests of plot_gait_cycles and gait_cycle_summary."""

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from ahbm.errors import DataError
from ahbm.graphics import gait_cycle_summary, plot_gait_cycles


def _cycles(n_cycles, seed, offset=0.0):
    rng = np.random.default_rng(seed)
    pct = np.linspace(0, 1, 101)
    base = np.stack([np.sin(2 * np.pi * pct), 0.2 * pct, 0.1 * np.cos(np.pi * pct)], -1)
    return offset + base + 0.05 * rng.normal(size=(n_cycles, 101, 3))


def _result():
    return {
        "Left": {"HipAngles": _cycles(3, 1), "KneeAngles": _cycles(4, 2), "toe_off": [60, 62]},
        "Right": {"HipAngles": _cycles(2, 3, 0.1), "KneeAngles": _cycles(3, 4, 0.1)},
    }


def _band_limits(coll):
    """Lower and upper y of a fill_between band at each x."""
    v = coll.get_paths()[0].vertices
    xs = np.unique(v[:, 0])
    lo = np.array([v[v[:, 0] == x, 1].min() for x in xs])
    hi = np.array([v[v[:, 0] == x, 1].max() for x in xs])
    return xs, lo, hi


def test_summary_matches_numpy_nan_statistics():
    cyc = _cycles(5, 7)
    cyc[1, 10:20, 0] = np.nan
    s = gait_cycle_summary(cyc)
    np.testing.assert_allclose(s.percent, np.linspace(0, 100, 101))
    np.testing.assert_allclose(s.mean, np.nanmean(cyc, axis=0))
    np.testing.assert_allclose(s.sd, np.nanstd(cyc, axis=0, ddof=1))
    one = gait_cycle_summary(cyc[0])
    np.testing.assert_allclose(one.mean, cyc[0])
    np.testing.assert_array_equal(one.sd, 0.0)
    assert "percent=array(101,)" in repr(s)


def test_layout_rows_are_variables_columns_are_planes():
    fig = plot_gait_cycles(_result())
    assert len(fig.axes) == 6
    assert [ax.get_title() for ax in fig.axes[:3]] == ["Sagittal", "Frontal", "Transverse"]
    assert fig.axes[0].get_ylabel() == "HipAngles (deg)"
    assert fig.axes[3].get_ylabel().startswith("KneeAngles")
    assert all(ax.get_xlim() == (0.0, 100.0) for ax in fig.axes)
    assert fig.axes[0].get_shared_x_axes().joined(fig.axes[0], fig.axes[5])


@pytest.mark.parametrize(("row", "var"), [(0, "HipAngles"), (1, "KneeAngles")])
@pytest.mark.parametrize("col", [0, 1, 2])
def test_mean_lines_bands_and_side_colours(row, var, col):
    result = _result()
    fig = plot_gait_cycles(result)
    ax = fig.axes[row * 3 + col]
    means = {ln.get_label(): ln for ln in ax.lines if ln.get_label() in ("Left", "Right")}
    bands = {c.get_label(): c for c in ax.collections}
    for side, color in (("Left", "red"), ("Right", "green")):
        deg = np.degrees(result[side][var])
        line = means[side]
        assert to_rgba(line.get_color()) == to_rgba(color)
        np.testing.assert_allclose(line.get_xdata(), np.linspace(0, 100, 101))
        np.testing.assert_allclose(line.get_ydata(), deg[:, :, col].mean(axis=0))
        xs, lo, hi = _band_limits(bands[f"{side} ± SD"])
        sd = deg[:, :, col].std(axis=0, ddof=1)
        np.testing.assert_allclose(xs, np.linspace(0, 100, 101))
        np.testing.assert_allclose(lo, deg[:, :, col].mean(0) - sd)
        np.testing.assert_allclose(hi, deg[:, :, col].mean(0) + sd)
        np.testing.assert_allclose(bands[f"{side} ± SD"].get_facecolor()[0][:3], to_rgba(color)[:3])


def test_toe_off_lines_at_the_mean_toe_off():
    fig = plot_gait_cycles(_result(), toe_off=None)
    lines = [ln for ln in fig.axes[0].lines if ln.get_label() == "Left toe-off"]
    assert len(lines) == 1
    np.testing.assert_allclose(lines[0].get_xdata(), [61.0, 61.0])
    assert not [ln for ln in fig.axes[0].lines if ln.get_label() == "Right toe-off"]
    fig = plot_gait_cycles(_result(), toe_off={"right": 58.0, "left": [63, 65]})
    labels = {ln.get_label(): ln.get_xdata()[0] for ln in fig.axes[2].lines}
    assert labels["Right toe-off"] == 58.0 and labels["Left toe-off"] == 64.0


def test_normative_band_equals_mean_plus_minus_sd():
    norm_mean = np.c_[np.linspace(0, 60, 51), np.zeros(51), np.full(51, 5.0)]
    norm_sd = np.full((51, 3), 4.0)
    normative = {"KneeAngles": {"mean": norm_mean, "sd": norm_sd}}
    fig = plot_gait_cycles(_result(), variables=["KneeAngles"], normative=normative)
    assert len(fig.axes) == 3
    for col, ax in enumerate(fig.axes):
        (band,) = [c for c in ax.collections if c.get_label() == "normative"]
        xs, lo, hi = _band_limits(band)
        np.testing.assert_allclose(xs, np.linspace(0, 100, 51))
        np.testing.assert_allclose(lo, norm_mean[:, col] - 4.0)
        np.testing.assert_allclose(hi, norm_mean[:, col] + 4.0)


def test_one_side_non_angles_and_individual_cycles():
    cyc = _cycles(3, 5)
    fig = plot_gait_cycles(
        {"R": {"KneeMoment": cyc}}, sides="right", show_cycles=True, degrees=True
    )
    ax = fig.axes[0]
    assert ax.get_ylabel() == "KneeMoment (N·m/kg)"  # the unit, not "(SI)"
    green = [ln for ln in ax.lines if to_rgba(ln.get_color())[:3] == to_rgba("green")[:3]]
    assert len(green) == 4  # three cycles and the mean
    np.testing.assert_allclose(green[-1].get_ydata(), cyc[:, :, 0].mean(0))  # not converted


def test_custom_colours_and_sides():
    fig = plot_gait_cycles(_result(), sides=["left"], colors={"left": "blue"})
    labels = [ln.get_label() for ln in fig.axes[0].lines]
    assert "Right" not in labels
    (left,) = [ln for ln in fig.axes[0].lines if ln.get_label() == "Left"]
    assert to_rgba(left.get_color()) == to_rgba("blue")


@pytest.mark.parametrize(
    ("result", "kwargs", "match"),
    [
        ({"Middle": {}}, {}, "Unknown side 'Middle'"),
        ([], {}, "must be a mapping"),
        (_result(), {"variables": ["AnkleAngles"]}, "'AnkleAngles' is not in the result"),
        ({"Left": {"KneeAngles": np.zeros((2, 101, 2))}}, {}, "2 components"),
        ({"Left": {"KneeAngles": np.zeros((2, 3, 101, 3))}}, {}, "n_cycles, n_points"),
        (_result(), {"normative": {"HipAngles": (np.zeros((5, 3)), -np.ones((5, 3)))}}, "neg"),
        (_result(), {"normative": {"HipAngles": np.zeros((5, 3))}}, r"\(mean, sd\)"),
        (_result(), {"toe_off": {"Left": 140.0}}, "outside 0-100"),
        (_result(), {"sides": "left", "colors": {"up": "k"}}, "Unknown side"),
        ({"Right": {"KneeAngles": np.zeros((1, 101, 3))}}, {"sides": "left"}, "None of"),
    ],
)
def test_bad_input(result, kwargs, match):
    with pytest.raises(DataError, match=match):
        plot_gait_cycles(result, **kwargs)


def test_a_component_that_is_zero_by_construction_is_not_drawn_as_data():
    """Raw arrays without structural information (the documented fallback): the ankle's
    frontal angle of a model that fixes it is round-off, not a curve."""
    import numpy as np

    from ahbm.graphics import plot_gait_cycles

    rng = np.random.default_rng(0)
    cyc = rng.normal(size=(3, 101, 3)) * 0.2
    cyc[:, :, 1] = rng.normal(size=(3, 101)) * 1e-16  # the frontal plane
    fig = plot_gait_cycles({"Left": {"AnkleAngles": cyc}, "Right": {"AnkleAngles": cyc}})
    sagittal, frontal, transverse = fig.axes[:3]
    assert not frontal.lines[1:] and [t.get_text() for t in frontal.texts] == [
        "zero by construction"
    ]
    assert len(sagittal.lines) >= 2 and not sagittal.texts  # the other planes are curves
    import matplotlib.pyplot as plt

    plt.close(fig)


def _panel_state(ax):
    curves = [line for line in ax.lines if len(line.get_ydata()) > 2]
    return len(curves), [t.get_text() for t in ax.texts]


def test_the_model_s_undefined_components_are_left_out_whatever_their_values():
    """Structural rule: a gait result's ``not_defined`` decides, not the values."""
    from types import SimpleNamespace

    import matplotlib.pyplot as plt
    import numpy as np

    from ahbm.gait.checks import CurveFlag
    from ahbm.graphics import plot_gait_cycles

    rng = np.random.default_rng(1)
    left = rng.normal(size=(2, 101, 3)) * 0.2
    left[:, :, 2] = 0.0  # exactly zero, yet data: drawn (no value rule for a result)
    right = rng.normal(size=(2, 101, 3)) * 0.2  # frontal values far from zero
    why = "not defined by this model: the foot frame is built on the shank's flexion axis"
    result = SimpleNamespace(
        cycles={"Left": {"AnkleAngles": left}, "Right": {"AnkleAngles": right}},
        not_defined=(CurveFlag("Left", "AnkleAngles", 1, why),
                     CurveFlag("Right", "AnkleAngles", 1, why)),
    )  # fmt: skip
    fig = plot_gait_cycles(result)
    sagittal, frontal, transverse = fig.axes[:3]
    assert _panel_state(frontal) == (0, ["not defined by this model"])
    assert frontal.get_yticks().size == 0
    assert _panel_state(sagittal) == (2, []) and _panel_state(transverse) == (2, [])
    plt.close(fig)
    # one side undefined, the other data: the panel shows the other side's curve
    fig = plot_gait_cycles(result.cycles, not_defined=[("left", "AnkleAngles", 1)])
    assert _panel_state(fig.axes[1]) == (1, [])
    assert fig.axes[1].lines[0].get_color() == fig.axes[0].lines[1].get_color()  # right's
    plt.close(fig)
    # an explicit empty list: every component is data, even the round-off of the fallback
    tiny = {"Left": {"AnkleAngles": np.full((1, 101, 3), 1e-16)}}
    fig = plot_gait_cycles(tiny, not_defined=())
    assert _panel_state(fig.axes[1]) == (1, [])
    plt.close(fig)
    fig = plot_gait_cycles(tiny)  # raw arrays, no information: the fallback
    assert _panel_state(fig.axes[1]) == (0, ["zero by construction"])
    plt.close(fig)


@pytest.mark.parametrize(
    "bad, match",
    [("LAnkleAngles", "sequence of"), ([("Left", "AnkleAngles")], "expected"),
     ([("Left", "AnkleAngles", 1.0)], "int >= 0"), ([("Up", "AnkleAngles", 1)], "Unknown side")],
)  # fmt: skip
def test_bad_not_defined_entries_are_named(bad, match):
    import numpy as np

    from ahbm.errors import DataError
    from ahbm.graphics import plot_gait_cycles

    with pytest.raises(DataError, match=match):
        plot_gait_cycles({"Left": {"AnkleAngles": np.zeros((1, 101, 3))}}, not_defined=bad)


def test_the_stored_list_of_undefined_components_is_read_back():
    from ahbm.errors import DataError
    from ahbm.graphics import not_defined_from_results

    stored = ["LAnkleAngles[1]: not defined ...", b"RAnklePower[1]: not defined ..."]
    assert not_defined_from_results({"gait_not_defined": stored}) == [
        ("Left", "AnkleAngles", 1), ("Right", "AnklePower", 1)
    ]  # fmt: skip
    assert not_defined_from_results({"gait_not_defined": ["none"]}) == []
    assert not_defined_from_results({"gait_cycles": {}}) is None
    with pytest.raises(DataError, match="LAnkleAngles\\[1\\]"):
        not_defined_from_results({"gait_not_defined": ["ankle frontal"]})
