"""Weighted-least-squares inverse dynamics: consistency, closed forms, two-part algorithm."""

import numpy as np
import pytest

from ahbm.dynamics import aba, crba, rnea
from ahbm.dynamics.wls import (
    inverse_dynamics_wls,
    inverse_dynamics_wls_tracking,
    transition_shares,
)
from ahbm.errors import DataError
from ahbm.kinematics import difference_q, forward_kinematics, integrate_q, neutral_q
from ahbm.kinematics.dh import DHRow, dh_model
from ahbm.models import human15

FOOT_R, FOOT_L = 11, 14


@pytest.fixture(scope="module")
def model():
    return human15(height=1.8, mass=75.0)


def _states(model, rng, n):
    q = np.tile(neutral_q(model), (n, 1))
    q[:, :3] = rng.normal(size=(n, 3)) * 0.3 + [0, 0, 1.0]
    quat = rng.normal(size=(n, 4))
    q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    j = np.arange(7, model.nq)
    q[:, j] += rng.normal(size=(n, j.size)) * 0.2
    # renormalize every quaternion block of the model
    for b, body in enumerate(model.bodies):
        if body.joint.type == "spherical":
            k = model.q_index[b]
            q[:, k : k + 4] /= np.linalg.norm(q[:, k : k + 4], axis=1, keepdims=True)
    qd = rng.normal(size=(n, model.nv)) * 0.5
    return q, qd


def _wrench(model, q, body, w):
    """f_ext (n, n_bodies, 6) of wrenches w (n, 6) = [moment about body origin; force]."""
    p = forward_kinematics(model, q).positions[:, body]
    f = np.zeros((q.shape[0], model.n_bodies, 6))
    f[:, body, 3:] = w[:, 3:]
    f[:, body, :3] = w[:, :3] + np.cross(p, w[:, 3:])
    return f


def _consistent(model, rng, n, bodies=(FOOT_R,)):
    """A motion and ground reactions that satisfy the equations of motion exactly."""
    q, qd = _states(model, rng, n)
    f = sum(
        _wrench(
            model, q, b, rng.normal(size=(n, 6)) * [20, 20, 5, 50, 50, 0] + [0, 0, 0, 0, 0, 700]
        )
        for b in bodies
    )
    tau = np.zeros((n, model.nv))
    tau[:, 6:] = rng.normal(size=(n, model.nv - 6)) * 20
    qdd = aba(model, q, qd, tau, f_ext=f)
    return q, qd, qdd, f, tau


def _base_map(model, q, body):
    """(n, 6, 6): base generalized forces of unit wrenches [m about origin of body; F] (by RNEA)."""
    n = q.shape[0]
    z = np.zeros((n, model.nv))
    out = np.zeros((n, 6, 6))
    for k in range(6):
        w = np.zeros((n, 6))
        w[:, k] = 1.0
        out[:, :, k] = (
            rnea(model, q, z, z) - rnea(model, q, z, z, f_ext=_wrench(model, q, body, w))
        )[:, :6]
    return out


def test_consistent_data_give_zero_corrections_and_true_torques(model):
    rng = np.random.default_rng(0)
    for bodies in [(FOOT_R,), (FOOT_R, FOOT_L)]:
        q, qd, qdd, f, tau = _consistent(model, rng, 30, bodies)
        res = inverse_dynamics_wls(model, q, qd, qdd, f, weights={"grf": 1.0, "qdd": 1.0})
        assert np.abs(res.residual_before).max() < 1e-8
        np.testing.assert_allclose(res.grf_correction, 0.0, atol=1e-8)
        np.testing.assert_allclose(res.qdd_correction, 0.0, atol=1e-10)
        np.testing.assert_allclose(res.tau, tau, atol=1e-8)
        np.testing.assert_allclose(res.grf, f, atol=1e-8)
        assert res.tau.shape == (30, model.nv) and res.residual.shape == (30, 6)


