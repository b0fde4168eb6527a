"""Wrapping over an ellipsoid as OpenSim's ``WrapEllipsoid`` computes it (internal).

Used by :func:`ahbm.muscles.wrapping.wrap_path_segment`; every step works on
whole batches (arrays of segments) and iterates with masks where OpenSim
iterates per segment. The algorithm (OpenSim's, after SIMM):

1. Work in units normalized by ``3 / (rx + ry + rz)``.
2. No wrap if a point is inside the ellipsoid, if ``p`` and ``s`` are seen in
   almost the same direction from the centre, or if the straight segment does
   not cut the ellipsoid.
3. Choose a point ``c1`` on the surface near the cut (``method``): the closest
   surface point of the chord's midpoint ("midpoint"), of the chord's
   crossing of the coordinate plane most normal to it ("axial"), or a blend of
   that with the mean surface normal direction of 298 chord samples ("hybrid").
   A side constraint mirrors ``c1`` to the allowed half.
4. The wrap lies in the plane through ``p``, ``s`` and ``c1``: the tangent
   points solve (on the ellipsoid, in the plane, tangent plane through the
   end point) by OpenSim's damped Gauss-Newton iteration, started at ``c1``.
5. The surface length is the polyline of the plane section, sampled by rays
   from the plane's crossing of the coordinate axis most normal to it, in
   chords of about 1 mm (at most 499), the other way round when the short way
   turns back on the tangent lines under a side constraint.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import _CACHE
from ahbm.muscles._wrap_math import _dot, _sign
from ahbm.muscles._wrap_math import _unit as _normalize

__all__: list[str] = []

_MU_BLEND_MIN = 0.7073
_MU_BLEND_MAX = 0.9
_NUM_FAN_SAMPLES = 300
_SV_BOUNDARY_BLEND = 0.3
_TINY = 1e-8
_ROUNDOFF = 2e-13
_EPS = np.finfo(float).eps
_MAX_SEGMENTS = 499
_CHUNK = 2048  # segments per pass


def _unit(a):
    return _normalize(a)[0]


def _ellipsoid_level(x, a):
    """``sum((x / a)^2) - 1`` summed as OpenSim does (from -1, axis by axis)."""
    q = x / a
    return ((-1.0 + q[..., 0] * q[..., 0]) + q[..., 1] * q[..., 1]) + q[..., 2] * q[..., 2]


# ------------------------------------------------------------- closest points (Eberly)


def _newton_t(fun, t0):
    """64 Newton steps on t, stopping per element at |f| < 1e-9 (OpenSim's rule).

    ``fun(t, idx)`` returns f and f' for the flat elements ``idx``; only the
    elements still iterating are evaluated.
    """
    shape = t0.shape
    t = np.array(t0, float).ravel()
    t_used = t.copy()
    live = np.arange(t.size)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(64):
            if live.size == 0:
                break
            tl = t[live]
            f, fp = fun(tl, live)
            t_used[live] = tl
            stop = np.abs(f) < 1e-9
            t[live] = np.where(stop, tl, tl - f / fp)
            live = live[~stop]
    return t_used.reshape(shape)


@njit(cache=_CACHE, nogil=True)
def _closest_general_kernel(a, pts, out):
    """Eberly's Newton iteration point by point (OpenSim's findClosestPoint, general case).

    The same steps as the numpy code it replaces: start at t = 0 inside, at
    max(a) * |u| outside; at most 64 steps; stop at |f| < 1e-9.
    """
    a2, b2, c2 = a[0] * a[0], a[1] * a[1], a[2] * a[2]
    amax = max(a[0], max(a[1], a[2]))
    for n in range(pts.shape[0]):
        u, v, w = pts[n, 0], pts[n, 1], pts[n, 2]
        A, B, C = a2 * u * u, b2 * v * v, c2 * w * w
        if (u / a[0]) ** 2 + (v / a[1]) ** 2 + (w / a[2]) ** 2 < 1.0:
            t = 0.0
        else:
            t = amax * np.sqrt(u * u + v * v + w * w)
        for _ in range(64):
            P, Q, R = t + a2, t + b2, t + c2
            f = P * P * Q * Q * R * R - A * Q * Q * R * R - B * P * P * R * R - C * P * P * Q * Q
            if abs(f) < 1e-9:
                break
            PQ, PR, QR, PQR = P * Q, P * R, Q * R, P * Q * R
            fp = 2.0 * (
                PQR * (QR + PR + PQ) - A * QR * (Q + R) - B * PR * (P + R) - C * PQ * (P + Q)
            )
            t_next = t - f / fp
            if _ == 63:
                break  # OpenSim keeps the last t it evaluated
            t = t_next
        out[n, 0] = a2 * u / (t + a2)
        out[n, 1] = b2 * v / (t + b2)
        out[n, 2] = c2 * w / (t + c2)


def _closest_on_ellipse(a, b, u, v):
    """Closest point (x, y) of the ellipse (x/a)^2 + (y/b)^2 = 1 to (u, v); arrays."""
    a = np.broadcast_to(a, u.shape)
    b = np.broadcast_to(b, u.shape)
    a2, b2 = a * a, b * b
    a2u2, b2v2 = a2 * u * u, b2 * v * v
    near_x = np.abs(u) <= _ROUNDOFF
    near_y = np.abs(v) <= _ROUNDOFF
    inside = (u / a) ** 2 + (v / b) ** 2 < 1.0
    t0 = np.where(inside, 0.0, np.maximum(a, b) * np.sqrt(u * u + v * v))

    fa2, fb2, fA, fB = (np.ravel(x) for x in (a2, b2, a2u2, b2v2))

    def fun(t, i):
        P, Q = t + fa2[i], t + fb2[i]
        A, B = fA[i], fB[i]
        f = P * P * Q * Q - A * Q * Q - B * P * P
        fp = 2.0 * (P * Q * (P + Q) - A * Q - B * P)
        return f, fp

    t = _newton_t(fun, t0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = a2 * u / (t + a2)
        y = b2 * v / (t + b2)
        # u == 0: the point is on the y axis
        cx = (a >= b) | (np.abs(v) >= b - a2 / b)
        yx = np.where(cx, np.where(v >= 0, b, -b), b2 * v / (b2 - a2))
        xx = np.where(cx, u, a * np.sqrt(np.abs(1.0 - (yx / b) ** 2)))
        # v == 0: on the x axis
        cy = (b >= a) | (np.abs(u) >= a - b2 / a)
        xy = np.where(cy, np.where(u >= 0, a, -a), a2 * u / (a2 - b2))
        yy = np.where(cy, v, b * np.sqrt(np.abs(1.0 - (xy / a) ** 2)))
    # both near zero
    xb = np.where(a < b, np.where(u < 0.0, -a, a), u)
    yb = np.where(a < b, v, np.where(v < 0.0, -b, b))
    x = np.where(near_x & near_y, xb, np.where(near_x, xx, np.where(near_y, xy, x)))
    y = np.where(near_x & near_y, yb, np.where(near_x, yx, np.where(near_y, yy, y)))
    return x, y


def _closest_on_ellipsoid(a, pt, dims, special=None):
    """Closest point of the ellipsoid with semi-axes ``a`` to ``pt`` (..., 3).

    ``special`` forces the plane section x_i = pt_i (OpenSim's specialCaseAxis);
    None detects a coordinate within round-off of zero as OpenSim does
    (choosing, among such axes, the one whose other two radii sum least).
    """
    if special is None:
        sums = np.array([dims[1] + dims[2], dims[0] + dims[2], dims[0] + dims[1]])
        zero = np.abs(pt) <= _ROUNDOFF
        cand = np.where(zero, sums, np.inf)
        special_ax = np.where(zero.any(-1), np.argmin(cand, axis=-1), -1)
    else:
        special_ax = np.full(pt.shape[:-1], special)
    general = special_ax < 0
    out = pt.copy()
    if general.any():
        flat = np.ascontiguousarray(pt[general], dtype=float)
        g = np.empty_like(flat)
        with np.errstate(divide="ignore", invalid="ignore"):
            _closest_general_kernel(np.asarray(a, float), flat, g)
        out[general] = g
    for ax, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        m = special_ax == ax
        if m.any():
            x, y = _closest_on_ellipse(a[i], a[j], pt[..., i], pt[..., j])
            sec = pt.copy()
            sec[..., i] = x
            sec[..., j] = y
            out = np.where(m[..., None], sec, out)
    return out


# ------------------------------------------------------------- tangent points


def _residuals(r, d1, p, vs, vs4, a):
    nr = 2.0 * r / a**2
    e0 = _dot(vs, r) + vs4
    e1 = _ellipsoid_level(r, a)
    e2 = _dot(nr, r) + d1
    e3 = _dot(nr, p) + d1
    ee = np.stack([e0, e1, e2, e3], axis=-1)
    return ee, ((e0 * e0 + e1 * e1) + e2 * e2) + e3 * e3


def _tangent_points(pe, r, p, vs, vs4, a):
    """OpenSim's calcTangentPoint on batches (its damped Gauss-Newton, step for step).

    Where the damped normal matrix is singular OpenSim throws (Simbody's
    lapackInverse); those points come back NaN.
    """
    r = r.copy()
    skip = np.abs(pe) < 0.0001
    failed = np.zeros(skip.shape, bool)
    nr = 2.0 * r / a**2
    d1 = -_dot(nr, r)
    ee, ssq = _residuals(r, d1, p, vs, vs4, a)
    ssqo = ssq.copy()
    alpha = np.full(ssq.shape, 0.01)
    nit = np.zeros(ssq.shape, int)
    a2 = a**2
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        while True:
            live = ~skip & ~failed & (ssq > _TINY) & (nit < 50)
            if not live.any():
                break
            nit = nit + live
            J = np.zeros(r.shape[:-1] + (4, 4))
            J[..., :3, 0] = vs
            J[..., :3, 1] = 2.0 * r / a2
            J[..., :3, 2] = 2.0 * (2.0 * r) / a2
            J[..., :3, 3] = 2.0 * p / a2
            J[..., 3, 2] = 1.0
            J[..., 3, 3] = 1.0
            pcos = _dot(_unit(p - r), _unit(p))
            dd = np.where(pcos > 0.1, 1.0 - pcos**100, 1.0)
            v = -np.einsum("...ij,...j->...i", J, ee)
            JJ = np.einsum("...ik,...jk->...ij", J, J)
            diag = np.diagonal(JJ, axis1=-2, axis2=-1).copy()
            vt = np.zeros(r.shape[:-1] + (4,))
            nit2 = np.zeros(ssq.shape, int)
            while True:  # raise the damping until the residual drops
                go = live & ~failed & (ssq >= ssqo) & (nit2 < 1000)
                if not go.any():
                    break
                M = JJ.copy()
                idx = np.arange(4)
                M[..., idx, idx] = diag * (1.0 + alpha)[..., None]
                singular = go & ~(np.linalg.det(M) != 0.0)
                failed |= singular
                go &= ~singular
                M = np.where(go[..., None, None], M, np.eye(4))
                step = dd[..., None] * np.einsum("...ij,...j->...i", np.linalg.inv(M), v) / 16.0
                vt = np.where(go[..., None], step, vt)
                r = np.where(go[..., None], r + vt[..., :3], r)
                d1 = np.where(go, d1 + vt[..., 3], d1)
                ee_n, ssq_n = _residuals(r, d1, p, vs, vs4, a)
                ee = np.where(go[..., None], ee_n, ee)
                ssqo = np.where(go, ssq, ssqo)
                ssq = np.where(go, ssq_n, ssq)
                alpha = np.where(go, alpha * 4.0, alpha)
                nit2 = nit2 + go
            live &= ~failed
            alpha = np.where(live, alpha / 8.0, alpha)
            fakt = np.full(ssq.shape, 0.5)
            nit2 = np.zeros(ssq.shape, int)
            while True:  # lengthen the step while the residual keeps dropping
                go = live & (ssq <= ssqo) & (nit2 < 1000)
                if not go.any():
                    break
                fakt = np.where(go, fakt * 2.0, fakt)
                r = np.where(go[..., None], r + vt[..., :3] * fakt[..., None], r)
                d1 = np.where(go, d1 + vt[..., 3] * fakt, d1)
                ee_n, ssq_n = _residuals(r, d1, p, vs, vs4, a)
                ee = np.where(go[..., None], ee_n, ee)
                ssqo = np.where(go, ssq, ssqo)
                ssq = np.where(go, ssq_n, ssq)
                nit2 = nit2 + go
            r = np.where(live[..., None], r - vt[..., :3] * fakt[..., None], r)
            d1 = np.where(live, d1 - vt[..., 3] * fakt, d1)
            ee_n, ssq_n = _residuals(r, d1, p, vs, vs4, a)
            ee = np.where(live[..., None], ee_n, ee)
            ssq = np.where(live, ssq_n, ssq)
            ssqo = np.where(live, ssq_n, ssqo)
    r = np.where(skip[..., None], p, r)
    return np.where(failed[..., None], np.nan, r)


# ------------------------------------------------------------- surface length


def _surface_path(r1, r2, a, vs, vs4, far, factor):
    """OpenSim's CalcDistanceOnEllipsoid: (normalized length, w1, w2, n_points)."""
    chord = np.sqrt(_dot(r1 - r2, r1 - r2))
    short = chord / factor < 0.001
    segments = np.floor(np.where(np.isfinite(chord), chord, 0.0) / factor / 0.001)
    nseg = np.clip(segments, 1, _MAX_SEGMENTS).astype(int)  # NaN tangent points: 1
    nseg = np.where(short, 1, nseg)
    imax = np.argmax(np.abs(vs), axis=-1)
    vsi = np.take_along_axis(vs, imax[..., None], axis=-1)[..., 0]
    a0 = np.zeros_like(r1)
    np.put_along_axis(a0, imax[..., None], (-vs4 / vsi)[..., None], axis=-1)
    ar1 = _unit(r1 - a0)
    ar2 = _unit(r2 - a0)
    phi0 = np.arccos(np.clip(_dot(ar1, ar2), -1.0, 1.0))
    dphi = np.where(far, -(2.0 * np.pi - phi0), phi0) / nseg
    vsz = _unit(np.cross(ar1, ar2))
    vsy = np.cross(vsz, ar1)
    # the interior points of all sections, one after another (ragged: nseg - 1 each)
    n_int = nseg - 1
    seg = np.repeat(np.arange(nseg.size), n_int)
    start = np.cumsum(n_int) - n_int
    k = np.arange(seg.size) - start[seg] + 1
    phi = k * dphi[seg]
    ray = np.cos(phi)[:, None] * ar1[seg] + np.sin(phi)[:, None] * vsy[seg]
    f1 = ray / a
    f2 = a0[seg] / a
    aa = _dot(f1, f1)
    bb = 2.0 * _dot(f1, f2)
    cc = _dot(f2, f2) - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mu3 = (-bb + np.sqrt(bb * bb - 4.0 * aa * cc)) / (2.0 * aa)
    pts = a0[seg] + mu3[:, None] * ray
    has = n_int > 0
    first = np.where(has, start, 0).clip(max=max(seg.size - 1, 0))
    last = np.where(has, start + n_int - 1, 0).clip(max=max(seg.size - 1, 0))
    if seg.size:
        w1 = np.where(has[:, None], pts[first], r2)
        w2 = np.where(has[:, None], pts[last], r1)
        step = np.sqrt(_dot(np.diff(pts, axis=0), np.diff(pts, axis=0)))
        inner = np.bincount(seg[1:], weights=np.where(seg[1:] == seg[:-1], step, 0.0),
                            minlength=nseg.size)  # fmt: skip
    else:
        w1, w2, inner = r2, r1, np.zeros(nseg.size)
    length = np.sqrt(_dot(w1 - r1, w1 - r1)) + inner + np.sqrt(_dot(r2 - w2, r2 - w2))
    length = np.where(has, length, chord)
    length = np.where(short, chord, length)
    return length, w1, w2, np.where(short, 2, nseg + 1)


# ------------------------------------------------------------- the wrap


def ellipsoid_wrap(dims, P, S, axis, sign, method):
    """OpenSim's WrapEllipsoid::wrapLine on batches.

    Returns (active, mandatory, r1, r2, arc) in the caller's units (m).
    Large batches go through in chunks of ``_CHUNK`` segments, which bounds
    the memory of the hybrid method's 298 chord samples per segment.
    """
    P, S = np.broadcast_arrays(P, S)
    shape = P.shape[:-1]
    P = P.reshape(-1, 3)
    S = S.reshape(-1, 3)
    parts = [
        _ellipsoid_wrap_flat(dims, P[i : i + _CHUNK], S[i : i + _CHUNK], axis, sign, method)
        for i in range(0, max(P.shape[0], 1), _CHUNK)
    ]
    active, mandatory, r1, r2, arc = (np.concatenate(x) for x in zip(*parts, strict=True))
    return (
        active.reshape(shape),
        mandatory.reshape(shape),
        r1.reshape(shape + (3,)),
        r2.reshape(shape + (3,)),
        arc.reshape(shape),
    )


def _ellipsoid_wrap_flat(dims, P, S, axis, sign, method):
    """ellipsoid_wrap on (n, 3) end points."""
    shape = P.shape[:-1]
    n = P.shape[0]
    factor = 3.0 / float(np.sum(dims))
    a = np.asarray(dims, float) * factor
    p1 = P * factor
    p2 = S * factor
    active = np.zeros(n, bool)
    r1_out = np.full((n, 3), np.nan)
    r2_out = np.full((n, 3), np.nan)
    arc_out = np.zeros(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1e = _ellipsoid_level(p1, a)
        p2e = _ellipsoid_level(p2, a)
        ok = ~((p1e < -0.0001) | (p2e < -0.0001))
        ppm = _dot(_unit(p1), _unit(p2)) - 1.0
        ok &= ~(np.abs(ppm) < 0.0001)
        p1p2 = p1 - p2
        f1 = p1p2 / a
        f2 = p2 / a
        aa = _dot(f1, f1)
        bb = 2.0 * _dot(f1, f2)
        cc = _dot(f2, f2) - 1.0
        disc = bb * bb - 4.0 * aa * cc
        sq = np.sqrt(np.maximum(disc, 0.0))
        l1 = (-bb + sq) / (2.0 * aa)
        l2 = (-bb - sq) / (2.0 * aa)
        ok &= (disc >= 0.0) & (l1 > 0) & (l1 < 1) & (l2 > 0) & (l2 < 1)
    idx = np.nonzero(ok)[0]

    def result():  # every wrap over an ellipsoid is "mandatory" in OpenSim
        r1, r2 = r1_out.reshape(shape + (3,)), r2_out.reshape(shape + (3,))
        return active.reshape(shape), active.reshape(shape), r1, r2, arc_out.reshape(shape)

    if idx.size == 0:
        return result()
    p1, p2, p1p2, l1, l2 = p1[idx], p2[idx], p1p2[idx], l1[idx], l2[idx]
    p1e, p2e = p1e[idx], p2e[idx]
    m = idx.size
    with np.errstate(invalid="ignore", divide="ignore"):
        r1 = p2 + l1[:, None] * p1p2
        r2 = p2 + l2[:, None] * p1p2
        r1r2 = r2 - r1
        mu = np.abs(_unit(p1p2))
        t = -r1 / r1r2  # chord parameter where coordinate i crosses 0
        t_sv = r1[:, None, :] + t[:, :, None] * r1r2[:, None, :]  # (m, 3 axes, 3)
        t_c1 = np.stack(
            [_closest_on_ellipsoid(a, t_sv[:, i], dims, special=i) for i in range(3)],
            axis=1,
        )
        best = np.argmax(mu, axis=-1)
        rows = np.arange(m)
        mu_b = mu[rows, best]
        t_b = t[rows, best]
        fan_weight = np.full(m, -np.inf)
        c1 = np.full((m, 3), np.nan)
        if method in ("hybrid", "axial"):
            if method == "hybrid":
                blend = np.where(
                    (t_b < 0.0) | (t_b > 1.0),
                    0.0,
                    np.where(
                        t_b < _SV_BOUNDARY_BLEND,
                        t_b / _SV_BOUNDARY_BLEND,
                        np.where(
                            t_b > 1.0 - _SV_BOUNDARY_BLEND,
                            (1.0 - t_b) / _SV_BOUNDARY_BLEND,
                            1.0,
                        ),
                    ),
                )
                adjust = (mu_b > _MU_BLEND_MIN) & (blend < 1.0)
                mu_b = np.where(adjust, _MU_BLEND_MIN + blend * (mu_b - _MU_BLEND_MIN), mu_b)
            take_axial = np.full(m, True) if method == "axial" else mu_b > _MU_BLEND_MIN
            c1 = np.where(take_axial[:, None], t_c1[rows, best], c1)
            if method == "hybrid":
                fan = mu_b < _MU_BLEND_MAX
                if fan.any():
                    sv_mid = r1 + 0.5 * r1r2
                    tt = np.arange(1, _NUM_FAN_SAMPLES - 1) / _NUM_FAN_SAMPLES
                    fi = np.nonzero(fan)[0]
                    samples = r1[fi, None, :] + tt[None, :, None] * r1r2[fi, None, :]
                    normals = _unit(_closest_on_ellipsoid(a, samples, dims) - samples)
                    v_sum = _unit(normals.sum(axis=1))
                    target = sv_mid[fi] + v_sum
                    c_fan = _closest_on_ellipsoid(a, target, dims)
                    pure = mu_b[fi] <= _MU_BLEND_MIN
                    w = (mu_b[fi] - _MU_BLEND_MIN) / (_MU_BLEND_MAX - _MU_BLEND_MIN)
                    mixed = _closest_on_ellipsoid(
                        a, w[:, None] * c1[fi] + (1.0 - w[:, None]) * c_fan, dims
                    )
                    c1[fi] = np.where(pure[:, None], c_fan, mixed)
                    fan_weight[fi] = np.where(pure, 1.0, 1.0 - w)
        else:
            c1 = _closest_on_ellipsoid(a, r1 + 0.5 * r1r2, dims)
        use_c1 = (t_b > 0.0) & (t_b < 1.0) if method == "axial" else np.full(m, True)
        r1 = np.where(use_c1[:, None], c1, r1)
        r2 = np.where(use_c1[:, None], c1, r2)

        if sign != 0:
            flip = _sign(c1[:, axis]) != sign
            orig = c1[:, axis].copy()
            c1f = c1.copy()
            c1f[:, axis] = -orig
            r1 = np.where(flip[:, None], c1f, r1)
            r2 = np.where(flip[:, None], c1f, r2)
            fw = np.minimum(fan_weight, 1.0)
            bis = flip & (fw > 0.0)
            moved = c1f.copy()
            bisection = 0.5 * (orig + c1f[:, axis])
            moved[:, axis] = c1f[:, axis] + fw * (bisection - c1f[:, axis])
            if bis.any():
                moved[bis] = _closest_on_ellipsoid(a, moved[bis], dims)
            c1 = np.where(bis[:, None], moved, np.where(flip[:, None], c1f, c1))

        vs = _unit(np.cross(p1p2, p1 - c1))
        vs4 = -_dot(vs, c1)
        r1 = _tangent_points(p1e, r1, p1, vs, vs4, a)
        r2 = _tangent_points(p2e, r2, p2, vs, vs4, a)
        far = np.zeros(m, bool)
        length, w1, w2, npts = _surface_path(r1, r2, a, vs, vs4, far, factor)
        if sign != 0:
            back = (npts > 2) & (
                (_dot(_unit(p1 - r1), _unit(w1 - r1)) > 0.0)
                | (_dot(_unit(p2 - r2), _unit(w2 - r2)) > 0.0)
            )
            if back.any():
                length_far, *_ = _surface_path(r1, r2, a, vs, vs4, back, factor)
                length = np.where(back, length_far, length)
    active[idx] = True
    r1_out[idx] = r1 / factor
    r2_out[idx] = r2 / factor
    arc_out[idx] = length / factor
    return result()
