"""The compiled spline evaluation of the custom-joint kernels equals SimmSpline's numpy code."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm._engine.jit_functions import SPLINE_ROUNDOFF, simm_spline_derivatives
from ahbm._engine.node_plan import _spline_of
from ahbm.kinematics import functions as fn


def test_roundoff_is_the_functions_module_constant():
    assert SPLINE_ROUNDOFF == fn._ROUNDOFF


@pytest.mark.parametrize("n", [2, 3, 4, 7, 20])
def test_compiled_spline_equals_numpy_code_bit_for_bit(n):
    rng = np.random.default_rng(n)
    x = np.cumsum(rng.uniform(0.1, 1.0, n))
    y = rng.normal(size=n)
    cases = [
        fn.SimmSpline(x, y),
        fn.NaturalCubicSpline(x, y),
        fn.MultiplierFunction(fn.SimmSpline(x, y), 0.7),
        fn.MultiplierFunction(fn.MultiplierFunction(fn.SimmSpline(x, y), 1.3), -0.3),
    ]
    # inside, outside, at and next to every knot (OpenSim's search and end cases), NaN
    xq = np.concatenate(
        [
            np.linspace(x[0] - 1.0, x[-1] + 1.0, 301),
            x,
            x + 1e-13,
            x - 1e-13,
            x + 1e-9,
            [np.nan, x[0] - 2e-13, x[-1] + 3e-13],
        ]
    )
    for f in cases:
        spline, scales = _spline_of(f)
        got = simm_spline_derivatives(spline, scales, xq, SPLINE_ROUNDOFF)
        for ref, val in zip(f.value_and_derivatives(xq, 2), got, strict=True):
            np.testing.assert_array_equal(val, ref)


def test_only_plain_or_multiplied_simm_splines_are_compiled():
    assert _spline_of(fn.LinearFunction(2.0, 1.0)) is None
    assert _spline_of(fn.MultiplierFunction(fn.PolynomialFunction([1.0, 2.0]), 2.0)) is None
    assert _spline_of(fn.PiecewiseLinearFunction([0.0, 1.0], [0.0, 1.0])) is None
    s = fn.SimmSpline([0.0, 1.0, 2.0], [0.0, 1.0, 0.0])
    assert _spline_of(fn.MultiplierFunction(fn.MultiplierFunction(s, 2.0), 3.0)) == (s, (2.0, 3.0))
