"""Body mass from the plates (ahbm.gait.body_mass) on synthetic walks built to exercise it.

The walker's vertical ground reaction is ``m (g + z̈)`` for a centre of mass
that rises and falls twice per cycle; the feet share it linearly in double
support. Each rule is checked: double support on two plates, single support
on one plate (with the events and the pelvis), a stance foot across two
plates, and partial contacts that must not give a mass.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ahbm.gait.body_mass import mass_from_plates, pelvis_point
from ahbm.gait.markersets import G

RATE, FRAME_RATE, T, STANCE = 1000.0, 100.0, 1.1, 0.66
M = 68.0


def _walk(m=M, t_end=3.0, dz=0.025):
    """Time (plates), right and left vertical forces, marker time, pelvis, events."""
    t = np.arange(int(t_end * RATE)) / RATE
    w = 4 * np.pi / T
    total = m * (G - dz * w**2 * np.cos(w * t))  # z = dz cos(w t): two bumps per cycle
    ds = STANCE - T / 2  # double support
    share = {}
    for side, offset in (("Right", 0.2), ("Left", 0.2 + T / 2)):
        s = np.zeros_like(t)
        for start in offset + T * np.arange(-1, 4):
            into = t - start
            rise = np.clip(into / ds, 0, 1)
            fall = np.clip((STANCE - into) / ds, 0, 1)
            s = np.maximum(s, np.where((into >= 0) & (into <= STANCE), np.minimum(rise, fall), 0))
        share[side] = s
    norm = share["Right"] + share["Left"]
    right = total * np.divide(share["Right"], norm, out=np.zeros_like(t), where=norm > 0)
    left = total - right
    tf = np.arange(int(t_end * FRAME_RATE)) / FRAME_RATE
    pelvis = np.zeros((tf.size, 3))
    pelvis[:, 2] = 0.95 + dz * np.cos(w * tf)
    events = []
    for side, offset in (("Right", 0.2), ("Left", 0.2 + T / 2)):
        for start in offset + T * np.arange(0, 3):
            if start + STANCE < t_end:
                events.append(SimpleNamespace(label="Foot Strike", time=start, context=side))
                events.append(SimpleNamespace(label="Foot Off", time=start + STANCE, context=side))
    return t, right, left, tf, pelvis, events


def _plate(fz):
    f = np.zeros((fz.size, 3))
    f[:, 2] = fz
    return SimpleNamespace(force=f, rate=RATE)


def _one_stance(fz, t, start):
    """Only the stance that begins at `start` (the foot on this plate once)."""
    keep = (t >= start - 1e-9) & (t <= start + STANCE + 1e-9)
    return np.where(keep, fz, 0.0)


def test_double_support_on_two_plates_gives_the_mass():
    t, right, left, *_ = _walk()
    plates = [_plate(_one_stance(right, t, 1.3)), _plate(_one_stance(left, t, 1.3 + T / 2))]
    assert mass_from_plates(plates) == pytest.approx(M, rel=1e-3)


def test_single_support_on_one_plate_needs_the_events_and_the_pelvis():
    t, right, left, tf, pelvis, events = _walk()
    plates = [_plate(_one_stance(right, t, 1.3))]
    assert mass_from_plates(plates) is None  # one contact: no double support
    got = mass_from_plates(plates, events=events, pelvis=pelvis, time=tf)
    assert got == pytest.approx(M, rel=5e-3)  # the pelvis velocity from 100 Hz markers


def test_a_stance_foot_across_two_plates_is_summed():
    t, right, left, tf, pelvis, events = _walk()
    stance = _one_stance(right, t, 1.3)
    plates = [_plate(0.7 * stance), _plate(0.3 * stance)]  # heel on one, forefoot on the next
    got = mass_from_plates(plates, events=events, pelvis=pelvis, time=tf)
    assert got == pytest.approx(M, rel=5e-3)


def test_partial_contacts_give_no_mass():
    """A foot half on a plate: the double-support estimate is refused (peak too high for it)."""
    t, right, left, tf, pelvis, events = _walk()
    partial = 0.15 * _one_stance(left, t, 1.3 + T / 2)  # a toe on the plate
    plates = [_plate(_one_stance(right, t, 1.3)), _plate(partial)]
    assert mass_from_plates(plates) is None
    # the single support of the whole stance still tells it
    got = mass_from_plates(plates, events=events, pelvis=pelvis, time=tf)
    assert got == pytest.approx(M, rel=5e-3)


def test_noise_and_short_touches_are_not_contacts():
    t, *_ = _walk()
    rng = np.random.default_rng(3)
    noise = np.abs(rng.normal(0, 8.0, t.size))
    touch = np.where((t > 1.0) & (t < 1.1), 300.0, 0.0)  # 0.1 s: not a stance
    assert mass_from_plates([_plate(noise), _plate(touch)]) is None


def test_pelvis_point_is_the_mean_of_the_pelvis_markers_found():
    a = np.array([[0.0, 0.0, 1.0], [np.nan, np.nan, np.nan]])
    b = np.array([[0.2, 0.0, 1.2], [np.nan, np.nan, np.nan]])
    got = pelvis_point({"LASI": a, "RASI": b, "LKNE": a * 9})
    np.testing.assert_allclose(got[0], [0.1, 0.0, 1.1])
    assert np.isnan(got[1]).all() and pelvis_point({"LKNE": a}) is None
