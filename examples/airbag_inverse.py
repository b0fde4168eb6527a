"""Inverse dynamics model of an airbag load on the head (AHBM §5.1.2).

A synthetic recording is made by loading the 2-D head-neck model with a
known airbag force on the face (forward simulation, T1 at rest). From the
recorded joint angles alone (differentiated numerically), inverse dynamics
with the known passive neck elements recovers the airbag force.

Usage: python examples/airbag_inverse.py [OUTPUT_FOLDER] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ahbm.graphics import save_figure
from ahbm.models.airbag import airbag_force, airbag_test, estimate_head_load
from ahbm.models.head_neck import head_neck_model, intervertebral_elements


def run(out: Path, quick: bool = False) -> dict:
    model = head_neck_model()
    tol = 1e-4 if quick else 1e-5  # Radau tolerance of the synthetic recording
    recording = airbag_test(
        model, t_end=0.05 if quick else 0.1, rate=5000.0, rtol=tol, atol=tol * 1e-2
    )
    t, q = recording.t, recording.q  # the "recorded" motion
    estimate = estimate_head_load(model, q, time=t, forces=intervertebral_elements(model))
    true = airbag_force(t)
    peak = float(np.max(np.linalg.norm(true, axis=1)))
    error = float(np.max(np.linalg.norm(estimate.force - true, axis=1)))
    head = np.degrees(q.sum(axis=1))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(6, 5.5), sharex=True)
    axes[0].plot(t * 1e3, head, "k")
    axes[0].set_ylabel("head rotation (deg)")
    axes[0].set_title("(a) recorded head rotation relative to T1 (extension < 0)")
    for k, (label, color) in enumerate([("x", "r"), ("z", "b")]):
        i = (0, 2)[k]
        axes[1].plot(t * 1e3, true[:, i] / 1e3, color, lw=3, alpha=0.35, label=f"applied {label}")
        axes[1].plot(t * 1e3, estimate.force[:, i] / 1e3, color + "--", label=f"estimated {label}")
    axes[1].set_ylabel("load on head (kN)")
    axes[1].set_xlabel("time (ms)")
    axes[1].set_title(f"(b) airbag load: max error {100 * error / peak:.2f} % of peak")
    axes[1].legend(ncol=2, fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = save_figure(fig, out / "airbag_inverse.png", dpi=80)
    summary = {
        "peak_load_N": peak,
        "max_error_N": error,
        "relative_error": error / peak,
        "peak_head_extension_deg": float(-head.min()),
        "figure": path,
    }
    print(f"applied peak load {peak:.0f} N; estimated from the motion with max error "
          f"{error:.1f} N ({100 * error / peak:.2f} % of peak)")  # fmt: skip
    print(f"peak head extension {summary['peak_head_extension_deg']:.1f} deg")
    print(f"figure: {path}")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="short run for tests")
    args = parser.parse_args()
    run(Path(args.out), quick=args.quick)
