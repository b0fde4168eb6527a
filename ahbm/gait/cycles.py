"""Stage 6 of the gait pipeline: time-normalized gait cycles of every variable."""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._internal.validation import sample_times
from ahbm.analysis.cycles import time_normalize
from ahbm.errors import AhbmWarning
from ahbm.gait.markersets import SIDES

__all__ = ["gait_cycles", "foot_strikes"]


def foot_strikes(events, side: str, *, label: str = "Foot Strike"):
    """Sorted times (s) of the events of one side with the given label."""
    return np.sort([e.time for e in events if e.context == side and e.label == label])


def gait_cycles(
    events, variables: dict, *, rate: float | None = None, time=None, n_points: int = 101
) -> dict:
    """Cut every variable into cycles from foot strike to foot strike, per side.

    Parameters
    ----------
    events : list of Event
        Gait events (``"Foot Strike"``, ``"Foot Off"`` with context
        ``"Left"``/``"Right"``).
    variables : dict
        ``"LKneeAngles"``, ``"RHipMoment"`` ... -> (n_frames, 3) in SI units
        (angles in rad); the first letter gives the side.
    rate : float, optional
        Frame rate, Hz (first frame at 0 s).
    time : array_like, shape (n_frames,), optional
        Frame times, s (e.g. ``trial.time``, the time axis of the events).
        Give exactly one of `rate` and `time`.
    n_points : int
        Samples per cycle (101: 0, 1, ..., 100 %).

    Returns
    -------
    dict
        ``{"Left": {"KneeAngles": (n_cycles, n_points, 3), ..., "toe_off":
        (n_cycles,)}, "Right": {...}}``: names without the side prefix, toe
        off in % of each cycle (NaN when no foot off lies inside). A side with
        fewer than two foot strikes maps to an empty dict.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.types import Event
    >>> t = np.linspace(0.0, 2.0, 201)
    >>> ev = [Event("Foot Strike", 0.2, "Left"), Event("Foot Off", 0.8, "Left"),
    ...       Event("Foot Strike", 1.2, "Left")]
    >>> c = gait_cycles(ev, {"LKneeAngles": np.zeros((201, 3))}, time=t)
    >>> c["Left"]["KneeAngles"].shape, c["Left"]["toe_off"], c["Right"]
    ((1, 101, 3), array([60.]), {})
    """
    n_frames = np.size(time) if time is not None else _n_frames(variables)
    time = sample_times(n_frames, rate=rate, time=time)
    cycles = {}
    for side, p in SIDES:
        fs = foot_strikes(events, side)
        fo = foot_strikes(events, side, label="Foot Off")
        fs = fs[(fs >= time[0]) & (fs <= time[-1])]
        side_cycles = {}
        if fs.size >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AhbmWarning)
                for name, arr in variables.items():
                    if name.startswith(p):
                        side_cycles[name[1:]] = time_normalize(
                            arr, fs, n_points=n_points, time=time
                        )
            toe = []
            for a, b in zip(fs[:-1], fs[1:], strict=True):
                o = fo[(fo > a) & (fo < b)]
                toe.append(100.0 * (o[0] - a) / (b - a) if o.size else np.nan)
            side_cycles["toe_off"] = np.array(toe)
        cycles[side] = side_cycles
    return cycles


def _n_frames(variables: dict) -> int:
    """Frames of the variables (all share the time axis); 0 without variables."""
    return int(np.shape(next(iter(variables.values())))[0]) if variables else 0
