"""Headless set-up for the graphics tests: Agg backend, no plt.show, figures closed.

Also provides small data builders as fixtures (the tests run with
``--import-mode=importlib``, so they cannot import a helper module).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.animation import AbstractMovieWriter  # noqa: E402

from ahbm.io.trial import Event, ForcePlate, Trial  # noqa: E402


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    """Fail any call to plt.show(); close every figure after each test."""

    def _no_show(*args, **kwargs):
        raise AssertionError("ahbm.graphics must never call plt.show()")

    monkeypatch.setattr(plt, "show", _no_show)
    monkeypatch.setattr(matplotlib.figure.Figure, "show", _no_show)
    with matplotlib.rc_context({"figure.dpi": 40.0}):  # small renders keep the tests fast
        yield
    plt.close("all")
    assert plt.get_fignums() == []


def walking_markers(n_frames=8, n_markers=4, seed=0):
    """Markers drifting along x with noise: every frame differs."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(-0.3, 0.3, size=(1, n_markers, 3)) + np.array([0.0, 0.0, 1.0])
    drift = np.zeros((n_frames, 1, 3))
    drift[:, 0, 0] = np.linspace(0.0, 0.5, n_frames)
    return base + drift + 0.01 * rng.normal(size=(n_frames, n_markers, 3))


def small_trial(n_frames=8, plate_ratio=4, seed=1, units="m"):
    """A Trial with 4 markers at 50 Hz and one force plate sampled plate_ratio times faster."""
    rng = np.random.default_rng(seed)
    pts = walking_markers(n_frames, 4, seed)
    n_samples = n_frames * plate_ratio
    fz = -rng.uniform(400, 800, n_samples)
    force = np.c_[rng.normal(0, 20, n_samples), rng.normal(0, 20, n_samples), fz]
    cop = np.c_[rng.uniform(0.1, 0.4, (n_samples, 2)), np.zeros(n_samples)]
    cop[:plate_ratio] = np.nan  # no contact during the first frame
    corners = np.array([[0.5, 0.4, 0.0], [0.0, 0.4, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    plate = ForcePlate(
        force=force,
        moment=np.zeros((n_samples, 3)),
        cop=cop,
        free_moment=np.zeros((n_samples, 3)),
        corners=corners,
        origin=corners.mean(axis=0),
        rate=50.0 * plate_ratio,
        plate_type=2,
    )
    scale = {"m": 1.0, "mm": 1000.0}[units]
    return Trial(
        points=pts * scale,
        point_labels=["LASI", "RASI", "LKNE", "RKNE"],
        point_rate=50.0,
        point_units=units,
        analogs=rng.normal(size=(n_samples, 2)),
        analog_labels=["EMG1", "EMG2"],
        analog_units=["V", "V"],
        analog_rate=50.0 * plate_ratio,
        first_frame=11,
        force_plates=[plate],
        events=[
            Event("Foot Strike", 0.22, "Left"),
            Event("Foot Off", 0.30, "Right"),
        ],
    )


class RecordingWriter(AbstractMovieWriter):
    """A movie writer that records what the viewer shows at every grabbed frame."""

    def __init__(self, viewer, fps=5):
        super().__init__(fps=fps)
        self.viewer = viewer
        self.frames = []
        self.markers = []

    def setup(self, fig, outfile, dpi=None):
        super().setup(fig, outfile, dpi=dpi)

    def grab_frame(self, **savefig_kwargs):
        self.frames.append(self.viewer.frame_index)
        self.markers.append(np.array(self.viewer.artists["markers"].get_data_3d()).T)

    def finish(self):
        pass


@pytest.fixture
def walking():
    """Factory of marker arrays (n_frames, n_markers, 3): see walking_markers."""
    return walking_markers


@pytest.fixture
def trial_factory():
    """Factory of small Trials with one force plate: see small_trial."""
    return small_trial


@pytest.fixture
def recording_writer():
    """The RecordingWriter class (records the viewer state at each grabbed frame)."""
    return RecordingWriter
