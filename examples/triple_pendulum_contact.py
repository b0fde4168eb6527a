"""Triple pendulum with a point contact (Felis 2015, Algorithm 5 test case).

Part 1: the triple pendulum of three EulerZYX joints with a contact at
(0, 0, -1) in the frame of body 3 (its tip), constrained in x, y and z; the
accelerations and contact forces are solved by the direct (KKT),
range-space and null-space methods, which must agree.

Part 2: the pendulum swings freely from a tilted pose until its tip reaches a
ground plane (an event); an inelastic impact (restitution 0) is applied and
the tip then stays on the plane (plane constraint) as long as the floor
pushes (λ > 0); where the floor would have to pull, the contact is released
(lift-off event, at once if that is already so right after the impact) and
the pendulum swings freely again until the next impact.

Usage: ``python examples/triple_pendulum_contact.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import (
    PlaneConstraint,
    PointConstraint,
    contact_release_event,
    point_height_event,
    simulate,
)
from ahbm.dynamics.constrained import constrained_forward_dynamics
from ahbm.dynamics.constraints import ConstraintSet
from ahbm.kinematics.forward import kinetic_energy, point_position
from ahbm.models import triple_pendulum_euler

TIP = [0.0, 0.0, -1.0]
FLOOR = -2.6  # height of the ground plane, m


def solver_comparison(model, q, qd, tau):
    """(qdd, lam) of the three solvers for a tip contact at the current tip position."""
    contact = ConstraintSet(
        [PointConstraint("link3", TIP, other_point=point_position(model, q, "link3", TIP))]
    )
    return {
        method: constrained_forward_dynamics(model, q, qd, tau, contact, method=method)
        for method in ("direct", "range_space", "null_space")
    }


def run(out: Path, quick: bool = False) -> dict:
    model = triple_pendulum_euler()
    rng = np.random.default_rng(4)
    q = rng.uniform(-0.5, 0.5, model.nq)
    qd = rng.uniform(-1.0, 1.0, model.nv)
    tau = rng.uniform(-0.2, 0.2, model.nv)
    sol = solver_comparison(model, q, qd, tau)
    ref_qdd, ref_lam = sol["direct"]
    spread_qdd = max(float(np.abs(a - ref_qdd).max()) for a, _ in sol.values())
    spread_lam = max(float(np.abs(lam - ref_lam).max()) for _, lam in sol.values())

    # part 2: swing, impact, slide
    floor = ConstraintSet([PlaneConstraint("link3", TIP, height=FLOOR, name="floor")])
    impact = point_height_event(model, "link3", TIP, height=FLOOR, direction=-1,
                                constraints=floor, restitution=0.0, name="impact")  # fmt: skip
    release = contact_release_event(0, constraints=None, name="lift-off")
    q0 = np.zeros(model.nq)
    q0[1] = 1.0  # tilt the first joint about y
    t_end = 1.5 if quick else 4.0
    res = simulate(model, (0, t_end), q0, np.zeros(model.nv), events=[impact, release],
                   method="DOP853", rtol=1e-9, atol=1e-9)  # fmt: skip
    on_floor = np.array([res.constraint_sets[p] is not None for p in res.phase])
    tip = point_position(model, res.q, "link3", TIP)
    ke = kinetic_energy(model, res.q, res.qd)
    numbers = {
        "solver_max_difference_qdd": spread_qdd,
        "solver_max_difference_lambda": spread_lam,
        "contact_force_direct": np.array2string(ref_lam, precision=6),
        "impact_time": float(res.events[0]["t"]) if res.events else float("nan"),
        "max_floor_residual_in_contact": float(
            res.position_residual[on_floor].max() if on_floor.any() else np.nan
        ),
        "events": ", ".join(f"{e['name']}@{e['t']:.3f}s" for e in res.events),
        "rhs_evaluations": int(res.nfev),
    }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, ax = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    ax[0].plot(res.t, tip[:, 2], label="tip height")
    ax[0].axhline(FLOOR, color="k", lw=0.8, label="floor")
    ax[0].set_ylabel("z (m)")
    ax[0].legend()
    ax[1].plot(res.t, ke)
    ax[1].set_ylabel("kinetic energy (J)")
    lam = res.lam[:, 0] if res.lam.shape[1] else np.full(res.t.shape, np.nan)
    ax[2].plot(res.t, lam)
    ax[2].set_ylabel("floor normal force λ (N)")
    ax[2].set_xlabel("time (s)")
    ax[0].set_title("Triple pendulum: swing, impact (e = 0), sliding contact")
    fig.tight_layout()
    save_figure(fig, out / "triple_pendulum_contact.png", dpi=100)
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
