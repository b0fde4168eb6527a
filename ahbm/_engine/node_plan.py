"""The node plan of a model: what the compiled kernels run on (internal).

The public functions in :mod:`ahbm.dynamics.inverse` and
:mod:`ahbm.dynamics.forward` validate their input, then call the compiled
kernels through :mod:`ahbm._engine.dispatch`. A model is compiled once
(cached on the model) into a *node plan*: every joint becomes a chain of
elementary nodes, each with one constant transform followed by one primitive
motion,

* ``REV``: rotation about a unit axis (1 DOF),
* ``PRI``: translation along a unit axis (1 DOF),
* ``SPH``: rotation given by a unit quaternion ``(x, y, z, w)`` (3 DOF,
  velocity = angular velocity in the node frame),

with massless intermediate nodes (an ``euler`` joint is three ``REV`` nodes,
a ``free`` joint three ``PRI`` nodes and one ``SPH`` node, ...), and bodies
on fixed joints merged into the node that carries their parent (as
Pinocchio does). The motion subspace of every primitive is constant in the
node frame, so the velocity-product term is ``v × S q̇`` alone.

Spatial vectors are angular part first; motion ``[ω; v_O]``, force
``[n_O; f]``, both about the node-frame origin in node coordinates
(Featherstone 2008, §2). Node ``i`` relative to its parent node: rotation
``R = E R_J(q)`` and origin ``p = t + E d_J(q)``.

Custom joints and child offsets
-------------------------------
A ``custom`` joint (OpenSim's ``SpatialTransform``) becomes up to six nodes:
``PRI`` nodes for its translation axes, then ``REV`` nodes for its rotation
axes (Simbody's composition, see :mod:`ahbm.kinematics.joints`); an axis
without a coordinate (or with a constant function) is folded into the
constant transforms. The node coordinates of a model with custom joints are
``θ = [q; f_c(q_j(c))]``: the kernels run unchanged on ``θ`` (the nodes of the
other joints index its first ``nq`` entries; the custom nodes its last
``n_c``), with ``θ̇ = G q̇``, ``θ̈ = G q̈ + γ``, ``G = [I; D]``, ``D[c, j(c)] =
f_c'(q_j)``, ``γ_c = f_c''(q_j) q̇_j²`` (:class:`CustomMap`); results map back
by ``τ = Gᵀ τ_θ``, ``H = Gᵀ H_θ G``, DOF columns ``S_θ G`` and bias
accelerations ``a_θ + S_θ γ``; forward dynamics solves ``H q̈ = τ − h``.
Models without custom joints have no map and take the code paths as before.
The pose of a body relative to the last node of its joint (``body_E``,
``body_t``) carries the inverse child offset (and a trailing constant
rotation of a custom joint); inertias and external forces go through it.
"""

from __future__ import annotations

import math

import numpy as np

from ahbm._engine import backend
from ahbm._engine.arrays import PRI, REV, SPH
from ahbm.kinematics.functions import (
    Constant,
    LinearFunction,
    MultiplierFunction,
    NaturalCubicSpline,
    SimmSpline,
)
from ahbm.kinematics.joints import (
    CUSTOM,
    EULER,
    FIXED,
    FREE,
    FREE_EULER,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
)
from ahbm.kinematics.tree import Model

__all__ = [
    "Plan",
    "CustomMap",
    "plan",
    "node_forces",
]


_AXIS = {"X": 0, "Y": 1, "Z": 2}
#: Points up to which a custom joint's spline may be evaluated in numpy (the
#: compiled evaluation gives the same numbers; see :mod:`ahbm._engine.backend`).
_SMALL_SPLINE = 100_000


