"""Tests of ahbm.io.forceplates: ezc3d cross-checks, closed forms, identities."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import AhbmWarning, DataError
from ahbm.io import (
    ForcePlate,
    Trial,
    force_plates_from_c3d,
    plate_frame,
    plate_wrench,
    read_c3d,
    remove_zero_offset,
    resample_force_plate,
    wrench_to_cop,
)

DATA = SHARED / "c3d"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared C3D data not found at {DATA}")

PLATE_FILES = [
    "gait-raw.c3d",
    "TYPE-2.C3D",
    "TYPE-4.C3D",
    "pc_real.c3d",
    "dec_int.c3d",
    "Eb015pi.c3d",
    "16bitanalog.c3d",
]


def _read(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return read_c3d(DATA / name, **kw)


def _skew_free_rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------
# ezc3d cross-check on the shared files
# ---------------------------------------------------------------------------


@needs_data
@pytest.mark.parametrize("name", PLATE_FILES)
def test_plates_match_ezc3d(name):
    ezc3d = pytest.importorskip("ezc3d")
    t = _read(name)
    c = ezc3d.c3d(str(DATA / name), extract_forceplat_data=True)
    ez = c["data"]["platform"]
    assert len(t.force_plates) == len(ez) > 0
    for ours, pf in zip(t.force_plates, ez):
        assert pf["unit_position"] == "mm" and pf["unit_moment"] == "Nmm"
        F = pf["force"].T
        M = pf["moment"].T * 1e-3
        cop = pf["center_of_pressure"].T * 1e-3
        tz = pf["Tz"].T * 1e-3
        fmax = max(1.0, np.abs(F).max())
        np.testing.assert_allclose(ours.force, F, atol=1e-9 * fmax)
        np.testing.assert_allclose(ours.moment, M, atol=1e-9 * fmax)
        np.testing.assert_allclose(ours.corners, pf["corners"].T * 1e-3, atol=1e-12)
        np.testing.assert_allclose(ours.origin, pf["corners"].T.mean(axis=0) * 1e-3, atol=1e-12)
        loaded = np.abs(F[:, 2]) >= 10.0
        np.testing.assert_array_equal(np.isfinite(ours.cop[:, 0]), loaded)
        np.testing.assert_allclose(ours.cop[loaded], cop[loaded], atol=1e-9)
        np.testing.assert_allclose(ours.free_moment[loaded], tz[loaded], atol=1e-9 * fmax)
        assert ours.rate == t.analog_rate
        assert ours.force.shape == (t.analogs.shape[0], 3)


@needs_data
def test_type2_and_type4_agree():
    """Same recording, described with diagonal sensitivities and with a 6x6 matrix.

    The two files carry different calibrations: TYPE-2's per-channel scales
    are exactly the TYPE-4 channels times diag(1.447, 1.453, 6.061, 602.8,
    606.1, 291.9), while the TYPE-4 matrix has diagonal (1.527, 1.539, 5.988,
    741.8, 739.6, 391.9) plus cross-talk terms. The plates therefore agree to
    the calibration differences (a few percent of the peak force, ~1% in Fz).
    """
    a = _read("TYPE-2.C3D")
    b = _read("TYPE-4.C3D")
    pa, pb = a.force_plates[0], b.force_plates[0]
    assert (pa.plate_type, pb.plate_type) == (2, 4)
    np.testing.assert_array_equal(pa.corners, pb.corners)
    np.testing.assert_array_equal(pa.origin, pb.origin)
    # the raw channels are the same recording
    ratio = a.analogs / np.where(b.analogs == 0, np.nan, b.analogs)
    np.testing.assert_allclose(np.nanmedian(ratio, axis=0), np.nanmean(ratio, axis=0), rtol=1e-3)
    peak = np.abs(pa.force).max(axis=0)
    assert (np.abs(pa.force - pb.force).max(axis=0) < 0.1 * peak).all()
    assert np.abs(pa.force[:, 2] - pb.force[:, 2]).max() < 0.025 * peak[2]
    for k in range(3):
        assert np.corrcoef(pa.force[:, k], pb.force[:, k])[0, 1] > 0.99
    ok = np.isfinite(pa.cop[:, 0]) & np.isfinite(pb.cop[:, 0]) & (np.abs(pa.force[:, 2]) > 100)
    assert ok.sum() > 500
    assert np.median(np.linalg.norm(pa.cop[ok] - pb.cop[ok], axis=1)) < 0.02
    # with TYPE-2's diagonal as the calibration matrix the TYPE-4 path is exact
    k = np.nanmedian(ratio, axis=0)
    f4, m4, _ = plate_wrench(b.analogs, 4, [0, 0, 0], cal_matrix=np.diag(k))
    f2, m2, _ = plate_wrench(a.analogs, 2, [0, 0, 0])
    np.testing.assert_allclose(f4, f2, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(m4, m2, rtol=1e-4, atol=1e-1)


@needs_data
def test_gait_raw_origin_quirk_and_physics():
    t = _read("gait-raw.c3d")
    origin = t.parameters["FORCE_PLATFORM"]["ORIGIN"]
    assert (origin[2] > 0).all()  # the Vicon quirk is present in this file
    for p in t.force_plates:
        assert np.isfinite(p.cop[:, 0]).sum() > 100
        loaded = np.abs(p.force[:, 2]) > 100.0
        assert loaded.sum() > 100
        # ground reaction force: upward (+z lab) in stance; COP within the plate outline
        assert (p.force[loaded, 2] > 0).all()
        lo, hi = p.corners.min(axis=0), p.corners.max(axis=0)
        inside = (p.cop[loaded, :2] > lo[:2] - 0.01) & (p.cop[loaded, :2] < hi[:2] + 0.01)
        assert inside.mean() > 0.95
        np.testing.assert_allclose(p.cop[loaded, 2], p.origin[2], atol=1e-9)
        # the free torque is along the plate normal
        np.testing.assert_allclose(p.free_moment[loaded, :2], 0.0, atol=1e-9)
        # the moment about the surface centre equals r x F + T
        r = p.cop[loaded] - p.origin
        np.testing.assert_allclose(
            np.cross(r, p.force[loaded]) + p.free_moment[loaded], p.moment[loaded], atol=1e-8
        )


@needs_data
def test_resample_to_point_rate_matches_block_average():
    t = _read("gait-raw.c3d")
    spf = int(t.analog_rate / t.point_rate)
    plates = force_plates_from_c3d(t, rate="point")
    for full, p in zip(t.force_plates, plates):
        assert p.rate == t.point_rate and p.force.shape == (t.n_frames, 3)
        np.testing.assert_allclose(p.force, full.force.reshape(-1, spf, 3).mean(axis=1))
        np.testing.assert_allclose(p.moment, full.moment.reshape(-1, spf, 3).mean(axis=1))
        ok = np.isfinite(p.cop[:, 0])
        r = p.cop[ok] - p.origin
        np.testing.assert_allclose(np.cross(r, p.force[ok]) + p.free_moment[ok], p.moment[ok])


@needs_data
def test_zero_offset_removal_options():
    t = _read("gait-raw.c3d")
    plates = force_plates_from_c3d(t, zero=(0, 80))
    for base, p in zip(t.force_plates, plates):
        np.testing.assert_allclose(p.force[:80].mean(axis=0), 0.0, atol=1e-9)
        shift = np.broadcast_to(p.force[0] - base.force[0], p.force.shape)
        np.testing.assert_allclose(p.force - base.force, shift, atol=1e-9)
    file_zero = force_plates_from_c3d(t, zero="file")  # ZERO = [0, 10] frames
    spf = int(t.analog_rate / t.point_rate)
    for p in file_zero:
        np.testing.assert_allclose(p.force[: 10 * spf].mean(axis=0), 0.0, atol=1e-9)
    with pytest.raises(DataError, match="zero"):
        force_plates_from_c3d(t, zero="sometimes")


@needs_data
def test_cop_threshold():
    t = _read("TYPE-2.C3D")
    strict = force_plates_from_c3d(t, cop_threshold=200.0)[0]
    fz = np.abs(strict.force[:, 2])
    np.testing.assert_array_equal(np.isnan(strict.cop[:, 0]), fz < 200.0)
    np.testing.assert_array_equal(np.isnan(strict.free_moment[:, 2]), fz < 200.0)


# ---------------------------------------------------------------------------
# closed forms and identities
# ---------------------------------------------------------------------------


def test_plate_frame_axes_and_origin_quirk():
    corners = [[500, 0, 0], [0, 0, 0], [0, 400, 0], [500, 400, 0]]
    f = plate_frame(corners, [1.0, -2.0, 40.0], plate_type=2)
    # x along corner1 - corner2 (+x lab), y along corner1 - corner4 (-y lab), z down
    np.testing.assert_allclose(f.R, np.diag([1.0, -1.0, -1.0]), atol=1e-15)
    np.testing.assert_allclose(f.center, [250, 200, 0])
    np.testing.assert_allclose(f.origin, [-1.0, 2.0, -40.0])
    o2 = plate_frame(corners, [1.0, -2.0, -40.0], plate_type=2).origin
    np.testing.assert_allclose(o2, [1.0, -2.0, -40.0])
    o1 = plate_frame(corners, [1.0, -2.0, 40.0], plate_type=1).origin
    np.testing.assert_allclose(o1, [0.0, 0.0, -40.0])
    with pytest.raises(DataError, match="degenerate"):
        plate_frame(np.zeros((4, 3)), [0, 0, 0])
    with pytest.raises(DataError, match="shape"):
        plate_frame(np.zeros((3, 3)), [0, 0, 0])


def test_wrench_to_cop_closed_form_and_threshold():
    rng = _skew_free_rng(0)
    n = 50
    F = rng.normal(size=(n, 3)) * [50, 50, 10]
    F[:, 2] += 600 * np.sign(rng.normal(size=n))
    r = np.column_stack([rng.uniform(-0.2, 0.2, (n, 2)), np.zeros(n)])
    T = np.column_stack([np.zeros((n, 2)), rng.normal(size=n)])
    M = np.cross(r, F) + T
    cop, free = wrench_to_cop(F, M, [0, 0, 1])
    np.testing.assert_allclose(cop, r, atol=1e-12)
    np.testing.assert_allclose(free, T, atol=1e-10)
    F[:5, 2] = 3.0
    cop, free = wrench_to_cop(F, np.cross(r, F) + T, [0, 0, 1], threshold=10.0)
    assert np.isnan(cop[:5]).all() and np.isnan(free[:5]).all()
    assert np.isfinite(cop[5:]).all()


def test_wrench_to_cop_tilted_plate():
    """For any plate normal the COP lies in the plate plane and the torque along n."""
    rng = _skew_free_rng(1)
    n_vec = rng.normal(size=3)
    n_vec /= np.linalg.norm(n_vec)
    F = rng.normal(size=(20, 3)) * 100 + 500 * n_vec
    M = rng.normal(size=(20, 3)) * 30
    cop, free = wrench_to_cop(F, M, n_vec)
    np.testing.assert_allclose(cop @ n_vec, 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cross(free, n_vec), 0.0, atol=1e-10)
    np.testing.assert_allclose(np.cross(cop, F) + free, M, atol=1e-10)


def _kistler_channels(F, Mo, a, b, rng):
    """Eight Kistler channels producing force F and sensor-origin moment Mo."""
    n = len(F)
    # fz1..fz4 from Fz, Mx, My and a free fourth combination
    A = np.array(
        [
            [1, 1, 1, 1],
            [b, b, -b, -b],
            [-a, a, a, -a],
            [1, -1, 1, -1],
        ],
        dtype=float,
    )
    rhs = np.column_stack([F[:, 2], Mo[:, 0], Mo[:, 1], rng.normal(size=n)])
    fz = np.linalg.solve(A, rhs.T).T
    fy14 = F[:, 1] / 2 + rng.normal(size=n)
    fy23 = F[:, 1] - fy14
    # Mz = b (fx34 - fx12) + a (fy14 - fy23); fx12 + fx34 = Fx
    d = (Mo[:, 2] - a * (fy14 - fy23)) / b
    fx34 = (F[:, 0] + d) / 2
    fx12 = F[:, 0] - fx34
    return np.column_stack([fx12, fx34, fy14, fy23, fz])


def test_type3_kistler_inverse():
    rng = _skew_free_rng(2)
    a, b, az0 = 0.12, 0.2, -0.045
    n = 40
    F = rng.normal(size=(n, 3)) * 40
    F[:, 2] += 700
    r = np.column_stack([rng.uniform(-0.15, 0.15, (n, 2)), np.zeros(n)])
    T = np.column_stack([np.zeros((n, 2)), rng.normal(size=n) * 3])
    Mc = np.cross(r, F) + T
    # the surface centre lies at (0, 0, az0) from the sensor origin
    Mo = Mc + np.cross(np.array([0.0, 0.0, az0]), F)
    ch = _kistler_channels(F, Mo, a, b, rng)
    f, m, cop = plate_wrench(ch, 3, [a, b, az0])
    assert cop is None
    np.testing.assert_allclose(f, F, atol=1e-9)
    np.testing.assert_allclose(m, Mc, atol=1e-9)
    cop, free = wrench_to_cop(f, m, [0, 0, 1])
    np.testing.assert_allclose(cop, r, atol=1e-12)
    np.testing.assert_allclose(free, T, atol=1e-9)
    # a zero COP polynomial leaves the COP unchanged
    _, _, cop0 = plate_wrench(ch, 3, [a, b, az0], cop_poly=np.zeros(12))
    np.testing.assert_allclose(cop0, r, atol=1e-12)


def test_type1_channels_give_consistent_wrench():
    rng = _skew_free_rng(3)
    n = 30
    F = rng.normal(size=(n, 3)) * 30 + [0, 0, 600]
    r = np.column_stack([rng.uniform(-0.2, 0.2, (n, 2)), np.zeros(n)])
    tz = rng.normal(size=n)
    ch = np.column_stack([F, r[:, :2], tz])
    f, m, cop = plate_wrench(ch, 1, [0, 0, -0.04])
    np.testing.assert_allclose(cop, r)
    cop2, free = wrench_to_cop(f, m, [0, 0, 1])
    np.testing.assert_allclose(cop2, r, atol=1e-12)
    np.testing.assert_allclose(free[:, 2], tz, atol=1e-10)


def test_type4_identity_calibration_equals_type2():
    rng = _skew_free_rng(4)
    ch = rng.normal(size=(25, 6)) * 100
    origin = [0.001, -0.002, -0.04]
    f2, m2, _ = plate_wrench(ch, 2, origin)
    f4, m4, _ = plate_wrench(ch, 4, origin, cal_matrix=np.eye(6))
    np.testing.assert_allclose(f4, f2)
    np.testing.assert_allclose(m4, m2)
    cal = np.diag([1, 1, 1, 1000, 1000, 1000.0])
    f4, m4, _ = plate_wrench(ch * [1, 1, 1, 1e-3, 1e-3, 1e-3], 4, origin, cal_matrix=cal)
    np.testing.assert_allclose(m4, m2)
    # type 2 moment transfer: M_c = M_o + F x ORIGIN
    np.testing.assert_allclose(m2, ch[:, 3:] + np.cross(ch[:, :3], origin))


@pytest.mark.parametrize(
    "ptype, channels, kw, match",
    [
        (5, np.zeros((3, 6)), {}, "type 5"),
        (2, np.zeros((3, 8)), {}, "shape"),
        (4, np.zeros((3, 6)), {}, "cal_matrix"),
        (4, np.zeros((3, 6)), {"cal_matrix": np.eye(5)}, "cal_matrix"),
    ],
)
def test_plate_wrench_rejects_bad_input(ptype, channels, kw, match):
    with pytest.raises(DataError, match=match):
        plate_wrench(channels, ptype, [0, 0, -1], **kw)


def test_remove_zero_offset():
    rng = _skew_free_rng(5)
    a = rng.normal(size=(100, 4)) + [1, 2, 3, 4]
    out = remove_zero_offset(a, (10, 30))
    np.testing.assert_allclose(out[10:30].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(a - out, np.broadcast_to(a[10:30].mean(axis=0), a.shape))
    with pytest.raises(DataError, match="interval"):
        remove_zero_offset(a, (30, 10))


def _plate(rate, n):
    rng = _skew_free_rng(6)
    c = np.array([[0.2, 0.3, 0], [-0.2, 0.3, 0], [-0.2, -0.3, 0], [0.2, -0.3, 0]])
    F = rng.normal(size=(n, 3)) * 20 + [0, 0, 600]
    M = rng.normal(size=(n, 3)) * 10
    return ForcePlate(F, M, np.zeros((n, 3)), np.zeros((n, 3)), c, np.zeros(3), rate, 2)


def test_resample_integer_ratio_and_interpolation():
    p = _plate(1000.0, 100)
    q = resample_force_plate(p, 100.0)
    np.testing.assert_allclose(q.force, p.force.reshape(10, 10, 3).mean(axis=1))
    cop, free = wrench_to_cop(q.force, q.moment, [0, 0, 1])
    np.testing.assert_allclose(q.cop, cop)
    np.testing.assert_allclose(q.free_moment, free)
    r = resample_force_plate(p, 300.0)
    t_out = np.arange(r.force.shape[0]) / 300.0
    np.testing.assert_allclose(
        r.force[:, 0], np.interp(t_out, np.arange(100) / 1000, p.force[:, 0])
    )
    assert r.rate == 300.0 and t_out[-1] <= 99 / 1000
    with pytest.raises(DataError, match="rate"):
        resample_force_plate(p, 0.0)


def test_force_plates_from_parameters_type3_and_type1():
    """The C3D path (units, CHANNEL indices, plate orientation) for types 3 and 1."""
    rng = _skew_free_rng(7)
    n = 20
    corners_mm = np.array([[500, 0, 0], [0, 0, 0], [0, 400, 0], [500, 400, 0]], float)
    R = np.diag([1.0, -1.0, -1.0])
    center = corners_mm.mean(axis=0) * 1e-3
    F = rng.normal(size=(n, 3)) * 30 + [0, 0, 650]
    r = np.column_stack([rng.uniform(-0.1, 0.1, (n, 2)), np.zeros(n)])
    T = np.column_stack([np.zeros((n, 2)), rng.normal(size=n)])
    Mc = np.cross(r, F) + T
    a, b, az0 = 0.12, 0.2, -0.04
    kistler = _kistler_channels(F, Mc + np.cross([0.0, 0.0, az0], F), a, b, rng)
    type1 = np.column_stack([F, r[:, :2] * 1e3, T[:, 2] * 1e3])  # mm and N mm
    analogs = np.column_stack([type1, kistler])
    channel = np.zeros((8, 2), dtype=np.int64)
    channel[:6, 0] = np.arange(1, 7)
    channel[:, 1] = np.arange(7, 15)
    params = {
        "FORCE_PLATFORM": {
            "USED": np.array([2]),
            "TYPE": np.array([1, 3]),
            "CORNERS": np.stack([corners_mm.T, corners_mm.T], axis=2),
            "ORIGIN": np.array([[0.0, a * 1e3], [0.0, b * 1e3], [-40.0, az0 * 1e3]]),
            "CHANNEL": channel,
        },
        "__header__": {"point_units": "mm"},
    }
    t = Trial(analogs=analogs, analog_rate=1000.0, point_rate=100.0, parameters=params)
    plates = force_plates_from_c3d(t)
    assert [p.plate_type for p in plates] == [1, 3]
    for p in plates:
        np.testing.assert_allclose(p.force, F @ R.T, atol=1e-9)
        np.testing.assert_allclose(p.moment, Mc @ R.T, atol=1e-9)
        np.testing.assert_allclose(p.cop, r @ R.T + center, atol=1e-12)
        np.testing.assert_allclose(p.free_moment, T @ R.T, atol=1e-9)
        np.testing.assert_allclose(p.origin, center)
        assert p.rate == 1000.0
