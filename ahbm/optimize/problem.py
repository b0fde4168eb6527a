"""Optimal-control problems: phases joined by links, with periodicity and symmetry.

A problem is described once and handed to :func:`ahbm.optimize.solve` with a
transcription (direct collocation, multiple shooting, B-splines); the phases
(:mod:`ahbm.optimize.phase`), their objectives and constraints
(:mod:`ahbm.optimize.objectives`, :mod:`ahbm.optimize.constraints`) and the
links between them (:mod:`ahbm.optimize.links`) are in their own modules.
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError
from ahbm.optimize.links import AverageSpeed, Continuity, Impact, Periodic, Symmetry
from ahbm.optimize.phase import Phase
from ahbm.optimize.problem_helpers import _g, _names_to_index
from ahbm.optimize.symbolic import require_casadi

__all__ = ["OptimalControlProblem"]


class OptimalControlProblem:
    """Phases joined by links, with periodicity, symmetry and whole-problem constraints.

    Parameters
    ----------
    phases : Phase or sequence of Phase
    links : sequence of Continuity or Impact, optional
        One per junction (default: continuity everywhere).
    periodic : bool or Periodic, optional
        The last state equals the first (True: all states).
    symmetric : Symmetry, optional
        The first state is the mirror of the last (half cycle of a gait).
    constraints : sequence of AverageSpeed, optional
    per_duration : bool, optional
        Divide the objective by the total duration ``Σ T`` (the mean rate of
        effort; with a prescribed :class:`AverageSpeed` the effort per
        distance travelled, as in Falisse et al. 2019), so that free
        durations are not shrunk only to shorten the integrals.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.optimize import Effort
    >>> m = Model()
    >>> _ = m.add_body("mass", "ground", {"type": "prismatic", "axis": [1, 0, 0]}, mass=1.0)
    >>> ph = Phase(m, nodes=11, duration=1.0, objectives=[Effort()],
    ...            initial={"q": [0.0], "qd": [0.0]}, final={"q": [1.0], "qd": [0.0]})
    >>> OptimalControlProblem(ph).n_phases
    1
    """

    def __init__(
        self, phases, *, links=None, periodic=False, symmetric=None, constraints=(),
        per_duration=False,
    ):  # fmt: skip
        phases = [phases] if isinstance(phases, Phase) else list(phases)
        if not phases or not all(isinstance(p, Phase) for p in phases):
            raise DataError("`phases` must be a Phase or a non-empty list of Phase objects")
        names = [p.name for p in phases]
        if len(set(names)) != len(names):
            for i, p in enumerate(phases):
                p.name = f"{p.name}{i}" if names.count(p.name) > 1 else p.name
        self.phases = phases
        n_links = len(phases) - 1
        links = [Continuity()] * n_links if links is None else list(links)
        if len(links) != n_links:
            raise DataError(
                f"`links` needs {n_links} entries (one per phase junction), got {len(links)}"
            )
        for k in links:
            if not isinstance(k, (Continuity, Impact)):
                raise DataError(f"`links` must hold Continuity or Impact objects, got {k!r}")
        self.links = links
        self.periodic = Periodic() if periodic is True else (periodic or None)
        if self.periodic is not None and not isinstance(self.periodic, Periodic):
            raise DataError(f"`periodic` must be a bool or a Periodic, got {periodic!r}")
        if symmetric is not None and not isinstance(symmetric, Symmetry):
            raise DataError(f"`symmetric` must be a Symmetry, got {symmetric!r}")
        self.symmetric = symmetric
        self.per_duration = bool(per_duration)
        self.constraints = tuple(constraints)
        for c in self.constraints:
            if not isinstance(c, AverageSpeed):
                raise DataError(f"problem `constraints` must hold AverageSpeed objects, got {c!r}")

    @property
    def n_phases(self) -> int:
        return len(self.phases)

    def __repr__(self) -> str:
        return f"OptimalControlProblem(phases={[p.name for p in self.phases]})"

    def global_constraints(self, x0s, xfs, Ts, ps):
        """``(g, lb, ub, names)`` joining the phases: links, periodicity, symmetry, speed."""
        items = []
        costs = {}
        for i, link in enumerate(self.links):
            a, b = self.phases[i], self.phases[i + 1]
            items.append(link.constraints(a, b, xfs[i], x0s[i + 1], f"{a.name}->{b.name}"))
            if isinstance(link, Impact) and link.weight:
                costs[f"impact {a.name}->{b.name}"] = link.cost(a, b, xfs[i])
        first = self.phases[0]
        x0, xf = x0s[0], xfs[-1]
        if self.periodic is not None:
            skip = set(
                _names_to_index(first.model, list(self.periodic.exclude), "Periodic exclude")
            )
            rows = [i for i in range(first.nx) if i % first.nq not in skip or first.nq == 0]
            items.append(_g([(x0[i] - xf[i], 0.0, 0.0, [f"periodic {first.state_names[i]}"])
                             for i in rows]))  # fmt: skip
        if self.symmetric is not None:
            items.append(self._symmetry(first, x0, xf))
        for c in self.constraints:
            i = _names_to_index(first.model, [c.coordinate], "AverageSpeed coordinate")[0]
            total = sum(Ts)
            g = xf[i] - x0[i] - c.speed * total
            items.append(_g([(g, 0.0, 0.0, [f"average speed {c.coordinate}"])]))
        ca = require_casadi()
        if not items:
            return costs, (ca.SX(0, 1), np.zeros(0), np.zeros(0), [])
        g = ca.vertcat(*[x[0] for x in items])
        lb = np.concatenate([x[1] for x in items])
        ub = np.concatenate([x[2] for x in items])
        return costs, (g, lb, ub, [n for x in items for n in x[3]])

    def symmetry_map(self, phase: Phase):
        """``(perm, sign, free)`` of the coordinates for :class:`Symmetry`."""
        s = self.symmetric
        m = phase.model
        n = m.nv
        perm, sign = np.arange(n), np.ones(n)
        for a, b in s.pairs:
            ia, ib = _names_to_index(m, [a, b], "Symmetry pairs")
            perm[ia], perm[ib] = ib, ia
        for nm in s.negate:
            sign[_names_to_index(m, [nm], "Symmetry negate")[0]] = -1.0
        free = set(_names_to_index(m, list(s.exclude), "Symmetry exclude"))
        shift = np.zeros(n)
        for nm, v in s.shift.items():
            shift[_names_to_index(m, [nm], "Symmetry shift")[0]] = float(v)
        return perm, sign, free, shift

    def _symmetry(self, phase, x0, xf):
        perm, sign, free, shift = self.symmetry_map(phase)
        items = []
        nq = phase.nq
        for i in range(phase.nv):
            if i in free:
                continue
            nm = phase.coordinate_names[i]
            items.append((x0[i] - sign[i] * xf[perm[i]] - shift[i], 0.0, 0.0, [f"symmetry q:{nm}"]))
            items.append((x0[nq + i] - sign[i] * xf[nq + perm[i]], 0.0, 0.0, [f"symmetry qd:{nm}"]))
        return _g(items)


def check_problem(problem) -> OptimalControlProblem:
    """``problem`` as an OptimalControlProblem (a single Phase is wrapped)."""
    if isinstance(problem, Phase):
        return OptimalControlProblem(problem)
    if not isinstance(problem, OptimalControlProblem):
        raise DataError(
            f"Expected an OptimalControlProblem or a Phase, got {type(problem).__name__}"
        )
    return problem
