"""Writing a C3D file (Intel, floating point), by stage: checks, parameters, header, data."""

from __future__ import annotations

import math
import re

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import as_finite_float, output_path
from ahbm.errors import DataError
from ahbm.io.c3d._common import _BLOCK, C3D_LENGTH_UNITS, _unit_factor, _warn
from ahbm.io.trial import Trial, check_trial

__all__ = ["write_c3d"]


def _param_record(name: str, gid: int, ptype: int, dims, data: bytes, desc: str) -> bytes:
    nb = name.encode("ascii")
    db = desc.encode("latin-1", errors="replace")[:255]
    body = bytes([ptype & 0xFF, len(dims)]) + bytes(dims) + data + bytes([len(db)]) + db
    off = 2 + len(body)
    return bytes([len(nb), gid & 0xFF]) + nb + np.int16(off).tobytes() + body


def _group_record(name: str, gid: int, desc: str) -> bytes:
    nb = name.encode("ascii")
    db = desc.encode("latin-1", errors="replace")[:255]
    body = bytes([len(db)]) + db
    off = 2 + len(body)
    return bytes([len(nb), (-gid) & 0xFF]) + nb + np.int16(off).tobytes() + body


def _char_param(values: list[str]) -> tuple[list[int], bytes]:
    enc = [v.encode("latin-1", errors="replace") for v in values]
    width = max([len(e) for e in enc] + [1])
    if width > 255:
        raise DataError(
            f"label {values[int(np.argmax([len(e) for e in enc]))]!r} is longer "
            "than 255 characters; shorten it to write a C3D file"
        )
    data = b"".join(e.ljust(width) for e in enc)
    return [width, len(values)], data


# parameters that write_c3d derives from the Trial fields
_MANAGED = {
    "POINT": re.compile(
        r"(USED|SCALE|RATE|DATA_START|FRAMES|LONG_FRAMES|UNITS|"
        r"(LABELS|DESCRIPTIONS|ANGLES|MOMENTS|POWERS|FORCES|SCALARS)\d*|"
        r"(ANGLE|MOMENT|POWER|FORCE|SCALAR)_UNITS)"
    ),
    "ANALOG": re.compile(
        r"(USED|RATE|GEN_SCALE|FORMAT|BITS|"
        r"(SCALE|OFFSET|LABELS|DESCRIPTIONS|UNITS)\d*)"
    ),
    "TRIAL": re.compile(r"(ACTUAL_START_FIELD|ACTUAL_END_FIELD)"),
    "EVENT": re.compile(r".*"),
}
_NAME_OK = re.compile(r"[!-~]{1,127}")


