"""Curve PCA (ahbm.analysis.pca) against scikit-learn and numpy; the curve classifier."""

import sys

import numpy as np
import pytest

from ahbm.analysis import (
    cross_validate_curve_classifier,
    curve_pca,
    fit_curve_classifier,
)
from ahbm.errors import DataError, MissingDependencyError

sklearn = pytest.importorskip("sklearn", reason="the learn extra (scikit-learn) is not installed")
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402


def _curves(n=40, shape=(51,), seed=0, shift=0.0):
    """Smooth random curves: a few harmonics with random amplitudes plus noise."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, shape[-1])
    basis = np.stack([np.sin(2 * np.pi * k * t + k) for k in range(1, 6)])
    amp = rng.normal(size=(n, *shape[:-1], 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.2])
    return amp @ basis + shift + rng.normal(0.0, 0.05, (n, *shape))


def _same_up_to_sign(a, b, axis_components):
    """Columns (axis=1) or rows (axis=0) of a and b equal up to one sign each."""
    a = np.moveaxis(np.asarray(a), axis_components, 0).reshape(np.shape(a)[axis_components], -1)
    b = np.moveaxis(np.asarray(b), axis_components, 0).reshape(np.shape(b)[axis_components], -1)
    sign = np.sign(np.sum(a * b, axis=1))
    np.testing.assert_allclose(a, sign[:, None] * b, atol=1e-8)


@pytest.mark.parametrize("shape", [(51,), (9, 51)])
def test_matches_sklearn_pca(shape):
    x = _curves(60, shape)
    ours = curve_pca(x, n_components=6)
    flat = x.reshape(len(x), -1)
    ref = PCA(n_components=6, svd_solver="full").fit(flat)
    np.testing.assert_allclose(ours.explained_variance, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.explained_variance_ratio, ref.explained_variance_ratio_, rtol=1e-10
    )
    np.testing.assert_allclose(ours.singular_values, ref.singular_values_, rtol=1e-10)
    np.testing.assert_allclose(ours.mean.ravel(), ref.mean_, atol=1e-12)
    _same_up_to_sign(ours.components.reshape(6, -1), ref.components_, 0)
    _same_up_to_sign(ours.scores, ref.transform(flat), 1)
    new = _curves(5, shape, seed=9)
    _same_up_to_sign(ours.transform(new), ref.transform(new.reshape(5, -1)), 1)
    rec = ours.reconstruct(ours.transform(new))
    np.testing.assert_allclose(
        rec.reshape(5, -1), ref.inverse_transform(ref.transform(new.reshape(5, -1))), atol=1e-9
    )
    assert rec.shape == (5, *shape)


def test_all_components_reconstruct_exactly_and_are_orthonormal():
    x = _curves(12, (3, 21), seed=3)
    for center in (True, False):
        p = curve_pca(x, center=center)
        v = p.components.reshape(p.n_components, -1)
        np.testing.assert_allclose(v @ v.T, np.eye(p.n_components), atol=1e-12)
        np.testing.assert_allclose(p.reconstruct(p.scores), x, atol=1e-10)
        # the ratios of all components add up to 1 (centred: about the mean; else about 0)
        assert p.explained_variance_ratio.sum() == pytest.approx(1.0)
        big = np.abs(v).argmax(axis=1)
        assert (v[np.arange(len(v)), big] > 0).all()


def test_uncentred_is_the_plain_svd():
    x = _curves(15, (40,), seed=4, shift=5.0)
    p = curve_pca(x, n_components=3, center=False)
    s = np.linalg.svd(x, compute_uv=False)
    np.testing.assert_allclose(p.singular_values, s[:3], rtol=1e-12)
    assert not p.mean.any() and not p.centered
    # with an offset, the first uncentred component is close to the mean curve's direction
    m = x.mean(axis=0)
    assert abs(p.components[0] @ m) / np.linalg.norm(m) > 0.95


def test_fractional_n_components_matches_sklearn():
    x = _curves(50, (51,), seed=5)
    for frac in (0.5, 0.9, 0.99):
        assert curve_pca(x, n_components=frac).n_components == PCA(frac).fit(x).n_components_


def test_scores_of_a_known_two_component_family():
    # curves a*f + b*g with orthonormal f, g: the scores are (a, b) about their mean
    t = np.linspace(0.0, 1.0, 100, endpoint=False)
    f = np.sqrt(2 / 100) * np.sin(2 * np.pi * t)
    g = np.sqrt(2 / 100) * np.cos(2 * np.pi * t)
    rng = np.random.default_rng(6)
    # uncorrelated, centred amplitudes: orthonormal columns orthogonal to the constant
    q, _ = np.linalg.qr(np.c_[np.ones(30), rng.normal(size=(30, 2))])
    ab = q[:, 1:] * [5.0, 1.0] + [2.0, -1.0]
    p = curve_pca(ab[:, :1] * f + ab[:, 1:] * g, n_components=2)
    _same_up_to_sign(p.scores, ab - ab.mean(axis=0), 1)
    np.testing.assert_allclose(p.explained_variance, ab.var(axis=0, ddof=1), rtol=1e-9)


def test_bad_input():
    x = _curves(10)
    bad = x.copy()
    bad[3, 7] = np.nan
    with pytest.raises(DataError, match=r"curve 3 has NaN.*index \(7,\)"):
        curve_pca(bad)
    with pytest.raises(DataError, match="at least 2 curve"):
        curve_pca(x[:1])
    with pytest.raises(DataError, match="shape \\(n_curves"):
        curve_pca(x[0])
    with pytest.raises(DataError, match="between 1 and 10"):
        curve_pca(x, n_components=11)
    with pytest.raises(DataError, match="in \\(0, 1\\)"):
        curve_pca(x, n_components=1.5)
    with pytest.raises(DataError, match="whole number"):
        curve_pca(x, n_components="all")
    p = curve_pca(x, n_components=3)
    with pytest.raises(DataError, match="trailing shape \\(51,\\)"):
        p.transform(np.zeros((2, 50)))
    with pytest.raises(DataError, match="at most 3"):
        p.reconstruct(np.zeros((2, 4)))


def _groups(n=20, seed=7):
    a = _curves(n, (2, 51), seed=seed)
    b = _curves(n, (2, 51), seed=seed + 1)
    b[:, 0] += 6.0 * np.sin(np.linspace(0, np.pi, 51))  # group b: a bump on the first variable
    return np.r_[a, b], np.array(["a"] * n + ["b"] * n)


def test_classifier_equals_sklearn_pipeline():
    x, y = _groups()
    clf = fit_curve_classifier(x, y, n_components=4)
    pipe = make_pipeline(PCA(4, svd_solver="full"), LinearDiscriminantAnalysis())
    pipe.fit(x.reshape(len(x), -1), y)
    new, _ = _groups(6, seed=20)
    np.testing.assert_array_equal(clf.predict(new), pipe.predict(new.reshape(len(new), -1)))
    np.testing.assert_allclose(
        clf.predict_proba(new), pipe.predict_proba(new.reshape(len(new), -1)), atol=1e-8
    )
    assert clf.classes == ("a", "b")
    assert clf.score(x, y) == 1.0


def test_cross_validation_separates_and_fails_on_random_labels():
    x, y = _groups(15)
    cv = cross_validate_curve_classifier(x, y, folds=5, n_components=4, rng=0)
    assert cv.accuracy.shape == (5,) and cv.mean_accuracy == 1.0
    assert cv.confusion.tolist() == [[15, 0], [0, 15]]
    # labels unrelated to the curves: accuracy near chance, never perfect
    y_rand = np.random.default_rng(1).permutation(y)
    cv_rand = cross_validate_curve_classifier(x, y_rand, folds=5, n_components=4, rng=0)
    assert cv_rand.mean_accuracy < 0.85
    assert cv_rand.confusion.sum() == 30


def test_classifier_with_another_estimator_and_bad_input():
    from sklearn.linear_model import LogisticRegression

    x, y = _groups(10)
    est = LogisticRegression()
    clf = fit_curve_classifier(x, y, n_components=3, estimator=est)
    assert not hasattr(est, "coef_")  # the given estimator is cloned, not fitted in place
    assert clf.predict_proba(x).shape == (20, 2)
    with pytest.raises(DataError, match="20 labels"):
        fit_curve_classifier(x, y[:5])
    with pytest.raises(DataError, match="only one group"):
        fit_curve_classifier(x, ["a"] * 20)
    with pytest.raises(DataError, match="fit and predict"):
        fit_curve_classifier(x, y, estimator=object())
    with pytest.raises(DataError, match="like the training curves"):
        clf.predict(x[:, :1])
    with pytest.raises(DataError, match="smallest group"):
        cross_validate_curve_classifier(x, y, folds=11)


def test_missing_sklearn_names_the_extra(monkeypatch):
    x, y = _groups(5)
    monkeypatch.setitem(sys.modules, "sklearn.base", None)
    with pytest.raises(MissingDependencyError, match=r"ahbm\[learn\]"):
        fit_curve_classifier(x, y)
