"""Scaling a model by segment scale factors (OpenSim's Scale tool rules), closed forms."""

import numpy as np
import pytest

from ahbm.bsp import (
    Measurement,
    measurement_scale_factors,
    scale_inertia,
    scale_segments,
    segment_scale_factors,
)
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.kinematics import forward_kinematics
from ahbm.kinematics.marker_model import marker_jacobians
from ahbm.kinematics.tree import Model


def _cylinder(m, r, length):
    """Inertia of a solid cylinder along z about its COM."""
    side = m * (length**2 / 12 + r**2 / 4)
    return np.diag([side, side, 0.5 * m * r**2])


_PRODUCTS = np.array([[0, 1e-3, 0], [1e-3, 0, 2e-4], [0, 2e-4, 0]])


def _leg():
    m = Model("leg")
    m.add_body(
        "pelvis", "ground", {"type": "free_euler", "sequence": "ZXY"},
        mass=10.0, com=[0.0, 0.02, 0.05], inertia=np.diag([0.1, 0.09, 0.08]),
        markers={"ASIS": [0.1, 0.12, 0.0], "PSIS": [-0.08, 0.05, 0.02]},
    )  # fmt: skip
    m.add_body(
        "thigh", "pelvis", {"type": "euler", "sequence": "YXZ"},
        position=[0.0, -0.08, -0.07], mass=8.0, com=[0.0, 0.0, -0.18],
        inertia=_cylinder(8.0, 0.06, 0.42) + _PRODUCTS,
        markers={"knee": [0.0, -0.05, -0.41], "thigh": [0.06, 0.0, -0.2]},
    )  # fmt: skip
    m.add_body(
        "shank", "thigh", {"type": "revolute", "axis": [0, 1, 0]},
        position=[0.0, 0.0, -0.42], mass=3.5, com=[0.0, 0.0, -0.2],
        inertia=_cylinder(3.5, 0.04, 0.4), markers={"ankle": [0.0, -0.04, -0.4]},
    )  # fmt: skip
    return m


def test_uniform_scaling_scales_every_length_and_the_inertia_by_s5():
    m = _leg()
    s = 1.13
    out = scale_segments(m, dict.fromkeys(m.body_names, s))
    rng = np.random.default_rng(0)
    q = rng.uniform(-0.6, 0.6, (5, m.nq))
    # a model scaled uniformly about the world origin: every marker at s times its place
    p0, _ = marker_jacobians(m, q)
    qs = q.copy()
    qs[:, :3] *= s  # the pelvis translation coordinates are lengths too (not scaled by the model)
    p1, _ = marker_jacobians(out, qs)
    np.testing.assert_allclose(p1, s * p0, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out.masses, s**3 * m.masses, rtol=1e-14)
    np.testing.assert_allclose(out.inertias, s**5 * m.inertias, rtol=1e-14)
    np.testing.assert_allclose(out.coms, s * m.coms, rtol=1e-14)
    assert m.bodies[1].position[2] == -0.07  # the input is not modified


def test_body_factors_scale_its_com_markers_and_its_childrens_joint_frames():
    m = _leg()
    f = np.array([1.1, 0.9, 1.3])
    out = scale_segments(m, {"thigh": f}, preserve_mass_distribution=True)
    np.testing.assert_allclose(out.bodies[1].com, f * m.bodies[1].com)
    np.testing.assert_allclose(out.bodies[1].markers["knee"], f * m.bodies[1].markers["knee"])
    np.testing.assert_allclose(out.bodies[2].position, f * m.bodies[2].position)
    np.testing.assert_array_equal(out.bodies[1].position, m.bodies[1].position)  # pelvis: 1
    np.testing.assert_array_equal(out.masses, m.masses)
    np.testing.assert_array_equal(out.inertias[2], m.inertias[2])
    np.testing.assert_array_equal(out.rotations, m.rotations)


def test_nonuniform_factors_rescale_a_cylinder_exactly():
    # equal x and y factors keep a cylinder a cylinder: r' = s r, L' = s_z L
    mass, r, length = 2.0, 0.05, 0.4
    sx, sz = 1.2, 0.8
    m1, i1 = scale_inertia(mass, _cylinder(mass, r, length), [sx, sx, sz])
    assert m1 == pytest.approx(mass * sx * sx * sz, rel=1e-15)
    np.testing.assert_allclose(i1, _cylinder(m1, sx * r, sz * length), rtol=1e-13)
    # mass kept: same geometry, old mass
    m2, i2 = scale_inertia(mass, _cylinder(mass, r, length), [sx, sx, sz], scale_mass=False)
    assert m2 == mass
    np.testing.assert_allclose(i2, _cylinder(mass, sx * r, sz * length), rtol=1e-13)


