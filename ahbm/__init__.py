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
# on import, so that `ahbm.load_model` reads all of a model file ("constraints").
import ahbm.dynamics.constraints  # noqa: E402, F401  isort: skip

__version__ = "0.1.0"

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
