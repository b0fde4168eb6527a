"""Data conversion: the `Trial` container, C3D files and force plates, TRC
marker files, the HDF5 trial store, CSV and MATLAB tables, batch conversion.

OpenSim's own files (``.osim`` models, MOT/STO tables, setup files) are read by
:mod:`ahbm.opensim`.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "trial",
        "trc",
        "tables",
        "opensim_table",
        "matfile",
        "hdf5",
        "solution",
        "c3d",
        "forceplates",
        "readers",
        "safety",
    ],
)
