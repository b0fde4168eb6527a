"""Cross-checks of ahbm's multibody algorithms against Pinocchio on random trees.

Both the public (compiled) functions and the reference recursions of
:mod:`ahbm.dynamics.reference` are checked.

The same tree is built in both libraries. Joint mapping:

* revolute / prismatic -> RevoluteUnaligned / PrismaticUnaligned;
* spherical -> JointModelSpherical (same q and v);
* euler / universal -> a chain of RX/RY/RZ joints with massless zero-length
  intermediate bodies (same q and v);
* free_euler -> JointModelTranslation + RX/RY/RZ chain; planar -> PX, PY, RZ;
* free -> JointModelFreeFlyer. Same q; ahbm's linear velocity is ``ṙ`` in
  the joint frame, Pinocchio's is ``R_Jᵀ ṙ`` (body frame), so states, forces
  and matrices are mapped with ``v_pin = T(q) v`` and
  ``q̈_pin = T q̈ + Ṫ v``;
* fixed -> the body inertia is appended to the parent joint.
"""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from ahbm.dynamics import aba, crba, nonlinear_effects, rnea  # noqa: E402
from ahbm.kinematics import (  # noqa: E402
    Model,
    body_jacobian,
    center_of_mass,
    forward_kinematics,
    kinetic_energy,
    momentum,
    potential_energy,
)
from ahbm.kinematics.rotations import quat_to_matrix as _quat_to_matrix  # noqa: E402

RTOL = 1e-10
TYPES = [
    "revolute",
    "prismatic",
    "euler",
    "spherical",
    "free",
    "universal",
    "free_euler",
    "planar",
    "fixed",
]


def assert_rel(actual, desired, rtol=RTOL):
    actual = np.asarray(actual)
    desired = np.asarray(desired)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    scale = max(float(np.abs(desired).max(initial=0.0)), 1e-12)
    err = float(np.abs(actual - desired).max(initial=0.0)) / scale
    assert err <= rtol, f"relative error {err:.3e} > {rtol:.0e}"


def random_rotation(rng):
    q = rng.normal(size=4)
    return _quat_to_matrix(q / np.linalg.norm(q))


def random_inertia(rng):
    d = rng.uniform(0.05, 1.0, size=3)
    lo, hi = abs(d[0] - d[1]), d[0] + d[1]
    d[2] = lo + (hi - lo) * rng.uniform(0.05, 0.95)
    R = random_rotation(rng)
    return R @ np.diag(d) @ R.T


def random_sequence(rng, n):
    letters = "XYZ"
    seq = [letters[rng.integers(3)]]
    while len(seq) < n:
        ch = letters[rng.integers(3)]
        if ch != seq[-1]:
            seq.append(ch)
    return "".join(seq)


def random_tree(rng, n_bodies, types=TYPES):
    """Random tree, numbered depth-first (Pinocchio's CRBA assumes that numbering)."""
    model = Model("random", gravity=rng.normal(size=3) * 5)
    parents = [-1] + [
        int(rng.integers(0, i)) if rng.random() < 0.9 else -1 for i in range(1, n_bodies)
    ]
    order = []

    def visit(k):
        order.append(k)
        for c in range(n_bodies):
            if parents[c] == k:
                visit(c)

    for r in range(n_bodies):
        if parents[r] < 0:
            visit(r)
    new_index = {old: new for new, old in enumerate(order)}
    for i in range(n_bodies):
        old = order[i]
        parent = -1 if parents[old] < 0 else new_index[parents[old]]
        jtype = types[rng.integers(len(types))]
        if parent < 0 and jtype == "fixed":  # Pinocchio ignores bodies fixed to the ground
            jtype = "revolute"
        joint = {"type": jtype}
        if jtype in ("revolute", "prismatic"):
            a = rng.normal(size=3)
            joint["axis"] = a / np.linalg.norm(a)
        elif jtype == "universal":
            joint["sequence"] = random_sequence(rng, 2)
        elif jtype in ("euler", "free_euler"):
            joint["sequence"] = random_sequence(rng, 3)
        model.add_body(
            f"b{i}",
            parent,
            joint,
            position=rng.normal(size=3) * 0.5,
            rotation=random_rotation(rng),
            mass=rng.uniform(0.5, 5.0),
            com=rng.normal(size=3) * 0.3,
            inertia=random_inertia(rng),
        )
    return model


