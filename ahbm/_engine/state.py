"""The kinematic state and the point kinematics built on it (internal module).

:class:`Kinematics` is public (``ahbm.kinematics.Kinematics``, returned by
:func:`ahbm.kinematics.forward_kinematics`); it is defined here so that every
package can use it and the functions below without importing each other.

One pass of the compiled kernel (:func:`ahbm._engine.dispatch.kinematics`)
gives, for all frames at once, the world pose of every body, the body
velocities, the bias accelerations (``q̈ = 0``) and, when first needed, the
world motion columns of every degree of freedom. Everything else (points,
Jacobians, ``J̇ q̇``, accelerations for a given ``q̈``) is derived from those
arrays by the functions of this module, which work *batch last* (see
:mod:`ahbm._engine.checks`): a point is ``(3, N)``, a point Jacobian
``(3, nv, N)``. The public functions of :mod:`ahbm.kinematics.forward`, the
marker IK, the force elements and the constraints all call them. The point
formulas themselves (world point, point velocity and acceleration, point
Jacobian columns) are written once, in :mod:`ahbm._engine.jit_points`: these
functions run its compiled loops over frames, and the single-state
constrained right-hand side of ``simulate`` calls the same helpers.

Passing a state (``kin=``)
--------------------------
Functions that accept ``kin=`` use its arrays instead of recomputing them
(:func:`resolve`): the state arguments ``q`` (and ``qd``, ``qdd``) may then be
None; if they are given too they must hold the same values as the state (else
:class:`~ahbm.errors.DataError`). A state made for another model, or without
the velocities a function needs, raises a :class:`~ahbm.errors.DataError`
that says what to pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ahbm._engine import dispatch as _dispatch
from ahbm._engine.arrays import cross, mv_bl
from ahbm._engine.checks import prepare
from ahbm._internal.validation import check_model
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr


class _PointKernels:
    """:mod:`ahbm._engine.jit_points`, imported on first use (numba loads with it)."""

    def __getattr__(self, name):
        from ahbm._engine import jit_points

        return getattr(jit_points, name)


_jp = _PointKernels()

#: Points × frames up to which a short command computes world points and their
#: Jacobians in numpy before numba is loaded (``ahbm._engine.backend``).
_SMALL_POINTS = 2_000_000


def _numpy_points(kin, n_points: int) -> bool:
    """Whether the point functions run their numpy coding for this call."""
    from ahbm._engine.backend import use_compiled

    return not use_compiled(n_points * kin.n_frames <= _SMALL_POINTS)


__all__ = ["Kinematics", "compute", "resolve"]


def _frozen(x):
    if x is not None:
        x.flags.writeable = False
    return x


@dataclass(frozen=True, repr=False, eq=False)
class Kinematics(ResultRepr):
    """Kinematic state of a model for a batch of configurations (see :func:`forward_kinematics`).

    Attributes
    ----------
    model : Model
        The model the state was computed for.
    q : ndarray, shape (..., nq)
    qd : ndarray, shape (..., nv) or None
    qdd : ndarray, shape (..., nv) or None
        The state it was computed from (read-only copies).
    rotations : ndarray, shape (..., n_bodies, 3, 3)
        World rotation of each body frame (``world_R_body``).
    positions : ndarray, shape (..., n_bodies, 3)
        World position of each body-frame origin, m.
    velocities : ndarray, shape (..., n_bodies, 6) or None
        Body spatial velocities ``[ω; v_O]`` in body coordinates (None without ``qd``).
    bias_accelerations : ndarray, shape (..., n_bodies, 6) or None
        Body spatial accelerations at ``q̈ = 0`` (velocity-product terms, no
        gravity), body coordinates (None without ``qd``).

    Notes
    -----
    Derived, computed when first used: ``transforms`` (..., n_bodies, 4, 4);
    ``accelerations`` (..., n_bodies, 6), the body spatial accelerations
    ``a = a_bias + i_X_0 Σ S_k q̈_k`` (None without ``qdd``);
    ``world_columns`` (..., 6, nv), the world motion vector ``[ω; v]`` (linear
    part at the world origin) of each unit generalized velocity.
    """

    model: Model
    q: np.ndarray
    qd: np.ndarray | None
    qdd: np.ndarray | None
    rotations: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    bias_accelerations: np.ndarray | None

    # -- derived quantities ------------------------------------------------------
    @property
    def batch_shape(self) -> tuple:
        """Batch shape of the state (``q.shape[:-1]``)."""
        return self.q.shape[:-1]

    @property
    def n_frames(self) -> int:
        """Number of states in the batch (product of the batch shape)."""
        return math.prod(self.batch_shape)

    @cached_property
    def transforms(self) -> np.ndarray:
        """World pose of each body frame, shape (..., n_bodies, 4, 4)."""
        nb = self.model.n_bodies
        T = np.zeros(self.batch_shape + (nb, 4, 4))
        T[..., :3, :3] = self.rotations
        T[..., :3, 3] = self.positions
        T[..., 3, 3] = 1.0
        return _frozen(T)

    @cached_property
    def world_columns(self) -> np.ndarray:
        """World motion vector of each unit generalized velocity, shape (..., 6, nv)."""
        Sw = self._Sw_flat
        return Sw.reshape(self.batch_shape + (6, self.model.nv))

    @cached_property
    def accelerations(self) -> np.ndarray | None:
        """Body spatial accelerations (..., n_bodies, 6), body coordinates (None without qdd)."""
        if self.qdd is None:
            return None
        a = body_accelerations(self, self.qdd.reshape(self.n_frames, self.model.nv))
        return _frozen(a.reshape(self.batch_shape + (self.model.n_bodies, 6)))

    # -- flat (N, ...) and batch-last views used by the engine functions ------------
    @cached_property
    def _Sw_flat(self) -> np.ndarray:
        Sw = _dispatch.kinematics(self.model, self._q_flat, None)[4]
        return _frozen(Sw)

    @cached_property
    def _q_flat(self) -> np.ndarray:
        return np.ascontiguousarray(self.q.reshape(self.n_frames, self.model.nq))

    @cached_property
    def _Rw(self) -> np.ndarray:
        """(n_bodies, 3, 3, N) view."""
        return self.rotations.reshape(self.n_frames, self.rotations.shape[-3], 3, 3).transpose(
            1, 2, 3, 0
        )

    @cached_property
    def _pw(self) -> np.ndarray:
        """(n_bodies, 3, N) view."""
        return self.positions.reshape(self.n_frames, self.positions.shape[-2], 3).transpose(1, 2, 0)

    @cached_property
    def _v(self) -> np.ndarray:
        """(n_bodies, 6, N) view of the body velocities."""
        return _frames_first(velocities_required(self), self.n_frames).transpose(1, 2, 0)

    @cached_property
    def _a0(self) -> np.ndarray:
        """(n_bodies, 6, N) view of the bias accelerations."""
        velocities_required(self)
        return _frames_first(self.bias_accelerations, self.n_frames).transpose(1, 2, 0)

    @cached_property
    def _columns(self) -> dict:
        return {}

    # (N, n_bodies, ...) views for the compiled frame loops of jit_points
    @cached_property
    def _Rw_n(self) -> np.ndarray:
        return self.rotations.reshape(self.n_frames, self.rotations.shape[-3], 3, 3)

    @cached_property
    def _pw_n(self) -> np.ndarray:
        return self.positions.reshape(self.n_frames, self.positions.shape[-2], 3)

    @cached_property
    def _v_n(self) -> np.ndarray:
        return _frames_first(velocities_required(self), self.n_frames)

    @cached_property
    def _a0_n(self) -> np.ndarray:
        velocities_required(self)
        return _frames_first(self.bias_accelerations, self.n_frames)


def compute(model: Model, q, qd=None, qdd=None, *, columns: bool = False) -> Kinematics:
    """Validate the state and run the kinematics kernel once (``columns``: DOF columns too)."""
    if qdd is not None and qd is None:
        raise DataError("`qdd` given without `qd`; pass the velocities too")
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd, transpose=False)
    Rw, pw, v, a, Sw = _dispatch.kinematics(model, qf, qdf, columns=columns)
    nb, N = model.n_bodies, qf.shape[0]

    def keep(x, tail):
        if x is None:
            return None
        x = np.array(x, dtype=float, copy=True).reshape(batch + tail)
        return _frozen(x)

    kin = Kinematics(
        model,
        keep(qf, (model.nq,)),
        keep(qdf, (model.nv,)),
        keep(qddf, (model.nv,)),
        _frozen(Rw.reshape(batch + (nb, 3, 3))),
        _frozen(pw.reshape(batch + (nb, 3))),
        None if v is None else _frozen(v.reshape(batch + (nb, 6))),
        None if a is None else _frozen(a.reshape(batch + (nb, 6))),
    )
    if columns:
        kin.__dict__["_Sw_flat"] = _frozen(Sw.reshape(N, 6, model.nv))
    kin.__dict__["_model_version"] = model.version
    return kin


def _same(name, given, stored, batch):
    """Check that an explicitly given state array matches the one stored in `kin`."""
    if given is None or given is stored:
        return
    arr = np.asarray(given, dtype=float)
    if stored is None:
        raise DataError(
            f"`kin` was computed without `{name}`; pass kin=forward_kinematics(model, q, qd"
            f"{', qdd' if name == 'qdd' else ''}) or leave kin=None"
        )
    if arr.shape[:-1] != batch and arr.shape != stored.shape:
        raise DataError(
            f"`{name}` has batch shape {arr.shape[:-1]} but `kin` was computed for batch shape "
            f"{batch}; pass {name}=None with kin=, or a kin of this batch shape"
        )
    if not np.array_equal(np.broadcast_to(arr, stored.shape), stored):
        raise DataError(
            f"`{name}` differs from the `{name}` that `kin` was computed from; pass {name}=None "
            "to use the state in `kin`, or recompute kin"
        )


def resolve(
    model: Model, kin, q, qd=None, qdd=None, *, needs_qd: bool = False, columns: bool = False
) -> Kinematics:
    """The state to use: `kin` after checking it against the arguments, or a new one.

    ``needs_qd``: the caller needs velocities (a state without them is an
    error; without `kin`, `qd=None` means zeros, docs/api-rules.md §4).
    ``columns``: compute the DOF columns in the same kernel pass when a new
    state is made.
    """
    if kin is None:
        check_model(model)
        if q is None:
            raise DataError("`q` is None; pass the coordinates q or a state kin=")
        if needs_qd and qd is None:
            qd = np.zeros(np.shape(q)[:-1] + (model.nv,))
        return compute(model, q, qd, qdd, columns=columns)
    if not isinstance(kin, Kinematics):
        raise DataError(
            f"`kin` must be a Kinematics from forward_kinematics(model, q, ...), got "
            f"{type(kin).__name__}"
        )
    if kin.model is not model:
        raise DataError(
            f"`kin` was computed for model '{kin.model.name}', not for this model "
            f"'{getattr(model, 'name', model)}'; pass kin=forward_kinematics(model, q, ...) "
            "made with this model"
        )
    if kin.__dict__.get("_model_version") != model.version:
        raise DataError(
            f"model '{model.name}' has changed since `kin` was computed; recompute "
            "kin=forward_kinematics(model, q, ...)"
        )
    if needs_qd and kin.qd is None and qd is None:
        raise DataError(
            "`kin` was computed without velocities, which this function needs; pass "
            "kin=forward_kinematics(model, q, qd)"
        )
    batch = kin.batch_shape
    _same("q", q, kin.q, batch)
    _same("qd", qd, kin.qd, batch)
    if qdd is not None and kin.qdd is not None:
        _same("qdd", qdd, kin.qdd, batch)
    return kin


def velocities_required(kin: Kinematics) -> np.ndarray:
    if kin.velocities is None:
        raise DataError(
            "`kin` was computed without velocities, which this quantity needs; pass "
            "kin=forward_kinematics(model, q, qd)"
        )
    return kin.velocities


# ----------------------------------------------------------------------------
# bodies, points and Jacobians (batch last; body index -1 is the ground)
# ----------------------------------------------------------------------------


def out(kin: Kinematics, x: np.ndarray) -> np.ndarray:
    """Batch-last result (k..., N) -> batch-first (..., k...)."""
    return np.moveaxis(x, -1, 0).reshape(kin.batch_shape + x.shape[:-1])


def q_flat(kin: Kinematics) -> np.ndarray:
    """Coordinates (N, nq) of the state, batch axes flattened."""
    return kin.q.reshape(kin.n_frames, kin.model.nq)


def qd_flat(kin: Kinematics) -> np.ndarray:
    """Velocities (N, nv) of the state, batch axes flattened."""
    if kin.qd is None:
        velocities_required(kin)
    return kin.qd.reshape(kin.n_frames, kin.model.nv)


def q_bl(kin: Kinematics) -> np.ndarray:
    """Coordinates (nq, N) of the state, batch last."""
    return kin.q.reshape(kin.n_frames, kin.model.nq).T


def qd_bl(kin: Kinematics) -> np.ndarray:
    """Velocities (nv, N) of the state, batch last."""
    if kin.qd is None:
        velocities_required(kin)
    return kin.qd.reshape(kin.n_frames, kin.model.nv).T


def rotation_bl(kin: Kinematics, b: int) -> np.ndarray:
    """World rotation (3, 3, N) of body b (identity for the ground)."""
    if b < 0:
        return np.broadcast_to(np.eye(3)[:, :, None], (3, 3, kin.n_frames))
    return kin._Rw[b]


def origin_bl(kin: Kinematics, b: int) -> np.ndarray:
    """World origin (3, N) of body b."""
    if b < 0:
        return np.zeros((3, kin.n_frames))
    return kin._pw[b]


def _lead(shape: tuple, n_trailing: int) -> int:
    """Product of the leading axes (explicit, so that 0-frame batches reshape too)."""
    return int(np.prod(shape[: len(shape) - n_trailing], dtype=np.int64))


def _frames_first(x: np.ndarray, n_frames: int) -> np.ndarray:
    """(..., nb, 6) -> (N, nb, 6) with explicit sizes (valid for N = 0)."""
    return x.reshape(n_frames, x.shape[-2], 6)


def point_bl(kin: Kinematics, b: int, r) -> np.ndarray:
    """World position (..., 3, N) of body points r (..., 3, N or 1) (r itself on the ground)."""
    if b < 0:
        return np.broadcast_to(r, r.shape[:-1] + (kin.n_frames,)).copy()
    r = np.asarray(r, dtype=float)
    r3 = np.ascontiguousarray(r.reshape((_lead(r.shape, 2),) + r.shape[-2:]))
    if _numpy_points(kin, r3.shape[0]):  # p = R r + o, frames last
        R = kin._Rw_n[:, b]  # (N, 3, 3)
        p = np.einsum("nij,mjn->min", R, np.broadcast_to(r3, r3.shape[:2] + (kin.n_frames,)))
        p += kin._pw_n[:, b].T[None]
    else:
        p = np.empty(r3.shape[:2] + (kin.n_frames,))
        _jp.points_world_loop(kin._Rw_n, kin._pw_n, b, r3, p)
    return p.reshape(r.shape[:-1] + (kin.n_frames,))


def point_velocity_bl(kin: Kinematics, b: int, r) -> np.ndarray:
    """World velocity (3, N) of the body point r: ``R (v_O + ω × r)``."""
    if b < 0:
        return np.zeros((3, kin.n_frames))
    r = np.asarray(r, dtype=float)
    r = np.ascontiguousarray(r.reshape(3, r.size // 3))
    vel = np.empty((3, kin.n_frames))
    _jp.point_velocity_loop(kin._Rw_n, kin._v_n, b, r, vel)
    return vel


def _point_acc(kin, b, r, a, ka):
    """World acceleration (3, N) of the body point r for body accelerations a[:, ka] (N, k, 6)."""
    r = np.asarray(r, dtype=float)
    r = np.ascontiguousarray(r.reshape(3, r.size // 3))
    acc = np.empty((3, kin.n_frames))
    _jp.point_acceleration_loop(kin._Rw_n, kin._v_n, a, b, ka, r, acc)
    return acc


def point_bias_acceleration_bl(kin: Kinematics, b: int, r) -> np.ndarray:
    """World acceleration (3, N) of the body point r when q̈ = 0 (the ``J̇ q̇`` term).

    ``R (a_O + α × r + ω × (v_O + ω × r))`` with the bias acceleration ``[α; a_O]``
    (Featherstone 2008, §2.11); no gravity.
    """
    if b < 0:
        return np.zeros((3, kin.n_frames))
    return _point_acc(kin, b, r, kin._a0_n, b)


def point_acceleration_bl(kin: Kinematics, b: int, r, qdd_flat) -> np.ndarray:
    """World acceleration (3, N) of the body point r for accelerations qdd (N, nv)."""
    if b < 0:
        return np.zeros((3, kin.n_frames))
    a = body_accelerations(kin, qdd_flat, bodies=[b])  # (N, 1, 6)
    return _point_acc(kin, b, r, a, 0)


def angular_velocity_bl(kin: Kinematics, b: int) -> np.ndarray:
    """World angular velocity (3, N) of body b."""
    if b < 0:
        return np.zeros((3, kin.n_frames))
    return mv_bl(kin._Rw[b], kin._v[b][:3])


def angular_bias_acceleration_bl(kin: Kinematics, b: int) -> np.ndarray:
    """World angular acceleration (3, N) of body b when q̈ = 0."""
    if b < 0:
        return np.zeros((3, kin.n_frames))
    return mv_bl(kin._Rw[b], kin._a0[b][:3])


def body_columns_bl(kin: Kinematics, b: int):
    """Support columns of body b: dof indices, world angular and linear parts (3, k, N).

    The linear part is the velocity of the body point at the world origin.
    """
    cols = kin._columns
    if b not in cols:
        dofs = kin.model.support_dofs[b]
        S = kin._Sw_flat[:, :, dofs].transpose(1, 2, 0)  # (6, k, N)
        cols[b] = (dofs, S[:3], S[3:])
    return cols[b]


def points_jacobian_bl(kin: Kinematics, b: int, p) -> np.ndarray:
    """Jacobians (..., 3, nv, N) of world points p (..., 3, N) moving with body b.

    Column k on the path to b: ``v_k + ω_k × p`` with the world column
    ``[ω_k; v_k]`` (velocity at the world origin), i.e. ``J_p = J_v − [p]× J_ω``.
    """
    J = np.zeros(p.shape[:-1] + (kin.model.nv, kin.n_frames))
    if b < 0:
        return J
    dofs = kin.model.support_dofs[b]
    if dofs.size:
        p3 = np.ascontiguousarray(
            np.asarray(p, dtype=float).reshape((_lead(p.shape, 2),) + p.shape[-2:])
        )
        if _numpy_points(kin, p3.shape[0]):  # v_c + ω_c × p, frames last
            S = kin._Sw_flat[:, :, dofs].transpose(1, 2, 0)  # (6, k, N)
            w, v = S[None, :3], S[None, 3:]  # (1, 3, k, N)
            q = p3[:, :, None, :]  # (M, 3, 1, N)
            Jk = np.empty(p3.shape[:2] + (dofs.size, kin.n_frames))
            Jk[:, 0] = v[:, 0] + (w[:, 1] * q[:, 2] - w[:, 2] * q[:, 1])
            Jk[:, 1] = v[:, 1] + (w[:, 2] * q[:, 0] - w[:, 0] * q[:, 2])
            Jk[:, 2] = v[:, 2] + (w[:, 0] * q[:, 1] - w[:, 1] * q[:, 0])
            J.reshape(p3.shape[:2] + J.shape[-2:])[:, :, dofs] = Jk
        else:
            _jp.points_jacobian_loop(kin._Sw_flat, np.asarray(dofs, dtype=np.int64), p3,
                                     J.reshape(p3.shape[:2] + J.shape[-2:]))  # fmt: skip
    return J


def point_jacobian_bl(kin: Kinematics, b: int, r) -> np.ndarray:
    """Jacobian (3, nv, N) of the world position of the body point r (3, N or 1)."""
    if b < 0:
        return np.zeros((3, kin.model.nv, kin.n_frames))
    return points_jacobian_bl(kin, b, point_bl(kin, b, r))


def angular_jacobian_bl(kin: Kinematics, b: int) -> np.ndarray:
    """Jacobian (3, nv, N) of the world angular velocity of body b."""
    J = np.zeros((3, kin.model.nv, kin.n_frames))
    if b < 0:
        return J
    dofs, w, _ = body_columns_bl(kin, b)
    J[:, dofs] = w
    return J


def body_accelerations(kin: Kinematics, qdd_flat, bodies=None) -> np.ndarray:
    """Body spatial accelerations (N, k, 6), body coordinates, for qdd (N, nv).

    ``a_i = a_bias,i + i_X_0 Σ_{k ∈ support(i)} [ω_k; v_k] q̈_k``.
    """
    model = kin.model
    velocities_required(kin)
    bodies = range(model.n_bodies) if bodies is None else bodies
    N = kin.n_frames
    Sw = kin._Sw_flat
    a0 = kin.bias_accelerations.reshape(N, model.n_bodies, 6)
    Rw = kin.rotations.reshape(N, model.n_bodies, 3, 3)
    pw = kin.positions.reshape(N, model.n_bodies, 3)
    out_ = np.empty((N, len(bodies), 6))
    for n, b in enumerate(bodies):
        dofs = model.support_dofs[b]
        A = np.einsum("nrk,nk->nr", Sw[:, :, dofs], qdd_flat[:, dofs])  # world, at origin
        w = A[:, :3]
        lin = A[:, 3:] + cross(w, pw[:, b])  # velocity at the body origin
        out_[:, n, :3] = np.einsum("nji,nj->ni", Rw[:, b], w)
        out_[:, n, 3:] = np.einsum("nji,nj->ni", Rw[:, b], lin)
        out_[:, n] += a0[:, b]
    return out_
