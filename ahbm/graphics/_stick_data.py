"""Data preparation of the stick-figure viewer: markers, segments, frames, forces (internal).

Everything here takes arrays or Trial-like objects and returns arrays; nothing
draws and nothing reads files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError

#: Marker pairs of a stick figure for the Plug-in-Gait marker set (full body,
#: with the common SACR / LPSI-RPSI and LWRI / LWRA-LWRB variants).
PLUG_IN_GAIT_SEGMENTS = tuple(
    [
        ("LFHD", "RFHD"), ("RFHD", "RBHD"), ("RBHD", "LBHD"), ("LBHD", "LFHD"),
        ("C7", "T10"), ("C7", "CLAV"), ("CLAV", "STRN"),
        ("LSHO", "CLAV"), ("RSHO", "CLAV"), ("LSHO", "C7"), ("RSHO", "C7"),
        ("LASI", "RASI"), ("LPSI", "RPSI"), ("LASI", "LPSI"), ("RASI", "RPSI"),
        ("LASI", "SACR"), ("RASI", "SACR"),
    ]
    + [
        (f"{s}{a}", f"{s}{b}")
        for s in "LR"
        for a, b in [
            ("SHO", "ELB"), ("ELB", "WRI"), ("ELB", "WRA"), ("ELB", "WRB"), ("WRA", "WRB"),
            ("WRA", "FIN"), ("WRB", "FIN"),
            ("ASI", "THI"), ("THI", "KNE"), ("KNE", "TIB"), ("TIB", "ANK"),
            ("ANK", "HEE"), ("HEE", "TOE"), ("ANK", "TOE"),
        ]
    ]
)  # fmt: skip


def plug_in_gait_segments(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Plug-in-Gait stick-figure segments whose two markers are both in `labels`.

    Parameters
    ----------
    labels : sequence of str
        Marker labels of a trial (e.g. ``trial.point_labels``).

    Returns
    -------
    list of (str, str)
        The pairs of :data:`PLUG_IN_GAIT_SEGMENTS` present, for ``stick_view(segments=...)``.

    Examples
    --------
    >>> plug_in_gait_segments(["LASI", "RASI", "LKNE", "LTHI"])
    [('LASI', 'RASI'), ('LASI', 'LTHI'), ('LTHI', 'LKNE')]
    """
    if isinstance(labels, (str, bytes, dict)) or not hasattr(labels, "__iter__"):
        raise DataError(f"Expected `labels` to be a list of marker labels, got {labels!r}")
    present = set(labels)
    return [(a, b) for a, b in PLUG_IN_GAIT_SEGMENTS if a in present and b in present]


_UNIT_SCALE = {"m": 1.0, "cm": 1e-2, "mm": 1e-3}
_AXES = "xyz"
_TRIAD_COLORS = ("red", "green", "blue")
_DEFAULT_RATE = 25.0  # playback rate of frames that come without a sample rate
_MAX_FPS = 60.0


def _is_trial(obj) -> bool:
    """A Trial-like object (points, labels, rate, units): graphics never import ahbm.io."""
    return all(hasattr(obj, a) for a in ("points", "point_labels", "point_rate", "point_units"))


def _check_no_inf(arr: np.ndarray, name: str) -> None:
    if np.isinf(arr).any():
        where = tuple(int(i) for i in np.argwhere(np.isinf(arr))[0])
        raise DataError(
            f"`{name}` contains infinite values (first at index {where}); "
            "use NaN for missing samples"
        )


