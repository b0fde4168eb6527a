"""Trials and results as tables: pandas DataFrames, CSV files and MATLAB .mat files.

DataFrames use time (s) as index. Marker trajectories have MultiIndex columns
``(marker, axis)`` with axes ``"x"``, ``"y"``, ``"z"``; results have
``(result, component)`` columns. Metadata (rates, units, first frame) travel in
``DataFrame.attrs`` and, in CSV files, in ``# key=value`` lines before the
table. MATLAB files (:mod:`ahbm.io.matfile`, re-exported here) hold the whole
Trial as one struct, readable in MATLAB without ahbm; no pickle is ever used.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import as_float_array, as_path, as_positive_float, output_path
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io.matfile import read_mat, write_mat
from ahbm.io.trial import Trial, check_trial, point_kinds_from

__all__ = [
    "OpenSimTable",
    "trial_to_dataframe",
    "dataframe_to_trial",
    "analogs_to_dataframe",
    "results_to_dataframe",
    "dataframe_to_results",
    "write_csv",
    "read_csv",
    "write_mat",
    "read_mat",
]

_AXES = ("x", "y", "z")
_CSV_MAGIC = "# ahbm-table"
_CSV_VERSION = 1


# ----------------------------------------------------------------------------- DataFrames


@dataclass
class OpenSimTable:
    """A MOT or STO table: time-indexed columns plus the file's header.

    Attributes
    ----------
    data : pandas.DataFrame
        One column per file column except the first, indexed by the first
        column (normally ``time``, s). Angle columns are in radians (SI), see
        `angle_columns`.
    name : str
        The first header line (the table's name), "" if absent.
    in_degrees : bool
        What the file said (``inDegrees=yes``): its angles were in degrees.
    angle_columns : list of str
        Columns treated as angles: converted from degrees to radians on read
        when `in_degrees` is True, and back to degrees on write.
    header : dict of str to str
        The other ``key=value`` header lines (``version``, ``DataType``,
        ``OpenSimVersion``, ...), excluding ``nRows``/``nColumns``/``inDegrees``
        which are derived from the data.
    comments : list of str
        Free-text header lines (e.g. "Units are S.I. units ...").
    source : str
        The path the table was read from ("" if built in code).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"knee_angle_r": [0.5]}, index=pd.Index([0.0], name="time"))
    >>> write_mot(df, "ik.mot", in_degrees=True)
    >>> table = read_mot("ik.mot")
    >>> table.in_degrees, float(table.data["knee_angle_r"].iloc[0])  # radians again
    (True, 0.5)
    """

    data: pd.DataFrame
    name: str = ""
    in_degrees: bool = False
    angle_columns: list[str] = field(default_factory=list)
    header: dict[str, str] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def time(self) -> np.ndarray:
        """The index as a float array, shape (n_rows,)."""
        return self.data.index.to_numpy(dtype=np.float64)

    @property
    def columns(self) -> list[str]:
        """Column labels (without the time column)."""
        return [str(c) for c in self.data.columns.tolist()]  # (iterating an Index is slower)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        cols = self.columns
        shown = ", ".join(cols[:8]) + (f", ... (+{len(cols) - 8} more)" if len(cols) > 8 else "")
        t = self.time if len(self) else np.zeros(0)
        span = f"{t[0]:.4g}..{t[-1]:.4g} s" if t.size else "no rows"
        source = self.source if len(self.source) <= 60 else "..." + self.source[-57:]
        return (
            f"OpenSimTable(name={self.name[:40]!r}, {len(self)} rows {span}, {len(cols)} "
            f"columns [{shown}], in_degrees={self.in_degrees}, source={source!r})"
        )


def trial_to_dataframe(trial: Trial) -> pd.DataFrame:
    """Marker trajectories of a Trial as a DataFrame.

    Parameters
    ----------
    trial : Trial
        ``points`` of shape (n_frames, n_points, 3).

    Returns
    -------
    pandas.DataFrame, shape (n_frames, 3 * n_points)
        Index: time in s (``trial.time``, or frame numbers when the rate is
        unknown), named ``"time"`` (``"frame"``). Columns: MultiIndex
        (marker, axis), level names ``("marker", "axis")``. ``attrs``:
        ``point_rate``, ``point_units``, ``first_frame``, ``source``, and
        ``point_kinds`` (``{label: [kind, unit]}``) when the trial has model
        outputs, whose columns are in that unit, not in ``point_units``.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.arange(6.0).reshape(1, 2, 3), point_labels=["A", "B"],
    ...           point_rate=100.0)
    >>> trial_to_dataframe(t)[("B", "x")].tolist()
    [3.0]
    """
    check_trial(trial)
    pts = np.asarray(trial.points, dtype=np.float64)
    if len(trial.point_labels) != pts.shape[1]:
        raise DataError(
            f"`trial.point_labels` has {len(trial.point_labels)} labels for {pts.shape[1]} points"
        )
    cols = pd.MultiIndex.from_product(
        [list(trial.point_labels), list(_AXES)], names=["marker", "axis"]
    )
    if trial.point_rate > 0:
        index = pd.Index(trial.time, name="time")
    else:
        index = pd.Index(trial.first_frame + np.arange(pts.shape[0]), name="frame")
    df = pd.DataFrame(pts.reshape(pts.shape[0], 3 * pts.shape[1]), index=index, columns=cols)
    df.attrs.update(
        point_rate=float(trial.point_rate),
        point_units=str(trial.point_units),
        first_frame=int(trial.first_frame),
        source=str(trial.source),
    )
    if trial.point_kinds:
        df.attrs["point_kinds"] = {
            str(k): [str(v[0]), str(v[1])] for k, v in trial.point_kinds.items()
        }
    return df


def analogs_to_dataframe(trial: Trial) -> pd.DataFrame:
    """Analog channels of a Trial as a DataFrame.

    Returns
    -------
    pandas.DataFrame, shape (n_samples, n_channels)
        Index: ``trial.analog_time`` in s, named ``"time"``; one column per
        channel label. ``attrs``: ``analog_rate``, ``analog_units`` (list, one
        per channel).

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(analogs=np.zeros((4, 1)), analog_labels=["Fz"], analog_rate=1000.0,
    ...           point_rate=250.0)
    >>> analogs_to_dataframe(t).shape
    (4, 1)
    """
    check_trial(trial)
    a = np.asarray(trial.analogs, dtype=np.float64)
    if a.ndim != 2:
        raise DataError(
            f"Expected `trial.analogs` to have shape (n_samples, n_channels), got {a.shape}"
        )
    if len(trial.analog_labels) != a.shape[1]:
        raise DataError(
            f"`trial.analog_labels` has {len(trial.analog_labels)} labels for {a.shape[1]} channels"
        )
    index = (
        pd.Index(trial.analog_time, name="time")
        if trial.analog_rate > 0
        else pd.RangeIndex(a.shape[0], name="sample")
    )
    df = pd.DataFrame(a, index=index, columns=list(trial.analog_labels))
    df.attrs.update(analog_rate=float(trial.analog_rate), analog_units=list(trial.analog_units))
    return df


def _infer_rate(index: pd.Index, name: str) -> float:
    t = np.asarray(index, dtype=np.float64)
    if t.size < 2:
        raise DataError(
            f"Cannot infer the sample rate of `{name}` from fewer than 2 rows; pass the rate"
        )
    dt = np.diff(t)
    step = float(np.median(dt))
    if not (step > 0) or np.max(np.abs(dt - step)) > 1e-6 * max(step, 1e-12) + 1e-9:
        raise DataError(
            f"The index of `{name}` is not uniformly increasing; pass the rate explicitly"
        )
    return 1.0 / step


def dataframe_to_trial(
    points: pd.DataFrame,
    *,
    analogs: pd.DataFrame | None = None,
    point_rate: float | None = None,
    point_units: str | None = None,
) -> Trial:
    """Build a Trial from a marker DataFrame (and optionally an analog DataFrame).

    Parameters
    ----------
    points : pandas.DataFrame
        Index time in s (or frame numbers when named ``"frame"``); MultiIndex
        columns (marker, axis) with each marker having the axes x, y, z (any
        order, upper or lower case).
    analogs : pandas.DataFrame or None, optional
        Index time in s; one column per channel.
    point_rate : float or None, optional
        Hz. Default: ``points.attrs["point_rate"]``, else inferred from the
        index spacing.
    point_units : str or None, optional
        Default: ``points.attrs["point_units"]``, else ``"m"``.

    Returns
    -------
    Trial
        With ``first_frame = round(t0 * point_rate) + 1`` (``t0`` the first
        time), or from ``attrs`` when given; ``point_kinds`` from
        ``attrs["point_kinds"]`` (model outputs and their units).

    Raises
    ------
    DataError
        If the columns are not (marker, axis) pairs with x, y and z for every
        marker, or the rate cannot be determined.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((3, 1, 3)), point_labels=["A"], point_rate=50.0)
    >>> dataframe_to_trial(trial_to_dataframe(t)).point_rate
    50.0
    """
    if not isinstance(points, pd.DataFrame):
        raise DataError(f"Expected `points` to be a DataFrame, got {type(points).__name__}")
    if not isinstance(points.columns, pd.MultiIndex) or points.columns.nlevels != 2:
        raise DataError(
            "Expected `points` to have 2-level MultiIndex columns (marker, axis); build them "
            "with pandas.MultiIndex.from_product([labels, ['x', 'y', 'z']])"
        )
    if points.columns.has_duplicates:
        dup = points.columns[points.columns.duplicated()].tolist()
        raise DataError(
            f"`points` has duplicate (marker, axis) columns {dup[:5]}; give every marker a "
            f"unique label"
        )
    labels: list[str] = []
    for m in points.columns.get_level_values(0):
        if m not in labels:
            labels.append(str(m))
    n = len(points)
    arr = np.empty((n, len(labels), 3))
    axes_of = {}
    for m, a in points.columns:
        axes_of.setdefault(str(m), []).append(a)
    for j, m in enumerate(labels):
        lower = {str(a).lower(): a for a in axes_of[m]}
        if set(lower) != set(_AXES) or len(axes_of[m]) != 3:
            raise DataError(
                f"Marker {m!r} in `points` has axes {axes_of[m]}; expected exactly x, y, z"
            )
        for k, ax in enumerate(_AXES):
            col = points[(m, lower[ax])]
            try:
                arr[:, j, k] = col.to_numpy(dtype=np.float64)
            except (TypeError, ValueError) as err:
                raise DataError(f"Column ({m!r}, {ax!r}) of `points` is not numeric") from err
    attrs = points.attrs
    by_frame = points.index.name == "frame"
    if point_rate is not None:
        point_rate = as_positive_float(point_rate, "point_rate", unit="Hz")
    rate = point_rate if point_rate is not None else attrs.get("point_rate")
    if rate is None or not (float(rate) > 0):
        if by_frame:
            raise DataError("`points` is indexed by frame; pass `point_rate`")
        rate = _infer_rate(points.index, "points")
    rate = float(rate)
    if "first_frame" in attrs:
        first = int(attrs["first_frame"])
    elif n == 0:
        first = 1
    elif by_frame:
        first = int(points.index[0])
    else:
        t0 = float(points.index[0]) * rate
        first = int(round(t0)) + 1
        if abs(t0 - round(t0)) > 1e-6:
            warnings.warn(
                f"`points` starts at {points.index[0]} s, not a multiple of 1/{rate:g} s; "
                f"first_frame rounded to {first}",
                AhbmWarning,
                stacklevel=2,
            )
    units = point_units if point_units is not None else attrs.get("point_units", "m")
    trial = Trial(
        points=arr,
        point_labels=labels,
        point_rate=rate,
        point_units=str(units),
        first_frame=first,
        source=str(attrs.get("source", "")),
        point_kinds=point_kinds_from(
            attrs.get("point_kinds"), labels, where='`points.attrs["point_kinds"]`'
        ),
    )
    if analogs is not None:
        if not isinstance(analogs, pd.DataFrame):
            raise DataError(f"Expected `analogs` to be a DataFrame, got {type(analogs).__name__}")
        try:
            trial.analogs = analogs.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError("`analogs` must hold numbers only") from err
        trial.analog_labels = [str(c) for c in analogs.columns]
        arate = analogs.attrs.get("analog_rate")
        trial.analog_rate = (
            float(arate) if arate and float(arate) > 0 else _infer_rate(analogs.index, "analogs")
        )
        units_a = analogs.attrs.get("analog_units")
        trial.analog_units = (
            [str(u) for u in units_a]
            if units_a is not None and len(units_a) == trial.analogs.shape[1]
            else [""] * trial.analogs.shape[1]
        )
    return trial


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
        Pass it to :func:`dataframe_to_trial` or :func:`dataframe_to_results`.

    Raises
    ------
    FileFormatError
        If the file is missing or is not a numeric table.

    Examples
    --------
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
