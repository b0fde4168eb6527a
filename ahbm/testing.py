"""Assertion helpers for tests of code that uses ahbm (users' tests too)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "assert_rotation_close",
    "assert_quat_close",
    "assert_angles_close",
    "marker_leg_model",
]


def assert_rotation_close(actual, desired, *, atol: float = 1e-10, err_msg: str = "") -> None:
    """Assert that two (batches of) rotation matrices are equal within `atol`.

    Parameters
    ----------
    actual, desired : array_like, shape (..., 3, 3)
    atol : float
        Largest accepted absolute difference of any matrix entry.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> assert_rotation_close(rot_z(0.1), rot_z(0.1 + 2 * np.pi))
    """
    a = np.asarray(actual, dtype=float)
    d = np.asarray(desired, dtype=float)
    np.testing.assert_allclose(a, d, rtol=0, atol=atol, err_msg=err_msg)


def assert_quat_close(actual, desired, *, atol: float = 1e-10, err_msg: str = "") -> None:
    """Assert that quaternions describe the same rotations (``q`` and ``-q`` are equal).

    Parameters
    ----------
    actual, desired : array_like, shape (..., 4)
    atol : float

    Examples
    --------
    >>> assert_quat_close([0, 0, 0, 1.0], [0, 0, 0, -1.0])
    """
    a = np.asarray(actual, dtype=float)
    d = np.asarray(desired, dtype=float)
    sign = np.where(np.sum(a * d, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    np.testing.assert_allclose(a, sign * d, rtol=0, atol=atol, err_msg=err_msg)


def assert_angles_close(actual, desired, *, atol: float = 1e-10, err_msg: str = "") -> None:
    """Assert that angles (rad) are equal modulo 2π.

    Examples
    --------
    >>> assert_angles_close([np.pi], [-np.pi])
    """
    a = np.asarray(actual, dtype=float)
    d = np.asarray(desired, dtype=float)
    diff = np.angle(np.exp(1j * (a - d)))
    np.testing.assert_allclose(diff, np.zeros_like(diff), rtol=0, atol=atol, err_msg=err_msg)


def marker_leg_model(root: str = "free_euler", knee_limits=(-2.4, 0.05)):
    """A pelvis and one leg with three or four well-spread markers per body.

    For tests and benchmarks of marker-based kinematics: pelvis (``root``
    joint: ``"free_euler"`` with sequence ZXY, or ``"free"``), thigh (Euler
    ZXY hip, or spherical with a free root), shank (revolute knee about z
    with ``knee_limits``, rad) and foot (universal ZX ankle); nq = 12 with
    the default root. Markers: RASI, LASI, SACR; THI, KNE, THA; TIB, ANK,
    SHA; HEE, TOE, MT5, MT1.
    """
    from ahbm.kinematics.tree import Model

    I3 = np.eye(3) * 0.01
    m = Model("leg")
    root_joint = {"type": root, "sequence": "ZXY"} if root == "free_euler" else {"type": root}
    m.add_body(
        "pelvis",
        "ground",
        root_joint,
        mass=10,
        inertia=I3,
        markers={
            "RASI": [0.12, 0.03, 0.12],
            "LASI": [0.12, 0.03, -0.12],
            "SACR": [-0.1, 0.05, 0.0],
        },
    )
    m.add_body(
        "thigh",
        "pelvis",
        {
            "type": "spherical" if root == "free" else "euler",
            **({} if root == "free" else {"sequence": "ZXY"}),
        },
        position=[0, -0.08, 0.09],
        mass=7,
        inertia=I3,
        markers={"THI": [0.02, -0.2, 0.07], "KNE": [0, -0.42, 0.05], "THA": [0.07, -0.15, -0.02]},
    )
    m.add_body(
        "shank",
        "thigh",
        {"type": "revolute", "axis": [0, 0, 1], "limits": list(knee_limits)},
        position=[0, -0.42, 0],
        mass=3,
        inertia=I3,
        markers={"TIB": [0.02, -0.2, 0.05], "ANK": [0, -0.4, 0.04], "SHA": [0.06, -0.1, -0.03]},
    )
    m.add_body(
        "foot",
        "shank",
        {"type": "universal", "sequence": "ZX"},
        position=[0, -0.42, 0],
        mass=1,
        inertia=I3,
        markers={
            "HEE": [-0.05, -0.05, 0],
            "TOE": [0.15, -0.05, 0.01],
            "MT5": [0.12, -0.04, 0.05],
            "MT1": [0.11, -0.03, -0.04],
        },
    )
    return m
