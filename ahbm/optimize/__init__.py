"""Optimal control and predictive dynamics on CasADi/IPOPT.

Symbolic dynamics from the same :class:`~ahbm.kinematics.tree.Model` (the
reference recursions of :mod:`ahbm.dynamics.reference` run on CasADi symbols),
transcriptions (direct collocation, multiple shooting, B-splines), objectives
and constraints. CasADi is the ``optimize`` extra (``pip install
"ahbm[optimize]"``); without it, using this package raises an error naming the
extra.

The names below load their module on first use, so ``import ahbm.optimize``
imports neither CasADi nor scipy.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "symbolic",
        "muscle_driven",
        "contact",
        "metabolic_objective",
        "phase",
        "problem",
        "constraints",
        "collision",
        "velocity_constraints",
        "objectives",
        "links",
        "transcription",
        "collocation",
        "shooting",
        "bspline",
        "solver",
        "result",
    ],
)
