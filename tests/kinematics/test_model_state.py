"""A Model cannot go stale: read-only bodies and arrays, changes through
update_body and setters, a version-stamped plan cache, lazy derived arrays."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from ahbm._engine import node_plan
from ahbm.dynamics import aba, crba, rnea
from ahbm.errors import ModelError
from ahbm.kinematics import fit_markers, point_position
from ahbm.kinematics.configuration import random_model
from ahbm.kinematics.model_file import load_model
from ahbm.kinematics.tree import Model

MARKERS2 = {"m0": [0.1, 0.0, -0.3], "m1": [0.0, 0.1, -0.2], "m2": [0.05, -0.1, -0.1]}


def build(mass1=2.0, joint1=None, markers2=None, gravity=(0.0, 0.0, -9.81)) -> Model:
    """A three-body chain; the arguments are the values that the tests edit."""
    m = Model("chain", gravity=gravity)
    m.add_body(
        "b0", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=3.0, com=[0, 0, -0.2],
        inertia=np.diag([0.05, 0.05, 0.01]), markers={"a": [0.05, 0.02, -0.1]},
    )  # fmt: skip
    m.add_body(
        "b1", "b0", joint1 or {"type": "revolute", "axis": [1, 0, 0]}, position=[0, 0, -0.4],
        mass=mass1, com=[0, 0.01, -0.2], inertia=np.diag([0.03, 0.03, 0.005]),
        markers={"b": [0.05, 0.0, -0.1], "c": [-0.03, 0.04, -0.3]},
    )  # fmt: skip
    m.add_body(
        "b2", "b1", {"type": "euler", "sequence": "ZXY"}, position=[0, 0, -0.4], mass=1.0,
        com=[0.05, 0, -0.1], inertia=np.diag([0.01, 0.012, 0.004]),
        markers=MARKERS2 if markers2 is None else markers2,
    )  # fmt: skip
    return m


def results(m: Model) -> dict:
    """Dynamics, point kinematics and marker IK of `m` on fixed inputs."""
    rng = np.random.default_rng(4)
    q = rng.normal(size=(3, m.nq)) * 0.5
    qd = rng.normal(size=(3, m.nv))
    qdd = rng.normal(size=(3, m.nv))
    tau = rnea(m, q, qd, qdd)
    # markers measured on a reference model (the edited one) at known coordinates
    measured = _model_marker_positions(build(5.0, _PRISMATIC, _MOVED), q)
    ik = fit_markers(m, measured, marker_names=["a", "b", "c", "m0", "m1", "m2"], warn=False)
    return {
        "rnea": tau,
        "aba": aba(m, q, qd, tau + 1.0),
        "crba": crba(m, q),
        "point": point_position(m, q, "b2", [0.1, 0.2, 0.3]),
        "ik": ik.q,
    }


_PRISMATIC = {"type": "prismatic", "axis": [0, 1, 0]}
_MOVED = {**MARKERS2, "m1": [0.2, 0.1, -0.25]}


def _model_marker_positions(m, q):
    cols = []
    for b in m.bodies:
        for p in b.markers.values():
            cols.append(point_position(m, q, b.name, p))
    return np.stack(cols, axis=-2)


def test_edits_through_the_api_never_leave_stale_results():
    m = build()
    before = results(m)  # fills every cache of the model
    m.update_body("b1", mass=5.0)
    m.update_body("b1", joint=_PRISMATIC)
    m.update_body("b2", markers=_MOVED)
    after = results(m)
    fresh = results(build(5.0, _PRISMATIC, _MOVED))
    for key in before:
        np.testing.assert_allclose(after[key], fresh[key], atol=1e-8, err_msg=key)
        assert not np.allclose(after[key], before[key], atol=1e-6), key
    # the IK of the edited model recovers the coordinates that made its markers
    q = np.random.default_rng(4).normal(size=(3, m.nq)) * 0.5
    np.testing.assert_allclose(after["ik"], q, atol=1e-6)


def test_gravity_setter_and_axis_change():
    m = build()
    q, z = np.full(m.nq, 0.3), np.zeros(m.nv)
    tau0 = rnea(m, q, z, z)
    m.gravity = [0.0, -9.81, 0.0]
    m.update_body("b1", joint={"type": "revolute", "axis": [0, 1, 0]})
    ref = build(joint1={"type": "revolute", "axis": [0, 1, 0]}, gravity=(0.0, -9.81, 0.0))
    np.testing.assert_allclose(rnea(m, q, z, z), rnea(ref, q, z, z), atol=1e-12)
    assert not np.allclose(rnea(m, q, z, z), tau0)


def test_in_place_edits_raise():
    m = build()
    rnea(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv))
    with pytest.raises(ValueError, match="read-only"):
        m.masses[1] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        m.spatial_inertias[1, 0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        m.gravity[2] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        m.bodies[1].joint.axis[0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        m.bodies[2].markers["m0"][0] = 1.0
    with pytest.raises(TypeError):
        m.bodies[2].markers["m9"] = np.zeros(3)
    with pytest.raises(ModelError, match="update_body"):
        m.bodies[1].mass = 5.0
    with pytest.raises(ModelError, match="update_body"):
        m.bodies[1].joint.axis = [0, 1, 0]
    with pytest.raises(ModelError, match=r"model\.update_body\(name, mass="):
        m.masses = np.ones(3)
    with pytest.raises(ModelError, match="add_body"):
        m.nq = 4
    with pytest.raises(ModelError, match="model.cache"):
        m.plan = {}
    with pytest.raises(ModelError, match="cannot delete"):
        del m.nq
    with pytest.raises(AttributeError):
        m.bodies.append(m.bodies[0])
    with pytest.raises(AttributeError):
        m.children[0].append(2)
    limits = {"lower": [-1.0]}
    m.update_body("b0", joint={"type": "revolute", "axis": [0, 0, 1], "limits": limits})
    m.bodies[0].joint.limits["lower"][0] = 5.0  # a copy
    limits["lower"][0] = 7.0  # not kept by reference either
    assert m.bodies[0].joint.limits == {"lower": [-1.0]}
    np.testing.assert_array_equal(m.masses, [3.0, 2.0, 1.0])


def test_version_and_plan_cache():
    m = build()
    v = m.version
    plan = node_plan.plan(m)
    assert node_plan.plan(m) is plan and m.cache.version == v
    old_cache = m.cache
    m.update_body("b0", com=[0, 0, -0.25])
    assert m.version == v + 1 and m.cache.version == m.version
    assert m.cache is not old_cache and len(m.cache) == 0
    assert node_plan.plan(m) is not plan
    m.name = "renamed"
    assert m.version == v + 2 and m.name == "renamed"


def test_update_body_validates_and_keeps_the_model():
    m = build()
    with pytest.raises(ModelError, match="body 'b1': mass"):
        m.update_body("b1", mass=-1.0)
    with pytest.raises(ModelError, match="unknown body 'b9'"):
        m.update_body("b9", mass=1.0)
    with pytest.raises(TypeError):
        m.update_body("b1", name="x")
    assert m.bodies[1].mass == 2.0
    # a new joint type changes nq, nv and the coordinate names
    m.update_body(2, joint={"type": "spherical"})
    assert (m.nq, m.nv) == (6, 5) and m.coordinate_names[-1] == "b2_qw"
    m.update_body("b2", markers={**m.bodies[2].markers, "m3": [0, 0, 0.1]})
    assert list(m.bodies[2].markers) == ["m0", "m1", "m2", "m3"]


def test_copy_is_independent():
    m = build()
    c = m.copy()
    c.update_body("b1", mass=9.0)
    c.gravity = [0, 0, 0]
    assert m.masses[1] == 2.0 and m.gravity[2] == -9.81
    assert c.to_dict() != m.to_dict() and c.masses[1] == 9.0


def test_loading_builds_the_derived_arrays_once(monkeypatch):
    data = random_model(60, rng=np.random.default_rng(2)).to_dict()
    calls = []
    build_arrays = Model._build

    def counting(self):
        calls.append(self.n_bodies)
        build_arrays(self)

    monkeypatch.setattr(Model, "_build", counting)
    m = load_model(data)
    assert calls == []
    assert m.nq > 0 and m.masses.shape == (60,) and calls == [60]
    m.update_body("b3", mass=1.0)
    assert m.masses[3] == 1.0 and calls == [60, 60]


def test_pickle_and_deepcopy():
    m = build()
    m.update_body("b0", joint={"type": "revolute", "axis": [0, 0, 1], "limits": {"lower": [-1]}})
    q, z = np.full(m.nq, 0.2), np.zeros(m.nv)
    tau = rnea(m, q, z, z)  # fills the plan cache, which is not pickled
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert other.to_dict() == m.to_dict() and other.version == m.version
        assert len(other.cache) == 0 and not other.masses.flags.writeable
        assert not other.bodies[2].markers["m0"].flags.writeable
        np.testing.assert_array_equal(rnea(other, q, z, z), tau)
        other.update_body("b1", mass=7.0)
        assert m.masses[1] == 2.0


def test_force_element_indices_follow_model_changes():
    from ahbm.dynamics import RotationalSpringDamper

    m = build()
    spring = RotationalSpringDamper("b1", stiffness=10.0)
    q, z = np.full(m.nq, 0.1), np.zeros(m.nv)
    np.testing.assert_allclose(spring.generalized_force(m, q, z), [0, -1.0, 0, 0, 0])
    m.update_body("b0", joint={"type": "universal", "sequence": "ZX"})  # b1 moves to index 2
    q = np.full(m.nq, 0.1)
    np.testing.assert_allclose(
        spring.generalized_force(m, q, np.zeros(m.nv)), [0, 0, -1.0, 0, 0, 0]
    )
    m.update_body("b1", joint={"type": "revolute", "axis": [1, 0, 0], "name": "hinge"})
    with pytest.raises(ModelError, match="unknown coordinate 'b1'"):
        spring.generalized_force(m, q, np.zeros(m.nv))


def test_add_body_copies_the_callers_arrays_and_leaves_them_writable():
    """The checks hand their own arrays to the read-only bodies: the caller's arrays are
    neither frozen nor shared (changing them afterwards leaves the model as it was)."""
    m = Model("copies")
    given = {
        "position": np.array([0.0, 0.0, 1.0]),
        "rotation": np.eye(3),
        "com": np.array([0.1, 0.0, 0.0]),
        "inertia": np.diag([1.0, 2.0, 2.5]),
        "child_position": np.array([0.0, 0.2, 0.0]),
        "child_rotation": np.eye(3),
    }
    axis, marker = np.array([0.0, 0.0, 1.0]), np.array([1.0, 2.0, 3.0])
    custom_axis = np.array([1.0, 0.0, 0.0])
    transform = [
        {"axis": custom_axis if k == 0 else np.eye(3)[k % 3], "coordinate": "c" if k == 0 else None}
        for k in range(6)
    ]
    m.add_body("a", "ground", {"type": "revolute", "axis": axis}, mass=1.0,
               markers={"m": marker}, **given)  # fmt: skip
    m.add_body("b", "a", {"type": "custom", "coordinates": ["c"], "transform": transform}, mass=1.0)
    arrays = [*given.values(), axis, marker, custom_axis]
    assert all(a.flags.writeable for a in arrays)
    before = m.to_dict()
    for a in arrays:
        a[...] = 7.0
    assert m.to_dict() == before
    body = m.bodies[0]
    frozen = [body.position, body.rotation, body.com, body.inertia, body.child_position,
              body.child_rotation, body.joint.axis, body.markers["m"],
              m.bodies[1].joint.transform[0].axis]  # fmt: skip
    assert not any(a.flags.writeable for a in frozen)