_PIN_AXIS = {"X": "RX", "Y": "RY", "Z": "RZ"}


def to_pinocchio(model: Model):
    """Build the same tree in Pinocchio.

    Returns (pin model, list of (pin joint id, SE3 offset of the ahbm body frame in
    that joint frame) per ahbm body).
    """
    pm = pin.Model()
    pm.gravity.linear = model.gravity
    frames = []
    for i, b in enumerate(model.bodies):
        if b.parent < 0:
            pj, off = 0, pin.SE3.Identity()
        else:
            pj, off = frames[b.parent]
        placement = off * pin.SE3(b.rotation, b.position)
        inertia = pin.Inertia(b.mass, b.com, b.inertia)
        jt = b.joint.type
        if jt == "fixed":
            pm.appendBodyToJoint(pj, inertia, placement)
            frames.append((pj, placement))
            continue
        chain = []
        if jt == "revolute":
            chain = [pin.JointModelRevoluteUnaligned(b.joint.axis)]
        elif jt == "prismatic":
            chain = [pin.JointModelPrismaticUnaligned(b.joint.axis)]
        elif jt == "spherical":
            chain = [pin.JointModelSpherical()]
        elif jt == "free":
            chain = [pin.JointModelFreeFlyer()]
        elif jt in ("euler", "universal"):
            chain = [getattr(pin, "JointModel" + _PIN_AXIS[c])() for c in b.joint.sequence]
        elif jt == "free_euler":
            chain = [pin.JointModelTranslation()] + [
                getattr(pin, "JointModel" + _PIN_AXIS[c])() for c in b.joint.sequence
            ]
        elif jt == "planar":
            chain = [pin.JointModelPX(), pin.JointModelPY(), pin.JointModelRZ()]
        for k, jm in enumerate(chain):
            pj = pm.addJoint(pj, jm, placement if k == 0 else pin.SE3.Identity(), f"{b.name}_{k}")
        pm.appendBodyToJoint(pj, inertia, pin.SE3.Identity())
        frames.append((pj, pin.SE3.Identity()))
    assert pm.nq == model.nq and pm.nv == model.nv
    return pm, frames


def velocity_map(model: Model, q, v):
    """T(q) with v_pin = T v, and the bias b = Ṫ v (q̈_pin = T q̈ + b)."""
    T = np.eye(model.nv)
    b = np.zeros(model.nv)
    for i, bd in enumerate(model.bodies):
        if bd.joint.type != "free":
            continue
        k, qi = model.v_index[i], model.q_index[i]
        R = _quat_to_matrix(q[qi + 3 : qi + 7])
        T[k : k + 3, k : k + 3] = R.T
        w = v[k + 3 : k + 6]
        b[k : k + 3] = -np.cross(w, R.T @ v[k : k + 3])
    return T, b


def random_state(rng, model):
    q = rng.normal(size=model.nq)
    for i, bd in enumerate(model.bodies):
        if bd.joint.type in ("spherical", "free"):
            k = model.q_index[i] + (3 if bd.joint.type == "free" else 0)
            quat = rng.normal(size=4)
            q[k : k + 4] = quat / np.linalg.norm(quat)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def _se3(T):
    return pin.SE3(T[:3, :3], T[:3, 3])


CASES = [(seed, n) for seed, n in enumerate([1, 1, 2, 3, 5, 8, 13, 20, 30, 40])]


@pytest.fixture(params=CASES, ids=lambda c: f"seed{c[0]}-n{c[1]}")
def case(request):
    seed, n = request.param
    rng = np.random.default_rng(1000 + seed)
    model = random_tree(rng, n)
    pm, frames = to_pinocchio(model)
    q, v, a = random_state(rng, model)
    return rng, model, pm, frames, q, v, a


def test_forward_kinematics(case):
    rng, model, pm, frames, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q, T @ v, T @ a + bias)
    kin = forward_kinematics(model, q, v, a)
    for i, (j, off) in enumerate(frames):
        oMb = pd.oMi[j] * off
        assert_rel(kin.transforms[i], oMb.homogeneous)
        vel = off.actInv(pd.v[j])
        acc = off.actInv(pd.a[j])
        assert_rel(kin.velocities[i], np.r_[vel.angular, vel.linear])
        assert_rel(kin.accelerations[i], np.r_[acc.angular, acc.linear])


