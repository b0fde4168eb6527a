"""Parameterized 3-D whole-body model in the spirit of HeiMan (Felis 2015).

Nineteen segments (pelvis; thighs, shanks, feet; middle and upper trunk;
claviculae, upper arms, lower arms, hands; neck; head) with 34 degrees of
freedom: a 6-DOF pelvis, 3-DOF hips, ankles, lumbar joint, shoulders and head
joint (Euler YXZ: flexion, ab/adduction, axial rotation), 1-DOF knees and
elbows; thorax, clavicula, wrist and neck joints are fixed. Segment lengths,
masses, centres of mass and radii of gyration come from the ``"heiman"``
table of :mod:`ahbm.bsp` (de Leva 1996 ratios, Dumas et al. 2007 widths), so
the whole model scales with height and mass. Save it with
:func:`ahbm.kinematics.save_model` to get a JSON model file that users can
edit by hand.

Frames: x anterior, y to the left, z up; the pelvis origin is midway between
the hip-joint centres; each body frame has its origin at its joint.
"""

from __future__ import annotations

import numpy as np

from ahbm.bsp.tables import segment_parameters
from ahbm.errors import AhbmError, ModelError
from ahbm.kinematics.tree import Model

__all__ = ["heiman_model", "HEIMAN_WIDTHS"]

#: Dimensions of HeiMan that are not segment lengths, / height (Felis 2015,
#: Table 4.3): hip-joint half width (Dumas et al. 2007); foot height (ankle
#: above the sole) and heel behind the ankle (marked "guess" in the source).
HEIMAN_WIDTHS = {"hip": 0.0461, "foot_height": 0.0468, "foot_posterior": 0.0400}

_EULER = {"type": "euler", "sequence": "YXZ"}


