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

Passing a kinematic state (``kin=``)
------------------------------------
:func:`forward_kinematics` returns a :class:`Kinematics` state (one pass of
the compiled kernel for the whole batch). Every function here accepts it as
``kin=`` and then reuses its arrays instead of recomputing them: ``q`` (and
``qd``, ``qdd``) may be None; if they are given too, they must hold the same
values as the state. A state made for another model, or without the
velocities that a function needs, raises a :class:`~ahbm.errors.DataError`
saying what to pass. ``point_acceleration`` takes ``qdd`` from the state or,
if the state has none, from its ``qdd`` argument.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.arrays import cross
from ahbm._engine.state import Kinematics
from ahbm._internal.validation import as_float_array, check_trailing_shape
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model

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


def _body_and_point(kin: Kinematics, body, point):
    """Body index and the point as (3, N) or (3, 1), batch last."""
    b = kin.model.body_index(body)
    r = as_float_array(point, "point")
    check_trailing_shape(r, (3,), "point")
    if r.ndim == 1:
        return b, r[:, None]
    batch, N = kin.batch_shape, kin.n_frames
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
    """Kinematic state of a model: poses (and velocities, accelerations) of all bodies.

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
        Frozen state: ``rotations`` (..., n_bodies, 3, 3), ``positions``
        (..., n_bodies, 3), ``transforms`` (..., n_bodies, 4, 4) world poses;
        ``velocities``, ``bias_accelerations`` and ``accelerations``
        (..., n_bodies, 6) body spatial vectors (None when ``qd`` / ``qdd``
        are not given); ``world_columns`` (..., 6, nv). Pass it as ``kin=``
        to the point, Jacobian, COM, momentum and energy functions, to
        :func:`~ahbm.kinematics.marker_model.marker_jacobians`, to force elements and to
        constraints, so that one kinematics pass serves them all.

    Notes
    -----
    Recursive forward kinematics (Featherstone 2008, §4.3; AHBM §2.5, eqs 2.17–2.21):
    ``0_T_i = 0_T_λ(i) λ_T_i(q_i)``,
    ``v_i = i_X_λ v_λ + S_i q̇_i``,
    ``a_i = i_X_λ a_λ + S_i q̈_i + c_J,i + v_i × S_i q̇_i``,
    computed by the compiled kernel of :mod:`ahbm._engine.dispatch` for all
    frames in one call; the accelerations are the bias term (``q̈ = 0``) plus
    the motion columns times ``q̈``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> kin = forward_kinematics(m, np.zeros((10, m.nq)))
    >>> kin.transforms.shape
    (10, 2, 4, 4)
    >>> point_position(m, None, 1, [0, 0, -1], kin=kin).shape
    (10, 3)
    """
    return _st.compute(model, q, qd, qdd)


