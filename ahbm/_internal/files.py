"""Safe file output shared by every ahbm writer, and isolated reading (internal).

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

:func:`run_isolated` calls a function in a child Python process, so that a
crash or hang of native code (libhdf5 on a damaged file) becomes an error.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import hashlib
import importlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ahbm.errors import AhbmError, DataError, FileFormatError

__all__ = [
    "atomic_path",
    "check_output",
    "cleanup_temporaries",
    "default_mode",
    "expand_paths",
    "inside_folder",
    "os_error",
    "python_child",
    "run_isolated",
]

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


# ----------------------------------------------------------------------------- output policy


def os_error(err: OSError, path, action: str, *, argname: str | None = None) -> DataError:
    """A :class:`DataError` for an operating-system error on `path`, saying what to do.

    Parameters
    ----------
    err : OSError
        The error (``PermissionError``, ``FileNotFoundError``, a full disk ...).
    path : str or path-like
        The file or folder the operation was about.
    action : str
        What was being done ("write", "read", "create the folder").
    argname : str, optional
        The argument or option that named `path`.

    Returns
    -------
    DataError
        Raise it ``from err``.

    Examples
    --------
    >>> e = os_error(PermissionError(13, "Permission denied"), "/x/out.sto", "write")
    >>> print(e)  # doctest: +ELLIPSIS
    Cannot write '/x/out.sto': permission denied; ...
    """
    import errno

    name = f"`{argname}` " if argname else ""
    reason = (err.strerror or str(err) or type(err).__name__).rstrip(".")
    reason = reason[:1].lower() + reason[1:]
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "choose a folder you can write to, or change its permissions"
    elif err.errno == errno.ENOSPC or err.errno == getattr(errno, "EDQUOT", -1):
        fix = "free some disk space or write elsewhere"
    elif err.errno == errno.ENOENT:
        fix = "check the path; create the folder first"
    else:
        fix = "check the path and the file system"
    return DataError(f"Cannot {action} {name}{str(path)!r}: {reason}; {fix}")


def _identity(path: Path) -> tuple | None:
    """(device, inode) of an existing file (links followed), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _same_file(a: Path, b: Path) -> bool:
    ia = _identity(a)
    if ia is not None:
        return ia == _identity(b)
    try:  # `a` does not exist yet: compare where it would be
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def check_output(
    path,
    inputs=(),
    *,
    suffixes=None,
    argname: str = "output",
) -> Path:
    """Refuse an output path that would destroy a file of the same run.

    The policy of every ahbm writer and command (docs/security.md):

    - an output that resolves to an input of the run (the same file, through
      links, relative paths or hard links too) is refused;
    - an existing file is replaced only when its suffix is one the writer
      writes (`suffixes`), so that a model, a setup or a trial is never
      replaced by a result of another kind;
    - an existing folder is refused.

    Parameters
    ----------
    path : str or path-like
        The output file.
    inputs : iterable of (str, path-like) or path-like
        The run's input files, as ``(what, path)`` pairs (``("model",
        "subject01.osim")``) or bare paths; None entries are ignored.
    suffixes : iterable of str, optional
        The suffixes this writer writes (``(".sto", ".mot")``), compared
        without case. None: any suffix may be replaced.
    argname : str
        The argument, option or setup element that named `path`.

    Returns
    -------
    pathlib.Path
        `path` as a Path.

    Raises
    ------
    DataError
        If `path` is an input of the run, an existing folder, or an existing
        file with a suffix the writer does not write.

    Examples
    --------
    >>> check_output("walk_ID.sto", [("coordinates", "walk_IK.mot")], suffixes=(".sto",))
    PosixPath('walk_ID.sto')
    """
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(f"Expected `{argname}` to be a file path, got {type(path).__name__}")
    target = Path(os.fspath(path))
    for item in inputs or ():
        if item is None:
            continue
        what, src = item if isinstance(item, tuple) else ("input", item)
        if src is None:
            continue
        src = Path(os.fspath(src))
        if _same_file(target, src):
            raise DataError(
                f"Refusing to write `{argname}` {str(target)!r}: it is the {what} file "
                f"{str(src)!r} of this run, which would be destroyed; choose another output name"
            )
    if target.is_dir():
        raise DataError(
            f"Refusing to write `{argname}` {str(target)!r}: it is a folder; give a file name"
        )
    if suffixes is not None and (target.exists() or target.is_symlink()):
        allowed = {s.lower() for s in suffixes}
        if target.suffix.lower() not in allowed:
            raise DataError(
                f"Refusing to replace `{argname}` {str(target)!r}: an existing "
                f"{target.suffix or 'suffix-less'} file is not a file this writer writes "
                f"({', '.join(sorted(allowed))}); choose a name ending in one of those, "
                "or remove the file first"
            )
    return target


