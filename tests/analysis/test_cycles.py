from types import SimpleNamespace

import numpy as np
import pytest

from ahbm.analysis import ensemble_stats, spatiotemporal_parameters, time_normalize
from ahbm.errors import AhbmWarning, DataError


def test_time_normalize_linear_signal_exact():
    fs = 100.0
    t = np.arange(0, 3, 1 / fs)
    x = np.stack([2 * t, -t], 1)
    ev = [0.213, 1.1, 2.05]
    cyc = time_normalize(x, ev, rate=fs)
    assert cyc.shape == (2, 101, 2)
    p = np.linspace(0, 1, 101)
    expect0 = 2 * (ev[0] + p * (ev[1] - ev[0]))
    np.testing.assert_allclose(cyc[0, :, 0], expect0, atol=1e-12)
    np.testing.assert_allclose(cyc[1, :, 1], -(ev[1] + p * (ev[2] - ev[1])), atol=1e-12)


def test_time_normalize_periodic_signal_cycles_identical():
    fs = 200.0
    t = np.arange(0, 4, 1 / fs)
    period = 1.1
    x = np.sin(2 * np.pi * t / period)[:, None, None] * np.ones((1, 3, 2))
    ev = 0.05 + period * np.arange(3)
    cyc = time_normalize(x, ev, n_points=51, time=t)
    assert cyc.shape == (2, 51, 3, 2)
    np.testing.assert_allclose(cyc[0], cyc[1], atol=2e-3)
    np.testing.assert_allclose(
        cyc[0, :, 0, 0], np.sin(2 * np.pi * (0.05 / period + np.linspace(0, 1, 51))), atol=2e-3
    )


def test_time_normalize_indices_and_axis():
    x = np.arange(20.0)[None, :] * np.ones((2, 1))
    cyc = time_normalize(x, [2, 12], n_points=11, axis=1)
    np.testing.assert_allclose(cyc[0, :, 0], np.arange(2, 13))


def test_time_normalize_nan_and_errors():
    x = np.arange(30.0)
    x[5] = np.nan
    with pytest.warns(AhbmWarning, match="1 of 2 cycles"):
        cyc = time_normalize(x, [0, 10, 20], n_points=11)
    assert np.isnan(cyc[0, 5]) and np.isfinite(cyc[0, 4]) and np.isfinite(cyc[1]).all()
    with pytest.raises(DataError, match="no extrapolation"):
        time_normalize(x, [0, 40])
    with pytest.raises(DataError, match="increasing"):
        time_normalize(x, [10, 5])
    with pytest.raises(DataError, match="at least 2"):
        time_normalize(x, [5])


def test_ensemble_stats_against_numpy():
    rng = np.random.default_rng(0)
    c = rng.standard_normal((8, 101, 3))
    s = ensemble_stats(c)
    np.testing.assert_allclose(s.mean, c.mean(0))
    np.testing.assert_allclose(s.sd, c.std(0, ddof=1))
    c[2, 10, 1] = np.nan
    s = ensemble_stats(c)
    assert s.n[10, 1] == 7
    np.testing.assert_allclose(s.mean[10, 1], np.nanmean(c[:, 10, 1]))
    np.testing.assert_allclose(s.sd[10, 1], np.nanstd(c[:, 10, 1], ddof=1))


def _synthetic_gait(speed=1.3, stride=1.1, stance=0.6, fs=100.0):
    """Events and heel trajectories of an idealized symmetric walk."""
    t = np.arange(0, 4, 1 / fs)
    ev = []
    for side, shift in (("Left", 0.0), ("Right", stride / 2)):
        for k in range(4):
            s = 0.1 + shift + k * stride
            ev.append(SimpleNamespace(label="Foot Strike", time=s, context=side))
            ev.append(SimpleNamespace(label="Foot Off", time=s + stance * stride, context=side))
    step_len = speed * stride / 2

    def heel(shift):
        # heel still through stance, jumps forward in mid-swing (80 % of the stride)
        k = np.floor((t - 0.1 - shift + 0.2 * stride) / stride)
        pos = k * speed * stride + shift * speed
        return np.stack([pos, np.zeros_like(t), np.zeros_like(t)], 1)

    return ev, heel(0.0), heel(stride / 2), t, step_len


def test_spatiotemporal_parameters_synthetic():
    ev, hl, hr, t, step_len = _synthetic_gait()
    res = spatiotemporal_parameters(ev, heel_left=hl, heel_right=hr, time=t)
    for side in ("Left", "Right"):
        r = res[side]
        assert r["stride_time"] == pytest.approx(1.1)
        assert r["step_time"] == pytest.approx(0.55)
        assert r["stance_pct"] == pytest.approx(60.0)
        assert r["swing_pct"] == pytest.approx(40.0)
        # two double-support phases of (stance - 50 %) each
        assert r["double_support_pct"] == pytest.approx(20.0)
        assert r["stride_length"] == pytest.approx(1.3 * 1.1, rel=1e-6)
        assert r["step_length"] == pytest.approx(step_len, rel=1e-6)
    assert res["cadence"] == pytest.approx(120 / 1.1)
    assert res["walking_speed"] == pytest.approx(1.3, rel=1e-6)


def test_spatiotemporal_bad_events():
    with pytest.raises(DataError, match="label"):
        spatiotemporal_parameters([object()])


def test_analysis_results_are_frozen_with_a_shapes_repr():
    import dataclasses

    from ahbm.analysis import gcv_spline, residual_analysis

    t = np.arange(300) / 100.0
    x = np.stack([np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)], 1)
    results = [
        ensemble_stats(time_normalize(x, [0.0, 1.0, 2.0], rate=100.0)),
        residual_analysis(x, rate=100.0),
        gcv_spline(x, rate=100.0),
    ]
    for r in results:
        assert dataclasses.is_dataclass(r)
        field = dataclasses.fields(r)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(r, field, None)
        text = repr(r)
        assert text.startswith(type(r).__name__ + "(") and "array(" in text
        assert "0.0" not in text.split("array(")[1][:20]  # shapes, not data
    assert "mean=array(101, 2) float64" in repr(results[0])
