"""Compiled (numba) kernels for RNEA, CRBA and ABA (internal).

The public functions in :mod:`ahbm.dynamics.inverse` and
:mod:`ahbm.dynamics.forward` validate their input, then call these kernels.
A model is compiled once (cached on the model) into a *node plan*: every
joint becomes a chain of elementary nodes, each with one constant transform
followed by one primitive motion,

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

The kernels loop over frames inside compiled code: a whole trial is one
call, and a single state costs a few microseconds. They release the GIL, so
several threads can run them at once (e.g. trials in a thread pool); the
batch RNEA itself uses ``NUMBA_NUM_THREADS`` threads from 2,048 frames. The
compiled code lives in ``jit_common`` (shared helpers), ``jit_rnea``,
``jit_aba`` and ``jit_crba`` (CRBA and kinematics); this module is the
facade: the plan, the wrappers the public functions call, the single-state
entry points (``*_single``: no validation in Python, the kernel checks the
values) and compilation ahead of use. The independent coding of the same
algorithms that the tests compare with is :mod:`ahbm.dynamics.reference`.
"""

from __future__ import annotations

import math
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ahbm._engine.jit_aba import aba_block_kernel, aba_kernel
from ahbm._engine.jit_common import PRI, REV, SPH, sincos
from ahbm._engine.jit_crba import crba_kernel, kinematics_kernel
from ahbm._engine.jit_derivatives import (
    _DERIV_B,
    rnea_derivatives_block_kernel,
    rnea_derivatives_kernel,
    rnea_derivatives_world_kernel,
    spd_inverse_kernel,
)
from ahbm._engine.jit_functions import SPLINE_ROUNDOFF, simm_spline_derivatives
from ahbm._engine.jit_rnea import _B as _RNEA_B
from ahbm._engine.jit_rnea import rnea_block_kernel, rnea_frame_kernel
from ahbm.kinematics.functions import (
    Constant,
    LinearFunction,
    MultiplierFunction,
    NaturalCubicSpline,
    SimmSpline,
)
from ahbm.kinematics.tree import (
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
    Model,
)

__all__ = [
    "REV", "PRI", "SPH", "Plan", "CustomMap", "plan", "node_forces", "rnea", "crba", "aba",
    "failing_body", "kinematics", "sincos", "KERNELS", "is_compiled", "compile_kernels",
    "compile_in_background", "rnea_derivatives", "spd_inverse",
]  # fmt: skip

_AXIS = {"X": 0, "Y": 1, "Z": 2}


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
        "intercept", "other", "splines",
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
        """θ_c, f_c' and f_c'' (N, n_c) at q (N, nq); derivatives above `order` are None."""
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
            if spline is None:
                parts = self.functions[c].value_and_derivatives(x, order)
            else:
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


def _c(x):
    return np.ascontiguousarray(x, dtype=float)


_NO_FX = np.zeros((1, 1, 6))  # stands for "no external forces" (never written)
_ZERO3 = np.zeros(3)
_F64 = np.dtype(np.float64)


def _gravity(p: Plan, model: Model) -> np.ndarray:
    """The model's gravity as a writable float64 copy kept with the plan.

    (A model change, gravity included, gives a new plan.) One array type
    for every call keeps the kernels to one compiled specialization.
    """
    g = getattr(p, "g", None)
    if g is None:
        g = p.g = np.array(model.gravity, dtype=float)
    return g


# ----------------------------------------------------------------------------
# RNEA
# ----------------------------------------------------------------------------

_RNEA_BLOCK_MIN = 4  # fewer frames: the frame-by-frame kernel (no block set-up)
_PARALLEL_MIN = 2048  # frames from which the block kernel runs in several threads
_CHUNKS_PER_THREAD = 4


def _threads() -> int:
    """Threads for large batches: ``NUMBA_NUM_THREADS`` (default: the CPUs available)."""
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


_POOL = [None, 0, 0]  # executor, its size, the process it was made in


