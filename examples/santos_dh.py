"""The 55-DOF Santos skeleton of Chung (2009) built from its Denavit–Hartenberg table.

Chung's running model "Santos" (seed 003: Chung 2009, *Optimization-based
dynamic prediction of 3D human running*, §2.3) is defined by DH tables: Table
2.1 (the six global DOFs, three prismatic and three revolute, the last one
branching to the right leg, the left leg and the spine), Tables 2.3–2.4 (49
body DOFs, the upper spine Q12 branching to the right arm, the left arm and
the head) and Table 2.2 (link lengths, cm). This script copies those tables
(standard convention, ``Rz(θ + q) Tz(d) Tx(a) Rx(α)``, Chung eq. 2.4) into
:func:`ahbm.kinematics.dh_model`, where each branch point is one coordinate
with one row per child branch, so the model has 55 coordinates (59 DH rows:
GR3 and Q12 have three rows each). The tabulated θ (and d of the prismatic
rows) give the home pose at ``q = 0``, Chung's starting point.

**Masses and inertias are not in the seed** (Chung calls them approximated
and gives no table). They are taken here from de Leva's (1996) table with a
three-part trunk (:func:`ahbm.bsp.segment_parameters`, ``"de_leva_3trunk"``,
male), for a body mass of 78.75 kg (the mass implied by the seed's ground
reactions given both in body weights and in newtons, Tables 8.1 and 10.2)
and the seed's stature 1.5934 m, with the segment lengths of Table 2.2. Each
segment's centre of mass lies on the line between the origins of the two DH
frames that bound it (the table's longitudinal fraction), its inertia is the
table's, turned so that its long axis follows that line; the segment is
carried by the last DH frame of its proximal joint. The clavicles, the toes
and the neck links are massless. Which link is which (thigh, shank, ...) is
inferred from the tables (the seed's Figure 2.11 is missing).

The DH base frame is Chung's global frame (ground = x-z plane, y up, z
forward); it is turned into ahbm's world (x forward, y left, z up) with
``base=`` (Chung's x, y, z → ahbm's y, z, x).

Usage: ``python examples/santos_dh.py [OUTPUT_FOLDER] [--quick]`` writes
``santos_dh.png`` (the skeleton at the home pose and in a running-like pose)
and prints the vertical ground reaction under each foot of Santos standing
still at the home pose, found from the kinematics alone by
:func:`ahbm.dynamics.inverse_dynamics_wls` (``grf=None``, Chung's two-part
algorithm with the six global DOFs unactuated).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.bsp import segment_parameters
from ahbm.dynamics import inverse_dynamics_wls
from ahbm.kinematics import DHRow, dh_model, forward_kinematics

H = np.pi / 2
#: Table 2.2, link lengths in cm (L23 is not used by the tables).
L = {
    1: 5.6267, 2: 5.44274, 3: 5.99962, 4: 17.3856, 5: 1.70799, 6: 15.057, 7: 25.8638,
    8: 24.7374, 9: 16.5099, 10: 1.70799, 11: 14.175, 12: 25.9194, 13: 24.7482, 14: 17.1041,
    15: 4.4081, 16: 17.0596, 17: 8.5142, 18: 9.0, 19: 38.2615, 20: 39.4626, 21: 9.0165,
    22: 8.5142, 23: 9.0, 24: 38.2615, 25: 39.4625, 26: 9.0165, 27: 6.0, 28: 6.0,
}  # fmt: skip
MASS, HEIGHT = 78.75, 1.5934


def _l(*k):
    return sum(L[i] for i in k) / 100.0  # cm -> m


def santos_rows() -> list[DHRow]:
    """Chung's Tables 2.1, 2.3 and 2.4 as DH rows (θ, d, a, α; m and rad)."""
    P, R = "prismatic", "revolute"
    rows = [
        # Table 2.1: global DOFs; GR3 has one row per child branch
        DHRow("GT1", H, 0, 0, H, P, coordinate="global_trans_x"),
        DHRow("GT2", H, 0, 0, H, P, coordinate="global_trans_y"),
        DHRow("GT3", H, _l(19, 20), 0, H, P, coordinate="global_trans_z"),
        DHRow("GR1", H, 0, 0, H, R, coordinate="global_rotate_x"),
        DHRow("GR2", H, 0, 0, H, R, coordinate="global_rotate_y"),
        DHRow("GR3_right_leg", -H, 0, _l(17), -H, R, coordinate="global_rotate_z"),
        DHRow("GR3_left_leg", H, 0, _l(22), -H, R, parent="GR2", coordinate="global_rotate_z"),
        DHRow("GR3_spine", H, _l(18), 0, H, R, parent="GR2", coordinate="global_rotate_z"),
    ]
    # Table 2.3: spine Q1-Q12 (4 joints x tilt, bend, twist), Q12 branches
    spine = [(H, 0, 0, H), (H, 0, 0, H), (H, _l(1), 0, H), (H, 0, 0, H), (H, 0, 0, H),
             (H, _l(2), 0, H), (H, 0, 0, H), (H, 0, 0, H), (H, _l(3), 0, H), (H, 0, 0, H),
             (H, 0, 0, H)]  # fmt: skip
    parent = "GR3_spine"
    for k, p in enumerate(spine, start=1):
        rows.append(DHRow(f"Q{k}", *p, parent=parent))
        parent = f"Q{k}"
    rows += [
        DHRow("Q12_right_arm", -H, _l(4), _l(5), -H, parent="Q11", coordinate="Q12"),
        DHRow("Q12_left_arm", H, _l(4), _l(10), -H, parent="Q11", coordinate="Q12"),
        DHRow("Q12_head", H, _l(4, 15), 0, H, parent="Q11", coordinate="Q12"),
    ]
    branches = {
        "Q12_right_arm": [(13, 0, 0, 0, H), (14, 0, 0, _l(6), -H), (15, 0, 0, 0, H),
                          (16, H, 0, 0, H), (17, H, _l(7), 0, H), (18, 0, 0, 0, -H),
                          (19, 0, _l(8), 0, H), (20, H, 0, 0, H), (21, 0, 0, _l(9), 0)],
        "Q12_left_arm": [(22, 0, 0, 0, -H), (23, 0, 0, _l(11), H), (24, 0, 0, 0, -H),
                         (25, -H, 0, 0, H), (26, H, -_l(12), 0, H), (27, 0, 0, 0, -H),
                         (28, 0, -_l(13), 0, H), (29, -H, 0, 0, -H), (30, 0, 0, _l(14), 0)],
        "Q12_head": [(31, H, 0, 0, H), (32, H, 0, 0, H), (33, H, _l(16), 0, H),
                     (34, H, 0, 0, H), (35, 0, 0, 0, 0)],
        # Table 2.4: legs
        "GR3_right_leg": [(36, H, 0, 0, -H), (37, -H, 0, 0, H), (38, 0, -_l(19), 0, -H),
                          (39, H, 0, _l(20), 0), (40, 0, 0, 0, H), (41, 0, _l(21), 0, -H),
                          (42, -H, 0, _l(27), 0)],
        "GR3_left_leg": [(43, -H, 0, 0, -H), (44, -H, 0, 0, H), (45, 0, _l(24), 0, -H),
                         (46, H, 0, -_l(25), 0), (47, 0, 0, 0, H), (48, 0, -_l(26), 0, -H),
                         (49, H, 0, _l(28), 0)],
    }  # fmt: skip
    for parent, chain in branches.items():
        for k, *p in chain:
            rows.append(DHRow(f"Q{k}", *p, parent=parent))
            parent = f"Q{k}"
    return rows


