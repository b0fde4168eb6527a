"""Millard et al. (2013) muscle curves and parameters, as OpenSim 4.6 builds them.

OpenSim's ``Millard2012EquilibriumMuscle`` describes its four curves by a few
parameters each; ``SmoothSegmentedFunctionFactory`` turns them into chains of quintic
Bézier corners (C2-continuous, monotonic where they should be) that are evaluated by
solving for the Bézier parameter ``u`` from ``x``, and extended linearly beyond their
ends. This module builds the same control points from the same parameters and defaults
and evaluates them (values and derivatives), vectorized along frames; the muscle model
(equilibrium, activation dynamics) is in :mod:`ahbm.muscles.millard`.

- :class:`MillardParameters`: per-muscle parameters (the OpenSim properties), with
  OpenSim's defaults for what a model file leaves out.
- :func:`millard_active_force_length`, :func:`millard_force_velocity`,
  :func:`millard_passive_force_length`, :func:`millard_tendon_force_length`.

References
----------
Millard M, Uchida T, Seth A, Delp SL (2013) Flexing computational muscle: modeling and
simulation of musculotendon dynamics. J Biomech Eng 135:021005.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ahbm._internal.validation import as_choice, as_float_array
from ahbm.errors import DataError
from ahbm.muscles._arrays import _per_muscle_arrays
from ahbm.muscles._bezier import BezierCurves, corner_points
from ahbm.types import ResultRepr

__all__ = [
    "MillardParameters",
    "millard_active_force_length",
    "millard_force_velocity",
    "millard_passive_force_length",
    "millard_tendon_force_length",
]

_SIGNIFICANT = np.finfo(float).eps ** (7.0 / 8.0)  # SimTK::SignificantReal
_ROOT_EPS = math.sqrt(np.finfo(float).eps)
#: Fiber damping below this is no damping (OpenSim's MIN_NONZERO_DAMPING_COEFFICIENT).
MIN_DAMPING = 0.001

# field -> (default, OpenSim curve element or None for a muscle property, property name)
_FIELDS = {
    "pennation_angle": (0.0, None, None),
    "max_contraction_velocity": (10.0, None, None),
    "activation_time_constant": (0.01, None, None),
    "deactivation_time_constant": (0.04, None, None),
    "minimum_activation": (0.01, None, "minimum_activation"),
    "maximum_pennation_angle": (math.acos(0.1), None, "maximum_pennation_angle"),
    "fiber_damping": (0.1, None, "fiber_damping"),
    "min_norm_active_fiber_length": (0.47 - 0.0259, "ActiveForceLengthCurve", None),
    "transition_norm_fiber_length": (0.73, "ActiveForceLengthCurve", None),
    "max_norm_active_fiber_length": (1.8123, "ActiveForceLengthCurve", None),
    "shallow_ascending_slope": (0.8616, "ActiveForceLengthCurve", None),
    "minimum_value": (0.1, "ActiveForceLengthCurve", None),
    "concentric_slope_at_vmax": (0.0, "ForceVelocityCurve", None),
    "concentric_slope_near_vmax": (0.25, "ForceVelocityCurve", None),
    "isometric_slope": (5.0, "ForceVelocityCurve", None),
    "eccentric_slope_at_vmax": (0.0, "ForceVelocityCurve", None),
    "eccentric_slope_near_vmax": (0.15, "ForceVelocityCurve", None),
    "max_eccentric_velocity_force_multiplier": (1.4, "ForceVelocityCurve", None),
    "concentric_curviness": (0.6, "ForceVelocityCurve", None),
    "eccentric_curviness": (0.9, "ForceVelocityCurve", None),
    "fiber_strain_at_zero_force": (0.0, "FiberForceLengthCurve", "strain_at_zero_force"),
    "fiber_strain_at_one_norm_force": (0.7, "FiberForceLengthCurve", "strain_at_one_norm_force"),
    "fiber_stiffness_at_low_force": (math.nan, "FiberForceLengthCurve", "stiffness_at_low_force"),
    "fiber_stiffness_at_one_norm_force": (
        math.nan, "FiberForceLengthCurve", "stiffness_at_one_norm_force"),
    "fiber_curviness": (math.nan, "FiberForceLengthCurve", "curviness"),
    "tendon_strain_at_one_norm_force": (
        0.049, "TendonForceLengthCurve", "strain_at_one_norm_force"),
    "tendon_stiffness_at_one_norm_force": (
        math.nan, "TendonForceLengthCurve", "stiffness_at_one_norm_force"),
    "tendon_norm_force_at_toe_end": (math.nan, "TendonForceLengthCurve", "norm_force_at_toe_end"),
    "tendon_curviness": (math.nan, "TendonForceLengthCurve", "curviness"),
}  # fmt: skip
_OPTIONAL = {
    "FiberForceLengthCurve": (
        "fiber_stiffness_at_low_force", "fiber_stiffness_at_one_norm_force", "fiber_curviness"),
    "TendonForceLengthCurve": (
        "tendon_stiffness_at_one_norm_force", "tendon_norm_force_at_toe_end",
        "tendon_curviness"),
}  # fmt: skip
_MUSCLE_FIELDS = ("pennation_angle", "max_contraction_velocity", "activation_time_constant",
                  "deactivation_time_constant")  # fmt: skip


def _scale_curviness(c):
    return 0.1 + 0.8 * c


@dataclass(frozen=True, repr=False, kw_only=True)
class MillardParameters(ResultRepr):
    """Parameters of ``n`` Millard (2012) muscles, one array of shape ``(n,)`` per field.

    Field names are OpenSim's property names (prefixed ``fiber_``/``tendon_`` for the
    passive-fiber and tendon curves); scalars are broadcast to all muscles; defaults are
    OpenSim 4.6's. A NaN in the optional shape parameters of the passive-fiber curve
    (``fiber_stiffness_at_low_force``, ``fiber_stiffness_at_one_norm_force``,
    ``fiber_curviness``) or of the tendon curve (``tendon_stiffness_at_one_norm_force``,
    ``tendon_norm_force_at_toe_end``, ``tendon_curviness``) means OpenSim's fitted
    values, which need all three of a curve to be NaN (or none).

    Parameters
    ----------
    max_isometric_force, optimal_fiber_length, tendon_slack_length : array_like, (n,)
        N, m, m (> 0).
    pennation_angle : array_like, optional
        At the optimal fiber length, rad, in [0, pi/2). Default 0.
    max_contraction_velocity : array_like, optional
        Optimal fiber lengths per second (default 10).
    activation_time_constant, deactivation_time_constant, minimum_activation : optional
        ``MuscleFirstOrderActivationDynamicModel`` (0.01 s, 0.04 s, 0.01).
    maximum_pennation_angle : array_like, optional
        rad (default ``acos(0.1)``).
    fiber_damping : array_like, optional
        Normalized damping ``β`` (default 0.1; below 0.001 it is 0, the undamped model).
    min_norm_active_fiber_length, transition_norm_fiber_length : array_like, optional
        ``ActiveForceLengthCurve`` (0.4441, 0.73), with
    max_norm_active_fiber_length, shallow_ascending_slope, minimum_value : optional
        (1.8123, 0.8616, 0.1).
    concentric_slope_at_vmax, concentric_slope_near_vmax, isometric_slope : optional
        ``ForceVelocityCurve`` (0, 0.25, 5), with
    eccentric_slope_at_vmax, eccentric_slope_near_vmax : array_like, optional
        (0, 0.15),
    max_eccentric_velocity_force_multiplier : array_like, optional
        (1.4) and
    concentric_curviness, eccentric_curviness : array_like, optional
        (0.6, 0.9).
    fiber_strain_at_zero_force, fiber_strain_at_one_norm_force : array_like, optional
        ``FiberForceLengthCurve`` (0, 0.7), with
    fiber_stiffness_at_low_force, fiber_stiffness_at_one_norm_force, fiber_curviness : optional
        (NaN: 0.2, ``2/(e1 - e0)``, 0.75).
    tendon_strain_at_one_norm_force : array_like, optional
        ``TendonForceLengthCurve`` (0.049), with
    tendon_stiffness_at_one_norm_force, tendon_norm_force_at_toe_end : array_like, optional
        (NaN: ``1.375/e0``, 2/3) and
    tendon_curviness : array_like, optional
        (NaN: 0.5).
    names : sequence of str, optional

    Raises
    ------
    DataError
        A parameter that is not a finite number where one is needed, has the wrong
        count, or that OpenSim would refuse (the message names the muscle).

    Examples
    --------
    >>> p = MillardParameters(max_isometric_force=[1000.0, 500.0],
    ...                       optimal_fiber_length=0.1, tendon_slack_length=0.2)
    >>> p.n, float(p.fiber_damping[0])
    (2, 0.1)
    """

    max_isometric_force: np.ndarray
    optimal_fiber_length: np.ndarray
    tendon_slack_length: np.ndarray
    pennation_angle: np.ndarray = 0.0
    max_contraction_velocity: np.ndarray = 10.0
    activation_time_constant: np.ndarray = 0.01
    deactivation_time_constant: np.ndarray = 0.04
    minimum_activation: np.ndarray = 0.01
    maximum_pennation_angle: np.ndarray = math.acos(0.1)
    fiber_damping: np.ndarray = 0.1
    min_norm_active_fiber_length: np.ndarray = 0.47 - 0.0259
    transition_norm_fiber_length: np.ndarray = 0.73
    max_norm_active_fiber_length: np.ndarray = 1.8123
    shallow_ascending_slope: np.ndarray = 0.8616
    minimum_value: np.ndarray = 0.1
    concentric_slope_at_vmax: np.ndarray = 0.0
    concentric_slope_near_vmax: np.ndarray = 0.25
    isometric_slope: np.ndarray = 5.0
    eccentric_slope_at_vmax: np.ndarray = 0.0
    eccentric_slope_near_vmax: np.ndarray = 0.15
    max_eccentric_velocity_force_multiplier: np.ndarray = 1.4
    concentric_curviness: np.ndarray = 0.6
    eccentric_curviness: np.ndarray = 0.9
    fiber_strain_at_zero_force: np.ndarray = 0.0
    fiber_strain_at_one_norm_force: np.ndarray = 0.7
    fiber_stiffness_at_low_force: np.ndarray = math.nan
    fiber_stiffness_at_one_norm_force: np.ndarray = math.nan
    fiber_curviness: np.ndarray = math.nan
    tendon_strain_at_one_norm_force: np.ndarray = 0.049
    tendon_stiffness_at_one_norm_force: np.ndarray = math.nan
    tendon_norm_force_at_toe_end: np.ndarray = math.nan
    tendon_curviness: np.ndarray = math.nan
    names: tuple = None

    def __post_init__(self):
        _per_muscle_arrays(self, "Millard parameters")
        self._check()

    def _bad(self, name, mask, what):
        if np.any(mask):
            i = int(np.flatnonzero(mask)[0])
            v = getattr(self, name)[i]
            raise DataError(f"`{name}` of muscle {self.names[i]!r} must be {what}; got {v!r}")

    def _check(self):
        optional = {k for ks in _OPTIONAL.values() for k in ks}
        for f in dataclasses.fields(self):
            if f.name == "names":
                continue
            a = getattr(self, f.name)
            nan_ok = np.isnan(a) if f.name in optional else False
            self._bad(f.name, ~np.isfinite(a) & ~nan_ok, "a finite number")
        for k in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length",
                  "max_contraction_velocity", "activation_time_constant",
                  "deactivation_time_constant"):  # fmt: skip
            self._bad(k, ~(getattr(self, k) > 0), "> 0")
        pen, mp = self.pennation_angle, self.maximum_pennation_angle
        self._bad("pennation_angle", ~((pen >= 0) & (pen < np.pi / 2)), "in [0, pi/2) rad")
        self._bad("maximum_pennation_angle", ~((mp >= 0) & (mp <= np.pi / 2)), "in [0, pi/2]")
        ma = self.minimum_activation
        self._bad("minimum_activation", ~((ma >= 0) & (ma < 1)), "in [0, 1)")
        self._bad("fiber_damping", ~(self.fiber_damping >= 0), ">= 0")
        for curve, keys in _OPTIONAL.items():
            nans = np.array([np.isnan(getattr(self, k)) for k in keys])
            mixed = nans.any(axis=0) & ~nans.all(axis=0)
            self._bad(keys[0], mixed, f"given together with {keys[1:]} or all NaN ({curve})")

    @property
    def n(self) -> int:
        """Number of muscles."""
        return len(self.names)

    def __len__(self) -> int:
        return self.n

    @classmethod
    def from_muscles(cls, muscles) -> MillardParameters:
        """The parameters of a sequence of Millard muscles (``model.muscles``).

        Parameters
        ----------
        muscles : sequence of Muscle
            :class:`~ahbm.muscles.Muscle` objects (or objects with their attributes)
            of class ``Millard2012EquilibriumMuscle``, as :func:`ahbm.opensim.read_osim`
            reads them: the standard fields, and in ``parameters`` the muscle properties
            (``fiber_damping``, ``minimum_activation``, ``maximum_pennation_angle``)
            and the curve elements (``ActiveForceLengthCurve``, ``ForceVelocityCurve``,
            ``FiberForceLengthCurve``, ``TendonForceLengthCurve``) with their
            properties. What a file leaves out takes OpenSim's default.

        Returns
        -------
        MillardParameters

        Raises
        ------
        DataError
            Not a sequence of muscles, a muscle of another class, or bad values.

        Examples
        --------
        >>> from types import SimpleNamespace
        >>> m = SimpleNamespace(name="soleus", model="Millard2012EquilibriumMuscle",
        ...     max_isometric_force=3000.0, optimal_fiber_length=0.05,
        ...     tendon_slack_length=0.25, parameters={"fiber_damping": 0,
        ...     "TendonForceLengthCurve": {"strain_at_one_norm_force": 0.06}})
        >>> p = MillardParameters.from_muscles([m])
        >>> float(p.fiber_damping[0]), float(p.tendon_strain_at_one_norm_force[0])
        (0.0, 0.06)
        """
        if isinstance(muscles, (str, bytes, dict)) or not hasattr(muscles, "__iter__"):
            raise DataError(
                "Expected `muscles` to be a sequence of Muscle objects (model.muscles), got "
                f"{type(muscles).__name__}"
            )
        muscles = list(muscles)
        if not muscles:
            raise DataError("Expected `muscles` to hold at least one muscle, got none")
        cols = {k: [] for k in ("max_isometric_force", "optimal_fiber_length",
                                "tendon_slack_length", *_FIELDS)}  # fmt: skip
        names = []
        for i, m in enumerate(muscles):
            name = str(getattr(m, "name", f"muscle_{i}"))
            names.append(name)
            model = getattr(m, "model", None)
            if model is not None and not str(model).startswith("Millard2012"):
                raise DataError(
                    f"muscle {name!r} is a {model}, not a Millard2012EquilibriumMuscle; "
                    "use ahbm.muscles.MuscleParameters for Thelen and De Groote muscles"
                )
            extras = getattr(m, "parameters", None) or {}
            if not isinstance(extras, dict):
                raise DataError(f"`parameters` of muscle {name!r} must be a dict")
            for req in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length"):
                if not hasattr(m, req):
                    raise DataError(f"muscle {name!r} (item {i} of `muscles`) has no `{req}`")
                cols[req].append(getattr(m, req))
            for k, (default, curve, prop) in _FIELDS.items():
                value = getattr(m, k, None) if k in _MUSCLE_FIELDS else None
                if curve is None and prop is not None:
                    value = extras.get(prop)
                elif curve is not None:
                    sub = extras.get(curve)
                    value = sub.get(prop or k) if isinstance(sub, dict) else None
                if isinstance(value, bool) or (
                    value is not None and not isinstance(value, (int, float, np.floating))
                ):
                    raise DataError(
                        f"property {prop or k!r} of muscle {name!r} must be a number, got {value!r}"
                    )
                cols[k].append(default if value is None else value)
        return cls(**{k: np.asarray(v, dtype=float) for k, v in cols.items()}, names=names)

    def as_used(self, *, rigid_tendon=False) -> MillardParameters:
        """The parameters as OpenSim's muscle uses them (``extendFinalizeFromProperties``).

        OpenSim changes a few curve parameters according to the model variant:

        - damped (``fiber_damping >= 0.001``) or rigid tendon: ``minimum_value`` of the
          active curve and the force-velocity slopes at ``vmax`` become 0;
        - undamped with an elastic tendon: damping 0, ``minimum_value`` at least 0.1,
          the slopes at ``vmax`` at least half the slopes near ``vmax`` (and
          ``minimum_activation`` must be >= 0.01).

        Parameters
        ----------
        rigid_tendon : bool, optional
            OpenSim's ``ignore_tendon_compliance``.

        Returns
        -------
        MillardParameters

        Raises
        ------
        DataError
            Undamped elastic-tendon muscles with ``minimum_activation < 0.01``.

        Examples
        --------
        >>> p = MillardParameters(max_isometric_force=1.0, optimal_fiber_length=0.1,
        ...                       tendon_slack_length=0.2, fiber_damping=0.0)
        >>> float(p.as_used().concentric_slope_at_vmax[0])
        0.125
        """
        rigid_tendon = as_choice(rigid_tendon, "rigid_tendon", (True, False))
        # kept per variant: the curves of the returned parameters are built once
        kept = self.__dict__.setdefault("_used", {})
        if rigid_tendon not in kept:
            kept[rigid_tendon] = self._as_used(rigid_tendon)
        return kept[rigid_tendon]

    def _as_used(self, rigid_tendon: bool) -> MillardParameters:
        damped = self.fiber_damping >= MIN_DAMPING
        classic = ~damped & (not rigid_tendon)
        self._bad("minimum_activation", classic & (self.minimum_activation < 0.01),
                  ">= 0.01 for an undamped muscle with an elastic tendon (OpenSim)")  # fmt: skip
        con, ecc = self.concentric_slope_at_vmax, self.eccentric_slope_at_vmax
        return dataclasses.replace(
            self,
            fiber_damping=np.where(damped, self.fiber_damping, 0.0),
            minimum_value=np.where(
                classic, np.maximum(self.minimum_value, 0.1), np.minimum(self.minimum_value, 0.0)
            ),
            concentric_slope_at_vmax=np.where(
                classic, np.maximum(con, 0.5 * self.concentric_slope_near_vmax),
                np.minimum(con, 0.0)),
            eccentric_slope_at_vmax=np.where(
                classic, np.maximum(ecc, 0.5 * self.eccentric_slope_near_vmax),
                np.minimum(ecc, 0.0)),
        )  # fmt: skip

    # The curves (built once per parameter set) ----------------------------------------

    def _build(self, builder, what):
        out = []
        for i in range(self.n):
            try:
                out.append(builder(self, i))
            except DataError as err:
                raise DataError(f"{what} of muscle {self.names[i]!r}: {err}") from err
        return BezierCurves.stack(out)

    @cached_property
    def _active_curve(self) -> BezierCurves:
        return self._build(_active_force_length_curve, "ActiveForceLengthCurve")

    @cached_property
    def _velocity_curve(self) -> BezierCurves:
        return self._build(_force_velocity_curve, "ForceVelocityCurve")

    @cached_property
    def _velocity_inverse_curve(self) -> BezierCurves:
        """OpenSim's fvInvCurve: the inverse with end slopes 1/(0.5 × the near slopes)."""
        return _inverse_velocity_ends(self).inverse()

    @cached_property
    def _passive_curve(self) -> BezierCurves:
        return self._build(_fiber_force_length_curve, "FiberForceLengthCurve")

    @cached_property
    def _tendon_curve(self) -> BezierCurves:
        return self._build(_tendon_force_length_curve, "TendonForceLengthCurve")


