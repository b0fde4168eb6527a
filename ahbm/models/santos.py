"""The 55-DOF Santos skeleton (Chung 2009) from its Denavit–Hartenberg tables.

Chung's running model "Santos" (Chung 2009, *Optimization-based dynamic
prediction of 3D human running*, §2.3) is defined by DH tables: Table 2.1
(the six global DOFs, three prismatic and three revolute, the last one
branching to the right leg, the left leg and the spine), Tables 2.3–2.4 (49
body DOFs, the upper spine Q12 branching to the right arm, the left arm and
the head) and Table 2.2 (link lengths, cm). :func:`santos_model` copies those
tables (standard convention, ``Rz(θ + q) Tz(d) Tx(a) Rx(α)``, Chung eq 2.4)
into :func:`ahbm.kinematics.dh_model`, where each branch point is one
coordinate with one row per child branch: 55 coordinates, 59 DH rows (GR3 and
Q12 have three rows each). The tabulated θ (and d of the prismatic rows) give
the home pose at ``q = 0``, Chung's starting point.

Joint limits: Chung's Table 7.3 (joint angle limits in degrees, pp. 110–111),
attached to the joints of Q1–Q49 as their ``limits`` (rad), so that
:func:`ahbm.kinematics.joint_bounds` and marker fitting see them; the six
global DOFs are unbounded. Table 7.5 (joint torque limits, N m, p. 113) is
:data:`SANTOS_TORQUE_LIMITS`. Both are copied as printed, including the
probable left–right typos (Q23's torque −55 against Q14's −50, Q49's −70
against Q42's −72). Many of the angle limits are task-specific bands that
freeze a DOF for running (±0.0573°, ±0.573°, ±1°; the elbows at −91° to
−89.94°), so the home pose ``q = 0`` lies outside some of them.

**Masses and inertias are not in the source** (Chung calls them approximated
and gives no table). They are taken from de Leva's (1996) table with a
three-part trunk (:func:`ahbm.bsp.segment_parameters`, ``"de_leva_3trunk"``,
male), for a body mass of 78.75 kg (the mass implied by Chung's ground
reactions given both in body weights and in newtons, Tables 8.1 and 10.2)
and the stature 1.5934 m, with the segment lengths of Table 2.2. Each
segment's centre of mass lies on the line between the origins of the two DH
frames that bound it (the table's longitudinal fraction), its inertia is the
table's, turned so that its long axis follows that line; the segment is
carried by the last DH frame of its proximal joint. The clavicles, the toes
and the neck links are massless. Which link is which (thigh, shank, ...) is
inferred from the tables (Chung's Figure 2.11 is missing from the text).

The DH base frame is Chung's global frame (ground = x-z plane, y up, z
forward); it is turned into ahbm's world (x forward, y left, z up) with
``base=`` (Chung's x, y, z → ahbm's y, z, x).
"""

from __future__ import annotations

import numpy as np

from ahbm._internal.validation import as_positive_float
from ahbm.bsp.tables import segment_parameters
from ahbm.kinematics.dh import DHRow, dh_model
from ahbm.kinematics.forward import forward_kinematics

__all__ = [
    "santos_model",
    "santos_rows",
    "SANTOS_LINK_LENGTHS",
    "SANTOS_JOINT_LIMITS",
    "SANTOS_TORQUE_LIMITS",
    "SANTOS_MASS",
    "SANTOS_HEIGHT",
]

_H = np.pi / 2
#: Chung (2009) Table 2.2: link lengths, cm (L23 is not used by the DH tables).
SANTOS_LINK_LENGTHS = {
    1: 5.6267, 2: 5.44274, 3: 5.99962, 4: 17.3856, 5: 1.70799, 6: 15.057, 7: 25.8638,
    8: 24.7374, 9: 16.5099, 10: 1.70799, 11: 14.175, 12: 25.9194, 13: 24.7482, 14: 17.1041,
    15: 4.4081, 16: 17.0596, 17: 8.5142, 18: 9.0, 19: 38.2615, 20: 39.4626, 21: 9.0165,
    22: 8.5142, 23: 9.0, 24: 38.2615, 25: 39.4625, 26: 9.0165, 27: 6.0, 28: 6.0,
}  # fmt: skip
#: Body mass (kg) implied by Chung's Tables 8.1 and 10.2.
SANTOS_MASS = 78.75
#: Stature (m) of Chung's Table 7.1.
SANTOS_HEIGHT = 1.5934

