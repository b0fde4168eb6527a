"""OpenSim's Inverse Kinematics tool on ahbm's engine (``ahbm ik SETUP.xml``).

:func:`run_ik_setup` reads an OpenSim IK setup, its model and marker file, and
returns (and writes) the coordinates as OpenSim's ``.mot`` (rotational
coordinates in degrees, ``inDegrees=yes``, OpenSim's header) and, when the
setup asks for it, the marker errors (``<name>_ik_marker_errors.sto``).
:func:`inverse_kinematics_opensim` is the computation on data in memory.

What is solved
--------------
OpenSim's IK objective, frame by frame:
``min_q Σ_markers w_i |p_i(q) − x_i|² + Σ_coordinate-tasks w_j (q_j − q̂_j)²``
with the marker weights and coordinate tasks of the ``<IKTaskSet>``
(``apply=false`` tasks dropped; markers of the model and the file without a
task get weight 1, as OpenSim's ``MarkersReference`` does; markers missing in a
frame (NaN) are left out of that frame). Coordinate tasks take their target
from the coordinate's default value, a manual value, or the
``<coordinate_file>``. Coordinates that OpenSim clamps are bounded by their
ranges. The solver is :func:`ahbm.kinematics.ik.fit_markers`
(Levenberg-Marquardt with the model's analytic marker Jacobians) with its
"pipeline" warm start: a window of `block_size` frames (default 32) slides
along the trial, each frame entering when an earlier one has converged and
starting from the linear extrapolation (at most 4 frames ahead) of the last
two earlier frames that have converged or done 2 iterations; every iteration
evaluates the whole window in one vectorized call (``block_size=1`` solves
strictly frame after frame). OpenSim's assembler instead tracks frame by frame
with ``accuracy`` as its tolerance. Both converge to the same minimum of the
same objective where it is unique (on the shared walking trial the two agree
within 0.01° RMS). The model's constraints (OpenSim's coordinate couplers) are
enforced with OpenSim's ``constraint_weight`` (``inf``: a penalty of 1e8).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ahbm._engine.node_plan import plan
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.io.trc import MAX_MARKER_COORDINATE, first_beyond, read_trc, trc_time
from ahbm.kinematics.ik import fit_markers
from ahbm.kinematics.marker_model import model_markers
from ahbm.kinematics.tree import Model
from ahbm.opensim.id_tool import (
    _STORAGE,
    MAX_COORDINATE,
    _check_out,
    _default_q,
    _implausible,
    _named_output,
    _osim_rows,
    _read_osim,
    _rotational,
    _writable_folder,
    coordinates_to_radians,
)
from ahbm.opensim.setup_files import IKSetup, _listed, read_ik_setup
from ahbm.opensim.storage import read_mot, write_mot
from ahbm.types import ResultRepr

__all__ = [
    "IKOpenSimResult",
    "clamped_bounds",
    "inverse_kinematics_opensim",
    "run_ik_setup",
    "write_ik_mot",
]


@dataclass(frozen=True, repr=False)
class IKOpenSimResult(ResultRepr):
    """Result of :func:`inverse_kinematics_opensim` / :func:`run_ik_setup`.

    Attributes
    ----------
    time : ndarray, shape (n_frames,)
        s: the marker file's times as written in its Time column
        (:func:`ahbm.io.trc.trc_time`), as OpenSim writes them.
    q : ndarray, shape (n_frames, nq)
        Coordinates in the model's order, rad and m.
    coordinate_names : list of str
    marker_names : list of str
        Markers used (weight > 0, in the model and the file).
    marker_errors : ndarray, shape (n_frames, n_markers)
        Distance between model and measured marker, m (NaN where missing).
    total_squared_error, rms_error, max_error : ndarray, shape (n_frames,)
        OpenSim's marker-error report: sum of squared distances (m²), their
        root mean square and largest value (m) over the markers present.
    converged : ndarray of bool, shape (n_frames,)
    output : pathlib.Path or None
        The ``.mot`` written (None when nothing was written).
    """

    time: np.ndarray
    q: np.ndarray
    coordinate_names: list
    marker_names: list
    marker_errors: np.ndarray
    total_squared_error: np.ndarray
    rms_error: np.ndarray
    max_error: np.ndarray
    converged: np.ndarray
    output: Path | None = None

    def to_dataframe(self, *, degrees: bool = False, model: Model | None = None):
        """The coordinates as a time-indexed DataFrame (rotations in degrees if asked).

        `degrees` needs `model` to tell rotational from translational coordinates.
        """
        q = self.q.copy()
        if degrees:
            if model is None:
                raise DataError("to_dataframe(degrees=True) needs `model=`")
            rot = _rotational(model)
            for k, n in enumerate(self.coordinate_names):
                if rot.get(n, True):
                    q[:, k] *= 180.0 / np.pi
        import pandas as pd

        return pd.DataFrame(
            q, columns=self.coordinate_names, index=pd.Index(self.time, name="time")
        )


def clamped_bounds(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the coordinates that OpenSim's IK respects: the ranges of clamped ones.

    Parameters
    ----------
    model : Model
        A model read by :func:`ahbm.opensim.read_osim` (its coordinate table says
        which coordinates are clamped); other models get no bounds.

    Returns
    -------
    lower, upper : ndarray, shape (nq,)
        The range of every clamped coordinate, ``-inf``/``inf`` elsewhere.

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1]})
    >>> clamped_bounds(m)
    (array([-inf]), array([inf]))
    """
    lower = np.full(model.nq, -np.inf)
    upper = np.full(model.nq, np.inf)
    idx = {n: i for i, n in enumerate(model.coordinate_names)}
    for row in _osim_rows(model):
        name = row.get("name")
        if name not in idx or not row.get("clamped", False):
            continue
        rng = row.get("range")
        if rng is None and "range_min" in row:
            rng = (row["range_min"], row["range_max"])
        if rng is None:
            continue
        lo, hi = float(rng[0]), float(rng[1])
        if lo <= hi:
            lower[idx[name]], upper[idx[name]] = lo, hi
    return lower, upper


