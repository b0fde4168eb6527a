from types import SimpleNamespace

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.analysis import (
    detect_gait_events,
    force_plate_events,
    spatiotemporal_parameters,
    zeni_events,
)
from ahbm.errors import DataError

DATA = SHARED
GAIT = DATA / "c3d" / "gait-raw.c3d"


def test_force_plate_events_thresholds_and_interpolation():
    fs = 1000.0
    t = np.arange(0, 2, 1 / fs)
    # smooth loading from 0.3 s to 0.9 s
    f = np.where((t > 0.3) & (t < 0.9), 700 * np.sin(np.pi * (t - 0.3) / 0.6), 0.0)
    s, o = force_plate_events(f, rate=fs, threshold=20.0, hysteresis=10.0)
    ts = 0.3 + 0.6 / np.pi * np.arcsin(20 / 700)
    to = 0.9 - 0.6 / np.pi * np.arcsin(10 / 700)
    np.testing.assert_allclose(s, [ts], atol=2e-4)
    np.testing.assert_allclose(o, [to], atol=2e-4)


def test_force_plate_hysteresis_and_min_durations():
    fs = 100.0
    rng = np.random.default_rng(0)
    f = np.zeros(300)
    f[50:150] = 600
    f[150:160] = 18 + rng.uniform(-1, 1, 10)  # noise between 10 and 20 N: still loaded
    f[160:162] = 0
    f[162:200] = 400  # 20 ms unloading: bridged by min_gap
    f[250:255] = 500  # 50 ms spike: shorter than min_contact
    s, o = force_plate_events(f, rate=fs)
    assert len(s) == 1 and len(o) == 1
    assert s[0] == pytest.approx(0.4903, abs=1e-3)
    assert o[0] == pytest.approx(1.99, abs=0.011)
    s2, o2 = force_plate_events(f, rate=fs, hysteresis=0.0, min_gap=0.0, min_contact=0.01)
    assert len(s2) == 3  # without hysteresis and merging the contact breaks up
    with pytest.raises(DataError, match="hysteresis"):
        force_plate_events(f, rate=fs, hysteresis=30.0)


def test_edge_contacts_have_no_event():
    f = np.r_[np.full(20, 500.0), np.zeros(20), np.full(20, 500.0)]
    s, o = force_plate_events(f, rate=100.0)
    assert len(o) == 1 and len(s) == 1 and s[0] > o[0]


def _synthetic_trial(fs=100.0, period=1.0, speed=1.2):
    t = np.arange(0, 3.2, 1 / fs)
    sac = np.stack([speed * t, 0 * t, 0.9 + 0 * t], 1)

    def foot(ph, lag):
        return sac + np.stack(
            [
                0.3 * np.cos(2 * np.pi * (t - lag) / period + ph),
                0.1 * np.sign(np.cos(ph)) + 0 * t,
                -0.9 + 0 * t,
            ],
            1,
        )

    pts = np.stack([sac, foot(0, 0), foot(0, 0.1), foot(np.pi, 0), foot(np.pi, 0.1)], 1)
    return SimpleNamespace(
        points=pts,
        point_labels=["SACR", "LHEE", "LTOE", "RHEE", "RTOE"],
        point_rate=fs,
        first_frame=1,
        force_plates=[],
        n_frames=t.size,
    ), t


def test_zeni_synthetic_times():
    tr, t = _synthetic_trial()
    ev = detect_gait_events(tr, method="kinematic")
    ls = [e.time for e in ev if e.context == "Left" and e.label == "Foot Strike"]
    rs = [e.time for e in ev if e.context == "Right" and e.label == "Foot Strike"]
    lo = [e.time for e in ev if e.context == "Left" and e.label == "Foot Off"]
    np.testing.assert_allclose(ls, [1.0, 2.0, 3.0], atol=1e-3)
    np.testing.assert_allclose(rs, [0.5, 1.5, 2.5], atol=1e-3)
    np.testing.assert_allclose(lo, [0.6, 1.6, 2.6], atol=1e-3)


