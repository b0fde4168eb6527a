"""Helpers shared by the analysis modules (internal)."""

from __future__ import annotations

import sys
import warnings

import numpy as np

from ahbm._internal.validation import as_int, as_positive_float
from ahbm.errors import AhbmWarning, DataError


def warn_caller(message: str) -> None:
    """Issue an AhbmWarning attributed to the first caller outside ahbm.analysis.

    The signal functions sit under a decorator (Trial handling), so a fixed
    ``stacklevel`` would point inside ahbm.
    """
    frame, level = sys._getframe(1), 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(
        "ahbm.analysis"
    ):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, AhbmWarning, stacklevel=level)


def check_rate(rate, name: str = "rate") -> float:
    """Return `rate` as a positive finite float (Hz) or raise DataError."""
    return as_positive_float(rate, name, unit="Hz")


def check_axis(arr: np.ndarray, axis: int, name: str) -> int:
    """Normalize `axis` for `arr`, raising DataError when out of range."""
    if arr.ndim == 0:
        raise DataError(f"Expected `{name}` to have at least one axis, got a scalar")
    axis = as_int(axis, "axis")
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
