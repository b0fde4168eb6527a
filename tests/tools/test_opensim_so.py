"""``ahbm so``: OpenSim AnalyzeTool setups with StaticOptimization and JointReaction.

The setups are written here around the shared walking trial; its model's
Millard2012EquilibriumMuscles mostly become Thelen2003Muscles (the tests were
written before ahbm had Millard's curves; ``ahbm so`` now runs the model as
shipped too). The OpenSim comparison is in
tests/peers/test_opensim_static_optimization.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.cli import main
from ahbm.errors import FileFormatError
from ahbm.opensim import (
    read_actuators,
    read_mot,
    read_osim,
    read_so_setup,
    run_id_setup,
    run_so_setup,
)

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

COORDINATES = [
    "pelvis_tilt", "pelvis_tx", "pelvis_ty", "hip_flexion_r", "knee_angle_r", "ankle_angle_r",
    "hip_flexion_l", "knee_angle_l", "ankle_angle_l", "lumbar_extension",
]  # fmt: skip
STRONG = {
    "pelvis_tilt": 1000.0,
    "pelvis_tx": 1000.0,
    "pelvis_ty": 1000.0,
    "lumbar_extension": 100.0,
}


def write_reserves(path: Path, *, extra: str = "") -> Path:
    """A ForceSet with one CoordinateActuator per coordinate (strong on the pelvis and trunk)."""
    items = "".join(
        f'<CoordinateActuator name="reserve_{c}"><coordinate>{c}</coordinate>'
        f"<optimal_force>{STRONG.get(c, 1.0)}</optimal_force><min_control>-Inf</min_control>"
        f"<max_control>Inf</max_control></CoordinateActuator>"
        for c in COORDINATES
    )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
        f'<ForceSet name="reserves"><objects>{items}{extra}</objects><groups /></ForceSet>'
        "</OpenSimDocument>\n"
    )
    return path


def write_thelen_model(path: Path) -> Path:
    """The shared subject01.osim with Thelen2003Muscles instead of Millard2012EquilibriumMuscles."""
    text = (DATA / "subject01.osim").read_text()
    path.write_text(text.replace("Millard2012EquilibriumMuscle", "Thelen2003Muscle"))
    return path


def write_setup(path: Path, model: Path, reserves: Path, *, t0=0.5, t1=1.2, jr="", so=None):
    so = (
        '<StaticOptimization name="StaticOptimization"><on>true</on>'
        f"<start_time>{t0}</start_time><end_time>{t1}</end_time><step_interval>1</step_interval>"
        "<use_model_force_set>true</use_model_force_set><activation_exponent>2"
        "</activation_exponent><use_muscle_physiology>true</use_muscle_physiology>"
        "<optimizer_convergence_criterion>1e-08</optimizer_convergence_criterion>"
        "<optimizer_max_iterations>1000</optimizer_max_iterations></StaticOptimization>"
        if so is None
        else so
    )
    path.write_text(
        f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <AnalyzeTool name="subject01_walk">
    <model_file>{model}</model_file>
    <replace_force_set>false</replace_force_set>
    <force_set_files>{reserves}</force_set_files>
    <results_directory>Results</results_directory>
    <initial_time>{t0}</initial_time>
    <final_time>{t1}</final_time>
    <AnalysisSet name="Analyses"><objects>{so}{jr}</objects><groups /></AnalysisSet>
    <ControllerSet name="Controllers"><objects /></ControllerSet>
    <external_loads_file>{DATA / "subject01_walk_grf.xml"}</external_loads_file>
    <coordinates_file>{DATA / "subject01_walk_IK.mot"}</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>
  </AnalyzeTool>
</OpenSimDocument>
"""
    )
    return path


