"""Stance moments run through toe-off into swing without a gap.

Next to a plate contact the plate reads less than the contact threshold, so the
foot's load there is below it: the moments there are the swing leg's (no ground
reaction), not unknown. Frames that the events count as stance a fraction of a
frame after the plate has unloaded are a timing difference, not a foot on the floor.
A stance on the floor beside the plates stays unknown."""

import warnings

import numpy as np
import pytest

from ahbm.dynamics import PlateAssignment
from ahbm.gait import analyze_gait, synthetic_walking_trial
from ahbm.gait.events import FOOT_INDEX
from ahbm.gait.kinetics import unknown_load_frames
from ahbm.types import Event

RATE = 50.0
N = 100
TIME = np.arange(N) / RATE


def _assignment(contact_left):
    f_ext = np.zeros((N, 7, 6))
    left = FOOT_INDEX["Left"]
    f_ext[contact_left, left, 5] = 700.0
    contact = np.zeros((N, 7), bool)
    contact[:, left] = contact_left
    return PlateAssignment(f_ext, contact, np.zeros((N, 7), bool), np.full((N, 1), -1))


def test_an_event_a_fraction_of_a_frame_after_the_plate_unloads_leaves_no_gap():
    contact = (TIME >= 0.40) & (TIME < 1.00)  # the plate loaded up to frame 49 (0.98 s)
    # the events' foot off 0.01 s after the last loaded frame's end: frame 50 counts as stance
    events = [Event("Foot Strike", 0.40, "Left"), Event("Foot Off", 1.01, "Left")]
    bad = unknown_load_frames(events, _assignment(contact), TIME, RATE)["Left"]
    assert not bad.any(), np.flatnonzero(bad)


def test_a_stance_on_the_floor_beside_the_plates_stays_unknown():
    contact = (TIME >= 0.40) & (TIME < 1.00)
    events = [
        Event("Foot Strike", 0.40, "Left"), Event("Foot Off", 1.00, "Left"),
        Event("Foot Strike", 1.40, "Left"),  # lands on the floor: no plate loads
    ]  # fmt: skip
    bad = unknown_load_frames(events, _assignment(contact), TIME, RATE)["Left"]
    assert bad[TIME >= 1.40].all()
    assert not bad[(TIME >= 0.40) & (TIME < 1.30)].any()  # plate stance and swing known


@pytest.fixture(scope="module")
def walk():
    trial, truth = synthetic_walking_trial()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = analyze_gait(trial, mass=70.0)
    return result, truth


def test_stance_moments_run_through_toe_off_into_swing(walk):
    """Every toe-off of a foot on a plate (away from the trial's filter edges): finite
    moments from 5 frames before to 5 after, equal to the known moments (the swing
    leg's after the toe-off; 0.1 N·m/kg at the frame whose plate samples straddle
    the threshold, about 0.01 elsewhere)."""
    r, truth = walk
    checked = 0
    for side, p in (("Left", "L"), ("Right", "R")):
        for e in r.events:
            if e.context != side or e.label != "Foot Off":
                continue
            k = int(np.argmin(np.abs(r.time - e.time)))
            if k < 15 or k + 15 > r.time.size or not truth.on_plate[side][k - 6 : k - 1].all():
                continue
            window = slice(k - 5, k + 6)
            for joint in ("Hip", "Knee", "Ankle"):
                name = f"{p}{joint}Moment"
                m = r.moments[name][window, 0]
                assert np.isfinite(m).all(), (name, e.time, m)
                np.testing.assert_allclose(
                    m, truth.moments[name][window, 0], atol=0.1, err_msg=f"{name} {e.time:.2f} s"
                )
            checked += 1
    assert checked >= 1
