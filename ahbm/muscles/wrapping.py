"""Muscle wrapping over cylinders, spheres and ellipsoids, as OpenSim computes it.

One straight path segment from ``p`` to ``s`` (the path points before and after
a wrap object, in the wrap object's own frame) either passes the object (the
wrap is *inactive*) or wraps over it: the path runs straight from ``p`` to a
first tangent point ``t1``, along the surface to a second tangent point
``t2``, and straight on to ``s``. :func:`wrap_path_segment` computes this
for a whole batch of segments at once, with OpenSim 4's algorithms
(``WrapCylinder``, ``WrapSphere``, ``WrapEllipsoid``): the same tests for
when a wrap is active, the same quadrant (side) constraint, the same
cylinder length limits, the same tangent points and the same surface length,
so that muscle lengths agree with OpenSim's (to round-off in the tests).
The notes of :func:`wrap_path_segment` list OpenSim's rules and quirks,
including the degenerate inputs where OpenSim's own construction fails;
:func:`wrap_length_gradient` gives the derivatives of the wrapped length with
respect to the end points.

Wrap frames follow OpenSim: the cylinder's axis is its z axis and it spans
``-length/2 <= z <= length/2``; sphere and ellipsoid are centred at the
origin, the ellipsoid's semi-axes along x, y, z.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ahbm._internal.validation import as_choice, as_vector_array, broadcast_batch
from ahbm.errors import AhbmWarning, DataError
from ahbm.muscles._wrap_math import _acos, _dot, _norm, _pick_closest_pair, _sel, _sign, _unit

__all__ = ["WrapResult", "wrap_path_segment", "wrap_length_gradient", "WRAP_KINDS"]

WRAP_KINDS = ("cylinder", "sphere", "ellipsoid", "torus")
"""The wrap-object kinds :func:`wrap_path_segment` computes."""

_METHODS = ("hybrid", "midpoint", "axial")
_QUADRANTS = {
    "-x": (0, -1),
    "x": (0, 1),
    "+x": (0, 1),
    "-y": (1, -1),
    "y": (1, 1),
    "+y": (1, 1),
    "-z": (2, -1),
    "z": (2, 1),
    "+z": (2, 1),
    "all": (0, 0),
    "unassigned": (0, 0),
}
_ROUNDOFF = 2e-13  # OpenSim's ROUNDOFF_ERROR


class WrapResult(NamedTuple):
    """The wrap of a batch of path segments over one wrap object.

    All arrays have the batch shape ``B`` of the segments (the broadcast
    leading axes of ``p`` and ``s``); points are in the wrap object's frame.

    Attributes
    ----------
    active : ndarray of bool, shape B
        True where the segment wraps over the object (OpenSim's return codes
        ``wrapped`` and ``mandatoryWrap``), False where the straight segment
        is kept (``noWrap``, ``insideRadius``).
    t1, t2 : ndarray, shape B + (3,)
        The tangent points (m): the path leaves the straight line from ``p``
        at ``t1`` and rejoins the straight line to ``s`` at ``t2``.
        **Inactive convention**: NaN where ``active`` is False.
    arc_length : ndarray, shape B
        The length on the surface from ``t1`` to ``t2`` (m); 0 where inactive.
    length : ndarray, shape B
        The wrapped length of the segment (m): ``|p - t1| + arc_length +
        |t2 - s|`` where active, ``|p - s|`` where inactive.
    mandatory : ndarray of bool, shape B
        True where OpenSim's wrap returns ``mandatoryWrap``: every active
        ellipsoid wrap; a cylinder wrap whose straight segment passes the axis
        within the radius between ``p`` and ``s`` (with a quadrant, only when
        an end point lies on the allowed side); a sphere wrap only with a
        quadrant, an end point on the allowed side and the segment cutting
        the sphere. When a path wrap may apply to several segments, OpenSim
        takes the first mandatory one, else the active one whose wrap
        lengthens its segment least.
    """

    active: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    arc_length: np.ndarray
    length: np.ndarray
    mandatory: np.ndarray


# --------------------------------------------------------------------------- sphere


def _sphere(radius, p1, p2, axis, sign):
    """OpenSim's WrapSphere::wrapLine on batches; returns (active, mandatory, r1, r2, arc)."""
    R = radius
    with np.errstate(invalid="ignore", divide="ignore"):
        d1 = _norm(p1)
        d2 = _norm(p2)
        inside = (d1 < R) | (d2 < R)
        ri = p1 - p2
        a = _dot(ri, ri)
        b = 2.0 * _dot(p2, ri)
        c = _dot(p2, p2) - R * R
        disc = b * b - 4.0 * a * c
        sq = np.sqrt(np.maximum(disc, 0.0))
        l1 = (-b + sq) / (2.0 * a)
        l2 = (-b - sq) / (2.0 * a)
        hit = (disc >= 0.0) & (l1 > 0) & (l1 < 1) & (l2 > 0) & (l2 < 1) & ~(l1 < l2) & (a > 0)
        go = ~inside & hit

        u12, _ = _unit(ri)  # unit p1 - p2
        np2, _ = _unit(p2)
        hp2 = np.cross(u12, np2)
        # A line through the centre has no plane: OpenSim then takes the tangent points
        # of its previous wrap times the previous normalization factor, which its
        # WrapResult never copies (NaN), and a NaN wrap is never chosen: no wrap.
        degenerate = _norm(hp2) < 1e-5
        go = go & ~degenerate
        n, _ = _unit(hp2)

        def candidates(P, dist):
            y, _ = _unit(-P)
            z = np.cross(n, y)
            ang = np.arcsin(np.clip(R / dist, -1.0, 1.0))
            ca, sa = np.cos(ang)[..., None], np.sin(ang)[..., None]
            lt = (dist * np.cos(ang))[..., None]
            return P + (ca * y - sa * z) * lt, P + (ca * y + sa * z) * lt

        r1a, r1b = candidates(p1, d1)
        r2a, r2b = candidates(p2, d2)
        c1a, c1b, c2a, c2b = (_unit(v)[0] for v in (r1a, r1b, r2a, r2b))
        r1, r2 = _pick_closest_pair(c1a, c1b, c2a, c2b, r1a, r1b, r2a, r2b)
        mandatory = np.zeros(go.shape, bool)  # unconstrained spheres return "wrapped"
        far = np.zeros(go.shape, bool)

        if sign != 0:
            s1, s2 = _sign(p1[..., axis]), _sign(p2[..., axis])
            on_side = ~degenerate & ((s1 == sign) | (s2 == sign))
            # closest point of the line to the centre (tt in metres, as in OpenSim)
            tt = _dot(p1, u12)
            mm = p1 - tt[..., None] * u12
            cut = (_dot(mm, mm) < R * R) & (tt > 0.0) & (tt < 1.0)
            possible = (s1 != s2) & (_sign(mm[..., axis]) != sign)
            go = go & ~(on_side & ~cut & ~possible)
            mandatory = go & on_side & cut
            constrain = ~degenerate & ((s1 != sign) | (s2 != sign))
            wa = np.zeros(3)
            wa[axis] = sign
            sm, _ = _unit(-p1 - p2)
            pick1 = _dot(c1a, sm) > _dot(c1b, sm)
            pick2 = _dot(c2a, sm) > _dot(c2b, sm)
            q1, q11 = _sel(pick1, r1a, r1b), _sel(pick1, r1b, r1a)
            q2, q22 = _sel(pick2, r2a, r2b), _sel(pick2, r2b, r2a)
            sm, _ = _unit((q1 - p1) + (q2 - p2))
            flip = _dot(sm, wa) < 0.0
            q1, q2 = _sel(flip, q11, q1), _sel(flip, q22, q2)
            sm = (q1 - p1) + (q2 - p2)
            far = constrain & (_dot(q1 + q2, sm) < 0.0)
            r1, r2 = _sel(constrain, q1, r1), _sel(constrain, q2, r2)

        angle = _acos(_dot(_unit(r1)[0], _unit(r2)[0]))
        # OpenSim 4 takes the long way round as a negative angle (-(2 pi - angle)).
        angle = np.where(far, -(2.0 * np.pi - angle), angle)
        arc = R * angle
    return go, mandatory & go, r1, r2, arc


