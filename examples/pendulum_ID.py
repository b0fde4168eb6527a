"""Teaching example: inverse and forward dynamics of a single pendulum.

1. Inverse dynamics: a prescribed swing q(t) is fed to ahbm.dynamics.rnea and
   the result is compared with the closed form J_O q̈ + m g (l/2) cos q = τ
   (m = 0.5 kg, l = 0.4 m, J_O = m l²/3 = 0.0267 kg m²).
2. Forward simulation: the torque found in step 1 drives the pendulum in
   ahbm.dynamics.simulate; the simulated motion must reproduce q(t).

Usage: python examples/pendulum_ID.py [OUTPUT_FOLDER] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ahbm.dynamics import crba, rnea, simulate
from ahbm.graphics import save_figure
from ahbm.models.pendulums import pendulum_torque, single_pendulum

AMPLITUDE, OMEGA, MEAN = 0.8, 2.0 * np.pi, -0.5  # rad, rad/s, rad


def prescribed(t):
    """Swing q(t) = MEAN + AMPLITUDE sin(ω t) and its derivatives."""
    q = MEAN + AMPLITUDE * np.sin(OMEGA * t)
    qd = AMPLITUDE * OMEGA * np.cos(OMEGA * t)
    qdd = -AMPLITUDE * OMEGA**2 * np.sin(OMEGA * t)
    return q, qd, qdd


def run(out: Path, quick: bool = False) -> dict:
    model = single_pendulum()
    t = np.linspace(0.0, 1.0 if quick else 2.0, 201 if quick else 401)
    q, qd, qdd = prescribed(t)
    tau_rnea = rnea(model, q[:, None], qd[:, None], qdd[:, None])[:, 0]
    tau_closed = pendulum_torque(q, qdd)
    id_error = float(np.max(np.abs(tau_rnea - tau_closed)))

    def torque(time, q_now, qd_now):  # feed-forward: the inverse-dynamics torque at `time`
        qp, qdp, qddp = prescribed(time)
        return rnea(model, [qp], [qdp], [qddp])

    sim = simulate(model, (t[0], t[-1]), [q[0]], [qd[0]], tau=torque, method="DOP853",
                   rtol=1e-10, atol=1e-12, t_eval=t)  # fmt: skip
    fd_error = float(np.max(np.abs(sim.q[:, 0] - q)))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
    axes[0].plot(t, tau_closed, "k-", lw=3, alpha=0.4, label="closed form")
    axes[0].plot(t, tau_rnea, "r--", label="rnea")
    axes[0].set_ylabel("pin torque (N m)")
    axes[0].set_title(f"Inverse dynamics: max |Δτ| = {id_error:.1e} N m")
    axes[0].legend(loc="upper right")
    axes[1].plot(t, np.degrees(q), "k-", lw=3, alpha=0.4, label="prescribed")
    axes[1].plot(sim.t, np.degrees(sim.q[:, 0]), "b--", label="forward simulation")
    axes[1].set_ylabel("angle from horizontal (deg)")
    axes[1].set_xlabel("time (s)")
    axes[1].set_title(f"Forward dynamics with the ID torque: max |Δq| = {fd_error:.1e} rad")
    axes[1].legend(loc="upper right")
    fig.tight_layout()
    path = save_figure(fig, out / "pendulum_ID.png", dpi=80)
    result = {
        "J_O": float(crba(model, [0.0])[0, 0]),
        "id_max_error": id_error,
        "fd_max_error": fd_error,
        "tau_peak": float(np.max(np.abs(tau_rnea))),
        "figure": path,
    }
    print(f"J_O = {result['J_O']:.4f} kg m^2; peak pin torque {result['tau_peak']:.3f} N m")
    print(f"inverse dynamics vs closed form: max |dtau| = {id_error:.2e} N m")
    print(f"forward simulation vs prescribed motion: max |dq| = {fd_error:.2e} rad")
    print(f"figure: {path}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="short run for tests")
    args = parser.parse_args()
    run(Path(args.out), quick=args.quick)
