"""Feedback controllers for :func:`ahbm.dynamics.simulate`: PID, computed torque, tracking, replay.

Each controller is a small object called as ``controller(t, q, qd) -> tau``
(shape ``(nv,)``), the callback form that ``simulate(model, ..., tau=controller)``
accepts. The laws follow Simonidis et al. (2011, §6, eqs 34–38):

* :class:`PIDController` — ``τ = K_p e + K_i ∫e dt + K_d ė (+ τ_ff(t))`` on the
  coordinate errors ``e = q_d − q``;
* :class:`ComputedTorqueController` — ``τ = M̂(q) (q̈_d + K_v ė + K_p e) + ĥ(q, q̇)``
  (Simonidis eq 36) with a model ``M̂, ĥ`` that may differ from the simulated one
  (model-mismatch studies);
* :class:`TrackingController` — feedforward of the inverse dynamics of the
  desired motion plus PD feedback, ``τ = ID(q_d, q̇_d, q̈_d) + K_p e + K_v ė``;
* :class:`ReplayController` — replays the torques of an optimal-control
  solution, ``τ = τ*(t) + K_p (q*(t) − q) + K_v (q̇*(t) − q̇)``.

The desired motion is a :class:`DesiredTrajectory` (a spline through samples, a
constant set-point, or a function of time). The controllers act on minimal
coordinates (``nq == nv``: no quaternion joints), so that ``q_d − q`` is the
coordinate error.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, as_int, check_callable, check_model
from ahbm.errors import DataError, ModelError

__all__ = [
    "DesiredTrajectory",
    "PIDController",
    "ComputedTorqueController",
    "TrackingController",
    "ReplayController",
]


# ----------------------------------------------------------------------------
# desired motion
# ----------------------------------------------------------------------------


class DesiredTrajectory:
    """Desired coordinates, velocities and accelerations as functions of time.

    Parameters
    ----------
    t : array_like, shape (n,), or None
        Sample times, s, strictly increasing. None: ``q`` is a constant set-point.
    q : array_like, shape (n, nv), or (nv,) for a set-point
        Desired coordinates at the sample times.
    qd : array_like, shape (n, nv), optional
        Desired velocities at the sample times; when given, ``q(t)`` is the
        piecewise cubic Hermite interpolant of ``(q, qd)`` (exact velocities at
        the samples), otherwise an interpolating spline of degree ``degree``.
    degree : int, optional
        Degree of the interpolating spline without ``qd`` (default 5: continuous
        accelerations and jerks; needs at least ``degree + 1`` samples).

    Notes
    -----
    Outside ``[t[0], t[-1]]`` the motion is held at the end samples with zero
    velocity and acceleration. Use :meth:`from_function` for an analytic motion.

    Examples
    --------
    >>> traj = DesiredTrajectory(None, [0.5, -0.2])
    >>> q, qd, qdd = traj(1.0)
    >>> q.tolist(), qd.tolist()
    ([0.5, -0.2], [0.0, 0.0])
    """

    def __init__(self, t, q, *, qd=None, degree: int = 5):
        self._fun = None
        self._spline = None
        if t is None:
            q = as_float_array(q, "q")
            if q.ndim != 1:
                raise DataError(
                    "Expected the set-point `q` to have shape (nv,) when `t` is None, got "
                    f"{q.shape}"
                )
            self.nv = q.shape[0]
            self._setpoint = q
            self.t_range = (-np.inf, np.inf)
            return
        self._setpoint = None
        t = as_float_array(t, "t")
        q = as_float_array(q, "q")
        if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
            raise DataError(
                f"Expected `t` to be a strictly increasing vector of at least 2 times, got shape "
                f"{t.shape}"
            )
        if q.ndim == 1:
            q = q[:, None]
        if q.ndim != 2 or q.shape[0] != t.size:
            raise DataError(f"Expected `q` to have shape ({t.size}, nv), got {q.shape}")
        self.nv = q.shape[1]
        self.t_range = (float(t[0]), float(t[-1]))
        if qd is not None:
            from scipy.interpolate import CubicHermiteSpline

            qd = as_float_array(qd, "qd")
            if qd.ndim == 1:
                qd = qd[:, None]
            if qd.shape != q.shape:
                raise DataError(f"Expected `qd` to have shape {q.shape}, got {qd.shape}")
            self._spline = CubicHermiteSpline(t, q, qd, axis=0)
        else:
            from scipy.interpolate import make_interp_spline

            k = as_int(degree, "degree", minimum=1)
            if t.size < k + 1:
                raise DataError(
                    f"a spline of degree {k} needs at least {k + 1} samples, got {t.size}; pass "
                    "more samples or a lower `degree`"
                )
            self._spline = make_interp_spline(t, q, k=k, axis=0)
        self._d1 = self._spline.derivative(1)
        self._d2 = self._spline.derivative(2)

    @classmethod
    def from_function(cls, fun, nv: int) -> DesiredTrajectory:
        """Wrap ``fun(t) -> (q, qd, qdd)`` (three arrays of shape ``(nv,)``)."""
        check_callable(fun, "fun")
        obj = cls.__new__(cls)
        obj._fun, obj._spline, obj._setpoint = fun, None, None
        obj.nv = as_int(nv, "nv", minimum=1)
        obj.t_range = (-np.inf, np.inf)
        return obj

    def __call__(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Desired ``(q, qd, qdd)`` at time ``t`` (each shape ``(nv,)``, or ``(..., nv)``)."""
        if self._setpoint is not None:
            z = np.zeros_like(self._setpoint)
            return self._setpoint.copy(), z, z.copy()
        if self._fun is not None:
            out = self._fun(t)
            if not isinstance(out, tuple) or len(out) != 3:
                raise DataError("the desired-motion function must return (q, qd, qdd)")
            return tuple(
                as_float_array(v, f"desired motion {n}(t)")
                for v, n in zip(out, ("q", "qd", "qdd"), strict=True)
            )
        t = np.asarray(t, dtype=float)
        lo, hi = self.t_range
        tc = np.clip(t, lo, hi)
        q, qd, qdd = self._spline(tc), self._d1(tc), self._d2(tc)
        outside = (t < lo) | (t > hi)
        if np.any(outside):
            qd = np.where(outside[..., None], 0.0, qd)
            qdd = np.where(outside[..., None], 0.0, qdd)
        return q, qd, qdd


