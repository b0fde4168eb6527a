"""Subject parameters of the gait model: given, read from the file, or estimated."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ahbm._internal.validation import as_finite_float, as_nonnegative_float, as_positive_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.body_mass import PELVIS_MARKERS, mass_from_plates, pelvis_point
from ahbm.gait.markers import collect_markers, load_gait_trial, resolve_marker_set
from ahbm.gait.markersets import OPTIONAL_MARKERS, PLUG_IN_GAIT_MARKERS, SIDES
from ahbm.types import ResultRepr

__all__ = ["SubjectParameters", "subject_parameters", "NoBodyMassError"]


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
        It turns the TIB marker about the knee-centre–ankle-marker line
        before the ankle centre's chord construction and rotates the shank
        frame used for the knee angles.
    estimated : list of str
        Names of the parameters that were estimated rather than given.
    implausible : list of str
        Measurements read from the file (``PROCESSING`` or the subject's
        group) outside their plausible range, used as stored (the file's own
        model outputs were computed with them) and flagged; the same value
        given as an argument is an error.
    thigh_rotation, shank_rotation : dict
        ``{"Left": rad, "Right": rad}``: angle of the thigh (THI) and shank
        (TIB) wand markers out of the plane that the chord function needs
        (Plug-in Gait's ThighRotation and ShankRotation, from a static trial
        with a knee alignment device or medial markers, or from the file);
        THI is turned back about the HJC–KNE line, TIB about the KJC–ANK line.
        Default 0.
    asis_trochanter_distance : dict
        ``{"Left": m or None, "Right": ...}``: measured ASIS–greater
        trochanter distance for the Davis hip centre (None: Plug-in Gait's
        regression on the leg length).
    static_plantarflexion, static_rotation : dict
        ``{"Left": rad, "Right": rad}``: the foot offsets measured in a static
        trial (:func:`~ahbm.gait.static_calibration`) or read from the
        file's ``L/RStaticPlantFlex`` and ``L/RStaticRotOff`` (0 without
        either); signs of :func:`~ahbm.gait.foot_offset_from_angles`.
    foot_offsets_from : str
        Where the foot offsets come from: ``"none"``, ``"static trial"`` or
        ``"file"`` (Plug-in Gait's stored offsets, applied to the ankle-toe
        foot as Plug-in Gait's dynamic model does).
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
    thigh_rotation: dict = field(default_factory=lambda: {"Left": 0.0, "Right": 0.0})
    shank_rotation: dict = field(default_factory=lambda: {"Left": 0.0, "Right": 0.0})
    asis_trochanter_distance: dict = field(default_factory=lambda: {"Left": None, "Right": None})
    static_plantarflexion: dict = field(default_factory=lambda: {"Left": 0.0, "Right": 0.0})
    static_rotation: dict = field(default_factory=lambda: {"Left": 0.0, "Right": 0.0})
    foot_offsets_from: str = "none"
    implausible: list = field(default_factory=list)

    def replace(self, **changes) -> SubjectParameters:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain dict (for HDF5 storage)."""
        out = {
            "mass": float(self.mass),
            "height": float(self.height),
            "inter_asis_distance": float(self.inter_asis_distance),
            "marker_radius": float(self.marker_radius),
            "estimated": list(self.estimated) or ["none"],
            "foot_offsets_from": [self.foot_offsets_from],
            "implausible": list(self.implausible) or ["none"],
        }
        for key in (
            "leg_length",
            "knee_width",
            "ankle_width",
            "tibial_torsion",
            "thigh_rotation",
            "shank_rotation",
            "asis_trochanter_distance",
            "static_plantarflexion",
            "static_rotation",
        ):
            for side in ("Left", "Right"):
                v = getattr(self, key).get(side)
                out[f"{side}_{key}"] = float("nan") if v is None else float(v)
        return out


def _numbers(group) -> dict:
    """Single-number entries of a parameter group, lower-cased keys."""
    out = {}
    if not isinstance(group, dict):
        return out
    for k, v in group.items():
        if isinstance(v, str) or str(k).startswith("__"):
            continue
        arr = np.asarray(v)
        if arr.size == 1 and arr.dtype.kind in "fiu" and np.isfinite(arr).all():
            out[str(k).lower()] = float(arr.reshape(-1)[0])
    return out


