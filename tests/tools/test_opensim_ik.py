"""OpenSim's IK tool on ahbm's engine: recovery of known motion, tasks, files, subject01.

The comparison with OpenSim's own IK tool is in tests/peers/test_opensim_tools.py.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from sample_data import SHARED
from scipy.optimize import brentq

from ahbm.cli import main
from ahbm.errors import AhbmWarning, DataError
from ahbm.io import Trial
from ahbm.io.trc import write_trc
from ahbm.kinematics.marker_model import marker_jacobians
from ahbm.kinematics.tree import Model
from ahbm.opensim import inverse_kinematics_opensim, run_ik_setup
from ahbm.opensim.storage import read_mot, write_mot

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")


def _arm() -> Model:
    m = Model(gravity=(0.0, -9.81, 0.0))
    m.add_body(
        "upper",
        "ground",
        {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["shoulder"]},
        mass=2.0,
        markers={"S1": [0.1, 0.02, 0.0], "S2": [0.25, -0.02, 0.01]},
    )
    m.add_body(
        "fore",
        "upper",
        {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["elbow"]},
        position=[0.3, 0, 0],
        mass=1.0,
        markers={"E1": [0.1, 0.03, 0.0], "E2": [0.2, -0.03, 0.02]},
    )
    return m


def _trial(m, q, rate=100.0, noise=0.0, seed=0):
    names = ["S1", "S2", "E1", "E2"]
    x, _ = marker_jacobians(m, q, marker_names=names)
    x = x + noise * np.random.default_rng(seed).standard_normal(x.shape)
    return Trial(points=x, point_labels=names, point_rate=rate)


def test_recovers_known_motion_frame_by_frame():
    m = _arm()
    t = np.arange(50) / 100.0
    q = np.stack([0.3 + np.sin(2 * t), 1.0 - 0.5 * t], axis=1)
    res = inverse_kinematics_opensim(m, _trial(m, q))
    np.testing.assert_allclose(res.q, q, atol=1e-8)
    assert res.converged.all() and res.max_error.max() < 1e-8
    np.testing.assert_allclose(res.time, t)
    # a time range selects the frames OpenSim selects
    res = inverse_kinematics_opensim(m, _trial(m, q), time_range=(0.1, 0.2))
    np.testing.assert_allclose(res.time, t[10:21])
    np.testing.assert_allclose(res.q, q[10:21], atol=1e-8)


def test_times_are_the_marker_files_time_column_and_ranges_pick_the_nearest(tmp_path):
    # OpenSim 4.6 (measured): the IK output's times are the TRC's Time column as
    # written, and each end of <time_range> goes to the row of the nearest time:
    # (0.51, 0.99) s at 60 Hz gives 0.517 .. 0.983 s (29 frames), (0.509, 0.526) s
    # gives 0.517 and 0.533 s
    m = _arm()
    n = 61
    q = np.stack([0.3 + 0.1 * np.arange(n) / n, np.full(n, 1.0)], axis=1)
    trial = _trial(m, q, rate=60.0)
    written = np.round(np.arange(n) / 60.0, 3)  # a Time column of 3 decimals
    trial.parameters["TRC"] = {"DataRate": 60.0, "Time": written}
    res = inverse_kinematics_opensim(m, trial, time_range=(0.51, 0.99))
    assert res.time[0] == 0.517 and res.time[-1] == 0.983 and len(res.time) == 29
    np.testing.assert_allclose(res.q, q[31:60], atol=1e-8)
    res = inverse_kinematics_opensim(m, trial, time_range=(0.509, 0.526))
    assert res.time.tolist() == [0.517, 0.533]
    # through a file: read_trc keeps the column, the .mot has its times
    write_trc(trial, tmp_path / "arm.trc", units="m")
    from ahbm.io import read_trc

    res = inverse_kinematics_opensim(m, read_trc(tmp_path / "arm.trc"))
    np.testing.assert_array_equal(res.time, written)


def test_weights_missing_markers_and_errors_report():
    m = _arm()
    q = np.array([[0.4, 0.9]] * 4)
    trial = _trial(m, q, noise=0.002, seed=4)
    trial.points[1, 2] = np.nan  # E1 missing in frame 1
    res = inverse_kinematics_opensim(m, trial, marker_weights={"S1": 0.0, "E2": 3.0})
    assert res.marker_names == ["S2", "E1", "E2"]
    assert np.isnan(res.marker_errors[1, 1]) and np.isfinite(res.marker_errors[0]).all()
    # OpenSim's report: total squared error, RMS and max over the markers present
    e = res.marker_errors
    np.testing.assert_allclose(res.total_squared_error, np.nansum(e**2, axis=1))
    np.testing.assert_allclose(res.rms_error[1], np.sqrt(np.nansum(e[1] ** 2) / 2))
    np.testing.assert_allclose(res.max_error, np.nanmax(e, axis=1))
    with pytest.raises(DataError, match="weight > 0"):
        inverse_kinematics_opensim(m, trial, marker_weights=dict.fromkeys(trial.point_labels, 0))


def test_coordinate_task_closed_form():
    # one marker at distance 1 on a revolute body + a target 0 for the angle:
    # cost 2 - 2 cos(a - a_m) + w a^2  ->  sin(a - a_m) + w a = 0
    m = Model()
    m.add_body(
        "b",
        "ground",
        {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["a"]},
        markers={"M": [1.0, 0.0, 0.0]},
    )
    am, w = 0.3, 2.0
    trial = Trial(
        points=np.array([[[np.cos(am), np.sin(am), 0.0]]] * 3), point_labels=["M"], point_rate=10.0
    )
    res = inverse_kinematics_opensim(
        m, trial, coordinate_targets={"a": 0.0}, coordinate_weights={"a": w}, accuracy=1e-12
    )
    expected = brentq(lambda a: np.sin(a - am) + w * a, -1, 1)
    np.testing.assert_allclose(res.q[:, 0], expected, atol=1e-8)
    # a target per frame
    res = inverse_kinematics_opensim(
        m, trial, coordinate_targets={"a": [0.0, np.nan, 0.6]}, coordinate_weights={"a": 1e9}
    )
    np.testing.assert_allclose(res.q[:, 0], [0.0, am, 0.6], atol=1e-7)


SETUP = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><InverseKinematicsTool name="arm">
  <model_file>arm.osim</model_file>
  <marker_file>arm.trc</marker_file>
  <coordinate_file>targets.mot</coordinate_file>
  <IKTaskSet><objects>
    <IKMarkerTask name="S1"><weight>1</weight></IKMarkerTask>
    <IKMarkerTask name="E2"><apply>false</apply></IKMarkerTask>
    <IKCoordinateTask name="elbow"><weight>1000</weight><value_type>from_file</value_type>
    </IKCoordinateTask>
  </objects></IKTaskSet>
  <time_range>0 0.3</time_range>
  <output_motion_file>ik/arm_ik.mot</output_motion_file>
</InverseKinematicsTool></OpenSimDocument>
"""


