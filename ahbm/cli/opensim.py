"""``ahbm scale``, ``ahbm ik``, ``ahbm id`` and ``ahbm so``: OpenSim's tools on ahbm.

Imports only argparse at load; each command imports only its tool
(:mod:`ahbm.opensim.scale_tool`, ``ik_tool``, ``id_tool``, ``so_tool``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = [
    "ID_HELP", "IK_HELP", "SCALE_HELP", "SO_HELP",
    "add_id_arguments", "add_ik_arguments", "add_scale_arguments", "add_so_arguments",
    "run_id", "run_ik", "run_scale", "run_so",
]  # fmt: skip

SCALE_HELP = "run an OpenSim Scale setup: scale factors, scaled model, placed markers"


def add_scale_arguments(parser: argparse.ArgumentParser) -> None:
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


def run_scale(args: argparse.Namespace) -> int:
    import numpy as np

    from ahbm.opensim.scale_tool import run_scale

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


def add_ik_arguments(parser: argparse.ArgumentParser) -> None:
    _add_tool_common(parser, "<InverseKinematicsTool>", "the setup's <output_motion_file>")


def add_id_arguments(parser: argparse.ArgumentParser) -> None:
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


def run_ik(args: argparse.Namespace) -> int:
    import numpy as np

    from ahbm._engine.backend import numpy_while_small
    from ahbm.cli._compiling import announce
    from ahbm.opensim.ik_tool import run_ik_setup

    # a walking trial runs in numpy before numba would have loaded; a long trial loads
    # the compiled kernels (on the first run of an installation numba compiles: say so)
    with numpy_while_small(before_load=lambda: announce("ik", quiet=args.quiet)):
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


def run_id(args: argparse.Namespace) -> int:
    from ahbm._engine.backend import numpy_while_small
    from ahbm.cli._compiling import announce
    from ahbm.opensim.id_tool import run_id_setup

    # a walking trial runs in numpy before numba would have loaded; a long trial loads
    # the compiled kernels (on the first run of an installation numba compiles: say so)
    with numpy_while_small(before_load=lambda: announce("id", quiet=args.quiet)):
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


SO_HELP = (
    "run an OpenSim AnalyzeTool setup with StaticOptimization (and JointReaction): "
    "activations and forces (.sto)"
)


def add_so_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("setup", metavar="SETUP.xml", help="an OpenSim <AnalyzeTool> setup file")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="folder of the output files (default: the setup's <results_directory>)",
    )
    parser.add_argument(
        "--allow-failed-frames",
        action="store_true",
        help="exit with status 0 even when the muscles and actuators cannot produce the "
        "inverse-dynamics forces in some frames (default: status 1; the files are written)",
    )


def run_so(args: argparse.Namespace) -> int:
    import sys

    import numpy as np

    from ahbm._engine.backend import numpy_while_small
    from ahbm.opensim.so_tool import run_so_setup

    # a walking trial runs in numpy before numba would have loaded (a long one loads it)
    with numpy_while_small():
        res = run_so_setup(args.setup, output_dir=args.output)
    so = res.result
    frames = f"{len(res.time)} frames ({res.time[0]:g} to {res.time[-1]:g} s)"
    if so is None:  # JointReaction only: the muscle forces came from <forces_file>
        print(f"JR: {frames}, muscle forces from the forces files (no StaticOptimization)")
    else:
        print(
            f"SO: {frames}, {len(so.muscle_names)} muscles, "
            f"{len(res.actuator_names) - len(so.muscle_names)} other actuators; max |constraint "
            f"residual| {np.abs(so.residuals).max():.3g}"
        )
    for name, (t, jr) in res.joint_reactions.items():
        print(f"JointReaction '{name}': {len(t)} frames, {len(jr.joint_names)} joints")
    for path in res.outputs:
        print(f"wrote {path}")
    if so is not None and so.failed.any():
        n, total = int(so.failed.sum()), so.failed.size
        first = res.time[np.flatnonzero(so.failed)[0]]
        worst = np.abs(so.residuals).max(axis=0)
        coord = so.coordinate_names[int(np.argmax(worst))] if so.coordinate_names else "?"
        print(
            f"ahbm so: error: {n} of {total} frame(s) (the first at {first:g} s) cannot meet the "
            f"inverse-dynamics forces with the muscles and actuators (largest shortfall "
            f"{worst.max():.3g} on '{coord}'); their rows hold the best the muscles can do. Add "
            "reserve actuators (CoordinateActuators on those coordinates, or residual Point/"
            "TorqueActuators on the pelvis) to the setup's <force_set_files>, or pass "
            "--allow-failed-frames to accept these frames",
            file=sys.stderr,
        )
        return 0 if args.allow_failed_frames else 1
    return 0
