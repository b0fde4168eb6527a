"""Compiled (numba) evaluation of OpenSim's cubic splines for the custom joints (internal).

:func:`simm_spline_derivatives` evaluates a :class:`~ahbm.kinematics.functions.SimmSpline`
(or ``NaturalCubicSpline``), optionally wrapped in ``MultiplierFunction`` objects,
at a batch of points: value, first and second derivatives, in one pass over
the points. It performs the operations of ``SimmSpline._derivatives`` point by
point, in the same order (the interval of ``searchsorted``, OpenSim's binary
search at an interior knot, the end cases), so the numbers are those of the
numpy code; the kernels of the custom joints call it once per spline instead
of some thirty numpy operations on short arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import _CACHE

#: OpenSim's ROUNDOFF_ERROR, the end-point test of its splines (``_ROUNDOFF`` of
#: ahbm.kinematics.functions; a test checks they agree).
SPLINE_ROUNDOFF = 2e-13


@njit(cache=_CACHE, nogil=True)
def _interval(knots, xi, n_iter):
    """The interval index of ``_opensim_interval`` for one point."""
    n = knots.shape[0]
    lo, hi = 0, n  # searchsorted(knots, xi, side="right")
    while lo < hi:
        mid = (lo + hi) // 2
        if xi < knots[mid]:
            hi = mid
        else:
            lo = mid + 1
    k = min(max(lo - 1, 0), n - 2)
    if k > 0 and xi == knots[k]:  # an interior knot: OpenSim's binary search decides
        lo, hi, k_out = 0, n, 0
        for _ in range(n_iter):
            m = (lo + hi) // 2
            if xi < knots[m]:
                hi = m
            elif xi > knots[min(m + 1, n - 1)]:
                lo = m
            else:
                k_out = m
                break
        k = min(k_out, n - 2)
    return k


@njit(cache=_CACHE, nogil=True)
def _simm_kernel(x, y, b, c, d, scales, roundoff, n_iter, xq, v0, v1, v2):
    n = x.shape[0]
    x0, xn = x[0], x[n - 1]
    for i in range(xq.shape[0]):
        xi = xq[i]
        k = 0 if n < 3 else _interval(x, xi, n_iter)
        dx = xi - x[k]
        bk, ck, dk = b[k], c[k], d[k]
        f0 = y[k] + dx * (bk + dx * (ck + dx * dk))
        f1 = bk + dx * (2.0 * ck + 3.0 * dx * dk)
        f2 = 2.0 * ck + 6.0 * dx * dk
        # OpenSim's end cases, in the order of ``_ends``
        if abs(xi - x0) <= roundoff:
            f0, f1, f2 = y[0], b[0], 2.0 * c[0]
        if abs(xi - xn) <= roundoff:
            f0, f1, f2 = y[n - 1], b[n - 1], 2.0 * c[n - 1]
        if xi < x0:
            f0, f1, f2 = y[0] + (xi - x0) * b[0], b[0], 0.0
        if xi > xn:
            f0, f1, f2 = y[n - 1] + (xi - xn) * b[n - 1], b[n - 1], 0.0
        for s in scales:  # MultiplierFunction wrappers, innermost first
            f0, f1, f2 = s * f0, s * f1, s * f2
        v0[i], v1[i], v2[i] = f0, f1, f2


def simm_spline_derivatives(spline, scales, xq, roundoff):
    """``[f, f', f'']`` (each (N,)) of ``scales[-1] * ... * scales[0] * spline`` at `xq` (N,).

    `spline` is a SimmSpline (its ``x``, ``y`` and coefficient arrays
    ``_b``, ``_c``, ``_d``); `scales` the factors of the MultiplierFunction
    wrappers from the innermost out (empty for a bare spline).
    """
    xq = np.ascontiguousarray(xq, dtype=np.float64)
    out = [np.empty(xq.shape[0]) for _ in range(3)]
    _simm_kernel(
        spline.x, spline.y, spline._b, spline._c, spline._d,
        np.asarray(scales, dtype=np.float64), roundoff, 2 * spline.x.size.bit_length() + 2, xq,
        out[0], out[1], out[2],
    )  # fmt: skip
    return out
