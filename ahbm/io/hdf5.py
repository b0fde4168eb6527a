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
from ahbm.io._h5tree import _decode_name, _h5py
from ahbm.io._h5trial import _read_extra, _read_trial_group, _write_result_units, _write_trial_group
from ahbm.io.trial import Trial, check_trial

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
                        f"Trial {name!r} already exists in '{path}'; pass overwrite=True "
                        f"(--overwrite on the command line) to replace it, or choose another name"
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
