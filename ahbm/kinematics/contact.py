"""Contact with the ground: HeiMan foot contact sets and the lowest points of shapes.

:func:`foot_contact_shapes` builds the HeiMan foot contact set (heel sphere
and forefoot capsule, Felis 2015 §4.7) as
:class:`~ahbm.kinematics.geometry.CollisionShape` objects, and
:func:`ground_contact` gives the lowest points of shapes and their
penetration of the ground plane.

References
----------
Felis, M. (2015). *Modeling Emotional Aspects in Human Locomotion*. Heidelberg
University, §4.7 (foot contact).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ahbm._internal.validation import (
    as_finite_float,
    as_float_array,
)
from ahbm.errors import DataError
from ahbm.kinematics.forward import point_jacobian
from ahbm.kinematics.geometry import CollisionShape, _as_state, _world_cores, collision_shapes
from ahbm.kinematics.ssv import _combine
from ahbm.kinematics.tree import Model
from ahbm.types import ResultRepr

__all__ = [
    "GroundContact",
    "foot_contact_shapes",
    "ground_contact",
]


# ----------------------------------------------------------------------------
# foot contact sets and the ground
# ----------------------------------------------------------------------------


def foot_contact_shapes(
    body: str,
    *,
    length,
    height,
    posterior,
    width=None,
    prefix: str | None = None,
) -> list[CollisionShape]:
    """HeiMan-style foot contact set: a heel sphere and a forefoot capsule.

    The foot frame has its origin at the ankle, x forward along the foot,
    y to the left, z up (the frames of :func:`ahbm.models.heiman_model` and
    :func:`ahbm.models.human15`); the sole is at ``z = −height``.

    Parameters
    ----------
    body : str
        Name of the foot body.
    length : float
        Foot length from the heel to the toe tip, m.
    height : float
        Height of the ankle above the sole, m.
    posterior : float
        Distance of the heel behind the ankle, m.
    width : float, optional
        Width of the forefoot (hallux to fifth metatarsal head), m; default
        ``0.38 length`` (an adult's ball width over foot length).
    prefix : str, optional
        Prefix of the shape names (default `body`): ``<prefix>_heel`` and
        ``<prefix>_forefoot``.

    Returns
    -------
    list of CollisionShape
        ``[heel sphere, forefoot capsule]``.

    Notes
    -----
    Felis (2015, §4.7) models the heel as a sphere rolling on the ground with
    its centre at the posterior point and the forefoot as the line from the
    hallux to the fifth metatarsal head. Here the heel sphere has the radius
    ``height / 2`` and touches the sole plane under the heel
    (centre ``(−posterior + height/2, 0, −height/2)``, so that its back lies on
    the heel); the forefoot capsule has a radius ``height / 4``, lies on the
    sole plane at ``0.75 length`` from the heel (the metatarsal heads), and
    spans ``width`` across the foot. The exact 3-D placement of Felis' Fig. 4.9
    is not given in the text; these proportions are this toolbox's choice.

    Examples
    --------
    >>> heel, fore = foot_contact_shapes("foot_r", length=0.26, height=0.084, posterior=0.072)
    >>> heel.kind, fore.kind, round(heel.radius, 3)
    ('sphere', 'capsule', 0.042)
    """
    if not isinstance(body, str) or not body:
        raise DataError(f"Expected `body` to be a body name, got {body!r}")
    length = as_finite_float(length, "length", unit="m")
    height = as_finite_float(height, "height", unit="m")
    posterior = as_finite_float(posterior, "posterior", unit="m")
    for name, value in (("length", length), ("height", height)):
        if value <= 0:
            raise DataError(f"Expected `{name}` to be > 0 m, got {value}")
    if posterior < 0 or posterior >= length:
        raise DataError(
            f"Expected `posterior` (heel behind the ankle) in [0, length={length}) m, "
            f"got {posterior}"
        )
    width = 0.38 * length if width is None else as_finite_float(width, "width", unit="m")
    if width < 0:
        raise DataError(f"Expected `width` to be >= 0 m, got {width}")
    prefix = body if prefix is None else str(prefix)
    r_heel = 0.5 * height
    r_fore = 0.25 * height
    heel = CollisionShape.sphere(
        f"{prefix}_heel", body, [-posterior + r_heel, 0.0, -height + r_heel], r_heel
    )
    x = -posterior + 0.75 * length
    z = -height + r_fore
    fore = CollisionShape.capsule(
        f"{prefix}_forefoot", body, [x, 0.5 * width, z], [x, -0.5 * width, z], r_fore
    )
    return [heel, fore]


@dataclass(frozen=True, repr=False)
class GroundContact(ResultRepr):
    """Lowest points of shapes relative to the ground (result of :func:`ground_contact`).

    Attributes
    ----------
    shapes : tuple of str
        Shape names, in the order of the arrays' shape axis.
    height : ndarray, shape (..., n_shapes)
        Signed height of the lowest surface point above the ground plane, m
        (negative: penetration depth).
    point : ndarray, shape (..., n_shapes, 3)
        World position of the lowest surface point.
    jacobian : ndarray, shape (..., n_shapes, nv)
        ``∂height/∂q`` = ``nᵀ J(c)``, ``c`` the lowest core point.
    """

    shapes: tuple
    height: np.ndarray
    point: np.ndarray
    jacobian: np.ndarray

    @property
    def penetration(self) -> np.ndarray:
        """Depth below the ground, ``max(0, −height)``, m."""
        return np.maximum(0.0, -self.height)


def ground_contact(
    model: Model, q, shapes=None, *, ground_normal=(0.0, 0.0, 1.0), ground_point=(0.0, 0.0, 0.0),
    kin=None,
) -> GroundContact:  # fmt: skip
    """Lowest points of body-attached shapes and their height above the ground plane.

    Parameters
    ----------
    model : Model
        With collision shapes.
    q : array_like, shape (..., nq), or None with ``kin``
    shapes : sequence of str, optional
        Shape names (default: every shape of the model).
    ground_normal : array_like, shape (3,)
        Normal of the ground plane pointing up, out of the ground (normalized here).
    ground_point : array_like, shape (3,)
        A point of the ground plane, m.
    kin : Kinematics, optional

    Returns
    -------
    GroundContact
        Heights (..., n_shapes), lowest surface points and ``∂height/∂q``.

    Notes
    -----
    The lowest point of a swept-sphere volume along ``−n`` is the lowest
    vertex ``c`` of its core (a linear function is smallest at a vertex of
    the segment or triangle; vertices at the same height share the weight)
    moved by ``r`` along ``−n``: height ``= nᵀ(c − g) − r`` (the contact
    point of Felis 2015 §4.7's heel sphere is its bottom point).

    Examples
    --------
    >>> from ahbm.kinematics import neutral_q
    >>> from ahbm.models import heiman_model
    >>> m = heiman_model(height=1.8, mass=75)
    >>> m.collision = foot_contact_shapes("foot_r", length=0.26, height=0.084, posterior=0.072)
    >>> gc = ground_contact(m, neutral_q(m))
    >>> gc.shapes, gc.height.shape
    (('foot_r_heel', 'foot_r_forefoot'), (2,))
    """
    kin = _as_state(model, q, kin)
    all_shapes = collision_shapes(model)
    index = {s.name: s for s in all_shapes}
    if shapes is None:
        chosen = list(all_shapes)
    else:
        if isinstance(shapes, str) or not hasattr(shapes, "__iter__"):
            raise DataError(f"Expected `shapes` to be a list of shape names, got {shapes!r:.60}")
        chosen = []
        for name in shapes:
            if not isinstance(name, str) or name not in index:
                raise DataError(
                    f"`shapes` names {name!r}, which is not a collision shape of the model; its "
                    f"shapes are {list(index)}"
                )
            chosen.append(index[name])
    n = as_float_array(ground_normal, "ground_normal")
    g = as_float_array(ground_point, "ground_point")
    if n.shape != (3,) or not np.linalg.norm(n) > 0:
        raise DataError(f"Expected `ground_normal` to be a non-zero vector of shape (3,), got {n}")
    if g.shape != (3,):
        raise DataError(f"Expected `ground_point` to have shape (3,), got {g.shape}")
    n = n / np.linalg.norm(n)
    batch = kin.batch_shape
    cores = _world_cores(model, chosen, kin)
    N = int(np.prod(batch, dtype=int))
    m = len(chosen)
    height = np.zeros((N, m))
    point = np.zeros((N, m, 3))
    jac = np.zeros((N, m, model.nv))
    for k, (s, P) in enumerate(zip(chosen, cores, strict=True)):
        h = (P - g) @ n  # (N, kk)
        hmin = h.min(axis=-1, keepdims=True)
        tol = 1e-12 * (1.0 + np.abs(hmin))
        w = (h <= hmin + tol).astype(float)
        w /= w.sum(axis=-1, keepdims=True)
        c = _combine(P, w)
        height[:, k] = hmin[:, 0] - s.radius
        point[:, k] = c - s.radius * n
        local = w @ s.points
        J = point_jacobian(model, None, s.body, local.reshape(batch + (3,)), kin=kin)
        jac[:, k] = n @ J.reshape(N, 3, model.nv)
    return GroundContact(
        shapes=tuple(s.name for s in chosen),
        height=height.reshape(batch + (m,)),
        point=point.reshape(batch + (m, 3)),
        jacobian=jac.reshape(batch + (m, model.nv)),
    )
