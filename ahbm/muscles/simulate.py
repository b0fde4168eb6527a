"""Muscle-driven forward simulation: Hill-type muscles as force elements of a model.

:class:`MuscleActuators` is a stateful force element
(:class:`~ahbm.dynamics.StatefulForceElement`): :func:`ahbm.dynamics.simulate` integrates
the multibody state ``(q, qd)`` (with its constraints and events) together with one
activation per muscle and, for elastic tendons, one fiber state per muscle (Thelen:
fiber length, as OpenSim's ``Thelen2003Muscle``; De Groote: normalized tendon force, as
OpenSim's ``DeGrooteFregly2016Muscle`` in its explicit mode). The muscles pull along
their paths (:mod:`ahbm.muscles.paths`): a tendon force ``F`` gives the generalized
forces ``r(q)ᵀ F`` with the moment arms ``r = -∂l/∂q``, and the path lengthening speed
is ``l̇ = -r q̇``. :func:`simulate_muscles` is the shortcut that returns the muscle
outputs (:class:`MuscleSimulationResult`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_choice,
    as_float_array,
    callback_result,
    check_model,
)
from ahbm.dynamics import StatefulForceElement, simulate
from ahbm.dynamics.force_element import check_forces
from ahbm.errors import DataError, ModelError, SimulationError
from ahbm.muscles._thelen_equilibrium import _Pennation, _thelen_from_fiber_length, _thelen_rigid
from ahbm.muscles.hill import (
    _degroote_rigid,
    _dg_geometry,
    _state_inputs,
    activation_rate,
    muscle_equilibrium,
)
from ahbm.muscles.hill_curves import (
    _DG_C1,
    _DG_C2,
    _DG_D1,
    _DG_D4,
    MuscleParameters,
    _check_curves,
    _dg_fal,
    _dg_fpe,
    _dg_ft_inverse,
    _dg_fv_inverse,
    _dg_kt,
)
from ahbm.muscles.paths import _compute as _path_compute
from ahbm.muscles.paths import _out as _path_out
from ahbm.types import ResultRepr

__all__ = ["MuscleActuators", "MuscleSimulationResult", "simulate_muscles", "muscle_tendon_forces"]


@dataclass(frozen=True, repr=False)
class MuscleSimulationResult(ResultRepr):
    """Output of :func:`simulate_muscles` (arrays with the output times first).

    Attributes
    ----------
    t : ndarray, (n,)
        Output times, s.
    q, qd : ndarray, (n, nq), (n, nv)
        Coordinates and generalized velocities.
    excitation, activation : ndarray, (n, n_muscles)
        Excitation (clipped to [0, 1], Thelen's to [minimum_activation, 1]) and
        activation.
    tendon_force : ndarray, (n, n_muscles)
        Musculotendon force, N.
    fiber_length : ndarray, (n, n_muscles)
        m.
    mt_length, mt_speed : ndarray, (n, n_muscles)
        Path length (m) and lengthening speed (m/s).
    muscle_tau : ndarray, (n, nv)
        Generalized forces of the muscles, ``rᵀ F``.
    muscles : tuple of str
        Muscle names, in column order.
    curves : str
    rigid_tendon : bool
    nfev : int
        Right-hand-side evaluations.
    status : int
        0: reached the end of ``t_span``; 1: stopped by a terminal event.
    message : str
    simulation : SimulationResult or None
        The result of :func:`ahbm.dynamics.simulate` these outputs come from (events,
        phases, constraint forces, accelerations).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    excitation: np.ndarray
    activation: np.ndarray
    tendon_force: np.ndarray
    fiber_length: np.ndarray
    mt_length: np.ndarray
    mt_speed: np.ndarray
    muscle_tau: np.ndarray
    muscles: tuple
    curves: str
    rigid_tendon: bool
    nfev: int = 0
    status: int = 0
    message: str = ""
    simulation: object = None


def muscle_tendon_forces(
    params,
    activation,
    mt_length,
    mt_speed,
    fiber_state=None,
    *,
    curves="thelen2003",
    rigid_tendon=False,
):
    """Tendon forces of muscles from their states, and the rate of the fiber state.

    Parameters
    ----------
    params : MuscleParameters
    activation, mt_length, mt_speed : array_like, (..., n)
        Activation, path length (m) and lengthening speed (m/s).
    fiber_state : array_like, (..., n), optional
        Elastic tendon only: Thelen's fiber length (m) or De Groote's normalized tendon
        force.
    curves : {"thelen2003", "degroote2016"}
    rigid_tendon : bool

    Returns
    -------
    tendon_force : ndarray, (..., n)
        N.
    fiber_length : ndarray, (..., n)
        m.
    fiber_state_rate : ndarray, (..., n)
        Time derivative of `fiber_state` (zeros with a rigid tendon).

    Raises
    ------
    DataError
        Bad `curves` or `params`, arrays that are not finite or do not broadcast to one
        value per muscle, an elastic tendon without `fiber_state`.

    Notes
    -----
    Thelen (OpenSim's ``Thelen2003Muscle``): the fiber velocity follows from the force
    balance, ``fV = (fT/cos α - fPE)/(a fL)``, through Thelen's eq. 6; the fiber stops at
    OpenSim's minimum fiber length. De Groote (OpenSim's explicit tendon dynamics): with
    the tendon force ``fT`` as state, ``fV = (fT/cos α - fPE)/(a fL)``,
    ``ṽM = fV⁻¹(fV)``, tendon velocity ``vT = vMT - vM/cos α`` and
    ``ḟT = (vT/lTs) dfT/dl̃T``; the activation in ``a fL`` is kept at or above
    ``minimum_activation`` (the relation is singular at zero activation).

    Examples
    --------
    >>> p = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.2)
    >>> f, lm, _ = muscle_tendon_forces(p, [1.0], [0.3], [0.0], rigid_tendon=True)
    >>> float(f[0]), round(float(lm[0]), 12)
    (1000.0, 0.1)
    """
    curves, p, shape, (a, lmt, vmt) = _state_inputs(
        params, np.clip(as_float_array(activation, "activation"), 0.0, 1.0), mt_length, mt_speed,
        curves,
    )  # fmt: skip
    rigid_tendon = as_choice(rigid_tendon, "rigid_tendon", (True, False))
    if rigid_tendon:
        s = muscle_equilibrium(p, np.clip(a, 0.0, 1.0), lmt, vmt, curves=curves, rigid_tendon=True)
        return s.tendon_force, s.fiber_length, np.zeros(s.fiber_length.shape)
    if fiber_state is None:
        raise DataError("an elastic tendon needs `fiber_state` (fiber length or tendon force)")
    z = as_float_array(fiber_state, "fiber_state")
    try:
        z = np.broadcast_to(z, shape)
    except ValueError as err:
        raise DataError(
            f"Expected `fiber_state` to broadcast to the muscle states {shape}, got {z.shape}"
        ) from err
    return _elastic(p, curves, a, lmt, vmt, z)


def _elastic(p, curves, a, lmt, vmt, z):
    if curves == "thelen2003":
        pen = _Pennation(p)
        ac = np.clip(a, p.minimum_activation, 1.0)
        out = _thelen_from_fiber_length(p, pen, ac, lmt, vmt, z, np.ones(np.shape(z), bool))
        # at the minimum fiber length a shortening fiber stops (OpenSim's clamped state)
        return out["tendon_force"], out["fiber_length"], out["fiber_velocity"]
    lts, lopt = p.tendon_slack_length, p.optimal_fiber_length
    e0 = p.tendon_strain
    ltn = _dg_ft_inverse(z, e0)
    lm, cos, _ = _dg_geometry(p, lmt, lts * ltn)
    ln = lm / lopt
    ac = np.maximum(a, p.minimum_activation)
    with np.errstate(divide="ignore", invalid="ignore"):
        fv = (z / cos - _dg_fpe(ln, p.passive_strain)) / (
            ac * _dg_fal(ln, p.active_force_width_scale)
        )
    # keep the inverse force-velocity curve (a sinh) finite far outside its domain
    fv = np.clip(fv, _DG_D4 - 100.0 * abs(_DG_D1), _DG_D4 + 100.0 * abs(_DG_D1))
    vm = _dg_fv_inverse(fv) * p.max_contraction_velocity * lopt
    vt = vmt - vm / cos
    kt = _dg_kt(e0)
    rate = vt / lts * _DG_C1 * kt * np.exp(kt * (ltn - _DG_C2))
    return z * p.max_isometric_force, lm, rate


class _Excitation:
    """u(t, q, qd, a) from the user's excitations or controller, clipped to [0, 1]."""

    def __init__(self, excitations, controller, excitation_time, n):
        self.n = n
        if (excitations is None) == (controller is None):
            raise DataError("give exactly one of `excitations` and `controller`")
        self.controller = controller
        self.fun = None
        self.table = None
        if controller is not None:
            if not callable(controller):
                raise DataError("Expected `controller` to be callable as controller(t, q, qd, a)")
            if excitation_time is not None:
                raise DataError("`excitation_time` goes with an `excitations` table")
        elif callable(excitations):
            self.fun = excitations
            if excitation_time is not None:
                raise DataError(
                    "`excitation_time` goes with an `excitations` table, not a function"
                )
        else:
            u = as_float_array(excitations, "excitations")
            if u.shape == (n,):
                self.table = (None, u)
            elif u.ndim == 2 and u.shape[1] == n:
                if excitation_time is None:
                    raise DataError(
                        "an `excitations` table (n_times, n_muscles) needs "
                        "`excitation_time` (n_times,), s"
                    )
                tt = as_float_array(excitation_time, "excitation_time")
                if tt.shape != (u.shape[0],) or np.any(np.diff(tt) <= 0):
                    raise DataError(
                        f"Expected `excitation_time` to be {u.shape[0]} increasing times, got "
                        f"shape {tt.shape}"
                    )
                self.table = (tt, u)
            else:
                raise DataError(
                    f"Expected `excitations` of shape ({n},) or (n_times, {n}), or a function "
                    f"of t, got shape {u.shape}"
                )

    def __call__(self, t, q, qd, a):
        if self.controller is not None:
            u = callback_result(self.controller(t, q, qd, a.copy()), "controller", (self.n,))
        elif self.fun is not None:
            u = callback_result(self.fun(t), "excitations", (self.n,))
        else:
            tt, table = self.table
            if tt is None:
                u = table
            else:
                i = int(np.clip(np.searchsorted(tt, t) - 1, 0, len(tt) - 2))
                w = np.clip((t - tt[i]) / (tt[i + 1] - tt[i]), 0.0, 1.0)
                u = table[i] * (1 - w) + table[i + 1] * w
        if u.shape != (self.n,) or not np.all(np.isfinite(u)):
            raise SimulationError(f"non-finite or misshaped excitations at t = {t:.6g} s")
        return np.clip(u, 0.0, 1.0)


class MuscleActuators(StatefulForceElement):
    """Hill-type muscles as one force element with states, for :func:`~ahbm.dynamics.simulate`.

    The element's states are one activation per muscle and, for elastic tendons, one fiber
    state per muscle (Thelen: fiber length, m, as OpenSim's ``Thelen2003Muscle``; De
    Groote: normalized tendon force, as OpenSim's ``DeGrooteFregly2016Muscle`` in its
    explicit mode). Its generalized force is ``r(q)ᵀ F`` with the moment arms
    ``r = -∂l/∂q`` of the muscle paths (:mod:`ahbm.muscles.paths`) and the tendon forces
    ``F`` of :func:`muscle_tendon_forces`; the path lengthening speed is ``l̇ = -r q̇``.

    Parameters
    ----------
    model : Model
        With ``model.muscles``.
    excitations : callable, array_like (n,) or (n_times, n), optional
        ``u(t) -> (n,)``, constant excitations, or a table over `excitation_time` (linear
        interpolation, ends held).
    controller : callable, optional
        ``controller(t, q, qd, a) -> (n,)`` excitations from the state and the
        activations ``a`` (instead of `excitations`).
    excitation_time : array_like, (n_times,), optional
        Times of an excitation table, s.
    muscles : sequence of str, optional
        The muscles that act (default all of ``model.muscles``, model order); the others
        apply no force.
    params : MuscleParameters, optional
        Default ``MuscleParameters.from_muscles`` of those muscles.
    curves : {"thelen2003", "degroote2016"}
    rigid_tendon : bool
        Rigid tendons (activation states only) or elastic tendons (one fiber state per
        muscle, started at equilibrium as OpenSim's ``equilibrateMuscles``).
    activation0 : array_like, (n,), optional
        Initial activation; default: the excitation at the start time (a controller is
        asked with ``a = minimum_activation``).
    name : str, optional
        The element's name, the key of its states in ``SimulationResult.force_states``.

    Raises
    ------
    DataError
        Bad arguments (shapes, names, options), a model without muscles.

    Notes
    -----
    State derivatives: ``ȧ`` from :func:`~ahbm.muscles.activation_rate`, the fiber
    state's from :func:`muscle_tendon_forces`. Excitations are clipped to [0, 1] (to
    ``[minimum_activation, 1]`` for ``"thelen2003"``, OpenSim's default ``min_control``
    of ``Thelen2003Muscle``). State names: ``"<muscle>.activation"``, then
    ``"<muscle>.fiber_length"`` (Thelen) or ``"<muscle>.normalized_tendon_force"`` (De
    Groote). :meth:`muscle_result` turns a simulation's states into tendon forces,
    fiber lengths, path lengths and the other muscle outputs.

    Examples
    --------
    >>> from ahbm.dynamics import simulate
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("hanging mass", gravity=(0, 0, -9.81))
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=20.0)
    >>> m.muscles = [Muscle("m", (PathPoint("o", "ground", (0, 0, 0.3)),
    ...                           PathPoint("i", "mass", (0, 0, 0))),
    ...                     max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                     tendon_slack_length=0.2)]
    >>> act = MuscleActuators(m, lambda t: [0.5])
    >>> r = simulate(m, (0, 0.2), [0.0], None, forces=[act], method="LSODA")
    >>> r.force_state_names["muscles"]
    ('m.activation', 'm.fiber_length')
    >>> act.muscle_result(r).tendon_force.shape[1]
    1
    """

    def __init__(
        self,
        model,
        excitations=None,
        *,
        controller=None,
        excitation_time=None,
        muscles=None,
        params=None,
        curves="thelen2003",
        rigid_tendon=False,
        activation0=None,
        name="muscles",
    ):
        check_model(model)
        self.curves = _check_curves(curves)
        self.rigid_tendon = bool(as_choice(rigid_tendon, "rigid_tendon", (True, False)))
        if not isinstance(name, str) or not name:
            raise DataError(f"Expected `name` to be a non-empty str, got {name!r}")
        self.name = name
        self.muscles = _muscle_names(model, muscles)
        n = len(self.muscles)
        by_name = {m.name: m for m in model.muscles}
        if params is None:
            params = MuscleParameters.from_muscles([by_name[m] for m in self.muscles])
        elif not isinstance(params, MuscleParameters) or params.n != n:
            raise DataError(f"Expected `params` to be a MuscleParameters of {n} muscles")
        self.params = params.resolved(self.curves)
        self._excite = _Excitation(excitations, controller, excitation_time, n)
        if activation0 is not None:
            activation0 = as_float_array(activation0, "activation0")
            if activation0.shape != (n,) or np.any((activation0 < 0) | (activation0 > 1)):
                raise DataError(f"Expected `activation0` to be {n} values in [0, 1]")
        self.activation0 = activation0
        # Thelen: excitations below the minimum activation are raised to it (OpenSim's
        # default min_control of Thelen2003Muscle)
        self._u_floor = self.params.minimum_activation if self.curves == "thelen2003" else 0.0

    def __repr__(self) -> str:
        tendon = "rigid" if self.rigid_tendon else "elastic"
        return (
            f"MuscleActuators(name={self.name!r}, {len(self.muscles)} muscles, "
            f"curves={self.curves!r}, {tendon} tendons)"
        )

    @property
    def state_names(self) -> tuple:
        """``"<muscle>.activation"`` for each muscle, then the fiber states (elastic)."""
        out = tuple(f"{m}.activation" for m in self.muscles)
        if not self.rigid_tendon:
            kind = "fiber_length" if self.curves == "thelen2003" else "normalized_tendon_force"
            out += tuple(f"{m}.{kind}" for m in self.muscles)
        return out

    def validate(self, model) -> None:
        """Raise ModelError unless `model` has the element's muscles."""
        have = {m.name for m in (getattr(model, "muscles", None) or ())}
        missing = [m for m in self.muscles if m not in have]
        if missing:
            raise ModelError(
                f"force element {self.name!r}: model '{model.name}' has no muscles {missing}"
            )

    def excitation(self, t, q, qd, a) -> np.ndarray:
        """The excitations (n,) the muscles receive at one state, clipped as described."""
        return np.maximum(self._excite(t, q, qd, a), self._u_floor)

    def _excitations(self, t, q, qd, a):
        if np.ndim(q) == 1:
            return self.excitation(t, q, qd, a)
        batch = np.shape(a)[:-1]
        tb = np.broadcast_to(np.asarray(t, dtype=float), batch)
        qb = np.broadcast_to(q, batch + np.shape(q)[-1:])
        vb = np.broadcast_to(qd, batch + np.shape(qd)[-1:])
        out = np.empty(np.shape(a))
        for i in np.ndindex(batch):
            out[i] = self.excitation(float(tb[i]), qb[i], vb[i], a[i])
        return out

    def _path(self, model, q, qd):
        # lengths and moment arms in one pass (muscle_lengths and moment_arms share it)
        kin, lengths, grad = _path_compute(model, q, self.muscles, None, need_grad=True)
        lmt, r = _path_out(kin, lengths), _path_out(kin, -grad)
        vmt = -np.einsum("...mv,...v->...m", r, as_float_array(qd, "qd"))
        return lmt, vmt, r

    def _split(self, s):
        s = self.check_state(s)
        n = len(self.muscles)
        return s[..., :n], s[..., n:]

    def _forces(self, a, lmt, vmt, z):
        """(tendon force, fiber-state rate) along the integration."""
        p, curves = self.params, self.curves
        if self.rigid_tendon:
            if curves == "thelen2003":
                out = _thelen_rigid(p, np.clip(a, p.minimum_activation, 1.0), lmt, vmt)
            else:
                out = _degroote_rigid(p, np.clip(a, 0.0, 1.0), lmt, vmt)
            return out["tendon_force"], np.zeros(np.shape(a)[:-1] + (0,))
        f, _, zdot = _elastic(p, curves, a, lmt, vmt, z)
        return f, zdot

    def initial_state(self, model, q, qd, *, t=0.0) -> np.ndarray:
        """Initial activations and (elastic tendons) the fiber states at equilibrium.

        Raises
        ------
        SimulationError
            No muscle equilibrium at ``(q, qd)``.
        """
        p = self.params
        if self.activation0 is None:
            a0 = self.excitation(t, q, qd, np.array(p.minimum_activation, dtype=float))
        else:
            a0 = self.activation0
        if self.rigid_tendon:
            return np.array(a0, dtype=float)
        lmt0, vmt0, _ = self._path(model, q, qd)
        s0 = muscle_equilibrium(p, a0, lmt0, vmt0, curves=self.curves)
        if not np.all(s0.converged):
            bad = [self.muscles[i] for i in np.flatnonzero(~s0.converged)]
            raise SimulationError(f"no initial muscle equilibrium for {bad} at q0")
        if self.curves == "thelen2003":
            z0 = s0.fiber_length
        else:
            z0 = s0.tendon_force / p.max_isometric_force
        return np.concatenate([a0, z0])

    def rates(self, model, q, qd, s, *, t=0.0):
        """Generalized force (..., nv) and state derivatives (..., n_states) in one pass."""
        a, z = self._split(s)
        lmt, vmt, r = self._path(model, q, qd)
        u = self._excitations(t, q, qd, a)
        f, zdot = self._forces(a, lmt, vmt, z)
        adot = activation_rate(u, a, self.params, curves=self.curves)
        # one state (simulate's right-hand side): a matrix product; batches: einsum
        tau = r.T @ f if r.ndim == 2 else np.einsum("...mv,...m->...v", r, f)
        return tau, np.concatenate([adot, zdot], axis=-1)

    def generalized_force(self, model, q, qd, *, t=0.0, kin=None, s=None) -> np.ndarray:
        """Generalized force ``rᵀ F`` (..., nv) of the muscles with states `s` (..., n_states)."""
        a, z = self._split(s)
        lmt, vmt, r = self._path(model, q, qd)
        f, _ = self._forces(a, lmt, vmt, z)
        return np.einsum("...mv,...m->...v", r, f)

    def state_derivative(self, model, q, qd, s, *, t=0.0) -> np.ndarray:
        """``[ȧ, ż]`` (..., n_states), 1/s and the fiber state's unit per second."""
        return self.rates(model, q, qd, s, t=t)[1]

    def muscle_result(self, result) -> MuscleSimulationResult:
        """The muscle outputs of a :func:`~ahbm.dynamics.simulate` result with this element.

        Parameters
        ----------
        result : SimulationResult
            From ``simulate(..., forces=[..., self, ...])``.

        Returns
        -------
        MuscleSimulationResult
            Excitations, activations, tendon forces, fiber lengths, path lengths and speeds
            and the muscles' generalized forces at the result's output times
            (``simulation`` is `result`).

        Raises
        ------
        DataError
            `result` has no states of this element.
        """
        states = getattr(result, "force_states", None) or {}
        if self.name not in states or states[self.name].shape[-1] != self.n_states:
            raise DataError(
                f"Expected a SimulationResult of simulate(..., forces=[{self.name!r}, ...]); "
                f"it has states of {list(states)}"
            )
        p, curves = self.params, self.curves
        model, q, qd = result.model, result.q, result.qd
        a, z = self._split(states[self.name])
        lmt, vmt, r = self._path(model, q, qd)
        u = self._excitations(result.t, q, qd, a)
        if self.rigid_tendon:
            f, lm, _ = muscle_tendon_forces(p, a, lmt, vmt, curves=curves, rigid_tendon=True)
        else:
            f, lm, _ = _elastic(p, curves, a, lmt, vmt, z)
        return MuscleSimulationResult(
            t=result.t,
            q=q,
            qd=qd,
            excitation=u,
            activation=a,
            tendon_force=f,
            fiber_length=lm,
            mt_length=lmt,
            mt_speed=vmt,
            muscle_tau=np.einsum("...mv,...m->...v", r, f),
            muscles=self.muscles,
            curves=curves,
            rigid_tendon=self.rigid_tendon,
            nfev=result.nfev,
            status=result.status,
            message=result.message,
            simulation=result,
        )


def _muscle_names(model, muscles):
    """The names of `muscles` (None: all of model.muscles), checked."""
    all_muscles = tuple(getattr(model, "muscles", None) or ())
    if not all_muscles:
        raise DataError("`model` has no muscles (model.muscles is empty)")
    by_name = {m.name: m for m in all_muscles}
    if muscles is None:
        return tuple(m.name for m in all_muscles)
    if isinstance(muscles, (str, bytes)) or not hasattr(muscles, "__iter__"):
        raise DataError("Expected `muscles` to be a sequence of muscle names")
    names = tuple(muscles)
    if not all(isinstance(x, str) for x in names):
        raise DataError(f"Expected `muscles` to be muscle names (str), got {list(names)}")
    unknown = [m for m in names if m not in by_name]
    if unknown:
        raise DataError(f"unknown muscles {unknown}; the model has {list(by_name)}")
    if len(set(names)) != len(names):
        raise DataError(f"Expected `muscles` to name each muscle once, got {list(names)}")
    return names


def simulate_muscles(
    model,
    t_span,
    q0,
    qd0=None,
    *,
    excitations=None,
    controller=None,
    excitation_time=None,
    muscles=None,
    params=None,
    curves="thelen2003",
    rigid_tendon=False,
    activation0=None,
    tau=None,
    forces=(),
    method="LSODA",
    rtol=1e-6,
    atol=1e-8,
    max_step=np.inf,
    t_eval=None,
    **options,
) -> MuscleSimulationResult:
    """Simulate a model driven by its muscles (and optional other loads).

    A shortcut for :func:`ahbm.dynamics.simulate` with a :class:`MuscleActuators` element
    (named ``"muscles"``) and :meth:`MuscleActuators.muscle_result` of its result.

    Parameters
    ----------
    model : Model
        With ``model.muscles``.
    t_span : (float, float)
        Start and end time, s.
    q0 : array_like, (nq,)
    qd0 : array_like, (nv,), optional
        None: at rest.
    excitations, controller, excitation_time, muscles, params, curves, rigid_tendon, activation0
        As for :class:`MuscleActuators`.
    tau : array_like (nv,) or callable, optional
        Other generalized forces, constant or ``tau(t, q, qd)``.
    forces : sequence of ForceElement, optional
        Other force elements (:mod:`ahbm.dynamics.forces`).
    method, rtol, atol, max_step, t_eval
        As for :func:`ahbm.dynamics.simulate` (``"LSODA"`` by default: elastic tendons
        make the system stiff).
    **options
        Other keywords of :func:`ahbm.dynamics.simulate`: ``constraints`` (default: the
        model's own), ``events``, ``project``, ``first_step``, ...

    Returns
    -------
    MuscleSimulationResult
        With ``simulation``, the :class:`~ahbm.dynamics.SimulationResult` (events,
        phases, constraint forces).

    Raises
    ------
    DataError
        Bad arguments (shapes, names, options).
    SimulationError
        No initial muscle equilibrium, non-finite states or integrator failure.

    Notes
    -----
    State ``y = [q, q̇, a, z]``: ``q̇ = T(q) v``, ``M v̇ + C = rᵀ F + τ`` (with
    constraints: ``+ Gᵀλ``), ``ȧ`` from :func:`~ahbm.muscles.activation_rate`, ``ż``
    from :func:`muscle_tendon_forces`. OpenSim's equivalents: a ``Manager`` integration
    of a model with ``Thelen2003Muscle`` or ``DeGrooteFregly2016Muscle`` forces driven by
    a ``PrescribedController``.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("hanging mass", gravity=(0, 0, -9.81))
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=20.0)
    >>> m.muscles = [Muscle("m", (PathPoint("o", "ground", (0, 0, 0.3)),
    ...                           PathPoint("i", "mass", (0, 0, 0))),
    ...                     max_isometric_force=1000.0, optimal_fiber_length=0.1,
    ...                     tendon_slack_length=0.2)]
    >>> r = simulate_muscles(m, (0, 0.2), [0.0], excitations=[0.5], rigid_tendon=True)
    >>> r.q.shape[1], r.status
    (1, 0)
    """
    check_model(model)
    act = MuscleActuators(
        model,
        excitations,
        controller=controller,
        excitation_time=excitation_time,
        muscles=muscles,
        params=params,
        curves=curves,
        rigid_tendon=rigid_tendon,
        activation0=activation0,
    )
    others = check_forces(forces)
    result = simulate(
        model,
        t_span,
        q0,
        qd0,
        tau=tau,
        forces=[act, *others],
        method=method,
        rtol=rtol,
        atol=atol,
        max_step=max_step,
        t_eval=t_eval,
        **options,
    )
    return act.muscle_result(result)
