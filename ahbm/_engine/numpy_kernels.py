"""Numpy codings of the kinematics and RNEA kernels, vectorized along frames (internal).

:func:`kinematics_numpy` and :func:`rnea_numpy` take the arguments of the
compiled :func:`~ahbm._engine.jit_crba.kinematics_kernel` and
:func:`~ahbm._engine.jit_rnea.rnea_block_kernel`, write the same outputs in
place and return the same value; :mod:`ahbm._engine.backend` decides which
one runs. They perform the kernels' formulas (Featherstone 2008, on the node
plan of :mod:`ahbm._engine.node_plan`) with numpy on all frames at once, so
their results agree with the compiled ones to round-off. This module imports
numpy and the numba-free :mod:`ahbm._engine.arrays` only: a short command that
runs it never loads numba.

Layout: batch last. A node's rotation is ``(3, 3, N)``, its origin
``(3, N)``; the velocity and acceleration of a node are computed together as
``(6, 2, N)`` (component, [v, a], frame), so that one motion transform moves
both. The transforms of all nodes are computed at once; the recursions loop
over the nodes (never over the frames).
"""

from __future__ import annotations

import numpy as np

from ahbm._engine.arrays import PRI, REV, SPH, cross

__all__ = ["aba_from_rnea", "kinematics_numpy", "rnea_numpy"]

_I3 = np.eye(3)


def _inputs_ok(kind, qi, q, qd, qdd) -> bool:
    """Finite q, qd, qdd and no quaternion of (near) zero norm (as the kernels check)."""
    if not (np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(qdd).all()):
        return False
    for i0 in qi[kind == SPH]:
        x, y, z, w = q[:, i0], q[:, i0 + 1], q[:, i0 + 2], q[:, i0 + 3]
        if np.any(x * x + y * y + z * z + w * w < 1e-18):
            return False
    return True


def _node_transforms(kind, E, t, axis, qi, q):
    """R (n, 3, 3, N) = parent_R_node and p (n, 3, N) = node origin in the parent frame.

    ``R = E R_J(q)``, ``p = t + E d_J(q)``; a rotation about a unit axis is
    ``c (1 - a aᵀ) + a aᵀ + s [a]×`` (exact for a principal axis, as the
    kernels' specialized transforms), a quaternion is normalized first.
    """
    n, N = kind.shape[0], q.shape[0]
    R = np.zeros((n, 3, 3, N))
    d = np.zeros((n, 3, N))  # d_J
    rev = np.flatnonzero(kind == REV)
    if rev.size:
        ang = q[:, qi[rev]].T  # (nr, N)
        s, c = np.sin(ang), np.cos(ang)
        a = axis[rev]
        aa = a[:, :, None] * a[:, None, :]
        K = np.zeros((rev.size, 3, 3))
        K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
        K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
        Rr = c[:, None, None, :] * (_I3 - aa)[..., None]
        Rr += aa[..., None]
        Rr += s[:, None, None, :] * K[..., None]
        R[rev] = Rr
    pri = np.flatnonzero(kind == PRI)
    if pri.size:
        R[pri] = _I3[..., None]
        d[pri] = axis[pri][:, :, None] * q[:, qi[pri]].T[:, None, :]
    sph = np.flatnonzero(kind == SPH)
    if sph.size:
        cols = qi[sph][:, None] + np.arange(4)
        a0, a1, a2, a3 = q[:, cols].transpose(2, 1, 0)  # (ns, N) each
        nrm = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
        x, y, z, w = a0 / nrm, a1 / nrm, a2 / nrm, a3 / nrm
        Rs = R[sph]
        Rs[:, 0, 0] = 1.0 - 2.0 * (y * y + z * z)
        Rs[:, 0, 1] = 2.0 * (x * y - w * z)
        Rs[:, 0, 2] = 2.0 * (x * z + w * y)
        Rs[:, 1, 0] = 2.0 * (x * y + w * z)
        Rs[:, 1, 1] = 1.0 - 2.0 * (x * x + z * z)
        Rs[:, 1, 2] = 2.0 * (y * z - w * x)
        Rs[:, 2, 0] = 2.0 * (x * z - w * y)
        Rs[:, 2, 1] = 2.0 * (y * z + w * x)
        Rs[:, 2, 2] = 1.0 - 2.0 * (x * x + y * y)
        R[sph] = Rs
    # constant part: R <- E R, p <- t + E d (nodes with E = 1: p = t + d)
    p = t[:, :, None] + d
    rot = np.flatnonzero(~(E == _I3).all(axis=(1, 2)))
    if rot.size:
        Ek, Rk, dk = E[rot][..., None], R[rot], d[rot]  # Ek (m, 3, 3, 1)
        out = Ek[:, :, 0, None] * Rk[:, None, 0]
        out += Ek[:, :, 1, None] * Rk[:, None, 1]
        out += Ek[:, :, 2, None] * Rk[:, None, 2]
        R[rot] = out
        pk = t[rot][..., None] + Ek[:, :, 0] * dk[:, None, 0]
        pk += Ek[:, :, 1] * dk[:, None, 1]
        pk += Ek[:, :, 2] * dk[:, None, 2]
        p[rot] = pk
    return R, p


