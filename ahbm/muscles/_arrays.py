"""Per-muscle arrays: parameters of n muscles and the states of a batch of frames (internal).

Shared by the muscle models (:mod:`ahbm.muscles.hill_curves`, ``millard_curves``,
``metabolics``) so that their parameters and inputs are checked, broadcast and
refused with the same messages.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError

__all__: list[str] = []


def _muscle_array(x, name, n, *, allow_nan=False) -> np.ndarray:
    """`x` as a float array whose last axis broadcasts to n muscles."""
    arr = as_float_array(x, name, allow_nan=allow_nan)
    if arr.ndim and arr.shape[-1] not in (1, n):
        raise DataError(
            f"Expected the last axis of `{name}` to have {n} entries (one per muscle), got "
            f"shape {arr.shape}"
        )
    return arr


def _per_muscle_arrays(params, what: str) -> None:
    """Turn the fields of a frozen per-muscle parameter dataclass into read-only (n,) arrays.

    Every field but ``names`` is a number or a 1-D array of one value per
    muscle (NaN allowed: the class's ``_check`` decides); ``names``, when the
    class has it, is a sequence of str or None (``muscle_0``...). Sizes that differ are a
    DataError naming the fields.
    """
    arrays = {}
    for f in dataclasses.fields(params):
        if f.name == "names":
            continue
        arr = as_float_array(getattr(params, f.name), f.name, allow_nan=True)
        if arr.ndim > 1:
            raise DataError(
                f"Expected `{f.name}` to be a number or a 1-D array (one value per "
                f"muscle), got shape {arr.shape}"
            )
        arrays[f.name] = arr
    sizes = {a.size for a in arrays.values() if a.ndim == 1}
    has_names = "names" in {f.name for f in dataclasses.fields(params)}
    if has_names and params.names is not None:
        if isinstance(params.names, (str, bytes)) or not hasattr(params.names, "__iter__"):
            raise DataError(
                f"Expected `names` to be a sequence of str (one per muscle), got "
                f"{type(params.names).__name__}"
            )
        names = tuple(params.names)
        if not all(isinstance(s, str) for s in names):
            raise DataError("Expected `names` to be a sequence of str (one per muscle)")
        sizes.add(len(names))
    if len(sizes) > 1:
        listed = ", ".join(f"`{k}` {a.size}" for k, a in arrays.items() if a.ndim == 1)
        raise DataError(
            f"the {what} have different numbers of muscles ({listed}); give one value per "
            "muscle or a scalar"
        )
    n = sizes.pop() if sizes else 1
    for k, a in arrays.items():
        a = np.broadcast_to(a, (n,)).astype(float)  # a fresh, writable copy
        a.setflags(write=False)
        object.__setattr__(params, k, a)
    if has_names:
        names = params.names
        names = tuple(names) if names is not None else tuple(f"muscle_{i}" for i in range(n))
        object.__setattr__(params, "names", names)


def _state_arrays(n, activation, mt_length, mt_speed):
    """Checked activation, musculotendon length and speed of n muscles, and their batch shape.

    Each is ``(..., n)`` or ``(..., 1)``; activations in [0, 1], lengths > 0.
    """
    a = _muscle_array(activation, "activation", n)
    lmt = _muscle_array(mt_length, "mt_length", n)
    vmt = _muscle_array(mt_speed, "mt_speed", n)
    try:
        shape = np.broadcast_shapes(a.shape, lmt.shape, vmt.shape, (n,))
    except ValueError as err:
        raise DataError(
            f"the batch axes of `activation` {a.shape}, `mt_length` {lmt.shape} and "
            f"`mt_speed` {vmt.shape} do not broadcast; give the same frames to each"
        ) from err
    if np.any((a < 0) | (a > 1)):
        raise DataError("Expected `activation` in [0, 1]; clip it before calling")
    if np.any(lmt <= 0):
        raise DataError("Expected `mt_length` > 0 m (musculotendon lengths)")
    return a, lmt, vmt, shape
