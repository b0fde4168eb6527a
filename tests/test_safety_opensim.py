"""The OpenSim tools never destroy their inputs nor compute from impossible values.

One test per problem users reproduced (the number in the test's name is the
issue's): ``ahbm ik/id/scale/so`` refuse an output that is one of the run's
inputs, a setup name that leaves the results folder and an output folder that
cannot be written, before the computation; values beyond physical bounds in
``.trc``/``.mot``/GRF files are refused naming the file, the column and the
frame; setup files count against the read cap and warnings stay short.

Most cases run on a small synthetic arm (written here); the same cases run on
copies of the shared subject01 files when they are present.
"""

from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sample_data import SHARED

import ahbm.io
from ahbm.cli import main
from ahbm.errors import AhbmError, AhbmWarning, DataError, FileFormatError
from ahbm.io import OpenSimTable, Trial, read_trc, write_trc
from ahbm.kinematics.marker_model import marker_jacobians
from ahbm.kinematics.tree import Model
from ahbm.opensim import inverse_dynamics_opensim, run_id_setup, run_ik_setup, write_osim
from ahbm.opensim.ik_tool import inverse_kinematics_opensim
from ahbm.opensim.scale_tool import run_scale
from ahbm.opensim.setup_files import read_id_setup
from ahbm.opensim.storage import read_mot, write_mot

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

IK = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><InverseKinematicsTool name="arm">
  <results_directory>.</results_directory>
  <model_file>arm.osim</model_file>
  <marker_file>arm.trc</marker_file>
  <IKTaskSet><objects><IKMarkerTask name="S1"><weight>2</weight></IKMarkerTask></objects>
  </IKTaskSet>
  <time_range>0 0.2</time_range>
  <report_errors>true</report_errors>
  <output_motion_file>arm_ik_out.mot</output_motion_file>
</InverseKinematicsTool></OpenSimDocument>
"""
ID = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><InverseDynamicsTool name="arm">
  <model_file>arm.osim</model_file>
  <results_directory>results</results_directory>
  <time_range>0 0.2</time_range>
  <forces_to_exclude>Muscles</forces_to_exclude>
  <external_loads_file>arm_grf.xml</external_loads_file>
  <coordinates_file>arm_ik.mot</coordinates_file>
  <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>
  <output_gen_force_file>arm_id.sto</output_gen_force_file>
  <joints_to_report_body_forces />
</InverseDynamicsTool></OpenSimDocument>
"""
LOADS = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><ExternalLoads name="loads"><objects>
  <ExternalForce name="hand"><applied_to_body>fore</applied_to_body>
    <force_identifier>hand_force_v</force_identifier>
    <point_identifier>hand_force_p</point_identifier>
    <torque_identifier>hand_torque_</torque_identifier></ExternalForce>
</objects><datafile>arm_grf.mot</datafile></ExternalLoads></OpenSimDocument>
"""
SCALE = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><ScaleTool name="arm">
  <mass>-1</mass>
  <GenericModelMaker><model_file>arm.osim</model_file></GenericModelMaker>
  <ModelScaler><apply>true</apply><scaling_order> manualScale</scaling_order>
    <ScaleSet><objects><Scale><scales> 1.1 1.1 1.1</scales><segment>upper</segment>
      <apply>true</apply></Scale></objects></ScaleSet>
    <output_model_file>arm_scaled.osim</output_model_file>
  </ModelScaler>
</ScaleTool></OpenSimDocument>
"""
MARKERS = ["S1", "S2", "E1", "E2"]


def _arm() -> Model:
    m = Model("arm", gravity=(0, -9.81, 0))
    m.add_body(
        "upper", "ground", {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["shoulder"]},
        mass=2.0, com=[0.15, 0, 0], inertia=np.diag([0.01, 0.01, 0.02]),
        markers={"S1": [0.1, 0.02, 0], "S2": [0.25, -0.02, 0]},
    )  # fmt: skip
    m.add_body(
        "fore", "upper", {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["elbow"]},
        position=[0.3, 0, 0], mass=1.0, com=[0.12, 0, 0], inertia=np.diag([0.005, 0.005, 0.01]),
        markers={"E1": [0.1, 0.02, 0], "E2": [0.25, 0, 0.01]},
    )  # fmt: skip
    return m


