"""The numpy codings of the kinematics and RNEA kernels against the compiled kernels.

Both sides are called with the same arguments (the node plan, the node
coordinates θ for models with custom joints, as ``dispatch._custom_rnea``
does) and the same pre-filled outputs, so that the entries a kernel leaves
alone must be left alone by its numpy coding too.

Tolerance: both sides evaluate the same formulas in float64; they differ by
the sine and cosine (libm against the kernels' polynomial, 1 ulp), the order
of some sums and BLAS in the 6x6 inertia products. Those differences grow with
the depth of the tree, a few ulp per node: ``1e-12 * (1 + max|value|)`` leaves
a margin of about 1000 over the largest difference seen (~1e-15 relative).
"""

import subprocess
import sys

import numpy as np
import pytest
from sample_data import SHARED, needs_shared

from ahbm._engine import dispatch
from ahbm._engine.arrays import SPH
from ahbm._engine.jit_crba import kinematics_kernel
from ahbm._engine.jit_rnea import rnea_block_kernel
from ahbm._engine.node_plan import plan
from ahbm._engine.numpy_kernels import kinematics_numpy, rnea_numpy
from ahbm.kinematics.configuration import random_model, random_q
from ahbm.kinematics.joints import JOINT_TYPES

RTOL = 1e-12
FRAMES = (1, 3, 4, 17, 300)
SENTINEL = 7.25  # pre-filled outputs: an entry not written keeps it on both sides


def _example_models():
    from ahbm.models.arm import arm_model
    from ahbm.models.fifteen_segment import human15
    from ahbm.models.head_neck import head_neck_model
    from ahbm.models.heiman import heiman_model
    from ahbm.models.pendulums import double_pendulum_3d, single_pendulum, triple_pendulum_euler
    from ahbm.models.whole_body import whole_body_model

    return {
        "single_pendulum": single_pendulum,
        "double_pendulum_3d": double_pendulum_3d,
        "double_pendulum_3d_XZX": lambda: double_pendulum_3d(sequence="XZX"),
        "triple_pendulum_euler": triple_pendulum_euler,
        "arm": arm_model,
        "human15": human15,
        "whole_body": whole_body_model,
        "heiman": heiman_model,
        "head_neck": head_neck_model,
    }


EXAMPLES = tuple(_example_models())


def _random(seed, n_bodies=12):
    rng = np.random.default_rng(seed)
    return random_model(
        n_bodies, rng=rng, joint_types=tuple(JOINT_TYPES), child_offsets=bool(seed % 2)
    )


def _state(model, N, rng, scale=1.0):
    """Node coordinates, rates and accelerations (θ for custom joints) of N random frames."""
    p = plan(model)
    q = random_q(model, rng=rng, size=N, scale=scale)
    qd = rng.normal(size=(N, model.nv))
    qdd = rng.normal(size=(N, model.nv))
    if p.custom is None:
        return p, q, qd, qdd
    th, thd, thdd, _, _ = dispatch._theta_state(p, q, qd, qdd)
    return p, th, thd, thdd


def _rnea(fn, p, q, qd, qdd, fx, g, check=False):
    tau = np.full((q.shape[0], qd.shape[1]), SENTINEL)
    use_fx = fx is not None
    fxa = np.ascontiguousarray(fx) if use_fx else np.zeros((1, 1, 6))
    ret = fn(
        p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.I6,
        p.fast, p.massive, q, qd, qdd, fxa, use_fx, g, tau, check,
    )  # fmt: skip
    return ret, tau


def _kinematics(fn, model, p, q, qd, use_qd, use_cols):
    N, nb, nth = q.shape[0], model.n_bodies, (qd.shape[1] if qd is not None else model.nv)
    if p.custom is not None:
        nth = p.custom.nv + p.custom.n_c
    outs = [
        np.full((N, nb, 3, 3), SENTINEL),
        np.full((N, nb, 3), SENTINEL),
        np.full((N, nb, 6) if use_qd else (1, 1, 6), SENTINEL),
        np.full((N, nb, 6) if use_qd else (1, 1, 6), SENTINEL),
        np.full((N, 6, nth) if use_cols else (1, 6, 1), SENTINEL),
    ]
    ints, E, tax, _ = dispatch._packed(p)
    ret = fn(
        ints, E, tax, p.body_node, p.body_E, p.body_t, q,
        qd if use_qd else np.zeros((1, 1)), use_qd, use_cols, *outs,
    )  # fmt: skip
    return ret, outs


def _close(got, want, what=""):
    scale = 1.0 + np.abs(want).max(initial=0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=RTOL * scale, err_msg=what)


