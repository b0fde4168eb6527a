"""OpenSim's ID tool on ahbm's engine: closed forms, external-load mapping, files, CLI.

The comparison with OpenSim's own ID tool is in tests/peers/test_opensim_tools.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sample_data import SHARED

from ahbm.cli import main
from ahbm.dynamics import rnea
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.io import OpenSimTable
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.tree import Model
from ahbm.opensim import (
    ExternalForceSpec,
    ExternalLoads,
    external_loads_f_ext,
    inverse_dynamics_opensim,
    read_external_loads,
    run_id_setup,
)
from ahbm.opensim.storage import read_mot, write_mot

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

M, L, IZZ, G = 2.0, 0.4, 0.05, 9.81


def _pendulum() -> Model:
    m = Model(gravity=(0.0, -G, 0.0))
    m.add_body(
        "arm",
        "ground",
        {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["elbow"]},
        mass=M,
        com=[L, 0, 0],
        inertia=np.diag([0.03, 0.03, IZZ]),
    )
    return m


def _table(t, columns: dict, *, degrees=False) -> OpenSimTable:
    df = pd.DataFrame(columns, index=pd.Index(t, name="time"))
    return OpenSimTable(df, in_degrees=degrees, angle_columns=[])


def test_pendulum_closed_form():
    t = np.arange(40) / 50.0
    q = 0.2 + 1.5 * t - 0.8 * t**2  # the natural quintic spline reproduces a quadratic
    res = inverse_dynamics_opensim(_pendulum(), _table(t, {"elbow": q}), cutoff=-1)
    qdd = -1.6
    expected = (IZZ + M * L**2) * qdd + M * G * L * np.cos(q)
    np.testing.assert_allclose(res.tau[:, 0], expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.qd[:, 0], 1.5 - 1.6 * t, atol=1e-9)
    assert res.labels == ["elbow_moment"] and res.f_ext is None
    df = res.to_dataframe()
    assert list(df.columns) == ["elbow_moment"] and df.index.name == "time"


def _foot(expressed="ground", point_frame="ground") -> tuple:
    m = Model(gravity=(0.0, 0.0, -G))
    m.add_body(
        "shank",
        "ground",
        {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["knee"]},
        mass=1.0,
        com=[0.2, 0, 0],
    )
    m.add_body(
        "foot",
        "shank",
        {"type": "revolute", "axis": [0, 1, 0], "coordinates": ["ankle"]},
        position=[0.4, 0, 0],
        mass=0.5,
        com=[0.05, 0, 0],
    )
    spec = ExternalForceSpec(
        "grf",
        "foot",
        force_expressed_in_body=expressed,
        point_expressed_in_body=point_frame,
        force_identifier="ground_force_v",
        point_identifier="ground_force_p",
        torque_identifier="ground_torque_",
    )
    return m, ExternalLoads(Path("grf.xml"), "GRF", (spec,))


def _grf(t, F, p, T) -> OpenSimTable:
    cols = {}
    for name, v in (("ground_force_v", F), ("ground_force_p", p), ("ground_torque_", T)):
        for k, a in enumerate("xyz"):
            cols[f"{name}{a}"] = np.broadcast_to(v[k], t.shape).astype(float)
    cols["other_column"] = np.zeros_like(t)
    return _table(t, cols)


@pytest.mark.parametrize("frame", ["ground", "foot", "shank"])
def test_external_force_mapping_in_named_frames(frame):
    rng = np.random.default_rng(3)
    m, loads = _foot(frame, frame)
    t = np.linspace(0, 1, 11)
    F, p, T = rng.standard_normal(3) * 100, rng.standard_normal(3) * 0.1, rng.standard_normal(3)
    q = rng.standard_normal((5, 2))
    times = np.linspace(0.1, 0.9, 5)
    f = external_loads_f_ext(m, q, times, loads, _grf(t, F, p, T))
    assert f.shape == (5, 2, 6)
    np.testing.assert_array_equal(f[:, 0], 0.0)
    kin = forward_kinematics(m, q)
    if frame == "ground":
        R, o = np.broadcast_to(np.eye(3), (5, 3, 3)), np.zeros((5, 3))
    else:
        b = m.body_index(frame)
        R, o = kin.rotations[:, b], kin.positions[:, b]
    Fw = R @ F
    pw = o + R @ p
    np.testing.assert_allclose(f[:, 1, 3:], Fw, atol=1e-10)
    np.testing.assert_allclose(f[:, 1, :3], np.cross(pw, Fw) + R @ T, atol=1e-10)
    # the generalized forces change by -J^T w: for the knee (z axis through the origin)
    # by -(moment about the origin)_z
    zero = np.zeros_like(q)
    d = rnea(m, q, zero, zero, f_ext=f) - rnea(m, q, zero, zero)
    np.testing.assert_allclose(d[:, 0], -f[:, 1, 2], atol=1e-9)


def test_force_without_point_acts_at_the_body_origin_and_interpolation():
    m, loads = _foot()
    spec = loads.forces[0]
    loads = ExternalLoads(
        loads.path,
        forces=(ExternalForceSpec(spec.name, "foot", force_identifier="ground_force_v"),),
    )
    t = np.linspace(0, 1, 21)
    Fz = 100 + 50 * t**2
    data = _table(t, {"ground_force_vx": 0 * t, "ground_force_vy": 0 * t, "ground_force_vz": Fz})
    q = np.array([[0.3, -0.2]] * 3)
    times = np.array([0.025, 0.5, 0.95])
    f = external_loads_f_ext(m, q, times, loads, data)
    kin = forward_kinematics(m, q)
    o = kin.positions[:, 1]
    # natural cubic interpolation of a quadratic: exact at the samples (0.5, 0.95),
    # close between them (the natural end condition bends it near the ends)
    np.testing.assert_allclose(f[1:, 1, 5], 100 + 50 * times[1:] ** 2, rtol=1e-12)
    assert f[0, 1, 5] == pytest.approx(100 + 50 * times[0] ** 2, rel=2e-4)
    np.testing.assert_allclose(f[:, 1, :3], np.cross(o, f[:, 1, 3:]), atol=1e-10)
    # two samples: linear; one sample: constant
    f2 = external_loads_f_ext(m, q[:1], [0.5], loads, _table(t[[0, -1]], {
        "ground_force_vx": [0.0, 0.0], "ground_force_vy": [0.0, 0.0],
        "ground_force_vz": [0.0, 10.0]}))  # fmt: skip
    assert f2[0, 1, 5] == pytest.approx(5.0)


def test_external_load_interpolation_is_scipys_natural_cubic_spline():
    from scipy.interpolate import CubicSpline

    from ahbm.opensim.external_loads import _time_function

    rng = np.random.default_rng(3)
    for n in (4, 5, 40):
        x = np.cumsum(rng.uniform(0.1, 1.0, n))
        y = rng.normal(size=(n, 5))
        t = np.concatenate([np.linspace(x[0] - 0.2, x[-1] + 0.2, 97), x])  # and extrapolated
        ref = CubicSpline(x, y, bc_type="natural", axis=0)(t)
        np.testing.assert_allclose(
            _time_function(x, y, t), ref, rtol=0, atol=1e-13 * abs(ref).max()
        )
    with pytest.raises(DataError, match="strictly increasing times"):
        _time_function(np.array([0.0, 0.1, 0.1, 0.2]), np.ones((4, 1)), np.array([0.05]))


def test_external_load_errors():
    m, loads = _foot()
    t = np.linspace(0, 1, 11)
    data = _grf(t, [0, 0, 1], [0, 0, 0], [0, 0, 0])
    q = np.zeros((2, 2))
    bad = OpenSimTable(data.data.drop(columns=["ground_force_vz"]))
    with pytest.raises(DataError, match="'ground_force_v' matches 2 column"):
        external_loads_f_ext(m, q, [0.1, 0.2], loads, bad)
    with pytest.raises(DataError, match="cover 0.0 to 1.0 s"):
        external_loads_f_ext(m, q, [0.1, 3.0], loads, data)
    heel = ExternalForceSpec("f", "heel", force_identifier="ground_force_v")
    other = ExternalLoads(Path("x.xml"), forces=(heel,))
    with pytest.raises(ModelError, match="heel"):
        external_loads_f_ext(m, q, [0.1, 0.2], other, data)
    nan = data.data.copy()
    nan.iloc[3, 0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        external_loads_f_ext(m, q, [0.1, 0.2], loads, OpenSimTable(nan))


def test_inverse_dynamics_options_and_errors():
    t = np.arange(40) / 50.0
    table = _table(t, {"elbow": np.sin(t), "unused": t})
    m = _pendulum()
    a = inverse_dynamics_opensim(m, table, cutoff=6.0)
    b = inverse_dynamics_opensim(m, table, cutoff=6.0, processing="butterworth")
    assert a.tau.shape == b.tau.shape == (40, 1)
    # two low-pass filters of a slow signal: both close to the unfiltered forces
    c = inverse_dynamics_opensim(m, table, cutoff=-1)
    assert np.abs(a.tau - c.tau)[5:-5].max() < 0.05
    assert np.abs(b.tau - c.tau)[5:-5].max() < 0.05
    # OpenSim 4 state paths as column names
    paths = _table(t, {"/jointset/elbow_joint/elbow/value": np.sin(t), "/jointset/x/y/speed": t})
    np.testing.assert_array_equal(inverse_dynamics_opensim(m, paths, cutoff=6.0).tau, a.tau)
    with pytest.raises(DataError, match="processing"):
        inverse_dynamics_opensim(m, table, processing="magic")
    with pytest.raises(DataError, match="none of the model's coordinates"):
        inverse_dynamics_opensim(m, _table(t, {"knee": t}))
    with pytest.raises(DataError, match="OpenSimTable"):
        inverse_dynamics_opensim(m, table.data)


SETUP = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="30000">
  <InverseDynamicsTool name="t">
    <model_file>model.osim</model_file>
    <results_directory>out</results_directory>
    <time_range> 0.1 0.5</time_range>
    <forces_to_exclude> Muscles</forces_to_exclude>
    <external_loads_file>grf.xml</external_loads_file>
    <coordinates_file>q.mot</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>-1</lowpass_cutoff_frequency_for_coordinates>
    <output_gen_force_file>tau.sto</output_gen_force_file>
  </InverseDynamicsTool>
</OpenSimDocument>
"""

