"""Digital filters and smoothers for motion and force data.

Every function filters along one axis (time, ``axis=0`` by default) and is
vectorized over all other axes (channels, markers, coordinates). Missing
samples (NaN) are never silently smeared into neighbouring samples: each
function documents what it does with them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_choice,
    as_float_array,
    as_int,
    as_nonnegative_float,
    as_positive_float,
    check_not_empty,
    sample_rate,
    sample_times,
)
from ahbm.analysis._common import check_axis, nan_runs, warn_caller
from ahbm.analysis._labelled import accepts_labelled
from ahbm.errors import DataError
from ahbm.types import ResultRepr

__all__ = [
    "butter_filtfilt",
    "critically_damped_filtfilt",
    "moving_average",
    "residual_analysis",
    "ResidualAnalysis",
    "gcv_spline",
    "SplineSmoothing",
    "winter_correction",
]


def winter_correction(*, n_passes: int = 2, order: int = 2, kind: str = "butterworth") -> float:
    """Cutoff correction factor for a filter applied `n_passes` times.

    Parameters
    ----------
    n_passes : int
        Total number of passes (a forward-backward ``filtfilt`` is 2 passes).
    order : int
        Order of the filter applied in each pass (Butterworth only).
    kind : {"butterworth", "critically_damped"}
        Filter family.

    Returns
    -------
    float
        Factor ``C`` (< 1) such that designing each pass with the analog cutoff
        ``omega_c / C`` puts the -3 dB point of the cascade at ``omega_c``.

    Notes
    -----
    Butterworth: each pass has ``|H|^2 = 1 / (1 + (w/wp)^(2N))``; the cascade of
    ``n`` passes is -3 dB (``|H|^n = 1/sqrt(2)``) at ``w/wp = C`` with
    ``C = (2^(1/n) - 1)^(1/(2N))`` (Winter 2009, sec. 2.2.4.4; 0.802 for two
    passes of a second-order filter). Critically damped second-order filter
    ``H(s) = wp^2/(s + wp)^2``: ``|H| = 1/(1 + (w/wp)^2)``, so
    ``C = sqrt(2^(1/(2n)) - 1)`` (Robertson & Dowling 2003).

    Examples
    --------
    >>> round(winter_correction(n_passes=2, order=2), 3)
    0.802
    """
    n = as_int(n_passes, "n_passes", minimum=1)
    if kind == "butterworth":
        order = as_int(order, "order", minimum=1)
        return float((2.0 ** (1.0 / n) - 1.0) ** (1.0 / (2.0 * order)))
    if kind == "critically_damped":
        return float(np.sqrt(2.0 ** (1.0 / (2.0 * n)) - 1.0))
    raise DataError(f"Unknown filter `kind` {kind!r}; use 'butterworth' or 'critically_damped'")


def _warped_cutoff(cutoff: float, rate: float, factor: float) -> float:
    """Digital cutoff (Hz) whose prewarped analog frequency is the target's times `factor`."""
    omega = np.tan(np.pi * cutoff / rate) * factor
    return float(rate / np.pi * np.arctan(omega))


def _check_cutoff(cutoff, rate: float, name: str = "cutoff") -> float:
    fc = as_positive_float(cutoff, name, unit="Hz")
    if not (0 < fc < rate / 2):
        raise DataError(
            f"`{name}`={fc:g} Hz must lie strictly between 0 and the Nyquist frequency "
            f"{rate / 2:g} Hz (rate={rate:g} Hz); choose a lower cutoff or check `rate`"
        )
    return fc


def _frequency_pair(value, name: str) -> tuple[float, float]:
    """(low, high) in Hz from a pair of finite numbers, or DataError naming `name`."""
    pair = as_float_array(value, name)
    if pair.shape != (2,):
        raise DataError(f"Expected `{name}` to be a pair (low, high) in Hz, got {value!r}")
    return float(pair[0]), float(pair[1])