def _motion_to_child(R, p, src, out):
    """out = X src for motion vectors (parent -> child coordinates), v and a together.

    R (..., 3, 3, N|1), p (..., 3, N|1), src (..., 6, 2, N|1), out (..., 6, 2, N):
    ``ω' = Rᵀ ω``, ``v' = Rᵀ (v + ω × p)``.
    """
    shape = np.broadcast_shapes(
        src.shape[:-3] + (2, 3, 2, src.shape[-1]), R.shape[:-3] + (1, 1, 1, R.shape[-1])
    )
    wl = np.empty(shape)
    wl[..., 0, :, :, :] = src[..., :3, :, :]
    w0, w1, w2 = src[..., 0, :, :], src[..., 1, :, :], src[..., 2, :, :]
    px, py, pz = p[..., 0, None, :], p[..., 1, None, :], p[..., 2, None, :]
    lin = wl[..., 1, :, :, :]
    np.add(src[..., 3, :, :], w1 * pz, out=lin[..., 0, :, :])
    lin[..., 0, :, :] -= w2 * py
    np.add(src[..., 4, :, :], w2 * px, out=lin[..., 1, :, :])
    lin[..., 1, :, :] -= w0 * pz
    np.add(src[..., 5, :, :], w0 * py, out=lin[..., 2, :, :])
    lin[..., 2, :, :] -= w1 * px
    # out[part, r] = sum_c R[c, r] x[part, c]
    o = out.reshape(out.shape[:-3] + (2, 3) + out.shape[-2:])
    Rc = R[..., None, :, :, None, :]  # (..., 1, 3(c), 3(r), 1, N)
    np.multiply(Rc[..., 0, :, :, :], wl[..., :, 0, None, :, :], out=o)
    o += Rc[..., 1, :, :, :] * wl[..., :, 1, None, :, :]
    o += Rc[..., 2, :, :, :] * wl[..., :, 2, None, :, :]


def _joint_motion(kd, ak, pr, rate, v, a):
    """v += vJ = S q̇ and a += v × vJ (after v's update) of one node; v, a (6, N) views.

    ``rate`` is q̇ (N,) of a 1-DOF node, or (3, N) of a quaternion node;
    ``pr`` the principal axis index or -1.
    """
    V, A = v.reshape(2, 3, -1), a.reshape(2, 3, -1)
    if kd != SPH and pr >= 0:  # motion along +e_pr: the cross product written out
        i_ = 1 if pr == 0 else (2 if pr == 1 else 0)
        j_ = 3 - pr - i_
        if kd == REV:  # ω_J = e q̇: a += [ω × ω_J; v × ω_J]
            v[pr] += rate
            A[:, i_] += V[:, j_] * rate
            A[:, j_] -= V[:, i_] * rate
        else:  # v_J = e q̇: a += [0; ω × v_J]
            v[3 + pr] += rate
            a[3 + i_] += v[j_] * rate
            a[3 + j_] -= v[i_] * rate
        return
    if kd == SPH:
        wj = rate
    else:
        wj = ak[:, None] * rate
    if kd == PRI:
        v[3:] += wj
        a[3:] += cross(v[:3], wj, axis=-2)
    else:
        v[:3] += wj
        A += cross(V, wj, axis=-2)


def _rates_bl(x):
    """(nv, N) contiguous copy of x (N, nv)."""
    return np.ascontiguousarray(x.T)


