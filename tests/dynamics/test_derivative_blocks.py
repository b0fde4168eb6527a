"""The frame-block RNEA-derivative kernel against the frame-by-frame one (same formulas).

``rnea_derivatives_block_kernel`` runs the operations of
``rnea_derivatives_world_kernel`` in the same order on blocks of frames, so the
two must agree bit for bit; the frame-by-frame kernel is itself compared with
the node-frame tangent kernel, finite differences and Pinocchio elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm._engine import dispatch, jit_common, node_plan
from ahbm._engine.jit_derivatives import rnea_derivatives_world_kernel
from ahbm._engine.jit_derivatives_block import _DERIV_B, rnea_derivatives_block_kernel
from ahbm.dynamics import rnea_derivatives
from ahbm.kinematics import Model, random_q
from ahbm.kinematics.configuration import random_model
from ahbm.kinematics.joints import JOINT_TYPES

ALL = tuple(t for t in JOINT_TYPES if t != "custom")
MODELS = {
    "revolute chain": (("revolute",), False),
    "every joint type": (ALL, True),
    "quaternions": (("spherical", "free", "revolute"), True),
    "prismatic": (("prismatic", "revolute"), True),
}
FORCES = ["none", "local", "world"]


def _principal_axes_model():
    """Free root, Euler-angle chains about the coordinate axes (the nodes whose sines and
    cosines come from the vectorized sincos), with and without joint-frame offsets."""
    m = Model("principal")
    m.add_body("pelvis", "ground", {"type": "free"}, mass=10.0, inertia=np.diag([0.1, 0.2, 0.15]))
    parent = "pelvis"
    for k, axes in enumerate(([1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0])):
        m.add_body(
            f"b{k}", parent, {"type": "revolute", "axis": axes},
            position=(0.0, 0.1 * k, -0.3) if k % 2 else (0.0, 0.0, 0.0),
            rotation=None if k < 2 else np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0, 0, 1.0]]),
            mass=2.0 + k, com=[0.01, 0.02, -0.2], inertia=np.diag([0.02, 0.03, 0.01]),
        )  # fmt: skip
        parent = f"b{k}"
    m.add_body("arm", "pelvis", {"type": "spherical"}, position=(0.2, 0.0, 0.3), mass=1.5)
    return m


def _model(name, seed=0):
    rng = np.random.default_rng(seed + len(name))
    if name == "principal axes":
        return _principal_axes_model(), rng
    types, offsets = MODELS[name]
    return random_model(7, rng=rng, joint_types=types, child_offsets=offsets), rng


def _state(model, rng, n):
    q = random_q(model, rng=rng, size=n)
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def _run(kernel, model, q, qd, qdd, fx, fx_world):
    """The outputs (tau, dq, dqd, M) of one kernel over all frames, and its return code."""
    p = node_plan.plan(model)
    ptr, idx = dispatch._subtrees(model, p)
    N, nv = qd.shape
    out = [np.full((N, nv), np.nan)] + [np.full((N, nv, nv), np.nan) for _ in range(3)]
    use_fx = fx is not None
    fxa = fx if use_fx else np.zeros((1, 1, 6))
    rc = kernel(
        *dispatch._packed(p), ptr, idx, q, qd, qdd, fxa, use_fx, fx_world,
        dispatch._gravity(p, model), *out,
    )  # fmt: skip
    return rc, out


@pytest.mark.parametrize("name", [*MODELS, "principal axes"])
@pytest.mark.parametrize("force", FORCES)
@pytest.mark.parametrize("N", [1, 3, _DERIV_B, 2 * _DERIV_B + 5])
def test_block_kernel_equals_frame_kernel_bitwise(name, force, N):
    """Every frame of a block (full blocks, a shorter last block, N < B, N = 1)."""
    model, rng = _model(name)
    q, qd, qdd = _state(model, rng, N)
    fx = None if force == "none" else rng.normal(size=(N, node_plan.plan(model).n, 6))
    rc_b, blk = _run(rnea_derivatives_block_kernel, model, q, qd, qdd, fx, force == "world")
    rc_w, ref = _run(rnea_derivatives_world_kernel, model, q, qd, qdd, fx, force == "world")
    assert rc_b == rc_w == 0
    for x, y in zip(blk, ref, strict=True):
        assert np.isfinite(x).all()  # every entry written
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("force", FORCES)
def test_wrapper_methods_agree_with_custom_joints(force):
    """Through the kernel wrapper (custom joints: the chain rule on top) and the public call."""
    rng = np.random.default_rng(11)
    model = random_model(6, rng=rng, joint_types=("custom", "revolute", "spherical"))
    N = _DERIV_B + 7
    q, qd, qdd = _state(model, rng, N)
    fx = None if force == "none" else rng.normal(size=(N, node_plan.plan(model).n, 6))
    a = dispatch.rnea_derivatives(model, q, qd, qdd, fx, force == "world", "block")
    b = dispatch.rnea_derivatives(model, q, qd, qdd, fx, force == "world", "world")
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    d = rnea_derivatives(model, q, qd, qdd)
    one = rnea_derivatives(model, q[N - 1], qd[N - 1], qdd[N - 1])  # frame-by-frame kernel
    np.testing.assert_allclose(d.dtau_dq[N - 1], one.dtau_dq, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d.mass_matrix[N - 1], one.mass_matrix, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", ["q", "qd", "qdd", "quaternion"])
def test_block_kernel_refuses_non_finite_inputs(bad):
    model, rng = _model("quaternions")
    q, qd, qdd = _state(model, rng, _DERIV_B + 3)
    if bad == "quaternion":
        p = node_plan.plan(model)
        i0 = p.qi[int(np.flatnonzero(p.kind == jit_common.SPH)[0])]  # a quaternion
        q[_DERIV_B + 1, i0 : i0 + 4] = 0.0
    else:
        {"q": q, "qd": qd, "qdd": qdd}[bad][_DERIV_B + 1, 0] = np.nan
    rc, _ = _run(rnea_derivatives_block_kernel, model, q, qd, qdd, None, False)
    assert rc == 1
    assert dispatch.rnea_derivatives(model, q, qd, qdd) is None
