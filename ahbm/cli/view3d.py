"""``ahbm view3d``: a model, its motion, markers, ground reactions and muscles in the browser.

Reads the files here (the graphics take data) and writes the self-contained
page of :func:`ahbm.graphics.view3d`. Imports only argparse at load.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["VIEW3D_HELP", "add_view3d_arguments", "run_view3d"]

VIEW3D_HELP = "write a 3-D browser view (WebGL, one HTML file) of a model, motion and trial"
_MODEL = (".osim", ".json")
_TRIAL = (".c3d", ".trc", ".h5", ".hdf5", ".hdf")
_TABLE = (".mot", ".sto")


def add_view3d_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``ahbm view3d``."""
    parser.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="a model (.osim, ahbm .json), a trial (.c3d, .trc, .h5) and tables (.mot/.sto: "
        "coordinates, ground reactions, activations), in any order",
    )
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help="the page (default: FIRST_FILE.html here)"
    )
    parser.add_argument("--name", default=None, help="trial name inside an HDF5 store")
    parser.add_argument(
        "--mesh-dir",
        action="append",
        type=Path,
        default=[],
        help="folder with the model's mesh files (.vtp, .stl, .obj); the model's folder is "
        "always searched",
    )
    parser.add_argument(
        "--geometry",
        choices=("auto", "meshes", "primitives", "skeleton"),
        default="auto",
        help="bodies drawn with meshes where found (auto), primitives only, or bones only",
    )
    parser.add_argument("--collision", action="store_true", help="draw the collision shapes")
    parser.add_argument("--no-muscles", action="store_true", help="do not draw muscle paths")
    parser.add_argument(
        "--muscle-color", choices=("activation", "force"), default="activation",
        help="colour the muscles by activation or by force / max isometric force",
    )  # fmt: skip
    parser.add_argument(
        "--plot",
        action="append",
        default=[],
        metavar="CHANNEL",
        help="plot a coordinate, muscle or force channel ('ground Fy') beside the scene; "
        "repeat for more",
    )
    parser.add_argument(
        "--force-scale", type=float, default=0.001, help="arrow length per newton, m/N"
    )
    parser.add_argument("--title", default=None, help="title of the page")


def _kind_of_table(table, model) -> str:
    """'forces', 'muscles' or 'motion': what a .mot/.sto table holds."""
    cols = set(table.columns)
    if any(c.endswith("force_vx") and c[:-1] + "y" in cols for c in cols):
        return "forces"
    if model is not None:
        names = set(model.coordinate_names)
        keys = {c.split("/")[-2] if c.endswith("/value") else c for c in cols}
        if keys & names:
            return "motion"
        muscles = {m.name for m in getattr(model, "muscles", ())}
        if cols & muscles or any(c.endswith("/activation") for c in cols):
            return "muscles"
    return "motion"


def run_view3d(args: argparse.Namespace) -> int:
    """Read the files, build the scene and write the page."""
    from ahbm.errors import DataError

    paths = [Path(p) for p in args.files]
    for p in paths:
        if not p.is_file():
            raise DataError(f"'{p}' is not a file")
    models = [p for p in paths if p.suffix.lower() in _MODEL]
    trials = [p for p in paths if p.suffix.lower() in _TRIAL]
    tables = [p for p in paths if p.suffix.lower() in _TABLE]
    other = [p for p in paths if p not in models + trials + tables]
    if other:
        raise DataError(
            f"cannot view '{other[0]}': give a model (.osim, .json), a trial (.c3d, .trc, .h5) "
            "or tables (.mot, .sto)"
        )
    if len(models) > 1 or len(trials) > 1:
        raise DataError("give at most one model file and one trial file")
    model = None
    mesh_dirs = list(args.mesh_dir)
    if models:
        if models[0].suffix.lower() == ".osim":
            from ahbm.opensim import read_osim

            model = read_osim(models[0])
        else:
            from ahbm.kinematics.model_file import load_model

            model = load_model(models[0])
        mesh_dirs.append(models[0].parent)
    trial = None
    if trials:
        from ahbm.cli.view import _read

        trial = _read(trials[0], args.name)
    motion = forces = muscles = None
    if tables:
        from ahbm.opensim import read_mot

        for p in tables:
            table = read_mot(p)
            kind = _kind_of_table(table, model)
            if kind == "forces":
                forces = table
            elif kind == "muscles":
                muscles = table
            else:
                if model is None:
                    raise DataError(f"'{p}' holds coordinates: give the model (.osim) too")
                motion = table
                if any(c.endswith("/activation") for c in table.columns):
                    muscles = table if muscles is None else muscles
    if forces is None and trial is not None and getattr(trial, "force_plates", None):
        forces = trial
    if model is None and trial is None:
        raise DataError("give a model (.osim, .json) or a trial (.c3d, .trc, .h5) to view")
    from ahbm.graphics.view3d import view3d

    view = view3d(
        model,
        motion,
        markers=trial,
        forces=forces,
        muscles=False if args.no_muscles else muscles,
        muscle_color=args.muscle_color,
        plots=args.plot or None,
        geometry=args.geometry,
        mesh_dirs=mesh_dirs,
        collision=args.collision,
        force_scale=args.force_scale,
        title=args.title or paths[0].stem,
    )
    out = args.output if args.output is not None else Path(paths[0].stem + ".html")
    if any(out.resolve() == p.resolve() for p in paths):
        raise DataError(f"the output '{out}' is one of the inputs: give another -o/--output")
    written = view.save(out)
    if not args.quiet:
        missing = view.meta.get("missing_meshes") or []
        if missing:
            print(
                f"{len(missing)} mesh files not found (bodies drawn with primitives): "
                + ", ".join(missing[:5])
                + (" ..." if len(missing) > 5 else "")
            )
    size = written.stat().st_size / 1e6
    print(f"wrote {written} ({view.n_frames} frames, {size:.2f} MB)")
    return 0
