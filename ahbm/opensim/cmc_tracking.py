"""The tracking core of OpenSim's Computed Muscle Control, for ideal actuators (RRA).

OpenSim's RRA (``RRATool``) and CMC (``CMCTool``) track desired kinematics
with a controller that, every ``dt`` seconds of a forward simulation, asks a
static optimization for actuator forces. This module holds the parts that do
not depend on muscles:

- :func:`opensim_lowpass_fir`: OpenSim's FIR low-pass filter
  (``Signal::LowpassFIR``: windowed sinc of order 50, Hamming window,
  normalized to unit gain at DC, after padding by the order);
- :func:`desired_kinematics`: the desired trajectories as OpenSim builds them
  (``Storage::pad(60)``, resampling by a quintic spline when the times are not
  uniform, the FIR filter at the cut-off; then ``formCompleteStorages``: the
  speeds are the derivative of the natural quintic spline of the coordinates
  at the rows, and the tracked speed and acceleration functions are natural
  quintic splines through the speed samples and through their derivative);
- :func:`track_kinematics`: the tracking loop with ideal actuators (actuation
  ``control × optimal_force`` at once), as OpenSim's ``CMC::computeControls``
  with its ``ActuatorForceTarget`` runs it, described under Notes.

References
----------
OpenSim 4.x source: ``RRATool.cpp``, ``CMC.cpp``, ``CMC_Joint.cpp``,
``ActuatorForceTarget.cpp``, ``CMCActuatorSubsystem.cpp``, ``Signal.cpp``
(``LowpassFIR``, ``Pad``), ``Storage.cpp`` (``pad``, ``lowpassFIR``),
``SimbodyEngine.cpp`` (``formCompleteStorages``).
Thelen, D. G., Anderson, F. C. (2006). Using computed muscle control to
generate forward dynamic simulations of human walking from experimental data.
J. Biomech. 39(6), 1107-1115.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError, SimulationError
from ahbm.opensim.processing import (
    _quintic_fit,
    _quintic_values,
    _resample_grid,
    opensim_pad,
)
from ahbm.types import ResultRepr

__all__ = [
    "DesiredKinematics",
    "JointTask",
    "TrackingResult",
    "desired_kinematics",
    "opensim_lowpass_fir",
    "track_kinematics",
]

_EPS = float(np.finfo(float).eps)
#: OpenSim's CMC bounds of a control whose min_control/max_control is infinite
MAX_CONTROL = 10000.0


def opensim_lowpass_fir(values, *, dt: float, cutoff: float, order: int = 50) -> np.ndarray:
    """OpenSim's FIR low-pass filter (``Signal::LowpassFIR``), column by column.

    Parameters
    ----------
    values : array_like, shape (n, ...)
        Uniformly sampled signal(s) along axis 0, ``n >= 2 order``.
    dt : float
        Sample interval, s.
    cutoff : float
        Cut-off frequency, Hz.
    order : int
        Half-width ``M`` of the filter (2M + 1 taps); OpenSim's RRA and CMC use 50.

    Returns
    -------
    ndarray, shape (n, ...)

    Notes
    -----
    The signal is padded by ``M`` samples at each end (reflected and negated
    about the end sample, :func:`~ahbm.opensim.processing.opensim_pad`); the
    taps are ``c_k = sinc(k ω T) (T ω / π) (0.54 + 0.46 cos(k π / M))``,
    ``ω = 2π f_c``, ``k = −M..M``, and each output is ``Σ c_k s[n − k] / Σ c_k``.

    Examples
    --------
    A 1 Hz sine passes a 6 Hz filter within half a percent (the window's ripple):

    >>> t = np.arange(200) / 100.0
    >>> y = opensim_lowpass_fir(np.sin(2 * np.pi * t), dt=0.01, cutoff=6.0)
    >>> round(float(np.abs(y[50:150] - np.sin(2 * np.pi * t[50:150])).max()), 4)
    0.0045
    """
    x = as_float_array(values, "values")
    M = int(order)
    if M < 1 or x.ndim == 0 or x.shape[0] < 2 * M:
        raise DataError(
            f"the FIR filter of order {M} needs at least {2 * M} samples, got shape {x.shape}"
        )
    if not (dt > 0 and np.isfinite(dt)) or not (cutoff > 0 and np.isfinite(cutoff)):
        raise DataError(f"`dt` and `cutoff` must be positive, got {dt} and {cutoff}")
    k = np.arange(-M, M + 1, dtype=float)
    w = 2.0 * np.pi * cutoff
    arg = k * w * dt
    small = np.abs(arg) < 1e-8
    sinc = np.where(small, 1.0, np.sin(arg) / np.where(small, 1.0, arg))
    coef = sinc * dt * w / np.pi * (0.54 + 0.46 * np.cos(k * np.pi / M))
    s = opensim_pad(x, M)
    # window n holds s[n .. n + 2M] = s[M + n - k] for k = M .. -M; the taps are symmetric
    win = sliding_window_view(s, 2 * M + 1, axis=0)
    return np.einsum("n...k,k->n...", win, coef) / coef.sum()


@dataclass(frozen=True, repr=False)
class DesiredKinematics(ResultRepr):
    """Desired coordinates, speeds and accelerations as OpenSim's tracking tools build them.

    Attributes
    ----------
    time : ndarray, shape (n,)
        The rows of the processed (padded, resampled) storage, s.
    q, u, udot : ndarray, shape (n, m)
        Coordinates (rad, m), their speeds and accelerations at the rows.
    """

    time: np.ndarray
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    _splines: tuple = field(default=(), repr=False)

    def at(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The tracked ``(q, u, a)`` at times `t` (k,): each (k, m).

        ``q`` from the spline of the coordinates, ``u`` from the spline of the
        speed samples, ``a`` from the spline of the speeds' derivative samples
        (OpenSim's ``qSet``, ``uSet`` and ``uDotSet``).
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        return tuple(_quintic_values(kn, c, t, 0) for kn, c in self._splines)


def desired_kinematics(time, q, *, cutoff: float, pad: int = 60, order: int = 50):
    """Desired kinematics for tracking, processed as OpenSim's RRA and CMC tools do.

    Parameters
    ----------
    time : array_like, shape (n,)
        Sample times of the kinematics file, s, strictly increasing.
    q : array_like, shape (n, m)
        Coordinates in radians and metres (the tools convert degrees first;
        the filter is linear, so the order does not matter).
    cutoff : float
        ``lowpass_cutoff_frequency`` (Hz); negative: no filtering (the data
        are still padded).
    pad : int
        Rows padded at each end (``Storage::pad(60)`` in the tools).
    order : int
        Order of the FIR filter (50 in the tools).

    Returns
    -------
    DesiredKinematics

    Raises
    ------
    DataError
        Fewer than ``pad + 1`` rows, times not increasing, non-finite values.

    Examples
    --------
    >>> t = np.arange(151) / 60.0
    >>> d = desired_kinematics(t, np.sin(t)[:, None], cutoff=6.0)
    >>> q, u, a = d.at([1.0])
    >>> bool(abs(u[0, 0] - np.cos(1.0)) < 1e-3 and abs(a[0, 0] + np.sin(1.0)) < 1e-2)
    True
    """
    t = as_float_array(time, "time")
    y = as_float_array(q, "q")
    if y.ndim == 1:
        y = y[:, None]
    if t.ndim != 1 or y.ndim != 2 or y.shape[0] != t.shape[0]:
        raise DataError(f"Expected `time` (n,) and `q` (n, m), got {t.shape} and {y.shape}")
    if t.shape[0] <= pad:
        raise DataError(
            f"the desired kinematics have {t.shape[0]} rows; OpenSim's tracking tools pad "
            f"{pad} rows at each end and need more than {pad}"
        )
    if np.any(np.diff(t) <= 0):
        raise DataError("the times of the desired kinematics must be strictly increasing")
    if not np.all(np.isfinite(y)):
        raise DataError("the desired kinematics hold NaN or infinite values")
    tp, yp = opensim_pad(t, pad), opensim_pad(y, pad)
    if cutoff >= 0:
        dtmin = float(np.min(np.diff(tp)))
        if (tp[-1] - tp[0]) / (tp.shape[0] - 1) - dtmin > _EPS:
            knots, coef = _quintic_fit(tp, yp)
            tp = _resample_grid(float(tp[0]), float(tp[-1]), dtmin)
            yp = _quintic_values(knots, coef, tp, 0)
        if tp.shape[0] >= 2 * order:  # OpenSim leaves shorter storages unfiltered
            yp = opensim_lowpass_fir(yp, dt=dtmin, cutoff=cutoff, order=order)
    kq, cq = _quintic_fit(tp, yp)
    u = _quintic_values(kq, cq, tp, 1)
    ku, cu = _quintic_fit(tp, u)
    udot = _quintic_values(ku, cu, tp, 1)
    ka, ca = _quintic_fit(tp, udot)
    return DesiredKinematics(tp, yp, u, udot, ((kq, cq), (ku, cu), (ka, ca)))


@dataclass(frozen=True)
class JointTask:
    """A coordinate tracking task (OpenSim's ``CMC_Joint``).

    Attributes
    ----------
    name : str
    coordinate : int
        Index of the coordinate (model order; also its column of the desired kinematics).
    weight, kp, kv, ka : float
        ``a* = ka ä(t_f) + kv (u̇_d(t) − u) + kp (q_d(t) − q)`` weighted in the cost.
    """

    name: str
    coordinate: int
    weight: float = 1.0
    kp: float = 1.0
    kv: float = 1.0
    ka: float = 1.0


@dataclass(frozen=True, repr=False)
class TrackingResult(ResultRepr):
    """Result of :func:`track_kinematics`.

    Attributes
    ----------
    time : ndarray, shape (K,)
        The window starts ``t_0, t_0 + dt, ...`` (OpenSim's sums), s.
    q, u, udot : ndarray, shape (K, nv)
        The simulated states and accelerations at the window starts.
    forces : ndarray, shape (K, n_act)
        Actuations at the window starts (the controls interpolated there × optimal force).
    controls : ndarray, shape (K, n_act)
    node_time : ndarray, shape (K + 1,)
        Times of the control nodes (``t_0 + 1e-8``, then each window end).
    node_controls : ndarray, shape (K + 1, n_act)
    position_errors : ndarray, shape (K, n_tasks)
        ``q_d − q`` of each task at each window start (OpenSim's ``_pErr``).
    """

    time: np.ndarray
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    forces: np.ndarray
    controls: np.ndarray
    node_time: np.ndarray
    node_controls: np.ndarray
    position_errors: np.ndarray


def _window_starts(t0: float, t1: float, dt: float) -> np.ndarray:
    """``t0, t0 + dt, ...`` summed one by one as OpenSim does, up to ``t1 − dt``."""
    n = int(np.floor((t1 - t0) / dt + 1e-9)) + 2
    steps = np.full(n, dt)
    steps[0] = t0
    t = np.cumsum(steps)
    return t[t <= t1 - dt + 1e-9]


def _solve_forces(A, b0, a_des, rows, sqrt_w, inv_opt, lo, hi):
    """min Σ w (A f + b0 − a*)² + Σ (f/opt)² over the actuations f, within [lo, hi]."""
    n = A.shape[1]
    K = np.concatenate([sqrt_w[:, None] * A[rows], np.diag(inv_opt)])
    r = np.concatenate([sqrt_w * (a_des - b0[rows]), np.zeros(n)])
    try:  # the stress rows make KᵀK positive definite: the normal equations are safe
        f = np.linalg.solve(K.T @ K, K.T @ r)
    except np.linalg.LinAlgError:
        f = np.linalg.lstsq(K, r, rcond=1e-10)[0]
    if np.all(f >= lo) and np.all(f <= hi):
        return f
    from scipy.optimize import lsq_linear

    return lsq_linear(K, r, bounds=(lo, hi), method="bvls").x


def track_kinematics(
    dynamics,
    desired: DesiredKinematics,
    tasks,
    optimal_force,
    *,
    t0: float,
    t1: float,
    dt: float = 0.001,
    q0=None,
    u0=None,
    control_limits=None,
) -> TrackingResult:
    """Track desired kinematics with ideal actuators, as OpenSim's CMC controller does.

    Parameters
    ----------
    dynamics : object
        The model's dynamics at a state: ``dynamics.prepare(times)`` (all the
        window times, once), ``dynamics.accelerations(i, q, u, f)`` → ``(nv,)``
        (forward dynamics at window time ``i`` with actuations ``f``) and
        ``dynamics.linear(i, q, u)`` → ``(A, b0)`` with the accelerations
        ``A f + b0`` as a function of the actuations (``A`` (nv, n_act));
        ``i = -1`` is the time ``t0 + 1e-8``.
    desired : DesiredKinematics
        Trajectories in model coordinate order.
    tasks : sequence of JointTask
    optimal_force : array_like, shape (n_act,)
    t0, t1 : float
        Time range, s; the windows start at ``t0, t0 + dt, ...`` up to ``t1 − dt``.
    dt : float
        The controller's window (``0.001`` s in RRA).
    q0, u0 : array_like, optional
        Initial state (default the desired kinematics at ``t0``).
    control_limits : tuple of array_like, optional
        ``(min, max)`` controls; infinite ones become ∓10000 as in OpenSim.

    Returns
    -------
    TrackingResult

    Notes
    -----
    At each window start ``t`` (state ``q, u``) OpenSim's ``CMC::computeControls``

    1. records the position errors ``q_d(t) − q`` and sets the desired
       accelerations ``a* = ka a_d(t + dt) + kv (u_d(t) − u) + kp (q_d(t) − q)``;
    2. poses the model at ``t + dt`` on the desired trajectory shifted by the
       present errors (``q_d(t + dt) + q − q_d(t)``, likewise the speeds; its
       ``CMCActuatorSubsystem``) and there solves the linear least squares
       ``min Σ w_i (q̈_i(f) − a*_i)² + Σ (f_j / F_j)²`` (``ActuatorForceTarget``,
       a direct LAPACK solve when inside the force bounds);
    3. sets the controls ``f_j / F_j`` as a node of piecewise linear controls
       at ``t + dt``.

    The model then moves from ``t`` to ``t + dt`` under controls that ramp
    from the previous node to the new one; ahbm integrates each window with
    one step of Heun's method (the window's two ends, where the loads are
    known), OpenSim with its error-controlled Runge-Kutta-Merson integrator.
    The first node is at ``t0 + 1e-8`` (a solve with ``dt = 1e-8``).
    """
    tasks = list(tasks)
    opt = np.asarray(optimal_force, dtype=float)
    n_act = opt.shape[0]
    if control_limits is None:
        cmin, cmax = np.full(n_act, -np.inf), np.full(n_act, np.inf)
    else:
        cmin, cmax = (np.asarray(v, dtype=float) for v in control_limits)
    cmin = np.where(np.isneginf(cmin), -MAX_CONTROL, cmin)
    cmax = np.where(np.isposinf(cmax), MAX_CONTROL, cmax)
    flo, fhi = np.minimum(cmin * opt, cmax * opt), np.maximum(cmin * opt, cmax * opt)
    starts = _window_starts(t0, t1, dt)
    if starts.size < 1:
        raise SimulationError(f"the time range [{t0}, {t1}] s is shorter than the window {dt} s")
    K = starts.size
    ends = starts + dt  # OpenSim's next target times
    # every time the loop needs: t0 + 1e-8, the window starts, the last end
    times = np.concatenate([[t0 + 1e-8], starts, ends[-1:]])
    dq, du, da = desired.at(times)
    dynamics.prepare(times)
    rows = np.array([t.coordinate for t in tasks], dtype=int)
    sqrt_w = np.sqrt([t.weight for t in tasks])
    kp = np.array([t.kp for t in tasks])
    kv = np.array([t.kv for t in tasks])
    ka = np.array([t.ka for t in tasks])
    inv_opt = 1.0 / opt

    def controls_at(k, q, u, first=False):
        # desired values at the window start k (index into `times`: k + 1) and its end
        i0 = k + 1
        i1 = 0 if first else k + 2
        err_q, err_u = dq[i0] - q, du[i0] - u
        a_des = ka * da[i1][rows] + kv * err_u[rows] + kp * err_q[rows]
        qs, us = dq[i1] - err_q, du[i1] - err_u  # the subsystem's pose at the target time
        A, b0 = dynamics.linear(i1 - 1, qs, us)
        f = _solve_forces(A, b0, a_des, rows, sqrt_w, inv_opt, flo, fhi)
        return f * inv_opt, err_q[rows]

    q = dq[1].copy() if q0 is None else np.asarray(q0, dtype=float).copy()
    u = du[1].copy() if u0 is None else np.asarray(u0, dtype=float).copy()
    nv = u.shape[0]
    node_t = np.concatenate([[t0 + 1e-8], ends])
    nodes = np.empty((K + 1, n_act))
    nodes[0] = controls_at(0, q, u, first=True)[0]
    Q, U, UD = np.empty((K, q.shape[0])), np.empty((K, nv)), np.empty((K, nv))
    C, E = np.empty((K, n_act)), np.empty((K, len(tasks)))
    for k in range(K):
        nodes[k + 1], E[k] = controls_at(k, q, u)
        # the controls at the window start: the line through the previous two nodes
        if k == 0:
            s = (starts[0] - node_t[0]) / (node_t[1] - node_t[0])
            c0 = nodes[0] + s * (nodes[1] - nodes[0])
        else:
            c0 = nodes[k]
        c1 = nodes[k + 1]
        a0 = dynamics.accelerations(k, q, u, c0 * opt)
        Q[k], U[k], UD[k], C[k] = q, u, a0, c0
        if k == K - 1:
            break
        h = starts[k + 1] - starts[k]
        qp, up = q + h * u, u + h * a0
        a1 = dynamics.accelerations(k + 1, qp, up, c1 * opt)
        q = q + 0.5 * h * (u + up)
        u = u + 0.5 * h * (a0 + a1)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(u))):
            raise SimulationError(
                f"the tracking simulation diverged at t = {starts[k + 1]:.4f} s; check the "
                "actuators (every tracked coordinate needs one) and the task weights"
            )
    return TrackingResult(starts, Q, U, UD, C * opt, C, node_t, nodes, E)
