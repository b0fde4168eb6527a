"""Tests of ahbm.dynamics.constraints: values, Jacobians and γ by finite differences,
model-file round trip, errors."""

import numpy as np
import pytest

from ahbm.dynamics import (
    CoordinateCoupling,
    OrientationConstraint,
    PlaneConstraint,
    PointConstraint,
    PrescribedCoordinate,
    UserConstraint,
)
from ahbm.dynamics.constraints import ConstraintSet, constraint_from_dict
from ahbm.errors import FileFormatError, ModelError
from ahbm.kinematics.configuration import integrate_q, random_model, random_q
from ahbm.kinematics.forward import forward_kinematics, point_position
from ahbm.kinematics.model_file import load_model, save_model
from ahbm.models import double_pendulum_3d


def _model():
    rng = np.random.default_rng(11)
    return random_model(
        5, rng=rng, joint_types=("revolute", "spherical", "universal", "free", "prismatic")
    )


def _random_state(model, seed):
    rng = np.random.default_rng(seed)
    return random_q(model, rng=rng), rng.normal(size=model.nv)


def _sets(model, q):
    kin = forward_kinematics(model, q)
    T = kin.transforms
    rel = T[0, :3, :3].T @ T[3, :3, :3]
    names = model.coordinate_names
    scalar = [n for n in names if not any(n.endswith(s) for s in ("_qx", "_qy", "_qz", "_qw"))]
    return {
        "point_ground": ConstraintSet([PointConstraint(2, [0.1, 0.2, 0.3], other_point=[1, 0, 0])]),
        "point_bodies": ConstraintSet(
            [PointConstraint(4, [0.3, 0, 0.1], other=1, other_point=[0, 0.2, 0], axes="xz")]
        ),
        "point_directions": ConstraintSet(
            [PointConstraint(3, [0, 0, 0.2], axes=[[1.0, 1.0, 0.0], [0.0, 0.3, 1.0]])]
        ),
        "plane": ConstraintSet([PlaneConstraint(4, [0.1, 0.1, 0.1], normal=[0.2, 0.1, 1.0])]),
        # orientation constraints evaluated on the manifold (g = 0)
        "orientation_bodies": ConstraintSet(
            [OrientationConstraint(3, other=0, rotation=rel, axes="xy")]
        ),
        "orientation_ground": ConstraintSet(
            [OrientationConstraint(2, rotation=T[2, :3, :3], axes="xyz")]
        ),
        "coupling_linear": ConstraintSet(
            [CoordinateCoupling(scalar[1], scalar[0], ratio=0.7, offset=0.1)]
        ),
        "coupling_table": ConstraintSet(
            [CoordinateCoupling(scalar[2], scalar[0], relation=[[-3, 1], [0, 0], [1, 2], [4, -1]])]
        ),
        "prescribed": ConstraintSet([PrescribedCoordinate(scalar[1], lambda t: np.sin(2 * t))]),
        "prescribed_table": ConstraintSet(
            [PrescribedCoordinate(scalar[0], [[0, 0], [1, 1], [2, 0.5], [3, 2]])]
        ),
        "user": ConstraintSet(
            [
                UserConstraint(
                    lambda t, q: np.array([np.sin(q[0]) * q[2] + t * q[1], q[5] ** 2]),
                    2,
                    rheonomic=True,
                )
            ]  # fmt: skip
        ),
    }


#: The keys of _sets, written out: building the sets at collection took 1.4 s
#: (test_cases_are_the_sets_keys checks that the two agree).
CASES = [
    "point_ground",
    "point_bodies",
    "point_directions",
    "plane",
    "orientation_bodies",
    "orientation_ground",
    "coupling_linear",
    "coupling_table",
    "prescribed",
    "prescribed_table",
    "user",
]


def test_cases_are_the_sets_keys():
    model = _model()
    assert list(_sets(model, random_q(model, rng=np.random.default_rng(0)))) == CASES


@pytest.mark.parametrize("case", CASES)
def test_jacobian_and_gamma_by_finite_differences(case):
    model = _model()
    q, qd = _random_state(model, 5)
    cs = _sets(model, q)[case]
    t, eps = 0.7, 1e-4

    def g_along(s):
        return cs.position(model, integrate_q(model, q, qd, s), t=t + s)

    terms = cs.assemble(model, q, qd, t=t)
    # d/ds g(t + s, q ⊕ s q̇) = G q̇ − ν
    dg = (g_along(eps) - g_along(-eps)) / (2 * eps)
    np.testing.assert_allclose(terms.G @ qd - terms.nu, dg, atol=1e-6)
    # d²/ds² g = −γ on a path with zero generalized acceleration
    d2g = (g_along(eps) - 2 * g_along(0.0) + g_along(-eps)) / eps**2
    np.testing.assert_allclose(-terms.gamma, d2g, atol=2e-4 * (1 + np.abs(d2g).max()))
    # separate methods agree with assemble
    np.testing.assert_allclose(cs.jacobian(model, q, t=t), terms.G)
    np.testing.assert_allclose(cs.gamma(model, q, qd, t=t), terms.gamma)


