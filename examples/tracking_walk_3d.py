"""Reconstruction of a measured walk with compliant foot contact: a window of subject01's trial.

The shared walking trial (``../shared/data/opensim``: ``subject01.osim``, a
scaled gait2354-like model whose bodies are three-dimensional and whose ten
coordinates move it in the sagittal plane; its inverse kinematics processed as
its ID setup describes, and the measured ground reactions
``subject01_walk_grf.mot``) is reconstructed by optimal control. Unlike
``examples/tracking_walk.py``, the measured forces are *not* applied: the feet
carry Falisse et al.'s (2019) six smooth contact spheres each
(:func:`ahbm.opensim.opensim_foot_spheres`, Hunt–Crossley with smooth
friction, in 3-D), whose forces are functions of the state, and the ground
reaction is *tracked*:

    min ∫ w_q Σ_i (q_i − q_i^IK)² + w_F |F_spheres(q, q̇) − F_meas|²/BW²
          + w_m Σ_feet |(F_x, F_y)/BW, M_z/(BW·1 cm)|_foot − meas.|²
          + w_r Σ_pelvis (τ_r/s_r)² + w_τ Σ_joints (τ/100)² + w_a Σ q̈² dt
    s.t.  M(q) q̈ + h(q, q̇) − τ_c(q, q̇) = τ        (implicit dynamics)

The total force is tracked with :class:`~ahbm.optimize.TrackGRF`; each foot's
forward and vertical force and its sagittal moment ``M_z`` (its centre of
pressure) with a :class:`~ahbm.optimize.CustomCost` — the total alone lets
the feet push against each other in double support (±330 N, cancelling),
which leaves the joint moments far from inverse dynamics.

Every coordinate carries a coordinate actuator; those of the pelvis
(``pelvis_tilt``, ``pelvis_tx``, ``pelvis_ty``) are the residuals, penalized
on the scale of 2 % of the body weight (N) or of body weight × 1 m (N·m).

- **contact phases from the data**: each foot is "on the ground" where its
  measured vertical force exceeds 20 N; the example reports the detected
  strikes and lift-offs in the window and the same events of the optimized
  spheres' forces;
- **a treadmill**: the trial's pelvis stays near x = 0.6 m; the belt speed is
  estimated from the stance feet's backward velocity (1.136 m/s) and the
  kinematics are shifted into the belt's frame (``pelvis_tx + v t``), where the
  ground is at rest (the forces are the same in both frames);
- **ground height**: the floor of the contact model is placed so that the
  spheres, at the measured poses, carry the measured mean vertical force of the
  window (a one-dimensional calibration by bisection; the spheres' static
  penetration under the body weight is about a centimetre);
- the lateral measured force (``vz``) cannot be produced by a model that moves
  in the sagittal plane: the forward and vertical components are tracked and
  reported, the lateral one is reported only.

Checks printed: IPOPT status and iterations, build and solve time, tracking RMS
per coordinate (degrees, cm for the pelvis translations), GRF RMS (N and % of
body weight), peak residuals (% body weight), the joint moments against ahbm's
inverse dynamics of the trial (RMS, % of each moment's range in the trial), and
the contact events.

Usage: ``python examples/tracking_walk_3d.py [OUTPUT_FOLDER] [--quick]`` (window
0.55–0.95 s: the right heel strike and the left toe-off; 17 nodes with
``--quick``, 41 nodes without).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ahbm.dynamics import DesiredTrajectory
from ahbm.opensim import opensim_foot_spheres, read_mot, read_osim, run_id_setup
from ahbm.optimize import (
    CustomCost,
    Effort,
    SmoothContactPhase,
    TrackCoordinates,
    TrackGRF,
    require_casadi,
    solve,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
RESIDUALS = ("pelvis_tilt", "pelvis_tx", "pelvis_ty")
THRESHOLD = 20.0  # N: a foot carrying more than this is on the ground
FEET = {"r": "ground_force_", "l": "1_ground_force_"}


def load_trial(data=DATA):
    """The model, ahbm's inverse dynamics of the trial and the measured forces per foot.

    Returns ``(model, id_result, t_grf, grf)`` with ``grf = {"r": (n, 3), "l": (n, 3)}``
    (N, OpenSim's ground frame: x forward, y up, z lateral) and ``grf["mz_r"]``,
    ``grf["mz_l"]``, ``grf["mz"]`` (n,): the moment of each foot's (both feet's) force about
    the lab's z axis, ``p_x f_y − p_y f_x + τ_z``, N m.
    """
    data = Path(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the osim reader's notes on unsupported elements
        model = read_osim(data / "subject01.osim")
    ref = run_id_setup(data / "subject01_Setup_ID.xml", write=False, model=model)
    mot = read_mot(data / "subject01_walk_grf.mot")
    cols = list(mot.columns)
    values = np.asarray(mot.values, float)
    grf = {side: values[:, [cols.index(f"{p}v{a}") for a in "xyz"]] for side, p in FEET.items()}
    for side, p in FEET.items():
        grf[f"mz_{side}"] = (
            values[:, cols.index(f"{p}px")] * values[:, cols.index(f"{p}vy")]
            - values[:, cols.index(f"{p}py")] * values[:, cols.index(f"{p}vx")]
            + values[:, cols.index(f"{p.replace('force', 'torque')}z")]
        )
    grf["mz"] = grf["mz_r"] + grf["mz_l"]
    return model, ref, np.asarray(mot.time, float), grf


def contact_events(t, fy, threshold=THRESHOLD) -> dict:
    """Strikes and lift-offs of a vertical force series: ``{"on": [...], "off": [...]}``, s.

    An event is the linearly interpolated crossing of `threshold` (N).
    """
    fy = np.asarray(fy, float)
    t = np.asarray(t, float)
    above = fy > threshold
    out = {"on": [], "off": []}
    for k in np.flatnonzero(above[1:] != above[:-1]):
        a, b = fy[k] - threshold, fy[k + 1] - threshold
        tc = t[k] + (t[k + 1] - t[k]) * a / (a - b)
        out["on" if above[k + 1] else "off"].append(float(tc))
    return out


def _foot_forces(phase, q, qd) -> dict:
    out = phase.contact_outputs(np.vstack([q.T, qd.T]))
    names = [c.name for c in phase.smooth_contacts]
    F = out["F"]
    return {side: F[:, [i for i, n in enumerate(names) if n.endswith(f"_{side}")], :].sum(axis=1)
            for side in FEET}  # fmt: skip


def belt_speed(model, ref, t_grf, grf) -> float:
    """Speed of the ground under the stance feet, m/s (the trial's pelvis stays near x = 0.6 m).

    The median forward velocity of each foot's six sphere contact points at the
    frames where that foot carries more than half the body weight: a foot
    that stands on a treadmill belt moves backwards with it (the sign is
    returned positive, the walking speed relative to the belt).
    """
    phase = SmoothContactPhase(model, smooth_contacts=opensim_foot_spheres(model),
                               nodes=3, duration=0.1)  # fmt: skip
    P = phase.contact_outputs(np.vstack([ref.q.T, ref.qd.T]))["P"]
    names = [c.name for c in phase.smooth_contacts]
    bw = model.total_mass * 9.80665
    v = []
    for side in FEET:
        cols = [i for i, n in enumerate(names) if n.endswith(f"_{side}")]
        vx = np.gradient(P[:, cols, 0].mean(axis=1), ref.time)
        loaded = np.interp(ref.time, t_grf, grf[side][:, 1]) > 0.5 * bw
        v.append(vx[loaded])
    return -float(np.median(np.concatenate(v)))


def belt_frame(model, ref, speed):
    """``(q, qd)`` of the trial seen from the belt: ``pelvis_tx + speed t`` (a Galilean shift).

    The forces are the same in both frames; the contact law's slip is the
    feet's velocity relative to the ground they stand on.
    """
    i = model.coordinate_names.index("pelvis_tx")
    q, qd = np.array(ref.q, float), np.array(ref.qd, float)
    q[:, i] += speed * (ref.time - ref.time[0])
    qd[:, i] += speed
    return q, qd


def marker_rms(model, t, q, speed, t_shift, data=DATA) -> float:
    """RMS distance (m) of the model's markers at poses `q` (belt frame) from the measured ones.

    The poses are shifted back into the lab (``x − speed (t − t_shift)``) and
    compared with ``subject01_walk.trc`` at the times `t` (linear
    interpolation) over every marker the model and the file share and the file
    has at those times. The model moves in the sagittal plane, so out-of-plane
    marker offsets count too: compare with the same figure at the IK poses.
    """
    from ahbm.io.trc import read_trc
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.kinematics.marker_model import model_markers

    trial = read_trc(Path(data) / "subject01_walk.trc")
    mm = model_markers(model)
    labels = list(trial.point_labels)
    common = [n for n in mm.names if n in labels]
    pts = np.asarray(trial.points, float)[:, [labels.index(n) for n in common], :]
    ref = np.stack([np.stack([np.interp(t, trial.time, pts[:, j, a]) for a in range(3)], -1)
                    for j in range(len(common))], axis=1)  # fmt: skip
    names = list(mm.names)
    sel = [names.index(n) for n in common]
    bidx = [model.body_index(mm.bodies[i]) for i in sel]
    local = np.asarray(mm.local, float)[sel]
    kin = forward_kinematics(model, q)
    R, p = kin.rotations[:, bidx], kin.positions[:, bidx]
    pos = np.einsum("nkij,kj->nki", R, local) + p
    pos[..., 0] -= speed * (np.asarray(t) - t_shift)[:, None]
    d = np.linalg.norm(pos - ref, axis=-1)
    return float(np.sqrt(np.nanmean(d**2)))


def ground_height(model, q, qd, target_fy, *, lo=-0.04, hi=0.04, steps=30) -> float:
    """Floor height (m, along y) at which the spheres carry `target_fy` (N, mean) at poses `q`.

    Raising the floor by ``h`` is lowering the pelvis by ``h`` (``pelvis_ty``
    is a translation along the world's y), so one contact function serves every
    height; bisection on the monotone mean vertical force.
    """
    phase = SmoothContactPhase(model, smooth_contacts=opensim_foot_spheres(model),
                               nodes=3, duration=0.1)  # fmt: skip
    iy = model.coordinate_names.index("pelvis_ty")

    def mean_fy(h):
        qs = np.array(q, float)
        qs[:, iy] -= h
        f = _foot_forces(phase, qs, qd)
        return float(np.mean(f["r"][:, 1] + f["l"][:, 1]))

    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mean_fy(mid) < target_fy else (lo, mid)
    return 0.5 * (lo + hi)


def tracking_problem(model, ref, q, qd, t_grf, grf, t0, t1, *, nodes, height,
                     w_q=2500.0, w_f=400.0, w_m=400.0, w_r=1.0, w_tau=1.0, w_a=1e-3,
                     speed=0.0):  # fmt: skip
    """The phase reconstructing the window [t0, t1] (times of the trial), and its guess."""
    bw = model.total_mass * 9.80665
    names = list(model.coordinate_names)
    spline = DesiredTrajectory(ref.time - t0, q, qd=qd)
    T = t1 - t0
    t_dense = np.linspace(0.0, T, int(round(T * 1000)) + 1)
    keep = (t_grf >= t0 - 0.01) & (t_grf <= t1 + 0.01)
    F_meas = grf["r"][keep] + grf["l"][keep]
    F_meas[:, 2] = 0.0  # the sagittal model produces no lateral force: not tracked
    # Effort's scale is one per coordinate of the model (only the named ones count)
    scale = np.array([bw * 1.0 * 0.02 if n == "pelvis_tilt" else bw * 0.02 for n in names])
    joints = [n for n in names if n not in RESIDUALS]
    nv = model.nv
    spheres = opensim_foot_spheres(model, height=height)

    def accel(x, u, p, t):  # smoothness: the squared accelerations (controls, implicit)
        return sum(u[-nv + i] ** 2 for i in range(nv))

    # each foot's measured forward and vertical force and sagittal moment about the belt frame's
    # origin (the centre of pressure's progression): the total alone leaves the feet free to
    # push against each other in double support. Linear interpolation written as ramps
    # F(t) = F_0 + Σ_k Δs_k max(0, t − t_k) (plain arithmetic on the node times).
    tk = t_grf[keep][::5]
    series = []
    for side in FEET:
        f = grf[side][keep][::5]
        mz = grf[f"mz_{side}"][keep][::5] + speed * (tk - ref.time[0]) * f[:, 1]
        series.append(np.column_stack([f[:, 0] / bw, f[:, 1] / bw, mz / (0.01 * bw)]))
    table = np.hstack(series)  # (samples, 6): per foot Fx, Fy (BW), Mz (BW cm)
    kinks = np.diff(np.diff(table, axis=0) / np.diff(tk)[:, None], axis=0,
                    prepend=np.zeros((1, 6)))  # fmt: skip
    ca = require_casadi()
    foot_cols = [[i for i, c in enumerate(spheres) if c.name.endswith(f"_{s}")] for s in FEET]

    def foot_error(x, u, p, t):  # per foot: forces in BW, moment in BW cm
        _, F, P, _, _ = phase.smooth_contact_function(x[: model.nq], x[model.nq :])
        meas = ca.DM(table[0]) + sum(
            ca.DM(kinks[k]) * ca.fmax(0.0, t - (tk[k] - t0)) for k in range(kinks.shape[0])
        )
        err = 0
        for j, cols in enumerate(foot_cols):
            fx = sum(F[0, c] for c in cols)
            fy = sum(F[1, c] for c in cols)
            mz = sum(P[0, c] * F[1, c] - P[1, c] * F[0, c] for c in cols)
            model_j = ca.vertcat(fx / bw, fy / bw, mz / (0.01 * bw))
            err = err + ca.sumsqr(model_j - meas[3 * j : 3 * j + 3])
        return err

    objectives = [
        TrackCoordinates(t_dense, spline(t_dense)[0], weight=w_q),
        TrackGRF(t_grf[keep] - t0, F_meas, weight=w_f / bw**2),
        Effort(weight=w_r, coordinates=RESIDUALS, scale=scale, name="residuals"),
        Effort(weight=w_tau, coordinates=tuple(joints), scale=100.0, name="joint effort"),
        CustomCost(accel, weight=w_a, name="qdd"),
    ]
    if w_m:
        objectives.append(CustomCost(foot_error, weight=w_m, name="per-foot GRF"))
    phase = SmoothContactPhase(
        model, smooth_contacts=spheres, nodes=nodes,
        duration=T, dynamics="implicit", q_bounds=(-10.0, 10.0), qd_bounds=(-20.0, 20.0),
        qdd_bounds=(-500.0, 500.0), tau_bounds=(-2000.0, 2000.0), objectives=objectives,
        name="window",
    )  # fmt: skip
    tg = np.linspace(0.0, T, nodes)
    qg, qdg = spline(tg)[:2]
    i_ref = np.clip(np.searchsorted(ref.time, tg + t0), 0, ref.time.size - 1)
    guess = {"t": tg, "q": qg, "qd": qdg, "tau": ref.tau[i_ref]}
    return phase, guess


def run(out_dir=None, *, quick: bool = False, window=(0.55, 0.95), nodes=None,
        verbose: bool = False, max_iter: int = 1000, data=DATA, **weights) -> dict:  # fmt: skip
    """Solve the reconstruction, optionally save its figure, return the numbers."""
    model, ref, t_grf, grf = load_trial(data)
    t0, t1 = window
    nodes = nodes or (17 if quick else 41)
    bw = model.total_mass * 9.80665
    # contact phases of the measured forces
    measured_events = {s: contact_events(t_grf, grf[s][:, 1]) for s in FEET}
    in_win = (t_grf >= t0) & (t_grf <= t1)
    target = float(np.mean(grf["r"][in_win, 1] + grf["l"][in_win, 1]))
    speed = belt_speed(model, ref, t_grf, grf)
    q_belt, qd_belt = belt_frame(model, ref, speed)
    sel = (ref.time >= t0 - 1e-9) & (ref.time <= t1 + 1e-9)
    height = ground_height(model, q_belt[sel], qd_belt[sel], target)
    start = time.perf_counter()
    phase, guess = tracking_problem(model, ref, q_belt, qd_belt, t_grf, grf, t0, t1, nodes=nodes,
                                    height=height, speed=speed, **weights)  # fmt: skip
    res = solve(phase, method="trapezoidal", guess=guess, verbose=verbose, max_iter=max_iter,
                tol=1e-6)  # fmt: skip
    total = time.perf_counter() - start
    t = res.t + t0
    names = list(model.coordinate_names)
    f_model = _foot_forces(phase, res.q, res.qd)
    f_meas = {s: np.column_stack([np.interp(t, t_grf, grf[s][:, a]) for a in range(3)])
              for s in FEET}  # fmt: skip
    co = phase.contact_outputs(np.vstack([res.q.T, res.qd.T]))
    mz_model = np.sum(co["P"][..., 0] * co["F"][..., 1] - co["P"][..., 1] * co["F"][..., 0], axis=1)
    fy_all = grf["r"][:, 1] + grf["l"][:, 1]
    mz_meas = np.interp(t, t_grf, grf["mz"] + speed * (t_grf - ref.time[0]) * fy_all)
    tot_model = f_model["r"] + f_model["l"]
    tot_meas = f_meas["r"] + f_meas["l"]
    err = tot_model - tot_meas
    q_ref = np.column_stack([np.interp(t, ref.time, q_belt[:, i]) for i in range(model.nq)])
    tracking = {}
    for i, n in enumerate(names):
        e = np.sqrt(np.mean((res.q[:, i] - q_ref[:, i]) ** 2))
        tracking[n] = float(100 * e if n in ("pelvis_tx", "pelvis_ty") else np.degrees(e))
    moments = {}
    for i, n in enumerate(names):
        if n in RESIDUALS:
            continue
        tau_id = np.interp(t, ref.time, ref.tau[:, i])
        span = float(np.ptp(ref.tau[:, i]))
        moments[n] = float(np.sqrt(np.mean((res.tau[:, i] - tau_id) ** 2)) / span)
    residual_peak = {n: float(np.abs(res.tau[:, names.index(n)]).max()) for n in RESIDUALS}
    model_events = {s: contact_events(t, f_model[s][:, 1]) for s in FEET}
    numbers = {
        "success": res.success, "status": res.status, "iterations": res.iterations,
        "build_time": res.build_time, "solve_time": res.wall_time, "total_time": total,
        "nodes": nodes, "window": (t0, t1), "ground_height": height, "belt_speed": speed,
        "body_weight": bw,
        "tracking_deg": {n: v for n, v in tracking.items() if n not in ("pelvis_tx", "pelvis_ty")},
        "tracking_pelvis_cm": {n: tracking[n] for n in ("pelvis_tx", "pelvis_ty")},
        "grf_rms": {a: float(np.sqrt(np.mean(err[:, k] ** 2))) for k, a in enumerate("xy")},
        "marker_rms": marker_rms(model, t, res.q, speed, ref.time[0], data),
        "marker_rms_ik": marker_rms(model, t, q_ref, speed, ref.time[0], data),
        "grf_moment_rms": float(np.sqrt(np.mean((mz_model - mz_meas) ** 2))),
        "grf_lateral_measured_rms": float(np.sqrt(np.mean(tot_meas[:, 2] ** 2))),
        "residual_peak": residual_peak,
        "residual_peak_bw": {n: v / bw for n, v in residual_peak.items() if n != "pelvis_tilt"},
        "moments_rms_of_range": moments,
        "measured_events": {s: {k: [x for x in v if t0 <= x <= t1] for k, v in ev.items()}
                            for s, ev in measured_events.items()},  # fmt: skip
        "model_events": model_events,
        "t": t, "foot_forces": f_model, "measured_foot_forces": f_meas,
        "result": res, "phase": phase, "model": model,
    }  # fmt: skip
    if out_dir is not None:
        _figure(numbers, grf, t_grf, Path(out_dir))
    return numbers


def _figure(n, grf, t_grf, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    out.mkdir(parents=True, exist_ok=True)
    t0, t1 = n["window"]
    sel = (t_grf >= t0) & (t_grf <= t1)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, k, label in ((axes[0], 1, "vertical"), (axes[1], 0, "forward")):
        for s, c in (("r", "tab:red"), ("l", "tab:blue")):
            ax.plot(t_grf[sel], grf[s][sel, k], color=c, lw=3, alpha=0.3, label=f"measured {s}")
            ax.plot(n["t"], n["foot_forces"][s][:, k], "o-", color=c, ms=3, lw=1,
                    label=f"contact spheres {s}")  # fmt: skip
        ax.set_xlabel("time in the trial (s)")
        ax.set_ylabel(f"{label} ground reaction (N)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out / "tracking_walk_3d.png", dpi=90)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=None)
    parser.add_argument("--quick", action="store_true", help="17 nodes instead of 41")
    args = parser.parse_args(argv)
    n = run(args.out, quick=args.quick, verbose=False)
    print(f"{n['status']}: {n['iterations']} iterations, build {n['build_time']:.1f} s, "
          f"solve {n['solve_time']:.1f} s, {n['nodes']} nodes, window {n['window']} s; "
          f"floor at y = {1000 * n['ground_height']:.1f} mm, "
          f"belt {n['belt_speed']:.3f} m/s")  # fmt: skip
    print("tracking RMS (deg):", {k: round(v, 2) for k, v in n["tracking_deg"].items()})
    print(
        f"markers: {100 * n['marker_rms']:.2f} cm RMS "
        f"(the inverse kinematics' own poses: {100 * n['marker_rms_ik']:.2f} cm)"
    )
    print("pelvis translation RMS (cm):",
          {k: round(v, 2) for k, v in n["tracking_pelvis_cm"].items()})  # fmt: skip
    bw = n["body_weight"]
    print(
        "GRF RMS: "
        + ", ".join(f"{a} {v:.1f} N ({100 * v / bw:.1f} % BW)" for a, v in n["grf_rms"].items())
        + f"; measured lateral force (not producible) RMS {n['grf_lateral_measured_rms']:.1f} N"
    )
    print(
        f"sagittal moment of the GRF: RMS {n['grf_moment_rms']:.1f} N m "
        f"({100 * n['grf_moment_rms'] / bw:.2f} cm of centre of pressure under one BW)"
    )
    print("peak residuals:", {k: round(v, 1) for k, v in n["residual_peak"].items()},
          "(N, N·m); forces in % BW:",
          {k: round(100 * v, 2) for k, v in n["residual_peak_bw"].items()})  # fmt: skip
    print("joint moments vs inverse dynamics (RMS, % of range):",
          {k: round(100 * v, 1) for k, v in n["moments_rms_of_range"].items()})  # fmt: skip
    print("contact events, measured:", n["measured_events"])
    print("contact events, model:   ", n["model_events"])
    return 0 if n["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
