"""Velocity-level (nonholonomic) constraints in optimal-control phases (CasADi).

A :class:`~ahbm.dynamics.velocity_constraints.VelocityConstraint` given in a
:class:`~ahbm.optimize.Phase`'s ``constraints`` is imposed as it is in
constrained forward dynamics:

* its multipliers ``λ`` (one per row, unbounded, N or N·m) are controls of
  the phase, named ``"lambda:<constraint>[k]"``, placed after the contact
  forces (they count in ``phase.nf``, the force controls);
* the generalized constraint force ``A(q)ᵀ λ`` joins the joint torques in
  the dynamics (explicit: ``q̈ = FD(q, q̇, τ + Aᵀλ)``; implicit:
  ``ID(q, q̇, q̈) − Aᵀλ = τ``);
* ``A(q) q̇ − b(q) = 0`` is a path constraint at every node (named
  ``"<constraint>[k]"``).

The multipliers are free controls, and the transcriptions meet the
constraints at the nodes only: without a cost on them, the solver can let
the multipliers ring from node to node and do work on the grid (a discrete
artefact whose cost vanishes as the grid is refined, so the "optimum" does
not converge to a physical motion). A small smoothness term on them,
``ControlRate(controls=["lambda:"], weight=1e-4)``, removes it: in the
tests the optimal torques then reproduce the optimal trajectory in forward
simulation (``simulate`` with the same constraint) to O(h²) with
trapezoidal and O(h⁴) with Hermite–Simpson collocation. A phase with
velocity constraints and no such term warns (AhbmWarning).

The functions ``A`` and ``b`` are called with CasADi symbols (and
``xp=casadi`` when they accept an ``xp`` keyword, see
:class:`~ahbm.dynamics.velocity_constraints.VelocityConstraint`); they may
return CasADi matrices, numpy arrays of expressions or nested lists of rows.
The phase's dynamics have no time argument, so ``A`` and ``b`` must not
depend on time (``rheonomic=False``), and the functions take one state
(``vectorized=False``).

Examples
--------
A skate on a planar joint steered from one pose to another (see
``tests/optimize/test_velocity_constraints_ocp.py``)::

    from ahbm.models import knife_edge
    from ahbm.optimize import ControlRate, Effort, Phase, solve
    m = knife_edge()
    ph = Phase(m, nodes=31, duration=2.0,
               objectives=[Effort(), ControlRate(controls=["lambda:"], weight=1e-4)],
               constraints=list(m.constraints),
               initial={"q": [0, 0, 0], "qd": [0, 0, 0]},
               final={"q": [0.5, 0.5, np.pi / 2], "qd": [0, 0, 0]})
    r = solve(ph, verbose=False)
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm.dynamics.velocity_constraints import VelocityConstraint
from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics.tree import Model
from ahbm.optimize.objectives import ControlRate
from ahbm.optimize.symbolic import require_casadi

__all__ = ["symbolic_velocity_rows"]


def _check(constraints, model: Model, phase: str) -> list:
    """The phase's velocity constraints as ``(constraint, m)``, checked for optimize."""
    out = []
    for c in constraints:
        if not isinstance(c, VelocityConstraint):
            continue
        if c.rheonomic:
            raise DataError(
                f"phase '{phase}': velocity constraint '{c.name}' is rheonomic; ahbm.optimize "
                "imposes velocity constraints whose A and b do not depend on time"
            )
        if c.vectorized:
            raise DataError(
                f"phase '{phase}': velocity constraint '{c.name}' has vectorized functions; "
                "ahbm.optimize calls A and b on one symbolic state: give vectorized=False"
            )
        out.append((c, c.size(model)))
    names = [c.name for c, _ in out]
    if len(set(names)) != len(names):
        raise DataError(f"phase '{phase}': velocity constraint names must be unique, got {names}")
    return out


