"""The coordinates of an OpenSim model as OpenSim's tools read and order them.

- :func:`opensim_coordinate_order`: the coordinates in Simbody's multibody-tree
  order, the column order of OpenSim's inverse dynamics;
- :func:`coordinates_to_radians`: a table read in degrees converted by the
  model's motion types, as OpenSim's ``convertDegreesToRadians``;
- the private helpers the tools share: the rotational coordinates
  (``_rotational``), the default values (``_default_q``), the model-ordered
  coordinate matrix of a table with its plausibility check
  (``_coordinate_matrix``) and the model reader of the tools (``_read_osim``).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.io.opensim_table import OpenSimTable
from ahbm.io.trc import first_beyond
from ahbm.kinematics.tree import Model
from ahbm.opensim._plausibility import MAX_COORDINATE, _implausible

__all__ = ["coordinates_to_radians", "opensim_coordinate_order"]


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
                out[str(name)] = mt.startswith("rot")
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
    pd = sys.modules.get("pandas")  # (not loaded: the table is no DataFrame)
    if pd is not None and isinstance(table, pd.DataFrame):
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

    Only a rotational coordinate is rotational for OpenSim: its values are in
    degrees in files that say ``inDegrees=yes`` and its ID column is
    ``<name>_moment``. A coupled coordinate (e.g. a translation whose axis
    function is a ``MultiplierFunction``, as in models scaled by older OpenSim
    versions) is neither converted nor called a moment.
    """
    out = {}
    for row in _coordinate_rows(table):
        mt = str(row.get("motion_type", "")).lower()
        if mt:
            out[str(row.get("name"))] = mt.startswith("rot")
    return out


def _joint_kinds(joint) -> list:
    """True/False (rotational) per coordinate of a joint from its type/axes.

    The motion types of :func:`~ahbm.opensim.coordinate_table.osim_motion_types`
    (OpenSim's rule for custom joints); quaternion components count as rotational.
    """
    from ahbm.opensim.coordinate_table import _joint_motions

    motions = _joint_motions(joint)
    return [m in ("rotational", "quaternion") for m in motions]


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


_DEGREE = np.pi / 180.0


def _coordinate_matrix(
    model: Model, table: OpenSimTable, defaults: np.ndarray, degrees=()
) -> np.ndarray:
    """Model-ordered coordinates (n, nq) from a table; missing coordinates get defaults.

    Columns named in `degrees` are converted to radians (``x * (pi / 180)``, as
    :func:`coordinates_to_radians` does). A coordinate with more than one
    column (a repeated label, or a name and its state path) is taken from the
    first of them, as OpenSim's tools do (measured with OpenSim 4.6's
    InverseDynamicsTool), with an :class:`~ahbm.errors.AhbmWarning` naming the
    coordinate and the file; repeated columns that are no coordinate of the
    model are ignored.
    """
    names = model.coordinate_names
    lookup: dict[str, int] = {}  # coordinate -> position of its first column
    repeated: dict[str, int] = {}
    columns = table.columns
    for i, c in enumerate(columns):
        key = c
        if "/" in c:  # OpenSim 4 state path /jointset/<joint>/<coordinate>/value
            parts = [p for p in c.split("/") if p]
            if len(parts) >= 2 and parts[-1] == "value":
                key = parts[-2]
            else:
                continue
        if key in lookup:
            repeated[key] = repeated.get(key, 1) + 1
        else:
            lookup[key] = i
    needed = [n for n in names if n in repeated]
    if needed:
        warnings.warn(
            f"the coordinates file '{table.source or table.name or '(in memory)'}' has "
            + ", ".join(f"{repeated[n]} columns for coordinate '{n}'" for n in needed)
            + "; using the first of each (file column "
            + ", ".join(str(lookup[n] + 2) for n in needed)
            + ", time being column 1), as OpenSim does: remove the others to be sure",
            AhbmWarning,
            stacklevel=3,
        )
    found = [n for n in names if n in lookup]
    if not found:
        raise DataError(
            f"the coordinates file '{table.source}' has none of the model's coordinates "
            f"{names}; its columns are {columns}"
        )
    values = table.values
    Q = np.empty((len(table), len(names)))
    for k, n in enumerate(names):
        if n not in lookup:
            Q[:, k] = defaults[k]
        elif columns[lookup[n]] in degrees:
            Q[:, k] = values[:, lookup[n]] * _DEGREE
        else:
            Q[:, k] = values[:, lookup[n]]
    where = first_beyond(Q, MAX_COORDINATE, missing_ok=False)
    if where is not None:
        row, k = where
        column = columns[lookup[names[k]]]
        raw = float(values[row, lookup[names[k]]])
        shown = f"{raw:g} degrees ({Q[row, k]:g} rad)" if column in degrees else ""
        raise _implausible(
            "generalized coordinate", MAX_COORDINATE, "rad or m", "coordinates file",
            table.source or table.name or "(in memory)", column, row,
            table.time[row], float(Q[row, k]), shown,
        )  # fmt: skip
    return Q


def _default_q(model: Model) -> np.ndarray:
    """Default coordinates: OpenSim's default values when known, else the neutral pose."""
    from ahbm.kinematics.configuration import neutral_q

    q = neutral_q(model).astype(float)
    idx = {n: i for i, n in enumerate(model.coordinate_names)}
    for row in _osim_rows(model):
        n, d = row.get("name"), row.get("default_value", row.get("default"))
        if n in idx and d is not None and np.isfinite(float(d)):
            q[idx[n]] = float(d)
    return q


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
    >>> import pandas as pd
    >>> df = pd.DataFrame({"knee": [90.0]}, index=pd.Index([0.0], name="time"))
    >>> t = coordinates_to_radians(m, OpenSimTable(df, in_degrees=True))
    >>> float(t.data["knee"].iloc[0].round(6)), t.angle_columns
    (1.570796, ['knee'])
    """
    if not table.in_degrees or table.angle_columns:
        return table
    columns = table.columns
    angles = _angle_columns(model, columns)
    values = np.array(table.values, dtype=float)
    chosen = set(angles)
    values[:, [i for i, c in enumerate(columns) if c in chosen]] *= _DEGREE  # repeats too
    angles = list(dict.fromkeys(angles))  # (a repeated label once)
    return OpenSimTable.from_arrays(
        table.time,
        values,
        columns,
        index_name=table.index_name,
        name=table.name,
        in_degrees=table.in_degrees,
        angle_columns=angles,
        header=table.header,
        comments=table.comments,
        source=table.source,
    )


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
