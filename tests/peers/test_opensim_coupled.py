"""Coordinate motion types as OpenSim 4.6 reports them, and the tools' units that follow them.

OpenSim calls a CustomJoint coordinate rotational or translational only when an
axis moves with it through a LinearFunction of slope ±1; any other function
(the MultiplierFunction that older OpenSim versions left on the pelvis
translations of scaled models, a spline, a slope of 2) makes it *coupled*.
OpenSim converts only rotational coordinates between degrees and radians and
calls only their generalized forces ``_moment``. Checked against OpenSim in a
child process (tests/peers/opensim_oracle.py) on an authored joint and on the
shared walking trial with its pelvis translations made coupled.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from opensim_oracle import opensim_run
from sample_data import SHARED

from ahbm.opensim import osim_motion_types, read_osim, run_id_setup, run_ik_setup
from ahbm.opensim.storage import read_mot

DATA = SHARED / "opensim"
KINDS = {"1": "rotational", "2": "translational", "3": "coupled", "0": "undefined"}


def _axis(name, coordinate, axis, function):
    coords = f"<coordinates>{coordinate}</coordinates>" if coordinate else "<coordinates/>"
    return f'<TransformAxis name="{name}">{coords}<axis>{axis}</axis>{function}</TransformAxis>'


def _linear(slope, name="function"):
    return f'<LinearFunction name="{name}"><coefficients>{slope} 0</coefficients></LinearFunction>'


_ZERO = '<Constant name="function"><value>0</value></Constant>'


def _spline():
    return (
        '<SimmSpline name="function"><x>-2 -1 0 1 2</x><y>-0.02 -0.01 0 0.015 0.02</y></SimmSpline>'
    )


def _multiplier(inner, scale):
    return (
        f'<MultiplierFunction name="function"><function>{inner}</function>'
        f"<scale>{scale}</scale></MultiplierFunction>"
    )


def _custom_joint(name, parent, child, axes, coordinates):
    coords = "".join(
        f'<Coordinate name="{c}"><default_value>0</default_value><range>-3 3</range></Coordinate>'
        for c in coordinates
    )
    return (
        f'<CustomJoint name="{name}"><socket_parent_frame>{parent}_offset</socket_parent_frame>'
        f"<socket_child_frame>{child}_offset</socket_child_frame>"
        f"<coordinates>{coords}</coordinates>"
        "<frames>"
        f'<PhysicalOffsetFrame name="{parent}_offset"><socket_parent>'
        f"{'/ground' if parent == 'ground' else '/bodyset/' + parent}</socket_parent>"
        "<translation>0 0 0</translation><orientation>0 0 0</orientation></PhysicalOffsetFrame>"
        f'<PhysicalOffsetFrame name="{child}_offset"><socket_parent>/bodyset/{child}'
        "</socket_parent><translation>0 0 0</translation><orientation>0 0 0</orientation>"
        "</PhysicalOffsetFrame></frames>"
        f"<SpatialTransform>{''.join(axes)}</SpatialTransform></CustomJoint>"
    )


def _authored_model(path):
    """Two custom joints whose coordinates meet every case of OpenSim's rule."""
    body = (
        '<Body name="{0}"><mass>1</mass><mass_center>0 0 0</mass_center>'
        "<inertia>0.1 0.1 0.1 0 0 0</inertia></Body>"
    )
    j1 = _custom_joint(
        "j1",
        "ground",
        "a",
        [
            _axis("rotation1", "rot_plus", "1 0 0", _linear(1)),
            _axis("rotation2", "rot_minus", "0 1 0", _linear(-1)),
            _axis("rotation3", "rot_twice", "0 0 1", _linear(2)),
            _axis("translation1", "tx_multiplied", "1 0 0", _multiplier(_linear(1, "f"), 1.2)),
            _axis("translation2", "ty_spline", "0 1 0", _spline()),
            _axis("translation3", "tz_plain", "0 0 1", _linear(1)),
        ],
        ["rot_plus", "rot_minus", "rot_twice", "tx_multiplied", "ty_spline", "tz_plain"],
    )
    # "knee": rotation with slope 1, then a spline on a translation (stays rotational);
    # "slide": a spline on a rotation, then slope 1 on a translation (becomes translational)
    j2 = _custom_joint(
        "j2",
        "a",
        "b",
        [
            _axis("rotation1", "knee", "0 0 1", _linear(1)),
            _axis("rotation2", "slide", "0 1 0", _spline()),
            _axis("rotation3", "", "1 0 0", _ZERO),
            _axis("translation1", "knee", "1 0 0", _spline()),
            _axis("translation2", "slide", "0 1 0", _linear(1)),
            _axis("translation3", "", "0 0 1", _ZERO),
        ],
        ["knee", "slide"],
    )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
        '<Model name="motion_types"><gravity>0 -9.80665 0</gravity>'
        f"<BodySet><objects>{body.format('a')}{body.format('b')}</objects></BodySet>"
        f"<JointSet><objects>{j1}{j2}</objects></JointSet>"
        "</Model></OpenSimDocument>\n"
    )
    return path


