"""The data section of a C3D file: its layout and the vectorized decoding (internal).

C3D User Guide chapter 4: one record per frame holding, for every point,
x, y, z and a residual word, then the analog samples of that frame; integer
storage when POINT:SCALE > 0, floating point when it is negative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import check_read_size
from ahbm.errors import FileFormatError
from ahbm.io.c3d._common import _BLOCK, _warn
from ahbm.io.c3d.numbers import _Format
from ahbm.io.c3d.parameters import _Params

#: Frames a file without points and analog channels may declare (46 h at 100 Hz): beyond
#: the header's 65535, a count of frames that occupy no bytes is not backed by the file length.
_MAX_EMPTY_FRAMES = 2**24


@dataclass(frozen=True)
class _Layout:
    """Where and how the frames are stored."""

    n_points: int
    n_channels: int
    spf: int  # analog samples per frame
    scale: float  # POINT:SCALE (negative: floating point)
    is_float: bool
    frame_bytes: int
    data_start: int  # byte offset
    first_frame: int
    n_frames: int


def _point_scale(h, P: _Params, source: str) -> float:
    """POINT:SCALE, else the header's scale factor; its sign gives the storage."""
    scale = P.scalar("POINT", "SCALE")
    if scale is None or not math.isfinite(scale) or scale == 0:
        scale = h["scale"]
    if not math.isfinite(scale) or scale == 0:
        raise FileFormatError(
            f"{source}: POINT:SCALE and the header scale factor ({h['scale']}) are both "
            "missing or invalid; cannot tell integer from floating-point storage"
        )
    return float(scale)


def _data_start(h, P: _Params, pstart: int, source: str) -> int:
    """Byte offset of the data section (header word 9, else POINT:DATA_START)."""
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
    return dstart


