"""Muscle outputs of muscle-driven solutions in Trials (ahbm.io.trial_from_solution).

References: numpy's linear interpolation of the result's grid values, the numeric
muscle model (ahbm.muscles.muscle_equilibrium on the solution's states), the identity
``τ = Rᵀ F + τ_reserve``, and an HDF5 round trip.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ahbm.io import load_trial, save_trial, trial_from_solution
from ahbm.kinematics.tree import Model
from ahbm.muscles import MuscleParameters, lengthening_speeds, muscle_equilibrium, muscle_lengths

pytest.importorskip("casadi")

from test_muscle_driven import _reach_phase  # noqa: E402  (tests/optimize is on sys.path)

from ahbm.optimize import Effort, Phase, solve  # noqa: E402


@pytest.fixture(scope="module")
def reach():
    """A 0.5 s reach of the arm by its muscles (11 nodes, 0.05 s apart)."""
    m, _, _, ph = _reach_phase()
    r = solve(ph, method="trapezoidal", verbose=False)
    assert r.success, r.status
    return m, r


def test_trial_keeps_the_muscle_outputs(reach, tmp_path):
    m, r = reach
    P = r.phases[0]
    names = P.muscles["names"]
    trial = trial_from_solution(r, rate=100.0)
    n = trial.points.shape[0]
    assert n == 51 and trial.analog_rate == 100.0 and trial.analogs.shape == (n, 5 * len(names))
    assert trial.parameters["OPTIMAL_CONTROL"]["MUSCLES"] == names
    k = trial.analog_labels.index(f"{names[1]}.force")
    assert trial.analog_units[k] == "N"
    assert trial.analog_units[trial.analog_labels.index(f"{names[0]}.activation")] == ""
    assert trial.analog_units[trial.analog_labels.index(f"{names[0]}.speed")] == "m/s"
    ts = trial.results["time"]
    # every channel: the grid values linearly interpolated at the trial's times
    channels = [("activations", "activation"), ("excitations", "excitation"),
                ("forces", "force"), ("lengths", "length"), ("speeds", "speed")]  # fmt: skip
    for key, suffix in channels:
        for j, mus in enumerate(names):
            col = trial.analogs[:, trial.analog_labels.index(f"{mus}.{suffix}")]
            np.testing.assert_allclose(col, np.interp(ts, P.t, P.muscles[key][:, j]), atol=1e-12)
    # at the nodes (every 5th sample) the forces are the numeric muscle model's at those states
    node = slice(0, None, 5)
    q, qd = trial.results["q"][node], trial.results["qd"][node]
    a = trial.analogs[node][:, [trial.analog_labels.index(f"{x}.activation") for x in names]]
    F = muscle_equilibrium(MuscleParameters.from_muscles(m.muscles), a, muscle_lengths(m, q),
                           lengthening_speeds(m, q, qd), curves="degroote2016",
                           rigid_tendon=True).tendon_force  # fmt: skip
    forces = trial.analogs[node][:, [trial.analog_labels.index(f"{x}.force") for x in names]]
    np.testing.assert_allclose(forces, F, rtol=1e-10, atol=1e-8)
    assert forces.max() > 1.0
    # the joint torques are the muscles' plus the reserves (linear, so at every sample)
    res = trial.results
    np.testing.assert_allclose(res["tau"], res["muscle_torques"] + res["reserves"], atol=1e-10)
    # HDF5 round trip keeps channels, units and results
    save_trial(trial, tmp_path / "reach.h5")
    back = load_trial(tmp_path / "reach.h5")
    assert back.analog_labels == trial.analog_labels and back.analog_units == trial.analog_units
    np.testing.assert_allclose(back.analogs, trial.analogs)
    np.testing.assert_allclose(back.results["reserves"], res["reserves"])


def test_torque_driven_trial_has_no_muscle_channels():
    m = Model(gravity=(0, 0, 0))
    m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0,
               markers={"M": [0, 0, 0]})  # fmt: skip
    ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
               initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})  # fmt: skip
    r = solve(ph, verbose=False)
    assert r.muscle_outputs() == ([], {})
    trial = trial_from_solution(r, rate=50.0)
    assert trial.analogs.size == 0 and "MUSCLES" not in trial.parameters["OPTIMAL_CONTROL"]
    assert "muscles" not in r.resample(50.0) and "reserves" not in trial.results


def test_phases_without_muscles_are_nan(reach):
    """A torque-driven phase after the muscle-driven one (and one with fewer muscles)."""
    _, r = reach
    P = r.phases[0]
    names = P.muscles["names"]
    later = replace(P, name="torque", t=P.t + P.duration, muscles={})
    keys = ("activations", "forces", "reserves")
    fewer = {k: (v if k == "reserves" else v[:, 1:]) for k, v in P.muscles.items() if k in keys}
    fewer["names"] = names[1:]
    third = replace(P, name="fewer", t=P.t + 2 * P.duration, muscles=fewer)
    two = replace(r, phases=[P, later, third])
    got_names, out = two.muscle_outputs()
    assert got_names == names
    n = P.t.size
    np.testing.assert_array_equal(out["activations"][:n], P.muscles["activations"])
    assert (
        np.isnan(out["activations"][n : 2 * n]).all() and np.isnan(out["reserves"][n : 2 * n]).all()
    )
    np.testing.assert_array_equal(out["forces"][2 * n :, 1:], P.muscles["forces"][:, 1:])
    assert np.isnan(out["forces"][2 * n :, 0]).all() and np.isnan(out["speeds"][2 * n :]).all()
    trial = trial_from_solution(two, rate=100.0)
    col = trial.analogs[:, trial.analog_labels.index(f"{names[0]}.activation")]
    t = trial.results["time"]
    assert np.isfinite(col[t <= P.t[-1]]).all() and np.isnan(col[t > P.t[-1] + 1e-9]).all()
