"""ahbm.kinematics.functions: derivatives by finite differences, dicts, bad input."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from ahbm.errors import DataError, ModelError
from ahbm.kinematics import functions as fn


def _all_functions():
    rng = np.random.default_rng(11)
    xk = np.sort(rng.uniform(-2.0, 2.0, 7))
    yk = rng.normal(size=7)
    return [
        fn.Constant(0.4),
        fn.LinearFunction(1.5, -0.2),
        fn.PolynomialFunction([0.2, -0.5, 1.0, 0.3]),
        fn.PiecewiseLinearFunction(xk, yk),
        fn.SimmSpline(xk, yk),
        fn.SimmSpline(xk[:3], yk[:3]),
        fn.SimmSpline(xk[:2], yk[:2]),
        fn.NaturalCubicSpline(xk[:5], yk[:5]),
        fn.MultiplierFunction(fn.SimmSpline(xk, yk), 0.7),
    ]


@pytest.mark.parametrize("f", _all_functions(), ids=lambda f: type(f).__name__)
def test_derivatives_match_finite_differences(f):
    xk = getattr(f, "x", np.array([-2.0, 2.0]))
    if isinstance(f, fn.MultiplierFunction):
        xk = f.function.x
    # away from knots (piecewise functions are smooth only between them), inside and outside
    mids = 0.5 * (xk[1:] + xk[:-1])
    x = np.concatenate([mids, [xk[0] - 0.5, xk[-1] + 0.5]])
    h = 1e-6
    d1 = (f(x + h) - f(x - h)) / (2 * h)
    d2 = (f.value(x + h, 1) - f.value(x - h, 1)) / (2 * h)
    np.testing.assert_allclose(f.value(x, derivative=1), d1, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(f.value(x, derivative=2), d2, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", _all_functions(), ids=lambda f: type(f).__name__)
def test_shapes_dict_round_trip_pickle_and_scaling(f):
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    assert f(x).shape == (3, 4)
    for order in range(3):
        parts = f.value_and_derivatives(x, order)
        assert len(parts) == order + 1
        for d, part in enumerate(parts):
            np.testing.assert_array_equal(part, f.value(x, d))
    assert isinstance(f(0.1), float)
    g = fn.function_from_dict(json.loads(json.dumps(f.to_dict())))
    assert g == f and type(g) is type(f)
    np.testing.assert_array_equal(g(x), f(x))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(f))(x), f(x))
    for order in range(3):
        np.testing.assert_allclose(
            f.scaled(-2.5).value(x, order), -2.5 * f.value(x, order), rtol=1e-14, atol=1e-15
        )
    with pytest.raises(ModelError, match="read-only"):
        f.foo = 1


def test_splines_interpolate_and_are_c2_at_knots():
    xk = np.array([0.0, 0.4, 1.1, 1.5, 2.0, 2.2])
    yk = np.array([0.0, 1.0, -0.5, 0.3, 0.3, 1.0])
    f = fn.SimmSpline(xk, yk)
    np.testing.assert_allclose(f(xk), yk, atol=1e-14)
    eps = 1e-9
    for order in range(3):
        left = f.value(xk[1:-1] - eps, order)
        right = f.value(xk[1:-1] + eps, order)
        np.testing.assert_allclose(left, right, atol=1e-6)
    # cubic data are reproduced exactly by SIMM's end conditions (not by natural ones)
    cubic = fn.PolynomialFunction([0.5, -1.0, 0.2, 0.1])
    g = fn.SimmSpline(xk, cubic(xk))
    x = np.linspace(0, 2.2, 23)
    np.testing.assert_allclose(g(x), cubic(x), atol=1e-12)
    np.testing.assert_allclose(g.value(x, 2), cubic.value(x, 2), atol=1e-10)
    # linear extrapolation with the end slope
    np.testing.assert_allclose(g(3.0), g(2.2) + 0.8 * g.value(2.2, 1), atol=1e-12)
    assert g.value(3.0, 2) == 0.0


def test_linear_function_accepts_opensim_coefficients():
    f = fn.function_from_dict({"type": "LinearFunction", "coefficients": [2.0, 1.0]})
    assert f == fn.LinearFunction(2.0, 1.0)
    m = fn.MultiplierFunction({"type": "Constant", "value": 2.0}, 3.0)
    assert m(0.0) == 6.0 and m.scaled(2.0).scale == 6.0
    assert fn.Constant(1.0).is_constant and not fn.LinearFunction(1.0, 0.0).is_constant


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: fn.SimmSpline([0.0, 2.0, 1.0], [0, 1, 2]), "strictly increasing"),
        (lambda: fn.SimmSpline([0.0, 1.0, 1.0], [0, 1, 2]), "strictly increasing"),
        (lambda: fn.PiecewiseLinearFunction([0.0], [1.0]), "at least 2 points"),
        (lambda: fn.SimmSpline([0.0, 1.0], [0.0, 1.0, 2.0]), "as many y values"),
        (lambda: fn.SimmSpline([0.0, np.nan], [0.0, 1.0]), "finite"),
        (lambda: fn.Constant(np.inf), "finite"),
        (lambda: fn.PolynomialFunction([]), "at least one coefficient"),
        (lambda: fn.function_from_dict({"type": "Sine"}), "unknown type 'Sine'"),
        (lambda: fn.function_from_dict({"type": "Constant"}), "needs the field 'value'"),
        (lambda: fn.function_from_dict({"type": "Constant", "value": 1, "y": 2}), "unknown fields"),
        (lambda: fn.function_from_dict([1, 2]), "must be a dict"),
        (lambda: fn.as_function(3.0), "function object or its dict"),
    ],
)
def test_bad_data_raises_model_error(make, match):
    with pytest.raises(ModelError, match=match):
        make()


def test_bad_derivative_order_raises_data_error():
    with pytest.raises(DataError, match="derivative"):
        fn.Constant(1.0).value(0.0, derivative=3)
