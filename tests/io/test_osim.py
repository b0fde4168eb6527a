"""OpenSim model files: read_osim, write_osim, osim_coordinates, osim_speed_matrix.

Numbers are checked against independent compositions of the frames in the
file (numpy, written here), against finite differences, and by round trips;
the comparison with OpenSim itself is in tests/peers/test_opensim_model.py.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED

import ahbm
from ahbm.dynamics import ConstraintSet, CoordinateCoupling
from ahbm.errors import AhbmWarning, FileFormatError, ModelError
from ahbm.kinematics import forward_kinematics, point_position
from ahbm.kinematics.functions import SimmSpline
from ahbm.kinematics.tree import Model
from ahbm.opensim import OsimItem, osim_coordinates, osim_speed_matrix, read_osim, write_osim

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
ALL = DATA / "all_joints.osim"
LEGACY = DATA / "legacy33.osim"
SUBJECT01 = SHARED / "opensim"
SUBJECT01 = SUBJECT01 / "subject01.osim"


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # these files have nothing unsupported
        return read_osim(path)


def _xyz(a, b, c):
    """Body-fixed X-Y-Z rotation, written out independently of ahbm."""
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return rx @ ry @ rz


def _doc(model_xml: str) -> str:
    head = '<?xml version="1.0"?>\n<OpenSimDocument Version="40000">\n'
    return f"{head}{model_xml}\n</OpenSimDocument>\n"


PENDULUM = """<Model name="p">
<BodySet><objects>
<Body name="rod"><mass>2</mass><mass_center>0 -0.5 0</mass_center>
<inertia>0.1 0.01 0.1 0 0 0</inertia></Body>
</objects></BodySet>
<JointSet><objects>
<PinJoint name="pin">
<socket_parent_frame>/ground</socket_parent_frame>
<socket_child_frame>/bodyset/rod</socket_child_frame>
<coordinates><Coordinate name="angle"><range>-3 3</range>LOCK</Coordinate></coordinates>
</PinJoint>
</objects></JointSet>
</Model>"""


def _write(tmp_path, text, name="m.osim"):
    p = tmp_path / name
    p.write_text(text)
    return p


# ----------------------------------------------------------------------------
# every element of a 4.x file
# ----------------------------------------------------------------------------


def test_all_joint_types_map_to_ahbm_joints():
    m = _read(ALL)
    types = {b.name: b.joint.type for b in m.bodies}
    assert types == {
        "pin_body": "revolute", "slider_body": "prismatic", "universal_body": "universal",
        "ball_body": "euler", "gimbal_body": "euler", "weld_body": "fixed",
        "free_body": "custom", "planar_body": "custom", "custom_body": "custom",
        "coupled_body": "revolute",  # a CustomJoint that is a pin about x
    }  # fmt: skip
    b = {x.name: x for x in m.bodies}
    assert b["pin_body"].joint.axis.tolist() == [0, 0, 1]
    assert b["slider_body"].joint.axis.tolist() == [1, 0, 0]
    assert b["universal_body"].joint.sequence == "XY"
    assert b["ball_body"].joint.sequence == b["gimbal_body"].joint.sequence == "XYZ"
    assert b["coupled_body"].joint.axis.tolist() == [1, 0, 0]
    # OpenSim's state order: level by level from the ground, file order within a level
    assert m.coordinate_names == [
        "pin_q", "free_rx", "free_ry", "free_rz", "free_tx", "free_ty", "free_tz",
        "slider_q", "planar_rz", "planar_tx", "planar_ty", "universal_q1", "universal_q2",
        "custom_flex", "custom_add", "custom_rot", "ball_rx", "ball_ry", "ball_rz",
        "coupled_q", "gimbal_rx", "gimbal_ry", "gimbal_rz",
    ]  # fmt: skip
    assert m.joint_names[m.body_index("custom_body")] == "custom"
    assert m.gravity.tolist() == [0.3, -9.7, 0.2]


def test_custom_joint_transform_and_functions():
    m = _read(ALL)
    j = m.bodies[m.body_index("custom_body")].joint
    items = [(a.coordinate, a.function.to_dict()["type"]) for a in j.transform]
    assert items == [
        ("custom_flex", "LinearFunction"), ("custom_add", "PolynomialFunction"),
        ("custom_rot", "LinearFunction"), ("custom_flex", "MultiplierFunction"),
        ("custom_flex", "NaturalCubicSpline"), ("custom_add", "PiecewiseLinearFunction"),
    ]  # fmt: skip
    assert j.transform[1].function.to_dict()["coefficients"] == [0.3, -0.5, 0.9, 0.05]
    np.testing.assert_allclose(j.transform[1].axis, [0.6, 0, 0.8])
    assert j.transform[3].function.to_dict()["scale"] == 1.1
    assert j.transform[2].function.to_dict() == {
        "type": "LinearFunction", "slope": 0.8, "intercept": 0.1,
    }  # fmt: skip


def test_bodies_inertia_and_offset_frames():
    m = _read(ALL)
    pin = m.bodies[m.body_index("pin_body")]
    assert pin.mass == 2.5
    np.testing.assert_array_equal(pin.com, [0.01, -0.2, 0.03])
    # OpenSim's <inertia>: Ixx Iyy Izz Ixy Ixz Iyz, the products as tensor entries
    np.testing.assert_array_equal(
        pin.inertia, [[0.12, 0.004, -0.002], [0.004, 0.03, 0.006], [-0.002, 0.006, 0.11]]
    )
    np.testing.assert_allclose(pin.position, [0.1, 1.2, -0.05])
    np.testing.assert_allclose(pin.rotation, _xyz(0.2, 0.1, -0.3), atol=1e-15)
    np.testing.assert_allclose(pin.child_position, [0.01, 0.05, 0.02])
    np.testing.assert_allclose(pin.child_rotation, _xyz(-0.1, 0.25, 0.05), atol=1e-15)
    # the slider's parent frame is an offset of an offset frame of pin_body
    slider = m.bodies[m.body_index("slider_body")]
    site_R, site_p = _xyz(0.3, -0.2, 0.4), np.array([0.02, -0.1, 0.05])
    np.testing.assert_allclose(slider.rotation, site_R @ _xyz(0, 0, 0.5), atol=1e-15)
    np.testing.assert_allclose(slider.position, site_p + site_R @ [0, -0.2, 0], atol=1e-15)


def test_body_pose_composes_parent_joint_and_child_frames():
    m = _read(ALL)
    q = np.zeros(m.nq)
    q[m.coordinate_names.index("pin_q")] = 0.7
    kin = forward_kinematics(m, q)
    i = m.body_index("pin_body")
    Rz = _xyz(0, 0, 0.7)
    P_R, P_p = _xyz(0.2, 0.1, -0.3), np.array([0.1, 1.2, -0.05])
    C_R, C_p = _xyz(-0.1, 0.25, 0.05), np.array([0.01, 0.05, 0.02])
    R = P_R @ Rz @ C_R.T
    p = P_p - R @ C_p
    np.testing.assert_allclose(kin.rotations[i], R, atol=1e-14)
    np.testing.assert_allclose(kin.positions[i], p, atol=1e-14)


def test_markers_on_bodies_and_offset_frames():
    m = _read(ALL)
    pin = m.bodies[m.body_index("pin_body")]
    np.testing.assert_array_equal(pin.markers["m_pin"], [0.02, -0.3, 0.04])
    site_R, site_p = _xyz(0.3, -0.2, 0.4), np.array([0.02, -0.1, 0.05])
    np.testing.assert_allclose(pin.markers["m_site"], site_p + site_R @ [0.05, 0.01, -0.02])
    # a marker on a joint's offset frame (itself on the site frame)
    off_R = site_R @ _xyz(0, 0, 0.5)
    off_p = site_p + site_R @ [0, -0.2, 0]
    np.testing.assert_allclose(pin.markers["m_joint_frame"], off_p + off_R @ [0.01, 0.02, 0.03])
    assert sum(len(b.markers) for b in m.bodies) == 12


def test_coordinates_table_and_limits():
    m = _read(ALL)
    t = osim_coordinates(m)
    assert list(t.index[:2]) == ["pin_q", "free_rx"]
    row = t.loc["pin_q"]
    assert (row.range_min, row.range_max, row.default_value, row.clamped) == (-2, 2, 0.1, True)
    assert t.loc["free_ty", "default_value"] == 1.0
    assert t.loc["slider_q", "motion_type"] == "translational"
    # OpenSim's rule: the first axis using a coordinate decides (see the peer test)
    assert t.loc[["custom_flex", "custom_add", "custom_rot"], "motion_type"].tolist() == [
        "rotational", "coupled", "coupled",
    ]  # fmt: skip
    assert t.loc["universal_q1", "range_min"] == -10.0  # OpenSim's default range
    # only clamped coordinates bound the coordinates (ahbm IK, like OpenSim IK)
    assert m.bodies[m.body_index("pin_body")].joint.limits == {"pin_q": [-2.0, 2.0]}
    assert m.bodies[m.body_index("slider_body")].joint.limits is None
    # records=True: the same rows as plain dicts (types included), no DataFrame
    for model in (m, _read(LEGACY)):
        rows = osim_coordinates(model, records=True)
        assert rows == osim_coordinates(model).reset_index().to_dict("records")
        assert {type(v) for r in rows for v in r.values()} == {str, float, bool}


def test_coordinate_coupler_becomes_a_coupling_constraint():
    m = _read(ALL)
    (c,) = m.constraints
    assert isinstance(c, CoordinateCoupling)
    assert (c.coordinate, c.driver, c.name) == ("coupled_q", "custom_flex", "coupler")
    f = SimmSpline([-2, -1, 0, 0.5, 2], [0.4, 0.1, -0.2, 0.3, 0.1])
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, size=(5, m.nq))
    qd = rng.normal(size=(5, m.nv))
    k, d = m.coordinate_names.index("coupled_q"), m.coordinate_names.index("custom_flex")
    cs = ConstraintSet(m.constraints)
    np.testing.assert_allclose(cs.position(m, q)[:, 0], q[:, k] - f(q[:, d]), atol=1e-15)
    np.testing.assert_allclose(
        cs.gamma(m, q, qd)[:, 0], f.value(q[:, d], 2) * qd[:, d] ** 2, atol=1e-13
    )
    # Jacobian against central differences of the residual
    G = cs.jacobian(m, q)[:, 0]
    h = 1e-6
    for j in (k, d):
        dq = np.zeros(m.nq)
        dq[j] = h
        fd = (cs.position(m, q + dq) - cs.position(m, q - dq))[:, 0] / (2 * h)
        np.testing.assert_allclose(G[:, j], fd, atol=1e-8)


def test_kept_data_forces_wrap_objects_contact_geometry():
    m = _read(ALL)
    items = m.section("opensim")
    assert all(isinstance(it, OsimItem) for it in items)
    kinds = [it.kind for it in items]
    assert kinds.count("joint") == 10 and kinds.count("coordinate") == 23
    (muscle,) = [it.data for it in items if it.kind == "force"]
    assert muscle["type"] == "Thelen2003Muscle" and muscle["max_isometric_force"] == 1000
    origin, insertion = muscle["GeometryPath"]["PathPointSet"]["objects"]
    site_R, site_p = _xyz(0.3, -0.2, 0.4), np.array([0.02, -0.1, 0.05])
    assert origin["body"] == "pin_body" and origin["socket_parent_frame"] == "/bodyset/pin_body"
    np.testing.assert_allclose(origin["location"], site_p + site_R @ [0.01, 0.02, 0.03])
    assert insertion["body"] == "custom_body" and insertion["location"] == [0.02, -0.1, 0.01]
    (wrap,) = [it.data for it in items if it.kind == "wrap_object"]
    assert wrap["body"] == "pin_body" and wrap["type"] == "WrapCylinder"
    assert wrap["translation"] == [0.01, -0.3, 0.02] and wrap["quadrant"] == "+x"
    floor, heel = [it.data for it in items if it.kind == "contact_geometry"]
    assert floor["type"] == "ContactHalfSpace" and floor["body"] == "ground"
    assert heel["radius"] == 0.03 and heel["body"] == "pin_body"
    np.testing.assert_allclose(heel["location"], site_p + site_R @ [0.01, -0.02, 0])
    np.testing.assert_allclose(_xyz(*heel["orientation"]), site_R, atol=1e-15)
    # items are values: changing a copy does not change the model
    muscle["max_isometric_force"] = 1.0
    assert [it.data for it in items if it.kind == "force"][0]["max_isometric_force"] == 1000


def test_subject01_reads_without_warnings():
    if not SUBJECT01.exists():
        pytest.skip("shared subject01.osim is absent")
    m = _read(SUBJECT01)
    assert m.nq == m.nv == 10 and m.n_bodies == 12
    assert m.coordinate_names[:3] == ["pelvis_tilt", "pelvis_tx", "pelvis_ty"]
    knee = m.bodies[m.body_index("tibia_r")].joint
    assert knee.type == "custom"
    assert knee.transform[3].function.to_dict()["type"] == "MultiplierFunction"
    assert len([it for it in m.section("opensim") if it.kind == "force"]) == 18
    assert sum(len(b.markers) for b in m.bodies) == 39


# ----------------------------------------------------------------------------
# OpenSim 3.x files
# ----------------------------------------------------------------------------


def test_legacy_file_reads_like_the_same_model_in_4x(tmp_path):
    m = _read(LEGACY)
    assert m.coordinate_names == ["hip_flexion", "knee_angle", "ankle_x", "ankle_y", "ankle_z"]
    thigh = m.bodies[m.body_index("thigh")]
    np.testing.assert_allclose(thigh.position, [0, 1, 0])
    np.testing.assert_allclose(thigh.rotation, _xyz(0.1, 0, 0.2), atol=1e-15)
    np.testing.assert_allclose(thigh.child_position, [0.01, 0.02, 0])
    np.testing.assert_allclose(thigh.child_rotation, _xyz(0, 0.2, 0), atol=1e-15)
    assert thigh.inertia[0, 1] == 0.002 and thigh.inertia[1, 2] == 0.004
    assert m.bodies[m.body_index("foot")].joint.sequence == "XYZ"
    assert m.bodies[m.body_index("shank")].joint.limits == {"knee_angle": [-2.0944, 0.17]}
    (c,) = m.constraints
    assert (c.relation, c.ratio, c.offset) == (None, -0.5, 0.1)
    assert m.bodies[m.body_index("foot")].markers["toe"].tolist() == [0.15, -0.03, 0]
    (muscle,) = [it.data for it in m.section("opensim") if it.kind == "force"]
    points = muscle["GeometryPath"]["PathPointSet"]["objects"]
    assert [(p["body"], p["socket_parent_frame"]) for p in points] == [
        ("thigh", "/bodyset/thigh"), ("shank", "/bodyset/shank"),
    ]  # fmt: skip
    # the 4.x file written from it reads back as the same model
    assert _same_model(m, _read(write_osim(m, tmp_path / "legacy_as_4x.osim")))


def _many_digits(text: str) -> str:
    """legacy33.osim with 10-11 significant digits in what OpenSim converts through text."""
    for a, b in [
        ("<inertia_xx>0.11</inertia_xx>", "<inertia_xx>0.1123456789</inertia_xx>"),
        ("<inertia_xy>0.002</inertia_xy>", "<inertia_xy>0.00212345678</inertia_xy>"),
        ("<location_in_parent> 0 1 0<", "<location_in_parent> 0 1.123456789123 0<"),
        ("<orientation_in_parent> 0.1 0 0.2<", "<orientation_in_parent> 0.1234567891 0 0.2<"),
        ("<location> 0.01 0.02 0<", "<location> 0.0123456789 0.02 0<"),
        ("<orientation> 0 0.2 0<", "<orientation> 0 0.2345678912 0<"),
        ("<mass>7.5</mass>", "<mass>7.51234567891</mass>"),
        ("<mass_center> 0 -0.17 0.01<", "<mass_center> 0 -0.171234567891 0.01<"),
        ("<location> 0.0 -0.4 0.05<", "<location> 0.0123456789 -0.4 0.05<"),
    ]:
        assert text.count(a) == 1, a
        text = text.replace(a, b)
    return text


def test_legacy_file_numbers_are_converted_as_opensim_4_converts_them(tmp_path):
    """OpenSim 4 updates a 3.x/2.x file's inertia elements and joint locations/orientations
    through text of 6 significant digits (humerus inertia_xx 0.01227763 -> 0.0122776 in
    MoBL_ARMS); masses, COMs and markers stay exact. Checked against OpenSim 4.6 in
    tests/peers/test_opensim_model.py::test_legacy_numbers_match_opensim."""
    m = _read(_write(tmp_path, _many_digits(LEGACY.read_text())))
    thigh = m.bodies[m.body_index("thigh")]
    assert thigh.inertia[0, 0] == 0.112346 and thigh.inertia[0, 1] == 0.00212346
    assert thigh.inertia[1, 1] == 0.03  # short numbers are kept
    np.testing.assert_array_equal(thigh.position, [0, 1.12346, 0])
    np.testing.assert_allclose(thigh.rotation, _xyz(0.123457, 0, 0.2), atol=1e-15, rtol=0)
    np.testing.assert_array_equal(thigh.child_position, [0.0123457, 0.02, 0])
    np.testing.assert_allclose(thigh.child_rotation, _xyz(0, 0.234568, 0), atol=1e-15, rtol=0)
    assert thigh.mass == 7.51234567891 and thigh.com[1] == -0.171234567891
    (knee_lat,) = [b.markers["knee_lat"] for b in m.bodies if "knee_lat" in b.markers]
    assert knee_lat[0] == 0.0123456789
    # a 4.x file is read as it is written: no rounding
    text = write_osim(m, tmp_path / "as_4x.osim").read_text()
    assert text.count("0.112346 ") == 1
    m4 = _read(_write(tmp_path, text.replace("0.112346 ", "0.1123456789 "), "b.osim"))
    assert m4.bodies[m4.body_index("thigh")].inertia[0, 0] == 0.1123456789


def _legacy_forces(text: str) -> str:
    """legacy33.osim's muscle disabled, with min_control 0 and a conditional path point."""
    old = '<Thelen2003Muscle name="vasti">\n'
    assert text.count(old) == 1
    text = text.replace(old, old + "<isDisabled>true</isDisabled><min_control>0</min_control>\n")
    old = '<PathPoint name="insertion">'
    assert text.count(old) == 1
    return text.replace(
        old,
        '<ConditionalPathPoint name="mid"><location> 0.04 -0.3 0.01</location><body>thigh</body>'
        "<coordinate>knee_angle</coordinate><range>-2 0</range></ConditionalPathPoint>" + old,
    )


