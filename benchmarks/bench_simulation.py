"""Benchmark the right-hand side of constrained simulations against a Pinocchio-based one.

Measured in the same run (CPU time, best of several repeats):

1. One evaluation of the right-hand side ``y -> ẏ`` used by
   ``ahbm.dynamics.simulate`` (coordinate rates, constrained forward dynamics
   with ``constraint_method="direct"``, i.e. the lean single-state path: one
   kinematics pass, the constraint rows written by a kernel, the KKT system
   solved by two Cholesky factorizations) for
   a. the 3-D double pendulum (AHBM §5.2.2) with its tip on a plane (1 constraint),
   b. the 15-segment human (``ahbm.models.human15``, nv = 38) with both feet
      welded to the ground (position + orientation of each foot, 12 constraints),
   against an equivalent right-hand side built on Pinocchio: ``pin.aba`` for
   the unconstrained accelerations, ``pin.computeMinverse``, frame Jacobians
   and classical frame accelerations for ``G`` and ``γ``, and the
   range-space solve ``K λ = γ − G a₀``, ``q̈ = a₀ + M⁻¹Gᵀλ`` in numpy.
2. Simulated seconds per CPU second of the example simulations (no plotting).

Run: ``python benchmarks/bench_simulation.py``.
"""

from __future__ import annotations

import importlib.util
import platform
import time
import timeit
from pathlib import Path

import numpy as np
import pinocchio as pin

from ahbm.dynamics import OrientationConstraint, PlaneConstraint, PointConstraint, simulate
from ahbm.dynamics.constrained import project_positions
from ahbm.dynamics.constraints import ConstraintSet
from ahbm.dynamics.simulation_system import _System
from ahbm.kinematics.configuration import neutral_q
from ahbm.kinematics.forward import forward_kinematics, point_position
from ahbm.kinematics.tree import Model
from ahbm.models import double_pendulum_3d, human15

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def best(stmt, number, repeat=5):
    return min(timeit.repeat(stmt, number=number, repeat=repeat, timer=time.process_time)) / number


def to_pinocchio(model: Model):
    """The same tree in Pinocchio; returns the model and the joint id of each body."""
    pm = pin.Model()
    pm.gravity.linear = model.gravity
    frames, ids = [], []
    for b in model.bodies:
        pj, off = (0, pin.SE3.Identity()) if b.parent < 0 else frames[b.parent]
        placement = off * pin.SE3(b.rotation, b.position)
        inertia = pin.Inertia(b.mass, b.com, b.inertia)
        t = b.joint.type
        if t == "fixed":
            pm.appendBodyToJoint(pj, inertia, placement)
            frames.append((pj, placement))
            ids.append(pj)
            continue
        if t == "free":
            chain = [pin.JointModelFreeFlyer()]
        elif t == "spherical":
            chain = [pin.JointModelSpherical()]
        elif t == "revolute":
            chain = [pin.JointModelRevoluteUnaligned(b.joint.axis)]
        elif t in ("euler", "universal"):
            chain = [getattr(pin, "JointModelR" + c)() for c in b.joint.sequence]
        else:
            raise ValueError(t)
        for k, jm in enumerate(chain):
            pj = pm.addJoint(pj, jm, placement if k == 0 else pin.SE3.Identity(), f"{b.name}{k}")
        pm.appendBodyToJoint(pj, inertia, pin.SE3.Identity())
        frames.append((pj, pin.SE3.Identity()))
        ids.append(pj)
    return pm, ids


def pin_rhs_factory(pm, frames, kinds):
    """Pinocchio right-hand side: aba + M⁻¹ + frame Jacobians + numpy range-space solve.

    frames: Pinocchio frame ids; kinds: "z" (plane contact, 1 row) or "6d" (weld).
    """
    data = pm.createData()
    nq = pm.nq
    LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    LOCAL = pin.ReferenceFrame.LOCAL

    def rhs(t, y):
        q, v = y[:nq], y[nq:]
        tau = np.zeros(pm.nv)
        a0 = pin.aba(pm, data, q, v, tau)
        Minv = pin.computeMinverse(pm, data, q)
        pin.computeJointJacobians(pm, data, q)
        pin.forwardKinematics(pm, data, q, v, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, data)
        rows, gam = [], []
        for f, kind in zip(frames, kinds, strict=True):
            if kind == "z":
                J = pin.getFrameJacobian(pm, data, f, LWA)[2:3]
                acc = pin.getFrameClassicalAcceleration(pm, data, f, LWA).linear[2:3]
            else:
                J = pin.getFrameJacobian(pm, data, f, LOCAL)
                acc = pin.getFrameAcceleration(pm, data, f, LOCAL).vector
            rows.append(J)
            gam.append(-acc)
        G = np.vstack(rows)
        gamma = np.concatenate(gam)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        MG = Minv @ G.T
        lam = np.linalg.solve(G @ MG, gamma - G @ a0)
        qdd = a0 + MG @ lam
        # coordinate rates (quaternion joints) as in ahbm: q̇ from v
        return np.concatenate([pin.integrate(pm, q, v * 1e-8) - q, qdd])

    return rhs


