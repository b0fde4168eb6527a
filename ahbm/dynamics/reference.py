"""Reference recursions: forward kinematics, RNEA, CRBA and ABA, written plainly.

This module is the *independent coding* of the rigid-body recursions that the
compiled kernels (:mod:`ahbm._engine.dispatch`, behind :func:`ahbm.dynamics.rnea`,
:func:`ahbm.dynamics.crba`, :func:`ahbm.dynamics.aba` and
:func:`ahbm.kinematics.forward_kinematics`) implement for speed. It is written
to be read next to Featherstone's *Rigid Body Dynamics Algorithms* (2008):
Plücker transforms, 6×6 spatial inertias, spatial vectors angular part first
``[ω; v]``, one function per table (RNEA Table 5.1, CRBA Table 6.2, ABA
Table 7.1), one joint model (``jcalc``) for every joint type of
:mod:`ahbm.kinematics.tree`. The tests compare the kernels with it; it is slow
(a Python loop over bodies, one state per call) and meant for checking,
teaching and symbolic use, not for trials.

Use it module-qualified (its names would clash with the fast ones)::

    from ahbm.dynamics import reference
    tau = reference.rnea(model, q, qd, qdd)

One state per call
------------------
Every function takes one state: ``q`` of shape ``(nq,)``, ``qd``, ``qdd`` and
``tau`` of shape ``(nv,)``; loop over frames for a trial (or use the fast
functions). Quaternion coordinates are normalized before use, as in the
kernels.

The ``ops`` contract
--------------------
The recursions never write into an array: per-body values are kept in Python
lists, accumulations rebind list entries (``f[p] = f[p] + ...``) and results
are assembled with ``concat``/``block``. Every array operation goes through
an ``ops`` object, so the same code runs on another array type (the
optimal-control code will pass CasADi ``SX``) by passing another ``ops``. The
default, :class:`NumpyOps`, works on numpy arrays. An ``ops`` provides:

``input(x, shape, name)``
    The user's argument ``x`` checked to have ``shape`` (``(n,)`` for a vector,
    ``(n_bodies, 6)`` for ``f_ext``); raises on a mismatch.
``const(x)``
    A numpy constant of the model (axes, origins, inertias) as an array of the
    namespace (for CasADi: ``DM``).
``sin(x)``, ``cos(x)``, ``sqrt(x)``
    Of a scalar.
``zeros(rows, cols=None)``, ``eye(n)``
    A zero vector of length ``rows`` (``cols=None``) or matrix; the identity.
``vector(items)``
    A vector from a list of scalars.
``concat(vectors)``
    Vectors joined end to end (``tau`` and ``qdd`` are built this way).
``columns(vectors)``
    A matrix whose columns are the given vectors.
``block(rows)``
    A matrix from a list of rows of blocks (matrices or scalars), as
    ``numpy.block`` / ``casadi.blockcat``.
``matmul(a, b)``, ``transpose(a)``, ``solve(a, b)``
    Matrix products (matrix × vector gives a vector), the transpose of a
    matrix and the solution of ``a x = b`` for a small square ``a``.
``function(f, x, derivative)``
    The value (``derivative`` 0) or first or second derivative of a function
    of :mod:`ahbm.kinematics.functions` (the axes of a ``custom`` joint) at
    the scalar ``x``.

Beyond these the code uses only ``+`` and ``-`` between operands of one
shape, unary ``-``, ``*`` and ``/`` with a scalar, and indexing: a scalar
``x[k]``, a sub-vector ``x[i:j]`` (both on vectors only) and a column
``A[:, k]`` of a matrix. A vector is 1-D for numpy and may be a column
(``n × 1``) elsewhere: the code never transposes a vector.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer, 2008: Table 2.5
(spatial arithmetic), Table 4.1 (joint models), Table 5.1 (RNEA), Table 6.2
(CRBA), Table 7.1 (ABA).

Custom joints and child offsets
-------------------------------
A ``custom`` joint's model is written from its definition (OpenSim's
``SpatialTransform``, :mod:`ahbm.kinematics.joints`), not from the kernels'
node chain: ``R_J = R(a_1, θ_1) R(a_2, θ_2) R(a_3, θ_3)``, ``r_J = Σ θ_k a_k``
(k = 4..6) with ``θ_k = f_k(q_j)``; the column of coordinate ``j`` is
``Σ f_k'(q_j) [s_k; 0]`` over its rotation axes (``s_k`` the axis in the
moving frame) plus ``Σ f_k'(q_j) [0; R_Jᵀ a_k]`` over its translation axes;
``c_J = [Σ_{j<k} θ̇_j θ̇_k s_j × s_k + Σ s_k γ_k; −ω_J × v_J + R_Jᵀ Σ a_k γ_k]``
with ``γ_k = f_k''(q_j) q̇_j²``. A child offset (the moving frame's pose
``(C, c)`` in the body frame) is the constant motion transform
``X = plux(Cᵀ, −Cᵀ c)`` applied to ``S``, ``v_J`` and ``c_J``, and
``R = E R_J Cᵀ``, ``p = t + E (r_J − R_J Cᵀ c)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
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
from ahbm.types import ResultRepr

__all__ = ["NumpyOps", "ReferenceKinematics", "forward_kinematics", "rnea", "crba", "aba"]


class NumpyOps:
    """The array namespace of the reference recursions for numpy (the default ``ops``).

    See the module docstring for the contract; a subclass may wrap any of
    these methods (the tests make every result read-only to prove that the
    recursions never write into an array).

    Examples
    --------
    >>> ops = NumpyOps()
    >>> ops.block([[ops.eye(2), ops.zeros(2, 1)]]).shape
    (2, 3)
    """

    def input(self, x, shape, name):
        arr = as_float_array(x, name)
        if arr.shape != tuple(shape):
            raise DataError(f"Expected `{name}` to have shape {tuple(shape)}, got {arr.shape}")
        return arr

    def const(self, x):
        return np.array(x, dtype=float)

    def sin(self, x):
        return np.sin(x)

    def cos(self, x):
        return np.cos(x)

    def sqrt(self, x):
        return np.sqrt(x)

    def zeros(self, rows, cols=None):
        return np.zeros(rows if cols is None else (rows, cols))

    def eye(self, n):
        return np.eye(n)

    def vector(self, items):
        return np.array(items, dtype=float)

    def concat(self, vectors):
        return np.concatenate(vectors)

    def columns(self, vectors):
        return np.stack(vectors, axis=-1)

    def block(self, rows):
        return np.block(rows)

    def matmul(self, a, b):
        return np.matmul(a, b)

    def transpose(self, a):
        return np.transpose(a)

    def solve(self, a, b):
        return np.linalg.solve(a, b)

    def function(self, f, x, derivative):
        return f.value(x, derivative)


_NUMPY = NumpyOps()


@dataclass(frozen=True, repr=False)
class ReferenceKinematics(ResultRepr):
    """Result of :func:`forward_kinematics`: one entry per body, in body order.

    Attributes
    ----------
    rotations : list of (3, 3) arrays
        ``world_R_body`` of each body.
    positions : list of (3,) arrays
        Body-frame origins in world coordinates (m).
    velocities : list of (6,) arrays or None
        Body spatial velocities ``[ω; v_O]`` in body coordinates (rad/s, m/s).
    accelerations : list of (6,) arrays or None
        Body spatial accelerations in body coordinates, without gravity.
    """

    rotations: list
    positions: list
    velocities: list | None
    accelerations: list | None


# ----------------------------------------------------------------------------
# spatial arithmetic (Featherstone Table 2.5)
# ----------------------------------------------------------------------------


def _skew(ops, w):
    """``[w]×``, the matrix of ``x ↦ w × x``."""
    return ops.block([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _cross(ops, a, b):
    return ops.matmul(_skew(ops, a), b)


def _crm(ops, v):
    """Spatial motion cross product matrix ``v×`` (crm)."""
    W, V = _skew(ops, v[0:3]), _skew(ops, v[3:6])
    return ops.block([[W, ops.zeros(3, 3)], [V, W]])


def _crf(ops, v):
    """Spatial force cross product matrix ``v×* = −(v×)ᵀ`` (crf)."""
    return -ops.transpose(_crm(ops, v))


def _plux(ops, R, p):
    """Motion transform ``child_X_parent`` from ``parent_R_child`` and the child origin.

    ``X = [[Rᵀ, 0], [−Rᵀ [p]×, Rᵀ]]`` with ``p`` in parent coordinates
    (Featherstone eq. 2.24 with ``E = Rᵀ``); forces go to the parent with ``Xᵀ``.
    """
    Rt = ops.transpose(R)
    return ops.block([[Rt, ops.zeros(3, 3)], [-ops.matmul(Rt, _skew(ops, p)), Rt]])


def _force_to_body(ops, R, p, f):
    """A force ``[n; f]`` in world coordinates about the world origin, in body coordinates.

    ``R = world_R_body``, ``p`` = body origin in the world: ``[Rᵀ (n − p × f); Rᵀ f]``.
    """
    Rt = ops.transpose(R)
    n_o = f[0:3] - _cross(ops, p, f[3:6])
    return ops.concat([ops.matmul(Rt, n_o), ops.matmul(Rt, f[3:6])])


# ----------------------------------------------------------------------------
# joint models (the role of jcalc, Featherstone Table 4.1)
# ----------------------------------------------------------------------------


def _axis_rotation(ops, k, angle):
    """``R_k(θ)``: rotation by ``angle`` about the coordinate axis ``k`` (0: x, 1: y, 2: z)."""
    c, s = ops.cos(angle), ops.sin(angle)
    i, j = (k + 1) % 3, (k + 2) % 3
    rows = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    rows[i][i], rows[i][j] = c, -s
    rows[j][i], rows[j][j] = s, c
    return ops.block(rows)


def _quat_rotation(ops, quat):
    """Rotation matrix of the quaternion ``(x, y, z, w)`` (normalized first)."""
    norm = ops.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
    x, y, z, w = (quat[k] / norm for k in range(4))
    return ops.block(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _rotation_sequence(ops, sequence, angles, rates):
    """Rotation, angular motion subspace and ``Ṡ q̇`` of an intrinsic axis sequence.

    ``"ZXY"`` gives ``R = R_Z(q0) R_X(q1) R_Y(q2)``. With ``R = A_0 A_1 … A_{n-1}``
    the body angular velocity is ``Σ_j s_j q̇_j`` with
    ``s_j = (A_{j+1} … A_{n-1})ᵀ e_j`` and ``Ṡ q̇ = Σ_{j<k} q̇_j q̇_k s_j × s_k``.

    Returns ``R``, ``S_ω`` (3, n) and ``Ṡ_ω q̇`` (3,) (None without rates).
    """
    n = len(sequence)
    axes = ["XYZ".index(ch) for ch in sequence]
    cols = [None] * n
    tail = ops.eye(3)  # A_{j+1} … A_{n-1}
    for j in range(n - 1, -1, -1):
        cols[j] = ops.transpose(tail)[:, axes[j]]
        tail = ops.matmul(_axis_rotation(ops, axes[j], angles[j]), tail)
    c_w = None
    if rates is not None:
        c_w = ops.zeros(3)
        for j in range(n):
            for k in range(j + 1, n):
                c_w = c_w + (rates[j] * rates[k]) * _cross(ops, cols[j], cols[k])
    return tail, ops.columns(cols), c_w


def _general_rotation(ops, axis, angle):
    """``R(a, θ)`` about the unit axis ``a`` (numpy): ``1 + sin θ K + (1 − cos θ) K²``."""
    K = ops.const(_skew(_NUMPY, axis))
    return ops.eye(3) + ops.sin(angle) * K + (1.0 - ops.cos(angle)) * ops.matmul(K, K)


def _custom_joint(ops, joint, qj, qdj):
    """``R_J``, ``r_J``, ``S`` (6, n), ``v_J`` and ``c_J`` of a custom joint (module docstring)."""
    index = {c: j for j, c in enumerate(joint.coordinates)}
    n = len(joint.coordinates)
    theta, d1, gam = [], [], []
    for ax in joint.transform:
        if ax.coordinate is None:
            theta.append(float(ax.function.value(0.0)))
            d1.append(None)
            gam.append(None)
            continue
        x = qj[index[ax.coordinate]]
        theta.append(ops.function(ax.function, x, 0))
        d1.append(ops.function(ax.function, x, 1))
        if qdj is not None:
            rate = qdj[index[ax.coordinate]]
            gam.append(ops.function(ax.function, x, 2) * (rate * rate))
    A = [_general_rotation(ops, joint.transform[k].axis, theta[k]) for k in range(3)]
    R_J = ops.matmul(A[0], ops.matmul(A[1], A[2]))
    tails = [ops.matmul(A[1], A[2]), A[2], ops.eye(3)]  # A_{k+1} … A_3
    s = [ops.matmul(ops.transpose(tails[k]), ops.const(joint.transform[k].axis)) for k in range(3)]
    RJt = ops.transpose(R_J)
    lin = [ops.matmul(RJt, ops.const(joint.transform[k].axis)) for k in range(3, 6)]
    zero3 = ops.zeros(3)
    cols = []
    for j in range(n):
        w, v = zero3, zero3
        for k in range(6):
            if d1[k] is None or index[joint.transform[k].coordinate] != j:
                continue
            if k < 3:
                w = w + d1[k] * s[k]
            else:
                v = v + d1[k] * lin[k - 3]
        cols.append(ops.concat([w, v]))
    S = ops.columns(cols) if cols else ops.zeros(6, 0)
    r_J = zero3
    for k in range(3, 6):
        r_J = r_J + theta[k] * ops.const(joint.transform[k].axis)
    if qdj is None:
        return R_J, r_J, S, None, None
    v_J = ops.matmul(S, qdj) if n else ops.zeros(6)
    rates = [None if d1[k] is None else d1[k] * qdj[index[joint.transform[k].coordinate]]
             for k in range(6)]  # fmt: skip
    c_w, c_v = zero3, zero3
    for j in range(3):
        if rates[j] is None:
            continue
        c_w = c_w + gam[j] * s[j]
        for k in range(j + 1, 3):
            if rates[k] is not None:
                c_w = c_w + (rates[j] * rates[k]) * _cross(ops, s[j], s[k])
    for k in range(3, 6):
        if rates[k] is not None:
            c_v = c_v + gam[k] * lin[k - 3]
    c_v = c_v - _cross(ops, v_J[0:3], v_J[3:6])
    return R_J, r_J, S, v_J, ops.concat([c_w, c_v])


def _joint(ops, model: Model, i, q, qd):
    """Joint model of body ``i``: ``R``, ``p``, ``S``, ``v_J``, ``c_J``.

    ``R = parent_R_body = E R_J`` and ``p = t + E r_J`` (``E``, ``t``: the joint
    frame in the parent; ``R_J``, ``r_J``: the joint motion in the joint frame);
    ``S`` (6, nv) is the motion subspace in body coordinates, ``v_J = S q̇`` and
    ``c_J = Ṡ q̇`` (both None when ``qd`` is None).
    """
    body = model.bodies[i]
    code = model.joint_codes[i]
    qi, vi = int(model.q_index[i]), int(model.v_index[i])
    qj = q[qi : qi + int(model.joint_nq[i])]
    qdj = None if qd is None else qd[vi : vi + int(model.joint_nv[i])]
    zero3 = ops.zeros(3)
    r_J, v_J, c_J = zero3, None, None
    if code == FIXED:
        R_J, S = ops.eye(3), ops.zeros(6, 0)
    elif code == CUSTOM:
        R_J, r_J, S, v_J, c_J = _custom_joint(ops, body.joint, qj, qdj)
    elif code == REVOLUTE:
        K = ops.const(_skew(_NUMPY, body.joint.axis))
        R_J = ops.eye(3) + ops.sin(qj[0]) * K + (1.0 - ops.cos(qj[0])) * ops.matmul(K, K)
        S = ops.const(np.concatenate([body.joint.axis, np.zeros(3)])[:, None])
    elif code == PRISMATIC:
        axis = ops.const(body.joint.axis)
        R_J, r_J = ops.eye(3), axis * qj[0]
        S = ops.const(np.concatenate([np.zeros(3), body.joint.axis])[:, None])
    elif code == SPHERICAL:
        R_J = _quat_rotation(ops, qj)
        S = ops.block([[ops.eye(3)], [ops.zeros(3, 3)]])
    elif code in (UNIVERSAL, EULER):
        R_J, S_w, c_w = _rotation_sequence(ops, body.joint.sequence, qj, qdj)
        S = ops.block([[S_w], [ops.zeros(3, len(body.joint.sequence))]])
        if c_w is not None:
            c_J = ops.concat([c_w, zero3])
    else:  # translation (joint frame) then rotation: free, free_euler, planar
        c_w = None
        if code == FREE:
            r_J = qj[0:3]
            R_J = _quat_rotation(ops, qj[3:7])
            S_w = ops.eye(3)
        elif code == FREE_EULER:
            r_J = qj[0:3]
            R_J, S_w, c_w = _rotation_sequence(
                ops, body.joint.sequence, qj[3:6], None if qdj is None else qdj[3:6]
            )
        else:  # planar: x, y then a rotation about z
            r_J = ops.vector([qj[0], qj[1], 0.0])
            R_J, S_w, c_w = _rotation_sequence(ops, "Z", qj[2:3], None if qdj is None else qdj[2:3])
        nt, nr = (2, 1) if code == PLANAR else (3, 3)
        # linear velocity of the origin in body coordinates: R_Jᵀ ṙ_J
        S_t = ops.columns([ops.transpose(R_J)[:, k] for k in range(nt)])
        S = ops.block([[ops.zeros(3, nt), S_w], [S_t, ops.zeros(3, nr)]])
        if qdj is not None:
            v_J = ops.matmul(S, qdj)
            # d/dt(R_Jᵀ) ṙ_J = −ω_J × (R_Jᵀ ṙ_J)
            c_lin = -_cross(ops, v_J[0:3], v_J[3:6])
            c_J = ops.concat([zero3 if c_w is None else c_w, c_lin])
    E, t = ops.const(body.rotation), ops.const(body.position)
    if qdj is not None and v_J is None:
        v_J = ops.matmul(S, qdj) if model.joint_nv[i] else ops.zeros(6)
    if qdj is not None and c_J is None:
        c_J = ops.zeros(6)
    if body.has_child_offset:
        # body frame B relative to the moving frame M: M_R_B = Cᵀ, origin −Cᵀ c in M
        Ct = body.child_rotation.T
        p_MB = -Ct @ body.child_position
        X = _plux(ops, ops.const(Ct), ops.const(p_MB))
        S = ops.matmul(X, S) if model.joint_nv[i] else S
        if qdj is not None:
            v_J, c_J = ops.matmul(X, v_J), ops.matmul(X, c_J)
        r_J = r_J + ops.matmul(R_J, ops.const(p_MB))
        R_J = ops.matmul(R_J, ops.const(Ct))
    R = ops.matmul(E, R_J)
    p = t + ops.matmul(E, r_J)
    return R, p, S, v_J, c_J


# ----------------------------------------------------------------------------
# the recursions
# ----------------------------------------------------------------------------


@dataclass
class _Pass:
    """Per-body lists of one outward pass (internal)."""

    S: list  # motion subspaces (6, nv_i)
    X: list  # i_X_λ(i)
    Rw: list  # world_R_i
    pw: list  # body origins in the world
    v: list | None  # spatial velocities
    c: list | None  # velocity-product accelerations c_J + v_i × v_J
    a: list | None  # spatial accelerations (a_0 as given)


def _outward(ops, model: Model, q, qd, qdd, a0):
    """Outward pass: poses, ``v_i = X v_λ + v_J``, ``a_i = X a_λ + S q̈ + c_J + v_i × v_J``.

    ``qd``/``qdd``/``a0`` may be None (no velocities / no accelerations); a
    missing ``qdd`` with ``a0`` given means zero joint accelerations.
    """
    out = _Pass([], [], [], [], None, None, None)
    if qd is not None:
        out.v, out.c = [], []
        if a0 is not None:
            out.a = []
    for i in range(model.n_bodies):
        R, p, S, v_J, c_J = _joint(ops, model, i, q, qd)
        X = _plux(ops, R, p)
        lam = int(model.parent[i])
        out.S.append(S)
        out.X.append(X)
        if lam < 0:
            out.Rw.append(R)
            out.pw.append(p)
        else:
            out.Rw.append(ops.matmul(out.Rw[lam], R))
            out.pw.append(out.pw[lam] + ops.matmul(out.Rw[lam], p))
        if qd is None:
            continue
        v_par = ops.zeros(6) if lam < 0 else out.v[lam]
        v = ops.matmul(X, v_par) + v_J
        c = c_J + ops.matmul(_crm(ops, v), v_J)
        out.v.append(v)
        out.c.append(c)
        if out.a is None:
            continue
        a = ops.matmul(X, a0 if lam < 0 else out.a[lam]) + c
        nv = int(model.joint_nv[i])
        if qdd is not None and nv:
            k = int(model.v_index[i])
            a = a + ops.matmul(S, qdd[k : k + nv])
        out.a.append(a)
    return out


def _gravity_acceleration(ops, model):
    """``a_0 = −a_g = [0; −g]``: gravity as a fictitious base acceleration."""
    return ops.const(np.concatenate([np.zeros(3), -model.gravity]))


def _external_forces(ops, model, f_ext, fk):
    """``f_ext`` (world, about the world origin) per body, in body coordinates, or None."""
    if f_ext is None:
        return None
    f_cols = ops.transpose(ops.input(f_ext, (model.n_bodies, 6), "f_ext"))  # body i: column i
    return [_force_to_body(ops, fk.Rw[i], fk.pw[i], f_cols[:, i]) for i in range(model.n_bodies)]


def _inputs(ops, model, q, pairs):
    """Checked ``q`` (nq,) and vectors (nv,) (None stays None)."""
    q = ops.input(q, (model.nq,), "q")
    return q, [None if x is None else ops.input(x, (model.nv,), name) for name, x in pairs]


def _dof(model, i):
    k, nv = int(model.v_index[i]), int(model.joint_nv[i])
    return k, nv


def _join(ops, parts, n):
    """Per-body pieces of a generalized vector joined in body order."""
    parts = [x for x in parts if x is not None]
    return ops.concat(parts) if parts else ops.zeros(n)


def forward_kinematics(model: Model, q, qd=None, qdd=None, *, ops=None) -> ReferenceKinematics:
    """Body poses, spatial velocities and accelerations of one state (reference coding).

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
        Generalized coordinates.
    qd : array_like, shape (nv,), optional
        Generalized velocities.
    qdd : array_like, shape (nv,), optional
        Generalized accelerations (requires ``qd``).
    ops : object, optional
        Array namespace (module docstring); default :class:`NumpyOps`.

    Returns
    -------
    ReferenceKinematics
        Per-body lists: world rotations and origins; body spatial velocities
        (when ``qd`` is given) and accelerations without gravity (when ``qdd``
        is given), in body coordinates.

    Raises
    ------
    DataError
        Wrong shapes or non-finite values; ``qdd`` without ``qd``.

    Notes
    -----
    ``0_R_i = 0_R_λ λ_R_i``, ``0_p_i = 0_p_λ + 0_R_λ λ_p_i``,
    ``v_i = i_X_λ v_λ + S_i q̇_i``,
    ``a_i = i_X_λ a_λ + S_i q̈_i + c_J,i + v_i × S_i q̇_i`` with ``v_0 = a_0 = 0``
    (Featherstone 2008, §4.3 and Table 5.1, forward pass).

    Examples
    --------
    >>> from ahbm.dynamics import reference
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> kin = reference.forward_kinematics(m, np.zeros(m.nq), np.ones(m.nv))
    >>> len(kin.rotations), kin.velocities[0].shape, kin.accelerations
    (2, (6,), None)
    """
    ops = _NUMPY if ops is None else ops
    if qdd is not None and qd is None:
        raise DataError("`qdd` given without `qd`; pass the velocities too")
    q, (qd, qdd) = _inputs(ops, model, q, (("qd", qd), ("qdd", qdd)))
    a0 = None if qdd is None else ops.zeros(6)
    fk = _outward(ops, model, q, qd, qdd, a0)
    return ReferenceKinematics(fk.Rw, fk.pw, fk.v, fk.a)


def rnea(model: Model, q, qd, qdd, *, f_ext=None, ops=None):
    """Joint forces of one state by the recursive Newton-Euler algorithm (reference coding).

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    qd, qdd : array_like, shape (nv,)
        Generalized velocities and accelerations.
    f_ext : array_like, shape (n_bodies, 6), optional
        External spatial forces ``[n; f]`` on the bodies, world coordinates,
        moment about the world origin (N m, N): the default convention of
        :func:`ahbm.dynamics.rnea`.
    ops : object, optional
        Array namespace (module docstring); default :class:`NumpyOps`.

    Returns
    -------
    tau : array, shape (nv,)
        ``τ = H(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ fᵢ`` (N m, N).

    Notes
    -----
    Featherstone (2008) Table 5.1. Outward: ``v_i = i_X_λ v_λ + S_i q̇_i``,
    ``a_i = i_X_λ a_λ + S_i q̈_i + c_J + v_i × S_i q̇_i`` with ``a_0 = −a_g``;
    ``f_i = I_i a_i + v_i ×* I_i v_i − i_X_0* f_ext,i``. Inward:
    ``τ_i = S_iᵀ f_i``, ``f_λ += i_X_λᵀ f_i``.

    Examples
    --------
    >>> from ahbm import dynamics
    >>> from ahbm.dynamics import reference
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> q, z = np.zeros(m.nq), np.zeros(m.nv)
    >>> bool(np.allclose(reference.rnea(m, q, z, z), dynamics.gravity_torques(m, q)))
    True
    """
    ops = _NUMPY if ops is None else ops
    q, (qd, qdd) = _inputs(ops, model, q, (("qd", qd), ("qdd", qdd)))
    fk = _outward(ops, model, q, qd, qdd, _gravity_acceleration(ops, model))
    fx = _external_forces(ops, model, f_ext, fk)
    f = []
    for i in range(model.n_bodies):
        I = ops.const(model.spatial_inertias[i])  # noqa: E741 (Featherstone's symbol)
        fi = ops.matmul(I, fk.a[i]) + ops.matmul(_crf(ops, fk.v[i]), ops.matmul(I, fk.v[i]))
        f.append(fi if fx is None else fi - fx[i])
    tau = [None] * model.n_bodies
    for i in range(model.n_bodies - 1, -1, -1):
        if model.joint_nv[i]:
            tau[i] = ops.matmul(ops.transpose(fk.S[i]), f[i])
        lam = int(model.parent[i])
        if lam >= 0:
            f[lam] = f[lam] + ops.matmul(ops.transpose(fk.X[i]), f[i])
    return _join(ops, tau, model.nv)


def crba(model: Model, q, *, ops=None):
    """Joint-space inertia matrix of one state by the composite-rigid-body algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    ops : object, optional
        Array namespace (module docstring); default :class:`NumpyOps`.

    Returns
    -------
    H : array, shape (nv, nv)
        Symmetric positive definite mass matrix: ``τ = H q̈ + C q̇ + g``.

    Notes
    -----
    Featherstone (2008) Table 6.2. Composite inertias inward:
    ``I^c_λ += i_X_λᵀ I^c_i i_X_λ``; then for each joint ``F = I^c_i S_i``,
    ``H_ii = S_iᵀ F`` and, walking to the root, ``F = j_X_λ(j)ᵀ F``,
    ``j = λ(j)``, ``H_ij = Fᵀ S_j``, ``H_ji = H_ijᵀ``.

    Examples
    --------
    >>> from ahbm.dynamics import reference
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> H = reference.crba(m, np.zeros(m.nq))
    >>> bool(np.allclose(H, H.T)), H.shape
    (True, (4, 4))
    """
    ops = _NUMPY if ops is None else ops
    q, _ = _inputs(ops, model, q, ())
    fk = _outward(ops, model, q, None, None, None)
    n = model.n_bodies
    Ic = [ops.const(model.spatial_inertias[i]) for i in range(n)]
    for i in range(n - 1, -1, -1):
        lam = int(model.parent[i])
        if lam >= 0:
            X = fk.X[i]
            Ic[lam] = Ic[lam] + ops.matmul(ops.transpose(X), ops.matmul(Ic[i], X))
    blocks = {}
    for i in range(n):
        if not model.joint_nv[i]:
            continue
        F = ops.matmul(Ic[i], fk.S[i])
        blocks[i, i] = ops.matmul(ops.transpose(fk.S[i]), F)
        j = i
        while model.parent[j] >= 0:
            F = ops.matmul(ops.transpose(fk.X[j]), F)
            j = int(model.parent[j])
            if model.joint_nv[j]:
                blocks[i, j] = ops.matmul(ops.transpose(F), fk.S[j])
                blocks[j, i] = ops.transpose(blocks[i, j])
    moving = [i for i in range(n) if model.joint_nv[i]]
    if not moving:
        return ops.zeros(0, 0)
    return ops.block(
        [
            [blocks.get((r, c), ops.zeros(_dof(model, r)[1], _dof(model, c)[1])) for c in moving]
            for r in moving
        ]
    )


def aba(model: Model, q, qd, tau, *, f_ext=None, ops=None):
    """Generalized accelerations of one state by the articulated-body algorithm.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    qd : array_like, shape (nv,)
    tau : array_like, shape (nv,)
        Generalized forces (N m, N).
    f_ext : array_like, shape (n_bodies, 6), optional
        External spatial forces, as in :func:`rnea`.
    ops : object, optional
        Array namespace (module docstring); default :class:`NumpyOps`.

    Returns
    -------
    qdd : array, shape (nv,)

    Notes
    -----
    Featherstone (2008) Table 7.1. Outward: ``v_i``, ``c_i = c_J + v_i × v_J``,
    ``I^A_i = I_i``, ``p^A_i = v_i ×* I_i v_i − i_X_0* f_ext,i``. Inward:
    ``U_i = I^A_i S_i``, ``D_i = S_iᵀ U_i``, ``u_i = τ_i − S_iᵀ p^A_i``,
    ``I^a = I^A_i − U_i D_i⁻¹ U_iᵀ``, ``p^a = p^A_i + I^a c_i + U_i D_i⁻¹ u_i``,
    ``I^A_λ += i_X_λᵀ I^a i_X_λ``, ``p^A_λ += i_X_λᵀ p^a``. Outward:
    ``a' = i_X_λ a_λ + c_i``, ``q̈_i = D_i⁻¹ (u_i − U_iᵀ a')``,
    ``a_i = a' + S_i q̈_i`` with ``a_0 = −a_g``. A singular ``D_i`` (a massless
    end of a chain) makes ``ops.solve`` fail (numpy: ``LinAlgError``).

    Examples
    --------
    >>> from ahbm.dynamics import reference
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> q, qd, tau = np.zeros(m.nq), np.ones(m.nv), np.ones(m.nv)
    >>> bool(np.allclose(reference.rnea(m, q, qd, reference.aba(m, q, qd, tau)), tau))
    True
    """
    ops = _NUMPY if ops is None else ops
    q, (qd, tau) = _inputs(ops, model, q, (("qd", qd), ("tau", tau)))
    fk = _outward(ops, model, q, qd, None, None)
    fx = _external_forces(ops, model, f_ext, fk)
    n = model.n_bodies
    IA, pA = [], []
    for i in range(n):
        I = ops.const(model.spatial_inertias[i])  # noqa: E741 (Featherstone's symbol)
        p = ops.matmul(_crf(ops, fk.v[i]), ops.matmul(I, fk.v[i]))
        IA.append(I)
        pA.append(p if fx is None else p - fx[i])
    U, D, u = [None] * n, [None] * n, [None] * n
    for i in range(n - 1, -1, -1):
        k, nv = _dof(model, i)
        S = fk.S[i]
        if nv:
            U[i] = ops.matmul(IA[i], S)
            D[i] = ops.matmul(ops.transpose(S), U[i])
            u[i] = tau[k : k + nv] - ops.matmul(ops.transpose(S), pA[i])
            Ia = IA[i] - ops.matmul(U[i], ops.solve(D[i], ops.transpose(U[i])))
            pa = pA[i] + ops.matmul(Ia, fk.c[i]) + ops.matmul(U[i], ops.solve(D[i], u[i]))
        else:
            Ia = IA[i]
            pa = pA[i] + ops.matmul(Ia, fk.c[i])
        lam = int(model.parent[i])
        if lam >= 0:
            Xt = ops.transpose(fk.X[i])
            IA[lam] = IA[lam] + ops.matmul(Xt, ops.matmul(Ia, fk.X[i]))
            pA[lam] = pA[lam] + ops.matmul(Xt, pa)
    a0 = _gravity_acceleration(ops, model)
    a, qdd = [], [None] * n
    for i in range(n):
        lam = int(model.parent[i])
        ai = ops.matmul(fk.X[i], a0 if lam < 0 else a[lam]) + fk.c[i]
        if model.joint_nv[i]:
            qdd[i] = ops.solve(D[i], u[i] - ops.matmul(ops.transpose(U[i]), ai))
            ai = ai + ops.matmul(fk.S[i], qdd[i])
        a.append(ai)
    return _join(ops, qdd, model.nv)
