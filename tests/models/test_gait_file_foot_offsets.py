"""Plug-in Gait's stored static offsets (PROCESSING L/RStaticPlantFlex, L/RStaticRotOff)
are applied to the ankle-toe foot as Plug-in Gait's dynamic model does: a synthetic
subject whose file carries its own static calibration is recovered without the static
trial, and the same file without the foot offsets is not."""

import copy

import numpy as np
import pytest

from ahbm.gait import (
    GaitSettings,
    analyze_gait,
    foot_offset_from_angles,
    subject_parameters,
)
from ahbm.gait.calibration import static_calibration
from ahbm.gait.demo import recovery_errors, synthetic_static_trial, synthetic_walking_trial
from ahbm.gait.markers import static_markers

ANATOMY = {
    "tibial_torsion": 0.30,
    "thigh_wand_rotation": 0.20,
    "shank_wand_rotation": -0.15,
    "foot_marker_lateral": 0.015,
}
SETTINGS = GaitSettings(cutoff=10.0)
pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")


@pytest.fixture(scope="module")
def subject():
    trial, truth = synthetic_walking_trial(
        duration=2.6, noise=0.0, gap=None, anatomy=ANATOMY, heel_markers=False
    )
    static = synthetic_static_trial(anatomy=ANATOMY)
    with_static = analyze_gait(trial, static=static, settings=SETTINGS)
    return trial, truth, static, with_static


def _with_processing(trial, subj, feet=True):
    """The trial with the calibrated subject stored in PROCESSING as Plug-in Gait does."""
    proc = dict(trial.parameters["PROCESSING"])
    for side, p in (("Left", "L"), ("Right", "R")):
        o = {
            k: getattr(subj, k)[side]
            for k in ("tibial_torsion", "thigh_rotation", "shank_rotation",
                      "static_plantarflexion", "static_rotation")
        }  # fmt: skip
        proc[f"{p}TibialTorsion"] = np.array([o["tibial_torsion"]])
        proc[f"{p}ThighRotation"] = np.array([o["thigh_rotation"]])
        proc[f"{p}ShankRotation"] = np.array([o["shank_rotation"]])
        if feet:  # StaticPlantFlex: same sign; StaticRotOff: the opposite (see the docs)
            proc[f"{p}StaticPlantFlex"] = np.array([o["static_plantarflexion"]])
            proc[f"{p}StaticRotOff"] = np.array([-o["static_rotation"]])
    t2 = copy.copy(trial)
    t2.parameters = {**trial.parameters, "PROCESSING": proc}
    return t2


def test_offset_matrix_inverts_the_reported_angles(subject):
    """foot_offset_from_angles(pf, rot) rebuilds the static trial's offset rotation."""
    trial, _, static, _ = subject
    p = subject_parameters(trial, static)
    cal = static_calibration(static_markers(static, SETTINGS, [0.0, 0.0, 1.0]), p)
    for side in ("Left", "Right"):
        o = cal.offsets[side]
        assert abs(o["static_plantarflexion"]) > 0.05  # a real offset, not a trivial case
        F = foot_offset_from_angles(o["static_plantarflexion"], o["static_rotation"], side)
        np.testing.assert_allclose(F @ F.T, np.eye(3), atol=1e-12)
        # the heel-toe x axis is reproduced exactly (the two angles define it); the rest
        # is a roll about it, which the two-angle form (Plug-in Gait's) leaves out
        np.testing.assert_allclose(F[:, 0], cal.foot_offset[side][:, 0], atol=1e-12)
        roll = F.T @ cal.foot_offset[side]
        np.testing.assert_allclose(roll[0], [1.0, 0.0, 0.0], atol=1e-12)
        assert abs(np.arctan2(roll[2, 1], roll[1, 1])) < 0.06


def test_closed_form_signs():
    """Toe-up offset about z, toe-in about y with the side's sign (hand-built)."""
    F = foot_offset_from_angles(0.0, 0.1, "Right")  # ankle-toe toe-in by 0.1: heel-toe out
    assert F[2, 0] == pytest.approx(np.sin(0.1))  # heel-toe x points right (lateral)
    F = foot_offset_from_angles(0.0, 0.1, "Left")
    assert F[2, 0] == pytest.approx(-np.sin(0.1))  # left: lateral is -z
    F = foot_offset_from_angles(0.3, 0.0, "Left")
    assert F[1, 0] == pytest.approx(np.sin(0.3))  # toe up on both sides


def test_file_offsets_recover_the_subject_without_the_static_trial(subject):
    trial, truth, _, with_static = subject
    t2 = _with_processing(trial, with_static.subject)
    r = analyze_gait(t2, settings=SETTINGS)
    assert r.subject.foot_offsets_from == "file"
    errs = recovery_errors(r, truth)
    # the foot's two-angle offset leaves out the static roll about the foot's long axis
    # (2.2 deg here; Plug-in Gait stores and applies no third angle): the ankle and foot
    # angles carry it, everything else is recovered as with the static trial
    for key, err in errs["angles"].items():
        assert err < (2.5 if "Ankle" in key or "Foot" in key else 0.5), (key, err)
    for key, err in errs["moments"].items():  # % of peak; the roll tilts the ankle's axes
        assert err < (5.0 if "Ankle" in key else 0.5), (key, err)
    for key in ("LAnkleAngles", "RAnkleAngles"):
        np.testing.assert_allclose(r.angles[key][:, 0], with_static.angles[key][:, 0], atol=5e-3)


def test_without_the_file_foot_offsets_the_ankle_is_off(subject):
    trial, truth, _, with_static = subject
    t2 = _with_processing(trial, with_static.subject, feet=False)
    r = analyze_gait(t2, settings=SETTINGS)
    assert r.subject.foot_offsets_from == "none"
    errs = recovery_errors(r, truth)
    assert errs["angles"]["LAnkleAngles"] > 3.0, errs["angles"]


def test_file_offsets_replace_a_dynamic_heel(subject):
    """With the file's offsets the heel marker is not used (Plug-in Gait's dynamic foot)."""
    trial, _, _, with_static = subject
    t2 = _with_processing(trial, with_static.subject)
    heel_trial, _ = synthetic_walking_trial(
        duration=2.6, noise=0.0, gap=None, anatomy=ANATOMY, heel_markers=True
    )
    t3 = _with_processing(heel_trial, with_static.subject)
    a = analyze_gait(t2, settings=SETTINGS).angles["RAnkleAngles"]
    b = analyze_gait(t3, settings=SETTINGS).angles["RAnkleAngles"]
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_bad_arguments_name_themselves():
    from ahbm.errors import DataError

    with pytest.raises(DataError, match="`side`"):
        foot_offset_from_angles(0.1, 0.0, "right")
    with pytest.raises(DataError, match="`rotation`"):
        foot_offset_from_angles(0.1, float("nan"), "Left")