def test_nonuniform_factors_follow_the_cylinder_rule_with_products():
    # OpenSim's approximation written out: axis of the smallest moment, r'^2 = r^2 s_b s_c,
    # products scaled by s_i s_j and the volume factor
    inertia = np.array([[0.30, 0.01, -0.02], [0.01, 0.05, 0.003], [-0.02, 0.003, 0.31]])
    mass, s = 4.0, np.array([1.1, 0.7, 1.3])
    m1, i1 = scale_inertia(mass, inertia, s)
    k = s.prod()
    r2 = 2 * 0.05 / mass
    length2 = 12 * (0.30 - 0.25 * mass * r2) / mass
    l2, rr = length2 * s[1] ** 2, r2 * s[0] * s[2]
    side = m1 * (l2 / 12 + rr / 4)
    np.testing.assert_allclose(np.diag(i1), [side, 0.5 * m1 * rr, side], rtol=1e-13)
    np.testing.assert_allclose(i1[0, 1], 0.01 * s[0] * s[1] * k, rtol=1e-14)
    np.testing.assert_allclose(i1[0, 2], -0.02 * s[0] * s[2] * k, rtol=1e-14)
    np.testing.assert_allclose(i1[1, 2], 0.003 * s[1] * s[2] * k, rtol=1e-14)
    np.testing.assert_allclose(i1, i1.T)
    assert m1 == pytest.approx(mass * k, rel=1e-15)


def test_massless_body_gets_a_zero_inertia():
    m, inertia = scale_inertia(0.0, np.eye(3), [1.0, 2.0, 3.0])
    assert m == 0.0 and not inertia.any()


@pytest.mark.parametrize("preserve", [True, False])
def test_total_mass_is_reached_and_the_distribution_follows_the_option(preserve):
    m = _leg()
    f = {"pelvis": 1.05, "thigh": [1.2, 1.1, 1.3], "shank": 0.9}
    out = scale_segments(m, f, mass=70.0, preserve_mass_distribution=preserve)
    assert out.total_mass == pytest.approx(70.0, rel=1e-14)
    if preserve:
        np.testing.assert_allclose(out.masses / out.total_mass, m.masses / m.total_mass)
    else:
        vol = np.array([1.05**3, 1.2 * 1.1 * 1.3, 0.9**3])
        w = m.masses * vol
        np.testing.assert_allclose(out.masses, 70.0 * w / w.sum(), rtol=1e-14)
    # inertia follows the mass factor of the second step
    ref = scale_segments(m, f, preserve_mass_distribution=preserve)
    np.testing.assert_allclose(out.inertias, ref.inertias * (70.0 / ref.total_mass), rtol=1e-14)


def test_ground_factors_scale_the_root_joint_frame():
    m = Model()
    m.add_body("a", "ground", "fixed", position=[1.0, 2.0, 3.0], mass=1.0)
    out = scale_segments(m, {"ground": [2.0, 1.0, 0.5]})
    np.testing.assert_allclose(out.bodies[0].position, [2.0, 2.0, 1.5])


def test_measurement_factor_is_the_mean_ratio_of_trial_to_model_distances():
    m = _leg()
    q = np.zeros(m.nq)
    kin = forward_kinematics(m, q)
    names = ["ASIS", "PSIS", "knee", "thigh", "ankle"]
    p, _ = marker_jacobians(m, q, marker_names=names)
    rng = np.random.default_rng(3)
    # trial: the model markers stretched, with frame-to-frame noise
    X = np.repeat((1.07 * p)[None], 6, axis=0) + rng.normal(0, 1e-3, (6, 5, 3))
    meas = [
        Measurement("thigh", [("ASIS", "knee"), ("thigh", "knee")], {"thigh": "XYZ"}),
        Measurement("shank", [("knee", "ankle")], {"shank": "Y"}),
    ]
    out = measurement_scale_factors(m, X, meas, marker_names=names)

    def d(A, a, b):
        return np.linalg.norm(A[..., names.index(b), :] - A[..., names.index(a), :], axis=-1)

    ref = np.mean([d(X, "ASIS", "knee").mean() / d(p, "ASIS", "knee"),
                   d(X, "thigh", "knee").mean() / d(p, "thigh", "knee")])  # fmt: skip
    assert out["thigh"] == pytest.approx(ref, rel=1e-14)
    assert out["shank"] == pytest.approx(d(X, "knee", "ankle").mean() / d(p, "knee", "ankle"))
    res = segment_scale_factors(m, X, meas, marker_names=names)
    np.testing.assert_allclose(res.factors["thigh"], [ref] * 3, rtol=1e-14)
    np.testing.assert_allclose(res.factors["shank"], [1.0, out["shank"], 1.0])
    np.testing.assert_array_equal(res.factors["pelvis"], [1.0, 1.0, 1.0])
    assert res.pair_lengths["thigh"].shape == (2, 2)
    assert kin.positions.shape == (3, 3)


