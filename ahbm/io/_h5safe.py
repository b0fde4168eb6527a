"""Checked access to an HDF5 file that may be damaged or hostile (internal).

:class:`SafeStore` wraps an open ``h5py.File`` and is the only way the trial
store reads one. Every access is checked before HDF5 or numpy allocates or
follows anything, and every problem is a :class:`~ahbm.errors.FileFormatError`
that names the file and the object:

- links: only hard links are followed; soft and external links (and datasets
  whose data live in other files: external raw storage, virtual datasets) are
  refused unless the caller opts in with ``follow_links=True``; a dangling
  link is an error;
- each object is visited at most once (by its address in its file), so a
  hard-link loop, or an object shared to make the tree explode, is an error
  instead of an unbounded recursion; nesting is limited to
  :data:`MAX_DEPTH` levels;
- datasets: the dtype must be one the store writes (numbers, bool, strings);
  the declared shape is checked against what the caller expects (derived from
  the file's own metadata: frame, label and channel counts), against the
  bytes the dataset really occupies in the file (no more than
  :data:`MAX_EXPANSION` times, the most gzip can compress, plus 1 MiB), and
  against the memory cap of the whole read (``max_bytes``), all *before* the
  data are read;
- attributes: single values of the expected kind (an array where a value is
  expected is an error), no more than 64 KiB each;
- global heaps: :func:`check_global_heaps` refuses, before libhdf5 opens the
  file, damage on which libhdf5 itself would loop forever.

:func:`store_lock` serializes the writers of one store (across processes):
each read-copy-modify-rename of :func:`ahbm.io.hdf5.save_trial` runs under it.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ahbm._internal.files import _host_tag, _owner_alive
from ahbm._internal.output import os_error
from ahbm.errors import DataError, FileFormatError

__all__ = [
    "SafeStore",
    "MAX_DEPTH",
    "MAX_EXPANSION",
    "H5_ERRORS",
    "check_global_heaps",
    "store_lock",
    "lock_path",
    "LOCK_TIMEOUT",
]

#: Deepest nesting of groups read from a store (ahbm writes < 20 levels).
MAX_DEPTH = 64
#: A dataset may declare at most this many times the bytes it occupies in the
#: file, plus :data:`_SLACK` (deflate cannot compress more than ~1032:1).
MAX_EXPANSION = 1100
_SLACK = 1 << 20
_ATTR_MAX_BYTES = 1 << 16
_STR_COST = 64  # bytes counted per string read (the Python object)

#: Exceptions of h5py/numpy on a damaged file, turned into FileFormatError
#: (with the object being read) as the last resort behind the explicit checks.
H5_ERRORS = (KeyError, ValueError, TypeError, OSError, RuntimeError, IndexError, OverflowError)


def _h5py():
    import h5py

    return h5py


def _fmt_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


class SafeStore:
    """Checked, loop-free reading of an open HDF5 file.

    Parameters
    ----------
    f : h5py.File
        The open file.
    path : pathlib.Path
        Its path (named in every message).
    max_bytes : int
        Memory cap for all data this object reads (bytes).
    follow_links : bool
        Follow soft and external links (and read datasets stored in other files).
    """

    def __init__(self, f, path: Path, *, max_bytes: int, follow_links: bool = False):
        self.f = f
        self.path = path
        self.max_bytes = int(max_bytes)
        self.follow_links = bool(follow_links)
        self.used = 0
        self.seen: set = set()
        self.current = "/"

    # ------------------------------------------------------------------ messages

    def error(self, where: str, message: str) -> FileFormatError:
        """A FileFormatError naming the file and the object `where`."""
        return FileFormatError(f"HDF5 store '{self.path}': {where} {message}")

    def wrap(self, err: BaseException) -> FileFormatError:
        """The last-resort error for a raw h5py/numpy exception at the current object."""
        return self.error(
            self.current, f"cannot be read (the file is damaged): {type(err).__name__}: {err}"
        )

    # ------------------------------------------------------------------ links

    def _key(self, obj):
        h5py = _h5py()
        info = h5py.h5o.get_info(obj.id)
        return (info.fileno, info.addr)

    def child(self, parent, name: str, where: str, *, kind: str | None = None, required=True):
        """``parent[name]`` after checking the link; None if absent and not `required`.

        `where` is the path of the child (for messages); `kind` is "group" or
        "dataset" (None: either).
        """
        h5py = _h5py()
        self.current = where
        if "/" in name or not name:
            raise self.error(where, "has an invalid link name (empty or with '/')")
        link = parent.get(name, getlink=True)
        if link is None:
            if required:
                raise self.error(where, "is missing; the store is damaged or incomplete")
            return None
        if isinstance(link, h5py.SoftLink):
            if not self.follow_links:
                raise self.error(
                    where,
                    f"is a soft link to {link.path!r}; ahbm stores contain no links, so the "
                    "file was altered (pass follow_links=True to follow links in a file you "
                    "trust)",
                )
        elif isinstance(link, h5py.ExternalLink):
            if not self.follow_links:
                raise self.error(
                    where,
                    f"is an external link to {link.path!r} in file {link.filename!r}; links "
                    "to other files are not followed (pass follow_links=True to follow them "
                    "in a file you trust)",
                )
        elif not isinstance(link, h5py.HardLink):
            raise self.error(where, f"is a link of an unknown kind ({type(link).__name__})")
        try:
            obj = parent[name]
        except (KeyError, ValueError, OSError, RuntimeError) as err:
            if isinstance(link, h5py.HardLink):
                raise self.error(where, f"cannot be opened (the file is damaged): {err}") from err
            raise self.error(where, f"is a dangling link: {err}") from err
        if kind == "group" and not isinstance(obj, h5py.Group):
            raise self.error(where, f"must be a group, found {type(obj).__name__}")
        if kind == "dataset" and not isinstance(obj, h5py.Dataset):
            raise self.error(where, f"must be a dataset, found {type(obj).__name__}")
        if not isinstance(obj, h5py.Group | h5py.Dataset):
            raise self.error(where, f"is a {type(obj).__name__}, not a group or dataset")
        self.visit(obj, where)
        return obj

    def visit(self, obj, where: str) -> None:
        """Record a visit of `obj`; a second visit is a hard-link loop or a shared object."""
        key = self._key(obj)
        if key in self.seen:
            raise self.error(
                where,
                "is reached a second time (a hard-link loop, or an object linked from two "
                "places); ahbm stores link every object once",
            )
        self.seen.add(key)

    def names(self, group, where: str) -> list[str]:
        """The link names of `group`, in order."""
        self.current = where
        return [str(n) for n in group.keys()]

    # ------------------------------------------------------------------ attributes

    def attr(self, obj, key: str, where: str, kind: str, *, default=None, required=True):
        """A single-valued attribute of kind "str", "float", "int" or "bool"."""
        h5py = _h5py()
        self.current = f"{where} attribute {key!r}"
        try:
            aid = obj.attrs.get_id(key)
        except KeyError:
            if required:
                raise self.error(where, f"has no attribute {key!r}; the store is damaged") from None
            return default
        shape, dtype = aid.shape, aid.dtype
        if shape is None:
            raise self.error(where, f"attribute {key!r} is empty; expected a single {kind}")
        if math.prod(shape) != 1 or len(shape) > 1:
            raise self.error(
                where, f"attribute {key!r} is an array of shape {shape}; expected a single {kind}"
            )
        is_str = h5py.check_string_dtype(dtype) is not None
        ok = {
            "str": is_str,
            "float": dtype.kind in "fiu" and not is_str,
            "int": dtype.kind in "iu" or (dtype.kind == "f" and not is_str),
            "bool": dtype.kind in "biu" and not is_str,
        }[kind]
        if not ok or dtype.fields is not None or dtype.subdtype is not None:
            raise self.error(where, f"attribute {key!r} has type {dtype}; expected a {kind}")
        value = obj.attrs[key]
        value = value.reshape(()) if isinstance(value, np.ndarray) else value
        if kind == "str":
            value = value.item() if isinstance(value, np.ndarray) else value
            return value.decode("utf-8") if isinstance(value, bytes) else str(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            return bool(value)
        v = float(value)
        if not (math.isfinite(v) and v == int(v) and abs(v) < 2**63):
            raise self.error(where, f"attribute {key!r} is {v!r}; expected an integer")
        return int(v)

    def str_array_attr(self, obj, key: str, where: str, *, max_items: int) -> list[str]:
        """A 1-D string attribute of at most `max_items` entries."""
        h5py = _h5py()
        self.current = f"{where} attribute {key!r}"
        if key not in obj.attrs:
            raise self.error(where, f"has no attribute {key!r}; the store is damaged")
        aid = obj.attrs.get_id(key)
        shape, dtype = aid.shape, aid.dtype
        if shape is None or len(shape) != 1 or shape[0] > max_items:
            raise self.error(
                where, f"attribute {key!r} has shape {shape}; expected at most {max_items} strings"
            )
        if h5py.check_string_dtype(dtype) is None:
            raise self.error(where, f"attribute {key!r} has type {dtype}; expected strings")
        self.check_attr_size(aid, where, key)
        values = np.asarray(obj.attrs[key]).reshape(-1)
        return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values.tolist()]

    def check_attr_size(self, aid, where: str, key: str) -> None:
        """Refuse an attribute larger than 64 KiB (ahbm writes small attributes)."""
        if aid.get_storage_size() > _ATTR_MAX_BYTES:
            raise self.error(
                where,
                f"attribute {key!r} holds {_fmt_bytes(aid.get_storage_size())}; ahbm "
                f"attributes are under {_fmt_bytes(_ATTR_MAX_BYTES)}",
            )

    def check_all_attrs(self, obj, where: str) -> None:
        """Check that every attribute of `obj` is small and of a type ahbm writes."""
        h5py = _h5py()
        for key in obj.attrs:
            self.current = f"{where} attribute {key!r}"
            aid = obj.attrs.get_id(key)
            self.check_attr_size(aid, where, key)
            dt = aid.dtype
            if h5py.check_string_dtype(dt) is None and (
                dt.kind not in "biufc" or dt.fields is not None or dt.subdtype is not None
            ):
                raise self.error(
                    where, f"attribute {key!r} has the type {dt}, which ahbm never writes"
                )

    # ------------------------------------------------------------------ datasets

    def dtype_kind(self, ds, where: str) -> str:
        """ "str" for string datasets, else the numpy kind; refuses other types."""
        h5py = _h5py()
        dt = ds.dtype
        if dt.kind == "S" and dt.subdtype is None:
            return "S"  # fixed-length bytes (also readable as text)
        if h5py.check_string_dtype(dt) is not None:
            return "str"
        bad = (
            dt.kind in "OVMmU"
            or dt.subdtype is not None
            or (dt.fields is not None)
            or h5py.check_vlen_dtype(dt) is not None
            or h5py.check_ref_dtype(dt) is not None
            or h5py.check_opaque_dtype(dt)
        )
        if bad:
            raise self.error(
                where,
                f"has the data type {dt}, which ahbm never writes (numbers, bool and strings only)",
            )
        return dt.kind

    def check_dataset(self, ds, where: str, *, kinds: str, ndim=None, shape=None) -> tuple:
        """Check a dataset before reading it; return its shape.

        `kinds` holds the accepted numpy kinds ("f", "iu", "b", ...) and "s" for
        strings; `shape` may contain None for any length.
        """
        self.current = where
        if ds.shape is None:
            raise self.error(where, "is an empty (null) dataset; expected data")
        dshape = tuple(int(n) for n in ds.shape)
        if ds.is_virtual or ds.external:
            if not self.follow_links:
                what = "a virtual dataset" if ds.is_virtual else "stored in external raw files"
                raise self.error(
                    where,
                    f"is {what} (its data live in other files); refused (pass "
                    "follow_links=True to read it from a file you trust)",
                )
        kind = self.dtype_kind(ds, where)
        if not (kind in kinds or (kind in ("str", "S") and "s" in kinds)):
            raise self.error(where, f"has the data type {ds.dtype}; expected {_kind_names(kinds)}")
        if ndim is not None and len(dshape) != ndim:
            raise self.error(where, f"has shape {dshape}; expected {ndim} dimensions")
        if shape is not None and (
            len(dshape) != len(shape)
            or any(s is not None and s != d for s, d in zip(shape, dshape, strict=True))
        ):
            want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ")"
            raise self.error(where, f"has shape {dshape}; expected {want}")
        return dshape

    def charge(self, ds, where: str, dshape: tuple, out_itemsize: int | None = None) -> None:
        """Check the declared size of `ds` against its storage and the cap; count it."""
        n = math.prod(dshape)
        itemsize = ds.dtype.itemsize
        declared = n * itemsize
        if not (ds.is_virtual or ds.external):
            stored = ds.id.get_storage_size()
            if declared > MAX_EXPANSION * stored + _SLACK:
                raise self.error(
                    where,
                    f"declares shape {dshape} ({_fmt_bytes(declared)}) but occupies only "
                    f"{_fmt_bytes(stored)} in the file, more than any compression can expand; "
                    "the file is damaged or crafted",
                )
        cost = n * (_STR_COST if ds.dtype.kind == "O" else max(itemsize, out_itemsize or 0))
        if self.used + cost > self.max_bytes:
            raise self.error(
                where,
                f"has shape {dshape}: reading it would take the read to "
                f"{_fmt_bytes(self.used + cost)}, over the memory cap of "
                f"{_fmt_bytes(self.max_bytes)}; if the file is genuine, raise the cap with "
                "max_bytes= or ahbm.io.set_max_read_bytes(n)",
            )
        self.used += cost

    def array(self, ds, where: str, *, kinds="f", ndim=None, shape=None, dtype=None):
        """The data of a checked numeric dataset (cast to `dtype` if given)."""
        dshape = self.check_dataset(ds, where, kinds=kinds, ndim=ndim, shape=shape)
        out = np.dtype(dtype).itemsize if dtype is not None else None
        self.charge(ds, where, dshape, out)
        data = ds[()]
        return np.asarray(data, dtype=dtype) if dtype is not None else data

    def strings(self, ds, where: str, *, n=None, allow_empty=False) -> list[str]:
        """A 1-D string dataset as a list (of `n` items, or 0 if `allow_empty`)."""
        dshape = self.check_dataset(ds, where, kinds="s", ndim=1)
        if n is not None and dshape[0] != n and not (allow_empty and dshape[0] == 0):
            also = " (or 0)" if allow_empty else ""
            raise self.error(where, f"holds {dshape[0]} strings; expected {n}{also}")
        self.charge(ds, where, dshape, None)
        return [str(s) for s in ds.asstr()[()].tolist()]

    def scan(self, root, where: str = "/") -> None:
        """Walk the whole tree under `root` without reading data.

        Every link must be a hard link (unless `follow_links`), every object is
        reached once, nesting is bounded, every dataset passes the layout, type
        and size checks and every attribute is small.
        """
        h5py = _h5py()
        self.seen = set()  # a walk of its own
        self.visit(root, where)
        self.check_all_attrs(root, where)
        stack = [(root, where, 0)]
        while stack:
            group, gwhere, depth = stack.pop()
            if depth >= MAX_DEPTH:
                raise self.error(gwhere, f"is nested more than {MAX_DEPTH} levels deep")
            for name in self.names(group, gwhere):
                cwhere = f"{gwhere.rstrip('/')}/{name}"
                obj = self.child(group, name, cwhere)
                self.check_all_attrs(obj, cwhere)
                if isinstance(obj, h5py.Group):
                    stack.append((obj, cwhere, depth + 1))
                elif obj.shape is not None:
                    dshape = self.check_dataset(obj, cwhere, kinds="biufcSs")
                    self._charge_layout(obj, cwhere, dshape)

    def _charge_layout(self, ds, where: str, dshape: tuple) -> None:
        """The expansion check of ``charge`` without counting memory."""
        used = self.used
        cap, self.max_bytes = self.max_bytes, 2**63
        try:
            self.charge(ds, where, dshape, None)
        finally:
            self.used, self.max_bytes = used, cap


def check_global_heaps(path: Path) -> None:
    """Refuse a file whose global heap collections would make libhdf5 loop forever.

    Variable-length strings live in global heap collections (signature
    ``GCOL``). libhdf5 walks a collection's entries from the start, each entry
    by its declared size; an entry that declares size 0 (or whose size wraps
    around) makes that walk loop forever inside the library, where no check of
    the reading process can interrupt it. This walks every collection of the
    file the way libhdf5 does, before libhdf5 reads it.

    Raises
    ------
    FileFormatError
        Naming the file, the byte offset of the collection and of the entry.
    """
    import mmap

    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 16:
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            lengths = _size_of_lengths(mm)
            pos = mm.find(b"GCOL")
            while pos != -1:
                _check_collection(mm, pos, lengths, size, path)
                pos = mm.find(b"GCOL", pos + 4)


def _size_of_lengths(mm) -> int:
    """The superblock's "size of lengths" (bytes), 8 if the superblock is not at byte 0."""
    if mm[:8] != b"\x89HDF\r\n\x1a\n":
        return 8
    version = mm[8]
    value = mm[14] if version in (0, 1) else mm[10]
    return value if value in (2, 4, 8) else 8


