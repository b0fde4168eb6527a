"""OpenSim's Scale tool run by ahbm: setup parsing and runs on models with known answers."""

import re

import numpy as np
import pytest

from ahbm.bsp import scale_segments
from ahbm.errors import AhbmWarning, FileFormatError
from ahbm.io import Trial, write_trc
from ahbm.kinematics.marker_model import marker_jacobians
from ahbm.kinematics.model_file import load_model, save_model
from ahbm.kinematics.tree import Model
from ahbm.opensim import read_mot
from ahbm.opensim.scale_setup import read_scale_setup
from ahbm.opensim.scale_tool import run_scale

MEASUREMENTS = """
        <MeasurementSet><objects>
          <Measurement name="pelvis"><apply>true</apply>
            <MarkerPairSet><objects>
              <MarkerPair><markers> ASIS PSIS</markers></MarkerPair>
              <MarkerPair><markers>ASIS SACR</markers></MarkerPair>
            </objects></MarkerPairSet>
            <BodyScaleSet><objects><BodyScale name="pelvis"><axes> X Y Z</axes></BodyScale>
            </objects></BodyScaleSet>
          </Measurement>
          <Measurement name="thigh_length"><apply>true</apply>
            <MarkerPairSet><objects><MarkerPair><markers>HIPM KNEE</markers></MarkerPair>
            </objects></MarkerPairSet>
            <BodyScaleSet><objects><BodyScale name="thigh"><axes>Z</axes></BodyScale>
            </objects></BodyScaleSet>
          </Measurement>
          <Measurement name="thigh_width"><apply>true</apply>
            <MarkerPairSet><objects><MarkerPair><markers>THA THB</markers></MarkerPair>
            </objects></MarkerPairSet>
            <BodyScaleSet><objects><BodyScale name="thigh"><axes>X Y</axes></BodyScale>
            </objects></BodyScaleSet>
          </Measurement>
          <Measurement name="unused"><apply>false</apply>
            <MarkerPairSet><objects><MarkerPair><markers>THA KNEE</markers></MarkerPair>
            </objects></MarkerPairSet>
            <BodyScaleSet><objects><BodyScale name="shank"><axes>X Y Z</axes></BodyScale>
            </objects></BodyScaleSet>
          </Measurement>
        </objects></MeasurementSet>"""

TASKS = "".join(
    f'<IKMarkerTask name="{n}"><apply>true</apply><weight>{w}</weight></IKMarkerTask>'
    for n, w in [("ASIS", 10), ("PSIS", 1), ("SACR", 1), ("HIPM", 1), ("KNEE", 5), ("THA", 1),
                 ("THB", 1), ("ANKLE", 2), ("TOE", 1), ("HEEL", 1)]
)  # fmt: skip


def _setup_text(model="generic.json", trial="static.trc", mass="70", order="measurements",
                scaler_extra="", placer_apply="true", time_range="0.05 0.1"):  # fmt: skip
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <ScaleTool name="subject">
    <mass>{mass}</mass>
    <height>1.8</height>
    <GenericModelMaker><model_file>{model}</model_file>
      <marker_set_file>Unassigned</marker_set_file></GenericModelMaker>
    <ModelScaler>
      <apply>true</apply>
      <scaling_order> {order}</scaling_order>
      {MEASUREMENTS}
      <ScaleSet><objects>
        <Scale><scales> 0.9 0.95 1.05</scales><segment>shank</segment><apply>true</apply></Scale>
        <Scale><scales> 2 2 2</scales><segment>foot</segment><apply>false</apply></Scale>
      </objects></ScaleSet>
      <marker_file>{trial}</marker_file>
      <time_range> {time_range}</time_range>
      <preserve_mass_distribution>false</preserve_mass_distribution>
      <output_model_file>out/scaled_only.json</output_model_file>
      <output_scale_file>out/scales.xml</output_scale_file>
      {scaler_extra}
    </ModelScaler>
    <MarkerPlacer>
      <apply>{placer_apply}</apply>
      <IKTaskSet><objects>{TASKS}</objects></IKTaskSet>
      <marker_file>{trial}</marker_file>
      <coordinate_file>Unassigned</coordinate_file>
      <time_range> {time_range}</time_range>
      <output_motion_file>out/static.mot</output_motion_file>
      <output_model_file>out/scaled.json</output_model_file>
      <output_marker_file>Unassigned</output_marker_file>
      <max_marker_movement>-1</max_marker_movement>
    </MarkerPlacer>
  </ScaleTool>
