"""Muscle path lengths read by ``ahbm.opensim.read_osim`` against OpenSim's GeometryPath.

OpenSim runs in a child process (``opensim_oracle``). At random states within the
coordinates' ranges:

- ``subject01.osim`` (the shared walking model: 18 muscles with conditional and
  moving points): every path length to 1e-9 m;
- ``tests/data/osim/muscles_leg.osim`` (authored: every path element, points on
  offset frames, conditional points on a locked coordinate, a moving point on a
  translated offset frame, and wraps over cylinders, a sphere and an ellipsoid,
  with quadrants, ranges and two wraps on one path): the paths without wrapping
  to 1e-9 m, those with a wrap object to 1e-4 m (and most of the states wrap);
- ``tests/data/osim/muscles_arm_chain.osim`` (authored: three path wraps, two
  chained on one segment, so OpenSim repeats its passes with cached tangent
  points): lengths and drawn path points to 1e-9 m, and OpenSim's lengths do
  not depend on the order the states are evaluated in.

Moment arms are ahbm's ``r = -∂l/∂q`` (OpenSim's ``computeMomentArm`` differs
on wrapping paths): they are compared with central differences of OpenSim's
own lengths, and the lengthening speeds with ``-r qd``; without wrapping,
OpenSim's own lengthening speeds (moving points included) agree to 1e-12 m/s.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from opensim_oracle import opensim_run
from sample_data import SHARED

from ahbm.errors import AhbmWarning
from ahbm.muscles import lengthening_speeds, moment_arms, muscle_lengths, path_points
from ahbm.opensim import osim_coordinates, read_osim

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
LEG = DATA / "muscles_leg.osim"
ARM = DATA / "muscles_arm_chain.osim"
SUBJECT01 = SHARED / "opensim" / "subject01.osim"

ORACLE = """
m = osim.Model(INPUTS["path"])
s = m.initSystem()
cs = m.getCoordinateSet()
names = INPUTS["names"]
fs = m.getForceSet()
muscles = INPUTS["muscles"]
paths = [osim.PathActuator.safeDownCast(fs.get(n)) for n in muscles]

def lengths(q):
    for n, v in zip(names, q):
        cs.get(n).setValue(s, v, False)
    m.realizePosition(s)
    return [p.getLength(s) for p in paths]

OUT["lengths"] = [lengths(q) for q in INPUTS["q"]]
speeds = []
for q, qd in zip(INPUTS["q_speed"], INPUTS["qd_speed"]):
    for n, v, w in zip(names, q, qd):
        cs.get(n).setValue(s, v, False)
        cs.get(n).setSpeedValue(s, w)
    m.realizeVelocity(s)
    speeds.append([p.getLengtheningSpeed(s) for p in paths])
OUT["speeds"] = speeds
h = INPUTS["h"]
fd = []
for q in INPUTS["q_fd"]:
    rows = []
    for j in range(len(names)):
        qp = list(q); qp[j] += h
        qm = list(q); qm[j] -= h
        lp, lm = np.array(lengths(qp)), np.array(lengths(qm))
        rows.append(((lp - lm) / (2 * h)).tolist())
    fd.append(rows)
OUT["dl_dq"] = fd
"""


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)  # notes (locked coordinates)
        return read_osim(path)


def _states(model, n, rng):
    """Random states within the ranges of the model's (free, scalar) coordinates."""
    table = osim_coordinates(model, records=True)
    rows = {r["name"]: r for r in table}
    q = np.empty((n, model.nq))
    for k, c in enumerate(model.coordinate_names):
        lo, hi = rows[c]["range_min"], rows[c]["range_max"]
        q[:, k] = rng.uniform(lo, hi, n)
    return q


def _oracle(path, model, q, q_fd, qd, h=1e-6):
    out = opensim_run(
        ORACLE,
        path=str(path),
        names=model.coordinate_names,
        muscles=[m.name for m in model.muscles],
        q=q,
        q_fd=q_fd,
        q_speed=q[: len(qd)],
        qd_speed=qd,
        h=h,
    )
    n = len(model.muscles)
    return (
        np.array(out["lengths"]),
        np.array(out["dl_dq"]).reshape(len(q_fd), model.nq, n).transpose(0, 2, 1),
        np.array(out["speeds"]).reshape(len(qd), n),
    )


@pytest.fixture(scope="module")
def subject01():
    if not SUBJECT01.is_file():
        pytest.skip(f"the shared walking model is absent ({SUBJECT01})")
    model = _read(SUBJECT01)
    q = _states(model, 20, np.random.default_rng(16))
    qd = np.random.default_rng(3).normal(size=(10, model.nv))
    return model, q, qd, *_oracle(SUBJECT01, model, q, q[:4], qd)


@pytest.fixture(scope="module")
def leg():
    model = _read(LEG)
    q = _states(model, 40, np.random.default_rng(17))
    qd = np.random.default_rng(4).normal(size=(10, model.nv))
    return model, q, qd, *_oracle(LEG, model, q, q[:8], qd)


def test_subject01_has_its_18_muscles_with_conditional_and_moving_points(subject01):
    model = subject01[0]
    assert len(model.muscles) == 18
    kinds = {type(p).__name__ for m in model.muscles for p in m.points}
    assert kinds == {"PathPoint", "ConditionalPathPoint", "MovingPathPoint"}


def test_subject01_lengths_match_opensim(subject01):
    model, q, _, lengths, _, _ = subject01
    np.testing.assert_allclose(muscle_lengths(model, q), lengths, rtol=0, atol=1e-9)


