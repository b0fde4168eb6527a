"""Model files own all of a model: markers, constraints and the section registry;
unknown entries are errors that name them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ahbm
from ahbm.dynamics import (
    ConstraintSet,
    CoordinateCoupling,
    PointConstraint,
    UserConstraint,
    simulate,
)
from ahbm.dynamics.constrained import project_positions
from ahbm.errors import ModelError
from ahbm.kinematics import model_dict, model_file
from ahbm.kinematics.tree import Model

LENGTHS = (2.0, 1.0, 2.0, 1.5)  # ground, crank, coupler, rocker (m)


def _rod(length):
    inertia = np.diag([1e-3, length**2 / 12, length**2 / 12])
    return {"mass": 1.0, "com": [length / 2, 0.0, 0.0], "inertia": inertia}


def four_bar() -> Model:
    """Planar four-bar: a crank-coupler chain and a rocker closed by a point constraint."""
    ground, crank, coupler, rocker = LENGTHS
    m = Model("four_bar")
    axis = {"type": "revolute", "axis": [0.0, 1.0, 0.0]}
    m.add_body("crank", "ground", axis, markers={"tip": [crank, 0, 0]}, **_rod(crank))
    m.add_body("coupler", "crank", axis, position=[crank, 0, 0], **_rod(coupler))
    m.add_body("rocker", "ground", axis, position=[ground, 0, 0], **_rod(rocker))
    m.constraints = [
        PointConstraint(
            "coupler", [coupler, 0, 0], other="rocker", other_point=[rocker, 0, 0], axes="xz",
            name="loop",
        )
    ]  # fmt: skip
    return m


def test_constraints_load_with_load_model_and_simulate(tmp_path):
    path = ahbm.save_model(four_bar(), tmp_path / "four_bar.json")
    data = json.loads(path.read_text())
    assert data["constraints"][0]["type"] == "point"
    model = ahbm.load_model(path)
    assert [c.name for c in model.constraints] == ["loop"]
    # constraints=None: the model's own constraints, in projection and simulation
    q0 = project_positions(model, np.array([-1.0, 1.5, -1.2]), None)
    cs = ConstraintSet(model.constraints)
    assert np.abs(cs.position(model, q0)).max() < 1e-10
    kw = {"rtol": 1e-9, "atol": 1e-9}
    res = simulate(model, (0.0, 0.6), q0, np.zeros(3), **kw)
    closed = np.abs(cs.position(model, res.q)).max()
    assert closed < 1e-6
    # the same model simulated without them (constraints=[]) opens the loop
    free = simulate(model, (0.0, 0.6), q0, np.zeros(3), constraints=[], **kw)
    assert np.abs(cs.position(model, free.q)).max() > 1e3 * max(closed, 1e-9)


def test_round_trip_with_constraints_and_markers(tmp_path):
    m = four_bar()
    m.update_body("rocker", markers={"end": [1.5, 0.0, 0.0], "mid": [0.75, 0.0, 0.01]})
    m.constraints = [*m.constraints, CoordinateCoupling("rocker", "crank", ratio=0.5)]
    m2 = ahbm.load_model(ahbm.save_model(m, tmp_path / "m.json"))
    assert m2.to_dict() == m.to_dict()
    assert [type(c).__name__ for c in m2.constraints] == ["PointConstraint", "CoordinateCoupling"]
    for b1, b2 in zip(m.bodies, m2.bodies, strict=True):
        assert list(b1.markers) == list(b2.markers)
        for name in b1.markers:
            np.testing.assert_array_equal(b1.markers[name], b2.markers[name])
    assert list(m2.bodies[2].markers) == ["end", "mid"]
    # a copy keeps the constraints; a model without them writes no entry
    assert len(m.copy().constraints) == 2
    without = Model.from_dict({k: v for k, v in m.to_dict().items() if k != "constraints"})
    assert "constraints" not in without.to_dict()


def test_constraints_are_checked_against_the_model(tmp_path):
    m = four_bar()
    with pytest.raises(ModelError, match="thigh"):
        m.constraints = [PointConstraint("thigh", [0, 0, 0])]
    assert len(m.constraints) == 1  # unchanged
    d = four_bar().to_dict()
    d["constraints"][0]["body"] = "thigh"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ModelError, match=r"bad\.json.*thigh|thigh.*bad\.json"):
        ahbm.load_model(path)
    m.constraints = []
    assert m.constraints == () and "constraints" not in m.to_dict()


def test_a_constraint_that_cannot_be_stored_is_an_error(tmp_path):
    m = four_bar()
    m.constraints = [UserConstraint(lambda t, q: q[..., :1], 1, name="user")]
    with pytest.raises(ModelError, match="'user'.*cannot be stored"):
        ahbm.save_model(m, tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_update_body_keeps_constraints_valid():
    m = four_bar()
    m.constraints = [*m.constraints, CoordinateCoupling("rocker", "crank", ratio=0.5)]
    version = m.version
    with pytest.raises(ModelError, match="crank"):
        m.update_body("crank", joint={"type": "revolute", "axis": [0, 1, 0], "name": "hinge"})
    # rolled back: the joint and its coordinate are unchanged
    assert m.coordinate_names == ["crank", "coupler", "rocker"]
    assert m.bodies[0].joint.name == "crank" and m.version > version
    assert len(m.constraints) == 2


def _file(tmp_path, mutate):
    d = four_bar().to_dict()
    mutate(d)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(d))
    return path


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.update(muscels=[]), r"unknown top-level entry 'muscels'"),
        (lambda d: d.update(comment="x"), r"unknown top-level entry 'comment'"),
        (lambda d: d["bodies"][1].update(colour="red"),
         r"body 'coupler' has unknown fields \['colour'\]"),
        (lambda d: d["bodies"][0]["joint"].update(damping=0.1),
         r"body 'crank': joint has unknown fields \['damping'\]"),
        (lambda d: d["bodies"][2]["origin"].update(scale=2),
         r"'origin' has unknown fields \['scale'\]"),
        (lambda d: d["bodies"][0]["joint"].update(sequence="zx", type="universal"), "uppercase"),
        (lambda d: d["constraints"][0].update(stiffness=1.0), r"constraints\[0\].*stiffness"),
    ],
)  # fmt: skip
def test_unknown_entries_name_the_entry_and_the_file(tmp_path, mutate, match):
    path = _file(tmp_path, mutate)
    with pytest.raises(ModelError, match=match) as info:
        ahbm.load_model(path)
    assert "model.json" in str(info.value)


def test_a_section_without_a_registered_reader_is_an_error(tmp_path, monkeypatch):
    path = _file(tmp_path, lambda d: None)
    monkeypatch.setattr(model_dict, "_SECTIONS", {})
    with pytest.raises(ModelError, match="'constraints' section but no reader"):
        ahbm.load_model(path)
    m = Model()
    with pytest.raises(ModelError, match="no model-file section 'constraints'"):
        m.constraints = []


def test_register_a_section():
    class Note:
        def __init__(self, text):
            self.text = text

    def check(items, model):
        if not all(isinstance(x, Note) for x in items):
            raise ModelError("notes must be Note objects")
        return items

    model_file.register_model_section(
        "notes",
        read=lambda items, model, source: [Note(x) for x in items],
        write=lambda notes: [n.text for n in notes],
        check=check,
        owner="tests",
    )
    try:
        assert "notes" in model_dict.model_sections()
        m = four_bar()
        assert m.notes == ()
        m.notes = [Note("a"), Note("b")]
        d = m.to_dict()
        assert d["notes"] == ["a", "b"]
        assert [n.text for n in ahbm.load_model(d).notes] == ["a", "b"]
        with pytest.raises(ModelError, match="Note objects"):
            m.notes = ["c"]
    finally:
        model_dict._SECTIONS.pop("notes")
    with pytest.raises(ModelError, match="identifier other than"):
        model_file.register_model_section("bodies", read=len, write=len, check=len, owner="tests")
