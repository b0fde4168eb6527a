"""Centroidal momentum matrix, its drift term and the momentum rate against Pinocchio.

Random trees with every joint type, built in both libraries with the mapping
of test_pinocchio.py (``v_pin = T v``, ``q̈_pin = T q̈ + Ṫ v`` for free
joints). Pinocchio stores spatial vectors linear part first; ahbm angular
first.

* ``pin.ccrba`` -> ``A_G`` (ahbm: ``A_G = P A_pin T``, P swapping the halves);
* ``pin.dccrba`` -> ``Ȧ_G``: ahbm's ``Ȧ_G q̇ = P (Ȧ_pin v_pin + A_pin Ṫ v)``;
* ``pin.computeCentroidalMomentum`` -> ``h_G``;
* ``pin.computeCentroidalMomentumTimeVariation`` -> ``ḣ_G``.
"""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from test_pinocchio import (  # noqa: E402  (tests/peers is on sys.path under pytest)
    CASES,
    random_state,
    random_tree,
    to_pinocchio,
    velocity_map,
)

from ahbm.dynamics import (  # noqa: E402
    centroidal_momentum_bias,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
)
from ahbm.kinematics import forward_kinematics  # noqa: E402

RTOL = 1e-9


def assert_rel(actual, desired, rtol=RTOL):
    actual, desired = np.asarray(actual), np.asarray(desired)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    # relative to the largest entry, or to 1 (the data are O(1): kg, m, rad/s) where all
    # entries vanish (a single revolute body has no drift term: round-off only)
    scale = max(float(np.abs(desired).max(initial=0.0)), 1.0)
    err = float(np.abs(actual - desired).max(initial=0.0)) / scale
    assert err <= rtol, f"relative error {err:.3e} > {rtol:.0e}"


def _swap(x):
    """Pinocchio's [linear; angular] rows -> ahbm's [angular; linear]."""
    return np.concatenate([x[3:], x[:3]], axis=0)


@pytest.fixture(params=CASES, ids=lambda c: f"seed{c[0]}-n{c[1]}")
def case(request):
    seed, n = request.param
    rng = np.random.default_rng(5000 + seed)
    model = random_tree(rng, n)
    pm, _ = to_pinocchio(model)
    q, v, a = random_state(rng, model)
    return model, pm, q, v, a


def test_centroidal_momentum_matrix_equals_ccrba(case):
    model, pm, q, v, a = case
    T, _ = velocity_map(model, q, v)
    pd = pm.createData()
    Ag = np.asarray(pin.ccrba(pm, pd, q, T @ v)).reshape(6, model.nv)
    A = centroidal_momentum_matrix(model, q)
    assert_rel(A, _swap(Ag) @ T)
    hg = pin.computeCentroidalMomentum(pm, pd, q, T @ v)
    assert_rel(A @ v, np.r_[hg.angular, hg.linear])


def test_centroidal_bias_equals_dccrba(case):
    model, pm, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    dAg = np.asarray(pin.dccrba(pm, pd, q, T @ v)).reshape(6, model.nv)
    Ag = np.asarray(pd.Ag).reshape(6, model.nv)
    ref = _swap(dAg @ (T @ v) + Ag @ bias)
    assert_rel(centroidal_momentum_bias(model, q, v), ref)


def test_centroidal_rate_equals_time_variation(case):
    model, pm, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    dhg = pin.computeCentroidalMomentumTimeVariation(pm, pd, q, T @ v, T @ a + bias)
    ref = np.r_[dhg.angular, dhg.linear]
    assert_rel(centroidal_momentum_rate(model, q, v, a), ref)
    kin = forward_kinematics(model, q, v, a)
    assert_rel(centroidal_momentum_rate(model, None, None, None, kin=kin), ref)


def test_batch_equals_pinocchio_loop():
    rng = np.random.default_rng(11)
    model = random_tree(rng, 9)
    pm, _ = to_pinocchio(model)
    pd = pm.createData()
    states = [random_state(rng, model) for _ in range(6)]
    q = np.array([s[0] for s in states]).reshape(3, 2, model.nq)
    v = np.array([s[1] for s in states]).reshape(3, 2, model.nv)
    a = np.array([s[2] for s in states]).reshape(3, 2, model.nv)
    kin = forward_kinematics(model, q, v, a)
    A = centroidal_momentum_matrix(model, None, kin=kin)
    bias = centroidal_momentum_bias(model, None, None, kin=kin)
    rate = centroidal_momentum_rate(model, None, None, None, kin=kin)
    assert A.shape == (3, 2, 6, model.nv) and bias.shape == rate.shape == (3, 2, 6)
    for idx in np.ndindex(3, 2):
        T, b = velocity_map(model, q[idx], v[idx])
        assert_rel(A[idx], _swap(pin.ccrba(pm, pd, q[idx], T @ v[idx])) @ T)
        dAg = pin.dccrba(pm, pd, q[idx], T @ v[idx])
        assert_rel(bias[idx], _swap(dAg @ (T @ v[idx]) + np.array(pd.Ag) @ b))
        dhg = pin.computeCentroidalMomentumTimeVariation(pm, pd, q[idx], T @ v[idx], T @ a[idx] + b)
        assert_rel(rate[idx], np.r_[dhg.angular, dhg.linear])


def test_zmp_from_pinocchio_momentum_rate(case):
    """The ZMP from Pinocchio's ḣ_G and COM (Chung 2009, eq. 4.8) equals ahbm's zmp."""
    from ahbm.dynamics import zmp

    model, pm, q, v, a = case
    T, bias = velocity_map(model, q, v)
    pd = pm.createData()
    dhg = pin.computeCentroidalMomentumTimeVariation(pm, pd, q, T @ v, T @ a + bias)
    c = pin.centerOfMass(pm, pd, q)
    M, g = pin.computeTotalMass(pm), np.asarray(model.gravity)
    n = -g / np.linalg.norm(g)
    p0 = c - 0.8 * n  # a ground 0.8 m below the COM
    F = np.asarray(dhg.linear) - M * g  # ground reaction: ṗ = F + M g
    moment = np.asarray(dhg.angular) + np.cross(c - p0, F)  # its moment about p0
    ref = p0 + np.cross(n, moment) / (n @ F)
    got = zmp(model, q, v, a, ground_normal=n, ground_point=p0, threshold=-np.inf)
    assert_rel(got, ref, rtol=1e-9)
