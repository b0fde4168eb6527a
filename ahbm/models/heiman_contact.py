"""Compliant foot–ground contact for the HeiMan-like model: smooth contact spheres on the feet.

:func:`heiman_contact_spheres` places the HeiMan foot contact set (heel
sphere and forefoot line, Felis 2015 §4.7, as
:func:`ahbm.kinematics.contact.foot_contact_shapes` builds it) on the feet of
:func:`ahbm.models.heiman_model` as
:class:`~ahbm.dynamics.smooth_contact.SmoothSphereContact` force elements,
for :func:`ahbm.dynamics.simulate` and :mod:`ahbm.optimize.contact`.
"""

from __future__ import annotations

import numpy as np

from ahbm.dynamics.smooth_contact import SmoothSphereContact
from ahbm.errors import DataError, ModelError
from ahbm.kinematics.contact import foot_contact_shapes
from ahbm.kinematics.tree import Model
from ahbm.models.heiman import HEIMAN_WIDTHS

__all__ = ["heiman_contact_spheres", "HEIMAN_FOOT_COM_FRACTION"]

#: Centre of mass of HeiMan's feet along the foot from the heel, / foot length
#: (:func:`ahbm.models.heiman_model`, Notes; as :func:`ahbm.models.human15`).
HEIMAN_FOOT_COM_FRACTION = 0.4415


def heiman_contact_spheres(model: Model, *, sides=("r", "l"), parameters=None, height=0.0,
                           **options) -> list:  # fmt: skip
    """Three smooth contact spheres per foot of a HeiMan model: heel, hallux and fifth metatarsal.

    Parameters
    ----------
    model : Model
        From :func:`ahbm.models.heiman_model` (bodies ``foot_r``, ``foot_l``;
        z up).
    sides : sequence of str, optional
        ``"r"`` and/or ``"l"``.
    parameters : SmoothContactParameters, optional
        Default: those of Falisse et al. (2019) (the class defaults).
    height : float, optional
        Height of the ground plane (normal +z), m.
    **options
        Contact parameters overriding `parameters` (``stiffness=``, ...).

    Returns
    -------
    list of SmoothSphereContact
        ``foot_<side>_heel``, ``foot_<side>_forefoot_0`` (medial for the
        left foot, lateral for the right: +y) and ``foot_<side>_forefoot_1``.

    Notes
    -----
    The foot's dimensions are read back from the model the way
    :func:`~ahbm.models.heiman_model` builds them: its centre of mass lies
    half the foot height ``h`` below the ankle and ``0.4415 L`` in front of
    the heel, the heel ``0.0400 H`` behind the ankle and the sole
    ``0.0468 H`` below it (``HEIMAN_WIDTHS``; ``H`` the stature), so
    ``h = −2 c_z``, ``H = h / 0.0468``, ``L = (c_x + 0.0400 H) / 0.4415``.
    The spheres are those of
    :func:`~ahbm.kinematics.contact.foot_contact_shapes` (heel radius
    ``h/2``, forefoot radius ``h/4`` at ``0.75 L`` from the heel, ``0.38 L``
    apart), all touching the sole plane: standing with the feet flat at
    ``z = height`` puts every sphere on the ground.

    Examples
    --------
    >>> from ahbm.models import heiman_model
    >>> c = heiman_contact_spheres(heiman_model(root="free_euler"))
    >>> [s.name for s in c][:3], round(c[0].radius, 4)
    (['foot_r_heel', 'foot_r_forefoot_0', 'foot_r_forefoot_1'], 0.041)
    """
    if not isinstance(model, Model):
        raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
    if isinstance(sides, str):
        sides = (sides,)
    out = []
    for side in sides:
        if side not in ("r", "l"):
            raise DataError(f"`sides` holds 'r' and/or 'l', got {side!r}")
        body = f"foot_{side}"
        if body not in model.body_names:
            raise ModelError(f"model '{model.name}' has no body {body!r}: not a HeiMan model "
                             "(ahbm.models.heiman_model)")  # fmt: skip
        com = np.asarray(model.coms[model.body_index(body)], float)
        foot_height = -2.0 * com[2]
        if foot_height <= 0:
            raise ModelError(f"{body!r}: its centre of mass is not below the ankle (z = "
                             f"{com[2]:g} m); not a HeiMan foot")  # fmt: skip
        stature = foot_height / HEIMAN_WIDTHS["foot_height"]
        posterior = HEIMAN_WIDTHS["foot_posterior"] * stature
        length = (com[0] + posterior) / HEIMAN_FOOT_COM_FRACTION
        shapes = foot_contact_shapes(body, length=length, height=foot_height, posterior=posterior)
        for s in shapes:
            pts = np.atleast_2d(s.points)
            for j, p in enumerate(pts):
                name = s.name if len(pts) == 1 else f"{s.name}_{j}"
                out.append(SmoothSphereContact(
                    body, p, s.radius, parameters=parameters, name=name,
                    plane_point=(0.0, 0.0, float(height)), **options,
                ))  # fmt: skip
    return out
