"""A foot standing partly off the force plates: the plate reads a fraction of the body
weight while the foot carries all of it (single support), so the whole stance's
kinetics are unknown, not only its frames without contact. Built on synthetic stances:
a foot whose heel touches a plate edge at its strike and then stands beside the plate,
a foot half on a plate, and a foot wholly on it (kept)."""

import numpy as np

from ahbm.dynamics import PlateAssignment
from ahbm.gait.events import FOOT_INDEX
from ahbm.gait.kinetics import MIN_SINGLE_SUPPORT_LOAD, partly_off_plates, unknown_load_frames
from ahbm.types import Event

RATE = 100.0
N = 160
TIME = np.arange(N) / RATE
WEIGHT = 700.0
# left stance 0.40-1.10 s, right stance to 0.52 s and from 1.00 s (double supports)
EVENTS = [
    Event("Foot Strike", 0.40, "Left"), Event("Foot Off", 0.52, "Right"),
    Event("Foot Strike", 1.00, "Right"), Event("Foot Off", 1.10, "Left"),
]  # fmt: skip


def _assignment(fz_left):
    f_ext = np.zeros((N, 7, 6))
    left = FOOT_INDEX["Left"]
    f_ext[:, left, 5] = fz_left
    contact = np.zeros((N, 7), bool)
    contact[:, left] = fz_left > 20.0
    return PlateAssignment(f_ext, contact, np.zeros((N, 7), bool), np.full((N, 1), -1))


def _stance():
    return (TIME >= 0.40) & (TIME < 1.10)


def test_a_heel_on_the_plate_edge_makes_the_whole_stance_unknown():
    fz = np.zeros(N)
    fz[(TIME >= 0.40) & (TIME < 0.50)] = 30.0  # the heel on the edge, then beside the plate
    bad = unknown_load_frames(EVENTS, _assignment(fz), TIME, RATE, weight=WEIGHT)["Left"]
    assert bad[_stance()].all()
    # without the weight only the frames without contact (and 30 ms around them) are unknown
    bad0 = unknown_load_frames(EVENTS, _assignment(fz), TIME, RATE)["Left"]
    assert not bad0[(TIME >= 0.40) & (TIME < 0.46)].all()


def test_a_foot_half_on_a_plate_is_unknown_a_whole_foot_is_kept():
    st = _stance()
    half = np.where(st, 0.3 * WEIGHT, 0.0)  # in contact throughout, but a third of the load
    bad = unknown_load_frames(EVENTS, _assignment(half), TIME, RATE, weight=WEIGHT)["Left"]
    assert bad[st].all()
    whole = np.where(st, 1.0 * WEIGHT, 0.0)
    bad = unknown_load_frames(EVENTS, _assignment(whole), TIME, RATE, weight=WEIGHT)["Left"]
    assert not bad[(TIME >= 0.45) & (TIME < 1.05)].any()


def test_partly_off_plates_needs_single_support_frames():
    st = _stance()
    other = np.ones(N, bool)  # the other foot never leaves the ground: no check possible
    assert not partly_off_plates(st, other, np.zeros(N), WEIGHT).any()
    other = ~st | (TIME < 0.52) | (TIME >= 1.00)
    assert not partly_off_plates(st, other, np.zeros(N), WEIGHT).any()  # on no plate at all
    other = ~st | (TIME < 0.52) | (TIME >= 1.00)
    fz = np.where(st, (MIN_SINGLE_SUPPORT_LOAD + 0.05) * WEIGHT, 0.0)
    assert not partly_off_plates(st, other, fz, WEIGHT).any()
    fz = np.where(st, (MIN_SINGLE_SUPPORT_LOAD - 0.05) * WEIGHT, 0.0)
    assert partly_off_plates(st, other, fz, WEIGHT)[st].all()
