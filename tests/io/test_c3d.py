"""Tests of ahbm.io.c3d against ezc3d, hand-built files and round trips."""

from __future__ import annotations

import os
import struct
import warnings

import numpy as np
import pytest
from sample_data import SHARED

from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io import Event, Trial, read_c3d, write_c3d
from ahbm.io.c3d.numbers import _dec_to_float

DATA = SHARED / "c3d"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared C3D data not found at {DATA}")

# files ezc3d can read (it does not support the SGI/MIPS processor and rejects
# the corrupted parameter section)
EZC3D_FILES = [
    "16bitanalog.c3d",
    "Eb015pi.c3d",
    "Eb015pr.c3d",
    "TYPE-2.C3D",
    "TYPE-4.C3D",
    "dec_int.c3d",
    "dec_real.c3d",
    "gait-raw.c3d",
    "pc_int.c3d",
    "pc_real.c3d",
]
VARIANTS = ["pc_int", "pc_real", "dec_int", "dec_real", "sgi_int", "sgi_real"]


def _read(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return read_c3d(DATA / name, **kw)


_EZ_CACHE: dict = {}
_EZC3D_DEFAULTS = {
    "POINT": ("USED", "SCALE", "RATE", "FRAMES", "LABELS", "DESCRIPTIONS", "UNITS"),
    "ANALOG": (
        "USED",
        "LABELS",
        "DESCRIPTIONS",
        "GEN_SCALE",
        "SCALE",
        "OFFSET",
        "UNITS",
        "RATE",
        "FORMAT",
        "BITS",
    ),
    "FORCE_PLATFORM": ("USED", "TYPE", "ZERO", "CORNERS", "ORIGIN", "CHANNEL", "CAL_MATRIX"),
}


def _ez(name):
    ezc3d = pytest.importorskip("ezc3d")
    if name not in _EZ_CACHE:
        _EZ_CACHE[name] = ezc3d.c3d(str(DATA / name), extract_forceplat_data=True)
    return _EZ_CACHE[name]


# ---------------------------------------------------------------------------
# comparison with ezc3d
# ---------------------------------------------------------------------------


@needs_data
@pytest.mark.parametrize("name", EZC3D_FILES)
def test_points_and_mask_match_ezc3d(name):
    # ezc3d follows the specification only (a negative residual word marks a gap)
    t = _read(name, units=None, zero_is_missing=False)
    c = _ez(name)
    p = c["data"]["points"][:3].transpose(2, 1, 0)
    assert t.points.shape == p.shape
    np.testing.assert_array_equal(np.isnan(t.points), np.isnan(p))
    np.testing.assert_allclose(t.points, p, rtol=1e-6, atol=1e-9, equal_nan=True)
    # ezc3d flags invalid samples with a negative residual
    ez_invalid = c["data"]["meta_points"]["residuals"][0].T < 0
    np.testing.assert_array_equal(~t.point_mask, ez_invalid | np.isnan(p).any(axis=2))
    assert np.isnan(t.point_residuals[~t.point_mask]).all()
    assert (t.point_residuals[t.point_mask] >= 0).all()


@needs_data
@pytest.mark.parametrize("name", EZC3D_FILES)
def test_analogs_match_ezc3d(name):
    t = _read(name)
    c = _ez(name)
    a = c["data"]["analogs"][0].T
    assert t.analogs.shape == a.shape
    scale = max(1.0, np.abs(a).max())
    np.testing.assert_allclose(t.analogs, a, rtol=1e-6, atol=1e-6 * scale)
    labels = c["parameters"]["ANALOG"]["LABELS"]["value"]
    assert t.analog_labels[: len(labels)] == [s.strip() for s in labels][: t.analogs.shape[1]]


@needs_data
@pytest.mark.parametrize("name", EZC3D_FILES)
def test_header_rates_and_frames_match_ezc3d(name):
    t = _read(name)
    h = _ez(name)["header"]
    assert t.point_rate == pytest.approx(h["points"]["frame_rate"])
    assert t.analog_rate == pytest.approx(h["analogs"]["frame_rate"])
    # ezc3d numbers frames from 0
    assert t.first_frame - 1 == h["points"]["first_frame"]
    assert t.n_frames == h["points"]["last_frame"] - h["points"]["first_frame"] + 1


@needs_data
@pytest.mark.parametrize("name", EZC3D_FILES)
def test_parameters_match_ezc3d(name):
    t = _read(name)
    ez = _ez(name)["parameters"]
    n_checked = 0
    for group, params in ez.items():
        if group == "" or not isinstance(params, dict):
            continue
        assert group in t.parameters, group
        for pname, p in params.items():
            if pname == "__METADATA__":
                continue
            if pname not in t.parameters[group]:
                # ezc3d fills in mandatory parameters that the file does not hold
                assert pname in _EZC3D_DEFAULTS.get(group, ()), f"{group}:{pname}"
                continue
            ours = t.parameters[group][pname]
            key = f"{group}:{pname}"
            assert t.parameters["__types__"][key] == p["type"], key
            assert t.parameters["__descriptions__"][key].strip() == p["description"].strip()
            if p["type"] == -1:
                assert [s.strip() for s in ours] == [s.strip() for s in p["value"]], key
            else:
                theirs = np.asarray(p["value"])
                assert ours.size == theirs.size, key
                np.testing.assert_allclose(
                    ours.reshape(-1), theirs.reshape(-1), rtol=1e-6, err_msg=key
                )
            n_checked += 1
    assert n_checked > 10


# ---------------------------------------------------------------------------
# the six processor / storage variants
# ---------------------------------------------------------------------------


@needs_data
@pytest.mark.parametrize("name", VARIANTS[1:])
def test_basic_variants_agree(name):
    ref = _read("pc_int.c3d", units=None)
    t = _read(name + ".c3d", units=None)
    assert t.point_labels == ref.point_labels
    assert t.analog_labels == ref.analog_labels
    np.testing.assert_array_equal(t.point_mask, ref.point_mask)
    # integer files are quantized to POINT:SCALE
    q = abs(ref.parameters["POINT"]["SCALE"].item())
    np.testing.assert_allclose(t.points, ref.points, atol=q, equal_nan=True)
    amax = np.abs(ref.analogs).max()
    np.testing.assert_allclose(t.analogs, ref.analogs, atol=1e-3 * amax)
    assert [e.label for e in t.events][:8] == [e.label for e in ref.events][:8]
    assert t.point_rate == ref.point_rate and t.analog_rate == ref.analog_rate
    assert len(t.force_plates) == len(ref.force_plates) == 2
    for a, b in zip(t.force_plates, ref.force_plates):
        np.testing.assert_allclose(a.force, b.force, atol=1e-3 * np.abs(b.force).max())


@needs_data
def test_same_storage_variants_identical():
    """Same storage format on different processors gives the same numbers."""
    for storage in ("int", "real"):
        ref = _read(f"pc_{storage}.c3d")
        for proc in ("dec", "sgi"):
            t = _read(f"{proc}_{storage}.c3d")
            # the sample files were converted by another program: integer
            # variants differ by at most one quantum (|POINT:SCALE|) in a few samples
            q = abs(ref.parameters["POINT"]["SCALE"].item()) * 1e-3
            atol = 1.001 * q if storage == "int" else 0.0
            np.testing.assert_allclose(t.points, ref.points, rtol=1e-6, atol=atol, equal_nan=True)
            assert np.mean(np.abs(t.points - ref.points)[ref.point_mask] > 1e-9) < 0.01
            np.testing.assert_allclose(t.analogs, ref.analogs, rtol=1e-6, atol=1e-9)
            np.testing.assert_array_equal(t.point_mask, ref.point_mask)


@needs_data
def test_mips_file_macsample():
    t = _read("MACsample.c3d")
    assert t.parameters["__header__"]["processor"] == "MIPS"
    assert t.points.shape == (180, 33, 3)
    assert t.analogs.shape[1] == 16
    assert t.point_labels[0] != "POINT1"
    # marker coordinates of a lab recording: finite, within a few metres
    assert np.nanmax(np.abs(t.points)) < 10.0


# ---------------------------------------------------------------------------
# units, events, metadata
# ---------------------------------------------------------------------------


@needs_data
def test_units_conversion():
    mm = _read("gait-raw.c3d", units=None)
    assert mm.point_units == "mm"
    m = _read("gait-raw.c3d")
    assert m.point_units == "m"
    np.testing.assert_allclose(m.points, mm.points * 1e-3, equal_nan=True)
    np.testing.assert_allclose(m.point_residuals, mm.point_residuals * 1e-3, equal_nan=True)
    cm = _read("gait-raw.c3d", units="cm")
    np.testing.assert_allclose(cm.points, mm.points * 0.1, equal_nan=True)
    assert m.parameters["__header__"]["point_units"] == "mm"
    with pytest.raises(DataError, match="units"):
        read_c3d(DATA / "gait-raw.c3d", units="furlong")


@needs_data
def test_header_events():
    t = _read("pc_real.c3d")
    labels = [e.label for e in t.events]
    assert labels[:3] == ["RHS", "STRT", "RMS"]
    assert t.events[0].time == pytest.approx(0.38)
    assert all(a.time <= b.time for a, b in zip(t.events, t.events[1:]))


def test_event_group_read_by_ezc3d_and_ahbm(tmp_path):
    ezc3d = pytest.importorskip("ezc3d")
    rng = np.random.default_rng(8)
    t = _random_trial(rng)
    t.events.append(Event("Late", 75.5, "General", "after a minute"))
    write_c3d(t, tmp_path / "ev.c3d")
    c = ezc3d.c3d(str(tmp_path / "ev.c3d"))
    ev = c["parameters"]["EVENT"]
    times = ev["TIMES"]["value"]
    np.testing.assert_allclose(60 * times[0] + times[1], [0.1, 0.35, 75.5], rtol=1e-6)
    assert ev["LABELS"]["value"] == ["Foot Strike", "Foot Off", "Late"]
    assert ev["CONTEXTS"]["value"] == ["Left", "Right", "General"]
    r = read_c3d(tmp_path / "ev.c3d")
    assert [(e.label, e.context, e.description) for e in r.events][2] == (
        "Late",
        "General",
        "after a minute",
    )
    assert r.events[2].time == pytest.approx(75.5)


@needs_data
def test_subject_metadata():
    t = _read("gait-raw.c3d")
    names = _ez("gait-raw.c3d")["parameters"]["SUBJECTS"]["NAMES"]["value"]
    assert t.subject["name"] == names[0] == "A22"
    assert t.subject["names"] == names


@needs_data
def test_bad_parameter_section_recovers_with_warning():
    with pytest.warns(AhbmWarning, match="byte 5771"):
        t = read_c3d(DATA / "bad_parameter_section.c3d")
    assert t.points.shape == (332, 45, 3)
    assert t.analogs.shape == (3320, 32)
    assert t.point_rate == 120.0 and t.analog_rate == 1200.0
    assert "POINT" in t.parameters and "ANALOG" in t.parameters
    assert not any(lab.startswith("POINT") for lab in t.point_labels)
    assert np.nanmax(np.abs(t.points)) < 10.0


@needs_data
def test_camera_masks_and_residual_word():
    t = _read("pc_int.c3d", units=None)
    cam = t.results["camera_masks"]
    assert cam.shape == t.point_mask.shape and cam.dtype == np.uint8
    assert (cam[~t.point_mask] == 0).all()
    q = abs(t.parameters["POINT"]["SCALE"].item())
    # residuals are multiples of |POINT:SCALE| between 0 and 255 |scale|
    r = t.point_residuals[t.point_mask] / q
    np.testing.assert_allclose(r, np.round(r), atol=1e-6)
    assert r.max() <= 255


# ---------------------------------------------------------------------------
# inputs and errors
# ---------------------------------------------------------------------------


@needs_data
def test_read_from_bytes_and_file_object():
    a = _read("TYPE-2.C3D")
    raw = (DATA / "TYPE-2.C3D").read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        b = read_c3d(raw)
        with open(DATA / "TYPE-2.C3D", "rb") as f:
            c = read_c3d(f)
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.analogs, c.analogs)