# --------------------------------------------------------------------------- cylinder

_DN = np.array([0.0, 0.0, 1.0])


def _axis_point(P):
    """The point of the cylinder axis (z) closest to ``P``, with OpenSim's rounding.

    OpenSim projects on the line through (0, 0, -1) along z, so the height of a
    point at z = 0 comes back as rounding noise (+-1e-16) whose sign its
    quadrant tests read; the same arithmetic gives the same noise.
    """
    out = np.zeros_like(P)
    w = P - np.array([0.0, 0.0, -1.0])
    v, mag = _unit(w)
    out[..., 2] = -1.0 + v[..., 2] * mag
    return out


def _closest_on_line(pt, line_pt, line):
    """OpenSim's GetClosestPointOnLineToPoint: closest point and its parameter."""
    v1, mag = _unit(pt - line_pt)
    v2, mag2 = _unit(line)
    t = _dot(v1, v2) * mag
    closest = line_pt + t[..., None] * v2
    return closest, t / mag2


def _intersect_lines(p1, p2, p3, p4):
    """OpenSim's IntersectLines: closest points of lines p1-p2 and p3-p4 and parameters."""
    v1, mag1 = _unit(p2 - p1)
    v2, mag2 = _unit(p4 - p3)
    cr = np.cross(v1, v2)
    denom = _dot(cr, cr)
    parallel = np.abs(denom) <= _ROUNDOFF
    d = np.where(parallel, 1.0, denom)
    w = p3 - p1
    t = _dot(w, np.cross(v1, cr)) / d  # det of the rows (w, v1, cr)
    s = _dot(w, np.cross(v2, cr)) / d
    pint2 = p3 + t[..., None] * v2
    pint1 = p1 + s[..., None] * v1
    s = np.where(parallel, np.nan, s / mag1)
    t = np.where(parallel, np.nan, t / mag2)
    nan3 = np.full_like(pint1, np.nan)
    return _sel(parallel, nan3, pint1), s, _sel(parallel, nan3, pint2), t


