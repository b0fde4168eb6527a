"""Optimal control and predictive dynamics on CasADi/IPOPT.

Symbolic dynamics from the same :class:`~ahbm.kinematics.tree.Model` (the
reference recursions of :mod:`ahbm.dynamics.reference` run on CasADi symbols),
transcriptions (direct collocation, multiple shooting, B-splines), objectives
and constraints. CasADi is the ``optimize`` extra (``pip install
"ahbm[optimize]"``); without it, using this package raises an error naming the
extra.
"""

__all__: list[str] = []
