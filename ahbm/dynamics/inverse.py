"""Inverse dynamics of multibody trees: the recursive Newton-Euler algorithm.

All functions take ``(model, q, qd, qdd)`` in Pinocchio's argument order and
are vectorized over leading batch axes (one call for a whole trial).

External forces
---------------
``f_ext`` has shape ``(..., n_bodies, 6)``: one spatial force ``[n; f]``
(moment first, N m; then force, N) applied to each body. With
``f_ext_frame="world"`` (default) both parts are in world coordinates and the
moment is taken about the world origin: a force ``F`` acting at the world
point ``r`` is ``[r × F; F]``. With ``f_ext_frame="local"`` they are in body
coordinates and the moment is about the body-frame origin (Pinocchio's
``fext`` convention).
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import kernels as _kernels
from ahbm._validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError
from ahbm.kinematics.forward import (
    apply_S,
    apply_ST,
    force_cross,
    force_to_child,
    force_to_parent,
    joint_pass,
    motion_cross,
    motion_to_child,
    prepare,
    world_poses,
)
from ahbm.kinematics.tree import (
    EULER,
    FIXED,
    FREE,
    FREE_EULER,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    Model,
    _skew,
    joint_kinematics,
    t_cross,
    t_mtv,
)

__all__ = ["rnea", "nonlinear_effects", "gravity_torques", "inverse_dynamics_residual"]

_EXT_FRAMES = ("world", "local")


def external_forces_local(model: Model, f_ext, batch, joints, frame, q=None):
    """Validate f_ext (..., n_bodies, 6); return a list of (6, N) body-frame forces."""
    f = _check_f_ext(model, f_ext, batch, frame)
    fl = [np.ascontiguousarray(f[:, i, :].T) for i in range(model.n_bodies)]
    if frame == "local":
        return fl
    if joints is None:
        joints = joint_pass(model, q)
    Rw, pw = world_poses(model, joints)
    return [force_to_child(Rw[i], pw[i], fl[i]) for i in range(model.n_bodies)]


def _body_force(model: Model, i, v, a):
    """Net spatial force I a + v ×* I v of body i (body coordinates), (6, N).

    Newton-Euler about the COM (equivalent to the spatial form):
    ``f = m (a_O + α × c + ω × v_c)``, ``n = I_c α + ω × I_c ω + c × f``.
    """
    m = model.masses[i]
    c = model.coms[i][:, None]
    Ic = model.inertias[i]
    al = a[:3]
    out = np.empty(a.shape)
    lin = a[3:] + t_cross(al, c)
    if v is not None:
        w = v[:3]
        vc = v[3:] + t_cross(w, c)
        lin += t_cross(w, vc)
        lin *= m
        ang = Ic @ al
        ang += t_cross(w, Ic @ w)
    else:
        lin *= m
        ang = Ic @ al
    ang += t_cross(c, lin)
    out[:3] = ang
    out[3:] = lin
    return out


def _rnea_flat(model: Model, joints, qd, qdd, fext_local, *, n_frames, gravity=True):
    """Joint-level RNEA in batch-last layout; qd/qdd may be None. Returns tau (nv, N).

    Kept as an independent second coding of the algorithm (the public functions
    use :func:`_rnea_fast`); the tests check that both agree.
    """
    n = model.n_bodies
    N = n_frames
    g = model.gravity[:, None] if gravity else np.zeros((3, 1))
    v = [None] * n
    a = [None] * n
    f = [None] * n
    for i in range(n):
        R, p, S, vJ, cJ = joints[i]
        lam = model.parent[i]
        nv = model.joint_nv[i]
        if lam < 0:
            ai = np.zeros((6, N))
            ai[3:] = -t_mtv(R, g)
            vi = vJ
        else:
            ai = motion_to_child(R, p, a[lam])
            if v[lam] is None:
                vi = vJ
            else:
                vi = motion_to_child(R, p, v[lam])
                vi += vJ
                ai += motion_cross(vi, vJ)
        if cJ is not None:
            ai += cJ
        if qdd is not None and nv:
            k = model.v_index[i]
            ai += apply_S(S, qdd[k : k + nv])
        v[i] = vi
        a[i] = ai
        fi = _body_force(model, i, vi, ai)
        if fext_local is not None:
            fi -= fext_local[i]
        f[i] = fi
    tau = np.zeros((model.nv, N))
    for i in range(n - 1, -1, -1):
        R, p, S, *_ = joints[i]
        k = model.v_index[i]
        nv = model.joint_nv[i]
        if nv:
            tau[k : k + nv] = apply_ST(S, f[i])
        lam = model.parent[i]
        if lam >= 0:
            f[lam] += force_to_parent(R, p, f[i])
    return tau


# ----------------------------------------------------------------------------
# Fast RNEA: every joint is expanded once into a chain of elementary nodes
# (principal-axis or general-axis revolute/prismatic primitives, or a generic
# node for quaternion joints) with massless intermediate nodes, as Pinocchio
# does with composite joints. Principal-axis rotations touch only two rows.
# ----------------------------------------------------------------------------

_FIXED, _RK, _REV, _PK, _PRISM, _GENERIC = range(6)


class _Node:
    __slots__ = (
        "parent", "XT", "XTt", "kind", "k", "sign", "axis", "AA", "PA", "S", "qi", "vi",
        "I6", "body", "gen_X",
    )  # fmt: skip

    def __init__(self, parent, X=None):
        self.parent = parent
        self.set_X(X)
        self.kind = _FIXED
        self.k = self.sign = 0
        self.axis = self.AA = self.PA = self.S = None
        self.qi = self.vi = -1
        self.I6 = None
        self.body = -1
        self.gen_X = None

    def set_X(self, X):
        if X is not None and np.array_equal(X, np.eye(6)):
            X = None
        self.XT = X
        self.XTt = None if X is None else np.ascontiguousarray(X.T)


def _tree_X(E, t):
    """Motion transform from a parent frame to a frame with axes E at origin t."""
    X = np.zeros((6, 6))
    X[:3, :3] = E.T
    X[3:, 3:] = E.T
    X[3:, :3] = -E.T @ _skew(t)
    return X


def _blk(M):
    out = np.zeros((6, 6))
    out[:3, :3] = M
    out[3:, 3:] = M
    return out


def _rnea_plan(model: Model):
    """Compile (once per model) the elementary-node chain used by the fast RNEA.

    Bodies on fixed joints are merged into the node of their parent (their
    inertia is added to it), as Pinocchio does.
    """
    cache = model.__dict__.setdefault("_joint_cache", {})
    if "rnea_plan" in cache:
        return cache["rnea_plan"]
    nodes = []
    last = [None] * model.n_bodies  # node carrying each body's frame (-1: ground)
    up = [None] * model.n_bodies  # X from that node's frame to the body frame (None: same)
    axis_index = {"X": 0, "Y": 1, "Z": 2}
    for i, body in enumerate(model.bodies):
        if body.parent < 0:
            parent, X_up = -1, None
        else:
            parent, X_up = last[body.parent], up[body.parent]
        X_tree = _tree_X(body.rotation, body.position)
        if X_up is not None:
            X_tree = X_tree @ X_up
        code = model.joint_codes[i]
        qi, vi = int(model.q_index[i]), int(model.v_index[i])
        if code == FIXED:
            last[i], up[i] = parent, X_tree
            if parent >= 0:
                node = nodes[parent]
                node.I6 = node.I6 + X_tree.T @ model.spatial_inertias[i] @ X_tree
            continue
        prims = []  # (kind, axis vector or index, q offset, v offset)
        if code == REVOLUTE or code == PRISMATIC:
            prims.append(("r" if code == REVOLUTE else "p", body.joint.axis, qi, vi))
        elif code in (UNIVERSAL, EULER):
            for j, ch in enumerate(body.joint.sequence):
                prims.append(("r", axis_index[ch], qi + j, vi + j))
        elif code == FREE_EULER:
            for j in range(3):
                prims.append(("p", j, qi + j, vi + j))
            for j, ch in enumerate(body.joint.sequence):
                prims.append(("r", axis_index[ch], qi + 3 + j, vi + 3 + j))
        elif code == PLANAR:
            prims += [("p", 0, qi, vi), ("p", 1, qi + 1, vi + 1), ("r", 2, qi + 2, vi + 2)]
        if code in (SPHERICAL, FREE):
            node = _Node(parent)
            node.kind = _GENERIC
            node.gen_X = X_up  # applied before the joint's own transform
            nodes.append(node)
        else:
            for j, (kind, ax, qk, vk) in enumerate(prims):
                node = _Node(parent, X_tree if j == 0 else None)
                if isinstance(ax, (int, np.integer)):
                    vec = np.zeros(3)
                    vec[ax] = 1.0
                else:
                    vec = np.asarray(ax, dtype=float)
                big = int(np.argmax(np.abs(vec)))
                principal = np.count_nonzero(vec) == 1
                if kind == "r":
                    node.kind = _RK if principal else _REV
                else:
                    node.kind = _PK if principal else _PRISM
                node.k = big
                node.sign = float(np.sign(vec[big]))
                node.axis = vec
                node.AA = _blk(-_skew(vec))  # x -> x × axis on both halves
                node.PA = _blk(np.outer(vec, vec))
                S = np.zeros((6, 1))
                if kind == "r":
                    S[:3, 0] = vec
                else:
                    S[3:, 0] = vec
                node.S = S
                node.qi, node.vi = qk, vk
                nodes.append(node)
                parent = len(nodes) - 1
        node = nodes[-1]
        node.body = i
        node.I6 = model.spatial_inertias[i].copy()
        last[i], up[i] = len(nodes) - 1, None
    cache["rnea_plan"] = (nodes, last, up)
    return nodes, last, up


def _rot_T(y, k, c, s):
    """R_k(θ)ᵀ applied to both halves of motion/force vectors y (6, N)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = np.empty(y.shape)
    y6 = y.reshape(2, 3, -1)
    o6 = out.reshape(2, 3, -1)
    yi, yj = y6[:, i], y6[:, j]
    oi, oj = o6[:, i], o6[:, j]
    np.multiply(yi, c, out=oi)
    oi += s * yj
    np.multiply(yj, c, out=oj)
    oj -= s * yi
    o6[:, k] = y6[:, k]
    return out


