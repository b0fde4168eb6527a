"""Collision constraints in optimal control: symbolic distances against a CasADi Callback.

Run: python benchmarks/bench_collision.py [--nodes N] [--repeat R]

The same kinematic problem is solved both ways: HeiMan's right arm
(examples/collision_free_reach.py: 4 coordinates, its 18 arm–body shape
pairs) moves between the example's two postures through ``N`` nodes,
minimizing the squared second differences of the coordinates, with
``d_k(q_j) ≥ 1 cm`` at every node ``j`` and every pair ``k``:

* **SX**: the distances as CasADi expressions
  (:func:`ahbm.optimize.distance_function`), exact Jacobian and Hessian;
* **Callback**: a ``casadi.Callback`` around the numeric distances of
  :func:`ahbm.kinematics.distances` with a second Callback for their exact
  Jacobian (``nᵀ (J1 − J2)``), in an ``MX`` graph; no Hessian of the
  distances (IPOPT's limited-memory quasi-Newton).

IPOPT stops after 300 iterations. Printed: build time (NLP and solver
construction), IPOPT's solve time, its iterations, the least distance at the
nodes, and the time of one evaluation of the distances and their Jacobian by
each (best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import casadi as ca
import numpy as np

from ahbm.kinematics import distances
from ahbm.optimize import collision_pairs, distance_function

ROOT = Path(__file__).resolve().parents[1]
MARGIN = 0.01
MAX_ITER = 300


def _example():
    path = ROOT / "examples" / "collision_free_reach.py"
    spec = importlib.util.spec_from_file_location("ahbm_example_collision_free_reach", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Distances(ca.Callback):
    """``q -> d`` by :func:`ahbm.kinematics.distances`, with an exact Jacobian Callback."""

    def __init__(self, model, pairs, name="distances"):
        ca.Callback.__init__(self)
        self.model, self.pairs = model, pairs
        self._jac = None
        self.construct(name, {"enable_fd": False})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.model.nq, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(len(self.pairs), 1)

    def eval(self, arg):
        q = np.asarray(arg[0], dtype=float).ravel()
        return [distances(self.model, q, self.pairs).distance]

    def has_jacobian(self, *args):
        return True

    def get_jacobian(self, name, inames, onames, opts):
        self._jac = _Jacobian(self.model, self.pairs, name)
        return self._jac


class _Jacobian(ca.Callback):
    def __init__(self, model, pairs, name):
        ca.Callback.__init__(self)
        self.model, self.pairs = model, pairs
        self.construct(name, {})

    def get_n_in(self):
        return 2

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.model.nq if i == 0 else len(self.pairs), 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(len(self.pairs), self.model.nq)

    def eval(self, arg):
        q = np.asarray(arg[0], dtype=float).ravel()
        return [distances(self.model, q, self.pairs).jacobian]


def _problem(model, pairs, q0, qf, nodes, how):
    """Build the NLP and its solver; return (solver, bounds, guess, distance function)."""
    nq = model.nq
    if how == "sx":
        f = distance_function(model, pairs)
        Q = ca.SX.sym("Q", nq, nodes)
        sym = Q
    else:
        f = _Distances(model, pairs)
        Q = ca.MX.sym("Q", nq, nodes)
        sym = Q
    cost = ca.sumsqr(Q[:, 2:] - 2 * Q[:, 1:-1] + Q[:, :-2]) * (nodes - 1) ** 3
    g = ca.vertcat(*[f(Q[:, j]) for j in range(1, nodes - 1)])
    w = ca.vec(sym)
    opts = {"ipopt.print_level": 0, "print_time": False, "ipopt.tol": 1e-8,
            "ipopt.max_iter": MAX_ITER}  # fmt: skip
    if how != "sx":
        opts["ipopt.hessian_approximation"] = "limited-memory"
    solver = ca.nlpsol("s", "ipopt", {"x": w, "f": cost, "g": g}, opts)
    lbx = np.full((nq, nodes), -np.inf)
    ubx = np.full((nq, nodes), np.inf)
    lbx[:, 0] = ubx[:, 0] = q0
    lbx[:, -1] = ubx[:, -1] = qf
    s = np.linspace(0.0, 1.0, nodes)[None, :]
    guess = q0[:, None] + s * (qf - q0)[:, None]
    bounds = {
        "lbx": lbx.T.ravel(),
        "ubx": ubx.T.ravel(),
        "lbg": MARGIN,
        "ubg": np.inf,
    }
    return solver, bounds, guess.T.ravel(), f  # the Callback must outlive the solver


def run(nodes: int, repeat: int) -> dict:
    ex = _example()
    model = ex.collision_model()
    q0, qf = ex.posture(model, ex.START), ex.posture(model, ex.END)
    pairs = [p for p in collision_pairs(model) if any(n.endswith("_r") and "thigh" not in n
                                                      for n in p)]  # fmt: skip
    out = {"nodes": nodes, "pairs": len(pairs)}
    for how in ("sx", "callback"):
        best = None
        for _ in range(repeat):
            model.cache.clear()
            t0 = time.perf_counter()
            solver, bounds, guess, keep = _problem(model, pairs, q0, qf, nodes, how)
            t1 = time.perf_counter()
            sol = solver(x0=guess, **bounds)
            t2 = time.perf_counter()
            stats = solver.stats()
            Q = np.asarray(sol["x"]).reshape(nodes, model.nq)
            row = {
                "build_s": t1 - t0,
                "solve_s": t2 - t1,
                "iterations": stats["iter_count"],
                "status": stats["return_status"],
                "min_distance": float(distances(model, Q, pairs).distance.min()),
                "cost": float(sol["f"]),
            }
            del keep
            if best is None or row["build_s"] + row["solve_s"] < best["build_s"] + best["solve_s"]:
                best = row
        out[how] = best
    # one evaluation of the distances and their Jacobian
    q = 0.5 * (q0 + qf)
    f = distance_function(model, pairs)
    x = ca.SX.sym("q", model.nq)
    fj = ca.Function("fj", [x], [f(x), ca.jacobian(f(x), x)])
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        fj(q)
    out["sx_eval_us"] = (time.perf_counter() - t0) / n * 1e6
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        distances(model, q, pairs)
    out["numeric_eval_us"] = (time.perf_counter() - t0) / n * 1e6
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=21)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    out = run(args.nodes, args.repeat)
    print(f"nodes {out['nodes']}, pairs {out['pairs']}")
    for how in ("sx", "callback"):
        r = out[how]
        print(f"{how:9s} build {r['build_s']:.2f} s  solve {r['solve_s']:.2f} s  "
              f"iterations {r['iterations']}  {r['status']}  min distance "
              f"{100 * r['min_distance']:.4f} cm  cost {r['cost']:.4f}")  # fmt: skip
    print(
        f"one evaluation of d and its Jacobian: SX {out['sx_eval_us']:.0f} us, "
        f"numeric (what the Callback runs) {out['numeric_eval_us']:.0f} us"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
