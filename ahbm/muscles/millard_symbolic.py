"""OpenSim's Millard2012EquilibriumMuscle on CasADi symbols (curves, forces, activation).

The numeric model (:mod:`ahbm.muscles.millard_curves`, :mod:`ahbm.muscles.millard`)
evaluates each quintic Bézier curve by solving ``x(u) = x`` for the Bézier parameter ``u``
with a bracketed Newton iteration that stops on a tolerance: neither the iteration count
nor the bracket can be written as one smooth expression. Here each curve becomes a
CasADi expression that is exact to round-off and smooth inside each Bézier section:

1. the section is selected by ``if_else`` on ``x`` (its coefficients, not its value, so
   the expression holds one Newton solve, not one per section); ``x`` is clamped to the
   curve's Bézier range and the linear extrapolation outside it is selected the same way;
2. the start ``u0(t)``, ``t = (x - x_a)/(x_b - x_a)``, is a degree-5 polynomial fitted
   (least squares, at build time, from the numeric inverse) to the section's inverse
   (split into 2, 4, ... pieces of x, selected like the sections, where one start
   needs more than 6 steps);
3. a fixed number of Newton steps ``u ← u − (x(u) − x)/x'(u)`` follows, the number chosen
   at build time so that ``x(u) − x`` is at round-off on a dense grid of the section,
   plus two: the derivative of the last iterate, taken through the iteration by
   algorithmic differentiation, equals the implicit-function derivative ``1/x'(u)`` to
   the accuracy of the iterate before it, so the first and second derivatives of the
   curve are exact to round-off too (``tests/muscles/test_millard_symbolic.py`` checks
   values against :func:`~ahbm.muscles.millard_curves.millard_active_force_length` and
   the other numeric curves, first and second derivatives against their analytic
   derivatives and against finite differences);
4. ``y = y(u)``.

The muscle functions take one muscle of a :class:`MillardParameters` (the curves as
OpenSim's muscle uses them, :meth:`MillardParameters.as_used`) and CasADi expressions:

- :func:`millard_rigid_tendon_force_expression`: ``millard_equilibrium(...,
  rigid_tendon=True)``'s tendon force, with its clamps (minimum fiber length, no pushing
  fiber);
- :func:`millard_elastic_expressions`: the equilibrium formulation used by direct
  collocation: the normalized fiber length ``l̃M`` and velocity ``ṽM`` are unknowns of the
  problem (a state and a control, ``dl̃M/dt = ṽM vmax``) and the equilibrium residual
  ``(a fL(l̃M) fV(ṽM) + fPE(l̃M) + β ṽM) cos α − fT(l̃T)`` is held at zero; the tendon
  force is ``F0 fT(l̃T)``, ``l̃T = (lMT − lM cos α)/lTs``;
- :func:`millard_activation_rate_expression`: OpenSim's first-order activation dynamics.

References
----------
Millard M, Uchida T, Seth A, Delp SL (2013) Flexing computational muscle: modeling and
simulation of musculotendon dynamics. J Biomech Eng 135:021005.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ahbm._internal.validation import as_choice
from ahbm.errors import DataError
from ahbm.muscles._bezier import solve_u
from ahbm.muscles.millard_curves import MillardParameters

__all__ = [
    "MILLARD_CURVES",
    "millard_activation_rate_expression",
    "millard_curve_expression",
    "millard_elastic_expressions",
    "millard_rigid_tendon_force_expression",
]

#: curve name -> attribute of MillardParameters holding its Bézier curves
MILLARD_CURVES = {
    "active_force_length": "_active_curve",
    "passive_force_length": "_passive_curve",
    "force_velocity": "_velocity_curve",
    "force_velocity_inverse": "_velocity_inverse_curve",
    "tendon_force_length": "_tendon_curve",
}

_EPS = np.finfo(float).eps
_SIGNIFICANT = _EPS ** (7.0 / 8.0)  # SimTK::SignificantReal
_GUESS_DEGREE = 5
_MAX_STEPS = 12
_GOOD_STEPS = 8
# Bernstein (control points) -> power basis of a quintic: coefs = points @ _POWER
_POWER = np.array([[math.comb(5, i) * math.comb(5 - i, k - i) * (-1.0) ** (k - i) if k >= i
                    else 0.0 for k in range(6)] for i in range(6)])  # fmt: skip


def _casadi():
    try:
        import casadi
    except ImportError as err:  # pragma: no cover - casadi is in the optimize extra
        raise DataError(
            "Millard muscles on symbols need casadi: pip install 'ahbm[optimize]'"
        ) from err
    return casadi


def _piece(px, cx, dcx, xa, xb):
    """Fitted start and Newton step count on [xa, xb] of one Bézier section, or None."""
    polyval = np.polynomial.polynomial.polyval
    t = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, 161))  # Chebyshev points on [0, 1]
    u_fit = solve_u(np.tile(px, (t.size, 1)), xa + t * (xb - xa))
    guess = np.polynomial.polynomial.polyfit(t, u_fit, _GUESS_DEGREE)
    # the steps needed on a dense grid (the same recurrence as the expression)
    t = np.linspace(0.0, 1.0, 2001)
    x = xa + t * (xb - xa)
    u = polyval(t, guess)
    with np.errstate(all="ignore"):
        for steps in range(1, _MAX_STEPS + 1):
            u = u - (polyval(u, cx) - x) / polyval(u, dcx)
            # the round-off of x(u) in the power basis (Horner) and of x
            round_off = 8.0 * _EPS * (polyval(np.abs(u), np.abs(cx)) + np.abs(x))
            if np.all(np.abs(polyval(u, cx) - x) <= round_off):
                return guess, steps + 2
    return None


def _section_data(px, py):
    """Pieces of one Bézier section: (power coefficients, start, range, Newton steps).

    The section's x range is split in 1, 2, 4, ... equal pieces until each piece's
    fitted start converges in at most ``_GOOD_STEPS`` steps (low curviness makes
    ``x'(u)`` small near the ends, where one polynomial start is poor).
    """
    cx, cy = px @ _POWER, py @ _POWER
    dcx = cx[1:] * np.arange(1, 6)
    for k in (1, 2, 4, 8, 16):
        edges = px[0] + (px[5] - px[0]) * np.linspace(0.0, 1.0, k + 1)
        fits = [_piece(px, cx, dcx, a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)]
        if all(f is not None and f[1] <= _GOOD_STEPS for f in fits):
            return [(cx, cy, dcx, g, a, b, n)
                    for (g, n), a, b in zip(fits, edges[:-1], edges[1:], strict=True)]  # fmt: skip
    raise DataError(
        "a Millard curve section whose Bézier parameter does not converge in "
        f"{_GOOD_STEPS} Newton steps from fitted starts; check the curve parameters"
    )


def _curve_data(params: MillardParameters, attr: str, i: int):
    """Per-section data of curve `attr` of muscle i (built once per parameter set)."""
    kept = params.__dict__.setdefault("_symbolic_curves", {})
    key = (attr, i)
    if key not in kept:
        curves = getattr(params, attr)
        sections = [piece for s in range(curves.px.shape[1])
                    for piece in _section_data(curves.px[i, s], curves.py[i, s])]  # fmt: skip
        ends = tuple(float(getattr(curves, k)[i]) for k in
                     ("x0", "x1", "y0", "y1", "dydx0", "dydx1"))  # fmt: skip
        kept[key] = (sections, ends)
    return kept[key]


def _bezier_expression(ca, sections, ends, x):
    x0, x1, y0, y1, d0, d1 = ends
    xc = ca.if_else(x < x0, x0, ca.if_else(x > x1, x1, x))  # (fmin/fmax halve slopes at ties)

    def pick(values):
        out = float(values[0])
        for s in range(1, len(sections)):
            out = ca.if_else(xc >= sections[s][4], float(values[s]), out)
        return out

    cx = [pick([sec[0][k] for sec in sections]) for k in range(6)]
    cy = [pick([sec[1][k] for sec in sections]) for k in range(6)]
    dcx = [pick([sec[2][k] for sec in sections]) for k in range(5)]
    guess = [pick([sec[3][k] for sec in sections]) for k in range(_GUESS_DEGREE + 1)]
    xa, xb = pick([sec[4] for sec in sections]), pick([sec[5] for sec in sections])
    t = (xc - xa) / (xb - xa)
    u = _horner_sym(guess, t)
    for _ in range(max(sec[6] for sec in sections)):
        u = u - (_horner_sym(cx, u) - xc) / _horner_sym(dcx, u)
    inside = _horner_sym(cy, u)
    return ca.if_else(x < x0, y0 + d0 * (x - x0), ca.if_else(x > x1, y1 + d1 * (x - x1), inside))


def _horner_sym(coefs, x):
    out = coefs[-1]
    for c in coefs[-2::-1]:
        out = out * x + c
    return out


def _muscle_index(params, muscle):
    if not isinstance(params, MillardParameters):
        raise DataError(
            "Expected `params` to be a MillardParameters (e.g. "
            f"MillardParameters.from_muscles(model.muscles)), got {type(params).__name__}"
        )
    if isinstance(muscle, str):
        if muscle not in params.names:
            raise DataError(f"`muscle`: {muscle!r} is not one of {list(params.names)[:20]}")
        return list(params.names).index(muscle)
    i = int(muscle)
    if not 0 <= i < params.n:
        raise DataError(f"`muscle` must be in [0, {params.n}), got {muscle!r}")
    return i


def millard_curve_expression(params, curve, x, *, muscle=0):
    """A Millard curve of one muscle as a CasADi expression of ``x``.

    Parameters
    ----------
    params : MillardParameters
        The curve parameters as given (as the numeric curve functions take them;
        :meth:`MillardParameters.as_used` gives those OpenSim's muscle uses).
    curve : {"active_force_length", "passive_force_length", "force_velocity",
             "force_velocity_inverse", "tendon_force_length"}
        ``force_velocity_inverse`` is OpenSim's ``fvInvCurve`` (normalized force to
        normalized velocity) of the undamped model.
    x : casadi.SX or casadi.MX or float
        Normalized fiber length, velocity, force or tendon length.
    muscle : int or str, optional
        Index or name of the muscle in `params` (default 0).

    Returns
    -------
    casadi expression
        Equal to the numeric curve (e.g.
        :func:`~ahbm.muscles.millard_curves.millard_active_force_length`) to round-off,
        with exact first and second derivatives (see the module notes).

    Raises
    ------
    DataError
        Bad `params`, `curve` or `muscle`.

    Examples
    --------
    >>> import casadi as ca
    >>> p = MillardParameters(max_isometric_force=1.0, optimal_fiber_length=1.0,
    ...                       tendon_slack_length=1.0)
    >>> x = ca.SX.sym("x")
    >>> f = ca.Function("fl", [x], [millard_curve_expression(p, "active_force_length", x)])
    >>> round(float(f(1.0)), 12), round(float(f(0.8)), 6)
    (1.0, 0.870677)
    """
    ca = _casadi()
    curve = as_choice(curve, "curve", tuple(MILLARD_CURVES))
    i = _muscle_index(params, muscle)
    sections, ends = _curve_data(params, MILLARD_CURVES[curve], i)
    return _bezier_expression(ca, sections, ends, x)


def _constants(params, i, rigid_tendon):
    """The scalars of muscle i that the expressions use (curves as OpenSim's muscle)."""
    used = params.as_used(rigid_tendon=rigid_tendon)
    c = SimpleNamespace(used=used, i=i)
    c.f0 = float(used.max_isometric_force[i])
    c.lopt = float(used.optimal_fiber_length[i])
    c.lts = float(used.tendon_slack_length[i])
    c.vmax = float(used.max_contraction_velocity[i]) * c.lopt
    c.beta = float(used.fiber_damping[i])
    c.pen0 = float(used.pennation_angle[i])
    c.height = c.lopt * math.sin(c.pen0)
    c.maxpen = float(used.maximum_pennation_angle[i])
    c.sin_max = math.sin(c.maxpen)
    c.pen_min = c.height / c.sin_max if c.maxpen > _SIGNIFICANT else 0.01 * c.lopt
    c.pen_min_along = c.pen_min * math.cos(c.maxpen)
    active_min = float(used.min_norm_active_fiber_length[i]) * c.lopt
    c.lmin = max(_SIGNIFICANT, active_min, c.pen_min)
    c.amin = float(used.minimum_activation[i])
    return c


def _curve(ca, c, curve, x):
    sections, ends = _curve_data(c.used, MILLARD_CURVES[curve], c.i)
    return _bezier_expression(ca, sections, ends, x)


def _cos_pennation(ca, c, lce):
    """cos α at fiber length lce (fixed width, at most the maximum pennation angle)."""
    if not c.pen0 > _EPS:
        return 1.0
    s = c.height / lce
    phi = ca.if_else(s < c.sin_max, ca.asin(ca.fmin(s, 1.0)), c.maxpen)
    return ca.cos(ca.if_else(lce > c.pen_min, phi, c.maxpen))


def millard_rigid_tendon_force_expression(params, activation, mt_length, mt_speed, *,
                                          muscle=0, smoothing=None):  # fmt: skip
    """Tendon force (N) of a rigid-tendon Millard muscle as a CasADi expression.

    Parameters
    ----------
    params : MillardParameters
    activation, mt_length, mt_speed : casadi expression or float
        Activation, musculotendon length (m) and lengthening speed (m/s).
    muscle : int or str, optional
    smoothing : float, optional
        None (default): OpenSim's clamp ``max(·, 0)`` of the fiber force, exact. A
        number ``ε > 0``: ``(f + sqrt(f² + ε²))/2`` of the normalized fiber force ``f``,
        smooth (within ``ε/2 F0`` of the clamp, ``ε²/(4 f) F0`` where ``f ≫ ε``):
        the clamp is active where damping pushes (shortening fibers at low
        activation), and its kink can make a collocation solver cycle.

    Returns
    -------
    casadi expression
        ``millard_equilibrium(params, a, lMT, vMT, rigid_tendon=True).tendon_force`` of
        the muscle: ``lM = max(sqrt((lMT − lTs)² + h²), lMmin)``, ``vM = vMT cos α``,
        ``F = F0 max(a fL fV + fPE + β ṽ, 0) cos α``; zero at the minimum fiber length
        while shortening; the activation clamped to ``[minimum_activation, 1]``.

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> round(float(millard_rigid_tendon_force_expression(p, 1.0, 0.3, 0.0)), 9)
    1000.0
    """
    ca = _casadi()
    c = _constants(params, _muscle_index(params, muscle), True)
    a = ca.fmin(ca.fmax(activation, c.amin), 1.0)
    along = mt_length - c.lts
    lce = ca.if_else(along >= c.pen_min_along, ca.sqrt(c.height**2 + along**2), c.pen_min)
    lce = ca.fmax(lce, c.lmin)
    cos = _cos_pennation(ca, c, lce)
    lt = mt_length - lce * cos
    v = ca.if_else(lt < c.lts - _SIGNIFICANT, 0.0, mt_speed * cos)
    clamped = ca.logic_and(lce <= c.lmin, v <= 0.0)
    v = ca.if_else(clamped, 0.0, v)
    ln, vn = lce / c.lopt, v / c.vmax
    fv = ca.if_else(v == 0.0, 1.0, _curve(ca, c, "force_velocity", vn))
    f = (a * _curve(ca, c, "active_force_length", ln) * fv
         + _curve(ca, c, "passive_force_length", ln) + c.beta * vn)  # fmt: skip
    if smoothing is None:
        f = ca.fmax(f, 0.0)
    else:
        eps = float(smoothing)
        if not (math.isfinite(eps) and eps > 0):
            raise DataError(f"`smoothing` must be None or a number > 0, got {smoothing!r}")
        f = 0.5 * (f + ca.sqrt(f * f + eps * eps))
    return c.f0 * ca.if_else(clamped, 0.0, f) * cos


def millard_elastic_expressions(params, activation, mt_length, fiber_length, fiber_velocity, *,
                                muscle=0) -> SimpleNamespace:  # fmt: skip
    """A Millard muscle with an elastic tendon in the equilibrium formulation (symbols).

    Parameters
    ----------
    params : MillardParameters
    activation, mt_length : casadi expression or float
        Activation and musculotendon length (m).
    fiber_length, fiber_velocity : casadi expression or float
        *Normalized* fiber length ``l̃M = lM/lM0`` and velocity ``ṽM = vM/(vmax lM0)``
        (lengthening positive): the unknowns of the formulation, ``dl̃M/dt = vmax ṽM``.
    muscle : int or str, optional

    Returns
    -------
    SimpleNamespace
        ``residual``: ``(a fL fV + fPE + β ṽM) cos α − fT(l̃T)`` (force along the tendon
        over F0), zero at equilibrium; ``tendon_force``: ``F0 fT(l̃T)`` (N);
        ``fiber_force``, ``active_fiber_force``, ``passive_fiber_force`` (N, along the
        fiber; passive includes damping, as OpenSim reports it); ``cos_pennation``;
        ``tendon_length`` (m); ``length_rate``: ``dl̃M/dt`` (1/s).

    Notes
    -----
    At the fiber length and velocity of :func:`ahbm.muscles.millard.millard_state` (or
    of :func:`~ahbm.muscles.millard.millard_equilibrium`) the residual is zero and the
    forces are that function's. Its clamp at the minimum fiber length is not
    reproduced: a problem bounds ``l̃M`` below by it instead.

    Examples
    --------
    >>> from ahbm.muscles.millard import millard_equilibrium
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> eq = millard_equilibrium(p, [0.5], [0.31])
    >>> e = millard_elastic_expressions(p, 0.5, 0.31, eq.normalized_fiber_length[0],
    ...                                 eq.normalized_fiber_velocity[0])
    >>> abs(float(e.residual)) < 1e-9, bool(abs(float(e.tendon_force) - eq.tendon_force[0]) < 1e-9)
    (True, True)
    """
    ca = _casadi()
    c = _constants(params, _muscle_index(params, muscle), False)
    a = ca.fmin(ca.fmax(activation, c.amin), 1.0)
    lce = fiber_length * c.lopt
    cos = _cos_pennation(ca, c, lce)
    lt = mt_length - lce * cos
    fal = _curve(ca, c, "active_force_length", fiber_length)
    fv = _curve(ca, c, "force_velocity", fiber_velocity)
    fpe = _curve(ca, c, "passive_force_length", fiber_length)
    ft = _curve(ca, c, "tendon_force_length", lt / c.lts)
    active = a * fal * fv
    passive = fpe + c.beta * fiber_velocity
    return SimpleNamespace(
        residual=(active + passive) * cos - ft,
        tendon_force=c.f0 * ft,
        fiber_force=c.f0 * (active + passive),
        active_fiber_force=c.f0 * active,
        passive_fiber_force=c.f0 * passive,
        cos_pennation=cos,
        tendon_length=lt,
        length_rate=c.vmax / c.lopt * fiber_velocity,
    )


def millard_activation_rate_expression(params, excitation, activation, *, muscle=0,
                                       smoothing=None):  # fmt: skip
    """``da/dt`` of a Millard muscle (OpenSim's first-order activation) as an expression.

    Parameters
    ----------
    params : MillardParameters
    excitation, activation : casadi expression or float
    muscle : int or str, optional
    smoothing : float, optional
        None (default): OpenSim's switch between the time constants, exact. A number
        ``b > 0``: the switch blended as De Groote et al. (2016) blend theirs,
        ``1/τ = w/(τa f) + (1 − w) f/τd``, ``w = (1 + tanh(b (u − a)))/2``,
        ``f = 0.5 + 1.5 a``: smooth, as a direct-collocation solver needs (the exact
        switch makes the rate's derivative jump at ``u = a``, where Newton-type solvers
        cycle); within ``tanh(b |u − a|)`` of OpenSim's rate.

    Returns
    -------
    casadi expression
        :func:`ahbm.muscles.millard.millard_activation_rate`: ``a`` clamped to
        ``[minimum_activation, 1]``, ``τ = τa (0.5 + 1.5 a)`` while ``u > a``, else
        ``τd / (0.5 + 1.5 a)``, ``(u − a)/τ``.

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                       tendon_slack_length=0.2)
    >>> round(float(millard_activation_rate_expression(p, 1.0, 0.5)), 9)
    40.0
    """
    ca = _casadi()
    i = _muscle_index(params, muscle)
    a = ca.fmin(ca.fmax(activation, float(params.minimum_activation[i])), 1.0)
    factor = 0.5 + 1.5 * a
    tau_a = float(params.activation_time_constant[i])
    tau_d = float(params.deactivation_time_constant[i])
    if smoothing is None:
        tau = ca.if_else(excitation > a, tau_a * factor, tau_d / factor)
        return (excitation - a) / tau
    b = float(smoothing)
    if not (math.isfinite(b) and b > 0):
        raise DataError(f"`smoothing` must be None or a number > 0, got {smoothing!r}")
    w = 0.5 + 0.5 * ca.tanh(b * (excitation - a))
    return (excitation - a) * (w / (tau_a * factor) + (1.0 - w) * factor / tau_d)
