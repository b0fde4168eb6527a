"""Contact spheres of OpenSim models: placement on the feet, writing and reading back, bad input.

OpenSim itself checks the forces in tests/peers/test_opensim_smooth_contact.py.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sample_data import SHARED  # noqa: E402

from ahbm.dynamics import SmoothSphereContact  # noqa: E402
from ahbm.errors import AhbmWarning, DataError, ModelError  # noqa: E402
from ahbm.kinematics.tree import Model  # noqa: E402
from ahbm.opensim import (  # noqa: E402
    FALISSE_FOOT_SPHERES,
    FALISSE_MTP,
    add_osim_smooth_contacts,
    opensim_foot_spheres,
    osim_smooth_contacts,
    read_osim,
    write_osim,
)

SUBJECT01 = SHARED / "opensim" / "subject01.osim"


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return read_osim(path, muscles=False)


def _two_bodies():
    m = Model("two", gravity=(0.0, -9.81, 0.0))
    m.add_body("ball", "ground", {"type": "free_euler", "sequence": "XYZ"}, mass=1.0,
               inertia=np.eye(3) * 0.01)  # fmt: skip
    m.add_body("plate", "ground", {"type": "prismatic", "axis": [0, 1, 0]}, mass=2.0,
               inertia=np.eye(3) * 0.01)  # fmt: skip
    return m


def test_written_contacts_read_back(tmp_path):
    m = _two_bodies()
    tilt = np.array([0.2, 1.0, -0.1]) / np.linalg.norm([0.2, 1.0, -0.1])
    contacts = [
        SmoothSphereContact("ball", [0.01, -0.02, 0.03], 0.04, plane_normal=[0, 1, 0],
                            name="a", stiffness=2e6, static_friction=0.7),
        SmoothSphereContact("ball", [0.0, 0.05, 0.0], 0.02, plane_normal=[0, 1, 0], name="b"),
        SmoothSphereContact("ball", [0.0, 0.0, 0.0], 0.03, plane_body="plate",
                            plane_point=[0.1, 0.2, 0.3], plane_normal=tilt, name="c",
                            dissipation=0.0),
    ]  # fmt: skip
    add_osim_smooth_contacts(m, contacts)
    write_osim(m, tmp_path / "two.osim")
    back = osim_smooth_contacts(_read(tmp_path / "two.osim"))
    assert [c.name for c in back] == ["a", "b", "c"]
    for a, b in zip(contacts, back, strict=True):
        assert (a.body, a.plane_body, a.radius, a.parameters) == (
            b.body, b.plane_body, b.radius, b.parameters)  # fmt: skip
        assert np.array_equal(a.center, b.center)
        assert np.allclose(a.plane_point, b.plane_point, rtol=0, atol=1e-15)
        assert np.allclose(a.plane_normal, b.plane_normal, rtol=0, atol=1e-15)
    geometry = [it.get("name") for it in _read(tmp_path / "two.osim").section("opensim")
                if it.kind == "contact_geometry"]  # fmt: skip
    assert geometry.count("floor") == 1 and "half_space_1" in geometry  # planes shared


def test_bad_contacts_raise(tmp_path):
    m = _two_bodies()
    c = SmoothSphereContact("ball", [0, 0, 0], 0.04, name="a")
    add_osim_smooth_contacts(m, [c])
    with pytest.raises(DataError, match="already has"):
        add_osim_smooth_contacts(m, [c])
    with pytest.raises(DataError, match="not a SmoothSphereContact"):
        add_osim_smooth_contacts(m, ["a"])
    with pytest.raises(ModelError, match="no body"):
        opensim_foot_spheres(m)
    # a force whose sphere is missing from the file
    write_osim(m, tmp_path / "a.osim")
    text = (tmp_path / "a.osim").read_text().replace("a_sphere</socket_sphere>",
                                                     "gone</socket_sphere>")  # fmt: skip
    (tmp_path / "b.osim").write_text(text)
    with pytest.raises(ModelError, match="gone' is not a contact geometry"):
        osim_smooth_contacts(_read(tmp_path / "b.osim"))


@pytest.mark.skipif(not SUBJECT01.is_file(), reason=f"shared data not found at {SUBJECT01}")
def test_foot_spheres_on_subject01():
    m = _read(SUBJECT01)
    spheres = opensim_foot_spheres(m)
    assert [c.name for c in spheres[:6]] == [f"sphere_{k}_r" for k in range(1, 7)]
    mtp = m.positions[m.body_index("toes_r")]
    s = np.linalg.norm(mtp) / np.linalg.norm(FALISSE_MTP)  # subject01's foot: 12 % longer
    assert s == pytest.approx(1.124, abs=1e-3)
    assert all(c.radius == pytest.approx(0.032 * s) for c in spheres)
    right, left = spheres[:6], spheres[6:]
    for r, lft, (body, _) in zip(right, left, FALISSE_FOOT_SPHERES, strict=True):
        assert r.body == f"{body}_r" and lft.body == f"{body}_l"
        assert np.allclose(lft.center * [1, 1, -1], r.center, atol=3e-3)  # mirrored feet
    # standing (all coordinates 0 with the pelvis up): the spheres' lowest points lie within
    # 5 mm of each other (measured 1.6 mm), the heel behind the toes
    q = np.zeros(m.nq)
    ev = [c.evaluate(m, q, np.zeros(m.nv)) for c in right]
    low = np.array([e.point[1] - 0.5 * e.depth for e in ev])  # y of the lowest points
    assert np.ptp(low) < 0.005
    x = np.array([e.point[0] for e in ev])
    assert x[0] < x[1] and x[0] < x[3]  # heel (1) behind the first metatarsal (2), toes (4)


def test_hunt_crossley_pairs_are_read_or_named_in_a_warning(tmp_path):
    m = _two_bodies()
    add_osim_smooth_contacts(m, [SmoothSphereContact("ball", [0, 0, 0], 0.04, name="a")])
    write_osim(m, tmp_path / "a.osim")
    text = (tmp_path / "a.osim").read_text()

    def hc(name, groups):
        params = "".join(
            f"<HuntCrossleyForce::ContactParameters><geometry>{g}</geometry>"
            f"<stiffness>{k}</stiffness><dissipation>1.5</dissipation>"
            "</HuntCrossleyForce::ContactParameters>"
            for g, k in groups
        )
        return (f'<HuntCrossleyForce name="{name}"><HuntCrossleyForce::ContactParametersSet '
                f'name="contact_parameters"><objects>{params}</objects>'
                "</HuntCrossleyForce::ContactParametersSet><transition_velocity>0.1"
                "</transition_velocity></HuntCrossleyForce>")  # fmt: skip

    extra = hc("same", [("a_sphere floor", 1e6)]) + hc("mixed", [("a_sphere", 1e6),
                                                                 ("floor", 2e6)])  # fmt: skip
    text = text.replace("</SmoothSphereHalfSpaceForce>", "</SmoothSphereHalfSpaceForce>" + extra, 1)
    (tmp_path / "hc.osim").write_text(text)
    model = _read(tmp_path / "hc.osim")
    with pytest.warns(AhbmWarning, match="'mixed': a_sphere-floor \\(unequal materials\\)"):
        got = osim_smooth_contacts(model)
    assert [c.name for c in got] == ["a", "same"]
    same = got[1]
    assert type(same).__name__ == "HuntCrossleySphereContact"
    assert same.parameters.stiffness == 1e6 and same.parameters.transition_velocity == 0.1
    assert np.allclose(same.plane_normal, got[0].plane_normal, atol=1e-15)