def _processing(trial) -> dict:
    """Subject values of a C3D (Vicon names), lower-cased keys, in the file's units.

    ``PROCESSING`` first, then the parameter group named after the subject
    (``SUBJECTS:NAMES``; Vicon writes the subject's parameters there too),
    then the reader's ``trial.subject["processing"]``.
    """
    params = trial.parameters if isinstance(trial.parameters, dict) else {}
    subject = trial.subject if isinstance(trial.subject, dict) else {}
    proc = _numbers(params.get("PROCESSING", {}))
    names = subject.get("names") or ([subject["name"]] if subject.get("name") else [])
    for name in names:
        for key in (str(name), str(name).upper()):
            if key != "PROCESSING" and isinstance(params.get(key), dict):
                for k, v in _numbers(params[key]).items():
                    proc.setdefault(k, v)
    for k, v in dict(subject.get("processing", {}) or {}).items():
        try:
            proc.setdefault(str(k).lower(), float(v))
        except (TypeError, ValueError):
            continue
    return proc


_VICON_NAMES = {
    "leglength": "LegLength", "kneewidth": "KneeWidth", "anklewidth": "AnkleWidth",
    "interasisdistance": "InterAsisDistance",
}  # fmt: skip


def _file_key(proc: dict, key: str) -> str:
    """Vicon's name of a lower-cased subject parameter key (``lleglength`` -> ``LLegLength``)."""
    side = key[0].upper() if key[:1] in ("l", "r") and key[1:] in _VICON_NAMES else ""
    return side + _VICON_NAMES.get(key[1:] if side else key, key)


class NoBodyMassError(DataError):
    """No body mass given, none in the file, and the plates cannot weigh the subject."""


#: What an unknown body mass (NaN in SubjectParameters.mass) means and how to give it.
MASS_UNKNOWN = (
    "body mass not known (none given and no Bodymass in the file: kinematics only; pass "
    "`mass`, CLI --mass KG, for kinetics)"
)


def mass_text(mass) -> str:
    """``"mass 70.0 kg"``, or what is missing and how to give it when `mass` is not known.

    Text for messages and reports: a kinematics-only subject has a NaN mass
    (:func:`subject_parameters` with ``need_mass=False``), which is never
    printed as ``nan kg``.
    """
    try:
        m = float(mass)
    except (TypeError, ValueError):
        m = float("nan")
    return f"mass {m:.1f} kg" if np.isfinite(m) and m > 0 else MASS_UNKNOWN


def check_subject_mass(subject, what: str) -> float:
    """The subject's mass, or a DataError saying what is missing and which option gives it."""
    m = getattr(subject, "mass", None)
    try:
        m = float(m)
    except (TypeError, ValueError):
        m = float("nan")
    if not (np.isfinite(m) and m > 0):
        shown = "missing (NaN)" if m != m else f"{m:g} kg"
        raise NoBodyMassError(
            f"{what} needs the body mass, but `subject.mass` is {shown}: {MASS_UNKNOWN} "
            "(subject_parameters(..., mass=KG))"
        )
    return m


def _file_length(value):
    """A length from a Vicon parameter: mm when above 3 (Vicon's unit), else m."""
    if value is None or not np.isfinite(value) or value <= 0:
        return None
    return value / 1000.0 if value > 3.0 else value


def _file_angle(value, name: str, source: str):
    """An angle from a C3D parameter: rad (C3D PROCESSING), degrees when beyond pi (warned)."""
    if value is None or not np.isfinite(value):
        return None
    if abs(value) > np.pi:
        warnings.warn(
            f"{source}: subject parameter {name} = {value:g} is beyond pi, read as degrees "
            f"({np.radians(value):.4f} rad)",
            AhbmWarning,
            stacklevel=4,
        )
        return float(np.radians(value))
    return float(value)


