"""Links between the phases of an :class:`~ahbm.optimize.problem.OptimalControlProblem`.

:class:`Continuity` and :class:`Impact` join consecutive phases;
:class:`Periodic`, :class:`Symmetry` and :class:`AverageSpeed` relate the
first and last states of the whole problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ahbm.errors import DataError
from ahbm.optimize.phase import Phase, _g
from ahbm.optimize.symbolic import require_casadi

__all__ = ["Continuity", "Impact", "Periodic", "Symmetry", "AverageSpeed"]


@dataclass(frozen=True)
class Continuity:
    """Phase link: the next phase starts where the previous one ends (``x⁺ = x⁻``)."""

    def constraints(self, a: Phase, b: Phase, xf, x0, name):
        return _g([(x0 - xf, 0.0, 0.0, [f"{name} continuity {s}" for s in b.state_names])])


@dataclass(frozen=True)
class Impact:
    """Phase link with a rigid impact of the next phase's contact points (Felis 2015, §5).

    ``q⁺ = q⁻``; ``M (q̇⁺ − q̇⁻) = Jᵀ Λ`` and ``J q̇⁺ = 0`` with ``J`` the
    Jacobian of the next phase's contact points along their axes, so
    ``q̇⁺ = q̇⁻ − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁻¹ J q̇⁻``. `weight` adds ``w ΛᵀΛ`` to
    the cost (Chung's impulse term, eq 7.17).

    Examples
    --------
    >>> Impact(weight=1e-3).weight  # w ΛᵀΛ added to the cost
    0.001
    """

    weight: float = 0.0

    def post_velocity(self, b: Phase, q, qd):
        """``(q̇⁺, Λ)`` after the impact of phase `b`'s contact points at ``(q, q̇⁻)``."""
        ca = require_casadi()
        if not b.contacts:
            raise DataError(f"an Impact into phase '{b.name}' needs contacts in that phase")
        J = b.contact_jacobian(q)
        M = b.sd.mass_matrix(q)
        MiJt = ca.solve(M, J.T)
        lam = -ca.solve(ca.mtimes(J, MiJt), ca.mtimes(J, qd))
        return qd + ca.mtimes(MiJt, lam), lam

    def constraints(self, a: Phase, b: Phase, xf, x0, name):
        qf, qdf = a.split_state(xf)
        q0, qd0 = b.split_state(x0)
        qd_plus, _ = self.post_velocity(b, qf, qdf)
        ns = b.state_names
        return _g(
            [
                (q0 - qf, 0.0, 0.0, [f"{name} impact {s}" for s in ns[: b.nq]]),
                (qd0 - qd_plus, 0.0, 0.0, [f"{name} impact {s}" for s in ns[b.nq :]]),
            ]
        )

    def cost(self, a: Phase, b: Phase, xf):
        ca = require_casadi()
        if not self.weight:
            return 0.0
        q, qd = a.split_state(xf)
        _, lam = self.post_velocity(b, q, qd)
        return self.weight * ca.sumsqr(lam)


@dataclass(frozen=True)
class Periodic:
    """The last phase ends in the first phase's initial state (except `exclude` coordinates)."""

    exclude: tuple = ()


@dataclass(frozen=True)
class Symmetry:
    """Half-cycle symmetry: the initial state is the mirror of the final one (Chung 7.33–7.34).

    ``x_i(0) = s_i x_{π(i)}(T)`` where `pairs` swap left/right coordinates
    (``π``) and `negate` flips signs (``s_i = −1``, e.g. a lateral lean);
    `exclude` coordinates are free (e.g. the forward position) and `shift`
    adds an offset: ``{name: value}``. Applied to ``q`` and ``q̇``.

    Examples
    --------
    >>> s = Symmetry(pairs=[("hip_r", "hip_l"), ("knee_r", "knee_l")], exclude=["pelvis_tx"])
    >>> s.pairs[0]
    ('hip_r', 'hip_l')
    """

    pairs: tuple = ()
    negate: tuple = ()
    exclude: tuple = ()
    shift: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AverageSpeed:
    """``(q_c(end) − q_c(start)) / Σ T = speed`` for a translation coordinate (m/s).

    Examples
    --------
    >>> AverageSpeed("pelvis_tx", 1.2).speed
    1.2
    """

    coordinate: str
    speed: float
