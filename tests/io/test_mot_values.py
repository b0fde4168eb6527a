"""write_mot_values (plain arrays to MOT/STO) and osim_motion_types (the coordinate
table's motion types without the table)."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.io import OpenSimTable
from ahbm.opensim import (
    osim_coordinates,
    osim_motion_types,
    read_mot,
    read_osim,
    write_mot,
    write_mot_values,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
SUBJECT01 = SHARED / "opensim"


def test_arrays_are_written_as_write_mot_writes_their_table(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(0)
    v = rng.normal(size=(7, 3)) * 100
    t = np.arange(7) / 100.0
    cols = ["a_moment", "b_force", "c_moment"]
    write_mot_values(v, tmp_path / "v.sto", time=t, columns=cols, name="Inverse Dynamics")
    df = pd.DataFrame(v, columns=cols, index=pd.Index(t, name="time"))
    write_mot(OpenSimTable(df, name="Inverse Dynamics"), tmp_path / "t.sto", in_degrees=False,
              angle_columns=[])  # fmt: skip
    assert (tmp_path / "v.sto").read_text() == (tmp_path / "t.sto").read_text()
    back = read_mot(tmp_path / "v.sto")
    np.testing.assert_array_equal(back.data.to_numpy(), v)  # shortest round-trip text
    np.testing.assert_array_equal(back.data.index.to_numpy(), t)
    write_mot_values(v[:, :1], tmp_path / "deg.mot", time=t, columns=["knee"], in_degrees=True)
    assert "inDegrees=yes" in (tmp_path / "deg.mot").read_text()
    assert (tmp_path / "deg.mot").read_text().splitlines()[0] == "deg"  # the stem by default


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"values": np.zeros((3, 2)), "columns": ["a"]}, r"shape \(3, 2\).*must be \(3, 1\)"),
        ({"columns": ["a", "a"], "values": np.zeros((3, 2))}, "duplicate labels"),
        ({"columns": ["a\tb"]}, "cannot be written"),
        ({"columns": "abc"}, "sequence of labels"),
        ({"columns": [1]}, "str labels"),
        ({"values": [["x"], ["y"], ["z"]]}, "numbers only"),
        ({"name": 3}, "`name`"),
        ({"float_format": "%d%d"}, "float_format"),
    ],
)
def test_bad_arguments_are_refused_before_writing(tmp_path, kwargs, match):
    args = {"values": np.zeros((3, 1)), "time": [0.0, 0.1, 0.2], "columns": ["a"]}
    args.update(kwargs)
    values = args.pop("values")
    with pytest.raises(DataError, match=match):
        write_mot_values(values, tmp_path / "x.sto", **args)
    assert not list(tmp_path.iterdir())
    with pytest.raises(DataError, match="`path`"):
        write_mot_values(np.zeros((3, 1)), None, time=[0, 1, 2], columns=["a"])


@pytest.mark.parametrize(
    "path",
    [*sorted(DATA.glob("*.osim")), SUBJECT01 / "subject01.osim"],
    ids=lambda p: p.name,
)
def test_motion_types_equal_the_coordinate_table(path):
    if not path.exists():
        pytest.skip(f"{path} is absent")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        for kwargs in ({}, {"muscles": False, "forces": "summary", "markers": False}):
            model = read_osim(path, **kwargs)
            table = osim_coordinates(model)
            assert osim_motion_types(model) == table["motion_type"].to_dict()
    with pytest.raises(ModelError, match="expects a Model"):
        osim_motion_types("model.osim")
