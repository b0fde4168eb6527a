"""Look at a walking trial: stick-figure animation (GIF), one frame and the signals (PNG).

Usage::

    python examples/view_trial.py [OUT_DIR] [--trial PATH.c3d]

Reads the shared walking trial ``../shared/data/c3d/gait-raw.c3d`` (27
markers at 50 Hz, two force plates) when it is present, otherwise builds a
synthetic walker, and writes into OUT_DIR (default ``./out``):

- ``stick.gif``: the animated stick figure with ground reaction forces;
- ``stick.png``: the frame in the middle of the trial;
- ``signals.png``: knee and ankle marker heights and the plate forces, with a
  cursor at the frame of ``stick.png``.

Runs headless (matplotlib's Agg backend).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from ahbm.graphics import plug_in_gait_segments, save_figure, stick_view, xy_view  # noqa: E402
from ahbm.io.trial import Trial  # noqa: E402

DEFAULT_TRIAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "c3d"
DEFAULT_TRIAL = DEFAULT_TRIAL / "gait-raw.c3d"


def synthetic_walker(n_frames: int = 100, rate: float = 50.0) -> Trial:
    """A stick walker at 1.2 m/s: pelvis, thighs, shanks and feet markers, in metres."""
    t = np.arange(n_frames) / rate
    phase = 2 * np.pi * t  # one stride per second
    pelvis = np.c_[1.2 * t, np.zeros(n_frames), 0.95 + 0.02 * np.cos(2 * phase)]
    labels, points = [], []
    for side, y, shift in (("L", 0.1, 0.0), ("R", -0.1, np.pi)):
        hip_angle = 0.4 * np.sin(phase + shift)
        knee_angle = 0.6 * np.clip(np.sin(phase + shift - 1.0), 0, None)
        hip = pelvis + [0.0, y, -0.05]
        knee = hip + 0.45 * np.c_[np.sin(hip_angle), np.zeros(n_frames), -np.cos(hip_angle)]
        shank = hip_angle - knee_angle
        ankle = knee + 0.43 * np.c_[np.sin(shank), np.zeros(n_frames), -np.cos(shank)]
        heel = ankle + [-0.05, 0.0, -0.04]
        toe = ankle + [0.15, 0.0, -0.05]
        for name, xyz in (
            ("ASI", pelvis + [0.05, y * 1.2, 0.0]),
            ("THI", 0.5 * (hip + knee) + [0, y * 0.4, 0]),
            ("KNE", knee),
            ("TIB", 0.5 * (knee + ankle) + [0, y * 0.4, 0]),
            ("ANK", ankle),
            ("HEE", heel),
            ("TOE", toe),
        ):
            labels.append(side + name)
            points.append(xyz)
    pts = np.stack(points, axis=1)
    pts[..., 2] -= min(0.0, float(pts[..., 2].min()))  # feet above the floor
    return Trial(points=pts, point_labels=labels, point_rate=rate, source="synthetic walker")


def load_trial(path: Path) -> Trial:
    """The C3D trial at `path` if it and the C3D reader exist, else a synthetic walker."""
    try:
        from ahbm.io import read_c3d
    except ImportError:
        read_c3d = None
    if read_c3d is not None and path.is_file():
        return read_c3d(path)
    print(f"{path} or the C3D reader is not available: using a synthetic walker")
    return synthetic_walker()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="out", help="output folder (default ./out)")
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL, help="C3D file to view")
    parser.add_argument("--dpi", type=float, default=60.0, help="GIF resolution (dots/inch)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    trial = load_trial(args.trial)
    print(trial)
    # Markers that are never recorded (the arm markers of gait-raw) are left out.
    seen = ~np.isnan(trial.points).all(axis=(0, 2))
    labels = [lab for lab, ok in zip(trial.point_labels, seen, strict=True) if ok]
    segments = plug_in_gait_segments(labels)

    name = Path(trial.source).name or None
    viewer = stick_view(trial, segments=segments, follow=True, title=name)
    gif = viewer.save(out / "stick.gif", dpi=args.dpi)
    middle = trial.n_frames // 2
    viewer.show_frame(middle)
    png = viewer.save(out / "stick.png", dpi=100)

    channels = [c for c in ("LKNE", "RKNE", "LANK", "RANK") if c in labels]
    channels += [f"FP{k + 1}.force" for k in range(len(trial.force_plates))]
    xy = xy_view(trial, channels=channels, cursor=viewer, title="markers and plate forces")
    signals = out / "signals.png"
    save_figure(xy.fig, signals, dpi=100)
    for path in (gif, png, signals):
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
