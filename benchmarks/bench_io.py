"""Benchmark ahbm's C3D reader against ezc3d.

Measured in the same run (best of several repeats):

1. the largest shared sample, ``16bitanalog.c3d`` (237 frames, 27 markers,
   40 analog channels at 600 Hz, 2 force plates), read with
   ``ahbm.io.read_c3d`` (points, analogs, full parameter tree, events and the
   force plates) and with ``ezc3d.c3d`` (without and with its force platform
   extraction);
2. a synthetic file of 100,000 frames x 100 markers (5 % missing samples)
   written by ``ahbm.io.write_c3d`` (about 160 MB), read by both.

The ratio printed is ezc3d time / ahbm time (> 1 means ahbm is faster).
Run: ``python benchmarks/bench_io.py [--frames 100000] [--markers 100]``.
"""

from __future__ import annotations

import argparse
import gc
import platform
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning
from ahbm.io import Trial, read_c3d, write_c3d

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "c3d"


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def row(label, t_ahbm, t_peer):
    print(
        f"  {label:<44s} ahbm {t_ahbm * 1e3:9.2f} ms   ezc3d {t_peer * 1e3:9.2f} ms   "
        f"ratio {t_peer / t_ahbm:6.2f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--markers", type=int, default=100)
    args = parser.parse_args()
    import ezc3d

    warnings.simplefilter("ignore", AhbmWarning)
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"ezc3d {getattr(ezc3d, '__version__', '?')}"
    )

    sample = DATA / "16bitanalog.c3d"
    if sample.is_file():
        print(f"{sample.name} ({sample.stat().st_size / 1e3:.0f} kB):")
        t_a = best(lambda: read_c3d(sample), 20)
        t_e = best(lambda: ezc3d.c3d(str(sample)), 20)
        t_ef = best(lambda: ezc3d.c3d(str(sample), extract_forceplat_data=True), 20)
        row("read (ezc3d without force plates)", t_a, t_e)
        row("read (ezc3d with force plates)", t_a, t_ef)
    else:
        print(f"shared data not found at {DATA}; skipping the sample file")

    rng = np.random.default_rng(0)
    n, m = args.frames, args.markers
    pts = np.cumsum(rng.normal(scale=1.0, size=(n, m, 3)), axis=0) + 1000.0
    pts[rng.random((n, m)) < 0.05] = np.nan
    trial = Trial(
        points=pts,
        point_labels=[f"M{i:03d}" for i in range(m)],
        point_rate=100.0,
        point_units="mm",
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.c3d"
        t_w = best(lambda: write_c3d(trial, path), 2)
        size = path.stat().st_size / 1e6
        print(f"synthetic {n} frames x {m} markers ({size:.0f} MB; write_c3d {t_w:.2f} s):")
        t_a = best(lambda: read_c3d(path), 3)
        t_e = best(lambda: ezc3d.c3d(str(path)), 2)
        row("read", t_a, t_e)
        # same numbers from both readers
        a = read_c3d(path, units=None).points
        e = ezc3d.c3d(str(path))["data"]["points"][:3].transpose(2, 1, 0)
        same = np.array_equal(np.isnan(a), np.isnan(e)) and np.allclose(a, e, equal_nan=True)
        print(f"  identical points from both readers: {same}")


if __name__ == "__main__":
    main()
