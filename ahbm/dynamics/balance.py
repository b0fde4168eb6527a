"""Balance: zero-moment point, support polygons, extrapolated COM.

The centroidal momentum they build on is in :mod:`ahbm.dynamics.centroidal`.

Every function is vectorized over leading batch axes (a whole trial in one
call); the multibody functions loop over bodies only and accept a kinematic
state ``kin=forward_kinematics(model, q, qd[, qdd])`` like the COM and
momentum functions of :mod:`ahbm.kinematics.forward`.

The ground
----------
The ground is a plane given by a unit normal ``ground_normal`` (pointing out
of the ground, towards the body; default ``(0, 0, 1)``, Z up) and a point
``ground_point`` on it (default the world origin). Points returned on the
ground (ZMP, polygon vertices, extrapolated COM) are world positions on that
plane; polygons are counter-clockwise seen from the side the normal points
to.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import as_float_array, check_trailing_shape
from ahbm.dynamics.centroidal import _accelerations, _com, _rate_at_origin
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model

__all__ = [
    "zmp",
    "zmp_from_grf",
    "support_polygon",
    "inside_polygon",
    "stability_margin",
    "extrapolated_com",
]


# ----------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------


def _ground(ground_normal, ground_point):
    """Unit normal (3,) and point (3,) of the ground plane."""
    n = as_float_array(ground_normal, "ground_normal")
    if n.shape != (3,):
        raise DataError(f"Expected `ground_normal` to have shape (3,), got {n.shape}")
    norm = float(np.linalg.norm(n))
    if norm < 1e-12:
        raise DataError("`ground_normal` is zero; give the ground's normal, e.g. (0, 0, 1)")
    p0 = as_float_array(ground_point, "ground_point")
    if p0.shape != (3,):
        raise DataError(f"Expected `ground_point` to have shape (3,), got {p0.shape}")
    return n / norm, p0


def _plane_axes(n):
    """Two unit vectors e1, e2 with (e1, e2, n) a right-handed orthonormal basis."""
    a = np.eye(3)[int(np.argmin(np.abs(n)))]
    e1 = a - (a @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def _threshold(value):
    try:
        t = float(value)
    except (TypeError, ValueError) as err:
        raise DataError(f"Expected `threshold` to be a number in N, got {value!r}") from err
    if np.isnan(t) or isinstance(value, (bool, np.bool_)):
        raise DataError(f"Expected `threshold` to be a number in N, got {value!r}")
    return t


def _points(x, name, *, allow_nan):
    arr = as_float_array(x, name, allow_nan=allow_nan)
    return check_trailing_shape(arr, (3,), name)


def _cop(force, moment, n, p0, threshold):
    """Point of the ground plane where the tangential moment of a wrench vanishes.

    ``force`` (..., 3) and ``moment`` (..., 3) about the world origin; NaN
    where ``n · force <= threshold``.
    """
    fn = force @ n
    m0 = moment - cross(p0, force)  # moment about the ground point
    bad = ~(fn > threshold)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = p0 + cross(n, m0) / np.where(bad, np.nan, fn)[..., None]
    r[bad] = np.nan
    return r


# ----------------------------------------------------------------------------
# zero-moment point
# ----------------------------------------------------------------------------


def zmp(
    model: Model,
    q,
    qd,
    qdd,
    *,
    ground_normal=(0.0, 0.0, 1.0),
    ground_point=(0.0, 0.0, 0.0),
    threshold: float = 0.0,
    kin=None,
) -> np.ndarray:
    """Zero-moment point from the multibody dynamics (no force data needed).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
    qdd : array_like, shape (..., nv), or None with a ``kin`` that has them
    ground_normal : array_like, shape (3,), optional
        Normal of the ground plane, pointing towards the body (normalized
        here). Default ``(0, 0, 1)``.
    ground_point : array_like, shape (3,), optional
        A point of the ground plane, m. Default the world origin.
    threshold : float, optional
        Frames where the normal component of the ground reaction that the
        motion needs, ``n · (ṗ − M g)``, is not above this value (N) give NaN:
        the ground cannot pull (flight, or a motion the ground cannot
        support). Default 0; ``-numpy.inf`` for none.
    kin : Kinematics, optional
        State from :func:`~ahbm.kinematics.forward_kinematics`.

    Returns
    -------
    ndarray, shape (..., 3)
        World position of the ZMP on the ground plane, m.

    Raises
    ------
    DataError
        For a bad state, a zero normal, or a ground plane of the wrong shape.

    Notes
    -----
    The ZMP ``D`` is the point of the ground where the moment of gravity and
    the inertia forces (Chung 2009, eqs 4.1–4.10; Sardain & Bessonnet 2004)

    ``F = Σ m_i (g − r̈_Gi) = M g − ṗ``,
    ``M_O = Σ [r_Gi × m_i (g − r̈_Gi)] − Σ Ḣ_i = c × M g − k̇_O``

    has no component in the ground plane, ``n × M_D = 0``:

    ``r_D = p_0 + n × (M_O − p_0 × F) / (n · F)``  (eq. 4.8, ground through ``p_0``)

    with the rate of momentum about the origin ``k̇_O = k̇_G + c × ṗ`` from
    :func:`centroidal_momentum_rate`. ``Σ Ḣ_i`` is the sum of the segments'
    own rates of angular momentum (eq. 4.15; Chung calls it ``Ḣ_G``). With
    ``n = (0, 1, 0)`` and gravity ``(0, −g, 0)`` this is Chung's eq. 4.14 /
    7.31. It equals the centre of pressure of the ground reaction that keeps
    the motion going (see :func:`zmp_from_grf`).

    Examples
    --------
    >>> from ahbm.models import human15
    >>> from ahbm.kinematics import center_of_mass, neutral_q
    >>> m = human15()
    >>> q = neutral_q(m); q[2] = 1.0  # standing still: the ZMP is below the COM
    >>> d = zmp(m, q, np.zeros(m.nv), np.zeros(m.nv))
    >>> bool(np.allclose(d[:2], center_of_mass(m, q)[:2])), float(d[2])
    (True, 0.0)
    """
    n, p0 = _ground(ground_normal, ground_point)
    t = _threshold(threshold)
    kin, acc = _accelerations(model, kin, q, qd, qdd)
    c, M = _com(kin), model.total_mass
    hd = _rate_at_origin(kin, acc)  # [k̇_O; ṗ]
    g = model.gravity
    force = hd[:, 3:] - M * g  # ground reaction = −F_IGF
    moment = hd[:, :3] - M * cross(c, g)  # its moment about O = −M_O
    return _cop(force, moment, n, p0, t).reshape(kin.batch_shape + (3,))


def zmp_from_grf(
    force,
    moment,
    *,
    origin=(0.0, 0.0, 0.0),
    ground_normal=(0.0, 0.0, 1.0),
    ground_point=(0.0, 0.0, 0.0),
    threshold: float = 10.0,
) -> np.ndarray:
    """Zero-moment point of a measured ground reaction (force-plate resultants).

    Parameters
    ----------
    force : array_like, shape (..., 3)
        Resultant ground reaction force on the body, N (sum over the plates).
    moment : array_like, shape (..., 3)
        Resultant moment of the ground reaction about ``origin``, N m.
    origin : array_like, shape (3,) or (..., 3), optional
        Point the moment is taken about (a force plate's ``origin``), m.
        Default the world origin.
    ground_normal, ground_point : array_like, shape (3,), optional
        The ground plane (see :func:`zmp`).
    threshold : float, optional
        NaN where the normal force ``n · force`` is not above this value, N.
        Default 10 N (the force plates' COP threshold).

    Returns
    -------
    ndarray, shape (..., 3)
        The point of the ground plane where the ground reaction has no
        moment in the plane (only a free moment about the normal), m. On flat
        ground with one plate this is the plate's centre of pressure; with
        several plates it is the COP of the net reaction. NaN where the
        force or moment is NaN or the normal force is too small.

    Raises
    ------
    DataError
        For arrays of the wrong shape or a zero normal.

    Notes
    -----
    With ``M_0 = moment + (origin − p_0) × force`` the moment about the ground
    point ``p_0``, ``r = p_0 + n × M_0 / (n · force)`` solves
    ``n × (M_0 − (r − p_0) × force) = 0`` with ``n · (r − p_0) = 0``
    (Chung 2009, eq. 4.8; Sardain & Bessonnet 2004: on flat ground COP and
    ZMP coincide).

    Examples
    --------
    >>> zmp_from_grf([0, 0, 800.0], [80.0, -40.0, 3.0])  # 800 N at (0.05, 0.1, 0)
    array([0.05, 0.1 , 0.  ])
    """
    n, p0 = _ground(ground_normal, ground_point)
    t = _threshold(threshold)
    F = _points(force, "force", allow_nan=True)
    M = _points(moment, "moment", allow_nan=True)
    r = _points(origin, "origin", allow_nan=False)
    try:
        shape = np.broadcast_shapes(F.shape, M.shape, r.shape)
    except ValueError as err:
        raise DataError(
            f"`force` {F.shape}, `moment` {M.shape} and `origin` {r.shape} do not broadcast"
        ) from err
    F = np.broadcast_to(F, shape)
    M0 = np.broadcast_to(M, shape) + cross(r, F)  # about the world origin
    return _cop(F, M0, n, p0, t)


# ----------------------------------------------------------------------------
# support polygons
# ----------------------------------------------------------------------------


#: Work size (frames × n_points³) of one pass of the vectorized hull.
_HULL_CHUNK = 2_000_000


def _in_plane(x, e1, e2):
    return np.stack([x @ e1, x @ e2], axis=-1)


def _hull_vertices(P, valid):
    """Convex-hull vertex mask (N, n) and counter-clockwise order (N, n) of 2-D points.

    Edge (i, j) is a counter-clockwise hull edge when every other valid point
    lies on its left or on the segment [i, j]; a vertex starts such an edge.
    """
    N, n = valid.shape
    hi = np.where(valid[..., None], P, -np.inf).max(axis=1)
    lo = np.where(valid[..., None], P, np.inf).min(axis=1)
    scale = np.where(valid.any(-1), (hi - lo).max(axis=-1), 0.0)
    tol = (1e-12 * np.maximum(scale, 1e-300))[:, None, None, None]
    # drop duplicates (keep the first)
    d2 = ((P[:, :, None] - P[:, None, :]) ** 2).sum(-1)  # (N, i, k)
    earlier = np.tril(np.ones((n, n), dtype=bool), -1)  # k < i
    dup = (valid[:, None, :] & earlier & (d2 <= (tol[..., 0] ** 2))).any(-1)
    ok = valid & ~dup
    E = P[:, None, :, :] - P[:, :, None, :]  # E[n, i, j] = P_j − P_i (edges and offsets)
    # for edge (i, j) and point k: crs = E_ij × E_ik, dot = E_ij · E_ik  (N, i, j, k)
    crs = E[:, :, :, None, 0] * E[:, :, None, :, 1] - E[:, :, :, None, 1] * E[:, :, None, :, 0]
    L2 = (E**2).sum(-1)[..., None]  # |P_j − P_i|², (N, i, j, 1)
    dot = (E[:, :, :, None, :] * E[:, :, None, :, :]).sum(-1)
    ltol = tol * np.sqrt(np.maximum(L2, 0.0))  # cross-product tolerance ~ |e| tol
    left = crs > ltol
    on_segment = (np.abs(crs) <= ltol) & (dot >= -ltol) & (dot <= L2 + ltol)
    good = left | on_segment | ~ok[:, None, None, :]
    edge = good.all(-1) & ok[:, :, None] & ok[:, None, :] & (L2[..., 0] > 0)
    vertex = edge.any(-1)
    single = ok.sum(-1) == 1
    vertex[single] = ok[single]
    # counter-clockwise order around the mean of the vertices
    cnt = vertex.sum(-1)
    mid = (np.where(vertex[..., None], P, 0.0).sum(1)) / np.maximum(cnt, 1)[:, None]
    ang = np.arctan2(P[..., 1] - mid[:, None, 1], P[..., 0] - mid[:, None, 0])
    ang = np.where(vertex, ang, np.inf)
    order = np.argsort(ang, axis=-1, kind="stable")
    # start at the lowest vertex along e2 (then along e1)
    Q = np.take_along_axis(P, order[..., None], axis=1)
    live = np.arange(n)[None, :] < cnt[:, None]
    y = np.where(live, Q[..., 1], np.inf)
    low = live & (y <= y.min(-1, keepdims=True) + tol[:, :, 0, 0])
    start = np.argmin(np.where(low, Q[..., 0], np.inf), axis=-1)
    idx = (np.arange(n)[None, :] + start[:, None]) % np.maximum(cnt, 1)[:, None]
    idx = np.where(live, idx, np.arange(n)[None, :])
    return vertex, np.take_along_axis(order, idx, axis=1), cnt


def support_polygon(
    points, *, ground_normal=(0.0, 0.0, 1.0), ground_point=(0.0, 0.0, 0.0)
) -> np.ndarray:
    """Support polygon: convex hull of contact points projected on the ground.

    Parameters
    ----------
    points : array_like, shape (..., n_points, 3)
        Contact points (e.g. foot markers of the feet in contact), m; NaN
        marks a point that is missing or not in contact in that frame.
    ground_normal, ground_point : array_like, shape (3,), optional
        The ground plane (see :func:`zmp`).

    Returns
    -------
    ndarray, shape (..., n_points, 3)
        Per frame, the hull vertices projected on the ground plane, in
        counter-clockwise order seen from the normal's side, followed by NaN
        rows (a frame's vertex count is the number of non-NaN rows). Points
        on an edge and repeated points are not vertices. One vertex (a single
        point) and two (collinear points: a segment) are kept as they are;
        a frame without points is all NaN.

    Raises
    ------
    DataError
        If ``points`` does not have shape (..., n_points, 3) or holds inf.

    Notes
    -----
    Projection on the plane: ``p − ((p − p_0) · n) n``. The hull of each frame
    is found for all frames at once: the edge ``(i, j)`` is a
    counter-clockwise hull edge when every other point ``k`` lies left of it,
    ``n · ((p_j − p_i) × (p_k − p_i)) > 0`` (Chung 2009, eq. 7.32), or on
    the segment; this costs ``O(n_points³)`` per frame, fine for the handful
    of contact points of a foot.

    Examples
    --------
    >>> pts = [[0, 0, 0.02], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0], [np.nan] * 3]
    >>> support_polygon(pts)[:4]
    array([[0., 0., 0.],
           [1., 0., 0.],
           [1., 1., 0.],
           [0., 1., 0.]])
    """
    n, p0 = _ground(ground_normal, ground_point)
    x = as_float_array(points, "points", allow_nan=True)
    if x.ndim < 2 or x.shape[-1] != 3:
        raise DataError(f"Expected `points` to have shape (..., n_points, 3), got {x.shape}")
    if np.isinf(x).any():
        raise DataError("`points` holds inf; use NaN for missing points")
    batch, k = x.shape[:-2], x.shape[-2]
    if k == 0 or x.size == 0:  # no points (or no frames): no vertices
        return np.full(x.shape, np.nan)
    xf = x.reshape(-1, k, 3)
    proj = xf - ((xf - p0) @ n)[..., None] * n
    valid = ~np.isnan(xf).any(-1)
    e1, e2 = _plane_axes(n)
    P = np.nan_to_num(_in_plane(proj - p0, e1, e2))
    order = np.empty(valid.shape, dtype=np.intp)
    cnt = np.empty(valid.shape[0], dtype=np.intp)
    step = max(1, _HULL_CHUNK // max(k, 1) ** 3)  # frames per pass: bounded memory
    for s0 in range(0, valid.shape[0], step):
        _, order[s0 : s0 + step], cnt[s0 : s0 + step] = _hull_vertices(
            P[s0 : s0 + step], valid[s0 : s0 + step]
        )
    out = np.take_along_axis(proj, order[..., None], axis=1)
    out[np.arange(k)[None, :] >= cnt[:, None]] = np.nan
    return out.reshape(batch + (k, 3))


def _polygon_edges(position, polygon, ground_normal):
    """2-D point (N, 2), edge starts and ends (N, k, 2), edge mask (N, k), batch shape."""
    n, _ = _ground(ground_normal, (0.0, 0.0, 0.0))
    p = _points(position, "position", allow_nan=True)
    V = as_float_array(polygon, "polygon", allow_nan=True)
    if V.ndim < 2 or V.shape[-1] != 3:
        raise DataError(f"Expected `polygon` to have shape (..., n_vertices, 3), got {V.shape}")
    if V.shape[-2] == 0:
        raise DataError("`polygon` has no vertices; give at least one (n_vertices, 3) vertex")
    try:
        batch = np.broadcast_shapes(p.shape[:-1], V.shape[:-2])
    except ValueError as err:
        raise DataError(
            f"batch shapes of `position` {p.shape[:-1]} and `polygon` {V.shape[:-2]} do not "
            "broadcast"
        ) from err
    k = V.shape[-2]
    p = np.broadcast_to(p, batch + (3,)).reshape(-1, 3)
    V = np.broadcast_to(V, batch + (k, 3)).reshape(-1, k, 3)
    valid = ~np.isnan(V).any(-1)
    cnt = valid.sum(-1)
    if np.any(valid & (np.arange(k)[None, :] >= cnt[:, None])):
        raise DataError(
            "`polygon` has a NaN row before a vertex; give the vertices first and the NaN "
            "padding after them, as support_polygon returns them"
        )
    e1, e2 = _plane_axes(n)
    P = _in_plane(np.nan_to_num(V), e1, e2)
    x = _in_plane(p, e1, e2)
    nxt = (np.arange(k)[None, :] + 1) % np.maximum(cnt, 1)[:, None]
    B = np.take_along_axis(P, nxt[..., None], axis=1)
    # orientation: a clockwise polygon is walked backwards
    area = (P[..., 0] * B[..., 1] - P[..., 1] * B[..., 0]) * valid
    cw = area.sum(-1) < 0
    P, B = np.where(cw[:, None, None], B, P), np.where(cw[:, None, None], P, B)
    return x, P, B, valid, cnt, batch


def inside_polygon(position, polygon, *, ground_normal=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Whether a point (e.g. the ZMP) lies in a convex support polygon.

    Parameters
    ----------
    position : array_like, shape (..., 3)
        The point, m (projected on the ground along the normal).
    polygon : array_like, shape (..., n_vertices, 3)
        Convex polygon as :func:`support_polygon` returns it (vertices in
        order, then NaN rows); clockwise order is accepted too.
    ground_normal : array_like, shape (3,), optional
        Normal of the ground plane. Default ``(0, 0, 1)``.

    Returns
    -------
    ndarray of bool, shape (...)
        True inside or on the boundary; False outside, and where the point
        is NaN or the polygon has no vertex (see :func:`stability_margin`,
        which is NaN there). A polygon of one or two vertices contains only
        its point or segment.

    Notes
    -----
    Chung (2009, eq. 7.32): with the edge vectors ``L_k = p_{k+1} − p_k``
    and ``d_k = D − p_k``, ``D`` is inside when ``n · (L_k × d_k) ≥ 0`` for
    every edge of the counter-clockwise polygon.

    Examples
    --------
    >>> square = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]
    >>> inside_polygon([[0.5, 0.5, 0], [1.5, 0.5, 0]], square)
    array([ True, False])
    """
    m = stability_margin(position, polygon, ground_normal=ground_normal)
    return m >= 0  # NaN compares False


def stability_margin(position, polygon, *, ground_normal=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Signed distance from a point to the edges of a convex support polygon.

    Parameters
    ----------
    position : array_like, shape (..., 3)
        The point (ZMP, COP or extrapolated COM), m.
    polygon : array_like, shape (..., n_vertices, 3)
        Convex polygon as :func:`support_polygon` returns it.
    ground_normal : array_like, shape (3,), optional
        Normal of the ground plane. Default ``(0, 0, 1)``.

    Returns
    -------
    ndarray, shape (...)
        Distance in the ground plane to the nearest edge, m: positive inside,
        negative outside (minus the distance to the polygon), zero on the
        boundary. NaN where the point is NaN or the polygon has no vertex.
        With the extrapolated COM as the point this is Hof's (2005) margin of
        stability ``b``.

    Notes
    -----
    The point is inside when it is left of every edge (``n · (L_k × d_k) ≥ 0``,
    Chung 2009, eq. 7.32); the magnitude is the smallest distance to the edge
    segments (for a point inside a convex polygon, the distance to the
    boundary).

    Examples
    --------
    >>> square = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]
    >>> stability_margin([[0.5, 0.25, 0], [2, 0.5, 0]], square)
    array([ 0.25, -1.  ])
    """
    x, A, B, valid, cnt, batch = _polygon_edges(position, polygon, ground_normal)
    L = B - A
    d = x[:, None, :] - A
    crs = L[..., 0] * d[..., 1] - L[..., 1] * d[..., 0]
    L2 = (L**2).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(np.where(L2 > 0, (d * L).sum(-1) / L2, 0.0), 0.0, 1.0)
    dist = np.linalg.norm(d - t[..., None] * L, axis=-1)
    dist = np.where(valid, dist, np.inf).min(-1)
    scale = np.sqrt(np.where(valid, L2, 0.0).max(-1))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        side = np.where(valid & (L2 > 0), crs / np.sqrt(L2), 0.0)  # signed distance to the line
    inside = (side >= -1e-12 * scale).all(-1) & (cnt >= 3)
    margin = np.where(inside, dist, -dist)
    margin[(cnt == 0) | np.isnan(x).any(-1)] = np.nan
    return margin.reshape(batch)


# ----------------------------------------------------------------------------
# extrapolated centre of mass
# ----------------------------------------------------------------------------


def extrapolated_com(
    com,
    com_velocity,
    *,
    leg_length=None,
    omega0=None,
    gravity=(0.0, 0.0, -9.81),
    ground_normal=(0.0, 0.0, 1.0),
    ground_point=(0.0, 0.0, 0.0),
) -> np.ndarray:
    """Extrapolated centre of mass (Hof 2005), the capture point of an inverted pendulum.

    Parameters
    ----------
    com : array_like, shape (..., 3)
        Position of the whole-body centre of mass, m.
    com_velocity : array_like, shape (..., 3)
        Its velocity, m/s.
    leg_length : float or array_like, shape (...), optional
        Pendulum length ``l`` (Hof: leg length; for the linear inverted
        pendulum, the COM height), m. Give exactly one of ``leg_length`` and
        ``omega0``.
    omega0 : float or array_like, shape (...), optional
        Eigenfrequency ``ω₀ = √(g / l)`` of the pendulum, 1/s.
    gravity : array_like, shape (3,), optional
        Gravity vector, m/s²; its magnitude ``g`` is used with ``leg_length``.
        Default ``(0, 0, −9.81)`` (pass ``model.gravity`` for a model's).
    ground_normal, ground_point : array_like, shape (3,), optional
        The ground plane (see :func:`zmp`).

    Returns
    -------
    ndarray, shape (..., 3)
        ``XcoM = c + ċ / ω₀`` projected on the ground plane, m. Compare it
        with the support polygon: :func:`stability_margin` gives Hof's margin
        of stability ``b``.

    Raises
    ------
    DataError
        If both or neither of ``leg_length`` and ``omega0`` are given, or one
        is not positive.

    Notes
    -----
    For the linearized inverted pendulum ``ẍ = ω₀² (x − u)`` with the centre
    of pressure ``u``, the COM comes to rest above ``u`` exactly when
    ``u = x + ẋ / ω₀`` (Hof, Gazendam & Sinke 2005, J Biomech 38:1–8; the
    "capture point" of Pratt et al. 2006).

    Examples
    --------
    >>> extrapolated_com([0.1, 0, 0.9], [0.6, 0, 0], omega0=3.0)  # 0.1 m + 0.6 m/s / 3 s⁻¹
    array([0.3, 0. , 0. ])
    """
    n, p0 = _ground(ground_normal, ground_point)
    c = _points(com, "com", allow_nan=True)
    v = _points(com_velocity, "com_velocity", allow_nan=True)
    if (leg_length is None) == (omega0 is None):
        raise DataError("give exactly one of `leg_length` (m) and `omega0` (1/s)")
    if omega0 is None:
        gv = as_float_array(gravity, "gravity")
        if gv.shape != (3,) or not np.linalg.norm(gv) > 0:
            raise DataError(
                f"Expected `gravity` to be a nonzero vector of shape (3,), got {gravity!r}"
            )
        g = float(np.linalg.norm(gv))
        ell = as_float_array(leg_length, "leg_length")
        if np.any(ell <= 0):
            raise DataError(f"Expected `leg_length` to be positive (m), got {leg_length!r}")
        w = np.sqrt(g / ell)
    else:
        w = as_float_array(omega0, "omega0")
        if np.any(w <= 0):
            raise DataError(f"Expected `omega0` to be positive (1/s), got {omega0!r}")
    try:
        x = c + v / np.asarray(w)[..., None]
    except ValueError as err:
        raise DataError(
            f"`com` {c.shape}, `com_velocity` {v.shape} and the pendulum length or omega0 "
            f"{np.shape(w)} do not broadcast"
        ) from err
    return x - ((x - p0) @ n)[..., None] * n
