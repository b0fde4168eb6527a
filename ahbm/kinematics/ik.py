"""Optimization-based inverse kinematics: fit a multibody `Model` to measured markers.

The model's bodies carry markers (``Body.markers``: name -> position in the
body frame, the ``"markers"`` entry of a model file). For each frame,
:func:`fit_markers` finds the generalized coordinates ``q`` minimizing the
weighted squared distances between the model markers and the measured ones,
by Levenberg–Marquardt with analytic marker Jacobians, joint limits and a warm
start from the previous frames.

Joint limits
------------
A joint's ``limits`` entry (model file / :class:`~ahbm.kinematics.tree.Joint`)
may be

* a pair ``[lower, upper]`` for a one-coordinate joint,
* a list with one pair (or ``null``) per coordinate of the joint,
* a dict ``{coordinate_name: [lower, upper]}``,

in the units of the coordinates (rad, m); ``null``/``None`` bounds mean
unbounded. Quaternion coordinates (spherical and free joints) cannot be
bounded. :func:`joint_bounds` returns the resulting arrays.

References
----------
Felis, M. L. (2015). Modeling emotional aspects in human locomotion. PhD thesis,
Heidelberg University, §4.4.3 (inverse kinematics by least squares).
Simonidis, C., Stelzner, G. & Seemann, W. (2011). Kinematic and dynamic
analysis of human motion, eqs 24-26.
Marquardt, D. W. (1963). An algorithm for least-squares estimation of
nonlinear parameters. J. SIAM 11(2), 431-441.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import as_float_array, as_int, as_nonnegative_float, check_model
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.kinematics.tree import (
    FREE,
    SPHERICAL,
    Model,
    check_q,
    difference_q,
    integrate_q,
    neutral_q,
)
from ahbm.types import ResultRepr, TupleResult

__all__ = [
    "IKResult",
    "fit_markers",
    "joint_bounds",
    "model_markers",
    "ModelMarkers",
    "marker_jacobians",
]


@dataclass(frozen=True, repr=False)
class IKResult(TupleResult, ResultRepr):
    """Result of :func:`fit_markers` (a frozen result object).

    A NamedTuple in ahbm 0.1: using it as a tuple still works until 0.3 and
    warns once (:class:`~ahbm.types.TupleResult`).

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


@dataclass(frozen=True, repr=False)
class ModelMarkers(TupleResult, ResultRepr):
    """The markers of a model in body order (output of :func:`model_markers`).

    A tuple in ahbm 0.1: unpacking it (``names, bodies, local = ...``) still
    works until 0.3 and warns once (:class:`~ahbm.types.TupleResult`).

    Attributes
    ----------
    names : list of str
    bodies : ndarray of int, shape (n_markers,)
        Index of the body carrying each marker.
    local : ndarray, shape (n_markers, 3)
        Marker positions in their body frames, m.
    """

    names: list
    bodies: np.ndarray
    local: np.ndarray


def model_markers(model: Model) -> ModelMarkers:
    """All markers of a model in body order.

    Parameters
    ----------
    model : Model

    Returns
    -------
    ModelMarkers
        ``names``, ``bodies`` (n_markers,) and ``local`` (n_markers, 3), m.

    Raises
    ------
    ModelError
        The model has no markers, or a marker name is used on two bodies.

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1]},
    ...                markers={"M1": [1.0, 0, 0]})
    >>> model_markers(m).names
    ['M1']
    """
    if not isinstance(model, Model):
        raise ModelError(
            f"expected a Model as `model` (the first argument), got {type(model).__name__}"
        )
    names, bodies, local = [], [], []
    for i, body in enumerate(model.bodies):
        for name, pos in body.markers.items():
            if name in names:
                raise ModelError(
                    f"marker '{name}' is defined on two bodies of model '{model.name}'; "
                    "marker names must be unique"
                )
            names.append(name)
            bodies.append(i)
            local.append(np.asarray(pos, dtype=float))
    if not names:
        raise ModelError(
            f"model '{model.name}' has no markers; add them with add_body(..., markers=...) "
            "or the 'markers' entry of the model file"
        )
    return ModelMarkers(
        names, np.array(bodies, dtype=int), np.array(local, dtype=float).reshape(-1, 3)
    )


