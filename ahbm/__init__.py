"""ahbm: Articulated Human Biomechanical Modeling toolbox.

A collection of flat, independently usable function modules:

- ``ahbm.kinematics``: rotations, transforms, markers, multibody trees, joint angles
- ``ahbm.dynamics``: spatial algebra, inverse and forward dynamics, simulation
- ``ahbm.bsp``: body-segment parameters
- ``ahbm.analysis``: filtering, derivatives, gaps, events, cycles
- ``ahbm.io``: C3D, force plates, TRC, HDF5, tables, batch conversion
- ``ahbm.opensim``: OpenSim models, MOT/STO files, setup files and tools
- ``ahbm.gait``: the clinical gait pipeline (Plug-in Gait style)
- ``ahbm.graphics``: stick figures, time-series viewers, gait plots
- ``ahbm.models``: example models
- ``ahbm.cli``: the ``ahbm`` command

Importing ``ahbm`` does no I/O and does not import matplotlib.
"""

from ahbm.errors import (
    AhbmError,
    AhbmWarning,
    DataError,
    FileFormatError,
    ModelError,
    SimulationError,
)

__version__ = "0.3.0"

#: Subpackages and public modules reachable as ``ahbm.<name>`` after ``import ahbm``;
#: those not imported yet load on first access (module ``__getattr__``, PEP 562).
_SUBMODULES = (
    "analysis",
    "bsp",
    "cli",
    "dynamics",
    "errors",
    "gait",
    "graphics",
    "io",
    "kinematics",
    "models",
    "muscles",
    "opensim",
    "optimize",
    "testing",
    "types",
)


def __getattr__(name: str):
    """Import ``ahbm.<name>`` on first access (``ahbm.io.read_c3d`` after ``import ahbm``)."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"ahbm.{name}")
    if name in ("load_model", "save_model"):
        from ahbm.kinematics import model_file

        return getattr(model_file, name)
    raise AttributeError(
        f"module 'ahbm' has no attribute {name!r}; its subpackages are {', '.join(_SUBMODULES)}"
    )


def __dir__() -> list[str]:
    """Names for tab completion: the top-level functions and every subpackage."""
    return sorted(set(globals()) | set(_SUBMODULES) | {"load_model", "save_model"})


__all__ = [
    "AhbmError",
    "AhbmWarning",
    "DataError",
    "FileFormatError",
    "ModelError",
    "SimulationError",
    "__version__",
    "load_model",
    "save_model",
]
