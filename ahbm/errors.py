"""Exceptions raised by ahbm.

Every public function that rejects its input raises a subclass of
:class:`AhbmError`. The subclasses also derive from :class:`ValueError`
where that fits, so code written against numpy/scipy conventions
(``except ValueError``) keeps working.
"""

__all__ = [
    "AhbmError",
    "ModelError",
    "DataError",
    "FileFormatError",
    "SimulationError",
    "MissingDependencyError",
    "AhbmWarning",
]


class AhbmError(Exception):
    """Base class of every error ahbm raises on bad input or failed work."""


class ModelError(AhbmError, ValueError):
    """A model is inconsistent: unknown parent, bad inertia, bad joint, ..."""


class DataError(AhbmError, ValueError):
    """An array argument has the wrong shape, type, or non-finite values."""


class FileFormatError(AhbmError, ValueError):
    """A file cannot be read: malformed, truncated, or not the expected format."""


class SimulationError(AhbmError, RuntimeError):
    """A simulation cannot proceed (integrator failure, singular system, ...)."""


class MissingDependencyError(AhbmError, ImportError):
    """An optional dependency (an extra such as ``ahbm[optimize]``) is not installed."""


class AhbmWarning(UserWarning):
    """Warning category for recoverable problems (gimbal lock, gaps, ...)."""