def _warn_unregularized(phase) -> None:
    """AhbmWarning if the phase has multipliers but no ControlRate term covering them."""
    if not phase.velocity_constraints:
        return
    for o in phase.objectives:
        prefixes = () if not isinstance(o, ControlRate) else o.controls or ("",)
        if any("lambda:".startswith(c) or c.startswith("lambda:") for c in prefixes):
            return
    warnings.warn(
        f"phase '{phase.name}': the multipliers of its velocity constraints are free controls "
        "with no cost; add ControlRate(controls=['lambda:'], weight=1e-4) so that they cannot "
        "ring from node to node (see ahbm.optimize.velocity_constraints)",
        AhbmWarning,
        stacklevel=3,
    )


def _casadi_matrix(value, what, shape):
    """A CasADi matrix of `shape` from a CasADi value, an array of expressions or nested rows."""
    ca = require_casadi()
    if isinstance(value, (ca.SX, ca.MX, ca.DM)):
        M = value
    else:
        arr = np.array(value, dtype=object)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise DataError(f"{what} must return a matrix, got an array of shape {arr.shape}")
        M = ca.vertcat(*[ca.horzcat(*[_element(e, what) for e in row]) for row in arr])
    if M.shape != shape:
        if shape[1] == 1 and M.shape == (1, shape[0]):
            return M.T
        raise DataError(f"{what} returned shape {M.shape}, expected {shape}")
    return M


def _element(e, what):
    ca = require_casadi()
    if isinstance(e, (ca.SX, ca.MX, ca.DM)):
        return e
    try:
        return float(e)
    except (TypeError, ValueError) as err:
        raise DataError(f"{what} returned an entry that is neither a number nor an "
                        f"expression: {e!r}") from err  # fmt: skip


def symbolic_velocity_rows(constraint: VelocityConstraint, q, nv: int, t=0.0):
    """``A`` (m, nv) and ``b`` (m, 1) of a velocity constraint as CasADi expressions.

    Parameters
    ----------
    constraint : VelocityConstraint
    q : casadi.SX or casadi.MX, shape (nq, 1)
    nv : int
        Number of generalized velocities (columns of ``A``).
    t : float or casadi expression, optional

    Returns
    -------
    A, b : casadi matrices

    Examples
    --------
    >>> import casadi
    >>> from ahbm.models import knife_edge
    >>> c = knife_edge().constraints[0]
    >>> A, b = symbolic_velocity_rows(c, casadi.SX.sym("q", 3), 3)
    >>> A.shape, b.shape
    ((1, 3), (1, 1))
    """
    ca = require_casadi()
    m = constraint.m
    label = f"velocity constraint '{constraint.name}': `{{}}`"
    A, b = constraint.call(t, q, xp=ca)
    A = _casadi_matrix(A, label.format("A"), (m, nv))
    b = ca.DM.zeros(m, 1) if b is None else _casadi_matrix(b, label.format("b"), (m, 1))
    return A, b


def _multiplier_names(rows) -> list[str]:
    return [f"lambda:{c.name}[{k}]" for c, m in rows for k in range(m)]


def _constraint_force(phase, q, u):
    """``Σ Aᵀλ`` (nv, 1) of the phase's velocity constraints, λ from the controls `u`."""
    ca = require_casadi()
    k = phase.nv + sum(len(c.axes) for c in phase.contacts)
    total = ca.DM.zeros(phase.nv, 1)
    for c, m in phase.velocity_constraints:
        A, _ = symbolic_velocity_rows(c, q, phase.nv)
        total = total + ca.mtimes(A.T, u[k : k + m])
        k += m
    return total


def _residual_items(phase, q, qd, t):
    """Path-constraint items ``(A q̇ − b, 0, 0, names)`` of the phase's velocity constraints."""
    ca = require_casadi()
    items = []
    for c, m in phase.velocity_constraints:
        A, b = symbolic_velocity_rows(c, q, phase.nv, t)
        items.append((ca.mtimes(A, qd) - b, 0.0, 0.0, [f"{c.name}[{k}]" for k in range(m)]))
    return items