def test_zeni_bad_input():
    with pytest.raises(DataError, match="heel"):
        zeni_events(np.zeros((10, 2)), np.zeros((10, 3)), np.zeros((10, 3)), rate=100.0)
    tr, _ = _synthetic_trial()
    tr.point_labels = ["SACR", "X", "LTOE", "RHEE", "RTOE"]
    with pytest.raises(DataError, match="heel marker"):
        detect_gait_events(tr, method="kinematic")
    with pytest.raises(DataError, match="no force plates"):
        detect_gait_events(tr, method="force_plate")
    with pytest.raises(DataError, match="method"):
        detect_gait_events(tr, method="guess")


def _read_gait():
    if not DATA.is_dir():
        pytest.skip(f"shared data folder {DATA} is absent")
    c3d = pytest.importorskip("ahbm.io.c3d", reason="ahbm.io.c3d (C3D reader) not available yet")
    return c3d.read_c3d(GAIT)


def test_gait_raw_force_plate_vs_kinematic_within_two_frames():
    trial = _read_gait()
    fp = detect_gait_events(trial, method="force_plate")
    kin = detect_gait_events(trial, method="kinematic")
    assert len(fp) == 4  # two plates, one full contact each
    assert {e.context for e in fp} == {"Left", "Right"}
    two_frames = 2 / trial.point_rate
    for e in fp:
        same = [k.time for k in kin if k.label == e.label and k.context == e.context]
        assert min(abs(np.array(same) - e.time)) <= two_frames, e
    # events alternate sides plausibly: stance 0.5-0.8 s on each plate
    for side in ("Left", "Right"):
        s = [e.time for e in fp if e.context == side and e.label == "Foot Strike"][0]
        o = [e.time for e in fp if e.context == side and e.label == "Foot Off"][0]
        assert 0.5 < o - s < 0.8


def test_gait_raw_spatiotemporal_plausible():
    trial = _read_gait()
    ev = detect_gait_events(trial)  # auto: kinematic + force plates
    labels = trial.point_labels
    hl = trial.points[:, labels.index("LANK")]
    hr = trial.points[:, labels.index("RANK")]
    res = spatiotemporal_parameters(ev, heel_left=hl, heel_right=hr, time=trial.time)
    assert 80 < res["cadence"] < 140  # steps/min, normal adult walking
    assert 0.8 < res["walking_speed"] < 1.8  # m/s
    for side in ("Left", "Right"):
        r = res[side]
        assert 0.85 < r["stride_time"] < 1.3
        assert 55 < r["stance_pct"] < 70
        assert 1.0 < r["stride_length"] < 1.8
        assert 0.45 < r["step_length"] < 0.9
        assert 10 < r["double_support_pct"] < 35


def test_force_plate_side_assignment_and_auto_merge():
    tr, t = _synthetic_trial()
    fs_fp = 1000.0
    ta = np.arange(0, 3.2, 1 / fs_fp)
    # left foot stance from 1.0 s (strike) to 1.6 s (off) on a plate under the left heel
    fz = np.where((ta > 1.0) & (ta < 1.6), 700 * np.sin(np.pi * (ta - 1.0) / 0.6) + 50, 0.0)
    force = np.zeros((ta.size, 3))
    force[:, 2] = -fz  # force on the plate points down
    i_mid = int(1.3 * 100)
    cop = np.full((ta.size, 3), np.nan)
    cop[fz > 20] = tr.points[i_mid, 1] * [1, 1, 0]
    plate = SimpleNamespace(force=force, cop=cop, origin=np.array([0.0, 0.0, 0.0]), rate=fs_fp)
    tr.force_plates = [plate]
    fp = detect_gait_events(tr, method="force_plate")
    assert [(e.label, e.context) for e in fp] == [("Foot Strike", "Left"), ("Foot Off", "Left")]
    assert fp[0].time == pytest.approx(1.0, abs=2e-3) and fp[1].time == pytest.approx(1.6, abs=2e-3)
    auto = detect_gait_events(tr)  # kinematic events near 1.0 / 1.6 s replaced by the plate's
    left = [(e.label, round(e.time, 2), e.description) for e in auto if e.context == "Left"]
    assert ("Foot Strike", 1.0, "force plate 0") in left
    assert ("Foot Off", 1.6, "force plate 0") in left
    assert sum(1 for e in auto if abs(e.time - 1.0) < 0.1 and e.context == "Left") == 1


