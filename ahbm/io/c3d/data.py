"""The data section of a C3D file: its layout and the vectorized decoding (internal).

C3D User Guide chapter 4: one record per frame holding, for every point,
x, y, z and a residual word, then the analog samples of that frame; integer
storage when POINT:SCALE > 0, floating point when it is negative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ahbm._validation import check_read_size
from ahbm.errors import FileFormatError
from ahbm.io.c3d._common import _BLOCK, _warn
from ahbm.io.c3d.header import _frame_count
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


def _analog_shape(h, P: _Params, source: str) -> tuple[int, int]:
    """(samples per frame, channels) from the header, checked against ANALOG:USED."""
    spf = h["analog_per_frame"]
    n_total = h["n_analog_per_frame"]
    if spf == 0:
        if n_total:
            raise FileFormatError(
                f"{source}: header word 3 gives {n_total} analog values per frame "
                "but word 10 gives 0 analog samples per frame"
            )
        return 0, 0
    if n_total % spf:
        raise FileFormatError(
            f"{source}: header word 3 ({n_total} analog values per frame) is not a "
            f"multiple of word 10 ({spf} samples per frame)"
        )
    n_channels = n_total // spf
    a_used = P.scalar("ANALOG", "USED", unsigned=True)
    if a_used is not None and int(a_used) != n_channels:
        _warn(
            f"{source}: ANALOG:USED = {int(a_used)} but the header gives {n_channels} "
            "channels; the header is used to read the data"
        )
    return spf, n_channels


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


def _layout(buf: bytes, h, P: _Params, pstart: int, source: str) -> _Layout:
    """The data layout, with every size checked against the file length."""
    n_points = h["n_points"]
    used = P.scalar("POINT", "USED", unsigned=True)
    if used is not None and int(used) != n_points:
        _warn(
            f"{source}: POINT:USED = {int(used)} but the header says {n_points} points; "
            "the header is used to read the data"
        )
    spf, n_channels = _analog_shape(h, P, source)
    scale = _point_scale(h, P, source)
    is_float = scale < 0
    frame_bytes = (4 * n_points + spf * n_channels) * (4 if is_float else 2)
    dstart = _data_start(h, P, pstart, source)
    first_frame, n_frames = _frame_count(h, P, source)
    if frame_bytes == 0 and n_frames > _MAX_EMPTY_FRAMES:
        # frames of 0 bytes occupy no space in the file, so no file length backs a count
        # that only the TRIAL fields or POINT:LONG_FRAMES declare
        n_header = (
            h["last_frame"] - h["first_frame"] + 1 if h["last_frame"] >= h["first_frame"] else 0
        )
        _warn(
            f"{source}: {n_frames} frames are declared (TRIAL:ACTUAL_START_FIELD/END_FIELD or "
            "POINT:LONG_FRAMES) but a frame holds 0 bytes (no points, no analog channels), so "
            f"the file cannot back them; the header's {n_header} frames are used"
        )
        first_frame, n_frames = max(h["first_frame"], 1), n_header
    available = len(buf) - dstart
    if n_frames > 0 and frame_bytes > 0:
        need = n_frames * frame_bytes
        if dstart > len(buf) or need > available:
            raise FileFormatError(
                f"{source}: the data section at byte {dstart} needs {need} bytes "
                f"({n_frames} frames x {frame_bytes} bytes) but only {max(available, 0)} "
                "remain; the file is truncated or the header is corrupted"
            )
    # what decoding allocates per frame: float64 xyz and residuals, validity and camera bytes,
    # analog samples before and after calibration, the time vector
    per_frame = 34 * n_points + 16 * spf * n_channels + 8
    check_read_size(
        n_frames * per_frame,
        f"{n_frames} frames of {n_points} points and {spf * n_channels} analog samples",
        source,
    )
    return _Layout(
        n_points, n_channels, spf, scale, is_float, frame_bytes, dstart, first_frame, n_frames
    )


def _decode_frames(buf: bytes, lay: _Layout, fmt: _Format, P: _Params, source: str):
    """Raw point words (n_frames, n_points, 4) and analog samples (n_frames, spf, n_channels)."""
    vdt = fmt.raw_float if lay.is_float else fmt.i2
    analog_format = P.strings("ANALOG", "FORMAT")
    unsigned_analog = bool(analog_format) and analog_format[0].strip().upper() == "UNSIGNED"
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
