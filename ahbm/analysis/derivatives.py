"""Numerical time derivatives of sampled signals and marker trajectories.

All functions differentiate along one axis (time, ``axis=0`` by default) and
are vectorized over the others, so a whole marker array
``(n_frames, n_markers, 3)`` is differentiated in one call.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_choice, as_float_array, as_int, sample_rate, sample_times
from ahbm.analysis._common import check_axis
from ahbm.analysis._labelled import accepts_labelled
from ahbm.errors import DataError

__all__ = [
    "central_difference",
    "spline_derivative",
    "savgol_derivative",
    "marker_derivatives",
]


def _fd_weights(nodes: np.ndarray, x0: np.ndarray, deriv: int) -> np.ndarray:
    """Finite-difference weights for stencils `nodes` (m, k) at points `x0` (m,).

    Solves the Vandermonde system sum_j w_j (t_j - x0)^p / p! = delta_{p,deriv},
    p = 0..k-1, for each row (k is small: 3 or 4).
    """
    d = nodes - x0[:, None]
    k = nodes.shape[1]
    p = np.arange(k)
    fact = np.array([np.prod(np.arange(1, q + 1)) for q in p], dtype=float)
    a = (d[:, None, :] ** p[None, :, None]) / fact[None, :, None]  # (m, k_powers, k_nodes)
    rhs = np.zeros((nodes.shape[0], k))
    rhs[:, deriv] = 1.0
    return np.linalg.solve(a, rhs[..., None])[..., 0]


@accepts_labelled("derivative")
def central_difference(x, *, rate=None, time=None, order: int = 1, axis: int = 0):
    """First or second derivative by central differences, for uniform or non-uniform time.

    Parameters
    ----------
    x : array_like or Trial
        Samples, time along `axis`. NaN propagates only to the derivative
        samples whose stencil touches it.
        A :class:`~ahbm.io.Trial` instead gives a Trial of the derivatives of its
        points on ``trial.time``, units ``m/s`` (``rad/s``, ...; ``/s^2`` for
        order 2), labels and events kept (see :mod:`ahbm.analysis`).
    rate : float, optional
        Sample rate, Hz (uniform sampling). Give exactly one of `rate` and
        `time`.
    time : array_like, shape (n_samples,), optional
        Strictly increasing sample times, s.
    order : {1, 2}
        Derivative order.
    axis : int, optional
        Time axis.

    Returns
    -------
    ndarray
        Derivative, same shape as `x` (units of x per s or per s^2).

    Raises
    ------
    DataError
        Fewer than 3 (order 1) or 4 (order 2) samples, bad time vector.

    Notes
    -----
    Interior points use the three-point formulas for spacings
    ``h1 = t_i - t_{i-1}``, ``h2 = t_{i+1} - t_i``:

    ``x'_i = [-h2^2 x_{i-1} + (h2^2 - h1^2) x_i + h1^2 x_{i+1}] / (h1 h2 (h1 + h2))``

    ``x''_i = 2 [h2 x_{i-1} - (h1 + h2) x_i + h1 x_{i+1}] / (h1 h2 (h1 + h2))``

    (second-order accurate for uniform or smoothly varying spacing; the
    second derivative is first order on irregular grids). End points use
    one-sided stencils of 3 (first derivative) or 4 (second derivative)
    points, second-order accurate. For uniform time this equals
    :func:`numpy.gradient` with ``edge_order=2``.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 11)
    >>> float(central_difference(t**2, time=t)[5].round(12))
    1.0
    """
    arr = as_float_array(x, "x", allow_nan=True)
    ax = check_axis(arr, axis, "x")
    order = as_choice(order, "order", (1, 2))
    moved = np.moveaxis(arr, ax, 0)
    n = moved.shape[0]
    need = 3 if order == 1 else 4
    if n < need:
        raise DataError(f"Need at least {need} samples for derivative order {order}, got {n}")
    t = sample_times(n, rate=rate, time=time)
    out = np.empty_like(moved)
    dt = np.diff(t)
    if np.allclose(dt, dt[0], rtol=1e-12, atol=0.0):  # uniform: scalar spacing, fewer flops
        hh = dt[0]
        if order == 1:
            out[1:-1] = (moved[2:] - moved[:-2]) / (2.0 * hh)
        else:
            out[1:-1] = (moved[2:] - 2.0 * moved[1:-1] + moved[:-2]) / hh**2
        k = 3 if order == 1 else 4
        nodes = np.vstack([t[:k], t[-k:]])
        w = _fd_weights(nodes, np.array([t[0], t[-1]]), order)
        out[0] = np.tensordot(w[0], moved[:k], axes=(0, 0))
        out[-1] = np.tensordot(w[1], moved[-k:], axes=(0, 0))
        out[np.isnan(moved)] = np.nan  # no derivative at a missing sample
        return np.moveaxis(out, 0, ax)
    h1 = (t[1:-1] - t[:-2]).reshape((-1,) + (1,) * (moved.ndim - 1))
    h2 = (t[2:] - t[1:-1]).reshape(h1.shape)
    xm, x0, xp = moved[:-2], moved[1:-1], moved[2:]
    den = h1 * h2 * (h1 + h2)
    if order == 1:
        out[1:-1] = (-(h2**2) * xm + (h2**2 - h1**2) * x0 + h1**2 * xp) / den
        k = 3
    else:
        out[1:-1] = 2.0 * (h2 * xm - (h1 + h2) * x0 + h1 * xp) / den
        k = 4
    # one-sided ends
    nodes = np.vstack([t[:k], t[-k:]])
    w = _fd_weights(nodes, np.array([t[0], t[-1]]), order)
    out[0] = np.tensordot(w[0], moved[:k], axes=(0, 0))
    out[-1] = np.tensordot(w[1], moved[-k:], axes=(0, 0))
    return np.moveaxis(out, 0, ax)


@accepts_labelled("derivative")
def spline_derivative(x, *, rate=None, time=None, order: int = 1, degree: int = 5, axis: int = 0):
    """Derivative of the interpolating spline through the samples.

    Parameters
    ----------
    x : array_like or Trial
        Samples, time along `axis`, no NaN (fill gaps first).
        A :class:`~ahbm.io.Trial` instead gives a Trial of the derivatives of its
        points on ``trial.time``, units ``m/s`` (``rad/s``, ...; ``/s^2`` for
        order 2), labels and events kept (see :mod:`ahbm.analysis`).
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_samples,), optional
        Strictly increasing sample times, s.
    order : int
        Derivative order (0 returns the spline values, i.e. `x`).
    degree : int, optional
        Spline degree (default 5, quintic, so the second derivative is
        smooth); must exceed `order`.
    axis : int, optional
        Time axis.

    Returns
    -------
    ndarray
        Derivative at the sample times, same shape as `x`.

    Notes
    -----
    The spline interpolates every sample (not-a-knot conditions), so it does
    not smooth: filter noisy data first or use :func:`~ahbm.analysis.gcv_spline`.
    Built with :func:`scipy.interpolate.make_interp_spline` over all channels
    at once.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 21)
    >>> float(spline_derivative(t**3, time=t, order=2)[10].round(8))
    3.0
    """
    from scipy import interpolate

    arr = as_float_array(x, "x")
    ax = check_axis(arr, axis, "x")
    degree = as_int(degree, "degree", minimum=1)
    order = as_int(order, "order", minimum=0)
    if not 0 <= order < degree:
        raise DataError(f"Need 0 <= `order` < `degree` ({degree}), got order={order!r}")
    moved = np.moveaxis(arr, ax, 0)
    n = moved.shape[0]
    if n <= degree:
        raise DataError(f"Need more than {degree} samples for a degree-{degree} spline, got {n}")
    t = sample_times(n, rate=rate, time=time)
    spl = interpolate.make_interp_spline(t, moved, k=degree, axis=0)
    return np.moveaxis(spl(t, int(order)), 0, ax)


@accepts_labelled("derivative")
def savgol_derivative(
    x, *, rate=None, time=None, window: int, polyorder: int = 3, order: int = 1, axis: int = 0
):
    """Savitzky-Golay smoothing derivative for uniformly sampled data.

    Parameters
    ----------
    x : array_like or Trial
        Samples, time along `axis`, no NaN.
        A :class:`~ahbm.io.Trial` instead gives a Trial of the derivatives of its
        points on ``trial.time``, units ``m/s`` (``rad/s``, ...; ``/s^2`` for
        order 2), labels and events kept (see :mod:`ahbm.analysis`).
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_samples,), optional
        Sample times, s (must be uniform here).
    window : int
        Odd window length in samples, > `polyorder`.
    polyorder : int, optional
        Degree of the local least-squares polynomial (default 3).
    order : int, optional
        Derivative order (0 smooths only), <= `polyorder`.
    axis : int, optional
        Time axis.

    Returns
    -------
    ndarray
        Derivative, same shape as `x`.

    Notes
    -----
    Each sample gets the derivative of the polynomial of degree `polyorder`
    fitted by least squares to the `window` samples centred on it (Savitzky &
    Golay 1964); ends use a polynomial fitted to the first/last window
    (``mode="interp"`` of :func:`scipy.signal.savgol_filter`). Exact for
    polynomials of degree <= `polyorder`.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(20) / 10.0
    >>> float(savgol_derivative(t**2, rate=10.0, window=5, polyorder=2)[7].round(10))
    1.4
    """
    from scipy import signal

    arr = as_float_array(x, "x")
    ax = check_axis(arr, axis, "x")
    fs, _ = sample_rate(arr.shape[ax], rate=rate, time=time)
    window = as_int(window, "window", minimum=1)
    polyorder = as_int(polyorder, "polyorder", minimum=0)
    order = as_int(order, "order", minimum=0)
    if window % 2 == 0 or window <= polyorder:
        raise DataError(f"`window` must be odd and > polyorder ({polyorder}), got {window}")
    if not 0 <= order <= polyorder:
        raise DataError(f"`order` must be between 0 and polyorder ({polyorder}), got {order}")
    if arr.shape[ax] < window:
        raise DataError(f"Signal has {arr.shape[ax]} samples, fewer than `window`={window}")
    return signal.savgol_filter(
        arr, window, polyorder, deriv=order, delta=1.0 / fs, axis=ax, mode="interp"
    )


@accepts_labelled("derivatives")
def marker_derivatives(points, *, rate=None, time=None, method: str = "central", **options):
    """Velocity and acceleration of a whole marker array at once.

    Parameters
    ----------
    points : array_like, shape (n_frames, ..., 3)
        Marker trajectories, m; NaN where missing.
    rate : float, optional
        Frame rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_frames,), optional
        Frame times, s (non-uniform allowed for "central" and "spline").
    method : {"central", "spline", "savgol"}
        :func:`central_difference` (NaN stays local to its stencil),
        :func:`spline_derivative` (no NaN allowed) or
        :func:`savgol_derivative` (uniform rate, no NaN; pass ``window=``).
    **options
        Extra keywords for the chosen method (``degree``, ``window``,
        ``polyorder``).

    Returns
    -------
    velocity, acceleration : ndarray, same shape as `points`
        First and second derivatives along the frame axis (m/s, m/s^2); two
        Trials (units ``m/s``, ``m/s^2``, labels and events kept) when
        `points` is a :class:`~ahbm.io.Trial`.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.zeros((10, 2, 3)); p[:, :, 0] = np.arange(10)[:, None] * 0.1
    >>> v, a = marker_derivatives(p, rate=10.0)
    >>> round(float(v[5, 0, 0]), 9), bool(abs(a[5, 0, 0]) < 1e-9)
    (1.0, True)
    """
    arr = as_float_array(points, "points", allow_nan=True)
    if arr.ndim < 2 or arr.shape[-1] != 3:
        raise DataError(f"Expected `points` to have shape (n_frames, ..., 3), got {arr.shape}")
    if method == "central":
        return (
            central_difference(arr, rate=rate, time=time, order=1),
            central_difference(arr, rate=rate, time=time, order=2),
        )
    if method == "spline":
        return (
            spline_derivative(arr, rate=rate, time=time, order=1, **options),
            spline_derivative(arr, rate=rate, time=time, order=2, **options),
        )
    if method == "savgol":
        return (
            savgol_derivative(arr, rate=rate, time=time, order=1, **options),
            savgol_derivative(arr, rate=rate, time=time, order=2, **options),
        )
    raise DataError(f"Unknown `method` {method!r}; use 'central', 'spline' or 'savgol'")
