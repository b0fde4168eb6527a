"""ZMP and support polygon over a walking trial (gait-raw.c3d, two force plates).

Reads the shared walking trial with :func:`ahbm.io.read_c3d` and computes
its force plates at the marker rate with :func:`ahbm.io.force_plates_from_c3d`
(zero offsets removed over the file's FORCE_PLATFORM:ZERO frames). The
zero-moment point of the net ground reaction of the loaded plates (more than
20 N) comes from :func:`ahbm.dynamics.zmp_from_grf`; on flat ground it is the
centre of pressure of the net reaction. A foot on the floor beside the plates
is not measured: in those frames it is the ZMP of the plates' share only.
The support polygon of each frame (:func:`ahbm.dynamics.support_polygon`) is
the convex hull of the contact points of the feet standing on a loaded plate,
and :func:`ahbm.dynamics.stability_margin` gives the signed distance of the
ZMP to its nearest edge.

The contact points of a foot are its markers (heel, ankle, medial ankle, toe
when present) and four points of an estimated sole: this trial has no heel
markers, only the lateral malleolus (ANK) and the second metatarsal head
(TOE), which alone span a line. The sole estimate: the foot's long axis is
the ground projection of ANK→TOE; the heel lies 6 cm behind the malleolus,
the forefoot edge 4 cm ahead of the toe marker, the sole is 7 cm wide at the
heel and 10 cm at the forefoot, and the malleolus sits on its lateral edge
(values of an adult foot; change ``SOLE`` for another subject).

Usage: ``python examples/zmp_walking.py [OUTPUT_FOLDER] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ahbm.dynamics import stability_margin, support_polygon, zmp_from_grf
from ahbm.io import force_plates_from_c3d, read_c3d

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "c3d" / "gait-raw.c3d"
#: Sole estimate, m: heel behind the ankle marker, forefoot ahead of the toe
#: marker, sole width at the heel and at the forefoot.
SOLE = {"heel": 0.06, "front": 0.04, "heel_width": 0.07, "front_width": 0.10}
#: Foot markers used as contact points (missing ones are NaN and ignored).
FOOT_MARKERS = ("HEE", "ANK", "MAK", "TOE")
#: Vertical force above which a plate counts as loaded, N.
LOADED = 20.0


def foot_points(trial, side: str) -> np.ndarray:
    """Contact points (n_frames, 8, 3) of one foot: its markers and the estimated sole."""
    labels = trial.point_labels

    def marker(name):
        label = side + name
        if label in labels:
            return trial.points[:, labels.index(label)]
        return np.full((trial.n_frames, 3), np.nan)

    ank, toe = marker("ANK"), marker("TOE")
    u = (toe - ank) * [1.0, 1.0, 0.0]
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    lateral = np.cross([0.0, 0.0, 1.0], u) * (1.0 if side == "L" else -1.0)  # left of +x is +y
    heel = ank - SOLE["heel"] * u
    front = toe + SOLE["front"] * u
    sole = [
        heel,  # lateral heel, below and behind the malleolus
        heel - SOLE["heel_width"] * lateral,  # medial heel
        front + SOLE["front_width"] / 2 * lateral,
        front - SOLE["front_width"] / 2 * lateral,
    ]
    return np.stack([marker(n) for n in FOOT_MARKERS] + sole, axis=1)


def run(out: Path, quick: bool = False) -> dict:
    out = Path(out)
    trial = read_c3d(DATA)
    plates = force_plates_from_c3d(trial, rate="point", zero="file")
    n = trial.n_frames
    time = np.arange(n) / trial.point_rate

    # net ground reaction of the loaded plates about the lab origin, and its ZMP
    loaded = np.array([p.force[:, 2] > LOADED for p in plates])  # (n_plates, n_frames)
    force = sum(np.where(on[:, None], p.force, 0.0) for p, on in zip(plates, loaded, strict=True))
    moment = sum(np.where(on[:, None], p.moment + np.cross(p.origin, p.force), 0.0)
                 for p, on in zip(plates, loaded, strict=True))  # fmt: skip
    zmp = zmp_from_grf(force, moment, threshold=LOADED)

    # which foot stands on which plate: the foot nearest to the plate's mean COP
    feet = {side: foot_points(trial, side) for side in ("L", "R")}
    on_plate = {}
    for k, p in enumerate(plates):
        cop = np.nanmean(p.cop[loaded[k]], axis=0)
        dist = {s: np.nanmean(np.linalg.norm(f[loaded[k]][:, 1] - cop, axis=-1))
                for s, f in feet.items()}  # fmt: skip
        on_plate[min(dist, key=dist.get)] = k
    contact = np.full((n, 2 * feet["L"].shape[1], 3), np.nan)
    for j, side in enumerate(("L", "R")):
        if side in on_plate:
            stance = loaded[on_plate[side]]
            contact[stance, j * 8 : (j + 1) * 8] = feet[side][stance]
    polygon = support_polygon(contact)
    margin = stability_margin(zmp, polygon)

    # in single support on a plate the ZMP of the net reaction is that plate's COP
    single = loaded.sum(axis=0) == 1
    k_single = np.argmax(loaded, axis=0)
    cop_single = np.array([plates[k].cop[i] for i, k in enumerate(k_single)])
    diff = np.abs(zmp[single] - cop_single[single])
    ok = ~np.isnan(margin)
    numbers = {
        "frames_with_zmp": int((~np.isnan(zmp).any(-1)).sum()),
        "frames_single_support": int(single.sum()),
        "frames_double_support": int((loaded.sum(axis=0) == 2).sum()),
        "max_single_support_zmp_cop_difference": float(np.nanmax(diff)),
        "median_margin": float(np.median(margin[ok])),
        "min_margin": float(margin[ok].min()),
        "fraction_inside": float(np.mean(margin[ok] >= 0)),
        "feet_on_plates": {s: int(k) + 1 for s, k in on_plate.items()},
    }
    for key, value in numbers.items():
        print(f"{key}: {value}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ahbm.graphics import save_figure

    fig, ax = plt.subplots(2, 1, figsize=(9, 8), gridspec_kw={"height_ratios": [3, 2]})
    for p in plates:
        c = np.r_[p.corners, p.corners[:1]]
        ax[0].plot(c[:, 0], c[:, 1], color="0.6", lw=1)
    step = 6 if quick else 3
    for i in np.flatnonzero(ok)[::step]:
        v = polygon[i][~np.isnan(polygon[i]).any(-1)]
        v = np.r_[v, v[:1]]
        ax[0].plot(v[:, 0], v[:, 1], color="tab:blue", lw=0.6, alpha=0.5)
    for side, color in (("L", "tab:green"), ("R", "tab:orange")):
        for name in ("ANK", "TOE"):
            m = trial.points[:, trial.point_labels.index(side + name)]
            ax[0].plot(m[:, 0], m[:, 1], ".", ms=2, color=color)
    ax[0].plot(zmp[:, 0], zmp[:, 1], "k.-", ms=3, lw=0.8, label="ZMP (net plate reaction)")
    ax[0].plot([], [], color="tab:blue", lw=0.6, label="support polygon (feet on plates)")
    ax[0].plot([], [], ".", color="tab:green", label="left ANK, TOE")
    ax[0].plot([], [], ".", color="tab:orange", label="right ANK, TOE")
    span = np.r_[polygon[ok].reshape(-1, 3), np.concatenate([p.corners for p in plates])]
    lo, hi = np.nanmin(span, axis=0), np.nanmax(span, axis=0)
    ax[0].set_xlim(lo[0] - 0.1, hi[0] + 0.1)
    ax[0].set_ylim(lo[1] - 0.05, hi[1] + 0.2)
    ax[0].set_aspect("equal")
    ax[0].set_xlabel("x (m)")
    ax[0].set_ylabel("y (m)")
    ax[0].legend(loc="upper left", fontsize=8, ncol=2)
    ax[0].set_title("gait-raw.c3d: zero-moment point and support polygon, top view")
    ax[1].plot(time, np.where(ok, margin, np.nan) * 100, "k")
    ax[1].axhline(0, color="0.5", lw=0.8)
    for k, on in enumerate(loaded):
        ax[1].fill_between(time, -15, 15, where=on, alpha=0.1, label=f"plate {k + 1} loaded")
    ax[1].set_ylim(-15, 15)
    ax[1].set_xlabel("time (s)")
    ax[1].set_ylabel("stability margin (cm)")
    ax[1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / "zmp_walking.png", dpi=100)
    return numbers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--quick", action="store_true", help="fewer polygons drawn (tests)")
    args = parser.parse_args(argv)
    if not DATA.is_file():
        print(f"shared walking trial not found: {DATA}")
        return 1
    run(Path(args.out), quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
