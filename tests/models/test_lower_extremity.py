"""The Plug-in Gait lower-extremity pipeline: synthetic truth, the shared walking
trial end to end, HDF5 layout, bad input."""

import warnings
from dataclasses import replace

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import (
    GaitSettings,
    analyze_gait,
    joint_angles,
    lower_extremity_model,
    save_gait_result,
    segment_frames,
    subject_parameters,
)
from ahbm.gait.demo import recovery_errors, synthetic_walking_trial
from ahbm.io import load_trial, read_c3d
from ahbm.kinematics.forward import forward_kinematics

DATA = SHARED
GAIT_RAW = DATA / "c3d" / "gait-raw.c3d"
OPENSIM = DATA / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared data folder not available")


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return func(*args, **kwargs)


def _model_walk(n_frames, spread, seed):
    """Random poses of the multibody model, its body transforms and its markers."""
    model, params = lower_extremity_model(mass=70.0, height=1.75)
    rng = np.random.default_rng(seed)
    q = np.zeros((n_frames, model.nq))
    q[:, 2] = 0.9
    q[:, 3:7] = [0, 0, 0, 1.0]
    q[:, 7:] = rng.uniform(-spread, spread, (n_frames, model.nq - 7))
    for side in ("l", "r"):
        b = model.body_index(f"foot_{side}")
        q[:, model.q_index[b] + 1 : model.q_index[b] + 3] = 0.0  # Plug-in Gait foot: flexion
    T = forward_kinematics(model, q).transforms
    mk = {}
    for b, body in enumerate(model.bodies):
        for name, local in body.markers.items():
            mk[name] = np.einsum("nij,j->ni", T[:, b, :3, :3], local) + T[:, b, :3, 3]
    return model, params, q, T, mk


def test_frames_from_model_markers_equal_the_model_frames():
    """Davis hip centre, chord knee/ankle centres and the segment frames rebuild the
    model's own body frames from noise-free markers."""
    model, params, _, T, mk = _model_walk(20, 0.4, 0)
    fr = segment_frames(mk, params)
    jc = fr.joint_centres
    for name, R in fr.rotation.items():
        body = name if name == "pelvis" else f"{name.split('_')[0]}_{name.split('_')[1][0].lower()}"
        np.testing.assert_allclose(R, T[:, model.body_index(body), :3, :3], atol=1e-9)
    for side in ("l", "r"):
        p = side.upper()
        np.testing.assert_allclose(
            jc[p + "HJC"], T[:, model.body_index(f"thigh_{side}"), :3, 3], atol=1e-9
        )
        np.testing.assert_allclose(
            jc[p + "AJC"], T[:, model.body_index(f"foot_{side}"), :3, 3], atol=1e-9
        )


@pytest.fixture(scope="module")
def synthetic():
    trial, truth = synthetic_walking_trial()
    return trial, truth, _quiet(analyze_gait, trial)


def test_synthetic_trial_recovers_angles_and_moments(synthetic):
    _, truth, result = synthetic
    errs = recovery_errors(result, truth)
    assert max(errs["angles"].values()) < 1.0, errs["angles"]
    assert max(errs["moments"].values()) < 2.0, errs["moments"]
    # the measured plates give the events of the feet that stood on them
    plate_events = [e for e in result.events if e.description.startswith("force plate")]
    assert {(e.context, e.label) for e in plate_events} == {
        (s, lab) for s in ("Left", "Right") for lab in ("Foot Strike", "Foot Off")
    }
    assert result.subject.estimated == []  # all from the file's PROCESSING group


def test_noise_free_synthetic_trial_is_tighter():
    trial, truth = synthetic_walking_trial(noise=0.0, gap=None)
    errs = recovery_errors(_quiet(analyze_gait, trial), truth)
    assert max(errs["angles"].values()) < 0.6, errs["angles"]
    assert max(errs["moments"].values()) < 1.0, errs["moments"]


@pytest.fixture(scope="module")
def gait_raw():
    if not GAIT_RAW.is_file():
        pytest.skip("shared data folder not available")
    trial = read_c3d(GAIT_RAW)
    return trial, _quiet(analyze_gait, trial)


