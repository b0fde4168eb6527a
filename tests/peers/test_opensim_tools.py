"""ahbm's runs of OpenSim's IK and ID setups against OpenSim's own tools (through the oracle).

OpenSim runs in a child process (tests/peers/opensim_oracle.py) on a copy of the shared
walking trial in a temporary folder (the tools write their outputs next to the setup).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from opensim_oracle import opensim_run
from sample_data import SHARED

from ahbm.opensim import opensim_coordinate_processing, run_id_setup, run_ik_setup
from ahbm.opensim.storage import read_mot

DATA = SHARED / "opensim"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")
FILES = (
    "subject01.osim",
    "subject01_walk.trc",
    "subject01_walk_grf.mot",
    "subject01_walk_grf.xml",
    "subject01_walk_IK.mot",
    "subject01_Setup_IK.xml",
    "subject01_Setup_ID.xml",
)


@pytest.fixture(scope="module")
def trial_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("opensim_tools")
    for name in FILES:
        shutil.copy(DATA / name, folder / name)
    return folder


def test_coordinate_processing_matches_opensim_storage_and_gcvsplineset():
    out = opensim_run(
        """
        s = osim.Storage(INPUTS["mot"])
        s.pad(s.getSize() // 2)
        s.lowpassIIR(6.0)
        splines = osim.GCVSplineSet(5, s)
        t = osim.ArrayDouble()
        s.getTimeColumn(t)
        times = np.array([t.get(i) for i in range(t.getSize())])
        i0 = s.findIndex(0.0)
        i1 = s.findIndex(2.5)
        sel = times[i0 : i1 + 1]
        OUT["time"] = sel
        OUT["names"] = [splines.get(i).getName() for i in range(splines.getSize())]
        for d in range(3):
            OUT[f"d{d}"] = [[splines.evaluate(i, d, float(x)) for i in range(splines.getSize())]
                            for x in sel]
        """,
        mot=str(DATA / "subject01_walk_IK.mot"),
    )
    table = read_mot(DATA / "subject01_walk_IK.mot", angle_columns=[])  # degrees as OpenSim
    assert out["names"] == table.columns
    res = opensim_coordinate_processing(
        table.time, table.data.to_numpy(), cutoff=6.0, time_range=(0.0, 2.5)
    )
    assert res.resampled  # 8-decimal times are not uniform to round-off
    np.testing.assert_allclose(res.time, out["time"], rtol=0, atol=1e-12)
    for d, ours in enumerate((res.q, res.qd, res.qdd)):
        ref = np.asarray(out[f"d{d}"])
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_id_tool_matches_opensim(trial_dir):
    opensim_run(
        """
        osim.InverseDynamicsTool(INPUTS["setup"]).run()
        """,
        setup=str(trial_dir / "subject01_Setup_ID.xml"),
        cwd=str(trial_dir),
    )
    ref = read_mot(trial_dir / "Results" / "subject01_walk_ID.sto")
    res = run_id_setup(trial_dir / "subject01_Setup_ID.xml", output=trial_dir / "ahbm_ID.sto")
    ours = read_mot(res.output)
    assert ours.columns == ref.columns  # names and OpenSim's (multibody-tree) order
    np.testing.assert_allclose(ours.time, ref.time, atol=1e-8)  # the .sto has 8 decimals
    for c in ref.columns:
        a, b = ours.data[c].to_numpy(), ref.data[c].to_numpy()
        span = np.ptp(b)
        assert np.abs(a - b).max() <= 0.02 * span, c  # the bound
        assert np.abs(a - b).max() <= 1e-6 * span, c  # what is reached (file rounding)


def test_ik_tool_matches_opensim(trial_dir):
    opensim_run(
        """
        tool = osim.InverseKinematicsTool(INPUTS["setup"])
        tool.set_output_motion_file(INPUTS["out"])
        tool.run()
        """,
        setup=str(trial_dir / "subject01_Setup_IK.xml"),
        out=str(trial_dir / "opensim_ik.mot"),
        cwd=str(trial_dir),
    )
    ref = read_mot(trial_dir / "opensim_ik.mot")
    errors = read_mot(trial_dir / "_ik_marker_errors.sto")  # OpenSim's; ours overwrites it
    res = run_ik_setup(trial_dir / "subject01_Setup_IK.xml", output=trial_dir / "ahbm_ik.mot")
    ours = read_mot(res.output)
    assert len(ours) == len(ref) == 151
    for c in ref.columns:
        d = ours.data[c].to_numpy() - ref.data[c].to_numpy()
        rms = np.sqrt(np.mean(d**2))
        scale = 180 / np.pi if c in ref.angle_columns else 1000.0  # deg, mm
        assert rms * scale < 1.0, c
        assert rms * scale < 0.05, c  # both solve the same problem to their tolerances
    # the same marker errors (OpenSim's from its own solution, ours from ours)
    np.testing.assert_allclose(res.rms_error, errors.data["marker_error_RMS"], atol=2e-5)
