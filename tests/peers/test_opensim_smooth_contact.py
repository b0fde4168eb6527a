"""Smooth sphere–half-space contact against OpenSim 4.6's SmoothSphereHalfSpaceForce.

OpenSim (a child process, tests/peers/opensim_oracle.py) builds a model with
two free bodies, a contact sphere on one and half-spaces on the ground and on
the other (random orientations, two parameter sets), and writes it as an
``.osim`` file. ahbm reads the file (:func:`ahbm.opensim.osim_smooth_contacts`),
draws 240 random states per contact with penetrations from -5 mm to 25 mm
and velocities up to 1.5 m/s (some slipping faster, some slower than the
transition velocity), and OpenSim evaluates the force's record values (force
and torque on both bodies) and the generalized forces ``Jᵀ f`` of those
body forces. Forces, moments and generalized forces agree to 1e-10
relative (measured 9e-16 to 3e-14).

On subject01 (custom joints, the knee's coupled translations), OpenSim gets
the twelve foot spheres of :func:`ahbm.opensim.opensim_foot_spheres` against
its ground half-space; at 40 random poses with the feet 0-20 mm in the
ground, each sphere's force and the generalized forces of all twelve agree
to 1e-10 (measured 4e-15 and 8e-16).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opensim_oracle import opensim_run  # noqa: E402
from sample_data import SHARED  # noqa: E402

from ahbm.dynamics import total_generalized_force  # noqa: E402
from ahbm.errors import AhbmWarning  # noqa: E402
from ahbm.kinematics import forward_kinematics  # noqa: E402
from ahbm.opensim import (  # noqa: E402
    add_osim_smooth_contacts,
    opensim_foot_spheres,
    osim_smooth_contacts,
    osim_speed_matrix,
    read_osim,
    write_osim,
)

N_STATES = 240

BUILD = """
m = osim.Model(); m.setName("contact"); m.setGravity(osim.Vec3(0, -9.81, 0))
ball = osim.Body("ball", 2.0, osim.Vec3(0.01, 0.02, -0.01),
                 osim.Inertia(0.01, 0.02, 0.015, 0, 0, 0))
plate = osim.Body("plate", 3.0, osim.Vec3(0), osim.Inertia(0.1, 0.1, 0.1, 0, 0, 0))
m.addBody(ball); m.addBody(plate)
for name, b in (("ball_free", ball), ("plate_free", plate)):
    m.addJoint(osim.FreeJoint(name, m.getGround(), osim.Vec3(0), osim.Vec3(0), b, osim.Vec3(0),
                              osim.Vec3(0)))
sphere = osim.ContactSphere(0.04, osim.Vec3(0.03, -0.05, 0.02), ball, "sphere")
floor = osim.ContactHalfSpace(osim.Vec3(0.1, 0.0, -0.2), osim.Vec3(0.1, 0.2, -1.5),
                              m.getGround(), "floor")
wall = osim.ContactHalfSpace(osim.Vec3(0.02, 0.05, 0.0), osim.Vec3(0.3, -0.2, 0.4), plate, "wall")
for g in (sphere, floor, wall):
    m.addContactGeometry(g)
for name, half, p in (("c_floor", floor, (1e6, 2.0, 0.9, 0.6, 0.4, 0.15, 1e-5, 300, 50)),
                      ("c_wall", wall, (3e6, 1.0, 0.7, 0.5, 0.2, 0.1, 2e-5, 200, 40))):
    f = osim.SmoothSphereHalfSpaceForce(name, sphere, half)
    f.set_stiffness(p[0]); f.set_dissipation(p[1]); f.set_static_friction(p[2])
    f.set_dynamic_friction(p[3]); f.set_viscous_friction(p[4]); f.set_transition_velocity(p[5])
    f.set_constant_contact_force(p[6]); f.set_hertz_smoothing(p[7])
    f.set_hunt_crossley_smoothing(p[8])
    m.addForce(f)
for name, geometry, p in (("hc_floor", "floor", (2e6, 1.5, 0.8, 0.5, 0.3, 0.1)),
                          ("hc_wall", "wall", (5e5, 0.8, 0.6, 0.6, 0.1, 0.2))):
    f = osim.HuntCrossleyForce()
    f.setName(name)
    f.addGeometry("sphere")
    f.addGeometry(geometry)
    f.setStiffness(p[0]); f.setDissipation(p[1]); f.setStaticFriction(p[2])
    f.setDynamicFriction(p[3]); f.setViscousFriction(p[4]); f.setTransitionVelocity(p[5])
    m.addForce(f)
