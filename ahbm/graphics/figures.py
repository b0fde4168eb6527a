"""Figures as files and as text: saving, plain text, the backend in use.

:func:`save_figure` writes a figure atomically (a temporary file in the same
folder, renamed into place); :func:`plain_text` turns the mathtext of labels
into plain text; :func:`is_interactive_backend` tells whether matplotlib can
open windows. matplotlib is imported inside the functions.
"""

from __future__ import annotations

from pathlib import Path

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import as_path, as_positive_float, output_path
from ahbm.errors import DataError
from ahbm.graphics._common import check_figure, pyplot

__all__ = ["is_interactive_backend", "plain_text", "save_figure"]


# Backends that draw into files or into static notebook images only.
_STATIC_BACKENDS = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}


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


def plain_text(*artists):
    """Make every text of `artists` draw as typed: never mathtext, never LaTeX.

    Labels, titles, legend entries and file names come from data (a C3D
    marker label, a trial's file name) and may hold ``$...$``: matplotlib
    would parse that as mathtext (an unknown macro raises ParseFatalException,
    deep nesting RecursionError) or hand it to LaTeX when ``text.usetex`` is
    on. Each :class:`matplotlib.text.Text` found in `artists` (Figures, Axes,
    Legends, Texts; their children are searched) gets ``parse_math=False``
    and ``usetex=False`` (a wrapped text has its ``$`` escaped instead, as
    matplotlib measures wrapped lines as mathtext regardless). Tick labels
    and axis offset texts are left alone: matplotlib's own formatters write
    them (log-axis ticks use mathtext).
    Texts created later (``ax.legend()`` by the caller) are not affected.
    """
    from matplotlib.axis import Axis, Tick
    from matplotlib.text import Text

    seen: set[int] = set()
    stack = [a for a in artists if a is not None]
    while stack:
        artist = stack.pop()
        if id(artist) in seen or isinstance(artist, Tick):
            continue
        seen.add(id(artist))
        if isinstance(artist, Text):
            _plain(artist)
        children = artist.get_children()
        if isinstance(artist, Axis):
            children = [c for c in children if c is not artist.offsetText]
        stack.extend(children)


def _plain(text) -> None:
    """One Text drawn as typed (see :func:`plain_text`)."""
    text.set_usetex(False)
    if not text.get_wrap():
        text.set_parse_math(False)
        return
    # matplotlib measures the lines of a wrapped text as mathtext whenever they hold an
    # even number of '$', whatever parse_math says: escape every '$' instead (a '\$' is
    # drawn as '$' outside mathtext), once
    if not getattr(text, "_ahbm_plain", False):
        text.set_text(text.get_text().replace("$", "\\$"))
        text._ahbm_plain = True
    text.set_parse_math(True)


def atomic_output(path, *, argname: str = "path"):
    """Yield a temporary path next to `path`; move it into place on success.

    The temporary file keeps the suffix of `path` (writers such as Pillow pick
    the format from it). On any exception the temporary file is removed and
    `path` is left untouched, so no half-written file ever appears. See
    :func:`ahbm._internal.files.atomic_path`.
    """
    return atomic_path(path, argname=argname)


def save_figure(fig, path, *, dpi=100, close: bool = True, argname: str = "path") -> Path:
    """Write a matplotlib figure to a file, creating its folder; never half-written.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like
        Output file; the format follows the extension (``.png``, ``.pdf``,
        ``.svg``, ...).
    dpi : float, optional
        Resolution, dots per inch (default 100).
    close : bool, optional
        Close the figure afterwards (default), also when writing fails.
    argname : str, optional
        Argument name used in error messages.

    Returns
    -------
    pathlib.Path
        The written file.

    Raises
    ------
    DataError
        Unsupported extension, or a folder that cannot be created. The figure
        goes to a temporary file that is renamed over `path` only when
        complete (:func:`ahbm._internal.files.atomic_path`).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0, 1])
    >>> save_figure(fig, "figs/line.png").name
    'line.png'
    """
    from matplotlib.backend_bases import FigureCanvasBase

    check_figure(fig, "fig", required=True)
    path = output_path(as_path(path, argname), argname)
    dpi = as_positive_float(dpi, "dpi")
    fmt = path.suffix.lstrip(".").lower()
    try:
        supported = FigureCanvasBase.get_supported_filetypes()
        if fmt not in supported:
            raise DataError(
                f"Cannot write the figure to '{path}' (`{argname}`): use one of the "
                f"extensions {', '.join('.' + k for k in sorted(supported))}"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DataError(f"Cannot create the folder of `{argname}` '{path}': {err}") from err
        with atomic_path(path, argname=argname) as tmp:
            fig.savefig(tmp, dpi=dpi, format=fmt)
    finally:
        if close:
            pyplot().close(fig)
    return path
