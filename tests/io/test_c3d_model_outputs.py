"""C3D files as gait labs hold them: parameter names with spaces, missing markers stored
as zeros, and model outputs (angles, moments, powers, forces, scalars) in their units."""

from __future__ import annotations

import struct
import warnings

import numpy as np

from ahbm.io import Trial, read_c3d, write_c3d


def _param(gid, name, ptype, dims, data, desc=b""):
    nb = name.encode("latin-1")
    body = struct.pack("<bB", ptype, len(dims)) + bytes(dims) + data + bytes([len(desc)]) + desc
    return struct.pack("<bb", len(nb), gid) + nb + struct.pack("<h", 2 + len(body)) + body


def _group(gid, name):
    nb = name.encode("latin-1")
    return struct.pack("<bb", len(nb), -gid) + nb + struct.pack("<h", 3) + b"\x00"


def _chars(strings, width):
    return b"".join(s.encode("latin-1").ljust(width) for s in strings)


def _text(gid, name, strings):
    width = max(1, *(len(s) for s in strings))
    return _param(gid, name, -1, [width, len(strings)], _chars(strings, width))


def _build(points_raw, labels, *, scale=0.1, records=()):
    """An Intel integer C3D built byte by byte (independent of write_c3d).

    `records` are extra group/parameter records appended after the POINT group (id 1).
    """
    n_frames, n_points, _ = points_raw.shape
    recs = [_group(1, "POINT")]
    recs.append(_param(1, "USED", 2, [], struct.pack("<H", n_points)))
    recs.append(_param(1, "SCALE", 4, [], struct.pack("<f", scale)))
    recs.append(_param(1, "RATE", 4, [], struct.pack("<f", 100.0)))
    recs.append(_param(1, "UNITS", -1, [2], b"mm"))
    recs.append(_text(1, "LABELS", labels))
    recs.extend(records)
    body = b"".join(recs) + b"\x00\x00"
    n_pb = (4 + len(body) + 511) // 512
    psec = (bytes([1, 0x50, n_pb, 84]) + body).ljust(512 * n_pb, b"\x00")
    hdr = bytearray(512)
    hdr[0], hdr[1] = 2, 0x50
    struct.pack_into("<HHHHHfHHf", hdr, 2, n_points, 0, 1, n_frames, 0, scale, 2 + n_pb, 0, 100.0)
    data = np.ascontiguousarray(points_raw, dtype="<i2")
    return bytes(hdr) + psec + data.tobytes()


