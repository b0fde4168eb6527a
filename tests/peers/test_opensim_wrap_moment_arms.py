"""Wrapping muscles' lengths and moment arms against OpenSim 4.6 (child process).

Every wrapping muscle of OpenSim's arm26 model (``tests/data/osim/arm26.osim``:
TRIlong with a cylinder, an ellipsoid and a cylinder chained on one segment,
TRIlat, TRImed and BRA over a cylinder, BIClong over an ellipsoid within a point
range) and of the authored ``muscles_leg.osim`` (cylinders, a sphere and an
ellipsoid, two wraps on one path) and ``muscles_arm_chain.osim`` (three chained
wraps), and of a model built with OpenSim's API (a tendon through a ``WrapTorus``
and a path chaining the torus with a cylinder, three torus quadrants and sizes),
at 100 random states each:

- lengths to 1e-6 m (they agree to ~1e-15 m);
- ``moment_arms(..., convention="opensim")`` with OpenSim's
  ``GeometryPath.computeMomentArm`` to 1e-5 m (they agree to ~1e-15 m), and
  ``lengthening_speeds(..., convention="opensim")`` with ``getLengtheningSpeed``
  where OpenSim's speed is consistent with its own moment arms (not on chained
  wraps);
- the exact moment arms ``-∂l/∂q`` with fourth-order differences of OpenSim's own
  lengths (1 µrad steps) wherever those are smooth, to 1e-6 m.

``computeMomentArm`` holds the tangent points fixed on their wrap objects, so it
departs from ``-∂l/∂q`` where wraps chain or where OpenSim's cylinder and
ellipsoid constructions are not shortest paths; the test also checks that it does
on TRIlong (by more than 1 mm), which is what the exact convention corrects.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from opensim_oracle import opensim_run

from ahbm.errors import AhbmWarning
from ahbm.muscles import lengthening_speeds, moment_arms, muscle_lengths, path_points
from ahbm.opensim import osim_coordinates, read_osim

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
H = 1e-6

ORACLE = """
m = osim.Model(INPUTS["path"])
s = m.initSystem()
cs = m.getCoordinateSet()
names = INPUTS["names"]
fs = m.getForceSet()
paths = [osim.PathActuator.safeDownCast(fs.get(n)) for n in INPUTS["muscles"]]
geo = [osim.GeometryPath.safeDownCast(p.getPath()) for p in paths]

def lengths(q):
    for n, v in zip(names, q):
        cs.get(n).setValue(s, v, False)
    m.realizePosition(s)
    return [p.getLength(s) for p in paths]

L, MA, STENCIL = [], [], []
h = INPUTS["h"]
for q in INPUTS["q"]:
    L.append(lengths(q))
    MA.append([[g.computeMomentArm(s, cs.get(n)) for n in names] for g in geo])
    rows = []
    for j in range(len(names)):
        cols = []
        for k in (-2, -1, 1, 2):
            x = list(q)
            x[j] += k * h
            cols.append(lengths(x))
        rows.append(cols)
    STENCIL.append(rows)
OUT["lengths"] = L
OUT["moment_arms"] = MA
OUT["stencil"] = STENCIL
V = []
for q, qd in zip(INPUTS["q"], INPUTS["qd"]):
    for n, v, w in zip(names, q, qd):
        cs.get(n).setValue(s, v, False)
        cs.get(n).setSpeedValue(s, w)
    m.realizeVelocity(s)
    V.append([p.getLengtheningSpeed(s) for p in paths])
OUT["speeds"] = V
"""


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return read_osim(path)


def _states(model, n, rng):
    rows = {r["name"]: r for r in osim_coordinates(model, records=True)}
    q = np.empty((n, model.nq))
    for k, c in enumerate(model.coordinate_names):
        q[:, k] = rng.uniform(rows[c]["range_min"], rows[c]["range_max"], n)
    return q


#: an OpenSim model with a tendon through a WrapTorus on the ground, its insertion on a
#: body moved by a planar joint, and a second path that chains the torus with a cylinder
TORUS_MODEL = """
m = osim.Model()
m.setName("torus")
b = osim.Body("hand", 1.0, osim.Vec3(0), osim.Inertia(0.01, 0.01, 0.01))
m.addBody(b)
m.addJoint(osim.PlanarJoint("pj", m.getGround(), osim.Vec3(0, -0.2, 0), osim.Vec3(0), b,
                            osim.Vec3(0), osim.Vec3(0)))
t = osim.WrapTorus()
t.setName("ring")
t.set_inner_radius(INPUTS["inner"])
t.set_outer_radius(INPUTS["outer"])
t.set_quadrant(INPUTS["quadrant"])
t.set_xyz_body_rotation(osim.Vec3(1.5708, 0.2, 0.1))
t.set_translation(osim.Vec3(0.01, -0.1, 0.0))
m.getGround().addWrapObject(t)
c = osim.WrapCylinder()
c.setName("pulley")
c.set_radius(0.012)
c.set_length(0.2)
c.set_quadrant("+x")
c.set_xyz_body_rotation(osim.Vec3(0.0, 0.3, 0.0))
c.set_translation(osim.Vec3(0.02, 0.02, 0.0))
b.addWrapObject(c)
for name, wraps in (("tendon", [t]), ("chained", [t, c])):
    a = osim.PathActuator()
    a.setName(name)
    a.addNewPathPoint("o", m.getGround(), osim.Vec3(0.0, 0.05, 0.01))
    a.addNewPathPoint("i", b, osim.Vec3(0.03, -0.06, 0.0))
    for w in wraps:
        a.updGeometryPath().addPathWrap(w)
    m.addForce(a)