@pytest.fixture
def arm(tmp_path) -> Path:
    """A small arm run: model, markers (mm), coordinates (degrees), a hand load, setups."""
    m = _arm()
    write_osim(m, tmp_path / "arm.osim")
    t = np.arange(25) / 100.0
    q = np.stack([0.3 + t, 1.0 - 0.5 * t], axis=1)
    p, _ = marker_jacobians(m, q, marker_names=MARKERS)
    write_trc(Trial(points=p, point_labels=MARKERS, point_rate=100.0), tmp_path / "arm.trc")
    df = pd.DataFrame({"shoulder": q[:, 0], "elbow": q[:, 1]}, index=pd.Index(t, name="time"))
    write_mot(df, tmp_path / "arm_ik.mot", in_degrees=True)
    tg = np.arange(60) / 200.0
    values = {"hand_force_vx": 1.0, "hand_force_vy": -20.0, "hand_force_px": 0.5}
    grf = {f"hand_{k}{a}": np.full(60, values.get(f"hand_{k}{a}", 0.0))
           for k in ("force_v", "force_p", "torque_") for a in "xyz"}  # fmt: skip
    write_mot(pd.DataFrame(grf, index=pd.Index(tg, name="time")), tmp_path / "arm_grf.mot")
    for name, text in (("ik.xml", IK), ("id.xml", ID), ("arm_grf.xml", LOADS),
                       ("scale.xml", SCALE)):  # fmt: skip
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.fixture
def subject01(tmp_path) -> Path:
    """Copies of the shared subject01 files (short time ranges)."""
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    for path in DATA.iterdir():
        shutil.copy(path, tmp_path / path.name)
        (tmp_path / path.name).chmod(0o644)
    for name in ("subject01_Setup_IK.xml", "subject01_Setup_ID.xml"):
        _edit(tmp_path / name, "<time_range> 0 2.5", "<time_range> 0 0.05")
    return tmp_path


def _edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))
    return path


def _files(folder: Path) -> dict:
    """Digest of every file under `folder` (to prove the inputs were left alone)."""
    return {
        str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _refused(argv, folder: Path, capsys, *words) -> str:
    """Run the command; it must fail with exit code 1, change no file, and say `words`."""
    before = _files(folder)
    siblings = sorted(p.name for p in folder.parent.iterdir())
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)
    assert _files(folder) == before
    assert sorted(p.name for p in folder.parent.iterdir()) == siblings  # nothing left the folder
    return err


def _no_computation(monkeypatch):
    """Make the tools' computations fail the test: refusals must come before them."""

    def computed(*args, **kwargs):
        raise AssertionError("the computation ran before the outputs were checked")

    import ahbm.opensim.id_tool as id_mod
    import ahbm.opensim.ik_tool as ik_mod

    monkeypatch.setattr(id_mod, "_inverse_dynamics_opensim", computed)
    monkeypatch.setattr(ik_mod, "inverse_kinematics_opensim", computed)


# --- 1-4: outputs over the run's inputs -------------------------------------------------------


def test_01_ik_output_motion_file_naming_the_trc_is_refused(arm, capsys):
    setup = _edit(arm / "ik.xml", "arm_ik_out.mot", "arm.trc")
    _refused(["ik", str(setup)], arm, capsys, "marker file", "arm.trc")
    with pytest.raises(DataError, match="marker file"):
        run_ik_setup(setup)
    assert read_trc(arm / "arm.trc").n_frames == 25


def test_02_ik_output_motion_file_naming_the_setup_is_refused(arm, capsys):
    setup = _edit(arm / "ik.xml", "arm_ik_out.mot", "ik.xml")
    _refused(["ik", str(setup)], arm, capsys, "setup file", "ik.xml")
    with pytest.raises(DataError, match="setup file"):
        run_ik_setup(setup)


def test_03_id_output_naming_its_coordinates_file_is_refused(arm, capsys):
    setup = _edit(arm / "id.xml", "<output_gen_force_file>arm_id.sto",
                  "<output_gen_force_file>../arm_ik.mot")  # fmt: skip
    _refused(["id", str(setup)], arm, capsys, "coordinates file", "arm_ik.mot")
    with pytest.raises(DataError, match="coordinates file"):
        run_id_setup(setup)
    assert read_mot(arm / "arm_ik.mot").in_degrees


