"""OpenSim TRC and MOT/STO files: the shared walking example and round trips."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from io_helpers import DATA

import ahbm.opensim.storage as opensim
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io import OpenSimTable, read_trc, write_trc
from ahbm.io.trial import Trial
from ahbm.opensim.storage import length_unit_scale, read_mot, table_to_grf, write_mot

OSIM = DATA / "opensim"
needs_data = pytest.mark.skipif(
    not OSIM.is_dir(), reason=f"shared OpenSim data folder {OSIM} is absent"
)


def _raw_trc(path: Path):
    """Independent reference: labels from line 4, numbers via numpy.genfromtxt."""
    lines = path.read_text().splitlines()
    labels = [s for s in lines[3].split("\t")[2:] if s.strip()]
    raw = np.genfromtxt(path, delimiter="\t", skip_header=6)
    return labels, raw


def _raw_mot(path: Path):
    lines = path.read_text().splitlines()
    end = next(i for i, s in enumerate(lines) if s.strip() == "endheader")
    labels = lines[end + 1].strip().split("\t")
    raw = np.loadtxt(path, skiprows=end + 2)
    return labels, raw


# ----------------------------------------------------------------------------- shared files


@needs_data
@pytest.mark.parametrize(
    ("name", "n_frames", "n_markers"),
    [("subject01_walk.trc", 151, 41), ("subject01_static.trc", 300, 49)],
)
def test_shared_trc_matches_raw_text(name, n_frames, n_markers):
    path = OSIM / name
    labels, raw = _raw_trc(path)
    trial = read_trc(path)
    assert trial.points.shape == (n_frames, n_markers, 3)
    assert trial.point_labels == labels
    assert trial.point_rate == 60.0
    assert trial.point_units == "m"
    assert trial.first_frame == int(raw[0, 0]) == 1
    assert trial.parameters["TRC"]["Units"] == "mm"
    assert trial.parameters["TRC"]["NumMarkers"] == n_markers
    ref = raw[:, 2 : 2 + 3 * n_markers].reshape(n_frames, n_markers, 3) / 1000.0
    np.testing.assert_allclose(trial.points, ref, rtol=1e-15, atol=0)
    # the Time column is rounded to ms in this file; the trial times follow Frame#/DataRate
    np.testing.assert_allclose(trial.time, raw[:, 1], atol=1e-3)


@needs_data
def test_shared_trc_spot_values_and_units_none():
    trial = read_trc(OSIM / "subject01_walk.trc", units=None)
    assert trial.point_units == "mm"
    # first data row of the file: R.ASIS 617.247620 1055.275020 170.781980
    np.testing.assert_array_equal(trial.marker("R.ASIS")[0], [617.247620, 1055.275020, 170.781980])
    mm = trial.points
    m = read_trc(OSIM / "subject01_walk.trc").points
    np.testing.assert_allclose(m * 1000.0, mm, rtol=1e-14)


@needs_data
def test_shared_ik_mot_degrees_converted():
    path = OSIM / "subject01_walk_IK.mot"
    labels, raw = _raw_mot(path)
    table = read_mot(path)
    assert isinstance(table, OpenSimTable)
    assert table.name == "Coordinates"
    assert table.in_degrees is True
    assert table.data.shape == (151, 10)
    assert table.data.index.name == "time"
    assert table.columns == labels[1:]
    np.testing.assert_array_equal(table.time, raw[:, 0])
    assert "pelvis_tx" not in table.angle_columns
    assert "pelvis_ty" not in table.angle_columns
    assert set(table.angle_columns) == set(labels[1:]) - {"pelvis_tx", "pelvis_ty"}
    for j, col in enumerate(labels[1:], start=1):
        want = np.deg2rad(raw[:, j]) if col in table.angle_columns else raw[:, j]
        np.testing.assert_allclose(table.data[col].to_numpy(), want, rtol=1e-15, atol=0)
    # spot check: knee_angle_r at t=0 is -5.12860733 degrees in the file
    assert table.data["knee_angle_r"].iloc[0] == pytest.approx(np.radians(-5.12860733), 1e-14)
    assert "Angles are in degrees." in table.comments


@needs_data
def test_shared_grf_mot_force_cop_torque_columns():
    path = OSIM / "subject01_walk_grf.mot"
    labels, raw = _raw_mot(path)
    table = read_mot(path)
    assert table.data.shape == (1501, 18)
    assert table.in_degrees is True and table.angle_columns == []  # nothing angular here
    np.testing.assert_array_equal(table.data.to_numpy(), raw[:, 1:])
    grf = table_to_grf(table)
    assert list(grf) == ["ground_", "1_ground_"]
    for prefix, sub in grf.items():
        for part, stem in (("force", "force_v"), ("point", "force_p")):
            cols = [labels.index(f"{prefix}{stem}{a}") for a in "xyz"]
            np.testing.assert_array_equal(sub[part], raw[:, cols])
        cols = [labels.index(f"{prefix.replace('force_', '')}torque_{a}") for a in "xyz"]
        np.testing.assert_array_equal(sub["torque"], raw[:, cols])
    # spot checks from the first data row: vertical force and COP height
    assert grf["ground_"]["force"][0, 1] == pytest.approx(745.4661142)
    np.testing.assert_array_equal(grf["ground_"]["point"][:, 1], -0.0075)
    assert np.mean(np.diff(table.time)) == pytest.approx(1 / 600, rel=1e-3)


# ----------------------------------------------------------------------------- round trips


def _trial(rng, n_frames=20, n_markers=4, first_frame=1):
    pts = rng.normal(size=(n_frames, n_markers, 3))
    pts[2, 1] = np.nan
    pts[:, 3, :] = np.where(np.arange(n_frames)[:, None] % 5 == 0, np.nan, pts[:, 3, :])
    return Trial(
        points=pts,
        point_labels=[f"M{i}" for i in range(n_markers)],
        point_rate=120.0,
        first_frame=first_frame,
    )


@pytest.mark.parametrize("first_frame", [1, 37])
def test_trc_round_trip_exact_in_metres(tmp_path, first_frame):
    rng = np.random.default_rng(1)
    trial = _trial(rng, first_frame=first_frame)
    path = tmp_path / "x.trc"
    write_trc(trial, path, units="m")
    back = read_trc(path)
    np.testing.assert_array_equal(back.points, trial.points)  # NaN in the same places
    assert back.point_labels == trial.point_labels
    assert back.first_frame == first_frame
    assert back.point_rate == 120.0
    np.testing.assert_allclose(back.time, trial.time, rtol=1e-15)
    # missing markers are empty fields, as OpenSim expects
    assert "\t\t\t" in path.read_text().splitlines()[8]


def test_trc_round_trip_mm_and_header(tmp_path):
    rng = np.random.default_rng(2)
    trial = _trial(rng)
    path = tmp_path / "x.trc"
    write_trc(trial, path)  # mm
    lines = path.read_text().splitlines()
    assert lines[0].startswith("PathFileType\t4\t(X/Y/Z)")
    assert lines[2].split("\t")[:5] == ["120.00", "120.00", "20", "4", "mm"]
    back = read_trc(path)
    np.testing.assert_allclose(back.points, trial.points, rtol=1e-14, atol=1e-18)
    assert np.array_equal(np.isnan(back.points), np.isnan(trial.points))
    raw = read_trc(path, units=None)
    np.testing.assert_allclose(raw.points, trial.points * 1000.0, rtol=1e-14)


@needs_data
def test_shared_trc_write_read_identical(tmp_path):
    trial = read_trc(OSIM / "subject01_walk.trc", units=None)
    write_trc(trial, tmp_path / "copy.trc", units="mm")
    back = read_trc(tmp_path / "copy.trc", units=None)
    np.testing.assert_array_equal(back.points, trial.points)
    assert back.point_labels == trial.point_labels


def test_trc_missing_trailing_markers_and_short_rows(tmp_path):
    text = (
        "PathFileType\t4\t(X/Y/Z)\tt.trc\n"
        "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n"
        "100\t100\t3\t2\tmm\n"
        "Frame#\tTime\tA\t\t\tB\t\t\n"
        "\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n"
        "\n"
        "1\t0\t1\t2\t3\t4\t5\t6\n"
        "2\t0.01\t\t\t\t4\t5\t6\n"
        "3\t0.02\t1\t2\t3\n"
    )
    path = tmp_path / "t.trc"
    path.write_text(text)
    trial = read_trc(path, units=None)
    want = np.array([[[1, 2, 3], [4, 5, 6]], [[np.nan] * 3, [4, 5, 6]], [[1, 2, 3], [np.nan] * 3]])
    np.testing.assert_array_equal(trial.points, want)


def test_trc_without_coordinate_line(tmp_path):
    path = tmp_path / "t.trc"
    path.write_text(
        "PathFileType\t4\t(X/Y/Z)\tt.trc\nDataRate\tUnits\n100\tm\nFrame#\tTime\tA\n"
        "1\t0\t1\t2\t3\n2\t0.01\t4\t5\t6\n"
    )
    np.testing.assert_array_equal(read_trc(path).points[:, 0], [[1, 2, 3], [4, 5, 6]])


@pytest.mark.parametrize(
    ("column", "angle"),
    [
        ("hip_flexion_r", True),
        ("pelvis_tz", False),
        ("/jointset/knee_r/knee_angle_r/value", True),
        ("/jointset/knee_r/knee_angle_r/speed", True),
        ("/jointset/ground_pelvis/pelvis_ty/value", False),
        ("/forceset/soleus_r/activation", False),
        ("ground_force_px", False),
        ("1_ground_torque_y", False),
        ("knee_r_on_tibia_r_in_tibia_r_fx", False),
        ("ankle_angle_r_moment", False),
    ],
)
def test_angle_column_guess(tmp_path, column, angle):
    path = tmp_path / "g.mot"
    path.write_text(f"g\ninDegrees=yes\nendheader\ntime\t{column}\n0\t90\n")
    table = read_mot(path)
    assert (table.angle_columns == [column]) is angle
    assert table.data[column].iloc[0] == (np.pi / 2 if angle else 90.0)


def test_mot_round_trip_degrees(tmp_path):
    rng = np.random.default_rng(3)
    t = np.arange(30) / 100.0
    df = pd.DataFrame(
        {
            "hip_flexion_r": rng.normal(size=30),
            "pelvis_tx": rng.normal(size=30),
            "knee_angle_r": rng.normal(size=30),
        },
        index=pd.Index(t, name="time"),
    )
    path = tmp_path / "a.mot"
    write_mot(df, path, in_degrees=True)
    text = path.read_text()
    assert "inDegrees=yes" in text and "nRows=30" in text and "nColumns=4" in text
    _, raw = _raw_mot(path)
    np.testing.assert_allclose(raw[:, 1], np.degrees(df["hip_flexion_r"]), rtol=1e-15)
    np.testing.assert_array_equal(raw[:, 2], df["pelvis_tx"])  # not an angle
    back = read_mot(path)
    assert back.in_degrees
    assert back.angle_columns == ["hip_flexion_r", "knee_angle_r"]
    pd.testing.assert_frame_equal(back.data, df, check_exact=False, rtol=1e-14)


def test_mot_round_trip_exact_without_degrees(tmp_path):
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        rng.normal(size=(12, 3)),
        columns=["a", "b", "c"],
        index=pd.Index(np.arange(12) * 0.01, name="time"),
    )
    df.iloc[3, 1] = np.nan
    write_mot(df, tmp_path / "a.sto", name="states")
    back = read_mot(tmp_path / "a.sto")
    assert back.name == "states" and not back.in_degrees
    pd.testing.assert_frame_equal(back.data, df, check_exact=True)


@needs_data
def test_shared_ik_mot_write_back_in_degrees(tmp_path):
    table = read_mot(OSIM / "subject01_walk_IK.mot")
    write_mot(table, tmp_path / "ik.mot")
    _, raw0 = _raw_mot(OSIM / "subject01_walk_IK.mot")
    _, raw1 = _raw_mot(tmp_path / "ik.mot")
    np.testing.assert_allclose(raw1, raw0, rtol=1e-14, atol=1e-13)
    back = read_mot(tmp_path / "ik.mot")
    assert back.name == table.name and back.comments == table.comments
    assert back.angle_columns == table.angle_columns
    pd.testing.assert_frame_equal(back.data, table.data, check_exact=False, rtol=1e-14)


def test_mot_explicit_angle_columns(tmp_path):
    path = tmp_path / "x.mot"
    path.write_text(
        "x\nversion=1\nnRows=2\nnColumns=3\ninDegrees=yes\nendheader\n"
        "time\tq1\tq2\n0\t90\t180\n1\t45\t30\n"
    )
    table = read_mot(path, angle_columns=["q2"])
    np.testing.assert_allclose(table.data["q1"], [90, 45])
    np.testing.assert_allclose(table.data["q2"], [np.pi, np.pi / 6])
    with pytest.raises(DataError, match="nope"):
        read_mot(path, angle_columns=["nope"])


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("hello\nworld\n", "not a TRC file"),
        (
            "PathFileType\t4\nDataRate\tUnits\n-5\tmm\nFrame#\tTime\tA\n\tX1\n\n1\t0\t1\t2\t3\n",
            "DataRate must be a positive",
        ),
        (
            "PathFileType\t4\nDataRate\tUnits\n60\tfurlong\nFrame#\tTime\tA\n\tX1\n\n"
            "1\t0\t1\t2\t3\n",
            "furlong",
        ),
        (
            "PathFileType\t4\nDataRate\tUnits\n60\tmm\nFrame#\tTime\tA\n\tX1\n\n"
            "1\t0\t1\t2\t3\t4\t5\t6\n",
            "line 4 lists 1 marker",
        ),
        (
            "PathFileType\t4\nDataRate\tUnits\n60\tmm\nFrame#\tTime\tA\n\tX1\n\n1\t0\tx\t2\t3\n",
            "not a numeric table",
        ),
    ],
)
def test_bad_trc_raises_file_format_error(tmp_path, text, match):
    path = tmp_path / "bad.trc"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=match):
        read_trc(path)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(FileFormatError, match="Cannot read TRC file"):
        read_trc(tmp_path / "absent.trc")
    (tmp_path / "b.mot").write_bytes(b"\x00\x01\x02endheader")
    with pytest.raises(FileFormatError, match="NUL"):
        read_mot(tmp_path / "b.mot")


def test_trc_header_count_mismatch_warns(tmp_path):
    path = tmp_path / "w.trc"
    path.write_text(
        "PathFileType\t4\nDataRate\tNumFrames\tNumMarkers\tUnits\n60\t5\t1\tm\n"
        "Frame#\tTime\tA\n\t\tX1\tY1\tZ1\n\n1\t0\t1\t2\t3\n"
    )
    with pytest.warns(AhbmWarning, match="NumFrames=5"):
        trial = read_trc(path)
    assert trial.points.shape == (1, 1, 3)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("time\ta\n0\t1\n", "no 'endheader'"),
        ("x\nendheader\ntime\ta\tb\n0\t1\n", "2 values but line 3 has 3 labels"),
        ("x\nendheader\n", "no column labels"),
    ],
)
def test_bad_mot_raises(tmp_path, text, match):
    path = tmp_path / "bad.mot"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=match):
        read_mot(path)


def test_mot_nan_spellings_of_c_runtimes(tmp_path):
    path = tmp_path / "n.sto"
    path.write_text("x\nendheader\ntime\ta\tb\n0\t-nan(ind)\t1.#QNAN\n1\tnan\t-inf\n")
    table = read_mot(path)
    assert np.isnan(table.data["a"]).all()
    assert np.isnan(table.data["b"].iloc[0]) and table.data["b"].iloc[1] == -np.inf


def test_mot_row_count_mismatch_warns(tmp_path):
    path = tmp_path / "w.mot"
    path.write_text("x\nnRows=9\nnColumns=2\nendheader\ntime\ta\n0\t1\n1\t2\n")
    with pytest.warns(AhbmWarning, match="nRows=9"):
        table = read_mot(path)
    assert len(table) == 2


def test_write_trc_rejects_bad_trials(tmp_path):
    trial = Trial(points=np.zeros((2, 2, 3)), point_labels=["A"], point_rate=10.0)
    with pytest.raises(DataError, match="1 labels for 2 points"):
        write_trc(trial, tmp_path / "x.trc")
    trial = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=0.0)
    with pytest.raises(DataError, match="point_rate"):
        write_trc(trial, tmp_path / "x.trc")
    trial = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=10.0)
    with pytest.raises(DataError, match="Unknown length unit"):
        write_trc(trial, tmp_path / "x.trc", units="parsec")
    with pytest.raises(DataError, match="does not exist"):
        write_trc(trial, tmp_path / "nofolder" / "x.trc")
    assert not list(tmp_path.iterdir())


def test_write_mot_failure_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "keep.mot"
    df = pd.DataFrame({"a": [1.0, 2.0]}, index=pd.Index([0.0, 0.1], name="time"))
    write_mot(df, path)
    before = path.read_bytes()

    def boom(fh, *args, **kwargs):
        fh.write("0\t1\n0.1\t")
        raise RuntimeError("disk full")

    monkeypatch.setattr(opensim, "_write_rows", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        write_mot(df * 2, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["keep.mot"]


def test_table_to_grf_needs_force_columns():
    table = OpenSimTable(data=pd.DataFrame({"q": [1.0]}, index=pd.Index([0.0], name="time")))
    with pytest.raises(DataError, match="force_vx"):
        table_to_grf(table)


@pytest.mark.parametrize(
    ("unit", "scale"), [("mm", 1e-3), ("m", 1.0), ("CM", 1e-2), ("in", 0.0254)]
)
def test_length_unit_scale(unit, scale):
    assert length_unit_scale(unit) == scale
