"""OpenSim's processing of coordinates for inverse dynamics, reproduced step by step.

OpenSim's Inverse Dynamics tool (``InverseDynamicsTool::run``, OpenSim 4.x)
does not differentiate the coordinates it reads directly. When the setup
gives ``lowpass_cutoff_frequency_for_coordinates >= 0`` it

1. **pads** the coordinates with ``n // 2`` samples at each end
   (``Storage::pad``, ``Signal::Pad``): the signal mirrored about its end
   sample and negated (``2 x[0] − x[k]``), which keeps value and slope
   continuous; the time column is padded the same way;
2. **resamples** when the time steps are not uniform to round-off
   (``Storage::lowpassIIR``: when ``(t_last − t_first)/(n − 1) − min Δt``
   exceeds machine epsilon, e.g. times written with 8 decimals): the padded
   data are interpolated by a natural quintic spline at
   ``t_first, t_first + Δt_min, ...`` (accumulated sums, up to the last
   time);
3. **low-passes** each column with a 3rd-order Butterworth filter run forward
   and then backward (``Signal::LowpassIIR``): bilinear transform with
   prewarping, ``ω_a = tan(π f_c Δt)``; each pass starts from its first three
   input samples taken as outputs (a cut-off at or above half the sampling rate
   is lowered to 0.49 of the rate);
4. converts degrees to radians, fits a **natural quintic interpolating
   spline** to every column (``GCVSplineSet(5, ...)``: Woltring's GCVSPL with
   zero error variance, i.e. interpolation with vanishing 3rd and 4th
   derivatives at the ends) and evaluates its value, first and second
   derivatives at the (padded, resampled) storage times inside the time range.

Without filtering (negative cut-off) only step 4 runs on the data as read.
:func:`opensim_coordinate_processing` runs the whole chain;
:func:`opensim_pad`, :func:`opensim_lowpass_iir` and :func:`natural_quintic_spline`
are the single steps.

References
----------
OpenSim 4.x source: ``InverseDynamicsTool.cpp``, ``Storage.cpp`` (``pad``,
``lowpassIIR``, ``resample``, ``findIndex``), ``Signal.cpp`` (``Pad``,
``LowpassIIR``), ``GCVSplineSet.cpp``.
Woltring, H. J. (1986). A Fortran package for generalized, cross-validatory
spline smoothing and differentiation. Adv. Eng. Software 8(2), 104-113.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ahbm._engine import backend
from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.types import ResultRepr

if TYPE_CHECKING:  # scipy.interpolate is imported by the function that uses it
    from scipy.interpolate import BSpline

__all__ = [
    "ProcessedCoordinates",
    "natural_quintic_spline",
    "opensim_coordinate_processing",
    "opensim_lowpass_iir",
    "opensim_pad",
]

_EPS = np.finfo(float).eps

#: Work up to which a short command that has not loaded numba runs the numpy codings
#: (see :mod:`ahbm._engine.backend`). Loading numba, its kernels and scipy.linalg costs
#: such a command about 0.55 s, so up to ~0.1 s of numpy still wins. Measured: a filter
#: pass costs ~5 µs a sample (the columns side by side) and ~6 ns a value, at most
#: ~60 ms a pass here (subject01's 301 padded samples × 10 columns: 1.6 ms);
_IIR_NUMPY_SAMPLES = 10_000
_IIR_NUMPY_VALUES = 1_500_000
#: the quintic spline's banded LU ~13 µs a row and ~20 ns a value, at most ~95 ms here
#: (305 rows: 4 ms); larger systems go to ``scipy.linalg.solve_banded``.
_BANDED_NUMPY_ROWS = 5_000
_BANDED_NUMPY_VALUES = 1_500_000


def _columns(values, name: str, n_min: int = 1) -> np.ndarray:
    x = as_float_array(values, name)
    if x.ndim == 0 or x.shape[0] < n_min:
        raise DataError(
            f"Expected `{name}` to have at least {n_min} samples along axis 0, got shape {x.shape}"
        )
    return x


def opensim_pad(values, n_pad: int) -> np.ndarray:
    """Pad samples at both ends as OpenSim's ``Signal::Pad`` does.

    Parameters
    ----------
    values : array_like, shape (n, ...)
        Samples along axis 0 (a time column is padded the same way).
    n_pad : int
        Samples to prepend and to append, ``0 <= n_pad < n``.

    Returns
    -------
    ndarray, shape (n + 2 n_pad, ...)
        ``2 x[0] − x[n_pad − i]`` before, the data, ``2 x[n−1] − x[n−2−i]`` after:
        the signal reflected about each end sample and negated (point
        symmetry), which continues value and slope.

    Raises
    ------
    DataError
        `n_pad` negative or not smaller than the number of samples.

    Examples
    --------
    >>> opensim_pad([0.0, 1.0, 4.0, 9.0], 2).tolist()
    [-4.0, -1.0, 0.0, 1.0, 4.0, 9.0, 14.0, 17.0]
    """
    x = _columns(values, "values")
    n = x.shape[0]
    n_pad = int(n_pad)
    if n_pad < 0 or (n_pad > 0 and n_pad >= n):
        raise DataError(
            f"`n_pad` must be in [0, {n - 1}] for {n} samples (OpenSim pads with n // 2), "
            f"got {n_pad}"
        )
    if n_pad == 0:
        return x.copy()
    before = 2.0 * x[0] - x[n_pad:0:-1]
    after = 2.0 * x[-1] - x[::-1][1 : n_pad + 1]
    return np.concatenate([before, x, after], axis=0)


def _iir_coefficients(dt: float, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """OpenSim's 3rd-order Butterworth coefficients (numerator, denominator)."""
    wa = np.tan(2.0 * np.pi * cutoff * dt / 2.0)
    wa2, wa3 = wa * wa, wa * wa * wa
    den = (wa + 1.0) * (wa * wa + wa + 1.0)
    num = np.array([wa3, 3 * wa3, 3 * wa3, wa3]) / den
    a = np.array(
        [
            1.0,
            (3 * wa3 + 2 * wa2 - 2 * wa - 3) / den,
            (3 * wa3 - 2 * wa2 - 2 * wa + 3) / den,
            (wa - 1.0) * (wa2 - wa + 1.0) / den,
        ]
    )
    return num, a


