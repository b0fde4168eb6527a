"""The HDF5 trial store: lossless round trips, several trials, atomic writes, bad files."""

from __future__ import annotations

import hashlib
import os

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_helpers import DATA, assert_trials_equal, assert_values_equal, make_full_trial

import ahbm.io.hdf5 as store
from ahbm.errors import DataError, FileFormatError
from ahbm.io.hdf5 import FORMAT_VERSION, list_trials, load_trial, save_trial
from ahbm.io.trial import Trial


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip_all_fields(tmp_path):
    trial = make_full_trial(0)
    name = save_trial(trial, tmp_path / "s.h5")
    assert name == "walk01"  # the stem of trial.source
    assert_trials_equal(trial, load_trial(tmp_path / "s.h5"))


def test_several_trials_per_file_in_order(tmp_path):
    path = tmp_path / "s.h5"
    trials = {f"t{i}": make_full_trial(i, n_frames=10 + i) for i in (3, 1, 2)}
    for name, trial in trials.items():
        save_trial(trial, path, name=name)
    assert list_trials(path) == ["t3", "t1", "t2"]
    for name, trial in trials.items():
        assert_trials_equal(trial, load_trial(path, name))
    with pytest.raises(DataError, match="holds 3 trials .*t3, t1, t2"):
        load_trial(path)
    with pytest.raises(DataError, match="No trial 'zz'"):
        load_trial(path, "zz")


def test_layout_units_compression_chunks(tmp_path):
    trial = make_full_trial(1, n_frames=3000, n_points=20)
    path = tmp_path / "s.h5"
    save_trial(trial, path, name="big")
    with h5py.File(path, "r") as f:
        assert f.attrs["ahbm_format"] == "ahbm-trial-store"
        assert f.attrs["ahbm_format_version"] == FORMAT_VERSION
        g = f["trials/big"]
        assert g.attrs["point_rate"] == 100.0
        pts = g["points"]
        assert pts.attrs["units"] == "m"
        assert pts.compression == "gzip"
        assert pts.chunks[1:] == (20, 3)  # chunked along time only
        assert pts.chunks[0] < 3000
        assert g["force_plates/0/force"].attrs["units"] == "N"
        assert g["events/time"].attrs["units"] == "s"
        assert g["results/knee_angle"].compression == "gzip"
        # the C3D parameter tree is a tree of groups and typed datasets
        assert g["parameters/POINT/LABELS"].attrs["ahbm_type"] == "list_str"
        assert g["parameters/POINT/RATE"].dtype == np.float32
        assert g["parameters/weird%2Fkey"].attrs["ahbm_key"] == "weird/key"


def test_overwrite_rules(tmp_path):
    path = tmp_path / "s.h5"
    save_trial(make_full_trial(1), path, name="a")
    save_trial(make_full_trial(2), path, name="b")
    with pytest.raises(DataError, match="already exists.*overwrite=True"):
        save_trial(make_full_trial(3), path, name="a")
    size = path.stat().st_size
    for _ in range(3):  # replacing rebuilds the file: it does not grow
        save_trial(make_full_trial(3), path, name="a", overwrite=True)
    assert path.stat().st_size <= size * 1.05
    assert list_trials(path) == ["b", "a"]
    assert_trials_equal(make_full_trial(3), load_trial(path, "a"))
    assert_trials_equal(make_full_trial(2), load_trial(path, "b"))


@pytest.mark.parametrize("exc", [RuntimeError("simulated crash"), KeyboardInterrupt()])
def test_failed_write_leaves_existing_file_intact(tmp_path, monkeypatch, exc):
    path = tmp_path / "s.h5"
    save_trial(make_full_trial(1), path, name="a")
    before = _digest(path)
    real = store._write_trial_group

    def fail_midway(parent, name, trial):
        real(parent, name, trial)  # data is half-way into the temporary file...
        parent.file.flush()
        raise exc

    monkeypatch.setattr(store, "_write_trial_group", fail_midway)
    for kwargs in ({"name": "b"}, {"name": "a", "overwrite": True}):
        with pytest.raises(type(exc)):
            save_trial(make_full_trial(2), path, **kwargs)
        assert _digest(path) == before
        assert os.listdir(tmp_path) == ["s.h5"]  # no temporary file left
    monkeypatch.undo()
    assert list_trials(path) == ["a"]
    assert_trials_equal(make_full_trial(1), load_trial(path))


def test_failed_first_write_creates_nothing(tmp_path):
    trial = make_full_trial(1)
    trial.results["bad"] = {"x": object()}
    with pytest.raises(DataError, match=r"trial.results/bad/x"):
        save_trial(trial, tmp_path / "new.h5")
    assert os.listdir(tmp_path) == []


