"""Fifteen-segment whole-body model hit on the chest (AHBM §5.2.3).

A 75 kg, 1.8 m adult (de Leva 1996 parameters) with nonlinear joint springs,
dampers and soft joint stops, floating freely (no seat, no ground), is hit
on the sternum by a 4 kN, 30 ms half-sine force. The script plots the impact
force, the chest acceleration, and the head's linear and angular acceleration.

Usage: python examples/whole_body.py [OUTPUT_FOLDER] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ahbm.dynamics import simulate
from ahbm.graphics import save_figure
from ahbm.kinematics import forward_kinematics, neutral_q, point_acceleration
from ahbm.models.whole_body import chest_impact, joint_elements, whole_body_model

G = 9.81


def run(out: Path, quick: bool = False) -> dict:
    model = whole_body_model(height=1.8, mass=75.0, sex="male")
    impact = chest_impact(model, peak=4000.0, duration=0.03, onset=0.01)
    t_end = 0.05 if quick else 0.2
    t = np.linspace(0.0, t_end, int(t_end * 2000) + 1)
    res = simulate(model, (0.0, t_end), neutral_q(model), np.zeros(model.nv),
                   forces=[*joint_elements(model), impact], method="RK45",
                   rtol=1e-5, atol=1e-7, t_eval=t)  # fmt: skip
    thorax, head = model.body_index("thorax"), model.body_index("head")
    a_chest = point_acceleration(model, res.q, res.qd, res.qdd, thorax, model.coms[thorax])
    a_head = point_acceleration(model, res.q, res.qd, res.qdd, head, model.coms[head])
    alpha_head = forward_kinematics(model, res.q, res.qd, res.qdd).accelerations[:, head, :3]
    force = np.array([impact.force(x) for x in t])

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(8, 6), sharex=True)
    ms = t * 1e3
    axes[0, 0].plot(ms, -force[:, 0] / 1e3, "k")
    axes[0, 0].set_title("(a) impact force on chest (kN)")
    axes[0, 1].plot(ms, a_chest[:, 0] / G, "r", label="x")
    axes[0, 1].plot(ms, a_chest[:, 2] / G, "b", label="z")
    axes[0, 1].set_title("(b) chest acceleration (g)")
    axes[1, 0].plot(ms, alpha_head[:, 1], "m")
    axes[1, 0].set_title("(c) head angular acceleration about y (rad/s²)")
    axes[1, 1].plot(ms, a_head[:, 0] / G, "r", label="x")
    axes[1, 1].plot(ms, a_head[:, 2] / G, "b", label="z")
    axes[1, 1].set_title("(d) head acceleration (g)")
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("time (ms)")
    axes[0, 1].legend()
    fig.tight_layout()
    path = save_figure(fig, out / "whole_body.png", dpi=80)
    # the gravity part of an absolute acceleration is the same for all points: report the
    # acceleration relative to free fall (what an accelerometer would read, minus 1 g)
    a_chest_rel = a_chest - model.gravity
    a_head_rel = a_head - model.gravity
    summary = {
        "peak_force_kN": float(np.max(np.abs(force))) / 1e3,
        "peak_chest_g": float(np.max(np.linalg.norm(a_chest_rel, axis=1))) / G,
        "peak_head_g": float(np.max(np.linalg.norm(a_head_rel, axis=1))) / G,
        "peak_head_angular_rad_s2": float(np.max(np.linalg.norm(alpha_head, axis=1))),
        "n_steps": res.n_steps,
        "figure": path,
    }
    print(f"model {model.n_bodies} segments, {model.nv} DOF, {model.total_mass:.1f} kg; "
          f"impact {summary['peak_force_kN']:.1f} kN")  # fmt: skip
    print(f"peak chest acceleration {summary['peak_chest_g']:.1f} g, head "
          f"{summary['peak_head_g']:.1f} g, head angular "
          f"{summary['peak_head_angular_rad_s2']:.0f} rad/s^2")  # fmt: skip
    print(f"figure: {path}")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="short run for tests")
    args = parser.parse_args()
    run(Path(args.out), quick=args.quick)
