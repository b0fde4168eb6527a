"""Segment-by-segment Newton-Euler inverse dynamics (AHBM §4.4), vectorized over frames.

The classic gait-lab inverse dynamics: each segment's pose comes from
markers, its centre-of-mass (COM) acceleration and angular velocity and
acceleration from differentiated kinematics, its inertia from a
body-segment-parameter table; the joint loads are solved segment by segment
from the most distal one (the feet, which carry the ground reaction) to the
most proximal one. Unlike :func:`ahbm.dynamics.rnea` it needs no joint model:
segments may translate at the joints (soft-tissue artefact), and the result is
the full 6-component joint load (force and moment) at each joint centre.

Conventions
-----------
* Arrays are lab-frame, SI, with frames first: ``(n_frames, n_segments, 3)``.
* Segment ``i`` is attached to ``parent[i]`` (``-1`` for a root) at the
  *joint centre* ``joint_centres[:, i]``; ``parent[i] < i`` (proximal first).
* The joint load of segment ``i`` is the force ``F_p`` and the moment ``M_p``
  (about the joint centre) that the proximal segment exerts on segment ``i``
  (AHBM: "proximal reaction positive"). For a root segment it is the load
  that the rest of the world (e.g. the trunk, not modelled) must exert on it
  at its reference point -- the residual load.
* Moments are *internal*: the moment of the proximal segment on the distal one
  is the net muscle moment acting on the distal segment.
* External loads are spatial forces ``[n; f]`` in the lab frame with the moment
  taken about the lab origin (a force ``F`` at a point ``r`` is
  ``[r × F; F]``), the ``f_ext_frame="world"`` convention of
  :func:`ahbm.dynamics.rnea`, so several loads add up.

References
----------
AHBM report §4.4, eqs (4.1)-(4.2). Winter, D.A. (2009) *Biomechanics and Motor
Control of Human Movement*, 4th ed., ch. 5. Vaughan, Davis & O'Connor (1992)
*Dynamics of Human Gait*, ch. 4. Vicon, *Plug-in Gait reference guide*
(kinetic outputs).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.deprecation import warn_deprecated
from ahbm._internal.validation import (
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    broadcast_batch,
    check_inertia,
    check_trailing_shape,
    sample_times,
)
from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics.jcs import jcs_axes
from ahbm.types import ResultRepr, TupleResult

__all__ = [
    "SegmentMotion",
    "JointLoads",
    "PlateAssignment",
    "newton_euler",
    "loads_in_frame",
    "loads_in_jcs",
    "clinical_moments",
    "joint_power",
    "assign_force_plates",
    "feet_on_plate",
]

_JOINTS = ("hip", "knee", "ankle")
# sign of M . e1 in the clinical sagittal component: e1 (the proximal z axis) points
# to the right, positive rotation about it flexes the hip, extends the knee and
# dorsiflexes the ankle; the clinical moment is extensor / plantarflexor positive
_SAGITTAL_SIGN = {"hip": -1.0, "knee": 1.0, "ankle": -1.0}


def _mv(R, x):
    return np.einsum("...ij,...j->...i", R, x)


def _mtv(R, x):
    return np.einsum("...ji,...j->...i", R, x)


@dataclass(frozen=True, repr=False)
class SegmentMotion(TupleResult, ResultRepr):
    """Kinematics of a set of segments over a trial (lab frame, SI).

    A NamedTuple in ahbm 0.1, like :class:`JointLoads` and
    :class:`PlateAssignment`: using one as a tuple still works until 0.3 and
    warns once (:class:`~ahbm.types.TupleResult`).

    Attributes
    ----------
    rotation : ndarray, shape (n_frames, n_segments, 3, 3)
        ``lab_R_segment``.
    com : ndarray, shape (n_frames, n_segments, 3)
        COM positions, m.
    com_acc : ndarray, shape (n_frames, n_segments, 3)
        COM accelerations, m/s^2.
    omega : ndarray, shape (n_frames, n_segments, 3)
        Angular velocities in the lab frame, rad/s.
    alpha : ndarray, shape (n_frames, n_segments, 3)
        Angular accelerations in the lab frame, rad/s^2.
    """

    rotation: np.ndarray
    com: np.ndarray
    com_acc: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray


@dataclass(frozen=True, repr=False)
class JointLoads(TupleResult, ResultRepr):
    """Loads that the proximal segments exert on their distal segments.

    Attributes
    ----------
    force : ndarray, shape (n_frames, n_segments, 3)
        Joint force on segment ``i`` at its proximal joint centre, N, lab frame.
    moment : ndarray, shape (n_frames, n_segments, 3)
        Internal joint moment on segment ``i`` about its joint centre, N m, lab frame.
    point : ndarray, shape (n_frames, n_segments, 3)
        The joint centres, m.
    """

    force: np.ndarray
    moment: np.ndarray
    point: np.ndarray


@dataclass(frozen=True, repr=False)
class PlateAssignment(TupleResult, ResultRepr):
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


def newton_euler(
    parent,
    mass,
    inertia,
    motion: SegmentMotion,
    joint_centres,
    *,
    gravity=(0.0, 0.0, -9.81),
    f_ext=None,
) -> JointLoads:
    """Joint forces and moments by Newton-Euler, from the distal segments to the proximal.

    Parameters
    ----------
    parent : sequence of int, length n_segments
        Proximal segment of each segment, ``-1`` for a root; ``parent[i] < i``.
    mass : array_like, shape (n_segments,)
        Segment masses, kg.
    inertia : array_like, shape (n_segments, 3, 3)
        Inertia tensors about the COM in the segment frames, kg m^2.
    motion : SegmentMotion
        Segment kinematics (:func:`ahbm.analysis.segment_motion`, or exact values).
    joint_centres : array_like, shape (n_frames, n_segments, 3)
        Proximal joint centre of each segment (reference point of a root), m.
    gravity : array_like, shape (3,)
        Gravitational acceleration, m/s^2 (default Z up).
    f_ext : array_like, shape (n_frames, n_segments, 6), optional
        External spatial forces ``[n; f]`` (moment about the lab origin first),
        lab frame, e.g. :attr:`PlateAssignment.f_ext`.

    Returns
    -------
    JointLoads
        Force and internal moment that each segment's proximal segment exerts
        on it, lab frame.

    Raises
    ------
    DataError
        Bad parent array or shapes, negative masses.

    Notes
    -----
    AHBM eqs (4.1)-(4.2) for segment ``s`` with children ``d``:
    ``F_p = m (a − g) − F_e + Σ F_d`` and
    ``M_p = I α + ω × I ω − M_e,c − (r_p − c) × F_p + Σ [M_d + (r_d − c) × F_d]``,
    with ``I = R I_s Rᵀ``, ``c`` the COM and ``M_e,c = n_e − c × F_e`` the
    external moment about the COM. Segments are solved in reverse order
    (distal first), so every child load is known when its parent is solved.

    Examples
    --------
    A 1 kg point mass hanging 0.5 m below a fixed pivot, at rest:

    >>> import numpy as np
    >>> m = SegmentMotion(np.eye(3)[None, None], np.array([[[0.0, 0.5, 0.0]]]),
    ...                   np.zeros((1, 1, 3)), np.zeros((1, 1, 3)), np.zeros((1, 1, 3)))
    >>> loads = newton_euler([-1], [1.0], np.zeros((1, 3, 3)), m, np.zeros((1, 1, 3)))
    >>> loads.force[0, 0].tolist(), loads.moment[0, 0].round(4).tolist()
    ([0.0, 0.0, 9.81], [4.905, 0.0, 0.0])
    """
    parf = as_float_array(parent, "parent").ravel()
    if np.any(parf != np.round(parf)):
        raise DataError(f"`parent` must hold integer segment indices, got {parf.tolist()}")
    par = parf.astype(int)
    n_seg = par.size
    if np.any(par >= np.arange(n_seg)) or np.any(par < -1):
        raise DataError(
            f"`parent` must satisfy -1 <= parent[i] < i (proximal segments first), got "
            f"{par.tolist()}"
        )
    m = as_float_array(mass, "mass").ravel()
    if m.size != n_seg or np.any(m < 0):
        raise DataError(f"Expected `mass` to hold {n_seg} non-negative masses, got {m.tolist()}")
    inert = as_float_array(inertia, "inertia")
    if inert.shape != (n_seg, 3, 3):
        raise DataError(f"Expected `inertia` to have shape ({n_seg}, 3, 3), got {inert.shape}")
    check_inertia(inert)
    if isinstance(motion, SegmentMotion):
        motion = (motion.rotation, motion.com, motion.com_acc, motion.omega, motion.alpha)
    if not isinstance(motion, (tuple, list)) or len(motion) != 5:
        raise DataError(
            "Expected `motion` to be a SegmentMotion (from ahbm.analysis.segment_motion) or a "
            f"tuple (rotation, com, com_acc, omega, alpha), got {type(motion).__name__}"
        )
    R, c, acc, w, al = (
        as_float_array(x, f"motion.{n}", allow_nan=True)
        for x, n in zip(motion, ("rotation", "com", "com_acc", "omega", "alpha"), strict=True)
    )
    n = R.shape[0]
    for name, arr, trail in (
        ("motion.rotation", R, (3, 3)),
        ("motion.com", c, (3,)),
        ("motion.com_acc", acc, (3,)),
        ("motion.omega", w, (3,)),
        ("motion.alpha", al, (3,)),
    ):
        if arr.shape != (n, n_seg) + trail:
            raise DataError(
                f"Expected `{name}` to have shape {(n, n_seg) + trail}, got {arr.shape}"
            )
    jc = as_float_array(joint_centres, "joint_centres", allow_nan=True)
    if jc.shape != (n, n_seg, 3):
        raise DataError(f"Expected `joint_centres` to have shape {(n, n_seg, 3)}, got {jc.shape}")
    g = as_float_array(gravity, "gravity").ravel()
    if g.size != 3:
        raise DataError(f"Expected `gravity` to have shape (3,), got {g.shape}")
    if f_ext is None:
        fe = np.zeros((n, n_seg, 6))
    else:
        fe = as_float_array(f_ext, "f_ext", allow_nan=True)
        if fe.shape != (n, n_seg, 6):
            raise DataError(f"Expected `f_ext` to have shape {(n, n_seg, 6)}, got {fe.shape}")

    # rate of change of angular momentum about the COM, lab frame: R (I_s α_s + ω_s × I_s ω_s)
    ws = _mtv(R, w)
    als = _mtv(R, al)
    Iw = np.einsum("sij,nsj->nsi", inert, ws)
    Hdot = _mv(R, np.einsum("sij,nsj->nsi", inert, als) + cross(ws, Iw))
    F = m[None, :, None] * (acc - g) - fe[..., 3:]
    M = Hdot - (fe[..., :3] - cross(c, fe[..., 3:]))
    force = np.empty((n, n_seg, 3))
    moment = np.empty((n, n_seg, 3))
    for i in range(n_seg - 1, -1, -1):
        # children of i were solved before i (they come after it); their loads were added
        force[:, i] = F[:, i]
        moment[:, i] = M[:, i] - cross(jc[:, i] - c[:, i], F[:, i])
        p = par[i]
        if p >= 0:
            # the child pulls on the parent with -F_i, -M_i at joint i
            F[:, p] += F[:, i]
            M[:, p] += moment[:, i] + cross(jc[:, i] - c[:, p], F[:, i])
    return JointLoads(force, moment, jc)


def loads_in_frame(vectors, rotation):
    """Express lab-frame joint forces or moments in segment frames.

    Parameters
    ----------
    vectors : array_like, shape (..., 3)
        Lab-frame vectors, e.g. ``JointLoads.force`` (n_frames, n_segments, 3).
    rotation : array_like, shape (..., 3, 3)
        ``lab_R_segment`` of the frame to express them in: the distal segment's
        own rotation (``motion.rotation``) or its proximal segment's
        (``motion.rotation[:, parent]``).

    Returns
    -------
    ndarray, shape (..., 3)
        ``Rᵀ v``.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.rotations import rot_z
    >>> loads_in_frame([1.0, 0, 0], rot_z(np.pi / 2)).round(6).tolist()
    [0.0, -1.0, 0.0]
    """
    v = as_float_array(vectors, "vectors", allow_nan=True)
    check_trailing_shape(v, (3,), "vectors")
    R = as_float_array(rotation, "rotation", allow_nan=True)
    check_trailing_shape(R, (3, 3), "rotation")
    broadcast_batch(("vectors", v, 1), ("rotation", R, 2))
    return _mtv(R, v)


def loads_in_jcs(vectors, r_proximal, r_distal):
    """Project lab-frame joint forces or moments on the joint coordinate system axes.

    Parameters
    ----------
    vectors : array_like, shape (..., 3)
        Lab-frame vectors (``JointLoads.force`` or ``.moment`` of one joint).
    r_proximal, r_distal : array_like, shape (..., 3, 3)
        ``lab_R_segment`` of the proximal and distal segments (ISB axes).

    Returns
    -------
    ndarray, shape (..., 3)
        ``(v·e1, v·e2, v·e3)`` with the axes of
        :func:`ahbm.kinematics.jcs.jcs_axes` (flexion axis of the proximal
        segment, floating axis, long axis of the distal segment). The axes are
        not orthogonal: these are projections, the convention of Vaughan,
        Davis & O'Connor (1992); for a moment they are the generalized forces
        of a ``"ZXY"`` Euler joint. :func:`clinical_moments` adds the clinical signs.

    Examples
    --------
    >>> import numpy as np
    >>> loads_in_jcs([1.0, 2.0, 3.0], np.eye(3), np.eye(3)).tolist()
    [3.0, 1.0, 2.0]
    """
    v = as_float_array(vectors, "vectors", allow_nan=True)
    check_trailing_shape(v, (3,), "vectors")
    for name, R in (("r_proximal", r_proximal), ("r_distal", r_distal)):
        check_trailing_shape(as_float_array(R, name, allow_nan=True), (3, 3), name)
    e1, e2, e3 = jcs_axes(r_proximal, r_distal)
    broadcast_batch(("vectors", v, 1), ("r_proximal/r_distal", e1, 1))
    return np.stack([np.sum(v * e1, -1), np.sum(v * e2, -1), np.sum(v * e3, -1)], axis=-1)


def clinical_moments(moment, r_proximal, r_distal, *, joint: str, side: str):
    """Internal joint moments as clinical components on the JCS axes (internal rotator +).

    Parameters
    ----------
    moment : array_like, shape (..., 3)
        Internal moment of the proximal on the distal segment, lab frame
        (``JointLoads.moment``), N m or N m/kg.
    r_proximal, r_distal : array_like, shape (..., 3, 3)
        Segment orientations ``lab_R_segment`` with ISB axes (x anterior, y
        along the long axis towards proximal, z to the right, both sides), as
        used by :mod:`ahbm.kinematics.jcs`.
    joint : {"hip", "knee", "ankle"}
    side : {"Left", "Right"}

    Returns
    -------
    ndarray, shape (..., 3)
        (sagittal, frontal, transverse): extensor (hip, knee) / plantarflexor
        (ankle) positive; abductor (hip), abductor = valgus (knee), evertor
        (ankle) positive; internal rotator positive.

    Notes
    -----
    The moment is projected on the joint coordinate system axes
    ``e1, e2, e3`` of :func:`ahbm.kinematics.jcs.jcs_axes` (Grood & Suntay
    1983; Vaughan, Davis & O'Connor 1992, ch. 4): the components are
    ``(s₁ M·e₁, −k M·e₂, k M·e₃)`` with ``k = +1`` on the right and ``−1``
    on the left, ``s₁ = −1`` for hip and ankle and ``+1`` for the knee. Each
    component is thus positive when the moment opposes the positive clinical
    angle of :func:`ahbm.kinematics.jcs.grood_suntay_angles` in the sagittal
    and frontal planes (hip flexion, knee extension, ankle dorsiflexion;
    adduction), as Plug-in Gait reports them, and acts with it in the
    transverse plane (internal rotation). Plug-in Gait's transverse moment
    has the opposite sign (external rotator positive; docs/conventions.md
    §9): the gait pipeline's :func:`ahbm.gait.pig_moments` flips it,
    and can also project on the distal or proximal segment's axes.

    Examples
    --------
    >>> import numpy as np
    >>> clinical_moments([0, 0, 10.0], np.eye(3), np.eye(3), joint="hip", side="Right").tolist()
    [-10.0, -0.0, 0.0]
    """
    j = str(joint).lower()
    if j not in _JOINTS:
        raise DataError(f"`joint` must be one of {_JOINTS}, got {joint!r}")
    k = _side_sign(side)
    M = as_float_array(moment, "moment", allow_nan=True)
    check_trailing_shape(M, (3,), "moment")
    return loads_in_jcs(M, r_proximal, r_distal) * np.array([_SAGITTAL_SIGN[j], -k, k])


def _side_sign(side) -> float:
    s = str(side).strip().lower()
    if s in ("right", "r"):
        return 1.0
    if s in ("left", "l"):
        return -1.0
    raise DataError(f"`side` must be 'Left' or 'Right', got {side!r}")


def joint_power(moment, omega_distal, omega_proximal):
    """Joint power: internal moment times the joint angular velocity.

    Parameters
    ----------
    moment : array_like, shape (..., 3)
        Internal moment of the proximal on the distal segment, lab frame, N m.
    omega_distal, omega_proximal : array_like, shape (..., 3)
        Angular velocities of the two segments, lab frame, rad/s.

    Returns
    -------
    ndarray, shape (...)
        Power, W; positive when the muscles generate energy (concentric).

    Notes
    -----
    ``P = M · (ω_d − ω_p)`` (Winter 2009, §7.1): the power of the net joint
    moment on the distal segment plus that of its reaction on the proximal one.

    Examples
    --------
    >>> joint_power([0, 0, 2.0], [0, 0, 3.0], [0, 0, 1.0]).item()
    4.0
    """
    M = as_float_array(moment, "moment", allow_nan=True)
    wd = as_float_array(omega_distal, "omega_distal", allow_nan=True)
    wp = as_float_array(omega_proximal, "omega_proximal", allow_nan=True)
    for name, a in (("moment", M), ("omega_distal", wd), ("omega_proximal", wp)):
        check_trailing_shape(a, (3,), name)
    broadcast_batch(("moment", M, 1), ("omega_distal", wd, 1), ("omega_proximal", wp, 1))
    return np.sum(M * (wd - wp), axis=-1)


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


def _time_before_feet(func):
    """Accept the 0.1 order ``(plates, time, feet)`` for one release (warns once)."""

    @functools.wraps(func)
    def wrapper(plates, *args, **kwargs):
        if len(args) == 2 and not isinstance(args[0], Mapping):
            if "time" in kwargs:
                raise TypeError("assign_force_plates() got `time` by position and by keyword")
            warn_deprecated(
                "assign_force_plates:positional-time",
                "assign_force_plates(plates, time, feet) is deprecated and will be an error in "
                "ahbm 0.3; use assign_force_plates(plates, feet, time=time) (or rate=)",
            )
            kwargs["time"], args = args[0], args[1:]
        return func(plates, *args, **kwargs)

    return wrapper


@_time_before_feet
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
