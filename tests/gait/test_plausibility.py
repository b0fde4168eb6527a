"""Plausibility of the gait curves: flags of curves that point to a calibration error,
components the model fixes by construction, and the report's marks of both.

Built on synthetic curves (a walking-shaped ankle and knee, shifted by known offsets)
and on synthetic trials: a thigh wand turned about the thigh, a foot without heel
markers and without static offsets, the same foot with a static trial."""

import warnings

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.gait import GaitSettings, analyze_gait, synthetic_walking_trial, write_gait_report
from ahbm.gait.checks import (
    PLAUSIBLE_LIMITS,
    check_plausibility,
    foot_keeps_up_axis,
    undefined_components,
)
from ahbm.gait.demo import synthetic_static_trial
from ahbm.gait.frames import foot_offset_from_angles

PCT = np.linspace(0.0, 1.0, 101)


def _cycles(ankle_shift=0.0, ankle_rot=5.0, knee_rot=-5.0, crosstalk=0.0):
    """Two cycles of walking-shaped curves, deg in, rad out."""
    ankle = np.zeros((2, 101, 3))
    # about -5 at loading, +12 in terminal stance, -18 after toe-off, 0 in swing
    ankle[:, :, 0] = (
        12 * np.sin(np.pi * PCT / 0.55) * (PCT < 0.55)
        - 18 * np.sin(np.pi * (PCT - 0.55) / 0.4) * (PCT >= 0.55) * (PCT < 0.95)
        + ankle_shift
    )
    ankle[:, :, 2] = ankle_rot
    knee = np.zeros((2, 101, 3))
    knee[:, :, 0] = 5 + 55 * np.exp(-(((PCT - 0.72) / 0.12) ** 2))
    knee[:, :, 1] = 2 + crosstalk * knee[:, :, 0]
    knee[:, :, 2] = knee_rot + 3 * np.sin(2 * np.pi * PCT)
    c = {"AnkleAngles": np.radians(ankle), "KneeAngles": np.radians(knee)}
    return {"Left": c, "Right": {k: v.copy() for k, v in c.items()}}


def test_normal_walking_curves_raise_no_flag():
    assert check_plausibility(_cycles()) == []
    # within the spread of normal walking: a plantarflexed or toe-out subject
    assert check_plausibility(_cycles(ankle_shift=-8.0, ankle_rot=20.0, knee_rot=-18.0)) == []


@pytest.mark.parametrize(
    "calibration, fix",
    [("none", "run with the static trial"), ("file", "stored StaticPlantFlex was applied"),
     ("static", "static trial's foot offsets were applied")],
)  # fmt: skip
def test_a_plantarflexion_offset_is_flagged_with_the_fix(calibration, fix):
    flags = check_plausibility(_cycles(ankle_shift=-15.0), calibration=calibration)
    assert [(f.side, f.variable, f.component) for f in flags] == [
        ("Left", "AnkleAngles", 0), ("Right", "AnkleAngles", 0)
    ]  # fmt: skip
    text = flags[0].text
    assert text.startswith("left ankle dorsiflexion never reaches neutral: peak -3 deg")
    assert "plantarflexion offset" in text and fix in text


def test_a_dorsiflexion_offset_and_a_rotation_offset_are_flagged():
    flags = check_plausibility(_cycles(ankle_shift=30.0, ankle_rot=-40.0))
    texts = [f.text for f in flags if f.side == "Left"]
    assert "dorsiflexion offset" in texts[0] and "StaticRotOff" in texts[1]
    assert [f.component for f in flags if f.side == "Left"] == [0, 2]


def test_a_turned_knee_axis_is_flagged_with_its_crosstalk():
    turn = np.radians(15.0)
    flags = check_plausibility(_cycles(knee_rot=-35.0, crosstalk=np.tan(turn)))
    assert [(f.variable, f.component) for f in flags] == [("KneeAngles", 2)] * 2
    text = flags[0].text
    assert "knee rotation mean -35 deg" in text and "thigh wand" in text
    assert "slope 0.27 deg/deg" in text and "turned by about 15 deg" in text
    # the same offset without crosstalk: flagged, without the crosstalk evidence
    text = check_plausibility(_cycles(knee_rot=-35.0))[0].text
    assert "slope" not in text and "thigh_rotation=" in text
    # below the limit: no flag
    assert check_plausibility(_cycles(knee_rot=-(PLAUSIBLE_LIMITS["knee_rotation_mean"] - 1))) == []


def test_the_limits_stand_outside_the_published_normal_ankle_band():
    """Schwartz et al. (2008) free-speed ankle curve (ahbm.gait.normative): its mean and
    its mean -2 SD raise no flag; shifted 3 SD down it never reaches neutral."""
    from ahbm.gait.normative import normative_band

    band = normative_band()["AnkleAngles"]
    mean, sd = (band["mean"], band["sd"]) if isinstance(band, dict) else band
    mean, sd = np.asarray(mean, dtype=float)[:, 0], np.asarray(sd, dtype=float)[:, 0]
    peak = int(np.argmax(mean))
    assert mean[peak] == pytest.approx(11.84) and sd[peak] == pytest.approx(4.92)
    assert np.mean(mean[:-1]) < 1.0  # the cycle mean, far below the 25 deg limit

    def cycles(curve_deg):
        ankle = np.zeros((1, curve_deg.size, 3))
        ankle[0, :, 0] = np.radians(curve_deg)
        return {"Left": {"AnkleAngles": ankle}}

    assert check_plausibility(cycles(mean)) == []
    assert check_plausibility(cycles(mean - 2 * sd[peak])) == []
    low = mean - 3 * sd[peak]
    assert [f.component for f in check_plausibility(cycles(low))] == [0]
    assert mean[peak] - 3 * sd[peak] < PLAUSIBLE_LIMITS["ankle_peak_dorsiflexion"]