@needs_data
def test_gait_raw_plausible_angles_and_events(gait_raw):
    trial, r = gait_raw
    for p in ("L", "R"):
        knee = np.degrees(r.angles[p + "KneeAngles"][:, 0])  # results hold rad
        assert 50.0 < np.nanmax(knee) < 70.0  # swing-phase knee flexion peak
        assert -10.0 < np.nanmin(knee) < 15.0
        hip = np.degrees(r.angles[p + "HipAngles"][:, 0])
        assert 15.0 < np.nanmax(hip) < 45.0 and -25.0 < np.nanmin(hip) < 0.0
        ankle_m = r.moments[p + "AnkleMoment"][:, 0]
        assert 0.8 < np.nanmax(ankle_m) < 2.0  # push-off plantarflexor moment, N m/kg
    # events consistent with the plates: plate 0 is stepped on by the left foot, plate 1
    # by the right, at the instants the vertical force crosses 20 N
    plate_ev = {(e.description, e.label): e for e in r.events if "plate" in e.description}
    assert plate_ev[("force plate 0", "Foot Strike")].context == "Left"
    assert plate_ev[("force plate 1", "Foot Strike")].context == "Right"
    # (thresholds on the force minus the plate's unloaded offset: the median of its flat,
    # lowest stretch, 8.5 N and 2.9 N on this trial's plates)
    for k, plate in enumerate(trial.force_plates):
        fz = plate.force[:, 2]
        low = np.percentile(fz, 5)
        offset = np.median(fz[np.abs(fz - low) <= 10.0])
        assert r.settings["plate_offsets_n"][k].startswith(f"plate {k}: Fz {offset:.1f} N")
        fz = fz - offset
        on = np.flatnonzero(np.abs(fz) > 20.0)
        assert plate_ev[(f"force plate {k}", "Foot Strike")].time == pytest.approx(
            on[0] / plate.rate, abs=2 / plate.rate
        )
        off = np.flatnonzero(np.abs(fz) > 10.0)  # hysteresis: off below 10 N
        assert plate_ev[(f"force plate {k}", "Foot Off")].time == pytest.approx(
            off[-1] / plate.rate, abs=0.04
        )
    # no NaN in stance on the plates (3 frames kept clear of the 20 N threshold)
    for k, side in ((0, "L"), (1, "R")):
        on = np.flatnonzero(np.abs(trial.force_plates[k].force[:, 2]) > 30.0)
        frames = np.arange(int(on[0] / 16) + 3, int(on[-1] / 16) - 2)
        for joint in ("Hip", "Knee", "Ankle"):
            assert np.isfinite(r.moments[f"{side}{joint}Moment"][frames]).all()
            assert np.isfinite(r.powers[f"{side}{joint}Power"][frames]).all()
            assert np.isfinite(r.angles[f"{side}{joint}Angles"][frames]).all()
    assert 1.0 < r.spatiotemporal["walking_speed"] < 1.7
    assert 100.0 < r.spatiotemporal["cadence"] < 140.0


def test_power_components_sum_to_total_power():
    from ahbm.dynamics.segmental import joint_power
    from ahbm.gait.kinetics import _power_components
    from ahbm.kinematics.rotations import euler_to_matrix

    rng = np.random.default_rng(5)
    Rp = euler_to_matrix(rng.uniform(-0.5, 0.5, (50, 3)), "ZXY")
    Rd = Rp @ euler_to_matrix(rng.uniform(-0.6, 0.6, (50, 3)), "ZXY")
    M = rng.normal(size=(50, 3)) * 40
    wd, wp = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    parts = _power_components(M, wd - wp, Rp, Rd)
    np.testing.assert_allclose(parts.sum(axis=1), joint_power(M, wd, wp), rtol=1e-10, atol=1e-9)
    # a pure flexion velocity about e1 puts all the power in the sagittal component
    e1 = Rp[:, :, 2]
    only = _power_components(M, 3.0 * e1, Rp, Rd)
    np.testing.assert_allclose(only[:, 1:], 0.0, atol=1e-9)
    np.testing.assert_allclose(only[:, 0], 3.0 * np.einsum("ni,ni->n", M, e1))


