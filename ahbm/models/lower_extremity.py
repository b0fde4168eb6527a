"""The seven-segment lower-extremity gait model (Plug-in Gait marker set) and pipeline.

Pelvis, thighs, shanks and feet, six joints, the Conventional Gait Model
(Vicon Plug-in Gait, after Davis et al. 1991 and Vaughan, Davis & O'Connor's
*Dynamics of Human Gait*) marker set, joint centres by the Davis hip
regression and the chord function, Grood-Suntay joint angles with clinical
signs, segment-by-segment Newton-Euler inverse dynamics with the ground
reaction assigned to the foot on each plate, gait events, cycles and
spatiotemporal parameters: :func:`analyze_gait` turns a walking trial into a
:class:`GaitResult` and :func:`save_gait_result` stores it with the trial in an
ahbm HDF5 file. :func:`lower_extremity_model` builds the same model as a
multibody :class:`~ahbm.kinematics.tree.Model` (used by the synthetic demo).

Segment frames (ISB axes, both sides, as :mod:`ahbm.kinematics.jcs`)
--------------------------------------------------------------------
* pelvis: origin mid-ASIS; z from LASI to RASI; x anterior in the plane of the
  ASISs and the sacrum (SACR, or the mid-PSIS point); y up.
* thigh: origin knee centre (KJC); y from KJC to the hip centre (HJC); z along
  the knee flexion axis (KJC to KNE on the right, KNE to KJC on the left).
* shank: origin ankle centre (AJC); y from AJC to KJC; z along the ankle axis
  (AJC and ANK); knee angles use it rotated about y by the tibial torsion.
* foot: origin AJC; x from the heel to the toe marker when heel markers are
  available (dynamic trial, else a constant offset measured in the static
  trial), otherwise from AJC to TOE (the uncorrected Plug-in Gait foot, whose
  ankle angle then carries the foot's pitch as an offset); z in the plane of x
  and the shank's ankle axis; y up.

Joint centres: HJC by Davis et al. (1991) in the pelvis frame (Plug-in Gait
form, :func:`ahbm.kinematics.jcs.hip_joint_centre_davis`); KJC from HJC, KNE,
THI and the knee width and AJC from KJC, ANK, TIB and the ankle width by the
chord function (:func:`ahbm.kinematics.jcs.chord_joint_centre`).

Segment inertial parameters: de Leva (1996) (``bsp="de_leva"``, male by
default): masses and radii of gyration, thigh and shank COM fractions from the
proximal joint centre with the measured HJC-KJC and KJC-AJC lengths; the foot
COM halfway between AJC and TOE (Dempster's and Plug-in Gait's definition)
with the de Leva foot radii scaled by the AJC-TOE length. Vaughan's (1992)
regressions are not available; ``bsp="dempster_winter"`` is not offered
because Dempster gives no longitudinal radius of gyration.

References
----------
Davis, R.B. et al. (1991) Hum. Mov. Sci. 10:575-587. Vaughan, C.L., Davis, B.L.
& O'Connor, J.C. (1992) *Dynamics of Human Gait*. Vicon (2010) *Plug-in Gait
product guide*. de Leva, P. (1996) J. Biomech. 29:1223-1230. Grood, E.S. &
Suntay, W.J. (1983) J. Biomech. Eng. 105:136-144. AHBM report §4.4 and §5.1.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ahbm.errors import AhbmWarning, DataError

__all__ = [
    "PLUG_IN_GAIT_MARKERS",
    "MARKER_SETS",
    "SubjectParameters",
    "GaitResult",
    "subject_parameters",
    "analyze_gait",
    "save_gait_result",
    "lower_extremity_model",
]

G = 9.81
SIDES = (("Left", "L"), ("Right", "R"))

#: Required Plug-in Gait lower-body markers (SACR may be replaced by LPSI + RPSI).
PLUG_IN_GAIT_MARKERS = (
    "LASI",
    "RASI",
    "SACR",
    "LTHI",
    "LKNE",
    "LTIB",
    "LANK",
    "LTOE",
    "RTHI",
    "RKNE",
    "RTIB",
    "RANK",
    "RTOE",
)
_OPTIONAL = ("LPSI", "RPSI", "LHEE", "RHEE", "LKNM", "RKNM", "LANM", "RANM")

#: Marker-name mappings for other marker sets: ``{"map": {canonical: label or
#: [labels averaged]}, "clusters": {canonical: [cluster labels]}}``. A canonical
#: marker listed in "clusters" and missing from the dynamic trial is rebuilt from
#: its cluster using the static trial (calibrated anatomical landmark).
MARKER_SETS: dict[str, dict[str, Any]] = {
    "plug_in_gait": {"map": {}, "clusters": {}},
    # OpenSim's gait2354 walking example (subject01_walk.trc / subject01_static.trc)
    "opensim": {
        "map": {
            "LASI": "L.ASIS",
            "RASI": "R.ASIS",
            "SACR": "V.Sacral",
            "LTHI": "L.Thigh.Upper",
            "RTHI": "R.Thigh.Upper",
            "LKNE": "L.Knee.Lat",
            "RKNE": "R.Knee.Lat",
            "LKNM": "L.Knee.Med",
            "RKNM": "R.Knee.Med",
            "LTIB": "L.Shank.Upper",
            "RTIB": "R.Shank.Upper",
            "LANK": "L.Ankle.Lat",
            "RANK": "R.Ankle.Lat",
            "LANM": "L.Ankle.Med",
            "RANM": "R.Ankle.Med",
            "LHEE": "L.Heel",
            "RHEE": "R.Heel",
            "LTOE": ["L.Toe.Lat", "L.Toe.Med"],
            "RTOE": ["R.Toe.Lat", "R.Toe.Med"],
        },
        "clusters": {
            "LKNE": ["L.Thigh.Upper", "L.Thigh.Front", "L.Thigh.Rear"],
            "RKNE": ["R.Thigh.Upper", "R.Thigh.Front", "R.Thigh.Rear"],
            "LANK": ["L.Shank.Upper", "L.Shank.Front", "L.Shank.Rear"],
            "RANK": ["R.Shank.Upper", "R.Shank.Front", "R.Shank.Rear"],
            "LKNM": ["L.Thigh.Upper", "L.Thigh.Front", "L.Thigh.Rear"],
            "RKNM": ["R.Thigh.Upper", "R.Thigh.Front", "R.Thigh.Rear"],
            "LANM": ["L.Shank.Upper", "L.Shank.Front", "L.Shank.Rear"],
            "RANM": ["R.Shank.Upper", "R.Shank.Front", "R.Shank.Rear"],
        },
    },
}

# result variable names (Plug-in Gait)
_ANGLES = ("HipAngles", "KneeAngles", "AnkleAngles", "PelvisAngles", "FootProgressAngles")
_JOINTS = ("Hip", "Knee", "Ankle")


@dataclass
class SubjectParameters:
    """Anthropometry used by the model (SI units).

    Attributes
    ----------
    mass, height : float
        Body mass (kg) and stature (m).
    leg_length, knee_width, ankle_width : dict
        ``{"Left": m, "Right": m}``.
    inter_asis_distance : float
        m (measured from the markers).
    marker_radius : float
        m.
    tibial_torsion : dict
        ``{"Left": rad, "Right": rad}`` (rotation of the knee axis from the
        ankle axis about the shank's long axis; Plug-in Gait's TibialTorsion).
    estimated : list of str
        Names of the parameters that were estimated rather than given.
    """

    mass: float
    height: float
    leg_length: dict
    knee_width: dict
    ankle_width: dict
    inter_asis_distance: float
    marker_radius: float = 0.007
    tibial_torsion: dict = field(default_factory=lambda: {"Left": 0.0, "Right": 0.0})
    estimated: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain dict (for HDF5 storage)."""
        out = {
            "mass": float(self.mass),
            "height": float(self.height),
            "inter_asis_distance": float(self.inter_asis_distance),
            "marker_radius": float(self.marker_radius),
            "estimated": list(self.estimated) or ["none"],
        }
        for key in ("leg_length", "knee_width", "ankle_width", "tibial_torsion"):
            for side in ("Left", "Right"):
                out[f"{side}_{key}"] = float(getattr(self, key)[side])
        return out


