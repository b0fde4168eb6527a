"""Batch conversion of many motion files (C3D, TRC) to HDF5 trial stores.

:func:`convert` takes files, folders and glob patterns, converts each file to
``<output_dir>/<stem>.h5`` in parallel on any :class:`concurrent.futures.Executor`
(a local process pool by default, a ``dask.distributed`` cluster through
``Client.get_executor()``), shows a tqdm progress bar, and returns a
:class:`ConversionReport`. One bad file never stops the batch.
"""

from __future__ import annotations

import concurrent.futures as cf
import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from ahbm._files import run_isolated
from ahbm._validation import as_positive_float
from ahbm.errors import DataError
from ahbm.io.readers import SUPPORTED_SUFFIXES, read_trial

__all__ = ["convert", "ConversionReport", "process_pool", "read_trial", "SUPPORTED_SUFFIXES"]


@dataclass
class ConversionReport:
    """What :func:`convert` did.

    Attributes
    ----------
    converted : list of (Path, Path)
        ``(input, output)`` for each file written.
    skipped : list of (Path, str)
        ``(input, reason)``: unsupported type, output already present (without
        ``overwrite``), or an output name already used by another input.
    failed : list of (Path, str)
        ``(input, reason)``: the error type and message.
    """

    converted: list[tuple[Path, Path]] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True if no file failed."""
        return not self.failed

    def __str__(self) -> str:
        lines = [
            f"converted {len(self.converted)}, skipped {len(self.skipped)}, "
            f"failed {len(self.failed)}"
        ]
        lines += [f"  skipped {p}: {why}" for p, why in self.skipped]
        lines += [f"  FAILED  {p}: {why}" for p, why in self.failed]
        return "\n".join(lines)


def _convert_one(
    src: str, dst: str, overwrite: bool, catch: bool, isolate: bool = False, timeout=None
):
    """Worker: read `src`, save it to `dst`. Runs in a worker process/thread.

    With `isolate`, the reading and writing run in a child process of their
    own (:func:`ahbm._files.run_isolated`): a crash or hang fails this file only.
    """
    try:
        if isolate:
            if timeout is None:
                timeout = 60.0 + os.path.getsize(src) / 5e6
            run_isolated(
                "ahbm.batch:_convert_file",
                {"src": src, "dst": dst, "overwrite": overwrite},
                file=src,
                timeout=timeout,
                what="converting",
            )
        else:
            _convert_file(src, dst, overwrite)
    except Exception as err:
        if not catch:
            raise
        return src, dst, f"{type(err).__name__}: {err}"
    return src, dst, None


def _convert_file(src: str, dst: str, overwrite: bool) -> None:
    """Read `src` and save it as the trial ``<stem>`` of the store `dst`."""
    from ahbm.io.hdf5 import save_trial

    save_trial(read_trial(src), dst, name=Path(src).stem, overwrite=overwrite)


def _expand(inputs) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Files named by `inputs` (files, folders, globs), and skipped entries."""
    if isinstance(inputs, str | os.PathLike):
        inputs = [inputs]
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found = sorted(
                q for q in p.iterdir() if q.is_file() and q.suffix.lower() in SUPPORTED_SUFFIXES
            )
            files += found
        elif p.is_file():
            if p.suffix.lower() in SUPPORTED_SUFFIXES:
                files.append(p)
            else:
                skipped.append((p, f"unsupported file type {p.suffix!r}"))
        elif glob.has_magic(str(item)):
            matches = sorted(Path(m) for m in glob.glob(str(item), recursive=True))
            matches = [m for m in matches if m.is_file()]
            if not matches:
                skipped.append((p, "pattern matches no file"))
            for m in matches:
                if m.suffix.lower() in SUPPORTED_SUFFIXES:
                    files.append(m)
                else:
                    skipped.append((m, f"unsupported file type {m.suffix!r}"))
        else:
            skipped.append((p, "no such file or folder"))
    # remove duplicates, keep order
    seen: set[Path] = set()
    unique = []
    for f in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, skipped


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


def _default_executor(n_tasks: int) -> cf.Executor:
    try:
        n_cpu = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n_cpu = os.cpu_count() or 1
    return process_pool(min(n_cpu, n_tasks))


