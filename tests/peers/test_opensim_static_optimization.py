"""Static optimization and joint reaction loads against OpenSim's analyses (shared walking trial).

OpenSim runs in a child process (tests/peers/opensim_oracle.py). The shared
subject01.osim has Millard2012EquilibriumMuscles; OpenSim's AnalyzeTool runs
StaticOptimization on the trial with the model as shipped (reserve
CoordinateActuators on every coordinate), then JointReaction with the force file
it wrote; ``ahbm so`` runs the same setups (Millard's strengths through
``millard_force_coefficients(convention="opensim")``). A second run has the
muscles replaced by Thelen2003Muscles with the same parameters and path
(``MILLARD_TO_THELEN``): the Thelen class in the same whole-trial comparison.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from opensim_oracle import MILLARD_TO_THELEN, opensim_run  # noqa: E402
from sample_data import SHARED
from test_opensim_so import joint_reaction_xml, write_reserves, write_setup  # noqa: E402

from ahbm.opensim import (
    read_mot,  # noqa: E402
    run_so_setup,  # noqa: E402
)

DATA = SHARED / "opensim"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

T0, T1 = 0.5, 1.7  # about one gait cycle of the right leg
ACTIVATION = "subject01_walk_StaticOptimization_activation.sto"
FORCE = "subject01_walk_StaticOptimization_force.sto"

ORACLE = (
    """
m = osim.Model(INPUTS["thelen_from"])
m.initSystem()
"""
    + MILLARD_TO_THELEN
    + """m.printToXML(INPUTS["thelen"])
OUT["muscles"] = [t.getName() for t in news]
for key in ("so", "jr", "so_thelen"):
    tool = osim.AnalyzeTool(INPUTS[key])
    tool.run()