def test_legacy_forces_are_updated_as_opensim_4_updates_them(tmp_path):
    """3.x forces become valid 4.x forces: isDisabled -> appliesForce, a Thelen2003Muscle's
    min_control raised to minimum_activation (0.01), a conditional path point's coordinate
    -> socket_coordinate; the written 4.x file keeps them (checked in OpenSim 4.6 by
    tests/peers/test_opensim_model.py::test_written_legacy_forces_open_in_opensim)."""
    m = _read(_write(tmp_path, _legacy_forces(LEGACY.read_text())))
    (muscle,) = [it.data for it in m.section("opensim") if it.kind == "force"]
    assert muscle["appliesForce"] is False and "isDisabled" not in muscle
    assert muscle["min_control"] == 0.01
    points = muscle["GeometryPath"]["PathPointSet"]["objects"]
    (mid,) = [p for p in points if p["name"] == "mid"]
    knee = m.bodies[m.body_index("shank")].joint.name
    assert mid["socket_coordinate"] == f"/jointset/{knee}/knee_angle"
    text = write_osim(m, tmp_path / "as_4x.osim").read_text()
    assert "<appliesForce>false</appliesForce>" in text and "isDisabled" not in text
    assert f"<socket_coordinate>/jointset/{knee}/knee_angle</socket_coordinate>" in text
    # a 4.x file is not updated: its min_control stays as written
    m4 = _read(_write(tmp_path, text.replace("<min_control>0.01<", "<min_control>0.02<"), "b.osim"))
    (muscle4,) = [it.data for it in m4.section("opensim") if it.kind == "force"]
    assert muscle4["min_control"] == 0.02


