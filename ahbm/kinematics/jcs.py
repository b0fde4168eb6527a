"""Anatomical joint angles (Grood–Suntay joint coordinate system, Cardan
sequences, clinical signs), pelvis and foot angles in the lab frame, and joint
centres (Davis and Harrington hip regressions, the Conventional Gait Model
chord function, functional centres by sphere fitting and SCoRE).

Segment frames follow the ISB axes for both sides (docs/conventions.md §3):
x anterior, y superior / along the long axis, z to the subject's right.
Rotations are ``lab_R_segment`` (segment axes as columns). Angles are in
radians unless ``degrees=True``. Frames whose pose is NaN (invalid segment
fits) give NaN angles.

References
----------
Grood, E. S. & Suntay, W. J. (1983). A joint coordinate system for the clinical
description of three-dimensional motions: application to the knee. J. Biomech.
Eng. 105, 136-144.
Wu, G. et al. (2002). ISB recommendation on definitions of joint coordinate
system of various joints for the reporting of human joint motion - part I:
ankle, hip, and spine. J. Biomech. 35, 543-548.
Davis, R. B., Õunpuu, S., Tyburski, D. & Gage, J. R. (1991). A gait analysis
data collection and reduction technique. Hum. Mov. Sci. 10, 575-587.
Harrington, M. E., Zavatsky, A. B., Lawson, S. E. M., Yuan, Z. & Theologis, T. N.
(2007). Prediction of the hip joint centre in adults, children, and patients
with cerebral palsy based on magnetic resonance imaging. J. Biomech. 40,
595-602.
Gamage, S. S. H. U. & Lasenby, J. (2002). New least squares solutions for
estimating the average centre of rotation and the axis of rotation. J. Biomech.
35, 87-93.
Ehrig, R. M., Taylor, W. R., Duda, G. N. & Heller, M. O. (2006). A survey of
formal methods for determining the centre of rotation of ball joints. J.
Biomech. 39, 2798-2809.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ahbm._validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics.rotations import check_rotation_matrix, matrix_to_euler

__all__ = [
    "jcs_axes",
    "grood_suntay_angles",
    "cardan_angles",
    "pelvis_angles",
    "foot_progression_angles",
    "lab_reference_frame",
    "hip_joint_centre_davis",
    "hip_joint_centre_harrington",
    "chord_joint_centre",
    "SphereFit",
    "sphere_fit_centre",
    "ScoreResult",
    "score_centre",
]

_SIDES = {"right": 1.0, "left": -1.0, "r": 1.0, "l": -1.0}
_JOINTS = ("hip", "knee", "ankle")
# sign of the sagittal JCS angle alpha in the clinical output
_SAGITTAL_SIGN = {"hip": 1.0, "knee": -1.0, "ankle": 1.0}


def _side(side) -> float:
    key = side.lower() if isinstance(side, str) else side
    if key not in _SIDES:
        raise DataError(f"`side` must be 'right' or 'left', got {side!r}")
    return _SIDES[key]


def _rotations(R, name: str) -> np.ndarray:
    """Validate rotation matrices, allowing NaN frames (invalid poses)."""
    R = check_trailing_shape(as_float_array(R, name, allow_nan=True), (3, 3), name)
    finite = np.isfinite(R).all(axis=(-1, -2))
    if finite.any():
        check_rotation_matrix(R[finite], name=name)
    return R


def _pair(R_proximal, R_distal):
    Rp = _rotations(R_proximal, "R_proximal")
    Rd = _rotations(R_distal, "R_distal")
    try:
        batch = np.broadcast_shapes(Rp.shape[:-2], Rd.shape[:-2])
    except ValueError as err:
        raise DataError(
            f"batch shapes of `R_proximal` {Rp.shape[:-2]} and `R_distal` {Rd.shape[:-2]} "
            "do not broadcast"
        ) from err
    return np.broadcast_to(Rp, batch + (3, 3)), np.broadcast_to(Rd, batch + (3, 3))


def _euler_nan(R: np.ndarray, seq: str) -> np.ndarray:
    """matrix_to_euler on the finite frames of R; NaN elsewhere."""
    out = np.full(R.shape[:-2] + (3,), np.nan)
    finite = np.isfinite(R).all(axis=(-1, -2))
    if finite.all():
        return matrix_to_euler(R, seq)
    if finite.any():
        out[finite] = matrix_to_euler(R[finite], seq)
    return out


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def jcs_axes(R_proximal, R_distal) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Axes of the Grood–Suntay joint coordinate system in the lab frame.

    Parameters
    ----------
    R_proximal, R_distal : array_like, shape (..., 3, 3)
        ``lab_R_segment`` of the proximal and distal segments (ISB axes).

    Returns
    -------
    e1 : ndarray, shape (..., 3)
        Flexion–extension axis, the proximal z axis.
    e2 : ndarray, shape (..., 3)
        Floating (ab/adduction) axis ``e3 × e1 / |e3 × e1|``.
    e3 : ndarray, shape (..., 3)
        Long (internal–external rotation) axis of the distal segment, its y axis.

    Notes
    -----
    Grood & Suntay (1983); Wu et al. (2002). The three axes are not
    orthogonal: ``e2`` is perpendicular to ``e1`` and ``e3``. When ``e3`` is
    parallel to ``e1`` (a 90° frontal angle, never reached by a real joint)
    ``e2`` is taken as the proximal x axis.

    Examples
    --------
    >>> e1, e2, e3 = jcs_axes(np.eye(3), np.eye(3))
    >>> e2
    array([1., 0., 0.])
    """
    Rp, Rd = _pair(R_proximal, R_distal)
    e1 = Rp[..., :, 2]
    e3 = Rd[..., :, 1]
    c = np.cross(e3, e1)
    n = np.linalg.norm(c, axis=-1)
    small = n < 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        e2 = np.where(small[..., None], Rp[..., :, 0], c / n[..., None])
    return e1.copy(), e2, e3.copy()


