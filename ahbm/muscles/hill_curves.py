"""Hill-type muscle curves and parameters (the models are in :mod:`ahbm.muscles.hill`).

The force-length, force-velocity and tendon curves of Thelen (2003) and De Groote et al.
(2016) as OpenSim's ``Thelen2003Muscle`` and ``DeGrooteFregly2016Muscle`` evaluate them,
their derivatives and inverses (private, used by the equilibrium and the simulation), and
:class:`MuscleParameters`. See :mod:`ahbm.muscles.hill` for the models and references.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_choice, as_float_array
from ahbm.errors import DataError
from ahbm.muscles._arrays import _muscle_array, _per_muscle_arrays
from ahbm.types import ResultRepr

__all__ = [
    "CURVES",
    "MuscleParameters",
    "active_force_length",
    "force_velocity",
    "passive_force_length",
    "tendon_force_length",
]

#: The curve sets, by name.
CURVES = ("thelen2003", "degroote2016")


# Curve-set defaults of the parameters whose OpenSim default differs between the models.
_MODEL_DEFAULTS = {
    "thelen2003": {"tendon_strain": 0.04, "deactivation_time_constant": 0.05},
    "degroote2016": {"tendon_strain": 0.049, "deactivation_time_constant": 0.06},
}
# OpenSim class names -> curve set (for the defaults of MuscleParameters.from_muscles).
_CLASS_CURVES = {
    "Thelen2003Muscle": "thelen2003",
    "DeGrooteFregly2016Muscle": "degroote2016",
}
# Millard2012EquilibriumMuscle: the strains at one normalized force of its tendon and fiber
# curves (OpenSim's defaults 0.049 and 0.7), which DeGrooteFregly2016Muscle.replaceMuscles
# copies into the De Groote muscle.
_MILLARD_CURVES = {
    "tendon_strain": ("TendonForceLengthCurve", 0.049),
    "passive_strain": ("FiberForceLengthCurve", 0.7),
}

# De Groote et al. (2016) constants, as OpenSim's DeGrooteFregly2016Muscle uses them.
_DG_B = (
    (0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465),
    (0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188),
    (0.1, 1.0, 0.353553390593274, 0.0),
)
_DG_KPE = 4.0
_DG_MIN_NORM_FIBER_LENGTH = 0.2
_DG_C1, _DG_C2, _DG_C3 = 0.2, 1.0, 0.2
_DG_D1, _DG_D2, _DG_D3, _DG_D4 = -0.3211346127989808, -8.149, -0.374, 0.8825327733249912
_DG_MAX_NORM_TENDON_FORCE = 5.0

# Thelen (2003) tendon toe region constants (OpenSim's Thelen2003Muscle::calcfse).
_TH_KTOE = 3.0
_TH_FTOE = 0.33


def _check_curves(curves) -> str:
    return as_choice(curves, "curves", CURVES)


# ---------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------

_FIELD_DEFAULTS = {
    "pennation_angle": 0.0,
    "max_contraction_velocity": 10.0,
    "activation_time_constant": 0.015,
    "deactivation_time_constant": math.nan,
    "tendon_strain": math.nan,
    "passive_strain": 0.6,
    "kshape_active": 0.45,
    "kshape_passive": 5.0,
    "af": 0.25,
    "flen": 1.4,
    "fv_extrapolation_threshold": 0.95,
    "maximum_pennation_angle": math.acos(0.1),
    "minimum_activation": 0.01,
    "active_force_width_scale": 1.0,
    "fiber_damping": 0.0,
    "activation_smoothing": 0.1,
}

# Keys of Muscle.parameters (OpenSim property names) read by from_muscles.
_PARAMETER_KEYS = {
    "tendon_strain": ("FmaxTendonStrain", "tendon_strain_at_one_norm_force"),
    "passive_strain": ("FmaxMuscleStrain", "passive_fiber_strain_at_one_norm_force"),
    "kshape_active": ("KshapeActive",),
    "kshape_passive": ("KshapePassive",),
    "af": ("Af",),
    "flen": ("Flen",),
    "fv_extrapolation_threshold": ("fv_linear_extrap_threshold",),
    "maximum_pennation_angle": ("maximum_pennation_angle",),
    "minimum_activation": ("minimum_activation",),
    "active_force_width_scale": ("active_force_width_scale",),
    "fiber_damping": ("fiber_damping",),
    "activation_smoothing": ("activation_dynamics_smoothing",),
}


@dataclass(frozen=True, repr=False, kw_only=True)
class MuscleParameters(ResultRepr):
    """Parameters of ``n`` Hill-type muscles, one array of shape ``(n,)`` per parameter.

    Scalars are broadcast to all muscles. A NaN in ``tendon_strain`` or
    ``deactivation_time_constant`` means the default of the curve set in use (0.04 and
    0.05 s for ``"thelen2003"``, 0.049 and 0.06 s for ``"degroote2016"``, OpenSim's
    defaults).

    Parameters
    ----------
    max_isometric_force : array_like, (n,)
        ``F0``, N (> 0).
    optimal_fiber_length : array_like, (n,)
        ``lM0``, m (> 0).
    tendon_slack_length : array_like, (n,)
        ``lTs``, m (> 0).
    pennation_angle : array_like, (n,), optional
        Pennation at the optimal fiber length, rad, in [0, pi/2). Default 0.
    max_contraction_velocity : array_like, (n,), optional
        ``vmax`` in optimal fiber lengths per second. Default 10.
    activation_time_constant, deactivation_time_constant : array_like, (n,), optional
        s. Defaults 0.015 and the curve set's default.
    tendon_strain : array_like, (n,), optional
        Tendon strain at ``F0`` (Thelen's ``FmaxTendonStrain``, De Groote's
        ``tendon_strain_at_one_norm_force``).
    passive_strain : array_like, (n,), optional
        Fiber strain at which the passive force is ``F0`` (``FmaxMuscleStrain``,
        ``passive_fiber_strain_at_one_norm_force``). Default 0.6.
    kshape_active, kshape_passive, af, flen, fv_extrapolation_threshold : array_like, optional
        Thelen's curve shape factors (defaults 0.45, 5, 0.25, 1.4, 0.95).
    maximum_pennation_angle : array_like, optional
        Thelen's pennation limit, rad (default ``acos(0.1)``).
    minimum_activation : array_like, optional
        Thelen's activation floor (default 0.01).
    active_force_width_scale, fiber_damping, activation_smoothing : array_like, optional
        De Groote's active curve width scale (>= 1, default 1), fiber damping
        (normalized, default 0) and ``tanh`` smoothing of the activation dynamics
        (default 0.1).
    names : sequence of str, optional
        Muscle names (default ``"muscle_0"``, ...).

    Raises
    ------
    DataError
        A parameter that is not a finite number, has the wrong count, or is out of
        its range; the message names the parameter and the muscle.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=[1000.0, 500.0],
    ...                      optimal_fiber_length=0.1, tendon_slack_length=[0.2, 0.25])
    >>> p.n, p.optimal_fiber_length
    (2, array([0.1, 0.1]))
    """

    max_isometric_force: np.ndarray
    optimal_fiber_length: np.ndarray
    tendon_slack_length: np.ndarray
    pennation_angle: np.ndarray = 0.0
    max_contraction_velocity: np.ndarray = 10.0
    activation_time_constant: np.ndarray = 0.015
    deactivation_time_constant: np.ndarray = math.nan
    tendon_strain: np.ndarray = math.nan
    passive_strain: np.ndarray = 0.6
    kshape_active: np.ndarray = 0.45
    kshape_passive: np.ndarray = 5.0
    af: np.ndarray = 0.25
    flen: np.ndarray = 1.4
    fv_extrapolation_threshold: np.ndarray = 0.95
    maximum_pennation_angle: np.ndarray = math.acos(0.1)
    minimum_activation: np.ndarray = 0.01
    active_force_width_scale: np.ndarray = 1.0
    fiber_damping: np.ndarray = 0.0
    activation_smoothing: np.ndarray = 0.1
    names: tuple = None

    def __post_init__(self):
        _per_muscle_arrays(self, "muscle parameters")
        self._check()

    def _check(self):
        def bad(name, mask, what):
            if np.any(mask):
                i = int(np.flatnonzero(mask)[0])
                v = float(getattr(self, name)[i])
                raise DataError(f"`{name}` of muscle {self.names[i]!r} must be {what}; got {v!r}")

        for name in dataclasses.fields(self):
            if name.name == "names":
                continue
            a = getattr(self, name.name)
            nan_ok = name.name in ("tendon_strain", "deactivation_time_constant")
            what = "a finite number"
            if name.name == "max_contraction_velocity":
                what += " (NaN: undefined in its model file; set the muscle's value, e.g. 10)"
            bad(name.name, ~np.isfinite(a) & ~(nan_ok & np.isnan(a)), what)
        for name in (
            "max_isometric_force",
            "optimal_fiber_length",
            "tendon_slack_length",
            "max_contraction_velocity",
            "activation_time_constant",
            "passive_strain",
            "kshape_active",
            "kshape_passive",
            "af",
        ):
            bad(name, ~(getattr(self, name) > 0), "> 0")
        for name in ("tendon_strain", "deactivation_time_constant"):
            a = getattr(self, name)
            bad(name, ~np.isnan(a) & ~(a > 0), "> 0 (or NaN for the curve set's default)")
        bad(
            "pennation_angle",
            ~((self.pennation_angle >= 0) & (self.pennation_angle < np.pi / 2)),
            "in [0, pi/2) rad",
        )
        mp = self.maximum_pennation_angle
        bad("maximum_pennation_angle", ~((mp >= 0) & (mp <= np.pi / 2)), "in [0, pi/2] rad")
        bad("flen", ~(self.flen > 1), "> 1")
        bad(
            "fv_extrapolation_threshold",
            ~(self.fv_extrapolation_threshold > 1 / self.flen),
            "> 1/flen",
        )
        ma = self.minimum_activation
        bad("minimum_activation", ~((ma >= 0) & (ma < 1)), "in [0, 1)")
        bad("active_force_width_scale", ~(self.active_force_width_scale >= 1), ">= 1")
        bad("fiber_damping", ~(self.fiber_damping >= 0), ">= 0")
        bad("activation_smoothing", ~(self.activation_smoothing > 0), "> 0")

    @property
    def n(self) -> int:
        """Number of muscles."""
        return len(self.names)

    def __len__(self) -> int:
        return self.n

    def select(self, muscles) -> MuscleParameters:
        """The parameters of a subset of the muscles (names or indices, in that order)."""
        if isinstance(muscles, (str, bytes)) or not hasattr(muscles, "__iter__"):
            raise DataError(
                f"Expected `muscles` to be a sequence of names or indices, got "
                f"{type(muscles).__name__}"
            )
        idx = []
        for m in muscles:
            if not isinstance(m, (str, int, np.integer)) or isinstance(m, (bool, np.bool_)):
                raise DataError(f"Expected muscle names (str) or indices (int), got {m!r}")
            if isinstance(m, str):
                if m not in self.names:
                    raise DataError(
                        f"no muscle named {m!r} in the parameters; known: {list(self.names)}"
                    )
                idx.append(self.names.index(m))
            else:
                i = int(m)
                if not -self.n <= i < self.n:
                    raise DataError(f"muscle index {i} out of range for {self.n} muscles")
                idx.append(i % self.n)
        kw = {
            f.name: getattr(self, f.name)[idx]
            for f in dataclasses.fields(self)
            if f.name != "names"
        }
        return MuscleParameters(**kw, names=[self.names[i] for i in idx])

    def resolved(self, curves: str) -> MuscleParameters:
        """A copy with the NaN (curve-set default) entries filled for `curves`."""
        curves = _check_curves(curves)
        kw = {}
        for name, default in _MODEL_DEFAULTS[curves].items():
            a = getattr(self, name)
            if np.isnan(a).any():
                kw[name] = np.where(np.isnan(a), default, a)
        return dataclasses.replace(self, **kw) if kw else self

    @classmethod
    def from_muscles(cls, muscles) -> MuscleParameters:
        """The parameters of a sequence of muscles (``model.muscles``).

        Parameters
        ----------
        muscles : sequence of Muscle
            Objects with the attributes ``name``, ``max_isometric_force``,
            ``optimal_fiber_length``, ``tendon_slack_length`` and, optionally,
            ``pennation_angle``, ``max_contraction_velocity``,
            ``activation_time_constant``, ``deactivation_time_constant``, ``model``
            (OpenSim class name) and ``parameters`` (dict of model-specific values by
            OpenSim property name: ``FmaxTendonStrain``, ``FmaxMuscleStrain``,
            ``KshapeActive``, ``KshapePassive``, ``Af``, ``Flen``,
            ``fv_linear_extrap_threshold``, ``maximum_pennation_angle``,
            ``minimum_activation``, ``tendon_strain_at_one_norm_force``,
            ``passive_fiber_strain_at_one_norm_force``, ``active_force_width_scale``,
            ``fiber_damping``, ``activation_dynamics_smoothing``). For
            ``Millard2012...Muscle`` the ``strain_at_one_norm_force`` of its
            ``TendonForceLengthCurve`` and ``FiberForceLengthCurve`` (defaults 0.049
            and 0.7), as OpenSim's ``DeGrooteFregly2016Muscle.replaceMuscles`` maps them.

        Returns
        -------
        MuscleParameters
            In the order of `muscles`. A muscle of class ``Thelen2003Muscle`` without
            ``FmaxTendonStrain`` gets 0.04, a ``DeGrooteFregly2016Muscle`` or a Millard
            muscle 0.049; other classes keep NaN (the curve set's default).
        """
        if isinstance(muscles, (str, bytes, dict)) or not hasattr(muscles, "__iter__"):
            raise DataError(
                f"Expected `muscles` to be a sequence of Muscle objects (model.muscles), got "
                f"{type(muscles).__name__}"
            )
        muscles = list(muscles)
        if not muscles:
            raise DataError("Expected `muscles` to hold at least one muscle, got none")
        cols = {k: [] for k in _FIELD_DEFAULTS}
        cols.update(max_isometric_force=[], optimal_fiber_length=[], tendon_slack_length=[])
        names = []
        for i, m in enumerate(muscles):
            name = getattr(m, "name", None)
            names.append(str(name) if name is not None else f"muscle_{i}")
            for req in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length"):
                if not hasattr(m, req):
                    raise DataError(
                        f"muscle {names[-1]!r} (item {i} of `muscles`) has no `{req}`; pass "
                        "Muscle objects (ahbm.muscles.paths) or objects with its attributes"
                    )
                cols[req].append(getattr(m, req))
            extras = getattr(m, "parameters", None) or {}
            if not isinstance(extras, dict):
                raise DataError(f"`parameters` of muscle {names[-1]!r} must be a dict")
            curves = _CLASS_CURVES.get(getattr(m, "model", None))
            for k, default in _FIELD_DEFAULTS.items():
                value = (
                    getattr(m, k, None)
                    if k
                    in (
                        "pennation_angle",
                        "max_contraction_velocity",
                        "activation_time_constant",
                        "deactivation_time_constant",
                    )
                    else None
                )
                for key in _PARAMETER_KEYS.get(k, ()) + (k,):
                    if value is None and key in extras:
                        value = extras[key]
                if value is None and curves is not None:
                    value = _MODEL_DEFAULTS[curves].get(k)
                if (
                    value is None
                    and k in _MILLARD_CURVES
                    and str(getattr(m, "model", "")).startswith("Millard2012")
                ):
                    curve, fallback = _MILLARD_CURVES[k]
                    sub = extras.get(curve)
                    value = (
                        sub.get("strain_at_one_norm_force", fallback)
                        if isinstance(sub, dict)
                        else fallback
                    )
                cols[k].append(default if value is None else value)
        return cls(**{k: np.asarray(v, dtype=float) for k, v in cols.items()}, names=names)


def _param(params, name, curves):
    """Parameter `name` as an (n,) array (or the scalar default when params is None)."""
    if params is None:
        v = _FIELD_DEFAULTS[name]
        if math.isnan(v):
            v = _MODEL_DEFAULTS[curves][name]
        return v
    a = getattr(params, name)
    if name in _MODEL_DEFAULTS[curves]:
        a = np.where(np.isnan(a), _MODEL_DEFAULTS[curves][name], a)
    return a


def _check_params(params, name="params") -> MuscleParameters:
    if not isinstance(params, MuscleParameters):
        raise DataError(
            f"Expected `{name}` to be a MuscleParameters (e.g. "
            f"MuscleParameters.from_muscles(model.muscles)), got {type(params).__name__}"
        )
    return params


# ---------------------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------------------


def _curve_input(x, name, params):
    if params is not None:
        _check_params(params)
        return _muscle_array(x, name, params.n)
    return as_float_array(x, name)


def active_force_length(lm_norm, *, curves="thelen2003", params=None) -> np.ndarray:
    """Active force-length multiplier ``fL(l̃M)`` (dimensionless, 1 at optimal length).

    Parameters
    ----------
    lm_norm : array_like, (..., n) or any shape when `params` is None
        Normalized fiber length ``lM / lM0``.
    curves : {"thelen2003", "degroote2016"}
    params : MuscleParameters, optional
        Shape factors per muscle (``kshape_active``, ``active_force_width_scale``);
        default: the curve set's defaults.

    Returns
    -------
    ndarray, same shape as `lm_norm`

    Raises
    ------
    DataError
        Bad `curves`, a non-numeric or non-finite `lm_norm`, or a last axis that does not
        match `params`.

    Notes
    -----
    Thelen (2003) eq. 3: ``fL = exp(-(l̃ - 1)² / γ)`` with ``γ = kshape_active`` (0.45).
    De Groote et al. (2016): ``fL = Σ_{i=1}^{3} b1i exp(-½ (x - b2i)² / (b3i + b4i x)²)``
    with ``x = (l̃ - 1)/s + 1`` (``s = active_force_width_scale``) and OpenSim's constants.

    Examples
    --------
    >>> float(active_force_length(1.0)), round(float(active_force_length(1.0,
    ...     curves="degroote2016")), 12)
    (1.0, 1.0)
    """
    curves = _check_curves(curves)
    lm = _curve_input(lm_norm, "lm_norm", params)
    if curves == "thelen2003":
        return _th_fal(lm, _param(params, "kshape_active", curves))
    return _dg_fal(lm, _param(params, "active_force_width_scale", curves))


def passive_force_length(lm_norm, *, curves="thelen2003", params=None) -> np.ndarray:
    """Passive (parallel elastic) fiber force multiplier ``fPE(l̃M)`` (dimensionless).

    Parameters
    ----------
    lm_norm : array_like, (..., n)
        Normalized fiber length.
    curves : {"thelen2003", "degroote2016"}
    params : MuscleParameters, optional
        ``passive_strain`` (``ε0M``) and Thelen's ``kshape_passive`` per muscle.

    Returns
    -------
    ndarray, same shape as `lm_norm`

    Raises
    ------
    DataError
        Bad `curves`, a non-numeric or non-finite `lm_norm`, or a last axis that does not
        match `params`.

    Notes
    -----
    Thelen (2003) eq. 2: ``fPE = (exp(kPE (l̃ - 1)/ε0M) - 1) / (exp(kPE) - 1)`` for
    ``l̃ > 1``, else 0 (``kPE = 5``, ``ε0M = 0.6``). De Groote (as OpenSim modifies it):
    ``fPE = (exp(4 (l̃ - 1)/ε0M) - e_min) / (exp(4) - e_min)``,
    ``e_min = exp(4 (0.2 - 1)/ε0M)``, zero at ``l̃ = 0.2`` (negative below).
    Both give 1 at ``l̃ = 1 + ε0M``.

    Examples
    --------
    >>> round(float(passive_force_length(1.6)), 12)
    1.0
    """
    curves = _check_curves(curves)
    lm = _curve_input(lm_norm, "lm_norm", params)
    e0 = _param(params, "passive_strain", curves)
    if curves == "thelen2003":
        return _th_fpe(lm, e0, _param(params, "kshape_passive", curves))
    return _dg_fpe(lm, e0)


def tendon_force_length(lt_norm, *, curves="thelen2003", params=None) -> np.ndarray:
    """Tendon force multiplier ``fT(l̃T)`` (tendon force / ``F0``).

    Parameters
    ----------
    lt_norm : array_like, (..., n)
        Normalized tendon length ``lT / lTs``.
    curves : {"thelen2003", "degroote2016"}
    params : MuscleParameters, optional
        ``tendon_strain`` (strain at ``F0``) per muscle; default 0.04 (Thelen) or 0.049
        (De Groote).

    Returns
    -------
    ndarray, same shape as `lt_norm`

    Raises
    ------
    DataError
        Bad `curves`, a non-numeric or non-finite `lt_norm`, or a last axis that does not
        match `params`.

    Notes
    -----
    Thelen (2003) eq. 1 as OpenSim evaluates it: exponential toe
    ``fT = F_toe (exp(k_toe ε/ε_toe) - 1)/(exp(k_toe) - 1)`` for ``0 < ε <= ε_toe`` and
    linear ``fT = k_lin (ε - ε_toe) + F_toe`` above, with ``k_toe = 3``,
    ``F_toe = 0.33``, ``ε_toe = 99 ε0 e³/(166 e³ - 67)`` and
    ``k_lin = 0.67/(ε0 - ε_toe)`` (continuous slope at the toe); 0 for ``ε <= 0``.
    De Groote (2016): ``fT = c1 exp(kT (l̃T - c2)) - c3`` with ``c1 = 0.2``, ``c2 = 1``,
    ``c3 = 0.2`` (OpenSim's values, so ``fT(1) = 0``) and
    ``kT = ln((1 + c3)/c1)/(1 + ε0 - c2)``. Both give 1 at ``l̃T = 1 + ε0``.

    Examples
    --------
    >>> round(float(tendon_force_length(1.04)), 12)
    1.0
    """
    curves = _check_curves(curves)
    lt = _curve_input(lt_norm, "lt_norm", params)
    e0 = _param(params, "tendon_strain", curves)
    if curves == "thelen2003":
        return _th_fse(lt, e0)
    return _dg_ft(lt, e0)


def force_velocity(vm_norm, *, curves="thelen2003", params=None, activation=1.0) -> np.ndarray:
    """Force-velocity multiplier ``fV(ṽM)`` (dimensionless, 1 at zero speed).

    Parameters
    ----------
    vm_norm : array_like, (..., n)
        Normalized fiber velocity ``vM / (vmax lM0)`` (lengthening positive).
    curves : {"thelen2003", "degroote2016"}
    params : MuscleParameters, optional
        Thelen's ``af``, ``flen``, ``fv_extrapolation_threshold``,
        ``minimum_activation``.
    activation : array_like, (..., n), optional
        Thelen's relation depends on activation (clamped to
        ``[minimum_activation, 1]``); ignored by De Groote's. Default 1.

    Returns
    -------
    ndarray
        Broadcast shape of `vm_norm` and `activation`.

    Raises
    ------
    DataError
        Bad `curves`, a non-numeric or non-finite `vm_norm` or `activation`, or a last axis
        that does not match `params`.

    Notes
    -----
    Thelen (2003) eq. 6 solved for the force: with ``k = 0.25 + 0.75 a``,
    shortening (``-k < ṽ <= 0``) ``fV = (k + ṽ)/(k - ṽ/Af)``, lengthening
    ``fV = (k + c ṽ flen)/(k + c ṽ)`` with ``c = (2 + 2/Af)/(flen - 1)`` up to
    ``fV = thr·flen`` (``thr = fv_extrapolation_threshold``), linear beyond (OpenSim's
    extrapolation, continuous slope); ``fV = 0`` for ``ṽ <= -k``. This is the exact
    inverse of OpenSim's ``calcdlceN`` (OpenSim inverts it by Newton iteration).
    De Groote (2016): ``fV = d1 ln(d2 ṽ + d3 + sqrt((d2 ṽ + d3)² + 1)) + d4``.

    Examples
    --------
    >>> float(force_velocity(0.0)), float(force_velocity(-1.0))
    (1.0, 0.0)
    """
    curves = _check_curves(curves)
    v = _curve_input(vm_norm, "vm_norm", params)
    if curves == "degroote2016":
        return _dg_fv(v)
    a = (
        _muscle_array(activation, "activation", params.n)
        if params is not None
        else (as_float_array(activation, "activation"))
    )
    a = np.clip(a, _param(params, "minimum_activation", curves), 1.0)
    return _th_fv(
        v,
        a,
        _param(params, "af", curves),
        _param(params, "flen", curves),
        _param(params, "fv_extrapolation_threshold", curves),
    )


# Thelen curves and derivatives ---------------------------------------------------------


def _th_fal(lm, kshape):
    return np.exp(-((lm - 1.0) ** 2) / kshape)


def _th_dfal(lm, kshape):
    return -2.0 * (lm - 1.0) / kshape * np.exp(-((lm - 1.0) ** 2) / kshape)


def _th_fpe(lm, e0, kpe):
    with np.errstate(over="ignore"):
        f = (np.exp(kpe * (lm - 1.0) / e0) - 1.0) / (np.exp(kpe) - 1.0)
    return np.where(lm > 1.0, f, 0.0)


def _th_dfpe(lm, e0, kpe):
    with np.errstate(over="ignore"):
        d = kpe / e0 * np.exp(kpe * (lm - 1.0) / e0) / (np.exp(kpe) - 1.0)
    return np.where(lm > 1.0, d, 0.0)


def _th_toe(e0):
    e3 = math.exp(3.0)
    etoe = 99.0 * e0 * e3 / (166.0 * e3 - 67.0)
    klin = 0.67 / (e0 - etoe)
    return etoe, klin


def _th_fse(lt, e0):
    x = lt - 1.0
    etoe, klin = _th_toe(e0)
    with np.errstate(over="ignore"):
        toe = _TH_FTOE / (math.exp(_TH_KTOE) - 1.0) * (np.exp(_TH_KTOE * x / etoe) - 1.0)
    return np.where(x > etoe, klin * (x - etoe) + _TH_FTOE, np.where(x > 0.0, toe, 0.0))


def _th_dfse(lt, e0):
    x = lt - 1.0
    etoe, klin = _th_toe(e0)
    with np.errstate(over="ignore"):
        toe = (
            _TH_FTOE / (math.exp(_TH_KTOE) - 1.0) * (_TH_KTOE / etoe) * np.exp(_TH_KTOE * x / etoe)
        )
    return np.where(x > etoe, klin, np.where(x > 0.0, toe, 0.0))


def _th_fv(v, a, af, flen, thr):
    """Thelen's force-velocity multiplier (exact inverse of OpenSim's calcdlceN)."""
    k = 0.25 + 0.75 * a
    c = (2.0 + 2.0 / af) / (flen - 1.0)
    u = thr * flen  # normalized force where the linear extrapolation starts
    b0 = c * (flen - u)
    v_e = k * (u - 1.0) / b0
    slope = k / b0 + k * (u - 1.0) * c / b0**2  # d(ṽ)/d(fV) at fV = u
    with np.errstate(divide="ignore", invalid="ignore"):
        short = (k + v) / (k - v / af)
        lengthen = (k + c * v * flen) / (k + c * v)
    fv = np.where(v <= 0.0, short, np.where(v < v_e, lengthen, u + (v - v_e) / slope))
    return np.where(v <= -k, 0.0, np.maximum(fv, 0.0))


def _th_dlce_norm(a, fv, af, flen, thr):
    """OpenSim's calcdlceN: normalized fiber velocity for normalized force fV = F/(a fL)."""
    k = 0.25 + 0.75 * a
    c = (2.0 + 2.0 / af) / (flen - 1.0)
    u = thr * flen
    b0 = c * (flen - u)
    with np.errstate(divide="ignore", invalid="ignore"):
        short = k * (fv - 1.0) / (1.0 + fv / af)
        lengthen = k * (fv - 1.0) / (c * (flen - fv))
    inside = np.where(fv <= 1.0, short, lengthen)
    below = -k + k * (1.0 + 1.0 / af) * fv  # extrapolation from fV = 0
    v_e = k * (u - 1.0) / b0
    above = v_e + (k / b0 + k * (u - 1.0) * c / b0**2) * (fv - u)
    return np.where(fv <= 0.0, below, np.where(fv < u, inside, above))


