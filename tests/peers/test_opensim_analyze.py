"""``ahbm analyze`` against OpenSim 4.6's AnalyzeTool, every column of every file.

OpenSim runs ``osim.AnalyzeTool(setup).run()`` in a child process
(tests/peers/opensim_oracle.py) on setups written here from the shared
subject01 files; ahbm runs the same setups. Five setups cover the rules:
"full" (every analysis, 6 Hz low-pass, external loads, muscle equilibrium,
0.5-1.7 s), "steps" (step_interval 3 and 2, body-local frame, a body list with
the center of mass, a point in ground, MuscleAnalysis and Actuation with the
fibers at their default length, far from equilibrium), "raw" (no filtering,
step_interval 4, radians, a point in the torso frame, 0.52-1.2 s), "reserves"
(Actuation of the muscles and of the appended residual and reserve actuators
of subject01_Reserve_Actuators.xml) and "replaced" (those actuators instead of
the muscles).

A column agrees when its largest difference is within 1e-6 of its range plus
half a unit of OpenSim's 8th decimal (5e-9). Measured (worst column relative
to its range): Kinematics 1.7e-7, BodyKinematics 2.5e-7, PointKinematics
2.7e-8 (OpenSim's 8-decimal rounding); MuscleAnalysis 8.6e-5 on a tendon length
whose range is 5.8e-5 m (a 5e-9 m difference, the rounding again). Columns whose
range is below 1e-5 are within 5e-9 absolute, except MuscleAnalysis
velocities and powers of muscles at rest (fiber velocities ~1e-8 m/s, set by
the equilibrium tolerances of the two solvers): within 1e-7 (measured 4.3e-8 W).
Fiber powers far from equilibrium reach 3e7 W; they are within 1e-13 of their
magnitude (measured 1.9e-7 W, the double-precision round-off). Actuation
(measured): forces 9e-10, powers 4e-10, speeds 4e-8 of the range.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

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
from opensim_oracle import opensim_run  # noqa: E402

from ahbm.opensim import read_mot  # noqa: E402
from ahbm.opensim.analyze_tool import run_analyze_setup  # noqa: E402

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

SETUPS = {
    "full": dict(
        analyses=KINEMATICS.format(name="Kinematics", step=1, deg="true")
        + BODY.format(deg="true", bodies="all", local="false")
        + POINT.format(rel="pelvis")
        + MUSCLES.format(muscles="all", coords="all")
        + ACTUATION.format(step=1),
    ),
    "steps": dict(
        analyses=KINEMATICS.format(name="Kin", step=3, deg="false")
        + BODY.format(deg="true", bodies="tibia_r center_of_mass pelvis", local="true")
        + POINT.format(rel="none")
        + MUSCLES.format(muscles="all", coords="knee_angle_r hip_flexion_l")
        + ACTUATION.format(step=2),
        equilibrium=False,
        t0=0.51,
    ),
    "reserves": dict(
        analyses=ACTUATION.format(step=1) + KINEMATICS.format(name="Kinematics", step=1,
                                                              deg="true"),
        force_set=[RESERVES],
        t1=1.3,
    ),
    "replaced": dict(
        analyses=ACTUATION.format(step=1) + BODY.format(deg="true", bodies="all", local="false"),
        force_set=[RESERVES],
        replace=True,
        t1=1.0,
    ),
    "raw": dict(
        analyses=KINEMATICS.format(name="Kinematics", step=4, deg="true")
        + BODY.format(deg="false", bodies="all", local="true")
        + POINT.format(rel="torso")
        + MUSCLES.format(muscles="soleus_r vasti_l", coords="knee_angle_r ankle_angle_r"),
        cutoff=-1,
        t0=0.52,
        t1=1.2,
    ),
}

ORACLE = """
for path in INPUTS["setups"]:
    osim.AnalyzeTool(path).run()
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("analyze")
    paths = {}
    for key, kw in SETUPS.items():
        paths[key] = write_analyze_setup(tmp / f"{key}.xml", results=f"osim_{key}", **kw)
    opensim_run(ORACLE, setups=[str(p) for p in paths.values()])
    return tmp, paths


def _compare(ref_dir: Path, mine_dir: Path, names) -> dict:
    """Worst (relative to range, file, column) per analysis; asserts the bound."""
    worst = {}
    for name in names:
        a = read_mot(ref_dir / name, angle_columns=[])
        b = read_mot(mine_dir / name, angle_columns=[])
        assert b.columns == a.columns, name
        assert (b.name, b.in_degrees) == (a.name, a.in_degrees), name
        assert len(b.time) == len(a.time), name
        np.testing.assert_allclose(b.time, a.time, atol=5e-9)
        A, B = a.values, b.values
        span = A.max(0) - A.min(0)
        diff = np.abs(A - B).max(0)
        # muscles at rest: fiber velocities ~1e-8 m/s set by the equilibrium tolerance
        floor = 1e-7 if "MuscleAnalysis" in name else 5e-9
        flat = span < 1e-5
        # plus the round-off of large values (powers of fibers far from equilibrium)
        bound = 1e-6 * span + np.where(flat, floor, 5e-9) + 1e-13 * np.abs(A).max(0)
        assert np.all(diff <= bound), name
        if (~flat).any():
            rel = np.where(flat, 0.0, diff / np.where(flat, 1.0, span))
            j = int(np.argmax(rel))
            analysis = name.split("_")[2]
            if rel[j] >= worst.get(analysis, (-1.0,))[0]:
                worst[analysis] = (float(rel[j]), name, a.columns[j])
    return worst


@pytest.mark.parametrize("key", list(SETUPS))
def test_every_column_matches_opensim(runs, key):
    tmp, paths = runs
    res = run_analyze_setup(paths[key], output_dir=tmp / f"ahbm_{key}")
    ref_dir = tmp / f"osim_{key}"
    refs = sorted(p.name for p in ref_dir.glob("*.sto"))
    assert refs, "OpenSim wrote no file"
    assert sorted(p.name for p in res.outputs) == refs  # OpenSim's file names, all of them
    worst = _compare(ref_dir, tmp / f"ahbm_{key}", refs)
    for analysis, (rel, name, col) in worst.items():
        print(f"{key}: {analysis} worst {rel:.2g} of the range ({name}, {col})")
