"""Reading OpenSim's IK, ID and external-loads setup files (ahbm.opensim.setup_files)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sample_data import SHARED

from ahbm.errors import FileFormatError
from ahbm.opensim import read_external_loads, read_id_setup, read_ik_setup

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

IK = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <InverseKinematicsTool name="trial">
    <model_file>models/m.osim</model_file>
    <marker_file>walk.trc</marker_file>
    <coordinate_file>coords.mot</coordinate_file>
    <accuracy>1e-6</accuracy>
    <constraint_weight>Inf</constraint_weight>
    <IKTaskSet><objects>
      <IKMarkerTask name="A"><apply>true</apply><weight>2</weight></IKMarkerTask>
      <IKMarkerTask name="B"><apply>false</apply><weight>1</weight></IKMarkerTask>
      <IKCoordinateTask name="knee"><apply>true</apply><weight>5</weight>
        <value_type>manual_value</value_type><value>0.25</value></IKCoordinateTask>
      <IKCoordinateTask name="hip"><weight>1</weight><from_file>true</from_file>
      </IKCoordinateTask>
      <IKCoordinateTask name="ankle"><weight>0.5</weight></IKCoordinateTask>
    </objects></IKTaskSet>
    <time_range> 0.5 1.5</time_range>
    <output_motion_file>out/ik.mot</output_motion_file>
  </InverseKinematicsTool>
</OpenSimDocument>
"""

ID = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="30000">
  <InverseDynamicsTool name="walk">
    <model_file>m.osim</model_file>
    <results_directory>Results</results_directory>
    <time_range> 0 2.5</time_range>
    <forces_to_exclude> Muscles Actuators</forces_to_exclude>
    <external_loads_file>grf.xml</external_loads_file>
    <coordinates_file>ik.mot</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>
    <output_gen_force_file>id.sto</output_gen_force_file>
  </InverseDynamicsTool>