def _constraint_function(model: Model):
    """kin -> (g, G) of the model's constraints (None without constraints)."""
    if not model.constraints:
        return None
    from ahbm.dynamics import ConstraintSet

    cset = ConstraintSet(model.constraints)
    cset.validate(model)

    def g_and_jacobian(kin):
        return cset.position(model, None, kin=kin), cset.jacobian(model, None, kin=kin)

    return g_and_jacobian


def _frames(time: np.ndarray, time_range) -> np.ndarray:
    """Frame indices of a marker file inside the time range, as OpenSim's IK tool picks them.

    The range is clipped to the data, and each end goes to the row of the
    nearest time (``TimeSeriesTable::getNearestRowIndexForTime``; measured
    with OpenSim 4.6: (0.51, 0.99) s on a 60 Hz file gives 0.517..0.983 s).
    """
    n = time.shape[0]
    if time_range is None:
        return np.arange(n)
    t0, t1 = (float(v) for v in time_range)
    start = max(t0, float(time[0]))
    end = min(t1, float(time[-1]))
    if end < start:
        raise DataError(
            f"the time range ({t0}, {t1}) s does not overlap the marker data "
            f"({time[0]}, {time[-1]}) s"
        )
    return np.arange(_nearest_row(time, start), _nearest_row(time, end) + 1)


def _nearest_row(time: np.ndarray, t: float) -> int:
    """The row of the time nearest `t` (increasing `time`; a tie goes to the later row)."""
    k = int(np.searchsorted(time, t, side="left"))
    if k == 0:
        return 0
    if k >= time.shape[0]:
        return time.shape[0] - 1
    return k if time[k] - t <= t - time[k - 1] else k - 1


