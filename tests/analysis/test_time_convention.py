"""The one time convention of the signal functions: ``f(x, *, rate=None, time=None)``.

Exactly one of `rate` (Hz) and `time` (s) is given, by keyword.
"""

import numpy as np
import pytest

from ahbm._internal.validation import sample_rate, sample_times
from ahbm.analysis import (
    butter_filtfilt,
    central_difference,
    critically_damped_filtfilt,
    force_plate_events,
    gcv_spline,
    marker_derivatives,
    residual_analysis,
    savgol_derivative,
    segment_motion,
    spatiotemporal_parameters,
    spline_derivative,
    zeni_events,
)
from ahbm.errors import DataError
from ahbm.kinematics.rotations import rot_z
from ahbm.types import Event

FS = 100.0
T = np.arange(200) / FS
X = np.sin(2 * np.pi * 1.5 * T) + 0.2 * np.cos(2 * np.pi * 7 * T)
FZ = np.r_[np.zeros(20), np.full(60, 600.0), np.zeros(20)]
SAC = np.stack([1.2 * T, 0 * T, 0.9 + 0 * T], 1)
HEEL = SAC + np.stack([0.3 * np.cos(2 * np.pi * T), 0 * T, -0.9 + 0 * T], 1)
R = rot_z(np.sin(T))[:, None]
COM = np.stack([T**2, 0 * T, 0 * T], -1)[:, None]

# (function, data args, extra keyword options, new keyword for the old positional argument)
CASES = [
    (butter_filtfilt, (X,), {"cutoff": 6.0}, "rate"),
    (critically_damped_filtfilt, (X,), {"cutoff": 6.0}, "rate"),
    (residual_analysis, (X,), {}, "rate"),
    (savgol_derivative, (X,), {"window": 7}, "rate"),
    (gcv_spline, (X,), {}, "time"),
    (central_difference, (X,), {}, "time"),
    (spline_derivative, (X,), {}, "time"),
    (marker_derivatives, (np.stack([X, X, X], -1)[:, None],), {}, "time"),
    (force_plate_events, (np.r_[FZ, np.zeros(100)],), {}, "rate"),
    (zeni_events, (HEEL, HEEL, SAC), {}, "rate"),
    (segment_motion, (R, COM), {}, "time"),
]


def _same(a, b):
    if isinstance(a, tuple):
        for u, v in zip(a, b, strict=True):
            _same(u, v)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:  # result objects: compare their array fields
        for name, value in vars(a).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_allclose(value, getattr(b, name), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("func,args,opts,old", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_rate_and_time_agree(func, args, opts, old):
    by_rate = func(*args, rate=FS, **opts)
    by_time = func(*args, time=T, **opts)
    _same(by_rate, by_time)


@pytest.mark.parametrize("func,args,opts,old", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_exactly_one_of_rate_and_time(func, args, opts, old):
    with pytest.raises(DataError, match="exactly one of `rate`.*`time`.*not both"):
        func(*args, rate=FS, time=T, **opts)
    with pytest.raises(DataError, match="exactly one of `rate`.*`time`.*neither"):
        func(*args, **opts)


def test_filters_need_uniform_time():
    t = T.copy()
    t[50:] += 0.004
    with pytest.raises(DataError, match="uniform"):
        butter_filtfilt(X, time=t, cutoff=6.0)
    # derivatives accept non-uniform time
    assert central_difference(X, time=t).shape == X.shape


def test_time_starts_events():
    f = np.r_[np.zeros(10), np.full(30, 600.0), np.zeros(10)]
    s, o = force_plate_events(f, time=2.0 + np.arange(50) / FS)
    s0, o0 = force_plate_events(f, rate=FS)
    np.testing.assert_allclose(np.r_[s, o], 2.0 + np.r_[s0, o0], atol=1e-12)


def test_sample_times_helper():
    np.testing.assert_array_equal(sample_times(4, rate=2.0), [0, 0.5, 1.0, 1.5])
    np.testing.assert_array_equal(sample_times(3, required=False), [0.0, 1.0, 2.0])
    with pytest.raises(DataError, match="Expected `time` to have 3 samples"):
        sample_times(3, time=[0, 1])
    with pytest.raises(DataError, match="strictly increasing"):
        sample_times(3, time=[0, 1, 1])
    with pytest.raises(DataError, match="finite"):
        sample_times(3, time=[0, np.nan, 1])
    with pytest.raises(DataError, match="positive"):
        sample_times(3, rate=0.0)
    assert sample_rate(5, time=3.0 + np.arange(5) / 250.0) == pytest.approx((250.0, 3.0))


def test_spatiotemporal_parameters_need_a_time_axis_with_heels():
    ev = [Event("Foot Strike", t, side) for t in (0.0, 1.0) for side in ("Left", "Right")]
    with pytest.raises(DataError, match="exactly one of"):
        spatiotemporal_parameters(ev, heel_left=HEEL, heel_right=HEEL)
