"""Direct multiple shooting (Bock & Plitt 1984; Felis 2015, ch. 5).

The phase ``[t0, t0 + T]`` is split into ``N = nodes − 1`` shooting intervals
``[t_k, t_{k+1}]``. The states ``x_k`` at the nodes and the controls ``u_k``
are decision variables; on each interval the ODE ``ẋ = f(x, u(t), p)`` is
integrated from ``x_k`` by ``steps`` fixed steps of the classical Runge–Kutta
method (RK4, built symbolically in CasADi so that IPOPT gets exact first and
second derivatives), and the continuity (matching) conditions

``x_{k+1} − Φ(x_k, u_k, u_{k+1}, p; t_k, h) = 0``,  ``k = 0 … N−1``

join the intervals. The controls are piecewise linear between the nodes
(``control="linear"``) or piecewise constant (``control="constant"``). Felis
(2015, §5.2.1) uses continuous piecewise-linear controls, ahbm's
``"linear"``. The running cost is integrated
by the same RK4 steps as a quadrature state, so the objective is as accurate
as the dynamics. Path constraints hold at the nodes.

Registered as ``solve(problem, method="multiple-shooting")``.

References
----------
H. G. Bock, K. J. Plitt, "A multiple shooting algorithm for direct solution of
optimal control problems", IFAC Proceedings 17 (1984) 1603–1608.
M. L. Felis, *Modeling emotional aspects in human locomotion*, PhD thesis,
Heidelberg University, 2015, ch. 5.
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_choice, as_int
from ahbm.optimize.symbolic import require_casadi
from ahbm.optimize.transcription import PhaseGrid, Transcription, register_transcription

__all__ = ["MultipleShooting", "rk4_interval"]


def rk4_interval(ode, cost, nx: int, nu: int, np_: int, n_cost: int, steps: int):
    """CasADi Function of one shooting interval by ``steps`` RK4 steps.

    Parameters
    ----------
    ode : casadi.Function
        ``ode(x, u, p) -> ẋ``.
    cost : casadi.Function or None
        ``cost(x, u, p, t) -> (term_1, …)``: the running-cost integrands.
    nx, nu, np_, n_cost : int
        Sizes of the state, control, parameters and number of cost terms.
    steps : int
        RK4 steps per interval.

    Returns
    -------
    casadi.Function
        ``Φ(x0, u0, u1, p, t0, h) -> (x1, c)``: the state at ``t0 + h`` and the
        integrals of the cost terms over the interval, with the control
        ``u(t0 + s) = u0 + (u1 − u0) s / h``.

    Notes
    -----
    Classical fourth-order Runge–Kutta on the augmented state ``[x; c]`` with
    ``ċ = L(x, u, p, t)``; local error ``O(Δt⁵)``, ``Δt = h / steps``.

    Examples
    --------
    >>> import casadi as ca
    >>> x, u, p = ca.SX.sym("x"), ca.SX.sym("u"), ca.SX.sym("p", 0)
    >>> ode = ca.Function("ode", [x, u, p], [-x])
    >>> phi = rk4_interval(ode, None, 1, 1, 0, 0, 10)
    >>> bool(abs(float(phi(1.0, 0.0, 0.0, [], 0.0, 1.0)[0]) - np.exp(-1)) < 1e-6)
    True
    """
    ca = require_casadi()
    x0, u0, u1 = ca.SX.sym("x0", nx), ca.SX.sym("u0", nu), ca.SX.sym("u1", nu)
    p, t0, h = ca.SX.sym("p", np_), ca.SX.sym("t0"), ca.SX.sym("h")
    dt = h / steps

    def rhs(x, s):
        u = u0 + (u1 - u0) * (s / h)
        xdot = ode(x, u, p)
        if n_cost:
            c = cost(x, u, p, t0 + s)
            c = ca.vertcat(*c) if isinstance(c, (list, tuple)) else c
        else:
            c = ca.SX(0, 1)
        return xdot, c

    x = x0
    c = ca.SX.zeros(n_cost)
    for j in range(steps):
        s = j * dt
        k1, l1 = rhs(x, s)
        k2, l2 = rhs(x + 0.5 * dt * k1, s + 0.5 * dt)
        k3, l3 = rhs(x + 0.5 * dt * k2, s + 0.5 * dt)
        k4, l4 = rhs(x + dt * k3, s + dt)
        x = x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if n_cost:
            c = c + dt / 6.0 * (l1 + 2 * l2 + 2 * l3 + l4)
    return ca.Function(
        "shooting_interval", [x0, u0, u1, p, t0, h], [x, c], ["x0", "u0", "u1", "p", "t0", "h"],
        ["xf", "cost"],
    )  # fmt: skip


class MultipleShooting(Transcription):
    """Direct multiple shooting with RK4 integration on each interval.

    Parameters
    ----------
    steps : int, optional
        RK4 steps per shooting interval (default 4).
    control : {"linear", "constant"}, optional
        Control parameterization between the nodes (default piecewise linear).

    Notes
    -----
    Variables per phase: the node states ``X`` (nx, N+1) within the state
    bounds and the node controls ``U`` (nu, N+1; N for constant controls)
    within the control bounds. Constraints: the ``N · nx`` continuity
    conditions (named ``"<phase> shooting k q:<coordinate>"``) and, through
    the base class, path and boundary constraints. Felis (2015, ch. 5);
    Bock & Plitt (1984).

    Examples
    --------
    Moving a 1 kg mass by 1 m in 1 s with the least ``∫τ² dt`` (the optimum is
    ``τ = 6 − 12 t``, cost 12):

    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.optimize import Effort, Phase, solve
    >>> m = Model(gravity=(0, 0, 0))
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> r = solve(ph, method=MultipleShooting(steps=2), verbose=False)
    >>> r.success, round(r.cost, 6), round(float(r.tau[0, 0]), 6)
    (True, 12.0, 6.0)
    """

    name = "multiple-shooting"

    def __init__(self, *, steps: int = 4, control: str = "linear"):
        steps = as_int(steps, "steps", minimum=1)
        control = as_choice(control, "control", ("linear", "constant"))
        super().__init__(steps=steps, control=control)

    def discretize(self, phase, index, var, T, p, t0, guess) -> PhaseGrid:
        ca = require_casadi()
        steps, control = self.options["steps"], self.options["control"]
        N = phase.nodes - 1
        nx, nu = phase.nx, phase.nu
        s = np.linspace(0.0, 1.0, N + 1)
        Xg, Ug = guess(s * guess.duration)
        xlo, xhi = phase.state_bounds()
        ulo, uhi = phase.control_bounds()
        X = var.add(f"{phase.name}.X", (nx, N + 1), xlo, xhi, Xg, phase.state_names)
        if control == "linear":
            U = var.add(f"{phase.name}.U", (nu, N + 1), ulo, uhi, Ug, phase.control_names)
            Ugrid = U
        else:
            U = var.add(f"{phase.name}.U", (nu, N), ulo, uhi, Ug[:, :N], phase.control_names)
            Ugrid = ca.horzcat(U, U[:, N - 1])
        fns = self.phase_functions(phase)
        names = fns["cost_names"]
        phi = rk4_interval(fns["ode"], fns["cost"] if names else None, nx, nu, phase.np,
                           len(names), steps)  # fmt: skip
        h = T / N
        times = [t0 + T * float(sk) for sk in s]
        defects, dnames = [], []
        total = ca.SX.zeros(len(names))
        for k in range(N):
            u1 = Ugrid[:, k + 1] if control == "linear" else Ugrid[:, k]
            xk1, ck = phi(X[:, k], Ugrid[:, k], u1, p, times[k], h)
            defects.append(xk1 - X[:, k + 1])
            dnames += [f"{phase.name} shooting {k} {sn}" for sn in phase.state_names]
            if names:
                total = total + ck
        g = ca.vertcat(*defects)
        costs = {nm: total[i] for i, nm in enumerate(names)}
        return PhaseGrid(times, X, Ugrid, costs, [(g, np.zeros(g.shape[0]), np.zeros(g.shape[0]),
                                                   dnames)])  # fmt: skip


register_transcription(MultipleShooting.name, MultipleShooting)
