"""The markers of the HeiMan-like model: sole landmarks and a Plug-in Gait marker set.

Private to :mod:`ahbm.models.heiman`, which documents the placement rules
(:func:`ahbm.models.heiman.heiman_model`, Notes). Frames are HeiMan's: x
anterior, y to the left, z up, each body's origin at its proximal joint.
"""

from __future__ import annotations

import numpy as np

from ahbm.kinematics.joint_centres import hip_joint_centre_davis

#: Dimensions of the Plug-in Gait placement / stature: joint widths (knee and
#: ankle as ahbm.gait's lower-extremity model: 105 mm and 72 mm at 1.75 m;
#: elbow 70 mm, wrist 58 mm) and distances of the skin under a marker from the
#: segment axis (typical adult values: HeiMan has no surface geometry).
HEIMAN_MARKER_DIMENSIONS = {
    "knee_width": 0.0600,
    "ankle_width": 0.0411,
    "elbow_width": 0.0400,
    "wrist_width": 0.0330,
    "pelvis_depth": 0.0914,  # mid-ASIS to mid-PSIS, along the pelvis x axis
    "psis_distance": 0.0500,  # between the PSIS
    "thigh_wand": 0.0500,  # THI from the femur axis, laterally
    "shank_wand": 0.0400,  # TIB from the tibia axis, laterally
    "upper_arm": 0.0300,  # UPA from the humerus axis, laterally
    "forearm": 0.0250,  # FRM from the forearm axis, laterally
    "hand_thickness": 0.0180,  # FIN on the back of the hand
    "toe_height": 0.0170,  # TOE and HEE above the sole (skin)
    "toe_fraction": 0.72,  # TOE: second metatarsal head, fraction of the foot from the heel
    "knuckle_fraction": 0.46,  # FIN: third metacarpal head, fraction of the hand
    "acromion": 0.0250,  # SHO above the shoulder joint centre
    "jugular": 0.0350,  # CLAV in front of the trunk axis at the suprasternal notch
    "c7_back": 0.0400,  # C7 behind the trunk axis
    "c7_up": 0.0200,  # C7 above the suprasternal notch
    "xiphoid": 0.0550,  # STRN in front of the trunk axis at the xiphoid
    "t10_back": 0.0600,  # T10 behind the trunk axis at the xiphoid level
    "scapula_back": 0.0550,  # RBAK behind the trunk axis
    "scapula_side": 0.0650,  # RBAK to the right of it
    "scapula_down": 0.0500,  # RBAK below the shoulder centres
    "head_markers_down": 0.0450,  # head markers below the vertex
    "front_head": (0.0400, 0.0370),  # FHD forward, sideways of the head axis
    "back_head": (-0.0500, 0.0300),  # BHD backward, sideways
}

#: Plug-in Gait marker names of the HeiMan model (lower body, then upper body).
PLUG_IN_GAIT_NAMES = (
    "LASI", "RASI", "LPSI", "RPSI", "SACR",
    "LTHI", "LKNE", "LTIB", "LANK", "LHEE", "LTOE",
    "RTHI", "RKNE", "RTIB", "RANK", "RHEE", "RTOE",
    "LFHD", "RFHD", "LBHD", "RBHD", "C7", "T10", "CLAV", "STRN", "RBAK",
    "LSHO", "LUPA", "LELB", "LFRM", "LWRA", "LWRB", "LFIN",
    "RSHO", "RUPA", "RELB", "RFRM", "RWRA", "RWRB", "RFIN",
)  # fmt: skip


def _asis(leg_length, hip_half_width, r):
    """Mid-ASIS (pelvis frame) and ASIS half distance putting Davis' hip centres at ±w."""
    d0 = 0.25
    h = hip_joint_centre_davis(
        leg_length=leg_length, inter_asis_distance=d0, side="right", marker_radius=r
    )
    # ISB pelvis frame (x anterior, y up, z right): z = a - C sin(theta)
    c_sin = 0.5 * d0 - h[2]
    a = hip_half_width + c_sin
    return np.array([-h[0], 0.0, -h[1]]), a


