"""Musculotendon path kinematics: lengths, lengthening speeds, moment arms, world points.

The paths are the :class:`~ahbm.muscles.Muscle` objects of a model
(``model.muscles``): ordered points fixed in bodies
(:class:`~ahbm.muscles.PathPoint`), via points active over a coordinate range
(:class:`~ahbm.muscles.ConditionalPathPoint`), points whose location is a
function of a coordinate (:class:`~ahbm.muscles.MovingPathPoint`), and wraps
over cylinders, spheres and ellipsoids (:class:`~ahbm.muscles.PathWrap` over
the model's :class:`~ahbm.muscles.WrapObject` items). Every function takes a
whole trial at once: batch axes of ``q`` first, one pass of the compiled
forward kinematics (``kin=`` may pass it in), loops over muscles and points,
never over frames.

Definitions
-----------
- **Length** (m): OpenSim's ``GeometryPath`` length. The active points, in
  order, then each path wrap in the order of ``Muscle.wraps`` (OpenSim's
  ``PathWrapSet``) inserts its two tangent points into the segment it wraps
  (within its ``range``; the first segment that cuts the object, else the
  wrapped segment whose length grows least); the length is the sum of the
  straight segments plus the surface lengths between tangent points. With
  two or more wraps the wraps are applied again, up to 8 passes, until the
  length changes by less than 0.5 mm, and when in the first pass the first
  wrap missed and the second had a path point inside its object, the two
  are swapped for the later passes (as OpenSim does). OpenSim caches a
  point's ground location when a state first reads it: a tangent point keeps,
  in the straight segments and the length changes, the position of the pass
  that first inserted it, while the later passes' wraps start from its
  updated location and add their arcs; ahbm does the same.
- **Moment arm** (m per unit of generalized velocity: m/rad or m/m):
  ``r = -∂l/∂q`` per generalized velocity ``qd`` (shape ``(..., n_muscles,
  nv)``), so that a muscle tension ``F`` exerts the generalized forces
  ``tau = r F``. This is the definition consistent with generalized forces.
  OpenSim's ``computeMomentArm`` holds the wrap tangent points fixed on their
  objects, which departs from it on wrapping paths (by up to 2.2 cm on
  arm26's TRIlong, whose wraps chain); ``convention="opensim"`` gives
  OpenSim's value instead (within 5e-15 m of OpenSim 4.6).
- **Lengthening speed** (m/s): ``dl/dt = (∂l/∂q) qd = -r qd``.

Derivatives: each straight segment pulls its end points along its unit
vector, whose generalized force follows from the body motion columns of the
forward kinematics (``S^T [p × g; g]`` per body); a moving point adds its
function's derivative along its coordinate. A wrapped segment between two
path points uses the derivative of the wrapped length with respect to its end
points (:func:`ahbm.muscles.wrap_length_gradient`) and, because that length
depends only on the end points seen from the wrap object, the opposite load
on the wrap object's body. Where a wrap's end point is another wrap's tangent
point (chained wraps), or a tangent point is read at a position other than
its current one (OpenSim's cached locations above), the length is not
stationary in the tangent points: for those frames each body's wrench is the
slope of the whole path length under virtual rigid motions of that body
(differences of 1 µm, 0.1 µm where the length jumps; see
``ahbm.muscles._path_slopes``), and each moving point's gradient the slope
under its translation.

Examples
--------
>>> import numpy as np
>>> from ahbm.kinematics.tree import Model
>>> from ahbm.muscles import Muscle, PathPoint, muscle_lengths, moment_arms
>>> m = Model("elbow")
>>> _ = m.add_body("forearm", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0,
...                inertia=np.eye(3) * 0.01)
>>> m.muscles = [Muscle("flexor", (PathPoint("o", "ground", (0.0, 0.3, 0.0)),
...                                PathPoint("i", "forearm", (0.05, 0.0, 0.0))),
...                      max_isometric_force=500.0, optimal_fiber_length=0.1,
...                      tendon_slack_length=0.15)]
>>> q = np.array([[0.0], [0.5]])
>>> muscle_lengths(m, q).round(4)
array([[0.3041],
       [0.2795]])
>>> moment_arms(m, q).shape
(2, 1, 1)
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model
from ahbm.muscles._path_geometry import _apply_wraps, _Path, _straight_paths, _wrap_frame
from ahbm.muscles._path_plan import _model_muscles, _names, _plan, _world_points
from ahbm.muscles._path_slopes import _wrapped_path

__all__ = ["muscle_lengths", "lengthening_speeds", "moment_arms", "path_loads", "path_points"]


# ----------------------------------------------------------------------------
# driver
# ----------------------------------------------------------------------------


def _compute(
    model,
    q,
    muscles,
    kin,
    *,
    need_grad: bool,
    qd=None,
    needs_qd=False,
    loads=None,
    convention="exact",
):
    """Lengths (n_m, N) and ∂l/∂q (n_m, nv, N); with `loads` (a dict) also the body wrenches
    ``loads["body"]`` (n_m, n_bodies, 6, N) and the moving-point terms ``loads["coordinate"]``
    (n_m, nv, N) of ∂l/∂q."""
    names = _names(model, muscles)
    kin = _st.resolve(model, kin, q, qd, needs_qd=needs_qd, columns=need_grad)
    plans = _plan(model, names)
    N, nv = kin.n_frames, model.nv
    lengths = np.empty((len(plans), N))
    grad = np.zeros((len(plans), nv, N)) if need_grad else None
    if loads is not None:
        loads["body"] = np.zeros((len(plans), model.n_bodies, 6, N))
        loads["coordinate"] = np.zeros((len(plans), nv, N))
    if not plans:
        return kin, lengths, grad
    geo = _world_points(kin, plans, need_grad)
    wrenches: dict[int, dict] = {}  # body -> {muscle index: wrench (6, N)}

    def add(b, mi, wrench):
        if b >= 0:
            per = wrenches.setdefault(b, {})
            per[mi] = per[mi] + wrench if mi in per else wrench

    straight = [mi for mi, mp in enumerate(plans) if not mp.wraps]
    node_grads, point_wrenches = {}, {}
    if straight:
        sub = [geo[i] for i in straight]
        ls, G_all = _straight_paths(kin, [plans[i] for i in straight], sub, need_grad)
        lengths[straight] = ls
        if need_grad:  # [p × g; g] of every point of these paths at once
            P_all = np.concatenate([g[0] for g in sub])
            W_all = np.concatenate([cross(P_all, G_all, axis=-2), G_all], axis=1)
            cuts = np.cumsum([len(plans[i].points) for i in straight])[:-1]
            for mi, G, W in zip(straight, np.split(G_all, cuts), np.split(W_all, cuts),
                                strict=True):  # fmt: skip
                node_grads[mi], point_wrenches[mi] = G, W
    for mi, (mp, (pts, active, moving)) in enumerate(zip(plans, geo, strict=True)):
        if mp.wraps:
            length, G, Gmov, extra = _wrapped_path(kin, mp, pts, active, moving, need_grad,
                                                   convention)  # fmt: skip
            lengths[mi] = length
            if not need_grad:
                continue
            W = np.concatenate([cross(pts, G, axis=-2), G], axis=1)
        elif need_grad:
            G, W, extra = node_grads[mi], point_wrenches[mi], ()
            Gmov = G
        else:
            continue
        for k, pt in enumerate(mp.points):
            if pt.body >= 0:
                add(pt.body, mi, W[k])
        for b, wrench in extra:
            add(b, mi, wrench)
        for k, derivs in moving:
            R = _st.rotation_bl(kin, mp.points[k].body)
            for axis, vi, der in derivs:
                grad[mi, vi] += np.einsum("iN,iN->N", Gmov[k], R[:, axis]) * der
    if loads is not None:
        loads["coordinate"] += grad
    if need_grad:
        Sw = kin._Sw_flat  # (N, 6, nv)
        for b, items in wrenches.items():
            idx = np.fromiter(items, dtype=np.int64, count=len(items))
            W = np.stack(list(items.values()))  # (k, 6, N)
            if loads is not None:
                loads["body"][idx, b] = W
            dofs = model.support_dofs[b]
            if not dofs.size:
                continue
            grad[idx[:, None], dofs[None, :]] += np.einsum("nid,kin->kdn", Sw[:, :, dofs], W)
    return kin, lengths, grad


def _convention(convention) -> str:
    if convention not in ("exact", "opensim"):
        raise DataError(
            f"Expected `convention` to be 'exact' (-dl/dq) or 'opensim' (OpenSim's "
            f"computeMomentArm), got {convention!r:.40}"
        )
    return convention


def _out(kin, x: np.ndarray) -> np.ndarray:
    """(k..., N) -> (batch..., k...)."""
    return np.moveaxis(x, -1, 0).reshape(kin.batch_shape + x.shape[:-1])


# ----------------------------------------------------------------------------
# public functions
# ----------------------------------------------------------------------------


def muscle_lengths(model: Model, q, *, muscles=None, kin=None) -> np.ndarray:
    """Musculotendon path lengths of the model's muscles.

    Parameters
    ----------
    model : Model
        With ``model.muscles`` (and ``model.wrap_objects`` they wrap over).
    q : array_like, shape (..., nq), or None with ``kin``
        Generalized coordinates; leading axes are frames.
    muscles : sequence of str, optional
        Names of the muscles, in the order wanted; None (default): all of
        ``model.muscles``, in model order.
    kin : Kinematics, optional
        A state from :func:`ahbm.kinematics.forward_kinematics` to reuse.

    Returns
    -------
    ndarray, shape (..., n_muscles)
        Path lengths, m (OpenSim's GeometryPath length; see the module notes).

    Raises
    ------
    DataError
        ``q`` of the wrong shape or not finite, or an unknown muscle name.
    ModelError
        ``model`` is not a Model.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      model="PathActuator", max_isometric_force=1.0,
    ...                      optimal_fiber_length=float("nan"),
    ...                      tendon_slack_length=float("nan"))]
    >>> muscle_lengths(m, [[0.0], [0.2]]).tolist()
    [[0.1], [0.30000000000000004]]
    """
    kin, lengths, _ = _compute(model, q, muscles, kin, need_grad=False)
    return _out(kin, lengths)


def moment_arms(
    model: Model, q, *, muscles=None, kin=None, convention="exact", return_lengths=False
):
    """Moment arms ``r = -∂l/∂q`` of the muscles about every generalized velocity.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    muscles : sequence of str, optional
        As :func:`muscle_lengths`.
    kin : Kinematics, optional
        A state from :func:`ahbm.kinematics.forward_kinematics` (made with any
        arguments; the motion columns are computed if it lacks them).
    convention : {"exact", "opensim"}, optional
        ``"exact"`` (default): ``-∂l/∂q`` of the path length, chained wraps
        included. ``"opensim"``: OpenSim's ``GeometryPath.computeMomentArm``
        (a unit tension along each straight segment between points on
        different bodies, the tangent points fixed on their wrap objects),
        which differs from ``-∂l/∂q`` on wrapping paths.
    return_lengths : bool, optional
        Also return the path lengths (:func:`muscle_lengths`), computed in the
        same pass.

    Returns
    -------
    ndarray, shape (..., n_muscles, nv)
        m per unit of generalized velocity (m/rad for rotations,
        dimensionless for translations). A muscle tension ``F`` (N) exerts
        the generalized forces ``r[..., i, :] * F``.
    lengths : ndarray, shape (..., n_muscles)
        With ``return_lengths``: the path lengths, m.

    Raises
    ------
    DataError
        Bad ``q``, muscle names or ``convention``.

    Notes
    -----
    ``∂l/∂q = Σ_b S_b^T W_b`` over the bodies the path touches, with ``W_b``
    the world wrench ``Σ [p × g; g]`` of the body's path points and wrap
    objects (``g`` the derivative of the length with respect to each point),
    ``S_b`` the world motion columns of the body's supporting joints, plus
    ``g · R_b f'(q_c)`` for the moving points. Frames with chained wraps take
    ``W_b`` from differences of the path length under rigid motions of the
    body (see the module notes); they cost about 50 path evaluations each.
    Tested against differences of the lengths in ``q`` and against OpenSim.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("elbow")
    >>> _ = m.add_body("forearm", "ground", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0,
    ...                inertia=np.eye(3) * 0.01)
    >>> m.muscles = [Muscle("flexor", (PathPoint("o", "ground", (0.0, 0.3, 0.0)),
    ...                                PathPoint("i", "forearm", (0.05, 0.0, 0.0))),
    ...                      max_isometric_force=500.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.15)]
    >>> float(moment_arms(m, [0.0])[0, 0].round(4))  # 0.05 * 0.3 / |(0.05, -0.3)|
    0.0493
    """
    kin, lengths, grad = _compute(model, q, muscles, kin, need_grad=True,
                                  convention=_convention(convention))  # fmt: skip
    if return_lengths:
        return _out(kin, -grad), _out(kin, lengths)
    return _out(kin, -grad)


def lengthening_speeds(
    model: Model, q, qd, *, muscles=None, kin=None, convention="exact"
) -> np.ndarray:
    """Lengthening speeds ``dl/dt = (∂l/∂q) qd`` of the muscle paths.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
        Generalized velocities (None without ``kin``: zeros).
    muscles : sequence of str, optional
        As :func:`muscle_lengths`.
    kin : Kinematics, optional
        A state with velocities from :func:`ahbm.kinematics.forward_kinematics`.
    convention : {"exact", "opensim"}, optional
        As :func:`moment_arms`: the speed is ``-r qd`` with the moment arms of
        that convention (``"opensim"`` agrees with OpenSim's
        ``getLengtheningSpeed`` except on chained wraps, where OpenSim's speed
        is not its own ``-r qd``).

    Returns
    -------
    ndarray, shape (..., n_muscles)
        m/s, positive when the path lengthens (``= -r qd`` with the moment
        arms of :func:`moment_arms`).

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      max_isometric_force=1.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.1)]
    >>> lengthening_speeds(m, [0.0], [2.0]).tolist()
    [2.0]
    """
    kin, _, grad = _compute(model, q, muscles, kin, need_grad=True, qd=qd, needs_qd=True,
                            convention=_convention(convention))  # fmt: skip
    qdb = _st.qd_bl(kin)  # (nv, N)
    return _out(kin, np.einsum("mvN,vN->mN", grad, qdb))


def path_loads(model: Model, q, *, muscles=None, kin=None) -> tuple[np.ndarray, np.ndarray]:
    """Loads that a unit tension in each muscle path applies to the bodies (and coordinates).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    muscles : sequence of str, optional
        As :func:`muscle_lengths`.
    kin : Kinematics, optional

    Returns
    -------
    body_loads : ndarray, shape (..., n_muscles, n_bodies, 6)
        World spatial force ``[moment about the world origin; force]`` (N·m, N per
        newton of tension) on each body: the tension pulls each path point along its
        segments, and a wrap object's body takes the load of the path pressing on it
        (the ``f_ext`` convention of :func:`ahbm.dynamics.rnea`,
        ``f_ext_frame="world"``).
    coordinate_forces : ndarray, shape (..., n_muscles, nv)
        Generalized forces per newton of tension that are not body loads: a moving
        path point's location depends on a coordinate, and the tension does work
        along it (OpenSim applies it as a mobility force). Zero without moving points.

    Notes
    -----
    ``Σ_b J_bᵀ body_loads[b] + coordinate_forces = r`` (the moment arms of
    :func:`moment_arms`), with ``J_b`` the world spatial Jacobian of body ``b``.
    The loads are ``-[p × g; g]`` summed over each body's path points and wrap
    tangent points (``g = ∂l/∂p``); a wrap between two path points loads its
    object with ``[p × g_p + s × g_s; g_p + g_s]`` (the wrapped length depends
    only on the end points seen from the object).

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      max_isometric_force=1.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.1)]
    >>> body, coord = path_loads(m, [0.0])
    >>> body[0, 0].tolist()  # pulls the block toward the origin
    [0.0, 0.0, 0.0, -1.0, 0.0, 0.0]
    """
    loads: dict = {}
    kin, _, _ = _compute(model, q, muscles, kin, need_grad=True, loads=loads)
    return _out(kin, 0.0 - loads["body"]), _out(kin, 0.0 - loads["coordinate"])


def path_points(model: Model, q, muscle: str, *, wrap_points=False, kin=None) -> np.ndarray:
    """World positions of one muscle's path points (for drawing).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    muscle : str
        Muscle name.
    wrap_points : bool, optional
        False (default): the muscle's points, in the order of
        ``Muscle.points``. True: the path as it is drawn, frame by frame: the
        active points with the wrap tangent points inserted where the path
        wraps, in path order, NaN rows after the end.
    kin : Kinematics, optional

    Returns
    -------
    ndarray, shape (..., n_points, 3) or (..., n_points + 2 n_wraps, 3)
        World positions, m. Without ``wrap_points``: NaN where a conditional
        point is inactive. With it: consecutive rows are the straight segments
        of the path, except from a wrap's first tangent point to its second,
        which the path joins over the wrap surface.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.muscles import Muscle, PathPoint
    >>> m = Model("slider")
    >>> _ = m.add_body("block", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> m.muscles = [Muscle("spring", (PathPoint("o", "ground", (0, 0, 0)),
    ...                                PathPoint("i", "block", (0.1, 0, 0))),
    ...                      max_isometric_force=1.0, optimal_fiber_length=0.1,
    ...                      tendon_slack_length=0.1)]
    >>> path_points(m, [0.5], "spring").tolist()
    [[0.0, 0.0, 0.0], [0.6, 0.0, 0.0]]
    """
    if not isinstance(muscle, str):
        raise DataError(f"Expected `muscle` to be a muscle name (str), got {muscle!r:.60}")
    known = [m.name for m in _model_muscles(model)]
    if muscle not in known:
        raise DataError(
            f"`muscle`: {muscle!r:.60} is not a muscle of model '{model.name}' "
            f"(muscles: {known[:20]}{' ...' if len(known) > 20 else ''})"
        )
    if not isinstance(wrap_points, (bool, np.bool_)):
        raise DataError(f"Expected `wrap_points` to be True or False, got {wrap_points!r:.40}")
    names = (muscle,)
    kin = _st.resolve(model, kin, q)
    (mp,) = _plan(model, names)
    ((pts, active, _),) = _world_points(kin, [mp], False)
    if not wrap_points:
        if active is not None:
            pts = np.where(active[:, None, :], pts, np.nan)
        return _out(kin, pts)
    path = _Path(pts, active, len(mp.wraps))
    if mp.wraps:
        _apply_wraps(kin, path, mp.wraps, [_wrap_frame(kin, wp) for wp in mp.wraps])
    order = path.order  # (L, N) node ids in path order, -1 after the end
    X = path.X[np.maximum(order, 0), :, path.cols].transpose(0, 2, 1)  # (L, 3, N)
    X = np.where((order >= 0)[:, None, :], X, np.nan)
    return _out(kin, X)
