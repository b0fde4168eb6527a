"""Centroidal momentum: the centroidal momentum matrix, its bias and the momentum rate.

Every function is vectorized over leading batch axes (a whole trial in one
call); they loop over bodies only and accept a kinematic state
``kin=forward_kinematics(model, q, qd[, qdd])`` like the COM and momentum
functions of :mod:`ahbm.kinematics.forward`. The zero-moment point of
:mod:`ahbm.dynamics.balance` is computed from the same momentum rate.

Centroidal momentum
-------------------
``h_G = [k_G; p]`` is the angular momentum about the whole-body centre of
mass ``c`` and the linear momentum, world axes, angular part first (like
:func:`~ahbm.kinematics.momentum`; Pinocchio stores the linear part first).
``h_G = A_G(q) q̇`` with the centroidal momentum matrix ``A_G`` (Orin &
Goswami 2008), and ``ḣ_G = A_G q̈ + Ȧ_G q̇``.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
from ahbm.errors import DataError
from ahbm.kinematics.forward import center_of_mass
from ahbm.kinematics.tree import Model

__all__ = [
    "centroidal_momentum_matrix",
    "centroidal_momentum_bias",
    "centroidal_momentum_rate",
]


def _com(kin):
    """Whole-body COM (N, 3) of the state (ModelError for a massless model)."""
    return center_of_mass(kin.model, None, kin=kin).reshape(kin.n_frames, 3)


def _rate_at_origin(kin, acc):
    """Rate of spatial momentum ``[k̇_O; ṗ]`` (N, 6) about the world origin, world axes.

    ``acc`` (N, nb, 6) holds the body spatial accelerations (body coordinates).
    Each body contributes ``f_i = I_i a_i + v_i ×* I_i v_i`` (the Newton-Euler
    force without gravity, Featherstone 2008 eq. 5.9), moved to the world origin.
    """
    model = kin.model
    N, nb = kin.n_frames, model.n_bodies
    v = _st.velocities_required(kin).reshape(N, nb, 6)
    I6 = model.spatial_inertias
    Iv = np.einsum("bij,nbj->nbi", I6, v)
    f = np.einsum("bij,nbj->nbi", I6, acc)
    f[..., :3] += cross(v[..., :3], Iv[..., :3]) + cross(v[..., 3:], Iv[..., 3:])
    f[..., 3:] += cross(v[..., :3], Iv[..., 3:])
    Rw = kin.rotations.reshape(N, nb, 3, 3)
    pw = kin.positions.reshape(N, nb, 3)
    F = np.einsum("nbij,nbj->nbi", Rw, f[..., 3:])
    n = np.einsum("nbij,nbj->nbi", Rw, f[..., :3]) + cross(pw, F)
    return np.concatenate([n.sum(axis=1), F.sum(axis=1)], axis=-1)


def _to_com(h_origin, c):
    """Spatial momentum (or its rate) about the origin -> about the COM c (N, 3)."""
    out = h_origin.copy()
    out[:, :3] -= cross(c, h_origin[:, 3:])
    return out


def _accelerations(model, kin, q, qd, qdd):
    """State and body spatial accelerations (N, nb, 6) for the given (or stored) qdd."""
    if isinstance(kin, _st.Kinematics) and kin.qdd is None and qdd is not None:
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        kin = _st.compute(model, kin.q, kin.qd, qdd)  # the same state with accelerations
    elif kin is None and qdd is None:
        raise DataError("`qdd` is None; pass the accelerations qdd or a state kin=")
    else:
        kin = _st.resolve(model, kin, q, qd, qdd, needs_qd=True)
    if kin.qdd is None:
        raise DataError(
            "`kin` was computed without accelerations; pass qdd, or "
            "kin=forward_kinematics(model, q, qd, qdd)"
        )
    return kin, kin.accelerations.reshape(kin.n_frames, model.n_bodies, 6)


def centroidal_momentum_matrix(model: Model, q, *, kin=None) -> np.ndarray:
    """Centroidal momentum matrix ``A_G``: ``h_G = A_G(q) q̇``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
        Generalized coordinates.
    kin : Kinematics, optional
        State from :func:`~ahbm.kinematics.forward_kinematics`.

    Returns
    -------
    ndarray, shape (..., 6, nv)
        Maps ``q̇`` to the centroidal momentum ``[k_G; p]`` (angular momentum
        about the whole-body COM, N m s, then linear momentum, kg m/s; world
        axes), the quantity :func:`~ahbm.kinematics.momentum` returns.

    Raises
    ------
    DataError
        If ``q`` (or ``kin``) is not a valid state of the model.
    ModelError
        If the model has no mass.

    Notes
    -----
    Composite rigid bodies in world coordinates (Orin & Goswami 2008;
    Orin, Goswami & Lee 2013, eq. 22; Pinocchio's ``ccrba``). Each body's
    spatial inertia about the world origin,

    ``I_i^0 = [[I_ci − m_i [c_i]×², m_i [c_i]×], [−m_i [c_i]×, m_i 1]]``

    (``I_ci = R_i I_i R_iᵀ`` about the body COM ``c_i``), is summed over the
    subtree of each joint, ``I^C_j = Σ_{i ∈ subtree(j)} I_i^0``; the columns
    of joint ``j`` are ``I^C_j S_j^0`` with its world motion columns ``S_j^0``
    (linear part at the origin), which gives ``A_O`` (momentum about the
    origin). The shift to the COM is
    ``A_G = [[1, −[c]×], [0, 1]] A_O``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> from ahbm.kinematics import momentum
    >>> m = double_pendulum_3d()
    >>> q, qd = np.zeros(m.nq), np.ones(m.nv)
    >>> A = centroidal_momentum_matrix(m, q)
    >>> A.shape, bool(np.allclose(A @ qd, momentum(m, q, qd)))
    ((6, 4), True)
    """
    kin = _st.resolve(model, kin, q, columns=True)
    N, nb = kin.n_frames, model.n_bodies
    c = _com(kin)
    # per body, about the world origin: mass, first moment h = m c_i and rotational
    # inertia J = I_ci − m [c_i]×² (bodies first, frames next)
    Rw = kin.rotations.reshape(N, nb, 3, 3).transpose(1, 0, 2, 3)
    ci = (
        kin.positions.reshape(N, nb, 3).transpose(1, 0, 2)
        + (Rw @ model.coms[:, None, :, None])[..., 0]
    )
    m = model.masses
    h = m[:, None, None] * ci
    J = Rw @ model.inertias[:, None] @ np.swapaxes(Rw, -1, -2)
    J += (h * ci).sum(-1)[..., None, None] * np.eye(3) - h[..., :, None] * ci[..., None, :]
    mc = m.copy()
    for i in range(nb - 1, -1, -1):  # composite inertias, children before parents
        p = model.parent[i]
        if p >= 0:
            mc[p] += mc[i]
            h[p] += h[i]
            J[p] += J[i]
    S = np.ascontiguousarray(kin._Sw_flat.transpose(2, 0, 1))  # (nv, N, 6) world columns
    A = np.empty((model.nv, N, 6))
    for j in range(nb):
        k, nv = model.v_index[j], model.joint_nv[j]
        if nv:
            w, v = S[k : k + nv, :, :3], S[k : k + nv, :, 3:]
            A[k : k + nv, :, :3] = np.einsum("nij,dnj->dni", J[j], w) + cross(h[j], v)
            A[k : k + nv, :, 3:] = mc[j] * v + cross(w, h[j])
    A = A.transpose(1, 2, 0)  # (N, 6, nv)
    A[:, :3] -= cross(c[:, :, None], A[:, 3:], axis=-2)  # about the COM
    return A.reshape(kin.batch_shape + (6, model.nv))


def centroidal_momentum_bias(model: Model, q, qd, *, kin=None) -> np.ndarray:
    """Velocity-product term ``Ȧ_G q̇`` of the rate of centroidal momentum.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
    kin : Kinematics, optional
        State with velocities from :func:`~ahbm.kinematics.forward_kinematics`.

    Returns
    -------
    ndarray, shape (..., 6)
        ``Ȧ_G q̇ = ḣ_G`` at ``q̈ = 0`` (N m, N; angular part first, about the
        COM, world axes), so that ``ḣ_G = A_G q̈ + Ȧ_G q̇``.

    Notes
    -----
    The rate of the spatial momentum about the (fixed) world origin is the sum
    of the bodies' Newton-Euler forces without gravity,
    ``ḣ_O = Σ_i 0_X_i^* (I_i a_i + v_i ×* I_i v_i)`` (Featherstone 2008,
    eqs 2.47, 5.9), here with the bias accelerations ``a_i`` (``q̈ = 0``).
    Since ``ċ ∥ p``, ``k̇_G = k̇_O − c × ṗ``. Pinocchio's ``dccrba`` gives
    ``Ȧ_G``; this function gives its product with ``q̇`` without forming it.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> centroidal_momentum_bias(m, np.zeros(m.nq), np.zeros(m.nv))
    array([0., 0., 0., 0., 0., 0.])
    """
    kin = _st.resolve(model, kin, q, qd, needs_qd=True)
    c = _com(kin)
    a0 = kin.bias_accelerations.reshape(kin.n_frames, model.n_bodies, 6)
    return _to_com(_rate_at_origin(kin, a0), c).reshape(kin.batch_shape + (6,))


def centroidal_momentum_rate(model: Model, q, qd, qdd, *, kin=None) -> np.ndarray:
    """Rate of change of the centroidal momentum ``ḣ_G = A_G q̈ + Ȧ_G q̇``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
    qdd : array_like, shape (..., nv), or None with a ``kin`` that has them
    kin : Kinematics, optional
        State from :func:`~ahbm.kinematics.forward_kinematics` (with
        velocities; its accelerations are used when it has them).

    Returns
    -------
    ndarray, shape (..., 6)
        ``[k̇_G; ṗ]``: rate of the angular momentum about the whole-body COM
        (N m) and of the linear momentum (N), world axes. By Newton and Euler
        it equals the resultant external wrench about the COM minus gravity's:
        ``ṗ = Σ F_ext + M g``.

    Notes
    -----
    ``ḣ_O = Σ_i 0_X_i^* (I_i a_i + v_i ×* I_i v_i)`` with the body spatial
    accelerations ``a_i`` (Featherstone 2008, eq. 5.9), then
    ``k̇_G = k̇_O − c × ṗ``. Chung (2009, eq. 4.15) writes the angular part as
    ``Σ R_i (J_i ω̇_i − (J_i ω_i) × ω_i)`` plus the moments of the segments'
    ``m_i r̈_i`` about ``G``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> q, qd, qdd = np.zeros(m.nq), np.ones(m.nv), np.ones(m.nv)
    >>> hd = centroidal_momentum_rate(m, q, qd, qdd)
    >>> A = centroidal_momentum_matrix(m, q)
    >>> bool(np.allclose(hd, A @ qdd + centroidal_momentum_bias(m, q, qd)))
    True
    """
    kin, acc = _accelerations(model, kin, q, qd, qdd)
    c = _com(kin)
    return _to_com(_rate_at_origin(kin, acc), c).reshape(kin.batch_shape + (6,))
