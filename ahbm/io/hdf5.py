"""The HDF5 trial store: several Trials per file, lossless, atomic writes.

The layout is documented in ``docs/hdf5-schema.md`` (format
``ahbm-trial-store``, version :data:`FORMAT_VERSION`). In short::

    /                       attrs ahbm_format, ahbm_format_version, ahbm_version
    /trials/<name>/         one group per trial, attrs with the scalar fields
        points, point_labels, ..., analogs, ...   datasets (units as attributes)
        force_plates/0, 1, ...                    one group per plate
        events/                                   label, time, context, description
        subject/, parameters/, results/, extra/   generic trees (typed groups/datasets)

Every write goes to a temporary file in the target's folder which then replaces
the target (``os.replace``), so a failure or interruption never leaves a
truncated file and never damages an existing one. Writers of one store take
turns: each read-copy-modify-rename runs under the store's lock file
(``<name>.ahbm-lock``), so concurrent writers (threads or processes) lose no trial.

Every read goes through the checks of ``ahbm.io._h5safe`` (hard links
only, each object once, declared sizes and types checked before reading,
a memory cap), so a damaged or crafted store gives a FileFormatError naming
the file and the object; ``load_trial(..., isolate=True)`` reads in a child
process for the damage that crashes libhdf5 itself (``docs/security.md``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm._internal.isolation import run_isolated
from ahbm._internal.validation import as_positive_float, max_read_bytes, output_path
from ahbm.errors import AhbmError, DataError, FileFormatError
from ahbm.io._h5safe import H5_ERRORS, MAX_DEPTH, SafeStore, check_global_heaps, store_lock
from ahbm.io.tables import OpenSimTable
from ahbm.io.trial import Event, ForcePlate, Trial, check_trial

__all__ = [
    "save_trial",
    "load_trial",
    "load_result_units",
    "list_trials",
    "FORMAT_NAME",
    "FORMAT_VERSION",
]

FORMAT_NAME = "ahbm-trial-store"
#: ``"MAJOR.MINOR"``: readers accept any file with the same MAJOR (see the schema).
FORMAT_VERSION = "1.0"

_CHUNK_BYTES = 1 << 18  # ~256 KiB chunks along time
_COMPRESS_MIN_BYTES = 4096
_TYPE = "ahbm_type"
_KEY = "ahbm_key"

_TRIAL_FIELDS = tuple(f.name for f in dataclasses.fields(Trial))  # every Trial field
#: The fields of format 1.0, read from their own items (``extra/`` never sets them).
_CORE_FIELDS = frozenset(
    "points point_labels point_rate point_units point_descriptions point_residuals point_mask "
    "analogs analog_labels analog_units analog_descriptions analog_rate first_frame "
    "force_plates events subject parameters results source".split()
)
_PLATE_ARRAYS = {
    "force": ("N", "force on the plate, lab frame, (n_samples, 3)"),
    "moment": ("N m", "moment about the plate origin, lab frame, (n_samples, 3)"),
    "cop": ("m", "centre of pressure, lab frame, (n_samples, 3)"),
    "free_moment": ("N m", "free torque about the COP, lab frame, (n_samples, 3)"),
    "corners": ("m", "plate corners, lab frame, (4, 3)"),
    "origin": ("m", "plate origin, lab frame, (3,)"),
}


def _h5py():
    import h5py

    return h5py


# ----------------------------------------------------------------------------- helpers


def _encode_name(key: str) -> str:
    """An HDF5 link name for a dict key ('/' and '.' are not allowed as such)."""
    if key == "":
        return "%"
    if key in (".", ".."):
        return key.replace(".", "%2E")
    return key.replace("%", "%25").replace("/", "%2F").replace("\x00", "%00")


def _decode_name(name: str) -> str:
    if name == "%":
        return ""
    out, i = [], 0
    while i < len(name):
        code = name[i + 1 : i + 3] if name[i] == "%" else ""
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 3
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


_ESCAPES = {"25": "%", "2F": "/", "2E": ".", "00": "\x00"}


def _str_dtype():
    return _h5py().string_dtype("utf-8")


def _write_array(group, name: str, arr: np.ndarray, *, units: str | None = None, description=None):
    arr = np.asarray(arr)
    kwargs: dict[str, Any] = {}
    if arr.ndim >= 1 and arr.size and arr.nbytes >= _COMPRESS_MIN_BYTES:
        row = max(1, arr.nbytes // max(arr.shape[0], 1))
        rows = int(max(1, min(arr.shape[0], _CHUNK_BYTES // row)))
        kwargs.update(
            chunks=(rows, *arr.shape[1:]), compression="gzip", compression_opts=4, shuffle=True
        )
    ds = group.create_dataset(name, data=arr, **kwargs)
    if units is not None:
        ds.attrs["units"] = units
    if description is not None:
        ds.attrs["description"] = description
    return ds


def _write_strings(group, name: str, items, *, description=None):
    items = [str(s) for s in items]
    ds = group.create_dataset(name, data=np.array(items, dtype=object), dtype=_str_dtype())
    if description is not None:
        ds.attrs["description"] = description
    return ds


def _has_nul(s: str) -> bool:
    return "\x00" in s


def _write_tree(group, name: str, value, where: str) -> None:
    """Write any supported Python value under group[name] with a type tag."""
    h5py = _h5py()
    link = _encode_name(name)
    import pandas as pd

    def tag(obj, t):
        obj.attrs[_TYPE] = t
        if link != name and "\x00" not in name:  # informative; the link name decodes to it
            obj.attrs[_KEY] = name
        return obj

    if isinstance(value, dict):
        g = tag(group.create_group(link, track_order=True), "dict")
        for k, v in value.items():
            if not isinstance(k, str):
                raise DataError(
                    f"Cannot store {where}: dictionary key {k!r} is a {type(k).__name__}; "
                    f"use string keys"
                )
            _write_tree(g, k, v, f"{where}/{k}")
        return
    if isinstance(value, OpenSimTable):
        g = tag(group.create_group(link, track_order=True), "opensim_table")
        _write_tree(g, "data", value.data, f"{where}.data")
        fields = {
            "name": str(value.name),
            "in_degrees": bool(value.in_degrees),
            "angle_columns": [str(c) for c in value.angle_columns],
            "header": {str(k): str(v) for k, v in value.header.items()},
            "comments": [str(c) for c in value.comments],
            "source": str(value.source),
        }
        _write_tree(g, "fields", fields, where)
        return
    if isinstance(value, pd.DataFrame):
        g = tag(group.create_group(link, track_order=True), "dataframe")
        try:
            vals = value.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise DataError(f"Cannot store {where}: only numeric DataFrames are supported") from err
        _write_array(g, "values", vals)
        idx = np.asarray(value.index)
        if idx.dtype.kind not in "biuf":
            raise DataError(f"Cannot store {where}: the DataFrame index must be numeric")
        _write_array(g, "index", idx)
        g.attrs["index_name"] = "" if value.index.name is None else str(value.index.name)
        cols = value.columns
        labels = np.array([[str(x) for x in (c if isinstance(c, tuple) else (c,))] for c in cols])
        labels = labels.reshape(len(cols), cols.nlevels)
        g.create_dataset("columns", data=labels.astype(object), dtype=_str_dtype())
        g.attrs["column_names"] = [("" if n is None else str(n)) for n in cols.names]
        _write_tree(g, "attrs", dict(value.attrs), f"{where}.attrs")
        return
    if value is None:
        tag(group.create_dataset(link, data=h5py.Empty("f8")), "none")
        return
    if isinstance(value, str | np.str_):
        if _has_nul(str(value)):
            data = np.frombuffer(str(value).encode("utf-8", "surrogatepass"), dtype=np.uint8)
            tag(group.create_dataset(link, data=data), "str_bytes")
        else:
            tag(group.create_dataset(link, data=str(value), dtype=_str_dtype()), "str")
        return
    if isinstance(value, bytes):
        tag(group.create_dataset(link, data=np.frombuffer(value, dtype=np.uint8)), "bytes")
        return
    if isinstance(value, bool):
        tag(group.create_dataset(link, data=np.bool_(value)), "bool")
        return
    if isinstance(value, int) and not isinstance(value, np.integer):
        if not -(2**63) <= value < 2**63:
            raise DataError(f"Cannot store {where}: integer {value} does not fit in 64 bits")
        tag(group.create_dataset(link, data=np.int64(value)), "int")
        return
    if isinstance(value, float):
        tag(group.create_dataset(link, data=np.float64(value)), "float")
        return
    if isinstance(value, list | tuple):
        kind = "list" if isinstance(value, list) else "tuple"
        if value and all(isinstance(v, str) and not _has_nul(v) for v in value):
            tag(_write_strings(group, link, value), kind + "_str")
            return
        g = tag(group.create_group(link, track_order=True), kind)
        for i, v in enumerate(value):
            _write_tree(g, str(i), v, f"{where}[{i}]")
        return
    if isinstance(value, np.generic):
        if value.dtype.kind in "biufc":
            tag(group.create_dataset(link, data=value), "npscalar")
            return
        raise DataError(f"Cannot store {where}: numpy scalar of dtype {value.dtype}")
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biufc" or value.dtype.kind == "S":
            tag(_write_array(group, link, value), "ndarray")
            return
        if value.dtype.kind == "U" or (
            value.dtype == object and all(isinstance(v, str) for v in value.ravel())
        ):
            flat = [str(v) for v in value.ravel()]
            if any(_has_nul(s) for s in flat):
                raise DataError(f"Cannot store {where}: string array with NUL characters")
            ds = group.create_dataset(
                link,
                data=np.array(flat, dtype=object).reshape(value.shape),
                dtype=_str_dtype(),
            )
            tag(ds, "str_array")
            return
        raise DataError(
            f"Cannot store {where}: arrays of dtype {value.dtype} are not supported; "
            f"use numeric, bool or string arrays"
        )
    raise DataError(
        f"Cannot store {where}: values of type {type(value).__name__} are not supported; "
        f"use dicts, lists, strings, numbers, numpy arrays, numeric DataFrames or "
        f"OpenSimTables"
    )


_TREE_TYPES = (
    "dict list tuple opensim_table dataframe none str str_bytes bytes bool int float "
    "list_str tuple_str npscalar ndarray str_array"
).split()


def _read_tree(st: SafeStore, obj, where: str, depth: int = 0):
    """Inverse of _write_tree, through the checks of `st` (links, loops, sizes)."""
    h5py = _h5py()
    if depth > MAX_DEPTH:
        raise st.error(where, f"is nested more than {MAX_DEPTH} levels deep")
    t = st.attr(obj, _TYPE, where, "str", required=False)
    if isinstance(obj, h5py.Group):
        return _read_tree_group(st, obj, t, where, depth)
    if t is not None and t not in _TREE_TYPES:
        raise st.error(where, f"has an unknown type tag {t!r}")
    if t == "none":
        if obj.shape is not None:
            raise st.error(where, "is tagged 'none' but holds data")
        return None
    if obj.shape is None:
        raise st.error(where, f"is an empty (null) dataset tagged {t!r}")
    scalar = {"str": "s", "bool": "biu", "int": "iu", "float": "fiu", "npscalar": "biufc"}
    if t in scalar:
        st.check_dataset(obj, where, kinds=scalar[t], shape=())
        if t == "str":
            return str(obj.asstr()[()])
        value = obj[()]
        return value if t == "npscalar" else {"bool": bool, "int": int, "float": float}[t](value)
    if t in ("str_bytes", "bytes"):
        data = st.array(obj, where, kinds="iu", ndim=1)
        if data.dtype.itemsize != 1:
            raise st.error(where, f"has the data type {data.dtype}; expected bytes (uint8)")
        raw = data.astype(np.uint8).tobytes()
        return raw if t == "bytes" else raw.decode("utf-8", "surrogatepass")
    if t in ("list_str", "tuple_str"):
        items = st.strings(obj, where)
        return items if t == "list_str" else tuple(items)
    if t == "str_array":
        dshape = st.check_dataset(obj, where, kinds="s")
        st.charge(obj, where, dshape)
        values = obj.asstr()[()]  # a str for a scalar dataset
        return np.array(values if isinstance(values, str) else values.tolist(), dtype=str).reshape(
            dshape
        )
    if t == "ndarray":
        return np.asarray(st.array(obj, where, kinds="biufcS"))
    # a dataset without tag (e.g. added by hand): its data
    dshape = st.check_dataset(obj, where, kinds="biufcSs")
    st.charge(obj, where, dshape)
    if st.dtype_kind(obj, where) in ("str", "S"):
        return obj.asstr()[()]
    return obj[()]


def _read_tree_group(st: SafeStore, obj, t, where: str, depth: int):
    if t == "dict":
        out = {}
        for name in st.names(obj, where):
            key = _decode_name(name)
            child = st.child(obj, name, f"{where}/{name}")
            out[key] = _read_tree(st, child, f"{where}/{name}", depth + 1)
        return out
    if t in ("list", "tuple"):
        n = len(st.names(obj, where))
        items = [
            _read_tree(st, st.child(obj, str(i), f"{where}/{i}"), f"{where}/{i}", depth + 1)
            for i in range(n)
        ]
        return items if t == "list" else tuple(items)
    if t == "opensim_table":
        data = _read_tree(
            st, st.child(obj, "data", f"{where}/data", kind="group"), f"{where}/data", depth + 1
        )
        fields = _read_tree(
            st,
            st.child(obj, "fields", f"{where}/fields", kind="group"),
            f"{where}/fields",
            depth + 1,
        )
        names = {"name", "in_degrees", "angle_columns", "header", "comments", "source"}
        if not isinstance(fields, dict) or set(fields) != names:
            raise st.error(f"{where}/fields", f"must be a dict with the keys {sorted(names)}")
        try:
            return OpenSimTable(data=data, **fields)
        except (TypeError, ValueError) as err:
            raise st.error(where, f"is not a valid OpenSim table: {err}") from err
    if t == "dataframe":
        return _read_dataframe(st, obj, where, depth)
    raise st.error(where, f"is a group with an unknown type tag {t!r}")


def _read_dataframe(st: SafeStore, obj, where: str, depth: int):
    import pandas as pd

    values = st.array(
        st.child(obj, "values", f"{where}/values", kind="dataset"),
        f"{where}/values",
        kinds="fiu",
        ndim=2,
        dtype=np.float64,
    )
    n_rows, n_cols = values.shape
    index = st.array(
        st.child(obj, "index", f"{where}/index", kind="dataset"),
        f"{where}/index",
        kinds="biuf",
        shape=(n_rows,),
    )
    cols_ds = st.child(obj, "columns", f"{where}/columns", kind="dataset")
    cshape = st.check_dataset(cols_ds, f"{where}/columns", kinds="s", ndim=2)
    if cshape[0] != n_cols or not 1 <= cshape[1] <= 64:
        raise st.error(
            f"{where}/columns", f"has shape {cshape}; expected ({n_cols}, levels) for the values"
        )
    st.charge(cols_ds, f"{where}/columns", cshape)
    cols = cols_ds.asstr()[()]
    names = [n or None for n in st.str_array_attr(obj, "column_names", where, max_items=64)]
    if len(names) != cshape[1]:
        raise st.error(where, f"has {len(names)} column names for {cshape[1]} column levels")
    if cshape[1] > 1:
        columns = pd.MultiIndex.from_tuples([tuple(r) for r in cols.tolist()], names=names)
    else:
        columns = pd.Index([str(c) for c in cols.reshape(-1).tolist()], name=names[0])
    iname = st.attr(obj, "index_name", where, "str") or None
    df = pd.DataFrame(values, index=pd.Index(index, name=iname), columns=columns)
    attrs = _read_tree(
        st, st.child(obj, "attrs", f"{where}/attrs", kind="group"), f"{where}/attrs", depth + 1
    )
    if not isinstance(attrs, dict):
        raise st.error(f"{where}/attrs", "must be a dict")
    df.attrs.update(attrs)
    return df


# ----------------------------------------------------------------------------- trial groups


def _write_result_units(results, units, where: str) -> None:
    """Set the ``units`` attribute of result datasets: ``units[(key, subkey, ...)] = "m"``."""
    for keys, unit in units.items():
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        obj = results
        for k in keys:
            link = _encode_name(str(k))
            if not hasattr(obj, "keys") or link not in obj:
                raise DataError(
                    f"`result_units` names {where}/{'/'.join(map(str, keys))}, which is not in "
                    "trial.results; give units only for stored results"
                )
            obj = obj[link]
        if hasattr(obj, "keys"):
            raise DataError(
                f"`result_units` names the group {where}/{'/'.join(map(str, keys))}; "
                "units belong to datasets"
            )
        obj.attrs["units"] = str(unit)


def _write_trial_group(parent, name: str, trial: Trial) -> None:
    g = parent.create_group(name, track_order=True)
    g.attrs["ahbm_kind"] = "trial"
    g.attrs["point_rate"] = float(trial.point_rate)
    g.attrs["point_units"] = str(trial.point_units)
    g.attrs["analog_rate"] = float(trial.analog_rate)
    g.attrs["first_frame"] = int(trial.first_frame)
    g.attrs["source"] = str(trial.source)
    if trial.point_kinds:
        # model outputs (angles, moments, ...) among the points: {label: [kind, unit]}
        g.attrs["point_kinds"] = json.dumps(
            {str(k): [str(v[0]), str(v[1])] for k, v in trial.point_kinds.items()}
        )

    pts = np.asarray(trial.points, dtype=np.float64)
    if pts.ndim != 3 or pts.shape[2] != 3:
        raise DataError(
            f"Expected `trial.points` to have shape (n_frames, n_points, 3), got {pts.shape}"
        )
    if len(trial.point_labels) != pts.shape[1]:
        raise DataError(
            f"`trial.point_labels` has {len(trial.point_labels)} labels for {pts.shape[1]} points"
        )
    _write_array(
        g,
        "points",
        pts,
        units=str(trial.point_units),
        description="marker trajectories (n_frames, n_points, 3), NaN = missing",
    )
    _write_strings(g, "point_labels", trial.point_labels)
    _write_strings(g, "point_descriptions", trial.point_descriptions)
    if trial.point_residuals is not None:
        _write_array(
            g,
            "point_residuals",
            np.asarray(trial.point_residuals, dtype=np.float64),
            units=str(trial.point_units),
            description="residuals (n_frames, n_points)",
        )
    if trial.point_mask is not None:
        _write_array(
            g,
            "point_mask",
            np.asarray(trial.point_mask, dtype=bool),
            description="True where the sample was valid (n_frames, n_points)",
        )
    an = np.asarray(trial.analogs, dtype=np.float64)
    if an.ndim != 2:
        raise DataError(
            f"Expected `trial.analogs` to have shape (n_samples, n_channels), got {an.shape}"
        )
    _write_array(
        g,
        "analogs",
        an,
        description="analog channels (n_samples, n_channels); units per channel in analog_units",
    )
    _write_strings(g, "analog_labels", trial.analog_labels)
    _write_strings(g, "analog_units", trial.analog_units)
    _write_strings(g, "analog_descriptions", trial.analog_descriptions)

    fp_group = g.create_group("force_plates", track_order=True)
    fp_group.attrs["count"] = len(trial.force_plates)
    for i, fp in enumerate(trial.force_plates):
        pg = fp_group.create_group(str(i), track_order=True)
        pg.attrs["rate"] = float(fp.rate)
        pg.attrs["plate_type"] = int(fp.plate_type)
        for key, (units, desc) in _PLATE_ARRAYS.items():
            _write_array(
                pg,
                key,
                np.asarray(getattr(fp, key), dtype=np.float64),
                units=units,
                description=desc,
            )

    ev = g.create_group("events", track_order=True)
    _write_strings(ev, "label", [e.label for e in trial.events])
    _write_array(
        ev,
        "time",
        np.array([e.time for e in trial.events], dtype=np.float64),
        units="s",
        description="seconds from the start of the recording",
    )
    _write_strings(ev, "context", [e.context for e in trial.events])
    _write_strings(ev, "description", [e.description for e in trial.events])

    _write_tree(g, "subject", dict(trial.subject), "trial.subject")
    _write_tree(g, "parameters", dict(trial.parameters), "trial.parameters")
    _write_tree(g, "results", dict(trial.results), "trial.results")
    extra = {
        f.name: getattr(trial, f.name)
        for f in dataclasses.fields(trial)
        if f.name not in _TRIAL_FIELDS
    }
    _write_tree(g, "extra", extra, "trial")


def _read_trial_group(st: SafeStore, g, where: str) -> Trial:
    """The Trial in group `g`; every shape is checked against the counts it implies."""

    def ds(parent, name, pwhere, required=True):
        return st.child(parent, name, f"{pwhere}/{name}", kind="dataset", required=required)

    rates = {}
    for key in ("point_rate", "analog_rate"):
        rates[key] = st.attr(g, key, where, "float")
        if not (np.isfinite(rates[key]) and rates[key] >= 0):
            raise st.error(where, f"attribute {key!r} is {rates[key]!r}; expected a rate >= 0 Hz")
    pts_ds = ds(g, "points", where)
    shape = st.check_dataset(pts_ds, f"{where}/points", kinds="fiu", shape=(None, None, 3))
    n_frames, n_points = shape[:2]
    kwargs: dict[str, Any] = {
        "point_labels": st.strings(
            ds(g, "point_labels", where), f"{where}/point_labels", n=n_points
        ),
        "point_descriptions": st.strings(
            ds(g, "point_descriptions", where),
            f"{where}/point_descriptions",
            n=n_points,
            allow_empty=True,
        ),
        "points": st.array(pts_ds, f"{where}/points", kinds="fiu", dtype=np.float64),
        "point_units": st.attr(g, "point_units", where, "str"),
        "first_frame": st.attr(g, "first_frame", where, "int"),
        "source": st.attr(g, "source", where, "str"),
        **rates,
    }
    kwargs["point_kinds"] = _read_point_kinds(st, g, where, kwargs["point_labels"])
    per_frame = (n_frames, n_points)
    res = ds(g, "point_residuals", where, required=False)
    kwargs["point_residuals"] = (
        None
        if res is None
        else st.array(res, f"{where}/point_residuals", kinds="fiu", shape=per_frame)
    )
    mask = ds(g, "point_mask", where, required=False)
    kwargs["point_mask"] = (
        None
        if mask is None
        else st.array(mask, f"{where}/point_mask", kinds="biu", shape=per_frame).astype(bool)
    )
    an_ds = ds(g, "analogs", where)
    n_samples, n_channels = st.check_dataset(an_ds, f"{where}/analogs", kinds="fiu", ndim=2)
    for key in ("analog_labels", "analog_units", "analog_descriptions"):
        kwargs[key] = st.strings(
            ds(g, key, where),
            f"{where}/{key}",
            n=n_channels,
            allow_empty=key != "analog_labels" or n_samples == 0,
        )
    kwargs["analogs"] = st.array(an_ds, f"{where}/analogs", kinds="fiu", dtype=np.float64)
    return Trial(
        **kwargs,
        force_plates=_read_plates(st, g, where),
        events=_read_events(st, g, where),
        subject=_read_dict(st, g, "subject", where),
        parameters=_read_dict(st, g, "parameters", where),
        results=_read_dict(st, g, "results", where),
    )


def _read_point_kinds(st: SafeStore, g, where: str, labels) -> dict:
    """The ``point_kinds`` attribute ({label: [kind, unit]}, JSON) checked against the labels."""
    text = st.attr(g, "point_kinds", where, "str", required=False, default=None)
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise st.error(where, f"attribute 'point_kinds' is not valid JSON ({err})") from None
    known = set(labels)
    if not isinstance(value, dict) or not all(
        isinstance(k, str)
        and k in known
        and isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, str) for x in v)
        for k, v in value.items()
    ):
        raise st.error(
            where,
            "attribute 'point_kinds' must map point labels to [kind, unit] string pairs",
        )
    return {k: (v[0], v[1]) for k, v in value.items()}


def _read_dict(st: SafeStore, g, key: str, where: str, *, required: bool = True) -> dict:
    obj = st.child(g, key, f"{where}/{key}", required=required)
    if obj is None:
        return {}
    value = _read_tree(st, obj, f"{where}/{key}", 1)
    if not isinstance(value, dict):
        raise st.error(f"{where}/{key}", f"holds a {type(value).__name__}; expected a dict")
    return value


def _read_plates(st: SafeStore, g, where: str) -> list[ForcePlate]:
    fwhere = f"{where}/force_plates"
    fpg = st.child(g, "force_plates", fwhere, kind="group")
    count = st.attr(fpg, "count", fwhere, "int", required=False, default=None)
    if count is None:
        count = len(st.names(fpg, fwhere))
    if count < 0:
        raise st.error(fwhere, f"attribute 'count' is {count}; expected the number of plates")
    plates = []
    for i in range(count):
        pwhere = f"{fwhere}/{i}"
        pg = st.child(fpg, str(i), pwhere, kind="group")
        rate = st.attr(pg, "rate", pwhere, "float")
        if not (np.isfinite(rate) and rate >= 0):
            raise st.error(pwhere, f"attribute 'rate' is {rate!r}; expected a rate >= 0 Hz")
        arrays, n = {}, None
        for key in _PLATE_ARRAYS:
            want = {"corners": (4, 3), "origin": (3,)}.get(key, (n, 3))
            child = st.child(pg, key, f"{pwhere}/{key}", kind="dataset")
            arrays[key] = st.array(
                child, f"{pwhere}/{key}", kinds="fiu", shape=want, dtype=np.float64
            )
            n = arrays[key].shape[0] if key == "force" else n
        plates.append(
            ForcePlate(**arrays, rate=rate, plate_type=st.attr(pg, "plate_type", pwhere, "int"))
        )
    return plates


def _read_events(st: SafeStore, g, where: str) -> list[Event]:
    ewhere = f"{where}/events"
    ev = st.child(g, "events", ewhere, kind="group")
    time_ds = st.child(ev, "time", f"{ewhere}/time", kind="dataset")
    (n,) = st.check_dataset(time_ds, f"{ewhere}/time", kinds="fiu", ndim=1)
    cols = {
        key: st.strings(
            st.child(ev, key, f"{ewhere}/{key}", kind="dataset"), f"{ewhere}/{key}", n=n
        )
        for key in ("label", "context", "description")
    }
    times = st.array(time_ds, f"{ewhere}/time", kinds="fiu", dtype=np.float64)
    return [
        Event(label=lab, time=float(t), context=c, description=d)
        for lab, t, c, d in zip(
            cols["label"], times, cols["context"], cols["description"], strict=True
        )
    ]


def _read_extra(st: SafeStore, g, where: str, trial: Trial) -> None:
    """Set the fields stored under ``extra/`` that this version knows (not the core ones)."""
    names = {f.name for f in dataclasses.fields(trial)} - _CORE_FIELDS
    for k, v in _read_dict(st, g, "extra", where, required=False).items():
        if k in names:  # fields unknown to this version are ignored
            setattr(trial, k, v)


# ----------------------------------------------------------------------------- files


def _cap(max_bytes) -> int:
    """The memory cap of one read: `max_bytes`, or :func:`ahbm.io.max_read_bytes`."""
    if max_bytes is None:
        return max_read_bytes()
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int | np.integer) or max_bytes <= 0:
        raise DataError(
            f"Expected `max_bytes` to be a positive integer (bytes) or None, got {max_bytes!r}"
        )
    return int(max_bytes)


def _store_path(path) -> Path:
    if not isinstance(path, str | os.PathLike):
        raise DataError(
            f"Expected `path` to be a file path (str or os.PathLike), got {type(path).__name__}"
        )
    return Path(os.fspath(path))


@contextlib.contextmanager
def _reading(path: Path, *, max_bytes: int, follow_links: bool = False) -> Iterator:
    """Open an existing ahbm store read-only; yield ``(SafeStore, trials group)``.

    Everything read inside the block goes through the checks of
    :class:`SafeStore`; a raw h5py/numpy error that they do not anticipate
    still becomes a FileFormatError naming the file and the object.
    """
    h5py = _h5py()
    if not path.exists():
        raise FileFormatError(f"HDF5 trial store '{path}' does not exist")
    if not path.is_file():
        raise FileFormatError(f"'{path}' is not a file")
    try:
        check_global_heaps(path)
    except FileFormatError:
        raise
    except OSError as err:
        raise FileFormatError(
            f"HDF5 trial store '{path}' cannot be read: {err.strerror or err}"
        ) from err
    except ValueError as err:
        raise FileFormatError(f"HDF5 trial store '{path}' cannot be read: {err}") from err
    try:
        f = h5py.File(path, "r")
    except H5_ERRORS as err:
        raise FileFormatError(
            f"'{path}' is not an HDF5 file (or it is damaged): {err}; pass a file written "
            f"by ahbm.io.save_trial"
        ) from err
    st = SafeStore(f, path, max_bytes=max_bytes, follow_links=follow_links)
    try:
        with f:
            st.visit(f, "/")
            fmt = st.attr(f, "ahbm_format", "/", "str", required=False)
            trials = None
            if fmt == FORMAT_NAME:
                trials = st.child(f, "trials", "/trials", kind="group", required=False)
            if trials is None:
                raise FileFormatError(
                    f"'{path}' is an HDF5 file but not an ahbm trial store (no "
                    f"'ahbm_format={FORMAT_NAME}' attribute or no /trials group); write it with "
                    f"ahbm.io.save_trial"
                )
            version = st.attr(f, "ahbm_format_version", "/", "str", required=False)
            if str(version).split(".")[0] != FORMAT_VERSION.split(".")[0]:
                raise FileFormatError(
                    f"'{path}' uses ahbm store format version {version}; this ahbm reads "
                    f"version {FORMAT_VERSION.split('.')[0]}.x -- upgrade ahbm to read it"
                )
            yield st, trials
    except AhbmError:
        raise
    except H5_ERRORS as err:
        raise st.wrap(err) from err


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise DataError(
            f"Invalid trial name {name!r}: use a non-empty string without '/' (e.g. the file stem)"
        )
    return name


def save_trial(
    trial: Trial,
    path,
    *,
    name: str | None = None,
    overwrite: bool = False,
    result_units: Mapping | None = None,
    lock_timeout: float | None = None,
) -> str:
    """Save a Trial into an HDF5 trial store (several trials per file).

    Parameters
    ----------
    trial : Trial
        Every field is stored: points, labels, rates, residuals and mask,
        analogs, force plates, events, subject, the C3D parameter tree, and the
        computed results (arrays, nested dicts, numeric DataFrames).
    path : str or path-like
        The ``.h5`` file. Created if absent; if it exists it must be an ahbm
        store, and its other trials are kept.
    name : str or None, optional
        Name of the trial in the store; default the stem of ``trial.source``,
        or ``"trial"``.
    overwrite : bool, optional
        Replace a trial of the same name. Default False: raise DataError.
    result_units : mapping, optional
        ``{(key, subkey, ...): units}``: the ``units`` attribute written on
        the dataset ``results/key/subkey/...`` (a single key may be a str),
        e.g. ``{("gait_cycles", "Left", "KneeAngles"): "rad"}``.
    lock_timeout : float or None, optional
        Seconds to wait while another writer holds the store's lock (default
        600 s); then a DataError naming the store and its lock file.

    Returns
    -------
    str
        The name the trial was stored under.

    Raises
    ------
    DataError
        If `trial` is not a consistent Trial (:func:`ahbm.io.trial.check_trial`:
        labels per column, shapes, rates), the name is invalid or taken (and
        not `overwrite`), or a field holds a value the store cannot represent
        (the message names it), the folder cannot be written, or another
        writer held the store's lock for `lock_timeout` seconds.
    FileFormatError
        If `path` exists but is not an ahbm trial store, or holds links, loops
        or damaged items (it is left untouched).

    Notes
    -----
    Atomic: the new content is written to a temporary file in the same folder
    (a copy of the existing store when adding to one), flushed to disk, then
    renamed over `path` with ``os.replace``. On any failure or interruption
    (SIGTERM included) the temporary file is deleted and `path` is unchanged;
    temporaries of writers killed by SIGKILL are removed at the next write
    (see :func:`ahbm.io.cleanup_temporaries`). Before adding to an existing
    store, its whole structure is checked without reading data (hard links
    only, each object once, declared sizes consistent with the file), so that
    a damaged or crafted store is refused rather than extended. Large arrays
    are chunked along time (~256 KiB chunks) and gzip-compressed with shuffle.

    Concurrent writers of one store (threads, processes) take turns: the
    whole read-check-copy-write-rename runs under the lock file
    ``<name>.ahbm-lock`` beside the store (``fcntl.flock`` where the system
    has it, else a file created exclusively that names its owner), so no
    writer's trial is lost; the lock file is removed when released. Writers on
    several machines sharing a folder take turns only where that file system
    supports these locks.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.zeros((10, 2, 3)), point_labels=["A", "B"], point_rate=100.0)
    >>> save_trial(t, "store.h5", name="walk1")
    'walk1'
    """
    check_trial(trial)
    path = output_path(path)
    if result_units is not None and not isinstance(result_units, Mapping):
        raise DataError(
            "Expected `result_units` to be a mapping {result name or key tuple: unit}, got "
            f"{type(result_units).__name__}"
        )
    if name is None:
        name = Path(trial.source).stem if trial.source else "trial"
        name = name or "trial"
    _check_name(name)
    folder = path.parent
    if not folder.is_dir():
        raise DataError(f"Cannot write '{path}': folder '{folder}' does not exist")
    if lock_timeout is not None:
        lock_timeout = as_positive_float(lock_timeout, "lock_timeout", unit="s")
    with store_lock(path, timeout=lock_timeout):  # read, copy and replace as one step
        _save_locked(trial, path, name, overwrite=overwrite, result_units=result_units)
    return name


def _save_locked(trial: Trial, path: Path, name: str, *, overwrite: bool, result_units) -> None:
    """The body of :func:`save_trial`, run while holding the store's lock."""
    existing = path.exists()
    replace_existing_name = False
    root_attrs: dict[str, Any] = {}
    if existing:
        with _reading(path, max_bytes=max_read_bytes()) as (st, trials):
            st.scan(st.f)  # links, loops, sizes of everything that will be copied
            names = st.names(trials, "/trials")
            root_attrs = dict(st.f.attrs)
            if name in names:
                if not overwrite:
                    raise DataError(
                        f"Trial {name!r} already exists in '{path}'; pass overwrite=True to "
                        f"replace it or choose another name"
                    )
                replace_existing_name = True
    _write_store(
        trial,
        path,
        name,
        root_attrs=root_attrs,
        result_units=result_units,
        existing=existing,
        replace=replace_existing_name,
    )


