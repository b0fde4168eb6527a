"""TRC marker files (OpenSim, Motion Analysis): read into and write from a Trial.

Points are converted to metres by default; the original header is kept in
``trial.parameters["TRC"]``. Layout: "Marker (.trc) Files" in the OpenSim
User's Guide.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from ahbm._internal.text import (
    _atomic_write_text,
    _check_float_format,
    _fmt_header,
    _is_data_row,
    _parse_numeric_block,
    _read_text_lines,
    _to_number,
    _write_rows,
    length_unit_scale,
)
from ahbm._internal.validation import as_path, check_read_size, output_path
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io.trial import Trial, check_trial

__all__ = ["read_trc", "trc_time", "write_trc"]


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
        ``FileName``) and ``"Time"``, the file's Time column as written
        (float array, s; absent when that column is not a strictly
        increasing list of numbers): the times OpenSim's tools use, see
        :func:`trc_time`.

    Raises
    ------
    FileFormatError
        If the file is missing, not a TRC file, or its header and data disagree
        in a way that cannot be recovered (the message names the line).
    DataError
        If a marker coordinate is beyond 1000 m (after conversion to metres:
        :data:`MAX_MARKER_COORDINATE`), which no measurement can be; the
        message names the marker, the column and the frame.

    Warns
    -----
    AhbmWarning
        When ``NumFrames``/``NumMarkers`` disagree with the data actually present;
        when the ``Time`` column is more than half a frame away from ``Frame#``
        and ``DataRate`` (``trial.time`` follows ``Frame#``, :func:`trc_time`
        and ahbm's IK follow the Time column, as OpenSim does); when the Time
        column has a missing value or does not increase (OpenSim writes NaN
        times, or refuses the file; here both follow ``Frame#`` and
        ``DataRate``).

    Notes
    -----
    Layout: line 1 ``PathFileType 4 (X/Y/Z) name``; line 2 header keys; line 3
    their values; line 4 ``Frame# Time`` followed by one label per marker (each
    followed by two empty fields); line 5 ``X1 Y1 Z1 X2 ...``; then the data,
    tab separated, a missing marker being three empty fields. The trial's time
    of row ``k`` is ``(first_frame - 1 + k) / DataRate`` (a Trial has one rate);
    the Time column as written, often rounded (``0.017`` for 1/60 s), is kept in
    ``parameters["TRC"]["Time"]``.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((4, 2, 3)), point_labels=["LASI", "RASI"], point_rate=60.0)
    >>> write_trc(t, "walk.trc")  # in mm, OpenSim's usual unit
    >>> trial = read_trc("walk.trc")
    >>> trial.points.shape, trial.parameters["TRC"]["Units"], trial.point_units
    ((4, 2, 3), 'mm', 'm')
    """
    path = as_path(path)
    lines = _read_text_lines(path, "TRC")
    header, keys = _trc_header(lines, path)
    for required in ("DataRate", "Units"):
        if required not in header:
            raise FileFormatError(
                f"TRC file '{path}', line 2: header key {required!r} is missing "
                f"(found {', '.join(keys)})"
            )
    rate = header["DataRate"]
    if not isinstance(rate, int | float) or not _finite(rate) or rate <= 0:
        raise FileFormatError(
            f"TRC file '{path}', line 3: DataRate must be a positive number, got {rate!r}"
        )
    labels = _trc_labels(lines, path)
    # data starts after the X1/Y1/Z1 line and any blank lines
    start = 5
    if lines.has(4) and _is_data_row(lines[4]):  # no X1/Y1/Z1 line
        start = 4
    while lines.has(start) and not lines[start].strip():
        start += 1
    sep = "\t" if (lines.has(start) and "\t" in lines[start]) else "ws"
    data = _parse_numeric_block(lines, start, sep, path, "TRC")
    points = _trc_points(data, len(labels), path, start, len(lines.raw))
    _check_declared_counts(header, points.shape[0], len(labels), path)
    first_frame, file_time = _trc_first_frame(data, float(rate), path, start)
    if file_time is not None:  # (a header field of its own: the column as written)
        header["Time"] = file_time
    file_units = str(header["Units"])
    _check_marker_bounds(points, labels, file_units, first_frame, float(rate), path)
    out_units = file_units if units is None else str(units)
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


