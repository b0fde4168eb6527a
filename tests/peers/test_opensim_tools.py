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

from ahbm.errors import AhbmWarning
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
    # the times of the TRC's Time column (0.017, not 1/60 s), identical as text
    assert _time_text(res.output) == _time_text(trial_dir / "opensim_ik.mot")
    np.testing.assert_array_equal(ours.time, ref.time)
    for c in ref.columns:
        d = ours.data[c].to_numpy() - ref.data[c].to_numpy()
        rms = np.sqrt(np.mean(d**2))
        scale = 180 / np.pi if c in ref.angle_columns else 1000.0  # deg, mm
        assert rms * scale < 1.0, c
        assert rms * scale < 0.05, c  # both solve the same problem to their tolerances
    # the same marker errors (OpenSim's from its own solution, ours from ours)
    np.testing.assert_allclose(res.rms_error, errors.data["marker_error_RMS"], atol=2e-5)


def _time_text(path) -> list:
    """The first field of each data row of a MOT/STO file, as text."""
    lines = path.read_text().splitlines()
    end = next(i for i, s in enumerate(lines) if s.strip().lower() == "endheader")
    return [r.split("\t")[0].strip() for r in lines[end + 2 :] if r.strip()]


def _add_columns(src, dst, columns: dict, *, first: bool = False) -> None:
    """A copy of a MOT file with extra columns (label -> values), at the end or first."""
    lines = src.read_text().splitlines()
    end = next(i for i, s in enumerate(lines) if s.strip().lower() == "endheader")
    labels = lines[end + 1].split()
    head = [
        f"nColumns={len(labels) + len(columns)}" if r.startswith("nColumns") else r
        for r in lines[: end + 1]
    ]
    rows = [r.split() for r in lines[end + 2 :] if r.strip()]
    extra = [[repr(float(v[k])) for v in columns.values()] for k in range(len(rows))]
    if first:
        labels = [labels[0], *columns, *labels[1:]]
        rows = [[r[0], *e, *r[1:]] for r, e in zip(rows, extra, strict=True)]
    else:
        labels = [*labels, *columns]
        rows = [r + e for r, e in zip(rows, extra, strict=True)]
    dst.write_text("\n".join(head + ["\t".join(labels)] + ["\t".join(r) for r in rows]) + "\n")


@pytest.mark.parametrize("case", ["extra", "coordinate_after", "coordinate_first"])
def test_id_tool_reads_repeated_columns_as_opensim(tmp_path, case):
    # OpenSim reads a coordinates file with repeated labels: repeated columns that are no
    # coordinate are ignored, a repeated coordinate is taken from its first column
    for name in FILES:
        shutil.copy(DATA / name, tmp_path / name)
        (tmp_path / name).chmod(0o644)
    ik = tmp_path / "subject01_walk_IK.mot"
    n = len(read_mot(ik))
    knee = read_mot(ik, angle_columns=[]).data["knee_angle_r"].to_numpy()
    if case == "extra":  # as OpenSim's stored gait2392 IK output: both feet's GRF labels
        rng = np.random.default_rng(3)
        extra = {f"ground_force_v{a}": rng.normal(size=n) for a in "xyz"}
        _add_columns(ik, ik, extra)
        _add_columns(ik, ik, extra)
    else:
        _add_columns(ik, ik, {"knee_angle_r": knee + 10.0}, first=case == "coordinate_first")
    opensim_run(
        """
        tool = osim.InverseDynamicsTool(INPUTS["setup"])
        tool.setOutputGenForceFileName("opensim_ID.sto")
        tool.run()
        """,
        setup=str(tmp_path / "subject01_Setup_ID.xml"),
        cwd=str(tmp_path),
    )
    ref = read_mot(tmp_path / "Results" / "opensim_ID.sto")
    with pytest.warns(AhbmWarning, match="duplicate column labels"):
        res = run_id_setup(tmp_path / "subject01_Setup_ID.xml", output=tmp_path / "ahbm_ID.sto")
    ours = read_mot(res.output)
    assert ours.columns == ref.columns
    np.testing.assert_allclose(ours.time, ref.time, atol=1e-8)
    span = np.ptp(ref.values, axis=0)
    assert np.all(np.abs(ours.values - ref.values).max(axis=0) <= 1e-6 * span)
    # which column was used: the unmodified file's moments agree only when it was the first
    shutil.copy(DATA / "subject01_walk_IK.mot", tmp_path / "orig.mot")
    setup = (tmp_path / "subject01_Setup_ID.xml").read_text()
    (tmp_path / "orig.xml").write_text(setup.replace("subject01_walk_IK.mot", "orig.mot"))
    plain = run_id_setup(tmp_path / "orig.xml", write=False)
    knee = plain.tau[:, plain.order][:, list(plain.labels).index("knee_angle_r_moment")]
    moved = np.abs(knee - ref.data["knee_angle_r_moment"].to_numpy()).max()
    assert (moved > 1.0) == (case == "coordinate_first"), moved