#: Chung (2009) Table 7.3 (pp. 110–111): joint angle limits, degrees, (lower, upper)
#: by coordinate, as printed.
SANTOS_JOINT_LIMITS = {
    "Q1": (-2.0024, 2.0368), "Q2": (1.0027, 12.0), "Q3": (-15.0177, 15.0521),
    "Q4": (-2.0024, 2.0425), "Q5": (1.0027, 12.0), "Q6": (-1.0, 1.0),
    "Q7": (-2.0024, 2.0368), "Q8": (1.0027, 15.0), "Q9": (-1.0, 1.0),
    "Q10": (-2.0024, 2.0368), "Q11": (1.0027, 15.0), "Q12": (-1.0, 1.0),
    "Q13": (-0.0573, 0.0573), "Q14": (-0.0573, 0.0573), "Q15": (-0.5730, 0.5730),
    "Q16": (-1.0, 1.0), "Q17": (-6.5, -5.5), "Q18": (-91.0, -89.9427),
    "Q19": (-0.5730, 0.5730), "Q20": (-0.5730, 0.5730), "Q21": (-0.5730, 0.5730),
    "Q22": (-0.0573, 0.0573), "Q23": (-0.0573, 0.0573), "Q24": (-0.5730, 0.5730),
    "Q25": (-1.0, 1.0), "Q26": (-6.5, -5.5), "Q27": (-91.0, -89.9427),
    "Q28": (-0.5730, 0.5730), "Q29": (-0.5730, 0.5730), "Q30": (-0.5730, 0.5730),
    "Q31": (-2.0, 2.0), "Q32": (-5.0, 5.0), "Q33": (-5.0, 5.0), "Q34": (-2.0, 2.0),
    "Q35": (-1.0, 1.0),
    "Q36": (-20.0, 10.0), "Q37": (-90.0, 90.0), "Q38": (-20.0, 20.0), "Q39": (10.0, 135.0),
    "Q40": (-20.1175, 54.4721), "Q41": (-10.0, 10.0), "Q42": (-70.8319, 0.0229),
    "Q43": (-20.0, 10.0), "Q44": (-90.0, 90.0), "Q45": (-20.0, 20.0), "Q46": (10.0, 135.0),
    "Q47": (-20.1175, 54.4721), "Q48": (-10.0, 10.0), "Q49": (-70.8319, 0.0229),
}  # fmt: skip

#: Chung (2009) Table 7.5 (p. 113): joint torque limits, N m, (lower, upper) by
#: coordinate, as printed.
SANTOS_TORQUE_LIMITS = {
    "Q1": (-150.0, 150.0), "Q2": (-300.0, 300.0), "Q3": (-150.0, 150.0),
    "Q4": (-40.0, 40.0), "Q5": (-300.0, 300.0), "Q6": (-40.0, 40.0),
    "Q7": (-30.0, 30.0), "Q8": (-300.0, 300.0), "Q9": (-30.0, 30.0),
    "Q10": (-20.0, 20.0), "Q11": (-200.0, 200.0), "Q12": (-20.0, 20.0),
    "Q13": (-50.0, 50.0), "Q14": (-50.0, 50.0), "Q15": (-47.0, 66.0), "Q16": (-92.0, 63.0),
    "Q17": (-27.0, 43.0), "Q18": (-58.7, 60.3), "Q19": (-12.0, 15.0), "Q20": (-11.0, 9.1),
    "Q21": (-6.0, 12.2),
    "Q22": (-50.0, 50.0), "Q23": (-55.0, 50.0), "Q24": (-47.0, 66.0), "Q25": (-92.0, 63.0),
    "Q26": (-27.0, 43.0), "Q27": (-58.7, 60.3), "Q28": (-12.0, 15.0), "Q29": (-11.0, 9.1),
    "Q30": (-6.0, 12.2),
    "Q31": (-27.0, 27.2), "Q32": (-45.0, 23.0), "Q33": (-11.0, 10.0), "Q34": (-30.0, 30.0),
    "Q35": (-30.0, 30.0),
    "Q36": (-120.0, 129.0), "Q37": (-167.0, 204.0), "Q38": (-67.0, 85.0),
    "Q39": (-259.1, 103.2), "Q40": (-37.7, 85.3), "Q41": (-30.1, 30.1), "Q42": (-72.0, 70.0),
    "Q43": (-120.0, 129.0), "Q44": (-167.0, 204.0), "Q45": (-67.0, 85.0),
    "Q46": (-259.1, 103.2), "Q47": (-37.7, 85.3), "Q48": (-30.1, 30.1), "Q49": (-70.0, 70.0),
}  # fmt: skip