def _jcs_raw(Rp: np.ndarray, Rd: np.ndarray) -> np.ndarray:
    """(alpha, beta, gamma) of the JCS from the axes (geometric formulas)."""
    e1, e2, e3 = jcs_axes(Rp, Rd)
    alpha = np.arctan2(_dot(Rp[..., :, 1], e2), _dot(Rp[..., :, 0], e2))
    beta = np.arctan2(_dot(e1, e3), np.linalg.norm(np.cross(e3, e1), axis=-1))
    gamma = np.arctan2(_dot(Rd[..., :, 2], e2), _dot(Rd[..., :, 0], e2))
    return np.stack([alpha, beta, gamma], axis=-1)


def grood_suntay_angles(
    R_proximal,
    R_distal,
    *,
    side: str = "right",
    joint: str | None = "knee",
    degrees: bool = False,
) -> np.ndarray:
    """Joint angles in the Grood–Suntay joint coordinate system, clinical signs.

    Parameters
    ----------
    R_proximal, R_distal : array_like, shape (..., 3, 3)
        ``lab_R_segment`` of the proximal and distal segment (ISB axes: x
        anterior, y along the long axis towards proximal, z to the right for
        both sides). NaN frames give NaN angles.
    side : {"right", "left"}
        Side of the joint; mirrors the frontal and transverse signs so that a
        positive number means the same thing on both sides.
    joint : {"hip", "knee", "ankle"} or None
        Selects the clinical sign convention (table below). ``None`` returns
        the raw JCS angles ``(α, β, γ)`` without sign changes.
    degrees : bool, optional
        Return degrees instead of radians.

    Returns
    -------
    ndarray, shape (..., 3)
        (sagittal, frontal, transverse):

        * hip: flexion, adduction, internal rotation (all positive);
        * knee: flexion, varus (adduction), internal rotation;
        * ankle: dorsiflexion, inversion (adduction), internal rotation.

    Notes
    -----
    Axes ``e1 = z_P``, ``e3 = y_D``, ``e2 = e3 × e1 / |e3 × e1|`` (Grood &
    Suntay 1983; Wu et al. 2002). The angles are computed from the axes:
    ``α = atan2(y_P·e2, x_P·e2)`` about e1, ``β = asin(z_P·y_D)`` about e2,
    ``γ = atan2(z_D·e2, x_D·e2)`` about e3. They equal the intrinsic Cardan
    sequence ``"ZXY"`` of ``R_P^T R_D = Rz(α) Rx(β) Ry(γ)``. Clinical values,
    with ``s = +1`` (right) or ``−1`` (left): hip ``(α, sβ, sγ)``, knee
    ``(−α, sβ, sγ)``, ankle ``(α, sβ, sγ)`` (docs/conventions.md §4).

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> thigh = rot_z(0.5)  # thigh rotated forward about the pelvis z axis
    >>> np.round(grood_suntay_angles(np.eye(3), thigh, joint="hip"), 12)
    array([0.5, 0. , 0. ])
    """
    Rp, Rd = _pair(R_proximal, R_distal)
    raw = _jcs_raw(Rp, Rd)
    if joint is None:
        out = raw
    else:
        if joint not in _JOINTS:
            raise DataError(f"`joint` must be one of {_JOINTS} or None, got {joint!r}")
        s = _side(side)
        out = raw * np.array([_SAGITTAL_SIGN[joint], s, s])
    return np.rad2deg(out) if degrees else out


