"""The gait report: one figure of a gait result's cycles, with its flags and subject."""

from __future__ import annotations

from pathlib import Path

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


def write_gait_report(result, path, *, title: str = "") -> Path:
    """Write the one-page gait report of a :class:`GaitResult` (PNG, PDF, SVG).

    Parameters
    ----------
    result : GaitResult
        Output of :func:`ahbm.gait.analyze_gait`.
    path : str or path-like
        Output file; the format follows the suffix. Written atomically.
    title : str, optional
        Figure title (default: the source and the subject's mass).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataError
        No complete gait cycle on either side, or an unsupported suffix.

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
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11.0, 2.0 * len(variables) + 2.6))
    try:
        plot_gait_cycles(cycles, variables=variables, fig=fig, show_cycles=True)
        bottom = 2.0 / fig.get_size_inches()[1]
        fig.subplots_adjust(bottom=bottom + 0.02, top=1.0 - 0.9 / fig.get_size_inches()[1])
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
        if getattr(result, "flags", ()):
            fig.text(
                0.02,
                1.0 - 0.45 / fig.get_size_inches()[1],
                "CHECK FAILED: " + "; ".join(result.flags)[:300],
                fontsize=8,
                color="firebrick",
                va="top",
                wrap=True,
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
