"""Functions of one variable as OpenSim evaluates them.

OpenSim drives the axes of a ``CustomJoint`` (and moving path points,
coordinate couplers, ...) with functions of one coordinate. This module
evaluates the ones that OpenSim models use, with OpenSim's own arithmetic so
that values agree with OpenSim to round-off:

=========================  =====================================================
``Constant(value)``        ``value``
``LinearFunction``         ``slope * x + intercept``
``PolynomialFunction``     ``c[0] x^(n-1) + ... + c[n-1]`` (OpenSim's order:
                           highest power first)
``PiecewiseLinearFunction``  straight segments between the points
``SimmSpline``             SIMM's cubic spline (below)
``NaturalCubicSpline``     the same spline under OpenSim's older name
``MultiplierFunction``     ``scale * function(x)``
=========================  =====================================================

Every function object is immutable; ``f(x)`` and ``f.value(x, derivative=0)``
(derivative 0, 1 or 2) work on any array shape of ``x``. ``f.to_dict()`` gives
a JSON-able dict whose ``"type"`` is OpenSim's XML element name, read back by
:func:`function_from_dict`. ``f.scaled(factor)`` returns a function with values
``factor * f(x)``, made as OpenSim's scaling makes it (a ``MultiplierFunction``
around ``f``, or ``f`` with its scale multiplied if ``f`` is one already).

Notes
-----
**SimmSpline and NaturalCubicSpline.** Both are the interpolating cubic spline
of Forsythe, Malcolm & Moler (1977, ``spline``/``seval``), which OpenSim
inherited from SIMM (``SimmSpline.cpp``; ``NaturalCubicSpline.cpp`` is the same
code): *not* a natural spline, and not scipy's ``CubicSpline`` end conditions.

- With 4 or more points, the third derivative at each end equals the third
  derivative of the cubic through the four points nearest that end (divided
  differences); with 3 points the end conditions reduce to zero third
  derivative at both ends (one parabola); with 2 points the spline is the line
  through them. Interval lengths are floored at 1e-7 (``TINY_NUMBER``).
- Outside ``[x[0], x[-1]]`` the function continues as a straight line with the
  end slope (second derivative 0 there); within 2e-13 of an end point the value
  is the end point's ``y`` (and the second derivative the end value).
- Inside, the interval is found by OpenSim's binary search, so at a knot the
  same polynomial piece is used as in OpenSim (this matters for the derivative
  of a ``PiecewiseLinearFunction`` at its interior points).

**PiecewiseLinearFunction.** Straight segments; outside the range the end
segments continue; the first derivative at a knot is the slope of the segment
OpenSim's binary search picks; the second derivative is 0 everywhere.

References: OpenSim 4.x sources ``OpenSim/Common/SimmSpline.cpp``,
``PiecewiseLinearFunction.cpp``, ``MultiplierFunction.cpp``,
``SpatialTransform.cpp`` (scaling); G. E. Forsythe, M. A. Malcolm, C. B. Moler,
*Computer Methods for Mathematical Computations*, Prentice-Hall, 1977, §4.4.

Examples
--------
>>> import numpy as np
>>> from ahbm.kinematics.functions import SimmSpline, function_from_dict
>>> f = SimmSpline([0.0, 0.5, 1.0, 1.5], [0.0, 0.2, 0.1, 0.4])
>>> float(f(0.5))
0.2
>>> f.value(np.array([0.25, 2.0]), derivative=1).shape
(2,)
>>> g = function_from_dict(f.to_dict())
>>> bool(np.allclose(g(0.7), f(0.7)))
True
"""

from __future__ import annotations

import json
import math

import numpy as np

from ahbm.errors import DataError, ModelError

__all__ = [
    "Function",
    "Constant",
    "LinearFunction",
    "PolynomialFunction",
    "PiecewiseLinearFunction",
    "SimmSpline",
    "NaturalCubicSpline",
    "MultiplierFunction",
    "function_from_dict",
    "as_function",
]

