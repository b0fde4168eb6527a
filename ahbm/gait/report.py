"""The gait report: one figure of a gait result's cycles, with its flags and subject."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from ahbm.errors import DataError
from ahbm.gait.subject import mass_text
from ahbm.graphics import plain_text, save_figure
from ahbm.graphics.gait import plot_gait_cycles

__all__ = ["write_gait_report"]


_REPORT_VARIABLES = (
    "PelvisAngles",
    "HipAngles",
    "KneeAngles",
    "AnkleAngles",
    "HipMoment",
    "KneeMoment",
    "AnkleMoment",
    "HipPower",
    "KneePower",
    "AnklePower",
)


def write_gait_report(
    result, path, *, title: str = "", normative=None, normative_label: str = "normative"
) -> Path:
    """Write the one-page gait report of a :class:`GaitResult` (PNG, PDF, SVG).

    Parameters
    ----------
    result : GaitResult
        Output of :func:`ahbm.gait.analyze_gait`.
    path : str or path-like
        Output file; the format follows the suffix. Written atomically.
    title : str, optional
        Figure title (default: the source and the subject's mass).
    normative : mapping, optional
        A band drawn behind the curves, mean ± 1 SD: ``name -> {"mean": m,
        "sd": s}`` over 0-100 % of the cycle in display units (deg, N·m/kg),
        as :func:`ahbm.gait.normative_band` returns (the layout of
        :func:`ahbm.graphics.plot_gait_cycles`).
    normative_label : str, optional
        What the band is, for the caption (cite its source, e.g.
        ``"normative (Schwartz et al. 2008, free speed)"``).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataError
        No complete gait cycle on either side, or an unsupported suffix.

    Notes
    -----
    A component the model fixes by construction (``result.not_defined``,
    e.g. the ankle's frontal angle) is not plotted: its panel says "not
    defined by this model". A curve outside the range of walking that points
    to a calibration error (``result.curve_flags``) has its panel framed in
    red and titled "check calibration"; the flag's text with the fix heads
    the CHECK FAILED note.

    Examples
    --------
    >>> write_gait_report(analyze_gait("walk.c3d"), "report.pdf")  # doctest: +SKIP
    """
    out = Path(path)
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise DataError(f"`report` {str(out)!r}: use a .png, .pdf or .svg file name")
    cycles = {side: c for side, c in result.cycles.items() if c}
    if not cycles:
        raise DataError(
            "No complete gait cycle (two foot strikes of one side) in the trial; the report "
            "needs at least one cycle"
        )
    present = set().union(*(set(c) for c in cycles.values()))
    variables = [v for v in _REPORT_VARIABLES if v in present]
    cycles, undefined = _without_undefined(cycles, getattr(result, "not_defined", ()))
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11.0, 2.0 * len(variables) + 2.6))
    try:
        plot_gait_cycles(
            cycles, variables=variables, fig=fig, show_cycles=True, normative=normative,
            not_defined=(),  # the model's undefined components are NaN here, no value rule
        )  # fmt: skip
        if normative:
            fig.text(
                0.02,
                1.0 - 0.62 / fig.get_size_inches()[1],
                f"grey band: {normative_label}, mean ± 1 SD",
                fontsize=8,
                color="0.35",
                va="top",
            )
        _mark_panels(fig, variables, undefined, getattr(result, "curve_flags", ()))
        bottom = 2.0 / fig.get_size_inches()[1]
        # the implausible curves first (the panels marked "check calibration" point here)
        curve = [f.text for f in getattr(result, "curve_flags", ())]
        rest = [f for f in getattr(result, "flags", ()) if f not in curve]
        note = ""
        if curve or rest:
            note = "\n".join(
                textwrap.wrap("CHECK FAILED: " + "; ".join(curve + rest)[:2000], width=190)
            )
        height = fig.get_size_inches()[1]
        top = 0.9 + (0.14 * (note.count("\n") + 1) if note else 0.0)
        fig.subplots_adjust(bottom=bottom + 0.02, top=1.0 - top / height)
        sp = result.spatiotemporal
        rows = [("", "Left", "Right")]
        for key, label, unit in (
            ("stride_time", "stride time", "s"),
            ("stride_length", "stride length", "m"),
            ("walking_speed", "walking speed", "m/s"),
            ("step_length", "step length", "m"),
            ("stance_pct", "stance", "%"),
            ("double_support_pct", "double support", "%"),
        ):
            rows.append(
                (
                    f"{label} ({unit})",
                    f"{sp.get('Left', {}).get(key, float('nan')):.3g}",
                    f"{sp.get('Right', {}).get(key, float('nan')):.3g}",
                )
            )
        text = "\n".join(f"{a:<22}{b:>10}{c:>10}" for a, b, c in rows)
        text += f"\n{'cadence (steps/min)':<22}{sp.get('cadence', float('nan')):>10.4g}"
        fig.text(0.05, 0.02, text, family="monospace", fontsize=9, va="bottom")
        settings = result.settings
        info = (
            f"{mass_text(result.subject.mass)}; markers low-pass "
            f"{settings.get('marker_cutoff_hz')} Hz; BSP {settings.get('bsp_table', '-')}\n"
            f"angles: {settings.get('angles')}; moments (N·m/kg): internal, Plug-in Gait "
            "signs: extensor/plantarflexor, abductor, external rotator positive; powers "
            "(W/kg) per JCS axis, their sum the total; angles in deg"
        )
        fig.text(0.45, 0.02, info, fontsize=8, va="bottom", wrap=True)
        if note:
            fig.text(
                0.02,
                1.0 - 0.45 / fig.get_size_inches()[1],
                note,
                fontsize=8,
                color="firebrick",
                va="top",
            )
        fig.suptitle(
            title or f"Gait report: {result.source}",
            fontsize=12,
            y=1.0 - 0.15 / fig.get_size_inches()[1],
        )
        plain_text(fig)  # file names, flags and variable names are data, not mathtext
        save_figure(fig, out, dpi=90, close=False, argname="report")
    finally:
        plt.close(fig)
    return out


def _without_undefined(cycles: dict, not_defined) -> tuple:
    """The cycles with the components the model fixes set to NaN, and {(variable, c): sides}."""
    undefined: dict = {}
    out = {side: dict(c) for side, c in cycles.items()}
    for f in not_defined:
        c = out.get(f.side, {})
        if f.variable in c:
            arr = np.array(c[f.variable], dtype=float)
            arr[..., f.component] = np.nan
            c[f.variable] = arr
            undefined.setdefault((f.variable, f.component), []).append(f.side)
    return out, undefined


def _mark_panels(fig, variables, undefined: dict, curve_flags) -> None:
    """Label the panels of components not defined by the model; frame implausible curves."""
    n_cols = 3
    for var, c in undefined:
        if var not in variables:
            continue
        ax = fig.axes[variables.index(var) * n_cols + c]
        curves = [line for line in ax.lines if len(line.get_ydata()) > 2]
        if any(np.isfinite(line.get_ydata()).any() for line in curves):
            continue  # the other side has data there
        for artist in [*curves, *ax.collections]:  # the all-NaN curves and bands; the zero
            artist.remove()  # line and the toe-off lines (two points each) stay
        ax.text(50.0, 0.0, "not defined by this model", ha="center", va="center", fontsize=8,
                color="0.35")  # fmt: skip
        ax.set_ylim(-1.0, 1.0)
        ax.set_yticks([])
    marked: dict = {}
    for f in curve_flags:
        if f.variable in variables:
            marked.setdefault((f.variable, f.component), []).append(f.side)
    for (var, c), sides in marked.items():
        ax = fig.axes[variables.index(var) * n_cols + c]
        for spine in ax.spines.values():
            spine.set_edgecolor("firebrick")
            spine.set_linewidth(1.6)
        who = " and ".join(s.lower() for s in sides)
        ax.text(
            0.02,
            0.96,
            f"check calibration: {who} (see notes)",
            transform=ax.transAxes,
            ha="left",
            va="top",
            fontsize=7,
            color="firebrick",
            bbox={"facecolor": "white", "alpha": 0.8, "lw": 0},
        )