# ----------------------------------------------------------------------------
# locked coordinates, unsupported elements, errors
# ----------------------------------------------------------------------------


def test_locked_coordinate_is_fixed_at_its_default_with_a_note(tmp_path):
    text = _doc(PENDULUM.replace("LOCK", "<locked>true</locked><default_value>0.3</default_value>"))
    with pytest.warns(AhbmWarning) as rec:
        m = read_osim(_write(tmp_path, text))
    assert len(rec) == 1 and "locked coordinates are fixed" in str(rec[0].message)
    assert "angle = 0.3" in str(rec[0].message)
    assert m.nq == 0 and m.coordinate_names == []
    kin = forward_kinematics(m, np.zeros(0))
    np.testing.assert_allclose(kin.rotations[0], _xyz(0, 0, 0.3), atol=1e-15)
    t = osim_coordinates(m)
    assert t.loc["angle", "locked"] and t.loc["angle", "default_value"] == 0.3
    # written back as a WeldJoint whose parent offset frame holds the fixed pose
    text = write_osim(m, tmp_path / "w.osim").read_text()
    assert '<WeldJoint name="pin">' in text and "CustomJoint" not in text
    m2 = _read(tmp_path / "w.osim")
    assert m2.bodies[0].joint.type == "fixed"
    np.testing.assert_allclose(
        forward_kinematics(m2, np.zeros(0)).rotations[0], _xyz(0, 0, 0.3), atol=1e-15
    )