def cardan_angles(R_proximal, R_distal, seq: str = "ZXY", *, degrees: bool = False) -> np.ndarray:
    """Cardan/Euler angles of the distal segment relative to the proximal one.

    Parameters
    ----------
    R_proximal, R_distal : array_like, shape (..., 3, 3)
        ``lab_R_segment`` of the two segments; NaN frames give NaN angles.
    seq : str, optional
        Any of the 24 sequences of :func:`ahbm.kinematics.rotations.matrix_to_euler`
        (uppercase intrinsic, lowercase extrinsic). Default ``"ZXY"``, the
        sequence equivalent to the Grood–Suntay JCS with ISB axes. (With the
        Plug-in Gait axes, x anterior, y left, z up, the equivalent sequence is
        ``"YXZ"``.)
    degrees : bool, optional

    Returns
    -------
    ndarray, shape (..., 3)
        Angles of ``R_P^T R_D`` in the order of `seq` (no clinical sign changes).

    Examples
    --------
    >>> from ahbm.kinematics.rotations import euler_to_matrix
    >>> Rd = euler_to_matrix([0.3, 0.1, -0.2], "ZXY")
    >>> np.round(cardan_angles(np.eye(3), Rd), 12)
    array([ 0.3,  0.1, -0.2])
    """
    Rp, Rd = _pair(R_proximal, R_distal)
    rel = np.swapaxes(Rp, -1, -2) @ Rd
    out = _euler_nan(rel, seq)
    return np.rad2deg(out) if degrees else out


