"""The natural cubic spline of the external loads: LAPACK's tridiagonal solver and its fallback."""

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from ahbm.tools import opensim_id


def _data(n, rng):
    x = np.cumsum(rng.uniform(0.2, 1.8, n))
    y = rng.normal(size=(n, 5))
    t = np.linspace(x[0] - 0.4, x[-1] + 0.4, 97)  # the end pieces extrapolate
    return x, y, t


@pytest.mark.parametrize("n", [4, 5, 40])
def test_natural_cubic_equals_scipy(n):
    x, y, t = _data(n, np.random.default_rng(n))
    ref = CubicSpline(x, y, bc_type="natural", axis=0)(t)
    got = opensim_id._natural_cubic(x, y, t)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_natural_cubic_falls_back_to_the_banded_solver(monkeypatch):
    """A failure of the SPD solver (info != 0) gives the banded LU's solution."""
    x, y, t = _data(30, np.random.default_rng(7))
    ref = CubicSpline(x, y, bc_type="natural", axis=0)(t)
    calls = []

    def failing(d, e, b, **kwargs):
        calls.append(b.shape)
        return d, e, np.full_like(b, np.nan), 1

    monkeypatch.setattr(opensim_id.lapack, "dptsv", failing)
    got = opensim_id._natural_cubic(x, y, t)
    assert calls == [(28, 5)]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
