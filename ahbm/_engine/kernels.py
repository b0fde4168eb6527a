"""Compiled (numba) kernels for RNEA, CRBA and ABA (internal).

The public functions in :mod:`ahbm.dynamics.inverse` and
:mod:`ahbm.dynamics.forward` validate their input, then call these kernels.
A model is compiled once (cached on the model) into a *node plan*: every
joint becomes a chain of elementary nodes, each with one constant transform
followed by one primitive motion,

* ``REV``: rotation about a unit axis (1 DOF),
* ``PRI``: translation along a unit axis (1 DOF),
* ``SPH``: rotation given by a unit quaternion ``(x, y, z, w)`` (3 DOF,
  velocity = angular velocity in the node frame),

with massless intermediate nodes (an ``euler`` joint is three ``REV`` nodes,
a ``free`` joint three ``PRI`` nodes and one ``SPH`` node, ...), and bodies
on fixed joints merged into the node that carries their parent (as
Pinocchio does). The motion subspace of every primitive is constant in the
node frame, so the velocity-product term is ``v × S q̇`` alone.

Spatial vectors are angular part first; motion ``[ω; v_O]``, force
``[n_O; f]``, both about the node-frame origin in node coordinates
(Featherstone 2008, §2). Node ``i`` relative to its parent node: rotation
``R = E R_J(q)`` and origin ``p = t + E d_J(q)``.

The kernels loop over frames inside compiled code: a whole trial is one
call, and a single state costs a few microseconds. They release the GIL, so
several threads can run them at once (e.g. trials in a thread pool). The numpy
implementations of the same algorithms remain in the calling modules and
serve as an independent cross-check in the tests.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ahbm.kinematics.tree import (
    EULER,
    FIXED,
    FREE,
    FREE_EULER,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    Model,
)

REV, PRI, SPH = 1, 2, 3
_AXIS = {"X": 0, "Y": 1, "Z": 2}
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


@njit(cache=_CACHE, nogil=True)
def sincos(x, m, s_out, c_out):
    """s_out[:m], c_out[:m] = sin, cos of x[:m] (within 1 ulp of libm for |x| < 1e6).

    Branch-free (the compiler vectorizes the loop): reduction by the nearest
    multiple of π/2, Taylor polynomials of sin and cos to degree 17/18 on
    ``|r| ≤ π/4`` (truncation error < 1e-19), quadrant by arithmetic.
    """
    for i in range(m):
        xi = x[i]
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
        s_out[i] = (1.0 - 2.0 * b1) * (odd * cp + (1.0 - odd) * sp)
        c_out[i] = (1.0 - 2.0 * b1c) * (odd * sp + (1.0 - odd) * cp)
    for i in range(m):
        if abs(x[i]) > _SINCOS_LIMIT:
            s_out[i] = math.sin(x[i])
            c_out[i] = math.cos(x[i])


class Plan:
    """Node plan of a model (see the module docstring); arrays for the kernels."""

    __slots__ = (
        "parent", "kind", "E", "t", "plain", "axis", "principal", "qi", "vi", "nvj", "I6",
        "body_node", "body_E", "body_t", "node_body", "n", "fast", "massive",
    )  # fmt: skip


def _unit(k):
    e = np.zeros(3)
    e[k] = 1.0
    return e


def plan(model: Model) -> Plan:
    """Compile (once per model, cached) the node plan used by the kernels."""
    cache = model.__dict__.setdefault("_joint_cache", {})
    if "kernel_plan" in cache:
        return cache["kernel_plan"]
    parent, kind, Es, ts, axes, qis, vis, nvs, owner = [], [], [], [], [], [], [], [], []
    mass, first, J = [], [], []  # accumulated inertia of each node about its origin
    body_node = np.full(model.n_bodies, -1, dtype=np.int64)
    body_E = np.zeros((model.n_bodies, 3, 3))
    body_t = np.zeros((model.n_bodies, 3))
    I3 = np.eye(3)

    def add_inertia(nd, m, c, Ic, E, t):
        # body inertia (mass m, COM c, inertia Ic about the COM, body axes) with the
        # body frame at rotation E, origin t in node nd's frame
        cn = t + E @ c
        mass[nd] += m
        first[nd] += m * cn
        J[nd] += E @ Ic @ E.T + m * (cn @ cn * I3 - np.outer(cn, cn))

    for i, body in enumerate(model.bodies):
        if body.parent < 0:
            pn, E1, t1 = -1, I3, np.zeros(3)
        else:
            P = body.parent
            pn, E1, t1 = int(body_node[P]), body_E[P], body_t[P]
        E = E1 @ body.rotation
        t = t1 + E1 @ body.position
        code = model.joint_codes[i]
        qi, vi = int(model.q_index[i]), int(model.v_index[i])
        if code == FIXED:
            body_node[i], body_E[i], body_t[i] = pn, E, t
            if pn >= 0:
                add_inertia(pn, model.masses[i], model.coms[i], model.inertias[i], E, t)
            continue
        prims = []  # (kind, axis, q index, v index)
        if code == REVOLUTE:
            prims.append((REV, np.asarray(body.joint.axis, float), qi, vi))
        elif code == PRISMATIC:
            prims.append((PRI, np.asarray(body.joint.axis, float), qi, vi))
        elif code in (UNIVERSAL, EULER):
            for j, ch in enumerate(body.joint.sequence.upper()):
                prims.append((REV, _unit(_AXIS[ch]), qi + j, vi + j))
        elif code == FREE_EULER:
            for j in range(3):
                prims.append((PRI, _unit(j), qi + j, vi + j))
            for j, ch in enumerate(body.joint.sequence.upper()):
                prims.append((REV, _unit(_AXIS[ch]), qi + 3 + j, vi + 3 + j))
        elif code == PLANAR:
            prims += [(PRI, _unit(0), qi, vi), (PRI, _unit(1), qi + 1, vi + 1)]
            prims.append((REV, _unit(2), qi + 2, vi + 2))
        elif code == SPHERICAL:
            prims.append((SPH, np.zeros(3), qi, vi))
        elif code == FREE:
            for j in range(3):
                prims.append((PRI, _unit(j), qi + j, vi + j))
            prims.append((SPH, np.zeros(3), qi + 3, vi + 3))
        else:  # pragma: no cover - Model validates joint types
            raise AssertionError(code)
        for j, (k, ax, qk, vk) in enumerate(prims):
            parent.append(pn)
            kind.append(k)
            Es.append(E if j == 0 else I3)
            ts.append(t if j == 0 else np.zeros(3))
            axes.append(ax)
            qis.append(qk)
            vis.append(vk)
            nvs.append(3 if k == SPH else 1)
            owner.append(-1)
            mass.append(0.0)
            first.append(np.zeros(3))
            J.append(np.zeros((3, 3)))
            pn = len(parent) - 1
        owner[pn] = i
        body_node[i], body_E[i], body_t[i] = pn, I3, np.zeros(3)
        add_inertia(pn, model.masses[i], model.coms[i], model.inertias[i], I3, np.zeros(3))

    n = len(parent)
    p = Plan()
    p.n = n
    p.parent = np.array(parent, dtype=np.int64)
    p.kind = np.array(kind, dtype=np.int64)
    p.E = np.array(Es, dtype=float).reshape(n, 3, 3)
    p.t = np.array(ts, dtype=float).reshape(n, 3)
    p.plain = np.array(
        [np.array_equal(e, I3) and not np.any(tt) for e, tt in zip(Es, ts, strict=True)],
        dtype=np.bool_,
    )
    p.axis = np.array(axes, dtype=float).reshape(n, 3)
    # principal axis index (0, 1, 2) when the axis is +e_k, else -1
    p.principal = np.array(
        [int(np.argmax(a)) if np.count_nonzero(a) == 1 and a.max() == 1.0 else -1 for a in axes],
        dtype=np.int64,
    )
    # revolute nodes about +e_k with no constant rotation: specialized transforms
    p.fast = np.array(
        [
            k == REV and pr >= 0 and np.array_equal(e, I3)
            for k, pr, e in zip(kind, p.principal, Es, strict=True)
        ],
        dtype=np.bool_,
    )
    p.massive = np.array([m_ > 0 for m_ in mass], dtype=np.bool_)
    p.qi = np.array(qis, dtype=np.int64)
    p.vi = np.array(vis, dtype=np.int64)
    p.nvj = np.array(nvs, dtype=np.int64)
    I6 = np.zeros((n, 6, 6))
    for k in range(n):
        h = first[k]
        H = np.array([[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]])
        I6[k, :3, :3] = J[k]
        I6[k, :3, 3:] = H
        I6[k, 3:, :3] = H.T
        I6[k, 3:, 3:] = mass[k] * I3
    p.I6 = I6
    p.body_node, p.body_E, p.body_t = body_node, body_E, body_t
    p.node_body = np.array(owner, dtype=np.int64)
    cache["kernel_plan"] = p
    return p


def node_forces(p: Plan, f_local_bodies, N):
    """External forces per node (N, n_nodes, 6) from body-frame forces.

    ``f_local_bodies`` is a list over bodies of (6, N) forces in body
    coordinates (as made by ``external_forces_local``).
    """
    fx = np.zeros((N, p.n, 6))
    for b, fb in enumerate(f_local_bodies):
        nd = p.body_node[b]
        if nd < 0:
            continue  # a body welded to the ground: its load goes to the ground
        E, t = p.body_E[b], p.body_t[b]
        F = (E @ fb[3:]).T  # (N, 3)
        n_ = (E @ fb[:3]).T + np.cross(t, F)
        fx[:, nd, :3] += n_
        fx[:, nd, 3:] += F
    return fx


# ----------------------------------------------------------------------------
# small helpers (inlined by the compiler)
# ----------------------------------------------------------------------------


@njit(cache=_CACHE, inline="always")
def _transform(k, kind, E, t, plain, axis, principal, q, qi, R, p):
    """R[k] = parent_R_node, p[k] = node origin in the parent node frame."""
    kd = kind[k]
    ax = principal[k]
    if kd == REV and ax >= 0:
        # rotation about +e_ax: columns e_ax, c e_i + s e_j, -s e_i + c e_j
        i = 1 if ax == 0 else (2 if ax == 1 else 0)
        j = 3 - ax - i
        ang = q[qi[k]]
        c = math.cos(ang)
        s = math.sin(ang)
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
        return
    if kd == REV:
        ang = q[qi[k]]
        c = math.cos(ang)
        s = math.sin(ang)
        x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
        C = 1.0 - c
        R[k, 0, 0] = c + x * x * C
        R[k, 0, 1] = x * y * C - z * s
        R[k, 0, 2] = x * z * C + y * s
        R[k, 1, 0] = y * x * C + z * s
        R[k, 1, 1] = c + y * y * C
        R[k, 1, 2] = y * z * C - x * s
        R[k, 2, 0] = z * x * C - y * s
        R[k, 2, 1] = z * y * C + x * s
        R[k, 2, 2] = c + z * z * C
        p[k, 0] = 0.0
        p[k, 1] = 0.0
        p[k, 2] = 0.0
    elif kd == PRI:
        d = q[qi[k]]
        for r in range(3):
            R[k, r, 0] = 0.0
            R[k, r, 1] = 0.0
            R[k, r, 2] = 0.0
            R[k, r, r] = 1.0
            p[k, r] = axis[k, r] * d
    else:  # SPH: quaternion (x, y, z, w), normalized here
        x = q[qi[k]]
        y = q[qi[k] + 1]
        z = q[qi[k] + 2]
        w = q[qi[k] + 3]
        nrm = math.sqrt(x * x + y * y + z * z + w * w)
        x /= nrm
        y /= nrm
        z /= nrm
        w /= nrm
        R[k, 0, 0] = 1.0 - 2.0 * (y * y + z * z)
        R[k, 0, 1] = 2.0 * (x * y - w * z)
        R[k, 0, 2] = 2.0 * (x * z + w * y)
        R[k, 1, 0] = 2.0 * (x * y + w * z)
        R[k, 1, 1] = 1.0 - 2.0 * (x * x + z * z)
        R[k, 1, 2] = 2.0 * (y * z - w * x)
        R[k, 2, 0] = 2.0 * (x * z - w * y)
        R[k, 2, 1] = 2.0 * (y * z + w * x)
        R[k, 2, 2] = 1.0 - 2.0 * (x * x + y * y)
        p[k, 0] = 0.0
        p[k, 1] = 0.0
        p[k, 2] = 0.0
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
def _block_transforms(k, kind, E, t, plain, axis, principal, qi, qb, m, R, p, Rt, pt):
    """R[k][:, :, i], p[k][:, i] of node k for the frames i < m of a block."""
    for i in range(m):
        _transform(
            0, kind[k : k + 1], E[k : k + 1], t[k : k + 1], plain[k : k + 1],
            axis[k : k + 1], principal[k : k + 1], qb[:, i], qi[k : k + 1], Rt, pt,
        )  # fmt: skip
        for r in range(3):
            p[k, r, i] = pt[0, r]
            for c in range(3):
                R[k, r, c, i] = Rt[0, r, c]


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


@njit(cache=_CACHE, nogil=True)
def rnea_block_kernel(
    parent, kind, E, t, plain, axis, principal, qi, vi, I6, fast, massive,
    q, qd, qdd, fx, use_fx, g, tau,
):  # fmt: skip
    """tau (N, nv) <- RNEA, frames in blocks of _B (innermost loops run over frames).

    Layout inside a block: spatial vectors (node, component, frame). All
    branches (joint type, axis) are taken once per node and block; the
    loops over the frames of a block have none, so the compiler vectorizes
    them.
    """
    n = parent.shape[0]
    N = q.shape[0]
    nq = q.shape[1]
    nv = qd.shape[1]
    B = min(_B, max(N, 1))
    v = np.zeros((n, 6, B))
    a = np.zeros((n, 6, B))
    f = np.zeros((n, 6, B))
    R = np.zeros((n, 3, 3, B))
    p = np.zeros((n, 3, B))
    C = np.zeros((n, B))
    S = np.zeros((n, B))
    qb = np.zeros((nq, B))
    qdb = np.zeros((nv, B))
    qddb = np.zeros((nv, B))
    taub = np.zeros((nv, B))
    base = _block_base(g, B)
    Rt = np.zeros((1, 3, 3))
    pt = np.zeros((1, 3))
    tN = np.zeros((3, B))
    tF = np.zeros((3, B))
    ang = np.zeros(B)
    for f0 in range(0, N, B):
        m = min(B, N - f0)
        _block_gather(q, qd, qdd, f0, m, qb, qdb, qddb)
        # ---- forward pass
        for k in range(n):
            lam = parent[k]
            sv = base[0] if lam < 0 else v[lam]
            sa = base[1] if lam < 0 else a[lam]
            dv = v[k]
            da = a[k]
            j = vi[k]
            if fast[k]:
                ax = principal[k]
                i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
                j_ = 3 - ax - i_
                tx, ty, tz = t[k, 0], t[k, 1], t[k, 2]
                for i in range(m):
                    ang[i] = qb[qi[k], i]
                sincos(ang, m, S[k], C[k])
                cb = C[k]
                sb = S[k]
                for src, dst in ((sv, dv), (sa, da)):
                    for i in range(m):
                        w0, w1, w2 = src[0, i], src[1, i], src[2, i]
                        dst[3, i] = src[3, i] + w1 * tz - w2 * ty
                        dst[4, i] = src[4, i] + w2 * tx - w0 * tz
                        dst[5, i] = src[5, i] + w0 * ty - w1 * tx
                    for i in range(m):
                        c_ = cb[i]
                        s_ = sb[i]
                        wi = src[i_, i]
                        wj = src[j_, i]
                        dst[ax, i] = src[ax, i]
                        dst[i_, i] = c_ * wi + s_ * wj
                        dst[j_, i] = c_ * wj - s_ * wi
                        li = dst[3 + i_, i]
                        lj = dst[3 + j_, i]
                        dst[3 + i_, i] = c_ * li + s_ * lj
                        dst[3 + j_, i] = c_ * lj - s_ * li
                # v += e_ax q̇; a += e_ax q̈ + v × e_ax q̇
                for i in range(m):
                    w = qdb[j, i]
                    dv[ax, i] += w
                    da[ax, i] += qddb[j, i]
                    da[i_, i] += dv[j_, i] * w
                    da[j_, i] -= dv[i_, i] * w
                    da[3 + i_, i] += dv[3 + j_, i] * w
                    da[3 + j_, i] -= dv[3 + i_, i] * w
            else:
                _block_transforms(k, kind, E, t, plain, axis, principal, qi, qb, m, R, p, Rt, pt)
                _block_motion(R[k], p[k], sv, dv, m)
                _block_motion(R[k], p[k], sa, da, m)
                # a += S q̈; v += vJ = S q̇; a += v × vJ
                kd = kind[k]
                for i in range(m):
                    if kd == SPH:
                        for r in range(3):
                            da[r, i] += qddb[j + r, i]
                    elif kd == REV:
                        for r in range(3):
                            da[r, i] += axis[k, r] * qddb[j, i]
                    else:
                        for r in range(3):
                            da[3 + r, i] += axis[k, r] * qddb[j, i]
                _block_joint_velocity(kd, axis[k], j, qdb, m, dv, da, True)
            # f = I a + v ×* (I v) - f_ext
            if massive[k] or use_fx:
                _block_body_force(I6, k, dv, da, True, fx, use_fx, f0, f[k], m)
            else:
                for r in range(6):
                    for i in range(m):
                        f[k, r, i] = 0.0
        # ---- backward pass
        for k in range(n - 1, -1, -1):
            j = vi[k]
            lam = parent[k]
            df = f[k]
            kd = kind[k]
            if kd == SPH:
                for r in range(3):
                    for i in range(m):
                        taub[j + r, i] = df[r, i]
            elif kd == REV:
                x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
                for i in range(m):
                    taub[j, i] = x * df[0, i] + y * df[1, i] + z * df[2, i]
            else:
                x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
                for i in range(m):
                    taub[j, i] = x * df[3, i] + y * df[4, i] + z * df[5, i]
            if lam < 0:
                continue
            if fast[k]:
                ax = principal[k]
                i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
                j_ = 3 - ax - i_
                cb = C[k]
                sb = S[k]
                for i in range(m):
                    c_ = cb[i]
                    s_ = sb[i]
                    tN[ax, i] = df[ax, i]
                    tN[i_, i] = c_ * df[i_, i] - s_ * df[j_, i]
                    tN[j_, i] = s_ * df[i_, i] + c_ * df[j_, i]
                    tF[ax, i] = df[3 + ax, i]
                    tF[i_, i] = c_ * df[3 + i_, i] - s_ * df[3 + j_, i]
                    tF[j_, i] = s_ * df[3 + i_, i] + c_ * df[3 + j_, i]
            else:
                Rk = R[k]
                for i in range(m):
                    for r in range(3):
                        tN[r, i] = (
                            Rk[r, 0, i] * df[0, i] + Rk[r, 1, i] * df[1, i] + Rk[r, 2, i] * df[2, i]
                        )
                        tF[r, i] = (
                            Rk[r, 0, i] * df[3, i] + Rk[r, 1, i] * df[4, i] + Rk[r, 2, i] * df[5, i]
                        )
            pf = f[lam]
            if fast[k]:
                tx, ty, tz = t[k, 0], t[k, 1], t[k, 2]
                for i in range(m):
                    F0, F1, F2 = tF[0, i], tF[1, i], tF[2, i]
                    pf[0, i] += tN[0, i] + ty * F2 - tz * F1
                    pf[1, i] += tN[1, i] + tz * F0 - tx * F2
                    pf[2, i] += tN[2, i] + tx * F1 - ty * F0
                    pf[3, i] += F0
                    pf[4, i] += F1
                    pf[5, i] += F2
            else:
                pk = p[k]
                for i in range(m):
                    F0, F1, F2 = tF[0, i], tF[1, i], tF[2, i]
                    px, py, pz = pk[0, i], pk[1, i], pk[2, i]
                    pf[0, i] += tN[0, i] + py * F2 - pz * F1
                    pf[1, i] += tN[1, i] + pz * F0 - px * F2
                    pf[2, i] += tN[2, i] + px * F1 - py * F0
                    pf[3, i] += F0
                    pf[4, i] += F1
                    pf[5, i] += F2
        for i in range(m):
            for c in range(nv):
                tau[f0 + i, c] = taub[c, i]


_B = 64  # frames per block of rnea_block_kernel (measured best of 8-256)


def rnea(model: Model, q, qd, qdd, fx=None, gravity=True):
    """RNEA through the kernel; q (N, nq), qd/qdd (N, nv) C-contiguous; returns (N, nv)."""
    p = plan(model)
    N = q.shape[0]
    tau = np.empty((N, model.nv))
    g = np.asarray(model.gravity, float) if gravity else np.zeros(3)
    if qd is None:
        qd = np.zeros((N, model.nv))
    if qdd is None:
        qdd = np.zeros((N, model.nv))
    use_fx = fx is not None
    if fx is None:
        fx = np.zeros((1, 1, 6))
    rnea_block_kernel(
        p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.I6,
        p.fast, p.massive, _c(q), _c(qd), _c(qdd), _c(fx), use_fx, g, tau,
    )  # fmt: skip
    return tau


def _c(x):
    return np.ascontiguousarray(x, dtype=float)


# ----------------------------------------------------------------------------
# CRBA
# ----------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
def crba_kernel(parent, kind, E, t, plain, axis, principal, qi, vi, nvj, I6, q, H):
    """H (N, nv, nv) <- joint-space inertia matrix for q (N, nq)."""
    n = parent.shape[0]
    N = q.shape[0]
    R = np.zeros((n, 3, 3))
    p = np.zeros((n, 3))
    Ic = np.zeros((n, 6, 6))
    X = np.zeros((6, 6))
    T = np.zeros((6, 6))
    F = np.zeros((3, 6))
    G = np.zeros((3, 6))
    s = np.zeros(6)
    for fr in range(N):
        qf = q[fr]
        Hf = H[fr]
        for k in range(n):
            _transform(k, kind, E, t, plain, axis, principal, qf, qi, R, p)
            Ic[k] = I6[k]
        for r in range(Hf.shape[0]):
            for c in range(Hf.shape[1]):
                Hf[r, c] = 0.0
        for k in range(n - 1, -1, -1):
            # F = Ic S (6 x nvj)
            m = nvj[k]
            for c in range(m):
                _S_col(kind, axis, k, c, s)
                for r in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += Ic[k, r, l] * s[l]
                    F[c, r] = acc
            j0 = vi[k]
            for c in range(m):
                _S_col(kind, axis, k, c, s)
                for c2 in range(c, m):  # upper triangle, mirrored: H exactly symmetric
                    acc = 0.0
                    for r in range(6):
                        acc += s[r] * F[c2, r]
                    Hf[j0 + c, j0 + c2] = acc
                    Hf[j0 + c2, j0 + c] = acc
            # propagate F to the ancestors
            jj = k
            while parent[jj] >= 0:
                for c in range(m):
                    for r in range(6):
                        G[c, r] = 0.0
                    _force_to_parent_add(R, p, jj, F, c, G, c)
                    for r in range(6):
                        F[c, r] = G[c, r]
                jj = parent[jj]
                j1 = vi[jj]
                for c2 in range(nvj[jj]):
                    _S_col(kind, axis, jj, c2, s)
                    for c in range(m):
                        acc = 0.0
                        for r in range(6):
                            acc += s[r] * F[c, r]
                        Hf[j1 + c2, j0 + c] = acc
                        Hf[j0 + c, j1 + c2] = acc
            lam = parent[k]
            if lam >= 0:
                # Ic[lam] += Xᵀ Ic[k] X
                _plucker(R, p, k, X)
                for r in range(6):
                    for c in range(6):
                        acc = 0.0
                        for l in range(6):
                            acc += Ic[k, r, l] * X[l, c]
                        T[r, c] = acc
                for r in range(6):
                    for c in range(6):
                        acc = 0.0
                        for l in range(6):
                            acc += X[l, r] * T[l, c]
                        Ic[lam, r, c] += acc


def crba(model: Model, q):
    """CRBA through the kernel; q (N, nq); returns H (N, nv, nv)."""
    p = plan(model)
    H = np.empty((q.shape[0], model.nv, model.nv))
    crba_kernel(
        p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.nvj, p.I6,
        _c(q), H,
    )  # fmt: skip
    return H


# ----------------------------------------------------------------------------
# ABA
# ----------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
def aba_kernel(
    parent, kind, E, t, plain, axis, principal, qi, vi, nvj, I6, q, qd, tau, fx, use_fx, g, qdd
):
    """qdd (N, nv) <- ABA. Returns -1, or the index of a node whose D is singular."""
    n = parent.shape[0]
    N = q.shape[0]
    R = np.zeros((n, 3, 3))
    p = np.zeros((n, 3))
    v = np.zeros((n, 6))
    c = np.zeros((n, 6))
    a = np.zeros((n, 6))
    IA = np.zeros((n, 6, 6))
    pA = np.zeros((n, 6))
    U = np.zeros((n, 6, 3))
    Dinv = np.zeros((n, 3, 3))
    u = np.zeros((n, 3))
    X = np.zeros((6, 6))
    T = np.zeros((6, 6))
    Ia = np.zeros((6, 6))
    pa2 = np.zeros((1, 6))
    h = np.zeros(6)
    s = np.zeros(6)
    D = np.zeros((3, 3))
    base = np.zeros((2, 6))  # row 0: zero velocity, row 1: -gravity
    base[1, 3] = -g[0]
    base[1, 4] = -g[1]
    base[1, 5] = -g[2]
    for fr in range(N):
        qf = q[fr]
        # pass 1: velocities, bias accelerations, rigid inertias and bias forces
        for k in range(n):
            _transform(k, kind, E, t, plain, axis, principal, qf, qi, R, p)
            lam = parent[k]
            if lam < 0:
                _motion_to_child(R, p, k, base, 0, v, k)
            else:
                _motion_to_child(R, p, k, v, lam, v, k)
            j = vi[k]
            # v += vJ = S q̇; c = v × vJ
            _joint_velocity(kind, axis, k, qd, fr, j, v, c, False)
            x0, x1, x2, x3, x4, x5 = v[k, 0], v[k, 1], v[k, 2], v[k, 3], v[k, 4], v[k, 5]
            for r in range(6):
                sv = 0.0
                for cc in range(6):
                    sv += I6[k, r, cc] * v[k, cc]
                    IA[k, r, cc] = I6[k, r, cc]
                h[r] = sv
            pA[k, 0] = x1 * h[2] - x2 * h[1] + x4 * h[5] - x5 * h[4]
            pA[k, 1] = x2 * h[0] - x0 * h[2] + x5 * h[3] - x3 * h[5]
            pA[k, 2] = x0 * h[1] - x1 * h[0] + x3 * h[4] - x4 * h[3]
            pA[k, 3] = x1 * h[5] - x2 * h[4]
            pA[k, 4] = x2 * h[3] - x0 * h[5]
            pA[k, 5] = x0 * h[4] - x1 * h[3]
            if use_fx:
                for r in range(6):
                    pA[k, r] -= fx[fr, k, r]
        # pass 2: articulated inertias, leaves to root
        for k in range(n - 1, -1, -1):
            m = nvj[k]
            j = vi[k]
            for cc in range(m):
                _S_col(kind, axis, k, cc, s)
                for r in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += IA[k, r, l] * s[l]
                    U[k, r, cc] = acc
                acc = 0.0
                for r in range(6):
                    acc += s[r] * pA[k, r]
                u[k, cc] = tau[fr, j + cc] - acc
            for c1 in range(m):
                _S_col(kind, axis, k, c1, s)
                for c2 in range(m):
                    acc = 0.0
                    for r in range(6):
                        acc += s[r] * U[k, r, c2]
                    D[c1, c2] = acc
            if m == 1:
                if D[0, 0] == 0.0:
                    return k
                Dinv[k, 0, 0] = 1.0 / D[0, 0]
            else:
                det = (
                    D[0, 0] * (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1])
                    - D[0, 1] * (D[1, 0] * D[2, 2] - D[1, 2] * D[2, 0])
                    + D[0, 2] * (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0])
                )
                if det == 0.0:
                    return k
                Dinv[k, 0, 0] = (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1]) / det
                Dinv[k, 0, 1] = (D[0, 2] * D[2, 1] - D[0, 1] * D[2, 2]) / det
                Dinv[k, 0, 2] = (D[0, 1] * D[1, 2] - D[0, 2] * D[1, 1]) / det
                Dinv[k, 1, 0] = (D[1, 2] * D[2, 0] - D[1, 0] * D[2, 2]) / det
                Dinv[k, 1, 1] = (D[0, 0] * D[2, 2] - D[0, 2] * D[2, 0]) / det
                Dinv[k, 1, 2] = (D[0, 2] * D[1, 0] - D[0, 0] * D[1, 2]) / det
                Dinv[k, 2, 0] = (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0]) / det
                Dinv[k, 2, 1] = (D[0, 1] * D[2, 0] - D[0, 0] * D[2, 1]) / det
                Dinv[k, 2, 2] = (D[0, 0] * D[1, 1] - D[0, 1] * D[1, 0]) / det
            lam = parent[k]
            if lam < 0:
                continue
            # Ia = IA - U D⁻¹ Uᵀ ; pa = pA + Ia c + U D⁻¹ u
            for r in range(6):
                for cc in range(6):
                    acc = IA[k, r, cc]
                    for c1 in range(m):
                        for c2 in range(m):
                            acc -= U[k, r, c1] * Dinv[k, c1, c2] * U[k, cc, c2]
                    Ia[r, cc] = acc
            for r in range(6):
                acc = pA[k, r]
                for cc in range(6):
                    acc += Ia[r, cc] * c[k, cc]
                for c1 in range(m):
                    for c2 in range(m):
                        acc += U[k, r, c1] * Dinv[k, c1, c2] * u[k, c2]
                pa2[0, r] = acc
            _plucker(R, p, k, X)
            for r in range(6):
                for cc in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += Ia[r, l] * X[l, cc]
                    T[r, cc] = acc
            for r in range(6):
                for cc in range(6):
                    acc = 0.0
                    for l in range(6):
                        acc += X[l, r] * T[l, cc]
                    IA[lam, r, cc] += acc
            _force_to_parent_add(R, p, k, pa2, 0, pA, lam)
        # pass 3: accelerations, root to leaves
        for k in range(n):
            lam = parent[k]
            if lam < 0:
                _motion_to_child(R, p, k, base, 1, a, k)
            else:
                _motion_to_child(R, p, k, a, lam, a, k)
            for r in range(6):
                a[k, r] += c[k, r]
            m = nvj[k]
            j = vi[k]
            for c1 in range(m):
                acc = u[k, c1]
                for r in range(6):
                    acc -= U[k, r, c1] * a[k, r]
                h[c1] = acc
            for c1 in range(m):
                acc = 0.0
                for c2 in range(m):
                    acc += Dinv[k, c1, c2] * h[c2]
                qdd[fr, j + c1] = acc
            for c1 in range(m):
                _S_col(kind, axis, k, c1, s)
                for r in range(6):
                    a[k, r] += s[r] * qdd[fr, j + c1]
    return -1


@njit(cache=_CACHE, nogil=True)
def aba_block_kernel(
    parent, kind, E, t, plain, axis, principal, qi, vi, nvj, I6, fast,
    q, qd, tau, fx, use_fx, g, qdd,
):  # fmt: skip
    """qdd (N, nv) <- ABA, frames in blocks of _ABA_B (innermost loops over frames).

    Returns -1, or the index of a node whose ``D = Sᵀ I^A S`` is singular.
    Same algorithm as :func:`aba_kernel` (Featherstone 2008, Table 7.1);
    the per-frame quantities are laid out (..., frame) so that the loops
    over the frames of a block have no branches and vectorize.
    """
    n = parent.shape[0]
    N = q.shape[0]
    nq = q.shape[1]
    nv = qd.shape[1]
    B = min(_ABA_B, max(N, 1))
    R = np.zeros((n, 3, 3, B))
    p = np.zeros((n, 3, B))
    v = np.zeros((n, 6, B))
    c = np.zeros((n, 6, B))
    a = np.zeros((n, 6, B))
    IA = np.zeros((n, 6, 6, B))
    pA = np.zeros((n, 6, B))
    U = np.zeros((n, 6, 3, B))
    Dinv = np.zeros((n, 3, 3, B))
    u = np.zeros((n, 3, B))
    X = np.zeros((6, 6, B))
    T = np.zeros((6, 6, B))
    Ia = np.zeros((6, 6, B))
    pa = np.zeros((1, 6, B))
    D = np.zeros((3, 3, B))
    h = np.zeros((6, B))
    qb = np.zeros((nq, B))
    qdb = np.zeros((nv, B))
    taub = np.zeros((nv, B))
    base = _block_base(g, B)
    Rt = np.zeros((1, 3, 3))
    pt = np.zeros((1, 3))
    ang = np.zeros(B)
    sb = np.zeros(B)
    cb = np.zeros(B)
    s = np.zeros(6)
    for f0 in range(0, N, B):
        m = min(B, N - f0)
        _block_gather(q, qd, tau, f0, m, qb, qdb, taub)
        # pass 1: transforms, velocities, bias accelerations and forces
        for k in range(n):
            Rk = R[k]
            pk = p[k]
            if fast[k]:
                ax = principal[k]
                i_ = 1 if ax == 0 else (2 if ax == 1 else 0)
                j_ = 3 - ax - i_
                for i in range(m):
                    ang[i] = qb[qi[k], i]
                sincos(ang, m, sb, cb)
                for r in range(3):
                    for cc in range(3):
                        for i in range(m):
                            Rk[r, cc, i] = 0.0
                    for i in range(m):
                        pk[r, i] = t[k, r]
                for i in range(m):
                    Rk[ax, ax, i] = 1.0
                    Rk[i_, i_, i] = cb[i]
                    Rk[j_, j_, i] = cb[i]
                    Rk[i_, j_, i] = -sb[i]
                    Rk[j_, i_, i] = sb[i]
            else:
                _block_transforms(k, kind, E, t, plain, axis, principal, qi, qb, m, R, p, Rt, pt)
            lam = parent[k]
            dv = v[k]
            _block_motion(Rk, pk, base[0] if lam < 0 else v[lam], dv, m)
            _block_joint_velocity(kind[k], axis[k], vi[k], qdb, m, dv, c[k], False)
            IAk = IA[k]
            for r in range(6):
                for cc in range(6):
                    val = I6[k, r, cc]
                    for i in range(m):
                        IAk[r, cc, i] = val
            _block_body_force(I6, k, dv, dv, False, fx, use_fx, f0, pA[k], m)
        # pass 2: articulated inertias, leaves to root
        for k in range(n - 1, -1, -1):
            mk = nvj[k]
            j = vi[k]
            IAk = IA[k]
            Uk = U[k]
            for cc in range(mk):
                _S_col(kind, axis, k, cc, s)
                for r in range(6):
                    for i in range(m):
                        Uk[r, cc, i] = 0.0
                    for l in range(6):
                        if s[l] != 0.0:
                            sl = s[l]
                            for i in range(m):
                                Uk[r, cc, i] += IAk[r, l, i] * sl
                for i in range(m):
                    u[k, cc, i] = taub[j + cc, i]
                for l in range(6):
                    if s[l] != 0.0:
                        sl = s[l]
                        for i in range(m):
                            u[k, cc, i] -= sl * pA[k, l, i]
            for c1 in range(mk):
                _S_col(kind, axis, k, c1, s)
                for c2 in range(mk):
                    for i in range(m):
                        D[c1, c2, i] = 0.0
                    for l in range(6):
                        if s[l] != 0.0:
                            sl = s[l]
                            for i in range(m):
                                D[c1, c2, i] += sl * Uk[l, c2, i]
            Dk = Dinv[k]
            if mk == 1:
                for i in range(m):
                    if D[0, 0, i] == 0.0:
                        return k
                for i in range(m):
                    Dk[0, 0, i] = 1.0 / D[0, 0, i]
            else:
                for i in range(m):
                    det = (
                        D[0, 0, i] * (D[1, 1, i] * D[2, 2, i] - D[1, 2, i] * D[2, 1, i])
                        - D[0, 1, i] * (D[1, 0, i] * D[2, 2, i] - D[1, 2, i] * D[2, 0, i])
                        + D[0, 2, i] * (D[1, 0, i] * D[2, 1, i] - D[1, 1, i] * D[2, 0, i])
                    )
                    if det == 0.0:
                        return k
                    Dk[0, 0, i] = (D[1, 1, i] * D[2, 2, i] - D[1, 2, i] * D[2, 1, i]) / det
                    Dk[0, 1, i] = (D[0, 2, i] * D[2, 1, i] - D[0, 1, i] * D[2, 2, i]) / det
                    Dk[0, 2, i] = (D[0, 1, i] * D[1, 2, i] - D[0, 2, i] * D[1, 1, i]) / det
                    Dk[1, 0, i] = (D[1, 2, i] * D[2, 0, i] - D[1, 0, i] * D[2, 2, i]) / det
                    Dk[1, 1, i] = (D[0, 0, i] * D[2, 2, i] - D[0, 2, i] * D[2, 0, i]) / det
                    Dk[1, 2, i] = (D[0, 2, i] * D[1, 0, i] - D[0, 0, i] * D[1, 2, i]) / det
                    Dk[2, 0, i] = (D[1, 0, i] * D[2, 1, i] - D[1, 1, i] * D[2, 0, i]) / det
                    Dk[2, 1, i] = (D[0, 1, i] * D[2, 0, i] - D[0, 0, i] * D[2, 1, i]) / det
                    Dk[2, 2, i] = (D[0, 0, i] * D[1, 1, i] - D[0, 1, i] * D[1, 0, i]) / det
            lam = parent[k]
            if lam < 0:
                continue
            # Ia = IA - U D⁻¹ Uᵀ ; pa = pA + Ia c + U D⁻¹ u  (UD = U D⁻¹ kept in T[:, :3])
            for r in range(6):
                for c1 in range(mk):
                    for i in range(m):
                        T[r, c1, i] = 0.0
                    for c2 in range(mk):
                        for i in range(m):
                            T[r, c1, i] += Uk[r, c2, i] * Dk[c2, c1, i]
            for r in range(6):
                for cc in range(6):
                    for i in range(m):
                        Ia[r, cc, i] = IAk[r, cc, i]
                    for c1 in range(mk):
                        for i in range(m):
                            Ia[r, cc, i] -= T[r, c1, i] * Uk[cc, c1, i]
            for r in range(6):
                for i in range(m):
                    pa[0, r, i] = pA[k, r, i]
                for cc in range(6):
                    for i in range(m):
                        pa[0, r, i] += Ia[r, cc, i] * c[k, cc, i]
                for c1 in range(mk):
                    for i in range(m):
                        pa[0, r, i] += T[r, c1, i] * u[k, c1, i]
            # X = node_X_parent: [[Rᵀ, 0], [-Rᵀ [p]x, Rᵀ]]
            Rk = R[k]
            pk = p[k]
            for r in range(3):
                for cc in range(3):
                    for i in range(m):
                        X[r, cc, i] = Rk[cc, r, i]
                        X[r + 3, cc + 3, i] = Rk[cc, r, i]
                        X[r, cc + 3, i] = 0.0
                for i in range(m):
                    a0_, a1_, a2_ = Rk[0, r, i], Rk[1, r, i], Rk[2, r, i]
                    px, py, pz = pk[0, i], pk[1, i], pk[2, i]
                    X[r + 3, 0, i] = -(a1_ * pz - a2_ * py)
                    X[r + 3, 1, i] = -(a2_ * px - a0_ * pz)
                    X[r + 3, 2, i] = -(a0_ * py - a1_ * px)
            # IA[lam] += Xᵀ Ia X
            for r in range(6):
                for cc in range(6):
                    for i in range(m):
                        T[r, cc, i] = 0.0
                    for l in range(6):
                        for i in range(m):
                            T[r, cc, i] += Ia[r, l, i] * X[l, cc, i]
            IAp = IA[lam]
            for r in range(6):
                for cc in range(6):
                    for l in range(6):
                        for i in range(m):
                            IAp[r, cc, i] += X[l, r, i] * T[l, cc, i]
            # pA[lam] += Xᵀ pa
            for r in range(6):
                for l in range(6):
                    for i in range(m):
                        pA[lam, r, i] += X[l, r, i] * pa[0, l, i]
        # pass 3: accelerations, root to leaves
        for k in range(n):
            lam = parent[k]
            ak = a[k]
            _block_motion(R[k], p[k], base[1] if lam < 0 else a[lam], ak, m)
            for r in range(6):
                for i in range(m):
                    ak[r, i] += c[k, r, i]
            mk = nvj[k]
            j = vi[k]
            for c1 in range(mk):
                for i in range(m):
                    h[c1, i] = u[k, c1, i]
                for r in range(6):
                    for i in range(m):
                        h[c1, i] -= U[k, r, c1, i] * ak[r, i]
            for c1 in range(mk):
                for i in range(m):
                    acc = 0.0
                    for c2 in range(mk):
                        acc += Dinv[k, c1, c2, i] * h[c2, i]
                    qdd[f0 + i, j + c1] = acc
            for c1 in range(mk):
                _S_col(kind, axis, k, c1, s)
                for r in range(6):
                    if s[r] != 0.0:
                        sr = s[r]
                        for i in range(m):
                            ak[r, i] += sr * qdd[f0 + i, j + c1]
    return -1


_ABA_B = 64  # frames per block of aba_block_kernel
_ABA_BLOCK_MIN = 8  # fewer frames: the frame-by-frame kernel (no block set-up)


def aba(model: Model, q, qd, tau, fx=None):
    """ABA through the kernel. Returns (qdd (N, nv), failing node or -1)."""
    p = plan(model)
    N = q.shape[0]
    qdd = np.empty((N, model.nv))
    use_fx = fx is not None
    if fx is None:
        fx = np.zeros((1, 1, 6))
    args = (_c(q), _c(qd), _c(tau), _c(fx), use_fx, np.asarray(model.gravity, float), qdd)
    if N >= _ABA_BLOCK_MIN:
        bad = aba_block_kernel(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.nvj, p.I6,
            p.fast, *args,
        )  # fmt: skip
    else:
        bad = aba_kernel(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.nvj, p.I6,
            *args,
        )  # fmt: skip
    return qdd, int(bad)


def failing_body(p: Plan, node: int) -> int:
    """Body owning ``node`` (or the first body carried below it)."""
    for k in range(node, p.n):
        if p.node_body[k] >= 0:
            return int(p.node_body[k])
    return 0


# ----------------------------------------------------------------------------
# Kinematics for constraints and force elements
# ----------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
def kinematics_kernel(
    parent, kind, E, t, plain, axis, principal, qi, vi, nvj, body_node, body_E, body_t,
    q, qd, use_qd, use_cols, Rw_out, pw_out, v_out, a_out, Sw_out,
):  # fmt: skip
    """World poses of the bodies, their velocities and bias accelerations, DOF columns.

    Rw_out (N, nb, 3, 3), pw_out (N, nb, 3): world pose of each body frame.
    v_out, a_out (N, nb, 6): body spatial velocity and acceleration at q̈ = 0
    (no gravity), body coordinates (only if use_qd). Sw_out (N, 6, nv): world
    motion vector ``[ω; v_O]`` (about the world origin) of each unit q̇_k
    (only if use_cols).
    """
    n = parent.shape[0]
    nb = body_node.shape[0]
    N = q.shape[0]
    R = np.zeros((n, 3, 3))
    p = np.zeros((n, 3))
    Rw = np.zeros((n, 3, 3))
    pw = np.zeros((n, 3))
    v = np.zeros((n, 6))
    a = np.zeros((n, 6))
    zero = np.zeros((1, 6))
    s = np.zeros(6)
    for fr in range(N):
        qf = q[fr]
        for k in range(n):
            _transform(k, kind, E, t, plain, axis, principal, qf, qi, R, p)
            lam = parent[k]
            if lam < 0:
                for r in range(3):
                    pw[k, r] = p[k, r]
                    for c in range(3):
                        Rw[k, r, c] = R[k, r, c]
            else:
                for r in range(3):
                    acc = pw[lam, r]
                    for l in range(3):
                        acc += Rw[lam, r, l] * p[k, l]
                    pw[k, r] = acc
                    for c in range(3):
                        acc = 0.0
                        for l in range(3):
                            acc += Rw[lam, r, l] * R[k, l, c]
                        Rw[k, r, c] = acc
            for c in range(nvj[k] if use_cols else 0):
                _S_col(kind, axis, k, c, s)
                col = vi[k] + c
                for r in range(3):
                    w_ = Rw[k, r, 0] * s[0] + Rw[k, r, 1] * s[1] + Rw[k, r, 2] * s[2]
                    Sw_out[fr, r, col] = w_
                    Sw_out[fr, 3 + r, col] = (
                        Rw[k, r, 0] * s[3] + Rw[k, r, 1] * s[4] + Rw[k, r, 2] * s[5]
                    )
                w0, w1, w2 = Sw_out[fr, 0, col], Sw_out[fr, 1, col], Sw_out[fr, 2, col]
                Sw_out[fr, 3, col] += pw[k, 1] * w2 - pw[k, 2] * w1
                Sw_out[fr, 4, col] += pw[k, 2] * w0 - pw[k, 0] * w2
                Sw_out[fr, 5, col] += pw[k, 0] * w1 - pw[k, 1] * w0
            if use_qd:
                if lam < 0:
                    _motion_to_child(R, p, k, zero, 0, v, k)
                    _motion_to_child(R, p, k, zero, 0, a, k)
                else:
                    _motion_to_child(R, p, k, v, lam, v, k)
                    _motion_to_child(R, p, k, a, lam, a, k)
                _joint_velocity(kind, axis, k, qd, fr, vi[k], v, a, True)
        for b in range(nb):
            nd = body_node[b]
            if nd < 0:
                for r in range(3):
                    pw_out[fr, b, r] = body_t[b, r]
                    for c in range(3):
                        Rw_out[fr, b, r, c] = body_E[b, r, c]
                continue
            for r in range(3):
                acc = pw[nd, r]
                for l in range(3):
                    acc += Rw[nd, r, l] * body_t[b, l]
                pw_out[fr, b, r] = acc
                for c in range(3):
                    acc = 0.0
                    for l in range(3):
                        acc += Rw[nd, r, l] * body_E[b, l, c]
                    Rw_out[fr, b, r, c] = acc
            if use_qd:
                _motion_to_child(body_E, body_t, b, v, nd, v_out[fr], b)
                _motion_to_child(body_E, body_t, b, a, nd, a_out[fr], b)


def kinematics(model: Model, q, qd=None, *, columns=True):
    """Body poses, velocities, bias accelerations and world DOF columns (batch first).

    Returns ``(Rw (N, nb, 3, 3), pw (N, nb, 3), v, a (N, nb, 6) or None,
    Sw (N, 6, nv) or None)``; ``columns=False`` skips ``Sw``.
    """
    p = plan(model)
    N = q.shape[0]
    nb = model.n_bodies
    Rw = np.empty((N, nb, 3, 3))
    pw = np.empty((N, nb, 3))
    use_qd = qd is not None
    v = np.zeros((N, nb, 6)) if use_qd else np.zeros((1, 1, 6))
    a = np.zeros((N, nb, 6)) if use_qd else np.zeros((1, 1, 6))
    Sw = np.zeros((N, 6, model.nv)) if columns else np.zeros((1, 6, 1))
    kinematics_kernel(
        p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.nvj,
        p.body_node, p.body_E, p.body_t, _c(q), _c(qd) if use_qd else np.zeros((1, 1)),
        use_qd, columns, Rw, pw, v, a, Sw,
    )  # fmt: skip
    return Rw, pw, (v if use_qd else None), (a if use_qd else None), (Sw if columns else None)