def _intersect_vertical_with_plane(r, normal, d):
    """OpenSim's IntersectLineSegPlane for the segment r -/+ 10 dn (along the axis)."""
    ra = r - 10.0 * _DN
    vec = 20.0 * _DN
    dp = _dot(vec, normal)
    ok = np.abs(dp) >= 1e-5
    t = (-d - _dot(normal, ra)) / np.where(ok, dp, 1.0)
    ok = ok & (t >= -1e-5) & (t <= 1.0 + 1e-5)
    return ok, ra + t[..., None] * vec


def _adjust_tangent_point(pt, r, w):
    """OpenSim's _adjust_tangent_point: slide ``r`` along the axis toward tangency."""
    pr, _ = _unit(r - pt)
    rw, _ = _unit(w - r)
    alpha = _acos(pr[..., 2])
    omega = _acos(rw[..., 2])
    adjust = np.abs(alpha - omega) > 0.1 * np.pi / 180.0
    pa, _ = _closest_on_line(pt, r, _DN)
    wa, _ = _closest_on_line(w, r, _DN)
    _, _, inter, _ = _intersect_lines(pt, w, pa, wa)
    moved = r + 1.5 * (inter - r)
    return adjust, _sel(adjust, moved, r)


def _spiral(radius, r1, r2, long_wrap):
    """Angle, axial distance and helix length from r1 to r2 on the cylinder."""
    a1, a2 = _axis_point(r1), _axis_point(r2)
    axial = a2[..., 2] - a1[..., 2]
    u, v = r1 - a1, r2 - a2
    theta = np.arctan2(u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0], _dot(u, v))
    theta = np.where(long_wrap, 2.0 * np.pi - theta, theta)
    return theta, axial, np.hypot(radius * theta, axial)


def _spiral_point(r1, theta, axial, sense, t):
    """A point of the helix from r1: rotated by sense*t*theta about z, lifted t*axial."""
    ang = sense * t * theta
    c, s = np.cos(ang), np.sin(ang)
    x = c * r1[..., 0] - s * r1[..., 1]
    y = s * r1[..., 0] + c * r1[..., 1]
    return np.stack([x, y, r1[..., 2] + t * axial], axis=-1)


