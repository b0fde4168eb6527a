"""The line a command prints before numba compiles its kernels (internal).

numba compiles a kernel on its first call and keeps it in a disk cache
(``__pycache__`` beside the package, or ``NUMBA_CACHE_DIR``); the first run of
a command after an installation or an upgrade therefore spends most of its
time compiling, and every later run loads the kernels in milliseconds.
:data:`KERNELS` names, per command, the compiled kernels it calls from Python
(found by running each command and listing the dispatchers that ran; the
helpers they call are compiled into them); :func:`announce` prints one line
on stderr when any of them is missing from the cache (an empty or stale
cache), with an estimate of the wait, and nothing on a warm cache, so the
message appears once per installation.

The check reads numba's cache index of each kernel (a private numba API: when
it cannot be read, the kernel counts as cached and nothing is printed, rather
than a message that may be false).
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["BACKGROUND", "BUSY", "FIRST", "KERNELS", "SECONDS", "announce", "estimate", "uncached"]

#: command -> the (module, name) of each compiled kernel the command calls.
KERNELS: dict[str, tuple[tuple[str, str], ...]] = {
    "id": (
        ("ahbm._engine.jit_xml", "scan_xml"),
        ("ahbm._engine.jit_xml", "select_elements"),
        ("ahbm._engine.jit_functions", "_simm_kernel"),
        ("ahbm._engine.jit_text", "parse_decimal_block"),
        ("ahbm._engine.jit_crba", "kinematics_kernel"),
        ("ahbm._engine.jit_rnea", "rnea_block_kernel"),
        ("ahbm._engine.jit_banded", "ptsv"),
        ("ahbm._engine.jit_banded", "natural_cubic_system"),
        ("ahbm._engine.jit_banded", "natural_cubic_values"),
        ("ahbm._engine.jit_filters", "iir3_pass"),
    ),
    "ik": (
        ("ahbm._engine.jit_xml", "scan_xml"),
        ("ahbm._engine.jit_xml", "select_elements"),
        ("ahbm._engine.jit_functions", "_simm_kernel"),
        ("ahbm._engine.jit_crba", "kinematics_kernel"),
    ),
    "gait": (
        ("ahbm._engine.jit_crba", "kinematics_kernel"),
        ("ahbm._engine.jit_rnea", "rnea_block_kernel"),
    ),
    "demo": (
        ("ahbm._engine.jit_crba", "kinematics_kernel"),
        ("ahbm._engine.jit_rnea", "rnea_block_kernel"),
        ("ahbm._engine.jit_aba", "aba_block_kernel"),
        ("ahbm._engine.jit_crba", "crba_kernel"),
    ),
}

#: Kernels a command compiles in a second process while it works (they overlap the rest).
BACKGROUND: dict[str, tuple[str, ...]] = {"demo": ("aba_block_kernel",)}

#: Seconds of compilation of each kernel on a quiet 2-core machine (load about 0.9),
#: measured on 2026-12-07 with an empty ``NUMBA_CACHE_DIR``, one kernel after another
#: in one process: kinematics_kernel 2.8 s, rnea_block_kernel 4.9 s, crba_kernel 1.2 s,
#: aba_block_kernel 9.8 s; all ten kernels of ``AHBM_KERNELS=numba ahbm id`` 16.4 s
#: (the shares of the smaller ones are estimates from that total). A busy machine
#: (load 6 on 2 cores) took 4.5 times as long. A cold ``ahbm demo`` took 16.5 s in
#: all, 11.2 s more than with its cache filled. An unlisted kernel counts 5 s.
SECONDS: dict[str, float] = {
    "parse_decimal_block": 2.0,
    "rnea_block_kernel": 5.0,
    "aba_block_kernel": 10.0,
    "crba_kernel": 1.5,
    "kinematics_kernel": 3.0,
    "scan_xml": 2.0,
    "select_elements": 1.0,
    "_simm_kernel": 1.0,
    "iir3_pass": 0.5,
    "ptsv": 0.3,
    "natural_cubic_system": 0.3,
    "natural_cubic_values": 0.3,
}
#: Seconds numba spends once per process before its first compilation (quiet machine).
FIRST = 1.0
#: How much longer a busy machine takes (load 6 on 2 cores).
BUSY = 4.5


def estimate(command: str, missing) -> float:
    """Seconds of compilation for the `missing` kernels of `command` on a quiet machine.

    Kernels of :data:`BACKGROUND` compile in a second process at the same time
    as the others: the longer of the two counts.

    Examples
    --------
    >>> estimate("demo", ["kinematics_kernel", "rnea_block_kernel", "aba_block_kernel"])
    11.0
    """
    background = set(BACKGROUND.get(command, ()))
    fore = sum(SECONDS.get(n, 5.0) for n in missing if n not in background)
    back = sum(SECONDS.get(n, 5.0) for n in missing if n in background)
    return FIRST + max(fore, back)


def _cached(dispatcher) -> bool:
    """True unless numba's disk cache certainly lacks `dispatcher` (and it did not run here)."""
    try:
        if dispatcher.overloads:
            return True
        return bool(dispatcher._cache._cache_file._load_index())  # {}: missing or stale
    except Exception:  # noqa: BLE001 - private numba API: unknown counts as cached
        return True


def uncached(command: str) -> list[str]:
    """Names of the kernels of `command` (a key of :data:`KERNELS`) that numba would compile.

    Imports the kernels' modules (which the command imports anyway); a kernel
    that no longer exists under its name is skipped.
    """
    missing = []
    for module, name in KERNELS.get(command, ()):
        try:
            dispatcher = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        if not _cached(dispatcher) and name not in missing:
            missing.append(name)
    return missing


def announce(command: str, *, quiet: bool = False, file=None) -> list[str]:
    """Say on stderr that `command` is about to compile kernels, when the cache lacks them.

    Parameters
    ----------
    command : str
        ``"id"``, ``"ik"``, ``"gait"`` or ``"demo"``.
    quiet : bool
        Print nothing (``-q``), only return the names.
    file : file object, optional
        Where to write (default ``sys.stderr``).

    Returns
    -------
    list of str
        The kernels that will be compiled (empty on a warm cache: nothing printed).

    Examples
    --------
    >>> announce("no such command")
    []
    """
    missing = uncached(command)
    if missing and not quiet:
        seconds = estimate(command, missing)
        low, high = max(5, 5 * round(seconds / 5)), 5 * round(BUSY * seconds / 5)
        print(
            f"ahbm {command}: compiling {len(missing)} numba kernel(s) for this installation's "
            f"first run: about {low} s on a quiet machine, up to {high} s on a busy one; they "
            "are cached on disk for the next runs...",
            file=sys.stderr if file is None else file,
            flush=True,
        )
    return missing