_MOTIONS = """
m = osim.Model(INPUTS["path"]); m.initSystem()
cs = m.getCoordinateSet()
OUT["motion"] = {cs.get(i).getName(): str(cs.get(i).getMotionType()) for i in range(cs.getSize())}
"""


def test_motion_types_follow_opensim_on_every_case(tmp_path):
    path = _authored_model(tmp_path / "motion_types.osim")
    out = opensim_run(_MOTIONS, path=str(path))
    ours = osim_motion_types(read_osim(path, muscles=False, markers=False))
    assert {c: KINDS[k] for c, k in out["motion"].items()} == ours
    assert ours["rot_twice"] == ours["tx_multiplied"] == ours["ty_spline"] == "coupled"
    assert (ours["rot_minus"], ours["knee"], ours["slide"]) == (
        "rotational",
        "rotational",
        "translational",
    )


# --- the walking trial with coupled pelvis translations -----------------------------------

FILES = (
    "subject01_walk.trc",
    "subject01_walk_grf.mot",
    "subject01_walk_grf.xml",
    "subject01_walk_IK.mot",
    "subject01_Setup_IK.xml",
    "subject01_Setup_ID.xml",
)


#: The pelvis translations of subject01's (planar) model.
PELVIS = ("pelvis_tx", "pelvis_ty")


def _couple_pelvis(text: str) -> str:
    """The pelvis translations' LinearFunctions wrapped in MultiplierFunctions of scale 1."""
    for c in PELVIS:
        start = text.index(f"<coordinates>{c}</coordinates>")
        m = re.compile(r"<LinearFunction name=\"function\">(.*?)</LinearFunction>", re.S)
        found = m.search(text, start)
        wrapped = (
            '<MultiplierFunction name="function"><function><LinearFunction>'
            f"{found.group(1)}</LinearFunction></function><scale>1</scale></MultiplierFunction>"
        )
        text = text[: found.start()] + wrapped + text[found.end() :]
    return text


@pytest.fixture(scope="module")
def coupled_trial(tmp_path_factory):
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    folder = tmp_path_factory.mktemp("coupled")
    for name in FILES:
        shutil.copy(DATA / name, folder / name)
    model = _couple_pelvis((DATA / "subject01.osim").read_text(encoding="utf-8"))
    (folder / "subject01.osim").write_text(model, encoding="utf-8")
    return folder


def test_the_pelvis_translations_are_coupled_for_both(coupled_trial):
    out = opensim_run(_MOTIONS, path=str(coupled_trial / "subject01.osim"))
    ours = osim_motion_types(read_osim(coupled_trial / "subject01.osim", muscles=False))
    theirs = {c: KINDS[k] for c, k in out["motion"].items()}
    assert theirs == {c: ours[c] for c in theirs}
    assert [ours[c] for c in PELVIS] == ["coupled"] * len(PELVIS)


def test_id_reads_coupled_columns_as_opensim_does(coupled_trial):
    """The IK file's pelvis translations (m) are not converted; their forces are ``_force``."""
    opensim_run(
        """
        osim.InverseDynamicsTool(INPUTS["setup"]).run()
        """,
        setup=str(coupled_trial / "subject01_Setup_ID.xml"),
        cwd=str(coupled_trial),
    )
    ref = read_mot(coupled_trial / "Results" / "subject01_walk_ID.sto")
    res = run_id_setup(coupled_trial / "subject01_Setup_ID.xml", output=coupled_trial / "a.sto")
    ours = read_mot(res.output)
    assert ours.columns == ref.columns
    assert "pelvis_tx_force" in ours.columns and "pelvis_tilt_moment" in ours.columns
    for c in ref.columns:
        a, b = ours.data[c].to_numpy(), ref.data[c].to_numpy()
        # the .sto is written with 8 significant digits: 1e-6 N m (N) on loads below 100
        assert np.abs(a - b).max() <= 1e-6 * max(1.0, np.abs(b).max()), c


def test_ik_writes_coupled_coordinates_in_metres(coupled_trial):
    opensim_run(
        """
        tool = osim.InverseKinematicsTool(INPUTS["setup"])
        tool.set_output_motion_file(INPUTS["out"])
        tool.run()
        """,
        setup=str(coupled_trial / "subject01_Setup_IK.xml"),
        out=str(coupled_trial / "opensim_ik.mot"),
        cwd=str(coupled_trial),
    )
    ref = read_mot(coupled_trial / "opensim_ik.mot", angle_columns=[])
    res = run_ik_setup(coupled_trial / "subject01_Setup_IK.xml", output=coupled_trial / "a.mot")
    ours = read_mot(res.output, angle_columns=[])  # the file's own numbers, unconverted
    assert ours.columns == ref.columns
    for c in PELVIS:
        a, b = ours.data[c].to_numpy(), ref.data[c].to_numpy()
        assert np.abs(b).max() < 2.0, c  # metres in OpenSim's file
        assert np.sqrt(np.mean((a - b) ** 2)) < 5e-5, c  # 0.05 mm: both solve to tolerance
