"""Minimum-jerk reaching with B-splines, against Flash & Hogan's quintic and minimum torque.

A planar two-link arm (shoulder and elbow about the vertical, upper arm 0.30 m
and 1.9 kg, forearm with hand 0.33 m and 1.4 kg) reaches in 0.8 s from one
posture to another, at rest with zero accelerations at both ends. Two
optimality criteria compared by Simonidis et al. (2011, §7):

* minimum angle jerk (MAJ): ``min ∫ Σ_i q⃛_i² dt``, a :class:`ahbm.optimize.Phase`
  with the :class:`~ahbm.optimize.Jerk` objective and ``q``, ``q̇``, ``q̈`` given
  at both ends, solved with the B-spline transcription: the joint angles are
  clamped quintic B-splines (Chung 2009, ch. 5; :func:`ahbm.optimize.bspline_basis`)
  whose control points are the variables (CasADi + IPOPT); the jerk integral
  is exact (Gauss–Legendre per knot span) and the boundary positions,
  velocities and accelerations are linear in the control points. Flash &
  Hogan (1985) give the optimum in closed form,
  ``q(t) = q₀ + (q_f − q₀)(10 s³ − 15 s⁴ + 6 s⁵)``, ``s = t/T``, which the
  B-spline space contains: the solution equals it to solver precision.
* minimum torque: ``min ∫ Σ τ_i² dt`` with the same end states, an
  optimal-control problem (:class:`ahbm.optimize.Phase`) solved with the
  B-spline transcription.

The hand path of MAJ is curved (straight in joint space), as Flash & Hogan
note for joint-space criteria; the figure shows both hand paths, the hand
speed profiles and the joint torques (inverse dynamics of the MAJ motion).

Usage: ``python examples/minimum_jerk_reach.py [OUTPUT_FOLDER]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import rnea
from ahbm.kinematics.forward import point_position
from ahbm.kinematics.tree import Model
from ahbm.optimize import (
    BSplineTranscription,
    Effort,
    Jerk,
    Phase,
    bspline_basis,
    bspline_fit,
    clamped_knots,
    solve,
)

T = 0.8
Q0 = np.radians([20.0, 100.0])  # shoulder, elbow (rad)
QF = np.radians([75.0, 45.0])


def arm() -> Model:
    """Planar two-link arm in the horizontal plane (joint axes vertical; gravity does no work)."""
    m = Model("arm", (0.0, 0.0, -9.81))
    z = {"type": "revolute", "axis": [0.0, 0.0, 1.0]}
    m.add_body("upper_arm", "ground", dict(z, name="shoulder"), mass=1.9, com=[0.15, 0, 0],
               inertia=np.diag([0.001, 0.0143, 0.0143]))  # fmt: skip
    m.add_body("forearm", "upper_arm", dict(z, name="elbow"), position=[0.30, 0, 0], mass=1.4,
               com=[0.18, 0, 0], inertia=np.diag([0.001, 0.0186, 0.0186]),
               markers={"hand": [0.33, 0, 0]})  # fmt: skip
    return m


def quintic(t, q0=Q0, qf=QF, duration=T):
    """Flash & Hogan's minimum-jerk motion and its first three derivatives, each (n, 2)."""
    s = np.asarray(t, float)[:, None] / duration
    d = (qf - q0)[None, :]
    q = q0 + d * (10 * s**3 - 15 * s**4 + 6 * s**5)
    qd = d * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    qdd = d * (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    qddd = d * (60 - 360 * s + 360 * s**2) / duration**3
    return q, qd, qdd, qddd


def minimum_angle_jerk(*, degree=5, n_control=8, q0=Q0, qf=QF, duration=T):
    """Minimum ``∫ Σ q⃛² dt`` over clamped B-splines with rest-to-rest end conditions.

    Returns ``(knots, control points (n_control, 2), IPOPT status)``.
    """
    zero = [0.0, 0.0]
    phase = Phase(arm(), nodes=2 * n_control, duration=duration, objectives=[Jerk()],
                  initial={"q": q0, "qd": zero, "qdd": zero},
                  final={"q": qf, "qd": zero, "qdd": zero})  # fmt: skip
    method = BSplineTranscription(degree=degree, control_points=n_control)
    res = solve(phase, method=method, verbose=False)
    # the solution lies in the spline space: a least-squares fit at the nodes recovers it
    knots = clamped_knots(n_control, degree, 0.0, duration)
    return knots, bspline_fit(knots, degree, res.t, res.q), res.status


def minimum_torque(*, nodes=41):
    """Minimum ``∫ Σ τ² dt`` rest to rest (zero end accelerations are not imposed)."""
    ends = {"initial": {"q": Q0, "qd": [0.0, 0.0]}, "final": {"q": QF, "qd": [0.0, 0.0]}}
    phase = Phase(arm(), nodes=nodes, duration=T, objectives=[Effort()], **ends)
    return solve(phase, method=BSplineTranscription(), verbose=False)


def run(out_dir, *, quick: bool = False) -> dict:
    """Solve both criteria, save ``minimum_jerk_reach.png``, return the numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = arm()
    knots, P, status = minimum_angle_jerk()
    t = np.linspace(0.0, T, 161)
    spline = [bspline_basis(knots, 5, t, d) @ P for d in range(4)]
    ref = quintic(t)
    errors = [float(np.abs(a - b).max()) for a, b in zip(spline, ref, strict=True)]
    tau_maj = rnea(model, spline[0], spline[1], spline[2])
    torque = minimum_torque(nodes=21 if quick else 41)
    hand = point_position(model, spline[0], "forearm", [0.33, 0, 0])
    hand_tau = point_position(model, torque.q, "forearm", [0.33, 0, 0])
    speed = np.linalg.norm(np.gradient(hand, t, axis=0), axis=1)
    speed_tau = np.linalg.norm(np.gradient(hand_tau, torque.t, axis=0), axis=1)
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.8))
    ax[0].plot(hand[:, 0], hand[:, 1], label="minimum angle jerk")
    ax[0].plot(hand_tau[:, 0], hand_tau[:, 1], "--", label="minimum torque")
    ax[0].plot(*hand[[0, -1], :2].T, "k:", lw=0.8, label="straight line")
    ax[0].set_aspect("equal")
    ax[0].set_xlabel("x (m)")
    ax[0].set_ylabel("y (m)")
    ax[0].legend(fontsize=7)
    ax[1].plot(t, speed, label="minimum angle jerk")
    ax[1].plot(torque.t, speed_tau, "--", label="minimum torque")
    ax[1].set_xlabel("t (s)")
    ax[1].set_ylabel("hand speed (m/s)")
    ax[2].plot(t, tau_maj, label=["shoulder (MAJ)", "elbow (MAJ)"])
    ax[2].plot(torque.t, torque.tau, "--", label=["shoulder (min τ)", "elbow (min τ)"])
    ax[2].set_xlabel("t (s)")
    ax[2].set_ylabel("joint torque (N·m)")
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "minimum_jerk_reach.png", dpi=110)
    plt.close(fig)
    jerk_cost = float(np.trapezoid((ref[3] ** 2).sum(axis=1), t))
    return {
        "status": status,
        "max_error_q": errors[0],
        "max_error_qd": errors[1],
        "max_error_qdd": errors[2],
        "max_error_qddd": errors[3],
        "jerk_cost_closed_form": jerk_cost,
        "torque_success": torque.success,
        "torque_cost": torque.cost,
        "maj_torque_cost": float(np.trapezoid((tau_maj**2).sum(axis=1), t)),
        "path_deviation_maj": float(_deviation(hand)),
        "path_deviation_torque": float(_deviation(hand_tau)),
    }


def _deviation(p):
    """Largest distance of a hand path from the straight line between its ends, m."""
    a, b = p[0, :2], p[-1, :2]
    d = (b - a) / np.linalg.norm(b - a)
    r = p[:, :2] - a
    return np.abs(r[:, 0] * d[1] - r[:, 1] * d[0]).max()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="minimum_jerk_reach_out")
    args = parser.parse_args(argv)
    n = run(args.out)
    print(f"minimum angle jerk ({n['status']}): largest difference from Flash & Hogan's quintic")
    print(f"  q {n['max_error_q']:.1e} rad, q̇ {n['max_error_qd']:.1e} rad/s, "
          f"q̈ {n['max_error_qdd']:.1e} rad/s², q⃛ {n['max_error_qddd']:.1e} rad/s³")  # fmt: skip
    print(f"  ∫τ² dt: minimum angle jerk {n['maj_torque_cost']:.4f}, minimum torque "
          f"{n['torque_cost']:.4f} N²·m²·s")  # fmt: skip
    print(f"  hand path off the straight line: {1e3 * n['path_deviation_maj']:.1f} mm (MAJ), "
          f"{1e3 * n['path_deviation_torque']:.1f} mm (minimum torque)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
