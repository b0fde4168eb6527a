"""Joint reaction loads once the muscle forces are known (OpenSim's JointReaction analysis).

The load a joint transmits is what the parent body exerts on the child body
through the joint: the "joint contact" force and moment, once gravity, the
bodies' inertia, the external loads (ground reactions) and the muscle forces
(applied along their paths to the bodies they attach to) are accounted for.
:func:`joint_reaction_loads` computes it for a whole trial with the
segment-by-segment Newton-Euler recursion of
:func:`ahbm.dynamics.segmental.newton_euler` (AHBM's joint-load convention:
the load of the proximal segment on the distal one), on the bodies of a
:class:`~ahbm.kinematics.tree.Model`:

- each body's motion (orientation, centre-of-mass acceleration, angular
  velocity and acceleration) comes from :func:`ahbm.kinematics.forward_kinematics`;
- the joint centre of body ``i`` is the origin of its joint's child frame
  (OpenSim's child offset frame: ``body.child_position``);
- the muscle forces become external spatial forces on the bodies
  (:func:`muscle_body_forces`, from :func:`ahbm.muscles.paths.path_loads`):
  each straight part of a path pulls the bodies at its ends towards each
  other with the tension, and wrap objects' bodies take the path's pressure.

What is reported is OpenSim's JointReaction: the load on the ``child`` (or
the ``parent``) body, at the origin of the joint's child (or parent) frame,
expressed in the ``ground``, the ``child`` body or the ``parent`` body frame
(or any body named). Generalized forces that act inside a joint (reserve
actuators, :class:`~ahbm.dynamics.joint_forces.RotationalSpringDamper`) are part of
the load the joint transmits, as in OpenSim (Simbody's mobilizer reaction).

References
----------
OpenSim's ``JointReaction`` analysis (Steele, DeMers, Schwartz & Delp 2012,
*J Biomech* 45, 2564-2569, "Compressive tibiofemoral force during crouch
gait"); AHBM report §4.4 for the Newton-Euler recursion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_choice, as_float_array, check_model, check_trailing_shape
from ahbm.dynamics.segmental import SegmentMotion, newton_euler
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.forward import forward_kinematics
from ahbm.types import ResultRepr

__all__ = ["JointReactionResult", "joint_reaction_loads", "muscle_body_forces"]

_ON = ("child", "parent")


@dataclass(frozen=True, repr=False)
class JointReactionResult(ResultRepr):
    """Result of :func:`joint_reaction_loads`.

    Attributes
    ----------
    force : ndarray, shape (..., n_joints, 3)
        Force of the joint on the body ``on``, N, in ``frame``.
    moment : ndarray, shape (..., n_joints, 3)
        Moment of the joint on the body ``on`` about ``point``, N m, in ``frame``.
    point : ndarray, shape (..., n_joints, 3)
        Where the load acts: the origin of the joint's child (``on="child"``) or
        parent (``on="parent"``) frame, m, as a location in ``frame``.
    joint_names : tuple of str
    body_names : tuple of str
        The body each load acts on.
    frames : tuple of str
        The frame each load is expressed in (a body name or ``"ground"``).
    on : str
        ``"child"`` or ``"parent"``.
    """

    force: np.ndarray
    moment: np.ndarray
    point: np.ndarray
    joint_names: tuple = ()
    body_names: tuple = ()
    frames: tuple = ()
    on: str = "child"

    def labels(self) -> list:
        """OpenSim's column labels: ``<joint>_on_<body>_in_<frame>_fx`` ... ``_pz``."""
        out = []
        for j, b, f in zip(self.joint_names, self.body_names, self.frames, strict=True):
            root = f"{j}_on_{b}_in_{f}"
            out += [f"{root}_{k}{a}" for k in "fmp" for a in "xyz"]
        return out

    def table(self) -> np.ndarray:
        """The loads as OpenSim writes them, shape (..., 9 n_joints): f, m, p per joint."""
        x = np.concatenate([self.force, self.moment, self.point], axis=-1)
        return x.reshape(x.shape[:-2] + (-1,))


