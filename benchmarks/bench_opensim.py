"""Timing of OpenSim's IK and ID setups run by ahbm against OpenSim's own tools.

Run: python benchmarks/bench_opensim.py [--repeat N] [--rounds R]

Both run the shared walking trial (../shared/data/opensim: subject01.osim,
subject01_walk.trc, subject01_walk_grf.mot/.xml, the IK and ID setups), each in a
fresh copy of the data (the tools write their outputs next to the setup).
OpenSim runs in a child process (``opensim`` cannot share an interpreter with
casadi, and ahbm never imports it); ahbm runs here. Each tool runs once to warm up
(ahbm compiles its kernels, OpenSim loads its libraries), then the best of
`--repeat` runs is kept; OpenSim and ahbm alternate for `--rounds` rounds (best
of all rounds), so that a busy machine slows both alike:

- whole tool: ``InverseDynamicsTool(setup).run()`` / ``InverseKinematicsTool(setup).run()``
  against ``run_id_setup(setup)`` / ``run_ik_setup(setup)``: read the model, the data,
  compute, write the output file (ahbm's tools read the model without muscle paths,
  its forces as summaries: ``read_osim(..., muscles=False, forces="summary")``; nothing
  is kept between runs);
- preloaded model: the same with the model already in memory
  (``tool.setModel(model)`` / ``model=``).

Prints the times, the ratio OpenSim / ahbm (> 1: ahbm faster) and the largest
difference between the outputs (ID: % of each coordinate's range; IK: degrees).

ahbm writes its outputs atomically (``ahbm._internal.files.atomic_path``: a temporary
file flushed with ``fsync``, renamed over the target, then the folder
flushed); OpenSim writes in place without flushing. The last line shows what
the two ``fsync`` calls cost in writing the ID ``.sto`` (best and median of 30
writes, with and without them; measurement only, the tools always flush).

RRA and CMC, whole processes against OpenSim's RRATool and CMCTool:
benchmarks/bench_rra.py and benchmarks/bench_cmc.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
FILES = (
    "subject01.osim",
    "subject01_walk.trc",
    "subject01_walk_grf.mot",
    "subject01_walk_grf.xml",
    "subject01_walk_IK.mot",
    "subject01_Setup_IK.xml",
    "subject01_Setup_ID.xml",
)

OPENSIM_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    import opensim as osim
    try:
        osim.Logger.setLevelString("error")
    except Exception:
        pass
    folder, repeat, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.chdir(folder)

    def best(f):
        f()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)

    model = osim.Model("subject01.osim")

    def id_tool():
        osim.InverseDynamicsTool("subject01_Setup_ID.xml").run()

    def id_model():
        tool = osim.InverseDynamicsTool("subject01_Setup_ID.xml")
        tool.setModel(model)
        tool.run()

    def ik_tool():
        tool = osim.InverseKinematicsTool("subject01_Setup_IK.xml")
        tool.set_output_motion_file("opensim_ik.mot")
        tool.run()

    def ik_model():
        tool = osim.InverseKinematicsTool("subject01_Setup_IK.xml")
        tool.setModel(model)
        tool.set_output_motion_file("opensim_ik.mot")
        tool.run()

    res = {"id_tool": best(id_tool), "id_model": best(id_model),
           "ik_tool": best(ik_tool), "ik_model": best(ik_model)}
    with open(out, "w") as fh:
        json.dump(res, fh)
    """
)


def best(f, repeat):
    f()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def copy_data(folder: Path) -> None:
    for name in FILES:
        shutil.copy(DATA / name, folder / name)


