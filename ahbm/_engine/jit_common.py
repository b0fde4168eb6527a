"""Compiled (numba) building blocks of the multibody kernels (internal).

The node plan (:func:`ahbm._engine.node_plan.plan`) turns every joint into a
chain of elementary nodes of three kinds, ``REV`` (rotation about a unit
axis), ``PRI`` (translation along a unit axis) and ``SPH`` (rotation given by
a unit quaternion ``(x, y, z, w)``). The helpers here compute the transform
of one node, move motion and force vectors between a node and its parent,
and, for the frame-block kernels, do the same for the frames of a block laid
out ``(..., frame)``. Spatial vectors are angular part first; motion
``[ω; v_O]``, force ``[n_O; f]`` (Featherstone 2008, §2).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ahbm._engine.arrays import PRI, REV, SPH  # noqa: F401  (the kernels' node kinds)

_CACHE = True


def _sincos_constants():
    """Cody-Waite split of π/2 and the Taylor coefficients of sin and cos.

    π comes from Machin's formula in exact rational arithmetic; π/2 is split
    into two 33-bit parts and a remainder, so that ``k * P1`` and ``k * P2``
    are exact for ``|k| < 2**20``.
    """
    from fractions import Fraction

    def atan_inv(n, terms=60):
        x, s, pw = Fraction(1, n), Fraction(0), Fraction(1, n)
        for j in range(terms):
            s += (-1) ** j * pw / (2 * j + 1)
            pw *= x * x
        return s

    half_pi = 8 * atan_inv(5) - 2 * atan_inv(239)

    def lead(v, bits):
        e = math.frexp(float(v))[1]
        scale = Fraction(2) ** (bits - e)
        return float(Fraction(math.floor(v * scale)) / scale)

    p1 = lead(half_pi, 33)
    p2 = lead(half_pi - Fraction(p1), 33)
    p3 = float(half_pi - Fraction(p1) - Fraction(p2))
    sin_c = tuple(float(Fraction((-1) ** j, math.factorial(2 * j + 1))) for j in range(1, 9))
    cos_c = tuple(float(Fraction((-1) ** j, math.factorial(2 * j))) for j in range(1, 10))
    return float(1 / half_pi), p1, p2, p3, sin_c, cos_c


_TWO_OVER_PI, _P1, _P2, _P3, (_S1, _S2, _S3, _S4, _S5, _S6, _S7, _S8), _COS = _sincos_constants()
_C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9 = _COS
_SINCOS_LIMIT = 1.0e6  # beyond this |x| the reduction is not exact: use libm


@njit(cache=_CACHE)
def _sincos_poly(xi):
    """(sin x, cos x) without branches, exact reduction for |x| < 1e6 (see :func:`sincos`)."""
    k = np.floor(xi * _TWO_OVER_PI + 0.5)
    r = ((xi - k * _P1) - k * _P2) - k * _P3
    z = r * r
    ps = _S5 + z * (_S6 + z * (_S7 + z * _S8))
    sp = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * ps))))
    pc = _C5 + z * (_C6 + z * (_C7 + z * (_C8 + z * _C9)))
    cp = 1.0 + z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * pc))))
    h = np.floor(k * 0.5)
    odd = k - 2.0 * h  # k mod 2
    b1 = h - 2.0 * np.floor(h * 0.5)  # bit 1 of k
    k1 = np.floor((k + 1.0) * 0.5)
    b1c = k1 - 2.0 * np.floor(k1 * 0.5)  # bit 1 of k + 1
    return (
        (1.0 - 2.0 * b1) * (odd * cp + (1.0 - odd) * sp),
        (1.0 - 2.0 * b1c) * (odd * sp + (1.0 - odd) * cp),
    )


@njit(cache=_CACHE)
def _sincos1(x):
    """(sin x, cos x) of one angle, as :func:`sincos` computes them."""
    if abs(x) > _SINCOS_LIMIT:
        return math.sin(x), math.cos(x)
    return _sincos_poly(x)


@njit(cache=_CACHE, nogil=True)
def sincos(x, m, s_out, c_out):
    """s_out[:m], c_out[:m] = sin, cos of x[:m] (within 1 ulp of libm for |x| < 1e6).

    Branch-free (the compiler vectorizes the loop): reduction by the nearest
    multiple of π/2, Taylor polynomials of sin and cos to degree 17/18 on
    ``|r| ≤ π/4`` (truncation error < 1e-19), quadrant by arithmetic.
    """
    for i in range(m):
        s_out[i], c_out[i] = _sincos_poly(x[i])
    for i in range(m):
        if abs(x[i]) > _SINCOS_LIMIT:
            s_out[i] = math.sin(x[i])
            c_out[i] = math.cos(x[i])


# ----------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------


@njit(cache=_CACHE)
def _joint_rp(kd, x, y, z, a0, a1, a2, a3):
    """Rotation (9 entries, row by row) and origin (3) of a primitive joint, no constant part.

    ``REV``: angle a0 about the unit axis (x, y, z); ``PRI``: displacement a0
    along it; ``SPH``: the quaternion (a0, a1, a2, a3) = (x, y, z, w),
    normalized here. Scalars in, scalars out: no array arguments, so the
    call is free in the frame loops of the block kernels.
    """
    if kd == REV:
        s, c = _sincos1(a0)
        C = 1.0 - c
        return (
            c + x * x * C, x * y * C - z * s, x * z * C + y * s,
            y * x * C + z * s, c + y * y * C, y * z * C - x * s,
            z * x * C - y * s, z * y * C + x * s, c + z * z * C,
            0.0, 0.0, 0.0,
        )  # fmt: skip
    if kd == PRI:
        return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, x * a0, y * a0, z * a0
    nrm = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
    qx, qy, qz, qw = a0 / nrm, a1 / nrm, a2 / nrm, a3 / nrm
    return (
        1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qw * qz), 2.0 * (qx * qz + qw * qy),
        2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx),
        2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy),
        0.0, 0.0, 0.0,
    )  # fmt: skip


@njit(cache=_CACHE)
def _transforms(k0, k1, kind, E, t, plain, axis, principal, q, qi, R, p):
    """R[k] = parent_R_node, p[k] = node origin in the parent node frame, k0 <= k < k1.

    One call for many nodes: every call of a compiled helper with array
    arguments costs reference counting per array.
    """
    for k in range(k0, k1):
        kd = kind[k]
        ax = principal[k]
        if kd == REV and ax >= 0:
            # rotation about +e_ax: columns e_ax, c e_i + s e_j, -s e_i + c e_j
            i = 1 if ax == 0 else (2 if ax == 1 else 0)
            j = 3 - ax - i
            s, c = _sincos1(q[qi[k]])
            if plain[k]:
                R[k, ax, ax] = 1.0
                R[k, ax, i] = 0.0
                R[k, ax, j] = 0.0
                R[k, i, ax] = 0.0
                R[k, j, ax] = 0.0
                R[k, i, i] = c
                R[k, j, j] = c
                R[k, i, j] = -s
                R[k, j, i] = s
                p[k, 0] = 0.0
                p[k, 1] = 0.0
                p[k, 2] = 0.0
            else:
                for r in range(3):
                    ei = E[k, r, i]
                    ej = E[k, r, j]
                    R[k, r, ax] = E[k, r, ax]
                    R[k, r, i] = c * ei + s * ej
                    R[k, r, j] = c * ej - s * ei
                    p[k, r] = t[k, r]
            continue
        i0 = qi[k]
        a1 = a2 = a3 = 0.0
        if kd == SPH:
            a1, a2, a3 = q[i0 + 1], q[i0 + 2], q[i0 + 3]
        r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2 = _joint_rp(
            kd, axis[k, 0], axis[k, 1], axis[k, 2], q[i0], a1, a2, a3
        )
        R[k, 0, 0], R[k, 0, 1], R[k, 0, 2] = r00, r01, r02
        R[k, 1, 0], R[k, 1, 1], R[k, 1, 2] = r10, r11, r12
        R[k, 2, 0], R[k, 2, 1], R[k, 2, 2] = r20, r21, r22
        p[k, 0], p[k, 1], p[k, 2] = p0, p1, p2
        if not plain[k]:
            # R <- E R, p <- t + E p
            for cc in range(3):
                a0 = R[k, 0, cc]
                a1 = R[k, 1, cc]
                a2 = R[k, 2, cc]
                for r in range(3):
                    R[k, r, cc] = E[k, r, 0] * a0 + E[k, r, 1] * a1 + E[k, r, 2] * a2
            b0, b1, b2 = p[k, 0], p[k, 1], p[k, 2]
            for r in range(3):
                p[k, r] = t[k, r] + E[k, r, 0] * b0 + E[k, r, 1] * b1 + E[k, r, 2] * b2


@njit(cache=_CACHE)
def _unpack(ints, tax):
    """Arrays of a packed plan: parent, kind, principal, qi, vi, nvj, plain, massive, t, axis.

    (The frame-by-frame kernels take the plan packed, ``ints`` (8, n) and
    ``tax`` (2, n, 3): fewer arguments make a cheaper call.)
    """
    return (
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6], ints[7], tax[0], tax[1],
    )  # fmt: skip


@njit(cache=_CACHE)
def _world_poses(parent, R, p, Rw, pw):
    """Rw[k], pw[k] = world rotation and origin of every node from R[k], p[k] (parent frame)."""
    for k in range(parent.shape[0]):
        lam = parent[k]
        if lam < 0:
            for r in range(3):
                pw[k, r] = p[k, r]
                for c in range(3):
                    Rw[k, r, c] = R[k, r, c]
            continue
        for r in range(3):
            pw[k, r] = pw[lam, r] + (
                Rw[lam, r, 0] * p[k, 0] + Rw[lam, r, 1] * p[k, 1] + Rw[lam, r, 2] * p[k, 2]
            )
            for c in range(3):
                Rw[k, r, c] = (
                    Rw[lam, r, 0] * R[k, 0, c]
                    + Rw[lam, r, 1] * R[k, 1, c]
                    + Rw[lam, r, 2] * R[k, 2, c]
                )


@njit(cache=_CACHE)
def _motion_to_child(R, p, k, src, si, dst, di):
    """dst[di] = X src[si] for motion vectors (parent -> node k coordinates)."""
    w0, w1, w2 = src[si, 0], src[si, 1], src[si, 2]
    px, py, pz = p[k, 0], p[k, 1], p[k, 2]
    v0 = src[si, 3] + w1 * pz - w2 * py
    v1 = src[si, 4] + w2 * px - w0 * pz
    v2 = src[si, 5] + w0 * py - w1 * px
    for r in range(3):
        dst[di, r] = R[k, 0, r] * w0 + R[k, 1, r] * w1 + R[k, 2, r] * w2
        dst[di, 3 + r] = R[k, 0, r] * v0 + R[k, 1, r] * v1 + R[k, 2, r] * v2


@njit(cache=_CACHE)
def _force_to_parent_add(R, p, k, src, si, dst, di):
    """dst[di] += Xᵀ src[si] for force vectors (node k -> parent coordinates)."""
    n0, n1, n2 = src[si, 0], src[si, 1], src[si, 2]
    f0, f1, f2 = src[si, 3], src[si, 4], src[si, 5]
    F0 = R[k, 0, 0] * f0 + R[k, 0, 1] * f1 + R[k, 0, 2] * f2
    F1 = R[k, 1, 0] * f0 + R[k, 1, 1] * f1 + R[k, 1, 2] * f2
    F2 = R[k, 2, 0] * f0 + R[k, 2, 1] * f1 + R[k, 2, 2] * f2
    px, py, pz = p[k, 0], p[k, 1], p[k, 2]
    dst[di, 0] += R[k, 0, 0] * n0 + R[k, 0, 1] * n1 + R[k, 0, 2] * n2 + py * F2 - pz * F1
    dst[di, 1] += R[k, 1, 0] * n0 + R[k, 1, 1] * n1 + R[k, 1, 2] * n2 + pz * F0 - px * F2
    dst[di, 2] += R[k, 2, 0] * n0 + R[k, 2, 1] * n1 + R[k, 2, 2] * n2 + px * F1 - py * F0
    dst[di, 3] += F0
    dst[di, 4] += F1
    dst[di, 5] += F2


@njit(cache=_CACHE)
def _S_col(kind, axis, k, c, out):
    """Column c of the motion subspace of node k (node coordinates)."""
    for r in range(6):
        out[r] = 0.0
    if kind[k] == REV:
        out[0], out[1], out[2] = axis[k, 0], axis[k, 1], axis[k, 2]
    elif kind[k] == PRI:
        out[3], out[4], out[5] = axis[k, 0], axis[k, 1], axis[k, 2]
    else:
        out[c] = 1.0


@njit(cache=_CACHE)
def _plucker(R, p, k, X):
    """X (6, 6) = node_X_parent motion transform of node k."""
    for r in range(3):
        for c in range(3):
            X[r, c] = R[k, c, r]
            X[r + 3, c + 3] = R[k, c, r]
            X[r, c + 3] = 0.0
    # lower-left: -Rᵀ [p]×
    px, py, pz = p[k, 0], p[k, 1], p[k, 2]
    for r in range(3):
        a0, a1, a2 = R[k, 0, r], R[k, 1, r], R[k, 2, r]
        # row r of Rᵀ times skew(p): (a × ... ) ; Rᵀ[p]x row = a^T [p]x
        X[r + 3, 0] = -(a1 * pz - a2 * py)
        X[r + 3, 1] = -(a2 * px - a0 * pz)
        X[r + 3, 2] = -(a0 * py - a1 * px)


# ----------------------------------------------------------------------------
# RNEA
# ----------------------------------------------------------------------------


@njit(cache=_CACHE)
def _joint_velocity(kind, axis, k, qd, fr, j, v, c, add):
    """v[k] += vJ = S q̇ and c[k] (+)= v[k] × vJ (velocity-product acceleration).

    ``add`` selects ``c[k] += ...`` (accumulating into an acceleration) or
    ``c[k] = ...``.
    """
    w0 = w1 = w2 = u0 = u1 = u2 = 0.0
    if kind[k] == SPH:
        w0, w1, w2 = qd[fr, j], qd[fr, j + 1], qd[fr, j + 2]
    elif kind[k] == REV:
        w0, w1, w2 = axis[k, 0] * qd[fr, j], axis[k, 1] * qd[fr, j], axis[k, 2] * qd[fr, j]
    else:
        u0, u1, u2 = axis[k, 0] * qd[fr, j], axis[k, 1] * qd[fr, j], axis[k, 2] * qd[fr, j]
    v[k, 0] += w0
    v[k, 1] += w1
    v[k, 2] += w2
    v[k, 3] += u0
    v[k, 4] += u1
    v[k, 5] += u2
    x0, x1, x2, x3, x4, x5 = v[k, 0], v[k, 1], v[k, 2], v[k, 3], v[k, 4], v[k, 5]
    if not add:
        for r in range(6):
            c[k, r] = 0.0
    c[k, 0] += x1 * w2 - x2 * w1
    c[k, 1] += x2 * w0 - x0 * w2
    c[k, 2] += x0 * w1 - x1 * w0
    c[k, 3] += x1 * u2 - x2 * u1 + x4 * w2 - x5 * w1
    c[k, 4] += x2 * u0 - x0 * u2 + x5 * w0 - x3 * w2
    c[k, 5] += x0 * u1 - x1 * u0 + x3 * w1 - x4 * w0


@njit(cache=_CACHE)
def _finite(x):
    """True if every element of the 2-D array x is finite."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if not math.isfinite(x[i, j]):
                return False
    return True


