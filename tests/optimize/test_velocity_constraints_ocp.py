"""Velocity-level (nonholonomic) constraints in optimal control: a skate steered between poses.

References: the forward simulation of the optimal torques with the same
constraint (:func:`ahbm.dynamics.simulate`, its own multiplier solve) must
reproduce the optimal trajectory to the order of the transcription; the
multiplier is the lateral force of the hand-derived balance
``m (−sin θ ẍ + cos θ ÿ) = λ + τ_lat``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from ahbm.dynamics import VelocityConstraint, simulate  # noqa: E402
from ahbm.errors import AhbmWarning, DataError  # noqa: E402
from ahbm.models import knife_edge, rolling_disk  # noqa: E402
from ahbm.optimize import ControlRate, Effort, Phase, solve  # noqa: E402
from ahbm.optimize.velocity_constraints import symbolic_velocity_rows  # noqa: E402

MASS = 1.0
SMOOTH = ControlRate(controls=["lambda:"], weight=1e-4)


def _phase(model, *, nodes=31, dynamics="explicit", objectives=(Effort(), SMOOTH)):
    return Phase(model, nodes=nodes, duration=2.0, objectives=list(objectives),
                 constraints=list(model.constraints), dynamics=dynamics,
                 initial={"q": [0.0, 0.0, 0.0], "qd": [0.0, 0.0, 0.0]},
                 final={"q": [0.5, 0.5, np.pi / 2], "qd": [0.0, 0.0, 0.0]})  # fmt: skip


@pytest.fixture(scope="module")
def skate():
    return knife_edge(mass=MASS, inertia=0.05)


@pytest.fixture(scope="module", params=["explicit", "implicit"])
def steered(skate, request):
    ph = _phase(skate, dynamics=request.param)
    return ph, solve(ph, method="hermite-simpson", verbose=False)


def test_skate_steered_between_poses_keeps_the_constraint(skate, steered):
    ph, r = steered
    assert r.success
    assert "lambda:no_slip[0]" in ph.control_names
    p = r.phases[0]
    # the constraint at the collocation points (the nodes)
    res = skate.constraints[0].residual(skate, p.q, p.qd)
    assert np.abs(res).max() <= 1e-8
    assert np.abs(p.q[-1] - [0.5, 0.5, np.pi / 2]).max() <= 1e-8
    # the lateral force comes from the multiplier, hardly from the (costed) torques
    th = p.q[:, 2]
    tau_lat = -np.sin(th) * p.tau[:, 0] + np.cos(th) * p.tau[:, 1]
    assert np.abs(tau_lat).max() <= 0.02 * np.abs(p.tau).max()  # measured 0.4 %
    lam = r.phase_solutions[0].U[ph.control_names.index("lambda:no_slip[0]")]
    a_lat = -np.sin(th) * p.qdd[:, 0] + np.cos(th) * p.qdd[:, 1]
    assert np.allclose(MASS * a_lat, lam + tau_lat, atol=1e-7)
    assert np.abs(lam).max() > 0.1  # it does turn the skate


def test_forward_simulation_of_the_optimal_torques_reproduces_the_motion(skate, steered):
    _, r = steered
    p = r.phases[0]

    def tau(t, q, qd):  # the controls are linear between the nodes
        return np.array([np.interp(t, p.t, p.tau[:, k]) for k in range(3)])

    s = simulate(skate, (0.0, 2.0), p.q[0], p.qd[0], tau=tau, t_eval=p.t, method="DOP853",
                 rtol=1e-10, atol=1e-10)  # fmt: skip
    assert np.abs(s.q - p.q).max() <= 1e-3  # measured 5e-6 (explicit, Hermite–Simpson, 31 nodes)


def test_unregularized_multipliers_warn(skate):
    with pytest.warns(AhbmWarning, match="lambda:"):
        _phase(skate, objectives=[Effort()])
    with warnings.catch_warnings():
        warnings.simplefilter("error", AhbmWarning)
        _phase(skate, objectives=[Effort(), ControlRate(weight=1e-3)])  # all controls


def test_symbolic_rows_equal_numeric(skate):
    disk = rolling_disk()
    rng = np.random.default_rng(3)
    for model in (skate, disk):
        c = model.constraints[0]
        q = ca.SX.sym("q", model.nq)
        A, b = symbolic_velocity_rows(c, q, model.nv)
        f = ca.Function("rows", [q], [A, b])
        for _ in range(3):
            qv = rng.uniform(-1, 1, model.nq)
            An, bn = c.matrices(model, qv[None])
            As, bs = (np.asarray(x, float) for x in f(qv))
            assert np.allclose(As, An[0], atol=1e-14) and np.allclose(bs[:, 0], bn[0], atol=1e-14)


def test_bad_velocity_constraints_in_a_phase(skate):
    def A(t, q):
        return [[-np.sin(q[2]), np.cos(q[2]), 0.0]]

    for kw, match in (({"rheonomic": True}, "rheonomic"), ({"vectorized": True}, "vectorized")):
        with pytest.raises(DataError, match=match):
            Phase(skate, constraints=[VelocityConstraint(A, size=1, **kw)],
                  objectives=[Effort(), SMOOTH])  # fmt: skip
    wrong = VelocityConstraint(lambda t, q, xp=np: [[xp.sin(q[2]), 0.0]], size=1, name="w")
    ph = Phase(skate, constraints=[wrong], objectives=[Effort(), SMOOTH])
    with pytest.raises(DataError, match="`A`.*shape"):
        ph.path_constraints(ca.SX.sym("x", 6), ca.SX.sym("u", ph.nu), ca.SX.sym("p", 0))