</OpenSimDocument>
"""


def _generic():
    m = Model("generic")
    m.add_body(
        "pelvis", "ground", {"type": "free_euler", "sequence": "ZXY"},
        mass=10.0, com=[0.0, 0.02, 0.05], inertia=np.diag([0.1, 0.09, 0.08]),
        markers={"ASIS": [0.1, 0.12, 0.0], "PSIS": [-0.08, 0.05, 0.02], "SACR": [-0.1, 0.0, 0.0]},
    )  # fmt: skip
    m.add_body(
        "thigh", "pelvis", {"type": "euler", "sequence": "YXZ"},
        position=[0.0, -0.08, -0.07], mass=8.0, com=[0.0, 0.0, -0.18],
        inertia=np.diag([0.12, 0.11, 0.02]),
        markers={"HIPM": [0.0, 0.0, 0.0], "KNEE": [0.0, 0.0, -0.41],
                 "THA": [0.05, 0.0, -0.2], "THB": [-0.05, 0.0, -0.2]},
    )  # fmt: skip
    m.add_body(
        "shank", "thigh", {"type": "revolute", "axis": [0, 1, 0]},
        position=[0.0, 0.0, -0.42], mass=3.5, com=[0.0, 0.0, -0.2],
        inertia=np.diag([0.05, 0.05, 0.004]), markers={"ANKLE": [0.0, -0.04, -0.4]},
    )  # fmt: skip
    m.add_body(
        "foot", "shank", {"type": "revolute", "axis": [0, 1, 0]},
        position=[0.0, 0.0, -0.43], mass=1.0, com=[0.05, 0.0, -0.03],
        inertia=np.diag([0.001, 0.004, 0.004]),
        markers={"TOE": [0.18, 0.0, -0.05], "HEEL": [-0.05, 0.0, -0.04]},
    )  # fmt: skip
    return m


TRUE_FACTORS = {"pelvis": 1.08, "thigh": [0.97, 0.97, 1.12], "shank": [0.9, 0.95, 1.05]}
Q_TRUE = np.array([0.1, 0.05, 0.95, 0.2, -0.05, 0.03, 0.3, 0.1, -0.2, -0.5, 0.15])


@pytest.fixture
def subject(tmp_path):
    """A generic model, and a static trial made by the true scaled model in the pose Q_TRUE."""
    generic = _generic()
    save_model(generic, tmp_path / "generic.json")
    truth = scale_segments(generic, TRUE_FACTORS, mass=70.0)
    names = ["ASIS", "PSIS", "SACR", "HIPM", "KNEE", "THA", "THB", "ANKLE", "TOE", "HEEL"]
    p, _ = marker_jacobians(truth, Q_TRUE, marker_names=names)
    rng = np.random.default_rng(7)
    pts = np.repeat(p[None], 12, axis=0)
    pts[:3] += rng.normal(0, 0.05, (3, len(names), 3))  # frames 0-2 (t < 0.05 s) are not used
    pts[10:] += rng.normal(0, 0.05, (2, len(names), 3))  # nor frames 10, 11 (t > 0.15 s)
    pts[3:10] = p  # 0.05 .. 0.15 s: the static pose
    write_trc(Trial(points=pts, point_labels=names, point_rate=60.0, point_units="m"),
              tmp_path / "static.trc")  # fmt: skip
    (tmp_path / "out").mkdir()
    return tmp_path, generic, truth, names, p


def test_setup_is_read_with_every_element(subject):
    folder = subject[0]
    (folder / "setup.xml").write_text(_setup_text())
    s = read_scale_setup(folder / "setup.xml")
    assert s.name == "subject" and s.mass == 70.0 and s.height == 1.8
    assert s.model_file == folder.resolve() / "generic.json" and s.marker_set_file is None
    sc = s.scaler
    assert sc.scaling_order == ("measurements",) and sc.time_range == (0.05, 0.1)
    assert [m.name for m in sc.measurements] == ["pelvis", "thigh_length", "thigh_width", "unused"]
    assert sc.measurements[0].marker_pairs == (("ASIS", "PSIS"), ("ASIS", "SACR"))
    assert sc.measurements[2].body_axes == (("thigh", "XY"),) and not sc.measurements[3].apply
    assert [b for b, _ in sc.manual_scales] == ["shank"]  # the foot's scale is not applied
    np.testing.assert_array_equal(sc.manual_scales[0][1], [0.9, 0.95, 1.05])
    assert sc.output_scale_file == folder.resolve() / "out" / "scales.xml"
    pl = s.placer
    assert pl.apply and len(pl.marker_tasks) == 10 and pl.marker_tasks[0].weight == 10.0
    assert pl.coordinate_file is None and pl.max_marker_movement == -1.0


def test_scale_run_recovers_the_subject(subject):
    folder, generic, truth, names, p = subject
    (folder / "setup.xml").write_text(_setup_text(order="measurements manualScale"))
    res = run_scale(folder / "setup.xml")
    # measurement factors: mean ratio of the marker distances (exact in the static frames)
    np.testing.assert_allclose(res.factors["pelvis"], [1.08] * 3, rtol=1e-12)
    np.testing.assert_allclose(res.factors["thigh"], [0.97, 0.97, 1.12], rtol=1e-12)
    np.testing.assert_allclose(res.factors["shank"], [0.9, 0.95, 1.05], rtol=1e-15)
    np.testing.assert_array_equal(res.factors["foot"], [1.0, 1.0, 1.0])
    assert set(res.measurement_factors) == {"pelvis", "thigh_length", "thigh_width"}
    s = res.scaled_model
    for name in ("positions", "coms", "masses", "inertias"):
        np.testing.assert_allclose(getattr(s, name), getattr(truth, name), rtol=1e-12, atol=1e-15)
    assert s.total_mass == pytest.approx(70.0, rel=1e-14)
    # marker placement: the fit finds the static pose, the markers stay where they are
    np.testing.assert_allclose(res.q_static, Q_TRUE, atol=1e-8)
    assert max(res.marker_errors.values()) < 1e-9
    placed, _ = marker_jacobians(res.model, Q_TRUE, marker_names=names)
    np.testing.assert_allclose(placed, p, atol=1e-9)
    # written files
    out = folder / "out"
    assert sorted(x.name for x in res.written) == sorted(
        ["scaled_only.json", "scales.xml", "static.mot", "scaled.json"]
    )
    again = load_model(out / "scaled.json")
    np.testing.assert_allclose(again.positions, res.model.positions)
    mot = read_mot(out / "static.mot", angle_columns=[])
    # OpenSim's marker placer writes the pose as a states file: values and speeds, radians
    assert not mot.in_degrees and mot.columns[1].endswith("/speed")
    values = mot.values[0, 0::2]
    assert sorted(values) == sorted(res.q_static) and not np.any(mot.values[0, 1::2])
    text = (out / "scales.xml").read_text()
    found = re.search(r"<scales>([^<]*)</scales>\s*<segment>thigh</segment>", text)
    np.testing.assert_allclose(np.fromstring(found[1], sep=" "), res.factors["thigh"], rtol=1e-16)


def test_manual_scales_before_measurements_are_overwritten(subject):
    folder = subject[0]
    (folder / "setup.xml").write_text(_setup_text(order="manualScale measurements",
                                                  placer_apply="false"))  # fmt: skip
    res = run_scale(folder / "setup.xml", write=False)
    np.testing.assert_allclose(res.factors["shank"], [0.9, 0.95, 1.05])  # no measurement on it
    np.testing.assert_allclose(res.factors["pelvis"], [1.08] * 3, rtol=1e-12)
    assert res.q_static is None and res.written == []


def test_the_time_range_selects_the_static_frames(subject):
    folder = subject[0]
    # frames 0..2 are noisy: a range that starts at 0 s includes them
    (folder / "setup.xml").write_text(_setup_text(time_range="0 0.1", placer_apply="false"))
    res = run_scale(folder / "setup.xml", write=False)
    assert abs(res.factors["pelvis"][0] - 1.08) > 1e-6


def test_placer_removes_model_markers_without_data_and_applies_coordinate_tasks(subject):
    folder, generic, *_ = subject
    generic.update_body("foot", markers={**generic.bodies[3].markers, "EXTRA": [0.0, 0.1, 0.0]})
    save_model(generic, folder / "generic.json")
    # a heavy coordinate task holds the foot at 0.2 rad instead of the trial's -0.5
    text = _setup_text().replace(
        "</objects></IKTaskSet>",
        '<IKCoordinateTask name="foot"><apply>true</apply><weight>1e8</weight>'
        "<value_type>manual_value</value_type><value>0.2</value></IKCoordinateTask>"
        '<IKCoordinateTask name="nothere"><apply>true</apply><weight>1</weight>'
        "</IKCoordinateTask></objects></IKTaskSet>",
    )
    (folder / "setup.xml").write_text(text)
    with pytest.warns(AhbmWarning, match="'nothere'"):
        res = run_scale(folder / "setup.xml", write=False)
    assert "EXTRA" not in res.model.bodies[3].markers
    assert "EXTRA" in res.scaled_model.bodies[3].markers
    assert res.q_static[-1] == pytest.approx(0.2, abs=1e-6)
    assert abs(res.q_static[-2] - Q_TRUE[-2]) < 0.05  # the knee still follows the markers


@pytest.mark.parametrize(
    "edit, match",
    [
        (("<model_file>generic.json</model_file>", "<model_file>Unassigned</model_file>"),
         r"line \d+.*model_file"),
        (("<markers> ASIS PSIS</markers>", "<markers> ASIS</markers>"),
         r"line \d+, element <markers>.*two marker names"),
        (("<axes>Z</axes>", "<axes>W</axes>"), r"line \d+, element <axes>"),
        (("<scaling_order> measurements", "<scaling_order> measures"), "unknown scaling step"),
        (("<scales> 0.9 0.95 1.05</scales>", "<scales> 0.9 x 1</scales>"),
         r"element <scales>: expected a number"),
        (('<?xml version="1.0" encoding="UTF-8" ?>',
          '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "b">]>'), "DOCTYPE"),
        (("<ScaleTool name", "<InverseKinematicsTool name"), "no <ScaleTool>"),
    ],
)  # fmt: skip
def test_bad_setups_name_the_element_and_line(tmp_path, edit, match):
    text = _setup_text().replace(*edit)
    if "InverseKinematicsTool" in edit[1]:
        text = text.replace("</ScaleTool>", "</InverseKinematicsTool>")
    (tmp_path / "bad.xml").write_text(text)
    with pytest.raises(FileFormatError, match=match):
        read_scale_setup(tmp_path / "bad.xml")


def test_missing_time_range_and_missing_model_are_reported(subject):
    folder = subject[0]
    (folder / "a.xml").write_text(_setup_text(time_range=""))
    with pytest.raises(FileFormatError, match="time_range"):
        run_scale(folder / "a.xml", write=False)
    (folder / "b.xml").write_text(_setup_text(model="nothere.json"))
    with pytest.raises(FileFormatError, match="does not exist"):
        run_scale(folder / "b.xml", write=False)


def test_scale_command_writes_the_setup_outputs_and_the_requested_files(subject, capsys):
    from ahbm.cli import main

    folder = subject[0]
    (folder / "setup.xml").write_text(_setup_text())
    rc = main(["scale", str(folder / "setup.xml"), "-o", str(folder / "final.json"),
               "--scale-file", str(folder / "f.xml")])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "measurement thigh_length: 1.12" in out and "static pose: marker error" in out
    assert (folder / "final.json").is_file() and (folder / "out" / "scales.xml").is_file()
    assert load_model(folder / "final.json").body_names == ["pelvis", "thigh", "shank", "foot"]
    assert main(["scale", str(folder / "missing.xml")]) == 1


def test_marker_set_written_by_the_placer_is_read_by_the_generic_model_maker(subject):
    folder, generic, *_ = subject
    text = _setup_text().replace(
        "<output_marker_file>Unassigned</output_marker_file>",
        "<output_marker_file>out/markers.xml</output_marker_file>",
    )
    (folder / "a.xml").write_text(text)
    first = run_scale(folder / "a.xml")
    assert folder / "out" / "markers.xml" in first.written
    # the generic model with the placed markers (in the scaled bodies' frames), not scaled
    text = _setup_text(placer_apply="false").replace(
        "<marker_set_file>Unassigned</marker_set_file>",
        "<marker_set_file>out/markers.xml</marker_set_file>",
    )
    text = text.replace("<apply>true</apply>\n      <scaling_order>",
                        "<apply>false</apply>\n      <scaling_order>")  # fmt: skip
    (folder / "b.xml").write_text(text)
    second = run_scale(folder / "b.xml", write=False)
    for b1, b2 in zip(first.model.bodies, second.model.bodies, strict=True):
        assert b1.markers.keys() == b2.markers.keys()
        for k in b1.markers:
            np.testing.assert_array_equal(b1.markers[k], b2.markers[k])
    np.testing.assert_array_equal(second.model.masses, generic.masses)


def test_the_default_pose_satisfies_coordinate_couplings():
    from ahbm.dynamics import CoordinateCoupling
    from ahbm.opensim.scale_tool import _default_pose

    m = Model()
    for name in ("a", "b", "c"):
        m.add_body(name, "ground" if name == "a" else chr(ord(name) - 1),
                   {"type": "revolute", "axis": [0, 0, 1], "coordinates": [name]})  # fmt: skip
    # a chain listed dependent-first: c = 2 b + 0.1, b = a - 0.3
    m.constraints = [CoordinateCoupling("c", "b", ratio=2.0, offset=0.1),
                     CoordinateCoupling("b", "a", offset=-0.3)]  # fmt: skip
    np.testing.assert_allclose(_default_pose(m), [0.0, -0.3, -0.5], atol=1e-15)


def test_sets_kept_in_their_own_files_are_read(subject):
    folder = subject[0]
    text = _setup_text()
    # move the MeasurementSet and the IKTaskSet into files of their own, as OpenSim's examples do
    start, end = text.index("<MeasurementSet>"), text.index("</MeasurementSet>") + 17
    (folder / "measurements.xml").write_text(
        f'<?xml version="1.0"?>\n<OpenSimDocument Version="30000">{text[start:end]}'
        "</OpenSimDocument>"
    )
    text = text[:start] + '<MeasurementSet file="measurements.xml" />' + text[end:]
    start, end = text.index("<IKTaskSet>"), text.index("</IKTaskSet>") + 12
    (folder / "tasks.xml").write_text(text[start:end])
    text = text[:start] + '<IKTaskSet file="tasks.xml"/>' + text[end:]
    (folder / "setup.xml").write_text(text)
    s = read_scale_setup(folder / "setup.xml")
    assert len(s.scaler.measurements) == 4 and len(s.placer.marker_tasks) == 10
    (folder / "setup.xml").write_text(text.replace('file="tasks.xml"', 'file="nothere.xml"'))
    with pytest.raises(FileFormatError, match=r"nothere.xml.*does not exist"):
        read_scale_setup(folder / "setup.xml")
    (folder / "setup.xml").write_text(text.replace('file="tasks.xml"', 'file="measurements.xml"'))
    with pytest.raises(
        FileFormatError, match=r"element <IKTaskSet>: the file .* has no <IKTaskSet>"
    ):
        read_scale_setup(folder / "setup.xml")