def _iir_pass(b, a, x):
    """One pass: y[0:3] = x[0:3], then the recursion from sample 3 (columns along axis 1).

    The numpy/scipy statement of the pass (``scipy.signal.lfilter``), the
    reference of the two codings :func:`opensim_lowpass_iir` runs
    (:func:`_iir3_pass`).
    """
    y = np.empty_like(x)
    y[:3] = x[:3]
    # state of the transposed direct form after samples 0..2 with outputs = inputs
    # (what scipy.signal.lfiltic gives, for all columns at once)
    x1, x2, x3 = x[2], x[1], x[0]
    zi = np.stack(
        [
            b[1] * x1 + b[2] * x2 + b[3] * x3 - a[1] * x1 - a[2] * x2 - a[3] * x3,
            b[2] * x1 + b[3] * x2 - a[2] * x1 - a[3] * x2,
            b[3] * x1 - a[3] * x1,
        ]
    )
    from scipy import signal

    y[3:] = signal.lfilter(b, a, x[3:], axis=0, zi=zi)[0]
    return y


def _iir3_pass_numpy(b, a, x: np.ndarray) -> np.ndarray:
    """:func:`ahbm._engine.jit_filters.iir3_pass` in numpy: bitwise its result.

    A loop over the samples of `x` (n, m), the columns side by side, with the
    kernel's operations in its order (the state from the first three samples,
    then per sample ``y = z0 + b0 x``, ``z_k = z_k+1 + x b_k − y a_k``,
    ``z_2 = x b_3 − y a_3``).
    """
    n = x.shape[0]
    if n < 3:
        return x.copy()
    y = np.empty_like(x)
    b0, b1, b2, b3 = (float(v) for v in b[:4])
    a1, a2, a3 = (float(v) for v in a[1:4])
    y[:3] = x[:3]
    x1, x2, x3 = x[2], x[1], x[0]
    z0 = b1 * x1 + b2 * x2 + b3 * x3 - a1 * x1 - a2 * x2 - a3 * x3
    z1 = b2 * x1 + b3 * x2 - a2 * x1 - a3 * x2
    z2 = b3 * x1 - a3 * x1
    for i in range(3, n):
        xn = x[i]
        yn = z0 + b0 * xn
        y[i] = yn
        z0 = z1 + xn * b1 - yn * a1
        z1 = z2 + xn * b2 - yn * a2
        z2 = xn * b3 - yn * a3
    return y


