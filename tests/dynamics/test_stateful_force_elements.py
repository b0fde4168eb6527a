"""Stateful force elements in simulate (ahbm.dynamics.StatefulForceElement): states
integrated with q and qd, checked against closed-form solutions, with constraints, events
and output times; bad elements raise DataError."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from ahbm.dynamics import (
    PrescribedCoordinate,
    SimulationEvent,
    StatefulForceElement,
    coordinate_event,
    simulate,
    total_generalized_force,
)
from ahbm.errors import DataError, SimulationError
from ahbm.kinematics.tree import Model

M, T, F0 = 2.0, 0.3, 5.0  # kg, s, N


class Decay(StatefulForceElement):
    """A force F on coordinate 0 that decays, Ḟ = -F/T, and the integral of q0 (I = q0)."""

    def __init__(self, name="decay", f0=F0):
        self.name, self.f0 = name, f0

    state_names = ("decay.force", "decay.integral")

    def initial_state(self, model, q, qd, *, t=0.0):
        return np.array([self.f0, 0.0])

    def state_derivative(self, model, q, qd, s, *, t=0.0):
        s = self.check_state(s)
        return np.stack([-s[..., 0] / T, np.broadcast_to(np.asarray(q)[..., 0], s.shape[:-1])], -1)

    def generalized_force(self, model, q, qd, *, t=0.0, kin=None, s=None):
        s = self.check_state(s)
        tau = np.zeros(s.shape[:-1] + (model.nv,))
        tau[..., 0] = s[..., 0]
        return tau


def _slider(mass=M):
    m = Model("slider", gravity=(0.0, 0.0, 0.0))
    m.add_body("a", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=mass)
    return m


def _closed_form(t, q0, v0, mass=M):
    """q, qd, F and ∫q dt of the slider under the decaying force."""
    e = np.exp(-t / T)
    k = F0 * T / mass
    q = q0 + v0 * t + k * (t - T * (1 - e))
    qd = v0 + k * (1 - e)
    integral = q0 * t + v0 * t**2 / 2 + k * (t**2 / 2 - T * t + T**2 * (1 - e))
    return q, qd, F0 * e, integral


@pytest.mark.parametrize("method", ["RK45", "LSODA", "Radau"])
def test_states_integrated_with_the_motion_match_the_closed_form(method):
    m = _slider()
    r = simulate(m, (0.0, 1.0), [0.1], [-0.2], forces=[Decay()], method=method,
                 rtol=1e-10, atol=1e-12)  # fmt: skip
    q, qd, f, integral = _closed_form(r.t, 0.1, -0.2)
    assert r.force_state_names == {"decay": ("decay.force", "decay.integral")}
    s = r.force_states["decay"]
    assert s.shape == (r.t.size, 2)
    np.testing.assert_allclose(r.q[:, 0], q, atol=1e-8)
    np.testing.assert_allclose(r.qd[:, 0], qd, atol=1e-8)
    np.testing.assert_allclose(s[:, 0], f, atol=1e-8)
    np.testing.assert_allclose(s[:, 1], integral, atol=1e-8)
    np.testing.assert_allclose(r.qdd[:, 0], f / M, atol=1e-7)  # accelerations use the states
    df = r.to_dataframe()
    np.testing.assert_array_equal(df["decay.integral"], s[:, 1])


def test_output_times_interpolate_the_states():
    m = _slider()
    te = np.linspace(0.0, 0.8, 9)
    r = simulate(m, (0.0, 0.8), [0.0], None, forces=[Decay()], t_eval=te, rtol=1e-10,
                 atol=1e-12)  # fmt: skip
    np.testing.assert_array_equal(r.t, te)
    np.testing.assert_allclose(r.force_states["decay"][:, 0], F0 * np.exp(-te / T), atol=1e-8)
    # per-state absolute tolerances: q, qd, then the two states
    r2 = simulate(m, (0.0, 0.8), [0.0], None, forces=[Decay()], t_eval=te, rtol=1e-10,
                  atol=[1e-12, 1e-12, 1e-12, 1e-12])  # fmt: skip
    np.testing.assert_allclose(r2.q, r.q, atol=1e-9)


def test_states_with_a_constraint():
    """A second slider on the first, locked by a PrescribedCoordinate: the decaying force
    moves both masses; the constraint force is the inner mass times the acceleration."""
    m = Model("two sliders", gravity=(0.0, 0.0, 0.0))
    m.add_body("a", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=0.5)
    m.add_body("b", "a", {"type": "prismatic", "axis": [1, 0, 0]}, mass=M - 0.5)
    r = simulate(m, (0.0, 0.6), [0.0, 0.0], None, forces=[Decay()],
                 constraints=[PrescribedCoordinate("b", 0.0)], rtol=1e-10, atol=1e-12)  # fmt: skip
    q, _, f, _ = _closed_form(r.t, 0.0, 0.0)  # total mass M
    np.testing.assert_allclose(r.q[:, 0], q, atol=1e-8)
    assert np.abs(r.q[:, 1]).max() < 1e-10
    np.testing.assert_allclose(r.force_states["decay"][:, 0], f, atol=1e-8)
    # λ holds b on a: |λ| = m_b a
    np.testing.assert_allclose(np.abs(r.lam[:, 0]), (M - 0.5) * f / M, atol=1e-7)


def test_terminal_event_records_the_states():
    m = _slider()
    ev = coordinate_event(m, "a", 0.2, direction=1, terminal=True)
    r = simulate(m, (0.0, 2.0), [0.0], None, forces=[Decay()], events=[ev], rtol=1e-10,
                 atol=1e-12)  # fmt: skip
    t_hit = brentq(lambda t: _closed_form(t, 0.0, 0.0)[0] - 0.2, 1e-6, 2.0, xtol=1e-14)
    assert r.status == 1
    (log,) = r.events
    assert abs(log["t"] - t_hit) < 1e-8
    _, _, f, integral = _closed_form(log["t"], 0.0, 0.0)
    np.testing.assert_allclose(log["force_states"], [f, integral], atol=1e-8)
    np.testing.assert_allclose(r.force_states["decay"][-1], [f, integral], atol=1e-8)


def test_states_pass_an_event_action_unchanged():
    """A bounce (velocity reversed) changes the motion, not the force state F(t)."""
    m = _slider()

    def bounce(t, q, qd):
        return q, -qd

    ev = SimulationEvent(lambda t, q, qd: q[0] - 0.1, direction=1, action=bounce, name="wall")
    r = simulate(m, (0.0, 1.0), [0.0], None, forces=[Decay()], events=[ev], rtol=1e-10,
                 atol=1e-12)  # fmt: skip
    assert [e["name"] for e in r.events] == ["wall"]
    t_ev = r.events[0]["t"]
    assert np.all(r.q[r.t > t_ev + 0.05, 0] < 0.1)  # bounced back
    np.testing.assert_allclose(r.force_states["decay"][:, 0], F0 * np.exp(-r.t / T), atol=1e-8)


def test_two_stateful_elements_keep_their_own_blocks():
    m = _slider()
    r = simulate(m, (0.0, 0.5), [0.0], None, forces=[Decay("d1"), Decay("d2", f0=0.0)],
                 rtol=1e-10, atol=1e-12)  # fmt: skip
    q, _, f, integral = _closed_form(r.t, 0.0, 0.0)
    np.testing.assert_allclose(r.force_states["d1"][:, 0], f, atol=1e-8)
    np.testing.assert_allclose(r.force_states["d2"][:, 0], 0.0, atol=1e-12)
    np.testing.assert_allclose(r.force_states["d2"][:, 1], integral, atol=1e-8)


def test_bad_elements():
    m = _slider()
    with pytest.raises(DataError, match="distinct names"):
        simulate(m, (0, 0.1), [0.0], None, forces=[Decay(), Decay()])

    class Miscounted(Decay):
        n_states = 3

    with pytest.raises(DataError, match="n_states"):
        simulate(m, (0, 0.1), [0.0], None, forces=[Miscounted()])

    class BadStart(Decay):
        def initial_state(self, model, q, qd, *, t=0.0):
            return np.zeros(3)

    with pytest.raises(DataError, match="initial_state"):
        simulate(m, (0, 0.1), [0.0], None, forces=[BadStart()])

    class NaNStart(Decay):
        def initial_state(self, model, q, qd, *, t=0.0):
            return np.array([np.nan, 0.0])

    with pytest.raises(SimulationError, match="non-finite initial states") as err:
        simulate(m, (0, 0.1), [0.0], None, forces=[NaNStart()])
    assert err.value.t == 0.0

    class BadRates(Decay):
        def rates(self, model, q, qd, s, *, t=0.0):
            return np.zeros(1), np.zeros(1)

    with pytest.raises(DataError, match="rates"):
        simulate(m, (0, 0.1), [0.0], None, forces=[BadRates()])
    with pytest.raises(DataError, match="one per state"):
        simulate(m, (0, 0.1), [0.0], None, forces=[Decay()], atol=[1e-8, 1e-8])
    with pytest.raises(DataError, match="has internal states"):
        total_generalized_force(m, [Decay()], [0.0], [0.0])
    with pytest.raises(DataError, match=r"\(\.\.\., 2\)"):
        Decay().generalized_force(m, [0.0], [0.0], s=[1.0, 2.0, 3.0])
    # batched evaluation of the protocol
    s = np.array([[1.0, 0.0], [2.0, 0.0]])
    np.testing.assert_array_equal(Decay().power(m, [[0.0], [0.0]], [[1.0], [3.0]], s=s), [1, 6])


# ----------------------------------------------------------------------------
# events that see and set the element states (uses_states=True)
# ----------------------------------------------------------------------------


def test_an_event_on_an_element_state_is_located_at_its_closed_form_time():
    """F = F0 exp(-t/T) falls to F0/2 at t = T ln 2."""
    half = SimulationEvent(
        lambda t, q, qd, states: states["decay"][0] - F0 / 2,
        direction=-1, terminal=True, name="half", uses_states=True,
    )  # fmt: skip
    r = simulate(_slider(), (0.0, 1.0), [0.1], [-0.2], forces=[Decay()], events=[half],
                 rtol=1e-10, atol=1e-12)  # fmt: skip
    assert r.t[-1] == pytest.approx(T * np.log(2.0), abs=1e-9)
    assert r.events[-1]["name"] == "half"
    assert r.force_states["decay"][-1, 0] == pytest.approx(F0 / 2, abs=1e-8)


def test_an_event_on_a_state_with_constraint_forces_gets_both():
    seen = []

    def function(t, q, qd, lam, states):
        seen.append((lam.shape, sorted(states)))
        return states["decay"][0] - F0 / 2

    ev = SimulationEvent(function, direction=-1, terminal=True, uses_lambda=True, uses_states=True)
    r = simulate(_slider(), (0.0, 1.0), [0.1], [-0.2], forces=[Decay()], events=[ev],
                 rtol=1e-10, atol=1e-12)  # fmt: skip
    assert r.t[-1] == pytest.approx(T * np.log(2.0), abs=1e-9)
    assert seen and all(s == ((0,), ["decay"]) for s in seen)


def test_an_action_resets_an_element_state_and_the_others_run_on():
    """At F = F0/2 the force is set back to F0: F(1) = F0 exp(-(1 - T ln 2)/T); the
    integral of q, which the action leaves out of its dict, runs on unchanged."""
    t1 = T * np.log(2.0)

    def reset(t, q, qd, states):
        states["decay"][0] = F0
        return q, qd, {"decay": states["decay"]}

    ev = SimulationEvent(
        lambda t, q, qd, states: states["decay"][0] - F0 / 2,
        direction=-1, action=reset, max_count=1, uses_states=True, name="reset",
    )  # fmt: skip
    r = simulate(_slider(), (0.0, 1.0), [0.1], [-0.2], forces=[Decay()], events=[ev],
                 rtol=1e-10, atol=1e-12)  # fmt: skip
    log = r.events[0]
    assert log["t"] == pytest.approx(t1, abs=1e-9)
    assert log["force_states"][0] == pytest.approx(F0, abs=1e-12)  # recorded after the action
    s = r.force_states["decay"]
    assert s[-1, 0] == pytest.approx(F0 * np.exp(-(1.0 - t1) / T), abs=1e-7)
    # before the event the closed form holds; the integral is continuous across it
    before = r.t < t1 - 1e-9
    _, _, f, integral = _closed_form(r.t[before], 0.1, -0.2)
    np.testing.assert_allclose(s[before, 0], f, atol=1e-8)
    np.testing.assert_allclose(s[before, 1], integral, atol=1e-8)
    at = np.flatnonzero(np.isclose(r.t, t1, atol=1e-12))
    assert at.size >= 2 and np.ptp(s[at, 1]) < 1e-12


def test_events_with_states_and_no_stateful_element_get_an_empty_dict():
    seen = []
    ev = SimulationEvent(lambda t, q, qd, states: seen.append(states) or q[0] - 0.5,
                         direction=1, terminal=True, uses_states=True)  # fmt: skip
    r = simulate(_slider(), (0.0, 1.0), [0.0], [1.0], events=[ev])
    assert r.t[-1] == pytest.approx(0.5, abs=1e-6)
    assert seen and all(s == {} for s in seen)


@pytest.mark.parametrize(
    "returned, match",
    [
        ((0.0,), r"must return \(q, qd, states\)"),
        ([1.0], "a dict of element name"),
        ({"other": [1.0, 2.0]}, "not a stateful force element"),
        ({"decay": [1.0]}, r"must be 2 finite numbers"),
        ({"decay": [np.nan, 0.0]}, r"states\['decay'\]` contains non-finite"),
    ],
)
def test_bad_states_from_an_action_name_the_event(returned, match):
    def action(t, q, qd, states):
        return returned if isinstance(returned, tuple) else (q, qd, returned)

    ev = SimulationEvent(lambda t, q, qd, states: states["decay"][0] - F0 / 2, direction=-1,
                         action=action, uses_states=True, name="bad")  # fmt: skip
    with pytest.raises(DataError, match=rf"event 'bad'.*{match}"):
        simulate(_slider(), (0.0, 1.0), [0.1], [-0.2], forces=[Decay()], events=[ev])


def test_uses_states_must_be_a_bool():
    with pytest.raises(DataError, match="uses_states"):
        SimulationEvent(lambda t, q, qd: 0.0, uses_states="yes")
