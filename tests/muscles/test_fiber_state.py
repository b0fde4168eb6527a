"""De Groote's fiber quantities on any namespace (ahbm.muscles.fiber_state).

References: the numeric equilibrium (muscle_equilibrium, checked against OpenSim), the
public curves, De Groote's tendon residual, and the fiber velocity as the time derivative
of the fiber length along a trajectory (central differences).
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.muscles import (
    MuscleParameters,
    active_force_length,
    degroote_fiber_state,
    degroote_tendon_residual,
    muscle_equilibrium,
)

FIELDS = ("normalized_fiber_length", "fiber_velocity", "normalized_fiber_velocity",
          "active_fiber_force", "passive_fiber_force", "fiber_force", "tendon_force")  # fmt: skip


def _params():
    return MuscleParameters(max_isometric_force=[1000.0, 500.0, 800.0],
                            optimal_fiber_length=[0.1, 0.12, 0.08],
                            tendon_slack_length=[0.2, 0.25, 0.3],
                            pennation_angle=[0.1, 0.25, 0.0])  # fmt: skip


def _states(rng, n=60):
    a = rng.uniform(0.0, 1.0, (n, 3))
    lmt = np.array([0.3, 0.37, 0.38]) + rng.uniform(-0.03, 0.03, (n, 3))
    vmt = rng.uniform(-1.0, 1.0, (n, 3))
    return a, lmt, vmt


def test_rigid_tendon_equals_the_equilibrium_and_the_curves():
    p = _params()
    a, lmt, vmt = _states(np.random.default_rng(3))
    s = degroote_fiber_state(p, a, lmt, vmt)
    m = muscle_equilibrium(p, a, lmt, vmt, curves="degroote2016", rigid_tendon=True)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(s, f), getattr(m, f), rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(s.cos_pennation, np.cos(m.pennation_angle), rtol=1e-14)
    fl = active_force_length(s.normalized_fiber_length, curves="degroote2016", params=p)
    np.testing.assert_allclose(s.active_force_length, fl, rtol=1e-14)


def test_elastic_tendon_at_zero_rate_equals_the_elastic_equilibrium():
    p = _params()
    a, lmt, vmt = _states(np.random.default_rng(4))
    vmt = 0.3 * vmt  # slow enough for an equilibrium to exist everywhere
    m = muscle_equilibrium(p, a, lmt, vmt, curves="degroote2016")
    assert m.converged.all()
    ft = m.tendon_force / p.max_isometric_force
    s = degroote_fiber_state(p, a, lmt, vmt, tendon_force=ft, tendon_force_rate=0.0 * ft)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(s, f), getattr(m, f), rtol=1e-9, atol=1e-9)


def test_elastic_fiber_velocity_is_the_rate_of_the_fiber_length():
    # along lMT(t), F̃T(t): d lM/dt (central differences) = vM, and the force balance
    # F̃T - F cos α / F0 is De Groote's residual at the same tendon force rate
    p = _params()
    t = np.linspace(0.0, 1.0, 2001)[:, None]
    lmt = np.array([0.3, 0.37, 0.38]) + 0.02 * np.sin(3 * t + np.array([0.0, 1.0, 2.0]))
    vmt = 0.06 * np.cos(3 * t + np.array([0.0, 1.0, 2.0]))
    ft = 0.5 + 0.3 * np.sin(2 * t + np.array([0.3, 0.6, 0.9]))
    dft = 0.6 * np.cos(2 * t + np.array([0.3, 0.6, 0.9]))
    a = 0.4 + 0.2 * np.cos(t)
    s = degroote_fiber_state(p, a, lmt, vmt, tendon_force=ft, tendon_force_rate=dft)
    lm = s.normalized_fiber_length * p.optimal_fiber_length
    v_fd = np.gradient(lm, t[:, 0], axis=0, edge_order=2)
    np.testing.assert_allclose(s.fiber_velocity[5:-5], v_fd[5:-5], atol=2e-7)
    r = degroote_tendon_residual(p, a, lmt, vmt, ft, dft)
    np.testing.assert_allclose(ft - s.fiber_force * s.cos_pennation / p.max_isometric_force, r,
                               atol=1e-13)  # fmt: skip
    np.testing.assert_allclose(s.tendon_force, ft * p.max_isometric_force, rtol=1e-15)


def test_casadi_symbols_give_the_numeric_values():
    ca = pytest.importorskip("casadi")
    p = _params().resolved("degroote2016")
    a, lmt, vmt = _states(np.random.default_rng(5), n=8)
    x = ca.SX.sym("x", 3)
    for i in range(3):
        pi = MuscleParameters(**{f: getattr(p, f)[i] for f in (
            "max_isometric_force", "optimal_fiber_length", "tendon_slack_length",
            "pennation_angle")}).resolved("degroote2016")  # fmt: skip
        s = degroote_fiber_state(pi, x[0], x[1], x[2], xp=ca)
        f = ca.Function("f", [x], [ca.vertcat(*[getattr(s, k) for k in FIELDS])])
        ref = degroote_fiber_state(p, a, lmt, vmt)
        for k in range(a.shape[0]):
            got = np.asarray(f([a[k, i], lmt[k, i], vmt[k, i]]), float).ravel()
            want = [getattr(ref, name)[k, i] for name in FIELDS]
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)


def test_one_of_the_two_tendon_arguments_raises():
    with pytest.raises(DataError, match="tendon_force_rate"):
        degroote_fiber_state(_params(), 0.5, 0.3, 0.0, tendon_force=0.5)
