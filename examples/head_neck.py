"""Two-dimensional head-neck model in a 15 g frontal sled test (AHBM §5.2.4).

Nine rigid bodies (T1, C7 ... C1, head) joined by nonlinear viscoelastic
intervertebral elements; the T1 (sled) acceleration is prescribed and enters
as d'Alembert loads; the stiff problem is solved with the Radau integrator.

Usage: python examples/head_neck.py [OUTPUT_FOLDER] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ahbm.graphics import save_figure
from ahbm.models.head_neck import HEAD_NECK_JOINTS, head_neck_model, sled_pulse, sled_test


def run(out: Path, quick: bool = False) -> dict:
    model = head_neck_model()
    t_end = 0.16 if quick else 0.4
    result = sled_test(model, t_end=t_end, n_out=int(t_end * 1000) + 1)
    t = result.t
    head = np.degrees(result.q.sum(axis=1))  # head rotation relative to T1 (flexion +)
    k_peak = int(np.argmax(head))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(8, 7), sharex=True)
    axes = axes.ravel()
    axes[0].plot(t * 1e3, -sled_pulse(t)[:, 0] / 9.81, "k")
    axes[0].set_title("(a) sled deceleration (g)")
    axes[1].plot(t * 1e3, head, "r")
    axes[1].set_title("(b) head rotation (deg, flexion +)")
    for ax, joint in zip(axes[2:], ["c7_t1", "c6_c7", "c5_c6", "c4_c5"], strict=True):
        ax.plot(t * 1e3, np.degrees(result.q[:, HEAD_NECK_JOINTS.index(joint)]), "b")
        upper, lower = joint.upper().split("_")
        ax.set_title(f"{upper}-{lower} joint angle (deg)")
    for ax in axes[4:]:
        ax.set_xlabel("time (ms)")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = save_figure(fig, out / "head_neck.png", dpi=80)
    summary = {
        "peak_head_rotation_deg": float(head[k_peak]),
        "time_of_peak_s": float(t[k_peak]),
        "final_head_rotation_deg": float(head[-1]),
        "peak_joint_angles_deg": dict(
            zip(HEAD_NECK_JOINTS, np.degrees(result.q.max(axis=0)).round(2).tolist(), strict=True)
        ),
        "n_steps": result.n_steps,
        "nfev": result.nfev,
        "figure": path,
    }
    print(f"peak head flexion {summary['peak_head_rotation_deg']:.1f} deg "
          f"at {1e3 * summary['time_of_peak_s']:.0f} ms; "
          f"at {1e3 * t[-1]:.0f} ms: {summary['final_head_rotation_deg']:.1f} deg")  # fmt: skip
    print("peak joint flexion (deg):", summary["peak_joint_angles_deg"])
    print(f"Radau: {result.n_steps} steps, {result.nfev} right-hand-side evaluations")
    print(f"figure: {path}")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="short run for tests")
    args = parser.parse_args()
    run(Path(args.out), quick=args.quick)
