"""OpenSim's Scale tool run by ahbm: ``ahbm scale SETUP.xml``.

:func:`~ahbm.opensim.scale_setup.read_scale_setup` reads an OpenSim Scale
setup (``<ScaleTool>``: the ``GenericModelMaker``, the ``ModelScaler`` with its
measurements and manual scales, and the ``MarkerPlacer``) into a frozen
:class:`~ahbm.opensim.scale_setup.ScaleSetup`; :func:`run_scale` runs it on
ahbm's engine and writes the files the setup names (scaled model, scale
factors, placed-marker model, static pose).

The steps are OpenSim's (``ScaleTool::run``):

1. **Generic model.** ``model_file`` is read (:func:`ahbm.opensim.read_osim`, or an
   ahbm JSON model file); a ``marker_set_file`` replaces the model's markers
   of the same names and adds the others.
2. **Model scaler.** In the static trial (``marker_file``), the frames of
   ``time_range`` are selected as OpenSim's ``MarkerData::findFrameRange``
   does (the last frame at or before the start time to the first frame at or
   after the end time). Each measurement's factor is the mean over its marker
   pairs of (mean trial distance) / (model distance in the default pose);
   ``scaling_order`` applies measurements and manual scales
   (:func:`ahbm.bsp.segment_scale_factors`); the model is scaled with
   ``preserve_mass_distribution`` and the subject ``mass``
   (:func:`ahbm.bsp.scale_segments`).
3. **Marker placer.** The static trial is averaged over its ``time_range``
   (missing samples skipped, as ``MarkerData::averageFrames``); model markers
   that the trial does not have are removed (as OpenSim does); the model is
   fitted to the averaged markers with the marker weights and coordinate
   tasks of the ``IKTaskSet`` (only the markers it lists, as OpenSim; the IK
   of :func:`ahbm.opensim.ik_tool.inverse_kinematics_opensim`: OpenSim's
   objective, clamped coordinate ranges, start at the default pose), and
   every model marker with data is moved to the measured position,
   expressed in its body frame in the fitted pose.

Relative file names are resolved against the setup file's folder, as
OpenSim does (absolute names are kept: OpenSim would prefix the folder to
them too); ``Unassigned`` means not given. A ``<MeasurementSet>``,
``<ScaleSet>`` or ``<IKTaskSet>`` may be kept in its own file (``file=``).

Notes
-----
- A measurement that names a marker missing from the model or from the
  static trial is a :class:`~ahbm.errors.DataError` (OpenSim warns and does
  not use the measurement); a marker without data in some selected frame
  makes the measurement unused, with a warning, as in OpenSim.
- A ``from_file`` coordinate task takes the coordinate file's value at the
  start of the time range, interpolated linearly (OpenSim evaluates a GCV
  spline of the file there).
- ahbm's fit of the static pose converges further than OpenSim's assembler
  (whose default accuracy stops earlier); placed markers then differ by the
  difference of the two poses times the marker's distance (0.5 mm on the
  shared subject01 trial).
- OpenSim does not move markers marked ``<fixed>true</fixed>``; ahbm's models
  carry no such flag, so every marker with data is moved.
- Trial times follow the TRC file's ``Frame#`` and ``DataRate`` (OpenSim uses
  its ``Time`` column, which files round to a few decimals); the selected
  frames agree unless a rounded time sits on a time-range boundary.
- The data of muscles and other forces kept in the ``"opensim"`` model-file
  section: path points, moving path points, wrap-object positions and
  display meshes are scaled with their bodies; each muscle's optimal fiber
  and tendon slack lengths (a ligament's resting length) are multiplied by
  the ratio of its path lengths at the default pose after and before
  scaling, as OpenSim's ``postScale`` does. Wrap-object dimensions are not
  scaled (OpenSim scales them), so the path lengths of wrapping muscles,
  and their fiber and tendon lengths, may differ from OpenSim's.
- With a ``<MarkerPlacer>`` whose ``apply`` is false, OpenSim 4.6's
  ``ScaleTool.run()`` reports failure after writing the scaled model; ahbm
  skips the placer.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.opensim.id_tool import (
    _STORAGE,
    _check_out,
    _default_q,
    _read_osim,
    _writable_folder,
)
from ahbm.opensim.scale_setup import MarkerPlacerSetup, ScaleSetup, _vec, read_scale_setup
from ahbm.opensim.setup_files import (
    _child_text,
    _listed,
    _objects,
)
from ahbm.types import ResultRepr

__all__ = [
    "ScaleResult",
    "run_scale",
    "write_model",
    "write_scale_factors",
]


# --- running it ---------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class ScaleResult(ResultRepr):
    """Result of :func:`run_scale` (a frozen result object).

    Attributes
    ----------
    model : Model
        The final model: scaled, then with its markers placed (when the
        marker placer is applied).
    scaled_model : Model
        The model after the model scaler (before marker placement).
    factors : dict
        ``{body: ndarray (3,)}`` scale factors applied (OpenSim's scale file).
    measurement_factors : dict
        ``{measurement: factor}``.
    q_static : ndarray, shape (nq,) or None
        The static pose fitted by the marker placer (rad, m).
    marker_errors : dict
        ``{marker: distance (m)}`` between the averaged trial markers and the
        model markers in the fitted pose, before the markers were moved.
    written : list of pathlib.Path
        The files written.
    """

    model: object
    scaled_model: object
    factors: dict
    measurement_factors: dict = field(default_factory=dict)
    q_static: np.ndarray | None = None
    marker_errors: dict = field(default_factory=dict)
    written: list = field(default_factory=list)


def _read_model(path: Path):
    try:
        is_file = path.is_file()
    except OSError as err:
        raise FileFormatError(
            f"cannot read model file '{path}' (named by the Scale setup): {err.strerror or err}"
        ) from err
    if not is_file:
        raise FileFormatError(f"model file '{path}' (named by the Scale setup) does not exist")
    if path.suffix.lower() == ".json":
        from ahbm.kinematics.model_file import load_model

        return load_model(path)
    return _read_osim(path)


def _default_pose(model) -> np.ndarray:
    """OpenSim's default pose: the coordinates' defaults, coupled coordinates from their drivers.

    OpenSim assembles the default pose (``Model::applyDefaultConfiguration``):
    a coordinate coupled to another by a ``CoordinateCouplerConstraint``
    (:class:`~ahbm.dynamics.CoordinateCoupling`) takes the value of its
    relation at the driver's default.
    """
    from ahbm.dynamics import ConstraintSet, CoordinateCoupling

    q = np.array(_default_q(model), dtype=float)
    couplings = [c for c in model.constraints if isinstance(c, CoordinateCoupling)]
    names = model.coordinate_names
    for _ in range(len(couplings)):  # a chain of couplings settles in as many sweeps
        for c in couplings:
            k = names.index(c.coordinate) if isinstance(c.coordinate, str) else int(c.coordinate)
            q[k] -= float(ConstraintSet([c]).position(model, q)[0])
    return q


#: Properties that OpenSim's ``extendPostScale`` keeps in proportion to the path length
#: (every muscle class: optimal fiber and tendon slack lengths; ligaments and expression
#: path forces: their resting or slack length). Other path forces keep theirs.
_LENGTH_PROPERTIES = {
    "Ligament": ("resting_length",),
    "ExpressionBasedPathForce": ("resting_length",),
    "Blankevoort1991Ligament": ("slack_length",),
}
_MUSCLE_LENGTHS = ("optimal_fiber_length", "tendon_slack_length")


def _post_scale_paths(generic, scaled):
    """The scaled model with OpenSim's ``postScale`` of its path forces applied.

    OpenSim keeps each muscle's optimal fiber length and tendon slack length
    (a ligament's resting length) in proportion to its path length: both are
    multiplied by ``L_scaled / L_generic``, the path lengths at each model's
    default pose (``Muscle::extendPostScale``). Returns the model and
    ``{force name: factor}``.
    """
    from dataclasses import replace

    from ahbm.muscles import muscle_lengths
    from ahbm.opensim.osim_section import OSIM_SECTION, OsimItem

    names = [mu.name for mu in scaled.muscles]
    if not names or [mu.name for mu in generic.muscles] != names:
        return scaled, {}
    before = muscle_lengths(generic, _default_pose(generic))
    after = muscle_lengths(scaled, _default_pose(scaled))
    factors = {n: float(a / b) for n, a, b in zip(names, after, before, strict=True) if b > 0.0}
    items = []
    for item in scaled.section(OSIM_SECTION):
        name = item.get("name") if item.kind == "force" else None
        if name in factors:
            data = item.data
            keys = (
                _MUSCLE_LENGTHS
                if all(isinstance(data.get(k), (int, float)) for k in _MUSCLE_LENGTHS)
                else _LENGTH_PROPERTIES.get(str(data.get("type")), ())
            )
            for k in keys:
                if isinstance(data.get(k), (int, float)) and not isinstance(data.get(k), bool):
                    data[k] = float(data[k]) * factors[name]
            item = OsimItem.make(item.kind, data) if keys else item
        items.append(item)
    scaled.set_section(OSIM_SECTION, items)
    muscles = []
    for mu in scaled.muscles:
        f = factors.get(mu.name)
        if f is not None and mu.model.endswith("Muscle"):
            mu = replace(
                mu,
                optimal_fiber_length=mu.optimal_fiber_length * f,
                tendon_slack_length=mu.tendon_slack_length * f,
            )
        muscles.append(mu)
    scaled.muscles = muscles
    return scaled, factors


def _apply_marker_set(model, path: Path):
    """Replace/add the markers of an OpenSim ``<MarkerSet>`` file (GenericModelMaker)."""
    from ahbm.opensim._xml import parse_xml_file

    root = parse_xml_file(path, "marker set")
    node = root if root.tag == "MarkerSet" else root.find("MarkerSet")
    if node is None:
        raise FileFormatError(f"'{path}' is not an OpenSim marker set file: no <MarkerSet>")
    bodies = model.body_names
    new = {}
    for el in _objects(node):
        if el.tag != "Marker":
            raise FileFormatError(f"{el.where()}: expected <Marker> in a MarkerSet")
        name = el.attrib.get("name", "").strip()
        frame = _child_text(el, "socket_parent_frame") or _child_text(el, "body")
        body = frame.rstrip("/").split("/")[-1]
        if not name or body not in bodies:
            raise FileFormatError(
                f"{el.where()}: marker {name!r} is attached to {frame!r}, which is not a body "
                f"of model '{model.name}' (bodies: {bodies})"
            )
        loc = el.find("location")
        if loc is None:
            raise FileFormatError(f"{el.where()}: a marker needs a <location>")
        new[name] = (body, _vec(loc, 3))
    for i, b in enumerate(model.bodies):
        mine = {k: p for k, (bb, p) in new.items() if bb == b.name}
        if mine or any(k in new for k in b.markers):
            kept = {k: v for k, v in b.markers.items() if k not in new}
            model.update_body(i, markers={**kept, **mine})
    return model


def _frame_range(time: np.ndarray, t0: float, t1: float) -> tuple[int, int]:
    """OpenSim's ``MarkerData::findFrameRange`` (inclusive frame indices)."""
    n = len(time)
    start, end = 0, n - 1
    before = np.nonzero(time <= t0)[0]
    if len(before):
        start = int(before[-1])
    after = np.nonzero(time[start:] >= t1)[0]
    if len(after):
        end = start + int(after[0])
    return start, end


def _static_trial(path: Path, time_range, where: str):
    from ahbm.io import read_trc

    if path is None:
        raise FileFormatError(f"the Scale setup's {where} names no <marker_file> (static trial)")
    if time_range is None:
        raise FileFormatError(
            f"the Scale setup's {where} has no <time_range>; OpenSim needs it to select the "
            "static frames"
        )
    trial = read_trc(path)
    if trial.n_frames == 0:
        raise DataError(f"static trial '{path}' has no frames")
    i0, i1 = _frame_range(np.asarray(trial.time), *time_range)
    return trial, trial.points[i0 : i1 + 1], list(trial.point_labels)


#: Suffixes of the files the Scale tool writes (replaced when they exist).
_MODEL_SUFFIXES = (".osim", ".json")
_XML = (".xml",)


def _scale_inputs(setup: ScaleSetup) -> list:
    """The input files of a Scale run, as (what, path) pairs (for ``check_output``)."""
    sc, pl = setup.scaler, setup.placer
    return [
        ("setup", setup.path),
        ("generic model", setup.model_file),
        ("marker set", setup.marker_set_file),
        ("static trial", sc.marker_file if sc is not None else None),
        ("static trial", pl.marker_file if pl is not None else None),
        ("coordinate", pl.coordinate_file if pl is not None else None),
        *(("set", f) for f in setup.set_files),
    ]


def _scale_outputs(setup: ScaleSetup, inputs: list) -> None:
    """Refuse, before the computation, outputs of the setup that destroy an input of the run,
    existing files of another kind, and folders that do not exist or cannot be written."""
    sc, pl = setup.scaler, setup.placer
    outputs = []
    if sc is not None and sc.apply:
        outputs += [
            ("ModelScaler><output_model_file", sc.output_model_file, _MODEL_SUFFIXES),
            ("ModelScaler><output_scale_file", sc.output_scale_file, _XML),
        ]
    if pl is not None and pl.apply:
        outputs += [
            ("MarkerPlacer><output_model_file", pl.output_model_file, _MODEL_SUFFIXES),
            ("MarkerPlacer><output_motion_file", pl.output_motion_file, _STORAGE),
            ("MarkerPlacer><output_marker_file", pl.output_marker_file, _XML),
        ]
    for tag, path, suffixes in outputs:
        if path is not None:
            argname = f"<{tag}> of Scale setup '{setup.path}'"
            _writable_folder(_check_out(path, inputs, suffixes, argname).parent, argname=argname)


def write_model(model, path) -> Path:
    """Write a (scaled) model: OpenSim ``.osim`` for that suffix, else an ahbm model file.

    Parameters
    ----------
    model : Model
    path : str or path-like
        ``.osim`` is written by :func:`ahbm.opensim.write_osim`; any other suffix
        as an ahbm JSON model file (:func:`~ahbm.kinematics.model_file.save_model`).
        An existing file is replaced (atomically) only if it is a ``.osim``
        or ``.json`` file.

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model("p"); _ = m.add_body("a", "ground", "fixed", mass=1.0)
    >>> write_model(m, pathlib.Path(tempfile.mkdtemp()) / "p.json").suffix
    '.json'
    """
    path = _check_out(path, (), _MODEL_SUFFIXES, "path")
    if path.suffix.lower() == ".osim":
        from ahbm.opensim import write_osim

        write_osim(model, path)
        return path
    from ahbm.kinematics.model_file import save_model

    return save_model(model, path)


def _write_model(model, path: Path, written: list) -> None:
    written.append(write_model(model, path))


def _scale_set(factors: dict, model_file) -> list:
    """OpenSim's ScaleSet rows: ground, the bodies, then each PhysicalOffsetFrame (all 1)."""
    from ahbm.opensim._states import body_names, offset_frame_names

    frames, order = offset_frame_names(model_file), body_names(model_file)
    bodies = [b for b in order if b in factors] + [b for b in factors if b not in order]
    ones = np.ones(3)
    return [("ground", ones), *((b, factors[b]) for b in bodies), *((f, ones) for f in frames)]


def write_scale_factors(factors, path) -> Path:
    """Write scale factors as an OpenSim ``<ScaleSet>`` file (the Scale tool's scale file).

    Parameters
    ----------
    factors : dict or sequence of (str, array_like)
        ``{body: (3,) factors}``, or ``(frame, factors)`` pairs in order (a frame
        may repeat, as in OpenSim's own scale files, which list ground, the bodies
        and every offset frame).
    path : str or path-like
        An existing file is replaced (atomically) only if it is an ``.xml`` file.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_scale_factors({"femur_r": [1.1, 1.1, 1.1]},
    ...                         pathlib.Path(tempfile.mkdtemp()) / "scales.xml")
    >>> "<segment>femur_r</segment>" in p.read_text()
    True
    """
    from xml.sax.saxutils import escape

    path = _check_out(path, (), _XML, "path")
    rows = []
    items = factors.items() if isinstance(factors, dict) else factors
    for body, f in items:
        f = np.asarray(f, dtype=float).reshape(3)
        rows.append(
            "\t\t\t<Scale>\n"
            f"\t\t\t\t<scales> {' '.join(repr(float(v)) for v in f)}</scales>\n"
            f"\t\t\t\t<segment>{escape(str(body))}</segment>\n"
            "\t\t\t\t<apply>true</apply>\n"
            "\t\t\t</Scale>\n"
        )
    return _write_set(path, "ScaleSet", "", rows, "path")


def _write_set(path: Path, tag: str, name: str, rows: list, argname: str) -> Path:
    """Write an OpenSim ``<tag name=...>`` Set document with the object rows (atomically)."""
    from ahbm._internal.files import atomic_path

    text = (
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">\n'
        f'\t<{tag} name="{name}">\n\t\t<objects>\n' + "".join(rows) + "\t\t</objects>\n"
        f"\t\t<groups />\n\t</{tag}>\n</OpenSimDocument>\n"
    )
    path = _check_out(path, (), _XML, argname)
    with atomic_path(path, argname=argname) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def _average_frames(points: np.ndarray) -> np.ndarray:
    """OpenSim's ``MarkerData::averageFrames``: per marker, the mean of its visible frames."""
    vis = np.isfinite(points).all(axis=-1)
    n = vis.sum(axis=0)
    total = np.where(vis[..., None], points, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = total / n[:, None]
    avg[n == 0] = np.nan
    return avg


#: Length units of TRC files (m per unit), for max_marker_movement given in file units.
_UNIT_SCALE = {"m": 1.0, "cm": 0.01, "mm": 0.001}


def _place_markers(model, placer: MarkerPlacerSetup, write: bool, written: list,
                   model_file=None):
    from ahbm.io import Trial
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.kinematics.marker_model import model_markers
    from ahbm.opensim.ik_tool import (
        clamped_bounds,
        coordinate_task_targets,
        inverse_kinematics_opensim,
    )

    trial, pts, labels = _static_trial(placer.marker_file, placer.time_range, "<MarkerPlacer>")
    unit = str(trial.parameters.get("TRC", {}).get("Units", "m"))
    if placer.max_marker_movement > 0 and unit in _UNIT_SCALE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN markers
            span = (np.nanmax(pts, axis=0) - np.nanmin(pts, axis=0)) / _UNIT_SCALE[unit]
        moved = [
            f"{labels[k]} ({np.nanmax(span[k]):g} {unit})"
            for k in range(len(labels))
            if np.nanmax(span[k]) > placer.max_marker_movement
        ]
        if moved:
            warnings.warn(
                f"markers moved more than max_marker_movement={placer.max_marker_movement:g} "
                f"{unit} over the averaged frames of '{placer.marker_file}': {_listed(moved)}",
                AhbmWarning,
                stacklevel=3,
            )
    avg = _average_frames(pts)
    # OpenSim deletes the model markers that the static trial does not have
    have = set(labels)
    for i, b in enumerate(model.bodies):
        if any(k not in have for k in b.markers):
            model.update_body(i, markers={k: v for k, v in b.markers.items() if k in have})
    # OpenSim tracks only the markers of the task set (with their weights)
    tasks = {t.name: t.weight for t in placer.marker_tasks}
    model_names = set(model_markers(model).names)
    weights = {n: float(tasks.get(n, 0.0)) for n in labels}
    fitted = [n for n in labels if weights[n] > 0 and n in model_names]
    if not any(np.isfinite(avg[labels.index(n)]).all() for n in fitted):
        raise DataError(
            f"the marker placer has no marker to fit: no applied IKMarkerTask with a positive "
            f"weight names a model marker with data in '{placer.marker_file}'"
        )
    targets, cweights = coordinate_task_targets(
        model,
        placer.coordinate_tasks,
        placer.coordinate_file,
        float(placer.time_range[0]),
        where="the Scale setup's <MarkerPlacer>",
    )
    one = Trial(points=avg[None], point_labels=labels, point_rate=1.0, point_units="m")
    bounds = clamped_bounds(model)
    res = inverse_kinematics_opensim(
        model,
        one,
        bounds=bounds,
        q0=np.clip(_default_pose(model), *bounds),
        marker_weights=weights,
        coordinate_targets=targets or None,
        coordinate_weights=cweights or None,
        block_size=1,
        accuracy=1e-10,
    )
    if not res.converged[0]:
        warnings.warn(
            "the marker placer's fit of the static pose did not converge "
            f"(rms {res.rms_error[0]:.3g} m)",
            AhbmWarning,
            stacklevel=3,
        )
    errors = {
        n: float(e) for n, e in zip(res.marker_names, res.marker_errors[0], strict=True)
        if np.isfinite(e)
    }  # fmt: skip
    q = res.q[0]
    kin = forward_kinematics(model, q)
    for i, b in enumerate(model.bodies):
        if not b.markers:
            continue
        R, p = kin.rotations[i], kin.positions[i]
        new = dict(b.markers)
        for k in b.markers:
            x = avg[labels.index(k)]
            if np.isfinite(x).all():
                new[k] = R.T @ (x - p)
        model.update_body(i, markers=new)
    if write and placer.output_motion_file is not None:
        _write_static_motion(model, q, placer, written, model_file)
    if write and placer.output_marker_file is not None:
        _write_marker_set(model, placer.output_marker_file, written)
    return q, errors


def _write_static_motion(model, q, placer, written, model_file=None):
    """The static pose as OpenSim's marker placer writes it: a states file (radians).

    Every state of the model in OpenSim's order: each coordinate's value and a zero
    speed, then the muscles' default activations and fiber lengths.
    """
    from ahbm.io.opensim_table import OpenSimTable
    from ahbm.opensim import write_mot
    from ahbm.opensim._states import coordinate_state_order, muscle_state_labels

    t0 = placer.time_range[0]
    _check_out(placer.output_motion_file, (), _STORAGE, "output_motion_file")
    _, perm, paths = coordinate_state_order(model, model_file)
    muscles = [m for m in model.muscles if m.parameters.get("appliesForce", True)]
    mlabels, mdefaults = muscle_state_labels(muscles)
    labels = [f"{c}/{k}" for c in paths for k in ("value", "speed")] + mlabels
    row = np.zeros(len(labels))
    row[0 : 2 * len(perm) : 2] = np.asarray(q, dtype=float)[perm]
    row[2 * len(perm) :] = mdefaults
    table = OpenSimTable.from_arrays(np.array([t0]), row[None, :], labels, name="static pose",
                                     in_degrees=False)  # fmt: skip
    write_mot(table, placer.output_motion_file, in_degrees=False, angle_columns=[])
    written.append(placer.output_motion_file)


def _write_marker_set(model, path: Path, written: list) -> None:
    from xml.sax.saxutils import escape, quoteattr

    rows = []
    for b in model.bodies:
        for k, v in b.markers.items():
            rows.append(
                f"\t\t\t<Marker name={quoteattr(k)}>\n"
                f"\t\t\t\t<socket_parent_frame>/bodyset/{escape(b.name)}</socket_parent_frame>\n"
                f"\t\t\t\t<location>{' '.join(repr(float(x)) for x in v)}</location>\n"
                "\t\t\t\t<fixed>false</fixed>\n\t\t\t</Marker>\n"
            )
    written.append(_write_set(path, "MarkerSet", "markerset", rows, "output_marker_file"))


def run_scale(
    setup, *, model=None, write: bool = True, output=None, scale_file=None
) -> ScaleResult:
    """Run an OpenSim Scale setup with ahbm (OpenSim's ``ScaleTool::run``).

    Parameters
    ----------
    setup : ScaleSetup, str or path-like
        The setup or its file.
    model : Model, optional
        The generic model, instead of reading the setup's ``model_file``
        (its ``marker_set_file`` still applies).
    write : bool, optional
        Write the output files the setup names (default True).
    output : str or path-like, optional
        Also write the final model here (:func:`write_model`: ``.osim``, or an
        ahbm JSON model file); ``ahbm scale -o``.
    scale_file : str or path-like, optional
        Also write the scale factors here (:func:`write_scale_factors`);
        ``ahbm scale --scale-file``.

    Returns
    -------
    ScaleResult
        Final and scaled models, scale factors, measurement factors, the
        static pose, the marker errors of the fit and the written files.

    Raises
    ------
    FileFormatError
        Unreadable setup, model or trial files.
    DataError
        Measurements without a static trial, markers missing from the trial
        or the model, nothing to fit; with `write`, an output that is an
        input of the run (setup, generic model, marker set, static trial,
        set files), an existing file of another kind or a folder that does
        not exist or cannot be written (refused before the computation).

    Notes
    -----
    The steps and what is exactly OpenSim's are in the module docstring. The
    scale factors, scaled inertial parameters, joint offsets and scaled
    markers agree with OpenSim 4.6's Scale tool to round-off; placed markers
    agree within the accuracy of the two static-pose fits.

    Examples
    --------
    >>> result = run_scale("subject01_Setup_Scale.xml")  # doctest: +SKIP
    >>> result.factors["femur_r"]  # doctest: +SKIP
    array([1.05, 1.05, 1.05])
    """
    from ahbm.bsp import scale_segments, segment_scale_factors

    if not isinstance(setup, ScaleSetup):
        setup = read_scale_setup(setup)
    inputs = _scale_inputs(setup)  # the outputs are refused before the computation
    if write:
        _scale_outputs(setup, inputs)
    for path, suffixes, argname in (
        (output, _MODEL_SUFFIXES, "output"),
        (scale_file, _XML, "scale_file"),
    ):
        if path is not None:
            _writable_folder(_check_out(path, inputs, suffixes, argname).parent, argname=argname)
    model = _read_model(setup.model_file) if model is None else model.copy()
    if setup.marker_set_file is not None:
        model = _apply_marker_set(model, setup.marker_set_file)
    written: list = []
    factors = {b: np.ones(3) for b in model.body_names}
    meas = {}
    sc = setup.scaler
    if sc is not None and sc.apply:
        uses_meas = "measurements" in sc.scaling_order and any(m.apply for m in sc.measurements)
        markers = None
        names = None
        if uses_meas:
            _, markers, names = _static_trial(sc.marker_file, sc.time_range, "<ModelScaler>")
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            res = segment_scale_factors(
                model,
                markers,
                sc.measurements if uses_meas else (),
                marker_names=names,
                manual=dict(sc.manual_scales),
                order=sc.scaling_order,
                q=_default_pose(model),
            )
        factors, meas = res.factors, res.measurement_factors
        mass = setup.mass if setup.mass > 0 else None
        generic = model
        model = scale_segments(
            model, factors, mass=mass, preserve_mass_distribution=sc.preserve_mass_distribution
        )
        model, _ = _post_scale_paths(generic, model)
        if write and sc.output_model_file is not None:
            _write_model(model, sc.output_model_file, written)
        if write and sc.output_scale_file is not None:
            write_scale_factors(_scale_set(factors, setup.model_file), sc.output_scale_file)
            written.append(sc.output_scale_file)
    scaled = model.copy()
    q_static, errors = None, {}
    pl = setup.placer
    if pl is not None and pl.apply:
        q_static, errors = _place_markers(model, pl, write, written, setup.model_file)
        if write and pl.output_model_file is not None:
            _write_model(model, pl.output_model_file, written)
    if output is not None:
        _write_model(model, output, written)
    if scale_file is not None:
        written.append(write_scale_factors(_scale_set(factors, setup.model_file), scale_file))
    return ScaleResult(model, scaled, factors, meas, q_static, errors, written)
