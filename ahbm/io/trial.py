"""The `Trial` container: one recording and everything computed from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ahbm.errors import DataError
from ahbm.types import Event

__all__ = ["Trial", "ForcePlate", "Event"]


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
        return (
            f"Trial(source={self.source!r}, frames={self.n_frames}, "
            f"points={self.n_points} @ {self.point_rate:g} Hz, "
            f"analogs={self.analogs.shape[1] if self.analogs.ndim == 2 else 0} "
            f"@ {self.analog_rate:g} Hz, force_plates={len(self.force_plates)}, "
            f"events={len(self.events)})"
        )