def test_non_physical_inertia_is_replaced_by_the_nearest_valid_one(tmp_path):
    """OpenSim accepts inertias that break I1 + I2 >= I3 (Rajagopal's toes: 1e-4, 2e-4,
    1e-3); read_osim keeps the principal axes and moves the moments by t (1, 1, -1),
    the Frobenius-nearest valid tensor, and says so."""
    R = _xyz(0.3, -0.7, 1.1)
    given = R @ np.diag([1e-4, 2e-4, 1e-3]) @ R.T
    v = [given[0, 0], given[1, 1], given[2, 2], given[0, 1], given[0, 2], given[1, 2]]
    text = _doc(
        PENDULUM.replace("LOCK", "").replace(
            "<inertia>0.1 0.01 0.1 0 0 0</inertia>",
            "<inertia>" + " ".join(repr(float(x)) for x in v) + "</inertia>",
        )
    )
    with pytest.warns(AhbmWarning) as rec:
        m = read_osim(_write(tmp_path, text))
    msg = str(rec[0].message)
    assert len(rec) == 1 and "triangle inequality" in msg and "rod [0.0001, 0.0002, 0.001]" in msg
    assert "[0.000333333, 0.000433333, 0.000766667]" in msg
    used = np.asarray(m.bodies[0].inertia)
    # independent check: closed-form projection onto I1 + I2 = I3 in eigenvalue space
    t = (1e-3 - 1e-4 - 2e-4) / 3
    np.testing.assert_allclose(used, R @ np.diag([1e-4 + t, 2e-4 + t, 1e-3 - t]) @ R.T, atol=1e-18)
    w = np.linalg.eigvalsh(used)
    assert abs(w[0] + w[1] - w[2]) < 1e-15
    # nearest: any other valid tensor with these axes on the boundary is farther
    for s in np.linspace(-1, 1, 9) * t:
        other = R @ np.diag([1e-4 + t + s, 2e-4 + t - s, 1e-3 - t]) @ R.T
        assert np.linalg.norm(other - given) >= np.linalg.norm(used - given) - 1e-18
    # a valid inertia (a thin rod: equality) is kept as it is, without a warning
    rod = PENDULUM.replace("LOCK", "").replace("0.1 0.01 0.1 0 0 0", "0.1 0 0.1 0 0 0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = read_osim(_write(tmp_path, _doc(rod), "rod.osim"))
    np.testing.assert_array_equal(m.bodies[0].inertia, np.diag([0.1, 0, 0.1]))
    # a violation within Model.add_body's tolerance (1e-10 kg m^2 here) is kept as well
    tiny = rod.replace("0.1 0 0.1 0 0 0", "0.1 0 0.10000000005 0 0 0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = read_osim(_write(tmp_path, _doc(tiny), "tiny.osim"))
    np.testing.assert_array_equal(m.bodies[0].inertia, np.diag([0.1, 0, 0.10000000005]))


CHAIN = """<Model name="chain"><BodySet><objects>
<Body name="a"><mass>1</mass><inertia>0.1 0.1 0.1 0 0 0</inertia></Body>
<Body name="b"><mass>1</mass><inertia>0.1 0.1 0.1 0 0 0</inertia></Body>
<Body name="c"><mass>1</mass><inertia>0.1 0.1 0.1 0 0 0</inertia></Body>
</objects></BodySet><JointSet><objects>
<PinJoint name="ja"><socket_parent_frame>/ground</socket_parent_frame>
<socket_child_frame>/bodyset/a</socket_child_frame>
<coordinates><Coordinate name="qa"><locked>true</locked><default_value>0.4</default_value>
</Coordinate></coordinates></PinJoint>
<PinJoint name="jb"><socket_parent_frame>/bodyset/a</socket_parent_frame>
<socket_child_frame>/bodyset/b</socket_child_frame>
<coordinates><Coordinate name="qb"><clamped>true</clamped><range>-1 1</range></Coordinate>
</coordinates></PinJoint>
<SliderJoint name="jc"><socket_parent_frame>/bodyset/b</socket_parent_frame>
<socket_child_frame>/bodyset/c</socket_child_frame>
<coordinates><Coordinate name="qc" /></coordinates></SliderJoint>
</objects></JointSet><ConstraintSet><objects>
<CoordinateCouplerConstraint name="b_of_a"><coupled_coordinates_function>
<LinearFunction><coefficients>2 0.1</coefficients></LinearFunction></coupled_coordinates_function>
<independent_coordinate_names>qa</independent_coordinate_names>
<dependent_coordinate_name>qb</dependent_coordinate_name></CoordinateCouplerConstraint>
<CoordinateCouplerConstraint name="c_of_b"><coupled_coordinates_function>
<SimmSpline><x>0 0.5 1 1.5</x><y>0 0.01 0.03 0.02</y></SimmSpline></coupled_coordinates_function>
<independent_coordinate_names>qb</independent_coordinate_names>
<dependent_coordinate_name>qc</dependent_coordinate_name></CoordinateCouplerConstraint>
</objects></ConstraintSet></Model>"""


def test_coordinates_coupled_to_a_locked_coordinate_are_fixed(tmp_path):
    """qa locked at 0.4 -> qb = 2 * 0.4 + 0.1 = 0.9 -> qc = spline(0.9): all three fixed,
    the couplers represented by the fixed poses (OpenSim assembles them there; checked in
    tests/peers/test_opensim_model.py::test_coupler_of_a_locked_coordinate_matches_opensim)."""
    with pytest.warns(AhbmWarning) as rec:
        m = read_osim(_write(tmp_path, _doc(CHAIN)))
    msg = str(rec[0].message)
    assert len(rec) == 1 and "not represented" not in msg
    assert "qb = 0.9 (b_of_a, qa = 0.4)" in msg and "qc = " in msg
    assert m.nq == 0 and not m.constraints
    qc = float(SimmSpline([0, 0.5, 1, 1.5], [0, 0.01, 0.03, 0.02])(0.9))
    kin = forward_kinematics(m, np.zeros(0))
    np.testing.assert_allclose(kin.rotations[1], _xyz(0, 0, 1.3), atol=1e-15)
    np.testing.assert_allclose(kin.positions[2], kin.rotations[2] @ [qc, 0, 0], atol=1e-15)
    t = osim_coordinates(m)
    assert set(t.index) == {"qa", "qb", "qc"}
    assert t.loc["qa", "locked"] and not t.loc["qb", "locked"]


def test_unsupported_elements_are_listed_in_one_warning(tmp_path):
    text = _doc(
        PENDULUM.replace("LOCK", "")
        .replace(
            "</objects></JointSet>",
            """<EllipsoidJoint name="scap">
<socket_parent_frame>/bodyset/rod</socket_parent_frame>
<socket_child_frame>/bodyset/blade</socket_child_frame></EllipsoidJoint>
</objects></JointSet>
<ConstraintSet><objects><WeldConstraint name="weld_c" /></objects></ConstraintSet>
<ProbeSet><objects><JointInternalPowerProbe name="probe" /></objects></ProbeSet>""",
        )
        .replace(
            "</objects></BodySet>",
            """<Body name="blade"><mass>1</mass><inertia>0.01 0.01 0.01 0 0 0</inertia></Body>
</objects></BodySet>""",
        )
    )
    with pytest.warns(AhbmWarning) as rec:
        m = read_osim(_write(tmp_path, text))
    assert len(rec) == 1
    msg = str(rec[0].message)
    for name in ("EllipsoidJoint name='scap'", "WeldConstraint", "JointInternalPowerProbe"):
        assert name in msg
    assert "welded" in msg and "line" in msg
    assert m.bodies[m.body_index("blade")].joint.type == "fixed"


@pytest.mark.parametrize(
    "bad, match",
    [
        (PENDULUM.replace("<mass>2</mass>", "<mass>heavy</mass>"), r"<mass> at line 5"),
        (PENDULUM.replace("0 -0.5 0", "0 -0.5"), r"<mass_center> at line 5: expected 3"),
        (PENDULUM.replace("/bodyset/rod</socket_child", "/bodyset/bar</socket_child"),
         r"<socket_child_frame> at line 11: names the frame '/bodyset/bar'"),
        (PENDULUM.replace("<socket_parent_frame>/ground</socket_parent_frame>", ""),
         r"<PinJoint name='pin'> at line 9: has no <socket_parent_frame>"),
        (PENDULUM.replace("<range>-3 3</range>", "<range>-3 nan</range>"),
         r"<range> at line 12: expected finite"),
    ],
)  # fmt: skip
def test_malformed_elements_name_element_and_line(tmp_path, bad, match):
    with pytest.raises(FileFormatError, match=match):
        read_osim(_write(tmp_path, _doc(bad.replace("LOCK", ""))))


def test_malformed_xml_and_other_files(tmp_path):
    with pytest.raises(FileFormatError, match=r"malformed XML at line 3"):
        read_osim(_write(tmp_path, '<?xml version="1.0"?>\n<OpenSimDocument>\n<Model></Mod>'))
    with pytest.raises(FileFormatError, match="not <OpenSimDocument>"):
        read_osim(_write(tmp_path, "<Model/>"))
    with pytest.raises(FileFormatError, match="cannot read"):
        read_osim(tmp_path / "missing.osim")
    old = '<OpenSimDocument Version="10500"><Model name="m">\n<DynamicsEngine><SimbodyEngine/>'
    with pytest.raises(FileFormatError, match=r"<DynamicsEngine> at line 2: OpenSim 1.x/2.x"):
        read_osim(_write(tmp_path, old + "</DynamicsEngine></Model></OpenSimDocument>"))


@pytest.mark.parametrize(
    "payload",
    [
        '<!DOCTYPE m [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>',
        '<!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
        '<!DOCTYPE m SYSTEM "http://example.com/evil.dtd">',
    ],
)
def test_doctype_and_entities_are_refused(tmp_path, payload):
    text = (
        f'<?xml version="1.0"?>\n{payload}\n<OpenSimDocument><Model name="&b;"/></OpenSimDocument>'
    )
    with pytest.raises(FileFormatError, match=r"line 2: the file declares a DOCTYPE"):
        read_osim(_write(tmp_path, text))


# ----------------------------------------------------------------------------
# writing, round trips
# ----------------------------------------------------------------------------


def _same_model(a: Model, b: Model, atol=1e-12) -> bool:
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d.pop("opensim", None)
    return _close(da, db, atol)


def _close(x, y, atol) -> bool:
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_close(x[k], y[k], atol) for k in x)
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(_close(u, v, atol) for u, v in zip(x, y, strict=True))
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return abs(x - y) <= atol * max(1.0, abs(x))
    return x == y


@pytest.mark.parametrize("path", [ALL, LEGACY, SUBJECT01], ids=lambda p: p.stem)
def test_round_trip_osim_and_model_file(tmp_path, path):
    if not path.exists():
        pytest.skip(f"{path} is absent")
    m = _read(path)
    back = _read(write_osim(m, tmp_path / "back.osim"))
    assert _same_model(m, back)
    assert [it.to_dict() for it in back.section("opensim")] == [
        it.to_dict() for it in m.section("opensim")
    ]
    # the JSON model file keeps everything, the OpenSim section too
    j = ahbm.load_model(json.loads(json.dumps(m.to_dict())))
    assert j.to_dict() == m.to_dict()


def test_write_osim_native_joint_types_round_trip(tmp_path):
    from ahbm.kinematics.configuration import random_model

    rng = np.random.default_rng(1)
    types = ("revolute", "prismatic", "universal", "euler", "fixed")
    m = random_model(7, rng=rng, joint_types=types, child_offsets=True)
    m.update_body(0, markers={"a": [0.1, 0.2, 0.3]})
    # OpenSim numbers bodies level by level from the ground: give the model that order
    d = m.to_dict()
    depth = {"ground": 0}
    for b in d["bodies"]:
        depth[b["name"]] = depth[b["parent"]] + 1
    d["bodies"].sort(key=lambda b: depth[b["name"]])
    m = ahbm.load_model(d)
    m.constraints = [CoordinateCoupling(m.coordinate_names[1], m.coordinate_names[0], ratio=2)]
    back = _read(write_osim(m, tmp_path / "native.osim"))
    assert _same_model(m, back)
    q = rng.normal(size=(4, m.nq))
    np.testing.assert_allclose(
        forward_kinematics(back, q).transforms, forward_kinematics(m, q).transforms, atol=1e-13
    )


def test_write_osim_refuses_what_opensim_cannot_express(tmp_path):
    m = Model()
    m.add_body("a", "ground", "spherical", mass=1.0)
    with pytest.raises(ModelError, match="quaternion"):
        write_osim(m, tmp_path / "x.osim")
    assert not (tmp_path / "x.osim").exists()
    m = Model()
    m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0)
    m.add_body("b", "a", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0)
    m.constraints = [CoordinateCoupling("b", "a", relation=lambda x: x**2)]
    with pytest.raises(ModelError, match="cannot express exactly"):
        write_osim(m, tmp_path / "x.osim")