def test_two_part_algorithm_recovers_single_support_reaction(model):
    rng = np.random.default_rng(1)
    q, qd, qdd, f, tau = _consistent(model, rng, 40)
    res = inverse_dynamics_wls(model, q, qd, qdd, None, contact=["foot_r"])
    np.testing.assert_allclose(res.grf, f, atol=1e-7)
    np.testing.assert_allclose(res.tau, tau, atol=1e-7)
    np.testing.assert_allclose(res.residual, 0.0, atol=1e-8)
    # Chung's eq. 7.7: base generalized forces of ID without GRF = the reaction
    np.testing.assert_allclose(res.residual_before, rnea(model, q, qd, qdd)[:, :6])


def test_two_part_reaction_acts_at_the_zmp(model):
    """Identity: the COP of the reaction from the kinematics is the ZMP of the dynamics."""
    from ahbm.dynamics import zmp, zmp_from_grf

    rng = np.random.default_rng(10)
    q, qd, qdd, _, _ = _consistent(model, rng, 20, (FOOT_R, FOOT_L))
    res = inverse_dynamics_wls(model, q, qd, qdd, None, contact=["foot_r", "foot_l"])
    total = res.grf.sum(axis=1)  # [moment about the origin; force]
    cop = zmp_from_grf(total[:, 3:], total[:, :3], threshold=-np.inf)
    np.testing.assert_allclose(cop, zmp(model, q, qd, qdd, threshold=-np.inf), atol=1e-9)


