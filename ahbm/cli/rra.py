"""``ahbm rra``: OpenSim's Residual Reduction Algorithm (RRATool setups) on ahbm.

Imports only argparse at load; the command imports :mod:`ahbm.opensim.rra_tool`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["RRA_HELP", "add_rra_arguments", "run_rra"]

RRA_HELP = "run an OpenSim RRA setup: residual reduction, adjusted COM, tracked kinematics"


def add_rra_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim <RRATool> setup file")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="folder of the output files (default: the setup's <results_directory>)",
    )


def run_rra(args: argparse.Namespace) -> int:
    from ahbm.opensim.rra_tool import run_rra_setup

    res = run_rra_setup(args.setup, output_dir=args.output)
    avg = res.average_residuals
    print(
        f"RRA: {len(res.time)} frames ({res.time[0]:g} to {res.time[-1]:g} s); average "
        "residuals " + ", ".join(f"{k}={avg[k]:.4g}" for k in ("FX", "FY", "FZ", "MX", "MY", "MZ"))
    )
    if res.com_adjustment is not None and not args.quiet:
        print(res.com_adjustment.report())
    if not args.quiet:
        for path in res.outputs:
            print(f"wrote {path}")
    return 0
