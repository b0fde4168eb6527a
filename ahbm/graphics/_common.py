"""Shared helpers of ahbm.graphics (internal): pyplot, colours, argument checks, 3-D axes.

matplotlib is imported inside the functions so that ``import ahbm`` stays
light and works without a display.
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError

__all__ = ["SIDE_COLORS", "pyplot", "set_equal_3d"]

#: Colours of the body sides in every ahbm figure (clinical convention).
SIDE_COLORS = {"Left": "red", "Right": "green", "General": "0.35"}


def pyplot():
    """Import and return ``matplotlib.pyplot`` (deferred import)."""
    import matplotlib.pyplot as plt

    return plt


def check_figure(fig, name: str = "fig", *, required: bool = False) -> None:
    """Raise DataError unless `fig` is a matplotlib Figure (or None when not `required`)."""
    if fig is None and not required:
        return
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise DataError(
            f"Expected `{name}` to be a matplotlib Figure{'' if required else ' or None'}, got "
            f"{type(fig).__name__}"
        )


def check_names(value, name: str, *, allow_str: bool = False):
    """None, or a list/tuple of str (one str too if `allow_str`), else DataError naming `name`."""
    if value is None:
        return None
    if isinstance(value, str) and allow_str:
        return value
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise DataError(f"Expected `{name}` to be a list of names, got {value!r:.80}")
    value = list(value)
    return value


def check_mapping(value, name: str):
    """None or a mapping, else DataError naming `name`."""
    from collections.abc import Mapping

    if value is not None and not isinstance(value, Mapping):
        raise DataError(f"Expected `{name}` to be a dict, got {type(value).__name__}")
    return value


def set_equal_3d(ax, lo, hi, *, margin: float = 0.05, bottom_axis: int | None = None) -> None:
    """Give a 3-D axes equal scaling on x, y and z around the box [lo, hi].

    The three axis ranges are set to the same length (the largest extent of
    the box, enlarged by `margin`), centred on the box, and the box aspect is
    set to a cube so that one metre has the same length on every axis. With
    `bottom_axis` (the vertical axis), that axis starts just below ``lo``
    instead of being centred, so the floor sits at the bottom of the view.
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    centre = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo)) * (1.0 + margin)
    if not np.isfinite(half) or half <= 0.0:
        half = 0.5
    if bottom_axis is not None:
        centre[bottom_axis] = lo[bottom_axis] - 0.5 * margin * half + half
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1.0, 1.0, 1.0))
