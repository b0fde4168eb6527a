import numpy as np
import pytest
from scipy import interpolate, signal

from ahbm.analysis import (
    butter_filtfilt,
    critically_damped_filtfilt,
    gcv_spline,
    moving_average,
    residual_analysis,
    winter_correction,
)
from ahbm.errors import AhbmWarning, DataError

FS = 200.0


def _gain(y, x):
    mid = slice(len(x) // 4, 3 * len(x) // 4)
    return np.ptp(y[mid]) / np.ptp(x[mid])


def test_winter_correction_value():
    # Winter (2009): 0.802 for two passes of a 2nd-order Butterworth
    assert winter_correction(n_passes=2, order=2) == pytest.approx(0.802, abs=5e-4)
    assert winter_correction(n_passes=1, order=4) == pytest.approx(1.0)


@pytest.mark.parametrize("order", [1, 2, 4])
@pytest.mark.parametrize("fc", [3.0, 10.0, 40.0])
def test_lowpass_minus3db_at_cutoff(order, fc):
    t = np.arange(0, 20, 1 / FS)
    x = np.sin(2 * np.pi * fc * t)
    y = butter_filtfilt(x, rate=FS, cutoff=fc, order=order)
    assert _gain(y, x) == pytest.approx(1 / np.sqrt(2), abs=2e-3)


def test_uncorrected_is_minus6db():
    t = np.arange(0, 20, 1 / FS)
    x = np.sin(2 * np.pi * 10 * t)
    y = butter_filtfilt(x, rate=FS, cutoff=10.0, correct=False)
    assert _gain(y, x) == pytest.approx(0.5, abs=2e-3)


def test_matches_scipy_design():
    # independent reference: scipy butter + filtfilt with the prewarped corrected cutoff
    rng = np.random.default_rng(1)
    x = rng.standard_normal((500, 3))
    fc, order = 8.0, 2
    c = (np.sqrt(2) - 1) ** (1 / (2 * order))
    wd = FS / np.pi * np.arctan(np.tan(np.pi * fc / FS) / c)
    b, a = signal.butter(order, wd, fs=FS)
    ref = signal.filtfilt(b, a, x, axis=0, padlen=3 * (max(len(a), len(b)) - 1))
    got = butter_filtfilt(x, rate=FS, cutoff=fc, order=order, padlen=3 * (max(len(a), len(b)) - 1))
    np.testing.assert_allclose(got, ref, atol=1e-10)


def test_zero_phase():
    t = np.arange(0, 10, 1 / FS)
    x = np.sin(2 * np.pi * 2 * t) + 0.3 * np.sin(2 * np.pi * 5 * t)
    y = butter_filtfilt(x, rate=FS, cutoff=20.0)
    xc = np.correlate(y - y.mean(), x - x.mean(), "full")
    assert np.argmax(xc) - (len(x) - 1) == 0
    np.testing.assert_allclose(y[200:-200], x[200:-200], atol=2e-3)


def test_highpass_and_band():
    t = np.arange(0, 20, 1 / FS)
    x = np.sin(2 * np.pi * 5 * t)
    assert _gain(butter_filtfilt(x, rate=FS, cutoff=5.0, btype="high"), x) == pytest.approx(
        0.7071, abs=3e-3
    )
    xs = np.sin(2 * np.pi * 1 * t) + np.sin(2 * np.pi * 10 * t) + np.sin(2 * np.pi * 60 * t)
    y = butter_filtfilt(xs, rate=FS, cutoff=(4.0, 25.0), btype="band")
    ref = np.sin(2 * np.pi * 10 * t)
    assert np.abs(y - ref)[400:-400].max() < 0.1


def test_vectorized_axis():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 400, 2))
    y = butter_filtfilt(x, rate=FS, cutoff=10.0, axis=1)
    for i in range(3):
        np.testing.assert_allclose(y[i], butter_filtfilt(x[i], rate=FS, cutoff=10.0), atol=1e-12)


