"""Compliant (smooth) contact in optimal control: contact spheres in a phase's dynamics.

The contact spheres of :mod:`ahbm.dynamics.smooth_contact`
(:class:`~ahbm.dynamics.smooth_contact.SmoothSphereContact`, e.g. from
:func:`ahbm.opensim.osim_smooth_contacts` or
:func:`ahbm.opensim.opensim_foot_spheres`) enter the equations of motion as
generalized forces ``τ_c(q, q̇) = Σ (J_s(P) − J_h(P))ᵀ F`` of the state: no
contact controls, no complementarity, no phase sequence to prescribe (the
formulation of Falisse et al. 2019). The CasADi expressions are built by the
same law and geometry functions that the force elements evaluate on numpy
(:func:`~ahbm.dynamics.smooth_contact.sphere_halfspace_force` with
``xp=casadi``), on the symbolic kinematics of
:func:`~ahbm.optimize.symbolic.symbolic_dynamics`.

:func:`symbolic_smooth_contacts` compiles them into one CasADi function;
:class:`SmoothContactPhase` (torque-driven) and
:class:`MuscleDrivenSmoothContactPhase` add them to a phase's dynamics (both
``dynamics="explicit"`` and ``"implicit"``); their ``ground_reaction(x)``
is the total force the ground exerts, which :class:`~ahbm.optimize.TrackGRF`
tracks.
"""

from __future__ import annotations

import functools

import numpy as np

from ahbm.dynamics.smooth_contact import SmoothSphereContact, sphere_halfspace_force
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.optimize.muscle_driven import MuscleDrivenPhase
from ahbm.optimize.objectives import TrackGRF
from ahbm.optimize.phase import Phase
from ahbm.optimize.problem_helpers import _interp, _series
from ahbm.optimize.symbolic import require_casadi, symbolic_dynamics

__all__ = [
    "symbolic_smooth_contacts",
    "SmoothContactPhase",
    "MuscleDrivenSmoothContactPhase",
]


def _check_contacts(model: Model, contacts) -> tuple:
    if isinstance(contacts, SmoothSphereContact):
        contacts = [contacts]
    contacts = tuple(contacts)
    if not contacts:
        raise DataError("`smooth_contacts` must hold at least one SmoothSphereContact")
    for i, c in enumerate(contacts):
        if not isinstance(c, SmoothSphereContact):
            raise DataError(
                f"smooth_contacts[{i}] is {type(c).__name__}, not a SmoothSphereContact "
                "(ahbm.dynamics.SmoothSphereContact)"
            )
        c.validate(model)
    return contacts


def symbolic_smooth_contacts(model: Model, contacts, *, symbol: str = "SX"):
    """CasADi function of the contact spheres' forces: ``(q, qd) -> (tau, F, P, Fn, depth)``.

    Parameters
    ----------
    model : Model
    contacts : sequence of SmoothSphereContact
    symbol : {"SX", "MX"}, optional

    Returns
    -------
    casadi.Function
        Inputs ``q`` (nq), ``qd`` (nv); outputs ``tau`` (nv): the generalized
        force of all spheres, N or N m; ``F`` (3, k): force on each sphere's
        body, world, N; ``P`` (3, k): its point of application, m; ``Fn``
        (k): normal forces, N; ``depth`` (k): penetrations, m.

    Notes
    -----
    Built on the symbolic kinematics of :func:`symbolic_dynamics` (the
    reference recursion); the relative velocity of the body points at the
    contact point ``P`` is ``v(P) = (J_s(P) − J_h(P)) q̇``, linear in ``q̇``,
    so ``τ = (∂v/∂q̇)ᵀ F`` (one reverse-mode product, ``casadi.jtimes``).
    The tests compare the function with the numpy force elements to 1e-12
    and its derivatives with finite differences.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.dynamics import SmoothSphereContact
    >>> m = Model()
    >>> _ = m.add_body("ball", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0)
    >>> f = symbolic_smooth_contacts(m, [SmoothSphereContact("ball", [0, 0, 0], 0.05)])
    >>> round(float(f(0.045, 0.0)[0]), 2)
    45.69
    """
    ca = require_casadi()
    contacts = _check_contacts(model, contacts)
    sd = symbolic_dynamics(model, symbol=symbol)
    kin = sd._kin
    q, qd = sd._q, sd._qd

    def body_velocity(b, point):
        if b < 0:
            return ca.DM.zeros(3)
        R, p, v = kin.rotations[b], kin.positions[b], kin.velocities[b]
        w = ca.mtimes(R, v[0:3])
        return ca.mtimes(R, v[3:6]) + ca.cross(w, point - p)

    taus, Fs, Ps, Fns, depths = [], [], [], [], []
    for c in contacts:
        b = model.body_index(c.body)
        h = -1 if c.plane_body in ("ground", -1) else model.body_index(c.plane_body)
        if h < 0:
            n, p0 = ca.DM(c.plane_normal), ca.DM(c.plane_point)
        else:
            Rh = kin.rotations[h]
            n = ca.mtimes(Rh, ca.DM(c.plane_normal))
            p0 = kin.positions[h] + ca.mtimes(Rh, ca.DM(c.plane_point))
        center = kin.positions[b] + ca.mtimes(kin.rotations[b], ca.DM(c.center))

        def velocity(point, b=b, h=h):
            return body_velocity(b, point) - body_velocity(h, point)

        F, P, Fn, depth = sphere_halfspace_force(
            center, n, p0, c.radius, velocity, c.parameters, xp=ca, law=c.law
        )
        taus.append(ca.jtimes(velocity(P), qd, F, True))
        Fs.append(F)
        Ps.append(P)
        Fns.append(Fn)
        depths.append(depth)
    tau = sum(taus[1:], taus[0])
    return ca.Function(
        "smooth_contacts", [q, qd],
        [tau, ca.horzcat(*Fs), ca.horzcat(*Ps), ca.vertcat(*Fns), ca.vertcat(*depths)],
        ["q", "qd"], ["tau", "F", "P", "Fn", "depth"],
    )  # fmt: skip


