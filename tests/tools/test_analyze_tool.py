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
    BODY,
    DATA,
    KINEMATICS,
    MUSCLES,
    POINT,
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
    act = '<Actuation name="Actuation"><on>true</on></Actuation>'
    kin = KINEMATICS.format(name="K", step=1, deg="true")
    path = write_analyze_setup(tmp_path / "a.xml", kin + act)
    with pytest.warns(AhbmWarning, match=r"Actuation 'Actuation', line \d+"):
        read_analyze_setup(path)
    with pytest.raises(FileFormatError, match=r"line \d+.*no Kinematics"):
        read_analyze_setup(write_analyze_setup(tmp_path / "b.xml", act))


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


def test_muscle_analysis_without_equilibrium_is_refused(tmp_path):
    path = write_analyze_setup(tmp_path / "s.xml", ALL, equilibrium=False)
    with pytest.raises(FileFormatError, match="solve_for_equilibrium"):
        run_analyze_setup(path, write=False)


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