def test_missing_file(tmp_path):
    with pytest.raises(FileFormatError, match="does not exist"):
        read_c3d(tmp_path / "nope.c3d")


@pytest.mark.parametrize(
    "content, match",
    [
        (b"", "too short"),
        (b"\x02\x50" + b"\x00" * 100, "too short"),
        (b"\x02\x49" + b"\x00" * 1022, "not a C3D"),
        (b"\x00\x50" + b"\x00" * 1022, "parameter block"),
        (b"\x05\x50" + b"\x00" * 1022, "truncated"),
        (b"\x02\x50" + b"\x00" * 512 + b"\x01\x50\x01\x63" + b"\x00" * 506, "processor"),
    ],
)
def test_malformed_minimal(content, match):
    with pytest.raises(FileFormatError, match=match):
        read_c3d(content)


@needs_data
def test_truncated_data_section():
    raw = (DATA / "pc_real.c3d").read_bytes()
    with pytest.raises(FileFormatError, match="truncated"):
        read_c3d(raw[: len(raw) - 4096])


@needs_data
def test_bogus_frame_count_is_checked_before_allocating():
    raw = bytearray((DATA / "pc_real.c3d").read_bytes())
    struct.pack_into("<HH", raw, 6, 1, 65535)  # claim 65535 frames
    # 65535 is how the header says "more frames than a word holds"; POINT:FRAMES gives the
    # count that the data section holds, and it is read
    assert read_c3d(bytes(raw)).n_frames == _read("pc_real.c3d").n_frames
    # with the data section cut short, no declared count fits: refused before allocating
    with pytest.raises(FileFormatError, match="needs .* bytes"):
        read_c3d(bytes(raw[:-1024]))


