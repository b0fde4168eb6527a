"""Muscles: musculotendon paths and wrapping, Hill-type muscle models, activation
dynamics, static optimization, joint reaction loads and muscle-driven simulation.

Layered above :mod:`ahbm.dynamics` (see ``docs/design.md``). Muscles belong to the
:class:`~ahbm.kinematics.tree.Model` (``model.muscles``, the model-file section
``"muscles"``) and are read from OpenSim models by :func:`ahbm.opensim.read_osim`.

- :mod:`ahbm.muscles.path_elements`: path points, wrap objects, path wraps and
  muscles; :mod:`ahbm.muscles.paths`: lengths, lengthening speeds, moment arms.
- :mod:`ahbm.muscles.wrapping`: wrapping over cylinders, spheres and ellipsoids.
- :mod:`ahbm.muscles.hill_curves` (curves, parameters) and
  :mod:`ahbm.muscles.hill` (equilibrium, activation dynamics): Hill-type models;
  :mod:`ahbm.muscles.fiber_state`: De Groote's fiber quantities on numpy or CasADi.
- :mod:`ahbm.muscles.millard_curves` (curves, parameters) and
  :mod:`ahbm.muscles.millard` (equilibrium, activation dynamics, static-optimization
  coefficients): OpenSim's Millard2012EquilibriumMuscle;
  :mod:`ahbm.muscles.millard_symbolic`: the same on CasADi symbols.
- :mod:`ahbm.muscles.simulate`: muscle-driven simulation.
- :mod:`ahbm.muscles.force_sharing`: static optimization (muscle force sharing);
  :mod:`ahbm.muscles.joint_reaction`: joint reaction loads.
- :mod:`ahbm.muscles.metabolics`: metabolic cost of muscle work (Umberger 2010,
  Bhargava et al. 2004, as OpenSim's probes); :mod:`ahbm.muscles.metabolics_smooth`:
  their smoothed forms for optimal control (numpy or CasADi).
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "path_elements",
        "paths",
        "hill_curves",
        "hill",
        "fiber_state",
        "millard_curves",
        "millard",
        "millard_symbolic",
        "simulate",
        "force_sharing",
        "joint_reaction",
        "metabolics",
        "metabolics_smooth",
        "wrapping",
    ],
)