LOADS = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="30000"><ExternalLoads name="GRF"><objects>
  <ExternalForce name="grf"><applied_to_body>foot</applied_to_body>
    <force_expressed_in_body>ground</force_expressed_in_body>
    <point_expressed_in_body>ground</point_expressed_in_body>
    <force_identifier>ground_force_v</force_identifier>
    <point_identifier>ground_force_p</point_identifier>
    <torque_identifier>ground_torque_</torque_identifier>
  </ExternalForce></objects>
  <datafile>grf.mot</datafile></ExternalLoads></OpenSimDocument>
"""


def test_run_id_setup_files_degrees_and_output(tmp_path):
    m, _ = _foot()
    t = np.arange(60) / 100.0
    knee, ankle = 0.3 + 0.5 * t**2, -0.2 + t
    write_mot(
        pd.DataFrame({"knee": knee, "ankle": ankle}, index=pd.Index(t, name="time")),
        tmp_path / "q.mot",
        in_degrees=True,
    )
    F, p, T = np.array([10.0, 700.0, 5.0]), np.array([0.3, 0.0, 0.1]), np.array([0, 2.0, 0])
    write_mot(_grf(t, F, p, T).data, tmp_path / "grf.mot", in_degrees=False)
    (tmp_path / "grf.xml").write_text(LOADS)
    (tmp_path / "setup.xml").write_text(SETUP)
    res = run_id_setup(tmp_path / "setup.xml", model=m)
    assert res.output == tmp_path.resolve() / "out" / "tau.sto"
    np.testing.assert_allclose(res.time, t[10:51], atol=1e-12)
    np.testing.assert_allclose(res.q[:, 0], knee[10:51], atol=1e-9)  # degrees converted back
    # the same numbers from the pieces
    qd = np.stack([t[10:51], np.ones(41)], axis=1)
    qdd = np.tile([1.0, 0.0], (41, 1))
    q = np.stack([knee, ankle], axis=1)[10:51]
    loads = read_external_loads(tmp_path / "grf.xml")
    f = external_loads_f_ext(m, q, t[10:51], loads, read_mot(tmp_path / "grf.mot"))
    np.testing.assert_allclose(res.f_ext, f, atol=1e-9)
    np.testing.assert_allclose(res.tau, rnea(m, q, qd, qdd, f_ext=f), atol=1e-7)
    table = read_mot(res.output)
    assert table.name == "Inverse Dynamics Generalized Forces" and not table.in_degrees
    assert table.columns == ["knee_moment", "ankle_moment"]
    np.testing.assert_allclose(table.data.to_numpy(), res.tau, atol=1e-12)
    # --time-range and --output through the command line
    out = tmp_path / "cli.sto"
    # the CLI reads the model file: give it none and it must fail cleanly
    assert main(["id", str(tmp_path / "setup.xml"), "-o", str(out)]) == 1
    assert not out.exists()


def test_cli_errors(tmp_path, capsys):
    assert main(["id", str(tmp_path / "missing.xml")]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "bad.xml").write_text("<OpenSimDocument><InverseDynamicsTool>")
    assert main(["id", str(tmp_path / "bad.xml")]) == 1
    assert "not well-formed" in capsys.readouterr().err


@needs_data
def test_subject01_cli_writes_opensim_columns(tmp_path, capsys):
    for name in ("subject01.osim", "subject01_walk_IK.mot", "subject01_walk_grf.mot",
                 "subject01_walk_grf.xml", "subject01_Setup_ID.xml"):  # fmt: skip
        shutil.copy(DATA / name, tmp_path / name)
    setup = str(tmp_path / "subject01_Setup_ID.xml")
    assert main(["id", setup, "-o", str(tmp_path / "no" / "x.sto")]) == 1  # no such folder
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "no").exists()
    assert main(["id", setup, "--time-range", "0.5", "1"]) == 0
    assert "wrote" in capsys.readouterr().out
    table = read_mot(tmp_path / "Results" / "subject01_walk_ID.sto")
    assert table.columns[:4] == [
        "pelvis_tilt_moment",
        "pelvis_tx_force",
        "pelvis_ty_force",
        "hip_flexion_r_moment",
    ]
    assert len(table.columns) == 10 and len(table) == 31
    assert table.time[0] == pytest.approx(0.5, abs=1e-5)
    # stance: the vertical pelvis force balances part of the weight, finite everywhere
    assert np.isfinite(table.data.to_numpy()).all()


@needs_data
def test_subject01_forces_left_active_and_body_forces_warn(tmp_path):
    for name in ("subject01.osim", "subject01_walk_IK.mot", "subject01_walk_grf.mot"):
        shutil.copy(DATA / name, tmp_path / name)
    loads = (DATA / "subject01_walk_grf.xml").read_text().replace(
        "<datafile>", "<external_loads_model_kinematics_file>subject01_walk_IK.mot"
        "</external_loads_model_kinematics_file><datafile>"
    )  # fmt: skip
    (tmp_path / "subject01_walk_grf.xml").write_text(loads)
    text = (DATA / "subject01_Setup_ID.xml").read_text()
    text = text.replace("<forces_to_exclude> Muscles</forces_to_exclude>", "")
    tag = "joints_to_report_body_forces"
    text = text.replace(f"<{tag} />", f"<{tag}>knee_r</{tag}>")
    (tmp_path / "setup.xml").write_text(text)
    with pytest.warns(AhbmWarning) as record:
        run_id_setup(tmp_path / "setup.xml", write=False, time_range=(0.5, 0.6))
    messages = " ".join(str(w.message) for w in record)
    assert "18 force(s) not listed in <forces_to_exclude>" in messages
    assert "hamstrings_r (Millard2012EquilibriumMuscle)" in messages
    assert "knee_r" in messages and "not computed" in messages
    assert "external_loads_model_kinematics_file" in messages
