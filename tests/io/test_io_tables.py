"""Trials and results to/from DataFrames, CSV and MATLAB .mat files."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import scipy.io
from io_helpers import assert_trials_equal, make_full_trial

from ahbm.errors import DataError, FileFormatError
from ahbm.io.matfile import read_mat, write_mat
from ahbm.io.tables import dataframe_to_results, read_csv, results_to_dataframe, write_csv
from ahbm.io.trial import Trial, analogs_to_dataframe, dataframe_to_trial, trial_to_dataframe


def test_trial_dataframe_layout_matches_points():
    trial = make_full_trial(1)
    df = trial.to_dataframe()
    pd.testing.assert_frame_equal(df, trial_to_dataframe(trial))
    assert isinstance(df.columns, pd.MultiIndex)
    assert df.columns.names == ["marker", "axis"]
    assert df.shape == (trial.n_frames, 3 * trial.n_points)
    np.testing.assert_array_equal(df.index.to_numpy(), trial.time)
    assert df.index[0] == (trial.first_frame - 1) / trial.point_rate
    for j, label in enumerate(trial.point_labels):
        for k, axis in enumerate("xyz"):
            np.testing.assert_array_equal(df[(label, axis)].to_numpy(), trial.points[:, j, k])
    assert df.attrs == {
        "point_rate": 100.0,
        "point_units": "m",
        "first_frame": 11,
        "source": trial.source,
    }


def test_dataframe_round_trip_exact():
    trial = make_full_trial(2)
    back = Trial.from_dataframe(trial.to_dataframe())
    np.testing.assert_array_equal(back.points, trial.points)
    assert back.point_labels == trial.point_labels
    assert back.first_frame == trial.first_frame
    assert back.point_rate == trial.point_rate


def test_dataframe_without_attrs_infers_rate_and_first_frame():
    trial = make_full_trial(3)
    df = trial.to_dataframe()
    df.attrs.clear()
    back = dataframe_to_trial(df)
    assert back.point_rate == pytest.approx(100.0, rel=1e-12)
    assert back.first_frame == 11
    # axes in another order and upper case are accepted
    shuffled = df.rename(columns=str.upper, level=1)
    shuffled = shuffled[shuffled.columns[::-1]]
    again = dataframe_to_trial(shuffled, point_rate=100.0)
    assert again.point_labels == trial.point_labels[::-1]
    np.testing.assert_array_equal(again.points[:, ::-1], trial.points)


def test_analogs_dataframe_round_trip():
    trial = make_full_trial(4)
    adf = analogs_to_dataframe(trial)
    assert list(adf.columns) == trial.analog_labels
    np.testing.assert_array_equal(adf.to_numpy(), trial.analogs)
    np.testing.assert_array_equal(adf.index.to_numpy(), trial.analog_time)
    back = dataframe_to_trial(trial.to_dataframe(), analogs=adf)
    np.testing.assert_array_equal(back.analogs, trial.analogs)
    assert back.analog_rate == 400.0 and back.analog_units == trial.analog_units


def test_results_dataframe_round_trip_shapes():
    rng = np.random.default_rng(5)
    results = {"R": rng.normal(size=(7, 3, 3)), "q": rng.normal(size=(7, 4)), "s": rng.random(7)}
    df = results_to_dataframe(results, index=np.arange(7) / 50.0)
    assert df.shape == (7, 9 + 4 + 1)
    assert ("R", "2,1") in df.columns and ("s", "") in df.columns
    np.testing.assert_array_equal(df[("R", "2,1")].to_numpy(), results["R"][:, 2, 1])
    back = dataframe_to_results(df)
    assert list(back) == list(results)
    for k in results:
        np.testing.assert_array_equal(back[k], results[k])


def test_results_of_different_lengths_rejected():
    with pytest.raises(DataError, match="'b' has 3 rows"):
        results_to_dataframe({"a": np.zeros(4), "b": np.zeros(3)})
    with pytest.raises(DataError, match="scalar"):
        results_to_dataframe({"a": 1.0})


def test_points_need_multiindex():
    with pytest.raises(DataError, match="MultiIndex"):
        dataframe_to_trial(pd.DataFrame({"a": [1.0]}))
    dup = pd.MultiIndex.from_product([["A", "A"], ["x", "y", "z"]])
    with pytest.raises(DataError, match="duplicate"):
        dataframe_to_trial(pd.DataFrame(np.zeros((2, 6)), columns=dup), point_rate=10.0)
    cols = pd.MultiIndex.from_tuples([("A", "x"), ("A", "y")])
    with pytest.raises(DataError, match="expected exactly x, y, z"):
        dataframe_to_trial(pd.DataFrame([[1.0, 2.0]], columns=cols), point_rate=10.0)


def test_csv_round_trip_points_and_results(tmp_path):
    trial = make_full_trial(6)
    write_csv(trial, tmp_path / "p.csv")
    df = read_csv(tmp_path / "p.csv")
    assert df.attrs["point_rate"] == 100.0 and df.attrs["first_frame"] == 11
    back = dataframe_to_trial(df)
    np.testing.assert_array_equal(back.points, trial.points)  # NaN-aware, exact
    assert back.point_labels == trial.point_labels
    assert back.source == trial.source

    rdf = results_to_dataframe({k: v for k, v in trial.results.items() if k != "grf"})
    write_csv(rdf, tmp_path / "r.csv")
    res = dataframe_to_results(read_csv(tmp_path / "r.csv"))
    for k in ("knee_angle", "rotations", "speed"):
        np.testing.assert_array_equal(res[k], trial.results[k])


def test_csv_text_is_readable_by_plain_pandas(tmp_path):
    trial = make_full_trial(7, n_points=2)
    write_csv(trial, tmp_path / "p.csv")
    plain = pd.read_csv(tmp_path / "p.csv", comment=None, skiprows=6, header=[0, 1], index_col=0)
    np.testing.assert_array_equal(plain.to_numpy(), trial.points.reshape(trial.n_frames, -1))


def test_read_csv_bad_file(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n1,zz\n")
    with pytest.raises(FileFormatError, match="non-numeric"):
        read_csv(tmp_path / "x.csv")
    with pytest.raises(FileFormatError, match="Cannot read CSV"):
        read_csv(tmp_path / "absent.csv")


def test_mat_round_trip_all_fields(tmp_path):
    trial = make_full_trial(8)
    write_mat(trial, tmp_path / "t.mat")
    assert_trials_equal(trial, read_mat(tmp_path / "t.mat"))


def test_mat_is_plain_matlab_struct(tmp_path):
    """An independent reader (scipy, as MATLAB would) sees arrays and cell strings."""
    trial = make_full_trial(9)
    write_mat(trial, tmp_path / "t.mat")
    m = scipy.io.loadmat(tmp_path / "t.mat", simplify_cells=True)["trial"]
    np.testing.assert_array_equal(m["points"], trial.points)
    assert list(m["point_labels"]) == trial.point_labels
    assert m["point_rate"] == 100.0
    assert list(m["events"]["label"]) == [e.label for e in trial.events]
    np.testing.assert_array_equal(m["force_plates"][1]["force"], trial.force_plates[1].force)
    np.testing.assert_array_equal(
        m["parameters"]["values"][0]["MATRIX"], trial.parameters["POINT"]["MATRIX"]
    )


def test_read_mat_rejects_foreign_files(tmp_path):
    scipy.io.savemat(tmp_path / "other.mat", {"x": np.ones(3)})
    with pytest.raises(FileFormatError, match="no variable 'trial'"):
        read_mat(tmp_path / "other.mat")
    scipy.io.savemat(tmp_path / "other2.mat", {"trial": {"a": 1}})
    with pytest.raises(FileFormatError, match="not written by ahbm"):
        read_mat(tmp_path / "other2.mat")
    (tmp_path / "junk.mat").write_bytes(b"not a mat file at all" * 10)
    with pytest.raises(FileFormatError, match="Cannot read MATLAB file"):
        read_mat(tmp_path / "junk.mat")


def test_write_mat_unsupported_value_leaves_no_file(tmp_path):
    trial = make_full_trial(10)
    trial.results["bad"] = object()
    with pytest.raises(DataError, match="results/bad"):
        write_mat(trial, tmp_path / "t.mat")
    assert os.listdir(tmp_path) == []
