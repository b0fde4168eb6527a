"""Tests of ahbm.dynamics.inverse (RNEA) against closed forms and identities."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import (
    crba,
    gravity_torques,
    inverse_dynamics_residual,
    nonlinear_effects,
    rnea,
)
from ahbm.errors import DataError
from ahbm.kinematics import (
    Model,
    forward_kinematics,
    integrate_q,
    point_jacobian,
    potential_energy,
    random_model,
    random_q,
)
from ahbm.kinematics.joints import JOINT_TYPES

ALL = tuple(JOINT_TYPES)


@pytest.fixture(params=[(0, 1), (1, 4), (2, 9)], ids=lambda p: f"seed{p[0]}-n{p[1]}")
def tree(request):
    seed, n = request.param
    rng = np.random.default_rng(200 + seed)
    model = random_model(n, rng=rng, joint_types=ALL)
    return model, rng


def test_single_pendulum_closed_form():
    m, l, I, g = 2.0, 0.7, 0.05, 9.81
    model = Model(gravity=[0, 0, -g])
    model.add_body("rod", "ground", {"type": "revolute", "axis": [0, 1, 0]}, mass=m,
                   com=[0, 0, -l], inertia=np.diag([I, I, 0.01]))  # fmt: skip
    th = np.linspace(-2, 2, 7)
    thd = np.linspace(-1, 3, 7)
    thdd = np.linspace(3, -2, 7)
    tau = rnea(model, th[:, None], thd[:, None], thdd[:, None])[:, 0]
    # rotation about +y moves the bob towards +x: potential m g l (1 - cos θ)
    np.testing.assert_allclose(tau, (I + m * l**2) * thdd + m * g * l * np.sin(th), rtol=1e-13)


def test_rnea_decomposition(tree):
    model, rng = tree
    q = random_q(model, rng=rng, size=3)
    qd = rng.normal(size=(3, model.nv))
    qdd = rng.normal(size=(3, model.nv))
    H = crba(model, q)
    tau = rnea(model, q, qd, qdd)
    np.testing.assert_allclose(
        tau, (H @ qdd[..., None])[..., 0] + nonlinear_effects(model, q, qd), atol=1e-10
    )
    np.testing.assert_allclose(
        gravity_torques(model, q), rnea(model, q, np.zeros_like(qd), np.zeros_like(qd)), atol=1e-12
    )
    # C(q, q̇) q̇ is quadratic in q̇
    c1 = nonlinear_effects(model, q, qd) - gravity_torques(model, q)
    c2 = nonlinear_effects(model, q, 2 * qd) - gravity_torques(model, q)
    np.testing.assert_allclose(c2, 4 * c1, atol=1e-10)


def test_gravity_torques_are_potential_gradient(tree):
    model, rng = tree
    q = random_q(model, rng=rng)
    h = 1e-6
    g_fd = np.empty(model.nv)
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = h
        g_fd[k] = (
            potential_energy(model, integrate_q(model, q, e))
            - potential_energy(model, integrate_q(model, q, -e))
        ) / (2 * h)
    np.testing.assert_allclose(gravity_torques(model, q), g_fd, atol=1e-6)


def test_external_point_force_maps_through_jacobian(tree):
    """τ(f_ext) = τ(0) − J_pᵀ F for a force F at a body point."""
    model, rng = tree
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    qdd = rng.normal(size=model.nv)
    b = model.n_bodies - 1
    r = np.array([0.1, 0.2, -0.3])
    F = rng.normal(size=3)
    T = forward_kinematics(model, q).transforms[b]
    pw = T[:3, :3] @ r + T[:3, 3]
    f_ext = np.zeros((model.n_bodies, 6))
    f_ext[b] = np.r_[np.cross(pw, F), F]
    tau = rnea(model, q, qd, qdd, f_ext=f_ext)
    ref = rnea(model, q, qd, qdd) - point_jacobian(model, q, b, r).T @ F
    np.testing.assert_allclose(tau, ref, atol=1e-10)
    np.testing.assert_allclose(
        inverse_dynamics_residual(model, q, qd, qdd, tau, f_ext=f_ext), 0.0, atol=1e-10
    )


def test_batch_equals_per_frame(tree):
    model, rng = tree
    q = random_q(model, rng=rng, size=(2, 2))
    qd = rng.normal(size=(2, 2, model.nv))
    qdd = rng.normal(size=(2, 2, model.nv))
    f = rng.normal(size=(2, 2, model.n_bodies, 6))
    tau = rnea(model, q, qd, qdd, f_ext=f)
    for idx in np.ndindex(2, 2):
        np.testing.assert_allclose(
            tau[idx], rnea(model, q[idx], qd[idx], qdd[idx], f_ext=f[idx]), atol=1e-12
        )
    # a single f_ext broadcasts over frames
    tau1 = rnea(model, q, qd, qdd, f_ext=f[0, 0])
    np.testing.assert_allclose(tau1[1, 1], rnea(model, q[1, 1], qd[1, 1], qdd[1, 1], f_ext=f[0, 0]))


def test_errors():
    rng = np.random.default_rng(1)
    model = random_model(3, rng=rng)
    q = random_q(model, rng=rng)
    z = np.zeros(model.nv)
    with pytest.raises(DataError, match="Expected `qdd` to have shape"):
        rnea(model, q, z, z[:-1])
    with pytest.raises(DataError, match=r"Expected `f_ext` to have shape \(\.\.\., 3, 6\)"):
        rnea(model, q, z, z, f_ext=np.zeros((2, 6)))
    with pytest.raises(DataError, match="`f_ext_frame` must be one of"):
        rnea(model, q, z, z, f_ext=np.zeros((3, 6)), f_ext_frame="body")
    with pytest.raises(DataError, match="non-finite"):
        rnea(model, q, z, np.full(model.nv, np.inf))
    with pytest.raises(DataError, match="Expected `tau`"):
        inverse_dynamics_residual(model, q, z, z, np.zeros(model.nv + 2))


def test_batch_equals_frames():
    """Long trials are processed in chunks of frames; results do not depend on chunking."""
    rng = np.random.default_rng(5)
    model = random_model(4, rng=rng, joint_types=ALL)
    n = 150
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    f = rng.normal(size=(n, model.n_bodies, 6))
    whole = rnea(model, q, qd, qdd, f_ext=f)
    frames = np.array([rnea(model, q[k], qd[k], qdd[k], f_ext=f[k]) for k in range(n)])
    np.testing.assert_allclose(whole, frames, atol=1e-12)
    np.testing.assert_allclose(
        gravity_torques(model, q), rnea(model, q, 0 * qd, 0 * qdd), atol=1e-12
    )
