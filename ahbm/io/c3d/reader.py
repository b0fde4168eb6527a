"""Reading a C3D file by stage: header, parameters, data, interpretation."""

from __future__ import annotations

import numpy as np

from ahbm.errors import AhbmError, AhbmWarning, DataError, FileFormatError
from ahbm.io.c3d._common import _BLOCK, C3D_LENGTH_UNITS, _unit_factor, _warn
from ahbm.io.c3d.data import _decode_analogs, _decode_frames, _decode_points, _layout
from ahbm.io.c3d.header import _load, _read_header
from ahbm.io.c3d.interpret import (
    _calibrate_analogs,
    _convert_model_outputs,
    _convert_units,
    _drop_implausible_points,
    _events,
    _force_plates,
    _labels,
    _model_outputs,
    _rates,
    _subject,
)
from ahbm.io.c3d.parameters import _build_tree, _Params, _parse_parameters
from ahbm.io.trial import Trial

__all__ = ["read_c3d", "C3D_LENGTH_UNITS"]


def read_c3d(path, *, units: str | None = "m", zero_is_missing: bool = True) -> Trial:
    """Read a C3D file into a :class:`~ahbm.io.trial.Trial`.

    Parameters
    ----------
    path : str, path-like, bytes or binary file object
        The C3D file, or its content.
    units : {"m", "mm", "cm"} or None, optional
        Length unit of the returned points and residuals (default metres).
        ``None`` keeps the unit of the file (POINT:UNITS). Force plate
        outputs are always in SI units (N, N m, m).
    zero_is_missing : bool, optional
        If True (default), a point sample whose three coordinates are exactly
        0 is missing data (NaN in ``points``, False in ``point_mask``, NaN
        residual), whatever its residual word says: Vicon and other writers
        store gaps as (0, 0, 0) with a non-negative residual. False keeps such
        samples as valid coordinates (only a negative residual word marks a
        gap, as the C3D specification says).

    Returns
    -------
    Trial
        ``points`` (n_frames, n_points, 3) with NaN where the file marks a
        sample invalid (or stores it as zeros, see `zero_is_missing`),
        ``point_mask`` (True where valid), ``point_residuals``,
        ``analogs`` (n_samples, n_channels) with ``(raw - OFFSET) * SCALE *
        GEN_SCALE`` applied, labels, units, descriptions, rates, the first
        frame number, force plates, events, subject metadata, and the full
        parameter tree in ``parameters``: ``{GROUP: {PARAM: value}}`` where a
        value is a list of str (character parameters) or an ndarray shaped
        like the C3D dimensions (Fortran order, as the file stores it); plus
        ``"__descriptions__"`` (``{"GROUP": str, "GROUP:PARAM": str}``),
        ``"__types__"`` (C3D data type -1, 1, 2, 4), ``"__dimensions__"`` and
        ``"__header__"`` (header fields, processor, original units, header
        events). ``results["camera_masks"]`` holds the camera contribution
        bits of every sample, uint8 (n_frames, n_points).

    Raises
    ------
    FileFormatError
        If the file is missing, malformed or truncated; the message names the
        byte offset or the parameter at fault.

    Warns
    -----
    AhbmWarning
        For recoverable inconsistencies (label counts, header/parameter
        disagreements, a corrupted trailing parameter record, ...). Marker
        samples beyond 1e3 m from the origin (after unit conversion; inf
        included) and force plate samples beyond 1e6 N are implausible: they
        are marked missing (NaN, ``point_mask`` False) with a warning naming
        the markers or the plate and its channels and the frames, so that one
        corrupted sample does not cost the rest of the file. A force plate
        that cannot be computed (zero-size, collinear or non-finite corners,
        missing channels) is skipped with a warning naming it; the other
        plates are kept.

    Notes
    -----
    Model outputs -- points whose labels POINT:ANGLES, MOMENTS, POWERS,
    FORCES or SCALARS list -- are not marker positions: they are read in
    their declared unit (POINT:ANGLE_UNITS, MOMENT_UNITS, POWER_UNITS,
    FORCE_UNITS, SCALAR_UNITS; Vicon's deg, Nmm, W, N when absent) and
    converted to SI, as everything inside ahbm (docs/design.md): angles to rad,
    N mm to N m, kW to W, length scalars to m (a 57.9 deg knee angle reads
    1.0105). ``trial.point_kinds`` records ``{label: (kind, unit)}`` for
    them. An unknown unit is kept as the file says (warning); ``units=None``
    keeps every point in the file's units. A model output of exactly (0, 0,
    0) is a value, not a gap (only markers follow `zero_is_missing`).

    Integer points are ``value * POINT:SCALE``; the fourth word of each
    point holds the camera mask (high byte) and the residual divided by
    ``|POINT:SCALE|`` (low byte); a negative word marks an invalid sample.
    Analogs are ``(raw - OFFSET) * SCALE * GEN_SCALE`` per channel (SCALE2,
    OFFSET2, ... continue the lists). As the C3D User Guide says, raw integers
    and OFFSET are unsigned when ANALOG:FORMAT is "UNSIGNED" and signed
    otherwise; without FORMAT, an OFFSET below the signed range of ANALOG:BITS
    (e.g. -32768, a 16-bit converter's mid-scale written as a signed word)
    makes them unsigned, as BTK reads it (warning). Raw samples outside the
    range of ANALOG:BITS warn. (ezc3d reads every sample as signed and takes
    the absolute value of OFFSET: on unsigned 16-bit files it differs.)

    **Header against parameters.** The header repeats the point count (word
    2), the analog values and samples per frame (words 3 and 10) and the
    first and last frames (words 4, 5) that POINT:USED, ANALOG:USED,
    ANALOG:RATE / POINT:RATE, POINT:FRAMES (or POINT:LONG_FRAMES) and
    TRIAL:ACTUAL_START_FIELD / ACTUAL_END_FIELD also give. The C3D User Guide
    makes the parameters the reference (the copies "must always be
    identical"; ANALOG:USED is word 3 / word 10); of the major readers ezc3d
    and c3d.py read the parameters, BTK mostly the header. ahbm reads the
    parameters first and lets the data section decide when they disagree:
    the first layout (parameters before header) whose frames end within the
    file's last 512-byte block is read, else the first one the file holds,
    else the file is refused as truncated. So a header word 3 that is not a
    multiple of word 10 is read with ANALOG:USED; a stale POINT:FRAMES
    smaller than the data is overruled by the header; the first frame
    number is TRIAL:ACTUAL_START_FIELD's when present (BTK, c3d.py). When
    each frame stores more points than POINT:USED, the frames are read with
    the stored count and the points that POINT:USED marks unused are left
    out. Each disagreement warns, naming both values and the one read.

    POINT:UNITS is read leniently (case, blanks, a truncated 'mete' for
    'meters', 'milli', ...), and force plate corners, origins and moments
    are in the same unit; a plate whose sides come out outside 0.1-3 m
    warns that POINT:UNITS is probably wrong.
    Frame counts above 65535 come from TRIAL:ACTUAL_START_FIELD /
    ACTUAL_END_FIELD (two 16-bit words each) or POINT:LONG_FRAMES.
    DEC floats are converted as in ``ahbm.io.c3d.numbers._dec_to_float``.

    Examples
    --------
    >>> from ahbm.io import read_c3d                     # doctest: +SKIP
    >>> trial = read_c3d("gait-raw.c3d")                 # doctest: +SKIP
    >>> trial.points.shape, trial.point_units            # doctest: +SKIP
    ((142, 27, 3), 'm')
    """
    if units is not None and _unit_factor(units) is None:
        raise DataError(
            f"`units` must be one of {sorted(set(C3D_LENGTH_UNITS))} or None, got {units!r}"
        )
    buf, source = _load(path)
    try:
        return _read(buf, source, units, bool(zero_is_missing))
    except (AhbmError, AhbmWarning):
        raise
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, MemoryError) as err:
        # A safety net: every check above should have caught the problem.
        raise FileFormatError(
            f"{source}: malformed C3D file ({type(err).__name__}: {err})"
        ) from err