# ---------------------------------------------------------------------------
# hand-built integer files: unsigned analogs, LABELS2, TRIAL fields, DEC
# ---------------------------------------------------------------------------


def _param(gid, name, ptype, dims, data, desc=b""):
    nb = name.encode()
    body = struct.pack("<bB", ptype, len(dims)) + bytes(dims) + data + bytes([len(desc)]) + desc
    return struct.pack("<bb", len(nb), gid) + nb + struct.pack("<h", 2 + len(body)) + body


def _group(gid, name):
    nb = name.encode()
    return struct.pack("<bb", len(nb), -gid) + nb + struct.pack("<h", 3) + b"\x00"


def _chars(strings, width):
    return b"".join(s.encode().ljust(width) for s in strings)


def _build_int_c3d(points_raw, analog_raw, *, scale, labels, unsigned, trial_frames=None):
    """An Intel integer C3D built byte by byte (independent of write_c3d)."""
    n_frames, n_points, _ = points_raw.shape
    spf, n_ch = analog_raw.shape[1:]
    recs = [_group(1, "POINT"), _group(2, "ANALOG")]
    recs.append(_param(1, "USED", 2, [], struct.pack("<H", n_points)))
    recs.append(_param(1, "SCALE", 4, [], struct.pack("<f", scale)))
    recs.append(_param(1, "RATE", 4, [], struct.pack("<f", 100.0)))
    recs.append(_param(1, "UNITS", -1, [2], b"mm"))
    first, second = labels[:255], labels[255:]
    recs.append(_param(1, "LABELS", -1, [4, len(first)], _chars(first, 4)))
    if second:
        recs.append(_param(1, "LABELS2", -1, [4, len(second)], _chars(second, 4)))
    recs.append(_param(2, "USED", 2, [], struct.pack("<H", n_ch)))
    recs.append(_param(2, "RATE", 4, [], struct.pack("<f", 100.0 * spf)))
    recs.append(_param(2, "GEN_SCALE", 4, [], struct.pack("<f", 0.5)))
    recs.append(_param(2, "SCALE", 4, [n_ch], struct.pack(f"<{n_ch}f", *([2.0] * n_ch))))
    off = [32768 if unsigned else 10] * n_ch
    recs.append(_param(2, "OFFSET", 2, [n_ch], struct.pack(f"<{n_ch}H", *off)))
    if unsigned:
        recs.append(_param(2, "FORMAT", -1, [8], b"UNSIGNED"))
    if trial_frames is not None:
        recs.insert(2, _group(3, "TRIAL"))
        a, b = trial_frames
        recs.append(
            _param(3, "ACTUAL_START_FIELD", 2, [2], struct.pack("<HH", a & 0xFFFF, a >> 16))
        )
        recs.append(_param(3, "ACTUAL_END_FIELD", 2, [2], struct.pack("<HH", b & 0xFFFF, b >> 16)))
    body = b"".join(recs) + b"\x00\x00"
    n_pb = (4 + len(body) + 511) // 512
    psec = (bytes([1, 0x50, n_pb, 84]) + body).ljust(512 * n_pb, b"\x00")
    hdr = bytearray(512)
    hdr[0], hdr[1] = 2, 0x50
    last = min(n_frames, 65535)
    struct.pack_into(
        "<HHHHHfHHf", hdr, 2, n_points, n_ch * spf, 1, last, 0, scale, 2 + n_pb, spf, 100.0
    )
    frame = np.dtype(
        [("p", "<i2", (n_points, 4)), ("a", "<u2" if unsigned else "<i2", (spf, n_ch))]
    )
    data = np.empty(n_frames, dtype=frame)
    data["p"] = points_raw
    data["a"] = analog_raw
    return bytes(hdr) + psec + data.tobytes()


