"""Dynamics: spatial (6-D) vector algebra, inverse dynamics (RNEA, segment
Newton-Euler), forward dynamics (ABA, CRBA, constrained systems), constraints,
force elements and simulation.
"""

from ahbm.dynamics.forces import (
    BodyForce,
    BodyTorque,
    Bushing,
    ForceElement,
    GravityOverride,
    JointStop,
    PenaltyGroundContact,
    PointSpringDamper,
    RotationalSpringDamper,
    total_generalized_force,
    total_power,
)
from ahbm.dynamics.forward import aba, crba, forward_dynamics
from ahbm.dynamics.inverse import (
    gravity_torques,
    inverse_dynamics_residual,
    nonlinear_effects,
    rnea,
)
from ahbm.dynamics.segmental import (
    JointLoads,
    PlateAssignment,
    SagittalResult,
    SegmentMotion,
    assign_force_plates,
    clinical_moments,
    joint_power,
    loads_in_frame,
    newton_euler,
    sagittal_inverse_dynamics,
    segment_motion,
)
from ahbm.dynamics.simulate import (
    Event,
    SimulationResult,
    coordinate_event,
    point_height_event,
    q_rate,
    simulate,
)
from ahbm.dynamics.spatial import (
    force_cross,
    force_transform,
    motion_cross,
    motion_transform,
    spatial_inertia,
)

__all__: list[str] = [
    "BodyForce",
    "BodyTorque",
    "Bushing",
    "ForceElement",
    "GravityOverride",
    "JointStop",
    "PenaltyGroundContact",
    "PointSpringDamper",
    "RotationalSpringDamper",
    "total_generalized_force",
    "total_power",
    "Event",
    "SimulationResult",
    "coordinate_event",
    "point_height_event",
    "q_rate",
    "simulate",
    "aba",
    "crba",
    "force_cross",
    "force_transform",
    "forward_dynamics",
    "gravity_torques",
    "inverse_dynamics_residual",
    "motion_cross",
    "motion_transform",
    "nonlinear_effects",
    "rnea",
    "spatial_inertia",
    # segment-by-segment Newton-Euler (segmental.py)
    "JointLoads",
    "PlateAssignment",
    "SagittalResult",
    "SegmentMotion",
    "assign_force_plates",
    "clinical_moments",
    "joint_power",
    "loads_in_frame",
    "newton_euler",
    "sagittal_inverse_dynamics",
    "segment_motion",
]
