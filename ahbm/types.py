"""Base-layer types shared by every package: the result-type rule and its repr.

Result types (the rule)
-----------------------
A function that returns more than one array returns a *result object*: a
frozen dataclass (``@dataclass(frozen=True, repr=False)``) that inherits
:class:`ResultRepr`. Its fields are arrays with the batch axes first and SI
units (angles in radians; degrees only in files and figures that say so);
scalars and labels may sit beside them. Its ``repr`` shows each field's
shape, never the data, so that a whole trial prints in one line per field.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["ResultRepr"]


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