def test_batched_evaluation_matches_single():
    model = _model()
    rng = np.random.default_rng(3)
    q = random_q(model, rng=rng, size=(4,))
    qd = rng.normal(size=(4, model.nv))
    cs = _sets(model, q[0])["point_bodies"]
    cs.add(PlaneConstraint(2, [0, 0, 0]))
    G = cs.jacobian(model, q)
    gam = cs.gamma(model, q, qd)
    assert G.shape == (4, 3, model.nv)
    for k in range(4):
        np.testing.assert_allclose(G[k], cs.jacobian(model, q[k]))
        np.testing.assert_allclose(gam[k], cs.gamma(model, q[k], qd[k]))


def test_values():
    m = double_pendulum_3d()
    q = np.array([0.3, 0.1, -0.2, 0.4])
    tip = point_position(m, q, "pendulum2", [0, 0, -1])
    cs = ConstraintSet(
        [
            PointConstraint("pendulum2", [0, 0, -1], other_point=tip + [0.1, 0, 0], axes="xz"),
            PlaneConstraint("pendulum2", [0, 0, -1], height=tip[2]),
            CoordinateCoupling("euler_rx", "pin", ratio=2.0, offset=-0.8),
            PrescribedCoordinate("euler_ry", 0.5),
        ]
    )
    np.testing.assert_allclose(cs.position(m, q), [-0.1, 0.0, 0.0, 0.0, -0.1], atol=1e-14)
    assert cs.size(m) == 5
    assert cs.row_names(m)[0].startswith("point_pendulum2")


def test_coordinate_constraints_pickle_with_their_model():
    # process pools (ahbm.io.batch) pickle models: linear, table, function and constant
    # relations must survive, with the same residuals, Jacobians and bias terms
    import pickle

    from ahbm.kinematics.functions import SimmSpline

    m = double_pendulum_3d()
    m.constraints = [
        CoordinateCoupling("euler_rx", "pin", ratio=2.0, offset=-0.8),
        CoordinateCoupling("euler_ry", "pin", relation=[[0, 0], [1, 1], [2, 3]]),
        CoordinateCoupling("euler_rz", "pin", relation=SimmSpline([-1, 0, 1, 2], [0, 1, 0, 2])),
        PrescribedCoordinate("pin", 0.5),
    ]
    m2 = pickle.loads(pickle.dumps(m))
    cs, cs2 = ConstraintSet(m.constraints), ConstraintSet(m2.constraints)
    rng = np.random.default_rng(3)
    q, qd = rng.normal(size=(5, m.nq)), rng.normal(size=(5, m.nv))
    np.testing.assert_array_equal(cs.position(m, q), cs2.position(m2, q))
    np.testing.assert_array_equal(cs.jacobian(m, q), cs2.jacobian(m2, q))
    np.testing.assert_array_equal(cs.gamma(m, q, qd), cs2.gamma(m2, q, qd))


def test_user_constraint_with_analytic_jacobian_matches_fd():
    m = double_pendulum_3d()
    f = lambda t, q: np.array([q[0] * q[1] - 0.2])  # noqa: E731
    jac = lambda t, q: np.array([[q[1], q[0], 0.0, 0.0]])  # noqa: E731
    q, qd = np.array([0.3, 0.5, 0.1, 0.2]), np.array([1.0, -2.0, 0.5, 0.1])
    a = ConstraintSet([UserConstraint(f, 1, jacobian=jac)]).assemble(m, q, qd)
    b = ConstraintSet([UserConstraint(f, 1)]).assemble(m, q, qd)
    np.testing.assert_allclose(a.G, b.G, atol=1e-8)
    # γ = −2 q̇0 q̇1 for g = q0 q1
    np.testing.assert_allclose(a.gamma, [-2 * qd[0] * qd[1]], atol=1e-5)


