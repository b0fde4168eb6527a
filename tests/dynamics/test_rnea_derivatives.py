"""Analytic RNEA/ABA derivatives against central finite differences and identities."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from ahbm.dynamics import aba, aba_derivatives, crba, rnea, rnea_derivatives
from ahbm.errors import DataError, SimulationError
from ahbm.kinematics import Model, forward_kinematics, integrate_q, random_q
from ahbm.kinematics.configuration import random_model
from ahbm.kinematics.joints import JOINT_TYPES

H = 1e-6
EPS = np.finfo(float).eps
RTOL = 2e-7  # central differences with h = 1e-6: truncation ~h², rounding ~1e-10/h


def _fd(f, x0, nv, plus, h=H):
    """Central differences of f along the nv tangent directions (plus(x, dx) moves x)."""
    cols = []
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        cols.append((f(plus(x0, e)) - f(plus(x0, -e))) / (2 * h))
    return np.stack(cols, axis=-1)


def _assert_fd(exact, f, x0, nv, plus, *, cond=1.0):
    """`exact` equals the derivative of f within the error bound of central differences.

    The bound depends on the step, not a fixed tolerance. Truncation: the
    error of D(h) is -h^2 f'''/6 + O(h^4) and that of D(2h) four times it, so
    |D(2h) - D(h)| is three times the truncation error of D(h); twice that
    covers the O(h^4) terms. Rounding: f is evaluated with a relative error of
    about eps * cond (cond: the condition number of the linear solve inside f,
    1 for a recursion), divided by the step: 8 eps cond max|f| / h (4 for the
    two evaluations of two steps, 2 for accumulation).
    """
    d1 = _fd(f, x0, nv, plus, H)
    d2 = _fd(f, x0, nv, plus, 2 * H)
    scale = max(float(np.abs(f(x0)).max()), float(np.abs(d1).max()), 1.0)
    bound = 2 * np.abs(d2 - d1) + 8 * EPS * cond * scale / H + 1e-12 * scale
    err = np.abs(exact - d1)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert (err <= bound).all(), (
        f"derivative differs from central differences at {worst}: {err[worst]:.3g} "
        f"> bound {bound[worst]:.3g}"
    )


def _rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-9))


def _state(model, rng, n=None):
    shape = () if n is None else (n,)
    q = random_q(model, rng=rng, size=n) if n is not None else random_q(model, rng=rng)
    return q, rng.normal(size=shape + (model.nv,)), rng.normal(size=shape + (model.nv,))


ALL = [t for t in JOINT_TYPES if t != "custom"]
CASES = [
    ("revolute chain", ("revolute",), False),
    ("every joint type", tuple(ALL), True),
    ("quaternions", ("spherical", "free", "revolute"), True),
    ("custom joints", ("custom", "revolute", "spherical"), True),
]


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def case(request):
    _, types, offsets = request.param
    rng = np.random.default_rng(zlib.crc32(request.param[0].encode()))  # same in every run
    model = random_model(7, rng=rng, joint_types=types, child_offsets=offsets)
    return model, rng


def test_rnea_derivatives_equal_central_differences(case):
    model, rng = case
    q, qd, qdd = _state(model, rng)
    d = rnea_derivatives(model, q, qd, qdd)
    nv = model.nv
    assert d.dtau_dq.shape == d.dtau_dqd.shape == d.mass_matrix.shape == (nv, nv)
    np.testing.assert_allclose(d.tau, rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-9)
    fq = _fd(lambda x: rnea(model, x, qd, qdd), q, nv, lambda x, e: integrate_q(model, x, e))
    fv = _fd(lambda x: rnea(model, q, x, qdd), qd, nv, lambda x, e: x + e)
    fa = _fd(lambda x: rnea(model, q, qd, x), qdd, nv, lambda x, e: x + e)
    assert _rel(d.dtau_dq, fq) < RTOL
    assert _rel(d.dtau_dqd, fv) < RTOL
    assert _rel(d.mass_matrix, fa) < RTOL
    np.testing.assert_allclose(d.mass_matrix, crba(model, q), rtol=1e-10, atol=1e-10)


def test_aba_derivatives_equal_central_differences(case):
    model, rng = case
    q, qd, _ = _state(model, rng)
    tau = rng.normal(size=model.nv)
    d = aba_derivatives(model, q, qd, tau)
    nv = model.nv
    np.testing.assert_allclose(d.qdd, aba(model, q, qd, tau), rtol=1e-9, atol=1e-9)
    cond = float(np.linalg.cond(crba(model, q)))  # qdd comes from a solve with M
    _assert_fd(
        d.dqdd_dq, lambda x: aba(model, x, qd, tau), q, nv,
        lambda x, e: integrate_q(model, x, e), cond=cond,
    )  # fmt: skip
    _assert_fd(d.dqdd_dqd, lambda x: aba(model, q, x, tau), qd, nv, lambda x, e: x + e, cond=cond)
    _assert_fd(d.minv, lambda x: aba(model, q, qd, x), tau, nv, lambda x, e: x + e, cond=cond)
    np.testing.assert_allclose(d.minv @ crba(model, q), np.eye(nv), atol=1e-9)


@pytest.mark.parametrize("frame", ["world", "local"])
def test_external_force_derivatives(frame):
    """World forces stay fixed in the world, local ones move with the body."""
    rng = np.random.default_rng(7)
    model = random_model(6, rng=rng, joint_types=tuple(ALL), child_offsets=True)
    q, qd, qdd = _state(model, rng)
    f = rng.normal(size=(model.n_bodies, 6))
    kw = {"f_ext": f, "f_ext_frame": frame}
    d = rnea_derivatives(model, q, qd, qdd, **kw)
    np.testing.assert_allclose(d.tau, rnea(model, q, qd, qdd, **kw), rtol=1e-12, atol=1e-9)
    fq = _fd(
        lambda x: rnea(model, x, qd, qdd, **kw), q, model.nv,
        lambda x, e: integrate_q(model, x, e),
    )  # fmt: skip
    assert _rel(d.dtau_dq, fq) < RTOL
    # kin= reuses the poses of the same frames
    kin = forward_kinematics(model, q)
    d2 = rnea_derivatives(model, q, qd, qdd, kin=kin, **kw)
    np.testing.assert_allclose(d2.dtau_dq, d.dtau_dq, rtol=1e-13, atol=1e-12)
    a = aba_derivatives(model, q, qd, d.tau, **kw)
    np.testing.assert_allclose(a.qdd, qdd, atol=1e-8)
    np.testing.assert_allclose(a.dqdd_dq, -a.minv @ d.dtau_dq, atol=1e-8)


def test_whole_trial_equals_frame_by_frame():
    """Leading batch axes; more frames than the thread threshold."""
    rng = np.random.default_rng(3)
    model = random_model(5, rng=rng, joint_types=tuple(ALL))
    q, qd, qdd = _state(model, rng, 600)
    d = rnea_derivatives(model, *(x.reshape(3, 200, -1) for x in (q, qd, qdd)))
    assert d.dtau_dq.shape == (3, 200, model.nv, model.nv)
    for i in (0, 257, 599):
        one = rnea_derivatives(model, q[i], qd[i], qdd[i])
        np.testing.assert_array_equal(d.dtau_dq.reshape(600, model.nv, -1)[i], one.dtau_dq)
        np.testing.assert_array_equal(d.dtau_dqd.reshape(600, model.nv, -1)[i], one.dtau_dqd)
    a = aba_derivatives(model, q[:20], qd[:20], None)
    np.testing.assert_allclose(a.qdd, aba(model, q[:20], qd[:20], None), rtol=1e-9, atol=1e-9)


def test_pendulum_closed_form():
    """A planar pendulum: τ = (I + m l²) q̈ + m g l sin q; ∂τ/∂q = m g l cos q."""
    m_, l_, g = 2.0, 0.7, 9.81
    model = Model(gravity=[0, 0, -g])
    model.add_body("p", "ground", {"type": "revolute", "axis": [1, 0, 0]}, mass=m_,
                   com=[0, 0, -l_], inertia=np.zeros((3, 3)))  # fmt: skip
    q = np.array([0.3])
    d = rnea_derivatives(model, q, [1.5], [0.4])
    np.testing.assert_allclose(d.dtau_dq[0, 0], m_ * g * l_ * np.cos(0.3), rtol=1e-13)
    np.testing.assert_allclose(d.dtau_dqd, [[0.0]], atol=1e-14)
    np.testing.assert_allclose(d.mass_matrix, [[m_ * l_**2]], rtol=1e-13)


def test_bad_input_names_the_argument():
    model = random_model(3, rng=np.random.default_rng(0), joint_types=("revolute",))
    with pytest.raises(DataError, match="qd"):
        rnea_derivatives(model, np.zeros(3), np.zeros(2), None)
    with pytest.raises(DataError, match="q"):
        rnea_derivatives(model, [np.nan, 0, 0], None, None)
    with pytest.raises(DataError, match="f_ext_frame"):
        rnea_derivatives(model, np.zeros(3), None, None, f_ext=np.zeros((3, 6)), f_ext_frame="x")
    kin = forward_kinematics(model, np.zeros((2, 3)))
    with pytest.raises(DataError, match="kin"):
        rnea_derivatives(model, np.zeros(3), None, None, f_ext=np.zeros((3, 6)), kin=kin)
    massless = Model()
    massless.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]})
    with pytest.raises(SimulationError):
        aba_derivatives(massless, np.zeros(1), None, None)


@pytest.mark.parametrize("fx_world", [False, True])
def test_world_kernel_equals_node_frame_tangents(case, fx_world):
    """The two codings in ahbm._engine (composite world frame; node-frame tangents) agree."""
    from ahbm._engine import dispatch, node_plan

    model, rng = case
    q, qd, qdd = _state(model, rng, 3)
    fx = rng.normal(size=(3, node_plan.plan(model).n, 6))
    a = dispatch.rnea_derivatives(model, q, qd, qdd, fx, fx_world, "world")
    b = dispatch.rnea_derivatives(model, q, qd, qdd, fx, fx_world, "tangent")
    for x, y in zip(a, b, strict=True):
        assert _rel(x, y) < 1e-12


def test_spd_inverse_kernel_equals_lapack_and_names_the_bad_frame():
    from ahbm._engine.dispatch import spd_inverse

    rng = np.random.default_rng(7)
    A = rng.normal(size=(6, 9, 9))
    M = A @ np.swapaxes(A, 1, 2) + 0.1 * np.eye(9)
    Minv, bad = spd_inverse(M)
    assert bad == -1
    np.testing.assert_allclose(Minv, np.linalg.inv(M), rtol=1e-10, atol=1e-12 * np.abs(Minv).max())
    assert np.array_equal(Minv, np.swapaxes(Minv, 1, 2))  # exactly symmetric
    M[4, 2, 2] = -1.0  # not positive definite
    assert spd_inverse(M) == (None, 4)
    # a batch split over threads: same values, the first bad frame reported
    A = rng.normal(size=(1000, 5, 5))
    M = A @ np.swapaxes(A, 1, 2) + np.eye(5)
    np.testing.assert_allclose(spd_inverse(M)[0], np.linalg.inv(M), rtol=1e-10, atol=1e-12)
    M[[700, 900], 1, 1] = -3.0
    assert spd_inverse(M) == (None, 700)
