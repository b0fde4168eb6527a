"""Plug-in Gait signs of the gait pipeline's moments, powers and foot angles on hand-built
loads and poses (docs/conventions.md §9)."""

import warnings

import numpy as np
import pytest

from ahbm.errors import AhbmWarning
from ahbm.gait import (
    GaitSettings,
    assign_plates,
    gait_markers,
    joint_kinetics,
    lower_extremity_model,
    segment_frames,
)
from ahbm.gait.angles import pig_foot_progression_angles
from ahbm.gait.demo import synthetic_static_trial
from ahbm.gait.kinetics import pig_moments
from ahbm.io.trial import ForcePlate, Trial
from ahbm.kinematics.jcs import lab_reference_frame
from ahbm.kinematics.rotations import rot_x, rot_y, rot_z

I3 = np.eye(3)  # proximal and distal segments aligned: x anterior, y up, z right


@pytest.mark.parametrize("joint", ["hip", "knee", "ankle"])
def test_pure_internal_rotation_moment_is_negative_on_both_sides(joint):
    # right: about +y turns the anterior face to the left (medially) = internal rotation
    right = pig_moments([0.0, 10.0, 0.0], I3, I3, joint=joint, side="Right")
    # left: about -y turns the anterior face to the right (medially)
    left = pig_moments([0.0, -10.0, 0.0], I3, I3, joint=joint, side="Left")
    for m in (right, left):
        np.testing.assert_allclose(m, [0.0, 0.0, -10.0], atol=1e-12)
    # an external-rotation moment is positive (Plug-in Gait)
    np.testing.assert_allclose(
        pig_moments([0.0, -4.0, 0.0], I3, I3, joint=joint, side="Right"), [0, 0, 4.0], atol=1e-12
    )


@pytest.mark.parametrize("joint", ["hip", "knee", "ankle"])
def test_abductor_evertor_moment_is_positive_on_both_sides(joint):
    # right: about -x moves the distal end (or the foot's lateral border) to the right/up
    right = pig_moments([-10.0, 0.0, 0.0], I3, I3, joint=joint, side="Right")
    left = pig_moments([10.0, 0.0, 0.0], I3, I3, joint=joint, side="Left")
    for m in (right, left):
        np.testing.assert_allclose(m, [0.0, 10.0, 0.0], atol=1e-12)


def test_sagittal_moment_signs():
    # a moment about +z (right) on the distal segment turns its anterior face upwards:
    # hip flexor / knee extensor / ankle dorsiflexor direction
    m = {j: pig_moments([0.0, 0.0, 10.0], I3, I3, joint=j, side="Right")[0] for j in
         ("hip", "knee", "ankle")}  # fmt: skip
    assert m == {"hip": -10.0, "knee": 10.0, "ankle": -10.0}


def test_moment_signs_do_not_depend_on_the_segment_orientation():
    """The same anatomical moment in a segment turned in the lab keeps its sign."""
    R = rot_z(0.3) @ rot_x(-0.2) @ rot_y(0.7)
    for side, s in (("Right", 1.0), ("Left", -1.0)):
        M_int = R @ np.array([0.0, s * 10.0, 0.0])  # internal rotation about the long axis
        np.testing.assert_allclose(
            pig_moments(M_int, R, R, joint="knee", side=side), [0, 0, -10.0], atol=1e-9
        )


def test_foot_progression_tilt_is_positive_toes_down():
    N = lab_reference_frame()
    for side in ("Right", "Left"):
        down = pig_foot_progression_angles(N @ rot_z(-0.2), side=side)
        np.testing.assert_allclose(down, [0.2, 0.0, 0.0], atol=1e-12)
        up = pig_foot_progression_angles(N @ rot_z(0.1), side=side)
        assert up[0] == pytest.approx(-0.1)
    # toe-in stays positive: right foot turned to the left about the vertical
    assert pig_foot_progression_angles(rot_z(0.1) @ N, side="Right")[2] == pytest.approx(0.1)
    assert pig_foot_progression_angles(rot_z(-0.1) @ N, side="Left")[2] == pytest.approx(0.1)


