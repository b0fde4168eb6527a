import numpy as np
import pytest

from ahbm.bsp import TABLES, get_table, segment_parameters
from ahbm.errors import DataError

CASES = [
    ("dempster_winter", None),
    ("de_leva", "male"),
    ("de_leva", "female"),
    ("de_leva_3trunk", "male"),
    ("de_leva_3trunk", "female"),
    ("dumas_2007", "male"),
    ("dumas_2007", "female"),
    ("heiman", None),
]


def _params(table, sex, mass=72.0, height=1.78):
    lengths = {"head_neck": 0.26} if table == "dempster_winter" else None
    return segment_parameters(table, mass=mass, height=height, segment_lengths=lengths, sex=sex)


@pytest.mark.parametrize("table,sex", CASES)
def test_masses_sum_to_body_mass(table, sex):
    p = _params(table, sex)
    total = sum(s.mass for s in p.values())
    # published fractions are rounded: de Leva female 99.99 %, Dumas 100.2 / 99.9 %
    assert total == pytest.approx(72.0, rel=2.5e-3)


@pytest.mark.parametrize("table,sex", CASES)
def test_inertia_symmetric_positive_definite(table, sex):
    for name, s in _params(table, sex).items():
        assert s.inertia.shape == (3, 3) and s.com.shape == (3,)
        if s.mass == 0 or not np.isfinite(s.inertia).all():
            continue
        np.testing.assert_allclose(s.inertia, s.inertia.T)
        ev = np.linalg.eigvalsh(s.inertia)
        assert ev.min() > 0, name
        # triangle inequality of principal moments (a physical body); the published
        # Dumas et al. (2007) female torso (products radius 0.22) violates it
        if (table, sex, name) != ("dumas_2007", "female", "torso"):
            assert ev[0] + ev[1] >= ev[2] * (1 - 1e-9), name


def test_published_spot_values():
    # de Leva (1996) Table 4: male thigh 14.16 %, CM 40.95 % from the hip, length 422.2 mm
    # (stature 1741 mm); female shank 4.81 %
    p = segment_parameters("de_leva", mass=100.0, height=1.741, sex="male")
    assert p["thigh_r"].mass == pytest.approx(14.16)
    assert p["thigh_l"].length == pytest.approx(0.4222)
    assert p["thigh_r"].com[2] == pytest.approx(-0.4095 * 0.4222)
    assert p["thigh_r"].inertia[2, 2] == pytest.approx(14.16 * (0.149 * 0.4222) ** 2)
    pf = segment_parameters("de_leva", mass=100.0, height=1.735, sex="female")
    assert pf["shank_r"].mass == pytest.approx(4.81)
    # Dempster via Winter (2009) Table 4.1: thigh 0.100, COM 0.433 from proximal
    w = segment_parameters(
        "dempster_winter", mass=80.0, height=1.8, segment_lengths={"thigh": 0.45}
    )
    assert w["thigh_r"].mass == pytest.approx(8.0)
    assert w["thigh_r"].com[2] == pytest.approx(-0.433 * 0.45)
    assert w["thigh_r"].inertia[0, 0] == pytest.approx(8.0 * (0.323 * 0.45) ** 2)
    assert np.isnan(w["thigh_r"].inertia[2, 2])  # not published
    # Dumas et al. (2007) Table 2, male thigh: 12.3 %, COM (-4.1, -42.9, 3.3) % (ISB axes)
    d = segment_parameters(
        "dumas_2007", mass=100.0, height=1.77, sex="male", segment_lengths={"thigh": 0.4}
    )
    th = d["thigh_r"]
    assert th.mass == pytest.approx(12.3)
    np.testing.assert_allclose(th.com, [-0.041 * 0.4, -0.033 * 0.4, -0.429 * 0.4])
    # ISB I_xy = +0.07^2 m L^2 ("0.07"), I_xz = -(0.02)^2 ("0.02i"), I_yz = -(0.07)^2 ("0.07i")
    mL2 = 12.3 * 0.16
    assert th.inertia[0, 2] == pytest.approx(0.07**2 * mL2)  # ISB xy -> ahbm xz
    assert th.inertia[0, 1] == pytest.approx(0.02**2 * mL2)  # -ISB xz -> ahbm xy
    assert th.inertia[1, 2] == pytest.approx(0.07**2 * mL2)  # -ISB yz -> ahbm yz


def test_dumas_frame_conversion_is_a_rotation():
    # converting the ISB tensor with the proper rotation gives the stored tensor
    m, L = 12.3, 0.4
    r = np.array([[0.29, 0.07, -0.02], [0.07, 0.15, -0.07], [-0.02, -0.07, 0.30]])
    isb = np.sign(r) * r**2 * m * L**2
    rot = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])  # rows: new axes in ISB coordinates
    d = segment_parameters(
        "dumas_2007", mass=100.0, height=1.77, sex="male", segment_lengths={"thigh": L}
    )
    np.testing.assert_allclose(d["thigh_r"].inertia, rot @ isb @ rot.T, atol=1e-12)