def _cylinder(radius, length, p1, p2, axis, sign, single_wrap):
    """OpenSim's WrapCylinder::wrapLine on batches."""
    R = radius
    r2_ = R * R
    with np.errstate(invalid="ignore", divide="ignore"):
        rho1 = p1[..., 0] ** 2 + p1[..., 1] ** 2
        rho2 = p2[..., 0] ** 2 + p2[..., 1] ** 2
        inside = (rho1 < r2_) | (rho2 < r2_)
        cs = np.array([0.0, 0.0, -0.5 * length])
        ce = np.array([0.0, 0.0, 0.5 * length])
        near12, t12, near00, _ = _intersect_lines(p1, p2, cs, ce)
        d12 = near12 - near00
        cut = (_dot(d12, d12) < r2_) & (t12 > 0.0) & (t12 < 1.0)
        constrained = sign != 0
        go = ~inside
        if not constrained:
            go = go & cut
            mandatory = go.copy()

        p11, p22 = _axis_point(p1), _axis_point(p2)

        def candidates(P, Pa):
            vv, dist0 = _unit(P - Pa)
            sin_t = R / dist0
            dist = R * sin_t
            pp = Pa + dist[..., None] * vv
            h = np.sqrt(r2_ - dist * dist)[..., None]
            uu = np.cross(_DN, vv)
            return pp + h * uu, pp - h * uu, dist0

        r1a, r1b, p11_dist = candidates(p1, p11)
        r2a, r2b, p22_dist = candidates(p2, p22)
        far = np.zeros(go.shape, bool)
        long_wrap = np.zeros(go.shape, bool)

        if constrained:
            s1, s2 = _sign(p1[..., axis]), _sign(p2[..., axis])
            on_side = (s1 == sign) | (s2 == sign)
            possible = (s1 != s2) & (_sign(near12[..., axis]) != sign)
            go = go & ~(on_side & ~cut & ~possible)
            mandatory = go & on_side & cut
            r1am, r1bm, r2am, r2bm = r1a - p11, r1b - p11, r2a - p22, r2b - p22
            alpha = _acos(_dot(r1am, r2bm) / (_norm(r1am) * _norm(r2bm)))
            beta = _acos(_dot(r1bm, r2am) / (_norm(r1bm) * _norm(r2am)))
            ab = alpha > beta
            A1 = _sign(r1a[..., axis]) == sign
            B1 = _sign(r1b[..., axis]) == sign
            A2 = _sign(r2a[..., axis]) == sign
            B2 = _sign(r2b[..., axis]) == sign
            # choice "ba": r1 = r1b, r2 = r2a (far when alpha <= beta);
            # choice "ab": r1 = r1a, r2 = r2b (far when alpha > beta)
            both = A1 & B1
            none = ~A1 & ~B1
            use_ba = (both & A2) | (~A1 & B1) | (none & A2)
            use_ab = (both & ~A2) | (A1 & ~B1) | (none & ~A2 & B2)
            neither = none & ~A2 & ~B2
            use_ab = use_ab | (neither & ab)
            use_ba = use_ba | (neither & ~ab)
            r1 = _sel(use_ab, r1a, r1b)
            r2 = _sel(use_ab, r2b, r2a)
            far = np.where(use_ab, ab, ~ab) | neither
            sum_musc = (r1 - p1) + (r2 - p2)
            sum_r = (r1 - p11) + (r2 - p22)
            long_wrap = _dot(sum_r, sum_musc) < 0.0
        else:
            c1a, c1b = _unit(r1a - p11)[0], _unit(r1b - p11)[0]
            c2a, c2b = _unit(r2a - p22)[0], _unit(r2b - p22)[0]
            r1, r2 = _pick_closest_pair(c1a, c1b, c2a, c2b, r1a, r1b, r2a, r2b)

        # apex of the wrap, then slide r1/r2 along the axis into the plane (p1, p2, apex)
        tt = p11_dist / (p11_dist + p22_dist)
        mpt = p1 + tt[..., None] * (p2 - p1)
        axispt = _axis_point(mpt)
        l1, _ = _unit(p1 - axispt)
        l2, _ = _unit(p2 - axispt)
        pn = np.cross(l1, l2)
        pn = pn / _norm(pn)[..., None]
        vert1, _ = _unit(np.cross(_DN, pn))
        vert2, _ = _unit(np.cross(pn, _DN))
        apex1 = axispt + R * vert1
        apex2 = axispt + R * vert2
        dist1 = _dot(mpt - apex1, mpt - apex1)
        dist2 = _dot(mpt - apex2, mpt - apex2)
        first = (dist1 < dist2) != far
        apex = _sel(first, apex1, apex2)
        uu, _ = _unit(p1 - apex)
        vv, _ = _unit(p2 - apex)
        pn = np.cross(uu, vv)
        pn = pn / _norm(pn)[..., None]
        d = -_dot(p1, pn)
        ok1, r1p = _intersect_vertical_with_plane(r1, pn, d)
        ok2, r2p = _intersect_vertical_with_plane(r2, pn, d)
        c1, _ = _closest_on_line(r1p, p11, p22)  # the axis point of r1p when p22 is not 0
        ok1 = ok1 & (_dot(c1 - p22, c1 - p22) < _dot(p11 - p22, p11 - p22))
        c2, _ = _closest_on_line(r2p, p11, p22)  # (sic: OpenSim's line is p11 + k p22)
        ok2 = ok2 & (_dot(c2 - p11, c2 - p11) < _dot(p22 - p11, p22 - p11))
        r1 = _sel(ok1, r1p, r1)
        r2 = _sel(ok2, r2p, r2)

        half = 0.5 * length
        out1 = (r1[..., 2] < -half) | (r1[..., 2] > half)
        out2 = (r2[..., 2] < -half) | (r2[..., 2] > half)
        go = go & ~(out1 & out2)

        theta, axial, arc = _spiral(R, r1, r2, long_wrap)
        if not single_wrap:
            # OpenSim slides the tangent points (up to 100 times) until the straight
            # lines meet the helix sampled every 2 mm within 0.1 degree.
            # Only the segments still sliding are computed at each step.
            shape = go.shape
            sense = np.broadcast_to(np.where(long_wrap, -1.0, 1.0), shape).reshape(-1)
            r1, r2 = r1.reshape(-1, 3).copy(), r2.reshape(-1, 3).copy()
            theta, axial, arc = (np.broadcast_to(x, shape).reshape(-1).astype(float)
                                 for x in (theta, axial, arc))  # fmt: skip
            P1 = np.broadcast_to(p1, shape + (3,)).reshape(-1, 3)
            P2 = np.broadcast_to(p2, shape + (3,)).reshape(-1, 3)
            LW = np.broadcast_to(long_wrap, shape).reshape(-1)
            idx = np.flatnonzero(go)
            for _ in range(100):
                nseg = np.maximum(np.floor(arc[idx] / 0.002), 1.0)
                keep = nseg >= 2
                idx, nseg = idx[keep], nseg[keep]
                if not idx.size:
                    break
                t = 1.0 / nseg
                a1, a2, th, ax, sn = r1[idx], r2[idx], theta[idx], axial[idx], sense[idx]
                w1 = _spiral_point(a1, th, ax, sn, t)
                adj1, a1 = _adjust_tangent_point(P1[idx], a1, w1)
                w2 = _spiral_point(a1, th, ax, sn, 1.0 - t)
                adj2, a2 = _adjust_tangent_point(P2[idx], a2, w2)
                r1[idx], r2[idx] = a1, a2
                idx = idx[adj1 | adj2]
                if idx.size:
                    theta[idx], axial[idx], arc[idx] = _spiral(R, r1[idx], r2[idx], LW[idx])
            r1, r2 = r1.reshape(shape + (3,)), r2.reshape(shape + (3,))
            arc = arc.reshape(shape)
    return go, mandatory & go, r1, r2, arc


