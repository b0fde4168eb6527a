"""Winter's 2-D sagittal inverse dynamics: closed-form statics and agreement with
the 3-D segment Newton-Euler routine on planar motion."""

import numpy as np
import pytest

from ahbm.bsp import segment_parameters
from ahbm.dynamics.segmental import SegmentMotion, clinical_moments, newton_euler
from ahbm.errors import DataError
from ahbm.kinematics.jcs import lab_reference_frame
from ahbm.kinematics.rotations import rot_y
from ahbm.models.sagittal import sagittal_inverse_dynamics

G = 9.81
MASS = 70.0


def _standing(n=40):
    pose = np.array([[0, 1.4], [0, 0.9], [0, 0.5], [0, 0.08], [-0.05, 0], [0.15, 0]])
    return np.arange(n) / 100.0, np.tile(pose, (n, 1, 1))


def test_static_standing_matches_hand_computation():
    t, mk = _standing()
    x_cop, fy = 0.02, 700.0
    grf = np.tile([0.0, fy, x_cop * fy], (t.size, 1))
    r = sagittal_inverse_dynamics(mk, grf, mass=MASS, time=t)
    m_foot = 0.0145 * MASS
    # foot COM halfway ankle-toe: 0.075 m ahead of the ankle; thigh and leg COMs on x = 0
    plantar = x_cop * fy - 0.075 * m_foot * G
    np.testing.assert_allclose(
        r.moment, np.tile([plantar, -plantar, plantar], (t.size, 1)) / MASS, atol=1e-9
    )
    np.testing.assert_allclose(r.angles, 0.0, atol=1e-12)
    np.testing.assert_allclose(r.angular_velocity, 0.0, atol=1e-9)
    np.testing.assert_allclose(r.power, 0.0, atol=1e-9)
    # force of the pelvis on the thigh: the leg's weight minus the ground reaction
    m_leg = (0.100 + 0.0465 + 0.0145) * MASS
    np.testing.assert_allclose(
        r.force[:, 0], np.tile([0, m_leg * G - fy], (t.size, 1)) / MASS, atol=1e-9
    )


def _planar_motion(t):
    """Walking-like planar joint kinematics: segment angles and the marker positions."""
    w = 2 * np.pi * 1.0
    th_trunk = np.pi / 2 + 0.05 * np.sin(w * t)
    th_thigh = -np.pi / 2 + 0.4 * np.sin(w * t)
    th_leg = th_thigh - 0.6 * (1 - np.cos(w * t)) / 2
    th_foot = th_leg + np.pi / 2 + 0.2 * np.sin(w * t + 0.3)  # ankle -> toe direction
    hip = np.stack([1.2 * t, 0.9 + 0.02 * np.sin(2 * w * t)], 1)
    u = lambda a: np.stack([np.cos(a), np.sin(a)], 1)  # noqa: E731
    L = {"trunk": 0.5, "thigh": 0.42, "leg": 0.43, "foot": 0.16}
    sh = hip + L["trunk"] * u(th_trunk)
    knee = hip + L["thigh"] * u(th_thigh)
    ank = knee + L["leg"] * u(th_leg)
    toe = ank + L["foot"] * u(th_foot)
    heel = ank - 0.06 * u(th_foot) + 0.0 * u(th_foot + np.pi / 2)
    mk = np.stack([sh, hip, knee, ank, heel, toe], 1)
    return mk, {"thigh": th_thigh, "shank": th_leg, "foot": th_foot, "trunk": th_trunk}


