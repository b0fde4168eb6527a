"""Analytic RNEA and ABA derivatives against Pinocchio's on random trees of every joint type.

The trees and the joint mapping are those of ``test_pinocchio.py``. Both
libraries differentiate with respect to q in the tangent space (q ⊕ δ); for
a ``free`` joint the increments differ: ahbm moves the translation by
``δ_r`` (parent frame), Pinocchio by ``R δ_v`` (body frame), so
``δ_pin = T δ`` with the velocity map ``T(q)`` (``v_pin = T v``). With
``τ = Tᵀ τ_pin(q, T v, T q̈ + b)``, ``b = Ṫ v`` (linear rows ``−ω × Rᵀ ṙ``):

    ∂τ/∂q  = ∂(Tᵀ y)/∂q|_(y=τ_pin) + Tᵀ (K_pin T + C_pin ∂(T v)/∂q + M_pin ∂(T q̈ + b)/∂q),
    ∂τ/∂q̇ = Tᵀ (C_pin T + M_pin ∂b/∂q̇),   M = Tᵀ M_pin T,

and for forward dynamics ``q̈ = T⁻¹ (q̈_pin(q, T v, T τ) − b)`` (``T⁻ᵀ = T``).
The derivative blocks of ``T`` are in closed form below.
"""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from test_pinocchio import (  # noqa: E402
    assert_rel,
    random_state,
    random_tree,
    to_pinocchio,
    velocity_map,
)

from ahbm.dynamics import aba_derivatives, rnea_derivatives  # noqa: E402
from ahbm.kinematics.rotations import quat_to_matrix  # noqa: E402

RTOL = 1e-9


def _skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _free_joints(model, q):
    """(v index of the translation, R) of every free joint."""
    out = []
    for i, bd in enumerate(model.bodies):
        if bd.joint.type == "free":
            k, qi = model.v_index[i], model.q_index[i]
            out.append((k, quat_to_matrix(q[qi + 3 : qi + 7])))
    return out


def _d_T(model, q, x):
    """∂(T(q) x)/∂q for a fixed x (nv, nv)."""
    J = np.zeros((model.nv, model.nv))
    for k, R in _free_joints(model, q):
        J[k : k + 3, k + 3 : k + 6] = _skew(R.T @ x[k : k + 3])
    return J


def _d_Tinv(model, q, y):
    """∂(T(q)⁻¹ y)/∂q = ∂(T(q)ᵀ y)/∂q for a fixed y (nv, nv)."""
    J = np.zeros((model.nv, model.nv))
    for k, R in _free_joints(model, q):
        J[k : k + 3, k + 3 : k + 6] = -R @ _skew(y[k : k + 3])
    return J


def _d_b(model, q, v):
    """∂b/∂q and ∂b/∂q̇ of b = Ṫ v (linear rows −ω × Rᵀ ṙ)."""
    Bq = np.zeros((model.nv, model.nv))
    Bv = np.zeros((model.nv, model.nv))
    for k, R in _free_joints(model, q):
        w, u = v[k + 3 : k + 6], R.T @ v[k : k + 3]
        Bq[k : k + 3, k + 3 : k + 6] = -_skew(w) @ _skew(u)
        Bv[k : k + 3, k : k + 3] = -_skew(w) @ R.T
        Bv[k : k + 3, k + 3 : k + 6] = _skew(u)
    return Bq, Bv


CASES = [(seed, n) for seed, n in enumerate([1, 2, 3, 5, 8, 13, 20])]


@pytest.fixture(params=CASES, ids=lambda c: f"seed{c[0]}-n{c[1]}")
def case(request):
    seed, n = request.param
    rng = np.random.default_rng(2000 + seed)
    model = random_tree(rng, n)
    pm, _ = to_pinocchio(model)
    q, v, a = random_state(rng, model)
    return rng, model, pm, q, v, a


def test_rnea_derivatives(case):
    rng, model, pm, q, v, a = case
    T, b = velocity_map(model, q, v)
    pd = pm.createData()
    vp, ap = T @ v, T @ a + b
    K, C, M = (np.array(x) for x in pin.computeRNEADerivatives(pm, pd, q, vp, ap))
    M = np.triu(M) + np.triu(M, 1).T
    tau_p = pin.rnea(pm, pm.createData(), q, vp, ap)
    Bq, Bv = _d_b(model, q, v)
    inner = K @ T + C @ _d_T(model, q, v) + M @ (_d_T(model, q, a) + Bq)
    dq = _d_Tinv(model, q, tau_p) + T.T @ inner
    dv = T.T @ (C @ T + M @ Bv)
    d = rnea_derivatives(model, q, v, a)
    assert_rel(d.tau, T.T @ tau_p, 1e-10)
    assert_rel(d.dtau_dq, dq, RTOL)
    assert_rel(d.dtau_dqd, dv, RTOL)
    assert_rel(d.mass_matrix, T.T @ M @ T, RTOL)


def test_aba_derivatives(case):
    rng, model, pm, q, v, a = case
    T, b = velocity_map(model, q, v)
    tau = rng.normal(size=model.nv)
    pd = pm.createData()
    vp, tp = T @ v, T @ tau
    Aq, Av, Minv = (np.array(x) for x in pin.computeABADerivatives(pm, pd, q, vp, tp))
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    ap = pin.aba(pm, pm.createData(), q, vp, tp)
    Tinv = np.linalg.inv(T)
    Bq, Bv = _d_b(model, q, v)
    dq = _d_Tinv(model, q, ap - b) + Tinv @ (
        Aq @ T + Av @ _d_T(model, q, v) + Minv @ _d_T(model, q, tau) - Bq
    )
    dv = Tinv @ (Av @ T - Bv)
    d = aba_derivatives(model, q, v, tau)
    assert_rel(d.qdd, Tinv @ (ap - b), 1e-10)
    assert_rel(d.dqdd_dq, dq, RTOL)
    assert_rel(d.dqdd_dqd, dv, RTOL)
    assert_rel(d.minv, Tinv @ Minv @ T, RTOL)


def test_whole_trial_against_pinocchio_loop():
    """A batch of frames equals Pinocchio frame by frame (a tree with quaternion joints)."""
    rng = np.random.default_rng(77)
    model = random_tree(rng, 6, types=["revolute", "spherical", "euler", "prismatic"])
    pm, _ = to_pinocchio(model)
    states = [random_state(rng, model) for _ in range(12)]
    q, v, a = (np.array(x) for x in zip(*states, strict=True))
    d = rnea_derivatives(model, q, v, a)
    pd = pm.createData()
    for i in range(12):
        K, C, M = pin.computeRNEADerivatives(pm, pd, q[i], v[i], a[i])
        assert_rel(d.dtau_dq[i], np.array(K), RTOL)
        assert_rel(d.dtau_dqd[i], np.array(C), RTOL)
