"""The natural cubic spline of the external loads: the tridiagonal solver and its fallback."""

import numpy as np
import pytest
from scipy.interpolate import CubicSpline
from scipy.linalg import lapack

from ahbm._engine.jit_banded import natural_cubic_system, natural_cubic_values, ptsv
from ahbm.errors import DataError
from ahbm.opensim import external_loads as opensim_loads


def _data(n, rng):
    x = np.cumsum(rng.uniform(0.2, 1.8, n))
    y = rng.normal(size=(n, 5))
    t = np.linspace(x[0] - 0.4, x[-1] + 0.4, 97)  # the end pieces extrapolate
    return x, y, t


@pytest.mark.parametrize("n", [4, 5, 40])
def test_natural_cubic_equals_scipy(n):
    x, y, t = _data(n, np.random.default_rng(n))
    ref = CubicSpline(x, y, bc_type="natural", axis=0)(t)
    got = opensim_loads._natural_cubic(x, y, t)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_natural_cubic_falls_back_to_the_banded_solver(monkeypatch):
    """A failure of the SPD solver (info != 0) gives the banded LU's solution."""
    x, y, t = _data(30, np.random.default_rng(7))
    ref = CubicSpline(x, y, bc_type="natural", axis=0)(t)
    calls = []

    def failing(d, e, b):
        calls.append(b.shape)
        return 1, np.full_like(b, np.nan)

    monkeypatch.setattr(opensim_loads, "ptsv", failing)
    got = opensim_loads._natural_cubic(x, y, t)
    assert calls == [(28, 5)]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("seed", range(6))
def test_ptsv_is_lapack_dptsv(seed):
    """The compiled solver does reference LAPACK's operations: bit for bit with the
    OpenBLAS of scipy's x86-64 wheels (measured); within round-off for LAPACK builds
    that order or fuse the operations otherwise (MKL, FMA contraction)."""
    rng = np.random.default_rng(seed)
    for n in (2, 3, 7, 60, 1499):
        h = rng.uniform(1e-3, 2.0, n + 1) * 10.0 ** rng.integers(-3, 2)
        d, e = 2.0 * (h[:-1] + h[1:]), h[1:-1].copy()
        b = rng.normal(size=(n, int(rng.integers(1, 20)))) * 10.0 ** rng.integers(-3, 4)
        _, _, want, info = lapack.dptsv(d.copy(), e.copy(), np.array(b, order="F"))
        got_info, got = ptsv(d, e, b)
        assert info == got_info == 0
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * abs(want).max())


def test_ptsv_reports_a_pivot_that_is_not_positive():
    e = np.array([0.5, 0.5])
    for d, want in (([1.0, -1.0, 2.0], 2), ([1.0, 0.25, 2.0], 2), ([-1.0, 1.0, 1.0], 1)):
        d = np.array(d)
        assert ptsv(d, e, np.ones((3, 2)))[0] == lapack.dptsv(d, e, np.ones((3, 2)))[3] == want


@pytest.mark.parametrize("seed", range(4))
def test_natural_cubic_system_is_numpys_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for n in (4, 5, 33, 1501):
        x = np.cumsum(rng.uniform(1e-3, 2.0, n))
        y = rng.normal(size=(n, int(rng.integers(1, 20)))) * 10.0 ** rng.integers(-3, 4)
        h = np.diff(x)
        d, e, rhs = natural_cubic_system(h, y)
        assert d.tobytes() == (2.0 * (h[:-1] + h[1:])).tobytes()
        assert e.tobytes() == h[1:-1].tobytes()
        assert rhs.tobytes() == (6.0 * np.diff(np.diff(y, axis=0) / h[:, None], axis=0)).tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_natural_cubic_values_are_numpys_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for n, p in ((4, 9), (40, 97), (1501, 151)):
        x, y, _ = _data(n, rng)
        t = np.sort(rng.uniform(x[0] - 0.4, x[-1] + 0.4, p))
        h = np.diff(x)
        M = rng.normal(size=y.shape) * 10.0 ** rng.integers(-3, 4)
        k = np.clip(np.searchsorted(x, t, side="right") - 1, 0, n - 2)
        a, b = x[k + 1] - t, t - x[k]
        hk, ac, bc = h[k][:, None], a[:, None], b[:, None]
        want = (
            (M[k] * ac**3 + M[k + 1] * bc**3) / (6.0 * hk)
            + (y[k] / hk - M[k] * hk / 6.0) * ac
            + (y[k + 1] / hk - M[k + 1] * hk / 6.0) * bc
        )
        got = natural_cubic_values(M, y, h, k, a, b, a**3, b**3)
        assert got.tobytes() == want.tobytes()


def test_ptsv_of_no_rows_and_of_shapes_that_do_not_fit():
    info, x = ptsv(np.zeros(0), np.zeros(0), np.zeros((0, 3)))
    assert info == 0 and x.shape == (0, 3)
    assert ptsv(np.ones(3), np.ones(1), np.ones((3, 2)))[0] == -1  # e must have n - 1
    assert ptsv(np.ones(3), np.ones(2), np.ones((2, 2)))[0] == -1  # b must have n rows


@pytest.mark.parametrize("n", [2, 3, 4])
def test_natural_cubic_of_few_samples_is_scipys(n):
    rng = np.random.default_rng(n)
    x = np.cumsum(rng.uniform(0.1, 1.0, n))
    y = rng.normal(size=(n, 3))
    t = np.linspace(x[0] - 0.5, x[-1] + 0.5, 17)
    ref = CubicSpline(x, y, bc_type="natural", axis=0)(t)
    np.testing.assert_allclose(opensim_loads._natural_cubic(x, y, t), ref, rtol=1e-12, atol=1e-12)


def test_natural_cubic_needs_two_samples():
    with pytest.raises(DataError, match="at least 2 samples"):
        opensim_loads._natural_cubic(np.zeros(1), np.zeros((1, 2)), np.zeros(3))
