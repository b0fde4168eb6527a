"""Segment Newton-Euler inverse dynamics: hand-computed statics, RNEA equivalence,
force plate assignment, clinical sign conventions, joint power."""

from dataclasses import replace

import numpy as np
import pytest

from ahbm.analysis.segments import segment_motion
from ahbm.dynamics import assign_force_plates, rnea
from ahbm.dynamics.segmental import (
    JointLoads,
    SegmentMotion,
    clinical_moments,
    joint_power,
    loads_in_frame,
    loads_in_jcs,
    newton_euler,
)
from ahbm.errors import AhbmWarning, DataError
from ahbm.io.trial import ForcePlate
from ahbm.kinematics.configuration import random_q
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.rotations import rot_x, rot_y, rot_z
from ahbm.kinematics.tree import Model

G = 9.81


def _static(R, com):
    n, s = com.shape[:2]
    z = np.zeros((n, s, 3))
    return SegmentMotion(R, com, z, z, z)


def test_static_horizontal_chain_matches_hand_computation():
    # two horizontal links along x: root 3 kg with COM at 0.2 m, child 2 kg, joint at
    # 0.4 m, COM at 0.6 m; a 50 N upward force at the tip x = 0.8 m
    R = np.broadcast_to(np.eye(3), (1, 2, 3, 3))
    com = np.array([[[0.2, 0, 0], [0.6, 0, 0]]])
    jc = np.array([[[0.0, 0, 0], [0.4, 0, 0]]])
    tip = np.array([0.8, 0, 0])
    F = np.array([0, 0, 50.0])
    fext = np.zeros((1, 2, 6))
    fext[0, 1] = np.r_[np.cross(tip, F), F]
    loads = newton_euler([-1, 0], [3.0, 2.0], np.zeros((2, 3, 3)), _static(R, com), jc, f_ext=fext)
    # child: holds its weight minus 50 N; moment about the joint balances gravity and tip force
    np.testing.assert_allclose(loads.force[0, 1], [0, 0, 2 * G - 50], atol=1e-12)
    np.testing.assert_allclose(loads.moment[0, 1], [0, -(0.2 * 2 * G) + 0.4 * 50, 0], atol=1e-12)
    # root: the whole chain
    np.testing.assert_allclose(loads.force[0, 0], [0, 0, 5 * G - 50], atol=1e-12)
    my = -(0.2 * 3 * G + 0.6 * 2 * G) + 0.8 * 50
    np.testing.assert_allclose(loads.moment[0, 0], [0, my, 0], atol=1e-12)


def test_standing_leg_gravity_moments_by_hand():
    # vertical leg: foot on the ground with its COM 0.05 m ahead of the ankle,
    # shank and thigh COMs 0.02 m and 0.03 m ahead of their joints; GRF = leg weight
    # plus 300 N from above, applied 0.04 m ahead of the ankle
    m = np.array([10.0, 4.0, 1.0])  # thigh, shank, foot
    com = np.array([[[0.03, 0, 0.7], [0.02, 0, 0.3], [0.05, 0, 0.03]]])
    jc = np.array([[[0.0, 0, 0.9], [0.0, 0, 0.5], [0.0, 0, 0.08]]])
    R = np.broadcast_to(np.eye(3), (1, 3, 3, 3))
    grf = np.array([0, 0, m.sum() * G + 300])
    cop = np.array([0.04, 0, 0])
    fext = np.zeros((1, 3, 6))
    fext[0, 2] = np.r_[np.cross(cop, grf), grf]
    loads = newton_euler([-1, 0, 1], m, np.zeros((3, 3, 3)), _static(R, com), jc, f_ext=fext)
    # ankle: force = weight of foot - GRF; moment y: x-lever of gravity and GRF about the ankle
    fa = m[2] * G - grf[2]
    np.testing.assert_allclose(loads.force[0, 2], [0, 0, fa], atol=1e-10)
    # M + r_c x (-m g) + r_cop x GRF = 0; y component of r x F is -x F_z
    my_ankle = -(0.05 * m[2] * G) + 0.04 * grf[2]
    np.testing.assert_allclose(loads.moment[0, 2, 1], my_ankle, atol=1e-10)
    # knee: foot and shank weights and the GRF, about (0, 0, 0.5)
    my_knee = -(0.05 * m[2] * G + 0.02 * m[1] * G) + 0.04 * grf[2]
    np.testing.assert_allclose(loads.moment[0, 1, 1], my_knee, atol=1e-10)
    my_hip = -(0.05 * m[2] * G + 0.02 * m[1] * G + 0.03 * m[0] * G) + 0.04 * grf[2]
    np.testing.assert_allclose(loads.moment[0, 0, 1], my_hip, atol=1e-10)
    np.testing.assert_allclose(loads.force[0, 0], [0, 0, -300.0], atol=1e-10)


