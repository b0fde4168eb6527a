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
truncated file and never damages an existing one.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ahbm._files import atomic_path
from ahbm.errors import DataError, FileFormatError
from ahbm.io.opensim import OpenSimTable
from ahbm.io.trial import Event, ForcePlate, Trial

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


def _read_strings(ds) -> list[str]:
    return [str(s) for s in ds.asstr()[()].tolist()]


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


def _read_tree(obj, where: str):
    """Inverse of _write_tree."""
    h5py = _h5py()
    t = obj.attrs.get(_TYPE)
    if isinstance(t, bytes):
        t = t.decode()
    if t == "dict":
        out = {}
        for name, child in obj.items():
            key = _decode_name(name)
            out[key] = _read_tree(child, f"{where}/{key}")
        return out
    if t in ("list", "tuple"):
        items = [_read_tree(obj[str(i)], f"{where}[{i}]") for i in range(len(obj))]
        return items if t == "list" else tuple(items)
    if t == "opensim_table":
        return OpenSimTable(
            data=_read_tree(obj["data"], f"{where}.data"),
            **_read_tree(obj["fields"], where),
        )
    if t == "dataframe":
        import pandas as pd

        cols = obj["columns"].asstr()[()]
        names = [str(n) or None for n in obj.attrs["column_names"]]
        if cols.ndim == 2 and cols.shape[1] > 1:
            columns = pd.MultiIndex.from_tuples([tuple(r) for r in cols.tolist()], names=names)
        else:
            columns = pd.Index([str(c) for c in cols.reshape(-1).tolist()], name=names[0])
        iname = str(obj.attrs["index_name"]) or None
        df = pd.DataFrame(
            obj["values"][()], index=pd.Index(obj["index"][()], name=iname), columns=columns
        )
        df.attrs.update(_read_tree(obj["attrs"], f"{where}.attrs"))
        return df
    if not isinstance(obj, h5py.Dataset):
        raise FileFormatError(f"{where}: group with unknown type tag {t!r}")
    if t == "none":
        return None
    if t == "str":
        return str(obj.asstr()[()])
    if t == "str_bytes":
        return bytes(obj[()]).decode("utf-8", "surrogatepass")
    if t == "bytes":
        return bytes(obj[()])
    if t == "bool":
        return bool(obj[()])
    if t == "int":
        return int(obj[()])
    if t == "float":
        return float(obj[()])
    if t in ("list_str", "tuple_str"):
        items = _read_strings(obj)
        return items if t == "list_str" else tuple(items)
    if t == "npscalar":
        return obj[()]
    if t == "ndarray":
        return np.asarray(obj[()])
    if t == "str_array":
        return np.array(obj.asstr()[()].tolist(), dtype=str).reshape(obj.shape)
    # a dataset without tag (e.g. added by hand): return its data
    if obj.dtype.kind == "O" or h5py.check_string_dtype(obj.dtype) is not None:
        return obj.asstr()[()]
    return obj[()]


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