def test_rnea(case):
    rng, model, pm, frames, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    tau_pin = pin.rnea(pm, pd, q, T @ v, T @ a + bias)
    assert_rel(rnea(model, q, v, a), T.T @ tau_pin)


def test_rnea_external_forces(case):
    rng, model, pm, frames, q, v, a = case
    T, bias = velocity_map(model, q, v)
    f_local = rng.normal(size=(model.n_bodies, 6))
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i, (j, off) in enumerate(frames):
        f = pin.Force(f_local[i, 3:], f_local[i, :3])  # (linear, angular)
        fext[j] = fext[j] + off.act(f)
    pd = pm.createData()
    tau_pin = pin.rnea(pm, pd, q, T @ v, T @ a + bias, fext)
    tau = rnea(model, q, v, a, f_ext=f_local, f_ext_frame="local")
    assert_rel(tau, T.T @ tau_pin)
    # the same forces in the world frame give the same torques
    kin = forward_kinematics(model, q)
    f_world = np.empty_like(f_local)
    for i in range(model.n_bodies):
        R, p = kin.transforms[i, :3, :3], kin.transforms[i, :3, 3]
        F = R @ f_local[i, 3:]
        f_world[i] = np.r_[R @ f_local[i, :3] + np.cross(p, F), F]
    assert_rel(rnea(model, q, v, a, f_ext=f_world), tau)


def test_crba(case):
    rng, model, pm, frames, q, v, a = case
    T, _ = velocity_map(model, q, v)
    pd = pm.createData()
    H = pin.crba(pm, pd, q)
    H = np.triu(H) + np.triu(H, 1).T
    assert_rel(crba(model, q), T.T @ H @ T)


def test_aba(case):
    rng, model, pm, frames, q, v, a = case
    T, bias = velocity_map(model, q, v)
    tau = rng.normal(size=model.nv)
    pd = pm.createData()
    qdd_pin = pin.aba(pm, pd, q, T @ v, np.linalg.solve(T.T, tau))
    assert_rel(aba(model, q, v, tau), np.linalg.solve(T, qdd_pin - bias))


def test_nonlinear_effects(case):
    rng, model, pm, frames, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    # rnea with q̈_pin = Ṫ v, i.e. ahbm's q̈ = 0
    tau_pin = pin.rnea(pm, pd, q, T @ v, bias)
    assert_rel(nonlinear_effects(model, q, v), T.T @ tau_pin)


def test_reference_recursions(case):
    """ahbm.dynamics.reference (the tests' independent coding) against Pinocchio."""
    from ahbm.dynamics import reference

    rng, model, pm, frames, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q, T @ v, T @ a + bias)
    kin = reference.forward_kinematics(model, q, v, a)
    for i, (j, off) in enumerate(frames):
        oMb = pd.oMi[j] * off
        assert_rel(kin.rotations[i], oMb.rotation)
        assert_rel(kin.positions[i], oMb.translation)
        vel, acc = off.actInv(pd.v[j]), off.actInv(pd.a[j])
        assert_rel(kin.velocities[i], np.r_[vel.angular, vel.linear])
        assert_rel(kin.accelerations[i], np.r_[acc.angular, acc.linear])
    tau_pin = pin.rnea(pm, pd, q, T @ v, T @ a + bias)
    assert_rel(reference.rnea(model, q, v, a), T.T @ tau_pin)
    # external forces: body frame for Pinocchio, world frame (about the origin) for ahbm
    f_local = rng.normal(size=(model.n_bodies, 6))
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    f_world = np.empty_like(f_local)
    for i, (j, off) in enumerate(frames):
        fext[j] = fext[j] + off.act(pin.Force(f_local[i, 3:], f_local[i, :3]))
        R, p = kin.rotations[i], kin.positions[i]
        F = R @ f_local[i, 3:]
        f_world[i] = np.r_[R @ f_local[i, :3] + np.cross(p, F), F]
    tau_pin = pin.rnea(pm, pd, q, T @ v, T @ a + bias, fext)
    assert_rel(reference.rnea(model, q, v, a, f_ext=f_world), T.T @ tau_pin)
    H = pin.crba(pm, pd, q)
    H = np.triu(H) + np.triu(H, 1).T
    assert_rel(reference.crba(model, q), T.T @ H @ T)
    tau = rng.normal(size=model.nv)
    qdd_pin = pin.aba(pm, pd, q, T @ v, np.linalg.solve(T.T, tau))
    assert_rel(reference.aba(model, q, v, tau), np.linalg.solve(T, qdd_pin - bias))
    qdd_pin = pin.aba(pm, pd, q, T @ v, np.linalg.solve(T.T, tau), fext)
    assert_rel(reference.aba(model, q, v, tau, f_ext=f_world), np.linalg.solve(T, qdd_pin - bias))