"""
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("so")
    shipped = DATA / "subject01.osim"  # Millard2012EquilibriumMuscles
    thelen = tmp / "subject01_thelen.osim"
    reserves = write_reserves(tmp / "reserves.xml")
    so = write_setup(tmp / "setup_so.xml", shipped, reserves, t0=T0, t1=T1)
    so_thelen = write_setup(tmp / "setup_so_thelen.xml", thelen, reserves, t0=T0, t1=T1)
    text = so_thelen.read_text()
    so_thelen.write_text(
        text.replace("<results_directory>Results", "<results_directory>osim_thelen")
    )
    forces = tmp / "Results" / FORCE
    jr_xml = joint_reaction_xml(str(forces), "ALL", "child", "child", t0=T0, t1=T1)
    jr_xml += joint_reaction_xml(
        str(forces), "knee_r hip_l", "parent", "ground", T0, T1, name="JRparent"
    )
    so_off = '<StaticOptimization name="StaticOptimization"><on>false</on></StaticOptimization>'
    jr = write_setup(tmp / "setup_jr.xml", shipped, reserves, t0=T0, t1=T1, jr=jr_xml, so=so_off)
    out = opensim_run(ORACLE, thelen_from=str(shipped), thelen=str(thelen), so=str(so),
                      jr=str(jr), so_thelen=str(so_thelen))  # fmt: skip
    osim_dir = tmp / "Results"  # OpenSim's files (ahbm writes elsewhere)
    return tmp, osim_dir, out["muscles"], so, jr, so_thelen


def _activation_rms(mine, ref, muscles) -> dict:
    return {
        name: float(np.sqrt(np.mean((mine.data[name].to_numpy() - ref.data[name].to_numpy()) ** 2)))
        for name in muscles
    }


def test_millard_activations_and_forces_match_opensim(runs):
    """The muscles as shipped (Millard2012EquilibriumMuscle), no swap.

    Measured (OpenSim 4.6, 73 rows 0.5-1.7 s): activation RMS at most 1.0e-5
    (iliopsoas_r; largest single difference 3.8e-5), reserves 7e-6, muscle forces
    within 0.053 N of OpenSim's (peak 2032 N), the external-load columns to the
    file's 8 digits.
    """
    tmp, osim_dir, muscles, so, _, _ = runs
    ours = run_so_setup(so, output_dir=tmp / "ahbm")
    assert ours.result.muscle_names == tuple(muscles)
    ref = read_mot(osim_dir / ACTIVATION, angle_columns=[])
    mine = read_mot(tmp / "ahbm" / ACTIVATION, angle_columns=[])
    assert mine.columns == ref.columns  # OpenSim's actuators, OpenSim's order
    assert len(mine.time) == len(ref.time) == 73
    np.testing.assert_allclose(mine.time, ref.time, atol=1e-6)
    rms = _activation_rms(mine, ref, muscles)
    worst = max(rms, key=rms.get)
    print(f"Millard activation RMS vs OpenSim: worst {rms[worst]:.2e} ({worst})")
    assert rms[worst] < 0.01  # the task's bound
    assert rms[worst] < 1e-4  # measured 1.0e-5
    assert ref.data[muscles].to_numpy().max() > 0.5  # the muscles work
    for c in ref.columns:
        if c.startswith("reserve_"):
            np.testing.assert_allclose(mine.data[c], ref.data[c], atol=1e-4)
    # the force file: OpenSim's columns (actuators, then the external loads) and rows
    fref = read_mot(osim_dir / FORCE, angle_columns=[])
    fmine = read_mot(ours.outputs[1], angle_columns=[])
    assert fmine.columns == fref.columns and len(fref.columns) == 46
    np.testing.assert_allclose(fmine.time, fref.time, atol=1e-6)
    F, Fr = fmine.data[muscles].to_numpy(), fref.data[muscles].to_numpy()
    assert np.abs(F - Fr).max() < 1e-4 * Fr.max()  # measured 2.6e-5
    ext = [c for c in fref.columns if c.startswith("calcn_")]
    np.testing.assert_allclose(fmine.data[ext], fref.data[ext], atol=2e-8)


def test_thelen_swap_activations_match_opensim(runs):
    """The same muscles as Thelen2003Muscles: measured activation RMS ~1e-5."""
    tmp, _, muscles, _, _, so_thelen = runs
    ours = run_so_setup(so_thelen, output_dir=tmp / "ahbm_thelen")
    ref = read_mot(tmp / "osim_thelen" / ACTIVATION, angle_columns=[])
    mine = read_mot(ours.outputs[0], angle_columns=[])
    assert mine.columns == ref.columns
    rms = _activation_rms(mine, ref, muscles)
    print("Thelen activation RMS vs OpenSim per muscle:", {k: f"{v:.1e}" for k, v in rms.items()})
    assert max(rms.values()) < 1e-3
    for c in ref.columns:
        if c.startswith("reserve_"):
            np.testing.assert_allclose(mine.data[c], ref.data[c], atol=1e-3)
    forces_ref = read_mot(tmp / "osim_thelen" / FORCE, angle_columns=[])
    scale = forces_ref.data[muscles].to_numpy().max()
    err = np.abs(ours.forces[:, : len(muscles)] - forces_ref.data[muscles].to_numpy()).max()
    assert err < 1e-3 * scale
    # the classes matter: Millard's strengths give other activations than Thelen's
    millard = read_mot(tmp / "Results" / ACTIVATION, angle_columns=[])
    assert max(_activation_rms(millard, ref, muscles).values()) > 0.005


def test_joint_reactions_match_opensim(runs):
    tmp, osim_dir, _, _, jr, _ = runs
    ours = run_so_setup(jr, output_dir=tmp / "ahbm_jr")
    for name in ("JointReaction", "JRparent"):
        ref = read_mot(osim_dir / f"subject01_walk_{name}_ReactionLoads.sto", angle_columns=[])
        mine = read_mot(tmp / "ahbm_jr" / f"subject01_walk_{name}_ReactionLoads.sto",
                        angle_columns=[])  # fmt: skip
        assert mine.columns == ref.columns  # OpenSim's joints in OpenSim's order
        worst = {}
        for col in [c for c in ref.columns if c.endswith("_fx")]:
            root = col[:-3]
            for kind in "fmp":
                cols = [f"{root}_{kind}{a}" for a in "xyz"]
                r = ref.data[cols].to_numpy()
                o = mine.data[cols].to_numpy()
                scale = max(np.linalg.norm(r, axis=1).max(), 1e-9)
                worst[f"{root}_{kind}"] = float(np.abs(o - r).max() / scale)
        print(name, "max error / peak magnitude:", {k: f"{v:.1e}" for k, v in worst.items()})
        # within 1 % of the peak load of each joint (measured: < 2e-4)
        assert max(worst.values()) < 0.01
    t, knee = ours.joint_reactions["JRparent"]
    assert knee.body_names == ("femur_r", "pelvis") and knee.frames == ("ground", "ground")


ORACLE_DEGROOTE = """
m = osim.Model(INPUTS["model"])
m.initSystem()
osim.DeGrooteFregly2016Muscle.replaceMuscles(m)
for i in range(m.getForceSet().getSize()):
    d = osim.DeGrooteFregly2016Muscle.safeDownCast(m.getForceSet().get(i))
    if d is not None:
        d.set_ignore_tendon_compliance(True)  # OpenSim cannot equilibrate them elastic here
