"""Generic trees in the HDF5 trial store: typed groups and datasets (internal).

The ``subject/``, ``parameters/``, ``results/`` and ``extra/`` items of a
trial hold nested dicts, lists, arrays, strings, numbers and DataFrames;
:func:`_write_tree` writes them with their type in an attribute and
:func:`_read_tree` reads them back through the checks of
:mod:`ahbm.io._h5safe`. Names are percent-escaped (``/`` and ``.`` cannot
appear in an HDF5 name). The layout is in ``docs/hdf5-schema.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ahbm.errors import DataError
from ahbm.io._h5safe import MAX_DEPTH, SafeStore
from ahbm.io.opensim_table import OpenSimTable

__all__ = []


_CHUNK_BYTES = 1 << 18  # ~256 KiB chunks along time
_COMPRESS_MIN_BYTES = 4096
_TYPE = "ahbm_type"
_KEY = "ahbm_key"


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
