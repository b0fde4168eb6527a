"""Timing of ahbm.optimize: Chung's pendulum suite, the 2-D predictive walk, and Moco.

Run: python benchmarks/bench_optimize.py [--repeat N] [--no-walk] [--no-moco]

1. Chung's pendulum suite (examples/pendulum_predictive.py: cases 1–4, ∫τ²) with
   each transcription: total time (transcription + IPOPT setup + solve, as a user
   waits for ``solve``), IPOPT's solve time and iterations; target < 1 s per case.
2. The 2-D predictive walk (examples/predictive_walking_2d.py, full size, from a
   standing guess): total time and iterations; target < 2 minutes.
3. The shared torque-driven swing-up (tests/peers/test_moco_pendulum.py) solved by
   OpenSim Moco (in a child process; ``opensim`` cannot share an interpreter with
   casadi) and by ahbm on the same machine, both Hermite–Simpson with 50 mesh
   intervals; Moco's time is its ``MocoStudy.solve()`` call (best of
   ``--repeat``), ahbm's the whole ``solve`` (best of ``--repeat``). The ratio
   Moco / ahbm is printed (> 1: ahbm faster); target ≥ 1.

Best of ``--repeat`` runs everywhere, so that a busy machine disturbs less.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _best(fun, repeat):
    """(best wall time s, its result, the CPU time s of that run)."""
    best, out, cpu = np.inf, None, np.nan
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fun()
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if dt < best:
            best, out, cpu = dt, res, dc
    return best, out, cpu


def bench_pendulum(repeat: int) -> list:
    """Rows (case, method, total s, solve s, iterations, success) of Chung's suite."""
    from ahbm.optimize import Effort, solve

    ex = _load(ROOT / "examples" / "pendulum_predictive.py", "ahbm_example_pendulum_predictive")
    rows = []
    for case, (T, _, _) in ex.CASES.items():
        nodes = 31 if T < 1 else 91
        for name, method in ex.METHODS.items():
            phase = ex.predictive_phase(case, [Effort()], nodes=nodes)
            total, res, cpu = _best(lambda: solve(phase, method=method, verbose=False), repeat)  # noqa: B023
            rows.append((case, name, total, cpu, res.wall_time, res.iterations, res.success))
    return rows


def bench_walk() -> dict:
    ex = _load(ROOT / "examples" / "predictive_walking_2d.py", "ahbm_example_predictive_walk")
    return ex.run(None, quick=False)


def bench_moco(repeat: int) -> dict:
    from test_moco_pendulum import ahbm_swing_up, moco_swing_up

    from ahbm.optimize import MultipleShooting

    moco = moco_swing_up(intervals=50, scheme="hermite-simpson", repeat=repeat)
    out = {"moco": moco, "ahbm": {}}
    for label, method, nodes in (
        ("hermite-simpson", "hermite-simpson", 51),
        ("multiple-shooting", MultipleShooting(steps=4), 51),
        ("bspline", "bspline", 51),
    ):
        total, res, _ = _best(lambda: ahbm_swing_up(method, nodes=nodes), repeat)  # noqa: B023
        out["ahbm"][label] = (total, res)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-walk", action="store_true", help="skip the 2-D predictive walk")
    parser.add_argument("--no-moco", action="store_true", help="skip OpenSim Moco")
    args = parser.parse_args(argv)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"Chung's pendulum suite (∫τ², best of {args.repeat}): total = transcription + IPOPT "
          "setup + solve (wall and CPU), IPOPT's solve alone")  # fmt: skip
    print(f"  {'case':4s} {'method':18s} {'total':>9s} {'CPU':>9s} {'IPOPT':>9s} {'iter':>5s}")
    rows = bench_pendulum(args.repeat)
    for case, name, total, cpu, wall, iters, ok in rows:
        flag = "" if ok else "  (failed)"
        print(f"  {case:<4d} {name:18s} {total * 1e3:6.0f} ms {cpu * 1e3:6.0f} ms "
              f"{wall * 1e3:6.1f} ms {iters:5d}{flag}")  # fmt: skip
    worst, worst_cpu = max(r[2] for r in rows), max(r[3] for r in rows)
    print(f"  slowest case: {worst:.2f} s wall, {worst_cpu:.2f} s CPU (target < 1 s: "
          f"{'met' if worst < 1 else 'NOT met'})")  # fmt: skip

    if not args.no_walk:
        w = bench_walk()
        print("2-D predictive walk (full size, from standing):")
        print(f"  total {w['total_time']:.1f} s (build {w['build_time']:.1f} s, solve "
              f"{w['solve_time']:.1f} s), {w['iterations']} iterations, success {w['success']}; "
              f"target < 120 s: {'met' if w['total_time'] < 120 else 'NOT met'}")  # fmt: skip

    if not args.no_moco:
        m = bench_moco(args.repeat)
        moco = m["moco"]
        print(f"Shared swing-up, Hermite-Simpson, 50 intervals (best of {args.repeat}):")
        print(f"  Moco  {moco['wall'] * 1e3:8.0f} ms  {moco['iterations']:4d} it  "
              f"cost {moco['cost']:.6f}")  # fmt: skip
        for label, (total, res) in m["ahbm"].items():
            ratio = moco["wall"] / total
            print(f"  ahbm  {total * 1e3:8.0f} ms  {res.iterations:4d} it  cost {res.cost:.6f}"
                  f"  ({label}; Moco/ahbm = {ratio:.1f}x)")  # fmt: skip
        hs = m["ahbm"]["hermite-simpson"][0]
        print(f"  same scheme: Moco / ahbm = {moco['wall'] / hs:.1f}x "
              f"(target >= 1: {'met' if moco['wall'] >= hs else 'NOT met'})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