@njit(cache=_CACHE)
def _inputs_ok(kind, qi, q, a, b):
    """Finite q, a, b (N, ·) and no quaternion of (near) zero norm in q.

    The same conditions as the validation of the public functions, checked
    inside the kernels for the callers that skip it (single-state calls).
    """
    if not (_finite(q) and _finite(a) and _finite(b)):
        return False
    for k in range(kind.shape[0]):
        if kind[k] == SPH:
            i0 = qi[k]
            for fr in range(q.shape[0]):
                x, y, z, w = q[fr, i0], q[fr, i0 + 1], q[fr, i0 + 2], q[fr, i0 + 3]
                if x * x + y * y + z * z + w * w < 1e-18:
                    return False
    return True


@njit(cache=_CACHE)
def _body_force(I6, k, v, a, f):
    """f[k] = I a + v ×* (I v) of node k (scalar layout; see _block_body_force)."""
    m_ = I6[k, 3, 3]
    c0, c1, c2 = I6[k, 2, 4], I6[k, 0, 5], I6[k, 1, 3]
    J00, J01, J02 = I6[k, 0, 0], I6[k, 0, 1], I6[k, 0, 2]
    J11, J12, J22 = I6[k, 1, 1], I6[k, 1, 2], I6[k, 2, 2]
    x0, x1, x2, x3, x4, x5 = v[k, 0], v[k, 1], v[k, 2], v[k, 3], v[k, 4], v[k, 5]
    h0 = J00 * x0 + J01 * x1 + J02 * x2 + c1 * x5 - c2 * x4
    h1 = J01 * x0 + J11 * x1 + J12 * x2 + c2 * x3 - c0 * x5
    h2 = J02 * x0 + J12 * x1 + J22 * x2 + c0 * x4 - c1 * x3
    h3 = m_ * x3 - c1 * x2 + c2 * x1
    h4 = m_ * x4 - c2 * x0 + c0 * x2
    h5 = m_ * x5 - c0 * x1 + c1 * x0
    b0, b1, b2, b3, b4, b5 = a[k, 0], a[k, 1], a[k, 2], a[k, 3], a[k, 4], a[k, 5]
    f[k, 0] = x1 * h2 - x2 * h1 + x4 * h5 - x5 * h4
    f[k, 1] = x2 * h0 - x0 * h2 + x5 * h3 - x3 * h5
    f[k, 2] = x0 * h1 - x1 * h0 + x3 * h4 - x4 * h3
    f[k, 3] = x1 * h5 - x2 * h4
    f[k, 4] = x2 * h3 - x0 * h5
    f[k, 5] = x0 * h4 - x1 * h3
    f[k, 0] += J00 * b0 + J01 * b1 + J02 * b2 + c1 * b5 - c2 * b4
    f[k, 1] += J01 * b0 + J11 * b1 + J12 * b2 + c2 * b3 - c0 * b5
    f[k, 2] += J02 * b0 + J12 * b1 + J22 * b2 + c0 * b4 - c1 * b3
    f[k, 3] += m_ * b3 - c1 * b2 + c2 * b1
    f[k, 4] += m_ * b4 - c2 * b0 + c0 * b2
    f[k, 5] += m_ * b5 - c0 * b1 + c1 * b0


