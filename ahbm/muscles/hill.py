"""Hill-type muscle models: curves, parameters, equilibrium and activation dynamics.

Two curve sets, each as OpenSim implements it (the sources are the reference for every
constant and branch; the code here is written from the equations):

``"thelen2003"``
    Thelen (2003) as in OpenSim's ``Thelen2003Muscle``: Gaussian active force-length,
    exponential passive force-length, exponential-then-linear tendon, the
    activation-dependent force-velocity relation of Thelen's eq. 6 (with OpenSim's linear
    extrapolation beyond ``fv_linear_extrap_threshold``), a fixed-width (constant-volume)
    pennation model with a maximum pennation angle, and first-order activation dynamics
    with an activation-dependent time constant and a minimum activation.
``"degroote2016"``
    De Groote et al. (2016) as in OpenSim's ``DeGrooteFregly2016Muscle``: the smooth
    curves made for optimal control (sum of three Gaussian-like active force-length terms,
    exponential passive and tendon curves, the ``asinh`` force-velocity curve) with the
    constants OpenSim uses (``b11`` adjusted so that ``f(1) = 1``, ``c2 = 1``,
    ``c3 = 0.2``, ``d1``/``d4`` solved so that the force-velocity curve passes through
    (-1, 0) and (0, 1)), and the smooth ``tanh`` activation dynamics.

Each curve set works with an elastic tendon (``rigid_tendon=False``) or a rigid tendon
(``rigid_tendon=True``, fiber length from the geometry; OpenSim's
``ignore_tendon_compliance``). Every function is vectorized: quantities have the shape
``(..., n_muscles)`` with any leading batch axes (frames), parameters the shape
``(n_muscles,)``.

References
----------
Thelen DG (2003) Adjustment of muscle mechanics model parameters to simulate dynamic
contractions in older adults. J Biomech Eng 125:70-77.

De Groote F, Kinney AL, Rao AV, Fregly BJ (2016) Evaluation of direct collocation optimal
control problem formulations for solving the muscle redundancy problem. Ann Biomed Eng
44:2922-2936.

Millard M, Uchida T, Seth A, Delp SL (2013) Flexing computational muscle: modeling and
simulation of musculotendon dynamics. J Biomech Eng 135:021005.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np

from ahbm._validation import as_choice, as_float_array, as_int, as_positive_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.types import ResultRepr

__all__ = [
    "CURVES",
    "MuscleParameters",
    "MuscleState",
    "active_force_length",
    "activation_rate",
    "activation_to_excitation",
    "force_coefficients",
    "force_velocity",
    "muscle_equilibrium",
    "passive_force_length",
    "tendon_force_length",
]

#: The curve sets, by name.
CURVES = ("thelen2003", "degroote2016")

_EPS = np.finfo(float).eps
_SIGNIFICANT = _EPS ** (7.0 / 8.0)  # SimTK::SignificantReal
_SQRT_EPS = math.sqrt(_EPS)

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
        arrays = {}
        for f in dataclasses.fields(self):
            if f.name == "names":
                continue
            arr = as_float_array(getattr(self, f.name), f.name, allow_nan=True)
            if arr.ndim > 1:
                raise DataError(
                    f"Expected `{f.name}` to be a number or a 1-D array (one value per "
                    f"muscle), got shape {arr.shape}"
                )
            arrays[f.name] = arr
        sizes = {a.size for a in arrays.values() if a.ndim == 1}
        if self.names is not None:
            if isinstance(self.names, (str, bytes)) or not hasattr(self.names, "__iter__"):
                raise DataError(
                    f"Expected `names` to be a sequence of str (one per muscle), got "
                    f"{type(self.names).__name__}"
                )
            names = tuple(self.names)
            if not all(isinstance(s, str) for s in names):
                raise DataError("Expected `names` to be a sequence of str (one per muscle)")
            sizes.add(len(names))
        if len(sizes) > 1:
            listed = ", ".join(f"`{k}` {a.size}" for k, a in arrays.items() if a.ndim == 1)
            raise DataError(
                f"the muscle parameters have different numbers of muscles ({listed}); give "
                "one value per muscle or a scalar"
            )
        n = sizes.pop() if sizes else 1
        names = (
            tuple(self.names) if self.names is not None else tuple(f"muscle_{i}" for i in range(n))
        )
        for k, a in arrays.items():
            a = np.broadcast_to(a, (n,)).astype(float)  # a fresh, writable copy
            a.setflags(write=False)
            object.__setattr__(self, k, a)
        object.__setattr__(self, "names", names)
        self._check()

    def _check(self):
        def bad(name, mask, what):
            if np.any(mask):
                i = int(np.flatnonzero(mask)[0])
                v = getattr(self, name)[i]
                raise DataError(f"`{name}` of muscle {self.names[i]!r} must be {what}; got {v!r}")

        for name in dataclasses.fields(self):
            if name.name == "names":
                continue
            a = getattr(self, name.name)
            nan_ok = name.name in ("tendon_strain", "deactivation_time_constant")
            bad(name.name, ~np.isfinite(a) & ~(nan_ok & np.isnan(a)), "a finite number")
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
            ``fiber_damping``, ``activation_dynamics_smoothing``).

        Returns
        -------
        MuscleParameters
            In the order of `muscles`. A muscle of class ``Thelen2003Muscle`` without
            ``FmaxTendonStrain`` gets 0.04, a ``DeGrooteFregly2016Muscle`` 0.049; other
            classes keep NaN (the curve set's default).
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


def _muscle_array(x, name, n, *, allow_nan=False) -> np.ndarray:
    """`x` as a float array whose last axis broadcasts to n muscles."""
    arr = as_float_array(x, name, allow_nan=allow_nan)
    if arr.ndim and arr.shape[-1] not in (1, n):
        raise DataError(
            f"Expected the last axis of `{name}` to have {n} entries (one per muscle), got "
            f"shape {arr.shape}"
        )
    return arr


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


def _dg_fal(lm, scale):
    x = (lm - 1.0) / scale + 1.0
    out = 0.0
    for b1, b2, b3, b4 in _DG_B:
        out = out + b1 * np.exp(-0.5 * (x - b2) ** 2 / (b3 + b4 * x) ** 2)
    return out


def _dg_fpe(lm, e0):
    offset = np.exp(_DG_KPE * (_DG_MIN_NORM_FIBER_LENGTH - 1.0) / e0)
    with np.errstate(over="ignore"):
        return (np.exp(_DG_KPE * (lm - 1.0) / e0) - offset) / (np.exp(_DG_KPE) - offset)


def _dg_kt(e0):
    return np.log((1.0 + _DG_C3) / _DG_C1) / (1.0 + e0 - _DG_C2)


def _dg_ft(lt, e0):
    with np.errstate(over="ignore"):
        return _DG_C1 * np.exp(_dg_kt(e0) * (lt - _DG_C2)) - _DG_C3


def _dg_ft_inverse(ft, e0):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log((ft + _DG_C3) / _DG_C1) / _dg_kt(e0) + _DG_C2


def _dg_fv(v):
    t = _DG_D2 * v + _DG_D3
    return _DG_D1 * np.log(t + np.sqrt(t * t + 1.0)) + _DG_D4


def _dg_fv_inverse(fv):
    with np.errstate(over="ignore"):
        return (np.sinh((fv - _DG_D4) / _DG_D1) - _DG_D3) / _DG_D2


# ---------------------------------------------------------------------------------------
# Activation dynamics
# ---------------------------------------------------------------------------------------


def activation_rate(excitation, activation, params, *, curves="thelen2003") -> np.ndarray:
    """Time derivative of the activation, ``da/dt`` (1/s), for a given excitation.

    Parameters
    ----------
    excitation : array_like, (..., n)
        Neural excitation ``u`` in [0, 1].
    activation : array_like, (..., n)
        Activation ``a``.
    params : MuscleParameters
        Time constants (and Thelen's ``minimum_activation``, De Groote's
        ``activation_smoothing``).
    curves : {"thelen2003", "degroote2016"}

    Returns
    -------
    ndarray, (..., n)

    Notes
    -----
    Both are first order with the time constant of Winters (1995):
    ``τ = τ_act (0.5 + 1.5 a)`` when activating, ``τ = τ_deact / (0.5 + 1.5 a)`` when
    deactivating, ``da/dt = (u - a)/τ``.

    * ``"thelen2003"`` (OpenSim's ``MuscleFirstOrderActivationDynamicModel``): ``a`` is
      first clamped to ``[minimum_activation, 1]`` and the branch is chosen by
      ``u > a``.
    * ``"degroote2016"``: the branch is blended smoothly,
      ``f = ½ tanh(b (u - a))``,
      ``da/dt = [(f + ½)/(τ_act (0.5 + 1.5a)) + (½ - f)(0.5 + 1.5a)/τ_deact] (u - a)``
      with ``b = activation_smoothing`` (De Groote et al. 2016, eq. S1 with OpenSim's
      default ``b = 0.1``).

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> activation_rate([1.0], [0.5], p).round(6)
    array([26.666667])
    """
    curves = _check_curves(curves)
    params = _check_params(params)
    u = _muscle_array(excitation, "excitation", params.n)
    a = _muscle_array(activation, "activation", params.n)
    t_act = params.activation_time_constant
    t_deact = _param(params, "deactivation_time_constant", curves)
    if curves == "thelen2003":
        a = np.clip(a, params.minimum_activation, 1.0)
        factor = 0.5 + 1.5 * a
        tau = np.where(u > a, t_act * factor, t_deact / factor)
        return (u - a) / tau
    factor = 0.5 + 1.5 * a
    f = 0.5 * np.tanh(params.activation_smoothing * (u - a))
    rate = (f + 0.5) / (t_act * factor) + (0.5 - f) * factor / t_deact
    return rate * (u - a)


def activation_to_excitation(activation, rate, params, *, curves="thelen2003") -> np.ndarray:
    """Excitation that makes the activation change at a given rate (inverse dynamics).

    Parameters
    ----------
    activation : array_like, (..., n)
        Activation ``a``.
    rate : array_like, (..., n)
        Wanted ``da/dt``, 1/s (e.g. the time derivative of static-optimization
        activations).
    params : MuscleParameters
    curves : {"thelen2003", "degroote2016"}

    Returns
    -------
    ndarray, (..., n)
        The excitation ``u`` in [0, 1] with ``activation_rate(u, a) = rate``; where no
        excitation in [0, 1] reaches the rate, the nearest bound (0 or 1).

    Notes
    -----
    ``activation_rate`` increases monotonically with ``u`` for both curve sets; ``u`` is
    found by bisection on [0, 1] to machine precision, on whole arrays.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> u = activation_to_excitation([0.5], [10.0], p)
    >>> activation_rate(u, [0.5], p).round(9)
    array([10.])
    """
    curves = _check_curves(curves)
    params = _check_params(params)
    a = _muscle_array(activation, "activation", params.n)
    r = _muscle_array(rate, "rate", params.n)
    shape = np.broadcast_shapes(a.shape, r.shape, (params.n,))
    a, r = np.broadcast_to(a, shape), np.broadcast_to(r, shape)
    lo, hi = np.zeros(shape), np.ones(shape)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = activation_rate(mid, a, params, curves=curves) < r
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    u = 0.5 * (lo + hi)
    u = np.where(activation_rate(np.ones(shape), a, params, curves=curves) <= r, 1.0, u)
    return np.where(activation_rate(np.zeros(shape), a, params, curves=curves) >= r, 0.0, u)


# ---------------------------------------------------------------------------------------
# Equilibrium
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class MuscleState(ResultRepr):
    """State of muscles at equilibrium (every field ``(..., n)``, SI units).

    Attributes
    ----------
    tendon_force : ndarray
        Force along the tendon, N (the force the muscle applies to its path).
    fiber_force, active_fiber_force, passive_fiber_force : ndarray
        Force along the fiber, N: total, active (``a F0 fL fV``) and passive
        (``F0 fPE``, plus De Groote's fiber damping).
    fiber_length, tendon_length : ndarray
        m.
    fiber_velocity : ndarray
        m/s, lengthening positive.
    normalized_fiber_length, normalized_fiber_velocity : ndarray
        ``lM / lM0`` and ``vM / (vmax lM0)``.
    pennation_angle : ndarray
        rad.
    activation : ndarray
        The activation used (Thelen's is clamped to ``[minimum_activation, 1]``).
    converged : ndarray of bool
        False where no equilibrium was found (the other fields are NaN there).
    """

    tendon_force: np.ndarray
    fiber_force: np.ndarray
    active_fiber_force: np.ndarray
    passive_fiber_force: np.ndarray
    fiber_length: np.ndarray
    fiber_velocity: np.ndarray
    normalized_fiber_length: np.ndarray
    normalized_fiber_velocity: np.ndarray
    pennation_angle: np.ndarray
    tendon_length: np.ndarray
    activation: np.ndarray
    converged: np.ndarray


def _state_inputs(params, activation, mt_length, mt_speed, curves):
    curves = _check_curves(curves)
    params = _check_params(params)
    n = params.n
    a = _muscle_array(activation, "activation", n)
    lmt = _muscle_array(mt_length, "mt_length", n)
    vmt = _muscle_array(mt_speed, "mt_speed", n)
    try:
        shape = np.broadcast_shapes(a.shape, lmt.shape, vmt.shape, (n,))
    except ValueError as err:
        raise DataError(
            f"the batch axes of `activation` {a.shape}, `mt_length` {lmt.shape} and "
            f"`mt_speed` {vmt.shape} do not broadcast; give the same frames to each"
        ) from err
    if np.any((a < 0) | (a > 1)):
        raise DataError("Expected `activation` in [0, 1]; clip it before calling")
    if np.any(lmt <= 0):
        raise DataError("Expected `mt_length` > 0 m (musculotendon lengths)")
    b = [np.broadcast_to(x, shape) for x in (a, lmt, vmt)]
    return curves, params.resolved(curves), shape, b


def muscle_equilibrium(
    params,
    activation,
    mt_length,
    mt_speed=0.0,
    *,
    curves="thelen2003",
    rigid_tendon=False,
    tol=1e-8,
    max_iterations=20,
) -> MuscleState:
    """Fiber length and forces of muscles in equilibrium with their tendons.

    Parameters
    ----------
    params : MuscleParameters
        ``n`` muscles.
    activation : array_like, (..., n)
        Activation in [0, 1].
    mt_length : array_like, (..., n)
        Musculotendon (path) length, m.
    mt_speed : array_like, (..., n), optional
        Musculotendon lengthening speed, m/s (default 0).
    curves : {"thelen2003", "degroote2016"}
    rigid_tendon : bool, optional
        Inextensible tendon of length ``lTs``: the fiber length follows from the
        geometry and no equilibrium is solved.
    tol : float, optional
        ``"thelen2003"``: force tolerance of the Newton iteration relative to ``F0``
        (OpenSim: ``1e-8 F0``).
    max_iterations : int, optional
        ``"thelen2003"``: Newton iterations (OpenSim: 20).

    Returns
    -------
    MuscleState
        Fields of shape ``(..., n)`` (broadcast of the inputs).

    Warns
    -----
    AhbmWarning
        Where no equilibrium exists or the iteration fails (those entries are NaN and
        ``converged`` is False), naming the muscles.

    Notes
    -----
    Fixed-width pennation: ``lM sin α = lM0 sin α0``, ``lT = lMT - lM cos α``.
    Equilibrium: ``F0 fT(lT/lTs) = (a fL fV + fPE) F0 cos α``.

    * ``"thelen2003"`` follows OpenSim's ``Thelen2003Muscle::initMuscleState``: a
      Newton iteration on the fiber length from ``lT = 1.01 lTs`` with step halving;
      the lengthening speed is shared between fiber and tendon in proportion to their
      compliances (``vT = K_M/(K_M + K_T) vMT``, ``K_M = ∂F_M^AT/∂lM · cos α`` as
      OpenSim computes it) to evaluate ``fV``; the fiber length is bounded below by
      OpenSim's minimum fiber length (maximum pennation angle). The reported forces and
      fiber velocity are computed from the fiber length as OpenSim computes them from
      its state (``fV`` from the force balance, ``vM`` from Thelen's eq. 6).
    * ``"degroote2016"`` follows ``DeGrooteFregly2016Muscle::computeInitialFiberEquilibrium``:
      the normalized tendon force in [0, 5] solving
      ``fT - (a fL fV + fPE + β ṽ) cos α = 0`` with the whole lengthening speed in the
      fiber (tendon force rate zero), by bisection to machine precision (OpenSim stops at
      1e-10).
    * Rigid tendon: ``lM cos α = lMT - lTs``, ``vM = vMT cos α``; tendon force =
      fiber force ``· cos α``. OpenSim's Thelen muscle (which does not offer a rigid
      tendon) computes the same in ``calcInextensibleTendonActiveFiberForce``; its
      active force is zero at the minimum fiber length.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> s = muscle_equilibrium(p, [1.0], [0.3], rigid_tendon=True)
    >>> float(s.tendon_force[0])
    1000.0
    """
    curves, params, shape, (a, lmt, vmt) = _state_inputs(
        params, activation, mt_length, mt_speed, curves
    )
    rigid_tendon = as_choice(rigid_tendon, "rigid_tendon", (True, False))
    tol = as_positive_float(tol, "tol")
    max_iterations = as_int(max_iterations, "max_iterations", minimum=1)
    if curves == "thelen2003":
        a = np.clip(a, params.minimum_activation, 1.0)
        if rigid_tendon:
            out = _thelen_rigid(params, a, lmt, vmt)
        else:
            out = _thelen_elastic(params, a, lmt, vmt, tol, max_iterations)
    else:
        out = (
            _degroote_rigid(params, a, lmt, vmt)
            if rigid_tendon
            else _degroote_elastic(params, a, lmt, vmt)
        )
    bad = ~out["converged"]
    if np.any(bad):
        names = sorted({params.names[i] for i in np.nonzero(bad)[-1]})
        warnings.warn(
            f"muscle_equilibrium: no equilibrium found for {int(bad.sum())} entries "
            f"(muscles {names}); they are NaN (check mt_length against the optimal fiber "
            "and tendon slack lengths)",
            AhbmWarning,
            stacklevel=2,
        )
        for k, v in out.items():
            if k != "converged":
                out[k] = np.where(bad, np.nan, v)
    return MuscleState(**out, activation=a + 0.0)


# Pennation geometry (OpenSim's MuscleFixedWidthPennationModel) -------------------------


class _Pennation:
    def __init__(self, params):
        self.lopt = params.optimal_fiber_length
        self.alpha0 = params.pennation_angle
        self.h = self.lopt * np.sin(self.alpha0)
        self.alpha_max = params.maximum_pennation_angle
        self.sin_max = np.sin(self.alpha_max)
        with np.errstate(divide="ignore"):
            self.lmin = np.where(
                self.alpha_max > _SIGNIFICANT, self.h / self.sin_max, 0.01 * self.lopt
            )
        self.lmin_at = self.lmin * np.cos(self.alpha_max)

    def angle(self, lm):
        with np.errstate(divide="ignore", invalid="ignore"):
            s = self.h / lm
            phi = np.where((lm > self.lmin) & (s < self.sin_max), np.arcsin(s), self.alpha_max)
        return np.where(self.alpha0 > _EPS, phi, 0.0)

    def fiber_length(self, lmt, lt):
        at = lmt - lt
        return np.where(at >= self.lmin_at, np.sqrt(self.h**2 + at**2), self.lmin)


# Thelen ---------------------------------------------------------------------------------


def _thelen_fv_args(params):
    return params.af, params.flen, params.fv_extrapolation_threshold


def _state_fields(tendon_force, fiber_force, active, passive, lm, lt, vm, ln, vn, phi, ok):
    """The fields of a MuscleState (all but the activation) as a dict."""
    return dict(
        tendon_force=tendon_force,
        fiber_force=fiber_force,
        active_fiber_force=active,
        passive_fiber_force=passive,
        fiber_length=lm,
        fiber_velocity=vm,
        normalized_fiber_length=ln,
        normalized_fiber_velocity=vn,
        pennation_angle=phi,
        tendon_length=np.broadcast_to(lt, np.shape(lm)) + 0.0,
        converged=ok,
    )


def _thelen_rigid(params, a, lmt, vmt):
    pen = _Pennation(params)
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    lm = pen.fiber_length(lmt, params.tendon_slack_length)
    phi = pen.angle(lm)
    cos = np.cos(phi)
    vm = vmt * cos
    vn = vm / (lopt * params.max_contraction_velocity)
    ln = lm / lopt
    fal = _th_fal(ln, params.kshape_active)
    fpe = _th_fpe(ln, params.passive_strain, params.kshape_passive)
    fv = _th_fv(vn, a, *_thelen_fv_args(params))
    active = np.where(lm > pen.lmin, f0 * a * fal * fv, 0.0)
    passive = f0 * fpe
    fiber = active + passive
    lts = params.tendon_slack_length
    return _state_fields(
        fiber * cos, fiber, active, passive, lm, lts, vm, ln, vn, phi, np.isfinite(fiber)
    )


def _thelen_elastic(params, a, lmt, vmt, tol, max_iterations):
    """OpenSim's Thelen2003Muscle::initMuscleState on whole arrays.

    Every entry follows OpenSim's iteration exactly; each pass works on the entries that
    have not converged yet (index compaction), so a few slow entries cost little.
    """
    shape = lmt.shape
    pen = _Pennation(params)

    def flat(x):
        return np.array(np.broadcast_to(x, shape), dtype=float).ravel()

    P = {
        "f0": params.max_isometric_force,
        "lopt": params.optimal_fiber_length,
        "lts": params.tendon_slack_length,
        "vmax": params.max_contraction_velocity,
        "e0t": params.tendon_strain,
        "e0m": params.passive_strain,
        "kact": params.kshape_active,
        "kpe": params.kshape_passive,
        "af": params.af,
        "flen": params.flen,
        "thr": params.fv_extrapolation_threshold,
        "h": pen.h,
        "lmin": pen.lmin,
        "lmin_at": pen.lmin_at,
        "alpha0": pen.alpha0,
        "alpha_max": pen.alpha_max,
        "sin_max": pen.sin_max,
        "a": a,
        "lmt": lmt,
        "vmt": vmt,
    }
    P = {k: flat(v) for k, v in P.items()}
    tol_f = np.maximum(tol * P["f0"], _SIGNIFICANT * 10.0)

    def angle(S, lm):
        with np.errstate(divide="ignore", invalid="ignore"):
            sn = S["h"] / lm
            phi = np.where((lm > S["lmin"]) & (sn < S["sin_max"]), np.arcsin(sn), S["alpha_max"])
        return np.where(S["alpha0"] > _EPS, phi, 0.0)

    def position(S, lm):
        phi = angle(S, lm)
        cos = np.cos(phi)
        lt = S["lmt"] - lm * cos
        ltn, ln = lt / S["lts"], lm / S["lopt"]
        mult = _th_fse(ltn, S["e0t"]), _th_fal(ln, S["kact"]), _th_fpe(ln, S["e0m"], S["kpe"])
        return (phi, cos, lt, ltn, ln) + mult

    def error(S, fse, fal, fpe, fv, cos):
        fm = (S["a"] * fal * fv + fpe) * S["f0"]
        return fm, fm * cos - fse * S["f0"]

    def partials(S, lm, pos, fv, fm):
        phi, cos, lt, ltn, ln = pos[:5]
        f0, lts, h = S["f0"], S["lts"], S["h"]
        d_fm = (S["a"] * fv * _th_dfal(ln, S["kact"]) + _th_dfpe(ln, S["e0m"], S["kpe"])) * (
            f0 / S["lopt"]
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            dcos = h**2 / (lm**3 * np.sqrt(1.0 - h**2 / lm**2))
            d_fmat = d_fm * cos + fm * dcos
            dphi = -h / (lm * lm * np.sqrt(1.0 - (h / lm) ** 2))
        dlt_dlm = -np.cos(phi) + lm * np.sin(phi) * dphi
        dfse = _th_dfse(ltn, S["e0t"])
        return d_fmat, d_fmat * cos, dfse * f0 / lts, dfse * dlt_dlm * f0 / lts

    def velocity(S, pos, d_fmat_at, d_ft_dlt):
        cos, lt = pos[1], pos[2]
        vmt, den = S["vmt"], d_fmat_at + d_ft_dlt
        split = (np.abs(den) > _SIGNIFICANT) & (lt > S["lts"])
        with np.errstate(divide="ignore", invalid="ignore"):
            vt = np.where(split, d_fmat_at / den * vmt, vmt)
        vn = (vmt - vt) * cos / (S["vmax"] * S["lopt"])
        return _th_fv(vn, S["a"], S["af"], S["flen"], S["thr"])

    with np.errstate(divide="ignore", invalid="ignore"):
        # initial guess: tendon at 1.01 slack length
        at0 = P["lmt"] - 1.01 * P["lts"]
        lm = np.where(at0 >= P["lmin_at"], np.sqrt(P["h"] ** 2 + at0**2), P["lmin"])
        pos = position(P, lm)
        fv = np.ones_like(lm)
        d = partials(P, lm, pos, fv, np.zeros_like(lm))
        fv = velocity(P, pos, d[1], d[2])
        fm, ferr = error(P, *pos[5:], fv, pos[1])
        d_fmat, _, _, d_ft_dlm = partials(P, lm, pos, fv, fm)
        ferr_prev, lm_prev = ferr.copy(), lm.copy()
        iters = 0
        while iters < max_iterations:
            idx = np.flatnonzero(np.abs(ferr) > tol_f)
            if not idx.size:
                break
            S = {k: v[idx] for k, v in P.items()}
            dferr = d_fmat[idx] - d_ft_dlm[idx]
            lm0, e0 = lm_prev[idx], ferr_prev[idx]
            lm_i, fm_i, ferr_i, fv_i = lm[idx], fm[idx], ferr[idx], fv[idx]
            step = np.ones(idx.size)
            inner = np.arange(idx.size)
            while inner.size:
                Si = {k: v[inner] for k, v in S.items()}
                delta = -step[inner] * e0[inner] / dferr[inner]
                big = np.abs(delta) > _SIGNIFICANT
                cand = np.where(big, lm0[inner] + delta, lm0[inner] - np.sign(delta) * _SQRT_EPS)
                step[inner] = np.where(big, step[inner], 0.0)
                cand = np.maximum(cand, Si["lmin"])
                pos_i = position(Si, cand)
                fm_n, ferr_n = error(Si, *pos_i[5:], fv_i[inner], pos_i[1])
                lm_i[inner], fm_i[inner], ferr_i[inner] = cand, fm_n, ferr_n
                done = step[inner] <= _SQRT_EPS
                step[inner] = np.where(done, step[inner], 0.5 * step[inner])
                inner = inner[~done & (np.abs(ferr_n) >= np.abs(e0[inner]))]
            pos_s = position(S, lm_i)
            d_s = partials(S, lm_i, pos_s, fv_i, fm_i)
            lm[idx], fm[idx], ferr[idx] = lm_i, fm_i, ferr_i
            lm_prev[idx], ferr_prev[idx] = lm_i, ferr_i
            d_fmat[idx], d_ft_dlm[idx] = d_s[0], d_s[3]
            fv[idx] = velocity(S, pos_s, d_s[1], d_s[2])
            iters += 1
    converged = np.abs(ferr) < tol_f
    at_min = ~converged & (lm <= P["lmin"])
    lm = np.where(at_min, P["lmin"], lm).reshape(shape)
    ok = (converged | at_min).reshape(shape)
    return _thelen_from_fiber_length(params, pen, a, lmt, vmt, lm, ok)


def _thelen_from_fiber_length(params, pen, a, lmt, vmt, lm, ok):
    """Forces and velocities as OpenSim's Thelen2003Muscle computes them from its state."""
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    lts = params.tendon_slack_length
    lm = np.maximum(lm, pen.lmin)
    phi = pen.angle(lm)
    cos = np.cos(phi)
    lt = lmt - lm * cos
    ln = lm / lopt
    fse = _th_fse(lt / lts, params.tendon_strain)
    fal = _th_fal(ln, params.kshape_active)
    fpe = _th_fpe(ln, params.passive_strain, params.kshape_passive)
    with np.errstate(divide="ignore", invalid="ignore"):
        afalfv = fse / cos - fpe
        fv = afalfv / (a * fal)
    vn = _th_dlce_norm(a, fv, *_thelen_fv_args(params))
    clamped = (lm <= pen.lmin) & (vn <= 0)
    vn = np.where(clamped, 0.0, vn)
    active = np.where(clamped, 0.0, afalfv * f0)
    passive = fpe * f0
    fiber = np.where(clamped, 0.0, active + passive)
    vm = vn * params.max_contraction_velocity * lopt
    return _state_fields(
        fse * f0, fiber, active, passive, lm, lt, vm, ln, vn, phi, ok & np.isfinite(fse)
    )


# De Groote -----------------------------------------------------------------------------


def _dg_geometry(params, lmt, lt):
    lopt = params.optimal_fiber_length
    w = lopt * np.sin(params.pennation_angle)
    at = lmt - lt
    lm = np.sqrt(at**2 + w**2)
    cos = at / lm
    return lm, cos, np.arcsin(w / lm)


def _dg_forces(params, a, lm, cos, vmt_fiber):
    """Fiber forces of De Groote's model for a fiber velocity vmt_fiber (m/s)."""
    f0, lopt = params.max_isometric_force, params.optimal_fiber_length
    ln = lm / lopt
    vn = vmt_fiber / (params.max_contraction_velocity * lopt)
    fal = _dg_fal(ln, params.active_force_width_scale)
    fpe = _dg_fpe(ln, params.passive_strain)
    fv = _dg_fv(vn)
    active = f0 * a * fal * fv
    passive = f0 * (fpe + params.fiber_damping * vn)
    return ln, vn, active, passive


def _degroote_rigid(params, a, lmt, vmt):
    lts = params.tendon_slack_length
    lm, cos, phi = _dg_geometry(params, lmt, lts)
    vm = vmt * cos
    ln, vn, active, passive = _dg_forces(params, a, lm, cos, vm)
    fiber = active + passive
    return _state_fields(
        fiber * cos, fiber, active, passive, lm, lts, vm, ln, vn, phi, np.isfinite(fiber)
    )


def _degroote_elastic(params, a, lmt, vmt):
    f0, lts = params.max_isometric_force, params.tendon_slack_length
    e0 = params.tendon_strain

    def evaluate(ft):
        lt = lts * _dg_ft_inverse(ft, e0)
        lm, cos, phi = _dg_geometry(params, lmt, lt)
        vm = vmt * cos  # tendon force rate zero: the whole speed is in the fiber
        ln, vn, active, passive = _dg_forces(params, a, lm, cos, vm)
        return ft - (active + passive) / f0 * cos, (lt, lm, cos, phi, vm, ln, vn, active, passive)

    lo = np.zeros(lmt.shape)
    hi = np.full(lmt.shape, _DG_MAX_NORM_TENDON_FORCE)
    with np.errstate(invalid="ignore", divide="ignore"):
        r_lo, _ = evaluate(lo)
        r_hi, _ = evaluate(hi)
        ok = np.isfinite(r_lo) & np.isfinite(r_hi) & (r_lo * r_hi < 0)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            r_mid, _ = evaluate(mid)
            left = r_mid * r_lo < 0
            hi = np.where(left, mid, hi)
            lo = np.where(left, lo, mid)
            r_lo = np.where(left, r_lo, r_mid)
            if np.all(hi - lo <= 4 * _EPS * np.maximum(hi, 1.0)):
                break
        ft = 0.5 * (lo + hi)
        _, (lt, lm, cos, phi, vm, ln, vn, active, passive) = evaluate(ft)
    return _state_fields(ft * f0, active + passive, active, passive, lm, lt, vm, ln, vn, phi, ok)


# ---------------------------------------------------------------------------------------
# Static optimization coefficients
# ---------------------------------------------------------------------------------------


def force_coefficients(
    params,
    mt_length,
    mt_speed=0.0,
    *,
    curves="thelen2003",
    force_length_velocity=True,
) -> tuple[np.ndarray, np.ndarray]:
    """Rigid-tendon tendon force as ``activation * active + passive`` (static optimization).

    Parameters
    ----------
    params : MuscleParameters
    mt_length : array_like, (..., n)
        Musculotendon lengths, m.
    mt_speed : array_like, (..., n), optional
        Lengthening speeds, m/s.
    curves : {"thelen2003", "degroote2016"}
    force_length_velocity : bool, optional
        True: the muscles' force-length-velocity properties (OpenSim's
        ``use_model_force_length_velocity``); False: ideal force generators,
        ``active = F0`` and ``passive = 0``.

    Returns
    -------
    active : ndarray, (..., n)
        N per unit activation: ``F0 fL(l̃M) fV(ṽM) cos α``, with the rigid-tendon fiber
        length and velocity (``lM cos α = lMT - lTs``, ``vM = vMT cos α``). Thelen's
        ``fV`` depends on activation: it is evaluated at ``a = 1``, as OpenSim's
        static optimization does (``calcInextensibleTendonActiveFiberForce(s, 1.0)``),
        so the force is linear in activation only at zero speed.
    passive : ndarray, (..., n)
        N: ``F0 fPE cos α`` (plus De Groote's damping ``F0 β ṽM cos α``).

    Notes
    -----
    OpenSim's StaticOptimization multiplies each activation by the active force at
    ``a = 1`` (``calcInextensibleTendonActiveFiberForce``) and applies no passive fiber
    force; to reproduce it use ``active`` alone. OpenSim's De Groote muscle returns that
    force along the fiber, without ``cos α``: ``active / cos α`` reproduces it.

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> act, pas = force_coefficients(p, [0.3])
    >>> float(act[0]), float(pas[0])
    (1000.0, 0.0)
    """
    curves, params, shape, (_, lmt, vmt) = _state_inputs(
        params, np.ones(()), mt_length, mt_speed, curves
    )
    force_length_velocity = as_choice(force_length_velocity, "force_length_velocity", (True, False))
    if not force_length_velocity:
        return np.broadcast_to(params.max_isometric_force, shape) + 0.0, np.zeros(shape)
    ones = np.ones(shape)
    if curves == "thelen2003":
        out = _thelen_rigid(params, ones, lmt, vmt)
    else:
        out = _degroote_rigid(params, ones, lmt, vmt)
    cos = np.cos(out["pennation_angle"])
    return out["active_fiber_force"] * cos, out["passive_fiber_force"] * cos
