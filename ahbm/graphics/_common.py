"""Shared helpers of ahbm.graphics (internal).

matplotlib is imported inside the functions so that ``import ahbm`` stays
light and works without a display.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ahbm.errors import DataError

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


@contextlib.contextmanager
def atomic_output(path, *, argname: str = "path") -> Iterator[Path]:
    """Yield a temporary path next to `path`; move it into place on success.

    The temporary file keeps the suffix of `path` (writers such as Pillow pick
    the format from it). On any exception the temporary file is removed and
    `path` is left untouched, so no half-written file ever appears.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise DataError(
            f"Cannot write `{argname}` {str(target)!r}: folder {str(folder)!r} does not "
            "exist; create it first"
        )
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}", dir=folder
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _default_mode(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _default_mode(target: Path) -> int:
    """Permissions of a new file (0o666 minus the umask), or those of `target`."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


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
