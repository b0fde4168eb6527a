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

import os
import tempfile
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import linalg

from ahbm._engine.arrays import cross
from ahbm._engine.jit_banded import natural_cubic_system, natural_cubic_values, ptsv
from ahbm._internal.files import TEMP_MARKER, _host_tag, check_output, inside_folder, os_error
from ahbm._internal.validation import output_path
from ahbm.dynamics import rnea
from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.io import OpenSimTable
from ahbm.io.trc import first_beyond
from ahbm.kinematics.forward import forward_kinematics
from ahbm.kinematics.tree import Model
from ahbm.opensim.processing import (
    natural_quintic_spline,
    opensim_coordinate_processing,
)
from ahbm.opensim.setup_files import ExternalLoads, IDSetup, _listed, _shown, read_id_setup
from ahbm.opensim.storage import read_mot, write_mot_values
from ahbm.types import ResultRepr

__all__ = [
    "IDResult",
    "active_model_forces",
    "external_loads_f_ext",
    "inverse_dynamics_opensim",
    "opensim_coordinate_order",
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

    def to_dataframe(self) -> pd.DataFrame:
        """The generalized forces as OpenSim writes them (time index, labelled columns)."""
        return pd.DataFrame(
            self.tau[:, self.order], columns=self.labels, index=pd.Index(self.time, name="time")
        )


# --- model helpers ------------------------------------------------------------------------


_CACHE_KEY = "ahbm.opensim.opensim_coordinates"
_ROTATIONAL_KEY = "ahbm.opensim.opensim_rotational"


def _osim_rows(model: Model) -> list:
    """The rows of ``ahbm.opensim.osim_coordinates(model)`` (cached per model version, or [])."""
    cache = model.cache
    rows = cache.get(_CACHE_KEY)
    if rows is None:
        try:
            from ahbm.opensim import osim_coordinates
        except ImportError:  # pragma: no cover - the reader is part of ahbm.io
            rows = []
        else:
            try:
                rows = osim_coordinates(model, records=True)
            except (ModelError, DataError, TypeError, ValueError, KeyError):
                rows = []
        cache[_CACHE_KEY] = rows
    return rows


def _rotational(model: Model) -> dict:
    """Coordinate name -> True if rotational (OpenSim's motion types if any)."""
    cache = model.cache
    rows = cache.get(_CACHE_KEY)
    if rows is not None:
        out = _motion_types(rows)
    elif cache.get(_ROTATIONAL_KEY):
        return dict(cache[_ROTATIONAL_KEY])
    else:  # the motion types alone: cheaper than the whole coordinate table
        try:
            from ahbm.opensim import osim_motion_types

            types = osim_motion_types(model)
        except (ImportError, ModelError, DataError, TypeError, ValueError, KeyError):
            types = {}
        out = {}
        for name, mt in types.items():
            mt = "" if mt is None else str(mt).lower()
            if mt:
                out[str(name)] = mt.startswith("rot") or mt == "coupled"
        cache[_ROTATIONAL_KEY] = dict(out)
    if out:
        return out
    # fall back on the joint's own description of its axes
    for body in model.bodies:
        j = body.joint
        for c, k in zip(j.coordinates, _joint_kinds(j), strict=False):
            out[c] = k
    return out


def _coordinate_rows(table) -> list:
    """Rows (dicts with a "name") of the coordinate table of ahbm.opensim.osim_coordinates."""
    if isinstance(table, list):
        return table
    if isinstance(table, pd.DataFrame):
        # column lists, not DataFrame.to_dict("records") (5x faster on a model's table)
        cols = {str(c): table[c].tolist() for c in table.columns}
        if "name" in cols:
            return [{c: v[k] for c, v in cols.items()} for k in range(len(table))]
        return [
            {"name": n, **{c: v[k] for c, v in cols.items()}}
            for k, n in enumerate(table.index.tolist())
        ]
    try:
        return [dict(r) for r in table]
    except (TypeError, ValueError):
        return []


def _motion_types(table) -> dict:
    """{name: rotational?} from the coordinate table (OpenSim's motion types).

    A coordinate that drives rotation and translation axes ("coupled") is
    rotational for OpenSim (its ID column is ``<name>_moment``).
    """
    out = {}
    for row in _coordinate_rows(table):
        mt = str(row.get("motion_type", "")).lower()
        if mt:
            out[str(row.get("name"))] = mt.startswith("rot") or mt == "coupled"
    return out


def _joint_kinds(joint) -> list:
    """True/False (rotational) per coordinate of a joint from its type/axes."""
    t = getattr(joint, "type", "")
    n = len(joint.coordinates)
    if t in ("prismatic", "slider"):
        return [False] * n
    if t == "free":
        return [False] * 3 + [True] * (n - 3)
    if t == "planar":
        return [True] + [False] * (n - 1)
    if t == "custom":
        spec = list(getattr(joint, "transform", None) or [])
        rotating = {_axis_coordinate(a) for a in spec[:3]}
        # a coordinate that drives no rotation axis (only translations) is translational
        return [c in rotating or not any(_axis_coordinate(a) == c for a in spec[3:])
                for c in joint.coordinates]  # fmt: skip
    return [True] * n


def _axis_coordinate(axis):
    """The coordinate name driving one axis of a custom joint's transform (or None)."""
    if isinstance(axis, dict):
        return axis.get("coordinate")
    return getattr(axis, "coordinate", None)


def opensim_coordinate_order(model: Model) -> list:
    """Coordinate indices in OpenSim's (Simbody's multibody-tree) order.

    Simbody numbers mobilized bodies level by level (all children of the
    ground, then their children, ...); OpenSim's ID tool writes the
    generalized forces in that order. Within a level the model's order is kept.

    Parameters
    ----------
    model : Model

    Returns
    -------
    list of int
        Indices into ``model.coordinate_names`` (and the columns of ``tau`` for
        models whose joints have ``nq == nv``).

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("a", "ground", {"type": "revolute", "axis": [0, 0, 1]})
    >>> _ = m.add_body("b", "a", {"type": "revolute", "axis": [0, 0, 1]})
    >>> _ = m.add_body("c", "ground", {"type": "revolute", "axis": [0, 0, 1]})
    >>> opensim_coordinate_order(m)
    [0, 2, 1]
    """
    depth = []
    for i in range(model.n_bodies):
        p = model.parent[i]
        depth.append(0 if p < 0 else depth[p] + 1)
    order = []
    for i in sorted(range(model.n_bodies), key=lambda k: (depth[k], k)):
        vi, nv = int(model.v_index[i]), int(model.joint_nv[i])
        order.extend(range(vi, vi + nv))
    return order


# --- plausibility of the data -------------------------------------------------------------

#: Bounds beyond which a value is no measurement (a damaged file, a wrong unit, another
#: quantity): generalized coordinates (rad or m), forces (N), points of application
#: (centres of pressure, m) and torques (N m). The tools refuse such values, naming the
#: file, the column and the frame, rather than compute garbage from them.
MAX_COORDINATE = 1e3
MAX_FORCE = 1e6
MAX_POINT = 1e3
MAX_TORQUE = 1e6


def _frame_text(row: int, time) -> str:
    """``frame 3 (time 0.05 s)`` for messages (`time` None: no time)."""
    if time is None:
        return f"frame {row}"
    return f"frame {row} (time {float(time):.6g} s)"


def _check_times(time, source: str, what: str) -> None:
    """DataError unless the times of a data file are finite and strictly increasing."""
    t = np.asarray(time, dtype=float)
    finite = np.isfinite(t)
    if not finite.all():
        k = int(np.argmin(finite))
        raise DataError(
            f"{what} '{source}': the time of row {k} is {t[k]!r}; times must be finite and "
            "strictly increasing: fix that row"
        )
    if t.shape[0] > 1:
        step = np.diff(t)
        if not (step > 0).all():
            k = int(np.argmin(step > 0))
            raise DataError(
                f"{what} '{source}': the time of row {k + 1} ({t[k + 1]:.9g} s) does not come "
                f"after that of row {k} ({t[k]:.9g} s); times must be strictly increasing: fix "
                "or remove the row"
            )


def _implausible(kind: str, bound: float, unit: str, what: str, source: str, column: str,
                 row: int, time, value: float, shown: str = "") -> DataError:  # fmt: skip
    """The DataError of a value beyond its physical bound (or missing, NaN)."""
    where = f"{what} '{source}', column '{column}', {_frame_text(row, time)}"
    if np.isnan(value):
        return DataError(
            f"{where}: the {kind} is missing (NaN); the tool needs it in every frame: fill the "
            "gap (e.g. by interpolation) or remove the row"
        )
    return DataError(
        f"{where}: {shown or f'{value:g} {unit}'} is beyond the bound of ±{bound:g} {unit} for "
        f"a {kind}, which no measurement can reach; the file is damaged, in another unit or "
        "the column holds another quantity: fix that value"
    )


# --- external loads -----------------------------------------------------------------------


def _identifier_columns(
    table: OpenSimTable, identifier: str, what: str, force: str, labels: list | None = None
) -> list:
    """The 3 columns starting with `identifier` (`labels`: ``table.columns`` if known)."""
    cols = [c for c in (table.columns if labels is None else labels) if c.startswith(identifier)]
    if len(cols) != 3:
        raise DataError(
            f"ExternalForce '{force}': the {what} identifier '{identifier}' matches {len(cols)} "
            f"column(s) of '{table.source or table.name}' ({cols}); OpenSim needs exactly 3 "
            "columns starting with it"
        )
    return cols


def _time_function(t_data: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """OpenSim's ExternalForce interpolation: constant, linear (2-3 samples), natural cubic."""
    n = t_data.shape[0]
    if n == 1:
        return np.broadcast_to(y[0], (t.shape[0], y.shape[1])).copy()
    if n <= 3:
        return np.stack([np.interp(t, t_data, y[:, k]) for k in range(y.shape[1])], axis=1)
    return _natural_cubic(t_data, y, t)


def _natural_cubic(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Natural cubic interpolating spline of the columns of `y` (n, m) at `t` (k,).

    The spline of ``scipy.interpolate.CubicSpline(x, y, bc_type="natural")``
    (second derivatives ``M`` from the tridiagonal system, zero at the ends),
    without its piecewise-polynomial object; outside `x` the end pieces'
    cubics continue, as CubicSpline extrapolates.
    """
    if x.shape[0] < 2 or y.shape[0] != x.shape[0]:
        raise DataError(
            f"a natural cubic spline needs at least 2 samples with one row of values each, got "
            f"{x.shape[0]} times and {y.shape[0]} rows"
        )
    h = np.diff(x)
    if not np.all(h > 0):
        raise DataError(
            "the external loads data need strictly increasing times; the time column has "
            f"{int(np.sum(~(h > 0)))} step(s) that are not positive"
        )
    n = x.shape[0]
    M = np.zeros((n, y.shape[1]))
    # the system is symmetric positive definite (diagonal d = 2 (h_i + h_i+1), off-diagonal
    # e = h_i+1 > 0): LAPACK's tridiagonal L D Lᵀ solver (dptsv's operations, compiled, all
    # columns side by side)
    y = np.ascontiguousarray(y, dtype=float)
    d, e, rhs = natural_cubic_system(h, y)
    info, sol = ptsv(d, e, rhs)  # (2 samples: no interior point, M = 0, a straight line)
    if info != 0:  # not reached for increasing finite times; the banded LU as before
        ab = np.zeros((3, n - 2))
        ab[0, 1:] = e
        ab[1] = d
        ab[2, :-1] = e
        sol = linalg.solve_banded((1, 1), ab, rhs, check_finite=False)
    M[1:-1] = sol
    k = np.clip(np.searchsorted(x, t, side="right") - 1, 0, n - 2)
    a = x[k + 1] - t
    b = t - x[k]
    # (M[k] a³ + M[k+1] b³) / (6 h_k) + (y[k] / h_k - M[k] h_k / 6) a
    #   + (y[k+1] / h_k - M[k+1] h_k / 6) b, numpy's operations compiled (the cubes numpy's)
    a3, b3 = a[:, None] ** 3, b[:, None] ** 3  # (the cubes as the array expression took them)
    return natural_cubic_values(M, y, h, k, a, b, a3[:, 0], b3[:, 0])


_LOAD_BOUNDS = {
    "force": ("force", MAX_FORCE, "N"),
    "point": ("point of application", MAX_POINT, "m"),
    "torque": ("torque", MAX_TORQUE, "N m"),
}


def _check_loads(y: np.ndarray, columns: list, plan: list, time: np.ndarray, source: str):
    """DataError for a missing or implausible force, point or torque of the loads' columns."""
    kinds = [""] * len(columns)
    for _spec, slots in plan:
        for what, start in slots.items():
            kinds[start : start + 3] = [what] * 3
    for what, (kind, limit, unit) in _LOAD_BOUNDS.items():
        cols = [k for k, w in enumerate(kinds) if w == what]
        if not cols:
            continue
        where = first_beyond(y[:, cols], limit, missing_ok=False)
        if where is not None:
            row, k = where[0], cols[where[1]]
            raise _implausible(
                f"{kind} of an external load", limit, unit, "external loads data file", source,
                columns[k], row,
                time[row], float(y[row, k]),
            )  # fmt: skip


def _frame_pose(model: Model, kin, name: str, what: str):
    """(R (N,3,3), p (N,3)) of a named body, identity/zero for the ground."""
    if name.lower() == "ground":
        return None, None
    try:
        b = model.body_index(name)
    except ModelError as err:
        raise ModelError(
            f"the external loads name body '{name}' ({what}), which model '{model.name}' "
            f"does not have; bodies: {model.body_names}"
        ) from err
    return kin.rotations[:, b], kin.positions[:, b]


def external_loads_f_ext(model: Model, q, time, loads: ExternalLoads, data: OpenSimTable, *,
                         kin=None) -> np.ndarray:  # fmt: skip
    """World spatial forces on the model's bodies from an OpenSim external-loads description.

    Parameters
    ----------
    model : Model
    q : array_like, shape (n_frames, nq)
        Coordinates at the frames (for the frames that forces and points are
        expressed in); may be None when `kin` is given.
    time : array_like, shape (n_frames,)
        Times of the frames, s (the data are interpolated there).
    loads : ExternalLoads
        From :func:`~ahbm.opensim.setup_files.read_external_loads`.
    data : OpenSimTable
        The loads' data file (:func:`ahbm.opensim.read_mot`), forces in N, points in
        m, torques in N m.
    kin : Kinematics, optional
        ``forward_kinematics(model, q)`` when already computed.

    Returns
    -------
    f_ext : ndarray, shape (n_frames, n_bodies, 6)
        ``[r × F + T; F]`` on each applied body (world axes, moment about the
        world origin): the ``f_ext`` of :func:`ahbm.dynamics.rnea` with
        ``f_ext_frame="world"``. Forces on the same body add up.

    Raises
    ------
    DataError
        An identifier that does not match exactly three columns, times outside
        the data, non-finite data.
    ModelError
        A body name the model does not have.

    Notes
    -----
    OpenSim's ``ExternalForce::computeForce``: ``F_G = R_F F``, ``T_G = R_F T``
    with ``R_F`` the orientation of ``force_expressed_in_body``; the point
    ``p`` is in ``point_expressed_in_body`` (world point ``o_P + R_P p``), the
    applied body's origin when no point is given. Time functions: natural
    cubic interpolating spline (``GCVSpline`` of degree 3 with zero error
    variance), piecewise linear for 2-3 samples, constant for one.

    Examples
    --------
    >>> from ahbm.opensim.setup_files import ExternalForceSpec
    >>> m = Model()
    >>> _ = m.add_body("foot", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0)
    >>> df = pd.DataFrame([[0, 0, 10.0, 0.5, 0, 0], [0, 0, 10.0, 0.5, 0, 0]],
    ...     columns=[f"f_{k}{a}" for k in "vp" for a in "xyz"], index=pd.Index([0.0, 1.0]))
    >>> loads = ExternalLoads(Path("x.xml"), forces=(ExternalForceSpec(
    ...     "f", "foot", force_identifier="f_v", point_identifier="f_p"),))
    >>> external_loads_f_ext(m, [[0.0]], [0.5], loads, OpenSimTable(df))[0, 0].tolist()
    [0.0, -5.0, 0.0, 0.0, 0.0, 10.0]
    """
    t = np.asarray(time, dtype=float).reshape(-1)
    if kin is None:
        kin = forward_kinematics(model, np.asarray(q, dtype=float).reshape(t.shape[0], -1))
    N = t.shape[0]
    f_ext = np.zeros((N, model.n_bodies, 6))
    t_data = data.time
    source = data.source or data.name or "external loads data"
    if loads.forces:
        _check_times(t_data, source, "external loads data file")
    # a little outside is fine (OpenSim's processed times may start 1e-7 s early):
    # the splines extrapolate over at most one sample interval of the data
    slack = float(np.min(np.diff(t_data))) if t_data.shape[0] > 1 else 0.0
    if loads.forces and (t.size and (t.min() < t_data[0] - slack or t.max() > t_data[-1] + slack)):
        raise DataError(
            f"the external loads data '{data.source}' cover {t_data[0]} to {t_data[-1]} s but the "
            f"coordinates need {t.min()} to {t.max()} s; shorten the time range"
        )
    # every column needed, interpolated in one call
    plan, columns = [], []
    labels = data.columns
    for spec in loads.forces:
        if spec.applied_to_body.lower() == "ground":
            raise ModelError(
                f"ExternalForce '{spec.name}' is applied to the ground; apply it to a body"
            )
        _frame_pose(model, kin, spec.applied_to_body, "applied_to_body")  # known body?
        slots = {}
        for what, identifier in (
            ("force", spec.force_identifier),
            ("point", spec.point_identifier if spec.force_identifier else ""),
            ("torque", spec.torque_identifier),
        ):
            if identifier:
                slots[what] = len(columns)
                columns.extend(_identifier_columns(data, identifier, what, spec.name, labels))
        plan.append((spec, slots))
    if not plan:
        return f_ext
    position = {c: k for k, c in enumerate(labels)}
    y = data.data.to_numpy(dtype=float)[:, [position[c] for c in columns]]
    _check_loads(y, columns, plan, t_data, source)
    values = _time_function(t_data, y, t)
    for spec, slots in plan:
        b = model.body_index(spec.applied_to_body)
        R_f, _ = _frame_pose(model, kin, spec.force_expressed_in_body, "force_expressed_in_body")
        wrench = np.zeros((N, 6))
        if "force" in slots:
            F = values[:, slots["force"] : slots["force"] + 3]
            if R_f is not None:
                F = np.einsum("nij,nj->ni", R_f, F)
            if "point" in slots:
                p = values[:, slots["point"] : slots["point"] + 3]
                R_p, o_p = _frame_pose(
                    model, kin, spec.point_expressed_in_body, "point_expressed_in_body"
                )
                if R_p is not None:
                    p = o_p + np.einsum("nij,nj->ni", R_p, p)
            else:
                p = kin.positions[:, b]
            wrench[:, :3] += cross(p, F)
            wrench[:, 3:] += F
        if "torque" in slots:
            T = values[:, slots["torque"] : slots["torque"] + 3]
            if R_f is not None:
                T = np.einsum("nij,nj->ni", R_f, T)
            wrench[:, :3] += T
        f_ext[:, b] += wrench
    return f_ext


# --- the computation ----------------------------------------------------------------------


_DEGREE = np.pi / 180.0


def _coordinate_matrix(
    model: Model, table: OpenSimTable, defaults: np.ndarray, degrees=()
) -> np.ndarray:
    """Model-ordered coordinates (n, nq) from a table; missing coordinates get defaults.

    Columns named in `degrees` are converted to radians (``x * (pi / 180)``, as
    :func:`coordinates_to_radians` does).
    """
    names = model.coordinate_names
    lookup = {}
    columns = table.columns
    for c in columns:
        key = c
        if "/" in c:  # OpenSim 4 state path /jointset/<joint>/<coordinate>/value
            parts = [p for p in c.split("/") if p]
            if len(parts) >= 2 and parts[-1] == "value":
                key = parts[-2]
            else:
                continue
        lookup[key] = c
    found = [n for n in names if n in lookup]
    if not found:
        raise DataError(
            f"the coordinates file '{table.source}' has none of the model's coordinates "
            f"{names}; its columns are {columns}"
        )
    values = table.data.to_numpy(dtype=float)
    col = {c: i for i, c in enumerate(columns)}
    Q = np.empty((len(table), len(names)))
    for k, n in enumerate(names):
        if n not in lookup:
            Q[:, k] = defaults[k]
        elif lookup[n] in degrees:
            Q[:, k] = values[:, col[lookup[n]]] * _DEGREE
        else:
            Q[:, k] = values[:, col[lookup[n]]]
    where = first_beyond(Q, MAX_COORDINATE, missing_ok=False)
    if where is not None:
        row, k = where
        column = lookup[names[k]]
        raw = float(values[row, col[column]])
        shown = f"{raw:g} degrees ({Q[row, k]:g} rad)" if column in degrees else ""
        raise _implausible(
            "generalized coordinate", MAX_COORDINATE, "rad or m", "coordinates file",
            table.source or table.name or "(in memory)", column, row,
            table.time[row], float(Q[row, k]), shown,
        )  # fmt: skip
    return Q


def _default_q(model: Model) -> np.ndarray:
    """Default coordinates: OpenSim's default values when known, else the neutral pose."""
    from ahbm.kinematics.tree import neutral_q

    q = neutral_q(model).astype(float)
    idx = {n: i for i, n in enumerate(model.coordinate_names)}
    for row in _osim_rows(model):
        n, d = row.get("name"), row.get("default_value", row.get("default"))
        if n in idx and d is not None and np.isfinite(float(d)):
            q[idx[n]] = float(d)
    return q


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
        spline = natural_quintic_spline(t, Qf)
        if time_range is None:
            sel = np.ones(t.shape[0], dtype=bool)
        else:
            t0, t1 = (float(v) for v in time_range)
            sel = (t >= t0 - 1e-12) & (t <= t1 + 1e-12)
            if not sel.any():
                raise DataError(f"`time_range` {time_range} selects no frame of the coordinates")
        times = t[sel]
        q, qd, qdd = spline(times), spline(times, 1), spline(times, 2)
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


def coordinates_to_radians(model: Model, table: OpenSimTable) -> OpenSimTable:
    """Convert the rotational coordinates of a table read in degrees, by the model's motion types.

    Parameters
    ----------
    model : Model
    table : OpenSimTable
        Read with ``read_mot(path, angle_columns=[])`` (values as in the file).

    Returns
    -------
    OpenSimTable
        The same table when the file is not in degrees; otherwise a copy whose
        columns of rotational coordinates (as OpenSim's
        ``convertDegreesToRadians`` decides, from the coordinates' motion type)
        are in radians and listed in ``angle_columns``.

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                "coordinates": ["knee"]})
    >>> df = pd.DataFrame({"knee": [90.0]}, index=pd.Index([0.0], name="time"))
    >>> t = coordinates_to_radians(m, OpenSimTable(df, in_degrees=True))
    >>> float(t.data["knee"].iloc[0].round(6)), t.angle_columns
    (1.570796, ['knee'])
    """
    if not table.in_degrees or table.angle_columns:
        return table
    columns = table.columns
    angles = _angle_columns(model, columns)
    values = table.data.to_numpy(dtype=float, copy=True)
    position = {}
    for i, c in enumerate(columns):
        position.setdefault(c, i)  # the first of equal labels, as list.index
    idx = [position[c] for c in angles]
    values[:, idx] *= _DEGREE
    df = pd.DataFrame(values, index=table.data.index, columns=table.data.columns)
    return replace(table, data=df, angle_columns=angles)


def _angle_columns(model: Model, columns: list) -> list:
    """The columns of rotational coordinates (by the model's motion types), in table order."""
    rot = _rotational(model)
    angles = []
    for c in columns:
        key = c
        if "/" in c:
            parts = [p for p in c.split("/") if p]
            key = parts[-2] if len(parts) >= 2 and parts[-1] in ("value", "speed") else c
        if rot.get(key, False):
            angles.append(c)
    return angles


def _read_osim(path: Path, *, muscles: bool = True, markers: bool = True) -> Model:
    """read_osim; ``muscles=False`` for tools that use no muscle path (ID, IK): their
    forces are then read as summaries (``forces="summary"``: the scalar properties that
    :func:`active_model_forces` reads, without the paths; no display geometry or wrap
    objects); ``markers=False`` for tools that use no marker (ID)."""
    try:
        from ahbm.opensim import read_osim
    except ImportError as err:  # pragma: no cover - read_osim ships with ahbm.io
        raise FileFormatError(
            f"cannot read the OpenSim model '{path}': this ahbm has no ahbm.opensim.read_osim"
        ) from err
    return read_osim(
        path, muscles=muscles, forces="full" if muscles else "summary", markers=markers
    )


# --- outputs ------------------------------------------------------------------------------
#
# The policy of every tool (docs/security.md): an output that is one of the run's inputs
# (setup, model, data files, external loads and their data, through links too) is refused;
# an existing file is replaced only when it has a suffix the writer writes, and atomically;
# names read from a setup cannot leave the results folder; the folders are created and
# checked before the computation; every OSError becomes a DataError naming the path.

#: Suffixes of the storage files the tools write (replaced when they exist).
_STORAGE = (".sto", ".mot")
#: Longest file name (bytes) of common file systems.
_NAME_MAX = 255


def _make_folder(folder: Path, argname: str = "results folder") -> None:
    """Create an output folder named by a setup (as OpenSim does); DataError on failure."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise os_error(err, folder, "create the output folder", argname=argname) from err


def _writable_folder(folder, *, argname: str, create: bool = False) -> Path:
    """Check, before a computation, that a file can be created in `folder`.

    `create`: create the folder first (the results folder a setup names, as
    OpenSim does); otherwise it must exist. The check creates and removes an
    empty temporary file (named as :func:`ahbm._internal.files.atomic_path` names its
    temporaries, so that :func:`~ahbm._internal.files.cleanup_temporaries` removes one
    left by a killed process): permissions, read-only file systems, quotas and
    ACLs are all tested as the write will meet them.
    """
    folder = Path(folder) if str(folder) else Path(".")
    if create:
        _make_folder(folder, argname)
    try:
        if not folder.is_dir():
            raise DataError(
                f"Cannot write `{argname}`: the folder {str(folder)!r} does not exist; create it "
                "first or choose another output"
            )
        fd, probe = tempfile.mkstemp(
            prefix=f".probe.{TEMP_MARKER}-{_host_tag()}-{os.getpid()}-", suffix=".tmp", dir=folder
        )
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise os_error(err, folder, "write in the folder", argname=argname) from err
    return folder


def _check_out(path, inputs, suffixes, argname: str) -> Path:
    """:func:`ahbm._internal.files.check_output`; an OSError (a folder not searchable) too."""
    try:
        return check_output(output_path(path, argname), inputs, suffixes=suffixes, argname=argname)
    except OSError as err:
        raise os_error(err, path, "check the output", argname=argname) from err


def _named_output(folder: Path, names, suffix: str) -> Path:
    """``folder / "_".join(names) + suffix`` for names read from a setup.

    `names` holds ``(name, where)`` pairs, `where` saying which attribute of
    which setup the name is (for the message); each name, and the whole file
    name, must be a plain file name: it cannot leave the results folder.
    """
    for name, where in names:
        if len(name) > _NAME_MAX:
            raise DataError(
                f"{where} {_shown(name)} is too long to be used in an output file name; "
                "rename it in the setup file"
            )
        if name:
            inside_folder(folder, name, argname=where)
    joined = "_".join(name for name, _ in names) + suffix
    if len(joined.encode("utf-8", "surrogateescape")) > _NAME_MAX:
        raise DataError(
            f"the output file name {_shown(joined)} made of {' and '.join(w for _, w in names)} "
            f"is longer than {_NAME_MAX} bytes, which file systems refuse; shorten the names"
        )
    return inside_folder(folder, joined, argname=names[0][1])


def _loads_inputs(loads: ExternalLoads | None) -> list:
    """The input files of an external-loads description, as (what, path) pairs."""
    if loads is None:
        return []
    return [
        ("external loads", loads.path),
        ("external loads data", loads.datafile),
        ("external loads kinematics", loads.model_kinematics_file),
    ]


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
