"""The `Trial` container: one recording and everything computed from it.

A Trial converts to and from pandas DataFrames here (:func:`trial_to_dataframe`,
:func:`analogs_to_dataframe`, :func:`dataframe_to_trial`, also as
:meth:`Trial.to_dataframe` and :meth:`Trial.from_dataframe`); files are read
and written by the other modules of :mod:`ahbm.io`.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ahbm._internal.validation import as_positive_float
from ahbm.errors import AhbmWarning, DataError, MissingDependencyError
from ahbm.io._trial_fields import _float_or_nan, _label_list, _numeric, _rate, point_kinds_from
from ahbm.types import Event

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Trial",
    "ForcePlate",
    "Event",
    "check_trial",
    "trial_to_dataframe",
    "dataframe_to_trial",
    "analogs_to_dataframe",
]


@dataclass
class ForcePlate:
    """Force plate data expressed in the lab frame, SI units.

    Attributes
    ----------
    force : ndarray, shape (n_samples, 3)
        Force measured by the plate, N, in the lab frame: the plate's own
        output sign rotated into the lab frame. For the plates in common use
        (and every shared sample file) that is the ground reaction force, the
        force the ground exerts on the subject, +z (up) during stance.
    moment : ndarray, shape (n_samples, 3)
        Moment about the plate origin, N m, lab frame.
    cop : ndarray, shape (n_samples, 3)
        Centre of pressure, m, lab frame (NaN where the vertical force is
        below the threshold).
    free_moment : ndarray, shape (n_samples, 3)
        Free torque about the COP, N m, lab frame.
    corners : ndarray, shape (4, 3)
        Plate corners in the lab frame, m.
    origin : ndarray, shape (3,)
        Plate origin (centre of the working surface) in the lab frame, m.
    rate : float
        Sample rate of the arrays, Hz.
    plate_type : int
        C3D FORCE_PLATFORM:TYPE (1-4), 0 if unknown.
    """

    force: np.ndarray
    moment: np.ndarray
    cop: np.ndarray
    free_moment: np.ndarray
    corners: np.ndarray
    origin: np.ndarray
    rate: float
    plate_type: int = 0

    def __repr__(self) -> str:
        n = int(np.shape(self.force)[0]) if np.ndim(self.force) == 2 else 0
        try:
            corners = np.asarray(self.corners, dtype=float)
            sides = np.linalg.norm(corners[[0, 0]] - corners[[1, 3]], axis=1)
            size = f"{sides[0]:.3g} x {sides[1]:.3g} m"
            centre = ", ".join(f"{v:.3g}" for v in np.asarray(self.origin, dtype=float))
        except (ValueError, IndexError, TypeError):
            size, centre = "?", "?"
        fz = np.asarray(self.force, dtype=float)[:, 2] if n else np.zeros(0)
        peak = f", peak Fz {np.nanmax(fz):.4g} N" if fz.size and np.isfinite(fz).any() else ""
        return (
            f"ForcePlate(type {self.plate_type}, {n} samples @ {self.rate:g} Hz, {size}, "
            f"centre ({centre}) m{peak})"
        )


@dataclass
class Trial:
    """One recording: markers, analog channels, force plates, events, results.

    Attributes
    ----------
    points : ndarray, shape (n_frames, n_points, 3)
        Marker (point) trajectories, in `point_units` (metres by default);
        NaN where a marker is missing.
    point_labels : list of str
        One label per point.
    point_rate : float
        Point (video) sample rate, Hz.
    point_units : str
        Units of `points` ("m" after the default conversion).
    point_descriptions : list of str
        Optional descriptions, same length as `point_labels`.
    point_residuals : ndarray or None, shape (n_frames, n_points)
        Reconstruction residuals (same units as points); NaN where invalid.
    point_mask : ndarray of bool or None, shape (n_frames, n_points)
        True where the sample was valid in the file.
    point_kinds : dict of str to (str, str)
        Points that are not marker positions: ``{label: (kind, unit)}`` with
        kind one of "angle", "moment", "power", "force", "scalar" (C3D model
        outputs such as ``LKneeAngles``), e.g. ``{"LKneeAngles": ("angle",
        "rad")}``. Their columns of `points` are in that unit, not in
        `point_units`; labels not listed are marker positions. Default empty.
    analogs : ndarray, shape (n_samples, n_channels)
        Analog channels in their physical units (scale and offset applied).
    analog_labels, analog_units, analog_descriptions : list of str
    analog_rate : float
        Analog sample rate, Hz.
    first_frame : int
        Number of the first frame in the original recording (1-based, as C3D).
    force_plates : list of ForcePlate
    events : list of Event
    subject : dict
        Subject metadata (name, height, mass, leg lengths, ...), SI units.
    parameters : dict
        Full parameter tree of the source file, ``{group: {param: value}}``
        (C3D), plus ``"__descriptions__"`` entries where available.
    results : dict
        Computed results, ``{name: ndarray}`` with time along axis 0, e.g.
        joint angles or moments; written next to the raw data by the HDF5
        store.
    source : str
        Path of the file this trial was read from ("" if built in code).
    """

    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3)))
    point_labels: list[str] = field(default_factory=list)
    point_rate: float = 0.0
    point_units: str = "m"
    point_descriptions: list[str] = field(default_factory=list)
    point_residuals: np.ndarray | None = None
    point_mask: np.ndarray | None = None
    analogs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    analog_labels: list[str] = field(default_factory=list)
    analog_units: list[str] = field(default_factory=list)
    analog_descriptions: list[str] = field(default_factory=list)
    analog_rate: float = 0.0
    first_frame: int = 1
    force_plates: list[ForcePlate] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    subject: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    point_kinds: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        """Number of point frames."""
        return int(self.points.shape[0])

    @property
    def n_points(self) -> int:
        """Number of points (markers)."""
        return int(self.points.shape[1]) if self.points.ndim == 3 else 0

    @property
    def time(self) -> np.ndarray:
        """Time of each point frame in seconds, shape (n_frames,).

        The first frame of the recording is at ``(first_frame - 1) / point_rate``.
        """
        if self.point_rate <= 0:
            raise DataError("Trial.point_rate is not set; cannot compute times")
        return (np.arange(self.n_frames) + self.first_frame - 1) / self.point_rate

    @property
    def analog_time(self) -> np.ndarray:
        """Time of each analog sample in seconds, shape (n_samples,)."""
        if self.analog_rate <= 0:
            raise DataError("Trial.analog_rate is not set; cannot compute times")
        t0 = (self.first_frame - 1) / self.point_rate if self.point_rate > 0 else 0.0
        return t0 + np.arange(self.analogs.shape[0]) / self.analog_rate

    def marker(self, label: str) -> np.ndarray:
        """Trajectory of one marker, shape (n_frames, 3).

        Raises
        ------
        DataError
            If no point has this label; the message lists the labels.
        """
        try:
            i = self.point_labels.index(label)
        except ValueError:
            raise DataError(
                f"Marker {label!r} not found in trial {self.source or '(in memory)'}; "
                f"available markers: {', '.join(self.point_labels)}"
            ) from None
        return self.points[:, i, :]

    def analog(self, label: str) -> np.ndarray:
        """One analog channel, shape (n_samples,)."""
        try:
            i = self.analog_labels.index(label)
        except ValueError:
            raise DataError(
                f"Analog channel {label!r} not found in trial "
                f"{self.source or '(in memory)'}; available channels: "
                f"{', '.join(self.analog_labels)}"
            ) from None
        return self.analogs[:, i]

    # -- the labelled-signal protocol of ahbm.analysis (see ahbm/analysis/_labelled.py) --

    def __ahbm_signal__(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """``(points, time, labels)``: what ahbm.analysis functions process in a Trial."""
        pts = np.asarray(self.points, dtype=np.float64)
        if pts.ndim != 3 or pts.shape[-1] != 3:
            raise DataError(
                f"`trial.points` has shape {pts.shape}; expected (n_frames, n_points, 3)"
            )
        if self.n_frames and self.point_rate <= 0:
            raise DataError(
                f"trial {self.source or '(in memory)'} has no point_rate; set it (Hz) before "
                "processing the trial"
            )
        time = self.time if self.n_frames else np.zeros(0)
        return pts, time, list(self.point_labels)

    def __ahbm_with_signal__(
        self, points, *, derivative: int = 0, rate=None, events=None, results=None
    ) -> Trial:
        """A copy holding `points` instead of ``self.points``.

        Labels, units, events, analogs, force plates, subject and parameters
        are kept; ``point_mask`` is where `points` is finite; residuals are kept
        for a filtered or gap-filled signal (NaN where the new value is),
        dropped for a derivative, whose units get ``/s`` (order 1) or ``/s^k``
        -- markers and model outputs (``point_kinds``) alike. With `rate` the
        frames are on a new time axis (a time-normalized cycle: frame 1 at 0,
        `rate` frames per unit): analogs and force plates, on the old axis, are
        left out, and `events` and `results` replace the trial's.
        """
        pts = np.asarray(points, dtype=np.float64)
        valid = np.isfinite(pts).all(axis=-1)
        suffix = "" if derivative == 0 else ("/s" if derivative == 1 else f"/s^{derivative}")
        residuals = None
        if derivative == 0 and rate is None and self.point_residuals is not None:
            residuals = np.where(valid, np.asarray(self.point_residuals, dtype=float), np.nan)
        changes: dict[str, Any] = {}
        if rate is not None:
            changes = dict(
                point_rate=float(rate),
                first_frame=1,
                analogs=np.zeros((0, 0)),
                analog_labels=[],
                analog_units=[],
                analog_descriptions=[],
                analog_rate=0.0,
                force_plates=[],
            )
        return dataclasses.replace(
            self,
            points=pts,
            point_mask=valid,
            point_residuals=residuals,
            point_units=self.point_units + suffix,
            point_kinds={k: (kind, unit + suffix) for k, (kind, unit) in self.point_kinds.items()},
            results=dict(self.results) if results is None else results,
            events=list(self.events) if events is None else list(events),
            **changes,
        )

    def to_xarray(self):
        """Marker trajectories as an ``xarray.DataArray`` (xarray is optional).

        Returns
        -------
        xarray.DataArray, dims ``("time", "point", "axis")``
            Coordinates: ``time`` (s, ``trial.time``, with the first-frame
            offset), ``point`` (labels), ``axis`` (``"x"``, ``"y"``, ``"z"``);
            ``attrs``: ``units``, ``point_rate``, ``first_frame``, ``source``,
            ``point_kinds`` (``{label: [kind, unit]}``) and ``events``
            (``[[label, context, time], ...]``).

        Raises
        ------
        MissingDependencyError
            If xarray is not installed (it is not a dependency of ahbm:
            ``pip install xarray``).

        Examples
        --------
        >>> t = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=100.0)
        >>> t.to_xarray().dims                               # doctest: +SKIP
        ('time', 'point', 'axis')
        """
        try:
            import xarray
        except ImportError as err:
            raise MissingDependencyError(
                "Trial.to_xarray needs the optional package xarray, which ahbm does not "
                "install: `pip install xarray` (or use Trial.to_dataframe, pandas)"
            ) from err
        pts, time, labels = self.__ahbm_signal__()
        return xarray.DataArray(
            pts,
            dims=("time", "point", "axis"),
            coords={"time": time, "point": labels, "axis": ["x", "y", "z"]},
            name="points",
            attrs={
                "units": self.point_units,
                "point_rate": float(self.point_rate),
                "first_frame": int(self.first_frame),
                "source": self.source,
                "point_kinds": {k: [v[0], v[1]] for k, v in self.point_kinds.items()},
                "events": [[e.label, e.context, float(e.time)] for e in self.events],
            },
        )

    def to_dataframe(self):
        """Marker trajectories as a DataFrame (see :func:`trial_to_dataframe`).

        Returns
        -------
        pandas.DataFrame
            Index: time in seconds (named ``"time"``); columns: MultiIndex
            (marker, axis) with axes ``"x"``, ``"y"``, ``"z"``; ``attrs`` hold
            ``point_rate``, ``point_units``, ``first_frame`` and ``source``.

        Examples
        --------
        >>> import numpy as np
        >>> t = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=100.0)
        >>> t.to_dataframe().shape
        (2, 3)
        """
        return trial_to_dataframe(self)

    @classmethod
    def from_dataframe(cls, points, *, analogs=None, point_rate=None, point_units=None):
        """Build a Trial from DataFrames (see :func:`dataframe_to_trial`).

        Parameters
        ----------
        points : pandas.DataFrame
            Time-indexed, MultiIndex (marker, axis) columns, as made by
            :meth:`to_dataframe`.
        analogs : pandas.DataFrame or None, optional
            Time-indexed analog channels, one column per channel.
        point_rate : float or None, optional
            Hz; default from ``points.attrs`` or the index spacing.
        point_units : str or None, optional
            Default from ``points.attrs``, else ``"m"``.

        Examples
        --------
        >>> import numpy as np
        >>> t = Trial(points=np.ones((2, 1, 3)), point_labels=["A"], point_rate=100.0)
        >>> Trial.from_dataframe(t.to_dataframe()).point_labels
        ['A']
        """
        return dataframe_to_trial(
            points, analogs=analogs, point_rate=point_rate, point_units=point_units
        )

    def summary(self) -> str:
        """A short human-readable description: markers, rates, frames, plates, events.

        Examples
        --------
        >>> print(Trial().summary().splitlines()[0])
        source: (in memory)
        """
        n_an = self.analogs.shape[1] if self.analogs.ndim == 2 else 0
        lines = [f"source: {self.source or '(in memory)'}"]
        duration = self.n_frames / self.point_rate if self.point_rate > 0 else float("nan")
        lines.append(
            f"points: {self.n_points} markers, {self.n_frames} frames @ {self.point_rate:g} Hz "
            f"({duration:.3f} s), first frame {self.first_frame}, units {self.point_units}"
        )
        if self.n_points:
            lines.append("  markers: " + ", ".join(self.point_labels))
        lines.append(
            f"analogs: {n_an} channels, {self.analogs.shape[0] if n_an else 0} samples "
            f"@ {self.analog_rate:g} Hz"
        )
        if n_an:
            lines.append("  channels: " + ", ".join(self.analog_labels))
        lines.append(f"force plates: {len(self.force_plates)}")
        for i, fp in enumerate(self.force_plates):
            lines.append(
                f"  plate {i + 1}: type {fp.plate_type}, {np.shape(fp.force)[0]} samples "
                f"@ {fp.rate:g} Hz"
            )
        lines.append(f"events: {len(self.events)}")
        for ev in self.events:
            ctx = f"{ev.context} " if ev.context else ""
            lines.append(f"  {ctx}{ev.label} at {ev.time:.4f} s")
        if self.results:
            lines.append("results: " + ", ".join(str(k) for k in self.results))
        if self.subject:
            lines.append("subject: " + ", ".join(f"{k}={v}" for k, v in self.subject.items()))
        return "\n".join(lines)

    def __repr__(self) -> str:
        source = self.source if len(self.source) <= 60 else "..." + self.source[-57:]
        kinds = f" + {len(self.point_kinds)} model outputs" if self.point_kinds else ""
        results = f", results={len(self.results)}" if self.results else ""
        return (
            f"Trial(source={source!r}, frames={self.n_frames}, "
            f"points={self.n_points} @ {self.point_rate:g} Hz [{self.point_units}{kinds}], "
            f"analogs={self.analogs.shape[1] if self.analogs.ndim == 2 else 0} "
            f"@ {self.analog_rate:g} Hz, force_plates={len(self.force_plates)}, "
            f"events={len(self.events)}{results})"
        )


def check_trial(trial, *, name: str = "trial") -> Trial:
    """Check that a Trial is internally consistent before it is written.

    The one check that every writer (:func:`~ahbm.io.write_c3d`,
    :func:`~ahbm.io.write_trc`, :func:`~ahbm.io.write_csv`,
    :func:`~ahbm.io.write_mat`, :func:`~ahbm.io.save_trial`) runs first, so
    that no file is written from a trial whose labels and columns disagree.

    Parameters
    ----------
    trial : Trial
        The trial to check.
    name : str, optional
        Argument name used in messages.

    Returns
    -------
    Trial
        `trial` itself, unchanged.

    Raises
    ------
    DataError
        If `trial` is not a Trial (e.g. swapped arguments ``write_x(path,
        trial)``), or: ``points`` is not a real (n_frames, n_points, 3) array
        (NaN marks missing samples; inf, complex or text is rejected);
        ``point_labels`` is not one str per point (an empty list is accepted
        only without points); descriptions, residuals or mask disagree with the
        points; ``analogs`` is not (n_samples, n_channels) with one str label
        per channel; a rate is negative, not finite, or 0 while there are
        samples; ``first_frame`` is not an integer; a force plate's arrays
        disagree in shape; an event has a non-str label or a non-finite time.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> check_trial(t) is t
    True
    >>> t.point_labels = ["A", "B"]
    >>> check_trial(t)
    Traceback (most recent call last):
    ...
    ahbm.errors.DataError: `trial.point_labels` has 2 labels for 1 points; give one per column
    """
    if not isinstance(trial, Trial):
        hint = (
            "; the arguments look swapped: writers take the trial first, write_x(trial, path)"
            if isinstance(trial, (str, bytes)) or hasattr(trial, "__fspath__")
            else ""
        )
        raise DataError(f"Expected `{name}` to be a Trial, got {type(trial).__name__}{hint}")
    pts = _numeric(trial.points, "points", 3, (3,))
    n_frames, n_points = pts.shape[:2]
    _label_list(trial.point_labels, "point_labels", n_points, required=True)
    _label_list(trial.point_descriptions, "point_descriptions", n_points, required=False)
    for attr in ("point_residuals", "point_mask"):
        value = getattr(trial, attr)
        if value is not None and np.shape(value) != (n_frames, n_points):
            raise DataError(
                f"Expected `trial.{attr}` to have shape {(n_frames, n_points)} (frames, "
                f"points) or be None, got {np.shape(value)}"
            )
    _rate(trial.point_rate, "point_rate", n_frames)
    an = _numeric(trial.analogs, "analogs", 2)
    n_channels = an.shape[1] if an.shape[0] else 0
    _label_list(trial.analog_labels, "analog_labels", n_channels, required=True)
    _label_list(trial.analog_units, "analog_units", n_channels, required=False)
    _label_list(trial.analog_descriptions, "analog_descriptions", n_channels, required=False)
    _rate(trial.analog_rate, "analog_rate", an.shape[0])
    ff = trial.first_frame
    if isinstance(ff, (bool, str, bytes)) or not isinstance(ff, (int, np.integer, float)):
        raise DataError(f"Expected `trial.first_frame` to be an integer, got {ff!r}")
    if not (np.isfinite(ff) and float(ff) == int(ff) and abs(ff) < 2**53):
        raise DataError(f"Expected `trial.first_frame` to be an integer, got {ff!r}")
    if not isinstance(trial.point_units, str):
        raise DataError(f"Expected `trial.point_units` to be str, got {trial.point_units!r}")
    for i, fp in enumerate(trial.force_plates):
        if not isinstance(fp, ForcePlate):
            raise DataError(
                f"`trial.force_plates[{i}]` is {type(fp).__name__}; expected a ForcePlate"
            )
        n = None
        for part in ("force", "moment", "cop", "free_moment"):
            arr = _numeric(getattr(fp, part), f"force_plates[{i}].{part}", 2, (3,))
            if n is not None and arr.shape[0] != n:
                raise DataError(
                    f"`trial.force_plates[{i}].{part}` has {arr.shape[0]} samples, the force "
                    f"has {n}; give every plate array the same length"
                )
            n = arr.shape[0]
        _numeric(fp.corners, f"force_plates[{i}].corners", 2, (4, 3))
        _numeric(fp.origin, f"force_plates[{i}].origin", 1, (3,))
        _rate(fp.rate, f"force_plates[{i}].rate", n)
    for i, ev in enumerate(trial.events):
        if not isinstance(ev, Event):
            raise DataError(f"`trial.events[{i}]` is {type(ev).__name__}; expected an Event")
        for part in ("label", "context", "description"):
            if not isinstance(getattr(ev, part), str):
                raise DataError(f"`trial.events[{i}].{part}` must be str, got {ev!r}")
        if isinstance(ev.time, (bool, str, bytes)) or not np.isfinite(_float_or_nan(ev.time)):
            raise DataError(f"`trial.events[{i}].time` must be a finite time in s, got {ev!r}")
    point_kinds_from(trial.point_kinds, trial.point_labels, where="`trial.point_kinds`")
    for attr in ("subject", "parameters", "results"):
        if not isinstance(getattr(trial, attr), dict):
            raise DataError(
                f"Expected `trial.{attr}` to be a dict, got {type(getattr(trial, attr)).__name__}"
            )
    return trial


# ----------------------------------------------------------------------------- DataFrames

_AXES = ("x", "y", "z")


def trial_to_dataframe(trial: Trial) -> pd.DataFrame:
    """Marker trajectories of a Trial as a DataFrame.

    Parameters
    ----------
    trial : Trial
        ``points`` of shape (n_frames, n_points, 3).

    Returns
    -------
    pandas.DataFrame, shape (n_frames, 3 * n_points)
        Index: time in s (``trial.time``, or frame numbers when the rate is
        unknown), named ``"time"`` (``"frame"``). Columns: MultiIndex
        (marker, axis), level names ``("marker", "axis")``. ``attrs``:
        ``point_rate``, ``point_units``, ``first_frame``, ``source``, and
        ``point_kinds`` (``{label: [kind, unit]}``) when the trial has model
        outputs, whose columns are in that unit, not in ``point_units``.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.arange(6.0).reshape(1, 2, 3), point_labels=["A", "B"],
    ...           point_rate=100.0)
    >>> trial_to_dataframe(t)[("B", "x")].tolist()
    [3.0]
    """
    import pandas as pd

    check_trial(trial)
    pts = np.asarray(trial.points, dtype=np.float64)
    if len(trial.point_labels) != pts.shape[1]:
        raise DataError(
            f"`trial.point_labels` has {len(trial.point_labels)} labels for {pts.shape[1]} points"
        )
    cols = pd.MultiIndex.from_product(
        [list(trial.point_labels), list(_AXES)], names=["marker", "axis"]
    )
    if trial.point_rate > 0:
        index = pd.Index(trial.time, name="time")
    else:
        index = pd.Index(trial.first_frame + np.arange(pts.shape[0]), name="frame")
    df = pd.DataFrame(pts.reshape(pts.shape[0], 3 * pts.shape[1]), index=index, columns=cols)
    df.attrs.update(
        point_rate=float(trial.point_rate),
        point_units=str(trial.point_units),
        first_frame=int(trial.first_frame),
        source=str(trial.source),
    )
    if trial.point_kinds:
        df.attrs["point_kinds"] = {
            str(k): [str(v[0]), str(v[1])] for k, v in trial.point_kinds.items()
        }
    return df


def analogs_to_dataframe(trial: Trial) -> pd.DataFrame:
    """Analog channels of a Trial as a DataFrame.

    Returns
    -------
    pandas.DataFrame, shape (n_samples, n_channels)
        Index: ``trial.analog_time`` in s, named ``"time"``; one column per
        channel label. ``attrs``: ``analog_rate``, ``analog_units`` (list, one
        per channel).

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(analogs=np.zeros((4, 1)), analog_labels=["Fz"], analog_rate=1000.0,
    ...           point_rate=250.0)
    >>> analogs_to_dataframe(t).shape
    (4, 1)
    """
    import pandas as pd

    check_trial(trial)
    a = np.asarray(trial.analogs, dtype=np.float64)
    if a.ndim != 2:
        raise DataError(
            f"Expected `trial.analogs` to have shape (n_samples, n_channels), got {a.shape}"
        )
    if len(trial.analog_labels) != a.shape[1]:
        raise DataError(
            f"`trial.analog_labels` has {len(trial.analog_labels)} labels for {a.shape[1]} channels"
        )
    index = (
        pd.Index(trial.analog_time, name="time")
        if trial.analog_rate > 0
        else pd.RangeIndex(a.shape[0], name="sample")
    )
    df = pd.DataFrame(a, index=index, columns=list(trial.analog_labels))
    df.attrs.update(analog_rate=float(trial.analog_rate), analog_units=list(trial.analog_units))
    return df


def _infer_rate(index: pd.Index, name: str) -> float:
    t = np.asarray(index, dtype=np.float64)
    if t.size < 2:
        raise DataError(
            f"Cannot infer the sample rate of `{name}` from fewer than 2 rows; pass the rate"
        )
    dt = np.diff(t)
    step = float(np.median(dt))
    if not (step > 0) or np.max(np.abs(dt - step)) > 1e-6 * max(step, 1e-12) + 1e-9:
        raise DataError(
            f"The index of `{name}` is not uniformly increasing; pass the rate explicitly"
        )
    return 1.0 / step


def dataframe_to_trial(
    points: pd.DataFrame,
    *,
    analogs: pd.DataFrame | None = None,
    point_rate: float | None = None,
    point_units: str | None = None,
) -> Trial:
    """Build a Trial from a marker DataFrame (and optionally an analog DataFrame).

    Parameters
    ----------
    points : pandas.DataFrame
        Index time in s (or frame numbers when named ``"frame"``); MultiIndex
        columns (marker, axis) with each marker having the axes x, y, z (any
        order, upper or lower case).
    analogs : pandas.DataFrame or None, optional
        Index time in s; one column per channel.
    point_rate : float or None, optional
        Hz. Default: ``points.attrs["point_rate"]``, else inferred from the
        index spacing.
    point_units : str or None, optional
        Default: ``points.attrs["point_units"]``, else ``"m"``.

    Returns
    -------
    Trial
        With ``first_frame = round(t0 * point_rate) + 1`` (``t0`` the first
        time), or from ``attrs`` when given; ``point_kinds`` from
        ``attrs["point_kinds"]`` (model outputs and their units).

    Raises
    ------
    DataError
        If the columns are not (marker, axis) pairs with x, y and z for every
        marker, or the rate cannot be determined.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((3, 1, 3)), point_labels=["A"], point_rate=50.0)
    >>> dataframe_to_trial(trial_to_dataframe(t)).point_rate
    50.0
    """
    import pandas as pd

    if not isinstance(points, pd.DataFrame):
        raise DataError(f"Expected `points` to be a DataFrame, got {type(points).__name__}")
    if not isinstance(points.columns, pd.MultiIndex) or points.columns.nlevels != 2:
        raise DataError(
            "Expected `points` to have 2-level MultiIndex columns (marker, axis); build them "
            "with pandas.MultiIndex.from_product([labels, ['x', 'y', 'z']])"
        )
    if points.columns.has_duplicates:
        dup = points.columns[points.columns.duplicated()].tolist()
        raise DataError(
            f"`points` has duplicate (marker, axis) columns {dup[:5]}; give every marker a "
            f"unique label"
        )
    labels: list[str] = []
    for m in points.columns.get_level_values(0):
        if m not in labels:
            labels.append(str(m))
    n = len(points)
    arr = np.empty((n, len(labels), 3))
    axes_of = {}
    for m, a in points.columns:
        axes_of.setdefault(str(m), []).append(a)
    for j, m in enumerate(labels):
        lower = {str(a).lower(): a for a in axes_of[m]}
        if set(lower) != set(_AXES) or len(axes_of[m]) != 3:
            raise DataError(
                f"Marker {m!r} in `points` has axes {axes_of[m]}; expected exactly x, y, z"
            )
        for k, ax in enumerate(_AXES):
            col = points[(m, lower[ax])]
            try:
                arr[:, j, k] = col.to_numpy(dtype=np.float64)
            except (TypeError, ValueError) as err:
                raise DataError(f"Column ({m!r}, {ax!r}) of `points` is not numeric") from err
    attrs = points.attrs
    by_frame = points.index.name == "frame"
    if point_rate is not None:
        point_rate = as_positive_float(point_rate, "point_rate", unit="Hz")
    rate = point_rate if point_rate is not None else attrs.get("point_rate")
    if rate is None or not (float(rate) > 0):
        if by_frame:
            raise DataError("`points` is indexed by frame; pass `point_rate`")
        rate = _infer_rate(points.index, "points")
    rate = float(rate)
    if "first_frame" in attrs:
        first = int(attrs["first_frame"])
    elif n == 0:
        first = 1
    elif by_frame:
        first = int(points.index[0])
    else:
        t0 = float(points.index[0]) * rate
        first = int(round(t0)) + 1
        if abs(t0 - round(t0)) > 1e-6:
            warnings.warn(
                f"`points` starts at {points.index[0]} s, not a multiple of 1/{rate:g} s; "
                f"first_frame rounded to {first}",
                AhbmWarning,
                stacklevel=2,
            )
    units = point_units if point_units is not None else attrs.get("point_units", "m")
    trial = Trial(
        points=arr,
        point_labels=labels,
        point_rate=rate,
        point_units=str(units),
        first_frame=first,
        source=str(attrs.get("source", "")),
        point_kinds=point_kinds_from(
            attrs.get("point_kinds"), labels, where='`points.attrs["point_kinds"]`'
        ),
    )
    if analogs is not None:
        if not isinstance(analogs, pd.DataFrame):
            raise DataError(f"Expected `analogs` to be a DataFrame, got {type(analogs).__name__}")
        try:
            trial.analogs = analogs.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError("`analogs` must hold numbers only") from err
        trial.analog_labels = [str(c) for c in analogs.columns]
        arate = analogs.attrs.get("analog_rate")
        trial.analog_rate = (
            float(arate) if arate and float(arate) > 0 else _infer_rate(analogs.index, "analogs")
        )
        units_a = analogs.attrs.get("analog_units")
        trial.analog_units = (
            [str(u) for u in units_a]
            if units_a is not None and len(units_a) == trial.analogs.shape[1]
            else [""] * trial.analogs.shape[1]
        )
    return trial
