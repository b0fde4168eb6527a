"""Joint moments projected on the JCS, the distal or the proximal segment's axes
(GaitSettings.moment_frame): hand-built loads where the projections differ by a known rotation."""

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.gait import GaitSettings, analyze_gait
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.gait.kinetics import pig_moments
from ahbm.kinematics.rotations import euler_to_matrix, rot_x, rot_z

pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")

M = np.array([3.0, -7.0, 11.0])  # lab-frame internal moment, N·m


def _all(Rp, Rd, joint="knee", side="Right", moment=M):
    return {
        f: pig_moments(moment, Rp, Rd, joint=joint, side=side, frame=f)
        for f in ("jcs", "distal", "proximal")
    }


@pytest.mark.parametrize("joint", ["hip", "knee", "ankle"])
@pytest.mark.parametrize("side", ["Left", "Right"])
def test_aligned_segments_give_the_same_components_in_every_frame(joint, side):
    R = euler_to_matrix(np.array([0.3, -0.2, 0.5]), "ZXY")  # both segments turned alike
    out = _all(R, R, joint=joint, side=side, moment=R @ M)
    np.testing.assert_allclose(out["distal"], out["jcs"], atol=1e-12)
    np.testing.assert_allclose(out["proximal"], out["jcs"], atol=1e-12)


def test_knee_flexion_turns_the_proximal_frontal_and_transverse_components():
    """Right knee flexed by theta about the common z axis: JCS = distal exactly, and the
    proximal (thigh) frontal/transverse pair is the distal pair turned back by theta."""
    th = np.radians(60.0)
    Rp, Rd = np.eye(3), rot_z(-th)  # knee flexion: shank turned backwards about +z (right)
    out = _all(Rp, Rd)
    np.testing.assert_allclose(out["distal"], out["jcs"], atol=1e-12)
    # closed form (right side, knee): (M·z, -M·x, -M·y) in each frame
    c, s = np.cos(th), np.sin(th)
    xd, yd = np.array([c, -s, 0.0]), np.array([s, c, 0.0])
    np.testing.assert_allclose(out["distal"], [M[2], -M @ xd, -M @ yd], atol=1e-12)
    np.testing.assert_allclose(out["proximal"], [M[2], -M[0], -M[1]], atol=1e-12)
    # the frontal/transverse pairs differ by the rotation of the flexion angle
    turn = np.array([[c, -s], [s, c]])
    np.testing.assert_allclose(out["distal"][1:], turn @ out["proximal"][1:], atol=1e-12)
    assert not np.allclose(out["distal"][1:], out["proximal"][1:])


def test_hip_adduction_separates_the_jcs_from_the_distal_sagittal_component():
    """Right hip adducted by beta about the pelvis x axis: the JCS flexion axis stays the
    pelvis z, the distal (thigh) z turns with the thigh; the transverse axis (thigh y) is
    common, and the floating axis equals the thigh x."""
    b = np.radians(20.0)
    Rp, Rd = np.eye(3), rot_x(b)
    out = _all(Rp, Rd, joint="hip")
    c, s = np.cos(b), np.sin(b)
    zd, xd, yd = np.array([0.0, -s, c]), np.array([1.0, 0, 0]), np.array([0.0, c, s])
    # hip, right: sagittal -M·e1 (extensor +), frontal -M·e2, transverse -M·e3 (PiG)
    np.testing.assert_allclose(out["jcs"], [-M[2], -M @ xd, -M @ yd], atol=1e-12)
    np.testing.assert_allclose(out["distal"], [-M @ zd, -M @ xd, -M @ yd], atol=1e-12)
    np.testing.assert_allclose(out["proximal"], [-M[2], -M[0], -M[1]], atol=1e-12)
    assert abs(out["jcs"][0] - out["distal"][0]) > 1.0  # the projections really differ


def test_orthogonal_projections_keep_the_magnitude_the_jcs_does_not():
    rng = np.random.default_rng(3)
    Rp = euler_to_matrix(rng.uniform(-0.4, 0.4, (200, 3)), "ZXY")
    Rd = Rp @ euler_to_matrix(rng.uniform(-0.5, 0.5, (200, 3)), "ZXY")
    m = rng.normal(size=(200, 3)) * 20
    out = _all(Rp, Rd, joint="ankle", side="Left", moment=m)
    norm = np.linalg.norm(m, axis=1)
    np.testing.assert_allclose(np.linalg.norm(out["distal"], axis=1), norm, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(out["proximal"], axis=1), norm, rtol=1e-12)
    assert np.max(np.abs(np.linalg.norm(out["jcs"], axis=1) - norm)) > 0.1
    # distal: the lab moment back from its three components (R_d (x, y, z))
    d = out["distal"] * np.array([-1.0, 1.0, 1.0])  # left ankle: (s1, -k, -k) = (-1, 1, 1)
    local = d[:, [1, 2, 0]]
    np.testing.assert_allclose(np.einsum("nij,nj->ni", Rd, local), m, atol=1e-10)


def test_unknown_frame_is_an_error():
    with pytest.raises(DataError, match="`frame` must be one of"):
        pig_moments(M, np.eye(3), np.eye(3), joint="hip", side="Right", frame="global")
    with pytest.raises(DataError, match="GaitSettings.moment_frame"):
        GaitSettings(moment_frame="Distal")
    trial, _ = synthetic_walking_trial(duration=1.0, noise=0.0, gap=None)
    with pytest.raises(TypeError, match="moment_frame"):
        analyze_gait(trial, moment_frame="distal")  # a field, not a keyword


def test_pipeline_moment_frames_on_a_synthetic_walk():
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    res = {f: analyze_gait(trial, settings=GaitSettings(moment_frame=f)) for f in
           ("jcs", "distal", "proximal")}  # fmt: skip
    assert "distal segment axes" in res["distal"].settings["moment_convention"]
    assert "JCS projection" in res["jcs"].settings["moment_convention"]
    for key, jcs in res["jcs"].moments.items():
        dist, prox = res["distal"].moments[key], res["proximal"].moments[key]
        ok = np.isfinite(jcs).all(axis=1)
        # both orthogonal projections of one vector: same magnitude frame by frame
        np.testing.assert_allclose(
            np.linalg.norm(dist[ok], axis=1), np.linalg.norm(prox[ok], axis=1), rtol=1e-9
        )
        # the transverse axis of the JCS is the distal long axis
        np.testing.assert_allclose(dist[ok, 2], jcs[ok, 2], atol=1e-12)
        # sagittal moments stay close (small frontal/transverse angles in walking)
        peak = np.max(np.abs(jcs[ok, 0]))
        assert np.max(np.abs(dist[ok, 0] - jcs[ok, 0])) < 0.15 * peak, key
    # angles and powers do not depend on the moment projection
    np.testing.assert_array_equal(
        res["distal"].angles["LKneeAngles"], res["jcs"].angles["LKneeAngles"]
    )
    np.testing.assert_array_equal(
        res["distal"].total_powers["RHipPower"], res["jcs"].total_powers["RHipPower"]
    )
