"""Static-optimization strengths of each muscle by its OpenSim class (rigid tendon).

:func:`ahbm.muscles.static_optimization` calls :func:`muscle_curves` to choose the
curves of every muscle from its class (``Muscle.model``) and :func:`strengths` to
compute ``(active, passive)`` group by group: Thelen2003Muscle and
DeGrooteFregly2016Muscle through :func:`ahbm.muscles.hill.force_coefficients`,
Millard2012EquilibriumMuscle through :func:`ahbm.muscles.millard.millard_force_coefficients`.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_choice
from ahbm.errors import ModelError

# OpenSim class name -> ahbm curve set
_CURVES_OF_MODEL = {
    "Thelen2003Muscle": "thelen2003",
    "DeGrooteFregly2016Muscle": "degroote2016",
    "Millard2012EquilibriumMuscle": "millard2012",
}
# curve sets that `curves=` may impose on every muscle (Hill parameters of any class)
_CURVES = ("thelen2003", "degroote2016")


def muscle_curves(muscles, curves) -> list:
    """The curve set of each muscle: `curves` for all, else from each muscle's class."""
    if curves is not None:
        return [as_choice(curves, "curves", _CURVES)] * len(muscles)
    unknown = [f"'{m.name}' ({m.model})" for m in muscles if m.model not in _CURVES_OF_MODEL]
    if unknown:
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ModelError(
            f"static optimization has no curves for the muscles {', '.join(unknown[:5])}{more}; "
            f"ahbm implements the classes {sorted(_CURVES_OF_MODEL)}. Change those muscles' "
            f"class or pass `curves=` (one of {_CURVES}) to use one curve set for all muscles"
        )
    return [_CURVES_OF_MODEL[m.model] for m in muscles]


def strengths(muscles, kinds, lmt, vmt, *, force_length_velocity, convention):
    """``(active, passive)`` per unit activation, shape ``(..., n_muscles)``, N.

    ``force_length_velocity=False``: ``active = F0``, ``passive = 0`` (ideal force
    generators, `lmt` and `vmt` unused and may be None).
    """
    from ahbm.muscles.hill import force_coefficients
    from ahbm.muscles.hill_curves import MuscleParameters

    if not force_length_velocity:
        f0 = np.asarray([float(m.max_isometric_force) for m in muscles])
        return f0, np.zeros(f0.shape)
    shape = np.broadcast_shapes(np.shape(lmt), np.shape(vmt))
    active, passive = np.empty(shape), np.empty(shape)
    for kind in dict.fromkeys(kinds):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        group = [muscles[i] for i in idx]
        lg, vg = (np.broadcast_to(x, shape)[..., idx] for x in (lmt, vmt))
        if kind == "millard2012":
            from ahbm.muscles.millard import millard_force_coefficients
            from ahbm.muscles.millard_curves import MillardParameters

            a, p = millard_force_coefficients(
                MillardParameters.from_muscles(group), lg, vg, convention=convention
            )
        else:
            a, p = force_coefficients(
                MuscleParameters.from_muscles(group), lg, vg, curves=kind, convention=convention
            )
        active[..., idx], passive[..., idx] = a, p
    return active, passive
