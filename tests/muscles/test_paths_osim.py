"""read_osim fills model.muscles and model.wrap_objects from the ForceSet and WrapObjectSets."""

import warnings
from pathlib import Path

import numpy as np
import pytest

import ahbm
from ahbm.errors import AhbmWarning
from ahbm.kinematics import point_position
from ahbm.kinematics.tree import Model
from ahbm.muscles import ConditionalPathPoint, MovingPathPoint, PathPoint, muscle_lengths
from ahbm.opensim import read_osim
from ahbm.opensim.muscle_paths import _function, muscles_from_osim, wrap_objects_from_osim

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
LEG = DATA / "muscles_leg.osim"


@pytest.fixture(scope="module")
def leg():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing else is left out
        warnings.filterwarnings("ignore", ".*locked coordinates", AhbmWarning)
        return read_osim(LEG)


def test_every_muscle_class_with_its_parameters(leg):
    by = {m.name: m for m in leg.muscles}
    assert [m.name for m in leg.muscles] == [
        "vasti", "rect_fem", "psoas", "gastroc", "tib_ant", "ext_act", "peroneus",
        "gastroc_two_wraps",
    ]  # fmt: skip
    assert by["vasti"].model == "Thelen2003Muscle"
    assert by["vasti"].parameters["FmaxTendonStrain"] == 0.033
    assert by["vasti"].pennation_angle == 0.05
    # OpenSim's class defaults where the file has none
    assert (by["vasti"].activation_time_constant, by["vasti"].deactivation_time_constant) == (
        0.015,
        0.05,
    )
    assert by["psoas"].model == "Millard2012EquilibriumMuscle"
    assert by["psoas"].deactivation_time_constant == 0.04
    assert by["rect_fem"].model == "DeGrooteFregly2016Muscle"
    assert by["rect_fem"].parameters["tendon_strain_at_one_norm_force"] == 0.05
    assert by["gastroc"].model == "RigidTendonMuscle"
    act = by["ext_act"]
    assert act.model == "PathActuator" and act.max_isometric_force == 250.0
    assert np.isnan(act.optimal_fiber_length)


def test_path_elements_wraps_and_ranges(leg):
    by = {m.name: m for m in leg.muscles}
    rf = by["rect_fem"].points
    assert isinstance(rf[1], ConditionalPathPoint) and rf[1].coordinate == "knee_angle"
    assert rf[1].range == (-2.6, -1.46)
    assert isinstance(rf[2], MovingPathPoint)
    # the moving point's coordinate is clamped to the coordinate's range
    assert rf[2].x[0] == "knee_angle" and rf[2].x[2] == (-2.0944, 0.17453)
    assert rf[2].z is None and rf[2].location[2] == 0.0014
    assert [(w.wrap_object, w.method, w.range) for w in by["gastroc"].wraps] == [
        ("heel", "midpoint", (2, 3))
    ]
    assert [w.wrap_object for w in by["gastroc_two_wraps"].wraps] == ["condyle_cyl", "heel"]
    kinds = {w.name: (w.kind, w.body, w.quadrant, w.dimensions) for w in leg.wrap_objects}
    assert kinds == {
        "hip_sphere": ("sphere", "pelvis", "all", (0.03,)),
        "knee_cyl": ("cylinder", "femur", "+x", (0.035, 0.12)),
        "condyle_cyl": ("cylinder", "femur", "-x", (0.03, 0.1)),
        "heel": ("ellipsoid", "calcn", "-x", (0.03, 0.045, 0.035)),
    }
    R = np.array(next(w for w in leg.wrap_objects if w.name == "knee_cyl").rotation)
    a, b, c = 0.05, -0.1, 0.1  # body-fixed X-Y-Z
    Rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    Ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    Rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    np.testing.assert_allclose(R, Rx @ Ry @ Rz, atol=1e-15)


