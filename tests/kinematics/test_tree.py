"""Tests of ahbm.kinematics.tree: Model building, model files, validation,
configuration-space helpers and joint kinematics."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import ahbm
from ahbm.errors import DataError, FileFormatError, ModelError
from ahbm.kinematics import (
    Model,
    difference_q,
    forward_kinematics,
    integrate_q,
    load_model,
    neutral_q,
    random_model,
    random_q,
    save_model,
)
from ahbm.kinematics.joints import JOINT_TYPES

ALL_TYPES = tuple(JOINT_TYPES)


def jk(model, q, qd):
    """Joint kinematics of the root body 0 from the kinematic state, batch first.

    Returns parent_R_body, the origin, the motion subspace in body coordinates,
    the joint velocity S q̇ and its bias c_J (the root's acceleration at q̈ = 0).
    """
    kin = forward_kinematics(model, np.asarray(q, dtype=float), qd)
    R, p = kin.rotations[:, 0], kin.positions[:, 0]
    Sw = kin.world_columns[..., model.support_dofs[0]]  # (N, 6, k) at the world origin
    w = np.einsum("nji,njk->nik", R, Sw[:, :3])
    v = np.einsum("nji,njk->nik", R, Sw[:, 3:] + np.cross(Sw[:, :3], p[:, :, None], axis=1))
    S = np.concatenate([w, v], axis=1)
    if qd is None:
        return R, p, S, None, None
    return R, p, S, kin.velocities[:, 0], kin.bias_accelerations[:, 0]


def small_model():
    m = Model("small", gravity=[0, -9.81, 0])
    m.add_body(
        "pelvis",
        "ground",
        {"type": "free"},
        mass=10.0,
        com=[0, 0, 0.1],
        inertia=np.diag([0.1, 0.1, 0.05]),
        markers={"RASI": [0.1, -0.1, 0.0]},
        geometry={"shape": "box", "size": [0.2, 0.3, 0.1]},
    )
    m.add_body(
        "thigh_r",
        "pelvis",
        {"type": "euler", "sequence": "ZXY", "limits": {"lower": [-1, -1, -1], "upper": [2, 1, 1]}},
        position=[0, -0.08, 0],
        mass=8.9,
        com=[0, 0, -0.17],
        inertia=[[0.13, 0, 0], [0, 0.13, 0], [0, 0, 0.03]],
    )
    m.add_body(
        "shank_r",
        "thigh_r",
        {"type": "revolute", "axis": [0, 1, 0], "name": "knee_r"},
        position=[0, 0, -0.4],
        rotation=Rotation.from_euler("z", 0.3).as_matrix(),
        mass=3.5,
        com=[0, 0, -0.2],
        inertia=np.diag([0.05, 0.05, 0.005]),
    )
    m.add_body("shoe_r", "shank_r", "fixed", position=[0, 0, -0.42], mass=0.5)
    return m


def test_model_structure():
    m = small_model()
    assert m.n_bodies == 4
    assert m.nq == 7 + 3 + 1 and m.nv == 6 + 3 + 1
    assert list(m.parent) == [-1, 0, 1, 2]
    assert list(m.q_index) == [0, 7, 10, 11]
    assert list(m.v_index) == [0, 6, 9, 10]
    assert m.body_names == ["pelvis", "thigh_r", "shank_r", "shoe_r"]
    assert m.coordinate_names[:7] == [
        f"pelvis_{s}" for s in ("tx", "ty", "tz", "qx", "qy", "qz", "qw")
    ]
    assert m.coordinate_names[7:] == ["thigh_r_rz", "thigh_r_rx", "thigh_r_ry", "knee_r"]
    assert len(m.velocity_names) == m.nv
    assert m.total_mass == pytest.approx(22.9)
    assert m.body_index("shank_r") == 2 and m.body_index(1) == 1
    np.testing.assert_array_equal(neutral_q(m)[:7], [0, 0, 0, 0, 0, 0, 1])


@pytest.mark.parametrize(
    ("jtype", "extra", "nq", "nv"),
    [
        ("fixed", {}, 0, 0),
        ("revolute", {"axis": [1, 0, 0]}, 1, 1),
        ("prismatic", {"axis": [0, 0, 1]}, 1, 1),
        ("universal", {"sequence": "XY"}, 2, 2),
        ("euler", {"sequence": "ZXZ"}, 3, 3),
        ("spherical", {}, 4, 3),
        ("free", {}, 7, 6),
        ("free_euler", {"sequence": "ZYX"}, 6, 6),
        ("planar", {}, 3, 3),
    ],
)
def test_joint_sizes(jtype, extra, nq, nv):
    m = Model()
    m.add_body("a", "ground", dict(type=jtype, **extra), mass=1.0, inertia=np.eye(3))
    assert (m.nq, m.nv) == (nq, nv)
    assert len(m.coordinate_names) == nq


def test_json_round_trip(tmp_path):
    m = small_model()
    path = save_model(m, tmp_path / "model.json")
    assert os.listdir(tmp_path) == ["model.json"]  # no temp file left behind
    data = json.loads(path.read_text())
    assert data["format"] == "ahbm-model" and data["version"] == 1
    m2 = load_model(path)
    assert m2.to_dict() == m.to_dict()
    assert m2.bodies[1].joint.limits == {"lower": [-1, -1, -1], "upper": [2, 1, 1]}
    assert m2.bodies[0].geometry == {"shape": "box", "size": [0.2, 0.3, 0.1]}
    np.testing.assert_array_equal(m2.bodies[0].markers["RASI"], [0.1, -0.1, 0.0])
    # also from the package top level and from a dict
    assert ahbm.load_model(data).to_dict() == m.to_dict()
    np.testing.assert_array_equal(m2.spatial_inertias, m.spatial_inertias)


def test_issue_example_file(tmp_path):
    text = """{"format": "ahbm-model", "version": 1, "name": "leg", "gravity": [0, 0, -9.81],
     "bodies": [
       {"name": "pelvis", "parent": "ground", "joint": {"type": "free"}, "mass": 11.0,
        "com": [0, 0, 0.05], "inertia": [[0.1,0,0],[0,0.1,0],[0,0,0.1]]},
       {"name": "thigh_r", "parent": "pelvis",
        "joint": {"type": "revolute", "axis": [0, 0, 1]},
        "origin": {"position": [0, -0.08, 0], "rotation": [[1,0,0],[0,1,0],[0,0,1]]},
        "mass": 8.9, "com": [0, -0.17, 0],
        "inertia": [[0.13,0,0],[0,0.03,0],[0,0,0.13]]}
     ]}"""
    p = tmp_path / "leg.json"
    p.write_text(text)
    m = load_model(p)
    assert m.nq == 8 and m.nv == 7 and m.name == "leg"


def _base_dict():
    return {
        "format": "ahbm-model",
        "version": 1,
        "name": "bad",
        "bodies": [
            {"name": "a", "parent": "ground", "joint": {"type": "revolute", "axis": [0, 0, 1]},
             "mass": 1.0, "inertia": np.eye(3).tolist()},
            {"name": "b", "parent": "a", "joint": {"type": "euler", "sequence": "ZXY"},
             "mass": 1.0, "inertia": np.eye(3).tolist()},
        ],
    }  # fmt: skip


def _mutate(path, value):
    d = _base_dict()
    target = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return d


@pytest.mark.parametrize(
    ("path", "value", "error", "match"),
    [
        (("bodies", 1, "parent"), "nope", ModelError, "unknown parent 'nope'"),
        (("bodies", 1, "parent"), "b", ModelError, "names itself as parent"),
        (("bodies", 0, "parent"), "b", ModelError, "cycle"),
        (("bodies", 1, "name"), "a", ModelError, "duplicate body name 'a'"),
        (("bodies", 1, "mass"), -1.0, ModelError, "body 'b': mass"),
        (("bodies", 1, "inertia"), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], ModelError, "symmetric"),
        (("bodies", 1, "inertia"), [[1, 0, 0], [0, -1, 0], [0, 0, 1]], ModelError, "not positive"),
        (("bodies", 1, "inertia"), [[1, 0, 0], [0, 1, 0], [0, 0, 3]], ModelError, "triangle"),
        (("bodies", 1, "origin"), {"rotation": [[1, 0, 0], [0, 2, 0], [0, 0, 1]]}, ModelError,
         "body 'b': origin rotation is not a proper orthonormal"),
        (("bodies", 1, "joint"), {"type": "hinge"}, ModelError, "'b': unknown joint type 'hinge'"),
        (("bodies", 0, "joint"), {"type": "revolute", "axis": [0, 0, 2]}, ModelError, "unit"),
        (("bodies", 0, "joint"), {"type": "revolute"}, ModelError, "needs an 'axis'"),
        (("bodies", 1, "joint"), {"type": "euler", "sequence": "ZZX"}, ModelError, "sequence"),
        (("bodies", 1, "joint"), {"type": "euler", "sequence": "zxy"}, ModelError,
         "'zxy' is not uppercase.*'ZXY'"),
        (("bodies", 1, "joint"), {"type": "euler", "sequence": "ZXY", "order": 1}, ModelError,
         r"joint has unknown fields \['order'\]"),
        (("bodies", 1, "origin"), {"position": [0, 0, 0], "offset": 1}, ModelError,
         r"'origin' has unknown fields \['offset'\]"),
        (("extra",), 1, ModelError, "unknown top-level entry 'extra'"),
        (("bodies", 1, "com"), [0, 0], ModelError, "body 'b': com"),
        (("bodies", 1, "colour"), "red", ModelError, "unknown fields"),
        (("format",), "other", FileFormatError, "format"),
        (("version",), 2, FileFormatError, "version"),
    ],
)  # fmt: skip
def test_validation_errors(path, value, error, match):
    with pytest.raises(error, match=match):
        load_model(_mutate(path, value))


def test_parent_listed_after_child():
    d = _base_dict()
    d["bodies"] = d["bodies"][::-1]
    with pytest.raises(ModelError, match="listed before its parent 'a'"):
        load_model(d)


def test_bad_files(tmp_path):
    with pytest.raises(FileFormatError, match="cannot read model file"):
        load_model(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(FileFormatError, match="not valid JSON"):
        load_model(bad)
    with pytest.raises(FileFormatError, match="folder does not exist"):
        save_model(small_model(), tmp_path / "nope" / "m.json")
    with pytest.raises(ModelError, match="unknown body 'head'"):
        small_model().body_index("head")


@pytest.mark.parametrize("seed", range(4))
def test_integrate_difference_round_trip(seed):
    rng = np.random.default_rng(seed)
    m = random_model(8, rng=rng, joint_types=ALL_TYPES)
    q0 = random_q(m, rng=rng, size=5)
    v = rng.normal(size=(5, m.nv)) * 0.5
    q1 = integrate_q(m, q0, v, 0.7)
    np.testing.assert_allclose(difference_q(m, q0, q1), 0.7 * v, atol=1e-10)
    np.testing.assert_allclose(integrate_q(m, q0, difference_q(m, q0, q1)), q1, atol=1e-10)


def test_integrate_spherical_against_scipy():
    rng = np.random.default_rng(3)
    m = Model()
    m.add_body("a", "ground", "free", mass=1.0, inertia=np.eye(3))
    q = random_q(m, rng=rng, size=10)
    v = rng.normal(size=(10, 6))
    dt = 0.3
    q1 = integrate_q(m, q, v, dt)
    ref = (Rotation.from_quat(q[:, 3:]) * Rotation.from_rotvec(v[:, 3:] * dt)).as_quat()
    sign = np.sign(np.sum(ref * q1[:, 3:], axis=1))[:, None]
    np.testing.assert_allclose(q1[:, 3:], sign * ref, atol=1e-12)
    np.testing.assert_allclose(q1[:, :3], q[:, :3] + v[:, :3] * dt, atol=1e-12)


@pytest.mark.parametrize("seq", ["ZYX", "XYZ", "ZXZ", "YXY"])
def test_euler_joint_rotation_matches_scipy(seq):
    rng = np.random.default_rng(5)
    m = Model()
    m.add_body("a", "ground", {"type": "euler", "sequence": seq}, mass=1.0, inertia=np.eye(3))
    q = rng.normal(size=(6, 3))
    R, p, S, vJ, cJ = jk(m, q, rng.normal(size=(6, 3)))
    np.testing.assert_allclose(R, Rotation.from_euler(seq, q).as_matrix(), atol=1e-12)


@pytest.mark.parametrize(
    "jtype", ["euler", "universal", "free_euler", "planar", "free", "spherical"]
)
def test_joint_velocity_and_bias_by_finite_differences(jtype):
    """S(q) q̇ is the body velocity of the joint, c_J = (d/dt S) q̇ (apparent derivative)."""
    rng = np.random.default_rng(11)
    m = Model()
    joint = {"type": jtype}
    if jtype in ("euler", "free_euler"):
        joint["sequence"] = "ZXY"
    if jtype == "universal":
        joint["sequence"] = "YZ"
    m.add_body("a", "ground", joint, mass=1.0, inertia=np.eye(3))
    q = random_q(m, rng=rng, size=1)
    qd = rng.normal(size=(1, m.nv))
    h = 1e-6
    R, p, S, vJ, cJ = jk(m, q, qd)
    qp = integrate_q(m, q, qd, h)
    qm = integrate_q(m, q, qd, -h)
    Rp, pp, Sp, *_ = jk(m, qp, None)
    Rm, pm, Sm, *_ = jk(m, qm, None)
    # angular velocity in the body frame: skew(ω) = Rᵀ Ṙ; origin velocity in body frame
    Rdot = (Rp - Rm) / (2 * h)
    W = R[0].T @ Rdot[0]
    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
    vel = R[0].T @ ((pp - pm)[0] / (2 * h))
    np.testing.assert_allclose(vJ[0], np.r_[omega, vel], atol=1e-7)
    Sdot = np.broadcast_to(Sp, (1,) + Sp.shape[-2:]) - np.broadcast_to(Sm, (1,) + Sm.shape[-2:])
    c_fd = (Sdot / (2 * h))[0] @ qd[0]
    c = np.zeros(6) if cJ is None else cJ[0]
    np.testing.assert_allclose(c, c_fd, atol=1e-6)


def test_add_body_errors():
    m = Model()
    with pytest.raises(ModelError, match="reserved"):
        m.add_body("ground", "ground", "fixed")
    with pytest.raises(ModelError, match="parent index 3 out of range"):
        m.add_body("a", 3, "fixed")
    with pytest.raises(ModelError, match="joint must be a dict"):
        m.add_body("a", "ground", 5)
    with pytest.raises(ModelError, match="coordinates"):
        m.add_body(
            "a", "ground", {"type": "revolute", "axis": [0, 0, 1], "coordinates": ["x", "y"]}
        )


def test_bad_arrays():
    m = small_model()
    with pytest.raises(DataError, match=r"Expected `q` to have shape \(\.\.\., 11\)"):
        integrate_q(m, np.zeros(10), np.zeros(10))
    q = neutral_q(m)
    q[3:7] = 0
    from ahbm.kinematics import forward_kinematics

    with pytest.raises(DataError, match="quaternion of joint 'pelvis'"):
        forward_kinematics(m, q)
    with pytest.raises(DataError, match="non-finite"):
        forward_kinematics(m, np.full(m.nq, np.nan))


@pytest.mark.parametrize(
    ("jtype", "seq"), [("universal", "yx"), ("euler", "zXy"), ("free_euler", "xyz")]
)
def test_lowercase_joint_sequences_are_rejected(jtype, seq):
    """Lowercase means extrinsic in scipy and ahbm.kinematics.rotations; joints are intrinsic."""
    m = Model()
    with pytest.raises(ModelError, match="uppercase"):
        m.add_body("a", "ground", {"type": jtype, "sequence": seq}, mass=1.0)
    m.add_body("a", "ground", {"type": jtype, "sequence": seq.upper()}, mass=1.0)
    assert m.bodies[0].joint.sequence == seq.upper()
