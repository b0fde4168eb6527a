"""A whole Trial in a MATLAB .mat file (one struct, readable in MATLAB without ahbm).

No pickle is ever used: the struct holds plain arrays, strings, cell arrays and
nested structs, plus ``ahbm_types`` (a JSON string with the Python type and
shape of every value) so that :func:`read_mat` restores the Trial exactly.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import as_path, output_path
from ahbm.errors import DataError, FileFormatError
from ahbm.io._trial_fields import point_kinds_from
from ahbm.io.trial import Event, ForcePlate, Trial, check_trial

__all__ = ["write_mat", "read_mat"]

_MAT_FORMAT = "ahbm-trial-mat"
_MAT_VERSION = "1.0"
_MAT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")


def _mat_encode(value, path: list, types: dict):
    """Encode a Python tree for scipy.io.savemat, recording each leaf's type."""
    key = json.dumps(path)
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        if any(not isinstance(k, str) for k in value):
            raise DataError(f"Dictionary keys must be strings (at {'/'.join(map(str, path))})")
        if all(_MAT_NAME.match(k) for k in keys):
            types[key] = ["dict"]
            return {k: _mat_encode(v, [*path, k], types) for k, v in value.items()}
        types[key] = ["map"]
        vals = np.empty((len(keys),), dtype=object)
        for i, (k, v) in enumerate(value.items()):
            vals[i] = _mat_encode(v, [*path, k], types)
        return {"keys": np.array(keys, dtype=object), "values": vals}
    if isinstance(value, pd.DataFrame):
        try:
            vals = value.to_numpy(dtype=np.float64)
            idx = np.asarray(value.index, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError(
                f"Only numeric DataFrames can go into a .mat file (at {'/'.join(map(str, path))})"
            ) from err
        cols = value.columns
        labels = [[str(x) for x in (c if isinstance(c, tuple) else (c,))] for c in cols]
        types[key] = [
            "dataframe",
            labels,
            [None if n is None else str(n) for n in cols.names],
            None if value.index.name is None else str(value.index.name),
            str(np.asarray(value.index).dtype),
        ]
        return {
            "values": vals,
            "index": idx,
            "columns": np.array(["/".join(lab) for lab in labels], dtype=object),
            "attrs": _mat_encode(dict(value.attrs), [*path, "attrs"], types),
        }
    if value is None:
        types[key] = ["none"]
        return np.zeros((0, 0))
    if isinstance(value, str):
        types[key] = ["str"]
        return value
    if isinstance(value, bool | np.bool_):
        types[key] = ["bool"]
        return np.array([[bool(value)]])
    if isinstance(value, int) and not isinstance(value, np.integer):
        types[key] = ["int"]
        return np.array([[value]], dtype=np.int64)
    if isinstance(value, float):
        types[key] = ["float"]
        return np.array([[value]])
    if isinstance(value, list | tuple):
        kind = "list" if isinstance(value, list) else "tuple"
        if value and all(isinstance(v, str) for v in value):
            types[key] = [kind + "_str"]
            return np.array(value, dtype=object)
        types[key] = [kind]
        cell = np.empty((len(value),), dtype=object)
        for i, v in enumerate(value):
            cell[i] = _mat_encode(v, [*path, i], types)
        return cell
    if isinstance(value, np.generic | np.ndarray):
        a = np.asarray(value)
        if a.dtype.kind in "US":
            types[key] = ["str_array", list(a.shape)]
            return np.array(a.astype(str).ravel().tolist() or [], dtype=object)
        if a.dtype.kind not in "biufc":
            raise DataError(
                f"Cannot store an array of dtype {a.dtype} in a .mat file "
                f"(at {'/'.join(map(str, path))})"
            )
        types[key] = [
            "scalar" if isinstance(value, np.generic) else "ndarray",
            a.dtype.str,
            list(a.shape),
        ]
        return a
    raise DataError(
        f"Cannot store a {type(value).__name__} in a .mat file (at "
        f"{'/'.join(map(str, path))}); use numbers, strings, lists, dicts or arrays"
    )


def _mat_decode(value, path: list, types: dict):
    key = json.dumps(path)
    spec = types.get(key)
    kind = spec[0] if spec else None
    if kind == "dict":
        if not isinstance(value, dict):  # savemat stores an empty struct as [[None]]
            return {}
        return {k: _mat_decode(value[k], [*path, k], types) for k in _struct_fields(value)}
    if kind == "map":
        keys = [_mat_str(k) for k in _cell_list(value["keys"])]
        vals = _cell_list(value["values"])
        return {k: _mat_decode(v, [*path, k], types) for k, v in zip(keys, vals, strict=True)}
    if kind == "dataframe":
        labels, names, index_name, index_dtype = spec[1], spec[2], spec[3], spec[4]
        index = pd.Index(np.asarray(value["index"]).ravel().astype(index_dtype), name=index_name)
        vals = np.asarray(value["values"], dtype=np.float64)
        if len(names) > 1:
            columns = pd.MultiIndex.from_tuples([tuple(lab) for lab in labels], names=names)
        else:
            columns = pd.Index([lab[0] for lab in labels], name=names[0])
        df = pd.DataFrame(vals.reshape(len(index), len(labels)), index=index, columns=columns)
        df.attrs.update(_mat_decode(value["attrs"], [*path, "attrs"], types))
        return df
    if kind == "none":
        return None
    if kind == "str":
        return _mat_str(value)
    if kind == "bool":
        return bool(np.asarray(value).ravel()[0])
    if kind == "int":
        return int(np.asarray(value).ravel()[0])
    if kind == "float":
        return float(np.asarray(value).ravel()[0])
    if kind in ("list_str", "tuple_str"):
        items = [_mat_str(v) for v in _cell_list(value)]
        return items if kind == "list_str" else tuple(items)
    if kind in ("list", "tuple"):
        items = [_mat_decode(v, [*path, i], types) for i, v in enumerate(_cell_list(value))]
        return items if kind == "list" else tuple(items)
    if kind == "str_array":
        items = [_mat_str(v) for v in _cell_list(value)]
        return (
            np.array(items, dtype=str).reshape(spec[1]) if items else np.zeros(spec[1], dtype=str)
        )
    if kind in ("scalar", "ndarray"):
        a = np.asarray(value).astype(np.dtype(spec[1]), copy=False).reshape(spec[2], order="C")
        if kind == "scalar":
            return a.reshape(())[()]
        return np.ascontiguousarray(a)
    # no type record (file written by MATLAB): best effort
    return _mat_plain(value)


def _struct_fields(value):
    if isinstance(value, np.ndarray) and value.dtype.names:
        return value.dtype.names
    if isinstance(value, dict):
        return [k for k in value if not k.startswith("__")]
    if isinstance(value, np.ndarray) and value.size == 0:  # an empty struct
        return []
    raise FileFormatError("Expected a MATLAB struct in the .mat file")


def _cell_list(value) -> list:
    a = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if a.dtype != object:
        return [a] if a.size else []
    return list(a.ravel(order="F"))


def _mat_str(value) -> str:
    a = np.asarray(value)
    if a.size == 0:
        return ""
    if a.dtype.kind == "U":
        return str(a.ravel()[0]) if a.ndim else str(a)
    if a.dtype == object:
        return _mat_str(a.ravel()[0])
    return str(a)


def _mat_plain(value):
    if isinstance(value, np.ndarray) and value.dtype.names:
        return {
            k: _mat_plain(value[k][0, 0] if value[k].shape == (1, 1) else value[k])
            for k in value.dtype.names
        }
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [_mat_plain(v) for v in value.ravel(order="F")]
    a = np.asarray(value)
    if a.dtype.kind == "U":
        return _mat_str(a)
    if a.size == 1:
        return a.ravel()[0].item()
    if a.ndim == 2 and 1 in a.shape:
        return a.ravel()
    return a


def _trial_tree(trial: Trial) -> dict:
    plates = [
        {
            "force": np.asarray(fp.force, dtype=np.float64),
            "moment": np.asarray(fp.moment, dtype=np.float64),
            "cop": np.asarray(fp.cop, dtype=np.float64),
            "free_moment": np.asarray(fp.free_moment, dtype=np.float64),
            "corners": np.asarray(fp.corners, dtype=np.float64),
            "origin": np.asarray(fp.origin, dtype=np.float64),
            "rate": float(fp.rate),
            "plate_type": int(fp.plate_type),
        }
        for fp in trial.force_plates
    ]
    events = {
        "label": [e.label for e in trial.events],
        "time": np.array([e.time for e in trial.events], dtype=np.float64),
        "context": [e.context for e in trial.events],
        "description": [e.description for e in trial.events],
    }
    return {
        "points": np.asarray(trial.points, dtype=np.float64),
        "point_labels": list(trial.point_labels),
        "point_rate": float(trial.point_rate),
        "point_units": str(trial.point_units),
        "point_descriptions": list(trial.point_descriptions),
        "point_residuals": None
        if trial.point_residuals is None
        else np.asarray(trial.point_residuals, dtype=np.float64),
        "point_mask": None
        if trial.point_mask is None
        else np.asarray(trial.point_mask, dtype=bool),
        "analogs": np.asarray(trial.analogs, dtype=np.float64),
        "analog_labels": list(trial.analog_labels),
        "analog_units": list(trial.analog_units),
        "analog_descriptions": list(trial.analog_descriptions),
        "analog_rate": float(trial.analog_rate),
        "first_frame": int(trial.first_frame),
        "force_plates": plates,
        "events": events,
        "subject": dict(trial.subject),
        "parameters": dict(trial.parameters),
        "results": dict(trial.results),
        "source": str(trial.source),
        # a struct of columns: labels need not be MATLAB identifiers
        "point_kinds": {
            "label": list(trial.point_kinds),
            "kind": [str(v[0]) for v in trial.point_kinds.values()],
            "unit": [str(v[1]) for v in trial.point_kinds.values()],
        },
        "extra": {k: v for k, v in vars(trial).items() if k not in _KNOWN_FIELDS},
    }


_KNOWN_FIELDS = set(f.name for f in dataclasses.fields(Trial))  # every Trial field


def _tree_to_trial(tree: dict) -> Trial:
    ev = tree.get("events", {})
    events = [
        Event(label=str(lab), time=float(t), context=str(c), description=str(d))
        for lab, t, c, d in zip(
            ev.get("label", []),
            np.asarray(ev.get("time", []), dtype=np.float64).ravel(),
            ev.get("context", []),
            ev.get("description", []),
            strict=True,
        )
    ]
    plates = [ForcePlate(**p) for p in tree.get("force_plates", [])]
    kwargs = {
        k: tree[k]
        for k in _KNOWN_FIELDS
        if k in tree and k not in ("events", "force_plates", "point_kinds")
    }
    trial = Trial(**kwargs, events=events, force_plates=plates)
    pk = tree.get("point_kinds") or {}
    pairs = zip(pk.get("label", []), pk.get("kind", []), pk.get("unit", []), strict=True)
    trial.point_kinds = point_kinds_from(
        {str(lab): (str(k), str(u)) for lab, k, u in pairs},
        trial.point_labels,
        where="trial.point_kinds",
    )
    for k, v in (tree.get("extra") or {}).items():
        if hasattr(trial, k):
            setattr(trial, k, v)
    return trial


def write_mat(trial: Trial, path) -> None:
    """Write a whole Trial to a MATLAB .mat file (a struct named ``trial``).

    Parameters
    ----------
    trial : Trial
        Every field is written; ``force_plates`` as a cell array of structs,
        ``events`` as a struct of columns (label, time, context, description),
        ``point_kinds`` (model outputs, in their own units) as a struct of
        columns (label, kind, unit),
        ``parameters``/``subject``/``results`` as nested structs.
    path : str or path-like
        Target (MATLAB 5 format, compressed); written atomically.

    Notes
    -----
    MATLAB has no scalars, 1-D arrays or bools distinct from arrays, so the
    struct also holds ``ahbm_types``, a JSON string with the Python type and
    shape of every value; :func:`read_mat` uses it to restore the Trial
    exactly. Dictionaries whose keys are not MATLAB identifiers become a struct
    with ``keys`` and ``values`` cell arrays (``containers.Map(s.keys,
    s.values)`` in MATLAB).

    Examples
    --------
    >>> t = Trial(points=np.ones((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> write_mat(t, "walk.mat")  # in MATLAB: s = load("walk.mat"); s.trial.points
    """
    import scipy.io

    check_trial(trial)
    path = output_path(path)
    types: dict = {}
    encoded = _mat_encode(_trial_tree(trial), [], types)
    encoded["ahbm_format"] = _MAT_FORMAT
    encoded["ahbm_version"] = _MAT_VERSION
    encoded["ahbm_types"] = json.dumps(types)

    with atomic_path(Path(path)) as tmp:
        scipy.io.savemat(str(tmp), {"trial": encoded}, do_compression=True, oned_as="row")


def read_mat(path) -> Trial:
    """Read a Trial written by :func:`write_mat`.

    Raises
    ------
    FileFormatError
        If the file is not a MATLAB file or holds no ahbm ``trial`` struct.

    Examples
    --------
    >>> t = Trial(points=np.ones((2, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> write_mat(t, "walk.mat")
    >>> read_mat("walk.mat").point_labels
    ['A']
    """
    import scipy.io

    path = as_path(path)
    try:
        m = scipy.io.loadmat(path, squeeze_me=False, struct_as_record=True, chars_as_strings=True)
    except (OSError, ValueError, TypeError, NotImplementedError) as err:
        raise FileFormatError(f"Cannot read MATLAB file '{path}': {err}") from err
    except Exception as err:  # scipy raises assorted errors on corrupt files
        raise FileFormatError(f"Cannot read MATLAB file '{path}': {err}") from err
    if "trial" not in m:
        raise FileFormatError(f"MATLAB file '{path}' has no variable 'trial' written by ahbm")
    s = m["trial"]
    if not (isinstance(s, np.ndarray) and s.dtype.names and s.size == 1):
        raise FileFormatError(f"MATLAB file '{path}': 'trial' is not a struct")
    s = s.reshape(-1)[0]
    names = s.dtype.names
    if "ahbm_format" not in names or _mat_str(s["ahbm_format"]) != _MAT_FORMAT:
        raise FileFormatError(f"MATLAB file '{path}' was not written by ahbm.io.matfile.write_mat")
    version = _mat_str(s["ahbm_version"])
    if version.split(".")[0] != _MAT_VERSION.split(".")[0]:
        raise FileFormatError(
            f"MATLAB file '{path}' has ahbm format version {version}; this ahbm reads "
            f"{_MAT_VERSION.split('.')[0]}.x -- upgrade ahbm"
        )
    try:
        types = json.loads(_mat_str(s["ahbm_types"]))
        tree = _mat_decode(_unwrap_struct(s), [], types)
        return _tree_to_trial(tree)
    except (KeyError, ValueError, TypeError, IndexError) as err:
        raise FileFormatError(
            f"MATLAB file '{path}' has an inconsistent ahbm trial: {err}"
        ) from err


def _unwrap_struct(value):
    """Turn loadmat's (1,1) struct arrays / cells into nested records recursively."""
    if isinstance(value, np.void) and value.dtype.names:
        return {k: _unwrap_struct(value[k]) for k in value.dtype.names}
    if isinstance(value, np.ndarray) and value.dtype.names:
        if value.size == 1:
            return _unwrap_struct(value.reshape(-1)[0])
        return value
    if isinstance(value, np.ndarray) and value.dtype == object:
        out = np.empty(value.shape, dtype=object)
        for idx in np.ndindex(*value.shape):
            out[idx] = _unwrap_struct(value[idx])
        return out
    return value
