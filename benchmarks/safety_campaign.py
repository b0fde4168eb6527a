"""Careless- and hostile-user campaign: the ``ahbm`` commands must never destroy files.

Each case builds a folder the way a careless or hostile user would (an output
named as an input, a glob over symlink loops, a planted ``numpy.py``, absurd
numbers, special files, a huge setup file ...), runs one ``ahbm`` command or a
short Python program as a whole child process with limits (a timeout, an
address-space limit, its own temporary folder, a fresh ``NUMBA_CACHE_DIR`` where
the case needs one) and classifies what happened:

- ``data loss``: a file the user had before the run (the protected files of the
  case) changed or disappeared, or a file was written outside the folders the
  case allows;
- ``hang``: the child did not finish within the timeout;
- ``code execution``: a planted module ran (it writes a marker file);
- ``traceback``: the child printed a Python traceback or was killed by a signal
  (the contract is an ``ahbm ...: error: ...`` line and a nonzero exit);
- ``silent garbage``: the command exited 0 (or returned) with a result it
  should have refused or flagged (the case says what it expects);
- ``ok``: none of the above.

The cases are those of the probe behind docs/security.md, numbered as there.
Cases 1-4, 8, 10, 11 and 17 use OpenSim's walking trial from the shared data
(``../shared/data/opensim``); they are reported as not run when it is missing.

Run: ``python benchmarks/safety_campaign.py [--only 1 5 ...] [--timeout 120]
[--json out.json] [-v]``. Prints one line per case and the totals, and exits 1
if any case is not ``ok``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
OPENSIM = SHARED / "opensim"
PROBLEMS = ("data loss", "hang", "code execution", "traceback", "silent garbage")
_MEMORY = 4 << 30  # address-space limit of a child, bytes


# ----------------------------------------------------------------------------- helpers


def _ahbm() -> list[str]:
    """The ``ahbm`` command as a user runs it (the console script beside this Python)."""
    script = Path(sys.executable).parent / "ahbm"
    return [str(script)] if script.exists() else [sys.executable, "-P", "-m", "ahbm"]


def _py(code: str) -> list[str]:
    return [sys.executable, "-P", "-c", textwrap.dedent(code)]


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _snapshot(folder: Path) -> dict[str, str | None]:
    return {
        str(p.relative_to(folder)): _digest(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _opensim_copy(tmp: Path) -> Path:
    """The walking trial's files in `tmp`/w (setups with absolute paths unchanged)."""
    work = tmp / "w"
    work.mkdir()
    for name in (
        "subject01.osim",
        "subject01_Setup_IK.xml",
        "subject01_Setup_ID.xml",
        "subject01_walk.trc",
        "subject01_walk_IK.mot",
        "subject01_walk_grf.mot",
        "subject01_walk_grf.xml",
    ):
        shutil.copy2(OPENSIM / name, work / name)
    return work


def _edit(path: Path, pattern: str, replacement: str) -> None:
    text = path.read_text()
    new, n = re.subn(pattern, replacement, text, count=1)
    if n != 1:
        raise RuntimeError(f"{path.name}: {pattern!r} not found")
    path.write_text(new)


def _trc_with(path: Path, row: int, column: int, value: str) -> None:
    """Replace one number of a TRC/MOT data row (0-based data row, 0-based column)."""
    lines = path.read_text().splitlines(keepends=True)
    header_end = next(
        i for i, line in enumerate(lines) if line.strip() and line.split()[0] in ("1", "0.00000000")
    )
    fields = lines[header_end + row].rstrip("\n").split("\t")
    fields[column] = value
    lines[header_end + row] = "\t".join(fields) + "\n"
    path.write_text("".join(lines))


def _mot_with(path: Path, row: int, column: str, value: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.strip().lower() == "endheader")
    labels = lines[end + 1].split()
    j = labels.index(column)
    fields = lines[end + 2 + row].split()
    fields[j] = value
    lines[end + 2 + row] = "\t".join(fields) + "\n"
    path.write_text("".join(lines))


def _small_c3d(path: Path, labels=("A", "B", "C"), n=20) -> None:
    code = f"""
        import numpy as np
        from ahbm.io import Trial, write_c3d
        rng = np.random.default_rng(0)
        t = Trial(points=rng.normal(size=({n}, {len(labels)}, 3)) * 100,
                  point_labels={list(labels)!r}, point_rate=100.0, point_units="mm")
        write_c3d(t, {str(path)!r})
    """
    subprocess.run(_py(code), check=True, capture_output=True, timeout=300)