def convert(
    inputs,
    output_dir,
    *,
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
        patterns (``"data/**/*.c3d"`` is recursive).
    output_dir : str or path-like
        Folder for the outputs, created if needed; each input ``name.ext``
        becomes ``output_dir/name.h5`` holding one trial named ``name``.
    executor : concurrent.futures.Executor or None, optional
        Where to run the conversions: any Executor, e.g. a ThreadPoolExecutor,
        a ProcessPoolExecutor, or ``dask.distributed.Client(...).get_executor()``.
        Default: a process pool with one worker per available CPU, shut down at
        the end (an executor you pass is left running).
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
        untrusted sources): a file whose damage crashes or hangs a reader, or
        libhdf5 on an existing output store, is recorded as failed (a
        FileFormatError naming it) and the batch goes on. Without it, a crash
        in a worker of the default process pool stops every conversion still
        pending in that pool. Costs one process start (~1 s) per file.
    timeout : float or None, optional
        With `isolate`: seconds one file may take before its child is killed
        and the file recorded as failed. Default 60 s plus 1 s per 5 MB of input.

    Returns
    -------
    ConversionReport
        ``converted``, ``skipped`` and ``failed`` files, with the reason for
        each skip or failure.

    Raises
    ------
    DataError
        If `on_error` or `timeout` is invalid or `output_dir` is a file.

    Notes
    -----
    Every output is written atomically (see :func:`ahbm.io.hdf5.save_trial`), so
    a failing or interrupted conversion never leaves a truncated ``.h5`` file.
    C3D files are read by :func:`ahbm.io.c3d.read_c3d`, TRC files by
    :func:`ahbm.io.opensim.read_trc`.

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> report = convert([], "out", executor=ThreadPoolExecutor(1), progress=False)
    >>> print(report)
    converted 0, skipped 0, failed 0
    """
    if on_error not in ("continue", "raise"):
        raise DataError(f"`on_error` must be 'continue' or 'raise', got {on_error!r}")
    if timeout is not None and not isolate:
        raise DataError("`timeout` applies to isolate=True only; pass isolate=True or drop it")
    if timeout is not None:
        timeout = as_positive_float(timeout, "timeout", unit="s")
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"`output_dir` '{out}' exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)

    files, skipped = _expand(inputs)
    report = ConversionReport(skipped=list(skipped))
    tasks: list[tuple[Path, Path]] = []
    used: dict[str, Path] = {}
    for f in files:
        dst = out / f"{f.stem}.h5"
        if dst.name in used:
            report.skipped.append(
                (f, f"output name {dst.name} already used by {used[dst.name]}; rename one")
            )
            continue
        used[dst.name] = f
        if dst.exists() and not overwrite:
            report.skipped.append((f, f"output {dst} exists (pass overwrite=True to replace)"))
            continue
        tasks.append((f, dst))
    if not tasks:
        return report

    from tqdm.auto import tqdm

    own = executor is None
    ex = _default_executor(len(tasks)) if own else executor
    catch = on_error == "continue"
    futures = {}
    try:
        for src, dst in tasks:
            fut = ex.submit(
                _convert_one, str(src), str(dst), overwrite, catch, bool(isolate), timeout
            )
            futures[fut] = (src, dst)
        with tqdm(total=len(tasks), disable=not progress, unit="file", desc="ahbm convert") as bar:
            for fut in cf.as_completed(futures):
                src, dst = futures[fut]
                try:
                    _, _, reason = fut.result()
                except Exception as err:
                    if not catch:
                        for other in futures:
                            other.cancel()
                        raise
                    reason = f"{type(err).__name__}: {err}"  # worker crashed
                if reason is None:
                    report.converted.append((src, dst))
                else:
                    report.failed.append((src, reason))
                bar.update(1)
    finally:
        if own:
            ex.shutdown(wait=True, cancel_futures=True)
    order = {f: i for i, (f, _) in enumerate(tasks)}
    report.converted.sort(key=lambda x: order[x[0]])
    report.failed.sort(key=lambda x: order.get(x[0], 0))
    return report
