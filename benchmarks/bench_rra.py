"""``ahbm rra`` against OpenSim 4.6's RRATool, whole processes on the shared setup.

Run: python benchmarks/bench_rra.py [--runs N] [--adjust]

Both run ../shared/data/opensim/subject01_Setup_RRA.xml unchanged (2.5 s of
walking, 2,500 windows of 1 ms), each in its own copy of the folder; with
``--adjust`` the setup's ``adjust_com_to_reduce_residuals`` is set to true with
the torso as ``adjusted_com_body``. ahbm runs as the command a user types
(``ahbm rra SETUP.xml -q``), OpenSim as a Python process
(``import opensim; opensim.RRATool(setup).run()``). Each figure is the median
of `--runs` (5) whole processes after one warm-up of each, the two commands
alternating so that a busy machine slows both alike. Both run on one thread
(``OMP_NUM_THREADS=1``, ``NUMBA_NUM_THREADS=1``; OpenSim's RRA is single
threaded). The machine's load and core count are printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
SETUP = "subject01_Setup_RRA.xml"
OPENSIM = "import sys, opensim as osim\nosim.RRATool(sys.argv[1]).run()\n"


def _copy(dst: Path, adjust: bool) -> Path:
    shutil.copytree(DATA, dst)
    for p in dst.iterdir():
        p.chmod(0o644)
    setup = dst / SETUP
    if adjust:
        text = setup.read_text()
        text = text.replace(
            "<adjust_com_to_reduce_residuals>false", "<adjust_com_to_reduce_residuals>true"
        ).replace("<adjusted_com_body />", "<adjusted_com_body>torso</adjusted_com_body>")
        setup.write_text(text)
    return setup


def _run(cmd, cwd, env) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{r.stderr[-2000:]}")
    return dt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (median)")
    parser.add_argument("--adjust", action="store_true", help="COM adjustment on (torso)")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"shared data not found at {DATA}")
        return 1
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    ahbm = shutil.which("ahbm") or "ahbm"
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}; one thread each")
    with tempfile.TemporaryDirectory(prefix="bench-rra-") as tmp:
        a = _copy(Path(tmp) / "ahbm", args.adjust)
        o = _copy(Path(tmp) / "osim", args.adjust)
        commands = {
            "ahbm rra": ([ahbm, "rra", SETUP, "-q"], a.parent),
            "OpenSim RRATool": ([sys.executable, "-c", OPENSIM, SETUP], o.parent),
        }
        for cmd, cwd in commands.values():  # warm-up
            _run(cmd, cwd, env)
        times = {k: [] for k in commands}
        for _ in range(args.runs):
            for k, (cmd, cwd) in commands.items():
                times[k].append(_run(cmd, cwd, env))
    med = {k: statistics.median(v) for k, v in times.items()}
    label = "subject01 RRA" + (" (COM adjustment on)" if args.adjust else "")
    print(f"{label}, median of {args.runs} whole processes:")
    for k, v in med.items():
        print(f"  {k:18s} {v:6.2f} s")
    print(f"  ratio OpenSim / ahbm: {med['OpenSim RRATool'] / med['ahbm rra']:.1f}x")
    print(f"end load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
