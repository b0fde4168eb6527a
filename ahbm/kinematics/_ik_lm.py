"""The Levenberg–Marquardt iterations of :func:`~ahbm.kinematics.ik.fit_markers`.

Blocks of frames are solved together (one damped Gauss–Newton system per
frame, bounds by projection), each block warm-started from the frames
already solved.

References
----------
Marquardt, D. W. (1963). An algorithm for least-squares estimation of
nonlinear parameters. J. SIAM 11(2), 431-441.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine import state as _st
from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError
from ahbm.kinematics.configuration import difference_q, integrate_q
from ahbm.kinematics.marker_model import _solve_step, _v_to_q_index

__all__: list[str] = []


def _coordinate_tasks(model, v2q, n_frames, targets, weights):
    """Coordinate targets and weights per frame on the velocity axis: (n_frames, nv) x 2."""
    if targets is None:
        if weights:
            raise DataError("`coordinate_weights` given without `coordinate_targets`")
        return None, None
    if not isinstance(targets, dict):
        raise DataError("`coordinate_targets` must be a dict: coordinate name -> target(s)")
    weights = {} if weights is None else dict(weights)
    names = model.coordinate_names
    unknown = [k for k in list(targets) + list(weights) if k not in names]
    if unknown:
        raise DataError(
            f"`coordinate_targets`/`coordinate_weights` name unknown coordinate(s) {unknown}; "
            f"model coordinates: {names}"
        )
    CT = np.zeros((n_frames, model.nv))
    CW = np.zeros((n_frames, model.nv))
    for name, value in targets.items():
        qi = names.index(name)
        hits = np.nonzero(v2q == qi)[0]
        if hits.size == 0:
            raise DataError(
                f"coordinate '{name}' is a quaternion component and cannot have a target"
            )
        w = float(weights.get(name, 1.0))
        if not np.isfinite(w) or w < 0:
            raise DataError(f"`coordinate_weights['{name}']` must be finite and >= 0, got {w}")
        v = as_float_array(value, f"coordinate_targets['{name}']", allow_nan=True)
        try:
            v = np.broadcast_to(v, (n_frames,))
        except ValueError as err:
            raise DataError(
                f"`coordinate_targets['{name}']` must be a scalar or have shape ({n_frames},), "
                f"got {v.shape}"
            ) from err
        ok = np.isfinite(v)
        CT[:, hits[0]] = np.where(ok, v, 0.0)
        CW[:, hits[0]] = np.where(ok, w, 0.0)
    return CT, CW


def _support_mask(model, bodies) -> np.ndarray:
    """(m, nv) 1 where velocity coordinate k moves the body of marker i (cached)."""
    key = ("ahbm.kinematics.ik.support_mask", bodies.tobytes())
    mask = model.cache.get(key)
    if mask is None:
        mask = np.zeros((len(bodies), model.nv))
        for i, b in enumerate(bodies):
            mask[i, model.support_dofs[b]] = 1.0
        model.cache[key] = mask
    return mask


def _markers_batch(kin, bodies, local):
    """Marker positions (B, m, 3) and Jacobians (B, m, 3, nv), batch first, in one pass.

    ``p = R_b r + o_b`` and ``J = (J_v − p × J_ω) · support`` with the world
    columns ``[J_ω; J_v]`` of the state (the rows of
    :func:`ahbm.kinematics.marker_model._positions_jacobians`, without a loop over bodies).
    """
    R = kin.rotations[:, bodies]
    P = np.einsum("nmij,mj->nmi", R, local) + kin.positions[:, bodies]
    Sw = kin.world_columns
    w = Sw[:, None, :3, :]  # (B, 1, 3, nv)
    p = P[:, :, :, None]  # (B, m, 3, 1)
    J = np.empty(P.shape + (Sw.shape[-1],))
    J[:, :, 0] = p[:, :, 1] * w[:, :, 2] - p[:, :, 2] * w[:, :, 1]
    J[:, :, 1] = p[:, :, 2] * w[:, :, 0] - p[:, :, 0] * w[:, :, 2]
    J[:, :, 2] = p[:, :, 0] * w[:, :, 1] - p[:, :, 1] * w[:, :, 0]
    J = (Sw[:, None, 3:, :] - J) * _support_mask(kin.model, bodies)[None, :, None, :]
    return P, J


def _lm_terms(model, Qb, X, W, bodies, local, coord, v2q, cons=None):
    """Cost, Gauss-Newton matrix JᵀWJ, gradient JᵀWr of frames Qb (B, nq), damping diagonal.

    The damping diagonal is diag(H) without the constraint penalty.
    """
    kin = _st.compute(model, Qb, columns=True)
    P, J = _markers_batch(kin, bodies, local)
    B, m = W.shape
    r = (P - X).reshape(B, 3 * m)
    J = J.reshape(B, 3 * m, -1)
    w3 = np.repeat(W, 3, axis=1)
    cost = np.einsum("bk,bk->b", w3 * r, r)
    JwT = np.swapaxes(J * w3[:, :, None], 1, 2)
    H = JwT @ J
    g = (JwT @ r[:, :, None])[:, :, 0]
    if coord is not None:
        CT, CW = coord
        rc = np.where(v2q >= 0, Qb[:, np.maximum(v2q, 0)], 0.0) - CT
        cost = cost + np.einsum("bv,bv->b", CW, rc * rc)
        H = H + CW[:, :, None] * np.eye(model.nv)
        g = g + CW * rc
    D = np.einsum("bii->bi", H)
    if cons is not None:
        func, wc = cons
        phi, G = func(kin)
        phi = np.asarray(phi, dtype=float).reshape(B, -1)
        G = np.asarray(G, dtype=float).reshape(B, phi.shape[1], -1)
        GT = np.swapaxes(G, 1, 2)
        cost = cost + wc * np.einsum("bk,bk->b", phi, phi)
        H = H + wc * (GT @ G)
        g = g + wc * (GT @ phi[:, :, None])[:, :, 0]
        # coordinates that only the penalty moves (no marker, no task) are damped by a
        # small part of its diagonal; else a rank-deficient penalty makes the step singular
        unseen = D <= 1e-12 * D.max(axis=1, keepdims=True)
        D = np.where(unseen, 1e-8 * wc * np.einsum("bkv,bkv->bv", G, G), D)
    return cost, H, g, D


def _at_bounds(Qb, bnd):
    """Masks (B, nv) of coordinates at their lower / upper bound."""
    lower, upper, lo_v, hi_v, v2q, bounded = bnd[:6]
    eps_lo = 1e-12 * (1.0 + np.abs(np.where(np.isfinite(lo_v), lo_v, 0.0)))
    eps_hi = 1e-12 * (1.0 + np.abs(np.where(np.isfinite(hi_v), hi_v, 0.0)))
    qv = np.where(v2q >= 0, Qb[:, np.maximum(v2q, 0)], 0.0)
    return qv <= lo_v + eps_lo, qv >= hi_v - eps_hi


def _v2q_identity(model) -> bool:
    """True when every velocity coordinate is the derivative of the same-index q."""
    key = "ahbm.kinematics.ik.v2q_identity"
    hit = model.cache.get(key)
    if hit is None:
        v2q = _v_to_q_index(model)
        hit = model.cache[key] = bool(
            model.nq == model.nv and np.array_equal(v2q, np.arange(model.nv))
        )
    return hit


def _lm_trial(model, Q, H, g, lam, bnd, D):
    """Damped Gauss-Newton step of every frame: (dv, trial Q), projected onto the bounds."""
    lower, upper, bounded = bnd[0], bnd[1], bnd[5]
    free = np.ones(g.shape, dtype=bool)
    if bounded:
        at_lo, at_hi = _at_bounds(Q, bnd)
        # the descent direction -g points outwards at an active bound
        free = ~((at_lo & (g > 0)) | (at_hi & (g < 0)))
    dv = _solve_step(H, g, lam, free, D)
    cons = bnd[6]
    predict = None if cons is None else getattr(cons[0], "predict_active", None)
    if predict is not None:  # one-sided penalties: rows the step would violate join its model
        r, Ga = predict(Q, dv)
        if np.any(Ga):
            GaT = np.swapaxes(Ga, 1, 2)
            H = H + cons[1] * (GaT @ Ga)
            unseen = D <= 1e-12 * D.max(axis=1, keepdims=True)  # as in _lm_terms
            Dp = 1e-8 * cons[1] * np.einsum("bkv,bkv->bv", Ga, Ga)
            D = np.where(unseen, np.maximum(D, Dp), D)
            dv = _solve_step(H, g + cons[1] * (GaT @ r[:, :, None])[:, :, 0], lam, free, D)
    # without quaternion joints q and v share their layout: q + dv (no validation pass)
    Qt = Q + dv if model.nq == model.nv and _v2q_identity(model) else integrate_q(model, Q, dv)
    correct = None if cons is None else getattr(cons[0], "correct_trial", None)
    if correct is not None:  # second-order correction: back onto violated one-sided rows
        Qt = correct(Qt)
    if bounded:
        Qt = np.clip(Qt, lower, upper)
    return dv, Qt


def _lm_update(state, dv, Qt, trial, active, bnd, tol, xtol):
    """Accept or reject the trial of the active frames; return (newly converged, stalled).

    `state` = [Q, cost, H, g, lam, D] is updated in place.
    """
    Q, cost, H, g, lam, D = state
    cost_t, H_t, g_t, D_t = trial
    accept = active & (cost_t <= cost)
    decrease = cost - cost_t
    step = np.linalg.norm(dv, axis=1)
    qn = np.linalg.norm(np.where(np.isfinite(Q), Q, 0.0), axis=1)
    small_step = step <= xtol * (1.0 + qn)
    small_dec = decrease <= tol * np.maximum(cost, 1e-300)
    Q = np.where(accept[:, None], Qt, Q)
    cost = np.where(accept, cost_t, cost)
    H = np.where(accept[:, None, None], H_t, H)
    g = np.where(accept[:, None], g_t, g)
    D = np.where(accept[:, None], D_t, D)
    lam = np.where(accept, np.maximum(lam / 3.0, 1e-12), lam * 4.0)
    # projected gradient (zero on coordinates held at a bound)
    if bnd[5]:
        at_lo, at_hi = _at_bounds(Q, bnd)
        gp = np.where((at_lo & (g > 0)) | (at_hi & (g < 0)), 0.0, g)
    else:
        gp = g
    hs = np.sqrt(np.maximum(np.einsum("bii->b", H), 1e-300))
    tiny_grad = np.linalg.norm(gp, axis=1) <= 1e-14 * hs * np.sqrt(np.maximum(cost, 0)) + 1e-30
    newly = active & ((accept & (small_dec | small_step)) | tiny_grad | (cost <= 1e-30))
    stalled = active & ~newly & (lam > 1e12)
    state[:] = [Q, cost, H, g, lam, D]
    return newly, stalled


def _well_determined(H):
    """The weighted Jacobian has full rank (on the free coordinates)."""
    ev = np.linalg.eigvalsh(H)
    return ev[:, 0] > 1e-10 * np.maximum(ev[:, -1], 1e-300)


def _lm_block(model, Q, X, W, bodies, local, bnd, max_iter, tol, xtol, coord=None):
    """Vectorized Levenberg–Marquardt over a block of frames (each frame independent)."""
    B = Q.shape[0]
    v2q, cons = bnd[4], bnd[6]
    cost, H, g, D = _lm_terms(model, Q, X, W, bodies, local, coord, v2q, cons)
    state = [Q, cost, H, g, np.full(B, 1e-4), D]
    done = np.zeros(B, dtype=bool)
    conv = np.zeros(B, dtype=bool)
    iters = np.zeros(B, dtype=int)
    for _ in range(int(max_iter)):
        active = ~done
        if not active.any():
            break
        iters[active] += 1
        dv, Qt = _lm_trial(model, state[0], state[2], state[3], state[4], bnd, state[5])
        trial = _lm_terms(model, Qt, X, W, bodies, local, coord, v2q, cons)
        newly, stalled = _lm_update(state, dv, Qt, trial, active, bnd, tol, xtol)
        conv |= newly
        done |= newly | stalled
    return state[0], conv, iters, _well_determined(state[2])


_SETTLE = 2  # iterations after which a frame in the window may seed the next ones


def _lm_pipeline(model, frames, q_start, X, W, bodies, local, bnd, max_iter, tol, xtol,
                 coord, window):  # fmt: skip
    """Levenberg–Marquardt over a sliding window of frames, each warm-started from its predecessors.

    Frames enter the window in order as earlier ones converge (the first one is
    solved alone from `q_start`); an entering frame starts from the linear
    extrapolation (at most 4 frames ahead) of the current estimates of the last
    two earlier frames that have converged or done `_SETTLE` iterations (the
    last one's estimate when only one has). Every iteration evaluates the
    whole window in one call.
    Returns q (n, nq), converged, iterations, well_determined for `frames`.
    """
    n = len(frames)
    nq, nv = model.nq, model.nv
    v2q = bnd[4]
    lower, upper, bounded = bnd[0], bnd[1], bnd[5]
    q_est = np.full((n, nq), np.nan)
    conv = np.zeros(n, dtype=bool)
    iters = np.zeros(n, dtype=int)
    det = np.zeros(n, dtype=bool)
    slot_frame = np.full(window, -1, dtype=int)  # index into `frames`, -1: empty
    finished_mask = np.zeros(n, dtype=bool)
    extrapolate_gap = 4.0
    settle = _SETTLE
    linear = _v2q_identity(model)
    state = [
        np.repeat(q_start[None], window, axis=0),
        np.zeros(window),
        np.repeat(np.eye(nv)[None], window, axis=0),
        np.zeros((window, nv)),
        np.full(window, 1e-4),
        np.ones((window, nv)),
    ]
    Xw = np.zeros((window,) + X.shape[1:])
    Ww = np.zeros((window,) + W.shape[1:])
    CTw = CWw = None
    if coord is not None:
        CTw, CWw = np.zeros((window, nv)), np.zeros((window, nv))
    next_frame = 0

    def starts(ks):
        """Starts of entering frames `ks`: extrapolated from the last two settled frames.

        A frame is settled when it has converged or done `settle` iterations.
        """
        ks = np.asarray(ks)
        settled = finished_mask[: ks[0]] | (iters[: ks[0]] >= settle)
        done_before = np.nonzero(settled)[0][-2:]
        if done_before.size == 0:
            return np.repeat(q_start[None], len(ks), axis=0)
        k1 = done_before[-1]
        base = np.repeat(q_est[k1][None], len(ks), axis=0)
        if done_before.size == 1:
            return base
        k0 = done_before[0]
        gap = np.minimum((frames[ks] - frames[k1]).astype(float), extrapolate_gap)
        if linear:  # q and v share their layout: plain differences
            rate = (q_est[k1] - q_est[k0]) / float(frames[k1] - frames[k0])
            q = base + gap[:, None] * rate[None, :]
        else:
            rate = difference_q(model, q_est[k0], q_est[k1]) / float(frames[k1] - frames[k0])
            q = integrate_q(model, base, gap[:, None] * rate[None, :])
        return np.clip(q, lower, upper) if bounded else q

    while True:
        # refill empty slots (their trial point is the start)
        new = np.zeros(window, dtype=bool)
        # until one frame has converged, the first frame is solved alone, so that
        # every other frame starts from a converged solution of an earlier one
        room = max(n - next_frame, 0) if finished_mask.any() else 1 - next_frame
        empty = np.nonzero(slot_frame < 0)[0][: max(room, 0)]
        if empty.size:
            ks = np.arange(next_frame, next_frame + empty.size)
            next_frame += empty.size
            slot_frame[empty] = ks
            new[empty] = True
            Xw[empty], Ww[empty] = X[ks], W[ks]
            if coord is not None:
                CTw[empty], CWw[empty] = coord[0][ks], coord[1][ks]
            q_est[ks] = starts(ks)
        occupied = slot_frame >= 0
        if not occupied.any():
            break
        old = occupied & ~new
        Qt = state[0].copy()
        dv = np.zeros((window, nv))
        if old.any():
            dv_o, Qt_o = _lm_trial(model, state[0], state[2], state[3], state[4], bnd, state[5])
            dv[old], Qt[old] = dv_o[old], Qt_o[old]
        Qt[new] = q_est[slot_frame[new]]
        Qt[~occupied] = state[0][~occupied]
        cw = None if coord is None else (CTw, CWw)
        trial = _lm_terms(model, Qt, Xw, Ww, bodies, local, cw, v2q, bnd[6])
        # new frames: take the start as the current state
        Q, cost, H, g, lam, D = state
        Q = np.where(new[:, None], Qt, Q)
        cost = np.where(new, trial[0], cost)
        H = np.where(new[:, None, None], trial[1], H)
        g = np.where(new[:, None], trial[2], g)
        D = np.where(new[:, None], trial[3], D)
        lam = np.where(new, 1e-4, lam)
        state[:] = [Q, cost, H, g, lam, D]
        newly, stalled = _lm_update(state, dv, Qt, trial, old, bnd, tol, xtol)
        idx = slot_frame[old]
        iters[idx] += 1
        q_est[slot_frame[occupied]] = state[0][occupied]
        finished = newly | stalled | (old & (iters[np.maximum(slot_frame, 0)] >= max_iter))
        if finished.any():
            k = slot_frame[finished]
            conv[k] = newly[finished]
            det[k] = _well_determined(state[2][finished])
            finished_mask[k] = True
            slot_frame[finished] = -1
    return q_est, conv, iters, det
