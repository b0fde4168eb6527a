"""Predictive 2-D running: half a running cycle with a flight phase, from effort minimization.

The planar 7-segment walker of ``examples/predictive_walking_2d.py`` (trunk,
thighs, shanks, feet; 9 degrees of freedom, 70 kg) runs at a prescribed
average speed (3 m/s). Half a running cycle is optimized and mirrored
(left/right symmetry, Chung 2009 eqs 7.33–7.34); it starts at the toe-off of
the left foot:

1. **flight**: no contact, heels and toes of both feet above the ground;
2. **touchdown** of the right forefoot: a rigid impact (Felis 2015 §5) into
3. **stance** on the right forefoot (one contact point under the metatarsal
   heads, no slip, friction cone μ = 0.8; the heel stays above the ground,
   the foot turns about that point), which ends at the right toe-off;

the end of the stance is the mirror image of the start of the flight, so the
cycle continues with the left foot. Placing the flight first puts the
touchdown at a junction between two phases, where the :class:`Impact` link
applies; the toe-off needs no impact (the contact is released), so mirroring
there is plain symmetry. Both durations are free (bounded); the horizontal
average speed is prescribed (:class:`AverageSpeed`); the forefoot lands and
lifts off unloaded (its force is zero at the first and last stance node).
The objective is the effort per distance ``∫ Σ (τ/100)² dt / T``
(``per_duration``) with small weights on the accelerations, the rate of the
contact force and the impact impulse. In the stance the knee and ankle of the
stance leg have parallel springs (:data:`STANCE_SPRINGS`, 7 N m/deg, the
ankle's quasi-stiffness in running, Kuitunen et al. 2002) standing for the
tendons: the active torque ``τ + k (q − rest)`` costs the full effort, the
total torque 0.3 of it (:data:`FORCE_WEIGHT`; the muscles hold the tendon
force, and the cost of running follows the force, Kram & Taylor 1990). A
rigid-legged model without elastic storage (``springs=None``) finds
walking-like "grounded running" cheaper (a long stance with a flat-topped
force of about 1.6 body weights, the flight at its lower bound); springs
without the force cost make the flights too long (half the cycle and more,
peaks of 3–3.5 body weights). Hermite–Simpson collocation, implicit
dynamics, IPOPT; the guess is standing still with the trunk moving at the
speed, on the full grid (:data:`FULL_NODES`) as on the quick one
(:data:`QUICK_NODES`, ``--quick``): started from the quick solution instead,
the full grid ends elsewhere (1500 iterations, a 16 % higher cost). No
measured motion or force enters.

Printed: stance and flight durations, the flight share of the cycle, step and
stride frequency, step length, the peak vertical ground reaction in body
weights, convergence and time (compare: human running at about 3 m/s has a
stance of about 0.25 s, flight 20–35 % of the cycle, about 165–180 steps per
minute and a vertical force peak of 2–3 body weights).

Run ``python examples/predictive_running_2d.py [out_dir] [--quick]``.
"""

from __future__ import annotations

import importlib.util
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

_WALK = Path(__file__).resolve().parent / "predictive_walking_2d.py"


