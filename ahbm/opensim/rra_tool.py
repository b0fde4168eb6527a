"""OpenSim's Residual Reduction Algorithm on ahbm (``ahbm rra SETUP.xml``).

:func:`run_rra_setup` reads an OpenSim ``<RRATool>`` setup
(:func:`~ahbm.opensim.rra_setup.read_rra_setup`), its model, actuator files,
tracking tasks, desired kinematics and external loads, and writes OpenSim's
files into ``<results_directory>``, named ``<tool>_...`` as OpenSim names them:

- ``_Actuation_force.sto``, ``_Actuation_speed.sto``, ``_Actuation_power.sto``:
  the actuators' forces (N, N m), speeds and powers;
- ``_Kinematics_q.sto``, ``_Kinematics_u.sto``, ``_Kinematics_dudt.sto``: the
  simulated coordinates, speeds and accelerations (degrees for rotations);
- ``_controls.sto`` and ``_controls.xml`` (the controls as OpenSim's
  ``ControlSet`` of piecewise linear ``ControlLinear`` nodes), ``_states.sto``,
  ``_pErr.sto`` (position errors of the tasks), ``_avgResiduals.txt``;
- with ``adjust_com_to_reduce_residuals``, the adjusted model
  (``<output_model_file>``): the input ``.osim`` with the new ``<mass_center>``
  of ``<adjusted_com_body>``.

What is computed, as OpenSim 4.6's RRATool does
-----------------------------------------------
- The model's force set is replaced by (``replace_force_set``) or extended
  with the actuators of ``<force_set_files>``: CoordinateActuators (reserves),
  PointActuators and TorqueActuators (residuals), ideal: actuation =
  ``control × optimal_force``.
- The desired kinematics: padded by 60 rows, FIR low-pass (order 50) at
  ``lowpass_cutoff_frequency``, quintic splines of the coordinates, of their
  speeds and of their accelerations
  (:func:`~ahbm.opensim.cmc_tracking.desired_kinematics`).
- COM adjustment (``adjust_com_to_reduce_residuals``), before tracking: the
  actuator forces of an inverse dynamics (OpenSim's InverseDynamics analysis:
  the least stress ``Σ (f/F)²`` that gives the splines' accelerations with the
  external loads) at the rows of the processed kinematics from
  ``initial_time_for_com_adjustment`` to ``final_time_for_com_adjustment``,
  averaged over time (trapezoids); the COM of ``adjusted_com_body`` moves by
  ``dx = MZ/W``, ``dz = −MX/W`` (``W`` its weight, each at most 0.1 m);
  recommended total mass change ``FY/g`` shared in proportion to the masses
  (reported, not applied, as OpenSim reports it). Tracking then uses the
  adjusted model.
- Tracking: :func:`~ahbm.opensim.cmc_tracking.track_kinematics` with the
  setup's CMC_Joint tasks and 1 ms windows from ``initial_time`` to
  ``final_time − 0.001``.
- ``_avgResiduals.txt``: the time averages (trapezoids) of the FX ... MZ
  actuators' forces over the rows written.

Differences from OpenSim, said rather than hidden: ahbm integrates each 1 ms
window with one step of Heun's method; OpenSim's error-controlled integrator
also records rows at its intermediate steps and the final row twice (the files
agree at the window times). External loads must be expressed in ground
(force and point). The settings of OpenSim's integrator and optimizer are not
used (:data:`~ahbm.opensim.rra_setup.NOT_USED`). OpenSim writes its whole
model anew; ahbm edits the adjusted body's ``<mass_center>`` in the input text.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.opensim._rra_outputs import adjusted_osim_text, output_paths, write_outputs
from ahbm.opensim._tracking_dynamics import IdealActuatorDynamics
from ahbm.opensim._xml import parse_xml_file
from ahbm.opensim.cmc_tracking import (
    JointTask,
    desired_kinematics,
    track_kinematics,
)
from ahbm.opensim.coordinates import _read_osim, _rotational
from ahbm.opensim.id_tool import active_model_forces
from ahbm.opensim.processing import _find_index
from ahbm.opensim.rra_setup import RRASetup, read_rra_setup
from ahbm.opensim.setup_files import _listed
from ahbm.opensim.so_setup import read_actuators
from ahbm.opensim.so_tool import _model_actuators
from ahbm.opensim.storage import read_mot
from ahbm.types import ResultRepr

__all__ = [
    "COMAdjustment",
    "RRAResult",
    "adjusted_osim_text",
    "average_residuals",
    "run_rra_setup",
]

_RESIDUALS = ("FX", "FY", "FZ", "MX", "MY", "MZ")


@dataclass(frozen=True, repr=False)
class COMAdjustment(ResultRepr):
    """The COM adjustment and mass recommendation of an RRA run.

    Attributes
    ----------
    body : str
    com_before, com_after : ndarray, shape (3,)
        The body's center of mass (body frame, m).
    dx, dz : float
        OpenSim's reported shifts (the COM moved by ``(−dx, 0, −dz)``), m.
    residuals_before, residuals_after : dict
        Average FX ... MZ of the inverse dynamics before and after the shift.
    mass_change : float
        Recommended total mass change, kg.
    masses, new_masses : dict
        Body masses (kg) and the recommended ones, in the model file's order.
    """

    body: str
    com_before: np.ndarray
    com_after: np.ndarray
    dx: float
    dz: float
    residuals_before: dict
    residuals_after: dict
    mass_change: float
    masses: dict
    new_masses: dict

    def report(self) -> str:
        """The summary OpenSim prints."""
        lines = [
            "Summary of Mass Adjustments to Reduce Residuals",
            f"  Body adjusted: {self.body}",
            f"  Mass Center (COM) adjustment: dx = {self.dx:g}, dz = {self.dz:g}",
            f"  New COM location: {' '.join(f'{v:g}' for v in self.com_after)}",
            f"  Recommended total mass change: {self.mass_change:g} kg",
        ]
        lines += [
            f"    {b}: orig mass = {m:g}, new mass = {self.new_masses[b]:g}"
            for b, m in self.masses.items()
        ]
        for when, r in (("before", self.residuals_before), ("after", self.residuals_after)):
            lines.append(
                f"  Average residuals {when} adjusting {self.body} COM: "
                + " ".join(f"{k}={v:g}" for k, v in r.items())
            )
        return "\n".join(lines)


@dataclass(frozen=True, repr=False)
class RRAResult(ResultRepr):
    """Result of :func:`run_rra_setup`.

    Attributes
    ----------
    time : ndarray, shape (n,)
    coordinate_names : list of str
        The model's coordinates (columns of q, u, udot).
    q, u, udot : ndarray, shape (n, nv)
        Simulated coordinates (rad, m), speeds and accelerations.
    actuator_names : list of str
    forces, controls : ndarray, shape (n, n_act)
    average_residuals : dict
        FX ... MZ averaged over the run.
    com_adjustment : COMAdjustment or None
    outputs : list of pathlib.Path
    """

    time: np.ndarray
    coordinate_names: list
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    actuator_names: list
    forces: np.ndarray
    controls: np.ndarray
    average_residuals: dict
    com_adjustment: COMAdjustment | None = None
    outputs: list = field(default_factory=list)


def average_residuals(time, forces, names) -> dict:
    """Time averages (trapezoids over the rows, divided by the span) of FX ... MZ.

    Residuals the actuator set does not have are 0, as OpenSim reports them.

    Examples
    --------
    >>> average_residuals([0.0, 1.0, 2.0], np.array([[0.0], [1.0], [2.0]]), ["FY"])["FY"]
    1.0
    """
    t = np.asarray(time, dtype=float)
    out = dict.fromkeys(_RESIDUALS, 0.0)
    span = t[-1] - t[0] if t.size > 1 else 0.0
    for k, n in enumerate(names):
        if n in out and span > 0:
            y = np.asarray(forces)[:, k]
            out[n] = float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(t)) / span)
    return out


def _actuators(setup: RRASetup, model) -> list:
    """The actuator set of the run: the model's (unless replaced) and the files'."""
    acts = []
    if not setup.replace_force_set:
        other = [f for f in active_model_forces(model, []) if "CoordinateActuator" not in f]
        if other:
            raise ModelError(
                f"RRATool setup '{setup.path}': replace_force_set is false, so the model's forces "
                f"{_listed(other)} would act, which ahbm rra does not model (OpenSim's RRA "
                "replaces them); set <replace_force_set> to true"
            )
        acts.extend(_model_actuators(model))
    for f in setup.force_set_files:
        acts.extend(read_actuators(f))
    if not acts:
        raise FileFormatError(
            f"RRATool setup '{setup.path}': no actuators (give <force_set_files> with the "
            "residual and reserve actuators)"
        )
    names = [a.name for a in acts]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ModelError(f"RRATool setup '{setup.path}': actuators named twice: {_listed(dup)}")
    for a in acts:
        if not a.optimal_force > 0:
            raise ModelError(
                f"actuator '{a.name}': optimal_force must be > 0, got {a.optimal_force}"
            )
        if not a.min_control <= a.max_control:
            raise ModelError(f"actuator '{a.name}': min_control is above max_control")
    return acts


def _desired_q(setup: RRASetup, model):
    """The desired kinematics in model order (rad, m): (time, Q)."""
    table = read_mot(setup.desired_kinematics_file, angle_columns=[])
    cols = list(table.columns)
    values = np.asarray(table.values, dtype=float)
    rot = _rotational(model)
    tracked = {t.coordinate for t in setup.tasks}
    Q = np.zeros((table.time.shape[0], model.nq))
    missing = []
    for k, c in enumerate(model.coordinate_names):
        if c not in cols:
            if c in tracked:
                raise DataError(
                    f"the desired kinematics '{setup.desired_kinematics_file}' have no column "
                    f"'{c}', which task '{c}' of '{setup.task_set_file}' tracks"
                )
            missing.append(c)
            continue
        v = values[:, cols.index(c)]
        if rot.get(c, True):
            if table.in_degrees:
                v = v * (np.pi / 180.0)
            elif np.nanmax(np.abs(v)) > 2.0 * np.pi:
                raise DataError(
                    f"the desired kinematics '{setup.desired_kinematics_file}': column '{c}' "
                    f"reaches {np.nanmax(np.abs(v)):.4g} rad, beyond a turn, and the header says "
                    "inDegrees=no; if the angles are in degrees, set inDegrees=yes"
                )
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise DataError(
                f"the desired kinematics '{setup.desired_kinematics_file}': column '{c}' is not a "
                f"number at time {table.time[bad[0]]} s"
            )
        Q[:, k] = v
    if missing:
        warnings.warn(
            f"the desired kinematics '{setup.desired_kinematics_file}' have no column for "
            f"{_listed(missing)}; they are held at 0, as OpenSim does",
            AhbmWarning,
            stacklevel=3,
        )
    return table.time, Q


def _external_loads(setup: RRASetup, model):
    """``f_ext(times)`` of the setup's external loads (ground-expressed), or None."""
    from ahbm.opensim.external_loads import external_loads_f_ext

    loads = setup.external_loads
    if loads is None or not loads.forces:
        return None
    if loads.datafile is None:
        raise DataError(f"external loads '{loads.path}' name no <datafile>")
    for spec in loads.forces:
        frames = {"force_expressed_in_body": spec.force_expressed_in_body}
        if spec.point_identifier:
            frames["point_expressed_in_body"] = spec.point_expressed_in_body
        else:
            frames["point_identifier"] = "(none: the body origin)"
        for what, frame in frames.items():
            if str(frame).lower() != "ground":
                raise FileFormatError(
                    f"external loads '{loads.path}': ExternalForce '{spec.name}' has <{what}> "
                    f"{frame!r}; ahbm rra and ahbm cmc apply loads whose force and point are "
                    "expressed in ground"
                )
    data = read_mot(loads.datafile, angle_columns=[])
    zeros = np.zeros((1, model.nq))

    def f_ext(times):
        times = np.asarray(times, dtype=float)
        return external_loads_f_ext(
            model, np.broadcast_to(zeros, (times.size, model.nq)), times, loads, data
        )

    return f_ext


