"""OpenSim text files: marker trajectories (TRC) and motion/storage tables (MOT, STO).

TRC files become a :class:`~ahbm.io.trial.Trial` (points converted to metres by
default, the original header kept in ``trial.parameters["TRC"]``). MOT and STO
files become an :class:`OpenSimTable`: a pandas DataFrame indexed by time plus
the header metadata. Angles stored in degrees (``inDegrees=yes``) are converted
to radians on read and back to degrees on write.

File layouts follow OpenSim's documentation ("Marker (.trc) Files" and
"Storage (.sto) Files" / "Motion (.mot) Files" in the OpenSim User's Guide).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ahbm._files import atomic_path
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io.trial import Trial

__all__ = [
    "OpenSimTable",
    "read_trc",
    "write_trc",
    "read_mot",
    "write_mot",
    "table_to_grf",
    "length_unit_scale",
]

# metres per unit
_LENGTH_UNITS = {
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "mm": 1e-3,
    "millimeter": 1e-3,
    "millimeters": 1e-3,
    "cm": 1e-2,
    "centimeter": 1e-2,
    "centimeters": 1e-2,
    "dm": 1e-1,
    "in": 0.0254,
    "inch": 0.0254,
    "inches": 0.0254,
    "ft": 0.3048,
}

# Column names that are *not* angles even when a file says inDegrees=yes:
# translational coordinates (pelvis_tx), forces, points, torques, muscle states.
_LINEAR_RE = re.compile(
    r"(^|[_./])t[xyz]($|[_./])|force|torque|moment|cop|center_of_pressure|grf|emg|"
    r"activation|excitation|fiber|tendon|length|power|mass|^time$|_[fmp][xyz]$",
    re.IGNORECASE,
)


# NaN as written by C/C++ runtimes (MSVC, glibc) besides pandas' defaults
_NAN_SPELLINGS = ["-nan(ind)", "nan(ind)", "-nan", "1.#QNAN", "-1.#IND", "1.#IND"]


def length_unit_scale(units: str, *, name: str = "units") -> float:
    """Return the number of metres in one `units` (``"mm"`` -> 0.001).

    Parameters
    ----------
    units : str
        A length unit: m, mm, cm, dm, in, ft (and long spellings).
    name : str, optional
        What to call the argument in an error message.

    Raises
    ------
    DataError
        If the unit is unknown.

    Examples
    --------
    >>> length_unit_scale("mm")
    0.001
    """
    key = str(units).strip().lower()
    if key not in _LENGTH_UNITS:
        raise DataError(
            f"Unknown length unit {units!r} for `{name}`; use one of "
            f"{', '.join(sorted(set(_LENGTH_UNITS)))}"
        )
    return _LENGTH_UNITS[key]


class _TextLines:
    """Lazy line access to a text file held as bytes (only header lines get decoded)."""

    def __init__(self, raw: bytes):
        if b"\n" not in raw and b"\r" in raw:  # old Mac line ends
            raw = raw.replace(b"\r", b"\n")
        self.raw = raw
        self._starts = [0]

    def has(self, i: int) -> bool:
        """True if the file has a line number `i` (0-based)."""
        return i >= 0 and self.offset(i) < len(self.raw)

    def offset(self, i: int) -> int:
        """Byte offset where line `i` starts (len(raw) past the end)."""
        while len(self._starts) <= i:
            last = self._starts[-1]
            j = self.raw.find(b"\n", last) if last < len(self.raw) else -1
            self._starts.append(len(self.raw) if j < 0 else j + 1)
        return self._starts[i]

    def __getitem__(self, i: int) -> str:
        if not self.has(i):
            raise IndexError(i)
        a, b = self.offset(i), self.offset(i + 1)
        chunk = self.raw[a:b].rstrip(b"\r\n")
        try:
            return chunk.decode("utf-8")
        except UnicodeDecodeError:
            return chunk.decode("latin-1")


def _read_text_lines(path: Path, kind: str) -> _TextLines:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise FileFormatError(f"Cannot read {kind} file '{path}': {err.strerror or err}") from err
    if b"\x00" in raw:
        raise FileFormatError(
            f"'{path}' is not a {kind} text file (it contains NUL bytes); "
            f"pass a file written by OpenSim or a motion capture exporter"
        )
    return _TextLines(raw)


def _is_data_row(line: str) -> bool:
    """True if the first field of `line` is a number (a data row, not a header line)."""
    fields = line.split()
    if not fields:
        return False
    try:
        float(fields[0])
    except ValueError:
        return False
    return True


def _to_number(text: str):
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _parse_numeric_block(
    lines: _TextLines, start: int, sep: str, path: Path, kind: str
) -> np.ndarray:
    """Parse line `start` onwards as a float table (empty fields -> NaN), vectorized by pandas."""
    import io

    body = memoryview(lines.raw)[lines.offset(start) :] if lines.has(start) else b""
    if not bytes(body[:4096]).strip() and not bytes(body).strip():
        return np.zeros((0, 0))
    try:
        df = pd.read_csv(
            io.BytesIO(body),
            sep="\t" if sep == "\t" else r"\s+",
            header=None,
            skip_blank_lines=True,
            dtype=np.float64,
            engine="c",
            encoding="latin-1",
            na_values=_NAN_SPELLINGS,
        )
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise FileFormatError(
            f"{kind} file '{path}': the data section (from line {start + 1}) is not a numeric "
            f"table: {err}"
        ) from err
    return df.to_numpy(dtype=np.float64)


# ----------------------------------------------------------------------------- TRC


def read_trc(path, *, units: str | None = "m") -> Trial:
    """Read an OpenSim/Motion Analysis TRC marker file into a Trial.

    Parameters
    ----------
    path : str or path-like
        The ``.trc`` file.
    units : str or None, optional
        Length unit of the returned points (default metres). ``None`` keeps the
        file's unit.

    Returns
    -------
    Trial
        ``points`` of shape (n_frames, n_markers, 3) in `units` (NaN where a
        marker is missing, i.e. an empty field), ``point_labels``,
        ``point_rate`` (DataRate, Hz), ``first_frame`` (the first ``Frame#``),
        ``source``, and ``parameters["TRC"]`` holding every header field of the
        file (``DataRate``, ``CameraRate``, ``NumFrames``, ``NumMarkers``,
        ``Units`` -- the original unit --, ``OrigDataRate``,
        ``OrigDataStartFrame``, ``OrigNumFrames``, ``PathFileType``,
        ``FileName``).

    Raises
    ------
    FileFormatError
        If the file is missing, not a TRC file, or its header and data disagree
        in a way that cannot be recovered (the message names the line).

    Warns
    -----
    AhbmWarning
        When ``NumFrames``/``NumMarkers`` disagree with the data actually present,
        or when the ``Time`` column is inconsistent with ``Frame#`` and
        ``DataRate`` (the trial's times follow ``Frame#``).

    Notes
    -----
    Layout: line 1 ``PathFileType 4 (X/Y/Z) name``; line 2 header keys; line 3
    their values; line 4 ``Frame# Time`` followed by one label per marker (each
    followed by two empty fields); line 5 ``X1 Y1 Z1 X2 ...``; then the data,
    tab separated, a missing marker being three empty fields. The trial's time
    of row ``k`` is ``(first_frame - 1 + k) / DataRate``.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((4, 2, 3)), point_labels=["LASI", "RASI"], point_rate=60.0)
    >>> write_trc(t, "walk.trc")  # in mm, OpenSim's usual unit
    >>> trial = read_trc("walk.trc")
    >>> trial.points.shape, trial.parameters["TRC"]["Units"], trial.point_units
    ((4, 2, 3), 'mm', 'm')
    """
    path = Path(path)
    lines = _read_text_lines(path, "TRC")
    if not lines.has(4) or not lines[0].lstrip().lower().startswith("pathfiletype"):
        raise FileFormatError(
            f"'{path}' is not a TRC file: line 1 must start with 'PathFileType' "
            f"and the header needs 5 lines"
        )
    first = [s.strip() for s in lines[0].split("\t")]
    if len(first) == 1:
        first = lines[0].split()
    keys = [k.strip() for k in lines[1].split("\t") if k.strip()] or lines[1].split()
    values = [v.strip() for v in lines[2].split("\t") if v.strip()] or lines[2].split()
    if len(values) < len(keys):
        raise FileFormatError(
            f"TRC file '{path}', line 3: {len(values)} header values for {len(keys)} "
            f"header keys on line 2 ({', '.join(keys)})"
        )
    header: dict = {}
    if len(first) > 1:
        header["PathFileType"] = _to_number(first[1])
    if len(first) > 2:
        header["PathFileTypeFormat"] = first[2]
    if len(first) > 3:
        header["FileName"] = "\t".join(first[3:]).strip()
    for k, v in zip(keys, values, strict=False):
        header[k] = _to_number(v)

    for required in ("DataRate", "Units"):
        if required not in header:
            raise FileFormatError(
                f"TRC file '{path}', line 2: header key {required!r} is missing "
                f"(found {', '.join(keys)})"
            )
    rate = header["DataRate"]
    if not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0:
        raise FileFormatError(
            f"TRC file '{path}', line 3: DataRate must be a positive number, got {rate!r}"
        )
    file_units = str(header["Units"])

    label_line = lines[3]
    tab = "\t" in label_line
    fields = label_line.split("\t") if tab else label_line.split()
    if len(fields) < 2 or fields[0].strip().lower() != "frame#":
        raise FileFormatError(
            f"TRC file '{path}', line 4: expected 'Frame#<TAB>Time<TAB>labels...', "
            f"got {label_line[:60]!r}"
        )
    labels = [f.strip() for f in fields[2:] if f.strip()]

    # data starts after the X1/Y1/Z1 line and any blank lines
    start = 5
    if lines.has(4) and _is_data_row(lines[4]):  # no X1/Y1/Z1 line
        start = 4
    while lines.has(start) and not lines[start].strip():
        start += 1
    sep = "\t" if (lines.has(start) and "\t" in lines[start]) else "ws"
    data = _parse_numeric_block(lines, start, sep, path, "TRC")

    n_frames = data.shape[0]
    n_markers = len(labels)
    if n_frames and data.shape[1] < 2:
        raise FileFormatError(
            f"TRC file '{path}', line {start + 1}: a data row needs Frame# and Time columns"
        )
    values3 = data[:, 2:] if n_frames else np.zeros((0, 3 * n_markers))
    need = 3 * n_markers
    if values3.shape[1] > need:
        extra = values3[:, need:]
        if np.isfinite(extra).any():
            raise FileFormatError(
                f"TRC file '{path}': the data rows hold {values3.shape[1]} coordinate columns "
                f"but line 4 lists {n_markers} marker labels ({need} columns); "
                f"add the missing labels to line 4"
            )
        values3 = values3[:, :need]
    elif values3.shape[1] < need:
        pad = np.full((n_frames, need - values3.shape[1]), np.nan)
        values3 = np.concatenate([values3, pad], axis=1)
    points = values3.reshape(n_frames, n_markers, 3)

    n_declared = header.get("NumFrames")
    if isinstance(n_declared, int) and n_declared != n_frames:
        warnings.warn(
            f"TRC file '{path}': header says NumFrames={n_declared} but {n_frames} data rows "
            f"were found; using the data rows",
            AhbmWarning,
            stacklevel=2,
        )
    m_declared = header.get("NumMarkers")
    if isinstance(m_declared, int) and m_declared != n_markers:
        warnings.warn(
            f"TRC file '{path}': header says NumMarkers={m_declared} but line 4 lists "
            f"{n_markers} labels; using the labels",
            AhbmWarning,
            stacklevel=2,
        )

    first_frame = 1
    if n_frames:
        frames = data[:, 0]
        if not np.isfinite(frames[0]) or frames[0] != np.round(frames[0]):
            raise FileFormatError(
                f"TRC file '{path}', line {start + 1}: Frame# must be an integer, got {frames[0]!r}"
            )
        first_frame = int(frames[0])
        times = data[:, 1]
        expected = (first_frame - 1 + np.arange(n_frames)) / float(rate)
        if np.isfinite(times).all() and np.max(np.abs(times - expected)) > 0.5 / float(rate):
            warnings.warn(
                f"TRC file '{path}': the Time column does not match Frame#/DataRate "
                f"(starting at {times[0]:g} s instead of {expected[0]:g} s); the trial's "
                f"times follow Frame# and DataRate",
                AhbmWarning,
                stacklevel=2,
            )

    if units is not None:
        try:
            factor = length_unit_scale(file_units, name="Units") / length_unit_scale(units)
        except DataError as err:
            raise FileFormatError(
                f"TRC file '{path}': cannot convert from its unit {file_units!r}: {err}; "
                f"pass units=None to keep the file's unit"
            ) from err
        if factor != 1.0:
            points = points * factor
        out_units = str(units)
    else:
        out_units = file_units

    return Trial(
        points=np.ascontiguousarray(points, dtype=np.float64),
        point_labels=labels,
        point_rate=float(rate),
        point_units=out_units,
        point_descriptions=[],
        first_frame=first_frame,
        parameters={"TRC": header},
        source=str(path),
    )


def _atomic_write_text(path: Path, writer) -> None:
    """Write a text file atomically (see :func:`ahbm._files.atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        writer(fh)


def write_trc(trial: Trial, path, *, units: str = "mm", float_format: str | None = None) -> None:
    """Write the points of a Trial to an OpenSim TRC file.

    Parameters
    ----------
    trial : Trial
        Needs ``points`` (n_frames, n_markers, 3) in ``trial.point_units``,
        ``point_labels`` and a positive ``point_rate``.
    path : str or path-like
        Target file; written atomically (temporary file, then rename).
    units : str, optional
        Length unit written to the file (default ``"mm"``, OpenSim's usual).
    float_format : str or None, optional
        printf format for coordinates, e.g. ``"%.6f"``; default None writes the
        shortest text that reads back to the identical float64.

    Raises
    ------
    DataError
        If the trial has no rate, inconsistent labels, or unknown units.

    Notes
    -----
    Missing samples (NaN) are written as empty fields, as OpenSim expects.
    ``CameraRate``, ``OrigDataRate``, ``OrigDataStartFrame`` and
    ``OrigNumFrames`` are taken from ``trial.parameters["TRC"]`` when present.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.zeros((3, 1, 3)), point_labels=["HEEL"], point_rate=100.0)
    >>> write_trc(t, "heel.trc", units="m")
    >>> read_trc("heel.trc").point_labels
    ['HEEL']
    """
    if not isinstance(trial, Trial):
        raise DataError(f"Expected `trial` to be a Trial, got {type(trial).__name__}")
    pts = np.asarray(trial.points, dtype=np.float64)
    if pts.ndim != 3 or pts.shape[2] != 3:
        raise DataError(
            f"Expected `trial.points` to have shape (n_frames, n_points, 3), got {pts.shape}"
        )
    n_frames, n_markers = pts.shape[:2]
    labels = list(trial.point_labels)
    if len(labels) != n_markers:
        raise DataError(
            f"`trial.point_labels` has {len(labels)} labels for {n_markers} points; "
            f"give one label per point"
        )
    for lab in labels:
        if "\t" in lab or "\n" in lab or not lab.strip():
            raise DataError(
                f"Marker label {lab!r} cannot be written to a TRC file (empty or contains a "
                f"tab/newline); rename it"
            )
    if not (trial.point_rate > 0):
        raise DataError("`trial.point_rate` must be positive to write a TRC file")
    factor = length_unit_scale(trial.point_units, name="trial.point_units") / length_unit_scale(
        units
    )
    values = pts * factor if factor != 1.0 else pts
    old = trial.parameters.get("TRC", {}) if isinstance(trial.parameters, dict) else {}
    rate = float(trial.point_rate)
    frames = trial.first_frame + np.arange(n_frames)
    times = (frames - 1) / rate

    head = [
        ["PathFileType", "4", "(X/Y/Z)", Path(path).name],
        [
            "DataRate",
            "CameraRate",
            "NumFrames",
            "NumMarkers",
            "Units",
            "OrigDataRate",
            "OrigDataStartFrame",
            "OrigNumFrames",
        ],
        [
            f"{rate:.2f}" if rate == round(rate, 2) else repr(rate),
            _fmt_header(old.get("CameraRate", rate)),
            str(n_frames),
            str(n_markers),
            units,
            _fmt_header(old.get("OrigDataRate", rate)),
            _fmt_header(old.get("OrigDataStartFrame", trial.first_frame)),
            _fmt_header(old.get("OrigNumFrames", n_frames)),
        ],
    ]
    label_line = "Frame#\tTime\t" + "".join(f"{lab}\t\t\t" for lab in labels)
    xyz_line = "\t\t" + "".join(f"X{i}\tY{i}\tZ{i}\t" for i in range(1, n_markers + 1))

    def _write(fh):
        for row in head:
            fh.write("\t".join(row) + "\n")
        fh.write(label_line + "\n")
        fh.write(xyz_line + "\n")
        fh.write("\n")
        prefixes = [
            f"{int(f)}\t{t!r}\t" for f, t in zip(frames.tolist(), times.tolist(), strict=True)
        ]
        _write_rows(fh, prefixes, values.reshape(n_frames, 3 * n_markers), "", float_format)

    _atomic_write_text(Path(path), _write)


def _write_rows(fh, prefixes: list[str], values: np.ndarray, na_rep: str, float_format) -> None:
    """Write ``prefix + tab-joined values`` per row; NaN as `na_rep`.

    Python's ``repr`` gives the shortest text that reads back to the same
    float64 (faster than pandas' CSV writer with full precision).
    """
    fmt = repr if float_format is None else (lambda x: float_format % x)
    rows = values.tolist()
    block = 2048
    for k in range(0, len(rows), block):
        fh.write(
            "".join(
                pre + "\t".join([na_rep if x != x else fmt(x) for x in row]) + "\n"
                for pre, row in zip(prefixes[k : k + block], rows[k : k + block], strict=True)
            )
        )


def _fmt_header(v) -> str:
    if isinstance(v, float):
        return f"{v:.2f}" if v == round(v, 2) else repr(v)
    return str(v)


# ----------------------------------------------------------------------------- MOT/STO


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
        return [str(c) for c in self.data.columns]

    def __len__(self) -> int:
        return len(self.data)


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
        data, or rows whose length differs from the labels (the message names the
        file and the line).

    Warns
    -----
    AhbmWarning
        If ``nRows``/``nColumns`` disagree with the data found.

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
    path = Path(path)
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
        dup = sorted({s for s in labels if labels.count(s) > 1})
        raise FileFormatError(
            f"MOT/STO file '{path}', line {lab + 1}: duplicate column labels {dup}"
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

    df = pd.DataFrame(data[:, 1:], columns=labels[1:], index=pd.Index(data[:, 0], name=labels[0]))
    if in_degrees:
        if angle_columns is None:
            angles = [c for c in labels[1:] if _is_angle_column(c)]
        else:
            missing = [c for c in angle_columns if c not in df.columns]
            if missing:
                raise DataError(
                    f"`angle_columns` names columns not in '{path}': {missing}; "
                    f"available: {labels[1:]}"
                )
            angles = list(angle_columns)
        if angles:
            df[angles] = df[angles].to_numpy() * (np.pi / 180.0)
    else:
        angles = [] if angle_columns is None else list(angle_columns)
    return OpenSimTable(
        data=df,
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
    if isinstance(table, OpenSimTable):
        df = table.data
        deg = table.in_degrees if in_degrees is None else bool(in_degrees)
        angles = list(table.angle_columns) if angle_columns is None else list(angle_columns)
        header = dict(table.header)
        comments = list(table.comments)
        title = table.name if name is None else name
    elif isinstance(table, pd.DataFrame):
        df = table
        deg = bool(in_degrees)
        angles = (
            [c for c in df.columns if _is_angle_column(c)]
            if angle_columns is None
            else list(angle_columns)
        )
        header = {}
        comments = []
        title = name
    else:
        raise DataError(
            f"Expected `table` to be an OpenSimTable or a pandas DataFrame, got "
            f"{type(table).__name__}"
        )
    if isinstance(df.columns, pd.MultiIndex):
        raise DataError("`table` has MultiIndex columns; flatten them to strings first")
    cols = [str(c) for c in df.columns]
    if len(set(cols)) != len(cols):
        raise DataError(f"`table` has duplicate column labels: {cols}")
    for c in cols:
        if not c or any(ch in c for ch in "\t\n\r"):
            raise DataError(f"Column label {c!r} cannot be written to a MOT/STO file")
    missing = [c for c in angles if c not in df.columns]
    if missing:
        raise DataError(f"`angle_columns` names columns not in the table: {missing}")
    try:
        values = df.to_numpy(dtype=np.float64, copy=True)
        index = np.asarray(df.index, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DataError(f"`table` must hold numbers only: {err}") from err
    if deg and angles:
        idx = [df.columns.get_loc(c) for c in angles]
        values[:, idx] *= 180.0 / np.pi
    index_name = str(df.index.name) if df.index.name is not None else "time"
    if title is None or title == "":
        title = Path(path).stem
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
        If no complete force triplet is found.

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
    for p in prefixes:

        def grab(names, p=p):
            if all(x in cols for x in names):
                return table.data[names].to_numpy(dtype=np.float64)
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
