"""Smooth forms of the muscle energy models, for optimal control (numpy or CasADi).

The formulas of :mod:`ahbm.muscles.metabolics` (OpenSim's Umberger2010 and Bhargava2004
probes) with every ``if`` branch replaced by a ``tanh`` blend of documented steepness
(:class:`MetabolicSmoothing`), without input checks, so that they run on CasADi symbols
(``xp=casadi``) inside direct-collocation problems, where the probes' sharp branches
would make the cost non-differentiable. The blend
``left + (right - left) (1 + tanh(k c)) / 2`` and the first three steepnesses (names,
defaults) are those of OpenSim's ``Bhargava2004SmoothedMuscleMetabolics``
(Falisse, Dembia, Bianco), itself after the smoothed metabolic models of optimal-control
studies of walking; as the steepnesses grow, the rates tend to the probes'.

References
----------
Koelewijn AD, Heinrich D, van den Bogert AJ (2019) Metabolic cost calculations of gait
using musculoskeletal energy models, a comparison study. PLoS One 14:e0222037.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ahbm.errors import DataError
from ahbm.muscles._metabolic_models import _bhargava, _umberger
from ahbm.muscles.metabolics import (
    Bhargava2004Options,
    Bhargava2004Rates,
    Umberger2010Options,
    Umberger2010Rates,
    _check_params,
    _check_type,
)

__all__ = [
    "MetabolicSmoothing",
    "bhargava2004_smooth_metabolics",
    "umberger2010_smooth_metabolics",
]


@dataclass(frozen=True)
class MetabolicSmoothing:
    """Steepness of the ``tanh`` blends that replace the models' ``if`` branches.

    Each branch ``left if c <= 0 else right`` becomes ``left + (right - left) (1 +
    tanh(k c)) / 2``: the larger ``k``, the closer to the sharp model (the transition is
    about ``2/k`` wide, in the units of ``c``). ``None`` keeps a branch sharp
    (``casadi.if_else``, or ``fmax`` for corners). The first three steepnesses, their
    names and defaults are those of OpenSim's ``Bhargava2004SmoothedMuscleMetabolics``.

    Attributes
    ----------
    velocity_smoothing : float or None
        1/(m/s): shortening vs lengthening, on the fiber velocity (10).
    power_smoothing : float or None
        On the total rate before the non-negative-power adjustment: 1/W for Bhargava's
        model, 1/(W/kg) for Umberger's (which works per kilogram) (10).
    heat_rate_smoothing : float or None
        On the minimum heat rate and Umberger's 100 W/kg cap of the slow-twitch
        shortening heat: 1/W (Bhargava), 1/(W/kg) (Umberger) (10).
    excitation_smoothing : float or None
        Umberger's activation dependence ``A = u if u > a else (u + a)/2``,
        dimensionless (100).
    fiber_length_smoothing : float or None
        Corners in the normalized fiber length: Umberger's ``l̃M > 1`` branches and the
        knots of Bhargava's maintenance curve, dimensionless. ``None`` (default) keeps
        the corners, as OpenSim's smoothed model does; these functions are continuous.
    """

    velocity_smoothing: float | None = 10.0
    power_smoothing: float | None = 10.0
    heat_rate_smoothing: float | None = 10.0
    excitation_smoothing: float | None = 100.0
    fiber_length_smoothing: float | None = None

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            ok = isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
            if not (ok and math.isfinite(v) and v > 0):
                raise DataError(f"Expected `{f.name}` to be a number > 0 or None, got {v!r}")

    def _steepness(self):
        return (self.velocity_smoothing, self.power_smoothing, self.heat_rate_smoothing,
                self.excitation_smoothing, self.fiber_length_smoothing)  # fmt: skip


def umberger2010_smooth_metabolics(params, excitation, activation, normalized_fiber_length,
                                   fiber_velocity, active_fiber_force, active_force_length,
                                   *, options=None, smoothing=None,
                                   xp=np) -> Umberger2010Rates:  # fmt: skip
    """Umberger's model with ``tanh``-blended branches, on any array namespace.

    The formulas of :func:`umberger2010_metabolics` without input checks, every branch
    replaced by the blend of :class:`MetabolicSmoothing`, so that they run on CasADi
    symbols (``xp=casadi``) in optimal-control problems. As the steepnesses grow the
    rates tend to the sharp model's.

    Parameters
    ----------
    params : ahbm.muscles.metabolics.MetabolicParameters
    excitation, activation, normalized_fiber_length, fiber_velocity : array or symbols
    active_fiber_force, active_force_length : array or symbols
        As :func:`umberger2010_metabolics`, ``(..., n)``.
    options : Umberger2010Options, optional
    smoothing : MetabolicSmoothing, optional
        Steepnesses (defaults when None).
    xp : module, optional
        Array namespace with ``tanh``, ``sin``, ``cos``, ``fmax`` (and ``if_else`` for
        the branches left sharp): numpy or casadi.

    Returns
    -------
    Umberger2010Rates
        Fields are arrays (numpy) or expressions (casadi).

    Notes
    -----
    ``A^0.6`` has an infinite slope at ``A = 0``: keep a small lower bound on the
    excitation (or activation) in optimal control. With
    ``use_Bhargava_recruitment_model`` and a slow-twitch ratio of 0 the recruitment is
    undefined at ``u = 0`` (OpenSim sets it to 1): use a ratio > 0.

    Examples
    --------
    >>> from ahbm.muscles.metabolics import MetabolicParameters, umberger2010_metabolics
    >>> p = MetabolicParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1)
    >>> smooth = umberger2010_smooth_metabolics(p, 0.5, 0.3, 1.1, -0.5, 400.0, 0.9)
    >>> sharp = umberger2010_metabolics(p, 0.5, 0.3, 1.1, -0.5, 400.0, 0.9)
    >>> bool(abs(smooth.total[0] - sharp.total[0]) < 1e-3 * sharp.total[0])
    True
    """
    params = _check_params(params)
    options = _check_type(options, Umberger2010Options, "options")
    smoothing = _check_type(smoothing, MetabolicSmoothing, "smoothing")
    terms = _umberger(params, params.muscle_mass, excitation, activation,
                      normalized_fiber_length, fiber_velocity, active_fiber_force,
                      active_force_length, options, smoothing._steepness(), xp)  # fmt: skip
    return Umberger2010Rates(*terms)


def bhargava2004_smooth_metabolics(params, excitation, activation, normalized_fiber_length,
                                   fiber_velocity, active_fiber_force, fiber_force,
                                   active_force_length, *, options=None, smoothing=None,
                                   xp=np) -> Bhargava2004Rates:  # fmt: skip
    """Bhargava's model with ``tanh``-blended branches, on any array namespace.

    The formulas of :func:`bhargava2004_metabolics` without input checks, every branch
    replaced by the blend of :class:`MetabolicSmoothing` (with the default options and
    smoothing, the model of OpenSim's ``Bhargava2004SmoothedMuscleMetabolics`` with
    ``use_smoothing``), so that they run on CasADi symbols (``xp=casadi``).

    Parameters
    ----------
    params : ahbm.muscles.metabolics.MetabolicParameters
    excitation, activation, normalized_fiber_length, fiber_velocity : array or symbols
    active_fiber_force, fiber_force, active_force_length : array or symbols
        As :func:`bhargava2004_metabolics`, ``(..., n)``.
    options : Bhargava2004Options, optional
    smoothing : MetabolicSmoothing, optional
        Steepnesses (defaults when None).
    xp : module, optional
        numpy or casadi.

    Returns
    -------
    Bhargava2004Rates
        Fields are arrays (numpy) or expressions (casadi).

    Examples
    --------
    >>> import casadi
    >>> from ahbm.muscles.metabolics import MetabolicParameters
    >>> p = MetabolicParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1)
    >>> u, v = casadi.SX.sym("u"), casadi.SX.sym("v")
    >>> r = bhargava2004_smooth_metabolics(p, u, u, 1.0, v, 500.0, 520.0, 1.0, xp=casadi)
    >>> f = casadi.Function("edot", [u, v], [r.total[0]])
    >>> bool(float(f(0.5, -0.1)) > 0)
    True
    """
    params = _check_params(params)
    options = _check_type(options, Bhargava2004Options, "options")
    smoothing = _check_type(smoothing, MetabolicSmoothing, "smoothing")
    terms = _bhargava(params, params.muscle_mass, excitation, activation,
                      normalized_fiber_length, fiber_velocity, active_fiber_force, fiber_force,
                      active_force_length, options, smoothing._steepness(), xp)  # fmt: skip
    return Bhargava2004Rates(*terms)
