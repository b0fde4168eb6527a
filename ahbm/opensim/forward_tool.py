"""OpenSim's ForwardTool on ahbm (``ahbm forward SETUP.xml``): a simulation from controls.

:func:`run_forward_setup` reads a ForwardTool setup
(:func:`~ahbm.opensim.forward_setup.read_forward_setup`), its model, initial
states, controls and external loads, integrates the model's equations of motion
from ``initial_time`` to ``final_time`` and writes OpenSim's files
``<results_directory>/<tool>_states.sto`` (every state, OpenSim 4's state
paths ``/jointset/<joint>/<coordinate>/value|speed`` and
``/forceset/<muscle>/activation|fiber_length``, radians),
``<tool>_states_degrees.mot`` (the same, rotational coordinates and speeds in
degrees) and ``<tool>_controls.sto`` (each actuator's control).

The model, as OpenSim 4.6 simulates it
--------------------------------------
- States: coordinates and speeds; per Millard2012EquilibriumMuscle its
  activation (first-order dynamics, :func:`ahbm.muscles.millard.millard_activation_rate`)
  and fiber length, whose rate is the fiber velocity that balances fiber and
  tendon (:func:`ahbm.muscles.millard.millard_state`).
- Forces: gravity, the external loads, the muscles' tendon forces through their
  moment arms, and the actuators of ``<force_set_files>`` (control ×
  ``optimal_force``: CoordinateActuators, PointActuators, TorqueActuators).
  Accelerations by the articulated-body algorithm.
- Controls: linear between their nodes (:func:`~ahbm.opensim.forward_setup.read_controls`);
  an actuator without a control has control 0 (named in a warning).
- Initial state: the states file's row at ``initial_time`` (linear between rows),
  else the model's defaults; with ``solve_for_equilibrium_for_auxiliary_states``
  the fibers start in equilibrium with their tendons.
- Integration: an embedded Runge-Kutta method of order 8 (scipy's DOP853) at a
  relative and absolute tolerance 10 times tighter than the setup's
  ``integrator_error_tolerance``. On subject01 at a tolerance of 1e-6 ahbm's
  states are within 6e-6 of a 1e-9 reference, OpenSim's within 9e-5. The rows
  written are the integrator's steps, as OpenSim writes its own;
  :attr:`ForwardResult.states_at` gives the states at any times.
"""

from __future__ import annotations

import math
import time as _time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, DataError, ModelError, SimulationError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.opensim._states import coordinate_state_order
from ahbm.opensim._tool_outputs import (
    _STORAGE,
    _check_out,
    _loads_inputs,
    _named_output,
    _writable_folder,
)
from ahbm.opensim.analyze_tool import _muscle_specs
from ahbm.opensim.coordinates import _read_osim, _rotational
from ahbm.opensim.forward_setup import read_controls, read_forward_setup
from ahbm.opensim.setup_files import _listed
from ahbm.opensim.so_setup import CoordinateActuatorSpec, read_actuators
from ahbm.opensim.so_tool import _actuator_columns, _reserves
from ahbm.opensim.storage import read_mot, write_mot

__all__ = ["ForwardResult", "run_forward_setup"]

_METHOD = "DOP853"


