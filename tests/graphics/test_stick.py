"""Tests of stick_view / StickViewer: artists hold the data of the displayed frame."""

import matplotlib.animation as manim
import numpy as np
import pytest
from matplotlib.backend_bases import KeyEvent
from PIL import Image
from scipy.spatial.transform import Rotation

from ahbm.errors import AhbmError, DataError
from ahbm.graphics import StickViewer, stick_view, xy_view


def _marker_data(viewer):
    return np.array(viewer.artists["markers"].get_data_3d()).T  # (n_markers, 3)


@pytest.mark.parametrize("frame", [0, 3, 7, -1])
def test_markers_follow_the_displayed_frame(frame, walking):
    pts = walking(8, 5)
    viewer = stick_view(pts, rate=100.0)
    assert isinstance(viewer, StickViewer)
    fig = viewer.show_frame(frame)
    assert fig is viewer.fig
    np.testing.assert_array_equal(_marker_data(viewer), pts[frame])
    assert viewer.frame_index == frame % 8


def test_segments_join_the_named_markers(walking):
    pts = walking(6, 4)
    labels = ["A", "B", "C", "D"]
    viewer = stick_view(pts, labels=labels, segments=[("A", "B"), ("C", "D"), (0, 3)])
    viewer.show_frame(4)
    segs = viewer.artists["segments"]._segments3d
    expected = [pts[4, [0, 1]], pts[4, [2, 3]], pts[4, [0, 3]]]
    assert len(segs) == 3
    for got, want in zip(segs, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_labels_move_with_markers_and_hide_when_missing(walking):
    pts = walking(4, 3)
    pts[2, 1] = np.nan
    viewer = stick_view(pts, labels=["a", "b", "c"], show_labels=True)
    viewer.show_frame(2)
    texts = viewer.artists["labels"]
    assert [t.get_text() for t in texts] == ["a", "b", "c"]
    assert not texts[1].get_visible()
    assert texts[0].get_visible()
    np.testing.assert_allclose(texts[2].get_position_3d(), pts[2, 2])


def test_axes_are_equally_scaled_and_enclose_every_frame(walking):
    pts = walking(10, 4)
    pts[:, :, 0] *= 5.0  # long along x
    viewer = stick_view(pts, floor=False)
    ax = viewer.ax
    lims = np.array([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
    spans = lims[:, 1] - lims[:, 0]
    np.testing.assert_allclose(spans, spans[0])
    flat = pts.reshape(-1, 3)
    assert (flat.min(axis=0) >= lims[:, 0]).all()
    assert (flat.max(axis=0) <= lims[:, 1]).all()
    np.testing.assert_allclose(ax.get_box_aspect() / ax.get_box_aspect()[0], 1.0)


@pytest.mark.parametrize("vertical", ["z", "y"])
def test_floor_lies_at_floor_height_across_the_vertical_axis(vertical, walking):
    pts = walking(5, 4)
    viewer = stick_view(pts, floor_height=0.1, vertical_axis=vertical)
    v = "xyz".index(vertical)
    quad = viewer.floor_corners
    assert viewer.artists["floor"] in viewer.ax.collections
    np.testing.assert_allclose(quad[:, v], 0.1)
    others = [k for k in range(3) if k != v]
    assert np.ptp(quad[:, others[0]]) > 0 and np.ptp(quad[:, others[1]]) > 0


def test_body_frames_are_rgb_triads_of_the_rotation_columns(walking):
    rng = np.random.default_rng(3)
    n = 4
    R = Rotation.random(n * 2, random_state=rng).as_matrix().reshape(n, 2, 3, 3)
    T = np.zeros((n, 2, 4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = rng.normal(size=(n, 2, 3))
    T[..., 3, 3] = 1.0
    viewer = stick_view(walking(n, 2), body_frames=T, triad_length=0.2)
    viewer.show_frame(2)
    coll = viewer.artists["triads"]
    segs = np.asarray(coll._segments3d)
    assert segs.shape == (6, 2, 3)
    for b in range(2):
        for axis in range(3):
            seg = segs[3 * b + axis]
            np.testing.assert_allclose(seg[0], T[2, b, :3, 3])
            np.testing.assert_allclose(seg[1], T[2, b, :3, 3] + 0.2 * R[2, b, :, axis])
    colors = coll.get_colors()
    rgb = colors[:, :3]
    assert rgb.shape == (6, 3)
    np.testing.assert_array_equal(rgb * (1 - np.eye(3)[[0, 1, 2, 0, 1, 2]]), 0.0)  # pure R, G, B


def test_body_frames_mapping_with_static_transform(walking):
    T = np.eye(4)
    T[:3, 3] = [1.0, 2.0, 3.0]
    viewer = stick_view(walking(3, 2), body_frames={"pelvis": T}, triad_length=0.5)
    segs = np.asarray(viewer.artists["triads"]._segments3d)
    np.testing.assert_allclose(segs[2], [[1, 2, 3], [1, 2, 3.5]])


@pytest.mark.parametrize("units", ["m", "mm"])
def test_trial_markers_in_metres_and_forces_at_the_cop(units, trial_factory):
    trial = trial_factory(n_frames=8, plate_ratio=4, units=units)
    viewer = stick_view(trial, force_scale=2e-3)
    np.testing.assert_allclose(viewer.time, (np.arange(8) + 10) / 50.0)
    viewer.show_frame(5)
    scale = 1e-3 if units == "mm" else 1.0
    np.testing.assert_allclose(_marker_data(viewer), trial.points[5] * scale)
    plate = trial.force_plates[0]
    seg = np.asarray(viewer.artists["forces"]._segments3d)[0]
    np.testing.assert_allclose(seg[0], plate.cop[20])
    # ground reaction = minus the force on the plate
    np.testing.assert_allclose(seg[1], plate.cop[20] - 2e-3 * plate.force[20])
    assert seg[1][2] > seg[0][2]  # drawn upwards
    viewer.show_frame(0)
    assert np.isnan(np.asarray(viewer.artists["forces"]._segments3d)[0]).all()


def test_ground_reaction_points_up_whatever_sign_the_source_stores(trial_factory):
    trial = trial_factory()
    plate = trial.force_plates[0]
    plate.force = -plate.force  # a source that stores the reaction (Fz > 0)
    viewer = stick_view(trial, force_scale=1e-3)
    viewer.show_frame(3)
    seg = np.asarray(viewer.artists["forces"]._segments3d)[0]
    np.testing.assert_allclose(seg[1] - seg[0], 1e-3 * plate.force[12])
    assert seg[1][2] > seg[0][2]


def test_forces_can_be_switched_off_or_drawn_as_the_plate_force(trial_factory):
    trial = trial_factory()
    assert "forces" not in stick_view(trial, forces=False).artists
    viewer = stick_view(trial, reaction=False, force_scale=1e-3)
    viewer.show_frame(3)
    seg = np.asarray(viewer.artists["forces"]._segments3d)[0]
    p = trial.force_plates[0]
    np.testing.assert_allclose(seg[1] - seg[0], 1e-3 * p.force[12])


@pytest.mark.parametrize(
    ("rate", "speed", "fps", "expected"),
    [
        (50.0, 1.0, None, list(range(8))),  # every frame at 50 fps
        (50.0, 2.0, None, [0, 2, 4, 6]),  # 100 frames/s of data -> step 2 at 50 fps
        (50.0, 1.0, 25.0, [0, 2, 4, 6]),
        (200.0, 1.0, None, [0, 4]),  # 200 Hz data shown at 50 fps
    ],
)
def test_animation_plays_frames_in_real_time_times_speed(
    rate, speed, fps, expected, walking, recording_writer
):
    pts = walking(8, 3)
    viewer = stick_view(pts, rate=rate)
    anim = viewer.animate(fps=fps, speed=speed)
    assert viewer.animation is anim
    writer = recording_writer(viewer)
    anim.save("unused.rec", writer=writer)
    assert writer.frames == expected
    for frame, shown in zip(writer.frames, writer.markers, strict=True):
        np.testing.assert_array_equal(shown, pts[frame])


def test_animation_plays_only_the_selected_frames(walking, recording_writer):
    pts = walking(10, 3)
    viewer = stick_view(pts, rate=10.0, frames=slice(2, 8, 2))
    writer = recording_writer(viewer)
    viewer.animate().save("unused.rec", writer=writer)
    assert writer.frames == [2, 4, 6]


def test_gif_has_one_image_per_animation_frame(tmp_path, walking):
    pts = walking(5, 3)
    viewer = stick_view(pts, rate=10.0, segments=[(0, 1)])
    viewer.fig.set_size_inches(2, 2)
    out = viewer.save(tmp_path / "walk.gif", dpi=40)
    assert out == tmp_path / "walk.gif"
    with Image.open(out) as im:
        assert im.format == "GIF"
        assert im.n_frames == 5
    assert out.stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.gif"]


def test_html_embeds_every_frame(tmp_path, walking):
    viewer = stick_view(walking(4, 3), rate=10.0)
    viewer.fig.set_size_inches(2, 2)
    html = viewer.to_html()
    assert "<script" in html
    assert html.count("data:image/png;base64") == 4
    out = viewer.save(tmp_path / "walk.html")
    text = out.read_text(encoding="utf-8")
    assert text.count("data:image/png;base64") == 4


def test_png_saves_the_current_frame(tmp_path, walking):
    viewer = stick_view(walking(4, 3))
    viewer.show_frame(2)
    out = viewer.save(tmp_path / "frame.png", dpi=50)
    with Image.open(out) as im:
        assert im.format == "PNG"
    assert viewer.frame_index == 2


def test_mp4_without_ffmpeg_says_how_to_get_it(tmp_path, monkeypatch, walking):
    monkeypatch.setattr(manim.writers, "is_available", lambda name: False)
    viewer = stick_view(walking(3, 2))
    with pytest.raises(AhbmError, match=r"ffmpeg.*(apt|conda) install ffmpeg.*\.gif"):
        viewer.save(tmp_path / "walk.mp4")
    assert list(tmp_path.iterdir()) == []


def test_failed_save_leaves_no_file(tmp_path, monkeypatch, walking):
    viewer = stick_view(walking(4, 2))
    original = StickViewer.show_frame
    calls = []

    def broken(self, i):
        calls.append(i)
        if len(calls) == 3:  # fail half-way through the frames
            raise RuntimeError("disk full")
        return original(self, i)

    monkeypatch.setattr(StickViewer, "show_frame", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        viewer.save(tmp_path / "walk.gif")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["walk.avi", "walk"])
def test_unsupported_extension(tmp_path, name, walking):
    viewer = stick_view(walking(3, 2))
    with pytest.raises(DataError, match="unsupported extension"):
        viewer.save(tmp_path / name)


def test_slider_and_keys_move_the_figure(walking):
    pts = walking(30, 3)
    viewer = stick_view(pts, interactive=True)
    assert viewer.slider is not None
    viewer.slider.set_val(5)
    assert viewer.frame_index == 5
    np.testing.assert_array_equal(_marker_data(viewer), pts[5])
    canvas = viewer.fig.canvas
    for key, frame in [("right", 6), ("up", 16), ("left", 15), ("end", 29), ("home", 0)]:
        canvas.callbacks.process("key_press_event", KeyEvent("key_press_event", canvas, key))
        assert viewer.frame_index == frame
        assert int(viewer.slider.val) == frame
    np.testing.assert_array_equal(_marker_data(viewer), pts[0])


def test_no_slider_on_agg_by_default(walking):
    assert stick_view(walking(3, 2)).slider is None


def test_xy_cursor_follows_the_stick_animation(trial_factory, recording_writer):
    trial = trial_factory(n_frames=8)
    viewer = stick_view(trial)
    xy = xy_view(trial, channels=["LKNE"], cursor=viewer)
    viewer.show_frame(6)
    assert xy.time == pytest.approx(trial.time[6])
    for line in xy.cursor_lines:
        np.testing.assert_allclose(line.get_xdata(), [trial.time[6]] * 2)
    writer = recording_writer(viewer)
    times = []
    viewer.add_listener(lambda t, i: times.append((t, xy.time)))
    times.clear()
    viewer.animate().save("unused.rec", writer=writer)
    assert [a for a, b in times if a != b] == []
    assert xy.time == pytest.approx(trial.time[writer.frames[-1]])


def test_single_frame_array_and_nan_markers():
    pts = np.array([[0.0, 0.0, 1.0], [np.nan, np.nan, np.nan], [0.2, 0.1, 1.5]])
    viewer = stick_view(pts)
    assert viewer.points.shape == (1, 3, 3)
    np.testing.assert_array_equal(_marker_data(viewer), pts)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"data": np.zeros((4, 3, 2))}, r"shape \(n_frames, n_points, 3\)"),
        ({"data": np.full((2, 2, 3), np.nan)}, "missing"),
        ({"data": np.full((2, 2, 3), np.inf)}, "infinite"),
        ({"data": np.zeros((2, 2, 3)), "segments": [("A", "Z")], "labels": ["A", "B"]}, "'Z'"),
        ({"data": np.zeros((2, 2, 3)), "segments": [(0, 5)]}, r"index in \[0, 2\)"),
        ({"data": np.zeros((2, 2, 3)), "labels": ["A"]}, "2 entries"),
        ({"data": np.zeros((2, 2, 3)), "frames": [0, 2]}, r"outside \[0, 2\)"),
        ({"data": np.zeros((2, 2, 3)), "frames": []}, "no frame"),
        ({"data": np.zeros((2, 2, 3)), "vertical_axis": "w"}, "vertical_axis"),
        ({"data": np.zeros((2, 2, 3)), "body_frames": np.zeros((3, 1, 4, 4))}, "body_frames"),
        ({"data": np.zeros((2, 2, 3)), "rate": -1.0}, "rate"),
        ({}, "Nothing to draw"),
    ],
)
def test_bad_input_is_reported(kwargs, match):
    with pytest.raises(DataError, match=match):
        stick_view(**kwargs)


def test_bad_frame_index_and_speed(walking):
    viewer = stick_view(walking(3, 2))
    with pytest.raises(DataError, match=r"outside \[0, 3\)"):
        viewer.show_frame(3)
    with pytest.raises(DataError, match="speed"):
        viewer.animate(speed=0.0)
    with pytest.raises(DataError, match="fps"):
        viewer.animate(fps=-5)


def test_follow_mode_centres_the_view_on_each_frame(walking):
    pts = walking(6, 4)
    pts[:, :, 0] += np.linspace(0, 5, 6)[:, None]  # walks 5 m: far wider than the subject
    viewer = stick_view(pts, follow=True)
    z_before = viewer.ax.get_zlim()
    for i in (1, 4):
        viewer.show_frame(i)
        lims = np.array([viewer.ax.get_xlim(), viewer.ax.get_ylim(), viewer.ax.get_zlim()])
        centre = 0.5 * (pts[i].min(axis=0) + pts[i].max(axis=0))
        np.testing.assert_allclose(lims[:2].mean(axis=1), centre[:2])
        np.testing.assert_allclose(np.ptp(lims, axis=1), np.ptp(lims[2]))
        assert (pts[i].min(axis=0) >= lims[:, 0]).all() and (pts[i].max(axis=0) <= lims[:, 1]).all()
        assert np.ptp(lims[0]) < 5.0
        np.testing.assert_allclose(viewer.ax.get_zlim(), z_before)
        np.testing.assert_allclose(viewer.floor_corners[:, :2].min(axis=0), lims[:2, 0])
        np.testing.assert_allclose(viewer.floor_corners[:, 2], 0.0)


def test_floor_sits_at_the_bottom_of_the_view(walking):
    viewer = stick_view(walking(4, 3), floor_height=0.0)
    z0, z1 = viewer.ax.get_zlim()
    assert z0 < 0.0 < z0 + 0.1 * (z1 - z0)


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        ("agg", False),
        ("pdf", False),
        ("module://matplotlib_inline.backend_inline", False),
        ("QtAgg", True),
        ("TkAgg", True),
        ("nbAgg", True),
        ("module://ipympl.backend_nbagg", True),
    ],
)
def test_interactive_backend_detection(monkeypatch, backend, expected):
    import matplotlib

    from ahbm.graphics.figures import is_interactive_backend

    monkeypatch.setattr(matplotlib, "get_backend", lambda: backend)
    assert is_interactive_backend() is expected


