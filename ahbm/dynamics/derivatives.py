"""Analytic derivatives of inverse and forward dynamics (RNEA and ABA), whole trials at once.

``rnea_derivatives`` gives ``∂τ/∂q``, ``∂τ/∂q̇`` and ``M = ∂τ/∂q̈`` of
``τ = RNEA(q, q̇, q̈)``; ``aba_derivatives`` gives ``∂q̈/∂q``, ``∂q̈/∂q̇`` and
``M⁻¹ = ∂q̈/∂τ`` of ``q̈ = FD(q, q̇, τ)`` (Carpentier & Mansard 2018, eq. 6):
differentiating ``RNEA(q, q̇, FD(q, q̇, τ)) = τ`` gives

    ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹,

with ``∂τ/∂q`` and ``∂τ/∂q̇`` evaluated at ``q̈ = FD(q, q̇, τ)``.

Derivative with respect to q
----------------------------
``∂/∂q`` is taken in the tangent space, as Pinocchio does: column ``j`` is
``d/dε f(q ⊕ ε e_j)`` at ``ε = 0`` with ``q ⊕ v`` =
:func:`ahbm.kinematics.integrate_q` ``(model, q, v)``. The matrices are
therefore ``(nv, nv)`` for every model. For joints with ``nq = nv`` this is
the ordinary partial derivative; for a quaternion joint (``spherical``, the
rotation of ``free``) column ``j`` is the derivative along the rotation
``Q ⊗ exp(e_j ε/2)`` about the body axis ``j`` (the joint's angular velocity
coordinates). The translation of a ``free`` joint is ahbm's ``ṙ`` (parent
frame), not Pinocchio's body-frame velocity (see the peer tests for the
mapping).

Custom joints (OpenSim's ``SpatialTransform``) run on the node coordinates
``θ = [q; f_c(q_j)]`` (:mod:`ahbm._engine.dispatch`): with ``θ̇ = G q̇``,
``θ̈ = G q̈ + γ``, ``G = [I; D]``, ``D[c, j] = f_c'``, ``γ_c = f_c'' q̇_j²``,
``τ = Gᵀ τ_θ`` and the chain rule gives

    ∂τ/∂q  = Gᵀ (K_θ G + C_θ ∂θ̇/∂q + M_θ ∂θ̈/∂q) + (∂Gᵀ/∂q) τ_θ,
    ∂τ/∂q̇ = Gᵀ (C_θ G + M_θ ∂γ/∂q̇),    M = Gᵀ M_θ G,

with ``K_θ = ∂τ_θ/∂θ``, ``C_θ = ∂τ_θ/∂θ̇``, ``∂θ̇_c/∂q_j = f_c'' q̇_j``,
``∂θ̈_c/∂q_j = f_c'' q̈_j + f_c''' q̇_j²``, ``∂γ_c/∂q̇_j = 2 f_c'' q̇_j`` and
``((∂Gᵀ/∂q) τ_θ)_jj = Σ_c f_c'' τ_θ,c``. The joint functions give their
first and second derivatives analytically; ``f_c'''`` (only in the
``q̇²`` term of ``∂θ̈/∂q``) is zero for linear functions and a central
difference of the analytic ``f_c''`` otherwise (relative step 1e-4: exact for
polynomials up to degree 4, ~1e-8 relative otherwise).

Algorithm and cost
------------------
The kernel (:func:`ahbm._engine.jit_derivatives.rnea_derivatives_world_kernel`;
from 16 frames on the same operations on blocks of 16 frames,
``rnea_derivatives_block_kernel``, see below)
follows the structure of Carpentier & Mansard (2018, Alg. 1): one RNEA pass in
world coordinates (spatial vectors about the world origin: DOF columns
``S_i``, ``v_i = v_λ + S_i q̇_i``, ``a_i = a_λ + S_i q̈_i + v_λ × S_i q̇_i`` with
``a_0 = −g``, inertias ``I_i``, forces ``f_i = I_i a_i + v_i ×* I_i v_i −
f_ext,i``), the subtree sums ``I^c_i = Σ I_k``, ``F_i = Σ f_k`` and ``N^c_i =
Σ N_k`` with ``N_k = I_k (v_k×) − (v_k×*) I_k − (I_k v_k)⊼`` (``(h⊼) x = x ×*
h``, so ``−N_k`` is ``∂f_k/∂v`` minus ``I_k (v_k×)``), then a few dot products
per pair of coordinates. Derivation: moving coordinate ``j`` (column ``ξ`` of
node ``J``, parent motion ``v_λ``, ``a_λ``) moves the subtree of ``J``
rigidly by the twist ``ξ δ``; every world quantity of the subtree then
changes covariantly (``δS = ξ × S``, ``δI = ξ ×* I − I ξ×``, ``δf = ξ ×* f``)
except that ``v`` and ``a`` keep the parent's part: ``δv_k = ξ × (v_k − v_λ)``,
``δa_k = ξ × (a_k − a_λ) − (ξ × v_λ) × (v_k − v_λ)``. With ``u = ξ × v_λ`` and
``γ = ξ × a_λ − u × v_λ`` this gives ``δF_i = ξ ×* F_i + N^c_i u − I^c_i γ``;
the covariant term cancels against ``δS_iᵀ F_i`` in the subtree, so

* rows ``i`` in the subtree of ``J``: ``∂τ_i/∂θ_j = S_iᵀ (N^c_i u − I^c_i γ)``,
  ``∂τ_i/∂θ̇_j = S_iᵀ (I^c_i e − N^c_i ξ)`` with ``e = (v_J + v_λ) × ξ``, and
  ``M_ij = S_iᵀ I^c_i ξ``;
* rows above ``J``: ``S_iᵀ y`` with ``y = ξ ×* F_J + N^c_J u − I^c_J γ`` (and
  ``I^c_J e − N^c_J ξ``, ``I^c_J ξ``);
* external forces fixed in the world do not move with the subtree: ``+ S_iᵀ
  (ξ ×* F^x_i)`` in the subtree and ``+ ξ ×* F^x_J`` above (``F^x`` the
  subtree's external force).

A second coding, forward-mode tangents propagated through the node-frame
RNEA (``rnea_derivatives_kernel``: ``∂(X_J y)/∂θ_j = −s × X_J y``,
``∂(X_Jᵀ f)/∂θ_j = X_Jᵀ (s ×* f)``), is kept for the tests, which compare the
two to 1e-12, and both with finite differences and Pinocchio.

Flops (one multiply or add = 1; counted in the kernel; n nodes, n_m of them
with mass, P = Σ_j (|subtree(J)| · nv_J) pairs below, A = Σ_j depth(J) above):

========================================  ====================================
RNEA pass (world), per node               ≈ 250 (+ ≈ 250 inertia to world)
N_k (per node with mass)                  ≈ 220 (A + Aᵀ − (Iv)⊼, A = I (v×))
subtree sums I^c, N^c, F                  ≈ 80 per node
S_iᵀ N^c_i, I^c_i S_i per column          ≈ 150
per pair in a subtree (∂q, ∂q̇, M)        ≈ 60 (5 dot products)
per coordinate: u, γ, e and y's           ≈ 300; per ancestor pair ≈ 24
all derivatives                           ≈ 900 n + 300 nv + 60 P + 24 A
========================================  ====================================

(34-DOF humanoid of ``benchmarks/bench_derivatives.py``: ≈ 65,000 flops per
frame, comparable to Pinocchio's computeRNEADerivatives; ``M_ij`` above the
diagonal path is copied from ``M_ji``. Each frame's three matrices are built
in cache-resident buffers and copied contiguously into the outputs.)

From 16 frames on, the frames go through the kernel in blocks of 16: every
per-frame quantity is laid out ``(..., frame)`` and each statement of the
kernel becomes a loop over the frames of the block, with the branches on the
tree (joint kinds, parents, subtrees) taken once per block; the compiler turns
these loops into SIMD instructions (AVX2/AVX-512: 4 doubles per instruction).
The operations and their order are those of the frame-by-frame kernel, so
the results are bitwise the same. On the humanoid, one thread: 14 → 9-10 µs
per frame with the outputs already in memory, of which ≈ 3 µs is writing the
27.7 KB of the three matrices (memory bandwidth), and 17-18 → 13 µs per frame
with newly allocated outputs. ``out=`` (arrays reused from call to call)
skips the allocation and first touch of the outputs: the public call on
10,000 frames takes ≈ 10 µs per frame on one thread and ≈ 5 µs on two
(≈ 14 and 7.4-9.3 µs with new outputs; ``benchmarks/bench_derivatives.py``). The
spatial-vector RNEA alone takes ≈ 380 flops per node (node-frame kernel: ≈ 210 ×, 170 +).

For comparison, the operation counts of inverse dynamics that Chung (2009,
Tables 3.1–3.2) reports for ``n`` transformation matrices:

=================  ====================================  =========================  =========
method             multiplications                       additions                  n = 55
=================  ====================================  =========================  =========
Uicker (1965)      32½n⁴ + 86 5/12 n³ + 171¼n² + 5⅓n −128  25n⁴ + 66⅓n³ + 129½n²     552,489,525
                                                         + 42⅓n − 96
Waters (1979)      106½n² + 620½n − 512                  82n² + 514n − 384          631,714
Hollerbach (1980)  830n − 592                            675n − 464                 81,719
ahbm RNEA          ≈ 210n                                ≈ 170n                     ≈ 21,000
=================  ====================================  =========================  =========

The Uicker total is Chung's printed one (312,293,722 multiplications +
240,195,803 additions); his own multiplication formula gives 312,291,082 at
``n = 55`` (total ≈ 552,486,885). The other rows agree with their formulas.

The recursive Lagrangian of Hollerbach/Chung (4 × 4 matrices,
:mod:`ahbm.dynamics.lagrangian`) is about four times the spatial-vector RNEA.

References
----------
Carpentier J., Mansard N. (2018) Analytical derivatives of rigid body
dynamics algorithms. Robotics: Science and Systems.
Featherstone R. (2008) Rigid Body Dynamics Algorithms, ch. 5.
Chung H.-J. (2009) Optimization-based dynamic prediction of 3D human
running, PhD thesis, University of Iowa, §3.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import node_plan as _node_plan
from ahbm._engine.checks import prepare
from ahbm.dynamics.forward import _singular
from ahbm.dynamics.inverse import _check_f_ext, external_forces_local
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = ["RNEADerivatives", "ABADerivatives", "rnea_derivatives", "aba_derivatives"]


@dataclass(frozen=True, repr=False)
class RNEADerivatives(ResultRepr):
    """Derivatives of inverse dynamics ``τ = RNEA(q, q̇, q̈)``.

    Attributes
    ----------
    dtau_dq : ndarray, shape (..., nv, nv)
        ``∂τ/∂q`` (tangent space, see :mod:`ahbm.dynamics.derivatives`);
        entry ``[..., i, j] = ∂τ_i/∂q_j``.
    dtau_dqd : ndarray, shape (..., nv, nv)
        ``∂τ/∂q̇``.
    mass_matrix : ndarray, shape (..., nv, nv)
        ``M = ∂τ/∂q̈``.
    tau : ndarray, shape (..., nv)
        ``τ`` itself.
    """

    dtau_dq: np.ndarray
    dtau_dqd: np.ndarray
    mass_matrix: np.ndarray
    tau: np.ndarray


@dataclass(frozen=True, repr=False)
class ABADerivatives(ResultRepr):
    """Derivatives of forward dynamics ``q̈ = FD(q, q̇, τ)``.

    Attributes
    ----------
    dqdd_dq : ndarray, shape (..., nv, nv)
        ``∂q̈/∂q`` (tangent space).
    dqdd_dqd : ndarray, shape (..., nv, nv)
        ``∂q̈/∂q̇``.
    minv : ndarray, shape (..., nv, nv)
        ``M⁻¹ = ∂q̈/∂τ``.
    qdd : ndarray, shape (..., nv)
        ``q̈`` itself.
    """

    dqdd_dq: np.ndarray
    dqdd_dqd: np.ndarray
    minv: np.ndarray
    qdd: np.ndarray


def _node_forces(model, qf, f_ext, batch, frame, kin):
    """(node forces (N, n_nodes, 6) or None, fixed in the world?)."""
    f = _check_f_ext(model, f_ext, batch, frame)
    if f is None:
        return None, False
    N = qf.shape[0]
    if kin is not None and getattr(kin, "model", model) is not model:
        raise DataError("`kin` was computed for another model; pass the kinematics of `model`")
    if kin is not None and kin.n_frames != N:
        raise DataError(
            f"`kin` holds {kin.n_frames} frames but q holds {N}; pass the kinematics of q"
        )
    fl = external_forces_local(model, f, (N,), frame, qf, kin=kin)
    return _node_plan.node_forces(_node_plan.plan(model), fl, N), frame == "world"


def _zeros(x, N, nv):
    return np.zeros((N, nv)) if x is None else x


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=100_000))
    except np.exceptions.TooHardError:  # pragma: no cover - unusual strides
        return True


def _out_arrays(out, cls, mat, vec, inputs):
    """The arrays of ``out`` (a ``cls`` or a tuple in its field order), checked.

    ``mat``/``vec``: the expected shapes of the three matrices and of the vector;
    ``inputs``: (name, array) pairs of what the kernels read. Returns the arrays as given and
    their (N, ...) views.
    """
    fields = [f.name for f in cls.__dataclass_fields__.values()]
    if isinstance(out, cls):
        arrays = tuple(getattr(out, f) for f in fields)
    elif isinstance(out, (tuple, list)) and len(out) == len(fields):
        arrays = tuple(out)
    else:
        got = (
            f"a {type(out).__name__} of {len(out)} items"
            if isinstance(out, (tuple, list))
            else type(out).__name__
        )
        raise DataError(
            f"Expected `out` to be a {cls.__name__} (the result of an earlier call) or a tuple "
            f"of {len(fields)} arrays ({', '.join(fields)}), got {got}"
        )
    named = isinstance(out, cls)
    labels = [f"`out.{f}`" if named else f"`out[{k}]` ({f})" for k, f in enumerate(fields)]
    for what, a, shape in zip(labels, arrays, (mat, mat, mat, vec), strict=True):
        fix = f"allocate it with np.empty({shape})"
        if not isinstance(a, np.ndarray):
            raise DataError(f"Expected {what} to be a numpy array, got {type(a).__name__}; {fix}")
        if a.shape != shape:
            raise DataError(f"Expected {what} to have shape {shape}, got {a.shape}; {fix}")
        if a.dtype != np.float64:
            raise DataError(f"Expected {what} to have dtype float64, got {a.dtype}; {fix}")
        if not a.flags.c_contiguous:
            raise DataError(
                f"Expected {what} to be C-contiguous (a view with strides is not); {fix}"
            )
        if not a.flags.writeable:
            raise DataError(f"Expected {what} to be writeable, got a read-only array; {fix}")
    for i, (what, a) in enumerate(zip(labels, arrays, strict=True)):
        for other, b in list(zip(labels, arrays, strict=True))[i + 1 :]:
            if _overlap(a, b):
                raise DataError(f"{what} and {other} share memory; give each its own array")
        for arg, x in inputs:
            if isinstance(x, np.ndarray) and _overlap(a, x):
                raise DataError(
                    f"{what} shares memory with the input `{arg}`; the kernels would "
                    f"overwrite `{arg}` while reading it: pass a copy or other output arrays"
                )
    N = int(np.prod(vec[:-1], dtype=np.int64))
    flat = tuple(a.reshape((N,) + a.shape[len(vec) - 1 :]) for a in arrays)
    return arrays, flat


def _bad_state() -> DataError:
    return DataError(
        "q, qd and qdd (or tau) must be finite and every quaternion of q nonzero; "
        "check the input arrays"
    )


def rnea_derivatives(
    model: Model, q, qd, qdd, *, f_ext=None, f_ext_frame: str = "world", kin=None, out=None
) -> RNEADerivatives:
    """Analytic derivatives of inverse dynamics: ``∂τ/∂q``, ``∂τ/∂q̇``, ``M``.

    Parameters
    ----------
    model : Model
        Any tree of ahbm's joint types (custom joints included).
    q : array_like, shape (..., nq)
    qd, qdd : array_like, shape (..., nv), or None
        None means zeros.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces (convention of :mod:`ahbm.dynamics.inverse`).
        World forces stay fixed in the world when q moves (their derivative
        terms are included); local forces move with their bodies.
    f_ext_frame : {"world", "local"}
    kin : KinematicState, optional
        ``forward_kinematics(model, q)`` of the same frames, reused to express
        world forces in the body frames.
    out : RNEADerivatives or tuple of 4 ndarrays, optional
        Arrays to write the results into instead of allocating new ones
        (repeated calls on trials of the same size: optimizers, batches): the
        result of an earlier call with the same batch shape, or a tuple
        ``(dtau_dq, dtau_dqd, mass_matrix, tau)`` of float64, C-contiguous,
        writeable arrays of shapes (..., nv, nv) × 3 and (..., nv), none
        sharing memory with another or with ``q``, ``qd``, ``qdd``,
        ``f_ext``. Their previous values are overwritten (after a
        ``DataError`` on bad ``q``, ``qd``, ``qdd`` their content is
        undefined). The values are bitwise those of a call without ``out``.
        Custom joints: supported; the node-coordinate pass still allocates its
        own arrays, the final products are written into ``out``.

    Returns
    -------
    RNEADerivatives
        ``dtau_dq``, ``dtau_dqd``, ``mass_matrix`` (..., nv, nv) and ``tau``
        (..., nv); with ``out``, its fields are the arrays of ``out``.

    Raises
    ------
    DataError
        Arrays of the wrong shape, non-finite values, zero quaternions; an
        ``out`` of the wrong type, shape, dtype or layout, read-only, or
        sharing memory with an input.

    Notes
    -----
    World-frame composite quantities and a few dot products per pair of
    coordinates (Carpentier & Mansard 2018) in a compiled kernel, in blocks of
    16 frames (SIMD over the frames) from 16 frames on, frames in parallel
    threads from 256 frames on; see the module docstring for the
    derivation, the quaternion convention and the flop count. ``M`` comes from
    the same sweep.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> d = rnea_derivatives(m, np.zeros((10, m.nq)), np.zeros((10, m.nv)), None)
    >>> d.dtau_dq.shape, d.mass_matrix.shape
    ((10, 4, 4), (10, 4, 4))

    Reusing the arrays of ``d`` for the next trial of 10 frames (no allocation):

    >>> d2 = rnea_derivatives(m, np.full((10, m.nq), 0.1), None, None, out=d)
    >>> d2.dtau_dq is d.dtau_dq
    True
    """
    batch, qf, (qdf, qddf) = prepare(model, q, qd, qdd, transpose=False)
    N, nv = qf.shape[0], model.nv
    qdf, qddf = _zeros(qdf, N, nv), _zeros(qddf, N, nv)
    if out is not None:
        inputs = (("q", q), ("qd", qd), ("qdd", qdd), ("f_ext", f_ext))
        inputs += (("q", qf), ("qd", qdf), ("qdd", qddf))
        given, (dq_o, dqd_o, M_o, tau_o) = _out_arrays(
            out, RNEADerivatives, batch + (nv, nv), batch + (nv,), inputs
        )
        out = (tau_o, dq_o, dqd_o, M_o)
    fx, world = _node_forces(model, qf, f_ext, batch, f_ext_frame, kin)
    res = _dispatch.rnea_derivatives(model, qf, qdf, qddf, fx, world, out=out)
    if res is None:  # pragma: no cover - prepare() rejects what the kernel rejects
        raise _bad_state()
    if out is not None:
        return RNEADerivatives(*given)
    tau, dq, dqd, M = res
    mat = batch + (nv, nv)
    return RNEADerivatives(
        dq.reshape(mat), dqd.reshape(mat), M.reshape(mat), tau.reshape(batch + (nv,))
    )


def aba_derivatives(
    model: Model, q, qd, tau, *, f_ext=None, f_ext_frame: str = "world", kin=None, out=None
) -> ABADerivatives:
    """Analytic derivatives of forward dynamics: ``∂q̈/∂q``, ``∂q̈/∂q̇``, ``M⁻¹``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, tau : array_like, shape (..., nv), or None
        None means zeros.
    f_ext, f_ext_frame, kin
        As in :func:`rnea_derivatives`.
    out : ABADerivatives or tuple of 4 ndarrays, optional
        Arrays to write the results into: the result of an earlier call with
        the same batch shape, or ``(dqdd_dq, dqdd_dqd, minv, qdd)`` with the
        requirements of :func:`rnea_derivatives`'s ``out`` (float64,
        C-contiguous, writeable, no shared memory with each other or with
        ``q``, ``qd``, ``tau``, ``f_ext``). Values bitwise those of a call
        without ``out``; the intermediate ``∂τ/∂q``, ``∂τ/∂q̇``, ``M`` are
        still allocated.

    Returns
    -------
    ABADerivatives
        ``dqdd_dq``, ``dqdd_dqd``, ``minv`` (..., nv, nv) and ``qdd`` (..., nv);
        with ``out``, its fields are the arrays of ``out``.

    Raises
    ------
    DataError
        Arrays of the wrong shape, non-finite values, zero quaternions; a bad
        ``out`` (as in :func:`rnea_derivatives`).
    SimulationError
        An articulated inertia is singular (e.g. a massless body at the end of
        a chain), as in :func:`ahbm.dynamics.aba`.

    Notes
    -----
    ``q̈`` by the articulated-body algorithm (external forces included), then
    the tangents of :func:`rnea_derivatives` at ``(q, q̇, q̈)`` and
    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` (Carpentier & Mansard 2018, eq. 6): ``M⁻¹`` by a
    compiled Cholesky inversion per frame (exactly symmetric), then two
    batched matrix products.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> d = aba_derivatives(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv))
    >>> bool(np.allclose(d.minv @ np.linalg.inv(d.minv), np.eye(m.nv)))
    True
    >>> d2 = aba_derivatives(m, np.full(m.nq, 0.1), None, None, out=d)
    >>> d2.minv is d.minv
    True
    """
    batch, qf, (qdf, tauf) = prepare(model, q, qd, tau, names=("qd", "tau"), transpose=False)
    N, nv = qf.shape[0], model.nv
    qdf, tauf = _zeros(qdf, N, nv), _zeros(tauf, N, nv)
    given, flat = None, (None,) * 4
    if out is not None:
        inputs = (("q", q), ("qd", qd), ("tau", tau), ("f_ext", f_ext))
        inputs += (("q", qf), ("qd", qdf), ("tau", tauf))
        given, flat = _out_arrays(out, ABADerivatives, batch + (nv, nv), batch + (nv,), inputs)
    fx, world = _node_forces(model, qf, f_ext, batch, f_ext_frame, kin)
    qdd, bad = _dispatch.aba(model, qf, qdf, tauf, fx)
    if bad >= 0:
        raise _singular(model, _dispatch.failing_body(_node_plan.plan(model), bad))
    res = _dispatch.rnea_derivatives(model, qf, qdf, qdd, fx, world)
    if res is None:
        raise _bad_state()
    _, dq, dqd, M = res
    # M⁻¹ by a compiled Cholesky inversion per frame (M is positive definite: the
    # articulated-body pass above checked every pivot), then two batched products
    # (BLAS): 3-4x faster than one LU solve with the 3 nv right-hand sides
    Minv, bad = _dispatch.spd_inverse(M, out=flat[2])
    if Minv is None:  # pragma: no cover - rounding on a nearly singular M
        X = np.linalg.solve(M, np.concatenate([dq, dqd, np.broadcast_to(np.eye(nv), M.shape)], 2))
        Minv = X[:, :, 2 * nv :]
        Minv = 0.5 * (Minv + np.swapaxes(Minv, 1, 2))
        if given is not None:
            flat[2][...] = Minv
    dqdd_dq = np.matmul(Minv, dq, out=flat[0])
    dqdd_dqd = np.matmul(Minv, dqd, out=flat[1])
    np.negative(dqdd_dq, out=dqdd_dq)
    np.negative(dqdd_dqd, out=dqdd_dqd)
    if given is not None:
        flat[3][...] = qdd
        return ABADerivatives(*given)
    mat = batch + (nv, nv)
    return ABADerivatives(
        dqdd_dq.reshape(mat), dqdd_dqd.reshape(mat), Minv.reshape(mat), qdd.reshape(batch + (nv,))
    )
