"""Joint centres: the Davis and Harrington hip regressions, the Conventional Gait
Model chord function, and functional centres by sphere fitting and SCoRE.

Positions are in metres in the frame named by each function (pelvis frame
with ISB axes for the regressions, lab frame for the others).

References
----------
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

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_int,
    as_nonnegative_float,
    check_trailing_shape,
)
from ahbm.errors import DataError
from ahbm.kinematics._jcs_common import _dot, _pair, _side
from ahbm.types import ResultRepr

__all__ = [
    "hip_joint_centre_davis",
    "hip_joint_centre_harrington",
    "chord_joint_centre",
    "chord_offset_angle",
    "SphereFit",
    "sphere_fit_centre",
    "ScoreResult",
    "score_centre",
]


def _positive(x, name: str) -> np.ndarray:
    a = as_float_array(x, name)
    if np.any(a <= 0):
        raise DataError(f"`{name}` must be positive (metres), got {x!r}")
    return a


def hip_joint_centre_davis(
    *,
    leg_length,
    inter_asis_distance,
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
    >>> np.round(hip_joint_centre_davis(leg_length=0.9, inter_asis_distance=0.25) * 1000, 1)
    array([-46.7, -96.8,  83. ])
    """
    LL = _positive(leg_length, "leg_length") * 1000.0
    aa = _positive(inter_asis_distance, "inter_asis_distance") * 500.0
    s = _side(side)
    if asis_trochanter_distance is None:
        xdis = 0.1288 * LL - 48.56
    else:
        xdis = _positive(asis_trochanter_distance, "asis_trochanter_distance") * 1000.0
    X = xdis + as_nonnegative_float(marker_radius, "marker_radius", unit="m") * 1000.0
    theta = as_finite_float(theta, "theta", unit="rad")
    beta = as_finite_float(beta, "beta", unit="rad")
    C = 0.115 * LL - 15.3
    ct, st, cb, sb = np.cos(theta), np.sin(theta), np.cos(beta), np.sin(beta)
    x = C * ct * sb - X * cb
    y = -X * sb - C * ct * cb
    z = s * (aa - C * st)
    x, y, z = np.broadcast_arrays(x, y, z)
    return np.stack([x, y, z], axis=-1) / 1000.0


