"""Single pendulum for teaching: inverse dynamics against the closed form.

A uniform rod of mass ``m`` and length ``l`` turns about a horizontal pin at
its end ``O``. The angle ``q`` is measured from the horizontal, positive
upwards, so that its equation of motion is

    J_O q̈ + m g (l/2) cos q = τ

with ``J_O`` the moment of inertia about the pin (``m l²/3`` for a slender
rod). The class exercises of the AHBM report use m = 0.5 kg, l = 0.4 m and
J_O = 0.0267 kg m² (= 0.5 · 0.4² / 3, rounded).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, as_positive_float, broadcast_batch
from ahbm.errors import ModelError
from ahbm.kinematics.tree import Model

__all__ = ["single_pendulum", "pendulum_torque"]


def _positive(value, name):
    return as_positive_float(value, name, error=ModelError)


def single_pendulum(
    *, mass: float = 0.5, length: float = 0.4, inertia_o: float | None = None, g: float = 9.81
) -> Model:
    """Build the teaching pendulum: a rod on a horizontal pin, angle from the horizontal.

    Parameters
    ----------
    mass : float, optional
        Rod mass, kg (default 0.5).
    length : float, optional
        Rod length, m (default 0.4); the centre of mass is at ``length / 2``.
    inertia_o : float, optional
        Moment of inertia about the pin, kg m². Default ``mass length² / 3``
        (slender rod; 0.02667 kg m² for the defaults). Must be at least
        ``mass (length/2)²`` (parallel-axis theorem).
    g : float, optional
        Magnitude of gravity, m/s² (acts along -z).

    Returns
    -------
    Model
        One body ``"rod"`` on the revolute joint ``"pin"`` about -y: at
        ``q = 0`` the rod points along +x (horizontal); ``q > 0`` lifts it
        towards +z. Marker ``"tip"`` at the free end.

    Raises
    ------
    ModelError
        Non-positive parameters, or ``inertia_o < mass (length/2)²``.

    Notes
    -----
    Equation of motion: ``J_O q̈ + m g (l/2) cos q = τ`` (see
    :func:`pendulum_torque`).

    Examples
    --------
    >>> m = single_pendulum()
    >>> m.nq, round(m.total_mass, 3)
    (1, 0.5)
    """
    m = _positive(mass, "mass")
    length = _positive(length, "length")
    g = _positive(g, "g")
    j_o = m * length**2 / 3.0 if inertia_o is None else _positive(inertia_o, "inertia_o")
    j_c = j_o - m * (length / 2.0) ** 2
    if j_c < -1e-12 * j_o:
        raise ModelError(
            f"`inertia_o` ({j_o:g} kg m^2) is smaller than m (l/2)^2 = "
            f"{m * (length / 2) ** 2:g} kg m^2; no rigid body has it — increase it"
        )
    j_c = max(j_c, 0.0)
    model = Model("single_pendulum", (0.0, 0.0, -g))
    model.add_body(
        "rod",
        "ground",
        {"type": "revolute", "axis": [0.0, -1.0, 0.0], "name": "pin"},
        mass=m,
        com=[length / 2.0, 0.0, 0.0],
        inertia=np.diag([0.0, j_c, j_c]),
        markers={"tip": [length, 0.0, 0.0]},
    )
    return model


def pendulum_torque(q, qdd, *, mass=0.5, length=0.4, inertia_o=None, g=9.81) -> np.ndarray:
    """Closed-form pin torque of the teaching pendulum.

    Parameters
    ----------
    q, qdd : array_like, shape (...)
        Angle from the horizontal (rad) and angular acceleration (rad/s²).
    mass, length, inertia_o, g : float, optional
        As in :func:`single_pendulum` (``inertia_o`` default ``m l²/3``).

    Returns
    -------
    ndarray, shape (...)
        ``τ = J_O q̈ + m g (l/2) cos q``, N m.

    Examples
    --------
    >>> round(float(pendulum_torque(0.0, 0.0)), 6)  # holding the rod horizontal
    0.981
    """
    m = _positive(mass, "mass")
    length = _positive(length, "length")
    g = _positive(g, "g")
    j_o = m * length**2 / 3.0 if inertia_o is None else _positive(inertia_o, "inertia_o")
    q = as_float_array(q, "q")
    qdd = as_float_array(qdd, "qdd")
    broadcast_batch(("q", q, 0), ("qdd", qdd, 0))
    return j_o * qdd + m * g * (length / 2.0) * np.cos(q)
