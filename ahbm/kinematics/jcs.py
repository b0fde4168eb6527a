"""Anatomical joint angles (Grood–Suntay joint coordinate system, Cardan
sequences, clinical signs), pelvis and foot angles in the lab frame. The joint
centres (Davis and Harrington hip regressions, the Conventional Gait Model
chord function, functional centres by sphere fitting and SCoRE) live in
:mod:`ahbm.kinematics.joint_centres`.

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
(Joint-centre references: :mod:`ahbm.kinematics.joint_centres`.)
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, broadcast_batch, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics._jcs_common import _dot, _pair, _rotations, _side
from ahbm.kinematics.rotations import matrix_to_euler

__all__ = [
    "jcs_axes",
    "grood_suntay_angles",
    "cardan_angles",
    "pelvis_angles",
    "foot_progression_angles",
    "lab_reference_frame",
]

_JOINTS = ("hip", "knee", "ankle")
# sign of the sagittal JCS angle alpha in the clinical output
_SAGITTAL_SIGN = {"hip": 1.0, "knee": -1.0, "ankle": 1.0}


def _euler_nan(R: np.ndarray, seq: str) -> np.ndarray:
    """matrix_to_euler on the finite frames of R; NaN elsewhere."""
    out = np.full(R.shape[:-2] + (3,), np.nan)
    finite = np.isfinite(R).all(axis=(-1, -2))
    if finite.all():
        return matrix_to_euler(R, seq)
    if finite.any():
        out[finite] = matrix_to_euler(R[finite], seq)
    return out


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
    broadcast_batch((name, R, 2), ("forward/up", ref, 2))
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
