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
