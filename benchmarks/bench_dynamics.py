"""Benchmark ahbm's multibody dynamics against Pinocchio on a 34-DOF humanoid.

The humanoid has the HeiMan structure (Felis 2015, §4.3.2): a free-floating
pelvis (6 DOF), hips, ankles, lumbar, shoulders and head with three-axis
Euler joints, knees and elbows with one revolute joint each, and fixed
joints for the upper trunk, claviculas, neck and hands (19 bodies, 34 DOF).
The same tree is built in Pinocchio (Euler joints as chains of three
revolute joints; free joint as JointModelFreeFlyer).

Measured, in the same run:

1. RNEA over 10,000 frames: one vectorized ``ahbm.dynamics.rnea`` call
   against a Python loop calling ``pin.rnea`` per frame (target: ahbm >= 10x
   faster, using both cores: from 2,048 frames the kernel runs over
   ``NUMBA_NUM_THREADS`` threads, default the number of CPUs). This one is
   wall-clock time (``time.perf_counter``): CPU time adds up the threads.
2. ABA over 1,000 frames, the same way (one thread).
3. Single-state RNEA, CRBA and ABA: ahbm call time over Pinocchio call time
   (target: within 2x). An ahbm call includes its input checks and the
   dispatch to the compiled (numba) kernel.

Other times are CPU times (``time.process_time``, robust to other processes
on a shared machine), best of several repeats. Run:
``python benchmarks/bench_dynamics.py [--frames 10000]``.
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

from ahbm._engine.compilation import compile_kernels
from ahbm.dynamics import aba, crba, rnea
from ahbm.kinematics import Model


def humanoid34(height=1.8, mass=75.0) -> Model:
    """HeiMan-structured 34-DOF humanoid (approximate de Leva parameters)."""
    H, M = height, mass
    m = Model("humanoid34")
    euler = {"type": "euler", "sequence": "YXZ"}

    def seg(length, frac, com, r=(0.3, 0.3, 0.12)):
        L = length * H
        mm = frac * M
        return {
            "mass": mm,
            "com": [0.0, 0.0, com * L],
            "inertia": np.diag([(r[1] * L) ** 2 * mm, (r[0] * L) ** 2 * mm, (r[2] * L) ** 2 * mm]),
        }

    m.add_body("pelvis", "ground", {"type": "free"}, **seg(0.0837, 0.1117, 0.39, (0.6, 0.55, 0.59)))
    m.add_body(
        "middle_trunk", "pelvis", euler, position=[0, 0, 0.0837 * H], **seg(0.1238, 0.1633, 0.55)
    )
    m.add_body(
        "upper_trunk",
        "middle_trunk",
        "fixed",
        position=[0, 0, 0.1238 * H],
        **seg(0.098, 0.1596, 0.70),
    )
    m.add_body("neck", "upper_trunk", "fixed", position=[0, 0, 0.098 * H], **seg(0.0638, 0.01, 0.5))
    m.add_body("head", "neck", euler, position=[0, 0, 0.0638 * H], **seg(0.1168, 0.0594, 0.40))
    for side, s in (("r", -1), ("l", 1)):
        m.add_body(
            f"clavicula_{side}", "upper_trunk", "fixed", position=[0, 0, 0.098 * H], mass=0.0
        )
        m.add_body(
            f"upper_arm_{side}",
            f"clavicula_{side}",
            euler,
            position=[0, s * 0.12 * H, 0],
            **seg(0.1618, 0.0271, -0.58),
        )
        m.add_body(
            f"lower_arm_{side}",
            f"upper_arm_{side}",
            {"type": "revolute", "axis": [0, 1, 0]},
            position=[0, 0, -0.1618 * H],
            **seg(0.1545, 0.0162, -0.46),
        )
        m.add_body(
            f"hand_{side}",
            f"lower_arm_{side}",
            "fixed",
            position=[0, 0, -0.1545 * H],
            **seg(0.1079, 0.0061, -0.36),
        )
    for side, s in (("r", -1), ("l", 1)):
        m.add_body(
            f"thigh_{side}",
            "pelvis",
            euler,
            position=[0, s * 0.0461 * H, 0],
            **seg(0.2425, 0.1416, -0.41),
        )
        m.add_body(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "revolute", "axis": [0, 1, 0]},
            position=[0, 0, -0.2425 * H],
            **seg(0.2529, 0.0433, -0.45),
        )
        m.add_body(
            f"foot_{side}",
            f"shank_{side}",
            euler,
            position=[0, 0, -0.2529 * H],
            **seg(0.1462, 0.0137, -0.3),
        )
    assert m.nv == 34, m.nv
    return m


def to_pinocchio(model: Model):
    """The same tree in Pinocchio (free, euler, revolute and fixed joints)."""
    pm = pin.Model()
    pm.gravity.linear = model.gravity
    frames = []
    for b in model.bodies:
        pj, off = (0, pin.SE3.Identity()) if b.parent < 0 else frames[b.parent]
        placement = off * pin.SE3(b.rotation, b.position)
        inertia = pin.Inertia(b.mass, b.com, b.inertia)
        t = b.joint.type
        if t == "fixed":
            pm.appendBodyToJoint(pj, inertia, placement)
            frames.append((pj, placement))
            continue
        if t == "free":
            chain = [pin.JointModelFreeFlyer()]
        elif t == "revolute":
            chain = [pin.JointModelRevoluteUnaligned(b.joint.axis)]
        elif t == "euler":
            chain = [getattr(pin, "JointModelR" + c)() for c in b.joint.sequence]
        else:
            raise ValueError(t)
        for k, jm in enumerate(chain):
            pj = pm.addJoint(pj, jm, placement if k == 0 else pin.SE3.Identity(), f"{b.name}{k}")
        pm.appendBodyToJoint(pj, inertia, pin.SE3.Identity())
        frames.append((pj, pin.SE3.Identity()))
    return pm


def best(stmt, number, repeat=5, timer=time.process_time):
    return min(timeit.repeat(stmt, number=number, repeat=repeat, timer=timer)) / number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000)
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
    # (ahbm's free-joint linear velocity is in the parent frame, Pinocchio's in the
    # body frame; the timing does not depend on the values, so the same arrays are used)
    print(f"ahbm vs Pinocchio {pin.__version__} - {platform.processor() or platform.machine()}")
    print(f"model: {model.n_bodies} bodies, nq={model.nq}, nv={model.nv}")
    # sanity check: same torques (map the free-joint linear velocity: v_pin = Rᵀ ṙ)
    err = 0.0
    tau_a = rnea(model, q[:5], qd[:5], qdd[:5])
    for k in range(5):
        R = pin.Quaternion(q[k, 6], *q[k, 3:6]).toRotationMatrix()
        T = np.eye(model.nv)
        T[:3, :3] = R.T
        bias = np.zeros(model.nv)
        bias[:3] = -np.cross(qd[k, 3:6], R.T @ qd[k, :3])
        ref = T.T @ pin.rnea(pm, pd, q[k], T @ qd[k], T @ qdd[k] + bias)
        err = max(err, np.abs(tau_a[k] - ref).max() / np.abs(ref).max())
    print(f"max relative difference ahbm vs pin RNEA on 5 frames: {err:.1e}")

    # compile the kernels (numba, cached on disk after the first run) before timing
    compile_kernels()
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")

    def ahbm_batch():
        rnea(model, q, qd, qdd)

    def pin_loop():
        for k in range(n):
            pin.rnea(pm, pd, q[k], qd[k], qdd[k])

    t_a = best(ahbm_batch, 1, repeat=7, timer=time.perf_counter)
    t_p = best(pin_loop, 1, repeat=3, timer=time.perf_counter)
    print(
        f"RNEA, {n} frames: ahbm batch {t_a * 1e3:8.2f} ms | pin loop {t_p * 1e3:8.2f} ms "
        f"| speed-up ahbm/pin loop = {t_p / t_a:5.2f}x (wall clock, "
        f"{numba.config.NUMBA_NUM_THREADS} threads)"
    )
    m = min(n, 1000)

    def ahbm_aba():
        aba(model, q[:m], qd[:m], qdd[:m])

    def pin_aba():
        for k in range(m):
            pin.aba(pm, pd, q[k], qd[k], qdd[k])

    t_a = best(ahbm_aba, 1, repeat=3)
    t_p = best(pin_aba, 1, repeat=3)
    print(
        f"ABA, {m} frames:   ahbm batch {t_a * 1e3:8.2f} ms | pin loop {t_p * 1e3:8.2f} ms "
        f"| speed-up ahbm/pin loop = {t_p / t_a:5.2f}x"
    )
    q0, qd0, tau0 = q[0], qd[0], qdd[0]
    for name, fa, fp in [
        ("ABA ", lambda: aba(model, q0, qd0, tau0), lambda: pin.aba(pm, pd, q0, qd0, tau0)),
        ("CRBA", lambda: crba(model, q0), lambda: pin.crba(pm, pd, q0)),
        ("RNEA", lambda: rnea(model, q0, qd0, tau0), lambda: pin.rnea(pm, pd, q0, qd0, tau0)),
    ]:
        ta = best(fa, 1000)
        tp = best(fp, 2000)
        print(
            f"{name} single state: ahbm {ta * 1e6:8.1f} us | pin {tp * 1e6:6.2f} us "
            f"| ratio ahbm/pin = {ta / tp:6.1f}x"
        )


if __name__ == "__main__":
    main()
