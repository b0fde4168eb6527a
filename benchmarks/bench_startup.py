"""Start-up of the ``ahbm`` command as whole processes, each figure beside its peer.

Run: python benchmarks/bench_startup.py [--runs N] [--cold] [--tests] [--data DIR]

What a user waits for is the whole process: the interpreter, the imports, the
compiled kernels loaded from numba's disk cache, the work and the exit. Every
figure is the median of `--runs` (5) whole-process runs, the commands of a
pair alternating so that a busy machine slows both alike, after one warm-up
run of each (the warm cache: Python's bytecode, numba's kernels, the files in
the OS cache):

- ``python -c "import ahbm"`` and ``ahbm --help`` beside the bare interpreter
  (``python -c pass``) and ``python -c "import numpy"``;
- ``ahbm id subject01_Setup_ID.xml -o out.sto`` on the shared walking trial
  (../shared/data/opensim, copied to a temporary folder) beside OpenSim's
  ``InverseDynamicsTool`` run from a Python process on the same setup
  (``import opensim; t = opensim.InverseDynamicsTool(setup); t.run()``);
  the same on that trial repeated 6 times end to end (15 s, 877 frames);
- ``ahbm ik subject01_Setup_IK.xml`` beside OpenSim's ``InverseKinematicsTool``
  run from a Python process on the same setup;
- ``ahbm so`` on a static-optimization setup of the trial (written here: 0.5-1.7 s,
  a reserve actuator on each coordinate) beside OpenSim's ``AnalyzeTool`` on the same
  setup;
- with ``--tests``: the collection of the test suite (``pytest --collect-only``)
  as a whole process (no peer: the target is under 5 s);
- with ``--cold``: a first ``ahbm demo`` and a first ``ahbm id`` on an empty
  numba cache (``NUMBA_CACHE_DIR`` set to a new empty folder: every kernel
  compiled), once each, beside the same command run again on the cache that
  first run filled; the lines say whether each run announced the compilation
  on stderr (the demo must on the empty cache, and nothing may on the warm
  one; ``ahbm id`` on the walking trial runs in numpy and compiles nothing).

The machine's load (``os.getloadavg``) and core count are printed at the start
and the end. The script writes only into a temporary folder and Python's bytecode cache
(the warm runs use the installation's own caches, as a user's runs do).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
SETUP = "subject01_Setup_ID.xml"
OPENSIM_IK = (
    "import sys, opensim as osim\n"
    "t = osim.InverseKinematicsTool(sys.argv[1])\n"
    "t.set_output_motion_file(sys.argv[2])\n"
    "t.run()\n"
)
SETUP_IK = "subject01_Setup_IK.xml"
OPENSIM_SO = "import sys, opensim as osim\nosim.AnalyzeTool(sys.argv[1]).run()\n"
SETUP_SO = "subject01_Setup_SO.xml"
#: Reserve actuators of the SO setup: one CoordinateActuator per coordinate of subject01
#: (strong on the pelvis and trunk). (The shipped reserve file's weak point and torque
#: residuals make OpenSim's optimizer take minutes on some frames.)
SO_RESERVES = {
    "pelvis_tilt": 1000.0, "pelvis_tx": 1000.0, "pelvis_ty": 1000.0, "hip_flexion_r": 1.0,
    "knee_angle_r": 1.0, "ankle_angle_r": 1.0, "hip_flexion_l": 1.0, "knee_angle_l": 1.0,
    "ankle_angle_l": 1.0, "lumbar_extension": 100.0,
}  # fmt: skip
SO_RESERVES_XML = (
    '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
    '<ForceSet name="reserves"><objects>'
    + "".join(
        f'<CoordinateActuator name="reserve_{c}"><coordinate>{c}</coordinate>'
        f"<optimal_force>{f}</optimal_force><min_control>-Inf</min_control>"
        "<max_control>Inf</max_control></CoordinateActuator>"
        for c, f in SO_RESERVES.items()
    )
    + "</objects><groups /></ForceSet></OpenSimDocument>\n"
)
#: An OpenSim static-optimization setup of the walking trial (0.5-1.7 s), as OpenSim's
#: GUI writes one.
SO_SETUP_XML = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <AnalyzeTool name="subject01_walk">
    <model_file>subject01.osim</model_file>
    <replace_force_set>false</replace_force_set>
    <force_set_files>so_reserves.xml</force_set_files>
    <results_directory>{results}</results_directory>
    <initial_time>0.5</initial_time>
    <final_time>1.7</final_time>
    <AnalysisSet name="Analyses"><objects>
      <StaticOptimization name="StaticOptimization"><on>true</on>
        <start_time>0.5</start_time><end_time>1.7</end_time><step_interval>1</step_interval>
        <use_model_force_set>true</use_model_force_set>
        <activation_exponent>2</activation_exponent>
        <use_muscle_physiology>true</use_muscle_physiology>
        <optimizer_convergence_criterion>1e-08</optimizer_convergence_criterion>
        <optimizer_max_iterations>1000</optimizer_max_iterations>
      </StaticOptimization>
    </objects><groups /></AnalysisSet>
    <ControllerSet name="Controllers"><objects /></ControllerSet>
    <external_loads_file>subject01_walk_grf.xml</external_loads_file>
    <coordinates_file>subject01_walk_IK.mot</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>
  </AnalyzeTool>
</OpenSimDocument>
"""
OPENSIM_ID = (
    "import sys, opensim as osim\n"
    "t = osim.InverseDynamicsTool(sys.argv[1])\n"
    "t.setResultsDir(sys.argv[2])\n"
    "t.setOutputGenForceFileName('opensim_id.sto')\n"
    "t.run()\n"
)
#: Words of the message a command prints on stderr before compiling kernels.
COMPILING = "compiling"


