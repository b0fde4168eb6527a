"""Parameterized whole-body model (HeiMan-like): build, save as JSON, reload, draw.

The model is scaled from height and mass with de Leva proportions
(ahbm.models.heiman_model); the JSON model file can be edited by hand and
loaded again with ahbm.kinematics.load_model.

Usage: python examples/heiman.py [OUTPUT_FOLDER] [--height 1.79] [--mass 76] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ahbm.graphics import save_figure
from ahbm.kinematics import (
    center_of_mass,
    load_model,
    model_markers,
    neutral_q,
    point_position,
    save_model,
)
from ahbm.models.heiman import heiman_model


def run(out: Path, quick: bool = False, height: float = 1.79, mass: float = 76.0) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    model = heiman_model(height=height, mass=mass)
    path = save_model(model, out / "heiman.json")
    model = load_model(path)  # what a user gets back from the edited file
    q = neutral_q(model)
    # a posture for the picture: step forward, arms swinging, elbows bent
    names = model.coordinate_names
    for name, value in [("hip_r_ry", -0.4), ("knee_r", 0.3), ("hip_l_ry", 0.25),
                        ("shoulder_r_ry", 0.3), ("shoulder_l_ry", -0.3),
                        ("elbow_r", 0.6), ("elbow_l", 0.4)]:  # fmt: skip
        q[names.index(name)] = value
    head = model.body_index("head")
    vertex = point_position(model, neutral_q(model), head, model.bodies[head].markers["vertex"])
    foot = model.body_index("foot_r")
    heel = point_position(model, neutral_q(model), foot, model.bodies[foot].markers["heel_r"])
    stature = float(vertex[2] - heel[2])
    com = center_of_mass(model, neutral_q(model))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import draw_model

    fig = plt.figure(figsize=(5, 6))
    ax = fig.add_subplot(projection="3d")
    draw_model(model, q, ax=ax, frames=not quick, triad_length=0.08)
    ax.view_init(elev=10, azim=-60)
    ax.set_title(f"HeiMan-like model: {height} m, {mass} kg, {model.nv} DOF")
    fig.tight_layout()
    fig_path = save_figure(fig, out / "heiman.png", dpi=80)
    result = {
        "n_bodies": model.n_bodies,
        "nv": model.nv,
        "mass": model.total_mass,
        "stature": stature,
        "com_height": float(com[2] - heel[2]),
        "n_markers": len(model_markers(model).names),
        "json": path,
        "figure": fig_path,
    }
    print(f"bodies {model.n_bodies}, DOF {model.nv}, mass {model.total_mass:.2f} kg")
    print(f"standing height (heel to vertex) {stature:.3f} m for a {height} m subject")
    print(f"centre of mass {result['com_height']:.3f} m above the sole "
          f"({result['com_height'] / stature:.3f} of the model height)")  # fmt: skip
    print(f"{result['n_markers']} markers (sole landmarks, vertex, full-body Plug-in Gait)")
    print(f"model file: {path}; figure: {fig_path}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--height", type=float, default=1.79, help="stature, m")
    parser.add_argument("--mass", type=float, default=76.0, help="body mass, kg")
    parser.add_argument("--quick", action="store_true", help="short run for tests")
    args = parser.parse_args()
    run(Path(args.out), quick=args.quick, height=args.height, mass=args.mass)