def _standing(n=40, rate=100.0):
    """The gait model standing upright (segments vertical), its markers on the floor."""
    static = synthetic_static_trial(duration=n / rate, rate=rate)
    _, params = lower_extremity_model(mass=70.0, height=1.75)
    return params, static.points, static.point_labels, rate


def _plate(n, rate, force, cop, free):
    F = np.tile(force, (n, 1))
    C = np.tile(cop, (n, 1))
    T = np.tile(free, (n, 1))
    return ForcePlate(F, np.cross(C, F) + T, C, T, np.zeros((4, 3)), np.zeros(3), rate=rate)


def test_standing_subject_twisted_by_the_plate_needs_external_rotator_moments():
    """Static standing, the right foot on a plate with a free moment +T about +Z (which
    turns the toes medially): hip, knee and ankle need an external-rotator moment, +T/m
    in Plug-in Gait's signs; a centre of pressure lateral of the ankle (everting the
    foot) needs an invertor moment, a negative ankle frontal moment -d Fz / m."""
    params, pts, labels, rate = _standing()
    n = pts.shape[0]
    ajc_r = pts[:, labels.index("RANK")].mean(0)  # lateral malleolus marker
    d, Fz, Tfree = 0.03, 400.0, 6.0
    centre = ajc_r.copy()
    centre[1] += params.ankle_width["Right"] / 2 + params.marker_radius  # ankle centre (y left)
    cop = centre + np.array([0.04, -d, 0.0])  # right of the ankle centre = lateral
    cop[2] = 0.0
    plate = _plate(n, rate, [0.0, 0.0, Fz], cop, [0.0, 0.0, Tfree])
    trial = Trial(points=pts, point_labels=labels, point_rate=rate, force_plates=[plate])
    settings = GaitSettings(cutoff=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        mk = gait_markers(trial, settings=settings)
        fr = segment_frames(mk.as_dict(), params)
        assign = assign_plates(mk, fr, settings=settings)
        kin = joint_kinetics(mk, fr, params, [], assign, settings=settings)
    mid = slice(10, -10)
    m = params.mass
    for joint in ("Hip", "Knee", "Ankle"):
        tr = kin.moments[f"R{joint}Moment"][mid, 2]
        np.testing.assert_allclose(tr, Tfree / m, rtol=1e-6, err_msg=joint)
        # the unloaded left leg carries no transverse moment
        np.testing.assert_allclose(kin.moments[f"L{joint}Moment"][mid, 2], 0.0, atol=1e-9)
    ankle_frontal = kin.moments["RAnkleMoment"][mid, 1]
    np.testing.assert_allclose(ankle_frontal, -d * Fz / m, rtol=1e-6)
    # static: no power, total or split
    np.testing.assert_allclose(kin.total_powers["RKneePower"][mid], 0.0, atol=1e-9)


def test_total_power_is_the_sum_of_the_components_and_plug_in_gaits_z():
    from ahbm.gait import analyze_gait
    from ahbm.gait.demo import synthetic_walking_trial

    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        r = analyze_gait(trial)
    pig = r.as_plug_in_gait()
    for key, parts in r.powers.items():
        total = r.total_powers[key]
        np.testing.assert_allclose(parts.sum(axis=1), total, atol=1e-10, equal_nan=True)
        ok = np.isfinite(total)
        assert ok.sum() > 50
        np.testing.assert_array_equal(pig[key][ok, :2], 0.0)
        np.testing.assert_array_equal(pig[key][ok, 2], total[ok])
    np.testing.assert_array_equal(pig["RHipMoment"], r.moments["RHipMoment"])
    assert set(r.to_results()["total_power"]) == set(r.powers)