# ---------------------------------------------------------------------------------------
# Curve construction (SmoothSegmentedFunctionFactory)
# ---------------------------------------------------------------------------------------


def _need(cond, message):
    if not cond:
        raise DataError(message)


def _chain(points, curviness, what):
    """Corner segments through [(x, y, dydx), ...] -> (px (S, 6), py (S, 6))."""
    px, py = [], []
    for (xa, ya, da), (xb, yb, db) in zip(points[:-1], points[1:], strict=True):
        sx, sy = corner_points(xa, ya, da, xb, yb, db, curviness, what)
        px.append(sx)
        py.append(sy)
    return np.array(px), np.array(py)


def _active_force_length_curve(p, i):
    x0, x1 = p.min_norm_active_fiber_length[i], p.transition_norm_fiber_length[i]
    x2, x3 = 1.0, p.max_norm_active_fiber_length[i]
    ylow, dydx = p.minimum_value[i], p.shallow_ascending_slope[i]
    _need(x0 >= 0 and x1 > x0 + _ROOT_EPS and x2 > x1 + _ROOT_EPS and x3 > x2 + _ROOT_EPS,
          "0 <= min_norm_active_fiber_length < transition_norm_fiber_length < 1 < "
          "max_norm_active_fiber_length must hold")  # fmt: skip
    _need(ylow >= 0, "minimum_value must be >= 0")
    _need(0 <= dydx < (1 - ylow) / (x2 - x1),
          f"shallow_ascending_slope must be in [0, {(1 - ylow) / (x2 - x1):g})")  # fmt: skip
    c = _scale_curviness(1.0)
    x_delta = 0.05 * x2
    xs = x2 - x_delta
    y1 = 1 - dydx * (xs - x1)
    dydx01 = 1.25 * y1 / (x1 - x0)
    x01, y01 = x0 + 0.5 * (x1 - x0), 0.5 * y1
    x1s, y1s = x1 + 0.5 * (xs - x1), y1 + 0.5 * (1 - y1)
    x23 = (x2 + x_delta) + 0.5 * (x3 - (x2 + x_delta))
    dydx23 = -1.0 / ((x3 - x_delta) - (x2 + x_delta))
    pts = [(x0, ylow, 0.0), (x01, y01, dydx01), (x1s, y1s, dydx), (x2, 1.0, 0.0),
           (x23, 0.5, dydx23), (x3, ylow, 0.0)]  # fmt: skip
    px, py = _chain(pts, c, "ActiveForceLengthCurve")
    return px, py, x0, x3, ylow, ylow, 0.0, 0.0