@needs_data
def test_results_saved_in_the_documented_hdf5_layout(gait_raw, tmp_path):
    trial, r = gait_raw
    out = tmp_path / "walk.h5"
    name = save_gait_result(replace(trial, results=dict(trial.results)), r, out)
    back = load_trial(out, name).results
    for side in ("L", "R"):
        for var in (
            "HipAngles",
            "KneeAngles",
            "AnkleAngles",
            "PelvisAngles",
            "FootProgressAngles",
            "HipMoment",
            "KneeMoment",
            "AnkleMoment",
            "HipPower",
        ):
            assert back[side + var].shape == (trial.n_frames, 3)
    np.testing.assert_allclose(back["LKneeAngles"], r.angles["LKneeAngles"])
    assert set(back["events"]) == {"Left", "Right"}
    assert back["events"]["Left"]["foot_strike"].size >= 2
    for side in ("Left", "Right"):
        sp = back["spatiotemporal"][side]
        assert {"walking_speed", "stride_length", "stride_time", "cadence"} <= set(sp)
        assert back["gait_cycles"][side]["KneeAngles"].shape[1:] == (101, 3)
    assert back["gait_settings"]["marker_cutoff_hz"] == 6.0


@needs_data
def test_opensim_marker_set_agrees_with_opensim_inverse_kinematics():
    """The OpenSim walking example through the "opensim" marker set (knee and ankle
    landmarks rebuilt from the thigh and shank clusters of the static trial) and its
    GRF file: sagittal angles follow OpenSim's own IK solution of the same trial."""
    from ahbm.opensim import read_mot

    r = _quiet(
        analyze_gait,
        OPENSIM / "subject01_walk.trc",
        mass=72.6,
        static=OPENSIM / "subject01_static.trc",
        grf=OPENSIM / "subject01_walk_grf.mot",
        settings=GaitSettings(marker_set="opensim"),
    )
    assert r.settings["vertical_axis"] == [0.0, 1.0, 0.0]
    ik = read_mot(OPENSIM / "subject01_walk_IK.mot")  # radians after reading
    for ours, col, sign, min_r, max_rms in (
        ("RKneeAngles", "knee_angle_r", -1, 0.97, 8.0),
        ("LKneeAngles", "knee_angle_l", -1, 0.97, 8.0),
        ("RHipAngles", "hip_flexion_r", 1, 0.97, 8.0),
        ("LHipAngles", "hip_flexion_l", 1, 0.97, 8.0),
        ("RAnkleAngles", "ankle_angle_r", 1, 0.85, 12.0),
        ("LAnkleAngles", "ankle_angle_l", 1, 0.85, 12.0),
    ):
        ref = sign * np.degrees(np.interp(r.time, ik.time, ik.data[col].to_numpy()))
        a = np.degrees(r.angles[ours][:, 0])
        ok = np.isfinite(a)
        assert np.corrcoef(a[ok], ref[ok])[0, 1] > min_r, ours
        assert np.sqrt(np.mean((a[ok] - ref[ok]) ** 2)) < max_rms, ours
    for p in ("L", "R"):
        assert 1.0 < np.nanmax(r.moments[p + "AnkleMoment"][:, 0]) < 2.2
    plate_sides = {e.description: e.context for e in r.events if "plate" in e.description}
    # subject01_walk_grf.xml applies "ground_force" to calcn_r and "1_ground_force" to calcn_l
    assert plate_sides == {"force plate 0": "Right", "force plate 1": "Left"}


