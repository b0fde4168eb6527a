"""Nonholonomic example models: a thin disk rolling without slip and a knife edge (skate).

Both return a :class:`~ahbm.kinematics.tree.Model` whose ``constraints``
hold a :class:`~ahbm.dynamics.velocity_constraints.VelocityConstraint`
(with its analytic ``γ``), so that :func:`~ahbm.dynamics.simulate` and
:func:`~ahbm.dynamics.constrained_forward_dynamics` honour the no-slip
condition without further arguments. The constraint functions accept an
``xp`` keyword and so also work on CasADi symbols in :mod:`ahbm.optimize`.
Such models cannot be saved to a model file (the constraints are Python
functions).
"""

from __future__ import annotations

import functools

import numpy as np

from ahbm._internal.validation import as_float_array, as_nonnegative_float, as_positive_float
from ahbm.dynamics.velocity_constraints import VelocityConstraint
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model

__all__ = ["rolling_disk", "knife_edge"]


def _gravity(gravity):
    g = as_float_array(gravity, "gravity")
    if g.shape != (3,):
        raise DataError(f"Expected `gravity` to have shape (3,), got {g.shape}")
    return g


def _disk_matrix(t, q, xp=np, *, radius):
    """No-slip rows ``ẋ − R ψ̇ cos θ = 0``, ``ẏ − R ψ̇ sin θ = 0`` (q = x, y, θ, φ, ψ)."""
    th = q[2]
    return [[1.0, 0.0, 0.0, 0.0, -radius * xp.cos(th)],
            [0.0, 1.0, 0.0, 0.0, -radius * xp.sin(th)]]  # fmt: skip


def _disk_gamma(t, q, qd, *, radius):
    """``γ = −Ȧ q̇ = R θ̇ ψ̇ (−sin θ, cos θ)``."""
    th, w = q[2], qd[2] * qd[4]
    return np.array([-radius * np.sin(th) * w, radius * np.cos(th) * w])


def rolling_disk(*, radius: float = 0.3, mass: float = 1.0, gravity=(0.0, 0.0, -9.81)) -> Model:
    """A thin uniform disk rolling without slipping on the horizontal plane z = 0.

    Coordinates ``q = (x, y, heading, lean, spin)``: the contact point
    ``(x, y)`` on the plane (m), the heading ``θ`` of the disk's horizontal
    diameter about the vertical, the lean ``φ`` about that diameter (0:
    upright) and the spin ``ψ`` about the axle (rad). The chain is
    ground → ``contact`` (planar joint: x, y, θ) → ``lean`` (revolute about
    the heading direction, at the contact point) → ``disk`` (revolute about
    its axle, centre a radius above the contact point along the disk plane);
    only the disk has mass, so the mass matrix is regular for ``|φ| < π/2``.

    ``model.constraints`` holds the no-slip condition (the disk point at the
    contact has zero velocity): ``ẋ = R ψ̇ cos θ``, ``ẏ = R ψ̇ sin θ``. Its
    vertical component holds by construction (the contact point stays on the
    plane).

    Parameters
    ----------
    radius : float, optional
        m.
    mass : float, optional
        kg; the inertia is that of a thin disk, ``m R²/4`` about a diameter
        and ``m R²/2`` about the axle.
    gravity : array_like, shape (3,), optional
        m/s².

    Returns
    -------
    Model

    Examples
    --------
    >>> m = rolling_disk(radius=0.3)
    >>> m.coordinate_names, [c.name for c in m.constraints]
    (['x', 'y', 'heading', 'lean', 'spin'], ['no_slip'])
    """
    R = as_positive_float(radius, "radius", unit="m")
    mass = as_positive_float(mass, "mass", unit="kg")
    m = Model("rolling_disk", gravity=_gravity(gravity))
    m.add_body("contact", "ground", {"type": "planar", "coordinates": ["x", "y", "heading"]})
    m.add_body("lean", "contact", {"type": "revolute", "axis": [1.0, 0.0, 0.0], "name": "lean"})
    a = mass * R**2 / 4
    m.add_body("disk", "lean", {"type": "revolute", "axis": [0.0, 1.0, 0.0], "name": "spin"},
               position=[0.0, 0.0, R], mass=mass, inertia=np.diag([a, 2 * a, a]))  # fmt: skip
    m.constraints = [
        VelocityConstraint(
            functools.partial(_disk_matrix, radius=R),
            gamma=functools.partial(_disk_gamma, radius=R),
            size=2,
            name="no_slip",
        )
    ]
    return m


def _blade_matrix(t, q, xp=np):
    """No lateral velocity of the blade: ``−sin θ ẋ + cos θ ẏ = 0`` (q = x, y, θ)."""
    return [[-xp.sin(q[2]), xp.cos(q[2]), 0.0]]


def _blade_gamma(t, q, qd):
    """``γ = −Ȧ q̇ = θ̇ (cos θ ẋ + sin θ ẏ)``."""
    th = q[2]
    return np.array([qd[2] * (np.cos(th) * qd[0] + np.sin(th) * qd[1])])


def knife_edge(*, mass: float = 1.0, inertia: float = 0.05, offset: float = 0.0,
               gravity=(0.0, 0.0, -9.81)) -> Model:  # fmt: skip
    """A knife edge (skate, Chaplygin sleigh) on a plane: it cannot slide sideways.

    The body moves in the x–y plane of the model (a planar joint:
    coordinates ``x``, ``y`` of the blade's contact point, m, and the
    heading ``θ`` of the blade, rad); its centre of mass lies `offset`
    ahead of the contact point along the blade. ``model.constraints`` holds
    the no-slip condition ``−sin θ ẋ + cos θ ẏ = 0`` (the blade's contact
    point moves along the blade only). An inclined plane is a gravity with a
    component in the plane: ``9.81 (sin α, 0, −cos α)`` for a slope α going
    down along +x.

    Parameters
    ----------
    mass : float, optional
        kg.
    inertia : float, optional
        Moment of inertia about the vertical through the centre of mass, kg m².
    offset : float, optional
        Distance of the centre of mass ahead of the contact point, m (0: the
        skate; > 0: the Chaplygin sleigh).
    gravity : array_like, shape (3,), optional
        m/s², in the plane's frame.

    Returns
    -------
    Model

    Examples
    --------
    >>> m = knife_edge(offset=0.1)
    >>> m.coordinate_names, m.constraints[0].name
    (['x', 'y', 'heading'], 'no_slip')
    """
    mass = as_positive_float(mass, "mass", unit="kg")
    inertia = as_positive_float(inertia, "inertia", unit="kg m^2")
    offset = as_nonnegative_float(offset, "offset", unit="m")
    m = Model("knife_edge", gravity=_gravity(gravity))
    m.add_body("skate", "ground", {"type": "planar", "coordinates": ["x", "y", "heading"]},
               mass=mass, com=[offset, 0.0, 0.0],
               inertia=np.diag([inertia, inertia, inertia]))  # fmt: skip
    m.constraints = [VelocityConstraint(_blade_matrix, gamma=_blade_gamma, size=1, name="no_slip")]
    return m
