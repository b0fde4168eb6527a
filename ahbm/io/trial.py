"""The `Trial` container: one recording and everything computed from it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ahbm.errors import DataError, MissingDependencyError
from ahbm.types import Event

__all__ = ["Trial", "ForcePlate", "Event", "check_trial"]


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
        """Marker trajectories as a DataFrame (see :func:`ahbm.io.tables.trial_to_dataframe`).

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
        from ahbm.io.tables import trial_to_dataframe

        return trial_to_dataframe(self)

    @classmethod
    def from_dataframe(cls, points, *, analogs=None, point_rate=None, point_units=None):
        """Build a Trial from DataFrames (see :func:`ahbm.io.tables.dataframe_to_trial`).

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
        from ahbm.io.tables import dataframe_to_trial

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


def _label_list(values, field: str, n: int, *, required: bool) -> list[str]:
    """`values` as a list of `n` strings (or an empty list where allowed)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise DataError(
            f"Expected `trial.{field}` to be a list of str, got {type(values).__name__}"
        )
    items = list(values)
    if not items and (not required or n == 0):
        return items
    if len(items) != n:
        raise DataError(
            f"`trial.{field}` has {len(items)} labels for {n} "
            f"{'points' if field.startswith('point') else 'channels'}; give one per column"
        )
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise DataError(
                f"`trial.{field}[{i}]` is {type(item).__name__} ({item!r}); labels must be str"
            )
    return items


def _numeric(value, field: str, ndim: int, trailing: tuple = ()) -> np.ndarray:
    """A real float64 array of `ndim` axes whose last axes equal `trailing`."""
    from ahbm._internal.validation import as_float_array

    arr = as_float_array(value, f"trial.{field}", allow_nan=True)
    if arr.ndim != ndim or (trailing and arr.shape[ndim - len(trailing) :] != trailing):
        want = ["n"] * (ndim - len(trailing)) + [str(t) for t in trailing]
        raise DataError(
            f"Expected `trial.{field}` to have shape ({', '.join(want)}), got {arr.shape}"
        )
    if np.isinf(arr).any():
        raise DataError(f"`trial.{field}` contains inf; use NaN for missing samples")
    return arr


def _rate(value, field: str, n: int) -> float:
    """A finite rate, positive when there are samples."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise DataError(f"Expected `trial.{field}` to be a number in Hz, got {value!r}")
    try:
        rate = float(value)
    except (TypeError, ValueError) as err:
        raise DataError(f"Expected `trial.{field}` to be a number in Hz, got {value!r}") from err
    if not np.isfinite(rate) or rate < 0 or (n and rate == 0):
        raise DataError(
            f"`trial.{field}` must be positive (Hz) for {n} samples, got {value!r}; set the "
            "sample rate"
        )
    return rate


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


#: The kinds of points that are not marker positions (C3D model outputs).
POINT_KINDS = ("angle", "moment", "power", "force", "scalar")


def point_kinds_from(value, labels, *, where: str) -> dict[str, tuple[str, str]]:
    """Check a ``point_kinds`` mapping read from a file or given by a user.

    Parameters
    ----------
    value : dict or None
        ``{label: (kind, unit)}`` (pairs may be lists, as JSON and MATLAB
        return them); None or empty for none.
    labels : list of str
        The point labels the mapping must refer to.
    where : str
        What holds the mapping (a file, an argument), for messages.

    Returns
    -------
    dict of str to (str, str)

    Raises
    ------
    DataError
        If an entry is not a (kind, unit) pair of strings, its kind is not one
        of `POINT_KINDS`, or its label is not a point label.

    Examples
    --------
    >>> point_kinds_from({"LKneeAngles": ["angle", "rad"]}, ["LKneeAngles"], where="x")
    {'LKneeAngles': ('angle', 'rad')}
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(
            f"{where}: point_kinds must map point labels to (kind, unit), got "
            f"{type(value).__name__}"
        )
    known = set(labels)
    out = {}
    for label, pair in value.items():
        ok = (
            isinstance(pair, tuple | list)
            and len(pair) == 2
            and all(isinstance(x, str) for x in pair)
        )
        if not ok or pair[0] not in POINT_KINDS:
            raise DataError(
                f"{where}: point_kinds[{label!r}] = {pair!r}; expected (kind, unit) with kind "
                f"one of {list(POINT_KINDS)}"
            )
        if label not in known:
            raise DataError(
                f"{where}: point_kinds names {label!r}, which is not a point label; give kinds "
                "only for the points the trial holds"
            )
        out[str(label)] = (str(pair[0]), str(pair[1]))
    return out


def _float_or_nan(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")