def _muscle_list(model, muscles):
    from ahbm.muscles.force_sharing import _select_muscles

    return _select_muscles(model, muscles)


def muscle_body_forces(model, q, muscle_forces, *, muscles=None) -> np.ndarray:
    """World spatial forces that muscles exert on the bodies along their paths.

    Parameters
    ----------
    model : Model
        With muscles (``model.muscles``).
    q : array_like, shape (..., nq)
    muscle_forces : array_like, shape (..., n_muscles)
        Tensions, N (e.g. :attr:`StaticOptimizationResult.muscle_forces`).
    muscles : sequence of str, optional
        The muscles of the columns of ``muscle_forces`` (default all, model order).

    Returns
    -------
    f_ext : ndarray, shape (..., n_bodies, 6)
        ``[moment about the world origin; force]`` on each body, world frame:
        the ``f_ext`` convention of :func:`ahbm.dynamics.rnea` (``f_ext_frame="world"``).

    Notes
    -----
    ``f_b = Σ_m F_m L_mb`` with ``L`` the loads of a unit tension of
    :func:`ahbm.muscles.paths.path_loads`: each straight part of a path pulls
    the bodies at its ends towards each other, and a wrap object's body takes
    the load of the path pressing on it. The generalized forces of moving path
    points (a point whose location depends on a coordinate) are no body loads:
    they act inside the joint of that coordinate, as OpenSim's mobility forces.

    Examples
    --------
    >>> f = muscle_body_forces(model, q, res.muscle_forces)  # doctest: +SKIP
    >>> f.shape                                             # doctest: +SKIP
    (151, 12, 6)
    """
    from ahbm.muscles.paths import path_loads

    check_model(model)
    names = [m.name for m in _muscle_list(model, muscles)]
    q = as_float_array(q, "q")
    F = as_float_array(muscle_forces, "muscle_forces")
    check_trailing_shape(F, (len(names),), "muscle_forces")
    loads, _ = path_loads(model, q, muscles=names)  # (..., n_muscles, n_bodies, 6)
    try:
        return np.einsum("...mbk,...m->...bk", loads, F)
    except ValueError as err:
        raise DataError(
            f"batch shape of `muscle_forces` {F.shape[:-1]} does not broadcast to that of q "
            f"{q.shape[:-1]}"
        ) from err


def _body_motion(model, kin) -> SegmentMotion:
    """World kinematics of every body for newton_euler: rotation, COM, its acceleration, ω, α."""
    R = kin.rotations
    p = kin.positions
    v = kin.velocities
    a = kin.accelerations
    c = model.coms  # (nb, 3) in the body frames
    w, vo = v[..., :3], v[..., 3:]
    wd, ao = a[..., :3], a[..., 3:]
    acc_local = ao + np.cross(wd, c) + np.cross(w, vo + np.cross(w, c))
    com = p + np.einsum("...ij,...j->...i", R, c)
    return SegmentMotion(
        R,
        com,
        np.einsum("...ij,...j->...i", R, acc_local),
        np.einsum("...ij,...j->...i", R, w),
        np.einsum("...ij,...j->...i", R, wd),
    )


def _world_f_ext(model, kin, f_ext, frame):
    """f_ext (N, nb, 6) in the world convention."""
    f = as_float_array(f_ext, "f_ext")
    check_trailing_shape(f, (model.n_bodies, 6), "f_ext")
    try:
        f = np.broadcast_to(f, kin.rotations.shape[:-2] + (6,))
    except ValueError as err:
        raise DataError(
            f"batch shape of `f_ext` {f.shape[:-2]} does not broadcast to that of q "
            f"{kin.rotations.shape[:-3]}"
        ) from err
    if frame == "world":
        return np.array(f)
    R, p = kin.rotations, kin.positions
    F = np.einsum("...ij,...j->...i", R, f[..., 3:])
    n = np.einsum("...ij,...j->...i", R, f[..., :3]) + np.cross(p, F)
    return np.concatenate([n, F], axis=-1)