def _rot(y, k, c, s):
    """R_k(θ) applied to both halves of y (6, N)."""
    return _rot_T(y, k, c, -s)


def _rnea_fast(model: Model, q, qd, qdd, fext_local, *, n_frames, gravity=True):
    """Fast RNEA (batch last): q (nq, N), qd/qdd (nv, N) or None. Returns tau (nv, N)."""
    nodes, last, up = _rnea_plan(model)
    N = n_frames
    if fext_local is not None:
        # external forces on bodies merged into a node act on that node
        fx = [None] * len(nodes)
        for b in range(model.n_bodies):
            nd_i = last[b]
            if nd_i < 0:
                continue
            fb = fext_local[b] if up[b] is None else up[b].T @ fext_local[b]
            fx[nd_i] = fb if fx[nd_i] is None else fx[nd_i] + fb
    g = model.gravity if gravity else np.zeros(3)
    a0 = np.zeros((6, 1))
    a0[3:, 0] = -g
    m = len(nodes)
    v = [None] * m
    a = [None] * m
    f = [None] * m
    R_gen = [None] * m
    cs = [None] * m
    for n_, nd in enumerate(nodes):
        lam = nd.parent
        if nd.kind == _GENERIC:
            R, p, S, vJ, cJ = joint_kinematics(model, nd.body, q, qd)
            R_gen[n_] = (R, p, S)
            Xu = nd.gen_X  # node frame -> parent body frame (merged fixed bodies)
            if lam < 0:
                if Xu is None:
                    ai = np.zeros((6, N))
                    ai[3:] = -t_mtv(R, g[:, None])
                else:
                    ai = motion_to_child(R, p, np.broadcast_to(Xu @ a0, (6, N)))
                vi = vJ
            else:
                ai = motion_to_child(R, p, a[lam] if Xu is None else Xu @ a[lam])
                if v[lam] is None:
                    vi = vJ
                else:
                    vi = motion_to_child(R, p, v[lam] if Xu is None else Xu @ v[lam])
                    vi += vJ
                    ai += motion_cross(vi, vJ)
            if cJ is not None:
                ai += cJ
            if qdd is not None:
                k0 = model.v_index[nd.body]
                ai += apply_S(S, qdd[k0 : k0 + model.joint_nv[nd.body]])
        else:
            # constant tree transform, parent -> joint frame
            if lam < 0:
                yv = None
                ya = a0 if nd.XT is None else nd.XT @ a0
            else:
                yv = v[lam] if nd.XT is None or v[lam] is None else nd.XT @ v[lam]
                ya = a[lam] if nd.XT is None else nd.XT @ a[lam]
            kind = nd.kind
            if kind == _FIXED:
                vi = yv
                ai = np.broadcast_to(ya, (6, N)).copy() if ya.shape[1] != N else ya.copy()
            else:
                qrow = q[nd.qi]
                qdr = None if qd is None else qd[nd.vi]
                if kind == _RK or kind == _REV:
                    ang = qrow if nd.sign > 0 or kind == _REV else -qrow
                    c, s_ = np.cos(ang), np.sin(ang)
                    cs[n_] = (c, s_)
                    if kind == _RK:
                        if ya.shape[1] == 1:  # constant (gravity only): rotate, then broadcast
                            ai = _rot_T(np.broadcast_to(ya, (6, N)), nd.k, c, s_)
                        else:
                            ai = _rot_T(ya, nd.k, c, s_)
                        vi = None if yv is None else _rot_T(yv, nd.k, c, s_)
                    else:
                        yab = np.broadcast_to(ya, (6, N))
                        ai = c * yab + s_ * (nd.AA @ yab) + (1.0 - c) * (nd.PA @ yab)
                        vi = (
                            None
                            if yv is None
                            else c * yv + s_ * (nd.AA @ yv) + (1.0 - c) * (nd.PA @ yv)
                        )
                    if qdr is not None:
                        if kind == _RK:
                            qs = qdr * nd.sign
                            if vi is not None:
                                # v × (e_k q̇): rows i, j of both halves
                                i_, j_ = (nd.k + 1) % 3, (nd.k + 2) % 3
                                v6 = vi.reshape(2, 3, -1)
                                a6 = ai.reshape(2, 3, -1)
                                a6[:, i_] += v6[:, j_] * qs
                                a6[:, j_] -= v6[:, i_] * qs
                                vi[nd.k] += qs
                            else:
                                vi = np.zeros((6, N))
                                vi[nd.k] = qs
                        else:
                            vJ = nd.S * qdr
                            if vi is not None:
                                ai += (nd.AA @ vi) * qdr
                                vi += vJ
                            else:
                                vi = vJ
                    if qdd is not None:
                        if kind == _RK:
                            ai[nd.k] += qdd[nd.vi] if nd.sign > 0 else -qdd[nd.vi]
                        else:
                            ai += nd.S * qdd[nd.vi]
                else:  # prismatic: translation d = axis q
                    b = nd.axis
                    yab = np.broadcast_to(ya, (6, N))
                    ai = yab.copy()
                    ai[3:] += (nd.AA[:3, :3] @ yab[:3]) * qrow
                    if yv is not None:
                        vi = yv.copy()
                        vi[3:] += (nd.AA[:3, :3] @ yv[:3]) * qrow
                    else:
                        vi = None
                    if qdr is not None:
                        if vi is not None:
                            ai[3:] += (nd.AA[:3, :3] @ vi[:3]) * qdr
                            vi[3:] += b[:, None] * qdr
                        else:
                            vi = np.zeros((6, N))
                            vi[3:] = b[:, None] * qdr
                    if qdd is not None:
                        ai[3:] += b[:, None] * qdd[nd.vi]
        v[n_] = vi
        a[n_] = ai
        if nd.I6 is not None:
            fi = nd.I6 @ ai
            if vi is not None:
                fi += force_cross(vi, nd.I6 @ vi)
            if fext_local is not None and fx[n_] is not None:
                fi -= fx[n_]
            f[n_] = fi
    tau = np.zeros((model.nv, N))
    for n_ in range(m - 1, -1, -1):
        nd = nodes[n_]
        fi = f[n_]
        if fi is None:
            continue
        kind = nd.kind
        if kind == _GENERIC:
            R, p, S = R_gen[n_]
            k0 = model.v_index[nd.body]
            tau[k0 : k0 + model.joint_nv[nd.body]] = apply_ST(S, fi)
            fp = None
            if nd.parent >= 0:
                fp = force_to_parent(R, p, fi)
                if nd.gen_X is not None:
                    fp = nd.gen_X.T @ fp
        else:
            if kind == _RK:
                tau[nd.vi] = fi[nd.k] * nd.sign
            elif kind == _REV:
                tau[nd.vi] = nd.axis @ fi[:3]
            elif kind in (_PK, _PRISM):
                tau[nd.vi] = nd.axis @ fi[3:]
            if nd.parent < 0:
                continue
            if kind == _RK:
                c, s_ = cs[n_]
                fp = _rot(fi, nd.k, c, s_)
            elif kind == _REV:
                c, s_ = cs[n_]
                fp = c * fi - s_ * (nd.AA @ fi) + (1.0 - c) * (nd.PA @ fi)
            elif kind in (_PK, _PRISM):
                # child -> parent for a translation d = axis q: n' = n + d × f
                fp = fi.copy()
                fp[:3] -= (nd.AA[:3, :3] @ fi[3:]) * q[nd.qi]
            else:
                fp = fi
            if nd.XTt is not None:
                fp = nd.XTt @ fp
        if fp is not None:
            lam = nd.parent
            if f[lam] is None:
                f[lam] = fp
            else:
                f[lam] += fp
    return tau


