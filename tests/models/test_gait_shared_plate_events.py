"""Plate events come only from one foot's own contact: a load that passes from one foot
to the other without unloading the plate (the next heel down before the last toe is off,
as on a split-belt treadmill) gives no strike or off, so it cannot reject the file's
events or shift a cycle."""

import numpy as np

from ahbm.dynamics import PlateAssignment
from ahbm.gait.events import FOOT_INDEX, _merge_plate_events
from ahbm.io.trial import ForcePlate

N = 100
TIME = np.arange(N) / 100.0


def _plate(loaded):
    f = np.zeros((N, 3))
    f[loaded, 2] = 600.0
    return ForcePlate(f, np.zeros((N, 3)), np.zeros((N, 3)), np.zeros((N, 3)),
                      np.zeros((4, 3)), np.zeros(3), 100.0)  # fmt: skip


def _assignment(plate_of):
    return PlateAssignment(
        np.zeros((N, 7, 6)), np.zeros((N, 7), bool), np.zeros((N, 7), bool), plate_of[:, None]
    )


def test_one_foots_contact_gives_its_strike_and_off():
    loaded = np.zeros(N, bool)
    loaded[20:60] = True
    who = np.full(N, -1)
    who[20:60] = FOOT_INDEX["Left"]
    ev = _merge_plate_events([], [_plate(loaded)], _assignment(who), TIME, 20.0)
    assert [(e.label, e.context) for e in ev] == [("Foot Strike", "Left"), ("Foot Off", "Left")]
    np.testing.assert_allclose([e.time for e in ev], [0.2, 0.6], atol=0.01)


def test_a_load_passed_between_the_feet_gives_no_event():
    loaded = np.zeros(N, bool)
    loaded[20:80] = True
    who = np.full(N, -1)
    who[20:45] = FOOT_INDEX["Left"]  # left stance, both feet 45-50, then the right's
    who[50:80] = FOOT_INDEX["Right"]
    assert _merge_plate_events([], [_plate(loaded)], _assignment(who), TIME, 20.0) == []
    who[50:80] = FOOT_INDEX["Left"]  # one foot, a few ambiguous frames: still its contact
    ev = _merge_plate_events([], [_plate(loaded)], _assignment(who), TIME, 20.0)
    assert {e.context for e in ev} == {"Left"} and len(ev) == 2
    who[30:50] = -1  # mostly ambiguous (over 20 % of the contact): no event
    assert _merge_plate_events([], [_plate(loaded)], _assignment(who), TIME, 20.0) == []