def _pair_bounds(value, what):
    if value is None:
        return -np.inf, np.inf
    try:
        lo, hi = value
        lo = -np.inf if lo is None else float(lo)
        hi = np.inf if hi is None else float(hi)
    except (TypeError, ValueError) as err:
        raise ModelError(
            f"{what}: a limit must be [lower, upper] (or null), got {value!r}"
        ) from err
    if not lo <= hi or np.isnan(lo) or np.isnan(hi):
        raise ModelError(f"{what}: lower limit {lo} is above the upper limit {hi}")
    return lo, hi


def joint_bounds(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the generalized coordinates from the joint limits.

    Parameters
    ----------
    model : Model

    Returns
    -------
    lower, upper : ndarray, shape (nq,)
        ``-inf`` / ``+inf`` where a coordinate is unbounded.

    Raises
    ------
    ModelError
        Malformed ``limits`` (see the module docstring) or limits on
        quaternion coordinates.

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1],
    ...                                "limits": [-1.0, 2.0]})
    >>> joint_bounds(m)
    (array([-1.]), array([2.]))
    """
    check_model(model)
    lower = np.full(model.nq, -np.inf)
    upper = np.full(model.nq, np.inf)
    for i, body in enumerate(model.bodies):
        lim = body.joint.limits
        if lim is None:
            continue
        jn = body.joint.name
        coords = list(body.joint.coordinates)
        nq = len(coords)
        qi = model.q_index[i]
        code = model.joint_codes[i]
        quat = set()
        if code == SPHERICAL:
            quat = set(range(4))
        elif code == FREE:
            quat = set(range(3, 7))
        if isinstance(lim, dict):
            pairs = [None] * nq
            for name, val in lim.items():
                if name not in coords:
                    raise ModelError(
                        f"joint '{jn}': limits name unknown coordinate '{name}' "
                        f"(coordinates: {coords})"
                    )
                pairs[coords.index(name)] = val
        elif (
            nq == 1
            and isinstance(lim, (list, tuple))
            and len(lim) == 2
            and all(v is None or isinstance(v, (int, float)) for v in lim)
        ):
            pairs = [lim]
        elif isinstance(lim, (list, tuple)) and len(lim) == nq:
            pairs = list(lim)
        else:
            raise ModelError(
                f"joint '{jn}': 'limits' must be [lower, upper] (one coordinate), a list of "
                f"{nq} pairs, or a dict by coordinate name; got {lim!r}"
            )
        for k, val in enumerate(pairs):
            if val is None:
                continue
            if k in quat:
                raise ModelError(
                    f"joint '{jn}': coordinate '{coords[k]}' is a quaternion component and "
                    "cannot be limited; use an 'euler' joint for bounded rotations"
                )
            lower[qi + k], upper[qi + k] = _pair_bounds(val, f"joint '{jn}' '{coords[k]}'")
    return lower, upper


def _v_to_q_index(model: Model) -> np.ndarray:
    """q index of each velocity coordinate, -1 for quaternion-joint rotations."""
    out = np.full(model.nv, -1, dtype=int)
    for i, code in enumerate(model.joint_codes):
        qi, vi, nv = model.q_index[i], model.v_index[i], model.joint_nv[i]
        if code == SPHERICAL:
            continue
        if code == FREE:
            out[vi : vi + 3] = np.arange(qi, qi + 3)
            continue
        out[vi : vi + nv] = np.arange(qi, qi + nv)
    return out


def _positions_jacobians(kin, bodies, local, with_jacobian=True):
    """Marker positions (m, 3, N) and Jacobians (m, 3, nv, N) from a kinematic state."""
    N = kin.n_frames
    m = len(bodies)
    P = np.empty((m, 3, N))
    J = np.empty((m, 3, kin.model.nv, N)) if with_jacobian else None
    for b in np.unique(bodies):
        idx = np.nonzero(bodies == b)[0]
        p = _st.point_bl(kin, b, local[idx][:, :, None])  # (mb, 3, N)
        P[idx] = p
        if with_jacobian:
            J[idx] = _st.points_jacobian_bl(kin, b, p)
    return P, J


def marker_jacobians(
    model: Model, q, *, marker_names=None, kin=None
) -> tuple[np.ndarray, np.ndarray]:
    """World positions of model markers and their Jacobians ``ṗ = J q̇``.

    Parameters
    ----------
    model : Model
        A model whose bodies carry markers.
    q : array_like, shape (..., nq)
    marker_names : sequence of str, optional
        Markers to return (default: all, in body order).
    kin : Kinematics, optional
        State from :func:`~ahbm.kinematics.forward.forward_kinematics`; ``q``
        may then be None.

    Returns
    -------
    positions : ndarray, shape (..., n_markers, 3)
    jacobians : ndarray, shape (..., n_markers, 3, nv)

    Notes
    -----
    For a marker at world position ``p`` on body ``b``, the column of joint
    coordinate ``c`` of a joint ``j`` on the path to ``b`` is
    ``R_j s_v + (R_j s_ω) × (p − o_j)`` with ``[s_ω; s_v]`` the motion-subspace
    column in body-``j`` coordinates — the rows of
    :func:`~ahbm.kinematics.forward.point_jacobian`, for all markers from one
    kinematic pass.

    Examples
    --------
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [0, 0, 1]},
    ...                markers={"M1": [1.0, 0, 0]})
    >>> p, J = marker_jacobians(m, [np.pi / 2])
    >>> np.round(p, 12) + 0.0, np.round(J, 12) + 0.0
    (array([[0., 1., 0.]]), array([[[-1.],
            [ 0.],
            [ 0.]]]))
    """
    names, bodies, local = _select_markers(model, marker_names)
    kin = _st.resolve(model, kin, q, columns=True)
    P, J = _positions_jacobians(kin, bodies, local)
    return _st.out(kin, P), _st.out(kin, J)


def _select_markers(model, marker_names):
    found = model_markers(model)
    names, bodies, local = found.names, found.bodies, found.local
    if marker_names is None:
        return names, bodies, local
    if isinstance(marker_names, (str, bytes, dict)) or not hasattr(marker_names, "__iter__"):
        raise DataError(
            f"Expected `marker_names` to be a list of marker names, got {marker_names!r}"
        )
    marker_names = [str(n) for n in marker_names]
    unknown = [n for n in marker_names if n not in names]
    if unknown:
        raise DataError(
            f"marker(s) {unknown} are not defined on model '{model.name}' (model markers: "
            f"{names}); rename them to the model's names or drop them"
        )
    if len(set(marker_names)) != len(marker_names):
        raise DataError(f"`marker_names` lists a marker twice: {marker_names}")
    idx = [names.index(n) for n in marker_names]
    return marker_names, bodies[idx], local[idx]


def _solve_step(H, g, lam, free, D=None):
    """Damped step for a batch: (H + lam D + eps I) dv = -g on the free coordinates.

    D is diag(H) by default; with constraint penalties, the diagonal of the
    cost without them (so that the damping does not freeze the feasible motion).
    """
    B, n = g.shape
    d = np.einsum("bii->bi", H) if D is None else D
    scale = np.maximum(d, 1e-12 * np.maximum(d.max(axis=1, keepdims=True), 1e-300))
    A = H + (lam[:, None] * scale + 1e-12 * scale.max(axis=1, keepdims=True))[:, :, None] * np.eye(
        n
    )
    fixed = ~free
    if fixed.any():
        A = np.where(fixed[:, :, None] | fixed[:, None, :], 0.0, A)
        A[fixed] = 0.0
        ii = np.nonzero(fixed)
        A[ii[0], ii[1], ii[1]] = 1.0
        g = np.where(fixed, 0.0, g)
    return -np.linalg.solve(A, g[..., None])[..., 0]


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


def _coordinate_tasks(model, v2q, n_frames, targets, weights):
    """Coordinate targets and weights per frame on the velocity axis: (n_frames, nv) x 2."""
    if targets is None:
        if weights:
            raise DataError("`coordinate_weights` given without `coordinate_targets`")
        return None, None
    if not isinstance(targets, dict):
        raise DataError("`coordinate_targets` must be a dict: coordinate name -> target(s)")
    weights = {} if weights is None else dict(weights)
    names = model.coordinate_names
    unknown = [k for k in list(targets) + list(weights) if k not in names]
    if unknown:
        raise DataError(
            f"`coordinate_targets`/`coordinate_weights` name unknown coordinate(s) {unknown}; "
            f"model coordinates: {names}"
        )
    CT = np.zeros((n_frames, model.nv))
    CW = np.zeros((n_frames, model.nv))
    for name, value in targets.items():
        qi = names.index(name)
        hits = np.nonzero(v2q == qi)[0]
        if hits.size == 0:
            raise DataError(
                f"coordinate '{name}' is a quaternion component and cannot have a target"
            )
        w = float(weights.get(name, 1.0))
        if not np.isfinite(w) or w < 0:
            raise DataError(f"`coordinate_weights['{name}']` must be finite and >= 0, got {w}")
        v = as_float_array(value, f"coordinate_targets['{name}']", allow_nan=True)
        try:
            v = np.broadcast_to(v, (n_frames,))
        except ValueError as err:
            raise DataError(
                f"`coordinate_targets['{name}']` must be a scalar or have shape ({n_frames},), "
                f"got {v.shape}"
            ) from err
        ok = np.isfinite(v)
        CT[:, hits[0]] = np.where(ok, v, 0.0)
        CW[:, hits[0]] = np.where(ok, w, 0.0)
    return CT, CW


def _support_mask(model, bodies) -> np.ndarray:
    """(m, nv) 1 where velocity coordinate k moves the body of marker i (cached)."""
    key = ("ahbm.kinematics.ik.support_mask", bodies.tobytes())
    mask = model.cache.get(key)
    if mask is None:
        mask = np.zeros((len(bodies), model.nv))
        for i, b in enumerate(bodies):
            mask[i, model.support_dofs[b]] = 1.0
        model.cache[key] = mask
    return mask


def _markers_batch(kin, bodies, local):
    """Marker positions (B, m, 3) and Jacobians (B, m, 3, nv), batch first, in one pass.

    ``p = R_b r + o_b`` and ``J = (J_v − p × J_ω) · support`` with the world
    columns ``[J_ω; J_v]`` of the state (the rows of
    :func:`_positions_jacobians`, without a loop over bodies).
    """
    R = kin.rotations[:, bodies]
    P = np.einsum("nmij,mj->nmi", R, local) + kin.positions[:, bodies]
    Sw = kin.world_columns
    w = Sw[:, None, :3, :]  # (B, 1, 3, nv)
    p = P[:, :, :, None]  # (B, m, 3, 1)
    J = np.empty(P.shape + (Sw.shape[-1],))
    J[:, :, 0] = p[:, :, 1] * w[:, :, 2] - p[:, :, 2] * w[:, :, 1]
    J[:, :, 1] = p[:, :, 2] * w[:, :, 0] - p[:, :, 0] * w[:, :, 2]
    J[:, :, 2] = p[:, :, 0] * w[:, :, 1] - p[:, :, 1] * w[:, :, 0]
    J = (Sw[:, None, 3:, :] - J) * _support_mask(kin.model, bodies)[None, :, None, :]
    return P, J


def _lm_terms(model, Qb, X, W, bodies, local, coord, v2q, cons=None):
    """Cost, Gauss-Newton matrix JᵀWJ, gradient JᵀWr of frames Qb (B, nq), damping diagonal.

    The damping diagonal is diag(H) without the constraint penalty.
    """
    kin = _st.compute(model, Qb, columns=True)
    P, J = _markers_batch(kin, bodies, local)
    B, m = W.shape
    r = (P - X).reshape(B, 3 * m)
    J = J.reshape(B, 3 * m, -1)
    w3 = np.repeat(W, 3, axis=1)
    cost = np.einsum("bk,bk->b", w3 * r, r)
    JwT = np.swapaxes(J * w3[:, :, None], 1, 2)
    H = JwT @ J
    g = (JwT @ r[:, :, None])[:, :, 0]
    if coord is not None:
        CT, CW = coord
        rc = np.where(v2q >= 0, Qb[:, np.maximum(v2q, 0)], 0.0) - CT
        cost = cost + np.einsum("bv,bv->b", CW, rc * rc)
        H = H + CW[:, :, None] * np.eye(model.nv)
        g = g + CW * rc
    D = np.einsum("bii->bi", H)
    if cons is not None:
        func, wc = cons
        phi, G = func(kin)
        phi = np.asarray(phi, dtype=float).reshape(B, -1)
        G = np.asarray(G, dtype=float).reshape(B, phi.shape[1], -1)
        GT = np.swapaxes(G, 1, 2)
        cost = cost + wc * np.einsum("bk,bk->b", phi, phi)
        H = H + wc * (GT @ G)
        g = g + wc * (GT @ phi[:, :, None])[:, :, 0]
    return cost, H, g, D


def _at_bounds(Qb, bnd):
    """Masks (B, nv) of coordinates at their lower / upper bound."""
    lower, upper, lo_v, hi_v, v2q, bounded = bnd[:6]
    eps_lo = 1e-12 * (1.0 + np.abs(np.where(np.isfinite(lo_v), lo_v, 0.0)))
    eps_hi = 1e-12 * (1.0 + np.abs(np.where(np.isfinite(hi_v), hi_v, 0.0)))
    qv = np.where(v2q >= 0, Qb[:, np.maximum(v2q, 0)], 0.0)
    return qv <= lo_v + eps_lo, qv >= hi_v - eps_hi


def _v2q_identity(model) -> bool:
    """True when every velocity coordinate is the derivative of the same-index q."""
    key = "ahbm.kinematics.ik.v2q_identity"
    hit = model.cache.get(key)
    if hit is None:
        v2q = _v_to_q_index(model)
        hit = model.cache[key] = bool(
            model.nq == model.nv and np.array_equal(v2q, np.arange(model.nv))
        )
    return hit


def _lm_trial(model, Q, H, g, lam, bnd, D):
    """Damped Gauss-Newton step of every frame: (dv, trial Q), projected onto the bounds."""
    lower, upper, bounded = bnd[0], bnd[1], bnd[5]
    free = np.ones(g.shape, dtype=bool)
    if bounded:
        at_lo, at_hi = _at_bounds(Q, bnd)
        # the descent direction -g points outwards at an active bound
        free = ~((at_lo & (g > 0)) | (at_hi & (g < 0)))
    dv = _solve_step(H, g, lam, free, D)
    # without quaternion joints q and v share their layout: q + dv (no validation pass)
    Qt = Q + dv if model.nq == model.nv and _v2q_identity(model) else integrate_q(model, Q, dv)
    if bounded:
        Qt = np.clip(Qt, lower, upper)
    return dv, Qt


def _lm_update(state, dv, Qt, trial, active, bnd, tol, xtol):
    """Accept or reject the trial of the active frames; return (newly converged, stalled).

    `state` = [Q, cost, H, g, lam, D] is updated in place.
    """
    Q, cost, H, g, lam, D = state
    cost_t, H_t, g_t, D_t = trial
    accept = active & (cost_t <= cost)
    decrease = cost - cost_t
    step = np.linalg.norm(dv, axis=1)
    qn = np.linalg.norm(np.where(np.isfinite(Q), Q, 0.0), axis=1)
    small_step = step <= xtol * (1.0 + qn)
    small_dec = decrease <= tol * np.maximum(cost, 1e-300)
    Q = np.where(accept[:, None], Qt, Q)
    cost = np.where(accept, cost_t, cost)
    H = np.where(accept[:, None, None], H_t, H)
    g = np.where(accept[:, None], g_t, g)
    D = np.where(accept[:, None], D_t, D)
    lam = np.where(accept, np.maximum(lam / 3.0, 1e-12), lam * 4.0)
    # projected gradient (zero on coordinates held at a bound)
    if bnd[5]:
        at_lo, at_hi = _at_bounds(Q, bnd)
        gp = np.where((at_lo & (g > 0)) | (at_hi & (g < 0)), 0.0, g)
    else:
        gp = g
    hs = np.sqrt(np.maximum(np.einsum("bii->b", H), 1e-300))
    tiny_grad = np.linalg.norm(gp, axis=1) <= 1e-14 * hs * np.sqrt(np.maximum(cost, 0)) + 1e-30
    newly = active & ((accept & (small_dec | small_step)) | tiny_grad | (cost <= 1e-30))
    stalled = active & ~newly & (lam > 1e12)
    state[:] = [Q, cost, H, g, lam, D]
    return newly, stalled


def _well_determined(H):
    """The weighted Jacobian has full rank (on the free coordinates)."""
    ev = np.linalg.eigvalsh(H)
    return ev[:, 0] > 1e-10 * np.maximum(ev[:, -1], 1e-300)


def _lm_block(model, Q, X, W, bodies, local, bnd, max_iter, tol, xtol, coord=None):
    """Vectorized Levenberg–Marquardt over a block of frames (each frame independent)."""
    B = Q.shape[0]
    v2q, cons = bnd[4], bnd[6]
    cost, H, g, D = _lm_terms(model, Q, X, W, bodies, local, coord, v2q, cons)
    state = [Q, cost, H, g, np.full(B, 1e-4), D]
    done = np.zeros(B, dtype=bool)
    conv = np.zeros(B, dtype=bool)
    iters = np.zeros(B, dtype=int)
    for _ in range(int(max_iter)):
        active = ~done
        if not active.any():
            break
        iters[active] += 1
        dv, Qt = _lm_trial(model, state[0], state[2], state[3], state[4], bnd, state[5])
        trial = _lm_terms(model, Qt, X, W, bodies, local, coord, v2q, cons)
        newly, stalled = _lm_update(state, dv, Qt, trial, active, bnd, tol, xtol)
        conv |= newly
        done |= newly | stalled
    return state[0], conv, iters, _well_determined(state[2])


_SETTLE = 2  # iterations after which a frame in the window may seed the next ones


def _lm_pipeline(model, frames, q_start, X, W, bodies, local, bnd, max_iter, tol, xtol,
                 coord, window):  # fmt: skip
    """Levenberg–Marquardt over a sliding window of frames, each warm-started from its predecessors.

    Frames enter the window in order as earlier ones converge (the first one is
    solved alone from `q_start`); an entering frame starts from the linear
    extrapolation (at most 4 frames ahead) of the current estimates of the last
    two earlier frames that have converged or done `_SETTLE` iterations (the
    last one's estimate when only one has). Every iteration evaluates the
    whole window in one call.
    Returns q (n, nq), converged, iterations, well_determined for `frames`.
    """
    n = len(frames)
    nq, nv = model.nq, model.nv
    v2q = bnd[4]
    lower, upper, bounded = bnd[0], bnd[1], bnd[5]
    q_est = np.full((n, nq), np.nan)
    conv = np.zeros(n, dtype=bool)
    iters = np.zeros(n, dtype=int)
    det = np.zeros(n, dtype=bool)
    slot_frame = np.full(window, -1, dtype=int)  # index into `frames`, -1: empty
    finished_mask = np.zeros(n, dtype=bool)
    extrapolate_gap = 4.0
    settle = _SETTLE
    linear = _v2q_identity(model)
    state = [
        np.repeat(q_start[None], window, axis=0),
        np.zeros(window),
        np.repeat(np.eye(nv)[None], window, axis=0),
        np.zeros((window, nv)),
        np.full(window, 1e-4),
        np.ones((window, nv)),
    ]
    Xw = np.zeros((window,) + X.shape[1:])
    Ww = np.zeros((window,) + W.shape[1:])
    CTw = CWw = None
    if coord is not None:
        CTw, CWw = np.zeros((window, nv)), np.zeros((window, nv))
    next_frame = 0

    def starts(ks):
        """Starts of entering frames `ks`: extrapolated from the last two settled frames.

        A frame is settled when it has converged or done `settle` iterations.
        """
        ks = np.asarray(ks)
        settled = finished_mask[: ks[0]] | (iters[: ks[0]] >= settle)
        done_before = np.nonzero(settled)[0][-2:]
        if done_before.size == 0:
            return np.repeat(q_start[None], len(ks), axis=0)
        k1 = done_before[-1]
        base = np.repeat(q_est[k1][None], len(ks), axis=0)
        if done_before.size == 1:
            return base
        k0 = done_before[0]
        gap = np.minimum((frames[ks] - frames[k1]).astype(float), extrapolate_gap)
        if linear:  # q and v share their layout: plain differences
            rate = (q_est[k1] - q_est[k0]) / float(frames[k1] - frames[k0])
            q = base + gap[:, None] * rate[None, :]
        else:
            rate = difference_q(model, q_est[k0], q_est[k1]) / float(frames[k1] - frames[k0])
            q = integrate_q(model, base, gap[:, None] * rate[None, :])
        return np.clip(q, lower, upper) if bounded else q

    while True:
        # refill empty slots (their trial point is the start)
        new = np.zeros(window, dtype=bool)
        # until one frame has converged, the first frame is solved alone, so that
        # every other frame starts from a converged solution of an earlier one
        room = max(n - next_frame, 0) if finished_mask.any() else 1 - next_frame
        empty = np.nonzero(slot_frame < 0)[0][: max(room, 0)]
        if empty.size:
            ks = np.arange(next_frame, next_frame + empty.size)
            next_frame += empty.size
            slot_frame[empty] = ks
            new[empty] = True
            Xw[empty], Ww[empty] = X[ks], W[ks]
            if coord is not None:
                CTw[empty], CWw[empty] = coord[0][ks], coord[1][ks]
            q_est[ks] = starts(ks)
        occupied = slot_frame >= 0
        if not occupied.any():
            break
        old = occupied & ~new
        Qt = state[0].copy()
        dv = np.zeros((window, nv))
        if old.any():
            dv_o, Qt_o = _lm_trial(model, state[0], state[2], state[3], state[4], bnd, state[5])
            dv[old], Qt[old] = dv_o[old], Qt_o[old]
        Qt[new] = q_est[slot_frame[new]]
        Qt[~occupied] = state[0][~occupied]
        cw = None if coord is None else (CTw, CWw)
        trial = _lm_terms(model, Qt, Xw, Ww, bodies, local, cw, v2q, bnd[6])
        # new frames: take the start as the current state
        Q, cost, H, g, lam, D = state
        Q = np.where(new[:, None], Qt, Q)
        cost = np.where(new, trial[0], cost)
        H = np.where(new[:, None, None], trial[1], H)
        g = np.where(new[:, None], trial[2], g)
        D = np.where(new[:, None], trial[3], D)
        lam = np.where(new, 1e-4, lam)
        state[:] = [Q, cost, H, g, lam, D]
        newly, stalled = _lm_update(state, dv, Qt, trial, old, bnd, tol, xtol)
        idx = slot_frame[old]
        iters[idx] += 1
        q_est[slot_frame[occupied]] = state[0][occupied]
        finished = newly | stalled | (old & (iters[np.maximum(slot_frame, 0)] >= max_iter))
        if finished.any():
            k = slot_frame[finished]
            conv[k] = newly[finished]
            det[k] = _well_determined(state[2][finished])
            finished_mask[k] = True
            slot_frame[finished] = -1
    return q_est, conv, iters, det
