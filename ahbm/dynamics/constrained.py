"""Constrained forward dynamics, impacts and projection onto constraint manifolds.

The equations of motion of a constrained tree (Felis 2015 §3.1.2, eqs
3.6–3.7)

``H q̈ + C = τ + Gᵀλ``,  ``G q̈ = γ``

are solved for the accelerations ``q̈`` and the constraint forces ``λ`` by one
of three methods: the direct KKT system, the range-space method (one
Cholesky factorization of ``H``; Felis eqs 3.68–3.69) or the null-space
method (QR of ``Gᵀ``). Redundant constraints (rank-deficient ``G``) are
detected and handled by least squares with a warning; ``λ`` is then the
minimum-norm solution. ``Gᵀλ = H q̈ + C − τ`` is the generalized
constraint force.

The AHBM report (§3.1, eq. 4.5) writes the same system as
``M v̇ = f − TᵀGᵀλ``, ``G T v̇ = −(g^t + g^a + g^b)``: its multiplier has the
**opposite sign** (``λ_AHBM = −λ`` here; compare λ with the report only after
changing its sign), its ``G`` is ``∂g/∂p`` (ahbm's ``G`` is the velocity-space
Jacobian ``∂g/∂q · T``, the report's ``G T``) and its coordinates are the
descriptor coordinates of the bodies (``M`` block-diagonal, ``f`` every
applied and velocity-dependent force) where ahbm uses the joint coordinates
of the tree (``M → H``, ``f → τ − C``). ahbm follows Felis's sign, for which
``λ`` is the force the constraint exerts (a contact's normal force is
positive). See docs/sources.md.
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm._engine import dispatch as _dispatch
from ahbm._engine import jit_constrained as _jc
from ahbm._engine import state as _st
from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_int,
    as_positive_float,
    check_model,
)
from ahbm.dynamics.forward import crba
from ahbm.dynamics.inverse import nonlinear_effects
from ahbm.errors import AhbmWarning, DataError, SimulationError
from ahbm.kinematics.configuration import integrate_q
from ahbm.kinematics.rotations import matrix_to_rotvec
from ahbm.kinematics.tree import Model

__all__ = [
    "constrained_forward_dynamics",
    "compute_impulse",
    "project_positions",
    "project_velocities",
]

_METHODS = ("direct", "range_space", "null_space")


def _cset(constraints, model):
    from ahbm.dynamics.constraints import ConstraintSet

    check_model(model)
    if constraints is None:  # the model's own constraints (e.g. from its model file)
        constraints = model.constraints
    cs = constraints if isinstance(constraints, ConstraintSet) else ConstraintSet(constraints)
    cs.validate(model)
    return cs


def _rank(G):
    """Numerical rank of each G (N, m, nv) and the tolerance used."""
    if G.shape[-2] == 0:
        return np.zeros(G.shape[0], dtype=int)
    s = np.linalg.svd(G, compute_uv=False)
    tol = s[..., :1] * max(G.shape[-2:]) * np.finfo(float).eps * 1e3
    return np.sum(s > np.maximum(tol, 1e-300), axis=-1)


def _warn_redundant(rank, m):
    warnings.warn(
        f"the {m} constraint equations are redundant (Jacobian rank {int(rank.min())} < {m}); "
        "solving by least squares: the accelerations are exact, the constraint forces λ are "
        "the minimum-norm solution",
        AhbmWarning,
        stacklevel=4,
    )


def _solve_system(H, G, f, gamma, method):
    """Solve H x = f + Gᵀλ, G x = γ for batches: H (N,n,n), G (N,m,n), f (N,n), γ (N,m)."""
    N, m, n = G.shape
    if m == 0:
        return np.linalg.solve(H, f[..., None])[..., 0], np.zeros((N, 0))
    rank = _rank(G)
    redundant = bool(np.any(rank < m))
    if redundant:
        _warn_redundant(rank, m)
    if method == "direct":
        K = np.zeros((N, n + m, n + m))
        K[:, :n, :n] = H
        K[:, :n, n:] = np.swapaxes(G, 1, 2)
        K[:, n:, :n] = G
        rhs = np.concatenate([f, gamma], axis=1)[..., None]
        if redundant:
            sol = (np.linalg.pinv(K, rcond=1e-12) @ rhs)[..., 0]
        else:
            sol = np.linalg.solve(K, rhs)[..., 0]
        x, lam = sol[:, :n], -sol[:, n:]
    elif method == "range_space":
        try:
            L = np.linalg.cholesky(H)
        except np.linalg.LinAlgError as err:
            raise SimulationError("mass matrix is not positive definite") from err
        Y = np.linalg.solve(L, np.swapaxes(G, 1, 2))  # L⁻¹ Gᵀ (N, n, m)
        z = np.linalg.solve(L, f[..., None])  # L⁻¹ f
        K = np.swapaxes(Y, 1, 2) @ Y  # G H⁻¹ Gᵀ
        rhs = gamma[..., None] - np.swapaxes(Y, 1, 2) @ z  # γ − G H⁻¹ f
        if redundant:
            lam = (np.linalg.pinv(K, rcond=1e-12, hermitian=True) @ rhs)[..., 0]
        else:
            Lk = np.linalg.cholesky(K)
            lam = np.linalg.solve(
                np.swapaxes(Lk, 1, 2), np.linalg.solve(Lk, rhs)
            )[..., 0]  # fmt: skip
        w = z + Y @ lam[..., None]  # L⁻¹ (f + Gᵀλ)
        x = np.linalg.solve(np.swapaxes(L, 1, 2), w)[..., 0]
    elif method == "null_space":
        GT = np.swapaxes(G, 1, 2)  # (N, n, m)
        if redundant:
            x = np.empty((N, n))
            lam = np.empty((N, m))
            U, s, Vt = np.linalg.svd(GT)  # GT = U S Vt
            for k in range(N):  # rank may differ per state (rare path)
                r = int(rank[k])
                Yk, Zk = U[k, :, :r], U[k, :, r:]
                Sr, Vr = s[k, :r], Vt[k, :r].T  # G = Vr Sr Ykᵀ
                qy = (Vr.T @ gamma[k]) / Sr
                xy = Yk @ qy
                Hz = Zk.T @ H[k] @ Zk
                qz = np.linalg.solve(Hz, Zk.T @ (f[k] - H[k] @ xy)) if Hz.size else np.zeros(0)
                x[k] = xy + Zk @ qz
                res = H[k] @ x[k] - f[k]
                lam[k] = Vr @ ((Yk.T @ res) / Sr)
        else:
            Q, R = np.linalg.qr(GT, mode="complete")  # GT = Q [R; 0]
            Y, Z, R = Q[:, :, :m], Q[:, :, m:], R[:, :m, :]
            qy = np.linalg.solve(np.swapaxes(R, 1, 2), gamma[..., None])  # Rᵀ qy = γ
            xy = Y @ qy
            ZT = np.swapaxes(Z, 1, 2)
            Hz = ZT @ H @ Z
            rhs = ZT @ (f[..., None] - H @ xy)
            qz = np.linalg.solve(Hz, rhs) if n > m else np.zeros((N, 0, 1))
            xv = xy + Z @ qz
            x = xv[..., 0]
            res = H @ xv - f[..., None]
            lam = np.linalg.solve(R, np.swapaxes(Y, 1, 2) @ res)[..., 0]
    else:  # pragma: no cover - checked by callers
        raise DataError(f"`method` must be one of {_METHODS}, got {method!r}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(lam))):
        raise SimulationError(
            "singular constrained system: non-finite accelerations (check the constraint "
            "Jacobian and the mass matrix)"
        )
    if redundant:
        viol = np.abs(np.einsum("kij,kj->ki", G, x) - gamma).max()
        scale = 1.0 + np.abs(gamma).max() + np.abs(G).max() * np.abs(x).max()
        if viol > 1e-8 * scale:
            raise SimulationError(
                f"singular constraint Jacobian with inconsistent constraints: the "
                f"acceleration constraints cannot all hold (violation {viol:.3g}); remove "
                "conflicting constraints"
            )
    return x, lam


def _prep(model, q, qd, tau):
    check_model(model)
    q = as_float_array(q, "q")
    # None means zeros for qd and tau (docs/api-rules.md §4)
    qd = np.zeros(model.nv) if qd is None else as_float_array(qd, "qd")
    tau = np.zeros(model.nv) if tau is None else as_float_array(tau, "tau")
    for arr, name, n in ((q, "q", model.nq), (qd, "qd", model.nv), (tau, "tau", model.nv)):
        if arr.ndim == 0 or arr.shape[-1] != n:
            raise DataError(f"Expected `{name}` to have shape (..., {n}), got {arr.shape}")
    try:
        batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1], tau.shape[:-1])
    except ValueError as err:
        raise DataError(
            f"batch shapes of q, qd and tau do not broadcast: {q.shape[:-1]}, {qd.shape[:-1]}, "
            f"{tau.shape[:-1]}"
        ) from err
    q = np.broadcast_to(q, batch + (model.nq,))
    qd = np.broadcast_to(qd, batch + (model.nv,))
    tau = np.broadcast_to(tau, batch + (model.nv,))
    return batch, q, qd, tau


def constrained_forward_dynamics(
    model: Model,
    q,
    qd,
    tau,
    constraints,
    *,
    t=0.0,
    method: str = "direct",
    baumgarte=None,
    f_ext=None,
    f_ext_frame: str = "world",
    kin=None,
):
    """Accelerations and constraint forces of a constrained multibody system.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq), or None with ``kin``
    qd : array_like, shape (..., nv), or None
        None: the velocities of ``kin``, or zeros without ``kin``.
    tau : array_like, shape (..., nv), or None
        Applied generalized forces; None means zeros.
    constraints : ConstraintSet, list of Constraint or None
        None: the model's own ``model.constraints``.
    t : float or array_like, optional
        Time, s (for rheonomic constraints).
    method : {"direct", "range_space", "null_space"}
        ``"direct"``: solve the KKT system ``[[H, Gᵀ], [G, 0]] [q̈; −λ] =
        [τ − C; γ]``; ``"range_space"``: ``H = LLᵀ``, ``K = G H⁻¹ Gᵀ``,
        ``K λ = γ − G H⁻¹ (τ − C)`` (Felis eqs 3.68–3.69); ``"null_space"``:
        ``Gᵀ = Q [R; 0]``, ``q̈ = Y q_y + Z q_z`` with ``Rᵀ q_y = γ`` and
        ``Zᵀ H Z q_z = Zᵀ (τ − C − H Y q_y)``. One state without ``f_ext``
        and with built-in constraint types: ``"direct"`` and ``"range_space"``
        both run the compiled range-space solve (the same solution to
        rounding; redundant constraints go to the general solvers).
    baumgarte : (float, float), optional
        Baumgarte stabilization ``(α, β)``: ``γ ← γ − 2α (G q̇ − ν) − β² g``.
    f_ext : array_like, shape (..., n_bodies, 6), optional
        External spatial forces (see :mod:`ahbm.dynamics.inverse`).
    f_ext_frame : {"world", "local"}
    kin : Kinematics, optional
        State with velocities from
        :func:`~ahbm.kinematics.forward.forward_kinematics` (reused for the
        constraint terms; ``q`` and ``qd`` may then be None).

    Returns
    -------
    qdd : ndarray, shape (..., nv)
    lam : ndarray, shape (..., m)
        Constraint forces: ``Gᵀλ = H q̈ + C − τ``.

    Raises
    ------
    SimulationError
        Singular mass matrix, or a singular constraint Jacobian whose
        constraints are inconsistent. Redundant but consistent constraints
        only warn (AhbmWarning).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> from ahbm.dynamics.constraints import PointConstraint
    >>> from ahbm.kinematics.forward import point_acceleration, point_position
    >>> m = triple_pendulum_euler()
    >>> q = np.full(9, 0.2)
    >>> c = [PointConstraint("link3", [0, 0, -1], other_point=point_position(m, q, 2, [0, 0, -1]))]
    >>> qdd, lam = constrained_forward_dynamics(m, q, np.zeros(9), np.zeros(9), c)
    >>> bool(np.allclose(point_acceleration(m, q, np.zeros(9), qdd, 2, [0, 0, -1]), 0))
    True
    """
    if method not in _METHODS:
        raise DataError(f"`method` must be one of {_METHODS}, got {method!r}")
    cs = _cset(constraints, model)
    if kin is not None:
        kin = _st.resolve(model, kin, q, qd, needs_qd=True, columns=True)
        q, qd = kin.q, kin.qd
    batch, q, qd, tau = _prep(model, q, qd, tau)
    if kin is not None and batch != kin.batch_shape:
        raise DataError(
            f"`tau` has batch shape {np.shape(tau)[:-1]} but `kin` was computed for batch shape "
            f"{kin.batch_shape}; pass a kin of the batch shape of tau"
        )
    if baumgarte is not None:
        try:
            baumgarte = tuple(float(x) for x in baumgarte)
            if len(baumgarte) != 2:
                raise ValueError
        except (TypeError, ValueError) as err:
            raise DataError("`baumgarte` must be a pair (alpha, beta) of numbers") from err
    if batch == () and f_ext is None and np.ndim(t) == 0:  # one state: the lean path
        lean = _LeanConstrained.build(model, cs, method, baumgarte)
        # (with kin too: the kernels recompute the same arrays, so the results are the
        # same with and without kin); writable copies: the kernels are compiled for those
        out = None if lean is None else lean(t, *(np.array(a) for a in (q, qd, tau)))
        if out is not None:
            return out
    x, lam = _constrained_fd(
        model, q, qd, tau, cs, t, method, baumgarte, f_ext, f_ext_frame, kin=kin
    )
    m = lam.shape[-1]
    return x.reshape(batch + (model.nv,)), lam.reshape(batch + (m,))


def _constrained_fd(
    model, q, qd, tau, cs, t, method, baumgarte, f_ext=None, f_ext_frame="world", *, kin=None
):
    """Unvalidated core of constrained_forward_dynamics; returns flat (N, nv), (N, m)."""
    if kin is None:
        kin = _st.compute(model, q, qd, columns=True)
    terms = cs._assemble(kin, t, position=baumgarte is not None)
    qf = _st.q_flat(kin)
    H = _dispatch.crba(model, qf)
    if f_ext is None:
        C = _dispatch.rnea(model, qf, _st.qd_flat(kin), None)
    else:
        C = nonlinear_effects(model, q, qd, f_ext=f_ext, f_ext_frame=f_ext_frame)
    m = terms.G.shape[-2]
    N = qf.shape[0]  # frames (explicit: with m = 0 the batch size cannot be inferred)
    G = terms.G.reshape(N, m, model.nv)
    gamma = terms.gamma.reshape(N, m)
    if baumgarte is not None:
        alpha, beta = baumgarte
        vel = np.einsum("kij,kj->ki", G, qd.reshape(N, model.nv)) - terms.nu.reshape(N, m)
        gamma = gamma - 2.0 * alpha * vel - beta**2 * terms.g.reshape(N, m)
    f = tau.reshape(-1, model.nv) - C.reshape(-1, model.nv)
    return _solve_system(H, G, f, gamma, method)


# ----------------------------------------------------------------------------
# lean single-state path (the right-hand side of simulate)
# ----------------------------------------------------------------------------

_RANK_TOL = 1e-8  # a Cholesky pivot of K below this fraction of its diagonal: general path


class _LeanConstrained:
    """Single-state constrained accelerations for one model and one constraint set.

    The plan of the constraint rows is made once (:meth:`build`, e.g. per
    simulation phase); each call runs the kinematics, CRBA and RNEA kernels
    once on ``q``, ``qd``, writes ``G`` and ``γ`` with
    :func:`~ahbm._engine.jit_constrained.constraint_rows_kernel` (point,
    plane and orientation constraints; coordinate couplings and prescribed
    coordinates in Python) and solves by the range-space method
    (:func:`~ahbm._engine.jit_constrained.range_space_kernel`); the rows of
    velocity-level constraints come from their functions, one state at a
    time, and position projection leaves them out. It returns
    None whenever the general path must decide (input the kernels refuse, a
    mass matrix that is not positive definite, redundant or nearly redundant
    constraints, a non-finite result); the general path then gives the same
    accelerations, warnings and errors as without the lean path.
    """

    __slots__ = (
        "model", "nv", "m", "blk", "rr", "D", "support", "coords", "orient", "coord_q", "bg",
        "velocity", "hol",
    )  # fmt: skip

    @classmethod
    def build(cls, model, cs, method, baumgarte):
        """The lean evaluator of `cs` on `model`, or None if the general path is needed.

        Covered: ``method`` "direct" or "range_space" (the same solution),
        with or without Baumgarte stabilization ``(α, β)``, and constraints
        of the built-in types (exactly, not subclasses) only.
        """
        from ahbm.dynamics.coordinate_constraints import (
            CoordinateCoupling,
            PrescribedCoordinate,
            _coordinate,
        )
        from ahbm.dynamics.geometric_constraints import (
            OrientationConstraint,
            PlaneConstraint,
            PointConstraint,
        )
        from ahbm.dynamics.velocity_constraints import VelocityConstraint

        if method not in ("direct", "range_space") or cs is None:
            return None
        blk, rr, D, coords, velocity = [], [], [], [], []
        orient, coord_q = {}, {}
        row = 0
        for c in cs:
            kind = type(c)
            if kind in (PointConstraint, PlaneConstraint, OrientationConstraint):
                b, o = c._idx(model)
                n = c.D.shape[0]
                point = kind is not OrientationConstraint
                code = _jc.POINT if point else _jc.ORIENTATION
                blk.append((code, b, o, row, n))
                rr.append((c.point, c.other_point) if point else np.zeros((2, 3)))
                D.append(c.D)
                orient[row] = c
            elif kind is CoordinateCoupling:
                (qc, vc), (qd_, vd) = c._idx(model)
                coords.append((row, vc, (qd_, vd, c._f)))
                coord_q[row] = qc
                D.append(np.zeros((1, 3)))
            elif kind is PrescribedCoordinate:
                qc, vi = _coordinate(model, c.coordinate, f"constraint '{c.name}'")
                coords.append((row, vi, c))
                coord_q[row] = qc
                D.append(np.zeros((1, 3)))
            elif kind is VelocityConstraint:  # rows from its functions (no g)
                n = c.size(model)
                velocity.append((row, n, c))
                D.append(np.zeros((n, 3)))
            else:  # user constraints and subclasses: the general path
                return None
            row += D[-1].shape[0]
        if row == 0:
            return None
        self = cls()
        self.model, self.nv, self.m = model, model.nv, row
        self.bg = None if baumgarte is None else tuple(float(x) for x in baumgarte)
        self.blk = np.array(blk, dtype=np.int64).reshape(-1, 5)
        self.rr = np.array(rr, dtype=float).reshape(-1, 2, 3)
        self.D = np.ascontiguousarray(np.concatenate(D), dtype=float)
        support = np.zeros((model.n_bodies, model.nv), dtype=np.uint8)
        for b, dofs in enumerate(model.support_dofs):
            support[b, dofs] = 1
        self.support = support
        self.coords, self.orient, self.coord_q = coords, orient, coord_q
        self.velocity = velocity
        hol = np.ones(row, dtype=bool)
        for r0, n, _ in velocity:
            hol[r0 : r0 + n] = False
        self.hol = np.flatnonzero(hol)
        return self

    def terms(self, t, q, qd, *, gamma_rows=True):
        """``G`` (m, nv) and ``γ`` (m,) of one state (float64 arrays (nq,), (nv,)).

        ``gamma_rows=False``: only ``G`` is needed (``γ`` of the velocity rows is left 0).
        """
        Rw, pw, v, a, Sw = _dispatch.kinematics(self.model, q[None], qd[None], columns=True)
        G = np.zeros((self.m, self.nv))
        gamma = np.zeros(self.m)
        if self.blk.shape[0]:
            _jc.constraint_rows_kernel(
                self.blk, self.rr, self.D, self.support, Rw[0], pw[0], v[0], a[0], Sw[0], G,
                gamma,
            )  # fmt: skip
        for row, vi, spec in self.coords:
            G[row, vi] = 1.0
            if type(spec) is tuple:  # coupling: G = e_c − f'(q_d) e_d, γ = f''(q_d) q̇_d²
                qd_, vd, f = spec
                x = q[qd_ : qd_ + 1]
                G[row, vd] = -f[1](x)[0]
                gamma[row] = (f[2](x) * qd[vd : vd + 1] ** 2)[0]
            else:  # prescribed: G = e_c, γ = s̈(t)
                gamma[row] = spec._ev(2, np.full(1, float(t)))[0]
        for row, n, c in self.velocity:  # G = A(t, q), γ = ḃ − Ȧ q̇
            G[row : row + n], gam = c._rows_one(self.model, t, q, qd if gamma_rows else None)
            if gamma_rows:
                gamma[row : row + n] = gam
        return G, gamma

    def position(self, t, q):
        """Residuals ``g(t, q)`` (m,) of one configuration (the formulas of the constraints)."""
        Rw, pw = _dispatch.kinematics(self.model, q[None], None, columns=False)[:2]
        Rw, pw = Rw[0], pw[0]
        g = np.zeros(self.m)  # velocity rows: no position equation
        eye = np.eye(3)
        for (kind, b, o, r0, n), (rb, ro) in zip(self.blk, self.rr, strict=True):
            D = self.D[r0 : r0 + n]
            if kind == _jc.POINT:  # D (p_b − p_o); a ground point is given in the world
                pb = rb if b < 0 else pw[b] + Rw[b] @ rb
                po = ro if o < 0 else pw[o] + Rw[o] @ ro
                g[r0 : r0 + n] = D @ (pb - po)
            else:  # D log(R_b (R_o R₀)ᵀ)^∨
                c = self.orient[r0]
                Rb, Ro = (eye if b < 0 else Rw[b]), (eye if o < 0 else Rw[o])
                g[r0 : r0 + n] = D @ matrix_to_rotvec((Rb @ (Ro @ c.rotation).T)[None])[0]
        times = np.full(1, float(t))
        for row, _, spec in self.coords:
            if type(spec) is tuple:  # coupling: q_c − f(q_d)
                qd_, _, f = spec
                g[row] = q[self.coord_q[row]] - f[0](q[qd_ : qd_ + 1])[0]
            else:  # prescribed: q_c − s(t)
                g[row] = q[self.coord_q[row]] - spec._ev(0, times)[0]
        return g

    def nu(self, t, q=None):
        """``ν`` (m,) of ``G q̇ = ν``: ṡ(t) of prescribed coordinates, ``b`` of velocity rows.

        ``q`` (nq,) is needed when the set has velocity rows.
        """
        nu = np.zeros(self.m)
        for row, _, spec in self.coords:
            if type(spec) is not tuple:
                nu[row] = spec._ev(1, np.full(1, float(t)))[0]
        for row, n, c in self.velocity:
            nu[row : row + n] = c._b_one(self.model, t, q)
        return nu

    def __call__(self, t, q, qd, tau):
        """(q̈ (nv,), λ (m,)) of one state, or None (the general path decides)."""
        model = self.model
        H = _dispatch.crba_single(model, q)
        C = None if H is None else _dispatch.rnea_single(model, q, qd, None)
        if C is None:
            return None
        G, gamma = self.terms(t, q, qd)
        if self.bg is not None:  # γ − 2α (G q̇ − ν) − β² g
            alpha, beta = self.bg
            vel = G @ qd - self.nu(t, q)
            gamma = gamma - 2.0 * alpha * vel - beta**2 * self.position(t, q)
        x = np.empty(self.nv)
        lam = np.empty(self.m)
        if _jc.range_space_kernel(H, G, np.subtract(tau, C), gamma, _RANK_TOL, x, lam):
            return None
        return x, lam

    def project(self, t, q, qd, tol):
        """``(q, q̇)`` projected as :func:`project_positions` and :func:`project_velocities` do.

        Returns None for a state the kernels refuse (the public functions then decide).
        """
        H = _dispatch.crba_single(self.model, q)
        if H is None:
            return None
        zero, hol = np.zeros(self.nv), self.hol  # positions: the holonomic rows only
        q = _newton_projection(
            self.model, q, lambda x: self.position(t, x)[hol],
            lambda x: self.terms(t, x, zero, gamma_rows=False)[0][hol], lambda: H, tol, 50,
        )  # fmt: skip
        H = _dispatch.crba_single(self.model, q)
        if H is None:
            return None
        G = self.terms(t, q, zero, gamma_rows=False)[0]
        return q, _kkt_min_change(H, G, H @ qd, self.nu(t, q))


def _kkt_min_change(H, G, Hv, rhs_c):
    """Solve [[H, Gᵀ], [G, 0]] [x; μ] = [Hv; rhs_c] for one state (least squares if singular).

    The range-space kernel solves it when H is positive definite and G has
    full rank (it refuses otherwise); then an LU solve of the whole system,
    or least squares for a rank-deficient G.
    """
    n, m = H.shape[0], G.shape[0]
    x, mu = np.empty(n), np.empty(m)
    if m and not _jc.range_space_kernel(H, G, Hv, rhs_c, _RANK_TOL, x, mu):
        return x
    K = np.zeros((n + m, n + m))
    K[:n, :n] = H
    K[:n, n:] = G.T
    K[n:, :n] = G
    rhs = np.concatenate([Hv, rhs_c])
    if m and int(_rank(G[None])[0]) < m:
        return np.linalg.lstsq(K, rhs, rcond=1e-12)[0][:n]
    return np.linalg.solve(K, rhs)[:n]


def compute_impulse(
    model: Model, q, qd_minus, constraints, *, restitution: float = 0.0, t=0.0, kin=None
) -> np.ndarray:
    """Velocities after an impact that enforces the constraint velocities.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    qd_minus : array_like, shape (nv,)
        Velocities before the impact.
    constraints : ConstraintSet, list of Constraint or None
        None: the model's own ``model.constraints``.
        Constraints active after the impact.
    restitution : float, optional
        Coefficient of restitution ``e`` in [0, 1].
    t : float, optional
        Time, s (for rheonomic constraints).
    kin : Kinematics, optional
        State of ``q`` from :func:`~ahbm.kinematics.forward.forward_kinematics`
        (reused for the constraint Jacobian; ``q`` may then be None).

    Returns
    -------
    qd_plus : ndarray, shape (nv,)

    Notes
    -----
    ``[[H, Gᵀ], [G, 0]] [q̇⁺; −Λ] = [H q̇⁻; ν − e (G q̇⁻ − ν)]`` (Felis 2015
    eqs 3.10–3.12, there with ``ν = 0``); ``GᵀΛ = H (q̇⁺ − q̇⁻)`` is the generalized impulse. With
    ``e = 0`` the constraint velocities vanish after the impact; kinetic
    energy never increases for ``e ≤ 1`` and scleronomic constraints.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> from ahbm.dynamics.constraints import PointConstraint
    >>> m = triple_pendulum_euler()
    >>> c = [PointConstraint("link3", [0, 0, -1], other_point=[0, 0, -3])]
    >>> qdp = compute_impulse(m, np.zeros(9), np.ones(9), c)
    >>> from ahbm.kinematics.forward import point_velocity
    >>> bool(np.allclose(point_velocity(m, np.zeros(9), qdp, 2, [0, 0, -1]), 0))
    True
    """
    e = as_finite_float(restitution, "restitution")
    if not 0.0 <= e <= 1.0:
        raise DataError(f"`restitution` must be in [0, 1], got {restitution}")
    cs = _cset(constraints, model)
    if kin is not None:
        kin = _st.resolve(model, kin, q, columns=True)
        q = kin.q
    q = as_float_array(q, "q")
    qdm = as_float_array(qd_minus, "qd_minus")
    if q.shape != (model.nq,) or qdm.shape != (model.nv,):
        raise DataError(
            f"Expected `q` of shape ({model.nq},) and `qd_minus` of shape ({model.nv},), "
            f"got {q.shape} and {qdm.shape}"
        )
    terms = cs.assemble(model, q, None, t=t, position=False, kin=kin)
    H = crba(model, q)
    G, nu = terms.G, terms.nu
    target = nu - e * (G @ qdm - nu)
    return _kkt_min_change(H, G, H @ qdm, target)


def project_velocities(model: Model, q, qd, constraints, *, t=0.0, kin=None) -> np.ndarray:
    """Project velocities onto ``G q̇ = ν`` in the mass-matrix metric (AHBM eq 4.8).

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,), or None with ``kin``
    qd : array_like, shape (nv,)
    constraints : ConstraintSet, list of Constraint or None
        None: the model's own ``model.constraints``.
    t : float, optional
        Time, s.
    kin : Kinematics, optional
        State of ``q`` from :func:`~ahbm.kinematics.forward.forward_kinematics`.

    Returns
    -------
    ndarray, shape (nv,)
        ``argmin ½ (v − q̇)ᵀ H (v − q̇)`` subject to ``G v = ν``.

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> from ahbm.dynamics.constraints import PointConstraint
    >>> m = triple_pendulum_euler()
    >>> c = [PointConstraint("link3", [0, 0, -1], other_point=[0, 0, -3])]
    >>> v = project_velocities(m, np.zeros(9), np.ones(9), c)
    >>> from ahbm.kinematics.forward import point_velocity
    >>> bool(np.allclose(point_velocity(m, np.zeros(9), v, 2, [0, 0, -1]), 0))
    True
    """
    return compute_impulse(model, q, qd, constraints, restitution=0.0, t=t, kin=kin)


def project_positions(
    model: Model, q, constraints, *, t=0.0, tol: float = 1e-12, max_iter: int = 50
) -> np.ndarray:
    """Project coordinates onto ``g(t, q) = 0`` (AHBM eq 4.7, mass-matrix metric).

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    constraints : ConstraintSet, list of Constraint or None
        None: the model's own ``model.constraints``.
    t : float, optional
        Time, s.
    tol : float, optional
        Convergence tolerance on the max-norm of ``g`` (and of the update).
    max_iter : int, optional

    Returns
    -------
    ndarray, shape (nq,)
        Quaternions come out normalized.

    Raises
    ------
    SimulationError
        The Newton iteration does not converge (the state is too far from the
        constraint manifold, or the constraints cannot be satisfied).

    Notes
    -----
    Velocity-level constraints (:class:`~ahbm.dynamics.VelocityConstraint`)
    have no position equation and are left out. Newton iteration with
    ``M = H(q⁰)`` and ``G`` (AHBM uses ``G(q⁰)``; the
    Jacobian is re-evaluated here when the first iterations do not converge):
    ``[[M, Gᵀ], [G, 0]] [Δγ; μ] = −[M γᵏ; g(t, qᵏ)]``, ``γᵏ⁺¹ = γᵏ + Δγ``,
    ``qᵏ⁺¹ = qᵏ ⊕ Δγ`` (``⊕`` = :func:`~ahbm.kinematics.integrate_q`).

    Examples
    --------
    >>> from ahbm.models import triple_pendulum_euler
    >>> from ahbm.dynamics.constraints import PlaneConstraint, ConstraintSet
    >>> m = triple_pendulum_euler()
    >>> c = ConstraintSet([PlaneConstraint("link3", [0, 0, -1], normal=[1, 0, 0])])
    >>> qp = project_positions(m, np.full(9, 0.01), c)
    >>> bool(abs(c.position(m, qp)[0]) < 1e-12)
    True
    """
    cs = _cset(constraints, model).holonomic_part()  # velocity constraints: no g(t, q)
    q = as_float_array(q, "q")
    if q.shape != (model.nq,):
        raise DataError(f"Expected `q` to have shape ({model.nq},), got {q.shape}")
    tol = as_positive_float(tol, "tol")
    max_iter = as_int(max_iter, "max_iter", minimum=1)
    return _newton_projection(
        model, q, lambda x: cs.position(model, x, t=t), lambda x: cs.jacobian(model, x, t=t),
        lambda: crba(model, q), tol, max_iter,
    )  # fmt: skip


def _newton_projection(model, q0, position, jacobian, mass, tol, max_iter):
    """Newton iteration of :func:`project_positions`.

    ``position(q)`` -> g (m,), ``jacobian(q)`` -> G (m, nv), ``mass()`` -> H(q0).
    """
    q = integrate_q(model, q0, np.zeros(model.nv))  # normalizes quaternions
    g = position(q)
    if g.size == 0 or np.abs(g).max() <= tol:
        return q
    M = mass()
    G = jacobian(q0)
    acc = np.zeros(model.nv)
    for it in range(max_iter):
        if it >= 3:  # full Newton if the simplified iteration is slow
            G = jacobian(q)
        dgam = _kkt_min_change(M, G, -(M @ acc), -g)
        acc += dgam
        q = integrate_q(model, q, dgam)
        g = position(q)
        if not np.all(np.isfinite(g)):
            break
        if np.abs(g).max() <= tol or (np.abs(dgam).max() <= tol * 1e-2 and np.abs(g).max() < 1e-9):
            return q
    gmax = float(np.abs(g).max())
    raise SimulationError(
        f"position projection onto the constraints did not converge (max |g| = {gmax:.3g} after "
        f"{max_iter} iterations); the state is too far from the constraint manifold or the "
        "constraints cannot be satisfied"
    )
