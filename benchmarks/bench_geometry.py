"""Benchmark swept-sphere distances: capsule pairs over a whole trial against coal.

Measured in the same run:

1. ``ahbm.kinematics.ssv_distance`` on N frames × P capsule pairs (random
   segments and radii; distance, witness points, normals and gradients) in
   one vectorized call, against a Python loop of ``coal.distance`` over the
   same N × P capsule pairs (the coal shapes and transforms are built before
   the clock starts; one ``DistanceRequest``/``DistanceResult`` reused).
   The printed ratio is coal's time over ahbm's (above 1: ahbm is faster).
2. For information, ``ahbm.kinematics.distances`` on the human15 model with
   capsules on its segments: forward kinematics, P pairs and the Jacobians
   ∂d/∂q over N frames (no peer).

Times are CPU times (``time.process_time``), best of several repeats for
ahbm and one run of the coal loop (it takes seconds). Run:
``python benchmarks/bench_geometry.py [--frames 10000] [--pairs 20]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
from bench_markers import best_cpu  # the script's folder is on the import path

from ahbm.kinematics import CollisionShape, distances, random_q, ssv_distance
from ahbm.models import human15

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "peers"))
from test_coal_distances import capsule  # noqa: E402  (a segment as a coal capsule)


def coal_capsules(P, r):
    """coal capsules and transforms of segments P (..., 2, 3) with radii r (...)."""
    return [
        capsule(a, b, float(radius))
        for (a, b), radius in zip(P.reshape(-1, 2, 3), np.ravel(r), strict=True)
    ]


def capsule_benchmark(n_frames: int, n_pairs: int, rng) -> dict:
    import coal

    P1 = rng.normal(size=(n_frames, n_pairs, 2, 3))
    P2 = rng.normal(size=(n_frames, n_pairs, 2, 3)) + rng.normal(size=(1, n_pairs, 1, 3))
    r1 = rng.uniform(0.02, 0.1, (n_frames, n_pairs))
    r2 = rng.uniform(0.02, 0.1, (n_frames, n_pairs))
    t_ahbm, res = best_cpu(lambda: ssv_distance(P1, r1, P2, r2))

    g1 = coal_capsules(P1, r1)
    g2 = coal_capsules(P2, r2)
    req = coal.DistanceRequest()
    out = coal.DistanceResult()
    d_coal = np.empty(len(g1))
    t0 = time.process_time()
    for k in range(len(g1)):
        out.clear()
        d_coal[k] = coal.distance(g1[k][0], g1[k][1], g2[k][0], g2[k][1], req, out)
    t_coal = time.process_time() - t0
    err = float(np.abs(d_coal - res.distance.ravel()).max())
    return {"ahbm": t_ahbm, "coal": t_coal, "ratio": t_coal / t_ahbm, "max_difference": err}


def model_benchmark(n_frames: int, n_pairs: int, rng) -> dict:
    m = human15(height=1.8, mass=75.0)
    segments = {
        "thorax": ([0, 0, -0.1], [0, 0, 0.1], 0.13),
        "abdomen": ([0, 0, 0.02], [0, 0, 0.15], 0.12),
        "head": ([0, 0, 0.05], [0, 0, 0.15], 0.09),
        "upper_arm_r": ([0, 0, -0.03], [0, 0, -0.27], 0.045),
        "forearm_r": ([0, 0, -0.02], [0, 0, -0.25], 0.035),
        "upper_arm_l": ([0, 0, -0.03], [0, 0, -0.27], 0.045),
        "forearm_l": ([0, 0, -0.02], [0, 0, -0.25], 0.035),
        "thigh_r": ([0, 0, -0.05], [0, 0, -0.4], 0.055),
        "thigh_l": ([0, 0, -0.05], [0, 0, -0.4], 0.055),
        "shank_r": ([0, 0, -0.03], [0, 0, -0.4], 0.045),
        "shank_l": ([0, 0, -0.03], [0, 0, -0.4], 0.045),
    }
    m.collision = [CollisionShape.capsule(k, k, a, b, r) for k, (a, b, r) in segments.items()]
    names = list(segments)
    all_pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    pairs = [all_pairs[k] for k in rng.choice(len(all_pairs), n_pairs, replace=False)]
    q = random_q(m, rng=rng, size=(n_frames,), scale=0.3)
    t, res = best_cpu(lambda: distances(m, q, pairs))
    return {"time": t, "jacobian_shape": res.jacobian.shape}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=20)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    cap = capsule_benchmark(args.frames, args.pairs, rng)
    n = args.frames * args.pairs
    print(
        f"capsule distances, {args.frames} frames x {args.pairs} pairs ({n} pairs): "
        f"ahbm ssv_distance {cap['ahbm'] * 1e3:.1f} ms, coal.distance loop "
        f"{cap['coal'] * 1e3:.1f} ms -> ahbm {cap['ratio']:.1f}x faster "
        f"(max |difference| {cap['max_difference']:.1e} m)"
    )
    mod = model_benchmark(args.frames, args.pairs, rng)
    print(
        f"human15 distances() with dd/dq, {args.frames} frames x {args.pairs} capsule pairs: "
        f"{mod['time'] * 1e3:.1f} ms (Jacobians {mod['jacobian_shape']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
