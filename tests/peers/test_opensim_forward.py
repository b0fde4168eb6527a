"""``ahbm forward`` against OpenSim 4.6's ForwardTool on subject01 (18 Millard muscles).

OpenSim (tests/peers/opensim_oracle.py, a child process) poses subject01 with
joint angles and speeds, puts its fibers in equilibrium, writes that state as a
states file, and runs ``osim.ForwardTool(setup).run()`` with linear controls
(a ControlSet written here) from 0 to 0.04 s at an integrator tolerance of
1e-7. ahbm runs the same setup; its states at OpenSim's rows (from its dense
output) agree within 1e-4 (measured 2.6e-5, on a speed; OpenSim's own result at
that tolerance is itself within about 1e-5 of a 1e-9 run).

The run stays where OpenSim's path forces are the gradient of the path length:
beyond knee_angle 0.1745 (the end of a moving path point's spline of the
quadriceps), OpenSim's moment arm of rect_fem and vasti is not -dl/dq (0.035 m
against 0.074 m at 0.186 rad, its own length differentiated), and its
simulation follows those forces. ahbm's moment arms are -dl/dq there; see
docs/opensim.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from forward_setups import random_controls, write_controls_xml, write_forward_setup  # noqa: E402
from opensim_oracle import opensim_run  # noqa: E402
from sample_data import SHARED  # noqa: E402

from ahbm.opensim import read_mot  # noqa: E402
from ahbm.opensim.forward_tool import run_forward_setup  # noqa: E402

DATA = SHARED / "opensim"
MODEL = DATA / "subject01.osim"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

ORACLE = """
m = osim.Model(INPUTS["model"])
s = m.initSystem()
cs = m.getCoordinateSet()
for name, (q, u) in INPUTS["pose"].items():
    cs.get(name).setValue(s, q)
    cs.get(name).setSpeedValue(s, u)
m.equilibrateMuscles(s)
traj = osim.StatesTrajectory()
traj.append(s)
osim.STOFileAdapter.write(traj.exportToTable(m), INPUTS["states"])
OUT["muscles"] = [m.getMuscles().get(i).getName() for i in range(m.getMuscles().getSize())]
"""
RUN = """
osim.ForwardTool(INPUTS["setup"]).run()
"""
POSE = {"hip_flexion_r": (0.4, 1.0), "knee_angle_r": (-0.6, -2.0), "ankle_angle_r": (0.1, 0.5),
        "hip_flexion_l": (-0.2, -0.8), "knee_angle_l": (-0.5, 0.5), "pelvis_tilt": (-0.05, 0.2),
        "lumbar_extension": (-0.1, 0.0), "pelvis_tx": (0.0, 1.2)}  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forward")
    states = tmp / "init_states.sto"
    out = opensim_run(ORACLE, model=str(MODEL), pose=POSE, states=str(states))
    t, v = random_controls(len(out["muscles"]))
    controls = write_controls_xml(tmp / "controls.xml", out["muscles"], t, v)
    setup = write_forward_setup(tmp / "fwd.xml", MODEL, controls=controls, states=states,
                                t1=0.04, tol=1e-7, results="osim")  # fmt: skip
    opensim_run(RUN, setup=str(setup))
    return tmp, setup


def test_states_match_opensim(runs):
    tmp, setup = runs
    res = run_forward_setup(setup, output_dir=tmp / "ahbm")
    ref = read_mot(tmp / "osim" / "fwd_states.sto", angle_columns=[])
    mine = read_mot(tmp / "ahbm" / "fwd_states.sto", angle_columns=[])
    assert mine.columns == ref.columns == res.state_labels  # OpenSim's state paths and order
    assert sorted(p.name for p in (tmp / "ahbm").iterdir()) == sorted(
        p.name for p in (tmp / "osim").iterdir()
    )
    diff = np.abs(res.states_at(ref.time) - ref.values)
    worst = int(np.argmax(diff.max(0)))
    print(f"worst state difference {diff.max():.2g} ({ref.columns[worst]}), "
          f"{res.evaluations} evaluations, {len(res.time)} rows")  # fmt: skip
    assert diff.max() < 1e-4
    # the motion is real: coordinates move by much more than the bound
    assert np.ptp(ref.values[:, ref.columns.index("/jointset/knee_r/knee_angle_r/value")]) > 0.02


def test_controls_match_opensim(runs):
    tmp, setup = runs
    ref = read_mot(tmp / "osim" / "fwd_controls.sto", angle_columns=[])
    mine = read_mot(tmp / "ahbm" / "fwd_controls.sto", angle_columns=[])
    assert mine.columns == ref.columns
    from ahbm.opensim.forward_setup import read_controls

    c = read_controls(tmp / "controls.xml")
    # 8 decimals of the values and of the times (the controls change up to 3 per second)
    np.testing.assert_allclose(c(ref.time, ref.columns), ref.values, rtol=0, atol=3e-8)