def _walking_c3d(path: Path) -> None:
    """The gait demo's synthetic walk (Plug-in Gait markers, two plates), as C3D."""
    code = f"""
        from ahbm.io import write_c3d
        from ahbm.gait.demo import synthetic_walking_trial
        trial, _ = synthetic_walking_trial()
        write_c3d(trial, {str(path)!r})
    """
    subprocess.run(_py(code), check=True, capture_output=True, timeout=600)


@dataclass
class Case:
    """One probe: how to build it, what to run, and what counts as garbage."""

    number: str
    title: str
    build: object  # (tmp) -> dict(cmd=..., cwd=..., protect=[...], ...)
    needs_opensim: bool = False
    timeout: float | None = None


@dataclass
class Outcome:
    number: str
    title: str
    verdict: str
    detail: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- cases
# Each builder returns a dict: cmd (list), cwd (Path), protect (list of Paths whose
# bytes must not change), outside (folder that must stay as it was, optional),
# planted (marker Path, optional), env (dict, optional), expect (callable
# (rc, out, err, tmp) -> str | None: a "silent garbage" reason, or None).


def _refused(rc, out, err, tmp):
    return None if rc != 0 and "error:" in err else "exit 0 (or no error line): not refused"


def case_ik_over_trc(tmp):
    w = _opensim_copy(tmp)
    _edit(
        w / "subject01_Setup_IK.xml",
        r"<output_motion_file>[^<]*<",
        "<output_motion_file>subject01_walk.trc<",
    )
    _edit(w / "subject01_Setup_IK.xml", r"<time_range>[^<]*<", "<time_range> 0 0.05<")
    return dict(
        cmd=[*_ahbm(), "ik", "subject01_Setup_IK.xml"],
        cwd=w,
        protect=[w / "subject01_walk.trc"],
        expect=_refused,
    )


def case_ik_over_setup(tmp):
    w = _opensim_copy(tmp)
    s = w / "subject01_Setup_IK.xml"
    _edit(s, r"<output_motion_file>[^<]*<", "<output_motion_file>subject01_Setup_IK.xml<")
    _edit(s, r"<time_range>[^<]*<", "<time_range> 0 0.05<")
    return dict(cmd=[*_ahbm(), "ik", s.name], cwd=w, protect=[s], expect=_refused)


def case_id_over_coordinates(tmp):
    w = _opensim_copy(tmp)
    s = w / "subject01_Setup_ID.xml"
    _edit(s, r"<output_gen_force_file>[^<]*<", "<output_gen_force_file>subject01_walk_IK.mot<")
    _edit(s, r"<results_directory>[^<]*<", "<results_directory>./<")
    return dict(
        cmd=[*_ahbm(), "id", s.name], cwd=w, protect=[w / "subject01_walk_IK.mot"], expect=_refused
    )


def case_id_output_over_model(tmp):
    w = _opensim_copy(tmp)
    return dict(
        cmd=[*_ahbm(), "id", "subject01_Setup_ID.xml", "-o", "subject01.osim"],
        cwd=w,
        protect=[w / "subject01.osim"],
        expect=_refused,
    )


def case_setup_name_leaves_folder(tmp):
    w = _opensim_copy(tmp)
    s = w / "subject01_Setup_IK.xml"
    _edit(s, r"<InverseKinematicsTool[^>]*>", '<InverseKinematicsTool name="../../escaped">')
    _edit(s, r"<time_range>[^<]*<", "<time_range> 0 0.05<")
    _edit(s, r"<output_motion_file>[^<]*<", "<output_motion_file>out.mot<")
    _edit(s, r"<results_directory>[^<]*<", "<results_directory>res<")
    (w / "res").mkdir()
    return dict(
        cmd=[*_ahbm(), "ik", s.name], cwd=w, protect=[], outside=tmp, allowed=[w], expect=_refused
    )


