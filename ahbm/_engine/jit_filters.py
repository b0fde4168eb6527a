"""Compiled pass of OpenSim's 3rd-order low-pass filter (internal).

:func:`iir3_pass` is one pass of ``Signal::LowpassIIR`` as
``ahbm.opensim.processing`` runs it: the first three samples copied,
then ``scipy.signal.lfilter``'s direct form II transposed recursion started
from the state those three samples give (what ``scipy.signal.lfiltic``
computes). The operations are scipy's, in its order (the state, then per
sample ``y = z0 + b0 x``, ``z_k = z_k+1 + x b_k − y a_k``, ``z_2 = x b_3 − y a_3``),
so the result is bitwise that of the numpy/scipy pass; the columns run side
by side.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ahbm._engine.jit_common import _CACHE


@njit(cache=_CACHE, nogil=True)
def iir3_pass(b, a, x):  # pragma: no cover - compiled
    """One forward pass over the rows of `x` (n, m) with ``b`` (4,), ``a`` (4,), a[0] = 1."""
    n, m = x.shape
    if n < 3:  # all samples copied (and no index below out of bounds: numba does not check)
        return x.copy()
    y = np.empty_like(x)
    b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
    a1, a2, a3 = a[1], a[2], a[3]
    z0 = np.empty(m)
    z1 = np.empty(m)
    z2 = np.empty(m)
    for j in range(m):
        y[0, j] = x[0, j]
        y[1, j] = x[1, j]
        y[2, j] = x[2, j]
        x1, x2, x3 = x[2, j], x[1, j], x[0, j]
        z0[j] = b1 * x1 + b2 * x2 + b3 * x3 - a1 * x1 - a2 * x2 - a3 * x3
        z1[j] = b2 * x1 + b3 * x2 - a2 * x1 - a3 * x2
        z2[j] = b3 * x1 - a3 * x1
    for i in range(3, n):
        for j in range(m):
            xn = x[i, j]
            yn = z0[j] + b0 * xn
            y[i, j] = yn
            z0[j] = z1[j] + xn * b1 - yn * a1
            z1[j] = z2[j] + xn * b2 - yn * a2
            z2[j] = xn * b3 - yn * a3
    return y