def _inverse_residuals(model, dyn, desired, rows, f_ext, opt, names):
    """OpenSim's InverseDynamics analysis at `rows`: least-stress actuator forces, averaged."""
    from ahbm.dynamics import rnea

    t = desired.time[rows]
    q, u, udot = desired.q[rows], desired.u[rows], desired.udot[rows]
    w = None if f_ext is None else f_ext(t)
    tau = rnea(model, q, u, udot, f_ext=w)
    B = dyn.generalized_columns(q) * opt  # per unit control
    controls = np.einsum("nav,nv->na", np.linalg.pinv(B), tau)
    return average_residuals(t, controls * opt, names)


def _adjust_com(setup, model, dyn_factory, desired, f_ext, opt, names, body_order):
    body = setup.adjusted_com_body
    if body not in model.body_names:
        raise ModelError(
            f"RRATool setup '{setup.path}': <adjusted_com_body> '{body}' is not a body of model "
            f"'{setup.model_file}'; bodies: {_listed(model.body_names, 20)}"
        )
    c0, c1 = setup.com_time_range
    rows = np.arange(_find_index(desired.time, c0), _find_index(desired.time, c1) + 1)
    before = _inverse_residuals(model, dyn_factory(model), desired, rows, f_ext, opt, names)
    b = model.bodies[model.body_index(body)]
    g = np.asarray(model.gravity, dtype=float)
    weight = abs(g[1]) * b.mass
    if not weight > 0:
        raise ModelError(f"<adjusted_com_body> '{body}' has no weight; choose a body with mass")
    dx = float(np.clip(before["MZ"] / weight, -0.1, 0.1))
    dz = float(np.clip(-before["MX"] / weight, -0.1, 0.1))
    com = np.asarray(b.com, dtype=float).copy()
    new_com = com - np.array([dx, 0.0, dz])
    adjusted = model.copy()
    adjusted.update_body(body, com=new_com)
    after = _inverse_residuals(adjusted, dyn_factory(adjusted), desired, rows, f_ext, opt, names)
    dmass = before["FY"] / g[1] if g[1] != 0 else 0.0
    masses = {n: model.bodies[model.body_index(n)].mass for n in body_order}
    total = sum(masses.values())
    new_masses = {n: m + dmass * m / total for n, m in masses.items()}
    adj = COMAdjustment(body, com, new_com, dx, dz, before, after, float(dmass), masses, new_masses)
    return adjusted, adj


