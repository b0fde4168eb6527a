"""Foot progression and ankle angles as Vicon's Plug-in Gait decomposes them: ahbm's
angles converted by ``vicon_foot_progress_angles`` / ``vicon_ankle_angles`` equal a
construction written from Plug-in Gait's definitions with scipy (foot axes z heel <- toe,
y = z x (knee - toe), x = y x z; tibia axes x forward, y left, z up; progression frame
forward, left, up; Y-X-Z Euler angles, the ankle's flexion shifted by 90 deg; Vicon's
signs per side)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ahbm.errors import DataError
from ahbm.gait import GaitSettings, analyze_gait
from ahbm.gait.angles import (
    pig_foot_progression_angles,
    vicon_ankle_angles,
    vicon_foot_progress_angles,
)
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.kinematics.jcs import grood_suntay_angles

SIGNS = {"Left": (1.0, 1.0, -1.0), "Right": (1.0, -1.0, 1.0)}


def _feet(n, forward, seed):
    """Heel, toe and knee points of n random foot orientations; the ahbm foot frame."""
    rng = np.random.default_rng(seed)
    f = np.asarray(forward, float)
    up = np.array([0.0, 0.0, 1.0])
    left = np.cross(up, f)
    # foot: heading about the vertical, pitch about the lateral axis, roll about the long axis
    heading = rng.uniform(-0.7, 0.7, n)
    pitch = rng.uniform(-1.0, 1.0, n)
    roll = rng.uniform(-0.35, 0.35, n)
    lab_R = np.stack([f, left, up], axis=1)  # (forward, left, up) as columns
    R = lab_R @ Rotation.from_euler("ZYX", np.c_[heading, pitch, roll]).as_matrix()
    heel = rng.normal(size=(n, 3))
    toe = heel + 0.2 * R[:, :, 0]
    knee = heel + 0.05 * R[:, :, 0] + 0.45 * R[:, :, 2] + 0.03 * R[:, :, 1]
    x = R[:, :, 0]
    y = knee - toe
    y -= np.sum(y * x, axis=1)[:, None] * x
    y /= np.linalg.norm(y, axis=1)[:, None]
    z = np.cross(x, y)
    return heel, toe, knee, np.stack([x, y, z], axis=2)


def _vicon(heel, toe, knee, forward, side):
    """Plug-in Gait's foot progression angles from its own definitions."""
    z = heel - toe
    z /= np.linalg.norm(z, axis=1)[:, None]
    y = np.cross(z, knee - toe)
    y /= np.linalg.norm(y, axis=1)[:, None]
    x = np.cross(y, z)
    foot = np.stack([x, y, z], axis=2)
    f = np.asarray(forward, float)
    up = np.array([0.0, 0.0, 1.0])
    glob = np.stack([f, np.cross(up, f), up], axis=1)
    tilt, obliq, rot = Rotation.from_matrix(glob.T @ foot).as_euler("YXZ").T
    return np.c_[tilt, rot, obliq] * SIGNS[side]


@pytest.mark.parametrize("side", ["Left", "Right"])
@pytest.mark.parametrize("forward", [(1.0, 0, 0), (0, 1.0, 0), (-0.6, 0.8, 0)])
def test_conversion_equals_vicons_construction(side, forward):
    heel, toe, knee, R = _feet(200, forward, seed=len(side) + int(10 * forward[1]))
    ahbm = pig_foot_progression_angles(R, side=side, forward=forward)
    got = vicon_foot_progress_angles(ahbm, side=side)
    np.testing.assert_allclose(got, _vicon(heel, toe, knee, forward, side), atol=1e-10)


def test_flat_foot_and_nan_frames():
    flat = np.array([[0.0, 0.0, -0.2], [np.nan, 0.0, 0.0]])
    for side in ("Left", "Right"):
        got = vicon_foot_progress_angles(flat, side=side)
        np.testing.assert_allclose(got[0], [-np.pi / 2, 0.0, -0.2], atol=1e-12)
        assert np.isnan(got[1]).all()
    np.testing.assert_array_equal(  # any case of the side's name
        vicon_foot_progress_angles(flat, side="left"), vicon_foot_progress_angles(flat, side="Left")
    )
    with pytest.raises(DataError, match="`side`"):
        vicon_foot_progress_angles(flat, side="L")
    with pytest.raises(DataError, match="angles"):
        vicon_foot_progress_angles(np.zeros((4, 2)), side="Left")