m.finalizeConnections()
m.printToXML(INPUTS["path"])
"""

EVALUATE = """
m = osim.Model(INPUTS["path"])
s = m.initSystem()
cs = m.getCoordinateSet()
matter = m.getMatterSubsystem()
nb = m.getBodySet().getSize() + 1
out = {}
for fname in ("c_floor", "c_wall", "hc_floor", "hc_wall"):
    f = m.getForceSet().get(fname)
    labels = [f.getRecordLabels().get(i) for i in range(f.getRecordLabels().size())]
    rec, gen = [], []
    for q, u in zip(INPUTS[fname]["q"], INPUTS[fname]["u"]):
        for name, v in q.items():
            cs.get(name).setValue(s, v, False)
        for name, v in u.items():
            cs.get(name).setSpeedValue(s, v)
        m.realizeDynamics(s)  # (HuntCrossleyForce's contacts are found at this stage)
        r = f.getRecordValues(s)
        r = [r.get(i) for i in range(r.size())]
        rec.append(r)
        bf = osim.VectorOfSpatialVec(nb, osim.SpatialVec(osim.Vec3(0), osim.Vec3(0)))
        for k, bname in enumerate(("ball", "plate" if fname.endswith("wall") else "ground")):
            if bname == "ground":
                continue  # a force on the ground moves no coordinate
            ix = int(m.getBodySet().get(bname).getMobilizedBodyIndex())
            bf.set(ix, osim.SpatialVec(osim.Vec3(*r[6 * k + 3:6 * k + 6]),
                                       osim.Vec3(*r[6 * k:6 * k + 3])))
        g = osim.Vector()
        matter.multiplyBySystemJacobianTranspose(s, bf, g)
        gen.append([g.get(i) for i in range(g.size())])
    out[fname] = {"labels": labels, "records": rec, "generalized": gen}