def _node_forces(model: Model, qf, f, frame):
    """External forces (N, n_bodies, 6) or None -> kernel node forces (N, n_nodes, 6) or None."""
    if f is None:
        return None
    N = qf.shape[0]
    fl = external_forces_local(model, f, (N,), None, frame, np.ascontiguousarray(qf.T))
    return _kernels.node_forces(_kernels.plan(model), fl, N)


def _rnea_batches(model: Model, q, qd, qdd, f_ext, f_ext_frame, *, gravity=True):
    """RNEA of all frames through the compiled kernel (batch first).

    q (N, nq), qd/qdd (N, nv) or None, f_ext (N, n_bodies, 6) or None.
    Returns tau (N, nv).
    """
    fx = _node_forces(model, q, f_ext, f_ext_frame)
    return _kernels.rnea(model, q, qd, qdd, fx, gravity=gravity)


def _check_f_ext(model, f_ext, batch, frame):
    """Validate `f_ext_frame` and f_ext (..., n_bodies, 6) -> (N, n_bodies, 6) or None."""
    if frame not in _EXT_FRAMES:
        raise DataError(f"`f_ext_frame` must be one of {_EXT_FRAMES}, got {frame!r}")
    if f_ext is None:
        return None
    f = as_float_array(f_ext, "f_ext")
    check_trailing_shape(f, (model.n_bodies, 6), "f_ext")
    try:
        f = np.broadcast_to(f, batch + (model.n_bodies, 6))
    except ValueError as err:
        raise DataError(
            f"batch shape of `f_ext` {f.shape[:-2]} does not broadcast to that of q {batch}"
        ) from err
    return f.reshape(-1, model.n_bodies, 6)


