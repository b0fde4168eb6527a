"""Controllers for simulate: PID, computed torque, tracking, replay (Simonidis 2011 §6)."""

import numpy as np
import pytest
from scipy.optimize import brentq

from ahbm.dynamics import simulate
from ahbm.dynamics.controllers import (
    ComputedTorqueController,
    DesiredTrajectory,
    PIDController,
    ReplayController,
    TrackingController,
)
from ahbm.dynamics.inverse import rnea
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.models import double_pendulum_3d
from ahbm.models.pendulums import single_pendulum

K_GRAV = 0.5 * 9.81 * 0.2  # m g l/2 of the teaching pendulum


def _sine(t, amp=(0.4, 0.3, -0.2, 0.25), w=(2.0, 1.5, 3.0, 2.5)):
    """Desired motion of the double pendulum: q_j = a_j sin(w_j t)."""
    a, w = np.array(amp), np.array(w)
    return a * np.sin(w * t), a * w * np.cos(w * t), -a * w**2 * np.sin(w * t)


def _double_pendulum(m1):
    """double_pendulum_3d with the lower body's mass m1."""
    model = Model("dp", (0.0, 0.0, -9.81))
    model.add_body(
        "pendulum1", "ground", {"type": "revolute", "axis": [1.0, 0.0, 0.0]}, mass=m1,
        com=[0.0, 0.0, -0.5], inertia=np.eye(3),
    )  # fmt: skip
    model.add_body(
        "pendulum2", "pendulum1", {"type": "euler", "sequence": "ZXY"}, position=[0.0, 0.0, -1.0],
        mass=1.0, com=[0.0, 0.0, -0.5], inertia=np.eye(3),
    )  # fmt: skip
    return model


def _sim(model, ctl, q0, qd0, T, n=101, **kw):
    return simulate(
        model, (0.0, T), q0, qd0, tau=ctl, t_eval=np.linspace(0, T, n), rtol=1e-10, atol=1e-12,
        constraints=[], **kw,
    )  # fmt: skip


def test_pd_steady_state_matches_closed_form():
    # without integral action the pendulum settles where k_p (q_d - q) = m g l/2 cos q
    model = single_pendulum()
    kp, kd, qd_ = 20.0, 2.0, 0.3
    ctl = PIDController([qd_], kp=kp, kd=kd)
    r = _sim(model, ctl, [qd_], [0.0], 15.0)
    q_ss = brentq(lambda q: kp * (qd_ - q) - K_GRAV * np.cos(q), -1.0, 1.0)
    assert abs(r.q[-1, 0] - q_ss) < 1e-6
    assert abs(q_ss - qd_) > 0.03  # the offset is real


def test_pid_integral_removes_the_gravity_offset():
    model = single_pendulum()
    ctl = PIDController([0.3], kp=20.0, ki=20.0, kd=2.0)
    # simulate re-evaluates the controller at the output times after integrating, so the
    # integral left in the controller is the one over those times: take them dense
    r = _sim(model, ctl, [0.3], [0.0], 20.0, n=4001)
    assert abs(r.q[-1, 0] - 0.3) < 1e-4
    # the integral holds the gravity torque: k_i ∫e = m g l/2 cos(0.3)
    assert ctl.integral[0] * 20.0 == pytest.approx(K_GRAV * np.cos(0.3), rel=1e-3)


def test_pid_integral_discards_rejected_stages():
    ctl = PIDController([1.0], kp=0.0, ki=1.0)
    q, v = np.zeros(1), np.zeros(1)
    for t in (0.0, 0.5, 0.9, 0.3, 0.6, 1.0):  # 0.5, 0.9 rejected: integration restarts at 0.3
        ctl(t, q, v)
    assert ctl.integral[0] == pytest.approx(1.0)  # e = 1 over [0, 1]
    ctl.reset()
    assert ctl.integral[0] == 0.0


def test_pid_feedforward_and_limits():
    ctl = PIDController([0.0], kp=100.0, feedforward=[0.5], limits=(-2.0, 2.0))
    assert ctl(0.0, [0.1], [0.0])[0] == pytest.approx(-2.0)
    assert ctl(0.0, [0.0], [0.0])[0] == pytest.approx(0.5)


def test_computed_torque_exact_model_tracks_to_integration_tolerance():
    model = double_pendulum_3d()
    desired = DesiredTrajectory.from_function(_sine, 4)
    ctl = ComputedTorqueController(model, desired, bandwidth=10.0)
    q0, qd0, _ = _sine(0.0)
    r = _sim(model, ctl, q0, qd0, 2.0)
    q_ref = np.array([_sine(t)[0] for t in r.t])
    assert np.abs(r.q - q_ref).max() < 1e-7


def test_computed_torque_error_dynamics_closed_form():
    # exact model, start off the path: e(t) = e0 (1 + c t) exp(-c t) for e(0)=e0, ė(0)=0
    model = double_pendulum_3d()
    c = 6.0
    ctl = ComputedTorqueController(model, _sine, bandwidth=c)
    q0, qd0, _ = _sine(0.0)
    e0 = np.array([0.05, -0.04, 0.03, 0.02])
    r = _sim(model, ctl, q0 - e0, qd0, 1.5)
    e = np.array([_sine(t)[0] for t in r.t]) - r.q
    expected = e0 * ((1 + c * r.t) * np.exp(-c * r.t))[:, None]
    assert np.abs(e - expected).max() < 1e-7


