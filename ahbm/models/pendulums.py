"""Pendulum models used by the examples and the tests of the dynamics algorithms."""

from __future__ import annotations

import numpy as np

from ahbm.kinematics.tree import Model

__all__ = ["double_pendulum_3d", "triple_pendulum_euler"]


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