def _leg_model():
    """Pelvis (free) with two legs of spherical hips, knees and ankles."""
    rng = np.random.default_rng(7)
    model = Model("legs")

    def inertia():
        Q = rot_x(rng.uniform(-1, 1)) @ rot_y(rng.uniform(-1, 1)) @ rot_z(rng.uniform(-1, 1))
        return Q @ np.diag(rng.uniform(0.05, 0.1, 3)) @ Q.T

    model.add_body(
        "pelvis", "ground", {"type": "free"}, mass=10.0, com=[0, 0, 0.05], inertia=inertia()
    )
    for side, y in (("r", -0.09), ("l", 0.09)):
        model.add_body(
            f"thigh_{side}",
            "pelvis",
            {"type": "spherical"},
            position=[0, y, 0],
            mass=8.0,
            com=[0.01, 0, -0.18],
            inertia=inertia(),
        )
        model.add_body(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "spherical"},
            position=[0, 0, -0.42],
            mass=3.5,
            com=[0, 0.005, -0.19],
            inertia=inertia(),
        )
        model.add_body(
            f"foot_{side}",
            f"shank_{side}",
            {"type": "spherical"},
            position=[0, 0, -0.43],
            mass=1.0,
            com=[0.06, 0, -0.03],
            inertia=inertia(),
        )
    return model


def _motion_from_tree(model, q, qd, qdd):
    kin = forward_kinematics(model, q, qd, qdd)
    T = kin.transforms
    R = T[..., :3, :3]
    origin = T[..., :3, 3]
    w_b, v_b = kin.velocities[..., :3], kin.velocities[..., 3:]
    al_b, a_b = kin.accelerations[..., :3], kin.accelerations[..., 3:]
    c = np.array(model.coms)
    acc_b = a_b + np.cross(al_b, c) + np.cross(w_b, v_b + np.cross(w_b, c))
    com = origin + np.einsum("...ij,...j->...i", R, c)
    rot = lambda x: np.einsum("...ij,...j->...i", R, x)  # noqa: E731
    return SegmentMotion(R, com, rot(acc_b), rot(w_b), rot(al_b)), origin


@pytest.mark.parametrize("with_external", [False, True])
def test_newton_euler_equals_rnea_of_the_tree(with_external):
    model = _leg_model()
    rng = np.random.default_rng(3)
    n = 40
    q = random_q(model, rng=rng, size=(n,))
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv)) * 3
    motion, origin = _motion_from_tree(model, q, qd, qdd)
    fext = np.zeros((n, model.n_bodies, 6))
    if with_external:
        for foot in (3, 6):
            F = rng.normal(size=(n, 3)) * 100 + [0, 0, 400]
            r = origin[:, foot] + rng.normal(size=(n, 3)) * 0.05
            fext[:, foot] = np.concatenate([np.cross(r, F) + [0, 0, 1.5], F], axis=1)
    tau = rnea(model, q, qd, qdd, f_ext=fext)
    loads = newton_euler(
        model.parent,
        model.masses,
        np.array(model.inertias),
        motion,
        origin,
        gravity=model.gravity,
        f_ext=fext,
    )
    R = motion.rotation
    for i in range(1, model.n_bodies):
        k = model.v_index[i]
        # spherical joint: tau = moment about the joint centre in the child body frame
        np.testing.assert_allclose(
            loads_in_frame(loads.moment[:, i], R[:, i]), tau[:, k : k + 3], atol=1e-8
        )
    # free root: force in the world frame, moment about the pelvis origin in the body frame
    np.testing.assert_allclose(loads.force[:, 0], tau[:, 0:3], atol=1e-8)
    np.testing.assert_allclose(loads_in_frame(loads.moment[:, 0], R[:, 0]), tau[:, 3:6], atol=1e-8)