def inverse_kinematics_opensim(
    model: Model,
    markers,
    *,
    marker_weights: dict | None = None,
    coordinate_targets: dict | None = None,
    coordinate_weights: dict | None = None,
    time_range=None,
    bounds=None,
    q0=None,
    block_size: int = 32,
    accuracy: float = 1e-5,
    constraint_weight: float = math.inf,
) -> IKOpenSimResult:
    """Inverse kinematics with OpenSim's objective (marker and coordinate tasks).

    Parameters
    ----------
    model : Model
        Model with markers (e.g. :func:`ahbm.opensim.read_osim`).
    markers : Trial
        Marker trajectories (:func:`ahbm.io.read_trc`), m, in the model's
        ground frame. Labels that are not model markers are ignored. Their
        times are :func:`ahbm.io.trc.trc_time`: the TRC file's Time column
        as written (OpenSim's), else ``markers.time``.
    marker_weights : dict, optional
        Marker name -> weight (0 drops the marker); markers without an entry
        get weight 1.
    coordinate_targets : dict, optional
        Coordinate name -> target, a scalar or an array over the trial's
        frames (rad, m; NaN: none in that frame).
    coordinate_weights : dict, optional
        Coordinate name -> weight of its task (default 1).
    time_range : tuple of float, optional
        ``(start, end)``, s; default the whole trial. Clipped to the data, each
        end goes to the frame of the nearest time, as OpenSim's IK tool.
    bounds : tuple of array_like, optional
        ``(lower, upper)`` (nq,); default :func:`clamped_bounds`.
    q0 : array_like, shape (nq,), optional
        Start of the first frame (default: the coordinates' default values).
    block_size : int, optional
        Frames in the sliding window (``warm_start="pipeline"`` of
        :func:`~ahbm.kinematics.ik.fit_markers`); 1 solves frame after frame.
    constraint_weight : float, optional
        Weight of the model's constraints (``model.constraints``, e.g.
        OpenSim's coordinate couplers); ``inf`` (OpenSim's default): enforced
        (see :func:`~ahbm.kinematics.ik.fit_markers`).
    accuracy : float, optional
        OpenSim's ``<accuracy>``: the solver stops when the step is below
        ``accuracy (1 + |q|)`` (or the cost decreases by less than ``accuracy / 100`` of
        itself).

    Returns
    -------
    IKOpenSimResult

    Raises
    ------
    DataError
        No marker of the trial on the model, bad weights or targets.
    ModelError
        A model without markers.

    Examples
    --------
    >>> from ahbm.io import Trial
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                "coordinates": ["a"]}, markers={"M": [1.0, 0, 0]})
    >>> x = np.array([[[np.cos(0.3), np.sin(0.3), 0.0]]] * 5)
    >>> trial = Trial(points=x, point_labels=["M"], point_rate=100.0)
    >>> res = inverse_kinematics_opensim(m, trial)
    >>> np.round(res.q[:, 0], 9).tolist()
    [0.3, 0.3, 0.3, 0.3, 0.3]
    """
    names = model_markers(model).names
    labels = list(getattr(markers, "point_labels", []))
    points = np.asarray(getattr(markers, "points", None), dtype=float)
    time = trc_time(markers)  # the marker file's Time column, as OpenSim
    weights = {} if marker_weights is None else dict(marker_weights)
    used = [
        (k, lab)
        for k, lab in enumerate(labels)
        if lab in names and float(weights.get(lab, 1.0)) > 0
    ]
    if not used:
        raise DataError(
            f"none of the trial's markers {_listed(labels)} is a model marker with a weight > 0 "
            f"(model markers: {_listed(names)}); check the marker names and the IK tasks"
        )
    cols = [k for k, _ in used]
    mnames = [lab for _, lab in used]
    w = np.array([float(weights.get(n, 1.0)) for n in mnames])
    frames = _frames(time, time_range)
    X = points[frames][:, cols, :]
    where = first_beyond(X, MAX_MARKER_COORDINATE)
    if where is not None:
        k, m, a = where
        raise _implausible(
            "marker coordinate", MAX_MARKER_COORDINATE, "m", "marker trial",
            getattr(markers, "source", "") or "(in memory)", f"{mnames[m]} {'XYZ'[a]}",
            int(frames[k]), time[frames[k]], float(X[k, m, a]),
        )  # fmt: skip
    targets = None
    if coordinate_targets:
        targets = {}
        for name, value in coordinate_targets.items():
            v = np.asarray(value, dtype=float)
            targets[name] = v[frames] if v.ndim == 1 and v.shape[0] == time.shape[0] else v
    if bounds is None:
        bounds = clamped_bounds(model)
    if q0 is None:
        q0 = np.clip(_default_q(model), bounds[0], bounds[1])
    xtol = float(accuracy)
    res = fit_markers(
        model,
        X,
        marker_names=mnames,
        weights=w,
        q0=q0,
        bounds=bounds,
        block_size=block_size,
        xtol=xtol,
        tol=1e-2 * float(accuracy),
        coordinate_targets=targets,
        coordinate_weights=coordinate_weights,
        warm_start="pipeline",
        constraints=_constraint_function(model),
        constraint_weight=constraint_weight,
    )
    err = res.residuals
    with np.errstate(invalid="ignore"):
        tse = np.nansum(err**2, axis=1)
        n_ok = np.sum(np.isfinite(err), axis=1)
        rms = np.sqrt(tse / np.maximum(n_ok, 1))
        mx = np.nanmax(np.where(np.isfinite(err), err, -np.inf), axis=1)
    return IKOpenSimResult(
        time=time[frames],
        q=res.q,
        coordinate_names=list(model.coordinate_names),
        marker_names=mnames,
        marker_errors=err,
        total_squared_error=tse,
        rms_error=rms,
        max_error=mx,
        converged=res.converged,
    )