def _raw(n_frames=4, n_points=2, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.integers(-3000, 3000, size=(n_frames, n_points, 4)).astype(np.int16)
    raw[..., 3] = rng.integers(1, 256, size=(n_frames, n_points))  # valid, residual > 0
    return raw


# ---------------------------------------------------------------------------
# 1. parameter names with spaces or other printable bytes
# ---------------------------------------------------------------------------


def test_parameter_name_with_space_keeps_the_rest_of_the_section():
    records = [
        _group(3, "PROCESSING"),
        _param(3, "Splines Fitted", 2, [], struct.pack("<h", 1)),
        _param(3, "Bodymass", 4, [], struct.pack("<f", 56.5)),
        _param(3, "Caf\xe9 R\xe9sum\xe9", 4, [], struct.pack("<f", 2.0)),
        _group(4, "Model Info"),
        _param(4, "NAME", -1, [3], b"PiG"),
        _group(5, "SUBJECTS"),
        _text(5, "NAMES", ["Jane"]),
    ]
    content = _build(_raw(), ["A", "B"], records=records)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing about a malformed record
        t = read_c3d(content)
    proc = t.parameters["PROCESSING"]
    assert int(np.asarray(proc["SPLINES FITTED"]).reshape(-1)[0]) == 1
    assert float(np.asarray(proc["BODYMASS"]).reshape(-1)[0]) == 56.5
    assert "CAF\xc9 R\xc9SUM\xc9" in proc
    assert t.parameters["MODEL INFO"]["NAME"] == ["PiG"]
    assert t.subject["name"] == "Jane"
    assert t.subject["mass"] == 56.5


# ---------------------------------------------------------------------------
# 2. missing markers stored as (0, 0, 0) with a non-negative residual word
# ---------------------------------------------------------------------------


def test_zero_markers_with_positive_residual_are_missing():
    raw = _raw(n_frames=5, n_points=3, seed=3)
    raw[1, 0, :3] = 0  # a gap written as zeros, residual word 1..255 (valid by the word)
    raw[1, 0, 3] = (5 << 8) | 17
    raw[3, 2, :3] = 0
    raw[3, 2, 3] = 0  # residual word 0 exactly
    raw[2, 1, :3] = (0, 0, 40)  # one zero coordinate only: a real position
    content = _build(raw, ["A", "B", "C"], scale=0.5)
    t = read_c3d(content, units=None)
    assert np.isnan(t.points[1, 0]).all() and np.isnan(t.points[3, 2]).all()
    assert np.isnan(t.point_residuals[1, 0]) and np.isnan(t.point_residuals[3, 2])
    assert t.results["camera_masks"][1, 0] == 0
    expected_mask = np.ones((5, 3), bool)
    expected_mask[1, 0] = expected_mask[3, 2] = False
    np.testing.assert_array_equal(t.point_mask, expected_mask)
    np.testing.assert_array_equal(t.points[2, 1], [0.0, 0.0, 20.0])
    ok = expected_mask
    np.testing.assert_array_equal(t.points[ok], raw[..., :3][ok] * 0.5)

    kept = read_c3d(content, units=None, zero_is_missing=False)
    assert kept.point_mask.all()
    np.testing.assert_array_equal(kept.points[1, 0], [0.0, 0.0, 0.0])
    assert kept.point_residuals[1, 0] == 17 * 0.5
    np.testing.assert_array_equal(kept.points, raw[..., :3] * 0.5)


def test_zero_markers_in_a_float_file_are_missing(tmp_path):

    pts = np.random.default_rng(4).normal(size=(4, 2, 3))
    pts[2, 1] = 0.0
    path = tmp_path / "zeros.c3d"
    write_c3d(Trial(points=pts, point_labels=["A", "B"], point_rate=100.0), path)
    t = read_c3d(path)
    assert not t.point_mask[2, 1] and t.point_mask.sum() == 7
    assert np.isnan(t.points[2, 1]).all()
    np.testing.assert_allclose(t.points[t.point_mask], pts[t.point_mask], atol=1e-6)
    assert read_c3d(path, zero_is_missing=False).point_mask.all()


# ---------------------------------------------------------------------------
# 3. model outputs read in their declared units
# ---------------------------------------------------------------------------


def _model_file(angle_unit="deg", *, scalar_unit="mm"):
    """Markers A, B (mm) and PiG-like outputs; integer file, POINT:SCALE 0.1."""
    labels = ["A", "LKneeAngles", "LHipMoment", "LAnklePower", "LGRF", "LLegLen", "B"]
    raw = _raw(n_frames=3, n_points=len(labels), seed=5)
    raw[0, 1, :3] = (579, -31, 0) if angle_unit == "deg" else (10, -1, 0)  # x 0.1
    raw[0, 2, :3] = (12345, 0, -2000)  # N mm
    raw[0, 3, :3] = (0, 0, 0)  # power exactly 0 at heel strike: not a gap
    raw[0, 4, :3] = (15, -20, 6000)  # N
    raw[0, 5, :3] = (9000, 0, 0)
    raw[0, 6, :3] = (0, 0, 0)  # a marker gap
    records = [
        _text(1, "ANGLES", ["LKneeAngles"]),
        _text(1, "ANGLE_UNITS", [angle_unit]),
        _text(1, "MOMENTS", ["LHipMoment"]),
        _text(1, "MOMENT_UNITS", ["Nmm"]),
        _text(1, "POWERS", ["LAnklePower"]),
        _text(1, "POWER_UNITS", ["W"]),
        _text(1, "FORCES", ["LGRF"]),
        _text(1, "FORCE_UNITS", ["N"]),
        _text(1, "SCALARS", ["LLegLen"]),
        _text(1, "SCALAR_UNITS", [scalar_unit]),
    ]
    return raw, labels, _build(raw, labels, scale=0.1, records=records)


def test_model_outputs_are_read_in_si_units_with_their_kind():
    raw, labels, content = _model_file()
    t = read_c3d(content)
    file_values = raw[..., :3] * 0.1  # what the file stores, in each point's own unit
    knee = t.points[:, 1]
    np.testing.assert_allclose(knee[0, 0], 1.0105456, rtol=1e-6)  # 57.9 deg
    np.testing.assert_allclose(knee, np.deg2rad(file_values[:, 1]), rtol=1e-6)
    np.testing.assert_allclose(t.points[:, 2], file_values[:, 2] * 1e-3, rtol=1e-6)  # N m
    np.testing.assert_allclose(t.points[0, 2], [1.2345, 0.0, -0.2], rtol=1e-5)
    np.testing.assert_allclose(t.points[:, 3], file_values[:, 3], rtol=1e-6)  # W
    np.testing.assert_allclose(t.points[:, 4], file_values[:, 4], rtol=1e-6)  # N
    np.testing.assert_allclose(t.points[:, 5], file_values[:, 5] * 1e-3, rtol=1e-6)  # m
    np.testing.assert_allclose(t.points[:, 0], file_values[:, 0] * 1e-3, rtol=1e-6)  # marker
    assert t.point_kinds == {
        "LKneeAngles": ("angle", "rad"),
        "LHipMoment": ("moment", "N m"),
        "LAnklePower": ("power", "W"),
        "LGRF": ("force", "N"),
        "LLegLen": ("scalar", "m"),
    }
    assert t.point_units == "m"
    # a zero model output is a value; a zero marker is a gap
    assert t.point_mask[0, 3] and not t.point_mask[0, 6]
    np.testing.assert_array_equal(t.points[0, 3], [0.0, 0.0, 0.0])
    assert np.isnan(t.points[0, 6]).all()


def test_model_outputs_in_radians_and_file_units():
    raw, labels, content = _model_file("rad", scalar_unit="deg/s")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = read_c3d(content, units="mm")
    np.testing.assert_allclose(t.points[:, 1], raw[:, 1, :3] * 0.1, rtol=1e-6)  # rad kept
    np.testing.assert_allclose(t.points[:, 2], raw[:, 2, :3] * 1e-4, rtol=1e-6)  # N m
    np.testing.assert_allclose(t.points[:, 0], raw[:, 0, :3] * 0.1, rtol=1e-6)  # mm marker
    # an unknown scalar unit is kept as the file says, with a warning naming the point
    np.testing.assert_allclose(t.points[:, 5], raw[:, 5, :3] * 0.1, rtol=1e-6)
    assert t.point_kinds["LLegLen"] == ("scalar", "deg/s")
    assert any("LLegLen" in str(w.message) for w in caught)
    # units=None keeps every point in the file's units
    k = read_c3d(content, units=None)
    np.testing.assert_allclose(k.points[:, 2], raw[:, 2, :3] * 0.1, rtol=1e-6)
    assert k.point_kinds["LHipMoment"] == ("moment", "Nmm")
    assert k.point_kinds["LKneeAngles"] == ("angle", "rad")


def test_model_outputs_survive_a_write_read_round_trip(tmp_path):
    raw, labels, content = _model_file()
    t = read_c3d(content)
    path = tmp_path / "again.c3d"
    write_c3d(t, path, units="mm")  # markers scaled to mm, model outputs untouched
    u = read_c3d(path)
    assert u.point_kinds == t.point_kinds
    np.testing.assert_allclose(u.points, t.points, rtol=1e-6, atol=1e-9, equal_nan=True)
    np.testing.assert_allclose(u.points[0, 1, 0], np.deg2rad(57.9), rtol=1e-6)
    np.testing.assert_array_equal(u.point_mask, t.point_mask)
    assert read_c3d(path, units=None).point_kinds["LHipMoment"] == ("moment", "Nm")
    # without kinds every point is a position, written and read back as such
    plain = Trial(points=t.points, point_labels=t.point_labels, point_rate=100.0)
    write_c3d(plain, tmp_path / "plain.c3d")
    v = read_c3d(tmp_path / "plain.c3d", zero_is_missing=False)  # power is 0 in frame 0
    assert v.point_kinds == {}
    np.testing.assert_allclose(v.points, t.points, rtol=1e-6, atol=1e-9, equal_nan=True)


def test_writer_rejects_mixed_units_of_one_kind(tmp_path):
    import pytest

    from ahbm.errors import DataError

    t = Trial(
        points=np.ones((2, 2, 3)),
        point_labels=["LKneeAngles", "RKneeAngles"],
        point_rate=100.0,
        point_kinds={"LKneeAngles": ("angle", "rad"), "RKneeAngles": ("angle", "deg")},
    )
    with pytest.raises(DataError, match="ANGLE_UNITS"):
        write_c3d(t, tmp_path / "x.c3d")
    t.point_kinds = {"LKneeAngles": ("joint", "rad")}
    with pytest.raises(DataError, match="point_kinds"):
        write_c3d(t, tmp_path / "x.c3d")


def test_model_output_kinds_survive_hdf5(tmp_path):
    # C3D -> HDF5 -> C3D keeps the model outputs' kinds, so angles are not written as lengths
    import h5py

    from ahbm.errors import FileFormatError
    from ahbm.io import load_trial, save_trial

    raw, labels, content = _model_file()
    t = read_c3d(content)
    save_trial(t, tmp_path / "s.h5", name="walk")
    u = load_trial(tmp_path / "s.h5", "walk")
    assert u.point_kinds == t.point_kinds and u.point_kinds
    np.testing.assert_array_equal(u.points, t.points)
    write_c3d(u, tmp_path / "back.c3d")
    np.testing.assert_allclose(
        read_c3d(tmp_path / "back.c3d").points[0, 1, 0], np.deg2rad(57.9), rtol=1e-6
    )
    with h5py.File(tmp_path / "s.h5", "r+") as f:  # a kind naming no point is refused
        f["trials/walk"].attrs["point_kinds"] = '{"nope": ["angle", "rad"]}'
    try:
        load_trial(tmp_path / "s.h5", "walk")
    except FileFormatError as err:
        assert "point_kinds" in str(err)
    else:  # pragma: no cover
        raise AssertionError("a point kind naming no point was accepted")
