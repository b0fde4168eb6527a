"""The facade of the compiled (numba) kernels: RNEA, CRBA, ABA and RNEA derivatives.

The public functions of :mod:`ahbm.dynamics` and :mod:`ahbm.kinematics`
validate their input, then call the wrappers here, which run the kernels on
the node plan of the model (:mod:`ahbm._engine.node_plan`, cached on the
model).

The kernels loop over frames inside compiled code: a whole trial is one
call, and a single state costs a few microseconds. They release the GIL, so
several threads can run them at once (e.g. trials in a thread pool); the
batch RNEA itself uses ``NUMBA_NUM_THREADS`` threads from 2,048 frames. The
compiled code lives in ``jit_common`` (shared helpers), ``jit_rnea``,
``jit_aba``, ``jit_crba`` (CRBA and kinematics) and ``jit_derivatives``;
this module is the facade: the wrappers the public functions call, the
single-state entry points (``*_single``: no validation in Python, the kernel
checks the values) and the analytic RNEA derivatives. Compilation ahead of
use is in :mod:`ahbm._engine.compilation`. The independent coding of the same
algorithms that the tests compare with is :mod:`ahbm.dynamics.reference`.

The compiled kernels load on the first call that needs one (numba is not
imported before). Inside a short command's ``backend.numpy_while_small()``
block, and before numba is loaded, kinematics and RNEA of a small batch run
the numpy codings of :mod:`ahbm._engine.numpy_kernels` instead (the same
formulas along frames; see :mod:`ahbm._engine.backend`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ahbm._engine import backend
from ahbm._engine.node_plan import CustomMap, Plan, plan
from ahbm.kinematics.tree import Model

__all__ = [
    "rnea",
    "crba",
    "aba",
    "failing_body",
    "kinematics",
    "rnea_single",
    "crba_single",
    "aba_single",
    "rnea_derivatives",
    "spd_inverse",
]


# ----------------------------------------------------------------------------
# The compiled kernels, loaded on first use
# ----------------------------------------------------------------------------
# Importing numba and loading the kernels costs a process about 0.6 s; a short
# command may never need them (ahbm._engine.backend). Each name below stands in
# for a compiled kernel until the first call of any of them, which imports them
# all and rebinds these names to numba's dispatchers.

_KERNEL_MODULES = {
    "aba_block_kernel": "jit_aba",
    "aba_kernel": "jit_aba",
    "crba_kernel": "jit_crba",
    "kinematics_kernel": "jit_crba",
    "rnea_derivatives_kernel": "jit_derivatives",
    "rnea_derivatives_world_kernel": "jit_derivatives",
    "rnea_derivatives_block_kernel": "jit_derivatives_block",
    "spd_inverse_kernel": "jit_derivatives_block",
    "rnea_block_kernel": "jit_rnea",
    "rnea_frame_kernel": "jit_rnea",
}


class _CompiledKernel:
    """Stand-in for a compiled kernel: loads the kernels, then runs the real one."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args):
        load_compiled()
        return globals()[self.name](*args)

    def __repr__(self) -> str:
        return f"<compiled kernel {self.name}, not loaded yet>"


def load_compiled() -> None:
    """Import numba's kernels and bind this module's kernel names to them."""
    import importlib

    g = globals()
    for name, module in _KERNEL_MODULES.items():
        if isinstance(g[name], _CompiledKernel):
            g[name] = getattr(importlib.import_module(f"ahbm._engine.{module}"), name)


aba_block_kernel = _CompiledKernel("aba_block_kernel")
aba_kernel = _CompiledKernel("aba_kernel")
crba_kernel = _CompiledKernel("crba_kernel")
kinematics_kernel = _CompiledKernel("kinematics_kernel")
rnea_derivatives_kernel = _CompiledKernel("rnea_derivatives_kernel")
rnea_derivatives_world_kernel = _CompiledKernel("rnea_derivatives_world_kernel")
rnea_derivatives_block_kernel = _CompiledKernel("rnea_derivatives_block_kernel")
spd_inverse_kernel = _CompiledKernel("spd_inverse_kernel")
rnea_block_kernel = _CompiledKernel("rnea_block_kernel")
rnea_frame_kernel = _CompiledKernel("rnea_frame_kernel")

#: Frames × nodes up to which a short command runs kinematics and RNEA in numpy
#: before numba is loaded (:mod:`ahbm._engine.backend`): some tens of ms at most.
_SMALL_WORK = 200_000


def _numpy_kernels(N: int, p) -> bool:
    """Whether this call runs the numpy codings (:mod:`ahbm._engine.numpy_kernels`)."""
    return not backend.use_compiled(N * max(p.n, 1) <= _SMALL_WORK)


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
    import numba

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
    if _numpy_kernels(N, p):
        from ahbm._engine.numpy_kernels import rnea_numpy

        bad = rnea_numpy(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.I6,
            p.fast, p.massive, q, qd, qdd, fx, use_fx, g, tau, check,
        )  # fmt: skip
        return None if bad else tau
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
    from ahbm._engine.jit_rnea import _B as _RNEA_B

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
    if _numpy_kernels(q.shape[0] * (model.nv + 1), p) and model.nq == model.nv:
        from ahbm._engine.numpy_kernels import aba_from_rnea

        qdd = aba_from_rnea(rnea, model, q, qd, _c(tau), fx)
        if qdd is not None:
            return qdd, -1
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
    kernel = kinematics_kernel
    if _numpy_kernels(N, p):
        from ahbm._engine.numpy_kernels import kinematics_numpy as kernel
    kernel(
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
    if _numpy_kernels(N, p):
        from ahbm._engine.numpy_kernels import rnea_numpy

        bad = rnea_numpy(
            p.parent, p.kind, p.E, p.t, p.plain, p.axis, p.principal, p.qi, p.vi, p.I6,
            p.fast, p.massive, th, thd, thdd, fxa, use_fx, g, tau_th, check,
        )  # fmt: skip
    elif N < _RNEA_BLOCK_MIN:
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
    kernel = kinematics_kernel
    if _numpy_kernels(N, p):
        from ahbm._engine.numpy_kernels import kinematics_numpy as kernel
    kernel(
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
    from ahbm._engine.jit_derivatives_block import _DERIV_B

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
    :func:`ahbm._engine.node_plan.node_forces`) or None; ``fx_world``: they are fixed in the world.
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
