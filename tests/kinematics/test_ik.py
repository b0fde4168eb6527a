"""Tests of ahbm.kinematics.ik: marker Jacobians, Levenberg–Marquardt marker
fitting with warm start, joint limits and missing markers."""

import warnings

import numpy as np
import pytest

from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.kinematics.configuration import difference_q, integrate_q, random_q
from ahbm.kinematics.forward import point_jacobian, point_position
from ahbm.kinematics.ik import fit_markers
from ahbm.kinematics.marker_model import joint_bounds, marker_jacobians, model_markers
from ahbm.kinematics.tree import Model
from ahbm.testing import marker_leg_model as leg_model


def trajectory(n):
    t = np.linspace(0, 1, n)
    q = np.zeros((n, 12))
    q[:, 0] = 1.2 * t
    q[:, 1] = 0.9 + 0.02 * np.sin(6 * t)
    q[:, 2] = 0.01 * np.sin(3 * t)
    q[:, 3:6] = 0.05 * np.sin(3 * t[:, None] + [0, 1, 2])
    q[:, 6] = 0.4 * np.sin(6 * t) + 0.2
    q[:, 7] = 0.08 * np.sin(6 * t + 1)
    q[:, 8] = 0.1 * np.sin(6 * t + 2)
    q[:, 9] = -0.6 * (1 + np.sin(6 * t)) / 2 - 0.05
    q[:, 10] = 0.2 * np.sin(6 * t)
    q[:, 11] = 0.1 * np.sin(6 * t + 0.5)
    return q


@pytest.fixture(scope="module")
def leg():
    m = leg_model()
    q = trajectory(25)
    X, _ = marker_jacobians(m, q)
    return m, q, X


def test_model_markers_order():
    found = model_markers(leg_model())
    assert found.names[:4] == ["RASI", "LASI", "SACR", "THI"]
    assert found.bodies.tolist() == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 4
    np.testing.assert_allclose(found.local[0], [0.12, 0.03, 0.12])
    assert repr(found).startswith("ModelMarkers(names=list[13], bodies=array(13,)")


@pytest.mark.parametrize("root", ["free_euler", "free"])
def test_marker_jacobians_against_point_jacobian_and_fd(root):
    m = leg_model(root)
    rng = np.random.default_rng(0)
    q = random_q(m, rng=rng, size=(3,), scale=0.5)
    P, J = marker_jacobians(m, q)
    found = model_markers(m)
    names, bodies, local = found.names, found.bodies, found.local
    for k in range(len(names)):
        np.testing.assert_allclose(
            J[:, k], point_jacobian(m, q, int(bodies[k]), local[k]), atol=1e-12
        )
        np.testing.assert_allclose(
            P[:, k], point_position(m, q, int(bodies[k]), local[k]), atol=1e-12
        )
    # central finite differences along the velocity coordinates
    h = 1e-6
    for c in range(m.nv):
        dv = np.zeros(m.nv)
        dv[c] = h
        Pp, _ = marker_jacobians(m, integrate_q(m, q, dv))
        Pm, _ = marker_jacobians(m, integrate_q(m, q, -dv))
        np.testing.assert_allclose((Pp - Pm) / (2 * h), J[..., c], atol=1e-7)


def test_marker_jacobians_subset():
    m = leg_model()
    q = trajectory(2)
    P, J = marker_jacobians(m, q, marker_names=["TOE", "RASI"])
    P_all, J_all = marker_jacobians(m, q)
    names = model_markers(m).names
    np.testing.assert_allclose(P, P_all[:, [names.index("TOE"), names.index("RASI")]])
    assert J.shape == (2, 2, 3, m.nv)


@pytest.mark.parametrize("block_size", [1, 7])
def test_recovers_known_trajectory_exactly(leg, block_size):
    m, q, X = leg
    res = fit_markers(m, X, q0=q[0] + 0.1, block_size=block_size)
    np.testing.assert_allclose(res.q, q, atol=1e-9)
    assert res.converged.all() and res.well_determined.all()
    assert np.all(res.rms < 1e-9)
    assert res.residuals.shape == (25, 13)
    assert res.marker_names == model_markers(m).names
    assert np.all(res.n_visible == 13)


def test_ik_result_is_an_object(leg):
    m, q, X = leg
    res = fit_markers(m, X[:3], q0=q[0])
    assert repr(res).startswith("IKResult(q=array(3, ")