def test_the_plug_in_gait_layout_uses_vicons_decomposition():
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    r = analyze_gait(trial, settings=GaitSettings(cutoff=10.0))
    pig = r.as_plug_in_gait()
    for side, p in (("Left", "L"), ("Right", "R")):
        np.testing.assert_allclose(
            pig[f"{p}AnkleAngles"], vicon_ankle_angles(r.angles[f"{p}AnkleAngles"], side=side)
        )
        ours = r.angles[f"{p}FootProgressAngles"]
        np.testing.assert_allclose(
            pig[f"{p}FootProgressAngles"], vicon_foot_progress_angles(ours, side=side)
        )
        stance = np.abs(ours[:, 0]) < 0.05  # foot about flat: the same progression angle
        assert stance.sum() > 20
        np.testing.assert_allclose(
            pig[f"{p}FootProgressAngles"][stance, 2], ours[stance, 2], atol=0.01
        )


ANKLE_SIGNS = {"Left": (-1.0, -1.0, -1.0), "Right": (-1.0, 1.0, 1.0)}


@pytest.mark.parametrize("side", ["Left", "Right"])
def test_ankle_conversion_equals_vicons_construction(side):
    rng = np.random.default_rng(7 + len(side))
    n = 300
    lab = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # ISB axes, X forward, Z up
    shank = Rotation.from_euler("ZYX", rng.uniform(-0.4, 0.4, (n, 3))).as_matrix() @ lab
    rel = Rotation.from_euler(  # dorsiflexion about the shank's z, some roll and rotation
        "ZXY", np.c_[rng.uniform(-0.6, 0.5, n), rng.uniform(-0.3, 0.3, (n, 2))]
    ).as_matrix()
    foot = shank @ rel
    ours = grood_suntay_angles(shank, foot, side=side, joint="ankle")
    # Plug-in Gait's axes from the same segments: tibia (fwd, left, up), foot (up, left, back)
    tibia_pig = np.stack([shank[:, :, 0], -shank[:, :, 2], shank[:, :, 1]], axis=2)
    foot_pig = np.stack([foot[:, :, 1], -foot[:, :, 2], -foot[:, :, 0]], axis=2)
    r = np.swapaxes(tibia_pig, 1, 2) @ foot_pig
    ay, ax, az = Rotation.from_matrix(r).as_euler("YXZ").T
    vicon = np.c_[ay + np.pi / 2, az, ax] * ANKLE_SIGNS[side]
    np.testing.assert_allclose(vicon_ankle_angles(ours, side=side), vicon, atol=1e-10)


def test_ankle_hand_built_cases():
    """Dorsiflexion and internal rotation keep their signs; an inverted foot gives a
    negative second angle (Vicon's sign), on both sides."""
    th = 0.15
    for side in ("Left", "Right"):
        dorsi = vicon_ankle_angles(np.array([th, 0.0, 0.0]), side=side)
        np.testing.assert_allclose(dorsi, [th, 0.0, 0.0], atol=1e-12)
        inv = vicon_ankle_angles(np.array([0.0, th, 0.0]), side=side)
        np.testing.assert_allclose(inv, [0.0, -th, 0.0], atol=1e-12)
        rot = vicon_ankle_angles(np.array([0.0, 0.0, th]), side=side)
        np.testing.assert_allclose(rot, [0.0, 0.0, th], atol=1e-12)
    assert np.isnan(vicon_ankle_angles(np.full(3, np.nan), side="Left")).all()
    with pytest.raises(DataError, match="`side`"):
        vicon_ankle_angles(np.zeros(3), side="R")
    with pytest.raises(DataError, match="angles"):
        vicon_ankle_angles([[0.0, 0.1]], side="Right")
