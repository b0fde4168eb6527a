"""Muscles: musculotendon paths and wrapping, Hill-type muscle models, activation
dynamics, static optimization, joint reaction loads and muscle-driven simulation.

Layered above :mod:`ahbm.dynamics` (see ``DESIGN.md``). Muscles belong to the
:class:`~ahbm.kinematics.tree.Model` (``model.muscles``, the model-file section
``"muscles"``) and are read from OpenSim models by :func:`ahbm.io.read_osim`.
"""

__all__: list[str] = []
