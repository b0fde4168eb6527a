"""``ahbm rra``: OpenSim's RRA setups, the tracking core, bad setups and the file layout.

The comparison with OpenSim 4.6 itself is tests/peers/test_opensim_rra.py; here
ahbm alone: the FIR filter against scipy's windowed-sinc design, the tracking
loop on a one-coordinate slider (closed-form least squares), bad setups (each
names its element, line or column, and the command exits with 1), and the
files of a run on the shared subject01 setup.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ahbm.cli import main
from ahbm.errors import AhbmError, DataError, FileFormatError
from ahbm.kinematics.tree import Model
from ahbm.opensim import read_mot
from ahbm.opensim._tracking_dynamics import IdealActuatorDynamics
from ahbm.opensim.cmc_tracking import (
    JointTask,
    desired_kinematics,
    opensim_lowpass_fir,
    track_kinematics,
)
from ahbm.opensim.processing import opensim_pad
from ahbm.opensim.rra_setup import read_rra_setup
from ahbm.opensim.rra_tool import run_rra_setup
from ahbm.opensim.so_setup import CoordinateActuatorSpec

SETUP = "subject01_Setup_RRA.xml"


# --- the pieces ------------------------------------------------------------------------------


@pytest.mark.parametrize("cutoff", [3.0, 6.0, 15.0])
def test_fir_is_the_hamming_windowed_sinc(cutoff):
    from scipy.signal import firwin

    rng = np.random.default_rng(3)
    x = np.cumsum(rng.normal(size=(300, 2)), axis=0)
    dt, M = 1.0 / 120.0, 50
    taps = firwin(2 * M + 1, cutoff, window="hamming", fs=1.0 / dt)  # unit gain at DC
    padded = opensim_pad(x, M)
    want = np.stack([np.convolve(padded[:, j], taps, mode="valid") for j in range(2)], 1)
    got = opensim_lowpass_fir(x, dt=dt, cutoff=cutoff, order=M)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(x).max())


def test_fir_needs_twice_its_order():
    with pytest.raises(DataError, match="at least 100 samples"):
        opensim_lowpass_fir(np.zeros(99), dt=0.01, cutoff=6.0)


def test_desired_speeds_are_the_spline_derivatives():
    t = np.arange(200) / 100.0
    q = np.stack([np.sin(2 * t), 0.3 * t**2], 1)
    d = desired_kinematics(t, q, cutoff=-1)
    qq, u, a = d.at(t[20:180])
    np.testing.assert_allclose(qq, q[20:180], atol=1e-12)
    np.testing.assert_allclose(u[:, 0], 2 * np.cos(2 * t[20:180]), atol=1e-6)
    np.testing.assert_allclose(a[:, 1], 0.6, atol=1e-6)
    with pytest.raises(DataError, match="pad 60 rows"):
        desired_kinematics(t[:50], q[:50], cutoff=6.0)


def _slider(mass=2.0):
    m = Model("slider", gravity=(0.0, 0.0, -9.81))
    m.add_body("cart", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=mass,
               inertia=np.eye(3) * 0.01)  # fmt: skip
    return m


def test_tracking_a_slider_is_the_closed_form_least_squares():
    """One coordinate, one reserve: f = argmin w (f/m − g − a*)² + (f/F)², exactly."""
    mass, w, F, kp, kv = 2.0, 50.0, 10.0, 100.0, 20.0
    model = _slider(mass)
    act = CoordinateActuatorSpec("z_reserve", model.coordinate_names[0], optimal_force=F)
    dyn = IdealActuatorDynamics(model, [act])
    t = np.arange(151) / 60.0
    d = desired_kinematics(t, (0.1 * np.sin(3 * t))[:, None], cutoff=6.0)
    task = JointTask("z", 0, weight=w, kp=kp, kv=kv)
    res = track_kinematics(dyn, d, [task], [F], t0=0.5, t1=1.5)
    # the first node: the pose at t0 + 1e-8 on the desired path (no errors yet)
    q, u, a = d.at([0.5 + 1e-8])
    a_star = a[0, 0]
    g = -9.81
    f = w * (a_star - g) / mass / (w / mass**2 + 1.0 / F**2)
    np.testing.assert_allclose(res.node_controls[0, 0], f / F, rtol=1e-10)
    assert res.time.size == 1000 and res.time[-1] == pytest.approx(1.499)
    # the stress term leaves a small, bounded tracking error
    assert np.abs(res.position_errors).max() < 2e-3
    # the recorded accelerations are the model's under the recorded forces
    np.testing.assert_allclose(res.udot[:, 0], res.forces[:, 0] / mass + g, atol=1e-9)


# --- bad setups ------------------------------------------------------------------------------


@pytest.fixture
def folder(shared_data, tmp_path):
    dst = tmp_path / "rra"
    shutil.copytree(shared_data / "opensim", dst)
    for p in dst.iterdir():
        p.chmod(0o644)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_unknown_setup_element_is_named_with_its_line(folder):
    setup = folder / SETUP
    _edit(
        setup, "<final_time>2.5</final_time>", "<final_time>2.5</final_time><speed_up>2</speed_up>"
    )
    with pytest.raises(FileFormatError, match=rf"line {_line_of(setup, 'speed_up')}.*<speed_up>"):
        read_rra_setup(setup)


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("<desired_points_file />", "<desired_points_file>p.trc</desired_points_file>",
         "desired_points_file"),
        ("<constraints_file />", "<constraints_file>c.xml</constraints_file>", "constraints_file"),
        ("<task_set_file>subject01_Tracking_Tasks.xml", "<task_set_file>none.xml", "none.xml"),
        ("<adjusted_com_body />", "<adjusted_com_body />"
         "<adjust_com_to_reduce_residuals>true</adjust_com_to_reduce_residuals>",
         "adjusted_com_body"),
    ],
)  # fmt: skip
def test_setup_elements_that_are_not_implemented(folder, old, new, match):
    setup = folder / SETUP
    if "adjust_com" in new:  # the shipped setup says false; make it true
        _edit(setup, "<adjust_com_to_reduce_residuals>false</adjust_com_to_reduce_residuals>", "")
    _edit(setup, old, new)
    with pytest.raises(AhbmError, match=match):
        read_rra_setup(setup)


def test_point_tasks_and_unsupported_actuators_are_named(folder):
    tasks = folder / "subject01_Tracking_Tasks.xml"
    _edit(tasks, '<CMC_Joint name="pelvis_tx">', '<CMC_Point name="pelvis_tx">')
    _edit(tasks, "</CMC_Joint>", "</CMC_Point>")
    line = _line_of(tasks, "<CMC_Point")
    with pytest.raises(FileFormatError, match=rf"line {line}.*CMC_Point 'pelvis_tx'"):
        read_rra_setup(folder / SETUP)
    shutil.copy(folder / "subject01_Tracking_Tasks.xml", folder / "t.xml")
    acts = folder / "subject01_Reserve_Actuators.xml"
    _edit(acts, '<PointActuator name="FX">', '<BodyActuator name="FX">')
    _edit(acts, "</PointActuator>", "</BodyActuator>")
    _edit(tasks, '<CMC_Point name="pelvis_tx">', '<CMC_Joint name="pelvis_tx">')
    _edit(tasks, "</CMC_Point>", "</CMC_Joint>")
    with pytest.raises(FileFormatError, match=r"BodyActuator 'FX'"):
        run_rra_setup(folder / SETUP, write=False)


def test_degrees_labelled_as_radians_name_the_column(folder):
    _edit(folder / "subject01_walk_IK.mot", "inDegrees=yes", "inDegrees=no")
    with pytest.raises(DataError, match=r"column 'pelvis_tilt'.*inDegrees=yes"):
        run_rra_setup(folder / SETUP, write=False)


def test_command_exits_nonzero_on_a_bad_setup(folder, capsys):
    _edit(folder / SETUP, "<model_file> subject01.osim", "<model_file> missing.osim")
    assert main(["rra", str(folder / SETUP), "-q"]) == 1
    assert "missing.osim" in capsys.readouterr().err


# --- the files of a run ----------------------------------------------------------------------


def test_rra_files_are_openSim_s(folder, capsys):
    setup = folder / SETUP
    _edit(setup, "<final_time>2.5</final_time>", "<final_time>0.6</final_time>")
    _edit(setup, "<adjust_com_to_reduce_residuals>false", "<adjust_com_to_reduce_residuals>true")
    _edit(setup, "<adjusted_com_body />", "<adjusted_com_body>torso</adjusted_com_body>")
    assert main(["rra", str(setup)]) == 0
    printed = capsys.readouterr().out
    assert "RRA: 600 frames (0 to 0.599 s)" in printed and "torso" in printed
    out = folder / "RRA_Results"
    stems = sorted(p.name for p in out.iterdir())
    want = [
        f"subject_adjusted_{k}"
        for k in (
            "Actuation_force.sto",
            "Actuation_power.sto",
            "Actuation_speed.sto",
            "Kinematics_dudt.sto",
            "Kinematics_q.sto",
            "Kinematics_u.sto",
            "avgResiduals.txt",
            "controls.sto",
            "controls.xml",
            "pErr.sto",
            "states.sto",
        )
    ] + ["subject01_adjusted.osim"]
    assert stems == sorted(want)  # fmt: skip
    force = read_mot(out / "subject_adjusted_Actuation_force.sto", angle_columns=[])
    assert force.name == "ActuatorForces" and force.columns[:3] == ["FX", "FY", "MZ"]
    assert force.time.size == 600 and force.time[1] == pytest.approx(0.001)
    q = read_mot(out / "subject_adjusted_Kinematics_q.sto")
    assert q.in_degrees and q.columns[:4] == ["pelvis_tilt", "pelvis_tx", "pelvis_ty",
                                              "hip_flexion_r"]  # fmt: skip
    ik = read_mot(folder / "subject01_walk_IK.mot")
    # the run starts on the (filtered) desired kinematics: OpenSim's padding keeps t = 0
    np.testing.assert_allclose(q.values[0], ik.values[0][: q.values.shape[1]], atol=1e-6)
    states = read_mot(out / "subject_adjusted_states.sto", angle_columns=[])
    assert states.columns[:2] == ["/jointset/ground_pelvis/pelvis_tilt/value",
                                  "/jointset/ground_pelvis/pelvis_tilt/speed"]  # fmt: skip
    perr = read_mot(out / "subject_adjusted_pErr.sto", angle_columns=[])
    assert perr.columns[0] == "pelvis_tx" and np.abs(perr.values).max() < 0.05
    text = (out / "subject_adjusted_avgResiduals.txt").read_text()
    assert re.fullmatch(r"Average Residuals:\n\n(([FM][XYZ]) average = \S+\n){6}", text)
    xml = (out / "subject_adjusted_controls.xml").read_text()
    assert xml.count("<ControlLinearNode>") == 10 * 601 and "<t>1e-08</t>" in xml
    osim = (out / "subject01_adjusted.osim").read_text()
    original = (folder / "subject01.osim").read_text()
    assert osim != original and len(osim.splitlines()) == len(original.splitlines())