@pytest.mark.parametrize("w_f, w_a", [(1.0, 1.0), (1e-4, 10.0), (100.0, 1e-3)])
def test_closed_form_weighted_least_squares(model, w_f, w_a):
    """Corrections equal Simonidis et al.'s eq. 32, T = (Aᵀ W⁻¹ A)⁻¹ Aᵀ W⁻¹ b."""
    rng = np.random.default_rng(2)
    n = 6
    q, qd, qdd, f, _ = _consistent(model, rng, n)
    noise_f = _wrench(model, q, FOOT_R, rng.normal(size=(n, 6)) * [5, 5, 2, 30, 30, 60])
    qdd_m = qdd + rng.normal(size=qdd.shape) * 0.5
    f_m = f + noise_f
    res = inverse_dynamics_wls(model, q, qd, qdd_m, f_m, weights={"grf": w_f, "qdd": w_a})
    M = crba(model, q)
    Q = -rnea(model, q, qd, np.zeros_like(qd))
    z = np.zeros_like(qd)
    gen = rnea(model, q, z, z) - rnea(model, q, z, z, f_ext=f_m)  # Σ Jᵀ F of the plates
    Ju_T = _base_map(model, q, FOOT_R)  # (n, 6, 6)
    nv = model.nv
    for k in range(n):
        Minv = np.linalg.inv(M[k])
        A = np.vstack([np.eye(6, nv), Minv])
        b = np.concatenate([gen[k, :6], qdd_m[k] - Minv @ Q[k]])
        W = np.zeros((6 + nv, 6 + nv))  # covariance of b
        W[:6, :6] = Ju_T[k] @ Ju_T[k].T / w_f
        W[6:, 6:] = np.eye(nv) / w_a
        Wi = np.linalg.inv(W)
        T = np.linalg.solve(A.T @ Wi @ A, A.T @ Wi @ b)
        dqdd = Minv @ T - b[6:]
        np.testing.assert_allclose(res.qdd_correction[k], dqdd, rtol=1e-6, atol=1e-8)
        # the plate's generalized base force after correction is T's base part
        gen_corr = rnea(model, q[k], z[k], z[k]) - rnea(model, q[k], z[k], z[k], f_ext=res.grf[k])
        np.testing.assert_allclose(gen_corr[:6], T[:6], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(res.residual, 0.0, atol=1e-7)
    # the torques are the inverse dynamics of the corrected data
    np.testing.assert_allclose(
        res.tau, rnea(model, q, qd, res.qdd, f_ext=res.grf), rtol=1e-10, atol=1e-8
    )


def test_weights_trade_plates_against_kinematics(model):
    rng = np.random.default_rng(3)
    n = 10
    q, qd, qdd, f, tau = _consistent(model, rng, n)
    noise_f = _wrench(model, q, FOOT_R, rng.normal(size=(n, 6)) * [5, 5, 2, 30, 30, 60])
    noise_a = np.zeros_like(qdd)
    noise_a[:, :6] = rng.normal(size=(n, 6)) * 0.5
    # noise in the plate only, kinematics trusted: the plate is corrected back exactly
    res = inverse_dynamics_wls(model, q, qd, qdd, f + noise_f, weights={"grf": 1.0})
    np.testing.assert_allclose(res.grf, f, atol=1e-7)
    np.testing.assert_allclose(res.tau, tau, atol=1e-7)
    # noise in the base accelerations only, plate and joint accelerations trusted
    w_a = np.r_[np.ones(6), np.full(model.nv - 6, np.inf)]
    res = inverse_dynamics_wls(model, q, qd, qdd + noise_a, f, weights={"grf": np.inf, "qdd": w_a})
    np.testing.assert_allclose(res.qdd, qdd, atol=1e-8)
    np.testing.assert_allclose(res.tau, tau, atol=1e-7)
    np.testing.assert_allclose(res.grf_correction, 0.0)
    # both noisy: the more a measurement is trusted, the less it moves
    both = dict(grf=f + noise_f, qdd=qdd + noise_a)
    moves = []
    for ratio in [1e-3, 1.0, 1e3]:
        r = inverse_dynamics_wls(
            model, q, qd, both["qdd"], both["grf"], weights={"grf": ratio, "qdd": w_a}
        )
        moves.append((np.abs(r.grf_correction).sum(), np.abs(r.qdd_correction).sum()))
    assert moves[0][0] > moves[1][0] > moves[2][0]
    assert moves[0][1] < moves[1][1] < moves[2][1]


def test_double_support_least_norm_rule(model):
    rng = np.random.default_rng(4)
    n = 8
    q, qd, qdd, f, _ = _consistent(model, rng, n, (FOOT_R, FOOT_L))
    res = inverse_dynamics_wls(model, q, qd, qdd, None, contact=["foot_r", "foot_l"])
    np.testing.assert_allclose(res.residual, 0.0, atol=1e-7)
    # the total reaction (and so its base generalized force) is the true one
    np.testing.assert_allclose(res.grf.sum(1), f.sum(1), atol=1e-6)
    # and its split is the least-norm solution of [J_Rᵀ J_Lᵀ] w = r_u
    r_u = rnea(model, q, qd, qdd)[:, :6]
    B = np.concatenate([_base_map(model, q, FOOT_R), _base_map(model, q, FOOT_L)], axis=2)
    w = np.einsum("nij,nj->ni", np.linalg.pinv(B), r_u)
    ref = _wrench(model, q, FOOT_R, w[:, :6]) + _wrench(model, q, FOOT_L, w[:, 6:])
    np.testing.assert_allclose(res.grf, ref, atol=1e-6)
    # shares: all on the right foot (single support of a double-support motion)
    shares = np.zeros((n, model.n_bodies))
    shares[:, FOOT_R] = 1.0
    one = inverse_dynamics_wls(model, q, qd, qdd, None, contact=shares)
    np.testing.assert_allclose(one.grf[:, FOOT_L], 0.0)
    np.testing.assert_allclose(one.grf.sum(1), f.sum(1), atol=1e-6)
    # unequal shares move the reaction towards the foot with the larger share
    shares[:, FOOT_L] = 0.25
    part = inverse_dynamics_wls(model, q, qd, qdd, None, contact=shares)
    fz = part.grf[:, [FOOT_R, FOOT_L], 5]
    assert np.all(fz[:, 0] > fz[:, 1])


def test_transition_shares():
    c = np.zeros((12, 3), bool)
    c[:7, 0] = True  # right foot until frame 6
    c[3:, 1] = True  # left foot from frame 3: double support 3..6
    c[5:9, 2] = True  # a third body on the ground from 5 to 8 (landing and leaving)
    s = transition_shares(c)
    np.testing.assert_array_equal(s[~c], 0.0)
    np.testing.assert_array_equal(s[:3, 0], 1.0)
    np.testing.assert_array_equal(s[9:, 1], 1.0)
    u = (1 - np.cos(np.pi * np.arange(1, 5) / 5)) / 2
    np.testing.assert_allclose(s[3:7, 0], 1 - u)  # trailing
    np.testing.assert_allclose(s[3:7, 1], u)  # leading
    # the third body lands and leaves while the left foot is on the ground
    np.testing.assert_allclose(s[5:9, 2], u * (1 - u))
    assert np.all(np.diff(s[3:7, 0]) < 0) and np.all(np.diff(s[3:7, 1]) > 0)
    with pytest.raises(DataError, match="contact"):
        transition_shares(np.ones(4))


def test_smooth_transition_in_double_support(model):
    rng = np.random.default_rng(9)
    n = 7
    q, qd, qdd, f, _ = _consistent(model, rng, n, (FOOT_R, FOOT_L))
    c = np.zeros((n, model.n_bodies), bool)
    c[:, FOOT_R] = np.arange(n) < 6
    c[:, FOOT_L] = np.arange(n) >= 1
    res = inverse_dynamics_wls(model, q, qd, qdd, None, contact=transition_shares(c))
    np.testing.assert_allclose(res.residual, 0.0, atol=1e-7)
    np.testing.assert_allclose(res.grf.sum(1), f.sum(1), atol=1e-6)  # the total is the true one
    fz = res.grf[:, [FOOT_R, FOOT_L], 5]
    part = fz[:, 0] / fz.sum(1)  # right foot's part of the vertical reaction
    assert part[0] == pytest.approx(1.0) and part[-1] == pytest.approx(0.0, abs=1e-12)
    assert np.all(np.diff(part) < 0)


def test_default_contact_is_per_frame(model):
    """A body without measured load in a frame is not corrected in that frame."""
    rng = np.random.default_rng(8)
    q, qd, qdd, f, tau = _consistent(model, rng, 4)
    f_m = f + _wrench(model, q, FOOT_R, rng.normal(size=(4, 6)) * 20)
    f_m[2] = 0.0  # no plate load in frame 2 (e.g. the foot left the plate)
    res = inverse_dynamics_wls(model, q, qd, qdd, f_m)
    np.testing.assert_allclose(res.grf_correction[2], 0.0)
    np.testing.assert_allclose(res.residual[2], res.residual_before[2])
    keep = [0, 1, 3]
    np.testing.assert_allclose(res.grf[keep], f[keep], atol=1e-7)
    np.testing.assert_allclose(res.tau[keep], tau[keep], atol=1e-7)


def test_residual_weight_keeps_part_of_the_residual(model):
    rng = np.random.default_rng(5)
    q, qd, qdd, f, _ = _consistent(model, rng, 5)
    f_m = f + _wrench(model, q, FOOT_R, rng.normal(size=(5, 6)) * 30)
    # plate exact, accelerations exact: everything stays in the residual (classical ID)
    res = inverse_dynamics_wls(model, q, qd, qdd, f_m, weights={"grf": np.inf, "residual": 1.0})
    np.testing.assert_allclose(res.residual, res.residual_before, atol=1e-9)
    np.testing.assert_allclose(res.tau, rnea(model, q, qd, qdd, f_ext=f_m), atol=1e-9)
    # equal weights on the residual and the force part of the plate: split between both
    w = np.array([np.inf] * 3 + [1.0] * 3)
    res = inverse_dynamics_wls(model, q, qd, qdd, f_m, weights={"grf": w, "residual": 1.0})
    assert 0 < np.abs(res.residual).sum() < np.abs(res.residual_before).sum()


def test_batch_axes(model):
    rng = np.random.default_rng(6)
    q, qd, qdd, f, tau = _consistent(model, rng, 6)
    res = inverse_dynamics_wls(
        model, q.reshape(2, 3, -1), qd.reshape(2, 3, -1), qdd.reshape(2, 3, -1), None,
        contact=["foot_r"],
    )  # fmt: skip
    assert res.tau.shape == (2, 3, model.nv) and res.grf.shape == (2, 3, model.n_bodies, 6)
    np.testing.assert_allclose(res.tau.reshape(6, -1), tau, atol=1e-7)
    single = inverse_dynamics_wls(model, q[0], qd[0], qdd[0], None, contact=["foot_r"])
    assert single.tau.shape == (model.nv,)
    np.testing.assert_allclose(single.tau, tau[0], atol=1e-7)


def test_dh_floating_base_with_unactuated():
    """A 3P+3R DH base (Chung's global DOFs) with a leg: two-part algorithm."""
    h = np.pi / 2
    rows = [
        DHRow("gt1", theta=h, alpha=h, joint="prismatic"),
        DHRow("gt2", theta=h, alpha=h, joint="prismatic"),
        DHRow("gt3", theta=h, d=1.0, alpha=h, joint="prismatic"),
        DHRow("gr1", theta=h, alpha=h),
        DHRow("gr2", theta=h, alpha=h),
        DHRow("gr3", theta=0.3, a=0.1, alpha=-h, mass=10.0, inertia=np.eye(3) * 0.2),
        DHRow("thigh", a=0.4, mass=7.0, com=(-0.2, 0, 0), inertia=np.diag([0.01, 0.1, 0.1])),
        DHRow("shank", a=0.4, mass=3.0, com=(-0.2, 0, 0), inertia=np.diag([0.01, 0.05, 0.05])),
    ]
    m = dh_model(rows, gravity=(0, -9.81, 0))
    rng = np.random.default_rng(7)
    n = 5
    q = rng.uniform(-0.5, 0.5, size=(n, m.nq))
    qd = rng.normal(size=(n, m.nv))
    f = _wrench(m, q, 7, rng.normal(size=(n, 6)) * 10 + [0, 0, 0, 0, 200, 0])
    tau = np.zeros((n, m.nv))
    tau[:, 6:] = rng.normal(size=(n, 2))
    qdd = aba(m, q, qd, tau, f_ext=f)
    with pytest.raises(DataError, match="unactuated"):
        inverse_dynamics_wls(m, q, qd, qdd, None, contact=["shank"])
    res = inverse_dynamics_wls(m, q, qd, qdd, None, contact=["shank"], unactuated=range(6))
    np.testing.assert_allclose(res.grf, f, atol=1e-7)
    np.testing.assert_allclose(res.tau, tau, atol=1e-8)


def _simulated_trial(model, rng, n, dt):
    """A trial integrated by semi-implicit Euler from ABA with known torques and reaction.

    The reaction holds the pelvis (a heavy body), the joints carry small torques,
    so that the limbs swing gently and the explicit integration stays accurate.
    """
    q0, qd0 = _states(model, rng, 1)
    q, qd = np.empty((n, model.nq)), np.empty((n, model.nv))
    qdd, f = np.empty((n, model.nv)), np.empty((n, model.n_bodies, 6))
    tau = np.zeros((n, model.nv))
    tau[:, 6:] = rng.normal(size=model.nv - 6) * 0.02 + np.linspace(0, 0.02, n)[:, None]
    qk, qdk = q0[0], qd0[0] * 0.3
    for k in range(n):
        q[k], qd[k] = qk, qdk
        w = np.r_[2.0 * np.sin(k * dt * 6), 0.0, 1.0, 5.0, 0.0, 700.0]
        f[k] = _wrench(model, qk[None], 0, w[None])[0]
        qdd[k] = aba(model, qk, qdk, tau[k], f_ext=f[k])
        qdk = qdk + dt * qdd[k]
        qk = integrate_q(model, qk, qdk, dt)
    return q, qd, qdd, f, tau


def test_tracking_reproduces_a_consistent_trial(model):
    """Simonidis eq. 33: consistent data are tracked exactly, with zero corrections."""
    rng = np.random.default_rng(11)
    dt = 0.005
    q, qd, qdd, f, tau = _simulated_trial(model, rng, 40, dt)
    res = inverse_dynamics_wls_tracking(
        model, q, qd, qdd, f, rate=1 / dt, weights={"grf": 1.0, "qdd": 1.0}
    )
    np.testing.assert_allclose(res.q, q, atol=1e-9)
    np.testing.assert_allclose(res.qd, qd, atol=1e-8)
    np.testing.assert_allclose(res.qdd_command, qdd, atol=1e-6)
    np.testing.assert_allclose(res.wls.qdd_correction, 0.0, atol=1e-8)
    np.testing.assert_allclose(res.wls.grf, f, atol=1e-6)
    np.testing.assert_allclose(res.wls.tau, tau, atol=1e-6)


def test_tracking_noisy_trial_is_dynamically_consistent(model):
    rng = np.random.default_rng(12)
    dt = 0.005
    n = 40
    q, qd, qdd, f, tau = _simulated_trial(model, rng, n, dt)
    q_m = q.copy()
    q_m[:, :3] += rng.normal(size=(n, 3)) * 0.002  # 2 mm of noise on the pelvis position
    qdd_m = qdd + rng.normal(size=qdd.shape) * 0.5
    f_m = f + _wrench(model, q, 0, rng.normal(size=(n, 6)) * [2, 2, 1, 10, 10, 20])
    w = {"grf": 1 / 20.0**2, "qdd": 1 / 0.5**2}
    res = inverse_dynamics_wls_tracking(model, q_m, qd, qdd_m, f_m, time=np.arange(n) * dt,
                                        omega=20.0, weights=w)  # fmt: skip
    out = res.wls
    # the tracked motion is the integral of the accelerations that were solved for ...
    np.testing.assert_allclose(res.qd[1:], res.qd[:-1] + dt * out.qdd[:-1], atol=1e-12)
    np.testing.assert_allclose(res.q[1:], integrate_q(model, res.q[:-1], res.qd[1:], dt),
                               atol=1e-12)  # fmt: skip
    # ... and these accelerations, torques and reactions satisfy the equations of motion
    np.testing.assert_allclose(out.residual, 0.0, atol=1e-7)
    np.testing.assert_allclose(
        rnea(model, res.q, res.qd, out.qdd, f_ext=out.grf), out.tau, rtol=1e-10, atol=1e-7
    )
    # the tracked motion stays close to the true one
    err = np.abs(difference_q(model, res.q, q)).max()
    assert err < 0.01, err
    assert np.abs(out.tau - tau)[:, 6:].max() < 30.0  # 10 N m seen (qdd noise 0.5 rad/s²)


def test_tracking_bad_arguments(model):
    q = np.tile(neutral_q(model), (4, 1))
    with pytest.raises(DataError, match="omega"):
        inverse_dynamics_wls_tracking(model, q, None, None, None, rate=10.0, omega=20.0,
                                      contact=["foot_r"])  # fmt: skip
    with pytest.raises(DataError, match="n_frames"):
        inverse_dynamics_wls_tracking(model, q[0], None, None, None, rate=100.0,
                                      contact=["foot_r"])  # fmt: skip
    with pytest.raises(DataError, match="rate"):
        inverse_dynamics_wls_tracking(model, q, None, None, None, contact=["foot_r"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"weights": {"force": 1.0}}, "unknown keys"),
        ({"weights": [1.0]}, "dict"),
        ({"weights": {"grf": -1.0}}, ">= 0"),
        ({"weights": {"qdd": np.ones(3)}}, "broadcast"),
        ({"contact": ["toe"]}, "contact"),
        ({"contact": np.ones(4)}, "contact"),
        ({"grf": np.zeros((15, 3))}, "grf"),
        ({"grf": None}, "contact"),
        ({"unactuated": [0, 0]}, "twice"),
        ({"unactuated": [99]}, "unactuated"),
        ({"qd": np.zeros((0, 38))}, "qd"),
    ],
)
def test_bad_arguments(model, kwargs, match):
    q = neutral_q(model)
    args = {"grf": np.zeros((model.n_bodies, 6)), "qd": None, **kwargs}
    grf, qd = args.pop("grf"), args.pop("qd")
    with pytest.raises(DataError, match=match):
        inverse_dynamics_wls(model, q, qd, None, grf, **args)
