"""Millard2012EquilibriumMuscle muscles in muscle-driven optimal control (ahbm.optimize).

References: the numeric Millard model of ahbm.muscles.millard (millard_equilibrium with
rigid tendons, millard_state with elastic ones, millard_activation_rate), itself checked
against OpenSim 4.6 in tests/peers/test_opensim_millard.py; the numeric De Groote model
for the muscles of other classes; the inverse dynamics of the solutions' motions.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ahbm.dynamics import rnea
from ahbm.errors import DataError
from ahbm.models.arm import arm_model
from ahbm.muscles import lengthening_speeds, muscle_lengths
from ahbm.muscles.hill import muscle_equilibrium
from ahbm.muscles.hill_curves import MuscleParameters
from ahbm.muscles.millard import (
    millard_activation_rate,
    millard_equilibrium,
    millard_minimum_fiber_length,
    millard_state,
)
from ahbm.muscles.millard_curves import MillardParameters

ca = pytest.importorskip("casadi")

from ahbm.optimize import (  # noqa: E402
    Effort,
    MetabolicCost,
    MuscleDrivenPhase,
    MuscleEffort,
    TrackCoordinates,
    solve,
    symbolic_muscles,
)

MILLARD = "Millard2012EquilibriumMuscle"


def _arm(millard=("TRIlong", "TRIlat", "TRImed", "BIClong", "BICshort", "BRA")):
    """The six-muscle arm, the named muscles made Millard2012EquilibriumMuscle."""
    m = arm_model()
    m.muscles = [dataclasses.replace(mu, model=MILLARD) if mu.name in millard else mu
                 for mu in m.muscles]  # fmt: skip
    return m


def _states(m, rng, k=40):
    q = rng.uniform([-0.2, 0.2], [1.2, 2.0], (k, 2))
    qd = rng.normal(0, 2.0, (k, 2))
    return q, qd


def _cols(f, *args):
    return np.asarray(f.map(args[0].shape[1])(*args), float).T


def test_mixed_model_forces_follow_each_muscles_class():
    m = _arm(millard=("TRIlong", "BIClong", "BRA"))
    sm = symbolic_muscles(m)
    assert sm.is_millard == [True, False, False, True, False, True]
    rng = np.random.default_rng(2)
    q, qd = _states(m, rng)
    a = rng.uniform(0, 1, (q.shape[0], 6))
    F = _cols(sm.forces, a.T, q.T, qd.T)
    lmt, vmt = muscle_lengths(m, q), lengthening_speeds(m, q, qd)
    mill = np.flatnonzero(sm.is_millard)
    dg = np.flatnonzero(~np.asarray(sm.is_millard))
    ref = millard_equilibrium(sm.millard, a[:, mill], lmt[:, mill], vmt[:, mill],
                              rigid_tendon=True).tendon_force  # fmt: skip
    f0 = sm.params.max_isometric_force
    assert np.max(np.abs(F[:, mill] - ref) / np.maximum(ref, 1e-3 * f0[mill])) < 1e-10
    assert (ref > 1.0).sum() > 60
    p_dg = MuscleParameters.from_muscles([m.muscles[i] for i in dg])
    ref_dg = muscle_equilibrium(p_dg, a[:, dg], lmt[:, dg], vmt[:, dg], curves="degroote2016",
                                rigid_tendon=True).tendon_force  # fmt: skip
    np.testing.assert_allclose(F[:, dg], ref_dg, rtol=1e-12, atol=1e-9)
    # activation dynamics: OpenSim's switch exactly (smoothing None), De Groote's others
    exact = symbolic_muscles(m, activation_smoothing=None)
    e = rng.uniform(0, 1, (q.shape[0], 6))
    rate = _cols(exact.activation_rate, e.T, a.T)
    ref = millard_activation_rate(e[:, mill], a[:, mill], sm.millard)
    np.testing.assert_allclose(rate[:, mill], ref, rtol=1e-13)
    smooth = _cols(sm.activation_rate, e.T, a.T)
    np.testing.assert_allclose(smooth[:, dg], rate[:, dg], rtol=1e-13)
    far = np.abs(e - a)[:, mill] > 0.6  # the blend is OpenSim's switch far from e = a
    np.testing.assert_allclose(smooth[:, mill][far], rate[:, mill][far], rtol=2e-5)


def test_elastic_equations_vanish_at_the_numeric_muscle_state():
    m = _arm()
    sm = symbolic_muscles(m)
    rng = np.random.default_rng(7)
    q, qd = _states(m, rng, 30)
    a = rng.uniform(0.02, 1, (30, 6))
    lmt = muscle_lengths(m, q)
    p = sm.millard
    eq = millard_equilibrium(p, a, lmt)
    st = millard_state(p, a, lmt, eq.fiber_length * rng.uniform(0.98, 1.02, (30, 6)))
    live = st.fiber_length > millard_minimum_fiber_length(p) * (1 + 1e-9)
    assert live.sum() > 100
    r = _cols(sm.tendon_residual, a.T, st.normalized_fiber_length.T,
              st.normalized_fiber_velocity.T, q.T, qd.T)  # fmt: skip
    assert np.abs(r[live]).max() < 1e-10
    F = _cols(sm.elastic_forces, st.normalized_fiber_length.T, q.T)
    np.testing.assert_allclose(F, st.tendon_force, rtol=1e-10, atol=1e-9)


def _reach(tendon, **kw):
    m = _arm()
    T = 0.5
    t = np.linspace(0, T, 51)
    s = t / T
    q0, q1 = np.array([0.3, 0.5]), np.array([0.6, 1.2])
    q_ref = q0 + (q1 - q0) * (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None]
    ph = MuscleDrivenPhase(m, nodes=11, duration=T, reserves=["shoulder", "elbow"],
                           tau_bounds=(-10.0, 10.0), tendon=tendon,
                           objectives=[TrackCoordinates(t, q_ref, weight=1e3),
                                       MuscleEffort(), Effort(weight=1.0, name="reserves")],
                           initial={"q": q0, "qd": [0.0, 0.0]}, **kw)  # fmt: skip
    return m, t, q_ref, ph


def _check_solution(m, t, q_ref, r):
    assert r.success, r.status
    P = r.phases[0]
    mus = P.muscles
    err = P.q - np.array([np.interp(P.t, t, q_ref[:, j]) for j in range(2)]).T
    assert np.abs(err).max() < np.radians(1.0)
    assert np.abs(mus["reserves"]).max() < 0.5  # the muscles do the work
    assert mus["activations"].min() >= 0.01 - 1e-8  # Millard's minimum activation
    np.testing.assert_allclose(P.tau, rnea(m, P.q, P.qd, P.qdd), atol=1e-9)
    return P, mus


def test_rigid_tendon_millard_reach_solves_with_the_numeric_forces():
    m, t, q_ref, ph = _reach("rigid")
    lo, _ = ph.state_bounds()
    assert np.all(lo[4:] == 0.01)
    r = solve(ph, method="trapezoidal", verbose=False)
    P, mus = _check_solution(m, t, q_ref, r)
    p = MillardParameters.from_muscles(m.muscles)
    lmt, vmt = muscle_lengths(m, P.q), lengthening_speeds(m, P.q, P.qd)
    F = millard_equilibrium(p, mus["activations"], lmt, vmt, rigid_tendon=True).tendon_force
    assert F.max() > 50.0
    np.testing.assert_allclose(mus["forces"], F, rtol=1e-10, atol=1e-8)


def test_elastic_tendon_millard_reach_solves_in_equilibrium():
    m, t, q_ref, ph = _reach("elastic")
    assert ph.state_names[10] == "lm:TRIlong" and ph.control_names[-1] == "vm:BRA"
    lo, hi = ph.state_bounds()
    p = MillardParameters.from_muscles(m.muscles)
    np.testing.assert_allclose(lo[10:], millard_minimum_fiber_length(p) / p.optimal_fiber_length)
    r = solve(ph, method="trapezoidal", verbose=False)
    P, mus = _check_solution(m, t, q_ref, r)
    # the numeric muscle at the solution's fiber lengths: the same tendon forces, and the
    # fiber velocities that balance fiber and tendon are the solution's
    lm = mus["normalized_fiber_lengths"] * p.optimal_fiber_length
    s = millard_state(p, mus["activations"], muscle_lengths(m, P.q), lm)
    assert s.tendon_force.max() > 50.0
    np.testing.assert_allclose(mus["forces"], s.tendon_force, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(mus["normalized_fiber_velocities"],
                               s.normalized_fiber_velocity, atol=1e-6)  # fmt: skip
    assert np.isnan(mus["tendon_force_rates"]).all()


def test_millard_muscles_refuse_the_metabolic_cost_and_bad_bounds():
    m = _arm(millard=("BRA",))
    with pytest.raises(DataError, match="Millard2012EquilibriumMuscle"):
        MuscleDrivenPhase(m, nodes=5, duration=0.5, objectives=[MetabolicCost()])
    with pytest.raises(DataError, match="fiber_velocity_bounds"):
        MuscleDrivenPhase(m, nodes=5, duration=0.5, fiber_velocity_bounds=(1.0, -1.0))
