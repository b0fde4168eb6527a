"""detect_gait_events finds each side's markers under Plug-in Gait, OpenSim, prefixed and other
label styles, says what it looked for when a marker is missing, and works in a Y-up lab."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.analysis import detect_gait_events
from ahbm.errors import DataError

DATA = SHARED
OPENSIM = DATA / "opensim"

PIG = ["SACR", "LHEE", "LTOE", "RHEE", "RTOE"]


def _walk(labels=PIG, fs=100.0):
    """Left strikes at 1, 2, 3 s, right at 0.5, 1.5, 2.5 s (Zeni's extrema), Z up."""
    t = np.arange(0, 3.2, 1 / fs)
    sac = np.stack([1.2 * t, 0 * t, 0.9 + 0 * t], 1)

    def foot(ph, lag, y):
        x = 0.3 * np.cos(2 * np.pi * (t - lag) + ph)
        return sac + np.stack([x, y + 0 * t, -0.9 + 0 * t], 1)

    pts = np.stack(
        [sac, foot(0, 0, 0.1), foot(0, 0.1, 0.1), foot(np.pi, 0, -0.1), foot(np.pi, 0.1, -0.1)], 1
    )
    return SimpleNamespace(
        points=pts,
        point_labels=list(labels),
        point_rate=fs,
        first_frame=1,
        force_plates=[],
        n_frames=t.size,
    )


def _times(events):
    return [(e.label, e.context, round(e.time, 9)) for e in events]


@pytest.fixture(scope="module")
def reference():
    """The events of the walk with Plug-in Gait labels (computed once, when first needed)."""
    return _times(detect_gait_events(_walk(), method="kinematic"))


@pytest.mark.parametrize(
    "labels",
    [
        ["V.Sacral", "L.Heel", "L.Toe.Tip", "R.Heel", "R.Toe.Tip"],  # OpenSim gait2354
        ["Pat01:SACR", "Pat01:LHEE", "Pat01:LTOE", "Pat01:RHEE", "Pat01:RTOE"],  # Vicon prefix
        ["sacrum", "l_heel", "l_toe", "r_heel", "r_toe"],
        ["Sacrum", "Heel_L", "Toe_L", "Heel_R", "Toe_R"],
        ["SACR", "LeftHeel", "LeftToe", "RightHeel", "RightToe"],
        ["VSAC", "L ANK", "L TOE", "R ANK", "R TOE"],  # ankle as the heel, spaces
    ],
)
def test_label_styles_give_the_same_events(labels, reference):
    ev = detect_gait_events(_walk(labels), method="kinematic")
    assert _times(ev) == reference
    heel = labels[1]
    assert any(e.description == f"zeni ({heel})" for e in ev if e.context == "Left")


def test_sides_follow_the_labels_and_sided_entries_stand_for_their_landmark(reference):
    # the markers' sides swapped in the labels: the events swap sides with them
    swapped = detect_gait_events(
        _walk(["SACR", "RHEE", "RTOE", "LHEE", "LTOE"]), method="kinematic"
    )
    flip = {"Left": "Right", "Right": "Left"}
    assert sorted(_times(swapped)) == sorted((lb, flip[c], t) for lb, c, t in reference)
    # an OpenSim label given as the heel name is its landmark on both sides (no 'LR.Heel')
    tr = _walk(["V.Sacral", "L.Heel", "L.Toe.Tip", "R.Heel", "R.Toe.Tip"])
    ev = detect_gait_events(tr, method="kinematic", heel=("R.Heel",), toe=["R.Toe.Tip"])
    assert _times(ev) == reference
    # exact labels per side
    ev = detect_gait_events(
        tr, method="kinematic", heel={"Left": "L.Heel", "Right": "R.Heel"},
        toe={"Left": "L.Toe.Tip", "Right": "R.Toe.Tip"},
    )  # fmt: skip
    assert _times(ev) == reference


def test_psis_pair_in_place_of_the_sacrum(reference):
    tr = _walk(["L.PSIS", "L.Heel", "L.Toe", "R.Heel", "R.Toe"])
    tr.points = np.concatenate([tr.points, tr.points[:, :1]], axis=1)
    tr.point_labels.append("R.PSIS")
    assert _times(detect_gait_events(tr, method="kinematic")) == reference


def test_missing_marker_message_says_what_was_looked_for():
    tr = _walk(["V.Sacral", "L.Foot", "L.Toe.Tip", "R.Heel", "R.Toe.Tip"])
    with pytest.raises(DataError) as err:
        detect_gait_events(tr, method="kinematic")
    msg = str(err.value)
    assert "heel marker for the Left side" in msg
    assert "'HEE', 'Heel'" in msg and "'L.Heel'" in msg and "'Name:' prefix" in msg
    assert "Trial markers: V.Sacral, L.Foot" in msg and "heel={'Left': label" in msg
    assert "LR." not in msg
    # a marker present in too few frames is named with its visibility
    tr = _walk()
    tr.points[:200, 1] = np.nan
    with pytest.raises(DataError, match=r"found only LHEE \(38 % of frames\)"):
        detect_gait_events(tr, method="kinematic", heel=("HEE",))
    with pytest.raises(DataError, match=r"`heel`: label 'L\.Calx' \(Left\) is not in the trial"):
        detect_gait_events(_walk(), method="kinematic", heel={"Left": "L.Calx", "Right": "RHEE"})
    with pytest.raises(DataError, match="sacrum marker"):
        detect_gait_events(_walk(["XXX"] + PIG[1:]), method="kinematic")


def test_two_subjects_labels_are_ambiguous_unless_named(reference):
    tr = _walk(["SACR", "A:LHEE", "LTOE", "RHEE", "RTOE"])
    tr.points = np.concatenate([tr.points, tr.points[:, 1:2]], axis=1)
    tr.point_labels.append("B:LHEE")
    with pytest.raises(DataError, match=r"several labels fit \(A:LHEE, B:LHEE\)"):
        detect_gait_events(tr, method="kinematic")
    ev = detect_gait_events(tr, method="kinematic", heel={"Left": "B:LHEE", "Right": "RHEE"})
    assert _times(ev) == reference


def _plate(tr, t_on, t_off, foot_index, rate=1000.0):
    """A plate under one foot marker's mid-stance position, loaded from t_on to t_off."""
    ta = np.arange(0, 3.2, 1 / rate)
    on = (ta > t_on) & (ta < t_off)
    force = np.zeros((ta.size, 3))
    force[on, 2] = 700 * np.sin(np.pi * (ta[on] - t_on) / (t_off - t_on)) + 50
    cop = np.full((ta.size, 3), np.nan)
    cop[on] = tr.points[int(0.5 * (t_on + t_off) * tr.point_rate), foot_index] * [1, 1, 0]
    return SimpleNamespace(force=force, cop=cop, origin=np.zeros(3), rate=rate)


def test_y_up_lab_gives_the_events_of_the_z_up_lab():
    tr = _walk()
    tr.force_plates = [_plate(tr, 1.0, 1.6, 1), _plate(tr, 1.5, 2.1, 3)]
    z_up = detect_gait_events(tr)
    assert {e.description: e.context for e in z_up if "plate" in e.description} == {
        "force plate 0": "Left",
        "force plate 1": "Right",
    }
    # the same trial in an OpenSim-style lab: x forward, y up, z right  (x, y, z) -> (x, z, -y)
    Q = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])
    y_tr = SimpleNamespace(**vars(tr))
    y_tr.points = tr.points @ Q.T
    y_tr.force_plates = [
        SimpleNamespace(force=p.force @ Q.T, cop=p.cop @ Q.T, origin=p.origin, rate=p.rate)
        for p in tr.force_plates
    ]
    y_up = detect_gait_events(y_tr)
    np.testing.assert_allclose([e.time for e in y_up], [e.time for e in z_up], atol=1e-9)
    assert [(e.label, e.context, e.description) for e in y_up] == [
        (e.label, e.context, e.description) for e in z_up
    ]
    assert _times(detect_gait_events(y_tr, up=(0, 1, 0))) == _times(y_up)
    with pytest.raises(DataError, match="`up`"):
        detect_gait_events(y_tr, up="y")


