"""Gait cycles: time normalization, ensemble statistics, spatiotemporal parameters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, check_not_empty, sample_times
from ahbm.analysis._common import check_axis, warn_caller
from ahbm.analysis._labelled import accepts_labelled, event_times
from ahbm.errors import DataError
from ahbm.types import ResultRepr

__all__ = [
    "time_normalize",
    "ensemble_stats",
    "EnsembleStats",
    "spatiotemporal_parameters",
]


@accepts_labelled("cycles")
def time_normalize(x, events, *, n_points: int = 101, rate=None, time=None, axis: int = 0):
    """Cut a signal into cycles and resample each to `n_points` (0-100 %).

    Parameters
    ----------
    x : array_like, shape (n_samples, ...), or Trial
        Signal(s), time along `axis`; or a :class:`~ahbm.io.Trial`, whose
        points (markers and model outputs) are cut on ``trial.time``, the
        recording's own time axis that starts at ``(first_frame - 1) /
        point_rate``, the axis its events are on (then give neither `rate` nor
        `time`).
    events : array_like, shape (n_events,), or sequence of Event
        Increasing cycle boundaries (e.g. successive foot strikes of one
        side): times in s if `rate` or `time` is given or `x` is a Trial,
        otherwise sample indices (fractional allowed); Event objects give
        their times. ``n_events - 1`` cycles result.
    n_points : int, optional
        Samples per normalized cycle (default 101: 0, 1, ..., 100 %).
    rate : float, optional
        Sample rate of `x`, Hz (sample ``i`` is at ``i / rate``).
    time : array_like, shape (n_samples,), optional
        Sample times of `x`, s (e.g. ``trial.time``). Give at most one of
        `rate` and `time`; with neither, `events` are sample indices.
    axis : int, optional
        Time axis of `x`.

    Returns
    -------
    ndarray, shape (n_cycles, n_points, ...), or list of Trial
        The cycles; trailing axes are the other axes of `x`. For a Trial, one
        Trial per cycle: `n_points` frames whose ``time`` is the percentage of
        the cycle (0 to 100; ``point_rate = (n_points - 1) / 100``, first
        frame 1), the same labels, units and model outputs, the events of the
        cycle re-timed in percent, and ``results["cycle_time"]`` the original
        time (s) of each frame; analogs and force plates (on the original
        time axis) are left out.

    Raises
    ------
    DataError
        Fewer than two events, events not increasing, or an event outside
        the signal (no extrapolation).

    Notes
    -----
    With `rate`, sample 0 is at 0 s (docs/api-rules.md); event times read
    from a file include the file's first-frame offset, so pass
    ``time=trial.time`` or the Trial itself, not ``rate=trial.point_rate``.

    Cycle ``k`` is sampled at ``e_k + p (e_{k+1} - e_k)``,
    ``p = 0, 1/(n-1), ..., 1``, by linear interpolation between the two
    neighbouring samples. A NaN sample makes the normalized points that
    interpolate from it NaN (nothing else); a warning gives the number of
    cycles affected.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(11.0)
    >>> time_normalize(x, [0, 10], n_points=3)
    array([[ 0.,  5., 10.]])
    >>> from ahbm.io import Trial
    >>> t = Trial(points=np.zeros((11, 1, 3)), point_labels=["A"], point_rate=10.0,
    ...           first_frame=6)   # frames at 0.5 ... 1.5 s
    >>> cycles = time_normalize(t, [0.5, 1.5], n_points=3)
    >>> len(cycles), cycles[0].time.tolist(), cycles[0].results["cycle_time"].tolist()
    (1, [0.0, 50.0, 100.0], [0.5, 1.0, 1.5])
    """
    arr = as_float_array(x, "x", allow_nan=True)
    ax = check_axis(arr, axis, "x")
    check_not_empty(arr, "x", axis=ax)
    moved = np.moveaxis(arr, ax, 0)
    n = moved.shape[0]
    t = sample_times(n, rate=rate, time=time, required=False)
    ev = as_float_array(event_times(events), "events").ravel()
    if ev.size < 2:
        raise DataError(f"`events` needs at least 2 cycle boundaries, got {ev.size}")
    if np.any(np.diff(ev) <= 0):
        raise DataError(f"`events` must be strictly increasing, got {ev.tolist()}")
    if ev[0] < t[0] - 1e-9 or ev[-1] > t[-1] + 1e-9:
        raise DataError(
            f"`events` span {ev[0]:g}-{ev[-1]:g} but the signal covers {t[0]:g}-{t[-1]:g}; "
            "cycles outside the data cannot be normalized (no extrapolation)"
        )
    n_points = as_int(n_points, "n_points", minimum=2)
    if n_points < 2:
        raise DataError(f"`n_points` must be >= 2, got {n_points}")
    p = np.linspace(0.0, 1.0, n_points)
    q = ev[:-1, None] + p[None, :] * np.diff(ev)[:, None]  # (n_cycles, n_points)
    q = np.clip(q, t[0], t[-1])
    i1 = np.clip(np.searchsorted(t, q, side="right"), 1, n - 1)
    i0 = i1 - 1
    w = (q - t[i0]) / (t[i1] - t[i0])
    w = w.reshape(w.shape + (1,) * (moved.ndim - 1))
    x0, x1 = moved[i0], moved[i1]
    out = np.where(w == 0, x0, np.where(w == 1, x1, (1 - w) * x0 + w * x1))
    bad = np.isnan(out).reshape(out.shape[0], -1).any(axis=1)
    if bad.any():
        warn_caller(
            f"time_normalize: {int(bad.sum())} of {bad.size} cycles contain NaN (from missing "
            "samples of `x`); fill gaps first or drop those cycles"
        )
    return out


@dataclass(frozen=True, repr=False)
class EnsembleStats(ResultRepr):
    """Mean and standard deviation over cycles (NaN-aware).

    Attributes
    ----------
    mean, sd : ndarray, shape (n_points, ...)
        Mean and sample standard deviation (``ddof=1``) over the cycles that
        are finite at each point; NaN where fewer than 1 (mean) or 2 (sd)
        cycles are.
    n : ndarray of int, shape (n_points, ...)
        Number of finite cycles at each point.
    """

    mean: np.ndarray
    sd: np.ndarray
    n: np.ndarray

    def __repr__(self) -> str:
        n = np.asarray(self.n)
        if n.size and n.min() != n.max():
            cycles = f"{n.min()}..{n.max()}"
        else:
            cycles = f"{n.flat[0]}" if n.size else "0"
        return f"{ResultRepr.__repr__(self)[:-1]}; {cycles} cycles per point)"


def ensemble_stats(cycles) -> EnsembleStats:
    """Ensemble mean +/- SD of time-normalized cycles.

    Parameters
    ----------
    cycles : array_like, shape (n_cycles, n_points, ...)
        Output of :func:`time_normalize` (possibly concatenated over trials).

    Returns
    -------
    EnsembleStats

    Examples
    --------
    >>> s = ensemble_stats([[0.0, 1.0], [2.0, 3.0]])
    >>> s.mean.tolist(), s.sd.round(3).tolist()
    ([1.0, 2.0], [1.414, 1.414])
    """
    arr = as_float_array(cycles, "cycles", allow_nan=True)
    if arr.ndim < 2:
        raise DataError(f"Expected `cycles` with shape (n_cycles, n_points, ...), got {arr.shape}")
    ok = np.isfinite(arr)
    n = ok.sum(axis=0)
    s = np.where(ok, arr, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, s / np.maximum(n, 1), np.nan)
        dev = np.where(ok, arr - mean, 0.0)
        sd = np.where(n > 1, np.sqrt((dev**2).sum(axis=0) / np.maximum(n - 1, 1)), np.nan)
    return EnsembleStats(mean, sd, n)


def _events_by(events, label: str, side: str) -> np.ndarray:
    return np.sort(
        np.array([float(e.time) for e in events if e.label == label and e.context == side], float)
    )


def spatiotemporal_parameters(
    events,
    *,
    heel_left=None,
    heel_right=None,
    rate=None,
    time=None,
    direction=None,
) -> dict:
    """Cadence, stride/step time and length, stance/swing/double support, speed.

    Parameters
    ----------
    events : sequence of events
        Objects with ``label`` (``"Foot Strike"`` / ``"Foot Off"``),
        ``time`` (s) and ``context`` (``"Left"`` / ``"Right"``), e.g.
        ``trial.events`` or the output of ``detect_gait_events``.
    heel_left, heel_right : array_like, shape (n_frames, 3), optional
        Heel marker trajectories (m) for the length parameters.
    rate : float, optional
        Frame rate of the heel trajectories, Hz (frame ``i`` at ``i / rate``).
    time : array_like, shape (n_frames,), optional
        Frame times of the heel trajectories, s. With heel trajectories give
        exactly one of `rate` and `time`.
    direction : array_like, shape (3,), optional
        Walking direction; default: horizontal (x-y) direction of the mean
        heel displacement over the trial.

    Returns
    -------
    dict
        ``{"Left": {...}, "Right": {...}, "cadence": ..., "walking_speed": ...}``.
        Per side (means over the complete strides of that side):
        ``stride_time`` (s), ``step_time`` (s, from the contralateral to this
        side's strike), ``stance_time``, ``swing_time`` (s), ``stance_pct``,
        ``swing_pct``, ``double_support_pct`` (% of stride),
        ``stride_length``, ``step_length`` (m, along the walking direction)
        and ``walking_speed`` (m/s, stride length / stride time), plus
        ``n_strides``. ``cadence`` is steps per minute (120 / mean stride
        time). Unavailable quantities are NaN.

    Notes
    -----
    A stride of side S runs from a foot strike of S to the next. Stance is
    strike to the foot off of S inside the stride; double support is the
    time from the strike of S to the next foot off of the other side plus
    the time from the next strike of the other side to the foot off of S
    (Perry & Burnfield 2010 definitions). Lengths are differences of heel
    positions, interpolated at the event times, projected on the direction.

    Examples
    --------
    >>> from types import SimpleNamespace as E
    >>> ev = [E(label="Foot Strike", time=t, context="Left") for t in (0.0, 1.0)]
    >>> spatiotemporal_parameters(ev)["Left"]["stride_time"]
    1.0
    """
    if isinstance(events, (str, bytes, dict)) or not hasattr(events, "__iter__"):
        raise DataError(f"Expected `events` to be a list of Event, got {type(events).__name__}")
    for e in events:
        if not all(hasattr(e, a) for a in ("label", "time", "context")):
            raise DataError(
                "Each event needs `label`, `time` and `context` attributes (e.g. ahbm Event)"
            )
    heels = {"Left": heel_left, "Right": heel_right}
    have_heels = heel_left is not None and heel_right is not None
    if have_heels:
        hl = as_float_array(heel_left, "heel_left", allow_nan=True)
        hr = as_float_array(heel_right, "heel_right", allow_nan=True)
        if hl.shape != hr.shape or hl.ndim != 2 or hl.shape[1] != 3:
            raise DataError(
                f"`heel_left` and `heel_right` must both be (n_frames, 3), got {hl.shape}, "
                f"{hr.shape}"
            )
        t = sample_times(hl.shape[0], rate=rate, time=time)
        heels = {"Left": hl, "Right": hr}
        if direction is None:
            disp = np.zeros(3)
            for h in (hl, hr):
                ok = np.flatnonzero(np.isfinite(h).all(axis=1))
                if ok.size >= 2:
                    disp += h[ok[-1]] - h[ok[0]]
            disp[2] = 0.0
            if np.linalg.norm(disp) == 0:
                raise DataError("Cannot infer the walking direction from the heels; pass it")
            d = disp / np.linalg.norm(disp)
        else:
            d = as_float_array(direction, "direction").ravel()
            if d.size != 3 or np.linalg.norm(d) == 0:
                raise DataError("`direction` must be a non-zero 3-vector")
            d = d / np.linalg.norm(d)

        def heel_at(side, when):
            h = heels[side]
            return (
                np.array(
                    [np.interp(when, t, h[:, c], left=np.nan, right=np.nan) for c in range(3)]
                ).T
                @ d
            )

    out: dict = {}
    stride_times = []
    for side, other in (("Left", "Right"), ("Right", "Left")):
        fs = _events_by(events, "Foot Strike", side)
        fo = _events_by(events, "Foot Off", side)
        fs_o = _events_by(events, "Foot Strike", other)
        fo_o = _events_by(events, "Foot Off", other)
        res = dict.fromkeys(
            (
                "stride_time",
                "step_time",
                "stance_time",
                "swing_time",
                "stance_pct",
                "swing_pct",
                "double_support_pct",
                "stride_length",
                "step_length",
                "walking_speed",
            ),
            float("nan"),
        )
        strides, stance, stance_frac, ds, step_t, stride_len, step_len = ([] for _ in range(7))
        for a, b in zip(fs[:-1], fs[1:], strict=True):
            strides.append(b - a)
            off = fo[(fo > a) & (fo < b)]
            if off.size:
                stance.append(off[0] - a)
                stance_frac.append((off[0] - a) / (b - a))
                o_off = fo_o[(fo_o > a) & (fo_o < off[0])]
                o_fs = fs_o[(fs_o > a) & (fs_o < off[0])]
                if o_off.size and o_fs.size:
                    ds.append(((o_off[0] - a) + (off[0] - o_fs[-1])) / (b - a))
            if have_heels:
                stride_len.append(abs(heel_at(side, b) - heel_at(side, a)))
        for s in fs:
            prev = fs_o[fs_o < s]
            if prev.size:
                step_t.append(s - prev[-1])
            if have_heels:
                step_len.append(abs(heel_at(side, s) - heel_at(other, s)))
        if strides:
            res["stride_time"] = float(np.mean(strides))
            stride_times.extend(strides)
        if stance:
            res["stance_time"] = float(np.mean(stance))
            res["stance_pct"] = 100.0 * float(np.mean(stance_frac))
            res["swing_time"] = res["stride_time"] - res["stance_time"]
            res["swing_pct"] = 100.0 - res["stance_pct"]
        if ds:
            res["double_support_pct"] = 100.0 * float(np.mean(ds))
        if step_t:
            res["step_time"] = float(np.mean(step_t))
        if stride_len:
            res["stride_length"] = float(np.nanmean(stride_len))
            res["walking_speed"] = res["stride_length"] / res["stride_time"]
        if step_len:
            res["step_length"] = float(np.nanmean(step_len))
        res["n_strides"] = len(strides)
        out[side] = res
    mean_stride = float(np.mean(stride_times)) if stride_times else float("nan")
    out["cadence"] = 120.0 / mean_stride if stride_times else float("nan")
    speeds = [out[s]["walking_speed"] for s in ("Left", "Right")]
    out["walking_speed"] = float(np.nanmean(speeds)) if np.isfinite(speeds).any() else float("nan")
    return out