@dataclass
class GaitResult:
    """Output of :func:`analyze_gait`.

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        Frame times, s.
    angles : dict
        ``"LHipAngles"`` ... ``"RFootProgressAngles"`` -> (n_frames, 3), degrees,
        (sagittal, frontal, transverse) with clinical signs.
    moments : dict
        ``"LHipMoment"`` ... -> (n_frames, 3), N m/kg, internal moments:
        extensor / plantarflexor, abductor, internal rotator positive.
    powers : dict
        ``"LHipPower"`` ... -> (n_frames, 3), W/kg, the joint power split on the
        JCS axes (sagittal, frontal, transverse); their sum is the total power.
    forces : dict
        ``"LHipForce"`` ... -> (n_frames, 3), N/kg, force of the proximal on the
        distal segment in the distal segment frame (x anterior, y proximal,
        z right).
    events : list of Event
        Foot strikes and foot offs (``context`` "Left" / "Right").
    cycles : dict
        ``{"Left": {"HipAngles": (n_cycles, 101, 3), ..., "toe_off": (n_cycles,)}``
        in SI units (angles in rad) as :func:`ahbm.graphics.plot_gait_cycles`
        expects.
    spatiotemporal : dict
        Output of :func:`ahbm.analysis.spatiotemporal_parameters`.
    settings : dict
        Processing settings (filter cutoffs, BSP table, joint-centre method,
        gap limit, marker mapping, force threshold) for reproducibility.
    subject : SubjectParameters
    joint_centres : dict
        ``"LHJC"`` ... ``"RAJC"`` -> (n_frames, 3), m, lab frame.
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

    def to_results(self) -> dict:
        """The documented ``trial.results`` layout (docs/hdf5-schema.md, gait results)."""
        res: dict[str, Any] = {}
        for group in (self.angles, self.moments, self.powers, self.forces, self.joint_centres):
            for k, v in group.items():
                res[k] = np.asarray(v, dtype=float)
        ev: dict[str, Any] = {}
        for side, _ in SIDES:
            ev[side] = {
                "foot_strike": np.array(
                    [e.time for e in self.events if e.context == side and e.label == "Foot Strike"]
                ),
                "foot_off": np.array(
                    [e.time for e in self.events if e.context == side and e.label == "Foot Off"]
                ),
            }
        res["events"] = ev
        sp: dict[str, Any] = {}
        for side, _ in SIDES:
            d = self.spatiotemporal.get(side, {})
            sp[side] = {
                "walking_speed": float(d.get("walking_speed", np.nan)),
                "stride_length": float(d.get("stride_length", np.nan)),
                "stride_time": float(d.get("stride_time", np.nan)),
                "cadence": 120.0 / float(d.get("stride_time", np.nan)),
                "step_length": float(d.get("step_length", np.nan)),
                "stance_pct": float(d.get("stance_pct", np.nan)),
                "double_support_pct": float(d.get("double_support_pct", np.nan)),
            }
        res["spatiotemporal"] = sp
        res["gait_cycles"] = {
            side: {k: np.asarray(v, dtype=float) for k, v in cyc.items()}
            for side, cyc in self.cycles.items()
        }
        res["gait_settings"] = _plain(self.settings)
        res["gait_subject"] = self.subject.to_dict()
        return res

    def summary(self) -> str:
        """Short text: cycles, spatiotemporal parameters and peak values."""
        lines = []
        for side, p in SIDES:
            sp = self.spatiotemporal.get(side, {})
            n = len(next(iter(self.cycles.get(side, {}).values()), []))
            line = (
                f"{side}: {n} cycle(s), stride {sp.get('stride_time', np.nan):.3f} s, "
                f"{sp.get('stride_length', np.nan):.3f} m, speed "
                f"{sp.get('walking_speed', np.nan):.2f} m/s; peak knee flexion "
                f"{np.nanmax(self.angles[p + 'KneeAngles'][:, 0]):.1f} deg"
            )
            if p + "AnkleMoment" in self.moments:
                peak = np.nanmax(self.moments[p + "AnkleMoment"][:, 0])
                line += f", peak ankle plantarflexor moment {peak:.2f} N m/kg"
            lines.append(line)
        lines.append(f"cadence {self.spatiotemporal.get('cadence', np.nan):.1f} steps/min")
        return "\n".join(lines)


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


# ---------------------------------------------------------------------------
# marker access
# ---------------------------------------------------------------------------


def _load(trial_or_path, argname: str):
    from ahbm.io.trial import Trial

    if isinstance(trial_or_path, Trial):
        return trial_or_path
    if isinstance(trial_or_path, str | os.PathLike):
        path = Path(trial_or_path)
        if not path.is_file():
            raise DataError(f"`{argname}`: file {str(path)!r} does not exist")
        from ahbm.io.readers import SUPPORTED_SUFFIXES, read_trial

        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise DataError(
                f"`{argname}`: cannot read {str(path)!r}; use a .c3d or .trc file or a Trial"
            )
        return read_trial(path)
    raise DataError(f"`{argname}` must be a Trial or a path, got {type(trial_or_path).__name__}")


def _marker_set(marker_set, marker_map):
    if isinstance(marker_set, str):
        if marker_set not in MARKER_SETS:
            raise DataError(
                f"Unknown `marker_set` {marker_set!r}; available: {', '.join(MARKER_SETS)} "
                "(or pass `marker_map`)"
            )
        base = MARKER_SETS[marker_set]
    elif isinstance(marker_set, dict):
        base = {"map": dict(marker_set.get("map", {})), "clusters": marker_set.get("clusters", {})}
    else:
        raise DataError("`marker_set` must be a name of MARKER_SETS or a dict")
    mapping = dict(base["map"])
    mapping.update(marker_map or {})
    return mapping, dict(base["clusters"])


def _get(trial, labels, mapping, name, *, prefix=""):
    """Trajectory of canonical marker `name` (n, 3) or None if absent."""
    target = mapping.get(name, prefix + name)
    targets = [target] if isinstance(target, str) else list(target)
    lab = [prefix + t if prefix and not t.startswith(prefix) else t for t in targets]
    if not all(t in labels for t in lab):
        return None
    arr = np.mean([trial.points[:, labels.index(t), :] for t in lab], axis=0)
    if not np.isfinite(arr).all(axis=1).any():
        return None
    return np.asarray(arr, dtype=float)


def _collect(trial, mapping, clusters, static, names, optional, source):
    """Canonical marker dict; raises listing the missing required markers."""
    labels = list(trial.point_labels)
    prefixes = [""]
    for p in trial.subject.get("label_prefixes", []) or []:
        if p:
            prefixes.append(str(p))
    out = {}
    for name in list(names) + list(optional):
        for pre in prefixes:
            arr = _get(trial, labels, mapping, name, prefix=pre)
            if arr is not None:
                out[name] = arr
                break
    # calibrated anatomical landmarks from clusters and the static trial
    for name, cluster in clusters.items():
        if name in out or static is None:
            continue
        slabels = list(static.point_labels)
        st = _get(static, slabels, mapping, name)
        cl_dyn = [_get(trial, labels, {}, c) for c in cluster]
        cl_st = [_get(static, slabels, {}, c) for c in cluster]
        if st is None or any(c is None for c in cl_dyn + cl_st):
            continue
        out[name] = _rebuild(np.stack(cl_st, 1), st, np.stack(cl_dyn, 1))
    need = []
    if "SACR" not in out and not ("LPSI" in out and "RPSI" in out):
        need.append("SACR (or LPSI and RPSI)")
    need += [n for n in names if n != "SACR" and n not in out]
    if need:
        shown = ", ".join(
            f"{n} (looked for {mapping.get(n.split()[0], n.split()[0])!r})" for n in need
        )
        raise DataError(
            f"{source}: required markers missing: {shown}. Trial markers: "
            f"{', '.join(labels)}. Pass `marker_map={{'LASI': 'your label', ...}}` (CLI: "
            "--map LASI=label) or `marker_set` to use another marker set"
        )
    if "SACR" not in out:
        out["SACR"] = 0.5 * (out["LPSI"] + out["RPSI"])
    return out


def _rebuild(cluster_static, landmark_static, cluster_dynamic):
    """Landmark trajectory from its cluster (static calibration, then rigid fit)."""
    from ahbm.kinematics.markers import fit_segment_pose, static_local_markers

    ref = np.nanmean(cluster_static, axis=0)  # a technical frame: lab axes at the mean
    R0 = np.broadcast_to(np.eye(3), (cluster_static.shape[0], 3, 3))
    o0 = np.broadcast_to(ref.mean(axis=0), (cluster_static.shape[0], 3))
    local = static_local_markers(cluster_static, R0, o0)
    lm_local = np.nanmean(landmark_static, axis=0) - ref.mean(axis=0)
    pose = fit_segment_pose(cluster_dynamic, local, warn=False)
    return np.einsum("nij,j->ni", pose.R, lm_local) + pose.origin


# ---------------------------------------------------------------------------
# subject parameters
# ---------------------------------------------------------------------------


def _processing(trial) -> dict:
    """PROCESSING values of the C3D (Vicon names), lower-cased keys, lengths in m."""
    proc = {}
    raw = dict(trial.subject.get("processing", {})) if isinstance(trial.subject, dict) else {}
    group = trial.parameters.get("PROCESSING", {}) if isinstance(trial.parameters, dict) else {}
    for k, v in group.items():
        arr = np.asarray(v) if not isinstance(v, str) else np.array([])
        if arr.size == 1 and arr.dtype.kind in "fiu":
            raw.setdefault(k, float(arr.reshape(-1)[0]))
    for k, v in raw.items():
        proc[str(k).lower()] = float(v)
    return proc


def _median_dist(a, b):
    d = np.linalg.norm(a - b, axis=-1)
    d = d[np.isfinite(d)]
    return float(np.median(d)) if d.size else float("nan")


def _mass_from_plates(plates, threshold=20.0):
    """Body mass from two successive plate contacts: mean total vertical force between
    the mid-stance force minima (where the vertical COM velocity is about zero)."""
    contacts = []
    for p in plates:
        fz = np.abs(np.asarray(p.force, float)[:, 2])
        fz = np.where(np.isfinite(fz), fz, 0.0)
        on = np.flatnonzero(fz > threshold)
        if on.size < 10:
            continue
        a, b = on[0], on[-1]
        q = (b - a) // 4
        mid = a + q + int(np.argmin(fz[a + q : b - q + 1]))
        contacts.append((a, b, mid, fz, float(p.rate)))
    contacts.sort(key=lambda c: c[0])
    pairs = zip(contacts[:-1], contacts[1:], strict=False)
    for (_a1, b1, m1, f1, r1), (a2, _b2, m2, f2, r2) in pairs:
        if a2 < b1 and m2 > m1 and r1 == r2 and f1.size == f2.size:
            return float(np.mean(f1[m1:m2] + f2[m1:m2]) / G)
    return None


def subject_parameters(
    trial,
    static=None,
    *,
    mass=None,
    height=None,
    leg_length=None,
    knee_width=None,
    ankle_width=None,
    tibial_torsion=None,
    marker_radius=0.007,
    marker_set="plug_in_gait",
    marker_map=None,
    warn: bool = True,
) -> SubjectParameters:
    """Subject parameters: the given values, the file's, or estimates (with a warning).

    Parameters
    ----------
    trial : Trial or path
        The dynamic trial (its C3D PROCESSING group is read: Bodymass, Height,
        LLegLength, RKneeWidth, ... in mm as Vicon writes them).
    static : Trial or path, optional
        A static trial, preferred for the marker-based estimates.
    mass, height : float, optional
        kg and m.
    leg_length, knee_width, ankle_width : float or dict, optional
        m; one value for both sides or ``{"Left": ..., "Right": ...}``.
    tibial_torsion : float or dict, optional
        rad (default 0).
    marker_radius : float
        m (default 7 mm, 14 mm markers).
    marker_set, marker_map :
        See :func:`analyze_gait`.
    warn : bool
        Warn (AhbmWarning) listing the estimated parameters.

    Returns
    -------
    SubjectParameters

    Raises
    ------
    DataError
        Missing markers, or no mass given and none estimable (fewer than two
        overlapping force plate contacts).

    Notes
    -----
    Estimates: mass from two successive force plate contacts (mean total
    vertical force between the two mid-stance minima, divided by g); leg
    length ``|ASI − KNE| + |KNE − ANK|`` (median over frames); knee and ankle
    widths from medial markers (KNM, ANM) when present, else ``0.11`` and
    ``0.075`` times the leg length; height ``leg length / 0.52``.

    Examples
    --------
    >>> p = subject_parameters("gait-raw.c3d")  # doctest: +SKIP
    """
    tr = _load(trial, "trial")
    st = _load(static, "static") if static is not None else None
    mapping, clusters = _marker_set(marker_set, marker_map)
    src = tr if st is None else st
    mk = _collect(
        src, mapping, clusters, st, PLUG_IN_GAIT_MARKERS, _OPTIONAL, src.source or "trial"
    )
    proc = _processing(tr)
    if st is not None:
        for k, v in _processing(st).items():
            proc.setdefault(k, v)
    estimated = []

    def sided(value, key, estimate, name):
        out = {}
        for side, p in SIDES:
            v = value.get(side) if isinstance(value, dict) else value
            if v is None:
                v = proc.get(f"{p.lower()}{key}")
                v = v / 1000.0 if v is not None and v > 3.0 else v
            if v is None or not np.isfinite(v) or v <= 0:
                v = estimate(side, p)
                estimated.append(f"{side} {name}")
            out[side] = float(v)
        return out

    def est_ll(side, p):
        return _median_dist(mk[p + "ASI"], mk[p + "KNE"]) + _median_dist(
            mk[p + "KNE"], mk[p + "ANK"]
        )

    ll = sided(leg_length, "leglength", est_ll, "leg length")

    def est_kw(side, p):
        if p + "KNM" in mk:
            return _median_dist(mk[p + "KNE"], mk[p + "KNM"]) - 2 * marker_radius
        return 0.11 * ll[side]

    def est_aw(side, p):
        if p + "ANM" in mk:
            return _median_dist(mk[p + "ANK"], mk[p + "ANM"]) - 2 * marker_radius
        return 0.075 * ll[side]

    kw = sided(knee_width, "kneewidth", est_kw, "knee width")
    aw = sided(ankle_width, "anklewidth", est_aw, "ankle width")
    tt = {}
    for side, _ in SIDES:
        v = tibial_torsion.get(side, 0.0) if isinstance(tibial_torsion, dict) else tibial_torsion
        tt[side] = float(v or 0.0)
    m = mass if mass is not None else tr.subject.get("mass", proc.get("bodymass"))
    if m is None or not np.isfinite(m) or m <= 0:
        m = _mass_from_plates(tr.force_plates)
        if m is None:
            raise DataError(
                f"{tr.source or 'trial'}: no body mass given and none in the file, and it "
                "cannot be estimated (needs two successive, overlapping force plate "
                "contacts); pass `mass` (CLI: --mass KG)"
            )
        estimated.append("mass")
    h = height if height is not None else tr.subject.get("height")
    if h is None or not np.isfinite(h) or h <= 0:
        h = 0.5 * (ll["Left"] + ll["Right"]) / 0.52
        estimated.append("height")
    iad = _median_dist(mk["LASI"], mk["RASI"])
    if iad <= 0 or not np.isfinite(iad):
        raise DataError("the ASIS markers coincide or are never both visible")
    if warn and [e for e in estimated if e != "height"]:  # height is informational
        warnings.warn(
            f"subject parameters estimated (not given): {', '.join(estimated)} -- mass "
            f"{float(m):.1f} kg, leg lengths {ll['Left']:.3f}/{ll['Right']:.3f} m, knee widths "
            f"{kw['Left']:.3f}/{kw['Right']:.3f} m, ankle widths {aw['Left']:.3f}/"
            f"{aw['Right']:.3f} m; pass them for accurate joint centres and kinetics",
            AhbmWarning,
            stacklevel=2,
        )
    return SubjectParameters(
        float(m), float(h), ll, kw, aw, iad, float(marker_radius), tt, estimated
    )


# ---------------------------------------------------------------------------
# the model: frames and joint centres
# ---------------------------------------------------------------------------


def _unit(v):
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _frame(origin, primary, plane, axes, *, plane_is_axis=False):
    """Rotation from landmarks (NaN frames allowed)."""
    from ahbm.kinematics.markers import frame_from_landmarks

    T = frame_from_landmarks(origin, primary, plane, axes=axes, plane_is_axis=plane_is_axis)
    return T[..., :3, :3]


def _frames(mk, subj: SubjectParameters, foot_offset=None):
    """Segment rotations and joint centres from (filtered) canonical markers."""
    from ahbm.kinematics.jcs import chord_joint_centre, hip_joint_centre_davis

    mid = 0.5 * (mk["LASI"] + mk["RASI"])
    Rp = _frame(mid, mk["RASI"], 2 * mid - mk["SACR"], "zx")
    out = {"pelvis": (Rp, mid)}
    jc = {}
    for side, p in SIDES:
        s = 1.0 if side == "Right" else -1.0
        h_local = hip_joint_centre_davis(
            subj.leg_length[side],
            subj.inter_asis_distance,
            side=side.lower(),
            marker_radius=subj.marker_radius,
        )
        hjc = np.einsum("nij,j->ni", Rp, h_local) + mid
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if p + "KNM" in mk:  # medial epicondyle available: mid-epicondyle centre
                kjc = 0.5 * (mk[p + "KNE"] + mk[p + "KNM"])
            else:
                kjc = chord_joint_centre(
                    hjc,
                    mk[p + "KNE"],
                    mk[p + "THI"],
                    subj.knee_width[side],
                    marker_radius=subj.marker_radius,
                )
            if p + "ANM" in mk:  # medial malleolus available: mid-malleolar centre
                ajc = 0.5 * (mk[p + "ANK"] + mk[p + "ANM"])
            else:
                ajc = chord_joint_centre(
                    kjc,
                    mk[p + "ANK"],
                    mk[p + "TIB"],
                    subj.ankle_width[side],
                    marker_radius=subj.marker_radius,
                )
        Rt = _frame(kjc, hjc, kjc + s * (mk[p + "KNE"] - kjc), "yz")
        Rs = _frame(ajc, kjc, ajc + s * (mk[p + "ANK"] - ajc), "yz")
        heel = mk.get(p + "HEE")
        if heel is not None and np.isfinite(heel).all(axis=1).mean() > 0.9:
            Rf = _frame(ajc, ajc + (mk[p + "TOE"] - heel), Rs[..., :, 2], "xz", plane_is_axis=True)
        else:
            Rf = _frame(ajc, mk[p + "TOE"], Rs[..., :, 2], "xz", plane_is_axis=True)
            if foot_offset is not None and side in foot_offset:
                Rf = Rf @ foot_offset[side]
        out[f"thigh_{side}"] = (Rt, kjc)
        out[f"shank_{side}"] = (Rs, ajc)
        out[f"foot_{side}"] = (Rf, ajc)
        jc[p + "HJC"], jc[p + "KJC"], jc[p + "AJC"] = hjc, kjc, ajc
    return out, jc


def _foot_offsets(static_mk, subj):
    """Constant rotation from the ankle-toe foot frame to the heel-toe one (static trial)."""
    from ahbm.kinematics.rotations import orthonormalize

    offsets = {}
    fr, _ = _frames({k: v for k, v in static_mk.items() if not k.endswith("HEE")}, subj)
    full, _ = _frames(static_mk, subj)
    for side, p in SIDES:
        if p + "HEE" not in static_mk:
            continue
        Ra = fr[f"foot_{side}"][0]
        Rh = full[f"foot_{side}"][0]
        rel = np.swapaxes(Ra, -1, -2) @ Rh
        ok = np.isfinite(rel).all(axis=(1, 2))
        if ok.any():
            offsets[side] = orthonormalize(rel[ok].mean(axis=0))
    return offsets


# ---------------------------------------------------------------------------
# pipeline
# ---------------------------------------------------------------------------


def _rotate_to_z_up(points, plates, up):
    """Rotate marker and plate data so that `up` becomes +Z (a lab frame change)."""
    from dataclasses import replace

    u = np.asarray(up, float) / np.linalg.norm(up)
    if np.allclose(u, [0, 0, 1]):
        return points, plates, np.eye(3)
    z = u
    x = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
    x = x - (x @ z) * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    Q = np.stack([x, y, z])  # new = Q @ old
    pts = points @ Q.T
    new_plates = [
        replace(
            p,
            force=p.force @ Q.T,
            moment=p.moment @ Q.T,
            cop=p.cop @ Q.T,
            free_moment=p.free_moment @ Q.T,
            corners=p.corners @ Q.T,
            origin=p.origin @ Q.T,
        )
        for p in plates
    ]
    return pts, new_plates, Q


def _detect_up(mk):
    d = np.nanmean(0.5 * (mk["LASI"] + mk["RASI"]) - 0.5 * (mk["LTOE"] + mk["RTOE"]), axis=0)
    k = int(np.argmax(np.abs(d)))
    up = np.zeros(3)
    up[k] = np.sign(d[k])
    return up


def _plates_from_grf(grf, time):
    """Force plates (lab frame) from an OpenSim ground-reaction table."""
    from ahbm.io.opensim import OpenSimTable, read_mot, table_to_grf
    from ahbm.io.trial import ForcePlate

    table = grf if isinstance(grf, OpenSimTable) else read_mot(_path(grf, "grf"))
    forces = table_to_grf(table)
    tg = np.asarray(table.time, dtype=float)
    if tg.size < 2 or np.any(np.diff(tg) <= 0):
        raise DataError("`grf`: the table needs at least 2 samples with increasing time")
    rate = 1.0 / float(np.median(np.diff(tg)))
    n = int(np.floor((tg[-1] - time[0]) * rate)) + 1
    if n < 2 or tg[0] > time[-1]:
        raise DataError(
            f"`grf` covers {tg[0]:g}-{tg[-1]:g} s but the trial {time[0]:g}-{time[-1]:g} s"
        )
    ts = time[0] + np.arange(n) / rate
    plates = []
    for parts in forces.values():
        res = {}
        for key in ("force", "point", "torque"):
            arr = np.asarray(parts[key], dtype=float)
            res[key] = np.stack(
                [np.interp(ts, tg, arr[:, j], left=0.0, right=0.0) for j in range(3)], axis=1
            )
        F, P, T = res["force"], res["point"], res["torque"]
        small = np.linalg.norm(F, axis=1) < 1e-6
        cop = np.where(small[:, None], np.nan, P)
        plates.append(
            ForcePlate(
                force=F,
                moment=np.cross(np.nan_to_num(cop), F) + T,
                cop=cop,
                free_moment=T,
                corners=np.zeros((4, 3)),
                origin=np.zeros(3),
                rate=rate,
            )
        )
    return plates


def _path(value, argname):
    path = Path(value)
    if not path.is_file():
        raise DataError(f"`{argname}`: file {str(path)!r} does not exist")
    return path


def _stance_masks(events, time):
    """Per side: True where the foot is on the ground according to the events."""
    out = {}
    for side, _ in SIDES:
        ev = sorted((e.time, e.label) for e in events if e.context == side)
        mask = np.zeros(time.size, bool)
        if ev:
            state = ev[0][1] == "Foot Off"  # a trial starting in stance sees an off first
            t_prev = time[0] - 1.0
            for t_ev, label in ev + [(time[-1] + 1.0, "")]:
                mask[(time >= t_prev) & (time < t_ev)] = state
                state = label == "Foot Strike"
                t_prev = t_ev
        out[side] = mask
    return out


def analyze_gait(
    trial_or_path,
    mass=None,
    *,
    static=None,
    height=None,
    leg_length=None,
    knee_width=None,
    ankle_width=None,
    tibial_torsion=None,
    marker_radius: float = 0.007,
    marker_set="plug_in_gait",
    marker_map=None,
    cutoff: float = 6.0,
    grf_cutoff: float | None = None,
    max_gap: int = 10,
    bsp: str = "de_leva",
    sex: str = "male",
    threshold: float = 20.0,
    kinetics: bool = True,
    up="auto",
    grf=None,
) -> GaitResult:
    """Joint angles, moments, powers, forces, events and cycles of a walking trial.

    Parameters
    ----------
    trial_or_path : Trial or path
        The walking trial (C3D or TRC file, or a Trial with markers in m and,
        for kinetics, force plates in the lab frame).
    mass : float, optional
        Body mass, kg (default: the file's Bodymass, else estimated from the
        force plates with a warning).
    static : Trial or path, optional
        Static standing trial: subject estimates, heel-toe foot offset and
        calibrated landmarks for marker sets with clusters.
    height, leg_length, knee_width, ankle_width, tibial_torsion, marker_radius :
        Subject parameters (see :func:`subject_parameters`); estimated with a
        warning when neither given nor in the file.
    marker_set : str or dict
        Name in :data:`MARKER_SETS` (``"plug_in_gait"``, ``"opensim"``) or a dict
        ``{"map": ..., "clusters": ...}``.
    marker_map : dict, optional
        Canonical Plug-in Gait name -> trial label (or list of labels averaged),
        overriding `marker_set`.
    cutoff : float
        Marker low-pass cutoff, Hz (zero-lag 4th-order Butterworth, Winter's
        correction).
    grf_cutoff : float, optional
        Low-pass cutoff of the assigned ground-reaction wrenches at the frame
        rate, Hz; None (default) uses them unfiltered.
    max_gap : int
        Longest interior marker gap (frames) filled by cubic spline; longer
        gaps raise a DataError. Gaps at the ends stay NaN.
    bsp : {"de_leva"}
        Segment parameter table (see the module notes); `sex` selects its column.
    threshold : float
        Force plate contact threshold, N.
    kinetics : bool
        Compute moments, powers and forces (needs force plates).
    grf : path or OpenSimTable, optional
        Ground reaction forces from an OpenSim ``.mot``/``.sto`` file (columns
        ``*force_v*``, ``*force_p*``, ``*torque_*`` in the trial's lab frame),
        used as force plates (each force one plate, resampled onto the trial's
        time axis) in place of the trial's own plates.
    up : "auto" or array_like (3,)
        Vertical lab axis; "auto" takes the coordinate axis along mid-ASIS minus
        the toes. Data are rotated so that it becomes +Z (lab-frame outputs are
        in that Z-up frame).

    Returns
    -------
    GaitResult

    Raises
    ------
    DataError
        Missing markers (listed, with the mapping option), a marker gap longer
        than `max_gap`, no force plate contact with ``kinetics=True``, no
        mass, unknown options.

    Notes
    -----
    Processing: gap filling (:func:`ahbm.analysis.fill_gaps`, spline) ->
    low-pass filter of each marker's valid stretch -> segment frames and joint
    centres -> Grood-Suntay angles -> segment kinematics by finite differences
    -> force plates assigned to the foot over the centre of pressure
    (:func:`ahbm.dynamics.segmental.assign_force_plates`) -> Newton-Euler from
    the feet up (AHBM §4.4) -> clinical moments on the JCS axes, powers,
    forces in the distal segment frame, all divided by body mass. A leg's
    kinetics are NaN where its foot is on the ground (by the gait events) but
    on no plate, or where a plate cannot be attributed to one foot. Events:
    :func:`ahbm.analysis.detect_gait_events` (kinematic, refined by the plates).

    Examples
    --------
    >>> r = analyze_gait("gait-raw.c3d", mass=70.0)  # doctest: +SKIP
    >>> r.angles["LKneeAngles"].shape  # doctest: +SKIP
    (142, 3)
    """
    from ahbm.analysis.cycles import spatiotemporal_parameters, time_normalize
    from ahbm.analysis.events import zeni_events
    from ahbm.analysis.filters import butter_filtfilt
    from ahbm.analysis.gaps import fill_gaps
    from ahbm.analysis.segments import segment_motion
    from ahbm.bsp.tables import segment_parameters
    from ahbm.dynamics.segmental import (
        assign_force_plates,
        clinical_moments,
        loads_in_frame,
        newton_euler,
    )
    from ahbm.io.trial import Event
    from ahbm.kinematics.jcs import foot_progression_angles, grood_suntay_angles, pelvis_angles
    from ahbm.kinematics.rotations import rot_y

    tr = _load(trial_or_path, "trial_or_path")
    st = _load(static, "static") if static is not None else None
    if tr.point_rate <= 0 or tr.n_frames < 10:
        raise DataError(f"{tr.source or 'trial'}: needs a point rate and at least 10 frames")
    if str(tr.point_units).lower() != "m":
        raise DataError(
            f"{tr.source or 'trial'}: marker units are {tr.point_units!r}; read the file with "
            "units='m' (the default of read_c3d/read_trc)"
        )
    if str(bsp).lower() != "de_leva":
        raise DataError(f"Unknown `bsp` {bsp!r}; the gait model uses 'de_leva'")
    mapping, clusters = _marker_set(marker_set, marker_map)
    src = tr.source or "trial"
    mk_raw = _collect(tr, mapping, clusters, st, PLUG_IN_GAIT_MARKERS, _OPTIONAL, src)
    names = list(mk_raw)
    pts = np.stack([mk_raw[n] for n in names], axis=1)
    plates = list(tr.force_plates) if grf is None else _plates_from_grf(grf, tr.time)
    up_vec = _detect_up(mk_raw) if isinstance(up, str) else np.asarray(up, float)
    pts, plates, Q = _rotate_to_z_up(pts, plates, up_vec)
    rate = float(tr.point_rate)
    time = tr.time
    filled, report = fill_gaps(
        pts, max_gap=int(max_gap), method="spline", rate=rate, labels=names, on_long_gap="raise"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        smooth = butter_filtfilt(filled, rate, cutoff, nan_policy="segments")
    mk = {n: smooth[:, i] for i, n in enumerate(names)}
    subj = subject_parameters(
        tr,
        st,
        mass=mass,
        height=height,
        leg_length=leg_length,
        knee_width=knee_width,
        ankle_width=ankle_width,
        tibial_torsion=tibial_torsion,
        marker_radius=marker_radius,
        marker_set=marker_set,
        marker_map=marker_map,
    )
    offsets = None
    if st is not None:
        st_mk = _collect(st, mapping, {}, None, PLUG_IN_GAIT_MARKERS, _OPTIONAL, st.source)
        st_pts, _, _ = _rotate_to_z_up(np.stack([st_mk[n] for n in st_mk], 1), [], up_vec)
        offsets = _foot_offsets({n: st_pts[:, i] for i, n in enumerate(st_mk)}, subj)
    frames, jc = _frames(mk, subj, offsets)

    # forward (progression) direction from the pelvis displacement
    mid = frames["pelvis"][1]
    ok = np.flatnonzero(np.isfinite(mid).all(axis=1))
    fwd = mid[ok[-1]] - mid[ok[0]]
    fwd[2] = 0.0
    if np.linalg.norm(fwd) < 0.2:  # treadmill or standing: the pelvis's anterior axis
        fwd = np.nanmean(frames["pelvis"][0][:, :, 0], axis=0)
        fwd[2] = 0.0
    fwd = fwd / np.linalg.norm(fwd)

    angles = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        for side, p in SIDES:
            Rp = frames["pelvis"][0]
            Rt, Rs, Rf = (frames[f"{s}_{side}"][0] for s in ("thigh", "shank", "foot"))
            tors = subj.tibial_torsion[side] * (1.0 if side == "Right" else -1.0)
            Rk = Rs @ rot_y(tors)
            angles[p + "HipAngles"] = grood_suntay_angles(Rp, Rt, side=side, joint="hip")
            angles[p + "KneeAngles"] = grood_suntay_angles(Rt, Rk, side=side, joint="knee")
            angles[p + "AnkleAngles"] = grood_suntay_angles(Rs, Rf, side=side, joint="ankle")
            angles[p + "PelvisAngles"] = pelvis_angles(Rp, side=side, forward=fwd)
            angles[p + "FootProgressAngles"] = foot_progression_angles(Rf, side=side, forward=fwd)

    # force plates: the foot over each plate's centre of pressure, frame by frame
    seg_names = ["pelvis"] + [
        f"{s}_{side}" for side, _ in SIDES[::-1] for s in ("thigh", "shank", "foot")
    ]
    foot_index = {side: seg_names.index(f"foot_{side}") for side, _ in SIDES}
    assign = None
    if plates:
        feet = {}
        for side, p in SIDES:
            pts_f = [jc[p + "AJC"], mk[p + "TOE"]]
            if p + "HEE" in mk:
                pts_f.insert(0, mk[p + "HEE"])
            feet[foot_index[side]] = np.stack(pts_f, axis=1)
        try:
            assign = assign_force_plates(
                plates, time, feet, n_segments=len(seg_names), threshold=threshold
            )
        except DataError:
            if kinetics:
                raise
    elif kinetics:
        raise DataError(
            f"{src}: the trial has no force plates, so joint moments cannot be computed; "
            "pass kinetics=False (CLI: --no-kinetics) for kinematics only"
        )

    # events: kinematic (Zeni) on the filled markers along the progression direction
    # (also right on a treadmill), replaced by plate contacts
    events = []
    for side, p in SIDES:
        hname = p + "HEE" if p + "HEE" in names else p + "ANK"
        st_, of_ = zeni_events(
            filled[:, names.index(hname)],
            filled[:, names.index(p + "TOE")],
            filled[:, names.index("SACR")],
            rate,
            direction=fwd,
            t0=float(time[0]),
        )
        events += [Event("Foot Strike", float(x), side, f"zeni ({hname})") for x in st_]
        events += [Event("Foot Off", float(x), side, f"zeni ({p}TOE)") for x in of_]
    events = _merge_plate_events(events, plates, assign, foot_index, time, threshold)

    moments, powers, forces = {}, {}, {}
    kin_settings = {}
    if kinetics:
        side_key = {"Right": "_r", "Left": "_l"}
        lengths = {}
        for side, p in SIDES:
            k = side_key[side]
            lengths["thigh" + k] = _median_dist(jc[p + "HJC"], jc[p + "KJC"])
            lengths["shank" + k] = _median_dist(jc[p + "KJC"], jc[p + "AJC"])
            lengths["foot" + k] = _median_dist(jc[p + "AJC"], mk[p + "TOE"])
        par = segment_parameters(
            "de_leva", subj.mass, subj.height, segment_lengths=lengths, sex=sex
        )
        P = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])  # ahbm bsp axes -> ISB axes
        n_seg = len(seg_names)
        parent = [-1, 0, 1, 2, 0, 4, 5]
        masses = np.zeros(n_seg)
        inertia = np.zeros((n_seg, 3, 3))
        R = np.empty((tr.n_frames, n_seg, 3, 3))
        com = np.empty((tr.n_frames, n_seg, 3))
        joint_pts = np.empty((tr.n_frames, n_seg, 3))
        R[:, 0], com[:, 0] = frames["pelvis"]
        joint_pts[:, 0] = frames["pelvis"][1]
        for i, name in enumerate(seg_names[1:], start=1):
            seg, side = name.split("_")
            p = side[0]
            bp = par[f"{seg}{side_key[side]}"]
            masses[i] = bp.mass
            inertia[i] = P @ bp.inertia @ P.T
            R[:, i] = frames[name][0]
            if seg == "foot":
                com[:, i] = 0.5 * (jc[p + "AJC"] + mk[p + "TOE"])
                joint_pts[:, i] = jc[p + "AJC"]
            else:
                prox = jc[p + ("HJC" if seg == "thigh" else "KJC")]
                dist = jc[p + ("KJC" if seg == "thigh" else "AJC")]
                frac = abs(bp.com[2]) / bp.length
                com[:, i] = prox + frac * (dist - prox)
                joint_pts[:, i] = prox
        motion = segment_motion(R, com, time)
        f_ext = assign.f_ext
        if grf_cutoff is not None:
            f_ext = butter_filtfilt(f_ext, rate, grf_cutoff)
        loads = newton_euler(
            parent, masses, inertia, motion, joint_pts, gravity=(0.0, 0.0, -G), f_ext=f_ext
        )
        stance = _stance_masks(events, time)
        margin = int(np.ceil(0.03 * rate))
        for side, p in SIDES:
            ids = [seg_names.index(f"{s}_{side}") for s in ("thigh", "shank", "foot")]
            foot = ids[2]
            bad = assign.ambiguous[:, foot] | (stance[side] & ~assign.contact[:, foot])
            # near the ends of a contact the load is below the plate threshold: unknown
            near_contact = _dilate(assign.contact[:, foot], margin) & ~assign.contact[:, foot]
            bad = _dilate(bad, margin) | near_contact
            for joint, i in zip(_JOINTS, ids, strict=True):
                prox = parent[i]
                Rprox, Rdist = motion.rotation[:, prox], motion.rotation[:, i]
                M = loads.moment[:, i] / subj.mass
                clin = clinical_moments(M, Rprox, Rdist, joint=joint.lower(), side=side)
                pw = _power_components(M, motion.omega[:, i] - motion.omega[:, prox], Rprox, Rdist)
                fr = loads_in_frame(loads.force[:, i] / subj.mass, Rdist)
                for arr in (clin, pw, fr):
                    arr[bad] = np.nan
                moments[f"{p}{joint}Moment"] = clin
                powers[f"{p}{joint}Power"] = pw
                forces[f"{p}{joint}Force"] = fr
        kin_settings = {
            "bsp_table": f"de_leva ({sex}); foot COM at mid AJC-TOE",
            "grf_cutoff_hz": "none" if grf_cutoff is None else float(grf_cutoff),
            "force_threshold_n": float(threshold),
            "moment_convention": "internal; extensor/plantarflexor, abductor, internal "
            "rotator positive; JCS projection",
        }

    # cycles
    cycles = {}
    for side, p in SIDES:
        fs = np.sort([e.time for e in events if e.context == side and e.label == "Foot Strike"])
        fo = np.sort([e.time for e in events if e.context == side and e.label == "Foot Off"])
        fs = fs[(fs >= time[0]) & (fs <= time[-1])]
        side_cycles = {}
        if fs.size >= 2:
            variables = {name: angles[p + name] for name in _ANGLES}  # rad
            for joint in _JOINTS:
                if f"{p}{joint}Moment" in moments:
                    variables[f"{joint}Moment"] = moments[f"{p}{joint}Moment"]
                    variables[f"{joint}Power"] = powers[f"{p}{joint}Power"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AhbmWarning)
                for name, arr in variables.items():
                    side_cycles[name] = time_normalize(arr, fs, 101, time=time)
            toe = []
            for a, b in zip(fs[:-1], fs[1:], strict=True):
                o = fo[(fo > a) & (fo < b)]
                toe.append(100.0 * (o[0] - a) / (b - a) if o.size else np.nan)
            side_cycles["toe_off"] = np.array(toe)
        cycles[side] = side_cycles

    def heel(p):
        return filled[:, names.index(p + "HEE")] if p + "HEE" in names else jc[p + "AJC"]

    spt = spatiotemporal_parameters(
        events, heel_left=heel("L"), heel_right=heel("R"), time=time, direction=fwd
    )
    settings = {
        "marker_cutoff_hz": float(cutoff),
        "filter": "zero-lag Butterworth, 2 passes of order 2, Winter-corrected cutoff",
        "max_gap_frames": int(max_gap),
        "gap_fill": "cubic spline (interior gaps); edges not extrapolated",
        "gaps_filled": [f"{g.label} {g.start}-{g.stop}" for g in report if g.filled],
        "gaps_left": [f"{g.label} {g.start}-{g.stop}" for g in report if not g.filled],
        "hip_joint_centre": "Davis et al. (1991), Plug-in Gait form",
        "knee_ankle_centres": "chord function (knee and ankle widths)",
        "angles": "Grood-Suntay JCS (ISB axes), clinical signs",
        "marker_set": marker_set if isinstance(marker_set, str) else "custom",
        "marker_map": {k: (v if isinstance(v, str) else "+".join(v)) for k, v in mapping.items()},
        "vertical_axis": [float(x) for x in up_vec],
        "events": "kinematic (Zeni) refined by force plates",
        "kinetics": bool(kinetics),
        **kin_settings,
    }
    jc_out = {k: v @ Q for k, v in jc.items()}
    return GaitResult(
        time=time,
        angles={k: np.degrees(v) for k, v in angles.items()},
        moments=moments,
        powers=powers,
        forces=forces,
        events=events,
        cycles=cycles,
        spatiotemporal=spt,
        settings=settings,
        subject=subj,
        joint_centres=jc_out,
    )


def _dilate(mask, k: int):
    """Extend True runs of a boolean frame mask by `k` frames on both sides."""
    if k <= 0 or not mask.any():
        return mask.copy()
    c = np.convolve(mask.astype(float), np.ones(2 * k + 1), mode="same")
    return c > 0.5


def _merge_plate_events(events, plates, assign, foot_index, time, threshold):
    """Replace kinematic events by force plate contacts of the foot assigned to each plate."""
    from ahbm.analysis.events import force_plate_events
    from ahbm.io.trial import Event

    out = [Event(e.label, e.time, e.context, e.description) for e in events]
    if assign is None:
        return out
    side_of = {i: side for side, i in foot_index.items()}
    for k, plate in enumerate(plates):
        fz = np.abs(np.asarray(plate.force, float)[:, 2])
        st, of = force_plate_events(fz, plate.rate, threshold=threshold, t0=float(time[0]))
        for s in st:
            ends = of[of > s]
            e = ends[0] if ends.size else time[-1]
            inside = (time >= s) & (time <= e)
            who = assign.plate_of[inside, k]
            who = who[who >= 0]
            if not who.size:
                continue
            side = side_of.get(int(np.bincount(who).argmax()))
            if side is None:
                continue
            new = [Event("Foot Strike", float(s), side, f"force plate {k}")]
            if ends.size:
                new.append(Event("Foot Off", float(e), side, f"force plate {k}"))
            for ev in new:
                out = [
                    x
                    for x in out
                    if not (
                        x.label == ev.label and x.context == side and abs(x.time - ev.time) <= 0.15
                    )
                ]
                out.append(ev)
    return sorted(out, key=lambda x: x.time)


def _power_components(M, w_rel, Rp, Rd):
    """Joint power split on the JCS axes: ω_rel = Σ a_k e_k, P_k = a_k (M·e_k)."""
    from ahbm.kinematics.jcs import jcs_axes

    e1, e2, e3 = jcs_axes(Rp, Rd)
    E = np.stack([e1, e2, e3], axis=-1)
    ok = np.isfinite(E).all(axis=(-2, -1)) & np.isfinite(w_rel).all(-1)
    a = np.full(w_rel.shape, np.nan)
    if ok.any():
        a[ok] = np.linalg.solve(E[ok], w_rel[ok][..., None])[..., 0]
    return a * np.stack([np.sum(M * e1, -1), np.sum(M * e2, -1), np.sum(M * e3, -1)], -1)


def save_gait_result(trial, result: GaitResult, path, *, name=None, overwrite=True) -> str:
    """Store the trial with the gait results in an ahbm HDF5 file.

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

    Examples
    --------
    >>> save_gait_result(trial, analyze_gait(trial), "walk.h5")  # doctest: +SKIP
    'walk'
    """
    from ahbm.io.hdf5 import save_trial

    trial.results.update(result.to_results())
    trial.events = list(result.events)
    return save_trial(trial, path, name=name, overwrite=overwrite)


# ---------------------------------------------------------------------------
# the multibody model (synthetic data, tests)
# ---------------------------------------------------------------------------


def lower_extremity_model(
    mass: float = 70.0,
    height: float = 1.75,
    *,
    sex: str = "male",
    marker_radius: float = 0.007,
    pelvis_mass_fraction: float = 0.1117,
):
    """The seven-segment model as a multibody tree with Plug-in Gait markers.

    Parameters
    ----------
    mass, height : float
        Body mass (kg) and stature (m).
    sex : {"male", "female"}
        de Leva column.
    marker_radius : float
        m.
    pelvis_mass_fraction : float
        Pelvis mass / body mass (de Leva's lower trunk).

    Returns
    -------
    model : Model
        Bodies ``pelvis`` (free joint) and, per side ``r``/``l``, ``thigh``,
        ``shank``, ``foot`` on ``euler`` joints with sequence ``"ZXY"`` (the
        Grood-Suntay order: flexion about the proximal z, ab/adduction about
        the floating axis, rotation about the distal y). Body frames have ISB
        axes (x anterior, y up, z right) with the origin at the proximal joint
        centre (pelvis: mid-ASIS) and coincide with the frames that
        :func:`analyze_gait` rebuilds from the markers.
    params : SubjectParameters
        Leg length, knee and ankle widths, inter-ASIS distance matching the
        markers (pass them to :func:`analyze_gait`).

    Notes
    -----
    Markers: ASIS at ±(inter-ASIS/2) on the pelvis z axis, SACR 0.16 m behind
    mid-ASIS; the hip centres are placed where the Davis regression puts them;
    KNE and ANK lie on the knee and ankle axes at width/2 + marker radius
    lateral to the centres, THI and TIB laterally in the segments' frontal
    planes (so the chord function returns the true centres); HEE and TOE on
    the sole line, parallel to the foot x axis. Inertia from de Leva (1996).

    Examples
    --------
    >>> model, params = lower_extremity_model()
    >>> model.n_bodies, model.nq
    (7, 25)
    """
    from ahbm.bsp.tables import segment_parameters
    from ahbm.kinematics.jcs import hip_joint_centre_davis
    from ahbm.kinematics.tree import Model

    s_h = height / 1.75
    inter_asis = 0.25 * s_h
    leg = 0.92 * s_h
    knee_w, ankle_w = 0.105 * s_h, 0.072 * s_h
    thigh_len, shank_len = 0.425 * s_h, 0.43 * s_h
    foot_len, ajc_h = 0.15 * s_h, 0.08 * s_h
    toe = np.array([foot_len, -ajc_h + marker_radius, 0.0])
    lengths = {"thigh": thigh_len, "shank": shank_len, "foot": float(np.linalg.norm(toe))}
    par = segment_parameters("de_leva", mass, height, segment_lengths=lengths, sex=sex)
    P = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])
    model = Model("lower_extremity", gravity=(0.0, 0.0, -G))
    pelvis_I = np.diag([0.1, 0.08, 0.1]) * mass / 70.0
    model.add_body(
        "pelvis",
        "ground",
        {"type": "free"},
        mass=pelvis_mass_fraction * mass,
        com=[-0.05, -0.05, 0.0],
        inertia=pelvis_I,
        markers={
            "RASI": [0, 0, inter_asis / 2],
            "LASI": [0, 0, -inter_asis / 2],
            "SACR": [-0.16 * s_h, 0.0, 0.0],
        },
    )
    dk = knee_w / 2 + marker_radius
    da = ankle_w / 2 + marker_radius
    for side, p, s in (("r", "R", 1.0), ("l", "L", -1.0)):
        hjc = hip_joint_centre_davis(
            leg, inter_asis, side="right" if s > 0 else "left", marker_radius=marker_radius
        )
        th = par["thigh_" + side]
        sh = par["shank_" + side]
        ft = par["foot_" + side]
        model.add_body(
            f"thigh_{side}",
            "pelvis",
            {"type": "euler", "sequence": "ZXY"},
            position=hjc,
            mass=th.mass,
            com=P @ th.com,
            inertia=P @ th.inertia @ P.T,
            markers={
                p + "THI": [0.0, -0.5 * thigh_len, s * (dk + 0.06)],
                p + "KNE": [0.0, -thigh_len, s * dk],
            },
        )
        model.add_body(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "euler", "sequence": "ZXY"},
            position=[0, -thigh_len, 0],
            mass=sh.mass,
            com=P @ sh.com,
            inertia=P @ sh.inertia @ P.T,
            markers={
                p + "TIB": [0.0, -0.5 * shank_len, s * (da + 0.05)],
                p + "ANK": [0.0, -shank_len, s * da],
            },
        )
        model.add_body(
            f"foot_{side}",
            f"shank_{side}",
            {"type": "euler", "sequence": "ZXY"},
            position=[0, -shank_len, 0],
            mass=ft.mass,
            com=toe / 2,
            inertia=P @ ft.inertia @ P.T,
            markers={p + "HEE": [-0.05 * s_h, -ajc_h + marker_radius, 0.0], p + "TOE": toe},
        )
    params = SubjectParameters(
        mass=float(mass),
        height=float(height),
        leg_length={"Left": leg, "Right": leg},
        knee_width={"Left": knee_w, "Right": knee_w},
        ankle_width={"Left": ankle_w, "Right": ankle_w},
        inter_asis_distance=inter_asis,
        marker_radius=marker_radius,
    )
    return model, params