def _check_collection(mm, pos: int, lengths: int, size: int, path: Path) -> None:
    header = 8 + lengths  # signature, version, 3 reserved bytes, collection size
    entry_header = 8 + lengths  # index, reference count, 4 reserved bytes, object size
    if pos + header > size or mm[pos + 4] != 1:
        return  # not a collection libhdf5 would walk (it refuses other versions)
    total = int.from_bytes(mm[pos + 8 : pos + header], "little")
    end = pos + total
    if total < header or end > size:
        return  # libhdf5 reports a read error for a collection beyond the file's end
    p = pos + header
    mask = (1 << 64) - 1
    while p < end:
        if p + entry_header > end:
            return  # the tail is free space too small for an entry
        index = int.from_bytes(mm[p : p + 2], "little")
        obj_size = int.from_bytes(mm[p + 8 : p + entry_header], "little")
        aligned = ((obj_size + 7) & mask) // 8 * 8
        need = (entry_header + aligned) & mask if index > 0 else obj_size
        if need == 0 or need > end - p:
            what = "a size of 0" if need == 0 else f"{obj_size} bytes, past the collection's end"
            raise FileFormatError(
                f"HDF5 store '{path}': the global heap collection at byte {pos} is damaged "
                f"(its entry at byte {p} declares {what}); libhdf5 would loop forever or read "
                "outside the collection on it"
            )
        p += need