def test_offset_frames_and_locked_coordinates(leg):
    by = {m.name: m for m in leg.muscles}
    # a fixed point on a rotated offset frame of the tibia, moved to the tibia
    site = by["tib_ant"].points[1]
    assert type(site) is PathPoint and site.body == "tibia"
    c, s = np.cos, np.sin
    a, b, g = 0.2, -0.1, 0.3
    R = (
        np.array([[1, 0, 0], [0, c(a), -s(a)], [0, s(a), c(a)]])
        @ np.array([[c(b), 0, s(b)], [0, 1, 0], [-s(b), 0, c(b)]])
        @ np.array([[c(g), -s(g), 0], [s(g), c(g), 0], [0, 0, 1]])
    )
    np.testing.assert_allclose(site.location, [0.03, -0.35, 0.0] + R @ [0.01, 0.02, -0.01])
    # a moving point on a translated offset frame: functions shifted by the offset
    mp = by["ext_act"].points[0]
    assert isinstance(mp, MovingPathPoint) and mp.body == "femur"
    assert mp.x[1](0.0) == pytest.approx(0.03 + 0.02)
    assert mp.y is None and mp.location[1] == pytest.approx(-0.3)  # Constant 0 + offset
    assert mp.z[1](1.0) == pytest.approx(0.015 + 0.01)
    # conditional points on the locked subtalar angle (0.2): one active, one never
    assert [type(p).__name__ for p in by["peroneus"].points] == ["PathPoint"] * 3
    assert [p.name for p in by["peroneus"].points] == ["pe-P1", "pe-P2", "pe-P4"]


def test_lengths_of_a_read_model_are_consistent_with_point_positions(leg):
    q = np.zeros(leg.nq)
    q[leg.coordinate_names.index("knee_angle")] = -0.3
    ta = next(m for m in leg.muscles if m.name == "tib_ant")
    pts = [point_position(leg, q, p.body, p.location) for p in ta.points]
    expected = sum(np.linalg.norm(b - a) for a, b in zip(pts, pts[1:], strict=False))
    assert muscle_lengths(leg, q, muscles=["tib_ant"])[0] == pytest.approx(expected, abs=1e-15)


def test_model_file_round_trip_of_a_read_model(leg, tmp_path):
    back = ahbm.load_model(ahbm.save_model(leg, tmp_path / "leg.json"))
    assert back.muscles == leg.muscles
    assert back.wrap_objects == leg.wrap_objects


def test_what_cannot_be_represented_is_named():
    m = Model()
    m.add_body("arm", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0)
    wraps, notes = wrap_objects_from_osim(
        [{"type": "WrapDoubleCylinderObst", "name": "t", "body": "arm"},
         {"type": "WrapSphere", "name": "s", "body": "arm", "radius": -1},
         {"type": "WrapTorus", "name": "r", "body": "arm", "inner_radius": 0.02,
          "outer_radius": 0.01}]
    )  # fmt: skip
    assert wraps == [] and "WrapDoubleCylinderObst 't'" in notes[0]
    assert "WrapSphere 's'" in notes[1] and "WrapTorus 'r'" in notes[2] and "outer" in notes[2]
    torus, _ = wrap_objects_from_osim(
        [{"type": "WrapTorus", "name": "r", "body": "arm", "inner_radius": 0.01,
          "outer_radius": 0.03, "quadrant": "-y"}]
    )  # fmt: skip
    assert torus[0].kind == "torus" and torus[0].dimensions == (0.01, 0.03)
    assert torus[0].quadrant == "-y"
    origin = {"type": "PathPoint", "name": "o", "body": "ground", "location": [0, 1, 0]}
    on_leg = {"type": "PathPoint", "name": "i", "body": "leg", "location": [0, 0, 0]}
    on_arm = {"type": "PathPoint", "name": "i", "body": "arm", "location": [0, 0, 0]}
    bad_body = {
        "type": "Thelen2003Muscle",
        "name": "m1",
        "GeometryPath": {"PathPointSet": {"objects": [origin, on_leg]}},
    }
    wraps_obstacle = {
        "type": "Thelen2003Muscle",
        "name": "m2",
        "GeometryPath": {
            "PathPointSet": {"objects": [origin, on_arm]},
            "PathWrapSet": {"objects": [{"type": "PathWrap", "wrap_object": "t"}]},
        },
    }
    coord = {"type": "CoordinateActuator", "name": "c"}
    _, muscles, notes = muscles_from_osim(m, [bad_body, wraps_obstacle, coord])
    assert muscles == []
    assert "'m1'" in notes[0] and "'leg'" in notes[0]
    assert "'m2'" in notes[1] and "'t'" in notes[1]
    assert len(notes) == 2  # the coordinate actuator has no path: not a muscle, no note