def point_position(model: Model, q, body, point=(0.0, 0.0, 0.0), *, kin=None) -> np.ndarray:
    """World position of a point fixed in a body.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    body : str or int
    point : array_like, shape (3,) or (..., 3)
        Point in the body frame, m.
    kin : Kinematics, optional
        State from :func:`forward_kinematics` (see the module docstring).

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
    kin = _st.resolve(model, kin, q)
    b, r = _body_and_point(kin, body, point)
    return _st.out(kin, np.broadcast_to(_st.point_bl(kin, b, r), (3, kin.n_frames)))


def point_velocity(model: Model, q, qd, body, point=(0.0, 0.0, 0.0), *, kin=None) -> np.ndarray:
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
    kin = _st.resolve(model, kin, q, qd, needs_qd=True)
    b, r = _body_and_point(kin, body, point)
    return _st.out(kin, _st.point_velocity_bl(kin, b, r))


def point_acceleration(
    model: Model, q, qd, qdd, body, point=(0.0, 0.0, 0.0), *, kin=None
) -> np.ndarray:
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
    if isinstance(kin, _st.Kinematics) and kin.qdd is None and qdd is not None:
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        qdd_flat = _qdd_flat(kin, qdd)
    else:
        if kin is None and qdd is None:
            raise DataError("`qdd` is None; pass the accelerations qdd or a state kin=")
        kin = _st.resolve(model, kin, q, qd, qdd, needs_qd=True)
        if kin.qdd is None:
            raise DataError(
                "`kin` was computed without accelerations; pass qdd, or "
                "kin=forward_kinematics(model, q, qd, qdd)"
            )
        qdd_flat = kin.qdd.reshape(kin.n_frames, model.nv)
    b, r = _body_and_point(kin, body, point)
    return _st.out(kin, _st.point_acceleration_bl(kin, b, r, qdd_flat))


def _qdd_flat(kin: Kinematics, qdd) -> np.ndarray:
    from ahbm.kinematics.configuration import check_v

    a = check_v(kin.model, qdd, "qdd")
    try:
        a = np.broadcast_to(a, kin.batch_shape + (kin.model.nv,))
    except ValueError as err:
        raise DataError(
            f"batch shape of `qdd` {a.shape[:-1]} does not broadcast to that of `kin` "
            f"{kin.batch_shape}"
        ) from err
    return a.reshape(kin.n_frames, kin.model.nv)


def jacobian_dot_times_qd(
    model: Model, q, qd, body, point=(0.0, 0.0, 0.0), *, kin=None
) -> np.ndarray:
    """The velocity-product term ``J̇ q̇`` of a body point (the "contact Hessian" γ).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
    body : str or int
    point : array_like, shape (3,)
        Point in the body frame, m.
    kin : Kinematics, optional
        State with velocities from :func:`forward_kinematics`.

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
    kin = _st.resolve(model, kin, q, qd, needs_qd=True)
    b, r = _body_and_point(kin, body, point)
    return _st.out(kin, _st.point_bias_acceleration_bl(kin, b, r))


def body_jacobian(model: Model, q, body, *, frame: str = "local", kin=None) -> np.ndarray:
    """Spatial Jacobian of a body: ``v_body = J q̇``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    body : str or int
    frame : {"local", "world", "local_world_aligned"}
        ``"local"``: body spatial velocity in body coordinates; ``"world"``:
        spatial velocity in world coordinates, linear part = velocity of the
        body point at the world origin; ``"local_world_aligned"``: angular
        velocity and velocity of the body origin, in world coordinates
        (same meanings as Pinocchio's reference frames).
    kin : Kinematics, optional
        State from :func:`forward_kinematics`.

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
    kin = _st.resolve(model, kin, q, columns=True)
    b = model.body_index(body)
    N = kin.n_frames
    J = np.zeros((6, model.nv, N))
    dofs, w, lin = _st.body_columns_bl(kin, b)
    if frame != "world":
        lin = _st.points_jacobian_bl(kin, b, _st.origin_bl(kin, b))[:, dofs]  # at the origin
        if frame == "local":
            w = np.einsum("jiN,jkN->ikN", _st.rotation_bl(kin, b), w)
            lin = np.einsum("jiN,jkN->ikN", _st.rotation_bl(kin, b), lin)
    J[:3, dofs] = w
    J[3:, dofs] = lin
    return _st.out(kin, J)


def point_jacobian(model: Model, q, body, point=(0.0, 0.0, 0.0), *, kin=None) -> np.ndarray:
    """Jacobian of the world position of a body point: ``ṗ = J q̇``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    body : str or int
    point : array_like, shape (3,) or (..., 3)
        Point in the body frame, m.
    kin : Kinematics, optional
        State from :func:`forward_kinematics`.

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
    kin = _st.resolve(model, kin, q, columns=True)
    b, r = _body_and_point(kin, body, point)
    return _st.out(kin, _st.point_jacobian_bl(kin, b, r))


def _com_points(kin: Kinematics):
    """World positions (N, n_bodies, 3) of the body centres of mass and the total mass."""
    model = kin.model
    M = model.masses.sum()
    if M <= 0:
        raise ModelError(f"model '{model.name}' has zero total mass; no centre of mass")
    N, nb = kin.n_frames, model.n_bodies
    Rw = kin.rotations.reshape(N, nb, 3, 3)
    pw = kin.positions.reshape(N, nb, 3)
    return pw + np.einsum("nbij,bj->nbi", Rw, model.coms), M


