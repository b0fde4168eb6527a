"""Time the GIF export of a 142-frame stick animation (issue target: under 20 s).

Compares ``StickViewer.save("x.gif")`` with the plain matplotlib recipe that
users write by hand (FuncAnimation that redraws the 3-D scatter and sticks
each frame, saved with matplotlib's PillowWriter), on the same frames, figure
size and resolution, in the same run. Prints both times and their ratio.

    python benchmarks/bench_graphics.py [--dpi 100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.animation import FuncAnimation, PillowWriter  # noqa: E402

from ahbm.graphics import plug_in_gait_segments, stick_view  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "c3d" / "gait-raw.c3d"


def load():
    """gait-raw.c3d (142 frames at 50 Hz) or 142 frames of synthetic markers."""
    if DATA.is_file():
        from ahbm.io import read_c3d

        trial = read_c3d(DATA)
        return trial, trial.points, trial.point_labels
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(1, 16, 3)) * 0.3 + np.linspace(0, 3, 142)[:, None, None] * [1, 0, 0]
    labels = [f"P{k}" for k in range(16)]
    return pts, pts, labels


def naive_gif(points, pairs, path, dpi):
    """The hand-written matplotlib recipe: clear and redraw the axes every frame."""
    fig = plt.figure(figsize=(6.4, 6.4))
    ax = fig.add_subplot(projection="3d")
    lo = np.nanmin(points.reshape(-1, 3), axis=0)
    hi = np.nanmax(points.reshape(-1, 3), axis=0)
    c, half = 0.5 * (lo + hi), 0.5 * np.max(hi - lo)

    def draw(i):
        ax.cla()
        p = points[i]
        ax.scatter(p[:, 0], p[:, 1], p[:, 2], s=10)
        for a, b in pairs:
            ax.plot(*p[[a, b]].T, color="0.2")
        ax.set_xlim(c[0] - half, c[0] + half)
        ax.set_ylim(c[1] - half, c[1] + half)
        ax.set_zlim(c[2] - half, c[2] + half)

    anim = FuncAnimation(fig, draw, frames=len(points), interval=20)
    anim.save(path, writer=PillowWriter(fps=50), dpi=dpi)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dpi", type=float, default=100.0)
    args = parser.parse_args()
    data, points, labels = load()
    segments = plug_in_gait_segments(labels)
    pairs = [(labels.index(a), labels.index(b)) for a, b in segments]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        viewer = stick_view(data, segments=segments or None, follow=False)
        viewer.save(Path(tmp) / "ahbm.gif", dpi=args.dpi)
        t_ahbm = time.perf_counter() - t0
        plt.close(viewer.fig)
        t0 = time.perf_counter()
        naive_gif(points, pairs, str(Path(tmp) / "naive.gif"), args.dpi)
        t_naive = time.perf_counter() - t0
    n = len(points)
    print(f"GIF export of {n} frames, 6.4 x 6.4 in at {args.dpi:g} dpi")
    print(f"  ahbm StickViewer.save : {t_ahbm:6.2f} s  ({1000 * t_ahbm / n:.0f} ms/frame)")
    print(f"  naive matplotlib      : {t_naive:6.2f} s  ({1000 * t_naive / n:.0f} ms/frame)")
    print(f"  ratio naive / ahbm    : {t_naive / t_ahbm:6.2f}x")


if __name__ == "__main__":
    main()
