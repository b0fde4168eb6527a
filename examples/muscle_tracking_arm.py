"""Muscle-driven tracking of a reach by direct collocation, compared with static optimization.

1. Target: a one-second minimum-jerk reach of the arm model (:func:`ahbm.models.arm_model`,
   six Holzbaur et al. 2005 muscles) from shoulder 0.2 / elbow 0.4 rad to shoulder 0.7 /
   elbow 1.5 rad, starting and ending at rest.
2. Optimal control (:class:`ahbm.optimize.MuscleDrivenPhase`, Hermite–Simpson
   collocation, IPOPT): states ``[q; q̇; a]``, controls excitations and two small reserve
   torques; the muscles are De Groote et al. (2016) rigid-tendon muscles with De Groote's
   activation dynamics, their paths and moment arms evaluated on CasADi symbols. Cost:
   ``∫ 1000 |q − q_target|² + Σ a² + Σ (τ_reserve / 1 N m)² dt``.
3. Checks: the tracking error; activations within [0, 1]; the joint torques of the result
   (``Rᵀ F + τ_reserve``) against the inverse dynamics (:func:`ahbm.dynamics.rnea`) of its
   motion and against the numeric muscle functions (:func:`ahbm.muscles.moment_arms`,
   :func:`ahbm.muscles.muscle_equilibrium`); static optimization
   (:func:`ahbm.muscles.static_optimization`, passive forces included) on the same motion:
   its activations are close to the optimal-control ones, which lag behind by the
   activation dynamics.

Usage: ``python examples/muscle_tracking_arm.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import rnea
from ahbm.models.arm import arm_model
from ahbm.muscles import (
    MuscleParameters,
    activation_to_excitation,
    lengthening_speeds,
    moment_arms,
    muscle_equilibrium,
    muscle_lengths,
    static_optimization,
)
from ahbm.optimize import (
    Effort,
    MuscleDrivenPhase,
    MuscleEffort,
    PhaseSolution,
    TrackCoordinates,
    solve,
)

CURVES = "degroote2016"
Q_START = np.array([0.2, 0.4])
Q_END = np.array([0.7, 1.5])
DURATION = 1.0


def target(t):
    """Minimum-jerk reach (Flash & Hogan 1985): q, qd, qdd of shape (len(t), 2)."""
    s = np.asarray(t, dtype=float)[:, None] / DURATION
    d = Q_END - Q_START
    q = Q_START + d * (10 * s**3 - 15 * s**4 + 6 * s**5)
    qd = d * (30 * s**2 - 60 * s**3 + 30 * s**4) / DURATION
    qdd = d * (60 * s - 180 * s**2 + 120 * s**3) / DURATION**2
    return q, qd, qdd


def run(out: Path | None, quick: bool = False, method: str = "hermite-simpson") -> dict:
    model = arm_model()
    nodes = 26 if quick else 51
    t_ref = np.linspace(0.0, DURATION, 201)
    q_ref, qd_ref, qdd_ref = target(t_ref)
    phase = MuscleDrivenPhase(
        model,
        nodes=nodes,
        duration=DURATION,
        reserves=["shoulder", "elbow"],
        tau_bounds=(-20.0, 20.0),
        objectives=[
            TrackCoordinates(t_ref, q_ref, weight=1000.0),
            MuscleEffort(exponent=2),
            Effort(weight=1.0, name="reserve_effort"),
        ],
        initial={"q": Q_START, "qd": [0.0, 0.0]},
        final={"qd": [0.0, 0.0]},
    )
    # initial guess: the target motion with the static-optimization activations
    t = np.linspace(0.0, DURATION, nodes)
    q, qd, qdd = target(t)
    so_guess = static_optimization(model, q, qd, qdd, curves=CURVES, passive_forces=True)
    params = MuscleParameters.from_muscles(model.muscles)
    a_g = so_guess.activations
    e_g = np.clip(activation_to_excitation(a_g, np.gradient(a_g, t, axis=0), params,
                                           curves=CURVES), 0.0, 1.0)  # fmt: skip
    X = np.concatenate([q, qd, a_g], axis=1).T
    U = np.concatenate([np.zeros((nodes, 2)), e_g], axis=1).T
    guess = PhaseSolution(t=t, X=X, U=U, T=DURATION, p=np.zeros(0))
    res = solve(phase, method=method, guess=[guess], verbose=False)
    P = res.phases[0]
    mus = P.muscles
    q_t, _, _ = target(P.t)
    err = np.degrees(P.q - q_t)
    # the result's joint torques: inverse dynamics of its motion, numeric muscle functions
    tau_id = rnea(model, P.q, P.qd, P.qdd)
    lmt = muscle_lengths(model, P.q)
    vmt = lengthening_speeds(model, P.q, P.qd)
    F = muscle_equilibrium(params, mus["activations"], lmt, vmt, curves=CURVES,
                           rigid_tendon=True).tendon_force  # fmt: skip
    tau_num = np.einsum("nmv,nm->nv", moment_arms(model, P.q), F) + mus["reserves"]
    # static optimization on the optimized motion
    so = static_optimization(model, P.q, P.qd, P.qdd, curves=CURVES, passive_forces=True)
    da = mus["activations"] - so.activations
    numbers = {
        "method": method,
        "nodes": nodes,
        "success": bool(res.success),
        "status": res.status,
        "iterations": int(res.iterations),
        "solve_time_s": float(res.wall_time),
        "max_tracking_error_deg": float(np.abs(err).max()),
        "rms_tracking_error_deg": float(np.sqrt(np.mean(err**2))),
        "activation_range": (float(mus["activations"].min()), float(mus["activations"].max())),
        "excitation_range": (float(mus["excitations"].min()), float(mus["excitations"].max())),
        "max_reserve_Nm": float(np.abs(mus["reserves"]).max()),
        "max_muscle_torque_Nm": float(np.abs(mus["muscle_torques"]).max()),
        "torque_vs_inverse_dynamics_Nm": float(np.abs(P.tau - tau_id).max()),
        "torque_vs_numeric_muscles_Nm": float(np.abs(P.tau - tau_num).max()),
        "so_failed_frames": int(np.sum(so.failed)),
        "activation_rms_difference_vs_so": float(np.sqrt(np.mean(da**2))),
        "activation_max_difference_vs_so": float(np.abs(da).max()),
        "peak_activation": {
            m: float(mus["activations"][:, i].max()) for i, m in enumerate(mus["names"])
        },  # fmt: skip
        "peak_activation_so": {
            m: float(so.activations[:, i].max()) for i, m in enumerate(so.muscle_names)
        },  # fmt: skip
    }
    if out is not None:
        _figure(out, P, q_t, so.activations, mus)
    return numbers


def _figure(out, P, q_t, a_so, mus):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t = P.t
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    ax = axes[0]
    for j, joint in enumerate(("shoulder", "elbow")):
        ax.plot(t, np.degrees(q_t[:, j]), "k-", lw=2.5, alpha=0.4,
                label="minimum-jerk target" if j == 0 else None)  # fmt: skip
        ax.plot(t, np.degrees(P.q[:, j]), "--", label=f"{joint}, optimal control")
    ax.set_ylabel("joint angle (deg)")
    ax.legend(fontsize=8, ncol=2)
    ax.set_title("Muscle-driven tracking of a reach (direct collocation, 6 muscles)")
    ax = axes[1]
    for i, name in enumerate(mus["names"]):
        (line,) = ax.plot(t, mus["activations"][:, i], lw=2.0, label=name)
        ax.plot(t, a_so[:, i], ":", color=line.get_color())
    ax.set_ylabel("activation\n(solid: optimal control,\ndotted: static opt.)")
    ax.legend(fontsize=8, ncol=3)
    ax = axes[2]
    for j, joint in enumerate(("shoulder", "elbow")):
        (line,) = ax.plot(t, mus["muscle_torques"][:, j], label=f"{joint}: Σ r F")
        ax.plot(t, mus["reserves"][:, j], "--", color=line.get_color(),
                label=f"{joint}: reserve")  # fmt: skip
    ax.set_ylabel("joint torque (N m)")
    ax.set_xlabel("time (s)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "muscle_tracking_arm.png", dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out/examples", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--method", default="hermite-simpson")
    args = parser.parse_args(argv)
    numbers = run(args.out, quick=args.quick, method=args.method)
    for k, v in numbers.items():
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
