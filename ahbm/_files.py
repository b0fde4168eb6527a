"""Safe file output shared by every ahbm writer (internal).

No writer leaves a half-written file: the content goes to a temporary file in
the target's folder, is flushed to disk, and is renamed over the target with
``os.replace`` only when complete. On any failure or interruption the
temporary file is removed and an existing target is left untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ahbm.errors import DataError

__all__ = ["atomic_path", "default_mode"]


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
        An empty temporary file in the same folder, with the same suffix as
        `path` (writers such as Pillow choose the format from it). Write the
        complete content to it inside the ``with`` block.

    Raises
    ------
    DataError
        If the folder of `path` does not exist.

    Examples
    --------
    >>> with atomic_path("out.txt") as tmp:
    ...     _ = tmp.write_text("complete content")
    >>> Path("out.txt").read_text()
    'complete content'
    """
    target = Path(os.fspath(path))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise DataError(
            f"Cannot write `{argname}` {str(target)!r}: folder {str(folder)!r} does not "
            "exist; create it first"
        )
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}", dir=folder
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _fsync(tmp)
        os.chmod(tmp, default_mode(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(folder)
