"""Tests of the 2-D head-neck sled model (AHBM §5.2.4)."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import GravityOverride, aba
from ahbm.dynamics.forces import total_generalized_force
from ahbm.errors import DataError, ModelError
from ahbm.kinematics import point_position
from ahbm.models.head_neck import (
    HEAD_NECK_JOINTS,
    HEAD_NECK_PARAMETERS,
    BaseAcceleration,
    exponential_spring,
    head_neck_model,
    intervertebral_elements,
    sled_forces,
    sled_pulse,
    sled_test,
)


@pytest.fixture(scope="module")
def sled_run():
    return sled_test(t_end=0.45, n_out=451)


def test_structure():
    m = head_neck_model()
    assert m.body_names == ["T1", "C7", "C6", "C5", "C4", "C3", "C2", "C1", "head"]
    assert m.coordinate_names == HEAD_NECK_JOINTS and m.nq == m.nv == 8
    assert m.total_mass == pytest.approx(4.69 + 8 * 0.22)
    # neck column from C7-T1 to the occipital condyles, head vertex above
    oc = point_position(m, np.zeros(8), "C1", [0, 0, HEAD_NECK_PARAMETERS["C1"]["height"]])
    assert oc[2] == pytest.approx(0.114, abs=1e-12)
    # a flexion (positive angle) moves the head forwards
    assert point_position(m, np.full(8, 0.1), "head", [0, 0, 0.2])[0] > 0


def test_exponential_spring():
    k = exponential_spring(20.0, 8.0)
    x = np.linspace(-0.4, 0.4, 9)
    np.testing.assert_allclose(k(-x), -k(x))
    np.testing.assert_allclose(k.inverse(k(x)), x, atol=1e-14)
    h = 1e-6
    assert (k(h) - k(-h)) / (2 * h) == pytest.approx(160.0, rel=1e-5)  # A B about neutral
    with pytest.raises(DataError, match="positive"):
        exponential_spring(-1.0, 2.0)


def test_neutral_posture_is_static_equilibrium():
    m = head_neck_model()
    els = intervertebral_elements(m)
    q = np.zeros(8)
    qdd = aba(m, q, q, total_generalized_force(m, els, q, q))
    np.testing.assert_allclose(qdd, 0.0, atol=1e-9)
    assert [e.name for e in els] == HEAD_NECK_JOINTS


def test_base_acceleration_equals_body_forces_and_shifted_gravity():
    rng = np.random.default_rng(7)
    m = head_neck_model()
    q = rng.normal(scale=0.3, size=(4, 8))
    qd = rng.normal(size=(4, 8))
    a = np.array([-30.0, 0.0, 12.0])
    f = BaseAcceleration(lambda t: a)
    tau = f.generalized_force(m, q, qd)
    per_body = total_generalized_force(m, sled_forces(m, lambda t: a), q, qd)
    np.testing.assert_allclose(tau, per_body, atol=1e-12)
    # d'Alembert: a base acceleration a acts like an extra gravity -a
    shifted = GravityOverride(m.gravity - a).generalized_force(m, q, qd)
    np.testing.assert_allclose(tau, shifted, atol=1e-12)
    # time-varying and batched times
    t = np.array([0.0, 0.03, 0.06, 0.2])
    tb = BaseAcceleration(sled_pulse).generalized_force(m, q, qd, t=t)
    for k in range(4):
        one = BaseAcceleration(sled_pulse).generalized_force(m, q[k], qd[k], t=t[k])
        np.testing.assert_allclose(tb[k], one)
    with pytest.raises(DataError, match="acceleration"):
        BaseAcceleration([1.0, 0, 0])


def test_sled_pulse():
    t = np.linspace(0, 0.2, 2001)
    a = sled_pulse(t)
    assert a[:, 1:].max() == 0.0 and a[:, 0].max() == 0.0
    assert -a[:, 0].max() == pytest.approx(0.0) and -a[:, 0].min() == pytest.approx(
        15 * 9.81, rel=1e-4
    )
    dv = float(np.sum(0.5 * (a[1:, 0] + a[:-1, 0]) * np.diff(t)))
    assert dv == pytest.approx(-15 * 9.81 * 0.1 * 2 / np.pi, rel=1e-5)


def test_rest_without_pulse():
    r = sled_test(pulse=lambda t: np.zeros(3), t_end=0.05, n_out=6)
    np.testing.assert_allclose(r.q, 0.0, atol=1e-8)


def test_frontal_sled_response(sled_run):
    r = sled_run
    head = np.degrees(r.q.sum(axis=1))
    k = int(np.argmax(head))
    # the head flexes forwards, peaks after the pulse maximum (60 ms) and returns
    assert 40.0 < head[k] < 150.0
    assert 0.07 < r.t[k] < 0.2
    assert np.all(np.degrees(r.q[k]) > 0)  # every joint flexes at the peak
    # after the pulse the passive neck swings back with decaying amplitude towards neutral
    after = r.t > r.t[k]
    k_min = int(np.argmin(np.where(after, head, np.inf)))
    rebound = -head[k_min]
    second = np.where(r.t > r.t[k_min], head, -np.inf).max()
    assert 0 < rebound < 0.75 * head[k]
    assert 0 < second < 0.75 * rebound
    assert abs(head[-1]) < 0.35 * head[k]
    # lower joints carry the larger moments, so they bend more
    peaks = r.q.max(axis=0)
    assert peaks[0] > peaks[-1]


def test_bad_parameters():
    with pytest.raises(ModelError, match="C3"):
        head_neck_model(parameters={"C3": {"mass": 1.0}})
