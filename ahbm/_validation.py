"""Input validation shared by all ahbm modules (internal).

Validate at the boundary, trust inside: public functions call these helpers
once on their arguments and work on the cleaned float64 arrays afterwards.
Messages follow the pattern "Expected `q` to have shape (34,), got (33,)".
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError

__all__ = [
    "as_float_array",
    "as_vector_array",
    "as_positive_float",
    "check_trailing_shape",
    "check_finite",
    "sample_times",
    "sample_rate",
]


def as_float_array(x, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """Return `x` as a float64 ndarray, raising DataError if impossible.

    Parameters
    ----------
    x : array_like
        The value passed by the user.
    name : str
        Argument name used in error messages.
    allow_nan : bool, optional
        If False (default), NaN or inf anywhere raises DataError naming the
        first offending index.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DataError(
            f"Expected `{name}` to be a numeric array, got {type(x).__name__}: {err}"
        ) from err
    if not allow_nan:
        check_finite(arr, name)
    return arr


def as_positive_float(value, name: str, *, unit: str = "", error=DataError) -> float:
    """`value` as a positive finite float, or `error` naming `name` (and its unit)."""
    what = f"a positive number in {unit}" if unit else "a positive number"
    try:
        v = float(value)
    except (TypeError, ValueError) as err:
        raise error(f"Expected `{name}` to be {what}, got {value!r}") from err
    if not (np.isfinite(v) and v > 0):
        raise error(f"Expected `{name}` to be {what}, got {value!r}")
    return v


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise DataError if `arr` contains NaN or inf, naming the first index."""
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = tuple(int(i) for i in bad)
        raise DataError(
            f"`{name}` contains non-finite values (first at index {where}); "
            "remove or fill missing samples before calling this function"
        )


def check_trailing_shape(arr: np.ndarray, shape: tuple, name: str) -> np.ndarray:
    """Check that the trailing axes of `arr` equal `shape`.

    Leading axes are batch axes and are free. Returns `arr` unchanged.
    """
    n = len(shape)
    if arr.ndim < n or tuple(arr.shape[arr.ndim - n :]) != tuple(shape):
        want = "(..., " + ", ".join(str(s) for s in shape) + ")"
        raise DataError(f"Expected `{name}` to have shape {want}, got {arr.shape}")
    return arr


def as_vector_array(x, size: int, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """Cast to float64 and check the last axis has length `size`."""
    arr = as_float_array(x, name, allow_nan=allow_nan)
    return check_trailing_shape(arr, (size,), name)


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

    The one time convention of the signal functions (docs/api-rules.md):
    ``f(x, *, rate=None, time=None)``. Giving both is an error; giving neither is an error when
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
        return np.arange(n) / as_positive_float(rate, "rate", unit="Hz")
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
        return as_positive_float(rate, "rate", unit="Hz"), 0.0
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
