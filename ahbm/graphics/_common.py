"""Shared helpers of ahbm.graphics (internal).

matplotlib is imported inside the functions so that ``import ahbm`` stays
light and works without a display.
"""

from __future__ import annotations

import numpy as np

from ahbm._files import atomic_path

__all__ = [
    "SIDE_COLORS",
    "pyplot",
    "is_interactive_backend",
    "atomic_output",
    "set_equal_3d",
]

#: Colours of the body sides in every ahbm figure (clinical convention).
SIDE_COLORS = {"Left": "red", "Right": "green", "General": "0.35"}

# Backends that draw into files or into static notebook images only.
_STATIC_BACKENDS = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}


def pyplot():
    """Import and return ``matplotlib.pyplot`` (deferred import)."""
    import matplotlib.pyplot as plt

    return plt


def is_interactive_backend() -> bool:
    """True if the current matplotlib backend shows windows or live widgets.

    The Agg-like file backends and the static ``inline`` notebook backend are
    not interactive; Qt, Tk, GTK, wx, macOS, nbAgg, WebAgg and ipympl are.
    """
    import matplotlib

    name = str(matplotlib.get_backend()).lower()
    if name in _STATIC_BACKENDS or "inline" in name:
        return False
    if name.startswith("module://"):
        return "ipympl" in name or "widget" in name
    return True


def atomic_output(path, *, argname: str = "path"):
    """Yield a temporary path next to `path`; move it into place on success.

    The temporary file keeps the suffix of `path` (writers such as Pillow pick
    the format from it). On any exception the temporary file is removed and
    `path` is left untouched, so no half-written file ever appears. See
    :func:`ahbm._files.atomic_path`.
    """
    return atomic_path(path, argname=argname)


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