def test_model_file_round_trip(tmp_path):
    m = double_pendulum_3d()
    cs = ConstraintSet(
        [
            PointConstraint(
                "pendulum2",
                [0, 0, -1],
                other="pendulum1",
                other_point=[0, 0, 0],
                axes="xz",
                name="loop",
            ),  # fmt: skip
            PointConstraint("pendulum2", [0, 0, -1], axes=[[1, 0, 1]], name="dir"),
            PlaneConstraint("pendulum1", [0, 0, -1], normal=[0, 1, 1], height=0.2),
            OrientationConstraint("pendulum2", other="pendulum1", axes="z"),
            CoordinateCoupling("euler_rx", "pin", ratio=2.0),
            CoordinateCoupling("euler_ry", "pin", relation=[[0, 0], [1, 1], [2, 3]]),
            PrescribedCoordinate("euler_rz", [[0, 0], [1, 0.5], [2, 0.2]]),
            PrescribedCoordinate("pin", 0.25),
        ]
    )
    m.constraints = cs  # the model file owns its constraints
    m2 = load_model(save_model(m, tmp_path / "model.json"))
    cs2 = ConstraintSet(m2.constraints)
    assert cs2.to_list() == cs.to_list()
    assert m2.to_dict() == m.to_dict()
    rng = np.random.default_rng(2)
    q, qd = rng.normal(size=4), rng.normal(size=4)
    a, b = cs.assemble(m, q, qd, t=0.3), cs2.assemble(m2, q, qd, t=0.3)
    for name in ("g", "G", "nu", "gamma"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name))
    # files without constraints load with none
    m.constraints = []
    save_model(m, tmp_path / "plain.json")
    assert load_model(tmp_path / "plain.json").constraints == ()


def test_bad_input(tmp_path):
    m = double_pendulum_3d()
    with pytest.raises(ModelError, match="unknown body 'hand'"):
        ConstraintSet([PointConstraint("hand", [0, 0, 0])]).validate(m)
    with pytest.raises(ModelError, match="same body"):
        ConstraintSet([PointConstraint("pendulum1", other="pendulum1")]).validate(m)
    with pytest.raises(ModelError, match="unknown constraint type 'weld'"):
        constraint_from_dict({"type": "weld", "body": "pendulum1"})
    with pytest.raises(ModelError, match="needs the field 'driver'"):
        constraint_from_dict({"type": "coupling", "coordinate": "pin"})
    user = m.copy()
    user.constraints = [UserConstraint(lambda t, q: q[:1], 1)]
    with pytest.raises(ModelError, match="cannot be stored"):
        save_model(user, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
    d = m.to_dict()
    d["constraints"] = [{"type": "plane", "body": "nobody"}]
    with pytest.raises(ModelError, match="unknown body 'nobody'"):
        load_model(d)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(FileFormatError, match="not valid JSON"):
        load_model(tmp_path / "bad.json")


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
@pytest.mark.parametrize("case", CASES)
def test_constraint_terms_with_kin_equal_recomputation(case, batch):
    from ahbm.errors import DataError

    model = _model()
    rng = np.random.default_rng(21)
    q = random_q(model, rng=rng, size=batch)
    qd = rng.normal(size=batch + (model.nv,))
    cs = _sets(model, random_q(model, rng=rng))[case]
    kin = forward_kinematics(model, q, qd)
    t = 0.4
    for qq, vv in ((None, None), (q, qd)):
        np.testing.assert_array_equal(
            cs.position(model, qq, t=t, kin=kin), cs.position(model, q, t=t)
        )
        np.testing.assert_array_equal(
            cs.jacobian(model, qq, t=t, kin=kin), cs.jacobian(model, q, t=t)
        )
        np.testing.assert_array_equal(
            cs.velocity_rhs(model, qq, t=t, kin=kin), cs.velocity_rhs(model, q, t=t)
        )
        np.testing.assert_array_equal(
            cs.gamma(model, qq, vv, t=t, kin=kin), cs.gamma(model, q, qd, t=t)
        )
        a, b = cs.assemble(model, qq, vv, t=t, kin=kin), cs.assemble(model, q, qd, t=t)
        for name in ("g", "G", "nu", "gamma"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    with pytest.raises(DataError, match="without velocities"):
        cs.gamma(model, None, None, kin=forward_kinematics(model, q))


def test_constraint_terms_is_a_result_object():
    m = double_pendulum_3d()
    cs = ConstraintSet([PointConstraint(m.body_names[-1], [0.0, 0.0, -0.5])])
    terms = cs.assemble(m, np.zeros(m.nq), np.zeros(m.nv))
    assert "G=array(3, 4)" in repr(terms)
