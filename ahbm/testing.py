"""Assertion helpers for tests of code that uses ahbm (users' tests too)."""

from __future__ import annotations

import numpy as np

__all__ = ["assert_rotation_close", "assert_quat_close", "assert_angles_close"]


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
