"""Shared parsing of OpenSim-style text files (TRC, MOT, STO; internal)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from ahbm._engine.backend import use_compiled
from ahbm._internal.files import atomic_path
from ahbm._internal.validation import check_read_size
from ahbm.errors import DataError, FileFormatError

__all__ = ["length_unit_scale"]

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
    """The file's lines; the file and its parsed table must fit the read cap.

    The table parsed from a text file holds at most one float64 (8 bytes) per
    two bytes of text (a digit and a separator), typically far fewer; the
    file's bytes plus twice as many for the table are checked against
    :func:`ahbm.io.max_read_bytes` before the file is read.
    """
    try:
        size = path.stat().st_size
    except OSError as err:
        raise FileFormatError(f"Cannot read {kind} file '{path}': {err.strerror or err}") from err
    check_read_size(
        3 * size, f"reading {size} bytes of text and its table", f"{kind} file '{path}'"
    )
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


#: Bytes of a number block up to which a short command that has not loaded numba reads
#: it with numpy's reader (see ahbm._engine.backend): np.loadtxt reads about 160 MB/s
#: (a 1.5 MB GRF file in 9 ms), so at most ~0.1 s, against ~0.55 s to load numba.
_SMALL_BLOCK = 16_000_000

# a token of plain decimal notation (what float() and np.loadtxt both read, alike)
_DECIMAL_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _compiled_block(body) -> np.ndarray | None:
    """:func:`_regular_block` by the compiled reader, or None when it cannot decide.

    The compiled reader (:func:`ahbm._engine.jit_text.parse_decimal_block`)
    reads the decimal numbers that it can round exactly itself (most numbers
    written with up to 15 significant digits) and returns the span of the
    others; those are read here by ``float()`` when they are plain decimal
    notation. ``float()`` and ``np.loadtxt`` both round correctly, so the
    values equal loadtxt's bit for bit. Anything else (an irregular layout,
    NaN or inf spellings, text, mostly long numbers) returns None.
    """
    if use_compiled(len(body) <= _SMALL_BLOCK):
        from ahbm._engine.jit_text import POW10, parse_decimal_block
    else:  # a short command before numba is loaded: loadtxt decides (same values)
        return None
    status, values, hard = parse_decimal_block(np.frombuffer(body, dtype=np.uint8), POW10)
    if status or values.size == 0:
        return None
    if hard.shape[0]:
        if hard.shape[0] > values.size // 8:  # e.g. 17-digit text: loadtxt is as fast
            return None
        flat = values.reshape(-1)
        match = _DECIMAL_RE.fullmatch
        for k, start, end in hard.tolist():
            token = bytes(body[start:end])
            if match(token) is None:
                return None
            flat[k] = float(token)
    return values


def _regular_block(body) -> np.ndarray | None:
    """Rows of whitespace-separated finite numbers, all of one length, else None.

    The compiled reader (:func:`_compiled_block`) takes most such blocks
    2.5x faster than numpy's C reader (``np.loadtxt``), which takes the
    others 1.4-4.6x faster than pandas' for the sizes of MOT/STO files
    (150-1,500 rows). Anything else (a row of another length, a NaN spelling,
    text) returns None and pandas' reader decides, as it always did (missing
    trailing fields, NaN spellings, the error naming the line): the values
    read are the same (all three round correctly), so which reader ran is
    invisible to the caller.
    """
    values = _compiled_block(body)
    if values is not None:
        return values
    try:
        values = np.loadtxt(
            io.BytesIO(body), dtype=np.float64, comments=None, ndmin=2, encoding="latin-1"
        )
    except (ValueError, OverflowError):
        return None
    if values.size == 0 or np.isnan(values).any():  # NaN spellings: pandas' rules
        return None
    return values


#: Bytes of a tab-separated block read by :func:`_tab_block` rather than by pandas: a
#: short command (``ahbm ik`` on a walking trial's TRC) need not import pandas (0.3 s).
_SMALL_TAB_BLOCK = 2_000_000


def _tab_block(body) -> np.ndarray | None:
    """Rows of tab-separated numbers as pandas reads them (empty fields NaN), or None.

    Blank lines are skipped; a row shorter than the first is padded with NaN.
    None (pandas then decides, and raises where it does) for a row longer than
    the first, a NaN spelling that ``float`` does not read, or text.
    """
    text = bytes(body).decode("latin-1")
    rows = [line.split("\t") for line in text.splitlines() if line.strip(" \r")]
    if not rows:
        return None
    width = len(rows[0])
    values = np.full((len(rows), width), np.nan)
    try:
        for i, row in enumerate(rows):
            if len(row) > width:
                return None
            values[i, : len(row)] = [float(x) if x.strip() else np.nan for x in row]
    except ValueError:
        return None
    return values


def _parse_numeric_block(
    lines: _TextLines, start: int, sep: str, path: Path, kind: str
) -> np.ndarray:
    """Parse line `start` onwards as a float table (empty fields -> NaN), vectorized.

    ``sep="ws"``: fields separated by any whitespace (a regular block of finite numbers
    is read by :func:`_regular_block`, anything else by pandas); ``"\t"``: by tabs
    (empty fields are NaN).
    """
    body = memoryview(lines.raw)[lines.offset(start) :] if lines.has(start) else b""
    if not bytes(body[:4096]).strip() and not bytes(body).strip():
        return np.zeros((0, 0))
    if sep != "\t":
        values = _regular_block(body)
        if values is not None:
            return values
    elif len(body) <= _SMALL_TAB_BLOCK:
        values = _tab_block(body)
        if values is not None:
            return values
    import pandas as pd

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


def _atomic_write_text(path: Path, writer) -> None:
    """Write a text file atomically (see :func:`ahbm._internal.files.atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        writer(fh)


def _check_float_format(float_format) -> None:
    """None or a printf format of one float (e.g. ``"%.6f"``), else DataError."""
    if float_format is None:
        return
    try:
        ok = isinstance(float_format, str) and isinstance(float_format % 1.5, str)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DataError(
            f"Expected `float_format` to be a printf format of one number such as '%.6f' or "
            f"None, got {float_format!r}"
        )


def _write_rows(fh, prefixes: list[str], values: np.ndarray, na_rep: str, float_format) -> None:
    """Write ``prefix + tab-joined values`` per row; NaN as `na_rep`.

    Python's ``repr`` gives the shortest text that reads back to the same
    float64 (faster than pandas' CSV writer with full precision).
    """
    text = repr if float_format is None else float_format.__mod__
    fmt = text  # no NaN: the formatter itself, mapped in C over each row
    if np.isnan(values).any():

        def fmt(x):
            return na_rep if x != x else text(x)

    rows = values.tolist()
    block = 2048
    for k in range(0, len(rows), block):
        fh.write(
            "".join(
                [
                    pre + "\t".join(map(fmt, row)) + "\n"
                    for pre, row in zip(prefixes[k : k + block], rows[k : k + block], strict=True)
                ]
            )
        )


def _fmt_header(v) -> str:
    if isinstance(v, float):
        return f"{v:.2f}" if v == round(v, 2) else repr(v)
    return str(v)
