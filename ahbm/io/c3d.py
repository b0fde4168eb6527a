"""Read and write C3D motion-capture files with numpy.

`read_c3d` parses the header, the complete parameter section and the data
section of a C3D file written by any of the three processor types (Intel,
DEC, SGI/MIPS) in integer or floating-point storage, and returns a
:class:`~ahbm.io.trial.Trial`. The data section is decoded in one vectorized
pass (``np.frombuffer`` with a structured dtype over the whole block).

Every size read from the file is checked against the file length before any
array is allocated; a malformed or truncated file raises
:class:`~ahbm.errors.FileFormatError` naming the byte offset or the parameter
at fault, and recoverable inconsistencies issue an
:class:`~ahbm.errors.AhbmWarning`.

`write_c3d` writes an Intel floating-point C3D file atomically (temporary
file in the same folder, then ``os.replace``).

References
----------
Motion Lab Systems, *The C3D File Format User Guide* (2008), chapters 2-5
(header, parameter section, data section, processor formats).
"""

from __future__ import annotations

import math
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ahbm._files import atomic_path
from ahbm.errors import AhbmError, AhbmWarning, DataError, FileFormatError
from ahbm.io.trial import Event, Trial

__all__ = ["read_c3d", "write_c3d", "C3D_LENGTH_UNITS"]

#: Length units understood in POINT:UNITS, as metres per unit.
C3D_LENGTH_UNITS: dict[str, float] = {
    "mm": 1e-3,
    "millimeter": 1e-3,
    "millimeters": 1e-3,
    "millimetre": 1e-3,
    "millimetres": 1e-3,
    "cm": 1e-2,
    "dm": 1e-1,
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "in": 0.0254,
    "inch": 0.0254,
    "inches": 0.0254,
    "ft": 0.3048,
}
_INTERNAL = ("ahbm.io.c3d", "ahbm.io.forceplates")


