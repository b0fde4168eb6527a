"""Compiled dynamics kernels against the reference recursions and libm."""

import math

import numpy as np
import pytest

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import jit_common as _jit_common
from ahbm._engine import node_plan as _node_plan
from ahbm.dynamics import aba, crba, reference, rnea
from ahbm.errors import SimulationError
from ahbm.kinematics import Model
from ahbm.kinematics.configuration import random_model, random_q
from ahbm.kinematics.joints import JOINT_TYPES

ALL = tuple(JOINT_TYPES)


@pytest.mark.parametrize("scale", [1.0, 10.0, 1e3, 1e5, 1e7])
def test_sincos_matches_libm(scale):
    rng = np.random.default_rng(int(math.log10(scale)))
    x = rng.normal(size=5000) * scale
    s = np.empty_like(x)
    c = np.empty_like(x)
    _jit_common.sincos(x, x.size, s, c)
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=4.5e-16)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=4.5e-16)


def test_sincos_special_values():
    x = np.array([0.0, math.pi / 2, math.pi, -math.pi / 2, 3 * math.pi / 4, 1e-300, 2.5e6])
    s = np.empty_like(x)
    c = np.empty_like(x)
    _jit_common.sincos(x, x.size, s, c)
    assert s[0] == 0.0 and c[0] == 1.0
    assert s[1] == 1.0 and abs(c[1]) < 1e-16
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=2.3e-16)
    # only m entries are written
    s[:] = 7.0
    _jit_common.sincos(x, 2, s, c)
    assert s[2] == 7.0


def _loop(fn, *arrays, **kwargs):
    """A one-state reference function over the leading axis of the arrays."""
    return np.array(
        [
            fn(*(a[k] for a in arrays), **{name: v[k] for name, v in kwargs.items()})
            for k in range(len(arrays[0]))
        ]
    )


@pytest.mark.parametrize("seed", range(6))
def test_kernels_equal_reference(seed):
    """Kernels (node plan, compiled) and the reference recursions are independent codings."""
    rng = np.random.default_rng(900 + seed)
    model = random_model(14, rng=rng, joint_types=ALL)
    n = 9
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    f = rng.normal(size=(n, model.n_bodies, 6))
    for ff in (None, f):
        kw = {} if ff is None else {"f_ext": ff}
        tau = rnea(model, q, qd, qdd, f_ext=ff)
        ref = _loop(lambda *x, **k: reference.rnea(model, *x, **k), q, qd, qdd, **kw)
        np.testing.assert_allclose(tau, ref, atol=1e-9 * max(1.0, np.abs(ref).max()))
        acc = aba(model, q, qd, tau, f_ext=ff)
        ref = _loop(lambda *x, **k: reference.aba(model, *x, **k), q, qd, tau, **kw)
        np.testing.assert_allclose(acc, ref, atol=1e-8)
        np.testing.assert_allclose(acc, qdd, atol=1e-8)
    ref = _loop(lambda x: reference.crba(model, x), q)
    np.testing.assert_allclose(crba(model, q), ref, atol=1e-10)


def test_fixed_root_and_fixed_chains():
    """Bodies welded to the ground or to other bodies are merged correctly."""
    m = Model("welded")
    m.add_body("base", "ground", "fixed", position=[0.1, 0.2, 0.3], mass=5.0)
    m.add_body(
        "a",
        "base",
        {"type": "revolute", "axis": [0, 0.6, 0.8]},
        position=[0, 0, 0.2],
        mass=1.0,
        inertia=np.diag([0.01, 0.01, 0.02]),
    )
    m.add_body("plate", "a", "fixed", position=[0.3, 0, 0], mass=2.0, com=[0.1, 0.05, 0])
    m.add_body(
        "b",
        "plate",
        {"type": "euler", "sequence": "ZXY"},
        position=[0, 0.1, 0],
        mass=1.5,
        com=[0, 0, -0.2],
        inertia=np.diag([0.02, 0.03, 0.01]),
    )
    rng = np.random.default_rng(3)
    q = random_q(m, rng=rng, size=4)
    qd = rng.normal(size=(4, m.nv))
    qdd = rng.normal(size=(4, m.nv))
    f = rng.normal(size=(4, m.n_bodies, 6))
    tau = rnea(m, q, qd, qdd, f_ext=f)
    ref = _loop(lambda *x, **k: reference.rnea(m, *x, **k), q, qd, qdd, f_ext=f)
    np.testing.assert_allclose(tau, ref, atol=1e-10)
    np.testing.assert_allclose(crba(m, q), _loop(lambda x: reference.crba(m, x), q), atol=1e-10)
    np.testing.assert_allclose(aba(m, q, qd, tau, f_ext=f), qdd, atol=1e-9)


