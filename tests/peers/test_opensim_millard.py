"""Millard2012EquilibriumMuscle against OpenSim 4.6 (curves, equilibrium, subject01 muscles).

OpenSim runs in a child process (:mod:`opensim_oracle`). The curve classes are evaluated
directly (``calcValue``, ``calcDerivative(x, 1)``) with default and non-default
parameters at points spanning every Bézier segment and both extrapolations. The
equilibrium uses a one-muscle model (a body on a slider joint, the path from the ground
origin to the body origin, so the path length is the coordinate and the lengthening speed
its speed): activation set in the state, ``equilibrateMuscles``, then the muscle's
outputs. The muscles of subject01.osim are read by ``ahbm.opensim.read_osim`` and
evaluated at OpenSim's path lengths of a few poses.
"""

from __future__ import annotations

import numpy as np
import pytest
from opensim_oracle import MILLARD_ONE_MUSCLE, opensim_run
from sample_data import SHARED

from ahbm.muscles.millard import millard_equilibrium
from ahbm.muscles.millard_curves import (
    MillardParameters,
    millard_active_force_length,
    millard_force_velocity,
    millard_passive_force_length,
    millard_tendon_force_length,
)

SUBJECT01 = SHARED / "opensim" / "subject01.osim"

# non-default curve parameters: OpenSim property name -> value, and the ahbm field
_AFL = {"min_norm_active_fiber_length": 0.5, "transition_norm_fiber_length": 0.8,
        "max_norm_active_fiber_length": 1.7, "shallow_ascending_slope": 0.6,
        "minimum_value": 0.05}  # fmt: skip
_FV = {"concentric_slope_at_vmax": 0.05, "concentric_slope_near_vmax": 0.3,
       "isometric_slope": 4.0, "eccentric_slope_at_vmax": 0.02,
       "eccentric_slope_near_vmax": 0.2, "max_eccentric_velocity_force_multiplier": 1.6,
       "concentric_curviness": 0.4, "eccentric_curviness": 0.7}  # fmt: skip
_FPE = {
    "strain_at_zero_force": 0.05,
    "strain_at_one_norm_force": 0.6,
    "stiffness_at_low_force": 0.3,
    "stiffness_at_one_norm_force": 5.0,
    "curviness": 0.5,
}
_TFL = {"strain_at_one_norm_force": 0.06, "stiffness_at_one_norm_force": 30.0,
        "norm_force_at_toe_end": 0.5, "curviness": 0.7}  # fmt: skip

_CURVES = """
def curves(custom):
    afl = osim.ActiveForceLengthCurve()
    fv = osim.ForceVelocityCurve()
    fpe = osim.FiberForceLengthCurve()
    tfl = osim.TendonForceLengthCurve()
    if custom:
        a = INPUTS["afl"]
        afl = osim.ActiveForceLengthCurve(a["min_norm_active_fiber_length"],
            a["transition_norm_fiber_length"], a["max_norm_active_fiber_length"],
            a["shallow_ascending_slope"], a["minimum_value"])
        v = INPUTS["fv"]
        fv = osim.ForceVelocityCurve(v["concentric_slope_at_vmax"],
            v["concentric_slope_near_vmax"], v["isometric_slope"],
            v["eccentric_slope_at_vmax"], v["eccentric_slope_near_vmax"],
            v["max_eccentric_velocity_force_multiplier"], v["concentric_curviness"],
            v["eccentric_curviness"])
        f = INPUTS["fpe"]
        fpe = osim.FiberForceLengthCurve(f["strain_at_zero_force"],
            f["strain_at_one_norm_force"], f["stiffness_at_low_force"],
            f["stiffness_at_one_norm_force"], f["curviness"])
        t = INPUTS["tfl"]
        tfl = osim.TendonForceLengthCurve(t["strain_at_one_norm_force"],
            t["stiffness_at_one_norm_force"], t["norm_force_at_toe_end"], t["curviness"])
    return {"afl": afl, "fv": fv, "fpe": fpe, "tfl": tfl}

for tag, custom in (("default", False), ("custom", True)):
    for name, c in curves(custom).items():
        xs = INPUTS["x"][tag][name]
        OUT[f"{tag}/{name}"] = [[c.calcValue(x) for x in xs],
                                [c.calcDerivative(x, 1) for x in xs]]
"""


