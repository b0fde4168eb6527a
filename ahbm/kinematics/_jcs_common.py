"""Checks shared by the joint-angle and joint-centre modules (internal)."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics.rotations import check_rotation_matrix

_SIDES = {"right": 1.0, "left": -1.0, "r": 1.0, "l": -1.0}


def _side(side) -> float:
    """+1 for the right side, -1 for the left."""
    key = side.lower() if isinstance(side, str) else None
    if key not in _SIDES:
        raise DataError(f"`side` must be 'right' or 'left', got {side!r}")
    return _SIDES[key]


def _rotations(R, name: str) -> np.ndarray:
    """Validate rotation matrices, allowing NaN frames (invalid poses)."""
    R = check_trailing_shape(as_float_array(R, name, allow_nan=True), (3, 3), name)
    finite = np.isfinite(R).all(axis=(-1, -2))
    if finite.any():
        check_rotation_matrix(R[finite], name=name)
    return R


def _pair(R_proximal, R_distal):
    """Checked proximal and distal rotations, broadcast to one batch shape."""
    Rp = _rotations(R_proximal, "R_proximal")
    Rd = _rotations(R_distal, "R_distal")
    try:
        batch = np.broadcast_shapes(Rp.shape[:-2], Rd.shape[:-2])
    except ValueError as err:
        raise DataError(
            f"batch shapes of `R_proximal` {Rp.shape[:-2]} and `R_distal` {Rd.shape[:-2]} "
            "do not broadcast"
        ) from err
    return np.broadcast_to(Rp, batch + (3, 3)), np.broadcast_to(Rd, batch + (3, 3))


def _dot(a, b):
    """Dot products along the last axis."""
    return np.sum(a * b, axis=-1)
