"""ahbm: Articulated Human Biomechanical Modeling toolbox.

A collection of flat, independently usable function modules:

- ``ahbm.kinematics``: rotations, transforms, markers, multibody trees, joint angles
- ``ahbm.dynamics``: spatial algebra, inverse and forward dynamics, simulation
- ``ahbm.bsp``: body-segment parameters
- ``ahbm.analysis``: filtering, derivatives, gaps, events, cycles
- ``ahbm.io``: C3D, force plates, OpenSim files, HDF5, tables
- ``ahbm.graphics``: stick figures, time-series viewers, gait plots
- ``ahbm.models``: example models

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
from ahbm.kinematics.model_file import load_model, save_model

# The model-file sections of the layers above kinematics register themselves
# on import, so that `ahbm.load_model` reads all of a model file ("constraints",
# "muscles", "wrap_objects").
import ahbm.dynamics.constraints  # noqa: E402, F401  isort: skip
import ahbm.muscles.path_elements  # noqa: E402, F401  isort: skip


def _osim_section(name):
    # "opensim" (ahbm.io.osim) is registered lazily: ahbm.io imports pandas, which
    # `import ahbm` must not; importing ahbm.io.osim registers the real functions
    def call(*args):
        from ahbm.io import osim

        return getattr(osim, name)(*args)

    return call


if "opensim" not in ahbm.kinematics.model_file.model_sections():
    ahbm.kinematics.model_file.register_model_section(
        "opensim",
        read=_osim_section("_read_section"),
        write=_osim_section("_write_section"),
        check=_osim_section("_check_section"),
        owner="ahbm.io.osim",
    )

__version__ = "0.1.0"

#: Subpackages and public modules reachable as ``ahbm.<name>`` after ``import ahbm``;
#: those not imported yet load on first access (module ``__getattr__``, PEP 562).
_SUBMODULES = (
    "analysis",
    "batch",
    "bsp",
    "cli",
    "demo",
    "dynamics",
    "errors",
    "graphics",
    "io",
    "kinematics",
    "models",
    "muscles",
    "optimize",
    "testing",
    "tools",
    "types",
)


def __getattr__(name: str):
    """Import ``ahbm.<name>`` on first access (``ahbm.io.read_c3d`` after ``import ahbm``)."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"ahbm.{name}")
    raise AttributeError(
        f"module 'ahbm' has no attribute {name!r}; its subpackages are {', '.join(_SUBMODULES)}"
    )


def __dir__() -> list[str]:
    """Names for tab completion: the top-level functions and every subpackage."""
    return sorted(set(globals()) | set(_SUBMODULES))


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
