"""Fuzz campaign of the HDF5 trial store at full size (byte-level and structural damage).

Usage::

    python benchmarks/fuzz_hdf5.py                 # 1,600 cases, seed 7
    python benchmarks/fuzz_hdf5.py --cases 4000 --seed 11 --timeout 60

The cases are those of ``tests/fuzz/test_fuzz_hdf5.py`` (``store_cases``): half
byte-level damage of a real two-trial store, half structural changes made with
h5py (links, loops, huge declarations, dtypes, attributes, ...). Each case runs
``read_store`` (``list_trials``, ``load_trial`` and ``load_result_units`` of each
trial, ``save_trial`` adding one) in a memory-limited child process with a
per-case timeout (``tests/fuzz/fuzz_harness.py``), which also fails a case
whose AhbmError does not name the file or that grows the child's peak memory
by more than the read cap. The script prints the counts of each outcome for
the two kinds of damage; the contract is 0 raw exceptions, 0 hangs and 0
crashes (and 0 of the other failures).

Cases that crash the child (a signal inside libhdf5, which no check in the
reading process can prevent) are then read again with
``load_trial(..., isolate=True)``, which must turn each into an AhbmError; they
are reported on their own line.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

from fuzz_harness import run_cases  # noqa: E402
from test_fuzz_hdf5 import (  # noqa: E402
    MEMORY_LIMIT,
    READ_CAP,
    read_store,
    read_store_isolated,
    store_cases,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1600, help="number of damaged stores")
    parser.add_argument("--seed", type=int, default=7, help="campaign seed")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    parser.add_argument("--verbose", action="store_true", help="list every distinct failure")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ahbm-fuzz-h5-") as folder:
        cases = store_cases(args.cases, args.seed, folder=folder)
        print(f"generated {len(cases)} cases in {time.perf_counter() - t0:.1f} s", flush=True)
        env = {"AHBM_MAX_READ_BYTES": str(READ_CAP)}
        totals = {}
        crashed = []
        for kind, subset in (
            ("byte-level", [c for i, c in enumerate(cases) if i % 2 == 0]),
            ("structural", [c for i, c in enumerate(cases) if i % 2 == 1]),
        ):
            report = run_cases(
                read_store,
                subset,
                timeout=args.timeout,
                memory_limit=MEMORY_LIMIT,
                max_peak=READ_CAP,
                env=env,
                name_in_message=True,
            )
            print(f"{kind} damage:", flush=True)
            print(report.summary(max_groups=60 if args.verbose else 10), flush=True)
            for k, v in report.counts().items():
                totals[k] = totals.get(k, 0) + v
            by_seed = {c.seed: c for c in subset}
            crashed += [by_seed[o.seed] for o in report.outcomes if o.kind == "crash"]
        raw, hang, crash = totals["raw"], totals["hang"], totals["crash"]
        other = {k: totals[k] for k in ("invalid", "unnamed", "memory")}
        print(
            f"\nHDF5 stores: {len(cases)} cases: raw exception {raw}, hang {hang}, crash {crash} "
            f"(ok {totals['ok']}, AhbmError {totals['ahbm']}, "
            + ", ".join(f"{k} {v}" for k, v in other.items())
            + ")"
        )
        if crashed:
            isolated = run_cases(
                read_store_isolated, crashed, timeout=args.timeout * 4, memory_limit=None, env=env
            )
            print(
                "crashes inside libhdf5, read again with load_trial(isolate=True): "
                + ", ".join(f"{k} {v}" for k, v in isolated.counts().items() if v)
            )
            print(isolated.summary(max_groups=20))
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0 if raw == hang == crash == sum(other.values()) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
