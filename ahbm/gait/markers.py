"""Stage 1 of the gait pipeline: the trial's markers, by canonical name, gap-filled and filtered.

:func:`gait_markers` maps the trial's labels to the Plug-in Gait names
(:data:`~ahbm.gait.markersets.MARKER_SETS`), rebuilds cluster-calibrated
landmarks from a static trial, rotates the lab frame so that the vertical is
+Z, fills short gaps and low-pass filters every marker.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ahbm.analysis.filters import butter_filtfilt
from ahbm.analysis.gaps import fill_gaps
from ahbm.errors import AhbmWarning, DataError
from ahbm.gait.markersets import (
    ALIASES,
    MARKER_SET_TITLES,
    MARKER_SETS,
    OPTIONAL_MARKERS,
    PLUG_IN_GAIT_MARKERS,
    STATIC_ALIASES,
    STATIC_MARKERS,
    detect_marker_set,
    marker_set_requirements,
)
from ahbm.gait.settings import GaitSettings
from ahbm.io.opensim_table import OpenSimTable
from ahbm.io.readers import SUPPORTED_SUFFIXES, read_trial
from ahbm.io.trial import ForcePlate, Trial, check_trial
from ahbm.kinematics.markers import fit_segment_pose, static_local_markers
from ahbm.opensim.storage import read_mot, table_to_grf
from ahbm.types import ResultRepr

__all__ = [
    "GaitMarkers",
    "gait_markers",
    "load_gait_trial",
    "plates_from_grf",
    "resolve_marker_set",
    "collect_markers",
    "plate_baselines",
]


@dataclass(frozen=True, repr=False)
class GaitMarkers(ResultRepr):
    """Output of :func:`gait_markers`: the canonical markers of a trial (Z-up lab frame, m).

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        Frame times, s.
    rate : float
        Frame rate, Hz.
    names : tuple of str
        Canonical (Plug-in Gait) marker names, the columns of the arrays.
    filled : ndarray, shape (n_frames, n_markers, 3)
        Gap-filled, unfiltered trajectories (NaN in gaps at the ends).
    smooth : ndarray, shape (n_frames, n_markers, 3)
        `filled` low-pass filtered (``settings.cutoff``).
    up : ndarray, shape (3,)
        The trial's vertical axis, in the file's lab frame.
    rotation : ndarray, shape (3, 3)
        ``Q`` with ``x_zup = Q @ x_file``.
    plates : tuple of ForcePlate
        Force plates in the Z-up frame (from the trial or the GRF table).
    gaps : tuple of GapFill
        What the gap filler did.
    mapping : dict
        Canonical name -> trial label(s) used.
    source : str
        The trial's source (for messages).
    plate_offsets : tuple of dict
        Per plate, the unloaded offset removed from its signals
        (:func:`plate_baselines`): ``{"force": (3,) N, "moment": (3,) N·m,
        "samples": int}`` (zeros and 0 samples when the plate has no
        unloaded stretch to measure it on).
    """

    time: np.ndarray
    rate: float
    names: tuple
    filled: np.ndarray
    smooth: np.ndarray
    up: np.ndarray
    rotation: np.ndarray
    plates: tuple
    gaps: tuple
    mapping: dict
    source: str = "trial"
    plate_offsets: tuple = ()

    def as_dict(self, *, filtered: bool = True) -> dict:
        """``{name: (n_frames, 3)}`` of the filtered (default) or filled trajectories."""
        arr = self.smooth if filtered else self.filled
        return {n: arr[:, i] for i, n in enumerate(self.names)}


def gait_markers(
    trial, *, settings: GaitSettings | None = None, static=None, grf=None
) -> GaitMarkers:
    """Canonical markers of a walking trial, gap-filled, filtered, in a Z-up lab frame.

    Parameters
    ----------
    trial : Trial or path
        The walking trial (C3D or TRC file, or a Trial with markers in m).
    settings : GaitSettings, optional
        Uses ``marker_set``, ``marker_map``, ``up``, ``max_gap`` and ``cutoff``.
    static : Trial or path, optional
        Static trial, used to rebuild cluster-calibrated landmarks.
    grf : path or OpenSimTable, optional
        Ground reactions from an OpenSim ``.mot``/``.sto`` table, used as the
        force plates instead of the trial's own.

    Returns
    -------
    GaitMarkers

    Raises
    ------
    DataError
        Missing markers (listed, with the mapping option), marker units other
        than m, fewer than 10 frames, a gap longer than ``max_gap``.

    Examples
    --------
    >>> from ahbm.gait import synthetic_walking_trial
    >>> trial, _ = synthetic_walking_trial(duration=1.0)
    >>> mk = gait_markers(trial)
    >>> mk.smooth.shape, mk.names[:3]
    ((100, 15, 3), ('LASI', 'RASI', 'SACR'))
    """
    settings = GaitSettings() if settings is None else settings
    tr = load_gait_trial(trial, "trial")
    st = load_gait_trial(static, "static") if static is not None else None
    src = tr.source or "trial"
    if tr.point_rate <= 0 or tr.n_frames < 10:
        raise DataError(f"{src}: needs a point rate and at least 10 frames")
    if str(tr.point_units).lower() != "m":
        raise DataError(
            f"{src}: marker units are {tr.point_units!r}; read the file with "
            "units='m' (the default of read_c3d/read_trc)"
        )
    mapping, clusters = resolve_marker_set(settings.marker_set, settings.marker_map)
    raw = collect_markers(
        tr, mapping, clusters, st, PLUG_IN_GAIT_MARKERS, OPTIONAL_MARKERS, src,
        marker_set=settings.marker_set,
    )  # fmt: skip
    names = tuple(raw)
    pts = np.stack([raw[n] for n in names], axis=1)
    plates = list(tr.force_plates) if grf is None else plates_from_grf(grf, time=tr.time)
    up = _detect_up(raw) if isinstance(settings.up, str) else np.asarray(settings.up, float)
    pts, plates, Q = rotate_to_z_up(pts, plates, up)
    plates, offsets = plate_baselines(plates, threshold=settings.threshold)
    for k, o in enumerate(offsets):
        if abs(o["force"][2]) > 10.0:
            warnings.warn(
                f"{src}: force plate {k} reads {o['force'][2]:.1f} N with nothing on it "
                f"(median of {o['samples']} unloaded samples); that offset is removed from its "
                "force and moment before the contact threshold and the kinetics",
                AhbmWarning,
                stacklevel=2,
            )
    rate = float(tr.point_rate)
    filled, report = fill_gaps(
        pts,
        max_gap=int(settings.max_gap),
        method="spline",
        rate=rate,
        labels=list(names),
        on_long_gap="raise",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        smooth = butter_filtfilt(filled, rate=rate, cutoff=settings.cutoff, nan_policy="segments")
    return GaitMarkers(
        time=np.asarray(tr.time, dtype=float),
        rate=rate,
        names=names,
        filled=filled,
        smooth=smooth,
        up=np.asarray(up, dtype=float),
        rotation=Q,
        plates=tuple(plates),
        gaps=tuple(report),
        mapping=mapping,
        source=src,
        plate_offsets=tuple(offsets),
    )


def plate_baselines(plates, *, threshold: float = 20.0, band: float = 10.0):
    """Remove each force plate's unloaded offset (zero drift) from its signals.

    Parameters
    ----------
    plates : sequence of ForcePlate
        Plates in a Z-up lab frame (``moment`` about ``origin``, lab axes).
    threshold : float
        Contact threshold, N: the centre of pressure and free moment are
        recomputed from the corrected signals where ``|Fz|`` exceeds it (NaN
        and 0 elsewhere).
    band : float
        N: samples whose vertical force lies within `band` of the plate's 5th
        percentile form its unloaded stretch.

    Returns
    -------
    plates : list of ForcePlate
        Corrected copies (unchanged when no offset could be measured).
    offsets : list of dict
        ``{"force": (3,), "moment": (3,), "samples": int}`` per plate: the
        median of force and moment over the unloaded stretch (used only if
        that stretch holds at least 5 % of the samples and its vertical force
        is below 150 N; a plate loaded all along keeps its signals).

    Notes
    -----
    A plate whose zero has drifted by 20-45 N keeps that force on every
    sample: against a 20 N threshold it is "loaded" all the time, the centre
    of pressure wanders over the plate and the mass estimate is off. The
    offset is measured where the plate is evidently unloaded (the flat
    stretch at its lowest force) and subtracted from force and moment.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io.trial import ForcePlate
    >>> n = 200; f = np.zeros((n, 3)); f[:, 2] = 30.0; f[80:120, 2] += 700.0
    >>> fp = ForcePlate(f, np.zeros((n, 3)), np.full((n, 3), np.nan), np.zeros((n, 3)),
    ...                 np.zeros((4, 3)), np.zeros(3), rate=100.0)
    >>> out, off = plate_baselines([fp])
    >>> off[0]["force"].tolist(), float(out[0].force[100, 2])
    ([0.0, 0.0, 30.0], 700.0)
    """
    out, offsets = [], []
    for plate in plates:
        F = np.asarray(plate.force, dtype=float)
        M = np.asarray(plate.moment, dtype=float)
        fz = F[:, 2]
        ok = np.isfinite(F).all(axis=1) & np.isfinite(M).all(axis=1)
        zero = {"force": np.zeros(3), "moment": np.zeros(3), "samples": 0}
        if ok.sum() < 10:
            out.append(plate)
            offsets.append(zero)
            continue
        low = float(np.percentile(fz[ok], 5))
        quiet = ok & (np.abs(fz - low) <= band)
        if quiet.sum() < 0.05 * ok.sum() or abs(low) > 150.0:
            out.append(plate)
            offsets.append(zero)
            continue
        oF = np.median(F[quiet], axis=0)
        oM = np.median(M[quiet], axis=0)
        offsets.append({"force": oF, "moment": oM, "samples": int(quiet.sum())})
        if not np.any(np.abs(oF) > 1e-9) and not np.any(np.abs(oM) > 1e-9):
            out.append(plate)
            continue
        F2, M2 = F - oF, M - oM
        origin = np.asarray(plate.origin, dtype=float)
        n = M2 + np.cross(origin, F2)  # about the lab origin
        corners = np.asarray(plate.corners, dtype=float)
        h = float(np.mean(corners[:, 2])) if np.isfinite(corners).all() else float(origin[2])
        loaded = np.abs(F2[:, 2]) > threshold
        cop = np.full_like(F2, np.nan)
        free = np.zeros_like(F2)
        with np.errstate(invalid="ignore", divide="ignore"):
            cx = (h * F2[:, 0] - n[:, 1]) / F2[:, 2]
            cy = (n[:, 0] + h * F2[:, 1]) / F2[:, 2]
            tz = n[:, 2] - (cx * F2[:, 1] - cy * F2[:, 0])
        cop[loaded] = np.stack([cx, cy, np.full_like(cx, h)], axis=1)[loaded]
        free[loaded, 2] = tz[loaded]
        out.append(replace(plate, force=F2, moment=M2, cop=cop, free_moment=free))
    return out, offsets


def static_markers(static, settings: GaitSettings, up) -> dict:
    """Canonical markers of a static trial (unfiltered) in the Z-up frame of `up`.

    Besides the Plug-in Gait markers it collects the static-only ones (knee
    alignment devices ``?KAX``, ``?KD1``, ``?KD2``, medial markers ``?KNM``,
    ``?ANM`` and their aliases); a side's ``?KNE`` may be absent when its KAD
    is present.
    """
    mapping, _ = resolve_marker_set(settings.marker_set, settings.marker_map)
    # a knee alignment device may replace the lateral knee marker in a static trial
    required = tuple(n for n in PLUG_IN_GAIT_MARKERS if n[1:] != "KNE")
    optional = tuple(dict.fromkeys(("LKNE", "RKNE") + OPTIONAL_MARKERS + STATIC_MARKERS))
    mk = collect_markers(
        static, mapping, {}, None, required, optional, static.source or "static",
        aliases={**ALIASES, **STATIC_ALIASES}, marker_set=settings.marker_set,
    )  # fmt: skip
    for p in ("L", "R"):
        if p + "KNE" not in mk and not all(p + k in mk for k in ("KAX", "KD1", "KD2")):
            raise DataError(
                f"{static.source or 'static'}: required marker {p}KNE missing (nor a knee "
                f"alignment device {p}KAX, {p}KD1, {p}KD2 in its place). Trial markers: "
                f"{', '.join(static.point_labels)}"
            )
    pts, _, _ = rotate_to_z_up(np.stack([mk[n] for n in mk], 1), [], up)
    return {n: pts[:, i] for i, n in enumerate(mk)}


def load_gait_trial(trial_or_path, argname: str = "trial"):
    """The Trial itself, or the trial read from a .c3d/.trc path (DataError naming `argname`)."""
    if isinstance(trial_or_path, Trial):
        return check_trial(trial_or_path, name=argname)
    if isinstance(trial_or_path, str | os.PathLike):
        path = Path(trial_or_path)
        if not path.is_file():
            raise DataError(f"`{argname}`: file {str(path)!r} does not exist")
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise DataError(
                f"`{argname}`: cannot read {str(path)!r}; use a .c3d or .trc file or a Trial"
            )
        return read_trial(path)
    raise DataError(f"`{argname}` must be a Trial or a path, got {type(trial_or_path).__name__}")


def resolve_marker_set(marker_set, marker_map):
    """``(mapping, clusters)`` of a marker-set name or dict, updated by `marker_map`."""
    if isinstance(marker_set, str):
        if marker_set not in MARKER_SETS:
            raise DataError(
                f"Unknown `marker_set` {marker_set!r}; available: {', '.join(MARKER_SETS)} "
                "(or pass `marker_map`)"
            )
        base = MARKER_SETS[marker_set]
    elif isinstance(marker_set, Mapping):
        base = {"map": dict(marker_set.get("map", {})), "clusters": marker_set.get("clusters", {})}
    else:
        raise DataError("`marker_set` must be a name of MARKER_SETS or a dict")
    mapping = dict(base["map"])
    if marker_map is not None and not isinstance(marker_map, Mapping):
        raise DataError(
            f"Expected `marker_map` to be a dict {{canonical name: label}}, got "
            f"{type(marker_map).__name__}"
        )
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


def _label_prefixes(trial) -> list:
    """Label prefixes to try: none, the trial's SUBJECTS:LABEL_PREFIXES, and any ``Name:``."""
    prefixes = [""]
    subject = trial.subject if isinstance(trial.subject, dict) else {}
    for p in subject.get("label_prefixes", []) or []:
        if p and str(p) not in prefixes:
            prefixes.append(str(p))
    for label in trial.point_labels:
        if ":" in label:
            pre = label[: label.rindex(":") + 1]
            if pre not in prefixes:
                prefixes.append(pre)
    return prefixes


