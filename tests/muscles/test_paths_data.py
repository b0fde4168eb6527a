"""Muscle path data: the classes, their JSON forms and the model-file sections."""

import json
import pickle

import numpy as np
import pytest

import ahbm
from ahbm.errors import ModelError
from ahbm.kinematics.functions import LinearFunction, SimmSpline
from ahbm.kinematics.tree import Model
from ahbm.muscles import (
    ConditionalPathPoint,
    MovingPathPoint,
    Muscle,
    PathPoint,
    PathWrap,
    WrapObject,
)


def leg_model() -> Model:
    """Thigh (hip: 3 rotations) and shank (knee: revolute about z)."""
    m = Model("leg", gravity=(0, -9.81, 0))
    m.add_body("thigh", "ground", {"type": "euler", "sequence": "ZXY"}, mass=8.0,
               inertia=np.diag([0.1, 0.02, 0.1]), position=(0, 0.9, 0))  # fmt: skip
    m.add_body("shank", "thigh", {"type": "revolute", "axis": [0, 0, 1]}, mass=3.5,
               inertia=np.diag([0.05, 0.01, 0.05]), position=(0, -0.42, 0))  # fmt: skip
    return m


def cylinder() -> WrapObject:
    c, s = np.cos(0.3), np.sin(0.3)
    R = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    return WrapObject("knee_cyl", "thigh", "cylinder", (0.0, -0.4, 0.0), R, (0.03, 0.12), "-x")


def muscles(model) -> list:
    knee = model.coordinate_names[-1]
    vas = Muscle(
        "vasti",
        (
            PathPoint("o", "thigh", (0.03, -0.2, 0.02)),
            ConditionalPathPoint("via", "thigh", (0.035, -0.4, 0.0), knee, (-2.6, -1.4)),
            MovingPathPoint(
                "pat",
                "shank",
                (0.0, 0.0, 0.0014),
                x=(knee, SimmSpline([-2.0, -1.0, 0.0, 0.2], [0.015, 0.036, 0.062, 0.07])),
                y=(knee, LinearFunction(0.002, 0.02), (-2.0, 0.2)),
            ),  # fmt: skip
        ),
        (PathWrap("knee_cyl", range=(1, 3)),),
        model="Thelen2003Muscle",
        max_isometric_force=5000.0,
        optimal_fiber_length=0.09,
        tendon_slack_length=0.22,
        pennation_angle=0.05,
        parameters={"FmaxTendonStrain": 0.033, "KshapeActive": 0.45},
    )
    ham = Muscle(
        "hamstrings",
        (PathPoint("o", "ground", (-0.1, 0.8, 0.07)), PathPoint("i", "shank", (-0.03, -0.04, 0))),
        model="PathActuator",
        max_isometric_force=1.0,
        optimal_fiber_length=float("nan"),
        tendon_slack_length=float("nan"),
    )
    return [vas, ham]


def test_every_class_round_trips_through_json_and_pickle():
    model = leg_model()
    objs = [cylinder(), *muscles(model), PathWrap("x", "midpoint", (2, 3))]
    for obj in objs:
        d = json.loads(json.dumps(obj.to_dict(), allow_nan=False))
        back = type(obj).from_dict(d)
        assert back == obj
        assert hash(back) == hash(obj)
        assert pickle.loads(pickle.dumps(obj)) == obj
    for p in muscles(model)[0].points:
        assert type(p).from_dict(p.to_dict()) == p


def test_classes_are_immutable():
    w = cylinder()
    with pytest.raises(AttributeError):
        w.name = "other"
    m = muscles(leg_model())[0]
    with pytest.raises(AttributeError):
        m.max_isometric_force = 1.0


def test_model_sections_round_trip_through_the_model_file(tmp_path):
    model = leg_model()
    model.wrap_objects = [cylinder()]
    model.muscles = muscles(model)
    assert [m.name for m in model.muscles] == ["vasti", "hamstrings"]
    assert model.section("muscles") == model.muscles
    path = ahbm.save_model(model, tmp_path / "leg.json")
    data = json.loads(path.read_text())
    assert [d["name"] for d in data["muscles"]] == ["vasti", "hamstrings"]
    assert data["muscles"][1]["optimal_fiber_length"] is None  # NaN -> null
    back = ahbm.load_model(path)
    assert back.wrap_objects == model.wrap_objects
    assert back.muscles == model.muscles
    assert back.muscles[0].parameters == {"FmaxTendonStrain": 0.033, "KshapeActive": 0.45}
    assert np.isnan(back.muscles[1].optimal_fiber_length)
    # a copy and a pickle keep them
    assert model.copy().muscles == model.muscles
    assert pickle.loads(pickle.dumps(model)).muscles == model.muscles


def test_wrap_object_normalizes_opensim_quadrants_and_keeps_its_frame():
    w = WrapObject("s", "ground", "sphere", (0, 0, 0), np.eye(3), [0.05], quadrant="Y")
    assert w.quadrant == "+y"
    np.testing.assert_array_equal(cylinder().transform[:3, 3], [0.0, -0.4, 0.0])


