"""OpenSim's Inverse Dynamics tool on ahbm's engine (``ahbm id SETUP.xml``).

:func:`run_id_setup` reads an OpenSim ID setup, its model, coordinates and
external loads, and returns (and writes) the generalized forces with
OpenSim's column names (``<coordinate>_moment`` in N m for rotational,
``<coordinate>_force`` in N for translational coordinates) in OpenSim's
column order (coordinates of bodies nearer the ground first, as Simbody's
multibody tree orders them). :func:`inverse_dynamics_opensim` is the same
computation on data in memory, and :func:`external_loads_f_ext` maps an
external-loads description onto ``f_ext`` for :func:`ahbm.dynamics.rnea`.

What is computed
----------------
- Coordinates: by default OpenSim's processing
  (:func:`~ahbm.opensim.processing.opensim_coordinate_processing`: pad,
  resample when the times are not uniform, 3rd-order Butterworth low-pass run
  forward and backward at the setup's cut-off, natural quintic spline and its
  first two derivatives at the storage times). ``processing="butterworth"``
  uses instead ahbm's :func:`ahbm.analysis.butter_filtfilt` (a 2nd-order
  design run forward and backward, -3 dB at the cut-off after Winter's
  correction, odd padding) before the same spline, at the file's own sample
  times; the two differ most on accelerations, hence on the forces of the
  pelvis coordinates.
- External loads: each enabled ``ExternalForce`` is read from the data file
  by its identifiers (the three columns whose labels start with the
  identifier), interpolated in time as OpenSim does (a natural cubic spline
  through the samples, linear for two or three samples), its force and torque
  rotated from ``force_expressed_in_body`` to the ground and its point
  transformed from ``point_expressed_in_body`` (the applied body's origin
  without a point identifier); the result acts on ``applied_to_body``.
- Dynamics: ``tau = rnea(model, q, qd, qdd, f_ext=...)``: gravity, inertia and
  the external loads. Forces of the model (muscles and other force elements,
  which ahbm keeps as data) are not applied, as OpenSim does for the forces
  listed in ``forces_to_exclude`` (typically ``Muscles``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ahbm._engine.arrays import cross
from ahbm.dynamics import rnea
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.tree import Model

# the helpers of the sections split out of this module, importable from it as before
from ahbm.opensim._plausibility import (  # noqa: F401
    MAX_COORDINATE,
    MAX_FORCE,
    MAX_POINT,
    MAX_TORQUE,
    _check_times,
    _frame_text,
    _implausible,
)
from ahbm.opensim._tool_outputs import (  # noqa: F401
    _NAME_MAX,
    _STORAGE,
    _check_out,
    _loads_inputs,
    _make_folder,
    _named_output,
    _writable_folder,
)
from ahbm.opensim.coordinates import (  # noqa: F401
    _DEGREE,
    _angle_columns,
    _coordinate_matrix,
    _default_q,
    _osim_rows,
    _read_osim,
    _rotational,
    coordinates_to_radians,
    opensim_coordinate_order,
)
from ahbm.opensim.external_loads import (  # noqa: F401
    _natural_cubic,
    _time_function,
    external_loads_f_ext,
)
from ahbm.opensim.processing import (
    _quintic_fit,
    _quintic_values,
    opensim_coordinate_processing,
)
from ahbm.opensim.setup_files import ExternalLoads, IDSetup, _listed, read_id_setup
from ahbm.opensim.storage import read_mot, write_mot_values
from ahbm.types import ResultRepr

__all__ = [
    "IDResult",
    "active_model_forces",
    "inverse_dynamics_opensim",
    "run_id_setup",
]

_PROCESSING = ("opensim", "butterworth")


@dataclass(frozen=True, repr=False)
class IDResult(ResultRepr):
    """Result of :func:`inverse_dynamics_opensim` / :func:`run_id_setup`.

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        s.
    tau : ndarray, shape (n_frames, nv)
        Generalized forces in the model's coordinate order (N m or N).
    q, qd, qdd : ndarray, shape (n_frames, nq)
        The processed coordinates (rad, m) and their derivatives.
    f_ext : ndarray or None, shape (n_frames, n_bodies, 6)
        The external loads as world spatial forces ``[moment about the world
        origin; force]`` (None without loads).
    labels : list of str
        OpenSim's column labels in OpenSim's order (``hip_flexion_r_moment``...).
    order : ndarray of int
        Indices into the columns of ``tau`` for ``labels``: ``tau[:, order]``
        is the table OpenSim writes.
    output : pathlib.Path or None
        The file written (None when nothing was written).
    """

    time: np.ndarray
    tau: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    f_ext: np.ndarray | None
    labels: list
    order: np.ndarray
    output: Path | None = None

    def to_dataframe(self):
        """The generalized forces as OpenSim writes them (a pandas DataFrame: time index,
        labelled columns)."""
        import pandas as pd

        return pd.DataFrame(
            self.tau[:, self.order], columns=self.labels, index=pd.Index(self.time, name="time")
        )


# --- the computation ----------------------------------------------------------------------


def inverse_dynamics_opensim(
    model: Model,
    coordinates: OpenSimTable,
    *,
    external_loads: ExternalLoads | None = None,
    loads_data: OpenSimTable | None = None,
    cutoff: float = -1.0,
    time_range=None,
    processing: str = "opensim",
) -> IDResult:
    """Inverse dynamics of a coordinates table as OpenSim's ID tool computes it.

    Parameters
    ----------
    model : Model
        The model (e.g. from :func:`ahbm.opensim.read_osim`); ``nq == nv``.
    coordinates : OpenSimTable
        From :func:`ahbm.opensim.read_mot` with angles in radians (degrees are
        converted on read). Columns are coordinate names (or OpenSim 4 state
        paths ``/jointset/<joint>/<coordinate>/value``); model coordinates
        that are missing keep their default value.
    external_loads : ExternalLoads, optional
        The forces (:func:`~ahbm.opensim.setup_files.read_external_loads`).
    loads_data : OpenSimTable, optional
        The loads' data file; read from ``external_loads.datafile`` when None.
    cutoff : float, optional
        Low-pass cut-off of the coordinates, Hz; negative (default): none.
    time_range : tuple of float, optional
        ``(start, end)``, s; default the coordinates' span.
    processing : {"opensim", "butterworth"}
        "opensim" (default): OpenSim's pad / Butterworth / quintic-spline chain
        (:func:`~ahbm.opensim.processing.opensim_coordinate_processing`).
        "butterworth": :func:`ahbm.analysis.butter_filtfilt` (order 2 per pass)
        at `cutoff` (when positive), then the same spline, at the file's times.

    Returns
    -------
    IDResult
        ``time``, ``tau`` (model order), ``q``, ``qd``, ``qdd``, ``f_ext``,
        OpenSim's ``labels`` and column ``order``.

    Raises
    ------
    DataError, ModelError
        Bad tables, identifiers, body names, time ranges or options; a
        coordinate beyond 1000 rad or m, a force beyond 1e6 N, a point
        beyond 1000 m or a torque beyond 1e6 N m, or a missing (NaN)
        value, naming the column and the frame.

    Examples
    --------
    >>> m = Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("arm", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                  "coordinates": ["elbow"]},
    ...                mass=2.0, com=[0.5, 0, 0])
    >>> t = np.arange(60) / 60.0
    >>> import pandas as pd
    >>> df = pd.DataFrame({"elbow": np.zeros(60)}, index=pd.Index(t, name="time"))
    >>> res = inverse_dynamics_opensim(m, OpenSimTable(df), cutoff=6.0)
    >>> res.labels, float(res.tau[0, 0].round(6))  # holds the arm against gravity
    (['elbow_moment'], 9.81)
    """
    return _inverse_dynamics_opensim(
        model,
        coordinates,
        external_loads=external_loads,
        loads_data=loads_data,
        cutoff=cutoff,
        time_range=time_range,
        processing=processing,
    )


def _inverse_dynamics_opensim(
    model: Model,
    coordinates: OpenSimTable,
    *,
    external_loads: ExternalLoads | None = None,
    loads_data: OpenSimTable | None = None,
    cutoff: float = -1.0,
    time_range=None,
    processing: str = "opensim",
    degrees=(),
) -> IDResult:
    """:func:`inverse_dynamics_opensim`; the columns named in `degrees` are converted to
    radians on the way (as :func:`coordinates_to_radians` would, without its table copy)."""
    if processing not in _PROCESSING:
        raise DataError(f"`processing` must be one of {_PROCESSING}, got {processing!r}")
    if not isinstance(coordinates, OpenSimTable):
        raise DataError(
            f"`coordinates` must be an OpenSimTable (ahbm.opensim.read_mot), got "
            f"{type(coordinates).__name__}"
        )
    if model.nq != model.nv:
        raise ModelError(
            f"model '{model.name}' has nq={model.nq} != nv={model.nv} (quaternion joints); "
            "OpenSim's coordinates are one value per degree of freedom"
        )
    Q = _coordinate_matrix(model, coordinates, _default_q(model), degrees)
    t = coordinates.time
    _check_times(t, coordinates.source or coordinates.name or "(in memory)", "coordinates file")
    if processing == "opensim":
        proc = opensim_coordinate_processing(t, Q, cutoff=cutoff, time_range=time_range)
        times, q, qd, qdd = proc.time, proc.q, proc.qd, proc.qdd
    else:
        from ahbm.analysis import butter_filtfilt

        Qf = butter_filtfilt(Q, time=t, cutoff=cutoff, order=2) if cutoff > 0 else Q
        knots, coef = _quintic_fit(t, Qf)  # natural_quintic_spline(t, Qf), bitwise
        if time_range is None:
            sel = np.ones(t.shape[0], dtype=bool)
        else:
            t0, t1 = (float(v) for v in time_range)
            sel = (t >= t0 - 1e-12) & (t <= t1 + 1e-12)
            if not sel.any():
                raise DataError(f"`time_range` {time_range} selects no frame of the coordinates")
        times = t[sel]
        q, qd, qdd = (_quintic_values(knots, coef, times, nu) for nu in (0, 1, 2))
    q = np.ascontiguousarray(q)
    kin = forward_kinematics(model, q)
    f_ext = None
    if external_loads is not None and external_loads.forces:
        if loads_data is None:
            if external_loads.datafile is None:
                raise DataError("`external_loads` names no data file; pass `loads_data`")
            loads_data = read_mot(external_loads.datafile, angle_columns=[])
        f_ext = external_loads_f_ext(model, None, times, external_loads, loads_data, kin=kin)
    if f_ext is None:
        tau = rnea(model, q, np.ascontiguousarray(qd), np.ascontiguousarray(qdd))
    else:
        # body-frame forces from this kinematics pass: rnea then needs no second one.
        # Only the loaded bodies are turned (rnea skips the bodies without load).
        loaded = np.flatnonzero(f_ext.any(axis=(0, 2)))
        R, p = kin.rotations[:, loaded], kin.positions[:, loaded]
        f = f_ext[:, loaded]
        F = f[..., 3:]
        local = np.zeros_like(f_ext)
        local[:, loaded, :3] = np.einsum("nbji,nbj->nbi", R, f[..., :3] - cross(p, F))
        local[:, loaded, 3:] = np.einsum("nbji,nbj->nbi", R, F)
        tau = rnea(
            model,
            q,
            np.ascontiguousarray(qd),
            np.ascontiguousarray(qdd),
            f_ext=local,
            f_ext_frame="local",
        )
    rot = _rotational(model)
    order = opensim_coordinate_order(model)
    names = model.coordinate_names
    labels = [names[i] + ("_moment" if rot.get(names[i], True) else "_force") for i in order]
    return IDResult(times, tau, q, qd, qdd, f_ext, labels, np.array(order, dtype=int))


_MUSCLE_WORDS = ("muscle",)
_ACTUATOR_WORDS = ("muscle", "actuator")


def active_model_forces(model: Model, forces_to_exclude=()) -> list:
    """OpenSim forces of a model that a setup's ``forces_to_exclude`` leaves active.

    ahbm's inverse dynamics applies no model force (muscles and other force
    elements are kept as data by :func:`ahbm.opensim.read_osim`), which equals
    OpenSim's result only when every force is excluded or disabled.

    Parameters
    ----------
    model : Model
        A model from :func:`ahbm.opensim.read_osim` (its ``"opensim"`` section).
    forces_to_exclude : sequence of str
        Force names or OpenSim's keywords ``All``, ``Muscles``, ``Actuators``
        (case-insensitive).

    Returns
    -------
    list of str
        ``"name (Type)"`` of the enabled forces that are not excluded.

    Examples
    --------
    >>> active_model_forces(Model(), ["Muscles"])
    []
    """
    try:
        items = model.section("opensim")
    except (KeyError, ModelError):
        return []
    words = {str(w).lower() for w in forces_to_exclude}
    if "all" in words:
        return []
    names = {str(w) for w in forces_to_exclude}
    out = []
    for item in items:
        if getattr(item, "kind", None) != "force":
            continue
        # top-level properties only (not a copy of the whole muscle with its path)
        get = item.get
        typ, name = str(get("type", "")), str(get("name", ""))
        applies = str(get("appliesForce", "true")).lower() not in ("false", "0")
        disabled = str(get("isDisabled", "false")).lower() in ("true", "1")
        if not applies or disabled:
            continue
        low = typ.lower()
        if name in names:
            continue
        if "muscles" in words and any(w in low for w in _MUSCLE_WORDS):
            continue
        if "actuators" in words and any(w in low for w in _ACTUATOR_WORDS):
            continue
        out.append(f"{name} ({typ})")
    return out


def _id_outputs(setup: IDSetup, output) -> Path:
    """The checked output of an ID run (its folder created and writable), before computing."""
    inputs = [
        ("setup", setup.path),
        ("model", setup.model_file),
        ("coordinates", setup.coordinates_file),
        *_loads_inputs(setup.external_loads),
    ]
    if output is not None:
        out = _check_out(output, inputs, _STORAGE, "output")
        _writable_folder(out.parent, argname="output")
        return out
    argname = f"<output_gen_force_file> of ID setup '{setup.path}'"
    out = _check_out(setup.output_gen_force_file, inputs, _STORAGE, argname)
    _writable_folder(out.parent, argname=argname, create=True)  # as OpenSim does
    return out


def write_id_sto(result: IDResult, path) -> Path:
    """Write the generalized forces as OpenSim's ID tool does (``.sto``, inDegrees=no).

    An existing file is replaced (atomically) only if it is a ``.sto`` or ``.mot``.
    """
    path = _check_out(path, (), _STORAGE, "path")
    write_mot_values(
        result.tau[:, result.order],
        path,
        time=result.time,
        columns=[str(c) for c in result.labels],
        name="Inverse Dynamics Generalized Forces",
    )
    return path


def run_id_setup(
    path,
    *,
    output=None,
    time_range=None,
    processing: str = "opensim",
    model: Model | None = None,
    write: bool = True,
) -> IDResult:
    """Run an OpenSim Inverse Dynamics setup file with ahbm (``ahbm id SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        The setup (``<InverseDynamicsTool>``); relative file names in it are
        relative to its folder.
    output : str or path-like, optional
        Where to write the ``.sto`` (default: the setup's
        ``results_directory/output_gen_force_file``, as OpenSim).
    time_range : tuple of float, optional
        Overrides the setup's ``<time_range>``.
    processing : {"opensim", "butterworth"}
        See :func:`inverse_dynamics_opensim`; "opensim" (default) reproduces
        OpenSim's tool.
    model : Model, optional
        Use this model instead of reading ``<model_file>`` (which is read with
        ``read_osim(..., muscles=False, forces="summary", markers=False)``:
        inverse dynamics uses no muscle path, display geometry or marker, and
        the forces' scalar properties are enough to list those the setup
        leaves active).
    write : bool
        Write the output file (default True).

    Returns
    -------
    IDResult
        With ``output`` the written file.

    Raises
    ------
    FileFormatError
        Bad setup, loads or data files (the message names the file, element and
        line).
    DataError, ModelError
        Data that do not fit the model.
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
    >>> res = run_id_setup("subject01_Setup_ID.xml")  # doctest: +SKIP
    >>> res.labels[:2], res.output.name  # doctest: +SKIP
    (['pelvis_tilt_moment', 'pelvis_tx_force'], 'subject01_walk_ID.sto')
    """
    setup: IDSetup = read_id_setup(path)
    out = _id_outputs(setup, output) if write else None  # refused before the computation
    if model is None:  # inverse dynamics uses no muscle path
        model = _read_osim(setup.model_file, muscles=False, markers=False)
    active = active_model_forces(model, setup.forces_to_exclude)
    if active:
        warnings.warn(
            f"ID setup '{setup.path}': ahbm applies no model forces, but OpenSim would apply "
            f"{len(active)} force(s) not listed in <forces_to_exclude>: {_listed(active)}; add "
            "them (or 'All') to match OpenSim",
            AhbmWarning,
            stacklevel=2,
        )
    loads = setup.external_loads
    if loads is not None and loads.model_kinematics_file is not None:
        warnings.warn(
            f"external loads '{loads.path}': <external_loads_model_kinematics_file> is not "
            "used by ahbm: points given in a frame stay in that frame (OpenSim 3.x would "
            "re-express ground points in the applied bodies with those kinematics)",
            AhbmWarning,
            stacklevel=2,
        )
    if setup.joints_to_report_body_forces:
        warnings.warn(
            f"ID setup '{setup.path}': <joints_to_report_body_forces> "
            f"{_listed(setup.joints_to_report_body_forces)} is not computed by ahbm",
            AhbmWarning,
            stacklevel=2,
        )
    coordinates = read_mot(setup.coordinates_file, angle_columns=[])
    # coordinates_to_radians(model, coordinates), done while the coordinates are gathered
    degrees = ()
    if coordinates.in_degrees and not coordinates.angle_columns:
        degrees = set(_angle_columns(model, coordinates.columns))
    result = _inverse_dynamics_opensim(
        model,
        coordinates,
        degrees=degrees,
        external_loads=setup.external_loads,
        cutoff=setup.lowpass_cutoff_frequency,
        time_range=setup.time_range if time_range is None else time_range,
        processing=processing,
    )
    if out is not None:
        write_id_sto(result, out)
        result = replace(result, output=out)
    return result