@pytest.mark.parametrize("unsigned", [False, True])
def test_integer_file_scaling_and_residual_word(unsigned):
    rng = np.random.default_rng(1)
    n_frames, n_points, spf, n_ch = 7, 3, 2, 4
    raw = rng.integers(-3000, 3000, size=(n_frames, n_points, 4)).astype(np.int16)
    cam = rng.integers(0, 128, size=(n_frames, n_points))
    res = rng.integers(0, 256, size=(n_frames, n_points))
    raw[..., 3] = (cam << 8) | res
    raw[0, 1, 3] = -1  # invalid sample
    lo, hi = (0, 65535) if unsigned else (-32768, 32767)
    an = rng.integers(lo, hi, size=(n_frames, spf, n_ch))
    content = _build_int_c3d(raw, an, scale=0.25, labels=["A", "B", "C"], unsigned=unsigned)
    t = read_c3d(content, units=None)
    expected = raw[..., :3] * 0.25
    expected[0, 1] = np.nan
    np.testing.assert_array_equal(t.points, expected)
    assert not t.point_mask[0, 1] and t.point_mask.sum() == n_frames * n_points - 1
    exp_res = res * 0.25
    np.testing.assert_array_equal(t.point_residuals[t.point_mask], exp_res[t.point_mask])
    cam_ok = np.where(t.point_mask, cam, 0)
    np.testing.assert_array_equal(t.results["camera_masks"], cam_ok)
    offset = 32768 if unsigned else 10
    exp_an = (an.reshape(-1, n_ch) - offset) * 2.0 * 0.5
    np.testing.assert_array_equal(t.analogs, exp_an)
    assert t.analog_rate == 200.0 and t.point_rate == 100.0


