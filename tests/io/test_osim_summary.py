"""Shallow reading of a model's forces: ``read_osim(..., forces="summary")`` and the
``shallow=`` option of the XML parser it uses.

The summary must equal the full read in everything but the forces' nested
content: same model, same section items otherwise, each force's scalar
properties as the full read has them, the same forces listed by
``active_model_forces`` and the same warning about unrepresented elements.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import AhbmWarning, DataError, FileFormatError, ModelError
from ahbm.opensim import active_model_forces, read_osim, write_osim
from ahbm.opensim._xml import parse_xml

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
SUBJECT01 = SHARED / "opensim"
SUBJECT01 = SUBJECT01 / "subject01.osim"
SHALLOW = {("ForceSet", "objects")}

DOC = """<?xml version="1.0"?>
<OpenSimDocument Version="40000">
<Model name="m">
 <ForceSet name="forceset">
  <objects>
   <Thelen2003Muscle name="a">
    <appliesForce>true</appliesForce>
    <GeometryPath name="path">
     <PathPointSet><objects>
      <PathPoint name="p1"><location>0 1 2</location></PathPoint>
     </objects></PathPointSet>
    </GeometryPath>
    <max_isometric_force>1000</max_isometric_force>
    <Empty name="e"/>
   </Thelen2003Muscle>
   <PointActuator name="b"><body>x</body><point>1 2 3</point></PointActuator>
  </objects>
 </ForceSet>
 <BodySet><objects><Body name="x"><mass>1</mass><inertia>1 1 1 0 0 0</inertia></Body>
 </objects></BodySet>
