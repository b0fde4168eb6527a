"""Fifteen-segment whole-body human model (AHBM report §5.2.3).

Segments: pelvis (root, free joint), abdomen, thorax, neck, head, upper arms,
forearms+hands, thighs, shanks and feet, connected by 14 joints of mixed
types. Frames: x forward, y to the left, z up; in the neutral configuration
the model stands upright with the hip-joint centres at the pelvis origin.

Body-segment parameters are read from the ``"heiman"`` table of
:mod:`ahbm.bsp.tables`: de Leva (1996) ratios as tabulated for the HeiMan
model in Felis (2015), Tables 4.3-4.5, with the two corrections documented
there (middle-trunk length 0.1238 H, pelvis sagittal radius 0.615). Segment
names map as abdomen = ``middle_trunk``, thorax = ``upper_trunk``, forearm =
``lower_arm``. Three choices are this model's own, not the table's: the
table's head includes the neck (the neck row has no mass), so a quarter of
the head mass is given to the neck, whose COM is at mid-length and whose
radii are the head's; the foot COM is measured forward from the heel along
the foot's x axis (0.4415 of its length; the table gives it along the
segment's -z axis); and the radii of gyration are mapped to body axes as
sagittal -> y, transverse -> x, longitudinal -> z (x for the foot). The
hip half-width (0.0461 H, Dumas et al. 2007), foot height (0.0468 H) and
heel offset behind the ankle (0.0400 H) are Felis's Table 4.3 values (the
foot's are marked there as guesses); the shoulder half-width (0.1 H) and the
shoulder centre's drop below the top of the thorax (0.2 of its length) are
placeholder proportions of this model.
"""

from __future__ import annotations

import numpy as np

from ahbm.bsp.tables import get_table
from ahbm.errors import ModelError
from ahbm.kinematics.tree import Model

__all__ = ["human15", "HUMAN15_PARAMETERS"]


def _parameters() -> dict:
    """Ratios of the segments from the HeiMan table of :mod:`ahbm.bsp.tables`."""
    rows = get_table("heiman").segments["male"]

    def row(name, **override):
        r = rows[name]
        return {"length": r.length, "mass": r.mass, "com": r.com[2], "r": r.radii} | override

    head = rows["head"]
    return {
        "pelvis": row("pelvis"),
        "abdomen": row("middle_trunk"),
        "thorax": row("upper_trunk"),
        "neck": row("neck", mass=head.mass * 0.25, com=0.5, r=head.radii),
        "head": row("head", mass=head.mass * 0.75),
        "upper_arm": row("upper_arm"),
        "forearm": row("lower_arm"),
        "hand": row("hand"),
        "thigh": row("thigh"),
        "shank": row("shank"),
        "foot": row("foot", com=-rows["foot"].com[2]),
    }


#: Segment parameters: length / height, mass / body mass, COM along the
#: segment z axis / length (the foot: along x from the heel), radii of
#: gyration / length (sagittal, transverse, longitudinal). From the HeiMan
#: table of :mod:`ahbm.bsp.tables` (de Leva 1996 via Felis 2015, Tables
#: 4.3-4.5); see the module docstring for the neck, foot and axis choices.
HUMAN15_PARAMETERS = _parameters()
_HIP_HALF_WIDTH = 0.0461  # / height (Dumas et al. 2007 via Felis 2015)
_SHOULDER_HALF_WIDTH = 0.1000  # / height (placeholder proportion)
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


def human15(*, mass: float = 75.0, height: float = 1.8, gravity=(0.0, 0.0, -9.81)) -> Model:
    """Build the 15-segment, 14-joint whole-body human model.

    Parameters
    ----------
    mass : float, optional
        Body mass, kg (default 75).
    height : float, optional
        Standing height, m (default 1.8).
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
    1994 parameters, about 75 kg and 1.8 m). The segment parameters here are
    de Leva (1996) ratios from the HeiMan table of :mod:`ahbm.bsp.tables`
    (see the module docstring).

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