def test_mp4_path_feeds_every_frame_to_the_ffmpeg_writer(tmp_path, monkeypatch, walking):
    pts = walking(5, 3)
    viewer = stick_view(pts, rate=10.0)
    grabbed = []

    class FakeFFMpeg(manim.AbstractMovieWriter):
        def setup(self, fig, outfile, dpi=None):
            super().setup(fig, outfile, dpi=dpi)

        def grab_frame(self, **kwargs):
            grabbed.append(np.array(viewer.artists["markers"].get_data_3d()).T)

        def finish(self):
            with open(self.outfile, "wb") as fh:
                fh.write(b"\x00" * len(grabbed))

    monkeypatch.setattr(manim.writers, "is_available", lambda name: True)
    monkeypatch.setattr(manim, "FFMpegWriter", FakeFFMpeg)
    out = viewer.save(tmp_path / "walk.mp4", speed=0.5)
    assert len(grabbed) == 5 and out.stat().st_size == 5
    for k, shown in enumerate(grabbed):
        np.testing.assert_array_equal(shown, pts[k])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.mp4"]


def test_saved_files_get_ordinary_permissions(tmp_path, walking):
    import os

    mask = os.umask(0)
    os.umask(mask)
    out = stick_view(walking(2, 2)).save(tmp_path / "frame.png", dpi=20)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


def test_frame_index_is_the_displayed_frame(walking):
    viewer = stick_view(walking(6, 3))
    viewer.show_frame(4)
    assert viewer.frame_index == 4
    viewer.frame_index = 2
    assert viewer.frame_index == 2
    assert "frame_index=2" in repr(viewer)
