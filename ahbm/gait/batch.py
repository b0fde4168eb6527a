"""Many walking trials through the gait pipeline: one combined HDF5 file and a summary table.

:func:`analyze_gait_files` runs :func:`~ahbm.gait.analyze_gait` on each
file (in worker processes with ``jobs=``, or on any
``concurrent.futures.Executor`` such as a Dask cluster's
``client.get_executor()``), stores every analysed trial with its results in
one ahbm HDF5 file, collects each file's warnings, and reports successes and
failures in one table (:class:`GaitBatchResult`).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import warnings
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ahbm._internal.patterns import expand_paths
from ahbm.errors import AhbmError, AhbmWarning, DataError
from ahbm.io.readers import SUPPORTED_SUFFIXES
from ahbm.types import ResultRepr

__all__ = ["GaitBatchResult", "analyze_gait_files", "expand_trial_paths"]


@dataclass(frozen=True, repr=False)
class GaitBatchResult(ResultRepr):
    """Output of :func:`analyze_gait_files`.

    Attributes
    ----------
    rows : list of dict
        One per file, in the order given: ``trial`` (path), ``name`` (in the
        HDF5 file), ``ok`` (bool), ``error`` (message or ""), ``cycles``
        (left, right), ``walking_speed`` (m/s), ``cadence`` (steps/min),
        ``flags`` (failed checks), ``warnings`` (messages).
    out : str
        The HDF5 file written ("" when none).

    Examples
    --------
    >>> row = {"trial": "a.c3d", "ok": False, "error": "DataError: no LASI"}
    >>> GaitBatchResult([row]).n_failed
    1
    """

    rows: list
    out: str = ""

    @property
    def n_failed(self) -> int:
        """Number of files that could not be analysed."""
        return sum(not r["ok"] for r in self.rows)

    def table(self) -> str:
        """The summary table (plain text): one line per trial, failures with their reason."""
        head = f"{'trial':<32} {'status':<7} {'cycles L/R':>10} {'speed':>7} {'cadence':>8}  notes"
        lines = [head, "-" * len(head)]
        for r in self.rows:
            name = Path(r["trial"]).name
            name = name if len(name) <= 32 else "..." + name[-29:]
            if r["ok"]:
                notes = "; ".join(r["flags"]) or (f"{len(r['warnings'])} warning(s)"
                                                 if r["warnings"] else "")  # fmt: skip
                lines.append(
                    f"{name:<32} {'ok':<7} {r['cycles'][0]:>4}/{r['cycles'][1]:<5} "
                    f"{r['walking_speed']:>7.2f} {r['cadence']:>8.1f}  {notes[:100]}"
                )
            else:
                lines.append(f"{name:<32} {'FAILED':<7} {'':>10} {'':>7} {'':>8}  {r['error']}")
        lines.append(
            f"{len(self.rows) - self.n_failed} of {len(self.rows)} trial(s) analysed"
            + (f", {self.n_failed} failed" if self.n_failed else "")
            + (f"; results in {self.out}" if self.out else "")
        )
        return "\n".join(lines)


def expand_trial_paths(patterns) -> list:
    """File paths from names, folders or glob patterns (expanded here too, e.g. on Windows).

    The expander of ``ahbm convert`` (:func:`ahbm._internal.patterns.expand_paths`): a
    folder gives its .c3d/.trc files, ``**`` follows no symbolically linked
    folder and looks at a bounded number of entries, a file reached twice is
    listed once, and FIFOs, devices, sockets and broken links are refused
    without being opened. A named file of another type is kept (its row then
    says it cannot be read).

    Raises
    ------
    DataError
        A pattern that matches no file, a name that is no file, an entry that
        is not a regular file, a pattern that looks at too many entries, or
        no file at all.

    Examples
    --------
    >>> expand_trial_paths(["no/such/*.c3d"])  # doctest: +SKIP
    Traceback (most recent call last):
    ahbm.errors.DataError: no file matches 'no/such/*.c3d'
    """
    if isinstance(patterns, str | os.PathLike):
        patterns = [patterns]
    out = []
    for found in expand_paths(patterns, suffixes=SUPPORTED_SUFFIXES, argname="files"):
        where = str(found.path)
        if found.kind == "file" or (found.kind == "unsupported" and found.named):
            out.append(where)
        elif found.kind == "nomatch":
            raise DataError(f"no file matches {where!r}")
        elif found.kind == "missing":
            raise DataError(f"trial file {where!r} does not exist")
        elif found.kind == "special":
            raise DataError(f"trial file {where!r}: {found.reason}; give a regular .c3d/.trc file")
        elif found.kind == "unlistable":
            warnings.warn(f"{where}: {found.reason}", AhbmWarning, stacklevel=2)
    if not out:
        raise DataError("no trial files given")
    return out


def _analyze_one(path, static, kwargs):
    """Worker: (trial, result, warnings), or (None, error message, warnings) on failure."""
    from ahbm.gait.markers import load_gait_trial
    from ahbm.gait.pipeline import analyze_gait

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            trial = load_gait_trial(path, "trial")
            result = analyze_gait(trial, static=static, **kwargs)
        except AhbmError as err:
            return None, f"{type(err).__name__}: {err}", [str(w.message) for w in caught]
    return trial, result, [str(w.message) for w in caught]


def analyze_gait_files(
    files,
    out=None,
    *,
    static=None,
    jobs: int | None = None,
    executor: cf.Executor | None = None,
    **kwargs,
) -> GaitBatchResult:
    """Analyse many walking trials; store them in one HDF5 file; report in one table.

    Parameters
    ----------
    files : sequence of str or path
        Trial files (.c3d, .trc) or glob patterns (``"trials/*.c3d"``).
    out : str or path, optional
        One ahbm HDF5 file for every analysed trial and its results (trial
        names: the file stems, made unique).
    static : str, path or Trial, optional
        The subject's static trial, used for every file.
    jobs : int, optional
        Worker processes (spawned; from a script, call this under
        ``if __name__ == "__main__":``). Default: one file after the other
        in this process.
    executor : concurrent.futures.Executor, optional
        Run the analyses there instead (not with `jobs`): a
        ``ThreadPoolExecutor`` (no guard needed), or a cluster,
        ``dask.distributed.Client(...).get_executor()``. Left open.
    **kwargs
        Passed to :func:`~ahbm.gait.analyze_gait` (``mass``,
        ``events``, ``belt_speed``, ``settings``, ...).

    Returns
    -------
    GaitBatchResult
        Its :meth:`~GaitBatchResult.table` lists every trial; a file that
        fails (an :class:`~ahbm.errors.AhbmError`) is a row with the reason,
        the others are still analysed and stored.

    Raises
    ------
    DataError
        No file matches, bad `jobs`, both `jobs` and `executor`, worker
        processes that cannot start (an unguarded script).

    Examples
    --------
    >>> res = analyze_gait_files(["trials/*.c3d"], "results.h5", static="static.c3d",
    ...                          jobs=4)  # doctest: +SKIP
    >>> print(res.table())  # doctest: +SKIP
    """
    from ahbm.gait.result import save_gait_result

    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise DataError(f"`jobs` must be a whole number of at least 1, got {jobs!r}")
        if executor is not None:
            raise DataError("give `jobs` or `executor`, not both")
    paths = expand_trial_paths(files)
    if out is not None:
        out = Path(out)
        if not out.parent.resolve().is_dir():
            raise DataError(f"`out` {str(out)!r}: folder does not exist; create it first")
    static_arg = str(static) if isinstance(static, os.PathLike) else static
    done = {}
    if executor is None and (jobs or 1) == 1:
        for p in paths:
            done[p] = _analyze_one(p, static_arg, kwargs)
    else:
        own = executor is None
        ex = executor
        if own:
            ctx = multiprocessing.get_context("spawn")
            ex = cf.ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=ctx)
        try:
            futures = {ex.submit(_analyze_one, p, static_arg, kwargs): p for p in paths}
            for fut in cf.as_completed(futures):
                done[futures[fut]] = fut.result()
        except BrokenProcessPool as err:
            raise DataError(
                "the gait worker processes could not start (a script that starts them must "
                "do so under `if __name__ == '__main__':`); or pass "
                "executor=concurrent.futures.ThreadPoolExecutor()"
            ) from err
        finally:
            if own:
                ex.shutdown()
    rows, names = [], set()
    for p in paths:
        trial, result, caught = done[p]
        row = {
            "trial": p,
            "name": "",
            "ok": trial is not None,
            "error": "",
            "warnings": caught,
            "cycles": (0, 0),
            "walking_speed": np.nan,
            "cadence": np.nan,
            "flags": (),
        }
        if trial is None:
            row["error"] = result
            rows.append(row)
            continue
        name = base = Path(p).stem
        k = 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.add(name)
        row.update(
            name=name,
            cycles=tuple(
                len(next(iter(result.cycles.get(s, {}).values()), [])) for s in ("Left", "Right")
            ),
            walking_speed=float(result.spatiotemporal.get("walking_speed", np.nan)),
            cadence=float(result.spatiotemporal.get("cadence", np.nan)),
            flags=tuple(result.flags),
        )
        if out is not None:
            save_gait_result(trial, result, out, name=name)
        rows.append(row)
    return GaitBatchResult(rows, "" if out is None else str(out))
