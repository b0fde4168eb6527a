"""Base-layer types shared by every package: the result-type rule and its repr.

Result types (the rule)
-----------------------
A function that returns more than one array returns a *result object*: a
frozen dataclass (``@dataclass(frozen=True, repr=False)``) that inherits
:class:`ResultRepr`. Its fields are arrays with the batch axes first and SI
units (angles in radians; degrees only in files and figures that say so);
scalars and labels may sit beside them. Its ``repr`` shows each field's
shape, never the data, so that a whole trial prints in one line per field.

Events
------
:class:`Event` is the one record of a labelled instant (a gait event read
from a file, found by :func:`ahbm.analysis.detect_gait_events`, or written
by a user); ``ahbm.io.Event`` and ``ahbm.io.trial.Event`` are this class.
The events that :func:`ahbm.dynamics.simulate` locates are a different thing
(a zero-crossing function with actions): ``ahbm.dynamics.SimulationEvent``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["ResultRepr", "Event"]


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape} {value.dtype}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{len(value)}]"
    if isinstance(value, dict):
        return f"dict[{len(value)}]"
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return type(value).__name__


class ResultRepr:
    """Mixin for result dataclasses: a short ``repr`` with shapes, not data.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True, repr=False)
    ... class Fit(ResultRepr):
    ...     q: np.ndarray
    ...     cost: float
    >>> Fit(np.zeros((100, 3)), 0.5)
    Fit(q=array(100, 3) float64, cost=0.5)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        if not dataclasses.is_dataclass(self):
            return object.__repr__(self)
        parts = [
            f"{f.name}={_describe(getattr(self, f.name))}"
            for f in dataclasses.fields(self)
            if f.repr
        ]
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclasses.dataclass(frozen=True)
class Event:
    """A labelled instant of a recording (frozen: events are values).

    Attributes
    ----------
    label : str
        What happened, e.g. ``"Foot Strike"`` or ``"Foot Off"``.
    time : float
        Time in seconds from the start of the recording (frame 1 of a file is
        at ``(first_frame - 1) / point_rate``).
    context : str
        Side or context, e.g. ``"Left"``, ``"Right"``, ``"General"``.
    description : str
        Free text (how the event was found: method, plate number, ...).

    Examples
    --------
    >>> Event("Foot Strike", 0.52, "Left")
    Event(label='Foot Strike', time=0.52, context='Left', description='')
    """

    label: str
    time: float
    context: str = ""
    description: str = ""
