"""Read a motion file of any supported type into a Trial (chosen by suffix)."""

from __future__ import annotations

from ahbm._internal.validation import as_path
from ahbm.errors import DataError

__all__ = ["read_trial", "SUPPORTED_SUFFIXES"]

#: File suffixes :func:`read_trial` (and :func:`ahbm.io.batch.convert`) read,
#: compared case-insensitively.
SUPPORTED_SUFFIXES = (".c3d", ".trc")


def read_trial(path):
    """Read a C3D or TRC file into a Trial, chosen by the file suffix.

    Parameters
    ----------
    path : str or path-like
        A ``.c3d`` or ``.trc`` file.

    Returns
    -------
    Trial
        Points in metres.

    Raises
    ------
    DataError
        If the suffix is not supported.
    FileFormatError
        If the file cannot be read.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.io import Trial, write_trc
    >>> write_trc(Trial(points=np.ones((3, 1, 3)), point_labels=["A"], point_rate=60.0), "w.trc")
    >>> read_trial("w.trc")
    Trial(source='w.trc', frames=3, points=1 @ 60 Hz [m], ...)
    """
    path = as_path(path)
    suffix = path.suffix.lower()
    if suffix == ".c3d":
        from ahbm.io.c3d import read_c3d

        return read_c3d(path)
    if suffix == ".trc":
        from ahbm.io.trc import read_trc

        return read_trc(path)
    raise DataError(
        f"Cannot read '{path}': unsupported file type {path.suffix!r}; supported: "
        f"{', '.join(SUPPORTED_SUFFIXES)}"
    )
