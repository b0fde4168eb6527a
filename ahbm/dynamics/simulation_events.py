"""Events located during :func:`ahbm.dynamics.simulate`: the event class and its helpers.

A :class:`SimulationEvent` is a zero-crossing function of the state with what
to do when it occurs (stop, switch the active constraint set, apply an
impact, reset the state). :func:`point_height_event`,
:func:`coordinate_event` and :func:`contact_release_event` build the common
ones. (The labelled instants of a recording are :class:`ahbm.types.Event`.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_int,
    as_nonnegative_float,
    check_model,
)
from ahbm.dynamics.force_element import _coordinate
from ahbm.errors import DataError
from ahbm.kinematics.tree import Model

__all__ = [
    "SimulationEvent",
    "point_height_event",
    "coordinate_event",
    "contact_release_event",
]

#: ``constraints=_KEEP``: the event leaves the active constraint set unchanged.
_KEEP = "keep"


@dataclass
class SimulationEvent:
    """An event located during :func:`~ahbm.dynamics.simulate`, with what to do when it occurs.

    (The labelled instants of a recording are :class:`ahbm.types.Event`.)

    Parameters
    ----------
    function : callable
        ``function(t, q, qd) -> float``; the event occurs where it crosses zero.
    direction : float, optional
        ``> 0``: only rising crossings; ``< 0``: only falling; ``0``: both.
    terminal : bool, optional
        Stop the simulation at the event (after the actions below).
    constraints : ConstraintSet, list, None or "keep", optional
        Constraint set active after the event (``None``: no constraints;
        ``"keep"``: unchanged, the default).
    restitution : float, optional
        If given, apply an impact with this coefficient of restitution for
        the (new) active constraints (:func:`~ahbm.dynamics.constrained.compute_impulse`).
    action : callable, optional
        ``action(t, q, qd) -> (q, qd)`` applied first (e.g. to reset a state).
    name : str, optional
    max_count : int, optional
        Stop treating the event after this many occurrences (None: unlimited).
    uses_lambda : bool, optional
        If True, ``function`` is called as ``function(t, q, qd, lam)`` with the
        constraint forces ``λ`` of the active set (empty without constraints),
        e.g. to detect a contact that starts to pull (lift-off).
    rearm_tolerance : float, optional
        After the event has occurred it is disarmed until ``|function|``
        exceeds this value again (hysteresis: a contact that stays on its
        plane, where the function hovers around zero, does not fire again).
    uses_states : bool, optional
        If True, ``function`` gets the states of the stateful force elements
        as a last argument, ``function(t, q, qd, states)`` (after ``lam``
        with `uses_lambda`), and ``action`` is called as
        ``action(t, q, qd, states) -> (q, qd, states)``. ``states`` maps each
        element's name to a copy of its states (as in
        ``SimulationResult.force_states``; empty without such elements); the
        dict an action returns may name only the elements whose states it
        sets, e.g. a muscle's activation reset at an event.

    Examples
    --------
    >>> ev = SimulationEvent(lambda t, q, qd: q[0] - 1.0, direction=1, terminal=True, name="reach")
    >>> ev.terminal
    True
    """

    function: object
    direction: float = 0.0
    terminal: bool = False
    constraints: object = _KEEP
    restitution: float | None = None
    action: object = None
    name: str = "event"
    max_count: int | None = None
    uses_lambda: bool = False
    rearm_tolerance: float = 1e-8
    uses_states: bool = False

    def __post_init__(self):
        if not callable(self.function):
            raise DataError(f"event '{self.name}': `function` must be callable f(t, q, qd)")
        if self.action is not None and not callable(self.action):
            raise DataError(f"event '{self.name}': `action` must be callable (t, q, qd) -> (q, qd)")
        for flag in ("uses_lambda", "uses_states"):
            if not isinstance(getattr(self, flag), (bool, np.bool_)):
                raise DataError(
                    f"event '{self.name}': `{flag}` must be True or False, got "
                    f"{getattr(self, flag)!r:.60}"
                )
        if self.max_count is not None:
            as_int(self.max_count, "max_count", minimum=1)
        as_nonnegative_float(self.rearm_tolerance, "rearm_tolerance")
        if self.restitution is not None and not (
            0.0 <= as_finite_float(self.restitution, "restitution") <= 1.0
        ):
            raise DataError(
                f"event '{self.name}': `restitution` must be in [0, 1], got {self.restitution}"
            )


def point_height_event(
    model: Model, body, point, *, height=0.0, normal=(0.0, 0.0, 1.0), direction=-1.0, **kwargs
) -> SimulationEvent:
    """Event at which a body point crosses a plane (contact made when falling).

    Parameters
    ----------
    model : Model
    body : str or int
    point : array_like, shape (3,)
        Point in the body frame, m.
    height : float, optional
        Plane offset along the normal, m.
    normal : array_like, shape (3,), optional
    direction : float, optional
        -1 (default): the point moves below the plane; +1: above.
    **kwargs
        Passed to :class:`SimulationEvent` (``constraints``, ``restitution``, ``terminal``, ...).

    Returns
    -------
    SimulationEvent
        ``function = n·p − height``.

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> ev = point_height_event(m, "pendulum2", [0, 0, -1], height=-1.5)
    >>> round(ev.function(0.0, np.zeros(4), np.zeros(4)), 6)
    -0.5
    """
    from ahbm.kinematics.forward import point_position

    check_model(model)
    b = model.body_index(body)
    r = as_float_array(point, "point")
    if r.shape != (3,):
        raise DataError(f"Expected `point` to have shape (3,), got {r.shape}")
    n = as_float_array(normal, "normal")
    if n.shape != (3,) or not np.linalg.norm(n) > 0:
        raise DataError(f"Expected `normal` to be a non-zero vector of shape (3,), got {normal!r}")
    n = n / np.linalg.norm(n)
    h = as_finite_float(height, "height", unit="m")

    def function(t, q, qd):
        return float(n @ point_position(model, q, b, r) - h)

    kwargs.setdefault("name", f"height_{model.bodies[b].name}")
    return SimulationEvent(function, direction=direction, **kwargs)


def coordinate_event(
    model: Model, coordinate, value, *, direction=0.0, **kwargs
) -> SimulationEvent:
    """Event at which a joint coordinate reaches a value (e.g. a joint limit).

    Examples
    --------
    >>> from ahbm.models import double_pendulum_3d
    >>> m = double_pendulum_3d()
    >>> ev = coordinate_event(m, "pin", 0.5, direction=1)
    >>> ev.function(0.0, np.zeros(4), np.zeros(4))
    -0.5
    """
    qi, _ = _coordinate(model, coordinate, "coordinate_event")
    v = as_finite_float(value, "value")
    kwargs.setdefault("name", f"{model.coordinate_names[qi]}={v:g}")
    return SimulationEvent(lambda t, q, qd: float(q[qi] - v), direction=direction, **kwargs)


def contact_release_event(row: int = 0, *, constraints=None, **kwargs) -> SimulationEvent:
    """Event at which a constraint force ``λ[row]`` drops below zero (contact breaks).

    Parameters
    ----------
    row : int, optional
        Row of the active constraint set whose force is watched (e.g. the
        normal row of a plane contact, where ``λ > 0`` pushes).
    constraints : ConstraintSet, list or None, optional
        Constraint set after the release (None: free motion).
    **kwargs
        Passed to :class:`SimulationEvent` (``name``, ``terminal``, ...).

    Returns
    -------
    SimulationEvent
        Falling crossing of ``λ[row]`` (+1 when the active set has fewer rows).

    Examples
    --------
    >>> ev = contact_release_event(0)
    >>> ev.function(0.0, None, None, np.array([2.5])), ev.direction
    (2.5, -1.0)
    """
    k = as_int(row, "row", minimum=0)

    def function(t, q, qd, lam):
        return float(lam[k]) if lam.size > k else 1.0

    kwargs.setdefault("name", f"release_{k}")
    return SimulationEvent(
        function, direction=-1.0, constraints=constraints, uses_lambda=True, **kwargs
    )