</Model>
</OpenSimDocument>
"""


def _dump(node) -> list:
    out = [(node.tag, dict(node.attrib), node.text, node.line, len(node.children))]
    for c in node.children:
        out += _dump(c)
    return out


def _items(model, kind=None):
    return [it for it in model.section("opensim") if kind is None or it.kind == kind]


def _scalars(data: dict) -> dict:
    """The properties of a force dict whose elements hold no element: leaves, and objects
    without properties (``{"type", "name"}`` only)."""
    out = {}
    for k, v in data.items():
        if isinstance(v, dict) and not set(v) <= {"type", "name"}:
            continue
        if isinstance(v, list) and any(isinstance(x, dict) for x in v):
            continue
        out[k] = v
    return out


# ----------------------------------------------------------------------------- the parser


def test_shallow_parse_keeps_scalar_properties_and_the_rest_of_the_tree():
    data = DOC.encode()
    full = parse_xml(data, "m.osim")
    shallow = parse_xml(data, "m.osim", shallow=SHALLOW)
    objs = shallow.find("Model").find("ForceSet").find("objects")
    a, b = objs.children
    # the property that holds elements is left out; the leaves keep text and line
    assert [(c.tag, c.text) for c in a.children] == [
        ("appliesForce", "true"),
        ("max_isometric_force", "1000"),
        ("Empty", ""),
    ]
    assert [c.line for c in a.children] == [7, 13, 14]
    assert [(c.tag, c.text) for c in b.children] == [("body", "x"), ("point", "1 2 3")]
    # everything outside the shallow elements is node for node the full tree
    full_body = full.find("Model").find("BodySet")
    assert _dump(shallow.find("Model").find("BodySet")) == _dump(full_body)
    assert shallow.find("Model").children[-1].line == full.find("Model").children[-1].line
    # the full parse has the path (the option changes nothing without it)
    assert full.find("Model").find("ForceSet").find("objects").children[0].find("GeometryPath")


def test_shallow_parse_still_checks_the_left_out_content():
    deep = "<a>" * 150 + "</a>" * 150
    bad = DOC.replace("<location>0 1 2</location>", f"<location>{deep}</location>")
    with pytest.raises(FileFormatError, match="nested more than 128 levels"):
        parse_xml(bad.encode(), "m.osim", shallow=SHALLOW, max_depth=128)
    # the same cap as a full parse: the depth that passes there passes here
    ok = DOC.replace("<location>0 1 2</location>", "<a>" * 100 + "</a>" * 100)
    parse_xml(ok.encode(), "m.osim", max_depth=128)
    parse_xml(ok.encode(), "m.osim", shallow=SHALLOW, max_depth=128)
    broken = DOC.replace("<location>0 1 2</location>", "<location>0 1 2</locaton>")
    with pytest.raises(FileFormatError, match="malformed XML at line 10"):
        parse_xml(broken.encode(), "m.osim", shallow=SHALLOW)
    doctype = DOC.replace('<?xml version="1.0"?>', '<?xml version="1.0"?><!DOCTYPE x>')
    with pytest.raises(FileFormatError, match="DOCTYPE"):
        parse_xml(doctype.encode(), "m.osim", shallow=SHALLOW)


def test_shallow_parse_depth_cap_counts_the_left_out_levels():
    # the path point's <location> is the 10th level; with max_depth 12, levels 10-12 pass
    # and a 13th fails, with or without the shallow option
    for extra, ok in ((3, True), (4, False)):
        text = DOC.replace("<location>0 1 2</location>", "<q>" * extra + "</q>" * extra)
        for shallow in ((), SHALLOW):
            if ok:
                parse_xml(text.encode(), "m.osim", shallow=shallow, max_depth=12)
            else:
                with pytest.raises(FileFormatError, match="nested more than 12"):
                    parse_xml(text.encode(), "m.osim", shallow=shallow, max_depth=12)


# ----------------------------------------------------------------------------- read_osim


def _read_both(path):
    with warnings.catch_warnings(record=True) as w_full:
        warnings.simplefilter("always")
        full = read_osim(path, muscles=False)
    with warnings.catch_warnings(record=True) as w_sum:
        warnings.simplefilter("always")
        summary = read_osim(path, muscles=False, forces="summary")
    return full, summary, [str(w.message) for w in w_full], [str(w.message) for w in w_sum]


@pytest.mark.parametrize(
    "path",
    [DATA / "muscles_leg.osim", DATA / "muscles_arm_chain.osim", DATA / "legacy33.osim", SUBJECT01],
    ids=lambda p: p.name,
)
def test_summary_read_equals_full_read_but_the_forces_nested_content(path):
    if not path.exists():
        pytest.skip(f"{path} is absent")
    full, summary, w_full, w_sum = _read_both(path)
    assert w_sum == w_full  # the same warning about unrepresented elements (or none)
    assert summary.body_names == full.body_names
    assert summary.coordinate_names == full.coordinate_names
    for b_full, b_sum in zip(full.bodies, summary.bodies, strict=True):
        np.testing.assert_array_equal(b_sum.inertia, b_full.inertia)
        np.testing.assert_array_equal(b_sum.position, b_full.position)
        assert b_sum.markers.keys() == b_full.markers.keys()
    left_out = ("force", "geometry", "wrap_object")  # summary: no display or wrap data
    others_full = [it for it in _items(full) if it.kind not in left_out]
    others_sum = [it for it in _items(summary) if it.kind != "force"]
    assert others_sum == others_full
    f_full, f_sum = _items(full, "force"), _items(summary, "force")
    assert len(f_full) == len(f_sum) > 0
    for a, b in zip(f_full, f_sum, strict=True):
        data = b.data
        assert data.pop("ahbm_summary") is True
        assert data == _scalars(a.data)
        assert (b.name, b.get("type")) == (a.name, a.get("type"))
        assert "GeometryPath" in a.data and "GeometryPath" not in data
    for exclude in ([], ["Muscles"], ["All"], [f_full[0].name], ["Actuators"]):
        assert active_model_forces(summary, exclude) == active_model_forces(full, exclude)


def test_summary_keeps_what_active_model_forces_reads(tmp_path):
    # appliesForce false / isDisabled (3.x) are top-level scalars: kept
    text = (DATA / "muscles_leg.osim").read_text()
    marker = "<Thelen2003Muscle name="
    head, tail = text.split(marker, 1)
    text = head + marker + tail.replace(">", "><appliesForce>false</appliesForce>", 1)
    path = tmp_path / "off.osim"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        full = read_osim(path, muscles=False)
        summary = read_osim(path, muscles=False, forces="summary")
    off = [it.name for it in _items(summary, "force") if it.get("appliesForce") is False]
    assert off == ["vasti"]
    assert off == [it.name for it in _items(full, "force") if it.get("appliesForce") is False]
    assert active_model_forces(summary) == active_model_forces(full)
    assert len(active_model_forces(full)) == len(_items(full, "force")) - len(off)


def test_summary_options_and_write_refusal(tmp_path):
    path = DATA / "muscles_leg.osim"
    with pytest.raises(DataError, match="muscles=False"):
        read_osim(path, forces="summary")
    with pytest.raises(DataError, match="`forces`"):
        read_osim(path, muscles=False, forces="shallow")
    with pytest.raises(DataError, match="`forces`"):
        read_osim(path, muscles=False, forces=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        summary = read_osim(path, muscles=False, forces="summary")
        full = read_osim(path, muscles=False)
    assert len(summary.muscles) == len(full.muscles) == 0
    out = tmp_path / "out.osim"
    with pytest.raises(ModelError, match="forces='full'"):
        write_osim(summary, out)
    assert not out.exists()
    write_osim(full, out)  # the full read still writes its forces back
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        back = read_osim(out, muscles=False)
    assert [it.data for it in _items(back, "force")] == [it.data for it in _items(full, "force")]


# ----------------------------------------------------------------------------- left out


SKIP_DOC = """<Model name="m">
 <Body name="a"><mass>1</mass>
  <attached_geometry><Mesh name="m"><mesh_file>a.vtp</mesh_file></Mesh></attached_geometry>
  <inertia>1 1 1 0 0 0</inertia>
 </Body>
 <attached_geometry/>
 <Body name="b"><mass>2</mass><FrameGeometry name="g"><scale_factors>1 1 1</scale_factors>
  <FrameGeometry name="nested"/></FrameGeometry></Body>
