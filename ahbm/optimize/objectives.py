"""Objectives of an optimal-control :class:`~ahbm.optimize.phase.Phase`.

Lagrange terms (effort, jerk, control rate, tracking of coordinates, markers
and ground reactions, custom integrands) and Mayer terms (final time, peak
torque); each is a small frozen description that the phase evaluates.
"""

from __future__ import annotations

from dataclasses import dataclass

from ahbm._internal.validation import check_callable

__all__ = [
    "Effort",
    "Jerk",
    "ControlRate",
    "TrackCoordinates",
    "TrackMarkers",
    "TrackGRF",
    "FinalTime",
    "PeakTorque",
    "CustomCost",
]


@dataclass(frozen=True)
class Effort:
    """``w ∫ Σ (τ_i / s_i)^n dt`` over the actuated (or given) coordinates.

    Parameters
    ----------
    weight : float
    coordinates : sequence of str, optional
    scale : float or array_like, optional
        Torque scale ``s_i`` (N m).
    exponent : int
        ``n`` (2 for the sum of squared torques of Chung eqs 6.13a / 7.17a).

    Examples
    --------
    >>> Effort(weight=1.0, scale=100.0).exponent  # sum of (tau/100 N m)^2
    2
    """

    weight: float = 1.0
    coordinates: tuple | None = None
    scale: object = 1.0
    exponent: int = 2
    name: str = "effort"


@dataclass(frozen=True)
class Jerk:
    """``w ∫ Σ q⃛_i² dt`` by finite differences of the node accelerations."""

    weight: float = 1.0
    coordinates: tuple | None = None
    name: str = "jerk"


@dataclass(frozen=True)
class ControlRate:
    """``w ∫ Σ (u̇_i / s)² dt`` by finite differences of the node controls (a smoothness term).

    Parameters
    ----------
    weight : float
    controls : sequence of str, optional
        Prefixes of :attr:`~ahbm.optimize.phase.Phase.control_names` (e.g. ``["F:", "tau:"]``);
        default all controls.
    scale : float
        Control scale ``s``.
    """

    weight: float = 1.0
    controls: tuple | None = None
    scale: float = 1.0
    name: str = "control_rate"


@dataclass(frozen=True)
class TrackCoordinates:
    """``w ∫ Σ (q_i(t) − q_ref,i(t))² dt`` with the reference linearly interpolated.

    Parameters
    ----------
    time : array_like, shape (n,)
    values : array_like, shape (n, k)
        Reference of the `coordinates` (all when None), rad or m.
    """

    time: object
    values: object
    weight: float = 1.0
    coordinates: tuple | None = None
    name: str = "track_coordinates"


@dataclass(frozen=True)
class TrackMarkers:
    """``w ∫ Σ |p_m(q) − p_ref,m(t)|² dt`` for model markers.

    Parameters
    ----------
    time : array_like, shape (n,)
    values : dict
        Marker name -> (n, 3) world positions, m.
    """

    time: object
    values: dict
    weight: float = 1.0
    name: str = "track_markers"


@dataclass(frozen=True)
class TrackGRF:
    """``w ∫ |Σ F_contacts − F_ref(t)|² dt``: tracking of the total ground force (N)."""

    time: object
    values: object
    weight: float = 1.0
    name: str = "track_grf"


@dataclass(frozen=True)
class FinalTime:
    """``w T``: minimum time (a Mayer term; the phase needs a free duration)."""

    weight: float = 1.0
    name: str = "final_time"


@dataclass(frozen=True)
class PeakTorque:
    """``w s`` with ``−s ≤ τ_i ≤ s`` at every node: the minimax torque (Chung ch. 6)."""

    weight: float = 1.0
    name: str = "peak_torque"


@dataclass(frozen=True)
class CustomCost:
    """A user cost: ``w ∫ fun(x, u, p, t) dt`` (``kind="lagrange"``) or ``w fun(x0, xf, T, p)``."""

    fun: object
    kind: str = "lagrange"
    weight: float = 1.0
    name: str = "custom"

    def __post_init__(self):
        check_callable(self.fun, "CustomCost fun")


_OBJECTIVES = (Effort, Jerk, ControlRate, TrackCoordinates, TrackMarkers, TrackGRF, FinalTime,
               PeakTorque, CustomCost)  # fmt: skip