def _as_markers(data, labels, rate):
    """Return (points (n_frames, n_points, 3) in m, labels, rate, time, trial)."""
    trial = None
    if _is_trial(data):
        trial = data
        pts = as_float_array(trial.points, "trial.points", allow_nan=True)
        if pts.ndim != 3 or pts.shape[-1] != 3:
            raise DataError(
                f"Expected `trial.points` to have shape (n_frames, n_points, 3), got {pts.shape}"
            )
        scale = _UNIT_SCALE.get(str(trial.point_units).strip().lower())
        if scale is None:
            raise DataError(
                f"Trial point units {trial.point_units!r} are not a length unit ahbm knows; "
                "convert the trial to metres first"
            )
        pts = pts * scale
        labels = list(trial.point_labels) if labels is None else list(labels)
        if rate is None and trial.point_rate > 0:
            rate = float(trial.point_rate)
    else:
        pts = as_float_array(data, "data", allow_nan=True)
        if pts.ndim == 2:
            pts = pts[None]
        if pts.ndim != 3 or pts.shape[-1] != 3:
            raise DataError(
                "Expected `data` (markers) to have shape (n_frames, n_points, 3) or "
                f"(n_points, 3), got {np.shape(data)}"
            )
        labels = [f"P{j + 1}" for j in range(pts.shape[1])] if labels is None else list(labels)
    _check_no_inf(pts, "markers")
    if len(labels) != pts.shape[1]:
        raise DataError(
            f"Expected `labels` to have {pts.shape[1]} entries (one per marker), got {len(labels)}"
        )
    if trial is not None and rate is not None and trial.point_rate > 0:
        time = np.asarray(trial.time, dtype=float)
    elif rate is not None:
        time = np.arange(pts.shape[0]) / rate
    else:
        time = np.arange(pts.shape[0], dtype=float)
    return pts, labels, rate, time, trial


def _segment_indices(segments, labels: list[str]) -> np.ndarray:
    """Marker index pairs (n_segments, 2) from label or index pairs."""
    pairs = []
    for k, seg in enumerate(segments):
        if isinstance(seg, str) or len(seg) != 2:
            raise DataError(
                f"`segments[{k}]` = {seg!r} is not a pair; give segments as "
                "(marker_a, marker_b) pairs of labels or indices"
            )
        pair = []
        for end in seg:
            if isinstance(end, str):
                if end not in labels:
                    raise DataError(
                        f"Marker {end!r} in `segments[{k}]` is not among the markers; "
                        f"available: {', '.join(labels)}"
                    )
                pair.append(labels.index(end))
            elif isinstance(end, (int, np.integer)) and -len(labels) <= end < len(labels):
                pair.append(int(end) % len(labels))
            else:
                raise DataError(
                    f"`segments[{k}]` end {end!r} is neither a marker label nor an index "
                    f"in [0, {len(labels)})"
                )
        pairs.append(pair)
    return np.asarray(pairs, dtype=int).reshape(-1, 2)


def _as_body_frames(body_frames, n_frames: int) -> tuple[np.ndarray, list[str]]:
    """Transforms (n_frames, n_triads, 4, 4) and their names."""
    if isinstance(body_frames, Mapping):
        names = [str(k) for k in body_frames]
        arrs = []
        for name in names:
            a = as_float_array(body_frames[name], f"body_frames[{name!r}]", allow_nan=True)
            if a.shape == (4, 4):
                a = np.broadcast_to(a, (n_frames, 4, 4))
            if a.shape != (n_frames, 4, 4):
                raise DataError(
                    f"Expected `body_frames[{name!r}]` to have shape ({n_frames}, 4, 4) or "
                    f"(4, 4), got {a.shape}"
                )
            arrs.append(a)
        T = np.stack(arrs, axis=1) if arrs else np.zeros((n_frames, 0, 4, 4))
        return T, names
    T = as_float_array(body_frames, "body_frames", allow_nan=True)
    if T.ndim == 3 and T.shape[1:] == (4, 4):
        T = np.broadcast_to(T, (n_frames, *T.shape))
    if T.ndim != 4 or T.shape[0] != n_frames or T.shape[2:] != (4, 4):
        raise DataError(
            f"Expected `body_frames` to have shape ({n_frames}, n_frames_drawn, 4, 4) "
            f"or (n_frames_drawn, 4, 4), got {T.shape}"
        )
    return T, [f"frame{k + 1}" for k in range(T.shape[1])]