def test_labels2_continuation():
    n_points = 300
    labels = [f"M{i:03d}" for i in range(n_points)]
    raw = np.zeros((2, n_points, 4), dtype=np.int16)
    content = _build_int_c3d(raw, np.zeros((2, 1, 1)), scale=1.0, labels=labels, unsigned=False)
    t = read_c3d(content)
    assert t.point_labels == labels
    assert t.points.shape == (2, n_points, 3)


def test_trial_fields_give_more_than_65535_frames():
    n = 65540
    raw = np.zeros((n, 1, 4), dtype=np.int16)
    raw[:, 0, 0] = np.arange(n) % 1000
    content = _build_int_c3d(
        raw, np.zeros((n, 1, 1)), scale=1.0, labels=["A"], unsigned=False, trial_frames=(1, n)
    )
    t = read_c3d(content, units=None, zero_is_missing=False)  # frame 0 is (0, 0, 0)
    assert t.n_frames == n
    np.testing.assert_array_equal(t.points[:, 0, 0], np.arange(n) % 1000)


def test_dec_float_conversion():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, 200), [0.0, 1.0]])
    x = x.astype(np.float32)
    # DEC F-float of x: IEEE bits of 4x with the two 16-bit words swapped
    ieee = (x.astype(np.float64) * 4).astype(np.float32).view("<u4")
    dec = ((ieee & 0xFFFF) << 16) | (ieee >> 16)
    np.testing.assert_array_equal(_dec_to_float(dec), x)
    # 1.0 as stored in a DEC file: bytes 80 40 00 00
    one = np.frombuffer(b"\x80\x40\x00\x00", dtype="<u4")
    assert _dec_to_float(one)[0] == 1.0