coords = [cs.get(i).getName() for i in range(cs.getSize())]
OUT.update(out=out, coords=coords)
"""


def _states(model, contact, rng, n):
    """Random states with the sphere's penetration of the half-space in [-5, 25] mm."""
    q = np.zeros((n, model.nq))
    q[:, :] = rng.uniform(-1.0, 1.0, (n, model.nq))
    names = model.coordinate_names
    ball_t = [names.index(f"ball_free_coord_{k}") for k in (3, 4, 5)]  # translations (ground)
    kin = forward_kinematics(model, q)
    b = model.body_index(contact.body)
    h = -1 if contact.plane_body == "ground" else model.body_index(contact.plane_body)
    Rb, pb = kin.rotations[:, b], kin.positions[:, b]
    c = pb + Rb @ contact.center
    if h < 0:
        n_w = np.broadcast_to(contact.plane_normal, (n, 3))
        p0 = np.broadcast_to(contact.plane_point, (n, 3))
    else:
        Rh, ph = kin.rotations[:, h], kin.positions[:, h]
        n_w, p0 = Rh @ contact.plane_normal, ph + Rh @ contact.plane_point
    depth = rng.uniform(-0.005, 0.025, n)
    # move the ball along the normal: delta = r - n.(c - p0)
    shift = (contact.radius - depth - np.sum(n_w * (c - p0), axis=1))[:, None] * n_w
    q[:, ball_t] += shift
    qd = rng.normal(0.0, 0.6, (n, model.nv))
    slow = rng.random(n) < 0.3  # slips below the transition velocity
    qd[slow] *= 0.05
    return q, qd, depth


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    path = tmp_path_factory.mktemp("smooth") / "contact.osim"
    opensim_run(BUILD, path=str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        model = read_osim(path)
    contacts = {c.name: c for c in osim_smooth_contacts(model)}
    rng = np.random.default_rng(7)
    inputs, states = {}, {}
    names = model.coordinate_names
    for name, c in contacts.items():
        q, qd, depth = _states(model, c, rng, N_STATES)
        u = np.einsum("nij,nj->ni", osim_speed_matrix(model, q), qd)
        inputs[name] = {"q": [dict(zip(names, x, strict=True)) for x in q],
                        "u": [dict(zip(names, x, strict=True)) for x in u]}  # fmt: skip
        states[name] = (q, qd, depth)
    out = opensim_run(EVALUATE, path=str(path), **inputs)
    return model, contacts, states, out


def test_reader_gives_both_contacts(peer):
    model, contacts, _, _ = peer
    assert sorted(contacts) == ["c_floor", "c_wall", "hc_floor", "hc_wall"]
    assert type(contacts["hc_wall"]).__name__ == "HuntCrossleySphereContact"
    assert contacts["hc_wall"].parameters.transition_velocity == 0.2
    c = contacts["c_wall"]
    assert c.body == "ball" and c.plane_body == "plate" and c.radius == pytest.approx(0.04)
    assert c.parameters.stiffness == 3e6 and c.parameters.hunt_crossley_smoothing == 40.0


@pytest.mark.parametrize("name", ["c_floor", "c_wall", "hc_floor", "hc_wall"])
def test_forces_match_opensim(peer, name):
    model, contacts, states, out = peer
    c = contacts[name]
    q, qd, depth = states[name]
    rec = np.array(out["out"][name]["records"])  # ball F, ball M, half-space body F, M
    ev = c.evaluate(model, q, qd)
    assert np.allclose(ev.depth, depth, atol=1e-12)
    assert np.ptp(ev.normal_force) > 100.0  # light and heavy contacts both in the sample
    if name.startswith("hc"):
        # Simbody scales the friction of a contact that separates faster than 2/(3c) (its
        # Hunt-Crossley force f < 0, no normal force) by f: it then pushes along the slip.
        # ahbm gives no force there (documented departure); compare the other states.
        quirk = (ev.normal_force == 0) & (np.abs(rec[:, 0:3]).max(axis=1) > 0)
        assert np.all(np.abs(ev.force[quirk]) == 0)
        keep = ~quirk
        assert keep.sum() > 150 and (ev.depth[keep] < 0).any()
        q, qd, rec = q[keep], qd[keep], rec[keep]
        ev = c.evaluate(model, q, qd)
        out = {"out": {name: {"generalized": np.array(out["out"][name]["generalized"])[keep]}},
               "coords": out["coords"]}  # fmt: skip
    F_os, M_os = rec[:, 0:3], rec[:, 3:6]
    # body wrench of the sphere's body: force and moment about its origin
    kin = forward_kinematics(model, q)
    o = kin.positions[:, model.body_index("ball")]
    M = np.cross(ev.point - o, ev.force)
    assert _rel(ev.force, F_os) < 1e-10
    assert _rel(M, M_os) < 1e-10
    if c.plane_body == "plate":  # the reaction on the half-space's body
        assert _rel(-ev.force, rec[:, 6:9]) < 1e-10
    # generalized forces: tau = T^T tau_osim (ahbm's angle rates vs OpenSim's speeds)
    g = np.array(out["out"][name]["generalized"])
    T = osim_speed_matrix(model, q)
    # OpenSim's u order equals its coordinate order for these two free joints
    assert out["coords"] == model.coordinate_names
    tau_os = np.einsum("nji,nj->ni", T, g)
    tau = total_generalized_force(model, [c], q, qd)
    assert _rel(tau, tau_os) < 1e-10


SUBJECT01 = SHARED / "opensim" / "subject01.osim"

FEET = """
m = osim.Model(INPUTS["path"])
for f in m.getForceSet():
    if f.getConcreteClassName() != "SmoothSphereHalfSpaceForce":
        f.set_appliesForce(False)
forces = []
if INPUTS["build"]:  # OpenSim adds the spheres itself
    floor = osim.ContactHalfSpace(osim.Vec3(0), osim.Vec3(0, 0, -np.pi / 2), m.getGround(),
                                  "floor")
    m.addContactGeometry(floor)
    for k, (name, body, centre, radius) in enumerate(INPUTS["spheres"]):
        sph = osim.ContactSphere(radius, osim.Vec3(*centre), m.getBodySet().get(body),
                                 name + "_g")
        m.addContactGeometry(sph)
        f = osim.SmoothSphereHalfSpaceForce(name, sph, floor)
        for key, value in INPUTS["parameters"].items():
            getattr(f, "set_" + key)(value)
        m.addForce(f)
        forces.append((f, body))
else:  # the spheres are in the file (written by ahbm)
    for name, body, _, _ in INPUTS["spheres"]:
        f = osim.SmoothSphereHalfSpaceForce.safeDownCast(m.getForceSet().get(name))
        forces.append((f, body))
s = m.initSystem()
cs = m.getCoordinateSet()
names = [cs.get(i).getName() for i in range(cs.getSize())]
base = np.array([s.getU()[i] for i in range(s.getNU())])
u_index = []
for c in names:  # where each coordinate's speed sits in U
    cs.get(c).setSpeedValue(s, 1.0)
    u_index.append(int(np.argmax(np.abs([s.getU()[i] for i in range(s.getNU())] - base))))
    cs.get(c).setSpeedValue(s, 0.0)
OUT["u_names"] = [names[k] for k in np.argsort(u_index)]
nb = m.getBodySet().getSize() + 1
matter = m.getMatterSubsystem()
rec, gen = [], []
for q, u in zip(INPUTS["q"], INPUTS["u"]):
    for name, v in q.items():
        cs.get(name).setValue(s, v, False)
    for name, v in u.items():
        cs.get(name).setSpeedValue(s, v)
    m.realizeVelocity(s)
    bf = osim.VectorOfSpatialVec(nb, osim.SpatialVec(osim.Vec3(0), osim.Vec3(0)))
    rk = []
    for f, body in forces:
        r = f.getRecordValues(s)
        r = [r.get(i) for i in range(6)]
        rk.append(r)
        ix = int(m.getBodySet().get(body).getMobilizedBodyIndex())
        old = bf.get(ix)
        bf.set(ix, osim.SpatialVec(osim.Vec3(*(np.array([old.get(0).get(i) for i in range(3)])
                                               + r[3:6])),
                                   osim.Vec3(*(np.array([old.get(1).get(i) for i in range(3)])
                                               + r[0:3]))))
    g = osim.Vector()
    matter.multiplyBySystemJacobianTranspose(s, bf, g)
    gen.append([g.get(i) for i in range(g.size())])
    rec.append(rk)
OUT.update(records=rec, generalized=gen)
"""


@pytest.mark.skipif(not SUBJECT01.is_file(), reason=f"shared data not found at {SUBJECT01}")
@pytest.mark.parametrize("source", ["built by OpenSim", "written by ahbm"])
def test_foot_spheres_on_subject01_match_opensim(source, tmp_path):
    """Falisse's 12 foot spheres on subject01 (custom joints, coupled knee): OpenSim agrees.

    OpenSim either adds the spheres to subject01 itself, or loads the file that
    ``add_osim_smooth_contacts`` + ``write_osim`` made (whose spheres ahbm reads back).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        model = read_osim(SUBJECT01, muscles=False)
    spheres = opensim_foot_spheres(model)
    path = SUBJECT01
    if source == "written by ahbm":
        add_osim_smooth_contacts(model, spheres)
        path = tmp_path / "subject01_feet.osim"
        write_osim(model, path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AhbmWarning)
            model = read_osim(path, muscles=False)
        spheres = osim_smooth_contacts(model)
    assert len(spheres) == 12
    assert {c.body for c in spheres} == {"calcn_r", "toes_r", "calcn_l", "toes_l"}
    rng = np.random.default_rng(3)
    n = 40
    names = model.coordinate_names
    q = rng.uniform(-0.25, 0.25, (n, model.nq))
    for k, nm in enumerate(names):
        if nm.startswith("knee"):  # inside the range of the knee's spline functions
            q[:, k] = rng.uniform(-1.0, -0.05, n)
    iy = names.index("pelvis_ty")
    q[:, iy] = 0.0
    qd = rng.normal(0.0, 0.5, (n, model.nv))
    deepest = np.max([c.evaluate(model, q, qd).depth for c in spheres], axis=0)
    q[:, iy] = rng.uniform(0.0, 0.02, n) - deepest  # the deepest sphere 0-20 mm in
    u = np.einsum("nij,nj->ni", osim_speed_matrix(model, q), qd)
    p = spheres[0].parameters
    out = opensim_run(
        FEET, path=str(path), build=source == "built by OpenSim",
        spheres=[(c.name, c.body, c.center.tolist(), c.radius) for c in spheres],
        parameters={k: getattr(p, k) for k in p.__dataclass_fields__},
        q=[dict(zip(names, x, strict=True)) for x in q],
        u=[dict(zip(names, x, strict=True)) for x in u],
    )  # fmt: skip
    rec = np.array(out["records"])  # (n, 12, 6): force and torque on the sphere's body
    for j, c in enumerate(spheres):
        ev = c.evaluate(model, q, qd)
        assert _rel(ev.force, rec[:, j, 0:3]) < 1e-10
    assert np.max(rec[:, :, 1]) > 100.0  # loaded states in the sample
    perm = [out["u_names"].index(nm) for nm in model.velocity_names]
    g = np.array(out["generalized"])[:, perm]
    tau_os = np.einsum("nji,nj->ni", osim_speed_matrix(model, q), g)
    tau = total_generalized_force(model, spheres, q, qd)
    assert _rel(tau, tau_os) < 1e-10
