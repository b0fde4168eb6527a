"""The compiled kernels against the reference recursions (ahbm.dynamics.reference).

Every joint type, single states and batches (the kernels' single-state path,
their fewer-than-8-frames path and their blocks of 64 frames), with and
without external forces; the identities the recursions must satisfy; and the
proof that the reference never writes into an array (the ``ops`` contract
that lets it run on CasADi symbols later).
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import (
    aba,
    crba,
    forward_dynamics,
    gravity_torques,
    nonlinear_effects,
    reference,
    rnea,
)
from ahbm.errors import DataError
from ahbm.kinematics import Model, forward_kinematics
from ahbm.kinematics.configuration import random_model, random_q
from ahbm.kinematics.joints import JOINT_TYPES
from ahbm.kinematics.rotations import euler_to_matrix, rotvec_to_matrix

ALL = tuple(JOINT_TYPES)
RTOL = 1e-10
# one case per joint type (a pure "fixed" tree is a revolute root carrying welded
# bodies: the kernels merge them) and mixed trees
TREES = [(jt,) for jt in ALL] + [ALL, ("fixed", "revolute", "spherical"), ("free", "euler")]
# kernel paths: one state; 5 frames (< 8, frame loop outermost); 70 frames (one
# block of 64 frames and a remainder); a 2-D batch shape
BATCHES = [(), (5,), (70,), (2, 3)]


def assert_rel(actual, desired, rtol=RTOL):
    actual, desired = np.asarray(actual), np.asarray(desired)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    scale = max(float(np.abs(desired).max(initial=0.0)), 1.0)
    err = float(np.abs(actual - desired).max(initial=0.0)) / scale
    assert err <= rtol, f"relative error {err:.3e} > {rtol:.0e}"


def frames(batch):
    """Indices of the frames compared with the reference (a few frames of a long batch:
    the first and last of the block of 64 and of the remainder)."""
    if batch == (70,):
        return [(0,), (31,), (63,), (64,), (69,)]
    return list(np.ndindex(batch))


def at(x, batch):
    """The compared frames of a kernel result."""
    return np.array([np.asarray(x)[k] for k in frames(batch)])


def per_state(fn, batch, *arrays, **kwargs):
    """A one-state reference function at the compared frames of the arrays."""
    return np.array(
        [
            fn(*(a[k] for a in arrays), **{name: v[k] for name, v in kwargs.items()})
            for k in frames(batch)
        ]
    )


def make_tree(types, seed, n=7):
    rng = np.random.default_rng(seed)
    return random_model(n, rng=rng, joint_types=types), rng


def states(model, rng, batch):
    q = random_q(model, rng=rng, size=batch)
    qd = rng.normal(size=batch + (model.nv,))
    qdd = rng.normal(size=batch + (model.nv,))
    f = rng.normal(size=batch + (model.n_bodies, 6))
    return q, qd, qdd, f


# revolute and prismatic joints along ±x, ±y, ±z (the kernels' principal-axis nodes)
PRINCIPAL = [
    ("base", "ground", "fixed"),
    ("a", "base", {"type": "revolute", "axis": [0, 0, 1]}),
    ("b", "a", {"type": "revolute", "axis": [-1, 0, 0]}),
    ("c", "b", "fixed"),
    ("d", "c", {"type": "revolute", "axis": [0, -1, 0]}),
    ("e", "a", {"type": "prismatic", "axis": [0, 1, 0]}),
    ("f", "e", {"type": "prismatic", "axis": [0, 0, -1]}),
    ("g", "f", {"type": "revolute", "axis": [1, 0, 0]}),
    ("h", "base", {"type": "universal", "sequence": "YZ"}),
    ("k", "h", "fixed"),
]
# fixed bodies (merged by the kernels) at the root, in chains and before
# quaternion, Euler and general-axis joints
WELDED = [
    ("base", "ground", "fixed"),
    ("a", "base", "spherical"),
    ("b", "a", "fixed"),
    ("c", "b", "fixed"),
    ("d", "c", "free"),
    ("e", "c", {"type": "euler", "sequence": "XZX"}),
    ("f", "e", "fixed"),
    ("g", "f", {"type": "revolute", "axis": [0.6, 0.0, 0.8]}),
    ("h", "base", {"type": "prismatic", "axis": [0.0, 0.0, -1.0]}),
]


def model_of(joints, seed):
    """A model of the (name, parent, joint) list with random origins and inertias."""
    rng = np.random.default_rng(seed)
    m = Model("special", gravity=[0.5, -1.0, -9.81])
    for name, parent, joint in joints:
        m.add_body(
            name,
            parent,
            joint,
            position=rng.normal(size=3) * 0.3,
            rotation=rotvec_to_matrix(rng.normal(size=3)),
            mass=rng.uniform(1, 2),
            com=rng.normal(size=3) * 0.1,
            inertia=np.diag(rng.uniform(0.5, 1, 3)),
        )
    return m, rng


# ----------------------------------------------------------------------------
# kernels against the reference
# ----------------------------------------------------------------------------


def check(result, fn, batch, *arrays, rtol=RTOL, **kwargs):
    """A kernel result (batch shape first) equals the reference at the compared frames."""
    want = per_state(fn, batch, *arrays, **kwargs)
    assert np.shape(result) == batch + want.shape[1:]
    assert_rel(at(result, batch), want, rtol)


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("types", TREES, ids="+".join)
def test_inverse_dynamics_kernels_equal_reference(types, batch):
    model, rng = make_tree(types, 100 + len(types))
    q, qd, qdd, f = states(model, rng, batch)
    zero = np.zeros_like(qd)
    ref = ref_rnea(model)
    check(rnea(model, q, qd, qdd), ref, batch, q, qd, qdd)
    check(rnea(model, q, qd, qdd, f_ext=f), ref, batch, q, qd, qdd, f_ext=f)
    check(nonlinear_effects(model, q, qd), ref, batch, q, qd, zero)
    check(nonlinear_effects(model, q, qd, f_ext=f), ref, batch, q, qd, zero, f_ext=f)
    check(gravity_torques(model, q), ref, batch, q, zero, zero)


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("types", TREES, ids="+".join)
def test_mass_matrix_and_forward_dynamics_kernels_equal_reference(types, batch):
    model, rng = make_tree(types, 200 + len(types))
    q, qd, tau, f = states(model, rng, batch)
    check(crba(model, q), lambda x: reference.crba(model, x), batch, q)
    ref = ref_aba(model)
    check(aba(model, q, qd, tau), ref, batch, q, qd, tau, rtol=1e-9)
    check(aba(model, q, qd, tau, f_ext=f), ref, batch, q, qd, tau, f_ext=f, rtol=1e-9)
    for method in ("aba", "crba"):
        fd = forward_dynamics(model, q, qd, tau, method=method, f_ext=f)
        check(fd, ref, batch, q, qd, tau, f_ext=f, rtol=1e-9)


@pytest.mark.parametrize("batch", [(), (70,)], ids=str)
@pytest.mark.parametrize("types", TREES, ids="+".join)
def test_forward_kinematics_equals_reference(types, batch):
    model, rng = make_tree(types, 300 + len(types))
    q, qd, qdd, _ = states(model, rng, batch)
    kin = forward_kinematics(model, q, qd, qdd)

    def poses(q1, qd1, qdd1):
        r = reference.forward_kinematics(model, q1)
        T = np.zeros((model.n_bodies, 4, 4))
        T[:, :3, :3], T[:, :3, 3], T[:, 3, 3] = r.rotations, r.positions, 1.0
        return T

    def velocities(q1, qd1, qdd1):
        return reference.forward_kinematics(model, q1, qd1).velocities

    def accelerations(q1, qd1, qdd1):
        return reference.forward_kinematics(model, q1, qd1, qdd1).accelerations

    check(kin.transforms, poses, batch, q, qd, qdd)
    check(kin.velocities, velocities, batch, q, qd, qdd)
    check(kin.accelerations, accelerations, batch, q, qd, qdd)


def to_local(model, q, f):
    """World forces about the origin (..., n_bodies, 6) -> body frames, about the body origins."""
    out = np.empty_like(f)
    for k in np.ndindex(q.shape[:-1]):
        kin = reference.forward_kinematics(model, q[k])
        for i, (R, p) in enumerate(zip(kin.rotations, kin.positions, strict=True)):
            n, F = f[k + (i,)][:3], f[k + (i,)][3:]
            out[k + (i,)] = np.r_[R.T @ (n - np.cross(p, F)), R.T @ F]
    return out


@pytest.mark.parametrize("batch", [(), (5,), (70,)], ids=str)
@pytest.mark.parametrize("joints", [PRINCIPAL, WELDED], ids=["principal-axes", "welded"])
def test_kernel_special_nodes(joints, batch):
    """The kernels' special nodes: principal-axis joints and merged welded bodies,
    with external forces in both frames."""
    model, rng = model_of(joints, 21 + len(joints))
    q, qd, qdd, f = states(model, rng, batch)
    tau = rnea(model, q, qd, qdd, f_ext=f)
    check(tau, ref_rnea(model), batch, q, qd, qdd, f_ext=f)
    f_local = to_local(model, q, f)
    assert_rel(rnea(model, q, qd, qdd, f_ext=f_local, f_ext_frame="local"), tau)
    check(crba(model, q), lambda x: reference.crba(model, x), batch, q)
    check(aba(model, q, qd, tau, f_ext=f), ref_aba(model), batch, q, qd, tau, f_ext=f)
    assert_rel(aba(model, q, qd, tau, f_ext=f_local, f_ext_frame="local"), qdd, rtol=1e-9)


def ref_rnea(model):
    return lambda q, qd, qdd, **kw: reference.rnea(model, q, qd, qdd, **kw)


def ref_aba(model):
    return lambda q, qd, tau, **kw: reference.aba(model, q, qd, tau, **kw)


# ----------------------------------------------------------------------------
# identities of the reference recursions themselves
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("types", TREES, ids="+".join)
def test_reference_identities(types):
    model, rng = make_tree(types, 400 + len(types), n=6)
    for _ in range(3):
        q, qd, qdd, f = states(model, rng, ())
        tau = rng.normal(size=model.nv)
        H = reference.crba(model, q)
        np.testing.assert_allclose(H, H.T, atol=1e-12 * np.abs(H).max())
        assert np.linalg.eigvalsh(H).min() > 0
        # ID(FD(τ)) = τ, with and without external forces
        for ff in (None, f):
            acc = reference.aba(model, q, qd, tau, f_ext=ff)
            assert_rel(reference.rnea(model, q, qd, acc, f_ext=ff), tau)
        # RNEA is affine in q̈ with slope H
        z = np.zeros(model.nv)
        lhs = reference.rnea(model, q, z, qdd) - reference.rnea(model, q, z, z)
        assert_rel(lhs, H @ qdd)
        # τ = H q̈ + C q̇ + g: the bias does not depend on q̈
        bias = reference.rnea(model, q, qd, z)
        assert_rel(reference.rnea(model, q, qd, qdd), H @ qdd + bias)


def test_external_force_is_jacobian_transpose():
    """A world force at a body point enters τ as −Jᵀ F (virtual work)."""
    model, rng = make_tree(ALL, 7, n=6)
    q, qd, qdd, _ = states(model, rng, ())
    body = model.n_bodies - 1
    point = rng.normal(size=3)
    F = rng.normal(size=3)
    f = np.zeros((model.n_bodies, 6))
    f[body] = np.r_[np.cross(point, F), F]
    diff = reference.rnea(model, q, qd, qdd) - reference.rnea(model, q, qd, qdd, f_ext=f)
    # point velocity = J q̇ for any q̇: the columns of J from the reference FK
    J = np.zeros((3, model.nv))
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = 1.0
        kin = reference.forward_kinematics(model, q, e)
        R, p, v = kin.rotations[body], kin.positions[body], kin.velocities[body]
        w = R @ v[:3]
        J[:, k] = R @ v[3:] + np.cross(w, point - p)
    assert_rel(diff, J.T @ F)


@pytest.mark.parametrize("seq", ["XYZ", "ZXZ", "YZ", "XZY", "ZYX"])
def test_rotation_sequence_joint_model(seq):
    """R_J follows the intrinsic scipy convention; S_ω and Ṡ q̇ match finite differences."""
    rng = np.random.default_rng(len(seq) + ord(seq[0]))
    ops = reference.NumpyOps()
    x, xd = rng.normal(size=len(seq)), rng.normal(size=len(seq))
    R, S, c = reference._rotation_sequence(ops, seq, x, xd)
    if len(seq) == 3:
        np.testing.assert_allclose(R, euler_to_matrix(x, seq), atol=1e-14)
    h = 1e-6
    Rp = reference._rotation_sequence(ops, seq, x + h * xd, None)[0]
    Rm = reference._rotation_sequence(ops, seq, x - h * xd, None)[0]
    W = R.T @ (Rp - Rm) / (2 * h)  # [ω]× in body coordinates
    np.testing.assert_allclose([W[2, 1], W[0, 2], W[1, 0]], S @ xd, atol=1e-8)
    Sp = reference._rotation_sequence(ops, seq, x + h * xd, None)[1]
    Sm = reference._rotation_sequence(ops, seq, x - h * xd, None)[1]
    np.testing.assert_allclose((Sp - Sm) @ xd / (2 * h), c, atol=1e-8)


def test_joint_models_velocity_matches_pose_derivative():
    """For every joint type S q̇ is the body velocity: finite differences of poses."""
    model, rng = make_tree(ALL, 9, n=12)
    from ahbm.kinematics import integrate_q

    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    kin = reference.forward_kinematics(model, q, qd)
    h = 1e-6
    plus = reference.forward_kinematics(model, integrate_q(model, q, qd, h))
    minus = reference.forward_kinematics(model, integrate_q(model, q, qd, -h))
    for i in range(model.n_bodies):
        R = kin.rotations[i]
        W = R.T @ (plus.rotations[i] - minus.rotations[i]) / (2 * h)
        v_o = R.T @ (plus.positions[i] - minus.positions[i]) / (2 * h)
        np.testing.assert_allclose(
            kin.velocities[i], np.r_[W[2, 1], W[0, 2], W[1, 0], v_o], atol=1e-7
        )


# ----------------------------------------------------------------------------
# the ops contract: no in-place writes
# ----------------------------------------------------------------------------


class _ReadOnly(np.ndarray):
    """An ndarray whose views and arithmetic results are read-only too."""

    def __array_finalize__(self, obj):
        if obj is not None:
            self.flags.writeable = False


def _read_only(x):
    if isinstance(x, np.ndarray):
        x = np.array(x)
        x.flags.writeable = False
        return x.view(_ReadOnly)
    return x


class ReadOnlyOps(reference.NumpyOps):
    """numpy ops whose every result is read-only: an in-place write raises ValueError."""

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if name.startswith("_") or not callable(attr):
            return attr
        return lambda *args, **kwargs: _read_only(attr(*args, **kwargs))


def test_recursions_never_write_into_arrays():
    model, rng = make_tree(ALL, 11, n=10)
    q, qd, qdd, f = (_read_only(x) for x in states(model, rng, ()))
    ops = ReadOnlyOps()
    with pytest.raises(ValueError, match="read-only"):
        ops.zeros(3)[0] = 1.0  # the test ops does catch a write
    kin = reference.forward_kinematics(model, q, qd, qdd, ops=ops)
    tau = reference.rnea(model, q, qd, qdd, f_ext=f, ops=ops)
    H = reference.crba(model, q, ops=ops)
    acc = reference.aba(model, q, qd, tau, f_ext=f, ops=ops)
    assert isinstance(tau, _ReadOnly) and isinstance(H, _ReadOnly) and isinstance(acc, _ReadOnly)
    assert not kin.velocities[-1].flags.writeable
    # and the read-only run computes the same numbers
    assert_rel(tau, reference.rnea(model, np.array(q), np.array(qd), np.array(qdd), f_ext=f))
    assert_rel(acc, qdd, rtol=1e-9)
    assert_rel(H, reference.crba(model, np.array(q)))


def test_bad_input():
    model, rng = make_tree(("revolute",), 1, n=3)
    z = np.zeros(model.nv)
    with pytest.raises(DataError, match=r"Expected `q` to have shape \(3,\)"):
        reference.rnea(model, np.zeros(4), z, z)
    with pytest.raises(DataError, match="Expected `f_ext`"):
        reference.aba(model, z, z, z, f_ext=np.zeros((2, 6)))
    with pytest.raises(DataError, match="non-finite"):
        reference.crba(model, np.full(3, np.nan))
    with pytest.raises(DataError, match="without `qd`"):
        reference.forward_kinematics(model, z, None, z)


def test_repr_and_no_motion():
    model = Model()
    model.add_body("a", "ground", "fixed", mass=1.0)
    kin = reference.forward_kinematics(model, np.zeros(0), np.zeros(0))
    assert repr(kin).startswith("ReferenceKinematics(rotations=list[1]")
    assert reference.rnea(model, [], [], []).shape == (0,)
    assert reference.crba(model, []).shape == (0, 0)