def write_ik_mot(result: IKOpenSimResult, model: Model, path, *, order=None) -> Path:
    """Write IK coordinates as OpenSim's IK tool does (``.mot``, degrees, ``inDegrees=yes``).

    Parameters
    ----------
    result : IKOpenSimResult
    model : Model
        Tells rotational (written in degrees) from translational coordinates;
        the coordinates that :func:`ahbm.opensim.read_osim` removed because they are
        locked are written too, at their default value, as OpenSim does.
    path : str or path-like
        An existing file is replaced (atomically) only if it is a ``.mot`` or
        ``.sto`` file.
    order : list of str, optional
        Column order (OpenSim writes its CoordinateSet's order, that of the
        ``.osim`` file); names not listed follow in the model's order.

    Returns
    -------
    pathlib.Path
    """
    names = list(result.coordinate_names)
    values = [np.asarray(result.q)[:, k] for k in range(len(names))]
    locked = [r for r in _osim_rows(model) if r.get("locked") and r.get("name") not in names]
    for r in locked:
        names.append(str(r["name"]))
        values.append(np.full(len(result.time), float(r.get("default_value", 0.0))))
    rot = _rotational(model)
    if order:
        first = [c for c in order if c in names]
        columns = first + [c for c in names if c not in first]
        position = {c: k for k, c in enumerate(names)}
        names, values = columns, [values[position[c]] for c in columns]
    angles = [n for n in names if rot.get(n, True)]
    table = OpenSimTable.from_arrays(
        result.time,
        np.column_stack(values) if values else np.zeros((len(result.time), 0)),
        names,
        name="Coordinates",
        in_degrees=True,
        angle_columns=angles,
        comments=[
            "Units are S.I. units (second, meters, Newtons, ...)",
            "If the header above contains a line with 'inDegrees', this indicates whether "
            "rotational values are in degrees (yes) or radians (no).",
        ],
    )
    path = _check_out(path, (), _STORAGE, "path")
    write_mot(table, path, float_format="%.8f")
    return path