m.finalizeConnections()
m.printToXML(INPUTS["degroote"])
osim.AnalyzeTool(INPUTS["so"]).run()
"""


def test_degroote_activations_and_opensims_fiber_strength(tmp_path):
    """De Groote muscles: OpenSim's static optimization takes the strength along the fiber.

    ahbm's strength is by default the force along the tendon, ``F0 fL fV cos α``;
    OpenSim's DeGrooteFregly2016Muscle gives StaticOptimization ``F0 fL fV`` (no
    ``cos α``). ``ahbm so`` uses OpenSim's (``convention="opensim"``) and agrees to
    solver tolerance; the default differs, within the issue's 0.02 RMS (this model's
    pennation reaches 25°).
    """
    from ahbm.muscles import static_optimization
    from ahbm.opensim import inverse_dynamics_opensim, read_osim, read_so_setup
    from ahbm.opensim.id_tool import coordinates_to_radians

    model_file = tmp_path / "subject01_degroote.osim"
    reserves = write_reserves(tmp_path / "reserves.xml")
    so = write_setup(tmp_path / "setup_so.xml", model_file, reserves, t0=T0, t1=T1)
    opensim_run(ORACLE_DEGROOTE, model=str(DATA / "subject01.osim"),
                degroote=str(model_file), so=str(so))  # fmt: skip
    ref = read_mot(tmp_path / "Results" / "subject01_walk_StaticOptimization_activation.sto",
                   angle_columns=[])  # fmt: skip
    ours = run_so_setup(so, write=False)
    muscles = list(ours.result.muscle_names)
    A = ref.data[muscles].to_numpy()
    rms = np.sqrt(np.mean((ours.result.activations - A) ** 2, axis=0))
    print("De Groote (ahbm so) activation RMS vs OpenSim:", rms.max())
    assert rms.max() < 1e-4
    # the library's default: strengths along the tendon
    model = read_osim(model_file)
    setup = read_so_setup(so)
    coords = coordinates_to_radians(model, read_mot(setup.coordinates_file, angle_columns=[]))
    idr = inverse_dynamics_opensim(model, coords, external_loads=setup.external_loads,
                                   cutoff=6.0, time_range=(T0, T1))  # fmt: skip
    opt = {c: 1000.0 if c.startswith("pelvis") else 100.0 if c == "lumbar_extension" else 1.0
           for c in model.coordinate_names}  # fmt: skip
    tendon = static_optimization(model, idr.q, idr.qd, idr.qdd, tau=idr.tau, reserves=opt)
    rms = np.sqrt(np.mean((tendon.activations - A) ** 2, axis=0))
    print("De Groote (tendon convention) activation RMS vs OpenSim:",
          dict(zip(muscles, rms.round(4), strict=True)))  # fmt: skip
    assert 1e-3 < rms.max() < 0.02


ORACLE_RESIDUALS = """
for key in ("shipped", "pt"):
    osim.AnalyzeTool(INPUTS[key]).run()
