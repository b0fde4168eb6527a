"""``ahbm cmc``: OpenSim's Computed Muscle Control (CMCTool setups) on ahbm.

Imports only argparse at load; the command imports :mod:`ahbm.opensim.cmc_tool`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["CMC_HELP", "add_cmc_arguments", "run_cmc"]

CMC_HELP = "run an OpenSim CMC setup: muscle excitations that track the kinematics"


def add_cmc_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim <CMCTool> setup file")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="folder of the output files (default: the setup's <results_directory>)",
    )


def run_cmc(args: argparse.Namespace) -> int:
    import numpy as np

    from ahbm.opensim.cmc_tool import run_cmc_setup

    res = run_cmc_setup(args.setup, output_dir=args.output)
    err = np.abs(res.position_errors).max() if res.position_errors.size else 0.0
    print(
        f"CMC: {len(res.time)} windows ({res.time[0]:g} to {res.time[-1]:g} s), "
        f"{len(res.muscle_names)} muscles, {len(res.actuator_names) - len(res.muscle_names)} "
        f"other actuators; largest position error {err:.3g}"
    )
    if not args.quiet:
        for path in res.outputs:
            print(f"wrote {path}")
    return 0
