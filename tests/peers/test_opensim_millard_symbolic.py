"""Millard2012EquilibriumMuscle on CasADi symbols against OpenSim 4.6 (forces at equilibrium).

OpenSim runs in a child process (:mod:`opensim_oracle`); the CasADi functions of
:mod:`ahbm.muscles.millard_symbolic` are evaluated here. One-muscle models (a body on a
slider joint, the path from the ground origin to the body origin: path length = the
coordinate, lengthening speed = its speed) over a grid of activation, path length and
speed, with OpenSim's default (damped), a pennate damped, an undamped and a rigid-tendon
muscle; and the muscles of subject01.osim (custom curve properties read from the file)
at a few poses. For elastic tendons the equilibrium of the *symbolic* residual is solved
here by CasADi's Newton rootfinder (the static equilibrium ``ṽM = 0`` that OpenSim 4.6
solves whatever the speed, see :func:`ahbm.muscles.millard.millard_equilibrium`), from
the rigid-tendon fiber length, and its tendon force is compared with OpenSim's.
"""

from __future__ import annotations

import numpy as np
import pytest
from opensim_oracle import MILLARD_ONE_MUSCLE, opensim_run
from sample_data import SHARED

from ahbm.muscles.millard import millard_minimum_fiber_length
from ahbm.muscles.millard_curves import MillardParameters

ca = pytest.importorskip("casadi")

from ahbm.muscles.millard_symbolic import (  # noqa: E402
    millard_elastic_expressions,
    millard_rigid_tendon_force_expression,
)

SUBJECT01 = SHARED / "opensim" / "subject01.osim"

_ONE_MUSCLE = (
    MILLARD_ONE_MUSCLE
    + """
for key, case in INPUTS["cases"].items():
    m, mus, c = model(case)
    s = m.initSystem()
    rows = []
    for a, l, v in case["grid"]:
        c.setValue(s, l)
        c.setSpeedValue(s, v)
        mus.setActivation(s, a)
        m.equilibrateMuscles(s)
        m.realizeDynamics(s)
        rows.append([mus.getTendonForce(s), mus.getFiberLength(s), mus.getFiberVelocity(s)])
    OUT[key] = rows
"""
)

_CASES = {  # (F0, lopt, lts, pennation), damping, rigid tendon
    "damped": ((1000.0, 0.1, 0.2, 0.0), 0.1, False),
    "damped_pennate": ((500.0, 0.08, 0.25, 0.35), 0.1, False),
    "undamped": ((800.0, 0.12, 0.3, 0.2), 0.0, False),
    "rigid": ((600.0, 0.1, 0.2, 0.25), 0.1, True),
}


def _grid(params, rigid):
    lopt, lts, pen = params[1], params[2], params[3]
    rows = []
    for a in (0.02, 0.3, 0.7, 1.0):
        for k in np.linspace(0.7, 1.5, 6):
            for v in (-0.5, 0.0, 0.4):
                lmt = lts * (1.0 + (0.0 if rigid else 0.02)) + k * lopt * np.cos(pen)
                rows.append([a, lmt, v * lopt])
    return rows


def _equilibrium_solver(p, j):
    """(a, lMT) -> (F_T, l̃M, residual): the static equilibrium of the symbolic residual.

    Newton on ``l̃M`` inside a bracket, bisecting when a step leaves it: the residual is
    <= 0 at the minimum fiber length (no active force there, the tendon pulls) and >= 0
    where the tendon falls slack.
    """
    lm, a, lmt = ca.SX.sym("lm"), ca.SX.sym("a"), ca.SX.sym("lmt")
    e = millard_elastic_expressions(p, a, lmt, lm, 0.0, muscle=j)
    g = ca.Function("g", [lm, a, lmt], [e.residual, ca.jacobian(e.residual, lm),
                                        e.tendon_force])  # fmt: skip
    lopt, lts = float(p.optimal_fiber_length[j]), float(p.tendon_slack_length[j])
    height = lopt * np.sin(float(p.pennation_angle[j]))
    lmin = float(millard_minimum_fiber_length(p)[j]) / lopt

    def solve(act, length):
        lo, hi = lmin, max(np.hypot(length - lts, height) / lopt, lmin)
        x = 0.5 * (lo + hi)
        for _ in range(200):
            r, dr, _ = (float(v) for v in g(x, act, length))
            if abs(r) < 1e-14:
                break
            lo, hi = (x, hi) if r < 0 else (lo, x)
            step = x - r / dr if dr != 0 else np.nan
            x = step if lo < step < hi else 0.5 * (lo + hi)
            if hi - lo < 1e-15:
                break
        r, _, force = (float(v) for v in g(x, act, length))
        return force, x, r

    return solve


@pytest.fixture(scope="module")
def one_muscle_oracle():
    cases = {key: {"params": list(p), "damping": d, "rigid": r, "grid": _grid(p, r)}
             for key, (p, d, r) in _CASES.items()}  # fmt: skip
    return cases, opensim_run(_ONE_MUSCLE, cases=cases)