def inside_folder(folder, name: str, *, argname: str = "name") -> Path:
    """``folder / name``, refusing a `name` that would leave `folder`.

    Names read from a setup file (a tool's ``name`` attribute, used in output
    file names) are one file name: no folder separator, no ``..``, not empty,
    no NUL.

    Parameters
    ----------
    folder : str or path-like
        The results folder.
    name : str
        The file name.
    argname : str
        Where `name` came from, for the message.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataError
        If `name` is not a plain file name.

    Examples
    --------
    >>> inside_folder("results", "walk_ik_marker_errors.sto")
    PosixPath('results/walk_ik_marker_errors.sto')
    """
    bad = (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or Path(name).is_absolute()
    )
    if bad:
        raise DataError(
            f"{argname} {name!r} cannot be used in an output file name: it must be a plain "
            "file name (no folder separator, '..' or NUL); rename it in the setup file"
        )
    return Path(os.fspath(folder)) / name


# ----------------------------------------------------------------------------- isolation

_RESULT = "AHBM-ISOLATED-RESULT "


def _child_main() -> None:
    """Entry point of the child process of :func:`run_isolated` (request on stdin)."""
    request = json.loads(sys.stdin.read())
    module, _, func = request["target"].partition(":")
    reply: dict[str, Any]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn = getattr(importlib.import_module(module), func)
            reply = {"result": fn(**request["kwargs"])}
        except Exception as err:  # reported to the parent, which raises
            reply = {
                "error": type(err).__name__,
                "module": type(err).__module__,
                "message": str(err),
            }
    reply["warnings"] = [
        [w.category.__name__, w.category.__module__, str(w.message)] for w in caught
    ]
    sys.stdout.write("\n" + _RESULT + json.dumps(reply) + "\n")
    sys.stdout.flush()