def _force_velocity_curve(p, i):
    fmax = p.max_eccentric_velocity_force_multiplier[i]
    dc, dnc = p.concentric_slope_at_vmax[i], p.concentric_slope_near_vmax[i]
    diso = p.isometric_slope[i]
    de, dne = p.eccentric_slope_at_vmax[i], p.eccentric_slope_near_vmax[i]
    cc, ce = p.concentric_curviness[i], p.eccentric_curviness[i]
    _need(fmax > 1, "max_eccentric_velocity_force_multiplier must be > 1")
    _need(0 <= dc < 1, "concentric_slope_at_vmax must be in [0, 1)")
    _need(dc < dnc <= 1, "concentric_slope_near_vmax must be in (concentric_slope_at_vmax, 1]")
    _need(diso > 1, "isometric_slope must be > 1")
    _need(0 <= de < fmax - 1, "eccentric_slope_at_vmax must be in [0, fmax - 1)")
    _need(de <= dne < fmax - 1, "eccentric_slope_near_vmax must be in [slope at vmax, fmax-1)")
    _need(0 <= cc <= 1 and 0 <= ce <= 1, "the curvinesses must be in [0, 1]")
    y_near_c = 0.5 * dnc * 0.1 + 0.5 * dc * 0.1
    y_near_e = fmax + 0.5 * dne * (-0.1) + 0.5 * de * (-0.1)
    what = "ForceVelocityCurve"
    cpx, cpy = _chain([(-1.0, 0.0, dc), (-0.9, y_near_c, dnc), (0.0, 1.0, diso)],
                      _scale_curviness(cc), what)  # fmt: skip
    epx, epy = _chain([(0.0, 1.0, diso), (0.9, y_near_e, dne), (1.0, fmax, de)],
                      _scale_curviness(ce), what)  # fmt: skip
    return np.vstack([cpx, epx]), np.vstack([cpy, epy]), -1.0, 1.0, 0.0, fmax, dc, de


