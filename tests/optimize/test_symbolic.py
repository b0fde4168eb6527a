"""Symbolic dynamics (CasADi) against the compiled numeric kernels at random states."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ahbm import dynamics, kinematics
from ahbm.errors import DataError, MissingDependencyError, ModelError
from ahbm.kinematics.configuration import random_model, random_q

ca = pytest.importorskip("casadi")

from ahbm.optimize.symbolic import CasadiOps, require_casadi, symbolic_dynamics  # noqa: E402

KINDS = {
    "revolute_chain": ("revolute",),
    "free_floating": ("revolute", "universal", "euler", "spherical", "free", "free_euler"),
    "custom": ("custom", "custom", "custom", "revolute", "prismatic", "planar"),
}


def _model(kind, seed):
    rng = np.random.default_rng(seed)
    m = random_model(6, rng=rng, joint_types=KINDS[kind], child_offsets=kind == "custom")
    return m, rng


def _np(x):
    return np.asarray(x, dtype=float).squeeze()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("seed", range(2))
def test_dynamics_functions_equal_the_numeric_kernels(kind, seed):
    m, rng = _model(kind, seed)
    if kind == "custom":
        assert "custom" in [b.joint.type for b in m.bodies]
    sd = symbolic_dynamics(m)
    for _ in range(3):
        q = random_q(m, rng=rng, scale=0.7)
        qd, qdd, tau = rng.normal(size=(3, m.nv))
        f = rng.normal(size=(m.n_bodies, 6))
        tol = dict(rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(
            _np(sd.inverse_dynamics(q, qd, qdd)), dynamics.rnea(m, q, qd, qdd), **tol
        )
        np.testing.assert_allclose(
            _np(sd.inverse_dynamics_ext(q, qd, qdd, f)),
            dynamics.rnea(m, q, qd, qdd, f_ext=f),
            **tol,
        )
        M = dynamics.crba(m, q)
        np.testing.assert_allclose(np.asarray(sd.mass_matrix(q)), M, **tol)
        np.testing.assert_allclose(_np(sd.bias(q, qd)), dynamics.nonlinear_effects(m, q, qd), **tol)
        # forward dynamics: a linear solve, so relative to the size of the answer
        a = dynamics.aba(m, q, qd, tau)
        scale = dict(rtol=1e-11, atol=1e-12 * max(1.0, np.abs(a).max()))
        np.testing.assert_allclose(_np(sd.forward_dynamics(q, qd, tau)), a, **scale)
        a = dynamics.aba(m, q, qd, tau, f_ext=f)
        np.testing.assert_allclose(_np(sd.forward_dynamics_ext(q, qd, tau, f)), a, **scale)
        np.testing.assert_allclose(_np(sd.com(q)), kinematics.center_of_mass(m, q), **tol)
        for b in range(m.n_bodies):
            r = rng.normal(size=3) * 0.2
            np.testing.assert_allclose(
                _np(sd.point_position(b, r)(q)), kinematics.point_position(m, q, b, r), **tol
            )
            np.testing.assert_allclose(
                _np(sd.point_velocity(m.body_names[b], r)(q, qd)),
                kinematics.point_velocity(m, q, qd, b, r),
                **tol,
            )


@pytest.mark.parametrize("seed", range(2))
def test_ground_reaction_zmp_against_balance_and_identity(seed):
    m, rng = _model("free_floating", seed + 10)
    sd = symbolic_dynamics(m)
    n, p0 = np.array([0.1, 0.2, 1.0]), np.array([0.0, 0.0, -0.3])
    Z = sd.zmp(ground_normal=n, ground_point=p0)
    for _ in range(3):
        q = random_q(m, rng=rng, scale=0.7)
        qd, qdd = rng.normal(size=(2, m.nv))
        ref = dynamics.zmp(m, q, qd, qdd, ground_normal=n, ground_point=p0, threshold=-np.inf)
        np.testing.assert_allclose(_np(Z(q, qd, qdd)), ref, rtol=1e-10, atol=1e-10)


def test_ground_reaction_equals_root_forces_of_a_floating_tree():
    rng = np.random.default_rng(3)
    m = random_model(5, rng=rng, joint_types=("revolute", "euler", "universal"))
    # one floating root: replace the first joint by a free_euler joint, keep one tree
    from ahbm.kinematics.tree import Model

    f = Model("floating", m.gravity)
    for i, b in enumerate(m.bodies):
        parent = (
            "ground"
            if i == 0
            else (m.body_names[m.parent[i]] if m.parent[i] >= 0 else m.body_names[0])
        )
        joint = {"type": "free_euler", "sequence": "ZXY"} if i == 0 else b.joint
        f.add_body(
            b.name, parent, joint, position=b.position, mass=b.mass, com=b.com, inertia=b.inertia
        )
    sd = symbolic_dynamics(f)
    q = random_q(f, rng=rng)
    qd, qdd = rng.normal(size=(2, f.nv))
    w = _np(sd.ground_reaction(q, qd, qdd))
    fe = np.zeros((f.n_bodies, 6))
    fe[0] = w  # the needed wrench on the root (about the world origin)
    tau = dynamics.rnea(f, q, qd, qdd, f_ext=fe)
    np.testing.assert_allclose(tau[:6], 0.0, atol=1e-9)


def test_casadi_ops_checks_shapes_and_unknown_functions():
    ops = CasadiOps()
    x = ca.SX.sym("x", 3)
    assert ops.input(x, (3,), "q").shape == (3, 1)
    with pytest.raises(DataError, match="`q`"):
        ops.input(x, (4,), "q")
    with pytest.raises(DataError, match="`q`"):
        ops.input(np.zeros(2), (3,), "q")
    with pytest.raises(DataError, match="symbol"):
        CasadiOps("DM")

    class Odd:
        pass

    with pytest.raises(ModelError, match="no CasADi form"):
        ops.function(Odd(), x[0], 0)
    with pytest.raises(ModelError, match="Model"):
        symbolic_dynamics("not a model")
    m, _ = _model("revolute_chain", 0)
    with pytest.raises(DataError, match="point"):
        symbolic_dynamics(m).point_position(0, [1.0, 2.0])


@pytest.mark.parametrize("kind", ["PolynomialFunction", "PiecewiseLinearFunction", "SimmSpline"])
def test_casadi_functions_equal_numeric_values_and_derivatives(kind):
    from ahbm.kinematics import functions as fn

    rng = np.random.default_rng(0)
    xs = np.sort(rng.uniform(-1, 1, 6))
    f = {
        "PolynomialFunction": fn.PolynomialFunction([0.3, -1.0, 0.5, 2.0]),
        "PiecewiseLinearFunction": fn.PiecewiseLinearFunction(xs, rng.normal(size=6)),
        "SimmSpline": fn.MultiplierFunction(fn.SimmSpline(xs, rng.normal(size=6)), 1.7),
    }[kind]
    ops = CasadiOps()
    x = ca.SX.sym("x")
    pts = np.concatenate([rng.uniform(-1.5, 1.5, 40), [xs[2] + 1e-3]])
    for d in range(3):
        F = ca.Function("f", [x], [ops.function(f, x, d)])
        got = np.array([float(F(p)) for p in pts])
        np.testing.assert_allclose(got, f.value(pts, d), rtol=1e-12, atol=1e-12)


def test_require_casadi_names_the_extra(monkeypatch):
    assert require_casadi() is ca
    monkeypatch.setitem(sys.modules, "casadi", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "ahbm\[optimize\]"'):
        require_casadi()


def test_one_symbolic_dynamics_per_model_version():
    m, _ = _model("revolute_chain", 0)
    sd = symbolic_dynamics(m)
    assert symbolic_dynamics(m) is sd
    m.update_body(0, mass=float(m.masses[0]) + 1.0)
    sd2 = symbolic_dynamics(m)
    assert sd2 is not sd
    q = np.zeros(m.nq)
    np.testing.assert_allclose(np.asarray(sd2.mass_matrix(q)), dynamics.crba(m, q), atol=1e-12)


def test_package_imports_without_casadi_and_names_the_extra():
    import subprocess

    code = (
        "import sys; sys.modules['casadi'] = None\n"
        "import ahbm.optimize as o\n"
        "from ahbm.models import single_pendulum\n"
        "from ahbm.errors import MissingDependencyError\n"
        "try:\n"
        "    o.Phase(single_pendulum())\n"
        "except MissingDependencyError as e:\n"
        "    print('OK', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OK") and 'pip install "ahbm[optimize]"' in out.stdout
