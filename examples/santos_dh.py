"""The 55-DOF Santos skeleton of Chung (2009): its DH model, drawn and standing.

:func:`ahbm.models.santos_model` builds Chung's running model "Santos" (Chung
2009, *Optimization-based dynamic prediction of 3D human running*, §2.3) from
its Denavit–Hartenberg Tables 2.1–2.4 and link lengths (Table 2.2), with the
joint angle limits of Table 7.3 on its joints and de Leva (1996) inertias
(the source gives none); see :mod:`ahbm.models.santos`. The tabulated θ (and
d of the prismatic rows) give the home pose at ``q = 0``, Chung's starting
point.

Usage: ``python examples/santos_dh.py [OUTPUT_FOLDER] [--quick]`` writes
``santos_dh.png`` (the skeleton at the home pose and in a running-like pose)
and prints the vertical ground reaction under each foot of Santos standing
still at the home pose, found from the kinematics alone by
:func:`ahbm.dynamics.inverse_dynamics_wls` (``grf=None``, Chung's two-part
algorithm with the six global DOFs unactuated).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import inverse_dynamics_wls
from ahbm.kinematics import forward_kinematics, joint_bounds
from ahbm.models.santos import santos_model

H = np.pi / 2


def running_pose(model) -> np.ndarray:
    """A running-like pose: hips flexed/extended, arms swinging, knees and elbows bent."""
    q = np.zeros(model.nq)
    names = model.coordinate_names
    pose = {
        "Q37": -0.6, "Q39": 0.9,  # right hip flexed, knee bent
        "Q44": 0.4, "Q46": 0.9,  # left hip extended, knee bent
        "Q15": H, "Q24": H,  # arms down from the T pose
        "Q16": -0.5, "Q25": 0.5,  # right arm back, left arm forward
        "Q17": -H, "Q26": -H, "Q18": -1.2, "Q27": -1.2,  # elbows bent forward
    }  # fmt: skip
    for name, value in pose.items():
        q[names.index(name)] = value
    return q


def run(out: Path, quick: bool = False) -> dict:
    """Build the model, draw it, return the key numbers (``quick`` changes nothing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import draw_model

    model = santos_model()
    fig = plt.figure(figsize=(10, 6))
    for k, (title, q) in enumerate([("home pose (q = 0)", np.zeros(model.nq)),
                                    ("a running-like pose", running_pose(model))]):  # fmt: skip
        ax = fig.add_subplot(1, 2, k + 1, projection="3d")
        draw_model(model, q, ax=ax, markers=False, triad_length=0.04)
        ax.set_title(f"Santos, {title}")
        ax.set_xlim(-0.5, 0.5), ax.set_ylim(-0.9, 0.9), ax.set_zlim(0.0, 1.6)
        ax.set_box_aspect((1.0, 1.8, 1.6))
        ax.view_init(elev=10, azim=-70)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "santos_dh.png", dpi=110)
    plt.close(fig)
    T = forward_kinematics(model, np.zeros(model.nq)).transforms
    pos = T[:, :3, 3]
    lower, upper = joint_bounds(model)
    numbers = {
        "nq": model.nq,
        "n_limited": int(np.isfinite(lower).sum()),
        "n_rows": model.n_bodies,
        "total_mass": model.total_mass,
        "height": float(pos[:, 2].max() - pos[:, 2].min()),
    }
    # standing still at the home pose on both feet: the ground reaction from the
    # kinematics alone (Chung's two-part algorithm, the global DOFs unactuated),
    # split between the feet by the least-norm rule
    z = np.zeros(model.nv)
    res = inverse_dynamics_wls(
        model, np.zeros(model.nq), z, z, None, contact=["Q41", "Q48"], unactuated=range(6)
    )
    right, left = (res.grf[model.body_index(b), 3:] for b in ("Q41", "Q48"))
    numbers["standing_reaction_right"] = float(right[2])
    numbers["standing_reaction_left"] = float(left[2])
    print(", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                    for k, v in numbers.items()))  # fmt: skip
    return numbers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder")
    parser.add_argument("--quick", action="store_true", help="accepted for the gallery (no effect)")
    args = parser.parse_args(argv)
    run(Path(args.out), quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
