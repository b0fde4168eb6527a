"""The ``ahbm`` command line.

Subcommands register themselves in :data:`COMMANDS` as
``name -> (help, add_arguments(parser), run(args) -> int)``. The command glue
(reading files, then handing data to the viewers of :mod:`ahbm.graphics`)
lives here, at the top layer: ``ahbm view`` and ``ahbm plot`` are defined in
this module, ``ahbm gait`` in :mod:`ahbm.models.gait_command`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.errors import DataError
from ahbm.graphics import is_interactive_backend, save_figure
from ahbm.graphics.gait import gait_cycles_from_results, plot_gait_cycles
from ahbm.graphics.stick import plug_in_gait_segments, stick_view
from ahbm.io.hdf5 import load_trial
from ahbm.io.readers import read_trial
from ahbm.models.gait_command import GAIT_HELP, add_gait_arguments, run_gait

__all__ = [
    "COMMANDS",
    "PLOT_HELP",
    "VIEW_HELP",
    "add_plot_arguments",
    "add_view_arguments",
    "build_parser",
    "main",
    "run_plot",
    "run_view",
]


def _add_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="print only the final summary line")
    parser.add_argument(
        "--out",
        default=None,
        help="folder for the gait demo's trial, results and report (default: a new temporary one)",
    )


def _run_demo(args: argparse.Namespace) -> int:
    from ahbm.demo import run_demo

    return run_demo(quiet=args.quiet, out_dir=args.out)


COMMANDS = {
    "demo": ("run the toolbox demonstration and print its results", _add_demo, _run_demo),
}


# --- convert / info (data conversion; ahbm.batch and ahbm.io) -------------------------


def _add_convert(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs", nargs="+", metavar="IN", help="C3D/TRC files, folders or glob patterns"
    )
    parser.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="output folder")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="number of files converted at once, each in a worker process (default: one per "
        "CPU; 1 converts one file at a time in this process)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the trial in existing outputs; accept inputs that share an output name "
        "(the first is converted)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--stop-on-error", action="store_true", help="stop at the first failing file"
    )
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="convert each file in a child process of its own (archives from untrusted "
        "sources: a file that crashes or hangs a reader fails alone)",
    )


def _run_convert(args: argparse.Namespace) -> int:
    """Exit status 0 if every input named files and all converted, 1 if a file failed, an
    input named no file, an input named explicitly is not a regular file (FIFO, device,
    socket, dangling link, link loop), or two inputs map to one output (without
    --overwrite); 2 if no input named any file."""
    import os

    from ahbm.batch import convert, process_pool

    jobs, executor = args.jobs, None
    if jobs is not None and jobs < 1:
        raise DataError(f"--jobs must be at least 1, got {jobs}")
    if jobs != 1 and not args.isolate:
        # this command's main module is import-safe, so a process pool is: one CPU each
        executor = process_pool(jobs or os.cpu_count() or 1)
        jobs = None
    try:
        report = convert(
            args.inputs,
            args.output,
            jobs=jobs,
            executor=executor,
            on_error="raise" if args.stop_on_error else "continue",
            progress=not args.no_progress,
            overwrite=args.overwrite,
            isolate=args.isolate,
        )
    finally:
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
    print(report)
    if report.nothing_matched:
        print(
            "ahbm convert: no C3D or TRC file found in "
            + ", ".join(repr(str(p)) for p in args.inputs),
            file=sys.stderr,
        )
        return 2
    if report.refused:
        print(
            "ahbm convert: not regular files (never opened): "
            + ", ".join(repr(str(p)) for p in report.refused),
            file=sys.stderr,
        )
    collide = report.collisions and not args.overwrite
    if collide:
        print(
            "ahbm convert: inputs map to one output: "
            + "; ".join(f"{a} and {b} -> {out}" for a, b, out in report.collisions)
            + "; only the first of each was converted (rename one, or pass --overwrite "
            "to accept)",
            file=sys.stderr,
        )
    return 0 if report.ok and not report.unmatched and not report.refused and not collide else 1


def _add_info(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE",
        help="a C3D, TRC, MOT/STO or ahbm HDF5 file, or a folder (its stale temporary files)",
    )
    parser.add_argument(
        "--name", default=None, help="trial name inside an HDF5 store (default: all trials)"
    )
    parser.add_argument(
        "--clean",
        action="store_true",
        help="remove the temporary files that killed ahbm writers left next to FILE",
    )


def _run_info(args: argparse.Namespace) -> int:
    """Describe the file, then report (or remove) stale temporaries in its folder."""
    path = Path(args.file)
    code = 0 if path.is_dir() else _describe_file(args, path)
    _report_temporaries(path if path.is_dir() else path.parent, clean=args.clean)
    return code


def _report_temporaries(folder: Path, *, clean: bool) -> None:
    from ahbm.io import cleanup_temporaries

    stale = cleanup_temporaries(folder, dry_run=True)
    if not stale:
        return
    size = sum(p.stat().st_size for p in stale if p.exists())
    if clean:
        stale = cleanup_temporaries(folder)
    verb = "removed" if clean else "found"
    print(
        f"\n{verb} {len(stale)} stale temporary file(s) of killed ahbm writers in {folder} "
        f"({size / 1e6:.1f} MB):"
    )
    for p in stale:
        print(f"  {p.name}")
    if not clean:
        print("remove them with `ahbm info --clean` or ahbm.io.cleanup_temporaries(folder)")


def _describe_file(args: argparse.Namespace, path: Path) -> int:
    suffix = path.suffix.lower()
    if suffix in (".h5", ".hdf5", ".hdf"):
        from ahbm.io.hdf5 import list_trials

        names = [args.name] if args.name else list_trials(path)
        print(f"{path}: ahbm trial store with {len(list_trials(path))} trial(s)")
        for n in names:
            print(f"\n[{n}]")
            print(load_trial(path, n).summary())
        return 0
    if suffix in (".mot", ".sto"):
        from ahbm.io.opensim import read_mot

        table = read_mot(path)
        t = table.time
        span = f"{t[0]:g} to {t[-1]:g} s" if len(t) else "empty"
        print(f"source: {path}")
        print(f"name: {table.name}")
        print(f"rows: {len(table)} ({span}), columns: {len(table.columns)}")
        print(f"in degrees: {'yes' if table.in_degrees else 'no'}")
        print("columns: " + ", ".join(table.columns))
        return 0
    if suffix in (".c3d", ".trc"):
        from ahbm.batch import read_trial

        print(read_trial(path).summary())
        return 0
    raise DataError(
        f"Cannot describe '{path}': unknown file type {path.suffix!r}; "
        f"use a .c3d, .trc, .mot, .sto or .h5 file"
    )


COMMANDS["convert"] = (
    "convert C3D/TRC files to HDF5 trial stores (in parallel)",
    _add_convert,
    _run_convert,
)
COMMANDS["info"] = (
    "print a summary of a C3D, TRC, MOT/STO or HDF5 file",
    _add_info,
    _run_info,
)


# --- view / plot: the files are read here; the graphics take data ------------------------

VIEW_HELP = "render the stick-figure animation of a trial (GIF, HTML, MP4 or PNG)"
PLOT_HELP = "draw the gait-cycle figure of a result stored in an ahbm HDF5 file"
_HDF5 = (".h5", ".hdf5", ".hdf")


def _read(path: Path, name: str | None):
    """The trial of a .c3d, .trc or ahbm .h5 file (the viewers take data, not files)."""
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
    path = Path(args.result)
    if path.suffix.lower() not in _HDF5:
        raise DataError(f"'{path}' is not an ahbm HDF5 result file (.h5)")
    trial = _read(path, args.name)
    cycles = gait_cycles_from_results(trial.results, args.key)
    save_figure(plot_gait_cycles(cycles, variables=args.variables), args.output, dpi=args.dpi,
                argname="--output")  # fmt: skip
    print(f"wrote {args.output}")
    return 0


COMMANDS["view"] = (VIEW_HELP, add_view_arguments, run_view)
COMMANDS["plot"] = (PLOT_HELP, add_plot_arguments, run_plot)
COMMANDS["gait"] = (GAIT_HELP, add_gait_arguments, run_gait)


# --- scale: OpenSim's Scale tool (ahbm.tools.opensim_scale) -----------------------------

SCALE_HELP = "run an OpenSim Scale setup: scale factors, scaled model, placed markers"


def _add_scale(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim Scale setup (<ScaleTool>)")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="also write the final model here (.osim, or .json for an ahbm model file)",
    )
    parser.add_argument(
        "--scale-file",
        type=Path,
        default=None,
        help="also write the scale factors here (OpenSim <ScaleSet> XML)",
    )


def _run_scale(args: argparse.Namespace) -> int:
    from ahbm.tools.opensim_scale import run_scale

    # -o and --scale-file are checked with the setup's outputs, before the computation
    result = run_scale(args.setup, output=args.output, scale_file=args.scale_file)
    written = list(result.written)
    print(f"scale factors ({len(result.factors)} bodies):")
    for body, f in result.factors.items():
        print(f"  {body:<20s} {f[0]:.6f} {f[1]:.6f} {f[2]:.6f}")
    for name, f in result.measurement_factors.items():
        print(f"  measurement {name}: {f:.6f}")
    if result.marker_errors:
        e = np.array(list(result.marker_errors.values()))
        worst = max(result.marker_errors, key=result.marker_errors.get)
        print(
            f"static pose: marker error rms {np.sqrt(np.mean(e**2)) * 1000:.2f} mm, "
            f"max {e.max() * 1000:.2f} mm ({worst})"
        )
    if not written:
        print("no output written: the setup names no output file (use --output/--scale-file)")
    for path in written:
        print(f"wrote {path}")
    return 0


COMMANDS["scale"] = (SCALE_HELP, _add_scale, _run_scale)


# --- ik / id: OpenSim's IK and ID tools (ahbm.tools.opensim_ik / opensim_id) -------------

IK_HELP = "run an OpenSim Inverse Kinematics setup: coordinates (.mot) from markers (.trc)"
ID_HELP = "run an OpenSim Inverse Dynamics setup: generalized forces (.sto)"


def _add_tool_common(parser: argparse.ArgumentParser, tool: str, default_out: str) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help=f"an OpenSim {tool} setup file")
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help=f"output file (default: {default_out})"
    )
    parser.add_argument(
        "--time-range",
        nargs=2,
        type=float,
        default=None,
        metavar=("START", "END"),
        help="time range in s (default: the setup's <time_range>)",
    )


def _add_ik(parser: argparse.ArgumentParser) -> None:
    _add_tool_common(parser, "<InverseKinematicsTool>", "the setup's <output_motion_file>")


def _add_id(parser: argparse.ArgumentParser) -> None:
    _add_tool_common(
        parser,
        "<InverseDynamicsTool>",
        "<results_directory>/<output_gen_force_file> of the setup",
    )
    parser.add_argument(
        "--processing",
        choices=("opensim", "butterworth"),
        default="opensim",
        help="coordinate processing: OpenSim's (pad, 3rd-order Butterworth forward and "
        "backward, quintic spline; default) or ahbm's butter_filtfilt before the spline",
    )


def _run_ik(args: argparse.Namespace) -> int:
    from ahbm.tools.opensim_ik import run_ik_setup

    res = run_ik_setup(args.setup, output=args.output, time_range=args.time_range)
    print(
        f"IK: {len(res.time)} frames ({res.time[0]:g} to {res.time[-1]:g} s), "
        f"{len(res.coordinate_names)} coordinates, {len(res.marker_names)} markers; marker "
        f"error RMS {np.nanmean(res.rms_error) * 100:.2f} cm (mean), max "
        f"{np.nanmax(res.max_error) * 100:.2f} cm"
    )
    if not res.converged.all():
        print(f"warning: {int((~res.converged).sum())} frame(s) did not converge")
    print(f"wrote {res.output}")
    return 0


def _run_id(args: argparse.Namespace) -> int:
    from ahbm.tools.opensim_id import run_id_setup

    res = run_id_setup(
        args.setup, output=args.output, time_range=args.time_range, processing=args.processing
    )
    print(
        f"ID: {len(res.time)} frames ({res.time[0]:g} to {res.time[-1]:g} s), "
        f"{len(res.labels)} generalized forces, coordinates processed as "
        f"{'OpenSim' if args.processing == 'opensim' else 'butter_filtfilt'}"
    )
    print(f"wrote {res.output}")
    return 0


COMMANDS["ik"] = (IK_HELP, _add_ik, _run_ik)
COMMANDS["id"] = (ID_HELP, _add_id, _run_id)


# --- so: OpenSim's static optimization (ahbm.tools.opensim_so) ----------------------------

SO_HELP = (
    "run an OpenSim AnalyzeTool setup with StaticOptimization (and JointReaction): "
    "activations and forces (.sto)"
)


def _add_so(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim <AnalyzeTool> setup file")
    parser.add_argument(
        "-o",
        "--output-dir",
        type=Path,
        default=None,
        help="folder of the output files (default: the setup's <results_directory>)",
    )


def _run_so(args: argparse.Namespace) -> int:
    from ahbm.tools.opensim_so import run_so_setup

    res = run_so_setup(args.setup, output_dir=args.output_dir)
    so = res.result
    print(
        f"SO: {len(res.time)} frames ({res.time[0]:g} to {res.time[-1]:g} s), "
        f"{len(so.muscle_names)} muscles, {len(res.actuator_names) - len(so.muscle_names)} "
        f"other actuators; max |constraint residual| {np.abs(so.residuals).max():.3g}"
    )
    if so.failed.any():
        print(f"warning: {int(so.failed.sum())} frame(s) cannot meet the generalized forces")
    for path in res.outputs:
        print(f"wrote {path}")
    return 0


COMMANDS["so"] = (SO_HELP, _add_so, _run_so)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``ahbm`` command."""
    from ahbm import __version__

    parser = argparse.ArgumentParser(
        prog="ahbm",
        description="Articulated Human Biomechanical Modeling toolbox",
    )
    parser.add_argument("--version", action="version", version=f"ahbm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_args, _run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_args(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ahbm`` console script; returns the exit status."""
    from ahbm.errors import AhbmError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(COMMANDS[args.command][2](args) or 0)
    except AhbmError as err:
        print(f"ahbm {args.command}: error: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # output piped into a program that stopped reading (e.g. `| head`):
        # silence the flush at interpreter exit and end quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print(f"ahbm {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