def _file_coordinate_order(path) -> list:
    """Coordinate names in the order of an .osim file (OpenSim's CoordinateSet order)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    names = re.findall(rb'<Coordinate\s+name="([^"]+)"', data)
    return [m.decode("utf-8", "replace") for m in names]


def _write_marker_errors(result: IKOpenSimResult, path: Path) -> None:
    path = _check_out(path, (), _STORAGE, "path")
    errors = np.column_stack([result.total_squared_error, result.rms_error, result.max_error])
    table = OpenSimTable.from_arrays(
        result.time,
        errors,
        ["total_squared_error", "marker_error_RMS", "marker_error_max"],
        name="Model Marker Errors from IK",
    )
    write_mot(
        table,
        path,
        in_degrees=False,
        angle_columns=[],
        float_format="%.8f",
    )


def coordinate_task_targets(model: Model, tasks, coordinate_file, time, *, where: str = ""):
    """Targets and weights of OpenSim coordinate tasks (``IKCoordinateTask``) for the IK.

    Parameters
    ----------
    model : Model
    tasks : sequence of IKTask
        The applied coordinate tasks.
    coordinate_file : path-like or None
        The setup's ``<coordinate_file>`` (for ``from_file`` tasks).
    time : float or array_like
        Time(s) at which ``from_file`` targets are taken (linear interpolation
        of the file).
    where : str, optional
        The setup, for messages.

    Returns
    -------
    targets, weights : dict
        ``coordinate_targets`` and ``coordinate_weights`` of
        :func:`inverse_kinematics_opensim`: ``default_value`` tasks target the
        coordinate's default, ``manual_value`` tasks their ``<value>``;
        tasks with weight 0 are left out.

    Warns
    -----
    AhbmWarning
        A task names no coordinate of the model (locked or absent); it is ignored.

    Examples
    --------
    >>> from ahbm.opensim.setup_files import IKTask
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                "coordinates": ["a"]})
    >>> coordinate_task_targets(m, [IKTask("a", "coordinate", True, 5.0, "manual_value", 0.3)],
    ...                         None, 0.0)
    ({'a': 0.3}, {'a': 5.0})
    """
    names = model.coordinate_names
    targets, weights = {}, {}
    defaults = _default_q(model)
    file_table = None
    unknown = [task.name for task in tasks if task.name not in names]
    if unknown:
        warnings.warn(
            f"{where}: coordinate task(s) {_listed(unknown)} name no coordinate of the model "
            "(locked or absent); ignored",
            AhbmWarning,
            stacklevel=3,
        )
    for task in tasks:
        if task.name not in names:
            continue
        if task.weight == 0:
            continue
        if task.value_type == "default_value":
            value = float(defaults[names.index(task.name)])
        elif task.value_type == "manual_value":
            value = task.value
        else:
            if coordinate_file is None:
                raise FileFormatError(
                    f"{where}: coordinate task '{task.name}' takes its value from the "
                    "coordinate file, but <coordinate_file> is not given"
                )
            if file_table is None:
                file_table = coordinates_to_radians(
                    model, read_mot(coordinate_file, angle_columns=[])
                )
            if task.name not in file_table.columns:
                raise DataError(
                    f"coordinate task '{task.name}': no such column in '{coordinate_file}'"
                )
            labels = file_table.columns
            if labels.count(task.name) > 1:
                warnings.warn(
                    f"coordinate task '{task.name}': '{coordinate_file}' has "
                    f"{labels.count(task.name)} columns '{task.name}'; using the first, as "
                    "OpenSim's tools do with a repeated coordinate: remove the others to be sure",
                    AhbmWarning,
                    stacklevel=2,
                )
            column = np.array(file_table.values[:, labels.index(task.name)], dtype=float)
            bad = first_beyond(column, MAX_COORDINATE)
            if bad is not None:
                raise _implausible(
                    "generalized coordinate", MAX_COORDINATE, "rad or m", "coordinates file",
                    str(coordinate_file), task.name, bad[0], file_table.time[bad[0]],
                    float(column[bad[0]]),
                )  # fmt: skip
            value = np.interp(time, file_table.time, column)
        targets[task.name] = value
        weights[task.name] = task.weight
    return targets, weights


#: Frames × node-plan nodes up to which the IK of a short command runs its kinematics in
#: numpy (``ahbm._engine.backend``): about 1 ms a frame for subject01's 14 nodes (151
#: frames: 0.15 s), against 0.6 s to load numba and 0.2 ms a frame compiled.
_IK_NUMPY_WORK = 10_000


def _kernels_for(model: Model, n_frames: int) -> None:
    """Load the compiled kernels now when the trial is too long for the numpy codings.

    Each kinematics call of the IK is small; the whole IK of a long trial is not.
    Outside a short command's ``numpy_while_small()`` block this does nothing.
    """
    from ahbm._engine import backend

    n_nodes = max(1, int(getattr(plan(model), "n", 1)))
    if backend.use_compiled(n_frames * n_nodes <= _IK_NUMPY_WORK) and not backend.compiled_loaded():
        from ahbm._engine.dispatch import load_compiled

        load_compiled()


def run_ik_setup(
    path,
    *,
    output=None,
    time_range=None,
    model: Model | None = None,
    block_size: int = 32,
    write: bool = True,
) -> IKOpenSimResult:
    """Run an OpenSim Inverse Kinematics setup file with ahbm (``ahbm ik SETUP.xml``).

    Parameters
    ----------
    path : str or path-like
        The setup (``<InverseKinematicsTool>``); relative file names in it are
        relative to its folder.
    output : str or path-like, optional
        The ``.mot`` to write (default: the setup's ``<output_motion_file>``,
        relative to the setup's folder, as OpenSim).
    time_range : tuple of float, optional
        Overrides the setup's ``<time_range>``.
    model : Model, optional
        Use this model instead of reading ``<model_file>``.
    block_size : int, optional
        Frames solved together (see :func:`inverse_kinematics_opensim`).
    write : bool
        Write the output files (default True).

    Returns
    -------
    IKOpenSimResult
        With ``output`` the written ``.mot``.

    Raises
    ------
    FileFormatError
        Bad setup, model or marker files (naming the file, element and line).
    DataError, ModelError
        Tasks or data that do not fit the model.
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
    >>> res = run_ik_setup("subject01_Setup_IK.xml")  # doctest: +SKIP
    >>> res.q.shape, res.output.name  # doctest: +SKIP
    ((151, 10), 'subject01_walk_IK.mot')
    """
    setup: IKSetup = read_ik_setup(path)
    outputs = _ik_outputs(setup, output) if write else None  # refused before the computation
    if model is None:  # IK uses no muscle path
        model = _read_osim(setup.model_file, muscles=False)
    trial = read_trc(setup.marker_file)
    _kernels_for(model, trial.points.shape[0])
    weights = {}
    for task in setup.tasks:
        if task.kind == "marker":
            weights[task.name] = task.weight if task.apply else 0.0
    model_names = set(model_markers(model).names)
    labels = set(trial.point_labels)
    lost = sorted(
        t.name
        for t in setup.marker_tasks
        if t.weight > 0 and (t.name not in model_names or t.name not in labels)
    )
    if lost:
        warnings.warn(
            f"IK setup '{setup.path}': marker task(s) {_listed(lost)} name a marker missing "
            f"from the model or from '{setup.marker_file.name}'; ignored, as OpenSim does",
            AhbmWarning,
            stacklevel=2,
        )
    targets, cweights = coordinate_task_targets(
        model, setup.coordinate_tasks, setup.coordinate_file, trc_time(trial),
        where=f"IK setup '{setup.path}'",
    )  # fmt: skip
    result = inverse_kinematics_opensim(
        model,
        trial,
        marker_weights=weights,
        coordinate_targets=targets or None,
        coordinate_weights=cweights or None,
        time_range=setup.time_range if time_range is None else time_range,
        block_size=block_size,
        accuracy=setup.accuracy if math.isfinite(setup.accuracy) else 1e-5,
        constraint_weight=setup.constraint_weight,
    )
    if outputs is not None:
        out, errors = outputs
        write_ik_mot(result, model, out, order=_file_coordinate_order(setup.model_file))
        if errors is not None:
            _write_marker_errors(result, errors)
        result = replace(result, output=out)
    return result


def _ik_outputs(setup: IKSetup, output) -> tuple:
    """The checked outputs of an IK run: the motion and the marker-error file (or None).

    Refused before the computation: an output that is an input of the run, an
    existing file of another kind, a setup name that leaves the results folder,
    a folder that cannot be written (the setup's folders are created, as
    OpenSim does).
    """
    inputs = [
        ("setup", setup.path),
        ("model", setup.model_file),
        ("marker", setup.marker_file),
        ("coordinate", setup.coordinate_file),
    ]
    if output is not None:
        out = _check_out(output, inputs, _STORAGE, "output")
        _writable_folder(out.parent, argname="output")
    else:
        if setup.output_motion_file is None:
            raise FileFormatError(
                f"IK setup '{setup.path}' names no <output_motion_file>; give an output path"
            )
        argname = f"<output_motion_file> of IK setup '{setup.path}'"
        out = _check_out(setup.output_motion_file, inputs, _STORAGE, argname)
        _writable_folder(out.parent, argname=argname, create=True)
    errors = None
    if setup.report_errors and setup.results_directory is not None:
        where = f"the name of the <InverseKinematicsTool> in '{setup.path}'"
        name = _named_output(
            setup.results_directory, [(setup.name, where)], "_ik_marker_errors.sto"
        )
        errors = _check_out(name, [*inputs, ("motion output", out)], _STORAGE, where)
        _writable_folder(
            setup.results_directory,
            argname=f"<results_directory> of IK setup '{setup.path}'",
            create=True,
        )
    return out, errors