def test_jcs_projections_are_the_torques_of_zxy_euler_joints():
    """The lower-extremity model has "ZXY" Euler hips, knees and ankles: RNEA's torques
    are the projections of the joint moments on the Grood-Suntay axes."""
    from ahbm.gait import lower_extremity_model

    model, _ = lower_extremity_model(mass=70.0, height=1.75)
    rng = np.random.default_rng(11)
    n = 30
    q = random_q(model, rng=rng, size=(n,))
    # Euler angles inside +-1.2 rad: the floating axis keeps the joint's sign (|beta| < 90 deg)
    q[:, 7:] = rng.uniform(-1.2, 1.2, (n, model.nq - 7))
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv)) * 3
    motion, origin = _motion_from_tree(model, q, qd, qdd)
    tau = rnea(model, q, qd, qdd)
    loads = newton_euler(
        model.parent, model.masses, np.array(model.inertias), motion, origin, gravity=model.gravity
    )
    R = motion.rotation
    for i in range(1, model.n_bodies):
        k = model.v_index[i]
        proj = loads_in_jcs(loads.moment[:, i], R[:, model.parent[i]], R[:, i])
        np.testing.assert_allclose(proj, tau[:, k : k + 3], atol=1e-8)


def test_segment_motion_matches_exact_kinematics():
    model = _leg_model()
    t = np.linspace(0, 1, 401)
    w = 2 * np.pi
    q = np.zeros((t.size, model.nq))
    qd = np.zeros((t.size, model.nv))
    q[:, 6] = 1.0  # identity quaternion of the root
    q[:, 0] = 1.2 * t
    qd[:, 0] = 1.2
    # hip (spherical: quaternion) swinging about y
    ang = 0.5 * np.sin(w * t)
    q[:, 7:11] = np.stack([0 * t, np.sin(ang / 2), 0 * t, np.cos(ang / 2)], 1)
    q[:, 11:15] = [0, 0, 0, 1]
    q[:, 15:19] = [0, 0, 0, 1]
    q[:, 19:] = np.tile([0, 0, 0, 1.0], 3)
    qd[:, 7] = 0.5 * w * np.cos(w * t)
    qdd = np.zeros_like(qd)
    qdd[:, 7] = -0.5 * w**2 * np.sin(w * t)
    exact, _ = _motion_from_tree(model, q, qd, qdd)
    est = segment_motion(exact.rotation, exact.com, time=t)
    sl = slice(5, -5)
    np.testing.assert_allclose(est.omega[sl], exact.omega[sl], atol=2e-3 * w)
    np.testing.assert_allclose(est.alpha[sl], exact.alpha[sl], atol=2e-2 * w**2)
    np.testing.assert_allclose(est.com_acc[sl], exact.com_acc[sl], atol=5e-3 * w**2)


def test_segment_motion_nan_frames_stay_local():
    t = np.linspace(0, 1, 50)
    R = rot_z(t)[:, None].copy()
    com = np.zeros((50, 1, 3))
    R[20] = np.nan
    com[20] = np.nan
    m = segment_motion(R, com, time=t)
    assert np.isnan(m.omega[19:22]).all()
    assert np.isfinite(m.omega[:18]).all() and np.isfinite(m.omega[23:]).all()


def test_clinical_signs_follow_the_angle_conventions():
    from ahbm.kinematics.jcs import grood_suntay_angles

    I = np.eye(3)  # ISB axes: x anterior, y up, z right
    # a small rotation of the distal segment about the moment vector gives the clinical
    # angle whose sign the moment opposes (sagittal, frontal) or shares (transverse)
    expected_sign = {
        "hip": (-1, -1, 1),
        "knee": (-1, -1, 1),
        "ankle": (-1, -1, 1),
    }
    for joint, signs in expected_sign.items():
        for side in ("Left", "Right"):
            for k, axis in enumerate(([0, 0, 1.0], [1.0, 0, 0], [0, 1.0, 0])):
                Rd = rot_x(0.0)
                if k == 0:
                    Rd = rot_z(0.1)
                elif k == 1:
                    Rd = rot_x(0.1)
                else:
                    Rd = rot_y(0.1)
                angle = grood_suntay_angles(I, Rd, side=side.lower(), joint=joint)[k]
                moment = clinical_moments(axis, I, I, joint=joint, side=side)[k]
                assert np.sign(moment) == signs[k] * np.sign(angle), (joint, side, k)
    # Plug-in Gait words: hip/knee extensor and ankle plantarflexor moments positive
    assert clinical_moments([0, 0, -5.0], I, I, joint="hip", side="Right")[0] == 5.0
    assert clinical_moments([0, 0, 5.0], I, I, joint="knee", side="Left")[0] == 5.0
    assert clinical_moments([0, 0, -5.0], I, I, joint="ankle", side="Left")[0] == 5.0
    with pytest.raises(DataError, match="joint"):
        clinical_moments([0, 0, 1.0], I, I, joint="elbow", side="Right")
    with pytest.raises(DataError, match="side"):
        clinical_moments([0, 0, 1.0], I, I, joint="hip", side="middle")


