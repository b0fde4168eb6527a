"""Gait Deviation Index (Schwartz & Rozumalski 2008) and its derived form GDI*.

One side's gait cycle is a vector of 459 numbers: the nine kinematic
variables of :data:`~ahbm.gait.scores.SCORE_VARIABLES` at 51 points
(0, 2, ..., 100 %), the pelvis included. The singular value decomposition of
a large matrix of such vectors gives orthonormal "gait features"; a cycle is
summarised by its scores on the first 15 of them. The raw deviation of a
cycle is the Euclidean distance ``d`` between its feature scores and the
mean feature scores of a control group; with ``ln d`` of the controls having
mean ``A`` and sample SD ``B``:

    GDI = 100 - 10 (ln d - A) / B

so that the controls average 100 with SD 10, and every 10 points below 100 is
one control SD further from the controls' mean.

**Feature basis.** Schwartz & Rozumalski derived their features from 6702
strides of patients and controls at one hospital; that basis is not part of
ahbm. :func:`gdi_reference` computes the features from the data the user
gives (the controls, or a larger set of controls and patients through
``data=``), or takes a basis the user supplies (``basis=``, e.g. the
published features from another source). GDI values therefore depend on the
dataset that made the features and on the controls: compare GDI values only
when they were computed with the same reference. With a basis of every
feature (or when the 15 features reconstruct the curves exactly) the
distance ``d`` is ``sqrt(459)`` times the GPS (Baker et al. 2009), and the GDI
equals the GDI* of :func:`gdi_star` (Schwartz, Rozumalski & Baker 2013),
which scales the GPS directly.

References
----------
Schwartz, M. H. & Rozumalski, A. (2008). The gait deviation index: a new
comprehensive index of gait pathology. Gait Posture 28(3), 351-357.
Baker, R. et al. (2009). The Gait Profile Score and Movement Analysis
Profile. Gait Posture 30(3), 265-269.
Schwartz, M. H., Rozumalski, A. & Baker, R. (2013). A new method for
computing the Gait Deviation Index and Motion Analysis Profile. Proceedings
of the Gait and Clinical Movement Analysis Society, Cincinnati.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_finite_float, as_float_array, as_int, as_positive_float
from ahbm.analysis.pca import curve_pca
from ahbm.errors import DataError
from ahbm.gait.scores import (
    N_POINTS,
    GaitReference,
    check_score_curves,
    gait_reference,
    side_curves,
)
from ahbm.types import ResultRepr

__all__ = [
    "GDI_STAR_GILLETTE",
    "GdiReference",
    "gait_deviation_index",
    "gait_deviation_index_sides",
    "gdi_reference",
    "gdi_star",
    "gdi_star_to_gps",
]

#: Mean and SD of ln(GPS in degrees) over the Gillette control group, for GDI*
#: (Schwartz, Rozumalski & Baker 2013, as quoted by R. Baker: A = 1.677, B = 0.263).
GDI_STAR_GILLETTE = {"ln_mean": 1.677, "ln_sd": 0.263}
_N_VAR = 9
_SIZE = _N_VAR * N_POINTS


@dataclass(frozen=True, repr=False)
class GdiReference(ResultRepr):
    """Feature basis and control statistics of the Gait Deviation Index.

    Attributes
    ----------
    features : ndarray, shape (n_features, 9, 51)
        Orthonormal gait features (flattened rows), in decreasing order of
        singular value when computed here.
    control_mean_scores : ndarray, shape (n_features,)
        Mean feature scores of the control cycles.
    ln_mean, ln_sd : float
        Mean and sample SD (``ddof=1``) of ``ln d`` over the control cycles.
    control_ln_distance : ndarray, shape (n_controls,)
        ``ln d`` of each control cycle.
    singular_values : ndarray, shape (n_features,)
        Of the decomposed data (NaN for a supplied basis).
    fidelity : float
        Fraction of the decomposed data's sum of squares that the kept
        features reproduce (Schwartz & Rozumalski report 98 % with 15
        features of 6702 strides); NaN for a supplied basis.
    source : str
        What the features were computed from.
    """

    features: np.ndarray
    control_mean_scores: np.ndarray
    ln_mean: float
    ln_sd: float
    control_ln_distance: np.ndarray
    singular_values: np.ndarray
    fidelity: float
    source: str = ""

    @property
    def n_features(self) -> int:
        """Number of gait features used."""
        return int(np.shape(self.features)[0])

    @property
    def control_gdi(self) -> np.ndarray:
        """GDI of each control cycle (mean 100, SD 10 by construction)."""
        return 100.0 - 10.0 * (self.control_ln_distance - self.ln_mean) / self.ln_sd

    def distance(self, curves) -> np.ndarray:
        """Raw deviation ``d`` of score curves ``(..., 9, n_points)``: shape (...)."""
        x = check_score_curves(curves, "curves")
        scores = x.reshape(*x.shape[:-2], _SIZE) @ self.features.reshape(self.n_features, _SIZE).T
        return np.linalg.norm(scores - self.control_mean_scores, axis=-1)


def _curves_of(value, name: str) -> np.ndarray:
    """Score curves ``(n, 9, 51)`` from a GaitReference with cycles or gait_reference input."""
    if isinstance(value, GaitReference):
        if value.n_cycles == 0:
            raise DataError(
                f"`{name}` is a band without cycles; the GDI needs the control cycles themselves"
            )
        return value.curves
    return gait_reference(value).curves


def _basis(basis) -> np.ndarray:
    b = as_float_array(basis, "basis")
    if b.ndim == 3 and b.shape[1:] == (_N_VAR, N_POINTS):
        b = b.reshape(b.shape[0], _SIZE)
    elif b.ndim == 2 and b.shape[0] == _SIZE and b.shape[1] != _SIZE:
        b = b.T  # features as columns
    if b.ndim != 2 or b.shape[1] != _SIZE or b.shape[0] < 1:
        raise DataError(
            f"Expected `basis` with shape (n_features, 9, {N_POINTS}) or (n_features, {_SIZE}) "
            f"(features as rows), got {np.shape(basis)}"
        )
    err = np.abs(b @ b.T - np.eye(b.shape[0])).max()
    if err > 1e-6:
        raise DataError(
            f"the `basis` rows are not orthonormal (|F F^T - I| reaches {err:.2g}); "
            "orthonormalize them first (e.g. np.linalg.qr(F.T)[0].T)"
        )
    return b


def gdi_reference(
    controls, *, data=None, basis=None, n_features: int = 15, center: bool = False
) -> GdiReference:
    """Feature basis and control statistics for the Gait Deviation Index.

    Parameters
    ----------
    controls : GaitReference, array_like or gait results
        The control cycles: a :class:`~ahbm.gait.GaitReference` made from
        cycles, score curves ``(n_controls, 9, n_points)``, or anything
        :func:`~ahbm.gait.gait_reference` takes (at least 3 cycles).
    data : same kinds as `controls`, optional
        The cycles to derive the gait features from (controls and patients,
        as large as available; Schwartz & Rozumalski used 6702 strides).
        Default: the controls.
    basis : array_like, shape (n_features, 9, 51) or (n_features, 459), optional
        Supplied orthonormal features (rows) instead of computing them; not
        with `data`. All its features are used.
    n_features : int
        Features kept when computing them (15 in the original GDI); at most
        the number of cycles of `data`.
    center : bool
        Subtract the mean cycle before the decomposition (the original
        decomposes the data as they are).

    Returns
    -------
    GdiReference

    Raises
    ------
    DataError
        Fewer than 3 controls, too many features for the data, a basis that
        is not orthonormal, controls whose distances do not vary.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> controls = rng.normal(size=(30, 9, 51))
    >>> ref = gdi_reference(controls, n_features=5)
    >>> round(float(ref.control_gdi.mean()), 9), round(float(ref.control_gdi.std(ddof=1)), 9)
    (100.0, 10.0)
    """
    ctrl = _curves_of(controls, "controls")
    if ctrl.shape[0] < 3:
        raise DataError(f"the GDI needs at least 3 control cycles, got {ctrl.shape[0]}")
    if basis is not None:
        if data is not None:
            raise DataError("give `data` (to compute the features) or `basis`, not both")
        feats = _basis(basis)
        sv, fidelity = np.full(feats.shape[0], np.nan), np.nan
        source = f"supplied basis of {feats.shape[0]} features"
    else:
        dat = ctrl if data is None else _curves_of(data, "data")
        n_features = as_int(n_features, "n_features", minimum=1)
        limit = min(dat.shape[0], _SIZE)
        if n_features > limit:
            raise DataError(
                f"`n_features`={n_features} needs at least {n_features} cycles to derive the "
                f"features from, got {dat.shape[0]}; give more cycles (`data`) or fewer features"
            )
        pca = curve_pca(dat.reshape(dat.shape[0], _SIZE), n_components=n_features, center=center)
        feats = pca.components
        sv = pca.singular_values
        fidelity = float(pca.explained_variance_ratio.sum())
        source = f"{n_features} features of {dat.shape[0]} cycles" + (" (centred)" * center)
    scores = ctrl.reshape(ctrl.shape[0], _SIZE) @ feats.T
    mean_scores = scores.mean(axis=0)
    d = np.linalg.norm(scores - mean_scores, axis=1)
    if (d <= 1e-9 * np.median(d)).any():
        raise DataError(
            "a control cycle lies exactly at the controls' mean in feature space (d = 0); "
            "check for duplicated or constant control cycles"
        )
    ln = np.log(d)
    sd = float(ln.std(ddof=1))
    if not sd > 0:
        raise DataError("the controls' distances do not vary; the GDI cannot be scaled")
    return GdiReference(
        feats.reshape(feats.shape[0], _N_VAR, N_POINTS),
        mean_scores,
        float(ln.mean()),
        sd,
        ln,
        sv,
        fidelity,
        source,
    )


def gait_deviation_index(curves, reference: GdiReference) -> np.ndarray:
    """Gait Deviation Index of score curves.

    Parameters
    ----------
    curves : array_like, shape (..., 9, n_points)
        One side's cycles (:func:`~ahbm.gait.gait_score_curves`), resampled
        to 51 points; in the units the reference was built with.
    reference : GdiReference

    Returns
    -------
    ndarray, shape (...)
        ``100 - 10 (ln d - ln_mean) / ln_sd``; +inf for a cycle exactly at
        the controls' mean (``d = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> base = np.sin(np.linspace(0.0, 2 * np.pi, 51)) * np.ones((9, 1))
    >>> ref = gdi_reference(base + rng.normal(0.0, 0.1, (30, 9, 51)), n_features=5)
    >>> gdi = gait_deviation_index(np.stack([base, 1.5 * base]), ref)
    >>> bool(gdi[0] > 100 > 60 > gdi[1])  # the controls' mean, then a cycle far from it
    True
    """
    if not isinstance(reference, GdiReference):
        raise DataError(
            f"Expected `reference` to be a GdiReference (gdi_reference), got "
            f"{type(reference).__name__}"
        )
    d = reference.distance(curves)
    with np.errstate(divide="ignore"):
        return 100.0 - 10.0 * (np.log(d) - reference.ln_mean) / reference.ln_sd


def gait_deviation_index_sides(subject, reference: GdiReference) -> dict:
    """GDI of every cycle of each side of a subject.

    Parameters
    ----------
    subject : GaitResult or mapping
        As :func:`~ahbm.gait.gait_profile_score` takes it.
    reference : GdiReference

    Returns
    -------
    dict
        ``{"Left": (n_cycles,), "Right": (n_cycles,)}`` (the sides present).
    """
    by_side = side_curves(subject, "subject")
    return {s: gait_deviation_index(c, reference) for s, c in by_side.items()}


def gdi_star(gps, *, ln_mean: float, ln_sd: float) -> np.ndarray:
    """GDI* from the Gait Profile Score: the GDI's scaling applied to the GPS.

    Parameters
    ----------
    gps : array_like
        Gait Profile Scores (in the units `ln_mean` was computed in).
    ln_mean, ln_sd : float
        Mean and SD of ``ln GPS`` over a control group
        (:meth:`GaitReference.gps_log_stats <ahbm.gait.GaitReference.gps_log_stats>`,
        or :data:`GDI_STAR_GILLETTE` for GPS in degrees).

    Returns
    -------
    ndarray
        ``100 - 10 (ln GPS - ln_mean) / ln_sd``.

    Examples
    --------
    >>> round(float(gdi_star(5.349, **GDI_STAR_GILLETTE)), 2)  # exp(1.677) deg
    100.0
    """
    g = as_float_array(gps, "gps")
    if (g <= 0).any():
        raise DataError("`gps` must be positive (its logarithm is taken)")
    a, b = as_finite_float(ln_mean, "ln_mean"), as_positive_float(ln_sd, "ln_sd")
    return 100.0 - 10.0 * (np.log(g) - a) / b


def gdi_star_to_gps(gdi, *, ln_mean: float, ln_sd: float) -> np.ndarray:
    """The GPS that has a given GDI* (the inverse of :func:`gdi_star`).

    Examples
    --------
    >>> round(float(gdi_star_to_gps(90.0, **GDI_STAR_GILLETTE)), 3)  # exp(1.677 + 0.263) deg
    6.959
    """
    g = as_float_array(gdi, "gdi")
    a, b = as_finite_float(ln_mean, "ln_mean"), as_positive_float(ln_sd, "ln_sd")
    return np.exp(a + b * (100.0 - g) / 10.0)