# --------------------------------------------------------------------------- public


def _check_dimensions(kind, dimensions):
    want = {"cylinder": 2, "sphere": 1, "ellipsoid": 3, "torus": 2}[kind]
    what = {"cylinder": "(radius, length)", "sphere": "(radius,)", "ellipsoid": "(rx, ry, rz)",
            "torus": "(inner_radius, outer_radius)"}  # fmt: skip
    try:
        dims = np.asarray(dimensions, dtype=float).reshape(-1)
    except (TypeError, ValueError) as err:
        raise DataError(
            f"Expected `dimensions` of a {kind} to be {what[kind]} in m, got {dimensions!r}"
        ) from err
    if dims.size != want or not np.all(np.isfinite(dims)):
        raise DataError(
            f"Expected `dimensions` of a {kind} to be {what[kind]} in m (finite), "
            f"got {dimensions!r}"
        )
    if kind == "cylinder":
        ok = dims[0] > 0 and dims[1] >= 0
    elif kind == "torus":
        ok = 0 < dims[0] < dims[1]
    else:
        ok = bool(np.all(dims > 0))
    if not ok:
        raise DataError(
            f"Expected `dimensions` of a {kind} to be {what[kind]} with positive radii"
            f"{' and length >= 0' if kind == 'cylinder' else ''}"
            f"{' and outer_radius > inner_radius' if kind == 'torus' else ''}, got {dimensions!r}"
        )
    return dims


def _check_quadrant(quadrant):
    if not isinstance(quadrant, str) or quadrant.strip().lower() not in _QUADRANTS:
        raise DataError(
            "Expected `quadrant` to be one of 'all', '+x', '-x', '+y', '-y', '+z', '-z' "
            f"(OpenSim's WrapObject quadrant), got {quadrant!r}"
        )
    return _QUADRANTS[quadrant.strip().lower()]


