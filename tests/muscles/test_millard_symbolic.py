"""Millard2012EquilibriumMuscle on CasADi symbols (ahbm.muscles.millard_symbolic).

References: the numeric curves of ahbm.muscles.millard_curves (values and their analytic
first and second derivatives, themselves checked against OpenSim in
tests/peers/test_opensim_millard.py), central finite differences of the symbolic curves,
and the numeric muscle (millard_equilibrium, millard_state, millard_activation_rate).
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.muscles.millard import (
    millard_activation_rate,
    millard_equilibrium,
    millard_state,
)
from ahbm.muscles.millard_curves import (
    MillardParameters,
    millard_active_force_length,
    millard_force_velocity,
    millard_passive_force_length,
    millard_tendon_force_length,
)

ca = pytest.importorskip("casadi")

from ahbm.muscles.millard_symbolic import (  # noqa: E402
    MILLARD_CURVES,
    millard_activation_rate_expression,
    millard_curve_expression,
    millard_elastic_expressions,
    millard_rigid_tendon_force_expression,
)

_CUSTOM = dict(
    min_norm_active_fiber_length=0.5, transition_norm_fiber_length=0.8,
    max_norm_active_fiber_length=1.7, shallow_ascending_slope=0.6, minimum_value=0.05,
    concentric_slope_at_vmax=0.05, concentric_slope_near_vmax=0.3, isometric_slope=4.0,
    eccentric_slope_at_vmax=0.02, eccentric_slope_near_vmax=0.2,
    max_eccentric_velocity_force_multiplier=1.6, concentric_curviness=0.4,
    eccentric_curviness=0.7, fiber_strain_at_zero_force=0.05,
    fiber_strain_at_one_norm_force=0.6, fiber_stiffness_at_low_force=0.3,
    fiber_stiffness_at_one_norm_force=5.0, fiber_curviness=0.5,
    tendon_strain_at_one_norm_force=0.06, tendon_stiffness_at_one_norm_force=30.0,
    tendon_norm_force_at_toe_end=0.5, tendon_curviness=0.7,
)  # fmt: skip


# the curviness limits: Bézier sections nearly straight with x'(u) small at their ends
_EXTREME = dict(concentric_curviness=0.0, eccentric_curviness=1.0, fiber_curviness=0.0,
                fiber_strain_at_zero_force=0.0, fiber_strain_at_one_norm_force=0.7,
                fiber_stiffness_at_low_force=0.2, fiber_stiffness_at_one_norm_force=2.0 / 0.7,
                tendon_strain_at_one_norm_force=0.049, tendon_curviness=1.0,
                tendon_stiffness_at_one_norm_force=1.375 / 0.049,
                tendon_norm_force_at_toe_end=2.0 / 3.0)  # fmt: skip
_KW = {"default": {}, "custom": _CUSTOM, "extreme": _EXTREME}


def _params(custom):
    kw = _KW[custom]
    # muscle 0: the curves as given; 1: as the damped muscle uses them; 2: undamped
    return MillardParameters(max_isometric_force=1.0, optimal_fiber_length=1.0,
                             tendon_slack_length=1.0, names=["a", "b", "c"], **kw)  # fmt: skip


def _numeric(p, curve, x, order):
    """The numeric curve (value or analytic derivative) of p's first muscle at x (k,)."""
    if curve == "force_velocity_inverse":
        return p._velocity_inverse_curve.evaluate(x[:, None], order)[:, 0]
    f = {"active_force_length": millard_active_force_length,
         "passive_force_length": millard_passive_force_length,
         "force_velocity": millard_force_velocity,
         "tendon_force_length": millard_tendon_force_length}[curve]  # fmt: skip
    return f(x[:, None], p, derivative=order)[:, 0]


def _points(p, curve):
    """Points in every Bézier section (their ends included) and beyond both ends."""
    bez = getattr(p, MILLARD_CURVES[curve])
    knots = np.r_[bez.px[0, :, 0], bez.px[0, -1, 5]]
    inner = np.concatenate([np.linspace(a, b, 40) for a, b in zip(knots[:-1], knots[1:])])
    w = knots[-1] - knots[0]
    outer = np.r_[np.linspace(knots[0] - 0.2 * w, knots[0], 5, endpoint=False),
                  np.linspace(knots[-1], knots[-1] + 0.2 * w, 6)[1:]]  # fmt: skip
    return np.unique(np.r_[inner, outer]), knots


def _curve_functions(p, curve):
    x = ca.SX.sym("x")
    y = millard_curve_expression(p, curve, x)
    dy = ca.jacobian(y, x)
    return ca.Function("f", [x], [y, dy, ca.jacobian(dy, x)])


