"""Dynamics: spatial (6-D) vector algebra, inverse dynamics (RNEA, segment
Newton-Euler), forward dynamics (ABA, CRBA, constrained systems), constraints,
force elements, simulation, and balance (ZMP, support polygons, centroidal
momentum).

:mod:`ahbm.dynamics.reference` holds the plain reference codings of forward
kinematics, RNEA, CRBA and ABA (one state per call, readable next to
Featherstone's tables, runnable on another array namespace such as CasADi);
use it module-qualified, ``reference.rnea(model, q, qd, qdd)``: its names are
not exported here, where ``rnea``, ``crba`` and ``aba`` are the compiled ones.

The names below load their module on first use, so ``import ahbm.dynamics``
imports neither scipy nor the compiled kernels.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "spatial",
        "inverse",
        "forward",
        "derivatives",
        "lagrangian",
        "wls",
        "segmental",
        "plate_assignment",
        "geometric_constraints",
        "coordinate_constraints",
        "constraints",
        "velocity_constraints",
        "constrained",
        "force_element",
        "joint_forces",
        "cartesian_forces",
        "smooth_contact",
        "forces",
        "coordinate_rates",
        "simulation",
        "simulation_events",
        "simulation_result",
        "controllers",
        "centroidal",
        "balance",
    ],
)