def _osim_orders(model_file):
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


def run_rra_setup(path, *, output_dir=None, write: bool = True) -> RRAResult:
    """Run an OpenSim RRA setup with ahbm (``ahbm rra SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        An RRATool setup (:func:`~ahbm.opensim.rra_setup.read_rra_setup`).
    output_dir : str or path-like, optional
        Where to write the result files (default the setup's
        ``<results_directory>``; the adjusted model goes to ``<output_model_file>``).
    write : bool
        Write OpenSim's files (default True).

    Returns
    -------
    RRAResult

    Raises
    ------
    FileFormatError
        A bad setup, task, actuator, loads or data file; an element ahbm does
        not implement (named with its line); actuators other than Coordinate,
        Point and Torque actuators.
    DataError, ModelError
        Data that do not fit the model (a tracked coordinate without column,
        angles in degrees under ``inDegrees=no``), unknown bodies or
        coordinates, model forces that would act; outputs that are inputs of
        the run (refused before the computation).

    Examples
    --------
    >>> res = run_rra_setup("subject01_Setup_RRA.xml")  # doctest: +SKIP
    >>> round(res.average_residuals["FX"], 1)  # doctest: +SKIP
    -3.8
    """
    setup = read_rra_setup(path)
    paths = output_paths(setup, output_dir) if write else None  # refused before computing
    model = _read_osim(setup.model_file, muscles=False, markers=False)
    acts = _actuators(setup, model)
    names = [a.name for a in acts]
    opt = np.array([a.optimal_force for a in acts])
    coord_names = list(model.coordinate_names)
    tasks = []
    for t in setup.tasks:
        if t.coordinate not in coord_names:
            raise ModelError(
                f"task '{t.name}' of '{setup.task_set_file}' tracks coordinate "
                f"'{t.coordinate}', which model '{setup.model_file}' does not have"
            )
        tasks.append(JointTask(t.name, coord_names.index(t.coordinate), t.weight, t.kp, t.kv, t.ka))
    if not tasks:
        raise FileFormatError(f"'{setup.task_set_file}': no CMC_Joint task is on and active")
    time, Q = _desired_q(setup, model)
    t0 = max(setup.initial_time, float(time[0]))
    t1 = min(setup.final_time, float(time[-1]))
    if not t1 - t0 >= 0.002:
        raise DataError(
            f"RRATool setup '{setup.path}': the time range [{t0}, {t1}] s within the desired "
            "kinematics is shorter than two windows of 0.001 s"
        )
    desired = desired_kinematics(time, Q, cutoff=setup.lowpass_cutoff_frequency)
    f_ext = _external_loads(setup, model)
    body_order, osim_coords = _osim_orders(setup.model_file)

    def dyn_factory(m):
        return IdealActuatorDynamics(m, acts, f_ext)

    adjustment = None
    if setup.adjust_com:
        model, adjustment = _adjust_com(
            setup, model, dyn_factory, desired, f_ext, opt, names, body_order
        )
    dyn = dyn_factory(model)
    limits = (np.array([a.min_control for a in acts]), np.array([a.max_control for a in acts]))
    res = track_kinematics(dyn, desired, tasks, opt, t0=t0, t1=t1, dt=0.001, control_limits=limits)
    out = RRAResult(
        time=res.time,
        coordinate_names=coord_names,
        q=res.q,
        u=res.u,
        udot=res.udot,
        actuator_names=names,
        forces=res.forces,
        controls=res.controls,
        average_residuals=average_residuals(res.time, res.forces, names),
        com_adjustment=adjustment,
    )
    if paths is None:
        return out
    # OpenSim's actuator speeds: a coordinate's speed, (ω_A − ω_B)·axis, a point's |v|
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.opensim._actuation import _speed

    kin = forward_kinematics(model, res.q, res.u)
    speeds = np.stack([_speed(model, a, res.q, res.u, kin) for a in acts], axis=1)
    written = write_outputs(setup, paths, model, out, res, speeds, tasks, osim_coords, acts)
    return replace(out, outputs=written)
