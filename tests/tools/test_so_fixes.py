"""``ahbm so`` fixes: JointReaction-only setups, failed frames, OpenSim's rows, Point/Torque
actuators, setups of other tools (the OpenSim comparison is in
tests/peers/test_opensim_static_optimization.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sample_data import SHARED
from test_opensim_so import (
    joint_reaction_xml,
    write_reserves,
    write_setup,
    write_thelen_model,
)

from ahbm.cli import main
from ahbm.errors import FileFormatError
from ahbm.opensim import read_actuators, read_mot, read_osim, read_so_setup, run_so_setup
from ahbm.opensim.so_setup import PointActuatorSpec, TorqueActuatorSpec
from ahbm.opensim.so_tool import _actuator_columns, _select_frames

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

POINT_TORQUE = (
    '<PointActuator name="torso_push"><body>torso</body><point>0.05 0.3 0.02</point>'
    "<point_is_global>false</point_is_global><direction>1 0.5 0</direction>"
    "<force_is_global>false</force_is_global><optimal_force>50</optimal_force></PointActuator>"
    '<TorqueActuator name="hip_r_torque"><bodyA>femur_r</bodyA><bodyB>pelvis</bodyB>'
    "<torque_is_global>false</torque_is_global><axis>0.1 0 1</axis>"
    "<optimal_force>20</optimal_force></TorqueActuator>"
)


def _empty_reserves(path):
    path.write_text(
        '<OpenSimDocument Version="40000"><ForceSet name="none"><objects /></ForceSet>'
        "</OpenSimDocument>"
    )
    return path


@needs_data
def test_joint_reaction_only_setup_runs_and_summarizes(tmp_path, capsys):
    model_file = write_thelen_model(tmp_path / "thelen.osim")
    model = read_osim(model_file)
    forces = tmp_path / "forces.sto"
    muscles = [m.name for m in model.muscles]
    t = np.round(np.arange(0.5, 0.81, 1 / 60), 8)
    rows = "\n".join("\t".join([f"{x:.8f}"] + ["100"] * len(muscles)) for x in t)
    forces.write_text(
        f"Static Optimization\nversion=1\nnRows={t.size}\nnColumns={len(muscles) + 1}\n"
        "inDegrees=no\nendheader\n" + "\t".join(["time", *muscles]) + "\n" + rows + "\n"
    )
    so_off = '<StaticOptimization name="StaticOptimization"><on>false</on></StaticOptimization>'
    setup = write_setup(
        tmp_path / "jr.xml", model_file, write_reserves(tmp_path / "r.xml"), t0=0.6, t1=0.8,
        jr=joint_reaction_xml(str(forces), "knee_r", "child", "ground", t0=0.6, t1=0.8),
        so=so_off,
    )  # fmt: skip
    assert main(["so", str(setup)]) == 0
    out = capsys.readouterr().out
    assert "JR: 13 frames" in out and "JointReaction 'JointReaction': 13 frames, 1 joints" in out
    jr = read_mot(tmp_path / "Results" / "subject01_walk_JointReaction_ReactionLoads.sto",
                  angle_columns=[])  # fmt: skip
    assert len(jr.time) == 13 and np.isfinite(jr.data.to_numpy()).all()


@needs_data
def test_failed_frames_give_status_1_unless_allowed(tmp_path, capsys):
    model_file = write_thelen_model(tmp_path / "thelen.osim")
    # no reserves: nothing actuates the pelvis, every frame fails
    setup = write_setup(tmp_path / "so.xml", model_file, _empty_reserves(tmp_path / "r.xml"),
                        t0=0.6, t1=0.7)  # fmt: skip
    assert main(["so", str(setup)]) == 1
    err = capsys.readouterr().err
    assert "7 of 7 frame(s)" in err and "reserve actuators" in err
    assert "--allow-failed-frames" in err
    act = tmp_path / "Results" / "subject01_walk_StaticOptimization_activation.sto"
    assert act.exists()  # the files are written all the same, as OpenSim does
    assert main(["so", str(setup), "--allow-failed-frames"]) == 0


def test_rows_chosen_as_opensim_findindex():
    # a resampled grid a little before the nominal times (OpenSim's dtmin drift)
    t = np.arange(151) * 0.01666666 - 5e-7
    sel = _select_frames(t, 1.5, 2.0, 1)
    assert t[sel[0]] < 1.5 - 1e-6 and sel[0] == 90 and sel[-1] == 120  # 31 rows
    assert _select_frames(t, 0.51, 1.49, 1)[0] == 30  # the row before 0.51
    assert _select_frames(t, -1.0, 9.0, 2).tolist() == list(range(0, 151, 2))


@needs_data
def test_first_row_of_a_late_window_is_kept(tmp_path):
    model_file = write_thelen_model(tmp_path / "thelen.osim")
    setup = write_setup(tmp_path / "so.xml", model_file, write_reserves(tmp_path / "r.xml"),
                        t0=1.5, t1=2.0)  # fmt: skip
    res = run_so_setup(setup, write=False)
    assert res.time.size == 31  # OpenSim 4.6 writes 31 rows, 1.4999989 to 1.9999987 s
    assert abs(res.time[0] - 1.4999989) < 1e-7 and abs(res.time[-1] - 1.9999987) < 1e-7


@needs_data
def test_point_and_torque_actuators_generalized_forces(tmp_path):
    from ahbm.dynamics import rnea

    reserves = write_reserves(tmp_path / "r.xml", extra=POINT_TORQUE)
    acts = read_actuators(reserves)
    point, torque = acts[-2], acts[-1]
    assert isinstance(point, PointActuatorSpec) and point.body == "torso"
    assert np.allclose(point.direction, np.array([1, 0.5, 0]) / np.sqrt(1.25))
    assert isinstance(torque, TorqueActuatorSpec) and torque.body_b == "pelvis"
    model = read_osim(write_thelen_model(tmp_path / "thelen.osim"))
    rng = np.random.default_rng(3)
    q = rng.uniform(-0.4, 0.4, (4, model.nq))
    G, (lo, hi) = _actuator_columns(model, [point, torque], q)
    assert G.shape == (4, 2, model.nv) and lo.tolist() == [-np.inf] * 2
    # the same loads as external loads in the inverse dynamics: tau(f) = tau(0) - G u
    from ahbm.kinematics import forward_kinematics

    kin = forward_kinematics(model, q)
    zero = np.zeros((4, model.nv))
    bodies = model.body_names
    f_ext = np.zeros((4, len(bodies), 6))
    b = bodies.index("torso")
    R, o = kin.rotations[:, b], kin.positions[:, b]
    p = o + R @ np.array(point.point)
    F = 50.0 * (R @ np.array(point.direction))
    f_ext[:, b, :3], f_ext[:, b, 3:] = np.cross(p, F), F
    a, c = bodies.index("femur_r"), bodies.index("pelvis")
    T = 20.0 * (kin.rotations[:, a] @ np.array(torque.axis))
    f_ext[:, a, :3] += T
    f_ext[:, c, :3] -= T
    base = rnea(model, q, zero, zero)
    loaded = rnea(model, q, zero, zero, f_ext=f_ext)
    np.testing.assert_allclose(base - loaded, G.sum(axis=1), atol=1e-9)


@needs_data
def test_so_with_point_and_torque_actuators_writes_their_columns(tmp_path):
    model_file = write_thelen_model(tmp_path / "thelen.osim")
    reserves = write_reserves(tmp_path / "r.xml", extra=POINT_TORQUE)
    res = run_so_setup(write_setup(tmp_path / "so.xml", model_file, reserves, t0=0.6, t1=0.7))
    assert res.actuator_names[-2:] == ["torso_push", "hip_r_torque"]
    np.testing.assert_allclose(res.forces[:, -2:], res.controls[:, -2:] * [50.0, 20.0])
    assert not res.result.failed.any() and np.abs(res.controls[:, -2:]).max() > 1e-3
    frc = read_mot(res.outputs[1], angle_columns=[])
    n = len(res.actuator_names)  # then, as OpenSim's, the external loads
    assert frc.columns[n - 2 : n] == ["torso_push", "hip_r_torque"]
    assert frc.columns[n] == "calcn_r_right_Fx" and len(frc.columns) == n + 18


def test_setups_of_other_tools_are_refused_first(tmp_path):
    ida = tmp_path / "id.xml"
    ida.write_text(
        '<OpenSimDocument Version="40000"><InverseDynamicsTool name="x"><model_file>m.osim'
        "</model_file></InverseDynamicsTool></OpenSimDocument>"
    )
    with pytest.raises(FileFormatError, match=r"no <AnalyzeTool>.*InverseDynamicsTool"):
        read_so_setup(ida)
    other = tmp_path / "ma.xml"  # an AnalyzeTool without SO/JR, and without coordinates
    other.write_text(
        '<OpenSimDocument Version="40000"><AnalyzeTool name="x"><model_file>m.osim</model_file>'
        '<states_file>s.sto</states_file><AnalysisSet><objects><MuscleAnalysis name="MA"/>'
        "</objects></AnalysisSet></AnalyzeTool></OpenSimDocument>"
    )
    with pytest.raises(FileFormatError, match=r"no <StaticOptimization>.*MuscleAnalysis \(MA\)"):
        read_so_setup(other)
