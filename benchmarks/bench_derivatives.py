"""Benchmark ahbm's analytic RNEA derivatives against Pinocchio on the 34-DOF humanoid.

The model and its Pinocchio twin are those of ``bench_dynamics.py`` (HeiMan
structure: free pelvis, Euler hips/ankles/lumbar/shoulders/head, revolute
knees and elbows; 19 bodies, nv = 34).

Measured in the same run, wall clock (``time.perf_counter``), best of
several repeats:

1. ``ahbm.dynamics.rnea_derivatives`` over all frames (one call; the
   kernel takes the frames in blocks of 16, SIMD over the frames of a block,
   and runs over ``NUMBA_NUM_THREADS`` threads from 256 frames on; its
   output includes the mass matrices and τ) against a Python loop of
   ``pin.computeRNEADerivatives`` (target: ahbm ≥ 3× faster);
2. ahbm on one thread (the node-coordinate wrapper with the thread
   threshold raised), to separate what the second thread adds;
3. ``ahbm.dynamics.aba_derivatives`` over the frames against a loop of
   ``pin.computeABADerivatives``.

The machine may be shared: the load average is printed with the times.
Run: ``python benchmarks/bench_derivatives.py [--frames 10000]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import timeit

import numba
import numpy as np
import pinocchio as pin
from bench_dynamics import humanoid34, to_pinocchio

from ahbm._engine import kernels as _kernels
from ahbm._engine.kernels import compile_kernels
from ahbm.dynamics import aba_derivatives, rnea_derivatives


def best(stmt, repeat):
    return min(timeit.repeat(stmt, number=1, repeat=repeat, timer=time.perf_counter))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    model = humanoid34()
    pm = to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    n = args.frames
    q = rng.normal(size=(n, model.nq)) * 0.5
    quat = rng.normal(size=(n, 4))
    q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    print(f"ahbm vs Pinocchio {pin.__version__} - {platform.processor() or platform.machine()}")
    print(f"model: {model.n_bodies} bodies, nq={model.nq}, nv={model.nv}; {n} frames")
    compile_kernels(("rnea_derivatives", "rnea_derivatives_block", "aba", "aba_single", "crba"))
    # sanity check: the blocks of the non-floating coordinates do not depend on the
    # free joint's velocity convention (ahbm: parent-frame ṙ, Pinocchio: body frame)
    d = rnea_derivatives(model, q[:5], qd[:5], qdd[:5])
    err = 0.0
    for k in range(5):
        R = pin.Quaternion(q[k, 6], *q[k, 3:6]).toRotationMatrix()
        T = np.eye(model.nv)
        T[:3, :3] = R.T
        bias = np.zeros(model.nv)
        bias[:3] = -np.cross(qd[k, 3:6], R.T @ qd[k, :3])
        K, C, _ = pin.computeRNEADerivatives(pm, pd, q[k], T @ qd[k], T @ qdd[k] + bias)
        for mine, ref in ((d.dtau_dq[k], K), (d.dtau_dqd[k], C)):
            ref = np.array(ref)[6:, 6:]
            err = max(err, np.abs(mine[6:, 6:] - ref).max() / np.abs(ref).max())
    print(f"max relative difference of the joint blocks, ahbm vs pin (5 frames): {err:.1e}")
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")

    def ahbm_batch():
        rnea_derivatives(model, q, qd, qdd)

    def ahbm_one_thread():
        p = _kernels.plan(model)
        _kernels._rnea_derivatives_theta(model, p, q, qd, qdd, None, False)

    def pin_loop():
        for k in range(n):
            pin.computeRNEADerivatives(pm, pd, q[k], qd[k], qdd[k])

    t_a = best(ahbm_batch, args.repeat + 2)
    t_p = best(pin_loop, args.repeat)
    print(
        f"RNEA derivatives, {n} frames: ahbm {t_a * 1e3:8.1f} ms | pin loop {t_p * 1e3:8.1f} ms "
        f"| speed-up = {t_p / t_a:5.2f}x ({numba.config.NUMBA_NUM_THREADS} threads)"
    )
    saved = _kernels._DERIV_PARALLEL_MIN
    _kernels._DERIV_PARALLEL_MIN = 10**12
    try:
        t_1 = best(ahbm_one_thread, args.repeat)
    finally:
        _kernels._DERIV_PARALLEL_MIN = saved
    print(
        f"  one thread, derivative kernel only: {t_1 * 1e3:8.1f} ms "
        f"({t_1 / n * 1e6:.1f} us/frame; pin {t_p / n * 1e6:.1f} us/frame with its Python call)"
    )
    m = min(n, 2000)

    def ahbm_aba():
        aba_derivatives(model, q[:m], qd[:m], qdd[:m])

    def pin_aba():
        for k in range(m):
            pin.computeABADerivatives(pm, pd, q[k], qd[k], qdd[k])

    t_a = best(ahbm_aba, args.repeat)
    t_p = best(pin_aba, args.repeat)
    print(
        f"ABA derivatives, {m} frames: ahbm {t_a * 1e3:8.1f} ms | pin loop {t_p * 1e3:8.1f} ms "
        f"| speed-up = {t_p / t_a:5.2f}x"
    )
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()
