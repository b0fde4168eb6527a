"""Denavit–Hartenberg models: FK of the built model against the product of DH matrices."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ahbm.errors import DataError, ModelError
from ahbm.kinematics import forward_kinematics
from ahbm.kinematics.dh import DHRow, dh_model, dh_transform


def _standard(theta, d, a, alpha):
    """Chung (2009) eq. 2.5, written out element by element."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array(
        [
            [ct, -ca * st, sa * st, a * ct],
            [st, ca * ct, -sa * ct, a * st],
            [0.0, sa, ca, d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def _modified(theta, d, a, alpha):
    """Craig (2005) eq. 3.6, written out element by element."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array(
        [
            [ct, -st, 0.0, a],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


_REF = {"standard": _standard, "modified": _modified}


def _table(rng, n):
    joints = ["revolute", "prismatic", "revolute", "revolute", "prismatic", "revolute"]
    return [
        DHRow(
            f"r{k}",
            theta=rng.uniform(-3, 3),
            d=rng.normal(),
            a=rng.normal(),
            alpha=rng.uniform(-3, 3),
            joint=joints[k % len(joints)],
        )  # fmt: skip
        for k in range(n)
    ]


def _chain_pose(rows, qk, conv):
    """0_T_n of a serial table at coordinates qk (one per row), by the DH product."""
    T, out = np.eye(4), []
    for r, q in zip(rows, qk):
        th = r.theta + (q if r.joint == "revolute" else 0.0)
        d = r.d + (q if r.joint == "prismatic" else 0.0)
        T = T @ _REF[conv](th, d, r.a, r.alpha)
        out.append(T)
    return out


@pytest.mark.parametrize("conv", ["standard", "modified"])
def test_dh_transform_matches_written_out_matrices(conv):
    rng = np.random.default_rng(1)
    p = rng.normal(size=(20, 4))
    T = dh_transform(*p.T, convention=conv)
    assert T.shape == (20, 4, 4)
    for k in range(20):
        np.testing.assert_allclose(T[k], _REF[conv](*p[k]), atol=1e-14)


@pytest.mark.parametrize("conv", ["standard", "modified"])
def test_fk_equals_product_of_dh_matrices(conv):
    rng = np.random.default_rng(2)
    rows = _table(rng, 7)
    model = dh_model(rows, convention=conv)
    assert model.nq == model.nv == 7
    q = rng.uniform(-2, 2, size=(25, 7))
    kin = forward_kinematics(model, q)
    for n in range(25):
        for k, T in enumerate(_chain_pose(rows, q[n], conv)):
            np.testing.assert_allclose(kin.transforms[n, k], T, atol=1e-12)


@pytest.mark.parametrize("conv", ["standard", "modified"])
def test_home_pose_offsets(conv):
    rng = np.random.default_rng(3)
    rows = _table(rng, 4)
    T = forward_kinematics(dh_model(rows, convention=conv), np.zeros(4)).transforms[-1]
    np.testing.assert_allclose(T, _chain_pose(rows, np.zeros(4), conv)[-1], atol=1e-12)


def test_two_link_planar_arm_closed_form():
    l1, l2 = 0.7, 0.45
    model = dh_model([(0.0, 0.0, l1, 0.0), (0.0, 0.0, l2, 0.0)])
    q = np.random.default_rng(4).uniform(-3, 3, size=(50, 2))
    T = forward_kinematics(model, q).transforms[:, -1]
    x = l1 * np.cos(q[:, 0]) + l2 * np.cos(q.sum(1))
    y = l1 * np.sin(q[:, 0]) + l2 * np.sin(q.sum(1))
    np.testing.assert_allclose(T[:, 0, 3], x, atol=1e-13)
    np.testing.assert_allclose(T[:, 1, 3], y, atol=1e-13)
    np.testing.assert_allclose(T[:, 2, 3], 0.0, atol=1e-13)
    np.testing.assert_allclose(np.arctan2(T[:, 1, 0], T[:, 0, 0]), np.angle(np.exp(1j * q.sum(1))))


@pytest.mark.parametrize("conv", ["standard", "modified"])
def test_branch_rows_share_one_coordinate(conv):
    """Chung's branch point: one row per child branch, one coordinate."""
    rng = np.random.default_rng(5)

    def r():
        return dict(theta=rng.uniform(-3, 3), d=rng.normal(), a=rng.normal(),
                    alpha=rng.uniform(-3, 3))  # fmt: skip

    trunk = dict(name="trunk", **r())
    common = r() if conv == "modified" else {}
    b1 = dict(name="to_arm", coordinate="q2", parent="trunk", **{**r(), **common})
    b2 = dict(name="to_head", coordinate="q2", parent="trunk", **{**r(), **common})
    if conv == "modified":
        b2.update(a=b1["a"], alpha=b1["alpha"])
    arm = dict(name="arm", parent="to_arm", **r())
    head = dict(name="head", parent="to_head", joint="prismatic", **r())
    model = dh_model([trunk, b1, b2, arm, head], convention=conv)
    assert model.nq == 4  # trunk, q2, arm, head
    assert model.coordinate_names == ["trunk", "q2", "arm", "head"]
    q = rng.uniform(-2, 2, size=(10, 4))
    kin = forward_kinematics(model, q)
    ref = _REF[conv]
    for n in range(10):
        t, q2, qa, qh = q[n]
        T1 = ref(trunk["theta"] + t, trunk["d"], trunk["a"], trunk["alpha"])
        Ta = T1 @ ref(b1["theta"] + q2, b1["d"], b1["a"], b1["alpha"])
        Th = T1 @ ref(b2["theta"] + q2, b2["d"], b2["a"], b2["alpha"])
        Tarm = Ta @ ref(arm["theta"] + qa, arm["d"], arm["a"], arm["alpha"])
        Thead = Th @ ref(head["theta"], head["d"] + qh, head["a"], head["alpha"])
        for k, T in enumerate([T1, Ta, Th, Tarm, Thead]):
            np.testing.assert_allclose(kin.transforms[n, k], T, atol=1e-12)


def test_fixed_row_base_and_inertia():
    base = np.eye(4)
    base[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # Y-up table in a Z-up world
    base[:3, 3] = [0.1, 0.2, 0.3]
    rows = [
        DHRow("a", a=0.5, mass=2.0, com=(-0.25, 0, 0), inertia=np.diag([0.01, 0.05, 0.05])),
        DHRow("tool", d=0.1, a=0.2, joint="fixed"),
    ]
    model = dh_model(rows, base=base, gravity=(0, 0, -9.81))
    assert model.nq == 1 and model.masses[0] == 2.0
    q = np.array([0.4])
    kin = forward_kinematics(model, q)
    np.testing.assert_allclose(kin.transforms[0], base @ _standard(0.4, 0, 0.5, 0), atol=1e-14)
    np.testing.assert_allclose(
        kin.transforms[1], base @ _standard(0.4, 0, 0.5, 0) @ _standard(0, 0.1, 0.2, 0), atol=1e-14
    )
    np.testing.assert_allclose(model.coms[0], [-0.25, 0, 0])


def test_limits_are_kept():
    model = dh_model([DHRow("k", limits=[-1.0, 2.0])])
    assert model.bodies[0].joint.limits == [-1.0, 2.0]


@pytest.mark.parametrize(
    "rows, kwargs, match",
    [
        ([], {}, "empty"),
        ("abc", {}, "sequence of DH rows"),
        ([(0, 0, 1)], {}, "four numbers"),
        ([{"name": "a", "lenght": 1.0}], {}, "unknown keys"),
        ([DHRow("a"), DHRow("a")], {}, "duplicate"),
        ([DHRow("a", parent="b")], {}, "unknown parent"),
        ([DHRow("a", joint="ball")], {}, "joint"),
        ([DHRow("a", theta=float("nan"))], {}, "finite"),
        ([DHRow("a", d="1")], {}, "real number"),
        ([DHRow("a", joint="fixed", coordinate="x")], {}, "no coordinate"),
        ([DHRow("a"), DHRow("b", parent="a"), DHRow("c", coordinate="b")], {}, "branch row"),
        ([DHRow("a"), DHRow("b", coordinate="a", joint="prismatic", parent="ground")], {},
         "branch row"),
        ([DHRow("a", a=1.0), DHRow("b", coordinate="a", parent="ground")],
         {"convention": "modified"}, "share the joint axis"),
        ([DHRow("a")], {"convention": "craig"}, "convention"),
        ([DHRow("a")], {"base": np.eye(3)}, "4x4"),
        ([DHRow("a")], {"base": np.diag([1, 1, -1, 1.0])}, "proper rotation"),
        ([DHRow("a", mass=-1.0)], {}, "mass"),
    ],
)  # fmt: skip
def test_bad_tables(rows, kwargs, match):
    with pytest.raises(ModelError, match=match):
        dh_model(rows, **kwargs)


def test_dh_transform_bad_input():
    with pytest.raises(DataError, match="theta"):
        dh_transform("x", 0, 0, 0)
    with pytest.raises(DataError, match="broadcast"):
        dh_transform(np.zeros(2), np.zeros(3), 0, 0)
    with pytest.raises(DataError, match="convention"):
        dh_transform(0, 0, 0, 0, convention="proximal")


def test_santos_example(tmp_path):
    """Chung's 55-DOF Santos skeleton (seed 003, Tables 2.1-2.4) from its DH table."""
    path = Path(__file__).resolve().parents[2] / "examples" / "santos_dh.py"
    spec = importlib.util.spec_from_file_location("ahbm_example_santos_dh", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    numbers = module.run(tmp_path)
    assert (tmp_path / "santos_dh.png").stat().st_size > 1000
    assert numbers["nq"] == 55  # 6 global + 49 body DOFs (Chung §2.3)
    assert numbers["n_rows"] == 59  # GR3 and Q12: three branch rows each
    assert numbers["total_mass"] == pytest.approx(78.75)
    # standing still: the feet carry the weight (two-part algorithm), nearly half each
    weight = 78.75 * 9.81
    total = numbers["standing_reaction_right"] + numbers["standing_reaction_left"]
    assert total == pytest.approx(weight, rel=1e-9)
    assert numbers["standing_reaction_right"] == pytest.approx(weight / 2, rel=0.05)
    model = module.santos_model()
    T = forward_kinematics(model, np.zeros(model.nq)).transforms
    pos = dict(zip(model.body_names, T[:, :3, 3], strict=True))
    # home pose: standing on the ground (ankles at height 0, pelvis at thigh + shank),
    # left-right symmetric legs, T-pose arms at the shoulder height
    assert pos["GT3"][2] == pytest.approx((38.2615 + 39.4626) / 100)
    np.testing.assert_allclose(pos["Q39"][2], 0.0, atol=1e-12)
    # the left shank L25 = 39.4625 cm is 1 µm shorter than the right L20 in Table 2.2
    np.testing.assert_allclose(pos["Q46"][2], 1e-6, atol=1e-12)
    np.testing.assert_allclose(pos["Q39"] * [1, -1, 1], pos["Q46"], atol=2e-6)
    np.testing.assert_allclose(pos["Q21"][2], pos["Q14"][2], atol=1e-12)
    assert pos["Q35"][2] > pos["Q12_head"][2] > pos["Q9"][2] > pos["GR3_spine"][2]