def ahbm_command() -> list[str]:
    """The ``ahbm`` console script next to this interpreter, else ``python -m ahbm``."""
    script = Path(sys.executable).with_name("ahbm")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ahbm"]


def user_environment(**extra) -> dict:
    """This process's environment as a user's shell has it: Python writes its bytecode cache.

    (``PYTHONDONTWRITEBYTECODE``, set on some build machines, would make every run
    compile ahbm's modules again: 0.2-0.3 s that no user pays after the first run.)
    """
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "AHBM_KERNELS")
    }
    env.update(extra)
    return env


def run(cmd, cwd=None, env=None) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of one whole process (s) and its completed process; raises on failure."""
    env = user_environment() if env is None else env
    t0 = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stderr[-2000:]}"
        )
    return elapsed, done


def medians(commands: dict, runs: int) -> dict:
    """Median wall time of each command (name -> (cmd, cwd)), alternating, after a warm-up."""
    times = {name: [] for name in commands}
    for cmd, cwd in commands.values():
        run(cmd, cwd)  # warm-up
    for _ in range(runs):
        for name, (cmd, cwd) in commands.items():
            times[name].append(run(cmd, cwd)[0])
    return {name: statistics.median(t) for name, t in times.items()}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def print_pair(label: str, mine: float, peer_label: str, peer: float) -> None:
    print(
        f"  {label:<34s} {mine:6.2f} s   {peer_label:<34s} {peer:6.2f} s   ratio {mine / peer:5.2f}"
    )


def cold_runs(ahbm: list[str], folder: Path) -> None:
    """A first ``ahbm demo`` and ``ahbm id`` on an empty numba cache, and the same again."""
    for label, args, cwd in (
        ("ahbm demo", ["demo", "-o", str(folder / "demo")], folder),  # no -q: it hides the line
        ("ahbm id", ["id", SETUP, "-o", str(folder / "cold.sto")], folder),
    ):
        cache = Path(tempfile.mkdtemp(prefix="numba-cache-", dir=folder))
        env = user_environment(NUMBA_CACHE_DIR=str(cache))
        cold, done_cold = run([*ahbm, *args], cwd, env)
        warm, done_warm = run([*ahbm, *args], cwd, env)
        said_cold = COMPILING in done_cold.stderr.lower()
        said_warm = COMPILING in done_warm.stderr.lower()
        print_pair(f"{label}, empty numba cache", cold, "the same, its cache filled", warm)
        print(
            f"    compilation announced on stderr: empty cache {said_cold}, "
            f"filled cache {said_warm}"
        )
        if said_cold:
            line = next(x for x in done_cold.stderr.splitlines() if COMPILING in x.lower())
            print(f"    message: {line.strip()}")


#: The longer trial: the walking trial's coordinates and loads repeated end to end.
LONG_REPEATS = 6


def repeat_trial(folder: Path, repeats: int) -> None:
    """Make the trial in `folder` `repeats` times as long (a 15 s trial of 877 frames).

    The coordinate and GRF files are repeated end to end in time (the motion jumps
    where one copy meets the next, which costs the tools nothing more) and the
    setup's time range covers them all.
    """
    from ahbm.io import OpenSimTable
    from ahbm.opensim import read_mot, write_mot

    for name in ("subject01_walk_IK.mot", "subject01_walk_grf.mot"):
        t = read_mot(folder / name, angle_columns=[])
        span = t.time[-1] - t.time[0] + (t.time[1] - t.time[0])
        time = np.concatenate([t.time + k * span for k in range(repeats)])
        table = OpenSimTable.from_arrays(
            time, np.tile(t.values, (repeats, 1)), t.columns, name=t.name,
            in_degrees=t.in_degrees, header=t.header,
        )  # fmt: skip
        write_mot(table, folder / name)
    setup = folder / SETUP
    text = re.sub(r"<time_range>[^<]*</time_range>", "<time_range>0.4 15</time_range>",
                  setup.read_text())  # fmt: skip
    setup.write_text(text)


def collection(py: str, runs: int) -> None:
    """``python -m pytest --collect-only -q`` in the checkout, whole process (median)."""
    root = Path(__file__).resolve().parents[1]
    cmd = [py, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    t = medians({"collect": (cmd, root)}, runs)["collect"]
    n = run(cmd, root)[1].stdout.strip().splitlines()[-1]
    print(f"  test collection (whole process)    {t:6.2f} s   ({n}; target under 5 s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--cold", action="store_true", help="also time first runs (empty cache)")
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the subject01 files")
    parser.add_argument("--no-opensim", action="store_true", help="skip OpenSim's tool")
    parser.add_argument(
        "--tests", action="store_true", help="also time the test suite's collection"
    )
    args = parser.parse_args()
    py = sys.executable
    ahbm = ahbm_command()
    print(f"start: {load()}")
    print(f"whole processes, median of {args.runs} warm runs each (s)")

    t = medians(
        {
            "pass": ([py, "-c", "pass"], None),
            "numpy": ([py, "-c", "import numpy"], None),
            "import": ([py, "-c", "import ahbm"], None),
            "help": ([*ahbm, "--help"], None),
        },
        args.runs,
    )
    print_pair('python -c "import ahbm"', t["import"], "python -c pass", t["pass"])
    print_pair("ahbm --help", t["help"], "python -c pass", t["pass"])
    print(f'  (python -c "import numpy": {t["numpy"]:.2f} s)')

    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        folder = Path(tmp)
        for f in args.data.iterdir():
            if f.is_file():
                shutil.copy2(f, folder / f.name)
        long = folder / "long"
        long.mkdir()
        for f in folder.iterdir():
            if f.is_file():
                shutil.copy2(f, long / f.name)
        repeat_trial(long, LONG_REPEATS)
        for label, where in (("subject01", folder), (f"subject01 x{LONG_REPEATS}", long)):
            commands = {"ahbm id": ([*ahbm, "id", SETUP, "-o", "ahbm_id.sto"], where)}
            if not args.no_opensim:
                out = where / "opensim_results"
                out.mkdir()
                commands["opensim"] = ([py, "-c", OPENSIM_ID, SETUP, str(out)], where)
            t = medians(commands, args.runs)
            if "opensim" in t:
                print_pair(
                    f"ahbm id ({label})", t["ahbm id"], "OpenSim InverseDynamicsTool", t["opensim"]
                )
            else:
                print(f"  ahbm id ({label})  {t['ahbm id']:.2f} s")
        commands = {"ahbm ik": ([*ahbm, "ik", SETUP_IK, "-o", "ahbm_ik.mot"], folder)}
        if not args.no_opensim:
            commands["opensim"] = ([py, "-c", OPENSIM_IK, SETUP_IK, "opensim_ik.mot"], folder)
        t = medians(commands, args.runs)
        if "opensim" in t:
            print_pair(
                "ahbm ik (subject01)", t["ahbm ik"], "OpenSim InverseKinematicsTool", t["opensim"]
            )
        else:
            print(f"  ahbm ik (subject01)  {t['ahbm ik']:.2f} s")
        (folder / "so_reserves.xml").write_text(SO_RESERVES_XML)
        (folder / SETUP_SO).write_text(SO_SETUP_XML.format(results="ahbm_so"))
        (folder / "osim_so.xml").write_text(SO_SETUP_XML.format(results="opensim_so"))
        commands = {"ahbm so": ([*ahbm, "so", SETUP_SO, "-q"], folder)}
        if not args.no_opensim:
            commands["opensim"] = ([py, "-c", OPENSIM_SO, "osim_so.xml"], folder)
        t = medians(commands, args.runs)
        if "opensim" in t:
            print_pair(
                "ahbm so (subject01, 0.5-1.7 s)",
                t["ahbm so"],
                "OpenSim AnalyzeTool (SO)",
                t["opensim"],
            )
        else:
            print(f"  ahbm so (subject01)  {t['ahbm so']:.2f} s")
        if args.cold:
            cold_runs(ahbm, folder)
    if args.tests:
        collection(py, args.runs)
    print(f"end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