def _read_trial_group(g, where: str) -> Trial:
    a = g.attrs
    kwargs: dict[str, Any] = {
        "points": np.asarray(g["points"][()], dtype=np.float64),
        "point_labels": _read_strings(g["point_labels"]),
        "point_rate": float(a["point_rate"]),
        "point_units": str(a["point_units"]),
        "point_descriptions": _read_strings(g["point_descriptions"]),
        "point_residuals": g["point_residuals"][()] if "point_residuals" in g else None,
        "point_mask": g["point_mask"][()].astype(bool) if "point_mask" in g else None,
        "analogs": np.asarray(g["analogs"][()], dtype=np.float64),
        "analog_labels": _read_strings(g["analog_labels"]),
        "analog_units": _read_strings(g["analog_units"]),
        "analog_descriptions": _read_strings(g["analog_descriptions"]),
        "analog_rate": float(a["analog_rate"]),
        "first_frame": int(a["first_frame"]),
        "source": str(a["source"]),
    }
    plates = []
    fpg = g["force_plates"]
    for i in range(int(fpg.attrs.get("count", len(fpg)))):
        pg = fpg[str(i)]
        plates.append(
            ForcePlate(
                **{k: np.asarray(pg[k][()], dtype=np.float64) for k in _PLATE_ARRAYS},
                rate=float(pg.attrs["rate"]),
                plate_type=int(pg.attrs["plate_type"]),
            )
        )
    ev = g["events"]
    events = [
        Event(label=lab, time=float(t), context=c, description=d)
        for lab, t, c, d in zip(
            _read_strings(ev["label"]),
            ev["time"][()],
            _read_strings(ev["context"]),
            _read_strings(ev["description"]),
            strict=True,
        )
    ]
    trial = Trial(
        **kwargs,
        force_plates=plates,
        events=events,
        subject=_read_tree(g["subject"], f"{where}/subject"),
        parameters=_read_tree(g["parameters"], f"{where}/parameters"),
        results=_read_tree(g["results"], f"{where}/results"),
    )
    if "extra" in g:
        names = {f.name for f in dataclasses.fields(trial)}
        for k, v in _read_tree(g["extra"], f"{where}/extra").items():
            if k in names:  # fields unknown to this version are ignored
                setattr(trial, k, v)
    return trial


# ----------------------------------------------------------------------------- files


