"""Safe file output shared by every ahbm writer: atomic writes and temporaries (internal).

No writer leaves a half-written file: the content goes to a temporary file in
the target's folder, is flushed to disk, and is renamed over the target with
``os.replace`` only when complete. On any failure or interruption the
temporary file is removed and an existing target is left untouched.

Temporary names identify their owner: ``.<stem>.ahbm-<host>-<pid>-<random>.tmp<suffix>``
(``host`` is a short hash of the machine's name). A write interrupted by
SIGTERM in the main thread removes its temporary before the process ends; one
killed by SIGKILL (which no process can catch) leaves it behind, and the next
write of the same target removes the temporaries of writers that no longer
run. :func:`cleanup_temporaries` does the same for a whole folder.

The output policy (what may be overwritten) is in :mod:`ahbm._internal.output`,
children that run a call in isolation in :mod:`ahbm._internal.isolation`, and
the expansion of input folders and patterns in :mod:`ahbm._internal.patterns`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from ahbm._internal.output import os_error
from ahbm.errors import AhbmError, DataError

__all__ = ["atomic_path", "cleanup_temporaries", "default_mode"]

#: The marker in every temporary file name (``.name.ahbm-...``).
TEMP_MARKER = "ahbm"
_NAME_MAX = 255  # bytes in one file name on common file systems
_TEMP_RE = re.compile(
    r"^\.(?P<stem>.*)\." + TEMP_MARKER + r"-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-"
    r"(?P<rand>[a-z0-9_]+)\.tmp(?P<suffix>(\.[^.]*)?)$"
)


def default_mode(target: Path) -> int:
    """Permissions for a new file: those of an existing `target`, else 0o666 minus the umask."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ----------------------------------------------------------------------------- owners


def _host_tag() -> str:
    """Eight hex digits naming this machine (temporaries of other hosts are never removed)."""
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _temp_stem(target: Path) -> str:
    """The stem used in the temporary names of `target` (shortened to fit a file name)."""
    stem = target.stem
    room = _NAME_MAX - len(f"..{TEMP_MARKER}-12345678-4194304-abcdefgh.tmp{target.suffix}".encode())
    while len(stem.encode("utf-8", "surrogateescape")) > room and stem:
        stem = stem[:-1]
    return stem


def _boot_time() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _process_start(pid: int) -> float | None:
    """When process `pid` started (s since the epoch), where /proc tells; else None."""
    boot = _boot_time()
    if boot is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _owner_alive(pid: int, written: float) -> bool:
    """Whether the process that wrote a temporary (last modified at `written`) may still run.

    True when in doubt. A process with that id that started after the file was
    last written cannot be its writer (the id was reused).
    """
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        pass  # exists (owned by someone else), or the check is not possible here
    start = _process_start(pid)
    return start is None or start <= written + 2.0  # 2 s for clock granularity


def _stale(path: Path, match: re.Match) -> bool:
    if match["host"] != _host_tag():
        return False
    try:
        written = path.lstat().st_mtime
    except OSError:
        return False
    return not _owner_alive(int(match["pid"]), written)


def cleanup_temporaries(folder, *, dry_run: bool = False) -> list[Path]:
    """Remove the temporary files that killed ahbm writers left in `folder`.

    Every ahbm writer writes to a temporary file next to its target and
    renames it into place; a writer killed by SIGKILL (or a power cut) leaves
    that file behind. Its name identifies the writer
    (``.<stem>.ahbm-<host>-<pid>-<random>.tmp<suffix>``), so the temporaries of
    processes that no longer run on this machine can be recognised. Writing a
    target removes the stale temporaries of that target by itself; this
    function cleans a whole folder (``ahbm info`` reports them).

    Parameters
    ----------
    folder : str or path-like
        The folder to clean (not recursive).
    dry_run : bool, optional
        Only list the stale temporaries, remove nothing.

    Returns
    -------
    list of pathlib.Path
        The stale temporaries removed (or, with `dry_run`, found), sorted.

    Raises
    ------
    DataError
        If `folder` is not a folder.

    Notes
    -----
    Never removed: temporaries of a process that still runs (or may run: a
    process id in use by a process started before the file was last written),
    temporaries written on another machine (a shared folder), and files whose
    names do not follow the pattern above (e.g. ``.name.x1y2.tmp.h5`` written by
    ahbm 0.1, which did not record its owner).

    Examples
    --------
    >>> cleanup_temporaries(".")
    []
    """
    if not isinstance(folder, (str, os.PathLike)):
        raise DataError(f"Expected `folder` to be a folder path, got {type(folder).__name__}")
    folder = Path(os.fspath(folder))
    if not folder.is_dir():
        raise DataError(f"Expected `folder` to be a folder, got {str(folder)!r}")
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _TEMP_RE.match(entry.name)
            if match and entry.is_file(follow_symlinks=False):
                path = folder / entry.name
                if _stale(path, match):
                    found.append(path)
    found.sort()
    if not dry_run:
        removed = []
        for path in found:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
        found = removed
    return found


