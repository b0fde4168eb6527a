"""The figure of a curve test: the curves, and the SPM with its threshold and clusters."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.graphics._common import check_figure, pyplot

__all__ = ["plot_spm"]


def plot_spm(result, curves=None, *, labels=("a", "b"), x=None, xlabel="% cycle", ylabel="",
             fig=None):  # fmt: skip
    """Plot an SPM test: the groups' mean ± SD (optional) above, the statistic below.

    Parameters
    ----------
    result : ahbm.analysis.SPMResult
        From :func:`ahbm.analysis.spm_ttest2` and its siblings.
    curves : sequence of array_like, optional
        The groups of curves that were tested (each ``(n_curves, n_nodes)``);
        their mean ± SD is drawn in a panel above the statistic.
    labels : sequence of str
        The groups' names for the legend.
    x : array_like, shape (n_nodes,), optional
        The nodes' abscissa (default 0 to 100 % of the cycle).
    xlabel, ylabel : str
        Axis labels (`ylabel` of the curves' panel).
    fig : matplotlib.figure.Figure, optional
        Figure to draw in (default: a new one).

    Returns
    -------
    matplotlib.figure.Figure
        The statistic's panel shades the supra-threshold clusters and writes
        each cluster's p value; the threshold(s) are dashed lines.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.analysis import spm_ttest2
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=(8, 51)); b = rng.normal(size=(8, 51)) + 1.5
    >>> fig = plot_spm(spm_ttest2(a, b), [a, b], labels=("left", "right"))
    >>> len(fig.axes)
    2
    """
    check_figure(fig)
    z = np.asarray(result.z, dtype=float)
    n = z.size
    xs = np.linspace(0.0, 100.0, n) if x is None else as_float_array(x, "x")
    if xs.shape != (n,):
        raise DataError(f"`x` must have {n} values (one per node), got shape {xs.shape}")
    plt = pyplot()
    fig = plt.figure(figsize=(6.4, 6.0 if curves is not None else 3.2)) if fig is None else fig
    if curves is not None:
        top, ax = fig.subplots(2, 1, sharex=True)
        for k, c in enumerate(curves):
            arr = as_float_array(c, f"curves[{k}]")
            if arr.ndim != 2 or arr.shape[1] != n:
                raise DataError(f"`curves[{k}]` must have shape (n_curves, {n}), got {arr.shape}")
            m, sd = arr.mean(axis=0), arr.std(axis=0, ddof=1)
            label = labels[k] if k < len(labels) else f"group {k}"
            (line,) = top.plot(xs, m, label=label)
            top.fill_between(xs, m - sd, m + sd, color=line.get_color(), alpha=0.2, lw=0)
        top.set_ylabel(ylabel)
        top.legend(frameon=False)
    else:
        ax = fig.subplots(1, 1)
    ax.plot(xs, z, color="k", lw=1.5)
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.axhline(result.threshold, color="r", ls="--", lw=1)
    if result.two_tailed:
        ax.axhline(-result.threshold, color="r", ls="--", lw=1)
    nodes = np.arange(n, dtype=float)
    for c in result.clusters:
        lo, hi = (float(np.interp(v, nodes, xs)) for v in (c.start, c.end))
        ax.axvspan(lo, hi, color="0.85", zorder=0)
        p = "p < 0.001" if c.p < 0.001 else f"p = {c.p:.3f}"
        y = result.threshold if c.sign > 0 else -result.threshold
        ax.text(0.5 * (lo + hi), y, p, ha="center", va="bottom" if c.sign > 0 else "top")
    kind = "nonparametric" if result.nonparametric else "RFT"
    ax.set_ylabel(f"SPM{{{result.statistic}}}")
    ax.set_xlabel(xlabel)
    ax.set_title(f"{result.test}, alpha = {result.alpha:g} ({kind})", fontsize=9)
    return fig