def _parameter_start(buf: bytes, source: str) -> int:
    """Byte offset of the parameter section, after checking the file's first two bytes."""
    size = len(buf)
    if size < _BLOCK:
        raise FileFormatError(
            f"{source}: {size} bytes is too short for a C3D file (the header alone is 512 "
            "bytes); the file is truncated or empty"
        )
    if buf[1] != 0x50:
        raise FileFormatError(
            f"{source}: byte 1 is {buf[1]:#04x}, expected 0x50; this is not a C3D file"
        )
    pblock = buf[0]
    if pblock < 2:
        raise FileFormatError(
            f"{source}: byte 0 gives parameter block {pblock}; it must be at least 2"
        )
    return (pblock - 1) * _BLOCK


def _used_points(raw_p, lay, P, source: str):
    """The stored points that POINT:USED declares (all of them when it is absent).

    When the data section proves that each frame stores more points than
    POINT:USED (the header's count fits the file, the parameter's does not),
    the frames are read with the header's count and the points beyond
    POINT:USED, which the parameters mark unused (no labels, no descriptions),
    are left out, as readers that follow the parameters (ezc3d, c3d.py) return.
    """
    used = P.scalar("POINT", "USED", unsigned=True)
    if used is None or not 0 <= used < lay.n_points:
        return raw_p, lay.n_points
    used = int(used)
    _warn(
        f"{source}: each frame stores {lay.n_points} points but POINT:USED = {used} marks "
        f"points {used + 1}-{lay.n_points} unused; they are not returned"
    )
    return raw_p[:, :used], used


