"""A trial carrying Plug-in Gait outputs is checked against them: the pipeline's own
outputs written into a C3D as a vendor's would be (angles in degrees, moments in N·mm,
joint centres as virtual points) agree exactly, and each kind of disagreement a lab
could meet (a curve that does not match, an opposite transverse sign, a displaced
ankle centre) is flagged."""

from dataclasses import replace

import numpy as np
import pytest

from ahbm.gait import GaitSettings, analyze_gait, compare_with_file_outputs
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.io import read_c3d, write_c3d

pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")
SETTINGS = GaitSettings(cutoff=10.0)
CENTRES = {"LFEP": "LHJC", "RFEP": "RHJC", "LFEO": "LKJC", "RFEO": "RKJC", "LTIO": "LAJC",
           "RTIO": "RAJC"}  # fmt: skip


def _with_outputs(trial, result, edit=None):
    """The trial plus `result`'s Plug-in Gait layout as model outputs (trial units: m)."""
    pig = result.as_plug_in_gait()
    names = [k for k in pig if k.endswith(("Angles", "Moment", "Power", "GroundReactionForce"))]
    cols = {k: np.nan_to_num(pig[k]) for k in names}  # Vicon writes 0 where it has none
    cols.update({f: np.asarray(result.joint_centres[o]) for f, o in CENTRES.items()})
    if edit:
        edit(cols)
    kinds = {}
    for k in names:
        kind = (
            "angle" if k.endswith("Angles") else "moment" if k.endswith("Moment")
            else "power" if k.endswith("Power") else "force"
        )  # fmt: skip
        kinds[k] = (kind, {"angle": "rad", "moment": "N m", "power": "W", "force": "N"}[kind])
    labels = list(trial.point_labels) + list(cols)
    points = np.concatenate([trial.points, np.stack([cols[k] for k in cols], axis=1)], axis=1)
    return replace(
        trial,
        points=points,
        point_labels=labels,
        point_kinds=kinds,
        point_descriptions=[],
        point_residuals=None,
        point_mask=None,
    )


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    trial, _ = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    result = analyze_gait(trial, settings=SETTINGS)
    return trial, result, tmp_path_factory.mktemp("pig")


def _roundtrip(folder, trial, name):
    path = folder / f"{name}.c3d"
    write_c3d(trial, path)
    return read_c3d(path)


def test_own_outputs_through_a_c3d_agree(case):
    trial, result, folder = case
    tr = _roundtrip(folder, _with_outputs(trial, result), "same")
    assert tr.point_kinds["LKneeAngles"][0] == "angle"
    r = analyze_gait(tr, settings=SETTINGS)
    assert not r.flags, r.flags
    assert {"LKneeAngles", "RHipMoment", "LAnklePower", "LAJC"} <= set(r.file_outputs)
    for name, c in r.file_outputs.items():
        if "r" in c:
            comps = [2] if name.endswith("Power") else [0, 1, 2]
            r_ = c["r"][comps]
            assert np.isfinite(r_).sum() >= 1 and np.all(r_[np.isfinite(r_)] > 0.999), (name, c)
            assert np.all(c["rms"][comps] < 1e-4), (name, c)  # float32 file values
        else:
            assert c["median_distance"] < 1e-5, (name, c)


def test_disagreements_are_flagged(case):
    trial, result, folder = case
    rng = np.random.default_rng(1)

    def edit(cols):
        cols["LKneeMoment"][:, 2] *= -1.0  # another transverse sign convention
        cols["RHipMoment"][:, 0] = rng.normal(size=len(cols["RHipMoment"]))  # not the curve
        cols["LTIO"] = cols["LTIO"] + np.array([0.015, 0.0, 0.0])  # 15 mm off

    tr = _roundtrip(folder, _with_outputs(trial, result, edit), "edited")
    with pytest.warns(Warning, match="gait checks failed"):
        r = analyze_gait(tr, settings=SETTINGS)
    text = " | ".join(r.flags)
    assert "LKneeMoment: the transverse moment has the opposite sign" in text
    assert "RHipMoment: the sagittal curve differs" in text
    assert "LAJC: 15 mm (median) from the file's Plug-in Gait centre LTIO" in text
    assert not any(f.startswith(("RKneeMoment", "LHipMoment", "RAJC")) for f in r.flags)
    res = r.to_results()["file_outputs_check"]
    assert res["LKneeMoment"]["r"][2] == pytest.approx(-1.0, abs=1e-3)


