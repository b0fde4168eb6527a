"""Gait events: the file's events, plates or kinematics by choice; plausibility checks that
flag wrong events; treadmill walking with the belt speed given or estimated."""

from dataclasses import replace

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import GaitSettings, analyze_gait
from ahbm.gait.checks import (
    belt_speed_from_feet,
    check_cycles,
    detect_treadmill,
)
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.gait.events import event_problems
from ahbm.types import Event

DATA = SHARED
OPENSIM = DATA / "opensim"
KIN = GaitSettings(kinetics=False)

# warnings are asserted where they are the point (pytest.warns); elsewhere quiet
pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")


@pytest.fixture(scope="module")
def walk():
    trial, truth = synthetic_walking_trial(duration=3.6, noise=0.0, gap=None)
    return trial, truth, analyze_gait(trial)


def _true_events(trial, stride=1.1, stance=0.62):
    """The synthetic subject's own strikes and offs (right strike at t = 0)."""
    ev = []
    for side, offset in (("Right", 0.0), ("Left", 0.5)):
        for k in range(-1, 5):
            t = (k - offset) * stride
            for label, tt in (("Foot Strike", t), ("Foot Off", t + stance * stride)):
                if trial.time[0] <= tt <= trial.time[-1]:
                    ev.append(Event(label, float(tt), side, "from the lab"))
    return sorted(ev, key=lambda e: e.time)


def test_file_events_are_used_when_present(walk):
    trial, _, _ = walk
    ev = _true_events(trial)
    with_events = replace(trial, events=ev)
    r = analyze_gait(with_events)
    assert r.settings["events"] == "file"
    assert [(e.label, e.time, e.context) for e in r.events] == [
        (e.label, e.time, e.context) for e in ev
    ]
    assert r.flags == ()
    # the true events give the true stride time on both sides
    for side in ("Left", "Right"):
        assert r.spatiotemporal[side]["stride_time"] == pytest.approx(1.1, abs=1e-9)
    # other sources on request
    kin = analyze_gait(with_events, events="kinematic", settings=KIN)
    assert kin.settings["events"] == "kinematic"
    assert all(e.description.startswith("zeni") for e in kin.events)
    plates = analyze_gait(with_events, events="force_plates")
    assert plates.settings["events"] == "force_plates"
    assert any(e.description.startswith("force plate") for e in plates.events)


def test_events_file_without_events_is_an_error_and_auto_says_why(walk):
    trial, _, full = walk
    with pytest.raises(DataError, match="events='file'.*none in the file"):
        analyze_gait(trial, events="file")
    assert full.settings["events"] == "force_plates (file events not used: none in the file)"
    with pytest.raises(DataError, match="`events` must be one of"):
        analyze_gait(trial, events="zeni")
    # file events that do not alternate are not used by "auto"
    bad = [Event("Foot Strike", 0.5, "Left"), Event("Foot Strike", 0.9, "Left")]
    r = analyze_gait(replace(trial, events=bad), settings=KIN)
    assert r.settings["events"].startswith("force_plates (file events not used: Left: two foot")


def test_wrong_events_raise_the_alarm(walk):
    """A left stride of 0.71 s against 1.1 s on the right (a mislabelled event)."""
    trial, _, _ = walk
    ev = [e for e in _true_events(trial) if not (e.context == "Left" and e.time > 2.0)]
    strikes = [e.time for e in ev if e.context == "Left" and e.label == "Foot Strike"]
    ev.append(Event("Foot Strike", strikes[-1] + 0.71, "Left", "wrong"))
    ev.append(Event("Foot Off", strikes[-1] + 0.40, "Left", "wrong"))
    ev = sorted(ev, key=lambda e: e.time)
    assert event_problems(ev) == []
    with pytest.warns(AhbmWarning, match=r"gait checks failed \(file events\): stride times "):
        r = analyze_gait(replace(trial, events=ev), events="file", settings=KIN)
    assert r.flags and "asymmetry" in r.flags[0]
    assert "CHECK FAILED: stride times" in r.summary()
    assert r.to_results()["gait_flags"] == list(r.flags)


def test_check_cycles_rules():
    good = {
        "Left": {"stride_time": 1.1, "stance_pct": 62.0, "stride_length": 1.3, "step_length": 0.65},
        "Right": {"stride_time": 1.1, "stance_pct": 61.0, "stride_length": 1.3,
                  "step_length": 0.65},
        "cadence": 109.0,
    }  # fmt: skip
    assert check_cycles(good) == []
    bad = {
        "Left": {**good["Left"], "stance_pct": 85.0, "stride_length": 0.029},
        "Right": good["Right"],
        "cadence": 151.0,
    }
    flags = " | ".join(check_cycles(bad))
    assert "cadence 151" in flags and "left stance 85 %" in flags
    assert "left stride length 0.029 m is not the sum of the step lengths (1.300 m)" in flags


def _on_treadmill(trial, speed):
    """The same walk on a treadmill: every marker moved back by speed * t (no plates)."""
    pts = trial.points.copy()
    pts[..., 0] -= speed * trial.time[:, None]
    return replace(trial, points=pts, force_plates=[])


