"""``ahbm analyze``: OpenSim's AnalyzeTool (kinematic and muscle analyses) on ahbm.

Imports only argparse at load; the command imports :mod:`ahbm.opensim.analyze_tool`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["ANALYZE_HELP", "add_analyze_arguments", "run_analyze"]

ANALYZE_HELP = (
    "run an OpenSim AnalyzeTool setup: Kinematics, BodyKinematics, PointKinematics, "
    "MuscleAnalysis, Actuation (.sto)"
)


def add_analyze_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim <AnalyzeTool> setup file")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="folder of the output files (default: the setup's <results_directory>)",
    )


def run_analyze(args: argparse.Namespace) -> int:
    from ahbm._engine.backend import numpy_while_small
    from ahbm.opensim.analyze_tool import run_analyze_setup

    # a walking trial runs in numpy before numba would have loaded (a long one loads it)
    with numpy_while_small():
        res = run_analyze_setup(args.setup, output_dir=args.output)
    print(
        f"Analyze: {len(res.time)} frames ({res.time[0]:g} to {res.time[-1]:g} s), "
        f"{len(res.outputs)} files"
    )
    if not args.quiet:
        for path in res.outputs:
            print(f"wrote {path}")
    return 0