class Plan:
    """Node plan of a model (see the module docstring); arrays for the kernels.

    ``custom`` is None for a model without custom joints, else its
    :class:`CustomMap` (the node coordinates are then ``θ``, not ``q``).
    """

    __slots__ = (
        "parent", "kind", "E", "t", "plain", "axis", "principal", "qi", "vi", "nvj", "I6",
        "body_node", "body_E", "body_t", "node_body", "n", "fast", "massive", "g", "custom",
        "packed",
    )  # fmt: skip


class CustomMap:
    """Node coordinates ``θ`` of the custom-joint nodes as functions of ``q`` (internal).

    ``θ = [q; f_c(q[src_q[c]])]`` and ``θ̇ = [q̇; f_c' q̇[src_v[c]]]``; see the
    module docstring. ``support`` (n_bodies, n_c) marks the custom nodes on the
    path of each body.
    """

    __slots__ = (
        "nq", "nv", "n_c", "src_q", "src_v", "functions", "support", "linear", "slope",
        "intercept", "other", "splines", "_last",
    )  # fmt: skip

    def set_functions(self, functions) -> None:
        """Keep the functions; linear ones are evaluated together, splines compiled."""
        self.functions = tuple(functions)
        lin = [c for c, f in enumerate(functions) if type(f) is LinearFunction]
        self.linear = np.array(lin, dtype=np.int64)
        self.slope = np.array([functions[c].slope for c in lin], dtype=float)
        self.intercept = np.array([functions[c].intercept for c in lin], dtype=float)
        self.other = tuple(c for c in range(len(functions)) if c not in set(lin))
        self.splines = {c: s for c in self.other if (s := _spline_of(functions[c])) is not None}

    def derivatives(self, q, order=2):
        """θ_c, f_c' and f_c'' (N, n_c) at q (N, nq); derivatives above `order` are None.

        A single state's values are kept until the next call with another state: a
        step of a simulation asks for the kinematics, the RNEA and the mass matrix of
        one state in turn (the arrays returned are not to be modified).
        """
        N = q.shape[0]
        if N == 1:
            key = q.tobytes()
            last = getattr(self, "_last", None)
            if last is not None and last[0] == key:
                return last[1][: order + 1] + (None,) * (2 - order)
            out = self._derivatives(q, 2)
            self._last = (key, out[:3])
            return out[: order + 1] + (None,) * (2 - order)
        return self._derivatives(q, order)

    def _derivatives(self, q, order):
        N = q.shape[0]
        out = [np.empty((N, self.n_c)) for _ in range(order + 1)]
        if self.linear.size:
            x = q[:, self.src_q[self.linear]]
            out[0][:, self.linear] = x * self.slope + self.intercept
            if order >= 1:
                out[1][:, self.linear] = self.slope
            if order >= 2:
                out[2][:, self.linear] = 0.0
        for c in self.other:
            x = q[:, self.src_q[c]]
            spline = self.splines.get(c)
            if spline is None or not backend.use_compiled(N <= _SMALL_SPLINE):
                parts = self.functions[c].value_and_derivatives(x, order)
            else:
                from ahbm._engine.jit_functions import SPLINE_ROUNDOFF, simm_spline_derivatives

                parts = simm_spline_derivatives(spline[0], spline[1], x, SPLINE_ROUNDOFF)
            for d, v in enumerate(parts[: order + 1]):
                out[d][:, c] = v
        return tuple(out) + (None,) * (2 - order)

    def theta(self, q, val):
        return np.concatenate([q, val], axis=1)

    def rates(self, qd, d1):
        """θ̇ (N, nv + n_c)."""
        return np.concatenate([qd, d1 * qd[:, self.src_v]], axis=1)

    def gamma(self, qd, d2):
        """γ (N, n_c): the part of θ̈_c at q̈ = 0."""
        return d2 * qd[:, self.src_v] ** 2

    def accelerations(self, qd, qdd, d1, d2):
        """θ̈ (N, nv + n_c)."""
        return np.concatenate([qdd, d1 * qdd[:, self.src_v] + self.gamma(qd, d2)], axis=1)

    def D(self, d1):
        """∂θ_c/∂q (N, n_c, nv)."""
        N = d1.shape[0]
        D = np.zeros((N, self.n_c, self.nv))
        D[:, np.arange(self.n_c), self.src_v] = d1
        return D

    def forces(self, tau_theta, D):
        """τ = Gᵀ τ_θ (N, nv)."""
        return tau_theta[:, : self.nv] + np.einsum("nc,ncv->nv", tau_theta[:, self.nv :], D)

    def G(self, D):
        """G = ∂θ̇/∂q̇ (N, nv + n_c, nv)."""
        N = D.shape[0]
        G = np.zeros((N, self.nv + self.n_c, self.nv))
        G[:, np.arange(self.nv), np.arange(self.nv)] = 1.0
        G[:, self.nv :] = D
        return G