def test_treadmill_trial_uses_the_belt_speed(walk):
    trial, _, over = walk
    speed = over.spatiotemporal["walking_speed"]
    belt = _on_treadmill(trial, speed)
    ref = analyze_gait(trial, settings=KIN, events="kinematic")
    given = analyze_gait(belt, settings=KIN, belt_speed=speed)
    assert given.settings["spatiotemporal_lengths"].startswith(
        "treadmill: heels in the belt's frame, belt speed"
    )
    assert "(given)" in given.settings["spatiotemporal_lengths"]
    for side in ("Left", "Right"):
        for key in ("stride_length", "step_length", "walking_speed", "stride_time"):
            assert given.spatiotemporal[side][key] == pytest.approx(
                ref.spatiotemporal[side][key], rel=1e-3
            ), (side, key)
    # estimated from the feet in stance (the synthetic feet slide by up to 0.7 m/s in
    # stance, so only roughly here; exact in the closed-form test below)
    r = analyze_gait(belt, settings=KIN)
    assert "estimated from the feet in stance" in r.settings["spatiotemporal_lengths"]
    assert r.spatiotemporal["walking_speed"] == pytest.approx(speed, rel=0.15)
    # the lab-frame heels alone give a stride of a few cm
    flat = analyze_gait(belt, settings=KIN, belt_speed=1e-6)
    assert flat.spatiotemporal["Left"]["stride_length"] < 0.1


def test_treadmill_detection_and_belt_speed_closed_form():
    t = np.linspace(0.0, 4.0, 401)
    still = np.zeros((t.size, 3))
    toe = np.stack([0.4 * np.sin(2 * np.pi * t), 0 * t, 0 * t], 1)
    assert detect_treadmill(still, t, [toe])[0]
    moving = np.stack([1.2 * t, 0 * t, 0 * t], 1)
    assert not detect_treadmill(moving, t, [toe])[0]
    assert not detect_treadmill(still, t, [0 * toe])[0]  # standing: the feet do not step
    heel = np.stack([-0.9 * t, 0 * t, 0 * t], 1)  # moving back with a 0.9 m/s belt
    ev = [Event("Foot Strike", 0.5, s) for s in ("Left", "Right")]
    ev += [Event("Foot Off", 1.2, s) for s in ("Left", "Right")]
    v = belt_speed_from_feet({"Left": heel, "Right": heel}, ev, t, [1.0, 0, 0])
    assert v == pytest.approx(0.9)
    assert belt_speed_from_feet({"Left": heel, "Right": heel}, ev[:2], t, [1.0, 0, 0]) is None


@pytest.mark.skipif(not OPENSIM.is_dir(), reason="shared data folder not available")
def test_opensim_treadmill_trial_gives_plausible_spatiotemporal_values():
    r = analyze_gait(
        OPENSIM / "subject01_walk.trc",
        mass=72.6,
        static=OPENSIM / "subject01_static.trc",
        grf=OPENSIM / "subject01_walk_grf.mot",
        settings=GaitSettings(marker_set="opensim"),
    )
    assert r.settings["spatiotemporal_lengths"].startswith("treadmill")
    for side in ("Left", "Right"):
        sp = r.spatiotemporal[side]
        assert 1.0 < sp["stride_length"] < 1.7, sp
        assert 0.9 < sp["walking_speed"] < 1.6, sp
        assert 0.5 < sp["step_length"] < 0.85, sp
    assert 80.0 < r.spatiotemporal["cadence"] < 130.0
    assert r.flags == ()


def test_treadmill_without_a_belt_speed_omits_the_lengths_with_a_reason(walk):
    trial, _, over = walk
    belt = _on_treadmill(trial, over.spatiotemporal["walking_speed"])
    # file events with no stance inside the trial (each foot off comes before its strike)
    ev = [Event("Foot Off", 0.3, "Right"), Event("Foot Strike", 1.0, "Right"),
          Event("Foot Off", 0.8, "Left"), Event("Foot Strike", 1.5, "Left")]  # fmt: skip
    with pytest.warns(AhbmWarning, match=r"treadmill walking \(the pelvis travels 0\.\d\d m\)"):
        r = analyze_gait(replace(belt, events=ev), events="file", settings=KIN)
    assert r.settings["spatiotemporal_lengths"].startswith("treadmill: no belt speed")
    assert np.isnan(r.spatiotemporal["walking_speed"])
    assert any("pass belt_speed=" in f for f in r.flags)


def test_auto_passes_over_file_events_that_disagree_with_the_plates(walk):
    trial, _, _ = walk
    late = [replace(e, time=e.time + 0.2) for e in _true_events(trial)]
    r = analyze_gait(replace(trial, events=late))
    assert r.settings["events"].startswith("force_plates (file events not used: ")
    assert "foot strike of force plate 0 at" in r.settings["events"]
    # asked for explicitly, the file's events are used as they are
    r = analyze_gait(replace(trial, events=late), events="file")
    assert r.settings["events"] == "file"


@pytest.mark.skipif(not DATA.is_dir(), reason="shared data folder not available")
def test_header_events_of_a_real_file_are_read_as_foot_events():
    import warnings

    from ahbm.gait.events import file_gait_events
    from ahbm.io import read_c3d

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = read_c3d(DATA / "c3d" / "bad_parameter_section.c3d")  # LHS, RFO, RHS, LTO ...
    ev = file_gait_events(t.events, t.time)
    assert [(e.label, e.context) for e in ev[:4]] == [
        ("Foot Strike", "Left"), ("Foot Off", "Right"), ("Foot Strike", "Right"),
        ("Foot Off", "Left"),
    ]  # fmt: skip
    assert ev[0].time == pytest.approx(0.7667, abs=1e-4)
    assert event_problems(ev) == []
