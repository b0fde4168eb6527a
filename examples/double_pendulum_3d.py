"""Three-dimensional double pendulum with a follower force (AHBM report §5.2.2).

The lower pendulum hangs from the ground on a pin joint (x axis), the upper
one from its end on a ZXY Euler joint; both have unit length, mass and
principal moments of inertia. A constant unit force, fixed in the local frame
of the second pendulum (along its local y axis), acts at its free end (its
"top" in the report's figure) and turns with it. The script plots the joint
angles, the angular velocity and the velocity of the second pendulum, and
checks the energy balance: the change of mechanical energy equals the work of
the follower force.

Usage: ``python examples/double_pendulum_3d.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.integrate import cumulative_trapezoid

from ahbm.dynamics import BodyForce, simulate
from ahbm.kinematics.forward import (
    body_jacobian,
    kinetic_energy,
    point_velocity,
    potential_energy,
)
from ahbm.models import double_pendulum_3d


def follower_force() -> BodyForce:
    """Unit force along the local y axis of pendulum 2, at its free end."""
    return BodyForce("pendulum2", [0.0, 1.0, 0.0], point=[0, 0, -1], frame="local",
                     name="follower")  # fmt: skip


def run(out: Path, quick: bool = False) -> dict:
    model = double_pendulum_3d()
    force = follower_force()
    t_end = 2.0 if quick else 10.0
    t = np.linspace(0, t_end, 401 if quick else 2001)
    q0 = np.array([0.3, 0.0, 0.2, 0.0])
    res = simulate(model, (0, t_end), q0, np.zeros(4), forces=[force], rtol=1e-10, atol=1e-10,
                   t_eval=t)  # fmt: skip
    energy = kinetic_energy(model, res.q, res.qd) + potential_energy(model, res.q)
    work = cumulative_trapezoid(force.power(model, res.q, res.qd, t=res.t), res.t, initial=0.0)
    J = body_jacobian(model, res.q, "pendulum2", frame="world")
    omega = np.einsum("nij,nj->ni", J[:, :3], res.qd)
    vel = point_velocity(model, res.q, res.qd, "pendulum2", [0, 0, -0.5])
    numbers = {
        "t_end": t_end,
        "pin_angle_end_deg": float(np.degrees(res.q[-1, 0])),
        "max_speed_com2": float(np.linalg.norm(vel, axis=1).max()),
        "energy_balance_error": float(np.abs(energy - energy[0] - work).max()),
        "steps": int(res.n_steps),
        "rhs_evaluations": int(res.nfev),
    }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, ax = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    ax[0, 0].plot(res.t, np.degrees(res.q[:, 0]))
    ax[0, 0].set_title("(a) lower (pin) joint angle (deg)")
    for k, name in enumerate("xyz"):
        ax[0, 1].plot(res.t, omega[:, k], label=f"ω{name}")
        ax[1, 1].plot(res.t, vel[:, k], label=f"v{name}")
    ax[0, 1].set_title("(b) upper pendulum angular velocity (rad/s)")
    for k, name in enumerate(model.coordinate_names[1:]):
        ax[1, 0].plot(res.t, np.degrees(res.q[:, k + 1]), label=name)
    ax[1, 0].set_title("(c) upper (Euler) joint angles (deg)")
    ax[1, 1].set_title("(d) upper pendulum COM velocity (m/s)")
    for a in ax.ravel():
        a.legend(fontsize=8) if a.get_legend_handles_labels()[0] else None
    for a in ax[1]:
        a.set_xlabel("time (s)")
    fig.tight_layout()
    save_figure(fig, out / "double_pendulum_3d.png", dpi=100)
    return numbers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="short run (used by the tests)")
    args = parser.parse_args(argv)
    for key, value in run(Path(args.out), quick=args.quick).items():
        print(f"{key}: {value:.6g}" if isinstance(value, float) else f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