@pytest.mark.parametrize("frame", ["world", "local", "local_world_aligned"])
def test_body_jacobian(case, frame):
    rng, model, pm, frames, q, v, a = case
    T, _ = velocity_map(model, q, v)
    pd = pm.createData()
    pin.computeJointJacobians(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    ref = {
        "world": pin.ReferenceFrame.WORLD,
        "local": pin.ReferenceFrame.LOCAL,
        "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    }[frame]
    for i, (j, off) in enumerate(frames):
        if not off.isIdentity():
            continue  # bodies on fixed joints are covered by FK and RNEA
        J = np.asarray(pin.getJointJacobian(pm, pd, j, ref)).reshape(6, model.nv)
        J = np.r_[J[3:], J[:3]] @ T
        assert_rel(body_jacobian(model, q, i, frame=frame), J)


def test_com_momentum_energy(case):
    rng, model, pm, frames, q, v, a = case
    T, _ = velocity_map(model, q, v)
    pd = pm.createData()
    com = pin.centerOfMass(pm, pd, q)
    assert_rel(center_of_mass(model, q), com)
    hg = pin.computeCentroidalMomentum(pm, pd, q, T @ v)
    assert_rel(momentum(model, q, v), np.r_[hg.angular, hg.linear])
    ke = pin.computeKineticEnergy(pm, pd, q, T @ v)
    assert_rel(kinetic_energy(model, q, v), ke)
    pe = pin.computePotentialEnergy(pm, pd, q)
    np.testing.assert_allclose(potential_energy(model, q), pe, rtol=1e-10, atol=1e-10)


def test_batch_equals_pinocchio_loop():
    rng = np.random.default_rng(7)
    model = random_tree(rng, 12)
    pm, _ = to_pinocchio(model)
    pd = pm.createData()
    states = [random_state(rng, model) for _ in range(6)]
    q = np.array([s[0] for s in states]).reshape(2, 3, model.nq)
    v = np.array([s[1] for s in states]).reshape(2, 3, model.nv)
    a = np.array([s[2] for s in states]).reshape(2, 3, model.nv)
    tau = rnea(model, q, v, a)
    for idx in np.ndindex(2, 3):
        T, bias = velocity_map(model, q[idx], v[idx])
        ref = T.T @ pin.rnea(pm, pd, q[idx], T @ v[idx], T @ a[idx] + bias)
        assert_rel(tau[idx], ref)


@pytest.mark.parametrize("name", ["human15", "double_pendulum_3d", "triple_pendulum_euler"])
def test_example_models_against_pinocchio(name):
    import ahbm.models

    model = getattr(ahbm.models, name)()
    rng = np.random.default_rng(3)
    pm, frames = to_pinocchio(model)
    pd = pm.createData()
    q, v, a = random_state(rng, model)
    T, bias = velocity_map(model, q, v)
    assert_rel(rnea(model, q, v, a), T.T @ pin.rnea(pm, pd, q, T @ v, T @ a + bias))
    H = pin.crba(pm, pd, q)
    H = np.triu(H) + np.triu(H, 1).T
    assert_rel(crba(model, q), T.T @ H @ T)
    tau = rng.normal(size=model.nv)
    qdd_pin = pin.aba(pm, pd, q, T @ v, np.linalg.solve(T.T, tau))
    assert_rel(aba(model, q, v, tau), np.linalg.solve(T, qdd_pin - bias))
    hg = pin.computeCentroidalMomentum(pm, pd, q, T @ v)
    assert_rel(momentum(model, q, v), np.r_[hg.angular, hg.linear])
