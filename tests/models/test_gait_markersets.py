"""Marker sets of the gait pipeline: Helen Hayes legacy labels, subject prefixes, the
OpenSim gait2354 set and what a marker set needs."""

from dataclasses import replace

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import DataError
from ahbm.gait import GaitSettings, analyze_gait
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.gait.markersets import marker_set_requirements

DATA = SHARED
OPENSIM = DATA / "opensim"
KIN = GaitSettings(kinetics=False)

# warnings are asserted where they are the point (pytest.warns); elsewhere quiet
pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")


@pytest.fixture(scope="module")
def walk():
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    return trial, analyze_gait(trial, settings=KIN)


def _relabel(trial, mapping):
    return replace(trial, point_labels=[mapping.get(lab, lab) for lab in trial.point_labels])


def test_helen_hayes_legacy_labels(walk):
    trial, ref = walk
    legacy = _relabel(trial, {"SACR": "VSAC", "LTIB": "LSHA", "RTIB": "RSHA"})
    r = analyze_gait(legacy, settings=KIN)
    for key, a in ref.angles.items():
        np.testing.assert_array_equal(r.angles[key], a)


def test_subject_prefixed_labels(walk):
    trial, ref = walk
    prefixed = replace(trial, point_labels=[f"Pat01:{lab}" for lab in trial.point_labels])
    r = analyze_gait(prefixed, settings=KIN)
    np.testing.assert_array_equal(r.angles["LKneeAngles"], ref.angles["LKneeAngles"])
    # the prefix of the file's SUBJECTS:LABEL_PREFIXES works too
    pre = replace(
        trial,
        point_labels=[f"P_{lab}" for lab in trial.point_labels],
        subject={**trial.subject, "label_prefixes": ["P_"]},
    )
    r = analyze_gait(pre, settings=KIN)
    np.testing.assert_array_equal(r.angles["RHipAngles"], ref.angles["RHipAngles"])


def test_missing_markers_message_lists_what_the_set_needs(walk):
    trial, _ = walk
    with pytest.raises(DataError) as err:
        analyze_gait(_relabel(trial, {"LKNE": "XKNE"}), settings=KIN)
    msg = str(err.value)
    assert "LKNE" in msg and "THI, KNE, TIB, ANK, TOE" in msg and "marker_map" in msg


def test_marker_set_requirements_name_the_static_trial():
    text = marker_set_requirements("opensim")
    assert "L.ASIS" in text and "needs to rebuild" in text and "static trial" in text
    assert "LASI, RASI, SACR" in marker_set_requirements("plug_in_gait")


@pytest.mark.skipif(not OPENSIM.is_dir(), reason="shared data folder not available")
def test_opensim_marker_set_without_static_says_it_needs_a_static_trial():
    with pytest.raises(DataError) as err:
        analyze_gait(
            OPENSIM / "subject01_walk.trc",
            mass=72.6,
            settings=GaitSettings(marker_set="opensim", kinetics=False),
        )
    msg = str(err.value)
    # the message leads with the static trial, not with a missing LKNE
    assert msg.startswith(
        f"{OPENSIM / 'subject01_walk.trc'}: marker set 'opensim' needs a static trial "
        "(`static=`, CLI --static): this trial has no 'L.Ankle.Lat', 'L.Knee.Lat', "
        "'R.Ankle.Lat', 'R.Knee.Lat', so LANK, LKNE, RANK, RKNE are rebuilt from their "
        "marker clusters (LANK: L.Shank.Upper, L.Shank.Front, L.Shank.Rear;"
    ), msg
    assert "required markers missing" not in msg


@pytest.mark.skipif(not OPENSIM.is_dir(), reason="shared data folder not available")
def test_the_opensim_labels_are_recognised_with_the_default_marker_set():
    from ahbm.gait.markersets import detect_marker_set
    from ahbm.io import read_trial

    walk = read_trial(OPENSIM / "subject01_walk.trc")
    assert detect_marker_set(walk.point_labels) == "opensim"
    assert detect_marker_set(read_trial(OPENSIM / "subject01_static.trc").point_labels) == (
        "opensim"
    )
    assert detect_marker_set([f"Pat:{lab}" for lab in walk.point_labels]) == "opensim"
    with pytest.raises(DataError) as err:
        analyze_gait(walk, mass=72.6, settings=KIN)
    assert str(err.value).startswith(
        f"{walk.source}: the trial's labels are those of the marker set 'opensim' (OpenSim's "
        "gait2354 walking example, subject01_walk.trc), not Plug-in Gait's: pass "
        "marker_set='opensim' (CLI --marker-set opensim) with its static trial (`static=`, CLI "
        "--static). With the Plug-in Gait set, required markers missing: SACR"
    ), str(err.value)


def test_detect_marker_set_on_plug_in_gait_and_unknown_labels(walk):
    from ahbm.gait.markersets import detect_marker_set

    trial, _ = walk
    assert detect_marker_set(trial.point_labels) == "plug_in_gait"
    assert detect_marker_set(["A", "B", "LASI"]) is None
    # one of 13 Plug-in Gait markers missing is still recognised, four are not
    assert detect_marker_set([n for n in trial.point_labels if n != "LTIB"]) == "plug_in_gait"
    drop = {"LTIB", "RTIB", "LKNE", "RKNE"}
    assert detect_marker_set([n for n in trial.point_labels if n not in drop]) is None


@pytest.mark.skipif(not OPENSIM.is_dir(), reason="shared data folder not available")
def test_a_static_trial_without_a_landmark_names_what_the_rebuild_lacks():
    from ahbm.io import read_trial

    static = read_trial(OPENSIM / "subject01_static.trc")
    labels = ["X" if lab == "L.Knee.Lat" else lab for lab in static.point_labels]
    labels = ["Y" if lab == "R.Shank.Rear" else lab for lab in labels]
    with pytest.raises(DataError) as err:
        analyze_gait(
            OPENSIM / "subject01_walk.trc",
            static=replace(static, point_labels=labels),
            settings=GaitSettings(marker_set="opensim", kinetics=False),
        )
    msg = str(err.value)
    assert (
        "LKNE (looked for 'L.Knee.Lat'; rebuilt from its cluster, which lacks 'L.Knee.Lat' in "
        "the static trial)"
    ) in msg
    assert "RANK (looked for 'R.Ankle.Lat'; rebuilt from its cluster, which lacks " in msg
    assert "R.Shank.Rear in the static trial)" in msg