def hip_joint_centre_harrington(
    *,
    pelvic_width,
    pelvic_depth,
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
    >>> np.round(hip_joint_centre_harrington(pelvic_width=0.25, pelvic_depth=0.16) * 1000, 1)
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
    offset_angle=0.0,
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
    offset_angle : float or array_like, shape (...), optional
        rad (default 0): the wand marker stands this far out of the plane
        (Plug-in Gait's thigh and shank wand rotations, the "VCM" chord with an
        offset angle); see Notes and :func:`chord_offset_angle`.

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

    With an offset angle β, (i) and (ii) still hold (``J`` on the circle of
    radius ``d·sinφ`` about the line ``PK``) but (iii) becomes: the angle
    about the segment line ``n = (P − J)/|P − J|``, right-handed, from
    ``K − J`` to the projection of ``T − J`` normal to ``n`` is β. ``J`` is
    found by Newton's method along the circle, starting from the plane's
    solution (β = 0 gives it exactly). This is the definition Vicon's chord
    uses for the wand rotations: with β = ``-s·ThighRotation`` at the knee
    and ``-s·ShankRotation`` at the ankle (``s = +1`` right, ``-1`` left)
    it reproduces the knee and ankle centres of a Vicon Nexus file with
    28-47 deg wand rotations to 0.00 and 0.3 mm.

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
    d = wdt / 2.0 + as_nonnegative_float(marker_radius, "marker_radius", unit="m")
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
    centre = K + d[..., None] * (c[..., None] * u + sn[..., None] * w)
    beta = as_float_array(offset_angle, "offset_angle")
    try:
        beta = np.broadcast_to(beta, P.shape[:-1])
    except ValueError as err:
        raise DataError(
            f"`offset_angle` of shape {np.shape(beta)} does not match the {P.shape[:-1]} frames"
        ) from err
    if not np.any(beta):
        return centre
    # the circle of candidate centres: O + rho (cos t w + sin t (u x w)), t = 0 the plane's
    shape = centre.shape
    # frames in one dimension (a single point too)
    P, K, T, u, w, centre = (np.broadcast_to(a, shape).reshape(-1, 3)
                             for a in (P, K, T, u, w, centre))  # fmt: skip
    beta, finite = beta.reshape(-1), np.broadcast_to(finite, shape[:-1]).reshape(-1)
    O = K + (d * c).reshape(-1)[:, None] * u
    rho = (d * sn).reshape(-1)[:, None]
    e2 = np.cross(u, w)

    def at(t, sel=slice(None)):
        c_, s_ = np.cos(t)[..., None], np.sin(t)[..., None]
        return O[sel] + rho[sel] * (c_ * w[sel] + s_ * e2[sel])

    def newton(t, sel):
        """Newton along the circle from `t` for the frames `sel`; (t, |residual|)."""
        Ps, Ks, Ts, bs = P[sel], K[sel], T[sel], beta[sel]
        for _ in range(40):
            g = _wrap(_offset_angle(Ps, Ks, Ts, at(t, sel)) - bs)
            if np.all(np.abs(g) < 1e-13):
                break
            h = 1e-7
            up = _offset_angle(Ps, Ks, Ts, at(t + h, sel))
            dg = _wrap(up - _offset_angle(Ps, Ks, Ts, at(t - h, sel))) / (2 * h)
            with np.errstate(invalid="ignore", divide="ignore"):
                step = np.where(np.abs(dg) > 1e-12, g / dg, 0.0)
            t = t - np.clip(np.nan_to_num(step), -0.3, 0.3)
        return t, np.abs(_wrap(_offset_angle(Ps, Ks, Ts, at(t, sel)) - bs))

    # from the plane's solution; frames it leaves unsolved (a wand near the segment line
    # with a large offset) start again farther round the circle, nearest first
    todo = finite & (beta != 0)
    t = np.zeros(beta.shape)
    solved = ~todo
    for seed in (0.0, None, np.pi / 2, -np.pi / 2, np.pi):
        sel = np.nonzero(~solved)
        if not sel[0].size:
            break
        t0 = -beta[sel] if seed is None else np.full(sel[0].size, seed)
        ts, res = newton(t0, sel)
        ok = res < 1e-9
        t[sel] = np.where(ok, _wrap(ts), t[sel])
        solved[sel] = ok
    bad = ~solved
    if bad.any():
        k = np.argwhere(np.atleast_1d(bad))[0].tolist()
        raise DataError(
            f"no joint centre makes the offset angle {float(np.atleast_1d(beta)[tuple(k)]):.3f} "
            f"rad with the wand in frame {k}; check the wand rotation (rad) and the markers"
        )
    return np.where(finite[:, None], at(t), np.nan).reshape(shape)


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def _offset_angle(P, K, T, J):
    """Angle about ``P - J`` from ``K - J`` to ``T - J`` (projected), rad."""
    n = P - J
    with np.errstate(invalid="ignore", divide="ignore"):
        n = n / np.linalg.norm(n, axis=-1, keepdims=True)
    a = K - J
    a = a - _dot(a, n)[..., None] * n
    b = T - J
    b = b - _dot(b, n)[..., None] * n
    return np.arctan2(_dot(np.cross(a, b), n), _dot(a, b))


def chord_offset_angle(proximal_centre, joint_marker, plane_marker, centre) -> np.ndarray:
    """The offset angle of a known joint centre: the inverse of :func:`chord_joint_centre`.

    Parameters
    ----------
    proximal_centre, joint_marker, plane_marker : array_like, shape (..., 3)
        As for :func:`chord_joint_centre`, m.
    centre : array_like, shape (..., 3)
        The joint centre (from a knee alignment device or medial markers in
        a static trial), m.

    Returns
    -------
    ndarray, shape (...)
        rad in (-pi, pi]: the angle about ``proximal_centre - centre``,
        right-handed, from ``joint_marker - centre`` to ``plane_marker -
        centre`` (both projected normal to that line); ``chord_joint_centre(...,
        offset_angle=)`` with it gives back `centre` when `centre` lies at
        ``width/2 + marker_radius`` from the joint marker, at right angles.

    Examples
    --------
    >>> P, K, T = [0, 0, 0.9], [0.05, 0, 0.5], [0.1, 0.03, 0.7]
    >>> J = chord_joint_centre(P, K, T, 0.1, offset_angle=0.3)
    >>> round(float(chord_offset_angle(P, K, T, J)), 12)
    0.3
    """
    arrays = []
    for name, v in (("proximal_centre", proximal_centre), ("joint_marker", joint_marker),
                    ("plane_marker", plane_marker), ("centre", centre)):  # fmt: skip
        arrays.append(check_trailing_shape(as_float_array(v, name, allow_nan=True), (3,), name))
    try:
        P, K, T, J = np.broadcast_arrays(*arrays)
    except ValueError as err:
        raise DataError("shapes of the chord-function inputs do not broadcast") from err
    return _offset_angle(P, K, T, J)


# ----------------------------------------------------------------------------
# functional joint centres
# ----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class SphereFit(ResultRepr):
    """Result of :func:`sphere_fit_centre` (a frozen result object).

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
        for _ in range(as_int(max_iter, "max_iter", minimum=0)):
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


@dataclass(frozen=True, repr=False)
class ScoreResult(ResultRepr):
    """Result of :func:`score_centre` (a frozen result object).

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
