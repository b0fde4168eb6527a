"""Benchmark: ahbm rotations against scipy's Rotation on 10^6 random rotations.

Run: python benchmarks/bench_rotations.py [N]

Both libraries convert the same arrays in the same process; each timing is the
best of 5 runs. The ratio is ahbm time / scipy time (below 1.0: ahbm faster).
Input checks are included on both sides: ahbm validates shapes, finiteness and
orthonormality of matrices, scipy validates shapes and (for from_matrix)
orthogonalizes.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from scipy.spatial.transform import Rotation

import ahbm.kinematics.rotations as rot


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(n: int = 1_000_000) -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(0)
    angles = rng.uniform(-np.pi, np.pi, (n, 3))
    R = rot.euler_to_matrix(angles, "XYZ")
    q = rot.matrix_to_quat(R)
    warnings.simplefilter("ignore")
    cases = [
        (
            "euler->matrix (XYZ)",
            lambda: rot.euler_to_matrix(angles, "XYZ"),
            lambda: Rotation.from_euler("XYZ", angles).as_matrix(),
        ),
        (
            "matrix->euler (XYZ, Cardan)",
            lambda: rot.matrix_to_euler(R, "XYZ"),
            lambda: Rotation.from_matrix(R).as_euler("XYZ"),
        ),
        (
            "matrix->euler (ZXZ, Euler)",
            lambda: rot.matrix_to_euler(R, "ZXZ"),
            lambda: Rotation.from_matrix(R).as_euler("ZXZ"),
        ),
        ("matrix->quat", lambda: rot.matrix_to_quat(R), lambda: Rotation.from_matrix(R).as_quat()),
        ("quat->matrix", lambda: rot.quat_to_matrix(q), lambda: Rotation.from_quat(q).as_matrix()),
    ]
    rows = []
    print(f"{n:,} rotations, best of 5 (seconds)")
    print(f"{'conversion':30s} {'ahbm':>9s} {'scipy':>9s} {'ratio':>7s}")
    for name, ours, peer in cases:
        ours()
        peer()
        t_a, t_s = best_of(ours), best_of(peer)
        rows.append((name, t_a, t_s))
        print(f"{name:30s} {t_a:9.4f} {t_s:9.4f} {t_a / t_s:7.2f}")
    return rows


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
