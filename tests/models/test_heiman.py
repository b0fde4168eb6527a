"""Tests of the HeiMan-like parameterized whole-body model."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.bsp import segment_parameters
from ahbm.errors import ModelError
from ahbm.kinematics import center_of_mass, load_model, neutral_q, point_position, save_model
from ahbm.models.heiman import HEIMAN_WIDTHS, heiman_model


def test_structure_34_dof():
    m = heiman_model(height=1.79, mass=76.0)
    assert (m.n_bodies, m.nv) == (19, 34)
    assert heiman_model(root="free_euler").nq == 34
    types = {b.joint.name: b.joint.type for b in m.bodies}
    assert types["knee_r"] == types["elbow_l"] == "revolute"
    assert {types[j] for j in ("hip_r", "ankle_l", "lumbar", "shoulder_r", "head")} == {"euler"}
    assert {types[j] for j in ("thorax", "neck", "wrist_r", "inner_shoulder_l")} == {"fixed"}


def test_felis_worked_example():
    """Felis (2015): UpperTrunk of a 1.79 m, 76 kg subject: l = 0.17542 m, m = 12.1296 kg."""
    m = heiman_model(height=1.79, mass=76.0)
    ut = m.bodies[m.body_index("upper_trunk")]
    assert ut.mass == pytest.approx(12.1296, abs=1e-4)
    assert m.bodies[m.body_index("neck")].position[2] == pytest.approx(0.17542, abs=1e-5)
    assert ut.com[2] == pytest.approx(0.12281, abs=1e-5)


@pytest.mark.parametrize(("height", "mass"), [(1.79, 76.0), (1.60, 52.0)])
def test_scaling_and_symmetry(height, mass):
    m = heiman_model(height=height, mass=mass)
    assert m.total_mass == pytest.approx(mass, rel=1e-12)
    q = neutral_q(m)
    head = m.body_index("head")
    foot = m.body_index("foot_l")
    top = point_position(m, q, head, m.bodies[head].markers["vertex"])[2]
    sole = point_position(m, q, foot, m.bodies[foot].markers["heel"])[2]
    # stacked HeiMan length fractions (Felis 2015 Table 4.3)
    fractions = 0.0837 + 0.1238 + 0.0980 + 0.0638 + 0.1168 + 0.2425 + 0.2529 + 0.0468
    assert top - sole == pytest.approx(fractions * height, rel=1e-12)
    assert center_of_mass(m, q)[1] == pytest.approx(0.0, abs=1e-12)
    hip = m.bodies[m.body_index("thigh_l")].position
    assert hip[1] == pytest.approx(HEIMAN_WIDTHS["hip"] * height)
    p = segment_parameters("heiman", mass=mass, height=height)
    for body in ("thigh_r", "shank_l", "upper_arm_r", "lower_arm_l", "hand_r", "head"):
        assert m.bodies[m.body_index(body)].mass == pytest.approx(p[body].mass)


def test_json_round_trip(tmp_path):
    m = heiman_model(height=1.7, mass=65.0)
    back = load_model(save_model(m, tmp_path / "heiman.json"))
    assert back.to_dict() == m.to_dict()
    rng = np.random.default_rng(3)
    q = neutral_q(m)
    q[7:] = rng.normal(scale=0.3, size=m.nq - 7)
    np.testing.assert_allclose(center_of_mass(back, q), center_of_mass(m, q), atol=1e-15)


def test_bad_input():
    with pytest.raises(ModelError, match="root"):
        heiman_model(root="spherical")
    with pytest.raises(ModelError, match="height"):
        heiman_model(height=-1.0)


def test_heiman_model_anthropometrics_are_keyword_only():
    with pytest.raises(TypeError):
        heiman_model(1.79, 76.0)