def joint_reaction_loads(
    model,
    q,
    qd,
    qdd,
    muscle_forces=None,
    *,
    f_ext=None,
    f_ext_frame="world",
    joints=None,
    on="child",
    frame="child",
    muscles=None,
) -> JointReactionResult:
    """Loads the joints transmit, with the muscle forces applied along their paths.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, qdd : array_like, shape (..., nv)
        Generalized velocities and accelerations (None: zeros).
    muscle_forces : array_like, shape (..., n_muscles), optional
        Muscle tensions, N (e.g. from :func:`~ahbm.muscles.static_optimization`);
        None: no muscle force.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External loads (ground reactions), as in :func:`ahbm.dynamics.rnea`.
    f_ext_frame : {"world", "local"}
        Frame of ``f_ext``.
    joints : sequence of str, optional
        Joint names (default all, in body order).
    on : {"child", "parent"}
        The body the reported load acts on (OpenSim's ``apply_on_bodies``).
    frame : str
        ``"child"`` (default), ``"parent"``, ``"ground"`` or a body name: the frame the
        load is expressed in (OpenSim's ``express_in_frame``; child and parent are
        the bodies' frames).
    muscles : sequence of str, optional
        The muscles of the columns of ``muscle_forces`` (default all, model order).

    Returns
    -------
    JointReactionResult
        ``force``, ``moment`` and ``point`` (..., n_joints, 3).

    Raises
    ------
    ModelError
        Unknown joints or bodies, muscle forces without muscles.
    DataError
        Bad arrays or options.

    Notes
    -----
    With the body loads ``f_ext,i`` (external + muscles), AHBM §4.4 eqs
    (4.1)-(4.2) (with the weight and the force moments the printed equations
    omit: :func:`ahbm.dynamics.segmental.newton_euler`) from the distal
    bodies to the proximal ones give the force ``F_i`` and the moment ``M_i``
    (about the child-frame origin ``c_i``) that the parent exerts on body
    ``i``:
    ``F_i = m_i (a_i − g) − F_e,i + Σ_children F_d`` and
    ``M_i = İ_i ω_i − M_e,i − (c_i − x_i) × F_i + Σ [M_d + (c_d − x_i) × F_d]``
    (:func:`~ahbm.dynamics.segmental.newton_euler`). The load on the parent is
    ``−F_i`` and ``−(M_i + (c_i − o_i) × F_i)`` about the parent-frame origin
    ``o_i``. The projection of ``(M_i, F_i)`` on the joint's motion subspace is
    the generalized force of the joint minus the muscles' moments:
    ``Sᵀ f_i = τ_i − Σ_m r_mi F_m``.

    Examples
    --------
    A 2 kg body hanging from a revolute joint, at rest, without muscles:

    >>> from ahbm.kinematics import Model
    >>> m = Model()
    >>> _ = m.add_body("b", "ground", {"type": "revolute", "axis": [1, 0, 0]},
    ...                mass=2.0, com=[0, 0, -0.5])
    >>> r = joint_reaction_loads(m, [0.0], None, None, frame="ground")
    >>> r.force[0].round(3).tolist(), r.moment[0].round(3).tolist()
    ([0.0, 0.0, 19.62], [0.0, 0.0, 0.0])
    """
    check_model(model)
    on = as_choice(on, "on", _ON)
    q = as_float_array(q, "q")
    zeros = np.zeros(q.shape[:-1] + (model.nv,))
    qd = zeros if qd is None else qd
    qdd = zeros if qdd is None else qdd
    kin = forward_kinematics(model, q, qd, qdd)
    batch = kin.rotations.shape[:-3]
    nb = model.n_bodies
    fe = np.zeros(batch + (nb, 6))
    if f_ext is not None:
        fe = fe + _world_f_ext(
            model, kin, f_ext, as_choice(f_ext_frame, "f_ext_frame", ("world", "local"))
        )
    if muscle_forces is not None:
        fe = fe + muscle_body_forces(model, q, muscle_forces, muscles=muscles)
    idx = _joint_indices(model, joints)
    N = int(np.prod(batch, dtype=int))
    flat = lambda x, tail: np.reshape(x, (N,) + tail)  # noqa: E731
    motion = _body_motion(model, kin)
    motion = SegmentMotion(
        flat(motion.rotation, (nb, 3, 3)),
        flat(motion.com, (nb, 3)),
        flat(motion.com_acc, (nb, 3)),
        flat(motion.omega, (nb, 3)),
        flat(motion.alpha, (nb, 3)),
    )
    R = flat(kin.rotations, (nb, 3, 3))
    p = flat(kin.positions, (nb, 3))
    child_pos = np.array([b.child_position for b in model.bodies], dtype=float).reshape(nb, 3)
    centres = p + np.einsum("nbij,bj->nbi", R, child_pos)
    loads = newton_euler(
        model.parent,
        model.masses,
        model.inertias,
        motion,
        centres,
        gravity=model.gravity,
        f_ext=flat(fe, (nb, 6)),
    )
    F = loads.force[:, idx]
    M = loads.moment[:, idx]
    x = centres[:, idx]
    par = model.parent[idx]
    if on == "parent":
        # origin of the joint frame, fixed in the parent (the ground's for a root)
        jpos = np.array([model.bodies[i].position for i in idx], dtype=float).reshape(-1, 3)
        Rp = np.where((par >= 0)[None, :, None, None], R[:, np.maximum(par, 0)], np.eye(3))
        pp = np.where((par >= 0)[None, :, None], p[:, np.maximum(par, 0)], 0.0)
        o = pp + np.einsum("nbij,bj->nbi", Rp, jpos)
        M = -(M + np.cross(x - o, F))
        F = -F
        x = o
    names = model.body_names
    on_bodies = [names[i] if on == "child" else _name_of(names, model.parent[i]) for i in idx]
    frames, Rf, pf = _expressed_in(model, frame, idx, R, p)
    force = np.einsum("njki,njk->nji", Rf, F)  # Rfᵀ F
    moment = np.einsum("njki,njk->nji", Rf, M)
    point = np.einsum("njki,njk->nji", Rf, x - pf)
    shape = lambda z: z.reshape(batch + z.shape[1:])  # noqa: E731
    return JointReactionResult(
        shape(force),
        shape(moment),
        shape(point),
        joint_names=tuple(model.joint_names[i] for i in idx),
        body_names=tuple(on_bodies),
        frames=tuple(frames),
        on=on,
    )