def wrap_path_segment(
    kind, dimensions, quadrant, p, s, *, method="hybrid", single_wrap=True
) -> WrapResult:
    """Wrap the straight path segments ``p`` → ``s`` over a wrap object, as OpenSim does.

    Parameters
    ----------
    kind : {"cylinder", "sphere", "ellipsoid", "torus"}
        The wrap object's shape (OpenSim's WrapCylinder, WrapSphere,
        WrapEllipsoid, WrapTorus).
    dimensions : sequence of float
        Cylinder ``(radius, length)``, sphere ``(radius,)``, ellipsoid
        ``(rx, ry, rz)``, torus ``(inner_radius, outer_radius)``: the tube's
        radius and the radius of its centre circle in the xy plane (m). A
        torus wraps a path that passes through its hole over the inner side
        of its tube (see :mod:`ahbm.muscles.wrap_torus`).
    quadrant : str
        OpenSim's quadrant: ``"all"`` or a side ``"+x"``, ``"-x"``, ``"+y"``,
        ``"-y"``, ``"+z"``, ``"-z"`` (``"x"`` means ``"+x"``; case ignored):
        the path may only wrap over that half of the object.
    p, s : array_like, shape (..., 3)
        The path points before and after the wrap (m), in the wrap object's
        frame (cylinder axis = z, centred at the origin). Batch axes broadcast.
    method : {"hybrid", "midpoint", "axial"}, optional
        The ellipsoid's wrapping method (OpenSim's PathWrap method, case
        ignored); ignored for cylinders and spheres.
    single_wrap : bool, optional
        True (default) when the muscle has this one path wrap only. OpenSim
        then keeps the cylinder's first tangent points; with several path
        wraps it slides them along the axis toward tangency with the helix
        (up to 100 steps, 2 mm samples, 0.1 degree). Only cylinders depend on it.

    Returns
    -------
    WrapResult
        ``active``, tangent points ``t1``/``t2`` (NaN where inactive),
        ``arc_length`` (0 where inactive), the segment's wrapped ``length``
        and ``mandatory``, each with the batch shape.

    Raises
    ------
    DataError
        An unknown ``kind``, ``quadrant`` or ``method``, dimensions of the
        wrong size or not positive, or ``p``/``s`` not (..., 3) finite arrays.

    Notes
    -----
    OpenSim's rules, which this function follows:

    - A path point inside the object (inside the cylinder's infinite radius)
      turns the wrap off: the straight segment is kept.
    - Sphere and ellipsoid wrap only when the straight segment cuts the
      object. A cylinder with ``quadrant="all"`` likewise only when the
      segment passes the axis within the radius between ``p`` and ``s``;
      with a side given it also wraps when ``p`` and ``s`` lie on
      opposite sides of that axis and the segment passes the other half.
    - The cylinder is finite: when both tangent points lie beyond
      ``|z| > length/2`` the wrap is off.
    - The cylinder's path is a helix whose tangent points OpenSim places by
      intersecting the vertical tangent lines with the plane through ``p``,
      ``s`` and the wrap's apex; this is OpenSim's approximation, not the exact
      shortest path (the two agree where the segment is symmetric).
    - Sphere arcs are great circles; where a side constraint forces the long
      way round, OpenSim 4 counts that arc as ``-(2 pi - angle) * radius``
      (a negative length) and so does this function.
    - Ellipsoid paths follow OpenSim's planar-section approximation (the
      ``method`` chooses the plane); the surface length is OpenSim's polyline
      of ~1 mm chords, and the tangent points come from OpenSim's damped
      Gauss-Newton iteration step for step (it stops at a residual of 1e-8 in
      normalized units, so the tangent points are that accurate only).
    - Where OpenSim's construction itself fails for a wrap it must take
      (an ellipsoid section whose sampling rays start outside the ellipsoid,
      about 0.5 % of random wraps) OpenSim's length is NaN; so is ``length``
      here (``active`` True), with an :class:`~ahbm.errors.AhbmWarning`. Where
      its tangent-point iteration meets a singular matrix (end points with
      exact zero coordinates) OpenSim throws; ahbm gives NaN the same way. A
      failed wrap that is not mandatory is never chosen by OpenSim: the
      segment stays straight.
    - A sphere segment that passes (within 1e-5 rad) through the centre has
      no plane to wrap in: OpenSim computes NaN there and keeps the straight
      segment; so does this function.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.muscles import wrap_path_segment
    >>> r = wrap_path_segment("sphere", (0.05,), "all", [-0.1, 0.01, 0.0], [0.1, 0.01, 0.0])
    >>> bool(r.active), round(float(r.length), 4)
    (True, 0.2165)
    """
    args = _arguments(kind, dimensions, quadrant, p, s, method, single_wrap)
    return _wrap(*args)


def _arguments(kind, dimensions, quadrant, p, s, method, single_wrap):
    """The checked arguments of the public functions, in _wrap's order."""
    kind = as_choice(kind, "kind", WRAP_KINDS)
    dims = _check_dimensions(kind, dimensions)
    axis, sign = _check_quadrant(quadrant)
    method = as_choice(method.lower() if isinstance(method, str) else method, "method", _METHODS)
    if not isinstance(single_wrap, (bool, np.bool_)):
        raise DataError(f"Expected `single_wrap` to be True or False, got {single_wrap!r}")
    p = as_vector_array(p, 3, "p")
    s = as_vector_array(s, 3, "s")
    shape = broadcast_batch(("p", p, 1), ("s", s, 1))
    p, s = np.broadcast_to(p, shape + (3,)), np.broadcast_to(s, shape + (3,))
    return kind, dims, axis, sign, p, s, method, bool(single_wrap)


