"""The ``ahbm`` command line.

Each subcommand lives in a module of this package that imports only argparse
when loaded; the module's ``run_<name>(args)`` imports what the command runs,
so ``ahbm --help`` and each command load only what they use:

=========================== ===================================
``demo``                    :mod:`ahbm.cli.demo`
``convert``, ``info``       :mod:`ahbm.cli.data`
``view``, ``plot``          :mod:`ahbm.cli.view`
``view3d``                  :mod:`ahbm.cli.view3d`
``gait``                    :mod:`ahbm.cli.gait`
``scale``, ``ik``, ``id``,  :mod:`ahbm.cli.opensim`
``so``
``analyze``                 :mod:`ahbm.cli.analyze`
``rra``                     :mod:`ahbm.cli.rra`
``cmc``                     :mod:`ahbm.cli.cmc`
``forward``                 :mod:`ahbm.cli.forward`
=========================== ===================================

Every command takes ``-q/--quiet`` (print only errors and the final summary)
and ``-v/--verbose`` (show every warning, each time it occurs); the exit status
is 0 when everything worked, 1 when anything failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["COMMANDS", "build_parser", "main"]

#: name -> (module, help); the module defines ``add_<name>_arguments`` and ``run_<name>``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("ahbm.cli.demo", "run the toolbox demonstration and print its results"),
    "convert": ("ahbm.cli.data", "convert C3D/TRC files to HDF5 trial stores (in parallel)"),
    "info": ("ahbm.cli.data", "print a summary of a C3D, TRC, MOT/STO or HDF5 file"),
    "view": ("ahbm.cli.view", "render the stick-figure animation of a trial (GIF, HTML, MP4, PNG)"),
    "view3d": ("ahbm.cli.view3d", "write a 3-D browser view (one HTML file) of a model and motion"),
    "plot": ("ahbm.cli.view", "draw the gait-cycle figure of a result stored in an ahbm HDF5 file"),
    "gait": ("ahbm.cli.gait", "gait analysis of a walking trial: angles, moments, powers, report"),
    "scale": ("ahbm.cli.opensim", "run an OpenSim Scale setup: scale factors, scaled model"),
    "ik": ("ahbm.cli.opensim", "run an OpenSim Inverse Kinematics setup: coordinates from markers"),
    "id": ("ahbm.cli.opensim", "run an OpenSim Inverse Dynamics setup: generalized forces (.sto)"),
    "so": ("ahbm.cli.opensim", "run an OpenSim static optimization setup: activations, forces"),
    "analyze": ("ahbm.cli.analyze", "run an OpenSim AnalyzeTool setup: kinematics, muscles"),
    "rra": ("ahbm.cli.rra", "run an OpenSim RRA setup: residual reduction, adjusted COM"),
    "cmc": ("ahbm.cli.cmc", "run an OpenSim CMC setup: muscle excitations tracking kinematics"),
    "forward": ("ahbm.cli.forward", "run an OpenSim ForwardTool setup: simulate from controls"),
}


def _common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("common options")
    group.add_argument(
        "-q", "--quiet", action="store_true", help="print only errors and the final summary"
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", help="show every warning, each time it occurs"
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser of the ``ahbm`` command.

    Parameters
    ----------
    command : str, optional
        Define the arguments of this subcommand only (the others get their help
        line, and their modules are not loaded); None defines every subcommand's.
    """
    from ahbm import __version__

    parser = argparse.ArgumentParser(
        prog="ahbm",
        description="Articulated Human Biomechanical Modeling toolbox",
        epilog="`ahbm COMMAND --help` describes a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"ahbm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if command is None or name == command:
            getattr(importlib.import_module(module), f"add_{name}_arguments")(p)
            _common(p)
    return parser


def _command_of(argv: list[str]) -> str:
    """The subcommand named in `argv` (the first word that is not an option), or ""."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else ""
    return ""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ahbm`` console script; returns the exit status.

    Run as the program (`argv` None: ``ahbm ...``, ``python -m ahbm ...``), it
    freezes the objects left when the command ends (``gc.freeze()``): the
    interpreter's last garbage collections then skip them, which was 0.3 s of
    the 1.9 s of ``ahbm id`` (every file a command writes is closed before it
    returns; standard output and error are flushed at exit as always).
    """
    if argv is None:
        try:
            return _main(sys.argv[1:])
        finally:
            import gc

            gc.freeze()
    return _main(list(argv))


def _main(argv: list[str]) -> int:
    """:func:`main` on the words `argv`."""
    # `ahbm --help` needs the help lines only: no command module is loaded for it
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    import warnings

    from ahbm.errors import AhbmError

    module, _ = COMMANDS[args.command]
    run = getattr(importlib.import_module(module), f"run_{args.command}")
    try:
        with warnings.catch_warnings():
            if args.verbose:
                warnings.simplefilter("always")
            return int(run(args) or 0)
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
