"""A knife edge (skate, Chaplygin sleigh) that cannot slide sideways (ahbm example).

:func:`ahbm.models.knife_edge` moves on a planar joint (x, y, heading θ)
with the no-slip constraint ``−sin θ ẋ + cos θ ẏ = 0`` as a
:class:`~ahbm.dynamics.VelocityConstraint`. Three runs against closed forms:

* the skate (centre of mass over the blade) on a horizontal plane: constant
  speed and heading rate, a circle; the lateral force is ``λ = m u ω``;
* the Chaplygin sleigh (centre of mass a distance a ahead of the blade):
  ``u = U tanh(k t + c)``, ``k = m a U / (I + m a²)``, ``U = √(2E/m)``: the
  turning dies out and the sleigh straightens at speed U;
* the skate on an inclined plane (in-plane gravity g' along +x): the heading
  rate stays constant, ``u = c + (g'/ω) sin θ`` and the path is a
  cycloid-like curve that drifts across the slope, not down it.

Usage: ``python examples/knife_edge.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import simulate
from ahbm.kinematics.forward import kinetic_energy, potential_energy
from ahbm.models import knife_edge

MASS, INERTIA, OFFSET, SLOPE_G = 1.0, 0.05, 0.2, 1.5


def forward_speed(q, qd):
    """Speed of the blade along its heading, shape (n,)."""
    return qd[:, 0] * np.cos(q[:, 2]) + qd[:, 1] * np.sin(q[:, 2])


def run(out: Path, quick: bool = False) -> dict:
    """Simulate the three cases, save a figure, return key numbers."""
    t_end = 3.0 if quick else 10.0
    t = np.linspace(0.0, t_end, 301)
    kw = {"method": "DOP853", "rtol": 1e-12, "atol": 1e-12, "t_eval": t, "max_step": 0.2}
    u0, w0 = 0.5, 2.0
    # skate on the horizontal plane: a circle of radius u/ω
    skate = knife_edge(mass=MASS, inertia=INERTIA)
    circle = simulate(skate, (0, t_end), np.zeros(3), [u0, 0.0, w0], **kw)
    th = w0 * t
    ref_c = np.stack([u0 / w0 * np.sin(th), u0 / w0 * (1 - np.cos(th)), th], axis=1)
    # Chaplygin sleigh: the speed approaches U = √(2E/m) as tanh
    sleigh = knife_edge(mass=MASS, inertia=INERTIA, offset=OFFSET)
    sl = simulate(sleigh, (0, t_end), np.zeros(3), [u0, 0.0, w0], **kw)
    J = INERTIA + MASS * OFFSET**2
    U = np.sqrt((MASS * u0**2 + J * w0**2) / MASS)
    k, c = MASS * OFFSET * U / J, np.arctanh(u0 / U)
    u_ref = U * np.tanh(k * t + c)
    # skate on an inclined plane (downhill along +x)
    incline = knife_edge(mass=MASS, inertia=INERTIA, gravity=(SLOPE_G, 0.0, -9.7))
    inc = simulate(incline, (0, t_end), np.zeros(3), [u0, 0.0, w0], **kw)
    ref_i = np.stack([u0 / w0 * np.sin(th) + SLOPE_G * np.sin(th) ** 2 / (2 * w0**2),
                      u0 / w0 * (1 - np.cos(th)) + SLOPE_G / w0**2 * (th / 2 - np.sin(2 * th) / 4),
                      th], axis=1)  # fmt: skip

    def drift(model, r):
        e = kinetic_energy(model, r.q, r.qd) + potential_energy(model, r.q)
        return float(np.ptp(e))

    numbers = {
        "t_end": t_end,
        "circle_max_closed_form_error": float(np.abs(circle.q - ref_c).max()),
        "circle_lateral_force_error": float(np.abs(circle.lam[:, 0] - MASS * u0 * w0).max()),
        "sleigh_max_speed_error": float(np.abs(forward_speed(sl.q, sl.qd) - u_ref).max()),
        "incline_max_closed_form_error": float(np.abs(inc.q - ref_i).max()),
        "max_velocity_residual": float(max(r.velocity_residual.max() for r in (circle, sl, inc))),
        "max_energy_drift": max(drift(skate, circle), drift(sleigh, sl), drift(incline, inc)),
    }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    for r, ref, label, col in ((circle, ref_c, "skate, level", "C0"),
                               (sl, None, "Chaplygin sleigh", "C1"),
                               (inc, ref_i, "skate, inclined", "C2")):  # fmt: skip
        if ref is not None:
            axes[0].plot(ref[:, 0], ref[:, 1], color=col, lw=4, alpha=0.3)
        axes[0].plot(r.q[:, 0], r.q[:, 1], color=col, label=label)
    axes[0].annotate("downhill\n(inclined)", xy=(2.4, 1.0), xytext=(1.0, 0.8),
                     arrowprops={"arrowstyle": "->"}, fontsize=8)  # fmt: skip
    axes[0].set_aspect("equal")
    axes[0].set_xlabel("x (m)")
    axes[0].set_ylabel("y (m)")
    axes[0].set_title("Blade paths (thick: closed form)")
    axes[0].legend(fontsize=8)
    axes[1].plot(t, u_ref, "k-", lw=4, alpha=0.3, label="U tanh(kt + c)")
    axes[1].plot(sl.t, forward_speed(sl.q, sl.qd), "C1", label="sleigh speed")
    axes[1].plot(sl.t, sl.qd[:, 2], "C1--", label="sleigh heading rate")
    axes[1].set_xlabel("time (s)")
    axes[1].set_ylabel("m/s, rad/s")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / "knife_edge.png", dpi=100)
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
