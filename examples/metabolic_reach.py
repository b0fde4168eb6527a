"""Minimum effort against minimum metabolic energy: a predicted muscle-driven reach.

1. Task: the arm model (:func:`ahbm.models.arm_model`, six Holzbaur et al. 2005 muscles,
   De Groote et al. 2016 rigid-tendon muscles and activation dynamics) reaches in the
   horizontal plane (gravity along the joint axes, as on a planar manipulandum) from
   shoulder 0.2 / elbow 0.4 rad to shoulder 0.7 / elbow 1.5 rad in 0.8 s, in static
   equilibrium at both ends (``q̇ = q̈ = 0``: the muscles hold the postures against their
   passive forces); nothing else prescribes the motion. The elbow does not hyperextend.
2. Two optimal-control problems (:class:`ahbm.optimize.MuscleDrivenPhase`,
   Hermite–Simpson collocation, IPOPT) with the same bounds (activations and
   excitations in [0.01, 1]) and a penalty on two small reserve torques
   ``10 Σ (τ / 1 N m)²``:

   - **effort**: ``∫ Σ a² dt`` (:class:`ahbm.optimize.MuscleEffort`);
   - **metabolic**: ``0.1 ∫ Σ Ė dt`` (:class:`ahbm.optimize.MetabolicCost`), the smooth
     Umberger (2010) model with Uchida et al.'s (2016) options (OpenSim's defaults),
     warm-started from the effort solution.
3. Both solutions are evaluated with the sharp Umberger and Bhargava et al. (2004) models
   (:func:`ahbm.optimize.metabolic_rates`, the formulas of OpenSim 4.6's probes): the
   metabolic solution must spend less metabolic energy than the effort solution, and the
   effort solution less activation effort than the metabolic one.

Writes ``metabolic_reach.png``, ``metabolic_reach.csv`` (whole-body rates along time)
and ``metabolic_reach.json`` (the figures) to OUTPUT_FOLDER.

Usage: ``python examples/metabolic_reach.py [OUTPUT_FOLDER] [--quick]``
(``--quick``: 21 nodes and a looser tolerance instead of 51 nodes).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from ahbm.models.arm import arm_model
from ahbm.optimize import (
    Effort,
    MetabolicCost,
    MuscleDrivenPhase,
    MuscleEffort,
    metabolic_rates,
    solve,
)

Q_START = np.array([0.2, 0.4])
Q_END = np.array([0.7, 1.5])
DURATION = 0.8
Q_BOUNDS = ([-0.5, 0.0], [1.5, 2.3])  # the elbow does not hyperextend (rad)
ACTIVATION_BOUNDS = (0.01, 1.0)
METABOLIC_WEIGHT = 0.1  # per J: the cost is about 1, as the effort's


def _phase(model, nodes, objective):
    return MuscleDrivenPhase(
        model,
        nodes=nodes,
        duration=DURATION,
        reserves=["shoulder", "elbow"],
        tau_bounds=(-5.0, 5.0),
        activation_bounds=ACTIVATION_BOUNDS,
        q_bounds=Q_BOUNDS,
        objectives=[objective, Effort(weight=10.0, name="reserve_effort")],
        initial={"q": Q_START, "qd": [0.0, 0.0], "qdd": [0.0, 0.0]},
        final={"q": Q_END, "qd": [0.0, 0.0], "qdd": [0.0, 0.0]},
    )


def _effort(P) -> float:
    """``∫ Σ a² dt`` on the grid (trapezoidal), s."""
    a2 = (P.muscles["activations"] ** 2).sum(axis=1)
    return float(np.sum(np.diff(P.t) * (a2[1:] + a2[:-1]) / 2))


def run(out: Path | None, quick: bool = False) -> dict:
    """Solve both problems; return the figures (and write the files when `out` is given)."""
    model = arm_model()
    model.gravity = (0.0, 0.0, -9.81)  # along the joint axes: a reach in the horizontal plane
    nodes = 21 if quick else 51
    tol = 1e-6 if quick else 1e-8
    phases = {
        "effort": _phase(model, nodes, MuscleEffort(exponent=2)),
        "metabolic": _phase(model, nodes, MetabolicCost(weight=METABOLIC_WEIGHT)),
    }
    results, evaluated, numbers = {}, {}, {"nodes": nodes, "quick": bool(quick)}
    t_start = time.perf_counter()
    for name, ph in phases.items():
        guess = results.get("effort")  # the metabolic problem starts from the effort optimum
        r = solve(ph, method="hermite-simpson", guess=guess, tol=tol, verbose=False)
        P = r.phases[0]
        results[name] = r
        rates = {em: metabolic_rates(ph, P, energy_model=em)
                 for em in ("umberger2010", "bhargava2004")}  # fmt: skip
        evaluated[name] = rates
        u = rates["umberger2010"]
        numbers[name] = {
            "success": bool(r.success),
            "status": r.status,
            "iterations": int(r.iterations),
            "solve_time_s": float(r.wall_time),
            "build_time_s": float(r.build_time),
            "constraint_violation": float(r.constraint_violation),
            "cost_terms": {k: float(v) for k, v in r.cost_terms.items()},
            "final_error_rad": float(np.abs(P.q[-1] - Q_END).max()),
            "activation_effort": _effort(P),
            "energy_umberger_J": u.energy,
            "energy_bhargava_J": rates["bhargava2004"].energy,
            "energy_per_muscle_umberger_J": dict(
                zip(u.muscle_names, u.energy_per_muscle.tolist(), strict=True)
            ),
            "peak_rate_umberger_W": float(u.total.max()),
            "max_reserve_Nm": float(np.abs(P.muscles["reserves"]).max()),
            "max_muscle_torque_Nm": float(np.abs(P.muscles["muscle_torques"]).max()),
            "peak_activation": float(P.muscles["activations"].max()),
        }
    numbers["total_time_s"] = time.perf_counter() - t_start
    e, m = numbers["effort"], numbers["metabolic"]
    numbers["energy_saving_umberger"] = 1.0 - m["energy_umberger_J"] / e["energy_umberger_J"]
    numbers["energy_saving_bhargava"] = 1.0 - m["energy_bhargava_J"] / e["energy_bhargava_J"]
    numbers["effort_increase"] = m["activation_effort"] / e["activation_effort"] - 1.0
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        _write_json(out / "metabolic_reach.json", numbers)
        _write_csv(out / "metabolic_reach.csv", evaluated)
        _figure(out / "metabolic_reach.png", results, evaluated)
    numbers["_results"] = results
    numbers["_phases"] = phases
    numbers["_rates"] = evaluated
    return numbers


def _replace(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        write(fh)
    os.replace(tmp, path)


def _write_json(path, numbers):
    _replace(path, lambda fh: json.dump(numbers, fh, indent=2))


def _write_csv(path, evaluated):
    t = evaluated["effort"]["umberger2010"].t
    cols = {"time_s": t}
    for name, rates in evaluated.items():
        for em, r in rates.items():
            cols[f"{name}_{em}_W"] = r.total
    rows = np.column_stack(list(cols.values()))

    def write(fh):
        w = csv.writer(fh)
        w.writerow(list(cols))
        w.writerows([f"{v:.6g}" for v in row] for row in rows)

    _replace(path, write)


def _figure(path, results, evaluated):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    styles = {"effort": "-", "metabolic": "--"}
    ax = axes[0, 0]
    for name, r in results.items():
        P = r.phases[0]
        for j, joint in enumerate(("shoulder", "elbow")):
            ax.plot(P.t, np.degrees(P.q[:, j]), styles[name], color=f"C{j}",
                    label=f"{joint}, min {name}")  # fmt: skip
    ax.set_ylabel("joint angle (deg)")
    ax.legend(fontsize=8)
    ax.set_title("Reach: minimum effort (solid) vs minimum metabolic energy (dashed)",
                 fontsize=10)  # fmt: skip
    for k, name in enumerate(results):
        ax = axes[1, k]
        P = results[name].phases[0]
        for i, m in enumerate(P.muscles["names"]):
            ax.plot(P.t, P.muscles["activations"][:, i], styles[name], color=f"C{i}", label=m)
        ax.set_ylim(0.0, None)
        ax.set_ylabel(f"activation (min {name})")
        ax.set_xlabel("time (s)")
        ax.legend(fontsize=7, ncol=3)
    ax = axes[0, 1]
    for name, rates in evaluated.items():
        for em, color in (("umberger2010", "k"), ("bhargava2004", "C3")):
            r = rates[em]
            ax.plot(r.t, r.total, styles[name], color=color,
                    label=f"min {name}, {em}: {r.energy:.2f} J")  # fmt: skip
    ax.set_ylabel("metabolic rate of the muscles (W)")
    ax.set_xlabel("time (s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out/examples", type=Path)
    parser.add_argument("--quick", action="store_true", help="21 nodes, looser tolerance")
    args = parser.parse_args(argv)
    numbers = run(args.out, quick=args.quick)
    for k, v in numbers.items():
        if not k.startswith("_"):
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
