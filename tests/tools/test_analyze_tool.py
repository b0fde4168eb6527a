"""``ahbm analyze``: AnalyzeTool setups read, refused and run (without OpenSim).

The comparison with OpenSim's own AnalyzeTool is tests/peers/test_opensim_analyze.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze_setups import (  # noqa: E402
    ACTUATION,
    BODY,
    DATA,
    KINEMATICS,
    MUSCLES,
    POINT,
    RESERVES,
    write_analyze_setup,
)
from sample_data import needs_shared  # noqa: E402

from ahbm.cli import main  # noqa: E402
from ahbm.errors import AhbmWarning, DataError, FileFormatError  # noqa: E402
from ahbm.opensim import read_mot  # noqa: E402
from ahbm.opensim.analyze_setup import read_analyze_setup  # noqa: E402
from ahbm.opensim.analyze_tool import analysis_rows, run_analyze_setup  # noqa: E402

pytestmark = needs_shared

ALL = (
    KINEMATICS.format(name="Kinematics", step=1, deg="true")
    + BODY.format(deg="true", bodies="all", local="false")
    + POINT.format(rel="pelvis")
    + MUSCLES.format(muscles="soleus_r vasti_l", coords="knee_angle_r ankle_angle_r")
)


def test_analysis_rows_follow_opensim_step_rule():
    # begin at the first row, step(i) when i % step == 0, end at the last row
    assert analysis_rows(31, 72, 4).tolist() == [31, 32, *range(36, 72, 4), 72]
    assert analysis_rows(105, 177, 1).tolist() == list(range(105, 178))
    assert analysis_rows(10, 10, 3).tolist() == [10]
    assert analysis_rows(10, 13, 5).tolist() == [10, 13]


def test_read_setup_keeps_opensim_defaults(tmp_path):
    setup = read_analyze_setup(write_analyze_setup(tmp_path / "s.xml", ALL))
    names = [type(a).__name__ for a in setup.analyses]
    assert names == ["KinematicsSpec", "BodyKinematicsSpec", "PointKinematicsSpec",
                     "MuscleAnalysisSpec"]  # fmt: skip
    point = setup.analyses[2]
    assert (point.body, point.relative_to, point.point_name) == ("calcn_r", "pelvis", "heel")
    assert point.point == (0.01, 0.02, -0.03)
    assert setup.analyses[3].coordinates == ("knee_angle_r", "ankle_angle_r")
    assert setup.solve_for_equilibrium and setup.lowpass_cutoff_frequency == 6
    assert setup.results_directory == tmp_path / "Results"


def test_so_only_setup_points_to_ahbm_so(tmp_path):
    so = '<StaticOptimization name="StaticOptimization"><on>true</on></StaticOptimization>'
    path = write_analyze_setup(tmp_path / "so.xml", so)
    with pytest.raises(FileFormatError, match=r"line \d+.*ahbm so"):
        read_analyze_setup(path)


def test_other_analyses_are_named_with_their_line(tmp_path):
    other = '<ForceReporter name="ForceReporter"><on>true</on></ForceReporter>'
    kin = KINEMATICS.format(name="K", step=1, deg="true")
    path = write_analyze_setup(tmp_path / "a.xml", kin + other)
    with pytest.warns(AhbmWarning, match=r"ForceReporter 'ForceReporter', line \d+"):
        read_analyze_setup(path)
    with pytest.raises(FileFormatError, match=r"line \d+.*no Kinematics"):
        read_analyze_setup(write_analyze_setup(tmp_path / "b.xml", other))


def test_actuation_lists_muscles_then_the_force_set_files(tmp_path):
    kin = KINEMATICS.format(name="K", step=1, deg="false")
    path = write_analyze_setup(tmp_path / "a.xml", ACTUATION.format(step=1) + kin,
                               force_set=[RESERVES], t1=0.7)  # fmt: skip
    res = run_analyze_setup(path)
    f = res.tables["subject01_walk_Actuation_force.sto"]
    v = res.tables["subject01_walk_Actuation_speed.sto"]
    w = res.tables["subject01_walk_Actuation_power.sto"]
    assert f.columns[0] == "hamstrings_r" and f.columns[18:21] == ["FX", "FY", "MZ"]
    assert f.columns[-1] == "lumbar_extension_reserve" and len(f.columns) == 28
    # muscles: tendon force, lengthening speed, power -F v; reserves: no control, no force
    np.testing.assert_allclose(w.values[:, :18], -f.values[:, :18] * v.values[:, :18])
    assert np.all(f.values[:, 18:] == 0) and np.all(w.values[:, 18:] == 0)
    # FX and FY report the same speed: a PointActuator's speed is |v| of its point
    np.testing.assert_allclose(v.data["FX"], v.data["FY"])
    assert np.all(v.data["FX"] >= 0)
    # a CoordinateActuator's speed is its coordinate's speed (rad/s)
    u = res.tables["subject01_walk_K_u.sto"]
    np.testing.assert_allclose(v.data["knee_angle_r_reserve"], u.data["knee_angle_r"])
    assert "subject01_walk_Actuation_force.sto" in {p.name for p in res.outputs}


def test_actuation_refuses_a_model_actuator_it_does_not_model(tmp_path):
    from ahbm.errors import ModelError
    from ahbm.opensim._actuation import actuator_records

    class _Item(dict):
        kind = "force"

    class _Model:
        name = "m"

        def section(self, key):
            return [_Item(type="PointToPointActuator", name="p2p")]

    with pytest.raises(ModelError, match="PointToPointActuator 'p2p'"):
        actuator_records(_Model(), {"names": []}, [], np.zeros((2, 1)), np.zeros((2, 1)), None,
                         replace=False)  # fmt: skip


@pytest.mark.parametrize(
    "extra, match",
    [
        ("<states_file>states.sto</states_file>", r"line \d+.*states_file"),
        ("<speeds_file>u.sto</speeds_file>", r"line \d+.*speeds_file"),
    ],
)
def test_unimplemented_inputs_are_refused(tmp_path, extra, match):
    path = write_analyze_setup(tmp_path / "s.xml", ALL)
    text = path.read_text().replace(f"<{extra[1 : extra.index('>')]} />", extra)
    path.write_text(text)
    with pytest.raises(FileFormatError, match=match):
        read_analyze_setup(path)


def test_unknown_element_warns_with_its_line(tmp_path):
    path = write_analyze_setup(tmp_path / "s.xml", ALL, extra="<frobnicate>1</frobnicate>")
    with pytest.warns(AhbmWarning, match=r"line \d+.*frobnicate"):
        read_analyze_setup(path)


def test_muscle_analysis_without_equilibrium_uses_default_fiber_lengths(tmp_path):
    path = write_analyze_setup(tmp_path / "s.xml", ALL, equilibrium=False, t1=0.8)
    res = run_analyze_setup(path, write=False)
    lm = res.tables["subject01_walk_MuscleAnalysis_FiberLength.sto"]
    assert np.all(lm.values == 0.1)  # subject01's muscles state no default: OpenSim's 0.1 m
    ft = res.tables["subject01_walk_MuscleAnalysis_TendonForce.sto"].values
    fm = res.tables["subject01_walk_MuscleAnalysis_FiberForce.sto"].values
    phi = res.tables["subject01_walk_MuscleAnalysis_PennationAngle.sto"].values
    # the fiber velocity is the one that balances fiber and tendon (damped model)
    np.testing.assert_allclose(fm * np.cos(phi), ft, rtol=1e-9, atol=1e-6)


def test_run_writes_opensim_names_and_layouts(tmp_path):
    path = write_analyze_setup(tmp_path / "s.xml", ALL)
    res = run_analyze_setup(path)
    names = {p.name for p in res.outputs}
    for suffix in ("Kinematics_q", "Kinematics_u", "Kinematics_dudt",
                   "BodyKinematics_pos_global", "BodyKinematics_vel_global",
                   "BodyKinematics_acc_global", "PointKinematics_heel_pos",
                   "MuscleAnalysis_FiberLength", "MuscleAnalysis_MomentArm_knee_angle_r",
                   "MuscleAnalysis_Moment_ankle_angle_r"):  # fmt: skip
        assert f"subject01_walk_{suffix}.sto" in names
    assert all(p.parent == tmp_path / "Results" for p in res.outputs)
    q = read_mot(tmp_path / "Results" / "subject01_walk_Kinematics_q.sto", angle_columns=[])
    assert q.in_degrees and q.columns[:4] == ["pelvis_tilt", "pelvis_tx", "pelvis_ty",
                                              "hip_flexion_r"]  # fmt: skip
    assert len(q.time) == 73 and abs(q.time[0] - 0.4999993) < 1e-6  # OpenSim's padded rows
    raw = read_mot(DATA / "subject01_walk_IK.mot", angle_columns=[])
    k = int(np.argmin(np.abs(raw.time - 1.0)))
    i = int(np.argmin(np.abs(q.time - 1.0)))
    assert abs(q.data["knee_angle_r"].iloc[i] - raw.data["knee_angle_r"].iloc[k]) < 1.0  # deg
    body = read_mot(tmp_path / "Results" / "subject01_walk_BodyKinematics_pos_global.sto",
                    angle_columns=[])  # fmt: skip
    assert body.columns[:6] == ["pelvis_X", "pelvis_Y", "pelvis_Z", "pelvis_Ox", "pelvis_Oy",
                                "pelvis_Oz"] and body.columns[-1] == "center_of_mass_Z"  # fmt: skip
    ma = read_mot(tmp_path / "Results" / "subject01_walk_MuscleAnalysis_Length.sto")
    assert ma.columns == ["soleus_r", "vasti_l"] and not ma.in_degrees


def test_cli_analyze(tmp_path, capsys):
    path = write_analyze_setup(tmp_path / "s.xml", KINEMATICS.format(name="K", step=3, deg="false"))
    assert main(["analyze", str(path), "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "Analyze: 73 frames" in out and "subject01_walk_K_q.sto" in out
    q = read_mot(tmp_path / "out" / "subject01_walk_K_q.sto", angle_columns=[])
    assert not q.in_degrees and len(q.time) == 25


def test_output_may_not_replace_an_input(tmp_path):
    path = write_analyze_setup(tmp_path / "s.xml", KINEMATICS.format(name="K", step=1, deg="true"))
    text = path.read_text().replace('name="subject01_walk"', 'name="s"')
    path.write_text(text)
    # an input named like an output: <results>/s_K_q.sto as coordinates
    (tmp_path / "Results").mkdir()
    target = tmp_path / "Results" / "s_K_q.sto"
    target.write_text((DATA / "subject01_walk_IK.mot").read_text())
    path.write_text(text.replace(str(DATA / "subject01_walk_IK.mot"), str(target)))
    with pytest.raises(DataError, match="coordinates file .* of this run"):
        run_analyze_setup(path)