def _as_desired(desired, nv: int | None = None) -> DesiredTrajectory:
    """A DesiredTrajectory from a trajectory, a ``fun(t) -> (q, qd, qdd)`` or a set-point."""
    if isinstance(desired, DesiredTrajectory):
        out = desired
    elif callable(desired):
        if nv is None:
            raise DataError("a desired-motion function needs the model (or `nv`) to size it")
        out = DesiredTrajectory.from_function(desired, nv)
    else:
        out = DesiredTrajectory(None, desired)
    if nv is not None and out.nv != nv:
        raise DataError(f"the desired motion has {out.nv} coordinates, the model has {nv}")
    return out


def _gain(value, n: int, name: str) -> np.ndarray:
    """A gain as a vector of n diagonal entries (scalar broadcast), finite and >= 0."""
    g = as_float_array(value, name)
    if g.ndim == 0:
        g = np.full(n, float(g))
    if g.shape != (n,):
        raise DataError(f"Expected `{name}` to be a scalar or shape ({n},), got {g.shape}")
    if np.any(g < 0):
        raise DataError(f"`{name}` must be >= 0 (a negative gain destabilizes), got {g}")
    return g


def _limits(limits, n: int):
    if limits is None:
        return None
    lo, hi = (as_float_array(v, "limits") for v in limits)
    lo, hi = np.broadcast_to(lo, (n,)).copy(), np.broadcast_to(hi, (n,)).copy()
    if np.any(lo > hi):
        raise DataError(f"`limits` must be (lower, upper) with lower <= upper, got {limits!r}")
    return lo, hi