def test_nothing_to_compare_without_outputs(case):
    trial, result, _ = case
    checks, flags = compare_with_file_outputs(result, trial)
    assert checks == {} and flags == []
    assert result.file_outputs == {}


def test_results_units_of_the_check(case):
    trial, result, folder = case
    from ahbm.gait.result import result_units

    tr = _roundtrip(folder, _with_outputs(trial, result), "units")
    r = analyze_gait(tr, settings=SETTINGS)
    units = result_units(r.to_results())
    assert units[("file_outputs_check", "LKneeMoment", "rms")] == "N·m/kg"
    assert units[("file_outputs_check", "LKneeMoment", "r")] == "1"
    assert units[("file_outputs_check", "LAJC", "median_distance")] == "m"


def test_a_displaced_centre_names_the_sign_flip_that_fixes_it(tmp_path):
    """File angles stored with another sign convention: the flag says which flip fits."""
    import copy

    from ahbm.gait.demo import synthetic_static_trial

    anatomy = {"tibial_torsion": 0.30, "thigh_wand_rotation": 0.20,
               "shank_wand_rotation": -0.15}  # fmt: skip
    trial, _ = synthetic_walking_trial(
        duration=2.6, noise=0.0, gap=None, anatomy=anatomy, heel_markers=False
    )
    truth = analyze_gait(trial, static=synthetic_static_trial(anatomy=anatomy), settings=SETTINGS)
    t2 = _with_outputs(trial, truth)
    proc = dict(t2.parameters["PROCESSING"])
    subj = truth.subject
    for side, p in (("Left", "L"), ("Right", "R")):
        proc[f"{p}TibialTorsion"] = np.array([-subj.tibial_torsion[side]])  # flipped
        proc[f"{p}ThighRotation"] = np.array([subj.thigh_rotation[side]])
        proc[f"{p}ShankRotation"] = np.array([subj.shank_rotation[side]])
    t2 = copy.copy(t2)
    t2.parameters = {**t2.parameters, "PROCESSING": proc}
    with pytest.warns(Warning, match="gait checks failed"):
        r = analyze_gait(_roundtrip(tmp_path, t2, "flipped"), settings=SETTINGS)
    ajc = [f for f in r.flags if f.startswith("LAJC")]
    assert ajc and "with the file's LTibialTorsion with the opposite sign it" in ajc[0], r.flags
    assert not any(f.startswith(("LKJC", "RKJC")) for f in r.flags)  # knees are right


def test_a_torsion_left_out_of_the_vendor_centre_is_named(tmp_path):
    """The file's centre built without the torsion: the flag says 'left out'."""
    import copy

    # (a shank rotation of -0.15 would make "torsion left out" and "rotation with the
    # opposite sign" give the same offset angle, 0.15: -0.10 tells them apart)
    anatomy = {"tibial_torsion": 0.30, "shank_wand_rotation": -0.10}
    trial, _ = synthetic_walking_trial(
        duration=2.6, noise=0.0, gap=None, anatomy=anatomy, heel_markers=False
    )
    t1 = copy.copy(trial)
    proc = dict(trial.parameters["PROCESSING"])
    for p in ("L", "R"):
        proc[f"{p}TibialTorsion"] = np.array([0.30])
        proc[f"{p}ShankRotation"] = np.array([-0.10])
    t1.parameters = {**trial.parameters, "PROCESSING": proc}
    vendor = analyze_gait(t1, settings=SETTINGS.replace(tibial_torsion=0.0))  # no torsion
    t2 = _with_outputs(t1, vendor)
    with pytest.warns(Warning, match="gait checks failed"):
        r = analyze_gait(_roundtrip(tmp_path, t2, "left_out"), settings=SETTINGS)
    ajc = [f for f in r.flags if f.startswith("RAJC")]
    assert ajc and "with the file's RTibialTorsion left out it would be 0.0 mm" in ajc[0], r.flags