def center_of_mass(model: Model, q, *, kin=None) -> np.ndarray:
    """Whole-body centre of mass in the world frame, m.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    kin : Kinematics, optional
        State from :func:`forward_kinematics`.

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
    kin = _st.resolve(model, kin, q)
    c, M = _com_points(kin)
    return (np.einsum("b,nbi->ni", model.masses, c) / M).reshape(kin.batch_shape + (3,))


def com_velocity(model: Model, q, qd, *, kin=None) -> np.ndarray:
    """Velocity of the whole-body centre of mass, m/s, shape (..., 3).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> com_velocity(m, np.zeros(m.nq), np.zeros(m.nv))
    array([0., 0., 0.])
    """
    h = momentum(model, q, qd, kin=kin)
    return h[..., 3:] / model.total_mass


def com_jacobian(model: Model, q, *, kin=None) -> np.ndarray:
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
    kin = _st.resolve(model, kin, q, columns=True)
    c, M = _com_points(kin)
    Jc = np.zeros((3, model.nv, kin.n_frames))
    for i in range(model.n_bodies):
        if model.masses[i] > 0:
            Jc += model.masses[i] * _st.points_jacobian_bl(kin, i, c[:, i].T)
    return _st.out(kin, Jc / M)


def momentum(model: Model, q, qd, *, kin=None) -> np.ndarray:
    """Centroidal momentum: angular momentum about the COM and linear momentum.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None with ``kin``
    kin : Kinematics, optional
        State with velocities from :func:`forward_kinematics`.

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
    kin = _st.resolve(model, kin, q, qd, needs_qd=True)
    N, nb = kin.n_frames, model.n_bodies
    Rw = kin.rotations.reshape(N, nb, 3, 3)
    v = kin.velocities.reshape(N, nb, 6)
    m = model.masses
    pos, M = _com_points(kin)
    w = v[..., :3]
    vc = v[..., 3:] + cross(w, model.coms)  # COM velocities, body coordinates
    vcw = np.einsum("nbij,nbj->nbi", Rw, vc)
    Lc = np.einsum("nbij,nbj->nbi", Rw, np.einsum("bij,nbj->nbi", model.inertias, w))
    c = np.einsum("b,nbi->ni", m, pos) / M
    h = np.empty((N, 6))
    h[:, 3:] = np.einsum("b,nbi->ni", m, vcw)
    h[:, :3] = Lc.sum(axis=1) + np.einsum("b,nbi->ni", m, cross(pos - c[:, None], vcw))
    return h.reshape(kin.batch_shape + (6,))


def kinetic_energy(model: Model, q, qd, *, kin=None, per_body: bool = False) -> np.ndarray:
    """Kinetic energy ``T = ½ Σ v_iᵀ I_i v_i``, J, shape (...).

    With ``per_body=True`` the terms ``T_i = ½ v_iᵀ I_i v_i`` of the bodies,
    shape (..., n_bodies) (:func:`ahbm.analysis.model_segment_energies` splits
    them into translation and rotation).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> float(kinetic_energy(m, np.zeros(m.nq), np.zeros(m.nv)))
    0.0
    """
    kin = _st.resolve(model, kin, q, qd, needs_qd=True)
    v = kin.velocities
    Iv = np.einsum("bij,...bj->...bi", model.spatial_inertias, v)
    if per_body:
        return 0.5 * np.einsum("...bi,...bi->...b", v, Iv)
    return 0.5 * np.einsum("...bi,...bi->...", v, Iv)


def potential_energy(model: Model, q, *, kin=None, per_body: bool = False) -> np.ndarray:
    """Gravitational potential energy ``V = −Σ m_i g · c_i``, J, shape (...).

    With ``per_body=True`` the terms ``V_i = −m_i g · c_i`` of the bodies,
    shape (..., n_bodies) (zero at the world origin).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> m = triple_pendulum_euler()
    >>> round(float(potential_energy(m, np.zeros(m.nq))), 6)
    -5.886
    """
    kin = _st.resolve(model, kin, q)
    N, nb = kin.n_frames, model.n_bodies
    pos = kin.positions.reshape(N, nb, 3) + np.einsum(
        "nbij,bj->nbi", kin.rotations.reshape(N, nb, 3, 3), model.coms
    )
    if per_body:
        V = -np.einsum("b,nbi,i->nb", model.masses, pos, model.gravity)
        return V.reshape(kin.batch_shape + (nb,))
    V = -np.einsum("b,nbi,i->n", model.masses, pos, model.gravity)
    return V.reshape(kin.batch_shape)