def test_noisy_markers_within_tolerance(leg):
    m, q, X = leg
    rng = np.random.default_rng(1)
    noise = 0.001
    Xn = X + rng.normal(scale=noise, size=X.shape)
    res = fit_markers(m, Xn, q0=q[0])
    assert res.converged.all()
    err = res.q - q
    assert np.sqrt(np.mean(err[:, :3] ** 2)) < 2e-3  # translations, m
    assert np.sqrt(np.mean(err[:, 3:] ** 2)) < np.deg2rad(2.0)  # angles
    # least-squares residuals: about noise * sqrt(3 (n_m - dof / n_m ...)) per marker
    assert 0.5 * noise < np.mean(res.rms) < 2.0 * noise
    # the fit cannot be worse than the truth
    truth = np.sqrt(np.mean(np.sum((X - Xn) ** 2, axis=-1), axis=1))
    assert np.all(res.rms <= truth + 1e-12)


def test_missing_marker_and_empty_frame(leg):
    m, q, X = leg
    X = X.copy()
    X[5:9, 4] = np.nan  # KNE missing in frames 5..8
    X[12, 10, 1] = np.nan  # one coordinate = marker missing
    X[20] = np.nan  # nothing visible
    with pytest.warns(AhbmWarning, match="1 frame\\(s\\) without visible markers"):
        res = fit_markers(m, X, q0=q[0])
    ok = np.ones(25, dtype=bool)
    ok[20] = False
    np.testing.assert_allclose(res.q[ok], q[ok], atol=1e-9)
    assert np.isnan(res.q[20]).all() and not res.converged[20]
    assert np.isnan(res.residuals[5:9, 4]).all() and np.isnan(res.residuals[12, 10])
    assert np.isnan(res.residuals[20]).all() and np.isnan(res.rms[20])
    assert res.n_visible[5] == 12 and res.n_visible[20] == 0


def test_marker_dict_and_subset(leg):
    m, q, X = leg
    names = model_markers(m).names
    d = {n: X[:, k] for k, n in enumerate(names) if n != "SHA"}
    res = fit_markers(m, d, q0=q[0])
    assert res.marker_names == [n for n in names if n != "SHA"]
    np.testing.assert_allclose(res.q, q, atol=1e-9)


def test_joint_limits_respected():
    m = leg_model(knee_limits=(-2.4, -0.3))
    q = trajectory(15)  # knee goes up to -0.05 > -0.3: outside the limit
    X, _ = marker_jacobians(m, q)
    res = fit_markers(m, X, q0=np.clip(q[0], *joint_bounds(m)))
    lo, hi = joint_bounds(m)
    assert np.all(res.q >= lo - 1e-12) and np.all(res.q <= hi + 1e-12)
    beyond = q[:, 9] > -0.3
    assert beyond.any()
    np.testing.assert_allclose(res.q[beyond, 9], -0.3, atol=1e-12)  # held at the bound
    np.testing.assert_allclose(res.q[~beyond], q[~beyond], atol=1e-8)
    assert res.converged.all()
    # explicit bounds override the model's limits
    res2 = fit_markers(m, X, q0=q[0], bounds=(np.full(12, -np.inf), np.full(12, np.inf)))
    np.testing.assert_allclose(res2.q, q, atol=1e-9)


def test_quaternion_joints():
    m = leg_model("free")
    rng = np.random.default_rng(2)
    base = np.array([0.1, 0.9, 0.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0, -0.5, 0.1, 0.0])
    v = rng.normal(scale=0.05, size=m.nv)
    steps = np.arange(8)[:, None] * v  # a smooth motion
    q_true = integrate_q(m, base, steps)
    X, _ = marker_jacobians(m, q_true)
    res = fit_markers(m, X, q0=base)
    assert res.converged.all()
    np.testing.assert_allclose(difference_q(m, res.q, q_true), 0.0, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(res.q[:, 3:7], axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(res.q[:, 7:11], axis=1), 1.0)


def test_well_determined_flag():
    m = leg_model()
    q = trajectory(3)
    X, _ = marker_jacobians(m, q)
    names = model_markers(m).names
    X[1, [names.index(n) for n in ("HEE", "TOE", "MT5", "MT1")]] = np.nan  # foot lost
    with pytest.warns(AhbmWarning, match="do not determine"):
        res = fit_markers(m, X, q0=q[0])
    np.testing.assert_array_equal(res.well_determined, [True, False, True])


def test_joint_bounds_formats():
    m = Model()
    m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1], "limits": [-1, 1]})
    m.add_body(
        "b", "a", {"type": "euler", "sequence": "ZXY", "limits": [[-1, 2], None, [None, 0.5]]}
    )
    m.add_body("c", "b", {"type": "universal", "sequence": "XY", "limits": {"c_ry": [0, 1]}})
    lo, hi = joint_bounds(m)
    np.testing.assert_array_equal(lo, [-1, -1, -np.inf, -np.inf, -np.inf, 0])
    np.testing.assert_array_equal(hi, [1, 2, np.inf, 0.5, np.inf, 1])


