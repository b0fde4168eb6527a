"""Fifteen-segment whole-body human model (AHBM report §5.2.3).

Segments: pelvis (root, free joint), abdomen, thorax, neck, head, upper arms,
forearms+hands, thighs, shanks and feet, connected by 14 joints of mixed
types. Frames: x forward, y to the left, z up; in the neutral configuration
the model stands upright with the hip-joint centres at the pelvis origin.

Body-segment parameters are placeholders until ahbm.bsp provides the
regressions: segment lengths, mass fractions, COM positions and radii of
gyration are de Leva (1996) ratios as tabulated for the HeiMan model in
Felis (2015), Tables 4.3-4.5, with two corrections documented there
(middle-trunk length 0.1238 H, pelvis sagittal radius 0.615). The de Leva
head segment includes the neck; here a quarter of its mass is given to the
neck (a placeholder choice). Radii of gyration are mapped to body axes as
sagittal -> y, transverse -> x, longitudinal -> z (x for the foot).
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import ModelError
from ahbm.kinematics.tree import Model

__all__ = ["human15", "HUMAN15_PARAMETERS"]

#: Placeholder segment parameters: length / height, mass / body mass, COM
#: along the segment z axis / length, radii of gyration / length
#: (sagittal, transverse, longitudinal). Source: de Leva (1996) via Felis
#: (2015) Tables 4.3-4.5.
HUMAN15_PARAMETERS = {
    "pelvis": {"length": 0.0837, "mass": 0.1117, "com": 0.3884, "r": (0.615, 0.551, 0.587)},
    "abdomen": {"length": 0.1238, "mass": 0.1633, "com": 0.5498, "r": (0.482, 0.383, 0.468)},
    "thorax": {"length": 0.0980, "mass": 0.1596, "com": 0.7001, "r": (0.716, 0.454, 0.659)},
    "neck": {"length": 0.0638, "mass": 0.0694 * 0.25, "com": 0.5, "r": (0.362, 0.376, 0.312)},
    "head": {"length": 0.1168, "mass": 0.0694 * 0.75, "com": 0.4024, "r": (0.362, 0.376, 0.312)},
    "upper_arm": {"length": 0.1618, "mass": 0.0271, "com": -0.5772, "r": (0.285, 0.269, 0.158)},
    "forearm": {"length": 0.1545, "mass": 0.0162, "com": -0.4574, "r": (0.276, 0.265, 0.121)},
    "hand": {"length": 0.1079, "mass": 0.0061, "com": -0.3624, "r": (0.288, 0.235, 0.184)},
    "thigh": {"length": 0.2425, "mass": 0.1416, "com": -0.4095, "r": (0.329, 0.329, 0.149)},
    "shank": {"length": 0.2529, "mass": 0.0433, "com": -0.4458, "r": (0.255, 0.249, 0.103)},
    "foot": {"length": 0.1462, "mass": 0.0137, "com": 0.4415, "r": (0.257, 0.245, 0.124)},
}
_HIP_HALF_WIDTH = 0.0461  # / height (Dumas et al. 2007 via Felis 2015)
_SHOULDER_HALF_WIDTH = 0.1000  # / height (placeholder)
_SHOULDER_DROP = 0.2  # shoulder centre below the top of the thorax, / thorax length
_FOOT_HEIGHT = 0.0468  # ankle above the sole, / height
_FOOT_POSTERIOR = 0.0400  # heel behind the ankle, / height


def _segment(name, height, mass):
    p = HUMAN15_PARAMETERS[name]
    length = p["length"] * height
    m = p["mass"] * mass
    rs, rt, rl = p["r"]
    inertia = np.diag([(rt * length) ** 2 * m, (rs * length) ** 2 * m, (rl * length) ** 2 * m])
    com = np.array([0.0, 0.0, p["com"] * length])
    return length, m, com, inertia


def _combine(parts):
    """Mass, COM and inertia about the COM of rigidly joined parts (m, c, I)."""
    m = sum(pm for pm, _, _ in parts)
    c = sum(pm * pc for pm, pc, _ in parts) / m
    inertia = np.zeros((3, 3))
    for pm, pc, pI in parts:
        d = pc - c
        inertia += pI + pm * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, inertia


def human15(*, height: float = 1.8, mass: float = 75.0, gravity=(0.0, 0.0, -9.81)) -> Model:
    """Build the 15-segment, 14-joint whole-body human model.

    Parameters
    ----------
    height : float, optional
        Standing height, m (default 1.8).
    mass : float, optional
        Body mass, kg (default 75).
    gravity : array_like, shape (3,), optional
        Gravity in the world frame, m/s^2.

    Returns
    -------
    Model
        15 bodies, nq = 42, nv = 38. Joints: ``pelvis`` (free, root),
        ``lumbar`` and ``thoracic`` (Euler YXZ), ``lower_neck`` (spherical),
        ``upper_neck`` (Euler YXZ), ``shoulder_r/l`` (spherical), ``elbow_r/l``
        (revolute, flexion positive), ``hip_r/l`` (Euler YXZ: flexion,
        adduction/abduction, rotation), ``knee_r/l`` (revolute, flexion
        positive), ``ankle_r/l`` (universal YX). Markers: ``heel``, ``toe``
        on the feet, ``vertex`` on the head.

    Raises
    ------
    ModelError
        Non-positive height or mass.

    Notes
    -----
    Structure from Stuhmiller & Shen (2000), AHBM report §5.2.3 (Cheng et al.
    1994 parameters, about 75 kg and 1.8 m). Parameters here are the
    placeholders described in the module docstring (de Leva 1996 ratios).

    Examples
    --------
    >>> m = human15()
    >>> m.n_bodies, m.nq, m.nv, round(m.total_mass, 6)
    (15, 42, 38, 75.0)
    """
    try:
        H = float(height)
        M = float(mass)
    except (TypeError, ValueError) as err:
        raise ModelError("human15: `height` and `mass` must be numbers") from err
    if not (np.isfinite(H) and H > 0 and np.isfinite(M) and M > 0):
        raise ModelError(f"human15: height ({height!r} m) and mass ({mass!r} kg) must be > 0")
    model = Model("human15", gravity)
    euler = {"type": "euler", "sequence": "YXZ"}

    def add(name, parent, joint, jname, position, seg):
        length, m, com, inertia = seg
        model.add_body(
            name,
            parent,
            dict(joint, name=jname),
            position=position,
            mass=m,
            com=com,
            inertia=inertia,
        )
        return length

    Lp = add("pelvis", "ground", {"type": "free"}, "pelvis", [0, 0, 0], _segment("pelvis", H, M))
    La = add("abdomen", "pelvis", euler, "lumbar", [0, 0, Lp], _segment("abdomen", H, M))
    Lt = add("thorax", "abdomen", euler, "thoracic", [0, 0, La], _segment("thorax", H, M))
    Ln = add(
        "neck", "thorax", {"type": "spherical"}, "lower_neck", [0, 0, Lt], _segment("neck", H, M)
    )
    Lh = add("head", "neck", euler, "upper_neck", [0, 0, Ln], _segment("head", H, M))
    model.update_body("head", markers={"vertex": [0.0, 0.0, Lh]})

    # forearm + hand as one rigid segment
    Lf, mf, cf, If = _segment("forearm", H, M)
    Lhd, mh, ch, Ih = _segment("hand", H, M)
    m_fh, c_fh, I_fh = _combine([(mf, cf, If), (mh, ch + [0, 0, -Lf], Ih)])

    for side, sign in (("r", -1.0), ("l", 1.0)):
        Lu = add(
            f"upper_arm_{side}",
            "thorax",
            {"type": "spherical"},
            f"shoulder_{side}",
            [0, sign * _SHOULDER_HALF_WIDTH * H, (1 - _SHOULDER_DROP) * Lt],
            _segment("upper_arm", H, M),
        )
        add(
            f"forearm_{side}",
            f"upper_arm_{side}",
            {"type": "revolute", "axis": [0, -1, 0]},
            f"elbow_{side}",
            [0, 0, -Lu],
            (Lf + Lhd, m_fh, c_fh, I_fh),
        )
    for side, sign in (("r", -1.0), ("l", 1.0)):
        Lth = add(
            f"thigh_{side}",
            "pelvis",
            euler,
            f"hip_{side}",
            [0, sign * _HIP_HALF_WIDTH * H, 0],
            _segment("thigh", H, M),
        )
        Ls = add(
            f"shank_{side}",
            f"thigh_{side}",
            {"type": "revolute", "axis": [0, 1, 0]},
            f"knee_{side}",
            [0, 0, -Lth],
            _segment("shank", H, M),
        )
        Lfoot, mfoot, _, _ = _segment("foot", H, M)
        rs, rt, rl = HUMAN15_PARAMETERS["foot"]["r"]
        heel = -_FOOT_POSTERIOR * H
        com = np.array(
            [heel + HUMAN15_PARAMETERS["foot"]["com"] * Lfoot, 0.0, -0.5 * _FOOT_HEIGHT * H]
        )
        inertia = np.diag(
            [(rl * Lfoot) ** 2 * mfoot, (rs * Lfoot) ** 2 * mfoot, (rt * Lfoot) ** 2 * mfoot]
        )
        add(
            f"foot_{side}",
            f"shank_{side}",
            {"type": "universal", "sequence": "YX"},
            f"ankle_{side}",
            [0, 0, -Ls],
            (Lfoot, mfoot, com, inertia),
        )
        model.update_body(
            f"foot_{side}",
            markers={
                "heel": [heel, 0.0, -_FOOT_HEIGHT * H],
                "toe": [heel + Lfoot, 0.0, -_FOOT_HEIGHT * H],
            },
        )
    return model
