"""Muscles: musculotendon paths and wrapping, Hill-type muscle models, activation
dynamics, static optimization, joint reaction loads and muscle-driven simulation.

Layered above :mod:`ahbm.dynamics` (see ``docs/design.md``). Muscles belong to the
:class:`~ahbm.kinematics.tree.Model` (``model.muscles``, the model-file section
``"muscles"``) and are read from OpenSim models by :func:`ahbm.opensim.read_osim`.
"""

# Hill-type muscle models (hill.py)
from ahbm.muscles.hill import (
    CURVES,
    MuscleParameters,
    MuscleState,
    activation_rate,
    activation_to_excitation,
    active_force_length,
    degroote_activation_rate,
    degroote_rigid_tendon_force,
    degroote_tendon_residual,
    force_coefficients,
    force_velocity,
    muscle_equilibrium,
    passive_force_length,
    tendon_force_length,
)

# joint reaction loads (joint_reaction.py)
from ahbm.muscles.joint_reaction import (
    JointReactionResult,
    joint_reaction_loads,
    muscle_body_forces,
)

# musculotendon paths (path_elements.py, paths.py)
from ahbm.muscles.path_elements import (
    ConditionalPathPoint,
    MovingPathPoint,
    Muscle,
    PathPoint,
    PathWrap,
    WrapObject,
)
from ahbm.muscles.paths import (
    lengthening_speeds,
    moment_arms,
    muscle_lengths,
    path_loads,
    path_points,
)

# muscle-driven simulation (simulate.py)
from ahbm.muscles.simulate import (
    MuscleActuators,
    MuscleSimulationResult,
    muscle_tendon_forces,
    simulate_muscles,
)

# static optimization (static_optimization.py)
from ahbm.muscles.static_optimization import (
    StaticOptimizationResult,
    load_sharing,
    reserve_array,
    static_optimization,
)

# wrapping (wrapping.py, wrap_ellipsoid.py)
from ahbm.muscles.wrapping import (
    WRAP_KINDS,
    WrapResult,
    wrap_length_gradient,
    wrap_path_segment,
)

__all__: list[str] = [
    # paths
    "ConditionalPathPoint",
    "MovingPathPoint",
    "Muscle",
    "PathPoint",
    "PathWrap",
    "WrapObject",
    "lengthening_speeds",
    "moment_arms",
    "muscle_lengths",
    "path_loads",
    "path_points",
    # Hill-type muscle models
    "CURVES",
    "MuscleParameters",
    "MuscleState",
    "active_force_length",
    "activation_rate",
    "degroote_activation_rate",
    "degroote_rigid_tendon_force",
    "degroote_tendon_residual",
    "activation_to_excitation",
    "force_coefficients",
    "force_velocity",
    "muscle_equilibrium",
    "passive_force_length",
    "tendon_force_length",
    # muscle-driven simulation
    "MuscleActuators",
    "MuscleSimulationResult",
    "muscle_tendon_forces",
    "simulate_muscles",
    # static optimization and joint reaction loads
    "JointReactionResult",
    "StaticOptimizationResult",
    "joint_reaction_loads",
    "load_sharing",
    "muscle_body_forces",
    "reserve_array",
    "static_optimization",
    # wrapping
    "WRAP_KINDS",
    "WrapResult",
    "wrap_length_gradient",
    "wrap_path_segment",
]