def _iir3_pass(b, a, x: np.ndarray) -> np.ndarray:
    """One filter pass over the rows of `x` (n, m), C-ordered: compiled or numpy (same bits)."""
    n, m = x.shape
    if backend.use_compiled(n <= _IIR_NUMPY_SAMPLES and n * m <= _IIR_NUMPY_VALUES):
        from ahbm._engine.jit_filters import iir3_pass

        return iir3_pass(b, a, x)
    return _iir3_pass_numpy(b, a, x)


def opensim_lowpass_iir(values, *, dt: float, cutoff: float) -> np.ndarray:
    """OpenSim's low-pass filter: 3rd-order Butterworth, forward then backward.

    Parameters
    ----------
    values : array_like, shape (n, ...)
        Uniformly sampled signal(s) along axis 0, ``n >= 4``.
    dt : float
        Sample interval, s.
    cutoff : float
        Cut-off frequency, Hz (> 0). At or above half the sampling rate it is
        lowered to ``0.49 / dt`` as OpenSim does.

    Returns
    -------
    ndarray, shape (n, ...)

    Raises
    ------
    DataError
        Fewer than 4 samples, non-positive `dt` or `cutoff`, non-finite values.

    Notes
    -----
    ``Signal::LowpassIIR``: with ``ω_a = tan(π f_c Δt)`` and
    ``D = (ω_a + 1)(ω_a² + ω_a + 1)``, ``y_i = Σ_k b_k x_{i−k} − Σ_k a_k y_{i−k}``
    with ``b = ω_a³ (1, 3, 3, 1) / D`` and ``a_1 = (3ω_a³ + 2ω_a² − 2ω_a − 3)/D``,
    ``a_2 = (3ω_a³ − 2ω_a² − 2ω_a + 3)/D``, ``a_3 = (ω_a − 1)(ω_a² − ω_a + 1)/D``
    — the bilinear-transform Butterworth design of
    ``scipy.signal.butter(3, f_c, fs=1/Δt)``. Unlike ``scipy.signal.filtfilt``
    each pass starts with ``y_0..2 = x_0..2`` and no padding of its own (OpenSim
    pads beforehand, :func:`opensim_pad`). The effective cut-off of the two
    passes is lower than `cutoff` (gain 1/2 there).

    Examples
    --------
    >>> t = np.arange(200) / 100.0
    >>> y = opensim_lowpass_iir(np.sin(2 * np.pi * t) + 0.1 * np.sin(2 * np.pi * 30 * t),
    ...                         dt=0.01, cutoff=6.0)
    >>> bool(np.abs(y - np.sin(2 * np.pi * t))[20:-20].max() < 0.02)
    True
    """
    x = _columns(values, "values", n_min=4)
    dt = float(dt)
    cutoff = float(cutoff)
    if not dt > 0 or not np.isfinite(dt):
        raise DataError(f"`dt` must be a positive sample interval (s), got {dt}")
    if not cutoff > 0 or not np.isfinite(cutoff):
        raise DataError(f"`cutoff` must be a positive frequency (Hz), got {cutoff}")
    if cutoff >= 0.5 / dt:
        cutoff = 0.49 / dt
    shape = x.shape
    x2 = x.reshape(shape[0], -1)
    b, a = _iir_coefficients(dt, cutoff)
    # _iir_pass compiled or in numpy (scipy's operations in its order: bitwise equal, tested)
    y = _iir3_pass(b, a, np.ascontiguousarray(x2, dtype=np.float64))
    y = _iir3_pass(b, a, np.ascontiguousarray(y[::-1]))[::-1]
    return np.ascontiguousarray(y).reshape(shape)


