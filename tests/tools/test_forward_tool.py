"""``ahbm forward``: ForwardTool setups and controls read, refused and run (without OpenSim).

The comparison with OpenSim's own ForwardTool is tests/peers/test_opensim_forward.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from forward_setups import random_controls, write_controls_xml, write_forward_setup  # noqa: E402
from sample_data import SHARED, needs_shared  # noqa: E402

from ahbm.cli import main  # noqa: E402
from ahbm.errors import AhbmWarning, DataError, FileFormatError  # noqa: E402
from ahbm.opensim import read_mot  # noqa: E402
from ahbm.opensim.forward_setup import read_controls, read_forward_setup  # noqa: E402
from ahbm.opensim.forward_tool import run_forward_setup  # noqa: E402

MODEL = SHARED / "opensim" / "subject01.osim"
MUSCLES = [f"{m}_{side}" for side in "rl" for m in (
    "hamstrings", "bifemsh", "glut_max", "iliopsoas", "rect_fem", "vasti", "gastroc", "soleus",
    "tib_ant")]  # fmt: skip


def test_control_linear_interpolates_and_extrapolates(tmp_path):
    t = np.array([0.0, 0.1, 0.3])
    v = np.array([[0.2, 0.5], [0.4, 0.1], [0.1, 0.3]])
    c = read_controls(write_controls_xml(tmp_path / "c.xml", ["a", "b"], t, v))
    assert c.names == ("a", "b")
    np.testing.assert_allclose(c([0.05, 0.2], ["b", "a"]), [[0.3, 0.3], [0.2, 0.25]])
    # beyond the nodes: linear extrapolation from the end segments
    np.testing.assert_allclose(c([-0.1, 0.4], ["a"]).ravel(), [0.0, -0.05], atol=1e-15)
    held = read_controls(write_controls_xml(tmp_path / "h.xml", ["a"], t, v[:, :1],
                                            extrapolate=False))  # fmt: skip
    np.testing.assert_allclose(held([-0.1, 0.4]).ravel(), [0.2, 0.1])
    assert np.all(c([0.1], ["nobody"]) == 0)


def test_controls_storage_is_linear_between_rows(tmp_path):
    path = tmp_path / "c.sto"
    path.write_text("controls\nversion=1\nnRows=3\nnColumns=3\ninDegrees=no\nendheader\n"
                    "time\tm1\tm2.excitation\n0\t0.1\t1\n0.5\t0.3\t0\n1\t0.2\t0.5\n")  # fmt: skip
    c = read_controls(path)
    assert c.names == ("m1", "m2")
    np.testing.assert_allclose(c([0.25, 0.75]), [[0.2, 0.5], [0.25, 0.25]])


@pytest.mark.parametrize(
    "body, match",
    [
        ("<ControlLinear name='a'><use_steps>true</use_steps><x_nodes/></ControlLinear>",
         r"line \d+.*use_steps"),
        ("<ControlConstant name='a'><value>1</value></ControlConstant>",
         r"line \d+.*ControlConstant"),
        ("<ControlLinear name='a'><x_nodes><ControlLinearNode><t>0.2</t><value>1</value>"
         "</ControlLinearNode><ControlLinearNode><t>0.1</t><value>1</value></ControlLinearNode>"
         "</x_nodes></ControlLinear>", "increase"),
        ("<ControlLinear name='a'><x_nodes/></ControlLinear>", "no <x_nodes>"),
    ],
)  # fmt: skip
def test_bad_controls_are_named(tmp_path, body, match):
    path = tmp_path / "c.xml"
    path.write_text(f"<OpenSimDocument><ControlSet><objects>{body}</objects></ControlSet>"
                    "</OpenSimDocument>")  # fmt: skip
    with pytest.raises(FileFormatError, match=match):
        read_controls(path)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(controller="<PrescribedController name='p'/>"), r"line \d+.*PrescribedController"),
        (dict(extra="<AnalysisSet2/>"), None),
        (dict(t0=0.2, t1=0.1), "final_time"),
        (dict(tol=-1), "integrator_error_tolerance"),
    ],
)
def test_bad_setups_are_named(tmp_path, kw, match):
    path = write_forward_setup(tmp_path / "s.xml", MODEL, **kw)
    if match is None:
        with pytest.warns(AhbmWarning, match=r"line \d+.*AnalysisSet2"):
            read_forward_setup(path)
        return
    with pytest.raises(FileFormatError, match=match):
        read_forward_setup(path)


def test_analyses_during_the_run_are_refused(tmp_path):
    path = write_forward_setup(tmp_path / "s.xml", MODEL)
    text = path.read_text().replace(
        '<AnalysisSet name="Analyses"><objects />',
        '<AnalysisSet name="Analyses"><objects><Kinematics name="K"><on>true</on></Kinematics>'
        "</objects>",
    )
    path.write_text(text)
    with pytest.raises(FileFormatError, match=r"line \d+.*Kinematics 'K'"):
        read_forward_setup(path)


@needs_shared
def test_energy_is_conserved_without_muscles(tmp_path):
    """Replaced force set, no force file: gravity only, so the total energy stays."""
    from ahbm.kinematics.forward import kinetic_energy, potential_energy
    from ahbm.opensim.coordinates import _read_osim

    path = write_forward_setup(tmp_path / "s.xml", MODEL, replace=True, t1=0.3, tol=1e-8)
    model = _read_osim(MODEL)
    q0 = np.zeros(model.nq)
    names = list(model.coordinate_names)
    q0[names.index("pelvis_ty")] = 1.0
    states = tmp_path / "init.sto"
    cols = [f"/jointset/{j}/{c}/{k}" for j, c in (("ground_pelvis", "pelvis_tilt"),
            ("hip_r", "hip_flexion_r"), ("knee_l", "knee_angle_l"), ("back", "lumbar_extension"))
            for k in ("value", "speed")]  # fmt: skip
    values = [0.1, 0.5, 0.3, -2.0, -0.4, 1.0, -0.2, 0.7]
    states.write_text("init\nversion=1\nnRows=1\nnColumns=9\ninDegrees=no\nendheader\ntime\t"
                      + "\t".join(cols) + "\n0\t" + "\t".join(map(str, values)) + "\n")  # fmt: skip
    text = path.read_text().replace("<states_file></states_file>",
                                    f"<states_file>{states}</states_file>")  # fmt: skip
    path.write_text(text)
    res = run_forward_setup(path, output_dir=tmp_path / "out")
    assert res.activation.shape[1] == 0
    assert res.q[0, names.index("hip_flexion_r")] == 0.3
    assert res.qd[0, names.index("lumbar_extension")] == 0.7
    e = kinetic_energy(model, res.q, res.qd) + potential_energy(model, res.q)
    assert np.ptp(e) < 1e-5 * np.abs(e).max()
    assert np.ptp(res.q[:, names.index("knee_angle_l")]) > 0.05  # it moved
    table = read_mot(tmp_path / "out" / "fwd_states.sto", angle_columns=[])
    assert table.columns[:2] == ["/jointset/ground_pelvis/pelvis_tilt/value",
                                 "/jointset/ground_pelvis/pelvis_tilt/speed"]  # fmt: skip
    deg = read_mot(tmp_path / "out" / "fwd_states_degrees.mot", angle_columns=[])
    assert deg.in_degrees
    np.testing.assert_allclose(deg.values[:, 0], np.degrees(table.values[:, 0]))
    np.testing.assert_allclose(deg.values[:, 2], table.values[:, 2])  # pelvis_tx: metres


@needs_shared
def test_muscles_follow_their_controls(tmp_path, capsys):
    t, v = random_controls(len(MUSCLES))
    v = np.broadcast_to(0.3 + 0.5 * v[:1], v.shape)  # constant, above the activations
    controls = write_controls_xml(tmp_path / "c.xml", MUSCLES, t, v)
    path = write_forward_setup(tmp_path / "s.xml", MODEL, controls=controls, t1=0.02, tol=1e-5,
                               equilibrium=True)  # fmt: skip
    assert main(["forward", str(path), "-o", str(tmp_path / "out")]) == 0
    assert "Forward: 0 to 0.02 s" in capsys.readouterr().out
    ctl = read_mot(tmp_path / "out" / "fwd_controls.sto", angle_columns=[])
    assert ctl.columns == MUSCLES
    np.testing.assert_allclose(ctl.values, read_controls(controls)(ctl.time, MUSCLES))
    st = read_mot(tmp_path / "out" / "fwd_states.sto", angle_columns=[])
    a = st.values[:, [st.columns.index(f"/forceset/{m}/activation") for m in MUSCLES]]
    # activations rise toward their constant excitations, never past them
    assert np.all(np.diff(a, axis=0) > 0) and np.all(a < ctl.values)


@needs_shared
def test_states_file_in_degrees_and_bad_time_are_refused(tmp_path):
    states = tmp_path / "s.sto"
    states.write_text("s\nversion=1\nnRows=1\nnColumns=2\ninDegrees=yes\nendheader\ntime\t"
                      "/jointset/hip_r/hip_flexion_r/value\n0\t20\n")  # fmt: skip
    path = write_forward_setup(tmp_path / "f.xml", MODEL, states=states, replace=True)
    with pytest.raises(DataError, match="degrees"):
        run_forward_setup(path, write=False)
    states.write_text(states.read_text().replace("inDegrees=yes", "inDegrees=no"))
    path = write_forward_setup(tmp_path / "g.xml", MODEL, states=states, replace=True, t0=1.0,
                               t1=1.1)  # fmt: skip
    with pytest.raises(DataError, match="initial_time"):
        run_forward_setup(path, write=False)
    assert main(["forward", str(path)]) == 1
