"""OpenSim's functions of one variable against ahbm.kinematics.functions (through the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from opensim_oracle import opensim_run
from test_opensim_joints import function_xml

from ahbm.kinematics.functions import (
    Constant,
    LinearFunction,
    MultiplierFunction,
    NaturalCubicSpline,
    PiecewiseLinearFunction,
    PolynomialFunction,
    SimmSpline,
)

_SCRIPT = """
import os, tempfile

def make(text):
    # built from XML as a model file would be (OpenSim 4 reads NaturalCubicSpline as SimmSpline)
    path = os.path.join(tempfile.mkdtemp(), "f.xml")
    with open(path, "w") as fh:
        fh.write('<?xml version="1.0" encoding="UTF-8" ?><OpenSimDocument Version="40000">'
                 + text + "</OpenSimDocument>")
    return osim.Function.safeDownCast(osim.OpenSimObject.makeObjectFromFile(path))

OUT["values"] = []
for text in INPUTS["functions"]:
    f = make(text)
    rows = []
    for x in INPUTS["x"]:
        v = osim.Vector(1, x)
        rows.append([f.calcValue(v),
                     f.calcDerivative(osim.StdVectorInt([0]), v),
                     f.calcDerivative(osim.StdVectorInt([0, 0]), v)])
    OUT["values"].append(rows)
"""


def _named_xml(f):
    """The function's OpenSim XML with a name on the outer element."""
    return function_xml(f).replace(f"<{f.type_name}>", f'<{f.type_name} name="f">', 1)


def _functions():
    rng = np.random.default_rng(7)
    xk = np.sort(rng.uniform(-2.0, 2.0, 9))
    yk = rng.normal(size=9)
    spline_sets = [
        (xk, yk),
        (xk[:4], yk[:4]),  # smallest spline with divided-difference ends
        (xk[:3], yk[:3]),  # three points
        (xk[:2], yk[:2]),  # a line
        (
            np.radians([-120, -100, -80, -60, -40, -20, -10, 11.3, 19.3, 28.1, 87.2, 120]),
            [
                -0.00294,
                0.00164,
                0.00377,
                0.00376,
                0.00194,
                -0.00092,
                -0.00284,
                -0.00480,
                -0.00499,
                -0.00511,
                -0.00499,
                -0.00482,
            ],
        ),  # a knee translation (SIMM gait model)
    ]
    out = []
    for x, y in spline_sets:
        out += [SimmSpline(x, y), NaturalCubicSpline(x, y)]
    out += [
        PiecewiseLinearFunction(xk, yk),
        PiecewiseLinearFunction(xk[:2], yk[:2]),
        Constant(0.37),
        LinearFunction(-1.3, 0.2),
        PolynomialFunction([0.3, -1.0, 0.5, 2.0]),
        PolynomialFunction([1.5]),
        MultiplierFunction(SimmSpline(xk, yk), -0.8),
        MultiplierFunction(MultiplierFunction(PolynomialFunction([1.0, 0.0, 0.0]), 2.0), 0.5),
    ]
    return out, xk


def test_functions_match_opensim():
    functions, xk = _functions()
    rng = np.random.default_rng(3)
    # random points, the knots themselves, points outside the range
    x = np.concatenate([rng.uniform(-3.0, 3.0, 40), xk, [-2.5, 2.5], np.radians([-130, 0, 130])])
    out = opensim_run(_SCRIPT, functions=[_named_xml(f) for f in functions], x=x)
    for f, rows in zip(functions, out["values"]):
        ref = np.array(rows)
        together = f.value_and_derivatives(x, 2)
        for order in range(3):
            got = f.value(x, derivative=order)
            np.testing.assert_array_equal(together[order], got)
            scale = max(1.0, np.max(np.abs(ref[:, order])))
            np.testing.assert_allclose(
                got, ref[:, order], rtol=0, atol=1e-12 * scale, err_msg=f"{f!r} derivative {order}"
            )


def test_scaled_functions_match_opensim_multiplier():
    functions, _ = _functions()
    x = np.linspace(-2.5, 2.5, 11)
    scaled = [f.scaled(1.7) for f in functions[:3]]
    out = opensim_run(_SCRIPT, functions=[_named_xml(f) for f in scaled], x=x)
    for f, g, rows in zip(functions, scaled, out["values"]):
        assert isinstance(g, MultiplierFunction)
        np.testing.assert_allclose(np.array(rows)[:, 0], 1.7 * f(x), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("kind", ["SimmSpline", "PolynomialFunction"])
def test_polynomial_coefficient_order_and_spline_interpolation(kind):
    # closed forms: OpenSim's polynomial order is highest power first; a spline interpolates
    if kind == "PolynomialFunction":
        f = PolynomialFunction([2.0, -3.0, 1.0])
        assert f(2.0) == pytest.approx(2 * 4 - 3 * 2 + 1)
    else:
        xk = np.array([0.0, 0.3, 1.0, 1.2, 2.0])
        yk = np.array([1.0, -1.0, 0.5, 0.2, 0.0])
        np.testing.assert_allclose(SimmSpline(xk, yk)(xk), yk, atol=1e-14)