# ----------------------------------------------------------------------------
# OpenSim's speeds
# ----------------------------------------------------------------------------


def test_speed_matrix_gives_the_angular_velocity_in_the_parent_frame():
    """For the ball joint, T qd = ω of the child in the parent offset frame (finite differences)."""
    m = _read(ALL)
    i = m.body_index("ball_body")
    parent = m.body_index("universal_body")
    rng = np.random.default_rng(2)
    q, qd = rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv)
    T = osim_speed_matrix(m, q)
    v = m.v_index[i]
    h = 1e-6

    def rel(qq):
        kin = forward_kinematics(m, qq)
        # rotation of the joint's moving frame relative to the parent offset frame
        body = m.bodies[i]
        F = kin.rotations[parent] @ body.rotation
        M = kin.rotations[i] @ body.child_rotation
        return F.T @ M

    Rp, Rm = rel(q + h * qd), rel(q - h * qd)
    W = (Rp - Rm) / (2 * h) @ rel(q).T
    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
    np.testing.assert_allclose((T @ qd)[v : v + 3], omega, rtol=1e-7, atol=1e-8)
    # identity for every other joint
    mask = np.ones(m.nv, bool)
    for b in ("ball_body", "free_body"):
        k = m.v_index[m.body_index(b)]
        mask[k : k + 3] = False
    np.testing.assert_array_equal(T[np.ix_(mask, mask)], np.eye(mask.sum()))
    assert osim_speed_matrix(m, np.zeros((2, 3, m.nq))).shape == (2, 3, m.nv, m.nv)