@dataclass(frozen=True)
class ForwardResult:
    """Result of :func:`run_forward_setup`.

    Attributes
    ----------
    time : ndarray, (n,)
        The integrator's steps, s.
    q, qd : ndarray, (n, nq)
        Coordinates and speeds (model order, SI).
    activation, fiber_length : ndarray, (n, n_muscles)
    controls : ndarray, (n, n_actuators)
    state_labels, actuator_names : list of str
    outputs : list of pathlib.Path
    evaluations : int
        Evaluations of the equations of motion.
    interpolant : callable or None
        The integrator's dense output: ``interpolant(t)`` is the state vector
        ``[q, qd, activation, fiber_length]`` (model order) at times `t`, shape
        ``(n_states, len(t))``.
    """

    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    activation: np.ndarray
    fiber_length: np.ndarray
    controls: np.ndarray
    state_labels: list = field(default_factory=list)
    actuator_names: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    evaluations: int = 0
    interpolant: object = None

    def states_at(self, t) -> np.ndarray:
        """The states at times `t` in the files' column order (``state_labels``), (n, n_states).

        Examples
        --------
        >>> res.states_at([0.0, 0.01]).shape  # doctest: +SKIP
        (2, 56)
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if self.interpolant is None:
            raise DataError("this result has no dense output")
        if np.any(t < self.time[0] - 1e-12) or np.any(t > self.time[-1] + 1e-12):
            raise DataError(
                f"t: times must lie in the simulated range {self.time[0]:g} to {self.time[-1]:g} s"
            )
        Y = self.interpolant(np.clip(t, self.time[0], self.time[-1])).T
        return _file_order(Y, self.q.shape[1], self.activation.shape[1], self._perm)

    _perm: np.ndarray = None


def _file_order(Y, nq, nm, perm) -> np.ndarray:
    """State rows ``[q, qd, a, lm]`` (model order) as OpenSim's columns: each coordinate's
    value and speed in the file's coordinate order, then each muscle's activation and
    fiber length."""
    states = np.empty((Y.shape[0], 2 * nq + 2 * nm))
    states[:, 0 : 2 * nq : 2], states[:, 1 : 2 * nq : 2] = Y[:, perm], Y[:, nq + perm]
    states[:, 2 * nq :: 2] = Y[:, 2 * nq : 2 * nq + nm]
    states[:, 2 * nq + 1 :: 2] = Y[:, 2 * nq + nm :]
    return states


class _System:
    """The equations of motion of one run (one frame at a time, as the integrator asks)."""

    def __init__(self, model, setup, muscles, file_actuators, controls):
        from ahbm.muscles.millard_curves import MillardParameters

        self.model, self.setup = model, setup
        self.muscles = [m.name for m in muscles]
        self.params = MillardParameters.from_muscles(muscles) if muscles else None
        self.nq, self.nm = model.nq, len(muscles)
        self.coordinate_actuators = [a for a in file_actuators
                                     if isinstance(a, CoordinateActuatorSpec)]  # fmt: skip
        self.body_actuators = [a for a in file_actuators
                               if not isinstance(a, CoordinateActuatorSpec)]  # fmt: skip
        self.reserve_opt, _, self.reserve_index = _reserves(model, self.coordinate_actuators)
        self.actuators = self.muscles + [a.name for a in self.coordinate_actuators] + [
            a.name for a in self.body_actuators]  # fmt: skip
        self.controls = controls
        missing = [n for n in self.actuators if controls is None or n not in controls.names]
        if missing:
            warnings.warn(
                f"ForwardTool setup '{setup.path}': no control for {_listed(missing)}; their "
                "controls are 0",
                AhbmWarning,
                stacklevel=3,
            )
        self.loads = None
        loads = setup.external_loads
        if loads is not None and loads.forces:
            if loads.datafile is None:
                raise DataError(f"external loads '{loads.path}' name no data file")
            self.loads = (loads, read_mot(loads.datafile, angle_columns=[]))
        self.evaluations = 0

    def control(self, t) -> np.ndarray:
        if self.controls is None:
            return np.zeros((np.size(t), len(self.actuators)))
        return self.controls(t, self.actuators)

    def muscle_state(self, q, a, lm, kin):
        """Millard state and moment arms (n, m, nv) at one or more frames."""
        from ahbm.muscles.millard import millard_state
        from ahbm.muscles.paths import moment_arms, muscle_lengths

        lmt = muscle_lengths(self.model, q, muscles=self.muscles, kin=kin)
        arms = moment_arms(self.model, q, muscles=self.muscles, kin=kin)
        # a trial state of the integrator may pass below the minimum fiber length, which
        # the muscle raises to that minimum (as OpenSim's does)
        st = millard_state(self.params, np.clip(a, 0.0, 1.0), lmt, np.maximum(lm, 1e-9))
        return st, arms

    def rhs(self, t, y):
        from ahbm.dynamics import aba
        from ahbm.kinematics.forward import forward_kinematics
        from ahbm.muscles.millard import millard_activation_rate

        self.evaluations += 1
        nq, nm = self.nq, self.nm
        q, qd = y[None, :nq], y[None, nq : 2 * nq]
        a, lm = y[None, 2 * nq : 2 * nq + nm], y[None, 2 * nq + nm :]
        u = self.control(t)
        kin = forward_kinematics(self.model, q, qd)
        tau = np.zeros((1, self.model.nv))
        dy = np.empty_like(y)
        if nm:
            st, arms = self.muscle_state(q, a, lm, kin)
            if not np.all(np.isfinite(st.fiber_velocity)):
                raise SimulationError(
                    f"the muscles' state is not finite at t = {t:.6g} s (fiber lengths "
                    f"{lm.ravel()}); the simulation left the muscles' range"
                )
            tau += np.einsum("nmv,nm->nv", arms, st.tendon_force)
            dy[2 * nq : 2 * nq + nm] = millard_activation_rate(u[:, :nm], a, self.params)[0]
            dy[2 * nq + nm :] = st.fiber_velocity[0]
        k = nm
        for j, idx in enumerate(self.reserve_index):
            tau[0, idx] += u[0, k + j] * self.reserve_opt[idx]
        k += len(self.reserve_index)
        if self.body_actuators:
            G, _ = _actuator_columns(self.model, self.body_actuators, q)
            tau += np.einsum("njv,nj->nv", G, u[:, k:])
        f_ext = None
        if self.loads is not None:
            from ahbm.opensim.external_loads import external_loads_f_ext

            f_ext = external_loads_f_ext(self.model, None, np.array([t]), *self.loads, kin=kin)
        qdd = aba(self.model, q, qd, tau, f_ext=f_ext)
        dy[:nq] = qd[0]
        dy[nq : 2 * nq] = qdd[0]
        return dy


def _initial_state(model, setup, muscles, labels) -> np.ndarray:
    """The state vector at ``initial_time``: the states file's row, else the defaults."""
    from ahbm.opensim.coordinates import _default_q

    nq, nm = model.nq, len(muscles)
    y = np.zeros(2 * nq + 2 * nm)
    y[:nq] = _default_q(model)
    y[2 * nq : 2 * nq + nm] = [float(m.parameters.get("default_activation", 0.05)) for m in muscles]
    y[2 * nq + nm :] = [float(m.parameters.get("default_fiber_length", 0.1)) for m in muscles]
    if setup.states_file is None:
        return y
    table = read_mot(setup.states_file, angle_columns=[])
    if table.in_degrees:
        raise DataError(
            f"states file '{setup.states_file}' is in degrees (inDegrees=yes); give OpenSim's "
            "states in radians (the _states.sto, not _states_degrees.mot)"
        )
    t = table.time
    if not t[0] - 1e-9 <= setup.initial_time <= t[-1] + 1e-9:
        raise DataError(
            f"states file '{setup.states_file}' covers {t[0]:g} to {t[-1]:g} s; <initial_time> "
            f"{setup.initial_time:g} is outside it"
        )
    cols = {c: k for k, c in enumerate(table.columns)}
    found = 0
    for i, label in enumerate(labels):
        k = cols.get(label)
        if k is None:  # a coordinate named without its joint (older files)
            k = cols.get(label.rsplit("/", 2)[-2] + "/" + label.rsplit("/", 1)[-1]) if (
                "/jointset/" in label) else None  # fmt: skip
        if k is not None:
            y[i] = np.interp(setup.initial_time, t, table.values[:, k]) if t.size > 1 else (
                table.values[0, k])  # fmt: skip
            found += 1
    unknown = [c for c in table.columns if c not in labels]
    if unknown:
        warnings.warn(
            f"states file '{setup.states_file}': columns that are not states of the model are "
            f"not read: {_listed(unknown)}",
            AhbmWarning,
            stacklevel=3,
        )
    if not found:
        raise DataError(
            f"states file '{setup.states_file}' has no state of model '{model.name}' (expected "
            f"labels such as {labels[0]!r})"
        )
    return y


