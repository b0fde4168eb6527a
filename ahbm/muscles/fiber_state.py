"""Fiber quantities of De Groote's muscle on any array namespace (numpy or CasADi symbols).

:func:`degroote_fiber_state` gives the normalized fiber length, the fiber velocity, the
force-length multiplier and the active, passive and total fiber forces of De Groote et
al.'s (2016) muscle from its activation and musculotendon length and speed, with a rigid
tendon or (De Groote's implicit formulation) an elastic one whose normalized force and
force rate are given. These are the inputs of the muscle energy models
(:mod:`ahbm.muscles.metabolics`), so that a metabolic cost can be built on the symbols of
an optimal-control problem (:class:`ahbm.optimize.MetabolicCost`). The expressions are
those of :func:`ahbm.muscles.hill.degroote_rigid_tendon_force` and
:func:`~ahbm.muscles.hill.degroote_tendon_residual`; without input checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm.errors import DataError
from ahbm.muscles.hill import _dg_geometry
from ahbm.muscles.hill_curves import (
    _DG_C3,
    MuscleParameters,
    _dg_fal,
    _dg_fpe,
    _dg_ft_inverse,
    _dg_fv,
    _dg_kt,
)
from ahbm.types import ResultRepr

__all__ = ["FiberState", "degroote_fiber_state"]


@dataclass(frozen=True, repr=False)
class FiberState(ResultRepr):
    """Fiber quantities of De Groote's muscle, each ``(..., n)`` (arrays or expressions).

    Attributes
    ----------
    normalized_fiber_length : array or expression
        ``l̃M = lM / lM0``.
    fiber_velocity : array or expression
        ``vM``, m/s, lengthening positive.
    normalized_fiber_velocity : array or expression
        ``vM / (vmax lM0)``.
    active_force_length : array or expression
        ``fL(l̃M)``.
    active_fiber_force, passive_fiber_force, fiber_force : array or expression
        ``F0 a fL fV``, ``F0 (fPE + β ṽM)`` and their sum, along the fiber, N.
    cos_pennation : array or expression
        ``cos α``.
    tendon_force : array or expression
        N: ``fiber_force cos α`` (rigid tendon) or ``F0 F̃T`` (elastic).
    """

    normalized_fiber_length: object
    fiber_velocity: object
    normalized_fiber_velocity: object
    active_force_length: object
    active_fiber_force: object
    passive_fiber_force: object
    fiber_force: object
    cos_pennation: object
    tendon_force: object


def degroote_fiber_state(params, activation, mt_length, mt_speed, *, tendon_force=None,
                         tendon_force_rate=None, xp=np) -> FiberState:  # fmt: skip
    """Fiber length, velocity and forces of De Groote's muscle, on any array namespace.

    Parameters
    ----------
    params : MuscleParameters or object
        A :class:`MuscleParameters` (its NaN entries take De Groote's defaults), or any
        object with the attributes ``max_isometric_force``, ``optimal_fiber_length``,
        ``tendon_slack_length``, ``pennation_angle``, ``max_contraction_velocity``,
        ``active_force_width_scale``, ``passive_strain``, ``fiber_damping`` (and
        ``tendon_strain`` for elastic tendons) as numbers (symbols: one muscle per call).
    activation, mt_length, mt_speed : array_like or symbols, (..., n)
        Activation, musculotendon length (m) and lengthening speed (m/s).
    tendon_force, tendon_force_rate : array_like or symbols, (..., n), optional
        Elastic tendon: the normalized tendon force ``F̃T = FT / F0`` and its rate (1/s)
        of De Groote's implicit formulation. None (both): rigid tendon.
    xp : module, optional
        Array namespace with ``exp``, ``log``, ``sqrt``, ``arcsin`` (numpy, casadi).

    Returns
    -------
    FiberState

    Notes
    -----
    Fixed-width pennation ``lM sin α = lM0 sin α0``. Rigid tendon:
    ``lM cos α = lMT − lTs``, ``vM = vMT cos α``. Elastic tendon: ``lT = lTs fT⁻¹(F̃T)``,
    ``lM cos α = lMT − lT``, ``vM = (vMT − lTs Ḟ̃T / fT'(l̃T)) cos α``. At a rigid tendon the
    fields equal those of ``muscle_equilibrium(..., curves="degroote2016",
    rigid_tendon=True)``, and at ``Ḟ̃T = 0`` with the equilibrium tendon force those of
    its elastic equilibrium (``tests/muscles/test_fiber_state.py``).

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> s = degroote_fiber_state(p, 1.0, 0.3, 0.0)
    >>> round(float(s.normalized_fiber_length[0]), 6), round(float(s.active_fiber_force[0]), 6)
    (1.0, 1000.0)
    """
    if isinstance(params, MuscleParameters):
        params = params.resolved("degroote2016")
    elastic = tendon_force is not None or tendon_force_rate is not None
    if elastic and (tendon_force is None or tendon_force_rate is None):
        raise DataError(
            "degroote_fiber_state: give both `tendon_force` and `tendon_force_rate` "
            "(elastic tendon) or neither (rigid tendon)"
        )
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    lts = params.tendon_slack_length
    if elastic:
        e0 = params.tendon_strain
        ltn = _dg_ft_inverse(tendon_force, e0, xp)
        lm, cos, _ = _dg_geometry(params, mt_length, lts * ltn, xp)
        slope = _dg_kt(e0) * (tendon_force + _DG_C3)  # dfT/dl̃T
        vm = (mt_speed - lts * tendon_force_rate / slope) * cos
    else:
        lm, cos, _ = _dg_geometry(params, mt_length, lts, xp)
        vm = mt_speed * cos
    ln = lm / lopt
    vn = vm / (params.max_contraction_velocity * lopt)
    fal = _dg_fal(ln, params.active_force_width_scale, xp)
    active = f0 * activation * fal * _dg_fv(vn, xp)
    passive = f0 * (_dg_fpe(ln, params.passive_strain, xp) + params.fiber_damping * vn)
    fiber = active + passive
    ft = f0 * tendon_force if elastic else fiber * cos
    return FiberState(ln, vm, vn, fal, active, passive, fiber, cos, ft)
