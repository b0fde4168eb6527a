"""Tests of xy_view: panels, shared time axis, data, events and cursor."""

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from ahbm.errors import DataError
from ahbm.graphics import xy_view


def test_mapping_gives_one_shared_panel_per_channel():
    t = np.linspace(0.0, 2.0, 41)
    data = {"angle": np.sin(t), "force": np.c_[t, 2 * t, 3 * t], "moment": np.cos(t)}
    v = xy_view(data, time=t, title="trial")
    assert len(v.axes) == 3
    assert v.channels == ["angle", "force", "moment"]
    for ax in v.axes[1:]:
        assert v.axes[0].get_shared_x_axes().joined(v.axes[0], ax)
    (line,) = v.lines["angle"]
    np.testing.assert_array_equal(line.get_xdata(), t)
    np.testing.assert_array_equal(line.get_ydata(), np.sin(t))
    assert [ln.get_label() for ln in v.lines["force"]] == ["x", "y", "z"]
    for k, ln in enumerate(v.lines["force"]):
        np.testing.assert_array_equal(ln.get_ydata(), (k + 1) * t)
    assert v.fig._suptitle.get_text() == "trial"


def test_channels_with_their_own_time_base_and_selection():
    t1 = np.linspace(0, 1, 11)
    t2 = np.linspace(0, 1, 101)
    v = xy_view({"a": (t1, t1**2), "b": (t2, -t2), "c": (t1, t1)}, channels=["b", "a"])
    assert v.channels == ["b", "a"]
    np.testing.assert_array_equal(v.lines["b"][0].get_xdata(), t2)
    np.testing.assert_array_equal(v.lines["a"][0].get_ydata(), t1**2)


def test_rate_and_array_input():
    y = np.arange(20.0).reshape(10, 2)
    v = xy_view(y, rate=5.0)
    np.testing.assert_allclose(v.lines["data"][0].get_xdata(), np.arange(10) / 5.0)
    np.testing.assert_array_equal(v.lines["data"][1].get_ydata(), y[:, 1])
    v3 = xy_view(np.zeros((10, 3, 3)), channels=["A", "B", "C"])
    assert len(v3.axes) == 3
    assert v3.axes[-1].get_xlabel() == "sample"


def test_trial_channels_markers_analogs_plates_and_events(trial_factory):
    trial = trial_factory(n_frames=8, plate_ratio=4)
    v = xy_view(trial, channels=["LKNE", "EMG2", "FP1.force"])
    assert len(v.axes) == 3
    kne = v.lines["LKNE"]
    np.testing.assert_allclose(kne[2].get_xdata(), trial.time)
    np.testing.assert_array_equal(kne[2].get_ydata(), trial.marker("LKNE")[:, 2])
    emg = v.lines["EMG2"][0]
    np.testing.assert_allclose(emg.get_xdata(), trial.analog_time)
    np.testing.assert_array_equal(emg.get_ydata(), trial.analog("EMG2"))
    fz = v.lines["FP1.force"][2]
    np.testing.assert_allclose(fz.get_xdata(), 0.2 + np.arange(32) / 200.0)
    np.testing.assert_array_equal(fz.get_ydata(), trial.force_plates[0].force[:, 2])
    # 2 events x 3 panels, left red solid strike, right green dashed off
    assert len(v.event_lines) == 6
    strike = [ln for ln in v.event_lines if ln.get_label() == "Foot Strike"]
    off = [ln for ln in v.event_lines if ln.get_label() == "Foot Off"]
    assert len(strike) == len(off) == 3
    np.testing.assert_allclose(strike[0].get_xdata(), [0.22, 0.22])
    assert to_rgba(strike[0].get_color()) == to_rgba("red")
    assert to_rgba(off[0].get_color()) == to_rgba("green")
    assert strike[0].get_linestyle() == "-" and off[0].get_linestyle() == "--"


def test_trial_default_channels_are_the_plate_forces(trial_factory):
    trial = trial_factory()
    assert xy_view(trial).channels == ["FP1.force"]
    trial.results["KneeAngles"] = np.zeros((trial.n_frames, 3))
    assert xy_view(trial, events=[]).channels == ["KneeAngles"]


def test_events_as_tuples_and_mapping():
    t = np.linspace(0, 1, 5)
    v = xy_view({"a": t}, time=t, events={"Foot Strike": [0.1, 0.6]})
    np.testing.assert_allclose(sorted(ln.get_xdata()[0] for ln in v.event_lines), [0.1, 0.6])
    v = xy_view({"a": t}, time=t, events=[(0.3, "Foot Off", "Left")])
    assert to_rgba(v.event_lines[0].get_color()) == to_rgba("red")


def test_manual_cursor():
    t = np.linspace(0, 1, 5)
    v = xy_view({"a": t, "b": t}, time=t, cursor=True)
    assert len(v.cursor_lines) == 2
    v.set_time(0.75)
    for line in v.cursor_lines:
        np.testing.assert_allclose(line.get_xdata(), [0.75, 0.75])


def test_time_and_frame_index_keywords():
    t = np.linspace(0, 1, 5)
    v = xy_view({"a": t}, time=t, cursor=True)
    np.testing.assert_array_equal(v.lines["a"][0].get_xdata(), t)
    v.set_time(0.25, frame_index=1)
    np.testing.assert_allclose(v.cursor_lines[0].get_xdata(), [0.25, 0.25])
    v.set_time(0.75, frame_index=3)
    assert v.time == 0.75
    with pytest.raises(TypeError):
        xy_view({"a": t}, t=t)


@pytest.mark.parametrize(
    ("data", "kwargs", "match"),
    [
        ({"a": np.zeros(5)}, {"time": np.zeros(4)}, "5 samples"),
        ({"a": np.zeros(5)}, {"channels": ["b"]}, "'b' is not in `data`"),
        ({"a": np.zeros((5, 2, 2))}, {}, r"shape \(n,\) or \(n, k\)"),
        ({"a": np.zeros(5)}, {"events": [object()]}, "not an event"),
        ({"a": np.zeros(5)}, {"cursor": "yes"}, "cursor"),
        ({"a": np.zeros(5)}, {"rate": 0.0}, "rate"),
        ({}, {}, "No channel"),
    ],
)
def test_bad_input(data, kwargs, match):
    with pytest.raises(DataError, match=match):
        xy_view(data, **kwargs)


def test_unknown_trial_channel_lists_what_exists(trial_factory):
    with pytest.raises(DataError, match="'RTOE' is not in the trial.*LASI"):
        xy_view(trial_factory(), channels=["RTOE"])
    with pytest.raises(DataError, match="1 force plates"):
        xy_view(trial_factory(), channels=["FP2.force"])
