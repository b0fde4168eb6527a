"""Gait Variable Scores, Gait Profile Score and normative references (ahbm.gait.scores).

Known answers: a constant offset c on one variable gives that GVS = |c| and
a side GPS of |c|/3 (|c|/sqrt(15) overall); a sinusoid a sin(2 pi t) sampled
at 0, 2, ..., 100 % gives a GVS of a sqrt(25/51); the GPS is the RMS of the
GVS (Baker et al. 2009). The example on the shared Vicon trials is the one
docs/gait_scores.md shows.
"""

import warnings

import numpy as np
import pytest

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import (
    SCORE_VARIABLES,
    GaitReference,
    gait_profile_score,
    gait_reference,
    gait_reference_band,
    gait_reference_from_files,
    gait_score_curves,
    gait_variable_scores,
    model_output_cycles,
    read_gait_reference,
    write_gait_reference,
)

T = np.linspace(0.0, 1.0, 51)


def controls(n=12, seed=0, n_points=51):
    """Gait-like score curves (rad): per-variable harmonics with cycle-to-cycle variation."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n_points)
    amp = np.radians([4, 3, 5, 25, 6, 8, 30, 10, 6])[:, None]
    off = np.radians([10, 0, 0, 15, -2, 3, 20, 0, -10])[:, None]
    base = off + amp * np.sin(2 * np.pi * t + np.arange(9)[:, None])
    var = rng.normal(0.0, 1.0, (n, 9, 1)) * np.radians(2.0)
    wobble = rng.normal(0.0, 1.0, (n, 9, 1)) * np.radians(1.0) * np.cos(2 * np.pi * t)
    return base + var + wobble


def test_constant_offset_on_one_variable():
    ref = gait_reference(controls())
    c = np.radians(7.0)
    for v in range(9):
        subj = ref.mean[None].copy()
        subj[0, v] -= c
        gvs = gait_variable_scores(subj, ref)
        expected = np.zeros((1, 9))
        expected[0, v] = c
        np.testing.assert_allclose(gvs, expected, atol=1e-12)
        s = gait_profile_score({"Left": subj, "Right": ref.mean[None]}, ref)
        assert s.gps["Left"] == pytest.approx(c / 3.0)
        assert s.gps["Right"] == pytest.approx(0.0, abs=1e-12)
        pelvis = SCORE_VARIABLES[v][2] == "PelvisAngles"
        # the pelvis enters the overall GPS from the Left side only (by default)
        assert s.overall == pytest.approx(c / np.sqrt(15.0))
        s_r = gait_profile_score(
            {"Left": subj, "Right": ref.mean[None]}, ref, overall_pelvis="Right"
        )
        assert s_r.overall == pytest.approx(0.0 if pelvis else c / np.sqrt(15.0), abs=1e-12)


def test_sinusoidal_deviation_closed_form():
    a = np.radians(5.0)
    ref = np.zeros((9, 51))
    subj = np.zeros((9, 51))
    subj[3] = a * np.sin(2 * np.pi * T)  # sum of sin^2 at 0, 2, ..., 100 % is 25
    gvs = gait_variable_scores(subj, ref)
    assert gvs[3] == pytest.approx(a * np.sqrt(25.0 / 51.0), rel=1e-12)
    subj[6] = a  # and a constant on the knee
    s = gait_profile_score({"Right": subj[None]}, ref)
    assert s.gps["Right"] == pytest.approx(a * np.sqrt((25.0 / 51.0 + 1.0) / 9.0), rel=1e-12)
    assert np.isnan(s.overall) and list(s.gvs) == ["Right"]


def test_gps_is_the_rms_of_the_gvs_over_cycles_and_sides():
    ref = gait_reference(controls(20, seed=1))
    left, right = controls(3, seed=2) * 1.3, controls(4, seed=3) + 0.05
    s = gait_profile_score({"Left": left, "Right": right}, ref)
    for side, c in (("Left", left), ("Right", right)):
        per = np.sqrt(((c - ref.mean) ** 2).mean(axis=-1))  # independent: numpy by hand
        np.testing.assert_allclose(s.gvs_cycles[side], per, rtol=1e-12)
        np.testing.assert_allclose(s.gps_cycles[side], np.sqrt((per**2).mean(axis=1)))
        np.testing.assert_allclose(s.gvs[side], np.sqrt((per**2).mean(axis=0)))
        # the side's GPS is the RMS over every cycle, variable and point
        assert s.gps[side] == pytest.approx(np.sqrt(((c - ref.mean) ** 2).mean()))
        assert s.gps[side] == pytest.approx(np.sqrt(np.mean(s.gvs[side] ** 2)))
    fifteen = np.r_[s.gvs["Left"], s.gvs["Right"][3:]]
    assert s.overall == pytest.approx(np.sqrt(np.mean(fifteen**2)))
    # linear in the deviation: doubling it doubles every score
    s2 = gait_profile_score({"Left": 2 * left - ref.mean, "Right": 2 * right - ref.mean}, ref)
    assert s2.overall == pytest.approx(2 * s.overall)
    # a subject at the reference mean scores 0
    zero = gait_profile_score({"Left": ref.mean, "Right": ref.mean[None]}, ref)
    assert zero.overall == 0.0 and not zero.gvs["Left"].any()


def test_reference_cycles_score_their_own_spread():
    c = controls(15, seed=4)
    ref = gait_reference(c)
    np.testing.assert_allclose(ref.mean, c.mean(axis=0))
    np.testing.assert_allclose(ref.sd, c.std(axis=0, ddof=1))
    gvs, gps = ref.cycle_scores()
    # mean over cycles of GVS^2 = mean over points of the (biased) variance
    n = len(c)
    np.testing.assert_allclose((gvs**2).mean(axis=0), ((n - 1) / n * ref.sd**2).mean(axis=1))
    assert gps.shape == (15,) and ref.normal_profile().shape == (10,)
    a, b = ref.gps_log_stats()
    assert a == pytest.approx(np.log(gps).mean()) and b == pytest.approx(np.log(gps).std(ddof=1))


def _side_cycles(curves51, n_points=101):
    """A pipeline-like cycles mapping whose score variables are `curves51` (resampled)."""
    t_new = np.linspace(0.0, 1.0, n_points)
    up = np.stack(
        [[np.interp(t_new, T, curves51[i, v]) for v in range(9)] for i in range(len(curves51))]
    )
    cyc = {name: np.full((len(curves51), n_points, 3), 9.0) for _, _, name, _ in SCORE_VARIABLES}
    for v, (_, _, name, comp) in enumerate(SCORE_VARIABLES):
        cyc[name][:, :, comp] = up[:, v]
    cyc["KneeMoment"] = np.zeros((len(curves51), n_points, 3))  # ignored
    cyc["toe_off"] = np.full(len(curves51), 60.0)
    return cyc


def test_curves_from_pipeline_cycles_pick_the_right_components():
    c = controls(3, seed=5)
    cyc = _side_cycles(c)
    np.testing.assert_allclose(gait_score_curves(cyc), c, atol=1e-12)  # 101 -> every 2nd point
    # other resolutions are resampled linearly over the cycle
    np.testing.assert_allclose(gait_score_curves(_side_cycles(c, 201)), c, atol=1e-12)

    class Result:  # anything with .cycles, as a GaitResult
        cycles = {"Left": cyc, "Right": _side_cycles(c[:2])}

    ref = gait_reference(Result())  # both sides pooled
    assert ref.n_cycles == 5
    s = gait_profile_score(Result(), gait_reference(c))
    assert set(s.gvs) == {"Left", "Right"} and s.units == "rad"
    assert len(s.gps_cycles["Right"]) == 2
    assert gait_reference([Result(), Result()], sides=["left"]).n_cycles == 6
    assert "Knee flexion" in s.summary() and "deg" in s.summary()


def test_band_and_csv_round_trip(tmp_path):
    ref = gait_reference(controls())
    path = tmp_path / "norm.csv"
    write_gait_reference(ref, path)
    back = read_gait_reference(path)
    np.testing.assert_allclose(back.mean, ref.mean, atol=1e-9)
    np.testing.assert_allclose(back.sd, ref.sd, atol=1e-9)
    assert back.n_cycles == 0 and "norm.csv" in back.source
    # a hand-written band in degrees at 1 % steps, extra columns ignored, no SD
    pct = np.arange(101.0)
    cols = {v[0]: 10.0 * i + pct / 10.0 for i, v in enumerate(SCORE_VARIABLES)}
    text = "percent,note," + ",".join(cols) + "\n"
    for k, p in enumerate(pct):
        text += f"{p},x," + ",".join(f"{cols[c][k]}" for c in cols) + "\n"
    (tmp_path / "band.csv").write_text(text.replace(",x,", ",0,"))
    band = read_gait_reference(tmp_path / "band.csv")
    np.testing.assert_allclose(np.degrees(band.mean[2]), 20.0 + np.linspace(0, 10, 51))
    assert np.isnan(band.sd).all()
    s = gait_profile_score({"Left": band.mean}, band)
    assert s.gps["Left"] == 0.0
    with pytest.raises(DataError, match="cycle"):
        band.cycle_scores()
    with pytest.raises(DataError, match="foot_progression"):
        (tmp_path / "bad.csv").write_text("percent,pelvic_tilt\n0,1\n100,2\n")
        read_gait_reference(tmp_path / "bad.csv")
    np.testing.assert_allclose(gait_reference_band(ref.mean, ref.sd).mean, ref.mean)


def test_bad_input_names_the_variable_and_cycle():
    c = controls(4)
    c[2, 7, 10] = np.nan
    with pytest.raises(DataError, match="cycle 2, Ankle dorsiflexion has NaN at 20 %"):
        gait_reference(c)
    cyc = _side_cycles(controls(3))
    cyc["HipAngles"][1, 40, 2] = np.nan
    with pytest.raises(DataError, match="Left cycle 1, Hip rotation has NaN"):
        gait_profile_score({"Left": cyc}, gait_reference(controls()))
    with pytest.warns(AhbmWarning, match=r"cycle\(s\) \[1\] of 3 dropped"):
        assert gait_score_curves(cyc, drop_nan=True).shape == (2, 9, 51)
    del cyc["FootProgressAngles"]
    with pytest.raises(DataError, match="lack FootProgressAngles"):
        gait_score_curves(cyc)
    with pytest.raises(DataError, match=r"shape \(\.\.\., 9, n_points\)"):
        gait_reference(np.zeros((5, 8, 51)))
    with pytest.raises(DataError, match="at least 2 cycles"):
        gait_reference(controls(1))
    with pytest.raises(DataError, match="unknown side 'Middle'"):
        gait_profile_score({"Middle": controls(1)}, gait_reference(controls()))
    with pytest.raises(DataError, match="GaitResult"):
        gait_profile_score(controls(2), gait_reference(controls()))
    with pytest.raises(DataError, match="overall_pelvis"):
        gait_profile_score({"Left": controls(1)}, gait_reference(controls()), overall_pelvis="up")
    with pytest.raises(DataError, match="no such file"):
        read_gait_reference("no/such/band.csv")


# --- the documented example: the shared Vicon trials (docs/gait_scores.md) ---


@pytest.fixture(scope="module")
def vicon(shared_data):
    return shared_data / "c3d" / "vicon"


def test_example_on_shared_trials_file_outputs(vicon):
    """Reference: Vicon's Plug-in Gait outputs of two typical walkers; subject: PlugInC3D."""
    ref = gait_reference_from_files(
        [vicon / "gait-pig-nz.c3d", vicon / "Vicon_analysis.c3d"], outputs="file"
    )
    assert ref.n_cycles == 9 and len(ref.trials) == 2
    s = gait_profile_score(model_output_cycles(vicon / "PlugInC3D.c3d"), ref)
    deg = {k: np.degrees(v) for k, v in s.gps.items()}
    # the numbers docs/gait_scores.md quotes
    assert deg["Left"] == pytest.approx(10.37, abs=0.01)
    assert deg["Right"] == pytest.approx(22.97, abs=0.01)
    assert np.degrees(s.overall) == pytest.approx(19.33, abs=0.01)
    knee_r = np.degrees(s.gvs["Right"][6])
    assert knee_r == pytest.approx(49.75, abs=0.01) and knee_r == np.degrees(s.gvs["Right"]).max()
    _, gps_ref = ref.cycle_scores()
    assert np.degrees(gps_ref.mean()) == pytest.approx(4.16, abs=0.01)
    # the subject is far outside the reference group's own spread
    assert min(s.gps.values()) > gps_ref.max()
    # the GDI on a toy basis: 5 features of the 11 cycles of controls and subject
    from ahbm.gait import gait_deviation_index_sides, gdi_reference, gdi_star

    subject = model_output_cycles(vicon / "PlugInC3D.c3d")
    assert np.degrees(gait_score_curves(subject["Right"])[:, 6].mean()) == pytest.approx(
        57.4, abs=0.05
    )
    both = np.concatenate([ref.curves, gait_reference(subject).curves])
    gdi_ref = gdi_reference(ref, data=both, n_features=5)
    assert gdi_ref.fidelity == pytest.approx(0.990, abs=5e-4)
    gdi = gait_deviation_index_sides(subject, gdi_ref)
    assert gdi["Left"][0] == pytest.approx(80.5, abs=0.05)
    assert gdi["Right"][0] == pytest.approx(67.7, abs=0.05)
    a, b = ref.gps_log_stats()
    assert gdi_star(s.gps["Left"], ln_mean=a, ln_sd=b) == pytest.approx(77.6, abs=0.05)
    assert gdi_star(s.gps["Right"], ln_mean=a, ln_sd=b) == pytest.approx(60.1, abs=0.05)


