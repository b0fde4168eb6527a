"""Segmented quintic Bézier curves as OpenSim's SmoothSegmentedFunction evaluates them (internal).

A curve is a chain of quintic Bézier "corner" segments, each defined by two end points,
their slopes and a curviness (OpenSim's ``SegmentedQuinticBezierToolkit``). Between its
first and last control point the curve is ``y(u)`` at the Bézier parameter ``u`` that
solves ``x(u) = x``; outside, it is the line through the end point with the end slope.
Used by :mod:`ahbm.muscles.millard_curves`; written from Millard et al. (2013) and the
description of OpenSim's toolkit, not from its code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ahbm.errors import DataError

__all__: list[str] = []

_ROOT_EPS = math.sqrt(np.finfo(float).eps)
_BINOM5 = np.array([1.0, 5.0, 10.0, 10.0, 5.0, 1.0])


def corner_points(x0, y0, dydx0, x1, y1, dydx1, curviness, what="curve"):
    """Control points (x (6,), y (6,)) of a C-shaped corner from (x0, y0) to (x1, y1).

    The end tangents meet at ``(xc, yc)``; the inner control points sit at the fraction
    `curviness` (OpenSim's ``0.1 + 0.8 c``, already scaled) from each end point towards
    it, doubled (``p1 = p2``, ``p3 = p4``).
    """
    if abs(dydx0 - dydx1) > _ROOT_EPS:
        xc = (y1 - y0 - x1 * dydx1 + x0 * dydx0) / (dydx0 - dydx1)
    else:
        xc = 0.5 * (x1 + x0)
    yc = (xc - x1) * dydx1 + y1
    a = (xc - x0) ** 2 + (yc - y0) ** 2
    b = (xc - x1) ** 2 + (yc - y1) ** 2
    c = (x1 - x0) ** 2 + (y1 - y0) ** 2
    if not (c > a and c > b):
        raise DataError(
            f"{what}: the end slopes ({dydx0:g} at ({x0:g}, {y0:g}), {dydx1:g} at "
            f"({x1:g}, {y1:g})) do not form a C-shaped corner; check the curve parameters"
        )
    xm0, ym0 = x0 + curviness * (xc - x0), y0 + curviness * (yc - y0)
    xm1, ym1 = x1 + curviness * (xc - x1), y1 + curviness * (yc - y1)
    return (
        np.array([x0, xm0, xm0, xm1, xm1, x1]),
        np.array([y0, ym0, ym0, ym1, ym1, y1]),
    )


@dataclass(frozen=True)
class BezierCurves:
    """``n`` segmented curves with the same number of segments ``S`` (one per muscle).

    ``px``, ``py``: (n, S, 6) control points; ``x0``, ``x1``, ``y0``, ``y1``,
    ``dydx0``, ``dydx1``: (n,) ends and end slopes of the extrapolation lines.
    """

    px: np.ndarray
    py: np.ndarray
    x0: np.ndarray
    x1: np.ndarray
    y0: np.ndarray
    y1: np.ndarray
    dydx0: np.ndarray
    dydx1: np.ndarray

    @classmethod
    def stack(cls, curves: list) -> BezierCurves:
        """One BezierCurves from a list of per-muscle tuples (px, py, x0, x1, y0, y1, d0, d1)."""
        cols = list(zip(*curves, strict=True))
        return cls(*(np.array(c, dtype=float) for c in cols))

    def inverse(self) -> BezierCurves:
        """The curve with x and y swapped (OpenSim's ForceVelocityInverseCurve pattern)."""
        return BezierCurves(self.py, self.px, self.y0, self.y1, self.x0, self.x1,
                            1.0 / self.dydx0, 1.0 / self.dydx1)  # fmt: skip

    def evaluate_flat(self, xf: np.ndarray, m: np.ndarray, order: int = 0) -> np.ndarray:
        """Value or derivative at xf (N,) on the curves of muscles m (N,)."""
        out = np.empty(xf.size)
        below, above = xf < self.x0[m], xf > self.x1[m]
        if order == 0:
            out[below] = self.y0[m[below]] + self.dydx0[m[below]] * (xf[below] - self.x0[m[below]])
            out[above] = self.y1[m[above]] + self.dydx1[m[above]] * (xf[above] - self.x1[m[above]])
        elif order == 1:
            out[below], out[above] = self.dydx0[m[below]], self.dydx1[m[above]]
        else:
            out[below | above] = 0.0
        inside = ~(below | above)
        if np.any(inside):
            xi, mi = xf[inside], m[inside]
            starts = self.px[mi, :, 0]  # (k, S)
            seg = np.clip(np.sum(xi[:, None] >= starts[:, 1:], axis=1), 0, starts.shape[1] - 1)
            cx, cy = self.px[mi, seg], self.py[mi, seg]  # (k, 6)
            u = solve_u(cx, xi)
            out[inside] = _y_of_u(u, cx, cy, order)
        return out

    def evaluate(self, x: np.ndarray, order: int = 0) -> np.ndarray:
        """Value (order 0) or derivative d^k y / dx^k (order 1, 2) at x (..., n)."""
        n = self.x0.size
        shape = np.broadcast_shapes(np.shape(x), (n,))
        xf = np.broadcast_to(x, shape).reshape(-1, n)
        m = np.broadcast_to(np.arange(n), xf.shape).ravel()
        out = self.evaluate_flat(xf.ravel(), m, order)
        return out.reshape(shape)


def _bernstein(u, degree):
    """(k, degree+1) Bernstein basis values at u (k,)."""
    k = np.arange(degree + 1)
    binom = np.array([math.comb(degree, i) for i in k], dtype=float)
    uu = u[:, None]
    return binom * uu**k * (1.0 - uu) ** (degree - k)


def _bezier(u, p, order):
    """d^order/du^order of the quintic Bézier with control points p (k, 6) at u (k,)."""
    d = p
    for _ in range(order):
        d = np.diff(d, axis=1)
    scale = (1.0, 5.0, 20.0, 60.0)[order]
    return scale * np.sum(d * _bernstein(u, 5 - order), axis=1)


def solve_u(cx, x, *, max_iterations=100):
    """The Bézier parameter u in [0, 1] with x(u) = x: Newton inside a shrinking bracket.

    x(u) is non-decreasing on each corner segment; a Newton step that leaves the bracket
    is replaced by bisection. Stops at |x(u) - x| <= 4 eps max(|x|, 1) (OpenSim's
    Newton stops at 100 eps).
    """
    lo, hi = np.zeros(x.size), np.ones(x.size)
    span = cx[:, 5] - cx[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(span > 0, (x - cx[:, 0]) / span, 0.5)
    u = np.clip(u, 0.0, 1.0)
    tol = 4.0 * np.finfo(float).eps * np.maximum(np.abs(x), 1.0)
    act = np.arange(x.size)
    for _ in range(max_iterations):
        if not act.size:
            break
        c, ua = cx[act], u[act]
        f = _bezier(ua, c, 0) - x[act]
        done = np.abs(f) <= tol[act]
        pos = f > 0
        hi[act] = np.where(pos, ua, hi[act])
        lo[act] = np.where(pos, lo[act], ua)
        df = _bezier(ua, c, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = ua - f / df
        ok = np.isfinite(step) & (step > lo[act]) & (step < hi[act])
        new = np.where(ok, step, 0.5 * (lo[act] + hi[act]))
        done |= hi[act] - lo[act] <= 4.0 * np.finfo(float).eps
        u[act] = np.where(done, ua, new)
        act = act[~done]
    return u


def _y_of_u(u, cx, cy, order):
    if order == 0:
        return _bezier(u, cy, 0)
    dx, dy = _bezier(u, cx, 1), _bezier(u, cy, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if order == 1:
            return dy / dx
        ddx, ddy = _bezier(u, cx, 2), _bezier(u, cy, 2)
        return (ddy * dx - dy * ddx) / dx**3
