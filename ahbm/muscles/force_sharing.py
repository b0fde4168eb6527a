"""Static optimization: muscle activations that reproduce the inverse-dynamics forces.

For every frame of a trial, :func:`static_optimization` finds the muscle
activations ``a`` (and the controls ``u`` of optional reserve actuators) that

.. math::

    \\min_{a, u} \\; \\sum_m a_m^p + \\sum_k |u_k|^p
    \\quad \\text{s.t.} \\quad
    \\sum_m r_{mk} (a_m F^a_m + F^p_m) + u_k R_k = \\tau_k \\;\\; (k = 1..n_v),
    \\qquad 0 \\le a_m \\le 1,

with ``τ`` the inverse-dynamics generalized forces
(:func:`ahbm.dynamics.rnea`, with the external loads), ``r = −∂l/∂q`` the
moment arms (:func:`ahbm.muscles.paths.moment_arms`), ``F^a`` the force
along the tendon at full activation and ``F^p`` the passive force of each
muscle's own class (rigid tendon: linear in ``a``;
:func:`ahbm.muscles.hill.force_coefficients` for Thelen2003Muscle and
DeGrooteFregly2016Muscle, :func:`ahbm.muscles.millard.millard_force_coefficients`
for Millard2012EquilibriumMuscle) and ``R_k`` the optimal force of the
reserve actuator of coordinate ``k`` (OpenSim's ``CoordinateActuator``).
:func:`load_sharing` is the same optimization for moment arms and forces
computed elsewhere.

The solver
----------
The problem is separable and strictly convex in ``(a, u)``, with one
equality per degree of freedom (``n_v``, ~10-40) and simple bounds: its dual
has only ``n_v`` unknowns ``λ``. With ``s = Aᵀλ`` the primal minimizer is
explicit, ``x_j(λ) = clip(sign(s_j)|s_j|^{1/(p−1)}, lb_j, ub_j)``, and the
dual function ``g(λ) = λᵀb − Σ_j φ*_j(s_j)`` is concave and piecewise smooth
with gradient ``b − A x(λ)`` (the constraint residual). A semismooth Newton
method with the generalized Hessian ``A D Aᵀ`` (``D = ∂x/∂s``, zero for
activations at a bound) and an exact line search on ``g`` (the root of its
piecewise-linear directional derivative, by regula falsi) solves all
frames of a trial at once, as stacked ``n_v × n_v`` linear systems (numpy's
batched ``solve``): no Python loop over frames. For ``p = 2`` it stops in
finitely many steps once the set of saturated muscles is found (an
active-set method on the dual), to round-off in the constraints. Frames are
warm-started: every 8th frame is solved first from the minimum-norm
multipliers, the others start from the multipliers interpolated between
them. A frame whose constraints cannot be met (not enough muscle strength
and no reserve) has an unbounded dual; it stops when the line search finds
no maximum (or after ``max_iterations``), keeps its last iterate and is
reported in ``failed`` and ``residuals`` and by a warning, never silently
clipped.

References
----------
Crowninshield, R.D. & Brand, R.A. (1981) A physiologically based criterion
of muscle force prediction in locomotion. *J Biomech* 14, 793-801.
Anderson, F.C. & Pandy, M.G. (2001) Static and dynamic optimization
solutions for gait are practically equivalent. *J Biomech* 34, 153-161.
OpenSim's ``StaticOptimization`` analysis (OpenSim 4, Delp et al. 2007).
Qi, L. & Sun, J. (1993) A nonsmooth version of Newton's method. *Math.
Program.* 58, 353-367 (semismooth Newton).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_choice,
    as_float_array,
    as_int,
    as_positive_float,
    check_model,
    check_trailing_shape,
)
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.muscles._sharing_solver import _solve
from ahbm.muscles._so_strength import muscle_curves, strengths
from ahbm.types import ResultRepr

__all__ = ["StaticOptimizationResult", "load_sharing", "reserve_array", "static_optimization"]


@dataclass(frozen=True, repr=False)
class StaticOptimizationResult(ResultRepr):
    """Result of :func:`static_optimization` and :func:`load_sharing`.

    Attributes
    ----------
    activations : ndarray, shape (..., n_muscles)
        Muscle activations in ``[min_activation, max_activation]``.
    muscle_forces : ndarray, shape (..., n_muscles)
        Tendon forces ``a F^a + F^p``, N.
    reserve_controls : ndarray, shape (..., nv)
        Controls ``u`` of the reserve actuators (0 where a coordinate has none).
    reserve_loads : ndarray, shape (..., nv)
        Generalized forces of the reserves ``u R``, N m (rotational) or N.
    tau : ndarray, shape (..., nv)
        The generalized forces to reproduce (inverse dynamics), N m or N.
    residuals : ndarray, shape (..., nv)
        ``Σ_m r_m F_m + u R − τ``: the constraint violation of each frame.
    cost : ndarray, shape (...,)
        ``Σ a^p + Σ |u|^p`` at the solution.
    failed : ndarray of bool, shape (...,)
        Frames whose residual exceeds the tolerance (constraints that the
        muscles and reserves cannot meet within their bounds).
    iterations : ndarray of int, shape (...,)
        Newton iterations of each frame.
    muscle_names : tuple of str
    coordinate_names : tuple of str
    exponent : float
    actuator_controls : ndarray, shape (..., n_actuators)
        Controls ``c`` of the other actuators (``actuators=``; OpenSim's
        PointActuator, TorqueActuator); their generalized forces are
        ``c_j G_j`` and are included in ``residuals``.
    """

    activations: np.ndarray
    muscle_forces: np.ndarray
    reserve_controls: np.ndarray
    reserve_loads: np.ndarray
    tau: np.ndarray
    residuals: np.ndarray
    cost: np.ndarray
    failed: np.ndarray
    iterations: np.ndarray
    muscle_names: tuple = ()
    coordinate_names: tuple = ()
    exponent: float = 2.0
    actuator_controls: np.ndarray | None = None

    @property
    def failed_frames(self) -> np.ndarray:
        """Indices of the failed frames, shape (n_failed, n_batch_axes) (``np.argwhere``)."""
        return np.argwhere(self.failed)

    def __repr__(self) -> str:
        n = int(np.prod(self.failed.shape)) if self.failed.ndim else 1
        worst = float(np.max(np.abs(self.residuals))) if self.residuals.size else 0.0
        return (
            f"StaticOptimizationResult(frames={self.failed.shape}, muscles="
            f"{self.activations.shape[-1]}, nv={self.tau.shape[-1]}, exponent={self.exponent:g}, "
            f"failed={int(np.count_nonzero(self.failed))}/{n}, max|residual|={worst:.3g})"
        )


# --- public functions -----------------------------------------------------------------------


def load_sharing(
    tau,
    moment_arms,
    max_forces,
    *,
    passive_forces=None,
    reserves=None,
    exponent=2.0,
    min_activation=0.0,
    max_activation=1.0,
    reserve_limits=None,
    actuators=None,
    actuator_limits=None,
    tolerance=1e-8,
    max_iterations=100,
    warm_start=True,
    muscle_names=None,
    coordinate_names=None,
    warn=True,
) -> StaticOptimizationResult:
    """Static optimization for given moment arms and muscle strengths (all frames at once).

    Parameters
    ----------
    tau : array_like, shape (..., nv)
        Generalized forces to reproduce (inverse dynamics), N m or N.
    moment_arms : array_like, shape (..., n_muscles, nv)
        ``r = −∂l/∂q`` of each muscle for each generalized velocity, m (or
        dimensionless for translational coordinates).
    max_forces : array_like, shape (..., n_muscles) or (n_muscles,)
        Tendon force at full activation ``F^a`` (e.g. ``F0 fl fv cos α``), N, >= 0.
    passive_forces : array_like, shape (..., n_muscles), optional
        Activation-independent tendon force ``F^p``, N (default none).
    reserves : array_like, shape (nv,) or (..., nv), optional
        Optimal force ``R_k`` of a reserve actuator on each coordinate (N m or
        N; 0: no reserve). Default: no reserves.
    exponent : float
        ``p > 1`` of the cost ``Σ a^p + Σ |u|^p`` (default 2).
    min_activation, max_activation : float or array_like (n_muscles,)
        Bounds of the activations (default 0 and 1; OpenSim's muscle
        ``min_control`` and ``max_control``).
    reserve_limits : tuple of array_like (nv,), optional
        ``(lower, upper)`` bounds of the reserve controls ``u`` (OpenSim's
        ``min_control``, ``max_control`` of a CoordinateActuator; default
        unbounded).
    actuators : array_like, shape (..., n_actuators, nv), optional
        Other actuators by their generalized forces at unit control ``G_j``
        (N m or N; e.g. ``optimal_force Jᵀ d`` of a force along ``d`` at a
        body point, OpenSim's PointActuator and TorqueActuator). Their
        controls ``c`` enter the cost like the reserves' (``Σ |c|^p``).
    actuator_limits : tuple of array_like (n_actuators,), optional
        ``(lower, upper)`` bounds of their controls (default unbounded;
        ``lower <= 0 <= upper``).
    tolerance : float
        A frame has converged when ``max_k |residual_k| <= tolerance * max(1,
        max_k |τ_k|)`` (N m).
    max_iterations : int
        Newton iterations per frame (default 100).
    warm_start : bool
        Solve every 8th frame first and start the others from the multipliers
        interpolated between them (default True; the frames are taken in the
        order of the flattened batch axes).
    muscle_names, coordinate_names : sequence of str, optional
        Kept in the result and used in messages.
    warn : bool
        Warn (:class:`~ahbm.errors.AhbmWarning`) when frames fail (default True).

    Returns
    -------
    StaticOptimizationResult

    Raises
    ------
    DataError
        Shapes that do not match, non-finite values, negative strengths, bad options.

    Notes
    -----
    Solves ``min Σ a^p + Σ |u|^p + Σ |c|^p`` s.t. ``Σ_m r_mk (a_m F^a_m + F^p_m) + u_k R_k
    + Σ_j c_j G_jk = τ_k`` and ``a_min <= a <= a_max`` by a semismooth Newton method on the
    dual (see the module docstring). Frames whose constraints cannot be met
    are flagged in ``failed`` with their ``residuals``.

    Examples
    --------
    Two muscles with moment arms 0.05 m and 0.025 m share a 30 N m moment;
    with ``p = 2`` the activations are proportional to ``r F0``:

    >>> res = load_sharing([30.0], [[0.05], [0.025]], [1000.0, 1000.0])
    >>> res.activations.round(4).tolist(), bool(abs(res.residuals[0]) < 1e-6)
    ([0.48, 0.24], True)
    """
    p = as_positive_float(exponent, "exponent")
    if not p > 1.0:
        raise DataError(f"`exponent` must be > 1 (a strictly convex cost), got {exponent!r}")
    tau = as_float_array(tau, "tau")
    if tau.ndim < 1:
        raise DataError(f"Expected `tau` to have shape (..., nv), got {tau.shape}")
    nv = tau.shape[-1]
    R = as_float_array(moment_arms, "moment_arms")
    if R.ndim < 2 or R.shape[-1] != nv:
        raise DataError(
            f"Expected `moment_arms` to have shape (..., n_muscles, {nv}) (nv from `tau`), "
            f"got {R.shape}"
        )
    nm = R.shape[-2]
    F = as_float_array(max_forces, "max_forces")
    check_trailing_shape(F, (nm,), "max_forces")
    if np.any(F < 0):
        j = int(np.argwhere(F < 0)[0][-1])
        raise DataError(
            f"`max_forces` must be >= 0 N; muscle {_name(muscle_names, j)} has "
            f"{float(F[..., j].min()):g}"
        )
    Fp = (
        np.zeros(nm) if passive_forces is None else as_float_array(passive_forces, "passive_forces")
    )
    check_trailing_shape(Fp, (nm,), "passive_forces")
    res = np.zeros(nv) if reserves is None else as_float_array(reserves, "reserves")
    check_trailing_shape(res, (nv,), "reserves")
    if np.any(res < 0):
        raise DataError("`reserves` (optimal forces of the reserve actuators) must be >= 0")
    lo = np.broadcast_to(as_float_array(min_activation, "min_activation"), (nm,))
    hi = np.broadcast_to(as_float_array(max_activation, "max_activation"), (nm,)) + 0.0
    if not (np.all(lo >= 0.0) and np.all(lo < hi)):
        raise DataError(
            f"need 0 <= `min_activation` < `max_activation`, got {min_activation!r} and "
            f"{max_activation!r}"
        )
    if reserve_limits is None:
        r_lo, r_hi = np.full(nv, -np.inf), np.full(nv, np.inf)
    else:
        if not isinstance(reserve_limits, (tuple, list)) or len(reserve_limits) != 2:
            raise DataError("Expected `reserve_limits` to be a pair (lower, upper) of arrays (nv,)")
        r_lo, r_hi = (
            np.broadcast_to(as_float_array(v, f"reserve_limits[{k}]", allow_nan=True), (nv,))
            for k, v in enumerate(reserve_limits)
        )
        if not (np.all(r_lo <= 0.0) and np.all(r_hi >= 0.0)):  # (False for NaN)
            raise DataError(
                "`reserve_limits` must hold lower bounds <= 0 and upper bounds >= 0 (a reserve "
                f"must be able to rest), got {reserve_limits!r}"
            )
    G, (c_lo, c_hi) = _actuator_columns(actuators, actuator_limits, nv)
    na = G.shape[-2]
    tol = as_positive_float(tolerance, "tolerance")
    iters = as_int(max_iterations, "max_iterations", minimum=1)
    for flag, what in ((warm_start, "warm_start"), (warn, "warn")):
        if not isinstance(flag, (bool, np.bool_)):
            raise DataError(f"Expected `{what}` to be True or False, got {flag!r:.40}")
    for names, n, what in (
        (muscle_names, nm, "muscle_names"),
        (coordinate_names, nv, "coordinate_names"),
    ):
        if names is not None and len(names) != n:
            raise DataError(f"Expected `{what}` to hold {n} names, got {len(names)}")
    try:
        batch = np.broadcast_shapes(
            tau.shape[:-1], R.shape[:-2], F.shape[:-1], Fp.shape[:-1], res.shape[:-1], G.shape[:-2]
        )
    except ValueError as err:
        raise DataError(
            f"the batch shapes of `tau` {tau.shape[:-1]}, `moment_arms` {R.shape[:-2]}, "
            f"`max_forces` {F.shape[:-1]}, `passive_forces` {Fp.shape[:-1]}, `reserves` "
            f"{res.shape[:-1]} and `actuators` {G.shape[:-2]} do not broadcast"
        ) from err
    N = int(np.prod(batch, dtype=int))
    Rf = np.broadcast_to(R, batch + (nm, nv)).reshape(N, nm, nv)
    Ff = np.broadcast_to(F, batch + (nm,)).reshape(N, nm)
    Fpf = np.broadcast_to(Fp, batch + (nm,)).reshape(N, nm)
    resf = np.broadcast_to(res, batch + (nv,)).reshape(N, nv)
    tauf = np.broadcast_to(tau, batch + (nv,)).reshape(N, nv)
    Gf = np.broadcast_to(G, batch + (na, nv)).reshape(N, na, nv)
    # unknowns x = [a (nm); u (nv); c (na)]; A x = b
    has = resf > 0
    A = np.concatenate(
        [
            np.swapaxes(Rf, 1, 2) * Ff[:, None, :],
            resf[:, :, None] * np.eye(nv),
            np.swapaxes(Gf, 1, 2),
        ],
        axis=2,
    )
    b = tauf - np.einsum("nmk,nm->nk", Rf, Fpf)
    lb = np.concatenate(
        [np.broadcast_to(lo, (N, nm)), np.where(has, r_lo, 0.0), np.broadcast_to(c_lo, (N, na))],
        axis=1,
    )
    ub = np.concatenate(
        [np.broadcast_to(hi, (N, nm)), np.where(has, r_hi, 0.0), np.broadcast_to(c_hi, (N, na))],
        axis=1,
    )
    tolf = tol * np.maximum(1.0, np.max(np.abs(tauf), axis=-1)) if N else np.zeros(0)
    if N:
        x, its = _solve(A, b, lb, ub, p, tolf, iters, bool(warm_start))
    else:
        x, its = np.zeros((0, nm + nv + na)), np.zeros(0, dtype=int)
    a, u, c = x[:, :nm], x[:, nm : nm + nv], x[:, nm + nv :]
    forces = a * Ff + Fpf
    loads = u * resf
    resid = np.einsum("nmk,nm->nk", Rf, forces) + loads + np.einsum("njk,nj->nk", Gf, c) - tauf
    failed = ~(np.max(np.abs(resid), axis=-1, initial=0.0) <= tolf)
    cost = (np.abs(a) ** p).sum(axis=-1) + (np.abs(u) ** p).sum(axis=-1)
    cost = cost + (np.abs(c) ** p).sum(axis=-1)
    if warn and failed.any():
        _warn_failed(failed, resid, batch, coordinate_names, tolf)
    shape = lambda z: z.reshape(batch + z.shape[1:])  # noqa: E731
    return StaticOptimizationResult(
        activations=shape(a),
        muscle_forces=shape(forces),
        reserve_controls=shape(u),
        reserve_loads=shape(loads),
        tau=shape(tauf.copy()),
        residuals=shape(resid),
        cost=shape(cost),
        failed=shape(failed),
        iterations=shape(its),
        muscle_names=tuple(muscle_names) if muscle_names is not None else (),
        coordinate_names=tuple(coordinate_names) if coordinate_names is not None else (),
        exponent=p,
        actuator_controls=shape(c),
    )


def _actuator_columns(actuators, limits, nv: int):
    """Checked ``actuators`` (..., n_actuators, nv) and their control bounds (n_actuators,)."""
    if actuators is None:
        G = np.zeros((0, nv))
    else:
        G = as_float_array(actuators, "actuators")
        if G.ndim < 2 or G.shape[-1] != nv:
            raise DataError(
                f"Expected `actuators` to have shape (..., n_actuators, {nv}) (nv from `tau`), "
                f"got {G.shape}"
            )
    na = G.shape[-2]
    if limits is None:
        return G, (np.full(na, -np.inf), np.full(na, np.inf))
    if not isinstance(limits, (tuple, list)) or len(limits) != 2:
        raise DataError(
            "Expected `actuator_limits` to be a pair (lower, upper) of arrays (n_actuators,)"
        )
    lo, hi = (
        np.broadcast_to(as_float_array(v, f"actuator_limits[{k}]", allow_nan=True), (na,))
        for k, v in enumerate(limits)
    )
    if not (np.all(lo <= 0.0) and np.all(hi >= 0.0)):  # (False for NaN)
        raise DataError(
            "`actuator_limits` must hold lower bounds <= 0 and upper bounds >= 0 (an actuator "
            f"must be able to rest), got {limits!r}"
        )
    return G, (lo, hi)


def _name(names, j: int) -> str:
    return f"'{names[j]}'" if names is not None else f"#{j}"


def _warn_failed(failed, resid, batch, coordinate_names, tolf) -> None:
    idx = np.flatnonzero(failed)
    first = idx[:5]
    parts = []
    for i in first:
        k = int(np.argmax(np.abs(resid[i])))
        frame = np.unravel_index(int(i), batch) if len(batch) > 1 else int(i)
        parts.append(f"frame {frame}: {resid[i, k]:.4g} on coordinate {_name(coordinate_names, k)}")
    warnings.warn(
        f"static optimization: {idx.size} frame(s) cannot meet the inverse-dynamics forces "
        f"with the muscles' strength and the reserves ({'; '.join(parts)}"
        f"{' ...' if idx.size > 5 else ''}); they are flagged in `failed` with their "
        "`residuals`. Add reserve actuators (`reserves=`) on those coordinates or check the "
        "model's muscles",
        AhbmWarning,
        stacklevel=3,
    )


def reserve_array(model, reserves) -> np.ndarray:
    """Optimal forces of the reserve actuators per generalized velocity, shape (nv,).

    Parameters
    ----------
    model : Model
    reserves : None, float, dict or array_like (nv,)
        None: no reserves; a number: the same optimal force on every
        coordinate; ``{coordinate_name: optimal_force}``; or one value per
        generalized velocity (0: none). N m or N.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> reserve_array(double_pendulum_3d(), 1.0).shape
    (4,)
    """
    check_model(model)
    nv = model.nv
    if reserves is None:
        return np.zeros(nv)
    if isinstance(reserves, dict):
        out = np.zeros(nv)
        names = list(model.coordinate_names)
        if model.nq != model.nv:
            raise ModelError(
                f"model '{model.name}' has quaternion joints (nq != nv); give `reserves` as an "
                f"array of {nv} values"
            )
        for key, value in reserves.items():
            if key not in names:
                raise DataError(
                    f"`reserves` names coordinate {key!r}, which model '{model.name}' does not "
                    f"have; coordinates: {names}"
                )
            out[names.index(key)] = as_positive_float(value, f"reserves[{key!r}]")
        return out
    arr = as_float_array(reserves, "reserves")
    if arr.ndim == 0:
        return np.full(nv, as_positive_float(float(arr), "reserves"))
    check_trailing_shape(arr, (nv,), "reserves")
    return arr


def static_optimization(
    model,
    q,
    qd,
    qdd,
    *,
    f_ext=None,
    f_ext_frame="world",
    tau=None,
    exponent=2.0,
    reserves=None,
    force_length_velocity=True,
    passive_forces=False,
    muscles=None,
    curves=None,
    convention="tendon",
    min_activation=None,
    max_activation=None,
    reserve_limits=None,
    actuators=None,
    actuator_limits=None,
    tolerance=1e-8,
    max_iterations=100,
    warm_start=True,
) -> StaticOptimizationResult:
    """Muscle activations and forces that reproduce a motion, frame by frame (whole trial).

    Parameters
    ----------
    model : Model
        With muscles (``model.muscles``, e.g. from :func:`ahbm.opensim.read_osim`).
    q : array_like, shape (..., nq)
        Generalized coordinates (rad, m).
    qd, qdd : array_like, shape (..., nv)
        Generalized velocities and accelerations.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External loads (ground reactions) as in :func:`ahbm.dynamics.rnea`.
    f_ext_frame : {"world", "local"}
        Frame of ``f_ext``.
    tau : array_like, shape (..., nv), optional
        The generalized forces to reproduce when already known (then
        ``f_ext`` must be None); default ``rnea(model, q, qd, qdd, f_ext=f_ext)``.
    exponent : float
        ``p`` of the cost ``Σ a^p`` (default 2, OpenSim's ``activation_exponent``).
    reserves : None, float, dict or array_like (nv,)
        Reserve actuators (OpenSim's ``CoordinateActuator``) by their optimal
        force, see :func:`reserve_array`; their controls enter the cost like
        activations, unbounded.
    force_length_velocity : bool
        True (default): the strength at full activation is ``F0 fl(l̃) fv(ṽ)
        cos α`` at the fiber length and velocity of a rigid tendon (OpenSim's
        ``use_muscle_physiology``); False: ``F0``.
    passive_forces : bool
        Add the passive fiber force (activation independent) to the muscle
        forces. Default False, as OpenSim's StaticOptimization, which neglects it.
    muscles : sequence of str, optional
        Muscles to use (default all of ``model.muscles``, in model order).
    curves : {"thelen2003", "degroote2016"}, optional
        One set of force-length-velocity curves for every muscle, whatever its class
        (from the muscle's Hill parameters). Default: each muscle's own class, as
        OpenSim does: Thelen2003Muscle (:func:`~ahbm.muscles.hill.force_coefficients`,
        ``"thelen2003"``), DeGrooteFregly2016Muscle (``"degroote2016"``) and
        Millard2012EquilibriumMuscle
        (:func:`~ahbm.muscles.millard.millard_force_coefficients`); a model may mix them.
    convention : {"tendon", "opensim"}
        ``"tendon"`` (default): the physically consistent rigid-tendon strength, the
        force along the tendon (``F0 fL fV cos α`` at the rigid-tendon fiber length,
        and the passive force likewise). ``"opensim"``: exactly what OpenSim 4.6's
        StaticOptimization multiplies activations by, with its departures: De Groote's
        strength along the fiber (without ``cos α``), Millard's ``cos α`` taken at the
        *normalized* fiber length, no passive force (``ahbm so`` uses it). The default
        is the physical one because this is a library function; on the shared
        subject01 walk (Millard muscles, pennation up to 25°) the activations of the
        two differ by up to 0.012 RMS (soleus_r, gastroc_r).
    min_activation, max_activation : float or array_like (n_muscles,), optional
        Bounds of the activations. Default: each muscle's OpenSim ``min_control``
        and ``max_control`` (``Muscle.parameters``), else OpenSim's defaults
        (0.01 for Thelen2003Muscle and Millard2012EquilibriumMuscle, whose
        activation never drops below it, 0 for the others; 1).
    reserve_limits : tuple of array_like (nv,), optional
        ``(lower, upper)`` bounds of the reserve controls (default unbounded).
    actuators : array_like, shape (..., n_actuators, nv), optional
        Other actuators by their generalized forces at unit control (OpenSim's
        PointActuator, TorqueActuator), see :func:`load_sharing`.
    actuator_limits : tuple of array_like (n_actuators,), optional
        ``(lower, upper)`` bounds of their controls (default unbounded).
    tolerance, max_iterations, warm_start
        Solver options, see :func:`load_sharing`.

    Returns
    -------
    StaticOptimizationResult
        Activations, muscle forces, reserve loads, ``tau``, per-frame
        residuals, failed frames.

    Raises
    ------
    ModelError
        A model without muscles; a muscle whose OpenSim class ahbm has no curves for
        (naming the muscle and its class; pass `curves=` or leave it out with
        `muscles=`).
    DataError
        Bad states, loads or options.

    Notes
    -----
    ``min Σ a^p + Σ |u|^p`` s.t. ``R(q)ᵀ (a ∘ F^a + F^p) + u ∘ R_res = τ``, ``0 <= a <= 1``,
    with ``τ`` from the recursive Newton-Euler algorithm, the moment arms
    ``R = −∂l/∂q`` of :func:`ahbm.muscles.paths.moment_arms`, and
    ``F^a, F^p`` of each muscle's class (see `curves`) at the
    musculotendon lengths and lengthening speeds of the frame (rigid tendon,
    so the forces are linear in ``a``). Solver: :func:`load_sharing`.

    Examples
    --------
    >>> from ahbm.io import read_osim                        # doctest: +SKIP
    >>> model = read_osim("subject01.osim")                  # doctest: +SKIP
    >>> res = static_optimization(model, q, qd, qdd, f_ext=f_ext,
    ...                           reserves={"pelvis_tx": 1000.0})  # doctest: +SKIP
    >>> res.activations.shape                                # doctest: +SKIP
    (151, 18)
    """
    from ahbm.dynamics import rnea
    from ahbm.muscles.paths import lengthening_speeds, moment_arms, muscle_lengths

    check_model(model)
    convention = as_choice(convention, "convention", ("tendon", "opensim"))
    chosen = _select_muscles(model, muscles)
    names = [m.name for m in chosen]
    kinds = muscle_curves(chosen, curves)
    q = as_float_array(q, "q")
    if tau is None:
        tau = rnea(model, q, qd, qdd, f_ext=f_ext, f_ext_frame=f_ext_frame)
    else:
        if f_ext is not None:
            raise DataError("give `tau` or `f_ext`, not both (`tau` already holds the loads)")
        tau = as_float_array(tau, "tau")
        check_trailing_shape(tau, (model.nv,), "tau")
    qd = np.zeros(q.shape[:-1] + (model.nv,)) if qd is None else qd
    R = moment_arms(model, q, muscles=names)
    lmt = vmt = None
    if force_length_velocity or passive_forces:
        lmt = muscle_lengths(model, q, muscles=names)
        vmt = lengthening_speeds(model, q, qd, muscles=names)
    active, passive = strengths(
        chosen, kinds, lmt, vmt, force_length_velocity=bool(force_length_velocity),
        convention=convention,
    )  # fmt: skip
    if min_activation is None:
        min_activation = [_control(m, "min_control") for m in chosen]
    if max_activation is None:
        max_activation = [_control(m, "max_control") for m in chosen]
    return load_sharing(
        tau,
        R,
        active,
        passive_forces=passive if passive_forces else None,
        reserves=reserve_array(model, reserves),
        min_activation=min_activation,
        max_activation=max_activation,
        reserve_limits=reserve_limits,
        actuators=actuators,
        actuator_limits=actuator_limits,
        exponent=exponent,
        tolerance=tolerance,
        max_iterations=max_iterations,
        warm_start=warm_start,
        muscle_names=names,
        coordinate_names=list(model.velocity_names),
    )


# OpenSim's default min_control of the muscle classes (their minimum activation)
_MIN_CONTROL = {"Thelen2003Muscle": 0.01, "Millard2012EquilibriumMuscle": 0.01}


def _control(muscle, key: str) -> float:
    """A muscle's OpenSim min_control / max_control (its parameters, else the class default)."""
    value = muscle.parameters.get(key) if isinstance(muscle.parameters, dict) else None
    if value is None:
        return _MIN_CONTROL.get(muscle.model, 0.0) if key == "min_control" else 1.0
    return float(value)


def _select_muscles(model, muscles) -> list:
    try:
        items = list(model.muscles)
    except (AttributeError, KeyError, ModelError):
        items = []
    by_name = {m.name: m for m in items}
    # path actuators and springs share the section; only muscles have activations
    items = [m for m in items if str(m.model).endswith("Muscle")]
    if not items:
        raise ModelError(
            f"model '{model.name}' has no muscles (model.muscles is empty); read an OpenSim "
            "model with muscles (ahbm.opensim.read_osim) or add the 'muscles' section"
        )
    if muscles is None:
        return items
    if isinstance(muscles, str):
        muscles = [muscles]
    if not isinstance(muscles, (list, tuple)) or not all(isinstance(n, str) for n in muscles):
        raise DataError(
            f"Expected `muscles` to be a list of muscle names (str), got {muscles!r:.80}"
        )
    missing = [n for n in muscles if n not in by_name]
    if missing:
        raise DataError(
            f"`muscles` names {missing}, which model '{model.name}' does not have; muscles: "
            f"{[m.name for m in items]}"
        )
    return [by_name[n] for n in muscles]