def _equilibrate(system, y, t0) -> None:
    """Fibers in equilibrium at the initial state (OpenSim's equilibrateMuscles)."""
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.muscles.millard import millard_equilibrium
    from ahbm.muscles.paths import muscle_lengths

    nq, nm = system.nq, system.nm
    if not nm:
        return
    q = y[None, :nq]
    kin = forward_kinematics(system.model, q, y[None, nq : 2 * nq])
    lmt = muscle_lengths(system.model, q, muscles=system.muscles, kin=kin)
    st = millard_equilibrium(system.params, np.clip(y[None, 2 * nq : 2 * nq + nm], 0, 1), lmt)
    y[2 * nq + nm :] = st.fiber_length[0]


def _outputs(setup, output_dir) -> dict:
    inputs = [("setup", setup.path), ("model", setup.model_file),
              ("states", setup.states_file), ("controls", setup.controls_file),
              *_loads_inputs(setup.external_loads),
              *(("force set", f) for f in setup.force_set_files)]  # fmt: skip
    inputs = [(k, p) for k, p in inputs if p is not None]
    if output_dir is not None:
        folder = _writable_folder(Path(output_dir), argname="output_dir", create=True)
        arg = "output_dir"
    else:
        arg = f"<results_directory> of ForwardTool setup '{setup.path}'"
        folder = _writable_folder(setup.results_directory, argname=arg, create=True)
    tool = (setup.name, f"the name of the <ForwardTool> in '{setup.path}'")
    out = {}
    for key, suffix in (("states", "_states.sto"), ("degrees", "_states_degrees.mot"),
                        ("controls", "_controls.sto")):  # fmt: skip
        out[key] = _check_out(_named_output(folder, [tool], suffix), inputs, _STORAGE,
                              f"output in {arg}")  # fmt: skip
    return out