def test_example_on_shared_trials_ahbm_pipeline(vicon):
    """The same with ahbm's own pipeline: the folder route equals scoring the results directly."""
    from ahbm.gait import analyze_gait

    files = [vicon / "gait-pig-nz.c3d", vicon / "Vicon_analysis.c3d"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        ref = gait_reference_from_files(files)
        results = [analyze_gait(f) for f in [*files, vicon / "PlugInC3D.c3d"]]
        direct = gait_reference(results[:2], drop_nan=True)
    np.testing.assert_array_equal(ref.curves, direct.curves)
    assert ref.n_cycles == 6  # 3 of Vicon_analysis's cycles have gaps in a score variable
    s = gait_profile_score(results[2], ref)
    assert np.degrees(s.gps["Left"]) == pytest.approx(10.31, abs=0.01)
    assert np.degrees(s.gps["Right"]) == pytest.approx(23.73, abs=0.01)
    assert np.degrees(s.overall) == pytest.approx(19.85, abs=0.01)


def test_reference_from_files_errors(tmp_path, vicon):
    with pytest.raises(DataError, match="no file matches"):
        gait_reference_from_files(tmp_path / "*.c3d", outputs="file")
    with pytest.raises(DataError, match="outputs"):
        gait_reference_from_files(vicon, outputs="vicon")
    assert isinstance(gait_reference_from_files(vicon, outputs="file"), GaitReference)
    with pytest.raises(DataError, match="jobs: pipeline options"):
        gait_reference_from_files(vicon, outputs="file", jobs=2)
    with pytest.raises(DataError, match="`files`"):
        gait_reference_from_files(None)


def test_example_classifier_on_shared_trials(vicon):
    """PCA + LDA on the 11 cycles of the three Vicon trials (docs/gait_scores.md)."""
    pytest.importorskip("sklearn", reason="the learn extra (scikit-learn) is not installed")
    from ahbm.analysis import cross_validate_curve_classifier, curve_pca

    names = ["gait-pig-nz", "PlugInC3D", "Vicon_analysis"]
    parts = [gait_reference(model_output_cycles(vicon / f"{n}.c3d")).curves for n in names]
    x = np.concatenate(parts)  # per trial: its Left cycles, then its Right cycles
    group = np.repeat(["typical", "PlugInC3D", "typical"], [len(p) for p in parts])
    assert x.shape == (11, 9, 51) and (group == "PlugInC3D").sum() == 2
    pca = curve_pca(x, n_components=3)
    assert pca.explained_variance_ratio.sum() == pytest.approx(0.898, abs=1e-3)
    cv = cross_validate_curve_classifier(x, group, folds=2, n_components=3)
    assert cv.confusion.tolist() == [[1, 1], [0, 9]]  # classes ("PlugInC3D", "typical")
    # the one miss is PlugInC3D's left cycle (GPS 10.4 deg); its right (22.97 deg) is found
    assert cv.predicted[2] == "typical" and cv.predicted[3] == "PlugInC3D"
