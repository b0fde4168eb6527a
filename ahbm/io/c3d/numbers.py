"""Processor formats of C3D files: byte order, DEC floats (internal)."""

from __future__ import annotations

import numpy as np

from ahbm.io.c3d._common import _PROCESSORS


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
