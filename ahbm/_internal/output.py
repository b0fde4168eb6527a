"""Output policy shared by every ahbm writer (internal).

:func:`check_output` refuses to overwrite an input or an existing file unless
told to, :func:`inside_folder` keeps a name from a file inside its folder, and
:func:`os_error` turns an ``OSError`` into a :class:`~ahbm.errors.DataError`
that says what to do.
"""

from __future__ import annotations

import os
from pathlib import Path

from ahbm.errors import DataError

__all__ = ["check_output", "inside_folder", "os_error"]


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
