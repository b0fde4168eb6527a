"""The recursive Lagrangian (Chung 2009) against RNEA, its analytic derivatives and M q̇."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import crba, rnea, rnea_derivatives
from ahbm.dynamics.lagrangian import generalized_momentum_rate, lagrangian_dynamics
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import Model, point_position
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


def _dh_prismatic():
    """Three prismatic rows (a gantry, as Chung's global translations) carrying an arm."""
    H = np.pi / 2
    rows = [DHRow("tx", H, 0.0, 0.0, H, "prismatic", mass=2.0, com=(0.1, 0.0, 0.0),
                  inertia=np.diag([0.01, 0.02, 0.02])),
            DHRow("ty", H, 0.3, 0.0, H, "prismatic", mass=1.0),
            DHRow("tz", H, 0.8, 0.1, H, "prismatic", mass=1.5, com=(0.0, 0.05, 0.0),
                  inertia=np.diag([0.02, 0.01, 0.02])),
            DHRow("r1", 0.2, 0.0, 0.3, -H, mass=3.0, com=(-0.15, 0.0, 0.02),
                  inertia=np.diag([0.01, 0.03, 0.03])),
            DHRow("r2", 0.0, 0.1, 0.25, 0.0, mass=1.0, com=(-0.1, 0.01, 0.0),
                  inertia=np.diag([0.004, 0.01, 0.01]))]  # fmt: skip
    return dh_model(rows)


MODELS = {
    "serial chain": lambda rng: _serial(rng, 6),
    "branched tree": lambda rng: random_model(
        9, rng=rng, joint_types=("revolute", "fixed"), child_offsets=True
    ),
    "DH standard": lambda rng: _dh_tree("standard"),
    "DH modified": lambda rng: _dh_tree("modified"),
    "with prismatic joints": lambda rng: random_model(
        9, rng=rng, joint_types=("prismatic", "revolute", "fixed"), child_offsets=True
    ),
    "DH prismatic": lambda rng: _dh_prismatic(),
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


@pytest.mark.parametrize("types", [("revolute", "fixed"), ("prismatic", "revolute", "fixed")])
def test_generalized_momentum_rate_uses_the_corrected_eq_4_23(types):
    """p = M q̇ and ṗ = d/dt (M q̇) along a trajectory (central differences in time)."""
    rng = np.random.default_rng(5 if len(types) == 2 else 1)
    model = random_model(6 + len(types), rng=rng, joint_types=types, child_offsets=True)
    assert {b.joint.type for b in model.bodies} == set(types)
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


def _prismatic_model(seed):
    rng = np.random.default_rng(seed)
    model = random_model(8, rng=rng, joint_types=("prismatic", "revolute", "fixed"),
                         child_offsets=True)  # fmt: skip
    assert {b.joint.type for b in model.bodies} == {"prismatic", "revolute", "fixed"}
    return model, rng


@pytest.mark.parametrize("frame", ["world", "local"])
def test_external_wrenches_equal_rnea_derivatives(frame):
    """World wrenches stay in the world, local ones move with their bodies: both derivatives."""
    model, rng = _prismatic_model(1)
    q, qd, qdd = (rng.normal(size=(4, model.nv)) for _ in range(3))
    f = rng.normal(size=(4, model.n_bodies, 6)) * 20
    f[:, 1] = 0.0  # a body without load
    lag = lagrangian_dynamics(model, q, qd, qdd, f_ext=f, f_ext_frame=frame)
    ref = rnea_derivatives(model, q, qd, qdd, f_ext=f, f_ext_frame=frame)
    for field in ("tau", "dtau_dq", "dtau_dqd", "mass_matrix"):
        a, b = getattr(lag, field), getattr(ref, field)
        assert np.abs(a - b).max() / np.abs(b).max() < TOL, field
    # the loads matter: without them τ and ∂τ/∂q differ
    bare = lagrangian_dynamics(model, q, qd, qdd)
    assert np.abs(bare.tau - lag.tau).max() > 1.0
    assert np.abs(bare.dtau_dq - lag.dtau_dq).max() > 1.0


def _fd_dq(model, q, qd, qdd, eps=1e-6, **loads):
    num = np.zeros(q.shape + (model.nv,))
    for k in range(model.nv):
        dq = np.zeros(model.nv)
        dq[k] = eps
        up = lagrangian_dynamics(model, q + dq, qd, qdd, gradients=False, **loads).tau
        down = lagrangian_dynamics(model, q - dq, qd, qdd, gradients=False, **loads).tau
        num[..., k] = (up - down) / (2 * eps)
    return num


def test_point_forces_against_rnea_and_finite_differences():
    """A world-fixed force at a body-fixed point (Chung eq 3.21): τ as the RNEA with the same
    wrench at this q; ∂τ/∂q (the point moves, the force does not) by central differences."""
    model, rng = _prismatic_model(4)
    q, qd, qdd = (rng.normal(size=(3, model.nv)) for _ in range(3))
    body, r = 6, np.array([0.1, -0.2, 0.05])
    F = rng.normal(size=(3, 3)) * 30
    forces = [(model.bodies[body].name, r, F), (2, [0.0, 0.1, 0.0], [0.0, 0.0, -40.0])]
    lag = lagrangian_dynamics(model, q, qd, qdd, point_forces=forces)
    f = np.zeros((3, model.n_bodies, 6))
    for b, point, force in forces:
        i = model.body_index(b)
        p = point_position(model, q, i, np.asarray(point, float))
        f[:, i, :3] += np.cross(p, force)
        f[:, i, 3:] += force
    ref = rnea_derivatives(model, q, qd, qdd, f_ext=f)
    np.testing.assert_allclose(lag.tau, ref.tau, rtol=0, atol=1e-10 * np.abs(ref.tau).max())
    np.testing.assert_allclose(lag.mass_matrix, ref.mass_matrix, atol=1e-11)
    np.testing.assert_allclose(lag.dtau_dqd, ref.dtau_dqd, atol=1e-11)
    num = _fd_dq(model, q, qd, qdd, point_forces=forces)
    scale = np.abs(lag.dtau_dq).max()
    assert np.abs(num - lag.dtau_dq).max() < 1e-7 * scale
    # ∂τ/∂q differs from the world wrench's (whose line of action is fixed)
    assert np.abs(lag.dtau_dq - ref.dtau_dq).max() > 1e-3 * scale


def test_santos_with_ground_reaction_and_backpack():
    """The 55-DOF Santos model (3 prismatic global DOFs): a ground reaction on the right foot
    (world wrench) and a 500 N backpack hung at a point of the upper trunk (point force)."""
    from ahbm.models import santos_model

    model = santos_model()
    rng = np.random.default_rng(8)
    q, qd, qdd = (0.2 * rng.normal(size=(2, model.nv)) for _ in range(3))
    foot, trunk = model.body_index("Q41"), model.body_index("Q12_right_arm")
    f = np.zeros((2, model.n_bodies, 6))
    f[:, foot] = [4.0, -9.0, 1.5, 60.0, -25.0, 900.0]
    pack = [(trunk, [0.0, -0.05, -0.12], [0.0, 0.0, -500.0])]
    lag = lagrangian_dynamics(model, q, qd, qdd, f_ext=f, point_forces=pack)
    p = point_position(model, q, trunk, np.array([0.0, -0.05, -0.12]))
    f2 = f.copy()
    f2[:, trunk, :3] = np.cross(p, [0.0, 0.0, -500.0])
    f2[:, trunk, 3:] = [0.0, 0.0, -500.0]
    ref = rnea_derivatives(model, q, qd, qdd, f_ext=f2)
    for field in ("tau", "dtau_dqd", "mass_matrix"):
        a, b = getattr(lag, field), getattr(ref, field)
        assert np.abs(a - b).max() / np.abs(b).max() < TOL, field
    num = _fd_dq(model, q, qd, qdd, f_ext=f, point_forces=pack)
    assert np.abs(num - lag.dtau_dq).max() < 1e-7 * np.abs(lag.dtau_dq).max()
    # without the backpack the Lagrangian's ∂τ/∂q equals the RNEA derivatives'
    only = lagrangian_dynamics(model, q, qd, qdd, f_ext=f)
    ref = rnea_derivatives(model, q, qd, qdd, f_ext=f)
    assert np.abs(only.dtau_dq - ref.dtau_dq).max() / np.abs(ref.dtau_dq).max() < TOL


def test_bad_point_forces_name_the_entry():
    model, _ = _prismatic_model(4)
    q = np.zeros(model.nq)
    with pytest.raises(DataError, match="point_forces"):
        lagrangian_dynamics(model, q, None, None, point_forces=("b0", [0, 0, 0], [0, 0, 1]))
    with pytest.raises(DataError, match=r"point_forces\[0\].*unknown body"):
        lagrangian_dynamics(model, q, None, None, point_forces=[("nobody", [0, 0, 0], [1, 0, 0])])
    with pytest.raises(DataError, match=r"point_forces\[1\]"):
        bad = [(0, [0, 0, 0], [1, 0, 0]), (0, [0, 0], [1, 0, 0])]
        lagrangian_dynamics(model, q, None, None, point_forces=bad)
    with pytest.raises(DataError, match="f_ext"):
        lagrangian_dynamics(model, q, None, None, f_ext=np.zeros((model.n_bodies, 5)))
