"""Gait pipeline inputs: mass and measurements checked (units, plates' weight), kinematics
without a mass, plate zero offsets removed and loads under no foot ignored."""

import warnings
from dataclasses import replace

import numpy as np
import pytest

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import GaitSettings, analyze_gait, subject_parameters
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.io.trial import ForcePlate

# warnings are asserted where they are the point (pytest.warns); elsewhere quiet
pytestmark = pytest.mark.filterwarnings("ignore::ahbm.errors.AhbmWarning")


@pytest.fixture(scope="module")
def walk():
    trial, truth = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    return trial, truth, analyze_gait(trial)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"mass": 70000.0}, r"mass = 70000 kg is not a body mass.*70 if that was grams"),
        ({"mass": 0.0}, r"mass"),
        ({"mass": -70.0}, r"mass"),
        ({"mass": 2.0}, r"mass = 2 kg is not a plausible body mass"),
        ({"height": 1750.0}, r"`height` = 1750 m .*millimetres: give 1.75 m"),
    ],
)
def test_absurd_mass_or_height_is_an_error_naming_the_argument(walk, kwargs, match):
    trial, _, _ = walk
    with pytest.raises(DataError, match=match):
        analyze_gait(trial, **kwargs)


def test_leg_length_in_millimetres_names_leg_length_not_height(walk):
    trial, _, _ = walk
    with pytest.raises(DataError, match=r"`leg_length \(Left\)` = 920 m .*millimetres: give 0.92"):
        analyze_gait(trial, settings=GaitSettings(leg_length=920.0))
    with pytest.raises(DataError, match=r"knee_width \(Right\).*centimetres|millimetres"):
        analyze_gait(trial, settings=GaitSettings(knee_width=105.0))


def test_an_implausible_measurement_stored_in_the_file_is_used_and_flagged(walk):
    """Vicon ran its model with what the file stores (here a 100 mm leg length, as a lab
    that did not measure it leaves it): the pipeline uses it, warns and flags the result;
    the same value given as an argument is still an error."""
    import copy

    trial, _, _ = walk
    t = copy.copy(trial)
    proc = dict(trial.parameters["PROCESSING"])
    proc["LLegLength"] = np.array([100.0])
    t.parameters = {**trial.parameters, "PROCESSING": proc}
    with pytest.warns(AhbmWarning, match=r"the file's LLegLength = 100 mm is outside"):
        r = analyze_gait(t)
    assert r.subject.leg_length["Left"] == pytest.approx(0.1)
    assert [f for f in r.flags if f.startswith("subject: the file's LLegLength")]
    assert r.subject.implausible and "RLegLength" not in " ".join(r.subject.implausible)
    assert r.to_results()["gait_subject"]["implausible"] == r.subject.implausible
    with pytest.raises(DataError, match=r"`leg_length \(Left\)` = 0.1 m is outside"):
        analyze_gait(t, settings=GaitSettings(leg_length=0.1))
    assert analyze_gait(trial).subject.implausible == []


def test_no_mass_anywhere_gives_kinematics_under_auto_and_an_error_otherwise(walk):
    """No mass given, none in the file, and plates that cannot weigh the subject (no
    load): kinetics="auto" gives the kinematics with a warning that says why."""
    import copy

    trial, _, ref = walk
    t = copy.copy(trial)
    proc = {k: v for k, v in trial.parameters["PROCESSING"].items() if k != "Bodymass"}
    t.parameters = {**trial.parameters, "PROCESSING": proc}
    t.subject = {k: v for k, v in trial.subject.items() if k != "mass"}
    t.force_plates = [
        replace(fp, force=np.zeros_like(fp.force), moment=np.zeros_like(fp.moment))
        for fp in trial.force_plates
    ]
    with pytest.warns(AhbmWarning, match=r"no body mass given.*kinematics only"):
        r = analyze_gait(t)
    assert r.moments == {} and np.isnan(r.subject.mass)
    np.testing.assert_allclose(r.angles["LKneeAngles"], ref.angles["LKneeAngles"])
    from ahbm.gait import NoBodyMassError

    with pytest.raises(NoBodyMassError, match="no body mass given"):
        analyze_gait(t, settings=GaitSettings(kinetics=True))
    assert issubclass(NoBodyMassError, DataError)


