"""Tests of ahbm.kinematics.rotations against scipy's Rotation, finite differences
and closed forms (AHBM report ch. 2)."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import ahbm.kinematics.rotations as rot
from ahbm.errors import AhbmWarning, DataError
from ahbm.testing import assert_angles_close, assert_quat_close, assert_rotation_close

LOWER = ["".join(s) for s in itertools.product("xyz", repeat=3) if s[0] != s[1] != s[2]]
SEQS = LOWER + [s.upper() for s in LOWER]
assert len(SEQS) == 24


def is_proper(seq):
    return seq[0].lower() == seq[2].lower()


def random_angles(rng, n):
    return rng.uniform(-np.pi, np.pi, (n, 3))


def random_quats(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def gimbal_angles(rng, seq, n, eps=0.0):
    """Angles at (or within eps of) the singular middle angle of `seq`."""
    a = random_angles(rng, n)
    if is_proper(seq):
        mid = np.where(rng.random(n) < 0.5, 0.0, np.pi)
    else:
        mid = np.where(rng.random(n) < 0.5, np.pi / 2, -np.pi / 2)
    a[:, 1] = mid + rng.uniform(-eps, eps, n)
    return a


def adversarial_angles(seq):
    vals = [0.0, np.pi / 2, -np.pi / 2, np.pi, -np.pi, 1e-9, np.pi - 1e-9, 0.3]
    return np.array(list(itertools.product(vals, repeat=3)))


# ---------------------------------------------------------------- elementary
@pytest.mark.parametrize("fn, axis", [(rot.rot_x, "x"), (rot.rot_y, "y"), (rot.rot_z, "z")])
def test_elementary_against_scipy(fn, axis):
    a = np.linspace(-4, 4, 17)
    assert_rotation_close(fn(a), Rotation.from_euler(axis, a[:, None]).as_matrix(), atol=1e-15)
    assert_rotation_close(fn(np.rad2deg(a), degrees=True), fn(a), atol=1e-14)


def test_skew_vee_cross():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 10, 3))
    np.testing.assert_allclose(rot.skew(a) @ b[..., None], np.cross(a, b)[..., None], atol=1e-15)
    np.testing.assert_allclose(rot.vee(rot.skew(a)), a, atol=0)
    S = rot.skew(a)
    np.testing.assert_allclose(S, -np.swapaxes(S, -1, -2), atol=0)


# ---------------------------------------------------------------- Euler angles
@pytest.mark.parametrize("seq", SEQS)
def test_euler_to_matrix_against_scipy(seq):
    rng = np.random.default_rng(2)
    a = np.concatenate([random_angles(rng, 500), adversarial_angles(seq)])
    assert_rotation_close(
        rot.euler_to_matrix(a, seq), Rotation.from_euler(seq, a).as_matrix(), atol=1e-14
    )
    assert_quat_close(rot.euler_to_quat(a, seq), Rotation.from_euler(seq, a).as_quat(), atol=1e-14)


@pytest.mark.parametrize("seq", SEQS)
def test_matrix_to_euler_against_scipy_regular(seq):
    rng = np.random.default_rng(3)
    a = random_angles(rng, 500)
    R = rot.euler_to_matrix(a, seq)
    ours = rot.matrix_to_euler(R, seq)
    ref = Rotation.from_matrix(R).as_euler(seq)
    assert_angles_close(ours, ref, atol=1e-10)
    # ranges documented: middle angle
    if is_proper(seq):
        assert np.all((ours[:, 1] >= 0) & (ours[:, 1] <= np.pi))
    else:
        assert np.all(np.abs(ours[:, 1]) <= np.pi / 2)
    assert np.all(np.abs(ours) <= np.pi)


@pytest.mark.parametrize("seq", SEQS)
@pytest.mark.parametrize("eps", [0.0, 1e-15, 1e-13, 1e-11, 1e-9, 1e-6])
def test_round_trip_at_and_near_gimbal_lock(seq, eps):
    rng = np.random.default_rng(4)
    a = gimbal_angles(rng, seq, 300, eps)
    R = rot.euler_to_matrix(a, seq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        back = rot.matrix_to_euler(R, seq)
    assert np.all(np.isfinite(back))
    assert_rotation_close(rot.euler_to_matrix(back, seq), R, atol=1e-12)
    # scipy agrees on the matrix it reconstructs from our angles
    assert_rotation_close(Rotation.from_euler(seq, back).as_matrix(), R, atol=1e-12)


@pytest.mark.parametrize("seq", SEQS)
def test_round_trip_adversarial(seq):
    a = adversarial_angles(seq)
    R = rot.euler_to_matrix(a, seq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        back = rot.matrix_to_euler(R, seq)
    assert_rotation_close(rot.euler_to_matrix(back, seq), R, atol=1e-12)


@pytest.mark.parametrize("seq", ["ZXZ", "XYZ", "zyx", "yxy"])
def test_gimbal_lock_choice_warning_and_mask(seq):
    rng = np.random.default_rng(5)
    a = np.concatenate([gimbal_angles(rng, seq, 7), random_angles(rng, 5)])
    R = rot.euler_to_matrix(a, seq)
    with pytest.warns(AhbmWarning, match="7 of 12 rotation") as rec:
        back = rot.matrix_to_euler(R, seq)
    assert len(rec) == 1  # one warning per call, not per frame
    mask = rot.gimbal_lock_mask(R, seq)
    np.testing.assert_array_equal(mask, [True] * 7 + [False] * 5)
    # documented choice: first angle of the intrinsic form is zero
    zero_col = 0 if seq.isupper() else 2
    np.testing.assert_array_equal(back[:7, zero_col], 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rot.matrix_to_euler(R, seq, warn=False)


def test_ahbm_zyx_example_and_degrees():
    # AHBM eq. 2.5: ZYX with (phi, theta, psi) = R_z(phi) R_y(theta) R_x(psi)
    R = rot.euler_to_matrix([30, -20, 10], "ZYX", degrees=True)
    np.testing.assert_allclose(
        R,
        rot.rot_z(np.deg2rad(30)) @ rot.rot_y(np.deg2rad(-20)) @ rot.rot_x(np.deg2rad(10)),
        atol=1e-15,
    )
    np.testing.assert_allclose(
        rot.matrix_to_euler(R, "ZYX", degrees=True), [30, -20, 10], atol=1e-12
    )


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 1, 5)])
def test_batch_shapes(shape):
    rng = np.random.default_rng(6)
    a = rng.uniform(-1, 1, shape + (3,))
    R = rot.euler_to_matrix(a, "XZY")
    assert R.shape == shape + (3, 3)
    assert rot.matrix_to_euler(R, "XZY").shape == shape + (3,)
    assert rot.matrix_to_quat(R).shape == shape + (4,)
    assert rot.euler_rate_matrix(a, "XZY").shape == shape + (3, 3)
    assert rot.dmatrix_deuler(a, "XZY").shape == shape + (3, 3, 3)
    assert rot.d2matrix_deuler(a, "XZY").shape == shape + (3, 3, 3, 3)
    flat = rot.euler_to_matrix(a.reshape(-1, 3), "XZY").reshape(shape + (3, 3))
    np.testing.assert_array_equal(R, flat)


# ---------------------------------------------------------------- quaternions
def test_quat_matrix_against_scipy():
    rng = np.random.default_rng(7)
    q = random_quats(rng, 1000)
    R = rot.quat_to_matrix(q)
    assert_rotation_close(R, Rotation.from_quat(q).as_matrix(), atol=1e-14)
    assert_quat_close(rot.matrix_to_quat(R), q, atol=1e-14)
    assert np.all(rot.matrix_to_quat(R)[:, 3] >= 0)
    # scalar-first order
    qs = np.roll(q, 1, axis=-1)
    assert_rotation_close(rot.quat_to_matrix(qs, scalar_first=True), R, atol=1e-15)
    assert_quat_close(rot.matrix_to_quat(R, scalar_first=True), qs, atol=1e-14)


def test_matrix_to_quat_180_degree_rotations():
    rng = np.random.default_rng(8)
    axes = rng.normal(size=(200, 3))
    axes = np.concatenate([axes, np.eye(3), -np.eye(3), [[1, 1, 0], [1e-9, 1, 0]]])
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    for angle in (np.pi, np.pi - 1e-8, 1e-12, 0.0):
        R = Rotation.from_rotvec(axes * angle).as_matrix()
        q = rot.matrix_to_quat(R)
        assert_quat_close(q, Rotation.from_matrix(R).as_quat(), atol=1e-12)
        assert_rotation_close(rot.quat_to_matrix(q), R, atol=1e-14)
        v = rot.matrix_to_rotvec(R)
        assert_rotation_close(Rotation.from_rotvec(v).as_matrix(), R, atol=1e-12)
        ax, ang = rot.matrix_to_axis_angle(R)
        np.testing.assert_allclose(ang, angle, atol=1e-7)
        assert_rotation_close(rot.axis_angle_to_matrix(ax, ang), R, atol=1e-12)


def test_rotvec_against_scipy():
    rng = np.random.default_rng(9)
    v = rng.normal(size=(500, 3))
    v *= rng.uniform(0, np.pi - 1e-6, (500, 1)) / np.linalg.norm(v, axis=1, keepdims=True)
    v = np.concatenate([v, 1e-7 * rng.normal(size=(20, 3)), np.zeros((1, 3))])
    assert_rotation_close(rot.rotvec_to_matrix(v), Rotation.from_rotvec(v).as_matrix(), atol=1e-14)
    assert_quat_close(rot.rotvec_to_quat(v), Rotation.from_rotvec(v).as_quat(), atol=1e-15)
    np.testing.assert_allclose(rot.matrix_to_rotvec(rot.rotvec_to_matrix(v)), v, atol=1e-12)
    np.testing.assert_allclose(rot.quat_to_rotvec(rot.rotvec_to_quat(v)), v, atol=1e-14)


def test_axis_angle_matches_scipy_and_degrees():
    rng = np.random.default_rng(10)
    axis = rng.normal(size=(50, 3))
    ang = rng.uniform(-4, 4, 50)
    ref = Rotation.from_rotvec(axis / np.linalg.norm(axis, axis=1, keepdims=True) * ang[:, None])
    assert_rotation_close(rot.axis_angle_to_matrix(axis, ang), ref.as_matrix(), atol=1e-14)
    assert_rotation_close(
        rot.axis_angle_to_matrix(axis, np.rad2deg(ang), degrees=True), ref.as_matrix(), atol=1e-13
    )


def test_quat_multiply_composes_like_matrices():
    rng = np.random.default_rng(11)
    p, q = random_quats(rng, 100), random_quats(rng, 100)
    assert_rotation_close(
        rot.quat_to_matrix(rot.quat_multiply(p, q)),
        rot.quat_to_matrix(p) @ rot.quat_to_matrix(q),
        atol=1e-14,
    )
    assert_quat_close(
        rot.quat_multiply(p, q),
        (Rotation.from_quat(p) * Rotation.from_quat(q)).as_quat(),
        atol=1e-14,
    )
    ident = rot.quat_multiply(q, rot.quat_conjugate(q))
    assert_quat_close(ident, np.tile([0, 0, 0, 1.0], (100, 1)), atol=1e-15)
    v = rng.normal(size=(100, 3))
    np.testing.assert_allclose(rot.quat_rotate(q, v), Rotation.from_quat(q).apply(v), atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(rot.quat_normalize(3 * q), axis=-1), 1.0)


def test_slerp_against_scipy():
    from scipy.spatial.transform import Slerp

    rng = np.random.default_rng(12)
    q0, q1 = random_quats(rng, 2)
    t = np.linspace(0, 1, 11)
    ref = Slerp([0, 1], Rotation.from_quat([q0, q1]))(t).as_quat()
    ours = rot.slerp(np.broadcast_to(q0, (11, 4)), np.broadcast_to(q1, (11, 4)), t)
    assert_quat_close(ours, ref, atol=1e-12)
    # identical endpoints: no division by zero
    np.testing.assert_allclose(rot.slerp(q0, q0, 0.3), q0, atol=1e-15)


def test_orthonormalize_nearest_rotation():
    rng = np.random.default_rng(13)
    R = Rotation.random(50, random_state=14).as_matrix()
    noisy = R + 1e-3 * rng.normal(size=R.shape)
    P = rot.orthonormalize(noisy)
    rot.check_rotation_matrix(P, tol=1e-12)
    np.testing.assert_allclose(np.linalg.det(P), 1.0, atol=1e-12)
    # Procrustes optimality: P is at least as close as scipy's projection and as R itself
    ref = Rotation.from_matrix(noisy).as_matrix()
    d_ours = np.linalg.norm(P - noisy, axis=(1, 2))
    assert np.all(d_ours <= np.linalg.norm(ref - noisy, axis=(1, 2)) + 1e-12)
    assert np.all(d_ours <= np.linalg.norm(R - noisy, axis=(1, 2)) + 1e-12)
    # a reflection is turned into a proper rotation
    assert np.linalg.det(rot.orthonormalize(np.diag([1.0, 1.0, -1.0]))) > 0


# ---------------------------------------------------------------- angular velocity maps
def omega_fd(seq, th, rates, frame, h=1e-6):
    Rp = rot.euler_to_matrix(th + h * rates, seq)
    Rm = rot.euler_to_matrix(th - h * rates, seq)
    R0 = rot.euler_to_matrix(th, seq)
    Rd = (Rp - Rm) / (2 * h)
    Rt = np.swapaxes(R0, -1, -2)
    return rot.vee(Rd @ Rt if frame == "world" else Rt @ Rd)


@pytest.mark.parametrize("seq", SEQS)
@pytest.mark.parametrize("frame", ["local", "world"])
def test_euler_rates_to_omega_against_finite_differences(seq, frame):
    rng = np.random.default_rng(15)
    th = random_angles(rng, 20)
    rates = rng.normal(size=(20, 3))
    w = rot.euler_rates_to_omega(th, rates, seq, frame=frame)
    np.testing.assert_allclose(w, omega_fd(seq, th, rates, frame), atol=1e-8)
    # inverse map
    keep = ~rot.gimbal_lock_mask(rot.euler_to_matrix(th, seq), seq, tol=1e-2)
    back = rot.omega_to_euler_rates(th[keep], w[keep], seq, frame=frame)
    np.testing.assert_allclose(back, rates[keep], atol=1e-9)
    # body and space related by R
    R = rot.euler_to_matrix(th, seq)
    other = rot.euler_rates_to_omega(th, rates, seq, frame="world" if frame == "local" else "local")
    if frame == "local":
        np.testing.assert_allclose(np.einsum("nij,nj->ni", R, w), other, atol=1e-13)


def test_ahbm_rate_matrices_closed_form():
    a, b, c = 0.4, -0.7, 1.1
    s2, c2, s3, c3 = np.sin(b), np.cos(b), np.sin(c), np.cos(c)
    np.testing.assert_allclose(  # AHBM eq. 2.13, ZXZ
        rot.euler_rate_matrix([a, b, c], "ZXZ"),
        [[s2 * s3, c3, 0], [s2 * c3, -s3, 0], [c2, 0, 1]],
        atol=1e-15,
    )
    np.testing.assert_allclose(  # AHBM eq. 2.14, ZYX
        rot.euler_rate_matrix([a, b, c], "ZYX"),
        [[-s2, 0, 1], [c2 * s3, c3, 0], [c2 * c3, -s3, 0]],
        atol=1e-15,
    )


@pytest.mark.parametrize("seq", ["XYZ", "zxz", "YXY", "zyx"])
def test_inverse_rate_matrix_singular(seq):
    th = np.array([[0.2, 0.3, 0.4], [0.1, 0.0 if is_proper(seq) else np.pi / 2, 0.5]])
    with pytest.raises(DataError, match="gimbal lock.*batch index 1"):
        rot.euler_rate_matrix_inv(th, seq)
    with pytest.raises(DataError, match="singular"):
        rot.omega_to_euler_rates(th, np.ones((2, 3)), seq)
    T = rot.euler_rate_matrix_inv(th[:1], seq)
    np.testing.assert_allclose(T @ rot.euler_rate_matrix(th[:1], seq), [np.eye(3)], atol=1e-14)


@pytest.mark.parametrize("seq", SEQS)
@pytest.mark.parametrize("frame", ["local", "world"])
def test_rate_matrix_derivatives_against_finite_differences(seq, frame):
    rng = np.random.default_rng(16)
    th = random_angles(rng, 5) * 0.8
    th[:, 1] = rng.uniform(0.3, 1.2, 5)  # away from gimbal lock for T
    dS = rot.deuler_rate_matrix_deuler(th, seq, frame=frame)
    dT = rot.deuler_rate_matrix_inv_deuler(th, seq, frame=frame)
    h = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fdS = (
            rot.euler_rate_matrix(th + e, seq, frame=frame)
            - rot.euler_rate_matrix(th - e, seq, frame=frame)
        ) / (2 * h)
        np.testing.assert_allclose(dS[:, k], fdS, atol=1e-8)
        fdT = (
            rot.euler_rate_matrix_inv(th + e, seq, frame=frame)
            - rot.euler_rate_matrix_inv(th - e, seq, frame=frame)
        ) / (2 * h)
        np.testing.assert_allclose(dT[:, k], fdT, atol=1e-6)


@pytest.mark.parametrize("frame", ["local", "world"])
def test_quaternion_rate_maps(frame):
    rng = np.random.default_rng(17)
    q = random_quats(rng, 30)
    w = rng.normal(size=(30, 3))
    qd = rot.omega_to_quat_rates(q, w, frame=frame)
    # finite differences: q(t+h) from rotating by w*h in the given frame
    h = 1e-6
    dq = Rotation.from_rotvec(w * h)
    Rq = Rotation.from_quat(q)
    qp = (Rq * dq if frame == "local" else dq * Rq).as_quat()
    dqm = Rotation.from_rotvec(-w * h)
    qm = (Rq * dqm if frame == "local" else dqm * Rq).as_quat()
    qp *= np.sign(np.sum(qp * q, axis=1))[:, None]
    qm *= np.sign(np.sum(qm * q, axis=1))[:, None]
    np.testing.assert_allclose(qd, (qp - qm) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(rot.quat_rates_to_omega(q, qd, frame=frame), w, atol=1e-13)
    G = rot.quat_rate_matrix(q, frame=frame)
    np.testing.assert_allclose(
        np.swapaxes(G, -1, -2) @ G, np.broadcast_to(np.eye(3) / 4, (30, 3, 3)), atol=1e-15
    )
    # AHBM eq. 2.16 (body frame) as printed
    if frame == "local":
        e1, e2, e3, e4 = q[0]
        np.testing.assert_allclose(
            G[0], 0.5 * np.array([[e4, -e3, e2], [e3, e4, -e1], [-e2, e1, e4], [-e1, -e2, -e3]])
        )
    # derivative of T w.r.t. q (constant, table 2-9) against finite differences
    dT = rot.dquat_rate_matrix_dquat(frame=frame)
    for k in range(4):
        e = np.zeros(4)
        e[k] = 1e-3
        fd = (
            rot.quat_rate_matrix(q[0] + e, frame=frame)
            - rot.quat_rate_matrix(q[0] - e, frame=frame)
        ) / 2e-3
        np.testing.assert_allclose(dT[k], fd, atol=1e-12)
    # scalar-first variant is a row permutation
    Gs = rot.quat_rate_matrix(np.roll(q, 1, axis=-1), frame=frame, scalar_first=True)
    np.testing.assert_allclose(Gs, np.roll(G, 1, axis=-2), atol=0)


# ---------------------------------------------------------------- derivatives of R
@pytest.mark.parametrize("seq", SEQS)
def test_dmatrix_deuler_against_finite_differences(seq):
    rng = np.random.default_rng(18)
    th = random_angles(rng, 6)
    dR = rot.dmatrix_deuler(th, seq)
    d2R = rot.d2matrix_deuler(th, seq)
    h = 1e-5
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd = (rot.euler_to_matrix(th + e, seq) - rot.euler_to_matrix(th - e, seq)) / (2 * h)
        np.testing.assert_allclose(dR[:, k], fd, atol=1e-9)
        fd2 = (rot.dmatrix_deuler(th + e, seq) - rot.dmatrix_deuler(th - e, seq)) / (2 * h)
        np.testing.assert_allclose(d2R[:, :, k], fd2, atol=1e-9)
    np.testing.assert_allclose(d2R, np.swapaxes(d2R, 1, 2), atol=1e-15)


def test_dmatrix_deuler_ahbm_table_2_1_entries():
    # Table 2-1 (ZXZ): dR33/dphi = 0, dR33/dtheta = -s2, dR13/dphi = c1 s2
    p, t, s = 0.3, 0.5, -0.8
    dR = rot.dmatrix_deuler([p, t, s], "ZXZ")
    assert dR[0, 2, 2] == pytest.approx(0.0, abs=1e-15)
    assert dR[1, 2, 2] == pytest.approx(-np.sin(t))
    assert dR[0, 0, 2] == pytest.approx(np.cos(p) * np.sin(t))


def test_dmatrix_dquat_against_finite_differences_and_table():
    rng = np.random.default_rng(19)
    q = random_quats(rng, 10)
    dR = rot.dmatrix_dquat(q)
    d2R = rot.d2matrix_dquat()
    h = 1e-6
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd = (
            rot.quat_to_matrix(q + e, normalize=False) - rot.quat_to_matrix(q - e, normalize=False)
        ) / (2 * h)
        np.testing.assert_allclose(dR[:, k], fd, atol=1e-9)
        fd2 = (rot.dmatrix_dquat(q + e) - rot.dmatrix_dquat(q - e)) / (2 * h)
        np.testing.assert_allclose(np.broadcast_to(d2R[:, k], fd2.shape), fd2, atol=1e-8)
    # table 2-7: dR11/de2 = -4 e2, dR21/de4 = 2 e3
    e1, e2, e3, e4 = q[0]
    assert dR[0, 1, 0, 0] == pytest.approx(-4 * e2)
    assert dR[0, 3, 1, 0] == pytest.approx(2 * e3)
    # table 2-8 constants: d2R11/de2^2 = -4; d2R21/de1de2 = 2
    assert d2R[1, 1, 0, 0] == -4 and d2R[0, 1, 1, 0] == 2
    # scalar-first ordering permutes the derivative axis
    ds = rot.dmatrix_dquat(np.roll(q, 1, axis=-1), scalar_first=True)
    np.testing.assert_allclose(ds, np.roll(dR, 1, axis=1), atol=0)


# ---------------------------------------------------------------- time series
@pytest.mark.parametrize("frame", ["world", "local"])
def test_angular_velocity_from_matrix_series(frame):
    h = 1e-3  # jittered, non-uniform sampling
    t = np.arange(2001) * h + np.random.default_rng(20).uniform(-0.3 * h, 0.3 * h, 2001)
    th = np.stack([np.sin(t), 0.5 * t**2, np.cos(2 * t)], axis=-1)
    thd = np.stack([np.cos(t), t, -2 * np.sin(2 * t)], axis=-1)
    thdd = np.stack([-np.sin(t), np.ones_like(t), -4 * np.cos(2 * t)], axis=-1)
    R = rot.euler_to_matrix(th, "ZYX")
    w = rot.angular_velocity(R, time=t, frame=frame)
    ref = rot.euler_rates_to_omega(th, thd, "ZYX", frame=frame)
    np.testing.assert_allclose(w, ref, atol=1e-5)
    alpha = rot.angular_acceleration(R, time=t, frame=frame)
    # alpha = S thdd + (dS/dt) thd
    dS = rot.deuler_rate_matrix_deuler(th, "ZYX", frame=frame)
    Sdot = np.einsum("nkij,nk->nij", dS, thd)
    S = rot.euler_rate_matrix(th, "ZYX", frame=frame)
    aref = np.einsum("nij,nj->ni", S, thdd) + np.einsum("nij,nj->ni", Sdot, thd)
    np.testing.assert_allclose(alpha[2:-2], aref[2:-2], atol=5e-3)


@pytest.mark.parametrize("seq", SEQS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_unwrap_euler_tumbling(seq, axis):
    t = np.linspace(0, 6 * np.pi, 1500)  # three full turns
    R = rot.matrices._axis_rot(axis, t) @ rot.euler_to_matrix([0.1, 0.2, 0.3], "XYZ")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        raw = rot.matrix_to_euler(R, seq)
    u = rot.unwrap_euler(raw, seq)
    assert_rotation_close(rot.euler_to_matrix(u, seq), R, atol=1e-12)
    steps = np.abs(np.diff(u, axis=0))
    # continuity: no jump anywhere near pi or 2 pi; steps shrink with the sampling
    assert steps.max() < 0.2
    np.testing.assert_allclose(u[0], raw[0])


def test_unwrap_euler_spin_through_middle_angle_boundary():
    t = np.linspace(0, 4 * np.pi, 800)
    th = np.stack([0.3 * np.sin(t), t, 0.2 * np.cos(t)], axis=-1)  # b runs through +-pi/2
    R = rot.euler_to_matrix(th, "XYZ")
    raw = rot.matrix_to_euler(R, "XYZ")
    assert np.abs(np.diff(raw, axis=0)).max() > 3  # the raw branch jumps
    np.testing.assert_allclose(rot.unwrap_euler(raw, "XYZ"), th, atol=1e-10)
    np.testing.assert_allclose(
        rot.unwrap_euler(np.rad2deg(raw), "XYZ", degrees=True), np.rad2deg(th), atol=1e-8
    )


# ---------------------------------------------------------------- properties
finite_angles = st.floats(-10, 10, allow_nan=False)
angle_triples = st.tuples(finite_angles, finite_angles, finite_angles)


@settings(max_examples=200, deadline=None)
@given(angles=angle_triples, seq=st.sampled_from(SEQS))
def test_property_orthonormal_det_one_round_trip(angles, seq):
    R = rot.euler_to_matrix(angles, seq)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        back = rot.matrix_to_euler(R, seq)
    np.testing.assert_allclose(rot.euler_to_matrix(back, seq), R, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(a=angle_triples, b=angle_triples)
def test_property_composition(a, b):
    Ra, Rb = rot.euler_to_matrix(a, "ZXY"), rot.euler_to_matrix(b, "xzx")
    qa, qb = rot.euler_to_quat(a, "ZXY"), rot.euler_to_quat(b, "xzx")
    np.testing.assert_allclose(rot.quat_to_matrix(rot.quat_multiply(qa, qb)), Ra @ Rb, atol=1e-13)
    assert_quat_close(rot.matrix_to_quat(Ra @ Rb), rot.quat_multiply(qa, qb), atol=1e-13)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("seq", ["XYX ", "XXY", "XyZ", "abc", "XY", 3, "XYY"])
def test_bad_sequence(seq):
    with pytest.raises(DataError, match="seq"):
        rot.euler_to_matrix([0.1, 0.2, 0.3], seq)


def test_bad_shapes_and_values():
    with pytest.raises(
        DataError, match=r"Expected `angles` to have shape \(\.\.\., 3\), got \(4,\)"
    ):
        rot.euler_to_matrix([0, 0, 0, 0], "XYZ")
    with pytest.raises(DataError, match="non-finite.*index"):
        rot.euler_to_matrix([0, np.nan, 0], "XYZ")
    with pytest.raises(DataError, match="`R`.*shape"):
        rot.matrix_to_euler(np.eye(4), "XYZ")
    with pytest.raises(DataError, match="not orthonormal.*batch index 1"):
        rot.matrix_to_quat(np.stack([np.eye(3), 2 * np.eye(3)]))
    with pytest.raises(DataError, match="reflection"):
        rot.matrix_to_rotvec(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(DataError, match="zero norm"):
        rot.quat_to_matrix([0, 0, 0, 0])
    with pytest.raises(DataError, match="numeric"):
        rot.skew("abc")
    with pytest.raises(DataError, match="frame.*'local'.*'world'"):
        rot.euler_rate_matrix([0, 0, 0], "XYZ", frame="inertial")
    with pytest.raises(DataError, match="strictly increasing"):
        eye4 = np.broadcast_to(np.eye(3), (4, 3, 3))
        rot.angular_velocity(eye4, time=[0, 1, 1, 2], frame="world")
    with pytest.raises(DataError, match="zero length"):
        rot.axis_angle_to_matrix([0, 0, 0], 1.0)
    # DataError is a ValueError for users of numpy conventions
    with pytest.raises(ValueError):
        rot.quat_to_matrix([1, 2, 3])


# --------------------------------------------------------------------------
# the frame vocabulary: "local" and "world" only, always given
# --------------------------------------------------------------------------
@pytest.mark.parametrize("old", ["body", "space"])
def test_old_frame_names_are_errors(old):
    th = np.array([[0.1, 0.2, 0.3], [0.3, -0.2, 0.5]])
    with pytest.raises(DataError, match="'local'.*'world'"):
        rot.euler_rate_matrix(th, "ZXZ", frame=old)
    with pytest.raises(DataError, match="'local'.*'world'"):
        rot.quat_rate_matrix([0.1, 0.2, 0.3, 0.9], frame=old)


def test_angular_velocity_frame_is_required():
    t = np.linspace(0, 1, 21)
    R = rot.euler_to_matrix(np.stack([t, t**2, 0 * t], -1), "ZYX")
    with pytest.raises(TypeError, match="frame"):
        rot.angular_velocity(R, time=t)
    with pytest.raises(TypeError, match="frame"):
        rot.angular_acceleration(R, time=t)


def test_dquat_rate_matrix_dquat_frame_is_keyword_only():
    with pytest.raises(TypeError):
        rot.dquat_rate_matrix_dquat("local")


def test_every_public_name_is_exported_by_the_package_not_by_kinematics():
    import ahbm.kinematics as kin
    from ahbm.kinematics.rotations import euler, matrices, quaternions, rates

    names = set()
    for m in (matrices, quaternions, euler, rates):
        names |= set(m.__all__)
    names.add("check_rotation_matrix")
    assert names == set(rot.__all__)
    for n in rot.__all__:
        assert n not in kin.__all__ and not hasattr(kin, n)
    assert "angular_velocity" in rates.__all__ and "dmatrix_deuler" in rates.__all__


def test_angular_velocity_time_axis_convention():
    t = np.linspace(0, 1, 21)
    R = rot.euler_to_matrix(np.stack([t, t**2, 0 * t], -1), "ZYX")
    by_time = rot.angular_velocity(R, time=t, frame="local")
    np.testing.assert_allclose(rot.angular_velocity(R, rate=20.0, frame="local"), by_time)
    with pytest.raises(DataError, match="exactly one of `rate`.*not both"):
        rot.angular_velocity(R, rate=20.0, time=t, frame="local")
    with pytest.raises(DataError, match="neither"):
        rot.angular_acceleration(R, frame="local")
    with pytest.raises(TypeError):
        rot.angular_velocity(R, t, frame="local")  # time is keyword-only
    with pytest.raises(TypeError):
        rot.angular_acceleration(R, t, frame="local")
