"""Predictive 3-D walking on HeiMan: half a gait cycle from effort minimization, torque-driven.

HeiMan (:func:`ahbm.models.heiman_model` with a ``free_euler`` root: 34
coordinates, 19 bodies, 70 kg, z up, x forward, y to the left) walks at a
prescribed speed. Half a gait cycle — from one instant to the mirror image of
that instant with the legs swapped — is optimized in one phase of free
duration:

- **contact**: three smooth compliant contact spheres per foot (heel and two
  forefoot spheres, :func:`ahbm.models.heiman_contact_spheres`; Hunt–Crossley
  with smooth friction, OpenSim's ``SmoothSphereHalfSpaceForce`` law), whose
  forces are functions of the state: no contact sequence is prescribed, the
  optimizer chooses when each foot is loaded;
- **dynamics**: implicit (the accelerations are controls and the inverse
  dynamics equal the joint torques at every node); the six root coordinates
  are unactuated, the 28 joint coordinates carry torques;
- **symmetry**: the start is the mirror of the end (right and left
  coordinates swapped; the lateral translation and the rotations about x and
  z negated, the sagittal rotations kept; the forward position free);
- **speed**: the pelvis advances ``speed · T`` (``AverageSpeed``) and its
  forward velocity repeats (a ``BoundaryConstraint``: the Symmetry leaves
  the forward coordinate free);
- **a walk**: the feet carry at least half the body weight at every node
  (no flight phase; without it the optimizer hops);
- **objective**: per duration, i.e. per distance at the prescribed speed
  (``per_duration=True``): the squared joint torques ``Σ (τ/100)²``, the
  absolute joint power ``Σ |τ q̇|`` (weight 1e-3, smoothed; a mechanical-work
  term that shortens the steps) and a small weight on the squared
  accelerations (smoothness).

Trapezoidal collocation, IPOPT, from a guess that swings hips and knees
sinusoidally (the standing height set so that the lower foot touches the
ground). Nothing else — no measured motion, no reference ground reaction —
shapes the result.

Checks printed: forward speed (= the target), half-cycle duration, step
length and cadence (normal walking at 1.2 m/s: about 0.55 s per step and
0.65 m), the stance share of the cycle and the peak vertical ground reaction
in body weights.

Run ``python examples/predictive_walking_3d.py [out_dir] [--quick]`` (21 nodes, or 11 with
``--quick``; IPOPT tolerance 1e-4 — a loose optimum: see docs/optimize.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.tree import Model
from ahbm.models import heiman_contact_spheres, heiman_model
from ahbm.optimize import (
    AverageSpeed,
    BoundaryConstraint,
    CustomCost,
    Effort,
    OptimalControlProblem,
    PathConstraint,
    SmoothContactPhase,
    Symmetry,
    solve,
)

ROOT = ["pelvis_tx", "pelvis_ty", "pelvis_tz", "pelvis_ry", "pelvis_rx", "pelvis_rz"]
CONTACT_THRESHOLD = 20.0  # N: a foot "in contact" carries more than this


def mirror_pairs(model: Model) -> tuple[list, list]:
    """Left/right pairs and the coordinates whose sign flips under the sagittal mirror.

    HeiMan names its coordinates ``<joint>_<side>[_<axis>]``; the mirror
    ``y → −y`` keeps rotations about y and translations along x and z and
    negates rotations about x and z and the translation along y (for every
    rotation sequence: ``S R_x(a) S = R_x(−a)``, ``S R_y(b) S = R_y(b)``,
    ``S R_z(c) S = R_z(−c)`` with ``S = diag(1, −1, 1)``).
    """
    names = list(model.coordinate_names)
    pairs, negate = [], []
    for n in names:
        parts = n.split("_")
        if len(parts) > 1 and parts[1] == "r":
            other = "_".join([parts[0], "l", *parts[2:]])
            if other in names:
                pairs.append((n, other))
        if n.endswith("_rx") or n.endswith("_rz") or n == "pelvis_ty":
            negate.append(n)
    return pairs, negate


def _bounds(model: Model):
    lim = {
        "pelvis_tx": (-1.0, 3.0),
        "pelvis_ty": (-0.2, 0.2),
        "pelvis_tz": (0.6, 1.1),
        "knee": (0.0, 1.6),
        "elbow": (0.0, 2.0),
        "hip_ry": (-1.2, 0.6),
        "ankle_ry": (-0.7, 0.8),
    }
    out = {}
    for n in model.coordinate_names:
        key = (
            n
            if n in lim
            else ("_".join(n.split("_")[::2]) if n.count("_") == 2 else n.split("_")[0])
        )
        out[n] = lim.get(key, (-0.6, 0.6) if n.startswith("pelvis_r") else (-0.8, 0.8))
    return out


def walking_problem(model: Model, *, speed: float = 1.2, nodes: int = 21, duration=(0.35, 0.9),
                    accel_weight: float = 1e-6, work_weight: float = 1e-3,
                    min_support: float | None = 0.5,
                    ) -> OptimalControlProblem:  # fmt: skip
    """One phase of free duration on the six contact spheres, mirrored onto itself.

    `min_support` (body weights; None: none): the feet carry at least this
    share of the weight at every node — a walk has no flight phase.
    `accel_weight` weights the squared accelerations (smoothness).
    """
    spheres = heiman_contact_spheres(model)
    joints = [n for n in model.coordinate_names if n not in ROOT]
    nv = model.nv
    bw = model.total_mass * 9.81
    holder = []

    def accel_reg(x, u, p, t):  # smoothness: the squared accelerations (controls, implicit)
        return sum(u[-nv + i] ** 2 for i in range(nv))

    def work(x, u, p, t):  # absolute joint power Σ|τ q̇| (smoothed), W
        return sum(((u[i] * x[model.nq + i]) ** 2 + 1e-2) ** 0.5 for i in range(6, nv))

    def support(x, u, p, t):  # the vertical ground reaction of all spheres, in body weights
        return holder[0].ground_reaction(x)[2] / bw

    ix = list(model.coordinate_names).index("pelvis_tx")

    def forward_velocity(x0, xf, T, p):  # Symmetry leaves pelvis_tx free: its rate repeats
        return x0[model.nq + ix] - xf[model.nq + ix]

    constraints = [BoundaryConstraint(forward_velocity, name="forward velocity repeats")]
    if min_support is not None:
        constraints.append(PathConstraint(support, lb=min_support, ub=np.inf, name="no flight"))

    phase = SmoothContactPhase(
        model,
        smooth_contacts=spheres,
        nodes=nodes,
        duration=duration,
        name="half_cycle",
        dynamics="implicit",
        actuated=joints,
        q_bounds=_bounds(model),
        qd_bounds=(-15.0, 15.0),
        qdd_bounds=(-300.0, 300.0),
        tau_bounds=(-300.0, 300.0),
        objectives=[
            Effort(scale=100.0),
            CustomCost(accel_reg, weight=accel_weight, name="qdd"),
            CustomCost(work, weight=work_weight, name="work"),
        ],
        constraints=constraints,
        initial={"q": {"pelvis_tx": 0.0}},
    )
    holder.append(phase)
    pairs, negate = mirror_pairs(model)
    return OptimalControlProblem(
        [phase],
        symmetric=Symmetry(pairs=pairs, negate=negate, exclude=["pelvis_tx"]),
        constraints=[AverageSpeed("pelvis_tx", speed)],
        per_duration=True,
    )


def _foot_points(model: Model, q):
    """World heights of the heel and toe markers of both feet, (n, 4)."""
    from ahbm.kinematics.marker_model import model_markers

    mm = model_markers(model)
    names = list(mm.names)
    sel = [names.index(k) for k in ("heel_r", "toe_r", "heel_l", "toe_l")]
    bidx = [model.body_index(mm.bodies[i]) for i in sel]
    local = np.asarray(mm.local, float)[sel]
    kin = forward_kinematics(model, q)
    R, p = kin.rotations[..., bidx, :, :], kin.positions[..., bidx, :]
    return (np.einsum("...ij,...j->...i", R, local) + p)[..., 2]


def gait_guess(model: Model, problem: OptimalControlProblem, speed: float,
               half_cycle: float = 0.55, n: int = 21) -> list:  # fmt: skip
    """Hips and knees swing sinusoidally, arms counter-swing; the lower foot on the ground.

    From right heel strike (s = 0) to left heel strike (s = 1); the end is the
    mirror of the start. Angles: hip flexion = −hip_ry, knee flexion > 0,
    foot pitch = pelvis_ry + hip_ry + knee + ankle_ry (toe down > 0).
    """
    names = list(model.coordinate_names)
    ix = {k: i for i, k in enumerate(names)}
    s = np.linspace(0.0, 1.0, n)
    t = s * half_cycle
    q = np.zeros((n, model.nq))
    flex_r = 0.35 - 0.55 * s
    flex_l = -0.20 + 0.55 * s
    knee_r = 0.05 + 0.35 * s + 0.15 * np.sin(np.pi * s)
    knee_l = 0.40 - 0.35 * s + 0.60 * np.sin(np.pi * s)
    q[:, ix["pelvis_tx"]] = speed * t
    q[:, ix["hip_r_ry"]], q[:, ix["hip_l_ry"]] = -flex_r, -flex_l
    q[:, ix["knee_r"]], q[:, ix["knee_l"]] = knee_r, knee_l
    # stance foot flat; swing foot between flat and a slight dorsiflexion
    q[:, ix["ankle_r_ry"]] = flex_r - knee_r
    q[:, ix["ankle_l_ry"]] = flex_l - knee_l
    q[:, ix["shoulder_r_ry"]], q[:, ix["shoulder_l_ry"]] = 0.5 * flex_l, 0.5 * flex_r
    q[:, ix["elbow_r"]] = q[:, ix["elbow_l"]] = 0.3
    q[:, ix["pelvis_tz"]] = 0.0
    z = _foot_points(model, q)
    q[:, ix["pelvis_tz"]] = -z.min(axis=1) - 0.008  # about the spheres' static penetration
    qd = np.gradient(q, t, axis=0)
    return [{"t": t, "q": q, "qd": qd}]


def contact_forces(problem: OptimalControlProblem, result) -> dict:
    """Vertical ground reaction of each foot at the nodes, N: ``{"r": (n,), "l": (n,)}``."""
    ph = problem.phases[0]
    r = result.phases[0]
    out = ph.contact_outputs(np.vstack([r.q.T, r.qd.T]))
    F = out["F"]
    names = [c.name for c in ph.smooth_contacts]
    feet = {}
    for side in ("r", "l"):
        cols = [i for i, nm in enumerate(names) if nm.startswith(f"foot_{side}")]
        feet[side] = F[:, cols, 2].sum(axis=1)
    feet["depth"], feet["names"] = out["depth"], names
    return feet


def gait_metrics(result, problem: OptimalControlProblem, model: Model, speed: float) -> dict:
    """Speed, half cycle, step length, cadence, stance share and vertical GRF in body weights."""
    r = result.phases[0]
    T = float(r.duration)
    ix = list(model.coordinate_names).index("pelvis_tx")
    step = float(r.q[-1, ix] - r.q[0, ix])
    bw = model.total_mass * 9.81
    f = contact_forces(problem, result)
    # the right foot over a whole cycle: this half, then the left foot's half (mirror)
    fz = np.r_[f["r"], f["l"][1:]] / bw
    tt = np.r_[r.t, T + r.t[1:]]
    on = fz > CONTACT_THRESHOLD / bw
    dt = np.gradient(tt)
    stance = float(dt[on].sum() / dt.sum())
    return {
        "speed": step / T,
        "target_speed": speed,
        "half_cycle": T,
        "step_length": step,
        "cadence": 60.0 / T,  # steps per minute
        "stance_fraction": stance,
        "peak_vertical_grf": float(fz.max()),
        "cycle_time": tt,
        "right_vertical_grf": fz,
        "forces": f,
    }


def run(out_dir=None, *, quick: bool = False, speed: float = 1.2, verbose: bool = False,
        method: str = "trapezoidal", max_iter: int = 3000,
        tol: float | None = None) -> dict:  # fmt: skip
    """Solve the walk, save its figure, return the numbers (see the module docstring)."""
    model = heiman_model(root="free_euler")
    nodes = 11 if quick else 21
    t0 = time.perf_counter()
    problem = walking_problem(model, speed=speed, nodes=nodes)
    result = solve(
        problem,
        method=method,
        guess=gait_guess(model, problem, speed, n=nodes),
        verbose=verbose,
        max_iter=max_iter,
        tol=1e-4 if tol is None else tol,  # tighter: the cost keeps falling for 1000s of iterations
        options={"acceptable_tol": 1e-3, "acceptable_iter": 10} if quick else None,
    )
    total = time.perf_counter() - t0
    numbers = gait_metrics(result, problem, model, speed)
    numbers.update(
        success=result.success,
        status=result.status,
        iterations=result.iterations,
        solve_time=result.wall_time,
        build_time=result.build_time,
        total_time=total,
        cost=result.cost,
        violation=result.constraint_violation,
        nodes=nodes,
    )
    if out_dir is not None:
        _figure(result, numbers, Path(out_dir))
    numbers["result"], numbers["problem"], numbers["model"] = result, problem, model
    return numbers


def _figure(result, numbers, out: Path):
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
        ["vertex", "C7", "SACR"],
        ["RASI", "RKNE", "RANK", "heel_r", "toe_r", "RANK"],
        ["LASI", "LKNE", "LANK", "heel_l", "toe_l", "LANK"],
    ]
    frames = np.linspace(0, len(pts) - 1, 7).round().astype(int)
    for k, f in enumerate(frames):
        shade = 0.25 + 0.7 * k / (len(frames) - 1)
        for c, chain in enumerate(chains):
            xy = pts[f, [idx[n] for n in chain if n in idx]]
            ax.plot(xy[:, 0], xy[:, 2], color=("k", "tab:red", "tab:blue")[c], alpha=shade, lw=1.5)
    ax.axhline(0.0, color="0.5", lw=1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.set_title(f"HeiMan, predicted half cycle at {numbers['speed']:.2f} m/s (right leg red)")
    ax = axes[1]
    tt = numbers["cycle_time"]
    ax.plot(100 * tt / tt[-1], numbers["right_vertical_grf"], "o-", ms=3)
    ax.set_xlabel("% of gait cycle")
    ax.set_ylabel("right foot vertical GRF (BW)")
    ax.set_title(f"stance {100 * numbers['stance_fraction']:.0f} % of the cycle")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, out / "predictive_walk_3d.png", dpi=90)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    args = [a for a in argv if not a.startswith("--")]
    out = Path(args[0]) if args else Path("predictive_walk_3d_out")
    n = run(out, quick=quick, verbose=True)
    print(
        f"status {n['status']} after {n['iterations']} iterations; build {n['build_time']:.1f} s, "
        f"solve {n['solve_time']:.1f} s, total {n['total_time']:.1f} s"
    )
    print(
        f"speed {n['speed']:.3f} m/s (target {n['target_speed']}), "
        f"half cycle {n['half_cycle']:.3f} s "
        f"(cadence {n['cadence']:.0f} steps/min), step {n['step_length']:.3f} m"
    )
    print(
        f"stance {100 * n['stance_fraction']:.1f} % of the cycle, peak vertical GRF "
        f"{n['peak_vertical_grf']:.2f} BW"
    )
    print(f"figure: {out / 'predictive_walk_3d.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
