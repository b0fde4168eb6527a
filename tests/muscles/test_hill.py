"""Hill-type muscle models (ahbm.muscles.hill): published curve points, derivatives and
inverses, equilibrium identities, batch shapes, activation dynamics, parameters, errors.

The OpenSim comparison is in tests/peers/test_opensim_hill.py.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ahbm.errors import AhbmWarning, DataError
from ahbm.muscles import (
    MuscleParameters,
    activation_rate,
    activation_to_excitation,
    active_force_length,
    force_coefficients,
    force_velocity,
    hill_curves,
    muscle_equilibrium,
    passive_force_length,
    tendon_force_length,
)

CURVES = ("thelen2003", "degroote2016")


def _params(n=3, seed=0, **kw):
    rng = np.random.default_rng(seed)
    base = dict(
        max_isometric_force=rng.uniform(300, 3000, n),
        optimal_fiber_length=rng.uniform(0.05, 0.2, n),
        tendon_slack_length=rng.uniform(0.05, 0.4, n),
        pennation_angle=rng.uniform(0.0, 0.4, n),
        max_contraction_velocity=rng.uniform(6, 12, n),
    )
    base.update(kw)
    return MuscleParameters(**base)


def _mt_lengths(p, ln, strain):
    h = p.optimal_fiber_length * np.sin(p.pennation_angle)
    return p.tendon_slack_length * (1 + strain) + np.sqrt((p.optimal_fiber_length * ln) ** 2 - h**2)


# --- published curve points -------------------------------------------------------------


def test_thelen_published_points():
    # Thelen (2003): fL Gaussian with gamma = 0.45, half force at 1 +- sqrt(gamma ln 2)
    w = math.sqrt(0.45 * math.log(2))
    assert active_force_length(1.0) == 1.0
    np.testing.assert_allclose(active_force_length([1 - w, 1 + w]), 0.5, rtol=1e-14)
    # passive: 0 at and below optimal length, F0 at strain 0.6
    np.testing.assert_allclose(passive_force_length([0.5, 1.0, 1.6]), [0, 0, 1], atol=1e-14)
    # tendon: F0 at the strain at F0 (OpenSim's default 0.04; the paper's 0.033)
    for e0 in (0.04, 0.033):
        p = MuscleParameters(
            max_isometric_force=1, optimal_fiber_length=1, tendon_slack_length=1, tendon_strain=e0
        )
        np.testing.assert_allclose(
            tendon_force_length([[0.99], [1.0], [1 + e0]], params=p).ravel(), [0, 0, 1], atol=1e-14
        )
        etoe, klin = hill_curves._th_toe(e0)
        # the paper's rounded constants: eps_toe = 0.609 eps0, k_lin = 1.712 / eps0
        assert etoe == pytest.approx(0.609 * e0, rel=1e-3)
        assert klin == pytest.approx(1.712 / e0, rel=1e-3)
        assert tendon_force_length([1 + etoe], params=p)[0] == pytest.approx(0.33, rel=1e-14)
    # force-velocity at full activation: isometric 1, maximal shortening 0, and Thelen's
    # eq. 6 at V = -0.5: F = 1/6; eccentric asymptote flen = 1.4 (extrapolated beyond 0.95)
    np.testing.assert_allclose(force_velocity([0.0, -1.0, -0.5]), [1, 0, 1 / 6], atol=1e-15)
    # lengthening (Thelen eq. 6, c = (2 + 2/Af)/(flen - 1) = 25): (1 + c v flen)/(1 + c v)
    assert force_velocity(0.1) == pytest.approx(4.5 / 3.5, rel=1e-14)
    assert force_velocity(0.1) < 1.4 * 0.95 < force_velocity(0.5)


def test_degroote_published_points():
    c = "degroote2016"
    assert active_force_length(1.0, curves=c) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(force_velocity([0.0, -1.0], curves=c), [1, 0], atol=1e-12)
    assert force_velocity(1.0, curves=c) == pytest.approx(1.794, abs=1e-3)  # OpenSim's range
    np.testing.assert_allclose(tendon_force_length([1.0, 1.049], curves=c), [0, 1], atol=1e-12)
    np.testing.assert_allclose(passive_force_length([0.2, 1.6], curves=c), [0, 1], atol=1e-12)
    # the sum of Gaussians (b11 scaled for f(1) = 1) peaks slightly past the optimal
    # length, at 1.0011 near 1.013
    x = np.linspace(0.9, 1.1, 2001)
    fl = active_force_length(x, curves=c)
    assert 1.0 < fl.max() < 1.002 and abs(x[np.argmax(fl)] - 1.013) < 1e-3


@pytest.mark.parametrize("curves", CURVES)
def test_curve_shapes(curves):
    x = np.linspace(0.3, 1.8, 301)
    fl = active_force_length(x, curves=curves)
    assert np.all(fl > 0) and np.all(fl <= (1 + 1e-12 if curves == "thelen2003" else 1.002))
    assert np.all(np.diff(passive_force_length(x, curves=curves)) >= 0)
    v = np.linspace(-1.2, 1.2, 301)
    assert np.all(np.diff(force_velocity(v, curves=curves)) >= 0)
    lt = np.linspace(1.0, 1.06, 101)
    assert np.all(np.diff(tendon_force_length(lt, curves=curves)) > 0)


def test_width_scale_and_strains_per_muscle():
    p = MuscleParameters(
        max_isometric_force=1.0,
        optimal_fiber_length=1.0,
        tendon_slack_length=1.0,
        active_force_width_scale=[1.0, 2.0],
        passive_strain=[0.6, 0.7],
        tendon_strain=[0.049, 0.03],
    )
    c = "degroote2016"
    f1 = active_force_length([0.8, 0.9], curves=c, params=p)
    # width scale 2: fL(0.9) of the scaled curve = fL(1 + (0.9 - 1)/2) of the unscaled one
    assert f1[1] == pytest.approx(active_force_length(0.95, curves=c), rel=1e-14)
    assert f1[0] == pytest.approx(active_force_length(0.8, curves=c), rel=1e-14)
    np.testing.assert_allclose(passive_force_length([1.6, 1.7], curves=c, params=p), 1, atol=1e-12)
    np.testing.assert_allclose(
        tendon_force_length([1.049, 1.03], curves=c, params=p), 1, atol=1e-12
    )


# --- derivatives and inverses -----------------------------------------------------------


def test_thelen_derivatives_by_finite_differences():
    x = np.linspace(0.5, 1.7, 41) + 1e-3
    h = 1e-6

    def fd(f):
        return (f(x + h) - f(x - h)) / (2 * h)

    np.testing.assert_allclose(
        hill_curves._th_dfal(x, 0.45), fd(lambda y: hill_curves._th_fal(y, 0.45)), atol=1e-7
    )
    np.testing.assert_allclose(
        hill_curves._th_dfpe(x, 0.6, 5.0), fd(lambda y: hill_curves._th_fpe(y, 0.6, 5.0)), atol=1e-6
    )
    lt = np.linspace(0.99, 1.06, 41) + 1e-4
    np.testing.assert_allclose(
        hill_curves._th_dfse(lt, 0.04),
        (hill_curves._th_fse(lt + 1e-8, 0.04) - hill_curves._th_fse(lt - 1e-8, 0.04)) / 2e-8,
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("a", [0.01, 0.3, 1.0])
def test_thelen_force_velocity_inverts_opensims_velocity_relation(a):
    args = (0.25, 1.4, 0.95)
    fv = np.concatenate([np.linspace(1e-6, 0.999, 50), np.linspace(1.001, 2.0, 50)])
    v = hill_curves._th_dlce_norm(a, fv, *args)
    np.testing.assert_allclose(hill_curves._th_fv(v, a, *args), fv, rtol=1e-12, atol=1e-15)
    # continuous across the branches (isometric and the extrapolation threshold)
    for b in (0.0, hill_curves._th_dlce_norm(a, 0.95 * 1.4, *args)):
        lo, hi = hill_curves._th_fv(b - 1e-9, a, *args), hill_curves._th_fv(b + 1e-9, a, *args)
        assert abs(hi - lo) < 1e-7


def test_degroote_inverses():
    v = np.linspace(-1, 1, 41)
    np.testing.assert_allclose(hill_curves._dg_fv_inverse(hill_curves._dg_fv(v)), v, atol=1e-12)
    lt = np.linspace(1.0, 1.06, 13)
    np.testing.assert_allclose(
        hill_curves._dg_ft_inverse(hill_curves._dg_ft(lt, 0.049), 0.049), lt, rtol=1e-13
    )


# --- equilibrium ------------------------------------------------------------------------


@pytest.mark.parametrize("curves", CURVES)
def test_elastic_equilibrium_balances_forces_at_rest(curves):
    p = _params(4, seed=1)
    rng = np.random.default_rng(2)
    ln = rng.uniform(0.7, 1.4, (6, 4))
    lmt = _mt_lengths(p, ln, rng.uniform(0.0, 0.03, (6, 4)))
    a = rng.uniform(0.05, 1.0, (6, 4))
    s = muscle_equilibrium(p, a, lmt, curves=curves)
    assert s.tendon_force.shape == (6, 4) and s.converged.all()
    q = p.resolved(curves)
    cos = np.cos(s.pennation_angle)
    # geometry: constant width and the path length
    np.testing.assert_allclose(
        s.fiber_length * np.sin(s.pennation_angle),
        np.broadcast_to(q.optimal_fiber_length * np.sin(q.pennation_angle), (6, 4)),
        rtol=1e-12,
    )
    np.testing.assert_allclose(s.fiber_length * cos + s.tendon_length, lmt, rtol=1e-13)
    # the force balance with the public curves (fV = 1 at rest)
    ln = s.fiber_length / q.optimal_fiber_length
    fiber = q.max_isometric_force * (
        a * active_force_length(ln, curves=curves, params=q)
        + passive_force_length(ln, curves=curves, params=q)
    )
    tendon = q.max_isometric_force * tendon_force_length(
        s.tendon_length / q.tendon_slack_length, curves=curves, params=q
    )
    np.testing.assert_allclose(s.tendon_force, tendon, rtol=1e-12)
    assert np.all(np.abs(fiber * cos - tendon) <= 2e-8 * q.max_isometric_force)
    np.testing.assert_allclose(s.fiber_velocity, 0, atol=1e-7)


def test_degroote_equilibrium_with_speed_puts_it_in_the_fiber():
    p = _params(3, seed=3)
    rng = np.random.default_rng(4)
    lmt = _mt_lengths(p, rng.uniform(0.8, 1.3, (5, 3)), 0.01)
    vmt = rng.uniform(-0.3, 0.3, (5, 3))
    a = rng.uniform(0.1, 1, (5, 3))
    s = muscle_equilibrium(p, a, lmt, vmt, curves="degroote2016")
    cos = np.cos(s.pennation_angle)
    np.testing.assert_allclose(s.fiber_velocity, vmt * cos, rtol=1e-13)
    vn = s.fiber_velocity / (p.max_contraction_velocity * p.optimal_fiber_length)
    np.testing.assert_allclose(s.normalized_fiber_velocity, vn, rtol=1e-13)
    active = (
        p.max_isometric_force
        * a
        * active_force_length(s.normalized_fiber_length, curves="degroote2016", params=p)
        * force_velocity(vn, curves="degroote2016", params=p)
    )
    np.testing.assert_allclose(s.active_fiber_force, active, rtol=1e-12)
    np.testing.assert_allclose(s.fiber_force * cos, s.tendon_force, rtol=1e-12)


def test_thelen_equilibrium_with_speed_is_consistent():
    p = _params(3, seed=5)
    rng = np.random.default_rng(6)
    lmt = _mt_lengths(p, rng.uniform(0.8, 1.3, (5, 3)), 0.01)
    vmt = rng.uniform(-0.3, 0.3, (5, 3))
    a = rng.uniform(0.1, 1, (5, 3))
    s = muscle_equilibrium(p, a, lmt, vmt)
    # the reported velocity gives back the active force through Thelen's fV
    fv = force_velocity(s.normalized_fiber_velocity, params=p, activation=a)
    fl = active_force_length(s.normalized_fiber_length, params=p)
    np.testing.assert_allclose(
        s.active_fiber_force, p.max_isometric_force * a * fl * fv, rtol=1e-10
    )
    np.testing.assert_allclose(
        s.fiber_force * np.cos(s.pennation_angle), s.tendon_force, rtol=1e-12
    )
    # the fiber shortens when the path shortens fast
    assert np.all(np.sign(s.fiber_velocity[np.abs(vmt) > 0.05]) == np.sign(vmt[np.abs(vmt) > 0.05]))


@pytest.mark.parametrize("curves", CURVES)
def test_batch_equals_one_by_one(curves):
    p = _params(2, seed=7)
    rng = np.random.default_rng(8)
    lmt = _mt_lengths(p, rng.uniform(0.8, 1.3, (3, 4, 2)), 0.01)
    vmt = rng.uniform(-0.2, 0.2, (3, 4, 2))
    a = rng.uniform(0.1, 1, (3, 4, 2))
    s = muscle_equilibrium(p, a, lmt, vmt, curves=curves)
    assert s.fiber_length.shape == (3, 4, 2)
    for idx in [(0, 0), (2, 3), (1, 2)]:
        for j in range(2):
            one = muscle_equilibrium(
                p.select([j]),
                a[idx][j : j + 1],
                lmt[idx][j : j + 1],
                vmt[idx][j : j + 1],
                curves=curves,
            )
            assert one.tendon_force[0] == pytest.approx(s.tendon_force[idx][j], rel=1e-12)


@pytest.mark.parametrize("curves", CURVES)
def test_stiff_tendon_approaches_rigid_tendon(curves):
    p = _params(3, seed=9, tendon_strain=1e-6)
    lmt = _mt_lengths(p, np.array([0.9, 1.0, 1.2]), 0.0)
    a = np.array([0.3, 0.7, 1.0])
    rigid = muscle_equilibrium(p, a, lmt, curves=curves, rigid_tendon=True)
    elastic = muscle_equilibrium(p, a, lmt, curves=curves)
    np.testing.assert_allclose(elastic.tendon_force, rigid.tendon_force, rtol=1e-4)
    np.testing.assert_allclose(elastic.fiber_length, rigid.fiber_length, rtol=1e-5)


@pytest.mark.parametrize("curves", CURVES)
def test_rigid_tendon_optimal_length_identity(curves):
    p = _params(4, seed=10)
    lmt = p.tendon_slack_length + p.optimal_fiber_length * np.cos(p.pennation_angle)
    a = np.array([0.05, 0.3, 0.8, 1.0])
    s = muscle_equilibrium(p, a, lmt, 0.0, curves=curves, rigid_tendon=True)
    expected = a * p.max_isometric_force * np.cos(p.pennation_angle)
    np.testing.assert_allclose(
        s.active_fiber_force * np.cos(s.pennation_angle), expected, rtol=1e-12
    )
    if curves == "thelen2003":
        np.testing.assert_allclose(s.tendon_force, expected, rtol=1e-12)


@pytest.mark.parametrize("curves", CURVES)
def test_force_coefficients(curves):
    p = _params(3, seed=11)
    rng = np.random.default_rng(12)
    lmt = _mt_lengths(p, rng.uniform(0.8, 1.5, (7, 3)), 0.0)
    a = rng.uniform(0.1, 1.0, (7, 3))
    act, pas = force_coefficients(p, lmt, curves=curves)
    s = muscle_equilibrium(p, a, lmt, curves=curves, rigid_tendon=True)
    np.testing.assert_allclose(a * act + pas, s.tendon_force, rtol=1e-12)
    vmt = rng.uniform(-0.3, 0.3, (7, 3))
    act, pas = force_coefficients(p, lmt, vmt, curves=curves)
    s1 = muscle_equilibrium(p, np.ones_like(a), lmt, vmt, curves=curves, rigid_tendon=True)
    np.testing.assert_allclose(act + pas, s1.tendon_force, rtol=1e-12)
    os_act, os_pas = force_coefficients(p, lmt, vmt, curves=curves, convention="opensim")
    cos = np.cos(s1.pennation_angle)
    np.testing.assert_allclose(os_act, act if curves == "thelen2003" else act / cos, rtol=1e-12)
    np.testing.assert_array_equal(os_pas, 0.0)
    with pytest.raises(DataError, match="convention"):
        force_coefficients(p, lmt, curves=curves, convention="fiber")
    f0, zero = force_coefficients(p, lmt, vmt, curves=curves, force_length_velocity=False)
    np.testing.assert_array_equal(f0, np.broadcast_to(p.max_isometric_force, (7, 3)))
    np.testing.assert_array_equal(zero, 0.0)


def test_no_equilibrium_warns_and_gives_nan():
    p = _params(2, seed=13)
    lmt = np.array([0.5 * p.tendon_slack_length[0], _mt_lengths(p, 1.0, 0.01)[1]])
    with pytest.warns(AhbmWarning, match="muscle_0"):
        s = muscle_equilibrium(p, [0.5, 0.5], lmt, curves="degroote2016")
    assert np.isnan(s.tendon_force[0]) and not s.converged[0]
    assert np.isfinite(s.tendon_force[1]) and s.converged[1]


# --- activation dynamics ----------------------------------------------------------------


def test_thelen_activation_rate_closed_form():
    p = _params(3, seed=14, activation_time_constant=0.01, deactivation_time_constant=0.04)
    u = np.array([1.0, 0.0, 0.3])
    a = np.array([0.2, 0.6, 0.3])
    expected = [(1 - 0.2) / (0.01 * (0.5 + 0.3)), (0 - 0.6) / (0.04 / (0.5 + 0.9)), 0.0]
    np.testing.assert_allclose(activation_rate(u, a, p), expected, rtol=1e-14)
    # the activation floor: below minimum activation it is clamped first
    assert activation_rate([0.0], [0.0], p.select([0]))[0] == pytest.approx(
        -0.01 / (0.04 / (0.5 + 0.015))
    )


def test_degroote_activation_rate_blends_the_two_time_constants():
    p = _params(2, seed=15, activation_time_constant=0.015, deactivation_time_constant=0.06)
    u = np.array([0.9, 0.1])
    a = np.array([0.4, 0.6])
    r = activation_rate(u, a, p, curves="degroote2016")
    f = 0.5 * np.tanh(0.1 * (u - a))
    fac = 0.5 + 1.5 * a
    expected = ((f + 0.5) / (0.015 * fac) + (0.5 - f) * fac / 0.06) * (u - a)
    np.testing.assert_allclose(r, expected, rtol=1e-14)
    # very steep smoothing approaches the switched (Thelen-form) rate
    steep = MuscleParameters(
        **{**_asdict(p), "activation_smoothing": 1e4, "minimum_activation": 0.0}
    )
    np.testing.assert_allclose(
        activation_rate(u, a, steep, curves="degroote2016"), activation_rate(u, a, steep), rtol=1e-9
    )


@pytest.mark.parametrize("curves", CURVES)
def test_activation_to_excitation_inverts_activation_rate(curves):
    p = _params(4, seed=16)
    rng = np.random.default_rng(17)
    a = rng.uniform(0.05, 0.95, (20, 4))
    u_true = rng.uniform(0.0, 1.0, (20, 4))
    rate = activation_rate(u_true, a, p, curves=curves)
    np.testing.assert_allclose(
        activation_to_excitation(a, rate, p, curves=curves), u_true, atol=1e-12
    )
    # unreachable rates give the bound
    too_fast = activation_rate(np.ones((20, 4)), a, p, curves=curves) + 1.0
    assert np.all(activation_to_excitation(a, too_fast, p, curves=curves) == 1.0)
    too_slow = activation_rate(np.zeros((20, 4)), a, p, curves=curves) - 1.0
    assert np.all(activation_to_excitation(a, too_slow, p, curves=curves) == 0.0)


def _asdict(p):
    import dataclasses

    return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}


# --- parameters -------------------------------------------------------------------------


def test_from_muscles_reads_attributes_and_opensim_properties():
    from ahbm.muscles import Muscle, PathPoint

    pts = (PathPoint("o", "ground", (0, 0, 0)), PathPoint("i", "ground", (0.3, 0, 0)))
    muscles = [
        Muscle(
            "a",
            pts,
            max_isometric_force=1000,
            optimal_fiber_length=0.1,
            tendon_slack_length=0.2,
            pennation_angle=0.1,
            parameters={"FmaxTendonStrain": 0.033, "KshapeActive": 0.5},
        ),
        Muscle(
            "b",
            pts,
            model="DeGrooteFregly2016Muscle",
            max_isometric_force=500,
            optimal_fiber_length=0.08,
            tendon_slack_length=0.3,
            deactivation_time_constant=0.06,
            parameters={"active_force_width_scale": 1.5, "fiber_damping": 0.01},
        ),
        SimpleNamespace(
            name="c",
            model="Millard2012EquilibriumMuscle",
            max_isometric_force=200.0,
            optimal_fiber_length=0.05,
            tendon_slack_length=0.1,
        ),
    ]
    p = MuscleParameters.from_muscles(muscles)
    millard = SimpleNamespace(
        name="d", model="Millard2012EquilibriumMuscle", max_isometric_force=1.0,
        optimal_fiber_length=0.1, tendon_slack_length=0.2,
        parameters={"TendonForceLengthCurve": {"strain_at_one_norm_force": 0.04}},
    )  # fmt: skip
    pm = MuscleParameters.from_muscles([muscles[2], millard])
    np.testing.assert_array_equal(pm.tendon_strain, [0.049, 0.04])  # Millard's curves
    np.testing.assert_array_equal(pm.passive_strain, [0.7, 0.7])
    assert p.names == ("a", "b", "c")
    np.testing.assert_array_equal(p.max_isometric_force, [1000, 500, 200])
    np.testing.assert_array_equal(p.pennation_angle, [0.1, 0, 0])
    assert p.tendon_strain[0] == 0.033 and p.tendon_strain[1] == 0.049
    assert p.tendon_strain[2] == 0.049 and p.passive_strain[2] == 0.7
    assert p.kshape_active[0] == 0.5 and p.active_force_width_scale[1] == 1.5
    assert p.fiber_damping[1] == 0.01 and p.deactivation_time_constant[1] == 0.06
    assert np.isnan(p.deactivation_time_constant[2])
    assert p.resolved("thelen2003").deactivation_time_constant[2] == 0.05
    assert p.select(["c", "a"]).names == ("c", "a")


def test_bad_input():
    p = _params(2)
    with pytest.raises(DataError, match="curves"):
        muscle_equilibrium(p, [0.5, 0.5], [0.3, 0.3], curves="hill")
    with pytest.raises(DataError, match="max_isometric_force"):
        MuscleParameters(
            max_isometric_force=[-1, 2], optimal_fiber_length=0.1, tendon_slack_length=0.2
        )
    with pytest.raises(DataError, match="different numbers of muscles"):
        MuscleParameters(
            max_isometric_force=[1, 2],
            optimal_fiber_length=[0.1, 0.1, 0.1],
            tendon_slack_length=0.2,
        )
    with pytest.raises(DataError, match="pennation_angle"):
        MuscleParameters(
            max_isometric_force=1,
            optimal_fiber_length=0.1,
            tendon_slack_length=0.2,
            pennation_angle=2.0,
        )
    with pytest.raises(DataError, match="activation"):
        muscle_equilibrium(p, [1.5, 0.5], [0.3, 0.3])
    with pytest.raises(DataError, match="one per muscle"):
        muscle_equilibrium(p, [0.5, 0.5, 0.5], [0.3, 0.3, 0.3])
    with pytest.raises(DataError, match="MuscleParameters"):
        muscle_equilibrium({"max_isometric_force": 1}, [0.5], [0.3])
    with pytest.raises(DataError, match="mt_length"):
        force_coefficients(p, [0.3, None])
    with pytest.raises(DataError, match="rigid_tendon"):
        muscle_equilibrium(p, [0.5, 0.5], [0.3, 0.3], rigid_tendon=np.zeros(0))
    with pytest.raises(DataError, match="tol"):
        muscle_equilibrium(p, [0.5, 0.5], [0.3, 0.3], tol="x")
    with pytest.raises(DataError, match="max_iterations"):
        muscle_equilibrium(p, [0.5, 0.5], [0.3, 0.3], max_iterations=None)
    with pytest.raises(DataError, match="names"):
        MuscleParameters(
            max_isometric_force=1, optimal_fiber_length=0.1, tendon_slack_length=0.2, names="abc"
        )
    with pytest.raises(DataError, match="muscles"):
        MuscleParameters.from_muscles(None)
    with pytest.raises(DataError, match="muscle names"):
        p.select([1.5])
    with pytest.raises(DataError, match="has no `optimal_fiber_length`"):
        MuscleParameters.from_muscles([SimpleNamespace(name="x", max_isometric_force=1.0)])