_TINY = 1e-7  # OpenSim's TINY_NUMBER (floor of an interval length)
_ROUNDOFF = 2e-13  # OpenSim's ROUNDOFF_ERROR (end-point test)


def _frozen_array(values, what: str, *, ndim: int = 1) -> np.ndarray:
    try:
        arr = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"{what} must be numbers, got {values!r}") from err
    if arr.ndim != ndim:
        raise ModelError(f"{what} must be a {ndim}-D list of numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ModelError(f"{what} must be finite numbers, got {values!r}")
    arr.setflags(write=False)
    return arr


def _finite_float(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise ModelError(f"{what} must be a number, got {value!r}") from err
    if not math.isfinite(v):
        raise ModelError(f"{what} must be a finite number, got {value!r}")
    return v


def _check_points(name: str, x, y) -> tuple[np.ndarray, np.ndarray]:
    x = _frozen_array(x, f"{name} x")
    y = _frozen_array(y, f"{name} y")
    if x.shape != y.shape:
        raise ModelError(f"{name} needs as many y values as x values, got {x.size} and {y.size}")
    if x.size < 2:
        raise ModelError(f"{name} needs at least 2 points, got {x.size}")
    # np.diff(x) <= 0 without the differences: for finite floats b - a <= 0 iff b <= a
    if (x[1:] <= x[:-1]).any():
        i = int(np.argmax(np.diff(x) <= 0))
        raise ModelError(
            f"{name} x values must be strictly increasing; x[{i}] = {x[i]!r} is followed by "
            f"x[{i + 1}] = {x[i + 1]!r} (sort the points and remove duplicates)"
        )
    return x, y


def _as_x(x) -> np.ndarray:
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise DataError(f"Expected `x` to be a numeric array, got {type(x).__name__}") from err


def _check_derivative(derivative) -> int:
    if derivative not in (0, 1, 2) or isinstance(derivative, bool):
        raise DataError(f"Expected `derivative` to be 0, 1 or 2, got {derivative!r}")
    return int(derivative)


def _opensim_interval(knots: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Index k of the interval [knots[k], knots[k+1]] that OpenSim's binary search picks.

    Only meaningful for ``knots[0] <= x <= knots[-1]``. Inside an interval the
    interval is unique (``searchsorted``); at an interior knot OpenSim's search
    may stop on either side, so those points run its search.
    """
    n = knots.size
    k = np.minimum(np.maximum(np.searchsorted(knots, x, side="right") - 1, 0), n - 2)
    hit = (x == knots[k]) & (k > 0)
    if hit.any():
        k = k.copy() if k.ndim else np.array(k)
        k[hit] = _binary_search(knots, x[hit])
    return k


def _near_ends(knots: np.ndarray, x: np.ndarray) -> bool:
    """True if some x is outside the knots or within OpenSim's round-off of an end knot."""
    if x.size == 0:
        return False
    lo, hi = np.min(x), np.max(x)
    if np.isnan(lo):
        return True
    return bool(lo - knots[0] <= _ROUNDOFF or hi - knots[-1] >= -_ROUNDOFF)


def _ends(knots: np.ndarray, x: np.ndarray, inside, values) -> np.ndarray:
    """OpenSim's end cases: (at the first knot, before it, at the last knot, after it)."""
    at_first, before, at_last, after = values
    out = np.where(np.abs(x - knots[0]) <= _ROUNDOFF, at_first, inside)
    out = np.where(np.abs(x - knots[-1]) <= _ROUNDOFF, at_last, out)
    out = np.where(x < knots[0], before, out)
    return np.where(x > knots[-1], after, out)


def _binary_search(knots: np.ndarray, x: np.ndarray) -> np.ndarray:
    """OpenSim's binary search (SimmSpline.cpp) for the points `x` (inside the range)."""
    n = knots.size
    lo = np.zeros(x.shape, dtype=np.intp)
    hi = np.full(x.shape, n, dtype=np.intp)
    k_out = np.zeros(x.shape, dtype=np.intp)
    active = np.ones(x.shape, dtype=bool)
    for _ in range(2 * n.bit_length() + 2):
        if not active.any():
            break
        k = (lo + hi) // 2
        below = x < knots[k]
        above = x > knots[np.minimum(k + 1, n - 1)]
        hi = np.where(active & below, k, hi)
        lo = np.where(active & ~below & above, k, lo)
        done = active & ~below & ~above
        k_out = np.where(done, k, k_out)
        active = active & ~done
    return np.minimum(k_out, n - 2)


class Function:
    """Base class of the OpenSim functions of one variable (immutable).

    Subclasses implement ``_value(x, derivative)`` on a float array and
    ``to_dict()``. Two functions are equal when their dicts are equal.
    """

    __slots__ = ()

    #: OpenSim's XML element name (the ``"type"`` of :meth:`to_dict`).
    type_name = "Function"

    def __setattr__(self, key, value):
        raise ModelError(f"{type(self).__name__} objects are read-only (cannot set {key!r})")

    def __delattr__(self, key):
        raise ModelError(f"{type(self).__name__} objects are read-only (cannot delete {key!r})")

    def _set(self, **values) -> None:
        for k, v in values.items():
            object.__setattr__(self, k, v)

    def __call__(self, x):
        """Value at `x` (any shape); same as ``self.value(x)``."""
        return self.value(x)

    def value(self, x, derivative: int = 0):
        """Value, first or second derivative at `x`.

        Parameters
        ----------
        x : array_like, any shape
            Argument (the coordinate: rad or m).
        derivative : {0, 1, 2}
            Order of the derivative.

        Returns
        -------
        ndarray, shape of `x` (a float for a scalar `x`)
        """
        d = _check_derivative(derivative)
        xa = _as_x(x)
        out = np.asarray(self._value(xa, d), dtype=float)
        out = np.broadcast_to(out, xa.shape).copy() if out.shape != xa.shape else out
        return out if xa.ndim else float(out)

    def value_and_derivatives(self, x, order: int = 2) -> list:
        """``[f(x), f'(x), ...]`` up to the derivative `order` (0, 1 or 2), sharing the work.

        Parameters
        ----------
        x : array_like, any shape
        order : {0, 1, 2}

        Returns
        -------
        list of ndarray, each of the shape of `x`

        Examples
        --------
        >>> from ahbm.kinematics.functions import PolynomialFunction
        >>> [float(v) for v in PolynomialFunction([1.0, 0.0, 0.0]).value_and_derivatives(3.0)]
        [9.0, 6.0, 2.0]
        """
        order = _check_derivative(order)
        xa = _as_x(x)
        out = self._derivatives(xa, order)
        return [
            v if type(v) is np.ndarray and v.shape == xa.shape and v.dtype == float
            else np.broadcast_to(np.asarray(v, dtype=float), xa.shape).copy()
            for v in out
        ]  # fmt: skip

    def _derivatives(self, x: np.ndarray, order: int) -> list:
        return [self._value(x, d) for d in range(order + 1)]

    def _value(self, x: np.ndarray, derivative: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover
        raise NotImplementedError

    def scaled(self, factor) -> Function:
        """A function whose values are ``factor * self(x)``.

        Made as OpenSim's scaling of a ``SpatialTransform`` makes it: a
        :class:`MultiplierFunction` wrapping this function (a
        ``MultiplierFunction`` gets its scale multiplied instead).

        Examples
        --------
        >>> from ahbm.kinematics.functions import LinearFunction
        >>> LinearFunction(2.0, 1.0).scaled(0.5)(1.0)
        1.5
        """
        return MultiplierFunction(self, _finite_float(factor, "scale factor"))

    @property
    def is_constant(self) -> bool:
        """True when the function does not depend on its argument."""
        return False

    def __eq__(self, other):
        if not isinstance(other, Function):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __reduce__(self):
        return (function_from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        d = self.to_dict()
        d.pop("type")
        args = ", ".join(f"{k}={v!r}" for k, v in d.items())
        return f"{type(self).__name__}({args})"


class Constant(Function):
    """The constant function ``value`` (OpenSim's ``Constant``).

    Examples
    --------
    >>> from ahbm.kinematics.functions import Constant
    >>> Constant(0.3).value([1.0, 2.0], derivative=1)
    array([0., 0.])
    """

    __slots__ = ("constant",)
    type_name = "Constant"

    def __init__(self, value):
        self._set(constant=_finite_float(value, "Constant value"))

    def _value(self, x, derivative):
        return np.full(x.shape, self.constant if derivative == 0 else 0.0)

    @property
    def is_constant(self) -> bool:
        return True

    def to_dict(self) -> dict:
        return {"type": "Constant", "value": self.constant}


class LinearFunction(Function):
    """``slope * x + intercept`` (OpenSim's ``LinearFunction``).

    OpenSim's XML holds ``coefficients`` ``[slope, intercept]``.

    Examples
    --------
    >>> from ahbm.kinematics.functions import LinearFunction
    >>> LinearFunction(2.0, 0.5)(1.0)
    2.5
    """

    __slots__ = ("slope", "intercept")
    type_name = "LinearFunction"

    def __init__(self, slope=1.0, intercept=0.0):
        self._set(
            slope=_finite_float(slope, "LinearFunction slope"),
            intercept=_finite_float(intercept, "LinearFunction intercept"),
        )

    def _value(self, x, derivative):
        if derivative == 0:
            return self.slope * x + self.intercept
        return np.full(x.shape, self.slope if derivative == 1 else 0.0)

    @property
    def is_constant(self) -> bool:
        return self.slope == 0.0

    def to_dict(self) -> dict:
        return {"type": "LinearFunction", "slope": self.slope, "intercept": self.intercept}


class PolynomialFunction(Function):
    """A polynomial with OpenSim's coefficient order (highest power first).

    ``PolynomialFunction([a, b, c])`` is ``a x² + b x + c``.

    Examples
    --------
    >>> from ahbm.kinematics.functions import PolynomialFunction
    >>> PolynomialFunction([1.0, 0.0, 2.0]).value(3.0, derivative=1)
    6.0
    """

    __slots__ = ("coefficients",)
    type_name = "PolynomialFunction"

    def __init__(self, coefficients):
        c = _frozen_array(coefficients, "PolynomialFunction coefficients")
        if c.size == 0:
            raise ModelError("PolynomialFunction needs at least one coefficient, got none")
        self._set(coefficients=c)

    def _value(self, x, derivative):
        c = np.polyder(self.coefficients, derivative) if derivative else self.coefficients
        out = np.zeros(x.shape)
        for ci in np.atleast_1d(c):  # Horner
            out = out * x + ci
        return out

    @property
    def is_constant(self) -> bool:
        return bool(np.all(self.coefficients[:-1] == 0.0))

    def to_dict(self) -> dict:
        return {"type": "PolynomialFunction", "coefficients": self.coefficients.tolist()}


class _PointsFunction(Function):
    """Base of the functions through points ``(x[i], y[i])`` (x, y, slopes ``_b``)."""

    __slots__ = ("x", "y", "_b")

    def _value(self, xq, derivative):
        return self._derivatives(xq, derivative)[derivative]

    @property
    def is_constant(self) -> bool:
        return bool(np.all(self.y == self.y[0]))

    def to_dict(self) -> dict:
        return {"type": self.type_name, "x": self.x.tolist(), "y": self.y.tolist()}


class PiecewiseLinearFunction(_PointsFunction):
    """Straight segments through the points ``(x[i], y[i])`` (OpenSim's same-named function).

    Outside ``[x[0], x[-1]]`` the end segments continue; see the module notes
    for the derivative at a knot.

    Examples
    --------
    >>> from ahbm.kinematics.functions import PiecewiseLinearFunction
    >>> PiecewiseLinearFunction([0.0, 1.0, 2.0], [0.0, 1.0, 0.0])([0.5, 1.5, 3.0])
    array([ 0.5,  0.5, -1. ])
    """

    __slots__ = ()
    type_name = "PiecewiseLinearFunction"

    def __init__(self, x, y):
        x, y = _check_points(type(self).__name__, x, y)
        n = x.size
        b = np.empty(n)
        for i in range(n - 1):
            b[i] = (y[i + 1] - y[i]) / max(_TINY, x[i + 1] - x[i])
        b[n - 1] = b[n - 2]
        b.setflags(write=False)
        self._set(x=x, y=y, _b=b)

    def _derivatives(self, xq, order):
        x, y, b = self.x, self.y, self._b
        n = x.size
        k = _opensim_interval(x, xq)
        out = [y[k] + (xq - x[k]) * b[k], b[k], np.zeros(xq.shape)][: order + 1]
        if _near_ends(x, xq):
            ends = (
                (y[0], y[0] + (xq - x[0]) * b[0], y[n - 1], y[n - 1] + (xq - x[n - 1]) * b[n - 1]),
                (b[0], b[0], b[n - 1], b[n - 1]),
                (0.0, 0.0, 0.0, 0.0),
            )
            out = [_ends(x, xq, o, ends[d]) for d, o in enumerate(out)]
        return out


def _simm_coefficients(x: np.ndarray, y: np.ndarray):
    """Coefficients b, c, d of SIMM's cubic spline, in OpenSim's order of operations.

    The recursions run on Python floats (the same IEEE operations as on numpy's
    scalars, several times faster element by element) and return read-only arrays.
    """
    n = x.size
    if n == 2:
        t = max(_TINY, float(x[1] - x[0]))
        b = np.full(2, (float(y[1]) - float(y[0])) / t)
        c = np.zeros(2)
        d = np.zeros(2)
        for a in (b, c, d):
            a.setflags(write=False)
        return b, c, d
    x, y = x.tolist(), y.tolist()
    b = [0.0] * n
    c = [0.0] * n
    d = [0.0] * n
    nm1, nm2 = n - 1, n - 2
    # tridiagonal system: b = diagonal, d = off-diagonal, c = right-hand side
    d[0] = max(_TINY, x[1] - x[0])
    c[1] = (y[1] - y[0]) / d[0]
    for i in range(1, nm1):
        d[i] = max(_TINY, x[i + 1] - x[i])
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (y[i + 1] - y[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    # end conditions: third derivatives at the ends from divided differences
    b[0] = -d[0]
    b[nm1] = -d[nm2]
    c[0] = 0.0
    c[nm1] = 0.0
    if n > 3:
        d31 = max(_TINY, x[3] - x[1])
        d20 = max(_TINY, x[2] - x[0])
        d1 = max(_TINY, x[nm1] - x[n - 3])
        d2 = max(_TINY, x[nm2] - x[n - 4])
        d30 = max(_TINY, x[3] - x[0])
        d3 = max(_TINY, x[nm1] - x[n - 4])
        c[0] = c[2] / d31 - c[1] / d20
        c[nm1] = c[nm2] / d1 - c[n - 3] / d2
        c[0] = c[0] * d[0] * d[0] / d30
        c[nm1] = -c[nm1] * d[nm2] * d[nm2] / d3
    for i in range(1, n):  # forward elimination
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[nm1] /= b[nm1]  # back substitution
    for i in range(nm2, -1, -1):
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    # polynomial coefficients
    b[nm1] = (y[nm1] - y[nm2]) / d[nm2] + d[nm2] * (c[nm2] + 2.0 * c[nm1])
    for i in range(nm1):
        b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] *= 3.0
    c[nm1] *= 3.0
    d[nm1] = d[nm2]
    b, c, d = np.array(b), np.array(c), np.array(d)
    for a in (b, c, d):
        a.setflags(write=False)
    return b, c, d


class SimmSpline(_PointsFunction):
    """SIMM's interpolating cubic spline through ``(x[i], y[i])`` (OpenSim's ``SimmSpline``).

    End conditions, extrapolation and knot handling as in OpenSim (module
    notes); values and first and second derivatives agree with OpenSim to
    round-off.

    Parameters
    ----------
    x, y : array_like, shape (n,), n >= 2
        Knots (strictly increasing) and values.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.functions import SimmSpline
    >>> f = SimmSpline(np.radians([-120, -60, 0, 10]), [0.0, 0.004, 0.001, -0.002])
    >>> round(float(f(np.radians(-60))), 12)
    0.004
    """

    __slots__ = ("_c", "_d")
    type_name = "SimmSpline"

    def __init__(self, x, y):
        x, y = _check_points(type(self).__name__, x, y)
        b, c, d = _simm_coefficients(x, y)
        self._set(x=x, y=y, _b=b, _c=c, _d=d)

    def _derivatives(self, xq, order):
        x, y, b, c, d = self.x, self.y, self._b, self._c, self._d
        n = x.size
        k = np.zeros(xq.shape, dtype=np.intp) if n < 3 else _opensim_interval(x, xq)
        dx = xq - x[k]
        bk, ck, dk = b[k], c[k], d[k]
        out = [y[k] + dx * (bk + dx * (ck + dx * dk))]
        if order >= 1:
            out.append(bk + dx * (2.0 * ck + 3.0 * dx * dk))
        if order >= 2:
            out.append(2.0 * ck + 6.0 * dx * dk)
        if _near_ends(x, xq):
            ends = (
                (y[0], y[0] + (xq - x[0]) * b[0], y[n - 1], y[n - 1] + (xq - x[n - 1]) * b[n - 1]),
                (b[0], b[0], b[n - 1], b[n - 1]),
                (2.0 * c[0], 0.0, 2.0 * c[n - 1], 0.0),
            )
            out = [_ends(x, xq, o, ends[j]) for j, o in enumerate(out)]
        return out


class NaturalCubicSpline(SimmSpline):
    """OpenSim's ``NaturalCubicSpline``: the same spline as :class:`SimmSpline`.

    Despite its name, OpenSim's ``NaturalCubicSpline`` uses SIMM's end
    conditions (third derivatives from divided differences), not zero second
    derivatives; it is kept as its own type so files keep their element name.

    Examples
    --------
    >>> from ahbm.kinematics.functions import NaturalCubicSpline
    >>> NaturalCubicSpline([0.0, 1.0, 2.0], [0.0, 1.0, 4.0])(1.5)
    2.25
    """

    __slots__ = ()
    type_name = "NaturalCubicSpline"


class MultiplierFunction(Function):
    """``scale * function(x)`` (OpenSim's ``MultiplierFunction``).

    Examples
    --------
    >>> from ahbm.kinematics.functions import MultiplierFunction, LinearFunction
    >>> MultiplierFunction(LinearFunction(1.0, 1.0), 2.0)(1.0)
    4.0
    """

    __slots__ = ("function", "scale")
    type_name = "MultiplierFunction"

    def __init__(self, function, scale=1.0):
        self._set(
            function=as_function(function, "MultiplierFunction function"),
            scale=_finite_float(scale, "MultiplierFunction scale"),
        )

    def _value(self, x, derivative):
        return self.scale * np.asarray(self.function._value(x, derivative), dtype=float)

    def _derivatives(self, x, order):
        return [
            self.scale * np.asarray(v, dtype=float) for v in self.function._derivatives(x, order)
        ]

    def scaled(self, factor) -> Function:
        return MultiplierFunction(self.function, self.scale * _finite_float(factor, "scale factor"))

    @property
    def is_constant(self) -> bool:
        return self.scale == 0.0 or self.function.is_constant

    def to_dict(self) -> dict:
        return {
            "type": "MultiplierFunction",
            "function": self.function.to_dict(),
            "scale": self.scale,
        }


_TYPES = {
    cls.type_name: cls
    for cls in (
        Constant,
        LinearFunction,
        PolynomialFunction,
        PiecewiseLinearFunction,
        SimmSpline,
        NaturalCubicSpline,
        MultiplierFunction,
    )
}


#: the fields of each type's dict
_FIELDS = {
    "Constant": frozenset({"type", "value"}),
    "LinearFunction": frozenset({"type", "slope", "intercept", "coefficients"}),
    "PolynomialFunction": frozenset({"type", "coefficients"}),
    "PiecewiseLinearFunction": frozenset({"type", "x", "y"}),
    "SimmSpline": frozenset({"type", "x", "y"}),
    "NaturalCubicSpline": frozenset({"type", "x", "y"}),
    "MultiplierFunction": frozenset({"type", "function", "scale"}),
}


def _need(d: dict, key: str, what: str):
    if key not in d:
        raise ModelError(f"{what} needs the field {key!r}; got the fields {sorted(d)}")
    return d[key]


def function_from_dict(d, *, what: str = "function") -> Function:
    """The function that ``d`` (a dict from :meth:`Function.to_dict`) describes.

    Parameters
    ----------
    d : dict
        ``{"type": name, ...}`` with ``name`` one of ``Constant``,
        ``LinearFunction`` (``slope``, ``intercept``; or OpenSim's
        ``coefficients: [slope, intercept]``), ``PolynomialFunction``
        (``coefficients``), ``PiecewiseLinearFunction``, ``SimmSpline``,
        ``NaturalCubicSpline`` (``x``, ``y``), ``MultiplierFunction``
        (``function``, ``scale``).
    what : str, optional
        What the dict is, for error messages.

    Returns
    -------
    Function

    Raises
    ------
    ModelError
        Unknown type, missing field or bad data.

    Examples
    --------
    >>> from ahbm.kinematics.functions import function_from_dict
    >>> function_from_dict({"type": "Constant", "value": 0.1})(5.0)
    0.1
    """
    if not isinstance(d, dict):
        raise ModelError(f"{what} must be a dict with a 'type' field, got {type(d).__name__}")
    kind = _need(d, "type", what)
    if not isinstance(kind, str) or kind not in _TYPES:
        raise ModelError(f"{what} has the unknown type {kind!r:.60}; known types: {sorted(_TYPES)}")
    known = _FIELDS[kind]
    if not d.keys() <= known:
        raise ModelError(f"{what} ({kind}) has unknown fields {sorted(set(d) - known)}")
    label = f"{what} ({kind})"
    if kind == "Constant":
        return Constant(_need(d, "value", label))
    if kind == "LinearFunction":
        if "coefficients" in d:
            c = _frozen_array(d["coefficients"], f"{label} coefficients")
            if c.size != 2:
                raise ModelError(
                    f"{label} coefficients must be [slope, intercept], got {c.tolist()}"
                )
            return LinearFunction(c[0], c[1])
        return LinearFunction(_need(d, "slope", label), _need(d, "intercept", label))
    if kind == "PolynomialFunction":
        return PolynomialFunction(_need(d, "coefficients", label))
    if kind == "MultiplierFunction":
        inner = function_from_dict(_need(d, "function", label), what=f"{label} function")
        return MultiplierFunction(inner, d.get("scale", 1.0))
    return _TYPES[kind](_need(d, "x", label), _need(d, "y", label))


def as_function(f, what: str = "function") -> Function:
    """`f` as a :class:`Function`: a function object as is, a dict via :func:`function_from_dict`.

    Examples
    --------
    >>> from ahbm.kinematics.functions import as_function
    >>> as_function({"type": "LinearFunction", "slope": 1.0, "intercept": 0.0})
    LinearFunction(slope=1.0, intercept=0.0)
    """
    if isinstance(f, Function):
        return f
    if isinstance(f, dict):
        return function_from_dict(f, what=what)
    raise ModelError(f"{what} must be a function object or its dict, got {type(f).__name__}")