def _read(buf: bytes, source: str, units: str | None, zero_is_missing: bool = True) -> Trial:
    """The stages: parameters and header -> data layout -> decoding -> interpretation."""
    pstart = _parameter_start(buf, source)
    fmt, n_pblocks, groups, params = _parse_parameters(buf, pstart, source)
    h = _read_header(buf, fmt, source)
    tree, descriptions, types, dimensions = _build_tree(groups, params, source)
    P = _Params(tree, types, source)

    lay = _layout(buf, h, P, pstart, source)
    raw_p, raw_a = _decode_frames(buf, lay, fmt, P, source)
    raw_p, n_points = _used_points(raw_p, lay, P, source)
    labels = _labels(P, n_points, lay.n_channels, source)
    outputs = _model_outputs(P, labels["point_labels"], source)
    # zeros are gaps in marker positions only: a model output may be exactly 0
    zero_cols = np.ones(n_points, dtype=bool)
    zero_cols[list(outputs)] = False
    xyz, residuals, valid, camera = _decode_points(
        raw_p, lay, fmt, zero_cols if zero_is_missing else False
    )
    file_xyz = xyz.copy() if outputs else None
    file_units, out_units = _convert_units(xyz, residuals, P, units, source)
    kinds = {}
    if outputs:
        kinds = _convert_model_outputs(
            xyz, file_xyz, outputs, labels["point_labels"], units, source
        )
    _drop_implausible_points(
        xyz, residuals, valid, labels["point_labels"], outputs, out_units, source
    )
    araw = _decode_analogs(raw_a, lay, fmt)
    analogs = _calibrate_analogs(araw, P, types, lay.n_channels, source)
    point_rate, analog_rate = _rates(P, h, lay.spf, source)

    header = {k: v for k, v in h.items() if k != "events"}
    header.update(
        header_events=h["events"],
        n_parameter_blocks=int(n_pblocks),
        point_units=file_units,
        storage="float" if lay.is_float else "integer",
        point_scale=float(lay.scale),
        analog_samples_per_frame=lay.spf,
    )
    parameters = dict(tree)
    parameters["__descriptions__"] = descriptions
    parameters["__types__"] = types
    parameters["__dimensions__"] = dimensions
    parameters["__header__"] = header

    trial = Trial(
        points=xyz,
        point_rate=point_rate,
        point_units=out_units,
        point_residuals=residuals,
        point_mask=valid,
        analogs=analogs,
        analog_rate=analog_rate,
        first_frame=int(lay.first_frame),
        events=_events(P, h, source),
        subject=_subject(P),
        parameters=parameters,
        source=source,
        point_kinds=kinds,
        **labels,
    )
    trial.results["camera_masks"] = camera
    plates = _force_plates(trial, P, source)
    if plates:
        trial.force_plates = plates
    return trial
