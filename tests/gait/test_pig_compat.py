"""GaitSettings(compat="plug-in-gait") against ahbm's own rules, on hand-built cases and
synthetic walks built to exercise each rule: the knee's untorsioned tibia, a foot
partly off its plate, Plug-in Gait's ankle-toe foot, and the record of the static offsets
used."""

import dataclasses

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.gait import GaitSettings, SubjectParameters, analyze_gait
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.gait.kinetics import pig_moments, untorsioned_tibia
from ahbm.kinematics.rotations import rot_y

pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")

TORSION = np.radians(25.0)


def _subject(torsion):
    return SubjectParameters(
        70.0, 1.75, {}, {}, {}, 0.25, tibial_torsion={"Left": torsion, "Right": torsion}
    )


@pytest.mark.parametrize("side", ["Left", "Right"])
def test_untorsioned_tibia_turns_the_ankle_axis_back_to_the_knee_axis(side):
    """Hand-built leg: knee axis along the lab's z (right), ankle axis turned externally
    by the torsion (right leg: -tau about +y up, left leg: +tau). The knee's tibia is the
    identity again, and a pure flexion moment about the knee axis has no frontal part on
    it, whereas on the shank (ankle axis) it leaks M·sin(tau) into the frontal one."""
    s = 1.0 if side == "Right" else -1.0
    R_shank = rot_y(-s * TORSION)  # ISB axes: x anterior, y up, z right
    R_tibia = R_shank @ untorsioned_tibia(_subject(TORSION), side)
    np.testing.assert_allclose(R_tibia, np.eye(3), atol=1e-15)
    M = np.array([0.0, 0.0, 10.0])  # about the knee axis
    on_tibia = pig_moments(M, np.eye(3), R_tibia, joint="knee", side=side, frame="distal")
    on_shank = pig_moments(M, np.eye(3), R_shank, joint="knee", side=side, frame="distal")
    np.testing.assert_allclose(on_tibia, [10.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(abs(on_shank[0]), 10.0 * np.cos(TORSION), atol=1e-12)
    np.testing.assert_allclose(abs(on_shank[1]), 10.0 * np.sin(TORSION), atol=1e-12)
    # no torsion: no turn
    np.testing.assert_array_equal(untorsioned_tibia(_subject(0.0), side), np.eye(3))


def test_distal_knee_moment_uses_the_knee_tibia_on_a_twisted_synthetic_walk(monkeypatch):
    """A walk whose tibiae are twisted by 25 deg: with the torsion known, the knee's
    sagittal moment on the distal axes follows the JCS one (the knee's flexion axis); on
    the shank's own axes (the ankle axis) the frontal moment leaks into it."""
    import ahbm.gait.kinetics as kinetics

    trial, _ = synthetic_walking_trial(
        duration=2.6, noise=0.0, gap=None, anatomy={"tibial_torsion": TORSION}
    )
    known = GaitSettings(moment_frame="distal", tibial_torsion=TORSION)
    jcs = analyze_gait(trial, settings=known.replace(moment_frame="jcs"))

    def worst(res):
        out = []
        for p in "LR":
            a, b = res.moments[f"{p}KneeMoment"], jcs.moments[f"{p}KneeMoment"]
            ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
            out.append(np.max(np.abs(a[ok, 0] - b[ok, 0])) / np.max(np.abs(b[ok, 0])))
        return max(out)

    res = analyze_gait(trial, settings=known)
    assert "turned by the tibial torsion" in res.settings["moment_convention"]
    on_tibia = worst(res)
    monkeypatch.setattr(kinetics, "untorsioned_tibia", lambda subject, side: np.eye(3))
    on_shank = worst(analyze_gait(trial, settings=known))
    assert on_tibia < 0.1
    assert on_shank > 2.0 * on_tibia


def test_compat_setting_is_checked_and_implies_the_distal_projection():
    with pytest.raises(DataError, match="GaitSettings.compat"):
        GaitSettings(compat="vicon")
    st = GaitSettings(compat="plug-in-gait")
    assert st.plug_in_gait and st.effective_moment_frame == "distal"
    assert GaitSettings().effective_moment_frame == "jcs" and not GaitSettings().plug_in_gait


def _partly_off(trial, truth, fraction):
    """The trial with the plate under one stance reading `fraction` of its load (the foot
    half off the plate: the same centre of pressure, a part of the force)."""
    plates = list(trial.force_plates)
    k = 0
    fp = plates[k]
    plates[k] = dataclasses.replace(
        fp, force=fp.force * fraction, moment=fp.moment * fraction,
        free_moment=fp.free_moment * fraction,
    )  # fmt: skip
    return dataclasses.replace(trial, force_plates=plates)


def test_a_foot_half_off_its_plate_is_unknown_by_default_and_loaded_in_compat():
    trial, truth = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    half = _partly_off(trial, truth, 0.3)
    own = analyze_gait(half)
    pig = analyze_gait(half, settings=GaitSettings(compat="plug-in-gait"))
    assert own.settings["stances_partly_off_plates"] != "none"
    side = own.settings["stances_partly_off_plates"].split(":", 1)[0]
    p = side[0]
    grf_own = own.forces[f"{p}GroundReactionForce"]
    grf_pig = pig.forces[f"{p}GroundReactionForce"]
    loaded = np.nan_to_num(np.linalg.norm(grf_pig, axis=1)) > 1.0
    assert loaded.sum() > 10
    # ahbm: the stance's load (and its moments) unknown; Plug-in Gait: the partial load
    assert np.isnan(grf_own[loaded]).all()
    assert np.isnan(own.moments[f"{p}KneeMoment"][loaded]).all()
    assert np.isfinite(pig.moments[f"{p}KneeMoment"][loaded]).all()
    whole = analyze_gait(trial, settings=GaitSettings(compat="plug-in-gait"))
    ratio = np.linalg.norm(grf_pig[loaded], axis=1) / np.linalg.norm(
        whole.forces[f"{p}GroundReactionForce"][loaded], axis=1
    )
    np.testing.assert_allclose(ratio, 0.3, rtol=1e-6)  # the load as measured
    assert pig.settings["compat"] == "plug-in-gait" and own.settings["compat"] == "none"


def test_compat_foot_is_the_ankle_toe_line_and_the_record_says_so():
    """With heel markers, ahbm's foot runs heel-toe; Plug-in Gait's dynamic foot is the
    ankle-toe line turned by the static offsets (none here): the ankle angles differ by
    the constant angle between the two lines, and the result names the foot used."""
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    own = analyze_gait(trial, settings=GaitSettings(kinetics=False))
    pig = analyze_gait(trial, settings=GaitSettings(kinetics=False, compat="plug-in-gait"))
    assert "heel-toe line" in own.settings["static_calibration"]
    assert "ankle-toe line unturned (Plug-in Gait's)" in pig.settings["static_calibration"]
    for p in "LR":
        d = pig.angles[f"{p}AnkleAngles"][:, 0] - own.angles[f"{p}AnkleAngles"][:, 0]
        d = d[np.isfinite(d)]
        assert abs(np.mean(d)) > np.radians(1.0)  # the lines differ
        assert np.std(d) < np.radians(1.0)  # by a constant: the static offset
    np.testing.assert_array_equal(pig.angles["LKneeAngles"], own.angles["LKneeAngles"])


def test_subject_angles_given_as_settings_reproduce_the_static_calibration():
    """ThighRotation, ShankRotation and TibialTorsion known to the lab but not stored in
    the file: given as settings, the blind run builds the joint centres and angles that
    the static calibration gives; without them the knee centre is off."""
    from ahbm.gait.demo import synthetic_static_trial

    anatomy = {"tibial_torsion": 0.30, "thigh_wand_rotation": 0.20,
               "shank_wand_rotation": -0.15}  # fmt: skip
    trial, _ = synthetic_walking_trial(
        duration=2.0, noise=0.0, gap=None, anatomy=anatomy, heel_markers=False
    )
    base = GaitSettings(kinetics=False)
    cal = analyze_gait(trial, static=synthetic_static_trial(anatomy=anatomy), settings=base)
    subj = cal.subject
    given = base.replace(
        tibial_torsion=dict(subj.tibial_torsion), thigh_rotation=dict(subj.thigh_rotation),
        shank_rotation=dict(subj.shank_rotation),
    )  # fmt: skip
    res = analyze_gait(trial, settings=given)
    bare = analyze_gait(trial, settings=base.replace(tibial_torsion=0.0, thigh_rotation=0.0,
                                                     shank_rotation=0.0))  # fmt: skip
    for name in ("LKJC", "RKJC", "LAJC", "RAJC"):
        np.testing.assert_allclose(res.joint_centres[name], cal.joint_centres[name], atol=1e-9)
    for name in ("LKJC", "RKJC"):
        d = np.linalg.norm(bare.joint_centres[name] - cal.joint_centres[name], axis=1)
        assert np.nanmedian(d) > 0.005, name
    np.testing.assert_allclose(res.angles["RKneeAngles"], cal.angles["RKneeAngles"], atol=1e-9)
    assert res.subject.thigh_rotation == subj.thigh_rotation
    with pytest.raises(DataError, match="GaitSettings.thigh_rotation"):
        GaitSettings(thigh_rotation="10 deg")


@pytest.mark.parametrize("compat", ["none", "plug-in-gait"])
def test_a_contact_that_starts_before_the_foot_strike_event_is_the_foots(compat):
    """The file's foot strike 50 ms after the plate's contact starts (a late event): the
    plate's load in between is the foot's (its kinetics computed, the same as with the
    event on time), in ahbm's rules and in Plug-in Gait's."""
    from ahbm.types import Event

    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    settings = GaitSettings(compat=compat)
    on_time = analyze_gait(trial, settings=settings)
    plate_strikes = [
        e for e in on_time.events
        if e.label == "Foot Strike" and e.description.startswith("force plate")
    ]  # fmt: skip
    assert plate_strikes
    late = [
        Event(e.label, e.time + 0.05, e.context, "late") if e in plate_strikes else e
        for e in on_time.events
    ]
    res = analyze_gait(dataclasses.replace(trial, events=late), events="file",
                       settings=settings)  # fmt: skip
    assert res.settings["events"].startswith("file")
    t = res.time
    for e in plate_strikes:
        p = e.context[0]
        between = (t >= e.time + 0.005) & (t < e.time + 0.045)
        grf = res.forces[f"{p}GroundReactionForce"][between]
        assert np.isfinite(grf).all() and (grf[:, 2] > 0.2).all()
        for j in ("Hip", "Knee", "Ankle"):
            np.testing.assert_allclose(
                res.moments[f"{p}{j}Moment"][between],
                on_time.moments[f"{p}{j}Moment"][between], atol=1e-9,
            )  # fmt: skip


def _shared_plate_case():
    """One plate: foot 0 on it alone (COP at its heel-toe line), then foot 1 steps on it
    while foot 0 is still there (COP between them, both near), then foot 1 alone."""
    from ahbm.io.trial import ForcePlate

    n = 60
    t = np.arange(n) / 100.0
    f = np.tile([0.0, 0.0, 700.0], (n, 1))
    cop = np.zeros((n, 3))
    cop[:20, 0], cop[20:40, 0], cop[40:, 0] = 0.10, 0.25, 0.40
    corners = np.array([[0.0, -0.2, 0], [0.5, -0.2, 0], [0.5, 0.2, 0], [0.0, 0.2, 0]])
    plate = ForcePlate(f, np.zeros((n, 3)), cop, np.zeros((n, 3)), corners, np.zeros(3),
                       rate=100.0)  # fmt: skip
    back = np.tile([[0.0, 0.0, 0.05], [0.2, 0.0, 0.0]], (n, 1, 1))  # heel-toe of foot 0
    front = np.tile([[0.3, 0.0, 0.05], [0.5, 0.0, 0.0]], (n, 1, 1))
    front[:20] = np.nan  # foot 1 not yet down (in the air, not tracked on the plate)
    back[40:] = np.nan
    return [plate], {0: back, 1: front}, t


def test_a_plate_shared_by_two_feet_is_unknown_or_given_to_the_first_foot():
    from ahbm.dynamics.plate_assignment import (
        assign_force_plates,
        first_foot_takes_shared_plates,
    )

    plates, feet, t = _shared_plate_case()
    own = assign_force_plates(plates, feet, time=t, contact_height=None, warn=False)
    shared = slice(21, 39)  # (the frames next to a foot's first or last have no speed)
    # ahbm: the two feet's shares are unknown (a plate measures only their sum)
    assert own.ambiguous[shared].all() and not own.contact[shared].any()
    assert own.contact[:20, 0].all() and own.contact[40:, 1].all()
    pig = first_foot_takes_shared_plates(own, plates, t)
    # Plug-in Gait: the whole load to the foot that stepped on the plate first
    np.testing.assert_allclose(pig.f_ext[shared, 0, 5], 700.0)
    np.testing.assert_allclose(pig.f_ext[shared, 1], 0.0)
    assert not pig.ambiguous.any() and (pig.plate_of[shared, 0] == 0).all()
    np.testing.assert_array_equal(pig.f_ext[40:], own.f_ext[40:])  # then foot 1 alone
    # a stretch never held by one foot alone stays unknown
    none = dataclasses.replace(
        own, plate_of=np.full_like(own.plate_of, -1), contact=np.zeros_like(own.contact),
        ambiguous=np.ones_like(own.ambiguous), f_ext=np.zeros_like(own.f_ext),
    )  # fmt: skip
    kept = first_foot_takes_shared_plates(none, plates, t)
    assert kept.ambiguous.all() and not kept.f_ext.any()
    with pytest.raises(DataError, match="plates"):
        first_foot_takes_shared_plates(own, plates * 2, t)