def joint_reaction_xml(
    forces_file="", joints="ALL", on="child", frame="child", t0=0.5, t1=1.2, name="JointReaction"
):
    return (
        f'<JointReaction name="{name}"><on>true</on><start_time>{t0}</start_time>'
        f"<end_time>{t1}</end_time><step_interval>1</step_interval>"
        f"<forces_file>{forces_file}</forces_file><joint_names>{joints}</joint_names>"
        f"<apply_on_bodies>{on}</apply_on_bodies><express_in_frame>{frame}</express_in_frame>"
        "</JointReaction>"
    )


@needs_data
def test_read_setup_and_actuators(tmp_path):
    reserves = write_reserves(tmp_path / "reserves.xml")
    acts = read_actuators(reserves)
    assert [a.coordinate for a in acts] == COORDINATES
    assert acts[0].optimal_force == 1000.0 and acts[3].min_control == -math.inf
    setup = write_setup(
        tmp_path / "setup.xml",
        tmp_path / "model.osim",
        reserves,
        jr=joint_reaction_xml("f.sto", "knee_r hip_r", "child parent", "ground"),
    )
    s = read_so_setup(setup)
    assert s.name == "subject01_walk" and s.force_set_files == (reserves,)
    assert s.static_optimization.optimizer_max_iterations == 1000
    assert s.initial_time == 0.5 and s.lowpass_cutoff_frequency == 6.0
    (j,) = s.joint_reactions
    assert j.joint_names == ("knee_r", "hip_r") and j.apply_on_bodies == ("child", "parent")
    assert j.forces_file == tmp_path / "f.sto" and s.results_directory == tmp_path / "Results"


def test_setup_errors(tmp_path):
    reserves = write_reserves(tmp_path / "reserves.xml")
    bad = write_setup(tmp_path / "bad.xml", tmp_path / "m.osim", reserves, so="")
    with pytest.raises(FileFormatError, match="no <StaticOptimization>"):
        read_so_setup(bad)
    body = write_reserves(
        tmp_path / "res2.xml", extra='<BodyActuator name="BX"><body>pelvis</body></BodyActuator>'
    )
    with pytest.raises(FileFormatError, match="line 2.*BodyActuator 'BX'"):
        read_actuators(body)
    other = tmp_path / "other.xml"
    other.write_text("<OpenSimDocument><InverseDynamicsTool/></OpenSimDocument>")
    with pytest.raises(FileFormatError, match="no <AnalyzeTool>"):
        read_so_setup(other)