def case_concurrent_store(tmp):
    src = tmp / "walk.c3d"
    _walking_c3d(src)
    names = [tmp / f"walk{i}.c3d" for i in range(2)]
    for n in names:
        shutil.copy2(src, n)
    store = tmp / "store.h5"
    code = f"""
        import subprocess, sys
        cmd = {_ahbm()!r}
        procs = [subprocess.Popen(cmd + ["gait", str(p), "--output", {str(store)!r}, "--quiet",
                                          "--mass", "70", "--height", "1.75"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for p in {[str(n) for n in names]!r}]
        codes = []
        for p in procs:
            out, err = p.communicate()
            sys.stderr.write(err)
            codes.append(p.returncode)
        from ahbm.io.hdf5 import list_trials
        kept = list_trials({str(store)!r})
        print("exit codes", codes, "trials", kept)
        raise SystemExit(0 if all(c == 0 for c in codes) and len(kept) == 2 else 9)
    """

    def expect(rc, out, err, tmp):
        if rc == 9:
            return "a writer's trial is missing from the store: " + out.strip()
        return None

    return dict(cmd=_py(code), cwd=tmp, protect=[src], expect=expect, data_loss_codes=(9,))


def case_glob_symlink_loop(tmp):
    d = tmp / "d"
    d.mkdir()
    _small_c3d(d / "a.c3d")
    os.symlink(".", d / "loop1")
    os.symlink(".", d / "loop2")
    (tmp / "out").mkdir()
    return dict(
        cmd=[*_ahbm(), "convert", "d/**/*.c3d", "-o", "out", "--no-progress", "-j", "1"],
        cwd=tmp,
        protect=[d / "a.c3d"],
        expect=None,
    )


def case_planted_numpy(tmp):
    plant = tmp / "here"
    plant.mkdir()
    marker = tmp / "PLANTED-RAN"
    for name in ("numpy", "scipy", "numba", "ahbm"):
        (plant / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write('{name}\\n')\nraise SystemExit(3)\n"
        )
    cache = tmp / "numba-cache"
    cache.mkdir()
    return dict(
        cmd=[*_ahbm(), "demo", "--quiet", "--output", str(tmp / "demo")],
        cwd=plant,
        protect=[],
        planted=marker,
        env={"NUMBA_CACHE_DIR": str(cache)},
        expect=None,
    )


def case_unwritable_output(tmp):
    w = _opensim_copy(tmp)
    # /sys refuses new files even to root (a chmod'ed folder does not stop root)
    return dict(
        cmd=[*_ahbm(), "id", "subject01_Setup_ID.xml", "-o", "/sys/kernel/ahbm.sto"],
        cwd=w,
        protect=[],
        expect=_refused,
    )


def case_convert_unwritable(tmp):
    _small_c3d(tmp / "a.c3d")
    return dict(
        cmd=[*_ahbm(), "convert", "a.c3d", "-o", "/sys/kernel", "--no-progress", "-j", "1"],
        cwd=tmp,
        protect=[tmp / "a.c3d"],
        expect=lambda rc, out, err, tmp: None if rc != 0 else "exit 0",
    )


def case_mathtext_labels(tmp):
    labels = ["$\\undefinedmacro{$", "$" + "x^{" * 60 + "$", "A"]
    _small_c3d(tmp / "m$\\frac{$.c3d", labels=labels)
    return dict(
        cmd=[*_ahbm(), "view", "m$\\frac{$.c3d", "--labels", "--png", "out.png"],
        cwd=tmp,
        protect=[tmp / "m$\\frac{$.c3d"],
        expect=lambda rc, out, err, tmp: (
            None if rc == 0 and (tmp / "out.png").exists() else f"no figure (exit {rc})"
        ),
    )


def _wants_named_refusal(*words):
    def expect(rc, out, err, tmp):
        if rc == 0:
            return "exit 0: the absurd value was not refused"
        missing = [w for w in words if w.lower() not in err.lower()]
        if missing:
            return f"refused without naming {missing}: {err.strip()[-300:]}"
        if "overflow" in err.lower() and "RuntimeWarning" in err:
            return "numpy overflow warnings printed"
        return None

    return expect


def case_id_absurd_angle(tmp):
    w = _opensim_copy(tmp)
    _mot_with(w / "subject01_walk_IK.mot", 10, "hip_flexion_r", "1e30")
    return dict(
        cmd=[*_ahbm(), "id", "subject01_Setup_ID.xml", "-o", "out.sto"],
        cwd=w,
        protect=[],
        expect=_wants_named_refusal("subject01_walk_IK.mot", "hip_flexion_r"),
    )


