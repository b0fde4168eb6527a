"""Inverse model of the airbag load on the head (AHBM report §5.1.2).

From a recorded head and neck motion, the external load on the head is found
by inverse dynamics: with the passive neck elements known, the generalized
force the motion needs, minus gravity, inertia and the passive elements, is
``Jᵀ w``, the generalized force of the unknown head load ``w`` (force and
moment). A least-squares solve per frame recovers ``w``.

The report used recorded dummy responses; here the "recording" is synthetic:
a forward simulation of the 2-D head-neck model
(:mod:`ahbm.models.head_neck`) loaded by a known airbag force pulse on the
face (:func:`airbag_test`), which the estimate must reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
    as_positive_float,
    check_model,
    sample_times,
)
from ahbm.analysis.derivatives import central_difference
from ahbm.dynamics.cartesian_forces import BodyForce
from ahbm.dynamics.force_element import check_forces
from ahbm.dynamics.forces import total_generalized_force
from ahbm.dynamics.inverse import rnea
from ahbm.errors import DataError
from ahbm.kinematics.forward import body_jacobian, point_jacobian
from ahbm.kinematics.tree import Model
from ahbm.models.head_neck import half_sine, head_neck_model, intervertebral_elements
from ahbm.types import ResultRepr

__all__ = ["FACE_POINT", "HeadLoad", "airbag_force", "airbag_test", "estimate_head_load"]

#: Point of the airbag load in the head frame (the chin/face), m.
FACE_POINT = np.array([0.09, 0.0, -0.02])


def airbag_force(
    t, *, peak: float = 800.0, duration: float = 0.04, onset: float = 0.01, angle: float = 30.0
):
    """Airbag force on the face: a half-sine pulse pushing backwards and upwards.

    Parameters
    ----------
    t : float or array_like, shape (...)
        Time, s.
    peak : float, optional
        Peak force, N (default 0.8 kN; the report's loads are of the order of 1 kN).
    duration, onset : float, optional
        Pulse length and start, s.
    angle : float, optional
        Elevation of the force above the rearward horizontal, degrees.

    Returns
    -------
    ndarray, shape (..., 3)
        Force in the T1 frame, N: ``F(t) (−cos a, 0, sin a)``.

    Examples
    --------
    >>> airbag_force(0.03, angle=0.0).round(1)
    array([-800.,    0.,    0.])
    """
    mag = half_sine(t, peak=peak, duration=duration, onset=onset)
    a = np.radians(as_finite_float(angle, "angle", unit="degrees"))
    return mag[..., None] * np.array([-np.cos(a), 0.0, np.sin(a)])


def airbag_test(
    model: Model | None = None,
    *,
    t_end: float = 0.12,
    rate: float = 5000.0,
    force=airbag_force,
    point=FACE_POINT,
    rtol: float = 1e-5,
    atol: float = 1e-7,
):
    """Synthetic recording: the head-neck model (T1 at rest) hit by an airbag.

    Parameters
    ----------
    model : Model, optional
        A :func:`~ahbm.models.head_neck.head_neck_model`.
    t_end : float, optional
        Recording length, s.
    rate : float, optional
        Sample rate of the recording, Hz.
    force : callable, optional
        ``F(t) -> (3,)`` on the head at `point`, N (default :func:`airbag_force`).
    point : array_like, shape (3,), optional
        Application point in the head frame, m.
    rtol, atol : float, optional
        Tolerances of the Radau integrator.

    Returns
    -------
    SimulationResult
        Sampled at `rate`; ``result.q`` is the recorded motion.

    Examples
    --------
    >>> r = airbag_test(t_end=0.01, rate=1000.0)
    >>> r.q.shape
    (11, 8)
    """
    from ahbm.dynamics.simulation import simulate

    model = head_neck_model() if model is None else model
    check_model(model)
    t_end = as_positive_float(t_end, "t_end", unit="s")
    rate = as_positive_float(rate, "rate", unit="Hz")
    load = BodyForce("head", force, point=point, name="airbag")
    n = int(round(t_end * rate)) + 1
    t = np.arange(n) / rate
    z = np.zeros(model.nv)
    return simulate(model, (0.0, t[-1]), np.zeros(model.nq), z,
                    forces=[*intervertebral_elements(model), load], method="Radau",
                    rtol=rtol, atol=atol, t_eval=t)  # fmt: skip


@dataclass(frozen=True, repr=False)
class HeadLoad(ResultRepr):
    """External load on a body estimated by :func:`estimate_head_load` (a result object).

    Attributes
    ----------
    force : ndarray, shape (n, 3)
        Force, world (T1) frame, N.
    moment : ndarray, shape (n, 3)
        Moment about the application point, world frame, N m (zero unless
        requested; components the motion cannot reveal, e.g. out of plane,
        are returned as zero).
    residual : ndarray, shape (n,)
        Norm of the part of the generalized force that no load on the body
        explains, N m (large values flag loads elsewhere or bad data).
    """

    force: np.ndarray
    moment: np.ndarray
    residual: np.ndarray


def estimate_head_load(
    model: Model,
    q,
    *,
    rate=None,
    time=None,
    forces=(),
    body="head",
    point=FACE_POINT,
    qd=None,
    qdd=None,
    moment: bool = False,
) -> HeadLoad:
    """Estimate the external load on one body from recorded motion (inverse dynamics).

    Parameters
    ----------
    model : Model
    q : array_like, shape (n, nq)
        Recorded coordinates.
    rate : float, optional
        Sample rate, Hz. Give exactly one of `rate` and `time`.
    time : array_like, shape (n,), optional
        Sample times, s (increasing).
    forces : sequence of ForceElement, optional
        Known force elements (passive joints, base accelerations, ...).
    body : str or int, optional
        Body that carries the unknown load (default ``"head"``).
    point : array_like, shape (3,), optional
        Point of the body (body frame, m) about which the moment is given.
    qd, qdd : array_like, shape (n, nv), optional
        Velocities and accelerations; by default central differences of `q`
        (:func:`ahbm.analysis.central_difference`).
    moment : bool, optional
        Also estimate a moment about `point`. Off by default: a pure force at
        a known point is far better conditioned (in the head-neck chain a
        force along the neck and a moment produce nearly the same joint
        torques, so differentiation noise would be amplified).

    Returns
    -------
    HeadLoad

    Raises
    ------
    DataError
        Bad shapes or times.

    Notes
    -----
    The equations of motion ``H q̈ + C + g = τ_el + J_pᵀ F + J_ωᵀ M`` give,
    per frame, ``[J_ωᵀ  J_pᵀ] [M; F] = RNEA(q, q̇, q̈) − τ_el`` (``M = 0`` unless
    `moment`); it is solved
    in the least-squares (minimum-norm) sense with the pseudo-inverse (the
    inverse model of the airbag load of AHBM §5.1.2; the report does not
    print its method, the pseudo-inverse is ahbm's).

    Examples
    --------
    >>> m = head_neck_model()
    >>> t = np.linspace(0, 0.01, 11)
    >>> est = estimate_head_load(m, np.zeros((11, 8)), time=t)
    >>> est.force.shape
    (11, 3)
    """
    check_model(model)
    q = as_float_array(q, "q")
    if q.ndim != 2 or q.shape[1] != model.nq:
        raise DataError(f"Expected `q` to have shape (n, {model.nq}), got {q.shape}")
    t = sample_times(q.shape[0], rate=rate, time=time)
    if model.nq != model.nv:
        raise DataError("estimate_head_load needs a model without quaternion joints (nq == nv)")
    qd = central_difference(q, time=t) if qd is None else as_float_array(qd, "qd")
    qdd = central_difference(q, time=t, order=2) if qdd is None else as_float_array(qdd, "qdd")
    point = as_float_array(point, "point")
    tau = rnea(model, q, qd, qdd)
    forces = check_forces(forces)
    if forces:
        tau = tau - total_generalized_force(model, forces, q, qd, t=t)
    Jp = point_jacobian(model, q, body, point)  # (n, 3, nv)
    Jw = body_jacobian(model, q, body, frame="world")[..., :3, :]  # (n, 3, nv)
    cols = [np.swapaxes(Jw, -1, -2)] if moment else []
    A = np.concatenate([*cols, np.swapaxes(Jp, -1, -2)], axis=-1)
    w = np.einsum("nij,nj->ni", np.linalg.pinv(A, rcond=1e-10), tau)
    resid = np.linalg.norm(np.einsum("nij,nj->ni", A, w) - tau, axis=-1)
    M = w[:, :3] if moment else np.zeros((t.size, 3))
    return HeadLoad(w[:, -3:], M, resid)