def _params(custom: bool) -> MillardParameters:
    kw = {}
    if custom:
        kw.update(_AFL)
        kw.update(_FV)
        kw.update({f"fiber_{k}": v for k, v in _FPE.items()})
        kw.update({f"tendon_{k}": v for k, v in _TFL.items()})
    return MillardParameters(max_isometric_force=1.0, optimal_fiber_length=1.0,
                             tendon_slack_length=1.0, **kw)  # fmt: skip


def _points(curve, n=240) -> np.ndarray:
    """Points on every segment (dense in each) and beyond both ends."""
    px = curve.px[0]
    knots = np.unique(np.r_[px[:, 0], px[-1, 5]])
    inner = np.concatenate([np.linspace(a, b, n // (len(knots) - 1) + 2) for a, b in
                            zip(knots[:-1], knots[1:])])  # fmt: skip
    width = knots[-1] - knots[0]
    outer = np.r_[np.linspace(knots[0] - 0.3 * width, knots[0], 8, endpoint=False),
                  np.linspace(knots[-1], knots[-1] + 0.3 * width, 9)[1:]]  # fmt: skip
    return np.unique(np.r_[inner, outer])


_FUNCS = {
    "afl": (millard_active_force_length, "_active_curve"),
    "fv": (millard_force_velocity, "_velocity_curve"),
    "fpe": (millard_passive_force_length, "_passive_curve"),
    "tfl": (millard_tendon_force_length, "_tendon_curve"),
}


def _rel(a, b, floor):
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), floor)))


@pytest.fixture(scope="module")
def curve_oracle():
    xs = {tag: {name: _points(getattr(_params(tag == "custom"), attr)).tolist()
                for name, (_, attr) in _FUNCS.items()}
          for tag in ("default", "custom")}  # fmt: skip
    return xs, opensim_run(_CURVES, x=xs, afl=_AFL, fv=_FV, fpe=_FPE, tfl=_TFL)


@pytest.mark.parametrize("tag", ["default", "custom"])
@pytest.mark.parametrize("name", list(_FUNCS))
def test_curves_match_opensim(curve_oracle, tag, name):
    xs, out = curve_oracle
    x = np.array(xs[tag][name])
    assert x.size >= 200
    p = _params(tag == "custom")
    f = _FUNCS[name][0]
    value, slope = (np.array(v) for v in out[f"{tag}/{name}"])
    # relative to the value, or to 1 (the curves' scale) where the value is below 1e-3
    assert _rel(f(x[:, None], p)[:, 0], value, 1e-3) < 1e-9
    assert _rel(f(x[:, None], p, derivative=1)[:, 0], slope, 1e-3) < 1e-9


# --- equilibrium --------------------------------------------------------------------