def _kind_names(kinds: str) -> str:
    names = {
        "f": "floats",
        "i": "integers",
        "u": "integers",
        "b": "booleans",
        "c": "complex numbers",
        "s": "strings",
        "S": "byte strings",
    }
    return " or ".join(dict.fromkeys(names[k] for k in kinds))


# ----------------------------------------------------------------------------- writer lock

#: Seconds a writer waits for a store's lock held by another writer (``lock_timeout=``).
LOCK_TIMEOUT = 600.0
#: Appended to the store's file name to name its lock file (``walk.h5.ahbm-lock``).
LOCK_SUFFIX = ".ahbm-lock"
#: Use ``fcntl.flock`` where it exists (else the O_EXCL lock file).
_USE_FLOCK = True
#: Seconds after which an O_EXCL lock file that names no owner counts as left behind.
_STALE_UNNAMED = 30.0
_OWNER_RE = re.compile(r"host (?P<host>[0-9a-f]{8}) pid (?P<pid>[0-9]+)")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def lock_path(path: Path) -> Path:
    """The lock file of the store `path`: ``<name>.ahbm-lock`` in the same folder."""
    return path.with_name(path.name + LOCK_SUFFIX)


@contextlib.contextmanager
def store_lock(path: Path, *, timeout: float | None = None, argname: str = "path") -> Iterator:
    """Hold the lock of the store `path` (one writer at a time, across processes).

    The lock is the file ``<name>.ahbm-lock`` beside the store. With
    ``fcntl.flock`` (POSIX) the operating system releases it when its holder
    ends, however it ends; the holder removes the file when done, and a waiter
    that locked a file removed meanwhile tries again on the new one. Where
    ``flock`` is missing or the file system refuses it, the lock file is
    created with ``O_CREAT | O_EXCL`` and holds its owner (machine and process
    id); one whose owner ran on this machine and no longer runs is removed.

    Raises
    ------
    DataError
        If the lock is not obtained within `timeout` seconds (default
        :data:`LOCK_TIMEOUT`), naming the store and the lock file, or if the lock
        file cannot be created (a folder without write permission).
    """
    lock = lock_path(path)
    timeout = LOCK_TIMEOUT if timeout is None else float(timeout)
    deadline = time.monotonic() + timeout
    release = None
    if _USE_FLOCK:
        with contextlib.suppress(ImportError):
            import fcntl

            release = _flock_acquire(fcntl, lock, path, deadline, timeout, argname)
    if release is None:
        release = _excl_acquire(lock, path, deadline, timeout, argname)
    try:
        yield lock
    finally:
        release()


