"""Helpers shared by the analysis modules (internal)."""

from __future__ import annotations

import numpy as np

from ahbm._validation import as_positive_float
from ahbm.errors import DataError


def check_rate(rate, name: str = "rate") -> float:
    """Return `rate` as a positive finite float (Hz) or raise DataError."""
    return as_positive_float(rate, name, unit="Hz")


def _time_vector(time, n: int) -> np.ndarray:
    t = np.asarray(time, dtype=float).ravel() if time is not None else None
    if t is None or t.size != n:
        size = None if t is None else t.size
        raise DataError(
            f"Expected `time` to have {n} samples (the length of the signal along its time "
            f"axis), got {size}"
        )
    if not np.all(np.isfinite(t)):
        raise DataError("`time` contains NaN or inf; give finite sample times in s")
    dt = np.diff(t)
    if np.any(dt <= 0):
        i = int(np.argmax(dt <= 0))
        raise DataError(f"`time` must be strictly increasing; it is not at index {i}->{i + 1}")
    return t


def sample_times(n: int, *, rate=None, time=None, required: bool = True) -> np.ndarray:
    """Sample times (n,) in s from exactly one of `rate` (Hz) or `time` (s).

    The one time convention of the signal functions: ``f(x, *, rate=None,
    time=None)``. Giving both is an error; giving neither is an error when
    `required`, otherwise the times are the sample indices ``0, 1, ..., n-1``
    (the functions that document "sample indices" when no time axis is given).
    """
    if rate is not None and time is not None:
        raise DataError(
            "Give exactly one of `rate` (Hz, uniform sampling) or `time` (s, one time per "
            "sample), not both"
        )
    if time is not None:
        return _time_vector(time, n)
    if rate is not None:
        return np.arange(n) / check_rate(rate)
    if required:
        raise DataError(
            "Give exactly one of `rate` (Hz, uniform sampling) or `time` (s, one time per "
            "sample); neither was given"
        )
    return np.arange(n, dtype=float)


def sample_rate(n: int, *, rate=None, time=None, rtol: float = 1e-6) -> tuple[float, float]:
    """Uniform sample rate (Hz) and first sample time (s) from exactly one of `rate`/`time`.

    For the functions that need uniform sampling (filters, Savitzky-Golay,
    event detectors): a `time` vector must be uniform within `rtol` of its
    mean step; its rate is ``1 / step`` and its start ``time[0]``.
    """
    if time is None:
        sample_times(0, rate=rate, time=None)  # raises when rate is missing
        return check_rate(rate), 0.0
    t = sample_times(n, rate=rate, time=time)
    if n < 2:
        raise DataError("`time` needs at least 2 samples to define a sample rate")
    dt = np.diff(t)
    step = (t[-1] - t[0]) / (n - 1)
    if np.max(np.abs(dt - step)) > rtol * step:
        raise DataError(
            "This function needs uniform sampling but `time` is not uniform (steps from "
            f"{dt.min():.6g} to {dt.max():.6g} s); resample the signal or give `rate`"
        )
    return 1.0 / step, float(t[0])


def check_axis(arr: np.ndarray, axis: int, name: str) -> int:
    """Normalize `axis` for `arr`, raising DataError when out of range."""
    if arr.ndim == 0:
        raise DataError(f"Expected `{name}` to have at least one axis, got a scalar")
    if not -arr.ndim <= axis < arr.ndim:
        raise DataError(f"`axis`={axis} is out of range for `{name}` with shape {arr.shape}")
    return axis % arr.ndim


def nan_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Start (inclusive) and stop (exclusive) indices of the True runs of a 1-D mask."""
    m = np.asarray(mask, dtype=bool).astype(np.int8)
    if m.size == 0:
        return []
    d = np.diff(np.concatenate(([0], m, [0])))
    starts = np.flatnonzero(d == 1)
    stops = np.flatnonzero(d == -1)
    return [(int(a), int(b)) for a, b in zip(starts, stops, strict=True)]
