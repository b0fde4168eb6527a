"""OpenSim's coordinate processing (pad, IIR low-pass, quintic spline) vs closed forms, scipy.

The comparison with OpenSim itself (Storage.pad / lowpassIIR / GCVSplineSet) is in
tests/peers/test_opensim_tools.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from ahbm._engine.jit_filters import iir3_pass
from ahbm.errors import DataError
from ahbm.opensim import (
    natural_quintic_spline,
    opensim_coordinate_processing,
    opensim_lowpass_iir,
    opensim_pad,
)
from ahbm.opensim.processing import (
    _iir_coefficients,
    _iir_pass,
    _quintic_fit,
    _quintic_values,
    _resample_grid,
)


def test_pad_is_point_symmetric_about_the_ends():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((11, 2))
    p = opensim_pad(x, 5)
    assert p.shape == (21, 2)
    np.testing.assert_array_equal(p[5:16], x)
    # point symmetry: p[5 - k] + p[5 + k] = 2 x[0]; same at the other end
    for k in range(1, 6):
        np.testing.assert_allclose(p[5 - k] + p[5 + k], 2 * x[0], rtol=0, atol=1e-15)
        np.testing.assert_allclose(p[15 + k] + p[15 - k], 2 * x[-1], rtol=0, atol=1e-15)
    # a straight line stays a straight line (value and slope continue)
    t = np.arange(8.0)
    np.testing.assert_allclose(opensim_pad(3 * t + 1, 7), 3 * np.arange(-7.0, 15.0) + 1)
    assert opensim_pad(t, 0).tolist() == t.tolist()
    for bad in (-1, 8):
        with pytest.raises(DataError, match="n_pad"):
            opensim_pad(t, bad)


@pytest.mark.parametrize("fc, fs", [(6.0, 60.0), (10.0, 600.0), (1.0, 100.0)])
def test_iir_is_scipys_third_order_butterworth(fc, fs):
    b, a = _iir_coefficients(1 / fs, fc)
    bs, as_ = signal.butter(3, fc, fs=fs)
    # the closed form of the bilinear transform: scipy's coefficients to round-off
    np.testing.assert_allclose(b, bs, rtol=1e-14, atol=0)
    np.testing.assert_allclose(a, as_, rtol=1e-14, atol=1e-14)


def test_iir_passes_match_a_direct_recursion():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(40).cumsum()
    b, a = _iir_coefficients(1 / 60, 6.0)

    def one_pass(s):  # OpenSim's loop, written out
        y = s.copy()
        for i in range(3, len(s)):
            y[i] = (b[0] * s[i] + b[1] * s[i - 1] + b[2] * s[i - 2] + b[3] * s[i - 3]
                    - a[1] * y[i - 1] - a[2] * y[i - 2] - a[3] * y[i - 3])  # fmt: skip
        return y

    expected = one_pass(one_pass(x)[::-1])[::-1]
    got = opensim_lowpass_iir(x, dt=1 / 60, cutoff=6.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # columns are filtered independently, any trailing shape
    X = np.stack([x, 2 * x, -x], axis=1).reshape(40, 3, 1)
    np.testing.assert_allclose(opensim_lowpass_iir(X, dt=1 / 60, cutoff=6.0)[:, 1, 0], 2 * got)


def test_iir_gain_forward_backward():
    # steady state: |H(f)|^2 of the 3rd-order design, 1/2 at the cut-off
    fs, fc = 200.0, 10.0
    t = np.arange(4000) / fs
    for f, gain in (
        (fc, 0.5),
        (2.0, 1.0 / (1.0 + (np.tan(np.pi * 2 / fs) / np.tan(np.pi * fc / fs)) ** 6)),
    ):
        y = opensim_lowpass_iir(np.sin(2 * np.pi * f * t), dt=1 / fs, cutoff=fc)
        mid = slice(1000, 3000)
        amp = np.sqrt(2 * np.mean(y[mid] ** 2))
        assert amp == pytest.approx(gain, rel=2e-3)


def test_iir_cutoff_above_nyquist_is_lowered_and_bad_values_raise():
    x = np.sin(np.arange(50) / 3)
    np.testing.assert_array_equal(
        opensim_lowpass_iir(x, dt=0.01, cutoff=80.0), opensim_lowpass_iir(x, dt=0.01, cutoff=49.0)
    )
    with pytest.raises(DataError, match="cutoff"):
        opensim_lowpass_iir(x, dt=0.01, cutoff=0.0)
    with pytest.raises(DataError, match="dt"):
        opensim_lowpass_iir(x, dt=-1, cutoff=5.0)
    with pytest.raises(DataError, match="4 samples"):
        opensim_lowpass_iir(x[:3], dt=0.01, cutoff=5.0)


def test_natural_quintic_spline_interpolates_with_natural_ends():
    rng = np.random.default_rng(2)
    t = np.cumsum(rng.uniform(0.01, 0.03, 30))
    y = np.stack([np.sin(5 * t), t**2], axis=1)
    s = natural_quintic_spline(t, y)
    np.testing.assert_allclose(s(t), y, atol=1e-12)
    for end in (t[0], t[-1]):
        np.testing.assert_allclose(s(end, 3), 0.0, atol=1e-6 * np.abs(s(t, 3)).max())
        np.testing.assert_allclose(s(end, 4), 0.0, atol=1e-6 * np.abs(s(t, 4)).max())
    # a quadratic is reproduced with its derivatives (natural conditions hold for it)
    np.testing.assert_allclose(s(t, 1)[:, 1], 2 * t, atol=1e-9)
    np.testing.assert_allclose(s(t, 2)[:, 1], 2.0, atol=1e-7)
    with pytest.raises(DataError, match="6 samples"):
        natural_quintic_spline(t[:5], y[:5])
    with pytest.raises(DataError, match="increasing"):
        natural_quintic_spline(t[::-1], y)


def test_processing_without_filter_is_the_spline_at_the_samples():
    t = np.arange(30) / 50.0
    q = np.stack([0.3 + 2 * t - t**2, np.cos(t)], axis=1)
    out = opensim_coordinate_processing(t, q, cutoff=-1, time_range=(0.1, 0.4))
    np.testing.assert_allclose(out.time, t[5:21])
    np.testing.assert_allclose(out.q, q[5:21], atol=1e-12)
    np.testing.assert_allclose(out.qd[:, 0], 2 - 2 * t[5:21], atol=1e-9)
    np.testing.assert_allclose(out.qdd[:, 0], -2.0, atol=1e-6)
    assert not out.resampled and out.cutoff == -1


def test_processing_with_filter_uniform_and_rounded_times():
    fs = 60.0
    t = np.arange(151) / fs
    q = np.sin(2 * np.pi * 1.0 * t)[:, None]
    out = opensim_coordinate_processing(t, q, cutoff=6.0, time_range=(0, 2.5))
    assert not out.resampled
    np.testing.assert_allclose(out.time, t, atol=1e-12)
    # a 1 Hz sine passes a 6 Hz filter nearly unchanged (gain 1/(1+(1/6)^6) ~ 0.99998)
    np.testing.assert_allclose(out.q[:, 0], q[:, 0], atol=2e-3)
    np.testing.assert_allclose(
        out.qd[10:-10, 0], 2 * np.pi * np.cos(2 * np.pi * t[10:-10]), atol=0.02
    )
    # times written with 8 decimals are not uniform to round-off: OpenSim resamples
    # on t0 + k dt_min (accumulated) and reports those times
    tr = np.round(t, 8)
    out = opensim_coordinate_processing(tr, q, cutoff=6.0, time_range=(0, 2.5))
    assert out.resampled
    dtmin = np.min(np.diff(opensim_pad(tr, 75)))
    assert out.time[0] <= 0 < out.time[0] + dtmin
    np.testing.assert_allclose(np.diff(out.time), dtmin, rtol=1e-9)
    np.testing.assert_allclose(out.q[:, 0], np.sin(2 * np.pi * out.time), atol=2e-3)


def test_processing_bad_input():
    t = np.arange(10) / 10.0
    with pytest.raises(DataError, match="cutoff"):
        opensim_coordinate_processing(t, t, cutoff=0.0)
    with pytest.raises(DataError, match="overlap"):
        opensim_coordinate_processing(t, t, cutoff=-1, time_range=(5, 6))
    with pytest.raises(DataError, match="increasing"):
        opensim_coordinate_processing(t[::-1], t, cutoff=-1)
    with pytest.raises(DataError, match="6 samples"):
        opensim_coordinate_processing(t[:4], t[:4], cutoff=-1)
    with pytest.raises(DataError):
        opensim_coordinate_processing(t, np.where(t > 0.5, np.nan, t), cutoff=-1)


@pytest.mark.parametrize("seed", range(4))
def test_compiled_iir_pass_is_scipys(seed):
    """The compiled pass does scipy's lfilter operations in order: bit for bit with the
    scipy build measured (x86-64 wheels); within round-off wherever a compiler fuses
    multiply-adds differently."""
    rng = np.random.default_rng(seed)
    for n, m in ((4, 1), (5, 3), (301, 10), (2000, 7)):
        dt = rng.uniform(1e-4, 0.05)
        b, a = _iir_coefficients(dt, rng.uniform(0.5, 0.49 / dt))
        x = rng.standard_normal((n, m)).cumsum(axis=0) * 10.0 ** rng.integers(-3, 3)
        want = _iir_pass(b, a, x)
        np.testing.assert_allclose(
            iir3_pass(b, a, x), want, rtol=1e-12, atol=1e-12 * abs(want).max()
        )


def _grid_loop(start, stop, dt):
    """GCVSplineSet::constructStorage: for (x = min; x <= max; x += dt)."""
    grid, x = [start], start
    while True:
        x += dt
        if x > stop:
            return np.array(grid)
        grid.append(x)


@pytest.mark.parametrize("seed", range(4))
def test_resample_grid_is_opensims_loop_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for _ in range(500):
        start = float(rng.uniform(-5.0, 5.0))
        dt = float(10.0 ** rng.uniform(-4, -1))
        stop = start + float(rng.uniform(0.0, 3.0)) if rng.random() < 0.9 else start
        if rng.random() < 0.2:  # the stop exactly on a step of the sum
            stop = float(np.cumsum(np.r_[start, np.full(int(rng.integers(1, 50)), dt)])[-1])
        want = _grid_loop(start, stop, dt)
        got = _resample_grid(start, stop, dt)
        assert got.tobytes() == want.tobytes(), (start, stop, dt)


def test_compiled_iir_pass_of_fewer_than_three_samples_copies_them():
    b, a = _iir_coefficients(0.01, 6.0)
    for n in (0, 1, 2):
        x = np.arange(2.0 * n).reshape(n, 2)
        np.testing.assert_array_equal(iir3_pass(b, a, x), x)
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(iir3_pass(b, a, x), _iir_pass(b, a, x))


@pytest.mark.parametrize("n", [6, 7, 12, 61, 302])
def test_quintic_fit_is_natural_quintic_spline_bit_for_bit(n):
    """The spline of the processing (no scipy.interpolate at start-up) is scipy's, bitwise."""
    rng = np.random.default_rng(n)
    t = np.cumsum(rng.uniform(0.005, 0.02, n))
    y = rng.standard_normal((n, 3)).cumsum(axis=0)
    ref = natural_quintic_spline(t, y)
    knots, coef = _quintic_fit(t, y)
    assert knots.tobytes() == ref.t.tobytes()
    assert coef.tobytes() == np.ascontiguousarray(ref.c).tobytes()
    # at the samples, between them and outside (extrapolation by the end pieces)
    x = np.concatenate([t, rng.uniform(t[0] - 0.02, t[-1] + 0.02, 25)])
    for nu in (0, 1, 2):
        assert _quintic_values(knots, coef, x, nu).tobytes() == ref(x, nu).tobytes(), nu


def test_processing_imports_no_scipy_signal_or_interpolate():
    """The ID path's start-up: scipy.signal (0.6 s) and scipy.interpolate (0.3 s) stay out."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from ahbm.opensim.processing import opensim_coordinate_processing as p\n"
        "t = np.arange(40) / 60.0\n"
        "p(t + 1e-9 * (np.arange(40) % 3), np.sin(t)[:, None], cutoff=6.0)\n"
        "print(sorted(m for m in ('scipy.signal', 'scipy.interpolate', 'scipy.stats')\n"
        "             if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