def _owner_text() -> str:
    return f"ahbm store lock: host {_host_tag()} pid {os.getpid()}\n"


def _lock_error(err: OSError, lock: Path, argname: str):
    return os_error(err, lock, "create the lock file", argname=argname)


def _open_lock(lock: Path, argname: str) -> tuple[int, bool] | None:
    """``(fd, created)`` of the lock file, created if absent; None if it vanished meanwhile."""
    flags = os.O_RDWR | os.O_CREAT | _NOFOLLOW
    try:
        return os.open(lock, flags | os.O_EXCL, 0o666), True
    except FileExistsError:
        pass
    except OSError as err:
        raise _lock_error(err, lock, argname) from err
    try:
        fd = os.open(lock, os.O_RDWR | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except PermissionError:  # another user's lock file: locking needs no write access
        try:
            fd = os.open(lock, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise _lock_error(err, lock, argname) from err
    except OSError as err:
        raise _lock_error(err, lock, argname) from err
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileFormatError(
            f"The lock file '{lock}' of an HDF5 store is not a regular file; remove it"
        )
    return fd, False


def _same_file(fd: int, lock: Path) -> bool:
    try:
        st = os.stat(lock, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (st.st_dev, st.st_ino)


def _flock_acquire(fcntl, lock: Path, store: Path, deadline: float, timeout: float, argname):
    """Lock `lock` with flock; the release function, or None if flock does not work here."""
    delay = 0.005
    while True:
        opened = _open_lock(lock, argname)
        if opened is None:
            continue  # removed by its holder between our two opens
        fd, created = opened
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                if created:  # flock unsupported on this file system: the other method
                    with contextlib.suppress(OSError):
                        os.unlink(lock)
                return None
        except BaseException:
            os.close(fd)
            raise
        else:
            if _same_file(fd, lock):
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                    os.write(fd, _owner_text().encode())
                return lambda: _flock_release(fd, lock)
            os.close(fd)  # the holder removed this file as it finished: lock the new one
            continue
        if time.monotonic() >= deadline:
            raise _timeout(store, lock, timeout, breakable=False)
        time.sleep(delay)
        delay = min(2 * delay, 0.1)


def _flock_release(fd: int, lock: Path) -> None:
    try:
        with contextlib.suppress(OSError):
            os.unlink(lock)  # while still locked: a waiter on this file then tries again
    finally:
        os.close(fd)


def _excl_acquire(lock: Path, store: Path, deadline: float, timeout: float, argname):
    """Create `lock` exclusively (waiting for its holder); the release function."""
    delay = 0.005
    while True:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
        except FileExistsError:
            if _break_stale(lock):
                continue
        except OSError as err:
            raise _lock_error(err, lock, argname) from err
        else:
            try:
                os.write(fd, _owner_text().encode())
                st = os.fstat(fd)
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(lock)
                raise
            os.close(fd)
            return lambda: _excl_release(lock, (st.st_dev, st.st_ino))
        if time.monotonic() >= deadline:
            raise _timeout(store, lock, timeout, breakable=True)
        time.sleep(delay)
        delay = min(2 * delay, 0.1)


def _excl_release(lock: Path, ident: tuple) -> None:
    with contextlib.suppress(OSError):
        st = os.stat(lock, follow_symlinks=False)
        if (st.st_dev, st.st_ino) == ident:
            os.unlink(lock)


def _read_owner(lock: Path) -> tuple[str, int] | None:
    try:
        fd = os.open(lock, os.O_RDONLY | _NOFOLLOW)
        try:
            text = os.read(fd, 256).decode("ascii", "replace")
        finally:
            os.close(fd)
    except OSError:
        return None
    m = _OWNER_RE.search(text)
    return (m["host"], int(m["pid"])) if m else None


def _pid_alive(pid: int, written: float) -> bool:
    """Whether process `pid` of this machine may still run (True when in doubt)."""
    if os.name == "nt":  # os.kill(pid, 0) would signal it there
        try:
            import ctypes

            k32 = ctypes.WinDLL("kernel32", use_last_error=True)
            handle = k32.OpenProcess(0x1000 | 0x100000, False, pid)
            if not handle:
                return ctypes.get_last_error() != 87  # ERROR_INVALID_PARAMETER: no such process
            try:
                return k32.WaitForSingleObject(handle, 0) == 0x102  # WAIT_TIMEOUT: running
            finally:
                k32.CloseHandle(handle)
        except Exception:
            return True
    return _owner_alive(pid, written)


def _break_stale(lock: Path) -> bool:
    """Remove `lock` if its writer is gone; True if the caller should try again at once."""
    try:
        before = os.stat(lock, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    owner = _read_owner(lock)
    if owner is None:
        stale = time.time() - before.st_mtime > _STALE_UNNAMED
    else:
        stale = owner[0] == _host_tag() and not _pid_alive(owner[1], before.st_mtime)
    if not stale:
        return False
    aside = lock.with_name(f"{lock.name}.stale-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(lock, aside)  # atomic: of several waiters, one moves it
    except OSError:
        return True
    try:
        moved = os.stat(aside, follow_symlinks=False)
        if (moved.st_ino, moved.st_mtime_ns) != (before.st_ino, before.st_mtime_ns):
            # another waiter broke the stale lock and took a new one meanwhile: give it back
            with contextlib.suppress(OSError):
                os.link(aside, lock)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(aside)
    return True


def _timeout(store: Path, lock: Path, timeout: float, *, breakable: bool) -> DataError:
    owner = _read_owner(lock)
    who = ""
    if owner is not None:
        where = "this machine" if owner[0] == _host_tag() else "another machine"
        who = f" (process {owner[1]} on {where})"
    advice = (
        "; if no ahbm process is writing this store, remove the lock file"
        if breakable
        else " (the lock is released when that writer ends, however it ends)"
    )
    return DataError(
        f"Cannot write HDF5 store '{store}': another writer{who} has held its lock file "
        f"'{lock}' for more than {timeout:g} s; wait for it to finish and write again"
        f"{advice}, or give a longer lock_timeout"
    )
