"""The parameter section of a C3D file: records, the group/parameter tree, typed access.

C3D User Guide chapter 3: after a 4-byte header, group and parameter records
follow each other, each with a signed name length, a group id, a name, the
offset of the next record, and (parameters) a type, dimensions, data and a
description.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ahbm.errors import FileFormatError
from ahbm.io.c3d._common import _PROCESSORS, _TYPE_SIZES, _warn
from ahbm.io.c3d.numbers import _Format


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


# Lenient on names (writers emit "Splines Fitted", accented letters, ...): any bytes but
# control characters, not all spaces; sizes and offsets stay strictly checked.
_NAME_RE = re.compile(rb"[ -~\x80-\xff]*[!-~\x80-\xff][ -~\x80-\xff]*")


def _valid_name(raw: bytes) -> bool:
    """True if `raw` is a non-empty run of printable bytes (ASCII or latin-1), not all spaces."""
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


def _section_format(buf: bytes, start: int, source: str) -> tuple[_Format, int]:
    """The processor format and the block count from the section's 4-byte header."""
    size = len(buf)
    if start + 4 > size:
        raise FileFormatError(
            f"{source}: the parameter section should start at byte {start} but the file "
            f"has only {size} bytes; the file is truncated or not a C3D file"
        )
    proc = buf[start + 3]
    if proc not in _PROCESSORS:
        raise FileFormatError(
            f"{source}: unknown processor type {proc} at byte {start + 3} (expected 84 "
            "Intel, 85 DEC or 86 MIPS); the parameter section is corrupted"
        )
    return _Format(proc), buf[start + 2]


def _group_body(buf: bytes, body: int, limit: int) -> tuple[str, int]:
    """A group record's description and the byte where the record ends."""
    if body + 1 > limit:
        raise _RecordError("group description length beyond record")
    dlen = buf[body]
    desc = bytes(buf[body + 1 : body + 1 + dlen]).decode("latin-1").rstrip()
    return desc, body + 1 + dlen


def _param_body(buf: bytes, body: int, limit: int, fmt: _Format):
    """(type, dims, value, description, end byte or None) of a parameter record."""
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
        raise _RecordError(f"value of {nbytes} bytes (dimensions {dims}) runs past the record end")
    value = _decode_value(buf, vpos, ptype, dims, fmt)
    dpos = vpos + nbytes
    if dpos >= limit:
        return ptype, dims, value, "", None
    dlen = buf[dpos]
    desc = bytes(buf[dpos + 1 : min(dpos + 1 + dlen, limit)]).decode("latin-1").rstrip()
    return ptype, dims, value, desc, dpos + 1 + dlen


def _record_head(buf: bytes, pos: int, fmt: _Format, source: str):
    """(signed name length, group id, raw name, offset to the next record, body start)."""
    size = len(buf)
    truncated = (
        f"{source}: parameter record at byte {pos} runs past the end of the file "
        f"({size} bytes); the file is truncated"
    )
    if pos + 2 > size:
        raise FileFormatError(truncated)
    nchar, gid = _s8(buf[pos]), _s8(buf[pos + 1])
    if nchar == 0 or gid == 0:
        return nchar, gid, b"", 0, pos
    name_end = pos + 2 + abs(nchar)
    if name_end + 2 > size:
        raise FileFormatError(truncated)
    offset = int.from_bytes(buf[name_end : name_end + 2], fmt.order, signed=True)
    return nchar, gid, bytes(buf[pos + 2 : name_end]), offset, name_end + 2


def _parse_parameters(buf: bytes, start: int, source: str):
    """Parse the parameter section; return (format, n_blocks, groups, params).

    A malformed record is skipped with a warning when the next record can be
    found (its offset, or where the record's own content ends), else the
    rest of the section is ignored (warning) or the file is rejected.
    """
    size = len(buf)
    fmt, n_blocks = _section_format(buf, start, source)
    groups: dict[int, tuple[str, str, bool]] = {}
    params: list[_Param] = []
    pos = start + 4
    while True:
        nchar, gid, raw_name, offset, body = _record_head(buf, pos, fmt, source)
        if nchar == 0 or gid == 0:
            break
        nxt = body - 2 + offset if offset != 0 else None
        if not _valid_name(raw_name):
            _warn(
                f"{source}: malformed parameter record at byte {pos} (name {raw_name!r} holds "
                "control characters or only spaces); the rest of the parameter section is ignored"
            )
            break
        name = raw_name.decode("latin-1").upper()
        if nxt is not None and nxt <= body:
            _warn(
                f"{source}: parameter record {name!r} at byte {pos} has a bogus offset "
                f"({offset}) to the next record; the rest of the parameter section is "
                "ignored"
            )
            if gid < 0:
                groups.setdefault(-gid, (name, "", nchar < 0))
            break
        nxt_ok = nxt is None or _plausible_record(buf, nxt)
        # parse a record whose offset is implausible on its own; the offset is checked below
        limit = size if (nxt is None or not nxt_ok) else min(nxt, size)
        computed = None
        try:
            if gid < 0:
                desc, computed = _group_body(buf, body, limit)
                if -gid in groups:
                    _warn(
                        f"{source}: group id {-gid} defined twice (byte {pos}, {name!r}); "
                        "the first definition is kept"
                    )
                else:
                    groups[-gid] = (name, desc, nchar < 0)
            else:
                ptype, dims, value, desc, computed = _param_body(buf, body, limit, fmt)
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