def _warn(message: str) -> None:
    """Issue an AhbmWarning attributed to the first caller outside ahbm.io's readers."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_globals.get("__name__") in _INTERNAL:
        frame = frame.f_back
        level += 1
    warnings.warn(message, AhbmWarning, stacklevel=level)


_BLOCK = 512
_PROCESSORS = {84: "Intel", 85: "DEC", 86: "MIPS"}
_TYPE_SIZES = {-1: 1, 1: 1, 2: 2, 4: 4}


# ---------------------------------------------------------------------------
# low-level number decoding
# ---------------------------------------------------------------------------


def _dec_to_float(words: np.ndarray) -> np.ndarray:
    """Convert DEC VAX F-floating numbers to float32.

    Parameters
    ----------
    words : ndarray of uint32
        The four bytes of each number read as a little-endian uint32.

    Notes
    -----
    A DEC F-float stores its two 16-bit words in the opposite order to an
    IEEE little-endian float, and its exponent bias is 128 with a hidden
    bit worth 0.5, so after swapping the words the value is the IEEE value
    divided by 4: ``v = (-1)^s (1 + m / 2^23) 2^(e - 129)``; ``e = 0`` is
    zero (DEC has no denormals).
    """
    u = words.astype(np.uint32, copy=False)
    swapped = ((u & 0xFFFF) << 16) | (u >> 16)
    sign = np.where(swapped >> 31, -1.0, 1.0)
    exponent = ((swapped >> 23) & 0xFF).astype(np.int32)
    mantissa = (swapped & 0x7FFFFF).astype(np.float64)
    value = sign * np.ldexp(1.0 + mantissa / 8388608.0, exponent - 129)
    value[exponent == 0] = 0.0
    return value.astype(np.float32)


class _Format:
    """Byte order and float format of one processor type."""

    def __init__(self, processor: int):
        self.processor = processor
        self.name = _PROCESSORS[processor]
        self.big = processor == 86
        self.order = "big" if self.big else "little"
        e = ">" if self.big else "<"
        self.i2 = np.dtype(e + "i2")
        self.u2 = np.dtype(e + "u2")
        self.u4 = np.dtype(e + "u4")
        self.f4 = np.dtype(e + "f4")

    @property
    def raw_float(self) -> np.dtype:
        """dtype used to read floats from the file (uint32 for DEC)."""
        return self.u4 if self.processor == 85 else self.f4

    def floats(self, raw: np.ndarray) -> np.ndarray:
        """Decode an array read with `raw_float` to float32/float64."""
        if self.processor == 85:
            return _dec_to_float(raw)
        return raw

    def read_floats(self, buf: bytes, offset: int, count: int) -> np.ndarray:
        raw = np.frombuffer(buf, dtype=self.raw_float, count=count, offset=offset)
        return self.floats(raw)

    def read_i2(self, buf: bytes, offset: int, count: int = 1) -> np.ndarray:
        return np.frombuffer(buf, dtype=self.i2, count=count, offset=offset)

    def read_u2(self, buf: bytes, offset: int, count: int = 1) -> np.ndarray:
        return np.frombuffer(buf, dtype=self.u2, count=count, offset=offset)


# ---------------------------------------------------------------------------
# parameter section
# ---------------------------------------------------------------------------


class _Param:
    __slots__ = ("name", "group_id", "type", "dims", "value", "description", "locked", "offset")

    def __init__(self, name, group_id, ptype, dims, value, description, locked, offset):
        self.name = name
        self.group_id = group_id
        self.type = ptype
        self.dims = dims
        self.value = value
        self.description = description
        self.locked = locked
        self.offset = offset


def _s8(b: int) -> int:
    """Signed value of one byte."""
    return b - 256 if b > 127 else b


_NAME_RE = re.compile(rb"[!-~]+")


def _valid_name(raw: bytes) -> bool:
    """True if `raw` is a non-empty run of printable ASCII without spaces."""
    return _NAME_RE.fullmatch(raw) is not None


def _decode_value(buf, pos, ptype, dims, fmt: _Format):
    """Decode one parameter value starting at byte `pos` (bounds checked by caller)."""
    n = math.prod(dims) if dims else 1
    if ptype == -1:
        raw = bytes(buf[pos : pos + n])
        if not dims:
            return [raw.decode("latin-1").rstrip(" \x00")]
        width = dims[0]
        count = n // width if width else 0
        if width == 0:
            count = math.prod(dims[1:])
            return [""] * count if count <= 65535 else []
        if len(dims) == 1:
            return [raw.decode("latin-1").rstrip(" \x00")]
        return [
            raw[i * width : (i + 1) * width].decode("latin-1").rstrip(" \x00") for i in range(count)
        ]
    shape = tuple(dims) if dims else (1,)
    if n == 0 and math.prod(d for d in dims if d) > 2**31:
        shape = (0,)  # an empty value with absurd other dimensions
    if ptype == 1:
        arr = np.frombuffer(buf, dtype=np.int8, count=n, offset=pos).astype(np.int64)
    elif ptype == 2:
        arr = fmt.read_i2(buf, pos, n).astype(np.int64)
    else:
        arr = fmt.read_floats(buf, pos, n).astype(np.float64)
    return arr.reshape(shape, order="F")


def _parse_parameters(buf: bytes, start: int, source: str):
    """Parse the parameter section; return (format, n_blocks, groups, params)."""
    size = len(buf)
    if start + 4 > size:
        raise FileFormatError(
            f"{source}: the parameter section should start at byte {start} but the file "
            f"has only {size} bytes; the file is truncated or not a C3D file"
        )
    n_blocks = buf[start + 2]
    proc = buf[start + 3]
    if proc not in _PROCESSORS:
        raise FileFormatError(
            f"{source}: unknown processor type {proc} at byte {start + 3} (expected 84 "
            "Intel, 85 DEC or 86 MIPS); the parameter section is corrupted"
        )
    fmt = _Format(proc)
    groups: dict[int, tuple[str, str, bool]] = {}
    params: list[_Param] = []
    pos = start + 4
    while True:
        if pos + 2 > size:
            raise FileFormatError(
                f"{source}: parameter record at byte {pos} runs past the end of the file "
                f"({size} bytes); the file is truncated"
            )
        nchar = _s8(buf[pos])
        gid = _s8(buf[pos + 1])
        if nchar == 0 or gid == 0:
            break
        n = abs(nchar)
        name_end = pos + 2 + n
        if name_end + 2 > size:
            raise FileFormatError(
                f"{source}: parameter record at byte {pos} runs past the end of the file "
                f"({size} bytes); the file is truncated"
            )
        raw_name = bytes(buf[pos + 2 : name_end])
        offset = int.from_bytes(buf[name_end : name_end + 2], fmt.order, signed=True)
        body = name_end + 2
        nxt = name_end + offset if offset != 0 else None
        if not _valid_name(raw_name):
            _warn(
                f"{source}: malformed parameter record at byte {pos} (name {raw_name!r} is "
                "not printable ASCII); the rest of the parameter section is ignored"
            )
            break
        name = raw_name.decode("ascii").upper()
        if nxt is not None and nxt <= body:
            _warn(
                f"{source}: parameter record {name!r} at byte {pos} has a bogus offset "
                f"({offset}) to the next record; the rest of the parameter section is "
                "ignored"
            )
            if gid < 0:
                groups.setdefault(-gid, (name, "", nchar < 0))
            break
        limit = size if nxt is None else min(nxt, size)
        computed = None
        nxt_ok = nxt is None or _plausible_record(buf, nxt)
        if not nxt_ok:
            limit = size  # parse the record on its own; the offset is checked below
        try:
            if gid < 0:
                if body + 1 > limit:
                    raise _RecordError("group description length beyond record")
                dlen = buf[body]
                desc = bytes(buf[body + 1 : body + 1 + dlen]).decode("latin-1").rstrip()
                computed = body + 1 + dlen
                if -gid in groups:
                    _warn(
                        f"{source}: group id {-gid} defined twice (byte {pos}, {name!r}); "
                        "the first definition is kept"
                    )
                else:
                    groups[-gid] = (name, desc, nchar < 0)
            else:
                if body + 2 > limit:
                    raise _RecordError("type/dimension bytes beyond record")
                ptype = _s8(buf[body])
                if ptype not in _TYPE_SIZES:
                    raise _RecordError(f"invalid data type {ptype} (expected -1, 1, 2 or 4)")
                ndim = buf[body + 1]
                if body + 2 + ndim > limit:
                    raise _RecordError("dimensions beyond record")
                dims = [int(d) for d in buf[body + 2 : body + 2 + ndim]]
                nbytes = math.prod(dims) * _TYPE_SIZES[ptype] if dims else (_TYPE_SIZES[ptype])
                vpos = body + 2 + ndim
                if vpos + nbytes > limit:
                    raise _RecordError(
                        f"value of {nbytes} bytes (dimensions {dims}) runs past the record end"
                    )
                value = _decode_value(buf, vpos, ptype, dims, fmt)
                dpos = vpos + nbytes
                desc = ""
                if dpos < limit:
                    dlen = buf[dpos]
                    desc = bytes(buf[dpos + 1 : min(dpos + 1 + dlen, limit)]).decode("latin-1")
                    desc = desc.rstrip()
                    computed = dpos + 1 + dlen
                params.append(_Param(name, gid, ptype, dims, value, desc, nchar < 0, pos))
        except _RecordError as err:
            if nxt is None or nxt >= size:
                raise FileFormatError(
                    f"{source}: parameter {name!r} at byte {pos} is malformed: {err}"
                ) from None
            _warn(f"{source}: parameter {name!r} at byte {pos} is malformed ({err}); skipped")
        if nxt is None:
            break
        if not nxt_ok and computed is not None and computed != nxt:
            if _plausible_record(buf, computed):
                _warn(
                    f"{source}: parameter {name!r} at byte {pos} points to byte {nxt} for the "
                    f"next record, which is not a valid record; continuing at byte {computed} "
                    "where this record ends"
                )
                nxt = computed
        pos = nxt
    return fmt, n_blocks, groups, params


def _plausible_record(buf: bytes, pos: int) -> bool:
    """True if a parameter record (or the terminator) can start at `pos`."""
    if pos + 2 > len(buf):
        return False
    n = abs(_s8(buf[pos]))
    if n == 0:
        return True
    if buf[pos + 1] == 0 or pos + 4 + n > len(buf):
        return False
    return _valid_name(bytes(buf[pos + 2 : pos + 2 + n]))


class _RecordError(Exception):
    pass


def _build_tree(groups, params, source):
    """Arrange parsed records as {GROUP: {PARAM: value}} plus metadata dicts."""
    tree: dict[str, Any] = {}
    descriptions: dict[str, str] = {}
    types: dict[str, int] = {}
    dimensions: dict[str, list[int]] = {}
    names = {}
    for gid, (name, desc, _locked) in sorted(groups.items()):
        if name in tree:
            _warn(f"{source}: group {name!r} appears twice; parameters are merged")
        tree.setdefault(name, {})
        names[gid] = name
        descriptions[name] = desc
    for p in params:
        gname = names.get(p.group_id)
        if gname is None:
            gname = f"GROUP{p.group_id}"
            if gname not in tree:
                _warn(
                    f"{source}: parameter {p.name!r} at byte {p.offset} belongs to group id "
                    f"{p.group_id}, which is not defined; stored under {gname!r}"
                )
                tree[gname] = {}
        key = f"{gname}:{p.name}"
        if p.name in tree[gname]:
            _warn(f"{source}: parameter {key} defined twice; the last definition is kept")
        tree[gname][p.name] = p.value
        descriptions[key] = p.description
        types[key] = p.type
        dimensions[key] = list(p.dims)
    return tree, descriptions, types, dimensions


# ---------------------------------------------------------------------------
# helpers for typed access to the parameter tree
# ---------------------------------------------------------------------------


class _Params:
    """Typed, forgiving access to a parameter tree with warnings on mismatch."""

    def __init__(self, tree, types, source):
        self.tree = tree
        self.types = types
        self.source = source

    def get(self, group, name):
        return self.tree.get(group, {}).get(name)

    def has(self, group, name):
        return name in self.tree.get(group, {})

    def strings(self, group, name) -> list[str] | None:
        v = self.get(group, name)
        if v is None:
            return None
        if isinstance(v, list):
            return list(v)
        _warn(f"{self.source}: parameter {group}:{name} should hold text; ignored")
        return None

    def numbers(self, group, name) -> np.ndarray | None:
        v = self.get(group, name)
        if v is None:
            return None
        if isinstance(v, np.ndarray):
            return v
        _warn(f"{self.source}: parameter {group}:{name} should be numeric; ignored")
        return None

    def scalar(self, group, name, *, unsigned=False) -> float | None:
        v = self.numbers(group, name)
        if v is None or v.size == 0:
            return None
        x = v.reshape(-1)[0]
        if unsigned and self.types.get(f"{group}:{name}") == 2 and x < 0:
            x = x + 65536
        return float(x)

    def concat_strings(self, group, name) -> list[str] | None:
        """NAME, NAME2, NAME3 ... concatenated (long label lists)."""
        first = self.strings(group, name)
        if first is None:
            return None
        out = list(first)
        k = 2
        while self.has(group, f"{name}{k}"):
            more = self.strings(group, f"{name}{k}")
            if more is None:
                break
            out.extend(more)
            k += 1
        return out

    def concat_numbers(self, group, name) -> np.ndarray | None:
        first = self.numbers(group, name)
        if first is None:
            return None
        parts = [first.reshape(-1, order="F")]
        k = 2
        while self.has(group, f"{name}{k}"):
            more = self.numbers(group, f"{name}{k}")
            if more is None:
                break
            parts.append(more.reshape(-1, order="F"))
            k += 1
        return np.concatenate(parts)


def _fit_length(values, n, what, default, source, *, warn=True):
    """Pad or truncate a per-channel list to `n` entries with a warning."""
    if values is None:
        return [default(i) for i in range(n)]
    if len(values) < n:
        if warn:
            _warn(
                f"{source}: {what} has {len(values)} entries for {n} channels; "
                "missing entries are filled with defaults"
            )
        return list(values) + [default(i) for i in range(len(values), n)]
    return list(values[:n])


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


def _load(path) -> tuple[bytes, str]:
    """Return the file content and a display name for messages."""
    if isinstance(path, (bytes, bytearray, memoryview)):
        return bytes(path), "<bytes>"
    if hasattr(path, "read"):
        try:
            data = path.read()
        except (OSError, ValueError) as err:
            raise FileFormatError(f"cannot read C3D data from file object: {err}") from err
        if not isinstance(data, (bytes, bytearray)):
            raise FileFormatError("the file object must be opened in binary mode ('rb')")
        return bytes(data), getattr(path, "name", "<file object>")
    try:
        p = Path(os.fspath(path))
    except TypeError as err:
        raise FileFormatError(
            f"`path` must be a path, bytes or a binary file object, got {type(path).__name__}"
        ) from err
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FileFormatError(f"C3D file {str(p)!r} does not exist") from None
    except OSError as err:
        raise FileFormatError(f"cannot read C3D file {str(p)!r}: {err}") from err
    return data, str(p)


def _read_header(buf: bytes, fmt: _Format, source: str) -> dict[str, Any]:
    u2 = fmt.read_u2(buf, 0, 256)
    i2 = fmt.read_i2(buf, 0, 256)
    h = {
        "parameter_block": int(buf[0]),
        "n_points": int(u2[1]),
        "n_analog_per_frame": int(u2[2]),
        "first_frame": int(u2[3]),
        "last_frame": int(u2[4]),
        "max_gap": int(u2[5]),
        "scale": float(fmt.read_floats(buf, 12, 1)[0]),
        "data_block": int(u2[8]),
        "analog_per_frame": int(u2[9]),
        "frame_rate": float(fmt.read_floats(buf, 20, 1)[0]),
        "processor": fmt.name,
    }
    # events: word 150 is the 4-character label key, word 151 the count
    n_events = int(i2[150])
    events = []
    if 0 < n_events <= 18:
        times = fmt.read_floats(buf, 304, 18).astype(np.float64)
        flags = np.frombuffer(buf, dtype=np.uint8, count=18, offset=376)
        for k in range(n_events):
            label = bytes(buf[396 + 4 * k : 400 + 4 * k]).decode("latin-1").strip(" \x00")
            t = float(times[k])
            if math.isfinite(t):
                events.append({"label": label, "time": t, "display": int(flags[k])})
    elif n_events != 0:
        _warn(
            f"{source}: the header reports {n_events} events (0-18 allowed); header events ignored"
        )
    h["events"] = events
    return h


def _frame_count(h, P: _Params, source) -> tuple[int, int]:
    """First frame number (1-based) and number of frames."""
    first = h["first_frame"]
    last = h["last_frame"]
    n = last - first + 1 if last >= first else 0
    start_field = P.numbers("TRIAL", "ACTUAL_START_FIELD")
    end_field = P.numbers("TRIAL", "ACTUAL_END_FIELD")
    if start_field is not None and end_field is not None:
        if start_field.size >= 2 and end_field.size >= 2:
            s = start_field.reshape(-1)[:2].astype(np.int64) & 0xFFFF
            e = end_field.reshape(-1)[:2].astype(np.int64) & 0xFFFF
            first_t = int(s[0] + 65536 * s[1])
            last_t = int(e[0] + 65536 * e[1])
            n_t = last_t - first_t + 1
            if n_t > 0 and n_t != n:
                if last == 65535 or last_t > 65535:
                    return max(first_t, 1), n_t
                _warn(
                    f"{source}: TRIAL:ACTUAL_START_FIELD/ACTUAL_END_FIELD ({first_t}-{last_t}) "
                    f"disagree with the header frames ({first}-{last}); the header is used"
                )
    long_frames = P.scalar("POINT", "LONG_FRAMES")
    if long_frames is not None and math.isfinite(long_frames) and long_frames > n:
        if last == 65535 and long_frames < 2**40:
            return max(first, 1), int(long_frames)
    return max(first, 1), n


def _unit_factor(units: str | None) -> float | None:
    if units is None:
        return None
    return C3D_LENGTH_UNITS.get(units.strip().lower())


def read_c3d(path, *, units: str | None = "m") -> Trial:
    """Read a C3D file into a :class:`~ahbm.io.trial.Trial`.

    Parameters
    ----------
    path : str, path-like, bytes or binary file object
        The C3D file, or its content.
    units : {"m", "mm", "cm"} or None, optional
        Length unit of the returned points and residuals (default metres).
        ``None`` keeps the unit of the file (POINT:UNITS). Force plate
        outputs are always in SI units (N, N m, m).

    Returns
    -------
    Trial
        ``points`` (n_frames, n_points, 3) with NaN where the file marks a
        sample invalid, ``point_mask`` (True where valid), ``point_residuals``,
        ``analogs`` (n_samples, n_channels) with ``(raw - OFFSET) * SCALE *
        GEN_SCALE`` applied, labels, units, descriptions, rates, the first
        frame number, force plates, events, subject metadata, and the full
        parameter tree in ``parameters``: ``{GROUP: {PARAM: value}}`` where a
        value is a list of str (character parameters) or an ndarray shaped
        like the C3D dimensions (Fortran order, as the file stores it); plus
        ``"__descriptions__"`` (``{"GROUP": str, "GROUP:PARAM": str}``),
        ``"__types__"`` (C3D data type -1, 1, 2, 4), ``"__dimensions__"`` and
        ``"__header__"`` (header fields, processor, original units, header
        events). ``results["camera_masks"]`` holds the camera contribution
        bits of every sample, uint8 (n_frames, n_points).

    Raises
    ------
    FileFormatError
        If the file is missing, malformed or truncated; the message names the
        byte offset or the parameter at fault.

    Warns
    -----
    AhbmWarning
        For recoverable inconsistencies (label counts, header/parameter
        disagreements, a corrupted trailing parameter record, ...).

    Notes
    -----
    Integer points are ``value * POINT:SCALE``; the fourth word of each
    point holds the camera mask (high byte) and the residual divided by
    ``|POINT:SCALE|`` (low byte); a negative word marks an invalid sample.
    Analogs are ``(raw - OFFSET) * SCALE * GEN_SCALE``; raw integers are
    unsigned when ANALOG:FORMAT is "UNSIGNED", and a negative OFFSET word is
    read as an unsigned 16-bit value (writers store 32768 as -32768; ezc3d
    takes the absolute value, which agrees for that value).
    Frame counts above 65535 come from TRIAL:ACTUAL_START_FIELD /
    ACTUAL_END_FIELD (two 16-bit words each) or POINT:LONG_FRAMES.
    DEC floats are converted as in :func:`_dec_to_float`.

    Examples
    --------
    >>> from ahbm.io import read_c3d                     # doctest: +SKIP
    >>> trial = read_c3d("gait-raw.c3d")                 # doctest: +SKIP
    >>> trial.points.shape, trial.point_units            # doctest: +SKIP
    ((142, 27, 3), 'm')
    """
    if units is not None and _unit_factor(units) is None:
        raise DataError(
            f"`units` must be one of {sorted(set(C3D_LENGTH_UNITS))} or None, got {units!r}"
        )
    buf, source = _load(path)
    try:
        return _read(buf, source, units)
    except (AhbmError, AhbmWarning):
        raise
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, MemoryError) as err:
        # A safety net: every check above should have caught the problem.
        raise FileFormatError(
            f"{source}: malformed C3D file ({type(err).__name__}: {err})"
        ) from err


def _read(buf: bytes, source: str, units: str | None) -> Trial:
    size = len(buf)
    if size < _BLOCK:
        raise FileFormatError(
            f"{source}: {size} bytes is too short for a C3D file (the header alone is 512 "
            "bytes); the file is truncated or empty"
        )
    if buf[1] != 0x50:
        raise FileFormatError(
            f"{source}: byte 1 is {buf[1]:#04x}, expected 0x50; this is not a C3D file"
        )
    pblock = buf[0]
    if pblock < 2:
        raise FileFormatError(
            f"{source}: byte 0 gives parameter block {pblock}; it must be at least 2"
        )
    pstart = (pblock - 1) * _BLOCK
    fmt, n_pblocks, groups, params = _parse_parameters(buf, pstart, source)
    h = _read_header(buf, fmt, source)
    tree, descriptions, types, dimensions = _build_tree(groups, params, source)
    P = _Params(tree, types, source)

    # ----- layout of the data section
    n_points = h["n_points"]
    used = P.scalar("POINT", "USED", unsigned=True)
    if used is not None and int(used) != n_points:
        _warn(
            f"{source}: POINT:USED = {int(used)} but the header says {n_points} points; "
            "the header is used to read the data"
        )
    spf = h["analog_per_frame"]
    n_analog_total = h["n_analog_per_frame"]
    if spf == 0:
        if n_analog_total:
            raise FileFormatError(
                f"{source}: header word 3 gives {n_analog_total} analog values per frame "
                "but word 10 gives 0 analog samples per frame"
            )
        n_channels = 0
    else:
        if n_analog_total % spf:
            raise FileFormatError(
                f"{source}: header word 3 ({n_analog_total} analog values per frame) is not a "
                f"multiple of word 10 ({spf} samples per frame)"
            )
        n_channels = n_analog_total // spf
    a_used = P.scalar("ANALOG", "USED", unsigned=True)
    if a_used is not None and int(a_used) != n_channels and spf:
        _warn(
            f"{source}: ANALOG:USED = {int(a_used)} but the header gives {n_channels} "
            "channels; the header is used to read the data"
        )

    scale = P.scalar("POINT", "SCALE")
    if scale is None or not math.isfinite(scale) or scale == 0:
        scale = h["scale"]
    if not math.isfinite(scale) or scale == 0:
        raise FileFormatError(
            f"{source}: POINT:SCALE and the header scale factor ({h['scale']}) are both "
            "missing or invalid; cannot tell integer from floating-point storage"
        )
    is_float = scale < 0
    vsize = 4 if is_float else 2
    frame_bytes = (4 * n_points + n_analog_total) * vsize

    dblock = h["data_block"]
    pdata = P.scalar("POINT", "DATA_START", unsigned=True)
    if dblock < 1 and pdata:
        dblock = int(pdata)
    if dblock < 1:
        raise FileFormatError(f"{source}: header word 9 gives data block {dblock}; must be >= 1")
    dstart = (dblock - 1) * _BLOCK
    if dstart < pstart + 4:
        raise FileFormatError(
            f"{source}: header word 9 puts the data section at block {dblock} (byte {dstart}), "
            f"inside the header or before the parameter section at byte {pstart}"
        )
    if pdata is not None and int(pdata) != dblock:
        _warn(
            f"{source}: POINT:DATA_START = {int(pdata)} but the header gives data block "
            f"{dblock}; the header is used"
        )
    first_frame, n_frames = _frame_count(h, P, source)
    available = size - dstart
    if n_frames > 0 and frame_bytes > 0:
        need = n_frames * frame_bytes
        if dstart > size or need > available:
            raise FileFormatError(
                f"{source}: the data section at byte {dstart} needs {need} bytes "
                f"({n_frames} frames x {frame_bytes} bytes) but only {max(available, 0)} "
                "remain; the file is truncated or the header is corrupted"
            )

    # ----- decode the data block in one vectorized pass
    if is_float:
        vdt = fmt.raw_float
    else:
        vdt = fmt.i2
    analog_format = P.strings("ANALOG", "FORMAT")
    unsigned_analog = bool(analog_format) and analog_format[0].strip().upper() == "UNSIGNED"
    adt = fmt.u2 if (unsigned_analog and not is_float) else vdt
    frame_dtype = np.dtype([("p", vdt, (n_points, 4)), ("a", adt, (spf, n_channels))])
    if frame_dtype.itemsize != frame_bytes:  # pragma: no cover - consistency guard
        raise FileFormatError(f"{source}: internal frame size mismatch")
    if n_frames > 0 and frame_bytes > 0:
        frames = np.frombuffer(buf, dtype=frame_dtype, count=n_frames, offset=dstart)
        raw_p = frames["p"]
        raw_a = frames["a"]
    else:
        raw_p = np.zeros((n_frames, n_points, 4), dtype=vdt)
        raw_a = np.zeros((n_frames, spf, n_channels), dtype=adt)

    # points
    if is_float:
        pvals = fmt.floats(raw_p)
        xyz = pvals[..., :3].astype(np.float64)
        rw = pvals[..., 3].astype(np.float64)
        valid = rw >= 0
        word = np.where(valid & np.isfinite(rw), np.clip(rw, 0, 65535), 0).astype(np.int64)
    else:
        xyz = raw_p[..., :3].astype(np.float64) * scale
        rw = raw_p[..., 3].astype(np.int64)
        valid = rw >= 0
        word = np.where(valid, rw, 0)
    residuals = (word & 0xFF).astype(np.float64) * abs(scale)
    camera = ((word >> 8) & 0x7F).astype(np.uint8)
    xyz[~valid] = np.nan
    residuals[~valid] = np.nan

    file_units_list = P.strings("POINT", "UNITS")
    file_units = (file_units_list[0].strip() if file_units_list else "") or "mm"
    if not file_units_list:
        _warn(f"{source}: POINT:UNITS is missing; millimetres assumed")
    out_units = file_units
    if units is not None:
        f_in = _unit_factor(file_units)
        if f_in is None:
            _warn(f"{source}: unknown POINT:UNITS {file_units!r}; points are kept in file units")
        else:
            factor = f_in / _unit_factor(units)
            if factor != 1.0:
                xyz *= factor
                residuals *= factor
            out_units = units

    # analogs
    if n_channels and n_frames:
        if is_float:
            araw = fmt.floats(raw_a).astype(np.float64)
        else:
            araw = raw_a.astype(np.float64)
        araw = araw.reshape(n_frames * spf, n_channels)
    else:
        araw = np.zeros((n_frames * spf, n_channels))
    ch_scale = P.concat_numbers("ANALOG", "SCALE")
    ch_offset = P.concat_numbers("ANALOG", "OFFSET")
    gen = P.scalar("ANALOG", "GEN_SCALE")
    if gen is None or not math.isfinite(gen):
        gen = 1.0
    ones = lambda i: 1.0  # noqa: E731
    zeros = lambda i: 0.0  # noqa: E731
    if n_channels:
        sc = np.asarray(
            _fit_length(
                None if ch_scale is None else list(ch_scale.astype(float)),
                n_channels,
                "ANALOG:SCALE",
                ones,
                source,
            ),
            dtype=np.float64,
        )
        off_list = None if ch_offset is None else ch_offset.astype(np.int64)
        if off_list is not None and types.get("ANALOG:OFFSET") == 2:
            # OFFSET is an int16 word but 16-bit converters need 32768 and more:
            # a negative word is read as unsigned (-32768 -> 32768)
            off_list = off_list & 0xFFFF
        off = np.asarray(
            _fit_length(
                None if off_list is None else list(off_list.astype(float)),
                n_channels,
                "ANALOG:OFFSET",
                zeros,
                source,
            ),
            dtype=np.float64,
        )
        analogs = (araw - off) * (sc * gen)
    else:
        analogs = araw

    # labels, descriptions, units
    def _lab(i):
        return f"POINT{i + 1}"

    point_labels = _fit_length(
        P.concat_strings("POINT", "LABELS"), n_points, "POINT:LABELS", _lab, source
    )
    point_desc = (
        _fit_length(
            P.concat_strings("POINT", "DESCRIPTIONS"),
            n_points,
            "POINT:DESCRIPTIONS",
            lambda i: "",
            source,
            warn=False,
        )
        if P.has("POINT", "DESCRIPTIONS")
        else [""] * n_points
    )
    analog_labels = _fit_length(
        P.concat_strings("ANALOG", "LABELS"),
        n_channels,
        "ANALOG:LABELS",
        lambda i: f"CHANNEL{i + 1}",
        source,
    )
    analog_desc = (
        _fit_length(
            P.concat_strings("ANALOG", "DESCRIPTIONS"),
            n_channels,
            "ANALOG:DESCRIPTIONS",
            lambda i: "",
            source,
            warn=False,
        )
        if P.has("ANALOG", "DESCRIPTIONS")
        else [""] * n_channels
    )
    analog_units = (
        _fit_length(
            P.concat_strings("ANALOG", "UNITS"),
            n_channels,
            "ANALOG:UNITS",
            lambda i: "",
            source,
        )
        if P.has("ANALOG", "UNITS")
        else [""] * n_channels
    )

    # rates
    point_rate = P.scalar("POINT", "RATE")
    if point_rate is None or not math.isfinite(point_rate) or point_rate <= 0:
        point_rate = h["frame_rate"]
    if not math.isfinite(point_rate) or point_rate < 0:
        _warn(f"{source}: no valid point rate in POINT:RATE or the header; set to 0")
        point_rate = 0.0
    analog_rate = P.scalar("ANALOG", "RATE")
    if analog_rate is None or not math.isfinite(analog_rate) or analog_rate <= 0:
        analog_rate = point_rate * spf
    elif spf and point_rate > 0 and abs(analog_rate - point_rate * spf) > 1e-3 * analog_rate:
        _warn(
            f"{source}: ANALOG:RATE = {analog_rate:g} Hz is not point rate x samples per "
            f"frame ({point_rate:g} x {spf}); {point_rate * spf:g} Hz is used"
        )
        analog_rate = point_rate * spf

    # events
    events = _events(P, h, source)
    subject = _subject(P)

    header = {k: v for k, v in h.items() if k != "events"}
    header["header_events"] = h["events"]
    header["n_parameter_blocks"] = int(n_pblocks)
    header["point_units"] = file_units
    header["storage"] = "float" if is_float else "integer"
    header["point_scale"] = float(scale)
    header["analog_samples_per_frame"] = spf
    parameters = dict(tree)
    parameters["__descriptions__"] = descriptions
    parameters["__types__"] = types
    parameters["__dimensions__"] = dimensions
    parameters["__header__"] = header

    trial = Trial(
        points=xyz,
        point_labels=point_labels,
        point_rate=float(point_rate),
        point_units=out_units,
        point_descriptions=point_desc,
        point_residuals=residuals,
        point_mask=valid,
        analogs=analogs,
        analog_labels=analog_labels,
        analog_units=analog_units,
        analog_descriptions=analog_desc,
        analog_rate=float(analog_rate),
        first_frame=int(first_frame),
        events=events,
        subject=subject,
        parameters=parameters,
        source=source,
    )
    trial.results["camera_masks"] = camera
    if P.has("FORCE_PLATFORM", "USED"):
        from ahbm.io.forceplates import force_plates_from_c3d

        try:
            trial.force_plates = force_plates_from_c3d(trial)
        except (AhbmError, ValueError, IndexError, TypeError, ArithmeticError) as err:
            _warn(f"{source}: force plates not computed: {err}")
    return trial


def _events(P: _Params, h, source) -> list[Event]:
    events: list[Event] = []
    times = P.numbers("EVENT", "TIMES")
    labels = P.concat_strings("EVENT", "LABELS")
    if times is not None and labels is not None:
        n = P.scalar("EVENT", "USED", unsigned=True)
        t = np.asarray(times, dtype=np.float64)
        if t.ndim == 2 and t.shape[0] == 2:
            seconds = 60.0 * t[0] + t[1]
        else:
            seconds = t.reshape(-1)
        n = len(labels) if n is None else int(n)
        if n > min(len(labels), seconds.size):
            _warn(
                f"{source}: EVENT:USED = {n} but only {min(len(labels), seconds.size)} event "
                "labels/times are stored; the extra events are ignored"
            )
            n = min(len(labels), seconds.size)
        contexts = P.concat_strings("EVENT", "CONTEXTS") or []
        descs = P.concat_strings("EVENT", "DESCRIPTIONS") or []
        for i in range(n):
            if not math.isfinite(seconds[i]):
                continue
            events.append(
                Event(
                    label=labels[i],
                    time=float(seconds[i]),
                    context=contexts[i] if i < len(contexts) else "",
                    description=descs[i] if i < len(descs) else "",
                )
            )
    if not events:
        for e in h["events"]:
            events.append(Event(label=e["label"], time=e["time"], description="header event"))
    events.sort(key=lambda e: e.time)
    return events


def _subject(P: _Params) -> dict[str, Any]:
    subject: dict[str, Any] = {}
    names = P.strings("SUBJECTS", "NAMES")
    if names:
        subject["names"] = names
        subject["name"] = names[0]
    for key in ("MARKER_SETS", "LABEL_PREFIXES"):
        v = P.strings("SUBJECTS", key)
        if v:
            subject[key.lower()] = v
    proc = P.tree.get("PROCESSING", {})
    extra = {}
    for k, v in proc.items():
        if isinstance(v, np.ndarray) and v.size == 1:
            extra[k] = float(v.reshape(-1)[0])
    if extra:
        subject["processing"] = extra
        for key, out in (("BODYMASS", "mass"), ("MASS", "mass")):
            if key in extra:
                subject[out] = extra[key]
        if "HEIGHT" in extra:
            height = extra["HEIGHT"]
            # Vicon stores the height in mm; anything above 3 is taken as mm
            subject["height"] = height / 1000.0 if height > 3.0 else height
    return subject


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def _param_record(name: str, gid: int, ptype: int, dims, data: bytes, desc: str) -> bytes:
    nb = name.encode("ascii")
    db = desc.encode("latin-1", errors="replace")[:255]
    body = bytes([ptype & 0xFF, len(dims)]) + bytes(dims) + data + bytes([len(db)]) + db
    off = 2 + len(body)
    return bytes([len(nb), gid & 0xFF]) + nb + np.int16(off).tobytes() + body


def _group_record(name: str, gid: int, desc: str) -> bytes:
    nb = name.encode("ascii")
    db = desc.encode("latin-1", errors="replace")[:255]
    body = bytes([len(db)]) + db
    off = 2 + len(body)
    return bytes([len(nb), (-gid) & 0xFF]) + nb + np.int16(off).tobytes() + body


def _char_param(values: list[str]) -> tuple[list[int], bytes]:
    enc = [v.encode("latin-1", errors="replace") for v in values]
    width = max([len(e) for e in enc] + [1])
    if width > 255:
        raise DataError(
            f"label {values[int(np.argmax([len(e) for e in enc]))]!r} is longer "
            "than 255 characters; shorten it to write a C3D file"
        )
    data = b"".join(e.ljust(width) for e in enc)
    return [width, len(values)], data


# parameters that write_c3d derives from the Trial fields
_MANAGED = {
    "POINT": re.compile(
        r"(USED|SCALE|RATE|DATA_START|FRAMES|LONG_FRAMES|UNITS|"
        r"(LABELS|DESCRIPTIONS)\d*)"
    ),
    "ANALOG": re.compile(
        r"(USED|RATE|GEN_SCALE|FORMAT|BITS|"
        r"(SCALE|OFFSET|LABELS|DESCRIPTIONS|UNITS)\d*)"
    ),
    "TRIAL": re.compile(r"(ACTUAL_START_FIELD|ACTUAL_END_FIELD)"),
    "EVENT": re.compile(r".*"),
}
_NAME_OK = re.compile(r"[!-~]{1,127}")


def _encode_value(value, ptype, dims_hint):
    """(type, dims, bytes) for a parameter value, or None if it cannot be stored."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            return None
        enc = [v.encode("latin-1", errors="replace") for v in value]
        width = max([len(e) for e in enc] + [0])
        if width > 255 or len(enc) > 255:
            return None
        data = b"".join(e.ljust(width) for e in enc)
        if dims_hint is not None and len(dims_hint) == 1 and len(enc) == 1:
            return -1, [width], data
        return -1, [width, len(enc)], data
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.ndim > 7 or any(d > 255 for d in arr.shape):
        return None
    flat = arr.reshape(-1, order="F")
    dims = list(arr.shape)
    if dims_hint is not None and len(dims_hint) == 0 and flat.size == 1:
        dims = []
    is_int = arr.dtype.kind in "biu" or (
        ptype in (1, 2) and np.all(np.isfinite(flat)) and np.all(flat == np.round(flat))
    )
    if is_int and ptype == 1 and flat.size and flat.min() >= -128 and flat.max() <= 255:
        return 1, dims, flat.astype(np.int64).astype(np.uint8).tobytes()
    if is_int and (not flat.size or (flat.min() >= -32768 and flat.max() <= 65535)):
        if ptype != 4:
            return 2, dims, (flat.astype(np.int64) & 0xFFFF).astype("<u2").tobytes()
    return 4, dims, flat.astype("<f4").tobytes()