def _apply_along_axis_nan(func, x: np.ndarray, axis: int, nan_policy: str, name: str, min_len):
    """Apply the 1-D-along-axis-0 function `func` with a NaN policy.

    ``func(arr2d)`` filters a (n, k) array along axis 0. With
    ``nan_policy="raise"`` NaN raises; with ``"segments"`` every finite run of
    every channel is filtered separately (runs shorter than ``min_len`` stay
    NaN and are reported in a warning).
    """
    if nan_policy not in ("raise", "segments"):
        raise DataError(f"Unknown `nan_policy` {nan_policy!r}; use 'raise' or 'segments'")
    moved = np.moveaxis(x, axis, 0)
    shape = moved.shape
    flat = moved.reshape(shape[0], -1)
    finite = np.isfinite(flat)
    if finite.all():
        out = func(flat)
        return np.moveaxis(out.reshape(shape), 0, axis)
    if nan_policy == "raise":
        bad = np.argwhere(~np.isfinite(x))[0]
        raise DataError(
            f"`{name}` contains NaN/inf (first at index {tuple(int(i) for i in bad)}); fill the "
            "gaps first (ahbm.analysis.fill_gaps) or pass nan_policy='segments' to filter each "
            "finite stretch separately"
        )
    out = np.full_like(flat, np.nan)
    dropped = 0
    for j in range(flat.shape[1]):
        for a, b in nan_runs(finite[:, j]):
            if b - a < min_len:
                dropped += b - a
                continue
            out[a:b, j] = func(flat[a:b, j : j + 1])[:, 0]
    n_nan = int((~finite).sum())
    msg = f"`{name}`: {n_nan} NaN samples kept as NaN; each finite stretch was filtered separately"
    if dropped:
        msg += f"; {dropped} samples in stretches shorter than {min_len} samples were set to NaN"
    warn_caller(msg)
    return np.moveaxis(out.reshape(shape), 0, axis)


