"""OpenSim's tools run on ahbm's engine: Inverse Kinematics and Inverse Dynamics setups.

- :mod:`ahbm.tools.opensim_setup` reads OpenSim's IK and ID setup files and
  external-loads files.
- :mod:`ahbm.tools.opensim_processing` reproduces OpenSim's processing of
  coordinates for inverse dynamics (padding, 3rd-order Butterworth low-pass run
  forward and backward, quintic spline and its derivatives).
- :mod:`ahbm.tools.opensim_id` and :mod:`ahbm.tools.opensim_ik` run the setups
  (``ahbm id SETUP.xml``, ``ahbm ik SETUP.xml``) and write OpenSim's files.
- :mod:`ahbm.tools.opensim_so` runs OpenSim's AnalyzeTool setups with a
  StaticOptimization (and JointReaction) analysis (``ahbm so SETUP.xml``)
  and writes OpenSim's activation, force and reaction-load files.
- :mod:`ahbm.tools.opensim_scale` reads and runs OpenSim's Scale setups
  (``ahbm scale SETUP.xml``): scale factors from marker pairs, model scaling,
  marker placement.
"""

from ahbm.tools.opensim_id import (
    IDResult,
    active_model_forces,
    external_loads_f_ext,
    inverse_dynamics_opensim,
    opensim_coordinate_order,
    run_id_setup,
)
from ahbm.tools.opensim_ik import (
    IKOpenSimResult,
    clamped_bounds,
    inverse_kinematics_opensim,
    run_ik_setup,
)
from ahbm.tools.opensim_processing import (
    ProcessedCoordinates,
    natural_quintic_spline,
    opensim_coordinate_processing,
    opensim_lowpass_iir,
    opensim_pad,
)
from ahbm.tools.opensim_scale import (
    MarkerPlacerSetup,
    ModelScalerSetup,
    ScaleResult,
    ScaleSetup,
    read_scale_setup,
    run_scale,
    write_scale_factors,
)
from ahbm.tools.opensim_setup import (
    ExternalForceSpec,
    ExternalLoads,
    IDSetup,
    IKSetup,
    IKTask,
    read_external_loads,
    read_id_setup,
    read_ik_setup,
)
from ahbm.tools.opensim_so import (
    CoordinateActuatorSpec,
    JointReactionSpec,
    SOSetup,
    SOToolResult,
    StaticOptimizationSpec,
    read_actuators,
    read_so_setup,
    run_so_setup,
)

__all__ = [
    "ExternalForceSpec",
    "ExternalLoads",
    "IDSetup",
    "IKSetup",
    "IKTask",
    "read_external_loads",
    "read_id_setup",
    "read_ik_setup",
    "IDResult",
    "active_model_forces",
    "external_loads_f_ext",
    "inverse_dynamics_opensim",
    "opensim_coordinate_order",
    "run_id_setup",
    "IKOpenSimResult",
    "clamped_bounds",
    "inverse_kinematics_opensim",
    "run_ik_setup",
    "ProcessedCoordinates",
    "natural_quintic_spline",
    "opensim_coordinate_processing",
    "opensim_lowpass_iir",
    "opensim_pad",
    "MarkerPlacerSetup",
    "ModelScalerSetup",
    "ScaleResult",
    "ScaleSetup",
    "read_scale_setup",
    "run_scale",
    "write_scale_factors",
    "CoordinateActuatorSpec",
    "JointReactionSpec",
    "SOSetup",
    "SOToolResult",
    "StaticOptimizationSpec",
    "read_actuators",
    "read_so_setup",
    "run_so_setup",
]