def _inverse_velocity_ends(p):
    """The force-velocity curve that OpenSim inverts (slopes at vmax = 0.5 near slopes)."""
    q = dataclasses.replace(p, concentric_slope_at_vmax=0.5 * p.concentric_slope_near_vmax,
                            eccentric_slope_at_vmax=0.5 * p.eccentric_slope_near_vmax)  # fmt: skip
    return q._build(_force_velocity_curve, "ForceVelocityCurve")


def _fiber_force_length_curve(p, i):
    e0, e1 = p.fiber_strain_at_zero_force[i], p.fiber_strain_at_one_norm_force[i]
    klow, kiso, c = (p.fiber_stiffness_at_low_force[i], p.fiber_stiffness_at_one_norm_force[i],
                     p.fiber_curviness[i])  # fmt: skip
    if np.isnan(kiso):
        klow, kiso, c = 0.2, 2.0 / (e1 - e0), 0.75
    _need(e1 > e0, "strain_at_one_norm_force must be > strain_at_zero_force")
    _need(kiso > 1 / (e1 - e0), f"stiffness_at_one_norm_force must be > {1 / (e1 - e0):g}")
    _need(0 < klow < 1 / (e1 - e0), f"stiffness_at_low_force must be in (0, {1 / (e1 - e0):g})")
    _need(0 <= c <= 1, "curviness must be in [0, 1]")
    x_zero, x_iso = 1 + e0, 1 + e1
    dx = min(0.1 / kiso, 0.1 * (x_iso - x_zero))
    x_low = x_zero + dx
    x_foot = x_zero + 0.5 * (x_low - x_zero)
    y_low = klow * (x_low - x_foot)
    px, py = _chain([(x_zero, 0.0, 0.0), (x_low, y_low, klow), (x_iso, 1.0, kiso)],
                    _scale_curviness(c), "FiberForceLengthCurve")  # fmt: skip
    return px, py, x_zero, x_iso, 0.0, 1.0, 0.0, kiso