def _remove_stale_temporaries_of(target: Path, folder: Path) -> None:
    """Remove the temporaries of `target` left by writers that no longer run."""
    stem, suffix = _temp_stem(target), target.suffix
    prefix = f".{stem}.{TEMP_MARKER}-"
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if not entry.name.startswith(prefix):
                continue
            match = _TEMP_RE.match(entry.name)
            if (
                match
                and match["stem"] == stem
                and match["suffix"] == suffix
                and entry.is_file(follow_symlinks=False)
                and _stale(folder / entry.name, match)
            ):
                with contextlib.suppress(OSError):
                    os.unlink(folder / entry.name)


# ----------------------------------------------------------------------------- SIGTERM


#: Temporaries this process is writing (any thread); the SIGTERM handler removes them.
_ACTIVE: set[str] = set()


def _on_sigterm(signum, frame):
    """Remove the temporaries being written, then end the process as SIGTERM would have.

    Nothing is raised: an exception raised by a signal handler can land in a
    weakref callback or a ``__del__`` where Python ignores it, and the write
    would go on. Like the default action, this skips ``finally`` blocks and
    ``atexit`` handlers.
    """
    for name in list(_ACTIVE):
        with contextlib.suppress(OSError):
            os.unlink(name)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.raise_signal(signal.SIGTERM)


@contextlib.contextmanager
def _sigterm_cleans_up() -> Iterator[None]:
    """While active (main thread, default SIGTERM action only), SIGTERM removes temporaries.

    A handler the program set itself is left alone: if it raises (e.g.
    SystemExit), the write cleans up as for any exception; if it returns, the
    write goes on. Nested writes keep the outer write's handler.
    """
    installed = False
    if threading.current_thread() is threading.main_thread():
        try:
            installed = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
            if installed:
                signal.signal(signal.SIGTERM, _on_sigterm)
        except (ValueError, OSError, AttributeError):  # pragma: no cover - unusual platforms
            installed = False
    try:
        yield
    finally:
        if installed and signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def atomic_path(path, *, argname: str = "path") -> Iterator[Path]:
    """Yield a temporary path next to `path`; move it into place on success.

    Parameters
    ----------
    path : str or os.PathLike
        The file to (re)write.
    argname : str
        Argument name used in the error message.

    Yields
    ------
    pathlib.Path
        An empty temporary file in the same folder, named
        ``.<stem>.ahbm-<host>-<pid>-<random>.tmp<suffix>`` (the same suffix as
        `path`: writers such as Pillow choose the format from it). Write the
        complete content to it inside the ``with`` block.

    Raises
    ------
    DataError
        If the folder of `path` does not exist.

    Notes
    -----
    On any exception inside the block the temporary file is removed and the
    exception propagates. In the main thread, while the block runs, SIGTERM
    (if the program has not set its own handler) removes the temporary file
    and then ends the process as SIGTERM would have. Before the temporary is
    created, the temporaries of the same target left by writers that no
    longer run (killed by SIGKILL) are removed.

    Examples
    --------
    >>> with atomic_path("out.txt") as tmp:
    ...     _ = tmp.write_text("complete content")
    >>> Path("out.txt").read_text()
    'complete content'
    """
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(
            f"Expected `{argname}` to be a file path (str or os.PathLike), got "
            f"{type(path).__name__}"
        )
    target = Path(os.fspath(path))
    if target.is_dir():
        raise DataError(f"`{argname}` {str(target)!r} is a folder; give a file name inside it")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise DataError(
            f"Cannot write `{argname}` {str(target)!r}: folder {str(folder)!r} does not "
            "exist; create it first"
        )
    _remove_stale_temporaries_of(target, folder)
    with _sigterm_cleans_up():
        tmp = None
        try:
            fd, tmp_name = tempfile.mkstemp(
                prefix=f".{_temp_stem(target)}.{TEMP_MARKER}-{_host_tag()}-{os.getpid()}-",
                suffix=f".tmp{target.suffix}",
                dir=folder,
            )
            _ACTIVE.add(tmp_name)
            tmp = Path(tmp_name)
            os.close(fd)
            yield tmp
            _fsync(tmp)
            os.chmod(tmp, default_mode(target))
            os.replace(tmp, target)
        except BaseException as err:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    tmp.unlink()
            if isinstance(err, OSError) and not isinstance(err, AhbmError):
                raise os_error(err, target, "write", argname=argname) from err
            raise
        finally:
            if tmp is not None:
                _ACTIVE.discard(str(tmp))
    _fsync_dir(folder)
