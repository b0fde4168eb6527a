"""Segment kinematics from poses: angular velocity, angular acceleration and
centre-of-mass acceleration of each segment, the input of segment-by-segment
Newton-Euler inverse dynamics (:func:`ahbm.dynamics.segmental.newton_euler`).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, check_trailing_shape, sample_times
from ahbm.analysis.derivatives import central_difference
from ahbm.dynamics.segmental import SegmentMotion
from ahbm.errors import DataError
from ahbm.kinematics.rotations import angular_velocity

__all__ = ["segment_motion"]


def segment_motion(rotation, com, *, rate=None, time=None) -> SegmentMotion:
    """Angular velocity and acceleration and COM acceleration from segment poses.

    Parameters
    ----------
    rotation : array_like, shape (n_frames, n_segments, 3, 3)
        Segment orientations ``lab_R_segment`` (filtered beforehand; NaN frames
        give NaN only in the derivatives whose stencil touches them).
    com : array_like, shape (n_frames, n_segments, 3)
        COM positions in the lab frame, m.
    rate : float, optional
        Frame rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_frames,), optional
        Frame times, s (strictly increasing).

    Returns
    -------
    SegmentMotion

    Raises
    ------
    DataError
        Shapes disagree, fewer than 4 frames, or a non-increasing time vector.

    Notes
    -----
    ``ω`` from ``skew(ω) = Ṙ Rᵀ`` by second-order differences of the relative
    rotation vectors (:func:`ahbm.kinematics.rotations.angular_velocity`),
    ``α = dω/dt`` and the COM acceleration by central differences
    (:func:`central_difference`).

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.rotations import rot_z
    >>> t = np.linspace(0, 1, 51)
    >>> R = rot_z(3.0 * t)[:, None]
    >>> com = np.stack([t**2, 0 * t, 0 * t], -1)[:, None]
    >>> m = segment_motion(R, com, time=t)
    >>> bool(np.allclose(m.omega, [0, 0, 3])), bool(np.allclose(m.com_acc[10], [2, 0, 0]))
    (True, True)
    """
    R = as_float_array(rotation, "rotation", allow_nan=True)
    check_trailing_shape(R, (3, 3), "rotation")
    c = as_float_array(com, "com", allow_nan=True)
    check_trailing_shape(c, (3,), "com")
    if R.ndim != 4 or c.shape != R.shape[:-1]:
        raise DataError(
            f"Expected `rotation` (n_frames, n_segments, 3, 3) and `com` (n_frames, "
            f"n_segments, 3) with matching leading axes, got {R.shape} and {c.shape}"
        )
    t = sample_times(R.shape[0], rate=rate, time=time)
    if t.size < 4:
        raise DataError(f"Need at least 4 frames to differentiate, got {t.size}")
    ok = np.isfinite(R).all(axis=(-2, -1))
    Rf = np.where(ok[..., None, None], R, np.eye(3))
    omega = angular_velocity(Rf, time=t, frame="world")
    bad = ~ok
    # a frame whose neighbour is missing has no valid derivative
    near = bad.copy()
    near[1:] |= bad[:-1]
    near[:-1] |= bad[1:]
    omega[near] = np.nan
    alpha = central_difference(omega, time=t)
    acc = central_difference(c, time=t, order=2)
    return SegmentMotion(R, c, acc, omega, alpha)