"""


def test_point_and_torque_actuators_and_rows_match_opensim(tmp_path):
    """OpenSim's residuals (Point/TorqueActuators) and its rows of a late window.

    ``shipped``: subject01_Reserve_Actuators.xml as shipped (FX, FY on the
    pelvis, MZ pelvis-ground, reserves on the joints), as in OpenSim's
    gait10dof18musc example. ``pt``: the test reserves plus a PointActuator
    (body-frame point and direction on the torso) and a TorqueActuator (axis in
    femur_r's frame, femur_r on pelvis). Window 1.5-2.0 s: OpenSim's first row
    is its resampled 1.4999989 s (last row at or before the start time).
    The model as shipped (Millard2012EquilibriumMuscles). Measured (1.5-2.0 s):
    muscle activation RMS 2.8e-5 (shipped, whose 1-2 N residuals need controls
    ~30), 1.1e-5 (pt); the Point/Torque controls' RMS within 4e-3 of OpenSim's
    (peak ~30) and 1e-6 (pt). (With the muscles swapped to Thelen2003Muscles the
    shipped case gave 4e-3.)
    """
    from test_so_fixes import POINT_TORQUE

    model = DATA / "subject01.osim"  # Millard2012EquilibriumMuscles
    shipped = write_setup(tmp_path / "shipped.xml", model,
                          DATA / "subject01_Reserve_Actuators.xml", t0=1.5, t1=2.0)  # fmt: skip
    reserves = write_reserves(tmp_path / "reserves_pt.xml", extra=POINT_TORQUE)
    pt = write_setup(tmp_path / "pt.xml", model, reserves, t0=1.5, t1=2.0)
    for p, key in ((shipped, "shipped"), (pt, "pt")):
        p.write_text(p.read_text().replace("<results_directory>Results",
                                           f"<results_directory>osim_{key}"))  # fmt: skip
    opensim_run(ORACLE_RESIDUALS, shipped=str(shipped), pt=str(pt))
    for key, setup, tol_muscle, tol_other in ((("shipped", shipped, 1e-3, 0.02)),
                                              ("pt", pt, 1e-3, 1e-4)):  # fmt: skip
        ours = run_so_setup(setup, output_dir=tmp_path / f"ahbm_{key}")
        osim_dir = tmp_path / f"osim_{key}"
        ref = read_mot(osim_dir / "subject01_walk_StaticOptimization_activation.sto",
                       angle_columns=[])  # fmt: skip
        mine = read_mot(ours.outputs[0], angle_columns=[])
        assert mine.columns == ref.columns
        assert len(mine.time) == len(ref.time) == 31
        np.testing.assert_allclose(mine.time, ref.time, atol=1e-7)
        muscles = list(ours.result.muscle_names)
        d = mine.data.to_numpy() - ref.data.to_numpy()
        rms = np.sqrt(np.mean(d**2, axis=0))
        others = [c for c in ref.columns if c not in muscles and "reserve" not in c]
        idx = [ref.columns.index(c) for c in others]
        print(key, "muscle activation RMS", rms[: len(muscles)].max(),
              dict(zip(others, rms[idx].round(6), strict=True)))  # fmt: skip
        assert rms[: len(muscles)].max() < tol_muscle
        peak = np.abs(ref.data[others].to_numpy()).max(axis=0)
        assert (rms[idx] < tol_other * np.maximum(peak, 1.0)).all()
        frc = read_mot(osim_dir / FORCE, angle_columns=[])
        # both force files also record the external loads (calcn_r_right_Fx ...)
        assert read_mot(ours.outputs[1], angle_columns=[]).columns == frc.columns