def _walking_example():
    spec = importlib.util.spec_from_file_location("ahbm_example_predictive_walking_2d", _WALK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_walk = _walking_example()
HEEL, TOE, LEG = _walk.HEEL, _walk.TOE, _walk.LEG
#: Collocation nodes (flight, stance) of the quick grid and of the refined one
QUICK_NODES, FULL_NODES = (6, 10), (12, 24)
JOINTS = ["hip_r", "knee_r", "ankle_r", "hip_l", "knee_l", "ankle_l"]
#: Parallel springs of the stance leg's knee and ankle, (N m/rad, rest angle rad):
#: 400 N m/rad = 7 N m/deg, the ankle's quasi-stiffness in running (Kuitunen et al. 2002)
STANCE_SPRINGS = {"knee_r": (400.0, 0.3), "ankle_r": (400.0, 0.0)}
#: Weight of the stance leg's total-torque effort (the cost of producing force, also
#: through the springs: Kram & Taylor 1990) relative to the active torque's
FORCE_WEIGHT = 0.3


def runner_model() -> Model:
    """The planar 9-coordinate walker of the walking example (70 kg)."""
    return _walk.walker_model()


def running_problem(
    model: Model, *, speed: float = 3.0, nodes=(10, 20), impact_weight: float = 0.1,
    flight_bounds=(0.02, 0.3), stance_bounds=(0.1, 0.5), unloaded_ends: bool = True,
    springs=STANCE_SPRINGS, force_weight: float = FORCE_WEIGHT,
):  # fmt: skip
    """Half a running cycle: flight, forefoot touchdown (rigid impact), stance; mirrored.

    Parameters
    ----------
    model : Model
        :func:`runner_model`.
    speed : float
        Average forward speed of the trunk, m/s.
    nodes : (int, int)
        Collocation nodes of the flight and the stance phase.
    impact_weight : float
        Weight of the squared touchdown impulse ``w ΛᵀΛ`` (N² s²).
    flight_bounds, stance_bounds : (float, float)
        Bounds of the free durations, s.
    unloaded_ends : bool
        The ground force is zero at touchdown and toe-off (the first and
        last stance node), as a foot that lands and lifts off.
    springs : dict or None
        Elastic elements of the stance leg, ``{coordinate: (k, rest)}`` (N m/rad,
        rad): the stance phase's effort is that of the active torque
        ``τ + k (q − rest)``, the part a parallel spring does not supply.
        None: plain effort ``Σ (τ/100)²`` (no elastic storage).
    force_weight : float
        With `springs`, the stance also costs ``force_weight Σ (τ/100)²`` of
        the total torque: the springs stand for tendons, whose force the
        muscles still have to hold.
    """
    common = dict(
        dynamics="implicit",
        actuated=JOINTS,
        tau_bounds=(-400.0, 400.0),
        qdd_bounds=(-400.0, 400.0),
        qd_bounds=(-25.0, 25.0),
    )

    def clear(foot, side):
        return NonPenetration(f"foot_{side}", HEEL if foot == "heel" else TOE, height=0.0,
                              name=f"{foot}_{side} above ground")  # fmt: skip

    def accel_reg(x, u, p, t):  # a small weight on the accelerations (implicit dynamics)
        nv = model.nv
        return sum(u[-nv + i] ** 2 for i in range(nv))

    objectives = [
        Effort(scale=100.0),
        CustomCost(accel_reg, weight=1e-6, name="qdd"),
    ]
    flight = Phase(
        model,
        nodes=nodes[0],
        duration=flight_bounds,
        name="flight",
        constraints=[clear(f, s) for s in ("r", "l") for f in ("heel", "toe")],
        objectives=objectives,
        initial={"q": {"pelvis_tx": 0.0}},
        **common,
    )
    stance_objectives = list(objectives)
    if springs:
        idx = [model.coordinate_names.index(j) for j in JOINTS]
        spring_of = {model.coordinate_names.index(j): kr for j, kr in springs.items()}

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
    stance = Phase(
        model,
        nodes=nodes[1],
        duration=stance_bounds,
        name="stance",
        contacts=[ContactPoint("foot_r", TOE, name="forefoot_r", axes="xz", friction=0.8)],
        initial={"F": {"forefoot_r:z": 0.0, "forefoot_r:x": 0.0}} if unloaded_ends else None,
        final={"F": {"forefoot_r:z": 0.0, "forefoot_r:x": 0.0}} if unloaded_ends else None,
        constraints=[clear("heel", "r"), clear("heel", "l"), clear("toe", "l")],
        objectives=stance_objectives
        + [ControlRate(weight=1e-3, controls=["F:"], scale=1000.0, name="force_rate")],
        **common,
    )
    sym = Symmetry(pairs=list(zip(JOINTS[:3], JOINTS[3:], strict=True)), exclude=["pelvis_tx"])
    return OptimalControlProblem(
        [flight, stance],
        links=[Impact(weight=impact_weight)],
        symmetric=sym,
        constraints=[AverageSpeed("pelvis_tx", speed)],
        per_duration=True,
    )


def standing_guess(model: Model, problem: OptimalControlProblem, speed: float) -> list:
    """Standing at every node with the trunk moving on at `speed`, knees slightly bent."""
    q = np.zeros(model.nq)
    q[1] = LEG - 0.03
    q[[4, 7]] = 0.3  # knees
    q[[3, 6]] = 0.15  # hips
    out, t0 = [], 0.0
    for ph in problem.phases:
        T = float(np.mean(ph.duration_bounds))
        t = np.linspace(t0, t0 + T, 5)
        qq = np.tile(q, (5, 1))
        qq[:, 0] = speed * t
        qd = np.zeros((5, model.nv))
        qd[:, 0] = speed
        out.append({"t": t, "q": qq, "qd": qd})
        t0 += T
    return out


def running_metrics(result, model: Model, speed: float) -> dict:
    """Durations, flight share, frequencies, step length, peak vertical GRF (body weights)."""
    fl, st = result.phases
    half = fl.duration + st.duration
    bw = model.total_mass * 9.81
    fz = st.forces["forefoot_r"][:, 2] / bw
    return {
        "speed": float((result.q[-1, 0] - result.q[0, 0]) / half),
        "target_speed": speed,
        "flight_time": fl.duration,
        "stance_time": st.duration,
        "half_cycle": half,
        "flight_fraction": fl.duration / half,  # of the half cycle = of the whole cycle
        "duty_factor": st.duration / (2 * half),  # stance of one foot / cycle
        "step_frequency": 1.0 / half,  # Hz (steps per second)
        "stride_frequency": 1.0 / (2 * half),  # Hz (cycles per second)
        "step_length": float(result.q[-1, 0] - result.q[0, 0]),
        "grf_peak": float(fz.max()),
        "grf_peak_time": float((st.t[np.argmax(fz)] - st.t[0]) / st.duration),
        "impulse_vertical": float(np.trapezoid(st.forces["forefoot_r"][:, 2], st.t)),
    }


def replay(result, model: Model, phase: int, fraction: float = 1.0):
    """Forward simulation (:func:`ahbm.dynamics.simulate`) of a phase driven by the optimal torques.

    The torques are the solution's, linear between the nodes (the
    Hermite–Simpson controls); in the stance the forefoot is held on the
    ground by a :class:`~ahbm.dynamics.geometric_constraints.PointConstraint`
    at its anchor. Starts at the phase's first state and runs for `fraction`
    of the phase.

    Returns
    -------
    t : ndarray, shape (n,)
        The phase's node times within that span.
    q_sim, q_opt : ndarray, shape (n, nq)
        The simulated and the optimal coordinates at the times `t`.
    """
    from ahbm.dynamics import simulate
    from ahbm.dynamics.geometric_constraints import PointConstraint

    ph = result.phases[phase]
    tau = ph.tau

    def torque(t, q, qd):
        return np.array([np.interp(t, ph.t, tau[:, i]) for i in range(model.nv)])

    constraints = []
    if ph.forces:
        (label,) = ph.forces
        anchor = [v for k, v in ph.parameters.items() if label in k]
        p0 = np.array([float(anchor[0]), 0.0, 0.0]) if anchor else None
        from ahbm.kinematics import point_position

        p0 = point_position(model, ph.q[0], "foot_r", TOE) if p0 is None else p0
        constraints = [PointConstraint("foot_r", TOE, other_point=p0, axes="xz")]
    t_end = ph.t[0] + fraction * ph.duration
    t = ph.t[ph.t <= t_end + 1e-12]  # the nodes, where the solution is exact
    sim = simulate(model, (ph.t[0], t[-1]), ph.q[0], ph.qd[0], tau=torque, constraints=constraints,
                   t_eval=t, method="DOP853", rtol=1e-10, atol=1e-12)  # fmt: skip
    return t, sim.q, ph.q[: t.size]


def run(
    out_dir=None, *, quick: bool = False, speed: float = 3.0, verbose: bool = False,
    impact_weight: float = 0.1, unloaded_ends: bool = True, springs=STANCE_SPRINGS,
    force_weight: float = FORCE_WEIGHT,
) -> dict:  # fmt: skip
    """Solve the run, save its figure, return the numbers (see the module docstring)."""
    model = runner_model()
    options = dict(impact_weight=impact_weight, unloaded_ends=unloaded_ends, springs=springs,
                   force_weight=force_weight, speed=speed)  # fmt: skip
    t0 = time.perf_counter()
    problem = running_problem(model, nodes=QUICK_NODES if quick else FULL_NODES, **options)
    result = solve(problem, method="hermite-simpson", guess=standing_guess(model, problem, speed),
                   verbose=verbose, max_iter=1500, tol=1e-6)  # fmt: skip
    total = time.perf_counter() - t0
    numbers = running_metrics(result, model, speed)
    numbers.update(
        success=result.success,
        status=result.status,
        iterations=result.iterations,
        solve_time=result.wall_time,
        build_time=result.build_time,
        total_time=total,
        cost=result.cost,
        violation=result.constraint_violation,
    )
    if out_dir is not None:
        _figure(result, model, numbers, Path(out_dir))
    numbers["result"], numbers["problem"] = result, problem
    return numbers


def _figure(result, model, numbers, out: Path):
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
            ax.plot(xy[:, 0], xy[:, 2], color=("k", "tab:red", "tab:blue")[c], alpha=shade, lw=1.5)
    ax.axhline(0.0, color="0.5", lw=1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.set_title(f"predicted half running cycle at {numbers['speed']:.2f} m/s (right leg red)")
    ax = axes[1]
    st = result.phases[1]
    bw = model.total_mass * 9.81
    fl = result.phases[0]
    t = np.r_[fl.t, st.t]
    fz = np.r_[np.zeros(fl.t.size), st.forces["forefoot_r"][:, 2] / bw]
    ax.plot(1000 * t, fz, "o-", ms=3)
    ax.axvspan(0, 1000 * fl.duration, color="0.9", label="flight")
    ax.set_xlabel("time from toe-off of the left foot (ms)")
    ax.set_ylabel("vertical GRF (body weights)")
    ax.set_title(f"flight {100 * numbers['flight_fraction']:.0f} % of the cycle")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, out / "predictive_run.png", dpi=90)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    args = [a for a in argv if not a.startswith("--")]
    out = Path(args[0]) if args else Path("predictive_run_out")
    n = run(out, quick=quick, verbose=True)
    print(
        f"status {n['status']} after {n['iterations']} iterations; build {n['build_time']:.1f} s, "
        f"solve {n['solve_time']:.1f} s, total {n['total_time']:.1f} s; worst constraint "
        f"{n['violation']:.1e}"
    )
    print(
        f"speed {n['speed']:.3f} m/s (target {n['target_speed']}); "
        f"stance {n['stance_time']:.3f} s, flight {n['flight_time']:.3f} s "
        f"({100 * n['flight_fraction']:.1f} % of the cycle), "
        f"duty factor {n['duty_factor']:.3f}"
    )
    print(
        f"step frequency {n['step_frequency']:.2f} Hz ({60 * n['step_frequency']:.0f} steps/min), "
        f"stride frequency {n['stride_frequency']:.2f} Hz, step length {n['step_length']:.2f} m"
    )
    print(
        f"vertical GRF peak {n['grf_peak']:.2f} BW at {100 * n['grf_peak_time']:.0f} % of the "
        f"stance"
    )
    print(f"figure: {out / 'predictive_run.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