def _name_of(names, i) -> str:
    return "ground" if i < 0 else names[i]


def _joint_indices(model, joints) -> list:
    names = list(model.joint_names)
    if joints is None:
        return list(range(model.n_bodies))
    if isinstance(joints, str):
        joints = [joints]
    if not isinstance(joints, (list, tuple)) or not all(isinstance(j, str) for j in joints):
        raise DataError(f"Expected `joints` to be a list of joint names (str), got {joints!r:.80}")
    out = []
    for j in joints:
        if j not in names:
            raise ModelError(
                f"`joints` names {j!r}, which model '{model.name}' does not have; joints: {names}"
            )
        out.append(names.index(j))
    return out


def _expressed_in(model, frame, idx, R, p):
    """Frame names and their world rotations (N, nj, 3, 3) and origins (N, nj, 3)."""
    if not isinstance(frame, str):
        raise DataError(
            f"`frame` must be 'child', 'parent', 'ground' or a body name, got {frame!r}"
        )
    names = model.body_names
    if frame == "child":
        bodies = list(idx)
    elif frame == "parent":
        bodies = [int(model.parent[i]) for i in idx]
    elif frame.lower() == "ground":
        bodies = [-1] * len(idx)
    elif frame in names:
        bodies = [names.index(frame)] * len(idx)
    else:
        raise ModelError(
            f"`frame` {frame!r} is not 'child', 'parent', 'ground' or a body of model "
            f"'{model.name}'; bodies: {names}"
        )
    b = np.array(bodies, dtype=int)
    g = b < 0
    Rf = np.where(g[None, :, None, None], np.eye(3), R[:, np.maximum(b, 0)])
    pf = np.where(g[None, :, None], 0.0, p[:, np.maximum(b, 0)])
    return [_name_of(names, i) for i in bodies], Rf, pf
