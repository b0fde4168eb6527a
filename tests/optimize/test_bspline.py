"""Clamped B-spline basis (Cox–de Boor) against scipy.interpolate.BSpline."""

import numpy as np
import pytest
from scipy.interpolate import BSpline

from ahbm.errors import DataError
from ahbm.optimize.bspline import bspline_basis, bspline_curve, bspline_fit, clamped_knots


def _knots(p, rng, repeated=False):
    inner = np.sort(rng.uniform(0.0, 2.0, 6))
    if repeated:  # an interior knot of multiplicity 2 (the curve stays C^{p-2})
        inner = np.sort(np.concatenate([inner, [inner[2]]]))
    return np.concatenate([np.zeros(p + 1), inner, np.full(p + 1, 2.0)])


@pytest.mark.parametrize("degree", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("repeated", [False, True])
def test_basis_and_derivatives_match_scipy(degree, repeated):
    rng = np.random.default_rng(degree + 10 * repeated)
    k = _knots(degree, rng, repeated)
    n = k.size - degree - 1
    t = np.concatenate([np.linspace(0.0, 2.0, 257), k[degree + 1 : -degree - 1]])
    t = t[:-1] if repeated else t  # skip the non-differentiable knot for derivatives
    for d in range(0, min(degree, 3) + 1):
        if repeated and d >= degree - 1 and d > 0:
            continue  # derivative not continuous at the double knot
        basis = bspline_basis(k, degree, t, derivative=d)
        assert basis.shape == t.shape + (n,)
        for i in range(n):
            c = np.zeros(n)
            c[i] = 1.0
            spl = BSpline(k, c, degree, extrapolate=False)
            ref = spl(t) if d == 0 else spl.derivative(d)(t)
            inside = t < 2.0  # scipy leaves the closed end of the domain out
            np.testing.assert_allclose(basis[inside, i], ref[inside], atol=1e-10 * 10**d)


def test_partition_of_unity_and_clamped_ends():
    k = clamped_knots(9, 3, 0.0, 0.4)
    t = np.linspace(0.0, 0.4, 101)
    b = bspline_basis(k, 3, t)
    np.testing.assert_allclose(b.sum(axis=-1), 1.0, atol=1e-14)
    assert np.all(b >= -1e-15)
    np.testing.assert_allclose(b[0], np.eye(9)[0])
    np.testing.assert_allclose(b[-1], np.eye(9)[-1])  # the end of the domain is closed
    # derivatives of a partition of unity sum to zero
    for d in (1, 2, 3):
        np.testing.assert_allclose(bspline_basis(k, 3, t, d).sum(axis=-1), 0.0, atol=1e-8)
    assert not bspline_basis(k, 3, t, 4).any()  # above the degree


def test_curve_derivatives_finite_differences_and_batch():
    rng = np.random.default_rng(3)
    k = clamped_knots(8, 5, -1.0, 1.0)
    c = rng.normal(size=(8, 2))
    t = rng.uniform(-0.9, 0.9, size=(4, 5))
    h = 1e-5
    for d in (1, 2, 3):
        num = (bspline_curve(k, 5, c, t + h, d - 1) - bspline_curve(k, 5, c, t - h, d - 1)) / (
            2 * h
        )
        np.testing.assert_allclose(bspline_curve(k, 5, c, t, d), num, rtol=1e-6, atol=1e-4)
    assert bspline_curve(k, 5, c, t).shape == (4, 5, 2)


def test_polynomials_are_reproduced():
    # a B-spline of degree p reproduces every polynomial of degree <= p (Marsden)
    k = clamped_knots(7, 5, 0.0, 1.0)
    t = np.linspace(0, 1, 40)
    y = 1 + 2 * t - 3 * t**2 + t**5
    c = bspline_fit(k, 5, t, y)
    np.testing.assert_allclose(bspline_curve(k, 5, c, t), y, atol=1e-12)
    np.testing.assert_allclose(bspline_curve(k, 5, c, t, 3), 60 * t**2, atol=1e-9)


def test_clamped_knots():
    k = clamped_knots(6, 3, 0.0, 1.8)
    assert k.size == 10 and np.all(k[:4] == 0) and np.all(k[-4:] == 1.8)
    np.testing.assert_allclose(np.diff(k[3:7]), 0.6)


def test_bad_input():
    k = clamped_knots(5, 3)
    with pytest.raises(DataError, match="knot domain"):
        bspline_basis(k, 3, [1.5])
    with pytest.raises(DataError, match="non-decreasing"):
        bspline_basis(k[::-1], 3, [0.5])
    with pytest.raises(DataError, match="at least"):
        bspline_basis([0.0, 1.0], 3, [0.5])
    with pytest.raises(DataError, match="derivative"):
        bspline_basis(k, 3, [0.5], derivative=-1)
    with pytest.raises(DataError, match="n_control"):
        clamped_knots(2, 3)
    with pytest.raises(DataError, match="t1 > t0"):
        clamped_knots(5, 3, 1.0, 1.0)
    with pytest.raises(DataError, match="control"):
        bspline_curve(k, 3, np.zeros(4), 0.5)
