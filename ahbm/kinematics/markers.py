"""Segment poses from skin markers, local marker coordinates, anatomical frames
and homogeneous transforms.

Conventions (see docs/design.md and docs/conventions.md):

* marker arrays are ``(..., n_markers, 3)`` with the frame (time) axes leading;
  a missing marker is NaN in all three coordinates of that frame;
* a segment pose is ``R = lab_R_segment`` (the segment axes as columns, in the
  lab frame) and ``origin`` (the segment-frame origin in the lab frame), so a
  point with local coordinates ``l`` is at ``R @ l + origin``;
* homogeneous transforms are ``(..., 4, 4)`` with ``T[..., :3, :3] = R``,
  ``T[..., :3, 3] = origin`` and last row ``(0, 0, 0, 1)``.

References
----------
Söderkvist, I. & Wedin, P.-Å. (1993). Determining the movements of the skeleton
using well-configured markers. J. Biomech. 26(12), 1473-1477.
Veldpaus, F. E., Woltring, H. J. & Dortmans, L. J. M. G. (1988). A least-squares
algorithm for the equiform transformation from spatial marker co-ordinates.
J. Biomech. 21(1), 45-54.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, broadcast_batch, check_trailing_shape
from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics.rotations import orthonormalize
from ahbm.types import ResultRepr

__all__ = [
    "SegmentPose",
    "fit_segment_pose",
    "local_coordinates",
    "static_local_markers",
    "frame_from_landmarks",
    "make_transform",
    "invert_transform",
    "apply_transform",
    "transform_to_pose",
]

#: Markers spanning less than this (relative second singular value of the
#: centred local coordinates) are treated as collinear: no unique pose.
COLLINEAR_TOL = 1e-6


# ----------------------------------------------------------------------------
# homogeneous transforms
# ----------------------------------------------------------------------------


def _check_pose(R, origin):
    R = check_trailing_shape(as_float_array(R, "R", allow_nan=True), (3, 3), "R")
    p = check_trailing_shape(as_float_array(origin, "origin", allow_nan=True), (3,), "origin")
    if R.shape[:-2] != p.shape[:-1]:
        try:
            batch = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
        except ValueError as err:
            raise DataError(
                f"batch shapes of `R` {R.shape[:-2]} and `origin` {p.shape[:-1]} do not broadcast"
            ) from err
        R = np.broadcast_to(R, batch + (3, 3))
        p = np.broadcast_to(p, batch + (3,))
    return R, p


def make_transform(R, origin) -> np.ndarray:
    """Homogeneous transforms from rotations and origins.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices ``A_R_B``.
    origin : array_like, shape (..., 3)
        Origin of frame B in frame A. Batch axes broadcast with those of `R`.

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``[[R, origin], [0, 0, 0, 1]]``.

    Examples
    --------
    >>> make_transform(np.eye(3), [1.0, 2.0, 3.0])[:3, 3]
    array([1., 2., 3.])
    """
    R, p = _check_pose(R, origin)
    T = np.zeros(R.shape[:-2] + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def _check_transform(T, name: str = "T") -> np.ndarray:
    T = check_trailing_shape(as_float_array(T, name, allow_nan=True), (4, 4), name)
    return T


def transform_to_pose(T) -> tuple[np.ndarray, np.ndarray]:
    """Split homogeneous transforms into ``(R, origin)``.

    Parameters
    ----------
    T : array_like, shape (..., 4, 4)

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
    origin : ndarray, shape (..., 3)

    Examples
    --------
    >>> R, p = transform_to_pose(np.eye(4))
    >>> p
    array([0., 0., 0.])
    """
    T = _check_transform(T)
    return T[..., :3, :3].copy(), T[..., :3, 3].copy()


def invert_transform(T) -> np.ndarray:
    """Inverse of rigid homogeneous transforms: ``[[R^T, -R^T p], [0, 1]]``.

    Parameters
    ----------
    T : array_like, shape (..., 4, 4)
        Rigid transforms ``A_T_B`` (rotation part orthonormal).

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``B_T_A``.

    Examples
    --------
    >>> T = make_transform(np.eye(3), [1.0, 0.0, 0.0])
    >>> invert_transform(T)[:3, 3]
    array([-1., -0., -0.])
    """
    T = _check_transform(T)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out = np.zeros(T.shape)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -(Rt @ T[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def apply_transform(T, points) -> np.ndarray:
    """Map points with homogeneous transforms: ``p_A = R p_B + origin``.

    Parameters
    ----------
    T : array_like, shape (..., 4, 4)
        Transforms ``A_T_B``.
    points : array_like, shape (..., 3) or (..., n_points, 3)
        Points in frame B. With ``T`` of shape ``batch + (4, 4)``, `points`
        with at most ``len(batch) + 1`` axes hold one point per transform
        (batch axes broadcast: ``(3,)`` maps one point by every transform);
        with more axes, ``batch + (n, 3)`` holds ``n`` points per transform.
        To map ``n`` shared points by ``N`` transforms pass ``points[None]``
        of shape ``(1, n, 3)``.

    Returns
    -------
    ndarray
        Points in frame A, same shape as `points` (after broadcasting).

    Examples
    --------
    >>> T = make_transform(np.eye(3), [0.0, 0.0, 1.0])
    >>> apply_transform(T, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    array([[1., 0., 1.],
           [0., 1., 1.]])
    """
    T = _check_transform(T)
    p = check_trailing_shape(as_float_array(points, "points", allow_nan=True), (3,), "points")
    batch = T.shape[:-2]
    R = T[..., :3, :3]
    t = T[..., :3, 3]
    if p.ndim <= len(batch) + 1:
        # one point per transform (batch axes broadcast)
        broadcast_batch(("T", T, 2), ("points", p, 1))
        return (R @ p[..., None])[..., 0] + t
    # several points per transform: batch + (n, 3)
    return p @ np.swapaxes(R, -1, -2) + t[..., None, :]


# ----------------------------------------------------------------------------
# segment pose
# ----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class SegmentPose(ResultRepr):
    """Result of :func:`fit_segment_pose` (a frozen result object).

    Attributes
    ----------
    R : ndarray, shape (..., 3, 3)
        ``lab_R_segment``; NaN in frames that are not valid.
    origin : ndarray, shape (..., 3)
        Segment-frame origin in the lab frame, m; NaN where not valid.
    rms : ndarray, shape (...)
        Root-mean-square distance between measured and fitted markers over the
        visible markers of each frame, m; NaN where not valid.
    residuals : ndarray, shape (..., n_markers)
        Distance of each measured marker from its fitted position, m; NaN for
        missing markers and invalid frames.
    valid : ndarray of bool, shape (...)
        True where at least three non-collinear markers were visible.
    n_visible : ndarray of int, shape (...)
        Number of visible markers in each frame.
    """

    R: np.ndarray
    origin: np.ndarray
    rms: np.ndarray
    residuals: np.ndarray
    valid: np.ndarray
    n_visible: np.ndarray

    @property
    def transform(self) -> np.ndarray:
        """Homogeneous transforms ``lab_T_segment``, shape (..., 4, 4)."""
        return make_transform(self.R, self.origin)


def _first_frames(mask: np.ndarray, limit: int = 5) -> str:
    idx = np.argwhere(mask)
    shown = [tuple(int(i) for i in row) if len(row) > 1 else int(row[0]) for row in idx[:limit]]
    more = f" and {len(idx) - limit} more" if len(idx) > limit else ""
    return f"{shown}{more}"


def _check_local(local, n_markers: int | None = None) -> np.ndarray:
    L = as_float_array(local, "local")
    if L.ndim != 2 or L.shape[1] != 3:
        raise DataError(f"Expected `local` to have shape (n_markers, 3), got {L.shape}")
    if n_markers is not None and L.shape[0] != n_markers:
        raise DataError(
            f"`local` has {L.shape[0]} markers but `markers` has {n_markers}; "
            "give the local coordinates of the same markers in the same order"
        )
    if L.shape[0] < 3:
        raise DataError(
            f"`local` has {L.shape[0]} markers; a segment pose needs at least 3 markers"
        )
    Lc = L - L.mean(axis=0)
    s = np.linalg.svd(Lc, compute_uv=False)
    if s[0] == 0 or s[1] <= COLLINEAR_TOL * s[0]:
        raise DataError(
            "the markers in `local` are collinear (or coincide): their positions do not "
            "define a rotation; use at least three non-collinear markers"
        )
    return L


def fit_segment_pose(
    markers,
    local,
    *,
    weights=None,
    min_markers: int = 3,
    warn: bool = True,
) -> SegmentPose:
    """Least-squares segment pose from three or more markers (Söderkvist–Wedin SVD).

    Finds, frame by frame, the rotation ``R`` (det +1) and origin ``o``
    minimizing ``sum_k w_k |x_k - (R l_k + o)|^2`` over the visible markers.

    Parameters
    ----------
    markers : array_like, shape (..., n_markers, 3)
        Measured marker positions in the lab frame (m); NaN marks a missing
        marker (a marker is missing in a frame if any coordinate is NaN).
    local : array_like, shape (n_markers, 3)
        Marker positions in the segment frame (m), e.g. from
        :func:`static_local_markers`. At least three non-collinear markers.
    weights : array_like, shape (n_markers,) or (..., n_markers), optional
        Non-negative marker weights (default all 1). A zero weight ignores the
        marker in the fit (its residual is still reported).
    min_markers : int, optional
        Smallest number of visible (positively weighted) markers for a valid
        frame; at least 3 (default).
    warn : bool, optional
        Emit one :class:`~ahbm.errors.AhbmWarning` listing the invalid frames
        (default True).

    Returns
    -------
    SegmentPose
        ``R`` (..., 3, 3), ``origin`` (..., 3), ``rms`` (...), ``residuals``
        (..., n_markers), ``valid`` (...) and ``n_visible`` (...). Frames with
        fewer than `min_markers` visible markers, or whose visible markers are
        collinear, are invalid: their pose and residuals are NaN and
        ``valid`` is False.

    Raises
    ------
    DataError
        Wrong shapes, negative weights, collinear `local` markers.

    Notes
    -----
    With weighted centroids ``x̄ = Σ w_k x_k / Σ w_k`` and ``l̄`` (over the markers
    visible in the frame), the cross-dispersion matrix
    ``A = Σ w_k (x_k - x̄)(l_k - l̄)^T = U S V^T`` gives
    ``R = U diag(1, 1, det(U V^T)) V^T`` and ``o = x̄ - R l̄`` (Söderkvist &
    Wedin 1993, eqs 8-12; Veldpaus et al. 1988). The determinant correction
    guarantees a proper rotation even for noisy, nearly planar marker sets.
    All frames are solved at once with a batched SVD.

    Examples
    --------
    >>> local = np.array([[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1], [0, 0, 0]])
    >>> from ahbm.kinematics.rotations import rot_z
    >>> x = local @ rot_z(0.3).T + [1.0, 2.0, 0.5]
    >>> pose = fit_segment_pose(x, local)
    >>> np.allclose(pose.R, rot_z(0.3)), np.round(pose.origin, 12)
    (True, array([1. , 2. , 0.5]))
    """
    X = as_float_array(markers, "markers", allow_nan=True)
    if X.ndim < 2 or X.shape[-1] != 3:
        raise DataError(f"Expected `markers` to have shape (..., n_markers, 3), got {X.shape}")
    m = X.shape[-2]
    L = _check_local(local, m)
    if as_int(min_markers, "min_markers") < 3:
        raise DataError(f"`min_markers` must be at least 3, got {min_markers}")
    batch = X.shape[:-2]
    if weights is None:
        w = np.ones(m)
    else:
        w = as_float_array(weights, "weights")
        if w.shape[-1:] != (m,):
            raise DataError(f"Expected `weights` to have shape ({m},) or (..., {m}), got {w.shape}")
        if (w < 0).any():
            raise DataError("`weights` must be non-negative; use 0 to ignore a marker")
    try:
        w = np.broadcast_to(w, batch + (m,))
    except ValueError as err:
        raise DataError(
            f"batch shape of `weights` {w.shape[:-1]} does not broadcast to that of `markers` "
            f"{batch}"
        ) from err
    visible = np.isfinite(X).all(axis=-1)
    W = np.where(visible, w, 0.0)
    n_vis = np.count_nonzero(visible & (w > 0), axis=-1)
    wsum = W.sum(axis=-1)
    Xz = np.where(visible[..., None], X, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar = (W[..., None] * Xz).sum(axis=-2) / wsum[..., None]
        lbar = (W @ L) / wsum[..., None]
    xc = Xz - xbar[..., None, :]
    lc = L - lbar[..., None, :]
    A = np.swapaxes(W[..., None] * xc, -1, -2) @ lc  # (..., 3, 3) = sum w x l^T
    # degenerate (collinear) visible local marker sets: second singular value of
    # the weighted local dispersion
    Wl = np.swapaxes(W[..., None] * lc, -1, -2) @ lc
    ev = np.linalg.eigvalsh(np.where(np.isfinite(Wl), Wl, 0.0))  # ascending
    collinear = ev[..., 1] <= (COLLINEAR_TOL**2) * np.maximum(ev[..., 2], 1e-300)
    valid = (n_vis >= int(min_markers)) & ~collinear & (wsum > 0)
    A = np.where(valid[..., None, None], A, np.eye(3))
    # the proper rotation maximizing trace(R^T A) is the nearest rotation to A
    R = orthonormalize(A)
    origin = xbar - (R @ lbar[..., None])[..., 0]
    fitted = L @ np.swapaxes(R, -1, -2) + origin[..., None, :]
    res = np.linalg.norm(np.where(visible[..., None], X - fitted, np.nan), axis=-1)
    used = visible & (w > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt((np.where(used, res, 0.0) ** 2).sum(axis=-1) / n_vis)
    nan = np.nan
    R = np.where(valid[..., None, None], R, nan)
    origin = np.where(valid[..., None], origin, nan)
    res = np.where(valid[..., None], res, nan)
    rms = np.where(valid, rms, nan)
    if warn and not valid.all():
        bad = ~valid
        warnings.warn(
            f"{int(bad.sum())} of {bad.size} frame(s) have fewer than {int(min_markers)} "
            f"visible non-collinear markers (frames {_first_frames(bad)}); their pose is NaN "
            "and `valid` is False: fill the marker gaps or add markers",
            AhbmWarning,
            stacklevel=2,
        )
    return SegmentPose(R, origin, rms, res, valid, n_vis)


def local_coordinates(markers, R, origin) -> np.ndarray:
    """Marker coordinates in a segment frame: ``l = R^T (x - origin)``.

    Parameters
    ----------
    markers : array_like, shape (..., n_markers, 3)
        Marker positions in the lab frame, m (NaN allowed: stays NaN).
    R : array_like, shape (..., 3, 3)
        ``lab_R_segment`` per frame.
    origin : array_like, shape (..., 3)
        Segment origin in the lab frame per frame, m.

    Returns
    -------
    ndarray, shape (..., n_markers, 3)

    Examples
    --------
    >>> local_coordinates([[[1.0, 2.0, 3.0]]], np.eye(3)[None], [[1.0, 0.0, 0.0]])
    array([[[0., 2., 3.]]])
    """
    X = as_float_array(markers, "markers", allow_nan=True)
    if X.ndim < 2 or X.shape[-1] != 3:
        raise DataError(f"Expected `markers` to have shape (..., n_markers, 3), got {X.shape}")
    R, p = _check_pose(R, origin)
    if X.shape[:-2] != R.shape[:-2]:
        try:
            np.broadcast_shapes(X.shape[:-2], R.shape[:-2])
        except ValueError as err:
            raise DataError(
                f"frame axes of `markers` {X.shape[:-2]} and of the pose {R.shape[:-2]} "
                "do not match"
            ) from err
    return (X - p[..., None, :]) @ R


def static_local_markers(static_markers, R, origin, *, names=None) -> np.ndarray:
    """Local marker coordinates from a static trial (mean over its frames).

    Parameters
    ----------
    static_markers : array_like, shape (n_frames, n_markers, 3) or (n_markers, 3)
        Marker positions of the static trial in the lab frame, m; NaN for
        missing samples (ignored in the mean).
    R : array_like, shape (n_frames, 3, 3) or (3, 3)
        Segment (anatomical or technical) frame in each static frame.
    origin : array_like, shape (n_frames, 3) or (3,)
        Segment origin in each static frame, m.
    names : sequence of str, optional
        Marker names, used only in error messages.

    Returns
    -------
    ndarray, shape (n_markers, 3)
        Mean local coordinates, to pass as ``local`` to :func:`fit_segment_pose`.

    Raises
    ------
    DataError
        A marker is missing in every static frame (named in the message).

    Examples
    --------
    >>> x = np.array([[[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]] * 4)
    >>> static_local_markers(x, np.eye(3), [0.0, 0.0, 1.0])[2]
    array([0., 0., 0.])
    """
    X = as_float_array(static_markers, "static_markers", allow_nan=True)
    if X.ndim == 2:
        X = X[None]
    if X.ndim != 3 or X.shape[-1] != 3:
        raise DataError(
            f"Expected `static_markers` to have shape (n_frames, n_markers, 3), got {X.shape}"
        )
    R, p = _check_pose(R, origin)
    if R.ndim == 2:
        R = np.broadcast_to(R, (X.shape[0], 3, 3))
        p = np.broadcast_to(p, (X.shape[0], 3))
    if R.shape[0] != X.shape[0]:
        raise DataError(
            f"`static_markers` has {X.shape[0]} frames but the pose has {R.shape[0]}; "
            "give one pose per static frame or a single pose"
        )
    pose_ok = np.isfinite(R).all(axis=(-1, -2)) & np.isfinite(p).all(axis=-1)
    loc = local_coordinates(X, R, p)
    ok = np.isfinite(loc).all(axis=-1) & pose_ok[:, None]
    count = ok.sum(axis=0)
    if (count == 0).any():
        k = int(np.argmax(count == 0))
        label = f"'{names[k]}'" if names is not None and k < len(names) else f"#{k}"
        raise DataError(
            f"marker {label} is missing in every static frame (or the pose is NaN there); "
            "fill it in the static trial or drop it from the marker set"
        )
    return np.where(ok[..., None], loc, 0.0).sum(axis=0) / count[:, None]


# ----------------------------------------------------------------------------
# anatomical frames
# ----------------------------------------------------------------------------

_AXES = {"x": 0, "y": 1, "z": 2}


def frame_from_landmarks(
    origin,
    primary,
    plane_point,
    *,
    axes: str = "zx",
    primary_is_axis: bool = False,
    plane_is_axis: bool = False,
) -> np.ndarray:
    """Right-handed anatomical frame from landmarks (primary axis + plane).

    Parameters
    ----------
    origin : array_like, shape (..., 3)
        Origin of the frame (e.g. a joint centre or the mid-ASIS point), m.
    primary : array_like, shape (..., 3)
        A point on the primary axis (direction ``primary - origin``), or the
        axis direction itself with ``primary_is_axis=True``.
    plane_point : array_like, shape (..., 3)
        A point defining, with the primary axis, the plane that contains the
        secondary axis; the secondary axis points towards its side. With
        ``plane_is_axis=True`` a direction instead of a point.
    axes : str, optional
        Two distinct letters: the primary axis and the secondary axis, e.g.
        ``"zx"`` (default): z exactly along the primary direction, x in the
        plane, y completing a right-handed frame.
    primary_is_axis, plane_is_axis : bool, optional
        Interpret `primary` / `plane_point` as directions (default: points).

    Returns
    -------
    ndarray, shape (..., 4, 4)
        Homogeneous transforms ``lab_T_anatomical`` (use
        :func:`transform_to_pose` for ``(R, origin)``). Frames with NaN
        landmarks are NaN.

    Raises
    ------
    DataError
        Bad `axes`, shapes that do not broadcast, or landmarks that are
        collinear with finite coordinates (the plane is undefined); the message
        names the first such frame.

    Notes
    -----
    ``e_p = d_p / |d_p|``; ``e_s = (d_s - (d_s·e_p) e_p) / |…|`` (Gram–Schmidt)
    with ``d_s`` the direction to the plane point; the third axis is
    ``e_p × e_s`` when (primary, secondary, third) is a cyclic permutation of
    (x, y, z), else ``e_s × e_p``.

    Examples
    --------
    >>> T = frame_from_landmarks([0, 0, 0.0], [0, 0, 1.0], [1.0, 0.0, 0.5])
    >>> np.round(T[:3, :3], 12)
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    """
    if (
        not isinstance(axes, str)
        or len(axes) != 2
        or any(c not in _AXES for c in axes.lower())
        or axes[0].lower() == axes[1].lower()
    ):
        raise DataError(f"`axes` must be two distinct letters from 'xyz' (e.g. 'zx'), got {axes!r}")
    a = _AXES[axes[0].lower()]
    b = _AXES[axes[1].lower()]
    c = 3 - a - b
    o = check_trailing_shape(as_float_array(origin, "origin", allow_nan=True), (3,), "origin")
    p1 = check_trailing_shape(as_float_array(primary, "primary", allow_nan=True), (3,), "primary")
    p2 = check_trailing_shape(
        as_float_array(plane_point, "plane_point", allow_nan=True), (3,), "plane_point"
    )
    try:
        batch = np.broadcast_shapes(o.shape[:-1], p1.shape[:-1], p2.shape[:-1])
    except ValueError as err:
        raise DataError(
            f"batch shapes of `origin` {o.shape[:-1]}, `primary` {p1.shape[:-1]} and "
            f"`plane_point` {p2.shape[:-1]} do not broadcast"
        ) from err
    dp = p1 if primary_is_axis else p1 - o
    ds = p2 if plane_is_axis else p2 - o
    dp, ds = np.broadcast_arrays(dp, ds)
    finite = (
        np.isfinite(dp).all(axis=-1)
        & np.isfinite(ds).all(axis=-1)
        & np.isfinite(np.broadcast_to(o, batch + (3,))).all(axis=-1)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        n1 = np.linalg.norm(dp, axis=-1)
        ep = dp / n1[..., None]
        ds_perp = ds - np.sum(ds * ep, axis=-1)[..., None] * ep
        n2 = np.linalg.norm(ds_perp, axis=-1)
    scale = np.maximum(np.linalg.norm(ds, axis=-1), 1e-300)
    degenerate = finite & ((n1 == 0) | ~(n2 > 1e-10 * scale))
    if degenerate.any():
        where = _first_frames(np.atleast_1d(degenerate))
        raise DataError(
            f"landmarks are coincident or collinear in frame(s) {where}: the primary axis "
            "and the plane point do not define a plane; check the landmark markers"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        es = ds_perp / n2[..., None]
    cyclic = (b - a) % 3 == 1
    ec = np.cross(ep, es) if cyclic else np.cross(es, ep)
    T = np.zeros(batch + (4, 4))
    T[..., :3, a] = ep
    T[..., :3, b] = es
    T[..., :3, c] = ec
    T[..., :3, 3] = o
    T[..., 3, 3] = 1.0
    bad = ~finite
    if bad.any():
        T[bad] = np.nan
    return T
