"""The metabolic reach example (examples/metabolic_reach.py), at its quick size.

References: the sharp energy models fed by the numeric muscle functions (paths,
muscle_equilibrium, active_force_length) on each solution; the ordering that each
optimum implies (the metabolic optimum spends less metabolic energy, the effort optimum
less activation effort).
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from ahbm.muscles import (
    MetabolicParameters,
    MetabolicSmoothing,
    MuscleParameters,
    active_force_length,
    bhargava2004_metabolics,
    lengthening_speeds,
    muscle_equilibrium,
    muscle_lengths,
    umberger2010_metabolics,
)

pytest.importorskip("casadi")

from ahbm.optimize import metabolic_rates  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    spec = importlib.util.spec_from_file_location(
        "ahbm_example_metabolic_reach", EXAMPLES / "metabolic_reach.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path_factory.mktemp("metabolic_reach")
    return mod, out, mod.run(out, quick=True)


def test_both_problems_converge_to_the_task(quick):
    mod, _, n = quick
    for name in ("effort", "metabolic"):
        s = n[name]
        assert s["success"], s["status"]
        assert s["constraint_violation"] < 1e-6
        assert s["final_error_rad"] < 1e-6
        assert s["max_reserve_Nm"] < 0.2 < s["max_muscle_torque_Nm"]  # the muscles move it
        P = n["_results"][name].phases[0]
        a = P.muscles["activations"]
        assert a.min() >= mod.ACTIVATION_BOUNDS[0] - 1e-6 and a.max() <= 1 + 1e-6
        np.testing.assert_allclose(P.qd[[0, -1]], 0.0, atol=1e-6)


def test_each_optimum_wins_its_own_criterion(quick):
    _, _, n = quick
    e, m = n["effort"], n["metabolic"]
    assert 0 < m["energy_umberger_J"] < e["energy_umberger_J"]
    assert n["energy_saving_umberger"] > 0.03  # a real difference, not round-off
    assert 0 < e["activation_effort"] < m["activation_effort"]
    # the other energy model, not optimized, agrees on the ordering
    assert 0 < m["energy_bhargava_J"] < e["energy_bhargava_J"]


def test_reported_rates_are_the_sharp_models_of_the_solutions(quick):
    _, _, n = quick
    for name in ("effort", "metabolic"):
        r, ph = n["_results"][name], n["_phases"][name]
        P = r.phases[0]
        model = ph.model
        mp = MuscleParameters.from_muscles(model.muscles)
        dg = mp.resolved("degroote2016")
        met = MetabolicParameters(max_isometric_force=dg.max_isometric_force,
                                  optimal_fiber_length=dg.optimal_fiber_length,
                                  max_contraction_velocity=dg.max_contraction_velocity)  # fmt: skip
        a = P.muscles["activations"].clip(0.0)
        e = P.muscles["excitations"].clip(0.0)
        s = muscle_equilibrium(mp, a, muscle_lengths(model, P.q),
                               lengthening_speeds(model, P.q, P.qd), curves="degroote2016",
                               rigid_tendon=True)  # fmt: skip
        fl = active_force_length(s.normalized_fiber_length, curves="degroote2016", params=mp)
        fiber = (s.normalized_fiber_length, s.fiber_velocity, s.active_fiber_force)
        um = umberger2010_metabolics(met, e, a, *fiber, fl)
        bh = bhargava2004_metabolics(met, e, a, *fiber, s.fiber_force, fl)
        got = n["_rates"][name]
        np.testing.assert_allclose(got["umberger2010"].rates.total, um.total, rtol=1e-10,
                                   atol=1e-9)  # fmt: skip
        np.testing.assert_allclose(got["bhargava2004"].rates.total, bh.total, rtol=1e-10,
                                   atol=1e-9)  # fmt: skip
        for em, ref in (("umberger2010", um), ("bhargava2004", bh)):
            w = ref.total.sum(axis=1)
            energy = np.sum(np.diff(P.t) * (w[1:] + w[:-1]) / 2)
            assert n[name][f"energy_{em[:-4]}_J"] == pytest.approx(energy, rel=1e-10)
        # the objective is the smooth model: its value is near the sharp energy
        if name == "metabolic":
            smooth = metabolic_rates(ph, P, smoothing=MetabolicSmoothing())
            cost = r.cost_terms["metabolic_cost"] / 0.1
            assert cost == pytest.approx(smooth.energy, rel=0.02)  # nodes vs Simpson
            assert smooth.energy == pytest.approx(n[name]["energy_umberger_J"], rel=0.1)


def test_files_are_written(quick):
    _, out, n = quick
    assert (out / "metabolic_reach.png").stat().st_size > 5000
    saved = json.loads((out / "metabolic_reach.json").read_text())
    assert saved["metabolic"]["energy_umberger_J"] == n["metabolic"]["energy_umberger_J"]
    assert not any(k.startswith("_") for k in saved)
    with open(out / "metabolic_reach.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "time_s" and len(rows[0]) == 5
    assert len(rows) == n["nodes"] + 1
    col = rows[0].index("metabolic_umberger2010_W")
    total = n["_rates"]["metabolic"]["umberger2010"].total
    np.testing.assert_allclose([float(r[col]) for r in rows[1:]], total, rtol=1e-5)
