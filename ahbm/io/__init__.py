"""Data conversion: the `Trial` container, C3D files and force plates, TRC
marker files, the HDF5 trial store, CSV and MATLAB tables, batch conversion.

OpenSim's own files (``.osim`` models, MOT/STO tables, setup files) are read by
:mod:`ahbm.opensim`.
"""

from ahbm._internal.files import cleanup_temporaries
from ahbm._internal.validation import max_read_bytes, set_max_read_bytes
from ahbm.io.c3d import read_c3d, write_c3d
from ahbm.io.forceplates import (
    force_plates_from_c3d,
    plate_frame,
    plate_wrench,
    remove_zero_offset,
    resample_force_plate,
    wrench_to_cop,
)
from ahbm.io.hdf5 import list_trials, load_result_units, load_trial, save_trial
from ahbm.io.readers import SUPPORTED_SUFFIXES, read_trial
from ahbm.io.solution import trial_from_solution
from ahbm.io.tables import (
    OpenSimTable,
    analogs_to_dataframe,
    dataframe_to_results,
    dataframe_to_trial,
    read_csv,
    read_mat,
    results_to_dataframe,
    trial_to_dataframe,
    write_csv,
    write_mat,
)
from ahbm.io.trc import read_trc, write_trc
from ahbm.io.trial import Event, ForcePlate, Trial

__all__ = [
    "Trial",
    "ForcePlate",
    "Event",
    "OpenSimTable",
    "read_trc",
    "write_trc",
    "trial_to_dataframe",
    "dataframe_to_trial",
    "analogs_to_dataframe",
    "results_to_dataframe",
    "dataframe_to_results",
    "write_csv",
    "read_csv",
    "write_mat",
    "read_mat",
    "save_trial",
    "trial_from_solution",
    "load_trial",
    "load_result_units",
    "list_trials",
    "read_c3d",
    "write_c3d",
    "force_plates_from_c3d",
    "plate_frame",
    "plate_wrench",
    "wrench_to_cop",
    "remove_zero_offset",
    "resample_force_plate",
    "read_trial",
    "SUPPORTED_SUFFIXES",
    "max_read_bytes",
    "set_max_read_bytes",
    "cleanup_temporaries",
]
