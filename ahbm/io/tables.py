"""Results and tables: OpenSim-style tables, result DataFrames and CSV files.

DataFrames use time (s) as index. Results have ``(result, component)``
columns; marker trajectories (:func:`ahbm.io.trial.trial_to_dataframe`) have
MultiIndex columns ``(marker, axis)`` with axes ``"x"``, ``"y"``, ``"z"``.
Metadata (rates, units, first frame) travel in ``DataFrame.attrs`` and, in CSV
files, in ``# key=value`` lines before the table. MATLAB files
(:mod:`ahbm.io.matfile`) hold the whole Trial as one struct, readable in MATLAB
without ahbm; no pickle is ever used.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import as_float_array, as_path, output_path
from ahbm.errors import DataError, FileFormatError
from ahbm.io.trial import Trial, check_trial, trial_to_dataframe

__all__ = [
    "results_to_dataframe",
    "dataframe_to_results",
    "write_csv",
    "read_csv",
]

_AXES = ("x", "y", "z")
_CSV_MAGIC = "# ahbm-table"
_CSV_VERSION = 1


# ----------------------------------------------------------------------------- DataFrames


def _component_labels(shape: tuple) -> list[str]:
    if len(shape) == 0:
        return [""]
    return [",".join(str(i) for i in idx) for idx in np.ndindex(*shape)]


def results_to_dataframe(results: dict, *, index=None) -> pd.DataFrame:
    """Computed results (``{name: array with time on axis 0}``) as one DataFrame.

    Parameters
    ----------
    results : dict of str to array_like
        Every array has the same length along axis 0; trailing axes are
        flattened into components.
    index : array_like or None, optional
        Row index (e.g. time in s); default 0..n-1.

    Returns
    -------
    pandas.DataFrame
        MultiIndex columns ``(result, component)``; the component is ``""`` for
        a 1-D result and the comma-joined index (``"0"``, ``"2,1"``) otherwise,
        so :func:`dataframe_to_results` recovers the shapes.

    Examples
    --------
    >>> import numpy as np
    >>> df = results_to_dataframe({"knee": np.zeros((5, 3)), "speed": np.ones(5)})
    >>> list(df.columns)[:2]
    [('knee', '0'), ('knee', '1')]
    """
    if not isinstance(results, dict):
        raise DataError(f"Expected `results` to be a dict, got {type(results).__name__}")
    blocks = []
    cols: list[tuple[str, str]] = []
    n = None
    for name, value in results.items():
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError(f"Result {name!r} is not a numeric array") from err
        if a.ndim == 0:
            raise DataError(f"Result {name!r} is a scalar; results need time along axis 0")
        if n is None:
            n = a.shape[0]
        elif a.shape[0] != n:
            raise DataError(
                f"Result {name!r} has {a.shape[0]} rows but the others have {n}; "
                f"resample it or put it in a separate table"
            )
        blocks.append(a.reshape(a.shape[0], -1))
        cols += [(str(name), c) for c in _component_labels(a.shape[1:])]
    n = 0 if n is None else n
    data = np.concatenate(blocks, axis=1) if blocks else np.zeros((n, 0))
    if index is not None:
        index = as_float_array(index, "index").ravel()
    idx = pd.Index(index, name="time") if index is not None else pd.RangeIndex(n)
    if len(idx) != n:
        raise DataError(f"`index` has {len(idx)} entries for {n} rows")
    return pd.DataFrame(
        data, index=idx, columns=pd.MultiIndex.from_tuples(cols, names=["result", "component"])
    )


def dataframe_to_results(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Inverse of :func:`results_to_dataframe`: ``{name: array}`` with original shapes.

    Examples
    --------
    >>> import numpy as np
    >>> r = dataframe_to_results(results_to_dataframe({"R": np.zeros((4, 3, 3))}))
    >>> r["R"].shape
    (4, 3, 3)
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"Expected `df` to be a DataFrame, got {type(df).__name__}")
    if not isinstance(df.columns, pd.MultiIndex) or df.columns.nlevels != 2:
        raise DataError("Expected `df` to have MultiIndex columns (result, component)")
    out: dict[str, np.ndarray] = {}
    names: list[str] = []
    for r in df.columns.get_level_values(0):
        if r not in names:
            names.append(r)
    n = len(df)
    for name in names:
        sub = df.loc[:, np.asarray(df.columns.get_level_values(0) == name)]
        comps = [
            "" if (isinstance(c, float) and math.isnan(c)) else str(c)
            for c in sub.columns.get_level_values(1)
        ]
        vals = sub.to_numpy(dtype=np.float64)
        if comps == [""]:
            out[str(name)] = vals[:, 0].copy()
            continue
        try:
            idx = np.array([[int(i) for i in c.split(",")] for c in comps])
        except ValueError as err:
            raise DataError(
                f"Result {name!r} has components {comps}; expected '0', '1,2', ..."
            ) from err
        shape = tuple(int(s) for s in idx.max(axis=0) + 1)
        if int(np.prod(shape)) != len(comps):
            raise DataError(f"Result {name!r}: components {comps} do not fill a shape {shape}")
        arr = np.full((n, *shape), np.nan)
        arr[(slice(None), *idx.T)] = vals
        out[str(name)] = arr
    return out


# ----------------------------------------------------------------------------- CSV


def _atomic_write(path: Path, write, *, binary: bool = False) -> None:
    """Write atomically (see :func:`ahbm._internal.files.atomic_path`); `write` takes a path
    (binary) or an open text file."""
    with atomic_path(path) as tmp:
        if binary:
            write(str(tmp))
        else:
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                write(fh)


def write_csv(data, path) -> None:
    """Write a Trial's markers, or any DataFrame made by this module, to CSV.

    Parameters
    ----------
    data : Trial or pandas.DataFrame
        A Trial is written through :func:`trial_to_dataframe`.
    path : str or path-like
        Target; written atomically.

    Notes
    -----
    Layout: ``# ahbm-table 1``, then ``# key=<json>`` lines for ``attrs`` and
    the number of column levels, then the pandas CSV (one header row per
    column level, then the index-name row for MultiIndex columns). Floats are
    written with round-trip precision; NaN is an empty field.

    Examples
    --------
    >>> t = Trial(points=np.ones((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> write_csv(t, "walk.csv")
    >>> open("walk.csv").read().splitlines()[6]
    'marker,A,A,A'
    """
    if isinstance(data, Trial):
        data = trial_to_dataframe(check_trial(data, name="data"))
    if not isinstance(data, pd.DataFrame):
        hint = (
            "; the arguments look swapped: write_csv(data, path)"
            if isinstance(data, str) or hasattr(data, "__fspath__")
            else ""
        )
        raise DataError(
            f"Expected `data` to be a Trial or DataFrame, got {type(data).__name__}{hint}"
        )
    path = output_path(path)
    levels = data.columns.nlevels
    try:
        meta = {k: json.dumps(v) for k, v in data.attrs.items()}
    except TypeError as err:
        raise DataError(
            f"DataFrame attrs must be JSON-serializable to go into a CSV: {err}"
        ) from err
    for k in meta:
        if "=" in str(k) or "\n" in str(k):
            raise DataError(f"attrs key {k!r} cannot go into a CSV header")

    def _write(fh):
        fh.write(f"{_CSV_MAGIC} {_CSV_VERSION}\n")
        fh.write(f"# column_levels={levels}\n")
        for k, v in meta.items():
            fh.write(f"# {k}={v}\n")
        data.to_csv(fh, lineterminator="\n")

    _atomic_write(Path(path), _write)


def read_csv(path) -> pd.DataFrame:
    """Read a CSV written by :func:`write_csv` (or a plain time-indexed CSV).

    Returns
    -------
    pandas.DataFrame
        With ``attrs`` restored; MultiIndex columns when the file has them.
        Pass it to :func:`~ahbm.io.trial.dataframe_to_trial` or :func:`dataframe_to_results`.

    Raises
    ------
    FileFormatError
        If the file is missing or is not a numeric table.

    Examples
    --------
    >>> from ahbm.io.trial import dataframe_to_trial
    >>> t = Trial(points=np.ones((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> write_csv(t, "walk.csv")
    >>> dataframe_to_trial(read_csv("walk.csv")).points.shape
    (2, 1, 3)
    """
    path = as_path(path)
    attrs: dict[str, Any] = {}
    levels = 1
    n_meta = 0
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.startswith("#"):
                    break
                n_meta += 1
                body = line[1:].strip()
                if body.startswith("ahbm-table") or "=" not in body:
                    continue
                k, v = body.split("=", 1)
                try:
                    val = json.loads(v)
                except json.JSONDecodeError:
                    val = v
                if k == "column_levels":
                    levels = int(val)
                else:
                    attrs[k] = val
    except (OSError, UnicodeDecodeError) as err:
        raise FileFormatError(f"Cannot read CSV file '{path}': {err}") from err
    header = list(range(levels)) if levels > 1 else 0
    try:
        df = pd.read_csv(path, skiprows=n_meta, header=header, index_col=0)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise FileFormatError(f"CSV file '{path}' is not a table: {err}") from err
    try:
        df = df.astype(np.float64)
    except (TypeError, ValueError) as err:
        raise FileFormatError(f"CSV file '{path}' holds non-numeric values: {err}") from err
    if levels > 1:
        # pandas names empty header cells "Unnamed: <i>_level_<j>" on read; restore ""
        df.columns = pd.MultiIndex.from_tuples(
            [
                tuple("" if re.fullmatch(r"Unnamed: \d+_level_\d+", str(x)) else x for x in col)
                for col in df.columns
            ],
            names=df.columns.names,
        )
        names = ["marker", "axis"] if "point_rate" in attrs else list(df.columns.names)
        df.columns = df.columns.set_names(names)
    df.attrs.update(attrs)
    return df
