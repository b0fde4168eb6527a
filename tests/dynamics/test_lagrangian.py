"""The recursive Lagrangian (Chung 2009) against RNEA, its analytic derivatives and M q̇."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import crba, rnea, rnea_derivatives
from ahbm.dynamics.lagrangian import generalized_momentum_rate, lagrangian_dynamics
from ahbm.errors import ModelError
from ahbm.kinematics import Model
from ahbm.kinematics.configuration import random_model
from ahbm.kinematics.dh import DHRow, dh_model
from ahbm.kinematics.rotations import euler_to_matrix

TOL = 1e-10


def _serial(rng, n):
    m = Model("chain", gravity=rng.normal(size=3) * 5)
    parent = "ground"
    for i in range(n):
        a = rng.normal(size=3)
        d = rng.uniform(0.05, 0.3, 3)
        m.add_body(f"l{i}", parent, {"type": "revolute", "axis": a / np.linalg.norm(a)},
                   position=rng.normal(size=3) * 0.4,
                   rotation=euler_to_matrix(rng.normal(size=3), "XYZ"),
                   mass=rng.uniform(0.5, 3.0), com=rng.normal(size=3) * 0.2,
                   inertia=np.diag([d[0] + d[1], d[1] + d[2], d[0] + d[2]]))  # fmt: skip
        parent = f"l{i}"
    return m


def _dh_tree(convention):
    """A Santos-like branch: a pelvis row per child branch (Chung §2.3.1), two legs."""
    rows = [DHRow("pelvis", theta=0.3, d=0.1, a=0.05, alpha=np.pi / 2, mass=10.0,
                  com=(0.0, 0.05, 0.0), inertia=np.diag([0.1, 0.12, 0.08]), coordinate="p"),
            DHRow("pelvis_r", theta=-0.2, d=0.05, parent="ground", coordinate="p",
                  **({"a": 0.05, "alpha": np.pi / 2} if convention == "modified"
                     else {"a": 0.1, "alpha": -np.pi / 2}))]  # fmt: skip
    for side, par in (("l", "pelvis"), ("r", "pelvis_r")):
        rows += [
            DHRow(f"hip_{side}", a=0.4, alpha=0.4, parent=par, mass=7.0, com=(-0.2, 0.0, 0.0),
                  inertia=np.diag([0.02, 0.1, 0.1])),
            DHRow(f"knee_{side}", theta=0.2, a=0.4, alpha=-0.3, mass=3.5, com=(-0.2, 0.01, 0.0),
                  inertia=np.diag([0.01, 0.05, 0.05])),
            DHRow(f"foot_{side}", joint="fixed", a=0.1, mass=1.0, com=(0.05, 0.0, 0.0),
                  inertia=np.diag([0.002, 0.004, 0.004])),
        ]  # fmt: skip
    return dh_model(rows, convention=convention)


MODELS = {
    "serial chain": lambda rng: _serial(rng, 6),
    "branched tree": lambda rng: random_model(
        9, rng=rng, joint_types=("revolute", "fixed"), child_offsets=True
    ),
    "DH standard": lambda rng: _dh_tree("standard"),
    "DH modified": lambda rng: _dh_tree("modified"),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_lagrangian_equals_rnea_and_its_derivatives(name):
    rng = np.random.default_rng(len(name))
    model = MODELS[name](rng)
    q, qd, qdd = (rng.normal(size=(5, model.nv)) for _ in range(3))
    lag = lagrangian_dynamics(model, q, qd, qdd)
    ref = rnea_derivatives(model, q, qd, qdd)
    for field in ("tau", "dtau_dq", "dtau_dqd", "mass_matrix"):
        a, b = getattr(lag, field), getattr(ref, field)
        err = np.abs(a - b).max() / np.abs(b).max()
        assert err < TOL, (field, err)
    np.testing.assert_allclose(lag.tau, rnea(model, q, qd, qdd), rtol=0, atol=1e-10)
    only = lagrangian_dynamics(model, q[0], qd[0], None, gradients=False)
    assert only.dtau_dq is None
    np.testing.assert_allclose(only.tau, rnea(model, q[0], qd[0], None), atol=1e-10)


def test_generalized_momentum_rate_uses_the_corrected_eq_4_23():
    """p = M q̇ and ṗ = d/dt (M q̇) along a trajectory (central differences in time)."""
    rng = np.random.default_rng(5)
    model = random_model(6, rng=rng, joint_types=("revolute", "fixed"), child_offsets=True)
    c = rng.normal(size=(3, model.nv))

    def traj(t):
        return c[0] + c[1] * t + c[2] * t**2, c[1] + 2 * c[2] * t, 2 * c[2] + 0 * t

    t0, h = 0.3, 1e-5
    q, qd, qdd = traj(t0)
    p, pdot = generalized_momentum_rate(model, q, qd, qdd)
    np.testing.assert_allclose(p, crba(model, q) @ qd, rtol=1e-12, atol=1e-12)
    fd = [crba(model, traj(t)[0]) @ traj(t)[1] for t in (t0 + h, t0 - h)]
    fd = (fd[0] - fd[1]) / (2 * h)
    np.testing.assert_allclose(pdot, fd, rtol=1e-7, atol=1e-7 * np.abs(fd).max())
    # Ṁ q̇ is not small here, so the D'' term of the corrected eq. 4.23 is exercised
    assert np.abs(pdot - crba(model, q) @ qdd).max() > 1e-3


def test_closed_form_pendulum():
    m = Model(gravity=[0, 0, -9.81])
    m.add_body("a", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=2.0,
               com=[0, 0.5, 0], inertia=np.zeros((3, 3)))  # fmt: skip
    r = lagrangian_dynamics(m, [0.4], [1.0], [3.0])
    expected = 2.0 * 0.25 * 3.0 + 2.0 * 9.81 * 0.5 * np.cos(0.4)
    np.testing.assert_allclose(r.tau, [expected], rtol=1e-13)
    np.testing.assert_allclose(r.dtau_dq, [[-2.0 * 9.81 * 0.5 * np.sin(0.4)]], rtol=1e-13)


def test_other_joint_types_raise_model_error_naming_the_body():
    m = Model()
    m.add_body("thorax", "ground", {"type": "spherical"}, mass=1.0)
    with pytest.raises(ModelError, match="thorax"):
        lagrangian_dynamics(m, [0, 0, 0, 1.0], None, None)
    with pytest.raises(ModelError, match="thorax"):
        generalized_momentum_rate(m, [0, 0, 0, 1.0], None, None)
