"""Rotation rates and derivatives: angular-velocity maps of Euler angles and
quaternions, their derivatives, derivatives of R, and angular velocity and
acceleration of rotation time series."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_float_array, check_trailing_shape, sample_times
from ahbm.errors import DataError
from ahbm.kinematics.rotations._base import (
    GIMBAL_TOL,
    _angles,
    _first_bad,
    _intrinsic_form,
    _matrix,
    _quat,
)
from ahbm.kinematics.rotations.matrices import _axis_rot, _skew
from ahbm.kinematics.rotations.quaternions import (
    _matrix_to_quat,
    _qmul,
    _quat_to_rotvec,
)

__all__ = [
    "euler_rate_matrix",
    "euler_rate_matrix_inv",
    "euler_rates_to_omega",
    "omega_to_euler_rates",
    "deuler_rate_matrix_deuler",
    "deuler_rate_matrix_inv_deuler",
    "quat_rate_matrix",
    "dquat_rate_matrix_dquat",
    "quat_rates_to_omega",
    "omega_to_quat_rates",
    "dmatrix_deuler",
    "d2matrix_deuler",
    "dmatrix_dquat",
    "d2matrix_dquat",
    "angular_velocity",
    "angular_acceleration",
]


# --------------------------------------------------------------------------
# angular velocity maps
# --------------------------------------------------------------------------
_BASIS = np.eye(3)


def _check_frame(frame) -> str:
    """Return `frame` if it is "local" or "world" (DataError otherwise)."""
    if frame not in ("local", "world"):
        raise DataError(
            f"Expected `frame` to be 'local' (the rotating frame B) or 'world' (the fixed "
            f"frame A), got {frame!r}"
        )
    return frame


def _rate_matrix_intrinsic(a: np.ndarray, axes, frame: str, deriv: bool):
    """S (..., 3, 3) for the intrinsic sequence, and dS (..., 3, 3, 3) if deriv."""
    i, j, k = axes
    u1, u2, u3 = _BASIS[i], _BASIS[j], _BASIS[k]
    A = _axis_rot(i, a[..., 0])
    B = _axis_rot(j, a[..., 1])
    C = _axis_rot(k, a[..., 2])
    shape = a.shape[:-1]
    S = np.empty(shape + (3, 3))
    dS = np.zeros(shape + (3, 3, 3)) if deriv else None
    if frame == "local":
        Ct = np.swapaxes(C, -1, -2)
        btu1 = B[..., i, :]  # B^T u1
        col0 = np.einsum("...ij,...j->...i", Ct, btu1)
        col1 = Ct[..., :, j]
        S[..., :, 0] = col0
        S[..., :, 1] = col1
        S[..., :, 2] = u3
        if deriv:
            # d/db col0 = C^T (-u2 x (B^T u1)); d/dc colX = -u3 x colX
            dS[..., 1, :, 0] = np.einsum(
                "...ij,...j->...i", Ct, -np.cross(np.broadcast_to(u2, btu1.shape), btu1)
            )
            dS[..., 2, :, 0] = -np.cross(np.broadcast_to(u3, col0.shape), col0)
            dS[..., 2, :, 1] = -np.cross(np.broadcast_to(u3, col1.shape), col1)
    else:
        col1 = A[..., :, j]
        AB = A @ B
        col2 = AB[..., :, k]
        S[..., :, 0] = u1
        S[..., :, 1] = col1
        S[..., :, 2] = col2
        if deriv:
            dS[..., 0, :, 1] = np.cross(np.broadcast_to(u1, col1.shape), col1)
            dS[..., 0, :, 2] = np.cross(np.broadcast_to(u1, col2.shape), col2)
            Bu3 = B[..., :, k]
            dS[..., 1, :, 2] = np.einsum(
                "...ij,...j->...i", A, np.cross(np.broadcast_to(u2, Bu3.shape), Bu3)
            )
    return S, dS


def _rate_matrix(angles, seq, frame, degrees, deriv):
    axes, rev = _intrinsic_form(seq)
    frame = _check_frame(frame)
    a = _angles(angles, "angles", degrees)
    if rev:
        a = a[..., ::-1]
    S, dS = _rate_matrix_intrinsic(a, axes, frame, deriv)
    if rev:
        S = S[..., ::-1]
        if deriv:
            dS = dS[..., ::-1, :, ::-1]
    return S, dS


def euler_rate_matrix(angles, seq: str, *, frame: str = "local", degrees: bool = False):
    """Matrix S mapping Euler angle rates to angular velocity, ``ω = S θ̇``.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        Euler/Cardan angles, rad (deg if ``degrees=True``; the rates are
        always per second in the same angle unit as ω, rad/s).
    seq : str
        Axis sequence (see :func:`euler_to_matrix`).
    frame : {"local", "world"}
        Express ω in the rotating frame B (``"local"``, the body frame of the
        AHBM report) or in the fixed frame A (``"world"``, the space frame).
        ``ω_world = R @ ω_local``.

    Returns
    -------
    S : ndarray, shape (..., 3, 3)

    Notes
    -----
    AHBM eqs. 2.13-2.14 give S for ZXZ and ZYX in the body frame. For an
    intrinsic sequence ``R = R1(a) R2(b) R3(c)`` with axes u1, u2, u3:
    ``S_world = [u1, R1 u2, R1 R2 u3]`` and ``S_local = R^T S_world =
    [R3^T R2^T u1, R3^T u2, u3]``. Extrinsic sequences are mapped to the
    intrinsic reversed sequence.

    Examples
    --------
    >>> th = np.array([0.1, 0.2, 0.3])  # AHBM eq. 2.13 (ZXZ, body frame)
    >>> s2, c2, s3, c3 = np.sin(0.2), np.cos(0.2), np.sin(0.3), np.cos(0.3)
    >>> np.allclose(euler_rate_matrix(th, "ZXZ"),
    ...             [[s2 * s3, c3, 0], [s2 * c3, -s3, 0], [c2, 0, 1]])
    True
    """
    return _rate_matrix(angles, seq, frame, degrees, False)[0]


def deuler_rate_matrix_deuler(angles, seq: str, *, frame: str = "local", degrees: bool = False):
    """Partial derivatives of S (:func:`euler_rate_matrix`) w.r.t. the angles.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    frame : {"local", "world"}

    Returns
    -------
    dS : ndarray, shape (..., 3, 3, 3)
        ``dS[..., k, :, :] = ∂S/∂θk`` (per radian, also if ``degrees=True``).

    Examples
    --------
    >>> deuler_rate_matrix_deuler([0.1, 0.2, 0.3], "XYZ").shape
    (3, 3, 3)
    """
    return _rate_matrix(angles, seq, frame, degrees, True)[1]


def _singular_det(S: np.ndarray, name: str, seq: str) -> np.ndarray:
    det = np.linalg.det(S)
    bad = np.abs(det) < GIMBAL_TOL
    if np.any(bad):
        raise DataError(
            f"Euler rate matrix for sequence {seq!r} is singular (gimbal lock) at batch index "
            f"{_first_bad(np.atleast_1d(bad))}: angular velocity cannot be mapped to `{name}` "
            "rates there; use quaternions or another sequence for these frames"
        )
    return det


def euler_rate_matrix_inv(angles, seq: str, *, frame: str = "local", degrees: bool = False):
    """Matrix T = S⁻¹ mapping angular velocity to Euler angle rates (AHBM eq. 2.15).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    frame : {"local", "world"}
        Frame in which ω is expressed.

    Returns
    -------
    T : ndarray, shape (..., 3, 3)
        ``θ̇ = T ω``.

    Raises
    ------
    DataError
        At gimbal lock (``|det S| < 1e-7``), naming the batch indices; T is
        never returned with inf or huge entries silently.

    Examples
    --------
    >>> S = euler_rate_matrix([0.1, 0.2, 0.3], "ZYX")
    >>> np.allclose(euler_rate_matrix_inv([0.1, 0.2, 0.3], "ZYX") @ S, np.eye(3))
    True
    """
    S = euler_rate_matrix(angles, seq, frame=frame, degrees=degrees)
    _singular_det(S, "Euler angle", seq)
    return np.linalg.inv(S)


def deuler_rate_matrix_inv_deuler(angles, seq: str, *, frame: str = "local", degrees: bool = False):
    """Partial derivatives of T = S⁻¹ w.r.t. the angles (AHBM tables 2-5, 2-6).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    frame : {"local", "world"}

    Returns
    -------
    dT : ndarray, shape (..., 3, 3, 3)
        ``dT[..., k, :, :] = ∂T/∂θk = -T (∂S/∂θk) T``.

    Raises
    ------
    DataError
        At gimbal lock.

    Notes
    -----
    Derived from ``T S = I`` for every sequence rather than transcribed from
    the report's tables (which contain typos).

    Examples
    --------
    >>> deuler_rate_matrix_inv_deuler([0.1, 0.2, 0.3], "ZXZ").shape
    (3, 3, 3)
    """
    S, dS = _rate_matrix(angles, seq, frame, degrees, True)
    _singular_det(S, "Euler angle", seq)
    T = np.linalg.inv(S)
    return -np.einsum("...ij,...kjl,...lm->...kim", T, dS, T)


def euler_rates_to_omega(
    angles, rates, seq: str, *, frame: str = "local", degrees: bool = False
) -> np.ndarray:
    """Angular velocity from Euler angles and their rates, ``ω = S(θ) θ̇``.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        Angles, rad (deg if ``degrees=True``).
    rates : array_like, shape (..., 3)
        Angle rates, rad/s (deg/s if ``degrees=True``).
    seq : str
    frame : {"local", "world"}

    Returns
    -------
    omega : ndarray, shape (..., 3)
        Angular velocity, rad/s, in the requested frame.

    Examples
    --------
    >>> euler_rates_to_omega([0, 0, 0], [0, 0, 1.0], "XYZ")
    array([0., 0., 1.])
    """
    S = euler_rate_matrix(angles, seq, frame=frame, degrees=degrees)
    r = as_float_array(rates, "rates")
    check_trailing_shape(r, (3,), "rates")
    if degrees:
        r = np.deg2rad(r)
    return np.einsum("...ij,...j->...i", S, r)


def omega_to_euler_rates(
    angles, omega, seq: str, *, frame: str = "local", degrees: bool = False
) -> np.ndarray:
    """Euler angle rates from angular velocity, ``θ̇ = T(θ) ω`` (AHBM eq. 2.15).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    omega : array_like, shape (..., 3)
        Angular velocity, rad/s, in `frame`.
    seq : str
    frame : {"local", "world"}

    Returns
    -------
    rates : ndarray, shape (..., 3)
        rad/s (deg/s if ``degrees=True``).

    Raises
    ------
    DataError
        At gimbal lock.

    Examples
    --------
    >>> w = euler_rates_to_omega([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], "ZXZ")
    >>> np.round(omega_to_euler_rates([0.1, 0.2, 0.3], w, "ZXZ"), 12)
    array([1., 2., 3.])
    """
    T = euler_rate_matrix_inv(angles, seq, frame=frame, degrees=degrees)
    w = as_float_array(omega, "omega")
    check_trailing_shape(w, (3,), "omega")
    r = np.einsum("...ij,...j->...i", T, w)
    return np.rad2deg(r) if degrees else r


def _quat_rate_matrix(q: np.ndarray, frame: str) -> np.ndarray:
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    G = np.empty(q.shape[:-1] + (4, 3))
    if frame == "local":  # q̇ = 1/2 q ⊗ (ω, 0)
        rows = [[w, -z, y], [z, w, -x], [-y, x, w], [-x, -y, -z]]
    else:  # q̇ = 1/2 (ω, 0) ⊗ q
        rows = [[w, z, -y], [-z, w, x], [y, -x, w], [-x, -y, -z]]
    for r in range(4):
        for c in range(3):
            G[..., r, c] = 0.5 * rows[r][c] + 0.0  # no negative zeros
    return G


def quat_rate_matrix(q, *, frame: str = "local", scalar_first: bool = False) -> np.ndarray:
    """Matrix mapping angular velocity to quaternion rates, ``q̇ = T(q) ω`` (AHBM eq. 2.16).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Unit quaternions (not normalized here: T is linear in q, as in the
        report).
    frame : {"local", "world"}
        Frame of ω. Local: ``q̇ = ½ q ⊗ (ω, 0)`` (eq. 2.16); world:
        ``q̇ = ½ (ω, 0) ⊗ q``.

    Returns
    -------
    T : ndarray, shape (..., 4, 3)
        Rows in the component order of `q`. For unit q, ``ω = 4 T^T q̇``
        (``T^T T = I/4``), see :func:`quat_rates_to_omega`.

    Examples
    --------
    >>> quat_rate_matrix([0, 0, 0, 1.0])
    array([[0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5],
           [0. , 0. , 0. ]])
    """
    frame = _check_frame(frame)
    q = _quat(q, scalar_first=scalar_first)
    G = _quat_rate_matrix(q, frame)
    return np.roll(G, 1, axis=-2) if scalar_first else G


def dquat_rate_matrix_dquat(*, frame: str = "local", scalar_first: bool = False) -> np.ndarray:
    """Derivatives of T(q) of :func:`quat_rate_matrix` w.r.t. q (AHBM table 2-9).

    T is linear in q, so the derivatives are constant.

    Parameters
    ----------
    frame : {"local", "world"}

    Returns
    -------
    dT : ndarray, shape (4, 4, 3)
        ``dT[k] = ∂T/∂q_k``.

    Examples
    --------
    >>> dquat_rate_matrix_dquat()[3]  # d/dw: I/2 on the vector rows
    array([[0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5],
           [0. , 0. , 0. ]])
    """
    frame = _check_frame(frame)
    dT = np.stack([_quat_rate_matrix(e, frame) for e in np.eye(4)])
    if scalar_first:
        dT = np.roll(np.roll(dT, 1, axis=0), 1, axis=1)
    return dT


def quat_rates_to_omega(q, qd, *, frame: str = "local", scalar_first: bool = False):
    """Angular velocity from a unit quaternion and its time derivative.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Unit quaternions.
    qd : array_like, shape (..., 4)
        Their time derivatives, 1/s.
    frame : {"local", "world"}

    Returns
    -------
    omega : ndarray, shape (..., 3)
        rad/s. Local: ``(ω, 0) = 2 q* ⊗ q̇``; world: ``(ω, 0) = 2 q̇ ⊗ q*``.

    Examples
    --------
    >>> quat_rates_to_omega([0, 0, 0, 1.0], [0, 0, 0.5, 0])
    array([0., 0., 1.])
    """
    frame = _check_frame(frame)
    q = _quat(q, scalar_first=scalar_first)
    qd = _quat(qd, "qd", scalar_first=scalar_first)
    qc = q * np.array([-1.0, -1.0, -1.0, 1.0])
    prod = _qmul(qc, qd) if frame == "local" else _qmul(qd, qc)
    return 2.0 * prod[..., :3]


def omega_to_quat_rates(q, omega, *, frame: str = "local", scalar_first: bool = False):
    """Quaternion time derivative from angular velocity, ``q̇ = T(q) ω`` (AHBM eq. 2.16).

    Parameters
    ----------
    q : array_like, shape (..., 4)
    omega : array_like, shape (..., 3)
        rad/s, in `frame`.

    Returns
    -------
    qdot : ndarray, shape (..., 4)

    Examples
    --------
    >>> omega_to_quat_rates([0, 0, 0, 1.0], [0, 0, 1.0])
    array([0. , 0. , 0.5, 0. ])
    """
    G = quat_rate_matrix(q, frame=frame, scalar_first=scalar_first)
    w = as_float_array(omega, "omega")
    check_trailing_shape(w, (3,), "omega")
    return np.einsum("...ij,...j->...i", G, w)


# --------------------------------------------------------------------------
# derivatives of R
# --------------------------------------------------------------------------
def _euler_factors(angles, seq, degrees):
    axes, rev = _intrinsic_form(seq)
    a = _angles(angles, "angles", degrees)
    if rev:
        a = a[..., ::-1]
    Ms = [_axis_rot(axes[n], a[..., n]) for n in range(3)]
    Ks = [_skew(_BASIS[axes[n]]) for n in range(3)]
    return Ms, Ks, rev


def dmatrix_deuler(angles, seq: str, *, degrees: bool = False) -> np.ndarray:
    """First partial derivatives of R(θ) w.r.t. the Euler angles (AHBM tables 2-1, 2-3).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
        Any of the 24 sequences.

    Returns
    -------
    dR : ndarray, shape (..., 3, 3, 3)
        ``dR[..., k, :, :] = ∂R/∂θk`` (per radian).

    Notes
    -----
    With ``R = R1 R2 R3`` and ``dRn/dθn = Kn Rn`` (``Kn = skew(un)``):
    ``∂R/∂θ1 = K1 R1 R2 R3``, ``∂R/∂θ2 = R1 K2 R2 R3``,
    ``∂R/∂θ3 = R1 R2 K3 R3``. Derived for every sequence, not transcribed.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import euler_to_matrix
    >>> dR = dmatrix_deuler([0.1, 0.2, 0.3], "ZXZ")
    >>> h = 1e-6
    >>> fd = (euler_to_matrix([0.1 + h, 0.2, 0.3], "ZXZ")
    ...       - euler_to_matrix([0.1 - h, 0.2, 0.3], "ZXZ")) / (2 * h)
    >>> np.allclose(dR[0], fd, atol=1e-8)
    True
    """
    (A, B, C), (K1, K2, K3), rev = _euler_factors(angles, seq, degrees)
    BC = B @ C
    AB = A @ B
    d = np.stack([K1 @ A @ BC, A @ (K2 @ BC), AB @ (K3 @ C)], axis=-3)
    return d[..., ::-1, :, :] if rev else d


def d2matrix_deuler(angles, seq: str, *, degrees: bool = False) -> np.ndarray:
    """Second partial derivatives of R(θ) w.r.t. the Euler angles (AHBM tables 2-2, 2-4).

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str

    Returns
    -------
    d2R : ndarray, shape (..., 3, 3, 3, 3)
        ``d2R[..., k, l, :, :] = ∂²R/∂θk∂θl`` (symmetric in k, l).

    Examples
    --------
    >>> d2 = d2matrix_deuler([0.1, 0.2, 0.3], "XYZ")
    >>> np.allclose(d2[..., 0, 1, :, :], d2[..., 1, 0, :, :])
    True
    """
    (A, B, C), (K1, K2, K3), rev = _euler_factors(angles, seq, degrees)
    # factors with derivatives applied: F[n][m] = Rn with m derivatives
    F = [[A, K1 @ A, K1 @ K1 @ A], [B, K2 @ B, K2 @ K2 @ B], [C, K3 @ C, K3 @ K3 @ C]]
    shape = A.shape[:-2] + (3, 3, 3, 3)
    out = np.empty(shape)
    for k in range(3):
        for l in range(3):
            order = [0, 0, 0]
            order[k] += 1
            order[l] += 1
            out[..., k, l, :, :] = F[0][order[0]] @ F[1][order[1]] @ F[2][order[2]]
    return out[..., ::-1, ::-1, :, :] if rev else out


def dmatrix_dquat(q, *, scalar_first: bool = False) -> np.ndarray:
    """First partial derivatives of R(e) (AHBM eq. 2.9) w.r.t. the Euler parameters (table 2-7).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Euler parameters ``(e1, e2, e3, e4)`` (scalar-last).

    Returns
    -------
    dR : ndarray, shape (..., 4, 3, 3)
        ``dR[..., k, :, :] = ∂R/∂e_k`` of eq. 2.9 as written (see
        ``quat_to_matrix(q, normalize=False)``); the components follow the
        order of `q` (scalar first if ``scalar_first=True``).

    Examples
    --------
    >>> dmatrix_dquat([0, 0, 0, 1.0])[0]  # ∂R/∂e1 at the identity
    array([[ 0.,  0.,  0.],
           [ 0.,  0., -2.],
           [ 0.,  2.,  0.]])
    """
    q = _quat(q, scalar_first=scalar_first)
    x, y, z, w = (q[..., n] for n in range(4))
    zero = np.zeros_like(x)
    # each entry: rows of d/dx, d/dy, d/dz, d/dw in row-major 3x3 order
    dx = [zero, 2 * y, 2 * z, 2 * y, -4 * x, -2 * w, 2 * z, 2 * w, -4 * x]
    dy = [-4 * y, 2 * x, 2 * w, 2 * x, zero, 2 * z, -2 * w, 2 * z, -4 * y]
    dz = [-4 * z, -2 * w, 2 * x, 2 * w, -4 * z, 2 * y, 2 * x, 2 * y, zero]
    dw = [zero, -2 * z, 2 * y, 2 * z, zero, -2 * x, -2 * y, 2 * x, zero]
    d = np.stack([np.stack(m, axis=-1).reshape(x.shape + (3, 3)) for m in (dx, dy, dz, dw)], -3)
    d += 0.0  # no negative zeros
    return np.roll(d, 1, axis=-3) if scalar_first else d


def d2matrix_dquat(*, scalar_first: bool = False) -> np.ndarray:
    """Second partial derivatives of R(e) (eq. 2.9) w.r.t. the Euler parameters (table 2-8).

    Eq. 2.9 is quadratic in e, so they are constant.

    Returns
    -------
    d2R : ndarray, shape (4, 4, 3, 3)
        ``d2R[k, l] = ∂²R/∂e_k∂e_l``.

    Examples
    --------
    >>> d2matrix_dquat()[0, 0]  # ∂²R/∂e1²
    array([[ 0.,  0.,  0.],
           [ 0., -4.,  0.],
           [ 0.,  0., -4.]])
    """
    # dmatrix_dquat is linear in q: its derivative w.r.t. q_l is dmatrix_dquat(e_l)
    d2 = np.stack([dmatrix_dquat(e) for e in np.eye(4)], axis=1)  # [k, l]
    if scalar_first:
        d2 = np.roll(np.roll(d2, 1, axis=0), 1, axis=1)
    return d2


# --------------------------------------------------------------------------
# time series
# --------------------------------------------------------------------------
def angular_velocity(R, *, rate=None, time=None, frame: str) -> np.ndarray:
    """Angular velocity of a rotation-matrix time series by finite differences.

    Parameters
    ----------
    R : array_like, shape (n_frames, ..., 3, 3)
        Rotation matrices; time along axis 0.
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time` (the time
        convention of the signal functions).
    time : array_like, shape (n_frames,), optional
        Sample times, s (strictly increasing; need not be uniform).
    frame : {"local", "world"}
        ``skew(ω_world) = Ṙ R^T``; ``skew(ω_local) = R^T Ṙ`` (AHBM eq. 2.11).
        Required (keyword-only).

    Returns
    -------
    omega : ndarray, shape (n_frames, ..., 3)
        rad/s. Second-order finite differences (non-uniform spacing allowed)
        of the relative rotation vectors between neighbouring frames, so a
        rotation at constant angular velocity gives the exact ω at every
        frame, ends included.

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_z
    >>> t = np.linspace(0, 1, 101)
    >>> w = angular_velocity(rot_z(2.0 * t), time=t, frame="world")
    >>> np.allclose(w, [0, 0, 2.0])
    True
    """
    frame = _check_frame(frame)
    R = _matrix(R)
    if R.ndim < 3:
        raise DataError(f"Expected `R` to have shape (n_frames, ..., 3, 3), got {R.shape}")
    t = sample_times(R.shape[0], rate=rate, time=time)
    if t.size < 3:
        raise DataError(f"At least 3 samples are needed to differentiate, got {t.size}")

    def log_step(Ra, Rb):  # rotation vector of the step from Ra to Rb
        Rat = np.swapaxes(Ra, -1, -2)
        M = Rb @ Rat if frame == "world" else Rat @ Rb
        return _quat_to_rotvec(_matrix_to_quat(M))

    bshape = (-1,) + (1,) * (R.ndim - 3)
    h = np.diff(t)
    w = np.empty(R.shape[:-1])
    # interior: second-order non-uniform central difference of the relative
    # rotation vectors phi+ = log(R[i+1] R[i]^T), phi- = log(R[i-1] R[i]^T)
    hp, hm = h[1:].reshape(bshape + (1,)), h[:-1].reshape(bshape + (1,))
    phi_p = log_step(R[1:-1], R[2:])
    phi_m = log_step(R[1:-1], R[:-2])
    w[1:-1] = (hm**2 * phi_p - hp**2 * phi_m) / (hp * hm * (hp + hm))
    # ends: second-order one-sided differences
    for i0, i1, i2, sgn in ((0, 1, 2, 1.0), (-1, -2, -3, -1.0)):
        h1 = abs(t[i1] - t[i0])
        h2 = abs(t[i2] - t[i1])
        f1 = log_step(R[i0], R[i1])
        f2 = log_step(R[i0], R[i2])
        w[i0] = sgn * ((h1 + h2) / (h1 * h2) * f1 - h1 / (h2 * (h1 + h2)) * f2)
    return w


def angular_acceleration(R, *, rate=None, time=None, frame: str) -> np.ndarray:
    """Angular acceleration of a rotation-matrix time series by finite differences.

    Parameters
    ----------
    R : array_like, shape (n_frames, ..., 3, 3)
    rate, time : optional
        Sample rate (Hz) or sample times (s): exactly one, as in
        :func:`angular_velocity`.
    frame : {"local", "world"}
        Frame of the result, required (keyword-only), as in
        :func:`angular_velocity`.
        ``α_world = dω_world/dt`` and ``α_local = dω_local/dt = R^T α_world``.

    Returns
    -------
    alpha : ndarray, shape (n_frames, ..., 3)
        rad/s².

    Examples
    --------
    >>> from ahbm.kinematics.rotations import rot_x
    >>> t = np.linspace(0, 1, 201)
    >>> a = angular_acceleration(rot_x(t**2), time=t, frame="local")
    >>> np.allclose(a, [2.0, 0, 0])
    True
    """
    frame = _check_frame(frame)
    w = angular_velocity(R, rate=rate, time=time, frame=frame)
    t = sample_times(w.shape[0], rate=rate, time=time)
    return np.gradient(w, t, axis=0, edge_order=2)
