"""Optimization-based inverse kinematics: fit a multibody `Model` to measured markers.

The model's bodies carry markers (``Body.markers``: name -> position in the
body frame, the ``"markers"`` entry of a model file). For each frame,
:func:`fit_markers` finds the generalized coordinates ``q`` minimizing the
weighted squared distances between the model markers and the measured ones,
by Levenberg–Marquardt with analytic marker Jacobians, joint limits and a warm
start from the previous frames.

Joint limits
------------
A joint's ``limits`` entry (model file / :class:`~ahbm.kinematics.joints.Joint`)
may be

* a pair ``[lower, upper]`` for a one-coordinate joint,
* a list with one pair (or ``null``) per coordinate of the joint,
* a dict ``{coordinate_name: [lower, upper]}``,

in the units of the coordinates (rad, m); ``null``/``None`` bounds mean
unbounded. Quaternion coordinates (spherical and free joints) cannot be
bounded. :func:`joint_bounds` returns the resulting arrays.

The model's markers, the joint bounds and the marker Jacobians are in
:mod:`ahbm.kinematics.marker_model`; the Levenberg–Marquardt iterations over
blocks of frames in :mod:`ahbm.kinematics._ik_lm`.

References
----------
Felis, M. L. (2015). Modeling emotional aspects in human locomotion. PhD thesis,
Heidelberg University, §4.4.3 (inverse kinematics by least squares).
Simonidis, C., Stelzner, G., Seemann, W. & Bauer, F. (2011). Modeling and
synthesis of human motion within the collaborative research center 588.
Procedia IUTAM 2, 275-289, eqs 24-26.
Marquardt, D. W. (1963). An algorithm for least-squares estimation of
nonlinear parameters. J. SIAM 11(2), 431-441.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import as_float_array, as_int, as_nonnegative_float
from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics._ik_collision import collision_term, stack_penalties
from ahbm.kinematics._ik_lm import _coordinate_tasks, _lm_block, _lm_pipeline
from ahbm.kinematics.configuration import check_q, difference_q, integrate_q, neutral_q
from ahbm.kinematics.marker_model import _select_markers, _v_to_q_index, joint_bounds, model_markers
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "IKResult",
    "fit_markers",
]


@dataclass(frozen=True, repr=False)
class IKResult(ResultRepr):
    """Result of :func:`fit_markers` (a frozen result object).

    Attributes
    ----------
    q : ndarray, shape (n_frames, nq)
        Fitted generalized coordinates; NaN in frames without any visible marker.
    residuals : ndarray, shape (n_frames, n_markers)
        Distance between each measured marker and the model marker, m (NaN
        where the marker is missing).
    rms : ndarray, shape (n_frames,)
        Root-mean-square of the residuals of the visible markers, m.
    converged : ndarray of bool, shape (n_frames,)
        True where the iteration met a convergence criterion.
    iterations : ndarray of int, shape (n_frames,)
        Levenberg–Marquardt iterations used per frame.
    well_determined : ndarray of bool, shape (n_frames,)
        False where the visible markers do not determine every coordinate
        (rank-deficient Jacobian): there the undetermined coordinates keep
        their warm-start values.
    n_visible : ndarray of int, shape (n_frames,)
        Number of visible markers per frame.
    marker_names : list of str
        Names of the marker columns.
    """

    q: np.ndarray
    residuals: np.ndarray
    rms: np.ndarray
    converged: np.ndarray
    iterations: np.ndarray
    well_determined: np.ndarray
    n_visible: np.ndarray
    marker_names: list


def fit_markers(
    model: Model,
    markers,
    *,
    marker_names=None,
    weights=None,
    q0=None,
    bounds=None,
    block_size: int = 1,
    max_iter: int = 100,
    tol: float = 1e-10,
    xtol: float = 1e-8,
    warn: bool = True,
    coordinate_targets=None,
    coordinate_weights=None,
    warm_start: str = "previous",
    constraints=None,
    constraint_weight: float = np.inf,
    collision=None,
    collision_margin: float = 0.0,
    collision_weight: float = np.inf,
) -> IKResult:
    """Inverse kinematics: generalized coordinates that best fit measured markers.

    Parameters
    ----------
    model : Model
        Model whose bodies carry markers (``Body.markers``).
    markers : array_like, shape (n_frames, n_markers, 3), or dict
        Measured marker positions in the model's world frame, m; NaN marks a
        missing marker. A dict maps marker names to ``(n_frames, 3)`` arrays.
    marker_names : sequence of str, optional
        Names of the columns of an array `markers` (default: all model
        markers in body order). Every name must be a model marker.
    weights : array_like, shape (n_markers,), or dict, optional
        Non-negative marker weights (default 1); a dict maps names to weights.
    q0 : array_like, shape (nq,), optional
        Initial guess of the first frame (default: the neutral
        configuration, clipped into the bounds).
    bounds : tuple of array_like, optional
        ``(lower, upper)`` arrays of shape (nq,) overriding the model's joint
        limits (see :func:`joint_bounds`); use ``±inf`` for no bound.
    block_size : int, optional
        Frames solved together in one vectorized Levenberg–Marquardt run.
        Each block starts from the solution of the last frame of the previous
        block (the first from `q0`). The default 1 is a strict per-frame warm
        start; larger blocks (e.g. 10 at 100 Hz) are much faster for long
        trials when the motion between blocks is small.
    max_iter : int, optional
        Largest number of iterations per frame.
    tol : float, optional
        Convergence when an accepted step decreases the cost by less than
        ``tol`` times the cost.
    xtol : float, optional
        Convergence when an accepted step is shorter than ``xtol (1 + |q|)``
        (Gauss–Newton converges quadratically, so the remaining error is of the
        order of the square of the last step).
    warn : bool, optional
        Emit one :class:`~ahbm.errors.AhbmWarning` summarizing frames that
        did not converge, are not well determined or have no visible marker.
    coordinate_targets : dict, optional
        Coordinate tasks (OpenSim's ``IKCoordinateTask``): coordinate name ->
        target value (rad or m), a scalar or an array of shape (n_frames,)
        (NaN: no target in that frame). Quaternion coordinates cannot have
        targets.
    coordinate_weights : dict, optional
        Coordinate name -> non-negative weight of its task (default 1), in
        1/rad² or 1/m² relative to the marker weights (1/m²).
    warm_start : {"previous", "extrapolate", "pipeline"}, optional
        Start of each block: the last solution ("previous", default), or its
        linear extrapolation from the last two solutions along the frame index
        ("extrapolate": ``q_k + (f − f_k)/(f_k − f_{k−1}) · (q_k ⊖ q_{k−1})``,
        clipped into the bounds), which saves iterations on smooth motion.
        "pipeline": a window of `block_size` frames slides along the trial;
        a frame enters when an earlier one has converged and starts from the
        extrapolation (at most 4 frames ahead) of the last two earlier frames
        that have converged or done 2 iterations, so that every frame is
        warm-started from its predecessors while each iteration still
        evaluates `block_size` frames in one vectorized call.
    constraints : callable, optional
        Holonomic constraints ``g(q) = 0`` of the model (e.g. OpenSim's
        coordinate couplers): ``constraints(kin) -> (g, G)`` with ``g`` of
        shape (B, m) and its Jacobian ``G`` (B, m, nv) for the batch of states
        ``kin`` (a :class:`~ahbm.kinematics.forward.Kinematics`), e.g. built
        from ``ahbm.dynamics.ConstraintSet.position`` / ``.jacobian``.
    constraint_weight : float, optional
        Weight of ``|g|²`` in the cost (OpenSim's ``constraint_weight``); the
        default ``inf`` enforces them with a weight of 1e8, which leaves a
        violation of the order of 1e-8 times the marker-cost gradient.
    collision : "all" or sequence of (str, str), optional
        Keep swept-sphere volumes of the model (``model.collision``,
        :class:`~ahbm.kinematics.geometry.CollisionShape`) apart: the given
        pairs of shape names, or ``"all"`` (True) for every pair on
        non-adjacent bodies that move relative to each other. Adds
        ``w Σ min(0, d(q) − margin)²`` to the cost, with the distances and
        Jacobians of :func:`~ahbm.kinematics.geometry.distances`.
    collision_margin : float, optional
        Least distance between the shapes' surfaces, m (>= 0).
    collision_weight : float, optional
        Weight ``w`` of the collision penalty (1/m², relative to the
        marker weights); the default ``inf`` enforces the inequality with a
        weight of 1e8 (a pair pressed against the margin by the markers stays
        within nanometres of it).

    Returns
    -------
    IKResult
        ``q`` (n_frames, nq), per-marker ``residuals`` (n_frames, n_markers),
        ``rms``, ``converged``, ``iterations``, ``well_determined``,
        ``n_visible``, ``marker_names``.

    Raises
    ------
    DataError
        Wrong shapes, unknown marker names, negative weights, `q0` outside
        the bounds' dimensions.
    ModelError
        The model has no markers or malformed limits.

    Notes
    -----
    Per frame, minimize ``f(q) = Σ_k w_k |p_k(q) − x_k|² + Σ_c w_c (q_c − q̂_c)²``
    over the visible markers and the coordinate targets ``q̂_c`` (Felis 2015,
    §4.4.3; Simonidis et al. 2011, eqs 24-26; OpenSim's IK objective). With the
    stacked marker Jacobian ``J`` (:func:`marker_jacobians`), each
    Levenberg–Marquardt step solves
    ``(JᵀWJ + λ diag(JᵀWJ)) Δv = −JᵀW r`` (Marquardt 1963) and updates
    ``q ← integrate_q(q, Δv)`` (quaternion joints stay unit), then projects
    onto the bounds; coordinates at a bound whose step points outwards are
    frozen for that step (projected Gauss–Newton). λ shrinks after a
    successful step and grows after a failed one. Iteration stops when the
    relative cost decrease is below `tol`, the step below `xtol`, or the
    gradient vanishes.

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1]},
    ...                markers={"M1": [1.0, 0, 0], "M2": [0, 0.5, 0]})
    >>> x = np.array([[[np.cos(0.3), np.sin(0.3), 0], [-0.5 * np.sin(0.3), 0.5 * np.cos(0.3), 0]]])
    >>> res = fit_markers(m, x)
    >>> np.round(res.q, 9), bool(res.converged[0])
    (array([[0.3]]), True)
    """
    model_markers(model)  # a ModelError when the model has no markers
    if isinstance(markers, dict):
        if marker_names is not None:
            raise DataError("give `marker_names` only with an array `markers`, not with a dict")
        marker_names = list(markers)
        try:
            arrays = [
                as_float_array(markers[n], f"markers['{n}']", allow_nan=True) for n in markers
            ]
            X = np.stack(arrays, axis=1)
        except ValueError as err:
            raise DataError(
                f"the marker arrays of `markers` must all have shape (n_frames, 3): {err}"
            ) from err
    else:
        X = as_float_array(markers, "markers", allow_nan=True)
    if X.ndim == 2:
        X = X[None]
    names, bodies, local = _select_markers(model, marker_names)
    m = len(names)
    if X.ndim != 3 or X.shape[1:] != (m, 3):
        raise DataError(
            f"Expected `markers` to have shape (n_frames, {m}, 3) for markers {names}, "
            f"got {X.shape}"
        )
    n_frames = X.shape[0]
    if weights is None:
        w = np.ones(m)
    elif isinstance(weights, dict):
        unknown = [k for k in weights if k not in names]
        if unknown:
            raise DataError(f"`weights` names unknown marker(s) {unknown}; markers: {names}")
        w = np.array([float(weights.get(n, 1.0)) for n in names])
    else:
        w = as_float_array(weights, "weights")
        if w.shape != (m,):
            raise DataError(f"Expected `weights` to have shape ({m},), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise DataError("`weights` must be finite and non-negative; use 0 to ignore a marker")
    if bounds is None:
        lower, upper = joint_bounds(model)
    else:
        try:
            lower, upper = (as_float_array(b, "bounds", allow_nan=True) for b in bounds)
        except (TypeError, ValueError) as err:
            raise DataError(
                "`bounds` must be a pair (lower, upper) of arrays of shape (nq,)"
            ) from err
        if lower.shape != (model.nq,) or upper.shape != (model.nq,):
            raise DataError(
                f"Expected `bounds` arrays of shape ({model.nq},), got {lower.shape}, {upper.shape}"
            )
        if np.isnan(lower).any() or np.isnan(upper).any():
            raise DataError("`bounds` contains NaN; use -inf / inf for unbounded coordinates")
        if np.any(lower > upper):
            k = int(np.argmax(lower > upper))
            raise DataError(f"`bounds`: lower > upper for coordinate '{model.coordinate_names[k]}'")
    if q0 is None:
        q_start = np.clip(neutral_q(model), lower, upper)
    else:
        q_start = check_q(model, q0, "q0")
        if q_start.shape != (model.nq,):
            raise DataError(f"Expected `q0` to have shape ({model.nq},), got {q_start.shape}")
        q_start = np.clip(q_start, lower, upper)
    if warm_start not in ("previous", "extrapolate", "pipeline"):
        raise DataError(
            f"`warm_start` must be 'previous', 'extrapolate' or 'pipeline', got {warm_start!r}"
        )
    block_size = as_int(block_size, "block_size", minimum=1)
    max_iter = as_int(max_iter, "max_iter", minimum=1)
    tol = as_nonnegative_float(tol, "tol")
    xtol = as_nonnegative_float(xtol, "xtol")
    if block_size < 1:
        raise DataError(f"`block_size` must be a positive integer, got {block_size}")
    v2q = _v_to_q_index(model)
    CT, CW = _coordinate_tasks(model, v2q, n_frames, coordinate_targets, coordinate_weights)
    cons = None
    if constraints is not None:
        if not callable(constraints):
            raise DataError("`constraints` must be a callable kin -> (g (B, m), G (B, m, nv))")
        cw = float(constraint_weight)
        if not cw >= 0:
            raise DataError(f"`constraint_weight` must be >= 0 (inf: enforced), got {cw}")
        cons = (constraints, 1e8 if np.isinf(cw) else cw)
    coll = collision_term(model, collision, collision_margin, collision_weight)
    if coll is not None:
        cons = coll if cons is None else stack_penalties(cons, coll)
    has_q = v2q >= 0
    lo_v = np.where(has_q, lower[np.maximum(v2q, 0)], -np.inf)
    hi_v = np.where(has_q, upper[np.maximum(v2q, 0)], np.inf)
    bounded = np.isfinite(lower).any() or np.isfinite(upper).any()

    visible = np.isfinite(X).all(axis=2)
    Wf = np.where(visible, w, 0.0)  # (n_frames, m)
    n_vis = np.count_nonzero(visible & (w > 0), axis=1)
    Xz = np.where(visible[..., None], X, 0.0)

    q_out = np.full((n_frames, model.nq), np.nan)
    converged = np.zeros(n_frames, dtype=bool)
    iterations = np.zeros(n_frames, dtype=int)
    determined = np.zeros(n_frames, dtype=bool)
    q_prev = q_start
    last = []  # (frame, q) of the last two solved frames
    frames = np.nonzero(n_vis > 0)[0]
    bnd = (lower, upper, lo_v, hi_v, v2q, bounded, cons)

    def coord(fr):
        return None if CW is None else (CT[fr], CW[fr])

    if warm_start == "pipeline" and len(frames):
        Q, conv, it, det = _lm_pipeline(
            model, frames, q_start, Xz[frames], Wf[frames], bodies, local, bnd,
            max_iter, tol, xtol, coord(frames), block_size,
        )  # fmt: skip
        q_out[frames], converged[frames], iterations[frames], determined[frames] = Q, conv, it, det
        frames_blocks = range(0)
    else:
        frames_blocks = range(0, len(frames), block_size)
    for start in frames_blocks:
        fr = frames[start : start + block_size]
        Q0 = np.repeat(q_prev[None], len(fr), axis=0)
        if warm_start == "extrapolate" and len(last) == 2:
            (f1, q1), (f2, q2) = last
            rate = difference_q(model, q1, q2) / float(f2 - f1)
            Q0 = integrate_q(model, np.repeat(q2[None], len(fr), axis=0),
                             (fr - f2)[:, None] * rate[None, :])  # fmt: skip
            if bounded:
                Q0 = np.clip(Q0, lower, upper)
        Q, conv, it, det = _lm_block(
            model, Q0, Xz[fr], Wf[fr], bodies, local, bnd, max_iter, tol, xtol, coord(fr)
        )
        q_out[fr] = Q
        converged[fr] = conv
        iterations[fr] = it
        determined[fr] = det
        q_prev = Q[-1]
        if len(fr) >= 2:
            last = [(fr[-2], Q[-2]), (fr[-1], Q[-1])]
        else:
            last = [*last[-1:], (fr[-1], Q[-1])]

    # final residuals
    res = np.full((n_frames, m), np.nan)
    if len(frames):
        kin = _st.compute(model, q_out[frames])
        P = np.einsum("nmij,mj->nmi", kin.rotations[:, bodies], local) + kin.positions[:, bodies]
        res[frames] = np.linalg.norm(P - X[frames], axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt(np.nansum(np.where(w > 0, res, np.nan) ** 2, axis=1) / n_vis)
    rms[n_vis == 0] = np.nan
    if warn:
        problems = []
        if np.any(n_vis == 0):
            problems.append(f"{int(np.sum(n_vis == 0))} frame(s) without visible markers (q NaN)")
        nc = (n_vis > 0) & ~converged
        if nc.any():
            problems.append(
                f"{int(nc.sum())} frame(s) not converged (first {np.nonzero(nc)[0][:5].tolist()})"
            )
        nd = (n_vis > 0) & ~determined
        if nd.any():
            problems.append(
                f"{int(nd.sum())} frame(s) where the visible markers do not determine every "
                f"coordinate (first {np.nonzero(nd)[0][:5].tolist()})"
            )
        if problems:
            warnings.warn(
                "fit_markers: " + "; ".join(problems) + "; see IKResult.converged, "
                ".well_determined and .n_visible",
                AhbmWarning,
                stacklevel=2,
            )
    return IKResult(q_out, res, rms, converged, iterations, determined, n_vis, list(names))
