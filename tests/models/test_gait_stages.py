"""The gait pipeline as stages: GaitSettings, each stage called alone, the signature
of analyze_gait, radians in the results and units in the HDF5 results."""

import dataclasses
import warnings
from dataclasses import replace

import h5py
import numpy as np
import pytest

from ahbm.errors import AhbmWarning, DataError
from ahbm.gait import (
    GaitResult,
    GaitSettings,
    analyze_gait,
    assign_plates,
    gait_cycles,
    gait_events,
    gait_markers,
    joint_angles,
    joint_kinetics,
    lower_extremity_model,
    result_units,
    save_gait_result,
    segment_frames,
    subject_parameters,
)
from ahbm.gait.demo import synthetic_walking_trial
from ahbm.io.hdf5 import load_result_units
from ahbm.types import Event


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return func(*args, **kwargs)


@pytest.fixture(scope="module")
def walk():
    trial, truth = synthetic_walking_trial(duration=2.6, noise=0.0, gap=None)
    return trial, truth, _quiet(analyze_gait, trial)


# --- GaitSettings ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "field,value",
    [
        ("cutoff", 0.0),
        ("cutoff", float("nan")),
        ("cutoff", "6"),
        ("grf_cutoff", -1.0),
        ("max_gap", -1),
        ("max_gap", 2.5),
        ("max_gap", True),
        ("bsp", "dempster_winter"),
        ("sex", "m"),
        ("threshold", -5.0),
        ("kinetics", "yes"),
        ("up", (0.0, 0.0, 0.0)),
        ("up", (0.0, 1.0)),
        ("up", "down"),
        ("leg_length", -0.9),
        ("knee_width", {"Left": 0.1, "Middle": 0.1}),
        ("ankle_width", {"Left": 0.0}),
        ("tibial_torsion", float("inf")),
        ("marker_radius", -0.001),
        ("marker_set", "vicon_full_body"),
        ("marker_set", 3),
        ("marker_map", {"LASI": 5}),
    ],
)
def test_settings_bad_value_names_the_field(field, value):
    with pytest.raises(DataError, match=rf"GaitSettings\.{field}"):
        GaitSettings(**{field: value})


def test_settings_defaults_replace_and_frozen():
    s = GaitSettings()
    assert (s.cutoff, s.max_gap, s.threshold, s.kinetics, s.up) == (6.0, 10, 20.0, "auto", "auto")
    t = s.replace(cutoff=8.0, up=[0, 1, 0])
    assert t.cutoff == 8.0 and t.up == (0.0, 1.0, 0.0) and s.cutoff == 6.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.cutoff = 3.0
    with pytest.raises(DataError, match="no field cuttoff"):
        s.replace(cuttoff=8.0)
    with pytest.raises(DataError, match=r"GaitSettings\.max_gap"):
        s.replace(max_gap=-2)
    assert s.to_dict()["marker_set"] == "plug_in_gait"


# --- stages called alone --------------------------------------------------------------


def test_markers_stage_alone(walk):
    trial, _, _ = walk
    mk = gait_markers(trial, settings=GaitSettings(cutoff=8.0))
    assert mk.smooth.shape == (trial.n_frames, len(mk.names), 3)
    assert {"LASI", "RTOE", "LHEE", "SACR"} <= set(mk.names)
    # noise-free Z-up data: no rotation, filled == the trial's own markers
    np.testing.assert_array_equal(mk.rotation, np.eye(3))
    j = trial.point_labels.index("LASI")
    np.testing.assert_allclose(mk.filled[:, mk.names.index("LASI")], trial.points[:, j])
    # the low-pass filter follows the noise-free trajectories within a few mm, and a
    # lower cutoff departs further from them
    dev = np.nanmax(np.abs(mk.smooth - mk.filled))
    low = gait_markers(trial, settings=GaitSettings(cutoff=3.0))
    assert 0.0 < dev < 5e-3 < np.nanmax(np.abs(low.smooth - low.filled))
    assert "smooth=array(" in repr(mk)


def test_events_kinetics_cycles_stages_compose_like_analyze_gait(walk):
    trial, truth, full = walk
    settings = GaitSettings()
    mk = gait_markers(trial, settings=settings)
    subj = _quiet(subject_parameters, trial)
    fr = segment_frames(mk.as_dict(), subj)
    assign = assign_plates(mk, fr, settings=settings)
    events = gait_events(mk, fr, assignment=assign)
    assert [(e.label, e.time, e.context) for e in events] == [
        (e.label, e.time, e.context) for e in full.events
    ]
    kin = joint_kinetics(mk, fr, subj, events, assign, settings=settings)
    for key, m in full.moments.items():
        np.testing.assert_array_equal(kin.moments[key], m)
    cycles = gait_cycles(events, {**joint_angles(fr, subj), **kin.moments}, time=mk.time)
    np.testing.assert_allclose(
        cycles["Left"]["KneeAngles"], full.cycles["Left"]["KneeAngles"], equal_nan=True
    )
    # without plate assignment the events are the kinematic ones only
    kinematic = gait_events(mk, fr)
    assert all(e.description.startswith("zeni") for e in kinematic)
    with pytest.raises(DataError, match="assignment"):
        joint_kinetics(mk, fr, subj, events, None)


