"""Checks of single Trial fields: labels, numeric arrays, rates, point kinds (internal).

Used by :func:`ahbm.io.trial.check_trial` and by the readers that build a
Trial from a file (point kinds of C3D model outputs, MATLAB and CSV tables).
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError

__all__ = ["POINT_KINDS", "point_kinds_from"]


def _label_list(values, field: str, n: int, *, required: bool) -> list[str]:
    """`values` as a list of `n` strings (or an empty list where allowed)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise DataError(
            f"Expected `trial.{field}` to be a list of str, got {type(values).__name__}"
        )
    items = list(values)
    if not items and (not required or n == 0):
        return items
    if len(items) != n:
        raise DataError(
            f"`trial.{field}` has {len(items)} labels for {n} "
            f"{'points' if field.startswith('point') else 'channels'}; give one per column"
        )
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise DataError(
                f"`trial.{field}[{i}]` is {type(item).__name__} ({item!r}); labels must be str"
            )
    return items


def _numeric(value, field: str, ndim: int, trailing: tuple = ()) -> np.ndarray:
    """A real float64 array of `ndim` axes whose last axes equal `trailing`."""
    from ahbm._internal.validation import as_float_array

    arr = as_float_array(value, f"trial.{field}", allow_nan=True)
    if arr.ndim != ndim or (trailing and arr.shape[ndim - len(trailing) :] != trailing):
        want = ["n"] * (ndim - len(trailing)) + [str(t) for t in trailing]
        raise DataError(
            f"Expected `trial.{field}` to have shape ({', '.join(want)}), got {arr.shape}"
        )
    if np.isinf(arr).any():
        raise DataError(f"`trial.{field}` contains inf; use NaN for missing samples")
    return arr


def _rate(value, field: str, n: int) -> float:
    """A finite rate, positive when there are samples."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise DataError(f"Expected `trial.{field}` to be a number in Hz, got {value!r}")
    try:
        rate = float(value)
    except (TypeError, ValueError) as err:
        raise DataError(f"Expected `trial.{field}` to be a number in Hz, got {value!r}") from err
    if not np.isfinite(rate) or rate < 0 or (n and rate == 0):
        raise DataError(
            f"`trial.{field}` must be positive (Hz) for {n} samples, got {value!r}; set the "
            "sample rate"
        )
    return rate


#: The kinds of points that are not marker positions (C3D model outputs).
POINT_KINDS = ("angle", "moment", "power", "force", "scalar")


def point_kinds_from(value, labels, *, where: str) -> dict[str, tuple[str, str]]:
    """Check a ``point_kinds`` mapping read from a file or given by a user.

    Parameters
    ----------
    value : dict or None
        ``{label: (kind, unit)}`` (pairs may be lists, as JSON and MATLAB
        return them); None or empty for none.
    labels : list of str
        The point labels the mapping must refer to.
    where : str
        What holds the mapping (a file, an argument), for messages.

    Returns
    -------
    dict of str to (str, str)

    Raises
    ------
    DataError
        If an entry is not a (kind, unit) pair of strings, its kind is not one
        of `POINT_KINDS`, or its label is not a point label.

    Examples
    --------
    >>> point_kinds_from({"LKneeAngles": ["angle", "rad"]}, ["LKneeAngles"], where="x")
    {'LKneeAngles': ('angle', 'rad')}
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(
            f"{where}: point_kinds must map point labels to (kind, unit), got "
            f"{type(value).__name__}"
        )
    known = set(labels)
    out = {}
    for label, pair in value.items():
        ok = (
            isinstance(pair, tuple | list)
            and len(pair) == 2
            and all(isinstance(x, str) for x in pair)
        )
        if not ok or pair[0] not in POINT_KINDS:
            raise DataError(
                f"{where}: point_kinds[{label!r}] = {pair!r}; expected (kind, unit) with kind "
                f"one of {list(POINT_KINDS)}"
            )
        if label not in known:
            raise DataError(
                f"{where}: point_kinds names {label!r}, which is not a point label; give kinds "
                "only for the points the trial holds"
            )
        out[str(label)] = (str(pair[0]), str(pair[1]))
    return out


def _float_or_nan(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")
