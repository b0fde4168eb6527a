"""Principal-component reduction of curves: gait cycles as a few scores.

A set of time-normalized curves (``(n_curves, n_points)`` knee angles, or
``(n_curves, n_variables, n_points)`` for several variables of one cycle,
e.g. the 9 x 51 kinematic curves of the Gait Deviation Index) is a matrix
``X`` of ``n_curves`` rows once each curve is flattened. Its singular value
decomposition ``X - mean = U S V^T`` gives the principal components (rows of
``V^T``: orthonormal curves, the "gait features" of Schwartz & Rozumalski
2008), the scores ``U S`` of each curve on them, and the variance each
explains (``S^2 / (n - 1)``). Keeping the first ``k`` components reduces a
curve to ``k`` numbers, and :meth:`CurvePCA.reconstruct` turns scores back
into curves.

:func:`curve_pca` does this with numpy (no extra dependency), vectorized over
the curves; :mod:`ahbm.analysis.classify` fits a scikit-learn classifier on
the scores. ``center=False`` decomposes the curves as they are (the mean
curve is then mostly the first component), as the Gait Deviation Index does.

References
----------
Deluzio, K. J. & Astephen, J. L. (2007). Biomechanical features of gait
waveform data associated with knee osteoarthritis: an application of
principal component analysis. Gait Posture 25(1), 86-93.
Schwartz, M. H. & Rozumalski, A. (2008). The gait deviation index: a new
comprehensive index of gait pathology. Gait Posture 28(3), 351-357.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.types import ResultRepr

__all__ = ["CurvePCA", "curve_pca"]


def check_curves(curves, name: str, *, min_curves: int = 1) -> np.ndarray:
    """`curves` as float64 ``(n_curves, ...)``; DataError naming the first curve with NaN."""
    arr = as_float_array(curves, name, allow_nan=True)
    if arr.ndim < 2:
        raise DataError(
            f"Expected `{name}` with shape (n_curves, n_points) or (n_curves, n_variables, "
            f"n_points), got {arr.shape}"
        )
    if arr.shape[0] < min_curves:
        raise DataError(f"`{name}` needs at least {min_curves} curve(s), got {arr.shape[0]}")
    if arr[0].size == 0:
        raise DataError(f"`{name}` has empty curves (shape {arr.shape})")
    bad = ~np.isfinite(arr.reshape(arr.shape[0], -1))
    if bad.any():
        i = int(np.flatnonzero(bad.any(axis=1))[0])
        where = np.unravel_index(int(np.flatnonzero(bad[i])[0]), arr.shape[1:])
        raise DataError(
            f"`{name}`: curve {i} has NaN or inf (first at index {tuple(int(w) for w in where)}; "
            f"{int(bad.any(axis=1).sum())} curve(s) affected); fill the gaps or drop those curves"
        )
    return arr


@dataclass(frozen=True, repr=False)
class CurvePCA(ResultRepr):
    """Principal components of a set of curves (output of :func:`curve_pca`).

    Attributes
    ----------
    mean : ndarray, shape curve_shape
        The mean curve that was subtracted (zeros with ``center=False``).
    components : ndarray, shape (n_components,) + curve_shape
        The principal components, orthonormal once flattened, in decreasing
        order of singular value; each one's largest entry (in magnitude) is
        positive.
    singular_values : ndarray, shape (n_components,)
    explained_variance : ndarray, shape (n_components,)
        ``singular_values**2 / (n_curves - 1)``, in the curves' units squared.
    explained_variance_ratio : ndarray, shape (n_components,)
        Fraction of the total sum of squares (about the mean; about zero with
        ``center=False``) that each component accounts for.
    scores : ndarray, shape (n_curves, n_components)
        The scores of the curves that were decomposed.
    centered : bool
        Whether the mean was subtracted.
    """

    mean: np.ndarray
    components: np.ndarray
    singular_values: np.ndarray
    explained_variance: np.ndarray
    explained_variance_ratio: np.ndarray
    scores: np.ndarray
    centered: bool = True

    @property
    def n_components(self) -> int:
        """Number of components kept."""
        return int(np.shape(self.components)[0])

    @property
    def curve_shape(self) -> tuple:
        """Shape of one curve."""
        return tuple(np.shape(self.mean))

    def transform(self, curves) -> np.ndarray:
        """Scores of curves on the components.

        Parameters
        ----------
        curves : array_like, shape (..., \\*curve_shape)

        Returns
        -------
        ndarray, shape (..., n_components)
        """
        shape = self.curve_shape
        arr = as_float_array(curves, "curves")
        if arr.shape[arr.ndim - len(shape) :] != shape:
            raise DataError(
                f"Expected `curves` with trailing shape {shape} (the decomposed curves'), "
                f"got {arr.shape}"
            )
        lead = arr.shape[: arr.ndim - len(shape)]
        flat = arr.reshape(*lead, -1) - np.ravel(self.mean)
        return flat @ self.components.reshape(self.n_components, -1).T

    def reconstruct(self, scores) -> np.ndarray:
        """Curves from scores: ``mean + scores @ components``.

        Parameters
        ----------
        scores : array_like, shape (..., k)
            ``k <= n_components``: the first `k` components are used.

        Returns
        -------
        ndarray, shape (...,) + curve_shape
        """
        s = as_float_array(scores, "scores")
        if s.ndim == 0 or s.shape[-1] > self.n_components:
            raise DataError(
                f"Expected `scores` with at most {self.n_components} values on the last axis, "
                f"got shape {s.shape}"
            )
        k = s.shape[-1]
        flat = s @ self.components[:k].reshape(k, -1) + np.ravel(self.mean)
        return flat.reshape(*s.shape[:-1], *self.curve_shape)


def curve_pca(curves, *, n_components=None, center: bool = True) -> CurvePCA:
    """Principal components of curves by singular value decomposition.

    Parameters
    ----------
    curves : array_like, shape (n_curves, ...)
        One curve per row: ``(n_curves, n_points)``, or ``(n_curves,
        n_variables, n_points)`` and more axes, flattened for the
        decomposition. No NaN (the error names the first curve with one).
    n_components : int or float, optional
        Components to keep: a whole number (at most ``min(n_curves,
        curve size)``), or a fraction in (0, 1): the fewest components whose
        explained ratios add up to at least it. Default: all.
    center : bool
        Subtract the mean curve first (principal component analysis, as
        ``sklearn.decomposition.PCA``). With False the curves are decomposed
        as they are (the Gait Deviation Index's gait features).

    Returns
    -------
    CurvePCA

    Raises
    ------
    DataError
        Fewer than 2 curves, NaN, or a bad `n_components`.

    Notes
    -----
    ``X = U S V^T`` (numpy's thin SVD) of the flattened, centred curves; the
    components are the rows of ``V^T`` and the scores ``U S``, so that
    ``X = scores @ components`` exactly when every component is kept. Each
    component's sign is chosen so that its largest entry in magnitude is
    positive (scikit-learn chooses signs by another rule: compare up to sign).

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0.0, 1.0, 51)
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=(20, 1))
    >>> curves = np.sin(2 * np.pi * t) + a * np.cos(2 * np.pi * t)
    >>> p = curve_pca(curves, n_components=2)
    >>> p.explained_variance_ratio.round(6).tolist()
    [1.0, 0.0]
    >>> bool(np.allclose(p.reconstruct(p.scores[:, :1]), curves))
    True
    """
    arr = check_curves(curves, "curves", min_curves=2)
    n = arr.shape[0]
    flat = arr.reshape(n, -1)
    mean = flat.mean(axis=0) if center else np.zeros(flat.shape[1])
    x = flat - mean
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    total = float(np.sum(x * x))
    ratio = s**2 / total if total > 0 else np.zeros_like(s)
    k = _n_kept(n_components, s.size, ratio)
    u, s, vt = u[:, :k], s[:k], vt[:k]
    big = np.argmax(np.abs(vt), axis=1)
    sign = np.sign(vt[np.arange(k), big])
    sign[sign == 0] = 1.0
    vt = vt * sign[:, None]
    u = u * sign
    return CurvePCA(
        mean=mean.reshape(arr.shape[1:]),
        components=vt.reshape(k, *arr.shape[1:]),
        singular_values=s,
        explained_variance=s**2 / (n - 1),
        explained_variance_ratio=ratio[:k],
        scores=u * s,
        centered=bool(center),
    )


def _n_kept(n_components, available: int, ratio: np.ndarray) -> int:
    """Number of components to keep from `n_components` (int, fraction or None)."""
    if n_components is None:
        return available
    if isinstance(n_components, bool) or not isinstance(
        n_components, int | float | np.integer | np.floating
    ):
        raise DataError(
            f"Expected `n_components` to be a whole number or a fraction in (0, 1), got "
            f"{n_components!r}"
        )
    if isinstance(n_components, int | np.integer):
        if not 1 <= n_components <= available:
            raise DataError(
                f"`n_components` must be between 1 and {available} (the number of curves or "
                f"the curve size, whichever is smaller), got {n_components}"
            )
        return int(n_components)
    frac = float(n_components)
    if not 0.0 < frac < 1.0:
        raise DataError(
            f"A fractional `n_components` must lie in (0, 1) (explained variance), got {frac}"
        )
    return int(min(np.searchsorted(np.cumsum(ratio), frac - 1e-12) + 1, available))