def test_marker_positions_follow_from_point_position():
    m = _read(ALL)
    q = np.random.default_rng(5).uniform(-1, 1, m.nq)
    b = m.bodies[m.body_index("custom_body")]
    kin = forward_kinematics(m, q)
    i = m.body_index("custom_body")
    want = kin.positions[i] + kin.rotations[i] @ b.markers["m_custom"]
    np.testing.assert_allclose(point_position(m, q, "custom_body", b.markers["m_custom"]), want)


def test_bodies_and_joints_in_model_components(tmp_path):
    """Models built in code keep bodies and joints in <components> (OpenSim's ModelFactory)."""
    text = _doc(
        """<Model name="sliding_mass"><components>
<Body name="body"><mass>1</mass><mass_center>0 0 0</mass_center><inertia>0 0 0 0 0 0</inertia>
</Body>
<SliderJoint name="slider"><socket_parent_frame>/ground</socket_parent_frame>
<socket_child_frame>/body</socket_child_frame>
<coordinates><Coordinate name="position"></Coordinate></coordinates></SliderJoint>
<CoordinateActuator name="actuator"><coordinate>position</coordinate></CoordinateActuator>
<PrescribedController name="controller" />
</components><Ground name="ground" /></Model>"""
    )
    with pytest.warns(AhbmWarning, match=r"1 element\(s\) not represented: <PrescribedController"):
        m = read_osim(_write(tmp_path, text))
    assert m.coordinate_names == ["position"] and m.bodies[0].joint.type == "prismatic"
    (force,) = [it.data for it in m.section("opensim") if it.kind == "force"]
    assert force == {"type": "CoordinateActuator", "name": "actuator", "coordinate": "position"}