def _pool(n: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``n`` worker threads (remade after a fork)."""
    ex, size, pid = _POOL
    if ex is None or size != n or pid != os.getpid():
        if ex is not None and pid == os.getpid():
            ex.shutdown(wait=False)  # another size asked for: let the old workers end
        ex = ThreadPoolExecutor(max_workers=n, thread_name_prefix="ahbm-kernels")
        _POOL[:] = [ex, n, os.getpid()]
    return ex


def _split(N: int, n: int, block: int):
    """Frame ranges for n workers, each a whole number of blocks (the last one shorter)."""
    blocks = -(-N // block)
    per = -(-blocks // n) * block
    return [(a, min(a + per, N)) for a in range(0, N, per)]


def rnea(model: Model, q, qd, qdd, fx=None, gravity=True, *, check=False):
    """RNEA through the kernels; q (N, nq), qd/qdd (N, nv) or None; returns tau (N, nv).

    Below 4 frames the frame-by-frame kernel; otherwise the frame-block
    kernel, over ``_threads()`` threads from 2,048 frames on (ranges of whole
    blocks: the results are bitwise those of one thread). With ``check`` the
    kernels check finiteness and quaternion norms and the result is None if
    one fails (the frame-by-frame kernel always checks).
    """
    p = plan(model)
    if p.custom is not None:
        return _custom_rnea(model, p, q, qd, qdd, fx, gravity, check)
    N = q.shape[0]
    nv = model.nv
    tau = np.empty((N, nv))
    g = _gravity(p, model) if gravity else _ZERO3
    q = _c(q)
    qd = np.zeros((N, nv)) if qd is None else _c(qd)
    qdd = np.zeros((N, nv)) if qdd is None else _c(qdd)
    use_fx = fx is not None
    fx = _c(fx) if use_fx else _NO_FX
    if N < _RNEA_BLOCK_MIN:
        bad = rnea_frame_kernel(*_lean(model)[4], q, qd, qdd, fx, use_fx, g, tau)
        return None if bad and check else tau

    def run(a, b):
        return rnea_block_kernel(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.I6,
            p.fast, p.massive, q[a:b], qd[a:b], qdd[a:b], fx[a:b] if use_fx else fx, use_fx,
            g, tau[a:b], check,
        )  # fmt: skip

    n = _threads() if N >= _PARALLEL_MIN else 1
    if n == 1:
        return None if run(0, N) else tau
    # several ranges per thread, taken in turn by whichever thread is free: a
    # thread held up by other processes does not hold up the whole call
    ranges = iter(_split(N, _CHUNKS_PER_THREAD * n, _RNEA_B))  # next() is atomic

    def work():
        return max([run(a, b) for a, b in ranges], default=0)

    futures = [_pool(n - 1).submit(work) for _ in range(n - 1)]
    bad = work()
    for fut in futures:
        bad = max(bad, fut.result())
    return None if bad else tau


# ----------------------------------------------------------------------------
# CRBA
# ----------------------------------------------------------------------------


def crba(model: Model, q):
    """CRBA through the kernel; q (N, nq); returns H (N, nv, nv)."""
    if plan(model).custom is not None:
        return _custom_crba(model, plan(model), q)
    H = np.empty((q.shape[0], model.nv, model.nv))
    crba_kernel(*_lean(model)[4], _c(q), H)
    return H


# ----------------------------------------------------------------------------
# ABA
# ----------------------------------------------------------------------------


_ABA_BLOCK_MIN = 8  # fewer frames: the frame-by-frame kernel (no block set-up)


def aba(model: Model, q, qd, tau, fx=None):
    """ABA through the kernel. Returns (qdd (N, nv), failing node or -1)."""
    p = plan(model)
    if p.custom is not None:
        return _custom_aba(model, p, q, qd, tau, fx)
    N = q.shape[0]
    qdd = np.empty((N, model.nv))
    use_fx = fx is not None
    fx = _c(fx) if use_fx else _NO_FX
    args = (_c(q), _c(qd), _c(tau), fx, use_fx, _gravity(p, model), qdd)
    if N >= _ABA_BLOCK_MIN:
        bad = aba_block_kernel(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.nvj, p.I6,
            p.fast, *args,
        )  # fmt: skip
    else:
        bad = aba_kernel(*_lean(model)[4], *args)
    return qdd, int(bad)


def failing_body(p: Plan, node: int) -> int:
    """Body owning ``node`` (or the first body carried below it)."""
    for k in range(node, p.n):
        if p.node_body[k] >= 0:
            return int(p.node_body[k])
    return 0


# ----------------------------------------------------------------------------
# Single states without validation in Python (the public functions' lean path)
# ----------------------------------------------------------------------------


def _vec(x, n: int) -> bool:
    """x is a float64, C-contiguous ndarray of shape (n,) (the common single state)."""
    return type(x) is np.ndarray and x.dtype is _F64 and x.shape == (n,) and x.flags.c_contiguous


def _lean(model):
    """(plan, nq, nv, gravity, packed plan) of a Model, or None for anything else.

    Kept in ``model.cache`` (a model change gives a new one). The packed
    plan is what the frame-by-frame kernels take: ``ints`` (8, n) = parent,
    kind, principal, qi, vi, nvj, plain, massive; E; ``tax`` (2, n, 3) = t,
    axis; I6 (fewer arguments make a cheaper call).
    """
    if not isinstance(model, Model):
        return None
    lean = model.cache.get("kernel_lean")
    if lean is None:
        p = plan(model)
        if p.custom is not None:
            return None  # node coordinates are not q: the general path maps them
        lean = (p, int(model.nq), int(model.nv), _gravity(p, model), _packed(p))
        model.cache["kernel_lean"] = lean
    return lean


def _packed(p: Plan):
    """The plan packed for the frame-by-frame kernels (see :func:`_lean`), kept on the plan."""
    if p.packed is None:
        ints = np.array(
            [p.parent, p.kind, p.principal, p.qi, p.vi, p.nvj, p.plain, p.massive], dtype=np.int64
        )
        tax = np.ascontiguousarray(np.stack([p.t, p.axis]))
        p.packed = (ints, p.E, tax, p.I6)
    return p.packed


def _mat(x, N: int, n: int) -> bool:
    """x is a float64, C-contiguous ndarray of shape (N, n) (a common batch)."""
    return type(x) is np.ndarray and x.dtype is _F64 and x.shape == (N, n) and x.flags.c_contiguous


def rnea_single(model, q, qd, qdd):
    """tau of one state (nv,) or of a batch (N, nv), or None when the input needs validation.

    The lean path of the public functions: q (nq,), qd and qdd (nv,) (or
    (N, nq), (N, nv), (N, nv)) must be float64, C-contiguous ndarrays (qd/qdd
    may be None for zeros); the kernels check finiteness and quaternion
    norms. Anything else returns None and the caller validates in full
    (which then names the argument).
    """
    lean = _lean(model)
    if lean is None:
        return _custom_single(model, "rnea", q, qd, qdd)
    _, nq, nv, g, packed = lean
    if type(q) is np.ndarray and q.ndim == 2:  # a batch
        N = q.shape[0]
        qd = np.zeros((N, nv)) if qd is None else qd
        qdd = np.zeros((N, nv)) if qdd is None else qdd
        if not (_mat(q, N, nq) and _mat(qd, N, nv) and _mat(qdd, N, nv)):
            return None
        return rnea(model, q, qd, qdd, check=True)
    if qd is None:
        qd = np.zeros(nv)
    if qdd is None:
        qdd = np.zeros(nv)
    if not (_vec(q, nq) and _vec(qd, nv) and _vec(qdd, nv)):
        return None
    tau = np.empty(nv)
    if rnea_frame_kernel(*packed, q[None], qd[None], qdd[None], _NO_FX, False, g, tau[None]):
        return None
    return tau


def crba_single(model, q):
    """H (nv, nv) of one state, or None (see :func:`rnea_single`)."""
    lean = _lean(model)
    if lean is None:
        return _custom_single(model, "crba", q)
    _, nq, nv, _, packed = lean
    if not _vec(q, nq):
        return None
    H = np.empty((nv, nv))
    if crba_kernel(*packed, q[None], H[None]):
        return None
    return H


def aba_single(model, q, qd, tau):
    """qdd (nv,) of one state, or None (see :func:`rnea_single`; also on a singular D)."""
    lean = _lean(model)
    if lean is None:
        return _custom_single(model, "aba", q, qd, tau)
    _, nq, nv, g, packed = lean
    if not (_vec(q, nq) and _vec(qd, nv) and _vec(tau, nv)):
        return None
    qdd = np.empty(nv)
    if aba_kernel(*packed, q[None], qd[None], tau[None], _NO_FX, False, g, qdd[None]) != -1:
        return None
    return qdd


# ----------------------------------------------------------------------------
# Kinematics for constraints and force elements
# ----------------------------------------------------------------------------


def kinematics(model: Model, q, qd=None, *, columns=True):
    """Body poses, velocities, bias accelerations and world DOF columns (batch first).

    Returns ``(Rw (N, nb, 3, 3), pw (N, nb, 3), v, a (N, nb, 6) or None,
    Sw (N, 6, nv) or None)``; ``columns=False`` skips ``Sw``.
    """
    p = plan(model)
    if p.custom is not None:
        return _custom_kinematics(model, p, q, qd, columns)
    N = q.shape[0]
    nb = model.n_bodies
    Rw = np.empty((N, nb, 3, 3))
    pw = np.empty((N, nb, 3))
    use_qd = qd is not None
    v = np.zeros((N, nb, 6)) if use_qd else np.zeros((1, 1, 6))
    a = np.zeros((N, nb, 6)) if use_qd else np.zeros((1, 1, 6))
    Sw = np.zeros((N, 6, model.nv)) if columns else np.zeros((1, 6, 1))
    ints, E, tax, _ = _lean(model)[4]
    kinematics_kernel(
        ints, E, tax, p.body_node, p.body_E, p.body_t, _c(q),
        _c(qd) if use_qd else np.zeros((1, 1)), use_qd, columns, Rw, pw, v, a, Sw,
    )  # fmt: skip
    return Rw, pw, (v if use_qd else None), (a if use_qd else None), (Sw if columns else None)


# ----------------------------------------------------------------------------
# Models with custom joints: the kernels on the node coordinates θ(q)
# ----------------------------------------------------------------------------


def _theta_state(p: Plan, q, qd=None, qdd=None, *, columns=True):
    """θ, θ̇, θ̈, D and γ for q (N, nq), qd, qdd (N, nv) (None where not needed)."""
    cm = p.custom
    q = _c(q)
    val, d1, d2 = cm.derivatives(q, 2 if qd is not None else int(columns))
    th = _c(cm.theta(q, val))
    if qd is None:
        return th, None, None, (cm.D(d1) if columns else None), None
    qd = _c(qd)
    qdd = np.zeros_like(qd) if qdd is None else _c(qdd)
    thd = _c(cm.rates(qd, d1))
    thdd = _c(cm.accelerations(qd, qdd, d1, d2))
    return th, thd, thdd, cm.D(d1), cm.gamma(qd, d2)


def _custom_rnea(model, p, q, qd, qdd, fx, gravity, check):
    """RNEA of a model with custom joints: ``τ = Gᵀ RNEA(θ, θ̇, G q̈ + γ)``."""
    cm = p.custom
    N = q.shape[0]
    qd = np.zeros((N, cm.nv)) if qd is None else qd
    th, thd, thdd, D, _ = _theta_state(p, q, qd, qdd)
    nth = cm.nv + cm.n_c
    tau_th = np.zeros((N, nth))
    g = _gravity(p, model) if gravity else _ZERO3
    use_fx = fx is not None
    fxa = _c(fx) if use_fx else _NO_FX
    if N < _RNEA_BLOCK_MIN:
        bad = rnea_frame_kernel(*_packed(p), th, thd, thdd, fxa, use_fx, g, tau_th)
    else:
        bad = rnea_block_kernel(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.I6,
            p.fast, p.massive, th, thd, thdd, fxa, use_fx, g, tau_th, check,
        )  # fmt: skip
    if bad and check:
        return None
    return cm.forces(tau_th, D)


def _custom_crba(model, p, q):
    """Mass matrix of a model with custom joints: ``H = Gᵀ H_θ G``."""
    cm = p.custom
    N = q.shape[0]
    th, _, _, D, _ = _theta_state(p, q)
    nth = cm.nv + cm.n_c
    H_th = np.empty((N, nth, nth))
    crba_kernel(*_packed(p), th, H_th)
    G = cm.G(D)
    H = np.matmul(np.swapaxes(G, 1, 2), np.matmul(H_th, G))
    return 0.5 * (H + np.swapaxes(H, 1, 2))


def _custom_aba(model, p, q, qd, tau, fx):
    """Forward dynamics of a model with custom joints: ``H q̈ = τ − h`` (Cholesky per frame)."""
    h = _custom_rnea(model, p, q, qd, None, fx, True, False)
    H = _custom_crba(model, p, q)
    rhs = _c(tau) - h
    N = q.shape[0]
    qdd = np.empty_like(rhs)
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        L = None
    if L is not None:
        y = np.linalg.solve(L, rhs[..., None])
        qdd[:] = np.linalg.solve(np.swapaxes(L, 1, 2), y)[..., 0]
        if np.all(np.isfinite(qdd)):
            return qdd, -1
    # find the first frame and coordinate where H is not positive definite
    for fr in range(N):
        try:
            np.linalg.cholesky(H[fr])
        except np.linalg.LinAlgError:
            return qdd, _singular_node(p, H[fr])
    return qdd, _singular_node(p, H[0])


def _singular_node(p: Plan, H) -> int:
    """A node of the coordinate whose pivot fails in the Cholesky factorization of H."""
    n = H.shape[0]
    k_bad = 0
    for k in range(1, n + 1):
        if np.linalg.eigvalsh(H[:k, :k])[0] <= 1e-12 * max(1.0, abs(H).max()):
            k_bad = k - 1
            break
    cm = p.custom
    for nd in range(p.n):
        vi = p.vi[nd]
        if vi == k_bad or (vi >= cm.nv and cm.src_v[vi - cm.nv] == k_bad):
            return nd
    return 0


def _custom_single(model, kind, q, qd=None, x=None):
    """The lean path (see :func:`rnea_single`) of a model with custom joints, or None."""
    if not isinstance(model, Model):
        return None
    p = plan(model)
    if p.custom is None:
        return None
    nq, nv = model.nq, model.nv
    batch = kind == "rnea" and type(q) is np.ndarray and q.ndim == 2
    if batch:
        N = q.shape[0]
        qd = np.zeros((N, nv)) if qd is None else qd
        x = np.zeros((N, nv)) if x is None else x
        if not (_mat(q, N, nq) and _mat(qd, N, nv) and _mat(x, N, nv)):
            return None
    else:
        if kind != "crba":
            qd = np.zeros(nv) if qd is None else qd
            x = np.zeros(nv) if x is None else x
            if not (_vec(qd, nv) and _vec(x, nv)):
                return None
        if not _vec(q, nq) or not np.all(np.isfinite(q)):
            return None
        q, qd, x = q[None], None if qd is None else qd[None], None if x is None else x[None]
    if kind == "rnea":
        out = _custom_rnea(model, p, q, qd, x, None, True, True)
    elif kind == "crba":
        out = _custom_crba(model, p, q)
        out = out if np.all(np.isfinite(out)) else None
    else:
        if not (np.all(np.isfinite(qd)) and np.all(np.isfinite(x))):
            return None
        out, bad = _custom_aba(model, p, q, qd, x, None)
        out = out if bad == -1 else None
    if out is None or batch:
        return out
    return out[0]


def _custom_kinematics(model, p, q, qd, columns):
    """Kinematics of a model with custom joints (see :func:`kinematics`).

    DOF columns ``S_θ G``; bias accelerations ``a_θ + X (S_θ γ)`` on each body's path.
    """
    cm = p.custom
    N = q.shape[0]
    nb = model.n_bodies
    th, thd, _, D, gamma = _theta_state(p, q, qd, columns=columns)
    nth = cm.nv + cm.n_c
    Rw = np.empty((N, nb, 3, 3))
    pw = np.empty((N, nb, 3))
    use_qd = qd is not None
    v = np.zeros((N, nb, 6)) if use_qd else np.zeros((1, 1, 6))
    a = np.zeros((N, nb, 6)) if use_qd else np.zeros((1, 1, 6))
    need_cols = columns or use_qd
    Sw = np.zeros((N, 6, nth)) if need_cols else np.zeros((1, 6, 1))
    ints, E, tax, _ = _packed(p)
    kinematics_kernel(
        ints, E, tax, p.body_node, p.body_E, p.body_t, th,
        thd if use_qd else np.zeros((1, 1)), use_qd, need_cols, Rw, pw, v, a, Sw,
    )  # fmt: skip
    if use_qd and cm.n_c:
        Sc = Sw[:, :, cm.nv :]  # (N, 6, n_c)
        A = np.einsum("nrc,nc,bc->nbr", Sc, gamma, cm.support.astype(float))  # world, origin
        w = A[..., :3]
        lin = A[..., 3:] + np.cross(w, pw)
        a[..., :3] += np.einsum("nbji,nbj->nbi", Rw, w)
        a[..., 3:] += np.einsum("nbji,nbj->nbi", Rw, lin)
    Sq = None
    if columns:
        Sq = Sw[:, :, : cm.nv] + np.matmul(Sw[:, :, cm.nv :], D)
    return Rw, pw, (v if use_qd else None), (a if use_qd else None), Sq


# ----------------------------------------------------------------------------
# Analytic RNEA derivatives (jit_derivatives; see ahbm.dynamics.derivatives)
# ----------------------------------------------------------------------------

_DERIV_PARALLEL_MIN = 256  # frames from which the derivative kernel runs in several threads


def _subtrees(model: Model, p: Plan):
    """Subtree node lists in CSR form (ptr (n + 1,), idx; each node first), in ``model.cache``."""
    sub = model.cache.get("kernel_subtrees")
    if sub is None or sub[0].shape[0] != p.n + 1:
        kids = [[k] for k in range(p.n)]
        for k in range(p.n - 1, 0, -1):  # parents come before their children
            lam = p.parent[k]
            if lam >= 0:
                kids[lam] += kids[k]
        lists = [[k] + sorted(ks[1:]) for k, ks in enumerate(kids)]
        ptr = np.zeros(p.n + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(x) for x in lists])
        idx = np.array([x for ks in lists for x in ks], dtype=np.int64)
        sub = (ptr, idx)
        model.cache["kernel_subtrees"] = sub
    return sub


def _rnea_derivatives_theta(model, p, th, thd, thdd, fx, fx_world, method="block", out=None):
    """tau_θ, ∂τ_θ/∂θ, ∂τ_θ/∂θ̇, M_θ (node coordinates) of all frames; None on a bad input.

    ``method="block"`` (the one used): the composite world-frame formulas on
    blocks of ``_DERIV_B`` frames (SIMD over the frames), frame by frame below
    ``_DERIV_B`` frames; ``"world"``: the same formulas frame by frame;
    ``"tangent"``: the node-frame tangent propagation (an independent coding
    the tests compare with; M from the CRBA kernel). ``out``: (tau (N, nθ),
    dq, dqd, M (N, nθ, nθ)) C-contiguous float64 arrays written instead of new
    ones (models without custom joints: every entry is written).
    """
    N = th.shape[0]
    nth = thd.shape[1]
    if out is not None:
        tau, dq, dqd, M = out
    else:
        tau = np.zeros((N, nth))  # rows of custom-joint coordinates have no node
        dq = np.empty((N, nth, nth))  # the kernels write every entry
        dqd = np.empty((N, nth, nth))
        M = np.empty((N, nth, nth))
    use_fx = fx is not None
    fxa = _c(fx) if use_fx else np.zeros((1, 1, 6))
    ptr, idx = _subtrees(model, p)
    packed = _packed(p)
    g = _gravity(p, model)

    def run(a, b):
        fxr = fxa[a:b] if use_fx else fxa
        if method == "tangent":
            return rnea_derivatives_kernel(
                *packed, ptr, idx, th[a:b], thd[a:b], thdd[a:b], fxr, use_fx, fx_world, g,
                tau[a:b], dq[a:b], dqd[a:b],
            ) or crba_kernel(*packed, th[a:b], M[a:b])  # fmt: skip
        kernel = rnea_derivatives_world_kernel
        if method == "block" and b - a >= _DERIV_B:
            kernel = rnea_derivatives_block_kernel
        return kernel(
            *packed, ptr, idx, th[a:b], thd[a:b], thdd[a:b], fxr, use_fx, fx_world, g,
            tau[a:b], dq[a:b], dqd[a:b], M[a:b],
        )  # fmt: skip

    n = _threads() if N >= _DERIV_PARALLEL_MIN else 1
    if n == 1:
        bad = run(0, N)
    else:
        ranges = iter(_split(N, _CHUNKS_PER_THREAD * n, _DERIV_B))

        def work():
            return max([run(a, b) for a, b in ranges], default=0)

        futures = [_pool(n - 1).submit(work) for _ in range(n - 1)]
        bad = work()
        for fut in futures:
            bad = max(bad, fut.result())
    return None if bad else (tau, dq, dqd, M)


def spd_inverse(M, out=None):
    """(M⁻¹ (N, n, n), -1) for symmetric positive-definite M (N, n, n), by Cholesky.

    Or (None, f) when frame f is not positive definite. Exactly symmetric;
    about half the flops of an LU inversion and no per-matrix LAPACK call.
    ``out``: a C-contiguous float64 (N, n, n) array written instead of a new one.
    """
    M = _c(M)
    N, n = M.shape[0], M.shape[-1]
    out = np.empty_like(M) if out is None else out

    def run(a, b):
        bad = spd_inverse_kernel(M[a:b], out[a:b], np.zeros((n, n)), np.zeros((n, n)))
        return a + bad if bad >= 0 else N

    nt = _threads() if N >= _DERIV_PARALLEL_MIN else 1
    if nt == 1:
        bad = run(0, N)
    else:  # whole ranges per thread (the kernel releases the GIL)
        futures = [_pool(nt - 1).submit(run, a, b) for a, b in _split(N, nt, 16)[1:]]
        bad = min([run(*_split(N, nt, 16)[0])] + [f.result() for f in futures])
    return (None, bad) if bad < N else (out, -1)


def rnea_derivatives(model: Model, q, qd, qdd, fx=None, fx_world=False, method="block", out=None):
    """τ, ∂τ/∂q (tangent), ∂τ/∂q̇, M of all frames ((N, nv), (N, nv, nv) × 3), or None.

    q (N, nq), qd/qdd (N, nv); ``fx`` (N, n_nodes, 6) node forces at q (see
    :func:`node_forces`) or None; ``fx_world``: they are fixed in the world.
    None when an input is not finite or a quaternion is zero. Models with
    custom joints: the chain rule through ``θ(q)`` (see
    :mod:`ahbm.dynamics.derivatives`). ``out``: (τ, ∂τ/∂q, ∂τ/∂q̇, M)
    C-contiguous float64 arrays of those shapes, written and returned instead
    of new ones (custom joints: the last products write into them).
    """
    p = plan(model)
    q, qd, qdd = _c(q), _c(qd), _c(qdd)
    if p.custom is None:
        return _rnea_derivatives_theta(model, p, q, qd, qdd, fx, fx_world, method, out)
    cm = p.custom
    nv, N = cm.nv, q.shape[0]
    th, thd, thdd, D, _ = _theta_state(p, q, qd, qdd)
    _, _, d2 = cm.derivatives(q, 2)
    res = _rnea_derivatives_theta(model, p, th, thd, thdd, fx, fx_world, method)
    if res is None:
        return None
    tau_th, K, C, M_th = res
    d3 = _third_derivatives(cm, q, d2)
    qd_s, qdd_s = qd[:, cm.src_v], qdd[:, cm.src_v]
    cols = np.arange(cm.n_c)
    G = cm.G(D)
    # ∂θ̇_c/∂q, ∂θ̈_c/∂q, ∂θ̈_c/∂q̇ (the custom rows; the others are zero)
    Dd = np.zeros((N, cm.n_c, nv))
    Dd[:, cols, cm.src_v] = d2 * qd_s
    Ad = np.zeros((N, cm.n_c, nv))
    Ad[:, cols, cm.src_v] = d2 * qdd_s + d3 * qd_s**2
    Gam = np.zeros((N, cm.n_c, nv))
    Gam[:, cols, cm.src_v] = 2.0 * d2 * qd_s
    Gt = np.swapaxes(G, 1, 2)
    C_c, M_c = C[:, :, nv:], M_th[:, :, nv:]
    o_tau, o_dq, o_dqd, o_M = (None,) * 4 if out is None else out
    dq = np.matmul(Gt, K @ G + C_c @ Dd + M_c @ Ad, out=o_dq)
    # (∂Gᵀ/∂q) τ_θ: D[c, j] = f_c'(q_j) gives f_c'' τ_θ,c at the entry (j, j)
    for c in range(cm.n_c):
        j = cm.src_v[c]
        dq[:, j, j] += d2[:, c] * tau_th[:, nv + c]
    dqd = np.matmul(Gt, C @ G + M_c @ Gam, out=o_dqd)
    H = Gt @ M_th @ G
    M = np.add(H, np.swapaxes(H, 1, 2), out=o_M)
    np.multiply(M, 0.5, out=M)
    tau = cm.forces(tau_th, D)
    if o_tau is not None:
        o_tau[...] = tau
        tau = o_tau
    return tau, dq, dqd, M


def _third_derivatives(cm: CustomMap, q, d2, rel=1e-4):
    """f_c''' (N, n_c): zero for linear functions, else a central difference of f_c''.

    (The joint functions give derivatives up to the second; f''' enters
    ∂θ̈/∂q through γ = f'' q̇² only.)
    """
    d3 = np.zeros_like(d2)
    for c in cm.other:
        x = q[:, cm.src_q[c]]
        h = rel * np.maximum(1.0, np.abs(x))
        fn = cm.functions[c]
        up = fn.value_and_derivatives(x + h, 2)[2]
        dn = fn.value_and_derivatives(x - h, 2)[2]
        d3[:, c] = (up - dn) / (2.0 * h)
    return d3


# ----------------------------------------------------------------------------
# Compilation ahead of use (numba compiles a kernel on its first call)
# ----------------------------------------------------------------------------

#: The compiled kernel behind each kind of call.
KERNELS = {
    "rnea": rnea_block_kernel,  # 4 frames or more
    "rnea_single": rnea_frame_kernel,  # fewer frames, single states
    "aba": aba_block_kernel,  # 8 frames or more
    "aba_single": aba_kernel,
    "crba": crba_kernel,
    "kinematics": kinematics_kernel,
    "rnea_derivatives": rnea_derivatives_world_kernel,  # fewer than _DERIV_B frames
    "rnea_derivatives_block": rnea_derivatives_block_kernel,
}


def is_compiled(names) -> bool:
    """True if the kernels of `names` (keys of ``KERNELS``) need no compilation.

    Either they ran in this process, or numba's disk cache holds them for
    the current source. Best effort: numba has no public query for its cache,
    so an unreadable cache counts as "not compiled".
    """
    for name in names:
        disp = KERNELS[name]
        try:
            if disp.overloads:
                continue
            if not disp._cache._cache_file._load_index():  # {} when missing or stale
                return False
        except Exception:  # noqa: BLE001 - private numba API; any failure means "unknown"
            return False
    return True


def compile_kernels(names=tuple(KERNELS)) -> None:
    """Compile the kernels of `names` now (or load them from numba's disk cache).

    Each kernel has one specialization (the wrappers above pass the same
    array types on every call), so a call on a two-body model with the
    types of a real call compiles exactly what later calls use.
    """
    m = Model("compile")
    m.add_body("a", "ground", {"type": "free"}, mass=1.0, inertia=np.eye(3))
    m.add_body("b", "a", {"type": "revolute", "axis": [0, 1, 0]}, mass=1.0, com=[0, 0, -0.5])
    n = max(_RNEA_BLOCK_MIN, _ABA_BLOCK_MIN)
    q = np.zeros((n, m.nq))
    q[:, 6] = 1.0
    z = np.zeros((n, m.nv))
    calls = {
        "rnea": lambda: rnea(m, q, z, z),
        "rnea_single": lambda: rnea(m, q[:1], z[:1], z[:1]),
        "aba": lambda: aba(m, q, z, z),
        "aba_single": lambda: aba(m, q[:1], z[:1], z[:1]),
        "crba": lambda: crba(m, q),
        "kinematics": lambda: kinematics(m, q, z),
        "rnea_derivatives": lambda: rnea_derivatives(m, q[:1], z[:1], z[:1]),
        "rnea_derivatives_block": lambda: rnea_derivatives(
            m, np.repeat(q[:1], _DERIV_B, 0), *(np.zeros((_DERIV_B, m.nv)),) * 2
        ),
    }
    for name in names:
        calls[name]()


def compile_in_background(names) -> subprocess.Popen:
    """Start a Python process that compiles the kernels of `names` into numba's disk cache.

    numba compiles one function at a time per process; a second process uses
    a second core. Wait for it (``.wait()``) before the first call of those
    kernels here, which then loads them from the cache.
    """
    from ahbm._internal.files import python_child

    code = f"from ahbm._engine.kernels import compile_kernels; compile_kernels({tuple(names)!r})"
    cmd, env = python_child(code)  # isolated: never imports files of the current folder
    return subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
