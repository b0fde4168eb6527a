"""Muscle-driven forward simulation: Hill-type muscles as force elements of a model.

:func:`simulate_muscles` integrates the multibody state ``(q, qd)`` together with one
activation per muscle and, for elastic tendons, one fiber state per muscle (Thelen:
fiber length, as OpenSim's ``Thelen2003Muscle``; De Groote: normalized tendon force, as
OpenSim's ``DeGrooteFregly2016Muscle`` in its explicit mode). The muscles pull along
their paths (:mod:`ahbm.muscles.paths`): a tendon force ``F`` gives the generalized
forces ``r(q)ᵀ F`` with the moment arms ``r = -∂l/∂q``, and the path lengthening speed
is ``l̇ = -r q̇``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._validation import (
    as_choice,
    as_float_array,
    as_positive_float,
    callback_result,
    check_model,
)
from ahbm.dynamics import aba, q_rate, total_generalized_force
from ahbm.errors import DataError, SimulationError
from ahbm.muscles.hill import (
    _degroote_rigid,
    _dg_geometry,
    _Pennation,
    _state_inputs,
    _thelen_from_fiber_length,
    _thelen_rigid,
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

__all__ = ["MuscleSimulationResult", "simulate_muscles", "muscle_tendon_forces"]


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
        0: reached the end of ``t_span``.
    message : str
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
) -> MuscleSimulationResult:
    """Simulate a model driven by its muscles (and optional other loads).

    Parameters
    ----------
    model : Model
        With ``model.muscles``. Constraints and events are not handled here (use
        :func:`ahbm.dynamics.simulate` with a ``tau`` function for those).
    t_span : (float, float)
        Start and end time, s.
    q0 : array_like, (nq,)
    qd0 : array_like, (nv,), optional
        None: at rest.
    excitations : callable, array_like (n,) or (n_times, n), optional
        ``u(t) -> (n,)``, constant excitations, or a table over ``excitation_time``
        (linear interpolation, ends held).
    controller : callable, optional
        ``controller(t, q, qd, a) -> (n,)`` excitations from the state (instead of
        `excitations`).
    excitation_time : array_like, (n_times,), optional
        Times of an excitation table, s.
    muscles : sequence of str, optional
        The muscles to simulate (default all of ``model.muscles``, model order); the
        others apply no force.
    params : MuscleParameters, optional
        Default ``MuscleParameters.from_muscles`` of those muscles.
    curves : {"thelen2003", "degroote2016"}
    rigid_tendon : bool
        Rigid tendons (activation states only) or elastic tendons (one fiber state per
        muscle, initialized at equilibrium as OpenSim's ``equilibrateMuscles``).
    activation0 : array_like, (n,), optional
        Initial activation; default: the excitation at ``t_span[0]`` (a controller is
        asked with ``a = minimum_activation``).
    tau : array_like (nv,) or callable, optional
        Other generalized forces, constant or ``tau(t, q, qd)``.
    forces : sequence of ForceElement, optional
        Force elements (:mod:`ahbm.dynamics.forces`).
    method, rtol, atol, max_step, t_eval
        Passed to :func:`scipy.integrate.solve_ivp` (``"LSODA"`` by default: elastic
        tendons make the system stiff).

    Returns
    -------
    MuscleSimulationResult

    Raises
    ------
    DataError
        Bad arguments (shapes, names, options).
    SimulationError
        No initial muscle equilibrium, non-finite states or integrator failure.

    Notes
    -----
    State ``y = [q, q̇, a, z]``: ``q̇ = T(q) v``, ``M v̇ + C = rᵀ F + τ`` (ABA),
    ``ȧ`` from :func:`~ahbm.muscles.activation_rate`, ``ż`` from
    :func:`muscle_tendon_forces`. Excitations are clipped to [0, 1] (to
    ``[minimum_activation, 1]`` for ``"thelen2003"``, OpenSim's default ``min_control``
    of ``Thelen2003Muscle``). OpenSim's
    equivalents: a ``Manager`` integration of a model with ``Thelen2003Muscle`` or
    ``DeGrooteFregly2016Muscle`` forces driven by a ``PrescribedController``.

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
    curves = _check_curves(curves)
    rigid_tendon = as_choice(rigid_tendon, "rigid_tendon", (True, False))
    all_muscles = tuple(getattr(model, "muscles", None) or ())
    if not all_muscles:
        raise DataError("`model` has no muscles (model.muscles is empty)")
    by_name = {m.name: m for m in all_muscles}
    if muscles is None:
        names = tuple(m.name for m in all_muscles)
    else:
        if isinstance(muscles, (str, bytes)) or not hasattr(muscles, "__iter__"):
            raise DataError("Expected `muscles` to be a sequence of muscle names")
        names = tuple(muscles)
        if not all(isinstance(x, str) for x in names):
            raise DataError(f"Expected `muscles` to be muscle names (str), got {list(names)}")
        unknown = [m for m in names if m not in by_name]
        if unknown:
            raise DataError(f"unknown muscles {unknown}; the model has {list(by_name)}")
    if params is None:
        params = MuscleParameters.from_muscles([by_name[m] for m in names])
    elif not isinstance(params, MuscleParameters) or params.n != len(names):
        raise DataError(f"Expected `params` to be a MuscleParameters of {len(names)} muscles")
    p = params.resolved(curves)
    n, nq, nv = len(names), model.nq, model.nv
    t_span = as_float_array(t_span, "t_span")
    if t_span.shape != (2,) or not t_span[1] > t_span[0]:
        raise DataError(f"Expected `t_span` to be (start, end) with end > start, got {t_span}")
    q0 = as_float_array(q0, "q0")
    if q0.shape != (nq,):
        raise DataError(f"Expected `q0` to have shape ({nq},), got {q0.shape}")
    qd0 = np.zeros(nv) if qd0 is None else as_float_array(qd0, "qd0")
    if qd0.shape != (nv,):
        raise DataError(f"Expected `qd0` to have shape ({nv},), got {qd0.shape}")
    excite = _Excitation(excitations, controller, excitation_time, n)
    if tau is not None and not callable(tau):
        tau_const = as_float_array(tau, "tau")
        if tau_const.shape != (nv,):
            raise DataError(f"Expected `tau` to have shape ({nv},), got {tau_const.shape}")
        tau = tau_const
    for name, v in (("rtol", rtol), ("atol", atol)):
        as_positive_float(v, name)

    def path(q, qd):
        # lengths and moment arms in one pass (muscle_lengths and moment_arms share it)
        kin, lengths, grad = _path_compute(model, q, names, None, need_grad=True)
        lmt, r = _path_out(kin, lengths), _path_out(kin, -grad)
        vmt = -np.einsum("...mv,...v->...m", r, qd)
        return lmt, vmt, r

    amin = p.minimum_activation
    # Thelen: excitations below the minimum activation are raised to it (OpenSim's
    # default min_control of Thelen2003Muscle)
    u_floor = amin if curves == "thelen2003" else 0.0

    def excitation(t, q, qd, a):
        return np.maximum(excite(t, q, qd, a), u_floor)

    if activation0 is None:
        a0 = excitation(t_span[0], q0, qd0, np.array(amin, dtype=float))
    else:
        a0 = as_float_array(activation0, "activation0")
        if a0.shape != (n,) or np.any((a0 < 0) | (a0 > 1)):
            raise DataError(f"Expected `activation0` to be {n} values in [0, 1]")
    lmt0, vmt0, _ = path(q0, qd0)
    if rigid_tendon:
        z0 = np.zeros(0)
    else:
        s0 = muscle_equilibrium(p, a0, lmt0, vmt0, curves=curves)
        if not np.all(s0.converged):
            bad = [names[i] for i in np.flatnonzero(~s0.converged)]
            raise SimulationError(f"no initial muscle equilibrium for {bad} at q0")
        z0 = s0.fiber_length if curves == "thelen2003" else s0.tendon_force / p.max_isometric_force
    nz = z0.size
    counter = [0]

    def forces_of(a, lmt, vmt, z):
        if rigid_tendon:
            if curves == "thelen2003":
                out = _thelen_rigid(p, np.clip(a, p.minimum_activation, 1.0), lmt, vmt)
            else:
                out = _degroote_rigid(p, np.clip(a, 0.0, 1.0), lmt, vmt)
            return out["tendon_force"], np.zeros(0)
        f, _, zdot = _elastic(p, curves, a, lmt, vmt, z)
        return f, zdot

    def rhs(t, y):
        counter[0] += 1
        if not np.all(np.isfinite(y)):
            raise SimulationError(f"the state became non-finite at t = {t:.6g} s")
        q, qd = y[:nq], y[nq : nq + nv]
        a, z = y[nq + nv : nq + nv + n], y[nq + nv + n :]
        lmt, vmt, r = path(q, qd)
        u = excitation(t, q, qd, a)
        f, zdot = forces_of(a, lmt, vmt, z)
        tau_total = r.T @ f
        if tau is not None:
            if callable(tau):
                extra = callback_result(tau(t, q, qd), "tau", (nv,))
            else:
                extra = tau
            tau_total = tau_total + extra
        if forces:
            tau_total = tau_total + total_generalized_force(model, forces, q, qd, t=t)
        qdd = aba(model, q, qd, tau_total)
        if not np.all(np.isfinite(qdd)):
            raise SimulationError(f"non-finite accelerations at t = {t:.6g} s")
        out = np.empty(nq + nv + n + nz)
        out[:nq] = q_rate(model, q, qd)
        out[nq : nq + nv] = qdd
        out[nq + nv : nq + nv + n] = activation_rate(u, a, p, curves=curves)
        out[nq + nv + n :] = zdot
        return out

    from scipy.integrate import solve_ivp

    y0 = np.concatenate([q0, qd0, a0, z0])
    if t_eval is not None:
        t_eval = as_float_array(t_eval, "t_eval")
        if (
            t_eval.ndim != 1
            or t_eval.size == 0
            or np.any(np.diff(t_eval) <= 0)
            or t_eval[0] < t_span[0]
            or t_eval[-1] > t_span[1]
        ):
            raise DataError(
                "Expected `t_eval` to be increasing output times within `t_span`, got shape "
                f"{t_eval.shape}"
            )
    sol = solve_ivp(
        rhs,
        tuple(t_span),
        y0,
        method=method,
        rtol=rtol,
        atol=atol,
        max_step=max_step,
        t_eval=t_eval,
    )
    if sol.status < 0:
        raise SimulationError(f"the integration failed at t = {sol.t[-1]:.6g} s: {sol.message}")
    y = sol.y.T
    q, qd = y[:, :nq], y[:, nq : nq + nv]
    a, z = y[:, nq + nv : nq + nv + n], y[:, nq + nv + n :]
    lmt, vmt, r = path(q, qd)
    u = np.stack(
        [excitation(t, qi, qdi, ai) for t, qi, qdi, ai in zip(sol.t, q, qd, a, strict=True)]
    )
    if rigid_tendon:
        f, lm, _ = muscle_tendon_forces(p, a, lmt, vmt, curves=curves, rigid_tendon=True)
    else:
        f, lm, _ = _elastic(p, curves, a, lmt, vmt, z)
    return MuscleSimulationResult(
        t=sol.t,
        q=q,
        qd=qd,
        excitation=u,
        activation=a,
        tendon_force=f,
        fiber_length=lm,
        mt_length=lmt,
        mt_speed=vmt,
        muscle_tau=np.einsum("...mv,...m->...v", r, f),
        muscles=names,
        curves=curves,
        rigid_tendon=bool(rigid_tendon),
        nfev=counter[0],
        status=0,
        message=str(sol.message),
    )
