"""Tests of the airbag inverse model (AHBM §5.1.2)."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import BodyForce, aba
from ahbm.dynamics.forces import total_generalized_force
from ahbm.errors import DataError
from ahbm.models.airbag import FACE_POINT, airbag_force, airbag_test, estimate_head_load
from ahbm.models.head_neck import head_neck_model, intervertebral_elements


def test_exact_recovery_with_exact_accelerations():
    """Random states and loads: ID with the true q̈ returns the load to round-off."""
    rng = np.random.default_rng(11)
    m = head_neck_model()
    els = intervertebral_elements(m)
    n = 20
    t = np.linspace(0, 0.1, n)
    q = rng.normal(scale=0.2, size=(n, 8))
    qd = rng.normal(size=(n, 8))
    F = rng.normal(scale=500.0, size=(n, 3))
    F[:, 1] = 0.0
    load = BodyForce("head", lambda tt: F[int(round(tt / t[1]))], point=FACE_POINT)
    tau = total_generalized_force(m, [*els, load], q, qd, t=t)
    qdd = aba(m, q, qd, tau)
    est = estimate_head_load(m, q, time=t, forces=els, qd=qd, qdd=qdd)
    np.testing.assert_allclose(est.force, F, atol=1e-8 * np.abs(F).max())
    assert est.residual.max() < 1e-8
    # with the moment also unknown, the force is still found (exact data)
    est_m = estimate_head_load(m, q, time=t, forces=els, qd=qd, qdd=qdd, moment=True)
    np.testing.assert_allclose(est_m.force, F, atol=1e-6 * np.abs(F).max())
    np.testing.assert_allclose(est_m.moment, 0.0, atol=1e-6 * np.abs(F).max())


def test_recovers_airbag_load_from_recorded_motion():
    """Synthetic recording, numerical derivatives: within 5 % of the peak load."""
    m = head_neck_model()
    rec = airbag_test(m, t_end=0.05, rate=5000.0, rtol=1e-4, atol=1e-6)
    est = estimate_head_load(m, rec.q, time=rec.t, forces=intervertebral_elements(m))
    true = airbag_force(rec.t)
    peak = np.linalg.norm(true, axis=1).max()
    assert np.linalg.norm(est.force - true, axis=1).max() < 0.05 * peak
    assert np.degrees(rec.q.sum(axis=1)).min() < -5.0  # the airbag extends the neck


def test_bad_input():
    m = head_neck_model()
    with pytest.raises(DataError, match="`time` to have 4 samples"):
        estimate_head_load(m, np.zeros((4, 8)), time=np.arange(5.0))
    with pytest.raises(DataError, match="`q` to have shape"):
        estimate_head_load(m, np.zeros((4, 7)), rate=100.0)


def test_head_load_is_a_result_object():
    m = head_neck_model()
    t = np.linspace(0, 0.01, 11)
    est = estimate_head_load(m, np.zeros((11, 8)), time=t)
    by_rate = estimate_head_load(m, np.zeros((11, 8)), rate=1000.0)
    np.testing.assert_allclose(by_rate.force, est.force, atol=1e-9)
    assert "force=array(11, 3)" in repr(est)
    with pytest.raises(TypeError):
        _, _, _ = est  # a result object, not a tuple
    with pytest.raises(DataError, match="exactly one of `rate`"):
        estimate_head_load(m, np.zeros((11, 8)))
    with pytest.raises(TypeError):
        estimate_head_load(m, t, np.zeros((11, 8)))  # the 0.1 order (model, t, q)
