"""The C3D header block and the frame count (C3D User Guide chapter 2; internal)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ahbm._internal.validation import check_read_size
from ahbm.errors import FileFormatError
from ahbm.io.c3d._common import _warn
from ahbm.io.c3d.numbers import _Format


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
        size = p.stat().st_size
        check_read_size(size, f"reading its {size} bytes", f"C3D file {str(p)!r}")
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
