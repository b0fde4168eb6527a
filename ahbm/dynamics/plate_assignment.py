"""Force plate loads assigned to the feet in contact, frame by frame.

:func:`assign_force_plates` turns force plate recordings into the external
spatial forces ``[moment about the lab origin; force]`` (lab frame) on the
segments of :func:`~ahbm.dynamics.segmental.newton_euler`;
:func:`feet_on_plate` tells from the markers alone which feet stand on a
plate.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import (
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    check_trailing_shape,
    sample_times,
)
from ahbm.errors import AhbmWarning, DataError
from ahbm.types import ResultRepr

__all__ = [
    "PlateAssignment",
    "assign_force_plates",
    "feet_on_plate",
    "first_foot_takes_shared_plates",
]


@dataclass(frozen=True, repr=False)
class PlateAssignment(ResultRepr):
    """Force plate loads assigned to segments (output of :func:`assign_force_plates`).

    Attributes
    ----------
    f_ext : ndarray, shape (n_frames, n_segments, 6)
        External spatial force on each segment ``[moment about the lab origin;
        force]``, lab frame, N m and N; zero where nothing is assigned.
    contact : ndarray of bool, shape (n_frames, n_segments)
        True where a plate load is assigned to the segment.
    ambiguous : ndarray of bool, shape (n_frames, n_segments)
        True where a loaded plate could not be attributed to one segment (two
        candidate segments on the same plate, or none near the centre of
        pressure); the kinetics of these segments are unknown in those frames.
    plate_of : ndarray of int, shape (n_frames, n_plates)
        Index of the segment each plate is assigned to, -1 when unloaded or
        unassigned.
    """

    f_ext: np.ndarray
    contact: np.ndarray
    ambiguous: np.ndarray
    plate_of: np.ndarray


def _plate_wrench_at(plate, k: int, time, threshold: float):
    """Force and moment about the lab origin of one plate, at the given times."""
    f = np.asarray(plate.force, dtype=float)
    cop = np.asarray(plate.cop, dtype=float)
    tq = np.asarray(plate.free_moment, dtype=float)
    if f.ndim != 2 or f.shape[1] != 3 or cop.shape != f.shape or tq.shape != f.shape:
        raise DataError(
            f"force plate {k}: `force`, `cop` and `free_moment` must all be (n_samples, 3), "
            f"got {f.shape}, {cop.shape}, {tq.shape}"
        )
    if not (np.isfinite(plate.rate) and plate.rate > 0):
        raise DataError(f"force plate {k}: `rate` must be positive, got {plate.rate!r}")
    loaded = np.isfinite(f).all(1) & (np.abs(f[:, 2]) > threshold) & np.isfinite(cop).all(1)
    f0 = np.where(loaded[:, None], f, 0.0)
    n0 = np.where(loaded[:, None], cross(cop, f) + np.nan_to_num(tq), 0.0)
    ts = time[0] + np.arange(f.shape[0]) / float(plate.rate)
    out = np.empty((time.size, 6))
    for j in range(3):
        out[:, j] = np.interp(time, ts, n0[:, j], left=0.0, right=0.0)
        out[:, 3 + j] = np.interp(time, ts, f0[:, j], left=0.0, right=0.0)
    return out


def _distance_to_segments(p, a, b):
    """Horizontal (x, y) distance from points p (n, 3) to segments a-b (n, k, 3)."""
    p2 = p[:, None, :2]
    a2, b2 = a[..., :2], b[..., :2]
    d = b2 - a2
    L2 = np.sum(d * d, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.clip(np.sum((p2 - a2) * d, -1) / np.where(L2 > 0, L2, 1.0), 0.0, 1.0)
    q = a2 + u[..., None] * d
    return np.linalg.norm(p2 - q, axis=-1)


def assign_force_plates(
    plates,
    feet,
    *,
    rate: float | None = None,
    time=None,
    n_segments: int | None = None,
    threshold: float = 20.0,
    max_distance: float = 0.12,
    margin: float = 0.05,
    max_speed: float = 2.0,
    contact_height: float | None = 0.02,
    warn: bool = True,
) -> PlateAssignment:
    """Assign force plate loads to the feet in contact, frame by frame.

    Parameters
    ----------
    plates : sequence of ForcePlate
        Plates with ``force``, ``cop``, ``free_moment`` (n_samples, 3) in the
        lab frame (ground reaction on the subject) and ``rate``; sample 0 is
        at the first frame time.
    feet : dict
        ``{segment_index: points}`` with `points` (n_frames, n_points, 3) in
        m, at least two points spanning the foot from back to front (e.g.
        heel or ankle centre, then toe). NaN frames make the foot unavailable
        in those frames.
    rate : float, optional
        Kinematic frame rate, Hz (first frame at 0 s).
    time : array_like, shape (n_frames,), optional
        Kinematic frame times, s (e.g. ``trial.time``). Give exactly one of
        `rate` and `time`. The 0.1 order ``(plates, time, feet)`` still works
        until 0.3 and warns once.
    n_segments : int, optional
        Number of segments of the result (default: largest foot index + 1).
    threshold : float, optional
        Vertical force below which a plate is unloaded, N (default 20).
    max_distance : float, optional
        Largest horizontal distance from the centre of pressure to a foot's
        heel-toe line for the foot to be in contact with the plate, m.
    margin : float, optional
        When two feet qualify, the nearer one still gets the load if the other
        is more than `margin` farther from the COP (a swinging foot passing
        beside the stance foot), m.
    max_speed : float, optional
        A foot qualifies only while its slowest point moves slower than this
        horizontally, m/s (a foot in contact has a nearly stationary point).
    contact_height : float or None, optional
        A foot point is on the ground while it is less than this above its
        own lowest height in the trial (its 2nd percentile) and moves slower
        than `max_speed`, m (default 0.02). When grounded points of two feet
        lie inside the outline of one loaded plate (the plate's ``corners``),
        the plate carries both feet and the frame is ambiguous for both, even
        if its centre of pressure is near one of them: the trailing foot's toe
        and the leading foot's heel on one plate, or a foot across the line
        between two treadmill belts onto the other foot's belt. None turns
        this test off.
    warn : bool, optional
        Warn about loaded frames that cannot be assigned to exactly one foot.

    Returns
    -------
    PlateAssignment
        Plate wrenches summed per foot (several plates per foot add up).

    Raises
    ------
    DataError
        Bad plate arrays, bad feet, or no loaded plate frame at all.

    Notes
    -----
    Plate signals are reduced to the lab origin at the plate rate
    (``n = r_cop × F + T_free``; the wrench is linear, the COP is not) and
    interpolated linearly at the frame times. A loaded plate goes to the foot
    whose heel-toe line passes within `max_distance` of its COP; when two feet
    qualify (both feet on one plate) or none does, the frame is marked
    `ambiguous` for the candidate feet (or all feet), since a plate measures
    only the sum of the loads; so is a frame in which grounded points of two
    feet are on the plate (`contact_height`). A foot can be `ambiguous` on one
    plate and in `contact` with another in the same frame: its total load is
    then unknown. Several plates under one foot add up; one plate
    touched by the two feet in turn is split in time.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io.trial import ForcePlate
    >>> n = 11; f = np.tile([0.0, 0.0, 700.0], (n, 1)); cop = np.tile([0.1, 0, 0], (n, 1))
    >>> fp = ForcePlate(f, np.zeros((n, 3)), cop, np.zeros((n, 3)), np.zeros((4, 3)),
    ...                 np.zeros(3), rate=100.0)
    >>> foot = np.tile([[0.0, 0, 0.05], [0.2, 0, 0.0]], (n, 1, 1))
    >>> a = assign_force_plates([fp], {0: foot}, rate=100.0)
    >>> a.f_ext[0, 0].round(3).tolist()
    [0.0, -70.0, 0.0, 0.0, 0.0, 700.0]
    """
    if not isinstance(feet, Mapping) or not feet:
        raise DataError("`feet` is empty; give {segment_index: foot points} for each foot")
    if isinstance(plates, (str, bytes, dict)) or not hasattr(plates, "__len__"):
        raise DataError(f"Expected `plates` to be a list of ForcePlate, got {plates!r:.60}")
    for k, plate in enumerate(plates):
        if not all(hasattr(plate, a) for a in ("force", "cop", "free_moment", "rate")):
            raise DataError(
                f"`plates[{k}]` is {type(plate).__name__}; expected a ForcePlate with force, "
                "cop, free_moment and rate"
            )
    threshold = as_nonnegative_float(threshold, "threshold", unit="N")
    max_distance = as_nonnegative_float(max_distance, "max_distance", unit="m")
    margin = as_nonnegative_float(margin, "margin", unit="m")
    max_speed = as_positive_float(max_speed, "max_speed", unit="m/s")
    if contact_height is not None:
        contact_height = as_nonnegative_float(contact_height, "contact_height", unit="m")
    first = as_float_array(next(iter(feet.values())), "feet", allow_nan=True)
    n_frames = (first.shape[0] if first.ndim else 0) if time is None else np.size(time)
    t = sample_times(n_frames, rate=rate, time=time)
    idx = [as_int(i, "feet (segment index)", minimum=0) for i in feet]
    n_seg = as_int(n_segments, "n_segments", minimum=1) if n_segments is not None else max(idx) + 1
    pts = {}
    for key, i in zip(feet, idx, strict=True):
        if not 0 <= i < n_seg:
            raise DataError(f"foot segment index {i} is outside 0..{n_seg - 1}")
        a = as_float_array(feet[key], f"feet[{i}]", allow_nan=True)
        if a.ndim == 2:
            a = a[:, None, :]
        if a.ndim != 3 or a.shape[0] != t.size or a.shape[1] < 2 or a.shape[2] != 3:
            raise DataError(
                f"Expected `feet[{i}]` to have shape ({t.size}, n_points >= 2, 3), got {a.shape}"
            )
        pts[i] = a
    slow = {}
    for i, a in pts.items():
        if t.size >= 3:
            v = np.gradient(a[..., :2], t, axis=0)
            speed = np.linalg.norm(v, axis=-1)
            slow[i] = np.nanmin(np.where(np.isfinite(speed), speed, np.inf), axis=1) < max_speed
        else:
            slow[i] = np.ones(t.size, bool)
    f_ext = np.zeros((t.size, n_seg, 6))
    contact = np.zeros((t.size, n_seg), bool)
    ambiguous = np.zeros((t.size, n_seg), bool)
    plate_of = np.full((t.size, len(plates)), -1, dtype=int)
    any_loaded = False
    for k, plate in enumerate(plates):
        w = _plate_wrench_at(plate, k, t, threshold)
        fz = w[:, 5]
        loaded = np.abs(fz) > threshold
        if not loaded.any():
            continue
        any_loaded = True
        corners = np.asarray(getattr(plate, "corners", np.zeros((4, 3))), dtype=float)
        h = float(np.mean(corners[:, 2])) if np.isfinite(corners).all() else 0.0
        cop = np.zeros((t.size, 3))
        with np.errstate(invalid="ignore", divide="ignore"):
            # COP on the plate surface z = h: n = r x F + T e_z with r = (x, y, h)
            cop[:, 0] = (h * w[:, 3] - w[:, 1]) / fz
            cop[:, 1] = (w[:, 0] + h * w[:, 4]) / fz
        dist = np.full((t.size, len(idx)), np.inf)
        for c, i in enumerate(idx):
            a = pts[i]
            d = _distance_to_segments(cop, a[:, :-1], a[:, 1:])
            d = np.where(np.isfinite(d), d, np.inf).min(axis=1)
            dist[:, c] = np.where(slow[i], d, np.inf)
        near = dist <= max_distance
        n_near = near.sum(1)
        order = np.sort(dist, axis=1)
        if len(idx) > 1:
            with np.errstate(invalid="ignore"):
                clear = order[:, 1] - order[:, 0] > margin
            resolve = (n_near > 1) & clear
            near = np.where(resolve[:, None], dist == order[:, :1], near)
            n_near = near.sum(1)
        if contact_height is not None and _outline_area(corners) > 1e-4:  # known outline
            on = feet_on_plate(
                [pts[i] for i in idx], corners, time=t, contact_height=contact_height,
                max_speed=max_speed,
            )  # fmt: skip
            shared = loaded & (on.sum(1) > 1)
            near[shared] |= on[shared]
            n_near = near.sum(1)
        one = loaded & (n_near == 1)
        who = np.argmax(near, axis=1)
        for c, i in enumerate(idx):
            sel = one & (who == c)
            f_ext[sel, i] += w[sel]
            contact[sel, i] = True
            plate_of[sel, k] = i
            amb = loaded & (n_near > 1) & near[:, c]
            ambiguous[amb, i] = True
        none = loaded & (n_near == 0)
        if none.any():
            for i in idx:
                ambiguous[none, i] = True
        bad = loaded & (n_near != 1)
        if warn and bad.any():
            frames = np.flatnonzero(bad)
            warnings.warn(
                f"force plate {k}: {frames.size} loaded frame(s) (first at frame {frames[0]}, "
                f"t = {t[frames[0]]:.3f} s) could not be assigned to exactly one foot "
                f"({int((loaded & (n_near > 1)).sum())} with two feet on the plate, "
                f"{int(none.sum())} with no foot within {max_distance} m of the centre of "
                "pressure); the kinetics of those feet are NaN there",
                AhbmWarning,
                stacklevel=2,
            )
    if not any_loaded:
        raise DataError(
            f"No force plate is loaded above {threshold} N in any frame: no foot contact to "
            "assign; check the plates' force channels or lower `threshold`"
        )
    return PlateAssignment(f_ext, contact, ambiguous, plate_of)


def first_foot_takes_shared_plates(assignment, plates, time, *, threshold: float = 20.0):
    """The assignment with each shared plate given whole to the foot that stepped on it first.

    Plug-in Gait's rule (``GaitSettings(compat="plug-in-gait")``), not
    ahbm's: a plate measures only the sum of the loads of the feet on it,
    so :func:`assign_force_plates` leaves the frames where two feet share a
    plate unattributed (``ambiguous``). Here, within each contiguous loaded
    stretch of a plate, its unattributed frames go to the segment that the
    plate was assigned to first in that stretch (the foot that stepped on
    it first), as long as this plate is the only unattributed load of the
    frame; the other feet get no load from it. A stretch never assigned to
    one foot stays ambiguous.

    Parameters
    ----------
    assignment : PlateAssignment
        Output of :func:`assign_force_plates` with the same `plates`.
    plates : sequence of ForcePlate
        Lab frame, sample 0 at ``time[0]``.
    time : array_like, shape (n_frames,)
        Frame times, s.
    threshold : float
        Vertical force above which a plate is loaded, N (as in the assignment).

    Returns
    -------
    PlateAssignment

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io.trial import ForcePlate
    >>> n = 5; f = np.tile([0.0, 0.0, 700.0], (n, 1)); cop = np.zeros((n, 3))
    >>> fp = ForcePlate(f, np.zeros((n, 3)), cop, np.zeros((n, 3)), np.zeros((4, 3)),
    ...                 np.zeros(3), rate=100.0)
    >>> ambiguous = np.zeros((n, 2), bool); ambiguous[2:, :] = True
    >>> f_ext = np.zeros((n, 2, 6)); f_ext[:2, 0, 5] = 700.0
    >>> plate_of = np.array([[0], [0], [-1], [-1], [-1]])
    >>> a = PlateAssignment(f_ext, f_ext[..., 5] > 0, ambiguous, plate_of)
    >>> b = first_foot_takes_shared_plates(a, [fp], np.arange(n) / 100.0)
    >>> b.f_ext[:, 0, 5].tolist(), b.ambiguous.any()
    ([700.0, 700.0, 700.0, 700.0, 700.0], np.False_)
    """
    if not isinstance(assignment, PlateAssignment):
        raise DataError(f"`assignment` must be a PlateAssignment, got {type(assignment).__name__}")
    threshold = as_nonnegative_float(threshold, "threshold", unit="N")
    t = as_float_array(time, "time")
    f_ext, contact = assignment.f_ext.copy(), assignment.contact.copy()
    ambiguous, plate_of = assignment.ambiguous.copy(), assignment.plate_of.copy()
    if plate_of.shape != (t.size, len(plates)):
        raise DataError(
            f"`assignment` covers {plate_of.shape[1]} plates over {plate_of.shape[0]} frames; "
            f"got {len(plates)} plates and {t.size} times: pass the plates and times it was "
            "made from"
        )
    wrenches = [_plate_wrench_at(plate, k, t, threshold) for k, plate in enumerate(plates)]
    loaded = np.stack([np.abs(w[:, 5]) > threshold for w in wrenches], axis=1)
    open_loads = (loaded & (plate_of < 0)).sum(axis=1)
    unknown = ambiguous.any(axis=1) & (open_loads == 1)
    for k, w in enumerate(wrenches):
        on = np.flatnonzero(loaded[:, k])
        if on.size == 0:
            continue
        breaks = np.flatnonzero(np.diff(on) > 1)
        for run in np.split(on, breaks + 1):
            owners = plate_of[run, k]
            owners = owners[owners >= 0]
            if owners.size == 0:
                continue
            fix = run[(plate_of[run, k] < 0) & unknown[run]]
            f_ext[fix, owners[0]] += w[fix]
            contact[fix, owners[0]] = True
            plate_of[fix, k] = owners[0]
            ambiguous[fix] = False
    return PlateAssignment(f_ext, contact, ambiguous, plate_of)


def feet_on_plate(
    feet, corners, *, time, contact_height: float = 0.02, max_speed: float = 2.0
) -> np.ndarray:
    """Which feet stand on a plate, frame by frame, from the markers alone.

    Parameters
    ----------
    feet : sequence of array_like, shape (n_frames, n_points, 3)
        Points spanning each foot (heel or ankle centre, toe), m, Z-up lab.
    corners : array_like, shape (4, 3)
        The plate's corners in order around it, m.
    time : array_like, shape (n_frames,)
        Frame times, s.
    contact_height : float, optional
        A point is on the ground while it is less than this above its own
        lowest height in the trial (its 2nd percentile), m (default 0.02) ...
    max_speed : float, optional
        ... and moves slower than this horizontally, m/s (default 2).

    Returns
    -------
    ndarray of bool, shape (n_frames, n_feet)
        True where a grounded point of the foot lies inside the plate's
        outline; all False when the corners are unknown (zero area).

    Examples
    --------
    >>> foot = np.tile([[0.1, 0.1, 0.05], [0.3, 0.1, 0.02]], (5, 1, 1))
    >>> plate = [[0, 0, 0], [0.5, 0, 0], [0.5, 0.4, 0], [0, 0.4, 0]]
    >>> feet_on_plate([foot, foot + [1.0, 0, 0]], plate, time=np.arange(5) / 100)[0].tolist()
    [True, False]
    """
    t = as_float_array(time, "time").reshape(-1)
    height = as_nonnegative_float(contact_height, "contact_height", unit="m")
    speed = as_positive_float(max_speed, "max_speed", unit="m/s")
    quad = check_trailing_shape(as_float_array(corners, "corners", allow_nan=True), (3,), "corners")
    if quad.shape != (4, 3):
        raise DataError(f"Expected `corners` to have shape (4, 3), got {quad.shape}")
    pts = []
    for i, f in enumerate(feet):
        a = as_float_array(f, f"feet[{i}]", allow_nan=True)
        if a.ndim != 3 or a.shape[0] != t.size or a.shape[2] != 3:
            raise DataError(
                f"Expected `feet[{i}]` to have shape ({t.size}, n_points, 3), got {a.shape}"
            )
        pts.append(a)
    out = np.zeros((t.size, len(pts)), bool)
    if _outline_area(quad) <= 1e-4:
        return out
    for c, a in enumerate(pts):
        out[:, c] = (
            _grounded_points(a, t, height, speed) & _inside_outline(a[..., :2], quad[:, :2])
        ).any(axis=1)
    return out


def _grounded_points(a, t, height: float, max_speed: float):
    """(n_frames, n_points) True where a foot point is low and slow (on the ground)."""
    z = a[..., 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN points
        ground = np.nanpercentile(z, 2.0, axis=0)
    if t.size >= 3:
        speed = np.linalg.norm(np.gradient(a[..., :2], t, axis=0), axis=-1)
    else:
        speed = np.zeros(z.shape)
    with np.errstate(invalid="ignore"):
        return (z < ground + height) & (speed < max_speed)


def _outline_area(corners) -> float:
    """Horizontal area (m^2) of a plate's four corners; 0 when they are unknown."""
    c = np.asarray(corners, dtype=float)
    if c.shape != (4, 3) or not np.isfinite(c).all():
        return 0.0
    x, y = c[:, 0], c[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _inside_outline(p, quad):
    """(n, k) True where the horizontal points `p` (n, k, 2) lie inside the quadrilateral.

    `quad` (4, 2): a plate's corners in order around the plate (either direction).
    """
    sides = []
    for j in range(4):
        a, b = quad[j], quad[(j + 1) % 4]
        e = b - a
        sides.append(e[0] * (p[..., 1] - a[1]) - e[1] * (p[..., 0] - a[0]))
    s = np.stack(sides, axis=-1)
    with np.errstate(invalid="ignore"):
        return (s >= 0).all(axis=-1) | (s <= 0).all(axis=-1)