def collect_markers(
    trial, mapping, clusters, static, names, optional, source, *, aliases=None, marker_set=None
):
    """Canonical markers ``{name: (n_frames, 3)}`` of `trial`; DataError lists the missing ones.

    `names` are required, `optional` taken when present; a name in `clusters`
    missing from `trial` is rebuilt from its cluster using the `static` trial.
    SACR is the mid-PSIS point when only LPSI and RPSI are present. Labels may
    carry a subject prefix (``Name:LASI``, or the trial's
    ``SUBJECTS:LABEL_PREFIXES``); a canonical name that is not mapped and not
    found is also looked for under its `aliases` (default
    :data:`~ahbm.gait.markersets.ALIASES`: ``VSAC`` for SACR, ``LSHA`` for
    LTIB, ...).
    """
    aliases = ALIASES if aliases is None else aliases
    labels = list(trial.point_labels)
    prefixes = _label_prefixes(trial)
    out = {}
    for name in list(names) + list(optional):
        candidates = [mapping]
        if name not in mapping and name[1:] in aliases and name[0] in "LR":
            candidates += [{name: name[0] + a} for a in aliases[name[1:]]]
        elif name not in mapping and name in aliases:
            candidates += [{name: a} for a in aliases[name]]
        for cand in candidates:
            for pre in prefixes:
                arr = _get(trial, labels, cand, name, prefix=pre)
                if arr is not None:
                    out[name] = arr
                    break
            if name in out:
                break
    # calibrated anatomical landmarks from clusters and the static trial
    why = {}  # canonical name -> what the rebuild from its cluster lacks
    for name, cluster in clusters.items():
        if name in out or static is None:
            continue
        slabels = list(static.point_labels)
        st = _get(static, slabels, mapping, name)
        cl_dyn = [_get(trial, labels, {}, c) for c in cluster]
        cl_st = [_get(static, slabels, {}, c) for c in cluster]
        lacks = [f"{_shown(mapping.get(name, name))} in the static trial"] if st is None else []
        lacks += [
            f"{c} in the static trial" for c, a in zip(cluster, cl_st, strict=True) if a is None
        ]
        lacks += [f"{c} in this trial" for c, a in zip(cluster, cl_dyn, strict=True) if a is None]
        if lacks:
            why[name] = lacks
            continue
        out[name] = _rebuild(np.stack(cl_st, 1), st, np.stack(cl_dyn, 1))
    need = []
    if "SACR" not in out and not ("LPSI" in out and "RPSI" in out):
        need.append("SACR (or LPSI and RPSI)")
    need += [n for n in names if n != "SACR" and n not in out]
    if need:
        req = marker_set_requirements(marker_set)
        rebuilt = sorted(n for n in need if n in clusters)
        set_name = marker_set if isinstance(marker_set, str) else "custom"
        if static is None and rebuilt and len(rebuilt) == len(need):
            raise DataError(
                f"{source}: marker set {set_name!r} needs a static trial (`static=`, CLI "
                f"--static): this trial has no "
                f"{', '.join(_shown(mapping.get(n, n)) for n in rebuilt)}, so "
                f"{', '.join(rebuilt)} are rebuilt from their marker clusters "
                f"({'; '.join(f'{n}: ' + ', '.join(clusters[n]) for n in rebuilt)}) as placed "
                f"in a static standing trial that has them. It needs {req}"
            )
        shown = ", ".join(
            f"{n} (looked for {_shown(mapping.get(n.split()[0], n.split()[0]))}"
            + (f"; rebuilt from its cluster, which lacks {', '.join(why[n])}" if n in why else "")
            + ")"
            for n in need
        )
        hint = ""
        if clusters and static is None and rebuilt:
            hint = (
                f" The marker set rebuilds {', '.join(rebuilt)} from clusters: it needs a "
                "static trial (`static=`, CLI --static)."
            )
        lead = ""
        recognised = detect_marker_set(labels) if set_name == "plug_in_gait" else None
        if recognised is not None and recognised != "plug_in_gait":
            lead = (
                f"the trial's labels are those of the marker set {recognised!r} "
                f"({MARKER_SET_TITLES.get(recognised, recognised)}), not Plug-in Gait's: pass "
                f"marker_set={recognised!r} (CLI --marker-set {recognised})"
                + (" with its static trial (`static=`, CLI --static)" if
                   MARKER_SETS[recognised]["clusters"] else "")
                + ". With the Plug-in Gait set, "
            )  # fmt: skip
        raise DataError(
            f"{source}: {lead}required markers missing: {shown}.{hint} Trial markers: "
            f"{', '.join(labels)}. The marker set needs {req}. Pass "
            "`marker_map={'LASI': 'your label', ...}` (CLI: --map LASI=label) or `marker_set` "
            "to use another marker set"
        )
    if "SACR" not in out:
        out["SACR"] = 0.5 * (out["LPSI"] + out["RPSI"])
    return out