def case_ik_absurd_marker(tmp):
    w = _opensim_copy(tmp)
    s = w / "subject01_Setup_IK.xml"
    _edit(s, r"<time_range>[^<]*<", "<time_range> 0 0.1<")
    _trc_with(w / "subject01_walk.trc", 2, 3, "1e30")
    return dict(
        cmd=[*_ahbm(), "ik", s.name, "-o", "out.mot"],
        cwd=w,
        protect=[],
        expect=_wants_named_refusal("subject01_walk.trc", "R.ASIS"),
    )


def case_write_c3d_range(tmp):
    code = f"""
        import numpy as np
        from ahbm.errors import AhbmError
        from ahbm.io import Trial, write_c3d, read_c3d
        bad = []
        for value in (3e38, 1e308, -1e300):
            p = np.zeros((5, 2, 3)); p[2, 1, 0] = value
            t = Trial(points=p, point_labels=["A", "B"], point_rate=100.0, point_units="m")
            try:
                write_c3d(t, {str(tmp / "x.c3d")!r}, units="mm")  # 3e38 m is 3e41 mm
            except AhbmError as err:
                print("refused", value, err)
                continue
            back = read_c3d({str(tmp / "x.c3d")!r}).points[2, 1, 0]
            bad.append(f"{{value:g}} m written, read back as {{back}}")
        print("; ".join(bad))
        raise SystemExit(8 if bad else 0)
    """
    return dict(
        cmd=_py(code),
        cwd=tmp,
        protect=[],
        expect=lambda rc, out, err, tmp: out.strip() if rc == 8 else None,
    )


def _special_folder(tmp):
    d = tmp / "d"
    d.mkdir()
    _small_c3d(d / "good.c3d")
    os.mkfifo(d / "fifo.c3d")
    os.symlink("/dev/zero", d / "zero.c3d")
    os.symlink("/dev/urandom", d / "random.c3d")
    os.symlink("missing.c3d", d / "dangling.c3d")
    os.symlink("self.c3d", d / "self.c3d")
    (tmp / "out").mkdir()
    return d


def case_special_files(tmp):
    d = _special_folder(tmp)

    def expect(rc, out, err, tmp):
        text = out + err
        unlisted = [n for n in ("fifo", "zero", "random", "dangling", "self") if n not in text]
        if unlisted:
            return f"special files not listed as skipped: {unlisted}"
        if not (tmp / "out" / "good.h5").exists():
            return "the good file beside them was not converted"
        return None  # found in a folder: listed with the reason; the exit status may be 0

    return dict(
        cmd=[*_ahbm(), "convert", "d", "-o", "out", "--no-progress", "-j", "1"],
        cwd=tmp,
        protect=[d / "good.c3d"],
        expect=expect,
    )


def case_special_files_named(tmp):
    _special_folder(tmp)

    def expect(rc, out, err, tmp):
        if "no such file" in (out + err).lower() and "fifo" in (out + err):
            return "the FIFO is reported as 'no such file'"
        return None if rc != 0 else "exit 0"

    return dict(
        cmd=[
            *_ahbm(),
            "convert",
            "d/fifo.c3d",
            "d/zero.c3d",
            "-o",
            "out",
            "--no-progress",
            "-j",
            "1",
        ],
        cwd=tmp,
        protect=[],
        expect=expect,
    )


def case_same_output_name(tmp):
    d = tmp / "d"
    d.mkdir()
    _small_c3d(d / "walk.c3d")
    code = f"""
        from ahbm.io import read_c3d, write_trc
        write_trc(read_c3d({str(d / "walk.c3d")!r}), {str(d / "walk.trc")!r})
    """
    subprocess.run(_py(code), check=True, capture_output=True, timeout=300)
    (tmp / "out").mkdir()
    return dict(
        cmd=[*_ahbm(), "convert", "d", "-o", "out", "--no-progress", "-j", "1"],
        cwd=tmp,
        protect=[d / "walk.c3d", d / "walk.trc"],
        expect=lambda rc, out, err, tmp: None if rc != 0 else "exit 0 with a collision",
    )


def case_huge_setup(tmp):
    w = _opensim_copy(tmp)
    s = w / "subject01_Setup_ID.xml"
    joints = " ".join(f"joint{i}" for i in range(12_000_000))  # ~ 100 MB
    _edit(
        s,
        r"<forces_to_exclude>",
        f"<joints_to_report_body_forces>{joints}</joints_to_report_body_forces><forces_to_exclude>",
    )

    def expect(rc, out, err, tmp):
        if len(err) > 100_000 or len(out) > 100_000:
            return f"printed {len(out) + len(err):,} characters"
        return None if rc != 0 else "exit 0 on a 100 MB setup"

    return dict(
        cmd=[*_ahbm(), "id", s.name, "-o", "out.sto"],
        cwd=w,
        protect=[s],
        expect=expect,
        timeout=30.0,
        memory=3 << 30,
    )