def _compare_rnea(model, N, seed, with_fx, gravity, scale=1.0):
    rng = np.random.default_rng(seed)
    p, q, qd, qdd = _state(model, N, rng, scale)
    fx = rng.normal(size=(N, p.n, 6)) if with_fx else None
    g = np.array(model.gravity, dtype=float) if gravity else np.zeros(3)
    r_jit, tau_jit = _rnea(rnea_block_kernel, p, q, qd, qdd, fx, g)
    r_np, tau_np = _rnea(rnea_numpy, p, q, qd, qdd, fx, g)
    assert r_np == r_jit == 0
    assert not np.any(tau_jit == SENTINEL)  # the block kernel writes every entry
    _close(tau_np, tau_jit, "tau")
    return np.abs(tau_np - tau_jit).max(initial=0.0) / (1 + np.abs(tau_jit).max(initial=0.0))


def _compare_kinematics(model, N, seed, use_qd=True, use_cols=True):
    rng = np.random.default_rng(seed)
    p, q, qd, _ = _state(model, N, rng)
    r_jit, jit = _kinematics(kinematics_kernel, model, p, q, qd, use_qd, use_cols)
    r_np, num = _kinematics(kinematics_numpy, model, p, q, qd, use_qd, use_cols)
    assert r_np is None and r_jit is None
    for name, a, b in zip(("Rw", "pw", "v", "a", "Sw"), num, jit, strict=True):
        np.testing.assert_array_equal(a == SENTINEL, b == SENTINEL, err_msg=name)
        _close(a, b, name)


# ----------------------------------------------------------------------------
# RNEA
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("N", FRAMES)
def test_rnea_example_models(name, N):
    model = _example_models()[name]()
    for with_fx in (False, True):
        for gravity in (False, True):
            _compare_rnea(model, N, 10 + N, with_fx, gravity)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("N", FRAMES)
def test_rnea_random_trees_every_joint_type(seed, N):
    model = _random(seed)
    for with_fx in (False, True):
        for gravity in (False, True):
            _compare_rnea(model, N, 100 * seed + N, with_fx, gravity)


@pytest.mark.parametrize("joint", [j for j in JOINT_TYPES if j != "fixed"])
def test_rnea_chains_of_one_joint_type(joint):
    """A chain of one joint type (with fixed bodies merged in): each node kind in depth."""
    rng = np.random.default_rng(len(joint))
    model = random_model(8, rng=rng, joint_types=(joint, "fixed"), child_offsets=True)
    for N in (1, 17):
        _compare_rnea(model, N, 7, True, True)


def test_rnea_large_values():
    """Large angles (far from the first turn) and large rates: the tolerance scales with them."""
    model = _random(3)
    _compare_rnea(model, 17, 5, True, True, scale=50.0)


def test_rnea_no_frames():
    p, q, qd, qdd = _state(_random(1), 0, np.random.default_rng(0))
    ret, tau = _rnea(rnea_numpy, p, q, qd, qdd, None, np.zeros(3), check=True)
    assert ret == 0 and tau.shape == (0, qd.shape[1])


@needs_shared
@pytest.mark.parametrize("N", FRAMES)
def test_rnea_opensim_custom_joints(N):
    from ahbm.opensim import read_osim

    model = read_osim(SHARED / "opensim" / "subject01.osim")
    assert plan(model).custom is not None
    for with_fx in (False, True):
        for gravity in (False, True):
            _compare_rnea(model, N, 3 + N, with_fx, gravity, scale=0.5)


# ----------------------------------------------------------------------------
# The check path
# ----------------------------------------------------------------------------


def _model_with_quaternion():
    for seed in range(50):
        model = _random(seed)
        if np.any(plan(model).kind == SPH):
            return model
    raise AssertionError("no random model with a quaternion node")  # pragma: no cover