class _SmoothContactMixin:
    """Adds the generalized forces of contact spheres to a phase's dynamics."""

    def __init__(self, model: Model, *, smooth_contacts=(), **kwargs):
        if not isinstance(model, Model):
            raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
        self.smooth_contacts = _check_contacts(model, smooth_contacts)
        super().__init__(model, **kwargs)

    @functools.cached_property
    def smooth_contact_function(self):
        """The CasADi function of :func:`symbolic_smooth_contacts` for this phase's spheres."""
        return symbolic_smooth_contacts(self.model, self.smooth_contacts)

    def smooth_contact_forces(self, x):
        """``(tau (nv,), F (3, k))``: the spheres' generalized force and forces at state `x`."""
        q, qd = self.split_state(x)
        out = self.smooth_contact_function(q, qd)
        return out[0], out[1]

    def ground_reaction(self, x, u=None):
        """Total force (3,) of the ground on the model: spheres (and contact points with `u`), N."""
        ca = require_casadi()
        F = ca.sum2(self.smooth_contact_forces(x)[1])
        if self.contacts and u is not None:
            F = F + sum(self.contact_forces(u).values())
        return F

    def generalized_forces(self, x, u):
        """The joint torques of the base phase plus the contact spheres' ``τ_c(q, q̇)``."""
        return super().generalized_forces(x, u) + self.smooth_contact_forces(x)[0]

    def inverse_dynamics(self, q, qd, qdd, u=None):
        """``M q̈ + h − Σ Jᵀ F − τ_c(q, q̇)``: the torques the actuators must supply."""
        tau_c = self.smooth_contact_function(q, qd)[0]
        return super().inverse_dynamics(q, qd, qdd, u) - tau_c

    def running_cost_terms(self, x, u, p, t) -> dict:
        """Those of the base phase; :class:`TrackGRF` tracks :meth:`ground_reaction`."""
        ca = require_casadi()
        out = super().running_cost_terms(x, u, p, t)
        for o in self.objectives:
            if isinstance(o, TrackGRF):
                tr, v = _series(o.time, o.values, "TrackGRF values")
                F = self.ground_reaction(x, u)
                out[o.name] = o.weight * ca.sumsqr(F - _interp(tr, v.reshape(-1, 3), t))
        return out

    def contact_outputs(self, X) -> dict:
        """Numbers at the nodes: ``{"F": (n, k, 3), "P": (n, k, 3), "Fn", "depth": (n, k)}``.

        Parameters
        ----------
        X : array_like, shape (nx, n)
            States at the nodes (e.g. ``np.vstack([result.q.T, result.qd.T])``).
        """
        X = np.asarray(X, float)
        if X.ndim != 2 or X.shape[0] < self.nq + self.nv:
            raise DataError(f"Expected `X` to have shape ({self.nx}, n), got {X.shape}")
        f = self.smooth_contact_function.map(X.shape[1])
        _, F, P, Fn, d = f(X[: self.nq], X[self.nq : self.nq + self.nv])
        k = len(self.smooth_contacts)
        n = X.shape[1]
        # map() puts the nodes side by side: F is (3, k n) with column j + k node
        return {
            "F": np.asarray(F).reshape(3, n, k).transpose(1, 2, 0),
            "P": np.asarray(P).reshape(3, n, k).transpose(1, 2, 0),
            "Fn": np.asarray(Fn).reshape(k, n).T,
            "depth": np.asarray(d).reshape(k, n).T,
        }


class SmoothContactPhase(_SmoothContactMixin, Phase):
    """A torque-driven :class:`~ahbm.optimize.Phase` with compliant contact spheres.

    Parameters
    ----------
    model : Model
    smooth_contacts : sequence of SmoothSphereContact
        The spheres (:mod:`ahbm.dynamics.smooth_contact`); their forces are
        functions of the state, added to the dynamics of the phase.
    **kwargs
        Those of :class:`~ahbm.optimize.Phase` (``nodes``, ``duration``,
        ``dynamics``, ``objectives``, ``tau_bounds``, ...).

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> from ahbm.dynamics import SmoothSphereContact
    >>> m = Model()
    >>> _ = m.add_body("ball", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0)
    >>> ph = SmoothContactPhase(m, smooth_contacts=[SmoothSphereContact("ball", [0, 0, 0], 0.05)],
    ...                         nodes=11, duration=0.2, actuated=[])
    >>> ph.nx, ph.nu
    (2, 1)
    """


class MuscleDrivenSmoothContactPhase(_SmoothContactMixin, MuscleDrivenPhase):
    """A :class:`~ahbm.optimize.MuscleDrivenPhase` with compliant contact spheres.

    Parameters
    ----------
    model : Model
    smooth_contacts : sequence of SmoothSphereContact
    **kwargs
        Those of :class:`~ahbm.optimize.MuscleDrivenPhase`.
    """
