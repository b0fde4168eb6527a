"""The ``ahbm`` command line.

Subcommands register themselves in :data:`COMMANDS` as
``name -> (help, add_arguments(parser), run(args) -> int)``.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _add_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="print only the final summary line")


def _run_demo(args: argparse.Namespace) -> int:
    from ahbm.demo import run_demo

    return run_demo(quiet=args.quiet)


COMMANDS = {
    "demo": ("run the toolbox demonstration and print its results", _add_demo, _run_demo),
}


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