@pytest.mark.parametrize(
    "command, edit, words",
    [
        (["id", "id.xml", "-o", "arm.osim"], None, ["model file"]),
        (["id", "id.xml", "-o", "arm_grf.mot"], None, ["external loads data file"]),
        (["id", "id.xml", "-o", "arm_grf.xml"], None, ["external loads file"]),
        (["id", "id.xml", "-o", "arm.trc"], None, ["not a file this writer writes"]),
        (["ik", "ik.xml", "-o", "arm.osim"], None, ["model file"]),
        (["ik", "ik.xml", "-o", "id.xml"], None, ["not a file this writer writes"]),
        # the marker-error file (<name>_ik_marker_errors.sto) is the coordinate file
        (["ik", "ik.xml"], ("ik.xml", "<time_range>",
         "<coordinate_file>arm_ik_marker_errors.sto</coordinate_file><time_range>"),
         ["coordinate file"]),
        # a setup name leaving the results folder
        (["ik", "ik.xml"], ("ik.xml", 'name="arm"', 'name="../escaped"'),
         ["'../escaped'", "cannot be used in an output file name"]),
        (["scale", "scale.xml", "-o", "arm.osim"], None, ["generic model file"]),
        (["scale", "scale.xml", "--scale-file", "scale.xml"], None, ["setup file"]),
        (["scale", "scale.xml"], ("scale.xml", "arm_scaled.osim", "arm.osim"),
         ["generic model file"]),
        (["scale", "scale.xml"], ("scale.xml", "arm_scaled.osim", "arm.trc"),
         ["not a file this writer writes"]),
    ],
)  # fmt: skip
def test_04_no_output_replaces_an_input_or_leaves_the_results_folder(
    arm, capsys, monkeypatch, command, edit, words
):
    monkeypatch.chdir(arm)
    if edit is not None:
        _edit(arm / edit[0], edit[1], edit[2])
    _refused(command, arm, capsys, *words)


def test_04_python_functions_refuse_the_same(arm):
    with pytest.raises(DataError, match="model file"):
        run_id_setup(arm / "id.xml", output=arm / "arm.osim")
    (arm / "link.mot").symlink_to(arm / "arm_ik.mot")  # through a link too
    with pytest.raises(DataError, match="coordinates file"):
        run_id_setup(arm / "id.xml", output=arm / "link.mot")
    with pytest.raises(DataError, match="marker file"):
        run_ik_setup(arm / "ik.xml", output=arm / "arm.trc")
    with pytest.raises(DataError, match="`scale_file` .* setup file"):
        run_scale(arm / "scale.xml", scale_file=arm / "scale.xml")
    _edit(arm / "scale.xml", "arm_scaled.osim", "arm.osim")
    with pytest.raises(DataError, match="generic model file"):
        run_scale(arm / "scale.xml")
    assert read_trc(arm / "arm.trc").n_frames == 25


@needs_data
@pytest.mark.parametrize(
    "command, edit, words",
    [
        (["ik", "subject01_Setup_IK.xml"], ("subject01_Setup_IK.xml",
         "<output_motion_file>subject01_walk_IK.mot", "<output_motion_file>subject01_walk.trc"),
         ["marker file"]),
        (["ik", "subject01_Setup_IK.xml"], ("subject01_Setup_IK.xml",
         "<output_motion_file>subject01_walk_IK.mot",
         "<output_motion_file>subject01_Setup_IK.xml"), ["setup file"]),
        (["id", "subject01_Setup_ID.xml"], ("subject01_Setup_ID.xml",
         "<output_gen_force_file>subject01_walk_ID.sto",
         "<output_gen_force_file>../subject01_walk_IK.mot"), ["coordinates file"]),
        (["id", "subject01_Setup_ID.xml", "-o", "subject01.osim"], None, ["model file"]),
        (["id", "subject01_Setup_ID.xml", "-o", "subject01_walk_grf.mot"], None,
         ["external loads data file"]),
    ],
)  # fmt: skip
def test_01_to_04_on_the_shared_subject01_files(subject01, capsys, monkeypatch, command, edit,
                                                words):  # fmt: skip
    monkeypatch.chdir(subject01)
    if edit is not None:
        _edit(subject01 / edit[0], edit[1], edit[2])
    _refused(command, subject01, capsys, *words)


