"""Static optimization: the solver against closed forms, SLSQP and identities."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED
from scipy.optimize import minimize

from ahbm.errors import AhbmWarning, DataError
from ahbm.muscles.force_sharing import load_sharing, reserve_array


def _random_problem(rng, n_frames=40, nm=12, nv=6, density=0.4):
    pattern = rng.random((1, nm, nv)) < density
    pattern[0, np.arange(nv) % nm, np.arange(nv)] = True  # every coordinate has a muscle
    R = rng.normal(0.0, 0.04, (n_frames, nm, nv)) * pattern
    F = rng.uniform(300.0, 3000.0, (n_frames, nm))
    tau = rng.normal(0.0, 40.0, (n_frames, nv))
    return tau, R, F


def _slsqp(tau, R, F, reserves, p, x0):
    nm, nv = R.shape
    A = np.concatenate([R.T * F, np.diag(reserves)], axis=1)
    bounds = [(0.0, 1.0)] * nm + [(None, None)] * nv
    sol = minimize(
        lambda x: np.sum(np.abs(x) ** p),
        x0,
        jac=lambda x: p * np.abs(x) ** (p - 1) * np.sign(x),
        constraints=[{"type": "eq", "fun": lambda x: A @ x - tau, "jac": lambda x: A}],
        bounds=bounds,
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 2000},
    )
    # status 8 ("positive directional derivative") is SLSQP at its round-off floor
    assert sol.success or sol.status == 8, sol.message
    np.testing.assert_allclose(A @ sol.x, tau, atol=1e-6 * np.abs(tau).max())
    return sol.x[:nm], sol.x[nm:]


def test_two_muscles_one_joint_closed_form():
    # min a1² + a2² s.t. r1 F1 a1 + r2 F2 a2 = τ  ->  a_i = c_i τ / Σ c², c = r F
    c = np.array([0.05 * 1000.0, 0.025 * 1000.0])
    res = load_sharing([30.0], [[0.05], [0.025]], [1000.0, 1000.0])
    np.testing.assert_allclose(res.activations, c * 30.0 / np.sum(c**2), rtol=1e-9)
    np.testing.assert_allclose(res.muscle_forces, res.activations * 1000.0, rtol=1e-14)
    assert not res.failed and res.iterations == 0  # the minimum-norm start is the solution


def test_one_muscle_per_coordinate_with_reserves_closed_form():
    # diagonal problem: per coordinate min a² + u² s.t. c a + R u = τ, 0 <= a <= 1
    rng = np.random.default_rng(1)
    nv, n = 5, 200
    r = np.diag(rng.uniform(0.02, 0.06, nv))  # muscle k acts on coordinate k only
    F = rng.uniform(500.0, 2000.0, nv)
    Rres = rng.uniform(1.0, 50.0, nv)
    tau = rng.normal(0.0, 80.0, (n, nv))
    res = load_sharing(tau, r, F, reserves=Rres)
    c = np.diag(r) * F
    a = np.clip(c * tau / (c**2 + Rres**2), 0.0, 1.0)
    u = (tau - c * a) / Rres
    assert (a == 0).any() and (a == 1).any()  # both bounds are exercised
    np.testing.assert_allclose(res.activations, a, atol=1e-10)
    np.testing.assert_allclose(res.reserve_controls, u, atol=1e-9)
    np.testing.assert_allclose(res.reserve_loads, u * Rres, atol=1e-8)
    assert not res.failed.any()


@pytest.mark.parametrize("p", [2.0, 3.0, 1.5])
def test_matches_slsqp(p):
    rng = np.random.default_rng(2)
    tau, R, F = _random_problem(rng, n_frames=8)
    reserves = np.full(R.shape[-1], 2.0)
    res = load_sharing(tau, R, F, reserves=reserves, exponent=p)
    assert not res.failed.any()
    for i in range(tau.shape[0]):
        # SLSQP from a perturbed start: it would find a lower cost if ours were not optimal
        x0 = np.concatenate([res.activations[i], res.reserve_controls[i]])
        x0 = x0 + rng.normal(0.0, 0.05, x0.shape)
        x0[: R.shape[1]] = np.clip(x0[: R.shape[1]], 0.0, 1.0)
        a, u = _slsqp(tau[i], R[i], F[i], reserves, p, x0)
        cost = np.sum(np.abs(a) ** p) + np.sum(np.abs(u) ** p)
        # our cost is not above SLSQP's (whose constraints hold to ~1e-6 only)
        assert res.cost[i] <= cost * (1 + 1e-6)
        if p == 2:  # (for p != 2 SLSQP stops early where the cost is flat near a = 0)
            np.testing.assert_allclose(res.activations[i], a, atol=1e-6)
        _assert_kkt(tau[i], R[i], F[i], reserves, p, res.activations[i], res.reserve_controls[i])


def _assert_kkt(tau, R, F, reserves, p, a, u):
    """First-order optimality: ∇cost = Aᵀλ on free variables, the right sign at the bounds."""
    A = np.concatenate([R.T * F, np.diag(reserves)], axis=1)
    x = np.concatenate([a, u])
    grad = p * np.abs(x) ** (p - 1) * np.sign(x)
    nm = a.size
    free = np.concatenate([(a > 1e-9) & (a < 1 - 1e-9), np.ones(u.size, bool)])
    lam = np.linalg.lstsq(A[:, free].T, grad[free], rcond=None)[0]
    s = A.T @ lam
    np.testing.assert_allclose(grad[free], s[free], atol=1e-6 * (1 + np.abs(grad).max()))
    at0 = np.flatnonzero(a <= 1e-9)
    at1 = np.flatnonzero(a >= 1 - 1e-9)
    assert np.all(s[at0] <= grad[at0] + 1e-6)  # increasing a would not pay
    assert np.all(s[at1] >= grad[at1] - 1e-6)  # a capped at 1 would like more
    assert nm == R.shape[0]


def test_constraints_hold_to_solver_tolerance():
    # identity: Σ muscle moments + reserves = inverse-dynamics forces
    rng = np.random.default_rng(3)
    tau, R, F = _random_problem(rng, n_frames=300, nm=18, nv=10)
    res = load_sharing(tau, R, F, reserves=np.full(10, 1.0), tolerance=1e-10)
    moments = np.einsum("nmk,nm->nk", R, res.muscle_forces) + res.reserve_loads
    np.testing.assert_allclose(moments, tau, atol=1e-10 * np.abs(tau).max())
    np.testing.assert_allclose(res.residuals, moments - tau, atol=1e-12)
    assert res.activations.min() >= 0.0 and res.activations.max() <= 1.0
    assert (res.activations == 1.0).any()  # saturated muscles in some frames


def test_warm_start_gives_the_same_solution():
    rng = np.random.default_rng(4)
    tau, R, F = _random_problem(rng, n_frames=100)
    # a smooth trial: frames correlated in time
    t = np.linspace(0, 1, 100)[:, None]
    tau = 60 * np.sin(2 * np.pi * (t + np.arange(tau.shape[1]) / 7))
    R = np.broadcast_to(R[0], R.shape) * (1 + 0.2 * np.sin(3 * t))[..., None]
    a = load_sharing(tau, R, F, reserves=np.ones(6), warm_start=True)
    b = load_sharing(tau, R, F, reserves=np.ones(6), warm_start=False)
    np.testing.assert_allclose(a.activations, b.activations, atol=1e-7)


def test_passive_forces_move_to_the_right_hand_side():
    rng = np.random.default_rng(5)
    tau, R, F = _random_problem(rng, n_frames=20)
    Fp = rng.uniform(0.0, 100.0, F.shape)
    res = load_sharing(tau, R, F, passive_forces=Fp, reserves=np.ones(6))
    ref = load_sharing(tau - np.einsum("nmk,nm->nk", R, Fp), R, F, reserves=np.ones(6))
    np.testing.assert_allclose(res.activations, ref.activations, atol=1e-9)
    np.testing.assert_allclose(res.muscle_forces, res.activations * F + Fp, rtol=1e-12)


def test_batch_axes():
    rng = np.random.default_rng(6)
    tau, R, F = _random_problem(rng, n_frames=12)
    flat = load_sharing(tau, R, F, reserves=np.ones(6))
    shaped = load_sharing(
        tau.reshape(3, 4, 6), R.reshape(3, 4, 12, 6), F.reshape(3, 4, 12), reserves=np.ones(6)
    )
    assert shaped.activations.shape == (3, 4, 12) and shaped.failed.shape == (3, 4)
    np.testing.assert_allclose(shaped.activations.reshape(12, 12), flat.activations, atol=1e-9)
    # strengths shared by all frames broadcast
    same = load_sharing(tau, R, F[0], reserves=np.ones(6))
    assert same.activations.shape == (12, 12)


def test_infeasible_frames_are_reported_not_clipped():
    rng = np.random.default_rng(7)
    nv, n = 4, 30
    R = np.zeros((nm := 2 * nv, nv))
    R[2 * np.arange(nv), np.arange(nv)] = 0.05  # an agonist and an antagonist per coordinate
    R[2 * np.arange(nv) + 1, np.arange(nv)] = -0.04
    F = np.full(nm, 1000.0)
    tau = rng.uniform(-30.0, 30.0, (n, nv))
    tau[[4, 17]] *= 100.0  # far beyond the muscles' strength, no reserves
    with pytest.warns(AhbmWarning, match=r"2 frame\(s\) cannot meet.*frame 4"):
        res = load_sharing(tau, R, F)
    assert res.failed[[4, 17]].all()
    assert res.failed_frames.ravel().tolist() == [4, 17]
    assert np.all(np.abs(res.residuals[[4, 17]]).max(axis=-1) > 1.0)
    assert np.isfinite(res.activations).all()
    assert "failed=" in repr(res)
    # without the warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = load_sharing(tau, R, F, warn=False)
    assert quiet.failed[[4, 17]].all()


def test_coordinate_without_actuator_fails_only_where_loaded():
    R = np.zeros((3, 1, 2))
    R[:, 0, 0] = 0.05
    tau = np.array([[10.0, 0.0], [10.0, 5.0], [-10.0, 0.0]])
    with pytest.warns(AhbmWarning, match="coordinate 'b'"):
        res = load_sharing(tau, R, [1000.0], coordinate_names=["a", "b"])
    assert res.failed.tolist() == [False, True, True]  # frame 2: a muscle cannot push


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"exponent": 1.0}, "exponent"),
        ({"exponent": "2"}, "exponent"),
        ({"reserves": [-1.0]}, "reserves"),
        ({"min_activation": 0.5, "max_activation": 0.2}, "min_activation"),
        ({"tolerance": 0.0}, "tolerance"),
        ({"muscle_names": ["a"]}, "muscle_names"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(DataError, match=match):
        load_sharing([1.0], [[0.05], [0.02]], [100.0, 100.0], **kwargs)


def test_bad_arrays():
    with pytest.raises(DataError, match="moment_arms"):
        load_sharing([1.0, 2.0], [[0.05], [0.02]], [100.0, 100.0])
    with pytest.raises(DataError, match="max_forces"):
        load_sharing([1.0], [[0.05], [0.02]], [100.0])
    with pytest.raises(DataError, match="max_forces"):
        load_sharing([1.0], [[0.05], [0.02]], [100.0, -1.0])
    with pytest.raises(DataError, match="tau"):
        load_sharing([np.nan], [[0.05]], [100.0])


# --- static_optimization on a model with muscles -----------------------------------------


def _arm_model(muscle_type="Thelen2003Muscle"):
    """A planar two-joint arm (shoulder, elbow about z, gravity -y) with straight muscles."""
    from ahbm.kinematics import Model
    from ahbm.muscles import Muscle, PathPoint

    m = Model("arm", gravity=(0.0, -9.81, 0.0))
    z = {"type": "revolute", "axis": [0, 0, 1]}
    m.add_body("upper", "ground", {**z, "coordinates": ["shoulder"]}, mass=2.0,
               com=[0.15, 0, 0], inertia=np.diag([0.002, 0.02, 0.02]))  # fmt: skip
    m.add_body("fore", "upper", {**z, "coordinates": ["elbow"]}, position=[0.3, 0, 0],
               mass=1.2, com=[0.12, 0, 0], inertia=np.diag([0.001, 0.01, 0.01]))  # fmt: skip

    def muscle(name, a, b, f0, lopt, lts):
        return Muscle(name, (PathPoint(f"{name}_o", *a), PathPoint(f"{name}_i", *b)),
                      model=muscle_type, max_isometric_force=f0, optimal_fiber_length=lopt,
                      tendon_slack_length=lts, pennation_angle=0.1)  # fmt: skip

    m.muscles = [
        muscle("flexor", ("ground", (0.02, 0.06, 0)), ("upper", (0.1, 0.02, 0)), 900, 0.1, 0.05),
        muscle(
            "extensor", ("ground", (0.02, -0.06, 0)), ("upper", (0.1, -0.02, 0)), 900, 0.1, 0.05
        ),  # fmt: skip
        muscle(
            "biceps", ("ground", (-0.02, 0.04, 0)), ("fore", (0.04, 0.02, 0)), 600, 0.15, 0.2
        ),  # fmt: skip
        muscle(
            "brachialis", ("upper", (0.15, 0.02, 0)), ("fore", (0.03, 0.015, 0)), 800, 0.1, 0.08
        ),  # fmt: skip
        muscle(
            "triceps", ("upper", (0.1, -0.02, 0)), ("fore", (-0.02, -0.01, 0)), 1000, 0.1, 0.12
        ),  # fmt: skip
    ]
    return m


def _arm_motion(n=60):
    t = np.linspace(0.0, 1.0, n)[:, None]
    q = np.hstack([0.3 + 0.4 * np.sin(2 * np.pi * t), 1.0 + 0.5 * np.sin(2 * np.pi * t + 1)])
    w = 2 * np.pi
    qd = np.hstack([0.4 * w * np.cos(w * t), 0.5 * w * np.cos(w * t + 1)])
    qdd = np.hstack([-0.4 * w**2 * np.sin(w * t), -0.5 * w**2 * np.sin(w * t + 1)])
    return q, qd, qdd


@pytest.mark.parametrize("kind", ["Thelen2003Muscle", "DeGrooteFregly2016Muscle"])
def test_static_optimization_reproduces_inverse_dynamics(kind):
    from ahbm.dynamics import rnea
    from ahbm.muscles import force_coefficients, moment_arms, static_optimization
    from ahbm.muscles.hill_curves import MuscleParameters
    from ahbm.muscles.paths import lengthening_speeds, muscle_lengths

    model = _arm_model(kind)
    q, qd, qdd = _arm_motion()
    res = static_optimization(model, q, qd, qdd, reserves=1.0)
    tau = rnea(model, q, qd, qdd)
    R = moment_arms(model, q)
    # identity: Σ muscle moments + reserves = inverse-dynamics forces (solver tolerance)
    moments = np.einsum("nmk,nm->nk", R, res.muscle_forces) + res.reserve_loads
    np.testing.assert_allclose(moments, tau, atol=1e-8 * np.abs(tau).max())
    np.testing.assert_allclose(res.tau, tau)
    assert not res.failed.any() and res.muscle_names == tuple(m.name for m in model.muscles)
    assert res.coordinate_names == ("shoulder", "elbow")
    # the strengths are the rigid-tendon active forces at a = 1 (OpenSim's SO)
    curves = "thelen2003" if kind.startswith("Thelen") else "degroote2016"
    active, _ = force_coefficients(
        MuscleParameters.from_muscles(model.muscles),
        muscle_lengths(model, q),
        lengthening_speeds(model, q, qd),
        curves=curves,
    )
    np.testing.assert_allclose(res.muscle_forces, res.activations * active, rtol=1e-12)
    # OpenSim's minimum activation (min_control) of Thelen's muscle is 0.01
    lo = 0.01 if kind.startswith("Thelen") else 0.0
    assert res.activations.min() == pytest.approx(lo)
    ref = load_sharing(tau, R, active, reserves=np.ones(2), min_activation=lo)
    np.testing.assert_allclose(res.activations, ref.activations, atol=1e-12)
    # muscles do the work: the reserves carry a small part
    assert np.abs(res.reserve_loads).max() < 0.05 * np.abs(tau).max()


def test_forward_dynamics_of_the_solution_reproduces_the_motion():
    # ABA (an independent algorithm) driven by the muscle and reserve forces gives back qdd
    from ahbm.dynamics import aba
    from ahbm.muscles import moment_arms, static_optimization

    model = _arm_model()
    q, qd, qdd = _arm_motion(25)
    res = static_optimization(model, q, qd, qdd, reserves=1.0)
    tau = np.einsum("nmk,nm->nk", moment_arms(model, q), res.muscle_forces) + res.reserve_loads
    np.testing.assert_allclose(aba(model, q, qd, tau), qdd, atol=1e-6 * np.abs(qdd).max())


def test_one_muscle_per_coordinate_closed_form():
    # one muscle per degree of freedom, no reserves: a = τ / (r F^a) exactly
    from ahbm.dynamics import rnea
    from ahbm.muscles import moment_arms, static_optimization

    model = _arm_model()
    model.muscles = [model.muscles[0], model.muscles[3]]  # flexor (shoulder), brachialis (elbow)
    q, qd, qdd = _arm_motion(40)
    qdd = qdd * 0.0
    qd = qd * 0.0
    q[:, 0] = -0.8  # arm down: gravity pulls it back, the flexor holds it
    q[:, 1] = 0.0
    tau = rnea(model, q, qd, qdd)
    r = moment_arms(model, q)
    res = static_optimization(model, q, qd, qdd, force_length_velocity=False, min_activation=0)
    F0 = np.array([m.max_isometric_force for m in model.muscles])
    expected = np.stack([tau[:, 0] / (r[:, 0, 0] * F0[0]), tau[:, 1] / (r[:, 1, 1] * F0[1])], 1)
    assert np.allclose(r[:, 0, 1], 0.0)  # the shoulder muscle does not cross the elbow
    assert np.all((expected >= 0) & (expected <= 1))
    np.testing.assert_allclose(res.activations, expected, rtol=1e-9)


def test_static_optimization_options_and_errors():
    from ahbm.errors import ModelError
    from ahbm.muscles import static_optimization

    model = _arm_model()
    q, qd, qdd = _arm_motion(10)
    sub = static_optimization(model, q, qd, qdd, reserves={"shoulder": 1.0, "elbow": 1.0},
                              muscles=["biceps", "triceps", "flexor", "extensor"])  # fmt: skip
    assert sub.activations.shape == (10, 4) and sub.muscle_names[0] == "biceps"
    withp = static_optimization(model, q, qd, qdd, reserves=1.0, passive_forces=True)
    assert np.all(withp.muscle_forces >= withp.activations * 0)  # tensions, never pushing
    with pytest.raises(DataError, match="not both"):
        static_optimization(model, q, qd, qdd, tau=np.zeros(2), f_ext=np.zeros((2, 6)))
    with pytest.raises(DataError, match="nope"):
        static_optimization(model, q, qd, qdd, muscles=["nope"])
    with pytest.raises(DataError, match="reserves"):
        static_optimization(model, q, qd, qdd, reserves={"wrist": 1.0})
    with pytest.raises(DataError, match="curves"):
        static_optimization(model, q, qd, qdd, curves="hill1938")
    with pytest.raises(DataError, match="muscles"):
        static_optimization(model, q, qd, qdd, muscles=3)
    with pytest.raises(DataError, match="convention"):
        static_optimization(model, q, qd, qdd, convention="fiber")
    with pytest.raises(DataError, match="warm_start"):
        static_optimization(model, q, qd, qdd, warm_start="no")
    with pytest.raises(DataError, match="reserve_limits"):
        static_optimization(model, q, qd, qdd, reserves=1.0, reserve_limits=(1.0, 2.0))
    bare = _arm_model()
    bare.muscles = []
    with pytest.raises(ModelError, match="no muscles"):
        static_optimization(bare, q, qd, qdd)
    with pytest.raises(ModelError, match="model"):
        reserve_array(None, 1.0)
    millard = _arm_model("Millard2012EquilibriumMuscle")
    # `curves=` still imposes one curve set on muscles of any class
    assert (
        static_optimization(millard, q, qd, qdd, curves="thelen2003", reserves=1.0).failed.sum()
        == 0
    )


def _mixed_arm():
    """The arm with Millard, Thelen and De Groote muscles side by side."""
    kinds = ["Millard2012EquilibriumMuscle", "Thelen2003Muscle", "DeGrooteFregly2016Muscle",
             "Millard2012EquilibriumMuscle", "Thelen2003Muscle"]  # fmt: skip
    model = _arm_model()
    model.muscles = [_arm_model(k).muscles[i] for i, k in enumerate(kinds)]
    return model, kinds


@pytest.mark.parametrize("convention", ["tendon", "opensim"])
def test_each_muscle_takes_the_strength_of_its_class(convention):
    from ahbm.dynamics import rnea
    from ahbm.muscles import moment_arms, static_optimization
    from ahbm.muscles.hill import force_coefficients
    from ahbm.muscles.hill_curves import MuscleParameters
    from ahbm.muscles.millard import millard_force_coefficients
    from ahbm.muscles.millard_curves import MillardParameters
    from ahbm.muscles.paths import lengthening_speeds, muscle_lengths

    model, kinds = _mixed_arm()
    q, qd, qdd = _arm_motion(30)
    res = static_optimization(model, q, qd, qdd, reserves=1.0, convention=convention,
                              passive_forces=True)  # fmt: skip
    assert not res.failed.any()
    assert res.muscle_names == ("flexor", "extensor", "biceps", "brachialis", "triceps")
    lmt, vmt = muscle_lengths(model, q), lengthening_speeds(model, q, qd)
    for j, (m, kind) in enumerate(zip(model.muscles, kinds, strict=True)):
        if kind.startswith("Millard"):
            act, pas = millard_force_coefficients(MillardParameters.from_muscles([m]),
                                                  lmt[:, j : j + 1], vmt[:, j : j + 1],
                                                  convention=convention)  # fmt: skip
        else:
            curves = "thelen2003" if kind.startswith("Thelen") else "degroote2016"
            act, pas = force_coefficients(MuscleParameters.from_muscles([m]), lmt[:, j : j + 1],
                                          vmt[:, j : j + 1], curves=curves,
                                          convention=convention)  # fmt: skip
        np.testing.assert_allclose(res.muscle_forces[:, j],
                                   res.activations[:, j] * act[:, 0] + pas[:, 0],
                                   rtol=1e-12, atol=1e-9)  # fmt: skip
        # OpenSim's minimum activation: 0.01 for Thelen's and Millard's muscles
        assert res.activations[:, j].min() >= (0.0 if "DeGroote" in kind else 0.01) - 1e-12
    # and they reproduce the inverse dynamics
    tau = rnea(model, q, qd, qdd)
    moments = np.einsum("nmk,nm->nk", moment_arms(model, q), res.muscle_forces)
    np.testing.assert_allclose(moments + res.reserve_loads, tau, atol=1e-8 * np.abs(tau).max())
    # the Millard muscles differ from the same muscles read as Thelen's
    thelen = static_optimization(model, q, qd, qdd, reserves=1.0, curves="thelen2003",
                                 convention=convention)  # fmt: skip
    assert np.abs(thelen.activations[:, 0] - res.activations[:, 0]).max() > 1e-3


def test_a_muscle_class_without_curves_is_named():
    from dataclasses import replace

    from ahbm.errors import ModelError
    from ahbm.muscles import static_optimization

    model, _ = _mixed_arm()
    model.muscles = [*model.muscles[:4], replace(model.muscles[4], model="RigidTendonMuscle")]
    q, qd, qdd = _arm_motion(5)
    with pytest.raises(ModelError, match=r"'triceps' \(RigidTendonMuscle\).*curves="):
        static_optimization(model, q, qd, qdd, reserves=1.0)
    # the documented way out: one curve set for all, or only the other muscles
    assert not static_optimization(model, q, qd, qdd, reserves=1.0,
                                   curves="thelen2003").failed.any()  # fmt: skip
    names = ["flexor", "extensor", "biceps", "brachialis"]
    assert static_optimization(model, q, qd, qdd, reserves=1.0,
                               muscles=names).activations.shape == (5, 4)  # fmt: skip


_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "static_optimization_walk.py"
_DATA = SHARED / "opensim"


@pytest.mark.skipif(not _DATA.is_dir(), reason=f"shared data not found at {_DATA}")
def test_walking_example(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("static_optimization_walk", _EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    numbers = example.run(tmp_path, quick=True)
    assert numbers["figure"].stat().st_size > 20_000
    assert numbers["frames"] == 151 and numbers["failed_frames"] == 0
    assert numbers["max_residual_Nm"] < 1e-6
    # the muscles carry the leg joints; the 1 N m reserves stay below 1 % of each joint's peak
    assert numbers["leg_reserve_share"] < 0.01
    # the knee contact force peaks at several body weights (implants: 2-3 BW; this model ~5)
    assert 2.0 < numbers["peak_knee_r_BW"] < 6.0
    assert 0.2 < numbers["peak_soleus_r"] < 1.0


def test_reserve_limits_and_per_muscle_bounds():
    # a reserve capped at |u| <= 2 (R = 5 N m) next to one muscle (r F0 = 50 N m)
    c = 0.05 * 1000.0
    tau = np.array([[40.0], [-8.0], [-20.0]])
    R = np.full((3, 1, 1), 0.05)
    with pytest.warns(AhbmWarning, match="frame 2"):
        res = load_sharing(tau, R, [1000.0], reserves=[5.0], reserve_limits=([-2.0], [2.0]))
    a_free = c * 40.0 / (c**2 + 25.0)  # interior: the limit is not reached
    assert res.activations[0, 0] == pytest.approx(a_free)
    assert res.reserve_controls[0, 0] == pytest.approx((40.0 - c * a_free) / 5.0)
    # the muscle cannot push: the reserve takes -8 N m (u = -1.6), but not -20 N m
    assert res.activations[1, 0] == pytest.approx(0.0, abs=1e-12)
    assert res.reserve_controls[1, 0] == pytest.approx(-1.6)
    assert res.failed.tolist() == [False, False, True]
    assert res.reserve_controls[2, 0] == pytest.approx(-2.0)  # at its limit, residual 10 N m
    assert res.residuals[2, 0] == pytest.approx(10.0)
    lo = load_sharing([[10.0]], [[0.05], [0.05]], [1000.0, 1000.0], min_activation=[0.0, 0.15])
    np.testing.assert_allclose(lo.activations, [[0.05, 0.15]], atol=1e-9)