@pytest.mark.parametrize(
    ("joint", "match"),
    [
        ({"type": "spherical", "limits": [[-1, 1]] * 4}, "quaternion"),
        ({"type": "euler", "sequence": "ZXY", "limits": [[-1, 1]]}, "list of 3 pairs"),
        ({"type": "revolute", "axis": [0, 0, 1], "limits": [2, 1]}, "above the upper"),
        ({"type": "universal", "sequence": "XY", "limits": {"nope": [0, 1]}}, "nope"),
    ],
)
def test_bad_limits(joint, match):
    m = Model()
    m.add_body("b", "ground", joint, markers={"M": [1.0, 0, 0]})
    with pytest.raises(ModelError, match=match):
        joint_bounds(m)


def test_bad_input(leg):
    m, q, X = leg
    with pytest.raises(DataError, match="not defined on model"):
        fit_markers(m, X[:, :2], marker_names=["RASI", "RKNEE"])
    with pytest.raises(DataError, match="shape"):
        fit_markers(m, X[:, :5])
    with pytest.raises(DataError, match="non-negative"):
        fit_markers(m, X, weights=-np.ones(13))
    with pytest.raises(DataError, match="q0"):
        fit_markers(m, X, q0=np.zeros(5))
    with pytest.raises(DataError, match="block_size"):
        fit_markers(m, X, block_size=0)
    with pytest.raises(ModelError, match="no markers"):
        empty = Model()
        empty.add_body("b", "ground", "spherical")
        fit_markers(empty, X)


def test_weights_zero_ignores_marker(leg):
    m, q, X = leg
    X = X.copy()
    X[:, 0] += [0.05, 0.0, 0.0]  # a displaced marker
    names = model_markers(m).names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fit_markers(m, X[:4], q0=q[0], weights={names[0]: 0.0})
    np.testing.assert_allclose(res.q, q[:4], atol=1e-9)
    np.testing.assert_allclose(res.residuals[:, 0], 0.05, atol=1e-9)


def test_noisy_optimum_matches_scipy_least_squares(leg):
    from scipy.optimize import least_squares

    m, q, X = leg
    rng = np.random.default_rng(3)
    Xn = X[:4] + rng.normal(scale=0.003, size=X[:4].shape)
    w = np.linspace(0.5, 2.0, 13)
    res = fit_markers(m, Xn, q0=q[0], weights=w)
    sw = np.sqrt(np.repeat(w, 3))
    for k in range(4):
        sol = least_squares(
            lambda x, k=k: sw * (marker_jacobians(m, x)[0] - Xn[k]).ravel(),
            q[k],
            method="lm",
            xtol=1e-12,
            ftol=1e-12,
        )
        np.testing.assert_allclose(res.q[k], sol.x, atol=1e-7)


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
def test_marker_jacobians_accept_a_kinematic_state(batch):
    from ahbm.kinematics.forward import forward_kinematics

    m = leg_model()
    rng = np.random.default_rng(4)
    q = random_q(m, rng=rng, size=batch, scale=0.5)
    kin = forward_kinematics(m, q)
    P, J = marker_jacobians(m, q)
    assert P.shape == batch + (13, 3) and J.shape == batch + (13, 3, m.nv)
    for args in ((None,), (q,)):
        P2, J2 = marker_jacobians(m, *args, kin=kin)
        np.testing.assert_array_equal(P2, P)
        np.testing.assert_array_equal(J2, J)
    with pytest.raises(DataError, match="computed for model"):
        marker_jacobians(leg_model(), None, kin=kin)
