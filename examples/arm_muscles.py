"""A reaching movement of the two-joint arm, replayed by its muscles.

1. Target: a one-second minimum-jerk reach of the arm model (:func:`ahbm.models.arm_model`,
   six Holzbaur et al. 2005 muscles, De Groote et al. 2016 curves, rigid tendons) from
   shoulder 0.2 / elbow 0.4 rad to shoulder 0.7 / elbow 1.5 rad.
2. Static optimization (:func:`ahbm.muscles.static_optimization`, passive forces
   included) gives the activations that produce its inverse-dynamics moments.
3. Inverse activation dynamics (:func:`ahbm.muscles.activation_to_excitation`) turns them
   into excitations.
4. A muscle-driven forward simulation (:func:`ahbm.muscles.simulate_muscles`) replays
   the excitations open loop (no feedback): the simulated motion follows the target and
   the simulated activations the static-optimization ones.

Usage: ``python examples/arm_muscles.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.models.arm import arm_model
from ahbm.muscles import (
    MuscleParameters,
    activation_to_excitation,
    simulate_muscles,
    static_optimization,
)

CURVES = "degroote2016"
Q_START = np.array([0.2, 0.4])
Q_END = np.array([0.7, 1.5])
DURATION = 1.0
HOLD = 0.3  # s of holding the end posture after the reach


def target(t):
    """Minimum-jerk reach then hold: q, qd, qdd of shape (len(t), 2)."""
    s = np.clip(np.asarray(t, dtype=float) / DURATION, 0.0, 1.0)[:, None]
    inside = ((np.asarray(t) >= 0) & (np.asarray(t) <= DURATION))[:, None]
    d = Q_END - Q_START
    q = Q_START + d * (10 * s**3 - 15 * s**4 + 6 * s**5)
    qd = inside * d * (30 * s**2 - 60 * s**3 + 30 * s**4) / DURATION
    qdd = inside * d * (60 * s - 180 * s**2 + 120 * s**3) / DURATION**2
    return q, qd, qdd


def run(out: Path, quick: bool = False) -> dict:
    model = arm_model()
    params = MuscleParameters.from_muscles(model.muscles)
    t_end = DURATION + HOLD
    t = np.linspace(0.0, t_end, 66 if quick else 261)
    q, qd, qdd = target(t)
    so = static_optimization(model, q, qd, qdd, curves=CURVES, passive_forces=True)
    a_so = so.activations
    rate = np.gradient(a_so, t, axis=0)
    u_ff = activation_to_excitation(a_so, rate, params, curves=CURVES)
    common = dict(
        muscles=None, curves=CURVES, rigid_tendon=True, activation0=a_so[0], t_eval=t,
        rtol=1e-6 if quick else 1e-8, atol=1e-8 if quick else 1e-10, method="RK45",
    )  # fmt: skip
    sim = simulate_muscles(model, (0.0, t_end), q[0], qd[0], excitations=u_ff,
                                 excitation_time=t, **common)  # fmt: skip
    err = np.degrees(sim.q - q)
    numbers = {
        "so_failed_frames": int(np.sum(so.failed)),
        "so_max_residual_Nm": float(np.abs(so.residuals).max()),
        "rms_error_deg": float(np.sqrt(np.mean(err**2))),
        "max_error_deg": float(np.abs(err).max()),
        "excursion_deg": float(np.degrees(np.abs(Q_END - Q_START)).max()),
        "activation_rms_difference": float(np.sqrt(np.mean((sim.activation - a_so) ** 2))),
        "peak_activation": {m: float(a_so[:, i].max()) for i, m in enumerate(so.muscle_names)},
        "rhs_evaluations": int(sim.nfev),
    }
    _figure(out, t, q, sim, a_so, u_ff, so.muscle_names)
    return numbers


def _figure(out, t, q, sim, a_so, u_ff, names):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    ax = axes[0]
    for j, joint in enumerate(("shoulder", "elbow")):
        ax.plot(t, np.degrees(q[:, j]), "k-", lw=2.5, alpha=0.4,
                label="target" if j == 0 else None)  # fmt: skip
        ax.plot(t, np.degrees(sim.q[:, j]), "--", label=f"{joint}, simulated")
    ax.set_ylabel("joint angle (deg)")
    ax.legend(fontsize=8, ncol=2)
    ax.set_title("Reach replayed by six muscles (De Groote curves, rigid tendons)")
    ax = axes[1]
    for i, name in enumerate(names):
        (line,) = ax.plot(t, a_so[:, i], lw=2.5, alpha=0.4)
        ax.plot(t, sim.activation[:, i], "--", color=line.get_color(), label=name)
    ax.set_ylabel("activation\n(thick: static opt.,\ndashed: simulated)")
    ax.legend(fontsize=8, ncol=3)
    ax = axes[2]
    for i, name in enumerate(names):
        ax.plot(t, u_ff[:, i], label=name)
    ax.set_ylabel("excitation")
    ax.set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(out / "arm_muscles.png", dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out/examples", type=Path)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    numbers = run(args.out, quick=args.quick)
    for k, v in numbers.items():
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