def test_plan_is_cached_and_refreshed():
    m = Model("one")
    m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0, com=[1, 0, 0])
    p1 = _node_plan.plan(m)
    assert _node_plan.plan(m) is p1
    m.add_body("b", "a", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    assert _node_plan.plan(m) is not p1
    assert rnea(m, np.zeros(2), np.zeros(2), np.zeros(2)).shape == (2,)


def test_singular_names_the_body():
    m = Model("arm")
    m.add_body("upper", "ground", {"type": "revolute", "axis": [0, 1, 0]}, mass=2.0)
    m.add_body("tip", "upper", {"type": "spherical"}, position=[0, 0, -0.3], mass=0.0)
    with pytest.raises(SimulationError, match="tip"):
        aba(m, [0.0, 0, 0, 0, 1], np.zeros(4), np.ones(4))
    # many frames: the frame-block kernel detects it too
    q = np.tile([0.0, 0, 0, 0, 1], (40, 1))
    with pytest.raises(SimulationError, match="tip"):
        aba(m, q, np.zeros((40, 4)), np.ones((40, 4)))


@pytest.mark.parametrize("seed", range(4))
def test_kinematics_kernel_equals_numpy_forward_kinematics(seed):
    from ahbm.kinematics import forward_kinematics

    rng = np.random.default_rng(950 + seed)
    model = random_model(11, rng=rng, joint_types=ALL)
    n = 5
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    kin = forward_kinematics(model, q, qd, np.zeros((n, model.nv)))
    Rw, pw, v, a, Sw = _dispatch.kinematics(model, q, qd)
    np.testing.assert_allclose(Rw, kin.transforms[..., :3, :3], atol=1e-12)
    np.testing.assert_allclose(pw, kin.transforms[..., :3, 3], atol=1e-12)
    np.testing.assert_allclose(v, kin.velocities, atol=1e-11)
    np.testing.assert_allclose(a, kin.accelerations, atol=1e-10)
    # the world DOF columns map q̇ to the world spatial velocity of every body:
    # [ω; v_O] about the world origin, v_O = v_body_origin − ω × p
    for b in range(model.n_bodies):
        w_world = np.einsum("nij,nj->ni", Rw[:, b], v[:, b, :3])
        vo_world = np.einsum("nij,nj->ni", Rw[:, b], v[:, b, 3:]) - np.cross(w_world, pw[:, b])
        sup = [j for j in model.supports[b] if model.joint_nv[j]]
        dofs = [
            k for j in sup for k in range(model.v_index[j], model.v_index[j] + model.joint_nv[j])
        ]
        twist = np.einsum("nik,nk->ni", Sw[:, :, dofs], qd[:, dofs])
        np.testing.assert_allclose(twist[:, :3], w_world, atol=1e-11)
        np.testing.assert_allclose(twist[:, 3:], vo_world, atol=1e-11)


def test_kernels_in_threads_give_the_same_results():
    """The kernels release the GIL; concurrent calls do not share state."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(77)
    model = random_model(9, rng=rng, joint_types=ALL)
    n = 200
    qs = [random_q(model, rng=rng, size=n) for _ in range(4)]
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    serial = [rnea(model, q, qd, qdd) for q in qs]
    with ThreadPoolExecutor(4) as ex:
        threaded = list(ex.map(lambda q: rnea(model, q, qd, qdd), qs))
    for a, b in zip(serial, threaded, strict=True):
        np.testing.assert_array_equal(a, b)