@pytest.mark.parametrize("where", ["q", "qd", "qdd"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("N", (1, 17))
def test_check_rejects_non_finite_input(where, bad, N):
    model = _model_with_quaternion()
    rng = np.random.default_rng(1)
    p, q, qd, qdd = _state(model, N, rng)
    x = {"q": q, "qd": qd, "qdd": qdd}[where]
    x[N - 1, x.shape[1] // 2] = bad
    g = np.array(model.gravity, dtype=float)
    r_jit, tau_jit = _rnea(rnea_block_kernel, p, q, qd, qdd, None, g, check=True)
    r_np, tau_np = _rnea(rnea_numpy, p, q, qd, qdd, None, g, check=True)
    assert r_np == r_jit == 1
    assert np.all(tau_np == SENTINEL) and np.all(tau_jit == SENTINEL)  # nothing computed
    # without the check both compute (non-finite results), and return 0
    with np.errstate(all="raise"):  # the numpy coding raises no floating-point warning
        r_np, tau_np = _rnea(rnea_numpy, p, q, qd, qdd, None, g, check=False)
    r_jit, tau_jit = _rnea(rnea_block_kernel, p, q, qd, qdd, None, g, check=False)
    assert r_np == r_jit == 0
    assert not np.all(np.isfinite(tau_np)) and not np.all(np.isfinite(tau_jit))


@pytest.mark.parametrize("N", (1, 4, 17))
def test_check_rejects_zero_quaternion(N):
    model = _model_with_quaternion()
    rng = np.random.default_rng(2)
    p, q, qd, qdd = _state(model, N, rng)
    i0 = p.qi[np.flatnonzero(p.kind == SPH)[0]]
    g = np.array(model.gravity, dtype=float)
    q[N // 2, i0 : i0 + 4] = 1e-10  # |q|² = 4e-20 < 1e-18: zero
    for fn in (rnea_block_kernel, rnea_numpy):
        ret, tau = _rnea(fn, p, q, qd, qdd, None, g, check=True)
        assert ret == 1 and np.all(tau == SENTINEL)
    q[N // 2, i0 : i0 + 4] = 1e-9  # |q|² = 4e-18: accepted (normalized)
    r_jit, tau_jit = _rnea(rnea_block_kernel, p, q, qd, qdd, None, g, check=True)
    r_np, tau_np = _rnea(rnea_numpy, p, q, qd, qdd, None, g, check=True)
    assert r_np == r_jit == 0
    _close(tau_np, tau_jit)


def test_quaternions_need_not_be_unit():
    """The kernels normalize each quaternion: a scaled one gives the same result."""
    model = _model_with_quaternion()
    rng = np.random.default_rng(4)
    p, q, qd, qdd = _state(model, 5, rng)
    for k in np.flatnonzero(p.kind == SPH):
        q[:, p.qi[k] : p.qi[k] + 4] *= rng.uniform(0.1, 10.0, size=(5, 1))
    g = np.array(model.gravity, dtype=float)
    _, tau_jit = _rnea(rnea_block_kernel, p, q, qd, qdd, None, g)
    _, tau_np = _rnea(rnea_numpy, p, q, qd, qdd, None, g)
    _close(tau_np, tau_jit)


# ----------------------------------------------------------------------------
# Kinematics
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("N", FRAMES)
def test_kinematics_example_models(name, N):
    model = _example_models()[name]()
    _compare_kinematics(model, N, 20 + N)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("N", FRAMES)
def test_kinematics_random_trees_every_joint_type(seed, N):
    _compare_kinematics(_random(seed), N, 200 * seed + N)


@pytest.mark.parametrize("use_qd", [False, True])
@pytest.mark.parametrize("use_cols", [False, True])
def test_kinematics_optional_outputs(use_qd, use_cols):
    """Without q̇ or without columns the dummy outputs are left alone."""
    for seed in range(4):
        _compare_kinematics(_random(seed), 4, seed, use_qd, use_cols)


@pytest.mark.parametrize("joint", [j for j in JOINT_TYPES if j != "fixed"])
def test_kinematics_chains_of_one_joint_type(joint):
    rng = np.random.default_rng(len(joint))
    model = random_model(8, rng=rng, joint_types=(joint, "fixed"), child_offsets=True)
    _compare_kinematics(model, 17, 3)


def test_kinematics_body_welded_to_the_ground():
    from ahbm.kinematics import Model

    m = Model("welded")
    m.add_body("base", "ground", "fixed", position=[0.1, 0.2, 0.3], mass=5.0)
    m.add_body("a", "base", {"type": "revolute", "axis": [0, 0.6, 0.8]}, mass=1.0)
    m.add_body("b", "a", {"type": "spherical"}, position=[0, 0, 0.4], mass=1.0)
    assert plan(m).body_node[0] < 0
    _compare_kinematics(m, 17, 0)
    _compare_rnea(m, 17, 0, True, True)


@needs_shared
@pytest.mark.parametrize("N", FRAMES)
def test_kinematics_opensim_custom_joints(N):
    from ahbm.opensim import read_osim

    model = read_osim(SHARED / "opensim" / "subject01.osim")
    _compare_kinematics(model, N, 30 + N)


# ----------------------------------------------------------------------------
# No numba
# ----------------------------------------------------------------------------


def test_module_does_not_import_numba_scipy_or_pandas():
    code = (
        "import sys, ahbm._engine.numpy_kernels\n"
        "bad = [m for m in ('numba', 'scipy', 'pandas') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