def test_bad_input():
    with pytest.raises(DataError, match="Nyquist"):
        butter_filtfilt(np.zeros(100), rate=100.0, cutoff=60.0)
    x = np.ones(100)
    x[10] = np.nan
    with pytest.raises(DataError, match="index \\(10,\\)"):
        butter_filtfilt(x, rate=100.0, cutoff=6.0)
    with pytest.raises(DataError, match="rate"):
        butter_filtfilt(np.ones(100), rate=-1, cutoff=6.0)
    with pytest.raises(DataError, match="samples"):
        butter_filtfilt(np.ones(5), rate=100.0, cutoff=6.0)
    with pytest.raises(DataError, match="btype"):
        butter_filtfilt(np.ones(100), rate=100.0, cutoff=6.0, btype="notch")


def test_nan_segments():
    t = np.arange(0, 4, 1 / FS)
    x = np.sin(2 * np.pi * t)
    xn = x.copy()
    xn[300:310] = np.nan
    with pytest.warns(AhbmWarning, match="10 NaN"):
        y = butter_filtfilt(xn, rate=FS, cutoff=10.0, nan_policy="segments")
    assert np.isnan(y[300:310]).all()
    np.testing.assert_allclose(y[:300], butter_filtfilt(x[:300], rate=FS, cutoff=10.0), atol=1e-12)


def test_critically_damped():
    t = np.arange(0, 20, 1 / FS)
    for fc in (5.0, 20.0):
        x = np.sin(2 * np.pi * fc * t)
        y = critically_damped_filtfilt(x, rate=FS, cutoff=fc)
        assert _gain(y, x) == pytest.approx(1 / np.sqrt(2), abs=2e-3)
    # no overshoot on a step (the point of a critically damped filter)
    step = (t > 10).astype(float)
    y = critically_damped_filtfilt(step, rate=FS, cutoff=5.0, n_passes=4)
    assert y.max() <= 1 + 1e-9 and y.min() >= -1e-9
    yb = butter_filtfilt(step, rate=FS, cutoff=5.0)
    assert yb.max() > 1.01  # Butterworth rings
    with pytest.raises(DataError, match="even"):
        critically_damped_filtfilt(step, rate=FS, cutoff=5.0, n_passes=3)


def test_moving_average():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((50, 4))
    y = moving_average(x, 5)
    ref = signal.convolve(x[:, 0], np.ones(5) / 5, mode="same")
    np.testing.assert_allclose(y[2:-2, 0], ref[2:-2], atol=1e-12)
    np.testing.assert_allclose(y[0], x[:3].mean(axis=0))
    xn = x.copy()
    xn[10, 1] = np.nan
    y2 = moving_average(xn, 3)
    assert np.isnan(y2[10, 1])
    assert y2[11, 1] == pytest.approx(x[11:13, 1].mean())
    y3 = moving_average(xn, 3, keep_nan=False)
    assert y3[10, 1] == pytest.approx((x[9, 1] + x[11, 1]) / 2)
    with pytest.raises(DataError, match="odd"):
        moving_average(x, 4)


@pytest.mark.parametrize("sd", [0.002, 0.01, 0.05])
def test_residual_analysis_recovers_noise(sd):
    rng = np.random.default_rng(4)
    fs = 100.0
    t = np.arange(0, 10, 1 / fs)
    clean = np.sin(2 * np.pi * 1.0 * t) + 0.4 * np.sin(2 * np.pi * 3.0 * t)
    x = clean[:, None] + sd * rng.standard_normal((t.size, 3))
    res = residual_analysis(x, rate=fs)
    np.testing.assert_allclose(res.noise_rms, sd, rtol=0.08)
    assert res.residuals.shape == (res.cutoffs.size, 3)
    assert np.all((res.cutoff > 3.0) & (res.cutoff < 20.0))
    # residual curve decreases with cutoff
    assert np.all(np.diff(res.residuals[:, 0]) <= 1e-12)


