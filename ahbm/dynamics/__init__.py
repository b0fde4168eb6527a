"""Dynamics: spatial (6-D) vector algebra, inverse dynamics (RNEA, segment
Newton-Euler), forward dynamics (ABA, CRBA, constrained systems), constraints,
force elements, simulation, and balance (ZMP, support polygons, centroidal
momentum).

:mod:`ahbm.dynamics.reference` holds the plain reference codings of forward
kinematics, RNEA, CRBA and ABA (one state per call, readable next to
Featherstone's tables, runnable on another array namespace such as CasADi);
use it module-qualified, ``reference.rnea(model, q, qd, qdd)``: its names are
not exported here, where ``rnea``, ``crba`` and ``aba`` are the compiled ones.
"""

from ahbm.dynamics.balance import (
    centroidal_momentum_bias,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    extrapolated_com,
    inside_polygon,
    stability_margin,
    support_polygon,
    zmp,
    zmp_from_grf,
)
from ahbm.dynamics.cartesian_forces import shape_ground_contacts
from ahbm.dynamics.constrained import (
    compute_impulse,
    constrained_forward_dynamics,
    project_positions,
    project_velocities,
)
from ahbm.dynamics.constraints import (
    Constraint,
    ConstraintSet,
    ConstraintTerms,
    CoordinateCoupling,
    OrientationConstraint,
    PlaneConstraint,
    PointConstraint,
    PrescribedCoordinate,
    UserConstraint,
    constraint_from_dict,
    load_model_with_constraints,
    save_model_with_constraints,
)
from ahbm.dynamics.controllers import (
    ComputedTorqueController,
    DesiredTrajectory,
    PIDController,
    ReplayController,
    TrackingController,
)
from ahbm.dynamics.derivatives import (
    ABADerivatives,
    RNEADerivatives,
    aba_derivatives,
    rnea_derivatives,
)
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
    StatefulForceElement,
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
    SegmentMotion,
    assign_force_plates,
    clinical_moments,
    feet_on_plate,
    joint_power,
    loads_in_frame,
    loads_in_jcs,
    newton_euler,
)
from ahbm.dynamics.simulate import (
    SimulationEvent,
    SimulationResult,
    contact_release_event,
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
from ahbm.dynamics.wls import (
    WLSResult,
    WLSTrackingResult,
    inverse_dynamics_wls,
    inverse_dynamics_wls_tracking,
    transition_shares,
)

__all__: list[str] = [
    # balance (balance.py)
    "centroidal_momentum_bias",
    "centroidal_momentum_matrix",
    "centroidal_momentum_rate",
    "extrapolated_com",
    "inside_polygon",
    "stability_margin",
    "support_polygon",
    "zmp",
    "zmp_from_grf",
    # analytic derivatives (derivatives.py)
    "ABADerivatives",
    "RNEADerivatives",
    "aba_derivatives",
    "rnea_derivatives",
    # controllers for simulate (controllers.py)
    "ComputedTorqueController",
    "DesiredTrajectory",
    "PIDController",
    "ReplayController",
    "TrackingController",
    "compute_impulse",
    "constrained_forward_dynamics",
    "project_positions",
    "project_velocities",
    "Constraint",
    "ConstraintSet",
    "ConstraintTerms",
    "CoordinateCoupling",
    "OrientationConstraint",
    "PlaneConstraint",
    "PointConstraint",
    "PrescribedCoordinate",
    "UserConstraint",
    "constraint_from_dict",
    "load_model_with_constraints",
    "save_model_with_constraints",
    "BodyForce",
    "BodyTorque",
    "Bushing",
    "ForceElement",
    "GravityOverride",
    "JointStop",
    "PenaltyGroundContact",
    "shape_ground_contacts",
    "PointSpringDamper",
    "RotationalSpringDamper",
    "StatefulForceElement",
    "total_generalized_force",
    "total_power",
    "SimulationEvent",
    "SimulationResult",
    "contact_release_event",
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
    # weighted-least-squares inverse dynamics (wls.py)
    "WLSResult",
    "WLSTrackingResult",
    "inverse_dynamics_wls",
    "inverse_dynamics_wls_tracking",
    "transition_shares",
    # segment-by-segment Newton-Euler (segmental.py)
    "JointLoads",
    "PlateAssignment",
    "SegmentMotion",
    "assign_force_plates",
    "feet_on_plate",
    "clinical_moments",
    "joint_power",
    "loads_in_frame",
    "loads_in_jcs",
    "newton_euler",
]


def __getattr__(name: str):
    if name == "Event":  # deprecated alias of SimulationEvent (warns once)
        import importlib

        return importlib.import_module("ahbm.dynamics.simulate").Event
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