def rnea_numpy(
    parent, kind, E, t, plain, axis, principal, qi, vi, I6, fast, massive,
    q, qd, qdd, fx, use_fx, g, tau, check,
):  # fmt: skip
    """tau (N, nv) <- RNEA; the numpy coding of :func:`~ahbm._engine.jit_rnea.rnea_block_kernel`.

    Parameters
    ----------
    parent, kind, E, t, plain, axis, principal, qi, vi, I6, fast, massive : numpy.ndarray
        The node plan (:class:`~ahbm._engine.node_plan.Plan`); ``plain`` and
        ``fast`` are accepted for the kernel's signature (the formulas here
        are exact for those nodes without them).
    q : numpy.ndarray
        (N, nq) node coordinates.
    qd, qdd : numpy.ndarray
        (N, nv) node rates and accelerations.
    fx : numpy.ndarray
        (N, n_nodes, 6) external forces ``[n_O; f]`` on each node, about the
        node origin in node coordinates (:func:`~ahbm._engine.node_plan.node_forces`);
        read only when ``use_fx``.
    use_fx : bool
    g : numpy.ndarray
        (3,) gravity in the world frame (zeros for none).
    tau : numpy.ndarray
        (N, nv) output, every entry written (coordinates without a node: 0).
    check : bool
        Check first that q, qd, qdd are finite and no quaternion is zero.

    Returns
    -------
    int
        0, or 1 (and nothing computed) when ``check`` finds a bad input.
    """
    if check and not _inputs_ok(kind, qi, q, qd, qdd):
        return 1
    n, N, nv = parent.shape[0], q.shape[0], qd.shape[1]
    with np.errstate(all="ignore"):  # the kernels compute on non-finite input silently
        R, p = _node_transforms(kind, E, t, axis, qi, q)
        QD, QDD = _rates_bl(qd), _rates_bl(qdd)
        fxb = np.ascontiguousarray(fx.transpose(1, 2, 0)) if use_fx else None  # (n, 6, N)
        base = np.zeros((6, 2, 1))  # the root's source: zero velocity, acceleration -g
        base[3:, 1, 0] = -np.asarray(g, dtype=float)
        VA = np.empty((n, 6, 2, N))
        F = np.zeros((n, 6, N))
        for k in range(n):
            lam = parent[k]
            va = VA[k]
            _motion_to_child(R[k], p[k], base if lam < 0 else VA[lam], va)
            v, a = va[:, 0], va[:, 1]
            kd, j, pr = kind[k], vi[k], principal[k]
            # a += S q̈; v += vJ = S q̇; a += v × vJ
            lo = 3 if kd == PRI else 0  # the rows of S: angular (REV, SPH) or linear (PRI)
            if kd == SPH:
                a[:3] += QDD[j : j + 3]
                _joint_motion(kd, axis[k], pr, QD[j : j + 3], v, a)
            else:
                if pr >= 0:
                    a[lo + pr] += QDD[j]
                else:
                    a[lo : lo + 3] += axis[k][:, None] * QDD[j]
                _joint_motion(kd, axis[k], pr, QD[j], v, a)
        # f = I a + v ×* (I v) - f_ext, all nodes at once
        heavy = np.flatnonzero(massive)
        if heavy.size:
            m = heavy.size
            VAm = VA[heavy]
            Iva = np.matmul(I6[heavy], VAm.reshape(m, 6, 2 * N)).reshape(m, 2, 3, 2, N)
            h = Iva[..., 0, :]  # I v: [h_ω; h_v] (m, 2, 3, N)
            C = cross(VAm.reshape(m, 2, 3, 2, N)[:, :, None, :, 0], h[:, None], axis=-2)
            Fm = np.empty((m, 2, 3, N))
            np.add(C[:, 0, 0], C[:, 1, 1], out=Fm[:, 0])  # ω × h_ω + v × h_v
            Fm[:, 1] = C[:, 0, 1]  # ω × h_v
            Fm += Iva[..., 1, :]  # + I a
            F[heavy] = Fm.reshape(m, 6, N)
        if use_fx:
            F -= fxb
        # backward pass: f_parent += Xᵀ f
        for k in range(n - 1, -1, -1):
            lam = parent[k]
            if lam < 0:
                continue
            Rk, fk = R[k], F[k].reshape(2, 3, N)
            T = Rk[None, :, 0] * fk[:, None, 0]  # R [n; f] (2, 3, N)
            T += Rk[None, :, 1] * fk[:, None, 1]
            T += Rk[None, :, 2] * fk[:, None, 2]
            T[0] += cross(p[k], T[1], axis=-2)
            F[lam] += T.reshape(6, N)
        taub = np.zeros((nv, N))
        for kd, lo in ((REV, 0), (PRI, 3)):
            nodes = np.flatnonzero(kind == kd)
            if nodes.size:
                Fk, ak = F[nodes, lo : lo + 3], axis[nodes]
                taub[vi[nodes]] = (
                    ak[:, 0, None] * Fk[:, 0]
                    + ak[:, 1, None] * Fk[:, 1]
                    + ak[:, 2, None] * Fk[:, 2]
                )
        for k in np.flatnonzero(kind == SPH):
            taub[vi[k] : vi[k] + 3] = F[k, :3]
    tau[...] = taub.T
    return 0