@accepts_labelled("signal")
def butter_filtfilt(
    x,
    *,
    rate=None,
    time=None,
    cutoff,
    order: int = 2,
    btype: str = "low",
    axis: int = 0,
    correct: bool = True,
    padtype: str | None = "odd",
    padlen: int | None = None,
    nan_policy: str = "raise",
):
    """Zero-lag (forward-backward) Butterworth filter with Winter's cutoff correction.

    Parameters
    ----------
    x : array_like or Trial, shape (..., n_samples, ...)
        Signal(s); time along `axis`.
        A :class:`~ahbm.io.Trial` instead gives a Trial: its points (markers and
        model outputs) processed on ``trial.time``, labels, units, events and
        the rest kept (see :mod:`ahbm.analysis`; give neither `rate` nor `time`).
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_samples,), optional
        Sample times, s (must be uniform here).
    cutoff : float or (float, float)
        -3 dB frequency of the whole forward-backward filter, Hz. A pair
        ``(low, high)`` for ``btype="band"``.
    order : int, optional
        Order of each pass (default 2; the zero-lag result then has the
        roll-off of a 4th-order filter, as Winter's recursive filter).
    btype : {"low", "high", "band"}
        Filter type. A band-pass is a corrected high-pass at ``low`` followed
        by a corrected low-pass at ``high``.
    axis : int, optional
        Time axis (default 0).
    correct : bool, optional
        Apply the cutoff correction for two passes (default True). Without
        it the cascade is -6 dB (not -3 dB) at `cutoff`.
    padtype, padlen : optional
        Edge padding, passed to :func:`scipy.signal.sosfiltfilt`; the default
        odd extension (a point reflection about the end sample) keeps the
        value and slope continuous at the ends and is what reduces end
        transients; ``padtype=None`` disables padding.
    nan_policy : {"raise", "segments"}
        ``"raise"`` (default) rejects NaN; ``"segments"`` filters each finite
        stretch of each channel separately, keeps NaN where the input is NaN
        (too-short stretches become NaN) and warns with the counts.

    Returns
    -------
    ndarray
        Filtered signal, same shape as `x`, float64.

    Raises
    ------
    DataError
        Bad rate or cutoff (not below Nyquist), NaN with ``nan_policy="raise"``,
        signal too short for the padding.

    Notes
    -----
    Each pass is a digital Butterworth filter obtained by the bilinear
    transform. With correction, the prewarped analog cutoff of each pass is
    ``tan(pi fc / fs) / C`` (low-pass) or ``tan(pi fc / fs) * C`` (high-pass)
    with ``C = (sqrt(2) - 1)^(1/(2N))`` (:func:`winter_correction`), so the
    forward-backward magnitude is exactly ``1/sqrt(2)`` at ``fc``
    (Winter 2009, *Biomechanics and Motor Control of Human Movement*,
    4th ed., sec. 2.2.4.4). Forward-backward filtering has zero phase.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(0, 2, 0.01)
    >>> y = butter_filtfilt(np.sin(2 * np.pi * t), rate=100.0, cutoff=6.0)
    >>> y.shape
    (200,)
    """
    from scipy import signal

    arr = as_float_array(x, "x", allow_nan=True)
    ax = check_axis(arr, axis, "x")
    check_not_empty(arr, "x", axis=ax)
    fs, _ = sample_rate(arr.shape[ax], rate=rate, time=time)
    order = as_int(order, "order", minimum=1)
    padtype = as_choice(padtype, "padtype", ("odd", "even", "constant", None))
    factor = winter_correction(n_passes=2, order=order) if correct else 1.0
    if btype == "band":
        try:
            low, high = cutoff
        except (TypeError, ValueError) as err:
            raise DataError(
                f"btype='band' needs `cutoff` as a pair (low, high) in Hz, got {cutoff!r}"
            ) from err
        low = _check_cutoff(low, fs, "cutoff[0]")
        high = _check_cutoff(high, fs, "cutoff[1]")
        if not low < high:
            raise DataError(f"Band-pass needs cutoff[0] < cutoff[1], got {cutoff!r}")
        sos = np.vstack(
            [
                signal.butter(
                    order, _warped_cutoff(low, fs, factor), "highpass", fs=fs, output="sos"
                ),
                signal.butter(
                    order, _warped_cutoff(high, fs, 1 / factor), "lowpass", fs=fs, output="sos"
                ),
            ]
        )
    elif btype in ("low", "high"):
        fc = _check_cutoff(cutoff, fs)
        f_design = _warped_cutoff(fc, fs, 1 / factor if btype == "low" else factor)
        sos = signal.butter(order, f_design, btype + "pass", fs=fs, output="sos")
    else:
        raise DataError(f"Unknown `btype` {btype!r}; use 'low', 'high' or 'band'")

    default_pad = 3 * (2 * len(sos) + 1 - min((sos[:, 2] == 0).sum(), (sos[:, 5] == 0).sum()))
    pl = default_pad if padlen is None else as_int(padlen, "padlen", minimum=0)
    if padtype is None:
        pl = 0

    def run(a2d):
        if a2d.shape[0] <= pl:
            raise DataError(
                f"Signal has {a2d.shape[0]} samples along the time axis; the filter padding needs "
                f"more than {pl}. Use a longer signal, a smaller `padlen`, or padtype=None"
            )
        return signal.sosfiltfilt(sos, a2d, axis=0, padtype=padtype, padlen=pl)

    return _apply_along_axis_nan(run, arr, ax, nan_policy, "x", pl + 1)