def _three_d(t, mk, th, grf):
    """The same motion through the 3-D Newton-Euler routine (x forward, y left, z up)."""
    to3 = lambda p: np.stack([p[:, 0], 0 * p[:, 0], p[:, 1]], 1)  # noqa: E731
    par = segment_parameters(
        "dempster_winter",
        mass=MASS,
        height=1.75,
        segment_lengths={"thigh": 0.42, "shank": 0.43, "foot": 0.16},
    )
    names = ["thigh", "shank", "foot"]
    joints = [to3(mk[:, 1]), to3(mk[:, 2]), to3(mk[:, 3])]
    ends = [to3(mk[:, 2]), to3(mk[:, 3]), to3(mk[:, 5])]
    frac = [0.433, 0.433, 0.5]
    mass = np.array([par[f"{s}_r"].mass for s in names])
    inertia = np.array([np.eye(3) * par[f"{s}_r"].inertia[1, 1] for s in names])
    com = np.stack([j + f * (e - j) for j, e, f in zip(joints, ends, frac, strict=True)], 1)
    # ccw in the 2-D view (about the subject's right, -y) is a rotation about -y
    phi = np.stack([th["thigh"], th["shank"], th["foot"]], 1)
    R = rot_y(-phi) @ lab_reference_frame()  # ISB segment axes
    dt = t[1] - t[0]
    d1 = lambda x: np.gradient(x, dt, axis=0, edge_order=2)  # noqa: E731
    omega = np.zeros(com.shape)
    omega[..., 1] = -d1(phi)
    alpha = np.zeros(com.shape)
    alpha[..., 1] = -d1(d1(phi))
    motion = SegmentMotion(R, com, d1(d1(com)), omega, alpha)
    fext = np.zeros((t.size, 3, 6))
    fext[:, 2, 3] = grf[:, 0]
    fext[:, 2, 5] = grf[:, 1]
    fext[:, 2, 1] = -grf[:, 2]
    loads = newton_euler([-1, 0, 1], mass, inertia, motion, np.stack(joints, 1), f_ext=fext)
    trunk = rot_y(-th["trunk"]) @ lab_reference_frame()
    prox = [trunk, R[:, 0], R[:, 1]]
    return (
        np.stack(
            [
                clinical_moments(loads.moment[:, k], prox[k], R[:, k], joint=j, side="Right")[:, 0]
                for k, j in enumerate(("hip", "knee", "ankle"))
            ],
            1,
        )
        / MASS
    )


def test_agrees_with_3d_newton_euler_on_planar_motion():
    t = np.arange(0, 2.0, 1 / 200.0)
    mk, th = _planar_motion(t)
    # ground reaction under the foot during the first half of each cycle
    stance = np.sin(2 * np.pi * t) > 0
    fy = np.where(stance, 700.0 * np.sin(2 * np.pi * t), 0.0)
    fx = np.where(stance, 80 * np.sin(4 * np.pi * t), 0.0)
    x_cop = mk[:, 3, 0] + 0.05
    grf = np.stack([fx, fy, x_cop * fy], 1)
    r = sagittal_inverse_dynamics(mk, grf, mass=MASS, time=t, cutoff=15.0)
    ref = _three_d(t, mk, th, grf)
    sl = slice(40, -40)
    peak = np.abs(ref[sl]).max(axis=0)
    np.testing.assert_allclose(r.moment[sl], ref[sl], atol=0.01 * peak.max())
    # angles as defined: knee flexion = thigh - leg angle
    np.testing.assert_allclose(r.angles[sl, 1], (th["thigh"] - th["shank"])[sl], atol=1e-4)


def test_nan_gap_filtered_then_interpolated():
    t = np.arange(0, 2.0, 1 / 100.0)
    mk, _ = _planar_motion(t)
    grf = np.zeros((t.size, 3))
    full = sagittal_inverse_dynamics(mk, grf, mass=MASS, time=t)
    gappy = mk.copy()
    gappy[90:96, 2] = np.nan  # knee marker gap
    gappy[:3, 5] = np.nan  # toe missing at the start: no extrapolation
    r = sagittal_inverse_dynamics(gappy, grf, mass=MASS, time=t)
    assert np.isnan(r.angles[:3, 2]).all()
    inner = slice(20, -20)
    assert np.isfinite(r.angles[inner]).all()
    np.testing.assert_allclose(r.angles[85:100, 1], full.angles[85:100, 1], atol=np.radians(1))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"markers_2d": np.zeros((40, 5, 2))}, "markers_2d"),
        ({"grf_2d": np.zeros((40, 2))}, "grf_2d"),
        ({"mass": -3.0}, "mass"),
        ({"bsp": "de_leva"}, "bsp"),
        ({"time": np.r_[np.arange(39) / 100.0, 1.0]}, "uniform"),
        ({"rate": 100.0}, "exactly one of `rate`"),
        ({"rate": -1.0, "time": None}, "positive"),
        ({"markers_2d": {"hip": np.zeros((40, 2))}}, "lacks"),
    ],
)
def test_bad_input(kwargs, match):
    t, mk = _standing()
    args = {"time": t, "markers_2d": mk, "grf_2d": np.zeros((40, 3)), "mass": MASS}
    args.update(kwargs)
    with pytest.raises(DataError, match=match):
        sagittal_inverse_dynamics(**args)


def test_rate_equals_time_and_anthropometrics_are_keyword_only():
    t, mk = _standing()
    grf = np.tile([0.0, 700.0, 14.0], (t.size, 1))
    a = sagittal_inverse_dynamics(mk, grf, mass=MASS, time=t)
    b = sagittal_inverse_dynamics(mk, grf, mass=MASS, rate=100.0)
    np.testing.assert_allclose(a.moment, b.moment, atol=1e-9)
    with pytest.raises(TypeError):
        sagittal_inverse_dynamics(t, mk, grf, MASS)  # the 0.1 positional order
