"""Force elements: springs, dampers, joint stops, bushings, applied loads, contact.

Every element follows one small protocol (:class:`ForceElement`):

``generalized_force(model, q, qd, *, t=0.0, kin=None) -> (..., nv)``
    The generalized force the element adds to the right-hand side of the
    equations of motion ``H q̈ + C = τ + Σ τ_element + Gᵀλ``.
``power(model, q, qd, *, t=0.0, kin=None) -> (...)``
    The mechanical power the element delivers to the system, W
    (``τ_element · q̇``); integrate it over time to check energy balance.
``validate(model)``
    Raise :class:`~ahbm.errors.ModelError` if the element names a body or
    coordinate the model does not have (called once by ``simulate``).

All methods accept leading batch axes on ``q`` and ``qd`` (a whole
trajectory in one call); ``t`` (keyword) is a scalar or an array
broadcastable to the batch shape. ``kin=`` passes a kinematic state from
:func:`~ahbm.kinematics.forward.forward_kinematics` (with velocities) that
several elements share; ``q`` and ``qd`` may then be None (see
:mod:`ahbm.kinematics.forward` for the rule). Bodies are given by name or
index, or ``"ground"`` for the inertial frame; points are in the body frame
(world frame for the ground), m.

Elements
--------
:class:`RotationalSpringDamper`, :class:`JointStop`, :class:`PointSpringDamper`,
:class:`Bushing`, :class:`BodyForce`, :class:`BodyTorque`,
:class:`PenaltyGroundContact`, :class:`GravityOverride`, and the smooth
contact spheres of :mod:`ahbm.dynamics.smooth_contact`
(:class:`~ahbm.dynamics.smooth_contact.SmoothSphereContact`, OpenSim's
``SmoothSphereHalfSpaceForce`` law, also usable in :mod:`ahbm.optimize`).

Elements with internal states (muscles, :mod:`ahbm.muscles`) derive from
:class:`StatefulForceElement`; :func:`~ahbm.dynamics.simulate` integrates
their states with ``q`` and ``q̇``.

A *characteristic* (stiffness or damping law) is a number ``k`` (linear,
``f(x) = k x``), a callable ``f(x)`` vectorized over numpy arrays, or a table
``[[x0, f0], [x1, f1], ...]`` (increasing ``x``) interpolated piecewise
linearly and extrapolated with the end slopes.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm.dynamics.force_element import ForceElement, check_forces
from ahbm.kinematics.tree import Model

__all__ = [
    "total_generalized_force",
    "total_power",
]


def _kin_based(f) -> bool:
    """True if the element computes its force from a shared kinematic state (_gf)."""
    return (
        isinstance(f, ForceElement)
        and type(f).generalized_force is ForceElement.generalized_force
        and type(f)._gf is not ForceElement._gf
    )


def total_generalized_force(model: Model, forces, q, qd, *, t=0.0, kin=None) -> np.ndarray:
    """Sum of the generalized forces (..., nv) of several force elements.

    One kinematic state serves all elements (pass ``kin=`` to reuse one
    that was already computed; ``q`` and ``qd`` may then be None).

    Examples
    --------
    >>> from ahbm.dynamics import RotationalSpringDamper
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> s = RotationalSpringDamper("pin", stiffness=2.0)
    >>> total_generalized_force(m, [s], [0.5, 0, 0, 0], np.zeros(4))
    array([-1.,  0.,  0.,  0.])
    """
    forces = check_forces(forces)
    shared = [f for f in forces if _kin_based(f)]
    # the elements on the shared state need Jacobians: DOF columns in the same kernel pass
    kin = _st.resolve(model, kin, q, qd, needs_qd=True, columns=bool(shared))
    out = np.zeros(kin.batch_shape + (model.nv,))
    if shared:
        tau = shared[0]._gf(kin, t)
        for f in shared[1:]:
            tau = tau + f._gf(kin, t)
        out = out + _st.out(kin, tau)
    for f in forces:
        if not _kin_based(f):
            out = out + f.generalized_force(model, kin.q, kin.qd, t=t, kin=kin)
    return out


def total_power(model: Model, forces, q, qd, *, t=0.0, kin=None) -> np.ndarray:
    """Sum of the powers (...) of several force elements, W.

    Examples
    --------
    >>> from ahbm.dynamics import RotationalSpringDamper
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> d = RotationalSpringDamper("pin", damping=3.0)
    >>> float(total_power(m, [d], np.zeros(4), [2.0, 0, 0, 0]))
    -12.0
    """
    forces = check_forces(forces)
    kin = _st.resolve(model, kin, q, qd, needs_qd=True)
    out = np.zeros(kin.batch_shape)
    for f in forces:
        out = out + f.power(model, kin.q, kin.qd, t=t, kin=kin)
    return out