def run_forward_setup(path, *, output_dir=None, model=None, write: bool = True) -> ForwardResult:
    """Run an OpenSim ForwardTool setup with ahbm (``ahbm forward SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        A ForwardTool setup (:func:`~ahbm.opensim.forward_setup.read_forward_setup`).
    output_dir : str or path-like, optional
        Where to write the files (default the setup's ``<results_directory>``).
    model : Model, optional
        Use this model instead of reading ``<model_file>``.
    write : bool
        Write OpenSim's files (default True).

    Returns
    -------
    ForwardResult

    Raises
    ------
    FileFormatError
        Bad setup, model, states, controls or loads files; elements ahbm does
        not implement (named with their line).
    DataError, ModelError
        States or controls that do not fit the model; muscles other than
        Millard2012EquilibriumMuscle with an elastic tendon; outputs that are
        inputs of the run (refused before the computation).
    SimulationError
        The integrator fails or needs more than ``maximum_number_of_integrator_steps``.

    Examples
    --------
    >>> res = run_forward_setup("subject01_Setup_Forward.xml")  # doctest: +SKIP
    >>> res.state_labels[0]  # doctest: +SKIP
    '/jointset/ground_pelvis/pelvis_tilt/value'
    """
    from scipy.integrate import solve_ivp

    setup = read_forward_setup(path)
    if model is None:
        model = _read_osim(setup.model_file)
    if model.nq != model.nv:
        raise ModelError(
            f"model '{model.name}' has {model.nq} coordinates and {model.nv} speeds; ahbm "
            "forward integrates models whose speeds are the coordinates' rates"
        )
    muscles = _muscle_specs(model, setup)
    file_actuators = [a for f in setup.force_set_files for a in read_actuators(f)]
    controls = read_controls(setup.controls_file) if setup.controls_file is not None else None
    paths = _outputs(setup, output_dir) if write else None
    # OpenSim's state order: the coordinates in the .osim file's order, then the muscles
    names, perm, coords = coordinate_state_order(model, setup.model_file)
    labels = [f"{c}/{k}" for c in coords for k in ("value", "speed")]
    labels += [f"/forceset/{m.name}/{k}" for m in muscles for k in ("activation", "fiber_length")]
    system = _System(model, setup, muscles, file_actuators, controls)
    nq, nm = model.nq, len(muscles)
    y0_file = _initial_state(model, setup, muscles, labels)  # the files' order
    y0 = np.concatenate([np.empty(nq), np.empty(nq), y0_file[2 * nq :: 2],
                         y0_file[2 * nq + 1 :: 2]])  # fmt: skip
    y0[perm], y0[nq + perm] = y0_file[0 : 2 * nq : 2], y0_file[1 : 2 * nq : 2]
    if setup.solve_for_equilibrium:
        _equilibrate(system, y0, setup.initial_time)
    tol = setup.tolerance * 0.1
    started = _time.perf_counter()
    try:
        sol = solve_ivp(system.rhs, (setup.initial_time, setup.final_time), y0, method=_METHOD,
                        rtol=tol, atol=tol, max_step=setup.max_step,
                        dense_output=True)  # fmt: skip
    except (DataError, ModelError) as err:
        raise SimulationError(f"ForwardTool setup '{setup.path}': {err}") from err
    if sol.status != 0:
        raise SimulationError(f"ForwardTool setup '{setup.path}': the integrator failed: "
                              f"{sol.message}")  # fmt: skip
    if sol.t.size - 1 > setup.max_steps:
        raise SimulationError(
            f"ForwardTool setup '{setup.path}': {sol.t.size - 1} steps, more than "
            f"<maximum_number_of_integrator_steps> {setup.max_steps}"
        )
    elapsed = _time.perf_counter() - started
    Y = sol.y.T
    q, qd = Y[:, :nq], Y[:, nq : 2 * nq]
    act, lm = Y[:, 2 * nq : 2 * nq + nm], Y[:, 2 * nq + nm :]
    u = system.control(sol.t)
    states = _file_order(Y, nq, nm, perm)
    written = []
    if paths is not None:
        rot = _rotational(model)
        deg = np.ones(len(labels))
        for i, c in enumerate(names):
            if rot.get(c, True):
                deg[2 * i : 2 * i + 2] = 180.0 / math.pi
        comments = [f"ahbm forward: {sol.nfev} evaluations in {elapsed:.2f} s"]
        for key, values, cols, in_deg in (
            ("states", states, labels, False),
            ("degrees", states * deg, labels, True),
            ("controls", u, system.actuators, False),
        ):
            name = "controls" if key == "controls" else setup.name
            table = OpenSimTable.from_arrays(sol.t, values, list(cols), name=name,
                                             in_degrees=in_deg, comments=comments)  # fmt: skip
            write_mot(table, paths[key], in_degrees=in_deg, angle_columns=[])
            written.append(paths[key])
    return ForwardResult(sol.t, q, qd, act, lm, u, labels, system.actuators, written,
                         system.evaluations, sol.sol, perm)  # fmt: skip