def python_child(code: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of an isolated child Python process running `code`.

    Every Python child ahbm starts goes through here, so that none of them can
    import a stranger's file: the current folder is not on the child's import
    path (``-P`` on Python 3.11+, and removed by the first statement on older
    ones), ``PYTHONPATH`` keeps only absolute folders, with the folder that
    holds the ``ahbm`` package first, and ``PYTHONSTARTUP``/``PYTHONINSPECT``
    are dropped. The child runs the same interpreter (``sys.executable``).

    Parameters
    ----------
    code : str
        The program (``python -c CODE``).

    Returns
    -------
    cmd : list of str
        For ``subprocess.run`` or ``subprocess.Popen``.
    env : dict
        The child's environment.

    Examples
    --------
    >>> cmd, env = python_child("print(1)")
    >>> cmd[-1]
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; print(1)"
    """
    import ahbm.errors as errors

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP", "PYTHONINSPECT")}
    root = str(Path(errors.__file__).resolve().parents[1])
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([root, *kept]))
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []  # no current folder on sys.path
    guard = "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    return [sys.executable, *safe_path, "-c", guard + code], env


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def run_isolated(
    target: str, kwargs: dict, *, file, timeout: float | None, what: str = "reading"
) -> Any:
    """Call ``target(**kwargs)`` in a child Python process and return its result.

    Parameters
    ----------
    target : str
        ``"package.module:function"``; imported by name in the child.
    kwargs : dict
        JSON-serialisable keyword arguments (no pickle crosses the process
        boundary in either direction).
    file : str or path-like
        The file the call is about, named in the error messages.
    timeout : float or None
        Seconds before the child is killed (None: wait forever).
    what : str
        What the child does, for the messages ("reading").

    Returns
    -------
    object
        The function's JSON-serialisable return value.

    Raises
    ------
    FileFormatError
        If the child crashes (killed by a signal such as SIGSEGV), exits
        without an answer, does not finish within `timeout` seconds, or raises
        an exception that is not an AhbmError.
    AhbmError
        The AhbmError subclass the function raised in the child, with its message.

    Notes
    -----
    Warnings issued in the child are issued again in the parent (as
    ``UserWarning`` unless they are ahbm warnings). The child runs the same
    interpreter, with the folder that holds the ``ahbm`` package first on
    ``PYTHONPATH`` and (Python 3.11+, ``-P``) without the current folder on
    its import path.
    """
    import ahbm.errors as errors

    request = json.dumps({"target": target, "kwargs": kwargs})
    cmd, env = python_child("from ahbm._internal.files import _child_main; _child_main()")
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd, input=request, capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired as err:
        raise FileFormatError(
            f"{what.capitalize()} '{file}' did not finish within {timeout:g} s in a child "
            "process (the file may be damaged so that the reader hangs); the child was killed"
        ) from err
    reply = None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_RESULT):
            with contextlib.suppress(ValueError):
                reply = json.loads(line[len(_RESULT) :])
            break
    if proc.returncode < 0 or reply is None:
        last = "; ".join(proc.stderr.strip().splitlines()[-3:])
        how = (
            f"was killed by {_signal_name(-proc.returncode)}"
            if proc.returncode < 0
            else f"exited with status {proc.returncode}"
        )
        raise FileFormatError(
            f"{what.capitalize()} '{file}' in a child process failed: the child {how} after "
            f"{time.monotonic() - start:.1f} s (damage that crashes the native library)"
            + (f"; its last messages: {last}" if last else "")
        )
    for name, module, message in reply.get("warnings", []):
        category = UserWarning
        if module.startswith("ahbm"):
            with contextlib.suppress(ImportError, AttributeError):
                category = getattr(importlib.import_module(module), name)
        if not (isinstance(category, type) and issubclass(category, Warning)):
            category = UserWarning
        warnings.warn(message, category, stacklevel=3)
    if "error" in reply:
        cls = getattr(errors, reply["error"], None) if reply["module"] == "ahbm.errors" else None
        if isinstance(cls, type) and issubclass(cls, AhbmError):
            raise cls(reply["message"])
        raise FileFormatError(
            f"{what.capitalize()} '{file}' in a child process failed with "
            f"{reply['error']}: {reply['message']}"
        )
    return reply["result"]


# ----------------------------------------------------------------------------- input patterns

#: Most folder entries that expanding one input (folder or pattern) may look at.
MAX_PATTERN_ENTRIES = 1_000_000
_MAGIC = re.compile(r"[*?[]")
_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class Found(NamedTuple):
    """One entry of :func:`expand_paths`, in the order of the inputs.

    `kind` is ``"file"`` (a regular file to use), ``"unsupported"`` (a regular
    file with another suffix), ``"special"`` (FIFO, device, socket, dangling
    link, link loop: never opened), ``"unlistable"`` (a folder that cannot be
    read), ``"missing"`` (no such file or folder) or ``"nomatch"`` (a pattern
    that matches no file). `named` is True for an entry the caller named
    itself (not found in a folder or by a pattern).
    """

    path: Path
    kind: str
    reason: str
    named: bool


def _examine(path: Path) -> tuple[str, str, tuple | None]:
    """``(kind, reason, identity)`` of `path` without opening it (kind: file, folder, ...)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "missing", "no such file or folder", None
    except OSError as err:
        return "special", f"cannot be examined ({err.strerror or err}); not opened", None
    via = ""
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        try:
            st = os.stat(path)
        except FileNotFoundError:
            reason = f"a dangling symbolic link (to {target!r}, which does not exist); not opened"
            return "special", reason, None
        except OSError as err:
            if err.errno == getattr(errno, "ELOOP", None):
                return "special", f"a symbolic link loop (through {target!r}); not opened", None
            reason = f"a symbolic link that cannot be followed ({err.strerror}); not opened"
            return "special", reason, None
        via = f" (through the symbolic link to {target!r})"
    ident = (st.st_dev, st.st_ino)
    if stat.S_ISREG(st.st_mode):
        return "file", "", ident
    if stat.S_ISDIR(st.st_mode):
        return "folder", "", ident
    what = next((name for test, name in _FILE_TYPES if test(st.st_mode)), "a special file")
    return "special", f"{what}{via}, not a regular file; not opened", ident


class _Budget:
    """Counts the folder entries looked at for one input; DataError past the bound."""

    def __init__(self, limit: int, item: str, argname: str):
        self.left, self.limit, self.item, self.argname = limit, limit, item, argname

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise DataError(
                f"`{self.argname}` {self.item!r}: expanding it looked at more than "
                f"{self.limit:,} folder entries; narrow the pattern (fewer '**', a deeper "
                "starting folder) or give the folders one at a time"
            )


def _hidden(name: str, pattern: str) -> bool:
    return name.startswith(".") and not pattern.startswith(".")


def _scan(folder: Path, budget: _Budget, problems: list) -> list:
    """The entries of `folder` (counted); an unreadable folder is recorded in `problems`."""
    try:
        with os.scandir(folder) as it:
            entries = []
            for entry in it:
                budget.spend()
                entries.append(entry)
            return entries
    except FileNotFoundError:
        return []
    except OSError as err:
        reason = f"folder cannot be listed ({err.strerror or err}); its files were not searched"
        problems.append(Found(folder, "unlistable", reason, False))
        return []


def _match_pattern(pattern: str, budget: _Budget, problems: list) -> list[Path]:
    """Paths matching the glob `pattern`; ``**`` never enters a symbolic link or a folder twice."""
    parts = Path(pattern).parts
    i = 0
    while i < len(parts) and not _MAGIC.search(parts[i]):
        i += 1
    comps = parts[i:]
    stack = [(Path(*parts[:i]) if i else Path("."), 0)]
    entered: set = set()  # (device, inode, component) of the folders `**` walked
    out = []
    while stack:
        folder, k = stack.pop()
        if k == len(comps):
            out.append(folder)
            continue
        comp, last = comps[k], k + 1 == len(comps)
        if comp == "**":
            try:
                st = os.stat(folder)
            except OSError:
                continue
            if (st.st_dev, st.st_ino, k) in entered:
                continue  # reached again (a bind mount or a hard-linked folder)
            entered.add((st.st_dev, st.st_ino, k))
            stack.append((folder, k + 1))
            for entry in _scan(folder, budget, problems):
                if _hidden(entry.name, ""):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), k))
                elif last:
                    out.append(Path(entry.path))
        elif _MAGIC.search(comp):
            for entry in _scan(folder, budget, problems):
                if _hidden(entry.name, comp) or not fnmatch.fnmatch(entry.name, comp):
                    continue
                if last:
                    out.append(Path(entry.path))
                elif entry.is_dir():  # one level: a linked folder is entered once
                    stack.append((Path(entry.path), k + 1))
        else:
            path = folder / comp
            if last and os.path.lexists(path):
                out.append(path)
            elif not last and path.is_dir():
                stack.append((path, k + 1))
    return sorted(set(out))