def opensim_times(repeat: int) -> dict | None:
    with tempfile.TemporaryDirectory(prefix="ahbm-bench-osim-") as tmp:
        folder = Path(tmp)
        copy_data(folder)
        script = folder / "bench_osim.py"
        script.write_text(OPENSIM_SCRIPT)
        out = folder / "times.json"
        r = subprocess.run(
            [sys.executable, str(script), str(folder), str(repeat), str(out)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if r.returncode != 0:
            print("OpenSim could not run (is the `opensim` package installed?):")
            print(r.stderr[-2000:])
            return None
        times = json.loads(out.read_text())
        from ahbm.opensim.storage import read_mot

        times["id_sto"] = read_mot(folder / "Results" / "subject01_walk_ID.sto")
        times["ik_mot"] = read_mot(folder / "opensim_ik.mot")
        return times


def ahbm_times(repeat: int):
    """Best times of ahbm's runs (dict), and the ID and IK results, on a fresh copy."""
    from ahbm.opensim import read_osim, run_id_setup, run_ik_setup

    with tempfile.TemporaryDirectory(prefix="ahbm-bench-") as tmp:
        folder = Path(tmp)
        copy_data(folder)
        id_setup = folder / "subject01_Setup_ID.xml"
        ik_setup = folder / "subject01_Setup_IK.xml"
        model = read_osim(folder / "subject01.osim")
        ik_out = folder / "ahbm_ik.mot"
        runs = {
            "id_tool": lambda: run_id_setup(id_setup),
            "id_model": lambda: run_id_setup(id_setup, model=model),
            "ik_tool": lambda: run_ik_setup(ik_setup, output=ik_out),
            "ik_model": lambda: run_ik_setup(ik_setup, output=ik_out, model=model),
        }
        times = {k: best(f, repeat) for k, f in runs.items()}
        id_res = run_id_setup(id_setup, model=model, write=False)
        ik_res = run_ik_setup(ik_setup, model=model, write=False)
    return times, id_res, ik_res


def fsync_cost(id_res, repeat: int = 30) -> tuple:
    """Best and median ms of writing the ID .sto: (with fsync, without fsync)."""
    import ahbm._internal.files as files
    from ahbm.opensim.id_tool import write_id_sto

    def timed():
        times = []
        with tempfile.TemporaryDirectory(prefix="ahbm-bench-fsync-") as tmp:
            for _ in range(repeat):
                t0 = time.perf_counter()
                write_id_sto(id_res, Path(tmp) / "id.sto")
                times.append(time.perf_counter() - t0)
        return min(times), float(np.median(times))

    with_sync = timed()
    saved = files._fsync, files._fsync_dir
    files._fsync = files._fsync_dir = lambda path: None
    try:
        without = timed()
    finally:
        files._fsync, files._fsync_dir = saved
    return with_sync, without


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (best is kept)")
    parser.add_argument("--rounds", type=int, default=2, help="OpenSim/ahbm alternations")
    args = parser.parse_args(argv)

    keys = ("id_tool", "id_model", "ik_tool", "ik_model")
    osim, t = None, dict.fromkeys(keys, np.inf)
    for _ in range(max(args.rounds, 1)):
        got = opensim_times(args.repeat)
        if got is not None:
            if osim is None:
                osim = got
            else:
                osim.update({k: min(osim[k], got[k]) for k in keys})
        got, id_res, ik_res = ahbm_times(args.repeat)
        t = {k: min(t[k], got[k]) for k in keys}

    rows = [
        ("ID, whole tool (read model, data; write .sto)", "id_tool"),
        ("ID, model already loaded", "id_model"),
        ("IK, whole tool (read model, .trc; write .mot)", "ik_tool"),
        ("IK, model already loaded", "ik_model"),
    ]
    print("subject01 walking trial (151 frames, 10 coordinates, 2 external forces)")
    for label, key in rows:
        line = f"{label:<48s} ahbm {t[key] * 1e3:8.1f} ms"
        if osim is not None:
            line += f"   OpenSim {osim[key] * 1e3:8.1f} ms   ratio {osim[key] / t[key]:6.1f}x"
        print(line)
    (b1, m1), (b0, m0) = fsync_cost(id_res)
    print(
        f"ID .sto write: {b1 * 1e3:.1f} ms best, {m1 * 1e3:.1f} ms median with fsync; "
        f"{b0 * 1e3:.1f} / {m0 * 1e3:.1f} ms without (measurement only)"
    )
    if osim is None:
        return
    df = id_res.to_dataframe()
    ref = osim["id_sto"]
    worst = max(
        float(np.max(np.abs(df[c].to_numpy() - ref.data[c].to_numpy())))
        / float(np.ptp(ref.data[c].to_numpy()))
        for c in ref.columns
    )
    print(f"ID: largest difference to OpenSim's .sto: {100 * worst:.2e} % of a coordinate's range")
    ref = osim["ik_mot"]
    dev = max(
        float(np.sqrt(np.mean((ik_res.q[:, k] - ref.data[c].to_numpy()) ** 2)))
        * (180 / np.pi if c in ref.angle_columns else 1000.0)
        for k, c in enumerate(ik_res.coordinate_names)
    )
    print(f"IK: largest RMS difference to OpenSim's .mot: {dev:.3f} deg (or mm)")


if __name__ == "__main__":
    main()
