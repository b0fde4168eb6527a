"""The :class:`ForceElement` protocol and the argument checks its elements share.

The protocol and the elements are described in :mod:`ahbm.dynamics.forces`,
which also sums elements (:func:`~ahbm.dynamics.forces.total_generalized_force`)
and from which every element is importable.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._engine.state import Kinematics
from ahbm._internal.validation import (
    as_float_array,
    callback_result,
    check_model,
)
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.joints import FREE, SPHERICAL
from ahbm.kinematics.tree import Model

__all__ = ["ForceElement", "StatefulForceElement", "check_forces"]

GROUND = "ground"


def _body(model: Model, body, what: str) -> int:
    """Body index, -1 for the ground; raises ModelError naming `what`."""
    check_model(model)
    if isinstance(body, str) and body == GROUND:
        return -1
    if isinstance(body, (int, np.integer)) and not isinstance(body, bool) and int(body) == -1:
        return -1
    try:
        return model.body_index(body)
    except ModelError as err:
        raise ModelError(f"{what}: {err}") from err


def _vec3(value, what: str) -> np.ndarray:
    arr = as_float_array(value, what)
    if arr.shape != (3,):
        raise DataError(f"Expected `{what}` to have shape (3,), got {arr.shape}")
    return arr


def _coordinate(model: Model, coordinate, what: str) -> tuple[int, int]:
    """(q index, v index) of a scalar coordinate given by name or q index."""
    check_model(model)
    names = model.coordinate_names
    if isinstance(coordinate, str):
        if coordinate not in names:
            raise ModelError(
                f"{what}: unknown coordinate {coordinate!r} in model '{model.name}'; "
                f"known coordinates: {names}"
            )
        qi = names.index(coordinate)
    elif isinstance(coordinate, (int, np.integer)) and not isinstance(coordinate, bool):
        qi = int(coordinate)
        if not 0 <= qi < model.nq:
            raise ModelError(f"{what}: coordinate index {qi} out of range [0, {model.nq})")
    else:
        raise ModelError(f"{what}: coordinate must be a name or an index, got {coordinate!r}")
    body = int(np.searchsorted(model.q_index, qi, side="right") - 1)
    while model.joint_nq[body] == 0:  # skip fixed joints sharing the offset
        body += 1
    local = qi - model.q_index[body]
    code = model.joint_codes[body]
    if code == SPHERICAL or (code == FREE and local >= 3):
        raise ModelError(
            f"{what}: coordinate {names[qi]!r} is a quaternion component; use a scalar "
            "coordinate (angle or translation)"
        )
    return qi, int(model.v_index[body] + local)


def _characteristic(spec, what: str):
    """Vectorized function x -> f(x) from a number, a callable or a table."""
    if spec is None:
        return None
    if callable(spec):
        return spec
    arr = as_float_array(spec, what)
    if arr.ndim == 0:
        k = float(arr)
        return lambda x: k * x
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 2:
        raise DataError(
            f"`{what}` must be a number, a callable or a table of shape (n, 2) with n >= 2, "
            f"got shape {arr.shape}"
        )
    x, y = arr[:, 0].copy(), arr[:, 1].copy()
    if np.any(np.diff(x) <= 0):
        raise DataError(f"`{what}`: table abscissae (first column) must increase strictly")
    s0 = (y[1] - y[0]) / (x[1] - x[0])
    s1 = (y[-1] - y[-2]) / (x[-1] - x[-2])

    def table(v):
        v = np.asarray(v, dtype=float)
        out = np.interp(v, x, y)
        out = np.where(v < x[0], y[0] + s0 * (v - x[0]), out)
        return np.where(v > x[-1], y[-1] + s1 * (v - x[-1]), out)

    return table


def _time_value(value, t, batch, what: str) -> np.ndarray:
    """Evaluate a constant (3,) or a callable f(t) -> (3,) for scalar or batched t."""
    if not callable(value):
        return np.broadcast_to(value, batch + (3,))
    t = np.asarray(t, dtype=float)
    if t.ndim == 0:
        out = callback_result(value(float(t)), what)
        if out.shape != (3,):
            raise DataError(f"`{what}` function must return shape (3,), got {out.shape}")
        return np.broadcast_to(out, batch + (3,))
    tb = np.broadcast_to(t, batch)
    flat = np.array([callback_result(value(float(ti)), what, (3,)) for ti in tb.ravel()])
    return flat.reshape(batch + (3,))


def _as_bn(x, N):
    """batch + (3,) -> (3, N)."""
    return np.ascontiguousarray(np.broadcast_to(x, x.shape).reshape(N, 3).T)


def _gen(J, F):
    """Jᵀ F for J (3, nv, N), F (3, N) -> (nv, N)."""
    return np.einsum("inN,iN->nN", J, F)


def check_forces(forces, name: str = "forces") -> list:
    """`forces` as a list of ForceElement, or DataError naming `name` and the element."""
    if isinstance(forces, ForceElement):
        raise DataError(f"Expected `{name}` to be a list of force elements; wrap it: [{forces!r}]")
    if isinstance(forces, (str, bytes, dict)) or not hasattr(forces, "__iter__"):
        raise DataError(
            f"Expected `{name}` to be a list of force elements (ahbm.dynamics.BodyForce, "
            f"RotationalSpringDamper, ...), got {type(forces).__name__}"
        )
    out = list(forces)
    for i, f in enumerate(out):
        if not isinstance(f, ForceElement):
            raise DataError(
                f"`{name}[{i}]` is {type(f).__name__}, not a force element (a subclass of "
                "ahbm.dynamics.ForceElement)"
            )
    return out


class ForceElement:
    """Base class (protocol) of all force elements.

    Subclasses implement :meth:`generalized_force` (or the internal ``_gf``
    on a shared kinematic state); :meth:`power` and :meth:`validate` have
    generic defaults. An override of :meth:`generalized_force` keeps the
    signature ``(model, q, qd, *, t=0.0, kin=None)``.
    """

    name: str = "force"

    def generalized_force(self, model: Model, q, qd, *, t=0.0, kin=None) -> np.ndarray:
        """Generalized force (..., nv) added to the right-hand side, N or N m.

        Parameters
        ----------
        model : Model
        q : array_like, shape (..., nq), or None with ``kin``
        qd : array_like, shape (..., nv), or None with ``kin``
        t : float or array_like, optional
            Time, s (scalar or broadcastable to the batch shape).
        kin : Kinematics, optional
            State with velocities from
            :func:`~ahbm.kinematics.forward.forward_kinematics`, shared by
            several elements (see :func:`~ahbm.dynamics.forces.total_generalized_force`).
        """
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        return _st.out(kin, self._gf(kin, t))

    def _gf(self, kin: Kinematics, t) -> np.ndarray:
        """Generalized force (nv, N) on a shared kinematic state (internal)."""
        raise NotImplementedError

    def power(self, model: Model, q, qd, *, t=0.0, kin=None) -> np.ndarray:
        """Power delivered to the system, W, shape (...): ``τ_element · q̇``."""
        kin = _st.resolve(model, kin, q, qd, needs_qd=True)
        tau = self.generalized_force(model, kin.q, kin.qd, t=t, kin=kin)
        return np.sum(tau * kin.qd, axis=-1)

    def validate(self, model: Model) -> None:
        """Raise ModelError if the element does not fit `model`."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class StatefulForceElement(ForceElement):
    """Base class (protocol) of force elements with internal states (e.g. muscles).

    Some elements carry states of their own that are integrated with the
    multibody state: a muscle's activation and fiber length, a controller's
    integral, a fatigue level. :func:`~ahbm.dynamics.simulate` appends them to
    its state vector, ``y = [q, v, s_1, s_2, ...]`` (one block per element, in
    the order of ``forces``), and returns them in
    :attr:`SimulationResult.force_states <ahbm.dynamics.SimulationResult>`.

    Subclasses implement:

    ``state_names`` (property)
        Tuple of ``n_states`` names, e.g. ``("m1.activation", ...)``.
    ``initial_state(model, q, qd, *, t=0.0) -> (n_states,)``
        The states at the start of a simulation (called with the initial
        state after its projection onto the constraints).
    ``state_derivative(model, q, qd, s, *, t=0.0) -> (..., n_states)``
        ``ṡ``.
    ``generalized_force(model, q, qd, *, t=0.0, kin=None, s) -> (..., nv)``
        The generalized force, which depends on the states ``s`` (keyword,
        required).

    and may override ``rates(model, q, qd, s, *, t=0.0) -> (tau, s_dot)``,
    which ``simulate`` calls once per right-hand-side evaluation, to compute
    both from one evaluation of shared quantities (the default calls the two
    methods above). ``q``, ``qd`` and ``s`` may carry leading batch axes.
    The states pass through position/velocity projections and event
    actions unchanged.

    Examples
    --------
    A first-order lag ``ṡ = (k q - s)/T`` that acts as the torque ``-s`` on
    the first coordinate:

    >>> class Lag(StatefulForceElement):
    ...     name = "lag"
    ...     state_names = ("lag.torque",)
    ...     def initial_state(self, model, q, qd, *, t=0.0):
    ...         return np.zeros(1)
    ...     def state_derivative(self, model, q, qd, s, *, t=0.0):
    ...         return (50.0 * np.asarray(q)[..., :1] - s) / 0.1
    ...     def generalized_force(self, model, q, qd, *, t=0.0, kin=None, s=None):
    ...         s = self.check_state(s)
    ...         tau = np.zeros(np.shape(s)[:-1] + (model.nv,))
    ...         tau[..., 0] = -s[..., 0]
    ...         return tau
    >>> Lag().n_states
    1
    """

    name: str = "stateful force"

    @property
    def state_names(self) -> tuple:
        """Names of the states, a tuple of ``n_states`` strings."""
        raise NotImplementedError

    @property
    def n_states(self) -> int:
        """Number of internal states."""
        return len(self.state_names)

    def initial_state(self, model: Model, q, qd, *, t=0.0) -> np.ndarray:
        """States (n_states,) at the state ``(q (nq,), qd (nv,))`` and time `t` (s)."""
        raise NotImplementedError

    def state_derivative(self, model: Model, q, qd, s, *, t=0.0) -> np.ndarray:
        """Time derivative of the states, shape (..., n_states), per second."""
        raise NotImplementedError

    def generalized_force(self, model: Model, q, qd, *, t=0.0, kin=None, s=None) -> np.ndarray:
        """Generalized force (..., nv) for the states `s` (..., n_states), N or N m."""
        raise NotImplementedError

    def rates(self, model: Model, q, qd, s, *, t=0.0):
        """``(generalized force (..., nv), state derivative (..., n_states))`` in one call."""
        return (
            self.generalized_force(model, q, qd, t=t, s=s),
            self.state_derivative(model, q, qd, s, t=t),
        )

    def power(self, model: Model, q, qd, *, t=0.0, kin=None, s=None) -> np.ndarray:
        """Power delivered to the system, W, shape (...): ``τ_element · q̇``."""
        tau = self.generalized_force(model, q, qd, t=t, s=s)
        return np.sum(tau * as_float_array(qd, "qd"), axis=-1)

    def check_state(self, s) -> np.ndarray:
        """`s` as a float array (..., n_states), or DataError naming the element."""
        if s is None:
            raise DataError(
                f"force element {self.name!r} has internal states: pass them as `s=` "
                f"(..., {self.n_states}), or let ahbm.dynamics.simulate integrate them "
                "(forces=[...])"
            )
        arr = as_float_array(s, f"s (states of force element {self.name!r})")
        if arr.shape[-1:] != (self.n_states,):
            raise DataError(
                f"Expected the states `s` of force element {self.name!r} to have shape "
                f"(..., {self.n_states}), got {arr.shape}"
            )
        return arr