def natural_quintic_spline(time, values) -> BSpline:
    """Natural quintic spline through the samples (OpenSim's ``GCVSpline`` of degree 5).

    Parameters
    ----------
    time : array_like, shape (n,)
        Strictly increasing, ``n >= 6``.
    values : array_like, shape (n, ...)

    Returns
    -------
    scipy.interpolate.BSpline
        Degree 5, knots at the samples, 3rd and 4th derivatives zero at both
        ends; ``spline(t, nu)`` gives derivative ``nu``.

    Notes
    -----
    OpenSim's ``GCVSplineSet(5, storage)`` calls Woltring's GCVSPL with zero
    error variance: the interpolating natural spline of order 2m = 6, which
    minimizes ``∫ (f''')² dt`` among interpolants (same values to round-off;
    checked against OpenSim in ``tests/peers/test_opensim_tools.py``).

    Examples
    --------
    >>> t = np.linspace(0, 1, 11)
    >>> s = natural_quintic_spline(t, t**2)
    >>> float(s(0.5, 1).round(6))
    1.0
    """
    t = as_float_array(time, "time")
    y = as_float_array(values, "values")
    if t.ndim != 1 or t.shape[0] < 6:
        raise DataError(f"`time` must be 1-D with at least 6 samples, got shape {t.shape}")
    if y.shape[0] != t.shape[0]:
        raise DataError(
            f"`values` has {y.shape[0]} samples along axis 0 but `time` has {t.shape[0]}"
        )
    if np.any(np.diff(t) <= 0):
        raise DataError("`time` must be strictly increasing")
    from scipy import interpolate

    zero = np.zeros(y.shape[1:])
    bc = [(3, zero), (4, zero)]
    return interpolate.make_interp_spline(t, y, k=5, bc_type=(bc, bc), axis=0)


_K = 5  # degree of the natural quintic spline


def _basis(knots: np.ndarray, x: np.ndarray, ell: np.ndarray, nu: int) -> np.ndarray:
    """Derivative `nu` of the ``k + 1`` B-splines of degree 5 not zero at `x` (p,), (p, 6).

    `ell` (p,) the knot interval of each point (``knots[ell] <= x < knots[ell + 1]``);
    column ``a`` is the B-spline ``ell - 5 + a``. De Boor's recurrence, in the
    order of scipy's ``_deBoor_D``: degree ``5 - nu`` by the Cox-de Boor
    recurrence, then `nu` differentiation steps.
    """
    p = x.shape[0]
    h = np.zeros((p, _K + 1))
    h[:, 0] = 1.0
    for j in range(1, _K + 1):
        hh = h[:, :j].copy()
        h[:, 0] = 0.0
        for n in range(1, j + 1):
            xb = knots[ell + n]
            xa = knots[ell + n - j]
            span = xb - xa
            ok = span != 0.0
            safe = np.where(ok, span, 1.0)
            if j <= _K - nu:
                w = np.where(ok, hh[:, n - 1] / safe, 0.0)
                h[:, n - 1] += w * (xb - x)
                h[:, n] = w * (x - xa)
            else:
                w = np.where(ok, j * hh[:, n - 1] / safe, 0.0)
                h[:, n - 1] -= w
                h[:, n] = w
    return h


def _interval(knots: np.ndarray, x: np.ndarray, n_coef: int) -> np.ndarray:
    """The knot interval of each point: ``knots[ell] <= x < knots[ell + 1]``, clipped
    to the spline's first and last intervals (points outside extrapolate)."""
    ell = np.searchsorted(knots, x, side="right") - 1
    return np.clip(ell, _K, n_coef - 1)


