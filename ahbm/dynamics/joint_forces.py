"""Force elements acting on one joint coordinate: springs, dampers and joint stops.

:class:`RotationalSpringDamper` and :class:`JointStop`, importable from
:mod:`ahbm.dynamics.forces` (which describes the protocol and the
*characteristics*, numbers, callables or tables, they accept).
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import as_finite_float, as_nonnegative_float
from ahbm.dynamics.force_element import ForceElement, _characteristic, _coordinate
from ahbm.errors import DataError

__all__ = ["RotationalSpringDamper", "JointStop"]


class RotationalSpringDamper(ForceElement):
    """Spring-damper acting on one joint coordinate (rotational or translational).

    Parameters
    ----------
    coordinate : str or int
        Coordinate name (see ``Model.coordinate_names``) or index in ``q``;
        not a quaternion component.
    stiffness : float, callable or table, optional
        Spring characteristic ``k(δ)`` of the deflection ``δ = q − rest``
        (N m/rad for a number). The torque is ``−k(δ)``.
    damping : float, callable or table, optional
        Damper characteristic ``c(q̇)``; the torque is ``−c(q̇)``.
    rest : float, optional
        Rest value of the coordinate, rad or m.
    name : str, optional

    Notes
    -----
    ``τ = −k(q − q_rest) − c(q̇)`` on the coordinate's velocity index (AHBM
    §5.2.3: nonlinear rotational springs and dampers at the joints).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> s = RotationalSpringDamper("pin", stiffness=[[-1, -3], [0, 0], [1, 3]])
    >>> s.generalized_force(m, [0.5, 0, 0, 0], np.zeros(4))
    array([-1.5,  0. ,  0. ,  0. ])
    """

    def __init__(self, coordinate, stiffness=0.0, damping=0.0, rest=0.0, *, name=None):
        self.coordinate = coordinate
        self.stiffness = _characteristic(stiffness, "stiffness")
        self.damping = _characteristic(damping, "damping")
        self.rest = as_finite_float(rest, "rest")
        self.name = name or f"spring_damper_{coordinate}"

    def validate(self, model):
        _coordinate(model, self.coordinate, f"force element '{self.name}'")

    def _torque(self, x, xd):
        return -self.stiffness(x - self.rest) - self.damping(xd)

    def generalized_force(self, model, q, qd, *, t=0.0, kin=None):
        if kin is not None:
            kin = _st.resolve(model, kin, q, qd, needs_qd=True)
            q, qd = kin.q, kin.qd
        key = ("coordinate_index", self.coordinate)  # in the model's per-version cache
        if key not in model.cache:
            model.cache[key] = _coordinate(model, self.coordinate, f"force element '{self.name}'")
        qi, vi = model.cache[key]
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        shape = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
        out = np.zeros(shape + (model.nv,))
        out[..., vi] = self._torque(q[..., qi], qd[..., vi])
        return out


class JointStop(RotationalSpringDamper):
    """Soft joint stop: a steep restoring torque outside a range of motion.

    Parameters
    ----------
    coordinate : str or int
        Coordinate name or index (not a quaternion component).
    lower, upper : float
        Range of motion, rad (or m); ``lower < upper``. Use ``-np.inf`` /
        ``np.inf`` for a one-sided stop.
    stiffness : float
        ``k`` in ``N m / rad**exponent``.
    damping : float, optional
        ``c`` in N m s / rad² (scaled by the penetration, so the torque is
        continuous at the limit).
    exponent : float, optional
        Exponent ``e`` of the penetration (>= 1), default 2.
    name : str, optional

    Notes
    -----
    With the penetration ``δ = q − upper`` above the range (``δ = lower − q``
    below), ``τ = ∓(k δ^e + c δ q̇)`` for ``δ > 0`` and zero inside the
    range: a soft joint stop in the sense of AHBM §5.2.3, continuous at the
    limits and dissipative only while the stop is engaged.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> stop = JointStop("pin", -1.0, 1.0, stiffness=100.0)
    >>> stop.generalized_force(m, [[0.5, 0, 0, 0], [1.1, 0, 0, 0]], np.zeros(4))[:, 0]
    array([ 0., -1.])
    """

    def __init__(
        self, coordinate, lower, upper, stiffness, damping=0.0, *, exponent=2.0, name=None
    ):
        lower, upper = as_finite_float(lower, "lower"), as_finite_float(upper, "upper")
        if not lower < upper:
            raise DataError(f"JointStop: need `lower` < `upper`, got {lower} and {upper}")
        if as_finite_float(exponent, "exponent") < 1.0:
            raise DataError(f"JointStop: `exponent` must be >= 1, got {exponent}")
        stiffness = as_nonnegative_float(stiffness, "stiffness")
        damping = as_nonnegative_float(damping, "damping")
        self.coordinate = coordinate
        self.lower, self.upper = lower, upper
        self.k, self.c, self.exponent = float(stiffness), float(damping), float(exponent)
        self.name = name or f"joint_stop_{coordinate}"

    def _torque(self, x, xd):
        with np.errstate(invalid="ignore"):
            up = np.maximum(x - self.upper, 0.0)
            lo = np.maximum(self.lower - x, 0.0)
        up = np.nan_to_num(up, posinf=0.0)
        lo = np.nan_to_num(lo, posinf=0.0)
        return -(self.k * up**self.exponent + self.c * up * xd) + (
            self.k * lo**self.exponent - self.c * lo * xd
        )