def test_left_is_mirror_of_right():
    d = segment_parameters("dumas_2007", mass=70.0, height=1.7, sex="female")
    mirror = np.diag([1.0, -1.0, 1.0])
    for seg in ("thigh", "shank", "foot", "upper_arm", "forearm", "hand"):
        r, l = d[seg + "_r"], d[seg + "_l"]
        np.testing.assert_allclose(l.com, mirror @ r.com)
        np.testing.assert_allclose(l.inertia, mirror @ r.inertia @ mirror)


def test_heiman_worked_example():
    # Felis (2015) sec. 4.3.3: 1.79 m, 76 kg -> upper trunk l = 0.175 m, m = 12.13 kg,
    # COM z = 0.7001 * l = 0.123 m, inertia diag((r l)^2 m) with r = (0.716, 0.454, 0.659)
    p = segment_parameters("heiman", mass=76.0, height=1.79)
    ut = p["upper_trunk"]
    assert ut.length == pytest.approx(0.175, abs=5e-4)
    assert ut.mass == pytest.approx(12.13, abs=5e-3)
    assert ut.com[2] == pytest.approx(0.123, abs=5e-4)
    np.testing.assert_allclose(
        np.diag(ut.inertia), (np.array([0.716, 0.454, 0.659]) * 0.17542) ** 2 * 12.1296
    )
    assert p["clavicula_r"].mass == 0 and p["neck"].mass == 0
    # corrected MiddleTrunkHeight (de Leva MPT 215.5 / 1741 mm)
    assert p["middle_trunk"].length / 1.79 == pytest.approx(215.5 / 1741, abs=1e-4)


def test_heiman_matches_de_leva_masses():
    h = get_table("heiman").segments["male"]
    dl = get_table("de_leva_3trunk").segments["male"]
    for a, b in [
        ("thigh", "thigh"),
        ("upper_trunk", "upper_trunk"),
        ("head", "head"),
        ("pelvis", "lower_trunk"),
        ("lower_arm", "forearm"),
    ]:
        assert h[a].mass == pytest.approx(dl[b].mass)


def test_segment_lengths_override_and_errors():
    p = segment_parameters(
        "de_leva", mass=70, height=1.7, sex="m", segment_lengths={"thigh_l": 0.5}
    )
    assert p["thigh_l"].length == 0.5
    assert p["thigh_r"].length == pytest.approx(1.7 * 422.2 / 1741)
    with pytest.raises(DataError, match="needs `sex`"):
        segment_parameters("de_leva", mass=70, height=1.7)
    with pytest.raises(DataError, match="no data for sex='female'"):
        segment_parameters("heiman", mass=70, height=1.7, sex="female")
    with pytest.raises(DataError, match="Unknown BSP table 'nope'"):
        segment_parameters("nope", mass=70, height=1.7)
    with pytest.raises(DataError, match="`mass`"):
        segment_parameters("heiman", mass=-70, height=1.7)
    with pytest.raises(DataError, match="metres"):
        segment_parameters("heiman", mass=70, height=170)
    with pytest.raises(DataError, match="'tibia' is not a segment"):
        segment_parameters("heiman", mass=70, height=1.7, segment_lengths={"tibia": 0.4})


def test_every_table_has_source():
    for name, tab in TABLES.items():
        assert tab.name == name and len(tab.source) > 20


def test_dataframe_and_compare_tables():
    from ahbm.bsp import compare_tables, parameters_to_dataframe

    p = segment_parameters("de_leva", mass=70.0, height=1.75, sex="female")
    df = parameters_to_dataframe(p)
    assert list(df.index) == list(p)
    assert df["mass"].sum() == pytest.approx(sum(s.mass for s in p.values()))
    assert df.loc["thigh_l", "Iyz"] == p["thigh_l"].inertia[1, 2]
    cmp = compare_tables(mass=70.0, height=1.75, sex="female", segment_lengths={"thigh": 0.4})
    # HeiMan is male only, so it is left out for a female subject
    assert set(cmp.index.get_level_values("table")) == {
        "dempster_winter",
        "de_leva",
        "de_leva_3trunk",
        "dumas_2007",
    }
    assert np.allclose(cmp.xs("thigh_r", level="segment")["length"], 0.4)
    with pytest.raises(DataError, match="no data for sex"):
        compare_tables(mass=70.0, height=1.75, tables=["heiman"], sex="female")


def test_anthropometrics_are_keyword_only():
    """mass= and height= are keyword-only: the 0.1 positional order is rejected."""
    from ahbm.bsp import compare_tables

    with pytest.raises(TypeError):
        segment_parameters("heiman", 76.0, 1.79)
    with pytest.raises(TypeError):
        compare_tables(70.0, 1.75)
    with pytest.raises(TypeError, match="mass"):
        segment_parameters("heiman", height=1.79)
