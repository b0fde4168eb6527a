"""Predictive 2-D walking: one periodic gait cycle from effort minimization, no tracking data.

A planar 7-segment model (trunk, thighs, shanks, feet; 9 degrees of freedom:
the trunk's x, z and pitch, and hip, knee and ankle on each side) walks at a
given speed. Half a gait cycle is optimized and mirrored (left/right
symmetry, Chung 2009 eqs 7.33–7.34):

1. **single support** on the flat right foot (heel and toe on the ground,
   no slip, friction cone μ = 0.8), the left foot swings above the ground;
2. **heel strike** of the left foot: a rigid impact (Felis 2015 §5) into
3. **double support** on the right toe and the left heel;

and the end of the half cycle is the mirror of its start. The objective is
the sum of squared joint torques per duration ``∫ Σ (τ/100)² dt / T`` (small
weights on the accelerations, the rates of the contact forces and the impact
impulse regularize it); the durations of both phases are free. Hermite–Simpson
collocation, implicit dynamics, IPOPT, from standing still. Nothing else —
no measured motion, no reference ground reaction — shapes the result.

Checks printed: forward speed (= the target), stance share of the cycle
(about 60 % in human walking), the vertical ground reaction in body weights
(double-humped, peaks about 1.1–1.3 BW in human walking).

Run ``python examples/predictive_walking_2d.py [out_dir] [--quick] [--gif]`` (``--gif``: a
stick-figure animation of the whole cycle, mirrored from the half, with
:func:`ahbm.graphics.stick_view`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from ahbm.kinematics.tree import Model
from ahbm.optimize import (
    AverageSpeed,
    ContactPoint,
    ControlRate,
    CustomCost,
    Effort,
    Impact,
    NonPenetration,
    OptimalControlProblem,
    Phase,
    Symmetry,
    solve,
)

MASS = 70.0
THIGH, SHANK, ANKLE_HEIGHT = 0.43, 0.43, 0.08
HEEL, TOE = (-0.05, 0.0, -ANKLE_HEIGHT), (0.15, 0.0, -ANKLE_HEIGHT)
LEG = THIGH + SHANK + ANKLE_HEIGHT
# the planar root: the joint frame's x, y, z are the world's x, z, -y
_SAGITTAL = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def walker_model(mass: float = MASS) -> Model:
    """The planar 7-segment walker (x forward, z up; segment parameters after Winter 2009).

    Coordinates: ``pelvis_tx, pelvis_tz, pelvis_rot`` (planar root at the
    hip), then ``hip, knee, ankle`` of the right and the left leg. Positive
    hip angles flex, positive knee angles flex, positive ankle angles
    dorsiflex. Markers ``heel_r, toe_r, heel_l, toe_l`` and the joint centres.
    """
    m = Model("walker2d", (0.0, 0.0, -9.81))
    lim = {"pelvis_tz": [0.6, 1.2], "pelvis_rot": [-0.6, 0.6]}
    m.add_body(
        "trunk",
        "ground",
        {
            "type": "planar",
            "coordinates": ["pelvis_tx", "pelvis_tz", "pelvis_rot"],
            "limits": {"pelvis_tz": lim["pelvis_tz"], "pelvis_rot": lim["pelvis_rot"]},
        },
        rotation=_SAGITTAL,
        child_rotation=_SAGITTAL,
        mass=0.678 * mass,
        com=[0.0, 0.0, 0.32],
        inertia=np.diag([1.0, 1.0 * mass / 70, 1.0]) * 2.5,
        markers={"head": [0.0, 0.0, 0.8]},
    )
    for side in ("r", "l"):
        m.add_body(
            f"thigh_{side}",
            "trunk",
            {"type": "revolute", "axis": [0, -1, 0], "name": f"hip_{side}", "limits": [-0.9, 1.3]},
            mass=0.100 * mass,
            com=[0, 0, -0.433 * THIGH],
            inertia=np.eye(3) * 0.100 * mass * (0.323 * THIGH) ** 2,
            markers={f"hip_{side}": [0, 0, 0]},
        )
        m.add_body(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "revolute", "axis": [0, 1, 0], "name": f"knee_{side}", "limits": [0.0, 2.0]},
            position=[0, 0, -THIGH],
            mass=0.0465 * mass,
            com=[0, 0, -0.433 * SHANK],
            inertia=np.eye(3) * 0.0465 * mass * (0.302 * SHANK) ** 2,
            markers={f"knee_{side}": [0, 0, 0]},
        )
        m.add_body(
            f"foot_{side}",
            f"shank_{side}",
            {
                "type": "revolute",
                "axis": [0, -1, 0],
                "name": f"ankle_{side}",
                "limits": [-0.8, 0.6],
            },
            position=[0, 0, -SHANK],
            mass=0.0145 * mass,
            com=[0.05, 0, -0.04],
            inertia=np.eye(3) * 0.0145 * mass * 0.06**2,
            markers={f"ankle_{side}": [0, 0, 0], f"heel_{side}": HEEL, f"toe_{side}": TOE},
        )
    return m


def walking_problem(model: Model, *, speed: float = 1.2, nodes=(25, 10), impact_weight=1e-3):
    """Half a gait cycle: single support, heel-strike impact, double support; mirrored."""
    joints = ["hip_r", "knee_r", "ankle_r", "hip_l", "knee_l", "ankle_l"]
    common = dict(
        dynamics="implicit",
        actuated=joints,
        tau_bounds=(-250.0, 250.0),
        qdd_bounds=(-200.0, 200.0),
        qd_bounds=(-15.0, 15.0),
    )

    def contact(foot, side):
        return ContactPoint(
            f"foot_{side}",
            HEEL if foot == "heel" else TOE,
            name=f"{foot}_{side}",
            axes="xz",
            friction=0.8,
        )

    def clear(foot, side, h=0.0):
        return NonPenetration(
            f"foot_{side}",
            HEEL if foot == "heel" else TOE,
            height=h,
            name=f"{foot}_{side} above ground",
        )

    def accel_reg(x, u, p, t):  # a small weight on the accelerations (implicit dynamics)
        nv = model.nv
        return sum(u[-nv + i] ** 2 for i in range(nv))

    objectives = [
        Effort(scale=100.0),
        CustomCost(accel_reg, weight=1e-6, name="qdd"),
        ControlRate(weight=1e-3, controls=["F:"], scale=1000.0, name="force_rate"),
    ]
    single = Phase(
        model,
        nodes=nodes[0],
        duration=(0.2, 0.8),
        name="single_support",
        contacts=[contact("heel", "r"), contact("toe", "r")],
        constraints=[clear("heel", "l"), clear("toe", "l")],
        objectives=objectives,
        initial={"q": {"pelvis_tx": 0.0}},
        **common,
    )

    # the left toe comes down at the end: the mirror image of the flat right foot at the start
    double = Phase(
        model,
        nodes=nodes[1],
        duration=(0.02, 0.3),
        name="double_support",
        contacts=[contact("toe", "r"), contact("heel", "l")],
        constraints=[clear("heel", "r")],
        objectives=objectives,
        **common,
    )
    sym = Symmetry(
        pairs=[("hip_r", "hip_l"), ("knee_r", "knee_l"), ("ankle_r", "ankle_l")],
        exclude=["pelvis_tx"],
    )
    return OptimalControlProblem(
        [single, double],
        links=[Impact(weight=impact_weight)],
        symmetric=sym,
        constraints=[AverageSpeed("pelvis_tx", speed)],
        per_duration=True,
    )


def standing_guess(model: Model, problem: OptimalControlProblem) -> list:
    """Standing still at every node: joints straight, the hip at leg height, no motion."""
    q = np.zeros(model.nq)
    q[1] = LEG
    out, t0 = [], 0.0
    for ph in problem.phases:
        T = float(np.mean(ph.duration_bounds))
        t = np.linspace(t0, t0 + T, 5)
        out.append({"t": t, "q": np.tile(q, (5, 1)), "qd": np.zeros((5, model.nv))})
        t0 += T
    return out


def gait_metrics(result, model: Model, speed: float) -> dict:
    """Speed, stance share, vertical GRF peaks and shape over the full (mirrored) cycle."""
    ss, ds = result.phases
    half = ss.duration + ds.duration
    stance = (ss.duration + 2 * ds.duration) / (2 * half)  # heel strike -> toe-off of one foot
    bw = model.total_mass * 9.81
    # right foot's vertical force over a whole cycle: SS, DS (toe), then the mirrored half, in
    # which the right foot is the heel-strike foot of the double support
    t = np.concatenate([ss.t, ds.t, half + ss.t, half + ds.t])
    fz = (
        np.concatenate(
            [
                ss.forces["heel_r"][:, 2] + ss.forces["toe_r"][:, 2],
                ds.forces["toe_r"][:, 2],
                np.zeros(ss.t.size),
                ds.forces["heel_l"][:, 2],
            ]
        )
        / bw
    )
    # stance of the right foot: heel strike (t = half + ss) to toe-off (t = half) of the next
    order = np.argsort(
        np.r_[t[t >= half + ss.duration] - 2 * half, t[t < half + 1e-12]], kind="stable"
    )
    st_t = np.r_[t[t >= half + ss.duration] - 2 * half, t[t < half + 1e-12]][order]
    st_f = np.r_[fz[t >= half + ss.duration], fz[t < half + 1e-12]][order]
    n = st_f.size
    first, second = st_f[: n // 2].max(), st_f[n // 2 :].max()
    valley = st_f[n // 4 : 3 * n // 4].min()
    total = result.grf[:, 2] / bw
    return {
        "speed": float((result.q[-1, 0] - result.q[0, 0]) / half),
        "target_speed": speed,
        "half_cycle": half,
        "stance_fraction": float(stance),
        "grf_peak_1": float(first),
        "grf_peak_2": float(second),
        "grf_valley": float(valley),
        "double_humped": bool(valley < min(first, second) - 0.05),
        "max_total_vertical_grf": float(total.max()),
        "stance_time": st_t,
        "stance_force": st_f,
    }


def full_cycle(result, problem, rate: float = 50.0):
    """The whole gait cycle at a uniform rate: the half cycle, then its mirror image.

    The second half swaps the legs (the problem's Symmetry) and moves the
    trunk on by the distance of the first half.

    Returns
    -------
    t : ndarray, shape (n,)
    q : ndarray, shape (n, 9)
    """
    half = result.resample(rate)
    perm, sign, _, _ = problem.symmetry_map(problem.phases[0])
    q2 = half["q"][:, perm] * sign
    q2[:, 0] = half["q"][:, 0] + (half["q"][-1, 0] - half["q"][0, 0])
    T = result.duration
    return np.r_[half["t"], half["t"][1:] + T], np.r_[half["q"], q2[1:]]


def run(
    out_dir=None,
    *,
    quick: bool = False,
    speed: float = 1.2,
    verbose: bool = False,
    method: str = "hermite-simpson",
    gif: bool = False,
) -> dict:
    """Solve the walk, save its figures, return the numbers (see the module docstring)."""
    model = walker_model()
    nodes = (13, 6) if quick else (25, 10)
    problem = walking_problem(model, speed=speed, nodes=nodes)
    t0 = time.perf_counter()
    result = solve(
        problem,
        method=method,
        guess=standing_guess(model, problem),
        verbose=verbose,
        max_iter=1500,
        tol=1e-6,
    )
    total = time.perf_counter() - t0
    numbers = gait_metrics(result, model, speed)
    numbers.update(
        success=result.success,
        status=result.status,
        iterations=result.iterations,
        solve_time=result.wall_time,
        total_time=total,
        cost=result.cost,
        build_time=result.build_time,
        violation=result.constraint_violation,
    )
    if out_dir is not None:
        _figures(result, model, numbers, Path(out_dir))
        if gif:
            from ahbm.graphics import stick_view

            t, q = full_cycle(result, problem, rate=50.0)
            viewer = stick_view(model=model, q=q, rate=50.0, follow=True, interactive=False,
                                title=f"predicted walk, {speed:.2f} m/s")  # fmt: skip
            viewer.save(Path(out_dir) / "predictive_walk.gif", fps=25)
    numbers["result"], numbers["problem"] = result, problem
    return numbers


def _figures(result, model, numbers, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1.6, 1]})
    ax = axes[0]
    _, pts, labels = result.markers()
    idx = {k: i for i, k in enumerate(labels)}
    chains = [
        ["head", "hip_r"],
        ["hip_r", "knee_r", "ankle_r", "heel_r", "toe_r", "ankle_r"],
        ["hip_l", "knee_l", "ankle_l", "heel_l", "toe_l", "ankle_l"],
    ]
    frames = np.linspace(0, len(pts) - 1, 9).round().astype(int)
    for k, f in enumerate(frames):
        shade = 0.25 + 0.7 * k / (len(frames) - 1)
        for c, chain in enumerate(chains):
            xy = pts[f, [idx[n] for n in chain]]
            color = ("k", "tab:red", "tab:blue")[c]
            ax.plot(xy[:, 0], xy[:, 2], color=color, alpha=shade, lw=1.5)
    ax.axhline(0.0, color="0.5", lw=1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.set_title(f"predicted half cycle at {numbers['speed']:.2f} m/s (right leg red)")
    ax = axes[1]
    st = 100 * (numbers["stance_time"] - numbers["stance_time"][0]) / (2 * numbers["half_cycle"])
    ax.plot(st, numbers["stance_force"], "o-", ms=3)
    ax.set_xlabel("% of gait cycle from heel strike")
    ax.set_ylabel("vertical GRF (body weights)")
    ax.set_title(f"right foot: stance {100 * numbers['stance_fraction']:.0f} % of the cycle")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, out / "predictive_walk.png", dpi=90)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    args = [a for a in argv if not a.startswith("--")]
    out = Path(args[0]) if args else Path("predictive_walk_out")
    n = run(out, quick=quick, verbose=True, gif="--gif" in argv)
    print(
        f"status {n['status']} after {n['iterations']} iterations; solve {n['solve_time']:.1f} s, "
        f"total {n['total_time']:.1f} s"
    )
    print(
        f"speed {n['speed']:.3f} m/s (target {n['target_speed']}), half cycle "
        f"{n['half_cycle']:.3f} s, stance {100 * n['stance_fraction']:.1f} % of the cycle"
    )
    print(
        f"vertical GRF peaks {n['grf_peak_1']:.2f} and {n['grf_peak_2']:.2f} BW, valley "
        f"{n['grf_valley']:.2f} BW (double-humped: {n['double_humped']})"
    )
    print(f"figure: {out / 'predictive_walk.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
