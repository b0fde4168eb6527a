"""Timing of ahbm.analysis against the scipy/numpy building blocks it is checked against.

Run: python benchmarks/bench_analysis.py
Prints, for each task, the best-of-5 wall time of ahbm and of the peer measured
in the same run, and their ratio (ahbm / peer; < 1 means ahbm is faster).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import interpolate, signal

from ahbm.analysis import (
    butter_filtfilt,
    central_difference,
    fill_gaps,
    gcv_spline,
    moving_average,
    time_normalize,
)


def best(f, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def report(name, t_ahbm, t_peer, peer):
    print(
        f"{name:<46s} ahbm {t_ahbm * 1e3:9.2f} ms   {peer:<28s} {t_peer * 1e3:9.2f} ms"
        f"   ratio {t_ahbm / t_peer:6.2f}"
    )


def main():
    rng = np.random.default_rng(0)
    fs = 100.0
    n_frames, n_markers = 2000, 60
    pts = rng.standard_normal((n_frames, n_markers, 3)).cumsum(axis=0) * 1e-3

    # zero-lag Butterworth on a whole marker array vs scipy filtfilt (same design)
    order, fc = 2, 6.0
    c = (np.sqrt(2) - 1) ** (1 / (2 * order))
    wd = fs / np.pi * np.arctan(np.tan(np.pi * fc / fs) / c)
    b, a = signal.butter(order, wd, fs=fs)
    report(
        "butter_filtfilt (2000x60x3)",
        best(lambda: butter_filtfilt(pts, rate=fs, cutoff=fc, order=order)),
        best(lambda: signal.filtfilt(b, a, pts, axis=0)),
        "scipy.signal.filtfilt",
    )

    # first derivative of all markers vs numpy.gradient
    report(
        "central_difference (2000x60x3)",
        best(lambda: central_difference(pts, rate=fs)),
        best(lambda: np.gradient(pts, 1 / fs, axis=0, edge_order=2)),
        "numpy.gradient",
    )

    # moving average vs scipy uniform-filter convolution (no NaN handling in the peer)
    from scipy.ndimage import uniform_filter1d

    report(
        "moving_average w=11 (2000x60x3, NaN-aware)",
        best(lambda: moving_average(pts, 11)),
        best(lambda: uniform_filter1d(pts, 11, axis=0, mode="nearest")),
        "scipy uniform_filter1d",
    )

    # GCV spline, 20 channels of 500 samples vs scipy make_smoothing_spline loop
    t = np.arange(500) / fs
    y = np.sin(2 * np.pi * t)[:, None] + 0.01 * rng.standard_normal((500, 20))

    def peer_gcv():
        for j in range(20):
            s = interpolate.make_smoothing_spline(t, y[:, j])
            s(t), s(t, 1), s(t, 2)

    report(
        "gcv_spline (500 x 20)",
        best(lambda: gcv_spline(y, time=t), 3),
        best(peer_gcv, 3),
        "make_smoothing_spline loop",
    )

    # time normalization of 10 cycles of a marker array vs a np.interp loop
    ev = np.linspace(0.5, 18.5, 11)
    tt = np.arange(n_frames) / fs
    flat = pts.reshape(n_frames, -1)

    def peer_norm():
        out = np.empty((10, 101, flat.shape[1]))
        for k in range(10):
            q = np.linspace(ev[k], ev[k + 1], 101)
            for j in range(flat.shape[1]):
                out[k, :, j] = np.interp(q, tt, flat[:, j])
        return out

    report(
        "time_normalize 10 cycles (60x3 channels)",
        best(lambda: time_normalize(pts, ev, rate=fs)),
        best(peer_norm),
        "np.interp loop",
    )

    # spline gap filling of 60 markers with 3 gaps each vs a CubicSpline loop
    holed = pts.copy()
    for j in range(n_markers):
        for s0 in (300, 900, 1500):
            holed[s0 + j % 7 : s0 + j % 7 + 8, j] = np.nan

    def peer_fill():
        out = holed.copy()
        for j in range(n_markers):
            ok = np.isfinite(holed[:, j, 0])
            cs = interpolate.CubicSpline(tt[ok], holed[ok, j], axis=0, bc_type="natural")
            out[~ok, j] = cs(tt[~ok])
        return out

    report(
        "fill_gaps spline (60 markers x 3 gaps)",
        best(lambda: fill_gaps(holed, max_gap=10, time=tt)),
        best(peer_fill),
        "CubicSpline loop",
    )


if __name__ == "__main__":
    main()