def _tendon_force_length_curve(p, i):
    e_iso = p.tendon_strain_at_one_norm_force[i]
    kiso, ftoe, c = (p.tendon_stiffness_at_one_norm_force[i], p.tendon_norm_force_at_toe_end[i],
                     p.tendon_curviness[i])  # fmt: skip
    _need(e_iso > 0, "strain_at_one_norm_force must be > 0")
    if np.isnan(kiso):
        kiso, ftoe, c = 1.375 / e_iso, 2.0 / 3.0, 0.5
    _need(kiso > 1 / e_iso, f"stiffness_at_one_norm_force must be > {1 / e_iso:g}")
    _need(0 < ftoe < 1, "norm_force_at_toe_end must be in (0, 1)")
    _need(0 <= c <= 1, "curviness must be in [0, 1]")
    x_iso = 1.0 + e_iso
    x_toe = (ftoe - 1) / kiso + x_iso
    x_foot = 1.0 + (x_toe - 1.0) / 10.0
    y_toe_mid = 0.5 * ftoe
    x_toe_mid = (y_toe_mid - 1.0) / kiso + x_iso
    dydx_toe_mid = y_toe_mid / (x_toe_mid - x_foot)
    x_ctrl = x_foot + 0.5 * (x_toe_mid - x_foot)
    y_ctrl = dydx_toe_mid * (x_ctrl - x_foot)
    px, py = _chain([(1.0, 0.0, 0.0), (x_ctrl, y_ctrl, dydx_toe_mid), (x_toe, ftoe, kiso)],
                    _scale_curviness(c), "TendonForceLengthCurve")  # fmt: skip
    return px, py, 1.0, x_toe, 0.0, ftoe, 0.0, kiso


