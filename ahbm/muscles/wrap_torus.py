"""Wrapping over a torus, as OpenSim's WrapTorus does it (internal to wrap_path_segment).

A torus (OpenSim's ``WrapTorus``) is a tube of radius ``inner_radius`` around
the circle of radius ``outer_radius`` in the wrap frame's xy plane, centred at
its origin; it guides a path that passes through its hole (a tendon through a
retinaculum). OpenSim wraps a segment ``p`` → ``s`` over it in three steps:

1. The point of the segment's line closest to the centre circle, found twice
   by a root search of the derivative of the squared distance to the circle
   along the line (from ``p`` toward ``s`` and from ``s`` toward ``p``, each
   starting at its end point; OpenSim uses MINPACK's ``lmdif`` with loose
   tolerances, ahbm Newton's method to round-off). The closer of the two
   wins; under a quadrant, only those on the quadrant's side count (none:
   no wrap). Its projection on the circle is the circle point ``c``.
2. A cylinder of radius ``inner_radius`` and length 10 km whose axis is the
   circle's tangent at ``c``: its frame has x toward the torus's centre
   (``-c / |c|``), y = -z of the torus, z = x × y; quadrant ``"+x"``, so the
   path wraps over the inner side of the tube.
3. OpenSim's cylinder wrap of the segment (seen from that frame), its tangent
   points and helix brought back to the torus frame. Where the cylinder does
   not wrap, the torus does not either.

The result was checked against OpenSim 4.6's WrapTorus (lengths and tangent
points, tests/peers/test_opensim_wrap_moment_arms.py).
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

#: OpenSim's WrapTorus cylinder length (CYL_LENGTH)
_CYL_LENGTH = 10000.0


def _line_root(p1, n, radius, iterations=100):
    """The parameter u along p1 + u n where the squared distance to the circle is
    stationary (OpenSim's calcCircleResids = 0), by Newton's method from u = 0."""
    c2 = 2.0 * np.einsum("...i,...i->...", p1, n)
    c3 = p1[..., 0] * n[..., 0] + p1[..., 1] * n[..., 1]
    c4 = n[..., 0] ** 2 + n[..., 1] ** 2
    c5 = p1[..., 0] ** 2 + p1[..., 1] ** 2
    u = np.zeros(p1.shape[:-1])
    todo = np.ones(u.shape, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(iterations):
            g = u * u * c4 + 2.0 * c3 * u + c5
            sg = np.sqrt(g)
            lin = c4 * u + c3
            f = c2 + 2.0 * u - 4.0 * radius * lin / sg
            df = 2.0 - 4.0 * radius * (c4 * g - lin * lin) / (g * sg)
            step = np.where(todo & (df != 0), -f / df, 0.0)
            u = u + step
            todo &= np.abs(step) > 1e-15 * (1.0 + np.abs(u))
            if not todo.any():
                break
    return u


def torus_wrap(dims, p1, p2, axis, sign, single_wrap, cylinder):
    """OpenSim's WrapTorus::wrapLine on batches of wrap-frame segments (..., 3).

    Returns ``(active, mandatory, t1, t2, arc)`` as the cylinder and sphere wraps do
    (``cylinder`` is :func:`ahbm.muscles.wrapping._cylinder`).
    """
    inner, outer = float(dims[0]), float(dims[1])
    d = p2 - p1
    with np.errstate(invalid="ignore", divide="ignore"):
        n = d / np.linalg.norm(d, axis=-1, keepdims=True)
    u1 = _line_root(p1, n, outer)
    u2 = _line_root(p2, -n, outer)
    a1 = p1 + u1[..., None] * n
    a2 = p2 - u2[..., None] * n

    def distance(a):
        rho = np.hypot(a[..., 0], a[..., 1])
        return np.sqrt(np.einsum("...i,...i->...", a, a) + outer**2 - 2.0 * outer * rho)

    with np.errstate(invalid="ignore"):
        first = distance(a1) < distance(a2)
    go = np.ones(first.shape, dtype=bool)
    if sign != 0:
        s1 = np.where(a1[..., axis] >= 0, 1, -1) == sign
        s2 = np.where(a2[..., axis] >= 0, 1, -1) == sign
        first = np.where(s1 & s2, first, s1)
        go = s1 | s2
    a = np.where(first[..., None], a1, a2)
    rho = np.hypot(a[..., 0], a[..., 1])
    c = np.zeros_like(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        c[..., 0] = a[..., 0] * outer / rho
        c[..., 1] = a[..., 1] * outer / rho
        x = -c / np.linalg.norm(c, axis=-1, keepdims=True)
    y = np.broadcast_to(np.array([0.0, 0.0, -1.0]), x.shape)
    R = np.stack([x, y, np.cross(x, y)], axis=-2)  # rows: the cylinder's axes in the torus frame
    q1 = np.einsum("...ij,...j->...i", R, p1 - c)
    q2 = np.einsum("...ij,...j->...i", R, p2 - c)
    active, _, r1, r2, arc = cylinder(inner, _CYL_LENGTH, q1, q2, 0, 1, single_wrap)
    active = np.asarray(active) & go & np.isfinite(rho) & (rho > 0)
    t1 = np.einsum("...ji,...j->...i", R, r1) + c
    t2 = np.einsum("...ji,...j->...i", R, r2) + c
    return active, np.zeros_like(active), t1, t2, arc
