"""OpenSim Moco against ahbm.optimize on the same torque-driven pendulum swing-up.

The problem: the teaching pendulum (m = 0.5 kg, l = 0.4 m, J_O = 0.0267 kg·m²,
angle from the horizontal) swings up from hanging (q = −π/2) to upright
(q = π/2), at rest at both ends, in 1 s, with the least ``∫τ² dt`` and
|τ| ≤ 10 N·m. Moco (in the ``opensim`` package) solves it in a child process
through ``opensim_oracle`` (OpenSim and CasADi cannot share an interpreter; the
child never imports casadi) with its CasADi solver, Hermite–Simpson, 50 mesh
intervals; ahbm solves it here with each of its transcriptions. The optimal
costs agree within 1 % and the trajectories within 1 % RMS of their range.

:func:`moco_swing_up` is also used by ``benchmarks/bench_optimize.py``.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from opensim_oracle import opensim_run

#: the shared problem
PROBLEM = {
    "mass": 0.5,
    "length": 0.4,
    "inertia_o": 0.0267,
    "g": 9.81,
    "tau_max": 10.0,
    "duration": 1.0,
    "q0": -np.pi / 2,
    "qf": np.pi / 2,
}

MOCO_SWING_UP = """
import time

p = INPUTS
model = osim.Model()
model.setName("pendulum")
model.setGravity(osim.Vec3(0.0, -p["g"], 0.0))
j_c = p["inertia_o"] - p["mass"] * (p["length"] / 2) ** 2  # about the COM (slender rod)
rod = osim.Body("rod", p["mass"], osim.Vec3(p["length"] / 2, 0, 0), osim.Inertia(0.0, j_c, j_c))
model.addBody(rod)
pin = osim.PinJoint("pin", model.getGround(), osim.Vec3(0), osim.Vec3(0), rod, osim.Vec3(0),
                    osim.Vec3(0))
pin.updCoordinate().setName("q")
model.addJoint(pin)
act = osim.CoordinateActuator("q")
act.setName("tau")
act.setOptimalForce(1.0)
act.setMinControl(-p["tau_max"])
act.setMaxControl(p["tau_max"])
model.addForce(act)
model.finalizeConnections()

study = osim.MocoStudy()
problem = study.updProblem()
problem.setModel(model)
problem.setTimeBounds(0.0, p["duration"])
problem.setStateInfo("/jointset/pin/q/value", [-10.0, 10.0], p["q0"], p["qf"])
problem.setStateInfo("/jointset/pin/q/speed", [-50.0, 50.0], 0.0, 0.0)
problem.setControlInfo("/forceset/tau", [-p["tau_max"], p["tau_max"]])
problem.addGoal(osim.MocoControlGoal("effort"))
solver = study.initCasADiSolver()
solver.set_num_mesh_intervals(p["intervals"])
solver.set_transcription_scheme(p["scheme"])
solver.set_optim_convergence_tolerance(1e-8)
solver.set_optim_constraint_tolerance(1e-8)
solver.set_verbosity(0)
walls = []
for _ in range(p["repeat"]):
    t0 = time.perf_counter()
    sol = study.solve()
    walls.append(time.perf_counter() - t0)
OUT["success"] = bool(sol.success())
OUT["status"] = sol.getStatus()
OUT["cost"] = sol.getObjective()
OUT["iterations"] = sol.getNumIterations()
OUT["wall"] = min(walls)
OUT["t"] = np.asarray(sol.getTimeMat()).ravel()
OUT["q"] = np.asarray(sol.getStateMat("/jointset/pin/q/value")).ravel()
OUT["qd"] = np.asarray(sol.getStateMat("/jointset/pin/q/speed")).ravel()
OUT["tau"] = np.asarray(sol.getControlMat("/forceset/tau")).ravel()
"""


def moco_swing_up(*, intervals: int = 50, scheme: str = "hermite-simpson", repeat: int = 1):
    """Solve the shared swing-up with Moco in a child process.

    Returns a dict with ``success, status, cost, iterations, wall`` (best of
    ``repeat`` solves, s) and the arrays ``t, q, qd, tau`` (numpy).
    """
    out = opensim_run(MOCO_SWING_UP, intervals=intervals, scheme=scheme, repeat=repeat,
                      **PROBLEM)  # fmt: skip
    for k in ("t", "q", "qd", "tau"):
        out[k] = np.asarray(out[k], float)
    return out


def ahbm_swing_up(method, *, nodes: int = 51, verbose: bool = False):
    """Solve the shared swing-up with ahbm.optimize (``method``: name or Transcription)."""
    from ahbm.models.pendulums import single_pendulum
    from ahbm.optimize import Effort, Phase, solve

    p = PROBLEM
    model = single_pendulum(
        mass=p["mass"], length=p["length"], inertia_o=p["inertia_o"], gravity=(0.0, 0.0, -p["g"])
    )
    phase = Phase(
        model, nodes=nodes, duration=p["duration"], objectives=[Effort()],
        q_bounds=(-10.0, 10.0), qd_bounds=(-50.0, 50.0), tau_bounds=(-p["tau_max"], p["tau_max"]),
        initial={"q": [p["q0"]], "qd": [0.0]}, final={"q": [p["qf"]], "qd": [0.0]},
    )  # fmt: skip
    return solve(phase, method=method, verbose=verbose)


@functools.lru_cache(maxsize=1)
def _moco():
    return moco_swing_up()


def _rms_of_range(t_a, a, t_b, b):
    """RMS of a − b (b interpolated to t_a) as a fraction of the range of a."""
    diff = a - np.interp(t_a, t_b, b)
    return float(np.sqrt(np.mean(diff**2)) / (a.max() - a.min()))


@pytest.mark.parametrize(
    ("method", "nodes"),
    [("hermite-simpson", 51), ("trapezoidal", 151), ("multiple-shooting", 51), ("bspline", 51)],
)
def test_swing_up_matches_moco(method, nodes):
    pytest.importorskip("casadi")
    moco = _moco()
    assert moco["success"], moco["status"]
    res = ahbm_swing_up(method, nodes=nodes)
    assert res.success, res.status
    assert res.cost == pytest.approx(moco["cost"], rel=0.01)
    for name in ("q", "qd", "tau"):
        mine = getattr(res, name)[:, 0]
        assert _rms_of_range(moco["t"], moco[name], res.t, mine) < 0.01, name


def test_moco_problem_is_the_same_pendulum():
    # Moco's optimal states obey the ahbm pendulum's equation of motion with its torque:
    # J_O q̈ + m g (l/2) cos q = τ (q̈ by differentiating Moco's q̇ on its grid)
    moco = _moco()
    t, q, qd, tau = moco["t"], moco["q"], moco["qd"], moco["tau"]
    qdd = np.gradient(qd, t)
    p = PROBLEM
    resid = p["inertia_o"] * qdd + p["mass"] * p["g"] * p["length"] / 2 * np.cos(q) - tau
    assert np.sqrt(np.mean(resid[2:-2] ** 2)) < 0.01 * np.abs(tau).max()
    assert q[0] == pytest.approx(-np.pi / 2) and q[-1] == pytest.approx(np.pi / 2)
