"""Batch conversion of many motion files (C3D, TRC) to HDF5 trial stores.

:func:`convert` takes files, folders and glob patterns, converts each file to
``<output_dir>/<stem>.h5`` in parallel (threads of this process by default, so
that it works from any script; child processes with ``isolate=True``; or any
:class:`concurrent.futures.Executor`, such as a ``dask.distributed`` cluster
through ``Client.get_executor()``), shows a tqdm progress bar, and returns a
:class:`ConversionReport` with one table of failures and a summary of the
readers' warnings per file. One bad file never stops the batch.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import tempfile
import threading
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ahbm._internal.files import TEMP_MARKER, _host_tag
from ahbm._internal.isolation import run_isolated
from ahbm._internal.output import os_error
from ahbm._internal.patterns import expand_paths
from ahbm._internal.validation import as_positive_float
from ahbm.errors import DataError
from ahbm.io.readers import SUPPORTED_SUFFIXES, read_trial

__all__ = ["convert", "ConversionReport", "process_pool"]


#: Skip reasons that mean an input named no file.
_UNMATCHED = ("no such file or folder", "pattern matches no file")


@dataclass
class ConversionReport:
    """What :func:`convert` did.

    Attributes
    ----------
    converted : list of (Path, Path)
        ``(input, output)`` for each file written.
    skipped : list of (Path, str)
        ``(input, reason)``: unsupported type, output already present (without
        ``overwrite``), an output name already used by another input, an
        input that names no file, or an entry that is not a regular file
        (FIFO, device, socket, dangling link, link loop: never opened).
    failed : list of (Path, str)
        ``(input, reason)``: the error type and message.
    warnings : dict of Path to list of str
        The warnings issued while each input was read and written
        (``"Category: message"``), collected instead of printed.
    collisions : list of (Path, Path, Path)
        ``(skipped input, converted input, output)`` for each input whose
        output name another input already uses (``walk.c3d`` and ``walk.trc``
        both give ``walk.h5``): only the first is converted (also in
        `skipped`). ``ahbm convert`` exits with status 1 for them unless
        ``--overwrite``.
    refused : list of Path
        Inputs named explicitly (not found in a folder or by a pattern) that
        are not regular files (also in `skipped`); ``ahbm convert`` exits with
        status 1 for them.

    Examples
    --------
    >>> from pathlib import Path
    >>> r = ConversionReport(failed=[(Path("b.trc"), "FileFormatError: bad header")])
    >>> print(r)
    converted 0, skipped 0, failed 1
    failed:
      b.trc  FileFormatError: bad header
    """

    converted: list[tuple[Path, Path]] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    warnings: dict[Path, list[str]] = field(default_factory=dict)
    collisions: list[tuple[Path, Path, Path]] = field(default_factory=list)
    refused: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True if no file failed."""
        return not self.failed

    @property
    def unmatched(self) -> list[Path]:
        """Inputs (paths or patterns) that named no file."""
        return [p for p, why in self.skipped if why in _UNMATCHED]

    @property
    def nothing_matched(self) -> bool:
        """True if the inputs named no file at all (none converted, failed or skipped)."""
        return not self.converted and not self.failed and len(self.unmatched) == len(self.skipped)

    def __str__(self) -> str:
        n_warn = sum(len(w) for w in self.warnings.values())
        head = (
            f"converted {len(self.converted)}, skipped {len(self.skipped)}, "
            f"failed {len(self.failed)}"
        )
        if n_warn:
            head += f"; {n_warn} warnings from {len(self.warnings)} files"
        lines = [head]
        lines += [f"  skipped {p}: {why}" for p, why in self.skipped]
        if n_warn:
            lines.append("warnings (the most frequent of each file):")
            lines += _table([(p, _warning_summary(w)) for p, w in self.warnings.items()], 20)
        if self.failed:
            lines.append("failed:")
            lines += _table(self.failed, None)
        return "\n".join(lines)

    def __repr__(self) -> str:
        n_warn = sum(len(w) for w in self.warnings.values())
        return (
            f"ConversionReport(converted={len(self.converted)}, skipped={len(self.skipped)}, "
            f"failed={len(self.failed)}, warnings={n_warn})"
        )


def _table(rows, limit) -> list[str]:
    """``name  text`` lines with the names in one column (at most `limit` rows)."""
    shown = rows if limit is None else rows[:limit]
    width = min(40, max((len(str(p)) for p, _ in shown), default=0))
    out = [f"  {str(p):<{width}}  {text}" for p, text in shown]
    if limit is not None and len(rows) > limit:
        out.append(f"  ... and {len(rows) - limit} more files")
    return out


