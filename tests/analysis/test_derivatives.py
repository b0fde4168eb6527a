import numpy as np
import pytest

from ahbm.analysis import (
    central_difference,
    marker_derivatives,
    savgol_derivative,
    spline_derivative,
)
from ahbm.errors import DataError


def _grid(n, uniform):
    u = np.linspace(0.0, 1.0, n)
    return u if uniform else u + 0.05 * np.sin(2 * np.pi * u)


@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("order", [1, 2])
def test_central_difference_second_order_accuracy(uniform, order):
    errs = []
    for n in (41, 81, 161):
        t = _grid(n, uniform)
        x = np.sin(3 * t)
        exact = 3 * np.cos(3 * t) if order == 1 else -9 * np.sin(3 * t)
        errs.append(np.abs(central_difference(x, time=t, order=order) - exact).max())
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(rates > 1.8), rates


def test_central_difference_matches_numpy_gradient():
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.5, 1.5, 30))
    x = rng.standard_normal((30, 4, 3))
    np.testing.assert_allclose(
        central_difference(x, time=t), np.gradient(x, t, axis=0, edge_order=2), atol=1e-10
    )
    np.testing.assert_allclose(
        central_difference(x, rate=10.0), np.gradient(x, 0.1, axis=0, edge_order=2), atol=1e-10
    )


def test_central_difference_exact_on_quadratic():
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.uniform(0.5, 1.5, 12))
    x = 2 * t**2 - t + 1
    np.testing.assert_allclose(central_difference(x, time=t), 4 * t - 1, atol=1e-9)
    np.testing.assert_allclose(central_difference(x, time=t, order=2), 4.0, atol=1e-8)


def test_central_difference_nan_stays_local():
    x = np.arange(20.0)
    x[10] = np.nan
    d = central_difference(x, rate=1.0)
    assert np.isnan(d[[9, 11]]).all() and np.isnan(d[10])
    np.testing.assert_allclose(d[:9], 1.0)
    np.testing.assert_allclose(d[12:], 1.0)


def test_spline_derivative_accuracy():
    t = np.linspace(0, 1, 41)
    x = np.stack([np.exp(t), np.sin(2 * t)], 1)
    d1 = spline_derivative(x, time=t, order=1)
    d2 = spline_derivative(x, time=t, order=2)
    np.testing.assert_allclose(d1[:, 0], np.exp(t), atol=1e-7)
    np.testing.assert_allclose(d2[:, 1], -4 * np.sin(2 * t), atol=1e-4)
    with pytest.raises(DataError, match="order"):
        spline_derivative(x, time=t, order=5)


def test_savgol_exact_for_polynomials():
    fs = 50.0
    t = np.arange(60) / fs
    x = 1 + 2 * t - 3 * t**2 + 0.5 * t**3
    np.testing.assert_allclose(
        savgol_derivative(x, rate=fs, window=9, polyorder=3), 2 - 6 * t + 1.5 * t**2, atol=1e-9
    )
    np.testing.assert_allclose(
        savgol_derivative(x, rate=fs, window=9, polyorder=3, order=2), -6 + 3 * t, atol=1e-7
    )
    with pytest.raises(DataError, match="odd"):
        savgol_derivative(x, rate=fs, window=8)


@pytest.mark.parametrize(
    "method,opts", [("central", {}), ("spline", {}), ("savgol", {"window": 7, "polyorder": 4})]
)
def test_marker_derivatives_all_markers(method, opts):
    fs = 100.0
    t = np.arange(200) / fs
    rng = np.random.default_rng(2)
    amp = rng.uniform(0.1, 1, (5, 3))
    p = amp * np.sin(2 * np.pi * t[:, None, None])
    v, a = marker_derivatives(p, rate=fs, method=method, **opts)
    w = 2 * np.pi
    np.testing.assert_allclose(v[5:-5], amp * w * np.cos(w * t[5:-5, None, None]), atol=5e-3)
    np.testing.assert_allclose(a[5:-5], -amp * w**2 * np.sin(w * t[5:-5, None, None]), atol=5e-2)
    assert v.shape == p.shape


def test_marker_derivatives_bad_input():
    with pytest.raises(DataError, match="shape"):
        marker_derivatives(np.zeros((10, 2)), rate=100.0)
    with pytest.raises(DataError, match="method"):
        marker_derivatives(np.zeros((10, 2, 3)), rate=100.0, method="magic")
    with pytest.raises(DataError, match="increasing"):
        central_difference(np.zeros(5), time=[0, 1, 1, 2, 3])
