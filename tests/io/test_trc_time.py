"""The Time column of TRC files: kept as written (OpenSim's times), checked, written back.

OpenSim 4.6 (measured through tests/peers/opensim_oracle.py) takes a marker file's
times from its Time column as written (``0.017`` for 1/60 s, an offset or an irregular
column too), writes NaN times for an empty column and refuses times that do not
increase.
"""

from __future__ import annotations

import numpy as np
import pytest
from sample_data import SHARED, needs_shared

from ahbm.errors import AhbmWarning
from ahbm.io import Trial, read_trc, trc_time, write_trc

HEADER = (
    "PathFileType\t4\t(X/Y/Z)\tx.trc\n"
    "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame"
    "\tOrigNumFrames\n60.00\t60.00\t4\t1\tmm\t60.00\t1\t4\nFrame#\tTime\tM\t\t\n"
    "\t\tX1\tY1\tZ1\n\n"
)


def _trc(tmp_path, times, first=1):
    rows = "".join(f"{first + k}\t{t}\t1\t2\t3\n" for k, t in enumerate(times))
    path = tmp_path / "m.trc"
    path.write_text(HEADER + rows)
    return path


def test_rounded_time_column_is_kept_as_written(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", AhbmWarning)  # half a frame of rounding: no warning
        trial = read_trc(_trc(tmp_path, ["0.000000", "0.017000", "0.033000", "0.050000"]))
    assert trc_time(trial).tolist() == [0.0, 0.017, 0.033, 0.05]
    np.testing.assert_array_equal(trial.time, np.arange(4) / 60.0)  # a Trial keeps its rate
    assert trial.parameters["TRC"]["Time"].tolist() == [0.0, 0.017, 0.033, 0.05]
    # written back as read, and read back identical
    write_trc(trial, tmp_path / "copy.trc")
    assert read_trc(tmp_path / "copy.trc").parameters["TRC"]["Time"].tolist() == [
        0.0, 0.017, 0.033, 0.05,
    ]  # fmt: skip


@pytest.mark.parametrize(
    "times, expected, match",
    [
        (["1.0", "1.01", "1.02", "1.03"], [1.0, 1.01, 1.02, 1.03],
         r"data row 1, Frame# 1: 1 s instead of 0 s at 60 Hz\); trial.time follows"),
        (["0.0", "0.01", "0.05", "0.06"], [0.0, 0.01, 0.05, 0.06],
         r"data row 3, Frame# 3: 0.05 s instead of 0.0333333 s"),
    ],
)  # fmt: skip
def test_time_column_off_the_rate_is_used_with_a_warning(tmp_path, times, expected, match):
    with pytest.warns(AhbmWarning, match=match):
        trial = read_trc(_trc(tmp_path, times))
    assert trc_time(trial).tolist() == expected  # as OpenSim's tools
    np.testing.assert_array_equal(trial.time, np.arange(4) / 60.0)


@pytest.mark.parametrize(
    "times, match",
    [
        (["", "", "", ""], r"no number in 4 of 4 data rows \(first: data row 1, Frame# 11\)"),
        (["0.0", "0.02", "0.01", "0.03"],
         r"does not increase at data row 3 \(Frame# 13: 0.02 s, then 0.01 s\); OpenSim refuses"),
        (["0.0", "0.01", "0.01", "0.03"], r"does not increase at data row 3"),
    ],
)  # fmt: skip
def test_unusable_time_column_falls_back_on_the_rate(tmp_path, times, match):
    with pytest.warns(AhbmWarning, match=match):
        trial = read_trc(_trc(tmp_path, times, first=11))
    assert "Time" not in trial.parameters["TRC"]
    np.testing.assert_array_equal(trc_time(trial), (10 + np.arange(4)) / 60.0)


def test_trc_time_ignores_a_column_that_no_longer_fits():
    pts = np.zeros((3, 1, 3))
    col = {"DataRate": 60.0, "Time": np.array([0.0, 0.017, 0.033])}
    fits = Trial(points=pts, point_labels=["M"], point_rate=60.0, parameters={"TRC": col})
    assert trc_time(fits).tolist() == [0.0, 0.017, 0.033]
    other_rate = Trial(points=pts, point_labels=["M"], point_rate=100.0, parameters={"TRC": col})
    np.testing.assert_array_equal(trc_time(other_rate), np.arange(3) / 100.0)
    fewer = Trial(points=pts[:2], point_labels=["M"], point_rate=60.0, parameters={"TRC": col})
    np.testing.assert_array_equal(trc_time(fewer), np.arange(2) / 60.0)
    plain = Trial(points=pts, point_labels=["M"], point_rate=60.0)
    np.testing.assert_array_equal(trc_time(plain), plain.time)


@needs_shared
def test_shared_walk_times_are_the_time_column():
    path = SHARED / "opensim" / "subject01_walk.trc"
    trial = read_trc(path)
    lines = path.read_text().splitlines()[6:]
    written = [float(s.split("\t")[1]) for s in lines if s.strip()]
    assert trc_time(trial).tolist() == written
    assert written[31] == 0.517 and abs(trial.time[31] - 31 / 60) < 1e-15