#: Largest plausible marker coordinate, m: a laboratory is not a kilometre wide.
MAX_MARKER_COORDINATE = 1e3


def first_beyond(values: np.ndarray, bound: float, *, missing_ok: bool = True):
    """Index (tuple) of the first value of `values` beyond ``±bound`` (C order), or None.

    The plausibility check of the readers and the OpenSim tools. Infinities
    are beyond any bound; NaN (a missing sample) is beyond it only when
    `missing_ok` is False. The search allocates nothing for arrays within the
    bound (NaN-ignoring min and max).

    Examples
    --------
    >>> first_beyond(np.array([[0.0, np.nan], [2e3, 1.0]]), 1e3)
    (1, 0)
    >>> first_beyond(np.array([0.0, np.nan]), 1e3) is None
    True
    """
    v = np.asarray(values)
    if v.size == 0:
        return None
    hi = np.fmax.reduce(v, axis=None)
    lo = np.fmin.reduce(v, axis=None)
    if hi <= bound and lo >= -bound and (missing_ok or not np.isnan(v).any()):
        return None
    if np.isnan(hi) and missing_ok:  # every value missing
        return None
    with np.errstate(invalid="ignore"):
        bad = np.abs(v) > bound if missing_ok else ~(np.abs(v) <= bound)
    hits = np.argwhere(bad)
    return None if hits.shape[0] == 0 else tuple(int(i) for i in hits[0])


def _check_marker_bounds(points, labels, file_units, first_frame, rate, path) -> None:
    """DataError for a marker coordinate beyond :data:`MAX_MARKER_COORDINATE` (in metres).

    Checked on the file's values, before any unit conversion (which could
    overflow); a file in an unknown unit is not checked.
    """
    try:
        metres = length_unit_scale(file_units, name="Units")
    except DataError:
        return
    where = first_beyond(points, MAX_MARKER_COORDINATE / metres)
    if where is None:
        return
    k, m, a = where
    value = float(points[k, m, a])
    in_metres = "" if metres == 1.0 else f" ({value * metres:g} m)"
    raise DataError(
        f"TRC file '{path}': marker '{labels[m]}' {'XYZ'[a]} (column {'XYZ'[a]}{m + 1}) in "
        f"frame {k} (data row {k + 1}, Frame# {first_frame + k}, time "
        f"{(first_frame - 1 + k) / rate:.6g} s) is {value:g} {file_units}{in_metres}, beyond "
        f"the bound of {MAX_MARKER_COORDINATE:g} m for a marker coordinate; the file is damaged "
        "or its Units header is wrong: fix or blank that value"
    )


