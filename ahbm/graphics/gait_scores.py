"""The Movement Analysis Profile: bars of the Gait Variable Scores and the Gait Profile Score."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.graphics._common import SIDE_COLORS, check_figure, check_mapping, pyplot
from ahbm.graphics.figures import plain_text

__all__ = ["plot_movement_analysis_profile"]

_SIDES = ("Left", "Right")


def plot_movement_analysis_profile(
    scores, *, normal=None, degrees: bool = True, colors=None, title: str = "", fig=None
):
    """Plot the Movement Analysis Profile (MAP): GVS bars per variable and side, then the GPS.

    Parameters
    ----------
    scores : ahbm.gait.GaitProfileScore
        From :func:`ahbm.gait.gait_profile_score` (anything with ``gvs``
        and ``gps`` mappings side -> values, ``overall``, ``variables`` and
        ``units``).
    normal : array_like, shape (10,), optional
        The reference group's own nine GVS and its GPS, in the scores' units
        (:meth:`ahbm.gait.GaitReference.normal_profile`), drawn as grey bars
        behind each group.
    degrees : bool
        Show scores whose units are "rad" in degrees.
    colors : mapping, optional
        Side -> colour (default: Left red, Right green).
    title : str
        Figure title (drawn as plain text).
    fig : matplotlib.figure.Figure, optional
        Figure to draw into.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: a group of bars per variable (left, right) and a last
        group "GPS" with the overall GPS in grey.

    Raises
    ------
    DataError
        Scores without ``gvs``/``gps``, a `normal` of the wrong size.

    Notes
    -----
    Baker et al. (2009), The Gait Profile Score and Movement Analysis
    Profile, Gait Posture 30, 265-269.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.gait import gait_profile_score
    >>> curves = np.zeros((1, 9, 51)); curves[:, 6] = np.radians(10.0)
    >>> s = gait_profile_score({"Left": curves, "Right": 0 * curves}, np.zeros((9, 51)))
    >>> fig = plot_movement_analysis_profile(s)
    >>> len(fig.axes[0].patches)  # 10 groups of 2 bars, and the overall GPS
    21
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    gvs, gps = getattr(scores, "gvs", None), getattr(scores, "gps", None)
    if not isinstance(gvs, Mapping) or not isinstance(gps, Mapping) or not gvs:
        raise DataError(
            "`scores` must be a GaitProfileScore (gait_profile_score), with gvs and gps per side; "
            f"got {type(scores).__name__}"
        )
    check_mapping(colors, "colors")
    check_figure(fig)
    sides = [s for s in _SIDES if s in gvs]
    labels = list(getattr(scores, "variables", ()))
    n_var = len(labels)
    if n_var == 0 or any(np.shape(gvs[s]) != (n_var,) for s in sides):
        raise DataError(f"`scores.gvs` must hold one score per variable ({n_var}) for each side")
    f = 180.0 / np.pi if degrees and getattr(scores, "units", "") == "rad" else 1.0
    unit = "deg" if f != 1.0 else getattr(scores, "units", "")
    side_colors = dict(SIDE_COLORS)
    if colors:
        side_colors.update({str(k).capitalize(): v for k, v in colors.items()})
    plt = pyplot()
    if fig is None:
        fig = plt.figure(figsize=(1.0 + 0.75 * (n_var + 1), 3.6))
    ax = fig.subplots(1, 1)
    x = np.arange(n_var + 1, dtype=float)
    width = 0.8 / max(len(sides), 1)
    if normal is not None:
        ref = as_float_array(normal, "normal")
        if ref.shape != (n_var + 1,):
            raise DataError(
                f"`normal` must hold the reference's {n_var} GVS and its GPS ({n_var + 1} "
                f"values), got shape {ref.shape}"
            )
        ax.bar(x, ref * f, width=0.9, color="0.85", zorder=0, label="reference")
    for k, side in enumerate(sides):
        values = np.r_[np.asarray(gvs[side], dtype=float), float(gps[side])] * f
        offset = (k - (len(sides) - 1) / 2.0) * width
        ax.bar(x + offset, values, width=width, color=side_colors.get(side), label=side, zorder=2)
    overall = float(getattr(scores, "overall", np.nan))
    if np.isfinite(overall):
        ax.bar([n_var + 1.0], [overall * f], width=0.8, color="0.35", label="overall", zorder=2)
        x = np.r_[x, n_var + 1.0]
        labels = [*labels, "GPS", "GPS overall"]
    else:
        labels = [*labels, "GPS"]
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=45, ha="right")
    ax.set_ylabel(f"GVS / GPS ({unit})" if unit else "GVS / GPS")
    ax.axvline(n_var - 0.5, color="0.6", lw=0.8)
    ax.legend(frameon=False, fontsize="small")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    plain_text(fig)
    return fig