def case_one_bad_plate(tmp):
    src = tmp / "walk.c3d"
    _walking_c3d(src)
    code = f"""
        import warnings
        import numpy as np
        from ahbm.io import read_c3d, write_c3d
        trial = read_c3d({str(src)!r})
        n = len(trial.force_plates)
        # put plate 1's FORCE_PLATFORM:CORNERS on one line (x axis): collinear corners
        corners = np.array(trial.parameters["FORCE_PLATFORM"]["CORNERS"], dtype=float)
        corners[1:, :, 0] = 0.0
        trial.parameters["FORCE_PLATFORM"]["CORNERS"] = corners
        write_c3d(trial, {str(tmp / "bad.c3d")!r})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            back = read_c3d({str(tmp / "bad.c3d")!r})
        m = len(back.force_plates)
        print("plates", n, "->", m, "warnings:", [str(w.message)[:120] for w in caught])
        raise SystemExit(0 if m == n - 1 and caught else 8)
    """
    return dict(
        cmd=_py(code),
        cwd=tmp,
        protect=[src],
        expect=lambda rc, out, err, tmp: out.strip() if rc == 8 else None,
    )


def _huge_in(file, how):
    def build(tmp):
        w = _opensim_copy(tmp)
        if how == "trc":
            _trc_with(w / file, 2, 3, "1e308")
            _edit(w / "subject01_Setup_IK.xml", r"<time_range>[^<]*<", "<time_range> 0 0.1<")
            cmd, words = [*_ahbm(), "ik", "subject01_Setup_IK.xml", "-o", "o.mot"], [file, "R.ASIS"]
        elif how == "mot":
            _mot_with(w / file, 5, "knee_angle_r", "1e308")
            cmd, words = (
                [*_ahbm(), "id", "subject01_Setup_ID.xml", "-o", "o.sto"],
                [file, "knee_angle_r"],
            )
        else:
            _mot_with(w / file, 5, "ground_force_vy", "1e308")
            cmd, words = (
                [*_ahbm(), "id", "subject01_Setup_ID.xml", "-o", "o.sto"],
                [file, "ground_force_vy"],
            )
        return dict(cmd=cmd, cwd=w, protect=[], expect=_wants_named_refusal(*words))

    return build


CASES = [
    Case("1", "ik: <output_motion_file> names the input .trc", case_ik_over_trc, True),
    Case("2", "ik: <output_motion_file> names the setup itself", case_ik_over_setup, True),
    Case(
        "3",
        "id: <output_gen_force_file> names its coordinates file",
        case_id_over_coordinates,
        True,
    ),
    Case("4", "id -o names the model", case_id_output_over_model, True),
    Case(
        "4b",
        "ik: a setup name with ../ leaves the results folder",
        case_setup_name_leaves_folder,
        True,
    ),
    Case("5", "two gait processes write one store", case_concurrent_store, False, 900.0),
    Case("6", "convert 'd/**/*.c3d' over two symlinks to .", case_glob_symlink_loop, False, 60.0),
    Case(
        "7",
        "first demo (cold numba cache) beside a planted numpy.py",
        case_planted_numpy,
        False,
        900.0,
    ),
    Case("8", "id into a folder that cannot be written", case_unwritable_output, True),
    Case("8b", "convert into a folder that cannot be written", case_convert_unwritable),
    Case("9", "view --labels --png with $mathtext$ labels and file name", case_mathtext_labels),
    Case("10", "id: a .mot hip angle of 1e30 deg", case_id_absurd_angle, True),
    Case("11", "ik: a .trc coordinate of 1e30 mm", case_ik_absurd_marker, True),
    Case("12", "write_c3d in mm: points of 3e38 m and 1e308 m", case_write_c3d_range),
    Case(
        "13",
        "convert a folder with a FIFO, devices and broken links",
        case_special_files,
        False,
        60.0,
    ),
    Case(
        "13b", "convert a FIFO and a device named explicitly", case_special_files_named, False, 60.0
    ),
    Case("14", "convert walk.c3d and walk.trc (one output name)", case_same_output_name),
    Case("15", "id with a 100 MB setup file", case_huge_setup, True),
    Case("16", "one force plate with collinear corners", case_one_bad_plate, False, 600.0),
    Case("17a", "ik: 1e308 in the .trc", _huge_in("subject01_walk.trc", "trc"), True),
    Case(
        "17b", "id: 1e308 in the coordinates .mot", _huge_in("subject01_walk_IK.mot", "mot"), True
    ),
    Case("17c", "id: 1e308 in the GRF .mot", _huge_in("subject01_walk_grf.mot", "grf"), True),
]