def _write_store(
    trial: Trial, path: Path, name: str, *, root_attrs, result_units, existing, replace
) -> None:
    """Write `trial` as `name` into `path` (atomically), keeping the store's other trials."""
    h5py = _h5py()
    with atomic_path(path) as tmp:
        if existing and not replace:
            shutil.copyfile(path, tmp)
            with _copying(path, name):
                f = h5py.File(tmp, "r+")
            with f:
                _write_trial_group(f["trials"], name, trial)
                _write_result_units(f["trials"][name]["results"], result_units or {}, "results")
                f.attrs["ahbm_format_version"] = _max_version(
                    root_attrs.get("ahbm_format_version"), FORMAT_VERSION
                )
        else:
            from ahbm import __version__

            with h5py.File(tmp, "w", track_order=True) as f:
                for k, v in root_attrs.items():
                    f.attrs[k] = v
                f.attrs["ahbm_format"] = FORMAT_NAME
                f.attrs["ahbm_format_version"] = _max_version(
                    root_attrs.get("ahbm_format_version"), FORMAT_VERSION
                )
                f.attrs["ahbm_version"] = __version__
                trials = f.create_group("trials", track_order=True)
                if existing:  # (checked by save_trial)
                    with _copying(path, name), h5py.File(path, "r") as src:
                        for other in src["trials"]:
                            if other != name:
                                src.copy(src["trials"][other], trials, name=other)
                _write_trial_group(trials, name, trial)
                _write_result_units(trials[name]["results"], result_units or {}, "results")