def _minimal_model(model) -> None:
    check_model(model)
    if model.nq != model.nv:
        raise ModelError(
            f"the controllers act on minimal coordinates (nq == nv); the model has nq = "
            f"{model.nq}, nv = {model.nv} (quaternion joints): use Euler-angle joints"
        )


class _Controller:
    """Common part: state checks and saturation."""

    nv: int
    limits = None

    def _state(self, q, qd):
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        if q.shape[-1:] != (self.nv,) or qd.shape[-1:] != (self.nv,):
            raise DataError(
                f"{type(self).__name__} expects `q` and `qd` of shape ({self.nv},), got "
                f"{q.shape} and {qd.shape}"
            )
        return q, qd

    def _saturate(self, tau):
        if self.limits is None:
            return tau
        return np.clip(tau, self.limits[0], self.limits[1])

    def __call__(self, t, q, qd) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


# ----------------------------------------------------------------------------
# PID
# ----------------------------------------------------------------------------


class PIDController(_Controller):
    """PID control of the coordinates: ``τ = K_p e + K_i ∫e dt + K_d ė + τ_ff(t)``.

    Parameters
    ----------
    desired : DesiredTrajectory, callable or array_like (nv,)
        Desired motion (``e = q_d − q``, ``ė = q̇_d − q̇``); an array is a set-point.
    kp, ki, kd : float or array_like (nv,)
        Proportional (N·m/rad), integral (N·m/(rad s)) and derivative (N·m s/rad)
        gains, diagonal; >= 0.
    feedforward : callable or array_like (nv,), optional
        Feedforward torque ``τ_ff(t)`` (e.g. a gravity compensation), N·m.
    limits : (lower, upper), optional
        Actuator saturation, N·m (scalars or (nv,) arrays).
    nv : int, optional
        Number of coordinates, needed only when ``desired`` is a function.

    Notes
    -----
    The integral of the error is accumulated by the trapezoidal rule over the
    times at which the controller is called. A variable-step integrator also
    evaluates trial stages that it later rejects: samples later than the time
    of the current call are discarded first, so the integral always runs over
    increasing times up to ``t``. :func:`~ahbm.dynamics.simulate` evaluates the
    controller once more at the output times after integrating (to report the
    accelerations), which recomputes the integral over those times; call
    :meth:`reset` before reusing the controller in another simulation. Simonidis et al. (2011, §6).

    Examples
    --------
    >>> pid = PIDController([0.0], kp=10.0, ki=1.0, kd=1.0)
    >>> pid(0.0, np.array([0.1]), np.array([0.0])).round(6).tolist()
    [-1.0]
    """

    def __init__(self, desired, *, kp, ki=0.0, kd=0.0, feedforward=None, limits=None, nv=None):
        self.desired = _as_desired(desired, nv)
        self.nv = n = self.desired.nv
        self.kp, self.ki, self.kd = (
            _gain(kp, n, "kp"),
            _gain(ki, n, "ki"),
            _gain(kd, n, "kd"),
        )
        if feedforward is not None and not callable(feedforward):
            ff = as_float_array(feedforward, "feedforward")
            if ff.shape != (n,):
                raise DataError(f"Expected `feedforward` to have shape ({n},), got {ff.shape}")
            feedforward = ff
        self.feedforward = feedforward
        self.limits = _limits(limits, n)
        self.reset()

    def reset(self) -> None:
        """Forget the accumulated integral (start of a new simulation)."""
        self._times: list[float] = []
        self._errors: list[np.ndarray] = []
        self._integrals: list[np.ndarray] = []

    @property
    def integral(self) -> np.ndarray:
        """The integral of the error accumulated so far, rad s, shape (nv,)."""
        return self._integrals[-1].copy() if self._integrals else np.zeros(self.nv)

    def _integrate(self, t: float, e: np.ndarray) -> np.ndarray:
        times, errs, ints = self._times, self._errors, self._integrals
        while times and times[-1] >= t:  # rejected or trial stages at or ahead of t
            times.pop()
            errs.pop()
            ints.pop()
        if times:
            acc = ints[-1] + 0.5 * (t - times[-1]) * (errs[-1] + e)
        else:
            acc = np.zeros(self.nv)
        times.append(t)
        errs.append(e)
        ints.append(acc)
        return acc

    def __call__(self, t, q, qd) -> np.ndarray:
        q, qd = self._state(q, qd)
        q_d, qd_d, _ = self.desired(t)
        e = q_d - q
        tau = self.kp * e + self.kd * (qd_d - qd)
        if np.any(self.ki):
            tau = tau + self.ki * self._integrate(float(t), e)
        if self.feedforward is not None:
            ff = self.feedforward(t) if callable(self.feedforward) else self.feedforward
            tau = tau + np.asarray(ff, dtype=float)
        return self._saturate(tau)