def _warning_summary(messages: list[str]) -> str:
    """``"N x <most frequent message> (+k other kinds)"`` for one file's warnings."""
    counts = Counter(messages)
    text, n = counts.most_common(1)[0]
    if len(text) > 110:
        text = text[:107] + "..."
    more = f" (+{len(counts) - 1} other kinds)" if len(counts) > 1 else ""
    plural = "s" if len(messages) > 1 else ""
    return f"{len(messages)} warning{plural}: {n} x {text}{more}"


_local = threading.local()
_previous_showwarning = None
_ORIGINAL_SHOWWARNING = warnings.showwarning


def _route_warning(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` while converting: into the current file's list."""
    caught = getattr(_local, "caught", None)
    if caught is None:
        show = _previous_showwarning or _ORIGINAL_SHOWWARNING
        return show(message, category, filename, lineno, file, line)
    text = str(message)
    source = getattr(_local, "source", None)
    if source and text.startswith(f"{source}: "):
        text = text[len(source) + 2 :]  # the reader names the file; the report does too
    caught.append(f"{category.__name__}: {text}")
    return None


def _install_router() -> None:
    """Route warnings of every thread to the file it converts (idempotent).

    :func:`convert` calls it inside ``warnings.catch_warnings()``, which puts the
    caller's warning settings back afterwards; a worker process of a process
    pool or cluster keeps it (warnings outside a conversion are shown as before).
    """
    global _previous_showwarning
    if warnings.showwarning is _route_warning:
        return
    _previous_showwarning = warnings.showwarning
    warnings.showwarning = _route_warning
    warnings.simplefilter("always")  # every repeat is counted, none is shown


def _convert_one(
    src: str, dst: str, overwrite: bool, catch: bool, isolate: bool = False, timeout=None
):
    """Worker: read `src`, save it to `dst`. Runs in a worker thread or process.

    With `isolate`, the reading and writing run in a child process of their
    own (:func:`ahbm._internal.isolation.run_isolated`): a crash or hang fails this file only.
    Returns ``(src, dst, reason or None, warnings)``.
    """
    _install_router()
    _local.caught, _local.source = [], src
    try:
        if isolate:
            if timeout is None:
                timeout = 60.0 + os.path.getsize(src) / 5e6
            run_isolated(
                "ahbm.io.batch:_convert_file",
                {"src": src, "dst": dst, "overwrite": overwrite},
                file=src,
                timeout=timeout,
                what="converting",
            )
        else:
            _convert_file(src, dst, overwrite)
    except Exception as exc:
        err = exc
        if isinstance(exc, OSError):  # not one of the readers' or writers' own errors
            err = os_error(exc, exc.filename or src, "convert", argname="inputs")
        if not catch:
            if err is exc:
                raise
            raise err from exc
        return src, dst, f"{type(err).__name__}: {err}", _local.caught
    finally:
        caught = _local.caught
        _local.caught = _local.source = None
    return src, dst, None, caught


def _convert_file(src: str, dst: str, overwrite: bool) -> None:
    """Read `src` and save it as the trial ``<stem>`` of the store `dst`.

    An operating-system error (permissions, a full disk) becomes a DataError
    naming the file and what to do.
    """
    from ahbm.io.hdf5 import save_trial

    try:
        trial = read_trial(src)
    except OSError as err:
        raise os_error(err, err.filename or src, "read", argname="inputs") from err
    try:
        save_trial(trial, dst, name=Path(src).stem, overwrite=overwrite)
    except OSError as err:
        raise os_error(err, err.filename or dst, "write", argname="output_dir") from err


def _expand(inputs) -> tuple[list[Path], list[tuple[Path, str]], list[Path]]:
    """Files named by `inputs` (files, folders, globs), skipped entries, refused named inputs.

    See :func:`ahbm._internal.patterns.expand_paths`: ``**`` follows no symbolic link,
    special files are never opened, each file is listed once.
    """
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    refused: list[Path] = []
    for found in expand_paths(inputs, suffixes=SUPPORTED_SUFFIXES, argname="inputs"):
        if found.kind == "file":
            files.append(found.path)
            continue
        skipped.append((found.path, found.reason))
        if found.kind == "special" and found.named:
            refused.append(found.path)
    return files, skipped, refused


def _check_writable(out: Path) -> None:
    """DataError naming `out` unless a file can be created in it (nothing converted yet)."""
    try:
        fd, name = tempfile.mkstemp(
            prefix=f".convert-check.{TEMP_MARKER}-{_host_tag()}-{os.getpid()}-",
            suffix=".tmp",
            dir=out,
        )
    except OSError as err:
        raise os_error(err, out, "write to the folder", argname="output_dir") from err
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)


def process_pool(max_workers: int) -> cf.ProcessPoolExecutor:
    """A process pool that does not fork a possibly multi-threaded parent.

    Parameters
    ----------
    max_workers : int
        Number of worker processes (at least 1).

    Returns
    -------
    concurrent.futures.ProcessPoolExecutor
        Started with the ``forkserver`` method where available, else ``spawn``
        (forking a process that runs threads, such as the kernels' callers,
        can deadlock).

    Examples
    --------
    >>> pool = process_pool(2)  # workers start at the first submit
    >>> type(pool).__name__
    'ProcessPoolExecutor'
    >>> pool.shutdown()
    """
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return cf.ProcessPoolExecutor(max_workers=max(1, int(max_workers)), mp_context=ctx)


def _n_workers(n_tasks: int) -> int:
    try:
        n_cpu = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n_cpu = os.cpu_count() or 1
    return max(1, min(n_cpu, n_tasks))


def convert(
    inputs,
    output_dir,
    *,
    jobs: int | None = None,
    executor: cf.Executor | None = None,
    on_error: str = "continue",
    progress: bool = True,
    overwrite: bool = False,
    isolate: bool = False,
    timeout: float | None = None,
) -> ConversionReport:
    """Convert many C3D/TRC files to HDF5 trial stores, in parallel.

    Parameters
    ----------
    inputs : str, path-like, or iterable of them
        Files, folders (their ``.c3d``/``.trc`` files, not recursive) and glob
        patterns (``"data/**/*.c3d"`` is recursive; ``**`` does not enter
        symbolically linked folders, and expanding one input looks at no more
        than 1,000,000 folder entries). FIFOs, devices, sockets, dangling
        links and link loops are never opened: they are listed in
        ``report.skipped`` with the reason.
    output_dir : str or path-like
        Folder for the outputs, created if needed; each input ``name.ext``
        becomes ``output_dir/name.h5`` holding one trial named ``name``. Two
        inputs with the same ``name`` collide: the first is converted, the
        other skipped and listed in ``report.collisions``.
    jobs : int or None, optional
        Number of files converted at the same time (default: one per
        available CPU, at most one per file). They run in threads of this
        process, or, with `isolate`, in one child process per file.
    executor : concurrent.futures.Executor or None, optional
        Run the conversions on this executor instead (not together with
        `jobs`): a ``ProcessPoolExecutor`` (e.g. :func:`process_pool`), or a
        cluster, ``dask.distributed.Client(...).get_executor()``. It is left
        running. A process pool started from a script needs that script's
        top-level code under ``if __name__ == "__main__":`` (see Notes).
    on_error : {"continue", "raise"}, optional
        ``"continue"`` (default) records a failing file in the report and goes
        on; ``"raise"`` cancels the pending conversions and re-raises the first
        error.
    progress : bool, optional
        Show a tqdm progress bar (on stderr).
    overwrite : bool, optional
        Replace the trial in existing outputs. Default False: inputs whose output
        already exists are skipped.
    isolate : bool, optional
        Convert each file in a child process of its own (for archives from
        untrusted sources, and for using several CPU cores from any script): a
        file whose damage crashes or hangs a reader, or libhdf5 on an existing
        output store, is recorded as failed (a FileFormatError naming it) and
        the batch goes on. Costs one process start (~1 s) per file.
    timeout : float or None, optional
        With `isolate`: seconds one file may take before its child is killed
        and the file recorded as failed. Default 60 s plus 1 s per 5 MB of input.

    Returns
    -------
    ConversionReport
        ``converted``, ``skipped`` and ``failed`` files, with the reason for
        each skip or failure, and the warnings issued for each file
        (``report.warnings``). ``print(report)`` shows the counts, one line
        per file with warnings and one table of the failures, at the end.

    Raises
    ------
    DataError
        If `on_error`, `jobs` or `timeout` is invalid, `jobs` and `executor`
        are both given, `output_dir` is a file or cannot be created or written
        (checked before anything is converted), or a pattern or folder makes
        the expansion look at too many folder entries.

    Notes
    -----
    **Why threads by default.** A process pool started with ``spawn`` or
    ``forkserver`` (the only safe methods in a process that runs threads)
    imports the caller's ``__main__`` module again in every worker; a plain
    script that calls ``convert`` at its top level would start the batch again
    inside each worker, and every file failed with ``BrokenProcessPool``. Threads
    import nothing, so ``convert(files, out)`` works from a script, a notebook
    or the REPL alike. Reading and writing spend much of their time in numpy and
    HDF5; for more CPU cores use ``isolate=True`` (each file in a fresh
    interpreter that imports only ahbm, never your script) or pass a process
    pool as `executor` from a guarded script. The ``ahbm convert`` command
    uses a process pool for ``--jobs`` > 1.

    **Warnings** that the readers issue (header/parameter disagreements, ...)
    are not printed while converting: each is recorded for its file in
    ``report.warnings`` and summarized by ``print(report)``.

    Every output is written atomically (see :func:`ahbm.io.hdf5.save_trial`), so
    a failing or interrupted conversion never leaves a truncated ``.h5`` file.
    C3D files are read by :func:`ahbm.io.c3d.read_c3d`, TRC files by
    :func:`ahbm.io.read_trc`.

    Examples
    --------
    >>> report = convert([], "out", progress=False)
    >>> print(report)
    converted 0, skipped 0, failed 0
    """
    if on_error not in ("continue", "raise"):
        raise DataError(f"`on_error` must be 'continue' or 'raise', got {on_error!r}")
    if timeout is not None and not isolate:
        raise DataError("`timeout` applies to isolate=True only; pass isolate=True or drop it")
    if timeout is not None:
        timeout = as_positive_float(timeout, "timeout", unit="s")
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise DataError(f"`jobs` must be a whole number of at least 1, got {jobs!r}")
        if executor is not None:
            raise DataError("give `jobs` or `executor`, not both (jobs sizes the default threads)")
    if not isinstance(output_dir, str | os.PathLike):
        raise DataError(
            f"Expected `output_dir` to be a folder path, got {type(output_dir).__name__}"
        )
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"`output_dir` '{out}' exists and is not a folder; give a folder")

    files, skipped, refused = _expand(inputs)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise os_error(err, out, "create the folder", argname="output_dir") from err
    _check_writable(out)
    report = ConversionReport(skipped=list(skipped), refused=refused)
    tasks: list[tuple[Path, Path]] = []
    used: dict[str, Path] = {}
    for f in files:
        dst = out / f"{f.stem}.h5"
        key = os.path.normcase(dst.name)
        if key in used:
            first = used[key]
            report.collisions.append((f, first, dst))
            report.skipped.append(
                (
                    f,
                    f"output name {dst.name} already used by {first} (both map to {dst}); "
                    f"only {first} is converted; rename one of them",
                )
            )
            continue
        used[key] = f
        if dst.exists() and not overwrite:
            report.skipped.append(
                (f, f"output {dst} exists (overwrite=True, or --overwrite, replaces it)")
            )
            continue
        tasks.append((f, dst))
    if not tasks:
        return report

    from tqdm.auto import tqdm

    own = executor is None
    ex = cf.ThreadPoolExecutor(jobs or _n_workers(len(tasks))) if own else executor
    catch = on_error == "continue"
    futures = {}
    with warnings.catch_warnings():
        _install_router()  # warnings of this process's workers go to their files
        try:
            for src, dst in tasks:
                fut = ex.submit(
                    _convert_one, str(src), str(dst), overwrite, catch, bool(isolate), timeout
                )
                futures[fut] = (src, dst)
            bar = tqdm(total=len(tasks), disable=not progress, unit="file", desc="ahbm convert")
            with bar:
                for fut in cf.as_completed(futures):
                    _collect(fut, futures[fut], report, catch, futures)
                    bar.update(1)
        finally:
            if own:
                ex.shutdown(wait=True, cancel_futures=True)
    order = {f: i for i, (f, _) in enumerate(tasks)}
    report.converted.sort(key=lambda x: order[x[0]])
    report.failed.sort(key=lambda x: order.get(x[0], 0))
    report.warnings = {
        f: report.warnings[f] for f, _ in tasks if report.warnings.get(f)
    }  # fmt: skip
    return report


def _collect(fut, task, report: ConversionReport, catch: bool, futures) -> None:
    """Record one finished conversion in `report`."""
    src, dst = task
    try:
        _, _, reason, caught = fut.result()
    except Exception as err:
        if not catch:
            for other in futures:
                other.cancel()
            raise
        caught = []
        if isinstance(err, OSError):
            err = os_error(err, err.filename or src, "convert", argname="inputs")
        reason = f"{type(err).__name__}: {err}"  # the worker itself failed
        from concurrent.futures.process import BrokenProcessPool

        if isinstance(err, BrokenProcessPool):
            reason += (
                " (a process pool started from a script needs the script's top-level code "
                "under `if __name__ == '__main__':`; or leave `executor` out to use threads)"
            )
    if caught:
        report.warnings[src] = list(caught)
    if reason is None:
        report.converted.append((src, dst))
    else:
        report.failed.append((src, reason))
