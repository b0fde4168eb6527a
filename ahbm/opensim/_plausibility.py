"""Plausibility of the data the OpenSim tools read (internal).

Bounds beyond which a value is no measurement, the check of a data file's
times, and the :class:`~ahbm.errors.DataError` that names the file, the
column and the frame of a value beyond its bound, shared by
:mod:`ahbm.opensim.id_tool`, :mod:`ahbm.opensim.external_loads`,
:mod:`ahbm.opensim.coordinates` and :mod:`ahbm.opensim.ik_tool`.
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError

#: Bounds beyond which a value is no measurement (a damaged file, a wrong unit, another
#: quantity): generalized coordinates (rad or m), forces (N), points of application
#: (centres of pressure, m) and torques (N m). The tools refuse such values, naming the
#: file, the column and the frame, rather than compute garbage from them.
MAX_COORDINATE = 1e3
MAX_FORCE = 1e6
MAX_POINT = 1e3
MAX_TORQUE = 1e6


def _frame_text(row: int, time) -> str:
    """``frame 3 (time 0.05 s)`` for messages (`time` None: no time)."""
    if time is None:
        return f"frame {row}"
    return f"frame {row} (time {float(time):.6g} s)"


def _check_times(time, source: str, what: str) -> None:
    """DataError unless the times of a data file are finite and strictly increasing."""
    t = np.asarray(time, dtype=float)
    finite = np.isfinite(t)
    if not finite.all():
        k = int(np.argmin(finite))
        raise DataError(
            f"{what} '{source}': the time of row {k} is {t[k]!r}; times must be finite and "
            "strictly increasing: fix that row"
        )
    if t.shape[0] > 1:
        step = np.diff(t)
        if not (step > 0).all():
            k = int(np.argmin(step > 0))
            raise DataError(
                f"{what} '{source}': the time of row {k + 1} ({t[k + 1]:.9g} s) does not come "
                f"after that of row {k} ({t[k]:.9g} s); times must be strictly increasing: fix "
                "or remove the row"
            )


def _implausible(kind: str, bound: float, unit: str, what: str, source: str, column: str,
                 row: int, time, value: float, shown: str = "") -> DataError:  # fmt: skip
    """The DataError of a value beyond its physical bound (or missing, NaN)."""
    where = f"{what} '{source}', column '{column}', {_frame_text(row, time)}"
    if np.isnan(value):
        return DataError(
            f"{where}: the {kind} is missing (NaN); the tool needs it in every frame: fill the "
            "gap (e.g. by interpolation) or remove the row"
        )
    return DataError(
        f"{where}: {shown or f'{value:g} {unit}'} is beyond the bound of ±{bound:g} {unit} for "
        f"a {kind}, which no measurement can reach; the file is damaged, in another unit or "
        "the column holds another quantity: fix that value"
    )
