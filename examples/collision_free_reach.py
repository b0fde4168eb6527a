"""Collision-free reaching: HeiMan's right arm swings from behind the back to the front.

HeiMan (:func:`ahbm.models.heiman_model`, 1.75 m, 70 kg) stands still (its
pelvis, legs, left arm and head welded in the neutral posture; with
``--lumbar`` the trunk may bend too) and moves its right arm (shoulder Euler
YXZ, elbow) in 1 s from a posture with the hand behind the back, across to
the left, to the mirror posture in front of the body, at rest at both ends.
The body carries swept-sphere volumes
(:class:`ahbm.kinematics.CollisionShape`): a lozenge for the chest, capsules
for the abdomen, the pelvis, the arms and the thighs, a sphere for the head;
their sizes are this example's choice.

The straight path between the two postures (the initial guess, and the
minimum-effort motion without collision avoidance) passes through the
trunk. With :class:`ahbm.optimize.NoCollision` (all pairs of the right arm
and the body that the broad phase keeps, at every node) the minimum-effort
motion (``∫ Σ τ² dt``, trapezoidal collocation) swings the arm out past the
side of the trunk. The distances are checked at the nodes and at ten times
denser samples of the solution (the transcription's own interpolant: ``q̇``
linear and ``q`` quadratic between nodes). The figure shows the least
distance over time with and without the constraint, and the hand paths seen
from above and from the front.

Usage: ``python examples/collision_free_reach.py [OUTPUT_FOLDER] [--quick] [--lumbar]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ahbm.kinematics import CollisionShape, distances, point_position
from ahbm.kinematics.tree import Model
from ahbm.models import heiman_model
from ahbm.optimize import Jerk, NoCollision, Phase, collision_pairs, solve

HEIGHT = 1.75
MASS = 70.0
DURATION = 1.0
MARGIN = 0.01
#: Minimum angle jerk: straight in joint space without obstacles (Flash & Hogan 1985).
OBJECTIVES = [Jerk()]
#: Solves at most, each with the nodes' margin raised by the last dip between nodes.
MAX_ROUNDS = 4
ARM = ("shoulder_r", "elbow_r")
#: Start (hand behind the back, towards the left) and end (in front): Euler YXZ
#: angles of the shoulder (rad; +ry swings the arm back, +rx across the body)
#: and elbow flexion.
START = {"shoulder_r_ry": 0.9, "shoulder_r_rx": 0.3, "shoulder_r_rz": 0.0, "elbow_r": 0.6}
END = {"shoulder_r_ry": -0.9, "shoulder_r_rx": 0.3, "shoulder_r_rz": 0.0, "elbow_r": 0.6}


def collision_model(lumbar: bool = False) -> Model:
    """HeiMan with only the right arm (and the lumbar joint) free, and collision shapes."""
    data = heiman_model(mass=MASS, height=HEIGHT, root="free_euler").to_dict()
    free = set(ARM) | ({"lumbar"} if lumbar else set())
    for body in data["bodies"]:
        joint = body["joint"]
        if joint["name"] not in free:
            body["joint"] = {"type": "fixed", "name": joint["name"]}
    m = Model.from_dict(data)
    H = HEIGHT / 1.75  # the sizes below are for a 1.75 m HeiMan

    def cap(name, body, a, b, r):
        return CollisionShape.capsule(name, body, np.multiply(a, H), np.multiply(b, H), r * H)

    m.collision = [
        CollisionShape.lozenge(
            "chest", "upper_trunk", [0, -0.05 * H, 0.0], [0, 0.05 * H, 0.0], [0, 0, 0.1 * H],
            0.09 * H,
        ),
        cap("abdomen", "middle_trunk", [0, 0, 0.03], [0, 0, 0.19], 0.105),
        cap("pelvis", "pelvis", [0, -0.06, 0.06], [0, 0.06, 0.06], 0.09),
        CollisionShape.sphere("head", "head", [0, 0, 0.1 * H], 0.1 * H),
        cap("upper_arm_r", "upper_arm_r", [0, 0, -0.06], [0, 0, -0.26], 0.042),
        cap("forearm_r", "lower_arm_r", [0, 0, -0.02], [0, 0, -0.25], 0.035),
        CollisionShape.sphere("hand_r", "hand_r", [0, 0, -0.07 * H], 0.045 * H),
        cap("upper_arm_l", "upper_arm_l", [0, 0, -0.06], [0, 0, -0.26], 0.042),
        cap("forearm_l", "lower_arm_l", [0, 0, -0.02], [0, 0, -0.25], 0.035),
        cap("thigh_r", "thigh_r", [0, 0, -0.05], [0, 0, -0.38], 0.07),
        cap("thigh_l", "thigh_l", [0, 0, -0.05], [0, 0, -0.38], 0.07),
    ]  # fmt: skip
    return m


def posture(model: Model, values: dict) -> np.ndarray:
    q = np.zeros(model.nq)
    for name, v in values.items():
        q[model.coordinate_names.index(name)] = v
    return q


def dense_q(t, X, nq, factor=10):
    """Samples ``factor`` times denser than the nodes, from the trapezoidal interpolant."""
    q, qd = X[:nq].T, X[nq : 2 * nq].T
    out_t, out_q = [], []
    for k in range(len(t) - 1):
        h = t[k + 1] - t[k]
        tau = np.linspace(0.0, h, factor, endpoint=False)[:, None]
        out_t.append(t[k] + tau[:, 0])
        out_q.append(q[k] + qd[k] * tau + (qd[k + 1] - qd[k]) * tau**2 / (2 * h))
    return np.concatenate(out_t + [t[-1:]]), np.concatenate(out_q + [q[-1:]])


def run(out: Path, quick: bool = False, lumbar: bool = False) -> dict:
    """Solve with and without collision avoidance, save the figure, return key numbers."""
    model = collision_model(lumbar)
    nodes = 21 if quick else 51
    q0, qf = posture(model, START), posture(model, END)
    ends = {"initial": {"q": q0, "qd": np.zeros(model.nv)},
            "final": {"q": qf, "qd": np.zeros(model.nv)}}  # fmt: skip
    # the broad phase: pairs whose bounding spheres come within 0.2 m along the
    # straight path or at the postures with the arm swung far out
    s = np.linspace(0.0, 1.0, 21)[:, None]
    wide = [
        posture(model, dict(START, shoulder_r_rx=-0.8)),
        posture(model, dict(END, shoulder_r_rx=-0.8)),
    ]
    samples = np.concatenate([q0 + s * (qf - q0), wide])
    pairs = collision_pairs(model, samples, within=0.2)
    arm_pairs = [p for p in pairs if any(n.endswith("_r") and "thigh" not in n for n in p)]

    # the constraint holds at the nodes; between them the interpolated motion may cut a
    # corner of a shape (by about 1 cm at 21 nodes without a clearance). Keep a clearance
    # at the nodes, check 10x denser samples, and raise the clearance by the dip until
    # the dense samples keep the margin (warm-started re-solves).
    clearance, res, log = 0.005 * (20.0 / (nodes - 1)) ** 2, None, []  # dip ~ h²
    build = solve_time = iterations = 0.0
    for _ in range(MAX_ROUNDS):
        t0 = time.perf_counter()
        con = NoCollision(model, arm_pairs, margin=MARGIN + clearance)
        phase = Phase(model, nodes=nodes, duration=DURATION, objectives=OBJECTIVES,
                      constraints=[con], **ends)  # fmt: skip
        res = solve(phase, guess=None if res is None else res.phase_solutions, verbose=False)
        build += res.build_time + (time.perf_counter() - t0 - res.build_time - res.wall_time)
        solve_time += res.wall_time
        iterations += res.iterations
        sol = res.phase_solutions[0]
        td, qdense = dense_q(sol.t, sol.X, model.nq)
        d_dense = distances(model, qdense, arm_pairs).distance
        log.append((clearance, float(d_dense.min()), res.status))
        if d_dense.min() >= MARGIN - 1e-6:
            break
        clearance += MARGIN - float(d_dense.min()) + 5e-4
    free = solve(Phase(model, nodes=nodes, duration=DURATION, objectives=OBJECTIVES, **ends),
                 verbose=False)  # fmt: skip

    sol_free = free.phase_solutions[0]
    d_nodes = con.distances(sol.X[: model.nq].T)
    tf, qfree = dense_q(sol_free.t, sol_free.X, model.nq)
    d_free = distances(model, qfree, arm_pairs).distance
    straight = distances(model, q0 + s * (qf - q0), arm_pairs).distance

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    ax = axes[0]
    ax.plot(td, 100 * d_dense.min(axis=1), label="NoCollision (10x dense samples)")
    ax.plot(sol.t, 100 * d_nodes.min(axis=1), "o", ms=3, color="C0", label="nodes")
    ax.plot(tf, 100 * d_free.min(axis=1), color="C3", label="without the constraint")
    ax.axhline(100 * MARGIN, color="k", lw=0.8, ls="--", label="margin")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("least distance, right arm to body (cm)")
    ax.legend(fontsize=7)
    for ax, (i, j, title) in zip(axes[1:], [(0, 1, "from above"), (1, 2, "from the front")],
                                 strict=True):  # fmt: skip
        for qq, color, label in ((qdense, "C0", "NoCollision"), (qfree, "C3", "without")):
            hand = point_position(model, qq, "hand_r", [0, 0, -0.07])
            ax.plot(hand[:, i], hand[:, j], color=color, label=label)
        for shape in model.collision:  # the body's shapes: discs about samples of the core
            if shape.name.endswith("_r") and "thigh" not in shape.name:
                continue
            P = point_position(model, np.tile(q0, (len(shape.points), 1)), shape.body, shape.points)
            u = np.linspace(0.0, 1.0, 7)
            w = np.array([(1 - a - c, a, c) for a in u for c in u if a + c <= 1.0])[:, : len(P)]
            w[:, 0] = 1.0 - w[:, 1:].sum(axis=1)
            for x, y in (w @ P)[:, [i, j]]:
                ax.add_patch(plt.Circle((x, y), shape.radius, color="0.6", alpha=0.06, lw=0))
        ax.set_aspect("equal")
        ax.autoscale_view()
        ax.set_title(f"hand path, {title}")
        ax.set_xlabel("xyz"[i] + " (m)")
        ax.set_ylabel("xyz"[j] + " (m)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, Path(out) / "collision_free_reach.png", dpi=100)
    plt.close(fig)
    return {
        "nodes": nodes,
        "dof": model.nv,
        "pairs": len(arm_pairs),
        "success": bool(res.success),
        "rounds": log,
        "clearance_at_nodes": round(clearance, 5),
        "iterations": int(iterations),
        "build_time": round(build, 3),
        "solve_time": round(solve_time, 3),
        "build_time_without_constraint": round(free.build_time, 3),
        "solve_time_without_constraint": round(free.wall_time, 3),
        "margin": MARGIN,
        "min_distance_nodes": float(d_nodes.min()),
        "min_distance_dense": float(d_dense.min()),
        "min_distance_straight_path": float(straight.min()),
        "min_distance_without_constraint": float(d_free.min()),
        "cost": float(res.cost),
        "cost_without_constraint": float(free.cost),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder")
    parser.add_argument("--quick", action="store_true", help="fewer nodes (tests)")
    parser.add_argument("--lumbar", action="store_true", help="let the trunk bend too")
    args = parser.parse_args(argv)
    numbers = run(Path(args.out), quick=args.quick, lumbar=args.lumbar)
    for key, value in numbers.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
