"""Subject parameters of the gait model: given, read from the file, or estimated."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ahbm._validation import as_finite_float, as_nonnegative_float, as_positive_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.models.gait.markers import collect_markers, load_gait_trial, resolve_marker_set
from ahbm.models.gait.markersets import OPTIONAL_MARKERS, PLUG_IN_GAIT_MARKERS, SIDES, G
from ahbm.types import ResultRepr

__all__ = ["SubjectParameters", "subject_parameters"]


@dataclass(frozen=True, repr=False)
class SubjectParameters(ResultRepr):
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


def _sided_option(value, name: str, check):
    """None, one value for both sides, or {"Left": v, "Right": v} (None entries allowed)."""
    if value is None:
        return None
    if isinstance(value, dict):
        unknown = [k for k in value if k not in ("Left", "Right")]
        if unknown:
            raise DataError(f"`{name}` has keys {unknown}; use 'Left' and 'Right'")
        return {k: None if v is None else check(v, f"{name}[{k!r}]") for k, v in value.items()}
    return check(value, name)


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
        See :class:`~ahbm.models.gait.GaitSettings`.
    warn : bool
        Warn (AhbmWarning) listing the estimated parameters.

    Returns
    -------
    SubjectParameters

    Raises
    ------
    DataError
        Missing markers, or no mass given and none estimable (fewer than two
        overlapping force plate contacts), or a given value that is not a
        positive finite number (a negative, zero, NaN or text mass or height
        is an error, never replaced by an estimate).

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
    mass = None if mass is None else as_positive_float(mass, "mass", unit="kg")
    height = None if height is None else as_positive_float(height, "height", unit="m")
    marker_radius = as_nonnegative_float(marker_radius, "marker_radius", unit="m")
    leg_length = _sided_option(leg_length, "leg_length", as_positive_float)
    knee_width = _sided_option(knee_width, "knee_width", as_positive_float)
    ankle_width = _sided_option(ankle_width, "ankle_width", as_positive_float)
    tibial_torsion = _sided_option(tibial_torsion, "tibial_torsion", as_finite_float)
    tr = load_gait_trial(trial, "trial")
    st = load_gait_trial(static, "static") if static is not None else None
    mapping, clusters = resolve_marker_set(marker_set, marker_map)
    src = tr if st is None else st
    mk = collect_markers(
        src, mapping, clusters, st, PLUG_IN_GAIT_MARKERS, OPTIONAL_MARKERS, src.source or "trial"
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
