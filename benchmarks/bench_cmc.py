"""``ahbm cmc`` against OpenSim 4.6's CMCTool, whole processes on the shared setup.

Run: python benchmarks/bench_cmc.py [--runs N] [--final-time T] [--accuracy DIR]

Both run ../shared/data/opensim/subject01_Setup_CMC.xml unchanged (0.6 to
1.9 s of walking, the initial states and 254 windows of 5 ms, 18 Millard
muscles), each in its own copy of the folder; its desired kinematics are
OpenSim's RRA output, made once beforehand by OpenSim's RRATool (not timed).
``--final-time`` shortens the run. ``--accuracy DIR`` times nothing: it runs
``ahbm cmc`` once on the RRA kinematics of DIR, a folder where OpenSim's CMCTool
ran the shared setup (``RRA_Results/`` and ``CMC_Results/`` in it), and prints
each muscle's excitation RMS over the control nodes, the coordinates' largest
differences, the residuals' RMS and both runs' largest position errors.
ahbm runs as the command a user types (``ahbm cmc SETUP.xml -q``), OpenSim as a
Python process (``import opensim; opensim.CMCTool(setup).run()``). Each figure is the median
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


def accuracy(osim: Path, final_time: float | None) -> int:
    """ahbm against the OpenSim run in `osim` (see the module docstring)."""
    import xml.etree.ElementTree as ET

    import numpy as np

    from ahbm.opensim import read_mot
    from ahbm.opensim.cmc_tool import run_cmc_setup

    def nodes(path):
        out = {}
        for c in ET.parse(path).getroot().iter("ControlLinear"):
            x = c.find("x_nodes")
            t = np.array([float(n.find("t").text) for n in x])
            v = np.array([float(n.find("value").text) for n in x])
            out[c.get("name").removesuffix(".excitation")] = (t, v)
        return out

    ref = osim / "CMC_Results"
    with tempfile.TemporaryDirectory(prefix="bench-cmc-") as tmp:
        setup = _copy(Path(tmp) / "ahbm", osim / "RRA_Results", final_time)
        res = run_cmc_setup(setup)
        mine = setup.parent / "CMC_Results"
        R, M = nodes(ref / "walk_subject_controls.xml"), nodes(mine / "walk_subject_controls.xml")
        print("excitation RMS over the control nodes:")
        rms = {}
        for name in res.muscle_names:
            (tm, vm), (tr, vr) = M[name], R[name]
            idx = np.searchsorted(tr, tm - 1e-9)
            if not np.allclose(tr[idx], tm, atol=1e-9):
                raise SystemExit(f"the control nodes of {name} differ in time")
            rms[name] = float(np.sqrt(np.mean((vm - vr[idx]) ** 2)))
            print(f"  {name:14s} {rms[name]:.4f}{'' if rms[name] < 0.05 else '  > 0.05'}")
        n_ok = sum(v < 0.05 for v in rms.values())
        print(f"  {n_ok} of {len(rms)} within 0.05, median {np.median(list(rms.values())):.4f}")
        tables = {}
        for kind in ("Kinematics_q", "Actuation_force", "pErr"):
            tables[kind] = [read_mot(d / f"walk_subject_{kind}.sto", angle_columns=[])
                            for d in (ref, mine)]  # fmt: skip
        r, m = tables["Kinematics_q"]
        print("coordinates, largest difference (deg or m):")
        for c in r.columns:
            d = np.asarray(m.data[c]) - np.interp(m.time, r.time, np.asarray(r.data[c]))
            print(f"  {c:18s} {np.abs(d).max():.4f}")
        r, m = tables["Actuation_force"]
        for c in ("FX", "FY", "MZ"):
            d = np.asarray(m.data[c]) - np.interp(m.time, r.time, np.asarray(r.data[c]))
            print(f"residual {c}: {np.sqrt(np.mean(d**2)):.3f} RMS")
        r, m = tables["pErr"]
        print(f"largest position error: OpenSim {np.abs(np.asarray(r.values)).max():.5f}, "
              f"ahbm {np.abs(np.asarray(m.values)).max():.5f}")  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (median)")
    parser.add_argument("--final-time", type=float, default=None, help="shorter run (s)")
    parser.add_argument("--accuracy", type=Path, default=None, metavar="DIR",
                        help="compare with OpenSim's run in DIR instead of timing")  # fmt: skip
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"shared data not found at {DATA}")
        return 1
    if args.accuracy is not None:
        return accuracy(args.accuracy, args.final_time)
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
