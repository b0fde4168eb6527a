"""Tests of the 15-segment whole-body impact model (AHBM §5.2.3)."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.bsp import segment_parameters
from ahbm.dynamics import Bushing, JointStop, simulate
from ahbm.dynamics.forces import total_generalized_force, total_power
from ahbm.errors import ModelError
from ahbm.kinematics import (
    center_of_mass,
    com_velocity,
    kinetic_energy,
    neutral_q,
    point_position,
    potential_energy,
)
from ahbm.models import human15
from ahbm.models.head_neck import half_sine
from ahbm.models.heiman import heiman_model
from ahbm.models.whole_body import chest_impact, joint_elements, whole_body_model


def _trapz(y, x):
    return float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)))


@pytest.mark.parametrize(("height", "mass", "sex"), [(1.8, 75.0, "male"), (1.65, 58.0, "female")])
def test_parameters_from_de_leva(height, mass, sex):
    m = whole_body_model(height=height, mass=mass, sex=sex)
    p = segment_parameters("de_leva_3trunk", mass=mass, height=height, sex=sex)
    assert m.total_mass == pytest.approx(mass, rel=2e-4)  # female fractions sum to 0.9999
    for body, seg in [("thigh_r", "thigh_r"), ("pelvis", "lower_trunk"), ("thorax", "upper_trunk")]:
        assert m.bodies[m.body_index(body)].mass == pytest.approx(p[seg].mass)
    fa = m.bodies[m.body_index("forearm_l")].mass
    assert fa == pytest.approx(p["forearm_l"].mass + p["hand_l"].mass)
    head_neck = m.bodies[m.body_index("head")].mass + m.bodies[m.body_index("neck")].mass
    assert head_neck == pytest.approx(p["head"].mass)


def test_male_model_matches_human15():
    """Same topology and geometry as human15; de Leva male masses equal its HeiMan ones."""
    a, b = whole_body_model(), human15()
    assert a.coordinate_names == b.coordinate_names
    np.testing.assert_allclose(a.positions, b.positions)
    np.testing.assert_allclose(a.masses, b.masses, rtol=1e-3)


def test_joint_elements():
    m = whole_body_model()
    els = joint_elements(m)
    assert sum(isinstance(e, Bushing) for e in els) == 3  # lower neck, shoulders
    assert sum(isinstance(e, JointStop) for e in els) == 2 * 1 + 2 * 1 + 3 + 3 + 3 + 2 * 3 + 2 * 2
    q = neutral_q(m)
    np.testing.assert_allclose(total_generalized_force(m, els, q, np.zeros(m.nv)), 0.0)
    # the knee spring hardens and the stop engages beyond the range of motion
    k = m.coordinate_names.index("knee_r")
    v = m.velocity_names.index("knee_r")
    q1 = q.copy()
    q1[k] = -0.3
    tau = total_generalized_force(m, els, q1, np.zeros(m.nv))[v]
    spring = 80.0 * (0.3 + 0.3**3 / 0.25)
    assert tau == pytest.approx(spring + 5e3 * 0.25**2, rel=1e-12)
    with pytest.raises(ModelError, match="'ankle_r' has 3 coordinates"):
        joint_elements(heiman_model())  # 3-DOF ankles, 2 ranges of motion
    with pytest.raises(ModelError, match="'head'"):
        joint_elements(heiman_model(), properties={"ankle": {"rom": None}})


def test_energy_balance_before_impact():
    """Passive model, no impact: T + V_gravity changes by the work of the joint elements."""
    m = whole_body_model()
    els = joint_elements(m)
    rng = np.random.default_rng(5)
    qd0 = np.zeros(m.nv)
    qd0[6:] = rng.normal(scale=1.0, size=m.nv - 6)
    t = np.linspace(0, 0.012, 241)
    r = simulate(m, (0, 0.012), neutral_q(m), qd0, forces=els, method="RK45", rtol=1e-8,
                 atol=1e-10, t_eval=t)  # fmt: skip
    energy = kinetic_energy(m, r.q, r.qd) + potential_energy(m, r.q)
    work = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(t) * (lambda p: p[1:] + p[:-1])(
        total_power(m, els, r.q, r.qd, t=t)))])  # fmt: skip
    exchanged = np.max(np.abs(work))
    assert exchanged > 0.1  # the elements do work (J)
    np.testing.assert_allclose(energy - energy[0], work, atol=2e-3 * exchanged)


def test_symmetric_response_to_symmetric_impact():
    m = whole_body_model()
    impact = chest_impact(m, peak=4000.0, duration=0.03, onset=0.0)
    t = np.linspace(0, 0.04, 41)
    r = simulate(m, (0, 0.04), neutral_q(m), np.zeros(m.nv), forces=[*joint_elements(m), impact],
                 method="RK45", rtol=1e-7, atol=1e-9, t_eval=t)  # fmt: skip
    mirror = np.array([1.0, -1.0, 1.0])
    for side_r, side_l, marker in [("forearm_r", "forearm_l", [0, 0, -0.4]),
                                   ("foot_r", "foot_l", [0.1, 0, -0.08])]:  # fmt: skip
        pr = point_position(m, r.q, side_r, marker)
        pl = point_position(m, r.q, side_l, marker)
        np.testing.assert_allclose(pr, pl * mirror, atol=1e-6)
    assert np.abs(center_of_mass(m, r.q)[:, 1]).max() < 1e-8
    names = m.coordinate_names
    for c in ("hip_r_ry", "knee_r", "elbow_r", "ankle_r_ry"):
        left = names.index(c.replace("_r", "_l", 1))
        np.testing.assert_allclose(r.q[:, names.index(c)], r.q[:, left], atol=1e-7)
    # the body is pushed backwards: the linear momentum equals the impulse
    impulse = 4000.0 * 0.03 * 2 / np.pi
    vx = com_velocity(m, r.q[-1], r.qd[-1])[0]
    assert vx == pytest.approx(-impulse / m.total_mass, rel=1e-5)


def test_half_sine():
    t = np.linspace(-0.01, 0.05, 6001)
    f = half_sine(t, peak=100.0, duration=0.03)
    assert f.max() == pytest.approx(100.0, rel=1e-6)
    assert _trapz(f, t) == pytest.approx(100.0 * 0.03 * 2 / np.pi, rel=1e-6)


def test_bad_input():
    with pytest.raises(ModelError, match="sex"):
        whole_body_model(sex="x")
    with pytest.raises(ModelError, match="height"):
        whole_body_model(height=-2.0)


def test_whole_body_model_anthropometrics_are_keyword_only():
    with pytest.raises(TypeError):
        whole_body_model(1.8, 75.0, "male")
