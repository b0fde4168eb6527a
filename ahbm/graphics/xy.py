"""XYViewer: stacked, x-linked time-series panels with events and a cursor."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from ahbm._internal.validation import as_float_array, as_positive_float
from ahbm.errors import DataError
from ahbm.graphics._common import SIDE_COLORS, check_figure, check_names, pyplot
from ahbm.graphics.figures import plain_text

__all__ = ["XYViewer", "xy_view"]

_PLATE_CHANNEL = re.compile(r"^fp(\d+)\.(force|moment|cop|free_moment)$", re.IGNORECASE)
_UNIT_SCALE = {"m": 1.0, "cm": 1e-2, "mm": 1e-3}


class XYViewer:
    """Stacked time-series panels sharing one time axis (created by :func:`xy_view`).

    Attributes
    ----------
    fig : matplotlib.figure.Figure
    axes : list of matplotlib.axes.Axes
        One panel per channel, top to bottom, x axes shared.
    channels : list of str
        Channel name of each panel.
    lines : dict of str -> list of Line2D
        The data lines of each channel (one per component).
    event_lines : list of Line2D
        Vertical event lines (one per event and panel).
    cursor_lines : list of Line2D
        Vertical cursor lines (one per panel), empty without a cursor.
    time : float or None
        Current cursor time, s.
    """

    def __init__(self, fig, axes, channels, lines, event_lines, cursor_lines):
        self.fig = fig
        self.axes = axes
        self.channels = channels
        self.lines = lines
        self.event_lines = event_lines
        self.cursor_lines = cursor_lines
        self.time = None

    def set_time(self, t: float, frame_index: int | None = None) -> None:
        """Move the cursor to time `t` (s).

        `frame_index` (the frame number) is accepted so that the method can be
        a :meth:`StickViewer.add_listener` callback, ``callback(t, frame_index)``;
        the cursor only uses `t`.
        """
        self.time = float(t)
        for line in self.cursor_lines:
            line.set_xdata([self.time, self.time])
        if self.cursor_lines:
            self.fig.canvas.draw_idle()

    def __repr__(self) -> str:
        return f"XYViewer(channels={self.channels})"


def _component_names(k: int) -> list[str]:
    return ["x", "y", "z"] if k == 3 else [str(j) for j in range(k)]


def _as_series(values, name: str, time: np.ndarray | None, rate: float | None):
    y = as_float_array(values, f"data[{name!r}]", allow_nan=True)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2:
        raise DataError(f"Expected `data[{name!r}]` to have shape (n,) or (n, k), got {y.shape}")
    if time is None:
        time = np.arange(y.shape[0]) / rate if rate else np.arange(y.shape[0], dtype=float)
    time = as_float_array(time, f"t for {name!r}")
    if time.shape != (y.shape[0],):
        raise DataError(
            f"Channel {name!r} has {y.shape[0]} samples but its time vector has shape "
            f"{time.shape}; give one time per sample"
        )
    return time, y


def _trial_channel(trial, name: str):
    """(time, values (n, k), component names) of a named channel of a Trial."""
    if name in trial.point_labels:
        scale = _UNIT_SCALE.get(str(trial.point_units).lower(), 1.0)
        j = trial.point_labels.index(name)
        return trial.time, trial.points[:, j, :] * scale, ["x", "y", "z"], "m"
    if name in trial.analog_labels:
        j = trial.analog_labels.index(name)
        unit = trial.analog_units[j] if j < len(trial.analog_units) else ""
        return trial.analog_time, trial.analogs[:, j : j + 1], [name], unit
    if name in trial.results:
        y = np.asarray(trial.results[name], dtype=float)
        y2 = y.reshape(y.shape[0], -1)
        if trial.point_rate > 0 and y.shape[0] == trial.n_frames:
            t = trial.time
        else:
            raise DataError(
                f"Result {name!r} has {y.shape[0]} samples, not one per point frame "
                f"({trial.n_frames}); pass it in a mapping with its own time instead"
            )
        return t, y2, _component_names(y2.shape[1]), ""
    m = _PLATE_CHANNEL.match(name)
    if m:
        k = int(m.group(1)) - 1
        if not 0 <= k < len(trial.force_plates):
            raise DataError(
                f"Channel {name!r}: the trial has {len(trial.force_plates)} force plates "
                "(numbered from 1)"
            )
        plate = trial.force_plates[k]
        y = np.asarray(getattr(plate, m.group(2).lower()), dtype=float)
        t0 = (trial.first_frame - 1) / trial.point_rate if trial.point_rate > 0 else 0.0
        t = t0 + np.arange(y.shape[0]) / plate.rate
        unit = {"force": "N", "cop": "m"}.get(m.group(2).lower(), "N m")
        return t, y, ["x", "y", "z"], unit
    raise DataError(
        f"Channel {name!r} is not in the trial; give a marker label, an analog label, a "
        "result name or FP<k>.force/moment/cop/free_moment. Markers: "
        f"{', '.join(trial.point_labels[:30])}; analogs: {', '.join(trial.analog_labels[:30])}"
    )


def _resolve(data, t, rate, channels):
    """List of (name, time, values (n, k), component names, unit) panels."""
    from ahbm.graphics._stick_data import _is_trial

    panels = []
    if _is_trial(data):
        if channels is None:
            if data.results:
                channels = [k for k in data.results if np.ndim(data.results[k]) >= 1]
            elif data.force_plates:
                channels = [f"FP{k + 1}.force" for k in range(len(data.force_plates))]
            else:
                channels = list(data.point_labels[:4])
        for name in channels:
            tt, y, comps, unit = _trial_channel(data, str(name))
            tt, y = _as_series(y, str(name), tt, None)
            panels.append((str(name), tt, y, comps, unit))
        return panels
    if isinstance(data, Mapping):
        names = list(data) if channels is None else list(channels)
        for name in names:
            if name not in data:
                raise DataError(
                    f"Channel {name!r} is not in `data`; available: {', '.join(map(str, data))}"
                )
            value = data[name]
            if isinstance(value, tuple) and len(value) == 2:
                tt, y = _as_series(value[1], str(name), value[0], None)
            else:
                tt, y = _as_series(value, str(name), t, rate)
            panels.append((str(name), tt, y, _component_names(y.shape[1]), ""))
        return panels
    arr = as_float_array(data, "data", allow_nan=True)
    if arr.ndim == 3:
        names = channels or [f"channel {j + 1}" for j in range(arr.shape[1])]
        if len(names) != arr.shape[1]:
            raise DataError(f"Expected {arr.shape[1]} `channels` names, got {len(names)}")
        for j, name in enumerate(names):
            tt, y = _as_series(arr[:, j, :], str(name), t, rate)
            panels.append((str(name), tt, y, _component_names(y.shape[1]), ""))
        return panels
    name = channels[0] if channels else "data"
    tt, y = _as_series(arr, str(name), t, rate)
    return [(str(name), tt, y, _component_names(y.shape[1]), "")]


def _as_events(events):
    """List of (time, label, context) from Events, tuples or a mapping."""
    out = []
    if events is None:
        return out
    if isinstance(events, (str, bytes)) or not hasattr(events, "__iter__"):
        raise DataError(
            f"Expected `events` to be a list of Event, (time, label) pairs or a mapping, got "
            f"{events!r}"
        )
    if isinstance(events, Mapping):
        for label, times in events.items():
            for time in np.atleast_1d(np.asarray(times, dtype=float)):
                out.append((float(time), str(label), ""))
        return out
    for k, ev in enumerate(events):
        if hasattr(ev, "time") and hasattr(ev, "label"):
            out.append((float(ev.time), str(ev.label), str(getattr(ev, "context", ""))))
        elif isinstance(ev, (tuple, list)) and 1 <= len(ev) <= 3:
            time = float(ev[0])
            label = str(ev[1]) if len(ev) > 1 else ""
            context = str(ev[2]) if len(ev) > 2 else ""
            out.append((time, label, context))
        else:
            raise DataError(
                f"`events[{k}]` = {ev!r} is not an event; give Event objects, "
                "(time, label[, context]) tuples or a mapping label -> times"
            )
    for time, label, _ in out:
        if not np.isfinite(time):
            raise DataError(f"Event {label!r} has a non-finite time {time}")
    return out


def _event_style(label: str, context: str) -> tuple[str, str]:
    color = SIDE_COLORS.get(context.strip().capitalize(), SIDE_COLORS["General"])
    low = label.lower()
    style = "--" if "off" in low else ("-" if "strike" in low or "contact" in low else ":")
    return color, style


def xy_view(
    data,
    *,
    time=None,
    rate: float | None = None,
    channels: Sequence[str] | None = None,
    events=None,
    cursor=None,
    fig=None,
    title: str | None = None,
) -> XYViewer:
    """Plot time series in stacked panels that share the time axis.

    Parameters
    ----------
    data : Trial, mapping or array_like
        - a Trial: `channels` name markers (x, y, z in m), analog channels,
          entries of ``trial.results`` (one sample per point frame) or force
          plate signals ``"FP1.force"``, ``"FP2.cop"``, ``"FP1.moment"``,
          ``"FP1.free_moment"``, each on its own time base. Default channels:
          the results, else the plate forces, else the first four markers;
        - a mapping name -> array (n,) or (n, k) sampled at `t` / `rate`, or
          name -> ``(time, values)`` with its own time vector;
        - an array (n,) or (n, k) (one panel) or (n, n_channels, k) (a panel
          per channel).
    time : array_like, shape (n,), optional
        Common time vector, s, for mapping/array data.
    rate : float, optional
        Sample rate, Hz, used when `time` is not given (else sample numbers).
    channels : sequence of str, optional
        Channels to draw, in order (one panel each).
    events : sequence or mapping, optional
        Event lines: ``Event`` objects, ``(time, label[, context])`` tuples or a
        mapping label -> times. Default: the trial's events. Left events are
        red, right green, others grey; "Foot Off" dashed, "Foot Strike" solid.
    cursor : bool or StickViewer, optional
        True: add a vertical cursor moved by :meth:`XYViewer.set_time`. A
        :class:`StickViewer`: the cursor follows the viewer's displayed frame
        (also while its animation plays).
    fig : matplotlib.figure.Figure, optional
        Figure to draw into (default: a new one).
    title : str, optional
        Figure title.

    Returns
    -------
    XYViewer

    Raises
    ------
    DataError
        Unknown channel, inconsistent lengths, bad events.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.graphics import xy_view
    >>> t = np.linspace(0, 1, 101)
    >>> data = {"sin": np.sin(t), "cos": np.cos(t)}
    >>> v = xy_view(data, time=t, events=[(0.5, "Foot Off", "Left")])
    >>> len(v.axes)
    2
    >>> import matplotlib.pyplot as plt; plt.close(v.fig)
    """
    t = time
    if rate is not None:
        rate = as_positive_float(rate, "rate", unit="Hz")
    channels = check_names(channels, "channels")
    check_figure(fig)
    from ahbm.graphics._stick_data import _is_trial
    from ahbm.graphics.stick import StickViewer

    if not (cursor is None or isinstance(cursor, (bool, StickViewer))):
        raise DataError(
            f"`cursor` must be True, False, None or a StickViewer, got {type(cursor).__name__}"
        )
    panels = _resolve(data, t, rate, channels)
    if not panels:
        raise DataError("No channel to plot; `channels` is empty")
    if events is None and _is_trial(data):
        events = data.events
    evs = _as_events(events)

    plt = pyplot()
    if fig is None:
        fig = plt.figure(figsize=(7.0, 1.2 + 1.6 * len(panels)))
    axes = list(np.atleast_1d(fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]))
    lines: dict = {}
    event_lines = []
    for ax, (name, tt, y, comps, unit) in zip(axes, panels, strict=True):
        drawn = ax.plot(tt, y, lw=1.2)
        for line, comp in zip(drawn, comps, strict=True):
            line.set_label(comp)
        lines[name] = drawn
        ax.set_ylabel(f"{name} ({unit})" if unit else name, fontsize=8)
        if len(comps) > 1:
            ax.legend(loc="upper right", fontsize=7, ncols=len(comps), frameon=False)
        for time, label, context in evs:
            color, style = _event_style(label, context)
            event_lines.append(ax.axvline(time, color=color, ls=style, lw=1.0, label=label))
        ax.grid(True, alpha=0.3)
    for time, label, context in evs:
        color, _ = _event_style(label, context)
        axes[0].annotate(
            label,
            (time, 0.98),
            xycoords=("data", "axes fraction"),
            fontsize=6,
            color=color,
            rotation=90,
            va="top",
            ha="right",
        )
    known_rate = rate is not None or _is_trial(data) or t is not None
    axes[-1].set_xlabel("time (s)" if known_rate else "sample")
    suptitle = fig.suptitle(title) if title else None
    plain_text(*axes, suptitle)  # channel names, event labels and titles are data
    cursor_lines = []
    if cursor is not None and cursor is not False:
        t0 = float(panels[0][1][0]) if panels[0][1].size else 0.0
        cursor_lines = [ax.axvline(t0, color="k", lw=1.0, alpha=0.7) for ax in axes]
    viewer = XYViewer(fig, axes, [p[0] for p in panels], lines, event_lines, cursor_lines)
    if isinstance(cursor, StickViewer):
        cursor.add_listener(viewer.set_time)
    return viewer
