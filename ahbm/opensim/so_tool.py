"""OpenSim's Static Optimization (and Joint Reaction) analyses on ahbm (``ahbm so SETUP.xml``).

:func:`run_so_setup` reads an OpenSim AnalyzeTool setup with a
``<StaticOptimization>`` analysis (and optionally ``<JointReaction>``
analyses), its model, coordinates, external loads and actuator files, and
writes OpenSim's result files:

- ``<tool>_<analysis>_activation.sto``: the muscle activations and the
  controls of the other actuators (CoordinateActuators, PointActuators,
  TorqueActuators), one column per actuator in OpenSim's order (the
  model's force set, then the ``<force_set_files>``), under their names;
- ``<tool>_<analysis>_force.sto``: the actuator forces (muscle tensions,
  N; the others' actuation ``control × optimal_force``, N or N m), then, as
  OpenSim's force reporter, the external loads (``<body>_<force>_Fx`` ... force
  and torque in ground, point in the applied body);
- ``<tool>_<analysis>_ReactionLoads.sto`` for each JointReaction: the
  columns ``<joint>_on_<body>_in_<frame>_fx`` ... ``_pz``.

What is computed
----------------
- Coordinates, speeds, accelerations and the inverse-dynamics generalized
  forces with the external loads exactly as ``ahbm id`` does
  (:func:`~ahbm.opensim.id_tool.inverse_dynamics_opensim`: OpenSim's
  padding, Butterworth low-pass at ``<lowpass_cutoff_frequency_for_coordinates>``
  and quintic spline), at the coordinates' times within
  ``[initial_time, final_time]`` and the analysis' ``[start_time, end_time]``
  chosen as OpenSim's AnalyzeTool does: from the last (processed, resampled)
  row at or before the start time to the last row at or before the end time.
- Static optimization: :func:`ahbm.muscles.static_optimization` with each
  muscle's own class (Thelen2003Muscle, DeGrooteFregly2016Muscle,
  Millard2012EquilibriumMuscle, mixed as the model has them) and OpenSim's
  strengths (``convention="opensim"``: along the fiber for De Groote's muscles,
  Millard's pennation at the normalized fiber length, no passive force),
  ``activation_exponent``, ``use_muscle_physiology``
  (force-length-velocity),
  the muscles' ``min_control``/``max_control`` as activation bounds, and
  every CoordinateActuator (of the model and of ``<force_set_files>``) as a
  reserve with its ``optimal_force`` and control bounds, and the
  PointActuators and TorqueActuators of ``<force_set_files>`` (OpenSim's
  residuals) by their generalized forces ``optimal_force Jᵀ d`` (``J`` the
  Jacobian of the point, or of body A's minus body B's rotation; ``d`` the
  direction or axis in ground); every control ``c`` enters the cost as
  ``|c|^activation_exponent``, as in OpenSim's StaticOptimizationTarget. OpenSim's optimizer
  stops at ``optimizer_convergence_criterion`` on its cost; ahbm solves to
  its own constraint tolerance (1e-8 relative), so activations agree to
  about OpenSim's tolerance.
- Joint reaction loads: :func:`ahbm.muscles.joint_reaction_loads` with the
  actuator forces of ``<forces_file>`` when given, else with the forces of
  this run's static optimization (OpenSim would then use the muscles'
  default states: run it with the force file of a previous static
  optimization to compare).

Differences from OpenSim, said rather than hidden: only the
StaticOptimization and JointReaction analyses run (others are named in a
warning); OpenSim's ``_controls.xml`` (the activations as a ControlSet for a
forward simulation) is not written; Coordinate, Point and Torque actuators
are read from actuator files (others raise a FileFormatError naming them);
model forces other than muscles and CoordinateActuators are not applied
(warning, as ``ahbm id``); the joint reactions apply the muscle forces only
(not the reserves' and residuals'); a time range beyond the coordinates is
cut to them (OpenSim also reports rows of its padding there).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.opensim._so_records import external_force_records
from ahbm.opensim._xml import parse_xml_file
from ahbm.opensim.id_tool import (
    _STORAGE,
    _check_out,
    _loads_inputs,
    _named_output,
    _read_osim,
    _writable_folder,
    active_model_forces,
    coordinates_to_radians,
    inverse_dynamics_opensim,
)
from ahbm.opensim.setup_files import (
    _listed,
    _objects,
)
from ahbm.opensim.so_setup import (
    CoordinateActuatorSpec,
    JointReactionSpec,
    PointActuatorSpec,
    SOSetup,
    TorqueActuatorSpec,
    read_actuators,
    read_so_setup,
)
from ahbm.opensim.storage import read_mot, write_mot
from ahbm.types import ResultRepr

__all__ = ["SOToolResult", "run_so_setup"]


# --- running it -----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class SOToolResult(ResultRepr):
    """Result of :func:`run_so_setup`.

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
    result : StaticOptimizationResult or None
        Activations, muscle forces, reserve loads, residuals, failed frames
        (None when the setup's StaticOptimization is off).
    actuator_names : list of str
        Columns of the activation and force files (OpenSim's actuator order).
    controls : ndarray, shape (n_frames, n_actuators)
        The activation file: activations of muscles, controls of the others.
    forces : ndarray, shape (n_frames, n_actuators)
        The actuator forces of the force file, N or N m (the file then adds
        the external loads' columns, as OpenSim's).
    joint_reactions : dict
        ``{analysis name: (time, JointReactionResult)}``.
    outputs : list of pathlib.Path
        The files written.
    """

    time: np.ndarray
    result: object
    actuator_names: list
    controls: np.ndarray
    forces: np.ndarray
    joint_reactions: dict
    outputs: list = field(default_factory=list)


def _number(item, key, default) -> float:
    v = item.get(key)
    if v in (None, ""):
        return default
    try:
        return float(v)
    except (TypeError, ValueError) as err:
        raise ModelError(
            f"{item.get('type')} '{item.get('name')}': {key}={v!r} is not a number"
        ) from err


def _model_actuators(model) -> list:
    """The model's own CoordinateActuators (ForceSet order) from its "opensim" section."""
    try:
        items = model.section("opensim")
    except (KeyError, ModelError):
        return []
    out = []
    for item in items:
        if getattr(item, "kind", None) != "force" or item.get("type") != "CoordinateActuator":
            continue
        disabled = str(item.get("isDisabled", "false")).lower() in ("true", "1")
        applies = str(item.get("appliesForce", "true")).lower() not in ("false", "0")
        if disabled or not applies:
            continue

        out.append(
            CoordinateActuatorSpec(
                name=str(item.get("name", "")),
                coordinate=str(item.get("coordinate", "")).split("/")[-1],
                optimal_force=_number(item, "optimal_force", 1.0),
                min_control=_number(item, "min_control", -math.inf),
                max_control=_number(item, "max_control", math.inf),
            )
        )
    return out


def _reserves(model, actuators):
    """Optimal forces and control limits per generalized velocity, and each actuator's index."""
    names = list(model.coordinate_names)
    nv = model.nv
    opt = np.zeros(nv)
    lo, hi = np.full(nv, -np.inf), np.full(nv, np.inf)
    index = []
    for a in actuators:
        if not isinstance(a, CoordinateActuatorSpec):
            continue
        if a.coordinate not in names or model.nq != nv:
            raise ModelError(
                f"CoordinateActuator '{a.name}' acts on coordinate '{a.coordinate}', which model "
                f"'{model.name}' does not have; coordinates: {names}"
            )
        k = names.index(a.coordinate)
        if opt[k] != 0:
            raise ModelError(
                f"two CoordinateActuators act on coordinate '{a.coordinate}' ('{a.name}' and an "
                "earlier one); ahbm's static optimization takes one reserve per coordinate"
            )
        if not a.optimal_force > 0:
            raise ModelError(
                f"CoordinateActuator '{a.name}': optimal_force must be > 0, got {a.optimal_force}"
            )
        opt[k], lo[k], hi[k] = a.optimal_force, a.min_control, a.max_control
        index.append(k)
    return opt, (lo, hi), index


def _body_of(model, name: str, actuator) -> int | None:
    """Index of a body named by an actuator; None for ground."""
    if name.lower() == "ground":
        return None
    if name not in model.body_names:
        raise ModelError(
            f"{type(actuator).__name__.removesuffix('Spec')} '{actuator.name}' acts on body "
            f"'{name}', which model '{model.name}' does not have; bodies: {model.body_names} "
            "(or ground); correct the actuator file"
        )
    return model.body_index(name)


def _actuator_columns(model, actuators, q):
    """Generalized forces at unit control of the Point/TorqueActuators, (n, n_act, nv), and bounds.

    A PointActuator's force ``f d`` at its body point ``p`` gives ``Jₚᵀ d``; a
    TorqueActuator's torque ``f a`` on body A and ``−f a`` on body B gives
    ``(J_ωA − J_ωB)ᵀ a`` (world-frame Jacobians, ``d`` and ``a`` in ground).
    """
    from ahbm.kinematics import forward_kinematics
    from ahbm.kinematics.forward import body_jacobian, point_jacobian

    acts = [a for a in actuators if isinstance(a, (PointActuatorSpec, TorqueActuatorSpec))]
    n = q.shape[0]
    G = np.zeros((n, len(acts), model.nv))
    for a in acts:
        if not a.optimal_force > 0:
            raise ModelError(
                f"{type(a).__name__.removesuffix('Spec')} '{a.name}': optimal_force must be > 0, "
                f"got {a.optimal_force}"
            )
    if not acts:
        return G, (np.zeros(0), np.zeros(0))
    kin = forward_kinematics(model, q)
    for j, a in enumerate(acts):
        if isinstance(a, PointActuatorSpec):
            b = _body_of(model, a.body, a)
            if b is None:
                continue  # a force on ground moves nothing
            R, o = kin.rotations[:, b], kin.positions[:, b]
            point = np.asarray(a.point, dtype=float)
            if a.point_is_global:  # the body's material point at that ground position
                point = np.einsum("nji,nj->ni", R, point - o)
            d = np.asarray(a.direction, dtype=float)
            d = np.broadcast_to(d, (n, 3)) if a.force_is_global else R @ d
            J = point_jacobian(model, None, b, point, kin=kin).reshape(n, 3, model.nv)
            G[:, j] = a.optimal_force * np.einsum("nkv,nk->nv", J, d)
        else:
            ba, bb = _body_of(model, a.body_a, a), _body_of(model, a.body_b, a)
            axis = np.asarray(a.axis, dtype=float)
            if a.torque_is_global or ba is None:
                axis = np.broadcast_to(axis, (n, 3))
            else:
                axis = kin.rotations[:, ba] @ axis
            for body, sign in ((ba, 1.0), (bb, -1.0)):
                if body is None:
                    continue
                Jw = body_jacobian(model, None, body, frame="world", kin=kin)
                Jw = Jw.reshape(n, 6, model.nv)[:, :3]
                G[:, j] += sign * a.optimal_force * np.einsum("nkv,nk->nv", Jw, axis)
    lo = np.array([a.min_control for a in acts])
    hi = np.array([a.max_control for a in acts])
    bad = [a.name for a in acts if not (a.min_control <= 0.0 <= a.max_control)]
    if bad:
        raise ModelError(
            f"the actuators {bad} cannot rest (min_control > 0 or max_control < 0); ahbm's "
            "static optimization needs min_control <= 0 <= max_control"
        )
    return G, (lo, hi)


def _select_frames(time, t0, t1, step) -> np.ndarray:
    """OpenSim's rows: from the last at or before `t0` to the last at or before `t1`.

    As AnalyzeTool (``Storage::findIndex``): the first row is the last one
    with ``time <= t0`` (the first row when none is), so a resampled row
    a little before ``t0`` is kept; then every `step`-th row.
    """
    i0 = max(int(np.searchsorted(time, t0, side="right")) - 1, 0)
    i1 = int(np.searchsorted(time, t1, side="right")) - 1
    return np.arange(i0, i1 + 1)[::step]


def _sto(values, labels, time, path: Path, name: str, comment: str) -> Path:
    path = _check_out(path, (), _STORAGE, "path")
    table = OpenSimTable.from_arrays(time, values, labels, name=name, comments=[comment])
    write_mot(table, path, in_degrees=False, angle_columns=[])
    return path


def _muscle_tensions(table: OpenSimTable, muscles, times, source) -> np.ndarray:
    """Muscle forces from an actuator force file, linearly interpolated at `times`."""
    missing = [m for m in muscles if m not in table.columns]
    if missing:
        raise DataError(
            f"the forces file '{source}' has no column for the muscles {missing}; give the "
            "force file of a static optimization of this model"
        )
    t = table.time
    if times.size and (times.min() < t[0] - 1e-6 or times.max() > t[-1] + 1e-6):
        raise DataError(
            f"the forces file '{source}' covers {t[0]} to {t[-1]} s but the joint reaction "
            f"needs {times.min()} to {times.max()} s"
        )
    position = {}
    for k, c in enumerate(table.columns):
        position.setdefault(c, k)  # a repeated label: its first column, as OpenSim reads it
    data = table.values[:, [position[m] for m in muscles]]
    return np.stack([np.interp(times, t, data[:, k]) for k in range(data.shape[1])], axis=-1)


def _jointset_order(model, model_file) -> list:
    """The model's joints in the order of the .osim JointSet (OpenSim's "ALL"), else body order."""
    names = list(model.joint_names)
    if model_file is None:
        return names
    try:
        root = parse_xml_file(model_file, "OpenSim model")
    except FileFormatError:
        return names
    order = []
    for node in root.iter():
        if node.tag == "JointSet":
            order = [el.attrib.get("name") for el in _objects(node)]
            break
    known = [n for n in order if n in names]
    return known + [n for n in names if n not in known]


def _joint_reactions(model, spec: JointReactionSpec, ids, frames, forces, muscles, all_joints):
    """Run one JointReaction analysis; returns (time, JointReactionResult)."""
    from ahbm.muscles import joint_reaction_loads
    from ahbm.muscles.joint_reaction import JointReactionResult

    joints = all_joints if [j.lower() for j in spec.joint_names] == ["all"] else list(
        spec.joint_names
    )  # fmt: skip
    n = len(joints)

    def per_joint(values, what):
        if len(values) == 1:
            return list(values) * n
        if len(values) != n:
            raise FileFormatError(
                f"JointReaction '{spec.name}': <{what}> lists {len(values)} values for {n} "
                "joints; give one value or one per joint"
            )
        return list(values)

    on = [v.lower() for v in per_joint(spec.apply_on_bodies, "apply_on_bodies")]
    frame = per_joint(spec.express_in_frame, "express_in_frame")
    time = ids.time[frames]
    if spec.forces_file is not None:
        table = read_mot(spec.forces_file, angle_columns=[])
        tension = _muscle_tensions(table, muscles, time, spec.forces_file)
    else:
        tension = forces
    f_ext = None if ids.f_ext is None else ids.f_ext[frames]
    parts = {}
    for key in dict.fromkeys(zip(on, frame, strict=True)):
        sel = [j for j, o, f in zip(joints, on, frame, strict=True) if (o, f) == key]
        parts[key] = (
            sel,
            joint_reaction_loads(
                model,
                ids.q[frames],
                ids.qd[frames],
                ids.qdd[frames],
                tension,
                f_ext=f_ext,
                joints=sel,
                on=key[0],
                frame=key[1],
                muscles=muscles,
            ),
        )
    # back to the setup's joint order
    force, moment, point, bodies, frames_out = [], [], [], [], []
    for j, o, f in zip(joints, on, frame, strict=True):
        sel, res = parts[(o, f)]
        k = sel.index(j)
        force.append(res.force[:, k])
        moment.append(res.moment[:, k])
        point.append(res.point[:, k])
        bodies.append(res.body_names[k])
        frames_out.append(res.frames[k])
    result = JointReactionResult(
        np.stack(force, axis=1),
        np.stack(moment, axis=1),
        np.stack(point, axis=1),
        joint_names=tuple(joints),
        body_names=tuple(bodies),
        frames=tuple(frames_out),
        on=on[0] if len(set(on)) == 1 else "mixed",
    )
    return time, result


def run_so_setup(path, *, output_dir=None, model=None, write: bool = True) -> SOToolResult:
    """Run an OpenSim static-optimization setup with ahbm (``ahbm so SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        An AnalyzeTool setup (:func:`~ahbm.opensim.so_setup.read_so_setup`).
    output_dir : str or path-like, optional
        Where to write the files (default the setup's ``<results_directory>``).
    model : Model, optional
        Use this model instead of reading ``<model_file>``.
    write : bool
        Write OpenSim's files (default True).

    Returns
    -------
    SOToolResult

    Raises
    ------
    FileFormatError
        Bad setup, actuator, loads or data files.
    DataError, ModelError
        Data that do not fit the model, unsupported actuators, muscles of a
        class without ahbm curves (other than Thelen2003Muscle,
        DeGrooteFregly2016Muscle and Millard2012EquilibriumMuscle), named.
    DataError
        An output that is an input of the run (the setup, model, data or
        loads files, through links too), an existing file of another kind, a
        setup name that would leave the results folder, a folder that cannot
        be written (all refused before the computation); a value beyond its
        physical bound (a coordinate beyond 1000 rad or m, a marker beyond
        1000 m, a force beyond 1e6 N, a point beyond 1000 m), naming the file,
        the column and the frame.

    Examples
    --------
    >>> res = run_so_setup("subject01_Setup_SO.xml")  # doctest: +SKIP
    >>> res.actuator_names[:2], [p.name for p in res.outputs][:1]  # doctest: +SKIP
    (['hamstrings_r', 'bifemsh_r'], ['subject01_walk_StaticOptimization_activation.sto'])
    """
    from ahbm.muscles import static_optimization

    setup = read_so_setup(path)
    spec = setup.static_optimization
    paths = _so_outputs(setup, output_dir) if write else None  # refused before computing
    if model is None:
        model = _read_osim(setup.model_file)
    if setup.replace_force_set or not spec.use_model_force_set:
        raise FileFormatError(
            f"AnalyzeTool setup '{setup.path}': replace_force_set=true or "
            "use_model_force_set=false leave no muscles; ahbm's static optimization shares the "
            "loads among the model's muscles (set them to false / true)"
        )
    if setup.other_analyses:
        warnings.warn(
            f"AnalyzeTool setup '{setup.path}': ahbm runs only StaticOptimization and "
            f"JointReaction; not run: {_listed(setup.other_analyses)}",
            AhbmWarning,
            stacklevel=2,
        )
    ignored = [
        f for f in active_model_forces(model, ["Muscles"]) if not f.endswith("(CoordinateActuator)")
    ]
    if ignored:
        warnings.warn(
            f"AnalyzeTool setup '{setup.path}': ahbm applies no model forces other than muscles "
            f"and CoordinateActuators, but OpenSim would also apply {_listed(ignored)}",
            AhbmWarning,
            stacklevel=2,
        )
    muscles = [m for m in model.muscles if str(m.model).endswith("Muscle")]
    actuators = _model_actuators(model)
    for f in setup.force_set_files:
        actuators.extend(read_actuators(f))
    opt, limits, reserve_index = _reserves(model, actuators)
    t0 = max(setup.initial_time, spec.start_time)
    t1 = min(setup.final_time, spec.end_time)
    if not t0 <= t1:
        raise FileFormatError(
            f"AnalyzeTool setup '{setup.path}': the time range [{t0}, {t1}] of the tool and "
            "the StaticOptimization analysis is empty"
        )
    coords = coordinates_to_radians(model, read_mot(setup.coordinates_file, angle_columns=[]))
    ids = inverse_dynamics_opensim(
        model,
        coords,
        external_loads=setup.external_loads,
        cutoff=setup.lowpass_cutoff_frequency,
        time_range=(
            max(t0, float(coords.time[0])),
            min(t1, float(coords.time[-1])),
        ),
    )
    # the processing kept OpenSim's rows of [t0, t1] (last row <= t0 to last row <= t1)
    frames = np.arange(ids.time.size)[:: spec.step_interval]
    if frames.size == 0:
        raise DataError(
            f"AnalyzeTool setup '{setup.path}': no frame of '{setup.coordinates_file}' lies in "
            f"[{t0}, {t1}] s"
        )
    time = ids.time[frames]
    muscle_names = [m.name for m in muscles]
    if spec.on:
        G, g_limits = _actuator_columns(model, actuators, ids.q[frames])
    if spec.on:
        res = static_optimization(
            model,
            ids.q[frames],
            ids.qd[frames],
            ids.qdd[frames],
            tau=ids.tau[frames],
            exponent=spec.activation_exponent,
            reserves=opt,
            reserve_limits=limits,
            actuators=G,
            actuator_limits=g_limits,
            force_length_velocity=spec.use_muscle_physiology,
            muscles=muscle_names,
            convention="opensim",
        )
        # OpenSim's actuator order: the model's force set (muscles, its actuators), the files
        names = muscle_names + [a.name for a in actuators]
        other = iter(range(G.shape[1]))
        k_res = iter(reserve_index)
        ctrl, frc = [res.activations], [res.muscle_forces]
        for a in actuators:
            if isinstance(a, CoordinateActuatorSpec):
                k = next(k_res)
                ctrl.append(res.reserve_controls[:, k : k + 1])
                frc.append(res.reserve_loads[:, k : k + 1])
            else:
                c = res.actuator_controls[:, next(other)][:, None]
                ctrl.append(c)
                frc.append(c * a.optimal_force)
        controls, forces = np.concatenate(ctrl, 1), np.concatenate(frc, 1)
        tensions = res.muscle_forces
    else:
        res, names = None, []
        controls = forces = np.zeros((time.size, 0))
        tensions = None  # every JointReaction reads its forces file
    jr = {}
    all_joints = _jointset_order(model, setup.model_file) if setup.joint_reactions else []
    for j in setup.joint_reactions:
        sel = _select_frames(
            time, max(t0, j.start_time), min(t1, j.end_time), j.step_interval
        )  # fmt: skip
        jr[j.name] = _joint_reactions(
            model,
            j,
            ids,
            frames[sel],
            None if tensions is None else tensions[sel],
            muscle_names,
            all_joints,
        )
    out = SOToolResult(time, res, names, controls, forces, jr)
    if paths is None:
        return out
    written = []
    if spec.on:
        # OpenSim's force file records the external loads after the actuators
        ext_names, ext = external_force_records(model, setup.external_loads, ids.q[frames], time)
        written += [
            _sto(controls, names, time, paths["activation"], "Static Optimization",
                 "This file contains static optimization results."),  # fmt: skip
            _sto(np.concatenate([forces, ext], 1), names + ext_names, time, paths["force"],
                 "Static Optimization",
                 "This file contains the forces of the actuators found by static optimization."),
        ]  # fmt: skip
    for j in setup.joint_reactions:
        t, r = jr[j.name]
        written.append(
            _sto(
                r.table(),
                r.labels(),
                t,
                paths[("reaction", j.name)],
                "Joint Reaction Loads",
                "This file contains the reaction forces and moments "
                "applied to the specified body of a joint pair and expressed in the specified "
                "reference frame. Units are S.I. units (seconds, meters, Newtons, ...)",
            )  # fmt: skip
        )
    return replace(out, outputs=written)


def _so_outputs(setup: SOSetup, output_dir) -> dict:
    """The checked output files of an SO run, before the computation.

    Refused: a tool or analysis name that would leave the results folder, an
    output that is an input of the run (setup, model, coordinates, external
    loads and their data, actuator files, JointReaction force files), an
    existing file other than ``.sto``/``.mot``, a folder that cannot be
    written (the setup's results folder is created, as OpenSim does).
    """
    inputs = [
        ("setup", setup.path),
        ("model", setup.model_file),
        ("coordinates", setup.coordinates_file),
        *_loads_inputs(setup.external_loads),
        *(("actuator (force set)", f) for f in setup.force_set_files),
        *(("JointReaction forces", j.forces_file) for j in setup.joint_reactions),
    ]
    if output_dir is not None:
        folder = _writable_folder(Path(output_dir), argname="output_dir", create=True)
        folder_arg = "output_dir"
    else:
        folder_arg = f"<results_directory> of AnalyzeTool setup '{setup.path}'"
        folder = _writable_folder(setup.results_directory, argname=folder_arg, create=True)
    tool = (setup.name, f"the name of the <AnalyzeTool> in '{setup.path}'")
    spec = setup.static_optimization
    named = {}
    if spec.on:
        analysis = (spec.name, f"the name of its <StaticOptimization> in '{setup.path}'")
        for kind in ("activation", "force"):
            named[kind] = _named_output(folder, [tool, analysis], f"_{kind}.sto")
    for j in setup.joint_reactions:
        analysis = (j.name, f"the name of its <JointReaction> in '{setup.path}'")
        named[("reaction", j.name)] = _named_output(folder, [tool, analysis], "_ReactionLoads.sto")
    for key, path in named.items():
        what = key if isinstance(key, str) else f"JointReaction '{key[1]}'"
        named[key] = _check_out(path, inputs, _STORAGE, f"{what} output in {folder_arg}")
    return named