def _encode_value(value, ptype, dims_hint):
    """(type, dims, bytes) for a parameter value, or None if it cannot be stored."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            return None
        enc = [v.encode("latin-1", errors="replace") for v in value]
        width = max([len(e) for e in enc] + [0])
        if width > 255 or len(enc) > 255:
            return None
        data = b"".join(e.ljust(width) for e in enc)
        if dims_hint is not None and len(dims_hint) == 1 and len(enc) == 1:
            return -1, [width], data
        return -1, [width, len(enc)], data
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.ndim > 7 or any(d > 255 for d in arr.shape):
        return None
    flat = arr.reshape(-1, order="F")
    dims = list(arr.shape)
    if dims_hint is not None and len(dims_hint) == 0 and flat.size == 1:
        dims = []
    is_int = arr.dtype.kind in "biu" or (
        ptype in (1, 2) and np.all(np.isfinite(flat)) and np.all(flat == np.round(flat))
    )
    if is_int and ptype == 1 and flat.size and flat.min() >= -128 and flat.max() <= 255:
        return 1, dims, flat.astype(np.int64).astype(np.uint8).tobytes()
    if is_int and (not flat.size or (flat.min() >= -32768 and flat.max() <= 65535)):
        if ptype != 4:
            return 2, dims, (flat.astype(np.int64) & 0xFFFF).astype("<u2").tobytes()
    with np.errstate(invalid="ignore"):
        if (np.isfinite(flat) & ~(np.abs(flat) <= np.finfo(np.float32).max)).any():
            return None  # a float32 would hold inf: skipped (and named) rather than corrupted
    return 4, dims, flat.astype("<f4").tobytes()


def _copy_parameters(params, recs, gid):
    """Append the records of `params` that write_c3d does not derive itself."""
    if not isinstance(params, dict):
        return
    descriptions = params.get("__descriptions__", {})
    types = params.get("__types__", {})
    dimensions = params.get("__dimensions__", {})
    descriptions = descriptions if isinstance(descriptions, dict) else {}
    types = types if isinstance(types, dict) else {}
    dimensions = dimensions if isinstance(dimensions, dict) else {}
    skipped = []
    for group, entries in params.items():
        if not isinstance(group, str) or group.startswith("__") or not isinstance(entries, dict):
            continue
        if not _NAME_OK.fullmatch(group):
            skipped.append(group)
            continue
        managed = _MANAGED.get(group)
        if group not in gid:
            if len(gid) >= 127:
                skipped.append(group)
                continue
            gid[group] = len(gid) + 1
            desc = descriptions.get(group, "")
            recs.append(_group_record(group, gid[group], desc if isinstance(desc, str) else ""))
        for name, value in entries.items():
            key = f"{group}:{name}"
            if not isinstance(name, str) or (managed is not None and managed.fullmatch(name)):
                continue
            if not _NAME_OK.fullmatch(name):
                skipped.append(key)
                continue
            enc = _encode_value(value, types.get(key), dimensions.get(key))
            if enc is None:
                skipped.append(key)
                continue
            desc = descriptions.get(key, "")
            rec = _param_record(name, gid[group], *enc, desc if isinstance(desc, str) else "")
            if len(rec) > 32000:
                skipped.append(key)
                continue
            recs.append(rec)
    if skipped:
        _warn(
            f"parameters that cannot be stored in a C3D file were not written: "
            f"{', '.join(map(str, skipped[:10]))}{' ...' if len(skipped) > 10 else ''}"
        )


def write_c3d(trial: Trial, path, *, units: str | None = None, scale: float | None = None) -> None:
    """Write a trial to an Intel floating-point C3D file.

    Parameters
    ----------
    trial : Trial
        Points ``(n_frames, n_points, 3)`` in ``trial.point_units``, analogs
        ``(n_frames * k, n_channels)`` in physical units (``analog_rate`` must
        be ``k * point_rate`` for an integer ``k``), labels, events.
    path : str or path-like
        Target file. Written to a temporary file in the same folder first and
        renamed into place, so an existing file is never left half-written.
    units : {"mm", "m", "cm", ...} or None, optional
        Length unit of the file. None (default) uses the unit of the file the
        trial was read from (so that copied FORCE_PLATFORM corners and moments
        stay consistent), else ``trial.point_units``.
    scale : float, optional
        Magnitude of POINT:SCALE (the residual resolution, in `units`);
        default: the source file's value, else 0.01.

    Raises
    ------
    DataError
        If `trial` is not a consistent Trial (:func:`ahbm.io.trial.check_trial`;
        e.g. swapped arguments), `path` is not a file path (None, a folder),
        or a label cannot be stored; or a value does not fit the file's
        float32 numbers (magnitude above 3.4e38 after the conversion to
        `units`: a point, naming it, its frame and coordinate; an analog
        sample, naming the channel and frame; POINT:SCALE or a rate). Such a
        value would be written as inf, or, overflowing in the unit
        conversion, as a missing sample. Nothing is written then.

    Notes
    -----
    Invalid samples (NaN in ``points`` or False in ``point_mask``) are written
    as zeros with a residual word of -1. More than 65535 frames are written
    with the header frame fields saturated and TRIAL:ACTUAL_START_FIELD /
    ACTUAL_END_FIELD plus POINT:LONG_FRAMES giving the true count. Analogs are
    written with SCALE = 1, OFFSET = 0 and GEN_SCALE = 1. The parameters of
    ``trial.parameters`` that these fields do not define (FORCE_PLATFORM,
    SUBJECTS, PROCESSING, extra POINT/ANALOG entries, ...) are copied with
    their original types, so a C3D file read and written again keeps its
    force plates and metadata; entries that cannot be stored (including
    floating-point values beyond the float32 range) are skipped with an
    AhbmWarning. The residual word follows the C3D specification: a float
    holding ``camera_mask * 256 + round(residual / scale)``, -1 when invalid.
    Points listed in ``trial.point_kinds`` (model outputs) are written as
    held, in their own unit, never scaled as lengths, and declared in
    POINT:ANGLES, MOMENTS, POWERS, FORCES, SCALARS with POINT:ANGLE_UNITS,
    ... (one unit per kind, spaces removed: "N m" is written "Nm"); these
    entries of ``trial.parameters`` are not copied.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io import Trial, write_c3d, read_c3d
    >>> t = Trial(points=np.zeros((10, 2, 3)), point_labels=["A", "B"], point_rate=100.0)
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.c3d")
    >>> write_c3d(t, path)
    >>> read_c3d(path).points.shape
    (10, 2, 3)
    """
    check_trial(trial)
    path = output_path(path)
    pts, an, spf, labels, alabels = _checked_arrays(trial)
    n_frames, n_points = pts.shape[:2]
    n_channels = an.shape[1] if an.shape[0] else 0
    kind_cols = _model_output_columns(trial, labels)
    raw_pts = pts
    pts, units, factor, scale = _output_units(trial, pts, units, scale)
    if kind_cols and pts is not raw_pts:
        pts[:, kind_cols] = raw_pts[:, kind_cols]  # in their own units, not lengths
    _check_float32_points(trial, raw_pts, pts, labels, kind_cols, units, path)
    _check_float32_analogs(an, alabels, spf, path)
    rates = {"trial.point_rate": trial.point_rate, "trial.analog_rate": trial.analog_rate}
    _check_float32_scalars(path, scale=scale, **rates)
    valid, resid_word = _residual_words(trial, pts, factor, scale)
    n_first = int(trial.first_frame) if trial.first_frame >= 1 else 1
    n_last = n_first + n_frames - 1
    params = _ParameterWriter()
    _point_parameters(params, trial, labels, units, scale, n_frames)
    _model_output_parameters(params, trial, labels)
    _analog_parameters(params, trial, alabels, n_channels)
    _trial_and_event_parameters(params, trial, n_first, n_last)
    _copy_parameters(trial.parameters, params.recs, params.gid)
    psec, data_block = _parameter_section(params)
    header = _header_block(
        n_points, n_channels, spf, n_first, n_last, data_block, scale, float(trial.point_rate)
    )
    payload = _data_section(pts, valid, resid_word, an, spf)
    pad = (-len(payload)) % _BLOCK
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(header)
        f.write(psec)
        f.write(payload)
        f.write(b"\x00" * pad)


def _checked_arrays(trial: Trial):
    """Points, analogs, analog samples per frame and labels, checked for a C3D file."""
    pts = np.asarray(trial.points, dtype=np.float64)
    if pts.ndim != 3 or pts.shape[2] != 3:
        raise DataError(
            f"Expected `trial.points` to have shape (n_frames, n_points, 3), got {pts.shape}"
        )
    n_frames, n_points = pts.shape[:2]
    an = np.asarray(trial.analogs, dtype=np.float64)
    if an.ndim != 2:
        raise DataError(
            f"Expected `trial.analogs` to have shape (n_samples, n_channels), got {an.shape}"
        )
    n_channels = an.shape[1] if an.shape[0] else 0
    if not (math.isfinite(trial.point_rate) and trial.point_rate > 0):
        raise DataError(f"`trial.point_rate` must be positive, got {trial.point_rate}")
    spf = _samples_per_frame(trial, an, n_frames) if n_channels else 0
    if n_frames and n_channels * spf > 65535:
        raise DataError("too many analog values per frame for a C3D file (max 65535)")
    if n_points > 65535:
        raise DataError("a C3D file holds at most 65535 points")
    labels = list(trial.point_labels) or [f"POINT{i + 1}" for i in range(n_points)]
    if len(labels) != n_points:
        raise DataError(f"`trial.point_labels` has {len(labels)} labels for {n_points} points")
    alabels = list(trial.analog_labels) or [f"CHANNEL{i + 1}" for i in range(n_channels)]
    if len(alabels) != n_channels:
        raise DataError(
            f"`trial.analog_labels` has {len(alabels)} labels for {n_channels} channels"
        )
    return pts, an, spf, labels, alabels


def _samples_per_frame(trial: Trial, an, n_frames: int) -> int:
    """Analog samples per point frame (analog rate / point rate, an integer)."""
    ratio = trial.analog_rate / trial.point_rate
    spf = int(round(ratio))
    if spf < 1 or abs(ratio - spf) > 1e-6:
        raise DataError(
            f"`trial.analog_rate` ({trial.analog_rate}) must be an integer multiple of "
            f"`trial.point_rate` ({trial.point_rate}) to write a C3D file"
        )
    if an.shape[0] != n_frames * spf:
        raise DataError(
            f"Expected {n_frames * spf} analog samples ({n_frames} frames x {spf}), got "
            f"{an.shape[0]}"
        )
    return spf


#: Largest magnitude a C3D float (IEEE float32) holds; beyond it the file would hold inf.
_F32_MAX = float(np.finfo(np.float32).max)


def _check_float32_points(trial: Trial, raw, pts, labels, kind_cols, units, path) -> None:
    """DataError naming the first point and frame whose value does not fit a float32.

    `raw` holds the trial's values, `pts` the values in the file's unit (a finite
    1e308 m is inf in mm). Samples that are missing (NaN, or False in
    ``trial.point_mask``) are written as zeros and are not checked.
    """
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(raw) & ~(np.abs(pts) <= _F32_MAX)
    if trial.point_mask is not None and np.shape(trial.point_mask) == bad.shape[:2]:
        bad &= np.asarray(trial.point_mask, dtype=bool)[..., None]
    if not bad.any():
        return
    k, j, c = (int(v) for v in np.argwhere(bad)[0])
    n_bad = int(bad.any(axis=2).sum())
    is_length = j not in kind_cols
    unit_in = trial.point_units if is_length else str(trial.point_kinds[labels[j]][1])
    value = f"{raw[k, j, c]:.4g} {unit_in}".rstrip()
    if is_length and units != trial.point_units:
        value += f" (= {float(pts[k, j, c]):.4g} {units} in the file)"
    hint = (
        " or write the file in a larger unit (`units='m'`)"
        if is_length and (_unit_factor(units) or 1.0) < 1.0
        else ""
    )
    raise DataError(
        f"Cannot write '{path}': point {labels[j]!r} at frame {k} (0-based), coordinate "
        f"{'xyz'[c]}, is {value}, beyond the largest number a C3D file stores ({_F32_MAX:.4g}, "
        f"float32); {n_bad} samples in all do not fit. Correct the value or mark the sample "
        f"missing (NaN){hint}"
    )


def _check_float32_analogs(an, alabels, spf: int, path) -> None:
    """DataError naming the first channel and frame whose sample does not fit a float32."""
    if not an.size:
        return
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(an) & ~(np.abs(an) <= _F32_MAX)
    if not bad.any():
        return
    s, j = (int(v) for v in np.argwhere(bad)[0])
    raise DataError(
        f"Cannot write '{path}': analog channel {alabels[j]!r} at sample {s} (frame "
        f"{s // max(spf, 1)}, 0-based) is {an[s, j]:.4g}, beyond the largest number a C3D "
        f"file stores ({_F32_MAX:.4g}, float32); {int(bad.sum())} samples in all do not fit. "
        "Correct the values, mark them missing (NaN), or rescale the channel (e.g. kN for N)"
    )


def _check_float32_scalars(path, **values) -> None:
    """DataError when a number of the header/parameters (scale, rates) overflows a float32."""
    for name, value in values.items():
        v = float(value)
        if math.isfinite(v) and abs(v) > _F32_MAX:
            raise DataError(
                f"Cannot write '{path}': `{name}` = {v:g} is beyond "
                f"the largest number a C3D file stores ({_F32_MAX:.4g}, float32); give a "
                "smaller value"
            )


def _source_header(trial: Trial) -> dict:
    src = trial.parameters.get("__header__", {}) if trial.parameters else {}
    return src if isinstance(src, dict) else {}


def _output_units(trial: Trial, pts, units, scale):
    """(points in the file unit, the unit, the conversion factor, |POINT:SCALE|)."""
    src_header = _source_header(trial)
    in_units = trial.point_units or "mm"
    f_in = _unit_factor(in_units)
    if units is None:
        src_units = src_header.get("point_units")
        units = src_units if isinstance(src_units, str) and _unit_factor(src_units) else in_units
    f_out = _unit_factor(units)
    if f_out is None or f_in is None:
        if units != in_units:
            raise DataError(
                f"cannot convert points from {in_units!r} to {units!r}; use one of "
                f"{sorted(set(C3D_LENGTH_UNITS))}"
            )
        factor = 1.0
    else:
        factor = f_in / f_out
    if factor != 1.0:
        with np.errstate(over="ignore"):  # overflow to inf: refused by _check_float32_points
            pts = pts * factor
    if scale is None:
        src_scale = src_header.get("point_scale")
        ok = isinstance(src_scale, (int, float)) and math.isfinite(src_scale) and src_scale != 0
        scale = abs(float(src_scale)) if ok and units == src_header.get("point_units") else 0.01
    scale = abs(as_finite_float(scale, "scale"))
    if not (math.isfinite(scale) and scale > 0):
        raise DataError(f"`scale` must be positive, got {scale}")
    return pts, units, factor, scale


def _residual_words(trial: Trial, pts, factor: float, scale: float):
    """Validity (n_frames, n_points) and the fourth word of each point.

    ``camera_mask * 256 + round(residual / scale)``, -1 where invalid.
    """
    n_frames, n_points = pts.shape[:2]
    valid = np.isfinite(pts).all(axis=2)
    if trial.point_mask is not None:
        mask = np.asarray(trial.point_mask, dtype=bool)
        if mask.shape != valid.shape:
            raise DataError(f"`trial.point_mask` has shape {mask.shape}, expected {valid.shape}")
        valid &= mask
    resid_word = np.zeros((n_frames, n_points), dtype=np.float32)
    if trial.point_residuals is not None:
        res = np.asarray(trial.point_residuals, dtype=np.float64)
        if res.shape == valid.shape:
            r = np.where(np.isfinite(res), res * factor / scale, 0.0)
            resid_word = np.clip(np.round(r), 0, 255).astype(np.float32)
    cams = trial.results.get("camera_masks") if isinstance(trial.results, dict) else None
    if isinstance(cams, np.ndarray) and cams.shape == valid.shape:
        cam_bits = (cams.astype(np.int64) & 0x7F).astype(np.float32)
        resid_word = resid_word + 256.0 * cam_bits
    resid_word[~valid] = -1.0
    return valid, resid_word


def _f32(values) -> bytes:
    return np.asarray(values, dtype="<f4").reshape(-1, order="F").tobytes()


def _i16(values) -> bytes:
    return np.asarray(values, dtype="<i2").reshape(-1, order="F").tobytes()


def _u16(value) -> bytes:
    return np.uint16(value).astype("<u2").tobytes()


class _ParameterWriter:
    """The parameter records of the groups that write_c3d derives from the Trial."""

    GROUPS = (
        ("POINT", "3-D point parameters"),
        ("ANALOG", "analog channel parameters"),
        ("TRIAL", "trial parameters"),
        ("EVENT", "events"),
    )

    def __init__(self):
        self.gid = {name: i + 1 for i, (name, _) in enumerate(self.GROUPS)}
        self.recs: list[bytes] = [
            _group_record(name, self.gid[name], desc) for name, desc in self.GROUPS
        ]

    def add(self, group, name, ptype, dims, data, desc=""):
        self.recs.append(_param_record(name, self.gid[group], ptype, dims, data, desc))

    def add_text(self, group, name, values, desc=""):
        if isinstance(values, str):
            b = values.encode("latin-1", errors="replace")
            self.add(group, name, -1, [len(b)], b, desc)
        else:
            dims, data = _char_param(values)
            self.add(group, name, -1, dims, data, desc)

    def add_text_list(self, group, name, values, desc=""):
        """A long list split over NAME, NAME2, ... (255 entries each)."""
        chunks = [values[i : i + 255] for i in range(0, len(values), 255)] or [[]]
        for k, chunk in enumerate(chunks):
            pname = name if k == 0 else f"{name}{k + 1}"
            if chunk:
                self.add_text(group, pname, chunk, desc)
            else:
                self.add(group, pname, -1, [0, 0], b"", desc)


def _per_item(values, n: int) -> list:
    """`values` when it has one entry per item, else n empty strings; blanks as " "."""
    values = list(values) if len(values) == n else [""] * n
    return [v or " " for v in values]


def _point_parameters(w: _ParameterWriter, trial, labels, units, scale, n_frames):
    n_points = len(labels)
    w.add("POINT", "USED", 2, [], _u16(n_points), "number of points")
    w.add("POINT", "SCALE", 4, [], _f32(-scale), "negative: floating-point storage")
    w.add("POINT", "RATE", 4, [], _f32(float(trial.point_rate)), "point rate (Hz)")
    w.add("POINT", "DATA_START", 2, [], b"\x00\x00", "first block of the data section")
    w.add("POINT", "FRAMES", 2, [], _u16(min(n_frames, 65535)), "frames")
    if n_frames > 65535:
        w.add("POINT", "LONG_FRAMES", 4, [], _f32(n_frames), "number of frames")
    w.add_text("POINT", "UNITS", units, "length unit")
    w.add_text_list("POINT", "LABELS", labels, "point labels")
    desc = _per_item(trial.point_descriptions, n_points)
    w.add_text_list("POINT", "DESCRIPTIONS", desc, "point descriptions")


_KIND_GROUPS = {
    "angle": ("ANGLES", "ANGLE_UNITS"),
    "moment": ("MOMENTS", "MOMENT_UNITS"),
    "power": ("POWERS", "POWER_UNITS"),
    "force": ("FORCES", "FORCE_UNITS"),
    "scalar": ("SCALARS", "SCALAR_UNITS"),
}


def _model_output_columns(trial, labels) -> list[int]:
    """Columns of the points that ``trial.point_kinds`` marks as model outputs."""
    kinds = trial.point_kinds if isinstance(trial.point_kinds, dict) else {}
    return [i for i, lab in enumerate(labels) if lab in kinds]


def _model_output_parameters(w: _ParameterWriter, trial, labels):
    """POINT:ANGLES, MOMENTS, ... and their units from ``trial.point_kinds``.

    Model-output values are written as they are held (their own unit, not
    scaled as lengths); every output of one kind must share one unit.
    """
    kinds = trial.point_kinds if isinstance(trial.point_kinds, dict) else {}
    unknown = sorted(
        str(lab)
        for lab, v in kinds.items()
        if not (isinstance(v, tuple | list) and len(v) == 2 and v[0] in _KIND_GROUPS)
    )
    if unknown:
        raise DataError(
            f"`trial.point_kinds` entries {unknown} must be (kind, unit) with kind one of "
            f"{sorted(_KIND_GROUPS)}"
        )
    for kind, (group, unit_param) in _KIND_GROUPS.items():
        listed = [lab for lab in labels if kinds.get(lab, ("", ""))[0] == kind]
        if not listed:
            continue
        units = {str(kinds[lab][1]) for lab in listed}
        if len(units) > 1:
            raise DataError(
                f"`trial.point_kinds` gives the {kind} outputs several units {sorted(units)}; "
                f"a C3D file holds one POINT:{unit_param}: convert them to one unit first"
            )
        w.add_text_list("POINT", group, listed, f"{kind} outputs")
        w.add_text("POINT", unit_param, [units.pop().replace(" ", "")], f"{kind} unit")


def _analog_parameters(w: _ParameterWriter, trial, alabels, n_channels):
    rate = float(trial.analog_rate) if n_channels else 0.0
    w.add("ANALOG", "USED", 2, [], _u16(n_channels), "channels")
    w.add("ANALOG", "RATE", 4, [], _f32(rate), "analog rate (Hz)")
    w.add("ANALOG", "GEN_SCALE", 4, [], _f32(1.0), "general scale")
    w.add("ANALOG", "SCALE", 4, [n_channels], _f32(np.ones(n_channels)), "channel scales")
    w.add("ANALOG", "OFFSET", 2, [n_channels], _i16(np.zeros(n_channels)), "channel offsets")
    if n_channels:
        w.add_text_list("ANALOG", "LABELS", alabels, "channel labels")
        units = _per_item(trial.analog_units, n_channels)
        w.add_text_list("ANALOG", "UNITS", units, "channel units")
        desc = _per_item(trial.analog_descriptions, n_channels)
        w.add_text_list("ANALOG", "DESCRIPTIONS", desc, "channel descriptions")


def _trial_and_event_parameters(w: _ParameterWriter, trial, n_first, n_last):
    for name, frame, desc in (
        ("ACTUAL_START_FIELD", n_first, "first frame"),
        ("ACTUAL_END_FIELD", n_last, "last frame"),
    ):
        words = np.array([frame & 0xFFFF, frame >> 16], dtype="<u2").tobytes()
        w.add("TRIAL", name, 2, [2], words, desc)
    events = list(trial.events)
    w.add("EVENT", "USED", 2, [], _i16(len(events)), "number of events")
    if not events:
        return
    t = np.array([e.time for e in events], dtype=np.float64)
    minutes = np.floor(t / 60.0)
    times = _f32(np.stack([minutes, t - 60 * minutes]))
    w.add("EVENT", "TIMES", 4, [2, len(events)], times, "event times (minutes, seconds)")
    w.add_text("EVENT", "LABELS", [e.label or " " for e in events], "event labels")
    w.add_text("EVENT", "CONTEXTS", [e.context or " " for e in events], "event contexts")
    descs = [e.description or " " for e in events]
    w.add_text("EVENT", "DESCRIPTIONS", descs, "event descriptions")


def _parameter_section(w: _ParameterWriter) -> tuple[bytes, int]:
    """The parameter blocks (4-byte header, records, terminator) and the data block number."""
    for r in w.recs:
        if len(r) > 32000:
            raise DataError("a parameter is too large to be written in a C3D file")
    body = b"".join(w.recs)
    n_pblocks = (4 + len(body) + 2 + _BLOCK - 1) // _BLOCK
    if n_pblocks > 255:
        raise DataError("the parameter section would exceed 255 blocks")
    data_block = 2 + n_pblocks
    # patch POINT:DATA_START now that the section's size is known
    ds_name = b"DATA_START"
    k = body.find(bytes([len(ds_name), w.gid["POINT"]]) + ds_name)
    ds_val = k + 2 + len(ds_name) + 2 + 2
    body = body[:ds_val] + _u16(min(data_block, 65535)) + body[ds_val + 2 :]
    psec = bytes([1, 0x50, n_pblocks, 84]) + body + b"\x00\x00"
    return psec.ljust(n_pblocks * _BLOCK, b"\x00"), data_block


def _header_block(n_points, n_channels, spf, n_first, n_last, data_block, scale, rate):
    """The 512-byte header (Intel, floating point; frame numbers saturated at 65535)."""
    words = np.zeros(256, dtype="<u2")
    words[1] = n_points
    words[2] = n_channels * spf
    words[3] = min(n_first, 65535)
    words[4] = min(n_last, 65535)
    words[5] = 10
    words[8] = data_block
    words[9] = spf
    words[149] = 12345
    hb = bytearray(words.tobytes())
    hb[0] = 2
    hb[1] = 0x50
    hb[12:16] = np.float32(-scale).astype("<f4").tobytes()
    hb[20:24] = np.float32(rate).astype("<f4").tobytes()
    return bytes(hb)


def _data_section(pts, valid, resid_word, an, spf) -> bytes:
    """One float32 record per frame: the points with their residual words, then the analogs."""
    n_frames, n_points = pts.shape[:2]
    n_channels = an.shape[1] if an.shape[0] else 0
    pbuf = np.zeros((n_frames, n_points, 4), dtype="<f4")
    pbuf[..., :3] = np.where(valid[..., None], pts, 0.0)
    pbuf[..., 3] = resid_word
    frame_dtype = np.dtype([("p", "<f4", (n_points, 4)), ("a", "<f4", (spf, n_channels))])
    data = np.empty(n_frames, dtype=frame_dtype)
    data["p"] = pbuf
    if n_channels:
        data["a"] = an.reshape(n_frames, spf, n_channels)
    return data.tobytes()