@contextlib.contextmanager
def _copying(path: Path, name: str) -> Iterator[None]:
    """Turn a failure to open or copy the existing store into a FileFormatError naming it."""
    try:
        yield
    except AhbmError:
        raise
    except H5_ERRORS as err:
        raise FileFormatError(
            f"Cannot add trial {name!r} to HDF5 store '{path}': copying its content failed "
            f"({type(err).__name__}: {err}); the store is damaged (it was left untouched)"
        ) from err


def _max_version(a, b: str) -> str:
    if a is None:
        return b
    a = a.decode() if isinstance(a, bytes) else str(a)
    try:
        ta = tuple(int(x) for x in a.split("."))
        tb = tuple(int(x) for x in b.split("."))
    except ValueError:
        return b
    return a if ta >= tb else b


def list_trials(path, *, follow_links: bool = False) -> list[str]:
    """Names of the trials in an HDF5 trial store, in the order they were added.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_trial`.
    follow_links : bool, optional
        Accept a ``/trials`` group reached through a soft or external link
        (see :func:`load_trial`).

    Raises
    ------
    FileFormatError
        If `path` is missing, not HDF5, not an ahbm store, or damaged.

    Examples
    --------
    >>> import numpy as np
    >>> for name in ("walk1", "walk2"):
    ...     t = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=50.0)
    ...     _ = save_trial(t, "two.h5", name=name)
    >>> list_trials("two.h5")
    ['walk1', 'walk2']
    """
    path = _store_path(path)
    with _reading(path, max_bytes=max_read_bytes(), follow_links=follow_links) as (st, trials):
        return st.names(trials, "/trials")


