"""The chord function with an offset angle (Plug-in Gait's wand rotations): the centre
keeps the chord's two conditions, the wand makes the requested angle about the segment
line, a hand-built leg gives its known centre, and chord_offset_angle inverts it."""

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.kinematics import chord_joint_centre, chord_offset_angle


def _random_legs(n, seed):
    """A thigh: hip centre, knee marker 0.42 m below, the wand 8-12 cm from their line."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(n, 3)) * 0.05 + [0.0, 0.0, 0.9]
    K = P + rng.normal(size=(n, 3)) * 0.03 + [0.06, 0.0, -0.42]
    u = (P - K) / np.linalg.norm(P - K, axis=1)[:, None]
    side = np.cross(u, rng.normal(size=(n, 3)))
    side /= np.linalg.norm(side, axis=1)[:, None]
    T = 0.5 * (P + K) + rng.uniform(0.08, 0.12, (n, 1)) * side
    return P, K, T


@pytest.mark.parametrize("beta", [0.0, 0.2, -0.35, 0.83, -1.2])
def test_conditions_hold_and_the_angle_is_the_offset(beta):
    P, K, T = _random_legs(200, seed=int(10 * abs(beta)))
    width, r = 0.1, 0.007
    J = chord_joint_centre(P, K, T, width, marker_radius=r, offset_angle=beta)
    d = width / 2 + r
    np.testing.assert_allclose(np.linalg.norm(J - K, axis=1), d, atol=1e-12)
    np.testing.assert_allclose(np.sum((J - K) * (P - J), axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(chord_offset_angle(P, K, T, J), beta, atol=1e-10)


def test_zero_offset_is_the_plane_chord_and_angles_per_frame():
    P, K, T = _random_legs(50, seed=3)
    plain = chord_joint_centre(P, K, T, 0.09)
    np.testing.assert_array_equal(chord_joint_centre(P, K, T, 0.09, offset_angle=0.0), plain)
    np.testing.assert_allclose(chord_offset_angle(P, K, T, plain), 0.0, atol=1e-12)
    betas = np.linspace(-0.5, 0.5, 50)
    J = chord_joint_centre(P, K, T, 0.09, offset_angle=betas)
    np.testing.assert_allclose(chord_offset_angle(P, K, T, J), betas, atol=1e-10)


@pytest.mark.parametrize("beta", [0.0, 0.3, -0.7, 1.4])
def test_hand_built_leg(beta):
    """Centre at the origin, segment line up to P, joint marker at +x: a wand at angle beta
    about +z from +x (at any height) gives back the origin."""
    d = 0.057
    P = np.array([0.0, 0.0, 0.4])
    K = np.array([d, 0.0, 0.0])
    T = np.array([0.12 * np.cos(beta), 0.12 * np.sin(beta), 0.2])
    J = chord_joint_centre(P, K, T, 2 * (d - 0.007), offset_angle=beta)
    np.testing.assert_allclose(J, 0.0, atol=1e-12)


def test_an_angle_the_wand_cannot_make_is_an_error():
    """A wand 8 mm from the segment line reaches only about +-16 deg out of the plane."""
    P, K = np.array([0.0, 0.0, 0.9]), np.array([0.06, 0.0, 0.48])
    u = (P - K) / np.linalg.norm(P - K)
    T = 0.5 * (P + K) + 0.008 * np.cross(u, [0.0, 1.0, 0.0])
    J = chord_joint_centre(P, K, T, 0.1, offset_angle=0.2)
    assert chord_offset_angle(P, K, T, J) == pytest.approx(0.2, abs=1e-10)
    with pytest.raises(DataError, match="no joint centre makes the offset angle 0.500"):
        chord_joint_centre(P, K, T, 0.1, offset_angle=0.5)


def test_nan_frames_and_bad_offset_shapes():
    P, K, T = _random_legs(4, seed=5)
    K[1] = np.nan
    J = chord_joint_centre(P, K, T, 0.1, offset_angle=0.4)
    assert np.isnan(J[1]).all() and np.isfinite(J[[0, 2, 3]]).all()
    with pytest.raises(DataError, match="offset_angle"):
        chord_joint_centre(P, K, T, 0.1, offset_angle=np.zeros(3))
    with pytest.raises(DataError):
        chord_offset_angle(P, K, T, np.zeros((3, 3)))