def test_joint_power_equals_rate_of_work_against_finite_difference():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(20, 3))
    wd, wp = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    np.testing.assert_allclose(joint_power(M, wd, wp), np.einsum("ij,ij->i", M, wd - wp))
    # planar check: constant moment, relative angle phi(t); P = M dphi/dt
    t = np.linspace(0, 1, 1001)
    phi = np.sin(3 * t)
    P = joint_power(
        np.tile([0, 0, 2.0], (t.size, 1)),
        np.stack([0 * t, 0 * t, np.gradient(phi, t)], 1),
        np.zeros((t.size, 3)),
    )
    work = np.trapezoid(P, t)
    assert work == pytest.approx(2.0 * (phi[-1] - phi[0]), rel=1e-5)


def _plate(force, cop, rate=100.0, corners=None):
    n = force.shape[0]
    return ForcePlate(
        force,
        np.zeros((n, 3)),
        cop,
        np.zeros((n, 3)),
        np.zeros((4, 3)) if corners is None else corners,
        np.zeros(3),
        rate,
    )


def test_force_plate_assignment_two_plates_two_feet():
    n = 30
    t = np.arange(n) / 100.0
    left = np.tile([[0.0, 0.1, 0.08], [0.2, 0.1, 0.0]], (n, 1, 1))
    right = np.tile([[0.6, -0.1, 0.08], [0.8, -0.1, 0.0]], (n, 1, 1))
    f = np.tile([10.0, 0, 600.0], (n, 1))
    p1 = _plate(f, np.tile([0.05, 0.1, 0.0], (n, 1)))
    p2 = _plate(f * 0.5, np.tile([0.7, -0.12, 0.0], (n, 1)))
    # a second plate under the left foot's front adds to the first
    p3 = _plate(f * 0.25, np.tile([0.18, 0.1, 0.0], (n, 1)))
    a = assign_force_plates([p1, p2, p3], {2: left, 4: right}, time=t, n_segments=5)
    assert a.contact[:, 2].all() and a.contact[:, 4].all() and not a.contact[:, :2].any()
    np.testing.assert_allclose(a.f_ext[:, 2, 3:], f * 1.25)
    expected_n = np.cross([0.05, 0.1, 0], f[0]) + np.cross([0.18, 0.1, 0], 0.25 * f[0])
    np.testing.assert_allclose(a.f_ext[0, 2, :3], expected_n, atol=1e-9)
    assert (a.plate_of[:, 0] == 2).all() and (a.plate_of[:, 1] == 4).all()
    assert not a.ambiguous.any()


def test_force_plate_two_feet_on_one_plate_and_no_foot_are_flagged():
    n = 20
    t = np.arange(n) / 100.0
    left = np.tile([[0.0, 0.05, 0.08], [0.2, 0.05, 0.0]], (n, 1, 1))
    right = np.tile([[0.0, -0.05, 0.08], [0.2, -0.05, 0.0]], (n, 1, 1))
    p = _plate(np.tile([0, 0, 700.0], (n, 1)), np.tile([0.1, 0.0, 0.0], (n, 1)))
    with pytest.warns(AhbmWarning, match="two feet"):
        a = assign_force_plates([p], {0: left, 1: right}, time=t)
    assert a.ambiguous.all() and not a.contact.any()
    far = _plate(np.tile([0, 0, 700.0], (n, 1)), np.tile([2.0, 0.0, 0.0], (n, 1)))
    with pytest.warns(AhbmWarning, match="no foot within"):
        a = assign_force_plates([far], {0: left}, rate=100.0)
    assert a.ambiguous.all()