#: Segment -> (de Leva segment, carrying DH frame, frame at the table's origin
#: landmark, frame at its end landmark). Points are DH frame origins.
SEGMENTS = {
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


def _turn(a, b):
    """Rotation matrix turning unit vector a onto unit vector b."""
    v, c = np.cross(a, b), float(a @ b)
    if c < -1 + 1e-12:  # opposite: half turn about any perpendicular axis
        p = np.eye(3)[int(np.argmin(np.abs(a)))]
        p = np.cross(a, p) / np.linalg.norm(np.cross(a, p))
        return 2 * np.outer(p, p) - np.eye(3)
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)


def santos_model():
    """The Santos model: DH kinematics (Chung 2009) with de Leva inertias (not in the seed)."""
    base = np.eye(4)
    base[:3, :3] = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]  # Chung's (x, y, z) -> ahbm's (y, z, x)
    model = dh_model(santos_rows(), name="santos", base=base)
    T = forward_kinematics(model, np.zeros(model.nq)).transforms  # home pose
    index = {n: i for i, n in enumerate(model.body_names)}

    def point(rows):
        rows = (rows,) if isinstance(rows, str) else rows
        return np.mean([T[index[r], :3, 3] for r in rows], axis=0)

    ends = {k: (point(v[2]), point(v[3])) for k, v in SEGMENTS.items()}
    lengths = {
        v[0]: float(np.linalg.norm(e - o))
        for v, (o, e) in zip(SEGMENTS.values(), ends.values(), strict=True)
    }
    bsp = segment_parameters("de_leva_3trunk", mass=MASS, height=HEIGHT, sex="male",
                             segment_lengths=lengths)  # fmt: skip
    for key, (seg, carrier, _, _) in SEGMENTS.items():
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


