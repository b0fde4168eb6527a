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

from ahbm._internal.validation import as_nonnegative_float
from ahbm.bsp.tables import segment_parameters
from ahbm.errors import AhbmError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.models._heiman_markers import (
    HEIMAN_MARKER_DIMENSIONS,
    PLUG_IN_GAIT_NAMES,
    plug_in_gait_markers,
)

__all__ = [
    "heiman_model",
    "heiman_plug_in_gait_measurements",
    "HEIMAN_WIDTHS",
    "HEIMAN_MARKER_DIMENSIONS",
    "HEIMAN_PLUG_IN_GAIT_MARKERS",
]

#: Dimensions of HeiMan that are not segment lengths, / height (Felis 2015,
#: Table 4.3): hip-joint half width (Dumas et al. 2007); foot height (ankle
#: above the sole) and heel behind the ankle (marked "guess" in the source).
HEIMAN_WIDTHS = {"hip": 0.0461, "foot_height": 0.0468, "foot_posterior": 0.0400}

#: The Plug-in Gait markers of :func:`heiman_model` (full-body set, 40 markers).
HEIMAN_PLUG_IN_GAIT_MARKERS = PLUG_IN_GAIT_NAMES

_EULER = {"type": "euler", "sequence": "YXZ"}


def heiman_model(
    *,
    mass: float = 70.0,
    height: float = 1.75,
    root: str = "free",
    segment_lengths: dict | None = None,
    gravity=(0.0, 0.0, -9.81),
    marker_radius: float = 0.007,
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
    marker_radius : float, optional
        Radius of the Plug-in Gait markers, m (default 7 mm: 14 mm markers);
        skin markers sit this far outside the skin.

    Returns
    -------
    Model
        19 bodies, nv = 34. Joints: ``pelvis``, ``hip_r/l``, ``knee_r/l``
        (about +y, flexion positive), ``ankle_r/l``, ``lumbar``, ``thorax``
        (fixed), ``inner_shoulder_r/l`` (fixed), ``shoulder_r/l``,
        ``elbow_r/l`` (about -y, flexion positive), ``wrist_r/l`` (fixed),
        ``neck`` (fixed), ``head``. Markers (45, unique names): the sole
        landmarks ``heel_r``, ``toe_r``, ``heel_l``, ``toe_l`` (under the
        heel and the toe tip; named with their foot's side suffix), ``vertex``
        on the head, and the 40 Plug-in Gait markers
        (:data:`HEIMAN_PLUG_IN_GAIT_MARKERS`, Notes).

    Raises
    ------
    ModelError
        Bad mass, height, root or segment lengths.
    DataError
        A negative or non-numeric `marker_radius`.

    Notes
    -----
    Inertial parameters (Felis 2015, eqs. 4.5-4.7): ``m = m̄ M``,
    ``L = L̄ H``, ``c = c̄ L`` along the segment z axis and
    ``I = diag((r̄_sag L)², (r̄_trans L)², (r̄_long L)²) m``. The feet are the
    exception: their centre of mass is placed along the foot's long (x) axis
    at ``0.4415 L`` from the heel and half the foot height below the ankle,
    with the longitudinal radius about x, as in :func:`ahbm.models.human15`
    (HeiMan prints it on the z axis).

    Plug-in Gait markers, by Plug-in Gait's placement rules on HeiMan's joint
    centres (proportions / stature in ``HEIMAN_MARKER_DIMENSIONS``; skin
    markers one marker radius ``r`` outside the skin):

    - **Pelvis**: HeiMan's pelvis frame is Plug-in Gait's, so ``LASI``,
      ``RASI``, ``LPSI``, ``RPSI`` and ``SACR`` (mid-PSIS) lie in a plane
      parallel to its x-y plane. The ASIS are placed where the Davis et al.
      (1991) regression of Plug-in Gait
      (:func:`~ahbm.kinematics.joint_centres.hip_joint_centre_davis`) puts
      the hip centres on HeiMan's, for the leg
      length (ASIS to medial malleolus via the knee) and inter-ASIS distance
      of :func:`heiman_plug_in_gait_measurements`; the PSIS 0.0914 H behind.
    - **Knee, ankle, elbow** (``?KNE``, ``?ANK``, ``?ELB``): on the joint's
      flexion axis (HeiMan's y), lateral at half the joint width plus ``r``.
    - **Wands** ``?THI``, ``?TIB``: lateral, in the frontal plane of the
      segment (the plane of the proximal centre, the distal centre and the
      joint marker: no wand rotation), two thirds down the thigh and shank.
    - **Foot**: ``?TOE`` on the second metatarsal head (0.72 of the foot from
      the heel), ``?HEE`` on the back of the heel at the same height.
    - **Trunk** (upper trunk, from the xiphoid to the suprasternal notch):
      ``CLAV`` at the notch, ``C7`` behind and above it, ``STRN`` on the
      xiphoid, ``T10`` behind it, ``RBAK`` on the right scapula.
    - **Arms**: ``?SHO`` on the acromion above the shoulder centre (on the
      clavicula); ``?UPA`` and ``?FRM`` lateral on the upper arm and forearm,
      at different heights left and right; the wrist bar ``?WRA`` (thumb
      side, lateral: the forearm in the anatomical position, palm forward)
      and ``?WRB`` (little-finger side) at half the wrist width; ``?FIN``
      on the back of the hand over the third metacarpal head.
    - **Head**: ``?FHD`` over the temples and ``?BHD`` at the back of the
      head, in one transverse plane 0.045 H below the vertex.

    Examples
    --------
    >>> m = heiman_model(mass=76.0, height=1.79)
    >>> m.n_bodies, m.nv, round(m.total_mass, 6)
    (19, 34, 76.0)
    >>> from ahbm.kinematics import model_markers
    >>> len(model_markers(m).names), "RKNE" in m.bodies[m.body_index("thigh_r")].markers
    (45, True)
    """
    if root not in ("free", "free_euler"):
        raise ModelError(f"`root` must be 'free' or 'free_euler', got {root!r}")
    p, H, markers, _ = _parameters(mass, height, segment_lengths, marker_radius)
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
            markers=markers.get(name),
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
    add("head", "neck", dict(_EULER, name="head"), [0, 0, L_neck])
    return model


def _parameters(mass, height, segment_lengths, marker_radius):
    """Segment parameters, stature, markers by body and Plug-in Gait measurements."""
    r = as_nonnegative_float(marker_radius, "marker_radius", unit="m")
    try:
        p = segment_parameters("heiman", mass=mass, height=height, segment_lengths=segment_lengths)
    except AhbmError as err:
        raise ModelError(f"heiman_model: {err}") from err
    H = float(height)
    markers, measurements = plug_in_gait_markers(p, H, HEIMAN_WIDTHS, r)
    return p, H, markers, measurements


def heiman_plug_in_gait_measurements(
    *,
    mass: float = 70.0,
    height: float = 1.75,
    segment_lengths: dict | None = None,
    marker_radius: float = 0.007,
) -> dict:
    """The subject measurements Plug-in Gait needs for HeiMan's marker set.

    With these, Plug-in Gait's joint centres (Davis hip regression, knee and
    ankle chords) computed from the markers of :func:`heiman_model` (same
    arguments) fall on HeiMan's joint centres.

    Parameters
    ----------
    mass, height, segment_lengths, marker_radius
        As :func:`heiman_model`.

    Returns
    -------
    dict
        ``leg_length`` (ASIS to medial malleolus via the knee, standing),
        ``inter_asis_distance``, ``knee_width``, ``ankle_width``,
        ``elbow_width``, ``wrist_width``, ``marker_radius``, m.

    Examples
    --------
    >>> d = heiman_plug_in_gait_measurements(height=1.75)
    >>> round(d["leg_length"], 3), round(d["inter_asis_distance"], 3), round(d["knee_width"], 3)
    (0.981, 0.254, 0.105)
    """
    return _parameters(mass, height, segment_lengths, marker_radius)[3]
