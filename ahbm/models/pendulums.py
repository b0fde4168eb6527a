"""Pendulum models: the teaching pendulum and the test models of the dynamics algorithms.

- :func:`single_pendulum` and :func:`pendulum_torque`: a uniform rod of mass
  ``m`` and length ``l`` that turns about a horizontal pin at its end ``O``.
  The angle ``q`` is measured from the horizontal, positive upwards, so that
  under gravity ``(0, 0, -g)`` its equation of motion is

      J_O q̈ + m g (l/2) cos q = τ

  with ``J_O`` the moment of inertia about the pin (``m l²/3`` for a slender
  rod). The defaults are the simple pendulum of Chung (2009): §3.4 (figure
  3.2, eq. 3.27: m = 0.5 kg, l = 0.4 m, a slender bar) and §6.3.1–6.3.2
  (eq. 6.8, with J_O = 0.0267 kg m² = 0.5 · 0.4² / 3, rounded). The AHBM
  report has no such pendulum (its §5.2.2 pendulums have unit length, mass
  and inertia).
- :func:`double_pendulum_3d`: the three-dimensional double pendulum of AHBM
  §5.2.2.
- :func:`triple_pendulum_euler`: the triple pendulum with EulerZYX joints of
  RBDL and Felis (2015).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import (
    as_float_array,
    as_positive_float,
    as_vector_array,
    broadcast_batch,
)
from ahbm.errors import ModelError
from ahbm.kinematics.tree import Model

__all__ = ["single_pendulum", "pendulum_torque", "double_pendulum_3d", "triple_pendulum_euler"]


def _positive(value, name):
    return as_positive_float(value, name, error=ModelError)


def single_pendulum(
    *,
    mass: float = 0.5,
    length: float = 0.4,
    inertia_o: float | None = None,
    gravity=(0.0, 0.0, -9.81),
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
    gravity : array_like, shape (3,), optional
        Gravity in the world frame, m/s² (default ``(0, 0, -9.81)``).

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
    Equation of motion: ``J_O q̈ + m g (l/2) cos q = τ`` under gravity
    ``(0, 0, -g)`` (see :func:`pendulum_torque` for any gravity vector), Chung
    (2009) eq. 6.8; the default parameters are Chung's (module docstring).

    Examples
    --------
    >>> m = single_pendulum()
    >>> m.nq, round(m.total_mass, 3)
    (1, 0.5)
    """
    m = _positive(mass, "mass")
    length = _positive(length, "length")
    j_o = m * length**2 / 3.0 if inertia_o is None else _positive(inertia_o, "inertia_o")
    j_c = j_o - m * (length / 2.0) ** 2
    if j_c < -1e-12 * j_o:
        raise ModelError(
            f"`inertia_o` ({j_o:g} kg m^2) is smaller than m (l/2)^2 = "
            f"{m * (length / 2) ** 2:g} kg m^2; no rigid body has it — increase it"
        )
    j_c = max(j_c, 0.0)
    model = Model("single_pendulum", gravity)
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


def pendulum_torque(
    q, qdd, *, mass=0.5, length=0.4, inertia_o=None, gravity=(0.0, 0.0, -9.81)
) -> np.ndarray:
    """Closed-form pin torque of the teaching pendulum.

    Parameters
    ----------
    q, qdd : array_like, shape (...)
        Angle from the horizontal (rad) and angular acceleration (rad/s²).
    mass, length, inertia_o : float, optional
        As in :func:`single_pendulum` (``inertia_o`` default ``m l²/3``).
    gravity : array_like, shape (3,), optional
        Gravity ``(g_x, g_y, g_z)`` in the world frame, m/s² (default
        ``(0, 0, -9.81)``), as in :func:`single_pendulum`.

    Returns
    -------
    ndarray, shape (...)
        ``τ = J_O q̈ + m (l/2) (g_x sin q − g_z cos q)``, N m: with gravity
        ``(0, 0, -g)``, ``τ = J_O q̈ + m g (l/2) cos q``. The component ``g_y``
        along the pin exerts no torque about it.

    Examples
    --------
    >>> round(float(pendulum_torque(0.0, 0.0)), 6)  # holding the rod horizontal
    0.981
    """
    m = _positive(mass, "mass")
    length = _positive(length, "length")
    g = as_vector_array(gravity, 3, "gravity")
    if g.shape != (3,):
        raise ModelError(f"Expected `gravity` to have shape (3,), got {g.shape}")
    gx, gz = float(g[0]), float(g[2])
    j_o = m * length**2 / 3.0 if inertia_o is None else _positive(inertia_o, "inertia_o")
    q = as_float_array(q, "q")
    qdd = as_float_array(qdd, "qdd")
    broadcast_batch(("q", q, 0), ("qdd", qdd, 0))
    return j_o * qdd + m * -gz * (length / 2.0) * np.cos(q) + m * gx * (length / 2.0) * np.sin(q)


