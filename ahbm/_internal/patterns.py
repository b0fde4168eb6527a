"""Path expansion: the input files that folders and glob patterns name (internal).

:func:`expand_paths` is the one expander of ahbm's batch commands (``ahbm
convert``, :func:`ahbm.gait.analyze_gait_files`): it follows no symbolic link
under ``**``, looks at a bounded number of folder entries, and reports what it
skipped.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

from ahbm.errors import DataError

__all__ = ["Found", "expand_paths"]


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