def test_run_ik_setup_with_coordinate_file(tmp_path):
    import pandas as pd

    m = _arm()
    t = np.arange(40) / 100.0
    q = np.stack([0.3 + t, 1.0 - t], axis=1)
    trial = _trial(m, q)
    write_trc(trial, tmp_path / "arm.trc")
    target = np.degrees(1.2 - t)  # differs from the markers: the heavy task wins
    write_mot(
        pd.DataFrame({"elbow": np.radians(target)}, index=pd.Index(t, name="time")),
        tmp_path / "targets.mot",
        in_degrees=True,
    )
    (tmp_path / "setup.xml").write_text(SETUP.replace(
        "<IKMarkerTask name=\"S1\">", "<IKMarkerTask name=\"GONE\"><weight>1</weight>"
        "</IKMarkerTask><IKMarkerTask name=\"S1\">"))  # fmt: skip
    with pytest.warns(AhbmWarning, match=r"\['GONE'\] name a marker missing"):
        res = run_ik_setup(tmp_path / "setup.xml", model=m)
    assert res.output == tmp_path.resolve() / "ik" / "arm_ik.mot"
    assert len(res.time) == 31 and res.marker_names == ["S1", "S2", "E1"]
    np.testing.assert_allclose(res.q[:, 1], 1.2 - t[:31], atol=2e-3)
    table = read_mot(res.output)
    assert table.in_degrees and table.name == "Coordinates"
    np.testing.assert_allclose(table.data.to_numpy(), res.q, atol=1e-9)
    raw = res.output.read_text().splitlines()
    assert "inDegrees=yes" in raw and raw[-1].startswith("0.30000000\t")
    errors = read_mot(tmp_path / "arm_ik_marker_errors.sto")
    assert errors.columns == ["total_squared_error", "marker_error_RMS", "marker_error_max"]


