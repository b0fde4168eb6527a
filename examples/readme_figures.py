"""Regenerate the README's pictures: one stick-figure frame and one gait-cycle figure.

Run: ``python examples/readme_figures.py [TRIAL.c3d] [OUT_DIR]`` (defaults: the
shared walking trial ``../shared/data/c3d/gait-raw.c3d`` and ``docs/img``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from ahbm.gait import (
    analyze_gait,  # noqa: E402
    write_gait_report,  # noqa: E402
)
from ahbm.graphics import stick_view  # noqa: E402
from ahbm.io import read_c3d  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main(trial_path=None, out_dir=None) -> int:
    trial_path = Path(trial_path or ROOT.parent / "shared" / "data" / "c3d" / "gait-raw.c3d")
    out = Path(out_dir or ROOT / "docs" / "img")
    out.mkdir(parents=True, exist_ok=True)
    trial = read_c3d(trial_path)
    viewer = stick_view(trial, follow=True, title=trial_path.name)
    viewer.show_frame(60)
    frame_png = viewer.save(out / "stick_frame.png", dpi=80)
    result = analyze_gait(trial)
    gait_png = write_gait_report(result, out / "gait_cycles.png", title=trial_path.name)
    print(f"wrote {frame_png} and {gait_png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
