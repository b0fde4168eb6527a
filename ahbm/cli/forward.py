"""``ahbm forward``: OpenSim's ForwardTool (a simulation from controls) on ahbm.

Imports only argparse at load; the command imports :mod:`ahbm.opensim.forward_tool`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["FORWARD_HELP", "add_forward_arguments", "run_forward"]

FORWARD_HELP = "run an OpenSim ForwardTool setup: simulate the model from its controls"


def add_forward_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim <ForwardTool> setup file")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="folder of the output files (default: the setup's <results_directory>)",
    )


def run_forward(args: argparse.Namespace) -> int:
    from ahbm.opensim.forward_tool import run_forward_setup

    res = run_forward_setup(args.setup, output_dir=args.output)
    print(
        f"Forward: {res.time[0]:g} to {res.time[-1]:g} s in {len(res.time) - 1} steps "
        f"({res.evaluations} evaluations), {len(res.state_labels)} states"
    )
    if not args.quiet:
        for path in res.outputs:
            print(f"wrote {path}")
    return 0