#: Segment -> (de Leva segment, carrying DH frame, frame at the table's origin
#: landmark, frame at its end landmark). Points are DH frame origins.
_SEGMENTS = {
    "lower_trunk": ("lower_trunk", "GR3_right_leg", "Q3", ("GR3_right_leg", "GR3_left_leg")),
    "middle_trunk": ("middle_trunk", "Q6", "Q9", "Q3"),
    "upper_trunk": ("upper_trunk", "Q12_right_arm", "Q12_head", "Q9"),
    "head": ("head", "Q35", "Q35", "Q12_head"),
    "upper_arm_r": ("upper_arm_r", "Q17", "Q14", "Q17"),
    "forearm_r": ("forearm_r", "Q19", "Q17", "Q19"),
    "hand_r": ("hand_r", "Q21", "Q19", "Q21"),
    "upper_arm_l": ("upper_arm_l", "Q26", "Q23", "Q26"),
    "forearm_l": ("forearm_l", "Q28", "Q26", "Q28"),
    "hand_l": ("hand_l", "Q30", "Q28", "Q30"),
    "thigh_r": ("thigh_r", "Q38", "Q37", "Q38"),
    "shank_r": ("shank_r", "Q39", "Q38", "Q39"),
    "foot_r": ("foot_r", "Q41", "Q39", "Q42"),
    "thigh_l": ("thigh_l", "Q45", "Q44", "Q45"),
    "shank_l": ("shank_l", "Q46", "Q45", "Q46"),
    "foot_l": ("foot_l", "Q48", "Q46", "Q49"),
}


