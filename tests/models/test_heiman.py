"""Tests of the HeiMan-like parameterized whole-body model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ahbm.bsp import segment_parameters
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.gait import GaitSettings, analyze_gait
from ahbm.gait.markersets import PLUG_IN_GAIT_MARKERS
from ahbm.io.trial import Trial
from ahbm.kinematics import (
    center_of_mass,
    fit_markers,
    forward_kinematics,
    load_model,
    model_markers,
    neutral_q,
    point_position,
    save_model,
)
from ahbm.kinematics.joint_centres import hip_joint_centre_davis
from ahbm.models.heiman import (
    HEIMAN_PLUG_IN_GAIT_MARKERS,
    HEIMAN_WIDTHS,
    heiman_model,
    heiman_plug_in_gait_measurements,
)


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
    sole = point_position(m, q, foot, m.bodies[foot].markers["heel_l"])[2]
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


# ----------------------------------------------------------------------------
# markers: unique names, the Plug-in Gait set, marker fitting, the gait pipeline
# ----------------------------------------------------------------------------


def _synthetic_markers(model, q):
    mk = model_markers(model)
    T = forward_kinematics(model, q).transforms[..., mk.bodies, :, :]
    return mk.names, np.einsum("...mij,mj->...mi", T[..., :3, :3], mk.local) + T[..., :3, 3]


def test_marker_names_unique_with_the_plug_in_gait_set():
    m = heiman_model(height=1.79, mass=76.0)
    names = model_markers(m).names  # raised ModelError when both feet had "heel" and "toe"
    assert len(names) == len(set(names)) == 45
    assert set(HEIMAN_PLUG_IN_GAIT_MARKERS) <= set(names)
    assert {"heel_r", "toe_r", "heel_l", "toe_l", "vertex"} <= set(names)
    assert set(PLUG_IN_GAIT_MARKERS) <= set(names)  # everything ahbm.gait requires
    foot = m.bodies[m.body_index("foot_r")].markers
    assert foot["heel_r"][2] == foot["toe_r"][2] == pytest.approx(-0.0468 * 1.79)
    assert foot["RHEE"][2] == pytest.approx(foot["RTOE"][2])  # same height above the sole


def test_plug_in_gait_placement_rules():
    H, r = 1.79, 0.007
    m = heiman_model(height=H, mass=76.0, marker_radius=r)
    d = heiman_plug_in_gait_measurements(height=H, mass=76.0, marker_radius=r)
    q = neutral_q(m)
    T = forward_kinematics(m, q).transforms

    def world(body, name):
        b = m.body_index(body)
        return point_position(m, q, b, m.bodies[b].markers[name])

    for side, P, lateral in (("r", "R", -1.0), ("l", "L", 1.0)):
        kjc = T[m.body_index(f"shank_{side}"), :3, 3]
        ajc = T[m.body_index(f"foot_{side}"), :3, 3]
        # knee and ankle markers on the flexion axes (world y here), at half width + r
        np.testing.assert_allclose(
            world(f"thigh_{side}", P + "KNE") - kjc,
            [0, lateral * (d["knee_width"] / 2 + r), 0],
            atol=1e-15,
        )
        np.testing.assert_allclose(
            world(f"shank_{side}", P + "ANK") - ajc,
            [0, lateral * (d["ankle_width"] / 2 + r), 0],
            atol=1e-15,
        )
        # Plug-in Gait's Davis regression from the ASIS lands on HeiMan's hip centre
        lasi, rasi = world("pelvis", "LASI"), world("pelvis", "RASI")
        assert np.linalg.norm(lasi - rasi) == pytest.approx(d["inter_asis_distance"], abs=1e-14)
        h = hip_joint_centre_davis(
            leg_length=d["leg_length"],
            inter_asis_distance=d["inter_asis_distance"],
            side="right" if side == "r" else "left",
            marker_radius=r,
        )
        mid = 0.5 * (lasi + rasi)
        hjc = mid + np.array([h[0], -h[2], h[1]])  # ISB pelvis axes -> x fwd, y left, z up
        np.testing.assert_allclose(hjc, T[m.body_index(f"thigh_{side}"), :3, 3], atol=1e-12)
        # the leg length is the one of these markers: ASIS to medial malleolus via the knee
        asis = lasi if side == "l" else rasi
        mm = ajc - [0, lateral * d["ankle_width"] / 2, 0]
        length = np.linalg.norm(asis - kjc) + np.linalg.norm(mm - kjc)
        assert length == pytest.approx(d["leg_length"], abs=1e-12)
    # the pelvis markers lie in a plane parallel to the pelvis x-y plane
    pelvis = m.bodies[m.body_index("pelvis")].markers
    assert np.ptp([pelvis[n][2] for n in ("LASI", "RASI", "LPSI", "RPSI", "SACR")]) == 0.0
    with pytest.raises(DataError, match="marker_radius"):
        heiman_model(marker_radius=-0.01)


@pytest.mark.parametrize("root", ["free_euler", "free"])
def test_fit_markers_recovers_a_random_pose(root):
    m = heiman_model(height=1.7, mass=65.0, root=root)
    rng = np.random.default_rng(12)
    q = neutral_q(m)
    if root == "free":
        q[:3] = [0.4, -0.3, 1.0]
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
        q[7:] = rng.normal(scale=0.4, size=m.nq - 7)
    else:
        q = rng.normal(scale=0.4, size=m.nq)
    names, x = _synthetic_markers(m, q)
    res = fit_markers(m, x[None], marker_names=names)
    assert res.converged.all() and res.rms[0] < 1e-9
    # the same pose: every body transform (an Euler joint may land on its other branch,
    # (a + π, π − b, c + π), the same rotation) ...
    T = forward_kinematics(m, q).transforms
    np.testing.assert_allclose(forward_kinematics(m, res.q[0]).transforms, T, atol=1e-8)
    if root == "free_euler":  # ... here the same angles, up to whole turns
        dq = res.q[0] - q
        dq[3:] = (dq[3:] + np.pi) % (2 * np.pi) - np.pi
        assert np.abs(dq).max() < 1e-8


def test_plug_in_gait_pipeline_gives_heimans_hip_and_knee_flexion():
    """An independent check: markers of a HeiMan walk through ahbm.gait's Plug-in Gait.

    The pipeline rebuilds the pelvis, thigh and shank frames from the markers
    alone (Davis hip centres, knee and ankle chords, Grood-Suntay angles). The
    markers are placed so that its frames are HeiMan's exactly, so what remains
    is the pipeline's low-pass filter: at 20 Hz on a motion whose highest
    harmonic is 1.8 Hz it changes the angles by < 1e-3 deg (measured 3e-4 deg;
    at the default 6 Hz: 0.015 deg hip, 0.06 deg knee) once its end transients
    (10 frames at each end) are left out. Tolerance 0.01 deg; the hip centres
    agree to 10 µm.
    """
    H, M, rate, stride, speed = 1.75, 70.0, 100.0, 1.1, 1.3
    m = heiman_model(root="free_euler", height=H, mass=M)
    d = heiman_plug_in_gait_measurements(height=H, mass=M)
    names = m.coordinate_names
    t = np.arange(int(3.3 * rate)) / rate
    w = 2 * np.pi / stride
    q = np.zeros((t.size, m.nq))

    def put(name, value):
        q[:, names.index(name)] = value

    put("pelvis_tx", speed * t)
    put("pelvis_ty", 0.02 * np.sin(w * t))
    put("pelvis_tz", 0.95 + 0.012 * np.cos(2 * w * t))
    put("pelvis_ry", 0.05 + 0.03 * np.sin(2 * w * t))
    put("pelvis_rx", 0.06 * np.sin(w * t))
    put("pelvis_rz", 0.08 * np.sin(w * t + 0.3))
    put("lumbar_rz", -0.06 * np.sin(w * t))
    for side, phase in (("r", 0.0), ("l", np.pi)):
        a = w * t + phase
        put(f"hip_{side}_ry", -(0.17 + 0.38 * np.cos(a) + 0.05 * np.sin(2 * a)))  # -flexion
        put(f"hip_{side}_rx", 0.05 * np.sin(a + 0.5))
        put(f"hip_{side}_rz", 0.08 * np.sin(a - 0.4))
        put(f"knee_{side}", 0.55 + 0.45 * np.cos(a + 2.0) + 0.12 * np.cos(2 * a))
        put(f"ankle_{side}_ry", 0.1 * np.sin(a + 1.0) + 0.05 * np.sin(2 * a))
        put(f"ankle_{side}_rx", 0.04 * np.sin(a))
        put(f"shoulder_{side}_ry", 0.3 * np.cos(a))
        put(f"elbow_{side}", 0.4 + 0.15 * np.cos(a))
    labels, x = _synthetic_markers(m, q)
    trial = Trial(
        points=x,
        point_labels=list(labels),
        point_rate=rate,
        point_units="m",
        subject={"name": "heiman", "mass": M, "height": H},
        source="HeiMan walk",
    )
    settings = GaitSettings(
        kinetics=False,
        cutoff=20.0,
        leg_length=d["leg_length"],
        knee_width=d["knee_width"],
        ankle_width=d["ankle_width"],
        marker_radius=d["marker_radius"],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)  # the gait checks of a synthetic walk
        result = analyze_gait(trial, mass=M, height=H, settings=settings)
    inner = slice(10, -10)
    T = forward_kinematics(m, q).transforms
    for side, P in (("r", "R"), ("l", "L")):
        hip = -q[inner, names.index(f"hip_{side}_ry")]
        knee = q[inner, names.index(f"knee_{side}")]
        assert np.degrees(np.abs(result.angles[P + "HipAngles"][inner, 0] - hip)).max() < 0.01
        assert np.degrees(np.abs(result.angles[P + "KneeAngles"][inner, 0] - knee)).max() < 0.01
        hjc = T[inner, m.body_index(f"thigh_{side}"), :3, 3]
        np.testing.assert_allclose(result.joint_centres[P + "HJC"][inner], hjc, atol=1e-5)