def test_zeni_treadmill_uses_foot_direction():
    """On a treadmill the sacrum barely travels (here it drifts backwards)."""
    fs = 100.0
    t = np.arange(0, 3.0, 1 / fs)
    sac = np.stack([-0.05 * t, 0 * t, 0.9 + 0 * t], 1)
    heel = np.stack([0.3 * np.cos(2 * np.pi * t), 0.1 + 0 * t, 0 * t], 1)
    toe = heel + [0.2, 0.0, 0.0]
    s, o = zeni_events(heel, toe, sac, rate=fs)
    np.testing.assert_allclose(s, [1.0, 2.0], atol=0.02)
    # toe furthest behind the pelvis half a cycle later
    np.testing.assert_allclose(o, [0.5, 1.5, 2.5], atol=0.02)
    with pytest.raises(DataError, match="walking direction"):
        zeni_events(heel, heel, np.zeros_like(heel), rate=fs)


def test_force_plate_contact_assigned_to_stance_foot_with_narrow_base():
    """The swinging heel passes right over the COP at mid-stance (zero step width)."""
    fs = 100.0
    t = np.arange(0, 1.6, 1 / fs)
    on = (t >= 0.5) & (t <= 1.1)
    lhee = np.tile([1.0, 0.0, 0.02], (t.size, 1))
    ltoe = lhee + [0.2, 0.0, 0.0]
    rx = 0.52 + (1.72 - 0.52) * (t - 0.5) / 0.6  # swing heel, level with the COP at 0.8 s
    rhee = np.stack([rx, 0 * t, 0.05 + 0 * t], 1)
    rtoe = rhee + [0.2, 0.0, 0.0]
    fr = 1000.0
    tf = np.arange(0, 1.6, 1 / fr)
    onf = (tf > 0.5) & (tf < 1.1)
    force = np.zeros((tf.size, 3))
    force[onf, 2] = 700 * np.sin(np.pi * (tf[onf] - 0.5) / 0.6)
    cop = np.full((tf.size, 3), np.nan)
    cop[onf] = np.stack([1.0 + 0.2 * (tf[onf] - 0.5) / 0.6, 0 * tf[onf], 0 * tf[onf]], 1)
    plate = SimpleNamespace(force=force, cop=cop, origin=np.array([1.1, 0.0, 0.0]), rate=fr)
    trial = SimpleNamespace(
        points=np.stack([lhee, ltoe, rhee, rtoe], 1),
        point_labels=["LHEE", "LTOE", "RHEE", "RTOE"],
        point_rate=fs,
        first_frame=1,
        force_plates=[plate],
        n_frames=t.size,
    )
    assert on.any()
    ev = detect_gait_events(trial, method="force_plate")
    assert [e.context for e in ev] == ["Left", "Left"]
    assert [e.label for e in ev] == ["Foot Strike", "Foot Off"]


# --------------------------------------------------------------------------
# one Event class (ahbm.types.Event)
# --------------------------------------------------------------------------
def test_one_event_class():
    import dataclasses

    import ahbm.analysis
    import ahbm.io
    import ahbm.io.trial
    from ahbm.types import Event

    assert ahbm.io.Event is Event and ahbm.io.trial.Event is Event
    fields = [f.name for f in dataclasses.fields(Event)]
    assert fields == ["label", "time", "context", "description"]
    e = Event("Foot Strike", 0.5, "Left")
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.time = 1.0
    with pytest.raises(AttributeError):
        ahbm.analysis.GaitEvent  # noqa: B018
    with pytest.raises(AttributeError):
        ahbm.analysis.NoSuchName  # noqa: B018
