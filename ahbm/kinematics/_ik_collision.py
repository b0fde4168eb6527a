"""The collision term of :func:`~ahbm.kinematics.ik.fit_markers`.

Shape pairs of the model's swept-sphere volumes
(:mod:`ahbm.kinematics.geometry`) are kept at least a margin apart by a
one-sided quadratic penalty ``w Σ_k min(0, d_k(q) − margin)²`` added to the
marker cost. It enters the Levenberg–Marquardt iterations as the residuals
``min(0, d_k − margin)`` with the rows ``∂d_k/∂q`` of the active pairs
(zero rows elsewhere), the Gauss–Newton form of the constraint penalty of
``fit_markers(constraints=...)``, vectorized over the frames of a block with
:func:`~ahbm.kinematics.geometry.distances`. The penalty is C¹ (its
gradient vanishes where a pair reaches the margin), so the iterations see a
smooth cost; at the default weight (10⁸) a pair pressed against the margin
by the markers stays below it by about the marker force over the weight
(nanometres for marker errors of centimetres).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_nonnegative_float
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.configuration import integrate_q, neutral_q
from ahbm.kinematics.geometry import _candidate_pairs, collision_shapes, distances

__all__: list[str] = []

#: Weight of the penalty when the user asks for an enforced inequality (``inf``).
ENFORCED_WEIGHT = 1e8
#: Newton corrections of a trial point onto the margin.
_CORRECTIONS = 4


def collision_pairs_for_ik(model, collision) -> list:
    """Shape pairs of ``fit_markers(collision=...)``: "all"/True or a list of name pairs."""
    shapes = list(collision_shapes(model))
    if not shapes:
        raise ModelError(
            f"`collision` needs collision shapes on model {model.name!r}; assign "
            "model.collision = [CollisionShape.capsule(...), ...] first"
        )
    if collision is True or (isinstance(collision, str) and collision == "all"):
        support = [
            set(np.atleast_1d(model.support_dofs[model.body_index(s.body)]).tolist())
            for s in shapes
        ]
        ids = [(i, j) for i, j in _candidate_pairs(model, shapes, True) if support[i] != support[j]]
        pairs = [(shapes[i].name, shapes[j].name) for i, j in ids]
        if not pairs:
            raise DataError(
                "`collision='all'` found no pair of shapes on non-adjacent bodies that move "
                "relative to each other; give the pairs explicitly"
            )
        return pairs
    if isinstance(collision, (str, bytes, dict)) or not hasattr(collision, "__iter__"):
        raise DataError(
            f"`collision` must be 'all' (or True) or a list of (shape, shape) name pairs, "
            f"got {collision!r:.60}"
        )
    return [tuple(p) if not isinstance(p, (str, bytes)) else p for p in collision]


def collision_term(model, collision, margin, weight):
    """``(func, weight)`` for the constraint slot of the LM iterations, or None.

    ``func(kin) -> (phi (B, n_pairs), G (B, n_pairs, nv))`` with
    ``phi = min(0, d − margin)`` and ``G`` the distance Jacobian rows where
    ``phi < 0`` (0 elsewhere).
    """
    if collision is None or collision is False:
        return None
    margin = as_nonnegative_float(margin, "collision_margin", unit="m")
    w = float(weight)
    if not w > 0:
        raise DataError(f"`collision_weight` must be > 0 (inf: enforced), got {weight!r}")
    pairs = collision_pairs_for_ik(model, collision)
    distances(model, neutral_q(model), pairs)  # a DataError naming a pair at fault

    def func(kin):
        res = distances(model, None, pairs, kin=kin)
        B = res.distance.reshape(-1, len(pairs)).shape[0]
        gap = res.distance.reshape(B, -1) - margin
        active = gap < 0
        phi = np.where(active, gap, 0.0)
        G = np.where(active[..., None], res.jacobian.reshape(B, len(pairs), -1), 0.0)
        return phi, G

    def predict_active(Q, dv):
        """Rows ``(gap, ∂d/∂v)`` of the pairs now clear that the step `dv` would push
        below the margin (to first order): the step is solved again with them, so
        that it stops on the margin instead of crossing it and being rejected."""
        res = distances(model, Q, pairs)
        gap = res.distance.reshape(Q.shape[0], -1) - margin
        J = res.jacobian.reshape(Q.shape[0], len(pairs), -1)
        add = (gap >= 0) & (gap + np.einsum("bkv,bv->bk", J, dv) < 0)
        return np.where(add, gap, 0.0), np.where(add[..., None], J, 0.0)

    def correct_trial(Qt):
        """Trial points moved back onto the margin where a pair ends below it: the
        least-norm ``Δv = −Gᵀ (G Gᵀ)⁻¹ gap`` over those pairs (a second-order
        correction: the step's linear model misses the curvature of ``d``)."""
        B, n = Qt.shape[0], len(pairs)
        bad = np.zeros((B, n), dtype=bool)
        for _ in range(_CORRECTIONS):  # Newton on the violated rows (quadratic convergence)
            res = distances(model, Qt, pairs)
            gap = res.distance.reshape(B, n) - margin
            bad |= gap < 0  # a row once corrected stays on the margin
            if not (bad & (np.abs(gap) > 1e-12)).any():
                break
            J = np.where(bad[..., None], res.jacobian.reshape(B, n, -1), 0.0)
            A = J @ np.swapaxes(J, 1, 2) + np.eye(n) * np.where(bad, 1e-12, 1.0)[:, None, :]
            y = np.linalg.solve(A, np.where(bad, -gap, 0.0)[..., None])
            Qt = integrate_q(model, Qt, (np.swapaxes(J, 1, 2) @ y)[..., 0])
        return Qt

    if np.isinf(w):  # an enforced inequality: steps stop on the margin
        func.predict_active = predict_active
        func.correct_trial = correct_trial
    func.pairs = tuple(pairs)
    func.margin = margin
    return func, ENFORCED_WEIGHT if np.isinf(w) else w


def stack_penalties(first, second):
    """One ``(func, 1.0)`` penalty from two ``(func, weight)`` ones (rows scaled by √weight)."""
    (f1, w1), (f2, w2) = first, second
    s1, s2 = np.sqrt(w1), np.sqrt(w2)

    def func(kin):
        g1, G1 = f1(kin)
        g2, G2 = f2(kin)
        g1 = np.asarray(g1, dtype=float)
        B = g1.reshape(g1.shape[0], -1).shape[0]
        g1 = g1.reshape(B, -1)
        G1 = np.asarray(G1, dtype=float).reshape(B, g1.shape[1], -1)
        g2 = np.asarray(g2, dtype=float).reshape(B, -1)
        G2 = np.asarray(G2, dtype=float).reshape(B, g2.shape[1], -1)
        return np.concatenate([s1 * g1, s2 * g2], axis=1), np.concatenate(
            [s1 * G1, s2 * G2], axis=1
        )

    predict = getattr(f2, "predict_active", None)
    if predict is not None:

        def predict_active(Q, dv):
            r, G = predict(Q, dv)
            return s2 * r, s2 * G

        func.predict_active = predict_active
    if hasattr(f2, "correct_trial"):
        func.correct_trial = f2.correct_trial
    return func, 1.0
