"""The result of the gait pipeline, its units, its text summary and its HDF5 storage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ahbm.errors import DataError
from ahbm.gait.markersets import SIDES
from ahbm.gait.subject import SubjectParameters, mass_text
from ahbm.io.hdf5 import save_trial
from ahbm.io.trial import Trial
from ahbm.types import ResultRepr

__all__ = ["GaitResult", "save_gait_result", "result_units", "variable_units"]

# units of the variables by the end of their name (the HDF5 `units` attributes)
_SUFFIX_UNITS = (
    ("Angles", "rad"),
    ("Moment", "N·m/kg"),
    ("Power", "W/kg"),
    ("Force", "N/kg"),
    ("JC", "m"),
    ("toe_off", "%"),
)
_SPATIOTEMPORAL_UNITS = {
    "walking_speed": "m/s",
    "stride_length": "m",
    "stride_time": "s",
    "cadence": "steps/min",
    "step_length": "m",
    "stance_pct": "%",
    "double_support_pct": "%",
}
_SETTINGS_UNITS = {
    "marker_cutoff_hz": "Hz",
    "grf_cutoff_hz": "Hz",
    "max_gap_frames": "frames",
    "force_threshold_n": "N",
    "marker_radius": "m",
}


def variable_units(name: str) -> str:
    """Units of a gait variable from its name: ``"LKneeAngles"`` -> ``"rad"``.

    Examples
    --------
    >>> variable_units("RHipMoment"), variable_units("AnklePower")
    ('N·m/kg', 'W/kg')
    """
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    return "1"


@dataclass(frozen=True, repr=False)
class GaitResult(ResultRepr):
    """Output of :func:`~ahbm.gait.analyze_gait` (SI units, angles in rad).

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        Frame times, s.
    angles : dict
        ``"LHipAngles"`` ... ``"RFootProgressAngles"`` -> (n_frames, 3), rad,
        (sagittal, frontal, transverse) with clinical signs.
    moments : dict
        ``"LHipMoment"`` ... -> (n_frames, 3), N·m/kg, internal moments with
        Plug-in Gait's signs: extensor / plantarflexor, abductor / valgus /
        evertor, **external** rotator positive; projected on the JCS axes, or
        on the distal / proximal segment's axes by
        ``GaitSettings.moment_frame`` (``settings["moment_convention"]``).
    powers : dict
        ``"LHipPower"`` ... -> (n_frames, 3), W/kg, the joint power split on the
        JCS axes (sagittal, frontal, transverse); their sum is the total power.
    forces : dict
        ``"LHipForce"`` ... -> (n_frames, 3), N/kg, force of the proximal on the
        distal segment in the distal segment frame (x anterior, y proximal,
        z right); ``"LGroundReactionForce"``, ``"RGroundReactionForce"``: the
        force plates' load assigned to each foot (ground on foot), lab frame,
        zero off the plates, NaN where the foot's load is unknown.
    events : list of Event
        Foot strikes and foot offs (``context`` "Left" / "Right").
    cycles : dict
        ``{"Left": {"HipAngles": (n_cycles, 101, 3), ..., "toe_off": (n_cycles,)}``
        in SI units (angles in rad) as :func:`ahbm.graphics.plot_gait_cycles`
        expects.
    spatiotemporal : dict
        Output of :func:`ahbm.analysis.spatiotemporal_parameters`.
    settings : dict
        Processing record (filter cutoffs, BSP table, joint-centre method,
        gap limit, marker mapping, force threshold) for reproducibility.
    subject : SubjectParameters
    joint_centres : dict
        ``"LHJC"`` ... ``"RAJC"`` -> (n_frames, 3), m, lab frame.
    source : str
        Name of the analysed trial (reports, titles).
    energetics : dict
        Segment energies (J), total mechanical energy (J), joint power flow
        per segment (W) per frame and Winter's work per cycle (J)
        (:meth:`GaitEnergetics.to_results <ahbm.gait.energetics.GaitEnergetics.to_results>`);
        not divided by body mass.
    total_powers : dict
        ``"LHipPower"`` ... -> (n_frames,), W/kg, total joint power (Plug-in
        Gait's Z component of ``LHipPower``; the sum of `powers`).
    flags : tuple of str
        Failed plausibility checks of the events and cycles, and
        disagreements with the file's own Plug-in Gait outputs (empty when
        fine); also warned and printed by :meth:`summary`.
    file_outputs : dict
        When the trial carries Plug-in Gait's outputs: the comparison with
        them (:func:`~ahbm.gait.compare_with_file_outputs`), per
        variable ``{"r": (3,), "rms": (3,), "frames": n}`` and per joint
        centre ``{"median_distance": m, "frames": n}``.
    curve_flags : tuple of CurveFlag
        The curves outside the range of walking that point to a calibration
        error (:func:`~ahbm.gait.checks.check_plausibility`): side, variable,
        component and the text (also in `flags`); the report marks them.
    not_defined : tuple of CurveFlag
        Components the model fixes by construction
        (:func:`~ahbm.gait.checks.undefined_components`, e.g. the ankle's
        frontal angle): not data; the report does not plot them.
    """

    time: np.ndarray
    angles: dict
    moments: dict
    powers: dict
    forces: dict
    events: list
    cycles: dict
    spatiotemporal: dict
    settings: dict
    subject: SubjectParameters
    joint_centres: dict = field(default_factory=dict)
    source: str = ""
    energetics: dict = field(default_factory=dict)
    total_powers: dict = field(default_factory=dict)
    flags: tuple = ()
    file_outputs: dict = field(default_factory=dict)
    curve_flags: tuple = ()
    not_defined: tuple = ()

    def __repr__(self) -> str:
        """A short summary: shapes, units, cycles and a few key numbers (< 2,000 characters)."""
        t = np.asarray(self.time)
        span = f"{t[0]:.2f}-{t[-1]:.2f} s" if t.size else "empty"
        sp = self.spatiotemporal or {}
        cyc = ", ".join(
            f"{side} {len(next(iter(c.values()), []))}" for side, c in self.cycles.items()
        )
        src = self.source if len(self.source) <= 60 else "..." + self.source[-57:]
        flags = "none" if not self.flags else f"{len(self.flags)}: {self.flags[0][:120]}"
        events = str(self.settings.get("events", "?")).split(" (")[0]
        return (
            f"GaitResult(source={src!r}, time=array{t.shape} {span}, "
            f"angles=dict[{len(self.angles)}] rad, moments=dict[{len(self.moments)}] N·m/kg, "
            f"powers=dict[{len(self.powers)}] W/kg, forces=dict[{len(self.forces)}] N/kg, "
            f"events=list[{len(self.events)}] ({events}), cycles=({cyc}), "
            f"speed={sp.get('walking_speed', np.nan):.2f} m/s, "
            f"cadence={sp.get('cadence', np.nan):.1f} steps/min, "
            f"{_mass_field(self.subject)}, flags={flags})"
        )

    def as_plug_in_gait(self) -> dict:
        """The variables in Plug-in Gait's layout, SI units (rad, N·m/kg, W/kg, N/kg).

        Returns
        -------
        dict
            ``{"LHipAngles": (n_frames, 3), ..., "LHipMoment": ..., "LHipPower":
            (n_frames, 3) with the total power in Z and 0 in X and Y, ...}``,
            directly comparable with the model outputs that
            :func:`ahbm.io.read_c3d` reads from a Vicon file (converted to SI).
            ``L/RFootProgressAngles`` and ``L/RAnkleAngles`` are decomposed as
            Vicon does (:func:`~ahbm.gait.angles.vicon_foot_progress_angles`:
            a tilt of about -pi/2 for a flat foot;
            :func:`~ahbm.gait.angles.vicon_ankle_angles`: the second
            angle with the opposite sign of ahbm's inversion), unlike
            :attr:`angles`.
        """
        from ahbm.gait.angles import vicon_ankle_angles, vicon_foot_progress_angles

        out = {k: np.asarray(v, dtype=float) for k, v in self.angles.items()}
        for side, p in SIDES:  # Vicon's own decompositions of the foot's orientation
            for name, convert in (
                (f"{p}FootProgressAngles", vicon_foot_progress_angles),
                (f"{p}AnkleAngles", vicon_ankle_angles),
            ):
                if name in out:
                    out[name] = convert(out[name], side=side)
        out.update({k: np.asarray(v, dtype=float) for k, v in self.moments.items()})
        out.update({k: np.asarray(v, dtype=float) for k, v in self.forces.items()})
        for k, v in self.total_powers.items():
            arr = np.zeros((np.size(v), 3))
            arr[:, 2] = v
            arr[~np.isfinite(v)] = np.nan
            out[k] = arr
        return out

    def to_results(self) -> dict:
        """The documented ``trial.results`` layout (docs/hdf5-schema.md, gait results).

        Every quantity in SI units, angles in rad, as in the result itself;
        :func:`result_units` gives the units of each entry.
        """
        res: dict[str, Any] = {}
        for group in (self.angles, self.moments, self.powers, self.forces, self.joint_centres):
            for k, v in group.items():
                res[k] = np.asarray(v, dtype=float)
        ev: dict[str, Any] = {}
        for side, _ in SIDES:
            ev[side] = {
                key: np.array([e.time for e in self.events if e.context == side and e.label == lab])
                for key, lab in (("foot_strike", "Foot Strike"), ("foot_off", "Foot Off"))
            }
        if self.total_powers:
            res["total_power"] = {
                k: np.asarray(v, dtype=float) for k, v in self.total_powers.items()
            }
        res["events"] = ev
        sp: dict[str, Any] = {}
        for side, _ in SIDES:
            d = self.spatiotemporal.get(side, {})
            sp[side] = {
                key: float(d.get(key, np.nan)) if key != "cadence" else
                120.0 / float(d.get("stride_time", np.nan))
                for key in _SPATIOTEMPORAL_UNITS
            }  # fmt: skip
        res["spatiotemporal"] = sp
        res["gait_cycles"] = {
            side: {k: np.asarray(v, dtype=float) for k, v in cyc.items()}
            for side, cyc in self.cycles.items()
        }
        if self.energetics:
            res["energetics"] = self.energetics
        res["gait_settings"] = _plain(self.settings)
        res["gait_flags"] = list(self.flags) or ["none"]
        res["gait_not_defined"] = [
            f"{f.side[0]}{f.variable}[{f.component}]: {f.text}" for f in self.not_defined
        ] or ["none"]
        res["gait_subject"] = self.subject.to_dict()
        if self.file_outputs:
            res["file_outputs_check"] = {
                k: {kk: np.asarray(vv, dtype=float) for kk, vv in v.items()}
                for k, v in self.file_outputs.items()
            }
        return res

    def summary(self) -> str:
        """Short text: cycles, spatiotemporal parameters and peak values (deg, N·m/kg)."""
        lines = []
        for side, p in SIDES:
            sp = self.spatiotemporal.get(side, {})
            n = len(next(iter(self.cycles.get(side, {}).values()), []))
            knee = np.degrees(np.nanmax(self.angles[p + "KneeAngles"][:, 0]))
            line = (
                f"{side}: {n} cycle(s), stride {sp.get('stride_time', np.nan):.3f} s, "
                f"{sp.get('stride_length', np.nan):.3f} m, speed "
                f"{sp.get('walking_speed', np.nan):.2f} m/s; peak knee flexion {knee:.1f} deg"
            )
            if p + "AnkleMoment" in self.moments:
                peak = np.nanmax(self.moments[p + "AnkleMoment"][:, 0])
                line += f", peak ankle plantarflexor moment {peak:.2f} N·m/kg"
            lines.append(line)
        lines.append(f"cadence {self.spatiotemporal.get('cadence', np.nan):.1f} steps/min")
        if not _mass_known(self.subject):
            lines.append(mass_text(None))
        lines += [f"CHECK FAILED: {f}" for f in self.flags]
        return "\n".join(lines)


def _mass_known(subject) -> bool:
    m = getattr(subject, "mass", None)
    return isinstance(m, (int, float, np.floating)) and bool(np.isfinite(m)) and m > 0


def _mass_field(subject) -> str:
    """``mass=70.0 kg`` for the repr, ``mass=unknown`` (never ``nan kg``) without one."""
    return f"mass={subject.mass:.1f} kg" if _mass_known(subject) else "mass=unknown"


def result_units(results: dict) -> dict:
    """Units of every dataset of the gait ``trial.results`` (:meth:`GaitResult.to_results`).

    Returns
    -------
    dict
        ``{(key, subkey, ...): units}`` for :func:`ahbm.io.hdf5.save_trial`'s
        `result_units`: ``"rad"``, ``"N·m/kg"``, ``"W/kg"``, ``"N/kg"``, ``"m"``,
        ``"s"``, ``"%"`` ..., ``"1"`` for dimensionless numbers and ``""`` for
        text.

    Examples
    --------
    >>> result_units({"LKneeAngles": np.zeros((3, 3)), "events": {"Left": {"foot_off": 1.0}}})
    {('LKneeAngles',): 'rad', ('events', 'Left', 'foot_off'): 's'}
    """
    out = {}

    def walk(value, keys):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, (*keys, k))
            return
        if isinstance(value, list | tuple) and not all(isinstance(v, str) for v in value):
            for i, v in enumerate(value):  # stored as a group of items (none when empty)
                walk(v, (*keys, str(i)))
            return
        out[keys] = _unit_of(keys, value)

    walk(results, ())
    return out


def _unit_of(keys, value) -> str:
    if isinstance(value, str) or (isinstance(value, list | tuple) and value):
        return ""
    top, last = keys[0], keys[-1]
    if top == "events":
        return "s"
    if top == "energetics":  # J and W, not divided by body mass
        return "W" if last.endswith("power") else "J"
    if top == "spatiotemporal":
        return _SPATIOTEMPORAL_UNITS.get(last, "1")
    if top == "gait_settings":
        return _SETTINGS_UNITS.get(last, "1")
    if top == "file_outputs_check":  # r and frame counts are numbers, the rest SI
        if last == "rms":
            return variable_units(keys[1])
        return "m" if last == "median_distance" else "1"
    if top == "gait_subject":
        if last in ("estimated", "foot_offsets_from", "implausible"):  # text
            return "1"
        if last.endswith(
            ("tibial_torsion", "thigh_rotation", "shank_rotation", "plantarflexion", "_rotation")
        ):
            return "rad"
        return {"mass": "kg"}.get(last, "1" if isinstance(value, bool) else "m")
    return variable_units(last)


def _plain(obj):
    """Settings as HDF5-storable plain values."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        vals = [_plain(v) for v in obj]
        if vals and all(isinstance(v, str) for v in vals):
            return vals
        return [str(v) for v in vals] if vals else ["none"]
    if obj is None:
        return "none"
    if isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


def save_gait_result(trial, result: GaitResult, path, *, name=None, overwrite=True) -> str:
    """Store the trial with the gait results in an ahbm HDF5 file, with units.

    Parameters
    ----------
    trial : Trial
        The analysed trial (its ``results`` are updated with
        :meth:`GaitResult.to_results` and its ``events`` replaced by the
        detected ones).
    result : GaitResult
    path : str or path-like
        Target ``.h5`` file (written atomically).
    name : str, optional
        Trial name in the store (default: the source file's stem).
    overwrite : bool
        Replace a trial of the same name.

    Returns
    -------
    str
        The trial name in the store.

    Notes
    -----
    Every dataset under ``results/`` carries a ``units`` attribute
    (:func:`result_units`); angles are stored in rad.

    Examples
    --------
    >>> save_gait_result(trial, analyze_gait(trial), "walk.h5")  # doctest: +SKIP
    'walk'
    """
    if not isinstance(trial, Trial):
        raise DataError(
            f"Expected `trial` to be the analysed Trial, got {type(trial).__name__}; call "
            "save_gait_result(trial, result, path)"
        )
    if not isinstance(result, GaitResult):
        raise DataError(
            f"Expected `result` to be a GaitResult from analyze_gait, got {type(result).__name__}"
        )
    res = result.to_results()
    trial.results.update(res)
    trial.events = list(result.events)
    return save_trial(trial, path, name=name, overwrite=overwrite, result_units=result_units(res))