def expand_paths(
    inputs, *, suffixes=None, argname: str = "inputs", max_entries: int | None = None
) -> list[Found]:
    """Expand files, folders and glob patterns into files, without opening any of them.

    The one expander of ahbm's commands (``ahbm convert``, ``ahbm gait``):

    - a folder gives its entries whose suffix is in `suffixes` (not recursive);
    - a pattern (``*``, ``?``, ``[...]``; ``**`` for any depth) is matched
      component by component; ``**`` does not enter symbolically linked
      folders and never enters one folder twice, so links to ``.`` cannot make
      it loop; names starting with ``.`` match only patterns that do;
    - FIFOs, devices, sockets, dangling links and link loops are reported
      (``kind="special"``) and never opened (opening a FIFO would block);
    - the same file reached twice (links, relative paths) is listed once.

    Parameters
    ----------
    inputs : str, path-like, or iterable of them
    suffixes : iterable of str, optional
        Accepted suffixes (compared without case); None accepts any file and
        lists every regular file of a folder.
    argname : str
        The argument or option that named the inputs, for messages.
    max_entries : int, optional
        Most folder entries one input may look at (default
        :data:`MAX_PATTERN_ENTRIES`).

    Returns
    -------
    list of Found
        In the order of the inputs, each folder's and pattern's files sorted.

    Raises
    ------
    DataError
        If an input is not a path or a pattern, or expanding one looks at more
        than `max_entries` folder entries.

    Examples
    --------
    >>> [(f.kind, f.reason) for f in expand_paths(["no/such/*.c3d"])]
    [('nomatch', 'pattern matches no file')]
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    try:
        items = list(inputs)
    except TypeError as err:
        raise DataError(
            f"Expected `{argname}` to be file paths, folders or patterns, got "
            f"{type(inputs).__name__}"
        ) from err
    accept = None if suffixes is None else {s.lower() for s in suffixes}
    limit = MAX_PATTERN_ENTRIES if max_entries is None else int(max_entries)
    out: list[Found] = []
    seen: set = set()

    def add(path: Path, named: bool) -> None:
        kind, reason, ident = _examine(path)
        wanted = accept is None or path.suffix.lower() in accept
        if kind == "file":
            if not wanted:
                reason = f"unsupported file type {path.suffix!r}"
                out.append(Found(path, "unsupported", reason, named))
            elif ident not in seen:
                seen.add(ident)
                out.append(Found(path, "file", "", named))
        elif kind == "special" and (wanted or named):
            out.append(Found(path, "special", reason, named))

    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise DataError(
                f"Expected `{argname}` to hold file paths, folders or patterns, got "
                f"{type(item).__name__}"
            )
        text = os.fsdecode(os.fspath(item))
        path = Path(text)
        kind, reason, _ = _examine(path)
        budget = _Budget(limit, text, argname)
        problems: list[Found] = []
        if kind == "folder":
            entries = sorted(_scan(path, budget, problems), key=lambda e: e.name)
            out.extend(problems)
            for entry in entries:
                if accept is None or Path(entry.name).suffix.lower() in accept:
                    add(path / entry.name, False)  # sub-folders are ignored
        elif kind == "missing" and _MAGIC.search(text):
            matches = _match_pattern(text, budget, problems)
            out.extend(problems)
            before = len(out)
            for match in matches:
                add(match, False)
            if len(out) == before and not any(_examine(m)[0] == "file" for m in matches):
                out.append(Found(path, "nomatch", "pattern matches no file", True))
        elif kind == "missing":
            out.append(Found(path, "missing", reason, True))
        else:
            add(path, True)
    return out