@pytest.mark.parametrize("key", list(_CASES))
def test_symbolic_force_at_equilibrium_matches_opensim(one_muscle_oracle, key):
    cases, out = one_muscle_oracle
    case = cases[key]
    ref = np.array(out[key])  # tendon force, fiber length, fiber velocity
    assert np.isfinite(ref).all()
    g = np.array(case["grid"])
    f0, lopt, lts, pen = case["params"]
    p = MillardParameters(max_isometric_force=f0, optimal_fiber_length=lopt,
                          tendon_slack_length=lts, pennation_angle=pen,
                          fiber_damping=case["damping"])  # fmt: skip
    scale = np.maximum(np.abs(ref[:, 0]), 1e-3 * f0)
    if case["rigid"]:
        a, lmt, v = (ca.SX.sym(n) for n in "alv")
        f = ca.Function("F", [a, lmt, v], [millard_rigid_tendon_force_expression(p, a, lmt, v)])
        got = np.asarray(f.map(len(g))(g[:, 0], g[:, 1], g[:, 2]), float).ravel()
        assert np.max(np.abs(got - ref[:, 0]) / scale) < 1e-6
        return
    lmin = float(millard_minimum_fiber_length(p)[0])
    live = ref[:, 1] > lmin * (1 + 1e-6)
    assert live.sum() >= 0.8 * len(g)
    # OpenSim's fiber state in the symbolic equations: its residual (OpenSim solves to
    # 1e-8 F0) and its tendon force
    s = ca.SX.sym("s", 4)
    e = millard_elastic_expressions(p, s[0], s[1], s[2], s[3])
    f = ca.Function("e", [s], [e.residual, e.tendon_force]).map(len(g))
    res, ft = (np.asarray(v, float).ravel() for v in f(np.vstack([
        g[:, 0], g[:, 1], ref[:, 1] / lopt, ref[:, 2] / (10.0 * lopt)])))  # fmt: skip
    assert np.max(np.abs(res[live])) < 1e-7
    assert np.max(np.abs(ft - ref[:, 0]) / scale) < 1e-6
    # the symbolic model's own equilibrium
    solve = _equilibrium_solver(p, 0)
    sol = np.array([solve(a, lmt) for a, lmt in g[live, :2]])
    assert np.max(np.abs(sol[:, 2])) < 1e-12
    assert np.max(np.abs(sol[:, 0] - ref[live, 0]) / scale[live]) < 1e-6


_SUBJECT = """
m = osim.Model(INPUTS["model"])
s = m.initSystem()
cs = m.getCoordinateSet()
muscles = m.getMuscles()
names = [muscles.get(i).getName() for i in range(muscles.getSize())]
rng = np.random.default_rng(5)
frames, coords = [], []
for k in range(INPUTS["poses"]):
    for i in range(cs.getSize()):
        c = cs.get(i)
        if c.getLocked(s):
            continue
        lo, hi = c.getRangeMin(), c.getRangeMax()
        c.setValue(s, lo + (hi - lo) * (0.3 + 0.4 * rng.random()), False)
        c.setSpeedValue(s, 0.0)
    m.assemble(s)
    a = 0.05 + 0.9 * rng.random(len(names))
    for j in range(len(names)):
        muscles.get(j).setActivation(s, float(a[j]))
    m.equilibrateMuscles(s)
    m.realizeDynamics(s)
    frames.append([[a[j], muscles.get(j).getLength(s), muscles.get(j).getTendonForce(s),
                    muscles.get(j).getFiberLength(s)] for j in range(len(names))])
    coords.append({cs.get(i).getName(): cs.get(i).getValue(s) for i in range(cs.getSize())})
OUT["names"] = names
OUT["frames"] = frames
OUT["coords"] = coords
"""


@pytest.mark.skipif(not SUBJECT01.is_file(), reason=f"shared data not found at {SUBJECT01}")
def test_subject01_symbolic_equilibrium_matches_opensim():
    """End to end: the model's paths and Millard muscles as an optimal control sees them."""
    from ahbm.opensim import read_osim
    from ahbm.optimize import symbolic_muscles

    out = opensim_run(_SUBJECT, model=str(SUBJECT01), poses=2)
    model = read_osim(SUBJECT01)
    sm = symbolic_muscles(model, out["names"])
    assert all(sm.is_millard)
    p = sm.millard
    ref = np.array(out["frames"])  # (poses, muscles, [a, lMT, F_T, lM])
    q = np.array([[c[n] for n in model.coordinate_names] for c in out["coords"]])
    lmt = np.asarray(sm.lengths.map(len(q))(q.T), float).T
    assert np.max(np.abs(lmt - ref[..., 1])) < 1e-9
    # OpenSim's fiber lengths in the phase's elastic tendon forces
    F = np.asarray(sm.elastic_forces.map(len(q))((ref[..., 3] / p.optimal_fiber_length).T,
                                                 q.T), float).T  # fmt: skip
    f0 = p.max_isometric_force
    assert np.max(np.abs(F - ref[..., 2]) / np.maximum(np.abs(ref[..., 2]), 1e-3 * f0)) < 1e-6
    # the symbolic equilibrium at the symbolic path lengths
    worst = 0.0
    for j in range(p.n):
        solve = _equilibrium_solver(p, j)
        for k in range(len(q)):
            got, _, res = solve(ref[k, j, 0], lmt[k, j])
            assert abs(res) < 1e-12
            worst = max(worst, abs(got - ref[k, j, 2]) / max(abs(ref[k, j, 2]), 1e-3 * f0[j]))
    assert p.n == 18 and worst < 1e-6