def _solve_banded_numpy(lower: int, upper: int, r, c, v, rhs: np.ndarray):
    """``solve_banded((lower, upper), ab, rhs)`` in numpy: LAPACK's ``gbsv`` steps, or None.

    The matrix (n, n) has the entries `v` at rows `r` and columns `c` (no
    pair twice); `rhs` is (n, m). The reference ``dgbtf2`` factorization (the
    unblocked LU with partial pivoting that ``dgbtrf`` runs for bandwidths below
    its block size: pivot the first largest magnitude of the column, multipliers
    scaled by the pivot's reciprocal, rank-1 update of the band) and the
    ``dgbtrs`` substitutions (row exchanges and column updates with ``L``, run
    in the factorization's loop: the same operations on the right-hand sides,
    then ``dtbsv``'s column-oriented back substitution with ``U``), the
    right-hand sides side by side. None for a zero pivot (a singular matrix: the caller
    lets ``solve_banded`` raise). The same operations in the same order as the
    reference LAPACK; the OpenBLAS of scipy's wheels fuses the multiply-adds of
    the rank-1 updates (``dger``; measured: the first entry that differs is
    that rounding), so the solutions agree with scipy's to round-off (tested:
    within 1e-12 of the largest coefficient, ~5e-14 measured), not bit for bit.

    Storage: row ``i`` keeps its columns ``i - lower`` to ``i + lower + upper``
    (the band with the fill-in of the row exchanges) in ``width`` consecutive
    values, so entry ``(i, j)`` is ``flat[lower + i (width - 1) + j]``; the
    strided view ``A`` addresses the band as a dense (n, n) matrix (its entries
    outside the band alias others and are never touched).
    """
    n = rhs.shape[0]
    kl, kv = lower, lower + upper
    width = kl + kv + 1
    flat = np.zeros(n * width)
    flat[kl + r * (width - 1) + c] = v
    item = flat.itemsize
    A = as_strided(flat[kl:], shape=(n, n), strides=((width - 1) * item, item), writeable=True)
    x = np.array(rhs, dtype=float, order="C")  # (a copy: rows exchanged in place)
    absolute, argmax = np.abs, np.argmax
    ju = 0
    for j in range(n):  # dgbtf2, and dgbtrs's L x = P b (column j of L is final here)
        km = min(kl, n - 1 - j)
        p = j + int(argmax(absolute(A[j : j + km + 1, j])))
        if A[p, j] == 0.0:
            return None
        ju = max(ju, min(p + upper, n - 1))
        if p != j:
            row = A[j, j : ju + 1].copy()
            A[j, j : ju + 1] = A[p, j : ju + 1]
            A[p, j : ju + 1] = row
            row = x[j].copy()
            x[j] = x[p]
            x[p] = row
        if km > 0:
            col = A[j + 1 : j + km + 1, j]
            col *= 1.0 / A[j, j]
            multipliers = col[:, None]
            if ju > j:
                A[j + 1 : j + km + 1, j + 1 : ju + 1] -= multipliers * A[j, j + 1 : ju + 1]
            x[j + 1 : j + km + 1] -= multipliers * x[j]
    for j in range(n - 1, -1, -1):  # dtbsv: U x = y, column by column
        xj = x[j]
        xj /= A[j, j]
        lo = max(0, j - kv)
        if lo < j:
            x[lo:j] -= A[lo:j, j][:, None] * xj
    return x


