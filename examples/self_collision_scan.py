"""Self-collision scan of a whole-body motion: an arm swung through the trunk.

The 15-segment whole-body model (:func:`ahbm.models.human15`, 1.80 m, 75 kg)
gets swept-sphere collision shapes (:class:`ahbm.kinematics.CollisionShape`):
capsules along the trunk, the arms, the legs and the neck, a sphere for the
head and a lozenge (triangle swept sphere) for the pelvis; their sizes are
fractions of the body height chosen for this example. The motion (2 s at
50 Hz) swings the right arm about the forward axis, across the front of the
body, while the elbow flexes, and back: a posture sequence that a marker
trial or an inverse-kinematics error could produce. :func:`ahbm.kinematics.self_collision`
checks every pair of shapes on non-adjacent bodies in all frames at once and
reports which pairs collide, in which frames and how deep; the figure shows
the signed distances of the pairs that collide over time, the colliding
frames of every pair, and the frontal view of the shapes in the deepest
frame.

Usage: ``python examples/self_collision_scan.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.kinematics import CollisionShape, forward_kinematics, neutral_q, self_collision
from ahbm.models import human15

HEIGHT = 1.80
MASS = 75.0
RATE = 50.0


def collision_model(height: float = HEIGHT, mass: float = MASS):
    """human15 with capsules, a head sphere and a pelvis lozenge (sizes / height)."""
    m = human15(height=height, mass=mass)
    H = height

    def cap(name, body, z0, z1, r):
        return CollisionShape.capsule(name, body, [0, 0, z0 * H], [0, 0, z1 * H], r * H)

    shapes = [
        CollisionShape.lozenge(
            "pelvis", "pelvis", [0, -0.033 * H, -0.01 * H], [0, 0.033 * H, -0.01 * H],
            [0, 0, 0.035 * H], 0.039 * H,
        ),
        cap("abdomen", "abdomen", 0.02, 0.10, 0.068),
        cap("thorax", "thorax", -0.055, 0.055, 0.072),
        cap("neck", "neck", 0.005, 0.055, 0.028),
        CollisionShape.sphere("head", "head", [0, 0, 0.06 * H], 0.058 * H),
    ]  # fmt: skip
    for side in "rl":
        shapes += [
            cap(f"upper_arm_{side}", f"upper_arm_{side}", -0.015, -0.15, 0.025),
            cap(f"forearm_{side}", f"forearm_{side}", -0.01, -0.14, 0.02),
            cap(f"thigh_{side}", f"thigh_{side}", -0.03, -0.22, 0.03),
            cap(f"shank_{side}", f"shank_{side}", -0.02, -0.23, 0.024),
            CollisionShape.capsule(
                f"foot_{side}", f"foot_{side}", [-0.02 * H, 0, -0.03 * H],
                [0.09 * H, 0, -0.035 * H], 0.012 * H,
            ),
        ]  # fmt: skip
    m.collision = shapes
    return m


def arm_motion(model, n_frames: int) -> np.ndarray:
    """Right shoulder: 0 -> 1.4 rad about the forward axis and back; elbow 0 -> 1.2 rad."""
    q = np.tile(neutral_q(model), (n_frames, 1))
    phase = 0.5 * (1.0 - np.cos(2.0 * np.pi * np.arange(n_frames) / (n_frames - 1)))
    names = model.coordinate_names
    i = names.index("shoulder_r_qx")
    angle = 1.4 * phase
    q[:, i : i + 4] = np.stack(
        [np.sin(angle / 2), np.zeros(n_frames), np.zeros(n_frames), np.cos(angle / 2)], axis=-1
    )
    q[:, names.index("elbow_r")] = 1.2 * phase
    return q


def run(out: Path, quick: bool = False) -> dict:
    """Scan the motion, save ``self_collision_scan.png`` in `out`, return key numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    from ahbm.graphics import save_figure

    model = collision_model()
    n_frames = 41 if quick else 101
    q = arm_motion(model, n_frames)
    time = np.arange(n_frames) / RATE
    report = self_collision(model, q)

    fig = plt.figure(figsize=(12, 4.5))
    ax1 = fig.add_subplot(1, 3, 1)
    colliding_pairs = [c.pair for c in report.collisions]
    for pair in colliding_pairs:
        k = report.pairs.index(pair)
        ax1.plot(time, 100 * report.distance[:, k], label=f"{pair[0]} – {pair[1]}")
    ax1.axhline(0.0, color="k", lw=0.8)
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("signed distance (cm)")
    ax1.set_title("pairs that collide")
    ax1.legend(fontsize=7)

    ax2 = fig.add_subplot(1, 3, 2)
    depth = np.where(report.colliding, -100 * report.distance, np.nan)
    rows = [report.pairs.index(p) for p in colliding_pairs]
    ax2.imshow(
        depth[:, rows].T, aspect="auto", interpolation="nearest", cmap="Reds",
        extent=(time[0], time[-1], len(rows) - 0.5, -0.5),
    )  # fmt: skip
    ax2.set_yticks(range(len(rows)), [f"{a}–{b}" for a, b in colliding_pairs], fontsize=7)
    ax2.set_xlabel("time (s)")
    ax2.set_title("penetration depth (cm)")

    ax3 = fig.add_subplot(1, 3, 3)
    worst = report.collisions[0].worst_frame if report.collisions else 0
    kin = forward_kinematics(model, q[worst])
    hit = {name for k in np.flatnonzero(report.colliding[worst]) for name in report.pairs[k]}
    for s in model.collision:
        b = model.body_index(s.body)
        P = s.points @ kin.rotations[b].T + kin.positions[b]
        color = "tab:red" if s.name in hit else "tab:blue"
        # the frontal projection of a swept-sphere volume is the union of discs of
        # radius r about the projected core: draw discs about samples of the core
        u = np.linspace(0.0, 1.0, 9)
        w = np.array([(1 - a - c, a, c) for a in u for c in u if a + c <= 1.0])[:, : len(P)]
        w[:, 0] = 1.0 - w[:, 1:].sum(axis=1)
        for y, z in (w @ P)[:, 1:]:
            ax3.add_patch(Circle((y, z), s.radius, color=color, alpha=0.08, lw=0))
        ax3.plot(np.r_[P[:, 1], P[:1, 1]], np.r_[P[:, 2], P[:1, 2]], "-o", color=color, ms=2)
    ax3.set_aspect("equal")
    ax3.autoscale_view()
    ax3.invert_xaxis()  # frontal view: the subject's right on the viewer's left
    ax3.set_xlabel("y (m)")
    ax3.set_ylabel("z (m)")
    ax3.set_title(f"frontal view at t = {time[worst]:.2f} s\n(red: colliding)")
    fig.tight_layout()
    save_figure(fig, Path(out) / "self_collision_scan.png", dpi=100)
    plt.close(fig)
    return {
        "n_frames": n_frames,
        "n_pairs": len(report.pairs),
        "colliding_pairs": colliding_pairs,
        "max_depth": report.collisions[0].depth if report.collisions else 0.0,
        "free_at_start": not report.colliding[0].any(),
        "frames_colliding": int(report.colliding.any(axis=-1).sum()),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder")
    parser.add_argument("--quick", action="store_true", help="fewer frames (tests)")
    args = parser.parse_args(argv)
    numbers = run(Path(args.out), quick=args.quick)
    for key, value in numbers.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
