"""Fidelity of the gait pipeline to Vicon's Plug-in Gait on files it has never seen.

Run: python benchmarks/pig_fidelity.py FILE_OR_FOLDER [...] [--static STATIC.c3d]
     [--moment-frame distal|jcs|proximal] [--details] [--set NAME=VALUE ...]

A folder stands for the C3D files in it (and its subfolders), in name order.

Each file must carry Vicon's own Plug-in Gait outputs (``LKneeAngles``,
``LHipMoment``, ... and, for the load check, ``LGroundReactionForce``). The
pipeline runs blind on it twice: with ahbm's own rules
(``GaitSettings(moment_frame="distal")``: Plug-in Gait's projection, so
that the curves compare) and with ``compat="plug-in-gait"`` (Vicon's rules
where they differ from ahbm's; docs/conventions.md §8.1). The subject
parameters, static offsets and events are those the file gives; nothing is
tuned per file and no output Vicon stored is used as an input.

Printed per file, one row per curve and mode: the sagittal r (after the
same low-pass on both curves), the sagittal RMS difference of the moments
(N·m/kg; smoothed like r, and as stored), the sagittal RMS difference of
the angles (deg), and whether the transverse moment has Vicon's sign
(r > 0). ``--details`` adds the per-cause diagnosis of
:func:`ahbm.gait.compare_with_file_outputs` (r with the foot loaded and in
swing, r on the file's own segment axes, joint-centre distances, foot
loads, flags). The summary counts the curves that meet the targets:
sagittal moment r >= 0.95 and RMS <= 0.1 N·m/kg, hip and knee sagittal
angles within 2 deg RMS, ankle within 3 deg, transverse signs as Vicon's.

``--set`` passes subject inputs the lab knows but the files do not carry
(e.g. ``--set "thigh_rotation={'Left': 0.15, 'Right': 0.15}"``, angles in
rad) to both runs: any :class:`~ahbm.gait.GaitSettings` field.

No data ships with ahbm: give the files of your own lab.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from ahbm.gait import GaitSettings, analyze_gait

JOINTS = ("Hip", "Knee", "Ankle")
#: Targets: sagittal moment r and RMS (N·m/kg), sagittal angle RMS (deg) per joint.
MIN_R, MAX_RMS = 0.95, 0.1
MAX_ANGLE_RMS = {"Hip": 2.0, "Knee": 2.0, "Ankle": 3.0}


def modes(moment_frame: str, extra: dict | None = None) -> dict:
    """The two runs: ahbm's rules on the chosen projection, and Plug-in Gait's."""
    extra = extra or {}
    return {
        "ahbm": GaitSettings(moment_frame=moment_frame, **extra),
        "compat": GaitSettings(compat="plug-in-gait", **extra),
    }


def parse_sets(items) -> dict:
    """``["name=value", ...]`` -> ``{name: literal value}`` (numbers, dicts, strings)."""
    import ast

    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set {item!r}: expected NAME=VALUE")
        try:
            out[name.strip()] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[name.strip()] = value
    return out


def _f(x, fmt: str = "+.3f", width: int = 6) -> str:
    return f"{'-':>{width}}" if x is None or not np.isfinite(x) else f"{x:{fmt}}".rjust(width)


def run(path: str, static: str | None, settings: GaitSettings):
    """analyze_gait on one file; its comparison with the file's outputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze_gait(path, static=static, settings=settings)


def rows(res) -> list:
    """One dict per curve: name, kind, r, rms, rms_smoothed (sagittal), sign (transverse)."""
    out = []
    checks = res.file_outputs
    for p in "LR":
        for j in JOINTS:
            for kind in ("Moment", "Angles"):
                c = checks.get(f"{p}{j}{kind}")
                if c is None:
                    continue
                row = {"name": f"{p}{j}{kind}", "joint": j, "kind": kind, "r": c["r"][0]}
                if kind == "Angles":
                    row["rms"] = float(np.degrees(c["rms"][0]))
                else:
                    row["rms"] = c["rms"][0]
                    row["rms_smoothed"] = c.get("rms_smoothed", np.full(3, np.nan))[0]
                    row["sign"] = c["r"][2]
                out.append(row)
    return out


def details(res) -> None:
    """The per-cause diagnosis of compare_with_file_outputs, as text."""
    out = res.file_outputs
    for name, c in out.items():
        if name.endswith("Moment"):
            print(
                f"    {name:<14} loaded r {_f(c.get('r_loaded'))}, unloaded "
                f"{_f(c.get('r_unloaded'))}, on the file's axes {_f(c.get('r_file_axes'))} "
                f"({_f(c.get('axis_angle_deg'), '.0f', 3)} deg from ahbm's)"
                + (
                    f", {c['frames_other_load']} frames with another foot load left out"
                    if c.get("frames_other_load")
                    else ""
                )  # fmt: skip
            )
        elif name.endswith("GroundReactionForce"):
            print(f"    {name}: differs from Vicon's in {c['frames_differing']} of "
                  f"{c['frames_loaded']} loaded frames")  # fmt: skip
        elif "median_distance" in c:
            print(f"    {name}: {1000 * c['median_distance']:.1f} mm from Vicon's")
    for f in res.flags:
        print(f"    FLAG: {f}")