def _copy_parameters(params, recs, gid):
    """Append the records of `params` that write_c3d does not derive itself."""
    if not isinstance(params, dict):
        return
    descriptions = params.get("__descriptions__", {})
    types = params.get("__types__", {})
    dimensions = params.get("__dimensions__", {})
    descriptions = descriptions if isinstance(descriptions, dict) else {}
    types = types if isinstance(types, dict) else {}
    dimensions = dimensions if isinstance(dimensions, dict) else {}
    skipped = []
    for group, entries in params.items():
        if not isinstance(group, str) or group.startswith("__") or not isinstance(entries, dict):
            continue
        if not _NAME_OK.fullmatch(group):
            skipped.append(group)
            continue
        managed = _MANAGED.get(group)
        if group not in gid:
            if len(gid) >= 127:
                skipped.append(group)
                continue
            gid[group] = len(gid) + 1
            desc = descriptions.get(group, "")
            recs.append(_group_record(group, gid[group], desc if isinstance(desc, str) else ""))
        for name, value in entries.items():
            key = f"{group}:{name}"
            if not isinstance(name, str) or (managed is not None and managed.fullmatch(name)):
                continue
            if not _NAME_OK.fullmatch(name):
                skipped.append(key)
                continue
            enc = _encode_value(value, types.get(key), dimensions.get(key))
            if enc is None:
                skipped.append(key)
                continue
            desc = descriptions.get(key, "")
            rec = _param_record(name, gid[group], *enc, desc if isinstance(desc, str) else "")
            if len(rec) > 32000:
                skipped.append(key)
                continue
            recs.append(rec)
    if skipped:
        _warn(
            f"parameters that cannot be stored in a C3D file were not written: "
            f"{', '.join(map(str, skipped[:10]))}{' ...' if len(skipped) > 10 else ''}"
        )


