"""Property-based checks (hypothesis) of identities the analysis functions must keep."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ahbm.analysis import (
    butter_filtfilt,
    central_difference,
    fill_gaps,
    moving_average,
    time_normalize,
)

SETTINGS = settings(max_examples=25, deadline=None)


@SETTINGS
@given(
    c=st.floats(-1e3, 1e3),
    fc=st.floats(0.5, 45.0),
    order=st.integers(1, 4),
    n=st.integers(60, 300),
)
def test_lowpass_keeps_constants(c, fc, order, n):
    y = butter_filtfilt(np.full(n, c), rate=100.0, cutoff=fc, order=order)
    np.testing.assert_allclose(y, c, atol=1e-9 * max(1.0, abs(c)))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 40))
def test_central_difference_exact_for_quadratics(seed, n):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.2, 2.0, n))
    a, b, c = rng.uniform(-2, 2, 3)
    x = a * t**2 + b * t + c
    scale = 1 + abs(a) * t.max() ** 2
    np.testing.assert_allclose(central_difference(x, time=t), 2 * a * t + b, atol=1e-9 * scale)
    np.testing.assert_allclose(central_difference(x, time=t, order=2), 2 * a, atol=1e-7 * scale)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n_cycles=st.integers(1, 5), n_points=st.integers(2, 120))
def test_time_normalize_exact_for_linear_signals(seed, n_cycles, n_points):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.005, 0.02, 400))
    slope, icpt = rng.uniform(-3, 3, 2)
    ev = np.sort(rng.uniform(t[0], t[-1], n_cycles + 1))
    if np.any(np.diff(ev) <= 0):
        return
    cyc = time_normalize(slope * t + icpt, ev, n_points=n_points, time=t)
    q = ev[:-1, None] + np.linspace(0, 1, n_points) * np.diff(ev)[:, None]
    np.testing.assert_allclose(cyc, slope * q + icpt, atol=1e-9)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(["linear", "spline"]))
def test_interior_gaps_of_lines_are_filled_exactly(seed, method):
    rng = np.random.default_rng(seed)
    n = 80
    x = np.outer(np.arange(n, dtype=float), rng.uniform(-1, 1, 3)) + rng.uniform(-1, 1, 3)
    holed = x.copy()
    for _ in range(3):
        a = int(rng.integers(1, n - 6))
        holed[a : a + int(rng.integers(1, 5)), int(rng.integers(0, 3))] = np.nan
    filled, rep = fill_gaps(holed, max_gap=20, method=method)  # gaps may merge
    np.testing.assert_allclose(filled, x, atol=1e-9)
    assert all(r.filled for r in rep)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), w=st.sampled_from([1, 3, 5, 9]))
def test_moving_average_preserves_mean_of_constant_with_nans(seed, w):
    rng = np.random.default_rng(seed)
    x = np.full(50, 2.5)
    x[rng.integers(0, 50, 10)] = np.nan
    y = moving_average(x, w, keep_nan=False)
    assert np.all((np.isnan(y)) | (np.abs(y - 2.5) < 1e-12))
