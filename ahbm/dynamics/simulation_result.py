"""The result object of :func:`ahbm.dynamics.simulate`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = ["SimulationResult"]


@dataclass(frozen=True, repr=False)
class SimulationResult(ResultRepr):
    """Output of :func:`ahbm.dynamics.simulate` (a frozen result object; see :mod:`ahbm.types`).

    Attributes
    ----------
    t : ndarray, shape (n,)
        Output times, s: each accepted step (an event adds rows before and
        after its impact at the same time), or exactly ``t_eval`` if given
        (event states are then in ``events``).
    q, qd, qdd : ndarray, shape (n, nq), (n, nv), (n, nv)
    lam : ndarray, shape (n, m)
        Constraint forces (Lagrange multipliers, ``Gᵀλ`` is the generalized
        constraint force) of the active set; ``m`` is the largest set size
        of all phases, rows of smaller sets are padded with NaN.
    phase : ndarray of int, shape (n,)
        Index of the phase (constraint set in ``constraint_sets``) of each row.
    position_residual, velocity_residual : ndarray, shape (n,)
        Max-norm of ``g(t, q)`` and of ``G q̇ − ν`` of the active set.
    nfev, njev, nlu, n_steps : int
        Right-hand-side evaluations by the integrator, Jacobian evaluations,
        LU decompositions, accepted steps.
    events : list of dict
        ``{"name", "t", "q", "qd_minus", "qd_plus"}`` per event that occurred.
    constraint_sets : list
        The constraint set of each phase (None for unconstrained phases).
    status : int
        0: reached the end; 1: stopped by a terminal event; -1: failed.
    message : str
    force_states : dict of str to ndarray
        States of the stateful force elements
        (:class:`~ahbm.dynamics.StatefulForceElement`) by element name, each
        of shape (n, n_states) at the output times (events with such elements
        also record ``"force_states"``, the states at the event).
    force_state_names : dict of str to tuple of str
        The names of those states (columns of ``force_states[name]``).
    """

    model: Model
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    phase: np.ndarray
    position_residual: np.ndarray
    velocity_residual: np.ndarray
    nfev: int = 0
    njev: int = 0
    nlu: int = 0
    n_steps: int = 0
    events: list = field(default_factory=list)
    constraint_sets: list = field(default_factory=list)
    status: int = 0
    message: str = ""
    force_states: dict = field(default_factory=dict)
    force_state_names: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        n = int(np.shape(self.t)[0])
        span = f"t={self.t[0]:.4g}..{self.t[-1]:.4g} s" if n else "no samples"
        name = getattr(self.model, "name", type(self.model).__name__)
        return f"{ResultRepr.__repr__(self)[:-1]}; model {name!r}, {span})"

    def to_dataframe(self):
        """Table of the result: one row per output time.

        Columns: ``t``, the coordinate names, ``<velocity name>_d`` for
        ``q̇``, ``<velocity name>_dd`` for ``q̈``, ``lambda_<k>``, ``phase``,
        ``position_residual``, ``velocity_residual``, then the force-element
        states by their state names.

        Examples
        --------
        >>> from ahbm.dynamics import simulate
        >>> from ahbm.models import double_pendulum_3d
        >>> m = double_pendulum_3d()
        >>> r = simulate(m, (0, 0.1), np.zeros(4), np.zeros(4))
        >>> list(r.to_dataframe().columns[:3])
        ['t', 'pin', 'euler_rz']
        """
        import pandas as pd

        vn = self.model.velocity_names
        cols = {"t": self.t}
        for k, name in enumerate(self.model.coordinate_names):
            cols[name] = self.q[:, k]
        for k, name in enumerate(vn):
            cols[f"{name}_d"] = self.qd[:, k]
        for k, name in enumerate(vn):
            cols[f"{name}_dd"] = self.qdd[:, k]
        for k in range(self.lam.shape[1]):
            cols[f"lambda_{k}"] = self.lam[:, k]
        cols["phase"] = self.phase
        cols["position_residual"] = self.position_residual
        cols["velocity_residual"] = self.velocity_residual
        for name, values in self.force_states.items():
            for k, state in enumerate(self.force_state_names.get(name, ())):
                cols[state] = values[:, k]
        return pd.DataFrame(cols)