@needs_data
def test_subject01_reproduces_the_shared_ik_within_a_degree(tmp_path, capsys):
    for name in ("subject01.osim", "subject01_walk.trc", "subject01_Setup_IK.xml"):
        shutil.copy(DATA / name, tmp_path / name)
    out = tmp_path / "ahbm_ik.mot"
    assert main(["ik", str(tmp_path / "subject01_Setup_IK.xml"), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    ours = read_mot(out)
    ref = read_mot(DATA / "subject01_walk_IK.mot")
    # the TRC's Time column as written, as OpenSim 4 (0.017 s: 3 decimals); the stored
    # file, of an older OpenSim, has Frame#/DataRate's times (0.01666667 s)
    lines = (DATA / "subject01_walk.trc").read_text().splitlines()[6:]
    np.testing.assert_array_equal(ours.time, [float(r.split("\t")[1]) for r in lines if r])
    np.testing.assert_allclose(ours.time, ref.time, atol=0.5e-3)
    for c in ref.columns:
        rms = np.sqrt(np.mean((ours.data[c].to_numpy() - ref.data[c].to_numpy()) ** 2))
        unit = np.degrees(rms) if c in ref.angle_columns else rms * 1000  # deg or mm
        assert unit < 1.0, (c, unit)
        assert unit < 0.05, (c, unit)  # in practice ~0.01 deg / 0.01 mm


@pytest.mark.parametrize("warm_start", ["pipeline", "extrapolate"])
def test_warm_starts_of_fit_markers_match_frame_by_frame(warm_start):
    from ahbm.kinematics.ik import fit_markers

    m = _arm()
    t = np.arange(60) / 100.0
    q = np.stack([0.3 + np.sin(3 * t), 1.0 - 0.8 * t + 0.2 * np.cos(5 * t)], axis=1)
    trial = _trial(m, q, noise=0.003, seed=7)
    x = trial.points.copy()
    x[20] = np.nan  # a frame without markers is skipped
    kw = dict(marker_names=trial.point_labels, xtol=1e-12, tol=1e-15, warn=False)
    ref = fit_markers(m, x, block_size=1, **kw)
    for bs in (1, 5, 16):
        res = fit_markers(m, x, block_size=bs, warm_start=warm_start, **kw)
        np.testing.assert_allclose(res.q, ref.q, atol=1e-8, equal_nan=True)
        assert np.isnan(res.q[20]).all() and res.converged[np.arange(60) != 20].all()
    # with a coordinate task
    kw["coordinate_targets"] = {"elbow": 0.5}
    kw["coordinate_weights"] = {"elbow": 0.01}
    ref = fit_markers(m, x, block_size=1, **kw)
    res = fit_markers(m, x, block_size=8, warm_start=warm_start, **kw)
    np.testing.assert_allclose(res.q, ref.q, atol=1e-8, equal_nan=True)
    with pytest.raises(DataError, match="warm_start"):
        fit_markers(m, x, warm_start="psychic", marker_names=trial.point_labels)


def test_coordinate_coupler_is_enforced_like_the_reduced_problem():
    from scipy.optimize import least_squares

    from ahbm.dynamics import CoordinateCoupling

    m = Model()
    pin = {"type": "revolute", "axis": [0, 0, 1]}
    m.add_body(
        "a", "ground", dict(pin, coordinates=["qa"]), mass=1.0, markers={"A": [0.3, 0.05, 0.0]}
    )
    mk = {"B": [0.2, 0, 0], "C": [0.3, 0.04, 0]}
    m.add_body("b", "a", dict(pin, coordinates=["qb"]), position=[0.4, 0, 0], mass=1.0, markers=mk)
    m.constraints = [CoordinateCoupling("qb", "qa", ratio=0.5)]
    names = ["A", "B", "C"]
    qa = 0.3 + np.arange(20) / 50
    x, _ = marker_jacobians(m, np.stack([qa, 0.5 * qa], axis=1), marker_names=names)
    x = x + 0.003 * np.random.default_rng(0).standard_normal(x.shape)
    trial = Trial(points=x, point_labels=names, point_rate=50.0)
    res = inverse_kinematics_opensim(m, trial, accuracy=1e-10)

    def residual(a, k):
        p, _ = marker_jacobians(m, np.array([a[0], 0.5 * a[0]]), marker_names=names)
        return (p - x[k]).ravel()

    ref = [
        least_squares(residual, [0.3], args=(k,), xtol=1e-15, ftol=1e-15).x[0] for k in range(20)
    ]
    np.testing.assert_allclose(res.q[:, 0], ref, atol=1e-7)
    np.testing.assert_allclose(res.q[:, 1], 0.5 * res.q[:, 0], atol=1e-9)
    # a zero weight ignores the constraint: the two angles are fitted freely
    free = inverse_kinematics_opensim(m, trial, constraint_weight=0.0)
    assert np.abs(free.q[:, 1] - 0.5 * free.q[:, 0]).max() > 1e-3


@needs_data
def test_subject01_locked_coordinate_and_opensim_column_order(tmp_path):
    text = (DATA / "subject01.osim").read_text()
    start = text.index('<Coordinate name="lumbar_extension">')
    end = text.index("</Coordinate>", start)
    block = text[start:end].replace("<locked>false</locked>", "<locked>true</locked>")
    (tmp_path / "subject01.osim").write_text(text[:start] + block + text[end:])
    for name in ("subject01_walk.trc", "subject01_Setup_IK.xml"):
        shutil.copy(DATA / name, tmp_path / name)
    with pytest.warns(AhbmWarning, match="locked coordinates are fixed"):
        res = run_ik_setup(tmp_path / "subject01_Setup_IK.xml", time_range=(0, 0.1))
    assert "lumbar_extension" not in res.coordinate_names
    table = read_mot(res.output)
    assert table.columns == [
        "pelvis_tilt", "pelvis_tx", "pelvis_ty", "hip_flexion_r", "knee_angle_r",
        "ankle_angle_r", "hip_flexion_l", "knee_angle_l", "ankle_angle_l", "lumbar_extension",
    ]  # fmt: skip
    np.testing.assert_array_equal(table.data["lumbar_extension"], 0.0)  # its default value


@needs_data
def test_subject01_clamped_coordinate_stays_in_its_range(tmp_path):
    text = (DATA / "subject01.osim").read_text()
    start = text.index('<Coordinate name="knee_angle_r">')
    end = text.index("</Coordinate>", start)
    block = text[start:end]
    i0 = block.index("<range>")
    i1 = block.index("</range>") + len("</range>")
    block = block[:i0] + "<range>-0.3 0.17453293</range>" + block[i1:]
    block = block.replace("<clamped>false</clamped>", "<clamped>true</clamped>")
    (tmp_path / "subject01.osim").write_text(text[:start] + block + text[end:])
    for name in ("subject01_walk.trc", "subject01_Setup_IK.xml"):
        shutil.copy(DATA / name, tmp_path / name)
    from ahbm.opensim import clamped_bounds, read_osim

    model = read_osim(tmp_path / "subject01.osim")
    lower, upper = clamped_bounds(model)
    k = model.coordinate_names.index("knee_angle_r")
    assert (lower[k], upper[k]) == (-0.3, 0.17453293)
    assert np.isinf(np.delete(lower, k)).all()
    res = run_ik_setup(tmp_path / "subject01_Setup_IK.xml", model=model, write=False,
                       time_range=(0.0, 0.4))  # fmt: skip
    knee = res.q[:, k]
    assert knee.min() >= -0.3 - 1e-12 and np.isclose(knee, -0.3).sum() > 5
    deg = res.to_dataframe(degrees=True, model=model)
    np.testing.assert_allclose(deg["knee_angle_r"], np.degrees(knee))
    np.testing.assert_allclose(
        deg["pelvis_tx"], res.q[:, model.coordinate_names.index("pelvis_tx")]
    )
    with pytest.raises(DataError, match="model="):
        res.to_dataframe(degrees=True)
