"""Force plates: ground reaction force, moment, centre of pressure, free torque.

Computes, from the FORCE_PLATFORM parameters and the analog channels of a
C3D file, the force and moment that the subject exerts on each plate, the
centre of pressure (COP) and the free vertical torque, all expressed in the
lab frame in SI units. Plate types 1, 2, 3 (Kistler, 8 channels) and 4
(6 x 6 calibration matrix) of the C3D specification are supported.

Conventions
-----------
* The plate frame has its x axis along ``corner1 - corner2`` and its y axis
  along ``corner1 - corner4`` (orthogonalized), z = x cross y; the lab-to-plate
  rotation ``R = lab_R_plate`` holds those axes as columns.
* FORCE_PLATFORM:ORIGIN is the vector from the plate's sensor origin to the
  centre of the working surface, in the plate frame; its z must be negative
  (the surface lies above the sensor origin along -z). Many files (Vicon in
  particular) store it with a positive z; such a vector is negated as a whole.
* Force and moment follow the sign of the plate's channels, rotated to the
  lab frame: for the usual plates (z axis pointing down into the floor) this is
  the ground reaction force acting on the subject, +z up during stance, as
  ezc3d and Vicon report it.
* The moment is expressed about the centre of the working surface (the mean
  of the four corners): ``M_c = M_o + F x ORIGIN``.
* The COP is the point ``r`` of the surface plane where the moment reduces to
  a torque along the plate normal: ``r = (n x M_c) / (n . F)``; the free
  torque is ``T = M_c - r x F``. Both are NaN where ``|n . F|`` is below the
  threshold.
* Moments are assumed to be in N x (POINT:UNITS) after calibration, as the
  C3D specification and ezc3d assume; positions are in POINT:UNITS. Both are
  converted to SI.

References
----------
Motion Lab Systems, *The C3D File Format User Guide* (2008), FORCE_PLATFORM
group. Kistler, *Multicomponent force plate* manual (type 3 equations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import (
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    broadcast_batch,
    check_trailing_shape,
)
from ahbm.errors import DataError, FileFormatError
from ahbm.io.c3d._common import _unit_factor, _warn
from ahbm.io.trial import ForcePlate, Trial
from ahbm.types import ResultRepr

__all__ = [
    "force_plates_from_c3d",
    "plate_frame",
    "PlateFrame",
    "plate_wrench",
    "wrench_to_cop",
    "remove_zero_offset",
    "resample_force_plate",
]

_N_CHANNELS = {1: 6, 2: 6, 3: 8, 4: 6}


@dataclass(frozen=True, repr=False)
class PlateFrame(ResultRepr):
    """Orientation, surface centre and corrected ORIGIN of a force plate (:func:`plate_frame`).

    Attributes
    ----------
    R : ndarray, shape (3, 3)
        ``lab_R_plate``: plate axes expressed in the lab frame (columns).
    center : ndarray, shape (3,)
        Centre of the working surface (mean of the corners), lab frame.
    origin : ndarray, shape (3,)
        ORIGIN with the positive-z quirk corrected (negated when z > 0).
    """

    R: np.ndarray
    center: np.ndarray
    origin: np.ndarray


def plate_frame(corners, origin, *, plate_type: int = 2) -> PlateFrame:
    """Orientation, surface centre and corrected ORIGIN of a force plate.

    Parameters
    ----------
    corners : array_like, shape (4, 3)
        FORCE_PLATFORM:CORNERS of one plate in the lab frame (any length unit).
    origin : array_like, shape (3,)
        FORCE_PLATFORM:ORIGIN of the plate (plate frame, same unit).
    plate_type : int
        C3D plate type 1-4; for type 1 only the z component of ORIGIN is used.

    Returns
    -------
    PlateFrame
        ``R`` (3, 3) ``lab_R_plate``, ``center`` (3,) of the working surface
        in the lab frame, ``origin`` (3,) with the positive-z quirk corrected.

    Raises
    ------
    DataError
        If the corners are degenerate (collinear or coincident).

    Examples
    --------
    >>> f = plate_frame([[1, 1, 0], [-1, 1, 0], [-1, -1, 0], [1, -1, 0]], [0, 0, 40])
    >>> f.R.round(3).tolist(), f.origin.tolist()
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [-0.0, -0.0, -40.0])
    """
    c = as_float_array(corners, "corners")
    if c.shape != (4, 3):
        raise DataError(f"Expected `corners` to have shape (4, 3), got {c.shape}")
    o = as_float_array(origin, "origin").reshape(-1).copy()
    plate_type = as_int(plate_type, "plate_type", minimum=0)
    if o.shape != (3,):
        raise DataError(f"Expected `origin` to have shape (3,), got {o.shape}")
    x = c[0] - c[1]
    y = c[0] - c[3]
    z = cross(x, y)
    y = cross(z, x)
    norms = np.array([np.linalg.norm(x), np.linalg.norm(y), np.linalg.norm(z)])
    if not np.all(np.isfinite(norms)) or np.any(norms < 1e-12 * max(1.0, np.abs(c).max())):
        raise DataError(f"force plate corners {c.tolist()} are degenerate; check CORNERS")
    R = np.column_stack([x / norms[0], y / norms[1], z / norms[2]])
    if plate_type == 1:
        o[:2] = 0.0
    if plate_type in (1, 2, 3, 4) and o[2] > 0:
        o = -o
    return PlateFrame(R, c.mean(axis=0), o)


def plate_wrench(channels, plate_type: int, origin, *, cal_matrix=None, cop_poly=None):
    """Force and moment about the surface centre, in the plate frame.

    Parameters
    ----------
    channels : array_like, shape (n, 6) or (n, 8)
        The plate's analog channels in physical units, in FORCE_PLATFORM:CHANNEL
        order: type 1 ``Fx Fy Fz COPx COPy Tz``; types 2 and 4 ``Fx Fy Fz Mx My
        Mz``; type 3 ``Fx12 Fx34 Fy14 Fy23 Fz1 Fz2 Fz3 Fz4``.
    plate_type : {1, 2, 3, 4}
    origin : array_like, shape (3,)
        Corrected ORIGIN (see :func:`plate_frame`): sensor origin to surface
        centre; for type 3 ``(a, b, az0)``, the sensor offsets of the Kistler
        plate.
    cal_matrix : array_like, shape (6, 6), optional
        Type 4 calibration matrix, ``[F; M] = cal_matrix @ channels``.
    cop_poly : array_like, shape (12,), optional
        Type 3 COP correction polynomial (FORCE_PLATFORM:FPCOPPOLY).

    Returns
    -------
    force, moment : ndarray, shape (n, 3)
        Force on the plate and moment about the surface centre, plate frame.
    cop : ndarray or None, shape (n, 3)
        For type 1, the COP given by the channels (plate frame, relative to the
        surface centre); for type 3 with ``cop_poly``, the corrected COP
        (threshold not applied); otherwise None.

    Notes
    -----
    Types 2/4: ``M_c = M_o + F x ORIGIN``. Type 3 (Kistler):
    ``Mx = b (fz1 + fz2 - fz3 - fz4)``, ``My = a (-fz1 + fz2 + fz3 - fz4)``,
    ``Mz = b (fx34 - fx12) + a (fy14 - fy23)``, then
    ``M_c = M + F x (0, 0, az0)``. Type 1: ``M_c = r x F + (0, 0, Tz)``.

    Examples
    --------
    >>> f, m, _ = plate_wrench([[0, 0, 100, 0, 0, 0]], 2, [0, 0, -40])
    >>> m.tolist()
    [[0.0, 0.0, 0.0]]
    """
    ch = as_float_array(channels, "channels", allow_nan=True)
    plate_type = as_int(plate_type, "plate_type", minimum=0)
    if plate_type not in _N_CHANNELS:
        raise DataError(f"force plate type {plate_type} is not supported (1, 2, 3 or 4)")
    nch = _N_CHANNELS[plate_type]
    if ch.ndim != 2 or ch.shape[1] != nch:
        raise DataError(
            f"Expected `channels` to have shape (n, {nch}) for a type {plate_type} plate, "
            f"got {ch.shape}"
        )
    o = as_float_array(origin, "origin")
    if o.size != 3:
        raise DataError(f"Expected `origin` to have shape (3,), got {o.shape}")
    o = o.reshape(3)
    cop = None
    if plate_type in (2, 4):
        if plate_type == 4:
            if cal_matrix is None:
                raise DataError("a type 4 force plate needs `cal_matrix` (6, 6)")
            cal = np.asarray(cal_matrix, dtype=np.float64)
            if cal.shape != (6, 6):
                raise DataError(f"Expected `cal_matrix` to have shape (6, 6), got {cal.shape}")
            ch = ch @ cal.T
        force = ch[:, :3].copy()
        moment = ch[:, 3:6] + cross(force, o)
    elif plate_type == 3:
        a, b, az0 = o
        fx12, fx34, fy14, fy23, fz1, fz2, fz3, fz4 = ch.T
        force = np.column_stack([fx12 + fx34, fy14 + fy23, fz1 + fz2 + fz3 + fz4])
        moment = np.column_stack(
            [
                b * (fz1 + fz2 - fz3 - fz4),
                a * (fz2 + fz3 - fz1 - fz4),
                b * (fx34 - fx12) + a * (fy14 - fy23),
            ]
        )
        moment = moment + cross(force, np.array([0.0, 0.0, az0]))
        if cop_poly is not None:
            p = np.asarray(cop_poly, dtype=np.float64).reshape(12)
            with np.errstate(divide="ignore", invalid="ignore"):
                x = -moment[:, 1] / force[:, 2]
                y = moment[:, 0] / force[:, 2]
            dx = (p[0] * y**4 + p[1] * y**2 + p[2]) * x**3
            dx += (p[3] * y**4 + p[4] * y**2 + p[5]) * x
            dy = (p[6] * x**4 + p[7] * x**2 + p[8]) * y**3
            dy += (p[9] * x**4 + p[10] * x**2 + p[11]) * y
            cop = np.column_stack([x - dx, y - dy, np.zeros_like(x)])
    else:  # type 1
        force = ch[:, :3].copy()
        cop = np.column_stack([ch[:, 3], ch[:, 4], np.zeros(len(ch))])
        moment = cross(cop, force)
        moment[:, 2] += ch[:, 5]
    return force, moment, cop


def wrench_to_cop(force, moment, normal, *, threshold: float = 10.0):
    """Centre of pressure and free torque from a force and a moment.

    Parameters
    ----------
    force : array_like, shape (..., 3)
        Force on the plate, N.
    moment : array_like, shape (..., 3)
        Moment about a point of the plate surface (the surface centre), N m.
    normal : array_like, shape (3,)
        Unit normal of the plate surface, same frame as `force`.
    threshold : float, optional
        COP and free torque are NaN where ``|normal . force|`` is below this
        value (N). Default 10 N.

    Returns
    -------
    cop : ndarray, shape (..., 3)
        COP relative to the moment's reference point (in the surface plane), m.
    free_moment : ndarray, shape (..., 3)
        Free torque about the COP (along `normal`), N m.

    Notes
    -----
    The COP ``r`` solves ``M - r x F = T n`` with ``r . n = 0``; crossing with
    ``n`` gives ``r = (n x M) / (n . F)``, then ``T = M - r x F``.

    Examples
    --------
    >>> cop, t = wrench_to_cop([0, 0, 100.0], [5.0, -10.0, 2.0], [0, 0, 1])
    >>> cop[:2].tolist(), t.tolist()
    ([0.1, 0.05], [0.0, 0.0, 2.0])
    """
    F = check_trailing_shape(as_float_array(force, "force", allow_nan=True), (3,), "force")
    M = check_trailing_shape(as_float_array(moment, "moment", allow_nan=True), (3,), "moment")
    batch = broadcast_batch(("force", F, 1), ("moment", M, 1))
    F, M = np.broadcast_to(F, batch + (3,)), np.broadcast_to(M, batch + (3,))
    n = as_float_array(normal, "normal")
    if n.shape != (3,):
        raise DataError(f"Expected `normal` to have shape (3,), got {n.shape}")
    threshold = as_nonnegative_float(threshold, "threshold", unit="N")
    fn = F @ n
    small = ~(np.abs(fn) >= threshold)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cross(n, M) / np.where(small, np.nan, fn)[..., None]
    r[small] = np.nan
    free = M - cross(r, F)
    return r, free


def remove_zero_offset(analogs, interval, *, axis: int = 0):
    """Subtract each channel's mean over a baseline interval.

    Parameters
    ----------
    analogs : array_like, shape (n_samples, n_channels)
    interval : tuple of int
        ``(start, stop)`` sample indices (Python slice semantics) of an interval
        without load on the plate.
    axis : int
        Time axis (default 0).

    Returns
    -------
    ndarray
        A copy with the baseline removed.

    Raises
    ------
    DataError
        If the interval is empty or outside the data.

    Examples
    --------
    >>> remove_zero_offset([[1.0], [3.0], [5.0]], (0, 2)).ravel().tolist()
    [-1.0, 1.0, 3.0]
    """
    a = as_float_array(analogs, "analogs", allow_nan=True).copy()
    if a.ndim == 0:
        raise DataError("Expected `analogs` to be an array of samples, got a scalar")
    axis = as_int(axis, "axis")
    if not -a.ndim <= axis < a.ndim:
        raise DataError(f"`axis`={axis} is out of range for `analogs` with shape {a.shape}")
    iv = as_float_array(interval, "interval")
    if iv.shape != (2,):
        raise DataError(f"Expected `interval` to be (start, stop) sample indices, got {interval!r}")
    start, stop = (as_int(v, "interval") for v in iv)
    n = a.shape[axis]
    if not (0 <= start < stop <= n):
        raise DataError(
            f"`interval` ({start}, {stop}) must satisfy 0 <= start < stop <= {n} (samples)"
        )
    base = np.take(a, np.arange(start, stop), axis=axis).mean(axis=axis, keepdims=True)
    return a - base


def resample_force_plate(plate: ForcePlate, rate: float, *, cop_threshold: float = 10.0):
    """Resample a force plate to another rate (e.g. the point rate).

    Force and moment (about the surface centre) are averaged over blocks of
    ``k`` samples when ``plate.rate / rate`` is an integer ``k`` (the C3D
    layout: ``k`` analog samples per point frame), else linearly
    interpolated; COP and free torque are recomputed from the resampled
    wrench (not averaged, which would bias the COP).

    Parameters
    ----------
    plate : ForcePlate
    rate : float
        Target rate, Hz.
    cop_threshold : float
        Vertical force below which the COP is NaN, N.

    Returns
    -------
    ForcePlate
        A new plate at `rate`.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io import ForcePlate
    >>> c = np.array([[0.2, 0.3, 0], [-0.2, 0.3, 0], [-0.2, -0.3, 0], [0.2, -0.3, 0]])
    >>> z = np.zeros((4, 3)); f = np.tile([0.0, 0.0, 500.0], (4, 1))
    >>> p = ForcePlate(f, z, z, z, c, np.zeros(3), 200.0, 2)
    >>> resample_force_plate(p, 100.0).force.shape
    (2, 3)
    """
    if not isinstance(plate, ForcePlate):
        raise DataError(f"Expected `plate` to be a ForcePlate, got {type(plate).__name__}")
    rate = as_positive_float(rate, "rate", unit="Hz")
    cop_threshold = as_nonnegative_float(cop_threshold, "cop_threshold", unit="N")
    if not plate.rate > 0:
        raise DataError("`plate.rate` is not set; cannot resample")
    ratio = plate.rate / rate
    F = np.asarray(plate.force, dtype=np.float64)
    M = np.asarray(plate.moment, dtype=np.float64)
    k = int(round(ratio))
    if k >= 1 and abs(ratio - k) < 1e-9:
        n = F.shape[0] // k
        Fr = F[: n * k].reshape(n, k, 3).mean(axis=1)
        Mr = M[: n * k].reshape(n, k, 3).mean(axis=1)
    else:
        t_in = np.arange(F.shape[0]) / plate.rate
        n = int(math.floor((F.shape[0] - 1) * rate / plate.rate)) + 1 if F.shape[0] else 0
        t_out = np.arange(n) / rate
        Fr = np.column_stack([np.interp(t_out, t_in, F[:, i]) for i in range(3)])
        Mr = np.column_stack([np.interp(t_out, t_in, M[:, i]) for i in range(3)])
    R = plate_frame(plate.corners, np.zeros(3), plate_type=0).R
    r, free = wrench_to_cop(Fr, Mr, R[:, 2], threshold=cop_threshold)
    return replace(
        plate,
        force=Fr,
        moment=Mr,
        cop=r + np.asarray(plate.origin, dtype=np.float64),
        free_moment=free,
        rate=rate,
    )


def _param(tree, name):
    return tree.get("FORCE_PLATFORM", {}).get(name)


def force_plates_from_c3d(
    trial: Trial,
    *,
    cop_threshold: float = 10.0,
    zero=None,
    rate: str | float | None = None,
) -> list[ForcePlate]:
    """Compute the force plates of a trial read from a C3D file.

    Parameters
    ----------
    trial : Trial
        A trial returned by :func:`ahbm.io.read_c3d` (its ``parameters`` must
        hold the FORCE_PLATFORM group and ``analogs`` the scaled channels).
    cop_threshold : float, optional
        Vertical force (N) below which the COP and free torque are NaN.
    zero : None, "file" or (start, stop), optional
        Zero-offset removal before computing: None (default) none; a
        ``(start, stop)`` analog-sample interval; ``"file"`` the point frames
        given by FORCE_PLATFORM:ZERO (1-based; ``[0, 0]`` disables it).
    rate : None, "point" or float, optional
        None keeps the analog rate; ``"point"`` or a number resamples with
        :func:`resample_force_plate`.

    Returns
    -------
    list of ForcePlate
        Force (N), moment about the surface centre (N m), COP (m), free
        torque (N m), corners and surface centre (m), all in the lab frame.

    Raises
    ------
    FileFormatError
        If the FORCE_PLATFORM parameters are missing or too small for
        FORCE_PLATFORM:USED plates.

    Warns
    -----
    AhbmWarning
        A plate that cannot be computed -- zero-size, collinear or non-finite
        CORNERS/ORIGIN, CHANNEL entries the file lacks, an unsupported TYPE,
        a type 4 plate without CAL_MATRIX -- is skipped with a warning giving
        its number and the reason; the other plates are returned, in file
        order. Samples whose force exceeds ``MAX_PLATE_FORCE`` (1e6 N)
        are marked missing (NaN force, moment, COP and free torque) with a
        warning naming the plate, its channels and the frames.

    Examples
    --------
    >>> from ahbm.io import read_c3d                       # doctest: +SKIP
    >>> plates = force_plates_from_c3d(read_c3d("gait-raw.c3d"), rate="point")  # doctest: +SKIP
    """
    if not isinstance(trial, Trial):
        raise DataError(
            f"Expected `trial` to be a Trial (from read_c3d), got {type(trial).__name__}"
        )
    cop_threshold = as_nonnegative_float(cop_threshold, "cop_threshold", unit="N")
    if rate is not None and not (isinstance(rate, str) and rate == "point"):
        rate = as_positive_float(rate, "rate", unit="Hz")
    tree = trial.parameters
    src = trial.source or "(trial)"
    used = _param(tree, "USED")
    if used is None:
        return []
    try:
        n_plates = int(np.asarray(used).reshape(-1)[0])
    except (IndexError, TypeError, ValueError):
        raise FileFormatError(f"{src}: FORCE_PLATFORM:USED is not a number") from None
    if n_plates <= 0:
        return []
    if n_plates > 255:
        raise FileFormatError(f"{src}: FORCE_PLATFORM:USED = {n_plates} is not plausible")
    header = tree.get("__header__", {})
    unit = str(header.get("point_units", "mm"))
    # the same lenient reading of POINT:UNITS as the points (C3D User Guide: plate
    # corners, origins and moments are in the point unit), so they never disagree
    pos_scale = _unit_factor(unit, lenient=True)
    if pos_scale is None:
        _warn(f"{src}: unknown POINT:UNITS {unit!r}; force plate positions taken as mm")
        pos_scale = 1e-3

    def numeric(name, min_size):
        v = _param(tree, name)
        if not isinstance(v, np.ndarray) or v.size < min_size:
            raise FileFormatError(
                f"{src}: FORCE_PLATFORM:{name} is missing or too small for {n_plates} plates"
            )
        return v

    types = numeric("TYPE", n_plates).reshape(-1)
    corners_all = numeric("CORNERS", 12 * n_plates).reshape(-1, order="F")
    origins_all = numeric("ORIGIN", 3 * n_plates).reshape(-1, order="F")
    chan = numeric("CHANNEL", n_plates)
    chan = chan.reshape(chan.shape[0], -1, order="F") if chan.ndim >= 1 else chan
    analogs = np.asarray(trial.analogs, dtype=np.float64)
    if zero is not None:
        interval = _zero_interval(zero, tree, analogs.shape[0], trial, src)
        if interval is not None:
            analogs = remove_zero_offset(analogs, interval)
    cal = _param(tree, "CAL_MATRIX")
    poly = _param(tree, "FPCOPPOLY")
    plates = []
    for i in range(n_plates):
        try:
            plate = _one_plate(
                i, trial, types, corners_all, origins_all, chan, analogs, cal, poly,
                pos_scale, unit, cop_threshold, src,
            )  # fmt: skip
        except (FileFormatError, DataError) as err:
            # one bad plate (zero-size, collinear or non-finite corners, channels the file
            # lacks, ...) must not cost the others: skip it, loudly, and go on
            reason = str(err).removeprefix(f"{src}: ").removeprefix(f"force plate {i + 1}: ")
            _warn(
                f"{src}: force plate {i + 1} of {n_plates} skipped: {reason}; the other "
                "plates are kept (trial.force_plates holds them in file order)"
            )
            continue
        if plate is not None:
            plates.append(plate)
    if rate is not None:
        target = trial.point_rate if rate == "point" else float(rate)
        plates = [resample_force_plate(p, target, cop_threshold=cop_threshold) for p in plates]
    return plates


#: Forces beyond this (N) are no measurement (a bad calibration or a corrupted file).
MAX_PLATE_FORCE = 1e6


def _one_plate(
    i, trial, types, corners_all, origins_all, chan, analogs, cal, poly, pos_scale, unit,
    cop_threshold, src,
):  # fmt: skip
    """ForcePlate `i` (0-based) of FORCE_PLATFORM, None for an unsupported type (warned).

    Raises FileFormatError (or DataError) naming what is wrong with this plate only.
    """
    ptype = int(types[i])
    if ptype not in _N_CHANNELS:
        _warn(
            f"{src}: force plate {i + 1} has type {ptype}; only types 1-4 are supported, "
            "plate skipped"
        )
        return None
    nch = _N_CHANNELS[ptype]
    if chan.shape[0] < nch or chan.shape[1] <= i:
        raise FileFormatError(
            f"FORCE_PLATFORM:CHANNEL has shape {chan.shape}; plate {i + 1} of type "
            f"{ptype} needs {nch} channels"
        )
    idx = chan[:nch, i].astype(np.int64) - 1
    if np.any(idx < 0) or np.any(idx >= analogs.shape[1]):
        raise FileFormatError(
            f"FORCE_PLATFORM:CHANNEL for plate {i + 1} refers to channels "
            f"{(idx + 1).tolist()} but the file has {analogs.shape[1]} analog channels"
        )
    corners = corners_all[12 * i : 12 * i + 12].reshape(4, 3).astype(np.float64)
    origin = origins_all[3 * i : 3 * i + 3].astype(np.float64)
    if not (np.all(np.isfinite(corners)) and np.all(np.isfinite(origin))):
        raise FileFormatError(
            f"non-finite FORCE_PLATFORM:CORNERS/ORIGIN (corners {corners.tolist()}, "
            f"origin {origin.tolist()})"
        )
    try:
        frame = plate_frame(corners * pos_scale, origin * pos_scale, plate_type=ptype)
        R, center, origin = frame.R, frame.center, frame.origin
    except DataError as err:
        raise FileFormatError(f"{err} (a zero-size or collinear plate)") from None
    _check_plate_size(corners * pos_scale, i, unit, src)
    cal_i = _cal_matrix(cal, i, src) if ptype == 4 else None
    poly_i = None
    if ptype == 3 and isinstance(poly, np.ndarray) and poly.size >= 12 * (i + 1):
        poly_i = poly.reshape(-1, order="F")[12 * i : 12 * i + 12]
    ch = analogs[:, idx]
    if ptype == 1:
        ch = ch.copy()
        ch[:, 3:5] *= pos_scale
        ch[:, 5] *= pos_scale
    with np.errstate(over="ignore", invalid="ignore"):
        if ptype in (2, 4):
            # moments are in N x (point unit) after calibration: scale them after cal
            if cal_i is not None:
                ch = ch @ cal_i.T
            ch = ch.copy()
            ch[:, 3:6] *= pos_scale
            f, m, cop_p = plate_wrench(ch, 2, origin)
        else:
            f, m, cop_p = plate_wrench(ch, ptype, origin, cop_poly=poly_i)
        normal = np.array([0.0, 0.0, 1.0])
        r, free = wrench_to_cop(f, m, normal, threshold=cop_threshold)
        if ptype == 3 and cop_p is not None:
            r = np.where(np.isnan(r), np.nan, cop_p)
            free = m - cross(r, f)
        f, m, r, free = f @ R.T, m @ R.T, r @ R.T + center, free @ R.T
    _drop_implausible_forces(f, m, r, free, i, trial, idx, src)
    return ForcePlate(
        force=f,
        moment=m,
        cop=r,
        free_moment=free,
        corners=corners * pos_scale,
        origin=center,
        rate=float(trial.analog_rate),
        plate_type=ptype,
    )


def _drop_implausible_forces(f, m, r, free, i, trial, idx, src) -> None:
    """Mark missing (NaN, in place) the samples whose force exceeds MAX_PLATE_FORCE; warn.

    No plate measures a mega-newton: such a sample comes from a wrong calibration
    (ANALOG:SCALE, CAL_MATRIX) or a corrupted file, and must not pass for data.
    """
    with np.errstate(invalid="ignore"):
        bad = (np.abs(f) > MAX_PLATE_FORCE).any(axis=1)  # NaN (missing) compares False
    if not bad.any():
        return
    rows = np.flatnonzero(bad)
    spf = trial.analog_rate / trial.point_rate if trial.point_rate > 0 else 0.0
    where = f"analog samples {rows[0]}-{rows[-1]}"
    if spf >= 1:
        where += f" (frames {int(rows[0] // spf)}-{int(rows[-1] // spf)}, 0-based)"
    labels = list(trial.analog_labels)
    names = [labels[k] if 0 <= k < len(labels) else f"channel {k + 1}" for k in idx]
    with np.errstate(invalid="ignore", over="ignore"):
        peak = float(np.nanmax(np.abs(f[rows])))
    _warn(
        f"{src}: force plate {i + 1}: {rows.size} samples ({where}) have forces up to "
        f"{peak:.3g} N, beyond {MAX_PLATE_FORCE:.0e} N, which no plate measures; they are "
        f"marked missing (NaN). Check the calibration of its channels "
        f"{', '.join(map(repr, names))} (ANALOG:SCALE, GEN_SCALE, OFFSET, "
        "FORCE_PLATFORM:CAL_MATRIX)"
    )
    for arr in (f, m, r, free):
        arr[rows] = np.nan


#: Side lengths (m) of the force plates in use: 0.1 m (small stair plates) to 3 m (walkways).
_PLATE_SIDE = (0.1, 3.0)


def _check_plate_size(corners, i, unit, src) -> None:
    """Warn when a plate's sides (corners in m) are outside `_PLATE_SIDE`.

    A plate of 0.9 mm x 0.6 mm or 600 m x 400 m means that POINT:UNITS does not
    say the unit the corners were written in.
    """
    sides = np.linalg.norm(corners[[0, 0]] - corners[[1, 3]], axis=1)
    lo, hi = _PLATE_SIDE
    if np.all((sides >= lo) & (sides <= hi)):
        return
    _warn(
        f"{src}: force plate {i + 1} measures {sides[0]:.4g} m x {sides[1]:.4g} m from "
        f"FORCE_PLATFORM:CORNERS read in POINT:UNITS {unit!r}; plates are {lo:g}-{hi:g} m "
        "wide, so POINT:UNITS probably does not give the unit of the corners (and of the "
        "points); check the file's POINT:UNITS"
    )


def _cal_matrix(cal, i, src):
    if not isinstance(cal, np.ndarray) or cal.ndim < 2 or cal.size == 0:
        raise FileFormatError(f"{src}: force plate {i + 1} is type 4 but CAL_MATRIX is missing")
    if cal.ndim == 2:
        cal = cal[:, :, None]
    if cal.shape[0] < 6 or cal.shape[1] < 6 or cal.shape[2] <= i:
        raise FileFormatError(
            f"{src}: FORCE_PLATFORM:CAL_MATRIX has shape {cal.shape}; plate {i + 1} needs 6x6"
        )
    # C3D stores the matrix column-major: CAL_MATRIX[r, c, plate]
    return np.asarray(cal[:6, :6, i], dtype=np.float64)


def _zero_interval(zero, tree, n_samples, trial, src):
    if isinstance(zero, str):
        if zero != "file":
            raise DataError(f"`zero` must be None, 'file' or (start, stop), got {zero!r}")
        z = _param(tree, "ZERO")
        if not isinstance(z, np.ndarray) or z.size < 2:
            return None
        z0, z1 = (int(v) for v in z.reshape(-1)[:2])
        if z0 == 0 and z1 == 0:
            return None
        spf = int(round(trial.analog_rate / trial.point_rate)) if trial.point_rate > 0 else 1
        start = (max(z0, 1) - 1) * spf
        stop = min(z1 * spf, n_samples)
        if stop <= start:
            _warn(
                f"{src}: FORCE_PLATFORM:ZERO = [{z0}, {z1}] is not a usable frame range; "
                "no zero-offset removal"
            )
            return None
        return start, stop
    try:
        start, stop = (int(v) for v in zero)
    except (TypeError, ValueError):
        raise DataError(f"`zero` must be None, 'file' or (start, stop), got {zero!r}") from None
    return start, stop
