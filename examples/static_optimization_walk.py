"""Muscle activations and knee contact force of a walking trial by static optimization.

The shared OpenSim walking trial (``subject01.osim``: 10 coordinates, 18 leg
muscles; ``subject01_walk_IK.mot``; ``subject01_walk_grf.mot/.xml``):

1. the coordinates are filtered and differentiated and the inverse-dynamics
   generalized forces computed as OpenSim's ID tool does
   (:func:`ahbm.opensim.inverse_dynamics_opensim`, 6 Hz);
2. static optimization (:func:`ahbm.muscles.static_optimization`) shares them
   among the muscles (sum of squared activations, the model's own
   Millard2012EquilibriumMuscle force-length-velocity curves, and reserve actuators:
   strong ones on the pelvis and trunk, which have no muscles, 1 N m on the leg
   joints);
3. the joint reaction loads (:func:`ahbm.muscles.joint_reaction_loads`, OpenSim's
   JointReaction) with those muscle forces give the knee contact force.

The figure shows the activations of the major right-leg muscles over the right
gait cycle (heel strike to heel strike, from the force plate) against the
approximate periods of normal EMG activity of Perry & Burnfield (2010), and the
tibiofemoral contact force of both knees in body weights (normal walkers reach
about 2-3 BW in instrumented-implant studies; models with few muscles and a
simple knee typically give more).

Usage: ``python examples/static_optimization_walk.py [OUTPUT_FOLDER] [--quick]``
(the figure goes to ``docs/img`` by default).

Reference: Perry, J. & Burnfield, J.M. (2010) *Gait Analysis: Normal and
Pathological Function*, 2nd ed., SLACK (muscle timing, ch. 4-6).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from ahbm.muscles import joint_reaction_loads, static_optimization
from ahbm.opensim import inverse_dynamics_opensim, read_external_loads, read_mot, read_osim
from ahbm.opensim.id_tool import coordinates_to_radians

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
ROOT = Path(__file__).resolve().parents[1]

#: Reserve actuators (optimal force, N m or N): the pelvis and the trunk have no muscles.
RESERVES = {"pelvis_tilt": 1000.0, "pelvis_tx": 1000.0, "pelvis_ty": 1000.0,
            "lumbar_extension": 100.0}  # fmt: skip
LEG_RESERVE = 1.0

#: Approximate periods of normal EMG activity, % of the gait cycle from heel strike
#: (Perry & Burnfield 2010).
EMG_ON = {
    "glut_max_r": [(0, 25), (95, 100)],
    "hamstrings_r": [(0, 10), (80, 100)],
    "iliopsoas_r": [(50, 75)],
    "rect_fem_r": [(55, 65)],
    "vasti_r": [(0, 15), (95, 100)],
    "gastroc_r": [(10, 50)],
    "soleus_r": [(8, 52)],
    "tib_ant_r": [(0, 12), (55, 100)],
}


def _events(grf, column: str, threshold: float = 20.0):
    """Times where a plate's vertical force rises above `threshold` (heel strikes)."""
    t = grf.time
    on = grf.data[column].to_numpy() > threshold
    return t[1:][np.diff(on.astype(int)) == 1]


def compute(data: Path = DATA) -> dict:
    """Static optimization and knee loads of the trial; returns arrays and numbers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # display meshes the model names but we do not need
        model = read_osim(data / "subject01.osim")
    coords = coordinates_to_radians(model, read_mot(data / "subject01_walk_IK.mot",
                                                    angle_columns=[]))  # fmt: skip
    loads = read_external_loads(data / "subject01_walk_grf.xml")
    ids = inverse_dynamics_opensim(model, coords, external_loads=loads, cutoff=6.0)
    reserves = {c: RESERVES.get(c, LEG_RESERVE) for c in model.coordinate_names}
    so = static_optimization(model, ids.q, ids.qd, ids.qdd, tau=ids.tau, reserves=reserves)
    jr = joint_reaction_loads(
        model, ids.q, ids.qd, ids.qdd, so.muscle_forces, f_ext=ids.f_ext,
        joints=["knee_r", "knee_l"], on="child", frame="child",
    )  # fmt: skip
    weight = model.total_mass * float(np.linalg.norm(model.gravity))
    knee_bw = np.linalg.norm(jr.force, axis=-1) / weight  # (n_frames, 2)
    grf = read_mot(loads.datafile, angle_columns=[])
    strikes = _events(grf, "ground_force_vy")
    legs = [k for k, c in enumerate(model.coordinate_names) if c not in RESERVES]
    return {
        "time": ids.time,
        "so": so,
        "knee_bw": knee_bw,
        "strikes": strikes,
        "weight": weight,
        # the largest reserve moment on a leg joint relative to that joint's peak moment
        "leg_reserve_share": float(
            (np.abs(so.reserve_loads[:, legs]).max(0) / np.abs(so.tau[:, legs]).max(0)).max()
        ),
    }


def run(out: Path, quick: bool = False) -> dict:
    """Compute and save ``static_optimization_walk.png`` in `out`; returns the key numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = compute()
    t, so, knee_bw, strikes = res["time"], res["so"], res["knee_bw"], res["strikes"]
    t0, t1 = strikes[0], strikes[1]  # one right gait cycle
    cyc = (t >= t0) & (t <= t1)
    pct = (t[cyc] - t0) / (t1 - t0) * 100
    names = list(so.muscle_names)
    fig, axes = plt.subplots(3, 3, figsize=(11, 7.5), sharex=True)
    for ax, (muscle, periods) in zip(axes.flat, EMG_ON.items(), strict=False):
        for a, b in periods:
            ax.axvspan(a, b, color="0.85", lw=0)
        ax.plot(pct, so.activations[cyc, names.index(muscle)], color="C3", lw=2)
        ax.set_ylim(0, 1)
        ax.set_title(muscle, fontsize=10)
    ax = axes.flat[-1]
    ax.plot(pct, knee_bw[cyc, 0], color="C0", lw=2, label="right knee")
    ax.plot(pct, knee_bw[cyc, 1], color="C1", lw=1.5, ls="--", label="left knee")
    ax.set_title("knee contact force (BW)", fontsize=10)
    ax.legend(fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("% right gait cycle")
    for ax in axes[:, 0]:
        ax.set_ylabel("activation")
    fig.suptitle(
        "Static optimization of a walking trial (18 Millard muscles): activations "
        "(red) vs normal EMG-on periods (grey)",
        fontsize=11,
    )
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "static_optimization_walk.png"
    fig.savefig(path, dpi=80 if quick else 100)
    plt.close(fig)
    return {
        "figure": path,
        "frames": int(t.size),
        "failed_frames": int(so.failed.sum()),
        "max_residual_Nm": float(np.abs(so.residuals).max()),
        "peak_knee_r_BW": float(knee_bw[cyc, 0].max()),
        "peak_knee_l_BW": float(knee_bw[:, 1].max()),
        "leg_reserve_share": res["leg_reserve_share"],
        "peak_soleus_r": float(so.activations[cyc, names.index("soleus_r")].max()),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=ROOT / "docs" / "img", type=Path)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"the shared walking trial is not at {DATA}")
        return 1
    for k, v in run(args.out, quick=args.quick).items():
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
