"""Signal functions given a Trial return a Trial: labels, time axis, events and units kept.

The numbers are checked against the same function on the bare array with
``time=trial.time`` (identity) and against closed forms (derivatives of a
sine, the cut points of a signal equal to its own time).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from ahbm.analysis import (
    butter_filtfilt,
    central_difference,
    critically_damped_filtfilt,
    fill_gaps,
    fill_gaps_rigid,
    marker_derivatives,
    moving_average,
    savgol_derivative,
    spline_derivative,
    time_normalize,
)
from ahbm.errors import AhbmWarning, DataError, MissingDependencyError
from ahbm.io import Event, Trial

RATE, FIRST = 100.0, 51  # frame 51 is at 0.5 s


def _trial(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t = (np.arange(n) + FIRST - 1) / RATE
    pts = np.stack([np.sin(2 * np.pi * t), np.cos(2 * np.pi * t), t], axis=-1)[:, None, :]
    pts = pts + np.zeros((n, 3, 3)) + 0.001 * rng.normal(size=(n, 3, 3))
    return Trial(
        points=pts,
        point_labels=["LASI", "RASI", "LKneeAngles"],
        point_rate=RATE,
        first_frame=FIRST,
        point_residuals=np.full((n, 3), 0.5),
        point_mask=np.ones((n, 3), bool),
        point_kinds={"LKneeAngles": ("angle", "rad")},
        analogs=rng.normal(size=(4 * n, 2)),
        analog_labels=["Fz", "EMG"],
        analog_rate=4 * RATE,
        events=[Event("Foot Strike", 0.7, "Left"), Event("Foot Off", 1.3, "Left"),
                Event("Foot Strike", 1.7, "Left"), Event("Foot Strike", 2.7, "Left")],
        subject={"mass": 70.0},
        source="walk.c3d",
    )  # fmt: skip


def _same_except_points(a: Trial, b: Trial):
    assert a.point_labels == b.point_labels
    assert (a.point_rate, a.first_frame, a.source) == (b.point_rate, b.first_frame, b.source)
    assert a.events == b.events and a.subject == b.subject
    np.testing.assert_array_equal(a.analogs, b.analogs)
    assert a.analog_labels == b.analog_labels
    np.testing.assert_array_equal(a.time, b.time)


@pytest.mark.parametrize(
    "func, kwargs",
    [
        (butter_filtfilt, {"cutoff": 6.0}),
        (critically_damped_filtfilt, {"cutoff": 6.0}),
        (moving_average, {"window": 5}),
    ],
)
def test_filters_return_a_trial_with_the_array_result(func, kwargs):
    t = _trial()
    before = t.points.copy()
    out = func(t, **kwargs)
    assert isinstance(out, Trial)
    _same_except_points(out, t)
    assert out.point_units == "m" and out.point_kinds == t.point_kinds
    takes_time = func is not moving_average
    expected = func(t.points, **kwargs, **({"time": t.time} if takes_time else {}))
    np.testing.assert_array_equal(out.points, expected)
    np.testing.assert_array_equal(t.points, before)  # the input is not changed
    np.testing.assert_array_equal(out.point_residuals, t.point_residuals)


def test_filter_with_gaps_keeps_them_missing():
    t = _trial()
    t.points[100:110, 1] = np.nan
    with pytest.warns(AhbmWarning, match="30 NaN samples") as caught:
        out = butter_filtfilt(t, cutoff=6.0, nan_policy="segments")
    assert caught[0].filename == __file__  # attributed to the caller, not to ahbm
    assert not out.point_mask[100:110, 1].any() and out.point_mask[:100].all()
    assert np.isnan(out.point_residuals[100:110, 1]).all()


def test_fill_gaps_reports_the_trials_labels():
    t = _trial()
    t.points[100:104, 0] = np.nan
    filled, report = fill_gaps(t, max_gap=10)
    assert isinstance(filled, Trial) and [r.label for r in report] == ["LASI"]
    expected, _ = fill_gaps(t.points, max_gap=10, time=t.time)
    np.testing.assert_array_equal(filled.points, expected)
    assert filled.point_mask.all()
    _same_except_points(filled, t)


def test_derivatives_have_derivative_units_and_the_closed_form():
    t = _trial()
    clean = Trial(points=np.stack([np.sin(2 * np.pi * t.time)] * 3, -1)[:, None, :]
                  .repeat(3, axis=1), point_labels=t.point_labels, point_rate=RATE,
                  first_frame=FIRST, point_kinds=dict(t.point_kinds))  # fmt: skip
    v = central_difference(clean)
    assert v.point_units == "m/s" and v.point_kinds == {"LKneeAngles": ("angle", "rad/s")}
    w, h = 2 * np.pi, 1 / RATE
    exact = w * np.cos(w * clean.time)
    # a central difference of sin(w t) is exactly sin(w h) / h cos(w t)
    np.testing.assert_allclose(
        v.points[1:-1, 0, 0], (np.sin(w * h) / h * np.cos(w * clean.time))[1:-1], atol=1e-9
    )
    assert v.point_residuals is None
    a = spline_derivative(clean, order=2)
    assert a.point_units == "m/s^2" and a.point_kinds["LKneeAngles"] == ("angle", "rad/s^2")
    exact2 = -((2 * np.pi) ** 2) * np.sin(2 * np.pi * clean.time)
    np.testing.assert_allclose(a.points[5:-5, 2, 1], exact2[5:-5], atol=1e-2)
    s = savgol_derivative(clean, window=11)
    np.testing.assert_allclose(s.points[10:-10, 0, 2], exact[10:-10], rtol=1e-3, atol=1e-3)


def test_time_normalize_uses_the_time_axis_with_the_first_frame_offset():
    n = 300
    time = (np.arange(n) + FIRST - 1) / RATE
    t = Trial(points=np.repeat(time[:, None, None], 3, axis=2), point_labels=["T"],
              point_rate=RATE, first_frame=FIRST, events=_trial().events)  # fmt: skip
    strikes = [e for e in t.events if e.label == "Foot Strike"]  # 0.7, 1.7, 2.7 s
    cycles = time_normalize(t, strikes, n_points=101)
    assert len(cycles) == 2 and all(isinstance(c, Trial) for c in cycles)
    # the signal equals its own time: cycle k starts at its event, ends at the next
    np.testing.assert_allclose(cycles[0].points[[0, 50, 100], 0, 0], [0.7, 1.2, 1.7], atol=1e-12)
    np.testing.assert_allclose(cycles[1].points[0, 0, 0], 1.7, atol=1e-12)
    np.testing.assert_allclose(cycles[0].results["cycle_time"], np.linspace(0.7, 1.7, 101))
    assert cycles[0].time[0] == 0.0 and cycles[0].time[-1] == pytest.approx(100.0)
    assert [(e.label, round(e.time, 9)) for e in cycles[0].events] == [
        ("Foot Strike", 0.0), ("Foot Off", 60.0), ("Foot Strike", 100.0)]  # fmt: skip
    assert cycles[0].analogs.shape == (0, 0) and cycles[0].point_labels == ["T"]
    # boundaries given as Events (detected, not in the trial) come along in percent
    t.events = []
    assert [e.time for e in time_normalize(t, strikes)[1].events] == [0.0, 100.0]
    # the same with times and time=trial.time; rate= puts sample 0 at 0 s: shifted by 0.5 s
    arr = time_normalize(t.points, [0.7, 1.7, 2.7], time=t.time)
    np.testing.assert_array_equal(arr[0], cycles[0].points)
    shifted = time_normalize(t.points, [0.7, 1.7, 2.7], rate=RATE)
    np.testing.assert_allclose(shifted[0, 0, 0, 0], 1.2, atol=1e-12)


def test_a_trial_carries_its_own_time():
    t = _trial()
    with pytest.raises(DataError, match="`rate` is for arrays.*drop `rate`"):
        butter_filtfilt(t, rate=100.0, cutoff=6.0)
    with pytest.raises(DataError, match="`time` is for arrays"):
        central_difference(t, time=t.time)
    with pytest.raises(DataError, match="first axis"):
        moving_average(t, 3, axis=1)
    t.point_rate = 0.0
    with pytest.raises(DataError, match="no point_rate"):
        butter_filtfilt(t, cutoff=6.0)


def test_to_dataframe_and_to_xarray(monkeypatch):
    t = _trial(n=10)
    df = t.to_dataframe()
    assert df.index[0] == pytest.approx(0.5) and df.attrs["first_frame"] == FIRST
    monkeypatch.setitem(sys.modules, "xarray", None)  # xarray absent
    with pytest.raises(MissingDependencyError, match="pip install xarray"):
        t.to_xarray()

    calls = {}

    class DataArray:  # the part of xarray's API that to_xarray uses
        def __init__(self, data, *, dims, coords, name, attrs):
            calls.update(data=data, dims=dims, coords=coords, name=name, attrs=attrs)

    monkeypatch.setitem(sys.modules, "xarray", types.SimpleNamespace(DataArray=DataArray))
    t.to_xarray()
    assert calls["dims"] == ("time", "point", "axis")
    np.testing.assert_array_equal(calls["coords"]["time"], t.time)
    assert calls["coords"]["point"] == t.point_labels
    assert calls["attrs"]["units"] == "m" and calls["attrs"]["first_frame"] == FIRST
    assert calls["attrs"]["point_kinds"] == {"LKneeAngles": ["angle", "rad"]}
    assert calls["attrs"]["events"][0] == ["Foot Strike", "Left", 0.7]


def test_rigid_fill_by_label_and_both_marker_derivatives():
    t = _trial()
    rng = np.random.default_rng(4)
    offsets = rng.normal(size=(4, 3))
    t.points = t.points[:, :1, :] * 0 + offsets[None, :3] + t.points[:, :1, :]  # 3 rigid markers
    t.points = np.concatenate([t.points, t.points[:, :1] + offsets[3]], axis=1)
    t.point_labels = ["A", "B", "C", "D"]
    t.point_residuals, t.point_mask, t.point_kinds = None, None, {}
    truth = t.points[:, 3].copy()
    t.points[120:125, 3] = np.nan
    filled, report = fill_gaps_rigid(t, "D", ["A", "B", "C"], max_gap=10)
    assert isinstance(filled, Trial) and report[0].label == "D" and report[0].filled
    np.testing.assert_allclose(filled.points[120:125, 3], truth[120:125], atol=1e-12)
    v, a = marker_derivatives(filled)
    assert (v.point_units, a.point_units) == ("m/s", "m/s^2")
    np.testing.assert_array_equal(v.points, central_difference(filled).points)
    np.testing.assert_array_equal(a.points, central_difference(filled, order=2).points)