def test_gait_cycles_closed_form():
    """A linear ramp cut from strike to strike is a straight line over 0-100 %."""
    t = np.linspace(0.0, 3.0, 301)
    ev = [Event("Foot Strike", x, "Right") for x in (0.5, 1.5, 2.5)]
    ev += [Event("Foot Off", 1.1, "Right"), Event("Foot Off", 2.0, "Right")]
    x = np.stack([t, 2 * t, -t], axis=1)
    c = gait_cycles(ev, {"RKneeAngles": x, "LKneeAngles": x}, time=t)
    by_rate = gait_cycles(ev, {"RKneeAngles": x}, rate=100.0)
    np.testing.assert_allclose(by_rate["Right"]["KneeAngles"], c["Right"]["KneeAngles"])
    assert c["Left"] == {}
    cyc = c["Right"]["KneeAngles"]
    assert cyc.shape == (2, 101, 3)
    np.testing.assert_allclose(cyc[0, :, 0], np.linspace(0.5, 1.5, 101), atol=1e-12)
    np.testing.assert_allclose(cyc[1, :, 1], 2 * np.linspace(1.5, 2.5, 101), atol=1e-12)
    np.testing.assert_allclose(c["Right"]["toe_off"], [60.0, 50.0])


# --- the result: radians, frozen, units in HDF5 ---------------------------------------


def test_result_is_a_frozen_dataclass_with_angles_in_radians(walk):
    _, truth, r = walk
    assert isinstance(r, GaitResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.source = "x"
    text = repr(r)
    assert "angles=dict[10] rad" in text and "array(" in text and len(text) < 2000
    assert "moments=dict[6] N·m/kg" in text and "cycles=(Left " in text
    knee = r.angles["LKneeAngles"][20:-20, 0]
    assert 0.8 < np.nanmax(knee) < 1.3  # ~60 degrees of swing flexion, in rad
    np.testing.assert_allclose(knee, truth.angles["LKneeAngles"][20:-20, 0], atol=np.radians(1))
    # per-frame angles and cycles share the unit
    cyc = r.cycles["Left"]["KneeAngles"]
    assert np.nanmax(cyc) == pytest.approx(np.nanmax(r.angles["LKneeAngles"][:, 0]), abs=0.05)
    assert "deg" in r.summary() and "N·m/kg" in r.summary()


def test_hdf5_results_carry_units_on_every_dataset(walk, tmp_path):
    trial, _, r = walk
    out = tmp_path / "walk.h5"
    name = save_gait_result(replace(trial, results={}), r, out)
    expected = {
        "LKneeAngles": "rad",
        "RHipMoment": "N·m/kg",
        "LAnklePower": "W/kg",
        "RKneeForce": "N/kg",
        "LHJC": "m",
        "events/Left/foot_strike": "s",
        "spatiotemporal/Right/cadence": "steps/min",
        "spatiotemporal/Right/stride_length": "m",
        "gait_cycles/Left/KneeAngles": "rad",
        "gait_cycles/Left/AnkleMoment": "N·m/kg",
        "gait_cycles/Right/toe_off": "%",
        "gait_settings/marker_cutoff_hz": "Hz",
        "gait_subject/mass": "kg",
        "gait_subject/Left_leg_length": "m",
        "gait_subject/Right_tibial_torsion": "rad",
    }
    seen = []
    with h5py.File(out, "r") as f:
        res = f["trials"][name]["results"]
        for path, unit in expected.items():
            assert res[path].attrs["units"] == unit, path
        res.visititems(lambda p, o: seen.append((p, dict(o.attrs))) if isinstance(o, h5py.Dataset)
                       else None)  # fmt: skip
        stored = res["LKneeAngles"][()]
    missing = [p for p, attrs in seen if "units" not in attrs]
    assert seen and not missing, missing
    # read back through ahbm: the same units as the rules give
    assert load_result_units(out, name) == result_units(r.to_results())
    np.testing.assert_array_equal(stored, r.angles["LKneeAngles"])


def test_result_units_rules():
    units = result_units(
        {"LKneeAngles": 0, "gait_settings": {"filter": "text", "vertical_axis": ["0", "0", "1"]}}
    )
    assert units == {
        ("LKneeAngles",): "rad",
        ("gait_settings", "filter"): "",
        ("gait_settings", "vertical_axis"): "",
    }


def test_save_trial_rejects_units_for_missing_results(tmp_path, walk):
    from ahbm.io.hdf5 import save_trial

    trial, _, _ = walk
    t = replace(trial, results={"x": np.zeros(3), "g": {"y": 1.0}})
    with pytest.raises(DataError, match="not in trial.results"):
        save_trial(t, tmp_path / "a.h5", result_units={("z",): "m"})
    with pytest.raises(DataError, match="group"):
        save_trial(t, tmp_path / "a.h5", result_units={"g": "m"})
    assert not (tmp_path / "a.h5").exists()


# --- analyze_gait's signature: keyword-only mass, options in settings= ------------------


def test_signature_breaks_are_clear(walk):
    trial, _, _ = walk
    with pytest.raises(TypeError):
        analyze_gait(trial, 70.0)  # mass is keyword-only since 0.2
    with pytest.raises(TypeError, match="cutoff"):
        analyze_gait(trial, cutoff=8.0)  # a GaitSettings field, not a keyword
    with pytest.raises(DataError, match="GaitSettings"):
        analyze_gait(trial, settings={"cutoff": 8.0})
    with pytest.raises(TypeError):
        lower_extremity_model(70.0, 1.75)