def test_read_osim_warns_about_muscles_it_leaves_out(tmp_path):
    text = LEG.read_text().replace(
        "<wrap_object>heel</wrap_object>", "<wrap_object>nowhere</wrap_object>", 1
    )
    p = tmp_path / "bad.osim"
    p.write_text(text)
    with pytest.warns(
        AhbmWarning, match="RigidTendonMuscle 'gastroc' .*'nowhere'.*not in model.muscles"
    ):
        m = read_osim(p)
    assert "gastroc" not in [x.name for x in m.muscles]


def test_scaled_models_scale_the_muscle_paths_as_the_opensim_data(leg):
    """scale_segments moves model.muscles' points and wrap objects with their bodies, as it
    scales the OpenSim data kept in the "opensim" section."""
    from ahbm.bsp.segment_scaling import scale_segments

    factors = {"femur": (1.1, 1.2, 0.9), "tibia": 0.8, "calcn": (1.3, 1.0, 1.1)}
    scaled = scale_segments(leg, factors)
    kept_leg = {
        p["name"]: p
        for it in leg.section("opensim")
        if it.kind == "force"
        for p in it.data["GeometryPath"]["PathPointSet"]["objects"]
    }
    kept = {
        p["name"]: p
        for it in scaled.section("opensim")
        if it.kind == "force"
        for p in it.data["GeometryPath"]["PathPointSet"]["objects"]
    }
    q = np.zeros(leg.nq)
    q[leg.coordinate_names.index("knee_angle")] = -0.7
    for mus in scaled.muscles:
        for p in mus.points:
            d = kept[p.name]
            if "body" not in d:
                continue  # a moving point on an offset frame (the kept data stays in its frame)
            if isinstance(p, MovingPathPoint):
                ref = _function(d["x_location"], "x")
                assert float(p.x[1](-0.7)) == pytest.approx(float(ref(-0.7)), abs=1e-15)
                assert p.x[1](-0.7) != pytest.approx(
                    float(_function(kept_leg[p.name]["x_location"], "x")(-0.7))
                )
            elif d["type"] == "PathPoint":
                np.testing.assert_allclose(p.location, d["location"], atol=1e-15)
    wraps = {it.name: it.data for it in scaled.section("opensim") if it.kind == "wrap_object"}
    for w in scaled.wrap_objects:
        np.testing.assert_allclose(w.translation, wraps[w.name]["translation"], atol=1e-15)
    knee = next(w for w in scaled.wrap_objects if w.name == "knee_cyl")
    np.testing.assert_allclose(knee.translation, np.array([0.0, -0.4, 0.0]) * [1.1, 1.2, 0.9])
    assert muscle_lengths(scaled, q).shape == (len(scaled.muscles),)


def test_a_zero_max_contraction_velocity_is_read_as_undefined(tmp_path):
    """Files for path-only use (MoBL-ARMS' Schutte1993 muscles) carry a max contraction
    velocity of 0: the muscle is kept with NaN, its path works, its dynamics refuse it."""
    from ahbm.errors import DataError
    from ahbm.muscles import MuscleParameters

    text = LEG.read_text()
    start = text.index('<Thelen2003Muscle name="vasti">')
    end = text.index("</Thelen2003Muscle>", start)
    block = text[start:end]
    assert "<max_contraction_velocity>" not in block
    block0 = block + "<max_contraction_velocity>0</max_contraction_velocity>\n"
    p = tmp_path / "vmax0.osim"
    p.write_text(text[:start] + block0 + text[end:])
    with pytest.warns(
        AhbmWarning, match=r"max_contraction_velocity 0 .* NaN for 1 muscle\(s\): vasti"
    ):
        m = read_osim(p)
    by = {x.name: x for x in m.muscles}
    assert np.isnan(by["vasti"].max_contraction_velocity)
    q = np.zeros(m.nq)
    ref = {x.name: x for x in read_osim_quiet(LEG).muscles}
    assert ref["vasti"].max_contraction_velocity > 0
    np.testing.assert_allclose(muscle_lengths(m, q), muscle_lengths(read_osim_quiet(LEG), q))
    with pytest.raises(DataError, match="max_contraction_velocity` of muscle 'vasti'.*undefined"):
        MuscleParameters.from_muscles([by["vasti"], by["tib_ant"]])


def read_osim_quiet(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_osim(path)
