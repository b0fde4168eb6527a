"""``ahbm convert`` and ``ahbm info``: data conversion and file summaries.

Imports only argparse at load; each command imports what it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ahbm.errors import DataError

__all__ = ["CONVERT_HELP", "INFO_HELP", "add_convert_arguments", "add_info_arguments",
           "run_convert", "run_info"]  # fmt: skip

CONVERT_HELP = "convert C3D/TRC files to HDF5 trial stores (in parallel)"
INFO_HELP = "print a summary of a C3D, TRC, MOT/STO or HDF5 file"


def add_convert_arguments(parser: argparse.ArgumentParser) -> None:
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


def run_convert(args: argparse.Namespace) -> int:
    """Exit status 0 if every input named files and all converted, 1 if a file failed, an
    input named no file, an input named explicitly is not a regular file (FIFO, device,
    socket, dangling link, link loop), or two inputs map to one output (without
    --overwrite); 2 if no input named any file."""
    import os

    from ahbm.io.batch import convert, process_pool

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


def add_info_arguments(parser: argparse.ArgumentParser) -> None:
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


def run_info(args: argparse.Namespace) -> int:
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
    from ahbm.io.hdf5 import load_trial

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
        from ahbm.opensim.storage import read_mot

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
        from ahbm.io.readers import read_trial

        print(read_trial(path).summary())
        return 0
    raise DataError(
        f"Cannot describe '{path}': unknown file type {path.suffix!r}; "
        f"use a .c3d, .trc, .mot, .sto or .h5 file"
    )