def _spline_of(f):
    """(SimmSpline, scales innermost first) of a (multiplied) SimmSpline, else None."""
    scales = []
    while type(f) is MultiplierFunction:
        scales.append(f.scale)
        f = f.function
    if type(f) not in (SimmSpline, NaturalCubicSpline):
        return None
    return f, tuple(reversed(scales))


def _unit(k):
    e = np.zeros(3)
    e[k] = 1.0
    return e


def _axis_rotation(a, angle):
    """Rotation by `angle` about the unit axis `a` (Rodrigues: I + sin K + (1 - cos) K²)."""
    x, y, z = (float(v) for v in a)
    s, v = math.sin(angle), 1.0 - math.cos(angle)
    return np.array(
        [
            [1.0 + v * (-z * z - y * y), -s * z + v * (x * y), s * y + v * (x * z)],
            [s * z + v * (x * y), 1.0 + v * (-z * z - x * x), -s * x + v * (y * z)],
            [-s * y + v * (x * z), s * x + v * (y * z), 1.0 + v * (-y * y - x * x)],
        ]
    )


def _custom_prims(joint, qi, vi, coords_q, custom):
    """Primitive steps of a custom joint: translations first, then rotations.

    Returns a list of ("node", kind, axis, c) or ("const", kind, axis, value);
    node coordinates are appended to ``custom`` (functions, source indices).
    """
    steps = []
    order = (3, 4, 5, 0, 1, 2)
    for k in order:
        ax = joint.transform[k]
        kind = PRI if k >= 3 else REV
        a = np.asarray(ax.axis, float)
        f = ax.function
        if ax.coordinate is None or f.is_constant:
            value = f.constant if type(f) is Constant else float(f.value(0.0))
            steps.append(("const", kind, a, value))
            continue
        j = coords_q[ax.coordinate]
        custom["functions"].append(ax.function)
        custom["src_q"].append(qi + j)
        custom["src_v"].append(vi + j)
        steps.append(("node", kind, a, len(custom["functions"]) - 1))
    return steps