def running_pose(model) -> np.ndarray:
    """A running-like pose: hips flexed/extended, arms swinging, knees and elbows bent."""
    q = np.zeros(model.nq)
    names = model.coordinate_names
    pose = {
        "Q37": -0.6, "Q39": 0.9,  # right hip flexed, knee bent
        "Q44": 0.4, "Q46": 0.9,  # left hip extended, knee bent
        "Q15": H, "Q24": H,  # arms down from the T pose
        "Q16": -0.5, "Q25": 0.5,  # right arm back, left arm forward
        "Q17": -H, "Q26": -H, "Q18": -1.2, "Q27": -1.2,  # elbows bent forward
    }  # fmt: skip
    for name, value in pose.items():
        q[names.index(name)] = value
    return q


def run(out: Path, quick: bool = False) -> dict:
    """Build the model, draw it, return the key numbers (``quick`` changes nothing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import draw_model

    model = santos_model()
    fig = plt.figure(figsize=(10, 6))
    for k, (title, q) in enumerate([("home pose (q = 0)", np.zeros(model.nq)),
                                    ("a running-like pose", running_pose(model))]):  # fmt: skip
        ax = fig.add_subplot(1, 2, k + 1, projection="3d")
        draw_model(model, q, ax=ax, markers=False, triad_length=0.04)
        ax.set_title(f"Santos, {title}")
        ax.set_xlim(-0.5, 0.5), ax.set_ylim(-0.9, 0.9), ax.set_zlim(0.0, 1.6)
        ax.set_box_aspect((1.0, 1.8, 1.6))
        ax.view_init(elev=10, azim=-70)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "santos_dh.png", dpi=110)
    plt.close(fig)
    T = forward_kinematics(model, np.zeros(model.nq)).transforms
    pos = T[:, :3, 3]
    numbers = {
        "nq": model.nq,
        "n_rows": model.n_bodies,
        "total_mass": model.total_mass,
        "height": float(pos[:, 2].max() - pos[:, 2].min()),
    }
    # standing still at the home pose on both feet: the ground reaction from the
    # kinematics alone (Chung's two-part algorithm, the global DOFs unactuated),
    # split between the feet by the least-norm rule
    z = np.zeros(model.nv)
    res = inverse_dynamics_wls(
        model, np.zeros(model.nq), z, z, None, contact=["Q41", "Q48"], unactuated=range(6)
    )
    right, left = (res.grf[model.body_index(b), 3:] for b in ("Q41", "Q48"))
    numbers["standing_reaction_right"] = float(right[2])
    numbers["standing_reaction_left"] = float(left[2])
    print(", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                    for k, v in numbers.items()))  # fmt: skip
    return numbers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder")
    parser.add_argument("--quick", action="store_true", help="accepted for the gallery (no effect)")
    args = parser.parse_args(argv)
    run(Path(args.out), quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