@needs_data
def test_run_writes_opensims_files(tmp_path):
    model_file = write_thelen_model(tmp_path / "thelen.osim")
    reserves = write_reserves(tmp_path / "reserves.xml")
    setup = write_setup(
        tmp_path / "setup.xml",
        model_file,
        reserves,
        jr=joint_reaction_xml(joints="knee_r ankle_r", frame="ground"),
    )
    assert main(["so", str(setup)]) == 0
    out = tmp_path / "Results"
    act = read_mot(out / "subject01_walk_StaticOptimization_activation.sto", angle_columns=[])
    frc = read_mot(out / "subject01_walk_StaticOptimization_force.sto", angle_columns=[])
    jr = read_mot(out / "subject01_walk_JointReaction_ReactionLoads.sto", angle_columns=[])
    model = read_osim(model_file)
    muscles = [m.name for m in model.muscles]
    assert act.columns == muscles + [f"reserve_{c}" for c in COORDINATES]
    assert act.name == "Static Optimization" and len(act.time) == 43  # 0.5 to 1.2 s at 60 Hz
    assert act.data[muscles].to_numpy().min() >= 0.01 - 1e-12  # Thelen's min_control
    assert jr.columns[0] == "knee_r_on_tibia_r_in_ground_fx" and len(jr.columns) == 18
    # the forces reproduce the ID tool's generalized forces of the same trial
    res = run_so_setup(setup, write=False, model=model)
    ids = run_id_setup(_id_setup(tmp_path, model_file), write=False, model=model)
    sel = np.searchsorted(ids.time, res.time - 1e-9)
    np.testing.assert_allclose(res.result.tau, ids.tau[sel], atol=1e-6)
    # the force file: the actuators, then (as OpenSim's) the external loads
    loads = [f"calcn_{s}_{n}_{k}{a}" for s, n in (("r", "right"), ("l", "left"))
             for k in "FpT" for a in "xyz"]  # fmt: skip
    assert frc.columns == res.actuator_names + loads
    np.testing.assert_allclose(frc.data[res.actuator_names].to_numpy(), res.forces, rtol=1e-7,
                               atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(
        res.result.muscle_forces, frc.data[muscles].to_numpy(), rtol=1e-7, atol=1e-6
    )
    assert np.abs(res.result.residuals).max() < 1e-5
    # the knee carries several body weights at its peak (compressive, on the tibia)
    knee = jr.data[["knee_r_on_tibia_r_in_ground_fx", "knee_r_on_tibia_r_in_ground_fy"]]
    bw = sum(b.mass for b in model.bodies) * 9.81
    assert 1.5 < np.linalg.norm(knee.to_numpy(), axis=1).max() / bw < 8.0


def _id_setup(tmp_path: Path, model_file: Path) -> Path:
    text = (DATA / "subject01_Setup_ID.xml").read_text()
    text = text.replace("<model_file>subject01.osim", f"<model_file>{model_file}")
    text = text.replace("subject01_walk_grf.xml", str(DATA / "subject01_walk_grf.xml"))
    text = text.replace("subject01_walk_IK.mot", str(DATA / "subject01_walk_IK.mot"))
    path = tmp_path / "setup_id.xml"
    path.write_text(text)
    return path


@needs_data
def test_joint_reaction_from_a_forces_file_and_errors(tmp_path, capsys):
    model_file = write_thelen_model(tmp_path / "thelen.osim")
    reserves = write_reserves(tmp_path / "reserves.xml")
    first = write_setup(tmp_path / "so.xml", model_file, reserves, t0=0.6, t1=0.8)
    res = run_so_setup(first)
    forces = res.outputs[1]
    second = write_setup(
        tmp_path / "jr.xml",
        model_file,
        reserves,
        t0=0.6,
        t1=0.8,
        jr=joint_reaction_xml(str(forces), "knee_l", "parent", "child", t0=0.6, t1=0.8),
    )
    again = run_so_setup(second, write=False)
    t, jr = again.joint_reactions["JointReaction"]
    assert jr.body_names == ("femur_l",) and jr.frames == ("tibia_l",)
    assert t.shape == (13,) and jr.force.shape == (13, 1, 3)
    # the same muscle forces from the file and from this run
    same = write_setup(
        tmp_path / "jr2.xml", model_file, reserves, t0=0.6, t1=0.8,
        jr=joint_reaction_xml("", "knee_l", "parent", "child", t0=0.6, t1=0.8),
    )  # fmt: skip
    _, jr2 = run_so_setup(same, write=False).joint_reactions["JointReaction"]
    np.testing.assert_allclose(jr.force, jr2.force, rtol=1e-6, atol=1e-4)
    # the model as shipped (Millard muscles) runs; a muscle class without curves is named
    millard = write_setup(tmp_path / "m.xml", DATA / "subject01.osim", reserves, t0=0.6, t1=0.8)
    assert main(["so", str(millard), "-q"]) == 0
    capsys.readouterr()
    other = tmp_path / "other.osim"
    other.write_text((DATA / "subject01.osim").read_text().replace(
        "Millard2012EquilibriumMuscle", "Millard2012AccelerationMuscle"))  # fmt: skip
    unknown = write_setup(tmp_path / "u.xml", other, reserves, t0=0.6, t1=0.8)
    assert main(["so", str(unknown)]) == 1
    err = capsys.readouterr().err
    assert "'hamstrings_r' (Millard2012AccelerationMuscle)" in err and "curves=" in err
