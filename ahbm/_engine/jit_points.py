"""Point kinematics of one body in one state, compiled (numba; internal).

The formulas of point kinematics are written here once. They serve the lean
constrained right-hand side (:func:`ahbm._engine.jit_constrained.constraint_rows_kernel`,
one state) and, through the frame loops below, the batch-last functions of
:mod:`ahbm._engine.state` (points, point accelerations and point Jacobians
of whole trials). Inputs are those of the kinematics kernel: world rotation
``R`` (3, 3) and origin ``o`` (3,) of a body, its spatial velocity ``vb`` and
acceleration ``ab`` (6,) ``[ω; v_O]`` in body coordinates, the world DOF
columns ``Sw`` (6, nv) (linear part at the world origin). Vectors are passed
and returned as scalar triples so that the single-state kernel allocates
nothing.
"""

from __future__ import annotations

from numba import njit

from ahbm._engine.jit_common import _CACHE

__all__ = [
    "rotate", "world_point", "body_point_velocity", "body_point_acceleration",
    "point_column", "points_world_loop", "point_velocity_loop", "point_acceleration_loop",
    "points_jacobian_loop",
]  # fmt: skip


@njit(cache=_CACHE, nogil=True)
def rotate(R, x0, x1, x2):
    """``R x`` for R (3, 3)."""
    return (
        R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2,
        R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2,
        R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2,
    )


@njit(cache=_CACHE, nogil=True)
def world_point(R, o, x0, x1, x2):
    """World position ``o + R r`` of the body point r."""
    y0, y1, y2 = rotate(R, x0, x1, x2)
    return o[0] + y0, o[1] + y1, o[2] + y2


@njit(cache=_CACHE, nogil=True)
def body_point_velocity(vb, x0, x1, x2):
    """Velocity ``v_O + ω × r`` of the body point r, body coordinates."""
    w0, w1, w2 = vb[0], vb[1], vb[2]
    return (
        vb[3] + (w1 * x2 - w2 * x1),
        vb[4] + (w2 * x0 - w0 * x2),
        vb[5] + (w0 * x1 - w1 * x0),
    )


@njit(cache=_CACHE, nogil=True)
def body_point_acceleration(vb, ab, x0, x1, x2):
    """Acceleration ``a_O + α × r + ω × (v_O + ω × r)`` of the body point r, body coordinates.

    With the bias acceleration ``ab`` (``q̈ = 0``) this is the ``J̇ q̇`` term
    (Featherstone 2008, §2.11); no gravity.
    """
    w0, w1, w2 = vb[0], vb[1], vb[2]
    al0, al1, al2 = ab[0], ab[1], ab[2]
    u0, u1, u2 = body_point_velocity(vb, x0, x1, x2)
    return (
        ab[3] + (al1 * x2 - al2 * x1) + (w1 * u2 - w2 * u1),
        ab[4] + (al2 * x0 - al0 * x2) + (w2 * u0 - w0 * u2),
        ab[5] + (al0 * x1 - al1 * x0) + (w0 * u1 - w1 * u0),
    )


@njit(cache=_CACHE, nogil=True)
def point_column(Sw, c, p0, p1, p2):
    """Column c of the Jacobian of the world point p: ``v_c + ω_c × p``."""
    return (
        Sw[3, c] + (Sw[1, c] * p2 - Sw[2, c] * p1),
        Sw[4, c] + (Sw[2, c] * p0 - Sw[0, c] * p2),
        Sw[5, c] + (Sw[0, c] * p1 - Sw[1, c] * p0),
    )


# ----------------------------------------------------------------------------
# loops over frames for the batch-last functions of ahbm._engine.state
# ----------------------------------------------------------------------------


@njit(cache=_CACHE, nogil=True)
def points_world_loop(Rw, pw, b, r, out):
    """out (M, 3, N) <- world points of body b for body points r (M, 3, N or 1).

    ``Rw`` (N, nb, 3, 3), ``pw`` (N, nb, 3).
    """
    N = out.shape[2]
    one = r.shape[2] == 1
    for m in range(r.shape[0]):
        for n in range(N):
            k = 0 if one else n
            p = world_point(Rw[n, b], pw[n, b], r[m, 0, k], r[m, 1, k], r[m, 2, k])
            out[m, 0, n], out[m, 1, n], out[m, 2, n] = p


@njit(cache=_CACHE, nogil=True)
def point_velocity_loop(Rw, v, b, r, out):
    """out (3, N) <- world velocity of the body point r (3, N or 1) of body b; ``v`` (N, nb, 6)."""
    N = out.shape[1]
    one = r.shape[1] == 1
    for n in range(N):
        k = 0 if one else n
        l0, l1, l2 = body_point_velocity(v[n, b], r[0, k], r[1, k], r[2, k])
        out[0, n], out[1, n], out[2, n] = rotate(Rw[n, b], l0, l1, l2)


@njit(cache=_CACHE, nogil=True)
def point_acceleration_loop(Rw, v, a, b, ka, r, out):
    """out (3, N) <- world acceleration of the body point r (3, N or 1) of body b.

    ``v`` (N, nb, 6) body velocities; ``a`` (N, k, 6) body accelerations, row
    ``ka`` for body b.
    """
    N = out.shape[1]
    one = r.shape[1] == 1
    for n in range(N):
        k = 0 if one else n
        l0, l1, l2 = body_point_acceleration(v[n, b], a[n, ka], r[0, k], r[1, k], r[2, k])
        out[0, n], out[1, n], out[2, n] = rotate(Rw[n, b], l0, l1, l2)


@njit(cache=_CACHE, nogil=True)
def points_jacobian_loop(Sw, dofs, p, J):
    """J (M, 3, nv, N) <- the columns ``dofs`` of the Jacobians of world points p (M, 3, N).

    ``Sw`` (N, 6, nv); the other columns of J are left alone.
    """
    N = p.shape[2]
    for m in range(p.shape[0]):
        for n in range(N):
            S = Sw[n]
            for c in dofs:
                j = point_column(S, c, p[m, 0, n], p[m, 1, n], p[m, 2, n])
                J[m, 0, c, n], J[m, 1, c, n], J[m, 2, c, n] = j