def test_force_plate_assignment_errors():
    n = 10
    t = np.arange(n) / 100.0
    foot = np.tile([[0.0, 0, 0.08], [0.2, 0, 0.0]], (n, 1, 1))
    idle = _plate(np.zeros((n, 3)), np.full((n, 3), np.nan))
    with pytest.raises(DataError, match="No force plate is loaded"):
        assign_force_plates([idle], {0: foot}, time=t)
    with pytest.raises(DataError, match="feet"):
        assign_force_plates([idle], {0: foot[:, :1]}, time=t)


def test_plate_on_raised_surface_cop_recovered():
    n = 10
    t = np.arange(n) / 100.0
    h = 0.05
    corners = np.array([[1, 1, h], [-1, 1, h], [-1, -1, h], [1, -1, h]], float)
    foot = np.tile([[0.3, 0.0, 0.12], [0.5, 0.0, 0.06]], (n, 1, 1))
    f = np.tile([80.0, -30.0, 700.0], (n, 1))
    p = _plate(f, np.tile([0.45, 0.02, h], (n, 1)), corners=corners)
    a = assign_force_plates([p], {0: foot}, time=t, max_distance=0.03)
    assert a.contact.all()


def test_force_plate_assignment_time_axis():
    n = 10
    t = 0.5 + np.arange(n) / 100.0
    foot = np.tile([[0.0, 0, 0.08], [0.2, 0, 0.0]], (n, 1, 1))
    p = _plate(np.tile([0, 0, 700.0], (n, 1)), np.tile([0.1, 0.0, 0.0], (n, 1)))
    new = assign_force_plates([p], {0: foot}, time=t)
    by_rate = assign_force_plates([p], {0: foot}, rate=100.0)
    np.testing.assert_allclose(by_rate.f_ext, new.f_ext)
    with pytest.raises(DataError, match="exactly one"):
        assign_force_plates([p], {0: foot})
    with pytest.raises(DataError, match="not both"):
        assign_force_plates([p], {0: foot}, rate=100.0, time=t)


def test_segmental_results_are_objects():
    R = np.broadcast_to(np.eye(3), (1, 2, 3, 3))
    com = np.array([[[0.2, 0, 0], [0.6, 0, 0]]])
    jc = np.array([[[0.0, 0, 0], [0.4, 0, 0]]])
    motion = _static(R, com)
    loads = newton_euler([-1, 0], [3.0, 2.0], np.zeros((2, 3, 3)), motion, jc)
    assert repr(loads).startswith("JointLoads(force=array(1, 2, 3) float64")
    # a plain tuple of the five arrays is still accepted as the motion
    parts = (motion.rotation, motion.com, motion.com_acc, motion.omega, motion.alpha)
    again = newton_euler([-1, 0], [3.0, 2.0], np.zeros((2, 3, 3)), parts, jc)
    np.testing.assert_array_equal(again.force, loads.force)


def test_newton_euler_input_errors():
    m = _static(np.broadcast_to(np.eye(3), (2, 2, 3, 3)), np.zeros((2, 2, 3)))
    with pytest.raises(DataError, match="parent"):
        newton_euler([0, -1], [1, 1], np.zeros((2, 3, 3)), m, np.zeros((2, 2, 3)))
    with pytest.raises(DataError, match="mass"):
        newton_euler([-1, 0], [1, -1], np.zeros((2, 3, 3)), m, np.zeros((2, 2, 3)))
    with pytest.raises(DataError, match="joint_centres"):
        newton_euler([-1, 0], [1, 1], np.zeros((2, 3, 3)), m, np.zeros((2, 3)))
    with pytest.raises(DataError, match="f_ext"):
        newton_euler(
            [-1, 0], [1, 1], np.zeros((2, 3, 3)), m, np.zeros((2, 2, 3)), f_ext=np.zeros((2, 2, 3))
        )
    assert isinstance(
        newton_euler([-1, 0], [1, 1], np.zeros((2, 3, 3)), m, np.zeros((2, 2, 3))), JointLoads
    )