def _finite(x) -> bool:
    """True for a finite number (an int too large for a float is not)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _trc_header(lines, path: Path) -> tuple[dict, list]:
    """The header of lines 1-3 as a dict (numbers converted) and the keys of line 2."""
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
    return header, keys


def _trc_labels(lines, path: Path) -> list:
    """Marker labels of line 4 (after Frame# and Time)."""
    label_line = lines[3]
    fields = label_line.split("\t") if "\t" in label_line else label_line.split()
    if len(fields) < 2 or fields[0].strip().lower() != "frame#":
        raise FileFormatError(
            f"TRC file '{path}', line 4: expected 'Frame#<TAB>Time<TAB>labels...', "
            f"got {label_line[:60]!r}"
        )
    return [f.strip() for f in fields[2:] if f.strip()]


def _trc_points(data, n_markers: int, path: Path, start: int, file_bytes: int):
    """Points (n_frames, n_markers, 3) from the data rows (missing columns NaN).

    Markers listed on line 4 without columns in the data rows are NaN; the
    missing values may not outnumber the bytes of the file (labels without
    data cannot make the read allocate more than the file describes).
    """
    n_frames = data.shape[0]
    if n_frames and data.shape[1] < 2:
        raise FileFormatError(
            f"TRC file '{path}', line {start + 1}: a data row needs Frame# and Time columns"
        )
    values3 = data[:, 2:] if n_frames else np.zeros((0, 3 * n_markers))
    need = 3 * n_markers
    if values3.shape[1] > need:
        if np.isfinite(values3[:, need:]).any():
            raise FileFormatError(
                f"TRC file '{path}': the data rows hold {values3.shape[1]} coordinate columns "
                f"but line 4 lists {n_markers} marker labels ({need} columns); "
                f"add the missing labels to line 4"
            )
        values3 = values3[:, :need]
    elif values3.shape[1] < need:
        n_missing = n_frames * (need - values3.shape[1])
        if n_missing > file_bytes:
            raise FileFormatError(
                f"TRC file '{path}', line 4: {n_markers} marker labels ({need} coordinate "
                f"columns) but the data rows hold {values3.shape[1]} columns; filling the "
                f"{n_missing} missing values would describe more than the file's {file_bytes} "
                "bytes: remove the extra labels from line 4 or add their columns"
            )
        check_read_size(
            16 * n_frames * need,
            f"{n_frames} frames of {n_markers} markers",
            f"TRC file '{path}'",
        )
        pad = np.full((n_frames, need - values3.shape[1]), np.nan)
        values3 = np.concatenate([values3, pad], axis=1)
    return values3.reshape(n_frames, n_markers, 3)


def _check_declared_counts(header: dict, n_frames: int, n_markers: int, path: Path) -> None:
    """Warn when NumFrames / NumMarkers disagree with the data rows and labels."""
    n_declared = header.get("NumFrames")
    if isinstance(n_declared, int) and n_declared != n_frames:
        warnings.warn(
            f"TRC file '{path}': header says NumFrames={n_declared} but {n_frames} data rows "
            f"were found; using the data rows",
            AhbmWarning,
            stacklevel=3,
        )
    m_declared = header.get("NumMarkers")
    if isinstance(m_declared, int) and m_declared != n_markers:
        warnings.warn(
            f"TRC file '{path}': header says NumMarkers={m_declared} but line 4 lists "
            f"{n_markers} labels; using the labels",
            AhbmWarning,
            stacklevel=3,
        )


def _trc_first_frame(data, rate: float, path: Path, start: int):
    """Frame# of the first row and the Time column (None if unusable), with warnings.

    The Time column is returned when every row has a number there and the
    numbers increase strictly (OpenSim's TRCFileAdapter refuses a file whose
    times do not increase and reads an empty field as NaN: measured with
    OpenSim 4.6); it warns when the column is more than half a frame away from
    ``Frame#``/``DataRate``, and when it is unusable.
    """
    n_frames = data.shape[0]
    if not n_frames:
        return 1, None
    frames = data[:, 0]
    if not np.isfinite(frames[0]) or frames[0] != np.round(frames[0]):
        raise FileFormatError(
            f"TRC file '{path}', line {start + 1}: Frame# must be an integer, got {frames[0]!r}"
        )
    if abs(frames[0]) > 2**31:
        raise FileFormatError(
            f"TRC file '{path}', line {start + 1}: Frame# {frames[0]:g} is out of range "
            f"(at most 2**31)"
        )
    first_frame = int(frames[0])
    times = np.array(data[:, 1], dtype=np.float64)
    expected = (first_frame - 1 + np.arange(n_frames)) / rate
    fallback = "trial.time and trc_time follow Frame# and DataRate"
    missing = np.flatnonzero(~np.isfinite(times))
    if missing.size:
        k = int(missing[0])
        warnings.warn(
            f"TRC file '{path}': the Time column has no number in {missing.size} of "
            f"{n_frames} data rows (first: data row {k + 1}, Frame# {frames[k]:g}); OpenSim "
            f"would use NaN times there; {fallback}: fill in the Time column to be sure",
            AhbmWarning,
            stacklevel=3,
        )
        return first_frame, None
    steps = np.diff(times)
    if steps.size and not np.all(steps > 0):
        k = int(np.flatnonzero(~(steps > 0))[0])
        warnings.warn(
            f"TRC file '{path}': the Time column does not increase at data row {k + 2} "
            f"(Frame# {frames[k + 1]:g}: {float(times[k])!r} s, then "
            f"{float(times[k + 1])!r} s); OpenSim refuses this file; {fallback}: fix the "
            "Time column",
            AhbmWarning,
            stacklevel=3,
        )
        return first_frame, None
    far = np.abs(times - expected) > 0.5 / rate
    if far.any():
        k = int(np.flatnonzero(far)[0])
        warnings.warn(
            f"TRC file '{path}': the Time column does not match Frame#/DataRate "
            f"(data row {k + 1}, Frame# {frames[k]:g}: {times[k]:g} s instead of "
            f"{expected[k]:g} s at {rate:g} Hz); trial.time follows Frame# and DataRate, "
            "trc_time and ahbm's IK the Time column, as OpenSim's tools do: fix the column "
            "or DataRate if they should agree",
            AhbmWarning,
            stacklevel=3,
        )
    return first_frame, times


def trc_time(trial) -> np.ndarray:
    """The times of a trial's frames as its TRC file wrote them (the times OpenSim uses).

    OpenSim's tools (InverseKinematicsTool, MarkersReference) take a marker
    file's times from its Time column, often rounded (``0.017`` for 1/60 s),
    not from ``DataRate``; a :class:`~ahbm.io.Trial` keeps one rate and a
    first frame (``trial.time``, exact multiples of ``1 / point_rate``). This
    gives the Time column that :func:`read_trc` kept in
    ``trial.parameters["TRC"]["Time"]``, when it still describes the trial's
    frames (as many times as frames, the file's rate), else ``trial.time``.

    Parameters
    ----------
    trial : Trial
        From :func:`read_trc` or any other source.

    Returns
    -------
    ndarray, shape (n_frames,)
        Times, s.

    Examples
    --------
    >>> t = Trial(points=np.zeros((3, 1, 3)), point_labels=["HEEL"], point_rate=60.0,
    ...           parameters={"TRC": {"DataRate": 60.0, "Time": np.array([0, 0.017, 0.033])}})
    >>> trc_time(t).tolist(), np.round(t.time, 6).tolist()
    ([0.0, 0.017, 0.033], [0.0, 0.016667, 0.033333])
    """
    params = getattr(trial, "parameters", None)
    trc = params.get("TRC") if isinstance(params, dict) else None
    times = trc.get("Time") if isinstance(trc, dict) else None
    if times is not None:
        try:
            t = np.asarray(times, dtype=np.float64)
            rate = float(trc.get("DataRate", float("nan")))
        except (TypeError, ValueError):
            t, rate = None, float("nan")
        if (
            t is not None
            and t.ndim == 1
            and t.shape[0] == trial.n_frames
            and rate == float(trial.point_rate)
            and np.isfinite(t).all()
            and np.all(np.diff(t) > 0)
        ):
            return t.copy()
    return np.asarray(trial.time, dtype=np.float64)


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
    The Time column is :func:`trc_time` (the column read by :func:`read_trc`
    while it fits the trial, else ``(Frame# - 1) / point_rate``).
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
    check_trial(trial)
    path = output_path(path)
    if not isinstance(units, str):
        raise DataError(f"Expected `units` to be a length unit such as 'mm', got {units!r}")
    _check_float_format(float_format)
    pts = np.asarray(trial.points, dtype=np.float64)
    n_frames, n_markers = pts.shape[:2]
    labels = list(trial.point_labels)
    for lab in labels:
        if "\t" in lab or "\n" in lab or not lab.strip():
            raise DataError(
                f"Marker label {lab!r} cannot be written to a TRC file (empty or contains a "
                f"tab/newline); rename it"
            )
    if not (trial.point_rate > 0):
        raise DataError("`trial.point_rate` must be positive to write a TRC file")
    if n_markers and not labels:
        raise DataError("`trial.point_labels` is empty; a TRC file needs one label per point")
    factor = length_unit_scale(trial.point_units, name="trial.point_units") / length_unit_scale(
        units
    )
    values = pts * factor if factor != 1.0 else pts
    old = trial.parameters.get("TRC", {}) if isinstance(trial.parameters, dict) else {}
    rate = float(trial.point_rate)
    frames = trial.first_frame + np.arange(n_frames)
    times = trc_time(trial)  # the Time column read, if it still fits; else Frame#/DataRate

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