# ---------------------------------------------------------------------------------------
# Public curve functions
# ---------------------------------------------------------------------------------------

_DEFAULT = None


def _default_params() -> MillardParameters:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = MillardParameters(max_isometric_force=1.0, optimal_fiber_length=1.0,
                                     tendon_slack_length=1.0)  # fmt: skip
    return _DEFAULT


def _evaluate(x, name, params, attr, derivative):
    derivative = as_choice(derivative, "derivative", (0, 1, 2))
    if params is None:
        arr = as_float_array(x, name)
        curve = getattr(_default_params(), attr)
        return curve.evaluate(arr[..., None], derivative)[..., 0]
    if not isinstance(params, MillardParameters):
        raise DataError(
            f"Expected `params` to be a MillardParameters (e.g. "
            f"MillardParameters.from_muscles(muscles)), got {type(params).__name__}"
        )
    arr = as_float_array(x, name)
    if arr.ndim and arr.shape[-1] not in (1, params.n):
        raise DataError(
            f"Expected the last axis of `{name}` to have {params.n} entries (one per "
            f"muscle), got shape {arr.shape}"
        )
    return getattr(params, attr).evaluate(arr, derivative)


_CURVE_DOC = """
    Parameters
    ----------
    {x} : array_like
        {what}; shape ``(..., n)`` with `params` (one column per muscle), any shape
        without.
    params : MillardParameters, optional
        The curve parameters of ``n`` muscles (as given: :meth:`MillardParameters.as_used`
        applies the changes OpenSim's muscle makes); default OpenSim's default curve.
    derivative : {{0, 1, 2}}, optional
        0 for the value, 1 or 2 for the first or second derivative with respect to
        `{x}` (OpenSim's ``calcDerivative(x, order)``).

    Returns
    -------
    ndarray
        Broadcast shape of `{x}` and ``(n,)``.

    Raises
    ------
    DataError
        Non-finite input, a last axis that is not one per muscle, bad `derivative`, or
        curve parameters OpenSim would refuse.
"""


