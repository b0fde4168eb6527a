"""Direct collocation: trapezoidal and Hermite–Simpson transcriptions.

Both discretize each phase on ``n`` uniformly spaced nodes ``t_k = t_0 +
k h``, ``h = T / (n − 1)``, with the states and controls at the nodes as
decision variables (Betts 2010, §4.5):

**Trapezoidal** (controls piecewise linear, states quadratic)::

    x_{k+1} − x_k − h/2 (f_k + f_{k+1}) = 0,      ∫ L dt ≈ Σ h/2 (L_k + L_{k+1})

**Hermite–Simpson**, separated form (midpoint states are variables too,
states cubic; the midpoint controls are the mean of the node controls, as in
OpenSim Moco, so that no control escapes the path constraints, which hold at
the nodes; ``HermiteSimpson(interpolate_controls=False)`` makes them
variables)::

    x_m − (x_k + x_{k+1})/2 − h/8 (f_k − f_{k+1}) = 0
    x_{k+1} − x_k − h/6 (f_k + 4 f_m + f_{k+1}) = 0,   ∫ L dt ≈ Σ h/6 (L_k + 4 L_m + L_{k+1})

with ``f_k = f(x_k, u_k, p)``. The local errors are O(h³) and O(h⁵).
Path constraints hold at the nodes, bounds at the nodes and midpoints.

References
----------
J. T. Betts, *Practical Methods for Optimal Control and Estimation Using
Nonlinear Programming*, 2nd ed., SIAM, 2010.
M. Kelly, "An introduction to trajectory optimization: how to do your own
direct collocation", *SIAM Review* 59 (2017) 849–904.
"""

from __future__ import annotations

import numpy as np

from ahbm.optimize.phase import Phase
from ahbm.optimize.transcription import (
    PhaseGrid,
    Transcription,
    Variables,
    register_transcription,
)

__all__ = ["Trapezoidal", "HermiteSimpson"]


class _Collocation(Transcription):
    midpoints = False

    def discretize(self, phase: Phase, index: int, var: Variables, T, p, t0, guess) -> PhaseGrid:
        fns = self.phase_functions(phase)
        ode, cost, cost_names = fns["ode"], fns["cost"], fns["cost_names"]
        n = phase.nodes
        tl = np.linspace(0.0, guess.duration, n)
        Xg, Ug = guess(tl)
        xlo, xhi = phase.state_bounds()
        ulo, uhi = phase.control_bounds()
        X = var.add(f"{phase.name}.x", (phase.nx, n), xlo, xhi, Xg, phase.state_names)
        U = var.add(f"{phase.name}.u", (phase.nu, n), ulo, uhi, Ug, phase.control_names)
        h = T / (n - 1)
        t = [t0 + k * h for k in range(n)]
        F = [ode(X[:, k], U[:, k], p) for k in range(n)]
        L = [cost(X[:, k], U[:, k], p, t[k]) for k in range(n)] if cost_names else None
        cons, costs = [], {}
        names = phase.state_names
        if not self.midpoints:
            for k in range(n - 1):
                d = X[:, k + 1] - X[:, k] - h / 2 * (F[k] + F[k + 1])
                cons.append((d, 0.0, 0.0, [f"{phase.name}[{k}] defect {s}" for s in names]))
            for j, nm in enumerate(cost_names):
                costs[nm] = sum(h / 2 * (L[k][j] + L[k + 1][j]) for k in range(n - 1))
        else:
            tm = 0.5 * (tl[:-1] + tl[1:])
            Xmg, Umg = guess(tm)
            Xm = var.add(f"{phase.name}.xm", (phase.nx, n - 1), xlo, xhi, Xmg, names)
            if self.options.get("interpolate_controls", True):
                Um = 0.5 * (U[:, : n - 1] + U[:, 1:])
            else:
                Um = var.add(f"{phase.name}.um", (phase.nu, n - 1), ulo, uhi, Umg,
                             phase.control_names)  # fmt: skip
            for k in range(n - 1):
                Fm = ode(Xm[:, k], Um[:, k], p)
                d1 = Xm[:, k] - 0.5 * (X[:, k] + X[:, k + 1]) - h / 8 * (F[k] - F[k + 1])
                d2 = X[:, k + 1] - X[:, k] - h / 6 * (F[k] + 4 * Fm + F[k + 1])
                cons.append((d1, 0.0, 0.0, [f"{phase.name}[{k}] midpoint {s}" for s in names]))
                cons.append((d2, 0.0, 0.0, [f"{phase.name}[{k}] defect {s}" for s in names]))
                if cost_names:
                    Lm = cost(Xm[:, k], Um[:, k], p, t[k] + h / 2)
                    for j, nm in enumerate(cost_names):
                        costs[nm] = costs.get(nm, 0.0) + h / 6 * (L[k][j] + 4 * Lm[j] + L[k + 1][j])
        return PhaseGrid(t, X, U, costs, cons)


class Trapezoidal(_Collocation):
    """Trapezoidal direct collocation (``solve(..., method="trapezoidal")``).

    Examples
    --------
    >>> from ahbm.optimize import Phase, Effort, solve
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(gravity=(0, 0, 0))
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> r = solve(ph, method="trapezoidal", verbose=False)
    >>> r.success, round(r.cost, 2)  # closed form 12; the grid adds O(h^2)
    (True, 12.46)
    """

    name = "trapezoidal"


class HermiteSimpson(_Collocation):
    """Hermite–Simpson direct collocation, separated form (``method="hermite-simpson"``)."""

    name = "hermite-simpson"
    midpoints = True


register_transcription("trapezoidal", Trapezoidal)
register_transcription("hermite-simpson", HermiteSimpson)