def plan(model: Model) -> Plan:
    """Compile (once per model, cached) the node plan used by the kernels."""
    cache = model.cache
    if "kernel_plan" in cache:
        return cache["kernel_plan"]
    parent, kind, Es, ts, axes, qis, vis, nvs, owner = [], [], [], [], [], [], [], [], []
    loaded = []  # (node, body): the body's inertia goes to that node (summed after the loop)
    body_node = np.full(model.n_bodies, -1, dtype=np.int64)
    body_E = np.zeros((model.n_bodies, 3, 3))
    body_t = np.zeros((model.n_bodies, 3))
    I3 = np.eye(3)

    has_custom = bool(np.any(model.joint_codes == CUSTOM))
    custom = {"functions": [], "src_q": [], "src_v": []}
    node_custom = []  # custom index of each node, or -1
    nq, nv = int(model.nq), int(model.nv)

    def add_node(pn, k, ax, qk, vk, E, t, c=-1):
        parent.append(pn)
        kind.append(k)
        Es.append(E)
        ts.append(t)
        axes.append(ax)
        qis.append(qk)
        vis.append(vk)
        nvs.append(3 if k == SPH else 1)
        owner.append(-1)
        node_custom.append(c)
        return len(parent) - 1

    for i, body in enumerate(model.bodies):
        if body.parent < 0:
            pn, E1, t1 = -1, I3, np.zeros(3)
        else:
            P = body.parent
            pn, E1, t1 = int(body_node[P]), body_E[P], body_t[P]
        E = E1 @ body.rotation
        t = t1 + E1 @ body.position
        code = model.joint_codes[i]
        qi, vi = int(model.q_index[i]), int(model.v_index[i])
        prims = []  # (kind, axis, q index, v index)
        if code == FIXED:
            pass
        elif code == REVOLUTE:
            prims.append((REV, np.asarray(body.joint.axis, float), qi, vi))
        elif code == PRISMATIC:
            prims.append((PRI, np.asarray(body.joint.axis, float), qi, vi))
        elif code in (UNIVERSAL, EULER):
            for j, ch in enumerate(body.joint.sequence.upper()):
                prims.append((REV, _unit(_AXIS[ch]), qi + j, vi + j))
        elif code == FREE_EULER:
            for j in range(3):
                prims.append((PRI, _unit(j), qi + j, vi + j))
            for j, ch in enumerate(body.joint.sequence.upper()):
                prims.append((REV, _unit(_AXIS[ch]), qi + 3 + j, vi + 3 + j))
        elif code == PLANAR:
            prims += [(PRI, _unit(0), qi, vi), (PRI, _unit(1), qi + 1, vi + 1)]
            prims.append((REV, _unit(2), qi + 2, vi + 2))
        elif code == SPHERICAL:
            prims.append((SPH, np.zeros(3), qi, vi))
        elif code == FREE:
            for j in range(3):
                prims.append((PRI, _unit(j), qi + j, vi + j))
            prims.append((SPH, np.zeros(3), qi + 3, vi + 3))
        elif code != CUSTOM:  # pragma: no cover - Model validates joint types
            raise AssertionError(code)
        # the pending constant transform (E, t) goes into the next node
        moved = False
        if code == CUSTOM:
            coords_q = {c: j for j, c in enumerate(body.joint.coordinates)}
            for step, k, ax, val in _custom_prims(body.joint, qi, vi, coords_q, custom):
                if step == "const":
                    if k == PRI:
                        t = t + E @ (val * ax)
                    else:
                        E = E @ _axis_rotation(ax, val)
                    continue
                pn = add_node(pn, k, ax, nq + val, nv + val, E, t, val)
                E, t, moved = I3, np.zeros(3), True
        for k, ax, qk, vk in prims:
            pn = add_node(pn, k, ax, qk, vk, E, t)
            E, t, moved = I3, np.zeros(3), True
        if moved:
            owner[pn] = i
        # body frame relative to the last node (or the parent's node): the pending
        # transform, then the inverse child offset
        Ct = body.child_rotation.T
        bE = E @ Ct
        bt = t - bE @ body.child_position
        body_node[i], body_E[i], body_t[i] = pn, bE, bt
        if pn >= 0:
            loaded.append((pn, i))

    n = len(parent)
    # accumulated inertia of each node about its origin: each body's (mass m, COM c,
    # inertia Ic about the COM, body axes) with the body frame at rotation E, origin t
    # in its node's frame, all bodies at once
    mass, first, J = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    if loaded:
        nd, b = np.array(loaded, dtype=np.int64).T
        E, t = body_E[b], body_t[b]
        m = np.asarray(model.masses, dtype=float)[b]
        cn = t + np.einsum("bij,bj->bi", E, np.asarray(model.coms, dtype=float)[b])
        Jb = E @ np.asarray(model.inertias, dtype=float)[b] @ E.transpose(0, 2, 1)
        Jb += m[:, None, None] * (
            np.einsum("bi,bi->b", cn, cn)[:, None, None] * I3 - cn[:, :, None] * cn[:, None, :]
        )
        np.add.at(mass, nd, m)
        np.add.at(first, nd, m[:, None] * cn)
        np.add.at(J, nd, Jb)
    p = Plan()
    p.n = n
    p.parent = np.array(parent, dtype=np.int64)
    p.kind = np.array(kind, dtype=np.int64)
    p.E = np.array(Es, dtype=float).reshape(n, 3, 3)
    p.t = np.array(ts, dtype=float).reshape(n, 3)
    unrotated = (p.E == I3).all(axis=(1, 2))
    p.plain = unrotated & ~p.t.any(axis=1)
    p.axis = A = np.array(axes, dtype=float).reshape(n, 3)
    # principal axis index (0, 1, 2) when the axis is +e_k, else -1
    principal = (np.count_nonzero(A, axis=1) == 1) & (A.max(axis=1) == 1.0)
    p.principal = np.where(principal, A.argmax(axis=1), -1).astype(np.int64)
    # revolute nodes about +e_k with no constant rotation: specialized transforms
    p.fast = (p.kind == REV) & principal & unrotated
    p.massive = mass > 0
    p.qi = np.array(qis, dtype=np.int64)
    p.vi = np.array(vis, dtype=np.int64)
    p.nvj = np.array(nvs, dtype=np.int64)
    I6 = np.zeros((n, 6, 6))
    hx, hy, hz = first.T
    H = I6[:, :3, 3:]  # the cross-product matrix of each node's first moment
    H[:, 0, 1], H[:, 0, 2], H[:, 1, 0] = -hz, hy, hz
    H[:, 1, 2], H[:, 2, 0], H[:, 2, 1] = -hx, -hy, hx
    I6[:, :3, :3] = J
    I6[:, 3:, :3] = H.transpose(0, 2, 1)
    I6[:, 3:, 3:] = mass[:, None, None] * I3
    p.I6 = I6
    p.body_node, p.body_E, p.body_t = body_node, body_E, body_t
    p.node_body = np.array(owner, dtype=np.int64)
    p.custom = None
    if has_custom:
        cm = CustomMap()
        cm.nq, cm.nv = nq, nv
        cm.n_c = len(custom["functions"])
        cm.set_functions(custom["functions"])
        cm.src_q = np.array(custom["src_q"], dtype=np.int64)
        cm.src_v = np.array(custom["src_v"], dtype=np.int64)
        support = np.zeros((model.n_bodies, cm.n_c), dtype=bool)
        for b in range(model.n_bodies):
            nd = int(body_node[b])
            while nd >= 0:
                if node_custom[nd] >= 0:
                    support[b, node_custom[nd]] = True
                nd = int(p.parent[nd])
        cm.support = support
        p.custom = cm
    p.packed = None
    cache["kernel_plan"] = p
    return p


def node_forces(p: Plan, f_local_bodies, N):
    """External forces per node (N, n_nodes, 6) from body-frame forces.

    ``f_local_bodies`` is a list over bodies of (6, N) forces in body
    coordinates (as made by ``external_forces_local``).
    """
    fx = np.zeros((N, p.n, 6))
    for b, fb in enumerate(f_local_bodies):
        nd = p.body_node[b]
        if nd < 0 or not fb.any():
            continue  # a body welded to the ground (its load goes to the ground) or unloaded
        E, t = p.body_E[b], p.body_t[b]
        F = E @ fb[3:]  # (3, N)
        n_ = E @ fb[:3]
        n_[0] += t[1] * F[2] - t[2] * F[1]  # + t × F, written out (np.cross: ~20 us a call)
        n_[1] += t[2] * F[0] - t[0] * F[2]
        n_[2] += t[0] * F[1] - t[1] * F[0]
        fx[:, nd, :3] += n_.T
        fx[:, nd, 3:] += F.T
    return fx
