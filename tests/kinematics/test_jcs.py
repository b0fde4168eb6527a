"""Tests of ahbm.kinematics.jcs: JCS and Cardan angles, clinical signs, lab
angles, hip regressions, chord function, sphere fit and SCoRE."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ahbm.errors import DataError
from ahbm.kinematics.jcs import (
    cardan_angles,
    foot_progression_angles,
    grood_suntay_angles,
    jcs_axes,
    lab_reference_frame,
    pelvis_angles,
)
from ahbm.kinematics.joint_centres import (
    chord_joint_centre,
    hip_joint_centre_davis,
    hip_joint_centre_harrington,
    score_centre,
    sphere_fit_centre,
)

# Lab: X forward, Y left, Z up. ISB segment axes of a standing subject facing +X:
# x anterior = +X, y up = +Z, z right = -Y.
NEUTRAL = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
TH = np.deg2rad(17.0)
C, S = np.cos(TH), np.sin(TH)


def frame(x, y, z):
    R = np.column_stack([x, y, z]).astype(float)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.isclose(np.linalg.det(R), 1.0)
    return R


def random_rotations(n, seed):
    return Rotation.random(n, random_state=seed).as_matrix()


# ----------------------------------------------------------------------------
# JCS = Cardan ZXY
# ----------------------------------------------------------------------------


def test_grood_suntay_equals_cardan_zxy_of_relative_rotation():
    Rp = random_rotations(200, 1)
    # physiological-ish relative rotations, away from the ZXY singularity
    rng = np.random.default_rng(2)
    ang = rng.uniform([-2.5, -1.2, -2.5], [2.5, 1.2, 2.5], size=(200, 3))
    Rrel = Rotation.from_euler("ZXY", ang).as_matrix()
    Rd = Rp @ Rrel
    raw = grood_suntay_angles(Rp, Rd, joint=None)
    np.testing.assert_allclose(raw, ang, atol=1e-10)
    # independent peer: scipy's intrinsic ZXY of the relative rotation
    rel = np.swapaxes(Rp, 1, 2) @ Rd
    np.testing.assert_allclose(raw, Rotation.from_matrix(rel).as_euler("ZXY"), atol=1e-10)
    np.testing.assert_allclose(cardan_angles(Rp, Rd), raw, atol=1e-10)


def test_jcs_axes_geometry():
    Rp = random_rotations(50, 3)
    Rd = random_rotations(50, 4)
    e1, e2, e3 = jcs_axes(Rp, Rd)
    np.testing.assert_allclose(e1, Rp[:, :, 2])
    np.testing.assert_allclose(e3, Rd[:, :, 1])
    np.testing.assert_allclose(np.sum(e2 * e1, axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(np.sum(e2 * e3, axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(e2, axis=1), 1.0)
    # e2 is the image of the proximal x axis after the flexion rotation about e1
    raw = grood_suntay_angles(Rp, Rd, joint=None)
    x_after = (Rp @ Rotation.from_euler("z", raw[:, :1]).as_matrix())[:, :, 0]
    np.testing.assert_allclose(e2, x_after, atol=1e-10)


def test_hip_centre_measurements_are_keyword_only():
    with pytest.raises(TypeError):
        hip_joint_centre_davis(0.92, 0.24, side="left")
    with pytest.raises(TypeError):
        hip_joint_centre_harrington(0.25, 0.16)
    with pytest.raises(TypeError, match="positional argument"):
        hip_joint_centre_davis(0.92, leg_length=0.92)


@pytest.mark.parametrize("seq", ["ZXY", "YXZ", "XYZ", "zxy", "ZYZ", "xzx"])
def test_cardan_angles_against_scipy(seq):
    Rp = random_rotations(30, 5)
    Rd = random_rotations(30, 6)
    rel = np.swapaxes(Rp, 1, 2) @ Rd
    got = cardan_angles(Rp, Rd, seq)
    expected = Rotation.from_matrix(rel).as_euler(seq)
    # compare as rotations (angles differ only at gimbal lock) and directly
    np.testing.assert_allclose(Rotation.from_euler(seq, got).as_matrix(), rel, atol=1e-10)
    np.testing.assert_allclose(got, expected, atol=1e-8)
    np.testing.assert_allclose(cardan_angles(Rp, Rd, seq, degrees=True), np.rad2deg(got))


def test_nan_frames_give_nan_angles():
    Rp = random_rotations(4, 7)
    Rd = random_rotations(4, 8)
    Rd[2] = np.nan
    for out in (
        grood_suntay_angles(Rp, Rd, joint="hip"),
        cardan_angles(Rp, Rd),
        pelvis_angles(Rd),
        foot_progression_angles(Rd),
    ):
        assert np.isnan(out[2]).all()
        assert np.isfinite(out[[0, 1, 3]]).all()


# ----------------------------------------------------------------------------
# clinical signs on hand-made poses (lab X forward, Y left, Z up)
# ----------------------------------------------------------------------------


def _thigh_flexed():
    # knee moved forward: long axis (knee -> hip) tilts backwards
    return frame([C, 0, S], [-S, 0, C], [0, -1, 0])


CASES = [
    # joint, side, proximal, distal, expected (sagittal, frontal, transverse)
    ("hip", "right", NEUTRAL, _thigh_flexed(), (TH, 0, 0)),
    ("hip", "left", NEUTRAL, _thigh_flexed(), (TH, 0, 0)),
    # adduction: knee moves medially (right leg: towards +Y; left leg: towards -Y)
    ("hip", "right", NEUTRAL, frame([1, 0, 0], [0, -S, C], [0, -C, -S]), (0, TH, 0)),
    ("hip", "left", NEUTRAL, frame([1, 0, 0], [0, S, C], [0, -C, S]), (0, TH, 0)),
    # internal rotation: the anterior axis turns medially
    ("hip", "right", NEUTRAL, frame([C, S, 0], [0, 0, 1], [S, -C, 0]), (0, 0, TH)),
    ("hip", "left", NEUTRAL, frame([C, -S, 0], [0, 0, 1], [-S, -C, 0]), (0, 0, TH)),
    # knee flexion: the ankle moves backwards
    ("knee", "right", NEUTRAL, frame([C, 0, -S], [S, 0, C], [0, -1, 0]), (TH, 0, 0)),
    ("knee", "left", NEUTRAL, frame([C, 0, -S], [S, 0, C], [0, -1, 0]), (TH, 0, 0)),
    # knee flexion with a flexed thigh: only the relative motion counts
    (
        "knee",
        "right",
        _thigh_flexed(),
        _thigh_flexed() @ NEUTRAL.T @ frame([C, 0, -S], [S, 0, C], [0, -1, 0]),
        (TH, 0, 0),
    ),
    # varus: the ankle moves medially relative to the knee
    ("knee", "right", NEUTRAL, frame([1, 0, 0], [0, -S, C], [0, -C, -S]), (0, TH, 0)),
    ("knee", "left", NEUTRAL, frame([1, 0, 0], [0, S, C], [0, -C, S]), (0, TH, 0)),
    # ankle dorsiflexion: the toes move up
    ("ankle", "right", NEUTRAL, frame([C, 0, S], [-S, 0, C], [0, -1, 0]), (TH, 0, 0)),
    ("ankle", "left", NEUTRAL, frame([C, 0, S], [-S, 0, C], [0, -1, 0]), (TH, 0, 0)),
    # inversion: the sole turns medially (the up axis tilts laterally)
    ("ankle", "right", NEUTRAL, frame([1, 0, 0], [0, -S, C], [0, -C, -S]), (0, TH, 0)),
    ("ankle", "left", NEUTRAL, frame([1, 0, 0], [0, S, C], [0, -C, S]), (0, TH, 0)),
    # ankle internal rotation: the toes turn medially
    ("ankle", "right", NEUTRAL, frame([C, S, 0], [0, 0, 1], [S, -C, 0]), (0, 0, TH)),
]


@pytest.mark.parametrize(("joint", "side", "Rp", "Rd", "expected"), CASES)
def test_clinical_signs(joint, side, Rp, Rd, expected):
    got = grood_suntay_angles(Rp, Rd, side=side, joint=joint)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(
        grood_suntay_angles(Rp, Rd, side=side, joint=joint, degrees=True), np.rad2deg(got)
    )


def test_left_right_mirror_symmetry():
    # mirror a random right-leg pose through the sagittal plane (Y -> -Y): the
    # left leg's clinical angles must equal the right leg's
    rng = np.random.default_rng(9)
    ang = rng.uniform(-0.6, 0.6, size=(40, 3))
    Rp = Rotation.from_euler("ZXY", rng.uniform(-0.3, 0.3, size=(40, 3))).as_matrix()
    Rp = np.einsum("ij,njk->nik", NEUTRAL, Rp)
    Rd = Rp @ Rotation.from_euler("ZXY", ang).as_matrix()
    M = np.diag([1.0, -1.0, 1.0])  # lab mirror
    F = np.diag([1.0, 1.0, -1.0])  # keeps z pointing right after mirroring

    def mirror(R):
        return M @ R @ F

    for joint in ("hip", "knee", "ankle"):
        right = grood_suntay_angles(Rp, Rd, side="right", joint=joint)
        left = grood_suntay_angles(mirror(Rp), mirror(Rd), side="left", joint=joint)
        np.testing.assert_allclose(left, right, atol=1e-12)
    np.testing.assert_allclose(
        pelvis_angles(mirror(Rd), side="left"), pelvis_angles(Rd, side="right"), atol=1e-12
    )
    np.testing.assert_allclose(
        foot_progression_angles(mirror(Rd), side="left"),
        foot_progression_angles(Rd, side="right"),
        atol=1e-12,
    )


def test_lab_reference_frame():
    np.testing.assert_allclose(lab_reference_frame(), NEUTRAL)
    ref = lab_reference_frame([2.0, 0.0, 0.5])  # vertical part removed
    np.testing.assert_allclose(ref, NEUTRAL, atol=1e-15)
    with pytest.raises(DataError, match="horizontal"):
        lab_reference_frame([0, 0, 1.0])


@pytest.mark.parametrize(
    ("side", "R", "expected"),
    [
        # anterior tilt: the anterior axis tips down
        ("right", frame([C, 0, -S], [S, 0, C], [0, -1, 0]), (TH, 0, 0)),
        ("left", frame([C, 0, -S], [S, 0, C], [0, -1, 0]), (TH, 0, 0)),
        # right hip up: the right-pointing z axis tilts up
        ("right", frame([1, 0, 0], [0, S, C], [0, -C, S]), (0, TH, 0)),
        ("left", frame([1, 0, 0], [0, S, C], [0, -C, S]), (0, -TH, 0)),
        # right hemipelvis forward (pelvis turned to the left)
        ("right", frame([C, S, 0], [0, 0, 1], [S, -C, 0]), (0, 0, TH)),
        ("left", frame([C, S, 0], [0, 0, 1], [S, -C, 0]), (0, 0, -TH)),
    ],
)
def test_pelvis_signs(side, R, expected):
    np.testing.assert_allclose(pelvis_angles(R, side=side), expected, atol=1e-12)


def test_pelvis_walking_along_minus_x():
    # facing -X: rotate the whole picture by 180 deg about Z
    Rz = np.diag([-1.0, -1.0, 1.0])
    R = Rz @ frame([C, 0, -S], [S, 0, C], [0, -1, 0])
    np.testing.assert_allclose(pelvis_angles(R, forward=[-1, 0, 0]), (TH, 0, 0), atol=1e-12)


@pytest.mark.parametrize(
    ("side", "x", "forward"),
    [
        ("right", [C, S, 0], [1, 0, 0]),  # right toe-in: toes towards +Y (medial)
        ("left", [C, -S, 0], [1, 0, 0]),
        ("right", [-C, -S, 0], [-1, 0, 0]),  # walking along -X: medial is -Y
        ("left", [-C, S, 0], [-1, 0, 0]),
    ],
)
def test_foot_progression_toe_in_positive(side, x, forward):
    x = np.array(x, float)
    R = frame(x, [0, 0, 1], np.cross(x, [0, 0, 1]))
    np.testing.assert_allclose(
        foot_progression_angles(R, side=side, forward=forward), (0, 0, TH), atol=1e-12
    )


def test_foot_progression_is_projected_heading():
    # a pitched and rolled foot: the third angle is still the horizontal heading
    rng = np.random.default_rng(10)
    R = NEUTRAL @ Rotation.from_euler("YZX", rng.uniform(-0.5, 0.5, (20, 3))).as_matrix()
    x = R[:, :, 0]
    heading = np.arctan2(x[:, 1], x[:, 0])  # towards +Y = left = toe-in for the right foot
    np.testing.assert_allclose(foot_progression_angles(R)[:, 2], heading, atol=1e-12)
    np.testing.assert_allclose(foot_progression_angles(R, side="left")[:, 2], -heading)
    # pitch: toes up positive
    pitch = np.arcsin(x[:, 2])
    np.testing.assert_allclose(foot_progression_angles(R)[:, 0], pitch, atol=1e-12)


# ----------------------------------------------------------------------------
# hip joint centre regressions (hand computations from the published equations)
# ----------------------------------------------------------------------------


def test_davis_against_hand_computation():
    LL, IAD, r = 920.0, 240.0, 7.0  # mm
    C_ = 0.115 * LL - 15.3
    xdis = 0.1288 * LL - 48.56
    th, be = np.deg2rad(28.4), np.deg2rad(18.0)
    # Davis / Plug-in Gait pelvis frame: X anterior, Y left, Z up (right side)
    X = C_ * np.cos(th) * np.sin(be) - (xdis + r) * np.cos(be)
    Y = C_ * np.sin(th) - IAD / 2
    Z = -(xdis + r) * np.sin(be) - C_ * np.cos(th) * np.cos(be)
    right = np.array([X, Z, -Y]) / 1000  # ISB: x anterior, y up, z right
    left = np.array([X, Z, Y]) / 1000
    np.testing.assert_allclose(
        hip_joint_centre_davis(leg_length=0.92, inter_asis_distance=0.24), right, atol=1e-12
    )
    np.testing.assert_allclose(
        hip_joint_centre_davis(leg_length=0.92, inter_asis_distance=0.24, side="left"),
        left,
        atol=1e-12,
    )
    # measured ASIS-trochanter distance and PiG angles
    got = hip_joint_centre_davis(
        leg_length=0.92,
        inter_asis_distance=0.24,
        asis_trochanter_distance=0.07,
        theta=0.5,
        beta=0.314,
    )
    X = C_ * np.cos(0.5) * np.sin(0.314) - 77.0 * np.cos(0.314)
    Z = -77.0 * np.sin(0.314) - C_ * np.cos(0.5) * np.cos(0.314)
    Y = C_ * np.sin(0.5) - 120.0
    np.testing.assert_allclose(got, np.array([X, Z, -Y]) / 1000, atol=1e-12)
    # vectorized over subjects
    many = hip_joint_centre_davis(leg_length=[0.8, 0.92], inter_asis_distance=[0.22, 0.24])
    assert many.shape == (2, 3)
    np.testing.assert_allclose(many[1], right, atol=1e-12)


def test_harrington_against_hand_computation():
    PW, PD, LL = 250.0, 160.0, 900.0
    right = np.array([-0.24 * PD - 9.9, -0.30 * PW - 10.9, 0.33 * PW + 7.3]) / 1000
    np.testing.assert_allclose(
        hip_joint_centre_harrington(pelvic_width=0.25, pelvic_depth=0.16), right, atol=1e-12
    )
    left = right * [1, 1, -1]
    np.testing.assert_allclose(
        hip_joint_centre_harrington(pelvic_width=0.25, pelvic_depth=0.16, side="left"), left
    )
    full = np.array([-0.24 * PD - 9.9, -0.16 * PW - 0.04 * LL - 7.1, 0.28 * PD + 0.16 * PW + 7.9])
    np.testing.assert_allclose(
        hip_joint_centre_harrington(pelvic_width=0.25, pelvic_depth=0.16, leg_length=0.9),
        full / 1000,
        atol=1e-12,
    )


@pytest.mark.parametrize(
    ("func", "kwargs", "match"),
    [
        (
            hip_joint_centre_davis,
            {"leg_length": 0.9, "inter_asis_distance": -0.2},
            "inter_asis_distance",
        ),
        (hip_joint_centre_davis, {"leg_length": 0.0, "inter_asis_distance": 0.2}, "leg_length"),
        (hip_joint_centre_harrington, {"pelvic_width": 0.25, "pelvic_depth": 0.0}, "pelvic_depth"),
    ],
)
def test_regression_bad_input(func, kwargs, match):
    with pytest.raises(DataError, match=match):
        func(**kwargs)
    good = {k: 0.2 for k in kwargs}
    with pytest.raises(DataError, match="side"):
        func(**good, side="middle")


# ----------------------------------------------------------------------------
# chord function
# ----------------------------------------------------------------------------


def test_chord_function_defining_conditions():
    rng = np.random.default_rng(11)
    n = 100
    P = rng.normal(size=(n, 3))
    K = P + rng.normal(size=(n, 3)) * 0.3 + [0, 0, -0.4]
    T = (P + K) / 2 + rng.normal(size=(n, 3)) * 0.1
    width = rng.uniform(0.08, 0.12, size=n)
    J = chord_joint_centre(P, K, T, width, marker_radius=0.0095)
    d = width / 2 + 0.0095
    np.testing.assert_allclose(np.linalg.norm(J - K, axis=1), d, atol=1e-12)
    np.testing.assert_allclose(np.sum((J - K) * (P - J), axis=1), 0, atol=1e-12)
    normal = np.cross(T - K, P - K)
    np.testing.assert_allclose(np.sum((J - K) * normal, axis=1), 0, atol=1e-12)
    # opposite side of the line PK from the plane marker
    side_J = np.sum(np.cross(P - K, J - K) * normal, axis=1)
    side_T = np.sum(np.cross(P - K, T - K) * normal, axis=1)
    assert np.all(side_J * side_T < 0)


def test_chord_function_knee_is_medial():
    # right leg, lab X forward, Y left, Z up: hip centre medial of the knee
    # marker; THI on the lateral thigh, slightly anterior
    hip = np.array([0.0, 0.0, 0.9])
    kne = np.array([0.0, -0.07, 0.48])
    thi = np.array([0.02, -0.09, 0.7])
    J = chord_joint_centre(hip, kne, thi, 0.10, marker_radius=0.007)
    assert J[1] > kne[1]  # medial (towards +Y) of the lateral marker
    np.testing.assert_allclose(np.linalg.norm(J - kne), 0.057)


def test_chord_function_nan_and_errors():
    P = np.array([[0, 0, 1.0], [0, 0, 1.0]])
    K = np.array([[0.05, 0, 0.5], [np.nan, 0, 0.5]])
    T = np.array([[0.1, 0, 0.7], [0.1, 0, 0.7]])
    J = chord_joint_centre(P, K, T, 0.1)
    assert np.isfinite(J[0]).all() and np.isnan(J[1]).all()
    with pytest.raises(DataError, match="collinear in frame"):
        chord_joint_centre([0, 0, 1.0], [0, 0, 0.5], [0, 0, 0.7], 0.1)
    with pytest.raises(DataError, match="width"):
        chord_joint_centre([0, 0, 1.0], [0.05, 0, 0.5], [0.1, 0, 0.7], 100.0)
    with pytest.raises(DataError, match="width"):
        chord_joint_centre([0, 0, 1.0], [0.05, 0, 0.5], [0.1, 0, 0.7], -0.1)
    with pytest.raises(DataError, match="within width/2"):  # coincident points
        chord_joint_centre([0, 0, 0.5], [0, 0, 0.5], [0.1, 0, 0.7], 0.1)


# ----------------------------------------------------------------------------
# functional joint centres
# ----------------------------------------------------------------------------


def _functional_trial(seed, n=300, noise=0.0):
    """Distal segment rotating about a centre fixed in both segments."""
    rng = np.random.default_rng(seed)
    centre_p = np.array([0.08, -0.09, 0.12])  # in the proximal frame
    centre_d = np.array([0.0, 0.42, 0.0])  # in the distal frame
    t = np.linspace(0, 2 * np.pi, n)
    ang = np.stack([0.6 * np.sin(t), 0.4 * np.sin(2 * t + 1), 0.3 * np.cos(3 * t)], axis=1)
    Rrel = Rotation.from_euler("ZXY", ang).as_matrix()
    Rp = Rotation.from_rotvec(0.2 * rng.normal(size=(n, 3))).as_matrix()
    op = rng.normal(scale=0.05, size=(n, 3)) + [0, 0, 1.0]
    Rd = Rp @ Rrel
    od = (Rp @ centre_p) + op - (Rd @ centre_d)
    local = np.array([[0.05, 0.2, 0.04], [-0.04, 0.25, 0.05], [0.0, 0.1, 0.06], [0.03, 0.3, -0.05]])
    markers = np.einsum("nij,mj->nmi", Rd, local) + od[:, None]
    markers = markers + rng.normal(scale=noise, size=markers.shape)
    return Rp, op, Rd, od, markers, centre_p, centre_d


def test_sphere_fit_noise_free_and_noisy():
    Rp, op, Rd, od, X, cp, _ = _functional_trial(12)
    # markers in the proximal frame
    loc = np.einsum("nji,nmj->nmi", Rp, X - op[:, None])
    fit = sphere_fit_centre(loc)
    np.testing.assert_allclose(fit.centre, cp, atol=1e-9)
    assert fit.rms < 1e-9 and fit.n_points == loc.shape[0] * 4
    Rp, op, Rd, od, X, cp, _ = _functional_trial(13, noise=0.001)
    loc = np.einsum("nji,nmj->nmi", Rp, X - op[:, None])
    loc[5, 1] = np.nan  # a missing sample is ignored
    fit = sphere_fit_centre(loc)
    assert np.linalg.norm(fit.centre - cp) < 0.005
    assert 0.0005 < fit.rms < 0.002
    # single marker (n, 3) input
    single = sphere_fit_centre(loc[:, 0])
    assert single.radii.shape == (1,) and np.linalg.norm(single.centre - cp) < 0.01


def test_functional_centre_results_are_objects():
    import dataclasses

    Rp, op, Rd, od, X, cp, _ = _functional_trial(12)
    loc = np.einsum("nji,nmj->nmi", Rp, X - op[:, None])
    fit = sphere_fit_centre(loc)
    score = score_centre(Rp, op, Rd, od)
    assert "centre=array(3,)" in repr(fit)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.rms = 0.0
    assert repr(score).startswith("ScoreResult(centre=array(300, 3) float64")


def test_sphere_fit_errors():
    with pytest.raises(DataError, match="at least 4"):
        sphere_fit_centre(np.zeros((3, 3)))
    pts = np.c_[np.cos(np.linspace(0, 6, 20)), np.sin(np.linspace(0, 6, 20)), np.zeros(20)]
    with pytest.raises(DataError, match="plane"):
        sphere_fit_centre(pts)


def test_score_recovers_centre():
    Rp, op, Rd, od, X, cp, cd = _functional_trial(14)
    res = score_centre(Rp, op, Rd, od)
    np.testing.assert_allclose(res.local_proximal, cp, atol=1e-9)
    np.testing.assert_allclose(res.local_distal, cd, atol=1e-9)
    np.testing.assert_allclose(res.centre, Rp @ cp + op, atol=1e-9)
    assert res.rms < 1e-9
    # noisy markers -> poses from fit_segment_pose -> SCoRE
    from ahbm.kinematics.markers import fit_segment_pose

    Rp, op, Rd, od, X, cp, cd = _functional_trial(15, noise=0.001)
    local = np.array([[0.05, 0.2, 0.04], [-0.04, 0.25, 0.05], [0.0, 0.1, 0.06], [0.03, 0.3, -0.05]])
    pose = fit_segment_pose(X, local)
    Rp2 = Rp.copy()
    Rp2[3] = np.nan  # an invalid frame is skipped
    res = score_centre(Rp2, op, pose.R, pose.origin)
    assert np.linalg.norm(res.local_proximal - cp) < 0.005
    assert np.linalg.norm(res.local_distal - cd) < 0.005
    assert np.isnan(res.centre[3]).all()


def test_score_errors():
    R = np.broadcast_to(np.eye(3), (5, 3, 3))
    with pytest.raises(DataError, match="too little relative rotation"):
        score_centre(R, np.zeros((5, 3)), R, np.zeros((5, 3)))
    with pytest.raises(DataError, match="at least 2 frames"):
        score_centre(R[:1], np.zeros((1, 3)), R[:1], np.zeros((1, 3)))


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"side": "up"}, "side"), ({"joint": "elbow"}, "joint")]
)
def test_grood_suntay_bad_options(kwargs, match):
    with pytest.raises(DataError, match=match):
        grood_suntay_angles(np.eye(3), np.eye(3), **kwargs)


def test_not_a_rotation():
    with pytest.raises(DataError, match="R_distal"):
        grood_suntay_angles(np.eye(3), 2 * np.eye(3))


@pytest.mark.parametrize("beta", [np.pi / 2, -np.pi / 2])
def test_jcs_at_gimbal_lock_reproduces_rotation(beta):
    Rrel = Rotation.from_euler("ZXY", [0.3, beta, -0.2]).as_matrix()
    Rp = random_rotations(1, 20)[0]
    raw = grood_suntay_angles(Rp, Rp @ Rrel, joint=None)
    assert np.isfinite(raw).all()
    assert abs(raw[0]) < 1e-12  # first angle set to zero, as matrix_to_euler does
    np.testing.assert_allclose(Rotation.from_euler("ZXY", raw).as_matrix(), Rrel, atol=1e-7)
