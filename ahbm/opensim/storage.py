"""OpenSim's motion and storage tables: MOT and STO files.

MOT and STO files become an :class:`~ahbm.io.OpenSimTable`: a pandas DataFrame
indexed by time plus the header metadata (the table type lives in
:mod:`ahbm.io.tables`, because HDF5 stores hold it too). Angles stored in
degrees (``inDegrees=yes``) are converted to radians on read and back to
degrees on write. Marker trajectories (TRC) are read by :mod:`ahbm.io.trc`.
File layouts follow OpenSim's documentation ("Storage (.sto) Files" / "Motion
(.mot) Files" in the OpenSim User's Guide).
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from ahbm._internal.text import (
    _atomic_write_text,
    _check_float_format,
    _parse_numeric_block,
    _read_text_lines,
    _write_rows,
    length_unit_scale,
)
from ahbm._internal.validation import as_path, output_path
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io.opensim_table import OpenSimTable

__all__ = [
    "read_mot",
    "write_mot",
    "write_mot_values",
    "table_to_grf",
    "length_unit_scale",
]

# Column names that are *not* angles even when a file says inDegrees=yes:
# translational coordinates (pelvis_tx), forces, points, torques, muscle states.
_LINEAR_RE = re.compile(
    r"(^|[_./])t[xyz]($|[_./])|force|torque|moment|cop|center_of_pressure|grf|emg|"
    r"activation|excitation|fiber|tendon|length|power|mass|^time$|_[fmp][xyz]$",
    re.IGNORECASE,
)


def _is_angle_column(name: str) -> bool:
    """Guess whether a MOT/STO column holds a rotational coordinate (or its speed)."""
    name = str(name)
    if "/" in name:  # OpenSim 4 state path, e.g. /jointset/hip_r/hip_flexion_r/value
        parts = [p for p in name.split("/") if p]
        if len(parts) >= 2 and parts[-1] in ("value", "speed"):
            name = parts[-2]
        else:
            return False
    return _LINEAR_RE.search(name) is None


def _check_angle_columns(angle_columns) -> None:
    """None or a list of column names, else DataError naming `angle_columns`."""
    if angle_columns is None:
        return
    if isinstance(angle_columns, (str, bytes, dict)) or not hasattr(angle_columns, "__iter__"):
        raise DataError(
            f"Expected `angle_columns` to be a list of column names, got {angle_columns!r}"
        )
    if not all(isinstance(c, str) for c in angle_columns):
        raise DataError(f"`angle_columns` must hold column names (str), got {angle_columns!r}")


def read_mot(path, *, angle_columns: list[str] | None = None) -> OpenSimTable:
    """Read an OpenSim MOT or STO file (motion, storage, GRF, IK/ID results).

    Parameters
    ----------
    path : str or path-like
        The ``.mot`` or ``.sto`` file.
    angle_columns : list of str or None, optional
        Columns holding angles (or angular speeds). Default None guesses: when the
        file says ``inDegrees=yes``, every column except translations
        (``*_tx``/``_ty``/``_tz``), forces, points, torques, moments and muscle
        quantities is an angle. Ignored when the file is not in degrees.

    Returns
    -------
    OpenSimTable
        ``data`` indexed by the first column (time, s); angle columns in radians
        when the file was in degrees; the header in ``name``, ``in_degrees``,
        ``header``, ``comments``.

    Raises
    ------
    FileFormatError
        If the file has no ``endheader`` line, no column labels, or non-numeric
        data, or rows whose length differs from the labels (the message names
        the file and the line).

    Warns
    -----
    AhbmWarning
        If ``nRows``/``nColumns`` disagree with the data found; if column labels
        are repeated (OpenSim's IK output of its gait2392 example repeats the
        ground-force labels of both feet): every column is kept, in file order,
        and the tools that look a column up by name decide (ID/IK/SO use the
        first of a repeated coordinate, as OpenSim does, with a warning; an
        external load whose identifier matches a repeated column is refused,
        as OpenSim refuses it).

    Notes
    -----
    Header: an optional name line, ``key=value`` lines (``version``, ``nRows``,
    ``nColumns``, ``inDegrees``, ``DataType``, ...), free text, ``endheader``;
    then a tab-separated label line and whitespace-separated numbers. Degrees to
    radians uses ``x * pi / 180``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"hip_flexion_r": [0.1, 0.2], "pelvis_tx": [1.0, 1.1]},
    ...                   index=pd.Index([0.0, 0.01], name="time"))
    >>> write_mot(df, "q.mot", in_degrees=True)
    >>> table = read_mot("q.mot")
    >>> table.angle_columns  # pelvis_tx is a translation: left in metres
    ['hip_flexion_r']
    """
    path = as_path(path)
    _check_angle_columns(angle_columns)
    lines = _read_text_lines(path, "MOT/STO")
    match = re.search(rb"(?im)^[ \t]*endheader[ \t\r]*$", lines.raw)
    end = None if match is None else lines.raw.count(b"\n", 0, match.start())
    if end is None:
        raise FileFormatError(
            f"'{path}' is not an OpenSim MOT/STO file: no 'endheader' line was found"
        )
    name = ""
    header: dict[str, str] = {}
    comments: list[str] = []
    for i in range(end):
        line = lines[i].strip()
        if not line:
            continue
        if "=" in line:
            k, v = line.split("=", 1)
            header[k.strip()] = v.strip()
        elif i == 0:
            name = line
        else:
            comments.append(line)
    in_degrees = header.pop("inDegrees", "no").strip().lower() in ("yes", "true", "1")
    n_rows_decl = header.pop("nRows", None)
    n_cols_decl = header.pop("nColumns", None)
    # OpenSim 4 STO files use datacolumns/datarows
    n_rows_decl = header.pop("datarows", n_rows_decl)
    n_cols_decl = header.pop("datacolumns", n_cols_decl)

    lab = end + 1
    while lines.has(lab) and not lines[lab].strip():
        lab += 1
    if not lines.has(lab):
        raise FileFormatError(f"MOT/STO file '{path}': no column labels after 'endheader'")
    label_line = lines[lab].rstrip("\r\n")
    labels = (
        [s.strip() for s in label_line.strip("\t ").split("\t")]
        if "\t" in label_line
        else label_line.split()
    )
    if any(not s for s in labels):
        raise FileFormatError(
            f"MOT/STO file '{path}', line {lab + 1}: empty column label; every column needs a name"
        )
    if len(set(labels)) != len(labels):
        dup = sorted(s for s, n in Counter(labels).items() if n > 1)
        more = f" and {len(dup) - 10} more" if len(dup) > 10 else ""
        warnings.warn(
            f"MOT/STO file '{path}', line {lab + 1}: duplicate column labels {dup[:10]}{more}; "
            "the table keeps every column (as OpenSim reads the file); a tool that needs one "
            "of them names it",
            AhbmWarning,
            stacklevel=2,
        )
    data = _parse_numeric_block(lines, lab + 1, "ws", path, "MOT/STO")
    if data.size == 0:
        data = np.zeros((0, len(labels)))
    if data.shape[1] != len(labels):
        raise FileFormatError(
            f"MOT/STO file '{path}': data rows have {data.shape[1]} values but line "
            f"{lab + 1} has {len(labels)} labels"
        )
    for key, decl, found in (
        ("nRows", n_rows_decl, data.shape[0]),
        ("nColumns", n_cols_decl, data.shape[1]),
    ):
        if decl is not None:
            try:
                ok = int(decl) == found
            except ValueError:
                ok = False
            if not ok:
                warnings.warn(
                    f"MOT/STO file '{path}': header says {key}={decl} but the data has "
                    f"{found}; using the data",
                    AhbmWarning,
                    stacklevel=2,
                )

    values = data[:, 1:]
    if in_degrees:
        if angle_columns is None:
            angles = [c for c in labels[1:] if _is_angle_column(c)]
        else:
            known = set(labels[1:])
            missing = [c for c in angle_columns if c not in known]
            if missing:
                raise DataError(
                    f"`angle_columns` names columns not in '{path}': {missing}; "
                    f"available: {labels[1:]}"
                )
            angles = list(angle_columns)
        angles = list(dict.fromkeys(angles))  # (a duplicated label once)
        if angles:  # in numpy: pandas sets many columns one by one (quadratic)
            chosen = set(angles)
            values = values.copy()
            # every column of an angle label, duplicates too
            values[:, [i for i, c in enumerate(labels[1:]) if c in chosen]] *= np.pi / 180.0
    else:
        angles = [] if angle_columns is None else list(angle_columns)
    return OpenSimTable.from_arrays(
        data[:, 0],
        values,
        labels[1:],
        index_name=labels[0],
        name=name,
        in_degrees=in_degrees,
        angle_columns=angles,
        header=header,
        comments=comments,
        source=str(path),
    )


def write_mot(
    table,
    path,
    *,
    in_degrees: bool | None = None,
    angle_columns: list[str] | None = None,
    name: str | None = None,
    float_format: str | None = None,
) -> None:
    """Write an OpenSim MOT/STO file.

    Parameters
    ----------
    table : OpenSimTable or pandas.DataFrame
        Data with angles in radians. A DataFrame is indexed by time (its index
        name, default ``"time"``, becomes the first label) and has one level of
        string columns.
    path : str or path-like
        Target file (``.mot`` or ``.sto``; same layout); written atomically.
    in_degrees : bool or None, optional
        Write angles in degrees and ``inDegrees=yes``. Default: what the table
        says (``table.in_degrees``), False for a DataFrame.
    angle_columns : list of str or None, optional
        Columns converted to degrees when `in_degrees`. Default: the table's
        ``angle_columns``; for a DataFrame the same guess as :func:`read_mot`.
    name : str or None, optional
        First header line; default the table's name or the file stem.
    float_format : str or None, optional
        printf format for the values; default None writes the shortest text
        that reads back to the identical float64.

    Raises
    ------
    DataError
        If the columns are not unique strings without tabs, or an angle column
        is missing.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"ankle_angle_r": [0.0, 0.1]}, index=pd.Index([0.0, 0.01], name="time"))
    >>> write_mot(df, "ankle.sto", in_degrees=True, name="ankle")
    >>> open("ankle.sto").read().splitlines()[:5]
    ['ankle', 'version=1', 'nRows=2', 'nColumns=2', 'inDegrees=yes']
    """
    _check_angle_columns(angle_columns)
    pd = sys.modules.get("pandas")  # (not loaded: `table` is no DataFrame)
    if isinstance(table, OpenSimTable):
        deg = table.in_degrees if in_degrees is None else bool(in_degrees)
        angles = list(table.angle_columns) if angle_columns is None else list(angle_columns)
        header = dict(table.header)
        comments = list(table.comments)
        title = table.name if name is None else name
        source = table  # its numbers without building a DataFrame
    elif pd is not None and isinstance(table, pd.DataFrame):
        deg = bool(in_degrees)
        angles = (
            [c for c in table.columns if _is_angle_column(c)]
            if angle_columns is None
            else list(angle_columns)
        )
        header = {}
        comments = []
        title = name
        source = table
    else:
        hint = (
            "; the arguments look swapped: write_mot(table, path)"
            if isinstance(table, str) or hasattr(table, "__fspath__")
            else ""
        )
        raise DataError(
            f"Expected `table` to be an OpenSimTable or a pandas DataFrame, got "
            f"{type(table).__name__}{hint}"
        )
    path = output_path(path)
    if title is not None and not isinstance(title, str):
        raise DataError(f"Expected `name` to be str or None, got {title!r}")
    _check_float_format(float_format)
    if isinstance(source, OpenSimTable):
        cols, index_name = source.columns, source.index_name
        try:
            values = np.array(source.values, dtype=np.float64)
            index = np.array(source.time, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError(f"`table` must hold numbers only: {err}") from err
    else:
        if isinstance(source.columns, pd.MultiIndex):
            raise DataError("`table` has MultiIndex columns; flatten them to strings first")
        cols = [str(c) for c in source.columns]
        index_name = str(source.index.name) if source.index.name is not None else "time"
        try:
            values = source.to_numpy(dtype=np.float64, copy=True)
            index = np.asarray(source.index, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError(f"`table` must hold numbers only: {err}") from err
    if len(set(cols)) != len(cols):
        dup = sorted(c for c, n in Counter(cols).items() if n > 1)
        raise DataError(
            f"`table` has duplicate column labels {dup}; a MOT/STO file written with them "
            "would be ambiguous: rename or drop the repeated columns (e.g. "
            "df.loc[:, ~df.columns.duplicated()] keeps the first of each)"
        )
    for c in cols:
        if not c or any(ch in c for ch in "\t\n\r"):
            raise DataError(f"Column label {c!r} cannot be written to a MOT/STO file")
    position = {c: k for k, c in enumerate(cols)}
    missing = [c for c in angles if str(c) not in position]
    if missing:
        raise DataError(f"`angle_columns` names columns not in the table: {missing}")
    if deg and angles:
        idx = [position[str(c)] for c in angles]
        values[:, idx] *= 180.0 / np.pi
    if title is None or title == "":
        title = Path(path).stem
    _write_mot_values(
        path, title, header, comments, index_name, cols, index, values, deg, float_format
    )


def write_mot_values(
    values,
    path,
    *,
    time,
    columns,
    name: str | None = None,
    in_degrees: bool = False,
    float_format: str | None = None,
) -> None:
    """Write plain arrays as an OpenSim MOT/STO file (:func:`write_mot` without a table).

    Parameters
    ----------
    values : array_like, shape (n_rows, n_columns)
        The numbers, written as they are (give angles in the unit that
        `in_degrees` states).
    path : str or path-like
        Target file (``.mot`` or ``.sto``); written atomically.
    time : array_like, shape (n_rows,)
        The first column, s.
    columns : sequence of str
        Labels of the columns of `values` (unique, without tabs or newlines).
    name : str or None, optional
        First header line; default the file stem.
    in_degrees : bool, optional
        What the header's ``inDegrees`` says (default False).
    float_format : str or None, optional
        As for :func:`write_mot` (default: the shortest text that reads back
        to the identical float64).

    Raises
    ------
    DataError
        Shapes that do not match, labels that are not unique strings without
        tabs, or non-numeric values.

    Examples
    --------
    >>> import numpy as np
    >>> write_mot_values(np.array([[1.5], [2.0]]), "tau.sto", time=[0.0, 0.01],
    ...                  columns=["knee_angle_r_moment"], name="Inverse Dynamics")
    >>> read_mot("tau.sto").data["knee_angle_r_moment"].tolist()
    [1.5, 2.0]
    """
    path = output_path(path)
    try:
        v = np.ascontiguousarray(values, dtype=np.float64)
        t = np.ascontiguousarray(time, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as err:
        raise DataError(f"`values` and `time` must hold numbers only: {err}") from err
    if isinstance(columns, str) or not hasattr(columns, "__iter__"):
        raise DataError(f"Expected `columns` to be a sequence of labels, got {columns!r:.60}")
    cols = list(columns)
    if not all(isinstance(c, str) for c in cols):
        raise DataError(f"`columns` must hold str labels, got {cols!r:.80}")
    if v.ndim != 2 or v.shape != (t.size, len(cols)):
        raise DataError(
            f"`values` has shape {v.shape}; with {t.size} times and {len(cols)} columns it "
            f"must be ({t.size}, {len(cols)})"
        )
    if len(set(cols)) != len(cols):
        dup = sorted(c for c, n in Counter(cols).items() if n > 1)
        raise DataError(
            f"`columns` has duplicate labels {dup}; a MOT/STO file written with them would be "
            "ambiguous: rename or drop the repeated columns"
        )
    for c in cols:
        if not c or any(ch in c for ch in "\t\n\r"):
            raise DataError(f"Column label {c!r} cannot be written to a MOT/STO file")
    if name is not None and not isinstance(name, str):
        raise DataError(f"Expected `name` to be str or None, got {name!r:.60}")
    _check_float_format(float_format)
    title = name if name else Path(path).stem
    _write_mot_values(path, title, {}, [], "time", cols, t, v, bool(in_degrees), float_format)


def _write_mot_values(
    path, title, header, comments, index_name, cols, index, values, deg, float_format=None
):
    """The MOT/STO text of checked arrays (`values` (n, len(cols)), `index` (n,)), atomically."""
    header = dict(header)
    header.pop("nRows", None)
    header.pop("nColumns", None)
    header.pop("inDegrees", None)
    header.setdefault("version", "1")

    def _write(fh):
        fh.write(f"{title}\n")
        fh.write(f"version={header.pop('version')}\n")
        fh.write(f"nRows={values.shape[0]}\n")
        fh.write(f"nColumns={values.shape[1] + 1}\n")
        fh.write(f"inDegrees={'yes' if deg else 'no'}\n")
        for k, v in header.items():
            fh.write(f"{k}={v}\n")
        for c in comments:
            fh.write(f"{c}\n")
        fh.write("endheader\n")
        fh.write("\t".join([index_name, *cols]) + "\n")
        fmt = repr if float_format is None else (lambda x: float_format % x)
        prefixes = [("NaN" if t != t else fmt(t)) + "\t" for t in index.tolist()]
        _write_rows(fh, prefixes, values, "NaN", float_format)

    _atomic_write_text(Path(path), _write)


def table_to_grf(table: OpenSimTable) -> dict[str, dict[str, np.ndarray]]:
    """Group the columns of an OpenSim ground-reaction table by force.

    Parameters
    ----------
    table : OpenSimTable
        A GRF table as read by :func:`read_mot`, with columns named
        ``<prefix>force_v{x,y,z}`` (force, N), ``<prefix>force_p{x,y,z}``
        (point of application / centre of pressure, m) and optionally
        ``<prefix>torque_{x,y,z}`` (free torque, N m), OpenSim's convention
        (e.g. ``ground_force_vx`` and ``1_ground_force_vx``).

    Returns
    -------
    dict
        ``{prefix: {"force": (n, 3), "point": (n, 3), "torque": (n, 3)}}`` with
        prefixes such as ``"ground_"`` and ``"1_ground_"``; ``torque`` is zeros
        when the file has no torque columns.

    Raises
    ------
    DataError
        If no complete force triplet is found, or a column of a triplet is
        repeated in the table (OpenSim's ExternalForce refuses it too).

    Notes
    -----
    OpenSim's ExternalForce looks these columns up by its ``force_identifier``
    (``ground_force_v``), ``point_identifier`` (``ground_force_p``) and
    ``torque_identifier`` (``ground_torque_``).

    Examples
    --------
    >>> import pandas as pd
    >>> cols = [f"ground_force_{q}{a}" for q in "vp" for a in "xyz"]
    >>> df = pd.DataFrame([[0.0, 700.0, 0.0, 0.3, 0.0, 0.1]], columns=cols,
    ...                   index=pd.Index([0.0], name="time"))
    >>> grf = table_to_grf(OpenSimTable(df))
    >>> grf["ground_"]["force"].tolist(), grf["ground_"]["torque"].tolist()
    ([[0.0, 700.0, 0.0]], [[0.0, 0.0, 0.0]])
    """
    if not isinstance(table, OpenSimTable):
        raise DataError(f"Expected `table` to be an OpenSimTable, got {type(table).__name__}")
    cols = set(table.columns)
    prefixes = []
    for c in table.columns:
        m = re.fullmatch(r"(.*)force_vx", c)
        if m and f"{m.group(1)}force_vy" in cols and f"{m.group(1)}force_vz" in cols:
            prefixes.append(m.group(1))
    if not prefixes:
        raise DataError(
            f"No force columns named '<prefix>force_vx/vy/vz' in table "
            f"{table.source or table.name!r}; columns are {table.columns}"
        )
    out: dict[str, dict[str, np.ndarray]] = {}
    n = len(table)
    position: dict[str, int] = {}
    repeated = set()
    for i, c in enumerate(table.columns):
        if c in position:
            repeated.add(c)
        position.setdefault(c, i)
    for p in prefixes:

        def grab(names, p=p):
            if all(x in cols for x in names):
                dup = [x for x in names if x in repeated]
                if dup:  # as OpenSim's ExternalForce, which needs 3 unique columns
                    raise DataError(
                        f"the force columns {dup} are repeated in table "
                        f"{table.source or table.name!r}; keep one column of each label"
                    )
                return table.values[:, [position[x] for x in names]].astype(np.float64)
            return None

        force = grab([f"{p}force_v{a}" for a in "xyz"])
        point = grab([f"{p}force_p{a}" for a in "xyz"])
        tprefix = p.replace("force_", "") if p.endswith("force_") else p
        torque = grab([f"{tprefix}torque_{a}" for a in "xyz"])
        out[p] = {
            "force": force,
            "point": point if point is not None else np.full((n, 3), np.nan),
            "torque": torque if torque is not None else np.zeros((n, 3)),
        }
    return out
