"""Damaged and crafted model files: every field is checked before use, and the error names
the file, the body and the field (the cases of the fuzzing campaign that failed raw)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ahbm
from ahbm.errors import FileFormatError, ModelError
from ahbm.kinematics import Model
from ahbm.kinematics import tree as tree_module


def _model_dict(**body_fields) -> dict:
    body = {
        "name": "thigh", "parent": "ground", "joint": {"type": "revolute", "axis": [0, 1, 0]},
        "mass": 8.0, "com": [0.0, 0.0, -0.2], "inertia": np.diag([0.1, 0.1, 0.02]).tolist(),
    }  # fmt: skip
    body.update(body_fields)
    shank = {"name": "shank", "parent": "thigh", "joint": "fixed", "mass": 3.0}
    return {"format": "ahbm-model", "version": 1, "name": "leg", "bodies": [body, shank]}


def _write(tmp_path, data, name="bad.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))  # Infinity and NaN as JavaScript literals
    return path


def test_the_valid_file_loads(tmp_path):
    model = ahbm.load_model(_write(tmp_path, _model_dict(), "good.json"))
    assert model.body_names == ["thigh", "shank"]


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"name": ["thigh"]}, r"body #0: 'name' must be a non-empty string, got \['thigh'\]"),
        ({"name": {"a": 1}}, r"body #0: 'name' must be a non-empty string"),
        ({"name": ""}, r"body #0: 'name' must be a non-empty string"),
        ({"parent": ["ground"]}, r"body 'thigh': 'parent' must be the name of an earlier body"),
        ({"parent": float("inf")}, r"body 'thigh': 'parent' must be .* got inf"),
        ({"parent": 0}, r"body 'thigh': 'parent' must be"),
        ({"markers": ["m"]}, r"body 'thigh': markers must be a mapping"),
        ({"markers": {"m": {"x": 1}}}, r"body 'thigh': marker 'm' must be 3 numbers"),
        ({"markers": {"": [0, 0, 0]}}, r"body 'thigh': marker names must be non-empty strings"),
        ({"mass": -1.0}, r"body 'thigh': mass must be finite, >= 0"),
        ({"mass": float("nan")}, r"body 'thigh': mass must be finite"),
        ({"mass": float("inf")}, r"body 'thigh': mass must be finite"),
        ({"mass": 10**400}, r"body 'thigh': mass must be a number"),
        ({"mass": 1e300}, r"body 'thigh': mass must be finite, >= 0 and <= 1e\+12 kg"),
        ({"mass": "8"}, r"body 'thigh': mass must be a number \(kg\), got '8'"),
        ({"mass": True}, r"body 'thigh': mass must be a number"),
        ({"com": [1e308, 0, 0]}, r"body 'thigh': com has a value of magnitude 1e\+308"),
        ({"com": [10**400, 0, 0]}, r"body 'thigh': com must be 3 numbers"),
        ({"com": "abc"}, r"body 'thigh': com must be 3 numbers"),
        ({"inertia": (np.eye(3) * 1e308).tolist()}, r"body 'thigh': inertia has a value"),
        ({"inertia": [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]}, r"body 'thigh': inertia must be symm"),
        ({"inertia": [[-1, 0, 0], [0, 1, 0], [0, 0, 1]]}, r"inertia is not positive definite"),
        ({"inertia": [[1, 0, 0], [0, 1, 0], [0, 0, 5]]}, r"inertia violates the triangle ineq"),
        ({"inertia": [[1, 0, 0], [0, 1, 0], [0, 0, float("nan")]]}, r"inertia must be a finite"),
        ({"inertia": [[1, 2], [3, 4]]}, r"inertia must be a finite 3x3 matrix"),
        ({"origin": {"rotation": [[2, 0, 0], [0, 1, 0], [0, 0, 1]]}}, r"not a proper orthonorm"),
        ({"origin": {"rotation": [[-1, 0, 0], [0, 1, 0], [0, 0, 1]]}}, r"not a proper orthonorm"),
        ({"origin": {"position": [0, float("inf"), 0]}}, r"origin position must be 3 finite"),
        ({"origin": ["x"]}, r"body 'thigh': 'origin' must be an object"),
        ({"joint": {"type": ["revolute"]}}, r"body 'thigh': unknown joint type \['revolute'\]"),
        ({"joint": {"type": {"a": 1}}}, r"body 'thigh': unknown joint type"),
        (
            {"joint": {"type": "revolute", "axis": [0, 1, 0], "coordinates": [["q"]]}},
            r"joint 'coordinates' must be non-empty strings, got \['q'\]",
        ),  # fmt: skip
        ({"joint": {"type": "revolute", "axis": [1e308, 0, 0]}}, r"joint axis has a value"),
        (
            {
                "joint": {
                    "type": "custom",
                    "transform": [
                        {"axis": [0, 0, 1], "coordinate": "q", "function": {"type": [[1, 2]]}}
                    ]
                    + [{"axis": [1, 0, 0], "coordinate": None}] * 5,
                }
            },
            r"unknown type \[\[1, 2\]\]",
        ),  # fmt: skip
        ({"joint": {"type": "revolute", "axis": [10**400, 0, 0]}}, r"joint axis must be 3 num"),
    ],
)
def test_bad_fields_name_the_file_body_and_field(tmp_path, fields, match):
    path = _write(tmp_path, _model_dict(**fields))
    with pytest.raises(ModelError, match=match) as info:
        ahbm.load_model(path)
    assert "bad.json" in str(info.value)
    with pytest.raises(ModelError, match=match):  # the same check for a dict
        Model.from_dict(_model_dict(**fields))


@pytest.mark.parametrize(
    "top, match",
    [
        ({"name": ["leg"]}, r"'name' must be a string"),
        ({"gravity": [0, 0, 10**400]}, r"gravity must be 3 numbers"),
        ({"gravity": [0, 0, float("nan")]}, r"gravity must be 3 finite numbers"),
        ({"bodies": {"thigh": {}}}, r"'bodies' must be a list"),
        ({"bodies": ["thigh"]}, r"body #0 must be an object, got str"),
    ],
)
def test_bad_top_level_entries(tmp_path, top, match):
    data = {**_model_dict(), **top}
    with pytest.raises(ModelError, match=match) as info:
        ahbm.load_model(_write(tmp_path, data))
    assert "bad.json" in str(info.value)


def test_bytes_that_are_not_utf8_name_the_file_and_byte(tmp_path):
    text = json.dumps(_model_dict()).encode()
    at = text.index(b"thigh")
    path = tmp_path / "latin.json"
    path.write_bytes(text[:at] + b"\xe9" + text[at:])
    with pytest.raises(FileFormatError, match=rf"latin\.json' is not UTF-8 text: byte {at} "):
        ahbm.load_model(path)
    path.write_bytes(b"\xef\xbb\xbf" + text)  # a byte order mark is fine
    assert ahbm.load_model(path).n_bodies == 2


@pytest.mark.parametrize("depth", [100, 10_000, 1_000_000])
def test_deep_nesting_is_refused_before_parsing(tmp_path, depth):
    data = _model_dict(geometry="DEEP")
    text = json.dumps(data).replace('"DEEP"', "[" * depth + "]" * depth)
    path = tmp_path / "deep.json"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=rf"deep\.json'.*nested {depth + 3} levels"):
        ahbm.load_model(path)


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    data = _model_dict(geometry={"label": "[[[[" * 100 + '\\"{{{{' * 50})
    model = ahbm.load_model(_write(tmp_path, data, "strings.json"))
    assert model.bodies[0].geometry["label"].startswith("[[[[")


def test_deep_or_cyclic_dictionaries():
    data = _model_dict()
    deep = []
    for _ in range(100):
        deep = [deep]
    data["bodies"][0]["geometry"] = deep
    with pytest.raises(ModelError, match="nested more than 64 levels"):
        Model.from_dict(data)
    data = _model_dict()
    cycle = {}
    cycle["self"] = cycle
    data["bodies"][0]["geometry"] = cycle
    with pytest.raises(ModelError, match="nested more than 64 levels deep \\(or a cycle\\)"):
        Model.from_dict(data)


def test_numbers_with_thousands_of_digits(tmp_path):
    text = json.dumps(_model_dict()).replace('"mass": 8.0', '"mass": ' + "9" * 5000)
    path = tmp_path / "digits.json"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=r"digits\.json' is not valid JSON"):
        ahbm.load_model(path)


def test_add_body_parent_must_be_a_name_or_an_integer_index():
    m = Model()
    m.add_body("a", "ground", "fixed", mass=1.0)
    for bad in (float("inf"), 0.5, True, None, ["a"]):
        with pytest.raises(ModelError, match="parent must be a body name"):
            m.add_body("b", bad, "fixed", mass=1.0)
    assert m.add_body("b", np.int64(0), "fixed", mass=1.0) == 1


def test_loading_builds_the_derived_arrays_once_not_per_body(tmp_path, monkeypatch):
    """600 bodies: no per-body rebuild of the model (the quadratic cost of 0.1)."""
    m = Model("chain")
    parent = "ground"
    for i in range(600):
        m.add_body(f"b{i}", parent, {"type": "euler", "sequence": "ZXY"}, position=[0, 0.1, 0],
                   mass=1.0, com=[0, 0.05, 0], inertia=np.diag([0.1, 0.1, 0.05]),
                   markers={f"m{i}": [0.0, 0.0, 0.01]})  # fmt: skip
        parent = f"b{i}"
    path = ahbm.save_model(m, tmp_path / "chain.json")
    builds = []
    original = tree_module.Model._build
    monkeypatch.setattr(
        tree_module.Model, "_build", lambda self: builds.append(1) or original(self)
    )
    loaded = ahbm.load_model(path)
    assert len(builds) <= 1  # the derived arrays are built at most once, not after every body
    assert loaded.nq == 1800 and len(builds) == 1  # ... and on first use
    np.testing.assert_array_equal(loaded.parent, np.arange(600) - 1)


def test_a_key_given_twice_is_refused(tmp_path):
    text = json.dumps(_model_dict()).replace('"mass": 8.0', '"mass": 8.0, "mass": -1.0')
    path = tmp_path / "twice.json"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=r"twice\.json': the key 'mass' appears twice"):
        ahbm.load_model(path)
