"""ahbm.muscles.metabolics and metabolics_smooth: known values, limits, smoothing.

The comparison with OpenSim's probes is tests/peers/test_opensim_metabolics.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.muscles import (
    Bhargava2004Options,
    MetabolicParameters,
    MetabolicSmoothing,
    Umberger2010Options,
    basal_metabolic_rate,
    bhargava2004_metabolics,
    bhargava2004_smooth_metabolics,
    umberger2010_metabolics,
    umberger2010_smooth_metabolics,
)

P = MetabolicParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1)
MASS = 1000.0 / 0.25e6 * 1059.7 * 0.1


def _random_state(rng, shape):
    u = rng.uniform(0.0, 1.0, shape)
    a = rng.uniform(0.01, 1.0, shape)
    ln = rng.uniform(0.5, 1.6, shape)
    v = rng.uniform(-0.8, 0.8, shape)  # m/s (lM0 = 0.1 m, vmax = 1 m/s)
    fl = np.exp(-((ln - 1.0) ** 2) / 0.45)
    fa = a * 1000.0 * fl * rng.uniform(0.2, 1.5, shape)
    ft = fa + 1000.0 * np.clip(ln - 1.0, 0.0, None) ** 2
    return u, a, ln, v, fa, ft, fl


# ---------------------------------------------------------------------------------------
# Known values
# ---------------------------------------------------------------------------------------


def test_muscle_mass_is_opensims_and_provided_mass_wins():
    np.testing.assert_allclose(P.muscle_mass, [MASS], rtol=1e-15)
    p = MetabolicParameters(
        max_isometric_force=[1000.0, 800.0],
        optimal_fiber_length=0.1,
        provided_muscle_mass=[np.nan, 0.3],
    )
    np.testing.assert_allclose(p.muscle_mass, [MASS, 0.3])


def test_umberger_isometric_full_activation():
    r = umberger2010_metabolics(P, 1.0, 1.0, 1.0, 0.0, 1000.0, 1.0)
    # Bhargava recruitment at u = 1 with r = 0.5: uS = 0.5 sin(pi/2), uF = 0.5 (1 - 0).
    np.testing.assert_allclose(r.activation_maintenance, [1.5 * (128 * 0.5 + 25) * MASS])
    np.testing.assert_allclose(r.shortening, [0.0], atol=1e-12)
    np.testing.assert_allclose(r.mechanical_work, [0.0], atol=1e-12)
    np.testing.assert_allclose(r.total, r.activation_maintenance)


def test_umberger_long_fibers_scale_by_force_length():
    fl = 0.6
    r = umberger2010_metabolics(P, 1.0, 1.0, 1.3, 0.0, 600.0, fl)
    np.testing.assert_allclose(r.activation_maintenance, [1.5 * 89 * (0.4 + 0.6 * fl) * MASS])


def test_umberger_recruitment_is_slow_at_zero_excitation():
    # u = 0 < a: A = a / 2; OpenSim sets the recruited slow-twitch ratio to 1.
    r = umberger2010_metabolics(P, 0.0, 0.5, 1.0, 0.0, 0.0, 1.0)
    np.testing.assert_allclose(r.activation_maintenance, [1.5 * 0.25**0.6 * 25 * MASS])
    off = Umberger2010Options(use_Bhargava_recruitment_model=False)
    r = umberger2010_metabolics(P, 0.0, 0.5, 1.0, 0.0, 0.0, 1.0, options=off)
    np.testing.assert_allclose(r.activation_maintenance, [1.5 * 0.25**0.6 * 89 * MASS])


def test_umberger_shortening_heat_and_its_cap():
    opts = Umberger2010Options(use_Bhargava_recruitment_model=False)
    vmax, r_slow = 10.0, 0.5
    for vn in (-1.0, -8.0):  # optimal fiber lengths per second; the slow part caps at 8
        v = vn * 0.1
        got = umberger2010_metabolics(P, 1.0, 1.0, 1.0, v, 100.0, 1.0, options=opts)
        slow = min(100.0 / (vmax / 2.5) * -vn, 100.0)
        expected = 1.5 * (slow * r_slow + 153.0 / vmax * -vn * (1 - r_slow)) * MASS
        np.testing.assert_allclose(got.shortening, [expected])
        np.testing.assert_allclose(got.mechanical_work, [-100.0 * v])


@pytest.mark.parametrize("negative_work, coefficient", [(True, 4.0), (False, 0.3)])
def test_umberger_lengthening_heat(negative_work, coefficient):
    opts = Umberger2010Options(
        include_negative_mechanical_work=negative_work, forbid_negative_total_power=False
    )
    got = umberger2010_metabolics(P, 0.6, 0.4, 1.0, 0.2, 500.0, 1.0, options=opts)
    np.testing.assert_allclose(got.shortening, [1.5 * 0.6 * coefficient * 25.0 * 2.0 * MASS])
    np.testing.assert_allclose(got.mechanical_work, [-100.0 if negative_work else 0.0])


def test_bhargava_known_terms():
    r = bhargava2004_metabolics(P, 1.0, 1.0, 1.0, 0.0, 1000.0, 1000.0, 1.0)
    np.testing.assert_allclose(r.activation, [MASS * (40 + 133) / 2])
    np.testing.assert_allclose(r.maintenance, [MASS * (74 + 111) / 2])
    # The default maintenance curve: 0.5 below 0.5, 1 at 1, 0 from 1.5, linear between.
    ln = np.array([0.2, 0.5, 0.75, 1.0, 1.25, 1.5, 3.0])
    r = bhargava2004_metabolics(P, 1.0, 1.0, ln[:, None], 0.0, 1000.0, 1000.0, 1.0)
    g = np.array([0.5, 0.5, 0.75, 1.0, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(r.maintenance[:, 0], g * MASS * 92.5, atol=1e-12)


def test_bhargava_shortening_heat_forms():
    v, f, fa = -0.3, 800.0, 700.0
    r = bhargava2004_metabolics(P, 0.8, 0.7, 1.0, v, fa, f, 0.9)
    np.testing.assert_allclose(r.shortening, [-0.25 * f * v])
    opts = Bhargava2004Options(use_force_dependent_shortening_prop_constant=True)
    r = bhargava2004_metabolics(P, 0.8, 0.7, 1.0, v, fa, f, 0.9, options=opts)
    np.testing.assert_allclose(r.shortening, [-(0.16 * 0.7 * 0.9 * 1000.0 + 0.18 * f) * v])
    opts = dataclasses.replace(opts, forbid_negative_total_power=False)
    r = bhargava2004_metabolics(P, 0.8, 0.7, 1.0, -v, fa, f, 0.9, options=opts)
    np.testing.assert_allclose(r.shortening, [-0.157 * f * -v])


def test_basal_rate():
    np.testing.assert_allclose(basal_metabolic_rate([50.0, 75.0]), [60.0, 90.0])
    np.testing.assert_allclose(
        basal_metabolic_rate(75.0, basal_coefficient=3.0, basal_exponent=0.75), 3.0 * 75**0.75
    )


# ---------------------------------------------------------------------------------------
# Limits and identities
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["umberger", "bhargava"])
def test_resting_muscle_costs_the_minimum_heat_rate(model):
    if model == "umberger":
        r = umberger2010_metabolics(P, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0)
    else:
        r = bhargava2004_metabolics(P, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    np.testing.assert_allclose(r.total, [MASS])  # 1 W/kg


def test_totals_are_never_negative_and_terms_add_up():
    rng = np.random.default_rng(1)
    u, a, ln, v, fa, ft, fl = _random_state(rng, (500, 1))
    ru = umberger2010_metabolics(P, u, a, ln, v, fa, fl)
    rb = bhargava2004_metabolics(P, u, a, ln, v, fa, ft, fl)
    assert ru.total.min() >= -1e-9 and rb.total.min() >= -1e-9
    heat = ru.activation_maintenance + ru.shortening
    np.testing.assert_allclose(ru.total, np.maximum(heat, MASS) + ru.mechanical_work, atol=1e-9)
    heat = rb.activation + rb.maintenance + rb.shortening
    np.testing.assert_allclose(rb.total, np.maximum(heat, MASS) + rb.mechanical_work, atol=1e-9)


def test_flags_choose_the_terms_of_the_total():
    rng = np.random.default_rng(2)
    u, a, ln, v, fa, ft, fl = _random_state(rng, (50, 1))
    base = dict(forbid_negative_total_power=False)
    only_work = Umberger2010Options(
        activation_maintenance_rate_on=False, shortening_rate_on=False, **base
    )
    r = umberger2010_metabolics(P, u, a, ln, v, fa, fl, options=only_work)
    np.testing.assert_array_equal(r.total, r.mechanical_work)
    no_min = Bhargava2004Options(enforce_minimum_heat_rate_per_muscle=False, **base)
    r = bhargava2004_metabolics(P, u, a, ln, v, fa, ft, fl, options=no_min)
    np.testing.assert_allclose(
        r.total, r.activation + r.maintenance + r.shortening + r.mechanical_work
    )


def test_effort_scaling_scales_excitation_activation_and_active_force():
    rng = np.random.default_rng(3)
    u, a, ln, v, fa, ft, fl = _random_state(rng, (40, 1))
    s = 0.7
    r1 = umberger2010_metabolics(
        P, u, a, ln, v, fa, fl, options=Umberger2010Options(muscle_effort_scaling_factor=s)
    )
    r2 = umberger2010_metabolics(P, s * u, s * a, ln, v, s * fa, fl)
    np.testing.assert_allclose(r1.total, r2.total, rtol=1e-12)
    r1 = bhargava2004_metabolics(
        P, u, a, ln, v, fa, ft, fl, options=Bhargava2004Options(muscle_effort_scaling_factor=s)
    )
    r2 = bhargava2004_metabolics(P, s * u, s * a, ln, v, s * fa, ft - (1 - s) * fa, fl)
    np.testing.assert_allclose(r1.total, r2.total, rtol=1e-12)


@pytest.mark.parametrize("shape", [(2,), (7, 2), (3, 4, 2)])
def test_batch_axes_and_muscles_match_one_at_a_time(shape):
    rng = np.random.default_rng(4)
    p = MetabolicParameters(
        max_isometric_force=[1000.0, 400.0],
        optimal_fiber_length=[0.1, 0.05],
        ratio_slow_twitch_fibers=[0.5, 0.8],
        max_contraction_velocity=[10.0, 8.0],
    )
    state = _random_state(rng, shape)
    r = bhargava2004_metabolics(p, *state)
    ru = umberger2010_metabolics(p, *state[:5], state[6])
    assert r.total.shape == shape and ru.total.shape == shape
    for i in range(2):
        pi = MetabolicParameters(**{f.name: getattr(p, f.name)[i] for f in dataclasses.fields(p)})
        one = [x[..., i : i + 1] for x in state]
        np.testing.assert_allclose(r.total[..., i : i + 1], bhargava2004_metabolics(pi, *one).total)
        np.testing.assert_allclose(
            ru.total[..., i : i + 1], umberger2010_metabolics(pi, *one[:5], one[6]).total
        )


# ---------------------------------------------------------------------------------------
# Smooth forms
# ---------------------------------------------------------------------------------------

_FIELDS_U = ("activation_maintenance", "shortening", "mechanical_work", "total")
_FIELDS_B = ("activation", "maintenance", "shortening", "mechanical_work", "total")


def _smooth_error(k, state, options_u, options_b):
    u, a, ln, v, fa, ft, fl = state
    sm = MetabolicSmoothing(
        velocity_smoothing=k,
        power_smoothing=k,
        heat_rate_smoothing=k,
        excitation_smoothing=k,
        fiber_length_smoothing=k,
    )
    su = umberger2010_smooth_metabolics(P, u, a, ln, v, fa, fl, options=options_u, smoothing=sm)
    hu = umberger2010_metabolics(P, u, a, ln, v, fa, fl, options=options_u)
    sb = bhargava2004_smooth_metabolics(P, u, a, ln, v, fa, ft, fl, options=options_b, smoothing=sm)
    hb = bhargava2004_metabolics(P, u, a, ln, v, fa, ft, fl, options=options_b)
    errors = [np.abs(getattr(su, f) - getattr(hu, f)).max() for f in _FIELDS_U]
    errors += [np.abs(getattr(sb, f) - getattr(hb, f)).max() for f in _FIELDS_B]
    return max(errors)


@pytest.mark.parametrize("variant", ["defaults", "variant"])
def test_smooth_tends_to_sharp_as_the_steepness_grows(variant):
    rng = np.random.default_rng(5)
    state = _random_state(rng, (400, 1))
    if variant == "defaults":
        ou, ob = Umberger2010Options(), Bhargava2004Options()
    else:
        ou = Umberger2010Options(
            use_Bhargava_recruitment_model=False, include_negative_mechanical_work=False
        )
        ob = Bhargava2004Options(
            use_force_dependent_shortening_prop_constant=True,
            include_negative_mechanical_work=False,
        )
    errors = [_smooth_error(k, state, ou, ob) for k in (1e1, 1e2, 1e3, 1e4, 1e6)]
    assert all(e2 < e1 for e1, e2 in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-9, errors


def test_smooth_sharp_branches_equal_the_sharp_model():
    rng = np.random.default_rng(6)
    state = _random_state(rng, (100, 1))
    u, a, ln, v, fa, ft, fl = state
    sharp = MetabolicSmoothing(None, None, None, None, None)
    su = umberger2010_smooth_metabolics(P, u, a, ln, v, fa, fl, smoothing=sharp)
    hu = umberger2010_metabolics(P, u, a, ln, v, fa, fl)
    sb = bhargava2004_smooth_metabolics(P, *state, smoothing=sharp)
    hb = bhargava2004_metabolics(P, *state)
    for f in _FIELDS_U:
        np.testing.assert_allclose(getattr(su, f), getattr(hu, f), rtol=1e-12, atol=1e-9)
    for f in _FIELDS_B:
        np.testing.assert_allclose(getattr(sb, f), getattr(hb, f), rtol=1e-12, atol=1e-9)


def test_smooth_forms_run_on_casadi_symbols():
    ca = pytest.importorskip("casadi")
    rng = np.random.default_rng(7)
    u, a, ln, v, fa, ft, fl = (x[:, 0] for x in _random_state(rng, (20, 1)))
    sym = [ca.SX.sym(n) for n in ("u", "a", "ln", "v", "fa", "ft", "fl")]
    ru = umberger2010_smooth_metabolics(P, *sym[:5], sym[6], xp=ca)
    rb = bhargava2004_smooth_metabolics(P, *sym, xp=ca)
    f = ca.Function("edot", sym, [ru.total[0], rb.total[0]])
    grad = ca.Function("grad", sym, [ca.gradient(ru.total[0] + rb.total[0], ca.vertcat(*sym))])
    nu = umberger2010_smooth_metabolics(P, u[:, None], a[:, None], ln[:, None], v[:, None],
                                        fa[:, None], fl[:, None])  # fmt: skip
    nb = bhargava2004_smooth_metabolics(P, *(x[:, None] for x in (u, a, ln, v, fa, ft, fl)))
    for i in range(u.size):
        args = [u[i], a[i], ln[i], v[i], fa[i], ft[i], fl[i]]
        eu, eb = (float(x) for x in f(*args))
        np.testing.assert_allclose(
            [eu, eb], [nu.total[i, 0], nb.total[i, 0]], rtol=1e-12, atol=1e-9
        )
        g = np.asarray(grad(*args)).ravel()
        assert np.all(np.isfinite(g))
        # Central differences along the fiber velocity (smooth: no branch to straddle).
        h = 1e-6
        up = sum(float(x) for x in f(*args[:3], args[3] + h, *args[4:]))
        dn = sum(float(x) for x in f(*args[:3], args[3] - h, *args[4:]))
        np.testing.assert_allclose(g[3], (up - dn) / (2 * h), rtol=1e-5, atol=1e-4)


def test_sharp_branches_on_casadi_use_if_else():
    ca = pytest.importorskip("casadi")
    v = ca.SX.sym("v")
    sharp = MetabolicSmoothing(None, None, None, None, None)
    r = bhargava2004_smooth_metabolics(P, 0.5, 0.5, 1.0, v, 300.0, 320.0, 1.0,
                                       smoothing=sharp, xp=ca)  # fmt: skip
    f = ca.Function("s", [v], [r.shortening[0]])
    for vel in (-0.2, 0.3):
        h = bhargava2004_metabolics(P, 0.5, 0.5, 1.0, vel, 300.0, 320.0, 1.0)
        np.testing.assert_allclose(float(f(vel)), h.shortening[0], rtol=1e-12)


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------


def test_bad_parameters_and_options():
    with pytest.raises(DataError, match="ratio_slow_twitch_fibers"):
        MetabolicParameters(max_isometric_force=1.0, optimal_fiber_length=0.1,
                            ratio_slow_twitch_fibers=1.5)  # fmt: skip
    with pytest.raises(DataError, match="different numbers of muscles"):
        MetabolicParameters(max_isometric_force=[1.0, 2.0], optimal_fiber_length=[0.1] * 3)
    with pytest.raises(DataError, match="provided_muscle_mass"):
        MetabolicParameters(max_isometric_force=1.0, optimal_fiber_length=0.1,
                            provided_muscle_mass=-1.0)  # fmt: skip
    with pytest.raises(DataError, match="aerobic_factor"):
        Umberger2010Options(aerobic_factor=0.0)
    with pytest.raises(DataError, match="shortening_rate_on"):
        Umberger2010Options(shortening_rate_on=1)
    with pytest.raises(DataError, match="increase strictly"):
        Bhargava2004Options(
            normalized_fiber_length_dependence_on_maintenance_rate=((0, 1, 1), (1, 2, 3))
        )
    with pytest.raises(DataError, match="velocity_smoothing"):
        MetabolicSmoothing(velocity_smoothing=-1.0)
    with pytest.raises(DataError, match="MetabolicParameters"):
        umberger2010_metabolics({"max_isometric_force": 1.0}, 1, 1, 1, 0, 0, 1)
    with pytest.raises(DataError, match="Bhargava2004Options"):
        bhargava2004_metabolics(P, 1, 1, 1, 0, 0, 0, 1, options=Umberger2010Options())


def test_bad_states():
    with pytest.raises(DataError, match="fiber_velocity"):
        umberger2010_metabolics(P, 1.0, 1.0, 1.0, np.nan, 0.0, 1.0)
    with pytest.raises(DataError, match="excitation"):
        bhargava2004_metabolics(P, -0.1, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    with pytest.raises(DataError, match="do not broadcast"):
        umberger2010_metabolics(P, np.ones((3, 1)), np.ones((4, 1)), 1.0, 0.0, 0.0, 1.0)
    with pytest.raises(DataError, match="last axis"):
        umberger2010_metabolics(P, np.ones(3), 1.0, 1.0, 0.0, 0.0, 1.0)
    with pytest.raises(DataError, match="body_mass"):
        basal_metabolic_rate(0.0)