def test_bad_arguments_are_refused(case):
    from ahbm.errors import DataError

    trial, result, _ = case
    with pytest.raises(DataError, match="`result` must be the GaitResult"):
        compare_with_file_outputs({"angles": {}}, trial)
    with pytest.raises(DataError, match="`trial` must be a Trial"):
        compare_with_file_outputs(result, "walk.c3d")
    in_mm = replace(trial, points=trial.points * 1000.0, point_units="mm")
    with pytest.raises(DataError, match="holds points in 'mm'"):
        compare_with_file_outputs(result, in_mm)


def test_subject_prefixed_labels_are_compared(case):
    """Vicon writes ``Name:LKneeAngles``: the prefix does not hide the outputs."""
    trial, result, folder = case
    t = _with_outputs(trial, result)
    t = replace(
        t,
        point_labels=[f"Pat01:{lab}" for lab in t.point_labels],
        point_kinds={f"Pat01:{k}": v for k, v in t.point_kinds.items()},
    )
    r = analyze_gait(_roundtrip(folder, t, "prefixed"), settings=SETTINGS)
    assert not r.flags, r.flags
    assert {"LKneeMoment", "RAJC", "LHJC"} <= set(r.file_outputs)
    assert r.file_outputs["LKneeMoment"]["r"][0] > 0.999