# ----------------------------------------------------------------------------
# frame-block helpers: per-frame quantities laid out (..., frame), frames i < m
# ----------------------------------------------------------------------------


@njit(cache=_CACHE)
def _block_base(g, B):
    """Root sources (2, 6, B): [0] zero velocity, [1] −gravity (the ground acceleration)."""
    base = np.zeros((2, 6, B))
    for r in range(3):
        for i in range(B):
            base[1, 3 + r, i] = -g[r]
    return base


@njit(cache=_CACHE)
def _block_gather(q, qd, x, f0, m, qb, qdb, xb):
    """Copy frames f0 .. f0+m-1 of q, qd and x (N, ·) into block buffers (·, B)."""
    for i in range(m):
        for c in range(q.shape[1]):
            qb[c, i] = q[f0 + i, c]
        for c in range(qd.shape[1]):
            qdb[c, i] = qd[f0 + i, c]
            xb[c, i] = x[f0 + i, c]


@njit(cache=_CACHE)
def _block_body_force(I6, k, dv, da, with_a, fx, use_fx, f0, df, m):
    """df = [I a] + v ×* (I v) − f_ext of node k for the frames i < m.

    With mass m, first moment hc and rotational inertia J about the node
    origin, ``I x = [J ω + hc × v; m v − hc × ω]``; ``with_a=False`` leaves
    out ``I a`` (the ABA bias force).
    """
    m_ = I6[k, 3, 3]
    c0, c1, c2 = I6[k, 2, 4], I6[k, 0, 5], I6[k, 1, 3]
    J00, J01, J02 = I6[k, 0, 0], I6[k, 0, 1], I6[k, 0, 2]
    J11, J12, J22 = I6[k, 1, 1], I6[k, 1, 2], I6[k, 2, 2]
    for i in range(m):
        x0, x1, x2, x3, x4, x5 = dv[0, i], dv[1, i], dv[2, i], dv[3, i], dv[4, i], dv[5, i]
        h0 = J00 * x0 + J01 * x1 + J02 * x2 + c1 * x5 - c2 * x4
        h1 = J01 * x0 + J11 * x1 + J12 * x2 + c2 * x3 - c0 * x5
        h2 = J02 * x0 + J12 * x1 + J22 * x2 + c0 * x4 - c1 * x3
        h3 = m_ * x3 - c1 * x2 + c2 * x1
        h4 = m_ * x4 - c2 * x0 + c0 * x2
        h5 = m_ * x5 - c0 * x1 + c1 * x0
        df[0, i] = x1 * h2 - x2 * h1 + x4 * h5 - x5 * h4
        df[1, i] = x2 * h0 - x0 * h2 + x5 * h3 - x3 * h5
        df[2, i] = x0 * h1 - x1 * h0 + x3 * h4 - x4 * h3
        df[3, i] = x1 * h5 - x2 * h4
        df[4, i] = x2 * h3 - x0 * h5
        df[5, i] = x0 * h4 - x1 * h3
    if with_a:  # separate loops: no branch inside the frame loops
        for i in range(m):
            b0, b1, b2, b3, b4, b5 = da[0, i], da[1, i], da[2, i], da[3, i], da[4, i], da[5, i]
            df[0, i] += J00 * b0 + J01 * b1 + J02 * b2 + c1 * b5 - c2 * b4
            df[1, i] += J01 * b0 + J11 * b1 + J12 * b2 + c2 * b3 - c0 * b5
            df[2, i] += J02 * b0 + J12 * b1 + J22 * b2 + c0 * b4 - c1 * b3
            df[3, i] += m_ * b3 - c1 * b2 + c2 * b1
            df[4, i] += m_ * b4 - c2 * b0 + c0 * b2
            df[5, i] += m_ * b5 - c0 * b1 + c1 * b0
    if use_fx:
        for r in range(6):
            for i in range(m):
                df[r, i] -= fx[f0 + i, k, r]