</OpenSimDocument>
"""

LOADS = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="30000">
  <ExternalLoads name="GRF">
    <objects>
      <ExternalForce name="right">
        <applied_to_body>calcn_r</applied_to_body>
        <force_expressed_in_body>ground</force_expressed_in_body>
        <point_expressed_in_body>calcn_r</point_expressed_in_body>
        <force_identifier>ground_force_v</force_identifier>
        <point_identifier>ground_force_p</point_identifier>
        <torque_identifier>ground_torque_</torque_identifier>
        <data_source_name>Unassigned</data_source_name>
      </ExternalForce>
      <ExternalForce name="off">
        <isDisabled>true</isDisabled>
        <applied_to_body>calcn_l</applied_to_body>
        <force_identifier>1_ground_force_v</force_identifier>
      </ExternalForce>
    </objects>
    <datafile>data/grf.mot</datafile>
  </ExternalLoads>
</OpenSimDocument>
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_ik_setup_fields_and_relative_paths(tmp_path):
    setup = read_ik_setup(_write(tmp_path, "setup/ik.xml", IK))
    folder = (tmp_path / "setup").resolve()
    assert setup.name == "trial"
    assert setup.model_file == folder / "models" / "m.osim"
    assert setup.marker_file == folder / "walk.trc"
    assert setup.coordinate_file == folder / "coords.mot"
    assert setup.output_motion_file == folder / "out" / "ik.mot"
    assert setup.time_range == (0.5, 1.5)
    assert setup.accuracy == 1e-6 and math.isinf(setup.constraint_weight)
    assert [(t.name, t.weight) for t in setup.marker_tasks] == [("A", 2.0)]
    coords = {t.name: t for t in setup.coordinate_tasks}
    assert coords["knee"].value_type == "manual_value" and coords["knee"].value == 0.25
    assert coords["knee"].weight == 5.0
    assert coords["hip"].value_type == "from_file"  # OpenSim 3.x <from_file>
    assert coords["ankle"].value_type == "default_value"


def test_id_setup_and_external_loads(tmp_path):
    _write(tmp_path, "grf.xml", LOADS)
    setup = read_id_setup(_write(tmp_path, "id.xml", ID))
    folder = tmp_path.resolve()
    assert setup.coordinates_file == folder / "ik.mot"
    assert setup.output_gen_force_file == folder / "Results" / "id.sto"
    assert setup.lowpass_cutoff_frequency == 6.0
    assert setup.forces_to_exclude == ("Muscles", "Actuators")
    loads = setup.external_loads
    assert loads.datafile == folder / "data" / "grf.mot"
    assert len(loads.forces) == 1  # the disabled one is dropped
    f = loads.forces[0]
    assert (f.applied_to_body, f.force_expressed_in_body, f.point_expressed_in_body) == (
        "calcn_r",
        "ground",
        "calcn_r",
    )
    assert (f.force_identifier, f.point_identifier, f.torque_identifier) == (
        "ground_force_v",
        "ground_force_p",
        "ground_torque_",
    )
    assert f.data_source_name == ""  # Unassigned
    assert loads.model_kinematics_file is None
    kin = LOADS.replace(
        "<datafile>", "<external_loads_model_kinematics_file>ik.mot"
        "</external_loads_model_kinematics_file><datafile>"
    )  # fmt: skip
    assert read_external_loads(_write(tmp_path, "k.xml", kin)).model_kinematics_file == (
        folder / "ik.mot"
    )


@needs_data
def test_shared_setups():
    ik = read_ik_setup(DATA / "subject01_Setup_IK.xml")
    assert ik.model_file == (DATA / "subject01.osim").resolve()
    assert len(ik.tasks) == 39 and len(ik.marker_tasks) == 31
    assert ik.coordinate_file is None  # Unassigned
    idt = read_id_setup(DATA / "subject01_Setup_ID.xml")
    assert idt.time_range == (0.0, 2.5)
    assert [f.applied_to_body for f in idt.external_loads.forces] == ["calcn_r", "calcn_l"]
    assert idt.output_gen_force_file.name == "subject01_walk_ID.sto"


@pytest.mark.parametrize(
    "text, match",
    [
        (
            '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "aaaa">]>\n<OpenSimDocument/>',
            "DOCTYPE",
        ),
        (
            '<?xml version="1.0"?>\n<!DOCTYPE x SYSTEM "file:///etc/passwd">\n<x>&e;</x>',
            "DOCTYPE",
        ),
        ("<OpenSimDocument><InverseKinematicsTool>\n<model_file>a</model_file>", "line 2"),
        ("<OpenSimDocument><Other/></OpenSimDocument>", "no <InverseKinematicsTool>"),
        (
            "<OpenSimDocument><InverseKinematicsTool>\n<marker_file>a.trc</marker_file>"
            "</InverseKinematicsTool></OpenSimDocument>",
            "model_file",
        ),
        (
            IK.replace("<weight>2</weight>", "<weight>heavy</weight>"),
            r"line 10, element <weight>.*'heavy'",
        ),
        (IK.replace("<weight>2</weight>", "<weight>-1</weight>"), "line 10.*>= 0"),
        (IK.replace("<apply>true</apply><weight>2", "<apply>maybe</apply><weight>2"), "apply"),
        (IK.replace("<time_range> 0.5 1.5</time_range>", "<time_range>2 1</time_range>"), "end"),
        (
            IK.replace('IKMarkerTask name="B"', 'IKThing name="B"').replace(
                '</IKMarkerTask>\n      <IKCoordinateTask name="knee"',
                '</IKThing>\n      <IKCoordinateTask name="knee"',
            ),
            "unknown IK task",
        ),  # fmt: skip
        (IK.replace("<value_type>manual_value", "<value_type>guess"), "value_type"),
    ],
)
def test_ik_setup_errors_name_element_and_line(tmp_path, text, match):
    path = _write(tmp_path, "bad.xml", text)
    with pytest.raises(FileFormatError, match=match):
        read_ik_setup(path)


def test_missing_file_and_loads_errors(tmp_path):
    with pytest.raises(FileFormatError, match="does not exist"):
        read_ik_setup(tmp_path / "none.xml")
    bad = LOADS.replace("<force_identifier>ground_force_v</force_identifier>", "").replace(
        "<torque_identifier>ground_torque_</torque_identifier>", ""
    )
    with pytest.raises(
        FileFormatError, match=r"line 5, element <ExternalForce>.*'right' applies neither"
    ):
        read_external_loads(_write(tmp_path, "l1.xml", bad))
    bad = LOADS.replace("<datafile>data/grf.mot</datafile>", "")
    with pytest.raises(FileFormatError, match="no <datafile>"):
        read_external_loads(_write(tmp_path, "l2.xml", bad))
    bad = LOADS.replace("<applied_to_body>calcn_r</applied_to_body>", "")
    with pytest.raises(FileFormatError, match="applied_to_body"):
        read_external_loads(_write(tmp_path, "l3.xml", bad))
    # an ID setup whose loads file is bad reports the loads file
    _write(tmp_path, "grf.xml", "<ExternalLoads><objects><Thing/></objects></ExternalLoads>")
    with pytest.raises(FileFormatError, match="grf.xml.*<Thing>"):
        read_id_setup(_write(tmp_path, "id.xml", ID))


def test_entity_expansion_is_refused_before_expansion(tmp_path):
    lol = (
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
        + "".join(
            f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i else "&lol;" * 10}">\n'
            for i in range(9)
        )
        + "]>\n<ExternalLoads>&lol8;</ExternalLoads>"
    )
    with pytest.raises(FileFormatError, match="DOCTYPE"):
        read_external_loads(_write(tmp_path, "lol.xml", lol))


def test_read_cap_applies_to_setup_files(tmp_path):
    import ahbm.io as aio

    path = _write(tmp_path, "ik.xml", IK)
    old = aio.set_max_read_bytes(100)  # the previous setting (None: env or default)
    try:
        with pytest.raises(FileFormatError, match="read cap"):
            read_ik_setup(path)
    finally:
        aio.set_max_read_bytes(old)
    assert read_ik_setup(path).name == "trial"


def test_deep_nesting_is_refused(tmp_path):
    deep = "<OpenSimDocument>" + "<a>" * 200 + "</a>" * 200 + "</OpenSimDocument>"
    with pytest.raises(FileFormatError, match="nested more than"):
        read_id_setup(_write(tmp_path, "deep.xml", deep))
