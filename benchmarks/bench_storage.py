"""Benchmark ahbm's trial storage (HDF5 store, TRC text files) against plain peers.

Measured in the same run, on a synthetic trial (default 20,000 frames x 100
markers, 5 % missing samples, 16 analog channels at 10x the point rate):

1. ``ahbm.io.save_trial`` / ``load_trial`` (typed layout, chunking, gzip,
   atomic rename) against writing/reading the same arrays with bare ``h5py``
   (same gzip level, no layout, no atomicity) and ``numpy.savez_compressed`` /
   ``numpy.load``; plus the file sizes.
2. ``ahbm.io.write_trc`` / ``read_trc`` against ``numpy.savetxt`` and
   ``pandas.read_csv`` on the same table (the peers produce/parse only the
   numbers, not the OpenSim header, labels or unit conversion).
3. ``ahbm.io.batch.convert`` of 8 TRC files with a 2-process pool against a
   serial loop of ``read_trc`` + ``save_trial``.

Times are the best of several repeats. Run:
``python benchmarks/bench_storage.py [--frames 20000] [--markers 100]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from ahbm.io import Trial, load_trial, read_trc, save_trial, write_trc
from ahbm.io.batch import convert


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def make_trial(n_frames, n_markers, rng):
    pts = np.cumsum(rng.normal(scale=1e-3, size=(n_frames, n_markers, 3)), axis=0)
    pts[rng.random((n_frames, n_markers)) < 0.05] = np.nan
    return Trial(
        points=pts,
        point_labels=[f"M{i:03d}" for i in range(n_markers)],
        point_rate=100.0,
        analogs=rng.normal(size=(10 * n_frames, 16)),
        analog_labels=[f"A{i}" for i in range(16)],
        analog_units=["V"] * 16,
        analog_descriptions=[""] * 16,
        analog_rate=1000.0,
    )


def row(name, t_ahbm, t_peer, peer):
    print(
        f"{name:<34s} ahbm {t_ahbm * 1e3:9.1f} ms   {peer:<22s} {t_peer * 1e3:9.1f} ms"
        f"   ratio ahbm/peer {t_ahbm / t_peer:6.2f}"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=20_000)
    ap.add_argument("--markers", type=int, default=100)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    trial = make_trial(args.frames, args.markers, rng)
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, h5py {h5py.__version__}, "
        f"pandas {pd.__version__}; {os.cpu_count()} CPUs"
    )
    print(f"trial: {args.frames} frames x {args.markers} markers, analogs {trial.analogs.shape}")

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)

        # ---- HDF5 store
        def ahbm_save():
            save_trial(trial, d / "a.h5", name="t", overwrite=True)

        def h5_save():
            with h5py.File(d / "p.h5", "w") as f:
                for key, arr in (("points", trial.points), ("analogs", trial.analogs)):
                    f.create_dataset(
                        key,
                        data=arr,
                        compression="gzip",
                        compression_opts=4,
                        shuffle=True,
                        chunks=True,
                    )

        def npz_save():
            np.savez_compressed(d / "p.npz", points=trial.points, analogs=trial.analogs)

        t_a = best(ahbm_save)
        t_h = best(h5_save)
        t_n = best(npz_save, repeat=1)
        row("save_trial", t_a, t_h, "bare h5py")
        row("save_trial", t_a, t_n, "np.savez_compressed")

        def h5_load():
            with h5py.File(d / "p.h5", "r") as f:
                return f["points"][()], f["analogs"][()]

        def npz_load():
            with np.load(d / "p.npz") as z:
                return z["points"], z["analogs"]

        t_a = best(lambda: load_trial(d / "a.h5"))
        row("load_trial", t_a, best(h5_load), "bare h5py")
        row("load_trial", t_a, best(npz_load), "np.load (npz)")
        raw = trial.points.nbytes + trial.analogs.nbytes
        print(
            f"sizes: raw {raw / 1e6:.1f} MB, ahbm .h5 {(d / 'a.h5').stat().st_size / 1e6:.1f} MB, "
            f"bare h5py {(d / 'p.h5').stat().st_size / 1e6:.1f} MB, "
            f"npz {(d / 'p.npz').stat().st_size / 1e6:.1f} MB"
        )

        # ---- TRC
        pts_trial = Trial(points=trial.points, point_labels=trial.point_labels, point_rate=100.0)
        table = trial.points.reshape(args.frames, -1) * 1000.0

        t_a = best(lambda: write_trc(pts_trial, d / "a.trc"), repeat=2)
        t_p = best(lambda: np.savetxt(d / "p.txt", table, delimiter="\t", fmt="%.17g"), repeat=2)
        row("write_trc", t_a, t_p, "np.savetxt")
        t_a = best(lambda: read_trc(d / "a.trc"), repeat=2)
        t_p = best(
            lambda: pd.read_csv(d / "a.trc", sep="\t", skiprows=6, header=None).to_numpy(),
            repeat=2,
        )
        row("read_trc", t_a, t_p, "pandas.read_csv")

        # ---- batch conversion
        small = Trial(points=trial.points[:5000], point_labels=trial.point_labels, point_rate=100.0)
        src = d / "in"
        src.mkdir()
        for i in range(8):
            write_trc(small, src / f"f{i}.trc")

        def serial():
            for p in sorted(src.glob("*.trc")):
                save_trial(read_trc(p), d / "ser" / f"{p.stem}.h5", name=p.stem, overwrite=True)

        (d / "ser").mkdir()
        t_s = best(serial, repeat=1)
        t0 = time.perf_counter()
        report = convert(src, d / "par", progress=False)
        t_c = time.perf_counter() - t0
        assert len(report.converted) == 8, report
        row("batch.convert (8 TRC, pool)", t_c, t_s, "serial loop")


if __name__ == "__main__":
    main()
