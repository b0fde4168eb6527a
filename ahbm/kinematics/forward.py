"""Forward kinematics of multibody trees: poses, velocities, accelerations,
point kinematics, Jacobians, centre of mass, momentum and energies.

Every function is vectorized over leading batch axes of ``q`` (a whole trial
in one call) and loops over bodies only.

Conventions
-----------
* Body spatial velocities and accelerations are *body* (local) spatial
  vectors, angular part first: ``v_i = [ω; v_O]`` with ``ω`` the angular
  velocity and ``v_O`` the velocity of the point at the body-frame origin,
  both in body coordinates (Featherstone 2008 §2; Pinocchio ``LOCAL``). The
  spatial acceleration is the time derivative of these body coordinates; the
  classical acceleration of the body origin is ``a_O + ω × v_O``.
* Accelerations never include gravity.
* Points and bodies: ``body`` is a body name or index, ``point`` a position
  in the body frame (m).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ahbm._validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import (
    Model,
    _check_quaternions,
    check_q,
    check_v,
    joint_kinematics,
    t_cross,
    t_mm,
    t_mtv,
    t_mv,
)

__all__ = [
    "Kinematics",
    "forward_kinematics",
    "point_position",
    "point_velocity",
    "point_acceleration",
    "body_jacobian",
    "point_jacobian",
    "jacobian_dot_times_qd",
    "center_of_mass",
    "com_velocity",
    "com_jacobian",
    "momentum",
    "kinetic_energy",
    "potential_energy",
]

_FRAMES = ("local", "world", "local_world_aligned")


class Kinematics(NamedTuple):
    """Result of :func:`forward_kinematics`.

    Attributes
    ----------
    transforms : ndarray, shape (..., n_bodies, 4, 4)
        World pose of each body frame (``world_T_body``).
    velocities : ndarray, shape (..., n_bodies, 6) or None
        Body spatial velocities ``[ω; v_O]`` in body coordinates.
    accelerations : ndarray, shape (..., n_bodies, 6) or None
        Body spatial accelerations in body coordinates (no gravity).
    """

    transforms: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None


# ----------------------------------------------------------------------------
# internal machinery (shared with ahbm.dynamics). Layout is "batch last":
# q (nq, N), vectors (3, N), rotations (3, 3, N), spatial vectors (6, N); a
# constant may keep its small shape ((3, 3), (3, 1), (6, k)) and broadcast.
# ----------------------------------------------------------------------------


def prepare(model: Model, q, *vels, names=("qd", "qdd"), transpose=True):
    """Validate q (..., nq) and velocity-like arrays (..., nv); flatten batch axes.

    Returns (batch_shape, q (nq, N), [arrays (nv, N) or None ...]); with
    ``transpose=False`` the arrays stay batch-first: q (N, nq), arrays (N, nv).
    """
    if not isinstance(model, Model):
        raise ModelError(f"expected a Model as first argument, got {type(model).__name__}")
    q = check_q(model, q)
    arrs = [
        None if v is None else check_v(model, v, n)
        for v, n in zip(vels, names[: len(vels)], strict=True)
    ]
    shapes = [q.shape[:-1]] + [a.shape[:-1] for a in arrs if a is not None]
    try:
        # equal shapes (the usual case) need no broadcasting rules
        batch = (
            shapes[0] if shapes.count(shapes[0]) == len(shapes) else np.broadcast_shapes(*shapes)
        )
    except ValueError as err:
        raise DataError(
            f"batch shapes of {('q',) + tuple(names[: len(vels)])} do not broadcast: {shapes}"
        ) from err
    N = math.prod(batch)

    def batch_last(x, size):
        if x.shape[:-1] != batch:
            x = np.broadcast_to(x, batch + (size,))
        x = x.reshape(N, size)
        if not transpose:
            return x
        out = np.empty((size, N))
        out[...] = x.T
        return out

    qf = batch_last(q, model.nq)
    _check_quaternions(model, qf.T if transpose else qf)
    out = [None if a is None else batch_last(a, model.nv) for a in arrs]
    return batch, qf, out


def joint_pass(model: Model, q, qd=None):
    """Per-body joint transforms and motion (lists over bodies), batch last."""
    return [joint_kinematics(model, i, q, qd) for i in range(model.n_bodies)]


def world_poses(model: Model, joints):
    """World rotations (3, 3[, N]) and origins (3, N or 1) of all bodies."""
    Rw, pw = [], []
    for i, (R, p, *_) in enumerate(joints):
        lam = model.parent[i]
        if lam < 0:
            Rw.append(R)
            pw.append(p)
        else:
            Rw.append(t_mm(Rw[lam], R))
            pw.append(pw[lam] + t_mv(Rw[lam], p))
    return Rw, pw


def motion_to_child(R, p, m):
    """Transform motion vectors (6, N) from parent to child coordinates."""
    w = m[:3]
    out = np.empty((6,) + np.broadcast_shapes(m.shape[1:], p.shape[1:], R.shape[2:]))
    out[:3] = t_mtv(R, w)
    out[3:] = t_mtv(R, m[3:] + t_cross(w, p))
    return out


def force_to_parent(R, p, f):
    """Transform force vectors (6, N) [n; f] from child to parent coordinates."""
    F = t_mv(R, f[3:])
    out = np.empty((6,) + np.broadcast_shapes(F.shape[1:], p.shape[1:]))
    out[:3] = t_mv(R, f[:3])
    out[:3] += t_cross(p, F)
    out[3:] = F
    return out


def force_to_child(R, p, f):
    """Transform force vectors (6, N) [n; f] from parent to child coordinates."""
    out = np.empty((6,) + np.broadcast_shapes(f.shape[1:], p.shape[1:], R.shape[2:]))
    out[3:] = t_mtv(R, f[3:])
    out[:3] = t_mtv(R, f[:3] - t_cross(p, f[3:]))
    return out


def motion_cross(v, m):
    """Spatial motion cross product v ×m m for (6, ...) arrays (batch last)."""
    out = np.empty(np.broadcast_shapes(v.shape, m.shape))
    out[:3] = t_cross(v[:3], m[:3])
    out[3:] = t_cross(v[:3], m[3:])
    out[3:] += t_cross(v[3:], m[:3])
    return out


def force_cross(v, f):
    """Spatial force cross product v ×f f for (6, ...) arrays (batch last)."""
    out = np.empty(np.broadcast_shapes(v.shape, f.shape))
    out[:3] = t_cross(v[:3], f[:3])
    out[:3] += t_cross(v[3:], f[3:])
    out[3:] = t_cross(v[:3], f[3:])
    return out


def apply_S(S, x):
    """S @ x for S (6, k) or (6, k, N) and x (k, N) -> (6, N)."""
    if S.ndim == 2:
        if S.shape[1] == 1:
            return S * x[0]
        return S @ x
    out = S[:, 0] * x[0]
    for c in range(1, S.shape[1]):
        out += S[:, c] * x[c]
    return out


def apply_ST(S, f):
    """S^T @ f for S (6, k) or (6, k, N) and f (6, N) -> (k, N)."""
    if S.ndim == 2:
        return S.T @ f
    return np.einsum("ikn,in->kn", S, f)


def S_columns(S, N):
    """Columns of S as a list of (6, N or 1) arrays."""
    if S.ndim == 2:
        return [S[:, c : c + 1] for c in range(S.shape[1])]
    return [S[:, c] for c in range(S.shape[1])]


def velocity_pass(model: Model, joints, qd, qdd=None):
    """Body velocities and accelerations (no gravity), lists of (6, N)."""
    n = model.n_bodies
    v = [None] * n
    a = [None] * n
    N = qd.shape[1]
    for i in range(n):
        R, p, S, vJ, cJ = joints[i]
        lam = model.parent[i]
        if lam < 0:
            v[i] = vJ.copy()
            ai = np.zeros((6, N)) if cJ is None else cJ.copy()
        else:
            v[i] = motion_to_child(R, p, v[lam])
            v[i] += vJ
            ai = motion_to_child(R, p, a[lam])
            ai += motion_cross(v[i], vJ)
            if cJ is not None:
                ai += cJ
        if qdd is not None and model.joint_nv[i]:
            k = model.v_index[i]
            ai += apply_S(S, qdd[k : k + model.joint_nv[i]])
        a[i] = ai
    return v, a


def _col(x, N):
    """(3, N or 1) -> (N, 3)."""
    return np.broadcast_to(x, (x.shape[0], N)).T


def _rot_aos(R, N):
    """(3, 3[, N]) -> (N, 3, 3)."""
    if R.ndim == 2:
        return np.broadcast_to(R, (N, 3, 3))
    return np.moveaxis(R, -1, 0)


def _body_and_point(model, body, point, batch, N):
    """Body index and the point as (3, N or 1)."""
    b = model.body_index(body)
    r = as_float_array(point, "point")
    check_trailing_shape(r, (3,), "point")
    if r.ndim == 1:
        return b, r[:, None]
    try:
        r = np.broadcast_to(r, batch + (3,)).reshape(N, 3)
    except ValueError as err:
        raise DataError(
            f"batch shape of `point` {r.shape[:-1]} does not broadcast to that of q {batch}"
        ) from err
    return b, np.ascontiguousarray(r.T)


# ----------------------------------------------------------------------------
# public functions
# ----------------------------------------------------------------------------


def forward_kinematics(model: Model, q, qd=None, qdd=None) -> Kinematics:
    """Poses (and velocities, accelerations) of all bodies.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Generalized coordinates.
    qd : array_like, shape (..., nv), optional
        Generalized velocities.
    qdd : array_like, shape (..., nv), optional
        Generalized accelerations (requires ``qd``).

    Returns
    -------
    Kinematics
        ``transforms`` (..., n_bodies, 4, 4) world poses; ``velocities`` and
        ``accelerations`` (..., n_bodies, 6) body spatial vectors (None when
        ``qd`` / ``qdd`` are not given).

    Notes
    -----
    Recursive forward kinematics (Featherstone 2008, §4.3; AHBM §2.2):
    ``0_T_i = 0_T_λ(i) λ_T_i(q_i)``,
    ``v_i = i_X_λ v_λ + S_i q̇_i``,
    ``a_i = i_X_λ a_λ + S_i q̈_i + c_J,i + v_i × S_i q̇_i``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> kin = forward_kinematics(m, np.zeros((10, m.nq)))
    >>> kin.transforms.shape
    (10, 2, 4, 4)
    """
    if qdd is not None and qd is None:
        raise DataError("`qdd` given without `qd`; pass the velocities too")
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd)
    joints = joint_pass(model, qf, qdf)
    Rw, pw = world_poses(model, joints)
    N = qf.shape[1]
    n = model.n_bodies
    T = np.zeros((N, n, 4, 4))
    for i in range(n):
        T[:, i, :3, :3] = _rot_aos(Rw[i], N)
        T[:, i, :3, 3] = _col(pw[i], N)
    T[:, :, 3, 3] = 1.0
    vel = acc = None
    if qdf is not None:
        v, a = velocity_pass(model, joints, qdf, qddf)
        vel = np.zeros((N, n, 6))
        for i in range(n):
            vel[:, i] = v[i].T
        vel = vel.reshape(batch + (n, 6))
        if qddf is not None:
            acc = np.zeros((N, n, 6))
            for i in range(n):
                acc[:, i] = a[i].T
            acc = acc.reshape(batch + (n, 6))
    return Kinematics(T.reshape(batch + (n, 4, 4)), vel, acc)


def point_position(model: Model, q, body, point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """World position of a point fixed in a body.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    body : str or int
    point : array_like, shape (3,) or (..., 3)
        Point in the body frame, m.

    Returns
    -------
    ndarray, shape (..., 3)
        ``p = 0_p_i + 0_R_i r``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> point_position(m, np.zeros(m.nq), 2, [0, 0, -1])
    array([ 0.,  0., -3.])
    """
    batch, qf, _ = prepare(model, q)
    N = qf.shape[1]
    b, r = _body_and_point(model, body, point, batch, N)
    Rw, pw = world_poses(model, joint_pass(model, qf))
    return _col(pw[b] + t_mv(Rw[b], r), N).reshape(batch + (3,))


def point_velocity(model: Model, q, qd, body, point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """World velocity of a point fixed in a body, m/s, shape (..., 3).

    Notes
    -----
    ``ṗ = 0_R_i (v_O + ω × r)`` with the body spatial velocity ``[ω; v_O]``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> qd = np.zeros(m.nv); qd[1] = 1.0  # rate about the y axis of the first joint
    >>> point_velocity(m, np.zeros(m.nq), qd, 0, [0, 0, -1]).round(12)
    array([-1.,  0.,  0.])
    """
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",))
    N = qf.shape[1]
    b, r = _body_and_point(model, body, point, batch, N)
    joints = joint_pass(model, qf, qdf)
    Rw, _ = world_poses(model, joints)
    v, _ = velocity_pass(model, joints, qdf)
    vb = v[b]
    return _col(t_mv(Rw[b], vb[3:] + t_cross(vb[:3], r)), N).reshape(batch + (3,))


def point_acceleration(model: Model, q, qd, qdd, body, point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """World (classical) acceleration of a point fixed in a body, m/s^2, shape (..., 3).

    Notes
    -----
    ``p̈ = 0_R_i (a_O + ω̇ × r + ω × (v_O + ω × r))`` with the body spatial
    acceleration ``[ω̇; a_O]`` (Featherstone 2008, §2.11). Gravity is not included.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> qd = np.zeros(m.nv); qd[1] = 1.0
    >>> point_acceleration(m, np.zeros(m.nq), qd, np.zeros(m.nv), 0, [0, 0, -1]).round(12)
    array([0., 0., 1.])
    """
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd)
    N = qf.shape[1]
    b, r = _body_and_point(model, body, point, batch, N)
    joints = joint_pass(model, qf, qdf)
    Rw, _ = world_poses(model, joints)
    v, a = velocity_pass(model, joints, qdf, qddf)
    vb, ab = v[b], a[b]
    w = vb[:3]
    acc = ab[3:] + t_cross(ab[:3], r) + t_cross(w, vb[3:] + t_cross(w, r))
    return _col(t_mv(Rw[b], acc), N).reshape(batch + (3,))


def jacobian_dot_times_qd(model: Model, q, qd, body, point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """The velocity-product term ``J̇ q̇`` of a body point (the "contact Hessian" γ).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    body : str or int
    point : array_like, shape (3,)
        Point in the body frame, m.

    Returns
    -------
    ndarray, shape (..., 3)
        World acceleration of the point when ``q̈ = 0``, so that
        ``p̈ = J q̈ + J̇ q̇`` with ``J`` from :func:`point_jacobian`.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> jacobian_dot_times_qd(m, np.zeros(m.nq), np.zeros(m.nv), 1).shape
    (3,)
    """
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",))
    zeros = np.zeros(batch + (model.nv,))
    return point_acceleration(model, q, qd, zeros, body, point)


def _world_columns(Rw, pw, S, N):
    """World-frame (about the world origin) columns 0_X_j S_j, list of (6, N)."""
    cols = []
    for col in S_columns(S, N):
        w = t_mv(Rw, col[:3])
        lin = t_mv(Rw, col[3:]) + t_cross(pw, w)
        out = np.empty((6, N))
        out[:3] = w
        out[3:] = lin
        cols.append(out)
    return cols


def _jacobian_world(model: Model, qf, b):
    """World-frame (about the world origin) spatial Jacobian (6, nv, N) of body b."""
    joints = joint_pass(model, qf)
    Rw, pw = world_poses(model, joints)
    N = qf.shape[1]
    J = np.zeros((6, model.nv, N))
    for j in model.supports[b]:
        k = model.v_index[j]
        for c, col in enumerate(_world_columns(Rw[j], pw[j], joints[j][2], N)):
            J[:, k + c] = col
    return J, Rw, pw


def body_jacobian(model: Model, q, body, *, frame: str = "local") -> np.ndarray:
    """Spatial Jacobian of a body: ``v_body = J q̇``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    body : str or int
    frame : {"local", "world", "local_world_aligned"}
        ``"local"``: body spatial velocity in body coordinates; ``"world"``:
        spatial velocity in world coordinates, linear part = velocity of the
        body point at the world origin; ``"local_world_aligned"``: angular
        velocity and velocity of the body origin, in world coordinates
        (same meanings as Pinocchio's reference frames).

    Returns
    -------
    ndarray, shape (..., 6, nv)
        Angular rows first.

    Notes
    -----
    Column block of joint ``j`` on the path to the body: ``0_X_j S_j``
    (Featherstone 2008, §8.1).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> body_jacobian(m, np.zeros(m.nq), 1).shape
    (6, 4)
    """
    if frame not in _FRAMES:
        raise DataError(f"`frame` must be one of {_FRAMES}, got {frame!r}")
    batch, qf, _ = prepare(model, q)
    b = model.body_index(body)
    J, Rw, pw = _jacobian_world(model, qf, b)
    if frame != "world":
        R, p = Rw[b], pw[b]
        for c in range(model.nv):
            J[3:, c] -= t_cross(p, J[:3, c])
            if frame == "local":
                J[:3, c] = t_mtv(R, J[:3, c])
                J[3:, c] = t_mtv(R, J[3:, c])
    return np.moveaxis(J, -1, 0).reshape(batch + (6, model.nv))


def point_jacobian(model: Model, q, body, point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Jacobian of the world position of a body point: ``ṗ = J q̇``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    body : str or int
    point : array_like, shape (3,)
        Point in the body frame, m.

    Returns
    -------
    ndarray, shape (..., 3, nv)

    Notes
    -----
    ``J_p = J_v − [p]× J_ω`` from the world spatial Jacobian, with ``p`` the
    world position of the point.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> point_jacobian(m, np.zeros(m.nq), 1, [0, 0, -1]).shape
    (3, 4)
    """
    batch, qf, _ = prepare(model, q)
    N = qf.shape[1]
    b, r = _body_and_point(model, body, point, batch, N)
    J, Rw, pw = _jacobian_world(model, qf, b)
    pt = pw[b] + t_mv(Rw[b], r)
    out = np.empty((3, model.nv, N))
    for c in range(model.nv):
        out[:, c] = J[3:, c] - t_cross(pt, J[:3, c])
    return np.moveaxis(out, -1, 0).reshape(batch + (3, model.nv))


def _com_parts(model, Rw, pw):
    m = model.masses
    M = m.sum()
    if M <= 0:
        raise ModelError(f"model '{model.name}' has zero total mass; no centre of mass")
    c = sum(m[i] * (pw[i] + t_mv(Rw[i], model.coms[i][:, None])) for i in range(model.n_bodies))
    return c / M, M


def center_of_mass(model: Model, q) -> np.ndarray:
    """Whole-body centre of mass in the world frame, m.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    ndarray, shape (..., 3)
        ``c = Σ m_i c_i / Σ m_i``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> center_of_mass(m, np.zeros(m.nq))
    array([ 0.,  0., -2.])
    """
    batch, qf, _ = prepare(model, q)
    Rw, pw = world_poses(model, joint_pass(model, qf))
    c, _ = _com_parts(model, Rw, pw)
    return _col(c, qf.shape[1]).reshape(batch + (3,))


def com_velocity(model: Model, q, qd) -> np.ndarray:
    """Velocity of the whole-body centre of mass, m/s, shape (..., 3).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> com_velocity(m, np.zeros(m.nq), np.zeros(m.nv))
    array([0., 0., 0.])
    """
    h = momentum(model, q, qd)
    return h[..., 3:] / model.total_mass


def com_jacobian(model: Model, q) -> np.ndarray:
    """Jacobian of the centre of mass: ``ċ = J_c q̇``, shape (..., 3, nv).

    Notes
    -----
    ``J_c = Σ m_i J_p(c_i) / Σ m_i`` with the point Jacobians of the body COMs.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> com_jacobian(m, np.zeros(m.nq)).shape
    (3, 4)
    """
    batch, qf, _ = prepare(model, q)
    joints = joint_pass(model, qf)
    Rw, pw = world_poses(model, joints)
    c, M = _com_parts(model, Rw, pw)
    N = qf.shape[1]
    # subtree sums of masses and of first mass moments m_k c_k (world)
    n = model.n_bodies
    msum = model.masses.copy()
    mc = [model.masses[i] * (pw[i] + t_mv(Rw[i], model.coms[i][:, None])) for i in range(n)]
    for i in range(n - 1, -1, -1):
        lam = model.parent[i]
        if lam >= 0:
            msum[lam] += msum[i]
            mc[lam] = mc[lam] + mc[i]
    Jc = np.zeros((3, model.nv, N))
    for j in range(n):
        k = model.v_index[j]
        for cidx, col in enumerate(_world_columns(Rw[j], pw[j], joints[j][2], N)):
            # Σ_subtree m_k (v + ω × c_k) = msum v + ω × Σ m_k c_k
            Jc[:, k + cidx] = msum[j] * col[3:] + t_cross(col[:3], mc[j])
    return np.moveaxis(Jc / M, -1, 0).reshape(batch + (3, model.nv))


def momentum(model: Model, q, qd) -> np.ndarray:
    """Centroidal momentum: angular momentum about the COM and linear momentum.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)

    Returns
    -------
    ndarray, shape (..., 6)
        ``[k_G; p]``: angular momentum about the whole-body COM (N m s) and
        linear momentum (kg m/s), world coordinates (angular first, like all
        spatial vectors in ahbm; Pinocchio's ``hg`` stores linear first).

    Notes
    -----
    ``p = Σ m_i ċ_i``, ``k_G = Σ (R_i I_i R_iᵀ ω_i + m_i (c_i − c) × ċ_i)``
    (Orin, Goswami & Lee 2013).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> momentum(m, np.zeros(m.nq), np.ones(m.nv)).shape
    (6,)
    """
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",))
    joints = joint_pass(model, qf, qdf)
    Rw, pw = world_poses(model, joints)
    v, _ = velocity_pass(model, joints, qdf)
    c, _ = _com_parts(model, Rw, pw)
    N = qf.shape[1]
    h = np.zeros((6, N))
    for i in range(model.n_bodies):
        m = model.masses[i]
        ci = model.coms[i][:, None]
        w = v[i][:3]
        vc = v[i][3:] + t_cross(w, ci)  # COM velocity, body coordinates
        Lc = model.inertias[i] @ w  # about the body COM, body coordinates
        pos = pw[i] + t_mv(Rw[i], ci)
        vcw = t_mv(Rw[i], vc)
        h[3:] += m * vcw
        h[:3] += t_mv(Rw[i], Lc) + m * t_cross(pos - c, vcw)
    return h.T.reshape(batch + (6,))


def kinetic_energy(model: Model, q, qd) -> np.ndarray:
    """Kinetic energy ``T = ½ Σ v_iᵀ I_i v_i``, J, shape (...).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> float(kinetic_energy(m, np.zeros(m.nq), np.zeros(m.nv)))
    0.0
    """
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",))
    joints = joint_pass(model, qf, qdf)
    v, _ = velocity_pass(model, joints, qdf)
    T = np.zeros(qf.shape[1])
    for i in range(model.n_bodies):
        Iv = model.spatial_inertias[i] @ v[i]
        T += 0.5 * np.sum(v[i] * Iv, axis=0)
    return T.reshape(batch)


def potential_energy(model: Model, q) -> np.ndarray:
    """Gravitational potential energy ``V = −Σ m_i g · c_i``, J, shape (...).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> round(float(potential_energy(m, np.zeros(m.nq))), 6)
    -5.886
    """
    batch, qf, _ = prepare(model, q)
    Rw, pw = world_poses(model, joint_pass(model, qf))
    V = np.zeros(qf.shape[1])
    for i in range(model.n_bodies):
        pos = pw[i] + t_mv(Rw[i], model.coms[i][:, None])
        V -= model.masses[i] * (model.gravity @ pos)
    return V.reshape(batch)
