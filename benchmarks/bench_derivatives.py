"""Benchmark ahbm's analytic RNEA derivatives against Pinocchio on the 34-DOF humanoid.

The model and its Pinocchio twin are those of ``bench_dynamics.py`` (HeiMan
structure: free pelvis, Euler hips/ankles/lumbar/shoulders/head, revolute
knees and elbows; 19 bodies, nv = 34).

Measured in the same run, wall clock (``time.perf_counter``), best of
several repeats, ``ahbm.dynamics.rnea_derivatives`` over all frames (one
call; the kernel takes the frames in blocks of 16, SIMD over the frames of a
block, and runs over ``NUMBA_NUM_THREADS`` threads from 256 frames on; it
returns τ, ∂τ/∂q, ∂τ/∂q̇ and M) against a Python loop of
``pin.computeRNEADerivatives`` (target: ahbm ≥ 3× faster), three ways:

(a) as the comparison was first made: ahbm allocates new output arrays
    (10,000 frames: 277 MB written into fresh memory) while the Pinocchio
    loop keeps no result (its Data buffers are overwritten every frame);
(b) like for like, both keep every frame's results in memory allocated and
    written once before the timing: ahbm with ``out=`` (the result of an
    earlier call) against the loop copying ``dtau_dq``, ``dtau_dv``, ``M``
    (the three arrays that ``computeRNEADerivatives`` returns, which are views
    of its Data) and ``data.tau`` into preallocated (N, nv, nv) and (N, nv)
    arrays. Pinocchio's ``data.M`` is copied as it is given; the script
    prints whether its lower triangle equals the transposed upper one
    (Pinocchio 4.1: yes, the whole matrix is filled);
(c) (a) and (b) with ahbm on one thread (the thread threshold raised), to
    separate what the second thread adds; and the driver alone without the
    public wrapper's checks.

Then ``ahbm.dynamics.aba_derivatives`` over 2,000 frames against a loop of
``pin.computeABADerivatives``, as (a) and (b) (``ddq_dq``, ``ddq_dv``,
``Minv``, ``data.ddq`` copied).

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

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import node_plan as _node_plan
from ahbm._engine.compilation import compile_kernels
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
    # what Pinocchio returns: views of its Data (overwritten by the next call), data.M full
    K, C, Mp = pin.computeRNEADerivatives(pm, pd, q[0], qd[0], qdd[0])
    alias = all(np.shares_memory(a, b) for a, b in ((K, pd.dtau_dq), (C, pd.dtau_dv), (Mp, pd.M)))
    sym = np.abs(np.tril(pd.M, -1) - np.triu(pd.M, 1).T).max()
    print(
        f"pin.computeRNEADerivatives returns views of data.dtau_dq, dtau_dv, M: {alias}; "
        f"data.M lower triangle - upper transposed: {sym:.1e} (copied as given)"
    )
    nv = model.nv
    # (b): every result of every frame kept, in memory allocated and written once before timing
    out = rnea_derivatives(model, q, qd, qdd)
    keep = [np.full((n, nv, nv), 0.0) for _ in range(3)] + [np.full((n, nv), 0.0)]

    def ahbm_fresh():
        rnea_derivatives(model, q, qd, qdd)

    def ahbm_out():
        rnea_derivatives(model, q, qd, qdd, out=out)

    def ahbm_kernel_only():
        p = _node_plan.plan(model)
        _dispatch._rnea_derivatives_theta(model, p, q, qd, qdd, None, False)

    def pin_loop():
        for k in range(n):
            pin.computeRNEADerivatives(pm, pd, q[k], qd[k], qdd[k])

    def pin_keep():
        dq, dv, M, tau = keep
        for k in range(n):
            dq[k], dv[k], M[k] = pin.computeRNEADerivatives(pm, pd, q[k], qd[k], qdd[k])
            tau[k] = pd.tau

    pin_keep()  # same values as ahbm's (joint blocks; the free joint's convention differs)
    err = np.abs(keep[2] - out.mass_matrix)[:, 6:, 6:].max() / np.abs(keep[2]).max()
    print(f"  kept pin M vs ahbm M (joint block, all frames): {err:.1e}")

    def report(label, t_a, t_p, threads, frames=n):
        print(
            f"  {label}: ahbm {t_a * 1e3:7.1f} ms ({t_a / frames * 1e6:4.1f} us/frame) | pin loop "
            f"{t_p * 1e3:7.1f} ms ({t_p / frames * 1e6:4.1f} us/frame) | "
            f"speed-up = {t_p / t_a:4.2f}x "
            f"({threads}; load {os.getloadavg()[0]:.2f})"
        )

    nt = numba.config.NUMBA_NUM_THREADS
    print(f"RNEA derivatives (tau, dtau/dq, dtau/dqd, M), {n} frames:")
    t_pn = best(pin_loop, args.repeat)
    t_pk = best(pin_keep, args.repeat)
    t_a = best(ahbm_fresh, args.repeat + 2)
    report("(a) ahbm new outputs vs pin keeping nothing", t_a, t_pn, f"{nt} threads")
    t_a = best(ahbm_out, args.repeat + 2)
    report("(b) both keep all frames, preallocated     ", t_a, t_pk, f"{nt} threads")
    saved = _dispatch._DERIV_PARALLEL_MIN
    _dispatch._DERIV_PARALLEL_MIN = 10**12
    try:
        t_1a = best(ahbm_fresh, args.repeat)
        t_1b = best(ahbm_out, args.repeat)
        t_1k = best(ahbm_kernel_only, args.repeat)
    finally:
        _dispatch._DERIV_PARALLEL_MIN = saved
    report("(c) one thread, as (a)                     ", t_1a, t_pn, "1 thread")
    report("(c) one thread, as (b)                     ", t_1b, t_pk, "1 thread")
    print(
        f"  one thread, driver with new outputs, no wrapper: {t_1k * 1e3:7.1f} ms "
        f"({t_1k / n * 1e6:.1f} us/frame)"
    )
    m = min(n, 2000)
    keep.clear()  # frees the 10k-frame arrays before the ABA part
    out = None
    aout = aba_derivatives(model, q[:m], qd[:m], qdd[:m])
    akeep = [np.full((m, nv, nv), 0.0) for _ in range(3)] + [np.full((m, nv), 0.0)]

    def ahbm_aba():
        aba_derivatives(model, q[:m], qd[:m], qdd[:m])

    def ahbm_aba_out():
        aba_derivatives(model, q[:m], qd[:m], qdd[:m], out=aout)

    def pin_aba():
        for k in range(m):
            pin.computeABADerivatives(pm, pd, q[k], qd[k], qdd[k])

    def pin_aba_keep():
        dq, dv, Minv, qdd_k = akeep
        for k in range(m):
            dq[k], dv[k], Minv[k] = pin.computeABADerivatives(pm, pd, q[k], qd[k], qdd[k])
            qdd_k[k] = pd.ddq

    label = "ABA derivatives (qdd, dqdd/dq, dqdd/dqd, Minv)"
    print(f"{label}, {m} frames (pin's data.Minv is full here; copied as given):")
    t_p = best(pin_aba, args.repeat)
    t_a = best(ahbm_aba, args.repeat)
    report("(a) ahbm new outputs vs pin keeping nothing", t_a, t_p, f"{nt} threads", m)
    t_p = best(pin_aba_keep, args.repeat)
    t_a = best(ahbm_aba_out, args.repeat)
    report("(b) both keep all frames, preallocated     ", t_a, t_p, f"{nt} threads", m)
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()
