"""Metabolic cost as an objective of muscle-driven phases (ahbm.optimize.metabolic_objective).

References: the numeric muscle functions (paths, muscle_equilibrium, active_force_length)
feeding the numeric energy models (sharp, and smooth on numpy) at random states; central
finite differences of that numeric chain for the gradient; the quadrature of the
transcriptions (trapezoidal, Hermite-Simpson) of those numeric rates on solved problems.
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.models.arm import arm_model
from ahbm.muscles import (
    Bhargava2004Options,
    MetabolicParameters,
    MetabolicSmoothing,
    MuscleParameters,
    Umberger2010Options,
    active_force_length,
    bhargava2004_metabolics,
    bhargava2004_smooth_metabolics,
    lengthening_speeds,
    muscle_equilibrium,
    muscle_lengths,
    umberger2010_metabolics,
    umberger2010_smooth_metabolics,
)

ca = pytest.importorskip("casadi")

from ahbm.optimize import (  # noqa: E402
    Effort,
    MetabolicCost,
    MuscleDrivenPhase,
    metabolic_rates,
    solve,
)

MODEL = arm_model()
PARAMS = MuscleParameters.from_muscles(MODEL.muscles)
MET = MetabolicParameters(
    max_isometric_force=PARAMS.resolved("degroote2016").max_isometric_force,
    optimal_fiber_length=PARAMS.resolved("degroote2016").optimal_fiber_length,
    max_contraction_velocity=PARAMS.resolved("degroote2016").max_contraction_velocity,
    ratio_slow_twitch_fibers=[0.3, 0.4, 0.5, 0.6, 0.45, 0.55],
)


def _numeric_rates(energy_model, q, qd, a, e, *, smoothing=None, options=None, params=MET):
    """Per-muscle totals (..., 6) from the numeric muscle functions (independent chain)."""
    lmt, vmt = muscle_lengths(MODEL, q), lengthening_speeds(MODEL, q, qd)
    s = muscle_equilibrium(PARAMS, a, lmt, vmt, curves="degroote2016", rigid_tendon=True)
    fl = active_force_length(s.normalized_fiber_length, curves="degroote2016", params=PARAMS)
    args = (params, e, a, s.normalized_fiber_length, s.fiber_velocity, s.active_fiber_force)
    if energy_model == "umberger2010":
        if smoothing is None:
            return umberger2010_metabolics(*args, fl, options=options)
        return umberger2010_smooth_metabolics(*args, fl, options=options, smoothing=smoothing)
    if smoothing is None:
        return bhargava2004_metabolics(*args, s.fiber_force, fl, options=options)
    return bhargava2004_smooth_metabolics(*args, s.fiber_force, fl, options=options,
                                          smoothing=smoothing)  # fmt: skip


def _phase(objectives, **kwargs):
    kw = dict(nodes=5, duration=0.5, activation_bounds=(0.01, 1.0))
    kw.update(kwargs)
    return MuscleDrivenPhase(MODEL, objectives=objectives, **kw)


def _integrand(ph, name):
    x, u = ca.SX.sym("x", ph.nx), ca.SX.sym("u", ph.nu)
    L = ph.running_cost_terms(x, u, ca.SX(0, 1), 0.0)[name]
    return ca.Function("L", [x, u], [L, ca.gradient(L, ca.vertcat(x, u))])


def _random_state(rng):
    q, qd = rng.uniform(0.2, 1.4, 2), rng.normal(0.0, 2.0, 2)
    a, e = rng.uniform(0.02, 1.0, 6), rng.uniform(0.02, 1.0, 6)
    return q, qd, a, e


@pytest.mark.parametrize("energy_model", ["umberger2010", "bhargava2004"])
def test_integrand_equals_the_numeric_smooth_model(energy_model):
    sm = MetabolicSmoothing(velocity_smoothing=20.0, fiber_length_smoothing=50.0)
    if energy_model == "umberger2010":
        opts = Umberger2010Options(use_Bhargava_recruitment_model=False)
    else:
        opts = Bhargava2004Options(use_force_dependent_shortening_prop_constant=True)
    cost = MetabolicCost(weight=0.3, energy_model=energy_model, smoothing=sm, options=opts,
                         parameters=MET, muscles=("BIClong", "BRA", "TRIlat"),
                         body_mass=70.0, distance=2.0, include_basal=True)  # fmt: skip
    ph = _phase([cost])
    f = _integrand(ph, "metabolic_cost")
    idx = [ph.muscle_names.index(n) for n in cost.muscles]
    rng = np.random.default_rng(11)
    for _ in range(6):
        q, qd, a, e = _random_state(rng)
        got = float(f(np.r_[q, qd, a], np.r_[0.0, 0.0, e])[0])
        r = _numeric_rates(energy_model, q, qd, a, e, smoothing=sm, options=opts)
        want = 0.3 * (r.total[idx].sum() + 1.2 * 70.0) / (70.0 * 2.0)
        assert got == pytest.approx(want, rel=1e-12)


def test_elastic_tendon_integrand_at_the_tendon_equilibrium():
    # tendon force state at the elastic equilibrium, zero rate: the fiber state of
    # muscle_equilibrium(..., curves="degroote2016") (elastic) feeds the numeric model
    cost = MetabolicCost(energy_model="bhargava2004", parameters=MET)
    ph = _phase([cost], tendon="elastic")
    f = _integrand(ph, "metabolic_cost")
    rng = np.random.default_rng(13)
    for _ in range(4):
        q, qd, a, e = _random_state(rng)
        qd = 0.2 * qd
        lmt, vmt = muscle_lengths(MODEL, q), lengthening_speeds(MODEL, q, qd)
        s = muscle_equilibrium(PARAMS, a, lmt, vmt, curves="degroote2016")
        assert s.converged.all()
        ft = s.tendon_force / PARAMS.resolved("degroote2016").max_isometric_force
        got = float(f(np.r_[q, qd, a, ft], np.r_[0.0, 0.0, e, np.zeros(6)])[0])
        fl = active_force_length(s.normalized_fiber_length, curves="degroote2016",
                                 params=PARAMS)  # fmt: skip
        r = bhargava2004_smooth_metabolics(MET, e, a, s.normalized_fiber_length,
                                           s.fiber_velocity, s.active_fiber_force,
                                           s.fiber_force, fl)  # fmt: skip
        assert got == pytest.approx(r.total.sum(), rel=1e-9)


@pytest.mark.parametrize("energy_model", ["umberger2010", "bhargava2004"])
def test_integrand_gradient_equals_finite_differences(energy_model):
    ph = _phase([MetabolicCost(energy_model=energy_model, parameters=MET)])
    f = _integrand(ph, "metabolic_cost")
    rng = np.random.default_rng(12)
    for _ in range(3):
        q, qd, a, e = _random_state(rng)
        z = np.r_[q, qd, a, 0.0, 0.0, e]
        grad = np.asarray(f(z[:10], z[10:])[1], float).ravel()

        def value(zz):
            return _numeric_rates(energy_model, zz[:2], zz[2:4], zz[4:10],
                                  zz[12:], smoothing=MetabolicSmoothing()).total.sum()  # fmt: skip

        h = 1e-6
        fd = np.array([(value(z + h * d) - value(z - h * d)) / (2 * h) for d in np.eye(z.size)])
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-5 * np.abs(fd).max())
        assert np.all(grad[10:12] == 0.0)  # the reserves do not enter


def _x_blocks(res, ph, n):
    """Node and midpoint states, node controls of a one-phase solution vector."""
    x = np.asarray(res.x, float)
    nx, nu = ph.nx, ph.nu
    X = x[: nx * n].reshape(n, nx).T
    U = x[nx * n : (nx + nu) * n].reshape(n, nu).T
    rest = x[(nx + nu) * n :]
    return X, U, rest.reshape(n - 1, nx).T if rest.size else None


@pytest.mark.parametrize("method", ["trapezoidal", "hermite-simpson"])
def test_cost_of_a_solution_is_the_quadrature_of_the_numeric_rates(method):
    n = 9
    cost = MetabolicCost(weight=0.1, parameters=MET)
    ph = _phase([cost, Effort(weight=10.0, name="reserves")], nodes=n, duration=0.6,
                reserves=["shoulder", "elbow"], tau_bounds=(-5.0, 5.0),
                initial={"q": [0.3, 0.5], "qd": [0.0, 0.0]},
                final={"q": [0.6, 1.1], "qd": [0.0, 0.0]})  # fmt: skip
    r = solve(ph, method=method, verbose=False)
    assert r.success, r.status
    P = r.phases[0]
    sm = MetabolicSmoothing()

    def rate(X, U):
        return 0.1 * _numeric_rates("umberger2010", X[:2].T, X[2:4].T, X[4:10].T,
                                    U[2:8].T, smoothing=sm).total.sum(axis=1)  # fmt: skip

    X, U, Xm = _x_blocks(r, ph, n)
    np.testing.assert_array_equal(X[:2].T, P.q)
    L = rate(X, U)
    h = P.t[1] - P.t[0]
    if method == "trapezoidal":
        want = h / 2 * (L[:-1] + L[1:]).sum()
    else:
        Lm = rate(Xm, 0.5 * (U[:, :-1] + U[:, 1:]))
        want = h / 6 * (L[:-1] + 4 * Lm + L[1:]).sum()
    assert r.cost_terms["metabolic_cost"] == pytest.approx(want, rel=1e-11)
    # the sharp rates of the solution (metabolic_rates) from the same independent chain
    m = metabolic_rates(ph, P, parameters=MET, body_mass=70.0)
    sharp = _numeric_rates("umberger2010", P.q, P.qd, P.muscles["activations"].clip(0),
                           P.muscles["excitations"].clip(0))  # fmt: skip
    for field in ("activation_maintenance", "shortening", "mechanical_work", "total"):
        np.testing.assert_allclose(getattr(m.rates, field), getattr(sharp, field),
                                   rtol=1e-11, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(m.muscles_total, sharp.total.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(m.total, m.muscles_total + 84.0, rtol=1e-12)
    assert m.energy == pytest.approx(np.sum(np.diff(P.t) * (m.total[1:] + m.total[:-1]) / 2))
    assert m.energy_per_muscle.sum() == pytest.approx(m.energy - 84.0 * 0.6, rel=1e-12)
    # smooth and sharp models agree to the blends' widths (a few per cent of the energy)
    assert 10 * m.energy_per_muscle.sum() * 0.1 == pytest.approx(
        10 * r.cost_terms["metabolic_cost"], rel=0.15
    )
    assert m.rates.total.shape == (n, 6) and m.fiber.fiber_velocity.shape == (n, 6)


def test_bad_metabolic_costs_raise():
    with pytest.raises(DataError, match="energy_model"):
        MetabolicCost(energy_model="margaria")
    with pytest.raises(DataError, match="Umberger2010Options"):
        MetabolicCost(options=Bhargava2004Options())
    with pytest.raises(DataError, match="needs `body_mass`"):
        MetabolicCost(include_basal=True)
    with pytest.raises(DataError, match="distance"):
        MetabolicCost(distance=-1.0)
    with pytest.raises(DataError, match="smoothing"):
        MetabolicCost(smoothing=10.0)
    with pytest.raises(DataError, match="weight"):
        MetabolicCost(weight=float("nan"))
    with pytest.raises(DataError, match=r"activation_bounds=\(0.01, 1\)"):
        MuscleDrivenPhase(MODEL, objectives=[MetabolicCost()])
    MuscleDrivenPhase(MODEL, objectives=[MetabolicCost(energy_model="bhargava2004")])
    with pytest.raises(DataError, match="has 1 muscles, the phase 6"):
        one = MetabolicParameters(max_isometric_force=1.0, optimal_fiber_length=1.0)
        _phase([MetabolicCost(parameters=one)])
    with pytest.raises(DataError, match="not a muscle of the phase"):
        _phase([MetabolicCost(muscles="deltoid")])
    with pytest.raises(DataError, match="MuscleDrivenPhase"):
        metabolic_rates(object(), None)
    with pytest.raises(DataError, match="not a solution of this"):
        metabolic_rates(_phase([]), object())