m.finalizeConnections()
m.printToXML(INPUTS["path"])
"""


@pytest.fixture(scope="module", params=["arm26", "muscles_leg", "muscles_arm_chain",
                                        "torus_all", "torus_+x", "torus_-y"])  # fmt: skip
def compared(request, tmp_path_factory):
    if request.param.startswith("torus"):
        path = tmp_path_factory.mktemp("torus") / f"{request.param}.osim"
        inner, outer = (0.005, 0.04) if request.param == "torus_-y" else (0.01, 0.03)
        opensim_run(TORUS_MODEL, path=str(path), inner=inner, outer=outer,
                    quadrant=request.param.split("_")[1])  # fmt: skip
    else:
        path = DATA / f"{request.param}.osim"
    model = _read(path)
    names = [mu.name for mu in model.muscles if mu.wraps]
    q = _states(model, 100, np.random.default_rng(28))
    qd = np.random.default_rng(29).normal(size=(20, model.nv))
    out = opensim_run(ORACLE, path=str(path), names=model.coordinate_names, muscles=names,
                      q=q, qd=qd, h=H)  # fmt: skip
    theirs = {
        "lengths": np.array(out["lengths"]),  # (N, m)
        "moment_arms": np.array(out["moment_arms"]),  # (N, m, nq)
        "stencil": np.array(out["stencil"]).transpose(0, 3, 1, 2),  # (N, m, nq, 4)
        "qd": qd,
        "speeds": np.array(out["speeds"]),  # (20, m)
    }
    return request.param, model, names, q, theirs


def test_lengths_match_opensim(compared):
    _, model, names, q, theirs = compared
    np.testing.assert_allclose(muscle_lengths(model, q, muscles=names), theirs["lengths"],
                               rtol=0, atol=1e-6)  # fmt: skip


def test_opensim_convention_matches_compute_moment_arm(compared):
    _, model, names, q, theirs = compared
    ours = moment_arms(model, q, muscles=names, convention="opensim")
    np.testing.assert_allclose(ours, theirs["moment_arms"], rtol=0, atol=1e-5)


def test_opensim_convention_speeds_match_opensims_lengthening_speeds(compared):
    """OpenSim's getLengtheningSpeed is -computeMomentArm · qd except on chained wraps
    (TRIlong, tri_long), where its speed reads the tangent points differently from its
    moment arms; ahbm's speeds are -r qd in either convention."""
    name, model, names, q, theirs = compared
    qd = theirs["qd"]
    n = len(qd)
    ours = lengthening_speeds(model, q[:n], qd, muscles=names, convention="opensim")
    r = moment_arms(model, q[:n], muscles=names, convention="opensim")
    np.testing.assert_allclose(ours, -np.einsum("nmv,nv->nm", r, qd), rtol=0, atol=1e-14)
    their_own = -np.einsum("nmv,nv->nm", theirs["moment_arms"][:n], qd)
    chained = [k for k, mn in enumerate(names) if mn.lower().replace("_", "") == "trilong"]
    chained += [k for k, mn in enumerate(names) if mn == "chained"]
    plain = [k for k in range(len(names)) if k not in chained]
    np.testing.assert_allclose(ours[:, plain], theirs["speeds"][:, plain], rtol=0, atol=1e-9)
    for k in chained:
        if not name.startswith("torus"):
            assert np.abs(theirs["speeds"][:, k] - their_own[:, k]).max() > 1e-5


def test_exact_moment_arms_are_minus_opensims_length_slopes(compared):
    name, model, names, q, theirs = compared
    S = theirs["stencil"]
    L0 = theirs["lengths"][:, :, None]
    m2, m1, p1, p2 = (S[..., k] for k in range(4))
    c4 = (8 * (p1 - m1) - (p2 - m2)) / (12 * H)
    s = np.stack([m1 - m2, L0 - m1, p1 - L0, p2 - p1]) / H
    third = np.abs(s[0] - 3 * s[1] + 3 * s[2] - s[3])
    smooth = third <= 0.05 * (np.abs(s[3] - s[0]) + np.abs(s[2] - s[1])) + 1e-8
    assert smooth.mean() > 0.9, smooth.mean()
    ours = moment_arms(model, q, muscles=names)
    err = np.abs(ours + c4)[smooth]
    assert err.max() < 1e-6, (name, err.max())
    if name.startswith("torus"):  # the tendon wraps through the ring in a share of the states
        wrapped = (
            np.abs(
                theirs["lengths"][:, 0]
                - np.linalg.norm(np.diff(path_points(model, q, names[0]), axis=1)[:, 0], axis=-1)
            )
            > 1e-6
        )
        assert wrapped.sum() >= 5, wrapped.sum()
    if name == "arm26":
        # OpenSim's computeMomentArm is not -dl/dq on TRIlong's chained wraps
        k = names.index("TRIlong")
        off = np.abs(theirs["moment_arms"][:, k] + c4[:, k])[smooth[:, k]]
        assert off.max() > 1e-3, off.max()