def millard_active_force_length(lm_norm, params=None, *, derivative=0) -> np.ndarray:
    """Millard's active force-length multiplier ``fL(l̃M)`` (OpenSim ActiveForceLengthCurve).

    Notes
    -----
    Five quintic Bézier corners through ``(l̃min, fmin)``, the middle of the steep
    ascending limb, the shallow ascending limb (slope ``shallow_ascending_slope`` from
    ``transition_norm_fiber_length``), the plateau ``(1, 1)``, the middle of the
    descending limb and ``(l̃max, fmin)``, curviness 1 (OpenSim's
    ``createFiberActiveForceLengthCurve`` with ``x2 = 1``); constant ``fmin`` beyond.

    Examples
    --------
    >>> round(float(millard_active_force_length(1.0)), 12)
    1.0
    """
    return _evaluate(lm_norm, "lm_norm", params, "_active_curve", derivative)


def millard_force_velocity(vm_norm, params=None, *, derivative=0) -> np.ndarray:
    """Millard's force-velocity multiplier ``fV(ṽM)`` (OpenSim ForceVelocityCurve).

    Notes
    -----
    Four corners: (-1, 0) with ``concentric_slope_at_vmax``, (-0.9, ·) with the slope
    near vmax, (0, 1) with ``isometric_slope``, (0.9, ·), (1, fmax) with
    ``eccentric_slope_at_vmax``; concentric and eccentric curviness; linear beyond
    ±1. ``ṽM = vM / (vmax lM0)``, lengthening positive.

    Examples
    --------
    >>> float(millard_force_velocity(0.0)), float(millard_force_velocity(-1.0))
    (1.0, 0.0)
    """
    return _evaluate(vm_norm, "vm_norm", params, "_velocity_curve", derivative)