@accepts_labelled("signal")
def critically_damped_filtfilt(
    x,
    *,
    rate=None,
    time=None,
    cutoff,
    n_passes: int = 2,
    axis: int = 0,
    nan_policy: str = "raise",
):
    """Zero-lag critically damped low-pass filter (no overshoot).

    Parameters
    ----------
    x : array_like or Trial
        Signal(s), time along `axis`.
        A :class:`~ahbm.io.Trial` instead gives a Trial: its points (markers and
        model outputs) processed on ``trial.time``, labels, units, events and
        the rest kept (see :mod:`ahbm.analysis`; give neither `rate` nor `time`).
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_samples,), optional
        Sample times, s (must be uniform here).
    cutoff : float
        -3 dB frequency of the whole cascade, Hz.
    n_passes : int, optional
        Total number of passes, even (default 2 = one forward-backward pair).
    axis : int, optional
        Time axis.
    nan_policy : {"raise", "segments"}
        As in :func:`butter_filtfilt`.

    Returns
    -------
    ndarray
        Filtered signal, same shape as `x`.

    Notes
    -----
    Each pass is the second-order critically damped filter
    ``H(s) = wp^2 / (s + wp)^2`` discretized by the bilinear transform with
    ``wp = 2 fs tan(pi fc / fs) / C`` and ``C = sqrt(2^(1/(2n)) - 1)`` for
    ``n`` passes, so the cascade is exactly -3 dB at `cutoff`. Its step
    response has no overshoot, which suits impacts (Robertson & Dowling 2003,
    J. Electromyogr. Kinesiol. 13:569-573).

    Examples
    --------
    >>> import numpy as np
    >>> float(critically_damped_filtfilt(np.ones(50), rate=100.0, cutoff=10.0)[25].round(6))
    1.0
    """
    from scipy import signal

    arr = as_float_array(x, "x", allow_nan=True)
    ax = check_axis(arr, axis, "x")
    check_not_empty(arr, "x", axis=ax)
    fs, _ = sample_rate(arr.shape[ax], rate=rate, time=time)
    fc = _check_cutoff(cutoff, fs)
    n = as_int(n_passes, "n_passes", minimum=2)
    if n < 2 or n % 2:
        raise DataError(f"`n_passes` must be an even number >= 2, got {n_passes!r}")
    c = winter_correction(n_passes=n, kind="critically_damped")
    wp = 2 * fs * np.tan(np.pi * fc / fs) / c
    z, p, k = signal.bilinear_zpk([], [-wp, -wp], wp**2, fs)
    sos = signal.zpk2sos(z, p, k)
    pl = 9

    def run(a2d):
        if a2d.shape[0] <= pl:
            raise DataError(
                f"Signal has {a2d.shape[0]} samples along the time axis; need more than {pl}"
            )
        out = a2d
        for _ in range(n // 2):
            out = signal.sosfiltfilt(sos, out, axis=0, padtype="odd", padlen=pl)
        return out

    return _apply_along_axis_nan(run, arr, ax, nan_policy, "x", pl + 1)


@accepts_labelled("signal")
def moving_average(x, window: int, *, axis: int = 0, keep_nan: bool = True):
    """Centred moving average that ignores missing samples.

    Parameters
    ----------
    x : array_like or Trial
        Signal(s), time along `axis`; NaN marks missing samples.
        A :class:`~ahbm.io.Trial` instead gives a Trial: its points (markers and
        model outputs) processed on ``trial.time``, labels, units, events and
        the rest kept (see :mod:`ahbm.analysis`; give neither `rate` nor `time`).
    window : int
        Odd window length in samples (>= 1).
    axis : int, optional
        Time axis.
    keep_nan : bool, optional
        If True (default) samples that were NaN stay NaN; if False they get
        the mean of the valid samples in their window (a simple gap filler).

    Returns
    -------
    ndarray
        Same shape as `x`. Each sample is the mean of the finite samples in
        the centred window; near the ends the window is truncated (no
        padding). A window without any finite sample gives NaN.

    Notes
    -----
    ``y[i] = sum_{|j-i|<=h, x_j finite} x_j / #{...}`` with ``h = (window-1)/2``:
    the ratio of two running window sums (values with NaN set to 0, and the
    valid-sample indicator), each O(n) for any window
    (:func:`scipy.ndimage.uniform_filter1d` with zero padding).

    Examples
    --------
    >>> moving_average([1.0, 2.0, 3.0, 4.0, 5.0], 3)
    array([1.5, 2. , 3. , 4. , 4.5])
    """
    from scipy import ndimage

    arr = as_float_array(x, "x", allow_nan=True)
    ax = check_axis(arr, axis, "x")
    w = as_int(window, "window", minimum=1)
    if w < 1 or w % 2 == 0:
        raise DataError(f"`window` must be an odd number of samples >= 1, got {window!r}")
    moved = np.moveaxis(arr, ax, 0)
    finite = np.isfinite(moved)
    vals = np.where(finite, moved, 0.0)
    # windowed sums of the values and of the valid-sample counts (zeros outside the
    # signal, so the window is truncated at the ends); their ratio is the mean
    s = ndimage.uniform_filter1d(vals, w, axis=0, mode="constant", cval=0.0)
    c = ndimage.uniform_filter1d(finite.astype(np.float64), w, axis=0, mode="constant", cval=0.0)
    c = np.where(c > 0.5 / w, c, 0.0)  # counts are multiples of 1/w; remove round-off
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(c > 0, s / np.where(c > 0, c, 1.0), np.nan)
    if keep_nan:
        out = np.where(finite, out, np.nan)
    return np.moveaxis(out, 0, ax)


@dataclass(frozen=True, repr=False)
class ResidualAnalysis(ResultRepr):
    """Result of :func:`residual_analysis` (trailing axes are the channel axes of `x`).

    Attributes
    ----------
    cutoffs : ndarray, shape (n_cutoffs,)
        Cutoff frequencies tried, Hz.
    residuals : ndarray, shape (n_cutoffs, ...)
        RMS difference between the raw and the filtered signal at each cutoff
        (the curve Winter plots).
    noise_fraction : ndarray, shape (n_cutoffs,)
        Fraction of white-noise power the filter removes at each cutoff,
        ``phi(f)``; the noise part of the residual curve is
        ``noise_rms * sqrt(phi(f))`` (plot it next to `residuals`).
    noise_rms : ndarray, shape (...)
        Estimated RMS of the (white) noise.
    cutoff : ndarray, shape (...)
        Suggested cutoff: lowest tried frequency (interpolated) at which the
        residual falls to `noise_rms`; NaN if it never does.
    fit_range : (float, float)
        Frequency band used to estimate the noise, Hz.
    """

    cutoffs: np.ndarray
    residuals: np.ndarray
    noise_fraction: np.ndarray
    noise_rms: np.ndarray
    cutoff: np.ndarray
    fit_range: tuple[float, float]

    def __repr__(self) -> str:
        cut = np.asarray(self.cutoff, dtype=float)
        if cut.size == 1:
            suggested = f"{float(cut.reshape(-1)[0]):.3g} Hz"
        elif cut.size and np.isfinite(cut).any():
            suggested = (
                f"{np.nanmin(cut):.3g}..{np.nanmax(cut):.3g} Hz over {cut.size} channels "
                f"(median {np.nanmedian(cut):.3g})"
            )
        else:
            suggested = f"none over {cut.size} channels"
        return f"{ResultRepr.__repr__(self)[:-1]}; suggested cutoff {suggested})"


def residual_analysis(
    x, *, rate=None, time=None, cutoffs=None, order: int = 2, fit_range=None, axis: int = 0
) -> ResidualAnalysis:
    """Winter's residual analysis: choose a low-pass cutoff from the data.

    Parameters
    ----------
    x : array_like
        Raw signal(s), time along `axis`, no NaN.
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_samples,), optional
        Sample times, s (must be uniform here).
    cutoffs : array_like, optional
        Frequencies to try, Hz (default: 60 values from 0.01 to 0.9 of Nyquist).
    order : int, optional
        Butterworth order per pass (see :func:`butter_filtfilt`).
    fit_range : (float, float), optional
        Band where the residual is dominated by noise (no signal content
        above its lower edge), used to estimate the noise; default
        ``(0.5, 0.8)`` times the Nyquist frequency.
    axis : int, optional
        Time axis.

    Returns
    -------
    ResidualAnalysis
        Residual curve, noise estimate and suggested cutoff per channel.

    Notes
    -----
    ``R(f) = sqrt(mean((x - x_f)^2))`` for each cutoff ``f`` (Winter 2009,
    *Biomechanics and Motor Control of Human Movement*, sec. 3.4.4.3). Above
    the signal band the residual is noise only: ``R^2(f) = s^2 phi(f)`` with
    ``phi(f) = (2/fs) integral_0^{fs/2} (1 - G(v; f))^2 dv`` and ``G`` the
    zero-phase gain of the filter. Winter approximates ``phi`` by the straight
    line ``1 - f/f_N`` and reads the noise from the intercept of a line fitted
    to ``R``; here ``phi`` is computed from the actual filter response and
    ``s^2`` is the least-squares fit of ``R^2 = s^2 phi`` over `fit_range`,
    which removes the bias of the straight-line fit. The suggested cutoff is
    where ``R(f)`` first drops to ``s``, the balance point of Winter's method.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(0, 5, 0.01)
    >>> x = np.sin(2 * np.pi * t) + 0.01 * rng.standard_normal(t.size)
    >>> res = residual_analysis(x, rate=100.0)
    >>> bool(0.008 < res.noise_rms < 0.012)
    True
    """
    from scipy import signal

    arr = as_float_array(x, "x")
    ax = check_axis(arr, axis, "x")
    check_not_empty(arr, "x", axis=ax)
    fs, _ = sample_rate(arr.shape[ax], rate=rate, time=time)
    order = as_int(order, "order", minimum=1)
    fn = fs / 2
    if cutoffs is None:
        cut = np.linspace(0.01 * fn, 0.9 * fn, 60)
    else:
        cut = np.sort(as_float_array(cutoffs, "cutoffs").ravel())
        if cut.size < 3:
            raise DataError("`cutoffs` needs at least 3 frequencies")
        for c in cut:
            _check_cutoff(c, fs, "cutoffs")
    if fit_range is None:
        lo, hi = 0.5 * fn, 0.8 * fn
    else:
        lo, hi = _frequency_pair(fit_range, "fit_range")
    sel = (cut >= lo) & (cut <= hi)
    if sel.sum() < 2:
        raise DataError(
            f"`fit_range` ({lo:g}, {hi:g}) Hz contains fewer than 2 of the tried cutoffs; "
            "widen it or pass more `cutoffs`"
        )
    moved = np.moveaxis(arr, ax, 0)
    ms = np.empty((cut.size,) + moved.shape[1:])
    phi = np.empty(cut.size)
    factor = winter_correction(n_passes=2, order=order)
    for i, f in enumerate(cut):
        y = butter_filtfilt(moved, rate=fs, cutoff=f, order=order, axis=0)
        ms[i] = np.mean((moved - y) ** 2, axis=0)
        sos = signal.butter(order, _warped_cutoff(f, fs, 1 / factor), fs=fs, output="sos")
        _, h = signal.sosfreqz(sos, worN=4096, fs=fs)
        phi[i] = np.mean((1.0 - np.abs(h) ** 2) ** 2)
    ps = phi[sel]
    var = np.tensordot(ps, ms[sel], axes=(0, 0)) / np.dot(ps, ps)
    noise = np.sqrt(np.clip(var, 0.0, None))
    rms = np.sqrt(ms)
    below = rms <= noise[None]
    first = np.argmax(below, axis=0)
    has = below.any(axis=0)
    i1 = np.clip(first, 1, cut.size - 1)
    r0 = np.take_along_axis(rms, (i1 - 1)[None], 0)[0]
    r1 = np.take_along_axis(rms, i1[None], 0)[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(r0 != r1, (r0 - noise) / (r0 - r1), 0.0)
    fopt = cut[i1 - 1] + np.clip(w, 0, 1) * (cut[i1] - cut[i1 - 1])
    fopt = np.where(first == 0, cut[0], fopt)
    fopt = np.where(has, fopt, np.nan)
    return ResidualAnalysis(cut, rms, phi, noise, fopt, (lo, hi))


@dataclass(frozen=True, repr=False)
class SplineSmoothing(ResultRepr):
    """Result of :func:`gcv_spline`.

    Attributes
    ----------
    value, first, second : ndarray
        Smoothed signal and its first and second time derivatives, same shape
        as the input (units per s and per s^2); NaN outside the span of the
        finite input samples of each channel (no extrapolation).
    lam : ndarray
        Smoothing parameter used for each channel (shape of the non-time
        axes of the input).
    dof : ndarray
        Equivalent degrees of freedom ``tr A`` of each channel's fit (between
        2, a straight line, and the number of samples, interpolation).
    n_missing : int
        Number of NaN input samples that were skipped by the fit (and are
        estimated by the spline where they lie inside the data span).
    """

    value: np.ndarray
    first: np.ndarray
    second: np.ndarray
    lam: np.ndarray
    dof: np.ndarray
    n_missing: int


def gcv_spline(x, *, rate=None, time=None, lam=None, axis: int = 0) -> SplineSmoothing:
    """Cubic smoothing spline with the smoothing chosen by generalized cross-validation.

    Parameters
    ----------
    x : array_like
        Signal(s), time along `axis`. NaN samples are skipped in the fit.
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n_samples,), optional
        Strictly increasing sample times, s (non-uniform allowed).
    lam : float, optional
        Fixed smoothing parameter (weight of the integrated squared second
        derivative, units of x^2 s^3 per x^2); default None chooses it per
        channel by GCV.
    axis : int, optional
        Time axis.

    Returns
    -------
    SplineSmoothing
        Value, first and second derivatives, the smoothing parameter and
        degrees of freedom per channel, and the number of skipped samples.

    Notes
    -----
    Minimizes ``sum_i (x_i - s(t_i))^2 + lam * integral s''(t)^2 dt`` over
    natural cubic splines with knots at the samples (Reinsch 1967). With
    ``lam=None`` the weight minimizes the GCV score
    ``n RSS / (n - tr A)^2`` (Craven & Wahba 1979), as in Woltring's GCVSPL
    (Woltring 1986, Adv. Eng. Software 8:104-113; here the cubic case,
    m = 2): ``tr A`` is computed exactly from the band of the inverse of the
    banded Reinsch matrix (Hutchinson & de Hoog 1985), once for all channels
    with the same missing samples, on a logarithmic grid of ``lam`` refined
    by a parabola per channel. Channels with identical NaN patterns (the
    three coordinates of a marker) are solved together.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 101)
    >>> res = gcv_spline(np.sin(2 * np.pi * t), time=t)
    >>> float(abs(res.first[50] + 2 * np.pi)) < 0.05
    True
    """
    from scipy import interpolate

    from ahbm.analysis import _smoothing

    arr = as_float_array(x, "x", allow_nan=True)
    ax = check_axis(arr, axis, "x")
    check_not_empty(arr, "x", axis=ax, minimum=5)
    moved = np.moveaxis(arr, ax, 0)
    n = moved.shape[0]
    t = sample_times(n, rate=rate, time=time)
    if lam is not None:
        lam = as_nonnegative_float(lam, "lam")
    flat = moved.reshape(n, -1)
    finite = np.isfinite(flat)
    out = np.full((3,) + flat.shape, np.nan)
    lams = np.full(flat.shape[1], np.nan)
    dofs = np.full(flat.shape[1], np.nan)
    patterns, inverse = np.unique(finite.T, axis=0, return_inverse=True)
    for p_idx, ok in enumerate(patterns):
        cols = np.flatnonzero(inverse.ravel() == p_idx)
        if ok.sum() < 5:
            raise DataError(
                f"Channel {int(cols[0])} of `x` has {int(ok.sum())} finite samples; a GCV "
                "spline needs >= 5"
            )
        tj = t[ok]
        yj = flat[np.ix_(ok, cols)]
        if lam is None:
            lj, dof = _smoothing.gcv_lambda(tj, yj)
        else:
            lj = np.full(cols.size, lam)
            dof = np.full(cols.size, _smoothing.trace(tj, [lam])[0])
        g = np.empty_like(yj)
        for val in np.unique(lj):
            sel = lj == val
            g[:, sel] = _smoothing.fit(tj, yj[:, sel], val)[0]
        spl = interpolate.CubicSpline(tj, g, axis=0, bc_type="natural")
        inside = (t >= tj[0]) & (t <= tj[-1])
        ti = t[inside]
        for d in range(3):
            out[d][np.ix_(inside, cols)] = spl(ti, d)
        lams[cols] = lj
        dofs[cols] = dof
    res = [np.moveaxis(o.reshape(moved.shape), 0, ax) for o in out]
    rest = moved.shape[1:]
    return SplineSmoothing(
        res[0], res[1], res[2], lams.reshape(rest), dofs.reshape(rest), int((~finite).sum())
    )