# ----------------------------------------------------------------------------
# model-based laws
# ----------------------------------------------------------------------------


def _critical_gains(kp, kv, bandwidth, n):
    """(K_p, K_v) from explicit gains or a bandwidth c: K_p = c², K_v = 2c (critical damping)."""
    if bandwidth is not None:
        if kp is not None or kv is not None:
            raise DataError("give either `bandwidth` or `kp` and `kv`, not both")
        c = _gain(bandwidth, n, "bandwidth")
        return c**2, 2.0 * c
    if kp is None or kv is None:
        raise DataError("give `bandwidth` (rad/s) or both `kp` (1/s²) and `kv` (1/s)")
    return _gain(kp, n, "kp"), _gain(kv, n, "kv")


class ComputedTorqueController(_Controller):
    """Computed-torque control: ``τ = M̂(q) (q̈_d + K_v ė + K_p e) + ĥ(q, q̇)``.

    Parameters
    ----------
    model : Model
        The controller's model ``M̂, ĥ`` (it may differ from the simulated model:
        wrong masses, a missing payload).
    desired : DesiredTrajectory, callable ``t -> (q, qd, qdd)`` or array_like (nv,)
        Desired motion.
    kp, kv : float or array_like (nv,), optional
        Error-dynamics gains, 1/s² and 1/s.
    bandwidth : float or array_like (nv,), optional
        Instead of ``kp, kv``: the critically damped choice ``K_p = c², K_v = 2c``
        (Simonidis eq 35), c in rad/s.
    limits : (lower, upper), optional
        Actuator saturation, N·m.

    Notes
    -----
    With ``e = q_d − q`` the law (Simonidis et al. 2011, eqs 35–36, whose
    printed ``K_p ė`` and ``K_v q̇ + K_p q̇`` mean ``K_p e`` and
    ``K_v ė + K_p e``, and whose ``+ Q̂`` is ``− Q̂`` for the plant of eq. 34,
    ``M q̈ − Q = T``) is evaluated as
    one inverse dynamics ``τ = RNEA(M̂; q, q̇, a)`` with the commanded acceleration
    ``a = q̈_d + K_v ė + K_p e`` (``RNEA(q, q̇, a) = M(q) a + h(q, q̇)``). With the exact
    model the closed loop obeys ``ë + K_v ė + K_p e = 0``; with a mismatched model
    it obeys ``ë + K_v ė + K_p e = M⁻¹[(M − M̂) a + (h − ĥ)]``, a bounded
    disturbance for a stable gain choice.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 1, 0]},
    ...                             mass=1.0, com=[0.5, 0, 0], inertia=np.eye(3) * 0.01)
    >>> ct = ComputedTorqueController(m, [0.0], bandwidth=10.0)
    >>> ct(0.0, np.zeros(1), np.zeros(1)).shape
    (1,)
    """

    def __init__(self, model, desired, *, kp=None, kv=None, bandwidth=None, limits=None):
        _minimal_model(model)
        self.model = model
        self.nv = model.nv
        self.desired = _as_desired(desired, model.nv)
        self.kp, self.kv = _critical_gains(kp, kv, bandwidth, model.nv)
        self.limits = _limits(limits, model.nv)

    def __call__(self, t, q, qd) -> np.ndarray:
        from ahbm.dynamics.inverse import rnea

        q, qd = self._state(q, qd)
        q_d, qd_d, qdd_d = self.desired(t)
        a = qdd_d + self.kv * (qd_d - qd) + self.kp * (q_d - q)
        return self._saturate(rnea(self.model, q, qd, a))