def test_interrupted_replace_never_truncates(tmp_path, monkeypatch):
    """Even if the rename itself fails, the target keeps its old content."""
    path = tmp_path / "s.h5"
    save_trial(make_full_trial(1), path, name="a")
    before = _digest(path)

    def no_replace(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(DataError, match="rename failed") as info:  # the OSError, naming the file
        save_trial(make_full_trial(2), path, name="b")
    assert isinstance(info.value.__cause__, OSError)
    assert _digest(path) == before
    assert os.listdir(tmp_path) == ["s.h5"]


def test_non_hdf5_and_foreign_hdf5_files(tmp_path):
    text = tmp_path / "notes.h5"
    text.write_text("just text, not HDF5")
    with pytest.raises(FileFormatError, match="not an HDF5 file"):
        load_trial(text)
    with pytest.raises(FileFormatError, match="not an HDF5 file"):
        save_trial(make_full_trial(1), text)
    assert text.read_text() == "just text, not HDF5"  # never touched

    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["data"] = np.arange(3)
    before = _digest(foreign)
    with pytest.raises(FileFormatError, match="not an ahbm trial store"):
        load_trial(foreign)
    with pytest.raises(FileFormatError, match="not an ahbm trial store"):
        list_trials(foreign)
    with pytest.raises(FileFormatError, match="not an ahbm trial store"):
        save_trial(make_full_trial(1), foreign)
    assert _digest(foreign) == before
    with pytest.raises(FileFormatError, match="does not exist"):
        load_trial(tmp_path / "absent.h5")


def test_newer_major_version_rejected_newer_minor_accepted(tmp_path):
    path = tmp_path / "s.h5"
    trial = make_full_trial(4)
    save_trial(trial, path, name="a")
    major = int(FORMAT_VERSION.split(".")[0])
    with h5py.File(path, "r+") as f:  # a future minor version adds items we do not know
        f.attrs["ahbm_format_version"] = f"{major}.9"
        g = f["trials/a"]
        g["future_dataset"] = np.arange(4)
        g.attrs["future_attribute"] = "x"
        g.create_group("future_group")
        f.create_group("catalogue")
    assert_trials_equal(trial, load_trial(path, "a"))
    save_trial(trial, path, name="b")  # adding keeps the newer minor version number
    with h5py.File(path, "r") as f:
        assert f.attrs["ahbm_format_version"] == f"{major}.9"
    with h5py.File(path, "r+") as f:
        f.attrs["ahbm_format_version"] = f"{major + 1}.0"
    with pytest.raises(FileFormatError, match="upgrade ahbm"):
        load_trial(path, "a")


def test_damaged_trial_group(tmp_path):
    path = tmp_path / "s.h5"
    save_trial(make_full_trial(5), path, name="a")
    with h5py.File(path, "r+") as f:
        del f["trials/a/points"]
    with pytest.raises(FileFormatError, match="damaged or incomplete"):
        load_trial(path)


@pytest.mark.parametrize("name", ["", "a/b", ".", 3])
def test_invalid_names(tmp_path, name):
    with pytest.raises(DataError, match="Invalid trial name"):
        save_trial(make_full_trial(1), tmp_path / "s.h5", name=name)


def test_opensim_table_as_result(tmp_path):
    import pandas as pd

    from ahbm.io import OpenSimTable

    rng = np.random.default_rng(8)
    table = OpenSimTable(
        data=pd.DataFrame(
            rng.normal(size=(6, 2)),
            columns=["knee_angle_r", "pelvis_tx"],
            index=pd.Index(np.arange(6) / 60.0, name="time"),
        ),
        name="Coordinates",
        in_degrees=True,
        angle_columns=["knee_angle_r"],
        header={"version": "1"},
        comments=["Angles are in degrees."],
        source="ik.mot",
    )
    trial = make_full_trial(8)
    trial.results["ik"] = table
    save_trial(trial, tmp_path / "s.h5")
    back = load_trial(tmp_path / "s.h5").results["ik"]
    assert isinstance(back, OpenSimTable)
    pd.testing.assert_frame_equal(back.data, table.data, check_exact=True)
    for f in ("name", "in_degrees", "angle_columns", "header", "comments", "source"):
        assert getattr(back, f) == getattr(table, f)


def test_empty_trial_round_trip(tmp_path):
    save_trial(Trial(), tmp_path / "e.h5", name="empty")
    assert_trials_equal(Trial(), load_trial(tmp_path / "e.h5"))


@pytest.mark.skipif(not (DATA / "c3d").is_dir(), reason="shared C3D data folder is absent")
def test_c3d_trial_with_parameter_tree_round_trip(tmp_path):
    c3d = pytest.importorskip("ahbm.io.c3d")
    trial = c3d.read_c3d(DATA / "c3d" / "gait-raw.c3d")
    save_trial(trial, tmp_path / "g.h5")
    back = load_trial(tmp_path / "g.h5", "gait-raw")
    assert_trials_equal(trial, back)
    assert back.parameters["POINT"]["LABELS"] == trial.point_labels


# a hypothesis round trip of arbitrary parameter trees (what C3D/users put in dicts)
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.lists(st.text(max_size=5), max_size=4),
    st.builds(
        lambda n, s: np.random.default_rng(s).normal(size=n).astype(np.float32),
        st.integers(0, 5),
        st.integers(0, 100),
    ),
    st.builds(np.int16, st.integers(-1000, 1000)),
)
_tree = st.recursive(
    _leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None)
@given(tree=st.dictionaries(st.text(max_size=6), _tree, max_size=4))
def test_parameter_tree_round_trip_hypothesis(tmp_path_factory, tree):
    path = tmp_path_factory.mktemp("h") / "p.h5"
    save_trial(Trial(parameters=tree), path, name="p")
    assert_values_equal(tree, load_trial(path).parameters, "parameters")