# ---------------------------------------------------------------------------
# writer
# ---------------------------------------------------------------------------


def _random_trial(rng, n_frames=50, n_points=4, spf=4, n_ch=3):
    pts = rng.normal(scale=500.0, size=(n_frames, n_points, 3))
    pts[rng.random((n_frames, n_points)) < 0.2] = np.nan
    return Trial(
        points=pts,
        point_labels=[f"MK{i}" for i in range(n_points)],
        point_rate=100.0,
        point_units="mm",
        analogs=rng.normal(size=(n_frames * spf, n_ch)),
        analog_labels=[f"CH{i}" for i in range(n_ch)],
        analog_units=["V"] * n_ch,
        analog_rate=100.0 * spf,
        first_frame=5,
        events=[Event("Foot Strike", 0.1, "Left"), Event("Foot Off", 0.35, "Right", "toe")],
    )


@pytest.mark.parametrize("n_frames", [1, 50])
def test_write_read_round_trip(tmp_path, n_frames):
    rng = np.random.default_rng(3)
    t = _random_trial(rng, n_frames=n_frames)
    path = tmp_path / "rt.c3d"
    write_c3d(t, path)
    r = read_c3d(path, units=None)
    np.testing.assert_allclose(r.points, t.points, rtol=1e-6, equal_nan=True)
    np.testing.assert_array_equal(r.point_mask, np.isfinite(t.points).all(axis=2))
    np.testing.assert_allclose(r.analogs, t.analogs, rtol=1e-6, atol=1e-7)
    assert r.point_labels == t.point_labels and r.analog_labels == t.analog_labels
    assert r.analog_units == t.analog_units
    assert r.first_frame == 5 and r.point_rate == 100.0 and r.analog_rate == 400.0
    assert [(e.label, e.context) for e in r.events] == [(e.label, e.context) for e in t.events]
    np.testing.assert_allclose([e.time for e in r.events], [e.time for e in t.events], rtol=1e-6)
    assert not list(tmp_path.glob("*.tmp"))


