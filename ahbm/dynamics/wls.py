"""Weighted-least-squares inverse dynamics of floating-base models.

With force plates, the inverse dynamics of a floating-base model is
overdetermined: the six equations of the unactuated base
``M_u(q) q̈ + h_u(q, q̇) − Σ_c J_c,uᵀ w_c = 0`` hold only for perfect data,
and the measured ground reactions ``w_c`` and the accelerations ``q̈`` from
motion capture never satisfy them exactly (the "residual force and moment"
of gait analysis). Simonidis et al. (2011, §5, eqs 27–32) fuse both
measurements by weighted least squares. :func:`inverse_dynamics_wls` finds
the smallest corrections of the ground reactions ``δw_c`` and (optionally)
of the accelerations ``δq̈``, in the norm given by the weights, that satisfy
the base equations, then the joint torques from the corrected data:

``min Σ_c δw_cᵀ W_c δw_c + δq̈ᵀ W_a δq̈ + ρᵀ W_r ρ``
``s.t. r_u + M_u δq̈ − Σ_c J_c,uᵀ δw_c = ρ``

where ``r = rnea(q, q̇, q̈, f_ext=grf)`` is the classical inverse dynamics
with the measured reactions and ``ρ`` a residual that is left in the base
equations (none with the default ``W_r = ∞``). The joint torques follow
from the same linear map, ``τ = r_a + M_a δq̈ − Σ_c J_c,aᵀ δw_c``
(``= rnea(q, q̇, q̈ + δq̈, f_ext=grf + δw)``, actuated rows).

Weights are inverse variances (1/N², 1/(N m)², s⁴/rad²): a larger weight
trusts a measurement more. ``inf`` fixes it (no correction), ``0`` means
"no measurement": the quantity is free. With no plate (``grf=None``) the
ground reactions of the contact bodies are free, and the base equations give
them from the kinematics alone: Chung's (2009, §7.3, eq. 7.7) two-part
algorithm (inverse dynamics without ground reaction; the generalized forces
of the base are the ground reaction; inverse dynamics again with it).
:func:`transition_shares` gives the shares that split an unmeasured reaction
smoothly between the feet in double support, and
:func:`inverse_dynamics_wls_tracking` integrates the solution forward under a
tracking law (Simonidis eq. 33) so that the motion itself is dynamically
consistent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._engine.arrays import cross
from ahbm._internal.validation import as_float_array, as_positive_float, check_model, sample_times
from ahbm.dynamics.forward import crba
from ahbm.dynamics.inverse import rnea
from ahbm.errors import DataError
from ahbm.kinematics.configuration import difference_q, integrate_q
from ahbm.kinematics.forward import body_jacobian, forward_kinematics
from ahbm.kinematics.joints import FREE, FREE_EULER
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "WLSResult",
    "WLSTrackingResult",
    "inverse_dynamics_wls",
    "inverse_dynamics_wls_tracking",
    "transition_shares",
]

#: Relative singular-value cut-off of the pseudo-inverses (rank decisions).
_RCOND = 1e-10
_KEYS = ("grf", "qdd", "residual")


@dataclass(frozen=True, repr=False)
class WLSResult(ResultRepr):
    """Result of :func:`inverse_dynamics_wls` (batch axes first, SI units).

    Attributes
    ----------
    tau : ndarray, shape (..., nv)
        Generalized forces from the corrected data,
        ``rnea(q, q̇, qdd, f_ext=grf)``: the joint torques on the actuated
        coordinates and the base residual that is left (``residual``) on the
        unactuated ones.
    grf : ndarray, shape (..., n_bodies, 6)
        Corrected external forces on the bodies (measured + correction),
        world frame, ``[moment about the world origin; force]`` as ``f_ext``
        of :func:`~ahbm.dynamics.rnea`.
    grf_correction : ndarray, shape (..., n_bodies, 6)
        ``grf − measured`` in the same convention.
    qdd : ndarray, shape (..., nv)
        Corrected accelerations.
    qdd_correction : ndarray, shape (..., nv)
        ``qdd − measured``.
    residual : ndarray, shape (..., n_unactuated)
        Base residual of the corrected data (zero unless ``weights["residual"]``
        is finite or nothing could be corrected).
    residual_before : ndarray, shape (..., n_unactuated)
        Base residual of the measured data (classical inverse dynamics).
    unactuated : ndarray of int, shape (n_unactuated,)
        Velocity indices of the base equations.
    """

    tau: np.ndarray
    grf: np.ndarray
    grf_correction: np.ndarray
    qdd: np.ndarray
    qdd_correction: np.ndarray
    residual: np.ndarray
    residual_before: np.ndarray
    unactuated: np.ndarray


@dataclass(frozen=True, repr=False)
class WLSTrackingResult(ResultRepr):
    """Result of :func:`inverse_dynamics_wls_tracking` (frames first, SI units).

    Attributes
    ----------
    q : ndarray, shape (n_frames, nq)
        Tracked (dynamically consistent) coordinates.
    qd : ndarray, shape (n_frames, nv)
        Tracked velocities.
    qdd_command : ndarray, shape (n_frames, nv)
        Accelerations asked by the tracking law (Simonidis eq. 33) before the
        WLS correction.
    wls : WLSResult
        The weighted-least-squares solution at the tracked states: ``wls.qdd``
        are the accelerations that were integrated, ``wls.tau`` the torques.
    """

    q: np.ndarray
    qd: np.ndarray
    qdd_command: np.ndarray
    wls: WLSResult


def _unactuated(model: Model, unactuated) -> np.ndarray:
    if unactuated is None:
        if model.n_bodies == 0 or model.joint_codes[0] not in (FREE, FREE_EULER):
            raise DataError(
                "the model has no floating base (its first joint is not 'free' or "
                "'free_euler'); pass `unactuated=` with the velocity indices of the "
                "unactuated coordinates (e.g. range(6) for a 3P+3R DH base)"
            )
        return np.arange(int(model.v_index[0]), int(model.v_index[0]) + 6)
    idx = as_float_array(unactuated, "unactuated").reshape(-1)
    if idx.size == 0 or np.any(idx != np.round(idx)) or np.any((idx < 0) | (idx >= model.nv)):
        raise DataError(
            f"`unactuated` must list velocity indices in [0, {model.nv}), got {unactuated!r:.80}"
        )
    idx = idx.astype(int)
    if len(set(idx.tolist())) != idx.size:
        raise DataError("`unactuated` lists an index twice")
    return idx


def _weight(weights, key, default, shape, what):
    value = weights.get(key, default)
    w = as_float_array(value, f'weights["{key}"]', allow_nan=True)
    if np.any(np.isnan(w)) or np.any(w < 0):
        raise DataError(f'`weights["{key}"]` must be >= 0 (inf: exact, 0: unknown), got {value!r}')
    try:
        return np.broadcast_to(w, shape)
    except ValueError as err:
        raise DataError(
            f'`weights["{key}"]` of shape {w.shape} does not broadcast to {what} {shape}'
        ) from err


def _contact(model, contact, grf, batch):
    """Contact shares (N, n_bodies) >= 0; 0 where no ground reaction acts."""
    nb = model.n_bodies
    if contact is None:
        if grf is None:
            raise DataError(
                "`grf` is None and no `contact` is given; pass contact=[body names] "
                "(the bodies on the ground) to estimate the ground reaction from the kinematics"
            )
        return np.any(grf != 0, axis=2).astype(float)  # per frame
    if isinstance(contact, str) or (
        isinstance(contact, (list, tuple)) and all(isinstance(c, (str, int)) for c in contact)
        and not all(isinstance(c, bool) for c in contact)
    ):  # fmt: skip
        names = [contact] if isinstance(contact, str) else list(contact)
        s = np.zeros((1, nb))
        for c in names:
            try:
                s[0, model.body_index(c)] = 1.0
            except Exception as err:  # ModelError: unknown body
                raise DataError(f"`contact`: {err}") from err
        return s
    s = as_float_array(contact, "contact")
    if s.shape[-1:] != (nb,) or np.any(s < 0):
        raise DataError(
            f"`contact` must be body names or an array (..., {nb}) of shares >= 0 (True/1 "
            f"where the body is on the ground), got shape {s.shape}"
        )
    try:
        return np.broadcast_to(s, batch + (nb,)).reshape(-1, nb)
    except ValueError as err:
        raise DataError(
            f"batch shape of `contact` {s.shape[:-1]} does not broadcast to that of q {batch}"
        ) from err


def _pinv(a):
    return np.linalg.pinv(a, rcond=_RCOND)


def _solve(G, r, w, share):
    """Minimum-weighted-norm corrections ``x`` (N, n) with ``r + G x = 0`` where possible.

    ``G`` (N, m, n), ``r`` (N, m), weights ``w`` (N, n) (inf: fixed, 0: free),
    ``share`` (N, n) of the free variables. The free variables take what they
    can (their least norm ``Σ x²/share``); the weighted ones the rest
    (``min Σ w x²``); what neither can take stays in ``r + G x``.
    """
    m = G.shape[1]
    free = (w == 0) & (share > 0)
    s = np.where(free, np.sqrt(np.where(free, share, 0.0)), 0.0)
    GF = G * s[:, None, :]
    GFp = _pinv(GF)  # (N, n, m)
    Pi = np.eye(m) - GF @ GFp  # projector on what the free variables cannot produce
    winv = np.where(np.isfinite(w) & (w > 0), 1.0 / np.where(w > 0, w, 1.0), 0.0)
    A = Pi @ G
    S = (A * winv[:, None, :]) @ np.swapaxes(A, 1, 2)
    lam = (_pinv(S) @ (Pi @ r[..., None]))[..., 0]
    x = -winv * np.einsum("nmk,nm->nk", A, lam)
    x_free = -s * np.einsum("nkm,nm->nk", GFp, r + np.einsum("nmk,nk->nm", G, x))
    return x + x_free


def inverse_dynamics_wls(
    model: Model,
    q,
    qd,
    qdd,
    grf,
    *,
    weights=None,
    contact=None,
    unactuated=None,
) -> WLSResult:
    """Inverse dynamics of a floating-base model fusing kinematics and ground reactions.

    Parameters
    ----------
    model : Model
        A floating-base model (first joint ``free`` or ``free_euler``), or
        any model with ``unactuated`` given.
    q : array_like, shape (..., nq)
    qd, qdd : array_like, shape (..., nv), or None (zeros)
        Measured state, e.g. a whole trial (batch axes first).
    grf : array_like, shape (..., n_bodies, 6), or None
        Measured external forces on the bodies (e.g. ``assign_force_plates(...).f_ext``),
        world frame, ``[moment about the world origin; force]`` (``f_ext`` of
        :func:`~ahbm.dynamics.rnea`). None: no force plate; the ground
        reaction on the ``contact`` bodies is found from the kinematics.
    weights : dict, optional
        Inverse variances of the measurements (module docstring); each value
        a scalar or an array that broadcasts to the shape given:

        * ``"grf"`` (..., n_bodies, 6): of the ground reaction on each
          contact body, as the wrench ``[moment about the body origin;
          force]`` in world axes. Default 1 with ``grf``, 0 (unknown)
          without.
        * ``"qdd"`` (..., nv): of the accelerations. Default ``inf``: the
          accelerations are not corrected.
        * ``"residual"`` (..., n_unactuated): of a residual left in the base
          equations. Default ``inf``: none.

        ``inf`` means exact (no correction), 0 unknown (free).
    contact : sequence of str or int, or array_like (..., n_bodies), optional
        Bodies whose ground reaction may be corrected (on the ground), as
        names, or as shares ``>= 0`` per frame (0: not on the ground).
        Default: in each frame, the bodies with a non-zero ``grf`` (a body
        with no measured load in a frame is not corrected there). The shares
        set the *distribution rule* of a ground reaction with no measurement
        (weight 0) between several contact bodies (double support): the
        least-norm rule ``min Σ_c ‖w_c‖² / s_c`` (Notes); they do not change
        the weights of measured reactions.
    unactuated : sequence of int, optional
        Velocity indices of the base equations; default the six of the
        first (free) joint.

    Returns
    -------
    WLSResult
        Torques, corrected ground reactions and accelerations, corrections,
        residuals before and after.

    Raises
    ------
    DataError
        Bad shapes, negative or NaN weights, unknown contact bodies, a model
        without a floating base and no ``unactuated``.

    Notes
    -----
    Per frame, with ``x = [δw (6 per contact body); δq̈ (nv); ρ]`` and
    ``G = [−J_c,uᵀ …, M_u, −I]`` (``J_c``: Jacobian of the angular velocity
    and of the velocity of the origin of body ``c``, world axes), the
    corrections solve ``min xᵀ W x`` s.t. ``G x = −r_u``:
    ``x = −W⁻¹ Gᵀ (G W⁻¹ Gᵀ)⁺ r_u``. With one contact body, ``W⁻¹`` the
    block-diagonal covariance of the plate and of the accelerations, this is
    Simonidis et al.'s (2011) estimate ``T = (Aᵀ W⁻¹ A)⁻¹ Aᵀ W⁻¹ b`` of
    eq. 32 (``A = [I_c; M⁻¹]``, ``b = [I_c Σ Jᵀ F; q̈ − M⁻¹ Q]``, eqs 29–31),
    with its second step (distributing ``T`` over the contacts with minimum
    variance) in the same solve. Quantities with weight 0 are solved first
    (they take whatever part of ``r_u`` they can, least-norm), those with
    finite weights take the rest. Consistent data (``r_u = 0``) give zero
    corrections for any weights: with ``W = I`` the result is the classical
    inverse dynamics.

    *Two-part algorithm* (Chung 2009, §7.3, eq. 7.7): with ``grf=None`` and
    one contact body, ``J_c,uᵀ`` is invertible (a free base), so the
    reaction is ``δw = J_c,u⁻ᵀ r_u``: the base's generalized forces of the
    inverse dynamics without ground reaction, moved to the contact body; the
    torques are those of the inverse dynamics with it.

    *Double support* (two contact bodies, no plate): the base equations fix
    the total reaction but not its distribution. The rule used is the
    weighted least norm ``min Σ_c ‖w_c‖²/s_c`` (wrench about each body's
    origin, N and N m): the minimum-variance split when the feet's reactions
    are independent with variances proportional to ``s_c``, the same rule as
    Simonidis' second pseudo-inverse step. It needs no gait events and is
    continuous as long as the shares are; equal shares split the total
    equally between the feet. A smooth transition (Ren et al. 2008: the
    trailing foot's share falls to zero over double support) is obtained by
    passing shares that vary over the phase: :func:`transition_shares` makes
    them from the contact flags of the feet.

    Examples
    --------
    >>> from ahbm.models import human15
    >>> from ahbm.dynamics import aba
    >>> from ahbm.kinematics import neutral_q
    >>> m = human15(height=1.8, mass=75.0)
    >>> rng = np.random.default_rng(0)
    >>> q = neutral_q(m); q[2] = 1.0  # pelvis 1 m up
    >>> qd = rng.normal(size=m.nv) * 0.1
    >>> f = np.zeros((m.n_bodies, 6)); f[11, 5] = 700.0  # 700 N on the right foot
    >>> qdd = aba(m, q, qd, np.r_[np.zeros(6), rng.normal(size=m.nv - 6)], f_ext=f)
    >>> res = inverse_dynamics_wls(m, q, qd, qdd, None, contact=["foot_r"])
    >>> np.round(res.grf[11, 3:], 6)  # the reaction from the kinematics alone
    array([  0.,   0., 700.])
    """
    check_model(model)
    data = _prepare(model, q, qd, qdd, grf, weights, contact, unactuated)
    q = data["q"]
    batch = q.shape[:-1]
    out = _core(model, data, q.reshape(-1, model.nq), data["qd"], data["qdd"])
    return _result(out, batch, model, data["u"])


def _prepare(model, q, qd, qdd, grf, weights, contact, unactuated) -> dict:
    """Validate the arguments of the WLS functions; arrays flattened to (N, ...)."""
    weights = {} if weights is None else weights
    if not isinstance(weights, dict):
        raise DataError(f"`weights` must be a dict with keys {_KEYS}, got {weights!r:.80}")
    unknown = sorted(set(weights) - set(_KEYS))
    if unknown:
        raise DataError(f"`weights` has unknown keys {unknown}; known: {list(_KEYS)}")
    u = _unactuated(model, unactuated)
    nb, nv, nu = model.n_bodies, model.nv, u.size
    q = as_float_array(q, "q")
    rnea(model, q, qd, qdd)  # validates the state (shapes, finite values, quaternions)
    batch = q.shape[:-1]
    N = int(np.prod(batch, dtype=int))

    def flat(x, name):
        x = np.zeros(batch + (nv,)) if x is None else as_float_array(x, name)
        try:
            x = np.broadcast_to(x, batch + (nv,))
        except ValueError as err:
            raise DataError(
                f"batch shape of `{name}` {x.shape[:-1]} does not broadcast to that of q {batch}"
            ) from err
        return np.ascontiguousarray(x.reshape(N, nv))

    if grf is None:
        g = None
    else:
        g = as_float_array(grf, "grf")
        if g.shape[-2:] != (nb, 6):
            raise DataError(f"Expected `grf` to have shape (..., {nb}, 6), got {g.shape}")
        try:
            g = np.broadcast_to(g, batch + (nb, 6)).reshape(N, nb, 6)
        except ValueError as err:
            raise DataError(
                f"batch shape of `grf` {g.shape[:-2]} does not broadcast to that of q {batch}"
            ) from err
    share = np.broadcast_to(_contact(model, contact, g, batch), (N, nb))
    w_grf = _weight(
        weights, "grf", 0.0 if grf is None else 1.0, batch + (nb, 6), "(..., n_bodies, 6)"
    )
    w_qdd = _weight(weights, "qdd", np.inf, batch + (nv,), "(..., nv)")
    w_res = _weight(weights, "residual", np.inf, batch + (nu,), "(..., n_unactuated)")
    return {
        "q": q,
        "qd": flat(qd, "qd"),
        "qdd": flat(qdd, "qdd"),
        "grf": np.zeros((N, nb, 6)) if g is None else np.ascontiguousarray(g),
        "has_grf": g is not None,
        "share": share,
        "w_grf": w_grf.reshape(N, nb, 6),
        "w_qdd": w_qdd.reshape(N, nv),
        "w_res": w_res.reshape(N, nu),
        "u": u,
    }


def _core(model, data, q, qd, qdd, frames=slice(None)) -> dict:
    """The WLS solve for frames ``frames`` of ``data`` at the state q, qd, qdd (n, ...)."""
    nb, nv = model.n_bodies, model.nv
    u = data["u"]
    nu = u.size
    g = data["grf"][frames]
    N = q.shape[0]
    r = rnea(model, q, qd, qdd, f_ext=g if data["has_grf"] else None).reshape(N, nv)
    share = data["share"][frames]
    bodies = np.flatnonzero(np.any(share > 0, axis=0))
    nc = bodies.size
    w_grf = data["w_grf"][frames][:, bodies]  # (N, nc, 6)
    # variables: x = [δw (nc*6); δq̈ (nv); ρ (nu)]
    H = crba(model, q)  # (N, nv, nv)
    kin = forward_kinematics(model, q)
    J = np.stack(
        [body_jacobian(model, None, int(b), frame="local_world_aligned", kin=kin) for b in bodies],
        axis=1,
    ).reshape(N, nc, 6, nv) if nc else np.zeros((N, 0, 6, nv))  # fmt: skip
    G = np.concatenate(
        [
            -np.swapaxes(J[:, :, :, u], 2, 3).transpose(0, 2, 1, 3).reshape(N, nu, 6 * nc),
            H[:, u, :],
            -np.broadcast_to(np.eye(nu), (N, nu, nu)),
        ],
        axis=2,
    )
    sh_c = share[:, bodies]  # (N, nc)
    w = np.concatenate(
        [
            np.where(sh_c[..., None] > 0, w_grf, np.inf).reshape(N, 6 * nc),
            data["w_qdd"][frames],
            data["w_res"][frames],
        ],
        axis=1,
    )
    s = np.concatenate([np.repeat(sh_c, 6, axis=1), np.ones((N, nv)), np.ones((N, nu))], axis=1)
    x = _solve(G, r[:, u], w, s)
    dw = x[:, : 6 * nc].reshape(N, nc, 6)
    dqdd = x[:, 6 * nc : 6 * nc + nv]
    tau = r + np.einsum("nij,nj->ni", H, dqdd) - np.einsum("ncjk,ncj->nk", J, dw)
    # corrections in the f_ext convention: moment about the world origin
    pos = kin.positions.reshape(N, nb, 3)[:, bodies]
    dg = np.zeros((N, nb, 6))
    dg[:, bodies, 3:] = dw[..., 3:]
    dg[:, bodies, :3] = dw[..., :3] + cross(pos, dw[..., 3:])
    return {
        "tau": tau,
        "grf": g + dg,
        "grf_correction": dg,
        "qdd": qdd + dqdd,
        "qdd_correction": dqdd,
        "residual": tau[:, u],
        "residual_before": r[:, u],
    }


def _result(out: dict, batch: tuple, model, u) -> WLSResult:
    nb, nv, nu = model.n_bodies, model.nv, u.size
    shapes = {"grf": (nb, 6), "grf_correction": (nb, 6), "residual": (nu,),
              "residual_before": (nu,)}  # fmt: skip
    return WLSResult(
        **{k: v.reshape(batch + shapes.get(k, (nv,))) for k, v in out.items()}, unactuated=u
    )


def inverse_dynamics_wls_tracking(
    model: Model,
    q,
    qd,
    qdd,
    grf,
    *,
    rate=None,
    time=None,
    omega: float = 20.0,
    weights=None,
    contact=None,
    unactuated=None,
) -> WLSTrackingResult:
    """WLS inverse dynamics integrated forward with a tracking law (dynamically consistent).

    Parameters
    ----------
    model : Model
    q : array_like, shape (n_frames, nq)
    qd, qdd : array_like, shape (n_frames, nv), or None (zeros)
        Measured motion (time axis first).
    grf : array_like, shape (n_frames, n_bodies, 6), or None
        Measured external forces (see :func:`inverse_dynamics_wls`).
    rate, time : optional
        Exactly one: sampling rate (Hz) or sample times (s).
    omega : float, optional
        Natural frequency of the critically damped tracking law, rad/s:
        ``K_p = ω² I``, ``K_v = 2 ω I``. Must satisfy ``ω Δt <= 1``. Default 20.
    weights, contact, unactuated
        As in :func:`inverse_dynamics_wls` (per frame where arrays).

    Returns
    -------
    WLSTrackingResult
        Tracked states, commanded accelerations and the WLS solution of
        every frame.

    Raises
    ------
    DataError
        As :func:`inverse_dynamics_wls`; a state that is not a trial
        ``(n_frames, nq)``; bad times; ``ω Δt > 1``.

    Notes
    -----
    Simonidis et al. (2011, eq. 33) make the WLS solution dynamically
    consistent by integrating it forward under a tracking law. From the
    measured first state, each frame ``k`` commands

    ``q̈_c = q̈_m + K_v (q̇_m − q̇) + K_p (q_m ⊖ q)``

    (the printed eq. 33 has the opposite sign of the errors, which needs
    negative gains; ``⊖`` is :func:`~ahbm.kinematics.difference_q`), corrects
    it with :func:`inverse_dynamics_wls` (``q̈ = q̈_c + δq̈``) and integrates
    by semi-implicit Euler, ``q̇_{k+1} = q̇_k + Δt q̈_k``,
    ``q_{k+1} = q_k ⊕ Δt q̇_{k+1}`` (:func:`~ahbm.kinematics.integrate_q`).
    The tracked motion is then exactly the integral of the accelerations
    whose torques and ground reactions satisfy the equations of motion. It
    needs acceleration weights (``weights["qdd"]``, default ``inf``: the
    commanded accelerations are then kept and only the reactions are
    corrected). A loop over frames (the integration is sequential).

    Examples
    --------
    >>> from ahbm.models import human15
    >>> from ahbm.kinematics import neutral_q
    >>> m = human15(height=1.8, mass=75.0)
    >>> q = np.tile(neutral_q(m), (5, 1)); q[:, 2] = 1.0  # standing still
    >>> res = inverse_dynamics_wls_tracking(m, q, None, None, None, rate=100.0,
    ...                                     contact=["foot_r", "foot_l"])
    >>> float(np.abs(res.q - q).max()), res.wls.tau.shape
    (0.0, (5, 38))
    """
    check_model(model)
    data = _prepare(model, q, qd, qdd, grf, weights, contact, unactuated)
    qm = data["q"]
    if qm.ndim != 2:
        raise DataError(f"Expected `q` to be a trial of shape (n_frames, nq), got {qm.shape}")
    n = qm.shape[0]
    t = sample_times(n, rate=rate, time=time)
    w = as_positive_float(omega, "omega", unit="rad/s")
    dt = np.diff(t)
    if dt.size and w * dt.max() > 1.0:
        raise DataError(
            f"`omega` = {w} rad/s is too high for the time step {dt.max():.4g} s "
            f"(need omega * dt <= 1): lower omega or sample faster"
        )
    qdm, qddm = data["qd"], data["qdd"]
    q_t, qd_t = np.empty_like(qm), np.empty_like(qdm)
    command = np.empty_like(qddm)
    outs = []
    qk, qdk = qm[0].copy(), qdm[0].copy()
    for k in range(n):  # sequential: each state is the integral of the previous ones
        q_t[k], qd_t[k] = qk, qdk
        e = difference_q(model, qk, qm[k])
        command[k] = qddm[k] + 2 * w * (qdm[k] - qdk) + w * w * e
        out = _core(model, data, qk[None], qdk[None], command[k][None], slice(k, k + 1))
        outs.append(out)
        if k + 1 < n:
            qdk = qdk + dt[k] * out["qdd"][0]
            qk = integrate_q(model, qk, qdk, dt[k])
    joined = {key: np.concatenate([o[key] for o in outs]) for key in outs[0]}
    return WLSTrackingResult(
        q=q_t, qd=qd_t, qdd_command=command, wls=_result(joined, (n,), model, data["u"])
    )


def transition_shares(contact) -> np.ndarray:
    """Shares of the ground reaction that move smoothly from foot to foot in double support.

    Parameters
    ----------
    contact : array_like of bool, shape (n_frames, n_bodies)
        True where a body is on the ground (uniformly sampled frames).

    Returns
    -------
    ndarray, shape (n_frames, n_bodies)
        Shares for ``inverse_dynamics_wls(..., contact=shares)``, 0 off the
        ground and 1 on it, except where contacts overlap: a body that lands
        while others are on the ground (the leading foot) rises from 0
        towards 1 by a cosine ramp over the frames in which those others stay;
        a body that leaves while others stay (the trailing foot) falls from 1
        towards 0 over the frames in which they are already on the ground.

    Raises
    ------
    DataError
        If ``contact`` is not a 2-D array.

    Notes
    -----
    With ``u_k = (1 − cos(π (k + 1) / (L + 1))) / 2`` over the ``L`` frames
    ``k`` of an overlap, the leading share is ``u_k`` and the trailing share
    ``1 − u_k`` (strictly between 0 and 1, so both feet stay in contact); a
    body that lands and leaves during others' contact gets the product.
    It follows the smooth transition assumption of Ren, Jones & Howard (2008)
    (the trailing foot's load falls to zero over double support) for the
    least-norm distribution of :func:`inverse_dynamics_wls`; the ramp is a
    choice of ours, not Ren et al.'s functions.

    Examples
    --------
    >>> c = np.array([[1, 0], [1, 1], [1, 1], [1, 1], [0, 1]], bool)
    >>> transition_shares(c).round(3)
    array([[1.   , 0.   ],
           [0.854, 0.146],
           [0.5  , 0.5  ],
           [0.146, 0.854],
           [0.   , 1.   ]])
    """
    c = as_float_array(contact, "contact")
    if c.ndim != 2:
        raise DataError(f"Expected `contact` to have shape (n_frames, n_bodies), got {c.shape}")
    c = c != 0
    n, nb = c.shape
    shares = c.astype(float)

    def ramp(length):
        return (1 - np.cos(np.pi * np.arange(1, length + 1) / (length + 1))) / 2

    def overlap(frames, others):
        """Number of leading `frames` in which one of the `others` is on the ground."""
        on = c[frames][:, others].any(axis=1)
        return int(on.size if on.all() else np.argmin(on))

    for b in range(nb):  # a loop over bodies and their contact intervals, not frames
        edges = np.flatnonzero(np.diff(np.r_[0, c[:, b].astype(int), 0]))
        others = np.arange(nb) != b
        for start, end in zip(edges[::2], edges[1::2], strict=True):
            if start > 0 and (before := c[start - 1] & others).any():  # landing: ramp up
                k = overlap(np.arange(start, end), before)
                shares[start : start + k, b] *= ramp(k)
            if end < n and (after := c[end] & others).any():  # leaving: ramp down
                k = overlap(np.arange(end - 1, start - 1, -1), after)
                shares[end - k : end, b] *= 1 - ramp(k)
    return shares
