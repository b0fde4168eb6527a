"""The processing settings of the gait pipeline: one frozen dataclass, checked on creation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ahbm.errors import DataError
from ahbm.gait.markersets import MARKER_SETS

__all__ = ["GaitSettings", "SETTINGS_FIELDS", "COMPAT_MODES"]

#: Values of ``GaitSettings.compat``: ahbm's own rules, or Vicon Plug-in Gait's.
COMPAT_MODES = ("none", "plug-in-gait")


def _fail(name: str, expected: str, value) -> None:
    raise DataError(f"GaitSettings.{name} must be {expected}, got {value!r}")


def _positive(name: str, value, *, optional: bool = False, zero: bool = False) -> None:
    if value is None and optional:
        return
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    ok = ok and math.isfinite(float(value)) and (float(value) >= 0 if zero else float(value) > 0)
    if not ok:
        what = "a finite number >= 0" if zero else "a finite number > 0"
        _fail(name, what + (" or None" if optional else ""), value)


def _per_side(name: str, value) -> None:
    """None, one positive value (m) or {"Left": m, "Right": m}."""
    if isinstance(value, Mapping):
        unknown = set(value) - {"Left", "Right"}
        if unknown:
            _fail(name, 'a number or a dict with keys "Left" and "Right"', value)
        for side, v in value.items():
            _positive(f"{name}[{side!r}]", v, optional=True)
        return
    _positive(name, value, optional=True)


@dataclass(frozen=True)
class GaitSettings:
    """Processing settings of :func:`ahbm.gait.analyze_gait` (SI units).

    Every field is checked when the object is made: a bad value raises a
    :class:`~ahbm.errors.DataError` naming the field. Make a variant with
    ``settings.replace(cutoff=8.0)``.

    Attributes
    ----------
    marker_set : str or dict
        Name in :data:`MARKER_SETS` (``"plug_in_gait"``, ``"opensim"``) or a
        dict ``{"map": ..., "clusters": ...}``.
    marker_map : dict, optional
        Canonical Plug-in Gait name -> trial label (or list of labels averaged),
        overriding `marker_set`.
    cutoff : float
        Marker low-pass cutoff, Hz (zero-lag 4th-order Butterworth, Winter's
        correction). Default 6.
    grf_cutoff : float or None
        Low-pass cutoff of the assigned ground-reaction wrenches at the frame
        rate, Hz; None (default) uses them unfiltered.
    max_gap : int
        Longest interior marker gap (frames) filled by cubic spline; longer
        gaps raise a DataError. Default 10.
    bsp : {"de_leva"}
        Segment parameter table.
    sex : {"male", "female"}
        Column of the segment parameter table.
    threshold : float
        Force plate contact threshold, N. Default 20.
    kinetics : bool or "auto"
        Compute moments, powers and forces. ``"auto"`` (default): when the
        trial has force plates (or a GRF table), else kinematics only with a
        warning; True: required (a trial without plates is an error); False:
        kinematics only (no mass needed).
    up : "auto" or tuple of 3 floats
        Vertical lab axis; "auto" takes the coordinate axis along mid-ASIS
        minus the toes. Data are rotated so that it becomes +Z.
    leg_length, knee_width, ankle_width : float or dict or None
        Subject measurements, m; one value for both sides or
        ``{"Left": ..., "Right": ...}``; None reads them from the file or
        estimates them (with a warning).
    tibial_torsion : float or dict or None
        rad, positive = external torsion on both sides; None (default) reads
        L/RTibialTorsion from the file, else the static trial measures it
        (with a KAD or medial markers), else 0.
    thigh_rotation, shank_rotation : float or dict or None
        rad, Plug-in Gait's ThighRotation and ShankRotation (the wands' turn
        out of the knee's and the ankle's plane, the sign as the VSK's), one
        value or ``{"Left": ..., "Right": ...}``; None (default) reads them
        from the file, else the static trial measures them, else 0. Give them
        to reproduce a Plug-in Gait run whose subject values are known but
        not stored in the file.
    marker_radius : float
        m (default 7 mm, 14 mm markers).
    moment_frame : {"jcs", "distal", "proximal"}
        Axes the joint moments are projected on (signs as Plug-in Gait's in
        every case): ``"jcs"`` (default) the joint coordinate system of the
        joint angles, ``"distal"`` the distal segment's axes (Plug-in Gait's
        kinetics; use it to compare with Vicon's outputs), ``"proximal"`` the
        proximal segment's. See docs/conventions.md §9 for the choice.
    compat : {"none", "plug-in-gait"}
        ``"none"`` (default): ahbm's own rules. ``"plug-in-gait"``: reproduce
        Vicon's Plug-in Gait where its rules differ from ahbm's (the moments
        on the distal segment's axes whatever `moment_frame` says, the foot
        from the ankle-toe line and the static offsets with the heel marker
        unused, the load of a foot standing partly off the plates applied as
        measured instead of left unknown, a plate both feet touch given whole
        to the foot that stepped on it first instead of left unknown).
        docs/conventions.md §8.1 sets the two side by side.

    Examples
    --------
    >>> s = GaitSettings(cutoff=8.0, kinetics=False)
    >>> s.replace(max_gap=20).max_gap
    20
    """

    marker_set: str | Mapping = "plug_in_gait"
    marker_map: Mapping | None = None
    cutoff: float = 6.0
    grf_cutoff: float | None = None
    max_gap: int = 10
    bsp: str = "de_leva"
    sex: str = "male"
    threshold: float = 20.0
    kinetics: Any = "auto"
    up: Any = "auto"
    leg_length: Any = None
    knee_width: Any = None
    ankle_width: Any = None
    tibial_torsion: Any = None
    thigh_rotation: Any = None
    shank_rotation: Any = None
    marker_radius: float = 0.007
    moment_frame: str = "jcs"
    compat: str = "none"

    def __post_init__(self) -> None:
        ms = self.marker_set
        if isinstance(ms, str):
            if ms not in MARKER_SETS:
                _fail("marker_set", f"one of {', '.join(map(repr, MARKER_SETS))} or a dict", ms)
        elif not isinstance(ms, Mapping) or not isinstance(ms.get("map", {}), Mapping):
            _fail("marker_set", 'a marker-set name or a dict {"map": ..., "clusters": ...}', ms)
        mm = self.marker_map
        if mm is not None:
            good = isinstance(mm, Mapping) and all(
                isinstance(k, str)
                and (
                    isinstance(v, str)
                    or (isinstance(v, list | tuple) and v and all(isinstance(x, str) for x in v))
                )  # fmt: skip
                for k, v in mm.items()
            )
            if not good:
                _fail("marker_map", "a dict {canonical name: label or list of labels}", mm)
        _positive("cutoff", self.cutoff)
        _positive("grf_cutoff", self.grf_cutoff, optional=True)
        if isinstance(self.max_gap, bool) or not isinstance(self.max_gap, int | np.integer):
            _fail("max_gap", "an int >= 0 (frames)", self.max_gap)
        if self.max_gap < 0:
            _fail("max_gap", "an int >= 0 (frames)", self.max_gap)
        if not isinstance(self.bsp, str) or self.bsp.lower() != "de_leva":
            _fail("bsp", "'de_leva' (the table the gait model uses)", self.bsp)
        if self.sex not in ("male", "female"):
            _fail("sex", "'male' or 'female'", self.sex)
        _positive("threshold", self.threshold, zero=True)
        if not isinstance(self.kinetics, bool | np.bool_) and not (
            isinstance(self.kinetics, str) and self.kinetics == "auto"
        ):
            _fail("kinetics", "True, False or 'auto'", self.kinetics)
        if not (isinstance(self.up, str) and self.up == "auto"):
            try:
                up = np.asarray(self.up, dtype=float)
            except (TypeError, ValueError):
                up = np.full(1, np.nan)
            if up.shape != (3,) or not np.isfinite(up).all() or not np.linalg.norm(up) > 0:
                _fail("up", '"auto" or a non-zero finite vector of 3 floats', self.up)
            object.__setattr__(self, "up", tuple(float(x) for x in up))
        for name in ("leg_length", "knee_width", "ankle_width"):
            _per_side(name, getattr(self, name))
        for name in ("tibial_torsion", "thigh_rotation", "shank_rotation"):
            tt = getattr(self, name)
            values = tt.values() if isinstance(tt, Mapping) else [tt]
            for v in values:
                if v is not None and not (isinstance(v, int | float) and math.isfinite(v)):
                    _fail(name, "a finite angle in rad, a dict per side, or None", tt)
        _positive("marker_radius", self.marker_radius, zero=True)
        if self.moment_frame not in ("jcs", "distal", "proximal"):
            _fail("moment_frame", "'jcs', 'distal' (Plug-in Gait's) or 'proximal'",
                  self.moment_frame)  # fmt: skip
        if self.compat not in COMPAT_MODES:
            _fail("compat", "'none' (ahbm's rules) or 'plug-in-gait' (Vicon's)", self.compat)

    @property
    def plug_in_gait(self) -> bool:
        """True with ``compat="plug-in-gait"``."""
        return self.compat == "plug-in-gait"

    @property
    def effective_moment_frame(self) -> str:
        """The projection used: ``"distal"`` with Plug-in Gait's rules, else `moment_frame`."""
        return "distal" if self.plug_in_gait else self.moment_frame

    def replace(self, **changes) -> GaitSettings:
        """A copy with some fields changed (checked like a new object)."""
        unknown = set(changes) - set(SETTINGS_FIELDS)
        if unknown:
            raise DataError(
                f"GaitSettings has no field {', '.join(sorted(unknown))}; fields: "
                f"{', '.join(SETTINGS_FIELDS)}"
            )
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """The fields as a plain dict (for reports and HDF5 storage)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: Names of the :class:`GaitSettings` fields.
SETTINGS_FIELDS = tuple(f.name for f in fields(GaitSettings))
