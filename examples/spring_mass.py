"""Mass-spring-mass system under a cyclic load (AHBM report §5.2.1).

Two 10 kg masses slide along x (prismatic joints) and are joined by a
10 N/m linear spring; F(t) = 10 sin(2πt) N acts on mass 1. The simulation
is compared with the closed-form solution of the linear system.

Usage: ``python examples/spring_mass.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import BodyForce, PointSpringDamper, simulate
from ahbm.kinematics.tree import Model

MASS, STIFFNESS, AMPLITUDE, FREQUENCY = 10.0, 10.0, 10.0, 1.0
GAP = 1.0  # rest length of the spring = initial distance of the masses, m


def build_model() -> Model:
    """Two point-like 10 kg masses on prismatic x joints, mass 2 starting 1 m to the right."""
    m = Model("spring_mass")
    inertia = np.eye(3) * 1e-3
    x = {"type": "prismatic", "axis": [1.0, 0.0, 0.0]}
    m.add_body("mass1", "ground", dict(x, name="x1"), mass=MASS, inertia=inertia)
    m.add_body("mass2", "ground", dict(x, name="x2"), position=[GAP, 0, 0], mass=MASS,
               inertia=inertia)  # fmt: skip
    return m


def load(t):
    """External force on mass 1, N (x direction)."""
    return AMPLITUDE * np.sin(2 * np.pi * FREQUENCY * t)


def elements():
    """The spring and the cyclic force as ahbm force elements."""
    spring = PointSpringDamper("mass1", [0, 0, 0], "mass2", [0, 0, 0], stiffness=STIFFNESS,
                               rest_length=GAP, name="spring")  # fmt: skip
    force = BodyForce("mass1", lambda t: np.array([load(t), 0.0, 0.0]), name="F")
    return [spring, force]


def closed_form(t):
    """Displacements x1(t), x2(t) of the linear system from rest (m)."""
    t = np.asarray(t, dtype=float)
    a = AMPLITUDE / MASS
    W = 2 * np.pi * FREQUENCY
    w0 = np.sqrt(2 * STIFFNESS / MASS)
    u = a * (t / W - np.sin(W * t) / W**2)  # x1 + x2
    w = a / (w0**2 - W**2) * (np.sin(W * t) - (W / w0) * np.sin(w0 * t))  # x1 - x2
    return (u + w) / 2, (u - w) / 2


def run(out: Path, quick: bool = False) -> dict:
    model = build_model()
    t_end = 2.0 if quick else 10.0
    t = np.linspace(0.0, t_end, 201 if quick else 1001)
    res = simulate(model, (0, t_end), np.zeros(2), np.zeros(2), forces=elements(),
                   rtol=1e-10, atol=1e-12, t_eval=t)  # fmt: skip
    x1, x2 = closed_form(res.t)
    spring_force = STIFFNESS * (res.q[:, 1] - res.q[:, 0])  # tension, N
    numbers = {
        "t_end": t_end,
        "max_error_x1": float(np.abs(res.q[:, 0] - x1).max()),
        "max_error_x2": float(np.abs(res.q[:, 1] - x2).max()),
        "x1_end": float(res.q[-1, 0]),
        "x2_end": float(res.q[-1, 1]),
        "max_spring_force": float(np.abs(spring_force).max()),
        "rhs_evaluations": int(res.nfev),
    }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, ax = plt.subplots(4, 1, figsize=(7, 9), sharex=True)
    ax[0].plot(res.t, load(res.t))
    ax[0].set_ylabel("F(t) (N)")
    ax[1].plot(res.t, spring_force)
    ax[1].set_ylabel("spring force (N)")
    ax[2].plot(res.t, res.q[:, 0], label="ahbm")
    ax[2].plot(res.t, x1, "--", label="closed form")
    ax[2].set_ylabel("x1 (m)")
    ax[3].plot(res.t, res.q[:, 1], label="ahbm")
    ax[3].plot(res.t, x2, "--", label="closed form")
    ax[3].set_ylabel("x2 (m)")
    ax[3].set_xlabel("time (s)")
    ax[2].legend()
    ax[0].set_title("Mass-spring-mass system (AHBM §5.2.1)")
    fig.tight_layout()
    save_figure(fig, out / "spring_mass.png", dpi=100)
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