def _wrap(kind, dims, axis, sign, p, s, method, single_wrap) -> WrapResult:
    """wrap_path_segment on validated arguments."""
    if kind == "sphere":
        active, mandatory, t1, t2, arc = _sphere(float(dims[0]), p, s, axis, sign)
    elif kind == "cylinder":
        active, mandatory, t1, t2, arc = _cylinder(
            float(dims[0]), float(dims[1]), p, s, axis, sign, single_wrap
        )
    elif kind == "torus":
        from ahbm.muscles.wrap_torus import torus_wrap

        active, mandatory, t1, t2, arc = torus_wrap(dims, p, s, axis, sign, single_wrap, _cylinder)
    else:
        from ahbm.muscles.wrap_ellipsoid import ellipsoid_wrap

        active, mandatory, t1, t2, arc = ellipsoid_wrap(dims, p, s, axis, sign, method)
    active = np.asarray(active)
    failed = active & ~(np.isfinite(arc) & np.all(np.isfinite(t1) & np.isfinite(t2), axis=-1))
    # OpenSim's GeometryPath compares length changes: a NaN wrap is taken only when it
    # is mandatory (the straight segment cuts the object), never merely "wrapped"
    active = active & ~(failed & ~mandatory)
    failed &= mandatory
    if failed.any():
        warnings.warn(
            f"{int(failed.sum())} of {failed.size} segments wrap over the {kind} but OpenSim's "
            "construction fails for them (e.g. an ellipsoid's section rays start outside it); "
            "their length is NaN, as in OpenSim",
            AhbmWarning,
            stacklevel=3,
        )
    t1 = _sel(active, t1, np.nan)
    t2 = _sel(active, t2, np.nan)
    arc = np.where(active, arc, 0.0)
    with np.errstate(invalid="ignore"):
        wrapped = _norm(p - t1) + arc + _norm(t2 - s)
    length = np.where(active, wrapped, _norm(p - s))
    return WrapResult(active, t1, t2, arc, length, np.asarray(mandatory & active))


def wrap_length_gradient(
    kind, dimensions, quadrant, p, s, *, method="hybrid", single_wrap=True, step=None
):
    """Derivatives of the wrapped segment length with respect to its end points.

    Parameters
    ----------
    kind, dimensions, quadrant, p, s, method, single_wrap
        As for :func:`wrap_path_segment`.
    step : float, optional
        Difference step (m) for the cylinder and the ellipsoid (default 1e-6).

    Returns
    -------
    dl_dp, dl_ds : ndarray, shape (..., 3)
        d(length)/dp and d(length)/ds (dimensionless), in the wrap frame.

    Notes
    -----
    For an active sphere wrap the tangent points and the great-circle arc make
    the path locally shortest, so by the envelope theorem
    ``dl/dp = (p - t1)/|p - t1|`` and ``dl/ds = (s - t2)/|s - t2|`` exactly; an inactive
    segment gives the unit vectors along ``p - s`` and ``s - p`` (a sphere
    wrap forced the long way round, whose arc OpenSim counts negative, is
    differentiated numerically as below). OpenSim's cylinder and ellipsoid
    paths are not exactly shortest (their tangent points come from a plane
    construction), so the envelope formula is only close there (off by 0.3 %
    in the median for cylinders, more for ellipsoids); these derivatives are
    then differences of :func:`wrap_path_segment`'s own length (all 24
    perturbed segments in one batched call), the slopes of the lengths OpenSim
    reports. OpenSim's ellipsoid length has small jumps (its tangent-point
    solver stops at a residual of 1e-8 in normalized units after a varying
    number of steps, its surface polyline changes its number of ~1 mm
    chords); the differences step around a jump next to the point (central
    differences where the length is smooth, second-order one-sided ones on
    the side without the jump).

    Examples
    --------
    >>> from ahbm.muscles import wrap_length_gradient
    >>> gp, gs = wrap_length_gradient("sphere", (0.05,), "all", [-0.1, 0.01, 0], [0.1, 0.01, 0])
    >>> gp.shape, gs.shape
    ((3,), (3,))
    """
    args = _arguments(kind, dimensions, quadrant, p, s, method, single_wrap)
    kind, dims, axis, sign, p, s, method, single_wrap = args
    if step is None:
        step = 1e-6
    if not (isinstance(step, (int, float)) and np.isfinite(step) and step > 0):
        raise DataError(f"Expected `step` to be a positive length in m, got {step!r}")
    if kind != "sphere":
        return _differences(kind, dims, axis, sign, p, s, method, single_wrap, step)
    r = _wrap(kind, dims, axis, sign, p, s, method, True)
    a = r.active[..., None]
    gp, _ = _unit(np.where(a, p - np.where(a, r.t1, 0.0), p - s))
    gs, _ = _unit(np.where(a, s - np.where(a, r.t2, 0.0), s - p))
    # OpenSim's negative far-side arcs are not shortest paths: differentiate those
    odd = r.active & (r.arc_length < 0)
    if odd.any():
        fp, fs = _differences(kind, dims, axis, sign, p[odd], s[odd], method, True, step)
        gp[odd], gs[odd] = fp, fs
    return gp, gs


