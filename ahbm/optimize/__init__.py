"""Optimal control and predictive dynamics on CasADi/IPOPT.

Symbolic dynamics from the same :class:`~ahbm.kinematics.tree.Model` (the
reference recursions of :mod:`ahbm.dynamics.reference` run on CasADi symbols),
transcriptions (direct collocation, multiple shooting, B-splines), objectives
and constraints. CasADi is the ``optimize`` extra (``pip install
"ahbm[optimize]"``); without it, using this package raises an error naming the
extra.
"""

from ahbm.optimize.bspline import (
    BSplineTranscription,
    bspline_basis,
    bspline_curve,
    bspline_fit,
    clamped_knots,
)
from ahbm.optimize.collocation import HermiteSimpson, Trapezoidal
from ahbm.optimize.muscle_driven import (
    MuscleDrivenPhase,
    MuscleEffort,
    SymbolicMuscles,
    symbolic_muscles,
)
from ahbm.optimize.problem import (
    AverageSpeed,
    BoundaryConstraint,
    ContactPoint,
    Continuity,
    ControlRate,
    CustomCost,
    Effort,
    FinalTime,
    Impact,
    Jerk,
    NonPenetration,
    OptimalControlProblem,
    PathConstraint,
    PeakTorque,
    Periodic,
    Phase,
    Symmetry,
    TrackCoordinates,
    TrackGRF,
    TrackMarkers,
    Waypoint,
    ZMPInSupport,
)
from ahbm.optimize.result import OptimalControlResult, PhaseResult
from ahbm.optimize.shooting import MultipleShooting
from ahbm.optimize.solve import constraint_violations, solve
from ahbm.optimize.symbolic import CasadiOps, SymbolicDynamics, require_casadi, symbolic_dynamics
from ahbm.optimize.transcription import (
    NLP,
    PhaseGrid,
    PhaseSolution,
    Transcription,
    Variables,
    register_transcription,
    transcriptions,
)

__all__: list[str] = [
    # symbolic dynamics (symbolic.py; CasADi imported on first use)
    "require_casadi",
    "CasadiOps",
    "SymbolicDynamics",
    "symbolic_dynamics",
    # muscles on symbols, muscle-driven phases (muscle_driven.py)
    "symbolic_muscles",
    "SymbolicMuscles",
    "MuscleDrivenPhase",
    "MuscleEffort",
    # problem description (problem.py)
    "Phase",
    "OptimalControlProblem",
    "ContactPoint",
    "NonPenetration",
    "ZMPInSupport",
    "PathConstraint",
    "BoundaryConstraint",
    "Waypoint",
    "Effort",
    "Jerk",
    "ControlRate",
    "TrackCoordinates",
    "TrackMarkers",
    "TrackGRF",
    "FinalTime",
    "PeakTorque",
    "CustomCost",
    "Continuity",
    "Impact",
    "Periodic",
    "Symmetry",
    "AverageSpeed",
    # transcriptions (transcription.py, collocation.py)
    "NLP",
    "PhaseGrid",
    "PhaseSolution",
    "Transcription",
    "Variables",
    "register_transcription",
    "transcriptions",
    "Trapezoidal",
    "HermiteSimpson",
    # multiple shooting and B-splines (shooting.py, bspline.py)
    "MultipleShooting",
    "BSplineTranscription",
    "clamped_knots",
    "bspline_basis",
    "bspline_curve",
    "bspline_fit",
    # solving and results (solve.py, result.py)
    "solve",
    "constraint_violations",
    "OptimalControlResult",
    "PhaseResult",
]