def test_computed_torque_model_mismatch_error_bounded_and_nonzero():
    plant = double_pendulum_3d()
    wrong_model = _double_pendulum(0.7)  # the controller's model misses 30 % of the lower mass
    errs = []
    for c in (5.0, 20.0):
        ctl = ComputedTorqueController(wrong_model, _sine, bandwidth=c)
        q0, qd0, _ = _sine(0.0)
        r = _sim(plant, ctl, q0, qd0, 3.0)
        e = np.array([_sine(t)[0] for t in r.t]) - r.q
        errs.append(np.abs(e).max())
    assert errs[0] > 1e-3  # the mismatch shows
    assert errs[0] < 0.2  # and stays bounded
    assert errs[1] < errs[0] / 5  # stiffer error dynamics reject it (bound ~ 1/c²)


def test_tracking_controller_feedforward_and_pd():
    model = double_pendulum_3d()
    ctl = TrackingController(model, _sine, kp=200.0, kv=30.0)
    q0, qd0, _ = _sine(0.0)
    r = _sim(model, ctl, q0, qd0, 2.0)  # on the path, the feedforward alone is exact
    q_ref = np.array([_sine(t)[0] for t in r.t])
    assert np.abs(r.q - q_ref).max() < 1e-7
    # its torque is the inverse dynamics of the desired motion plus the PD term
    qq, vv = q0 + 0.01, qd0 - 0.02
    expected = rnea(model, *_sine(0.3)) + 200.0 * (_sine(0.3)[0] - qq) + 30.0 * (_sine(0.3)[1] - vv)
    np.testing.assert_allclose(ctl(0.3, qq, vv), expected, rtol=1e-12, atol=1e-12)
    # off the path, the PD term pulls the motion back
    r2 = _sim(model, ctl, q0 + 0.05, qd0, 2.0)
    e = np.abs(np.array([_sine(t)[0] for t in r2.t]) - r2.q).max(axis=1)
    assert e[-1] < 0.1 * e[0]


def _optimal_like_solution(model, T=1.0, n=401):
    t = np.linspace(0.0, T, n)
    q, qd, qdd = (np.stack(x, axis=0) for x in zip(*[_sine(tk) for tk in t], strict=True))
    return {"t": t, "q": q, "qd": qd, "tau": rnea(model, q, qd, qdd)}


def test_replay_open_loop_and_with_feedback():
    model = double_pendulum_3d()
    sol = _optimal_like_solution(model)
    q0, qd0 = sol["q"][0], sol["qd"][0]
    errs = []
    for kp, kv in ((0.0, 0.0), (400.0, 40.0)):
        ctl = ReplayController(sol, kp=kp, kv=kv)
        r = _sim(model, ctl, q0 + 0.01, qd0, 1.0)
        late = r.t > 0.5
        errs.append(np.abs(r.q - ctl.desired(r.t)[0])[late].max())
    assert errs[1] < errs[0] / 3  # feedback keeps the motion near the solution
    # exactly on the solution with feedback, linear interpolation of τ* is the only error
    ctl = ReplayController(sol, kp=400.0, kv=40.0)
    r = _sim(model, ctl, q0, qd0, 1.0)
    assert np.abs(r.q - ctl.desired(r.t)[0]).max() < 1e-4


def test_replay_per_phase_lists_and_previous():
    sol = {
        "t": [np.array([0.0, 1.0]), np.array([1.0, 2.0])],
        "q": [np.zeros((2, 1)), np.ones((2, 1))],
        "qd": [np.zeros((2, 1)), np.zeros((2, 1))],
        "tau": [np.array([[1.0], [2.0]]), np.array([[3.0], [4.0]])],
    }
    ctl = ReplayController(sol, interpolation="previous")
    assert ctl.torque(0.5)[0] == 1.0 and ctl.torque(1.0)[0] == 3.0 and ctl.torque(5.0)[0] == 4.0
    lin = ReplayController(sol)
    assert lin.torque(1.5)[0] == pytest.approx(3.5)


def test_desired_trajectory_spline_derivatives():
    t = np.linspace(0, 1, 41)
    traj = DesiredTrajectory(t, np.sin(2 * t)[:, None])
    q, qd, qdd = traj(0.37)
    assert q[0] == pytest.approx(np.sin(0.74), abs=1e-8)
    assert qd[0] == pytest.approx(2 * np.cos(0.74), abs=1e-6)
    assert qdd[0] == pytest.approx(-4 * np.sin(0.74), abs=1e-4)
    herm = DesiredTrajectory(t, np.sin(2 * t), qd=2 * np.cos(2 * t))
    assert herm(0.37)[1][0] == pytest.approx(2 * np.cos(0.74), abs=1e-5)
    # held outside the samples
    q, qd, _ = traj(2.0)
    assert q[0] == pytest.approx(np.sin(2.0)) and qd[0] == 0.0


def test_bad_input():
    model = double_pendulum_3d()
    with pytest.raises(DataError, match="kp"):
        PIDController([0.0], kp=-1.0)
    with pytest.raises(DataError, match="bandwidth"):
        ComputedTorqueController(model, np.zeros(4), bandwidth=1.0, kp=1.0)
    with pytest.raises(DataError, match="coordinates"):
        ComputedTorqueController(model, np.zeros(3), bandwidth=1.0)
    with pytest.raises(DataError, match="shape"):
        PIDController([0.0, 0.0], kp=1.0)(0.0, np.zeros(3), np.zeros(3))
    with pytest.raises(DataError, match="increasing"):
        DesiredTrajectory([0.0, 0.0, 1.0], np.zeros((3, 1)))
    with pytest.raises(DataError, match="no attribute 't'"):
        ReplayController(object())
    with pytest.raises(DataError, match="interpolation"):
        ReplayController(_optimal_like_solution(model, n=5), interpolation="cubic")
    quat = Model()
    quat.add_body("b", "ground", "spherical", mass=1.0, inertia=np.eye(3))
    with pytest.raises(ModelError, match="nq == nv"):
        TrackingController(quat, np.zeros(3), kp=1.0, kv=1.0)