# De Groote curves and derivatives ------------------------------------------------------


# The De Groote curves are smooth (made for optimal control): `xp` is the array namespace
# (numpy, or the casadi module for symbols: ahbm.muscles.hill.degroote_rigid_tendon_force).


def _dg_fal(lm, scale, xp=np):
    x = (lm - 1.0) / scale + 1.0
    out = 0.0
    for b1, b2, b3, b4 in _DG_B:
        out = out + b1 * xp.exp(-0.5 * (x - b2) ** 2 / (b3 + b4 * x) ** 2)
    return out


def _dg_fpe(lm, e0, xp=np):
    offset = np.exp(_DG_KPE * (_DG_MIN_NORM_FIBER_LENGTH - 1.0) / e0)
    with np.errstate(over="ignore"):
        return (xp.exp(_DG_KPE * (lm - 1.0) / e0) - offset) / (np.exp(_DG_KPE) - offset)


def _dg_kt(e0):
    return np.log((1.0 + _DG_C3) / _DG_C1) / (1.0 + e0 - _DG_C2)


def _dg_ft(lt, e0, xp=np):
    with np.errstate(over="ignore"):
        return _DG_C1 * xp.exp(_dg_kt(e0) * (lt - _DG_C2)) - _DG_C3


def _dg_ft_inverse(ft, e0, xp=np):
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.log((ft + _DG_C3) / _DG_C1) / _dg_kt(e0) + _DG_C2


def _dg_fv(v, xp=np):
    t = _DG_D2 * v + _DG_D3
    return _DG_D1 * xp.log(t + xp.sqrt(t * t + 1.0)) + _DG_D4


def _dg_fv_inverse(fv):
    with np.errstate(over="ignore"):
        return (np.sinh((fv - _DG_D4) / _DG_D1) - _DG_D3) / _DG_D2