def bench_rhs(name, model, q, cset, pm, pin_frames, kinds):
    rng = np.random.default_rng(1)
    qd = rng.normal(size=model.nv) * 0.1
    system = _System(model, np.zeros(model.nv), (), cset, "direct", None)
    y = np.concatenate([q, qd])
    rhs_p = pin_rhs_factory(pm, pin_frames, kinds)
    pin_q = q.copy()
    yp = np.concatenate([pin_q, np.zeros(pm.nv)])
    out_p = rhs_p(0.0, np.concatenate([pin_q, qd]))
    if model.nq == model.nv == pm.nv:  # same coordinates: check the accelerations agree
        diff = np.abs(out_p[model.nq :] - system(0.0, y)[model.nq :]).max()
        print(f"  check {name}: max |qdd_ahbm - qdd_pin| = {diff:.1e}")
    ta = best(lambda: system(0.0, y), 20)
    tp = best(lambda: rhs_p(0.0, yp), 200)
    print(
        f"RHS {name:34s}: ahbm {ta * 1e3:7.3f} ms | pin+numpy {tp * 1e3:7.3f} ms "
        f"| ratio ahbm/pin = {ta / tp:6.1f}x"
    )
    return ta, tp


def double_pendulum_case():
    model = double_pendulum_3d()
    q = np.array([0.3, 0.2, -0.1, 0.4])
    tip = point_position(model, q, "pendulum2", [0, 0, -1])
    cs = ConstraintSet([PlaneConstraint("pendulum2", [0, 0, -1], height=tip[2])])
    pm, ids = to_pinocchio(model)
    fid = pm.addFrame(
        pin.Frame("tip", ids[1], 0, pin.SE3(np.eye(3), np.array([0, 0, -1.0])), pin.OP_FRAME)
    )
    return model, q, cs, pm, [fid], ["z"]


def human_case():
    model = human15()
    q = neutral_q(model)
    T = forward_kinematics(model, q).transforms
    cons = []
    pm, ids = to_pinocchio(model)
    frames = []
    for side in ("r", "l"):
        b = model.body_index(f"foot_{side}")
        heel = model.bodies[b].markers["heel"]
        cons.append(PointConstraint(b, heel, other_point=point_position(model, q, b, heel)))
        cons.append(OrientationConstraint(b, rotation=T[b, :3, :3]))
        fr = pin.Frame(f"heel_{side}", ids[b], 0, pin.SE3(np.eye(3), heel), pin.OP_FRAME)
        frames.append(pm.addFrame(fr))
    cs = ConstraintSet(cons)
    q = project_positions(model, q, cs)
    pin_q = q.copy()
    return model, pin_q, cs, pm, frames, ["6d", "6d"]


def _example(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_examples():
    sm = _example("spring_mass")
    dp = _example("double_pendulum_3d")
    fb = _example("four_bar")
    tp = _example("triple_pendulum_contact")
    from ahbm.models import triple_pendulum_euler

    cases = []
    m = sm.build_model()
    cases.append(("spring_mass (RK45, rtol 1e-8)", 10.0,
                  lambda: simulate(m, (0, 10), np.zeros(2), np.zeros(2), forces=sm.elements(),
                                   rtol=1e-8, atol=1e-10)))  # fmt: skip
    m2 = double_pendulum_3d()
    follower = dp.follower_force()
    cases.append(("double_pendulum_3d (RK45, rtol 1e-8)", 10.0,
                  lambda: simulate(m2, (0, 10), [0.3, 0, 0.2, 0], np.zeros(4),
                                   forces=[follower], rtol=1e-8, atol=1e-10)))  # fmt: skip
    m3 = fb.build_model()
    cs3 = fb.loop_constraint()
    q3, qd3 = fb.initial_state(m3, cs3)
    cases.append(("four_bar + projection (RK45, 1e-8)", 10.0,
                  lambda: simulate(m3, (0, 10), q3, qd3, constraints=cs3, rtol=1e-8,
                                   atol=1e-8)))  # fmt: skip
    m4 = triple_pendulum_euler()
    floor = ConstraintSet([PlaneConstraint("link3", tp.TIP, height=tp.FLOOR)])
    from ahbm.dynamics import point_height_event

    ev = point_height_event(m4, "link3", tp.TIP, height=tp.FLOOR, constraints=floor,
                            restitution=0.0)  # fmt: skip
    q4 = np.zeros(9)
    q4[1] = 1.0
    cases.append(("triple pendulum impact (RK45, 1e-8)", 4.0,
                  lambda: simulate(m4, (0, 4), q4, np.zeros(9), events=[ev], rtol=1e-8,
                                   atol=1e-8)))  # fmt: skip
    for name, sim_t, fn in cases:
        t0 = time.process_time()
        r = fn()
        dt = time.process_time() - t0
        print(
            f"{name:40s}: {sim_t:4.1f} s simulated in {dt:6.2f} s CPU "
            f"= {sim_t / dt:6.2f} simulated s per CPU s ({r.n_steps} steps, {r.nfev} RHS)"
        )


def main():
    print(f"ahbm simulation vs Pinocchio {pin.__version__} - {platform.machine()}")
    for name, case in (
        ("double pendulum 3D, 1 constraint", double_pendulum_case),
        ("human15 (nv=38), feet welded (12)", human_case),
    ):
        model, q, cs, pm, frames, kinds = case()
        bench_rhs(name, model, q, cs, pm, frames, kinds)
    bench_examples()


if __name__ == "__main__":
    main()
