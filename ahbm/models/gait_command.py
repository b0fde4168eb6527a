"""The ``ahbm gait`` command and the one-page gait report.

``ahbm gait TRIAL.c3d [--static STATIC.c3d] [--mass KG] [--events auto|file|force_plates|
kinematic] [--belt-speed M/S] [--out results.h5] [--report report.png|pdf]`` runs
:func:`ahbm.models.gait.analyze_gait`,
prints a summary, stores the trial with its results in an ahbm HDF5 file and
draws the report (angles, moments and powers over the normalized gait cycle for
both sides, and the spatiotemporal table). With several trials (``ahbm gait
trials/*.c3d --static static.c3d --out results.h5 --jobs 4``) every trial goes
into the one HDF5 file and a summary table lists them, failures included (exit
status 1 when any failed or a pattern matched nothing). Registered in :data:`ahbm.cli.COMMANDS`
as ``COMMANDS["gait"] = (GAIT_HELP, add_gait_arguments, run_gait)``.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import replace
from pathlib import Path

from ahbm.errors import AhbmWarning, DataError
from ahbm.graphics import plain_text, save_figure
from ahbm.graphics.gait import plot_gait_cycles
from ahbm.models.gait import (
    GaitSettings,
    analyze_gait,
    load_gait_trial,
    save_gait_result,
)
from ahbm.models.gait.batch import analyze_gait_files
from ahbm.models.gait.subject import mass_text

__all__ = ["GAIT_HELP", "add_gait_arguments", "run_gait", "write_gait_report"]

GAIT_HELP = "gait analysis of a walking trial: angles, moments, powers, events, report"

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
        Output of :func:`ahbm.models.gait.analyze_gait`.
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


def add_gait_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``ahbm gait``."""
    parser.add_argument(
        "trial",
        metavar="TRIAL",
        nargs="+",
        help="walking trial(s) (.c3d or .trc; several files or glob patterns: one combined "
        "--out file and a summary table)",
    )
    parser.add_argument("--static", default=None, metavar="STATIC", help="static trial")
    parser.add_argument(
        "--grf",
        default=None,
        metavar="GRF.mot",
        help="ground reaction forces from an OpenSim .mot file (TRC trials)",
    )
    parser.add_argument("--mass", type=float, default=None, metavar="KG", help="body mass")
    parser.add_argument("--height", type=float, default=None, metavar="M", help="stature")
    parser.add_argument("--leg-length", type=float, default=None, metavar="M")
    parser.add_argument("--knee-width", type=float, default=None, metavar="M")
    parser.add_argument("--ankle-width", type=float, default=None, metavar="M")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="RESULTS.h5",
        help="HDF5 file for the trial and its results",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="REPORT",
        help="report figure (.png, .pdf or .svg)",
    )
    parser.add_argument(
        "--marker-set", default="plug_in_gait", help="marker set name (plug_in_gait, opensim)"
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="NAME=LABEL",
        help="map a Plug-in Gait marker name to a trial label (repeatable)",
    )
    parser.add_argument("--cutoff", type=float, default=6.0, help="marker low-pass cutoff, Hz")
    parser.add_argument("--max-gap", type=int, default=10, help="longest gap filled, frames")
    parser.add_argument("--no-kinetics", action="store_true", help="kinematics only")
    parser.add_argument(
        "--events",
        default="auto",
        choices=("auto", "file", "force_plates", "kinematic"),
        help="foot events: the file's, the plates', kinematic (Zeni), or auto (file, then "
        "plates, then kinematic)",
    )
    parser.add_argument(
        "--moment-frame",
        default="jcs",
        choices=("jcs", "distal", "proximal"),
        help="axes of the joint moments: the joint coordinate system of the angles (default), "
        "the distal segment's (Plug-in Gait's; to compare with Vicon's outputs) or the "
        "proximal segment's",
    )
    parser.add_argument(
        "--belt-speed", type=float, default=None, metavar="M/S", help="treadmill belt speed"
    )
    parser.add_argument(
        "--jobs", type=int, default=None, metavar="N", help="worker processes for many trials"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary")


def run_gait(args: argparse.Namespace) -> int:
    """Run ``ahbm gait``; return the exit status."""
    mapping = {}
    for item in args.map:
        if "=" not in item:
            raise DataError(f"--map expects NAME=LABEL (e.g. LASI=L.ASIS), got {item!r}")
        k, v = item.split("=", 1)
        mapping[k.strip()] = v.strip()
    for opt in ("out", "report"):
        target = getattr(args, opt)
        if target is not None and not target.parent.resolve().is_dir():
            raise DataError(f"--{opt} {str(target)!r}: folder does not exist; create it first")
    if args.report is not None and args.report.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise DataError(f"--report {str(args.report)!r}: use a .png, .pdf or .svg file name")
    settings = GaitSettings(
        leg_length=args.leg_length,
        knee_width=args.knee_width,
        ankle_width=args.ankle_width,
        marker_set=args.marker_set,
        marker_map=mapping or None,
        cutoff=args.cutoff,
        max_gap=args.max_gap,
        kinetics=False if args.no_kinetics else "auto",
        moment_frame=args.moment_frame,
    )
    kwargs = {
        "mass": args.mass,
        "height": args.height,
        "grf": args.grf,
        "events": args.events,
        "belt_speed": args.belt_speed,
        "settings": settings,
    }
    if len(args.trial) > 1 or any(c in args.trial[0] for c in "*?[") or args.jobs:
        if args.report is not None:
            raise DataError("--report draws one trial's report; give a single TRIAL with it")
        res = analyze_gait_files(args.trial, args.out, static=args.static, jobs=args.jobs, **kwargs)
        if not args.quiet:
            for row in res.rows:
                for w in row["warnings"]:
                    print(f"warning: {Path(row['trial']).name}: {w}")
        print(res.table())
        return 1 if res.n_failed else 0
    path = args.trial[0]
    trial = load_gait_trial(path, "TRIAL")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AhbmWarning)
        result = analyze_gait(trial, static=args.static, **kwargs)
    result = replace(result, source=str(path))
    if not args.quiet:
        for w in caught:
            if issubclass(w.category, AhbmWarning):
                print(f"warning: {w.message}")
    print(f"{path}: {len(trial.point_labels)} markers, {trial.n_frames} frames")
    print(result.summary())
    if args.out is not None:
        name = save_gait_result(trial, result, args.out)
        print(f"results: {args.out} (trial {name!r}, group results/)")
    if args.report is not None:
        write_gait_report(result, args.report, title=f"Gait report: {Path(path).name}")
        print(f"report: {args.report}")
    return 0
