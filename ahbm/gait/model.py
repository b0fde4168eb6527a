"""The seven-segment lower-extremity model as a multibody tree (synthetic data, tests)."""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_nonnegative_float, as_positive_float
from ahbm.bsp.tables import segment_parameters
from ahbm.errors import DataError
from ahbm.gait.frames import turn_about_line
from ahbm.gait.markersets import G
from ahbm.gait.subject import SubjectParameters
from ahbm.kinematics.joint_centres import hip_joint_centre_davis
from ahbm.kinematics.rotations import rot_y
from ahbm.kinematics.tree import Model

__all__ = ["lower_extremity_model"]


def lower_extremity_model(
    *,
    mass: float = 70.0,
    height: float = 1.75,
    sex: str = "male",
    marker_radius: float = 0.007,
    pelvis_mass_fraction: float = 0.1117,
    tibial_torsion: float = 0.0,
    thigh_wand_rotation: float = 0.0,
    shank_wand_rotation: float = 0.0,
    foot_marker_lateral: float = 0.0,
    static_markers: bool = False,
):
    """The seven-segment model as a multibody tree with Plug-in Gait markers.

    Parameters
    ----------
    mass, height : float
        Body mass (kg) and stature (m).
    sex : {"male", "female"}
        de Leva column.
    marker_radius : float
        m.
    pelvis_mass_fraction : float
        Pelvis mass / body mass (de Leva's lower trunk).
    tibial_torsion : float
        rad: the ankle joint's axes are the shank's turned about its y axis
        by ``-s·tibial_torsion`` (``s = +1`` right, ``-1`` left), so the knee
        axis is the ankle axis turned by ``+s·tibial_torsion``
        (:class:`~ahbm.gait.SubjectParameters`); ANK, TIB and the
        medial malleolus sit on the ankle axis's plane.
    thigh_wand_rotation, shank_wand_rotation : float
        rad: THI turned out of the plane of HJC, KNE and KJC about the KJC-HJC
        line by the chord's offset angle ``-s·thigh_wand_rotation``; TIB
        turned out of the plane of KJC, ANK and AJC about the AJC-KJC line by
        ``s·(tibial_torsion - shank_wand_rotation)``
        (:func:`~ahbm.kinematics.joint_centres.chord_joint_centre`; Plug-in Gait's
        ThighRotation and ShankRotation: the values the pipeline reads back).
    foot_marker_lateral : float
        m: HEE and TOE moved laterally by this much (the heel-toe line stays
        parallel to the foot's x axis, the ankle-toe line turns out of it).
    static_markers : bool
        Also place the static-trial markers: a knee alignment device per
        side (``?KAX``, ``?KD1``, ``?KD2``: three 80 mm arms at right angles
        from a hub at the lateral knee marker's position, KAX along the knee
        axis pointing laterally, KD1 and KD2 anterior and posterior, 45°
        upwards) and the
        medial malleoli ``?ANM``.

    Returns
    -------
    model : Model
        Bodies ``pelvis`` (free joint) and, per side ``r``/``l``, ``thigh``,
        ``shank``, ``foot`` on ``euler`` joints with sequence ``"ZXY"`` (the
        Grood-Suntay order: flexion about the proximal z, ab/adduction about
        the floating axis, rotation about the distal y). Body frames have ISB
        axes (x anterior, y up, z right) with the origin at the proximal joint
        centre (pelvis: mid-ASIS) and coincide with the frames that
        :func:`~ahbm.gait.analyze_gait` rebuilds from the markers.
    params : SubjectParameters
        Leg length, knee and ankle widths, inter-ASIS distance matching the
        markers (pass them to :func:`~ahbm.gait.analyze_gait`).

    Notes
    -----
    Markers: ASIS at ±(inter-ASIS/2) on the pelvis z axis, SACR 0.16 m behind
    mid-ASIS; the hip centres are placed where the Davis regression puts them;
    KNE and ANK lie on the knee and ankle axes at width/2 + marker radius
    lateral to the centres, THI and TIB laterally in the segments' frontal
    planes (so the chord function returns the true centres); HEE and TOE on
    the sole line, parallel to the foot x axis. Inertia from de Leva (1996).

    Examples
    --------
    >>> model, params = lower_extremity_model()
    >>> model.n_bodies, model.nq
    (7, 25)
    """
    mass = as_positive_float(mass, "mass", unit="kg")
    height = as_positive_float(height, "height", unit="m")
    marker_radius = as_nonnegative_float(marker_radius, "marker_radius", unit="m")
    pelvis_mass_fraction = as_positive_float(pelvis_mass_fraction, "pelvis_mass_fraction")
    if pelvis_mass_fraction >= 1.0:
        raise DataError(
            f"`pelvis_mass_fraction` must be below 1 (a fraction of the body mass), got "
            f"{pelvis_mass_fraction}"
        )
    s_h = height / 1.75
    inter_asis = 0.25 * s_h
    leg = 0.92 * s_h
    knee_w, ankle_w = 0.105 * s_h, 0.072 * s_h
    thigh_len, shank_len = 0.425 * s_h, 0.43 * s_h
    foot_len, ajc_h = 0.15 * s_h, 0.08 * s_h
    toe = np.array([foot_len, -ajc_h + marker_radius, 0.0])
    lengths = {"thigh": thigh_len, "shank": shank_len, "foot": float(np.linalg.norm(toe))}
    par = segment_parameters("de_leva", mass=mass, height=height, segment_lengths=lengths, sex=sex)
    P = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])
    model = Model("lower_extremity", gravity=(0.0, 0.0, -G))
    pelvis_I = np.diag([0.1, 0.08, 0.1]) * mass / 70.0
    model.add_body(
        "pelvis",
        "ground",
        {"type": "free"},
        mass=pelvis_mass_fraction * mass,
        com=[-0.05, -0.05, 0.0],
        inertia=pelvis_I,
        markers={
            "RASI": [0, 0, inter_asis / 2],
            "LASI": [0, 0, -inter_asis / 2],
            "SACR": [-0.16 * s_h, 0.0, 0.0],
        },
    )
    dk = knee_w / 2 + marker_radius
    da = ankle_w / 2 + marker_radius
    for side, p, s in (("r", "R", 1.0), ("l", "L", -1.0)):
        hjc = hip_joint_centre_davis(
            leg_length=leg,
            inter_asis_distance=inter_asis,
            side="right" if s > 0 else "left",
            marker_radius=marker_radius,
        )
        th = par["thigh_" + side]
        sh = par["shank_" + side]
        ft = par["foot_" + side]
        kne = np.array([0.0, -thigh_len, s * dk])
        kjc = np.array([0.0, -thigh_len, 0.0])
        # the wand out of the plane of HJC, KNE and KJC by the chord's offset angle
        # (-s * thigh rotation) about the KJC -> HJC line
        thi = turn_about_line(
            [[0.0, -0.5 * thigh_len, s * (dk + 0.06)]], [kjc], np.zeros((1, 3)),
            -s * thigh_wand_rotation,
        )[0]  # fmt: skip
        thigh_markers = {p + "THI": thi, p + "KNE": kne}
        if static_markers:  # knee alignment device: hub on the lateral knee marker's position,
            # three 80 mm arms at right angles, KAX along the knee axis (z: lateral * s)
            h = np.sqrt(0.5)
            for name, arm in (("KAX", (0.0, 0.0, s)), ("KD1", (h, h, 0.0)), ("KD2", (-h, h, 0.0))):
                thigh_markers[p + name] = kne + 0.08 * np.array(arm)
        model.add_body(
            f"thigh_{side}",
            "pelvis",
            {"type": "euler", "sequence": "ZXY"},
            position=hjc,
            mass=th.mass,
            com=P @ th.com,
            inertia=P @ th.inertia @ P.T,
            markers=thigh_markers,
        )
        Rt = rot_y(-s * tibial_torsion)  # shank_R_ankle-joint (the torsioned tibia)
        ajc = np.array([0.0, -shank_len, 0.0])
        ank = ajc + Rt @ [0.0, 0.0, s * da]
        tib = np.array([0.0, -0.5 * shank_len, 0.0]) + Rt @ [0.0, 0.0, s * (da + 0.05)]
        # out of the ankle's plane by the chord's offset angle s * (torsion - shank rotation)
        # about the AJC -> KJC line
        tib = turn_about_line(
            [tib], [ajc], np.zeros((1, 3)), s * (tibial_torsion - shank_wand_rotation)
        )[0]
        shank_markers = {p + "TIB": tib, p + "ANK": ank}
        if static_markers:
            shank_markers[p + "ANM"] = ajc + Rt @ [0.0, 0.0, -s * da]
        model.add_body(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "euler", "sequence": "ZXY"},
            position=[0, -thigh_len, 0],
            mass=sh.mass,
            com=P @ sh.com,
            inertia=P @ sh.inertia @ P.T,
            markers=shank_markers,
        )
        lat = np.array([0.0, 0.0, s * foot_marker_lateral])
        model.add_body(
            f"foot_{side}",
            f"shank_{side}",
            {"type": "euler", "sequence": "ZXY"},
            position=ajc,
            rotation=Rt,
            mass=ft.mass,
            com=(toe + lat) / 2,
            inertia=P @ ft.inertia @ P.T,
            markers={
                p + "HEE": np.array([-0.05 * s_h, -ajc_h + marker_radius, 0.0]) + lat,
                p + "TOE": toe + lat,
            },
        )
    params = SubjectParameters(
        mass=float(mass),
        height=float(height),
        leg_length={"Left": leg, "Right": leg},
        knee_width={"Left": knee_w, "Right": knee_w},
        ankle_width={"Left": ankle_w, "Right": ankle_w},
        inter_asis_distance=inter_asis,
        marker_radius=marker_radius,
        tibial_torsion={"Left": float(tibial_torsion), "Right": float(tibial_torsion)},
        thigh_rotation={"Left": float(thigh_wand_rotation), "Right": float(thigh_wand_rotation)},
        shank_rotation={"Left": float(shank_wand_rotation), "Right": float(shank_wand_rotation)},
    )
    return model, params
