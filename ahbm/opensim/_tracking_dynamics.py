"""The model's dynamics under ideal actuators and external loads, one state at a time (internal).

:class:`IdealActuatorDynamics` is the ``dynamics`` argument of
:func:`ahbm.opensim.cmc_tracking.track_kinematics` for OpenSim's
CoordinateActuators, PointActuators and TorqueActuators: each state is one
forward-kinematics pass, one RNEA with the external loads (and the point and
torque actuators as world wrenches) and one CRBA, through the compiled kernels
(or their numpy codings) without the per-call validation of the public
functions, since the loop calls them 7,500 times for a 2.5 s walk.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import node_plan as _node_plan
from ahbm.dynamics.inverse import external_forces_local
from ahbm.errors import ModelError, SimulationError
from ahbm.kinematics.forward import forward_kinematics
from ahbm.opensim.so_setup import CoordinateActuatorSpec, PointActuatorSpec, TorqueActuatorSpec


def _body(model, name: str, actuator) -> int | None:
    if name.lower() == "ground":
        return None
    if name not in model.body_names:
        raise ModelError(
            f"{type(actuator).__name__.removesuffix('Spec')} '{actuator.name}' acts on body "
            f"'{name}', which model '{model.name}' does not have; bodies: {model.body_names} "
            "(or ground); correct the actuator file"
        )
    return model.body_index(name)


class IdealActuatorDynamics:
    """Forward dynamics and its linear dependence on the actuations at one state.

    Parameters
    ----------
    model : Model
    actuators : sequence
        CoordinateActuatorSpec, PointActuatorSpec, TorqueActuatorSpec (the
        actuation of each is its force or torque, N or N m).
    f_ext : callable or None
        ``f_ext(times)`` → world spatial forces (len(times), n_bodies, 6) of
        the external loads, independent of the state.
    """

    def __init__(self, model, actuators, f_ext=None):
        self.model = model
        self.plan = _node_plan.plan(model)
        names = list(model.coordinate_names)
        self.coord_cols, self.coord_index, self.wrench_acts = [], [], []
        for j, a in enumerate(actuators):
            if isinstance(a, CoordinateActuatorSpec):
                if a.coordinate not in names or model.nq != model.nv:
                    raise ModelError(
                        f"CoordinateActuator '{a.name}' acts on coordinate '{a.coordinate}', "
                        f"which model '{model.name}' does not have; coordinates: {names}"
                    )
                self.coord_cols.append(j)
                self.coord_index.append(names.index(a.coordinate))
            elif isinstance(a, PointActuatorSpec):
                self.wrench_acts.append((j, a, _body(model, a.body, a), None))
            elif isinstance(a, TorqueActuatorSpec):
                self.wrench_acts.append(
                    (j, a, _body(model, a.body_a, a), _body(model, a.body_b, a))
                )
            else:  # pragma: no cover - read_actuators returns these three only
                raise ModelError(f"actuator {a!r} is not an ideal actuator")
        self.n_act = len(actuators)
        self._f_ext_fn = f_ext
        self.w_ext = None

    def prepare(self, times) -> None:
        """Evaluate the external loads at every time the tracking loop will need."""
        nb = self.model.n_bodies
        times = np.asarray(times, dtype=float)
        if self._f_ext_fn is None:
            self.w_ext = np.zeros((times.size, nb, 6))
        else:
            self.w_ext = np.ascontiguousarray(self._f_ext_fn(times))

    def unit_wrenches(self, R, o) -> np.ndarray:
        """World wrenches (n_wrench_acts, n_bodies, 6) of the point/torque actuators per unit
        actuation, at body poses `R` (n_bodies, 3, 3) and `o` (n_bodies, 3)."""
        W = np.zeros((len(self.wrench_acts), self.model.n_bodies, 6))
        for k, (_, a, b, b2) in enumerate(self.wrench_acts):
            if isinstance(a, PointActuatorSpec):
                if b is None:
                    continue  # a force on the ground moves nothing
                d = np.asarray(a.direction)
                d = d if a.force_is_global else R[b] @ d
                p = np.asarray(a.point) if a.point_is_global else o[b] + R[b] @ np.asarray(a.point)
                W[k, b, :3] = _cross(p, d)
                W[k, b, 3:] = d
            else:
                axis = np.asarray(a.axis)
                if not a.torque_is_global and b is not None:
                    axis = R[b] @ axis
                if b is not None:
                    W[k, b, :3] += axis
                if b2 is not None:
                    W[k, b2, :3] -= axis
        return W

    def _pose(self, q, kin=None):
        if kin is None:
            kin = forward_kinematics(self.model, q[None])
        nb = self.model.n_bodies
        return kin.rotations.reshape(nb, 3, 3), kin.positions.reshape(nb, 3)

    def _node_forces(self, R, o, W):
        """Kernel node forces (N, n_nodes, 6) of world wrenches W (N, n_bodies, 6) at one pose."""
        F = W[..., 3:]
        n = W[..., :3] - _cross(o[None], F)
        nl = np.einsum("bji,Nbj->biN", R, n)
        fl = np.einsum("bji,Nbj->biN", R, F)
        local = [np.concatenate([nl[b], fl[b]]) for b in range(R.shape[0])]
        return _node_plan.node_forces(self.plan, local, W.shape[0])

    def accelerations(self, i, q, u, f, tau=None, kin=None) -> np.ndarray:
        """``q̈`` at window time `i` (index of the prepared times minus one) under actuations `f`
        and further generalized forces `tau` (nv,) (muscles, in CMC); `kin`: the forward
        kinematics of `q` (one frame) when already computed."""
        model = self.model
        tau = np.zeros(model.nv) if tau is None else np.array(tau, dtype=float)
        if self.coord_cols:
            np.add.at(tau, self.coord_index, f[self.coord_cols])
        R, o = self._pose(q, kin)
        w = self.w_ext[i + 1]
        if self.wrench_acts:
            W = self.unit_wrenches(R, o)
            w = w + np.einsum("k,kbs->bs", f[[j for j, *_ in self.wrench_acts]], W)
        q1 = q[None]
        h = _dispatch.rnea(model, q1, u[None], None, self._node_forces(R, o, w[None]))[0]
        M = _dispatch.crba(model, q1)[0]
        return _solve(M, tau - h)

    def linear(self, i, q, u, extra=None):
        """``(A, b0)``: ``q̈ = A f + b0`` at window time `i`, A (nv, n_act).

        `extra` (nv, k): further generalized-force columns (muscles' moment arms, in CMC),
        whose accelerations are appended to A as its last k columns.

        One RNEA over ``2 + n`` copies of the state: with the external loads (``h``), at
        rest without loads (gravity ``g``), and at rest under each unit actuator wrench
        (``g − Jᵀ w``); the actuator columns are ``Jᵀ w``.
        """
        model = self.model
        R, o = self._pose(q)
        n_w = len(self.wrench_acts)
        W = np.zeros((2 + n_w, model.n_bodies, 6))
        W[0] = self.w_ext[i + 1]
        if n_w:
            W[2:] = self.unit_wrenches(R, o)
        qq = np.repeat(q[None], 2 + n_w, axis=0)
        uu = np.zeros((2 + n_w, model.nv))
        uu[0] = u
        tau = _dispatch.rnea(model, qq, uu, None, self._node_forces(R, o, W))
        M = _dispatch.crba(model, q[None])[0]
        G = np.zeros((model.nv, self.n_act))
        for j, k in zip(self.coord_cols, self.coord_index, strict=True):
            G[k, j] += 1.0
        if n_w:
            G[:, [j for j, *_ in self.wrench_acts]] = (tau[1] - tau[2:]).T
        if extra is not None:
            G = np.concatenate([G, extra], axis=1)
        sol = _solve(M, np.concatenate([G, -tau[0][:, None]], axis=1))
        return sol[:, :-1], sol[:, -1]

    def generalized_columns(self, q) -> np.ndarray:
        """Generalized forces per unit actuation, (N, nv, n_act), at the states `q` (N, nq)."""
        N, nv = q.shape[0], self.model.nv
        G = np.zeros((N, nv, self.n_act))
        for j, k in zip(self.coord_cols, self.coord_index, strict=True):
            G[:, k, j] += 1.0
        n_w = len(self.wrench_acts)
        if not n_w:
            return G
        kin = forward_kinematics(self.model, q)
        nb = self.model.n_bodies
        Rs = kin.rotations.reshape(N, nb, 3, 3)
        os_ = kin.positions.reshape(N, nb, 3)
        W = np.stack([self.unit_wrenches(Rs[n], os_[n]) for n in range(N)])  # (N, n_w, nb, 6)
        qq = np.repeat(q, n_w, axis=0)
        kk = forward_kinematics(self.model, qq)
        fl = external_forces_local(self.model, W.reshape(N * n_w, nb, 6), (N * n_w,), "world",
                                   kin=kk)  # fmt: skip
        fx = _node_plan.node_forces(self.plan, fl, N * n_w)
        tau = -_dispatch.rnea(self.model, qq, None, None, fx, gravity=False)
        G[:, :, [j for j, *_ in self.wrench_acts]] = tau.reshape(N, n_w, nv).transpose(0, 2, 1)
        return G


def _cross(a, b):
    """a × b along the last axis (np.cross costs ~20 us a call)."""
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _solve(M, rhs):
    try:
        return np.linalg.solve(M, rhs)
    except np.linalg.LinAlgError as err:
        raise SimulationError(
            "the mass matrix is singular; give every body of the model mass and inertia"
        ) from err
