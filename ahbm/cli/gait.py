"""The ``ahbm gait`` command.

``ahbm gait TRIAL.c3d [--static STATIC.c3d] [--mass KG] [--events auto|file|force_plates|
kinematic] [--belt-speed M/S] [--compat none|plug-in-gait] [--thigh-rotation DEG[,DEG]]
[--shank-rotation ...] [--tibial-torsion ...] [-o results.h5] [--report report.png|pdf]`` runs
:func:`ahbm.gait.analyze_gait`,
prints a summary, stores the trial with its results in an ahbm HDF5 file and
draws the report (angles, moments and powers over the normalized gait cycle for
both sides, and the spatiotemporal table). With several trials (``ahbm gait
trials/*.c3d --static static.c3d -o results.h5 --jobs 4``) every trial goes
into the one HDF5 file and a summary table lists them, failures included (exit
status 1 when any failed or a pattern matched nothing). The report itself is
:func:`ahbm.gait.write_gait_report`.
"""

from __future__ import annotations

import argparse
import math
import warnings
from dataclasses import replace
from pathlib import Path

from ahbm.errors import AhbmWarning, DataError

__all__ = ["GAIT_HELP", "add_gait_arguments", "run_gait"]

GAIT_HELP = "gait analysis of a walking trial: angles, moments, powers, events, report"


def add_gait_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``ahbm gait``."""
    parser.add_argument(
        "trial",
        metavar="TRIAL",
        nargs="+",
        help="walking trial(s) (.c3d or .trc; several files or glob patterns: one combined "
        "--output file and a summary table)",
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
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="RESULTS.h5",
        help="HDF5 file for the trial and its results (default: nothing is saved)",
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
        "--compat",
        default="none",
        choices=("none", "plug-in-gait"),
        help="none (default): ahbm's own physics; plug-in-gait: reproduce Vicon's Plug-in "
        "Gait where its rules differ (moments on the distal segment's axes, the foot from "
        "the ankle-toe line, a plate both feet touch given whole to the first foot, the load "
        "of a foot partly off a plate applied as measured; docs/conventions.md 8.1)",
    )
    for name, what in (
        ("thigh-rotation", "Plug-in Gait's ThighRotation: the thigh wand's turn out of the "
         "knee's plane"),
        ("shank-rotation", "Plug-in Gait's ShankRotation: the shank wand's turn out of the "
         "ankle's plane"),
        ("tibial-torsion", "tibial torsion, external positive"),
    ):  # fmt: skip
        parser.add_argument(
            f"--{name}",
            default=None,
            metavar="DEG[,DEG]",
            help=f"{what}, deg (signs as the file's and the VSK's values); one value for "
            f"both sides or LEFT,RIGHT (--{name}=-8,12 when the first is negative). Default: "
            "the file's value, else the static trial's measure, else 0 (ahbm's default "
            "model); give it to reproduce a Plug-in Gait run whose subject values are known "
            "but not stored in the file",
        )
    parser.add_argument(
        "--jobs", type=int, default=None, metavar="N", help="worker processes for many trials"
    )


def run_gait(args: argparse.Namespace) -> int:
    """Run ``ahbm gait``; return the exit status."""
    from ahbm.cli._compiling import announce
    from ahbm.gait import GaitSettings, analyze_gait, load_gait_trial, save_gait_result
    from ahbm.gait.batch import analyze_gait_files
    from ahbm.gait.report import write_gait_report

    mapping = {}
    for item in args.map:
        if "=" not in item:
            raise DataError(f"--map expects NAME=LABEL (e.g. LASI=L.ASIS), got {item!r}")
        k, v = item.split("=", 1)
        mapping[k.strip()] = v.strip()
    for opt in ("output", "report"):
        target = getattr(args, opt)
        if target is not None and not target.parent.resolve().is_dir():
            raise DataError(f"--{opt} {str(target)!r}: folder does not exist; create it first")
    if args.report is not None and args.report.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise DataError(f"--report {str(args.report)!r}: use a .png, .pdf or .svg file name")
    announce("gait", quiet=args.quiet)  # first run of an installation: numba compiles
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
        compat=args.compat,
        thigh_rotation=_per_side_degrees(args.thigh_rotation, "--thigh-rotation"),
        shank_rotation=_per_side_degrees(args.shank_rotation, "--shank-rotation"),
        tibial_torsion=_per_side_degrees(args.tibial_torsion, "--tibial-torsion"),
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
        res = analyze_gait_files(
            args.trial, args.output, static=args.static, jobs=args.jobs, **kwargs
        )
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
                print(f"warning: {_short_warning(str(w.message), result.flags)}")
    print(f"{path}: {len(trial.point_labels)} markers, {trial.n_frames} frames")
    print(result.summary())
    if args.output is not None:
        name = save_gait_result(trial, result, args.output)
        print(f"results: {args.output} (trial {name!r}, group results/)")
    else:
        print("results not saved: give -o RESULTS.h5 to keep them")
    if args.report is not None:
        write_gait_report(result, args.report, title=f"Gait report: {Path(path).name}")
        print(f"report: {args.report}")
    return 0


def _per_side_degrees(text, option: str):
    """``"12"`` -> 12 deg in rad for both sides, ``"10,-5"`` -> ``{"Left": .., "Right": ..}``."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = [math.radians(float(p)) for p in parts]
    except ValueError:
        values = []
    if (
        len(parts) not in (1, 2)
        or len(values) != len(parts)
        or not all(math.isfinite(v) for v in values)
    ):
        raise DataError(
            f"{option} expects an angle in degrees for both sides (e.g. 12) or LEFT,RIGHT "
            f"(e.g. 12,-8), got {text!r}"
        )
    return values[0] if len(values) == 1 else {"Left": values[0], "Right": values[1]}


def _short_warning(message: str, flags) -> str:
    """The warning that repeats every failed check in one line, shortened: the summary
    prints each check on its own line (``CHECK FAILED: ...``) with its fix."""
    if flags and all(f in message for f in flags):
        head = message.split(": the gait checks failed", 1)
        where = f"{head[0]}: " if len(head) == 2 else ""
        return f"{where}{len(flags)} gait check(s) failed, each listed below as CHECK FAILED"
    return message
