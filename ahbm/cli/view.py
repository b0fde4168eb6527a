"""``ahbm view`` and ``ahbm plot``: the files are read here; the graphics take data.

Imports only argparse at load; each command imports what it runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ahbm.errors import DataError

__all__ = ["PLOT_HELP", "VIEW_HELP", "add_plot_arguments", "add_view_arguments", "run_plot",
           "run_view"]  # fmt: skip

VIEW_HELP = "render the stick-figure animation of a trial (GIF, HTML, MP4 or PNG)"
PLOT_HELP = "draw the gait-cycle figure of a result stored in an ahbm HDF5 file"
_HDF5 = (".h5", ".hdf5", ".hdf")


def _read(path: Path, name: str | None):
    """The trial of a .c3d, .trc or ahbm .h5 file (the viewers take data, not files)."""
    from ahbm.io.hdf5 import load_trial
    from ahbm.io.readers import read_trial

    suffix = path.suffix.lower()
    if suffix in _HDF5:
        return load_trial(path, name)
    if suffix in (".c3d", ".trc"):
        return read_trial(path)
    raise DataError(f"Cannot read '{path}': use a .c3d, .trc or .h5 file")


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``ahbm view``."""
    parser.add_argument("trial", metavar="TRIAL", help="a .c3d, .trc or ahbm .h5 file")
    parser.add_argument("--name", default=None, help="trial name inside an HDF5 store")
    out = parser.add_argument_group("output (at least one, unless a display is available)")
    out.add_argument("--gif", type=Path, help="write the animation as a GIF")
    out.add_argument("--html", type=Path, help="write a self-contained HTML player")
    out.add_argument("--mp4", type=Path, help="write an MP4 video (needs ffmpeg)")
    out.add_argument("--png", type=Path, help="write one frame (see --frame) as PNG")
    parser.add_argument("--frame", type=int, default=0, help="frame for --png (0-based)")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed (1 = real time)")
    parser.add_argument("--fps", type=float, default=None, help="frames per second of the output")
    parser.add_argument("--dpi", type=float, default=80.0, help="resolution of the output")
    parser.add_argument("--labels", action="store_true", help="write the marker labels")
    parser.add_argument("--fixed", action="store_true", help="fixed view instead of following")


def run_view(args: argparse.Namespace) -> int:
    """Render a trial; show it in a window only when no output file is asked."""
    import numpy as np

    from ahbm.graphics import is_interactive_backend
    from ahbm.graphics.stick import plug_in_gait_segments, stick_view

    outputs = [p for p in (args.gif, args.html, args.mp4, args.png) if p is not None]
    if not outputs and not is_interactive_backend():
        raise DataError(
            "No display is available: give an output file with --gif, --html, --mp4 or --png"
        )
    trial = _read(Path(args.trial), args.name)
    if trial.n_frames == 0:
        raise DataError(f"'{args.trial}' holds no marker frames to draw")
    seen = ~np.isnan(trial.points).all(axis=(0, 2))
    present = [lab for lab, ok in zip(trial.point_labels, seen, strict=True) if ok]
    viewer = stick_view(
        trial,
        segments=plug_in_gait_segments(present) or None,
        show_labels=args.labels,
        follow=not args.fixed,
        title=Path(args.trial).name,
    )
    for path in (args.gif, args.html, args.mp4):
        if path is not None:
            viewer.save(path, fps=args.fps, speed=args.speed, dpi=args.dpi)
            print(f"wrote {path}")
    if args.png is not None:
        viewer.show_frame(args.frame)
        viewer.save(args.png, dpi=args.dpi)
        print(f"wrote {args.png}")
    import matplotlib.pyplot as plt

    if not outputs:
        viewer.animate(fps=args.fps, speed=args.speed)
        plt.show()  # the user asked to look at it: this is the command's purpose
    plt.close(viewer.fig)
    return 0


def add_plot_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``ahbm plot``."""
    parser.add_argument("result", metavar="RESULT", help="an ahbm .h5 file with gait results")
    parser.add_argument("-o", "--output", type=Path, required=True, help="figure file (.png ...)")
    parser.add_argument("--name", default=None, help="trial name inside the HDF5 store")
    parser.add_argument("--key", default="gait_cycles", help="results entry with the cycles")
    parser.add_argument("--variables", nargs="+", default=None, help="variables (rows) to draw")
    parser.add_argument("--dpi", type=float, default=150.0, help="resolution of the figure")


def run_plot(args: argparse.Namespace) -> int:
    """Draw the gait-cycle figure of a stored result."""
    from ahbm.graphics import save_figure
    from ahbm.graphics.gait import (
        gait_cycles_from_results,
        not_defined_from_results,
        plot_gait_cycles,
    )

    path = Path(args.result)
    if path.suffix.lower() not in _HDF5:
        raise DataError(f"'{path}' is not an ahbm HDF5 result file (.h5)")
    trial = _read(path, args.name)
    cycles = gait_cycles_from_results(trial.results, args.key)
    undefined = not_defined_from_results(trial.results)  # the model's own list, if stored
    fig = plot_gait_cycles(cycles, variables=args.variables, not_defined=undefined)
    save_figure(fig, args.output, dpi=args.dpi, argname="--output")
    print(f"wrote {args.output}")
    return 0
