"""Interpretation of a decoded C3D file: units, analog calibration, labels, rates,
events, subject metadata and force plates (internal)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ahbm.errors import AhbmError
from ahbm.io.c3d._common import _unit_factor, _warn
from ahbm.io.c3d.data import _analog_format
from ahbm.io.c3d.parameters import _fit_length, _Params
from ahbm.types import Event


def _convert_units(xyz, residuals, P: _Params, units: str | None, source: str):
    """Scale points and residuals (in place) to `units`; return (file units, output units)."""
    listed = P.strings("POINT", "UNITS")
    file_units = (listed[0].strip() if listed else "") or "mm"
    if not listed:
        _warn(f"{source}: POINT:UNITS is missing; millimetres assumed")
    if units is None:
        return file_units, file_units
    f_in = _unit_factor(file_units, lenient=True)
    if f_in is None:
        _warn(f"{source}: unknown POINT:UNITS {file_units!r}; points are kept in file units")
        return file_units, file_units
    factor = f_in / _unit_factor(units)
    if factor != 1.0:
        xyz *= factor
        residuals *= factor
    return file_units, units


#: Marker coordinates beyond this (m) are no measurement (a corrupted file or a wrong scale).
MAX_MARKER_COORDINATE = 1e3


def _drop_implausible_points(xyz, residuals, valid, labels, outputs, units, source) -> None:
    """Mark missing (in place) marker samples beyond MAX_MARKER_COORDINATE; warn naming them.

    A coordinate of a kilometre or more (or inf) is no marker position: the file is
    corrupted or its POINT:SCALE is wrong. The whole file is not refused (the other
    samples are good); those samples become NaN, ``point_mask`` False, residual NaN,
    and one warning names the markers, their frames and the largest value. Model
    outputs (angles, moments, ...) are not lengths and are not checked.
    """
    per_m = _unit_factor(units, lenient=True) if units else None
    limit = MAX_MARKER_COORDINATE / (per_m if per_m else 1e-3)  # unknown unit: mm
    with np.errstate(invalid="ignore"):
        bad = (np.abs(xyz) > limit).any(axis=2)  # NaN (missing) compares False
    if outputs:
        bad[:, list(outputs)] = False
    if not bad.any():
        return
    cols = np.flatnonzero(bad.any(axis=0))
    parts = []
    for j in cols[:5]:
        rows = np.flatnonzero(bad[:, j])
        name = labels[j] if j < len(labels) else f"POINT{j + 1}"
        parts.append(f"{name!r} frames {rows[0]}-{rows[-1]} ({rows.size} samples)")
    more = f" and {cols.size - 5} more markers" if cols.size > 5 else ""
    with np.errstate(invalid="ignore", over="ignore"):
        peak = float(np.nanmax(np.abs(xyz[bad])))
    _warn(
        f"{source}: {int(bad.sum())} marker samples lie beyond {MAX_MARKER_COORDINATE:g} m "
        f"from the origin (up to {peak:.3g} {units or 'file units'}), which no marker does: "
        f"{'; '.join(parts)}{more} (0-based frames). They are marked missing (NaN); the file "
        "is corrupted there or its POINT:SCALE / POINT:UNITS is wrong"
    )
    xyz[bad] = np.nan
    residuals[bad] = np.nan
    valid[bad] = False


def _calibrate_analogs(araw, P: _Params, types: dict, n_channels: int, source: str):
    """``(raw - OFFSET) * SCALE * GEN_SCALE`` per channel.

    OFFSET words are unsigned 16-bit when the samples are (ANALOG:FORMAT
    "UNSIGNED", see :func:`~ahbm.io.c3d.data._analog_format`; writers store 32768
    as -32768), signed otherwise. Raw integer samples outside the range of
    ANALOG:BITS warn (the file's FORMAT or BITS is then wrong).
    """
    if not n_channels:
        return araw
    unsigned, bits = _analog_format(P, n_channels, source, warn=False)  # warned on decoding
    if bits is not None and bits < 16 and araw.size:
        lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        outside = int(np.count_nonzero((araw < lo) | (araw > hi)))
        if outside:
            _warn(
                f"{source}: {outside} raw analog samples lie outside the {lo}..{hi} range of "
                f"ANALOG:BITS = {bits} ({'un' if unsigned else ''}signed); they are calibrated "
                "as stored, but ANALOG:BITS or ANALOG:FORMAT is probably wrong"
            )
    ch_scale = P.concat_numbers("ANALOG", "SCALE")
    ch_offset = P.concat_numbers("ANALOG", "OFFSET")
    gen = P.scalar("ANALOG", "GEN_SCALE")
    if gen is None or not math.isfinite(gen):
        gen = 1.0
    sc = _fit_length(
        None if ch_scale is None else list(ch_scale.astype(float)),
        n_channels,
        "ANALOG:SCALE",
        lambda i: 1.0,
        source,
    )
    off_list = None if ch_offset is None else ch_offset.astype(np.int64)
    if off_list is not None and types.get("ANALOG:OFFSET") == 2 and unsigned:
        off_list = off_list & 0xFFFF
    off = _fit_length(
        None if off_list is None else list(off_list.astype(float)),
        n_channels,
        "ANALOG:OFFSET",
        lambda i: 0.0,
        source,
    )
    sc, off = np.asarray(sc, dtype=np.float64), np.asarray(off, dtype=np.float64)
    return (araw - off) * (sc * gen)


def _text(P: _Params, group: str, name: str, n: int, source: str, default, *, warn=True):
    """A per-point or per-channel text list of length n (default when absent)."""
    if not P.has(group, name):
        return [default(i) for i in range(n)]
    values = P.concat_strings(group, name)
    return _fit_length(values, n, f"{group}:{name}", default, source, warn=warn)


def _labels(P: _Params, n_points: int, n_channels: int, source: str) -> dict:
    """Labels, descriptions and units of the points and analog channels."""
    empty = lambda i: ""  # noqa: E731
    return {
        "point_labels": _fit_length(
            P.concat_strings("POINT", "LABELS"),
            n_points,
            "POINT:LABELS",
            lambda i: f"POINT{i + 1}",
            source,
        ),
        "point_descriptions": _text(
            P, "POINT", "DESCRIPTIONS", n_points, source, empty, warn=False
        ),  # fmt: skip
        "analog_labels": _fit_length(
            P.concat_strings("ANALOG", "LABELS"),
            n_channels,
            "ANALOG:LABELS",
            lambda i: f"CHANNEL{i + 1}",
            source,
        ),
        "analog_descriptions": _text(
            P, "ANALOG", "DESCRIPTIONS", n_channels, source, empty, warn=False
        ),  # fmt: skip
        "analog_units": _text(P, "ANALOG", "UNITS", n_channels, source, empty),
    }


def _rates(P: _Params, h, spf: int, source: str) -> tuple[float, float]:
    """Point and analog rates (Hz): parameters first, the header as fallback."""
    point_rate = P.scalar("POINT", "RATE")
    if point_rate is None or not math.isfinite(point_rate) or point_rate <= 0:
        point_rate = h["frame_rate"]
    if not math.isfinite(point_rate) or point_rate < 0:
        _warn(f"{source}: no valid point rate in POINT:RATE or the header; set to 0")
        point_rate = 0.0
    analog_rate = P.scalar("ANALOG", "RATE")
    if analog_rate is None or not math.isfinite(analog_rate) or analog_rate <= 0:
        analog_rate = point_rate * spf
    elif spf and point_rate > 0 and abs(analog_rate - point_rate * spf) > 1e-3 * analog_rate:
        _warn(
            f"{source}: ANALOG:RATE = {analog_rate:g} Hz is not point rate x samples per "
            f"frame ({point_rate:g} x {spf}); {point_rate * spf:g} Hz is used"
        )
        analog_rate = point_rate * spf
    return float(point_rate), float(analog_rate)


def _force_plates(trial, P: _Params, source: str):
    """The force plates of FORCE_PLATFORM (a warning, not an error, when they fail)."""
    if not P.has("FORCE_PLATFORM", "USED"):
        return []
    from ahbm.io.forceplates import force_plates_from_c3d  # forceplates imports this package

    try:
        return force_plates_from_c3d(trial)
    except (AhbmError, ValueError, IndexError, TypeError, ArithmeticError) as err:
        _warn(f"{source}: force plates not computed: {err}")
        return []


def _events(P: _Params, h, source) -> list[Event]:
    events: list[Event] = []
    times = P.numbers("EVENT", "TIMES")
    labels = P.concat_strings("EVENT", "LABELS")
    if times is not None and labels is not None:
        n = P.scalar("EVENT", "USED", unsigned=True)
        t = np.asarray(times, dtype=np.float64)
        if t.ndim == 2 and t.shape[0] == 2:
            seconds = 60.0 * t[0] + t[1]
        else:
            seconds = t.reshape(-1)
        n = len(labels) if n is None else int(n)
        if n > min(len(labels), seconds.size):
            _warn(
                f"{source}: EVENT:USED = {n} but only {min(len(labels), seconds.size)} event "
                "labels/times are stored; the extra events are ignored"
            )
            n = min(len(labels), seconds.size)
        contexts = P.concat_strings("EVENT", "CONTEXTS") or []
        descs = P.concat_strings("EVENT", "DESCRIPTIONS") or []
        for i in range(n):
            if not math.isfinite(seconds[i]):
                continue
            events.append(
                Event(
                    label=labels[i],
                    time=float(seconds[i]),
                    context=contexts[i] if i < len(contexts) else "",
                    description=descs[i] if i < len(descs) else "",
                )
            )
    if not events:
        for e in h["events"]:
            events.append(Event(label=e["label"], time=e["time"], description="header event"))
    events.sort(key=lambda e: e.time)
    return events


def _subject(P: _Params) -> dict[str, Any]:
    subject: dict[str, Any] = {}
    names = P.strings("SUBJECTS", "NAMES")
    if names:
        subject["names"] = names
        subject["name"] = names[0]
    for key in ("MARKER_SETS", "LABEL_PREFIXES"):
        v = P.strings("SUBJECTS", key)
        if v:
            subject[key.lower()] = v
    proc = P.tree.get("PROCESSING", {})
    extra = {}
    for k, v in proc.items():
        if isinstance(v, np.ndarray) and v.size == 1:
            extra[k] = float(v.reshape(-1)[0])
    if extra:
        subject["processing"] = extra
        for key, out in (("BODYMASS", "mass"), ("MASS", "mass")):
            if key in extra:
                subject[out] = extra[key]
        if "HEIGHT" in extra:
            height = extra["HEIGHT"]
            # Vicon stores the height in mm; anything above 3 is taken as mm
            subject["height"] = height / 1000.0 if height > 3.0 else height
    return subject


#: C3D model-output groups: POINT label group -> (kind, unit parameter, default file unit).
_MODEL_OUTPUTS = {
    "ANGLES": ("angle", "ANGLE_UNITS", "deg"),
    "MOMENTS": ("moment", "MOMENT_UNITS", "Nmm"),
    "POWERS": ("power", "POWER_UNITS", "W"),
    "FORCES": ("force", "FORCE_UNITS", "N"),
    "SCALARS": ("scalar", "SCALAR_UNITS", ""),
}
#: Known model-output units (spaces, dots, '*' and '·' removed, lower case) -> (SI unit, factor).
_SI_UNITS = {
    "angle": {"deg": ("rad", math.pi / 180.0), "degree": ("rad", math.pi / 180.0),
              "degrees": ("rad", math.pi / 180.0), "rad": ("rad", 1.0),
              "radian": ("rad", 1.0), "radians": ("rad", 1.0)},
    "moment": {"nmm": ("N m", 1e-3), "nm": ("N m", 1.0), "knm": ("N m", 1e3)},
    "power": {"w": ("W", 1.0), "mw": ("W", 1e-3), "kw": ("W", 1e3)},
    "force": {"n": ("N", 1.0), "kn": ("N", 1e3)},
}  # fmt: skip


def _si_unit(kind: str, unit: str):
    """(SI unit, factor) of a model-output unit, or None when unknown."""
    key = "".join(c for c in unit.lower() if c not in " .*·")
    known = _SI_UNITS.get(kind, {}).get(key)
    if known is None and kind == "scalar" and _unit_factor(unit, lenient=True) is not None:
        return "m", _unit_factor(unit, lenient=True)
    return known


def _model_outputs(P: _Params, labels: list[str], source: str) -> dict[int, tuple]:
    """Point columns that are model outputs: ``{index: (kind, file unit)}``.

    A point is a model output when its label is listed in POINT:ANGLES,
    MOMENTS, POWERS, FORCES or SCALARS (continuations ANGLES2, ... included);
    its file unit is POINT:<KIND>_UNITS (Vicon's defaults when absent: deg,
    Nmm, W, N).
    """
    where = {lab.strip(): i for i, lab in reversed(list(enumerate(labels)))}
    out: dict[int, tuple] = {}
    for group, (kind, unit_param, default) in _MODEL_OUTPUTS.items():
        listed = P.concat_strings("POINT", group) if P.has("POINT", group) else None
        if not listed:
            continue
        units = P.strings("POINT", unit_param) if P.has("POINT", unit_param) else None
        unit = (units[0].strip() if units else "") or default
        for lab in listed:
            i = where.get(lab.strip())
            if lab.strip() and i is not None and i not in out:
                out[i] = (kind, unit)
    return out


def _convert_model_outputs(xyz, file_xyz, outputs: dict, labels, units, source) -> dict:
    """Put model-output columns back from file values in their own units.

    ``xyz`` (already scaled as lengths) gets each model output's file values
    times its SI factor (or unscaled when `units` is None or the unit is
    unknown); returns ``{label: (kind, unit)}``.
    """
    kinds = {}
    for i, (kind, unit) in sorted(outputs.items()):
        xyz[:, i] = file_xyz[:, i]
        si = None if units is None else _si_unit(kind, unit)
        if si is None:
            if units is not None:
                _warn(
                    f"{source}: unknown {kind} unit {unit!r} of point {labels[i]!r}; "
                    "its values are kept in the file's unit"
                )
            kinds[labels[i]] = (kind, unit)
            continue
        xyz[:, i] *= si[1]
        kinds[labels[i]] = (kind, si[0])
    return kinds