def double_pendulum_3d(*, sequence: str = "ZXY", gravity=(0.0, 0.0, -9.81)) -> Model:
    """Three-dimensional double pendulum of AHBM §5.2.2.

    The lower pendulum hangs from the ground on a pin (revolute) joint about
    the x axis; the upper pendulum hangs from the end of the lower one on an
    Euler joint. Both are 1 m long with 1 kg mass, the COM at mid-length and
    unit principal moments of inertia (1 kg m^2 about each axis).

    Parameters
    ----------
    sequence : str, optional
        Axis sequence of the Euler joint (intrinsic), default ``"ZXY"``.
    gravity : array_like, shape (3,), optional
        Gravity in the world frame, m/s^2.

    Returns
    -------
    Model
        2 bodies (``"pendulum1"``, ``"pendulum2"``), nq = nv = 4. Each body
        frame has its origin at the joint and the pendulum along −z; a marker
        ``"tip"`` marks the free end.

    Notes
    -----
    Stuhmiller & Shen (2000), AHBM report §5.2.2 (figure 5-8). The report
    applies a unit force at the top of the upper pendulum, fixed in its
    local frame; pass it to the dynamics functions through ``f_ext``.

    Examples
    --------
    >>> m = double_pendulum_3d()
    >>> m.nq, m.coordinate_names
    (4, ['pin', 'euler_rz', 'euler_rx', 'euler_ry'])
    """
    model = Model("double_pendulum_3d", gravity)
    inertia = np.eye(3)
    model.add_body(
        "pendulum1",
        "ground",
        {"type": "revolute", "axis": [1.0, 0.0, 0.0], "name": "pin"},
        mass=1.0,
        com=[0.0, 0.0, -0.5],
        inertia=inertia,
        markers={"tip": [0.0, 0.0, -1.0]},
    )
    model.add_body(
        "pendulum2",
        "pendulum1",
        {"type": "euler", "sequence": sequence, "name": "euler"},
        position=[0.0, 0.0, -1.0],
        mass=1.0,
        com=[0.0, 0.0, -0.5],
        inertia=inertia,
        markers={"tip": [0.0, 0.0, -1.0]},
    )
    return model


def triple_pendulum_euler(*, gravity=(0.0, 0.0, -9.81)) -> Model:
    """Triple pendulum with three EulerZYX joints (RBDL/Felis test model).

    Each body: mass 0.1 kg, COM (0, 0, −1) m in the body frame, inertia
    diag(0.1, 0.1, 0.1) kg m^2. Joint origins: (0, 0, 0) for the first
    joint and (0, 0, −1) in the parent frame for the others.

    Returns
    -------
    Model
        3 bodies (``"link1"``, ``"link2"``, ``"link3"``), nq = nv = 9.

    Notes
    -----
    Felis (2015), Algorithm 4 (EulerZYX joints, ``R = Rz(q0) Ry(q1) Rx(q2)``).

    Examples
    --------
    >>> m = triple_pendulum_euler()
    >>> m.nq, m.total_mass
    (9, 0.30000000000000004)
    """
    model = Model("triple_pendulum_euler", gravity)
    parent = "ground"
    for k in range(3):
        name = f"link{k + 1}"
        model.add_body(
            name,
            parent,
            {"type": "euler", "sequence": "ZYX", "name": f"joint{k + 1}"},
            position=[0.0, 0.0, 0.0 if k == 0 else -1.0],
            mass=0.1,
            com=[0.0, 0.0, -1.0],
            inertia=np.eye(3) * 0.1,
        )
        parent = name
    return model
