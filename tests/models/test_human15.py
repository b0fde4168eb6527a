"""Tests of the 15-segment whole-body model."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import aba, crba, rnea
from ahbm.errors import ModelError
from ahbm.kinematics import (
    center_of_mass,
    load_model,
    neutral_q,
    point_position,
    random_q,
    save_model,
)
from ahbm.models import HUMAN15_PARAMETERS, human15


def test_structure():
    m = human15()
    assert m.n_bodies == 15 and (m.nq, m.nv) == (42, 38)
    assert len([b for b in m.bodies if b.parent >= 0]) == 14  # 14 joints between segments
    assert {b.joint.type for b in m.bodies} == {
        "free", "euler", "spherical", "revolute", "universal",
    }  # fmt: skip
    assert m.total_mass == pytest.approx(75.0, rel=1e-12)


def test_mass_fractions_sum_to_one():
    total = sum(p["mass"] * (2 if k in ("upper_arm", "forearm", "hand", "thigh", "shank", "foot")
                             else 1) for k, p in HUMAN15_PARAMETERS.items())  # fmt: skip
    assert total == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("height", "mass"), [(1.8, 75.0), (1.6, 55.0)])
def test_standing_posture(height, mass):
    m = human15(height=height, mass=mass)
    q = neutral_q(m)
    top = point_position(m, q, "head", m.bodies[m.body_index("head")].markers["vertex"])
    sole = point_position(m, q, "foot_r", m.bodies[m.body_index("foot_r")].markers["heel"])
    assert 0.95 * height < top[2] - sole[2] < 1.1 * height
    c = center_of_mass(m, q)
    assert abs(c[1]) < 1e-12  # left-right symmetric
    assert 0.5 * height < c[2] - sole[2] < 0.6 * height  # COM at about 55 % of height
    np.testing.assert_allclose(
        point_position(m, q, "foot_l", [0, 0, 0]) * [1, -1, 1],
        point_position(m, q, "foot_r", [0, 0, 0]),
        atol=1e-12,
    )
    assert m.total_mass == pytest.approx(mass)


def test_dynamics_identities(tmp_path):
    m = human15()
    rng = np.random.default_rng(8)
    q = random_q(m, rng=rng, size=3, scale=0.5)
    qd = rng.normal(size=(3, m.nv))
    qdd = rng.normal(size=(3, m.nv))
    np.testing.assert_allclose(aba(m, q, qd, rnea(m, q, qd, qdd)), qdd, atol=1e-8)
    assert np.linalg.eigvalsh(crba(m, q)).min() > 0
    m2 = load_model(save_model(m, tmp_path / "human15.json"))
    np.testing.assert_allclose(rnea(m2, q, qd, qdd), rnea(m, q, qd, qdd), rtol=1e-14)


def test_bad_parameters():
    with pytest.raises(ModelError, match="must be > 0"):
        human15(height=-1.0)
    with pytest.raises(ModelError, match="must be numbers"):
        human15(mass="heavy")