def test_mass_is_compared_with_the_plates(walk):
    trial, _, _ = walk
    with pytest.warns(AhbmWarning, match=r"body mass 80.0 kg from `mass` differs by \+1[0-9] %"):
        analyze_gait(trial, mass=80.0, settings=GaitSettings(kinetics=False))
    with pytest.warns(AhbmWarning, match=r"body mass 7.0 kg .* differs by -90 %"):
        analyze_gait(trial, mass=7.0, settings=GaitSettings(kinetics=False))
    # with kinetics, the moments per kg that a wrong mass gives are flagged too
    with pytest.warns(
        AhbmWarning, match=r"peak ankle plantarflexor moment \d+\.\d\d N·m/kg is outside"
    ):
        r = analyze_gait(trial, mass=7.0)
    assert any("check the mass" in f for f in r.flags)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AhbmWarning)
        p = subject_parameters(trial, mass=72.0)  # within 10 %
    assert p.mass == 72.0
    # the file's Bodymass is checked the same way
    bad = replace(trial, subject={**trial.subject, "mass": 50.0})
    with pytest.warns(AhbmWarning, match=r"50.0 kg from the file's Bodymass"):
        subject_parameters(bad)


def test_kinematics_only_needs_no_mass(walk):
    trial, _, full = walk
    bare = replace(
        trial,
        parameters={k: v for k, v in trial.parameters.items() if k != "PROCESSING"},
        subject={},
        force_plates=[],
    )
    r = analyze_gait(
        bare,
        settings=GaitSettings(kinetics=False, leg_length=0.92, knee_width=0.105, ankle_width=0.072),
    )
    assert np.isnan(r.subject.mass) and r.moments == {} and r.energetics == {}
    np.testing.assert_allclose(r.angles["LKneeAngles"], full.angles["LKneeAngles"], atol=1e-12)
    # kinetics="auto" (the default): no plates, kinematics only, said in a warning
    with pytest.warns(AhbmWarning, match="no force plates; kinematics only"):
        auto = analyze_gait(bare, settings=GaitSettings(leg_length=0.92, knee_width=0.105,
                                                        ankle_width=0.072))  # fmt: skip
    assert auto.moments == {} and auto.settings["kinetics"] is False
    np.testing.assert_allclose(auto.angles["LKneeAngles"], r.angles["LKneeAngles"], atol=1e-12)
    required = GaitSettings(kinetics=True)
    with pytest.raises(DataError, match="pass `mass`"):  # kinetics required needs the mass
        analyze_gait(bare, settings=required)
    with pytest.raises(DataError, match="no force plates"):
        analyze_gait(bare, mass=70.0, settings=required)


def test_plate_zero_offset_is_removed_and_reported(walk):
    trial, truth, clean = walk
    plates = []
    for p in trial.force_plates:
        off = np.array([3.0, -2.0, 35.0])  # 35 N of zero drift, everywhere
        plates.append(replace(p, force=p.force + off, moment=p.moment + 0.0))
    drifted = replace(trial, force_plates=plates)
    with pytest.warns(AhbmWarning, match=r"force plate 0 reads 35.0 N with nothing on it"):
        r = analyze_gait(drifted)
    assert r.settings["plate_offsets_n"][0].startswith("plate 0: Fz 35.0 N, Fx 3.0 N, Fy -2.0 N")
    for key, m in clean.moments.items():
        np.testing.assert_allclose(r.moments[key], m, atol=1e-6, equal_nan=True, err_msg=key)
    # the plates' weight of the subject is right again
    p = subject_parameters(drifted, mass=70.0, plates=_markers(drifted).plates)
    assert p.mass == 70.0


def _markers(trial):
    from ahbm.gait import gait_markers

    return gait_markers(trial)


def test_a_load_under_no_foot_is_ignored_with_a_warning_naming_plate_and_frames(walk):
    trial, _, clean = walk
    n = trial.force_plates[0].force.shape[0]
    rate = trial.force_plates[0].rate
    F = np.zeros((n, 3))
    F[200:400, 2] = 120.0  # a walking aid 2 m to the side, frames 20-39
    cop = np.full((n, 3), np.nan)
    cop[200:400] = [1.0, 2.0, 0.0]
    T = np.zeros((n, 3))
    aid = ForcePlate(F, np.cross(np.nan_to_num(cop), F), cop, T, np.zeros((4, 3)), np.zeros(3),
                     rate=rate)  # fmt: skip
    spiky = replace(trial, force_plates=[*trial.force_plates, aid])
    with pytest.warns(AhbmWarning, match=r"force plate 2: a load of up to 120 N lies under no "
                      r"foot .* in 20 frame\(s\) 20-39"):  # fmt: skip
        r = analyze_gait(spiky)
    for key, m in clean.moments.items():  # both legs keep their kinetics
        assert np.isfinite(r.moments[key]).sum() == np.isfinite(m).sum(), key
        np.testing.assert_allclose(r.moments[key], m, atol=1e-9, equal_nan=True)