def rnea(model: Model, q, qd, qdd, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Joint forces from motion: the recursive Newton-Euler algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Generalized coordinates.
    qd : array_like, shape (..., nv)
        Generalized velocities.
    qdd : array_like, shape (..., nv)
        Generalized accelerations.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces on the bodies (see the module docstring).
    f_ext_frame : {"world", "local"}
        Frame of ``f_ext``.

    Returns
    -------
    tau : ndarray, shape (..., nv)
        Generalized forces (N m for rotational, N for translational
        coordinates) that produce ``qdd``: ``τ = H(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ fᵢ``.

    Notes
    -----
    Featherstone (2008) Table 5.1; Felis (2015) §3.3. Forward pass:
    ``v_i = X v_λ + S q̇``, ``a_i = X a_λ + S q̈ + c_J + v_i × S q̇`` with
    ``a_0 = −g``; ``f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i``. Backward pass:
    ``τ_i = S_iᵀ f_i``, ``f_λ += Xᵀ f_i``. The generalized force of a joint is
    the load that the parent body exerts on the child through the joint.

    Implementation: each multi-axis joint is expanded (once per model) into
    elementary one-axis (or quaternion) joints with massless intermediate
    frames, bodies on fixed joints are merged into their parents (as
    Pinocchio does), and a compiled kernel (numba, :mod:`ahbm._engine.kernels`)
    runs the recursion for every frame of the trial in one call.

    Raises
    ------
    DataError
        Arrays of the wrong shape, non-finite values, zero quaternions.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> q = np.zeros((100, m.nq)); q[:, 1] = np.linspace(0, 1, 100)
    >>> rnea(m, q, np.zeros_like(q), np.zeros_like(q)).shape
    (100, 9)
    """
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd, transpose=False)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    tau = _rnea_batches(model, qf, qdf, qddf, f, f_ext_frame)
    return tau.reshape(batch + (model.nv,))


def nonlinear_effects(model: Model, q, qd, *, f_ext=None, f_ext_frame: str = "world") -> np.ndarray:
    """Coriolis, centrifugal and gravity forces ``C(q, q̇) q̇ + g(q)``, shape (..., nv).

    Equal to ``rnea(model, q, qd, 0)``; with ``f_ext`` the external forces are
    subtracted as in :func:`rnea`.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> nonlinear_effects(m, np.zeros(m.nq), np.zeros(m.nv)).shape
    (4,)
    """
    batch, qf, (qdf,) = prepare(model, q, qd, names=("qd",), transpose=False)
    f = _check_f_ext(model, f_ext, batch, f_ext_frame)
    tau = _rnea_batches(model, qf, qdf, None, f, f_ext_frame)
    return tau.reshape(batch + (model.nv,))


def gravity_torques(model: Model, q) -> np.ndarray:
    """Generalized gravity forces ``g(q)`` (static joint loads), shape (..., nv).

    Notes
    -----
    ``g(q) = −Σ J_c,iᵀ m_i g``, computed as ``rnea(q, 0, 0)``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> gravity_torques(m, np.zeros(m.nq))
    array([0., 0., 0., 0., 0., 0., 0., 0., 0.])
    """
    batch, qf, _ = prepare(model, q, transpose=False)
    tau = _rnea_batches(model, qf, None, None, None, "world")
    return tau.reshape(batch + (model.nv,))


def inverse_dynamics_residual(
    model: Model, q, qd, qdd, tau, *, f_ext=None, f_ext_frame: str = "world"
) -> np.ndarray:
    """Residual generalized forces ``rnea(q, q̇, q̈, f_ext) − τ``, shape (..., nv).

    For a floating-base model the residual of the free joint is the
    "residual force and moment" of gait analysis (zero for consistent data).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> z = np.zeros(m.nv)
    >>> inverse_dynamics_residual(m, np.zeros(m.nq), z, z, z).shape
    (4,)
    """
    t = rnea(model, q, qd, qdd, f_ext=f_ext, f_ext_frame=f_ext_frame)
    tau = check_trailing_shape(as_float_array(tau, "tau"), (model.nv,), "tau")
    return t - tau


def __getattr__(name):
    # Segment-by-segment Newton-Euler inverse dynamics (AHBM 4.4) lives in
    # ahbm.dynamics.segmental; its public names are reachable here too.
    from ahbm.dynamics import segmental

    if name in segmental.__all__:
        return getattr(segmental, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