@njit(cache=_CACHE)
def _block_transforms(k, kind, E, t, plain, axis, qi, qb, m, R, p):
    """R[k][:, :, i], p[k][:, i] of node k for the frames i < m of a block."""
    kd = kind[k]
    i0 = qi[k]
    x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
    pl = plain[k]
    for i in range(m):
        a1 = a2 = a3 = 0.0
        if kd == SPH:
            a1, a2, a3 = qb[i0 + 1, i], qb[i0 + 2, i], qb[i0 + 3, i]
        r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2 = _joint_rp(
            kd, x, y, z, qb[i0, i], a1, a2, a3
        )
        if pl:
            R[k, 0, 0, i], R[k, 0, 1, i], R[k, 0, 2, i] = r00, r01, r02
            R[k, 1, 0, i], R[k, 1, 1, i], R[k, 1, 2, i] = r10, r11, r12
            R[k, 2, 0, i], R[k, 2, 1, i], R[k, 2, 2, i] = r20, r21, r22
            p[k, 0, i], p[k, 1, i], p[k, 2, i] = p0, p1, p2
            continue
        for r in range(3):  # R <- E R, p <- t + E p
            e0, e1, e2 = E[k, r, 0], E[k, r, 1], E[k, r, 2]
            R[k, r, 0, i] = e0 * r00 + e1 * r10 + e2 * r20
            R[k, r, 1, i] = e0 * r01 + e1 * r11 + e2 * r21
            R[k, r, 2, i] = e0 * r02 + e1 * r12 + e2 * r22
            p[k, r, i] = t[k, r] + e0 * p0 + e1 * p1 + e2 * p2