def santos_rows(scale: float = 1.0) -> list[DHRow]:
    """Chung's Tables 2.1, 2.3 and 2.4 as DH rows (θ, d, a, α; m and rad).

    Parameters
    ----------
    scale : float, optional
        Factor applied to every link length of Table 2.2 (1: as printed).

    Returns
    -------
    list of DHRow
        59 rows; the rows of Q1–Q49 carry the limits of Table 7.3 (rad).

    Examples
    --------
    >>> rows = santos_rows()
    >>> len(rows), rows[2].joint, round(rows[2].d, 6)  # GT3: thigh + shank above the base
    (59, 'prismatic', 0.777241)
    """
    scale = as_positive_float(scale, "scale")
    H = _H

    def ll(*k):
        return scale * sum(SANTOS_LINK_LENGTHS[i] for i in k) / 100.0  # cm -> m

    def lim(name):
        lo, hi = SANTOS_JOINT_LIMITS[name]
        return [float(np.deg2rad(lo)), float(np.deg2rad(hi))]

    P, R = "prismatic", "revolute"
    rows = [
        # Table 2.1: global DOFs; GR3 has one row per child branch
        DHRow("GT1", H, 0, 0, H, P, coordinate="global_trans_x"),
        DHRow("GT2", H, 0, 0, H, P, coordinate="global_trans_y"),
        DHRow("GT3", H, ll(19, 20), 0, H, P, coordinate="global_trans_z"),
        DHRow("GR1", H, 0, 0, H, R, coordinate="global_rotate_x"),
        DHRow("GR2", H, 0, 0, H, R, coordinate="global_rotate_y"),
        DHRow("GR3_right_leg", -H, 0, ll(17), -H, R, coordinate="global_rotate_z"),
        DHRow("GR3_left_leg", H, 0, ll(22), -H, R, parent="GR2", coordinate="global_rotate_z"),
        DHRow("GR3_spine", H, ll(18), 0, H, R, parent="GR2", coordinate="global_rotate_z"),
    ]
    # Table 2.3: spine Q1-Q12 (4 joints x tilt, bend, twist), Q12 branches
    spine = [(H, 0, 0, H), (H, 0, 0, H), (H, ll(1), 0, H), (H, 0, 0, H), (H, 0, 0, H),
             (H, ll(2), 0, H), (H, 0, 0, H), (H, 0, 0, H), (H, ll(3), 0, H), (H, 0, 0, H),
             (H, 0, 0, H)]  # fmt: skip
    parent = "GR3_spine"
    for k, p in enumerate(spine, start=1):
        rows.append(DHRow(f"Q{k}", *p, parent=parent, limits=lim(f"Q{k}")))
        parent = f"Q{k}"
    rows += [
        DHRow("Q12_right_arm", -H, ll(4), ll(5), -H, parent="Q11", coordinate="Q12",
              limits=lim("Q12")),
        DHRow("Q12_left_arm", H, ll(4), ll(10), -H, parent="Q11", coordinate="Q12"),
        DHRow("Q12_head", H, ll(4, 15), 0, H, parent="Q11", coordinate="Q12"),
    ]  # fmt: skip
    branches = {
        "Q12_right_arm": [(13, 0, 0, 0, H), (14, 0, 0, ll(6), -H), (15, 0, 0, 0, H),
                          (16, H, 0, 0, H), (17, H, ll(7), 0, H), (18, 0, 0, 0, -H),
                          (19, 0, ll(8), 0, H), (20, H, 0, 0, H), (21, 0, 0, ll(9), 0)],
        "Q12_left_arm": [(22, 0, 0, 0, -H), (23, 0, 0, ll(11), H), (24, 0, 0, 0, -H),
                         (25, -H, 0, 0, H), (26, H, -ll(12), 0, H), (27, 0, 0, 0, -H),
                         (28, 0, -ll(13), 0, H), (29, -H, 0, 0, -H), (30, 0, 0, ll(14), 0)],
        "Q12_head": [(31, H, 0, 0, H), (32, H, 0, 0, H), (33, H, ll(16), 0, H),
                     (34, H, 0, 0, H), (35, 0, 0, 0, 0)],
        # Table 2.4: legs
        "GR3_right_leg": [(36, H, 0, 0, -H), (37, -H, 0, 0, H), (38, 0, -ll(19), 0, -H),
                          (39, H, 0, ll(20), 0), (40, 0, 0, 0, H), (41, 0, ll(21), 0, -H),
                          (42, -H, 0, ll(27), 0)],
        "GR3_left_leg": [(43, -H, 0, 0, -H), (44, -H, 0, 0, H), (45, 0, ll(24), 0, -H),
                         (46, H, 0, -ll(25), 0), (47, 0, 0, 0, H), (48, 0, -ll(26), 0, -H),
                         (49, H, 0, ll(28), 0)],
    }  # fmt: skip
    for parent, chain in branches.items():
        for k, *p in chain:
            rows.append(DHRow(f"Q{k}", *p, parent=parent, limits=lim(f"Q{k}")))
            parent = f"Q{k}"
    return rows


