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

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ahbm._engine.jit_aba import aba_block_kernel, aba_kernel
from ahbm._engine.jit_common import PRI, REV, SPH, sincos
from ahbm._engine.jit_crba import crba_kernel, kinematics_kernel
from ahbm._engine.jit_rnea import _B as _RNEA_B
from ahbm._engine.jit_rnea import rnea_block_kernel, rnea_frame_kernel
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
)

__all__ = [
    "REV", "PRI", "SPH", "Plan", "plan", "node_forces", "rnea", "crba", "aba", "failing_body",
    "kinematics", "sincos", "KERNELS", "is_compiled", "compile_kernels", "compile_in_background",
]  # fmt: skip

_AXIS = {"X": 0, "Y": 1, "Z": 2}


class Plan:
    """Node plan of a model (see the module docstring); arrays for the kernels."""

    __slots__ = (
        "parent", "kind", "E", "t", "plain", "axis", "principal", "qi", "vi", "nvj", "I6",
        "body_node", "body_E", "body_t", "node_body", "n", "fast", "massive", "g",
    )  # fmt: skip


def _unit(k):
    e = np.zeros(3)
    e[k] = 1.0
    return e


def plan(model: Model) -> Plan:
    """Compile (once per model, cached) the node plan used by the kernels."""
    cache = model.cache
    if "kernel_plan" in cache:
        return cache["kernel_plan"]
    parent, kind, Es, ts, axes, qis, vis, nvs, owner = [], [], [], [], [], [], [], [], []
    mass, first, J = [], [], []  # accumulated inertia of each node about its origin
    body_node = np.full(model.n_bodies, -1, dtype=np.int64)
    body_E = np.zeros((model.n_bodies, 3, 3))
    body_t = np.zeros((model.n_bodies, 3))
    I3 = np.eye(3)

    def add_inertia(nd, m, c, Ic, E, t):
        # body inertia (mass m, COM c, inertia Ic about the COM, body axes) with the
        # body frame at rotation E, origin t in node nd's frame
        cn = t + E @ c
        mass[nd] += m
        first[nd] += m * cn
        J[nd] += E @ Ic @ E.T + m * (cn @ cn * I3 - np.outer(cn, cn))

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
        if code == FIXED:
            body_node[i], body_E[i], body_t[i] = pn, E, t
            if pn >= 0:
                add_inertia(pn, model.masses[i], model.coms[i], model.inertias[i], E, t)
            continue
        prims = []  # (kind, axis, q index, v index)
        if code == REVOLUTE:
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
        else:  # pragma: no cover - Model validates joint types
            raise AssertionError(code)
        for j, (k, ax, qk, vk) in enumerate(prims):
            parent.append(pn)
            kind.append(k)
            Es.append(E if j == 0 else I3)
            ts.append(t if j == 0 else np.zeros(3))
            axes.append(ax)
            qis.append(qk)
            vis.append(vk)
            nvs.append(3 if k == SPH else 1)
            owner.append(-1)
            mass.append(0.0)
            first.append(np.zeros(3))
            J.append(np.zeros((3, 3)))
            pn = len(parent) - 1
        owner[pn] = i
        body_node[i], body_E[i], body_t[i] = pn, I3, np.zeros(3)
        add_inertia(pn, model.masses[i], model.coms[i], model.inertias[i], I3, np.zeros(3))

    n = len(parent)
    p = Plan()
    p.n = n
    p.parent = np.array(parent, dtype=np.int64)
    p.kind = np.array(kind, dtype=np.int64)
    p.E = np.array(Es, dtype=float).reshape(n, 3, 3)
    p.t = np.array(ts, dtype=float).reshape(n, 3)
    p.plain = np.array(
        [np.array_equal(e, I3) and not np.any(tt) for e, tt in zip(Es, ts, strict=True)],
        dtype=np.bool_,
    )
    p.axis = np.array(axes, dtype=float).reshape(n, 3)
    # principal axis index (0, 1, 2) when the axis is +e_k, else -1
    p.principal = np.array(
        [int(np.argmax(a)) if np.count_nonzero(a) == 1 and a.max() == 1.0 else -1 for a in axes],
        dtype=np.int64,
    )
    # revolute nodes about +e_k with no constant rotation: specialized transforms
    p.fast = np.array(
        [
            k == REV and pr >= 0 and np.array_equal(e, I3)
            for k, pr, e in zip(kind, p.principal, Es, strict=True)
        ],
        dtype=np.bool_,
    )
    p.massive = np.array([m_ > 0 for m_ in mass], dtype=np.bool_)
    p.qi = np.array(qis, dtype=np.int64)
    p.vi = np.array(vis, dtype=np.int64)
    p.nvj = np.array(nvs, dtype=np.int64)
    I6 = np.zeros((n, 6, 6))
    for k in range(n):
        h = first[k]
        H = np.array([[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]])
        I6[k, :3, :3] = J[k]
        I6[k, :3, 3:] = H
        I6[k, 3:, :3] = H.T
        I6[k, 3:, 3:] = mass[k] * I3
    p.I6 = I6
    p.body_node, p.body_E, p.body_t = body_node, body_E, body_t
    p.node_body = np.array(owner, dtype=np.int64)
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
        if nd < 0:
            continue  # a body welded to the ground: its load goes to the ground
        E, t = p.body_E[b], p.body_t[b]
        F = (E @ fb[3:]).T  # (N, 3)
        n_ = (E @ fb[:3]).T + np.cross(t, F)
        fx[:, nd, :3] += n_
        fx[:, nd, 3:] += F
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
        ints = np.array(
            [p.parent, p.kind, p.principal, p.qi, p.vi, p.nvj, p.plain, p.massive], dtype=np.int64
        )
        tax = np.ascontiguousarray(np.stack([p.t, p.axis]))
        lean = (p, int(model.nq), int(model.nv), _gravity(p, model), (ints, p.E, tax, p.I6))
        model.cache["kernel_lean"] = lean
    return lean


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
        return None
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
        return None
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
        return None
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
    }
    for name in names:
        calls[name]()


def compile_in_background(names) -> subprocess.Popen:
    """Start a Python process that compiles the kernels of `names` into numba's disk cache.

    numba compiles one function at a time per process; a second process uses
    a second core. Wait for it (``.wait()``) before the first call of those
    kernels here, which then loads them from the cache.
    """
    code = f"from ahbm._engine.kernels import compile_kernels; compile_kernels({tuple(names)!r})"
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
