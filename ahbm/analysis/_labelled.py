"""Signal functions that take a labelled recording as well as an array (internal).

A *labelled signal* is any object whose type has the two methods of the
protocol below; :class:`ahbm.io.Trial` is the one ahbm ships (this package sits
below :mod:`ahbm.io` in the layer order, so it recognizes the protocol instead
of importing the class):

``x.__ahbm_signal__() -> (values, time, labels)``
    The samples, shape (n_frames, n_points, 3), their times in s (with the
    recording's first-frame offset) and one label per point.
``x.__ahbm_with_signal__(values, *, derivative=0, rate=None, events=None, results=None)``
    A copy of `x` holding `values` instead (see ``Trial.__ahbm_with_signal__``).

:func:`accepts_labelled` makes a signal function ``f(x, *, rate=None, time=None,
...)`` return the same kind as it is given.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ahbm.errors import DataError


def is_labelled(x) -> bool:
    """True if `x` follows the labelled-signal protocol (e.g. a Trial)."""
    return hasattr(type(x), "__ahbm_signal__") and hasattr(type(x), "__ahbm_with_signal__")


def accepts_labelled(kind: str = "signal"):
    """Decorate a signal function so that a labelled signal in gives one out.

    Parameters
    ----------
    kind : {"signal", "derivative", "derivatives", "fill", "cycles"}
        What the function returns for an array: a signal of the same shape,
        a derivative (of order ``order``, default 1), ``(velocity,
        acceleration)``, ``(filled, report)``, or time-normalized cycles
        (n_cycles, n_points, ...).
    """

    def decorate(func):
        takes_time = "time" in inspect.signature(func).parameters

        @functools.wraps(func)
        def wrapper(x, *args, **kwargs):
            if not is_labelled(x):
                return func(x, *args, **kwargs)
            name, what = func.__name__, type(x).__name__
            for key in ("rate", "time"):
                if kwargs.get(key) is not None:
                    raise DataError(
                        f"{name}: `{key}` is for arrays; a {what} carries its own time axis "
                        f"({what.lower()}.time, with its first-frame offset): drop `{key}`"
                    )
            if kwargs.get("axis", 0) != 0:
                raise DataError(f"{name}: a {what}'s time axis is its first axis; drop `axis`")
            values, time, labels = x.__ahbm_signal__()
            if takes_time and len(time):
                kwargs["time"] = time
            if kind == "fill" and kwargs.get("labels") is None:
                kwargs["labels"] = labels
            if kind == "cycles":
                return _cycles(func, x, values, args, kwargs)
            out = func(values, *args, **kwargs)
            if kind == "fill":
                filled, report = out
                return x.__ahbm_with_signal__(filled), report
            if kind == "derivatives":
                velocity, acceleration = out
                return (
                    x.__ahbm_with_signal__(velocity, derivative=1),
                    x.__ahbm_with_signal__(acceleration, derivative=2),
                )
            order = int(kwargs.get("order", 1)) if kind == "derivative" else 0
            return x.__ahbm_with_signal__(out, derivative=order)

        wrapper.__ahbm_labelled__ = kind
        return wrapper

    return decorate


def event_times(events) -> np.ndarray | list:
    """Event objects (anything with ``.time``) as their times; other input unchanged."""
    if isinstance(events, (list, tuple)) and events and all(hasattr(e, "time") for e in events):
        return [float(e.time) for e in events]
    return events


def _cycles(func, x, values, args, kwargs):
    """time_normalize on a labelled signal: one labelled cycle per pair of events."""
    if args:
        events, args = args[0], args[1:]
    elif "events" in kwargs:
        events = kwargs.pop("events")
    else:
        raise DataError(f"{func.__name__}: give the cycle boundaries `events`")
    times = np.asarray(event_times(events), dtype=float).ravel()
    known = list(getattr(x, "events", []))
    if isinstance(events, (list, tuple)):  # boundaries given as Event objects come along too
        known += [e for e in events if hasattr(e, "label") and hasattr(e, "time")]
    known = list(dict.fromkeys(known))  # Events are frozen values: drop repeats
    out = func(values, times, *args, **kwargs)  # (n_cycles, n_points, n_labels, 3)
    n_points = out.shape[1]
    fraction = np.linspace(0.0, 1.0, n_points)
    cycles = []
    for k in range(out.shape[0]):
        t0, t1 = times[k], times[k + 1]
        inside = [e for e in known if t0 <= e.time <= t1]
        events_k = sorted(
            (
                type(e)(e.label, float(100.0 * (e.time - t0) / (t1 - t0)), e.context, e.description)
                for e in inside
            ),
            key=lambda e: e.time,
        )
        cycles.append(
            x.__ahbm_with_signal__(
                out[k],
                rate=(n_points - 1) / 100.0,
                events=events_k,
                results={"cycle_time": t0 + fraction * (t1 - t0)},
            )
        )
    return cycles