def _quintic_fit(time: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knots (n + 10,) and B-spline coefficients (n + 4, m) of the natural quintic spline.

    The spline of ``scipy.interpolate.make_interp_spline(time, values, k=5,
    bc_type=(bc, bc))`` with ``bc = [(3, 0), (4, 0)]`` (the same knots, the same
    collocation rows: 3rd and 4th derivatives zero at each end, the values at
    the samples), solved by a banded LU with partial pivoting (LAPACK's
    ``gbsv`` through ``scipy.linalg.solve_banded``, as scipy solves it):
    equal to scipy's spline to round-off (tested), without importing
    ``scipy.interpolate`` (with ``scipy.optimize``, 0.3 s of a command's start).
    A small system in a short command that has not loaded numba (see
    :mod:`ahbm._engine.backend`) is solved by the same LU steps in numpy
    (:func:`_solve_banded_numpy`), without importing ``scipy.linalg``.
    """
    x = time
    n = x.shape[0]
    knots = np.concatenate([np.full(_K, x[0]), x, np.full(_K, x[-1])])
    n_coef = n + 4
    ends = np.array([x[0], x[-1]])
    ell_ends = _interval(knots, ends, n_coef)
    ell = _interval(knots, x, n_coef)
    rows = [
        (np.array([0]), ell_ends[:1], _basis(knots, ends[:1], ell_ends[:1], 3)),
        (np.array([1]), ell_ends[:1], _basis(knots, ends[:1], ell_ends[:1], 4)),
        (2 + np.arange(n), ell, _basis(knots, x, ell, 0)),
        (np.array([n + 2]), ell_ends[1:], _basis(knots, ends[1:], ell_ends[1:], 3)),
        (np.array([n + 3]), ell_ends[1:], _basis(knots, ends[1:], ell_ends[1:], 4)),
    ]
    r = np.concatenate([np.repeat(i, _K + 1) for i, _, _ in rows])
    c = np.concatenate([(e[:, None] - _K + np.arange(_K + 1)).ravel() for _, e, _ in rows])
    v = np.concatenate([b.ravel() for _, _, b in rows])
    lower, upper = int(np.max(r - c)), int(np.max(c - r))
    rhs = np.zeros((n_coef,) + values.shape[1:])
    rhs[2 : n + 2] = values
    n_rhs = int(np.prod(values.shape[1:], dtype=np.int64))
    small = n_coef <= _BANDED_NUMPY_ROWS and n_coef * n_rhs <= _BANDED_NUMPY_VALUES
    if not backend.use_compiled(small):
        coef = _solve_banded_numpy(lower, upper, r, c, v, rhs.reshape(n_coef, n_rhs))
        if coef is not None:
            return knots, coef.reshape(rhs.shape)
    from scipy.linalg import solve_banded  # (loaded anyway by numba's kernels)

    ab = np.zeros((lower + upper + 1, n_coef))
    np.add.at(ab, (upper + r - c, c), v)
    coef = solve_banded((lower, upper), ab, rhs, check_finite=False)
    return knots, coef


def _quintic_values(knots: np.ndarray, coef: np.ndarray, x: np.ndarray, nu: int) -> np.ndarray:
    """Derivative `nu` of the spline of :func:`_quintic_fit` at `x` (p,): (p, m)."""
    ell = _interval(knots, x, coef.shape[0])
    h = _basis(knots, x, ell, nu)
    idx = ell[:, None] - _K + np.arange(_K + 1)
    return np.einsum("pa,pa...->p...", h, coef[idx])


@dataclass(frozen=True, repr=False)
class ProcessedCoordinates(ResultRepr):
    """Coordinates as OpenSim's ID tool uses them (output of the processing).

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        Times of the frames inside the time range, s (for filtered data: the
        padded, possibly resampled storage times, as OpenSim reports them).
    q, qd, qdd : ndarray, shape (n_frames, n_columns)
        Values and first and second time derivatives of the spline, in the
        units of the input (rad after conversion of degrees by the caller).
    cutoff : float
        Cut-off used (Hz); negative: no filtering.
    resampled : bool
        True when non-uniform times made OpenSim's processing resample.
    """

    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    cutoff: float
    resampled: bool


def _resample_grid(start: float, stop: float, dt: float) -> np.ndarray:
    """GCVSplineSet::constructStorage's times: ``for (x = min; x <= max; x += dt)``.

    The running sum is ``np.cumsum`` (sequential additions, the loop's
    roundings); the loop itself runs when the sum would not pass `stop`.
    """
    span = (stop - start) / dt if dt > 0 else np.inf
    if 0 <= span < 1e8:
        count = int(span) + 3
        steps = np.full(count, dt)
        steps[0] = start
        x = np.cumsum(steps)
        if x[-1] > stop and np.all(x[1:] > x[:-1]):
            return x[: int(np.searchsorted(x, stop, side="right"))]
    grid = [start]
    x = start
    while True:
        x += dt
        if x > stop:
            break
        grid.append(x)
    return np.array(grid)


def _find_index(t: np.ndarray, value: float) -> int:
    """OpenSim's ``Storage::findIndex``: last index with ``t[i] <= value`` (0 if none)."""
    return max(int(np.searchsorted(t, value, side="right")) - 1, 0)


def opensim_coordinate_processing(
    time, values, *, cutoff: float, time_range=None
) -> ProcessedCoordinates:
    """Pad, resample, low-pass and spline-differentiate coordinates as OpenSim's ID tool.

    Parameters
    ----------
    time : array_like, shape (n,)
        Sample times of the coordinates file, s, strictly increasing.
    values : array_like, shape (n, n_columns)
        Coordinates (rad or m; degrees give degrees back).
    cutoff : float
        ``lowpass_cutoff_frequency_for_coordinates`` (Hz); negative: no padding
        and no filtering (the spline still interpolates and differentiates).
    time_range : tuple of float, optional
        ``(start, end)`` in s; frames are those of the processed storage from
        the last time ``<= max(start, first time)`` to the last time
        ``<= min(end, last time)``. Default: the span of `time` (OpenSim would
        also report padded frames when its time range is infinite).

    Returns
    -------
    ProcessedCoordinates
        ``time``, ``q``, ``qd``, ``qdd`` (n_frames, n_columns), ``cutoff``,
        ``resampled``.

    Raises
    ------
    DataError
        Non-finite values, fewer than 6 samples, times not increasing, a time
        range outside the data.

    Notes
    -----
    See the module docstring for the four steps and their OpenSim sources.

    Examples
    --------
    >>> t = np.arange(121) / 60.0
    >>> q = np.sin(2 * np.pi * 0.5 * t)[:, None]
    >>> out = opensim_coordinate_processing(t, q, cutoff=6.0, time_range=(0.5, 1.5))
    >>> out.time[[0, -1]].round(6).tolist(), out.q.shape
    ([0.5, 1.5], (61, 1))
    >>> bool(np.allclose(out.qd[:, 0], np.pi * np.cos(np.pi * out.time), atol=0.02))
    True
    """
    t = as_float_array(time, "time")
    y = as_float_array(values, "values")
    if y.ndim == 1:
        y = y[:, None]
    if t.ndim != 1 or y.ndim != 2 or y.shape[0] != t.shape[0]:
        raise DataError(
            f"Expected `time` (n,) and `values` (n, n_columns), got {t.shape} and {y.shape}"
        )
    n = t.shape[0]
    if n < 6:
        raise DataError(f"at least 6 samples are needed for the quintic spline, got {n}")
    if np.any(np.diff(t) <= 0):
        raise DataError("`time` must be strictly increasing")
    first, last = float(t[0]), float(t[-1])
    cutoff = float(cutoff)
    if cutoff == 0 or not np.isfinite(cutoff):
        raise DataError(
            f"`cutoff` must be a positive frequency (Hz), or negative for no filtering; "
            f"got {cutoff}"
        )
    resampled = False
    if cutoff >= 0:
        n_pad = n // 2
        tp = opensim_pad(t, n_pad)
        yp = opensim_pad(y, n_pad)
        dtmin = float(np.min(np.diff(tp)))
        avg = (tp[-1] - tp[0]) / (tp.shape[0] - 1)
        if avg - dtmin > _EPS:
            resampled = True
            knots, coef = _quintic_fit(tp, yp)  # natural_quintic_spline(tp, yp), its values
            tp = _resample_grid(float(tp[0]), float(tp[-1]), dtmin)
            yp = _quintic_values(knots, coef, tp, 0)
        yp = opensim_lowpass_iir(yp, dt=dtmin, cutoff=cutoff)
        t_proc, y_proc = tp, yp
    else:
        t_proc, y_proc = t, y
    if time_range is None:
        start, end = first, last
    else:
        try:
            start, end = (float(v) for v in time_range)
        except (TypeError, ValueError) as err:
            raise DataError("`time_range` must be a pair (start, end) in s") from err
        if end < start:
            raise DataError(f"`time_range` ends ({end}) before it starts ({start})")
        if end < first or start > last:
            raise DataError(
                f"`time_range` ({start}, {end}) does not overlap the coordinates "
                f"({first}, {last}) s"
            )
    start = max(start, float(t_proc[0]))
    end = min(end, float(t_proc[-1]))
    i0, i1 = _find_index(t_proc, start), _find_index(t_proc, end)
    times = t_proc[i0 : i1 + 1]
    knots, coef = _quintic_fit(t_proc, y_proc)  # natural_quintic_spline's, bitwise
    return ProcessedCoordinates(
        time=times,
        q=_quintic_values(knots, coef, times, 0),
        qd=_quintic_values(knots, coef, times, 1),
        qdd=_quintic_values(knots, coef, times, 2),
        cutoff=cutoff,
        resampled=resampled,
    )