def lab_reference_frame(forward=(1.0, 0.0, 0.0), up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """ISB-axes reference frame of the lab: x forward (horizontal), y up, z right.

    Parameters
    ----------
    forward : array_like, shape (..., 3)
        Progression direction in the lab frame; its vertical component is removed.
    up : array_like, shape (3,) or (..., 3)
        Vertical direction (default +Z).

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``lab_R_ref`` with columns (forward, up, forward × up).

    Examples
    --------
    >>> lab_reference_frame()
    array([[ 1.,  0.,  0.],
           [ 0.,  0., -1.],
           [ 0.,  1.,  0.]])
    """
    f = check_trailing_shape(as_float_array(forward, "forward"), (3,), "forward")
    u = check_trailing_shape(as_float_array(up, "up"), (3,), "up")
    nu = np.linalg.norm(u, axis=-1, keepdims=True)
    if np.any(nu == 0):
        raise DataError("`up` must be a non-zero vector, e.g. (0, 0, 1)")
    u = u / nu
    fh = f - _dot(f, u)[..., None] * u
    nf = np.linalg.norm(fh, axis=-1, keepdims=True)
    if np.any(nf <= 1e-9 * np.maximum(np.linalg.norm(f, axis=-1, keepdims=True), 1e-300)):
        raise DataError(
            "`forward` must have a horizontal component (it is vertical or zero); give the "
            "walking direction, e.g. (1, 0, 0)"
        )
    x = fh / nf
    x, u = np.broadcast_arrays(x, u)
    z = np.cross(x, u)
    return np.stack([x, u, z], axis=-1)


def _lab_euler(R, name, forward, up, seq):
    """Euler angles of a segment relative to the ISB-axes lab reference frame."""
    R = _rotations(R, name)
    ref = lab_reference_frame(forward, up)
    return _euler_nan(np.swapaxes(ref, -1, -2) @ R, seq)


def pelvis_angles(
    R_pelvis,
    *,
    side: str = "right",
    forward=(1.0, 0.0, 0.0),
    up=(0.0, 0.0, 1.0),
    degrees: bool = False,
) -> np.ndarray:
    """Pelvis angles in the lab frame: tilt, obliquity, rotation (clinical signs).

    Parameters
    ----------
    R_pelvis : array_like, shape (..., 3, 3)
        ``lab_R_pelvis`` (ISB axes); NaN frames give NaN.
    side : {"right", "left"}
        Which side's hemipelvis the obliquity and rotation refer to.
    forward, up : array_like, shape (3,) or (..., 3)
        Progression direction and vertical (see :func:`lab_reference_frame`).
    degrees : bool, optional

    Returns
    -------
    ndarray, shape (..., 3)
        (anterior tilt, obliquity with the side's hip up positive, rotation with
        the side's hemipelvis forward positive).

    Notes
    -----
    ``ref_R_pelvis = Rz(α) Rx(β) Ry(γ)`` (intrinsic ``"ZXY"``); tilt ``= −α``,
    obliquity ``= −sβ``, rotation ``= sγ`` with ``s = ±1`` for right/left.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_y
    >>> neutral = lab_reference_frame()  # pelvis axes in the lab when standing
    >>> # pelvis tipped forward by 0.2 rad about the lab's left axis (+Y)
    >>> np.round(pelvis_angles(rot_y(0.2) @ neutral), 12) + 0.0
    array([0.2, 0. , 0. ])
    """
    s = _side(side)
    a = _lab_euler(R_pelvis, "R_pelvis", forward, up, "ZXY")
    out = a * np.array([-1.0, -s, s])
    return np.rad2deg(out) if degrees else out


def foot_progression_angles(
    R_foot,
    *,
    side: str = "right",
    forward=(1.0, 0.0, 0.0),
    up=(0.0, 0.0, 1.0),
    degrees: bool = False,
) -> np.ndarray:
    """Foot angles in the lab frame; the third is the foot progression angle.

    Parameters
    ----------
    R_foot : array_like, shape (..., 3, 3)
        ``lab_R_foot`` (x heel→toe, y up, z right); NaN frames give NaN.
    side : {"right", "left"}
    forward, up : array_like, shape (3,) or (..., 3)
        Progression direction and vertical (see :func:`lab_reference_frame`).
    degrees : bool, optional

    Returns
    -------
    ndarray, shape (..., 3)
        (foot pitch, toes up positive; roll, inversion positive; foot
        progression angle, internal = toe-in positive).

    Notes
    -----
    ``ref_R_foot = Ry(γ) Rz(α) Rx(β)`` (intrinsic ``"YZX"``: heading about
    the vertical first), so γ is exactly the angle between the horizontal
    projection of the foot's x axis and the progression direction. Output
    ``(α, sβ, sγ)`` with ``s = ±1`` for right/left.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> neutral = lab_reference_frame()  # foot axes in the lab, straight ahead
    >>> # right foot turned 0.1 rad to the left of +X (about the vertical): toe-in
    >>> np.round(foot_progression_angles(rot_z(0.1) @ neutral), 12)
    array([0. , 0. , 0.1])
    """
    s = _side(side)
    g, a, b = np.moveaxis(_lab_euler(R_foot, "R_foot", forward, up, "YZX"), -1, 0)
    out = np.stack([a, s * b, s * g], axis=-1)
    return np.rad2deg(out) if degrees else out


# ----------------------------------------------------------------------------
# joint centres
# ----------------------------------------------------------------------------


def _positive(x, name: str) -> np.ndarray:
    a = as_float_array(x, name)
    if np.any(a <= 0):
        raise DataError(f"`{name}` must be positive (metres), got {x!r}")
    return a


def hip_joint_centre_davis(
    leg_length,
    inter_asis_distance,
    *,
    side: str = "right",
    marker_radius: float = 0.007,
    asis_trochanter_distance=None,
    theta: float = np.deg2rad(28.4),
    beta: float = np.deg2rad(18.0),
) -> np.ndarray:
    """Hip joint centre in the pelvis frame by the Davis et al. (1991) regression.

    Parameters
    ----------
    leg_length : float or array_like, shape (...)
        Leg length (ASIS to medial malleolus), m.
    inter_asis_distance : float or array_like, shape (...)
        Distance between the two ASIS markers, m.
    side : {"right", "left"}
    marker_radius : float, optional
        Radius of the ASIS marker, m (default 7 mm).
    asis_trochanter_distance : float or array_like, optional
        Measured ASIS–greater trochanter distance, m. Default: the Plug-in
        Gait estimate ``0.1288 LL − 48.56 mm``.
    theta, beta : float, optional
        Davis angles, rad (28.4° and 18°; the Plug-in Gait uses 0.5 and 0.314 rad).

    Returns
    -------
    ndarray, shape (..., 3)
        Hip centre in the pelvis frame (origin mid-ASIS, ISB axes: x anterior,
        y up, z right), m.

    Notes
    -----
    In mm, with ``C = 0.115 LL − 15.3``, ``a = inter-ASIS distance / 2`` and
    ``X = ASIS–trochanter distance + marker radius`` (Davis et al. 1991, Plug-in
    Gait manual):
    anterior ``x = C cosθ sinβ − X cosβ``; superior
    ``y = −X sinβ − C cosθ cosβ``; to the right ``z = s (a − C sinθ)``
    (``s = +1`` right, ``−1`` left). In the Plug-in Gait frame (y left, z up)
    these are its ``(X, −z, y)``.

    Examples
    --------
    >>> np.round(hip_joint_centre_davis(0.9, 0.25) * 1000, 1)
    array([-46.7, -96.8,  83. ])
    """
    LL = _positive(leg_length, "leg_length") * 1000.0
    aa = _positive(inter_asis_distance, "inter_asis_distance") * 500.0
    s = _side(side)
    if asis_trochanter_distance is None:
        xdis = 0.1288 * LL - 48.56
    else:
        xdis = _positive(asis_trochanter_distance, "asis_trochanter_distance") * 1000.0
    X = xdis + float(marker_radius) * 1000.0
    C = 0.115 * LL - 15.3
    ct, st, cb, sb = np.cos(theta), np.sin(theta), np.cos(beta), np.sin(beta)
    x = C * ct * sb - X * cb
    y = -X * sb - C * ct * cb
    z = s * (aa - C * st)
    x, y, z = np.broadcast_arrays(x, y, z)
    return np.stack([x, y, z], axis=-1) / 1000.0


def hip_joint_centre_harrington(
    pelvic_width,
    pelvic_depth,
    *,
    side: str = "right",
    leg_length=None,
) -> np.ndarray:
    """Hip joint centre in the pelvis frame by the Harrington et al. (2007) regression.

    Parameters
    ----------
    pelvic_width : float or array_like, shape (...)
        Distance between the ASISs, m.
    pelvic_depth : float or array_like, shape (...)
        Distance between the mid-ASIS and mid-PSIS points, m.
    side : {"right", "left"}
    leg_length : float or array_like, optional
        Leg length, m. If given, the full regressions (with leg length for the
        superior and pelvic depth for the lateral coordinate) are used,
        otherwise the recommended width/depth-only ones.

    Returns
    -------
    ndarray, shape (..., 3)
        Hip centre in the pelvis frame (origin mid-ASIS, x anterior, y up,
        z right), m.

    Notes
    -----
    Harrington et al. (2007), in mm with PW, PD, LL in mm:
    ``x = −0.24 PD − 9.9``; ``y = −0.30 PW − 10.9``; ``z = s (0.33 PW + 7.3)``;
    with leg length ``y = −0.16 PW − 0.04 LL − 7.1`` and
    ``z = s (0.28 PD + 0.16 PW + 7.9)`` (``s = +1`` right, ``−1`` left). The
    markers' skin and radius offsets are not removed (as in the paper).

    Examples
    --------
    >>> np.round(hip_joint_centre_harrington(0.25, 0.16) * 1000, 1)
    array([-48.3, -85.9,  89.8])
    """
    PW = _positive(pelvic_width, "pelvic_width") * 1000.0
    PD = _positive(pelvic_depth, "pelvic_depth") * 1000.0
    s = _side(side)
    x = -0.24 * PD - 9.9
    if leg_length is None:
        y = -0.30 * PW - 10.9
        z = s * (0.33 * PW + 7.3)
    else:
        LL = _positive(leg_length, "leg_length") * 1000.0
        y = -0.16 * PW - 0.04 * LL - 7.1
        z = s * (0.28 * PD + 0.16 * PW + 7.9)
    x, y, z = np.broadcast_arrays(x, y, z)
    return np.stack([x, y, z], axis=-1) / 1000.0


def chord_joint_centre(
    proximal_centre,
    joint_marker,
    plane_marker,
    width,
    *,
    marker_radius: float = 0.007,
) -> np.ndarray:
    """Joint centre by the Conventional Gait Model "chord" function.

    Knee centre from the hip centre, the KNE and THI markers and the knee
    width; ankle centre from the knee centre, the ANK and TIB markers and the
    ankle width.

    Parameters
    ----------
    proximal_centre : array_like, shape (..., 3)
        The proximal joint centre (hip centre for the knee), m.
    joint_marker : array_like, shape (..., 3)
        The lateral marker on the joint (KNE, ANK), m.
    plane_marker : array_like, shape (..., 3)
        The wand/segment marker (THI, TIB) that, with the other two points,
        defines the plane containing the joint centre, m.
    width : float or array_like, shape (...)
        Joint width (knee or ankle width), m.
    marker_radius : float, optional
        Marker radius, m (default 7 mm).

    Returns
    -------
    ndarray, shape (..., 3)
        Joint centre ``J`` in the lab frame, m; NaN where an input is NaN.

    Raises
    ------
    DataError
        Non-positive width, or a frame where the markers are collinear or the
        proximal centre is closer to the joint marker than the offset.

    Notes
    -----
    ``J`` is the point with (i) ``|J − K| = d = width/2 + marker_radius``,
    (ii) ``(J − K) ⊥ (P − J)`` (the lateral marker lies on the joint's
    flexion axis, at right angles to the segment line), (iii) ``J`` in the
    plane of ``P``, ``K`` and the plane marker ``T``, on the side of line
    ``PK`` away from ``T``. With ``L = |P − K|``, ``u = (P − K)/L``, ``w`` the
    unit vector in the plane perpendicular to ``u`` pointing away from ``T``:
    ``J = K + d (cosφ u + sinφ w)``, ``cosφ = d / L`` (Davis et al. 1991;
    Vicon Plug-in Gait "chord" function).

    Examples
    --------
    >>> J = chord_joint_centre([0, 0, 0.9], [0.05, 0, 0.5], [0.1, 0, 0.7], 0.1)
    >>> round(float(np.linalg.norm(J - [0.05, 0, 0.5])), 12)
    0.057
    """
    P = check_trailing_shape(
        as_float_array(proximal_centre, "proximal_centre", allow_nan=True), (3,), "proximal_centre"
    )
    K = check_trailing_shape(
        as_float_array(joint_marker, "joint_marker", allow_nan=True), (3,), "joint_marker"
    )
    T = check_trailing_shape(
        as_float_array(plane_marker, "plane_marker", allow_nan=True), (3,), "plane_marker"
    )
    wdt = _positive(width, "width")
    d = wdt / 2.0 + float(marker_radius)
    try:
        P, K, T = np.broadcast_arrays(P, K, T)
        d = np.broadcast_to(d, P.shape[:-1])
    except ValueError as err:
        raise DataError("shapes of the chord-function inputs do not broadcast") from err
    v = P - K
    t = T - K
    finite = np.isfinite(v).all(axis=-1) & np.isfinite(t).all(axis=-1) & np.isfinite(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        L = np.linalg.norm(v, axis=-1)
        u = v / L[..., None]
        t_perp = t - _dot(t, u)[..., None] * u
        nt = np.linalg.norm(t_perp, axis=-1)
    bad_plane = finite & (L > d) & ~(nt > 1e-9 * np.maximum(np.linalg.norm(t, axis=-1), 1e-300))
    if bad_plane.any():
        k = np.argwhere(np.atleast_1d(bad_plane))[0].tolist()
        raise DataError(
            f"the proximal centre, joint marker and plane marker are collinear in frame {k}: "
            "they do not define a plane; check the wand marker (THI/TIB)"
        )
    too_short = finite & (L <= d)
    if too_short.any():
        k = np.argwhere(np.atleast_1d(too_short))[0].tolist()
        raise DataError(
            f"the proximal centre is within width/2 + marker radius of the joint marker in "
            f"frame {k}; check the joint width (m, not mm) and the markers"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        w = -t_perp / nt[..., None]
        c = d / L
        sn = np.sqrt(1.0 - c**2)
    return K + d[..., None] * (c[..., None] * u + sn[..., None] * w)


# ----------------------------------------------------------------------------
# functional joint centres
# ----------------------------------------------------------------------------


class SphereFit(NamedTuple):
    """Result of :func:`sphere_fit_centre`.

    Attributes
    ----------
    centre : ndarray, shape (3,)
        Common centre of the spheres, m.
    radii : ndarray, shape (n_markers,)
        Sphere radius of each marker trajectory, m.
    rms : float
        Root-mean-square of the geometric residuals ``|p − c| − r``, m.
    n_points : int
        Number of (finite) points used.
    """

    centre: np.ndarray
    radii: np.ndarray
    rms: float
    n_points: int


def sphere_fit_centre(points, *, refine: bool = True, max_iter: int = 50) -> SphereFit:
    """Functional joint centre: least-squares sphere(s) with a common centre.

    Parameters
    ----------
    points : array_like, shape (n_frames, 3) or (n_frames, n_markers, 3)
        Trajectories of markers of the distal segment expressed in the
        proximal segment frame (or in the lab with the proximal segment at
        rest), m. NaN samples are ignored.
    refine : bool, optional
        Refine the algebraic solution by Gauss–Newton on the geometric
        residuals (default True).
    max_iter : int, optional
        Largest number of Gauss–Newton iterations.

    Returns
    -------
    SphereFit
        ``centre`` (3,), ``radii`` (n_markers,), ``rms``, ``n_points``.

    Raises
    ------
    DataError
        Fewer than 4 finite points for a marker or points that do not span
        three dimensions (too little joint motion).

    Notes
    -----
    Algebraic fit (Gamage & Lasenby 2002): ``|p|² = 2 c·p + k_j`` with
    ``k_j = r_j² − |c|²`` is linear in ``(c, k_1, …, k_m)``; then Gauss–Newton
    on ``|p − c| − r_j`` removes the algebraic bias for noisy data.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(size=(100, 3))
    >>> p = [0.1, 0.2, 0.3] + 0.4 * d / np.linalg.norm(d, axis=1, keepdims=True)
    >>> fit = sphere_fit_centre(p)
    >>> np.round(fit.centre, 9), np.round(fit.radii, 9)
    (array([0.1, 0.2, 0.3]), array([0.4]))
    """
    P = as_float_array(points, "points", allow_nan=True)
    if P.ndim == 2:
        P = P[:, None, :]
    if P.ndim != 3 or P.shape[-1] != 3:
        raise DataError(
            f"Expected `points` to have shape (n_frames, 3) or (n_frames, n_markers, 3), "
            f"got {P.shape}"
        )
    m = P.shape[1]
    ok = np.isfinite(P).all(axis=-1)
    counts = ok.sum(axis=0)
    if np.any(counts < 4):
        k = int(np.argmax(counts < 4))
        raise DataError(
            f"marker #{k} has {int(counts[k])} finite samples in `points`; a sphere fit "
            "needs at least 4 (record more joint motion)"
        )
    fi, mj = np.nonzero(ok)
    pts = P[fi, mj]
    n = pts.shape[0]
    A = np.zeros((n, 3 + m))
    A[:, :3] = 2.0 * pts
    A[np.arange(n), 3 + mj] = 1.0
    b = np.sum(pts**2, axis=1)
    # check spread: centred points must span 3-D
    centred = pts - np.array([pts[mj == j].mean(axis=0) for j in range(m)])[mj]
    sv = np.linalg.svd(centred, compute_uv=False)
    if sv[2] <= 1e-9 * max(sv[0], 1e-300):
        raise DataError(
            "the points of `points` lie on a plane or a line: the centre is not determined; "
            "record motion about at least two axes of the joint"
        )
    sol, *_ = np.linalg.lstsq(A, b, rcond=None)
    c = sol[:3]
    r = np.sqrt(np.maximum(sol[3:] + c @ c, 0.0))
    if refine:
        for _ in range(int(max_iter)):
            diff = pts - c
            dist = np.linalg.norm(diff, axis=1)
            res = dist - r[mj]
            J = np.zeros((n, 3 + m))
            J[:, :3] = -diff / dist[:, None]
            J[np.arange(n), 3 + mj] = -1.0
            step, *_ = np.linalg.lstsq(J, -res, rcond=None)
            c = c + step[:3]
            r = r + step[3:]
            if np.max(np.abs(step)) < 1e-13 * max(1.0, float(np.max(np.abs(c)))):
                break
    res = np.linalg.norm(pts - c, axis=1) - r[mj]
    return SphereFit(c, r, float(np.sqrt(np.mean(res**2))), int(n))


class ScoreResult(NamedTuple):
    """Result of :func:`score_centre`.

    Attributes
    ----------
    centre : ndarray, shape (n_frames, 3)
        Joint centre in the lab frame per frame (mean of the two segments'
        estimates), m; NaN where a pose is NaN.
    local_proximal : ndarray, shape (3,)
        Centre in the proximal segment frame, m.
    local_distal : ndarray, shape (3,)
        Centre in the distal segment frame, m.
    rms : float
        Root-mean-square distance between the two segments' estimates, m.
    residuals : ndarray, shape (n_frames,)
        That distance per frame, m (NaN where a pose is NaN).
    """

    centre: np.ndarray
    local_proximal: np.ndarray
    local_distal: np.ndarray
    rms: float
    residuals: np.ndarray


def score_centre(R_proximal, origin_proximal, R_distal, origin_distal) -> ScoreResult:
    """Functional joint centre by the symmetrical centre of rotation estimation (SCoRE).

    Parameters
    ----------
    R_proximal, R_distal : array_like, shape (n_frames, 3, 3)
        Poses (``lab_R_segment``) of the two segments, e.g. from
        :func:`~ahbm.kinematics.markers.fit_segment_pose`; NaN frames are skipped.
    origin_proximal, origin_distal : array_like, shape (n_frames, 3)
        Segment origins in the lab frame, m.

    Returns
    -------
    ScoreResult

    Raises
    ------
    DataError
        Fewer than 2 valid frames, or too little relative rotation (the
        system is rank deficient).

    Notes
    -----
    The joint centre is fixed in both segments: ``R_P c_P + o_P = R_D c_D + o_D``
    for every frame. SCoRE (Ehrig et al. 2006) solves the stacked linear
    least-squares problem ``[R_P, −R_D] [c_P; c_D] = o_D − o_P`` for the two
    local centres.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_x, rot_y
    >>> Rd = np.stack([rot_x(0.3), rot_y(0.4), rot_x(-0.2) @ rot_y(0.2)])
    >>> c = np.array([0.0, 0.0, -0.1])  # centre in the distal frame
    >>> od = [0.0, 0.0, 1.0] - Rd @ c   # proximal frame = lab, centre at (0, 0, 1)
    >>> res = score_centre(np.eye(3)[None].repeat(3, 0), np.zeros((3, 3)), Rd, od)
    >>> np.round(res.local_proximal, 12) + 0.0, np.round(res.local_distal, 12) + 0.0
    (array([0., 0., 1.]), array([ 0. ,  0. , -0.1]))
    """
    Rp, Rd = _pair(R_proximal, R_distal)
    op = check_trailing_shape(
        as_float_array(origin_proximal, "origin_proximal", allow_nan=True), (3,), "origin_proximal"
    )
    od = check_trailing_shape(
        as_float_array(origin_distal, "origin_distal", allow_nan=True), (3,), "origin_distal"
    )
    if Rp.ndim != 3 or op.shape != Rp.shape[:1] + (3,) or od.shape != op.shape:
        raise DataError(
            f"Expected poses of shape (n_frames, 3, 3) and origins (n_frames, 3); got "
            f"{Rp.shape}, {op.shape}, {Rd.shape}, {od.shape}"
        )
    ok = (
        np.isfinite(Rp).all(axis=(1, 2))
        & np.isfinite(Rd).all(axis=(1, 2))
        & np.isfinite(op).all(axis=1)
        & np.isfinite(od).all(axis=1)
    )
    n = int(ok.sum())
    if n < 2:
        raise DataError(f"score_centre needs at least 2 frames with valid poses, got {n}")
    A = np.concatenate([Rp[ok], -Rd[ok]], axis=2).reshape(3 * n, 6)
    b = (od[ok] - op[ok]).reshape(3 * n)
    sv = np.linalg.svd(A, compute_uv=False)
    if sv[-1] <= 1e-8 * sv[0]:
        raise DataError(
            "too little relative rotation between the segments to locate the centre "
            "(rank-deficient SCoRE system); record motion about at least two axes"
        )
    sol, *_ = np.linalg.lstsq(A, b, rcond=None)
    cp, cd = sol[:3], sol[3:]
    gp = (Rp @ cp) + op
    gd = (Rd @ cd) + od
    centre = 0.5 * (gp + gd)
    resid = np.linalg.norm(gp - gd, axis=1)
    rms = float(np.sqrt(np.mean(resid[ok] ** 2)))
    return ScoreResult(centre, cp, cd, rms, resid)