def test_write_read_round_trip_ezc3d(tmp_path):
    ezc3d = pytest.importorskip("ezc3d")
    rng = np.random.default_rng(4)
    t = _random_trial(rng)
    path = tmp_path / "rt.c3d"
    write_c3d(t, path)
    c = ezc3d.c3d(str(path))
    p = c["data"]["points"][:3].transpose(2, 1, 0)
    np.testing.assert_allclose(p, t.points, rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(c["data"]["analogs"][0].T, t.analogs, rtol=1e-6, atol=1e-7)
    assert c["parameters"]["POINT"]["LABELS"]["value"] == t.point_labels
    assert c["header"]["points"]["frame_rate"] == 100.0
    assert c["header"]["points"]["first_frame"] == 4


@needs_data
@pytest.mark.parametrize("name", ["gait-raw.c3d", "sgi_real.c3d", "dec_int.c3d", "TYPE-4.C3D"])
def test_rewrite_shared_file_keeps_plates_and_metadata(tmp_path, name):
    t = _read(name)
    path = tmp_path / "copy.c3d"
    write_c3d(t, path)
    r = read_c3d(path)
    np.testing.assert_allclose(r.points, t.points, rtol=1e-6, atol=1e-9, equal_nan=True)
    np.testing.assert_array_equal(r.point_mask, t.point_mask)
    np.testing.assert_allclose(r.point_residuals, t.point_residuals, equal_nan=True)
    np.testing.assert_array_equal(r.results["camera_masks"], t.results["camera_masks"])
    np.testing.assert_allclose(r.analogs, t.analogs, rtol=1e-6, atol=1e-6)
    assert r.subject == t.subject
    # written in the source file's unit, with its other parameters and types
    assert r.parameters["POINT"]["UNITS"] == t.parameters["POINT"]["UNITS"]
    for group in t.parameters:
        if group.startswith("__") or group in ("POINT", "ANALOG", "EVENT", "TRIAL"):
            continue
        for pname, value in t.parameters[group].items():
            key = f"{group}:{pname}"
            assert r.parameters["__types__"][key] == t.parameters["__types__"][key], key
            if isinstance(value, list):
                assert r.parameters[group][pname] == value, key
            else:
                np.testing.assert_allclose(r.parameters[group][pname], value, err_msg=key)
    assert len(r.force_plates) == len(t.force_plates) > 0
    for a, b in zip(r.force_plates, t.force_plates):
        assert a.plate_type == b.plate_type
        np.testing.assert_allclose(a.force, b.force, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(a.moment, b.moment, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a.cop, b.cop, atol=1e-6, equal_nan=True)
    ezc3d = pytest.importorskip("ezc3d")
    c = ezc3d.c3d(str(path), extract_forceplat_data=True)
    assert len(c["data"]["platform"]) == len(t.force_plates)
    np.testing.assert_allclose(c["data"]["platform"][0]["force"].T, r.force_plates[0].force)


def test_write_units_option(tmp_path):
    ezc3d = pytest.importorskip("ezc3d")
    rng = np.random.default_rng(9)
    t = _random_trial(rng)  # millimetres
    write_c3d(t, tmp_path / "m.c3d", units="m")
    c = ezc3d.c3d(str(tmp_path / "m.c3d"))
    assert c["parameters"]["POINT"]["UNITS"]["value"] == ["m"]
    p = c["data"]["points"][:3].transpose(2, 1, 0)
    np.testing.assert_allclose(p, t.points * 1e-3, rtol=1e-6, equal_nan=True)
    r = read_c3d(tmp_path / "m.c3d", units="mm")
    np.testing.assert_allclose(r.points, t.points, rtol=1e-6, equal_nan=True)
    with pytest.raises(DataError, match="convert"):
        write_c3d(t, tmp_path / "x.c3d", units="parsec")


def test_write_more_than_65535_frames(tmp_path):
    rng = np.random.default_rng(5)
    n = 65600
    pts = rng.normal(size=(n, 2, 3)).astype(np.float32).astype(np.float64)
    pts[rng.random((n, 2)) < 0.05] = np.nan
    t = Trial(points=pts, point_labels=["A", "B"], point_rate=200.0, point_units="m")
    path = tmp_path / "long.c3d"
    write_c3d(t, path)
    r = read_c3d(path, units=None)
    assert r.n_frames == n
    np.testing.assert_array_equal(r.points, pts)
    ezc3d = pytest.importorskip("ezc3d")
    c = ezc3d.c3d(str(path))
    p = c["data"]["points"][:3].transpose(2, 1, 0)
    np.testing.assert_array_equal(p, pts)


def test_write_is_atomic(tmp_path, monkeypatch):
    rng = np.random.default_rng(6)
    path = tmp_path / "keep.c3d"
    path.write_bytes(b"old content")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(DataError, match="disk full") as info:  # the OSError, naming the file
        write_c3d(_random_trial(rng), path)
    assert isinstance(info.value.__cause__, OSError)
    assert path.read_bytes() == b"old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.c3d"]


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(analog_rate=150.0), "integer multiple"),
        (dict(point_labels=["A"]), "labels"),
        (dict(points=np.zeros((5, 2))), "shape"),
        (dict(point_rate=0.0), "point_rate"),
    ],
)
def test_write_rejects_bad_trials(tmp_path, change, match):
    rng = np.random.default_rng(7)
    t = _random_trial(rng)
    for k, v in change.items():
        setattr(t, k, v)
    with pytest.raises(DataError, match=match):
        write_c3d(t, tmp_path / "bad.c3d")
    assert not (tmp_path / "bad.c3d").exists()