@njit(cache=_CACHE)
def _block_motion(Rk, pk, src, dst, m):
    """dst = X src (parent -> node motion vectors) for the frames i < m."""
    for i in range(m):
        w0, w1, w2 = src[0, i], src[1, i], src[2, i]
        px, py, pz = pk[0, i], pk[1, i], pk[2, i]
        l0 = src[3, i] + w1 * pz - w2 * py
        l1 = src[4, i] + w2 * px - w0 * pz
        l2 = src[5, i] + w0 * py - w1 * px
        for r in range(3):
            dst[r, i] = Rk[0, r, i] * w0 + Rk[1, r, i] * w1 + Rk[2, r, i] * w2
            dst[3 + r, i] = Rk[0, r, i] * l0 + Rk[1, r, i] * l1 + Rk[2, r, i] * l2


@njit(cache=_CACHE)
def _block_joint_velocity(kd, ak, j, qdb, m, dv, dc, add):
    """dv += vJ = S q̇ and dc (+)= dv × vJ for the frames i < m.

    ``kd`` is the node kind, ``ak`` its axis (3,); ``add`` accumulates into
    ``dc`` (an acceleration) instead of overwriting it.
    """
    for i in range(m):
        w0 = w1 = w2 = u0 = u1 = u2 = 0.0
        if kd == SPH:
            w0, w1, w2 = qdb[j, i], qdb[j + 1, i], qdb[j + 2, i]
        elif kd == REV:
            w0, w1, w2 = ak[0] * qdb[j, i], ak[1] * qdb[j, i], ak[2] * qdb[j, i]
        else:
            u0, u1, u2 = ak[0] * qdb[j, i], ak[1] * qdb[j, i], ak[2] * qdb[j, i]
        dv[0, i] += w0
        dv[1, i] += w1
        dv[2, i] += w2
        dv[3, i] += u0
        dv[4, i] += u1
        dv[5, i] += u2
        x0, x1, x2, x3, x4, x5 = dv[0, i], dv[1, i], dv[2, i], dv[3, i], dv[4, i], dv[5, i]
        c0 = x1 * w2 - x2 * w1
        c1 = x2 * w0 - x0 * w2
        c2 = x0 * w1 - x1 * w0
        c3 = x1 * u2 - x2 * u1 + x4 * w2 - x5 * w1
        c4 = x2 * u0 - x0 * u2 + x5 * w0 - x3 * w2
        c5 = x0 * u1 - x1 * u0 + x3 * w1 - x4 * w0
        if add:
            dc[0, i] += c0
            dc[1, i] += c1
            dc[2, i] += c2
            dc[3, i] += c3
            dc[4, i] += c4
            dc[5, i] += c5
        else:
            dc[0, i] = c0
            dc[1, i] = c1
            dc[2, i] = c2
            dc[3, i] = c3
            dc[4, i] = c4
            dc[5, i] = c5
