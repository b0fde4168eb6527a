"""Classifiers of gait curves: a scikit-learn estimator on principal-component scores.

Gait curves are reduced to their first principal-component scores
(:func:`ahbm.analysis.curve_pca`) and a scikit-learn classifier is fitted on
those scores: :func:`fit_curve_classifier` returns a
:class:`CurveClassifier` that predicts the group of new curves, and
:func:`cross_validate_curve_classifier` estimates its accuracy with the
decomposition refitted inside every fold (so that the held-out curves never
shape the components).

scikit-learn is the ``learn`` extra (``pip install "ahbm[learn]"``); it is
imported only when a classifier is fitted. Any estimator with ``fit`` and
``predict`` can be given; the default is linear discriminant analysis, the
classic companion of curve PCA in gait studies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_int
from ahbm.analysis.pca import CurvePCA, check_curves, curve_pca
from ahbm.errors import DataError, MissingDependencyError
from ahbm.types import ResultRepr

__all__ = [
    "CurveClassifier",
    "CrossValidation",
    "cross_validate_curve_classifier",
    "fit_curve_classifier",
]


def _sklearn_base():
    try:
        import sklearn.base
    except ImportError as err:
        raise MissingDependencyError(
            "curve classifiers need scikit-learn: pip install 'ahbm[learn]' (or pip install "
            "scikit-learn)"
        ) from err
    return sklearn.base


@dataclass(frozen=True, repr=False)
class CurveClassifier(ResultRepr):
    """A classifier of curves fitted on their principal-component scores.

    Attributes
    ----------
    pca : CurvePCA
        The decomposition of the training curves.
    estimator : object
        The fitted scikit-learn estimator (a clone of the one given).
    classes : tuple
        The group labels, in the estimator's order.
    """

    pca: CurvePCA
    estimator: object
    classes: tuple

    def predict(self, curves) -> np.ndarray:
        """Predicted group of each curve, shape (n_curves,)."""
        return self.estimator.predict(self._scores(curves))

    def predict_proba(self, curves) -> np.ndarray:
        """Group probabilities, shape (n_curves, n_groups) in the order of :attr:`classes`."""
        if not hasattr(self.estimator, "predict_proba"):
            raise DataError(
                f"the estimator {type(self.estimator).__name__} gives no probabilities; use one "
                "with predict_proba (e.g. LinearDiscriminantAnalysis, LogisticRegression)"
            )
        return self.estimator.predict_proba(self._scores(curves))

    def score(self, curves, labels) -> float:
        """Fraction of the curves whose predicted group is their label."""
        lab = _labels(labels, self._scores(curves).shape[0])
        return float(np.mean(self.predict(curves) == lab))

    def _scores(self, curves) -> np.ndarray:
        arr = check_curves(curves, "curves")
        if arr.shape[1:] != self.pca.curve_shape:
            shape = ", ".join(map(str, self.pca.curve_shape))
            raise DataError(
                f"Expected `curves` with shape (n_curves, {shape}) like the training curves, "
                f"got {arr.shape}"
            )
        return self.pca.transform(arr)


def _labels(labels, n: int) -> np.ndarray:
    if isinstance(labels, str | bytes) or not hasattr(labels, "__len__"):
        raise DataError(f"Expected `labels` to be one label per curve, got {labels!r:.80}")
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.shape[0] != n:
        raise DataError(f"Expected {n} labels (one per curve), got shape {lab.shape}")
    return lab


def fit_curve_classifier(
    curves, labels, *, n_components=5, estimator=None, center: bool = True
) -> CurveClassifier:
    """Fit a classifier of curves on their first principal-component scores.

    Parameters
    ----------
    curves : array_like, shape (n_curves, ...)
        Training curves, e.g. ``(n_cycles, 101)`` knee angles or ``(n_cycles,
        9, 51)`` kinematic curves.
    labels : sequence, length n_curves
        Group of each curve (at least two groups).
    n_components : int or float
        Components kept (:func:`~ahbm.analysis.curve_pca`): a number, or the
        fraction of variance to explain.
    estimator : scikit-learn classifier, optional
        Cloned and fitted on the scores. Default
        ``sklearn.discriminant_analysis.LinearDiscriminantAnalysis()``.
    center : bool
        Subtract the mean curve before the decomposition.

    Returns
    -------
    CurveClassifier

    Raises
    ------
    MissingDependencyError
        scikit-learn is not installed (the ``learn`` extra).
    DataError
        Bad curves (NaN, fewer than 2), labels of another length, one group.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0.0, 1.0, 51)
    >>> rng = np.random.default_rng(1)
    >>> a = np.sin(2 * np.pi * t) + rng.normal(0, 0.1, (20, 51))
    >>> b = np.sin(2 * np.pi * t) + 0.5 + rng.normal(0, 0.1, (20, 51))
    >>> clf = fit_curve_classifier(np.r_[a, b], ["a"] * 20 + ["b"] * 20, n_components=3)
    >>> clf.predict(np.sin(2 * np.pi * t)[None] + 0.5).tolist()
    ['b']
    """
    base = _sklearn_base()
    arr = check_curves(curves, "curves", min_curves=2)
    lab = _labels(labels, arr.shape[0])
    if np.unique(lab).size < 2:
        raise DataError("`labels` name only one group; a classifier needs at least two")
    if estimator is None:
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        estimator = LinearDiscriminantAnalysis()
    for method in ("fit", "predict"):
        if not callable(getattr(estimator, method, None)):
            raise DataError(
                f"`estimator` must be a scikit-learn classifier (with fit and predict), got "
                f"{type(estimator).__name__}"
            )
    pca = curve_pca(arr, n_components=n_components, center=center)
    est = base.clone(estimator)
    est.fit(pca.scores, lab)
    classes = tuple(getattr(est, "classes_", np.unique(lab)).tolist())
    return CurveClassifier(pca, est, classes)


@dataclass(frozen=True, repr=False)
class CrossValidation(ResultRepr):
    """Result of :func:`cross_validate_curve_classifier`.

    Attributes
    ----------
    accuracy : ndarray, shape (n_folds,)
        Fraction of the held-out curves classified right, per fold.
    predicted : ndarray, shape (n_curves,)
        Each curve's group as predicted by the model that did not see it.
    labels : ndarray, shape (n_curves,)
    classes : tuple
    confusion : ndarray of int, shape (n_groups, n_groups)
        ``confusion[i, j]``: curves of group ``classes[i]`` predicted as
        ``classes[j]``.
    """

    accuracy: np.ndarray
    predicted: np.ndarray
    labels: np.ndarray
    classes: tuple
    confusion: np.ndarray

    @property
    def mean_accuracy(self) -> float:
        """Fraction of all curves classified right by the models that did not see them."""
        return float(np.mean(self.predicted == self.labels))


def cross_validate_curve_classifier(
    curves,
    labels,
    *,
    folds: int = 5,
    n_components=5,
    estimator=None,
    center: bool = True,
    rng=None,
) -> CrossValidation:
    """Stratified k-fold accuracy of a curve classifier, the PCA refitted in every fold.

    Parameters
    ----------
    curves, labels, n_components, estimator, center
        As :func:`fit_curve_classifier`.
    folds : int
        Number of folds (at least 2, at most the size of the smallest group).
    rng : int or numpy.random.Generator, optional
        Shuffles the curves before they are split (default: no shuffling).

    Returns
    -------
    CrossValidation

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0.0, 1.0, 51)
    >>> rng = np.random.default_rng(2)
    >>> a = np.sin(2 * np.pi * t) + rng.normal(0, 0.1, (15, 51))
    >>> b = np.sin(2 * np.pi * t) + 0.5 + rng.normal(0, 0.1, (15, 51))
    >>> cv = cross_validate_curve_classifier(np.r_[a, b], [0] * 15 + [1] * 15, folds=3)
    >>> cv.mean_accuracy
    1.0
    """
    _sklearn_base()
    from sklearn.model_selection import StratifiedKFold

    arr = check_curves(curves, "curves", min_curves=2)
    lab = _labels(labels, arr.shape[0])
    folds = as_int(folds, "folds", minimum=2)
    classes, counts = np.unique(lab, return_counts=True)
    if classes.size < 2:
        raise DataError("`labels` name only one group; a classifier needs at least two")
    if counts.min() < folds:
        raise DataError(
            f"`folds`={folds} exceeds the size of the smallest group ({int(counts.min())} "
            f"curve(s) of {classes[np.argmin(counts)]!r}); use fewer folds"
        )
    seed = None
    if rng is not None:
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        seed = int(gen.integers(2**31 - 1))
    split = StratifiedKFold(n_splits=folds, shuffle=seed is not None, random_state=seed)
    predicted = np.empty(lab.shape, dtype=lab.dtype)
    accuracy = []
    for train, test in split.split(arr.reshape(arr.shape[0], -1), lab):
        clf = fit_curve_classifier(
            arr[train], lab[train], n_components=n_components, estimator=estimator, center=center
        )
        predicted[test] = clf.predict(arr[test])
        accuracy.append(float(np.mean(predicted[test] == lab[test])))
    index = {c: i for i, c in enumerate(classes.tolist())}
    confusion = np.zeros((classes.size, classes.size), dtype=int)
    rows = np.array([index[v] for v in lab.tolist()])
    cols = np.array([index[v] for v in predicted.tolist()])
    np.add.at(confusion, (rows, cols), 1)
    return CrossValidation(np.array(accuracy), predicted, lab, tuple(classes.tolist()), confusion)
