"""Millard (2012) muscle: curve identities, finite differences, equilibrium, bad input.

The comparison with OpenSim itself is in tests/peers/test_opensim_millard.py.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.muscles.millard import (
    millard_activation_rate,
    millard_equilibrium,
    millard_force_coefficients,
    millard_state,
)
from ahbm.muscles.millard_curves import (
    MillardParameters,
    millard_active_force_length,
    millard_force_velocity,
    millard_passive_force_length,
    millard_tendon_force_length,
)

CURVES = [
    (millard_active_force_length, (0.2, 2.0)),
    (millard_force_velocity, (-1.3, 1.3)),
    (millard_passive_force_length, (0.9, 1.9)),
    (millard_tendon_force_length, (0.98, 1.08)),
]


def _params(**kw):
    return MillardParameters(
        max_isometric_force=[1000.0, 400.0], optimal_fiber_length=[0.1, 0.05],
        tendon_slack_length=[0.2, 0.3], pennation_angle=[0.0, 0.3], **kw,
    )  # fmt: skip


def test_defining_points():
    assert millard_active_force_length(1.0) == pytest.approx(1.0, abs=1e-14)
    assert millard_active_force_length([0.3, 2.5]) == pytest.approx([0.1, 0.1], abs=1e-15)
    assert millard_force_velocity([-1.0, 0.0, 1.0]) == pytest.approx([0.0, 1.0, 1.4], abs=1e-14)
    assert millard_force_velocity(0.0, derivative=1) == pytest.approx(5.0, rel=1e-12)
    assert millard_passive_force_length([1.0, 1.7]) == pytest.approx([0.0, 1.0], abs=1e-14)
    assert millard_passive_force_length(1.7, derivative=1) == pytest.approx(2.0 / 0.7, rel=1e-12)
    assert millard_tendon_force_length([1.0, 1.049]) == pytest.approx([0.0, 1.0], abs=1e-14)
    assert millard_tendon_force_length(1.049, derivative=1) == pytest.approx(1.375 / 0.049)


@pytest.mark.parametrize("f, span", CURVES)
def test_derivatives_match_finite_differences(f, span):
    x = np.linspace(*span, 301) + 1.234567e-5  # off the knots (f'' jumps at the ends)
    h = 1e-7
    fd = (f(x + h) - f(x - h)) / (2 * h)
    np.testing.assert_allclose(f(x, derivative=1), fd, rtol=1e-6, atol=1e-6)
    h = 1e-6
    fd2 = (f(x + h, derivative=1) - f(x - h, derivative=1)) / (2 * h)
    np.testing.assert_allclose(f(x, derivative=2), fd2, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("f, span", CURVES)
def test_curves_are_continuous_and_monotonic_pieces(f, span):
    x = np.linspace(*span, 20001)
    y = f(x)
    assert np.max(np.abs(np.diff(y))) < 1e-3  # no jumps at the segment joins
    if f is not millard_active_force_length:
        assert np.all(np.diff(y) >= -1e-15)


def test_shapes_and_per_muscle_parameters():
    p = _params(tendon_strain_at_one_norm_force=[0.049, 0.1])
    y = millard_tendon_force_length(np.full((5, 2), 1.049), p)
    assert y.shape == (5, 2)
    np.testing.assert_allclose(y[:, 0], 1.0, atol=1e-14)
    assert np.all(y[:, 1] < 1.0)
    assert millard_force_velocity(np.zeros((3, 4))).shape == (3, 4)


def test_equilibrium_balances_forces():
    p = _params()
    rng = np.random.default_rng(0)
    a = rng.uniform(0.05, 1.0, (50, 2))
    lmt = np.array([0.3, 0.345]) + rng.uniform(-0.02, 0.03, (50, 2))
    s = millard_equilibrium(p, a, lmt)
    assert s.tendon_force.shape == (50, 2) and s.converged.all()
    np.testing.assert_allclose(s.fiber_force * np.cos(s.pennation_angle), s.tendon_force,
                               rtol=1e-8, atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(s.tendon_length + s.fiber_length * np.cos(s.pennation_angle), lmt,
                               rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(s.tendon_force / p.max_isometric_force,
                               millard_tendon_force_length(s.tendon_length / p.tendon_slack_length,
                                                           p), rtol=1e-12)  # fmt: skip


def test_state_at_a_given_fiber_length():
    p = _params()
    rng = np.random.default_rng(3)
    a = rng.uniform(0.05, 1.0, (40, 2))
    lmt = np.array([0.3, 0.345]) + rng.uniform(-0.02, 0.03, (40, 2))
    eq = millard_equilibrium(p, a, lmt)
    same = millard_state(p, a, lmt, eq.fiber_length)  # at equilibrium: the same report
    for f in ("tendon_force", "fiber_force", "fiber_velocity", "pennation_angle"):
        np.testing.assert_allclose(getattr(same, f), getattr(eq, f), rtol=1e-12, atol=1e-12)
    # away from equilibrium: the fiber velocity balances fiber and tendon (damped model)
    lm = eq.fiber_length * rng.uniform(0.8, 1.2, (40, 2))
    s = millard_state(p, a, lmt, lm)
    used = p.as_used(rigid_tendon=False)
    vn = s.fiber_velocity / (p.max_contraction_velocity * p.optimal_fiber_length)
    fm = p.max_isometric_force * (
        a * millard_active_force_length(lm / p.optimal_fiber_length, used)
        * millard_force_velocity(vn, used)
        + millard_passive_force_length(lm / p.optimal_fiber_length, used) + p.fiber_damping * vn
    )
    np.testing.assert_allclose(fm * np.cos(s.pennation_angle), s.tendon_force, rtol=1e-9,
                               atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(s.tendon_length + lm * np.cos(s.pennation_angle), lmt, rtol=1e-12)
    assert np.any(np.abs(s.fiber_velocity) > 0.01)  # far from the equilibrium's rest
    with pytest.raises(DataError, match="fiber_length"):
        millard_state(p, a, lmt, -lm)
    with pytest.raises(DataError, match="fiber_length"):
        millard_state(p, a, lmt, np.ones((3, 2)))


def test_velocity_sharing_lengthening_raises_force():
    p = _params()
    still = millard_equilibrium(p, 0.5, [0.3, 0.345])
    moving = millard_equilibrium(p, 0.5, [0.3, 0.345], 0.2, velocity_sharing=True)
    assert np.all(moving.tendon_force > still.tendon_force)
    same = millard_equilibrium(p, 0.5, [0.3, 0.345], 0.2)  # OpenSim 4.6: static solve
    np.testing.assert_array_equal(same.fiber_length, still.fiber_length)


def test_rigid_tendon_closed_form():
    p = _params(fiber_damping=0.0)
    lmt = np.array([0.3, 0.35])
    s = millard_equilibrium(p, [1.0, 0.5], lmt, [0.0, 0.0], rigid_tendon=True)
    h = 0.05 * np.sin(0.3)
    lm = np.array([0.1, np.hypot(0.05, h)])
    np.testing.assert_allclose(s.fiber_length, lm, rtol=1e-14)
    u = p.as_used(rigid_tendon=True)
    fl = millard_active_force_length(lm / p.optimal_fiber_length, u)
    fp = millard_passive_force_length(lm / p.optimal_fiber_length, u)
    cos = (lmt - p.tendon_slack_length) / lm
    expected = p.max_isometric_force * ([1.0, 0.5] * fl + fp) * cos
    np.testing.assert_allclose(s.tendon_force, expected, rtol=1e-13)
    act, pas = millard_force_coefficients(p, lmt)
    np.testing.assert_allclose(act, p.max_isometric_force * fl * cos, rtol=1e-13)


def test_as_used_follows_opensim():
    p = _params(fiber_damping=[0.1, 0.0], minimum_value=0.05, concentric_slope_at_vmax=0.05)
    u = p.as_used()
    np.testing.assert_array_equal(u.minimum_value, [0.0, 0.1])
    np.testing.assert_array_equal(u.concentric_slope_at_vmax, [0.0, 0.125])
    np.testing.assert_array_equal(u.eccentric_slope_at_vmax, [0.0, 0.075])
    r = p.as_used(rigid_tendon=True)
    np.testing.assert_array_equal(r.minimum_value, [0.0, 0.0])
    with pytest.raises(DataError, match="minimum_activation"):
        _params(fiber_damping=0.0, minimum_activation=0.0).as_used()


def test_activation_rate():
    p = _params()
    np.testing.assert_allclose(millard_activation_rate([1.0, 0.0], [0.5, 0.5], p),
                               [0.5 / (0.01 * 1.25), -0.5 * 1.25 / 0.04])  # fmt: skip
    # activation clamped to the minimum
    np.testing.assert_allclose(millard_activation_rate([0.0, 0.0], [0.0, 0.0], p),
                               -0.01 * 0.515 / 0.04)  # fmt: skip


def test_from_muscles_reads_osim_properties():
    m = SimpleNamespace(
        name="vas", model="Millard2012EquilibriumMuscle", max_isometric_force=5000.0,
        optimal_fiber_length=0.09, tendon_slack_length=0.22, pennation_angle=0.05,
        parameters={"fiber_damping": 0.0, "ActiveForceLengthCurve": {"minimum_value": 0.0},
                    "FiberForceLengthCurve": {"strain_at_one_norm_force": 0.6},
                    "ForceVelocityCurve": {"isometric_slope": 4.0}},
    )  # fmt: skip
    p = MillardParameters.from_muscles([m])
    assert p.names == ("vas",)
    assert (p.fiber_damping[0], p.minimum_value[0], p.isometric_slope[0]) == (0.0, 0.0, 4.0)
    assert p.fiber_strain_at_one_norm_force[0] == 0.6 and p.tendon_slack_length[0] == 0.22
    thelen = SimpleNamespace(**{**vars(m), "model": "Thelen2003Muscle"})
    with pytest.raises(DataError, match="not a Millard"):
        MillardParameters.from_muscles([thelen])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: millard_force_velocity("x"), "numeric"),
        (lambda: millard_force_velocity(0.0, derivative=3), "derivative"),
        (lambda: millard_tendon_force_length(np.ones(3), _params()), "last axis"),
        (lambda: millard_equilibrium(_params(), 1.5, 0.3), "activation"),
        (lambda: millard_equilibrium(_params(), 0.5, -0.3), "mt_length"),
        (lambda: millard_equilibrium("p", 0.5, 0.3), "MillardParameters"),
        (
            lambda: MillardParameters(
                max_isometric_force=-1.0, optimal_fiber_length=0.1, tendon_slack_length=0.2
            ),
            "> 0",
        ),  # fmt: skip
        (
            lambda: millard_passive_force_length(
                1.0,
                MillardParameters(
                    max_isometric_force=1.0,
                    optimal_fiber_length=0.1,
                    tendon_slack_length=0.2,
                    fiber_curviness=0.5,
                ),
            ),
            "all NaN",
        ),  # fmt: skip
        (
            lambda: millard_active_force_length(
                1.0,
                MillardParameters(
                    max_isometric_force=1.0,
                    optimal_fiber_length=0.1,
                    tendon_slack_length=0.2,
                    transition_norm_fiber_length=1.2,
                ),
            ),
            "ActiveForceLengthCurve",
        ),  # fmt: skip
    ],
)
def test_bad_input(call, match):
    with pytest.raises(DataError, match=match):
        call()
