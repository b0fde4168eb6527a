"""Data conversion: the `Trial` container, C3D files and force plates, OpenSim
text files (TRC/MOT/STO), the HDF5 trial store, CSV and MATLAB tables.
"""

from ahbm._files import cleanup_temporaries
from ahbm._validation import max_read_bytes, set_max_read_bytes
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
from ahbm.io.opensim import (
    OpenSimTable,
    read_mot,
    read_trc,
    table_to_grf,
    write_mot,
    write_mot_values,
    write_trc,
)
from ahbm.io.osim import (
    OsimItem,
    osim_coordinates,
    osim_motion_types,
    osim_speed_matrix,
    read_osim,
    write_osim,
)
from ahbm.io.readers import SUPPORTED_SUFFIXES, read_trial
from ahbm.io.solution import trial_from_solution
from ahbm.io.tables import (
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
from ahbm.io.trial import Event, ForcePlate, Trial

__all__ = [
    "Trial",
    "ForcePlate",
    "Event",
    "OpenSimTable",
    "read_trc",
    "write_trc",
    "read_mot",
    "write_mot",
    "write_mot_values",
    "table_to_grf",
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
    "read_osim",
    "write_osim",
    "osim_coordinates",
    "osim_motion_types",
    "osim_speed_matrix",
    "OsimItem",
    "SUPPORTED_SUFFIXES",
    "max_read_bytes",
    "set_max_read_bytes",
    "cleanup_temporaries",
]
