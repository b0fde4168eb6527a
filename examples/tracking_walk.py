"""Torque-driven tracking of a measured walk, reproducing its inverse-dynamics moments.

The shared walking trial (``../shared/data/opensim``: the planar 10-coordinate
``subject01.osim``, its inverse kinematics ``subject01_walk_IK.mot`` and the
ground reactions ``subject01_walk_grf.mot`` applied as its ID setup describes)
is read with :mod:`ahbm.io` / :mod:`ahbm.opensim`, and ahbm's inverse dynamics of
it gives the reference moments. An optimal-control problem then asks for the
torques whose *forward* dynamics, with the measured ground reactions, tracks the
measured coordinates:

    min ∫ Σ_i w_q (q_i − q_i^IK(t))² + w_τ Σ_i τ_i² dt
    s.t. M(q) q̈ + h(q, q̇) = τ + G(q, t),   G = Σ_b J_bᵀ(q) f_b^GRF(t)

The measured ground reactions enter as the generalized force ``G(q, t)`` (the
difference of two symbolic inverse dynamics, without and with the interpolated
external forces): the phase's controls are the total generalized forces
``u = τ + G`` and the cost is written on ``τ = u − G(q, t)`` with a
:class:`~ahbm.optimize.CustomCost`. The tracked motion is dynamically consistent
(it satisfies the equations of motion between the nodes, which the raw IK does
not), and its joint moments agree with the inverse-dynamics moments to within a
few per cent of their range.

Usage: ``python examples/tracking_walk.py [OUTPUT_FOLDER] [--quick] [--method NAME]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ahbm.dynamics import DesiredTrajectory, rnea
from ahbm.opensim import read_osim, run_id_setup
from ahbm.optimize import (
    CustomCost,
    Phase,
    TrackCoordinates,
    require_casadi,
    solve,
    symbolic_dynamics,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
JOINTS = ("hip_flexion_r", "hip_flexion_l", "knee_angle_r", "knee_angle_l", "ankle_angle_r",
          "ankle_angle_l", "lumbar_extension")  # fmt: skip


def reference(data=DATA):
    """The model and ahbm's inverse dynamics of the trial (an :class:`ahbm.opensim.IDResult`)."""
    model = read_osim(data / "subject01.osim")
    result = run_id_setup(data / "subject01_Setup_ID.xml", write=False, model=model)
    return model, result


def grf_generalized_force(model, t_data, f_ext, window=None):
    """``G(q, t)`` of the measured external forces as a CasADi function of (q, t).

    The world spatial forces of the loaded bodies are interpolated linearly in
    time, written as ramps ``F(t) = F_0 + Σ_k Δs_k max(0, t − t_k)`` (plain CasADi
    arithmetic, which folds to constants at the fixed node times), and
    ``G = ID(q, 0, 0) − ID(q, 0, 0, f_ext(t))`` (the generalized force ``Jᵀ f``).
    """
    ca = require_casadi()
    keep = np.ones(t_data.size, bool)
    if window is not None:  # the samples that bracket the window
        lo = max(np.searchsorted(t_data, window[0], side="right") - 1, 0)
        hi = min(np.searchsorted(t_data, window[1], side="left") + 1, t_data.size)
        keep[:] = False
        keep[lo:hi] = True
    tk, fk = t_data[keep], f_ext[keep]
    loaded = np.flatnonzero(np.abs(fk).max(axis=(0, 2)) > 0)
    table = fk[:, loaded, :].reshape(tk.size, -1)  # (samples, 6 per loaded body)
    slopes = np.diff(table, axis=0) / np.diff(tk)[:, None]
    kinks = np.diff(slopes, axis=0, prepend=np.zeros((1, table.shape[1])))
    q, t = ca.SX.sym("q", model.nq), ca.SX.sym("t")
    values = ca.DM(table[0]) + sum(
        (ca.DM(kinks[k]) * ca.fmax(0.0, t - tk[k]) for k in range(kinks.shape[0])), ca.SX.zeros(1)
    )
    rows = [ca.SX.zeros(1, 6) for _ in range(f_ext.shape[1])]
    for k, body in enumerate(loaded):
        rows[body] = values[6 * k : 6 * k + 6].T
    zero = ca.SX.zeros(model.nv)
    sd = symbolic_dynamics(model)
    G = sd.inverse_dynamics(q, zero, zero) - sd.inverse_dynamics_ext(
        q, zero, zero, ca.vertcat(*rows)
    )
    return ca.Function("G", [q, t], [G])