@needs_data
@pytest.mark.parametrize(
    "edit, words",
    [
        (('name="subject01_walk"', 'name="../escaped"'), ["'../escaped'"]),
        (('<StaticOptimization name="StaticOptimization">',
          '<StaticOptimization name="a/b">'), ["'a/b'"]),
        # the activation output is the coordinates file of the run
        (("subject01_walk_IK.mot", "Results/subject01_walk_StaticOptimization_activation.sto"),
         ["coordinates file"]),
    ],
)  # fmt: skip
def test_04_so_outputs_are_checked(subject01, capsys, monkeypatch, edit, words):
    monkeypatch.chdir(subject01)
    model = (subject01 / "subject01.osim").read_text()  # muscles that ahbm models
    (subject01 / "thelen.osim").write_text(
        model.replace("Millard2012EquilibriumMuscle", "Thelen2003Muscle")
    )
    coordinates = read_mot(subject01 / "subject01_walk_IK.mot").columns
    reserves = "".join(
        f'<CoordinateActuator name="r_{c}"><coordinate>{c}</coordinate>'
        f"<optimal_force>{1000 if c.startswith('pelvis') else 100}</optimal_force>"
        "</CoordinateActuator>"
        for c in coordinates
    )
    (subject01 / "reserves.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
        f'<ForceSet name="reserves"><objects>{reserves}</objects></ForceSet></OpenSimDocument>\n'
    )
    setup = subject01 / "so.xml"
    setup.write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
        '<AnalyzeTool name="subject01_walk"><model_file>thelen.osim</model_file>'
        "<force_set_files>reserves.xml</force_set_files>"
        "<results_directory>Results</results_directory>"
        "<initial_time>0.5</initial_time><final_time>0.55</final_time>"
        '<AnalysisSet name="Analyses"><objects><StaticOptimization name="StaticOptimization">'
        "<on>true</on></StaticOptimization></objects></AnalysisSet>"
        "<external_loads_file>subject01_walk_grf.xml</external_loads_file>"
        "<coordinates_file>subject01_walk_IK.mot</coordinates_file>"
        "<lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>"
        "</AnalyzeTool></OpenSimDocument>\n"
    )
    if "Results/" in edit[1]:
        (subject01 / "Results").mkdir()
        shutil.copy(subject01 / "subject01_walk_IK.mot", subject01 / edit[1])
    _edit(setup, *edit)
    _refused(["so", "so.xml"], subject01, capsys, *words)


# --- 8: output folders that cannot be written ---------------------------------------------------


def test_08_unwritable_output_folder_is_refused_before_the_computation(arm, capsys, monkeypatch):
    import tempfile

    _no_computation(monkeypatch)
    # a results folder that cannot be created (a file is in the way)
    _edit(arm / "id.xml", "<results_directory>results", "<results_directory>arm.trc/results")
    _refused(["id", str(arm / "id.xml")], arm, capsys, "arm.trc/results", "create")
    # a folder in which no file can be created (as for a folder without write permission,
    # which root, who runs some test systems, could still write)
    locked = arm / "locked"
    locked.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).resolve() == locked.resolve():
            raise PermissionError(13, "Permission denied", str(dir))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    err = _refused(["id", str(arm / "id.xml"), "-o", str(locked / "x.sto")], arm, capsys,
                   "permission denied", "locked")  # fmt: skip
    assert "choose a folder you can write to" in err
    for call in (
        lambda: run_id_setup(arm / "id.xml", output=locked / "x.sto"),
        lambda: run_ik_setup(arm / "ik.xml", output=locked / "x.mot"),
    ):
        with pytest.raises(DataError, match="permission denied"):
            call()


