"""Hostile input for the plots, the C3D writer and reader, and the force plates.

* Text from data (marker labels, file names, channel and variable names) is
  drawn as typed: ``$...$`` is never parsed as mathtext (an unknown macro
  raised ParseFatalException, deep nesting RecursionError).
* write_c3d refuses values beyond the float32 range of the file (they were
  written as inf, or overflowed into "missing"); read_c3d marks implausible
  markers (beyond 1e3 m) and plate forces (beyond 1e6 N) missing, loudly.
* One bad force plate no longer costs the others, and a kinematics-only gait
  run never prints or uses a NaN body mass.

Every file is built in tmp_path with ahbm's own writer (ezc3d checks what was
written where the file format is concerned).
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ahbm.cli import main  # noqa: E402
from ahbm.errors import AhbmWarning, DataError  # noqa: E402
from ahbm.io import Trial, read_c3d, write_c3d  # noqa: E402

#: Labels that matplotlib's mathtext cannot parse, or recurses on.
MATH_LABELS = [
    r"$\undefinedmacro{$",
    "$" + "x^{" * 60 + "$",
    "$" + "x^{" * 60 + "}" * 60 + "$",
]


@pytest.fixture(autouse=True)
def _close_figures():
    with matplotlib.rc_context({"figure.dpi": 30.0}):
        yield
    plt.close("all")


def _marker_trial(labels, n_frames=4) -> Trial:
    pts = np.zeros((n_frames, len(labels), 3))
    pts[..., 2] = 1.0
    pts[:, :, 0] = np.linspace(0.0, 0.5, len(labels))
    pts[:, :, 1] = np.linspace(0.0, 0.1, n_frames)[:, None]
    return Trial(points=pts, point_labels=list(labels), point_rate=50.0)


# -- 9: text from data is never mathtext -------------------------------------------------


@pytest.mark.filterwarnings("ignore:Tight layout not applied")
def test_view_and_plots_draw_mathtext_labels_as_plain_text(tmp_path, capsys):
    from ahbm.graphics import draw_model, plot_gait_cycles, plot_simulation, stick_view, xy_view
    from ahbm.models.pendulums import single_pendulum

    labels = [*MATH_LABELS, "LASI"]
    path = tmp_path / (r"walk$\undefinedmacro{$.c3d")
    write_c3d(_marker_trial(labels), path)

    # the command line: labels and the file name (the title)
    png = tmp_path / "out.png"
    assert main(["view", str(path), "--labels", "--png", str(png), "--dpi", "30"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()

    # the animation: frames carry the same texts
    trial = read_c3d(path)
    viewer = stick_view(trial, show_labels=True, title=path.name)
    viewer.save(tmp_path / "walk.gif", fps=10)
    assert (tmp_path / "walk.gif").stat().st_size > 0
    texts = [t.get_text() for t in viewer.ax.texts]
    assert all(lab in texts for lab in labels)  # shown as typed

    # channels, events and titles of the XY viewer; gait variable names; legends
    xy = xy_view({lab: np.arange(5.0) for lab in MATH_LABELS[:2]}, rate=10.0,
                 events=[(0.1, MATH_LABELS[0], "Left")], title=MATH_LABELS[1])  # fmt: skip
    xy.fig.savefig(tmp_path / "xy.png")
    cyc = np.zeros((2, 101, 3))
    fig = plot_gait_cycles({"Left": {MATH_LABELS[0]: cyc}}, planes=MATH_LABELS)
    fig.savefig(tmp_path / "gait.png")
    t = np.linspace(0.0, 1.0, 5)
    fig = plot_simulation(
        {
            "t": t,
            "q": np.c_[t, t],
            "coordinate_names": MATH_LABELS[:2],
            "energy": {MATH_LABELS[2]: t, "total": t},
        }  # fmt: skip
    )
    fig.savefig(tmp_path / "sim.png")
    model = single_pendulum()
    model.name = MATH_LABELS[0]
    draw_model(model, np.zeros(model.nq)).figure.savefig(tmp_path / "model.png")


def test_gait_report_draws_mathtext_title_and_flags_as_plain_text(tmp_path):
    from dataclasses import replace

    from ahbm.gait import GaitSettings, analyze_gait, synthetic_walking_trial, write_gait_report

    trial, _ = synthetic_walking_trial(duration=2.4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        result = analyze_gait(trial, settings=GaitSettings(kinetics=False))
    result = replace(result, flags=(MATH_LABELS[0],), source=MATH_LABELS[1])
    out = write_gait_report(result, tmp_path / "report.png")
    assert out.read_bytes()[:4] == b"\x89PNG"


# -- 12: the file's number format; plausibility on reading -----------------------------


@pytest.mark.parametrize(
    "value, trial_units, file_units",
    [(3e38, "m", "mm"), (1e308, "m", "m"), (1e308, "m", "mm"), (4e38, "mm", "mm")],
)
def test_write_c3d_refuses_points_beyond_float32(tmp_path, value, trial_units, file_units):
    trial = _marker_trial(["A", "B"])
    trial.point_units = trial_units
    trial.points[2, 1, 0] = value
    path = tmp_path / "big.c3d"
    with pytest.raises(DataError) as err:
        write_c3d(trial, path, units=file_units)
    msg = str(err.value)
    assert "'B'" in msg and "frame 2" in msg and "big.c3d" in msg and "NaN" in msg
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_write_c3d_refuses_analogs_beyond_float32_and_keeps_what_fits(tmp_path):
    import ezc3d

    trial = _marker_trial(["A", "B"])
    trial.analogs = np.zeros((8, 2))
    trial.analog_labels, trial.analog_rate = ["EMG", "FZ1"], 100.0
    trial.analogs[5, 1] = 1e39
    with pytest.raises(DataError, match=r"'FZ1' at sample 5 \(frame 2"):
        write_c3d(trial, tmp_path / "a.c3d")
    assert not (tmp_path / "a.c3d").exists()
    # the float32 extremes that fit are written exactly (as ezc3d reads them)
    trial.analogs[5, 1] = 3.4e38
    trial.points[2, 1, 0] = 3e38
    write_c3d(trial, tmp_path / "ok.c3d", units="m")
    c = ezc3d.c3d(str(tmp_path / "ok.c3d"))
    assert c["data"]["points"][0, 1, 2] == np.float32(3e38)
    assert c["data"]["analogs"][0, 1, 5] == np.float32(3.4e38)


def test_read_c3d_marks_implausible_markers_missing_loudly(tmp_path):
    import ezc3d

    trial = _marker_trial(["A", "B", "C"], n_frames=6)
    trial.points[2:4, 1, 0] = 5e3  # m: no marker is 5 km from the origin
    trial.points[5, 2, 2] = -2e6
    path = tmp_path / "far.c3d"
    write_c3d(trial, path, units="mm")
    assert ezc3d.c3d(str(path))["data"]["points"][0, 1, 2] == np.float32(5e6)  # as written
    with pytest.warns(AhbmWarning, match=r"'B' frames 2-3 \(2 samples\).*'C' frames 5-5"):
        back = read_c3d(path)
    assert np.isnan(back.points[2:4, 1]).all() and np.isnan(back.points[5, 2]).all()
    assert not back.point_mask[2:4, 1].any() and np.isnan(back.point_residuals[2:4, 1]).all()
    good = np.ones(back.point_mask.shape, bool)
    good[2:4, 1] = good[5, 2] = False
    np.testing.assert_allclose(back.points[good], trial.points[good], atol=1e-6)
    with pytest.warns(AhbmWarning, match="'B' frames 2-3"):
        read_c3d(path, units="mm")  # the limit follows the unit


@pytest.fixture(scope="module")
def walking():
    """A synthetic walking trial with two type-2 plates (FORCE_PLATFORM parameters)."""
    from ahbm.gait import synthetic_walking_trial

    trial, _ = synthetic_walking_trial(duration=2.4)
    return trial


def _copy(trial: Trial) -> Trial:
    import copy

    return copy.deepcopy(trial)


def test_read_c3d_marks_implausible_plate_forces_missing(tmp_path, walking):
    trial = _copy(walking)
    fz1 = trial.analog_labels.index("FZ1")
    trial.analogs[400:420, fz1] = -3e6  # N: no plate measures 3 MN
    path = tmp_path / "fz.c3d"
    write_c3d(trial, path)
    with pytest.warns(AhbmWarning, match=r"force plate 1: 20 samples .*frames 40-41.*'FZ1'"):
        back = read_c3d(path)
    assert len(back.force_plates) == 2
    plate = back.force_plates[0]
    assert np.isnan(plate.force[400:420]).all() and np.isnan(plate.cop[400:420]).all()
    assert np.isfinite(plate.force[:400]).all() and np.isfinite(plate.force[420:]).all()


# -- 16: one bad plate; no NaN mass -----------------------------------------------------


def _bad_second_plate(trial: Trial, kind: str) -> Trial:
    trial = _copy(trial)
    corners = np.array(trial.parameters["FORCE_PLATFORM"]["CORNERS"], dtype=float)
    if kind == "zero-size":
        corners[:, :, 1] = 0.0
    elif kind == "collinear":
        corners[:, :, 1] = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], float).T
    else:
        corners[:, :, 1] = np.nan
    trial.parameters["FORCE_PLATFORM"]["CORNERS"] = corners
    return trial


@pytest.mark.parametrize("kind", ["zero-size", "collinear", "NaN"])
def test_one_bad_plate_is_dropped_alone(tmp_path, walking, kind):
    good_path, bad_path = tmp_path / "good.c3d", tmp_path / "bad.c3d"
    write_c3d(walking, good_path)
    write_c3d(_bad_second_plate(walking, kind), bad_path)
    good = read_c3d(good_path)
    reason = "non-finite" if kind == "NaN" else "degenerate"
    with pytest.warns(AhbmWarning, match=rf"force plate 2 of 2 skipped: .*{reason}") as rec:
        bad = read_c3d(bad_path)
    assert not [w for w in rec if "force plates not computed" in str(w.message)]
    assert len(good.force_plates) == 2 and len(bad.force_plates) == 1
    np.testing.assert_array_equal(bad.force_plates[0].force, good.force_plates[0].force)
    np.testing.assert_array_equal(bad.force_plates[0].corners, good.force_plates[0].corners)


def test_gait_without_mass_never_prints_or_uses_nan_mass(tmp_path, walking, capsys):
    from ahbm.gait import analyze_gait
    from ahbm.gait.kinetics import joint_kinetics
    from ahbm.gait.subject import NoBodyMassError

    trial = _bad_second_plate(walking, "zero-size")
    trial.parameters.pop("PROCESSING", None)  # no Bodymass in the file
    trial.subject = {}
    path = tmp_path / "nomass.c3d"
    write_c3d(trial, path)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["gait", str(path), "--report", str(tmp_path / "r.png")])
    out = capsys.readouterr()
    text = out.out + out.err + "\n".join(str(w.message) for w in caught)
    assert code == 0
    assert "nan kg" not in text.lower() and "mass nan" not in text.lower()
    assert "body mass not known" in text and "--mass KG" in text
    assert "force plate 2 of 2 skipped" in text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        result = analyze_gait(path)
    assert "nan" not in repr(result).split("cadence")[1].lower()
    assert "mass=unknown" in repr(result) and "--mass KG" in result.summary()
    with pytest.raises(NoBodyMassError, match="--mass KG"):
        joint_kinetics(None, None, result.subject, [], object())
