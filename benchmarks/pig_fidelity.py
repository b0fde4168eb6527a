"""Fidelity of the gait pipeline to Vicon's Plug-in Gait on files it has never seen.

Run: python benchmarks/pig_fidelity.py FILE_OR_FOLDER [...] [--static STATIC.c3d]

A folder stands for the C3D files in it (and its subfolders), in name order.

Each file must carry Vicon's own Plug-in Gait outputs (``LKneeAngles``,
``LHipMoment``, ... and, for the load check, ``LGroundReactionForce``). The
pipeline runs blind on it (``analyze_gait(path, moment_frame="distal")``, the
subject parameters and events as the file gives them; nothing tuned per
file), then :func:`ahbm.gait.compare_with_file_outputs` compares the
result with the file's curves. Printed per file: the correlation per
component of every angle and moment, the joint-centre distances, the frames
whose foot load differs from Vicon's (left out of that foot's moments), the
sagittal moment's r split by ahbm's foot load (loaded / unloaded frames) and
on the file's own distal segment axes (with their angle from ahbm's), and
the flags; then over all files: the share of sagittal moment curves with
r >= 0.9 and of transverse moment curves with a positive r (signs agreeing).

No data ships with ahbm: give the files of your own lab.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from ahbm.gait import GaitSettings, analyze_gait

JOINTS = ("Hip", "Knee", "Ankle")


def _fmt(r) -> str:
    return " ".join("  -  " if not np.isfinite(x) else f"{x:+.3f}" for x in r)


def run(path: str, static: str | None) -> tuple[list, list]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze_gait(path, static=static, settings=GaitSettings(moment_frame="distal"))
    out = res.file_outputs
    print(f"\n{path}")
    print(f"  events: {res.settings.get('events')}")
    sag, trans = [], []
    for p in "LR":
        for kind in ("Angles", "Moment"):
            for j in JOINTS:
                name = f"{p}{j}{kind}"
                c = out.get(name)
                if c is None:
                    continue
                extra = ""
                if "frames_other_load" in c:
                    extra = f"  ({c['frames_other_load']} frames with another foot load left out)"
                if kind == "Moment":
                    extra += (
                        f"  [sagittal r loaded {c.get('r_loaded', np.nan):+.3f}, unloaded "
                        f"{c.get('r_unloaded', np.nan):+.3f}, on the file's axes "
                        f"{c.get('r_file_axes', np.nan):+.3f} "
                        f"({c.get('axis_angle_deg', np.nan):.0f} deg)]"
                    )
                print(f"  {name:<14} r = {_fmt(c['r'])}  over {c['frames']} frames{extra}")
                if kind == "Moment":
                    sag.append(c["r"][0])
                    trans.append(c["r"][2])
        g = out.get(f"{p}GroundReactionForce")
        if g is not None:
            print(
                f"  {p}GroundReactionForce: differs from Vicon's in {g['frames_differing']} of "
                f"{g['frames_loaded']} loaded frames (file scale {g['scale']:.3f})"
            )
    for name in ("LHJC", "RHJC", "LKJC", "RKJC", "LAJC", "RAJC"):
        if name in out:
            print(f"  {name}: {1000 * out[name]['median_distance']:.1f} mm from Vicon's")
    for f in res.flags:
        print(f"  FLAG: {f}")
    return sag, trans


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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="C3D files, or folders of them")
    ap.add_argument("--static", default=None, help="static trial used for every file")
    args = ap.parse_args(argv)
    sag, trans = [], []
    failed = []
    for f in c3d_files(args.files):
        try:
            s, t = run(str(f), args.static)
        except Exception as err:  # noqa: BLE001 - one file's failure is reported, not fatal
            failed.append(f"{f}: {type(err).__name__}: {err}")
            print(f"\n{f}\n  NOT COMPARED: {type(err).__name__}: {err}")
            continue
        sag += s
        trans += t
    if failed:
        print(f"\n{len(failed)} file(s) not compared (no Plug-in Gait outputs, or an error)")
    sag_a, trans_a = np.array(sag), np.array(trans)
    ok = np.isfinite(sag_a)
    print(
        f"\nsagittal moments: r >= 0.9 in {int((sag_a[ok] >= 0.9).sum())}, r >= 0.95 in "
        f"{int((sag_a[ok] >= 0.95).sum())} of {int(ok.sum())} curves ({int((~ok).sum())} flat or "
        "not compared: less than 0.05 N·m/kg peak to peak, or too few frames); "
        "transverse moments: same sign (r > 0) in "
        f"{int((trans_a[np.isfinite(trans_a)] > 0).sum())} of {int(np.isfinite(trans_a).sum())}"
    )


if __name__ == "__main__":
    main()
