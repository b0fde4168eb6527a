"""Contact points and constraints of an optimal-control :class:`~ahbm.optimize.phase.Phase`.

:class:`ContactPoint` puts a body point in contact with the ground (its
forces become controls); :class:`NonPenetration`, :class:`ZMPInSupport`,
:class:`PathConstraint`, :class:`BoundaryConstraint` and :class:`Waypoint`
are the constraints a phase imposes on its trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass

from ahbm._internal.validation import check_callable
from ahbm.errors import DataError

__all__ = [
    "ContactPoint",
    "NonPenetration",
    "ZMPInSupport",
    "PathConstraint",
    "BoundaryConstraint",
    "Waypoint",
]


@dataclass(frozen=True)
class ContactPoint:
    """A body point standing on the ground during a phase, with a ground force on it.

    The phase gets one force control per contact axis (world frame, N) and a
    parameter per horizontal axis, the anchor where the point stands; the
    path constraints hold the point at ``(anchor, height)`` (no slip and no
    penetration, Chung eqs 7.20–7.28), the normal force is non-negative and,
    with `friction`, inside the friction cone ``|F_t| ≤ μ F_n``.

    Only the first contact point of a body in a phase is anchored
    horizontally; the body's further points are held on the ground (their
    horizontal no-slip follows from the body's rigidity, and repeating it
    would make the constraints linearly dependent). In 3-D this leaves a flat
    body free to turn about the vertical through its first point: add a
    :class:`PathConstraint` on its yaw where that matters.

    Parameters
    ----------
    body : str or int
    point : array_like, shape (3,)
        In the body frame, m.
    name : str, optional
        Used in constraint names and results (default ``"<body>_contact"``).
    axes : {"xyz", "xz", "yz", "z"}, optional
        World axes of the force (and of the position constraint); the last
        one is the ground normal. ``"xz"`` for sagittal models in the x–z plane.
    friction : float, optional
        Friction coefficient μ (None: no cone).
    height : float, optional
        Ground height, m.
    anchor : sequence of float or None, optional
        Fixed horizontal position of the point (one per tangential axis);
        None makes it a free parameter.

    Examples
    --------
    >>> ContactPoint("foot_r", (0.15, 0.0, -0.08), name="toe_r", axes="xz", friction=0.8).label
    'toe_r'
    """

    body: object
    point: tuple = (0.0, 0.0, 0.0)
    name: str | None = None
    axes: str = "xyz"
    friction: float | None = None
    height: float = 0.0
    anchor: tuple | None = None

    def __post_init__(self):
        if self.axes not in ("xyz", "xz", "yz", "z"):
            raise DataError(
                f"ContactPoint `axes` must be 'xyz', 'xz', 'yz' or 'z', got {self.axes!r}"
            )
        if self.friction is not None and not self.friction >= 0:
            raise DataError(f"ContactPoint `friction` must be >= 0, got {self.friction!r}")
        if self.anchor is not None and len(self.anchor) != len(self.axes) - 1:
            raise DataError(
                f"ContactPoint `anchor` needs {len(self.axes) - 1} values (the axes "
                f"{self.axes[:-1]!r}), got {self.anchor!r}"
            )

    @property
    def label(self) -> str:
        return self.name or f"{self.body}_contact"


@dataclass(frozen=True)
class NonPenetration:
    """A body point stays at least `height` above the ground (Chung eqs 7.24–7.28).

    Parameters
    ----------
    body, point : as in :class:`ContactPoint`
    height : float
        Minimum height, m (Chung uses 1e-3 for points not in contact).
    axis : {"x", "y", "z"}
        The vertical axis.

    Examples
    --------
    >>> NonPenetration("foot_l", (0.15, 0.0, -0.08), height=1e-3).height
    0.001
    """

    body: object
    point: tuple = (0.0, 0.0, 0.0)
    height: float = 0.0
    axis: str = "z"
    name: str | None = None


@dataclass(frozen=True)
class ZMPInSupport:
    """The zero-moment point stays inside the support polygon of some body points (eq 7.32).

    The ZMP comes from the whole-body dynamics (Chung eqs 4.8–4.10, the
    ground reaction the motion needs); the polygon's vertices are body points,
    given in counter-clockwise order seen from above (two points: a segment,
    e.g. heel–toe of a sagittal foot). Each edge ``a → b`` gives
    ``((b − a) × (r_D − a)) · n ≥ 0`` (for a segment: ``r_D`` between the ends).

    Parameters
    ----------
    points : sequence of (body, point)
    margin : float
        Distance kept from the edges, m.

    Examples
    --------
    >>> heel, toe = ("foot_r", (-0.05, 0, -0.08)), ("foot_r", (0.15, 0, -0.08))
    >>> len(ZMPInSupport([heel, toe]).points)  # a sagittal foot: a segment
    2
    """

    points: tuple
    margin: float = 0.0
    name: str = "zmp"


@dataclass(frozen=True)
class PathConstraint:
    """A user constraint ``lb ≤ fun(x, u, p, t) ≤ ub`` at every node (CasADi expressions)."""

    fun: object
    lb: object = 0.0
    ub: object = 0.0
    name: str = "path"

    def __post_init__(self):
        check_callable(self.fun, "PathConstraint fun")


@dataclass(frozen=True)
class BoundaryConstraint:
    """A user constraint ``lb ≤ fun(x0, xf, T, p) ≤ ub`` on the phase's ends."""

    fun: object
    lb: object = 0.0
    ub: object = 0.0
    name: str = "boundary"

    def __post_init__(self):
        check_callable(self.fun, "BoundaryConstraint fun")


@dataclass(frozen=True)
class Waypoint:
    """Coordinates prescribed at an interior time (Chung's pendulum case 4).

    The state at time `time` (from the phase start) is the cubic Hermite
    interpolant of the node positions and velocities that bracket it.

    Parameters
    ----------
    time : float
        s, within a fixed-duration phase.
    values : dict
        Coordinate name -> value (rad or m).

    Examples
    --------
    >>> Waypoint(0.76, {"pin": -2.44}).values
    {'pin': -2.44}
    """

    time: float
    values: dict
    name: str = "waypoint"


_CONSTRAINTS = (NonPenetration, ZMPInSupport, PathConstraint, BoundaryConstraint, Waypoint)