@needs_data
def test_missing_markers_are_listed_with_the_mapping_option():
    with pytest.raises(DataError, match=r"RKNE.*marker_map"):
        analyze_gait(
            OPENSIM / "subject01_walk.trc", mass=70.0, settings=GaitSettings(kinetics=False)
        )
    trial = read_c3d(GAIT_RAW)
    trial.point_labels[trial.point_labels.index("RTIB")] = "XTIB"
    with pytest.raises(DataError, match="RTIB"):
        _quiet(analyze_gait, trial)
    trial.point_labels[trial.point_labels.index("XTIB")] = "RTIB"
    trial.point_labels[trial.point_labels.index("SACR")] = "XSACR"
    with pytest.raises(DataError, match="SACR"):
        _quiet(analyze_gait, trial)
    # the same trial analyses with a mapping
    r = _quiet(analyze_gait, trial, settings=GaitSettings(marker_map={"SACR": "XSACR"}))
    assert np.isfinite(r.angles["LKneeAngles"]).any()


def test_bad_input_messages():
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    idle = [replace(p, force=p.force * 0.0, cop=p.cop * np.nan) for p in trial.force_plates]
    with pytest.raises(DataError, match="No force plate is loaded"):
        _quiet(
            analyze_gait, replace(trial, force_plates=idle), settings=GaitSettings(kinetics=True)
        )
    with pytest.warns(AhbmWarning, match="no force plate contact can be attributed"):
        auto = analyze_gait(replace(trial, force_plates=idle), mass=70.0)  # kinetics="auto"
    assert auto.moments == {} and auto.settings["kinetics"] is False
    r = _quiet(
        analyze_gait, replace(trial, force_plates=idle), settings=GaitSettings(kinetics=False)
    )
    assert r.moments == {} and np.isfinite(r.angles["RKneeAngles"][20:-20]).all()
    with pytest.raises(DataError, match="no force plates"):
        _quiet(analyze_gait, replace(trial, force_plates=[]), settings=GaitSettings(kinetics=True))
    gappy = trial.points.copy()
    gappy[100:130, trial.point_labels.index("LTIB")] = np.nan
    with pytest.raises(DataError, match="LTIB"):
        _quiet(analyze_gait, replace(trial, points=gappy), settings=GaitSettings(max_gap=10))
    with pytest.raises(DataError, match="units"):
        _quiet(analyze_gait, replace(trial, point_units="mm"))
    with pytest.raises(DataError, match="GaitSettings.marker_set"):
        GaitSettings(marker_set="vicon_full_body")
    with pytest.raises(DataError, match="does not exist"):
        analyze_gait("no_such_trial.c3d")


def test_subject_parameters_estimates_warn():
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    bare = replace(
        trial,
        parameters={k: v for k, v in trial.parameters.items() if k != "PROCESSING"},
        subject={},
    )
    with pytest.warns(AhbmWarning, match="estimated"):
        p = subject_parameters(bare)
    assert {"mass", "Left leg length", "Right knee width"} <= set(p.estimated)
    # the plate-based mass estimate is close to the model's 70 kg
    assert p.mass == pytest.approx(70.0, rel=0.1)
    assert p.leg_length["Left"] == pytest.approx(0.92, rel=0.1)
    given = subject_parameters(
        bare,
        mass=70.0,
        leg_length=0.92,
        knee_width=0.105,
        ankle_width={"Left": 0.072, "Right": 0.072},
        height=1.75,
        warn=False,
    )
    assert given.estimated == []


def test_frames_and_angles_stages_recover_the_model_angles():
    """segment_frames + joint_angles (stages called alone) on the noise-free markers of
    the multibody model give back its joint coordinates (ZXY Euler = Grood-Suntay,
    clinical signs), in rad."""
    model, params, q, _, mk = _model_walk(15, 0.3, 3)
    angles = joint_angles(segment_frames(mk, params), params)
    for p, s in (("R", 1.0), ("L", -1.0)):
        qi = model.q_index[model.body_index(f"shank_{p.lower()}")]
        np.testing.assert_allclose(angles[p + "KneeAngles"][:, 0], -q[:, qi], atol=1e-9)
        qi = model.q_index[model.body_index(f"thigh_{p.lower()}")]
        np.testing.assert_allclose(
            angles[p + "HipAngles"], q[:, qi : qi + 3] * [1.0, s, s], atol=1e-9
        )
