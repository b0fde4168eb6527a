"""Clamped B-splines (Cox–de Boor) and the B-spline transcription of optimal control.

The coordinates of a phase are B-spline curves of time (Chung 2009, ch. 5):

``q(t) = Σ_i N_{i,p}(t) P_i``,  ``i = 0 … n-1``

with control points ``P_i`` (the design variables of the transcription) and
basis functions ``N_{i,p}`` of degree ``p`` on a clamped knot vector (end knots
repeated ``p + 1`` times, so that the curve starts at ``P_0`` and ends at
``P_{n-1}``). The basis follows the Cox–de Boor recursion (Chung eq 5.3):

``N_{i,0}(t) = 1`` if ``k_i ≤ t < k_{i+1}``, else 0;
``N_{i,p}(t) = (t − k_i)/(k_{i+p} − k_i) N_{i,p−1}(t)
+ (k_{i+p+1} − t)/(k_{i+p+1} − k_{i+1}) N_{i+1,p−1}(t)``

and its derivatives the recursion
``N⁽ʲ⁾_{i,p} = p [N⁽ʲ⁻¹⁾_{i,p−1}/(k_{i+p} − k_i) − N⁽ʲ⁻¹⁾_{i+1,p−1}/(k_{i+p+1} − k_{i+1})]``
(Piegl & Tiller 1997, eq 2.9), with ``0/0 = 0``. The basis is evaluated on numpy
arrays; the transcription multiplies fixed basis matrices with the symbolic
control points, so ``q``, ``q̇``, ``q̈`` at the collocation points are linear in
the design variables and the torques follow from the inverse dynamics there.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, as_int
from ahbm.errors import DataError
from ahbm.optimize.objectives import Jerk
from ahbm.optimize.problem_helpers import _names_to_index
from ahbm.optimize.symbolic import require_casadi
from ahbm.optimize.transcription import PhaseGrid, Transcription, register_transcription

__all__ = [
    "clamped_knots",
    "bspline_basis",
    "bspline_curve",
    "bspline_fit",
    "BSplineTranscription",
]


def clamped_knots(n_control: int, degree: int = 3, t0: float = 0.0, t1: float = 1.0) -> np.ndarray:
    """Clamped knot vector with uniform interior knots.

    Parameters
    ----------
    n_control : int
        Number of control points ``n`` (>= ``degree + 1``).
    degree : int, optional
        Degree ``p`` (default 3, cubic: continuous accelerations, Chung §5.5–5.6).
    t0, t1 : float, optional
        Start and end of the parameter (time) interval, ``t1 > t0``.

    Returns
    -------
    ndarray, shape (n_control + degree + 1,)
        ``p + 1`` knots at ``t0``, ``n − p − 1`` uniform interior knots, ``p + 1`` at ``t1``.

    Examples
    --------
    >>> clamped_knots(5, 3).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0]
    """
    p = as_int(degree, "degree", minimum=0)
    n = as_int(n_control, "n_control", minimum=p + 1)
    t0, t1 = float(t0), float(t1)
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise DataError(f"Expected t1 > t0 (finite), got t0 = {t0!r}, t1 = {t1!r}")
    inner = np.linspace(t0, t1, n - p + 1)[1:-1]
    return np.concatenate([np.full(p + 1, t0), inner, np.full(p + 1, t1)])


def _check_knots(knots, degree):
    k = as_float_array(knots, "knots")
    p = as_int(degree, "degree", minimum=0)
    if k.ndim != 1 or k.size < 2 * (p + 1):
        raise DataError(
            f"Expected `knots` to be a vector of at least 2 (degree + 1) = {2 * (p + 1)} knots, "
            f"got shape {k.shape}"
        )
    if np.any(np.diff(k) < 0):
        raise DataError("`knots` must be non-decreasing")
    if k[p] >= k[k.size - p - 1]:
        raise DataError(
            f"the knots span no interval: knots[{p}] = {k[p]} >= knots[{k.size - p - 1}] = "
            f"{k[k.size - p - 1]}"
        )
    return k, p


def _degree0(k, p, t):
    """Degree-0 basis on the full knot vector, shape (..., m-1); the last span is closed."""
    hi = k[k.size - p - 1]
    out = ((k[:-1] <= t[..., None]) & (t[..., None] < k[1:])).astype(float)
    # t == end of the domain belongs to the last non-empty span
    last = np.flatnonzero(k[:-1] < k[1:])
    last = last[k[last + 1] <= hi][-1]
    at_end = t == hi
    if np.any(at_end):
        out[at_end] = 0.0
        out[at_end, last] = 1.0
    return out


def _ratio(num, den):
    """num / den with 0/0 = 0 (coincident knots)."""
    safe = np.where(den == 0.0, 1.0, den)
    return np.where(den == 0.0, 0.0, num / safe)


def _basis_recursive(k, p, d, t, n0):
    """Derivative d of the degree-p basis on the full knot vector, shape (..., m - p - 1)."""
    m = k.size
    if p == 0:
        return n0 if d == 0 else np.zeros_like(n0)
    low = _basis_recursive(k, p - 1, max(d - 1, 0), t, n0)  # (..., m - p)
    i = np.arange(m - p - 1)
    den_a = k[i + p] - k[i]
    den_b = k[i + p + 1] - k[i + 1]
    a, b = low[..., :-1], low[..., 1:]
    if d == 0:
        return _ratio((t[..., None] - k[i]) * a, den_a) + _ratio(
            (k[i + p + 1] - t[..., None]) * b, den_b
        )
    return p * (_ratio(a, den_a) - _ratio(b, den_b))


def bspline_basis(knots, degree: int, t, derivative: int = 0) -> np.ndarray:
    """B-spline basis functions (or a derivative) at times ``t`` by the Cox–de Boor recursion.

    Parameters
    ----------
    knots : array_like, shape (m,)
        Non-decreasing knot vector (e.g. :func:`clamped_knots`); ``n = m − p − 1``
        basis functions.
    degree : int
        Degree ``p`` (>= 0).
    t : array_like, shape (...)
        Evaluation times within ``[knots[p], knots[m − p − 1]]``.
    derivative : int, optional
        Order of the time derivative (0 to any; above ``p`` the result is zero).

    Returns
    -------
    ndarray, shape (..., n)
        ``N⁽ʲ⁾_{i,p}(t)``; the curve of control points ``P`` (n, d) is ``basis @ P``.

    Raises
    ------
    DataError
        Bad knots (decreasing, too few, empty domain), a negative degree or
        derivative, or times outside the knot domain.

    Notes
    -----
    Cox–de Boor recursion (Chung 2009 eq 5.3; de Boor 1972) and the derivative
    recursion of Piegl & Tiller (1997, eq 2.9), vectorized over ``t`` (no loop
    over times). At the end of the domain the last non-empty span is taken as
    closed, so a clamped curve ends exactly at its last control point. The basis
    is a partition of unity: ``Σ_i N_{i,p}(t) = 1``.

    Examples
    --------
    >>> k = clamped_knots(4, 3)  # the cubic Bernstein basis
    >>> bspline_basis(k, 3, [0.0, 0.5, 1.0]).round(4).tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.125, 0.375, 0.375, 0.125], [0.0, 0.0, 0.0, 1.0]]
    """
    k, p = _check_knots(knots, degree)
    d = as_int(derivative, "derivative", minimum=0)
    t = as_float_array(t, "t")
    lo, hi = k[p], k[k.size - p - 1]
    tol = 1e-12 * max(1.0, abs(lo), abs(hi))
    if np.any(t < lo - tol) or np.any(t > hi + tol):
        raise DataError(
            f"`t` must lie within the knot domain [{lo:g}, {hi:g}], got values from "
            f"{t.min():g} to {t.max():g}"
        )
    t = np.clip(t, lo, hi)
    n0 = _degree0(k, p, t)
    if d > p:
        return np.zeros(t.shape + (k.size - p - 1,))
    return _basis_recursive(k, p, d, t, n0)


def bspline_curve(knots, degree: int, control, t, derivative: int = 0) -> np.ndarray:
    """Evaluate a B-spline curve ``Σ N⁽ʲ⁾_{i,p}(t) P_i``.

    Parameters
    ----------
    knots : array_like, shape (m,)
    degree : int
    control : array_like, shape (n,) or (n, d)
        Control points, ``n = m − degree − 1``.
    t : array_like, shape (...)
    derivative : int, optional

    Returns
    -------
    ndarray, shape (...) or (..., d)

    Examples
    --------
    >>> k = clamped_knots(3, 2)
    >>> float(bspline_curve(k, 2, [0.0, 1.0, 0.0], 0.5))
    0.5
    """
    basis = bspline_basis(knots, degree, t, derivative)
    c = as_float_array(control, "control")
    if c.shape[:1] != basis.shape[-1:]:
        raise DataError(
            f"Expected `control` to have {basis.shape[-1]} rows (control points), got {c.shape}"
        )
    return np.tensordot(basis, c, axes=([-1], [0]))


def bspline_fit(knots, degree: int, t, values) -> np.ndarray:
    """Least-squares control points of a B-spline through samples ``(t, values)``.

    Parameters
    ----------
    knots : array_like, shape (m,)
    degree : int
    t : array_like, shape (k,)
        Sample times within the knot domain (at least ``n`` distinct ones).
    values : array_like, shape (k,) or (k, d)

    Returns
    -------
    ndarray, shape (n,) or (n, d)
        Control points minimizing ``Σ_j |q(t_j) − values_j|²`` (Chung eqs 5.16–5.21);
        used for initial guesses.

    Examples
    --------
    >>> k = clamped_knots(4, 3)
    >>> tt = np.linspace(0, 1, 9)
    >>> (bspline_fit(k, 3, tt, tt**3).round(6) + 0.0).tolist()  # cubic reproduced exactly
    [0.0, 0.0, 0.0, 1.0]
    """
    basis = bspline_basis(knots, degree, t)
    y = as_float_array(values, "values")
    if basis.ndim != 2 or y.shape[:1] != basis.shape[:1]:
        raise DataError(
            f"Expected `t` (k,) and `values` (k,) or (k, d), got {np.shape(t)} and {y.shape}"
        )
    sol, *_ = np.linalg.lstsq(basis, y, rcond=None)
    return sol


# ----------------------------------------------------------------------------
# the B-spline transcription
# ----------------------------------------------------------------------------


def _gauss_points(knots, degree: int, order: int):
    """Gauss–Legendre points and weights on every non-empty knot span."""
    x, w = np.polynomial.legendre.leggauss(order)
    lo, hi = knots[degree], knots[knots.size - degree - 1]
    edges = np.unique(knots[(knots >= lo) & (knots <= hi)])
    a, b = edges[:-1, None], edges[1:, None]
    return (0.5 * (b - a) * x + 0.5 * (a + b)).ravel(), (0.5 * (b - a) * w).ravel()


class BSplineTranscription(Transcription):
    """Coordinates as clamped B-splines; torques by inverse dynamics (Chung 2009, ch. 5–6).

    Parameters
    ----------
    degree : int, optional
        Spline degree ``p`` (default 5: continuous jerk; Chung uses 3).
    control_points : int, optional
        Control points per coordinate (default ``max(p + 1, (nodes + 1) // 2)``;
        ``nodes`` for phases with contacts: their positions and the unactuated
        torques are held at every collocation point, which needs at least as
        many control points).

    Notes
    -----
    The design variables are the control points ``P`` (nq, n) of the
    coordinates and, when the phase has contacts, those of the contact forces
    (B-splines on the same knots; non-negative normal control points keep the
    normal force non-negative everywhere, by the convex-hull property). With
    the normalized time ``s = (t − t0)/T`` and the basis ``N_i(s)`` on
    :func:`clamped_knots` over ``[0, 1]``, at the ``nodes`` uniform
    collocation points ``s_j``:

    ``q_j = Σ N_i(s_j) P_i``, ``q̇_j = Σ N'_i(s_j) P_i / T``,
    ``q̈_j = Σ N''_i(s_j) P_i / T²``,  ``τ_j = ID(q_j, q̇_j, q̈_j, F_j)``

    (inverse dynamics at the collocation points: Chung eq 6.1 is embedded, the
    equations of motion hold exactly there and there are no defects). State and
    torque bounds become inequality constraints at the collocation points
    (unactuated coordinates: ``τ = 0``). The running cost is integrated by
    Gauss–Legendre quadrature with ``p + 1`` points on every knot span (the
    torques there by the same inverse dynamics), so that the optimizer cannot
    exploit quadrature errors between the collocation points. A
    :class:`~ahbm.optimize.objectives.Jerk` objective is exact for ``p ≥ 3``:
    ``w ∫ Σ_i q⃛_i² dt = w T Σ_g w_g Σ_i (Σ_k N⁽³⁾_k(s_g) P_ik / T³)²`` with
    the same Gauss–Legendre points (``q⃛`` is a polynomial of degree ``p − 3``
    on each span, its square integrated exactly); for ``p < 3`` the base
    class's finite differences of the accelerations are used. ``"qdd"``
    boundary values are the spline's second derivative at the ends.
    Clamped knots make the end states
    ``q(0) = P_0``, ``q̇(0) = p (P_1 − P_0)/(k_{p+1} T)``.

    Examples
    --------
    Swinging Chung's pendulum up from hanging to upright in 1 s with the least
    ``∫τ² dt`` (OpenSim Moco finds 0.35440 on this problem):

    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.optimize import Effort, Phase, solve
    >>> m = Model()
    >>> _ = m.add_body("rod", "ground", {"type": "revolute", "axis": [0, -1, 0]},
    ...                mass=0.5, com=[0.2, 0, 0], inertia=np.diag([0, 0.0067, 0.0067]))
    >>> ph = Phase(m, nodes=41, duration=1.0, objectives=[Effort()], q_bounds=(-4, 4),
    ...            initial={"q": [-np.pi / 2], "qd": [0]}, final={"q": [np.pi / 2], "qd": [0]})
    >>> r = solve(ph, method=BSplineTranscription(degree=5), verbose=False)
    >>> r.success, round(r.cost, 4)
    (True, 0.3544)
    """

    name = "bspline"

    def __init__(self, *, degree: int = 5, control_points: int | None = None):
        degree = as_int(degree, "degree", minimum=2)
        if control_points is not None:
            control_points = as_int(control_points, "control_points", minimum=degree + 1)
        super().__init__(degree=degree, control_points=control_points)

    def discretize(self, phase, index, var, T, p, t0, guess) -> PhaseGrid:
        ca = require_casadi()
        deg = self.options["degree"]
        n = phase.nodes
        nc = self.options["control_points"] or (
            max(deg + 1, n) if phase.contacts else max(deg + 1, (n + 1) // 2)
        )
        nq, nv, nf = phase.nq, phase.nv, phase.nf
        knots = clamped_knots(nc, deg)
        s = np.linspace(0.0, 1.0, n)
        B = [bspline_basis(knots, deg, s, d) for d in range(3)]
        Xg, Ug = guess(s * guess.duration)
        Pg = bspline_fit(knots, deg, s, Xg[:nq].T).T
        P = var.add(f"{phase.name}.P", (nq, nc), -np.inf, np.inf, Pg,
                    [f"q:{c}" for c in phase.coordinate_names])  # fmt: skip
        Q = ca.mtimes(P, ca.DM(B[0].T))
        QD = ca.mtimes(P, ca.DM(B[1].T)) / T
        QDD = ca.mtimes(P, ca.DM(B[2].T)) / T**2
        ulo, uhi = phase.control_bounds()
        if nf:  # contact forces: B-splines on the same knots (control points >= 0 if normal)
            Fs = bspline_fit(knots, deg, s, Ug[nv : nv + nf].T).T
            C = var.add(f"{phase.name}.F", (nf, nc), ulo[nv : nv + nf], uhi[nv : nv + nf],
                        np.clip(Fs, ulo[nv : nv + nf, None], uhi[nv : nv + nf, None]),
                        phase.control_names[nv : nv + nf])  # fmt: skip
            F = ca.mtimes(C, ca.DM(B[0].T))
        else:
            C = ca.SX(nf, nc)
            F = ca.SX(0, n)
        # torques by inverse dynamics at the collocation points
        q, qd, qdd = ca.SX.sym("q", nq), ca.SX.sym("qd", nv), ca.SX.sym("qdd", nv)
        f = ca.SX.sym("f", nf)
        parts = [ca.SX.zeros(nv), f] + ([qdd] if phase.dynamics == "implicit" else [])
        u = ca.vertcat(*parts)
        tau = phase.inverse_dynamics(q, qd, qdd, u if nf else None)
        implicit = phase.dynamics == "implicit"
        if implicit:  # torques are variables; the base imposes ID(q, q̇, q̈) = τ at the points
            TAU = var.add(f"{phase.name}.tau", (nv, n), ulo[:nv], uhi[:nv], Ug[:nv],
                          phase.control_names[:nv])  # fmt: skip
        else:
            TAU = ca.Function("id", [q, qd, qdd, f], [tau]).map(n)(Q, QD, QDD, F)
        X = ca.vertcat(Q, QD)
        U = ca.vertcat(TAU, F, *([QDD] if phase.dynamics == "implicit" else []))
        times = [t0 + T * float(sj) for sj in s]
        # bounds at the collocation points
        items = []
        xlo, xhi = phase.state_bounds()
        for rows, M, blo, bhi, names in (
            (range(phase.nx), X, xlo, xhi, phase.state_names),
            (range(phase.nu), U, ulo, uhi, phase.control_names),
        ):
            for i in rows:
                if (M is U and implicit and i < nv) or not (
                    np.isfinite(blo[i]) or np.isfinite(bhi[i])
                ):
                    continue  # implicit torques are bounded variables
                nm = [f"{phase.name}[{j}] bound {names[i]}" for j in range(n)]
                items.append((M[i, :].T, np.full(n, blo[i]), np.full(n, bhi[i]), nm))
        # running cost: Gauss-Legendre on every knot span (exact for polynomial integrands of
        # degree <= 2p - 1), the torques there by the same inverse dynamics
        fns = self.phase_functions(phase)
        costs = {}
        if fns["cost_names"]:
            sg, w = _gauss_points(knots, deg, deg + 1)
            Bg = [ca.DM(bspline_basis(knots, deg, sg, d).T) for d in range(3)]
            Qg = ca.mtimes(P, Bg[0])
            QDg = ca.mtimes(P, Bg[1]) / T
            QDDg = ca.mtimes(P, Bg[2]) / T**2
            Fg = ca.mtimes(C, Bg[0]) if nf else ca.SX(0, sg.size)
            TAUg = ca.Function("id", [q, qd, qdd, f], [tau]).map(sg.size)(Qg, QDg, QDDg, Fg)
            Xc = ca.vertcat(Qg, QDg)
            Uc = ca.vertcat(TAUg, Fg, *([QDDg] if implicit else []))
            tc = [t0 + T * float(v) for v in sg]
            m = len(tc)
            vals = fns["cost"].map(m)(Xc, Uc, ca.repmat(p, 1, m), ca.horzcat(*tc))
            vals = vals if isinstance(vals, (list, tuple)) else [vals]
            for nm, v in zip(fns["cost_names"], vals, strict=True):
                costs[nm] = T * ca.mtimes(v, ca.DM(w))
        jerks = [o for o in phase.objectives if isinstance(o, Jerk)]
        if jerks and deg >= 3:  # exact: the third derivative is a polynomial on every span
            sg, w = _gauss_points(knots, deg, deg + 1)
            QDDDg = ca.mtimes(P, ca.DM(bspline_basis(knots, deg, sg, 3).T)) / T**3
            for o in jerks:
                idx = _names_to_index(phase.model, o.coordinates, "Jerk coordinates")
                sq = ca.sum1(QDDDg[idx, :] ** 2)
                costs[o.name] = costs.get(o.name, 0.0) + o.weight * T * ca.mtimes(sq, ca.DM(w))
        return PhaseGrid(times, X, U, costs, items, qdd=QDD)


register_transcription(BSplineTranscription.name, BSplineTranscription)
