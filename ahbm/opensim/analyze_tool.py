"""OpenSim's AnalyzeTool on ahbm (``ahbm analyze SETUP.xml``): kinematic and muscle analyses.

:func:`run_analyze_setup` reads an AnalyzeTool setup
(:func:`~ahbm.opensim.analyze_setup.read_analyze_setup`), its model,
coordinates and external loads, and writes OpenSim's files
``<results_directory>/<tool>_<analysis>_<output>.sto``:

- Kinematics: ``_q``, ``_u``, ``_dudt`` (the model's coordinates in the order
  of its CoordinateSet; rotational ones in degrees when ``in_degrees``);
- BodyKinematics: ``_pos_global``, ``_vel_global|bodyLocal``,
  ``_acc_global|bodyLocal`` (per body ``<body>_X, _Y, _Z`` of its center of mass
  and ``_Ox, _Oy, _Oz``: body-fixed X-Y-Z angles, angular velocity, angular
  acceleration; then ``center_of_mass_X, _Y, _Z``);
- PointKinematics: ``_<point_name>_pos``, ``_vel``, ``_acc`` (columns
  ``state_0..2``, as OpenSim 4.6 labels them);
- MuscleAnalysis: ``_Length``, ``_FiberLength``, ``_TendonForce`` ... and
  ``_MomentArm_<coordinate>``, ``_Moment_<coordinate>``
  (:mod:`ahbm.opensim._analyze_outputs`);
- Actuation: ``_force``, ``_speed``, ``_power`` of every actuator: the model's
  (ForceSet order) and those of ``<force_set_files>`` after them (instead of
  them with ``replace_force_set``). A muscle's force is its tendon force, its
  speed the path's lengthening speed and its power ``−force × speed``. Without
  controls the other actuators apply no force (power 0); their speeds are a
  CoordinateActuator's coordinate speed, a TorqueActuator's ``(ω_A − ω_B)·axis``
  and a PointActuator's point speed ``|v|`` (OpenSim's definitions).

What is computed, as OpenSim 4.6's AnalyzeTool does
----------------------------------------------------
- The states: the coordinates file padded, resampled and low-passed at
  ``lowpass_cutoff_frequency_for_coordinates`` and its quintic spline and
  first derivative (:func:`~ahbm.opensim.processing.opensim_coordinate_processing`,
  the processing of ``ahbm id``); the rows from the last one at or before
  ``initial_time`` to the last one at or before ``final_time`` of that
  (padded) storage; each analysis records the first and last rows and the
  rows whose storage index is a multiple of its ``step_interval`` (an
  analysis's ``start_time``/``end_time`` are not used, by OpenSim either).
- The accelerations (``_dudt``, ``_acc``): OpenSim realizes its model at the
  state, so they are the *forward dynamics* of the model's forces there, not
  derivatives of the coordinates: gravity, the external loads and the
  muscles' tendon forces (default activation, fiber lengths from muscle
  equilibrium with ``solve_for_equilibrium_for_auxiliary_states``, else the
  muscles' ``default_fiber_length``, the tendon force from that length and the
  fiber velocity from the muscle's dynamics there, :func:`ahbm.muscles.millard.millard_state`)
  through the articulated-body algorithm.
- Muscles: path lengths, moment arms ``-∂l/∂q``; the Millard2012EquilibriumMuscle
  state from :func:`ahbm.muscles.millard_equilibrium` at the default activation.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.opensim._actuation import actuator_records
from ahbm.opensim._analyze_outputs import (
    actuation_tables,
    body_kinematics_tables,
    kinematics_tables,
    muscle_tables,
    point_kinematics_tables,
)
from ahbm.opensim._tool_outputs import (
    _STORAGE,
    _check_out,
    _loads_inputs,
    _named_output,
    _writable_folder,
)
from ahbm.opensim._xml import parse_xml_file
from ahbm.opensim.analyze_setup import (
    ActuationSpec,
    AnalyzeSetup,
    MuscleAnalysisSpec,
    read_analyze_setup,
)
from ahbm.opensim.coordinates import (
    _angle_columns,
    _coordinate_matrix,
    _default_q,
    _read_osim,
    _rotational,
)
from ahbm.opensim.id_tool import active_model_forces
from ahbm.opensim.processing import _find_index, opensim_coordinate_processing
from ahbm.opensim.setup_files import _listed
from ahbm.opensim.so_setup import read_actuators
from ahbm.opensim.storage import read_mot, write_mot

__all__ = ["AnalyzeResult", "analysis_rows", "run_analyze_setup"]


@dataclass(frozen=True)
class AnalyzeResult:
    """Result of :func:`run_analyze_setup`.

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        The states' times from ``initial_time`` to ``final_time`` (s).
    q, qd, qdd : ndarray, shape (n_frames, nq)
        Coordinates, speeds and the forward-dynamics accelerations (model order, SI).
    tables : dict
        File name -> OpenSimTable, as written (OpenSim's units and labels).
    outputs : list of pathlib.Path
        The files written.
    """

    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tables: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)


def analysis_rows(first: int, last: int, step_interval: int) -> np.ndarray:
    """Storage rows an analysis records: the first, the multiples of its step, the last.

    OpenSim's AnalyzeTool calls ``begin`` at the first row, ``step(i)`` at the
    rows between (recorded when ``i % step_interval == 0``, `i` the index in
    the whole states storage, padding included) and ``end`` at the last.

    Examples
    --------
    >>> analysis_rows(31, 40, 4).tolist()
    [31, 32, 36, 40]
    """
    inner = np.arange(first + 1, last)
    rows = [first, *inner[inner % step_interval == 0].tolist()]
    if last > first:
        rows.append(last)
    return np.asarray(rows, dtype=int)


def _osim_orders(model_file) -> tuple[list, list]:
    """Bodies (BodySet) and coordinates (CoordinateSet) in the order of the .osim file."""
    root = parse_xml_file(model_file, "OpenSim model")
    bodies, coords = [], []
    for node in root.iter():
        name = node.attrib.get("name")
        if node.tag == "Body" and name and name != "ground":
            bodies.append(name)
        elif node.tag == "Coordinate" and name:
            coords.append(name)
    return bodies, coords


def _ordered(names, order) -> list:
    known = [n for n in order if n in names]
    return known + [n for n in names if n not in known]


def _muscle_specs(model, setup: AnalyzeSetup) -> list:
    """The model's muscles that apply force (none when the setup replaces the force set)."""
    if setup.replace_force_set:
        return []
    out = []
    for m in model.muscles:
        if not m.parameters.get("appliesForce", True):
            continue
        if str(m.model) != "Millard2012EquilibriumMuscle":
            raise ModelError(
                f"model '{setup.model_file}': muscle '{m.name}' is a {m.model}; ahbm analyze "
                "computes the state of Millard2012EquilibriumMuscles only (the accelerations "
                "and MuscleAnalysis need the muscles' forces)"
            )
        if str(m.parameters.get("ignore_tendon_compliance", "false")).lower() in ("true", "1"):
            raise ModelError(
                f"model '{setup.model_file}': muscle '{m.name}' ignores tendon compliance, "
                "which ahbm analyze does not implement"
            )
        out.append(m)
    return out


def _muscle_state(model, muscles, q, qd, kin, equilibrium: bool) -> dict:
    """Lengths, speeds, moment arms and the Millard state of `muscles` at the states."""
    from ahbm.muscles.millard import millard_equilibrium, millard_state
    from ahbm.muscles.millard_curves import MillardParameters
    from ahbm.muscles.paths import lengthening_speeds, moment_arms, muscle_lengths

    names = [m.name for m in muscles]
    n = q.shape[0]
    if not names:
        return {"names": [], "tendon_force": np.zeros((n, 0)), "arms": np.zeros((n, 0, model.nv)),
                "speed": np.zeros((n, 0))}  # fmt: skip
    lmt = muscle_lengths(model, q, muscles=names, kin=kin)
    vmt = lengthening_speeds(model, q, qd, muscles=names, kin=kin)
    arms = moment_arms(model, q, muscles=names, kin=kin)
    params = MillardParameters.from_muscles(muscles)
    act = np.array([float(m.parameters.get("default_activation", 0.05)) for m in muscles])
    out = {"names": names, "length": lmt, "speed": vmt, "arms": arms, "params": params}
    a = np.broadcast_to(act, lmt.shape)
    if equilibrium:
        st = millard_equilibrium(params, a, lmt)
    else:
        # the state's fiber lengths: each muscle's default_fiber_length (OpenSim's 0.1 m)
        lm = np.array([float(m.parameters.get("default_fiber_length", 0.1)) for m in muscles])
        st = millard_state(params, a, lmt, lm)
    out["state"] = st
    out["tendon_force"] = st.tendon_force
    return out


def _accelerations(model, q, qd, kin, tension, arms, setup: AnalyzeSetup, times):
    """Forward dynamics at the states: gravity, external loads, muscle tensions (ABA)."""
    from ahbm.dynamics import aba
    from ahbm.opensim.external_loads import external_loads_f_ext

    tau = np.einsum("nmv,nm->nv", arms, tension) if tension.shape[1] else None
    f_ext = None
    loads = setup.external_loads
    if loads is not None and loads.forces:
        if loads.datafile is None:
            raise DataError(f"external loads '{loads.path}' name no data file")
        data = read_mot(loads.datafile, angle_columns=[])
        f_ext = external_loads_f_ext(model, None, times, loads, data, kin=kin)
    return aba(model, q, qd, tau, f_ext=f_ext)


def _output_names(setup: AnalyzeSetup, muscle_names, coord_names) -> list:
    """(spec, key, file suffix) of every file the setup's analyses write, in setup order."""
    files = []
    for spec in setup.analyses:
        kind = type(spec).__name__
        if kind == "KinematicsSpec":
            files += [(spec, k, f"_{k}.sto") for k in ("dudt", "u", "q")]
        elif kind == "BodyKinematicsSpec":
            frame = "bodyLocal" if spec.local else "global"
            files += [(spec, "pos", "_pos_global.sto"), (spec, "vel", f"_vel_{frame}.sto"),
                      (spec, "acc", f"_acc_{frame}.sto")]  # fmt: skip
        elif kind == "PointKinematicsSpec":
            files += [(spec, k, f"_{spec.point_name}_{k}.sto") for k in ("pos", "vel", "acc")]
        elif kind == "ActuationSpec":
            files += [(spec, k, f"_{k}.sto") for k in ("force", "speed", "power")]
        else:
            for key in _muscle_files(spec, coord_names):
                files.append((spec, key, f"_{key}.sto"))
    return files


def _muscle_files(spec: MuscleAnalysisSpec, coord_names) -> list:
    from ahbm.opensim._analyze_outputs import MUSCLE_OUTPUTS

    keys = list(MUSCLE_OUTPUTS)
    if spec.compute_moments:
        coords = _ma_coordinates(spec, coord_names)
        keys += [f"MomentArm_{c}" for c in coords] + [f"Moment_{c}" for c in coords]
    return keys


def _ma_coordinates(spec: MuscleAnalysisSpec, coord_names) -> list:
    if any(c.lower() == "all" for c in spec.coordinates):
        return list(coord_names)
    missing = [c for c in spec.coordinates if c not in coord_names]
    if missing:
        raise DataError(
            f"MuscleAnalysis '{spec.name}': <moment_arm_coordinate_list> names coordinates "
            f"the model does not have: {_listed(missing)}"
        )
    return list(spec.coordinates)


def _outputs(setup: AnalyzeSetup, output_dir, files) -> list:
    """The checked output paths, before the computation (the results folder created)."""
    inputs = [
        ("setup", setup.path),
        ("model", setup.model_file),
        ("coordinates", setup.coordinates_file),
        *_loads_inputs(setup.external_loads),
        *(("force set", f) for f in setup.force_set_files),
    ]
    if output_dir is not None:
        folder = _writable_folder(Path(output_dir), argname="output_dir", create=True)
        folder_arg = "output_dir"
    else:
        folder_arg = f"<results_directory> of AnalyzeTool setup '{setup.path}'"
        folder = _writable_folder(setup.results_directory, argname=folder_arg, create=True)
    tool = (setup.name, f"the name of the <AnalyzeTool> in '{setup.path}'")
    paths, seen = [], set()
    for spec, _, suffix in files:
        name = (spec.name, f"the name of an analysis in '{setup.path}'")
        path = _named_output(folder, [tool, name], suffix)
        if path in seen:
            raise DataError(
                f"AnalyzeTool setup '{setup.path}': two analyses write '{path.name}'; give "
                "the analyses different names"
            )
        seen.add(path)
        paths.append(_check_out(path, inputs, _STORAGE, f"output in {folder_arg}"))
    return paths


def _warn_setup(setup: AnalyzeSetup, model, muscles) -> None:
    ignored = [f for f in active_model_forces(model, ["Muscles"])]
    if ignored and not setup.replace_force_set:
        warnings.warn(
            f"AnalyzeTool setup '{setup.path}': the accelerations apply gravity, the external "
            f"loads and the muscles; OpenSim would also apply {_listed(ignored)}",
            AhbmWarning,
            stacklevel=3,
        )
    if muscles and setup.external_loads is not None:
        loads = setup.external_loads
        if loads.model_kinematics_file is not None:
            warnings.warn(
                f"external loads '{loads.path}': <external_loads_model_kinematics_file> is "
                "not used by ahbm",
                AhbmWarning,
                stacklevel=3,
            )


def run_analyze_setup(path, *, output_dir=None, model=None, write: bool = True) -> AnalyzeResult:
    """Run an OpenSim AnalyzeTool setup with ahbm (``ahbm analyze SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        An AnalyzeTool setup (:func:`~ahbm.opensim.analyze_setup.read_analyze_setup`).
    output_dir : str or path-like, optional
        Where to write the files (default the setup's ``<results_directory>``).
    model : Model, optional
        Use this model instead of reading ``<model_file>``.
    write : bool
        Write OpenSim's files (default True).

    Returns
    -------
    AnalyzeResult

    Raises
    ------
    FileFormatError
        Bad setup, model, loads or data files; setup elements ahbm does not
        implement (named with their line).
    DataError, ModelError
        Data that do not fit the model; muscles other than
        Millard2012EquilibriumMuscle; outputs that are inputs of the run or
        would leave the results folder (refused before the computation).

    Examples
    --------
    >>> res = run_analyze_setup("subject01_Setup_Analyze.xml")  # doctest: +SKIP
    >>> [p.name for p in res.outputs][:1]  # doctest: +SKIP
    ['subject01_walk_Kinematics_dudt.sto']
    """
    setup = read_analyze_setup(path)
    if model is None:
        model = _read_osim(setup.model_file)
    bodies, coords = _osim_orders(setup.model_file)
    bodies = _ordered([b.name for b in model.bodies], bodies)
    coords = _ordered(list(model.coordinate_names), coords)
    muscles = _muscle_specs(model, setup)
    _warn_setup(setup, model, muscles)
    extra_actuators = [a for f in setup.force_set_files for a in read_actuators(f)]
    files = _output_names(setup, [m.name for m in muscles], coords)
    paths = _outputs(setup, output_dir, files) if write else None  # refused before computing

    table = read_mot(setup.coordinates_file, angle_columns=[])
    degrees = ()
    if table.in_degrees:
        degrees = set(_angle_columns(model, table.columns))
    Q = _coordinate_matrix(model, table, _default_q(model), degrees)
    proc = opensim_coordinate_processing(
        table.time, Q, cutoff=setup.lowpass_cutoff_frequency, time_range=(-math.inf, math.inf)
    )
    i0 = _find_index(proc.time, setup.initial_time)
    i1 = _find_index(proc.time, setup.final_time)
    sel = slice(i0, i1 + 1)
    time = proc.time[sel]
    q, qd = np.ascontiguousarray(proc.q[sel]), np.ascontiguousarray(proc.qd[sel])
    from ahbm.kinematics.forward import forward_kinematics

    kin = forward_kinematics(model, q, qd)
    mus = _muscle_state(model, muscles, q, qd, kin, setup.solve_for_equilibrium)
    qdd = _accelerations(model, q, qd, kin, mus["tendon_force"], mus["arms"], setup, time)
    kin = forward_kinematics(model, q, qd, qdd)
    rot = _rotational(model)
    index = {c: k for k, c in enumerate(model.coordinate_names)}
    tables = {}
    ctx = {
        "model": model, "kin": kin, "q": q, "qd": qd, "qdd": qdd, "time": time,
        "bodies": bodies, "coords": coords, "rot": rot, "index": index, "muscles": mus,
    }  # fmt: skip
    if any(isinstance(a, ActuationSpec) for a in setup.analyses):
        ctx["actuators"] = actuator_records(
            model, mus, extra_actuators, q, qd, kin, replace=setup.replace_force_set
        )
    done = {}
    for spec, key, suffix in files:
        if id(spec) not in done:
            rows = analysis_rows(i0, i1, spec.step_interval) - i0
            kind = type(spec).__name__
            make = {
                "KinematicsSpec": kinematics_tables,
                "BodyKinematicsSpec": body_kinematics_tables,
                "PointKinematicsSpec": point_kinematics_tables,
                "MuscleAnalysisSpec": muscle_tables,
                "ActuationSpec": actuation_tables,
            }[kind]
            extra = {"coordinates": _ma_coordinates(spec, coords)} if "Muscle" in kind else {}
            done[id(spec)] = make(spec, ctx, rows, **extra)
        tables[f"{setup.name}_{spec.name}{suffix}"] = done[id(spec)][key]
    written = []
    if paths is not None:
        for (spec, key, _), p in zip(files, paths, strict=True):
            t = done[id(spec)][key]
            write_mot(t, p, in_degrees=t.in_degrees, angle_columns=[])
            written.append(p)
    return AnalyzeResult(time, q, qd, qdd, tables, written)
