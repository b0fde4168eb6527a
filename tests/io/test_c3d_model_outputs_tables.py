"""C3D model outputs (``Trial.point_kinds``) through CSV, DataFrames and MATLAB files.

A hand-built C3D file (tests/io/test_c3d_model_outputs.py) holds a knee angle in
degrees, a hip moment in N mm, a power, a force and a length scalar; after
C3D -> CSV/.mat -> Trial -> C3D the values and their kinds are unchanged and the
file written at the end declares the units its values are in (checked with ezc3d).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_c3d_model_outputs import _model_file  # tests/io is on sys.path under pytest

from ahbm.errors import DataError, FileFormatError
from ahbm.io import (
    Trial,
    dataframe_to_trial,
    read_c3d,
    read_csv,
    read_mat,
    trial_to_dataframe,
    write_c3d,
    write_csv,
    write_mat,
)

KINDS = {
    "LKneeAngles": ("angle", "rad"),
    "LHipMoment": ("moment", "N m"),
    "LAnklePower": ("power", "W"),
    "LGRF": ("force", "N"),
    "LLegLen": ("scalar", "m"),
}


def _trial():
    raw, labels, content = _model_file()
    t = read_c3d(content)
    assert t.point_kinds == KINDS
    return raw, t


def _check_back_in_c3d(trial, tmp_path, raw):
    """Write `trial` to C3D: model outputs stored as held, in the unit the file declares."""
    path = tmp_path / "back.c3d"
    write_c3d(trial, path)
    again = read_c3d(path)
    assert again.point_kinds == KINDS
    np.testing.assert_allclose(again.points[0, 1, 0], np.deg2rad(57.9), rtol=1e-6)
    ezc3d = pytest.importorskip("ezc3d")
    c = ezc3d.c3d(str(path))
    stored = c["data"]["points"][:3, :, 0].T  # (points, xyz) of frame 0, file units
    np.testing.assert_allclose(stored[1, 0], np.deg2rad(57.9), rtol=1e-5)  # rad ...
    np.testing.assert_allclose(stored[2], raw[0, 2, :3] * 0.1e-3, rtol=1e-5)  # N m ...
    units = c["parameters"]["POINT"]
    assert units["ANGLE_UNITS"]["value"] == ["rad"]  # ... as the file says, not as lengths
    assert units["MOMENT_UNITS"]["value"] == ["Nm"]


def test_point_kinds_through_a_dataframe_and_csv(tmp_path):
    raw, t = _trial()
    df = trial_to_dataframe(t)
    assert df.attrs["point_kinds"]["LKneeAngles"] == ["angle", "rad"]
    back = dataframe_to_trial(df)
    assert back.point_kinds == KINDS
    write_csv(t, tmp_path / "walk.csv")
    u = dataframe_to_trial(read_csv(tmp_path / "walk.csv"))
    assert u.point_kinds == KINDS
    np.testing.assert_array_equal(u.points, t.points)
    np.testing.assert_allclose(u.points[0, 1, 0], np.deg2rad(57.9), rtol=1e-6)  # rad
    np.testing.assert_allclose(u.points[0, 2], [1.2345, 0.0, -0.2], rtol=1e-5)  # N m
    _check_back_in_c3d(u, tmp_path, raw)


def test_point_kinds_through_a_mat_file(tmp_path):
    raw, t = _trial()
    write_mat(t, tmp_path / "walk.mat")
    u = read_mat(tmp_path / "walk.mat")
    assert u.point_kinds == KINDS
    np.testing.assert_array_equal(u.points, t.points)
    _check_back_in_c3d(u, tmp_path, raw)
    # in MATLAB: a struct of columns, labels need not be identifiers
    scipy_io = pytest.importorskip("scipy.io")
    kinds = scipy_io.loadmat(tmp_path / "walk.mat")["trial"]["point_kinds"][0, 0]
    labels = [str(c[0]) for c in kinds["label"][0, 0].ravel()]
    units = [str(c[0]) for c in kinds["unit"][0, 0].ravel()]
    assert labels == list(KINDS) and units[1] == "N m"


def test_no_kinds_stay_none(tmp_path):
    t = Trial(points=np.ones((3, 1, 3)), point_labels=["A"], point_rate=100.0)
    assert "point_kinds" not in trial_to_dataframe(t).attrs
    write_mat(t, tmp_path / "a.mat")
    assert read_mat(tmp_path / "a.mat").point_kinds == {}


def test_bad_kinds_are_refused(tmp_path, monkeypatch):
    _, t = _trial()
    df = trial_to_dataframe(t)
    df.attrs["point_kinds"] = {"Nope": ["angle", "rad"]}
    with pytest.raises(DataError, match="'Nope', which is not a point label"):
        dataframe_to_trial(df)
    df.attrs["point_kinds"] = {"LKneeAngles": ["joint", "rad"]}
    with pytest.raises(DataError, match="kind one of"):
        dataframe_to_trial(df)
    t.point_kinds = {"LKneeAngles": ("angle",)}
    with pytest.raises(DataError, match="point_kinds"):
        write_mat(t, tmp_path / "x.mat")
    # a file whose kinds name no point is refused with the file's name
    import ahbm.io.matfile as matfile

    tree = matfile._trial_tree

    def wrong_label(trial):
        out = tree(trial)
        out["point_kinds"]["label"][0] = "Zzz"
        return out

    t.point_kinds = dict(KINDS)
    monkeypatch.setattr(matfile, "_trial_tree", wrong_label)
    write_mat(t, tmp_path / "bad.mat")
    with pytest.raises(FileFormatError, match=r"bad\.mat.*'Zzz', which is not a point label"):
        read_mat(tmp_path / "bad.mat")