def test_model_file_with_the_opensim_section_loads_after_import_ahbm(tmp_path):
    """`import ahbm` alone reads the "opensim" section (registered lazily, no pandas import)."""
    import subprocess
    import sys

    m = _read(ALL)
    path = ahbm.save_model(m, tmp_path / "all.json")
    code = (
        "import sys, ahbm\n"
        "assert 'pandas' not in sys.modules\n"
        f"m = ahbm.load_model({str(path)!r})\n"
        "print(len(m.section('opensim')), m.section('opensim')[0].kind)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(len(m.section("opensim"))), "joint"]


def test_bad_arguments_name_the_argument(tmp_path):
    from ahbm.errors import DataError

    m = _read(LEGACY)
    with pytest.raises(DataError, match="`path`"):
        write_osim(m, None)
    with pytest.raises(DataError, match="`path`"):
        write_osim(m, tmp_path)  # a folder
    with pytest.raises(ModelError, match="expects a Model"):
        write_osim(tmp_path / "x.osim", m)
    with pytest.raises(DataError, match="`path`"):
        read_osim(None)
    with pytest.raises(DataError, match=r"`q` to have shape \(\.\.\., 5\)"):
        osim_speed_matrix(m, np.zeros(4))
    with pytest.raises(ModelError, match="expects a Model"):
        osim_coordinates("model.osim")


def test_relative_socket_paths(tmp_path):
    """Sockets relative to their component (``../../../bodyset/x`` from a joint's frame) name
    the same frames as absolute ones (OpenSim agrees: checked through the oracle)."""
    text = ALL.read_text()
    a, b = text.index("<JointSet"), text.index("</JointSet>")
    joints = text[a:b].replace("<socket_parent>/", "<socket_parent>../../../")
    m = _read(_write(tmp_path, text[:a] + joints + text[b:]))
    assert _same_model(m, _read(ALL))


def test_items_read_are_the_items_made_from_their_data():
    """read_osim's items take the reader's dicts over (JSON encoded on first use): they
    equal OsimItem.make of their data, survive pickle/deepcopy, and get() copies."""
    import copy
    import pickle

    m = _read(LEGACY)
    items = m.section("opensim")
    assert any(it.kind == "force" for it in items)
    fresh = _read(LEGACY).section("opensim")  # get() before anything encodes the items
    assert all(isinstance(it._src, dict) for it in fresh)
    keys = [list(it.to_dict()) for it in items]
    got = [{k: it.get(k) for k in ks if k != "kind"} for it, ks in zip(fresh, keys, strict=True)]
    assert got == [it.data for it in items]
    for it in items:
        made = OsimItem.make(it.kind, it.data)
        assert it == made and hash(it) == hash(made) and it.to_dict() == made.to_dict()
        assert it.get("name") == it.data.get("name") and it.get("nope", 5) == 5
        for key, value in it.data.items():
            assert it.get(key) == value
    force = next(it for it in items if it.kind == "force")
    key = next(k for k, v in force.data.items() if isinstance(v, (list, dict)) and v)
    force.get(key).clear()
    assert force.get(key) == force.data[key] and force.get(key)  # a copy was cleared
    bodies = [it.data.get("body") for it in items]
    for other in (
        pickle.loads(pickle.dumps(items)),
        copy.deepcopy(items),
        ahbm.load_model(m.to_dict()).section("opensim"),
    ):
        assert list(other) == list(items)
        assert [it._top_body() for it in other] == bodies


def test_kept_numbers_of_any_size_are_read(tmp_path):
    """A 400-digit integer in a force is kept exactly (it used to raise OverflowError);
    non-finite numbers stay text."""
    text = LEGACY.read_text()
    a = text.index("<max_isometric_force>")
    b = text.index("</max_isometric_force>", a)
    big = "1" * 400
    text = text[:a] + f"<max_isometric_force>{big}</max_isometric_force>" + text[b + 22 :]
    text = text.replace("<optimal_fiber_length>", "<optimal_fiber_length>1e999 ", 1)
    # the muscle cannot become a model.muscles item (no float holds the number): warned
    with pytest.warns(AhbmWarning, match="max_isometric_force .* is not a finite number"):
        m = read_osim(_write(tmp_path, text))
    force = next(it for it in m.section("opensim") if it.kind == "force")
    assert force.name not in [mu.name for mu in m.muscles]
    assert force.get("max_isometric_force") == int(big)
    assert force.data["optimal_fiber_length"].startswith("1e999 ")


def test_opensim_section_is_checked_against_the_model():
    m = _read(LEGACY)
    wrap = OsimItem.make("wrap_object", {"type": "WrapSphere", "name": "w", "body": "arm"})
    with pytest.raises(ModelError, match="body 'arm'"):
        m.set_section("opensim", [*m.section("opensim"), wrap])
    with pytest.raises(ModelError, match="holds OsimItem objects"):
        m.set_section("opensim", [{"kind": "force"}])
    d = m.to_dict()
    d["opensim"].append({"kind": "muscle", "type": "X"})
    with pytest.raises(ModelError, match="'kind' in"):
        ahbm.load_model(d)
    with pytest.raises(ModelError, match="JSON-able"):
        OsimItem.make("force", {"f": object()})


def test_read_osim_without_muscles_is_the_same_model_without_the_paths():
    leg = DATA / "muscles_leg.osim"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        full = read_osim(leg)
        bare = read_osim(leg, muscles=False)
    assert len(full.muscles) > 0 and len(full.wrap_objects) > 0
    assert tuple(bare.muscles) == () and tuple(bare.wrap_objects) == ()
    assert bare.coordinate_names == full.coordinate_names
    assert bare.body_names == full.body_names
    # the forces and wrap objects stay as data
    assert [i.kind for i in bare.section("opensim")] == [i.kind for i in full.section("opensim")]
    q = np.random.default_rng(3).uniform(-0.3, 0.3, size=(4, full.nq))
    for name in full.body_names:
        a = point_position(full, q, name, [0.1, 0.2, 0.3])
        b = point_position(bare, q, name, [0.1, 0.2, 0.3])
        np.testing.assert_array_equal(a, b)
    from ahbm.errors import DataError

    with pytest.raises(DataError, match="`muscles`"):
        read_osim(leg, muscles="no")