def test_08_an_oserror_when_writing_becomes_a_data_error(arm, capsys, monkeypatch):
    import os

    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        # only the tool's output fails: numba's cache may rename its own files meanwhile
        if str(dst).endswith(".sto"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    assert main(["id", str(arm / "id.xml")]) == 1
    err = capsys.readouterr().err
    assert "arm_id.sto" in err and "free some disk space" in err
    assert not any((arm / "results").iterdir())  # no temporary left behind


# --- 10, 11, 17: values beyond physical bounds --------------------------------------------------


def _set_value(path: Path, row: int, column: int, value: str) -> None:
    """Replace one field of the data rows of a .mot (after endheader + labels) or .trc."""
    lines = path.read_text().split("\n")
    if path.suffix == ".trc":  # 5 header lines, maybe a blank one
        start = next(k for k in range(5, len(lines)) if lines[k].strip())
    else:
        start = [line.strip() for line in lines].index("endheader") + 2
    fields = lines[start + row].split("\t")
    fields[column] = value
    lines[start + row] = "\t".join(fields)
    path.write_text("\n".join(lines))


def test_10_coordinate_beyond_bounds_is_refused_by_id(arm, capsys):
    _set_value(arm / "arm_ik.mot", 7, 1, "1e30")  # shoulder, in degrees
    err = _refused(["id", str(arm / "id.xml")], arm, capsys, "arm_ik.mot", "'shoulder'",
                   "frame 7", "time 0.07 s", "1e+30 degrees")  # fmt: skip
    assert "±1000 rad or m" in err
    with pytest.raises(DataError, match=r"column 'shoulder', frame 7 \(time 0.07 s\)"):
        run_id_setup(arm / "id.xml", write=False)
    t = np.arange(30) / 60.0
    q = np.zeros(30)
    q[4] = 2e3  # rad
    table = OpenSimTable(pd.DataFrame({"shoulder": q}, index=pd.Index(t, name="time")))
    with pytest.raises(DataError, match=r"column 'shoulder', frame 4 .*2000 rad or m"):
        inverse_dynamics_opensim(_arm(), table)


def test_11_marker_beyond_bounds_is_refused(arm, capsys):
    _set_value(arm / "arm.trc", 3, 5, "1e30")  # S2 X, mm
    with pytest.raises(DataError) as info:
        read_trc(arm / "arm.trc")
    text = str(info.value)
    for word in ("arm.trc", "marker 'S2' X", "column X2", "frame 3", "time 0.03 s", "1e+27 m"):
        assert word in text, (word, text)
    _refused(["ik", str(arm / "ik.xml")], arm, capsys, "marker 'S2' X", "frame 3")
    assert not (arm / "arm_ik_out.mot").exists()
    x = np.zeros((5, 1, 3))
    x[2, 0, 1] = 5e3  # m
    trial = Trial(points=x, point_labels=["S1"], point_rate=100.0)
    with pytest.raises(DataError, match=r"column 'S1 Y', frame 2 \(time 0.02 s\)"):
        inverse_kinematics_opensim(_arm(), trial)


@pytest.mark.parametrize(
    "file, row, column, words",
    [
        ("arm.trc", 2, 2, ["marker 'S1' X", "frame 2"]),
        ("arm_ik.mot", 3, 2, ["arm_ik.mot", "'elbow'", "frame 3"]),
        ("arm_ik.mot", 3, 0, ["arm_ik.mot", "time of row 4", "row 3"]),
        ("arm_grf.mot", 5, 2, ["arm_grf.mot", "'hand_force_vy'", "frame 5", "1e+06 N"]),
        ("arm_grf.mot", 5, 4, ["arm_grf.mot", "'hand_force_px'", "frame 5", "1000 m"]),
        ("arm_grf.mot", 5, 8, ["arm_grf.mot", "'hand_torque_y'", "frame 5"]),
        ("arm_grf.mot", 5, 0, ["arm_grf.mot", "time of row 6", "row 5"]),
    ],
)
def test_17_values_of_1e308_name_the_file_and_column(arm, file, row, column, words):
    _set_value(arm / file, row, column, "1e308")
    run = run_ik_setup if file.endswith(".trc") else run_id_setup
    setup = arm / ("ik.xml" if file.endswith(".trc") else "id.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numpy overflow on the way
        with pytest.raises(DataError) as info:
            run(setup, write=False)
    text = str(info.value)
    for word in words:
        assert word in text, (word, text)
    for internal in ("`q`", "`qdd`", "`f_ext`", "`values`", "`time`"):
        assert internal not in text


@needs_data
@pytest.mark.parametrize(
    "file, row, column, value, words",
    [
        ("subject01_walk_IK.mot", 10, 4, "1e30", ["'hip_flexion_r'", "frame 10", "1e+30 degrees"]),
        ("subject01_walk.trc", 2, 3, "1e30", ["marker 'R.ASIS' Y", "frame 2", "1e+27 m"]),
        ("subject01_walk_IK.mot", 10, 4, "1e308", ["'hip_flexion_r'", "frame 10"]),
        ("subject01_walk_grf.mot", 10, 2, "1e308", ["'ground_force_vy'", "frame 10"]),
        ("subject01_walk_grf.mot", 10, 14, "1e308", ["'ground_torque_y'", "frame 10"]),
    ],
)  # fmt: skip
def test_10_11_17_on_the_shared_subject01_files(subject01, capsys, file, row, column, value,
                                                words):  # fmt: skip
    _set_value(subject01 / file, row, column, value)
    tool = "ik" if file.endswith(".trc") else "id"
    setup = subject01 / f"subject01_Setup_{tool.upper()}.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _refused([tool, str(setup)], subject01, capsys, file, *words)


# --- 15: setup files and the read cap, bounded warnings -----------------------------------------


@pytest.fixture
def small_cap():
    previous = ahbm.io.set_max_read_bytes(4_000_000)
    yield 4_000_000
    ahbm.io.set_max_read_bytes(previous)


def _long_list(arm: Path, n: int) -> Path:
    names = " ".join(f"j{i}" for i in range(n))
    tag = "joints_to_report_body_forces"
    return _edit(arm / "id.xml", f"<{tag} />", f"<{tag}>{names}</{tag}>")


def test_15_setup_lists_count_against_the_read_cap(arm, small_cap):
    setup = _long_list(arm, 90_000)  # a 0.6 MB file: 90,000 names of ~80 bytes once split
    assert setup.stat().st_size < small_cap
    with pytest.raises(FileFormatError, match="read cap") as info:
        read_id_setup(setup)
    assert "line 11, element <joints_to_report_body_forces>" in str(info.value)
    # elements too: 300,000 empty elements in a 1.5 MB file make a tree of many times that
    many = arm / "many.xml"
    many.write_text("<OpenSimDocument>" + "<a/>" * 300_000 + "</OpenSimDocument>")
    with pytest.raises(FileFormatError, match="read cap"):
        read_id_setup(many)


def test_15_a_list_longer_than_any_model_is_refused_at_once(arm):
    # 12 million names (~100 MB) took 40 s and 1.4 GB; the bound refuses it before splitting
    setup = _long_list(arm, 150_000)
    with pytest.raises(FileFormatError, match="more than 100,000 names") as info:
        read_id_setup(setup)
    assert "element <joints_to_report_body_forces>" in str(info.value)
    assert len(str(info.value)) < 400


def test_15_warnings_name_a_few_items_and_the_count(arm):
    setup = _long_list(arm, 50_000)
    with pytest.warns(AhbmWarning, match="joints_to_report_body_forces") as record:
        run_id_setup(setup, write=False)
    texts = [str(w.message) for w in record if "joints_to_report" in str(w.message)]
    assert len(texts) == 1 and len(texts[0]) < 400, len(texts[0])
    assert "'j0', 'j1'" in texts[0] and "50000 in all" in texts[0]


def test_results_are_still_written_where_the_setups_say(arm, capsys):
    """The checks refuse only what destroys the run's inputs: the usual runs still write."""
    elsewhere = arm.parent / (arm.name + "_out")
    _edit(arm / "ik.xml", "<output_motion_file>arm_ik_out.mot",
          f"<output_motion_file>{elsewhere}/ik.mot")  # fmt: skip
    assert main(["ik", str(arm / "ik.xml")]) == 0
    assert read_mot(elsewhere / "ik.mot").columns == ["shoulder", "elbow"]
    assert main(["ik", str(arm / "ik.xml")]) == 0  # its own previous result is replaced
    assert main(["id", str(arm / "id.xml")]) == 0
    assert main(["id", str(arm / "id.xml"), "-o", str(arm / "results" / "arm_id.sto")]) == 0
    assert main(["scale", str(arm / "scale.xml"), "-o", str(arm / "scaled.json")]) == 0
    assert (arm / "arm_scaled.osim").is_file() and (arm / "scaled.json").is_file()
    shutil.rmtree(elsewhere)
    assert isinstance(DataError("x"), AhbmError)