def write_c3d(trial: Trial, path, *, units: str | None = None, scale: float | None = None) -> None:
    """Write a trial to an Intel floating-point C3D file.

    Parameters
    ----------
    trial : Trial
        Points ``(n_frames, n_points, 3)`` in ``trial.point_units``, analogs
        ``(n_frames * k, n_channels)`` in physical units (``analog_rate`` must
        be ``k * point_rate`` for an integer ``k``), labels, events.
    path : str or path-like
        Target file. Written to a temporary file in the same folder first and
        renamed into place, so an existing file is never left half-written.
    units : {"mm", "m", "cm", ...} or None, optional
        Length unit of the file. None (default) uses the unit of the file the
        trial was read from (so that copied FORCE_PLATFORM corners and moments
        stay consistent), else ``trial.point_units``.
    scale : float, optional
        Magnitude of POINT:SCALE (the residual resolution, in `units`);
        default: the source file's value, else 0.01.

    Raises
    ------
    DataError
        If the arrays and labels are inconsistent or a label cannot be stored.

    Notes
    -----
    Invalid samples (NaN in ``points`` or False in ``point_mask``) are written
    as zeros with a residual word of -1. More than 65535 frames are written
    with the header frame fields saturated and TRIAL:ACTUAL_START_FIELD /
    ACTUAL_END_FIELD plus POINT:LONG_FRAMES giving the true count. Analogs are
    written with SCALE = 1, OFFSET = 0 and GEN_SCALE = 1. The parameters of
    ``trial.parameters`` that these fields do not define (FORCE_PLATFORM,
    SUBJECTS, PROCESSING, extra POINT/ANALOG entries, ...) are copied with
    their original types, so a C3D file read and written again keeps its
    force plates and metadata; entries that cannot be stored are skipped with
    an AhbmWarning. The residual word follows the C3D specification: a float
    holding ``camera_mask * 256 + round(residual / scale)``, -1 when invalid.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io import Trial, write_c3d, read_c3d
    >>> t = Trial(points=np.zeros((10, 2, 3)), point_labels=["A", "B"], point_rate=100.0)
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.c3d")
    >>> write_c3d(t, path)
    >>> read_c3d(path).points.shape
    (10, 2, 3)
    """
    pts = np.asarray(trial.points, dtype=np.float64)
    if pts.ndim != 3 or pts.shape[2] != 3:
        raise DataError(
            f"Expected `trial.points` to have shape (n_frames, n_points, 3), got {pts.shape}"
        )
    n_frames, n_points = pts.shape[:2]
    an = np.asarray(trial.analogs, dtype=np.float64)
    if an.ndim != 2:
        raise DataError(
            f"Expected `trial.analogs` to have shape (n_samples, n_channels), got {an.shape}"
        )
    n_channels = an.shape[1] if an.shape[0] else 0
    if not (math.isfinite(trial.point_rate) and trial.point_rate > 0):
        raise DataError(f"`trial.point_rate` must be positive, got {trial.point_rate}")
    if n_channels:
        ratio = trial.analog_rate / trial.point_rate
        spf = int(round(ratio))
        if spf < 1 or abs(ratio - spf) > 1e-6:
            raise DataError(
                f"`trial.analog_rate` ({trial.analog_rate}) must be an integer multiple of "
                f"`trial.point_rate` ({trial.point_rate}) to write a C3D file"
            )
        if an.shape[0] != n_frames * spf:
            raise DataError(
                f"Expected {n_frames * spf} analog samples ({n_frames} frames x {spf}), got "
                f"{an.shape[0]}"
            )
    else:
        spf = 0
    if n_frames and n_channels * spf > 65535:
        raise DataError("too many analog values per frame for a C3D file (max 65535)")
    if n_points > 65535:
        raise DataError("a C3D file holds at most 65535 points")
    labels = list(trial.point_labels) or [f"POINT{i + 1}" for i in range(n_points)]
    if len(labels) != n_points:
        raise DataError(f"`trial.point_labels` has {len(labels)} labels for {n_points} points")
    alabels = list(trial.analog_labels) or [f"CHANNEL{i + 1}" for i in range(n_channels)]
    if len(alabels) != n_channels:
        raise DataError(
            f"`trial.analog_labels` has {len(alabels)} labels for {n_channels} channels"
        )
    src_header = trial.parameters.get("__header__", {}) if trial.parameters else {}
    if not isinstance(src_header, dict):
        src_header = {}
    in_units = trial.point_units or "mm"
    f_in = _unit_factor(in_units)
    if units is None:
        src_units = src_header.get("point_units")
        units = src_units if isinstance(src_units, str) and _unit_factor(src_units) else in_units
    f_out = _unit_factor(units)
    if f_out is None or f_in is None:
        if units != in_units:
            raise DataError(
                f"cannot convert points from {in_units!r} to {units!r}; use one of "
                f"{sorted(set(C3D_LENGTH_UNITS))}"
            )
        factor = 1.0
    else:
        factor = f_in / f_out
    if factor != 1.0:
        pts = pts * factor
    if scale is None:
        src_scale = src_header.get("point_scale")
        ok = isinstance(src_scale, (int, float)) and math.isfinite(src_scale) and src_scale != 0
        scale = abs(float(src_scale)) if ok and units == src_header.get("point_units") else 0.01
    scale = abs(float(scale))
    if not (math.isfinite(scale) and scale > 0):
        raise DataError(f"`scale` must be positive, got {scale}")

    valid = np.isfinite(pts).all(axis=2)
    if trial.point_mask is not None:
        mask = np.asarray(trial.point_mask, dtype=bool)
        if mask.shape != valid.shape:
            raise DataError(f"`trial.point_mask` has shape {mask.shape}, expected {valid.shape}")
        valid &= mask
    resid_word = np.zeros((n_frames, n_points), dtype=np.float32)
    if trial.point_residuals is not None:
        res = np.asarray(trial.point_residuals, dtype=np.float64)
        if res.shape == valid.shape:
            r = np.where(np.isfinite(res), res * factor / scale, 0.0)
            resid_word = np.clip(np.round(r), 0, 255).astype(np.float32)
    cams = trial.results.get("camera_masks") if isinstance(trial.results, dict) else None
    if isinstance(cams, np.ndarray) and cams.shape == valid.shape:
        cam_bits = (cams.astype(np.int64) & 0x7F).astype(np.float32)
        resid_word = resid_word + 256.0 * cam_bits
    resid_word[~valid] = -1.0

    # ----- parameters
    n_first = int(trial.first_frame) if trial.first_frame >= 1 else 1
    n_last = n_first + n_frames - 1
    rate = float(trial.point_rate)
    groups = [
        ("POINT", "3-D point parameters"),
        ("ANALOG", "analog channel parameters"),
        ("TRIAL", "trial parameters"),
        ("EVENT", "events"),
    ]
    recs: list[bytes] = []
    gid = {name: i + 1 for i, (name, _) in enumerate(groups)}
    for name, desc in groups:
        recs.append(_group_record(name, gid[name], desc))

    def i16(values):
        return np.asarray(values, dtype="<i2").reshape(-1, order="F").tobytes()

    def f32(values):
        return np.asarray(values, dtype="<f4").reshape(-1, order="F").tobytes()

    def add(group, name, ptype, dims, data, desc=""):
        recs.append(_param_record(name, gid[group], ptype, dims, data, desc))

    def add_text(group, name, values, desc=""):
        if isinstance(values, str):
            b = values.encode("latin-1", errors="replace")
            add(group, name, -1, [len(b)], b, desc)
        else:
            dims, data = _char_param(values)
            add(group, name, -1, dims, data, desc)

    def add_text_list(group, name, values, desc=""):
        # split long lists over NAME, NAME2, ... (255 entries each)
        chunks = [values[i : i + 255] for i in range(0, len(values), 255)] or [[]]
        for k, chunk in enumerate(chunks):
            pname = name if k == 0 else f"{name}{k + 1}"
            if chunk:
                add_text(group, pname, chunk, desc)
            else:
                add(group, pname, -1, [0, 0], b"", desc)

    frames_word = min(n_frames, 65535)
    add("POINT", "USED", 2, [], np.uint16(n_points).astype("<u2").tobytes(), "number of points")
    add("POINT", "SCALE", 4, [], f32(-scale), "negative: floating-point storage")
    add("POINT", "RATE", 4, [], f32(rate), "point rate (Hz)")
    add("POINT", "DATA_START", 2, [], b"\x00\x00", "first block of the data section")
    add("POINT", "FRAMES", 2, [], np.uint16(frames_word).astype("<u2").tobytes(), "frames")
    if n_frames > 65535:
        add("POINT", "LONG_FRAMES", 4, [], f32(n_frames), "number of frames")
    add_text("POINT", "UNITS", units, "length unit")
    add_text_list("POINT", "LABELS", labels, "point labels")
    pdesc = (
        list(trial.point_descriptions)
        if len(trial.point_descriptions) == n_points
        else ([""] * n_points)
    )
    add_text_list("POINT", "DESCRIPTIONS", [d or " " for d in pdesc], "point descriptions")
    add("ANALOG", "USED", 2, [], np.uint16(n_channels).astype("<u2").tobytes(), "channels")
    add(
        "ANALOG",
        "RATE",
        4,
        [],
        f32(float(trial.analog_rate) if n_channels else 0.0),
        "analog rate (Hz)",
    )
    add("ANALOG", "GEN_SCALE", 4, [], f32(1.0), "general scale")
    add("ANALOG", "SCALE", 4, [n_channels], f32(np.ones(n_channels)), "channel scales")
    add("ANALOG", "OFFSET", 2, [n_channels], i16(np.zeros(n_channels)), "channel offsets")
    if n_channels:
        add_text_list("ANALOG", "LABELS", alabels, "channel labels")
        au = (
            list(trial.analog_units)
            if len(trial.analog_units) == n_channels
            else ([""] * n_channels)
        )
        add_text_list("ANALOG", "UNITS", [u or " " for u in au], "channel units")
        ad = (
            list(trial.analog_descriptions)
            if len(trial.analog_descriptions) == n_channels
            else ([""] * n_channels)
        )
        add_text_list("ANALOG", "DESCRIPTIONS", [d or " " for d in ad], "channel descriptions")
    add(
        "TRIAL",
        "ACTUAL_START_FIELD",
        2,
        [2],
        np.array([n_first & 0xFFFF, n_first >> 16], dtype="<u2").tobytes(),
        "first frame",
    )
    add(
        "TRIAL",
        "ACTUAL_END_FIELD",
        2,
        [2],
        np.array([n_last & 0xFFFF, n_last >> 16], dtype="<u2").tobytes(),
        "last frame",
    )
    events = list(trial.events)
    add("EVENT", "USED", 2, [], i16(len(events)), "number of events")
    if events:
        t = np.array([e.time for e in events], dtype=np.float64)
        minutes = np.floor(t / 60.0)
        add(
            "EVENT",
            "TIMES",
            4,
            [2, len(events)],
            f32(np.stack([minutes, t - 60 * minutes])),
            "event times (minutes, seconds)",
        )
        add_text("EVENT", "LABELS", [e.label or " " for e in events], "event labels")
        add_text("EVENT", "CONTEXTS", [e.context or " " for e in events], "event contexts")
        add_text(
            "EVENT", "DESCRIPTIONS", [e.description or " " for e in events], "event descriptions"
        )
    _copy_parameters(trial.parameters, recs, gid)
    for r in recs:
        if len(r) > 32000:
            raise DataError("a parameter is too large to be written in a C3D file")
    # parameter section: 4-byte header + records + terminator
    body = b"".join(recs)
    n_pblocks = (4 + len(body) + 2 + _BLOCK - 1) // _BLOCK
    if n_pblocks > 255:
        raise DataError("the parameter section would exceed 255 blocks")
    data_block = 2 + n_pblocks
    # patch POINT:DATA_START
    ds_name = b"DATA_START"
    k = body.find(bytes([len(ds_name), gid["POINT"]]) + ds_name)
    ds_val = k + 2 + len(ds_name) + 2 + 2
    body = (
        body[:ds_val]
        + np.uint16(min(data_block, 65535)).astype("<u2").tobytes()
        + (body[ds_val + 2 :])
    )
    psec = bytes([1, 0x50, n_pblocks, 84]) + body + b"\x00\x00"
    psec = psec.ljust(n_pblocks * _BLOCK, b"\x00")

    # ----- header
    hdr = np.zeros(256, dtype="<u2")
    hdr_b = bytearray(hdr.tobytes())
    hdr_b[0] = 2
    hdr_b[1] = 0x50
    words = np.frombuffer(bytes(hdr_b), dtype="<u2").copy()
    words[1] = n_points
    words[2] = n_channels * spf
    words[3] = min(n_first, 65535)
    words[4] = min(n_last, 65535)
    words[5] = 10
    words[8] = data_block
    words[9] = spf
    words[149] = 12345
    hb = bytearray(words.tobytes())
    hb[12:16] = np.float32(-scale).astype("<f4").tobytes()
    hb[20:24] = np.float32(rate).astype("<f4").tobytes()
    header = bytes(hb)

    # ----- data
    pbuf = np.zeros((n_frames, n_points, 4), dtype="<f4")
    pbuf[..., :3] = np.where(valid[..., None], pts, 0.0)
    pbuf[..., 3] = resid_word
    frame_dtype = np.dtype([("p", "<f4", (n_points, 4)), ("a", "<f4", (spf, n_channels))])
    data = np.empty(n_frames, dtype=frame_dtype)
    data["p"] = pbuf
    if n_channels:
        data["a"] = an.reshape(n_frames, spf, n_channels)
    payload = data.tobytes()
    pad = (-len(payload)) % _BLOCK

    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(header)
        f.write(psec)
        f.write(payload)
        f.write(b"\x00" * pad)
