"""Figures of the shared walking trial (gait-raw.c3d), checked against ezc3d's reading."""

import numpy as np
import pytest
from PIL import Image
from sample_data import SHARED

from ahbm.graphics import plug_in_gait_segments, stick_view, xy_view

DATA = SHARED
GAIT = DATA / "c3d" / "gait-raw.c3d"

pytestmark = pytest.mark.skipif(not GAIT.is_file(), reason=f"shared data not found at {GAIT}")


@pytest.fixture(scope="module")
def trial():
    from ahbm.io import read_c3d

    return read_c3d(GAIT)


@pytest.fixture(scope="module")
def reference():
    """Markers (n_frames, n_points, 3) in m and the plate forces, read by ezc3d."""
    ezc3d = pytest.importorskip("ezc3d")
    c = ezc3d.c3d(str(GAIT), extract_forceplat_data=True)
    pts = np.transpose(c["data"]["points"][:3], (2, 1, 0)) / 1000.0
    return pts, c["data"]["platform"]


def test_stick_frames_show_the_recorded_markers(trial, reference, tmp_path):
    pts, platforms = reference
    segments = plug_in_gait_segments(trial.point_labels)
    assert ("LKNE", "LTIB") in segments and len(segments) >= 15
    viewer = stick_view(trial, segments=segments, frames=slice(60, 64), follow=True)
    for i in (60, 63):
        viewer.show_frame(i)
        shown = np.array(viewer.artists["markers"].get_data_3d()).T
        np.testing.assert_allclose(shown, pts[i], atol=1e-6, equal_nan=True)
        # force vectors start at the centre of pressure of the matching 800 Hz sample
        k = i * 16
        segs = np.asarray(viewer.artists["forces"]._segments3d)
        for p, seg in enumerate(segs):
            cop = platforms[p]["center_of_pressure"][:, k] / 1000.0
            if np.isfinite(seg).all():
                np.testing.assert_allclose(seg[0], cop, atol=1e-3)
                assert seg[1][2] > seg[0][2]  # ground reaction drawn upwards
    viewer.fig.set_size_inches(3, 3)
    gif = viewer.save(tmp_path / "walk.gif", dpi=40)
    with Image.open(gif) as im:
        assert im.n_frames == 4
    assert gif.stat().st_size > 5_000
    png = viewer.save(tmp_path / "walk.png", dpi=60)
    assert png.stat().st_size > 5_000


def test_signals_of_the_walking_trial(trial, reference, tmp_path):
    pts, platforms = reference
    v = xy_view(trial, channels=["LANK", "FP1.force", "FP2.force"])
    assert len(v.axes) == 3
    np.testing.assert_allclose(v.lines["LANK"][2].get_ydata(), pts[:, 5, 2], atol=1e-6)
    fz = v.lines["FP1.force"][2].get_ydata()
    np.testing.assert_allclose(np.nanmax(fz), np.nanmax(platforms[0]["force"][2]), rtol=1e-6)
    out = tmp_path / "signals.png"
    v.fig.savefig(out, dpi=50)
    assert out.stat().st_size > 5_000
