"""A thin disk rolling without slipping on a plane: velocity-level constraints (ahbm example).

The disk (:func:`ahbm.models.rolling_disk`: coordinates x, y of the contact
point, heading, lean, spin) carries the nonholonomic no-slip constraint
``ẋ = R ψ̇ cos θ``, ``ẏ = R ψ̇ sin θ`` as a
:class:`~ahbm.dynamics.VelocityConstraint`. Two runs:

* steady circular rolling: lean φ, spin rate ψ̇ and heading rate Ω related
  by ``A Ω² sin φ cos φ − (C + mR²) Ω (Ω sin φ + ψ̇) cos φ − m g R sin φ = 0``
  (balance of angular momentum about the centre; Routh, *Advanced
  Dynamics*, art. 244); the simulation is compared with the closed form
  (a circle of radius ``R ψ̇ / Ω`` run at constant rates);
* a wobbling disk from a generic initial state (no closed form): energy
  and the no-slip residual are reported.

Usage: ``python examples/rolling_disk.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import simulate
from ahbm.kinematics.forward import kinetic_energy, potential_energy
from ahbm.models import rolling_disk

RADIUS, MASS, GRAVITY = 0.3, 1.0, 9.81


def steady_heading_rate(lean, spin_rate, *, slow=True):
    """Heading rate Ω of steady rolling at `lean` (rad) and `spin_rate` (rad/s).

    The steady relation is quadratic in Ω; `slow` picks the root of smaller
    magnitude (the wide circle), else the fast precession.
    """
    a, c, mr2 = MASS * RADIUS**2 / 4, MASS * RADIUS**2 / 2, MASS * RADIUS**2
    s, co = np.sin(lean), np.cos(lean)
    roots = np.roots([(a - c - mr2) * s * co, -(c + mr2) * spin_rate * co,
                      -MASS * GRAVITY * RADIUS * s])  # fmt: skip
    roots = roots[np.isreal(roots)].real
    return float(min(roots, key=abs) if slow else max(roots, key=abs))


def steady_closed_form(t, lean, heading_rate, spin_rate):
    """Coordinates (n, 5) of steady rolling started at x = y = heading = spin = 0."""
    th = heading_rate * t
    rho = RADIUS * spin_rate / heading_rate
    return np.stack([rho * np.sin(th), rho * (1 - np.cos(th)), th, np.full_like(t, lean),
                     spin_rate * t], axis=1)  # fmt: skip


def run(out: Path, quick: bool = False) -> dict:
    """Simulate the steady and the wobbling disk, save figures, return key numbers."""
    model = rolling_disk(radius=RADIUS, mass=MASS, gravity=(0, 0, -GRAVITY))
    t_end = 2.0 if quick else 10.0
    t = np.linspace(0.0, t_end, 201)
    kw = {"method": "DOP853", "rtol": 1e-12, "atol": 1e-12, "t_eval": t, "max_step": 0.2}
    lean, spin = 0.2, 15.0
    omega = steady_heading_rate(lean, spin)
    q0 = np.array([0.0, 0.0, 0.0, lean, 0.0])
    steady = simulate(model, (0, t_end), q0, [RADIUS * spin, 0, omega, 0, spin], **kw)
    ref = steady_closed_form(steady.t, lean, omega, spin)
    wobble = simulate(model, (0, t_end), [0.0, 0.0, 0.3, 0.25, 0.0], [0, 0, 1.5, 0.3, 12.0],
                      **dict(kw, rtol=1e-10, atol=1e-10))  # fmt: skip

    def energy(r):
        return kinetic_energy(model, r.q, r.qd) + potential_energy(model, r.q)

    e_s, e_w = energy(steady), energy(wobble)
    numbers = {
        "t_end": t_end,
        "steady_heading_rate": omega,
        "steady_max_closed_form_error": float(np.abs(steady.q - ref).max()),
        "steady_max_velocity_residual": float(steady.velocity_residual.max()),
        "steady_energy_drift": float(np.ptp(e_s)),
        "wobble_max_velocity_residual": float(wobble.velocity_residual.max()),
        "wobble_energy_drift": float(np.ptp(e_w)),
        "wobble_lean_range": float(np.ptp(wobble.q[:, 3])),
        "wobble_rhs_evaluations": int(wobble.nfev),
    }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.5))
    axes[0].plot(ref[:, 0], ref[:, 1], "k-", lw=4, alpha=0.3, label="closed form")
    axes[0].plot(steady.q[:, 0], steady.q[:, 1], "C0--", label="simulated")
    axes[0].set_title(f"Steady rolling (lean {np.degrees(lean):.0f}°)")
    axes[1].plot(wobble.q[:, 0], wobble.q[:, 1], "C1", label="simulated")
    axes[1].set_title("Wobbling disk")
    for ax in axes[:2]:
        ax.set_aspect("equal")
        ax.set_xlabel("contact x (m)")
        ax.set_ylabel("contact y (m)")
        ax.legend(fontsize=8)
    axes[2].plot(wobble.t, np.degrees(wobble.q[:, 3]), "C1", label="wobbling")
    axes[2].plot(steady.t, np.degrees(steady.q[:, 3]), "C0--", label="steady")
    axes[2].set_xlabel("time (s)")
    axes[2].set_ylabel("lean (deg)")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / "rolling_disk_paths.png", dpi=100)
    fig2, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for r, e, label in ((steady, e_s, "steady"), (wobble, e_w, "wobbling")):
        ax[0].semilogy(r.t, np.maximum(r.velocity_residual, 1e-18), label=label)
        ax[1].plot(r.t, e - e[0], label=label)
    ax[0].set_ylabel("|A q̇| (m/s)")
    ax[1].set_ylabel("E − E0 (J)")
    ax[1].set_xlabel("time (s)")
    ax[0].set_title("No-slip residual after projection, energy error")
    ax[0].legend(fontsize=8)
    fig2.tight_layout()
    save_figure(fig2, out / "rolling_disk_residuals.png", dpi=100)
    return numbers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="short run (used by the tests)")
    args = parser.parse_args(argv)
    numbers = run(Path(args.out), quick=args.quick)
    for key, value in numbers.items():
        print(f"{key}: {value:.6g}" if isinstance(value, float) else f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