def _median_dist(a, b):
    d = np.linalg.norm(a - b, axis=-1)
    d = d[np.isfinite(d)]
    return float(np.median(d)) if d.size else float("nan")


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
    thigh_rotation=None,
    shank_rotation=None,
    inter_asis_distance=None,
    asis_trochanter_distance=None,
    need_mass: bool = True,
    plates=None,
) -> SubjectParameters:
    """Subject parameters: the given values, the file's, or estimates (with a warning).

    Parameters
    ----------
    trial : Trial or path
        The dynamic trial. Its C3D ``PROCESSING`` group and the group named
        after the subject (``SUBJECTS:NAMES``, as Vicon writes it) are read:
        Bodymass (kg), Height, L/RLegLength, L/RKneeWidth, L/RAnkleWidth,
        InterAsisDistance, L/RAsisTrocanterDistance (mm as Vicon writes them,
        m when below 3) and L/RTibialTorsion, L/RThighRotation,
        L/RShankRotation, L/RStaticPlantFlex, L/RStaticRotOff (rad; values
        beyond pi are taken as degrees, with a warning).
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
        See :class:`~ahbm.gait.GaitSettings`.
    warn : bool
        Warn (AhbmWarning) listing the estimated parameters.
    thigh_rotation, shank_rotation : float or dict, optional
        rad (default: the file's, else 0); see :class:`SubjectParameters`.
    inter_asis_distance : float, optional
        m (default: the file's InterAsisDistance, else measured from the markers).
    asis_trochanter_distance : float or dict, optional
        m (default: the file's, else Plug-in Gait's regression).
    need_mass : bool
        False for kinematics only: without a mass given or in the file the
        mass is NaN instead of estimated from the plates or an error.
    plates : sequence of ForcePlate, optional
        Baseline-corrected plates for the mass estimate and the check of the
        given mass (default: the trial's own).

    Returns
    -------
    SubjectParameters

    Raises
    ------
    DataError
        Missing markers, or no mass given and none estimable (fewer than two
        overlapping force plate contacts), or a given value that is not a
        positive finite number (a negative, zero, NaN or text mass or height
        is an error, never replaced by an estimate), or a value outside its
        plausible range, naming the argument (mass 5-400 kg, height 0.4-2.8 m,
        leg length 0.2-1.5 m, knee width 0.03-0.3 m, ankle width 0.02-0.25 m,
        inter-ASIS distance 0.1-0.5 m; ``leg_length=920`` is reported as
        millimetres).

    Warns
    -----
    AhbmWarning
        Estimated parameters; a given (or file) mass more than 10 % away
        from the weight the force plates measure during stance.

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
    mass = None if mass is None else check_mass(mass, "mass")
    height = None if height is None else as_positive_float(height, "height", unit="m")
    marker_radius = as_nonnegative_float(marker_radius, "marker_radius", unit="m")
    leg_length = _sided_option(leg_length, "leg_length", as_positive_float)
    knee_width = _sided_option(knee_width, "knee_width", as_positive_float)
    ankle_width = _sided_option(ankle_width, "ankle_width", as_positive_float)
    tibial_torsion = _sided_option(tibial_torsion, "tibial_torsion", as_finite_float)
    thigh_rotation = _sided_option(thigh_rotation, "thigh_rotation", as_finite_float)
    shank_rotation = _sided_option(shank_rotation, "shank_rotation", as_finite_float)
    asis_trochanter_distance = _sided_option(
        asis_trochanter_distance, "asis_trochanter_distance", as_positive_float
    )
    if inter_asis_distance is not None:
        inter_asis_distance = as_positive_float(inter_asis_distance, "inter_asis_distance")
    tr = load_gait_trial(trial, "trial")
    st = load_gait_trial(static, "static") if static is not None else None
    mapping, clusters = resolve_marker_set(marker_set, marker_map)
    mk = None
    if st is not None:  # preferred for the estimates; a KAD may replace KNE there
        try:
            mk = collect_markers(
                st, mapping, clusters, st, PLUG_IN_GAIT_MARKERS, OPTIONAL_MARKERS,
                st.source or "static",
            )  # fmt: skip
        except DataError:
            mk = None
    if mk is None:
        mk = collect_markers(
            tr, mapping, clusters, st, PLUG_IN_GAIT_MARKERS, OPTIONAL_MARKERS, tr.source or "trial"
        )
    proc = _processing(tr)
    if st is not None:
        for k, v in _processing(st).items():
            proc.setdefault(k, v)
    estimated = []
    from_file = {}  # (argument name, side) -> the file parameter it was read from

    def sided(value, key, estimate, name):
        out = {}
        for side, p in SIDES:
            v = value.get(side) if isinstance(value, dict) else value
            if v is None:
                v = _file_length(proc.get(f"{p.lower()}{key}"))
                if v is not None:
                    from_file[(name, side)] = _file_key(proc, f"{p.lower()}{key}")
            if v is None or not np.isfinite(v) or v <= 0:
                from_file.pop((name, side), None)
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
    src_name = tr.source or "trial"

    def angles_of(value, key, name):
        out = {}
        for side, p in SIDES:
            v = value.get(side) if isinstance(value, dict) else value
            if v is None:
                v = _file_angle(proc.get(f"{p.lower()}{key}"), p + name, src_name)
            out[side] = float(v or 0.0)
        return out

    # Plug-in Gait's stored foot offsets (rad): StaticPlantFlex has the sign of
    # static_plantarflexion, StaticRotOff the opposite of static_rotation
    pf = {side: _file_angle(proc.get(f"{p.lower()}staticplantflex"), p + "StaticPlantFlex",
                            src_name) for side, p in SIDES}  # fmt: skip
    ro = {side: _file_angle(proc.get(f"{p.lower()}staticrotoff"), p + "StaticRotOff",
                            src_name) for side, p in SIDES}  # fmt: skip
    offsets_from_file = any(v for v in list(pf.values()) + list(ro.values()))
    static_pf = {side: float(pf[side] or 0.0) for side, _ in SIDES}
    static_rot = {side: -float(ro[side] or 0.0) for side, _ in SIDES}
    tt = angles_of(tibial_torsion, "tibialtorsion", "TibialTorsion")
    thr = angles_of(thigh_rotation, "thighrotation", "ThighRotation")
    shr = angles_of(shank_rotation, "shankrotation", "ShankRotation")
    atd = {}
    for side, p in SIDES:
        v = asis_trochanter_distance
        v = v.get(side) if isinstance(v, dict) else v
        if v is None:
            v = _file_length(proc.get(f"{p.lower()}asistrocanterdistance"))
        atd[side] = None if v is None else float(v)
    try:
        pelvis = pelvis_point(
            collect_markers(tr, mapping, clusters, st, (), PELVIS_MARKERS, src_name)
        )
    except DataError:
        pelvis = None
    plate_mass = mass_from_plates(
        tr.force_plates if plates is None else plates,
        events=getattr(tr, "events", ()) or (),
        pelvis=pelvis,
        time=tr.time,
    )
    m = mass
    m_from = "`mass`"
    if m is None and (tr.subject.get("mass") is not None or proc.get("bodymass") is not None):
        m = tr.subject.get("mass", proc.get("bodymass"))
        m_from = f"the file's Bodymass ({src_name})"
        if m is not None and not (np.isfinite(m) and m > 0):
            m = None
        if m is not None:
            check_mass(m, argname=m_from)
    if m is None and need_mass:
        m = plate_mass
        if m is None:
            raise NoBodyMassError(
                f"{src_name}: no body mass given and none in the file, and it "
                "cannot be estimated (needs two successive, overlapping force plate "
                "contacts); pass `mass` (CLI: --mass KG)"
            )
        estimated.append("mass")
    elif m is not None and plate_mass is not None and "mass" not in estimated:
        if abs(m - plate_mass) > 0.1 * plate_mass:
            warnings.warn(
                f"body mass {float(m):.1f} kg from {m_from} differs by "
                f"{100.0 * (m - plate_mass) / plate_mass:+.0f} % from the "
                f"{plate_mass:.1f} kg that the force plates weigh during stance; check the "
                "mass (joint moments are divided by it) or the plates' zero offsets",
                AhbmWarning,
                stacklevel=2,
            )
    if m is None:
        m = float("nan")  # kinematics only: no mass needed
    h = height if height is not None else tr.subject.get("height")
    if h is None or not np.isfinite(h) or h <= 0:
        h = 0.5 * (ll["Left"] + ll["Right"]) / 0.52
        estimated.append("height")
    iad = inter_asis_distance
    if iad is None:
        iad = _file_length(proc.get("interasisdistance"))
        if iad is not None:
            from_file[("inter-ASIS distance", None)] = _file_key(proc, "interasisdistance")
    if iad is None:
        iad = _median_dist(mk["LASI"], mk["RASI"])
    if iad <= 0 or not np.isfinite(iad):
        raise DataError("the ASIS markers coincide or are never both visible")
    implausible = []

    def check(value, argname, name, side, lo, hi):
        key = from_file.get((name, side))
        if key is None or lo <= value <= hi:
            _check_range(value, argname, "m", lo, hi)
            return
        # the vendor's model ran with this value: use it as stored, loudly
        text = (
            f"the file's {key} = {1000.0 * value:g} mm is outside the plausible range "
            f"{lo:g}-{hi:g} m; used as stored (the file's own model outputs were computed "
            f"with it), pass `{argname.split(' ')[0]}` to override"
        )
        implausible.append(text)
        warnings.warn(f"{src_name}: {text}", AhbmWarning, stacklevel=3)

    check(iad, "inter_asis_distance", "inter-ASIS distance", None, 0.1, 0.5)
    for side, _ in SIDES:
        check(ll[side], f"leg_length ({side})", "leg length", side, 0.2, 1.5)
        check(kw[side], f"knee_width ({side})", "knee width", side, 0.03, 0.3)
        check(aw[side], f"ankle_width ({side})", "ankle width", side, 0.02, 0.25)
    _check_range(h, "height", "m", 0.4, 2.8)
    if warn and [e for e in estimated if e != "height"]:  # height is informational
        warnings.warn(
            f"subject parameters estimated (not given): {', '.join(estimated)} -- "
            f"{mass_text(m)}, leg lengths {ll['Left']:.3f}/{ll['Right']:.3f} m, knee widths "
            f"{kw['Left']:.3f}/{kw['Right']:.3f} m, ankle widths {aw['Left']:.3f}/"
            f"{aw['Right']:.3f} m; pass them for accurate joint centres and kinetics",
            AhbmWarning,
            stacklevel=2,
        )
    return SubjectParameters(
        float(m),
        float(h),
        ll,
        kw,
        aw,
        float(iad),
        float(marker_radius),
        tt,
        estimated,
        thigh_rotation=thr,
        shank_rotation=shr,
        asis_trochanter_distance=atd,
        static_plantarflexion=static_pf,
        static_rotation=static_rot,
        foot_offsets_from="file" if offsets_from_file else "none",
        implausible=implausible,
    )


#: Plausible ranges of the subject's measurements (SI), for the unit checks.
_MASS_RANGE = (5.0, 400.0)


def check_mass(mass, argname: str = "mass") -> float:
    """A body mass in kg, checked: positive, finite and between 5 and 400 kg.

    Raises
    ------
    DataError
        Naming `argname`; a value above 400 is reported as probably grams.

    Examples
    --------
    >>> check_mass(70.0)
    70.0
    """
    m = as_positive_float(mass, argname, unit="kg")
    lo, hi = _MASS_RANGE
    if m > hi:
        raise DataError(
            f"{argname} = {m:g} kg is not a body mass (above {hi:g} kg); give it in kg "
            f"({m / 1000.0:g} if that was grams)"
        )
    if m < lo:
        raise DataError(f"{argname} = {m:g} kg is not a plausible body mass (below {lo:g} kg)")
    return m


def _check_range(value, argname: str, unit: str, lo: float, hi: float) -> None:
    """DataError naming `argname` when `value` (m) is outside [lo, hi]; mm and cm are named."""
    if lo <= value <= hi:
        return
    hint = ""
    if value > hi:
        for scale, name in ((1000.0, "millimetres"), (100.0, "centimetres")):
            if lo <= value / scale <= hi:
                hint = f"; it looks like {name}: give {value / scale:g} {unit}"
                break
    raise DataError(
        f"`{argname}` = {value:g} {unit} is outside the plausible range {lo:g}-{hi:g} {unit}{hint}"
    )