def load_trial(
    path,
    name: str | None = None,
    *,
    isolate: bool = False,
    timeout: float | None = None,
    max_bytes: int | None = None,
    follow_links: bool = False,
) -> Trial:
    """Load one Trial from an HDF5 trial store.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_trial`.
    name : str or None, optional
        The trial to load; may be omitted when the store holds exactly one.
    isolate : bool, optional
        Read in a child process (for files from untrusted sources): damage
        that crashes or hangs libhdf5 itself, which no check in this process
        can catch, then becomes a FileFormatError naming the file. The child
        reads the trial with every check below and saves it to a private
        temporary store that this process then reads (no pickle); this costs a
        process start (~1 s) and a second write and read of the trial.
    timeout : float or None, optional
        With `isolate`: seconds before the child is killed and the file
        reported as hanging. Default 60 s plus 1 s per 5 MB of file.
    max_bytes : int or None, optional
        Cap on the memory the read may allocate, summed over every array it
        reads (bytes). Default :func:`ahbm.io.max_read_bytes` (2 GiB unless
        changed).
    follow_links : bool, optional
        Follow soft links, external links to other files, and datasets whose
        data live in other files. ahbm never writes any of them; by default
        they are refused with a FileFormatError, because an external link in
        a crafted store would read any file on the machine. Only for files you
        trust.

    Returns
    -------
    Trial
        Identical to the saved one (arrays bit for bit, NaN included).

    Raises
    ------
    FileFormatError
        If the file is missing, not HDF5, not an ahbm store, from an
        incompatible (newer major) format version, or damaged: an item is
        missing, a link or a hard-link loop, of the wrong type, or declares a
        shape that disagrees with the trial's counts (frames, labels,
        channels), with the space it occupies in the file, or with the memory
        cap. The message names the file and the object. With `isolate`, also
        when the reading process crashes or does not finish in time.
    DataError
        If `name` is not in the store or is omitted while the store holds
        several trials (the message lists them), or an option is invalid.

    Notes
    -----
    Items unknown to this version (added by a newer minor version) are ignored,
    as the forward-compatibility rule in ``docs/hdf5-schema.md`` prescribes.
    What the reader guarantees on untrusted files is written in
    ``docs/security.md``.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((5, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> _ = save_trial(t, "one.h5", name="walk1")
    >>> load_trial("one.h5", "walk1").points.shape
    (5, 1, 3)
    """
    path = _store_path(path)
    if name is not None and not isinstance(name, str):
        raise DataError(f"Expected `name` to be a str or None, got {type(name).__name__}")
    cap = _cap(max_bytes)
    if isolate:
        return _load_isolated(
            path, name, timeout=timeout, max_bytes=cap, follow_links=bool(follow_links)
        )
    if timeout is not None:
        raise DataError("`timeout` applies to isolate=True only; pass isolate=True or drop it")
    with _reading(path, max_bytes=cap, follow_links=follow_links) as (st, trials):
        name = _pick_trial(st, trials, path, name)
        where = f"/trials/{name}"
        g = st.child(trials, name, where, kind="group")
        trial = _read_trial_group(st, g, where)
        _read_extra(st, g, where, trial)
        return trial