def kinematics_numpy(
    ints, E, tax, body_node, body_E, body_t,
    q, qd, use_qd, use_cols, Rw_out, pw_out, v_out, a_out, Sw_out,
):  # fmt: skip
    """Body poses, velocities, bias accelerations and world DOF columns, in numpy.

    The numpy coding of :func:`~ahbm._engine.jit_crba.kinematics_kernel`,
    with the same arguments and in-place outputs.

    Parameters
    ----------
    ints, E, tax : numpy.ndarray
        The packed node plan (``ints`` (8, n) = parent, kind, principal, qi,
        vi, nvj, plain, massive; E (n, 3, 3); ``tax`` (2, n, 3) = t, axis).
    body_node, body_E, body_t : numpy.ndarray
        Node of each body (-1: welded to the ground) and the body frame's
        pose relative to it.
    q : numpy.ndarray
        (N, nq) node coordinates.
    qd : numpy.ndarray
        (N, nv) node rates (read only when ``use_qd``).
    use_qd, use_cols : bool
        Compute the velocities and accelerations; the DOF columns.
    Rw_out, pw_out : numpy.ndarray
        (N, nb, 3, 3), (N, nb, 3): world pose of each body frame.
    v_out, a_out : numpy.ndarray
        (N, nb, 6): body spatial velocity and acceleration at q̈ = 0 (no
        gravity), body coordinates; bodies welded to the ground are not
        written (only if ``use_qd``).
    Sw_out : numpy.ndarray
        (N, 6, nv): world motion vector ``[ω; v_O]`` about the world origin of
        each unit rate of a node; the columns without a node are not written
        (only if ``use_cols``).

    Returns
    -------
    None
    """
    parent, kind, principal, qi, vi, nvj = ints[:6]
    t, axis = tax[0], tax[1]
    n, N = parent.shape[0], q.shape[0]
    with np.errstate(all="ignore"):
        R, p = _node_transforms(kind, E, t, axis, qi, q)
        Rw = np.empty((n, 3, 3, N))
        pw = np.empty((n, 3, N))
        VA = np.empty((n, 6, 2, N)) if use_qd else None
        QD = _rates_bl(qd) if use_qd else None
        zero = np.zeros((6, 2, 1))
        for k in range(n):
            lam = parent[k]
            if lam < 0:
                Rw[k], pw[k] = R[k], p[k]
            else:
                Rl, Rk, pk = Rw[lam], R[k], p[k]
                out = Rw[k]
                np.multiply(Rl[:, 0, None], Rk[None, 0], out=out)
                out += Rl[:, 1, None] * Rk[None, 1]
                out += Rl[:, 2, None] * Rk[None, 2]
                m = Rl[:, 0] * pk[0]
                m += Rl[:, 1] * pk[1]
                m += Rl[:, 2] * pk[2]
                np.add(pw[lam], m, out=pw[k])
            if use_qd:
                va = VA[k]
                _motion_to_child(R[k], p[k], zero if lam < 0 else VA[lam], va)
                kd, j = kind[k], vi[k]
                rate = QD[j : j + 3] if kd == SPH else QD[j]
                _joint_motion(kd, axis[k], principal[k], rate, va[:, 0], va[:, 1])
        if use_cols:
            _dof_columns(kind, axis, vi, nvj, Rw, pw, Sw_out)
        _body_outputs(body_node, body_E, body_t, Rw, pw, VA, Rw_out, pw_out, v_out, a_out)


