"""Full-size fuzz campaigns of ahbm's file readers: raw-exception, hang and crash counts.

The same damaged inputs as the fuzz tests in ``tests/fuzz`` (C3D, TRC,
MOT/STO, JSON model files, OpenSim .osim), ten times as many by default and
from other seeds, each read in a memory-limited child process with a per-case
timeout by ``tests/fuzz/fuzz_harness.py``. Printed per reader: the number of
cases, how many read (ok), raised an AhbmError, raised another exception
(raw), hung, crashed the interpreter, returned an inconsistent result
(invalid), raised an AhbmError that does not name the file (unnamed) or
grew the child's peak memory by more than the read cap (memory), and the
largest peak growth of a case (peak MiB; the read cap in the child is 64
MiB); then
every distinct failure with the seeds that reproduce it
(``<reader>_cases(n, seed)`` in the test modules, case ``i`` of seed ``s``).

Run: ``python benchmarks/fuzz_readers.py [--scale 10] [--seed 2026]
[--readers c3d trc mot model osim]``. The HDF5 store campaign is
``benchmarks/fuzz_hdf5.py``. The exit status is 1 if any case failed.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "tests" / "fuzz"
sys.path.insert(0, str(FUZZ))

from fuzz_harness import run_cases  # noqa: E402

#: reader name -> (test module, cases function, cases in the test, reader, check, timeout)
CAMPAIGNS = {
    "c3d": ("test_fuzz_c3d", "c3d_cases", 700, "ahbm.io:read_c3d", "check_trial", 20.0),
    "trc": ("test_fuzz_text", "trc_cases", 300, "ahbm.io:read_trc", "check_trc", 20.0),
    "mot": ("test_fuzz_text", "mot_cases", 300, "ahbm.opensim:read_mot", "check_mot", 20.0),
    "model": ("test_fuzz_model", "model_cases", 400, "ahbm:load_model", "check_model", 20.0),
    "osim": ("test_fuzz_osim", "osim_cases", 300, "ahbm.opensim:read_osim", "check_model", 30.0),
}


def run(name: str, scale: float, seed: int):
    """Run the campaign of reader `name` at `scale` times the size of its test."""
    import importlib

    module, cases_fn, n_test, reader, check, timeout = CAMPAIGNS[name]
    mod = importlib.import_module(module)
    n = max(1, int(round(n_test * scale)))
    env = getattr(mod, "ENV", {})
    memory = getattr(mod, "MEMORY_LIMIT", 768 * 2**20)
    return run_cases(
        reader,
        getattr(mod, cases_fn)(n, seed=seed),
        check=f"{module}:{check}",
        env=env,
        timeout=timeout,
        memory_limit=memory,
        max_peak=getattr(mod, "READ_CAP", None),
        name_in_message=True,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=10.0, help="cases = scale x the test's")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--readers", nargs="+", choices=sorted(CAMPAIGNS), default=list(CAMPAIGNS))
    args = parser.parse_args(argv)
    print(f"fuzz campaigns, scale {args.scale:g}, seed {args.seed}; python "
          f"{platform.python_version()} on {platform.machine()}")  # fmt: skip
    header = f"{'reader':<8}{'cases':>7}{'ok':>7}{'ahbm':>7}{'raw':>6}{'hang':>6}{'crash':>7}"
    header += f"{'invalid':>9}{'unnamed':>9}{'memory':>8}{'peak MiB':>10}{'time s':>8}"
    rows, details, failed = [], [], 0
    for name in args.readers:
        t0 = time.perf_counter()
        report = run(name, args.scale, args.seed)
        c = report.counts()
        failed += len(report.failures)
        rows.append(
            f"{name:<8}{len(report.outcomes):>7}{c['ok']:>7}{c['ahbm']:>7}{c['raw']:>6}"
            f"{c['hang']:>6}{c['crash']:>7}{c['invalid']:>9}{c['unnamed']:>9}{c['memory']:>8}"
            f"{max(o.peak for o in report.outcomes) / 2**20:>10.1f}"
            f"{time.perf_counter() - t0:>8.1f}"
        )
        print(rows[-1] if len(rows) > 1 else header + "\n" + rows[-1], flush=True)
        if report.failures:
            details.append(report.summary())
    print("\n" + header + "\n" + "\n".join(rows))
    for d in details:
        print(d)
    print(f"{failed} failing case(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