def _open_store(path: Path, mode: str = "r"):
    """Open an existing ahbm store, raising FileFormatError if it is not one."""
    h5py = _h5py()
    if not path.exists():
        raise FileFormatError(f"HDF5 trial store '{path}' does not exist")
    if not path.is_file():
        raise FileFormatError(f"'{path}' is not a file")
    try:
        f = h5py.File(path, mode)
    except OSError as err:
        raise FileFormatError(
            f"'{path}' is not an HDF5 file (or it is damaged): {err}; pass a file written "
            f"by ahbm.io.save_trial"
        ) from err
    try:
        fmt = f.attrs.get("ahbm_format")
        version = f.attrs.get("ahbm_format_version")
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if isinstance(version, bytes):
            version = version.decode()
        if fmt != FORMAT_NAME or "trials" not in f:
            raise FileFormatError(
                f"'{path}' is an HDF5 file but not an ahbm trial store (no "
                f"'ahbm_format={FORMAT_NAME}' attribute or no /trials group); write it with "
                f"ahbm.io.save_trial"
            )
        major = str(version).split(".")[0]
        if major != FORMAT_VERSION.split(".")[0]:
            raise FileFormatError(
                f"'{path}' uses ahbm store format version {version}; this ahbm reads "
                f"version {FORMAT_VERSION.split('.')[0]}.x -- upgrade ahbm to read it"
            )
    except BaseException:
        f.close()
        raise
    return f


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

    Returns
    -------
    str
        The name the trial was stored under.

    Raises
    ------
    DataError
        If the name is invalid or taken (and not `overwrite`), or a field holds
        a value the store cannot represent (the message names it).
    FileFormatError
        If `path` exists but is not an ahbm trial store (it is left untouched).

    Notes
    -----
    Atomic: the new content is written to a temporary file in the same folder
    (a copy of the existing store when adding to one), flushed to disk, then
    renamed over `path` with ``os.replace``. On any failure or interruption the
    temporary file is deleted and `path` is unchanged. Large arrays are
    chunked along time (~256 KiB chunks) and gzip-compressed with shuffle.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.zeros((10, 2, 3)), point_labels=["A", "B"], point_rate=100.0)
    >>> save_trial(t, "store.h5", name="walk1")
    'walk1'
    """
    h5py = _h5py()
    if not isinstance(trial, Trial):
        raise DataError(f"Expected `trial` to be a Trial, got {type(trial).__name__}")
    path = Path(path)
    if name is None:
        name = Path(trial.source).stem if trial.source else "trial"
        name = name or "trial"
    _check_name(name)
    folder = path.parent
    if not folder.is_dir():
        raise DataError(f"Cannot write '{path}': folder '{folder}' does not exist")

    existing = path.exists()
    replace_existing_name = False
    root_attrs: dict[str, Any] = {}
    if existing:
        with _open_store(path) as f:
            names = list(f["trials"].keys())
            root_attrs = dict(f.attrs)
            if name in names:
                if not overwrite:
                    raise DataError(
                        f"Trial {name!r} already exists in '{path}'; pass overwrite=True to "
                        f"replace it or choose another name"
                    )
                replace_existing_name = True

    with atomic_path(path) as tmp:
        if existing and not replace_existing_name:
            shutil.copyfile(path, tmp)
            with h5py.File(tmp, "r+") as f:
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
                if existing:
                    with _open_store(path) as src:
                        for other in src["trials"]:
                            if other != name:
                                src.copy(src["trials"][other], trials, name=other)
                _write_trial_group(trials, name, trial)
                _write_result_units(trials[name]["results"], result_units or {}, "results")
    return name


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


def list_trials(path) -> list[str]:
    """Names of the trials in an HDF5 trial store, in the order they were added.

    Raises
    ------
    FileFormatError
        If `path` is missing, not HDF5, or not an ahbm store.

    Examples
    --------
    >>> import numpy as np
    >>> for name in ("walk1", "walk2"):
    ...     _ = save_trial(Trial(points=np.zeros((2, 1, 3)), point_labels=["A"]), "two.h5",
    ...                    name=name)
    >>> list_trials("two.h5")
    ['walk1', 'walk2']
    """
    path = Path(path)
    with _open_store(path) as f:
        return [str(n) for n in f["trials"].keys()]


def load_trial(path, name: str | None = None) -> Trial:
    """Load one Trial from an HDF5 trial store.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_trial`.
    name : str or None, optional
        The trial to load; may be omitted when the store holds exactly one.

    Returns
    -------
    Trial
        Identical to the saved one (arrays bit for bit, NaN included).

    Raises
    ------
    FileFormatError
        If the file is missing, not HDF5, not an ahbm store, from an
        incompatible (newer major) format version, or damaged.
    DataError
        If `name` is not in the store or is omitted while the store holds
        several trials (the message lists them).

    Notes
    -----
    Items unknown to this version (added by a newer minor version) are ignored,
    as the forward-compatibility rule in ``docs/hdf5-schema.md`` prescribes.

    Examples
    --------
    >>> import numpy as np
    >>> t = Trial(points=np.ones((5, 1, 3)), point_labels=["A"], point_rate=100.0)
    >>> _ = save_trial(t, "one.h5", name="walk1")
    >>> load_trial("one.h5", "walk1").points.shape
    (5, 1, 3)
    """
    path = Path(path)
    with _open_store(path) as f:
        name = _pick_trial(f, path, name)
        g = f["trials"][name]
        try:
            return _read_trial_group(g, f"{path}:/trials/{name}")
        except FileFormatError:
            raise
        except (KeyError, ValueError, TypeError, OSError) as err:
            raise FileFormatError(
                f"Trial {name!r} in '{path}' is damaged or incomplete: {err}"
            ) from err


def _pick_trial(f, path: Path, name: str | None) -> str:
    """The trial name in an open store: `name`, or the only trial when None."""
    names = [str(n) for n in f["trials"].keys()]
    if name is None:
        if len(names) != 1:
            raise DataError(
                f"'{path}' holds {len(names)} trials ({', '.join(names) or 'none'}); pass `name`"
            )
        name = names[0]
    if name not in names:
        raise DataError(f"No trial {name!r} in '{path}'; available: {', '.join(names) or 'none'}")
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
        As :func:`load_trial`.

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
    path = Path(path)
    out = {}
    with _open_store(path) as f:
        results = f["trials"][_pick_trial(f, path, name)]["results"]

        def visit(link, obj):
            if isinstance(obj, h5py.Dataset) and "units" in obj.attrs:
                keys = tuple(_decode_name(part) for part in link.split("/"))
                out[keys] = str(obj.attrs["units"])

        results.visititems(visit)
    return out