def _dof_columns(kind, axis, vi, nvj, Rw, pw, Sw_out):
    """Sw_out[:, :, col] = world motion vector of each unit node rate (see kinematics_numpy)."""
    del nvj  # SPH nodes have 3 rates, the others 1
    one = np.flatnonzero(kind != SPH)
    if one.size:
        Rn, ak = Rw[one], axis[one][:, :, None, None]  # (m, 3, 3, N), (m, 3, 1, 1)
        d = Rn[:, :, 0] * ak[:, 0]  # Rw axis (m, 3, N)
        d += Rn[:, :, 1] * ak[:, 1]
        d += Rn[:, :, 2] * ak[:, 2]
        S = np.zeros((2,) + d.shape)  # [ω; v_O] (2, m, 3, N)
        rev = kind[one] == REV
        S[0, rev] = d[rev]
        S[1, rev] = cross(pw[one][rev], d[rev], axis=-2)
        S[1, ~rev] = d[~rev]
        N = S.shape[-1]
        Sw_out[:, :, vi[one]] = S.transpose(3, 0, 2, 1).reshape(N, 6, one.size)
    for k in np.flatnonzero(kind == SPH):
        w = Rw[k]  # column c: the world axis of rate c
        lin = cross(pw[k][:, None], w, axis=-3)
        Sw_out[:, :3, vi[k] : vi[k] + 3] = w.transpose(2, 0, 1)
        Sw_out[:, 3:, vi[k] : vi[k] + 3] = lin.transpose(2, 0, 1)


def _body_outputs(body_node, body_E, body_t, Rw, pw, VA, Rw_out, pw_out, v_out, a_out):
    """World poses of the body frames, and their motion in body coordinates (if VA)."""
    welded = np.flatnonzero(body_node < 0)
    if welded.size:
        Rw_out[:, welded] = body_E[welded]
        pw_out[:, welded] = body_t[welded]
    b = np.flatnonzero(body_node >= 0)
    if not b.size:
        return
    nd = body_node[b]
    Rn, bE, bt = Rw[nd], body_E[b][..., None], body_t[b][..., None]  # (m,3,3,N), (m,3,3,1), (m,3,1)
    Rb = Rn[:, :, 0, None] * bE[:, None, 0]
    Rb += Rn[:, :, 1, None] * bE[:, None, 1]
    Rb += Rn[:, :, 2, None] * bE[:, None, 2]
    Rw_out[:, b] = Rb.transpose(3, 0, 1, 2)
    pb = pw[nd] + Rn[:, :, 0] * bt[:, 0, None]
    pb += Rn[:, :, 1] * bt[:, 1, None]
    pb += Rn[:, :, 2] * bt[:, 2, None]
    pw_out[:, b] = pb.transpose(2, 0, 1)
    if VA is None:
        return
    out = np.empty((b.size, 6, 2, VA.shape[-1]))
    _motion_to_child(bE, bt, VA[nd], out)
    v_out[:, b] = out[:, :, 0].transpose(2, 0, 1)
    a_out[:, b] = out[:, :, 1].transpose(2, 0, 1)


def aba_from_rnea(rnea, model, q, qd, tau, fx):
    """Forward dynamics of a small batch without compiled code: ``H q̈ = τ − h``, or None.

    `rnea` is :func:`ahbm._engine.dispatch.rnea` (which runs :func:`rnea_numpy`
    for small work). The bias ``h = RNEA(q, q̇, 0)`` has gravity and the node
    forces `fx`; the mass matrix is built column by column, ``H e_j = RNEA(q, 0,
    e_j)`` without gravity or loads (exact: no velocity terms), then one batched
    solve. None when a mass matrix is singular or the result is not finite
    (the caller then runs the ABA kernel, which names the failing body).
    """
    N, nv = q.shape[0], model.nv
    h = rnea(model, q, qd, None, fx)
    zero = np.zeros((N, nv))
    H = np.empty((N, nv, nv))
    for j in range(nv):  # (a loop over the coordinates; every frame at once)
        e = np.zeros((N, nv))
        e[:, j] = 1.0
        H[:, :, j] = rnea(model, q, zero, e, None, gravity=False)
    try:
        qdd = np.linalg.solve(0.5 * (H + np.swapaxes(H, 1, 2)), (tau - h)[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return None
    return qdd if np.all(np.isfinite(qdd)) else None
