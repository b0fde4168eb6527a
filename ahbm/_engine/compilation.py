"""Compilation of the kernels ahead of use (numba compiles a kernel on its first call).

``KERNELS`` names the compiled kernel behind each kind of call of
:mod:`ahbm._engine.dispatch`; :func:`compile_kernels` compiles them now (or
loads them from numba's disk cache), :func:`compile_in_background` in another
process, and :func:`is_compiled` says whether a call would compile.
"""

from __future__ import annotations

import subprocess

import numpy as np

from ahbm._engine.dispatch import (
    _ABA_BLOCK_MIN,
    _RNEA_BLOCK_MIN,
    aba,
    crba,
    kinematics,
    rnea,
    rnea_derivatives,
)
from ahbm._engine.jit_aba import aba_block_kernel, aba_kernel
from ahbm._engine.jit_crba import crba_kernel, kinematics_kernel
from ahbm._engine.jit_derivatives import rnea_derivatives_world_kernel
from ahbm._engine.jit_derivatives_block import _DERIV_B, rnea_derivatives_block_kernel
from ahbm._engine.jit_rnea import rnea_block_kernel, rnea_frame_kernel
from ahbm.kinematics.tree import Model

__all__ = [
    "KERNELS",
    "is_compiled",
    "compile_kernels",
    "compile_in_background",
]


#: The compiled kernel behind each kind of call.
KERNELS = {
    "rnea": rnea_block_kernel,  # 4 frames or more
    "rnea_single": rnea_frame_kernel,  # fewer frames, single states
    "aba": aba_block_kernel,  # 8 frames or more
    "aba_single": aba_kernel,
    "crba": crba_kernel,
    "kinematics": kinematics_kernel,
    "rnea_derivatives": rnea_derivatives_world_kernel,  # fewer than _DERIV_B frames
    "rnea_derivatives_block": rnea_derivatives_block_kernel,
}


def is_compiled(names) -> bool:
    """True if the kernels of `names` (keys of ``KERNELS``) need no compilation.

    Either they ran in this process, or numba's disk cache holds them for
    the current source. Best effort: numba has no public query for its cache,
    so an unreadable cache counts as "not compiled".
    """
    for name in names:
        disp = KERNELS[name]
        try:
            if disp.overloads:
                continue
            if not disp._cache._cache_file._load_index():  # {} when missing or stale
                return False
        except Exception:  # noqa: BLE001 - private numba API; any failure means "unknown"
            return False
    return True


def compile_kernels(names=tuple(KERNELS)) -> None:
    """Compile the kernels of `names` now (or load them from numba's disk cache).

    Each kernel has one specialization (the wrappers above pass the same
    array types on every call), so a call on a two-body model with the
    types of a real call compiles exactly what later calls use.
    """
    m = Model("compile")
    m.add_body("a", "ground", {"type": "free"}, mass=1.0, inertia=np.eye(3))
    m.add_body("b", "a", {"type": "revolute", "axis": [0, 1, 0]}, mass=1.0, com=[0, 0, -0.5])
    n = max(_RNEA_BLOCK_MIN, _ABA_BLOCK_MIN)
    q = np.zeros((n, m.nq))
    q[:, 6] = 1.0
    z = np.zeros((n, m.nv))
    calls = {
        "rnea": lambda: rnea(m, q, z, z),
        "rnea_single": lambda: rnea(m, q[:1], z[:1], z[:1]),
        "aba": lambda: aba(m, q, z, z),
        "aba_single": lambda: aba(m, q[:1], z[:1], z[:1]),
        "crba": lambda: crba(m, q),
        "kinematics": lambda: kinematics(m, q, z),
        "rnea_derivatives": lambda: rnea_derivatives(m, q[:1], z[:1], z[:1]),
        "rnea_derivatives_block": lambda: rnea_derivatives(
            m, np.repeat(q[:1], _DERIV_B, 0), *(np.zeros((_DERIV_B, m.nv)),) * 2
        ),
    }
    for name in names:
        calls[name]()


def compile_in_background(names) -> subprocess.Popen:
    """Start a Python process that compiles the kernels of `names` into numba's disk cache.

    numba compiles one function at a time per process; a second process uses
    a second core. Wait for it (``.wait()``) before the first call of those
    kernels here, which then loads them from the cache.
    """
    from ahbm._internal.isolation import python_child

    code = (
        f"from ahbm._engine.compilation import compile_kernels; compile_kernels({tuple(names)!r})"
    )
    cmd, env = python_child(code)  # isolated: never imports files of the current folder
    return subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
