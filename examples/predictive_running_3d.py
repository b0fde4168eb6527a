"""Predictive 3-D running on HeiMan: half a running cycle with a flight phase, torque-driven.

The problem of ``examples/predictive_running_2d.py`` on the 3-D model
(:func:`ahbm.models.heiman_model` with a ``free_euler`` root: 34 coordinates,
70 kg, z up, x forward, y to the left), with implicit dynamics: half a
running cycle from the toe-off of the left foot,

1. **flight**: no contact, heels and toes of both feet above the ground;
2. **touchdown** of the right forefoot (the ``toe_r`` point): a rigid impact
   (:class:`Impact`) into
3. **stance** on that point (no slip, friction cone μ = 0.8; the heel stays
   above the ground), unloaded at touchdown and toe-off;

mirrored onto itself (left/right swapped, lateral translation and the
rotations about x and z negated: :func:`mirror_pairs`), both durations free,
the average forward speed prescribed (3 m/s), the effort per distance with
the stance leg's knee and ankle carrying parallel springs (400 N m/rad) and
the total torque costing :data:`FORCE_WEIGHT` of the active one (0.3 in 2-D).

The guess is the planar runner's quick solution
(``examples/predictive_running_2d.py``, solved first, a few seconds) mapped
onto HeiMan's sagittal coordinates (:func:`sagittal_guess`). The arms, the
head and the feet's spin about the shank (:data:`LOCKED`) are held near the
neutral pose (within 0.1 rad, their squared angles costing
:data:`LOCK_WEIGHT`): otherwise only the small effort shapes them, and from
standing IPOPT crept for over 1000 iterations.

Status: a partial result. On the quick grid (6 + 10 nodes, IPOPT tolerance
1e-4) the problem converges in 150–200 iterations, but slowly (0.5–2 s per
iteration and 50–130 s to build on this project's shared 2-core machine:
minutes, not a CI-sized run). With the 2-D force cost (0.3) the optimum is a
grounded run (flight 7 % of the half cycle, peak 1.46 body weights); with
:data:`FORCE_WEIGHT` = 0.1 it runs with a flight of 22 % but a peak of 1.87
body weights, below the 2–3 of human running. See docs/optimize.md,
"Predictive running".

Run ``python examples/predictive_running_3d.py [--quick]``.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.tree import Model
from ahbm.models import heiman_model
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

ROOT = ["pelvis_tx", "pelvis_ty", "pelvis_tz", "pelvis_ry", "pelvis_rx", "pelvis_rz"]
HEEL, TOE = (-0.07, 0.0, -0.0819), (0.18585, 0.0, -0.0819)  # HeiMan's heel/toe markers
#: Stance-leg springs (N m/rad, rest rad): knee flexion > 0, ankle_ry > 0 toes down
STANCE_SPRINGS = {"knee_r": (400.0, 0.3), "ankle_r_ry": (400.0, 0.0)}
#: Weight of the stance leg's total-torque effort (0.3 in 2-D gives a grounded run in 3-D)
FORCE_WEIGHT = 0.1
QUICK_NODES, FULL_NODES = (6, 10), (10, 20)
#: Coordinates held at zero: arms, head, and the feet's spin about the shank (free directions
#: that only the small effort would otherwise shape)
LOCKED = ["ankle_r_rz", "ankle_l_rz", "shoulder_r_ry", "shoulder_r_rx", "shoulder_r_rz",
          "elbow_r", "shoulder_l_ry", "shoulder_l_rx", "shoulder_l_rz", "elbow_l",
          "head_ry", "head_rx", "head_rz"]  # fmt: skip
#: The planar runner's coordinates on HeiMan's, with the sign (HeiMan: hip and ankle
#: rotations about y extend and plantarflex, the pelvis pitch is the opposite of the trunk's)
SAGITTAL = {"pelvis_tx": ("pelvis_tx", 1.0), "pelvis_tz": ("pelvis_tz", 1.0),
            "pelvis_rot": ("pelvis_ry", -1.0), "hip_r": ("hip_r_ry", -1.0),
            "knee_r": ("knee_r", 1.0), "ankle_r": ("ankle_r_ry", -1.0),
            "hip_l": ("hip_l_ry", -1.0), "knee_l": ("knee_l", 1.0),
            "ankle_l": ("ankle_l_ry", -1.0)}  # fmt: skip
#: Half-range (rad) of the held coordinates, whose squared angles and rates also cost
#: :data:`LOCK_WEIGHT` (a tracking term to the neutral pose)
LOCK_RANGE, LOCK_WEIGHT = 0.1, 10.0
_RUN2D = Path(__file__).with_name("predictive_running_2d.py")


def mirror_pairs(model: Model) -> tuple[list, list]:
    """Left/right pairs and the coordinates whose sign flips under the mirror ``y → −y``.

    Rotations about y and translations along x and z are kept, rotations
    about x and z and the translation along y negated (``S R_x(a) S = R_x(−a)``,
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


def coordinate_bounds(model: Model, locked=LOCKED) -> dict:
    """Bounds of every coordinate (HeiMan has no joint limits); `locked` ones held at 0."""
    lim = {"pelvis_tx": (-1.0, 3.0), "pelvis_ty": (-0.2, 0.2), "pelvis_tz": (0.6, 1.2),
           "knee": (0.0, 2.2), "elbow": (0.0, 2.0), "hip_ry": (-1.4, 0.9),
           "ankle_ry": (-0.8, 0.9)}  # fmt: skip
    out = {}
    for n in model.coordinate_names:
        parts = n.split("_")
        key = n if n in lim else ("_".join(parts[::2]) if len(parts) == 3 else parts[0])
        out[n] = lim.get(key, (-0.6, 0.6) if n.startswith("pelvis_r") else (-0.8, 0.8))
        if n in locked:
            out[n] = (-LOCK_RANGE, LOCK_RANGE)
    return out


def running_problem(model: Model, *, speed: float = 3.0, nodes=FULL_NODES,
                    impact_weight: float = 0.1, springs=STANCE_SPRINGS,
                    force_weight: float = FORCE_WEIGHT, locked=LOCKED,
                    flight_bounds=(0.02, 0.3)) -> OptimalControlProblem:  # fmt: skip
    """Flight, forefoot touchdown (rigid impact), stance; mirrored (see the module docstring)."""
    names = list(model.coordinate_names)
    joints = [n for n in names if n not in ROOT]
    nv = model.nv
    common = dict(dynamics="implicit", actuated=joints, q_bounds=coordinate_bounds(model, locked),
                  qd_bounds=(-25.0, 25.0), qdd_bounds=(-400.0, 400.0),
                  tau_bounds=(-400.0, 400.0))  # fmt: skip

    def clear(foot, side):
        return NonPenetration(f"foot_{side}", HEEL if foot == "heel" else TOE, height=0.0,
                              name=f"{foot}_{side} above ground")  # fmt: skip

    def accel_reg(x, u, p, t):
        return sum(u[-nv + i] ** 2 for i in range(nv))

    held = [names.index(n) for n in locked]

    def neutral(x, u, p, t):  # the held coordinates track the neutral pose
        return sum(x[i] ** 2 + 0.01 * x[nv + i] ** 2 for i in held)

    objectives = [Effort(scale=100.0), CustomCost(accel_reg, weight=1e-6, name="qdd")]
    if held:
        objectives.append(CustomCost(neutral, weight=LOCK_WEIGHT, name="neutral_pose"))
    stance_objectives = list(objectives)
    if springs:
        idx = [names.index(j) for j in joints]
        spring_of = {names.index(j): kr for j, kr in springs.items()}

        def active_effort(x, u, p, t):  # Σ ((τ + k (q − rest))/100)²
            return sum(
                ((u[i] + spring_of[i][0] * (x[i] - spring_of[i][1])) if i in spring_of else u[i])
                ** 2
                / 1e4
                for i in idx
            )

        stance_objectives[0] = CustomCost(active_effort, name="active_effort")
        if force_weight:
            stance_objectives.append(Effort(scale=100.0, weight=force_weight, name="force_effort"))
    flight = Phase(model, nodes=nodes[0], duration=flight_bounds, name="flight",
                   constraints=[clear(f, s) for s in ("r", "l") for f in ("heel", "toe")],
                   objectives=objectives, initial={"q": {"pelvis_tx": 0.0}},
                   **common)  # fmt: skip
    unloaded = {"F": {f"forefoot_r:{a}": 0.0 for a in "xyz"}}
    stance = Phase(
        model, nodes=nodes[1], duration=(0.1, 0.5), name="stance",
        contacts=[ContactPoint("foot_r", TOE, name="forefoot_r", axes="xyz", friction=0.8)],
        constraints=[clear("heel", "r"), clear("heel", "l"), clear("toe", "l")],
        objectives=stance_objectives
        + [ControlRate(weight=1e-3, controls=["F:"], scale=1000.0, name="force_rate")],
        initial=unloaded, final=unloaded, **common,
    )  # fmt: skip
    pairs, negate = mirror_pairs(model)
    return OptimalControlProblem(
        [flight, stance],
        links=[Impact(weight=impact_weight)],
        symmetric=Symmetry(pairs=pairs, negate=negate, exclude=["pelvis_tx"]),
        constraints=[AverageSpeed("pelvis_tx", speed)],
        per_duration=True,
    )


def foot_heights(model: Model, q) -> np.ndarray:
    """World heights of heel_r, toe_r, heel_l, toe_l, (n, 4), m."""
    kin = forward_kinematics(model, q)
    out = []
    for side in ("r", "l"):
        b = model.body_index(f"foot_{side}")
        R, p = kin.rotations[..., b, :, :], kin.positions[..., b, :]
        for pt in (HEEL, TOE):
            out.append((np.einsum("...ij,j->...i", R, np.asarray(pt)) + p)[..., 2])
    return np.stack(out, axis=-1)


def standing_guess(model: Model, problem: OptimalControlProblem, speed: float) -> list:
    """Standing with knees slightly bent, the feet on the ground, the trunk moving at `speed`."""
    names = list(model.coordinate_names)
    q = np.zeros(model.nq)
    for side in ("r", "l"):
        q[names.index(f"hip_{side}_ry")] = -0.15
        q[names.index(f"knee_{side}")] = 0.3
        q[names.index(f"ankle_{side}_ry")] = -0.15
    q[names.index("pelvis_tz")] = -foot_heights(model, q[None])[0].min()
    out, t0 = [], 0.0
    ix = names.index("pelvis_tx")
    for ph in problem.phases:
        T = float(np.mean(ph.duration_bounds))
        t = np.linspace(t0, t0 + T, 5)
        qq = np.tile(q, (5, 1))
        qq[:, ix] = speed * t
        qd = np.zeros((5, model.nv))
        qd[:, ix] = speed
        out.append({"t": t, "q": qq, "qd": qd})
        t0 += T
    return out


def _running_2d():
    spec = importlib.util.spec_from_file_location("ahbm_example_predictive_running_2d", _RUN2D)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sagittal_guess(model: Model, speed: float, *, quick: bool = True) -> tuple[list, dict]:
    """The planar runner's solution (``examples/predictive_running_2d.py``) on HeiMan.

    Its sagittal coordinates, velocities and joint torques map onto HeiMan's
    (:data:`SAGITTAL`; the pelvis height shifted so that the soles of the two
    models stand at the same height); every other coordinate is zero.
    Returns the guess (one dict per phase) and the planar run's numbers.
    """
    r2 = _running_2d()
    planar = r2.run(quick=quick, speed=speed)
    names = list(model.coordinate_names)
    planar_names = list(planar["problem"].phases[0].coordinate_names)
    zero = np.zeros((1, model.nq))
    sole_3d = foot_heights(model, zero)[0].min()  # HeiMan's sole below its pelvis origin
    pm = planar["problem"].phases[0].model
    sole_2d = forward_kinematics(pm, np.zeros((1, pm.nq))).positions[0, pm.body_index("foot_r"), 2]
    sole_2d += r2.HEEL[2]
    out = []
    for ph in planar["result"].phases:
        n = ph.t.size
        q, qd, tau = np.zeros((n, model.nq)), np.zeros((n, model.nv)), np.zeros((n, model.nv))
        for k, (name, sign) in SAGITTAL.items():
            i, j = planar_names.index(k), names.index(name)
            q[:, j], qd[:, j] = sign * ph.q[:, i], sign * ph.qd[:, i]
            tau[:, j] = sign * ph.tau[:, i]
        q[:, names.index("pelvis_tz")] += sole_2d - sole_3d
        out.append({"t": ph.t, "q": q, "qd": qd, "tau": tau})
    return out, planar


def running_metrics(result, model: Model, speed: float) -> dict:
    """Durations, flight share, step frequency and length, peak vertical GRF (body weights)."""
    fl, st = result.phases
    half = fl.duration + st.duration
    fz = st.forces["forefoot_r"][:, 2] / (model.total_mass * 9.81)
    ix = list(model.coordinate_names).index("pelvis_tx")
    step = float(result.q[-1, ix] - result.q[0, ix])
    return {
        "speed": step / half, "target_speed": speed, "flight_time": fl.duration,
        "stance_time": st.duration, "half_cycle": half, "flight_fraction": fl.duration / half,
        "step_frequency": 1.0 / half, "step_length": step, "grf_peak": float(fz.max()),
    }  # fmt: skip


def run(out_dir=None, *, quick: bool = False, speed: float = 3.0, verbose: bool = False,
        max_iter: int = 3000, guess: str = "sagittal", tol: float | None = None,
        method: str = "hermite-simpson", ipopt: dict | None = None, **options) -> dict:  # fmt: skip
    """Solve the run, return the numbers (see the module docstring)."""
    model = heiman_model(root="free_euler")
    t0 = time.perf_counter()
    problem = running_problem(model, speed=speed, nodes=QUICK_NODES if quick else FULL_NODES,
                              **options)  # fmt: skip
    if guess == "sagittal":
        start, planar = sagittal_guess(model, speed, quick=True)
    else:
        start, planar = standing_guess(model, problem, speed), None
    t_guess = time.perf_counter() - t0
    result = solve(problem, method=method, guess=start, verbose=verbose, max_iter=max_iter,
                   tol=(1e-4 if quick else 1e-6) if tol is None else tol,
                   options=ipopt)  # fmt: skip
    numbers = running_metrics(result, model, speed)
    numbers.update(success=result.success, status=result.status, iterations=result.iterations,
                   solve_time=result.wall_time, build_time=result.build_time,
                   total_time=time.perf_counter() - t0, guess_time=t_guess, cost=result.cost,
                   planar_flight_fraction=planar["flight_fraction"] if planar else None,
                   violation=result.constraint_violation)  # fmt: skip
    numbers["result"], numbers["problem"], numbers["model"] = result, problem, model
    return numbers


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    n = run(quick="--quick" in argv, verbose=True)
    print(f"status {n['status']} after {n['iterations']} iterations; build "
          f"{n['build_time']:.1f} s, solve {n['solve_time']:.1f} s; worst constraint "
          f"{n['violation']:.1e}")  # fmt: skip
    print(f"speed {n['speed']:.3f} m/s; stance {n['stance_time']:.3f} s, flight "
          f"{n['flight_time']:.3f} s ({100 * n['flight_fraction']:.1f} % of the cycle); "
          f"{60 * n['step_frequency']:.0f} steps/min, step {n['step_length']:.2f} m; "
          f"peak vertical GRF {n['grf_peak']:.2f} BW")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