def plug_in_gait_markers(p, H, widths, marker_radius):
    """Markers by body and the subject measurements of Plug-in Gait.

    ``p``: the HeiMan segment parameters; ``widths``: ``HEIMAN_WIDTHS``.
    Returns ``(markers, measurements)``: body name -> {marker: position} and
    the dict of :func:`ahbm.models.heiman.heiman_plug_in_gait_measurements`.
    """
    D = {k: (np.multiply(v, H) if k[-8:] not in ("fraction",) else v)
         for k, v in HEIMAN_MARKER_DIMENSIONS.items()}  # fmt: skip
    r = float(marker_radius)
    w = widths["hip"] * H
    Lt, Ls = p["thigh_r"].length, p["shank_r"].length
    Lf = p["foot_r"].length
    heel, sole = -widths["foot_posterior"] * H, -widths["foot_height"] * H
    kw, aw, ew, ww = D["knee_width"], D["ankle_width"], D["elbow_width"], D["wrist_width"]
    # leg length (ASIS to the medial malleolus via the knee, standing), a fixed point:
    # the ASIS position depends on it through the Davis regression
    leg = Lt + Ls + 0.1
    for _ in range(100):
        mid, a = _asis(leg, w, r)
        asis = mid + [0.0, -a, 0.0]
        kjc = np.array([0.0, -w, -Lt])
        mm = kjc + [0.0, aw / 2, -Ls]  # medial: towards +y on the right side
        new = float(np.linalg.norm(asis - kjc) + np.linalg.norm(mm - kjc))
        if abs(new - leg) < 1e-14:
            break
        leg = new
    mid, a = _asis(leg, w, r)
    out = {}
    psis_x = mid[0] - D["pelvis_depth"]
    out["pelvis"] = {
        "LASI": mid + [0.0, a, 0.0],
        "RASI": mid + [0.0, -a, 0.0],
        "LPSI": np.array([psis_x, D["psis_distance"] / 2, mid[2]]),
        "RPSI": np.array([psis_x, -D["psis_distance"] / 2, mid[2]]),
        "SACR": np.array([psis_x, 0.0, mid[2]]),
    }
    f = D["toe_height"] + r
    for s, P, sign in (("r", "R", -1.0), ("l", "L", 1.0)):
        out[f"thigh_{s}"] = {
            P + "THI": np.array([0.0, sign * D["thigh_wand"], -2.0 / 3.0 * Lt]),
            P + "KNE": np.array([0.0, sign * (kw / 2 + r), -Lt]),
        }
        out[f"shank_{s}"] = {
            P + "TIB": np.array([0.0, sign * D["shank_wand"], -2.0 / 3.0 * Ls]),
            P + "ANK": np.array([0.0, sign * (aw / 2 + r), -Ls]),
        }
        out[f"foot_{s}"] = {
            P + "HEE": np.array([heel - r, 0.0, sole + f]),
            P + "TOE": np.array([heel + D["toe_fraction"] * Lf, 0.0, sole + f]),
            f"heel_{s}": np.array([heel, 0.0, sole]),
            f"toe_{s}": np.array([heel + Lf, 0.0, sole]),
        }
        Lua, Lla = p[f"upper_arm_{s}"].length, p[f"lower_arm_{s}"].length
        out[f"clavicula_{s}"] = {
            P + "SHO": np.array([0.0, sign * p[f"clavicula_{s}"].length, D["acromion"] + r])
        }
        upa = 0.5 if s == "l" else 2.0 / 3.0  # asymmetric, so that sides can be told apart
        out[f"upper_arm_{s}"] = {
            P + "UPA": np.array([0.0, sign * (D["upper_arm"] + r), -upa * Lua]),
            P + "ELB": np.array([0.0, sign * (ew / 2 + r), -Lua]),
        }
        frm = 2.0 / 3.0 if s == "l" else 0.5
        out[f"lower_arm_{s}"] = {
            P + "FRM": np.array([0.0, sign * (D["forearm"] + r), -frm * Lla]),
            P + "WRA": np.array([0.0, sign * (ww / 2 + r), -Lla]),  # thumb side: lateral
            P + "WRB": np.array([0.0, -sign * (ww / 2 + r), -Lla]),
        }
        knuckle = D["knuckle_fraction"] * p[f"hand_{s}"].length
        out[f"hand_{s}"] = {P + "FIN": np.array([-(D["hand_thickness"] / 2 + r), 0.0, -knuckle])}
    Lup = p["upper_trunk"].length
    out["upper_trunk"] = {
        "C7": np.array([-(D["c7_back"] + r), 0.0, Lup + D["c7_up"]]),
        "T10": np.array([-(D["t10_back"] + r), 0.0, 0.0]),
        "CLAV": np.array([D["jugular"] + r, 0.0, Lup]),
        "STRN": np.array([D["xiphoid"] + r, 0.0, 0.0]),
        "RBAK": np.array([-(D["scapula_back"] + r), -D["scapula_side"], Lup - D["scapula_down"]]),
    }
    Lh = p["head"].length
    z = Lh - D["head_markers_down"]
    (fx, fy), (bx, by) = D["front_head"], D["back_head"]
    out["head"] = {
        "LFHD": np.array([fx, fy, z]),
        "RFHD": np.array([fx, -fy, z]),
        "LBHD": np.array([bx, by, z]),
        "RBHD": np.array([bx, -by, z]),
        "vertex": np.array([0.0, 0.0, Lh]),
    }
    measurements = {
        "leg_length": leg,
        "inter_asis_distance": float(2.0 * a),
        "knee_width": float(kw),
        "ankle_width": float(aw),
        "elbow_width": float(ew),
        "wrist_width": float(ww),
        "marker_radius": r,
    }
    return out, measurements