def test_scaling_order_later_steps_overwrite_earlier_ones():
    m = _leg()
    x = {"knee": np.array([[0.0, -0.05, -0.41]]), "ankle": np.array([[0.0, -0.09, -1.0]])}
    meas = [Measurement("shank", [("knee", "ankle")], {"shank": "XYZ", "thigh": "Z"})]
    manual = {"shank": [1.0, 2.0, 3.0]}
    a = segment_scale_factors(m, x, meas, manual=manual, order=["measurements", "manualScale"])
    b = segment_scale_factors(m, x, meas, manual=manual, order=["manual", "measurements"])
    np.testing.assert_array_equal(a.factors["shank"], [1.0, 2.0, 3.0])
    f = a.measurement_factors["shank"]
    np.testing.assert_allclose(b.factors["shank"], [f, f, f])
    np.testing.assert_allclose(a.factors["thigh"], [1.0, 1.0, f])


def test_a_measurement_with_missing_data_is_not_used():
    m = _leg()
    x = {"knee": np.array([[0.0, 0.0, 0.0], [np.nan] * 3]), "ankle": np.ones((2, 3))}
    meas = [Measurement("shank", [("knee", "ankle")], {"shank": "XYZ"})]
    with pytest.warns(AhbmWarning, match="not used"):
        res = segment_scale_factors(m, x, meas)
    assert np.isnan(res.measurement_factors["shank"])
    np.testing.assert_array_equal(res.factors["shank"], np.ones(3))


def test_bad_input_is_reported():
    m = _leg()
    with pytest.raises(ModelError, match="femur"):
        scale_segments(m, {"femur": 1.1})
    with pytest.raises(DataError, match="shape"):
        scale_segments(m, {"thigh": [1.0, 2.0]})
    with pytest.raises(DataError, match="mass"):
        scale_segments(m, {}, mass=-3.0)
    with pytest.raises(DataError, match="unknown step"):
        segment_scale_factors(m, order=["measure"])
    x = {"knee": np.zeros((1, 3)), "ankle": np.ones((1, 3))}
    with pytest.raises(DataError, match="'heel' is not on model"):
        measurement_scale_factors(m, x, [Measurement("s", [("knee", "heel")], {"shank": "X"})])
    with pytest.raises(DataError, match="'ASIS' is not in the static trial"):
        measurement_scale_factors(m, x, [Measurement("s", [("knee", "ASIS")], {"shank": "X"})])
    with pytest.raises(DataError, match="no static-trial"):
        segment_scale_factors(m, None, [Measurement("s", [("knee", "ankle")], {"shank": "X"})])
    with pytest.raises(DataError, match="letters X, Y, Z"):
        Measurement("s", [("a", "b")], {"shank": "XW"})
    with pytest.warns(AhbmWarning, match="femur"):
        segment_scale_factors(m, manual={"femur": 1.2})


def test_path_points_and_wrap_objects_of_the_opensim_section_move_with_their_bodies():
    from ahbm.opensim.osim_section import OSIM_SECTION, OsimItem

    m = _leg()
    spline = {"type": "SimmSpline", "x": [0.0, 1.0], "y": [0.1, 0.2]}
    muscle = {
        "type": "Muscle", "name": "m",
        "GeometryPath": {"PathPointSet": {"objects": [
            {"type": "PathPoint", "name": "p1", "body": "thigh", "location": [0.1, 0.2, 0.3]},
            {"type": "ConditionalPathPoint", "name": "p2", "body": "pelvis",
             "location": [0.1, 0.2, 0.3]},
            {"type": "MovingPathPoint", "name": "p3", "socket_parent_frame": "/bodyset/thigh",
             "x_location": [spline],
             "y_location": [{"type": "MultiplierFunction", "function": [spline], "scale": 2.0}]},
        ]}},
    }  # fmt: skip
    wrap = {"type": "WrapCylinder", "name": "w", "body": "thigh", "translation": [0.0, 0.1, 0.2]}
    m.set_section(
        OSIM_SECTION, [OsimItem.make("force", muscle), OsimItem.make("wrap_object", wrap)]
    )
    f = np.array([1.1, 0.9, 1.2])
    out = scale_segments(m, {"thigh": f})
    items = out.section(OSIM_SECTION)
    pts = items[0].data["GeometryPath"]["PathPointSet"]["objects"]
    np.testing.assert_allclose(pts[0]["location"], f * [0.1, 0.2, 0.3])
    assert pts[1]["location"] == [0.1, 0.2, 0.3]  # the pelvis is not scaled
    assert pts[2]["x_location"] == [{"type": "MultiplierFunction", "function": [spline],
                                     "scale": 1.1}]  # fmt: skip
    assert pts[2]["y_location"][0]["scale"] == pytest.approx(2.0 * 0.9, rel=1e-15)
    assert "z_location" not in pts[2]
    np.testing.assert_allclose(items[1].data["translation"], f * [0.0, 0.1, 0.2])