def _stance_window(result, side="Left", length=25):
    """Frames of one stance phase of `side` (where its foot carries a load)."""
    grf = result.forces[f"{side[0]}GroundReactionForce"]
    loaded = np.flatnonzero(np.nan_to_num(grf[:, 2]) > 3.0)
    start = loaded[len(loaded) // 3]
    return np.arange(start, start + length)


def test_the_files_ground_reactions_are_compared_and_other_loads_left_out(case):
    """Where the file's Plug-in Gait put another load on a foot (a plate it assigned
    otherwise), the foot's moments are compared without those frames and it is flagged."""
    trial, result, folder = case
    w = _stance_window(result)

    def edit(cols):
        cols["LGroundReactionForce"][w, 2] += 4.0  # about 40 % of body weight more
        cols["LKneeMoment"][w, 0] += 2.0  # what that load would do to the knee

    tr = _roundtrip(folder, _with_outputs(trial, result, edit), "other_load")
    with pytest.warns(Warning, match="gait checks failed"):
        r = analyze_gait(tr, settings=SETTINGS)
    grf = [f for f in r.flags if f.startswith("LGroundReactionForce")]
    assert grf and f"in {w.size} of" in grf[0] and "compared without those frames" in grf[0]
    assert not any(f.startswith(("LKneeMoment", "RGroundReactionForce")) for f in r.flags)
    c = r.file_outputs["LKneeMoment"]
    assert c["frames_other_load"] == w.size and c["r"][0] > 0.999
    g = r.file_outputs["LGroundReactionForce"]
    assert g["frames_differing"] == w.size and g["scale"] == pytest.approx(1.0, abs=1e-3)
    assert r.file_outputs["RGroundReactionForce"]["frames_differing"] == 0


def test_ground_reactions_stored_in_newtons_are_recognised(case):
    """Vicon normalises the foot's ground reaction by body mass; a file in N is also read."""
    trial, result, folder = case
    mass = result.subject.mass

    def edit(cols):
        for p in "LR":
            cols[f"{p}GroundReactionForce"] = cols[f"{p}GroundReactionForce"] * mass

    r = analyze_gait(_roundtrip(folder, _with_outputs(trial, result, edit), "grf_n"),
                     settings=SETTINGS)  # fmt: skip
    assert not r.flags, r.flags
    assert r.file_outputs["LGroundReactionForce"]["scale"] == pytest.approx(mass, rel=1e-3)
    assert r.file_outputs["LGroundReactionForce"]["frames_differing"] == 0


def test_unfiltered_vendor_curves_are_compared_at_the_marker_cutoff(case):
    """A vendor curve with frame-to-frame noise (markers not filtered) keeps its shape:
    r is taken after the marker filter, the raw r is kept beside it."""
    trial, result, folder = case
    rng = np.random.default_rng(3)

    def edit(cols):
        m = cols["RHipMoment"]
        m[:, 0] += 0.15 * np.ptp(m[:, 0]) * rng.standard_normal(m.shape[0])

    r = analyze_gait(_roundtrip(folder, _with_outputs(trial, result, edit), "noisy"),
                     settings=SETTINGS)  # fmt: skip
    c = r.file_outputs["RHipMoment"]
    assert c["r_unfiltered"][0] < 0.93 and c["r"][0] > 0.96, c  # (0.91 and 0.97 seen)
    assert not any(f.startswith("RHipMoment") for f in r.flags)


def test_the_file_segment_axes_diagnose_a_turned_segment(case):
    """The file's tibia turned 30 deg about its long axis from ahbm's: its knee moment
    on those axes mixes in the frontal moment (r drops); ahbm's own lab-frame moment
    projected on the file's bone (LTIO/LTIL) agrees, and the flag says so."""
    trial, result, _ = case
    n = result.time.size
    t = result.time - result.time[0]
    moment = np.stack([np.sin(2 * np.pi * t), 0.1 * t, 0.8 * np.cos(5 * np.pi * t)], axis=1)
    axis = np.tile([0.0, 0.0, 1.0], (n, 1))  # ahbm's signed flexion axis (lab z here)
    turned = np.tile([np.sin(np.radians(30.0)), 0.0, np.cos(np.radians(30.0))], (n, 1))
    ours = {**result.moments, "LKneeMoment": result.moments["LKneeMoment"].copy()}
    ours["LKneeMoment"][:, 0] = np.sum(moment * axis, axis=1)
    res = replace(result, moments=ours)

    def edit(cols):
        cols["LKneeMoment"][:, 0] = np.sum(moment * turned, axis=1)
        cols["LTIO"] = np.tile([0.5, 0.2, 0.1], (n, 1))
        cols["LTIL"] = cols["LTIO"] + 0.1 * turned

    tr = _with_outputs(trial, res, edit)
    checks, flags = compare_with_file_outputs(res, tr, lab_moments={"LKneeMoment": (moment, axis)})
    c = checks["LKneeMoment"]
    assert c["r"][0] < 0.9
    assert c["r_file_axes"] > 0.999 and c["axis_angle_deg"] == pytest.approx(30.0, abs=0.1)
    assert any("turned differently about its long axis" in f for f in flags)
    # without the lab moments: the same r, no axes diagnosis
    checks, _ = compare_with_file_outputs(res, tr)
    assert "r_file_axes" not in checks["LKneeMoment"]


def test_a_flat_moment_has_no_correlation(case):
    trial, result, _ = case
    ours = {**result.moments, "LAnkleMoment": result.moments["LAnkleMoment"].copy()}
    rng = np.random.default_rng(3)
    ours["LAnkleMoment"][:, 0] = 0.004 * rng.normal(size=result.time.size)  # swing-like
    res = replace(result, moments=ours)
    checks, flags = compare_with_file_outputs(res, _with_outputs(trial, res))
    assert np.isnan(checks["LAnkleMoment"]["r"][0]) and checks["LAnkleMoment"]["flat"][0]
    assert not any(f.startswith("LAnkleMoment") for f in flags)