def _differences(kind, dims, axis, sign, p, s, method, single_wrap, step):
    """d(length)/dp, d(length)/ds by differences of the length, one batched call.

    Each end point moves by -2h, -h, +h, +2h along each axis (24 segments per
    segment). Where the length is smooth the backward and forward differences
    agree as well as the forward ones among themselves, and the central
    difference is taken (fourth-order where the four one-step slopes lie on a
    parabola, i.e. no jump or kink within ±2h); where a jump of the length lies
    in (0, h] (or [-h, 0)) the forward (backward) pair disagrees and the
    second-order one-sided difference of the other side is taken instead.
    Where the stencil is not smooth, the same stencil at h/10 replaces it, and
    at h/100 where that one is smooth (to the lengths' round-off) and the h/10
    estimate is off it by more than 1e-4 (two jumps straddling the point).
    """
    (gp, gs), (okp, oks) = _stencil(kind, dims, axis, sign, p, s, method, single_wrap, step)
    rough = ~(okp.all(axis=-1) & oks.all(axis=-1))
    if rough.any():
        args = (kind, dims, axis, sign, p[rough], s[rough], method, single_wrap)
        (fp, fs), (fok_p, fok_s) = _stencil(*args, step / 10)
        (xp, xs), (xok_p, xok_s) = _stencil(*args, step / 100)
        for g, ok, fine, fine_ok, finest, finest_ok in (
            (gp, okp, fp, fok_p, xp, xok_p),
            (gs, oks, fs, fok_s, xs, xok_s),
        ):
            use = ~fine_ok & finest_ok & (np.abs(finest - fine) > 1e-4 * (1.0 + np.abs(finest)))
            better = np.where(use, finest, fine)
            g[rough] = np.where(ok[rough], g[rough], better)
    return gp, gs


def _stencil(kind, dims, axis, sign, p, s, method, single_wrap, step):
    """The differences of :func:`_differences` at one step, and where they were smooth."""
    shape = p.shape[:-1]
    k = np.array([-2.0, -1.0, 1.0, 2.0])
    d = (k[:, None, None] * np.eye(3)[None] * step).reshape(12, 3)  # (k, axis) pairs
    p12 = np.broadcast_to(p[..., None, :], shape + (12, 3))
    s12 = np.broadcast_to(s[..., None, :], shape + (12, 3))
    pp = np.concatenate([p12 + d, p12, p[..., None, :]], axis=-2)
    ss = np.concatenate([s12, s12 + d, s[..., None, :]], axis=-2)
    L = _wrap(kind, dims, axis, sign, pp, ss, method, single_wrap).length
    L0 = L[..., 24:25]
    grads, smooth_flags = [], []
    # round-off of the lengths bounds how well the slopes can agree at small steps
    noise = 1e-8 + 64.0 * np.finfo(float).eps * np.abs(L0) / step
    for half in (L[..., :12], L[..., 12:24]):
        m2, m1, p1, p2 = (half[..., 3 * j : 3 * j + 3] for j in range(4))
        fwd1, fwd2 = (p1 - L0) / step, (p2 - p1) / step
        bwd1, bwd2 = (L0 - m1) / step, (m1 - m2) / step
        central = (p1 - m1) / (2 * step)
        forward = (-3 * L0 + 4 * p1 - p2) / (2 * step)
        backward = (3 * L0 - 4 * m1 + m2) / (2 * step)
        e_c = np.abs(fwd1 - bwd1)
        e_f = np.abs(fwd1 - fwd2)
        e_b = np.abs(bwd1 - bwd2)
        use_c = e_c <= 1.5 * np.minimum(e_f, e_b) + 1e-9
        # smooth over the whole stencil (the four one-step slopes on a parabola):
        # the fourth-order central difference
        third = np.abs(bwd2 - 3.0 * bwd1 + 3.0 * fwd1 - fwd2)
        smooth = third <= 0.05 * (np.abs(fwd2 - bwd2) + np.abs(fwd1 - bwd1)) + noise
        central4 = (8.0 * (p1 - m1) - (p2 - m2)) / (12 * step)
        grads.append(
            np.where(
                smooth, central4, np.where(use_c, central, np.where(e_f < e_b, forward, backward))
            )
        )
        smooth_flags.append(smooth)
    return grads, smooth_flags
