"""``ahbm cmc`` against OpenSim 4.6's CMCTool, whole processes on the shared setup.

Run: python benchmarks/bench_cmc.py [--runs N] [--final-time T]

Both run ../shared/data/opensim/subject01_Setup_CMC.xml unchanged (0.6 to
1.9 s of walking, the initial states and 254 windows of 5 ms, 18 Millard
muscles), each in its own copy of the folder; its desired kinematics are
OpenSim's RRA output, made once beforehand by OpenSim's RRATool (not timed).
``--final-time`` shortens the run. ahbm runs as the command a user types
(``ahbm cmc SETUP.xml -q``), OpenSim as a Python process
(``import opensim; opensim.CMCTool(setup).run()``). Each figure is the median
of `--runs` (5) whole processes after one warm-up of each, the two commands
alternating so that a busy machine slows both alike; the CPU times of the
processes are printed beside the wall times. Both run on one thread
(``OMP_NUM_THREADS=1``, ``NUMBA_NUM_THREADS=1``; OpenSim's CMC is single
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
SETUP = "subject01_Setup_CMC.xml"
OPENSIM = "import sys, opensim as osim\nosim.CMCTool(sys.argv[1]).run()\n"
RRA = "import opensim as osim\nosim.RRATool('subject01_Setup_RRA.xml').run()\n"


def _copy(dst: Path, rra: Path, final_time: float | None) -> Path:
    shutil.copytree(DATA, dst)
    for p in dst.iterdir():
        p.chmod(0o644)
    shutil.copytree(rra, dst / "RRA_Results")
    setup = dst / SETUP
    if final_time is not None:
        text = setup.read_text()
        setup.write_text(text.replace("<final_time>1.9", f"<final_time>{final_time}"))
    return setup


def _run(cmd, cwd, env) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process."""
    before = os.times()
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    after = os.times()
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{r.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return dt, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (median)")
    parser.add_argument("--final-time", type=float, default=None, help="shorter run (s)")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"shared data not found at {DATA}")
        return 1
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    ahbm = shutil.which("ahbm") or "ahbm"
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}; one thread each")
    with tempfile.TemporaryDirectory(prefix="bench-cmc-") as tmp:
        shutil.copytree(DATA, Path(tmp) / "rra")
        for p in (Path(tmp) / "rra").iterdir():
            p.chmod(0o644)
        _run([sys.executable, "-c", RRA], Path(tmp) / "rra", env)  # the desired kinematics
        rra = Path(tmp) / "rra" / "RRA_Results"
        a = _copy(Path(tmp) / "ahbm", rra, args.final_time)
        o = _copy(Path(tmp) / "osim", rra, args.final_time)
        commands = {
            "ahbm cmc": ([ahbm, "cmc", SETUP, "-q"], a.parent),
            "OpenSim CMCTool": ([sys.executable, "-c", OPENSIM, SETUP], o.parent),
        }
        for cmd, cwd in commands.values():  # warm-up
            _run(cmd, cwd, env)
        times = {k: [] for k in commands}
        cpus = {k: [] for k in commands}
        for _ in range(args.runs):
            for k, (cmd, cwd) in commands.items():
                wall, cpu = _run(cmd, cwd, env)
                times[k].append(wall)
                cpus[k].append(cpu)
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    span = f"0.6-{args.final_time}" if args.final_time is not None else "0.6-1.9"
    print(f"subject01 CMC ({span} s), median of {args.runs} whole processes:")
    for k, v in med.items():
        print(f"  {k:18s} {v:6.2f} s wall  {cpu[k]:6.2f} s CPU")
    print(
        f"  ratio OpenSim / ahbm: {med['OpenSim CMCTool'] / med['ahbm cmc']:.1f}x wall, "
        f"{cpu['OpenSim CMCTool'] / cpu['ahbm cmc']:.1f}x CPU"
    )
    print(f"end load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