def _shared_plate_case(n=40, right_z=0.0, right_speed=0.0):
    """Left foot standing on a 0.5 m x 0.6 m plate with the centre of pressure under it; the
    right foot's heel on the same plate, 0.19 m from the centre of pressure."""
    t = np.arange(n) / 100.0
    left = np.tile([[0.0, 0.05, 0.06], [0.2, 0.05, 0.02]], (n, 1, 1))
    right = np.tile([[0.3, -0.1, 0.06], [0.5, -0.1, 0.02]], (n, 1, 1))
    right[:, :, 0] += right_speed * (t - t[n // 2])[:, None]
    right[n // 4 : 3 * n // 4, :, 2] += right_z  # (lifted in the middle frames only)
    corners = np.array([[0.0, -0.3, 0], [0.5, -0.3, 0], [0.5, 0.3, 0], [0.0, 0.3, 0]])
    p = _plate(np.tile([0, 0, 700.0], (n, 1)), np.tile([0.18, 0.05, 0.0], (n, 1)),
               corners=corners)  # fmt: skip
    return t, left, right, p


def test_two_grounded_feet_on_one_plate_are_ambiguous_whatever_the_cop():
    t, left, right, p = _shared_plate_case()
    with pytest.warns(AhbmWarning, match="two feet on the plate"):
        a = assign_force_plates([p], {0: left, 1: right}, time=t)
    assert a.ambiguous.all() and not a.contact.any()
    # without the test, the nearer foot gets the whole plate (the right heel's share too)
    a = assign_force_plates([p], {0: left, 1: right}, time=t, contact_height=None)
    assert a.contact[:, 0].all() and not a.contact[:, 1].any() and not a.ambiguous.any()


def test_a_foot_in_the_air_or_swinging_past_does_not_share_the_plate():
    # lifted 5 cm above its own lowest height in the middle frames: only those are clear
    t, left, right, p = _shared_plate_case(right_z=0.05)
    with pytest.warns(AhbmWarning, match="two feet"):
        a = assign_force_plates([p], {0: left, 1: right}, time=t)
    mid = slice(t.size // 4, 3 * t.size // 4)
    assert a.contact[mid, 0].all() and not a.ambiguous[mid].any()
    assert a.ambiguous[: t.size // 4].all()
    # low but moving at 3 m/s (a swing over the plate): not on the ground
    t, left, right, p = _shared_plate_case(right_speed=3.0)
    a = assign_force_plates([p], {0: left, 1: right}, time=t)
    assert a.contact[:, 0].all() and not a.ambiguous.any()


def test_plate_outline_helpers():
    from ahbm.dynamics.plate_assignment import _inside_outline, _outline_area

    quad = np.array([[0.0, 0.0], [0.4, 0.0], [0.4, 0.6], [0.0, 0.6]])
    pts = np.array([[[0.2, 0.3], [0.41, 0.3], [0.0, 0.0], [np.nan, 0.1]]])
    np.testing.assert_array_equal(_inside_outline(pts, quad), [[True, False, True, False]])
    np.testing.assert_array_equal(_inside_outline(pts, quad[::-1]), [[True, False, True, False]])
    corners = np.c_[quad, np.zeros(4)]
    assert _outline_area(corners) == pytest.approx(0.24)
    assert _outline_area(np.zeros((4, 3))) == 0.0 and _outline_area(np.full((4, 3), np.nan)) == 0


def test_feet_on_plate():
    from ahbm.dynamics import feet_on_plate

    t, left, right, p = _shared_plate_case(right_z=0.05)
    on = feet_on_plate([left, right], p.corners, time=t)
    mid = slice(t.size // 4, 3 * t.size // 4)
    assert on[:, 0].all() and not on[mid, 1].any() and on[: t.size // 4, 1].all()
    assert not feet_on_plate([left], np.zeros((4, 3)), time=t).any()  # unknown outline
    with pytest.raises(DataError, match=r"feet\[0\]"):
        feet_on_plate([left[:, 0]], p.corners, time=t)
    with pytest.raises(DataError, match="corners"):
        feet_on_plate([left], p.corners[:3], time=t)


def test_a_load_between_two_feet_on_the_plate_is_not_dropped_as_under_no_foot():
    """The centre of pressure between two feet that share a plate is far from both
    heel-toe lines; the load is theirs, not an offset: it is kept for the assignment."""
    import warnings

    from ahbm.gait.kinetics import drop_loads_under_no_foot

    t, left, right, p = _shared_plate_case()
    p = replace(p, cop=np.tile([0.25, -0.3, 0.0], (t.size, 1)))  # 0.2+ m from both lines
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = drop_loads_under_no_foot([p], [left, right], t)
    assert kept[0] is p
    far = replace(p, corners=p.corners + [3.0, 0.0, 0.0], cop=p.cop + [3.0, 0.0, 0.0])
    with pytest.warns(AhbmWarning, match="under no foot"):
        dropped = drop_loads_under_no_foot([far], [left, right], t)
    assert not dropped[0].force[:, 2].any()