class TrackingController(_Controller):
    """Feedforward-plus-PD tracking: ``τ = ID(q_d, q̇_d, q̈_d) + K_p e + K_v ė``.

    Parameters
    ----------
    model : Model
        Model of the feedforward inverse dynamics (may differ from the simulated one).
    desired : DesiredTrajectory, callable ``t -> (q, qd, qdd)`` or array_like (nv,)
        Desired motion.
    kp, kv : float or array_like (nv,)
        Feedback gains, N·m/rad and N·m s/rad.
    limits : (lower, upper), optional
        Actuator saturation, N·m.

    Notes
    -----
    The feedforward torque is the inverse dynamics of the desired motion (so it
    does not depend on the measured state); the PD term corrects deviations
    (Simonidis et al. 2011, §5–6: tracking the measured motion, eq 33, with the
    torque of the model). Unlike :class:`ComputedTorqueController` the feedback
    is not scaled by the mass matrix, so the gains carry torque units.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(); _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 1, 0]},
    ...                             mass=1.0, com=[0.5, 0, 0], inertia=np.eye(3) * 0.01)
    >>> ctl = TrackingController(m, [0.0], kp=50.0, kv=5.0)
    >>> ctl(0.0, np.zeros(1), np.zeros(1)).round(4).tolist()  # holds the rod against gravity
    [-4.905]
    >>> ctl(0.0, np.array([0.1]), np.zeros(1)).round(4).tolist()  # plus k_p e = 50 * (-0.1)
    [-9.905]
    """

    def __init__(self, model, desired, *, kp, kv, limits=None):
        _minimal_model(model)
        self.model = model
        self.nv = model.nv
        self.desired = _as_desired(desired, model.nv)
        self.kp, self.kv = _gain(kp, model.nv, "kp"), _gain(kv, model.nv, "kv")
        self.limits = _limits(limits, model.nv)

    def __call__(self, t, q, qd) -> np.ndarray:
        from ahbm.dynamics.inverse import rnea

        q, qd = self._state(q, qd)
        q_d, qd_d, qdd_d = self.desired(t)
        tau_ff = rnea(self.model, q_d, qd_d, qdd_d)
        return self._saturate(tau_ff + self.kp * (q_d - q) + self.kv * (qd_d - qd))


# ----------------------------------------------------------------------------
# replay of an optimal-control solution
# ----------------------------------------------------------------------------


def _solution_arrays(solution):
    """(t, q, qd, tau) from an object with those attributes (arrays or per-phase lists)."""

    def get(name):
        if isinstance(solution, dict):
            if name not in solution:
                raise DataError(f"`solution` has no {name!r}; pass t, q, qd and tau")
            return solution[name]
        if not hasattr(solution, name):
            raise DataError(
                f"`solution` ({type(solution).__name__}) has no attribute {name!r}; pass an "
                "optimal-control result or a dict with t, q, qd and tau"
            )
        return getattr(solution, name)

    names = ("t", "q", "qd", "tau")
    parts = [get(n) for n in names]
    per_phase = isinstance(parts[0], (list, tuple)) and parts[0] and np.ndim(parts[0][0]) >= 1
    if per_phase:  # one array per phase
        if not all(isinstance(p, (list, tuple)) and len(p) == len(parts[0]) for p in parts):
            raise DataError("the per-phase lists t, q, qd, tau of `solution` differ in length")
        arrays = [[as_float_array(x, n) for x in p] for p, n in zip(parts, names, strict=True)]
        t, q, qd, tau = [], [], [], []
        for k in range(len(arrays[0])):
            tk, qk, qdk, uk = (a[k] for a in arrays)
            if qk.ndim == 1:
                qk, qdk = qk[:, None], qdk[:, None]
            if uk.ndim == 1:
                uk = uk[:, None]
            if t and tk[0] <= t[-1][-1]:  # phase switch: the new phase's state wins
                keep = t[-1] < tk[0]
                for a in (t, q, qd, tau):
                    a[-1] = a[-1][keep]
            t.append(tk)
            q.append(qk)
            qd.append(qdk)
            tau.append(uk)
        return tuple(np.concatenate(a) for a in (t, q, qd, tau))
    t, q, qd, tau = (as_float_array(x, n) for x, n in zip(parts, names, strict=True))
    if q.ndim == 1:
        q, qd = q[:, None], qd[:, None]
    if tau.ndim == 1:
        tau = tau[:, None]
    return t, q, qd, tau