def _shown(target) -> str:
    """A mapped label (or labels averaged) for messages: 'L.Knee.Lat' or 'L.Toe.Lat+L.Toe.Med'."""
    return repr(target) if isinstance(target, str) else repr("+".join(target))


def _rebuild(cluster_static, landmark_static, cluster_dynamic):
    """Landmark trajectory from its cluster (static calibration, then rigid fit)."""
    ref = np.nanmean(cluster_static, axis=0)  # a technical frame: lab axes at the mean
    R0 = np.broadcast_to(np.eye(3), (cluster_static.shape[0], 3, 3))
    o0 = np.broadcast_to(ref.mean(axis=0), (cluster_static.shape[0], 3))
    local = static_local_markers(cluster_static, R0, o0)
    lm_local = np.nanmean(landmark_static, axis=0) - ref.mean(axis=0)
    pose = fit_segment_pose(cluster_dynamic, local, warn=False)
    return np.einsum("nij,j->ni", pose.R, lm_local) + pose.origin


def rotate_to_z_up(points, plates, up):
    """Rotate marker and plate data so that `up` becomes +Z (a lab frame change)."""
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


def plates_from_grf(grf, *, time):
    """Force plates (lab frame) from an OpenSim ground-reaction table.

    Parameters
    ----------
    grf : str, path or OpenSimTable
        An OpenSim ``.mot``/``.sto`` ground-reaction table (or its path).
    time : array_like, shape (n_frames,)
        Frame times of the trial, s: the plates start at ``time[0]`` and are
        resampled at the table's rate.

    Returns
    -------
    list of ForcePlate
    """
    time = np.asarray(time, dtype=float).ravel()
    if time.size < 1:
        raise DataError("`time` is empty; give the trial's frame times in s")
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
    if not isinstance(value, (str, os.PathLike)):
        raise DataError(f"Expected `{argname}` to be a path, got {type(value).__name__}")
    path = Path(value)
    if not path.is_file():
        raise DataError(f"`{argname}`: file {str(path)!r} does not exist")
    return path