def millard_passive_force_length(lm_norm, params=None, *, derivative=0) -> np.ndarray:
    """Millard's passive fiber force-length multiplier (OpenSim FiberForceLengthCurve).

    Notes
    -----
    Two corners from ``(1 + e0, 0)`` (slope 0) through a low-force point of slope
    ``stiffness_at_low_force`` to ``(1 + e1, 1)`` (slope ``stiffness_at_one_norm_force``);
    0 below, linear above.

    Examples
    --------
    >>> float(millard_passive_force_length(1.0)), round(float(
    ...     millard_passive_force_length(1.7)), 12)
    (0.0, 1.0)
    """
    return _evaluate(lm_norm, "lm_norm", params, "_passive_curve", derivative)


def millard_tendon_force_length(lt_norm, params=None, *, derivative=0) -> np.ndarray:
    """Millard's tendon force-length multiplier ``fT(l̃T)`` (OpenSim TendonForceLengthCurve).

    Notes
    -----
    Two corners from (1, 0) to the end of the toe region ``(x_toe, ftoe)``, where the
    linear part of slope ``stiffness_at_one_norm_force`` through ``(1 + e0, 1)`` begins
    (and continues beyond); 0 below slack length.

    Examples
    --------
    >>> float(millard_tendon_force_length(1.0)), round(float(
    ...     millard_tendon_force_length(1.049)), 12)
    (0.0, 1.0)
    """
    return _evaluate(lt_norm, "lt_norm", params, "_tendon_curve", derivative)


for _f, _x, _what in (
    (millard_active_force_length, "lm_norm", "Normalized fiber length ``lM / lM0``"),
    (millard_force_velocity, "vm_norm", "Normalized fiber velocity ``vM / (vmax lM0)``"),
    (millard_passive_force_length, "lm_norm", "Normalized fiber length ``lM / lM0``"),
    (millard_tendon_force_length, "lt_norm", "Normalized tendon length ``lT / lTs``"),
):
    _head, _sep, _tail = _f.__doc__.partition("\n\n    Notes")
    _f.__doc__ = _head + "\n" + _CURVE_DOC.format(x=_x, what=_what) + "\n    Notes" + _tail