def tracking_phase(model, ref, t0, t1, *, nodes, w_q=1e6, w_tau=1e-2, dynamics="explicit"):
    """The tracking problem on the window [t0, t1] of the trial."""
    keep = (ref.time >= t0 - 1e-9) & (ref.time <= t1 + 1e-9)
    t_data = ref.time[keep] - t0
    # the tracked reference is linearly interpolated: give it at 1 kHz from the cubic Hermite
    # spline of the processed coordinates and velocities of the whole trial, so that chords
    # do not flatten its curvature and the window's ends have the trial's own velocities
    spline = DesiredTrajectory(ref.time - t0, ref.q, qd=ref.qd)
    t_dense = np.linspace(0.0, t_data[-1], int(round(t_data[-1] * 1000)) + 1)
    G = grf_generalized_force(model, ref.time - t0, ref.f_ext, window=(0.0, t_data[-1]))
    ca = require_casadi()

    def joint_effort(x, u, p, t):  # Σ τ², τ = u − G(q, t) (G evaluated once)
        tau = u[: model.nv] - G(x[: model.nq], t)
        return ca.sumsqr(tau)

    objectives = [
        TrackCoordinates(t_dense, spline(t_dense)[0], weight=w_q),
        CustomCost(joint_effort, weight=w_tau, name="joint effort"),
    ]
    phase = Phase(
        model, nodes=nodes, duration=float(t_data[-1]), q_bounds=(-10.0, 10.0),
        dynamics=dynamics, objectives=objectives,
        initial={"q": spline(0.0)[0], "qd": spline(0.0)[1]},
        final={"q": spline(t_data[-1])[0], "qd": spline(t_data[-1])[1]},
    )  # fmt: skip
    # guess: the measured motion and its total generalized forces u = ID without the GRF
    u_guess = rnea(model, ref.q[keep], ref.qd[keep], ref.qdd[keep])
    guess = {"t": t_data, "q": ref.q[keep], "qd": ref.qd[keep], "tau": u_guess}
    return phase, G, guess, keep


def run(out_dir, *, quick: bool = False, method="hermite-simpson", hessian="exact") -> dict:
    """Solve the tracking problem, save ``tracking_walk.png``, return the numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model, ref = reference()
    t0, t1 = (0.6, 0.9) if quick else (float(ref.time[0]), float(ref.time[-1]))
    nodes = int(round((t1 - t0) / 0.02)) + 1
    phase, G, guess, keep = tracking_phase(model, ref, t0, t1, nodes=nodes)
    start = time.perf_counter()
    res = solve(phase, method=method, guess=guess, hessian=hessian, verbose=False)
    seconds = time.perf_counter() - start
    print(f"build {res.build_time:.1f} s, solve {res.wall_time:.1f} s")
    # joint torques of the solution: τ = u − G(q, t)
    Gn = np.array([np.asarray(G(q, tk), float).ravel() for q, tk in zip(res.q, res.t, strict=True)])
    tau = res.tau - Gn
    t_ref = ref.time[keep] - t0
    numbers = {"success": res.success, "status": res.status, "seconds": seconds,
               "iterations": res.iterations, "nodes": nodes, "moments": {}}  # fmt: skip
    names = model.coordinate_names
    fig, axes = plt.subplots(2, 4, figsize=(13, 5.5), sharex=True)
    for ax, name in zip(axes.ravel(), JOINTS, strict=False):
        i = names.index(name)
        ref_i = np.interp(res.t, t_ref, ref.tau[keep, i])
        span = float(ref.tau[:, i].max() - ref.tau[:, i].min())  # over the whole trial
        numbers["moments"][name] = {
            "rms_of_range": float(np.sqrt(np.mean((tau[:, i] - ref_i) ** 2)) / span),
            "max_abs_error": float(np.abs(tau[:, i] - ref_i).max()),
            "tracking_rms_deg": float(np.degrees(np.sqrt(np.mean(
                (res.q[:, i] - np.interp(res.t, t_ref, ref.q[keep, i])) ** 2)))),
        }  # fmt: skip
        ax.plot(t_ref, ref.tau[keep, i], "k-", lw=3, alpha=0.3, label="inverse dynamics")
        ax.plot(res.t, tau[:, i], "C0.-", ms=3, lw=0.8, label="tracking (optimal control)")
        ax.set_title(name, fontsize=9)
    axes[0, 0].legend(fontsize=7)
    axes[-1, -1].axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("t (s)")
    axes[0, 0].set_ylabel("moment (N·m)")
    axes[1, 0].set_ylabel("moment (N·m)")
    fig.tight_layout()
    fig.savefig(out_dir / "tracking_walk.png", dpi=110)
    plt.close(fig)
    return numbers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="tracking_walk_out")
    parser.add_argument("--quick", action="store_true", help="a 0.3 s window (16 nodes)")
    parser.add_argument("--hessian", default="exact", help="exact or limited-memory")
    parser.add_argument("--method", default="hermite-simpson",
                        help="transcription: trapezoidal, hermite-simpson, multiple-shooting, "
                             "bspline")  # fmt: skip
    args = parser.parse_args(argv)
    n = run(args.out, quick=args.quick, method=args.method, hessian=args.hessian)
    print(f"{n['status']}: {n['iterations']} iterations, {n['seconds']:.1f} s, {n['nodes']} nodes")
    print("joint moment vs inverse dynamics (RMS, % of its range in the trial) | tracking RMS")
    for name, v in n["moments"].items():
        print(f"  {name:18s} {100 * v['rms_of_range']:5.2f} %   max {v['max_abs_error']:6.2f} N·m"
              f"   {v['tracking_rms_deg']:.3f} deg")  # fmt: skip
    return 0 if n["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
