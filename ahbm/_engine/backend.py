"""Which code runs a kernel: numba's compiled kernels, or numpy along frames (internal).

ahbm's kernels are compiled by numba. Loading them costs a process about
0.6 s the first time (importing numba, its lowering registries and
``scipy.linalg``), whatever the work; a command such as ``ahbm id`` on a
walking trial computes for about 10 ms. For such a command the same
algorithms written in numpy along frames finish before numba would have
loaded.

The rule, one for every kernel that has a numpy coding:

* by default the compiled kernels run (a library user's process, the tests);
* inside :func:`numpy_while_small` (a short command's whole run) a caller
  runs its numpy coding when the compiled kernels are not loaded in the
  process yet *and* its work is small (below the caller's own bound, which
  keeps the numpy coding to some tens of milliseconds); once any compiled
  kernel is loaded, compiled kernels run;
* ``AHBM_KERNELS=numba`` or ``AHBM_KERNELS=numpy`` in the environment forces
  one side everywhere (for checks and benchmarks; ``numpy`` still runs the
  compiled kernels where no numpy coding exists).

The numpy codings perform the kernels' formulas; their results agree with the
compiled ones to round-off (the tests compare them on every joint type),
not always bit for bit.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

__all__ = ["compiled_loaded", "numpy_while_small", "use_compiled"]

#: The module every compiled kernel imports: present in sys.modules once one is loaded.
_COMPILED_MODULE = "ahbm._engine.jit_common"
_PREFER_NUMPY = [0]  # depth of numpy_while_small contexts (a list: module-level mutable)
_BEFORE_LOAD: list = []  # callables of those contexts, run once before numba loads


def compiled_loaded() -> bool:
    """True once a compiled kernel's module (and so numba) is loaded in this process."""
    return _COMPILED_MODULE in sys.modules


def use_compiled(small: bool) -> bool:
    """Whether a caller with a numpy coding should run the compiled kernel.

    Parameters
    ----------
    small : bool
        The caller's own judgement that its work is small enough for numpy
        (e.g. ``n_frames * n_nodes <= bound``).
    """
    forced = os.environ.get("AHBM_KERNELS", "").strip().lower()
    if forced == "numba":
        return True
    if forced == "numpy":
        return False
    if not _PREFER_NUMPY[0] or compiled_loaded():
        return True
    if small:
        return False
    while _BEFORE_LOAD:  # the compiled kernels are about to load: say so first
        _BEFORE_LOAD.pop()()
    return True


@contextmanager
def numpy_while_small(before_load=None):
    """Inside this block, small work runs in numpy while numba is not loaded.

    For commands that run once and exit (``ahbm id``): their start-up is
    what the user waits for. Nested blocks are allowed.

    Parameters
    ----------
    before_load : callable, optional
        Called (once) when work inside the block is too large for numpy and
        the compiled kernels are about to load, e.g. to announce a first
        compilation.
    """
    _PREFER_NUMPY[0] += 1
    if before_load is not None:
        _BEFORE_LOAD.append(before_load)
    try:
        yield
    finally:
        _PREFER_NUMPY[0] -= 1
        if before_load is not None and before_load in _BEFORE_LOAD:
            _BEFORE_LOAD.remove(before_load)