</Model>
"""


def test_skip_leaves_out_the_tags_everywhere_and_keeps_lines():
    full = parse_xml(SKIP_DOC.encode(), "m.osim")
    part = parse_xml(SKIP_DOC.encode(), "m.osim", skip={"attached_geometry", "FrameGeometry"})
    kept = [(t, a, x, line, n) for t, a, x, line, n in _dump(full)
            if t not in ("attached_geometry", "Mesh", "mesh_file", "FrameGeometry",
                         "scale_factors")]  # fmt: skip
    got = _dump(part)
    # the parents lose those children; everything else is the same, lines included
    assert [g[:4] for g in got] == [k[:4] for k in kept]
    a = part.find("Body")
    assert [c.tag for c in a.children] == ["mass", "inertia"] and a.find("inertia").line == 4
    # nesting inside a left-out element is still capped, and bad XML still refused
    deep = "<m><FrameGeometry>" + "<x>" * 40 + "</x>" * 40 + "</FrameGeometry></m>"
    with pytest.raises(FileFormatError, match="nested more than 20"):
        parse_xml(deep.encode(), "d.osim", max_depth=20, skip={"FrameGeometry"})
    with pytest.raises(FileFormatError, match="malformed"):
        parse_xml(b"<m><FrameGeometry><x></FrameGeometry></m>", "b", skip={"FrameGeometry"})


def test_summary_leaves_out_display_geometry_and_markers_on_request():
    path = SUBJECT01 if SUBJECT01.exists() else DATA / "muscles_leg.osim"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        full = read_osim(path, muscles=False)
        summary = read_osim(path, muscles=False, forces="summary")
        bare = read_osim(path, muscles=False, forces="summary", markers=False)
    kinds = {it.kind for it in _items(summary)}
    assert not kinds & {"geometry", "wrap_object"}
    assert sum(len(b.markers) for b in summary.bodies) == sum(len(b.markers) for b in full.bodies)
    assert sum(len(b.markers) for b in bare.bodies) == 0
    assert bare.body_names == full.body_names and bare.coordinate_names == full.coordinate_names
    for a, b in zip(full.bodies, bare.bodies, strict=True):
        np.testing.assert_array_equal(a.inertia, b.inertia)
        np.testing.assert_array_equal(a.position, b.position)
    with pytest.raises(DataError, match="`markers`"):
        read_osim(path, markers="no")
