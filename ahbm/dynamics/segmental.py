"""Segment-by-segment Newton-Euler inverse dynamics (AHBM §4.4), vectorized over frames.

The classic gait-lab inverse dynamics: each segment's pose comes from
markers, its centre-of-mass (COM) acceleration and angular velocity and
acceleration from differentiated kinematics, its inertia from a
body-segment-parameter table; the joint loads are solved segment by segment
from the most distal one (the feet, which carry the ground reaction) to the
most proximal one. The ground reaction is assigned to the feet by
:mod:`ahbm.dynamics.plate_assignment`. Unlike :func:`ahbm.dynamics.rnea` it needs no joint model:
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

from dataclasses import dataclass

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import (
    as_float_array,
    broadcast_batch,
    check_inertia,
    check_trailing_shape,
)
from ahbm.errors import DataError
from ahbm.kinematics.jcs import jcs_axes
from ahbm.types import ResultRepr

__all__ = [
    "SegmentMotion",
    "JointLoads",
    "newton_euler",
    "loads_in_frame",
    "loads_in_jcs",
    "clinical_moments",
    "joint_power",
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
class SegmentMotion(ResultRepr):
    """Kinematics of a set of segments over a trial (lab frame, SI).

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
class JointLoads(ResultRepr):
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
        lab frame, e.g. :attr:`~ahbm.dynamics.plate_assignment.PlateAssignment.f_ext`.

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

    These are the report's equations as they must read, not as printed: the
    printed eq. 4.1, ``F_e + F_p − Σ F_di = m_s a_s``, omits the weight
    ``m g`` (the text defines ``g`` but does not use it), and the printed
    eq. 4.2, ``T_e + T_p + r_p × T_e − Σ r_di × T_di = I α + ω × I ω``, has
    ``r_p × T_e`` where the moment ``r_p × F_p`` of the proximal force is
    meant, ``Σ r_di × T_di`` where ``Σ (T_di + r_di × F_di)`` is meant, and no
    moment ``r_e × F_e`` of the external force (docs/sources.md). The
    report's §3.1 numbers its governing equations (4.1)–(4.8) too; these
    are those of §4.4.

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