_EQUILIBRIUM = (
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
        try:
            m.equilibrateMuscles(s)
            m.realizeDynamics(s)
            rows.append([mus.getTendonForce(s), mus.getFiberForce(s),
                         mus.getActiveFiberForce(s), mus.getPassiveFiberForce(s),
                         mus.getFiberLength(s), mus.getFiberVelocity(s),
                         mus.getPennationAngle(s)])
        except Exception:
            rows.append([float("nan")] * 7)
    OUT[key] = rows
"""
)

_CASES = {
    "damped": ((1000.0, 0.1, 0.2, 0.0), 0.1, False),
    "damped_pennate": ((500.0, 0.08, 0.25, 0.35), 0.1, False),
    "undamped": ((800.0, 0.12, 0.3, 0.2), 0.0, False),
    "rigid": ((600.0, 0.1, 0.2, 0.25), 0.1, True),
}


def _grid(params, rigid):
    lopt, lts = params[1], params[2]
    rows = []
    for a in (0.05, 0.3, 0.7, 1.0):
        for k in np.linspace(0.65, 1.5, 7):
            for v in (-0.4, 0.0, 0.3):
                lmt = lts * (1.0 + (0.0 if rigid else 0.02)) + k * lopt * np.cos(params[3])
                rows.append([a, lmt, v * lopt])
    return rows


@pytest.fixture(scope="module")
def equilibrium_oracle():
    cases = {key: {"params": list(p), "damping": d, "rigid": r, "grid": _grid(p, r)}
             for key, (p, d, r) in _CASES.items()}  # fmt: skip
    return cases, opensim_run(_EQUILIBRIUM, cases=cases)


@pytest.mark.parametrize("key", list(_CASES))
def test_equilibrium_matches_opensim(equilibrium_oracle, key):
    cases, out = equilibrium_oracle
    case = cases[key]
    ref = np.array(out[key])
    assert np.isfinite(ref).all()
    g = np.array(case["grid"])
    f0, lopt, lts, pen = case["params"]
    p = MillardParameters(max_isometric_force=f0, optimal_fiber_length=lopt,
                          tendon_slack_length=lts, pennation_angle=pen,
                          fiber_damping=case["damping"])  # fmt: skip
    s = millard_equilibrium(p, g[:, :1], g[:, 1:2], g[:, 2:3], rigid_tendon=case["rigid"])
    got = np.column_stack([s.tendon_force[:, 0], s.fiber_force[:, 0], s.active_fiber_force[:, 0],
                           s.passive_fiber_force[:, 0], s.fiber_length[:, 0],
                           s.fiber_velocity[:, 0], s.pennation_angle[:, 0]])  # fmt: skip
    scale = np.array([f0, f0, f0, f0, lopt, 10 * lopt, 1.0])
    err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-3 * scale)
    # forces and lengths 1e-6 relative (to F0/1000 near zero); the fiber velocity of an
    # elastic tendon at rest is a residual of OpenSim's 1e-8 F0 solve: absolute
    assert err[:, [0, 1, 2, 4, 6]].max() < 1e-6
    assert np.all(np.abs(got[:, 5] - ref[:, 5]) <= 1e-6 * 10 * lopt + 1e-6 * np.abs(ref[:, 5]))
    assert np.all(np.abs(got[:, 3] - ref[:, 3]) <= 1e-6 * f0)


# --- subject01 ----------------------------------------------------------------------

_SUBJECT = """
m = osim.Model(INPUTS["model"])
s = m.initSystem()
cs = m.getCoordinateSet()
muscles = m.getMuscles()
names = [muscles.get(i).getName() for i in range(muscles.getSize())]
rng = np.random.default_rng(3)
frames = []
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
    rows = []
    for j in range(len(names)):
        mu = muscles.get(j)
        rows.append([a[j], mu.getLength(s), mu.getTendonForce(s), mu.getFiberLength(s),
                     mu.getActiveFiberForce(s)])
    frames.append(rows)
OUT["names"] = names
OUT["frames"] = frames
"""


@pytest.mark.skipif(not SUBJECT01.is_file(), reason=f"shared data not found at {SUBJECT01}")
def test_subject01_muscles_match_opensim():
    from ahbm.opensim import read_osim

    out = opensim_run(_SUBJECT, model=str(SUBJECT01), poses=3)
    model = read_osim(SUBJECT01)
    by = {mu.name: mu for mu in model.muscles}
    p = MillardParameters.from_muscles([by[n] for n in out["names"]])
    ref = np.array(out["frames"])  # (frames, muscles, 5)
    s = millard_equilibrium(p, ref[..., 0], ref[..., 1])
    f0 = p.max_isometric_force
    assert np.max(np.abs(s.tendon_force - ref[..., 2]) / np.maximum(ref[..., 2], f0 * 1e-3)) < 1e-6
    assert np.max(np.abs(s.fiber_length - ref[..., 3]) / ref[..., 3]) < 1e-6
    assert np.max(np.abs(s.active_fiber_force - ref[..., 4]) / f0) < 1e-6