def test_gcv_spline_function_and_derivatives():
    rng = np.random.default_rng(5)
    t = np.linspace(0, 2, 201)
    f = np.sin(2 * np.pi * t)
    x = f + 0.002 * rng.standard_normal(t.size)
    res = gcv_spline(np.stack([x, 2 * x], 1), time=t)
    inner = slice(20, -20)
    np.testing.assert_allclose(res.value[inner, 0], f[inner], atol=3e-3)
    np.testing.assert_allclose(
        res.first[inner, 0], 2 * np.pi * np.cos(2 * np.pi * t)[inner], atol=0.1
    )
    np.testing.assert_allclose(res.second[inner, 0], -(4 * np.pi**2) * f[inner], atol=4.0)
    np.testing.assert_allclose(res.value[:, 1], 2 * res.value[:, 0], atol=1e-8)
    # GCV smoothing lies between interpolation and a straight line
    assert np.std(res.value[:, 0] - x) < 0.003


def test_gcv_spline_fixed_lam_matches_scipy():
    rng = np.random.default_rng(6)
    t = np.sort(rng.uniform(0, 1, 80))
    x = np.cos(3 * t)[:, None] + 0.01 * rng.standard_normal((80, 3))
    for lam in (1e-7, 1e-4, 1e-1):
        res = gcv_spline(x, time=t, lam=lam)
        for j in range(3):
            ref = interpolate.make_smoothing_spline(t, x[:, j], lam=lam)
            np.testing.assert_allclose(res.value[:, j], ref(t), atol=1e-9)
            np.testing.assert_allclose(res.first[:, j], ref(t, 1), atol=1e-6)
            np.testing.assert_allclose(res.second[:, j], ref(t, 2), atol=1e-4)


def test_influence_trace_matches_dense_matrix():
    from ahbm.analysis import _smoothing

    rng = np.random.default_rng(7)
    n = 40
    t = np.sort(rng.uniform(0, 3, n))
    # dense influence matrix: column k = fit of the k-th unit vector
    for lam in (1e-5, 1e-2, 10.0):
        g, _ = _smoothing.fit(t, np.eye(n), lam)
        np.testing.assert_allclose(_smoothing.trace(t, [lam])[0], np.trace(g), rtol=1e-7)


def test_gcv_spline_minimizes_gcv_and_agrees_with_scipy():
    from ahbm.analysis import _smoothing

    rng = np.random.default_rng(8)
    t = np.sort(rng.uniform(0, 1, 80))
    x = np.cos(3 * t) + 0.01 * rng.standard_normal(80)
    res = gcv_spline(x, time=t)

    def score(lam):
        g, _ = _smoothing.fit(t, x[:, None], lam)
        return 80 * ((x - g[:, 0]) ** 2).sum() / (80 - _smoothing.trace(t, [lam])[0]) ** 2

    lam = float(res.lam)
    assert score(lam) <= score(lam * 1.5) and score(lam) <= score(lam / 1.5)
    assert 2 < float(res.dof) < 80
    # scipy's own GCV choice gives nearly the same curve
    np.testing.assert_allclose(res.value, interpolate.make_smoothing_spline(t, x)(t), atol=2e-3)


def test_gcv_spline_nan_and_errors():
    rng = np.random.default_rng(6)
    t = np.sort(rng.uniform(0, 1, 80))
    x = np.cos(3 * t) + 0.01 * rng.standard_normal(80)
    xn = np.stack([x, x], 1)
    xn[[0, 40], 0] = np.nan
    res = gcv_spline(xn, time=t)
    assert res.n_missing == 2
    assert np.isnan(res.value[0, 0])  # before the first valid sample: no extrapolation
    assert np.isfinite(res.value[40, 0]) and np.isfinite(res.value[:, 1]).all()
    with pytest.raises(DataError, match="time"):
        gcv_spline(x)
    with pytest.raises(DataError, match=">= 5"):
        gcv_spline(np.r_[x[:4], np.full(76, np.nan)], time=t)
