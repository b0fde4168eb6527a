"""AnalyzeTool setups for the tests of ``ahbm analyze`` (shared subject01 files)."""

from __future__ import annotations

from pathlib import Path

from sample_data import SHARED

DATA = SHARED / "opensim"

KINEMATICS = (
    '<Kinematics name="{name}"><on>true</on><step_interval>{step}</step_interval>'
    "<in_degrees>{deg}</in_degrees></Kinematics>"
)
BODY = (
    '<BodyKinematics name="BodyKinematics"><on>true</on><step_interval>1</step_interval>'
    "<in_degrees>{deg}</in_degrees><bodies>{bodies}</bodies>"
    "<express_results_in_body_local_frame>{local}</express_results_in_body_local_frame>"
    "</BodyKinematics>"
)
POINT = (
    '<PointKinematics name="PointKinematics"><on>true</on><step_interval>1</step_interval>'
    "<body_name>calcn_r</body_name><relative_to_body_name>{rel}</relative_to_body_name>"
    "<point_name>heel</point_name><point> 0.01 0.02 -0.03</point></PointKinematics>"
)
MUSCLES = (
    '<MuscleAnalysis name="MuscleAnalysis"><on>true</on><step_interval>1</step_interval>'
    "<muscle_list>{muscles}</muscle_list>"
    "<moment_arm_coordinate_list>{coords}</moment_arm_coordinate_list>"
    "<compute_moments>true</compute_moments></MuscleAnalysis>"
)
ACTUATION = (
    '<Actuation name="Actuation"><on>true</on><step_interval>{step}</step_interval>'
    "<in_degrees>true</in_degrees></Actuation>"
)
RESERVES = DATA / "subject01_Reserve_Actuators.xml"


def write_analyze_setup(
    path: Path,
    analyses: str,
    *,
    t0=0.5,
    t1=1.7,
    cutoff=6,
    equilibrium=True,
    loads=True,
    results="Results",
    extra="",
    force_set=(),
    replace=False,
) -> Path:
    """An AnalyzeTool setup on subject01's walk (absolute paths to the shared files)."""
    loads_file = str(DATA / "subject01_walk_grf.xml") if loads else ""
    path.write_text(
        f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40600">
<AnalyzeTool name="subject01_walk">
<model_file>{DATA / "subject01.osim"}</model_file>
<replace_force_set>{str(replace).lower()}</replace_force_set>
<force_set_files>{" ".join(str(f) for f in force_set)}</force_set_files>
<results_directory>{results}</results_directory>
<output_precision>8</output_precision>
<initial_time>{t0}</initial_time>
<final_time>{t1}</final_time>
<solve_for_equilibrium_for_auxiliary_states>{str(equilibrium).lower()}</solve_for_equilibrium_for_auxiliary_states>
<AnalysisSet name="Analyses"><objects>
{analyses}
</objects><groups /></AnalysisSet>
<ControllerSet name="Controllers"><objects /><groups /></ControllerSet>
<external_loads_file>{loads_file}</external_loads_file>
<states_file />
<coordinates_file>{DATA / "subject01_walk_IK.mot"}</coordinates_file>
<speeds_file />
<lowpass_cutoff_frequency_for_coordinates>{cutoff}</lowpass_cutoff_frequency_for_coordinates>
{extra}
</AnalyzeTool>
</OpenSimDocument>
"""
    )
    return path