def c3d_files(args) -> list:
    """The files named, with each folder replaced by its C3D files (recursively, sorted)."""
    out = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() == ".c3d")
        else:
            out.append(p)
    return out


def summary(label: str, all_rows: list) -> None:
    mom = [r for r in all_rows if r["kind"] == "Moment"]
    ang = [r for r in all_rows if r["kind"] == "Angles"]
    r_ok = [r for r in mom if np.isfinite(r["r"])]
    n_r = sum(r["r"] >= MIN_R for r in r_ok)
    n_r90 = sum(r["r"] >= 0.9 for r in r_ok)
    rms_ok = [r for r in mom if np.isfinite(r["rms_smoothed"])]
    n_rms = sum(r["rms_smoothed"] <= MAX_RMS for r in rms_ok)
    n_raw = sum(r["rms"] <= MAX_RMS for r in rms_ok)
    a_ok = [r for r in ang if np.isfinite(r["rms"])]
    n_a = sum(r["rms"] <= MAX_ANGLE_RMS[r["joint"]] for r in a_ok)
    s_ok = [r for r in mom if np.isfinite(r["sign"])]
    n_s = sum(r["sign"] > 0 for r in s_ok)
    print(
        f"  {label:<7} sagittal moments r >= {MIN_R}: {n_r} of {len(r_ok)} (r >= 0.9: {n_r90}; "
        f"{len(mom) - len(r_ok)} flat or too short); RMS <= {MAX_RMS} N·m/kg: {n_rms} of "
        f"{len(rms_ok)} smoothed, {n_raw} as stored; sagittal angles within target "
        f"(hip, knee 2 deg, ankle 3 deg RMS): {n_a} of {len(a_ok)}; transverse moment "
        f"signs as Vicon's: {n_s} of {len(s_ok)}"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="C3D files, or folders of them")
    ap.add_argument("--static", default=None, help="static trial used for every file")
    ap.add_argument(
        "--moment-frame",
        default="distal",
        choices=("distal", "jcs", "proximal"),
        help="projection of ahbm's own run (default: distal, Plug-in Gait's)",
    )
    ap.add_argument("--details", action="store_true", help="print the per-cause diagnosis")
    ap.add_argument(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="a GaitSettings field for both runs (subject inputs the files lack)",
    )
    args = ap.parse_args(argv)
    runs = modes(args.moment_frame, parse_sets(args.set))
    totals = {m: [] for m in runs}
    failed = []
    for f in c3d_files(args.files):
        results = {}
        try:
            for m, st in runs.items():
                results[m] = run(str(f), args.static, st)
        except Exception as err:  # noqa: BLE001 - one file's failure is reported, not fatal
            failed.append(f"{f}: {type(err).__name__}: {err}")
            print(f"\n{f}\n  NOT COMPARED: {type(err).__name__}: {err}")
            continue
        first = next(iter(results.values()))
        print(f"\n{f}  (events: {first.settings.get('events')}; static offsets: "
              f"{first.settings.get('static_calibration')})")  # fmt: skip
        print(f"  {'curve':<14} {'mode':<7} {'r sag':>6} {'RMS sag':>8} {'(stored)':>8} "
              f"{'trans sign':>10}")  # fmt: skip
        by_mode = {m: {r["name"]: r for r in rows(res)} for m, res in results.items()}
        names = list(dict.fromkeys(n for rs in by_mode.values() for n in rs))
        for name in names:
            for m in runs:
                r = by_mode[m].get(name)
                if r is None:
                    continue
                totals[m].append(r)
                if r["kind"] == "Angles":
                    print(f"  {name:<14} {m:<7} {_f(r['r'])} {_f(r['rms'], '.2f', 8)} deg")
                    continue
                sign = "-" if not np.isfinite(r["sign"]) else ("same" if r["sign"] > 0 else
                                                               "OPPOSITE")  # fmt: skip
                print(f"  {name:<14} {m:<7} {_f(r['r'])} {_f(r['rms_smoothed'], '.3f', 8)} "
                      f"{_f(r['rms'], '.3f', 8)} {sign:>10}")  # fmt: skip
        if args.details:
            for m, res in results.items():
                print(f"  diagnosis, {m}:")
                details(res)
    if failed:
        print(f"\n{len(failed)} file(s) not compared (no Plug-in Gait outputs, or an error)")
    print("\nover all files:")
    for m, rs in totals.items():
        summary(m, rs)


if __name__ == "__main__":
    main()