def test_section_checker_names_unknown_bodies_coordinates_and_wrap_objects():
    model = leg_model()
    vas, ham = muscles(model)
    with pytest.raises(ModelError, match="knee_cyl.*not a wrap object.*wrap_objects first"):
        model.muscles = [vas]
    model.wrap_objects = [cylinder()]
    bad_body = Muscle(
        "m",
        (PathPoint("a", "foot", (0, 0, 0)), PathPoint("b", "shank", (0, 0, 0))),
        max_isometric_force=1,
        optimal_fiber_length=0.1,
        tendon_slack_length=0.1,
    )
    with pytest.raises(ModelError, match="'foot'.*does not have"):
        model.muscles = [bad_body]
    bad_coord = Muscle(
        "m",
        (PathPoint("a", "thigh", (0, 0, 0)),
         ConditionalPathPoint("b", "shank", (0, 0, 0), "ankle", (0, 1))),
        max_isometric_force=1, optimal_fiber_length=0.1, tendon_slack_length=0.1,
    )  # fmt: skip
    with pytest.raises(ModelError, match="'ankle'.*not a scalar coordinate"):
        model.muscles = [bad_coord]
    with pytest.raises(ModelError, match="two muscles are named 'hamstrings'"):
        model.muscles = [ham, ham]
    model.muscles = [vas, ham]
    with pytest.raises(ModelError, match="'vasti' wraps over 'knee_cyl'"):
        model.wrap_objects = []
    with pytest.raises(ModelError, match="must be a Muscle"):
        model.muscles = [{"name": "x"}]


def test_load_model_names_the_file_and_the_bad_item(tmp_path):
    model = leg_model()
    model.wrap_objects = [cylinder()]
    model.muscles = muscles(model)
    data = ahbm.kinematics.model_dict.model_to_dict(model)
    data["muscles"][0]["points"][0]["location"] = [0, 0]
    with pytest.raises(ModelError, match=r"muscles\[0\].*location must be 3 numbers"):
        ahbm.load_model(data)
    data = ahbm.kinematics.model_dict.model_to_dict(model)
    data["muscles"][1]["colour"] = "red"
    with pytest.raises(ModelError, match=r"muscles\[1\].*unknown fields \['colour'\]"):
        ahbm.load_model(data)
    data = ahbm.kinematics.model_dict.model_to_dict(model)
    data["wrap_objects"][0]["kind"] = "cone"
    with pytest.raises(ModelError, match=r"wrap_objects\[0\].*kind must be one of"):
        ahbm.load_model(data)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: PathPoint("", "b", (0, 0, 0)), "name must be a non-empty string"),
        (lambda: PathPoint("a", "b", (0, 0, np.nan)), "location must be a finite number"),
        (lambda: PathPoint("a", "b", "0 0 0"), "location must be 3 numbers"),
        (lambda: ConditionalPathPoint("a", "b", (0, 0, 0), "q", (1, 0)), "lower <= upper"),
        (lambda: MovingPathPoint("a", "b", (0, 0, 0), x=("q",)), r"\(coordinate name, function\)"),
        (lambda: MovingPathPoint("a", "b", (0, 0, 0), x=("q", 1.0)), "function object"),
        (
            lambda: WrapObject("w", "b", "cylinder", (0, 0, 0), np.eye(3), (0.1,)),
            r"cylinder \(radius, length\)",
        ),
        (
            lambda: WrapObject("w", "b", "sphere", (0, 0, 0), np.eye(3), (-0.1,)),
            "dimensions must be positive",
        ),
        (
            lambda: WrapObject("w", "b", "sphere", (0, 0, 0), 2 * np.eye(3), (0.1,)),
            "proper orthonormal",
        ),
        (
            lambda: WrapObject("w", "b", "sphere", (0, 0, 0), np.eye(3), (0.1,), quadrant="up"),
            "quadrant must be one of",
        ),
        (lambda: PathWrap("w", method="fast"), "method must be one of"),
        (lambda: PathWrap("w", range=(1.5, 2)), "range must be two integers"),
        (
            lambda: Muscle(
                "m",
                (PathPoint("a", "b", (0, 0, 0)),),
                max_isometric_force=1,
                optimal_fiber_length=0.1,
                tendon_slack_length=0.1,
            ),
            "at least 2 points",
        ),  # fmt: skip
        (
            lambda: Muscle(
                "m",
                (PathPoint("a", "b", (0, 0, 0)), PathPoint("c", "b", (1, 0, 0))),
                max_isometric_force=-1,
                optimal_fiber_length=0.1,
                tendon_slack_length=0.1,
            ),
            "'m': max_isometric_force must be positive",
        ),  # fmt: skip
        (
            lambda: Muscle(
                "m",
                (PathPoint("a", "b", (0, 0, 0)), PathPoint("c", "b", (1, 0, 0))),
                max_isometric_force=1,
                optimal_fiber_length=float("nan"),
                tendon_slack_length=0.1,
            ),
            "optimal_fiber_length must be a finite number",
        ),  # fmt: skip
        (
            lambda: Muscle(
                "m",
                (PathPoint("a", "b", (0, 0, 0)), PathPoint("c", "b", (1, 0, 0))),
                (PathWrap("w", range=(1, 3)),),
                max_isometric_force=1,
                optimal_fiber_length=0.1,
                tendon_slack_length=0.1,
            ),
            r"range \(1, 3\)",
        ),  # fmt: skip
        (
            lambda: Muscle(
                "m",
                (PathPoint("a", "b", (0, 0, 0)), PathPoint("c", "b", (1, 0, 0))),
                max_isometric_force=1,
                optimal_fiber_length=0.1,
                tendon_slack_length=0.1,
                parameters={"k": object()},
            ),
            "JSON values",
        ),  # fmt: skip
    ],
)
def test_bad_values_raise_model_errors_naming_the_element(make, match):
    with pytest.raises(ModelError, match=match):
        make()
