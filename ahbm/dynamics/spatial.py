"""Spatial (6-D) vector algebra, angular part first (Featherstone 2008, ch. 2).

Motion vectors are ``m = [ω; v]`` (``v`` = velocity of the body point at the
frame origin), force vectors ``f = [n; f]`` (``n`` = moment about the frame
origin). A frame ``B`` is described in a frame ``A`` by ``R = A_R_B`` (axes of
B in A) and ``p = A_p_B`` (origin of B in A, m). All functions accept leading
batch axes.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import (
    as_float_array,
    check_inertia,
    check_mass,
    check_trailing_shape,
)
from ahbm.errors import DataError
from ahbm.kinematics.rotations import skew

__all__ = [
    "motion_cross",
    "force_cross",
    "motion_transform",
    "force_transform",
    "spatial_inertia",
]


def _vec6(x, name):
    return check_trailing_shape(as_float_array(x, name), (6,), name)


def motion_cross(v, m) -> np.ndarray:
    """Spatial cross product for motion vectors, ``v ×m m``.

    Parameters
    ----------
    v, m : array_like, shape (..., 6)

    Returns
    -------
    ndarray, shape (..., 6)
        ``[ω × m_ω; ω × m_v + v_v × m_ω]`` (Featherstone 2008, eq. 2.31).

    Examples
    --------
    >>> motion_cross([0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0])
    array([0., 0., 0., 0., 1., 0.])
    """
    v = _vec6(v, "v")
    m = _vec6(m, "m")
    out = np.empty(np.broadcast_shapes(v.shape, m.shape))
    out[..., :3] = cross(v[..., :3], m[..., :3])
    out[..., 3:] = cross(v[..., :3], m[..., 3:]) + cross(v[..., 3:], m[..., :3])
    return out


def force_cross(v, f) -> np.ndarray:
    """Spatial cross product for force vectors, ``v ×f f = −(v ×m)ᵀ f``.

    Parameters
    ----------
    v, f : array_like, shape (..., 6)

    Returns
    -------
    ndarray, shape (..., 6)
        ``[ω × n + v_v × f; ω × f]`` (Featherstone 2008, eq. 2.32).

    Examples
    --------
    >>> force_cross([0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0])
    array([0., 0., 0., 0., 1., 0.])
    """
    v = _vec6(v, "v")
    f = _vec6(f, "f")
    out = np.empty(np.broadcast_shapes(v.shape, f.shape))
    out[..., :3] = cross(v[..., :3], f[..., :3]) + cross(v[..., 3:], f[..., 3:])
    out[..., 3:] = cross(v[..., :3], f[..., 3:])
    return out


def motion_transform(rotation, position) -> np.ndarray:
    """Plücker transform ``B_X_A`` of motion vectors from frame A to frame B.

    Parameters
    ----------
    rotation : array_like, shape (..., 3, 3)
        ``A_R_B``.
    position : array_like, shape (..., 3)
        Origin of B in A, m.

    Returns
    -------
    ndarray, shape (..., 6, 6)
        ``[[Rᵀ, 0], [−Rᵀ [p]×, Rᵀ]]`` (Featherstone 2008, eq. 2.24).

    Examples
    --------
    >>> X = motion_transform(np.eye(3), [1, 0, 0])
    >>> X @ [0, 0, 1, 0, 0, 0]   # rotation about z seen from x = 1
    array([0., 0., 1., 0., 1., 0.])
    """
    R = check_trailing_shape(as_float_array(rotation, "rotation"), (3, 3), "rotation")
    p = check_trailing_shape(as_float_array(position, "position"), (3,), "position")
    shape = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    RT = np.broadcast_to(np.swapaxes(R, -1, -2), shape + (3, 3))
    X = np.zeros(shape + (6, 6))
    X[..., :3, :3] = RT
    X[..., 3:, 3:] = RT
    X[..., 3:, :3] = -RT @ skew(p)
    return X


def force_transform(rotation, position) -> np.ndarray:
    """Plücker transform ``B_X*_A`` of force vectors from frame A to frame B.

    Parameters
    ----------
    rotation : array_like, shape (..., 3, 3)
        ``A_R_B``.
    position : array_like, shape (..., 3)
        Origin of B in A, m.

    Returns
    -------
    ndarray, shape (..., 6, 6)
        ``[[Rᵀ, −Rᵀ [p]×], [0, Rᵀ]] = (B_X_A)^{-T}`` (Featherstone 2008, eq. 2.25).

    Examples
    --------
    >>> X = force_transform(np.eye(3), [1, 0, 0])
    >>> X @ [0, 0, 0, 0, 1, 0]   # force along y at the origin of A
    array([ 0.,  0., -1.,  0.,  1.,  0.])
    """
    X = motion_transform(rotation, position)
    out = np.zeros_like(X)
    out[..., :3, :3] = X[..., :3, :3]
    out[..., 3:, 3:] = X[..., 3:, 3:]
    out[..., :3, 3:] = X[..., 3:, :3]
    return out


def spatial_inertia(mass, com, inertia) -> np.ndarray:
    """Spatial inertia of a rigid body about its frame origin.

    Parameters
    ----------
    mass : float or array_like, shape (...)
        Mass, kg.
    com : array_like, shape (..., 3)
        Centre of mass in the body frame, m.
    inertia : array_like, shape (..., 3, 3)
        Inertia about the COM in body axes, kg m^2.

    Returns
    -------
    ndarray, shape (..., 6, 6)
        ``[[I_c + m [c]×[c]×ᵀ, m [c]×], [m [c]×ᵀ, m 1]]`` (Featherstone 2008, eq. 2.63).

    Raises
    ------
    DataError
        A negative mass, an inertia that is not symmetric positive
        semi-definite or violates the triangle inequality of its principal
        moments, non-finite values, wrong shapes.

    Examples
    --------
    >>> spatial_inertia(2.0, [0, 0, 0], np.eye(3))[3:, 3:]
    array([[2., 0., 0.],
           [0., 2., 0.],
           [0., 0., 2.]])
    """
    m = check_mass(as_float_array(mass, "mass"))
    c = check_trailing_shape(as_float_array(com, "com"), (3,), "com")
    Ic = check_inertia(check_trailing_shape(as_float_array(inertia, "inertia"), (3, 3), "inertia"))
    try:
        shape = np.broadcast_shapes(m.shape, c.shape[:-1], Ic.shape[:-2])
    except ValueError as err:
        raise DataError(
            f"batch shapes of `mass` {m.shape}, `com` {c.shape} and `inertia` {Ic.shape} do "
            "not broadcast"
        ) from err
    C = skew(c)
    mm = m[..., None, None]
    out = np.zeros(shape + (6, 6))
    out[..., :3, :3] = Ic + mm * C @ np.swapaxes(C, -1, -2)
    out[..., :3, 3:] = mm * C
    out[..., 3:, :3] = mm * np.swapaxes(C, -1, -2)
    out[..., 3:, 3:] = mm * np.eye(3)
    return out