@pytest.mark.parametrize("custom", list(_KW))
@pytest.mark.parametrize("variant", ["given", "damped", "undamped"])
@pytest.mark.parametrize("curve", list(MILLARD_CURVES))
def test_curves_and_derivatives_equal_the_numeric_curves(curve, variant, custom):
    p = _params(custom)
    if variant != "given":
        p = p.as_used() if variant == "damped" else type(p)(
            max_isometric_force=1.0, optimal_fiber_length=1.0, tendon_slack_length=1.0,
            fiber_damping=0.0, **_KW[custom]).as_used()  # fmt: skip
    x, knots = _points(p, curve)
    f = _curve_functions(p, curve)
    y, dy, ddy = (np.asarray(v, float).ravel() for v in f.map(x.size)(x))
    scale = np.maximum(np.abs(_numeric(p, curve, x, 0)), 1.0)
    assert np.max(np.abs(y - _numeric(p, curve, x, 0)) / scale) < 1e-12
    d_ref = _numeric(p, curve, x, 1)
    assert np.max(np.abs(dy - d_ref) / np.maximum(np.abs(d_ref), 1.0)) < 1e-10
    # second derivatives away from the knots (where the curves are C2 only to round-off)
    away = np.min(np.abs(x[:, None] - knots[None, :]), axis=1) > 1e-6
    dd_ref = _numeric(p, curve, x[away], 2)
    assert np.max(np.abs(ddy[away] - dd_ref) / np.maximum(np.abs(dd_ref), 1.0)) < 1e-8
    # central differences of the symbolic value
    h = 1e-7
    fd = (np.asarray(f.map(x.size)(x + h)[0], float).ravel()
          - np.asarray(f.map(x.size)(x - h)[0], float).ravel()) / (2 * h)  # fmt: skip
    assert np.max(np.abs(fd - dy) / np.maximum(np.abs(dy), 1.0)) < 1e-6


def _random_muscles(rng, n, damping):
    return MillardParameters(
        max_isometric_force=rng.uniform(200, 2000, n),
        optimal_fiber_length=rng.uniform(0.04, 0.15, n),
        tendon_slack_length=rng.uniform(0.05, 0.35, n), pennation_angle=rng.uniform(0, 0.4, n),
        fiber_damping=damping, max_contraction_velocity=rng.uniform(8, 12, n),
    )  # fmt: skip


def _per_muscle(p, build, *cols):
    """Evaluate build(i, *symbols) of each muscle i at rows cols (k, n) -> (k, n)."""
    k, n = cols[0].shape
    out = np.empty((k, n))
    syms = [ca.SX.sym(f"s{j}") for j in range(len(cols))]
    for i in range(n):
        f = ca.Function("f", syms, [build(i, *syms)])
        out[:, i] = np.asarray(f.map(k)(*[c[:, i] for c in cols]), float).ravel()
    return out


def test_rigid_tendon_force_equals_the_numeric_equilibrium():
    rng = np.random.default_rng(11)
    p = _random_muscles(rng, 5, 0.1)
    k = 60
    a = rng.uniform(0, 1, (k, 5))
    lmt = p.tendon_slack_length + p.optimal_fiber_length * rng.uniform(0.2, 1.8, (k, 5))
    v = rng.normal(0, 1.0, (k, 5)) * p.optimal_fiber_length * 10
    ref = millard_equilibrium(p, a, lmt, v, rigid_tendon=True).tendon_force
    got = _per_muscle(p, lambda i, *s: millard_rigid_tendon_force_expression(p, *s, muscle=i),
                      a, lmt, v)  # fmt: skip
    assert (ref == 0).sum() >= 5 and (ref > 0).sum() > 200  # clamps and live fibers
    assert np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-3 * p.max_isometric_force)) < 1e-10
    # the smoothed clamp: within eps/2 F0 of it, eps^2/(4 f) F0 where the force f >> eps
    eps = 1e-3

    def smooth(i, *s):
        return millard_rigid_tendon_force_expression(p, *s, muscle=i, smoothing=eps)

    got = _per_muscle(p, smooth, a, lmt, v)
    f0 = p.max_isometric_force
    assert np.all(np.abs(got - ref) <= 0.5 * eps * f0 + 1e-9)
    big = ref > 0.05 * f0
    assert np.all(np.abs(got - ref)[big] <= (eps**2 / 4 / 0.05 * f0 * np.ones_like(ref))[big])
    assert np.abs(got - ref).max() > 0.1 * eps * f0.min()  # where OpenSim clamps
    with pytest.raises(DataError, match="smoothing"):
        millard_rigid_tendon_force_expression(p, 1.0, 0.3, 0.0, smoothing=0.0)