def _turn(a, b):
    """Rotation matrix turning unit vector a onto unit vector b."""
    v, c = np.cross(a, b), float(a @ b)
    if c < -1 + 1e-12:  # opposite: half turn about any perpendicular axis
        p = np.eye(3)[int(np.argmin(np.abs(a)))]
        p = np.cross(a, p) / np.linalg.norm(np.cross(a, p))
        return 2 * np.outer(p, p) - np.eye(3)
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)


def santos_model(
    *, mass: float = SANTOS_MASS, height: float = SANTOS_HEIGHT, gravity=(0.0, 0.0, -9.81)
):
    """The 55-DOF Santos skeleton: Chung's DH tables, joint limits and de Leva inertias.

    Parameters
    ----------
    mass : float, optional
        Body mass, kg (default 78.75, the mass implied by Chung's tables).
    height : float, optional
        Stature, m (default 1.5934, Chung's); the link lengths of Table 2.2
        are scaled by ``height / 1.5934``.
    gravity : array_like, shape (3,), optional
        m/s², in ahbm's world (z up).

    Returns
    -------
    Model
        59 bodies (one per DH row, named as the rows: ``GT1`` ... ``GR3_spine``,
        ``Q1`` ... ``Q49``, the branch rows ``Q12_right_arm``, ``Q12_left_arm``,
        ``Q12_head``), nq = nv = 55: coordinates ``global_trans_x/y/z``
        (prismatic, m), ``global_rotate_x/y/z`` and ``Q1`` ... ``Q49``
        (revolute, rad). Joints Q1–Q49 carry Chung's Table 7.3 limits in rad
        (:func:`ahbm.kinematics.joint_bounds`).

    Raises
    ------
    DataError
        A non-positive mass or height.

    Notes
    -----
    Module docstring: the DH tables (Chung 2009, Tables 2.1–2.4), the limits
    (Table 7.3) and where the inertias come from (de Leva 1996, not the
    source).

    Examples
    --------
    >>> from ahbm.kinematics import joint_bounds
    >>> m = santos_model()
    >>> m.nq, m.n_bodies, round(m.total_mass, 6)
    (55, 59, 78.75)
    >>> lo, hi = joint_bounds(m)
    >>> round(float(np.rad2deg(hi[m.coordinate_names.index("Q39")])), 6)  # right knee
    135.0
    """
    mass = as_positive_float(mass, "mass", unit="kg")
    height = as_positive_float(height, "height", unit="m")
    base = np.eye(4)
    base[:3, :3] = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]  # Chung's (x, y, z) -> ahbm's (y, z, x)
    model = dh_model(santos_rows(height / SANTOS_HEIGHT), name="santos", base=base)
    model.gravity = gravity
    T = forward_kinematics(model, np.zeros(model.nq)).transforms  # home pose
    index = {n: i for i, n in enumerate(model.body_names)}

    def point(rows):
        rows = (rows,) if isinstance(rows, str) else rows
        return np.mean([T[index[r], :3, 3] for r in rows], axis=0)

    ends = {k: (point(v[2]), point(v[3])) for k, v in _SEGMENTS.items()}
    lengths = {
        v[0]: float(np.linalg.norm(e - o))
        for v, (o, e) in zip(_SEGMENTS.values(), ends.values(), strict=True)
    }
    bsp = segment_parameters("de_leva_3trunk", mass=mass, height=height, sex="male",
                             segment_lengths=lengths)  # fmt: skip
    for key, (seg, carrier, _, _) in _SEGMENTS.items():
        p = bsp[seg]
        o, e = ends[key]
        u = (e - o) / np.linalg.norm(e - o)
        long = np.array([1.0, 0, 0]) if seg.startswith("foot") else np.array([0, 0, -1.0])
        com_world = o + (p.com @ long) * u  # the table's fraction along the segment
        Tc = T[index[carrier]]
        Rc = Tc[:3, :3]
        Rw = _turn(long, u)  # table segment axes -> world, long axis along the segment
        model.update_body(
            carrier,
            mass=p.mass,
            com=Rc.T @ (com_world - Tc[:3, 3]),
            inertia=Rc.T @ Rw @ p.inertia @ Rw.T @ Rc,
        )
    return model
