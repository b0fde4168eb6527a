import numpy as np
import pytest

from ahbm.bsp import scale_model, segment_parameters
from ahbm.errors import AhbmWarning, DataError, ModelError

tree = pytest.importorskip("ahbm.kinematics.tree")
human15 = pytest.importorskip("ahbm.models.fifteen_segment").human15

HEIMAN_MAP = {
    "forearm_r": ["lower_arm_r", "hand_r"],
    "forearm_l": ["lower_arm_l", "hand_l"],
}


def _spatial_about_origin(m, c, inertia):
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    out = np.zeros((6, 6))
    out[:3, :3] = inertia + m * cx @ cx.T
    out[:3, 3:] = m * cx
    out[3:, :3] = m * cx.T
    out[3:, 3:] = m * np.eye(3)
    return out


def test_scale_human15_with_heiman():
    model = human15(height=1.79, mass=76.0)
    before = model.to_dict()
    scaled = scale_model(model, height=1.79, mass=76.0, table="heiman", segment_map=HEIMAN_MAP)
    assert model.to_dict() == before  # the input model is not modified
    assert scaled.total_mass == pytest.approx(76.0)
    thorax = scaled.bodies[scaled.body_index("thorax")]
    assert thorax.mass == pytest.approx(12.1296)  # Felis worked example (upper trunk)
    # thigh length taken from the model (hip to knee joint origin)
    i = scaled.body_index("thigh_r")
    knee = scaled.bodies[scaled.children[i][0]].position
    L = np.linalg.norm(knee)
    th = scaled.bodies[i]
    np.testing.assert_allclose(th.com, [0, 0, -0.4095 * L])
    np.testing.assert_allclose(
        np.diag(th.inertia), (np.array([0.329, 0.329, 0.149]) * L) ** 2 * 0.1416 * 76
    )


def test_merged_segments_spatial_inertia_adds_up():
    model = human15(height=1.8, mass=80.0)
    scaled = scale_model(
        model,
        height=1.8,
        mass=80.0,
        table="heiman",
        segment_map=HEIMAN_MAP,
        use_model_lengths=False,
    )
    p = segment_parameters("heiman", mass=80.0, height=1.8)
    fa, hand = p["lower_arm_r"], p["hand_r"]
    ref = _spatial_about_origin(fa.mass, fa.com, fa.inertia) + _spatial_about_origin(
        hand.mass, hand.com + [0, 0, -fa.length], hand.inertia
    )
    k = scaled.body_index("forearm_r")
    np.testing.assert_allclose(scaled.spatial_inertias[k], ref, atol=1e-12)


def test_frame_rotation_applied():
    model = human15()
    rot = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    a = scale_model(model, height=1.8, mass=75.0, table="heiman", segment_map=HEIMAN_MAP)
    b = scale_model(
        model,
        height=1.8,
        mass=75.0,
        table="heiman",
        segment_map=HEIMAN_MAP,
        frame_rotations={"pelvis": rot},
    )
    i = a.body_index("pelvis")
    np.testing.assert_allclose(b.bodies[i].inertia, rot @ a.bodies[i].inertia @ rot.T)
    np.testing.assert_allclose(b.bodies[i].com, rot @ a.bodies[i].com)
    j = a.body_index("thigh_r")
    np.testing.assert_allclose(b.bodies[j].inertia, a.bodies[j].inertia)


def test_name_matching_aliases_and_warnings():
    m = tree.Model("leg")
    m.add_body(
        "femur_r",
        "ground",
        {"type": "revolute", "axis": [0, 1, 0]},
        mass=1.0,
        com=[0, 0, 0],
        inertia=np.eye(3),
    )
    m.add_body(
        "tibia_r",
        "femur_r",
        {"type": "revolute", "axis": [0, 1, 0]},
        mass=1.0,
        com=[0, 0, 0],
        inertia=np.eye(3),
        position=[0, 0, -0.45],
    )
    m.add_body(
        "gadget",
        "tibia_r",
        {"type": "fixed"},
        mass=0.5,
        com=[0, 0, 0],
        inertia=np.eye(3) * 0.01,
        position=[0, 0, -0.4],
    )
    with pytest.warns(AhbmWarning, match="gadget"), pytest.warns(AhbmWarning, match="81.51 kg"):
        s = scale_model(m, height=1.741, mass=100.0, table="de_leva", sex="male")
    assert s.bodies[0].mass == pytest.approx(14.16)
    assert s.bodies[0].com[2] == pytest.approx(-0.4095 * 0.45)  # length from the model
    assert s.bodies[1].mass == pytest.approx(4.33)
    assert s.bodies[2].mass == 0.5  # unchanged


def test_scale_model_errors():
    model = human15()
    with pytest.raises(ModelError, match="not in model"):
        scale_model(model, height=1.8, mass=75, table="heiman", segment_map={"tail": "head"})
    with pytest.raises(DataError, match="not in table"):
        scale_model(model, height=1.8, mass=75, table="heiman", segment_map={"head": "skull"})
    with pytest.raises(ModelError, match="more than one body"):
        scale_model(model, height=1.8, mass=75, table="heiman", segment_map={"neck": "head"})
    with pytest.raises(DataError, match="rotation"):
        scale_model(
            model,
            height=1.8,
            mass=75,
            table="heiman",
            segment_map=HEIMAN_MAP,
            frame_rotations=np.ones((3, 3)),
        )


def test_scale_model_anthropometrics_are_keyword_only():
    with pytest.raises(TypeError):
        scale_model(human15(), 1.8, 75.0, "heiman", segment_map=HEIMAN_MAP)