def _load_isolated(path: Path, name, *, timeout, max_bytes: int, follow_links: bool) -> Trial:
    """:func:`load_trial` in a child process; the trial comes back through a fresh store."""
    if timeout is None:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        timeout = 60.0 + size / 5e6
    else:
        timeout = as_positive_float(timeout, "timeout", unit="s")
    folder = Path(tempfile.mkdtemp(prefix="ahbm-isolated-"))
    try:
        out = folder / "trial.h5"
        run_isolated(
            "ahbm.io.hdf5:_load_and_resave",
            {
                "path": str(path),
                "name": name,
                "out": str(out),
                "max_bytes": max_bytes,
                "follow_links": follow_links,
            },
            file=path,
            timeout=float(timeout),
        )
        return load_trial(out, "trial", max_bytes=max_bytes)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _load_and_resave(path: str, name, out: str, max_bytes: int, follow_links: bool) -> None:
    """Child of :func:`_load_isolated`: read with every check, write a fresh store."""
    trial = load_trial(path, name, max_bytes=max_bytes, follow_links=follow_links)
    _write_store(
        trial, Path(out), "trial", root_attrs={}, result_units=None, existing=False, replace=False
    )


def _pick_trial(st: SafeStore, trials, path: Path, name: str | None) -> str:
    """The trial name in an open store: `name`, or the only trial when None."""
    names = st.names(trials, "/trials")
    if name is None:
        if len(names) != 1:
            shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            raise DataError(f"'{path}' holds {len(names)} trials ({shown or 'none'}); pass `name`")
        name = names[0]
    if name not in names:
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise DataError(f"No trial {name!r} in '{path}'; available: {shown or 'none'}")
    return name