def test_subject01_moment_arms_are_minus_opensims_length_derivatives(subject01):
    model, q, qd, _, dl_dq, speeds = subject01
    r = moment_arms(model, q[:4])
    # central differences of OpenSim's lengths (h = 1e-6): truncation ~1e-12, round-off ~1e-10
    np.testing.assert_allclose(r, -dl_dq, rtol=0, atol=2e-8)
    np.testing.assert_allclose(
        lengthening_speeds(model, q[:4], qd[:4]), np.einsum("nmv,nv->nm", dl_dq, qd[:4]),
        atol=1e-7,
    )  # fmt: skip
    # without wrapping OpenSim's lengthening speed is dl/dt too (moving points included)
    np.testing.assert_allclose(lengthening_speeds(model, q[:10], qd), speeds, rtol=0, atol=1e-12)


def _wrapping(model):
    return np.array([bool(m.wraps) for m in model.muscles])


def test_authored_model_lengths_match_opensim(leg):
    model, q, _, lengths, _, _ = leg
    ours = muscle_lengths(model, q)
    wraps = _wrapping(model)
    np.testing.assert_allclose(ours[:, ~wraps], lengths[:, ~wraps], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours[:, wraps], lengths[:, wraps], rtol=0, atol=1e-4)
    # every path wraps in a good part of the states (OpenSim's lengths exceed the polyline)
    for k in np.flatnonzero(wraps):
        pts = path_points(model, q, model.muscles[k].name)
        d = np.linalg.norm(np.diff(pts, axis=1), axis=-1)
        straight = np.nansum(d, axis=-1)
        assert np.mean(lengths[:, k] > straight + 1e-6) > 0.25, model.muscles[k].name


def test_authored_model_moment_arms_against_opensims_lengths(leg):
    model, q, qd, _, dl_dq, speeds = leg
    r = moment_arms(model, q[:8])
    wraps = _wrapping(model)
    np.testing.assert_allclose(r[:, ~wraps], -dl_dq[:, ~wraps], rtol=0, atol=2e-8)
    ours = lengthening_speeds(model, q[:10], qd)
    np.testing.assert_allclose(ours[:, ~wraps], speeds[:, ~wraps], rtol=0, atol=1e-12)
    # wrapped paths: a wrap's on/off switch or OpenSim's ellipsoid construction makes a few
    # derivatives kinks; elsewhere agree to 1e-4 m/rad
    err = np.abs(r[:, wraps] + dl_dq[:, wraps]).max(axis=-1)
    assert np.mean(err < 1e-4) > 0.85, err


@pytest.mark.parametrize("name", ["legacy33.osim", "all_joints.osim"])
def test_other_models_lengths_match_opensim(name):
    """An OpenSim 3.3 file (bodies name their joints; the path points name their bodies)
    and a model with every joint type, offset frames on offset frames and a coupler."""
    path = DATA / name
    model = _read(path)
    assert model.muscles
    q = _states(model, 10, np.random.default_rng(18))
    lengths, _, _ = _oracle(path, model, q, q[:0], np.zeros((0, model.nv)))
    np.testing.assert_allclose(muscle_lengths(model, q), lengths, rtol=0, atol=1e-9)


CHAIN = """
m = osim.Model(INPUTS["path"])
s = m.initSystem()
cs = m.getCoordinateSet()
gp = osim.GeometryPath.safeDownCast(
    osim.PathActuator.safeDownCast(m.getForceSet().get(INPUTS["muscle"])).getPath())

def evaluate(q):
    for n, v in zip(INPUTS["names"], q):
        cs.get(n).setValue(s, v, False)
    m.realizePosition(s)
    cp = gp.getCurrentPath(s)
    pts = [cp.get(i).getLocationInGround(s).to_numpy().tolist() for i in range(cp.getSize())]
    return gp.getLength(s), pts

rows = [evaluate(q) for q in INPUTS["q"]]
OUT["lengths"] = [r[0] for r in rows]
OUT["points"] = [r[1] for r in rows]
OUT["reversed"] = [evaluate(q)[0] for q in INPUTS["q"][::-1]][::-1]
"""


@pytest.fixture(scope="module")
def arm_chain():
    model = _read(ARM)
    q = _states(model, 40, np.random.default_rng(19))
    out = opensim_run(CHAIN, path=str(ARM), names=model.coordinate_names, muscle="tri_long", q=q)
    return model, q, out


def test_chained_wraps_lengths_match_opensim(arm_chain):
    """tri_long chains an elbow cylinder, a humeral-head ellipsoid and a glenoid cylinder
    (the last two on one segment): OpenSim repeats its passes, and the tangent points
    keep the ground positions of the pass that inserted them (OpenSim's cached ground
    locations) while the later passes' arcs and wraps use the updated ones."""
    model, q, out = arm_chain
    lengths = np.array(out["lengths"])
    # OpenSim's value depends on the state only, not on the states evaluated before
    np.testing.assert_array_equal(np.array(out["reversed"]), lengths)
    np.testing.assert_allclose(muscle_lengths(model, q)[:, 0], lengths, rtol=0, atol=1e-9)
    # the path as drawn: OpenSim's current path, tangent points included
    pts = path_points(model, q, "tri_long", wrap_points=True)
    n_nodes = np.array([len(p) for p in out["points"]])
    for k, theirs in enumerate(out["points"]):
        np.testing.assert_allclose(pts[k, : n_nodes[k]], np.array(theirs), rtol=0, atol=1e-9)
        assert np.isnan(pts[k, n_nodes[k] :]).all()
    # all three wraps engage in a good share of the states (5 points + 3 tangent pairs)
    assert np.sum(n_nodes == 11) >= 5, n_nodes