class ReplayController(_Controller):
    """Replay an optimal-control solution with feedback: ``τ = τ*(t) + K_p e + K_v ė``.

    Parameters
    ----------
    solution : object or dict
        Anything with ``t`` (n,), ``q`` (n, nv), ``qd`` (n, nv), ``tau`` (n, nv)
        (an :mod:`ahbm.optimize` result; per-phase lists are concatenated).
    kp, kv : float or array_like (nv,), optional
        Feedback gains on ``e = q*(t) − q`` and ``ė = q̇*(t) − q̇`` (N·m/rad, N·m s/rad);
        0 (default) replays the torques open loop.
    interpolation : {"linear", "previous"}, optional
        How ``τ*`` is interpolated between the solution's nodes: piecewise linear
        (collocation, B-splines, linear multiple shooting) or piecewise constant
        (multiple shooting with constant controls).
    limits : (lower, upper), optional
        Actuator saturation, N·m.

    Notes
    -----
    The reference states are the cubic Hermite interpolant of ``(q*, q̇*)``
    (consistent velocities); beyond the solution's time span the last torque is
    held. Open-loop replay of an optimal torque drifts from the optimal motion
    (integration and transcription errors grow along unstable motion); the
    feedback keeps the simulated motion near it.

    Examples
    --------
    >>> sol = {"t": [0.0, 1.0], "q": [[0.0], [1.0]], "qd": [[1.0], [1.0]],
    ...        "tau": [[0.0], [2.0]]}
    >>> ReplayController(sol)(0.5, np.array([0.5]), np.array([1.0])).tolist()
    [1.0]
    """

    def __init__(self, solution, *, kp=0.0, kv=0.0, interpolation="linear", limits=None):
        t, q, qd, tau = _solution_arrays(solution)
        if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
            raise DataError(
                f"the solution's `t` must be strictly increasing with at least 2 times, got "
                f"shape {t.shape}"
            )
        if q.shape != (t.size, q.shape[-1]) or qd.shape != q.shape or tau.shape != q.shape:
            raise DataError(
                f"the solution's q {q.shape}, qd {qd.shape} and tau {tau.shape} must all be "
                f"({t.size}, nv)"
            )
        if interpolation not in ("linear", "previous"):
            raise DataError(
                f"Expected `interpolation` to be 'linear' or 'previous', got {interpolation!r}"
            )
        self.nv = q.shape[1]
        self.desired = DesiredTrajectory(t, q, qd=qd)
        self._t, self._tau, self.interpolation = t, tau, interpolation
        self.kp, self.kv = _gain(kp, self.nv, "kp"), _gain(kv, self.nv, "kv")
        self.limits = _limits(limits, self.nv)

    def torque(self, t) -> np.ndarray:
        """The replayed open-loop torque ``τ*(t)``, shape (nv,)."""
        tt = self._t
        if self.interpolation == "previous":
            k = int(np.clip(np.searchsorted(tt, t, side="right") - 1, 0, tt.size - 1))
            return self._tau[k].copy()
        return np.array([np.interp(t, tt, self._tau[:, j]) for j in range(self.nv)])

    def __call__(self, t, q, qd) -> np.ndarray:
        q, qd = self._state(q, qd)
        tau = self.torque(t)
        if np.any(self.kp) or np.any(self.kv):
            q_d, qd_d, _ = self.desired(t)
            tau = tau + self.kp * (q_d - q) + self.kv * (qd_d - qd)
        return self._saturate(tau)