# ----------------------------------------------------------------------------- running


def _limits(memory: int):
    def apply():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        os.setsid()

    return apply


def run_case(case: Case, timeout: float, verbose: bool) -> Outcome:
    with tempfile.TemporaryDirectory(prefix=f"ahbm-safety-{case.number}-") as name:
        tmp = Path(name)
        try:
            spec = case.build(tmp)
        except Exception as err:  # the set-up itself failed: report, do not classify
            return Outcome(case.number, case.title, "set-up failed", f"{type(err).__name__}: {err}")
        before = _snapshot(tmp)
        protect = {p: _digest(p) for p in spec.get("protect", [])}
        env = {**os.environ, "MPLBACKEND": "Agg", **spec.get("env", {})}
        limit = case.timeout or timeout
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            spec["cmd"],
            cwd=spec["cwd"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            preexec_fn=_limits(spec.get("memory", _MEMORY)),
        )
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            return Outcome(
                case.number,
                case.title,
                "hang",
                f"killed after {limit:g} s",
                time.perf_counter() - t0,
            )
        seconds = time.perf_counter() - t0
        rc = proc.returncode
        if verbose:
            print(f"--- case {case.number}: exit {rc}\n{out[-2000:]}\n{err[-2000:]}")
        planted = spec.get("planted")
        if planted is not None and planted.exists():
            return Outcome(
                case.number,
                case.title,
                "code execution",
                f"planted module ran: {planted.read_text().split()}",
                seconds,
            )
        changed = [str(p.name) for p, h in protect.items() if _digest(p) != h]
        if changed or rc in spec.get("data_loss_codes", ()):
            detail = f"changed or removed: {changed}" if changed else out.strip()[-300:]
            return Outcome(case.number, case.title, "data loss", detail, seconds)
        if "outside" in spec:
            allowed = [str(a.relative_to(tmp)) for a in spec["allowed"]]
            after = _snapshot(tmp)
            stray = [
                p
                for p in after
                if p not in before and not any(p.startswith(a + os.sep) for a in allowed)
            ]
            if stray:
                return Outcome(
                    case.number,
                    case.title,
                    "data loss",
                    f"written outside the results folder: {stray}",
                    seconds,
                )
        if rc < 0 or "Traceback (most recent call last)" in err:
            last = err.strip().splitlines()[-1] if err.strip() else f"signal {-rc}"
            return Outcome(case.number, case.title, "traceback", last[:300], seconds)
        expect = spec.get("expect")
        reason = expect(rc, out, err, tmp) if expect is not None else None
        if reason:
            return Outcome(case.number, case.title, "silent garbage", reason[:400], seconds)
        said = (err.strip().splitlines() or out.strip().splitlines() or [""])[-1]
        return Outcome(case.number, case.title, "ok", f"exit {rc}: {said[:200]}", seconds)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", default=None, help="case numbers to run")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--json", type=Path, default=None, help="write the outcomes here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each child's output")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.only is None or c.number in args.only]
    outcomes = []
    for case in cases:
        if case.needs_opensim and not OPENSIM.is_dir():
            outcomes.append(Outcome(case.number, case.title, "not run", f"no {OPENSIM}"))
        else:
            outcomes.append(run_case(case, args.timeout, args.verbose))
        o = outcomes[-1]
        print(
            f"{o.number:>4}  {o.verdict:<15} {o.seconds:6.1f} s  {o.title}\n      {o.detail}",
            flush=True,
        )
    counts = {k: sum(o.verdict == k for o in outcomes) for k in (*PROBLEMS, "ok", "not run")}
    other = len(outcomes) - sum(counts.values())
    print(
        "\n"
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + (f", {other} set-up failed" if other else "")
    )
    if args.json is not None:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    return 0 if counts["ok"] + counts["not run"] == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