@pytest.mark.skipif(not OPENSIM.is_dir(), reason="shared data folder not available")
def test_opensim_walking_trial_events_from_its_own_labels():
    """OpenSim's subject01_walk.trc (labels 'L.Heel', 'R.Toe.Tip', 'V.Sacral', Y up): the
    kinematic strikes fall within two frames of the strikes of its GRF file, whose forces
    the plate step assigns to the feet that subject01_walk_grf.xml names."""
    import warnings

    from ahbm.gait.markers import plates_from_grf
    from ahbm.io import read_trial

    trial = read_trial(OPENSIM / "subject01_walk.trc")
    kin = detect_gait_events(trial, method="kinematic")
    assert {e.description for e in kin} == {
        "zeni (L.Heel)", "zeni (R.Heel)", "zeni (L.Toe.Tip)", "zeni (R.Toe.Tip)",
    }  # fmt: skip
    strikes = {s: [e.time for e in kin if e.context == s and e.label == "Foot Strike"]
               for s in ("Left", "Right")}  # fmt: skip
    assert len(strikes["Left"]) == 2 and len(strikes["Right"]) == 2
    with_plates = replace(trial, force_plates=plates_from_grf(
        OPENSIM / "subject01_walk_grf.mot", time=trial.time))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fp = detect_gait_events(with_plates, method="force_plate")
    # "ground_force" (plate 0) acts on calcn_r, "1_ground_force" (plate 1) on calcn_l
    assert {e.description: e.context for e in fp} == {
        "force plate 0": "Right",
        "force plate 1": "Left",
    }
    two_frames = 2 / trial.point_rate
    for e in (e for e in fp if e.label == "Foot Strike"):
        assert min(abs(np.array(strikes[e.context]) - e.time)) < two_frames, e
    # stride times of a normal walk
    for side in ("Left", "Right"):
        assert 1.0 < np.diff(strikes[side])[0] < 1.4


def test_zeni_on_a_y_up_treadmill_makes_the_direction_horizontal():
    from ahbm.analysis import zeni_events

    fs = 100.0
    t = np.arange(0, 3.0, 1 / fs)
    sac = np.stack([-0.05 * t, 0 * t, 0.9 + 0 * t], 1)  # treadmill: the pelvis stays
    heel = np.stack([0.3 * np.cos(2 * np.pi * t), 0.1 + 0 * t, 0.05 * np.sin(2 * np.pi * t)], 1)
    toe = heel + [0.2, 0.0, -0.15]  # toe marker well below the heel marker
    ref = zeni_events(heel, toe, sac, rate=fs)
    Q = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])  # Z up -> Y up
    y_up = zeni_events(heel @ Q.T, toe @ Q.T, sac @ Q.T, rate=fs, up=(0, 1, 0))
    for a, b in zip(ref, y_up, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    # with the wrong vertical the heel-toe height difference tilts the direction
    tilted = zeni_events(heel @ Q.T, toe @ Q.T, sac @ Q.T, rate=fs)
    assert not all(a.shape == b.shape and np.allclose(a, b, atol=1e-6) for a, b in zip(ref, tilted))