def load_result_units(path, name: str | None = None) -> dict:
    """The ``units`` attributes of a stored trial's results (see ``result_units=``).

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_trial`.
    name : str or None, optional
        The trial; may be omitted when the store holds exactly one.

    Returns
    -------
    dict
        ``{(key, subkey, ...): units}`` for every dataset under ``results/``
        that has a ``units`` attribute (the keys as in ``trial.results``).

    Raises
    ------
    FileFormatError, DataError
        As :func:`load_trial` (links, loops and damaged items are refused).

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((5, 1, 3)), point_labels=["A"], point_rate=100.0,
    ...           results={"knee": {"angle": np.zeros(5)}})
    >>> _ = save_trial(t, "units.h5", result_units={("knee", "angle"): "rad"})
    >>> load_result_units("units.h5")
    {('knee', 'angle'): 'rad'}
    """
    h5py = _h5py()
    path = _store_path(path)
    out = {}
    with _reading(path, max_bytes=max_read_bytes()) as (st, trials):
        name = _pick_trial(st, trials, path, name)
        g = st.child(trials, name, f"/trials/{name}", kind="group")
        top = f"/trials/{name}/results"
        stack = [(st.child(g, "results", top, kind="group"), top, ())]
        while stack:
            group, where, keys = stack.pop()
            if len(keys) >= MAX_DEPTH:
                raise st.error(where, f"is nested more than {MAX_DEPTH} levels deep")
            for link in reversed(st.names(group, where)):
                obj = st.child(group, link, f"{where}/{link}")
                sub = (*keys, _decode_name(link))
                if isinstance(obj, h5py.Group):
                    stack.append((obj, f"{where}/{link}", sub))
                else:
                    units = st.attr(obj, "units", f"{where}/{link}", "str", required=False)
                    if units is not None:
                        out[sub] = units
    return out
