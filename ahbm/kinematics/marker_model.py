"""The markers of a multibody model: their positions, Jacobians and the joint bounds.

What the marker inverse kinematics (:mod:`ahbm.kinematics.ik`) fits: the
model markers (``Body.markers``), the joint bounds from the joints' ``limits``
(see :mod:`ahbm.kinematics.ik` for their forms) and the marker Jacobians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import check_model
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.joints import FREE, SPHERICAL
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "ModelMarkers",
    "model_markers",
    "joint_bounds",
    "marker_jacobians",
]


@dataclass(frozen=True, repr=False)
class ModelMarkers(ResultRepr):
    """The markers of a model in body order (output of :func:`model_markers`).

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