def _triad_segments(T: np.ndarray, length: float) -> np.ndarray:
    """Segments (n_frames, n_triads * 3, 2, 3) of RGB axis triads of transforms T."""
    origin = T[..., :3, 3]  # (n, m, 3)
    axes = np.swapaxes(T[..., :3, :3], -1, -2)  # rows are the x, y, z axes in the world
    tips = origin[..., None, :] + length * axes  # (n, m, 3, 3)
    start = np.broadcast_to(origin[..., None, :], tips.shape)
    seg = np.stack([start, tips], axis=-2)  # (n, m, 3, 2, 3)
    return seg.reshape(T.shape[0], -1, 2, 3)


def _model_transforms(model, q, n_frames_hint: int | None) -> np.ndarray:
    """World transforms (n_frames, n_bodies, 4, 4) of `model` at coordinates `q`."""
    from ahbm.kinematics.forward import forward_kinematics

    q = as_float_array(q, "q")
    if q.ndim == 1:
        q = q[None]
    if q.ndim != 2:
        raise DataError(f"Expected `q` to have shape (n_frames, nq) or (nq,), got {q.shape}")
    nq = int(model.nq)
    if q.shape[1] != nq:
        raise DataError(f"Expected `q` to have shape (n_frames, {nq}), got {q.shape}")
    if n_frames_hint is not None and q.shape[0] not in (1, n_frames_hint):
        raise DataError(
            f"`q` has {q.shape[0]} frames but the markers have {n_frames_hint}; "
            "give one row of q per marker frame"
        )
    T = forward_kinematics(model, q).transforms
    T = np.asarray(T, dtype=float)
    if n_frames_hint is not None and T.shape[0] == 1 and n_frames_hint > 1:
        T = np.broadcast_to(T, (n_frames_hint, *T.shape[1:]))
    return T


def _force_segments(
    trial, n_frames: int, rate: float, force_scale: float, reaction: bool, vertical: int
):
    """Force vectors (n_frames, n_plates, 2, 3) at the COP sampled at point frames."""
    out = []
    outlines = []
    for k, plate in enumerate(trial.force_plates):
        f = as_float_array(plate.force, f"trial.force_plates[{k}].force", allow_nan=True)
        c = as_float_array(plate.cop, f"trial.force_plates[{k}].cop", allow_nan=True)
        if f.ndim != 2 or f.shape[1] != 3 or c.shape != f.shape:
            raise DataError(
                f"Force plate {k + 1}: expected force and cop of shape (n_samples, 3), got "
                f"{f.shape} and {c.shape}"
            )
        if not plate.rate or plate.rate <= 0:
            raise DataError(f"Force plate {k + 1} has no sample rate; set ForcePlate.rate")
        idx = np.round(np.arange(n_frames) * (plate.rate / rate)).astype(int)
        valid = idx < f.shape[0]
        idx = np.minimum(idx, max(f.shape[0] - 1, 0))
        if f.shape[0] == 0:
            seg = np.full((n_frames, 2, 3), np.nan)
        else:
            sign = 1.0
            if reaction:
                # The floor can only push: the vertical ground reaction is >= 0.
                contact = np.isfinite(c).all(axis=1) & np.isfinite(f[:, vertical])
                vert = f[contact, vertical] if contact.any() else f[:, vertical]
                vert = vert[np.isfinite(vert)]
                if vert.size and np.median(vert) < 0:
                    sign = -1.0
            start = c[idx].copy()
            tip = start + sign * force_scale * f[idx]
            seg = np.stack([start, tip], axis=1)
            seg[~valid] = np.nan
        out.append(seg)
        corners = np.asarray(plate.corners, dtype=float)
        if corners.shape == (4, 3) and np.isfinite(corners).all():
            outlines.append(corners)
    forces = np.stack(out, axis=1) if out else np.zeros((n_frames, 0, 2, 3))
    return forces, outlines