def heiman_model(
    *,
    mass: float = 70.0,
    height: float = 1.75,
    root: str = "free",
    segment_lengths: dict | None = None,
    gravity=(0.0, 0.0, -9.81),
) -> Model:
    """Build the HeiMan-like whole-body model for a subject.

    Parameters
    ----------
    mass : float, optional
        Body mass, kg (default 70).
    height : float, optional
        Stature, m (default 1.75).
    root : {"free", "free_euler"}, optional
        Pelvis joint: quaternion free joint (nq 7, nv 6) or translation plus
        Euler YXZ angles (nq = nv = 6; exactly HeiMan's 34 coordinates).
    segment_lengths : dict, optional
        Measured lengths in m keyed by table segment (``"thigh"``,
        ``"thigh_l"``, ``"upper_trunk"``, ...); see
        :func:`ahbm.bsp.segment_parameters`.
    gravity : array_like, shape (3,), optional
        Gravity in the world frame, m/s².

    Returns
    -------
    Model
        19 bodies, nv = 34. Joints: ``pelvis``, ``hip_r/l``, ``knee_r/l``
        (about +y, flexion positive), ``ankle_r/l``, ``lumbar``, ``thorax``
        (fixed), ``inner_shoulder_r/l`` (fixed), ``shoulder_r/l``,
        ``elbow_r/l`` (about -y, flexion positive), ``wrist_r/l`` (fixed),
        ``neck`` (fixed), ``head``. Markers ``heel`` and ``toe`` on the feet,
        ``vertex`` on the head.

    Raises
    ------
    ModelError
        Bad mass, height, root or segment lengths.

    Notes
    -----
    Inertial parameters (Felis 2015, eqs. 4.5-4.7): ``m = m̄ M``,
    ``L = L̄ H``, ``c = c̄ L`` along the segment z axis and
    ``I = diag((r̄_sag L)², (r̄_trans L)², (r̄_long L)²) m``. The feet are the
    exception: their centre of mass is placed along the foot's long (x) axis
    at ``0.4415 L`` from the heel and half the foot height below the ankle,
    with the longitudinal radius about x, as in :func:`ahbm.models.human15`
    (HeiMan prints it on the z axis).

    Examples
    --------
    >>> m = heiman_model(mass=76.0, height=1.79)
    >>> m.n_bodies, m.nv, round(m.total_mass, 6)
    (19, 34, 76.0)
    """
    if root not in ("free", "free_euler"):
        raise ModelError(f"`root` must be 'free' or 'free_euler', got {root!r}")
    try:
        p = segment_parameters("heiman", mass=mass, height=height, segment_lengths=segment_lengths)
    except AhbmError as err:
        raise ModelError(f"heiman_model: {err}") from err
    H = float(height)
    model = Model("heiman", gravity)

    def add(name, parent, joint, position, seg=None, **extra):
        s = p[seg or name]
        model.add_body(
            name,
            parent,
            joint,
            position=position,
            mass=s.mass,
            com=extra.pop("com", s.com),
            inertia=extra.pop("inertia", s.inertia),
            **extra,
        )
        return s.length

    pelvis_joint = {"type": root, "name": "pelvis"}
    if root == "free_euler":
        pelvis_joint["sequence"] = "YXZ"
    L_pelvis = add("pelvis", "ground", pelvis_joint, [0, 0, 0])
    for side, sign in (("r", -1.0), ("l", 1.0)):
        L_thigh = add(
            f"thigh_{side}",
            "pelvis",
            dict(_EULER, name=f"hip_{side}"),
            [0, sign * HEIMAN_WIDTHS["hip"] * H, 0],
        )
        L_shank = add(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "revolute", "axis": [0, 1, 0], "name": f"knee_{side}"},
            [0, 0, -L_thigh],
        )
        foot = p[f"foot_{side}"]
        rs, rt, rl = np.sqrt(np.diag(foot.inertia) / foot.mass) / foot.length
        heel = -HEIMAN_WIDTHS["foot_posterior"] * H
        sole = -HEIMAN_WIDTHS["foot_height"] * H
        com_frac = -foot.com[2] / foot.length  # 0.4415, along the long axis
        add(
            f"foot_{side}",
            f"shank_{side}",
            dict(_EULER, name=f"ankle_{side}"),
            [0, 0, -L_shank],
            com=[heel + com_frac * foot.length, 0.0, 0.5 * sole],
            inertia=foot.mass * foot.length**2 * np.diag([rl**2, rs**2, rt**2]),
            markers={"heel": [heel, 0.0, sole], "toe": [heel + foot.length, 0.0, sole]},
        )
    L_mid = add("middle_trunk", "pelvis", dict(_EULER, name="lumbar"), [0, 0, L_pelvis])
    L_up = add("upper_trunk", "middle_trunk", {"type": "fixed", "name": "thorax"}, [0, 0, L_mid])
    for side, sign in (("r", -1.0), ("l", 1.0)):
        L_clav = add(
            f"clavicula_{side}",
            "upper_trunk",
            {"type": "fixed", "name": f"inner_shoulder_{side}"},
            [0, 0, L_up],
            seg=f"clavicula_{side}",
        )
        L_ua = add(
            f"upper_arm_{side}",
            f"clavicula_{side}",
            dict(_EULER, name=f"shoulder_{side}"),
            [0, sign * L_clav, 0],
        )
        L_la = add(
            f"lower_arm_{side}",
            f"upper_arm_{side}",
            {"type": "revolute", "axis": [0, -1, 0], "name": f"elbow_{side}"},
            [0, 0, -L_ua],
        )
        add(
            f"hand_{side}",
            f"lower_arm_{side}",
            {"type": "fixed", "name": f"wrist_{side}"},
            [0, 0, -L_la],
        )
    L_neck = add("neck", "upper_trunk", {"type": "fixed", "name": "neck"}, [0, 0, L_up])
    L_head = p["head"].length
    add(
        "head",
        "neck",
        dict(_EULER, name="head"),
        [0, 0, L_neck],
        markers={"vertex": [0.0, 0.0, L_head]},
    )
    return model