@pytest.mark.parametrize("damping", [0.1, 0.0])
def test_elastic_residual_vanishes_where_the_numeric_muscle_balances(damping):
    rng = np.random.default_rng(3)
    p = _random_muscles(rng, 4, damping)
    k = 50
    a = rng.uniform(0.05, 1, (k, 4))
    lmt = p.tendon_slack_length * 1.02 + p.optimal_fiber_length * rng.uniform(0.6, 1.4, (k, 4))

    def build(name):
        return lambda i, *s: getattr(millard_elastic_expressions(p, *s, muscle=i), name)

    eq = millard_equilibrium(p, a, lmt)
    st = millard_state(p, a, lmt, eq.fiber_length * rng.uniform(0.97, 1.03, (k, 4)))
    for s in (eq, st):
        live = s.fiber_length > p.as_used().min_norm_active_fiber_length * p.optimal_fiber_length
        cols = (a, lmt, s.normalized_fiber_length, s.normalized_fiber_velocity)
        r = _per_muscle(p, build("residual"), *cols)
        assert np.max(np.abs(r[live])) < 1e-10
        for name in ("tendon_force", "fiber_force", "active_fiber_force", "passive_fiber_force",
                     "tendon_length"):  # fmt: skip
            got = _per_muscle(p, build(name), *cols)
            ref = getattr(s, name)
            scale = p.max_isometric_force if name != "tendon_length" else p.tendon_slack_length
            assert np.max(np.abs(got - ref)[live] / np.broadcast_to(scale, ref.shape)[live]) < 1e-10
    assert np.abs(st.normalized_fiber_velocity).max() > 0.05  # off-rest velocities were tried


def test_elastic_residual_gradient_equals_finite_differences():
    p = _random_muscles(np.random.default_rng(8), 1, 0.1)
    s = ca.SX.sym("s", 4)
    r = millard_elastic_expressions(p, s[0], s[1], s[2], s[3]).residual
    f = ca.Function("r", [s], [r, ca.gradient(r, s)])
    x0 = np.array([0.6, float(p.tendon_slack_length[0] * 1.03 + p.optimal_fiber_length[0]),
                   0.95, -0.2])  # fmt: skip
    g = np.asarray(f(x0)[1], float).ravel()
    h = 1e-6
    fd = [(float(f(x0 + h * e)[0]) - float(f(x0 - h * e)[0])) / (2 * h) for e in np.eye(4)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_activation_rate_equals_the_numeric_rate():
    rng = np.random.default_rng(4)
    p = _random_muscles(rng, 3, 0.1)
    e, a = rng.uniform(0, 1, (40, 3)), rng.uniform(0, 1, (40, 3))
    got = _per_muscle(p, lambda i, *s: millard_activation_rate_expression(p, *s, muscle=i), e, a)
    np.testing.assert_allclose(got, millard_activation_rate(e, a, p), rtol=1e-13, atol=1e-12)
    # blended: OpenSim's rate far from e = a, between its two branches everywhere
    tau_a, tau_d = p.activation_time_constant, p.deactivation_time_constant

    def smooth(i, *s):
        return millard_activation_rate_expression(p, *s, muscle=i, smoothing=10.0)

    got = _per_muscle(p, smooth, e, a)
    ac = np.clip(a, 0.01, 1.0)
    f = 0.5 + 1.5 * ac
    lo = np.minimum((e - ac) / (tau_a * f), (e - ac) * f / tau_d)
    hi = np.maximum((e - ac) / (tau_a * f), (e - ac) * f / tau_d)
    assert np.all((got >= lo - 1e-12) & (got <= hi + 1e-12))
    far = np.abs(e - a) > 0.6
    np.testing.assert_allclose(got[far], millard_activation_rate(e, a, p)[far], rtol=2e-5)


def test_bad_arguments_raise():
    p = _params("default")
    with pytest.raises(DataError, match="curve"):
        millard_curve_expression(p, "tendon", 1.0)
    with pytest.raises(DataError, match="muscle"):
        millard_curve_expression(p, "force_velocity", 0.0, muscle=3)
    with pytest.raises(DataError, match="MillardParameters"):
        millard_rigid_tendon_force_expression(object(), 1.0, 0.3, 0.0)
    assert float(millard_curve_expression(p, "force_velocity", 0.0, muscle="b")) == pytest.approx(
        1.0, abs=1e-15
    )
