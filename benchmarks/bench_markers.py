"""Benchmark marker kinematics: segment poses, JCS angles and inverse kinematics.

Measured, in the same run, against scipy as the peer:

1. ``fit_segment_pose`` (one batched-SVD call) on N frames of a 4-marker
   cluster with noise, against a Python loop of ``Rotation.align_vectors``
   per frame (same weighted least-squares problem).
2. ``grood_suntay_angles`` on N frames against scipy's
   ``Rotation.from_matrix(R_P^T R_D).as_euler("ZXY")`` (the equivalent Cardan
   sequence), both vectorized.
3. ``fit_markers`` (Levenberg–Marquardt, analytic Jacobians, warm start) on a
   12-DOF pelvis + leg model with 13 markers, against a per-frame loop of
   ``scipy.optimize.least_squares(method="lm")`` given the same residuals, the
   same analytic Jacobian and the same warm start.

Times are CPU times (``time.process_time``), best of several repeats. Run:
``python benchmarks/bench_markers.py [--frames 30000] [--ik-frames 200]``.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from ahbm.kinematics import fit_markers, fit_segment_pose, grood_suntay_angles
from ahbm.kinematics.marker_model import marker_jacobians
from ahbm.testing import marker_leg_model as leg_model


def best_cpu(fn, repeat=3):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return min(times), out


def gait_like_q(n: int) -> np.ndarray:
    t = np.linspace(0, n / 100.0, n)
    w = 2 * np.pi
    q = np.zeros((n, 12))
    q[:, 0] = 1.2 * t
    q[:, 1] = 0.9 + 0.02 * np.sin(2 * w * t)
    q[:, 3:6] = 0.05 * np.sin(w * t[:, None] + [0, 1, 2])
    q[:, 6] = 0.4 * np.sin(w * t) + 0.2
    q[:, 7] = 0.08 * np.sin(w * t + 1)
    q[:, 8] = 0.1 * np.sin(w * t + 2)
    q[:, 9] = -0.6 * (1 + np.sin(w * t)) / 2 - 0.05
    q[:, 10] = 0.2 * np.sin(w * t)
    q[:, 11] = 0.1 * np.sin(w * t + 0.5)
    return q


def bench_segment_pose(n: int, rng) -> None:
    local = np.array([[0.08, 0.01, 0.02], [-0.03, 0.09, 0.0], [0.0, -0.02, 0.11], [0.05, 0.05, 0]])
    R = Rotation.random(n, random_state=1).as_matrix()
    X = np.einsum("nij,mj->nmi", R, local) + rng.normal(size=(n, 1, 3))
    X += rng.normal(scale=0.002, size=X.shape)
    t_ahbm, pose = best_cpu(lambda: fit_segment_pose(X, local))
    lc = local - local.mean(0)

    def peer():
        out = np.empty((n, 3, 3))
        for k in range(n):
            out[k] = Rotation.align_vectors(X[k] - X[k].mean(0), lc)[0].as_matrix()
        return out

    t_peer, Rp = best_cpu(peer, repeat=1)
    err = np.abs(pose.R - Rp).max()
    print(
        f"fit_segment_pose, {n} frames x 4 markers: ahbm {t_ahbm * 1e3:.1f} ms, "
        f"scipy align_vectors loop {t_peer * 1e3:.1f} ms, ratio peer/ahbm "
        f"{t_peer / t_ahbm:.1f}x (max |dR| {err:.1e})"
    )


def bench_jcs(n: int) -> None:
    Rp = Rotation.random(n, random_state=2).as_matrix()
    Rd = Rotation.random(n, random_state=3).as_matrix()
    t_ahbm, a = best_cpu(lambda: grood_suntay_angles(Rp, Rd, joint=None))

    def peer():
        return Rotation.from_matrix(np.swapaxes(Rp, 1, 2) @ Rd).as_euler("ZXY")

    t_peer, b = best_cpu(peer)
    err = np.abs(np.angle(np.exp(1j * (a - b)))).max()
    print(
        f"grood_suntay_angles, {n} frames: ahbm {t_ahbm * 1e3:.1f} ms, scipy as_euler "
        f"{t_peer * 1e3:.1f} ms, ratio peer/ahbm {t_peer / t_ahbm:.2f}x (max diff {err:.1e} rad)"
    )


def bench_ik(n: int, rng) -> None:
    m = leg_model()
    q = gait_like_q(n)
    X, _ = marker_jacobians(m, q)
    X = X + rng.normal(scale=0.001, size=X.shape)
    for block in (1, 10):
        t_ahbm, res = best_cpu(lambda b=block: fit_markers(m, X, q0=q[0], block_size=b), repeat=1)
        err = np.abs(res.q - q).max()
        print(
            f"fit_markers, {n} frames, block_size={block}: ahbm {t_ahbm:.2f} s "
            f"({t_ahbm / n * 1e3:.1f} ms/frame, {res.iterations.mean():.1f} iterations/frame, "
            f"max |q - q_true| {err:.1e})"
        )
        if block == 1:
            t_block1, q_ahbm = t_ahbm, res.q

    def peer():
        out = np.empty_like(q)
        qk = q[0].copy()
        for k in range(n):

            def fun(x, k=k):
                return (marker_jacobians(m, x)[0] - X[k]).ravel()

            def jac(x):
                return marker_jacobians(m, x)[1].reshape(-1, m.nv)

            qk = least_squares(fun, qk, jac=jac, method="lm", xtol=1e-10, ftol=1e-10).x
            out[k] = qk
        return out

    t_peer, q_peer = best_cpu(peer, repeat=1)
    print(
        f"scipy least_squares(lm) per frame, same Jacobian and warm start: {t_peer:.2f} s; "
        f"ratio peer/ahbm(block 1) {t_peer / t_block1:.2f}x; "
        f"max |q_ahbm - q_scipy| {np.abs(q_ahbm - q_peer).max():.1e}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=30000)
    ap.add_argument("--ik-frames", type=int, default=200)
    args = ap.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    rng = np.random.default_rng(0)
    bench_segment_pose(args.frames, rng)
    bench_jcs(args.frames)
    bench_ik(args.ik_frames, rng)


if __name__ == "__main__":
    main()
