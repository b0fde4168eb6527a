"""Isolated children: calls that run in a child Python process (internal).

:func:`run_isolated` calls a function in a child Python process, so that a
crash or hang of native code (libhdf5 on a damaged file) becomes an error;
:func:`python_child` builds the command line and environment of such a child.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ahbm.errors import AhbmError, FileFormatError

__all__ = ["python_child", "run_isolated"]


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
    cmd, env = python_child("from ahbm._internal.isolation import _child_main; _child_main()")
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