def _analog_candidates(h, P: _Params, source: str) -> list[tuple[int, int, str]]:
    """(analog samples per frame, channels, where from) in the order of preference.

    The specification defines the channel count as ANALOG:USED (= header word 3 /
    word 10) and the samples per frame as ANALOG:RATE / POINT:RATE (= header
    word 10); ezc3d and c3d.py read the parameters, BTK the header.
    """
    words, spf_h = h["n_analog_per_frame"], h["analog_per_frame"]
    used = P.scalar("ANALOG", "USED", unsigned=True)
    used = int(used) if used is not None and math.isfinite(used) and used >= 0 else None
    spfs = []
    p_rate, a_rate = P.scalar("POINT", "RATE"), P.scalar("ANALOG", "RATE")
    if p_rate and a_rate and math.isfinite(p_rate / a_rate) and p_rate > 0 and a_rate > 0:
        ratio = a_rate / p_rate
        if abs(ratio - round(ratio)) < 1e-3 * max(ratio, 1.0) and 0 < round(ratio) < 65536:
            spfs.append((int(round(ratio)), "ANALOG:RATE / POINT:RATE"))
    if spf_h and all(spf_h != s for s, _ in spfs):
        spfs.append((spf_h, "header word 10"))
    out = []
    if used is not None:
        for spf, where in spfs or [(0, "no analog rate")]:
            out.append((spf if used else 0, used, f"ANALOG:USED, {where}"))
    if spf_h and words % spf_h == 0 and all((s, c) != (spf_h, words // spf_h) for s, c, _ in out):
        out.append((spf_h, words // spf_h, "header words 3 and 10"))
    if not out:
        if words and not spf_h:
            raise FileFormatError(
                f"{source}: header word 3 gives {words} analog values per frame but word 10 "
                "gives 0 analog samples per frame, and ANALOG:USED is missing"
            )
        if words:
            raise FileFormatError(
                f"{source}: header word 3 ({words} analog values per frame) is not a multiple "
                f"of word 10 ({spf_h} samples per frame) and ANALOG:USED is missing; the "
                "number of analog channels is unknown"
            )
        out.append((0, 0, "header words 3 and 10"))
    return out


def _frame_candidates(h, P: _Params) -> list[tuple[int, int, str]]:
    """(first frame, number of frames, where from) in the order of preference."""
    first_h = max(h["first_frame"], 1)
    n_h = h["last_frame"] - h["first_frame"] + 1 if h["last_frame"] >= h["first_frame"] else 0
    out = []
    trial = _trial_fields(P)
    first = first_h
    if trial is not None:
        first = trial[0]
        out.append((trial[0], trial[1] - trial[0] + 1, "TRIAL:ACTUAL_START_FIELD/END_FIELD"))
    for name in ("FRAMES", "LONG_FRAMES"):
        n = P.scalar("POINT", name, unsigned=True)
        if n is not None and math.isfinite(n) and 0 < n < 2**40 and n == int(n):
            out.append((first, int(n), f"POINT:{name}"))
    out.append((first_h, n_h, "header words 4 and 5"))
    if first != first_h:
        out.append((first, n_h, "header words 4 and 5 (count), TRIAL:ACTUAL_START_FIELD"))
    seen, unique = set(), []
    for c in out:
        if c[:2] not in seen:
            seen.add(c[:2])
            unique.append(c)
    return unique


def _trial_fields(P: _Params) -> tuple[int, int] | None:
    """(first, last) frame numbers of TRIAL:ACTUAL_START_FIELD/END_FIELD (2 words each)."""
    start_field = P.numbers("TRIAL", "ACTUAL_START_FIELD")
    end_field = P.numbers("TRIAL", "ACTUAL_END_FIELD")
    if start_field is None or end_field is None or start_field.size < 2 or end_field.size < 2:
        return None
    s = start_field.reshape(-1)[:2].astype(np.int64) & 0xFFFF
    e = end_field.reshape(-1)[:2].astype(np.int64) & 0xFFFF
    first, last = int(s[0] + 65536 * s[1]), int(e[0] + 65536 * e[1])
    return (first, last) if last >= first >= 1 else None


def _layout(buf: bytes, h, P: _Params, pstart: int, source: str) -> _Layout:
    """The data layout, settled between the header and the parameters.

    Points per frame, analog channels, analog samples per frame and the frames
    can each be given twice, in the header and in the parameters (POINT:USED,
    ANALOG:USED, ANALOG:RATE / POINT:RATE, TRIAL:ACTUAL_*_FIELD, POINT:FRAMES,
    POINT:LONG_FRAMES). The C3D User Guide makes the parameters the reference
    (the header holds copies that "must always be identical"); where they
    disagree the data section decides: the first layout, parameters before
    header, whose frames end in the last 512-byte block of the file is read;
    if none does, the first one the file holds. Every disagreement warns.
    """
    scale = _point_scale(h, P, source)
    is_float = scale < 0
    word = 4 if is_float else 2
    dstart = _data_start(h, P, pstart, source)
    available = len(buf) - dstart
    used = P.scalar("POINT", "USED", unsigned=True)
    used = int(used) if used is not None and math.isfinite(used) and used >= 0 else None
    point_counts = [(used, "POINT:USED")] if used is not None else []
    if used != h["n_points"]:
        point_counts.append((h["n_points"], "header word 2"))
    analog = _analog_candidates(h, P, source)
    frames = _frame_candidates(h, P)
    layouts, dropped = [], False
    for n_points, p_from in point_counts:
        for spf, n_ch, a_from in analog:
            frame_bytes = (4 * n_points + spf * n_ch) * word
            choices = frames
            if frame_bytes == 0 and any(n > _MAX_EMPTY_FRAMES for _, n, _ in frames):
                # frames of 0 bytes occupy no space, so no file length backs a count that only
                # the TRIAL fields or POINT:(LONG_)FRAMES declare: the header's count is read
                n_h = max(h["last_frame"] - h["first_frame"] + 1, 0)
                choices, dropped = [(max(h["first_frame"], 1), n_h, "header words 4 and 5")], True
            for first, n_frames, f_from in choices:
                need = n_frames * frame_bytes
                layouts.append((n_points, spf, n_ch, first, n_frames, frame_bytes, need,
                                (p_from, a_from, f_from)))  # fmt: skip
    if dropped:
        n_h = max(h["last_frame"] - h["first_frame"] + 1, 0)
        _warn(
            f"{source}: more than {_MAX_EMPTY_FRAMES} frames are declared (TRIAL:ACTUAL_START_"
            "FIELD/END_FIELD or POINT:LONG_FRAMES) but a frame holds 0 bytes (no points, no "
            f"analog channels), so the file cannot back them; the header's {n_h} frames are used"
        )
    fits = [lay for lay in layouts if 0 <= dstart and lay[6] <= available]
    exact = [lay for lay in fits if available - lay[6] < _BLOCK]
    chosen = (exact or fits or layouts)[0]
    n_points, spf, n_ch, first_frame, n_frames, frame_bytes, need, origin = chosen
    if not fits:
        raise FileFormatError(
            f"{source}: the data section at byte {dstart} needs {need} bytes "
            f"({n_frames} frames x {frame_bytes} bytes) but only {max(available, 0)} "
            "remain; the file is truncated or the header is corrupted"
        )
    _report_disagreements(h, P, chosen, layouts[0], source)
    # what decoding allocates per frame: float64 xyz and residuals, validity and camera bytes,
    # analog samples before and after calibration, the time vector
    per_frame = 34 * n_points + 16 * spf * n_ch + 8
    check_read_size(
        n_frames * per_frame,
        f"{n_frames} frames of {n_points} points and {spf * n_ch} analog samples",
        source,
    )
    return _Layout(n_points, n_ch, spf, scale, is_float, frame_bytes, dstart, first_frame, n_frames)


def _report_disagreements(h, P: _Params, chosen, preferred, source: str) -> None:
    """One warning per header/parameter disagreement, saying which value is read."""
    n_points, spf, n_ch, first, n_frames = chosen[:5]
    p_from, a_from, f_from = chosen[7]
    why = (
        "" if chosen is preferred else
        " (the data section's length agrees with it, not with the parameters)"
    )  # fmt: skip
    used = P.scalar("POINT", "USED", unsigned=True)
    if used is not None and int(used) != h["n_points"]:
        _warn(
            f"{source}: POINT:USED = {int(used)} but header word 2 gives {h['n_points']} "
            f"points per frame; {n_points} ({p_from}) are read{why}"
        )
    a_used = P.scalar("ANALOG", "USED", unsigned=True)
    words, spf_h = h["n_analog_per_frame"], h["analog_per_frame"]
    if (
        words != spf * n_ch
        or (n_ch and spf_h != spf)
        or (a_used is not None and int(a_used) != n_ch)
    ):
        _warn(
            f"{source}: the header gives {words} analog values per frame in word 3 and "
            f"{spf_h} samples per frame in word 10, ANALOG:USED = "
            f"{'(missing)' if a_used is None else int(a_used)}; {n_ch} channels x {spf} "
            f"samples per frame ({a_from}) are read{why}"
        )
    n_h = h["last_frame"] - h["first_frame"] + 1 if h["last_frame"] >= h["first_frame"] else 0
    if (first, n_frames) != (max(h["first_frame"], 1), n_h) and not (
        h["last_frame"] == 65535 and f_from[0] != "h"
    ):
        _warn(
            f"{source}: header words 4 and 5 give frames {h['first_frame']}-{h['last_frame']}; "
            f"{n_frames} frames from frame {first} ({f_from}) are read{why}"
        )


def _analog_format(
    P: _Params, n_channels: int, source: str, *, warn: bool = True
) -> tuple[bool, int | None]:
    """(unsigned, bits) of the analog integers: ANALOG:FORMAT and ANALOG:BITS.

    C3D User Guide: analog integers are signed unless ANALOG:FORMAT is
    "UNSIGNED", and then ANALOG:OFFSET is unsigned too. Where FORMAT is absent
    and an OFFSET word is below the signed range of ANALOG:BITS (12 bits when
    absent, as the guide suggests), e.g. -32768 for a 16-bit converter's
    mid-scale 32768, the samples are taken as unsigned (BTK's rule; ezc3d reads
    that offset as 32768 too) with a warning.
    """
    text = P.strings("ANALOG", "FORMAT") if P.has("ANALOG", "FORMAT") else None
    bits = P.scalar("ANALOG", "BITS") if P.has("ANALOG", "BITS") else None
    bits = int(bits) if bits is not None and math.isfinite(bits) and 1 <= bits <= 32 else None
    if text:
        return text[0].strip().upper() == "UNSIGNED", bits
    offsets = P.concat_numbers("ANALOG", "OFFSET") if n_channels else None
    if offsets is not None and P.types.get("ANALOG:OFFSET") == 2 and offsets.size:
        low = -(2 ** ((bits or 12) - 1))
        below = offsets[:n_channels] < low
        if below.any():
            if warn:
                _warn(
                    f"{source}: ANALOG:OFFSET holds {int(offsets[:n_channels][below][0])}, "
                    f"below the signed range of {bits or 12}-bit samples, and ANALOG:FORMAT is "
                    "missing; the analog samples and offsets are read as unsigned 16-bit integers"
                )
            return True, bits
    return False, bits


def _decode_frames(buf: bytes, lay: _Layout, fmt: _Format, P: _Params, source: str):
    """Raw point words (n_frames, n_points, 4) and analog samples (n_frames, spf, n_channels)."""
    vdt = fmt.raw_float if lay.is_float else fmt.i2
    unsigned_analog = _analog_format(P, lay.n_channels, P.source)[0]
    adt = fmt.u2 if (unsigned_analog and not lay.is_float) else vdt
    frame_dtype = np.dtype([("p", vdt, (lay.n_points, 4)), ("a", adt, (lay.spf, lay.n_channels))])
    if frame_dtype.itemsize != lay.frame_bytes:  # pragma: no cover - consistency guard
        raise FileFormatError(f"{source}: internal frame size mismatch")
    if lay.n_frames > 0 and lay.frame_bytes > 0:
        frames = np.frombuffer(buf, dtype=frame_dtype, count=lay.n_frames, offset=lay.data_start)
        return frames["p"], frames["a"]
    raw_p = np.zeros((lay.n_frames, lay.n_points, 4), dtype=vdt)
    return raw_p, np.zeros((lay.n_frames, lay.spf, lay.n_channels), dtype=adt)


def _decode_points(raw_p, lay: _Layout, fmt: _Format, zero_is_missing=True):
    """Points (NaN where invalid), residuals, validity and camera masks (file units).

    The fourth word holds the camera mask (high byte) and the residual divided
    by ``|POINT:SCALE|`` (low byte); a negative word marks an invalid sample.
    With `zero_is_missing` (a bool, or a bool per point), a sample whose three
    coordinates are exactly 0 is invalid too, whatever its residual word
    (Vicon and others write gaps so).
    """
    if lay.is_float:
        pvals = fmt.floats(raw_p)
        xyz = pvals[..., :3].astype(np.float64)
        rw = pvals[..., 3].astype(np.float64)
        valid = rw >= 0
        word = np.where(valid & np.isfinite(rw), np.clip(rw, 0, 65535), 0).astype(np.int64)
    else:
        xyz = raw_p[..., :3].astype(np.float64) * lay.scale
        rw = raw_p[..., 3].astype(np.int64)
        valid = rw >= 0
        word = np.where(valid, rw, 0)
    if np.any(zero_is_missing):
        valid &= ~(np.all(xyz == 0.0, axis=-1) & np.asarray(zero_is_missing, dtype=bool))
        word = np.where(valid, word, 0)
    residuals = (word & 0xFF).astype(np.float64) * abs(lay.scale)
    camera = ((word >> 8) & 0x7F).astype(np.uint8)
    xyz[~valid] = np.nan
    residuals[~valid] = np.nan
    return xyz, residuals, valid, camera


def _decode_analogs(raw_a, lay: _Layout, fmt: _Format) -> np.ndarray:
    """Raw analog samples as float64 (n_frames * spf, n_channels), before calibration."""
    if not (lay.n_channels and lay.n_frames):
        return np.zeros((lay.n_frames * lay.spf, lay.n_channels))
    araw = fmt.floats(raw_a) if lay.is_float else raw_a
    return np.asarray(araw, dtype=np.float64).reshape(lay.n_frames * lay.spf, lay.n_channels)