def test_bad_calibration_name_raises():
    with pytest.raises(DataError, match="calibration"):
        check_plausibility(_cycles(), calibration="kad")


def test_undefined_components_follow_the_foot_construction():
    assert foot_keeps_up_axis(None)
    assert foot_keeps_up_axis(foot_offset_from_angles(0.0, 0.2, "Right"))  # about y alone
    assert not foot_keeps_up_axis(foot_offset_from_angles(0.1, 0.0, "Right"))
    got = [(f.side, f.variable, f.component) for f in undefined_components({"Right": True})]
    assert got == [("Right", "AnkleAngles", 1), ("Right", "AnklePower", 1)]
    assert undefined_components({"Left": False, "Right": False}) == []


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze_gait(*args, **kwargs)


KIN = GaitSettings(kinetics=False)


def test_a_turned_thigh_wand_is_flagged_on_a_synthetic_trial():
    trial, _ = synthetic_walking_trial(duration=2.4)
    assert _quiet(trial, mass=70.0, settings=KIN).curve_flags == ()
    trial, _ = synthetic_walking_trial(duration=2.4, anatomy={"thigh_wand_rotation": 0.75})
    r = _quiet(trial, mass=70.0, settings=KIN)
    knee = [f for f in r.curve_flags if f.variable == "KneeAngles"]
    assert {f.side for f in knee} == {"Left", "Right"}
    assert all(f.text in r.flags for f in knee)  # carried in the flags (CLI, HDF5)
    assert all(f.text in r.to_results()["gait_flags"] for f in knee)


def test_the_ankle_frontal_angle_is_zero_exactly_where_declared_undefined():
    """Heel-toe foot: declared undefined and zero to round-off; ankle-toe foot turned by
    a static trial's offsets: defined, and not zero. Without those offsets the
    ankle-toe foot reads a plantarflexion offset that is flagged."""
    trial, _ = synthetic_walking_trial(duration=2.4)
    r = _quiet(trial, mass=70.0, settings=KIN)
    assert {(f.variable, f.component) for f in r.not_defined} == {
        ("AnkleAngles", 1), ("AnklePower", 1)
    }  # fmt: skip
    assert np.nanmax(np.abs(r.angles["LAnkleAngles"][:, 1])) < 1e-12
    assert r.to_results()["gait_not_defined"][0].startswith("LAnkleAngles[1]: not defined")
    trial, _ = synthetic_walking_trial(duration=2.4, heel_markers=False)
    r = _quiet(trial, mass=70.0, settings=KIN)
    flagged = {(f.side, f.variable, f.component) for f in r.curve_flags}
    assert {("Left", "AnkleAngles", 0), ("Right", "AnkleAngles", 0)} <= flagged
    assert "run with the static trial" in r.curve_flags[0].text
    r = _quiet(trial, mass=70.0, settings=KIN, static=synthetic_static_trial())
    assert r.not_defined == () and r.settings["not_defined_by_model"] == ["none"]
    assert np.nanmax(np.abs(np.degrees(r.angles["LAnkleAngles"][:, 1]))) > 0.05
    assert not [f for f in r.curve_flags if f.variable == "AnkleAngles"]


def test_the_report_marks_flagged_and_undefined_panels(tmp_path, monkeypatch):
    import ahbm.gait.report as report

    trial, _ = synthetic_walking_trial(duration=2.4, heel_markers=False)
    r = _quiet(trial, mass=70.0)
    seen = {}

    def keep(fig, path, **kwargs):
        seen["texts"] = [t.get_text() for ax in fig.axes for t in ax.texts]
        seen["fig_texts"] = [t.get_text() for t in fig.texts]
        seen["ankle"] = [fig.axes[3 * i : 3 * i + 3] for i in range(len(fig.axes) // 3)]
        seen["red"] = [ax for ax in fig.axes if ax.spines["left"].get_edgecolor()[0] > 0.6
                       and ax.spines["left"].get_edgecolor()[1] < 0.3]  # fmt: skip
        seen["ankle_frontal_lines"] = [
            line for line in fig.axes[3 * 3 + 1].lines if len(line.get_ydata()) > 2
        ]

    monkeypatch.setattr(report, "save_figure", keep)
    write_gait_report(r, tmp_path / "r.png")
    # AnkleAngles is the fourth row: its sagittal panel is framed red and labelled
    assert any(t.startswith("check calibration: left and right") for t in seen["texts"])
    assert len(seen["red"]) == 1
    assert any("plantarflexion offset" in t for t in seen["fig_texts"])
    # the heel-less foot without offsets fixes the ankle's frontal angle: not drawn
    assert seen["texts"].count("not defined by this model") == 2  # angle and power
    assert seen["ankle_frontal_lines"] == []
